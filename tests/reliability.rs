//! Reliability under crashes, full disks, load and misuse: what the issue
//! "Crash-safe and fail-early output" and "Threads, panics and misuse, under
//! load" promise, end to end through files.
//!
//! What a test cannot do to its own process (SIGKILL, `ulimit -f`, a full
//! disk, dropping privileges) it does to the helper binary `sp-child`
//! (`tests/child/main.rs`). Everything else records in this process, writes
//! a file and reads it back with [`sp::read_profile`], then checks every call
//! with [`check_calls`]: each call complete, each parent on its own thread and
//! enclosing its children in time, exclusive totals and statistics exact.
//!
//! The heaviest test, `sixteen_threads_times_a_million_nested_calls` (16M
//! calls), takes 17-21 s in a debug build on 2 cores.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use integration_tests::{
    calls_per_region, count_map, event_range, listing, made_reader_python, on_named_threads,
    prerequisite_missing, python_names_and_counts, serial, temp_dir,
};
use scope_profiler::{self as sp, Error, Options, Profile};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

const NONE: u32 = u32::MAX;

/// A file session that prints nothing.
fn to_file(path: &Path) -> Options {
    Options::new().file_path(path).verbose(false)
}

fn child() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sp-child"))
}

/// Runs `sp-child` to completion; returns (exit code, stdout, stderr).
fn run_child(args: &[&str]) -> (Option<i32>, String, String) {
    let out = child().args(args).output().expect("run sp-child");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Exit status of a check the child cannot run in this environment.
const UNSUPPORTED: i32 = 77;

fn s(path: &Path) -> &str {
    path.to_str().expect("UTF-8 temp path")
}

fn expect_counts(p: &Profile, expected: &[(&str, u64)]) {
    assert_eq!(calls_per_region(p), count_map(expected), "calls per region");
}

/// Every call of a profile, checked and indexed by event position.
struct Calls<'a> {
    p: &'a Profile,
    /// Index into `p.region_names`, per event.
    region: Vec<u32>,
    /// Event position of the parent call, [`NONE`] for a root.
    parent: Vec<u32>,
}

impl Calls<'_> {
    fn name(&self, i: usize) -> &str {
        &self.p.region_names[self.region[i] as usize]
    }

    fn parent_name(&self, i: usize) -> Option<&str> {
        match self.parent[i] {
            NONE => None,
            p => Some(self.name(p as usize)),
        }
    }

    fn end(&self, i: usize) -> i64 {
        self.p.events.start_ns[i] + self.p.events.durations[i]
    }

    fn thread_name(&self, i: usize) -> &str {
        &self.p.threads[self.p.events.thread_ids[i] as usize].name
    }

    /// Event positions of the calls of region `name`.
    fn of(&self, name: &str) -> impl Iterator<Item = usize> + '_ {
        let row = self
            .p
            .rows
            .iter()
            .find(|r| self.p.region_names[r.region_id as usize] == name);
        row.map_or(0..0, event_range)
    }

    /// Checks that every call of `child` has a parent of region `parent`
    /// (`None`: is a root).
    fn expect_parent(&self, child: &str, parent: Option<&str>) {
        let mut n = 0;
        for i in self.of(child) {
            assert_eq!(self.parent_name(i), parent, "parent of a {child:?} call");
            n += 1;
        }
        assert!(n > 0, "no call of {child:?}");
    }
}

/// Checks what must hold for every profile and indexes its calls:
/// - every event column has one value per event; rows are disjoint, cover
///   every event, and name known regions; thread ids are in the thread table;
/// - call ids are unique and non-negative; every parent id names a call of
///   the same thread with a smaller id;
/// - durations are non-negative and every call lies within its parent;
/// - per row: `exclusive` = Σ durations − Σ durations of the direct
///   children, and `summary_statistics` total/min/max/first/last match.
fn check_calls(p: &Profile) -> Calls<'_> {
    let ev = &p.events;
    let n = ev.len();
    for (name, len) in [
        ("durations", ev.durations.len()),
        ("call_ids", ev.call_ids.len()),
        ("parent_ids", ev.parent_ids.len()),
        ("thread_ids", ev.thread_ids.len()),
    ] {
        assert_eq!(len, n, "events.{name}");
    }
    let mut region = vec![NONE; n];
    for row in &p.rows {
        assert!((row.region_id as usize) < p.region_names.len(), "{row:?}");
        assert!(row.event_count > 0, "a row without calls: {row:?}");
        for slot in &mut region[event_range(row)] {
            assert_eq!(*slot, NONE, "rows overlap");
            *slot = row.region_id;
        }
    }
    assert!(
        region.iter().all(|&r| r != NONE),
        "an event outside every row"
    );
    let threads = p.threads.len() as i64;
    assert!(
        ev.thread_ids.iter().all(|&t| (0..threads).contains(&t)),
        "thread ids outside the thread table of {threads}"
    );

    // Call id -> event position, dense when ids are (they are 0..n here).
    let max_id = ev.call_ids.iter().copied().max().unwrap_or(-1);
    assert!(ev.call_ids.iter().all(|&c| c >= 0), "negative call id");
    assert!(
        max_id < 4 * n as i64 + 16,
        "call ids up to {max_id} for {n} calls"
    );
    let mut position = vec![NONE; (max_id + 1) as usize];
    for (i, &id) in ev.call_ids.iter().enumerate() {
        assert_eq!(position[id as usize], NONE, "call id {id} twice");
        position[id as usize] = i as u32;
    }

    let mut parent = vec![NONE; n];
    let mut children_total = vec![0i64; n];
    for (i, (&d, &pid)) in ev.durations.iter().zip(&ev.parent_ids).enumerate() {
        assert!(d >= 0, "negative duration {d} (event {i})");
        if pid == -1 {
            continue;
        }
        assert!(
            (0..=max_id).contains(&pid) && position[pid as usize] != NONE,
            "event {i}: parent id {pid} is no call"
        );
        let j = position[pid as usize] as usize;
        assert!(pid < ev.call_ids[i], "parent id {pid} >= child id");
        assert_eq!(
            ev.thread_ids[j], ev.thread_ids[i],
            "a parent on another thread (event {i})"
        );
        let (cs, ce) = (ev.start_ns[i], ev.start_ns[i] + d);
        let (ps, pe) = (ev.start_ns[j], ev.start_ns[j] + ev.durations[j]);
        assert!(
            ps <= cs && ce <= pe,
            "event {i} [{cs}, {ce}] is not within its parent [{ps}, {pe}]"
        );
        parent[i] = j as u32;
        children_total[j] += d;
    }

    for row in &p.rows {
        let range = event_range(row);
        let durations = &ev.durations[range.clone()];
        let total: i64 = durations.iter().sum();
        let exclusive: i64 = total - children_total[range.clone()].iter().sum::<i64>();
        let name = &p.region_names[row.region_id as usize];
        assert_eq!(row.exclusive, exclusive, "exclusive total of {name:?}");
        let st = &row.stats;
        assert_eq!(st.total, total, "stats.total of {name:?}");
        assert_eq!(st.minimum, *durations.iter().min().unwrap(), "{name:?}");
        assert_eq!(st.maximum, *durations.iter().max().unwrap(), "{name:?}");
        assert_eq!(st.first, durations[0], "stats.first of {name:?}");
        assert_eq!(st.last, durations[durations.len() - 1], "{name:?}");
    }
    Calls { p, region, parent }
}

/// A panic payload that the quiet hook does not print.
struct QuietPanic;

/// Installs (once) a panic hook that stays silent for [`QuietPanic`].
fn quiet_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<QuietPanic>().is_none() {
                previous(info);
            }
        }));
    });
}

// ---------------------------------------------------------------------------
// Crash safety: kill -9, file size limit, full disk
// ---------------------------------------------------------------------------

/// Calls recorded by the child whose finalize gets killed: enough for the
/// write to take a while (about a second or more).
fn calls_to_kill() -> u64 {
    if cfg!(debug_assertions) {
        2_000_000
    } else {
        5_000_000
    }
}

/// Writes the "previous" profile at `path` with a quick child run.
fn write_previous(path: &Path) -> (Vec<u8>, Profile) {
    let (code, _, err) = run_child(&["record-and-finalize", s(path), "1000"]);
    assert_eq!(code, Some(0), "the quick child run failed: {err}");
    (
        std::fs::read(path).unwrap(),
        sp::read_profile(path).unwrap(),
    )
}

/// Starts `record-and-finalize PATH N`, waits for "finalizing", and returns
/// the child with the time the line came.
#[allow(clippy::zombie_processes)] // the caller waits for the child it gets
fn start_finalizing_child(
    path: &Path,
    n: u64,
    memory_limit: Option<u64>,
) -> (std::process::Child, Instant, impl BufRead) {
    let mut args = vec![
        "record-and-finalize".to_owned(),
        s(path).to_owned(),
        n.to_string(),
    ];
    args.extend(memory_limit.map(|l| l.to_string()));
    let mut c = child()
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn sp-child");
    let mut out = BufReader::new(c.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        if out.read_line(&mut line).unwrap_or(0) == 0 {
            let status = c.wait().unwrap();
            panic!("sp-child ended ({status}) before finalizing");
        }
        if line.trim() == "finalizing" {
            return (c, Instant::now(), out);
        }
    }
}

#[test]
fn kill_9_during_finalize_leaves_the_previous_file_intact() {
    let _s = serial(); // no HDF5 file of this process is open while children start
    let dir = temp_dir("kill9");
    let path = dir.join("victim.h5");
    let n = calls_to_kill();
    let expected_new = n.div_ceil(4) * 4;

    // Calibrate: how long an undisturbed finalize takes here.
    write_previous(&path);
    let (mut c, started, mut out) = start_finalizing_child(&path, n, None);
    let mut line = String::new();
    while line.trim() != "done" {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "the child ended before done"
        );
    }
    let finalize_time = started.elapsed();
    let status = c.wait().unwrap();
    assert!(status.success(), "undisturbed child: {status}");
    assert_eq!(
        listing(&dir),
        ["victim.h5"],
        "a clean run leaves only its file"
    );
    println!("an undisturbed finalize of {n} calls takes {finalize_time:?}");

    // Kill at points spread over the write: assembly, HDF5 writing, fsync,
    // rename; some runs spill to a scratch file first (a 4 MiB memory limit),
    // which must not outlive the process either.
    let mut intact = 0;
    for (percent, memory_limit) in [
        (0u32, None),
        (5, None),
        (15, Some(4 << 20)),
        (30, None),
        (50, Some(4 << 20)),
        (70, None),
        (90, None),
    ] {
        let (before_bytes, before) = write_previous(&path);
        let (mut c, started, _out) = start_finalizing_child(&path, n, memory_limit);
        let pid = c.id();
        let delay = finalize_time * percent / 100;
        std::thread::sleep(delay.saturating_sub(started.elapsed()));
        c.kill().unwrap();
        let status = c.wait().unwrap();
        let killed = std::os::unix::process::ExitStatusExt::signal(&status) == Some(9);

        // The target is the previous file, or (killed after the rename) the
        // complete new one: never a partial file.
        let now = sp::read_profile(&path).expect("the target is readable after kill -9");
        let outcome = if std::fs::read(&path).unwrap() == before_bytes {
            assert_eq!(now, before);
            "previous file intact"
        } else {
            assert_eq!(
                now.events.len() as u64,
                expected_new,
                "the target is neither the previous file nor the complete new one"
            );
            "complete new file (killed after the rename)"
        };
        if killed && outcome.starts_with("previous") {
            intact += 1;
        }

        // At most one leftover: the killed writer's own temporary file.
        let temp_prefix = format!(".victim.h5.tmp{pid}-");
        let leftovers: Vec<String> = listing(&dir)
            .into_iter()
            .filter(|name| name != "victim.h5")
            .collect();
        assert!(
            leftovers.len() <= 1 && leftovers.iter().all(|l| l.starts_with(&temp_prefix)),
            "after kill -9 at {percent}%: unexpected files {leftovers:?}"
        );
        if !killed {
            assert!(leftovers.is_empty(), "a clean exit left {leftovers:?}");
        }
        println!(
            "kill -9 at {percent}% ({delay:?}{}): {}, {outcome}, left {leftovers:?}",
            if memory_limit.is_some() {
                ", spilling"
            } else {
                ""
            },
            if killed {
                "killed"
            } else {
                "had already finished"
            }
        );
        for l in leftovers {
            std::fs::remove_file(dir.join(l)).unwrap();
        }
    }
    assert!(
        intact >= 2,
        "only {intact} kills landed before the rename: raise calls_to_kill()"
    );
}

#[test]
fn a_file_size_limit_during_finalize_is_an_error_and_loses_nothing() {
    let _s = serial(); // no HDF5 file of this process is open while children start
    // Compression off: 100k calls are about 4 MB of columns.
    for limit in [0u64, 4 << 10, 64 << 10, 1 << 20] {
        let dir = temp_dir(&format!("fsize-{limit}"));
        let path = dir.join("out.h5");
        let other = dir.join("other.h5");
        write_previous(&path);
        let (code, out, err) = run_child(&[
            "fsize-limit",
            s(&path),
            s(&other),
            "100000",
            &limit.to_string(),
        ]);
        println!("limit {limit}: {}", out.trim());
        assert_eq!(code, Some(0), "RLIMIT_FSIZE={limit}: {err}\n{out}");
        assert!(out.contains("finalize failed as expected"), "{out}");
        assert_eq!(listing(&dir), ["other.h5", "out.h5"]);
    }
}

/// Past the placement budget with spilled records, the placing walk's
/// scratch writes fail while the walk that decodes the spilled blocks still
/// has blocks to hand it: finalize is an error, not a wait for a walk that
/// has stopped taking blocks (a hang before the fix).
#[test]
fn a_file_size_limit_while_placing_spilled_calls_is_an_error_not_a_hang() {
    let _s = serial(); // no HDF5 file of this process is open while children start
    let dir = temp_dir("fsize-spilled");
    let path = dir.join("out.h5");
    let other = dir.join("other.h5");
    write_previous(&path);
    // 2M calls: a few MB spilled, about 12 MB of placed calls in scratch.
    let (code, out, err) = run_child_within(
        300,
        &[
            "fsize-limit-spilled",
            s(&path),
            s(&other),
            "2000000",
            &(6u64 << 20).to_string(),
        ],
    );
    println!("{}", out.trim());
    assert_eq!(code, Some(0), "{err}\n{out}");
    assert!(out.contains("finalize failed as expected"), "{out}");
    assert_eq!(listing(&dir), ["other.h5", "out.h5"]);
}

#[test]
fn a_full_disk_during_finalize_is_an_error_and_loses_nothing() {
    let _s = serial(); // no HDF5 file of this process is open while children start
    let dir = temp_dir("disk-full");
    let (code, out, err) = run_child(&["disk-full", s(&dir), "100000"]);
    if code == Some(UNSUPPORTED) {
        return prerequisite_missing(&format!("no private tmpfs mount here: {}", err.trim()));
    }
    println!("{}", out.trim());
    assert_eq!(code, Some(0), "{err}\n{out}");
    // Seen from here, the tmpfs is gone; the rescued file is complete.
    let rescued = sp::read_profile(dir.join("rescued.h5")).unwrap();
    assert_eq!(rescued.events.len(), 100_000);
    assert_eq!(listing(&dir), ["full", "rescued.h5"]);
    assert!(listing(&dir.join("full")).is_empty());
}

/// A thread that cannot open its perf group (no file descriptor left) is
/// said once on stderr, named with the errno in `health()` and in the
/// file's metadata: its zero perf counts are never silent (issue 39 item 4).
#[test]
#[cfg(target_os = "linux")]
fn a_thread_without_its_perf_group_is_named_not_counted_as_zero() {
    let _s = serial();
    let dir = temp_dir("perf-fd-limit");
    let (code, out, err) = run_child(&["perf-fd-limit", s(&dir)]);
    if cfg!(scope_profiler_portable) {
        // The std-only platform code refuses perf events: what it tests there.
        assert_eq!(code, Some(UNSUPPORTED), "{err}\n{out}");
        assert!(out.contains("Linux only"), "{out}");
        return;
    }
    if code == Some(UNSUPPORTED) {
        return prerequisite_missing(&format!("perf software events: {}", out.trim()));
    }
    println!("{}", out.trim());
    assert_eq!(code, Some(0), "{err}\n{out}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("no-fd-left")).collect();
    assert_eq!(warnings.len(), 1, "one warning for the thread:\n{err}");
    assert!(
        warnings[0].contains("warning") && warnings[0].contains("os error 24"),
        "{err}"
    );
    assert!(!err.contains("with-fds"), "{err}");
}

// ---------------------------------------------------------------------------
// Failing early, naming the path
// ---------------------------------------------------------------------------

#[test]
fn setup_and_finalize_to_refuse_unusable_paths_naming_them() {
    let _s = serial();
    let dir = temp_dir("unusable");
    let file = dir.join("plain.txt");
    std::fs::write(&file, b"not a directory").unwrap();
    std::fs::create_dir(dir.join("sub")).unwrap();
    std::os::unix::fs::symlink(dir.join("sub"), dir.join("link-to-dir.h5")).unwrap();
    std::os::unix::fs::symlink(dir.join("nowhere"), dir.join("dangling")).unwrap();
    // (runtime.rs covers a missing directory, a directory and /proc.)
    let cases: Vec<(PathBuf, &str)> = vec![
        (file.join("x.h5"), "a regular file as the directory"),
        (dir.join("link-to-dir.h5"), "a symlink to a directory"),
        (
            dir.join("dangling/x.h5"),
            "a directory through a dangling symlink",
        ),
        (PathBuf::from(""), "the empty path"),
    ];
    for (path, what) in &cases {
        let err = sp::setup(to_file(path)).expect_err(what);
        assert!(matches!(err, Error::InvalidPath { .. }), "{what}: {err:?}");
        let text = err.to_string();
        assert!(text.contains(&path.display().to_string()), "{what}: {text}");
        assert!(matches!(sp::finalize(), Err(Error::NotActive)), "{what}");
    }

    // finalize_to checks the same way, and the session survives each refusal.
    let run = sp::setup(to_file(&dir.join("good.h5"))).unwrap();
    sp::region("kept").run(|| ());
    for (path, what) in cases.iter().map(|(p, w)| (p.clone(), *w)).chain([
        (dir.clone(), "a directory"),
        (dir.join("no/such/x.h5"), "a missing directory"),
    ]) {
        let err = run.finalize_to(&path).expect_err(what);
        let text = err.to_string();
        assert!(text.contains(&path.display().to_string()), "{what}: {text}");
        sp::region("kept").run(|| ());
    }
    assert_eq!(sp::get_region("kept").unwrap().num_calls(), 7);
    sp::finalize().unwrap();
    expect_counts(
        &sp::read_profile(dir.join("good.h5")).unwrap(),
        &[("kept", 7)],
    );
    assert_eq!(
        listing(&dir),
        ["dangling", "good.h5", "link-to-dir.h5", "plain.txt", "sub"],
        "no probe or temporary file is left"
    );
}

#[test]
fn a_path_ending_in_a_slash_is_refused_at_setup() {
    let _s = serial();
    let dir = temp_dir("trailing-slash");
    let path = PathBuf::from(format!("{}/x.h5/", dir.display()));
    let outcome = sp::setup(to_file(&path));
    if let Ok(run) = &outcome {
        let _ = run.finalize_to(dir.join("rescued.h5"));
    }
    let err = outcome.expect_err("a path ending in '/' names no file");
    assert!(matches!(err, Error::InvalidPath { .. }), "{err:?}");
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
}

#[test]
fn a_directory_without_write_permission_is_refused_naming_the_path() {
    let _s = serial(); // no HDF5 file of this process is open while children start
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("no-permission");
    let locked = dir.join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    // Root writes anywhere: the child drops to `nobody` first.
    let (code, out, err) = run_child(&["no-permission", s(&locked)]);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    if code == Some(UNSUPPORTED) {
        return prerequisite_missing(err.trim());
    }
    assert_eq!(code, Some(0), "{err}\n{out}");
}

// ---------------------------------------------------------------------------
// Threads under load
// ---------------------------------------------------------------------------

/// `threads` threads of `calls` nested calls each:
/// `load/outer { load/t<k> { load/leaf, load/leaf } }`, with `outer` and
/// `leaf` shared by every thread. Half the threads start at once; each of the
/// others starts when one of the first half exits.
fn threads_under_load(test: &str, threads: usize, calls: u64) {
    let _s = serial();
    let path = temp_dir(test).join("load.h5");
    assert_eq!(calls % 4, 0);
    let iterations = calls / 4;
    sp::setup(to_file(&path)).unwrap();
    let t0 = Instant::now();
    let work = move |k: usize| {
        move || {
            let own = sp::region(&format!("load/t{k}"));
            for _ in 0..iterations {
                sp::scope!("load/outer");
                let _own = own.enter();
                for _ in 0..2 {
                    sp::scope!("load/leaf");
                }
            }
        }
    };
    let spawn = |k: usize| {
        std::thread::Builder::new()
            .name(format!("load-{k}"))
            .spawn(work(k))
            .unwrap()
    };
    let first = threads / 2;
    let mut running: Vec<_> = (0..first).map(spawn).collect();
    for k in first..threads {
        running.remove(0).join().unwrap();
        running.push(spawn(k));
    }
    for t in running {
        t.join().unwrap();
    }
    let recorded = t0.elapsed();
    let t1 = Instant::now();
    sp::finalize().unwrap();
    let finalized = t1.elapsed();
    let t2 = Instant::now();
    let p = sp::read_profile(&path).unwrap();
    let read = t2.elapsed();
    println!(
        "{threads} threads x {calls} calls: record {recorded:?}, finalize {finalized:?}, \
         read {read:?}, file {} KiB",
        std::fs::metadata(&path).unwrap().len() >> 10
    );

    let n = threads as u64 * iterations;
    let mut expected = vec![("load/outer", n), ("load/leaf", 2 * n)];
    let own: Vec<String> = (0..threads).map(|k| format!("load/t{k}")).collect();
    expected.extend(own.iter().map(|name| (name.as_str(), iterations)));
    expect_counts(&p, &expected);
    assert_eq!(
        p.events.len() as u64,
        threads as u64 * calls,
        "nothing lost"
    );

    let c = check_calls(&p);
    c.expect_parent("load/outer", None);
    for (k, name) in own.iter().enumerate() {
        c.expect_parent(name, Some("load/outer"));
        let thread = format!("load-{k}");
        assert!(
            c.of(name).all(|i| c.thread_name(i) == thread),
            "{name} off its thread"
        );
    }
    for i in c.of("load/leaf") {
        let thread = c.thread_name(i);
        let k = thread.strip_prefix("load-").expect("a load thread");
        assert_eq!(c.parent_name(i), Some(format!("load/t{k}").as_str()));
    }
    // Every thread: its own row in the thread table, all its calls, exited.
    assert_eq!(p.threads.len(), threads);
    let mut per_thread = vec![0u64; threads];
    for &t in &p.events.thread_ids {
        per_thread[t as usize] += 1;
    }
    for (t, info) in p.threads.iter().enumerate() {
        assert!(info.name.starts_with("load-"), "{info:?}");
        assert_eq!(per_thread[t], calls, "calls of {}", info.name);
        assert!(
            info.start_ns >= 0 && info.end_ns >= info.start_ns,
            "{info:?}"
        );
    }
}

#[test]
fn sixteen_threads_times_a_million_nested_calls() {
    threads_under_load("load-full", 16, 1_000_000);
}

/// Per thread of the cut tests: `cut/outer { cut/t<k> { cut/leaf, cut/leaf } }`,
/// looked up by name on every call so that a new session is picked up.
fn cut_worker(k: usize, stop: &AtomicBool, iterations: &AtomicU64) {
    let own = format!("cut/t{k}");
    while !stop.load(Ordering::Relaxed) {
        let _outer = sp::region("cut/outer").enter();
        let _own = sp::region(&own).enter();
        for _ in 0..2 {
            let _leaf = sp::region("cut/leaf").enter();
        }
        iterations.fetch_add(1, Ordering::Relaxed);
    }
}

/// Calls per (thread name, region name).
fn per_thread_counts(c: &Calls) -> HashMap<(String, String), u64> {
    let mut out = HashMap::new();
    for i in 0..c.p.events.len() {
        *out.entry((c.thread_name(i).to_owned(), c.name(i).to_owned()))
            .or_insert(0) += 1;
    }
    out
}

/// Checks a file cut while `threads` cut workers were recording. With
/// `clean_start`, the workers started after setup (no call straddles it).
fn check_cut(path: &Path, threads: usize, clean_start: bool) -> Vec<u64> {
    let p = sp::read_profile(path).unwrap();
    let c = check_calls(&p); // complete calls, parents on their thread, in time
    let counts = per_thread_counts(&c);
    let get = |t: &str, r: &str| {
        counts
            .get(&(t.to_owned(), r.to_owned()))
            .copied()
            .unwrap_or(0)
    };
    let mut outers = Vec::new();
    for k in 0..threads {
        let (thread, own) = (format!("cut-{k}"), format!("cut/t{k}"));
        let (o, m, l) = (
            get(&thread, "cut/outer"),
            get(&thread, &own),
            get(&thread, "cut/leaf"),
        );
        outers.push(o);
        // A consistent cut: whole iterations, plus at the cut one whose
        // calls that started before it are complete (calls started after
        // finalize began record nothing, while calls already open may still
        // end and be kept). A session switch may also split one iteration.
        let slack = if clean_start { 1 } else { 2 };
        assert!(o > 0, "{thread} recorded nothing");
        assert!(
            m + slack >= o && m <= o + slack,
            "{thread}: {o} outer, {m} own"
        );
        assert!(
            l + 2 * slack >= 2 * m && l <= 2 * m + 2 * slack,
            "{thread}: {m} own, {l} leaf"
        );
    }
    for i in 0..p.events.len() {
        let thread = c.thread_name(i);
        let k = thread.strip_prefix("cut-").expect("a cut thread");
        let own = format!("cut/t{k}");
        let want = match c.name(i) {
            "cut/outer" => None,
            "cut/leaf" => Some(own.as_str()),
            name => {
                assert_eq!(name, own, "{thread} recorded {name}");
                Some("cut/outer")
            }
        };
        let got = c.parent_name(i);
        // Calls whose parent was still open at the cut are roots.
        assert!(
            got == want || got.is_none(),
            "{thread}: parent {got:?} of {}",
            c.name(i)
        );
    }
    // Few roots besides the outer calls: only at the cut (and the start).
    let stray_roots = (0..p.events.len())
        .filter(|&i| c.parent[i] == NONE && c.name(i) != "cut/outer")
        .count();
    let bound = threads * if clean_start { 3 } else { 6 };
    assert!(
        stray_roots <= bound,
        "{stray_roots} calls lost their parent"
    );
    outers
}

#[test]
fn finalize_while_threads_record_writes_a_consistent_cut() {
    let _s = serial();
    const THREADS: usize = 4;
    let dir = temp_dir("cut");
    let (first, second) = (dir.join("first.h5"), dir.join("second.h5"));
    let stop = AtomicBool::new(false);
    let iterations: Vec<AtomicU64> = (0..THREADS).map(|_| AtomicU64::new(0)).collect();
    sp::setup(to_file(&first)).unwrap();
    std::thread::scope(|scope| {
        for (k, done) in iterations.iter().enumerate() {
            let stop = &stop;
            std::thread::Builder::new()
                .name(format!("cut-{k}"))
                .spawn_scoped(scope, move || cut_worker(k, stop, done))
                .unwrap();
        }
        let wait_for = |n: u64| {
            while iterations.iter().any(|i| i.load(Ordering::Relaxed) < n) {
                std::thread::sleep(Duration::from_millis(1));
            }
        };
        wait_for(2_000);
        sp::finalize().unwrap(); // the threads go on recording
        let after_first: Vec<u64> = iterations
            .iter()
            .map(|i| i.load(Ordering::Relaxed))
            .collect();
        // A second session starts and ends under the running threads.
        sp::setup(to_file(&second)).unwrap();
        let target: u64 = after_first.iter().max().unwrap() + 2_000;
        wait_for(target);
        sp::finalize().unwrap();
        stop.store(true, Ordering::Relaxed);
    });
    let done: Vec<u64> = iterations
        .iter()
        .map(|i| i.load(Ordering::Relaxed))
        .collect();
    let a = check_cut(&first, THREADS, true);
    let b = check_cut(&second, THREADS, false);
    for k in 0..THREADS {
        assert!(
            a[k] + b[k] <= done[k],
            "thread {k}: {} + {} outer calls in the files, {} done",
            a[k],
            b[k],
            done[k]
        );
    }
    println!("outer calls per thread: first {a:?}, second {b:?}, done {done:?}");
    assert_eq!(listing(&dir), ["first.h5", "second.h5"]);
}

// ---------------------------------------------------------------------------
// Panics and misuse, across threads
// ---------------------------------------------------------------------------

#[test]
fn panics_in_nested_regions_across_threads_are_recorded_and_nest_afterwards() {
    let _s = serial();
    quiet_panics();
    const THREADS: usize = 4;
    const ITERATIONS: u64 = 3_000;
    let path = temp_dir("panics").join("panics.h5");
    sp::setup(to_file(&path)).unwrap();
    let caught: Vec<u64> = on_named_threads("panic", THREADS, None, |k| {
        let own = format!("panic/t{k}");
        let mut caught = 0;
        for i in 0..ITERATIONS {
            // Unwinds from depth 3, 2 or 1 (or not at all).
            let r = std::panic::catch_unwind(|| {
                let _outer = sp::region("panic/outer").enter();
                {
                    let _own = sp::region(&own).enter();
                    {
                        let _leaf = sp::region("panic/leaf").enter();
                        if i % 4 == 0 {
                            std::panic::panic_any(QuietPanic);
                        }
                    }
                    if i % 4 == 1 {
                        std::panic::panic_any(QuietPanic);
                    }
                }
                if i % 4 == 2 {
                    std::panic::panic_any(QuietPanic);
                }
            });
            caught += r.is_err() as u64;
            // Later calls nest as usual.
            sp::region("panic/after").run(|| {
                sp::region("panic/after_child").run(|| ());
            });
        }
        caught
    });
    assert!(
        caught.iter().all(|&c| c == ITERATIONS / 4 * 3),
        "{caught:?}"
    );
    sp::finalize().unwrap();
    let p = sp::read_profile(&path).unwrap();
    let n = THREADS as u64 * ITERATIONS;
    let own: Vec<String> = (0..THREADS).map(|k| format!("panic/t{k}")).collect();
    let mut expected = vec![
        ("panic/outer", n),
        ("panic/leaf", n),
        ("panic/after", n),
        ("panic/after_child", n),
    ];
    expected.extend(own.iter().map(|o| (o.as_str(), ITERATIONS)));
    expect_counts(&p, &expected);
    let c = check_calls(&p);
    c.expect_parent("panic/outer", None);
    c.expect_parent("panic/after", None);
    c.expect_parent("panic/after_child", Some("panic/after"));
    for o in &own {
        c.expect_parent(o, Some("panic/outer"));
    }
    for i in c.of("panic/leaf") {
        let k = c.thread_name(i).strip_prefix("panic-").unwrap();
        assert_eq!(c.parent_name(i), Some(format!("panic/t{k}").as_str()));
    }
}

#[test]
fn out_of_order_drops_and_leaked_guards_across_threads() {
    let _s = serial();
    const THREADS: usize = 4;
    const ITERATIONS: u64 = 5_000;
    let path = temp_dir("misuse").join("misuse.h5");
    sp::setup(to_file(&path)).unwrap();
    on_named_threads("misuse", THREADS, None, |_| {
        for _ in 0..ITERATIONS {
            let a = sp::region("ooo/a").enter();
            let b = sp::region("ooo/b").enter();
            let c = sp::region("ooo/c").enter();
            drop(a); // ends c, b and a at one instant
            drop(c); // already ended: nothing more
            drop(b);
            {
                let _d = sp::region("ooo/d").enter();
                std::mem::forget(sp::region("ooo/leaked").enter());
                sp::region("ooo/e").run(|| ()); // inside the leaked call
            } // d's end also ends the leaked call
            sp::region("ooo/f").run(|| ());
        }
    });
    sp::finalize().unwrap();
    let p = sp::read_profile(&path).unwrap();
    let n = THREADS as u64 * ITERATIONS;
    let names = [
        "ooo/a",
        "ooo/b",
        "ooo/c",
        "ooo/d",
        "ooo/leaked",
        "ooo/e",
        "ooo/f",
    ];
    expect_counts(&p, &names.map(|name| (name, n)));
    let c = check_calls(&p);
    c.expect_parent("ooo/a", None);
    c.expect_parent("ooo/b", Some("ooo/a"));
    c.expect_parent("ooo/c", Some("ooo/b"));
    c.expect_parent("ooo/d", None);
    c.expect_parent("ooo/leaked", Some("ooo/d"));
    c.expect_parent("ooo/e", Some("ooo/leaked"));
    c.expect_parent("ooo/f", None);
    // Calls ended by an enclosing guard end at the same instant as it.
    for i in c.of("ooo/c").chain(c.of("ooo/b")).chain(c.of("ooo/leaked")) {
        assert_eq!(c.end(i), c.end(c.parent[i] as usize), "{}", c.name(i));
    }
}

#[test]
fn ten_thousand_deep_recursion_on_several_threads_round_trips() {
    let _s = serial();
    const THREADS: usize = 3;
    const DEPTH: usize = 10_000;
    fn recurse(n: usize) {
        sp::scope!("deep/rec");
        if n > 1 {
            recurse(n - 1);
        }
    }
    let path = temp_dir("deep").join("deep.h5");
    sp::setup(to_file(&path)).unwrap();
    on_named_threads("deep", THREADS, Some(256 << 20), |k| {
        sp::region(&format!("deep/t{k}")).run(|| recurse(DEPTH));
    });
    sp::finalize().unwrap();
    let p = sp::read_profile(&path).unwrap();
    let mut expected = vec![("deep/rec", (THREADS * DEPTH) as u64)];
    let own: Vec<String> = (0..THREADS).map(|k| format!("deep/t{k}")).collect();
    expected.extend(own.iter().map(|o| (o.as_str(), 1)));
    expect_counts(&p, &expected);
    let c = check_calls(&p);
    // Per thread, one chain: t<k> -> rec -> rec -> ... DEPTH recs long.
    let mut children = vec![0u32; p.events.len()];
    for &parent in &c.parent {
        if parent != NONE {
            children[parent as usize] += 1;
        }
    }
    let leaves: Vec<usize> = c.of("deep/rec").filter(|&i| children[i] == 0).collect();
    assert_eq!(leaves.len(), THREADS);
    assert!(c.of("deep/rec").all(|i| children[i] <= 1));
    for leaf in leaves {
        let (mut i, mut depth) = (leaf, 0);
        while c.name(i) == "deep/rec" {
            depth += 1;
            i = c.parent[i] as usize;
        }
        let k = c.thread_name(leaf).strip_prefix("deep-").unwrap();
        assert_eq!(c.name(i), format!("deep/t{k}"));
        assert_eq!(c.parent[i], NONE);
        assert_eq!(depth, DEPTH);
    }
}

// ---------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------

#[test]
fn a_hundred_thousand_distinct_names_round_trip_in_order() {
    let _s = serial();
    let path = temp_dir("many-names").join("names.h5");
    let names: Vec<String> = (0..100_000)
        .map(|i| match i % 4 {
            0 => format!("solver/step{i}"),
            1 => format!("module.fn_{i}"),
            2 => format!("région-{i}-ü"),
            _ => format!("{i}"),
        })
        .collect();
    sp::setup(to_file(&path)).unwrap();
    let t0 = Instant::now();
    for (i, name) in names.iter().enumerate() {
        let r = sp::region(name);
        for _ in 0..=(i % 2) {
            r.run(|| ());
        }
    }
    sp::finalize().unwrap();
    println!("100k names: record + finalize {:?}", t0.elapsed());
    let p = sp::read_profile(&path).unwrap();
    assert!(p.region_names == names, "names differ after the round trip");
    assert_eq!(p.rows.len(), names.len());
    for (i, row) in p.rows.iter().enumerate() {
        assert_eq!(row.region_id as usize, i);
        assert_eq!(row.event_count, 1 + (i % 2) as u64, "{}", names[i]);
    }
    check_calls(&p);
}

/// Names that stress paths, dots, encodings and sizes; each is a region.
fn special_names() -> Vec<String> {
    let mut big = String::new();
    let mut i = 0usize;
    while big.len() < (64 << 10) - 4 {
        big.push(['a', 'é', '/', '.', '日', '🦀'][i % 6]);
        i += 1;
    }
    while big.len() < 64 << 10 {
        big.push('z');
    }
    assert_eq!(big.len(), 64 << 10);
    [
        "",
        "/",
        "//",
        "/leading",
        "trailing/",
        "a/b/c",
        ".",
        "..",
        "./x",
        "../y",
        "a.b.c",
        ".hidden",
        "ünïcødé",
        "日本語の領域",
        "עברית",
        "emoji 🦀🔥",
        "e\u{301} (combining)",
        "zero\u{200b}width",
        "tab\there",
        "new\nline",
        "cr\rlf",
        "quote\"'`",
        "back\\slash",
        "  spaced  ",
        "%s %d {} {{}}",
        "<tag>&amp;",
        "semi;colon,comma",
        "\u{7f}del",
        "\u{1}\u{1f}controls",
    ]
    .into_iter()
    .map(str::to_owned)
    .chain([big, "x".repeat(1000)])
    .collect()
}

#[test]
fn a_name_with_nul_does_not_make_the_session_unwritable() {
    // In a child: while the bug is there, that session can never be ended.
    let _s = serial();
    let dir = temp_dir("nul-name");
    let (code, out, err) = run_child(&["nul-name", s(&dir)]);
    assert_eq!(code, Some(0), "{err}\n{out}");
}

#[test]
fn a_nul_and_the_nul_symbol_stay_distinct_names_in_the_file() {
    // NUL is stored as U+2400 (␀) and a literal ␀ doubled (see scope-profiler-hdf5/src/strings.rs): the
    // names come back as they were, through a session and write_profile.
    let _s = serial();
    let dir = temp_dir("nul-symbol");
    let names = [
        "a\0b",
        "a\u{2400}b",
        "\0",
        "\u{2400}",
        "\u{2400}\0\u{2400}\u{2400}",
    ];
    let path = dir.join("session.h5");
    sp::setup(to_file(&path)).unwrap();
    for name in names {
        sp::region(name).run(|| ());
    }
    sp::finalize().unwrap();
    let p = sp::read_profile(&path).unwrap();
    assert_eq!(p.region_names, names);
    assert!(p.rows.iter().all(|r| r.event_count == 1));

    let copy = dir.join("copy.h5");
    sp::write_profile(&p, &copy, sp::Compression::None).unwrap();
    assert_eq!(sp::read_profile(&copy).unwrap(), p);

    if let Some(python) = made_reader_python(env!("CARGO_TARGET_TMPDIR")) {
        let seen = python_names_and_counts(
            &python,
            "scope_profiler.read_h5(sys.argv[1])",
            &path,
            "the Python reader failed",
        );
        // What Python sees: NUL as ␀, a literal ␀ doubled, and U+2060 after
        // the ␀ of a NUL followed by a ␀.
        let stored = ["a␀b", "a␀␀b", "␀", "␀␀", "␀␀␀\u{2060}␀␀␀␀"];
        let want: Vec<(String, u64)> = stored.iter().map(|n| (n.to_string(), 1)).collect();
        assert_eq!(seen, want, "the names the Python reader sees");
    }
}

#[test]
fn special_names_round_trip_exactly_through_the_file_and_the_python_reader() {
    let _s = serial();
    let path = temp_dir("special-names").join("special.h5");
    let names = special_names();
    sp::setup(to_file(&path)).unwrap();
    // Each name once as a root, then all of them nested in one chain.
    for name in &names {
        sp::region(name).run(|| ());
    }
    fn chain(names: &[String]) {
        if let Some((first, rest)) = names.split_first() {
            let _g = sp::region(first).enter();
            chain(rest);
        }
    }
    chain(&names);
    sp::finalize().unwrap();
    let p = sp::read_profile(&path).unwrap();
    assert_eq!(p.region_names.len(), names.len());
    for (got, want) in p.region_names.iter().zip(&names) {
        assert!(got == want, "name {want:?} came back as {got:?}");
    }
    assert!(p.rows.iter().all(|r| r.event_count == 2));
    let c = check_calls(&p);
    for (k, name) in names.iter().enumerate() {
        let parents: Vec<Option<&str>> = c.of(name).map(|i| c.parent_name(i)).collect();
        let chained = if k == 0 {
            None
        } else {
            Some(names[k - 1].as_str())
        };
        assert_eq!(parents, [None, chained], "parents of {name:?}");
    }

    if let Some(python) = made_reader_python(env!("CARGO_TARGET_TMPDIR")) {
        let seen = python_names_and_counts(
            &python,
            "scope_profiler.read_h5(sys.argv[1])",
            &path,
            "the Python reader failed",
        );
        let want: Vec<(String, u64)> = names.iter().map(|n| (n.clone(), 2)).collect();
        assert_eq!(seen.len(), want.len(), "the Python reader's region count");
        for (got, want) in seen.iter().zip(&want) {
            assert!(got == want, "Python read {got:?}, expected {want:?}");
        }
    }
}

// ---------------------------------------------------------------------------
// Processes spawned while a file is written
// ---------------------------------------------------------------------------

/// The descriptors of process `pid` that point at files named like `needle`.
fn open_files_of(pid: u32, needle: &str) -> Vec<String> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    fds.filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .map(|target| target.display().to_string())
        .filter(|target| target.contains(needle))
        .collect()
}

#[test]
#[cfg_attr(
    scope_profiler_portable,
    ignore = "the portable platform cannot mark HDF5's descriptor close-on-exec (crate docs, Features and platforms)"
)]
fn a_process_spawned_during_finalize_does_not_hold_the_file() {
    let _s = serial();
    let path = temp_dir("spawn-during-finalize").join("spawned.h5");
    sp::setup(to_file(&path)).unwrap();
    for _ in 0..500_000 {
        sp::scope!("spawn/outer");
        sp::scope!("spawn/leaf");
    }
    let stop = AtomicBool::new(false);
    let mut children = std::thread::scope(|scope| {
        let spawner = scope.spawn(|| {
            let mut children = Vec::new();
            while !stop.load(Ordering::Relaxed) && children.len() < 200 {
                let sleeper = Command::new("sleep")
                    .arg("60")
                    .stdin(Stdio::null())
                    .spawn()
                    .expect("spawn sleep");
                children.push(sleeper);
                std::thread::sleep(Duration::from_millis(10));
            }
            children
        });
        let finalized = sp::finalize();
        stop.store(true, Ordering::Relaxed);
        let children = spawner.join().unwrap();
        finalized.unwrap();
        children
    });
    // While the children live, the file opens, and none of them holds it.
    let read = sp::read_profile(&path);
    let holders: Vec<(u32, Vec<String>)> = children
        .iter()
        .map(|c| (c.id(), open_files_of(c.id(), "spawned.h5")))
        .filter(|(_, files)| !files.is_empty())
        .collect();
    for c in &mut children {
        let _ = c.kill();
        let _ = c.wait();
    }
    println!("{} processes spawned during finalize", children.len());
    let example = &holders[..holders.len().min(3)];
    let read = read.unwrap_or_else(|e| {
        panic!("the file does not open while processes spawned during finalize run: {e}; holders: {example:?}")
    });
    assert_eq!(read.events.len(), 1_000_000);
    // A child spawned in the microseconds between HDF5's open of the file and
    // the close-on-exec flag inherits the descriptor (nothing can close that
    // window from inside the library), harmlessly: the writer takes no lock.
    // Every other child was spawned with the flag set and holds nothing.
    assert!(
        holders.len() <= 1,
        "{} of {} processes spawned during finalize inherited the file: {:?}",
        holders.len(),
        children.len(),
        example
    );
}

// ---------------------------------------------------------------------------
// Reliability, part 2: failed spills, fork, failed finalize, counting,
// idle threads, the disk limit
// ---------------------------------------------------------------------------

/// Runs `sp-child` and fails the test if it has not exited within
/// `seconds` (a hang); returns (exit code, stdout, stderr).
fn run_child_within(seconds: u64, args: &[&str]) -> (Option<i32>, String, String) {
    use std::io::Read;
    let mut proc = child()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run sp-child");
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = drain(Box::new(proc.stdout.take().unwrap()));
    let err = drain(Box::new(proc.stderr.take().unwrap()));
    let deadline = std::time::Instant::now() + Duration::from_secs(seconds);
    let status = loop {
        if let Some(status) = proc.try_wait().expect("wait") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = proc.kill();
            let _ = proc.wait();
            panic!(
                "sp-child {args:?} hung: still running after {seconds} s\nstdout: {}\nstderr: {}",
                out.join().unwrap_or_default(),
                err.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (status.code(), out.join().unwrap(), err.join().unwrap())
}

/// The warning lines the runtime printed on stderr.
fn warnings(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("scope-profiler: warning:"))
        .collect()
}

#[test]
fn a_failed_spill_never_blocks_recording_and_nothing_is_lost() {
    let _s = serial();
    for how in ["removed-dir", "fsize"] {
        let dir = temp_dir(&format!("spill-fail-keep-{how}"));
        let (code, out, err) =
            run_child_within(120, &["spill-fail", "keep", how, s(&dir), "3000000"]);
        println!("{how}: {}", out.trim());
        assert_eq!(code, Some(0), "{how}: {err}\n{out}");
        let warned = warnings(&err);
        assert_eq!(warned.len(), 1, "{how}: one warning expected: {err}");
        assert!(warned[0].contains(s(&dir.join("session"))), "{}", warned[0]);
        assert!(warned[0].contains("in memory"), "{}", warned[0]);
    }
}

#[test]
fn a_failed_spill_with_drop_calls_counts_every_dropped_call_in_bounded_memory() {
    let _s = serial();
    let dir = temp_dir("spill-fail-drop");
    let (code, out, err) = run_child_within(
        120,
        &["spill-fail", "drop", "removed-dir", s(&dir), "5000000"],
    );
    println!("{}", out.trim());
    assert_eq!(code, Some(0), "{err}\n{out}");
    assert!(out.contains("dropped"), "{out}");
    assert_eq!(warnings(&err).len(), 1, "{err}");
}

#[test]
fn past_the_disk_limit_events_stop_and_counts_stay_exact() {
    let _s = serial();
    let dir = temp_dir("disk-limit");
    let (code, out, err) = run_child_within(120, &["disk-limit", s(&dir), "2000000"]);
    println!("{}", out.trim());
    assert_eq!(code, Some(0), "{err}\n{out}");
    let warned = warnings(&err);
    assert_eq!(warned.len(), 1, "{err}");
    assert!(warned[0].contains("disk limit"), "{}", warned[0]);
}

#[test]
#[cfg_attr(
    scope_profiler_portable,
    ignore = "the portable platform has no fork handling (crate docs, Features and platforms)"
)]
fn a_fork_child_has_no_session_and_the_parent_is_unaffected() {
    let _s = serial();
    let dir = temp_dir("fork");
    let (code, out, err) = run_child_within(120, &["fork", s(&dir)]);
    assert_eq!(code, Some(0), "{err}\n{out}");
    assert!(out.contains("fork ok"), "{out}");
}

#[test]
fn a_failed_finalize_loses_no_call_of_a_thread_recording_throughout() {
    let _s = serial();
    let dir = temp_dir("failed-finalize-recording");
    let (code, out, err) = run_child_within(300, &["failed-finalize-while-recording", s(&dir)]);
    println!("{}", out.trim());
    assert_eq!(code, Some(0), "{err}\n{out}");
    // 150-230 MB of files per run, which filled the disk of a machine that
    // ran the suite a few dozen times.
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn num_calls_never_decreases_while_the_writer_spills() {
    let _s = serial();
    let dir = temp_dir("monotonic");
    sp::setup(to_file(&dir.join("m.h5")).memory_limit(1 << 20)).unwrap();
    let stop = AtomicBool::new(false);
    let (polls, decreases) = std::thread::scope(|scope| {
        scope.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                for _ in 0..1000 {
                    sp::scope!("monotonic/leaf");
                }
            }
        });
        let region = sp::region("monotonic/leaf");
        let (mut last, mut polls, mut decreases) = (0, 0u64, Vec::new());
        // At least 2 s, and until the calls fill the 1 MiB limit about five
        // times over (slow runs, e.g. under valgrind, take longer), at most
        // 120 s.
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_secs(2)
            || (last < 200_000 && start.elapsed() < Duration::from_secs(120))
        {
            let n = region.num_calls();
            if n < last {
                decreases.push((last, n));
            }
            last = n;
            polls += 1;
        }
        stop.store(true, Ordering::Relaxed);
        (polls, decreases)
    });
    let results = sp::finalize().unwrap();
    assert!(
        results.health().spilled_bytes > 0,
        "the writer never spilled: nothing was tested"
    );
    assert!(polls > 100, "{polls} polls");
    assert!(
        decreases.is_empty(),
        "num_calls went down {} times in {polls} polls, e.g. {:?}",
        decreases.len(),
        &decreases[..decreases.len().min(5)]
    );
}

/// Whether this process holds a file whose name contains `needle`.
fn holds_file(needle: &str) -> bool {
    !open_files_of(std::process::id(), needle).is_empty()
}

#[test]
fn an_idle_thread_does_not_keep_a_finished_session_alive() {
    let _s = serial();
    let dir = temp_dir("idle-thread");
    sp::setup(to_file(&dir.join("idle.h5")).memory_limit(1 << 20)).unwrap();
    let (recorded_tx, recorded_rx) = std::sync::mpsc::channel();
    let (finish_tx, finish_rx) = std::sync::mpsc::channel::<()>();
    let idle = std::thread::spawn(move || {
        for _ in 0..500_000 {
            sp::scope!("idle/leaf");
        }
        recorded_tx.send(()).unwrap();
        let _ = finish_rx.recv(); // idle until the test ends
    });
    recorded_rx.recv().unwrap();
    assert!(
        holds_file(".scope-profiler-spill"),
        "no scratch file: nothing spilled"
    );
    let results = sp::finalize().unwrap();
    assert!(results.health().spilled_bytes > 0);
    let still_open = holds_file(".scope-profiler-spill");
    finish_tx.send(()).unwrap();
    idle.join().unwrap();
    assert!(
        !still_open,
        "the scratch file stayed open after finalize while a thread that recorded idled"
    );
}

#[test]
fn the_summary_of_a_deep_tree_prints_in_memory_linear_in_its_depth() {
    let _s = serial();
    let dir = temp_dir("deep-chain");
    // Before: 20k levels peaked at 1.97 GB, 100k aborted on allocation.
    let (code, out, err) = run_child_within(300, &["deep-chain", "100000", s(&dir)]);
    assert_eq!(
        code,
        Some(0),
        "{}\n{out}",
        &err[err.len().saturating_sub(2000)..]
    );
    let peak: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix("peak "))
        .and_then(|v| v.trim().parse().ok())
        .expect("peak line");
    println!(
        "100k-deep chain, verbose finalize: peak RSS {} MiB",
        peak >> 20
    );
    assert!(peak < 200 << 20, "peak RSS {} MiB", peak >> 20);
    assert!(
        err.lines().count() < 200,
        "the printed tree is not folded: {} lines",
        err.lines().count()
    );
}

/// Names are outside the memory limit (see `Options::memory_limit`); this
/// holds what a million of them cost at the finalize peak to a bound: 300
/// bytes per region plus the name (about 945 once: rows cloned, a statistics
/// accumulator per row, names copied three times, a 150-byte summary node;
/// then about 180 against the reliability issue's 200; now about 270, the
/// 88-byte `RegionStatistics` each region's results carry included).
#[test]
fn many_distinct_names_finalize_within_a_known_cost_per_region() {
    let _s = serial();
    let dir = temp_dir("many-names");
    let n = 1_000_000u64;
    // The same number of calls, each of its own region or all of one: the
    // difference in peak RSS growth is what the names cost.
    let run = |how: &str| {
        let (code, out, err) = run_child_within(300, &["many-names", how, &n.to_string(), s(&dir)]);
        assert_eq!(code, Some(0), "{how}: {err}\n{out}");
        let words: Vec<String> = out.split_whitespace().map(str::to_owned).collect();
        let field = |key: &str| -> u64 {
            let at = words.iter().position(|w| w == key).expect(key);
            words[at + 1].parse().unwrap()
        };
        (field("peak_growth"), field("name_bytes"))
    };
    let (distinct, name_bytes) = run("distinct");
    let (one, _) = run("one");
    let per_region = distinct.saturating_sub(one) / n;
    let name_bytes = name_bytes / n;
    println!(
        "{n} names: {per_region} bytes per region at the finalize peak \
         ({name_bytes} of them the name's own bytes)"
    );
    // 300 bytes per region plus the name's own bytes (about 270 + 15
    // measured: 180 for the file and the summary, 88 for the statistics
    // `Results` carries per region; 930 + 15 once).
    assert!(
        per_region <= 300 + name_bytes,
        "{per_region} bytes per region, {name_bytes} of them the name's"
    );
}
