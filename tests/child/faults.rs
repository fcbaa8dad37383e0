//! The `sp-child` modes of issue "Reliability, part 2": spilling that
//! fails, `fork()`, a failed finalize while a thread records, the disk limit.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use scope_profiler::{self as sp, Compression, Options, Value};

use crate::{Outcome, check_file, ensure, file_counts, record, say, set_fsize_soft_limit};

/// Peak resident memory of this process, bytes (VmHWM).
pub fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// `spill-fail keep|drop removed-dir|fsize DIR N`: a session with a 4 MiB
/// memory limit whose scratch file cannot be written (its directory removed
/// after `setup`, or a 1 MiB file size limit with SIGXFSZ ignored) records
/// `N` calls. Recording must never block on the failed writer. `finalize`
/// to the original path fails (removed directory), `finalize_to(DIR/rescued.h5)`
/// writes: every call (`keep`), or the calls kept plus those counted as
/// dropped (`drop`, whose peak memory stays bounded).
pub fn spill_fail(policy: &str, how: &str, dir: &Path, n: u64) -> Outcome {
    // Whether calls are dropped once spilling fails (else kept in memory).
    let drop_calls = match policy {
        "keep" => false,
        "drop" => true,
        other => return Err(format!("unknown policy {other}").into()),
    };
    let sub = dir.join("session");
    std::fs::create_dir_all(&sub).map_err(|e| format!("mkdir: {e}"))?;
    let path = sub.join("out.h5");
    let rescued = dir.join("rescued.h5");
    let run = sp::setup(
        Options::new()
            .file_path(&path)
            .verbose(false)
            .compression(Compression::None)
            .memory_limit(4 << 20)
            .drop_calls_on_spill_failure(drop_calls),
    )
    .map_err(|e| format!("setup: {e}"))?;
    let baseline = peak_rss();
    match how {
        "removed-dir" => std::fs::remove_dir_all(&sub).map_err(|e| format!("rm: {e}"))?,
        "fsize" => {
            // SAFETY: ignoring SIGXFSZ has no preconditions; writes past the
            // limit then fail with EFBIG instead of killing the process.
            unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
            set_fsize_soft_limit(Some(1 << 20))?;
        }
        other => return Err(format!("unknown fault {other}").into()),
    }
    let expected = record(n);
    say("recorded");
    let grown = peak_rss().saturating_sub(baseline);
    set_fsize_soft_limit(None)?;
    if how == "removed-dir" {
        ensure(sp::finalize().is_err(), || {
            "finalize into a removed directory succeeded".into()
        })?;
    }
    let results = run
        .finalize_to(&rescued)
        .map_err(|e| format!("finalize_to: {e}"))?;
    let error = results
        .health()
        .spill_error
        .as_deref()
        .unwrap_or_default()
        .to_owned();
    ensure(error.contains(&sub.display().to_string()), || {
        format!(
            "Results::spill_error does not name {}: {error:?}",
            sub.display()
        )
    })?;
    say(&format!("spill error: {error}"));
    if !drop_calls {
        ensure(results.health().dropped.is_empty(), || {
            format!("calls dropped: {:?}", results.health().dropped)
        })?;
        return Ok(check_file(&rescued, &expected)?);
    }
    // Dropped calls are counted exactly, per region.
    let (in_file, _) = file_counts(&rescued)?;
    let dropped: BTreeMap<String, u64> = results
        .health()
        .dropped
        .iter()
        .map(|d| (d.name.clone(), d.num_calls))
        .collect();
    ensure(!dropped.is_empty(), || "nothing was dropped".into())?;
    for (name, want) in &expected {
        let got =
            in_file.get(*name).copied().unwrap_or(0) + dropped.get(*name).copied().unwrap_or(0);
        ensure(got == *want, || {
            format!("{name}: {got} calls in the file and dropped, {want} made")
        })?;
    }
    let profile = sp::read_profile(&rescued).map_err(|e| format!("read: {e}"))?;
    let meta = |key: &str| profile.metadata_value(key).cloned();
    let total: u64 = dropped.values().sum();
    ensure(
        meta("dropped_calls") == Some(Value::Int(total as i64)),
        || {
            format!(
                "metadata dropped_calls is {:?}, expected {total}",
                meta("dropped_calls")
            )
        },
    )?;
    ensure(meta("dropped_calls_by_region").is_some(), || {
        "no dropped_calls_by_region metadata".into()
    })?;
    ensure(results.health().events_stopped_ns.is_some(), || {
        "Results::events_stopped_ns is None".into()
    })?;
    // Bounded: far less than the records of every call (24 bytes each).
    ensure(grown < n * 24 / 3, || {
        format!("memory grew by {grown} bytes while dropping ({n} calls)")
    })?;
    say(&format!(
        "dropped {total} calls, memory grew by {grown} bytes"
    ));
    Ok(())
}

/// `disk-limit DIR N`: a 2 MiB memory limit and a 1 MiB disk limit; `N`
/// calls. Spilling stops at the disk limit, events past the memory limit are
/// dropped, and calls per region (in the file plus dropped) stay exact, as
/// do their total times (checked against a clock read around each call).
pub fn disk_limit(dir: &Path, n: u64) -> Outcome {
    let path = dir.join("limited.h5");
    sp::setup(
        Options::new()
            .file_path(&path)
            .verbose(false)
            .memory_limit(2 << 20)
            .disk_limit(1 << 20),
    )
    .map_err(|e| format!("setup: {e}"))?;
    let expected = record(n);
    let results = sp::finalize().map_err(|e| format!("finalize: {e}"))?;
    let error = results
        .health()
        .spill_error
        .as_deref()
        .unwrap_or_default()
        .to_owned();
    ensure(error.contains("disk limit"), || {
        format!("Results::spill_error: {error:?}")
    })?;
    ensure(results.health().spilled_bytes <= 1 << 20, || {
        format!(
            "{} bytes spilled past a 1 MiB disk limit",
            results.health().spilled_bytes
        )
    })?;
    let (in_file, events) = file_counts(&path)?;
    let dropped: BTreeMap<String, u64> = results
        .health()
        .dropped
        .iter()
        .map(|d| (d.name.clone(), d.num_calls))
        .collect();
    for (name, want) in &expected {
        let got =
            in_file.get(*name).copied().unwrap_or(0) + dropped.get(*name).copied().unwrap_or(0);
        ensure(got == *want, || {
            format!("{name}: {got} of {want} calls accounted for")
        })?;
    }
    ensure(
        results.health().events_stopped_ns.is_some_and(|t| t > 0),
        || "no time for when events stopped".into(),
    )?;
    let profile = sp::read_profile(&path).map_err(|e| format!("read: {e}"))?;
    ensure(
        profile
            .metadata
            .iter()
            .any(|(k, _)| k == "events_stopped_time_ns"),
        || "no events_stopped_time_ns metadata".into(),
    )?;
    say(&format!(
        "{events} events kept, {} dropped",
        dropped.values().sum::<u64>()
    ));
    Ok(())
}

/// `fork DIR`: forks while a session (4 MiB limit, serving `live`) is
/// active and a guard is open. In the child: nothing records, `finalize` is
/// `NotActive` (and does not wait for the parent's live server), recording
/// past the limit does not hang, and a new `setup` writes `DIR/child.h5`.
/// The parent is unaffected: `DIR/parent.h5` has every call it made.
pub fn fork(dir: &Path) -> Outcome {
    let parent_path = dir.join("parent.h5");
    let child_path = dir.join("child.h5");
    let run = sp::setup(
        Options::new()
            .file_path(&parent_path)
            .verbose(false)
            .memory_limit(4 << 20)
            .live("127.0.0.1:0"),
    )
    .map_err(|e| format!("setup: {e}"))?;
    ensure(run.live_addr().is_some(), || "the parent serves".into())?;
    let mut expected = record(1000);
    let open = sp::region("fork/open").enter();
    // SAFETY: fork has no preconditions; the child below only runs this
    // function's code and leaves with `_exit`.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", std::io::Error::last_os_error()).into());
    }
    if pid == 0 {
        // A guard opened before the fork ends in the child: nothing to record.
        drop(open);
        let code = match in_fork_child(&child_path) {
            Ok(()) => 0,
            Err(why) => {
                eprintln!("sp-child (forked): FAIL: {why}");
                1
            }
        };
        // SAFETY: ends the forked child at once, running no destructor or
        // atexit handler inherited from the parent.
        unsafe { libc::_exit(code) };
    }
    // The parent records on while the child runs.
    for (name, n) in record(1000) {
        *expected.get_mut(name).expect("same regions") += n;
    }
    let mut status = 0;
    // SAFETY: waits for our own child; `status` is a valid out pointer.
    if unsafe { libc::waitpid(pid, &mut status, 0) } != pid {
        return Err(format!("waitpid: {}", std::io::Error::last_os_error()).into());
    }
    ensure(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        || format!("the forked child failed (wait status {status})"),
    )?;
    drop(open);
    expected.insert("fork/open", 1);
    sp::finalize().map_err(|e| format!("parent finalize: {e}"))?;
    check_file(&parent_path, &expected)?;
    let (child_counts, _) = file_counts(&child_path)?;
    ensure(child_counts.get("fork/child") == Some(&3), || {
        format!("child.h5 holds {child_counts:?}")
    })?;
    say("fork ok");
    Ok(())
}

fn in_fork_child(path: &Path) -> Result<(), String> {
    ensure(!sp::region("fork/in-child").enter().is_recording(), || {
        "the forked child records into the parent's session".into()
    })?;
    // Far past the parent's 4 MiB limit: must neither hang nor record.
    record(2_000_000);
    match sp::finalize() {
        Err(sp::Error::NotActive) => {}
        other => return Err(format!("finalize in the child: {other:?}")),
    }
    // The child serves a session of its own.
    let run = sp::setup(
        Options::new()
            .file_path(path)
            .verbose(false)
            .live("127.0.0.1:0"),
    )
    .map_err(|e| format!("setup in the child: {e}"))?;
    ensure(run.live_addr().is_some(), || "the child serves".into())?;
    for _ in 0..3 {
        sp::region("fork/child").run(|| ());
    }
    sp::finalize().map_err(|e| format!("finalize in the child: {e}"))?;
    Ok(())
}

/// `failed-finalize-while-recording DIR`: a thread records throughout while
/// `finalize` fails (a 4 MiB file size limit, SIGXFSZ ignored); then the
/// thread stops and `finalize_to` writes every call it completed, those
/// made during the failed write included.
pub fn failed_finalize_while_recording(dir: &Path) -> Outcome {
    let path = dir.join("out.h5");
    let other = dir.join("other.h5");
    let run = sp::setup(
        Options::new()
            .file_path(&path)
            .verbose(false)
            .compression(Compression::None),
    )
    .map_err(|e| format!("setup: {e}"))?;
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let recorder = {
        let (stop, done) = (Arc::clone(&stop), Arc::clone(&done));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                sp::scope!("throughout");
                done.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    while done.load(Ordering::Relaxed) < 500_000 {
        std::thread::yield_now();
    }
    // SAFETY: as in `fsize_limit`.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    set_fsize_soft_limit(Some(4 << 20))?;
    let before = done.load(Ordering::Relaxed);
    let failed = sp::finalize();
    let after = done.load(Ordering::Relaxed);
    set_fsize_soft_limit(None)?;
    ensure(failed.is_err(), || {
        "finalize under a 4 MiB file size limit succeeded".into()
    })?;
    say(&format!(
        "{} calls made during the failed finalize",
        after - before
    ));
    stop.store(true, Ordering::Relaxed);
    recorder
        .join()
        .map_err(|_| "the recorder panicked".to_owned())?;
    let total = done.load(Ordering::Relaxed);
    run.finalize_to(&other)
        .map_err(|e| format!("finalize_to: {e}"))?;
    let (counts, _) = file_counts(&other)?;
    let got = counts.get("throughout").copied().unwrap_or(0);
    ensure(got == total, || {
        format!(
            "{got} calls in the file, {total} made ({} lost; {} made during the failed finalize)",
            total - got.min(total),
            after - before
        )
    })?;
    Ok(())
}

/// `deep-chain DEPTH DIR`: a chain of DEPTH calls, regions "a" and "b"
/// alternating (no self-recursion to pool), finalized verbose to a file;
/// prints the peak RSS (VmHWM) after the summary was printed.
pub fn deep_chain(depth: u64, dir: &Path) -> Outcome {
    let path = dir.join("deep.h5");
    sp::setup(Options::new().file_path(&path).verbose(true)).map_err(|e| format!("setup: {e}"))?;
    let (a, b) = (sp::region("a"), sp::region("b"));
    let mut guards = Vec::with_capacity(depth as usize);
    for i in 0..depth {
        guards.push(if i % 2 == 0 { a.enter() } else { b.enter() });
    }
    while guards.pop().is_some() {}
    let results = sp::finalize().map_err(|e| format!("finalize: {e}"))?;
    let text = results.to_string();
    ensure(text.contains("deeper nodes"), || {
        "a deep tree printed unfolded".into()
    })?;
    let (counts, _) = file_counts(&path)?;
    let calls: u64 = counts.values().sum();
    ensure(calls == depth, || {
        format!("{calls} calls in the file, {depth} made")
    })?;
    say(&format!("peak {}", peak_rss()));
    Ok(())
}

/// `many-names distinct|one N DIR`: N calls, each of its own region
/// (`distinct`) or all of one region (`one`, the same calls without the
/// names: the difference between the two is the cost of the names),
/// finalized to a file (compression off); prints the peak RSS growth over
/// the baseline before the session, the bytes of the names, and checks the
/// file has the rows it should.
pub fn many_names(how: &str, n: u64, dir: &Path) -> Outcome {
    let path = dir.join("names.h5");
    let names: Vec<String> = match how {
        "distinct" => (0..n).map(|i| format!("region/{i:08}")).collect(),
        "one" => vec!["region/00000000".to_string(); n as usize],
        _ => return Err(format!("many-names {how}: distinct or one").into()),
    };
    let name_bytes: u64 = names.iter().map(|s| s.len() as u64).sum();
    let name_bytes = if how == "one" { 15 } else { name_bytes };
    sp::setup(Options::new().file_path(&path).verbose(false)).map_err(|e| format!("setup: {e}"))?;
    let baseline = peak_rss();
    for name in &names {
        sp::region(name).run(|| ());
    }
    let recorded = peak_rss();
    let t0 = std::time::Instant::now();
    sp::finalize().map_err(|e| format!("finalize: {e}"))?;
    let finalize = t0.elapsed();
    let peak = peak_rss();
    let profile = sp::read_profile(&path).map_err(|e| format!("read: {e}"))?;
    let rows = if how == "one" { 1 } else { n };
    ensure(profile.rows.len() as u64 == rows, || {
        format!("{} rows, {rows} expected", profile.rows.len())
    })?;
    say(&format!(
        "names {n} name_bytes {name_bytes} recording_growth {} peak_growth {} finalize_ms {}",
        recorded - baseline,
        peak - baseline,
        finalize.as_millis()
    ));
    Ok(())
}
