//! Unlinked scratch files and the fixed-size records written to them.
//!
//! A scratch file is removed from its directory as soon as it is created:
//! it lives exactly as long as its handle, and nothing is left behind even
//! if the process is killed.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Plain data that can be written and read back as raw bytes.
///
/// # Safety
/// Implementors are `repr(C)`, have integer fields only and no padding, so
/// every byte of a value is initialized and every bit pattern is a value.
pub(crate) unsafe trait Plain: Copy + Default {}

// SAFETY: a primitive integer: every byte initialized, every bit pattern a
// value.
unsafe impl Plain for i64 {}

/// A new scratch file in `dir`, named after `tag`, already unlinked.
pub(crate) fn create(dir: &Path, tag: &str) -> io::Result<File> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!(".scope-profiler-{tag}-{}-{n}", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(file)
}

/// Writes `items` at byte `offset`.
pub(crate) fn write_at<T: Plain>(file: &File, items: &[T], offset: u64) -> io::Result<()> {
    // SAFETY: `T: Plain`: the values are fully initialized bytes.
    let bytes = unsafe {
        std::slice::from_raw_parts(items.as_ptr().cast::<u8>(), std::mem::size_of_val(items))
    };
    file.write_all_at(bytes, offset)
}

/// Reads `len` items at byte `offset` into `out` (replacing its contents).
pub(crate) fn read_at<T: Plain>(
    file: &File,
    offset: u64,
    len: usize,
    out: &mut Vec<T>,
) -> io::Result<()> {
    // Every item is read over: a buffer reused at the same length is not
    // cleared first (zeroing was 2% of the samples of `perf record` over
    // `compare finalize 10000000 auto`, recording included).
    out.truncate(len);
    out.resize(len, T::default());
    // SAFETY: `T: Plain`: any bytes read form valid values.
    let bytes = unsafe {
        std::slice::from_raw_parts_mut(
            out.as_mut_ptr().cast::<u8>(),
            std::mem::size_of_val(&out[..]),
        )
    };
    file.read_exact_at(bytes, offset)
}

/// The directory a file at `path` lives in: its parent, or `.` for a bare
/// file name.
pub(crate) fn dir_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The scratch directory for output `path`: beside it, or the system's
/// temporary directory for an in-memory session.
pub(crate) fn dir_for(path: Option<&Path>) -> PathBuf {
    path.map_or_else(std::env::temp_dir, dir_of)
}

/// Bytes free for an unprivileged user in the file system holding `dir`.
pub(crate) fn free_bytes(dir: &Path) -> Option<u64> {
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
