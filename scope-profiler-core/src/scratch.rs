//! Unlinked scratch files and the fixed-size records written to them.
//!
//! A scratch file is removed from its directory as soon as it is created:
//! it lives exactly as long as its handle, and nothing is left behind even
//! if the process is killed.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Plain data that can be written and read back as raw bytes.
///
/// # Safety
/// Implementors are `repr(C)`, have integer fields only and no padding, so
/// every byte of a value is initialized and every bit pattern is a value.
pub unsafe trait Plain: Copy + Default {}

// SAFETY: a primitive integer: every byte initialized, every bit pattern a
// value.
unsafe impl Plain for i64 {}

// SAFETY: a byte: initialized, every bit pattern a value.
unsafe impl Plain for u8 {}

/// A new scratch file in `dir`, named after `tag`, already unlinked.
pub fn create(dir: &Path, tag: &str) -> io::Result<File> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!(".scope-profiler-{tag}-{}-{n}", std::process::id()));
    crate::platform::create_unlinked(&path)
}

/// Writes `items` at byte `offset`.
pub fn write_at<T: Plain>(file: &File, items: &[T], offset: u64) -> io::Result<()> {
    // SAFETY: `T: Plain`: the values are fully initialized bytes.
    let bytes = unsafe {
        std::slice::from_raw_parts(items.as_ptr().cast::<u8>(), std::mem::size_of_val(items))
    };
    crate::platform::write_all_at(file, bytes, offset)
}

/// Reads `len` items at byte `offset` into `out` (replacing its contents).
pub fn read_at<T: Plain>(file: &File, offset: u64, len: usize, out: &mut Vec<T>) -> io::Result<()> {
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
    crate::platform::read_exact_at(file, bytes, offset)
}

/// The directory a file at `path` lives in: its parent, or `.` for a bare
/// file name.
pub fn dir_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The scratch directory for output `path`: beside it, or the system's
/// temporary directory for an in-memory session.
pub fn dir_for(path: Option<&Path>) -> PathBuf {
    path.map_or_else(std::env::temp_dir, dir_of)
}

/// Bytes free for an unprivileged user in the file system holding `dir`.
pub use crate::platform::free_bytes;
