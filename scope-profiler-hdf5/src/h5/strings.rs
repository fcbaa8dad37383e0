//! String datasets and attributes: variable-length UTF-8 strings written
//! in batches, fixed-length ones (what parallel HDF5 writes), and either
//! kind read back, stored NUL-free ([`crate::strings`]).

use std::ffi::{CString, c_char, c_void};
use std::ptr;

use super::dataset::{Buffer, Elements};
use super::errors::{c_text, check, failure};
use super::{Dataset, Datatype, Group, H5Error, Layout, Result, locked};
use crate::strings::{decode, encode};
use hdf5_sys::h5::H5free_memory;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::h5t::{
    H5T_C_S1, H5T_VARIABLE, H5T_class_t, H5T_cset_t, H5T_direction_t, H5T_str_t, H5Tcopy,
    H5Tget_size, H5Tis_variable_str, H5Tset_cset, H5Tset_size, H5Tset_strpad,
};

impl Datatype {
    /// Variable-length, NUL-terminated strings in `cset`, what h5py writes
    /// for `str` (UTF-8) and reads as `str` or `bytes`.
    pub(super) fn var_string(cset: H5T_cset_t) -> Result<Datatype> {
        locked(|| {
            // SAFETY: the library is open, so H5T_C_S1 is a valid id.
            let string = Datatype::own(unsafe { H5Tcopy(*H5T_C_S1) }, "copy H5T_C_S1")?;
            // SAFETY: `string.0` is a modifiable string type this handle owns.
            let status = unsafe { H5Tset_size(string.0, H5T_VARIABLE) };
            check(status, "make a variable-length string type")?;
            // SAFETY: as above; the arguments are valid enum values.
            let status = unsafe { H5Tset_cset(string.0, cset) };
            check(status, "set a string type's character set")?;
            // SAFETY: as above.
            let status = unsafe { H5Tset_strpad(string.0, H5T_str_t::H5T_STR_NULLTERM) };
            check(status, "set a string type's padding").map(|_| string)
        })
    }

    /// Fixed-length UTF-8 strings of `width` bytes (at least 1), NUL-padded.
    pub(super) fn fixed_string(width: usize) -> Result<Datatype> {
        locked(|| {
            // SAFETY: the library is open, so H5T_C_S1 is a valid id.
            let string = Datatype::own(unsafe { H5Tcopy(*H5T_C_S1) }, "copy H5T_C_S1")?;
            // SAFETY: `string.0` is a modifiable string type this handle owns.
            let status = unsafe { H5Tset_size(string.0, width.max(1)) };
            check(status, "size a fixed-length string type")?;
            // SAFETY: as above; the arguments are valid enum values.
            let status = unsafe { H5Tset_cset(string.0, H5T_cset_t::H5T_CSET_UTF8) };
            check(status, "set a string type's character set")?;
            // SAFETY: as above.
            let status = unsafe { H5Tset_strpad(string.0, H5T_str_t::H5T_STR_NULLPAD) };
            check(status, "set a string type's padding").map(|_| string)
        })
    }
}

impl Group {
    /// A contiguous dataset `name` of variable-length UTF-8 strings.
    pub(crate) fn write_strings<S: AsRef<str> + PartialEq>(
        &self,
        name: &str,
        values: impl ExactSizeIterator<Item = S>,
    ) -> Result<()> {
        let len = values.len();
        self.create_strings(name, len)?
            .write_strings_at(name, 0, len, values)
    }

    /// Creates a contiguous dataset `name` of `len` variable-length UTF-8
    /// strings, to be written later ([`Dataset::write_strings_at`]).
    pub(crate) fn create_strings(&self, name: &str, len: usize) -> Result<Dataset> {
        let dtype = Datatype::var_string(H5T_cset_t::H5T_CSET_UTF8)?;
        self.create_typed(name, &dtype, len, Layout::Contiguous)
    }

    /// Creates a contiguous dataset `name` of `len` fixed-length UTF-8
    /// strings of `width` bytes (NUL-padded, as h5py's
    /// `string_dtype("utf-8", width)`): what parallel HDF5 writes, which
    /// cannot write variable-length data.
    pub(crate) fn create_fixed_strings(
        &self,
        name: &str,
        len: usize,
        width: usize,
    ) -> Result<Dataset> {
        let dtype = Datatype::fixed_string(width)?;
        self.create_typed(name, &dtype, len, Layout::Contiguous)
    }
}

impl Dataset {
    /// Writes `values` (`len` of them) as elements `offset..offset + len`
    /// of a dataset of variable-length strings (`name` for errors).
    pub(crate) fn write_strings_at<S: AsRef<str> + PartialEq>(
        &self,
        name: &str,
        offset: usize,
        len: usize,
        values: impl Iterator<Item = S>,
    ) -> Result<()> {
        let dataset = self;
        let dtype = Datatype::var_string(H5T_cset_t::H5T_CSET_UTF8)?;
        let start = offset;
        let mut offset = offset;
        // In batches, so that a table of a million names never holds a C
        // string per name at once; a value equal to the one before it
        // shares its C string (constant and repeated columns).
        let mut values = values.peekable();
        let mut strings: Vec<CString> = Vec::new();
        let mut pointers: Vec<*const c_char> = Vec::new();
        while values.peek().is_some() {
            strings.clear();
            pointers.clear();
            let mut previous: Option<S> = None;
            for value in values.by_ref().take(STRING_BATCH) {
                if previous.as_ref() != Some(&value) {
                    strings.push(stored_string(value.as_ref())?);
                    previous = Some(value);
                }
                // A CString's bytes stay where they are when `strings` grows.
                pointers.push(strings.last().map_or(ptr::null(), |s| s.as_ptr()));
            }
            if offset + pointers.len() > start + len {
                return Err(H5Error(format!(
                    "write dataset {name}: more values than the {len} announced"
                )));
            }
            let elements = Elements::Range {
                offset,
                len: pointers.len(),
            };
            // SAFETY: `pointers` holds `pointers.len()` pointers to
            // NUL-terminated strings (kept alive by `strings`), the memory
            // layout of the variable-length string type `dtype`.
            unsafe {
                dataset.transfer(
                    &dtype,
                    elements,
                    Buffer::Write(pointers.as_ptr().cast()),
                    H5P_DEFAULT,
                    format_args!("write dataset {name}"),
                )
            }?;
            offset += pointers.len();
        }
        Ok(())
    }

    /// Writes `values` as elements `offset..` of a dataset of fixed-length
    /// strings of `width` bytes ([`Group::create_fixed_strings`]).
    pub(crate) fn write_fixed_strings_at<S: AsRef<str>>(
        &self,
        offset: usize,
        width: usize,
        values: impl Iterator<Item = S>,
    ) -> Result<()> {
        let mut bytes = Vec::new();
        let mut n = 0;
        for value in values {
            let stored = encode(value.as_ref());
            let stored = stored.as_bytes();
            if stored.len() > width {
                return Err(H5Error(format!(
                    "a string of {} bytes in a dataset of {width}-byte strings",
                    stored.len()
                )));
            }
            bytes.extend_from_slice(stored);
            bytes.resize(bytes.len() + width - stored.len(), 0);
            n += 1;
        }
        if n == 0 {
            return Ok(());
        }
        let dtype = Datatype::fixed_string(width)?;
        // SAFETY: `bytes` holds `n` elements of `width` bytes, the layout of
        // the fixed-length string type `dtype`.
        unsafe {
            self.transfer(
                &dtype,
                Elements::Range { offset, len: n },
                Buffer::Write(bytes.as_ptr().cast()),
                H5P_DEFAULT,
                "write fixed-length strings",
            )
        }
    }
}

impl Dataset {
    /// Every element of a string dataset (variable-length or fixed, ASCII
    /// or UTF-8).
    pub(crate) fn read_strings(&self) -> Result<Vec<String>> {
        let n = self.checked_len(size_of::<*mut c_char>())?;
        read_strings(&self.file_type()?, n, |memory, buffer| {
            // SAFETY: `read_strings` passes a writable, initialized buffer
            // for `n` elements, the whole dataset, of the memory type
            // `memory`.
            unsafe {
                self.transfer(
                    memory,
                    Elements::All(n),
                    Buffer::Read(buffer),
                    H5P_DEFAULT,
                    "read strings",
                )
            }
        })
    }

    /// The byte width of the elements of a fixed-length string dataset.
    pub(crate) fn string_width(&self) -> Result<usize> {
        self.file_type()?.size()
    }
}

/// `n` strings of an object whose file type is `file_type`, read by `read`
/// (an `H5Dread` or `H5Aread` of the whole object with the given memory
/// type into the given buffer). Variable-length strings are read as such
/// and freed; fixed-length ones end at their first NUL.
pub(super) fn read_strings(
    file_type: &Datatype,
    n: usize,
    read: impl FnOnce(&Datatype, *mut c_void) -> Result<()>,
) -> Result<Vec<String>> {
    if file_type.class() != H5T_class_t::H5T_STRING {
        return Err(H5Error("expected strings".into()));
    }
    locked(|| {
        // SAFETY: `file_type.0` is a valid string type.
        let variable = unsafe { H5Tis_variable_str(file_type.0) };
        if check(variable, "inspect a string type")? > 0 {
            // The file's own type, made native: its parent type as the
            // writer chose it (libhdf5 writes unsigned char, rust-hdf5 a
            // one-byte string), which a memory type of ours with another
            // parent would have no conversion path from in HDF5 1.10.
            // SAFETY: `file_type.0` is a valid string type; the native copy
            // is a new type this handle owns.
            let memory = Datatype::own(
                unsafe {
                    hdf5_sys::h5t::H5Tget_native_type(file_type.0, H5T_direction_t::H5T_DIR_DEFAULT)
                },
                "get a string type's native type",
            )?;
            let mut pointers: Vec<*mut c_char> = vec![ptr::null_mut(); n];
            read(&memory, pointers.as_mut_ptr().cast())?;
            let strings = pointers.into_iter().map(|p| {
                // SAFETY: HDF5 stored a NUL-terminated string it allocated
                // (or null) in each element; each is read, then freed, once.
                unsafe {
                    let s = c_text(p);
                    H5free_memory(p.cast());
                    s
                }
            });
            Ok(strings.map(|s| decode(&s)).collect())
        } else {
            // SAFETY: `file_type.0` is a valid string type.
            let size = unsafe { H5Tget_size(file_type.0) };
            if size == 0 {
                return Err(failure("get a string type's size"));
            }
            // SAFETY: as above; the copy is a transient type this handle owns.
            let memory = Datatype::own(unsafe { H5Tcopy(file_type.0) }, "copy a string type")?;
            let mut bytes = vec![0u8; n * size];
            read(&memory, bytes.as_mut_ptr().cast())?;
            Ok(bytes
                .chunks_exact(size)
                .map(|b| {
                    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
                    decode(&String::from_utf8_lossy(&b[..end]))
                })
                .collect())
        }
    })
}

/// Strings written to a dataset per `H5Dwrite`.
const STRING_BATCH: usize = 16 * 1024;

/// `s` encoded as a C string.
pub(super) fn stored_string(s: &str) -> Result<CString> {
    // `encode` leaves no NUL: the error is never returned.
    CString::new(encode(s).into_owned()).map_err(|_| H5Error("a string kept a NUL".into()))
}
