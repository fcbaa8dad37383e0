//! Writes a profile of N calls (default 10M) for the benchmarks:
//! `cargo run --release -p scope-profiler-cli --example make_big -- OUT.h5 [N]`.
//! Each `step` holds one `rhs` with two `kernel` calls and an `update`.

use scope_profiler::{self as sp, Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = args.next().ok_or("usage: make_big OUT.h5 [CALLS]")?;
    let calls: u64 = args.next().map_or(Ok(10_000_000), |n| n.parse())?;
    let run = sp::setup(Options::new().file_path(&out).verbose(false))?;
    for _ in 0..calls / 5 {
        sp::scope!("step");
        {
            sp::scope!("rhs");
            for _ in 0..2 {
                sp::scope!("kernel");
                std::hint::black_box(0);
            }
        }
        sp::scope!("update");
    }
    run.finalize()?;
    println!("wrote {out} ({calls} calls)");
    Ok(())
}
