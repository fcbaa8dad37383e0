//! Two threads recording at once: each thread's ns per call against one
//! thread alone, for `#[profile]` and, as a control that shares nothing, the
//! floor and the bare workload (the machine's own slowdown).

use std::sync::Barrier;

use scope_profiler::{self as sp, Options};

use crate::common::{median, rotated};
use crate::micro::Variant;

/// Per-thread ns per call, one thread and two at once, by variant.
pub struct ThreadsResult {
    pub rows: Vec<(Variant, Vec<f64>, Vec<f64>)>,
}

impl ThreadsResult {
    fn row(&self, v: Variant) -> &(Variant, Vec<f64>, Vec<f64>) {
        self.rows.iter().find(|r| r.0 == v).expect("measured")
    }

    /// `(one thread, two threads)` median ns per call, bare subtracted
    /// (each against the bare workload run the same way).
    pub fn overhead(&self, v: Variant) -> (f64, f64) {
        let bare = self.row(Variant::Bare);
        let row = self.row(v);
        if v == Variant::Bare {
            return (median(&row.1), median(&row.2));
        }
        (
            median(&row.1) - median(&bare.1),
            median(&row.2) - median(&bare.2),
        )
    }
}

pub const VARIANTS: [Variant; 4] = [
    Variant::Bare,
    Variant::FloorQuanta,
    Variant::Profile,
    Variant::Cached,
];

/// Runs `rounds` rounds; in each, every variant once on one new thread,
/// then on two new threads started together.
pub fn run(calls: u64, rounds: usize) -> ThreadsResult {
    let clock = quanta::Clock::new();
    let mut rows: Vec<(Variant, Vec<f64>, Vec<f64>)> =
        VARIANTS.iter().map(|&v| (v, Vec::new(), Vec::new())).collect();
    for round in 0..=rounds {
        let n = if round == 0 { calls / 4 } else { calls };
        let session = sp::setup(Options::new().in_memory().verbose(false)).expect("setup");
        for v in rotated(&VARIANTS, round) {
            let one = std::thread::scope(|s| {
                s.spawn(|| v.run(n, &clock))
                    .join()
                    .expect("bench thread")
            });
            let barrier = Barrier::new(2);
            let two: Vec<f64> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..2)
                    .map(|_| {
                        s.spawn(|| {
                            barrier.wait();
                            v.run(n, &clock)
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("bench thread"))
                    .collect()
            });
            if round > 0 {
                let row = rows.iter_mut().find(|r| r.0 == v).expect("known");
                row.1.push(one);
                row.2.extend(two);
            }
        }
        session.finalize().expect("finalize");
    }
    ThreadsResult { rows }
}
