//! Datasets: the one transfer (`H5Dread`/`H5Dwrite`) of the crate, and
//! the typed writes (collective with MPI-IO) and reads over it.

use std::ffi::c_void;
use std::fmt::Display;

use super::errors::check;
use super::{Dataset, Dataspace, Datatype, H5Type, PropertyList, Result, locked};
use hdf5_sys::h5::HADDR_UNDEF;
use hdf5_sys::h5d::{H5Dget_offset, H5Dget_space, H5Dget_type, H5Dread, H5Dwrite};
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::h5s::H5S_ALL;

/// The elements of a 1-D dataset a transfer reads or writes.
#[derive(Clone, Copy, Debug)]
pub(super) enum Elements {
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
pub(super) enum Buffer {
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
    pub(super) unsafe fn transfer(
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

impl Dataset {
    /// Writes `values` to elements `offset..offset + values.len()` of a 1-D
    /// dataset of `T`s.
    pub(crate) fn write<T: H5Type>(&self, offset: usize, values: &[T]) -> Result<()> {
        if values.is_empty() {
            return Ok(());
        }
        locked(|| self.write_with(offset, values, H5P_DEFAULT, "write to a dataset"))
    }

    /// Writes `values` to elements `offset..offset + values.len()` with
    /// collective MPI-IO: every rank of the file calls it the same number of
    /// times (a rank with nothing to write passes no values).
    pub(crate) fn write_collective<T: H5Type>(&self, offset: usize, values: &[T]) -> Result<()> {
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

    /// The dataset's dataspace.
    pub(super) fn space(&self) -> Result<Dataspace> {
        locked(|| {
            // SAFETY: `self.0` is an open dataset.
            let id = unsafe { H5Dget_space(self.0) };
            Dataspace::own(id, "get a dataset's dataspace")
        })
    }

    /// The dataset's datatype in the file.
    pub(super) fn file_type(&self) -> Result<Datatype> {
        locked(|| {
            // SAFETY: `self.0` is an open dataset.
            let id = unsafe { H5Dget_type(self.0) };
            Datatype::own(id, "get a dataset's datatype")
        })
    }

    /// Every element, converted to `T` (any integer width to any other, a
    /// compound member by member, by name).
    pub(crate) fn read<T: H5Type>(&self) -> Result<Vec<T>> {
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
    pub(crate) fn read_into<T: H5Type>(&self, offset: usize, values: &mut [T]) -> Result<()> {
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

    /// The byte offset of the data in the file: `None` unless the dataset
    /// is contiguous and allocated.
    pub(crate) fn offset(&self) -> Option<u64> {
        // SAFETY: `self.0` is an open dataset; HADDR_UNDEF means "no offset".
        let offset = locked(|| Ok(unsafe { H5Dget_offset(self.0) })).ok()?;
        (offset != HADDR_UNDEF).then_some(offset)
    }
}
