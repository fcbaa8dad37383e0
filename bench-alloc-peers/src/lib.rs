//! What the allocation rows of bench-compare's counters section measure,
//! for the peers' binaries (each with the peer's allocator as the global
//! one): bench-compare's own `common.rs` (the workload, the timed loop,
//! the alloc+free of 64 bytes through `System` and through the global
//! allocator), compiled here by path, and the command line. Each binary
//! prints `key value` lines: `system_ns`, `tracked_ns`, `calls`, and what
//! the peer counted.

#[path = "../../bench-compare/src/common.rs"]
#[allow(dead_code)]
mod common;

pub use common::{alloc_global, alloc_system, median, time};

/// `--calls N` and `--rounds N` of the command line (1M and 15 by default).
pub fn args() -> (u64, usize) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |flag: &str, default: u64| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .map_or(default, |v| v.parse().expect("a number"))
    };
    (num("--calls", 1_000_000), num("--rounds", 15) as usize)
}
