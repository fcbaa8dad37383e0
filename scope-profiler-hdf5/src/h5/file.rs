//! Files: created private (sec2, no lock, close-on-exec) or with the
//! MPI-IO driver, opened, and closed with their errors reported.

use std::ffi::{c_int, c_void};
use std::path::Path;
use std::ptr;

use super::errors::{c_name, check};
use super::{File, Group, H5Error, PropertyList, Result, locked};
use hdf5_sys::h5f::{
    H5F_ACC_RDONLY, H5F_ACC_TRUNC, H5F_scope_t, H5Fclose, H5Fcreate, H5Fflush, H5Fget_vfd_handle,
    H5Fopen,
};
use hdf5_sys::h5g::H5Gopen2;
use hdf5_sys::h5p::{H5P_CLS_FILE_ACCESS, H5P_DEFAULT, H5Pset_fapl_sec2};

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
    pub(crate) fn create(path: &Path) -> Result<File> {
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
    pub(crate) fn open_rw(path: &Path) -> Result<File> {
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
    pub(crate) fn create_mpio(
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
    pub(crate) fn open(path: &Path) -> Result<File> {
        let name = c_name(path.as_os_str().as_encoded_bytes())?;
        locked(|| {
            // SAFETY: `name` is NUL-terminated; default access properties.
            let id = unsafe { H5Fopen(name.as_ptr(), H5F_ACC_RDONLY, H5P_DEFAULT) };
            File::own(id, "open the file")
        })
    }

    /// The root group, where the file's own attributes are.
    pub(crate) fn root(&self) -> Result<Group> {
        locked(|| {
            // SAFETY: `self.0` is an open file; the name is NUL-terminated.
            let id = unsafe { H5Gopen2(self.0, c"/".as_ptr(), H5P_DEFAULT) };
            Group::own(id, "open the root group")
        })
    }

    /// Flushes and closes the file, reporting errors a drop would ignore.
    pub(crate) fn close(self) -> Result<()> {
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
