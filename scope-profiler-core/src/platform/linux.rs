//! The Linux implementation of `platform`, through `libc`.

use std::path::Path;
use std::ptr::NonNull;

use super::HUGE_PAGE;

mod modules;
mod samples;
pub use modules::modules;
pub use samples::Sampler;

#[cfg_attr(not(test), allow(dead_code))]
pub(super) const NAME: &str = "linux";
/// The timeline of `monotonic_ns`.
pub(super) const CLOCK: &str = "CLOCK_MONOTONIC";

pub(super) fn monotonic_ns() -> i64 {
    clock_ns(libc::CLOCK_MONOTONIC).unwrap_or(0)
}

pub(super) fn thread_cpu_ns() -> Option<i64> {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn clock_ns(clock: libc::clockid_t) -> Option<i64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return None;
    }
    // time_t and c_long are narrower than i64 on 32-bit targets.
    #[allow(clippy::unnecessary_cast)]
    Some(ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64)
}

pub(super) fn native_thread_id() -> i64 {
    // SAFETY: gettid has no preconditions and cannot fail.
    (unsafe { libc::gettid() }) as i64
}

/// A mapping of whole huge pages is aligned to one and asks for transparent
/// huge pages: the recording thread then takes one page fault per 2 MiB of
/// records instead of 512 (about 10 ns per call on a VM, where a fault is
/// dear), for memory it fills anyway.
pub(super) fn map_pages(bytes: usize) -> Option<NonNull<u8>> {
    let huge = bytes.is_multiple_of(HUGE_PAGE);
    let mapped = if huge { bytes + HUGE_PAGE } else { bytes };
    // SAFETY: an anonymous private mapping at an address of the kernel's
    // choosing touches no existing memory; the result is checked below.
    let raw = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            mapped,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if raw == libc::MAP_FAILED {
        return None;
    }
    if !huge {
        return NonNull::new(raw.cast());
    }
    let start = raw as usize;
    let aligned = start.next_multiple_of(HUGE_PAGE);
    let (head, tail) = (aligned - start, HUGE_PAGE - (aligned - start));
    // SAFETY: `[start, start + mapped)` is the mapping made above, which
    // nothing else knows of; the head before `aligned` and the tail after
    // `aligned + bytes` are page-aligned parts of it (mmap returns a page-
    // aligned address and HUGE_PAGE is a multiple of the page size), given
    // back here; `[aligned, aligned + bytes)` stays mapped. madvise only
    // sets an advice on that range (an error leaves ordinary pages).
    unsafe {
        if head > 0 {
            libc::munmap(raw, head);
        }
        if tail > 0 {
            libc::munmap((aligned + bytes) as *mut libc::c_void, tail);
        }
        libc::madvise(aligned as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE);
    }
    NonNull::new(aligned as *mut u8)
}

/// # Safety
/// As `platform::unmap_pages`.
pub(super) unsafe fn unmap_pages(ptr: NonNull<u8>, bytes: usize) {
    // SAFETY: by the contract, `[ptr, ptr + bytes)` is a mapping made by
    // `map_pages` that no one uses any more.
    unsafe { libc::munmap(ptr.as_ptr().cast(), bytes) };
}

/// # Safety
/// As `platform::discard_pages`.
pub unsafe fn discard_pages(ptr: NonNull<u8>, bytes: usize) {
    // SAFETY: by the contract the range is a live mapping from `map_pages`
    // whose contents no one needs. MADV_DONTNEED keeps it mapped, readable
    // and writable (later reads see zero pages), so every pointer into it
    // stays valid.
    unsafe { libc::madvise(ptr.as_ptr().cast(), bytes, libc::MADV_DONTNEED) };
}

/// # Safety
/// As `platform::free_lazily`.
pub(super) unsafe fn free_lazily(ptr: NonNull<u8>, bytes: usize) -> bool {
    // SAFETY: by the contract the range is a live mapping from `map_pages`
    // whose contents no one needs. MADV_FREE keeps it mapped, readable and
    // writable (a page the kernel took back reads as zeros), so every
    // pointer into it stays valid. A kernel without it (before 4.5) returns
    // EINVAL and changes nothing.
    (unsafe { libc::madvise(ptr.as_ptr().cast(), bytes, libc::MADV_FREE) }) == 0
}

#[cfg(test)]
pub(super) fn resident_pages(ptr: NonNull<u8>, bytes: usize) -> Option<usize> {
    let page = 4096;
    let mut vec = vec![0u8; bytes.div_ceil(page)];
    // SAFETY: mincore only reads the page tables of the range and writes one
    // byte per page into `vec`, which holds that many; a range that is not
    // mapped is an error (ENOMEM), returned as `None`.
    let rc = unsafe { libc::mincore(ptr.as_ptr().cast(), bytes, vec.as_mut_ptr()) };
    (rc == 0).then(|| vec.iter().filter(|&&b| b & 1 == 1).count())
}

pub fn on_fork_child(handler: extern "C" fn()) -> bool {
    // SAFETY: the handler is an `extern "C" fn()` that lives for the
    // process; being async-signal-safe is the caller's promise
    // (`platform::on_fork_child`), and a handler that is not only harms the
    // child, never this call.
    unsafe { libc::pthread_atfork(None, None, Some(handler)) == 0 }
}

pub fn close_on_exec(fd: i32) -> std::io::Result<()> {
    // SAFETY: F_SETFD only sets the flags of `fd`; on a descriptor that is
    // not open it fails with EBADF, which is returned.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

pub fn limit_address_space(bytes: u64) -> std::io::Result<()> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the rlimit struct `limit` points to.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // rlim_t is u64 on Linux's targets; the hard limit bounds the soft one.
    #[allow(clippy::unnecessary_cast)]
    let wanted = bytes.min(limit.rlim_max as u64);
    limit.rlim_cur = wanted as libc::rlim_t;
    // SAFETY: setrlimit only reads the rlimit struct `limit` points to.
    if unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

pub fn free_bytes(dir: &Path) -> Option<u64> {
    let c_dir = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `c_dir` is a NUL-terminated path and `stat` points to writable
    // memory of the right type; statvfs only writes it.
    let rc = unsafe { libc::statvfs(c_dir.as_ptr(), stat.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: statvfs returned 0, so it initialized `stat`.
    let stat = unsafe { stat.assume_init() };
    #[allow(clippy::unnecessary_cast)] // c_ulong is not u64 on every target
    let (blocks, size) = (stat.f_bavail as u64, stat.f_frsize as u64);
    Some(blocks.saturating_mul(size))
}

pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is writable for its whole length, which is passed.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

fn utsname() -> Option<libc::utsname> {
    // SAFETY: utsname is plain old data; all-zero is a valid value.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    (unsafe { libc::uname(&mut u) } == 0).then_some(u)
}

pub fn uname() -> String {
    let Some(u) = utsname() else {
        return String::new();
    };
    [
        &u.sysname[..],
        &u.nodename,
        &u.release,
        &u.version,
        &u.machine,
    ]
    .iter()
    .map(|f| c_field(f))
    .collect::<Vec<_>>()
    .join(" ")
}

pub fn platform() -> String {
    match utsname() {
        Some(u) => format!(
            "{}-{}-{}",
            c_field(&u.sysname),
            c_field(&u.release),
            c_field(&u.machine)
        ),
        None => std::env::consts::OS.to_owned(),
    }
}

/// A NUL-terminated `c_char` field as a string.
fn c_field(f: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = f
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

pub fn user_from_database() -> String {
    // SAFETY: passwd is plain old data (integers and pointers); all-zero
    // (null pointers) is a valid value.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is to a live, writable value of the right size
    // (`buf.len()` is passed with `buf`); `getpwuid_r` is thread-safe.
    let rc = unsafe {
        libc::getpwuid_r(
            libc::geteuid(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        )
    };
    if rc != 0 || result.is_null() || pwd.pw_name.is_null() {
        return String::new();
    }
    // SAFETY: on success `pw_name` points to a NUL-terminated string in `buf`,
    // which is still alive.
    unsafe { std::ffi::CStr::from_ptr(pwd.pw_name) }
        .to_string_lossy()
        .into_owned()
}

/// `struct perf_event_attr`, zero-filled through its 120 bytes (the Python
/// package's size: a kernel that knows fewer fields accepts trailing zeros).
const PERF_ATTR_WORDS: usize = 15;
/// `perf_event_open` flags: the descriptor is closed on exec.
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;
/// `perf_type_id` of the kernel's software events.
pub(super) const PERF_TYPE_SOFTWARE: u32 = 1;
/// `read_format`: `PERF_FORMAT_GROUP` (one read gives every member).
const PERF_FORMAT_GROUP: u64 = 1 << 3;
/// `exclude_kernel | exclude_hv`, as the Python package sets them (a user
/// may count user space where kernel counting is barred).
const PERF_EXCLUDE_KERNEL_HV: u64 = (1 << 5) | (1 << 6);

/// A zeroed `perf_event_attr` of event `config` of type `kind`, its size
/// set (`type` and `size`, two u32s, share the first word).
pub(super) fn perf_attr(kind: u32, config: u64) -> [u64; PERF_ATTR_WORDS] {
    let mut attr = [0u64; PERF_ATTR_WORDS];
    let mut head = [0u8; 8];
    head[..4].copy_from_slice(&kind.to_ne_bytes());
    head[4..].copy_from_slice(&((PERF_ATTR_WORDS * 8) as u32).to_ne_bytes());
    attr[0] = u64::from_ne_bytes(head);
    attr[1] = config;
    attr
}

/// Opens the event `attr` of the calling thread on any CPU, in the group
/// of the open descriptor `leader` (-1: none), closed on exec; the errno
/// if the kernel refused.
pub(super) fn perf_event_open(attr: &[u64; PERF_ATTR_WORDS], leader: i32) -> Result<i32, i32> {
    // SAFETY: `attr` is a perf_event_attr of the size its `size` field
    // says (`perf_attr`), alive for the call; pid 0 / cpu -1 is the
    // calling thread on any CPU; `leader` is -1 or an fd its caller owns.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr.as_ptr(),
            0 as libc::pid_t,
            -1 as libc::c_int,
            leader as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
    }
    Ok(fd as i32)
}

/// A perf counter group of the calling thread: its descriptors, the
/// leader first.
pub struct PerfGroup {
    fds: Vec<i32>,
}

impl PerfGroup {
    pub fn open(events: &[(u32, u64)]) -> Result<PerfGroup, (usize, i32)> {
        let mut group = PerfGroup { fds: Vec::new() };
        for (i, &(kind, config)) in events.iter().enumerate() {
            // A software event counts in the kernel too where allowed (a
            // context switch happens there: excluding the kernel counts
            // none); else, and for hardware events, user space only, as the
            // Python package asks.
            let fd = match kind {
                PERF_TYPE_SOFTWARE => match group.open_one(kind, config, 0) {
                    Err(errno) if errno == libc::EACCES || errno == libc::EPERM => {
                        group.open_one(kind, config, PERF_EXCLUDE_KERNEL_HV)
                    }
                    other => other,
                },
                _ => group.open_one(kind, config, PERF_EXCLUDE_KERNEL_HV),
            };
            match fd {
                Ok(fd) => group.fds.push(fd),
                Err(errno) => return Err((i, errno)),
            }
        }
        Ok(group)
    }

    /// Opens one member of the group (the leader if it is the first) with
    /// the attribute flags `flags`; the errno if the kernel refused.
    fn open_one(&self, kind: u32, config: u64, flags: u64) -> Result<i32, i32> {
        let mut attr = perf_attr(kind, config);
        attr[4] = PERF_FORMAT_GROUP;
        attr[5] = flags;
        perf_event_open(&attr, self.fds.first().copied().unwrap_or(-1))
    }

    /// Reads every member's count into `out` (one `read`); `false` if the
    /// read failed (then `out` is unchanged).
    pub fn read(&self, out: &mut [u64]) -> bool {
        const MAX: usize = 16;
        let Some(&leader) = self.fds.first() else {
            return true;
        };
        let mut buf = [0u64; MAX + 1];
        let n = self.fds.len().min(MAX);
        // SAFETY: `buf` has room for `1 + n` u64s, the group read format's
        // size (`nr` then one value per member); `leader` is our open fd.
        let got = unsafe { libc::read(leader, buf.as_mut_ptr().cast(), (n + 1) * 8) };
        if got != ((n + 1) * 8) as isize {
            return false;
        }
        for (o, v) in out.iter_mut().zip(&buf[1..=n]) {
            *o = *v;
        }
        true
    }
}

impl Drop for PerfGroup {
    fn drop(&mut self) {
        for &fd in self.fds.iter().rev() {
            // SAFETY: `fd` is a descriptor this group opened and owns.
            unsafe { libc::close(fd) };
        }
    }
}
