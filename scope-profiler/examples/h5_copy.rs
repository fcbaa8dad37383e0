//! One session written by both HDF5 layers, read back equal (issue 33).
//! `scripts/run-tests-mpi.sh` builds this example twice: with the default
//! features (the pure-Rust layer) and with `mpi` (the HDF5 C library), and
//! runs:
//!
//! ```text
//! h5_copy record RUN.h5              # a session on two threads, with counters and metadata
//! h5_copy copy RUN.h5 OUT.h5 none    # read_profile, then write_profile (none | gzip)
//! h5_copy same A B                   # read_profile of both: equal, or exit 1
//! ```

use std::process::ExitCode;

use scope_profiler::{self as sp, Compression, CountingAllocator, Options};

// Allocations counted per region: the profile has counters to write.
#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator::system();

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["record", out] => record(out),
        ["copy", input, out, compression] => copy(input, out, compression),
        ["same", a, b] => same(a, b),
        _ => Err("usage: h5_copy record OUT | copy IN OUT none|gzip | same A B".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("h5_copy: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A session of nested regions on two threads, allocations counted per
/// region, and metadata, written to `out` (HDF5 or JSON by its name).
fn record(out: &str) -> Result<(), Box<dyn std::error::Error>> {
    let options = Options::new()
        .file_path(out)
        .verbose(false)
        .track_allocations(true);
    sp::setup(options)?;
    let work = |n: u64| (0..n).fold(0u64, |a, b| a.wrapping_mul(31).wrapping_add(b));
    sp::region("outer\0with a NUL").run(|| {
        for i in 0..100 {
            sp::region("inner").run(|| std::hint::black_box(vec![work(i); 8]));
        }
    });
    std::thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..50 {
                sp::region("worker").run(|| sp::region("step").run(|| work(10)));
            }
        });
    });
    let results = sp::finalize()?;
    if results.counters().is_empty() {
        return Err("the session counted no allocations".into());
    }
    Ok(())
}

fn copy(input: &str, out: &str, compression: &str) -> Result<(), Box<dyn std::error::Error>> {
    let compression = match compression {
        "none" => Compression::None,
        "gzip" => Compression::Gzip(4),
        other => return Err(format!("compression {other:?}: none or gzip").into()),
    };
    let profile = sp::read_profile(input)?;
    sp::write_profile(&profile, out, compression)?;
    Ok(())
}

fn same(a: &str, b: &str) -> Result<(), Box<dyn std::error::Error>> {
    let (pa, pb) = (sp::read_profile(a)?, sp::read_profile(b)?);
    if pa != pb {
        return Err(format!("{a} and {b} read back different profiles").into());
    }
    println!(
        "h5_copy: {a} and {b}: the same profile ({} calls, {} regions, {} metadata entries, {} counters)",
        pa.events.len(),
        pa.region_names.len(),
        pa.metadata.len(),
        pa.counters.len()
    );
    Ok(())
}
