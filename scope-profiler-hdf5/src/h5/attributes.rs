//! Attributes of a group: scalars and string lists written, their names
//! listed in creation order, and their values read back, checked.

use std::ffi::{CString, c_char, c_void};
use std::ptr;

use super::checks::{SMALL_OBJECT, file_size_of};
use super::errors::{c_name, c_text, check};
use super::strings::{read_strings, stored_string};
use super::{Attribute, Dataspace, Datatype, Group, H5Error, H5Type, PropertyList, Result, locked};
use hdf5_sys::h5::{H5_index_t, H5_iter_order_t, herr_t};
use hdf5_sys::h5a::{
    H5A_info_t, H5Acreate2, H5Aget_space, H5Aget_type, H5Aiterate2, H5Aopen, H5Aread, H5Awrite,
};
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::{H5P_CLS_ATTRIBUTE_CREATE, H5P_DEFAULT, H5Pset_char_encoding};
use hdf5_sys::h5t::{H5T_class_t, H5T_cset_t};

impl Group {
    /// Creates the scalar attribute `name` of type `dtype` and writes its
    /// value with `write` (an `H5Awrite` of the attribute).
    fn write_attr(
        &self,
        name: &str,
        dtype: &Datatype,
        write: impl FnOnce(&Attribute) -> herr_t,
    ) -> Result<()> {
        let c = c_name(name.as_bytes())?;
        locked(|| {
            let acpl = PropertyList::new(H5P_CLS_ATTRIBUTE_CREATE)?;
            // SAFETY: `p` is the attribute creation list `acpl` owns.
            acpl.set("the name encoding", |p| unsafe {
                H5Pset_char_encoding(p, H5T_cset_t::H5T_CSET_UTF8)
            })?;
            let space = Dataspace::scalar()?;
            // SAFETY: every id is one a live handle owns; `c` is NUL-terminated.
            let id =
                unsafe { H5Acreate2(self.0, c.as_ptr(), dtype.0, space.0, acpl.0, H5P_DEFAULT) };
            let attr = Attribute::own(id, format_args!("create attribute {name}"))?;
            check(write(&attr), format_args!("write attribute {name}")).map(drop)
        })
    }

    /// A scalar int64 attribute.
    pub(crate) fn write_attr_i64(&self, name: &str, value: i64) -> Result<()> {
        self.write_attr_scalar(name, value)
    }

    /// A scalar attribute of `T`'s native type (int64, uint64, float64...).
    pub(crate) fn write_attr_scalar<T: H5Type>(&self, name: &str, value: T) -> Result<()> {
        let dtype = T::datatype()?;
        // SAFETY: `value` is one `T`, whose layout `dtype` describes (the
        // contract of the unsafe trait `H5Type`).
        self.write_attr(name, &dtype, |attr| unsafe {
            H5Awrite(attr.0, dtype.0, (&raw const value).cast())
        })
    }

    /// A 1-D attribute of variable-length UTF-8 strings (what h5py writes
    /// for a list of `str`).
    pub(crate) fn write_attr_strs(&self, name: &str, values: &[&str]) -> Result<()> {
        let stored = values
            .iter()
            .map(|v| stored_string(v))
            .collect::<Result<Vec<CString>>>()?;
        let pointers: Vec<*const c_char> = stored.iter().map(|c| c.as_ptr()).collect();
        let dtype = Datatype::var_string(H5T_cset_t::H5T_CSET_UTF8)?;
        let c = c_name(name.as_bytes())?;
        locked(|| {
            let acpl = PropertyList::new(H5P_CLS_ATTRIBUTE_CREATE)?;
            // SAFETY: `p` is the attribute creation list `acpl` owns.
            acpl.set("the name encoding", |p| unsafe {
                H5Pset_char_encoding(p, H5T_cset_t::H5T_CSET_UTF8)
            })?;
            let space = Dataspace::simple(values.len())?;
            // SAFETY: every id is one a live handle owns; `c` is NUL-terminated.
            let id =
                unsafe { H5Acreate2(self.0, c.as_ptr(), dtype.0, space.0, acpl.0, H5P_DEFAULT) };
            let attr = Attribute::own(id, format_args!("create attribute {name}"))?;
            // SAFETY: `pointers` holds one pointer per element of the
            // attribute's dataspace, each to a NUL-terminated string kept
            // alive by `stored`: the layout of the variable-length `dtype`.
            let status = unsafe { H5Awrite(attr.0, dtype.0, pointers.as_ptr().cast()) };
            check(status, format_args!("write attribute {name}")).map(drop)
        })
    }

    /// A scalar variable-length UTF-8 attribute.
    pub(crate) fn write_attr_str(&self, name: &str, value: &str) -> Result<()> {
        let value = stored_string(value)?;
        let pointer = value.as_ptr();
        let dtype = Datatype::var_string(H5T_cset_t::H5T_CSET_UTF8)?;
        // SAFETY: `pointer` is one pointer to a NUL-terminated string (kept
        // alive by `value`), the layout of the variable-length string `dtype`.
        self.write_attr(name, &dtype, |attr| unsafe {
            H5Awrite(attr.0, dtype.0, (&raw const pointer).cast())
        })
    }

    /// Opens the attribute `name`.
    pub(crate) fn attr(&self, name: &str) -> Result<Attribute> {
        let c = c_name(name.as_bytes())?;
        locked(|| {
            // SAFETY: `self.0` is an open group; `c` is NUL-terminated.
            let id = unsafe { H5Aopen(self.0, c.as_ptr(), H5P_DEFAULT) };
            Attribute::own(id, format_args!("open attribute {name}"))
        })
    }

    /// The names of the group's attributes in creation order, or in name
    /// order if the file does not track it.
    pub(crate) fn attr_names(&self) -> Result<Vec<String>> {
        locked(|| {
            let iterate = |index: H5_index_t| {
                let mut names: Vec<String> = Vec::new();
                // SAFETY: `self.0` is an open group; a null index pointer
                // starts at the first attribute; `collect_name` has the
                // signature H5Aiterate2 expects and casts its data pointer
                // back to `names`, which outlives the iteration.
                let status = unsafe {
                    H5Aiterate2(
                        self.0,
                        index,
                        H5_iter_order_t::H5_ITER_INC,
                        ptr::null_mut(),
                        Some(collect_name),
                        (&raw mut names).cast(),
                    )
                };
                (status, names)
            };
            match iterate(H5_index_t::H5_INDEX_CRT_ORDER) {
                (status, names) if status >= 0 => Ok(names),
                _ => {
                    let (status, names) = iterate(H5_index_t::H5_INDEX_NAME);
                    check(status, "list attributes").map(|_| names)
                }
            }
        })
    }
}

/// H5Aiterate2 callback: appends the attribute's name to the
/// `Vec<String>` behind `names`.
unsafe extern "C" fn collect_name(
    _location: hid_t,
    name: *const c_char,
    _info: *const H5A_info_t,
    names: *mut c_void,
) -> herr_t {
    // SAFETY: H5Aiterate2 passes a NUL-terminated name and `attr_names`'
    // data pointer, a `Vec<String>` that nothing else touches meanwhile.
    unsafe {
        let names = &mut *names.cast::<Vec<String>>();
        names.push(c_text(name));
    }
    0
}

impl Attribute {
    /// The attribute's dataspace.
    fn space(&self) -> Result<Dataspace> {
        locked(|| {
            // SAFETY: `self.0` is an open attribute.
            let id = unsafe { H5Aget_space(self.0) };
            Dataspace::own(id, "get an attribute's dataspace")
        })
    }

    /// The attribute's datatype in the file.
    fn file_type(&self) -> Result<Datatype> {
        locked(|| {
            // SAFETY: `self.0` is an open attribute.
            let id = unsafe { H5Aget_type(self.0) };
            Datatype::own(id, "get an attribute's datatype")
        })
    }

    /// What a scalar attribute holds; `None` if it is not scalar.
    pub(crate) fn scalar_kind(&self) -> Result<Option<ScalarKind>> {
        if !self.space()?.is_scalar() {
            return Ok(None);
        }
        let file_type = self.file_type()?;
        Ok(Some(match file_type.class() {
            H5T_class_t::H5T_INTEGER if file_type.is_unsigned_64()? => ScalarKind::Unsigned,
            H5T_class_t::H5T_INTEGER => ScalarKind::Integer,
            H5T_class_t::H5T_FLOAT => ScalarKind::Float,
            H5T_class_t::H5T_STRING => ScalarKind::String,
            _ => ScalarKind::Other,
        }))
    }

    /// The value of a scalar integer attribute, as int64.
    pub(crate) fn read_i64(&self) -> Result<i64> {
        self.read_scalar()
    }

    /// The value of a scalar numeric attribute, converted by HDF5 to `T`
    /// (a standard integer or float type of the same class).
    pub(crate) fn read_scalar<T: H5Type>(&self) -> Result<T> {
        self.expect_scalar()?;
        let dtype = T::datatype()?;
        self.file_type()?.check_converts_to(&dtype)?;
        let mut value = T::default();
        locked(|| {
            // SAFETY: the attribute has one element (checked scalar);
            // `value` is one `T`, whose layout `dtype` describes (the
            // contract of the unsafe trait `H5Type`).
            let status = unsafe { H5Aread(self.0, dtype.0, (&raw mut value).cast()) };
            check(status, "read a numeric attribute").map(drop)
        })?;
        Ok(value)
    }

    /// The value of a scalar string attribute.
    pub(crate) fn read_string(&self) -> Result<String> {
        self.expect_scalar()?;
        let width = self.file_type()?.size()? as u64;
        let file = locked(|| file_size_of(self.0))?;
        if width > file.saturating_add(SMALL_OBJECT) {
            return Err(H5Error(format!(
                "the string attribute declares {width} bytes, more than its file holds"
            )));
        }
        let mut values = read_strings(&self.file_type()?, 1, |memory, buffer| {
            // SAFETY: `read_strings` passes a buffer for one element, the
            // whole (scalar) attribute, of the memory type `memory`.
            let status = unsafe { H5Aread(self.0, memory.0, buffer) };
            check(status, "read a string attribute").map(drop)
        })?;
        Ok(values.pop().unwrap_or_default())
    }

    /// The strings of a 1-D string attribute (a scalar one: its one string).
    pub(crate) fn read_string_list(&self) -> Result<Vec<String>> {
        if self.space()?.is_scalar() {
            return Ok(vec![self.read_string()?]);
        }
        let n = self.space()?.len_1d()?;
        let width = self.file_type()?.size()? as u64;
        let file = locked(|| file_size_of(self.0))?;
        if (n as u64).saturating_mul(width.max(1)) > file.saturating_add(SMALL_OBJECT) {
            return Err(H5Error(format!(
                "the string attribute declares {n} strings, more than its file holds"
            )));
        }
        read_strings(&self.file_type()?, n, |memory, buffer| {
            // SAFETY: `read_strings` passes a buffer for `n` elements, the
            // whole attribute, of the memory type `memory`.
            let status = unsafe { H5Aread(self.0, memory.0, buffer) };
            check(status, "read a string attribute").map(drop)
        })
    }

    /// Fails unless the attribute is scalar.
    fn expect_scalar(&self) -> Result<()> {
        match self.space()?.is_scalar() {
            true => Ok(()),
            false => Err(H5Error("the attribute is not a scalar".into())),
        }
    }
}

/// What a scalar attribute holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScalarKind {
    /// An integer of any width and sign but unsigned 64-bit.
    Integer,
    /// An unsigned 64-bit integer.
    Unsigned,
    /// A float.
    Float,
    /// A string of any kind.
    String,
    /// Anything else (a compound, an enum, ...).
    Other,
}
