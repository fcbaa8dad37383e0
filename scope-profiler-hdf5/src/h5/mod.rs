//! The HDF5 layer of a build with feature `mpio`: a small safe layer over
//! the HDF5 C API (`hdf5-metno-sys`), which MPI-IO needs. `lib.rs` compiles
//! it instead of `pure.rs` (rust-hdf5), whose interface it offers, plus
//! what the parallel writer (`ranks.rs`) alone uses: MPI-IO files,
//! collective writes and fixed-length strings.
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
//! own reason (`errors.rs`). Strings are stored NUL-free and reversibly
//! (`crate::strings::encode`).
//!
//! Here: the lock and the handles. `file.rs`, `group.rs`, `attributes.rs`,
//! `dataset.rs` (the one transfer, typed reads and writes), `strings.rs`
//! (string datasets and their reading), `raw_chunks.rs` (chunks as stored),
//! `checks.rs` (what a read may allocate), `types.rs` (datatypes and the
//! conversions a read allows), `space.rs` (dataspaces).

mod attributes;
mod checks;
mod dataset;
mod errors;
mod file;
mod group;
mod raw_chunks;
mod space;
mod strings;
mod types;

use std::cell::Cell;
use std::fmt::Display;
use std::ptr;
use std::sync::OnceLock;

use hdf5_sys::h5::{H5dont_atexit, H5open, herr_t};
use hdf5_sys::h5a::H5Aclose;
use hdf5_sys::h5d::H5Dclose;
use hdf5_sys::h5e::{H5E_DEFAULT, H5Eset_auto2};
use hdf5_sys::h5f::H5Fclose;
use hdf5_sys::h5g::H5Gclose;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::{H5Pclose, H5Pcreate};
use hdf5_sys::h5s::H5Sclose;
use hdf5_sys::h5t::H5Tclose;

pub(super) use crate::h5error::{H5Error, Result};
pub(super) use crate::schema::Layout;
pub(super) use attributes::ScalarKind;
use errors::check;
pub(super) use types::H5Type;

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
