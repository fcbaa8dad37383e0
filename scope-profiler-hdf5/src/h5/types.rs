//! Datatypes: the values HDF5 reads and writes as they lie in memory
//! ([`H5Type`]), compounds, and the check that a file's type converts
//! safely to the one a read asks for.

use std::ffi::c_uint;

use super::errors::{c_name, c_text, check, failure};
use super::{Datatype, H5Error, Result, locked};
use hdf5_sys::h5::H5free_memory;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5t::{
    H5T_IEEE_F32BE, H5T_IEEE_F32LE, H5T_IEEE_F64BE, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
    H5T_NATIVE_INT8, H5T_NATIVE_INT64, H5T_NATIVE_UINT32, H5T_NATIVE_UINT64, H5T_STD_I8BE,
    H5T_STD_I8LE, H5T_STD_I16BE, H5T_STD_I16LE, H5T_STD_I32BE, H5T_STD_I32LE, H5T_STD_I64BE,
    H5T_STD_I64LE, H5T_STD_U8BE, H5T_STD_U8LE, H5T_STD_U16BE, H5T_STD_U16LE, H5T_STD_U32BE,
    H5T_STD_U32LE, H5T_STD_U64BE, H5T_STD_U64LE, H5T_class_t, H5T_sign_t, H5Tcopy, H5Tcreate,
    H5Tequal, H5Tget_class, H5Tget_member_name, H5Tget_member_offset, H5Tget_member_type,
    H5Tget_nmembers, H5Tget_sign, H5Tget_size, H5Tinsert,
};

/// A plain value type that HDF5 reads and writes as it lies in memory.
///
/// # Safety
///
/// [`H5Type::datatype`] must describe `Self`'s memory layout exactly (size,
/// field offsets, native byte order), and every value HDF5 may store through
/// it must be a valid `Self` (true of integers, floats and `repr(C)` structs
/// of them).
pub(crate) unsafe trait H5Type: Copy + Default {
    /// The datatype of `Self`, in memory and in the file.
    fn datatype() -> Result<Datatype>;
}

/// Implements [`H5Type`] for primitives with their native HDF5 types.
macro_rules! native_types {
    ($($t:ty => $native:ident),*) => {$(
        // SAFETY: the native HDF5 type of `$t` has its size and byte order,
        // and every bit pattern is a valid `$t`.
        unsafe impl H5Type for $t {
            fn datatype() -> Result<Datatype> {
                locked(|| {
                    // SAFETY: the library is open, so the predefined id is
                    // valid; H5Tcopy only reads it.
                    let id = unsafe { H5Tcopy(*$native) };
                    Datatype::own(id, concat!("copy ", stringify!($native)))
                })
            }
        }
    )*};
}

native_types!(
    i8 => H5T_NATIVE_INT8,
    i64 => H5T_NATIVE_INT64,
    u32 => H5T_NATIVE_UINT32,
    u64 => H5T_NATIVE_UINT64,
    f64 => H5T_NATIVE_DOUBLE
);

impl Datatype {
    /// A compound of `size` bytes with `members` (name, byte offset, type).
    pub(crate) fn compound(size: usize, members: &[(&str, usize, Datatype)]) -> Result<Datatype> {
        locked(|| {
            // SAFETY: creates a new compound type of `size` bytes.
            let id = unsafe { H5Tcreate(H5T_class_t::H5T_COMPOUND, size) };
            let compound = Datatype::own(id, "create a compound type")?;
            for (name, offset, member) in members {
                let c = c_name(name.as_bytes())?;
                // SAFETY: `compound.0` and `member.0` are types these handles
                // own; `c` is NUL-terminated; HDF5 checks `offset` against
                // the compound's size.
                let status = unsafe { H5Tinsert(compound.0, c.as_ptr(), *offset, member.0) };
                check(status, format_args!("add member {name} to a compound type"))?;
            }
            Ok(compound)
        })
    }

    /// Whether the type is an unsigned integer of 8 bytes (whose values
    /// an int64 cannot all hold).
    pub(super) fn is_unsigned_64(&self) -> Result<bool> {
        // SAFETY: `self.0` is a valid type id; H5Tget_sign returns
        // H5T_SGN_ERROR for a type without a sign, which is "no" here.
        let sign = locked(|| Ok(unsafe { H5Tget_sign(self.0) }))?;
        Ok(sign == H5T_sign_t::H5T_SGN_NONE && self.size()? == 8)
    }

    /// The type's class (integer, string, ...).
    pub(super) fn class(&self) -> H5T_class_t {
        // SAFETY: `self.0` is a valid type id; on error HDF5 returns
        // H5T_NO_CLASS, which callers treat as "not what was expected".
        locked(|| Ok(unsafe { H5Tget_class(self.0) })).unwrap_or(H5T_class_t::H5T_NO_CLASS)
    }
}

/// The standard integer types (every width, sign and byte order) that a
/// file's integer values may have.
fn standard_integers() -> [hid_t; 16] {
    [
        *H5T_STD_I8LE,
        *H5T_STD_I8BE,
        *H5T_STD_I16LE,
        *H5T_STD_I16BE,
        *H5T_STD_I32LE,
        *H5T_STD_I32BE,
        *H5T_STD_I64LE,
        *H5T_STD_I64BE,
        *H5T_STD_U8LE,
        *H5T_STD_U8BE,
        *H5T_STD_U16LE,
        *H5T_STD_U16BE,
        *H5T_STD_U32LE,
        *H5T_STD_U32BE,
        *H5T_STD_U64LE,
        *H5T_STD_U64BE,
    ]
}

/// The IEEE float types a file's float values may have.
fn standard_floats() -> [hid_t; 4] {
    [
        *H5T_IEEE_F32LE,
        *H5T_IEEE_F32BE,
        *H5T_IEEE_F64LE,
        *H5T_IEEE_F64BE,
    ]
}

impl Datatype {
    /// The type's size in bytes.
    pub(super) fn size(&self) -> Result<usize> {
        locked(|| {
            // SAFETY: `self.0` is a valid type this handle owns.
            match unsafe { H5Tget_size(self.0) } {
                0 => Err(failure("get a datatype's size")),
                n => Ok(n),
            }
        })
    }

    /// Fails unless values of this type (a file's) convert to `memory` by
    /// a conversion that cannot go wrong: a standard integer or IEEE float
    /// to a native one of the same class, or a compound of the memory
    /// compound's size whose members have its names, offsets and sizes
    /// and are such values (byte order may differ). A corrupt type (a
    /// member past the compound's end, overlapping members, an integer of
    /// odd precision) is refused here, before `H5Dread` converts with it:
    /// HDF5's compound conversion trusts the type (a bit-flipped file
    /// crashed in `H5T__conv_struct_opt`).
    pub(super) fn check_converts_to(&self, memory: &Datatype) -> Result<()> {
        let (class, want) = (self.class(), memory.class());
        if class != want {
            return Err(H5Error(format!(
                "holds {} values where {} values were expected",
                class_name(class),
                class_name(want)
            )));
        }
        let standard = |types: &[hid_t]| {
            locked(|| {
                // SAFETY: both are valid type ids.
                Ok(types.iter().any(|&t| unsafe { H5Tequal(self.0, t) } > 0))
            })
        };
        match class {
            H5T_class_t::H5T_INTEGER if standard(&standard_integers())? => Ok(()),
            H5T_class_t::H5T_FLOAT if standard(&standard_floats())? => Ok(()),
            H5T_class_t::H5T_COMPOUND => self.check_members(memory),
            _ => Err(H5Error(format!(
                "holds {} values of a nonstandard type",
                class_name(class)
            ))),
        }
    }

    /// [`Self::check_converts_to`] for two compounds.
    fn check_members(&self, memory: &Datatype) -> Result<()> {
        let size = self.size()?;
        let members = |t: &Datatype| {
            locked(|| {
                // SAFETY: `t.0` is a valid compound type.
                check(
                    unsafe { H5Tget_nmembers(t.0) },
                    "count a compound's members",
                )
            })
        };
        let n = members(self)?;
        if size != memory.size()? || n != members(memory)? {
            return Err(H5Error(format!(
                "holds compound values of {size} bytes and {n} members, not the expected layout"
            )));
        }
        for i in 0..n as c_uint {
            let member = |t: &Datatype| {
                locked(|| {
                    // SAFETY: `t.0` is a valid compound type and `i` is below
                    // its member count; the name is freed once, below.
                    let (name, offset, id) = unsafe {
                        (
                            H5Tget_member_name(t.0, i),
                            H5Tget_member_offset(t.0, i),
                            H5Tget_member_type(t.0, i),
                        )
                    };
                    // SAFETY: `name` is null or a NUL-terminated string the
                    // library allocated for the caller.
                    let text = unsafe {
                        let text = c_text(name);
                        if !name.is_null() {
                            H5free_memory(name.cast());
                        }
                        text
                    };
                    Ok((text, offset, Datatype::own(id, "get a member's type")?))
                })
            };
            let (name, offset, stored) = member(self)?;
            let (want, want_offset, wanted) = member(memory)?;
            let stored_size = stored.size()?;
            if name != want
                || offset != want_offset
                || stored_size != wanted.size()?
                || offset.checked_add(stored_size).is_none_or(|end| end > size)
            {
                return Err(H5Error(format!(
                    "compound member {i} is {name:?} at byte {offset}, expected {want:?} at byte {want_offset}"
                )));
            }
            stored
                .check_converts_to(&wanted)
                .map_err(|e| H5Error(format!("compound member {name:?} {e}")))?;
        }
        Ok(())
    }
}

/// A datatype class's name, for messages.
fn class_name(class: H5T_class_t) -> &'static str {
    match class {
        H5T_class_t::H5T_INTEGER => "integer",
        H5T_class_t::H5T_FLOAT => "float",
        H5T_class_t::H5T_STRING => "string",
        H5T_class_t::H5T_COMPOUND => "compound",
        H5T_class_t::H5T_ENUM => "enum",
        H5T_class_t::H5T_VLEN => "variable-length",
        H5T_class_t::H5T_ARRAY => "array",
        H5T_class_t::H5T_OPAQUE => "opaque",
        H5T_class_t::H5T_REFERENCE => "reference",
        H5T_class_t::H5T_BITFIELD => "bitfield",
        H5T_class_t::H5T_TIME => "time",
        _ => "unknown",
    }
}
