//! Untrusted files are read in a child process that this one watches.
//!
//! `scope-prof` opens files that people mail each other and pull off
//! clusters. The reader is pure Rust (the `rust-hdf5` crate, then the
//! checks of `scope-profiler-hdf5`; the HDF5 C library, which crashed and
//! looped on crafted files, is compiled only with the MPI writers, which
//! this binary leaves out), and `tests/hostile.rs` reads thousands of
//! corrupt files in one process without a panic, a hang or a large
//! allocation. The watched child stays as a second guard, for what
//! `catch_unwind` cannot contain: a loop, a stack overflow or an
//! allocation no check bounded, in a young parser (`rust-hdf5` 0.7) or in
//! ours. It costs one process start per command (about 10 ms). So the
//! command runs twice: `main` first calls [`supervise`], which
//! re-executes `scope-prof` with the same arguments and the environment
//! variable [`CHILD`] set, waits for it and exits with its exit code. The
//! child (where [`supervise`] returns `None`) does the work, and names each
//! file it opens ([`opening`]) in a small file the parent reads if the child
//! dies by a signal: then the parent says which file crashed it, as one
//! line on stderr, and exits with code 2, as for any unreadable input. A
//! file whose opening (reading its index, which takes milliseconds) lasts
//! longer than [`TIMEOUT`] seconds (60) has the child killed, with the same
//! kind of message: the reader has looped in a corrupt file's structures.
//! Reading the events is not timed (a big file takes long); a hang there
//! stays possible.
//!
//! The child's address space is capped ([`limit_memory`]): 4 GiB plus 64
//! times the size of the files it has opened, or [`MEMORY`] MiB: an
//! allocation past it, on the word of a corrupt file that no check
//! bounded, aborts the child instead of taking the machine's memory.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

/// Set in the child's environment: the file in which it names the profile
/// it is reading.
pub(crate) const CHILD: &str = "SCOPE_PROF_CHILD_STATUS";

/// In the parent: runs the command in a child and returns the exit code
/// to exit with. `None` in the child (or when no child can be started):
/// the caller does the work itself.
pub(crate) fn supervise() -> Option<ExitCode> {
    if std::env::var_os(CHILD).is_some() {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    let status_file = status_path();
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let mut child = Command::new(&exe)
        .args(&args)
        .env(CHILD, &status_file)
        .spawn()
        // No child (no process left, say): do the work here, unwatched.
        .ok()?;
    let limit = open_timeout();
    let mut opening_since: Option<(String, Instant)> = None;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => {}
            Err(e) => break Err(e),
        }
        // A file being opened for longer than the limit: the reader is stuck
        // in a corrupt file's structures (a loop in its global heap, say).
        let now = std::fs::read_to_string(&status_file).ok();
        match now.as_deref().and_then(|s| s.strip_prefix(OPENING)) {
            Some(file) => match &opening_since {
                Some((same, since)) if same == file => {
                    if since.elapsed() > limit {
                        let _ = child.kill();
                        let _ = child.wait();
                        let _ = std::fs::remove_file(&status_file);
                        eprintln!(
                            "scope-prof: error: {file} is not a readable scope-profiler profile \
                             (the reader did not finish opening it in {} s: the file is \
                             corrupt; {TIMEOUT} sets the limit)",
                            limit.as_secs()
                        );
                        return Some(ExitCode::from(2));
                    }
                }
                _ => opening_since = Some((file.to_owned(), Instant::now())),
            },
            None => opening_since = None,
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let reading = std::fs::read_to_string(&status_file).ok();
    let _ = std::fs::remove_file(&status_file);
    let reading = reading.map(|s| {
        s.strip_prefix(OPENING)
            .or_else(|| s.strip_prefix(READING))
            .unwrap_or(&s)
            .to_owned()
    });
    let status = match status {
        Ok(status) => status,
        Err(e) => {
            eprintln!("scope-prof: error: cannot wait for the reading process: {e}");
            return Some(ExitCode::from(2));
        }
    };
    Some(match (status.code(), signal(&status)) {
        (Some(code), _) => ExitCode::from(u8::try_from(code).unwrap_or(2)),
        (None, signal) => {
            eprintln!(
                "scope-prof: error: {}",
                crash_message(
                    reading.as_deref(),
                    signal,
                    std::env::var_os(MEMORY).is_some()
                )
            );
            ExitCode::from(2)
        }
    })
}

/// The status file's prefix while a file is opened (its index read).
const OPENING: &str = "opening ";
/// The status file's prefix once it is open (its events read on demand).
const READING: &str = "reading ";
/// The environment variable that sets how long opening one file may take,
/// in seconds (60 by default).
pub(crate) const TIMEOUT: &str = "SCOPE_PROF_OPEN_TIMEOUT";

/// How long opening one file may take.
fn open_timeout() -> Duration {
    let seconds = std::env::var(TIMEOUT)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(60);
    Duration::from_secs(seconds.max(1))
}

/// In the child: runs `open` (the opening of `path`), naming the file in
/// the status file first, as being opened, then as being read.
pub(crate) fn opening<T>(path: &Path, open: impl FnOnce() -> T) -> T {
    let status = std::env::var_os(CHILD);
    if status.is_some() {
        limit_memory(path);
    }
    let note = |prefix: &str| {
        if let Some(status) = &status {
            let mut text = prefix.as_bytes().to_vec();
            text.extend_from_slice(path.as_os_str().as_encoded_bytes());
            let _ = std::fs::write(status, text);
        }
    };
    note(OPENING);
    let opened = open();
    note(READING);
    opened
}

/// The environment variable that sets the reading process's memory (its
/// address space) in MiB; 0: no limit.
pub(crate) const MEMORY: &str = "SCOPE_PROF_MEMORY_LIMIT";

/// The cap without [`MEMORY`]: this much, plus [`PER_FILE_BYTE`] times the
/// bytes of every file opened (a report holds ~48 bytes a call; a file
/// stores a call in 2-10).
const BASE_LIMIT: u64 = 4 << 30;
const PER_FILE_BYTE: u64 = 64;

/// In the child: caps the address space for the files opened so far and
/// `path` (see the module's docs). Where the OS has no such cap, or the
/// hard limit is lower, the reading goes on (a warning says so once).
fn limit_memory(path: &Path) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static OPENED_BYTES: AtomicU64 = AtomicU64::new(0);
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    let opened = OPENED_BYTES.fetch_add(size, Ordering::Relaxed) + size;
    let limit = match std::env::var(MEMORY).ok().map(|v| v.trim().parse::<u64>()) {
        Some(Ok(0)) => return,
        Some(Ok(mib)) => mib.saturating_mul(1 << 20),
        _ => BASE_LIMIT.saturating_add(opened.saturating_mul(PER_FILE_BYTE)),
    };
    if let Err(e) = scope_profiler_reader::ProfileReader::limit_address_space(limit) {
        static WARNED: std::sync::Once = std::sync::Once::new();
        WARNED.call_once(|| {
            if e.kind() != std::io::ErrorKind::Unsupported {
                eprintln!("scope-prof: warning: cannot limit the reading's memory: {e}");
            }
        });
    }
}

/// A unique path for the child's status file, in the temporary directory.
fn status_path() -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    std::env::temp_dir().join(format!("scope-prof-{}-{nanos}.reading", std::process::id()))
}

/// The signal that ended the child, if one did (Unix).
fn signal(status: &std::process::ExitStatus) -> Option<i32> {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        status.signal()
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        None
    }
}

/// The one line that says the child died by `signal` while reading the
/// file named `reading` (if it was reading one); `capped`: the user set
/// the reading's memory ([`MEMORY`]), which may be why.
fn crash_message(reading: Option<&str>, signal: Option<i32>, capped: bool) -> String {
    let aborted = signal == Some(6);
    let signal = match signal {
        Some(n) => format!("signal {n}{}", signal_name(n)),
        None => "no exit code".to_owned(),
    };
    let cause = match aborted || capped {
        true => {
            format!("the file is corrupt, or reading it needs more memory than {MEMORY} allows")
        }
        false => "the file is corrupt".to_owned(),
    };
    match reading {
        Some(file) if !file.is_empty() && aborted => format!(
            "{file} is not a readable scope-profiler profile (reading it aborted: {signal}; \
             {cause})"
        ),
        Some(file) if !file.is_empty() => format!(
            "{file} is not a readable scope-profiler profile (reading it crashed the reading \
             process: {signal}); {cause}"
        ),
        _ => format!("scope-prof crashed ({signal})"),
    }
}

/// ", SIGSEGV" for the signals a crash gives; "" for others.
fn signal_name(n: i32) -> &'static str {
    match n {
        4 => ", SIGILL",
        6 => ", SIGABRT",
        7 => ", SIGBUS",
        8 => ", SIGFPE",
        9 => ", SIGKILL",
        11 => ", SIGSEGV",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crash_names_the_file_being_read_and_the_signal() {
        assert_eq!(
            crash_message(Some("x.h5"), Some(11), false),
            "x.h5 is not a readable scope-profiler profile (reading it crashed the reading \
             process: signal 11, SIGSEGV); the file is corrupt"
        );
        assert_eq!(
            crash_message(Some("x.h5"), Some(6), false),
            "x.h5 is not a readable scope-profiler profile (reading it aborted: signal 6, \
             SIGABRT; the file is corrupt, or reading it needs more memory than \
             SCOPE_PROF_MEMORY_LIMIT allows)"
        );
        assert_eq!(
            crash_message(None, Some(6), false),
            "scope-prof crashed (signal 6, SIGABRT)"
        );
        assert!(crash_message(Some("x.h5"), Some(11), true).ends_with(
            "SIGSEGV); the file is corrupt, or reading it needs more memory than \
                 SCOPE_PROF_MEMORY_LIMIT allows"
        ));
    }
}
