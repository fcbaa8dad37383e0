//! `perf-fd-limit DIR`: a thread that cannot open its perf group (no file
//! descriptor left: RLIMIT_NOFILE reached) records a call in a session
//! counting `task-clock`; another thread, with descriptors again, records
//! one too. Checks that `finalize` names the first thread in
//! `health().perf_events_not_counted` and in the file's metadata
//! `perf_events_not_counted`, and not the second; the warning is on
//! stderr for the parent to check. Exits 77 without perf software events.

use std::path::Path;

use scope_profiler::{self as sp, Options, Value};

use super::{Outcome, UNSUPPORTED, ensure, say};

/// The RLIMIT_NOFILE soft limit, set to `soft` (`None`: the hard limit);
/// the one before.
fn set_nofile(soft: Option<u64>) -> Result<u64, String> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(format!("getrlimit: {}", std::io::Error::last_os_error()));
    }
    let before: u64 = limit.rlim_cur;
    limit.rlim_cur = soft.map_or(limit.rlim_max, |s| s as libc::rlim_t);
    // SAFETY: setrlimit reads the struct we pass.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
        return Err(format!("setrlimit: {}", std::io::Error::last_os_error()));
    }
    Ok(before)
}

/// Records one call of `region` on a new thread named `name`.
fn record_on(name: &str, region: &'static str) {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            sp::region(region).run(|| std::hint::black_box(0));
        })
        .expect("a thread")
        .join()
        .expect("it records");
}

pub fn perf_fd_limit(dir: &Path) -> Outcome {
    let path = dir.join("perf.h5");
    let options = Options::new()
        .file_path(&path)
        .verbose(false)
        .perf_events(["task-clock"]);
    let run = match sp::setup(options) {
        Ok(run) => run,
        Err(e) => {
            say(&format!("no perf software events here: {e}"));
            std::process::exit(UNSUPPORTED.into());
        }
    };
    // Every descriptor below a low limit taken: the next open fails.
    let open = std::fs::read_dir("/proc/self/fd")
        .map_err(|e| e.to_string())?
        .count() as u64;
    let old = set_nofile(Some(open + 8))?;
    let mut fillers = Vec::new();
    while let Ok(f) = std::fs::File::open("/dev/null") {
        fillers.push(f);
    }
    record_on("no-fd-left", "child/starved");
    drop(fillers);
    set_nofile(Some(old))?;
    record_on("with-fds", "child/counted");
    let results = run.finalize().map_err(|e| format!("finalize: {e}"))?;
    let not_counted = &results.health().perf_events_not_counted;
    say(&format!("not counted: {not_counted:?}"));
    ensure(not_counted.len() == 1, || {
        format!("one thread could not count: {not_counted:?}")
    })?;
    ensure(
        not_counted[0].contains("no-fd-left") && not_counted[0].contains("os error 24"),
        || format!("names the thread and EMFILE: {not_counted:?}"),
    )?;
    let profile = sp::read_profile(&path).map_err(|e| e.to_string())?;
    let in_file = profile
        .metadata
        .iter()
        .find(|(k, _)| k == "perf_events_not_counted")
        .map(|(_, v)| v.clone());
    ensure(
        matches!(&in_file, Some(Value::Str(s)) if s.contains("no-fd-left") && !s.contains("with-fds")),
        || format!("the file's metadata: {in_file:?}"),
    )?;
    // Both threads' calls are recorded: only their perf counts differ.
    for region in ["child/starved", "child/counted"] {
        ensure(results.statistics_of(region).is_some(), || {
            format!("{region} recorded")
        })?;
    }
    Ok(())
}
