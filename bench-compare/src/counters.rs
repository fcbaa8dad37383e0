//! `compare-counters`: what region counters (issue 27) cost, in a process
//! of its own whose global allocator is `CountingAllocator` (so `compare`'s
//! process, and every row of its other tables, keep the system allocator).
//! `compare` builds and runs it and puts its table in the report; run alone:
//!
//! ```text
//! cargo run --release -p bench-compare --bin compare-counters -- --calls 1000000 --rounds 15
//! cargo run --release -p bench-compare --bin compare-counters -- one 10000000  # for perf record
//! ```
//!
//! Rows (median of the rounds, every row run once per round in a rotated
//! order):
//! - allocation (an `alloc` and a `dealloc` of 64 bytes) through `System`
//!   directly, and through the installed `CountingAllocator` with no
//!   session tracking allocations, and inside a region of a session that
//!   tracks them: the difference is the allocator's cost per allocation;
//! - the floor (the workload between two `rdtsc`), `#[profile]` with no
//!   counters, with allocation tracking, and with perf events
//!   (`task-clock`, a software event every Linux kernel counts): the
//!   difference to the floor is the cost per call.

mod common;

use std::hint::black_box;

use common::{alloc_global, alloc_system, bare, median, rotated, time, work};
use scope_profiler::{self as sp, CountingAllocator, Options};

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator::system();

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Row {
    Bare,
    Floor,
    AllocSystem,
    AllocCounting,
    AllocTracked,
    Profile,
    ProfileTracked,
    ProfilePerf,
}

const ROWS: [Row; 8] = [
    Row::Bare,
    Row::Floor,
    Row::AllocSystem,
    Row::AllocCounting,
    Row::AllocTracked,
    Row::Profile,
    Row::ProfileTracked,
    Row::ProfilePerf,
];

impl Row {
    fn label(self) -> &'static str {
        match self {
            Row::Bare => "bare workload",
            Row::Floor => "floor: workload between 2x `rdtsc`",
            Row::AllocSystem => "alloc+free 64 B, `System` directly",
            Row::AllocCounting => "alloc+free 64 B, `CountingAllocator` installed, tracking off",
            Row::AllocTracked => {
                "alloc+free 64 B, `CountingAllocator`, tracking on, inside a region"
            }
            Row::Profile => "`#[profile]`, no counters",
            Row::ProfileTracked => "`#[profile]`, `track_allocations(true)`",
            Row::ProfilePerf => "`#[profile]`, `perf_events([\"task-clock\"])`",
        }
    }

    /// The options of the session the row runs in (`None`: no session).
    fn options(self) -> Option<Options> {
        let base = Options::new().in_memory().verbose(false);
        match self {
            Row::Bare | Row::Floor | Row::AllocSystem | Row::AllocCounting => None,
            Row::Profile => Some(base),
            Row::AllocTracked | Row::ProfileTracked => Some(base.track_allocations(true)),
            Row::ProfilePerf => Some(base.perf_events(["task-clock"])),
        }
    }
}

#[sp::profile]
#[inline(never)]
fn profiled(x: u64) -> u64 {
    work(x)
}

#[inline(never)]
fn floor(x: u64) -> u64 {
    let start = rdtsc();
    let r = work(x);
    black_box(rdtsc().wrapping_sub(start)) ^ r
}

#[inline(always)]
fn rdtsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `rdtsc` has no preconditions on x86_64.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        std::time::Instant::now().elapsed().as_nanos() as u64
    }
}

fn run(row: Row, calls: u64) -> f64 {
    let session = row.options().map(|o| sp::setup(o).expect("setup"));
    let ns = match row {
        Row::Bare => time(calls, bare),
        Row::Floor => time(calls, floor),
        Row::AllocSystem => time(calls, alloc_system),
        Row::AllocCounting => time(calls, alloc_global),
        Row::AllocTracked => sp::region("tracked").run(|| time(calls, alloc_global)),
        Row::Profile | Row::ProfileTracked => time(calls, profiled),
        // A read system call per boundary: fewer calls.
        Row::ProfilePerf => time((calls / 20).max(10_000), profiled),
    };
    if session.is_some() {
        sp::finalize().expect("finalize");
    }
    ns
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `one N`: only the tracked `#[profile]` row, N calls (for a profiler).
    if args.first().is_some_and(|a| a == "one") {
        let calls = args
            .get(1)
            .map_or(10_000_000, |c| c.parse().expect("calls"));
        println!("{:.1} ns/call", run(Row::ProfileTracked, calls));
        return;
    }
    let num = |flag: &str, default: u64| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .map_or(default, |v| v.parse().expect("a number"))
    };
    let calls = num("--calls", 1_000_000);
    let rounds = num("--rounds", 15) as usize;
    // Perf events where the kernel counts them; else the row says why.
    let perf = sp::setup(
        Options::new()
            .in_memory()
            .verbose(false)
            .perf_events(["task-clock"]),
    )
    .map(|_| sp::finalize().map(drop))
    .err();
    let rows: Vec<Row> = ROWS
        .into_iter()
        .filter(|r| *r != Row::ProfilePerf || perf.is_none())
        .collect();
    let mut times = vec![Vec::new(); ROWS.len()];
    for round in 0..=rounds {
        for row in rotated(&rows, round) {
            let ns = run(row, calls);
            if round > 0 {
                times[row as usize].push(ns);
            }
        }
    }
    let m = |r: Row| median(&times[r as usize]);
    println!(
        "{calls} calls per row per round, {rounds} rounds after a warm-up round, rows rotated; \
         median ns per call. Allocation rows: an `alloc` and a `dealloc` of 64 bytes (plus the \
         workload), **over `System`** is the row minus `System` directly. Call rows: **over \
         floor** is the row minus the floor (the workload between two `rdtsc`). Sessions are in \
         memory; the tracked allocation row runs inside one open region.\n"
    );
    println!("| row | ns/call | over `System` | over floor |");
    println!("| --- | ---: | ---: | ---: |");
    for row in &rows {
        let v = m(*row);
        let over_system = match row {
            Row::AllocCounting | Row::AllocTracked => format!("{:+.1}", v - m(Row::AllocSystem)),
            _ => String::new(),
        };
        let over_floor = match row {
            Row::Profile | Row::ProfileTracked | Row::ProfilePerf => {
                format!("{:+.1}", v - m(Row::Floor))
            }
            _ => String::new(),
        };
        println!(
            "| {} | {v:.1} | {over_system} | {over_floor} |",
            row.label()
        );
    }
    if let Some(e) = perf {
        println!("\nNo perf-events row: {e}");
    }
}
