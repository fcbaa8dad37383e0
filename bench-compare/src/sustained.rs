//! Recording while spilling (issue 25): what a long run costs the process
//! per call, on 1 and 4 threads under a 64 MiB memory limit, next to one
//! thread recording memory it has used before, in the same run.
//!
//! Each configuration is a fresh process ([`child`]); the cost is the
//! process's CPU time (user + system, every thread: the spill writer's
//! included) over the recording, divided by the calls.

use std::path::Path;
use std::time::Instant;

use scope_profiler::{self as sp, Compression, Options};

use crate::scale::{self, Fields};

/// User + system CPU seconds of the whole process so far.
fn cpu_s() -> f64 {
    // SAFETY: `getrusage` only writes the struct it is given.
    let u = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    s(u.ru_utime) + s(u.ru_stime)
}

/// Child: `calls` calls of the simulation's shape (`scale::mixed`) split
/// over `threads` threads, in a session writing to `dir` with a memory
/// limit of `limit_mib` MiB (0: in memory, warm: the calls are recorded
/// once untimed first, so the timed ones reuse memory). Prints CPU ns per
/// call, wall ns per call, scratch bytes per call and the chunks made.
pub fn child(threads: usize, calls: u64, limit_mib: usize, dir: &Path) {
    let path = dir.join(format!("sustained-{threads}-{}.h5", std::process::id()));
    let per_thread = calls / threads as u64;
    let record = || {
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| scale::mixed(per_thread));
            }
        })
    };
    let options = Options::new().verbose(false);
    let session = if limit_mib == 0 {
        let warmup = sp::setup(options.clone().in_memory()).expect("setup");
        record();
        drop(warmup.finalize().expect("finalize"));
        sp::setup(options.in_memory()).expect("setup")
    } else {
        sp::setup(
            options
                .file_path(&path)
                .compression(Compression::None)
                .memory_limit(limit_mib << 20),
        )
        .expect("setup")
    };
    let (cpu0, t) = (cpu_s(), Instant::now());
    record();
    let (cpu, wall) = (cpu_s() - cpu0, t.elapsed().as_secs_f64());
    let results = session.finalize().expect("finalize");
    let n = per_thread * threads as u64;
    let scratch = results.health().spilled_bytes;
    drop(results);
    let _ = std::fs::remove_file(&path);
    println!(
        "calls={n} cpu_ns={:.3} wall_ns={:.3} scratch_bytes_per_call={:.3}",
        cpu * 1e9 / n as f64,
        wall * 1e9 * threads as f64 / n as f64,
        scratch as f64 / n as f64
    );
}

/// One configuration and its runs.
pub struct Row {
    pub label: &'static str,
    pub threads: usize,
    pub limit_mib: usize,
    pub runs: Vec<Fields>,
}

/// The warm row and the spilling rows, `reps` times each, interleaved.
pub fn run(calls: u64, reps: usize, dir: &Path) -> Vec<Row> {
    let mut rows = vec![
        Row {
            label: "warm memory, in memory",
            threads: 1,
            limit_mib: 0,
            runs: Vec::new(),
        },
        Row {
            label: "sustained, spilling",
            threads: 1,
            limit_mib: 64,
            runs: Vec::new(),
        },
        Row {
            label: "sustained, spilling",
            threads: 4,
            limit_mib: 64,
            runs: Vec::new(),
        },
    ];
    for _ in 0..reps {
        for row in rows.iter_mut() {
            // Warm: as many calls as stay in memory (no spilling) under the
            // default limit, recorded twice.
            let calls = if row.limit_mib == 0 {
                calls.min(4_000_000)
            } else {
                calls
            };
            eprintln!(
                "  {} calls on {} threads, limit {} MiB",
                calls, row.threads, row.limit_mib
            );
            row.runs.push(scale::spawn(&[
                "sustained".into(),
                row.threads.to_string(),
                calls.to_string(),
                row.limit_mib.to_string(),
                dir.display().to_string(),
            ]));
        }
    }
    rows
}
