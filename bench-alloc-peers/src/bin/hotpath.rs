//! hotpath 0.30's allocation mode: its `CountingAllocator` is the global
//! allocator and a `#[hotpath::measure]` function, open around the timed
//! calls, is charged their allocations (as our row runs inside one open
//! region). Prints `system_ns`, `tracked_ns` (medians of the rounds, per
//! call) and `calls`.

use bench_alloc_peers::{alloc_global, alloc_system, args, median, time};

#[global_allocator]
static GLOBAL: hotpath::CountingAllocator = hotpath::CountingAllocator::new();

#[hotpath::measure]
#[inline(never)]
fn tracked(calls: u64) -> f64 {
    time(calls, alloc_global)
}

fn main() {
    let (calls, rounds) = args();
    let report = std::env::temp_dir().join(format!("alloc-hotpath-{}.json", std::process::id()));
    let guard = hotpath::HotpathGuardBuilder::new("alloc-hotpath")
        .format(hotpath::Format::Json)
        .output_path(&report)
        .build();
    let (mut system, mut tracked_ns) = (Vec::new(), Vec::new());
    for round in 0..=rounds {
        let s = time(calls, alloc_system);
        let t = tracked(calls);
        if round > 0 {
            system.push(s);
            tracked_ns.push(t);
        }
    }
    drop(guard);
    let counted = std::fs::read_to_string(&report).unwrap_or_default();
    let _ = std::fs::remove_file(&report);
    // What hotpath charged to its functions (checked by the caller: the
    // mode was on): its report's `functions_alloc.total_allocated`.
    let total = counted
        .split("\"total_allocated\":\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or("none");
    println!("hotpath_total_allocated {}", total.replace(' ', "_"));
    println!("system_ns {}", median(&system));
    println!("tracked_ns {}", median(&tracked_ns));
    println!("calls {calls}");
}
