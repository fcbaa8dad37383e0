//! The std-only implementation of `platform`: every OS but Linux, and Linux
//! under `--cfg scope_profiler_portable`. What it does differently is in
//! `platform`'s documentation.

use std::alloc::Layout;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Instant;

use super::HUGE_PAGE;

#[cfg_attr(not(test), allow(dead_code))]
pub(super) const NAME: &str = "portable";
/// The timeline of `monotonic_ns`: nanoseconds since the process first
/// read the clock.
pub(super) const CLOCK: &str = "process";

pub(super) fn monotonic_ns() -> i64 {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    let origin = *ORIGIN.get_or_init(Instant::now);
    i64::try_from(origin.elapsed().as_nanos()).unwrap_or(i64::MAX)
}

pub(super) fn thread_cpu_ns() -> Option<i64> {
    None
}

pub(super) fn native_thread_id() -> i64 {
    static NEXT: AtomicI64 = AtomicI64::new(1);
    thread_local! {
        static ID: i64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    ID.with(|id| *id)
}

/// The layout `map_pages(bytes)` allocates with: aligned to a huge page for
/// a multiple of one, else to 4 KiB.
fn layout(bytes: usize) -> Option<Layout> {
    let align = if bytes % HUGE_PAGE == 0 {
        HUGE_PAGE
    } else {
        4096
    };
    Layout::from_size_align(bytes.max(1), align).ok()
}

pub(super) fn map_pages(bytes: usize) -> Option<NonNull<u8>> {
    let layout = layout(bytes)?;
    // SAFETY: `layout` has a non-zero size.
    NonNull::new(unsafe { std::alloc::alloc(layout) })
}

/// # Safety
/// As `platform::unmap_pages`.
pub(super) unsafe fn unmap_pages(ptr: NonNull<u8>, bytes: usize) {
    let layout = layout(bytes).expect("map_pages made this layout");
    // SAFETY: by the contract, `ptr` came from `map_pages(bytes)`, that is
    // from `alloc` with this same layout, and is freed only here, once.
    unsafe { std::alloc::dealloc(ptr.as_ptr(), layout) };
}

/// # Safety
/// As `platform::discard_pages` (nothing is done here).
pub(super) unsafe fn discard_pages(_ptr: NonNull<u8>, _bytes: usize) {}

/// # Safety
/// As `platform::free_lazily` (nothing is done here).
pub(super) unsafe fn free_lazily(_ptr: NonNull<u8>, _bytes: usize) -> bool {
    false
}

#[cfg(test)]
pub(super) fn resident_pages(_ptr: NonNull<u8>, _bytes: usize) -> Option<usize> {
    None
}

pub(super) fn on_fork_child(_handler: extern "C" fn()) -> bool {
    false
}

pub(super) fn close_on_exec(_fd: i32) -> std::io::Result<()> {
    Ok(())
}

pub(super) fn limit_address_space(_bytes: u64) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "this build cannot limit a process's address space (RLIMIT_AS is Linux only here)",
    ))
}

pub(super) fn free_bytes(_dir: &Path) -> Option<u64> {
    None
}

/// The environment (`HOSTNAME`, Windows' `COMPUTERNAME`), else the files
/// where Unix systems keep it; "" if none has it.
pub(super) fn hostname() -> String {
    let from_env = ["HOSTNAME", "COMPUTERNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok());
    let from_files = || {
        ["/proc/sys/kernel/hostname", "/etc/hostname"]
            .iter()
            .find_map(|f| std::fs::read_to_string(f).ok())
    };
    from_env
        .into_iter()
        .chain(std::iter::from_fn(from_files).take(1))
        .map(|s| s.trim().to_owned())
        .find(|s| !s.is_empty())
        .unwrap_or_default()
}

pub(super) fn uname() -> String {
    let system = match std::env::consts::OS {
        "macos" => "Darwin",
        "windows" => "Windows",
        "linux" => "Linux",
        other => other,
    };
    format!("{system} {} {}", hostname(), std::env::consts::ARCH)
}

pub(super) fn platform() -> String {
    format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH)
}

pub(super) fn user_from_database() -> String {
    String::new()
}

/// No perf counters outside Linux: opening a group always fails (ENOSYS).
pub struct PerfGroup;

impl PerfGroup {
    pub fn open(_events: &[(u32, u64)]) -> Result<PerfGroup, (usize, i32)> {
        Err((0, 38))
    }

    pub fn read(&self, _out: &mut [u64]) -> bool {
        false
    }
}

/// No sampling event off Linux (and in the portable build).
/// No map of the process's files here.
pub fn modules() -> Vec<super::Module> {
    Vec::new()
}

pub struct Sampler;

impl Sampler {
    pub fn open(_hz: u32, _pages: usize) -> Result<Sampler, i32> {
        Err(38) // ENOSYS
    }

    pub fn drain(&mut self, _f: &mut dyn FnMut(&super::Sample)) -> u64 {
        0
    }
}
