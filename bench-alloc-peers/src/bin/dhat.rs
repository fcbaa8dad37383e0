//! dhat 0.3: its `Alloc` is the global allocator and a heap `Profiler` is
//! running while the calls are timed (dhat records each allocation with
//! its backtrace). Prints `system_ns`, `tracked_ns` (medians of the
//! rounds, per call), `calls` and `dhat_blocks` (the allocations dhat
//! counted, checked against the calls).

use bench_alloc_peers::{alloc_global, alloc_system, args, median, time};

#[global_allocator]
static GLOBAL: dhat::Alloc = dhat::Alloc;

fn main() {
    let (calls, rounds) = args();
    // dhat is slow per allocation: fewer calls, so the row ends in seconds.
    let calls = (calls / 10).max(10_000);
    let (mut system, mut tracked) = (Vec::new(), Vec::new());
    let mut blocks = 0;
    for round in 0..=rounds {
        let s = time(calls, alloc_system);
        let profiler = dhat::Profiler::builder().testing().build();
        let before = dhat::HeapStats::get().total_blocks;
        let t = time(calls, alloc_global);
        blocks = dhat::HeapStats::get().total_blocks - before;
        drop(profiler);
        if round > 0 {
            system.push(s);
            tracked.push(t);
        }
    }
    println!("system_ns {}", median(&system));
    println!("tracked_ns {}", median(&tracked));
    println!("calls {calls}");
    println!("dhat_blocks {blocks}");
}
