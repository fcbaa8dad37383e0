//! The single-thread table: every variant interleaved within each round,
//! over the same workload.

use std::hint::black_box;

use scope_profiler::{self as sp, Options};

use crate::common::{bare, median, quantile, rotated, time, time_batched, work};
use crate::ours;
use crate::peers::{self, FastraceRoot, Peers, PuffinFrame, Recorded};
use crate::whatif;

/// One row of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Bare,
    FloorQuanta,
    FloorRdtsc,
    Profile,
    ProfileFresh,
    ProfilePortable,
    Cached,
    ByName,
    TracedOutside,
    AsyncTask,
    InTask,
    AsyncNested,
    AsyncPolls,
    AsyncPollsLong,
    PlainPolls,
    OptInOff,
    Paused,
    Outcome,
    InMetadata,
    MetadataPerCall,
    Aggregate,
    DisabledProfile,
    DeactivatedProfile,
    DisabledCached,
    DisabledByName,
    Hotpath,
    Puffin,
    Fastrace,
    Tracing,
    HotpathAsync,
    FastraceAsync,
    TracingAsync,
    TracingScoped,
    TracingIdentity,
    TracingOurLayer,
    TracingOurLayerOff,
    TracingChrome,
    TracingTracy,
    WhatIfOn,
    WhatIfOff,
}

impl Variant {
    /// Whether a variant is timed with our session active; the bare
    /// workload runs in both halves, as the control.
    fn runs_in_session(self) -> bool {
        !matches!(
            self,
            Variant::DisabledProfile
                | Variant::DeactivatedProfile
                | Variant::DisabledCached
                | Variant::DisabledByName
                | Variant::WhatIfOff
                | Variant::TracingOurLayerOff
        )
    }

    /// Variants timed while our session is active, in table order.
    pub fn session_on() -> Vec<Variant> {
        Self::ALL
            .into_iter()
            .filter(|v| v.runs_in_session())
            .collect()
    }

    /// Variants timed with no session active (bare again, as a control).
    pub fn session_off() -> Vec<Variant> {
        Self::ALL
            .into_iter()
            .filter(|v| *v == Variant::Bare || !v.runs_in_session())
            .collect()
    }

    /// Every variant: the table's order, then the what-if rows.
    pub const ALL: [Variant; 40] = [
        Variant::Bare,
        Variant::FloorQuanta,
        Variant::FloorRdtsc,
        Variant::Profile,
        Variant::ProfileFresh,
        Variant::ProfilePortable,
        Variant::Cached,
        Variant::ByName,
        Variant::TracedOutside,
        Variant::AsyncTask,
        Variant::InTask,
        Variant::AsyncNested,
        Variant::AsyncPolls,
        Variant::AsyncPollsLong,
        Variant::PlainPolls,
        Variant::OptInOff,
        Variant::Paused,
        Variant::Outcome,
        Variant::InMetadata,
        Variant::MetadataPerCall,
        Variant::Aggregate,
        Variant::DisabledProfile,
        Variant::DeactivatedProfile,
        Variant::DisabledCached,
        Variant::DisabledByName,
        Variant::Hotpath,
        Variant::Puffin,
        Variant::Fastrace,
        Variant::Tracing,
        Variant::HotpathAsync,
        Variant::FastraceAsync,
        Variant::TracingAsync,
        Variant::TracingScoped,
        Variant::TracingIdentity,
        Variant::TracingOurLayer,
        Variant::TracingOurLayerOff,
        Variant::TracingChrome,
        Variant::TracingTracy,
        Variant::WhatIfOn,
        Variant::WhatIfOff,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Variant::Bare => "bare workload (no instrumentation)",
            Variant::FloorQuanta => "floor: 2x `quanta::Clock::raw`",
            Variant::FloorRdtsc => "floor: 2x bare `rdtsc`",
            Variant::Profile if ours::PROFILE_IS_ATTRIBUTE => "ours: `#[profile]` fn",
            Variant::Profile => "ours: `#[profile]` expansion, by hand",
            Variant::ProfileFresh => "ours: `#[profile]` fn, records into fresh pages",
            Variant::ProfilePortable => {
                "ours: `#[profile]` fn, records into fresh pages, std-only platform code \
                 (`--cfg scope_profiler_portable`: what macOS and Windows run)"
            }
            Variant::Cached => "ours: call-site cached `scope!`",
            Variant::ByName => "ours: `sp::region(name).enter()`",
            Variant::TracedOutside => "ours: `#[profile(traced)]`, outside any trace",
            Variant::AsyncTask => "ours: `#[profile] async fn`, a task polled once to completion",
            Variant::InTask => "ours: `#[profile]` fn inside a task's poll",
            Variant::AsyncNested => {
                "ours: `#[profile] async fn` polled once inside a task's poll (a frame)"
            }
            Variant::AsyncPolls => {
                "ours: `#[profile] async fn` waiting 9 times (a task polled 10 times, the \
                 workload in each poll), per poll"
            }
            Variant::AsyncPollsLong => {
                "ours: the same waiting 19 times (a task polled 20 times), per poll"
            }
            Variant::PlainPolls => {
                "the same `async fn` uninstrumented, per poll (the polling loop's own cost)"
            }
            Variant::OptInOff => {
                "ours: `#[profile(tags = [..])]` of an opt-in tag that is off (session active)"
            }
            Variant::Paused => "ours: `#[profile]` fn while the session is paused",
            Variant::Outcome => "ours: `#[profile(record_outcome)]` fn returning `Ok`",
            Variant::InMetadata => {
                "ours: `#[profile]` fn inside one long `sp::call_metadata` scope"
            }
            Variant::MetadataPerCall => {
                "ours: `#[profile]` fn in an `sp::call_metadata([(\"step\", i)])` scope of its own"
            }
            Variant::Aggregate => {
                "ours: `#[profile]` fn, aggregation mode (per-region totals, a process of its own)"
            }
            Variant::DisabledProfile => "ours: runtime-disabled `#[profile]` (no session)",
            Variant::DeactivatedProfile => {
                "ours: `#[profile]` in a deactivated session (`Options::deactivate(true)`)"
            }
            Variant::DisabledCached => "ours: runtime-disabled `scope!` (no session)",
            Variant::DisabledByName => "ours: runtime-disabled `sp::region(name).enter()`",
            Variant::Hotpath => "hotpath `#[measure]` (guard alive)",
            Variant::Puffin => "puffin `profile_function!` (frame per 10k)",
            Variant::Fastrace => "fastrace `#[trace]` (root per 10k)",
            Variant::Tracing => "tracing `#[instrument]` + `Registry`",
            Variant::HotpathAsync => "hotpath `#[measure]` `async fn`, a task polled once",
            Variant::FastraceAsync => {
                "fastrace `#[trace]` `async fn`, a task polled once (root per 10k)"
            }
            Variant::TracingAsync => {
                "tracing `#[instrument]` `async fn` + `Registry`, a task polled once"
            }
            Variant::TracingScoped => "tracing `#[instrument]` + `Registry` (scoped default)",
            Variant::TracingOurLayer => {
                "tracing `#[instrument]` + `Registry` + our layer (scope-profiler-tracing)"
            }
            Variant::TracingIdentity => {
                "tracing `#[instrument]` + `Registry` + a no-op layer (`Identity`)"
            }
            Variant::TracingOurLayerOff => {
                "tracing `#[instrument]` + `Registry` + our layer, no session"
            }
            Variant::TracingChrome => "tracing `#[instrument]` + `Registry` + tracing-chrome layer",
            Variant::TracingTracy => {
                "tracing `#[instrument]` + `Registry` + tracing-tracy layer (no server)"
            }
            Variant::WhatIfOn => "what-if: enter/exit out of line, session active",
            Variant::WhatIfOff => "what-if: enter/exit out of line, no session",
        }
    }

    /// A short name for the command line (`compare one SLUG CALLS`).
    pub fn slug(self) -> &'static str {
        match self {
            Variant::Bare => "bare",
            Variant::FloorQuanta => "floor-quanta",
            Variant::FloorRdtsc => "floor-rdtsc",
            Variant::Profile => "profile",
            Variant::ProfileFresh => "profile-fresh",
            Variant::ProfilePortable => "profile-portable",
            Variant::Cached => "cached",
            Variant::ByName => "by-name",
            Variant::TracedOutside => "traced-outside",
            Variant::AsyncTask => "async-task",
            Variant::InTask => "in-task",
            Variant::AsyncNested => "async-nested",
            Variant::AsyncPolls => "async-polls",
            Variant::AsyncPollsLong => "async-polls-20",
            Variant::PlainPolls => "plain-polls",
            Variant::OptInOff => "opt-in-off",
            Variant::Paused => "paused",
            Variant::Outcome => "outcome",
            Variant::InMetadata => "in-metadata",
            Variant::MetadataPerCall => "metadata-per-call",
            Variant::Aggregate => "aggregate",
            Variant::DisabledProfile => "disabled-profile",
            Variant::DeactivatedProfile => "deactivated-profile",
            Variant::DisabledCached => "disabled-cached",
            Variant::DisabledByName => "disabled-by-name",
            Variant::Hotpath => "hotpath",
            Variant::Puffin => "puffin",
            Variant::Fastrace => "fastrace",
            Variant::Tracing => "tracing",
            Variant::HotpathAsync => "hotpath-async",
            Variant::FastraceAsync => "fastrace-async",
            Variant::TracingAsync => "tracing-async",
            Variant::TracingScoped => "tracing-scoped",
            Variant::TracingOurLayer => "tracing-our-layer",
            Variant::TracingChrome => "tracing-chrome",
            Variant::TracingIdentity => "tracing-identity",
            Variant::TracingOurLayerOff => "tracing-our-layer-off",
            Variant::TracingTracy => "tracing-tracy",
            Variant::WhatIfOn => "whatif-on",
            Variant::WhatIfOff => "whatif-off",
        }
    }

    pub fn is_whatif(self) -> bool {
        matches!(self, Variant::WhatIfOn | Variant::WhatIfOff)
    }

    pub fn is_peer(self) -> bool {
        matches!(
            self,
            Variant::Hotpath
                | Variant::Puffin
                | Variant::Fastrace
                | Variant::Tracing
                | Variant::HotpathAsync
                | Variant::FastraceAsync
                | Variant::TracingAsync
                | Variant::TracingScoped
                | Variant::TracingIdentity
                | Variant::TracingOurLayer
                | Variant::TracingOurLayerOff
                | Variant::TracingChrome
                | Variant::TracingTracy
        )
    }

    /// Records one call per call while a session is active.
    fn records(self) -> bool {
        matches!(
            self,
            Variant::Profile
                | Variant::ProfileFresh
                | Variant::Cached
                | Variant::ByName
                | Variant::WhatIfOn
                | Variant::TracingOurLayer
                | Variant::Outcome
                | Variant::InMetadata
                | Variant::MetadataPerCall
        )
    }

    /// Nanoseconds per call over `calls` calls.
    pub fn run(self, calls: u64, clock: &quanta::Clock) -> f64 {
        match self {
            Variant::Bare => time(calls, bare),
            Variant::FloorQuanta => time(calls, |x| floor_quanta(clock, x)),
            Variant::FloorRdtsc => time(calls, floor_rdtsc),
            Variant::Profile | Variant::DisabledProfile => time(calls, ours::profiled),
            Variant::DeactivatedProfile => {
                // Set up and finalized outside the timed calls.
                let run = sp::setup(Options::new().deactivate(true).verbose(false))
                    .expect("deactivated setup");
                let ns = time(calls, ours::profiled);
                assert_eq!(
                    run.finalize().expect("finalize").write_path(),
                    sp::WritePath::Deactivated
                );
                ns
            }
            Variant::ProfileFresh | Variant::ProfilePortable | Variant::Aggregate => {
                time(calls, ours::profiled)
            }
            Variant::Cached | Variant::DisabledCached => time(calls, ours::cached),
            Variant::ByName | Variant::DisabledByName => {
                time(calls, |x| ours::by_name(black_box("by_name"), x))
            }
            Variant::TracedOutside => time(calls, ours::traced),
            Variant::AsyncTask => time(calls, ours::async_task),
            Variant::InTask => ours::in_task(|| time(calls, ours::profiled)),
            Variant::AsyncNested => ours::in_task(|| time(calls, ours::async_task)),
            // Per poll: each call is a future polled `POLLS` times.
            Variant::AsyncPolls => {
                time(calls / ours::POLLS, ours::async_polls) / ours::POLLS as f64
            }
            Variant::AsyncPollsLong => {
                time(calls / (2 * ours::POLLS), ours::async_polls_long) / (2 * ours::POLLS) as f64
            }
            Variant::PlainPolls => {
                time(calls / ours::POLLS, ours::plain_polls) / ours::POLLS as f64
            }
            Variant::OptInOff => time(calls, ours::opt_in_off),
            Variant::Paused => {
                // `profiled` records nothing here: its count (checked after
                // the round) stays the `Profile` row's.
                sp::pause().expect("pause between calls");
                let ns = time(calls, ours::profiled);
                sp::resume();
                ns
            }
            Variant::Outcome => time(calls, ours::outcome),
            Variant::InMetadata => {
                let _scope = sp::call_metadata([("phase", "bench")]);
                time(calls, ours::in_metadata)
            }
            Variant::MetadataPerCall => time(calls, ours::metadata_per_call),
            Variant::Hotpath => time(calls, peers::hotpath_fn),
            Variant::Puffin => time_batched(calls, PuffinFrame::open, peers::puffin_fn),
            Variant::Fastrace => time_batched(calls, FastraceRoot::open, peers::fastrace_fn),
            Variant::Tracing => time(calls, peers::tracing_fn),
            Variant::HotpathAsync => time(calls, peers::hotpath_async_fn),
            Variant::FastraceAsync => {
                time_batched(calls, FastraceRoot::open, peers::fastrace_async_fn)
            }
            Variant::TracingAsync => time(calls, peers::tracing_async_fn),
            Variant::TracingScoped => {
                peers::with_layered(|l| &l.scoped, || time(calls, peers::tracing_fn))
            }
            Variant::TracingOurLayer | Variant::TracingOurLayerOff => {
                peers::with_layered(|l| &l.ours, || time(calls, peers::tracing_fn))
            }
            Variant::TracingIdentity => {
                peers::with_layered(|l| &l.identity, || time(calls, peers::tracing_fn))
            }
            Variant::TracingTracy => {
                // Only in a process of its own (see `measure`): the Tracy
                // client's thread runs from its start to the process's end,
                // taking CPU from every other row.
                use tracing_subscriber::layer::SubscriberExt;
                let tracy = tracing::Dispatch::new(
                    tracing_subscriber::registry().with(tracing_tracy::TracyLayer::default()),
                );
                tracing::dispatcher::with_default(&tracy, || time(calls, peers::tracing_fn))
            }
            Variant::TracingChrome => {
                // Only in a process of its own (see `measure`): its writer
                // thread turns the row's spans into JSON long after the
                // calls, taking CPU from the rows after it.
                let (ns, begins) = peers::chrome_row(calls);
                CHROME_BEGINS.store(begins, std::sync::atomic::Ordering::Relaxed);
                ns
            }
            Variant::WhatIfOn | Variant::WhatIfOff => time(calls, whatif::outlined),
        }
    }
}

/// Span begins in tracing-chrome's file after its row (in `compare one`).
static CHROME_BEGINS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// `v`'s ns per call over `n` calls; the process's minor page faults per
/// call; and the CPU time of every thread of the process per call, counted
/// until [`SETTLE`] after the calls so that work a peer hands to a
/// background thread is included.
fn measure(v: Variant, n: u64, clock: &quanta::Clock) -> (Variant, f64, f64, f64) {
    if v == Variant::ProfilePortable {
        // The fresh-pages row of the portable build, in a process of its own.
        let exe = PORTABLE_EXE
            .get()
            .and_then(|e| e.as_ref().ok())
            .unwrap_or_else(|| panic!("no portable build: {:?}", PORTABLE_EXE.get()));
        let args = [
            "one".into(),
            Variant::ProfileFresh.slug().into(),
            n.to_string(),
        ];
        let f = crate::scale::spawn_exe(exe, &args);
        let g = |k| crate::scale::get(&f, k);
        assert_eq!(
            g("portable"),
            1.0,
            "{} is not the portable build",
            exe.display()
        );
        return (v, g("ns"), g("faults_per_call"), g("cpu_ns_per_call"));
    }
    if matches!(
        v,
        Variant::ProfileFresh | Variant::Aggregate | Variant::TracingTracy | Variant::TracingChrome
    ) {
        // A new process: its memory has never been touched.
        let f = crate::scale::spawn(&["one".into(), v.slug().into(), n.to_string()]);
        let g = |k| crate::scale::get(&f, k);
        if v == Variant::TracingChrome {
            peers::CHROME_BEGINS_TOTAL.fetch_add(
                g("chrome_begins") as u64,
                std::sync::atomic::Ordering::Relaxed,
            );
        }
        return (v, g("ns"), g("faults_per_call"), g("cpu_ns_per_call"));
    }
    let f0 = crate::scale::minor_faults(libc::RUSAGE_SELF);
    let c0 = process_cpu_ns();
    let ns = v.run(n, clock);
    let f1 = crate::scale::minor_faults(libc::RUSAGE_SELF);
    std::thread::sleep(SETTLE);
    let c1 = process_cpu_ns();
    let calls = (n / crate::common::BATCH).max(1) * crate::common::BATCH;
    (
        v,
        ns,
        (f1 - f0) as f64 / calls as f64,
        (c1 - c0) / calls as f64,
    )
}

/// How long background threads get to finish a variant's work.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(30);

fn process_cpu_ns() -> f64 {
    // SAFETY: `clock_gettime` only writes the struct it is given.
    unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts);
        ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
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
    /// Minor page faults of the process per call, per round, by variant.
    pub faults: Vec<(Variant, Vec<f64>)>,
    /// CPU ns of all the process's threads per call, per round, by variant.
    pub cpu: Vec<(Variant, Vec<f64>)>,
    pub recorded: Recorded,
    /// Calls per round each of our recording variants recorded (from the
    /// finalized sessions), and whether the traced one stayed empty.
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

    /// The median ns per call of `v` (the workload included).
    pub fn median_of(&self, v: Variant) -> f64 {
        median(self.samples(v))
    }

    /// The median ns per call of `v` minus the bare workload's median.
    pub fn overhead(&self, v: Variant) -> f64 {
        median(self.samples(v)) - median(self.samples(Variant::Bare))
    }

    /// Median minor page faults (whole process) per 1000 calls of `v`.
    pub fn faults_per_k(&self, v: Variant) -> f64 {
        let f = &self.faults.iter().find(|(w, _)| *w == v).expect("known").1;
        1000.0 * median(f)
    }

    /// Median CPU ns per call of every thread of the process, minus the
    /// bare workload's.
    pub fn cpu_overhead(&self, v: Variant) -> f64 {
        let of = |v: Variant| median(&self.cpu.iter().find(|(w, _)| *w == v).expect("known").1);
        of(v) - of(Variant::Bare)
    }

    /// The interquartile range of `v`'s rounds.
    pub fn iqr(&self, v: Variant) -> (f64, f64) {
        let base = median(self.samples(Variant::Bare));
        let s = self.samples(v);
        (quantile(s, 0.25) - base, quantile(s, 0.75) - base)
    }
}

/// The memory limit of the session the rows record in: one round's
/// records (24 bytes a call of every recording row) stay under half of it,
/// where the spill writer starts, so that no row is timed while the writer
/// spills the others' records (the cost of recording while spilling is
/// `sustained`'s table). Checked each round: with the default limit
/// (256 MiB), every round of 1000000 calls a row spilled. Half of it is
/// also what a round's session keeps of its chunks for the next round's
/// (the runtime's spares), so each round records into memory the previous
/// one faulted in, as the peers do (`keep_freed_memory`).
pub const MEMORY_LIMIT: usize = 4 << 30;

/// Runs `rounds` rounds of `calls` calls per variant.
pub fn run(calls: u64, rounds: usize, tmp: &std::path::Path) -> MicroResult {
    let clock = quanta::Clock::new();
    sp::register_opt_in_tag(ours::OPT_IN_TAG);
    let peers = Peers::start(tmp);
    let mut samples: Vec<(Variant, Vec<f64>)> =
        Variant::ALL.iter().map(|&v| (v, Vec::new())).collect();
    let mut faults: Vec<(Variant, Vec<f64>)> =
        Variant::ALL.iter().map(|&v| (v, Vec::new())).collect();
    let mut cpu = faults.clone();
    keep_freed_memory();
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
        let session = sp::setup(
            Options::new()
                .in_memory()
                .verbose(false)
                .memory_limit(MEMORY_LIMIT),
        )
        .expect("setup");
        whatif::ACTIVE.store(1, std::sync::atomic::Ordering::Relaxed);
        let on: Vec<(Variant, f64, f64, f64)> = rotated(&Variant::session_on(), round)
            .into_iter()
            .map(|v| measure(v, n, &clock))
            .collect();
        whatif::ACTIVE.store(0, std::sync::atomic::Ordering::Relaxed);
        let results = session.finalize().expect("finalize");
        let spilled = results.health().spilled_bytes;
        if spilled != 0 {
            count_errors.push(format!(
                "round {round} spilled {spilled} bytes: the rows timed the spill writer too"
            ));
        }
        if round > 0 {
            for v in Variant::session_on()
                .into_iter()
                .filter(|v| v.records() && *v != Variant::ProfileFresh)
            {
                let name = region_name(v);
                let got = sp::get_region(name).map_or(0, |r| r.num_calls());
                // The in-task row calls `profiled` too, inside a task's poll.
                let in_task =
                    v == Variant::Profile && Variant::session_on().contains(&Variant::InTask);
                let expected = calls_done * if in_task { 2 } else { 1 };
                if got != expected {
                    count_errors.push(format!("{name}: {got} calls, expected {expected}"));
                }
            }
            if let Some(traced) = results
                .profile()
                .and_then(|p| p.region_names.iter().find(|n| n.ends_with("traced")))
            {
                let got = sp::get_region(traced).map_or(0, |r| r.num_calls());
                if got != 0 {
                    count_errors.push(format!("{traced}: {got} calls outside any trace"));
                }
            }
        }
        drop(results);
        // No session active: the runtime-disabled path.
        let off: Vec<(Variant, f64, f64, f64)> = rotated(&Variant::session_off(), round)
            .into_iter()
            .map(|v| measure(v, n, &clock))
            .collect();
        if round > 0 {
            for (v, ns, f, c) in on.into_iter().chain(off) {
                push(v, ns);
                let at = Variant::ALL.iter().position(|w| *w == v).expect("known");
                faults[at].1.push(f);
                cpu[at].1.push(c);
            }
        }
    }
    let recorded = peers.finish();
    MicroResult {
        samples,
        faults,
        cpu,
        recorded,
        ours_count_note: if count_errors.is_empty() {
            format!(
                "each of `cached`, `by_name` (and the what-if) recorded {calls_done} calls per round, `profiled` twice that (its row's and the in-task row's; the fresh-pages row records in its own process); the traced fn none"
            )
        } else {
            format!("**wrong counts**: {}", count_errors.join("; "))
        },
        calls: calls_done,
        rounds,
    }
}

fn region_name(v: Variant) -> &'static str {
    match v {
        Variant::Profile | Variant::ProfileFresh => "profiled",
        Variant::Cached => "cached",
        Variant::ByName => "by_name",
        Variant::WhatIfOn => "whatif_outlined",
        Variant::TracingOurLayer => "compare::peers::tracing_fn",
        Variant::Outcome => "outcome",
        Variant::InMetadata => "in_metadata",
        Variant::MetadataPerCall => "metadata_per_call",
        _ => unreachable!("not a recording variant"),
    }
}

/// `compare one SLUG CALLS`: runs one of our variants (or a floor) once, in
/// the session state its row is measured in, and prints its ns per call.
/// For instruction counts: `valgrind --tool=callgrind compare one ...`,
/// once with the variant and once with `bare`, and the difference divided
/// by the calls.
pub fn run_one(slug: &str, calls: u64) {
    let v = Variant::ALL
        .into_iter()
        .find(|v| v.slug() == slug)
        .unwrap_or_else(|| panic!("unknown variant {slug:?}"));
    // The other peers as the full run has them (for instruction counts
    // per call of every row: `instructions.sh`); tracing-tracy and
    // tracing-chrome set up their own.
    let peers = (v.is_peer() && !matches!(v, Variant::TracingTracy | Variant::TracingChrome))
        .then(|| Peers::start(&std::env::temp_dir()));
    let clock = quanta::Clock::new();
    sp::register_opt_in_tag(ours::OPT_IN_TAG);
    let options = Options::new()
        .in_memory()
        .verbose(false)
        .aggregation(v == Variant::Aggregate);
    let rss0 = crate::scale::status_kib("VmRSS:");
    let session = v
        .runs_in_session()
        .then(|| sp::setup(options).expect("setup"));
    if session.is_some() {
        whatif::ACTIVE.store(1, std::sync::atomic::Ordering::Relaxed);
    }
    let f0 = crate::scale::minor_faults(libc::RUSAGE_SELF);
    let t0 = crate::scale::minor_faults(libc::RUSAGE_THREAD);
    let c0 = process_cpu_ns();
    let ns = v.run(calls, &clock);
    let f1 = crate::scale::minor_faults(libc::RUSAGE_SELF);
    let t1 = crate::scale::minor_faults(libc::RUSAGE_THREAD);
    let c1 = process_cpu_ns();
    // Memory the calls took, session included (before `finalize`).
    let rss_growth = crate::scale::status_kib("VmRSS:").saturating_sub(rss0) * 1024;
    let done = (calls / crate::common::BATCH).max(1) * crate::common::BATCH;
    if let Some(s) = session {
        s.finalize().expect("finalize");
    }
    if let Some(peers) = peers {
        peers.finish();
    }
    println!(
        "ns={ns:.4} faults_per_call={:.6} thread_faults_per_call={:.6} cpu_ns_per_call={:.4} \
         rss_growth_bytes={rss_growth} chrome_begins={} portable={}",
        (f1 - f0) as f64 / done as f64,
        (t1 - t0) as f64 / done as f64,
        (c1 - c0) / done as f64,
        CHROME_BEGINS.load(std::sync::atomic::Ordering::Relaxed),
        cfg!(scope_profiler_portable) as u8,
    );
}

/// The `compare` binary built with `--cfg scope_profiler_portable` (the
/// runtime's std-only platform code), for the portable row; set by
/// [`build_portable`] before the timing starts.
pub static PORTABLE_EXE: std::sync::OnceLock<Result<std::path::PathBuf, String>> =
    std::sync::OnceLock::new();

/// Builds `compare` with `RUSTFLAGS="--cfg scope_profiler_portable"` in a
/// target directory of its own (`<target>/portable-bench`), outside the
/// timing, and keeps its path in [`PORTABLE_EXE`].
pub fn build_portable() {
    let build = || -> Result<std::path::PathBuf, String> {
        let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .ok_or("no workspace root")?;
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| workspace.join("target"))
            .join("portable-bench");
        eprintln!(
            "building compare with --cfg scope_profiler_portable in {}",
            target.display()
        );
        let env = [
            (
                "RUSTFLAGS",
                std::ffi::OsStr::new("--cfg scope_profiler_portable"),
            ),
            ("CARGO_TARGET_DIR", target.as_os_str()),
        ];
        crate::build_bench(&["--bin", "compare"], &env)
            .map_err(|e| format!("building the portable compare: {e}"))?;
        Ok(target.join("release").join("compare"))
    };
    let _ = PORTABLE_EXE.set(build());
}

/// Makes glibc's allocator keep freed large blocks in the heap (the largest
/// mmap threshold it accepts, 32 MiB on 64-bit, and no trimming), so that a
/// recorder's buffers reuse pages an earlier session already faulted in.
/// By default a freed block above the threshold goes back to the system and
/// the next one is a fresh mapping whose pages are faulted in on first
/// touch. No-op on other C libraries.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only changes allocator tunables.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
}
