//! Errors of the C library's calls: a negative status checked, and the
//! reason read from the thread's HDF5 error stack; names as C strings.

use std::ffi::{CString, c_char, c_uint, c_void};
use std::fmt::Display;

use super::{H5Error, Result};
use hdf5_sys::h5::herr_t;
use hdf5_sys::h5e::{H5E_DEFAULT, H5E_direction_t, H5E_error2_t, H5Eclear2, H5Ewalk2};

/// `status` (an `herr_t`, `hid_t`, `htri_t` or `hssize_t`), or the error
/// describing `what` if it is negative. Call right after the failing
/// function, under the lock: the reason is read from the error stack.
pub(super) fn check<T: PartialOrd + Default>(status: T, what: impl Display) -> Result<T> {
    if status < T::default() {
        Err(failure(what))
    } else {
        Ok(status)
    }
}

/// An error for `what`, with the reason on the thread's HDF5 error stack:
/// the outermost record (the API function that failed) and the innermost
/// one (the cause), as `hdf5-metno` reports them.
pub(super) fn failure(what: impl Display) -> H5Error {
    let mut frames: Vec<(String, String)> = Vec::new();
    let _guard = hdf5_sys::LOCK.lock();
    // SAFETY: `collect_frame` has the signature H5Ewalk2 expects and casts
    // its data pointer back to the `Vec` passed here, which outlives the walk.
    let walked = unsafe {
        H5Ewalk2(
            H5E_DEFAULT,
            H5E_direction_t::H5E_WALK_DOWNWARD,
            Some(collect_frame),
            (&raw mut frames).cast(),
        )
    };
    // The records are read: free them now. Left on the thread's error stack
    // they are lost when the thread ends (valgrind: "definitely lost").
    // SAFETY: clears this thread's default error stack; no record of it is
    // referenced any more (`frames` holds copies).
    unsafe { H5Eclear2(H5E_DEFAULT) };
    let reason = match (frames.first(), frames.last()) {
        (Some((func, desc)), Some((_, cause))) if frames.len() > 1 => {
            format!(": {func}(): {desc}: {cause}")
        }
        (Some((func, desc)), _) => format!(": {func}(): {desc}"),
        _ if walked < 0 => ": (the HDF5 error stack could not be read)".into(),
        _ => String::new(),
    };
    H5Error(format!("cannot {what}{reason}"))
}

/// H5Ewalk2 callback: appends the function name and description of one
/// error record to the `Vec<(String, String)>` behind `frames`.
unsafe extern "C" fn collect_frame(
    _n: c_uint,
    record: *const H5E_error2_t,
    frames: *mut c_void,
) -> herr_t {
    // SAFETY: H5Ewalk2 passes a valid record, whose strings are NUL-terminated
    // or null, and `failure`'s data pointer, a `Vec<(String, String)>` that
    // nothing else touches during the walk.
    unsafe {
        let record = &*record;
        let frames = &mut *frames.cast::<Vec<(String, String)>>();
        frames.push((c_text(record.func_name), c_text(record.desc)));
    }
    0
}

/// A C string as a `String` (invalid UTF-8 replaced); "" for null.
///
/// # Safety
///
/// `p` is null or points to a NUL-terminated string.
pub(super) unsafe fn c_text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the caller guarantees a NUL-terminated string.
    let bytes = unsafe { std::ffi::CStr::from_ptr(p) }.to_bytes();
    String::from_utf8_lossy(bytes).into_owned()
}

/// `name` as a C string for the library.
pub(super) fn c_name(name: &[u8]) -> Result<CString> {
    CString::new(name)
        .map_err(|_| H5Error(format!("the name \"{}\" contains NUL", name.escape_ascii())))
}
