//! Unlinked scratch files and the fixed-size records written to them.
//!
//! A scratch file is removed from its directory as soon as it is created:
//! it lives exactly as long as its handle, and nothing is left behind even
//! if the process is killed.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Plain data that can be written and read back as raw bytes.
///
/// # Safety
/// Implementors are `repr(C)`, have integer fields only and no padding, so
/// every byte of a value is initialized and every bit pattern is a value.
pub(crate) unsafe trait Plain: Copy + Default {}

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
    out.clear();
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
