//! Helpers shared by the integration tests.
//!
//! A profiling session is process-wide, and the tests of one binary run on
//! parallel threads: every test that sets up a session holds [`serial`].
//!
//! Besides sessions and temporary directories: reading profiles
//! ([`calls_per_region`], [`event_range`], [`event_of_call`]), running named
//! threads ([`on_named_threads`]), and the Python package's reader
//! ([`reader_python`], [`python_names_and_counts`]); [`nesting`]: whether
//! every call of a written profile lies within its parent.

use scope_profiler_core::internal::options::read;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Display;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};

use scope_profiler::{self as sp, Events, Options, Profile, RegionRow};

pub mod nesting;
pub mod tmux;

static SERIAL: Mutex<()> = Mutex::new(());

/// Serializes the tests that use the process-wide session. A test that
/// panicked while holding it does not poison the others.
pub fn serial() -> MutexGuard<'static, ()> {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // A previous test may have failed mid-session: start clean.
    let _ = scope_profiler::finalize();
    guard
}

/// Holds the process-wide session for one test: [`serial`], then an
/// in-memory session that prints nothing.
pub fn start_in_memory() -> MutexGuard<'static, ()> {
    let guard = serial();
    sp::setup(Options::new().in_memory().verbose(false)).expect("setup");
    guard
}

/// A fresh temporary directory for one test.
pub fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sp-test-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

/// A fresh temporary directory for one test's profiles built by hand (calls
/// made up, not recorded, some on purpose outside their parents): marked
/// `NOT-RECORDED`, so `every_file_nests` does not check them.
pub fn hand_built_dir(test: &str) -> PathBuf {
    let dir = temp_dir(test);
    std::fs::write(dir.join("NOT-RECORDED"), "profiles built by hand\n").expect("mark dir");
    dir
}

/// The names in `dir`, sorted.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("list dir")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

// ---------------------------------------------------------------------------
// Reading profiles
// ---------------------------------------------------------------------------

/// Calls per region name.
pub fn calls_per_region(p: &Profile) -> BTreeMap<String, u64> {
    p.rows
        .iter()
        .map(|r| (p.region_names[r.region_id as usize].clone(), r.event_count))
        .collect()
}

/// `(name, calls)` pairs as a map, to compare with [`calls_per_region`].
pub fn count_map(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(n, c)| (n.to_string(), *c)).collect()
}

/// The positions of a row's events in [`Profile::events`].
pub fn event_range(row: &RegionRow) -> Range<usize> {
    row.events()
}

/// Call id -> event position (a repeated id keeps its last position: callers
/// check that the map has one entry per event).
pub fn event_of_call(events: &Events) -> HashMap<i64, usize> {
    events
        .call_ids
        .iter()
        .enumerate()
        .map(|(i, &c)| (c, i))
        .collect()
}

// ---------------------------------------------------------------------------
// Threads
// ---------------------------------------------------------------------------

/// Runs `work(k)` for `k` in `0..threads`, each on its own scoped thread
/// named `<prefix>-<k>` (with a stack of `stack_size` bytes, if given), and
/// returns the results in `k` order.
pub fn on_named_threads<T: Send>(
    prefix: &str,
    threads: usize,
    stack_size: Option<usize>,
    work: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                let mut builder = std::thread::Builder::new().name(format!("{prefix}-{k}"));
                if let Some(bytes) = stack_size {
                    builder = builder.stack_size(bytes);
                }
                builder.spawn_scoped(scope, move || work(k)).unwrap()
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

// ---------------------------------------------------------------------------
// Processes and the Python package's reader
// ---------------------------------------------------------------------------

/// Runs `command` (`run`: the panic message if it cannot start) and returns
/// its output; fails with `"{failed}:\n{stderr}"` unless it exits with 0.
#[track_caller]
pub fn output_ok(command: &mut Command, run: &str, failed: impl Display) -> Output {
    let out = command.output().expect(run);
    assert!(
        out.status.success(),
        "{failed}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The Python package the interop venv holds.
pub const PYTHON_PACKAGE: &str = "scope-profiler==0.7.5";

/// The python of the venv `interop-venv` under `target_tmpdir` (pass the
/// test's `env!("CARGO_TARGET_TMPDIR")`), once it imports `scope_profiler`.
/// With `make`, a missing venv is made first, with [`PYTHON_PACKAGE`] from
/// PyPI; without, a missing one is an `Err`. The `Err` says why.
pub fn reader_python(target_tmpdir: impl AsRef<Path>, make: bool) -> Result<PathBuf, String> {
    let venv = target_tmpdir.as_ref().join("interop-venv");
    let python = venv.join("bin/python");
    let ready = |py: &Path| {
        Command::new(py)
            .args(["-c", "import scope_profiler"])
            .status()
            .is_ok_and(|s| s.success())
    };
    // A venv's scripts name its python by the path it was made at: a venv
    // moved with its target directory imports fine, but its
    // `scope-profiler` command cannot start. Such a venv is made again.
    let in_place = || {
        std::fs::read_to_string(venv.join("bin/scope-profiler"))
            .is_ok_and(|t| t.lines().next() == Some(&format!("#!{}", python.display())))
    };
    if python.exists() && ready(&python) && in_place() {
        return Ok(python);
    }
    if !make {
        return Err("no interop venv (the interop test makes it)".into());
    }
    let made = Command::new("python3")
        .args(["-m", "venv", "--clear"])
        .arg(&venv)
        .status();
    if !made.is_ok_and(|s| s.success()) {
        return Err("`python3 -m venv` failed (install python3 and python3-venv)".into());
    }
    let pip = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            PYTHON_PACKAGE,
        ])
        .status();
    if !pip.is_ok_and(|s| s.success()) || !ready(&python) {
        return Err(format!("pip could not install {PYTHON_PACKAGE}"));
    }
    Ok(python)
}

/// [`reader_python`] for the Python part of a test: the interop venv, made
/// if missing (whichever test runs first). If it cannot be had, see
/// [`prerequisite_missing`]: `None` with a loud SKIP, a failure under CI.
pub fn made_reader_python(target_tmpdir: impl AsRef<Path>) -> Option<PathBuf> {
    reader_python(target_tmpdir, true)
        .map_err(|why| prerequisite_missing(&format!("the Python part: {why}")))
        .ok()
}

/// A test cannot run what it means to test here. Under `CI=true` that is a
/// failure (a test that passes without testing is a defect); elsewhere the
/// test is skipped with a SKIP line written straight to the terminal's
/// stderr, past the test harness's output capture.
pub fn prerequisite_missing(why: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("a prerequisite is missing under CI=true: {why}");
    }
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIP (not under CI): {why}");
}

fn hex_decode(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect()
}

/// Region names (in the reader's order) and call counts of `file` as the
/// Python package reads them: `reader` is the Python expression that reads
/// `sys.argv[1]` (with `sys` and `scope_profiler` imported), e.g.
/// `scope_profiler.read_h5(sys.argv[1])`. When Python fails, the message is
/// `"{failed} on {file}:\n{stderr}"`.
pub fn python_names_and_counts(
    python: &Path,
    reader: &str,
    file: &Path,
    failed: &str,
) -> Vec<(String, u64)> {
    let script = format!(
        "import sys, scope_profiler\n\
         r = {reader}\n\
         for n in r.region_names:\n    print(n.encode('utf-8').hex(), r[n].num_calls)\n"
    );
    let out = output_ok(
        Command::new(python).args(["-c", &script]).arg(file),
        "run python",
        format_args!("{failed} on {}", file.display()),
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let (hex, calls) = line.split_once(' ').expect("hex count");
            let name = String::from_utf8(hex_decode(hex)).expect("UTF-8 name");
            (name, calls.parse().expect("count"))
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------

/// The settings `options` shares with the Python package's `ProfilingConfig`,
/// one `key=value` line each, in the Python names and spellings (`None` for
/// an unset value; the compression as `(name, level)`), so that both sides
/// print comparable lines.
pub fn describe_options(options: &Options) -> String {
    use scope_profiler::Compression;
    let (compression, level) = match read::compression(options) {
        Compression::Auto => ("auto".to_owned(), "None".to_owned()),
        Compression::None => ("none".to_owned(), "None".to_owned()),
        Compression::Gzip(level) => ("gzip".to_owned(), level.to_string()),
    };
    let file = read::file_path(options).map_or_else(String::new, |p| p.display().to_string());
    let lines = [
        format!("file_path={file}"),
        format!("label={}", read::label(options)),
        format!("deactivate_profiling={}", read::deactivate(options)),
        format!(
            "deactivate_file_output={}",
            read::file_path(options).is_none()
        ),
        format!("recursive_profile={}", read::trace_all(options)),
        format!(
            "capture_region_source={}",
            read::capture_region_source(options)
        ),
        format!(
            "metadata_detail={}",
            read::metadata_detail(options).as_str()
        ),
        format!("aggregation_mode={}", read::aggregation(options)),
        format!("hdf5_compression={compression}"),
        format!("hdf5_compression_level={level}"),
        format!(
            "hdf5_chunk_size={}",
            read::chunk_size(options).map_or_else(|| "None".to_owned(), |n| n.to_string())
        ),
        format!("enable_tags={}", read::enable_tags(options).join(",")),
    ];
    lines.join("\n")
}

/// The workspace README's Rust examples, compiled and run as doc tests so
/// that they stay true.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// Caps this process's address space at `bytes` (RLIMIT_AS, Linux), so that
/// an allocation past it fails (an abort for Rust, an error for C) instead
/// of eating the machine's memory: the hostile-input tests run their
/// readers under it. Call it in a child process (the limit is the whole
/// process's).
///
/// ```no_run
/// integration_tests::limit_address_space(2 << 30).expect("RLIMIT_AS");
/// let mut too_much: Vec<u8> = Vec::new();
/// assert!(too_much.try_reserve(4 << 30).is_err());
/// ```
pub fn limit_address_space(bytes: u64) -> Result<(), String> {
    scope_profiler_reader::ProfileReader::limit_address_space(bytes)
        .map_err(|e| format!("RLIMIT_AS: {e}"))?;
    // The path meant: an allocation past the limit fails.
    let mut past: Vec<u8> = Vec::new();
    if past.try_reserve(bytes as usize).is_ok() {
        return Err(format!(
            "an allocation of {bytes} bytes succeeded under the limit"
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Nesting
// ---------------------------------------------------------------------------

/// [`nesting::check_reader`] on a profile in memory (what `finalize`
/// returns, or a file read back).
pub fn profile_nesting(p: &Profile) -> nesting::NestingReport {
    let reader = scope_profiler_reader::ProfileReader::from_profile(p.clone()).expect("a reader");
    nesting::check_reader(&reader).expect("the events")
}

// Busy functions for the sampling tests (tests/sampling.rs, tests/interop.rs):
// each region's samples must fall in its own.

/// The calling thread's CPU time.
pub fn cpu_time() -> std::time::Duration {
    std::time::Duration::from_nanos(
        scope_profiler_core::internal::platform::thread_cpu_ns()
            .expect("a thread CPU clock on Linux") as u64,
    )
}

/// Spins for `ms` of the thread's CPU time in its own code: the clock is
/// read once per 100,000 steps of plain arithmetic (no call, even
/// unoptimized), so nearly every sample falls here, not in the clock or a
/// callee.
#[inline(never)]
pub fn busy_alpha(ms: u64) -> u64 {
    let until = cpu_time() + std::time::Duration::from_millis(ms);
    let mut x = 1u64;
    while cpu_time() < until {
        let mut i = 0u32;
        while i < 100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            i += 1;
        }
    }
    std::hint::black_box(x)
}

/// As [`busy_alpha`], another function.
#[inline(never)]
pub fn busy_beta(ms: u64) -> u64 {
    let until = cpu_time() + std::time::Duration::from_millis(ms);
    let mut x = 7u64;
    while cpu_time() < until {
        let mut i = 0u32;
        while i < 100_000 {
            x ^= x << 11;
            x ^= x >> 9;
            x ^= x << 23;
            i += 1;
        }
    }
    std::hint::black_box(x)
}
