//! `sp-child`: a helper process for the reliability tests (`tests/reliability.rs`).
//!
//! What a test cannot do to its own process (kill it with SIGKILL in the
//! middle of `finalize`, lower its file size limit, give it a full disk, drop
//! its privileges) it does to this program, chosen by the first argument:
//!
//! - `record-and-finalize PATH N [MEMORY_LIMIT]`: records `N` nested calls
//!   into a session writing `PATH` (spilling past `MEMORY_LIMIT` bytes, if
//!   given), prints `recorded`, then `finalizing` right before
//!   `finalize()` and `done` after it (each line flushed), so the parent can
//!   time a `kill -9` during the write.
//! - `fsize-limit PATH OTHER N LIMIT_BYTES`: records `N` calls, lowers the
//!   RLIMIT_FSIZE soft limit to `LIMIT_BYTES` (SIGXFSZ ignored, so writes fail
//!   with EFBIG), checks that `finalize()` is an `Err` naming `PATH`, that the
//!   file already at `PATH` is unchanged and nothing else was left beside it,
//!   then raises the limit and checks that `finalize_to(OTHER)` writes every call.
//! - `disk-full DIR N`: in a private mount namespace, mounts a small tmpfs on
//!   `DIR/full`, writes a first profile there, records `N` calls, checks that
//!   `finalize()` fails with ENOSPC naming the path, the first file is unchanged
//!   and alone, and `finalize_to(DIR/rescued.h5)` (outside the tmpfs) writes
//!   every call. Exits 77 when mount namespaces are not available.
//! - `no-permission DIR`: drops root privileges (to `nobody`) if it has them,
//!   then checks that `setup` and `finalize_to` refuse a path in the
//!   unwritable `DIR`, naming it, and that the session survives the refusal.
//!   Exits 77 when privileges cannot be dropped.
//!
//! - `nul-name DIR`: records a region whose name contains NUL and one plain
//!   region, and checks that `finalize` still writes `DIR/nul.h5` with both
//!   calls (the NUL name may be stored altered).
//!
//! - The modes of `config.rs` (`Options::from_env`, `from_toml`,
//!   `setup_from_env` in an environment of the test's): see that module.
//!
//! - `perf-fd-limit DIR` (Linux): see `perf.rs`.
//!
//! - The modes of `faults.rs` (spill failures, the disk limit, `fork()`, a
//!   failed finalize while a thread records): see that module.
//!
//! Exit status 0 means every check held; 1 a failed check (the reason is on
//! stderr); 2 a usage error; 77 "cannot run here".

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod config;
mod faults;
#[cfg(target_os = "linux")]
mod perf;

use integration_tests::calls_per_region;
use scope_profiler::{self as sp, Compression, Options};

/// Exit code for "this check cannot run in this environment".
const UNSUPPORTED: u8 = 77;

/// Region names of [`record`]: calls per iteration, in nesting order.
const OUTER: &str = "child/outer";
const MID: &str = "child/mid";
const LEAF: &str = "child/leaf";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let outcome = match args.as_slice() {
        ["record-and-finalize", path, n] => record_and_finalize(Path::new(path), num(n), None),
        ["record-and-finalize", path, n, limit] => {
            record_and_finalize(Path::new(path), num(n), Some(num(limit)))
        }
        ["fsize-limit", path, other, n, limit] => {
            fsize_limit(Path::new(path), Path::new(other), num(n), num(limit), false)
        }
        ["fsize-limit-spilled", path, other, n, limit] => {
            fsize_limit(Path::new(path), Path::new(other), num(n), num(limit), true)
        }
        ["disk-full", dir, n] => disk_full(Path::new(dir), num(n)),
        ["no-permission", dir] => no_permission(Path::new(dir)),
        ["nul-name", dir] => nul_name(Path::new(dir)),
        ["spill-fail", policy, how, dir, n] => {
            faults::spill_fail(policy, how, Path::new(dir), num(n))
        }
        ["disk-limit", dir, n] => faults::disk_limit(Path::new(dir), num(n)),
        #[cfg(target_os = "linux")]
        ["perf-fd-limit", dir] => perf::perf_fd_limit(Path::new(dir)),
        ["deep-chain", depth, dir] => faults::deep_chain(num(depth), Path::new(dir)),
        ["many-names", how, n, dir] => faults::many_names(how, num(n), Path::new(dir)),
        ["fork", dir] => faults::fork(Path::new(dir)),
        ["env-options"] => config::env_options(None),
        ["env-options", label] => config::env_options(Some(label)),
        ["from-toml", path] => config::from_toml(Path::new(path)),
        ["setup-from-env", n] => config::setup_from_env(num(n)),
        ["failed-finalize-while-recording", dir] => {
            faults::failed_finalize_while_recording(Path::new(dir))
        }
        _ => {
            eprintln!(
                "usage: sp-child record-and-finalize PATH N [MEMORY_LIMIT] | fsize-limit[-spilled] PATH OTHER N LIMIT \
                 | disk-full DIR N | no-permission DIR | nul-name DIR \
                 | spill-fail keep|drop removed-dir|fsize DIR N | disk-limit DIR N | fork DIR \
                 | failed-finalize-while-recording DIR | deep-chain DEPTH DIR | many-names distinct|one N DIR \
                 | env-options [LABEL] | from-toml PATH | setup-from-env N"
            );
            return ExitCode::from(2);
        }
    };
    match outcome {
        Ok(()) => {
            say("ok");
            ExitCode::SUCCESS
        }
        Err(Failure::Unsupported(why)) => {
            eprintln!("sp-child: unsupported here: {why}");
            ExitCode::from(UNSUPPORTED)
        }
        Err(Failure::Check(why)) => {
            eprintln!("sp-child: FAIL: {why}");
            ExitCode::FAILURE
        }
    }
}

enum Failure {
    /// The environment cannot run this check (exit 77).
    Unsupported(String),
    /// A check failed (exit 1).
    Check(String),
}

impl From<String> for Failure {
    fn from(why: String) -> Self {
        Failure::Check(why)
    }
}

type Outcome = Result<(), Failure>;

/// Fails the check with `why` unless `ok`.
fn ensure(ok: bool, why: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(why()) }
}

fn num(s: &str) -> u64 {
    s.parse()
        .unwrap_or_else(|_| panic!("not a number: {s:?} (usage: see the module docs)"))
}

/// Prints a progress line and flushes it at once (stdout is a pipe).
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Records about `n` calls (rounded up to whole iterations of 4 calls):
/// `child/outer { child/mid { child/leaf, child/leaf } }`. Returns the exact
/// number of calls per region.
fn record(n: u64) -> BTreeMap<&'static str, u64> {
    let iterations = n.div_ceil(4);
    for _ in 0..iterations {
        sp::scope!(OUTER);
        sp::scope!(MID);
        for _ in 0..2 {
            sp::scope!(LEAF);
        }
    }
    BTreeMap::from([
        (OUTER, iterations),
        (MID, iterations),
        (LEAF, 2 * iterations),
    ])
}

/// Calls per region name in the file at `path`, and its total event count.
fn file_counts(path: &Path) -> Result<(BTreeMap<String, u64>, usize), String> {
    let p = sp::read_profile(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok((calls_per_region(&p), p.events.len()))
}

/// `path` holds exactly the calls `expected` says.
fn check_file(path: &Path, expected: &BTreeMap<&'static str, u64>) -> Result<(), String> {
    let (counts, events) = file_counts(path)?;
    let want: BTreeMap<String, u64> = expected.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    ensure(counts == want, || {
        format!("{}: counts {counts:?}, expected {want:?}", path.display())
    })?;
    let total: u64 = expected.values().sum();
    ensure(events as u64 == total, || {
        format!("{}: {events} events, expected {total}", path.display())
    })
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Result<Vec<String>, String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    names.sort();
    Ok(names)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn record_and_finalize(path: &Path, n: u64, memory_limit: Option<u64>) -> Outcome {
    let mut options = Options::new().file_path(path).verbose(false);
    if let Some(limit) = memory_limit {
        options = options.memory_limit(limit as usize);
    }
    sp::setup(options).map_err(|e| format!("setup: {e}"))?;
    let expected = record(n);
    say("recorded");
    say("finalizing");
    sp::finalize().map_err(|e| format!("finalize: {e}"))?;
    say("done");
    // Only reached when nobody killed us: the file is complete.
    check_file(path, &expected)?;
    Ok(())
}

/// Sets the soft RLIMIT_FSIZE, keeping the hard limit; returns the hard limit.
fn set_fsize_soft_limit(soft: Option<u64>) -> Result<libc::rlim_t, String> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut limit) } != 0 {
        return Err(format!("getrlimit: {}", std::io::Error::last_os_error()));
    }
    limit.rlim_cur = soft.map_or(limit.rlim_max, |s| s as libc::rlim_t);
    // SAFETY: setrlimit reads the struct we pass.
    if unsafe { libc::setrlimit(libc::RLIMIT_FSIZE, &limit) } != 0 {
        return Err(format!("setrlimit: {}", std::io::Error::last_os_error()));
    }
    Ok(limit.rlim_max)
}

fn fsize_limit(path: &Path, other: &Path, n: u64, limit: u64, spilled: bool) -> Outcome {
    let dir = path.parent().expect("PATH has a directory");
    let before = read(path)?;
    let before_listing = listing(dir)?;
    let options = Options::new().file_path(path).verbose(false);
    let options = if spilled {
        // Spilled records (a few bytes a call, under the limit), then a
        // compressed file whose placed calls go to scratch (about 6 bytes a
        // call, past it): the placing walk fails while the other walk still
        // has blocks to hand on.
        options.compression(Compression::Auto).memory_limit(4 << 20)
    } else {
        // Far below the memory limit: nothing is spilled, everything stays
        // in memory.
        options.compression(Compression::None).memory_limit(1 << 30)
    };
    let run = sp::setup(options).map_err(|e| format!("setup: {e}"))?;
    let expected = record(n);

    // SAFETY: ignoring SIGXFSZ has no preconditions; writes past the limit
    // then fail with EFBIG instead of killing the process.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    set_fsize_soft_limit(Some(limit))?;
    let outcome = sp::finalize();
    set_fsize_soft_limit(None)?;
    let err = match outcome {
        Ok(_) => {
            return Err(format!(
                "finalize succeeded under a {limit}-byte file size limit ({n} calls)"
            )
            .into());
        }
        Err(e) => e.to_string(),
    };
    say(&format!("finalize failed as expected: {err}"));
    // The file, or (placing in scratch) its directory.
    let named = if spilled { dir } else { path };
    ensure(err.contains(&named.display().to_string()), || {
        format!("the error does not name {}: {err}", named.display())
    })?;
    ensure(read(path)? == before, || {
        format!("{} changed after the failed finalize", path.display())
    })?;
    ensure(listing(dir)? == before_listing, || {
        format!(
            "after the failed finalize {} holds {:?}, before it {before_listing:?}",
            dir.display(),
            listing(dir).unwrap_or_default()
        )
    })?;
    sp::read_profile(path).map_err(|e| format!("the previous file is unreadable: {e}"))?;

    // Everything is still recorded: a later finalize elsewhere writes it all.
    let results = run
        .finalize_to(other)
        .map_err(|e| format!("finalize_to after the limit was raised: {e}"))?;
    check_file(other, &expected)?;
    ensure(!spilled || results.health().spilled_bytes > 0, || {
        "nothing was spilled".to_owned()
    })?;
    ensure(read(path)? == before, || {
        format!("{} changed", path.display())
    })?;
    let mut want = before_listing.clone();
    if other.parent() == Some(dir) {
        want.push(file_name(other));
        want.sort();
    }
    let now = listing(dir)?;
    ensure(now == want, || {
        format!(
            "after finalize_to {} holds {now:?}, expected {want:?}",
            dir.display()
        )
    })?;
    Ok(())
}

/// Enters a private mount namespace, so mounts made here vanish with us.
fn private_mount_namespace() -> Outcome {
    // SAFETY: plain syscalls; this process is still single-threaded.
    if unsafe { libc::unshare(libc::CLONE_NEWNS) } != 0 {
        return Err(Failure::Unsupported(format!(
            "unshare(CLONE_NEWNS): {}",
            std::io::Error::last_os_error()
        )));
    }
    let root = c"/";
    // SAFETY: valid NUL-terminated strings; null fstype and data are allowed
    // for a propagation change.
    let rc = unsafe {
        libc::mount(
            std::ptr::null(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        return Err(Failure::Unsupported(format!(
            "making / private: {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}

fn mount_tmpfs(dir: &Path, bytes: u64) -> Outcome {
    use std::os::unix::ffi::OsStrExt;
    let target = std::ffi::CString::new(dir.as_os_str().as_bytes()).expect("no NUL in path");
    let options = std::ffi::CString::new(format!("size={bytes}")).expect("no NUL");
    // SAFETY: valid NUL-terminated strings that outlive the call.
    let rc = unsafe {
        libc::mount(
            c"tmpfs".as_ptr(),
            target.as_ptr(),
            c"tmpfs".as_ptr(),
            0,
            options.as_ptr().cast(),
        )
    };
    if rc != 0 {
        return Err(Failure::Unsupported(format!(
            "mount tmpfs on {}: {}",
            dir.display(),
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}

fn disk_full(dir: &Path, n: u64) -> Outcome {
    let full = dir.join("full");
    std::fs::create_dir_all(&full).map_err(|e| format!("mkdir {}: {e}", full.display()))?;
    private_mount_namespace()?;
    // 256 KiB: room for a small profile, not for N calls uncompressed.
    mount_tmpfs(&full, 256 << 10)?;
    let path = full.join("out.h5");

    // The previous profile at the path.
    sp::setup(Options::new().file_path(&path).verbose(false))
        .map_err(|e| format!("first setup: {e}"))?;
    let first = record(40);
    sp::finalize().map_err(|e| format!("first finalize: {e}"))?;
    check_file(&path, &first)?;
    let before = read(&path)?;

    let run = sp::setup(
        Options::new()
            .file_path(&path)
            .verbose(false)
            .compression(Compression::None)
            .memory_limit(1 << 30),
    )
    .map_err(|e| format!("setup: {e}"))?;
    let expected = record(n);
    let err = match sp::finalize() {
        Ok(_) => {
            return Err(format!("finalize of {n} calls succeeded on a 256 KiB tmpfs").into());
        }
        Err(e) => e.to_string(),
    };
    say(&format!("finalize failed as expected: {err}"));
    ensure(err.contains(&path.display().to_string()), || {
        format!("the error does not name {}: {err}", path.display())
    })?;
    ensure(read(&path)? == before, || {
        "the previous file changed after the failed finalize".to_owned()
    })?;
    let left = listing(&full)?;
    ensure(left == ["out.h5"], || {
        format!("after the failed finalize the full disk holds {left:?}")
    })?;
    check_file(&path, &first)?;

    // Nothing was lost: the session is still active with every call.
    let rescued = dir.join("rescued.h5");
    run.finalize_to(&rescued)
        .map_err(|e| format!("finalize_to {}: {e}", rescued.display()))?;
    check_file(&rescued, &expected)?;
    let left = listing(&full)?;
    ensure(left == ["out.h5"], || {
        format!("after finalize_to the full disk holds {left:?}")
    })?;
    Ok(())
}

/// Drops root privileges to `nobody`, if this process has them.
fn drop_privileges() -> Outcome {
    // SAFETY: plain syscalls without pointers.
    unsafe {
        if libc::geteuid() != 0 {
            return Ok(());
        }
        if libc::setgroups(0, std::ptr::null()) != 0
            || libc::setgid(65534) != 0
            || libc::setuid(65534) != 0
        {
            return Err(Failure::Unsupported(format!(
                "cannot drop root privileges: {}",
                std::io::Error::last_os_error()
            )));
        }
        if libc::geteuid() == 0 {
            return Err(Failure::Unsupported("still root after setuid".into()));
        }
    }
    Ok(())
}

fn no_permission(dir: &Path) -> Outcome {
    drop_privileges()?;
    let path: PathBuf = dir.join("x.h5");
    // A probe: can this user create files in DIR after all?
    let probe = dir.join("probe");
    if std::fs::write(&probe, b"").is_ok() {
        let _ = std::fs::remove_file(&probe);
        return Err(Failure::Unsupported(format!(
            "{} is writable for this user",
            dir.display()
        )));
    }
    let err = match sp::setup(Options::new().file_path(&path).verbose(false)) {
        Ok(_) => return Err(format!("setup accepted {}", path.display()).into()),
        Err(e) => e,
    };
    ensure(matches!(err, sp::Error::InvalidPath { .. }), || {
        format!("setup: not InvalidPath: {err:?}")
    })?;
    let text = err.to_string();
    ensure(text.contains(&path.display().to_string()), || {
        format!("setup's error does not name the path: {text}")
    })?;
    ensure(matches!(sp::finalize(), Err(sp::Error::NotActive)), || {
        "a refused setup started a session".to_owned()
    })?;

    // finalize_to refuses it too, and the session goes on with its data.
    let run =
        sp::setup(Options::new().in_memory().verbose(false)).map_err(|e| format!("setup: {e}"))?;
    sp::region("kept").run(|| ());
    let err = match run.finalize_to(&path) {
        Ok(_) => return Err(format!("finalize_to accepted {}", path.display()).into()),
        Err(e) => e.to_string(),
    };
    ensure(err.contains(&path.display().to_string()), || {
        format!("finalize_to's error does not name the path: {err}")
    })?;
    sp::region("kept").run(|| ());
    let results = sp::finalize().map_err(|e| format!("finalize in memory: {e}"))?;
    let calls = results.profile().map_or(0, |p| p.events.len());
    ensure(calls == 2, || {
        format!("{calls} calls after the refused finalize_to, expected 2")
    })?;
    let left = listing(dir)?;
    ensure(left.is_empty(), || {
        format!("the unwritable directory holds {left:?}")
    })?;
    Ok(())
}

fn nul_name(dir: &Path) -> Outcome {
    let path = dir.join("nul.h5");
    sp::setup(Options::new().file_path(&path).verbose(false)).map_err(|e| format!("setup: {e}"))?;
    sp::region("before\0after").run(|| ());
    sp::region("plain").run(|| ());
    sp::finalize().map_err(|e| format!("finalize with a NUL in one name: {e}"))?;
    let p = sp::read_profile(&path).map_err(|e| format!("read: {e}"))?;
    ensure(p.events.len() == 2, || {
        format!("{} calls, expected 2", p.events.len())
    })?;
    ensure(p.region_names.iter().any(|n| n == "plain"), || {
        format!("names {:?}", p.region_names)
    })?;
    Ok(())
}
