//! `compare-off`: the variants of `ours.rs` built with the runtime's
//! `enabled` feature off, where `#[profile]` expands to the function
//! unchanged and `scope!` to nothing. `compare` builds and runs it; it
//! prints, per variant, the median ns per call minus the bare workload's,
//! with the rounds' quartiles, one line each.
//!
//! Build: `cargo build --release -p bench-compare --bin compare-off
//! --no-default-features --features compiled-out,macros`.

mod common;
mod ours;

use common::{bare, median, quantile, rotated, time};

#[derive(Clone, Copy, PartialEq, Eq)]
enum V {
    Bare,
    BareAgain,
    Profile,
    Cached,
    ByName,
    Traced,
}

impl V {
    fn name(self) -> &'static str {
        match self {
            V::Bare => "bare",
            V::BareAgain => "bare_again",
            V::Profile => "profile",
            V::Cached => "cached",
            V::ByName => "by_name",
            V::Traced => "traced",
        }
    }

    fn run(self, calls: u64) -> f64 {
        match self {
            V::Bare => time(calls, bare),
            V::BareAgain => time(calls, bare_again),
            V::Profile => time(calls, ours::profiled),
            V::Cached => time(calls, ours::cached),
            V::ByName => time(calls, ours::by_name_literal),
            V::Traced => time(calls, ours::traced),
        }
    }
}

/// A second uninstrumented function, the null control: the same code as
/// `bare`, timed in its own slot of each round.
#[inline(never)]
fn bare_again(x: u64) -> u64 {
    common::work(x)
}

/// Where `f` jumps if its first instruction is `jmp rel32` (x86_64).
fn tail_jump_target(f: fn(u64) -> u64) -> Option<usize> {
    if !cfg!(target_arch = "x86_64") {
        return None;
    }
    let at = f as usize as *const u8;
    // SAFETY: a function's first five bytes are mapped, readable code (a
    // `jmp rel32` or longer code followed by padding).
    let bytes: [u8; 5] = unsafe { std::ptr::read_unaligned(at.cast()) };
    (bytes[0] == 0xE9).then(|| {
        let rel = i32::from_le_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]);
        (at as usize + 5).wrapping_add_signed(rel as isize)
    })
}

fn arg(args: &[String], flag: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(default)
}

fn main() {
    if cfg!(feature = "enabled") {
        eprintln!("compare-off must be built with --no-default-features");
        std::process::exit(2);
    }
    let args: Vec<String> = std::env::args().collect();
    let calls = arg(&args, "--calls", 1_000_000);
    let rounds = arg(&args, "--rounds", 15) as usize;
    let all = [
        V::Bare,
        V::BareAgain,
        V::Profile,
        V::Cached,
        V::ByName,
        V::Traced,
    ];
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); all.len()];
    for round in 0..=rounds {
        let n = if round == 0 { calls / 4 } else { calls };
        for v in rotated(&all, round) {
            let ns = v.run(n);
            if round > 0 {
                samples[all.iter().position(|w| *w == v).expect("known")].push(ns);
            }
        }
    }
    let base = median(&samples[0]);
    // Whether a compiled-out function is the same machine code as `bare`:
    // both a single tail jump to the workload.
    let same_code = |f: fn(u64) -> u64| {
        let w = common::work as fn(u64) -> u64 as usize;
        tail_jump_target(f) == Some(w) && tail_jump_target(bare) == Some(w)
    };
    for (v, s) in all.iter().zip(&samples) {
        let merged = match v {
            V::Profile => same_code(ours::profiled) as u8,
            V::Cached => same_code(ours::cached) as u8,
            V::Traced => same_code(ours::traced) as u8,
            V::ByName => same_code(ours::by_name_literal) as u8,
            _ => 0,
        };
        println!(
            "{} median_ns={:.4} overhead_ns={:.4} p25_ns={:.4} p75_ns={:.4} same_code_as_bare={merged} macros={}",
            v.name(),
            median(s),
            median(s) - base,
            quantile(s, 0.25) - base,
            quantile(s, 0.75) - base,
            ours::PROFILE_IS_ATTRIBUTE as u8,
        );
    }
}
