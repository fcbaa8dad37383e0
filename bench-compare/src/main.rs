//! `compare`: scope-profiler's per-call overhead side by side with its
//! peers, in one run, plus two threads, memory, `finalize` and a file of
//! 100k regions. Prints markdown tables and writes them to
//! `bench-compare/RESULTS.md` with the machine, the load and the command.
//!
//! ```text
//! cargo run --release -p bench-compare --bin compare            # everything
//! cargo run --release -p bench-compare --bin compare -- --quick # a smoke run
//! ```
//!
//! Options: `--calls N` (per variant per round, default 1M), `--rounds N`
//! (15), `--thread-rounds N` (9), `--reps N` (scale repetitions, 3),
//! `--small N` / `--big N` (finalize sizes, 1M / 10M), `--regions N`
//! (100k), `--sustained N` (calls of the spilling rows, 200M), `--skip
//! micro,off,threads,scale,sustained,counters,live,sampling`, `--out PATH`, `--no-write`,
//! `--quick`. `compare one SLUG CALLS` runs one of our variants alone (for
//! `valgrind --tool=callgrind`).

mod call_targets;
mod common;
mod live;
mod micro;
mod ours;
mod peers;
mod report;
mod sampling;
mod scale;
mod sustained;
mod threads;
mod whatif;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The command-line settings.
pub struct Settings {
    pub calls: u64,
    pub rounds: usize,
    pub thread_rounds: usize,
    pub reps: usize,
    pub small: u64,
    pub big: u64,
    pub regions: usize,
    pub sustained_calls: u64,
    pub skip: Vec<String>,
    pub out: Option<PathBuf>,
    pub args: Vec<String>,
}

impl Settings {
    fn parse(args: &[String]) -> Settings {
        let quick = args.iter().any(|a| a == "--quick");
        let num = |flag: &str, default: u64| -> u64 {
            args.iter()
                .position(|a| a == flag)
                .map(|i| {
                    args.get(i + 1)
                        .and_then(|v| v.replace('_', "").parse().ok())
                        .unwrap_or_else(|| panic!("{flag} needs a number"))
                })
                .unwrap_or(default)
        };
        let q = |full: u64, small: u64| if quick { small } else { full };
        let out = if args.iter().any(|a| a == "--no-write") {
            None
        } else {
            Some(
                args.iter()
                    .position(|a| a == "--out")
                    .and_then(|i| args.get(i + 1))
                    .map(PathBuf::from)
                    .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("RESULTS.md")),
            )
        };
        Settings {
            calls: num("--calls", q(1_000_000, 200_000)),
            rounds: num("--rounds", q(15, 5)) as usize,
            thread_rounds: num("--thread-rounds", q(9, 3)) as usize,
            reps: num("--reps", q(3, 1)) as usize,
            small: num("--small", q(1_000_000, 200_000)),
            big: num("--big", q(10_000_000, 2_000_000)),
            regions: num("--regions", q(100_000, 10_000)) as usize,
            sustained_calls: num("--sustained", q(200_000_000, 20_000_000)),
            skip: args
                .iter()
                .position(|a| a == "--skip")
                .and_then(|i| args.get(i + 1))
                .map(|s| s.split(',').map(str::to_owned).collect())
                .unwrap_or_default(),
            out,
            args: args.to_vec(),
        }
    }

    fn skips(&self, section: &str) -> bool {
        self.skip.iter().any(|s| s == section)
    }
}

/// `cargo build --release -p bench-compare ARGS` at low priority in the
/// workspace, with `env` set: another build of this program, made before
/// any timing starts.
pub(crate) fn build_bench(args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Result<(), String> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("no workspace root")?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new("nice")
        .args([
            "-n",
            "10",
            &cargo,
            "build",
            "--release",
            "-p",
            "bench-compare",
        ])
        .args(args)
        .envs(env.iter().copied())
        .current_dir(workspace)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("cargo failed: {status}"));
    }
    Ok(())
}

/// Builds `compare-off` (the runtime's `enabled` feature off) next to this
/// binary and runs it; its lines, by variant.
fn compiled_out(settings: &Settings) -> Result<Vec<(String, scale::Fields)>, String> {
    let features = if cfg!(feature = "macros") {
        "compiled-out,macros"
    } else {
        "compiled-out"
    };
    eprintln!("building compare-off (--no-default-features --features {features})");
    let args = [
        "--bin",
        "compare-off",
        "--no-default-features",
        "--features",
        features,
    ];
    build_bench(&args, &[]).map_err(|e| format!("building compare-off: {e}"))?;
    let stdout = run_sibling("compare-off", settings)?;
    Ok(stdout
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once(' ')?;
            Some((name.to_owned(), scale::parse_fields(rest)))
        })
        .collect())
}

/// Runs the binary `bin` built next to this one with `--calls` and
/// `--rounds` of `settings`; its standard output.
fn run_sibling(bin: &str, settings: &Settings) -> Result<String, String> {
    let exe = std::env::current_exe()
        .map_err(|e| e.to_string())?
        .with_file_name(bin);
    let out = Command::new(&exe)
        .args(["--calls", &settings.calls.to_string()])
        .args(["--rounds", &settings.rounds.to_string()])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{bin} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Builds `compare-counters` (region counters' costs, with
/// `CountingAllocator` as its global allocator) and runs it; its table.
fn counters(settings: &Settings) -> Result<String, String> {
    build_bench(&["--bin", "compare-counters"], &[])
        .map_err(|e| format!("building compare-counters: {e}"))?;
    let stdout = run_sibling("compare-counters", settings)?;
    let table = stdout;
    let peers =
        alloc_peers(settings, &table).unwrap_or_else(|e| format!("\nNo peers' rows: {e}\n"));
    Ok(table + &peers)
}

/// Builds `bench-alloc-peers` (alone: its hotpath has the allocation mode
/// on, which must not reach `compare`'s own hotpath rows) and runs its two
/// binaries, each with the peer's allocator as the global one; a table of
/// their cost per allocation beside ours (the tracked row of `table`).
fn alloc_peers(settings: &Settings, table: &str) -> Result<String, String> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("no workspace root")?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new("nice")
        .args([
            "-n",
            "10",
            &cargo,
            "build",
            "--release",
            "-p",
            "bench-alloc-peers",
        ])
        .current_dir(workspace)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("building bench-alloc-peers: {status}"));
    }
    let run = |bin: &str| -> Result<HashMap<String, String>, String> {
        Ok(run_sibling(bin, settings)?
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect())
    };
    let num = |m: &HashMap<String, String>, k: &str| -> Result<f64, String> {
        m.get(k)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("no {k} in {m:?}"))
    };
    let hotpath = run("alloc-hotpath")?;
    let dhat = run("alloc-dhat")?;
    if num(&dhat, "dhat_blocks")? != num(&dhat, "calls")? {
        return Err(format!("dhat did not count every allocation: {dhat:?}"));
    }
    // Ours, from compare-counters' table: the tracked allocation row.
    let ours = table
        .lines()
        .find(|l| l.contains("tracking on, inside a region"))
        .map(|l| l.split('|').map(str::trim).collect::<Vec<_>>())
        .and_then(|c| Some((c.get(2)?.parse::<f64>().ok()?, c.get(3)?.to_string())))
        .ok_or("no tracked allocation row in compare-counters' table")?;
    let mut out = String::from(
        "\nAllocation tracking beside the peers that count allocations, each in a process \
         whose global allocator is its own, the same alloc+free of 64 bytes per call, inside \
         one open measured scope; **over `System`** subtracts `System` directly, timed in the \
         same process (dhat: a tenth of the calls).\n\n\
         | allocation tracking on | ns/call | over `System` |\n| --- | ---: | ---: |\n",
    );
    out += &format!(
        "| ours: `CountingAllocator`, `track_allocations(true)`, inside a region | {:.1} | {} |\n",
        ours.0, ours.1
    );
    for (label, m) in [
        (
            "hotpath 0.30, `hotpath-alloc`: its `CountingAllocator`, inside a `#[hotpath::measure]` fn",
            &hotpath,
        ),
        ("dhat 0.3: `dhat::Alloc`, a heap `Profiler` running", &dhat),
    ] {
        let (t, sys) = (num(m, "tracked_ns")?, num(m, "system_ns")?);
        out += &format!("| {label} | {t:.1} | {:+.1} |\n", t - sys);
    }
    out += &format!(
        "\nhotpath charged {} to its measured functions (its allocation mode was on); dhat \
         counted {} blocks for {} calls.\n",
        hotpath
            .get("hotpath_total_allocated")
            .map_or("nothing", |v| v.as_str())
            .replace('_', " "),
        dhat["dhat_blocks"],
        dhat["calls"]
    );
    Ok(out)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("finalize") => {
            let events = args[1].parse().expect("events");
            let limit = args
                .get(4)
                .map_or(0, |l| l.parse().expect("memory limit, MiB"));
            scale::child_finalize(events, &args[2], Path::new(&args[3]), limit);
            return;
        }
        Some("one") => {
            let calls = args.get(2).map_or(1_000_000, |c| c.parse().expect("calls"));
            micro::run_one(&args[1], calls);
            return;
        }
        Some("sustained") => {
            sustained::child(
                args[1].parse().expect("threads"),
                args[2].parse().expect("calls"),
                args[3].parse().expect("memory limit, MiB"),
                Path::new(&args[4]),
            );
            return;
        }
        Some("disk") => {
            scale::child_disk(args[1].parse().expect("bytes"), Path::new(&args[2]));
            return;
        }
        Some("regions") => {
            let n = args[1].parse().expect("regions");
            scale::child_regions(n, &args[2], Path::new(&args[3]));
            return;
        }
        _ => {}
    }
    if !cfg!(feature = "enabled") {
        eprintln!("compare needs the runtime's `enabled` feature (the default)");
        std::process::exit(2);
    }
    let settings = Settings::parse(&args);
    let tmp = std::env::temp_dir().join(format!("bench-compare-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("temp dir");
    let mut report = report::Report::new(&settings);
    let fs = Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(&tmp)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    report.scratch = format!("`{}` ({fs})", std::env::temp_dir().display());

    // The compiled-out build first: its cargo build must not overlap the timing.
    if !settings.skips("off") {
        report.compiled_out = Some(compiled_out(&settings));
    }
    if !settings.skips("micro") {
        micro::build_portable();
        eprintln!(
            "one thread: {} rounds x {} calls per variant",
            settings.rounds, settings.calls
        );
        report.micro = Some(micro::run(settings.calls, settings.rounds, &tmp));
    }
    if !settings.skips("threads") {
        eprintln!("two threads: {} rounds", settings.thread_rounds);
        report.threads = Some(threads::run(settings.calls, settings.thread_rounds));
    }
    if !settings.skips("scale") {
        eprintln!(
            "memory, finalize and {} regions, {} reps",
            settings.regions, settings.reps
        );
        report.scale = Some(scale::run(
            settings.reps,
            settings.big,
            settings.small,
            settings.regions,
            &tmp,
        ));
    }
    if !settings.skips("sustained") {
        eprintln!(
            "recording while spilling: {} calls, {} reps",
            settings.sustained_calls, settings.reps
        );
        report.sustained = Some(sustained::run(
            settings.sustained_calls,
            settings.reps,
            &tmp,
        ));
    }
    if !settings.skips("live") {
        let calls = settings.calls * 5;
        eprintln!(
            "the live server: {} rounds x {calls} calls, then 8 threads for 5 s",
            settings.rounds
        );
        report.live = Some(live::run(calls, settings.rounds));
    }
    if !settings.skips("sampling") {
        // Rounds of ~0.7 s: the kernel's per-sample cost varies from round
        // to round on a VM, and a longer round averages it.
        let calls = settings.calls;
        eprintln!(
            "sampling: {} rounds x 4 threads x {calls} calls",
            settings.rounds
        );
        report.sampling = Some(sampling::run(calls, settings.rounds, &tmp));
    }
    if !settings.skips("counters") {
        eprintln!("region counters: compare-counters");
        report.counters = Some(counters(&settings));
    }
    let _ = std::fs::remove_dir_all(&tmp);
    report.finish();
    let text = report.render();
    println!("{text}");
    if let Some(out) = &settings.out {
        std::fs::write(out, &text).unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
        eprintln!("wrote {}", out.display());
    }
}
