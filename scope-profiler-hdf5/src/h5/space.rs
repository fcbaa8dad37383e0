//! Dataspaces: the shape of a dataset or attribute, and a selection of
//! its elements.

use std::ptr;

use super::errors::check;
use super::{Dataspace, H5Error, Result, locked};
use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5s::{
    H5S_class_t, H5S_seloper_t, H5Screate, H5Screate_simple, H5Sget_simple_extent_ndims,
    H5Sget_simple_extent_npoints, H5Sget_simple_extent_type, H5Sselect_hyperslab,
};

impl Dataspace {
    /// A 1-D dataspace of `len` elements, fixed size.
    pub(super) fn simple(len: usize) -> Result<Dataspace> {
        locked(|| {
            let dims = [len as hsize_t];
            // SAFETY: `dims` holds rank 1 dimensions; null maxdims = dims.
            let id = unsafe { H5Screate_simple(1, dims.as_ptr(), ptr::null()) };
            Dataspace::own(id, "create a dataspace")
        })
    }

    /// A scalar dataspace (one element, no dimensions).
    pub(super) fn scalar() -> Result<Dataspace> {
        locked(|| {
            // SAFETY: creates a new dataspace of a valid class.
            let id = unsafe { H5Screate(H5S_class_t::H5S_SCALAR) };
            Dataspace::own(id, "create a scalar dataspace")
        })
    }

    /// Selects elements `offset..offset + len` of a 1-D dataspace.
    pub(super) fn select(&self, offset: usize, len: usize) -> Result<()> {
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
    pub(super) fn len_1d(&self) -> Result<usize> {
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
    pub(super) fn is_scalar(&self) -> bool {
        // SAFETY: `self.0` is a dataspace this handle owns.
        locked(|| Ok(unsafe { H5Sget_simple_extent_type(self.0) }))
            .is_ok_and(|class| class == H5S_class_t::H5S_SCALAR)
    }
}
