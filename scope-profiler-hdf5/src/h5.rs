//! A small safe layer over the HDF5 C API (`hdf5-metno-sys`): exactly what
//! the writer and the reader need.
//!
//! The runtime talks to the C library directly rather than through a
//! high-level crate so that no trait impl of a transitive dependency joins
//! trait selection in its users' crates (`hdf5-metno` pulls in `ascii`, whose
//! `impl PartialEq<AsciiChar> for u8` breaks inference of `&x[..] == &[]`).
//!
//! Every handle closes its id when dropped. Every call runs under
//! [`hdf5_sys::LOCK`], the reentrant lock `hdf5-metno` takes too, so an
//! application that also uses that crate stays serialized with us. Every
//! failing call becomes an [`H5Error`] saying what failed, with the library's
//! own reason. Strings are stored NUL-free and reversibly ([`encode`]).

use std::cell::Cell;
use std::ffi::{CString, c_char, c_int, c_uint, c_void};
use std::fmt::Display;
use std::path::Path;
use std::ptr;
use std::sync::OnceLock;

pub(super) use crate::schema::Layout;
use crate::strings::{decode, encode};

use hdf5_sys::h5::{
    H5_index_t, H5_iter_order_t, H5dont_atexit, H5free_memory, H5open, HADDR_UNDEF, herr_t, hsize_t,
};
use hdf5_sys::h5a::{
    H5A_info_t, H5Aclose, H5Acreate2, H5Aget_space, H5Aget_type, H5Aiterate2, H5Aopen, H5Aread,
    H5Awrite,
};
use hdf5_sys::h5d::{
    H5D_alloc_time_t, H5D_fill_time_t, H5D_layout_t, H5Dclose, H5Dcreate2, H5Dget_create_plist,
    H5Dget_offset, H5Dget_space, H5Dget_storage_size, H5Dget_type, H5Dopen2, H5Dread, H5Dwrite,
    H5Dwrite_chunk,
};
use hdf5_sys::h5e::{
    H5E_DEFAULT, H5E_direction_t, H5E_error2_t, H5Eclear2, H5Eset_auto2, H5Ewalk2,
};
use hdf5_sys::h5f::{
    H5F_ACC_RDONLY, H5F_ACC_TRUNC, H5F_scope_t, H5Fclose, H5Fcreate, H5Fflush, H5Fget_filesize,
    H5Fget_vfd_handle, H5Fopen,
};
use hdf5_sys::h5g::{H5G_info_t, H5Gclose, H5Gcreate2, H5Gget_info, H5Gopen2};
use hdf5_sys::h5i::{H5Iget_file_id, hid_t};
use hdf5_sys::h5l::{H5Lexists, H5Lget_name_by_idx};
use hdf5_sys::h5p::{
    H5P_CLS_ATTRIBUTE_CREATE, H5P_CLS_DATASET_CREATE, H5P_CLS_FILE_ACCESS, H5P_CLS_GROUP_CREATE,
    H5P_CRT_ORDER_INDEXED, H5P_CRT_ORDER_TRACKED, H5P_DEFAULT, H5Pclose, H5Pcreate, H5Pget_chunk,
    H5Pget_filter2, H5Pget_layout, H5Pget_nfilters, H5Pset_alloc_time, H5Pset_attr_creation_order,
    H5Pset_char_encoding, H5Pset_chunk, H5Pset_deflate, H5Pset_fapl_sec2, H5Pset_fill_time,
    H5Pset_layout, H5Pset_obj_track_times, H5Pset_shuffle,
};
use hdf5_sys::h5s::{
    H5S_ALL, H5S_class_t, H5S_seloper_t, H5Sclose, H5Screate, H5Screate_simple,
    H5Sget_simple_extent_ndims, H5Sget_simple_extent_npoints, H5Sget_simple_extent_type,
    H5Sselect_hyperslab,
};
use hdf5_sys::h5t::{
    H5T_C_S1, H5T_IEEE_F32BE, H5T_IEEE_F32LE, H5T_IEEE_F64BE, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
    H5T_NATIVE_INT8, H5T_NATIVE_INT64, H5T_NATIVE_UINT32, H5T_NATIVE_UINT64, H5T_STD_I8BE,
    H5T_STD_I8LE, H5T_STD_I16BE, H5T_STD_I16LE, H5T_STD_I32BE, H5T_STD_I32LE, H5T_STD_I64BE,
    H5T_STD_I64LE, H5T_STD_U8BE, H5T_STD_U8LE, H5T_STD_U16BE, H5T_STD_U16LE, H5T_STD_U32BE,
    H5T_STD_U32LE, H5T_STD_U64BE, H5T_STD_U64LE, H5T_VARIABLE, H5T_class_t, H5T_cset_t,
    H5T_direction_t, H5T_sign_t, H5T_str_t, H5Tclose, H5Tcopy, H5Tcreate, H5Tequal, H5Tget_class,
    H5Tget_member_name, H5Tget_member_offset, H5Tget_member_type, H5Tget_nmembers, H5Tget_sign,
    H5Tget_size, H5Tinsert, H5Tis_variable_str, H5Tset_cset, H5Tset_size, H5Tset_strpad,
};
use hdf5_sys::h5z::{H5Z_FILTER_DEFLATE, H5Z_FILTER_SHUFFLE};

pub(super) use crate::h5error::{H5Error, Result};

/// Whether the library was initialized (`H5open` succeeded), once per process.
static OPENED: OnceLock<bool> = OnceLock::new();

thread_local! {
    /// Whether this thread's automatic error printing is off (HDF5 keeps the
    /// error stack, and its printing setting, per thread in thread-safe builds).
    static SILENCED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` under the library lock, the library initialized and its error
/// printing off for this thread (errors are returned, not printed).
fn locked<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    let _guard = hdf5_sys::LOCK.lock();
    let opened = *OPENED.get_or_init(|| {
        // SAFETY: neither function takes arguments; both only set up the
        // library's global state, and the lock is held. H5dont_atexit fails
        // harmlessly when the library is already open (by `hdf5-metno`, say):
        // it only keeps HDF5 from closing ids at exit that may still be in use.
        unsafe {
            H5dont_atexit();
            H5open() >= 0
        }
    });
    if !opened {
        return Err(H5Error("cannot initialize the HDF5 library".into()));
    }
    if !SILENCED.get() {
        // SAFETY: H5E_DEFAULT names this thread's error stack; a null
        // function with null data turns automatic printing off.
        let status = unsafe { H5Eset_auto2(H5E_DEFAULT, None, ptr::null_mut()) };
        check(status, "turn off HDF5's error printing")?;
        SILENCED.set(true);
    }
    f()
}

/// `status` (an `herr_t`, `hid_t`, `htri_t` or `hssize_t`), or the error
/// describing `what` if it is negative. Call right after the failing
/// function, under the lock: the reason is read from the error stack.
fn check<T: PartialOrd + Default>(status: T, what: impl Display) -> Result<T> {
    if status < T::default() {
        Err(failure(what))
    } else {
        Ok(status)
    }
}

/// An error for `what`, with the reason on the thread's HDF5 error stack:
/// the outermost record (the API function that failed) and the innermost
/// one (the cause), as `hdf5-metno` reports them.
fn failure(what: impl Display) -> H5Error {
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
unsafe fn c_text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the caller guarantees a NUL-terminated string.
    let bytes = unsafe { std::ffi::CStr::from_ptr(p) }.to_bytes();
    String::from_utf8_lossy(bytes).into_owned()
}

/// `name` as a C string for the library.
fn c_name(name: &[u8]) -> Result<CString> {
    CString::new(name)
        .map_err(|_| H5Error(format!("the name \"{}\" contains NUL", name.escape_ascii())))
}

/// Defines an owned id type that closes its id with `$close`, under the lock.
macro_rules! handle {
    ($(#[$doc:meta])* $name:ident, $close:ident) => {
        $(#[$doc])*
        pub(super) struct $name(hid_t);

        impl $name {
            /// Takes ownership of `id`, the result of doing `what`; the
            /// error if it is negative. Call under the lock.
            fn own(id: hid_t, what: impl Display) -> Result<Self> {
                check(id, what).map($name)
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                let _guard = hdf5_sys::LOCK.lock();
                // SAFETY: `self.0` is a valid id of this kind that this
                // handle owns and that is closed only here.
                unsafe { $close(self.0) };
            }
        }
    };
}

handle!(
    /// An open HDF5 file.
    File,
    H5Fclose
);
handle!(
    /// An open group (the root group stands for the file).
    Group,
    H5Gclose
);
handle!(
    /// An open dataset.
    Dataset,
    H5Dclose
);
handle!(
    /// An attribute of a group.
    Attribute,
    H5Aclose
);
handle!(
    /// A dataspace: the shape of a dataset or attribute, and a selection.
    Dataspace,
    H5Sclose
);
handle!(
    /// A datatype, created or copied (never a library-owned predefined id).
    Datatype,
    H5Tclose
);
handle!(
    /// A property list.
    PropertyList,
    H5Pclose
);

/// A plain value type that HDF5 reads and writes as it lies in memory.
///
/// # Safety
///
/// [`H5Type::datatype`] must describe `Self`'s memory layout exactly (size,
/// field offsets, native byte order), and every value HDF5 may store through
/// it must be a valid `Self` (true of integers, floats and `repr(C)` structs
/// of them).
pub(super) unsafe trait H5Type: Copy + Default {
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
    /// Variable-length, NUL-terminated strings in `cset`, what h5py writes
    /// for `str` (UTF-8) and reads as `str` or `bytes`.
    fn var_string(cset: H5T_cset_t) -> Result<Datatype> {
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
    #[cfg(feature = "mpio")]
    fn fixed_string(width: usize) -> Result<Datatype> {
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

    /// A compound of `size` bytes with `members` (name, byte offset, type).
    pub(super) fn compound(size: usize, members: &[(&str, usize, Datatype)]) -> Result<Datatype> {
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
    fn is_unsigned_64(&self) -> Result<bool> {
        // SAFETY: `self.0` is a valid type id; H5Tget_sign returns
        // H5T_SGN_ERROR for a type without a sign, which is "no" here.
        let sign = locked(|| Ok(unsafe { H5Tget_sign(self.0) }))?;
        Ok(sign == H5T_sign_t::H5T_SGN_NONE && self.size()? == 8)
    }

    /// The type's class (integer, string, ...).
    fn class(&self) -> H5T_class_t {
        // SAFETY: `self.0` is a valid type id; on error HDF5 returns
        // H5T_NO_CLASS, which callers treat as "not what was expected".
        locked(|| Ok(unsafe { H5Tget_class(self.0) })).unwrap_or(H5T_class_t::H5T_NO_CLASS)
    }
}

impl Dataspace {
    /// A 1-D dataspace of `len` elements, fixed size.
    fn simple(len: usize) -> Result<Dataspace> {
        locked(|| {
            let dims = [len as hsize_t];
            // SAFETY: `dims` holds rank 1 dimensions; null maxdims = dims.
            let id = unsafe { H5Screate_simple(1, dims.as_ptr(), ptr::null()) };
            Dataspace::own(id, "create a dataspace")
        })
    }

    /// A scalar dataspace (one element, no dimensions).
    fn scalar() -> Result<Dataspace> {
        locked(|| {
            // SAFETY: creates a new dataspace of a valid class.
            let id = unsafe { H5Screate(H5S_class_t::H5S_SCALAR) };
            Dataspace::own(id, "create a scalar dataspace")
        })
    }

    /// Selects elements `offset..offset + len` of a 1-D dataspace.
    fn select(&self, offset: usize, len: usize) -> Result<()> {
        locked(|| {
            let (start, count) = ([offset as hsize_t], [len as hsize_t]);
            // SAFETY: `self.0` is a dataspace this handle owns; `start` and
            // `count` hold one value each (its rank); null stride and block
            // mean 1. HDF5 rejects a selection outside the extent.
            let status = unsafe {
                H5Sselect_hyperslab(
                    self.0,
                    H5S_seloper_t::H5S_SELECT_SET,
                    start.as_ptr(),
                    ptr::null(),
                    count.as_ptr(),
                    ptr::null(),
                )
            };
            check(status, format_args!("select elements {offset}..+{len}")).map(drop)
        })
    }

    /// Number of elements.
    fn len(&self) -> Result<usize> {
        locked(|| {
            // SAFETY: `self.0` is a dataspace this handle owns.
            let n = unsafe { H5Sget_simple_extent_npoints(self.0) };
            check(n, "count the elements of a dataspace").map(|n| n as usize)
        })
    }

    /// Number of elements of a 1-D dataspace; an error for any other rank.
    fn len_1d(&self) -> Result<usize> {
        let rank = locked(|| {
            // SAFETY: `self.0` is a dataspace this handle owns.
            let rank = unsafe { H5Sget_simple_extent_ndims(self.0) };
            check(rank, "count the dimensions of a dataspace")
        })?;
        if rank != 1 {
            return Err(H5Error(format!(
                "expected a 1-D dataset, found {rank} dimensions"
            )));
        }
        self.len()
    }

    /// Whether the dataspace is scalar.
    fn is_scalar(&self) -> bool {
        // SAFETY: `self.0` is a dataspace this handle owns.
        locked(|| Ok(unsafe { H5Sget_simple_extent_type(self.0) }))
            .is_ok_and(|class| class == H5S_class_t::H5S_SCALAR)
    }
}

impl PropertyList {
    /// A new property list of `class` (an `H5P_CLS_*` id).
    fn new(class: &'static hid_t) -> Result<PropertyList> {
        locked(|| {
            // SAFETY: the library is open, so the class id is valid.
            let id = unsafe { H5Pcreate(*class) };
            PropertyList::own(id, "create a property list")
        })
    }

    /// Runs `set`, an `H5Pset_*` call on this list, checking its status.
    fn set(&self, what: &str, set: impl FnOnce(hid_t) -> herr_t) -> Result<()> {
        locked(|| check(set(self.0), format_args!("set {what}")).map(drop))
    }
}

impl File {
    /// Creates (or truncates) the file at `path` with the default (sec2)
    /// driver, without HDF5's file lock, and keeps its descriptor out of
    /// processes spawned while it is written.
    ///
    /// The file is private until it is renamed into place, so the lock guards
    /// nothing, and it is harmful: a process another thread forks between
    /// the open and the close-on-exec flag inherits the descriptor, and with
    /// it the lock, which then keeps the published profile from opening
    /// ("unable to lock file") until that child exits.
    pub(super) fn create(path: &Path) -> Result<File> {
        let name = c_name(path.as_os_str().as_encoded_bytes())?;
        locked(|| {
            let fapl = File::private_access()?;
            // SAFETY: `name` is NUL-terminated; `fapl.0` is valid.
            let id = unsafe { H5Fcreate(name.as_ptr(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.0) };
            File::own(id, "create the file")?.close_on_exec()
        })
    }

    /// Opens the existing file at `path` for writing, as [`File::create`]
    /// creates one (sec2, no lock, close-on-exec): an MPI rank's turn at the
    /// file the ranks before it wrote.
    #[cfg(any(test, feature = "mpi"))]
    pub(super) fn open_rw(path: &Path) -> Result<File> {
        let name = c_name(path.as_os_str().as_encoded_bytes())?;
        locked(|| {
            let fapl = File::private_access()?;
            // SAFETY: `name` is NUL-terminated; `fapl.0` is valid.
            let id = unsafe { H5Fopen(name.as_ptr(), hdf5_sys::h5f::H5F_ACC_RDWR, fapl.0) };
            File::own(id, "open the file for writing")?.close_on_exec()
        })
    }

    /// Creates (or truncates) the file at `path` with the MPI-IO driver over
    /// `comm`: collective, every rank of `comm` calls it with the same path.
    #[cfg(feature = "mpio")]
    pub(super) fn create_mpio(
        path: &Path,
        comm: &mpi::topology::SimpleCommunicator,
    ) -> Result<File> {
        use mpi::raw::AsRaw;
        let name = c_name(path.as_os_str().as_encoded_bytes())?;
        locked(|| {
            let fapl = PropertyList::new(H5P_CLS_FILE_ACCESS)?;
            let raw = comm.as_raw();
            // SAFETY: `fapl.0` is a file access list this handle owns; `raw`
            // is a live communicator (the session's duplicate, never freed),
            // which HDF5 duplicates for itself; a null info object.
            fapl.set("the MPI-IO driver", |p| unsafe {
                hdf5_sys::h5p::H5Pset_fapl_mpio(p, raw, mpi::ffi::RSMPI_INFO_NULL)
            })?;
            #[cfg(hdf5_file_locking)]
            // SAFETY: as in `private_access`.
            fapl.set("no file locking", |p| unsafe {
                hdf5_sys::h5p::H5Pset_file_locking(p, 0, 1)
            })?;
            // SAFETY: `name` is NUL-terminated; `fapl.0` is valid.
            let id = unsafe { H5Fcreate(name.as_ptr(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.0) };
            File::own(id, "create the file (MPI-IO)")
        })
    }

    /// File access for a private file: the sec2 driver, without HDF5's file
    /// lock (see [`File::create`]). Call under the lock.
    fn private_access() -> Result<PropertyList> {
        let fapl = PropertyList::new(H5P_CLS_FILE_ACCESS)?;
        // SAFETY: `fapl.0` is a file access list this handle owns.
        fapl.set("the sec2 driver", |p| unsafe { H5Pset_fapl_sec2(p) })?;
        #[cfg(hdf5_file_locking)]
        // SAFETY: `fapl.0` is a file access list this handle owns; the
        // flags are plain booleans (no lock; no error where locks are
        // unsupported).
        fapl.set("no file locking", |p| unsafe {
            hdf5_sys::h5p::H5Pset_file_locking(p, 0, 1)
        })?;
        Ok(fapl)
    }

    /// This sec2 file with its descriptor closed on exec. Call under the lock.
    fn close_on_exec(self) -> Result<File> {
        let mut handle: *mut c_void = ptr::null_mut();
        // SAFETY: `self.0` is an open file; `handle` is a valid out-pointer.
        let status = unsafe { H5Fget_vfd_handle(self.0, H5P_DEFAULT, &mut handle) };
        check(status, "get the file's descriptor")?;
        if handle.is_null() {
            return Err(H5Error("the file has no descriptor".into()));
        }
        // SAFETY: the file was opened with the sec2 driver (callers open it
        // with `private_access`), whose handle points to the open `int`
        // descriptor of the file.
        let fd = unsafe { *handle.cast::<c_int>() };
        if let Err(e) = crate::platform::close_on_exec(fd) {
            return Err(H5Error(format!("cannot set close-on-exec: {e}")));
        }
        Ok(self)
    }

    /// Opens the file at `path` read-only.
    pub fn open(path: &Path) -> Result<File> {
        let name = c_name(path.as_os_str().as_encoded_bytes())?;
        locked(|| {
            // SAFETY: `name` is NUL-terminated; default access properties.
            let id = unsafe { H5Fopen(name.as_ptr(), H5F_ACC_RDONLY, H5P_DEFAULT) };
            File::own(id, "open the file")
        })
    }

    /// The root group, where the file's own attributes are.
    pub(super) fn root(&self) -> Result<Group> {
        locked(|| {
            // SAFETY: `self.0` is an open file; the name is NUL-terminated.
            let id = unsafe { H5Gopen2(self.0, c"/".as_ptr(), H5P_DEFAULT) };
            Group::own(id, "open the root group")
        })
    }

    /// Flushes and closes the file, reporting errors a drop would ignore.
    pub(super) fn close(self) -> Result<()> {
        let id = std::mem::ManuallyDrop::new(self).0;
        locked(|| {
            // SAFETY: `id` is an open file that nothing else closes (the
            // handle was consumed without running its drop).
            let flushed = unsafe { H5Fflush(id, H5F_scope_t::H5F_SCOPE_LOCAL) };
            let flushed = check(flushed, "flush the file");
            // SAFETY: as above; closed exactly once, here.
            let closed = check(unsafe { H5Fclose(id) }, "close the file");
            flushed.and(closed).map(drop)
        })
    }
}

impl Group {
    /// Creates the group `name`; with `track_attr_order` it tracks and
    /// indexes the creation order of its attributes.
    pub(super) fn create_group(&self, name: &str, track_attr_order: bool) -> Result<Group> {
        let c = c_name(name.as_bytes())?;
        locked(|| {
            let gcpl = PropertyList::new(H5P_CLS_GROUP_CREATE)?;
            if track_attr_order {
                let flags = H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED;
                // SAFETY: `p` is the group creation list `gcpl` owns.
                gcpl.set("attribute creation order", |p| unsafe {
                    H5Pset_attr_creation_order(p, flags)
                })?;
            }
            // SAFETY: `self.0` is an open group, `c` NUL-terminated, `gcpl.0`
            // a valid list; default link creation and access properties.
            let id = unsafe { H5Gcreate2(self.0, c.as_ptr(), H5P_DEFAULT, gcpl.0, H5P_DEFAULT) };
            Group::own(id, format_args!("create group {name}"))
        })
    }

    /// Opens the group `name`.
    pub(super) fn group(&self, name: &str) -> Result<Group> {
        let c = c_name(name.as_bytes())?;
        locked(|| {
            // SAFETY: `self.0` is an open group; `c` is NUL-terminated.
            let id = unsafe { H5Gopen2(self.0, c.as_ptr(), H5P_DEFAULT) };
            Group::own(id, format_args!("open group {name}"))
        })
    }

    /// Whether this group has a link `name`.
    pub(super) fn contains(&self, name: &str) -> Result<bool> {
        let c = c_name(name.as_bytes())?;
        locked(|| {
            // SAFETY: `self.0` is an open group; `c` is NUL-terminated.
            let exists = unsafe { H5Lexists(self.0, c.as_ptr(), H5P_DEFAULT) };
            check(exists, format_args!("look up {name}")).map(|e| e > 0)
        })
    }

    /// Creates a 1-D dataset `name` of `len` elements of `T`, stored as
    /// `layout` says, to be written later.
    pub(super) fn create_dataset<T: H5Type>(
        &self,
        name: &str,
        len: usize,
        layout: Layout,
    ) -> Result<Dataset> {
        self.create_typed(name, &T::datatype()?, len, layout)
    }

    /// Creates a 1-D dataset `name` of `len` elements of `dtype`.
    pub(super) fn create_typed(
        &self,
        name: &str,
        dtype: &Datatype,
        len: usize,
        layout: Layout,
    ) -> Result<Dataset> {
        let c = c_name(name.as_bytes())?;
        locked(|| {
            let dcpl = PropertyList::new(H5P_CLS_DATASET_CREATE)?;
            // No modification times in the object headers, as h5py and
            // hdf5-metno write datasets.
            // SAFETY: `p` is the list `dcpl` owns.
            dcpl.set("no time tracking", |p| unsafe {
                H5Pset_obj_track_times(p, 0)
            })?;
            match layout {
                Layout::Contiguous => {
                    // SAFETY: `p` is the list `dcpl` owns; a valid layout.
                    dcpl.set("the layout", |p| unsafe {
                        H5Pset_layout(p, H5D_layout_t::H5D_CONTIGUOUS)
                    })?;
                }
                Layout::Preallocated => {
                    // SAFETY: `p` is the list `dcpl` owns; a valid layout.
                    dcpl.set("the layout", |p| unsafe {
                        H5Pset_layout(p, H5D_layout_t::H5D_CONTIGUOUS)
                    })?;
                    // SAFETY: `p` is the list `dcpl` owns; a valid time.
                    dcpl.set("the allocation time", |p| unsafe {
                        H5Pset_alloc_time(p, H5D_alloc_time_t::H5D_ALLOC_TIME_EARLY)
                    })?;
                    // SAFETY: `p` is the list `dcpl` owns; a valid time.
                    dcpl.set("the fill time", |p| unsafe {
                        H5Pset_fill_time(p, H5D_fill_time_t::H5D_FILL_TIME_NEVER)
                    })?;
                }
                Layout::Chunked { chunk } | Layout::Deflate { chunk, .. } => {
                    if let Layout::Deflate { level, .. } = layout {
                        // SAFETY: `p` is the list `dcpl` owns.
                        dcpl.set("the shuffle filter", |p| unsafe { H5Pset_shuffle(p) })?;
                        // SAFETY: `p` is the list `dcpl` owns; HDF5 checks the level.
                        dcpl.set("the deflate filter", |p| unsafe {
                            H5Pset_deflate(p, c_uint::from(level))
                        })?;
                    }
                    // As hdf5-metno (and h5py) do for chunked datasets.
                    // SAFETY: `p` is the list `dcpl` owns; a valid time.
                    dcpl.set("the fill time", |p| unsafe {
                        H5Pset_fill_time(p, H5D_fill_time_t::H5D_FILL_TIME_ALLOC)
                    })?;
                    let dims = [chunk as hsize_t];
                    // SAFETY: `p` is the list `dcpl` owns; `dims` holds the
                    // one dimension of a rank-1 chunk.
                    dcpl.set("the chunk size", |p| unsafe {
                        H5Pset_chunk(p, 1, dims.as_ptr())
                    })?;
                }
            }
            let space = Dataspace::simple(len)?;
            // SAFETY: every id is one a live handle owns; `c` is
            // NUL-terminated; default link creation and access properties.
            let id = unsafe {
                H5Dcreate2(
                    self.0,
                    c.as_ptr(),
                    dtype.0,
                    space.0,
                    H5P_DEFAULT,
                    dcpl.0,
                    H5P_DEFAULT,
                )
            };
            Dataset::own(id, format_args!("create dataset {name}"))
        })
    }

    /// A contiguous dataset `name` of variable-length UTF-8 strings.
    pub(super) fn write_strings<S: AsRef<str> + PartialEq>(
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
    pub(super) fn create_strings(&self, name: &str, len: usize) -> Result<Dataset> {
        let dtype = Datatype::var_string(H5T_cset_t::H5T_CSET_UTF8)?;
        self.create_typed(name, &dtype, len, Layout::Contiguous)
    }

    /// Creates a contiguous dataset `name` of `len` fixed-length UTF-8
    /// strings of `width` bytes (NUL-padded, as h5py's
    /// `string_dtype("utf-8", width)`): what parallel HDF5 writes, which
    /// cannot write variable-length data.
    #[cfg(feature = "mpio")]
    pub(super) fn create_fixed_strings(
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
    pub(super) fn write_strings_at<S: AsRef<str> + PartialEq>(
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
    #[cfg(feature = "mpio")]
    pub(super) fn write_fixed_strings_at<S: AsRef<str>>(
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

impl Group {
    /// Opens the dataset `name`.
    pub(super) fn dataset(&self, name: &str) -> Result<Dataset> {
        let c = c_name(name.as_bytes())?;
        locked(|| {
            // SAFETY: `self.0` is an open group; `c` is NUL-terminated.
            let id = unsafe { H5Dopen2(self.0, c.as_ptr(), H5P_DEFAULT) };
            Dataset::own(id, format_args!("open dataset {name}"))
        })
    }

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
    pub(super) fn write_attr_i64(&self, name: &str, value: i64) -> Result<()> {
        self.write_attr_scalar(name, value)
    }

    /// A scalar attribute of `T`'s native type (int64, uint64, float64...).
    pub(super) fn write_attr_scalar<T: H5Type>(&self, name: &str, value: T) -> Result<()> {
        let dtype = T::datatype()?;
        // SAFETY: `value` is one `T`, whose layout `dtype` describes (the
        // contract of the unsafe trait `H5Type`).
        self.write_attr(name, &dtype, |attr| unsafe {
            H5Awrite(attr.0, dtype.0, (&raw const value).cast())
        })
    }

    /// A 1-D attribute of variable-length UTF-8 strings (what h5py writes
    /// for a list of `str`).
    pub(super) fn write_attr_strs(&self, name: &str, values: &[&str]) -> Result<()> {
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

    /// The names of the group's links, in name order.
    pub(super) fn member_names(&self) -> Result<Vec<String>> {
        locked(|| {
            let mut info = std::mem::MaybeUninit::<H5G_info_t>::uninit();
            // SAFETY: `self.0` is an open group; `info` is written on success.
            let status = unsafe { H5Gget_info(self.0, info.as_mut_ptr()) };
            check(status, "count a group's members")?;
            // SAFETY: H5Gget_info succeeded, so `info` is initialized.
            let n = unsafe { info.assume_init() }.nlinks;
            let dot = c_name(b".")?;
            let mut names = Vec::new();
            for i in 0..n {
                let name_at = |buf: *mut c_char, size: usize| {
                    // SAFETY: `self.0` is an open group, `dot` names it; `buf`
                    // is null (size 0: only the length is returned) or holds
                    // `size` bytes.
                    unsafe {
                        H5Lget_name_by_idx(
                            self.0,
                            dot.as_ptr(),
                            H5_index_t::H5_INDEX_NAME,
                            H5_iter_order_t::H5_ITER_INC,
                            i,
                            buf,
                            size,
                            H5P_DEFAULT,
                        )
                    }
                };
                let len = check(name_at(ptr::null_mut(), 0), "get a member's name")? as usize;
                if len > 1 << 16 {
                    return Err(H5Error(format!("a member name of {len} bytes")));
                }
                let mut buf = vec![0u8; len + 1];
                check(
                    name_at(buf.as_mut_ptr().cast(), len + 1),
                    "get a member's name",
                )?;
                buf.truncate(len);
                names.push(String::from_utf8_lossy(&buf).into_owned());
            }
            Ok(names)
        })
    }

    /// A scalar variable-length UTF-8 attribute.
    pub(super) fn write_attr_str(&self, name: &str, value: &str) -> Result<()> {
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
    pub(super) fn attr(&self, name: &str) -> Result<Attribute> {
        let c = c_name(name.as_bytes())?;
        locked(|| {
            // SAFETY: `self.0` is an open group; `c` is NUL-terminated.
            let id = unsafe { H5Aopen(self.0, c.as_ptr(), H5P_DEFAULT) };
            Attribute::own(id, format_args!("open attribute {name}"))
        })
    }

    /// The names of the group's attributes in creation order, or in name
    /// order if the file does not track it.
    pub(super) fn attr_names(&self) -> Result<Vec<String>> {
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

/// The elements of a 1-D dataset a transfer reads or writes.
#[derive(Clone, Copy, Debug)]
enum Elements {
    /// All of them (`H5S_ALL`); the dataset has this many.
    All(usize),
    /// Elements `offset..offset + len`.
    Range { offset: usize, len: usize },
    /// None: a rank's part of a collective write when it has no values.
    Nothing,
}

impl Elements {
    /// How many elements the memory buffer holds for this transfer.
    fn count(self) -> usize {
        match self {
            Elements::All(n) | Elements::Range { len: n, .. } => n,
            Elements::Nothing => 0,
        }
    }
}

/// The memory side of a transfer.
#[derive(Clone, Copy, Debug)]
enum Buffer {
    /// `H5Dread` into it.
    Read(*mut c_void),
    /// `H5Dwrite` from it.
    Write(*const c_void),
}

impl Dataset {
    /// The one `H5Dread`/`H5Dwrite` of this crate: under the library's
    /// lock, selects `elements` of the dataset and as many in memory, and
    /// moves them between the dataset and `buffer`, converting between the
    /// file's type and `memory_type`, with the transfer list `dxpl`.
    ///
    /// # Safety
    /// `buffer` points to `elements.count()` elements laid out as
    /// `memory_type` describes, valid for the whole call: readable for a
    /// `Buffer::Write`, writable and initialized (a conversion may read the
    /// background) for a `Buffer::Read`. `dxpl` is `H5P_DEFAULT` or a
    /// transfer list the caller owns.
    unsafe fn transfer(
        &self,
        memory_type: &Datatype,
        elements: Elements,
        buffer: Buffer,
        dxpl: hid_t,
        what: impl Display,
    ) -> Result<()> {
        locked(|| {
            let mut spaces = None;
            if !matches!(elements, Elements::All(_)) {
                let memory = Dataspace::simple(elements.count())?;
                let file = self.space()?;
                if let Elements::Range { offset, len } = elements {
                    file.select(offset, len)?;
                } else {
                    for space in [&file, &memory] {
                        // SAFETY: a dataspace this handle owns.
                        let status = unsafe { hdf5_sys::h5s::H5Sselect_none(space.0) };
                        check(status, "select nothing")?;
                    }
                }
                spaces = Some((memory, file));
            }
            let (memory, file) = spaces
                .as_ref()
                .map_or((H5S_ALL, H5S_ALL), |(m, f)| (m.0, f.0));
            // SAFETY: `self.0` is an open dataset and `memory_type.0` a type
            // its handle owns; `dxpl` is valid by the contract. The memory
            // selection is all of a dataspace of `elements.count()`
            // elements (or, with `H5S_ALL`, the dataset's own extent, which
            // `Elements::All` says has that many), so HDF5 reads or writes
            // exactly the `elements.count()` elements of `memory_type`'s
            // layout that `buffer` holds by the contract, and nothing past
            // them. The file selection is not checked here against the
            // dataset's extent: `H5Dread`/`H5Dwrite` validate it (a
            // selection past the extent, or of another element count than
            // the memory's, fails with an error and moves nothing).
            let status = unsafe {
                match buffer {
                    Buffer::Read(p) => H5Dread(self.0, memory_type.0, memory, file, dxpl, p),
                    Buffer::Write(p) => H5Dwrite(self.0, memory_type.0, memory, file, dxpl, p),
                }
            };
            check(status, what).map(drop)
        })
    }
}

/// How many bytes a read may decode per byte a dataset stores: deflate's
/// best ratio is 1032:1, so every real column fits, and a declared extent
/// of 10^15 elements in a small file does not.
const MAX_EXPANSION: u64 = 1100;
/// Bytes any dataset or attribute may hold whatever it stores (a dataset
/// never written reads as fill values).
const SMALL_OBJECT: u64 = 1 << 20;
/// The largest chunk, in bytes, that a read lets HDF5 or this crate decode
/// (ours hold 512 KiB, h5py's about 1 MiB): HDF5 allocates whole chunks.
pub(super) const MAX_CHUNK_BYTES: u64 = 64 << 20;

/// The size in bytes of the file that holds the object `id`.
/// Call under the lock.
fn file_size_of(id: hid_t) -> Result<u64> {
    // SAFETY: `id` is an open object; the returned file id is a new
    // reference that the handle closes.
    let file = File::own(unsafe { H5Iget_file_id(id) }, "get an object's file")?;
    let mut size: hsize_t = 0;
    // SAFETY: `file.0` is an open file; `size` is a valid out-pointer.
    let status = unsafe { H5Fget_filesize(file.0, &mut size) };
    check(status, "get the file's size")?;
    Ok(size)
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
    fn size(&self) -> Result<usize> {
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
    fn check_converts_to(&self, memory: &Datatype) -> Result<()> {
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

impl Dataset {
    /// The number of elements of a 1-D dataset read `memory_size` bytes an
    /// element, checked against what its file can hold: the values a read
    /// decodes may not exceed [`MAX_EXPANSION`] times the bytes the
    /// dataset stores (or the file's size, if smaller) plus
    /// [`SMALL_OBJECT`], nor its chunks [`MAX_CHUNK_BYTES`]; so no read
    /// allocates more than a small multiple of the file's own size.
    pub(super) fn checked_len(&self, memory_size: usize) -> Result<usize> {
        let n = self.space()?.len_1d()?;
        let element = self.file_type()?.size()?.max(memory_size);
        let bound = locked(|| {
            // SAFETY: `self.0` is an open dataset; 0 means "none stored".
            let stored = unsafe { H5Dget_storage_size(self.0) };
            let file = file_size_of(self.0)?;
            Ok(stored
                .min(file)
                .saturating_mul(MAX_EXPANSION)
                .saturating_add(SMALL_OBJECT))
        })?;
        if (n as u64).saturating_mul(element as u64) > bound {
            return Err(H5Error(format!(
                "the dataset declares {n} elements of {element} bytes, more than its file holds"
            )));
        }
        self.check_chunk(element)?;
        Ok(n)
    }

    /// The number of elements of a 1-D dataset whose values are read as
    /// `T`s ([`Self::checked_len`]), after checking that its type converts
    /// to `T` safely.
    pub(super) fn checked_len_of<T: H5Type>(&self) -> Result<usize> {
        self.file_type()?.check_converts_to(&T::datatype()?)?;
        self.checked_len(size_of::<T>())
    }

    /// Fails if the dataset is chunked in chunks of more than
    /// [`MAX_CHUNK_BYTES`] (`element` bytes an element).
    fn check_chunk(&self, element: usize) -> Result<()> {
        locked(|| {
            // SAFETY: `self.0` is an open dataset; the property list is a
            // copy this handle owns.
            let plist = PropertyList::own(
                unsafe { H5Dget_create_plist(self.0) },
                "get a dataset's creation properties",
            )?;
            // SAFETY: `plist.0` is a valid dataset creation property list.
            if unsafe { H5Pget_layout(plist.0) } != H5D_layout_t::H5D_CHUNKED {
                return Ok(());
            }
            let mut dims = [0 as hsize_t; 32];
            // SAFETY: as above; `dims` has room for the 32 dimensions asked
            // (HDF5's most).
            let rank = unsafe { H5Pget_chunk(plist.0, 32, dims.as_mut_ptr()) };
            let rank = check(rank, "get a dataset's chunk shape")?;
            let bytes = dims[..(rank as usize).min(32)]
                .iter()
                .try_fold(element as u64, |b, &d| b.checked_mul(d));
            match bytes {
                Some(bytes) if bytes <= MAX_CHUNK_BYTES => Ok(()),
                _ => Err(H5Error(format!(
                    "the dataset has chunks of {:?} elements, larger than {MAX_CHUNK_BYTES} bytes",
                    &dims[..(rank as usize).min(32)]
                ))),
            }
        })
    }
}

impl Dataset {
    /// Writes `values` to elements `offset..offset + values.len()` of a 1-D
    /// dataset of `T`s.
    pub(super) fn write<T: H5Type>(&self, offset: usize, values: &[T]) -> Result<()> {
        if values.is_empty() {
            return Ok(());
        }
        locked(|| self.write_with(offset, values, H5P_DEFAULT, "write to a dataset"))
    }

    /// Writes `values` to elements `offset..offset + values.len()` with
    /// collective MPI-IO: every rank of the file calls it the same number of
    /// times (a rank with nothing to write passes no values).
    #[cfg(feature = "mpio")]
    pub(super) fn write_collective<T: H5Type>(&self, offset: usize, values: &[T]) -> Result<()> {
        use hdf5_sys::h5p::{H5FD_mpio_xfer_t, H5P_CLS_DATASET_XFER, H5Pset_dxpl_mpio};
        locked(|| {
            let dxpl = PropertyList::new(H5P_CLS_DATASET_XFER)?;
            // SAFETY: `p` is the transfer list `dxpl` owns; a valid mode.
            dxpl.set("collective transfer", |p| unsafe {
                H5Pset_dxpl_mpio(p, H5FD_mpio_xfer_t::H5FD_MPIO_COLLECTIVE)
            })?;
            self.write_with(offset, values, dxpl.0, "write to a dataset collectively")
        })
    }

    /// `H5Dwrite` of `values` to elements `offset..offset + values.len()`
    /// with the transfer list `dxpl` (no values: nothing selected, for a
    /// collective write a rank takes part in without data). Call under the
    /// lock.
    fn write_with<T: H5Type>(
        &self,
        offset: usize,
        values: &[T],
        dxpl: hid_t,
        what: &str,
    ) -> Result<()> {
        let dtype = T::datatype()?;
        let elements = if values.is_empty() {
            Elements::Nothing
        } else {
            Elements::Range {
                offset,
                len: values.len(),
            }
        };
        // SAFETY: `values` holds `values.len()` `T`s, laid out as `dtype`
        // says (the `H5Type` contract).
        unsafe {
            self.transfer(
                &dtype,
                elements,
                Buffer::Write(values.as_ptr().cast()),
                dxpl,
                what,
            )
        }
    }

    /// Writes one chunk of a chunked 1-D dataset, already filtered (every
    /// filter of the dataset applied, in order): the chunk that starts at
    /// element `first`.
    pub(super) fn write_chunk(&self, first: usize, bytes: &[u8]) -> Result<()> {
        locked(|| {
            let offset = [first as hsize_t];
            // SAFETY: `self.0` is an open dataset; `offset` holds one
            // coordinate (its rank); `bytes` is `bytes.len()` readable
            // bytes that HDF5 copies into the file; filter mask 0 says
            // every filter was applied. HDF5 rejects an offset that is not
            // on a chunk boundary or past the extent.
            let status = unsafe {
                H5Dwrite_chunk(
                    self.0,
                    H5P_DEFAULT,
                    0,
                    offset.as_ptr(),
                    bytes.len(),
                    bytes.as_ptr().cast(),
                )
            };
            check(status, format_args!("write the chunk at element {first}")).map(drop)
        })
    }

    /// The dataset's dataspace.
    fn space(&self) -> Result<Dataspace> {
        locked(|| {
            // SAFETY: `self.0` is an open dataset.
            let id = unsafe { H5Dget_space(self.0) };
            Dataspace::own(id, "get a dataset's dataspace")
        })
    }

    /// The dataset's datatype in the file.
    fn file_type(&self) -> Result<Datatype> {
        locked(|| {
            // SAFETY: `self.0` is an open dataset.
            let id = unsafe { H5Dget_type(self.0) };
            Datatype::own(id, "get a dataset's datatype")
        })
    }

    /// Every element, converted to `T` (any integer width to any other, a
    /// compound member by member, by name).
    pub(super) fn read<T: H5Type>(&self) -> Result<Vec<T>> {
        let dtype = T::datatype()?;
        let n = self.checked_len_of::<T>()?;
        let mut values = vec![T::default(); n];
        // SAFETY: `values` holds one initialized `T` per element of the
        // dataset, laid out as `dtype` says (the `H5Type` contract).
        unsafe {
            self.transfer(
                &dtype,
                Elements::All(values.len()),
                Buffer::Read(values.as_mut_ptr().cast()),
                H5P_DEFAULT,
                "read a dataset",
            )
        }?;
        Ok(values)
    }

    /// Elements `offset..offset + values.len()` of a 1-D dataset, converted
    /// to `T` into `values` (a slice read: the rest of the dataset is not
    /// touched).
    pub(super) fn read_into<T: H5Type>(&self, offset: usize, values: &mut [T]) -> Result<()> {
        if values.is_empty() {
            return Ok(());
        }
        let dtype = T::datatype()?;
        let elements = Elements::Range {
            offset,
            len: values.len(),
        };
        // SAFETY: `values` holds `values.len()` initialized `T`s, laid out
        // as `dtype` says (the `H5Type` contract).
        unsafe {
            self.transfer(
                &dtype,
                elements,
                Buffer::Read(values.as_mut_ptr().cast()),
                H5P_DEFAULT,
                "read part of a dataset",
            )
        }
    }

    /// The chunk length, in elements, when this dataset's chunks can be
    /// decoded outside the library: chunked in one dimension, of native
    /// 64-bit integers, through the shuffle filter then the deflate filter
    /// and no other (what this crate and the Python package write);
    /// `None` for any other dataset, which HDF5 decodes.
    pub(super) fn shuffled_deflate_i64_chunks(&self) -> Result<Option<usize>> {
        let native = i64::datatype()?;
        locked(|| {
            // SAFETY: `self.0` is an open dataset; the property list is a
            // copy this handle owns.
            let plist = PropertyList::own(
                unsafe { H5Dget_create_plist(self.0) },
                "get a dataset's creation properties",
            )?;
            // SAFETY: `plist.0` is a valid dataset creation property list.
            if unsafe { H5Pget_layout(plist.0) } != H5D_layout_t::H5D_CHUNKED {
                return Ok(None);
            }
            let mut dims = [0 as hsize_t; 1];
            // SAFETY: as above; `dims` has room for the one dimension asked.
            if unsafe { H5Pget_chunk(plist.0, 1, dims.as_mut_ptr()) } != 1 || dims[0] == 0 {
                return Ok(None);
            }
            // SAFETY: as above.
            if unsafe { H5Pget_nfilters(plist.0) } != 2 {
                return Ok(None);
            }
            for (index, want) in [(0, H5Z_FILTER_SHUFFLE), (1, H5Z_FILTER_DEFLATE)] {
                let (mut flags, mut values, mut config) = (0, 0, 0);
                // SAFETY: as above; `index` is below the filter count; no
                // client values or name are asked for (room for none), the
                // other out-pointers are valid.
                let id = unsafe {
                    H5Pget_filter2(
                        plist.0,
                        index,
                        &mut flags,
                        &mut values,
                        ptr::null_mut(),
                        0,
                        ptr::null_mut(),
                        &mut config,
                    )
                };
                if id != want {
                    return Ok(None);
                }
            }
            // SAFETY: `self.0` is an open dataset; the type is a copy this
            // handle owns.
            let stored = Datatype::own(unsafe { H5Dget_type(self.0) }, "get a dataset's type")?;
            // SAFETY: both are valid datatype ids.
            let same = unsafe { H5Tequal(stored.0, native.0) };
            Ok((same > 0).then_some(dims[0] as usize))
        })
    }

    /// The stored (filtered) bytes of the chunk whose first element is
    /// `first`, into `buf`, and the chunk's filter mask (bit `i` set: filter
    /// `i` was not applied); `None` if the chunk was never written, or if
    /// the linked HDF5 (before 1.10.5) cannot say its size.
    pub(super) fn read_raw_chunk(&self, first: usize, buf: &mut Vec<u8>) -> Result<Option<u32>> {
        #[cfg(not(hdf5_chunk_info))]
        {
            let _ = (first, buf);
            Ok(None)
        }
        #[cfg(hdf5_chunk_info)]
        locked(|| {
            use hdf5_sys::h5d::{H5Dget_chunk_info_by_coord, H5Dread_chunk1};
            let offset = [first as hsize_t];
            let (mut mask, mut address, mut size) = (0u32, 0, 0 as hsize_t);
            // SAFETY: `self.0` is an open dataset; `offset` holds one
            // coordinate (its rank); the others are valid out-pointers.
            let status = unsafe {
                H5Dget_chunk_info_by_coord(
                    self.0,
                    offset.as_ptr(),
                    &mut mask,
                    &mut address,
                    &mut size,
                )
            };
            check(status, format_args!("find the chunk at element {first}"))?;
            if size == 0 || address == HADDR_UNDEF {
                return Ok(None);
            }
            // A deflated chunk is at most a little larger than the chunk
            // (itself at most MAX_CHUNK_BYTES); a corrupt index may say more.
            if size > MAX_CHUNK_BYTES + MAX_CHUNK_BYTES / 64 || size > file_size_of(self.0)? {
                return Err(H5Error(format!(
                    "the chunk at element {first} claims {size} stored bytes"
                )));
            }
            buf.clear();
            buf.resize(size as usize, 0);
            // SAFETY: as above; `buf` holds the chunk's stored size, which
            // is what HDF5 copies into it; `mask` is a valid out-pointer.
            let status = unsafe {
                H5Dread_chunk1(
                    self.0,
                    H5P_DEFAULT,
                    offset.as_ptr(),
                    &mut mask,
                    buf.as_mut_ptr().cast(),
                )
            };
            check(status, format_args!("read the chunk at element {first}"))?;
            Ok(Some(mask))
        })
    }

    /// Every element of a string dataset (variable-length or fixed, ASCII
    /// or UTF-8).
    pub(super) fn read_strings(&self) -> Result<Vec<String>> {
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
    #[cfg(feature = "mpio")]
    pub(super) fn string_width(&self) -> Result<usize> {
        let dtype = self.file_type()?;
        locked(|| {
            // SAFETY: `dtype.0` is a valid type this handle owns.
            let size = unsafe { H5Tget_size(dtype.0) };
            match size {
                0 => Err(failure("get a string type's size")),
                n => Ok(n),
            }
        })
    }

    /// The byte offset of the data in the file: `None` unless the dataset
    /// is contiguous and allocated.
    pub(super) fn offset(&self) -> Option<u64> {
        // SAFETY: `self.0` is an open dataset; HADDR_UNDEF means "no offset".
        let offset = locked(|| Ok(unsafe { H5Dget_offset(self.0) })).ok()?;
        (offset != HADDR_UNDEF).then_some(offset)
    }
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
    pub(super) fn scalar_kind(&self) -> Result<Option<ScalarKind>> {
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
    pub(super) fn read_i64(&self) -> Result<i64> {
        self.read_scalar()
    }

    /// The value of a scalar numeric attribute, converted by HDF5 to `T`
    /// (a standard integer or float type of the same class).
    pub(super) fn read_scalar<T: H5Type>(&self) -> Result<T> {
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
    pub(super) fn read_string(&self) -> Result<String> {
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
    pub(super) fn read_string_list(&self) -> Result<Vec<String>> {
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
pub(super) enum ScalarKind {
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

/// `n` strings of an object whose file type is `file_type`, read by `read`
/// (an `H5Dread` or `H5Aread` of the whole object with the given memory
/// type into the given buffer). Variable-length strings are read as such
/// and freed; fixed-length ones end at their first NUL.
fn read_strings(
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
fn stored_string(s: &str) -> Result<CString> {
    // `encode` leaves no NUL: the error is never returned.
    CString::new(encode(s).into_owned()).map_err(|_| H5Error("a string kept a NUL".into()))
}
