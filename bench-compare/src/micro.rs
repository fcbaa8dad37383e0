//! The single-thread table: every variant interleaved within each round,
//! over the same workload.

use std::hint::black_box;

use scope_profiler::{self as sp, Options};

use crate::common::{bare, median, quantile, rotated, time, time_batched, work};
use crate::ours;
use crate::peers::{self, FastraceRoot, Peers, PuffinFrame, Recorded};

/// One row of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Bare,
    FloorQuanta,
    FloorRdtsc,
    Profile,
    Cached,
    ByName,
    TracedOutside,
    DisabledProfile,
    DisabledCached,
    Hotpath,
    Puffin,
    Fastrace,
    Tracing,
}

impl Variant {
    /// Variants timed while our session is active.
    pub const SESSION_ON: [Variant; 11] = [
        Variant::Bare,
        Variant::FloorQuanta,
        Variant::FloorRdtsc,
        Variant::Profile,
        Variant::Cached,
        Variant::ByName,
        Variant::TracedOutside,
        Variant::Hotpath,
        Variant::Puffin,
        Variant::Fastrace,
        Variant::Tracing,
    ];
    /// Variants timed with no session active (bare again, as a control).
    pub const SESSION_OFF: [Variant; 3] = [
        Variant::Bare,
        Variant::DisabledProfile,
        Variant::DisabledCached,
    ];
    /// Table order.
    pub const ALL: [Variant; 13] = [
        Variant::Bare,
        Variant::FloorQuanta,
        Variant::FloorRdtsc,
        Variant::Profile,
        Variant::Cached,
        Variant::ByName,
        Variant::TracedOutside,
        Variant::DisabledProfile,
        Variant::DisabledCached,
        Variant::Hotpath,
        Variant::Puffin,
        Variant::Fastrace,
        Variant::Tracing,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Variant::Bare => "bare workload (no instrumentation)",
            Variant::FloorQuanta => "floor: 2x `quanta::Clock::raw`",
            Variant::FloorRdtsc => "floor: 2x bare `rdtsc`",
            Variant::Profile if ours::PROFILE_IS_ATTRIBUTE => "ours: `#[profile]` fn",
            Variant::Profile => "ours: `#[profile]` expansion, by hand",
            Variant::Cached => "ours: call-site cached `scope!`",
            Variant::ByName => "ours: `sp::region(name).enter()`",
            Variant::TracedOutside => "ours: `#[profile(traced)]`, outside any trace",
            Variant::DisabledProfile => "ours: runtime-disabled `#[profile]` (no session)",
            Variant::DisabledCached => "ours: runtime-disabled `scope!` (no session)",
            Variant::Hotpath => "hotpath `#[measure]` (guard alive)",
            Variant::Puffin => "puffin `profile_function!` (frame per 10k)",
            Variant::Fastrace => "fastrace `#[trace]` (root per 10k)",
            Variant::Tracing => "tracing `#[instrument]` + `Registry`",
        }
    }

    pub fn is_peer(self) -> bool {
        matches!(
            self,
            Variant::Hotpath | Variant::Puffin | Variant::Fastrace | Variant::Tracing
        )
    }

    /// Records one call per call while a session is active.
    fn records(self) -> bool {
        matches!(self, Variant::Profile | Variant::Cached | Variant::ByName)
    }

    /// Nanoseconds per call over `calls` calls.
    pub fn run(self, calls: u64, clock: &quanta::Clock) -> f64 {
        match self {
            Variant::Bare => time(calls, bare),
            Variant::FloorQuanta => time(calls, |x| floor_quanta(clock, x)),
            Variant::FloorRdtsc => time(calls, floor_rdtsc),
            Variant::Profile | Variant::DisabledProfile => time(calls, ours::profiled),
            Variant::Cached | Variant::DisabledCached => time(calls, ours::cached),
            Variant::ByName => time(calls, |x| ours::by_name(black_box("by_name"), x)),
            Variant::TracedOutside => time(calls, ours::traced),
            Variant::Hotpath => time(calls, peers::hotpath_fn),
            Variant::Puffin => time_batched(calls, PuffinFrame::open, peers::puffin_fn),
            Variant::Fastrace => time_batched(calls, FastraceRoot::open, peers::fastrace_fn),
            Variant::Tracing => time(calls, peers::tracing_fn),
        }
    }
}

/// The floor: the workload between two raw TSC reads through quanta.
#[inline(never)]
pub fn floor_quanta(clock: &quanta::Clock, x: u64) -> u64 {
    let start = clock.raw();
    let r = work(x);
    black_box(clock.raw().wrapping_sub(start)) ^ r
}

/// The workload between two bare `rdtsc` instructions.
#[inline(never)]
pub fn floor_rdtsc(x: u64) -> u64 {
    let start = rdtsc();
    let r = work(x);
    black_box(rdtsc().wrapping_sub(start)) ^ r
}

#[inline(always)]
fn rdtsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `rdtsc` has no preconditions on x86_64.
        #[allow(unused_unsafe)]
        unsafe {
            core::arch::x86_64::_rdtsc()
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        std::time::Instant::now().elapsed().as_nanos() as u64
    }
}

/// The samples of one run: ns per call per round, by variant.
pub struct MicroResult {
    pub samples: Vec<(Variant, Vec<f64>)>,
    pub recorded: Recorded,
    /// Calls per round each of our recording variants recorded (from the
    /// finalized sessions), and whether the traced one stayed empty.
    pub ours_counts_ok: bool,
    pub ours_count_note: String,
    pub calls: u64,
    pub rounds: usize,
}

impl MicroResult {
    pub fn samples(&self, v: Variant) -> &[f64] {
        &self
            .samples
            .iter()
            .find(|(w, _)| *w == v)
            .expect("every variant has samples")
            .1
    }

    /// The median ns per call of `v` minus the bare workload's median.
    pub fn overhead(&self, v: Variant) -> f64 {
        median(self.samples(v)) - median(self.samples(Variant::Bare))
    }

    /// The interquartile range of `v`'s rounds.
    pub fn iqr(&self, v: Variant) -> (f64, f64) {
        let base = median(self.samples(Variant::Bare));
        let s = self.samples(v);
        (quantile(s, 0.25) - base, quantile(s, 0.75) - base)
    }
}

/// Runs `rounds` rounds of `calls` calls per variant.
pub fn run(calls: u64, rounds: usize, tmp: &std::path::Path) -> MicroResult {
    let clock = quanta::Clock::new();
    let peers = Peers::start(tmp);
    let mut samples: Vec<(Variant, Vec<f64>)> =
        Variant::ALL.iter().map(|&v| (v, Vec::new())).collect();
    let mut push = |v: Variant, ns: f64| {
        samples
            .iter_mut()
            .find(|(w, _)| *w == v)
            .expect("known variant")
            .1
            .push(ns)
    };
    let calls_done = (calls / crate::common::BATCH).max(1) * crate::common::BATCH;
    let mut count_errors = Vec::new();
    // Round 0 is a warm-up (caches, first chunks, the peers' lazy state).
    for round in 0..=rounds {
        let n = if round == 0 { calls / 4 } else { calls };
        let session = sp::setup(Options::new().in_memory().verbose(false)).expect("setup");
        let on: Vec<(Variant, f64)> = rotated(&Variant::SESSION_ON, round)
            .into_iter()
            .map(|v| (v, v.run(n, &clock)))
            .collect();
        let results = session.finalize().expect("finalize");
        if round > 0 {
            for v in Variant::SESSION_ON.into_iter().filter(|v| v.records()) {
                let name = region_name(v);
                let got = sp::get_region(name).map_or(0, |r| r.num_calls());
                if got != calls_done {
                    count_errors.push(format!("{name}: {got} calls, expected {calls_done}"));
                }
            }
            if let Some(traced) = results
                .profile()
                .region_names
                .iter()
                .find(|n| n.ends_with("traced"))
            {
                let got = sp::get_region(traced).map_or(0, |r| r.num_calls());
                if got != 0 {
                    count_errors.push(format!("{traced}: {got} calls outside any trace"));
                }
            }
        }
        drop(results);
        // No session active: the runtime-disabled path.
        let off: Vec<(Variant, f64)> = rotated(&Variant::SESSION_OFF, round)
            .into_iter()
            .map(|v| (v, v.run(n, &clock)))
            .collect();
        if round > 0 {
            for (v, ns) in on.into_iter().chain(off) {
                push(v, ns);
            }
        }
    }
    let recorded = peers.finish();
    MicroResult {
        samples,
        recorded,
        ours_counts_ok: count_errors.is_empty(),
        ours_count_note: if count_errors.is_empty() {
            format!("each of `profiled`, `cached`, `by_name` recorded {calls_done} calls per round; the traced fn none")
        } else {
            count_errors.join("; ")
        },
        calls: calls_done,
        rounds,
    }
}

fn region_name(v: Variant) -> &'static str {
    match v {
        Variant::Profile => "profiled",
        Variant::Cached => "cached",
        Variant::ByName => "by_name",
        _ => unreachable!("not a recording variant"),
    }
}
