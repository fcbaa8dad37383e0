//! Two threads recording at once: each thread's ns per call against one
//! thread alone, for `#[profile]` and `scope!` and, as controls that share
//! nothing, the floor and the bare workload (the machine's own slowdown).
//! Besides wall time, each thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`)
//! and minor page faults are kept: CPU time is not inflated when another
//! process takes the core, and the faults show first-touch memory.

use std::sync::Barrier;

use scope_profiler::{self as sp, Options};

use crate::common::{median, rotated};
use crate::micro::Variant;

/// One thread's figures for one run: wall ns, CPU ns and minor faults per call.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sample {
    pub wall: f64,
    pub cpu: f64,
    pub faults: f64,
}

/// Samples of one variant: one thread alone, and each of two at once.
pub struct Row {
    pub variant: Variant,
    pub one: Vec<Sample>,
    pub two: Vec<Sample>,
}

/// Per-thread figures, one thread and two at once, by variant.
pub struct ThreadsResult {
    pub rows: Vec<Row>,
}

fn med(s: &[Sample], f: impl Fn(&Sample) -> f64) -> f64 {
    median(&s.iter().map(f).collect::<Vec<_>>())
}

impl ThreadsResult {
    fn row(&self, v: Variant) -> &Row {
        self.rows.iter().find(|r| r.variant == v).expect("measured")
    }

    /// `(one thread, two threads)` median ns per call (wall time, or CPU
    /// time with `cpu`), bare subtracted (each against the bare workload
    /// run the same way); the bare workload's own figures are absolute.
    pub fn overhead(&self, v: Variant, cpu: bool) -> (f64, f64) {
        let key = |s: &Sample| if cpu { s.cpu } else { s.wall };
        let row = self.row(v);
        let (one, two) = (med(&row.one, key), med(&row.two, key));
        if v == Variant::Bare {
            return (one, two);
        }
        let bare = self.row(Variant::Bare);
        (one - med(&bare.one, key), two - med(&bare.two, key))
    }

    /// `(one thread, two threads)` median minor page faults per 1000 calls.
    pub fn faults_per_k(&self, v: Variant) -> (f64, f64) {
        let row = self.row(v);
        (
            1000.0 * med(&row.one, |s| s.faults),
            1000.0 * med(&row.two, |s| s.faults),
        )
    }
}

pub const VARIANTS: [Variant; 4] = [
    Variant::Bare,
    Variant::FloorQuanta,
    Variant::Profile,
    Variant::Cached,
];

/// This thread's CPU time (ns, `CLOCK_THREAD_CPUTIME_ID`) and minor page
/// faults (`getrusage(RUSAGE_THREAD)`).
fn thread_usage() -> (f64, u64) {
    // SAFETY: both calls only write the structs they are given.
    unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts);
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_THREAD, &mut u);
        (
            ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64,
            u.ru_minflt as u64,
        )
    }
}

fn measured(v: Variant, n: u64, clock: &quanta::Clock) -> Sample {
    let (cpu0, f0) = thread_usage();
    let wall = v.run(n, clock);
    let (cpu1, f1) = thread_usage();
    let calls = (n / crate::common::BATCH).max(1) * crate::common::BATCH;
    Sample {
        wall,
        cpu: (cpu1 - cpu0) / calls as f64,
        faults: (f1 - f0) as f64 / calls as f64,
    }
}

/// Runs `rounds` rounds; in each, every variant once on one new thread,
/// then on two new threads started together.
pub fn run(calls: u64, rounds: usize) -> ThreadsResult {
    let clock = quanta::Clock::new();
    let mut rows: Vec<Row> = VARIANTS
        .iter()
        .map(|&variant| Row {
            variant,
            one: Vec::new(),
            two: Vec::new(),
        })
        .collect();
    crate::micro::keep_freed_memory();
    for round in 0..=rounds {
        let n = if round == 0 { calls / 4 } else { calls };
        let session = sp::setup(Options::new().in_memory().verbose(false)).expect("setup");
        for v in rotated(&VARIANTS, round) {
            let one = std::thread::scope(|s| {
                s.spawn(|| measured(v, n, &clock))
                    .join()
                    .expect("bench thread")
            });
            let barrier = Barrier::new(2);
            let two: Vec<Sample> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..2)
                    .map(|_| {
                        s.spawn(|| {
                            barrier.wait();
                            measured(v, n, &clock)
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("bench thread"))
                    .collect()
            });
            if round > 0 {
                let row = rows.iter_mut().find(|r| r.variant == v).expect("known");
                row.one.push(one);
                row.two.extend(two);
            }
        }
        session.finalize().expect("finalize");
    }
    ThreadsResult { rows }
}
