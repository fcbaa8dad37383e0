//! Every call into the operating system, in one place.
//!
//! Two implementations with one interface: `linux` (through `libc`: the
//! CLOCK_MONOTONIC and thread CPU clocks, kernel thread ids, anonymous
//! mappings with transparent huge pages, `pthread_atfork`, `statvfs`,
//! `uname`, the password database) and `portable` (the standard library
//! only), which every other OS compiles, and which Linux compiles too under
//! `RUSTFLAGS="--cfg scope_profiler_portable"` so that CI builds and tests
//! it here. No other module names `libc` (tests/layers.rs checks it).
//!
//! What the portable implementation does differently:
//! - timestamps are nanoseconds since the process first read the clock
//!   (`std::time::Instant`), not CLOCK_MONOTONIC, so they do not line up
//!   with another language's `perf_counter_ns`; no thread CPU time;
//! - thread ids are a per-process counter, not the kernel's;
//! - chunk memory comes from the global allocator (page aligned): no huge
//!   pages, and a discarded chunk keeps its pages until it is dropped;
//! - no fork handling: a child forked while a session is active inherits it;
//! - no perf counters and no sampling (`PerfGroup::open` and
//!   `Sampler::open` fail: perf events are an error at `setup`);
//! - free disk space is unknown, so the default disk limit is the fixed
//!   fallback, not half the free space;
//! - the host description comes from the environment (`HOSTNAME`,
//!   `COMPUTERNAME`) and `std::env::consts`.
//!
//! Positional file I/O, scratch files and directory syncs are std on both,
//! chosen by `unix`/`windows`.

#[cfg(all(target_os = "linux", not(scope_profiler_portable)))]
mod linux;
#[cfg(all(target_os = "linux", not(scope_profiler_portable)))]
use linux as os;

#[cfg(not(all(target_os = "linux", not(scope_profiler_portable))))]
mod portable;
#[cfg(not(all(target_os = "linux", not(scope_profiler_portable))))]
use portable as os;

use std::fs::File;
use std::io;
use std::path::Path;
use std::ptr::NonNull;

/// Which implementation this build uses: `"linux"` or `"portable"`.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) const IMPLEMENTATION: &str = os::NAME;

/// Bytes of a huge page: mappings of a multiple of it are aligned to it
/// (and, on Linux, offered to transparent huge pages).
pub(crate) const HUGE_PAGE: usize = 2 << 20;

/// Asks the CPU to bring `value`'s cache line in ahead of its reading (a
/// hint: it never faults, changes no value, and is nothing on targets
/// without the instruction). For a loop over memory other cores wrote.
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` only hints the cache; it reads nothing into
    // the program and never faults, whatever the address (here a live
    // reference). SSE is in the x86_64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (value as *const T).cast(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// The timeline of [`monotonic_ns`], as the file's `clock` metadata names
/// it: `"CLOCK_MONOTONIC"` on Linux (Python's `perf_counter_ns` there, so
/// profiles of one process line up), `"process"` in the portable build
/// (nanoseconds since the process first read the clock: another runtime's
/// timestamps do not line up with them).
pub(crate) const CLOCK: &str = os::CLOCK;

/// The monotonic clock now, in nanoseconds (on Linux CLOCK_MONOTONIC, the
/// timeline of Python's `perf_counter_ns`).
pub(crate) fn monotonic_ns() -> i64 {
    os::monotonic_ns()
}

/// CPU time of the calling thread, in nanoseconds; `None` where unknown
/// (the portable build).
///
/// ```
/// use scope_profiler_core::internal::platform::thread_cpu_ns;
/// if let (Some(a), Some(b)) = (thread_cpu_ns(), thread_cpu_ns()) {
///     assert!(a <= b);
/// }
/// ```
pub fn thread_cpu_ns() -> Option<i64> {
    os::thread_cpu_ns()
}

/// The calling thread's id as the OS tools show it (the kernel's tid on
/// Linux), or a per-process number.
pub(crate) fn native_thread_id() -> i64 {
    os::native_thread_id()
}

/// `bytes` (a multiple of the page size) of fresh writable memory for the
/// caller alone, aligned to [`HUGE_PAGE`] when `bytes` is a multiple of it;
/// `None` if the OS refused.
pub(crate) fn map_pages(bytes: usize) -> Option<NonNull<u8>> {
    os::map_pages(bytes)
}

/// Gives back memory from `map_pages`.
///
/// # Safety
/// `ptr` was returned by `map_pages(bytes)` with this same `bytes`, is
/// given back only once, and nothing uses it afterwards.
pub(crate) unsafe fn unmap_pages(ptr: NonNull<u8>, bytes: usize) {
    // SAFETY: the caller's contract is the implementation's.
    unsafe { os::unmap_pages(ptr, bytes) }
}

/// Tells the OS that the contents of memory from `map_pages` are no
/// longer needed: on Linux its pages are freed (`MADV_DONTNEED`) and read
/// as zeros later; elsewhere nothing happens. The memory stays valid and
/// writable either way.
///
/// # Safety
/// `ptr` was returned by `map_pages(bytes)` with this same `bytes` and is
/// not yet given back, and no one reads the contents afterwards without
/// writing them first (they may become zeros at any time).
pub unsafe fn discard_pages(ptr: NonNull<u8>, bytes: usize) {
    // SAFETY: the caller's contract is the implementation's.
    unsafe { os::discard_pages(ptr, bytes) }
}

/// Lets the OS take back the pages of memory from `map_pages` if it needs
/// memory, while they stay mapped (on Linux `MADV_FREE`: until the kernel
/// reclaims them, reads see the old contents and writes take no page fault;
/// after, reads see zeros). `true` if the OS accepted; elsewhere nothing is
/// done and the result is `false` (the pages stay as they are).
///
/// # Safety
/// As [`discard_pages`]: `ptr` was returned by `map_pages(bytes)` with this
/// same `bytes` and is not yet given back, and no one reads the contents
/// afterwards without writing them first.
pub(crate) unsafe fn free_lazily(ptr: NonNull<u8>, bytes: usize) -> bool {
    // SAFETY: the caller's contract is the implementation's.
    unsafe { os::free_lazily(ptr, bytes) }
}

/// Has `handler` run in the child after every `fork()`; `false` where the
/// OS has no such hook (then a forked child inherits the session).
/// `handler` must be async-signal-safe.
pub fn on_fork_child(handler: extern "C" fn()) -> bool {
    os::on_fork_child(handler)
}

/// Has the open descriptor `fd` (one a C library opened, such as HDF5's)
/// closed when the process executes another program; nothing where the
/// standard library cannot (then the descriptor stays open in programs the
/// process starts).
pub fn close_on_exec(fd: i32) -> io::Result<()> {
    os::close_on_exec(fd)
}

/// Caps this process's address space at `bytes` (`RLIMIT_AS`, never above
/// the hard limit), so that an allocation past it fails instead of taking
/// the machine's memory; `ErrorKind::Unsupported` where the OS (or this
/// build) has no such limit.
pub fn limit_address_space(bytes: u64) -> io::Result<()> {
    os::limit_address_space(bytes)
}

/// Bytes free for an unprivileged user in the file system holding `dir`;
/// `None` where unknown.
pub fn free_bytes(dir: &Path) -> Option<u64> {
    os::free_bytes(dir)
}

/// The host's name, or "" if unknown.
pub fn hostname() -> String {
    os::hostname()
}

/// `platform.uname()` joined as the Python package writes it: system, node,
/// release, version and machine ("" where unknown).
pub fn uname() -> String {
    os::uname()
}

/// `<system>-<release>-<machine>`, as Python's `platform.platform()` begins.
pub fn platform() -> String {
    os::platform()
}

/// The user name from the OS's user database (after the environment
/// variables, which the caller reads); "" if unknown.
pub fn user_from_database() -> String {
    os::user_from_database()
}

/// A new file at `path` (which must not exist) for reading and writing,
/// already removed from its directory or removed when it is closed, so that
/// nothing is left behind even if the process is killed (on Windows, when
/// the handle is closed, by the OS).
pub fn create_unlinked(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create_new(true);
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        // FILE_FLAG_DELETE_ON_CLOSE, with FILE_SHARE_DELETE among the
        // share modes (read, write, delete) so that it may be deleted.
        options.custom_flags(0x0400_0000).share_mode(0x7);
    }
    let file = options.open(path)?;
    #[cfg(not(windows))]
    std::fs::remove_file(path)?;
    Ok(file)
}

/// Writes all of `bytes` at byte `offset` of `file`.
pub fn write_all_at(file: &File, bytes: &[u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::write_all_at(file, bytes, offset)
    }
    #[cfg(windows)]
    {
        let (mut bytes, mut offset) = (bytes, offset);
        while !bytes.is_empty() {
            match std::os::windows::fs::FileExt::seek_write(file, bytes, offset) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    bytes = &bytes[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// Fills `bytes` from byte `offset` of `file`.
pub(crate) fn read_exact_at(file: &File, bytes: &mut [u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, bytes, offset)
    }
    #[cfg(windows)]
    {
        let (mut bytes, mut offset) = (bytes, offset);
        while !bytes.is_empty() {
            match std::os::windows::fs::FileExt::seek_read(file, bytes, offset) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    bytes = &mut bytes[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// A path from its bytes (`as_os_str().as_encoded_bytes()` of a path, sent
/// by another process of this program): the bytes themselves on Unix, else
/// read as UTF-8 (lossily).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub fn path_from_bytes(bytes: Vec<u8>) -> std::path::PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        std::ffi::OsString::from_vec(bytes).into()
    }
    #[cfg(not(unix))]
    {
        String::from_utf8_lossy(&bytes).into_owned().into()
    }
}

/// Makes a rename in `dir` durable. Filesystems that cannot fsync a
/// directory (some network and FUSE ones) are skipped, as Python does: the
/// file itself is already durable. Where directories cannot be opened as
/// files (Windows), the rename is all there is.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        let unsupported = |e: &io::Error| {
            matches!(
                e.kind(),
                io::ErrorKind::Unsupported
                    | io::ErrorKind::InvalidInput
                    | io::ErrorKind::PermissionDenied
            )
        };
        match File::open(dir).and_then(|d| d.sync_all()) {
            Err(e) if unsupported(&e) => Ok(()),
            result => result,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// Pages of `[ptr, ptr + bytes)` (page aligned) resident in memory, where
/// the platform can tell (tests of chunk memory).
#[cfg(test)]
pub(crate) fn resident_pages(ptr: NonNull<u8>, bytes: usize) -> Option<usize> {
    os::resident_pages(ptr, bytes)
}

/// Whether this build can count kernel and hardware events
/// (`perf_event_open`): Linux, not `scope_profiler_portable`.
pub const HAS_PERF_EVENTS: bool = cfg!(all(target_os = "linux", not(scope_profiler_portable)));

/// A group of perf counters of the calling thread (`perf_event_open` with
/// pid 0, cpu -1), read all at once; closed when dropped.
pub struct PerfGroup(os::PerfGroup);

impl PerfGroup {
    /// Opens one counter per `(type, config)` of `events` in one group; on
    /// failure, the index of the event the kernel refused and the errno.
    pub fn open(events: &[(u32, u64)]) -> Result<PerfGroup, (usize, i32)> {
        os::PerfGroup::open(events).map(PerfGroup)
    }

    /// The members' counts now, in the order opened, into `out`; `false`
    /// if the read failed.
    pub fn read(&self, out: &mut [u64]) -> bool {
        self.0.read(out)
    }
}

impl std::fmt::Debug for PerfGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PerfGroup")
    }
}

/// One sample of a thread's sampling event ([`Sampler`]), as the kernel
/// wrote it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    /// The thread's kernel id.
    pub tid: u32,
    /// CLOCK_MONOTONIC nanoseconds.
    pub time_ns: u64,
    /// The interrupted instruction's address.
    pub ip: u64,
    /// The return addresses of the user call chain, innermost first (the
    /// interrupted address excluded; empty without frame pointers).
    pub chain: Vec<u64>,
}

/// Return addresses of a sample's user call chain the kernel walks at most
/// (`sample_max_stack`): the innermost, as many as `sampling` keeps, so the
/// kernel's walk of a deep stack stops where the kept part does.
pub const SAMPLE_MAX_STACK: u16 = 64;

/// The calling thread's sampling event (`perf_event_open`'s `cpu-clock`,
/// user space only): the kernel writes a sample (address, thread, time on
/// CLOCK_MONOTONIC, user call chain) to a ring buffer `hz` times per
/// second of the thread's CPU time; any thread drains it. Closed when
/// dropped. The portable build has none (`open` fails with `ENOSYS`).
pub struct Sampler(os::Sampler);

impl Sampler {
    /// Opens the calling thread's event, its ring `pages` pages of data
    /// (a power of two); the errno if the kernel refused.
    pub fn open(hz: u32, pages: usize) -> Result<Sampler, i32> {
        os::Sampler::open(hz, pages).map(Sampler)
    }

    /// Hands `f` the samples written since the last drain, in order; the
    /// number the kernel lost (its ring was full).
    pub fn drain(&mut self, f: &mut dyn FnMut(&Sample)) -> u64 {
        self.0.drain(f)
    }
}

impl std::fmt::Debug for Sampler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sampler")
    }
}

/// A file mapped into the process with code in it: an executable, a shared
/// object, or a pseudo-file such as `[vdso]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Module {
    /// Its path (or the kernel's name for a pseudo-file).
    pub path: String,
    /// The address of its offset 0 (0 for a fixed-address executable): an
    /// address minus it is what `addr2line -e PATH` takes.
    pub base: u64,
    /// Its executable ranges, `[start, end)`.
    pub ranges: Vec<(u64, u64)>,
}

/// The files with code mapped into the process now (`/proc/self/maps` on
/// Linux; none in the portable build).
///
/// ```
/// let code = scope_profiler_core::internal::platform::modules();
/// assert!(code.iter().all(|m| !m.ranges.is_empty()));
/// ```
pub fn modules() -> Vec<Module> {
    os::modules()
}

/// A test cannot run what it means to test here: under `CI=true` that
/// fails; elsewhere it says so on stderr.
#[cfg(test)]
pub(crate) fn prerequisite_missing(why: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("a prerequisite is missing under CI=true: {why}");
    }
    eprintln!("SKIPPED (prerequisite missing): {why}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_is_monotonic() {
        let a = monotonic_ns();
        let b = monotonic_ns();
        assert!(0 < a || a == 0 && IMPLEMENTATION == "portable", "{a}");
        assert!(a <= b);
    }

    #[test]
    fn mapped_pages_are_aligned_writable_and_given_back() {
        for bytes in [4096, 3 * 4096, HUGE_PAGE, 2 * HUGE_PAGE] {
            let ptr = map_pages(bytes).unwrap();
            let align = if bytes % HUGE_PAGE == 0 {
                HUGE_PAGE
            } else {
                4096
            };
            assert_eq!(ptr.as_ptr() as usize % align, 0, "{bytes}");
            // SAFETY: `bytes` of fresh memory for this test alone.
            unsafe {
                ptr.as_ptr().write_bytes(0xAB, bytes);
                assert_eq!(*ptr.as_ptr().add(bytes - 1), 0xAB);
                discard_pages(ptr, bytes);
                // Still writable after a discard.
                ptr.as_ptr().add(bytes - 1).write(1);
                assert_eq!(*ptr.as_ptr().add(bytes - 1), 1);
                unmap_pages(ptr, bytes);
            }
        }
    }

    #[test]
    fn unlinked_files_read_back_what_was_written_and_leave_nothing() {
        let dir = std::env::temp_dir();
        let path = dir.join(format!("sp-platform-test-{}", std::process::id()));
        let file = create_unlinked(&path).unwrap();
        #[cfg(not(windows))]
        assert!(!path.exists());
        write_all_at(&file, b"hello world", 100).unwrap();
        let mut back = [0u8; 5];
        read_exact_at(&file, &mut back, 106).unwrap();
        assert_eq!(&back, b"world");
        assert!(read_exact_at(&file, &mut back, 109).is_err());
        drop(file);
        assert!(!path.exists());
    }

    #[test]
    fn the_host_is_described() {
        assert!(!platform().is_empty());
        let thread = native_thread_id();
        let other = std::thread::spawn(native_thread_id).join().unwrap();
        assert_ne!(thread, other);
        if IMPLEMENTATION == "linux" {
            assert!(!hostname().is_empty());
            assert!(uname().contains(&hostname()));
            assert!(thread_cpu_ns().is_some());
            assert!(free_bytes(Path::new(".")).is_some());
        }
    }
}
