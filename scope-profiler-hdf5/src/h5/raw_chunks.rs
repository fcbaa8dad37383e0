//! Chunks moved as stored: written already filtered, and read raw for
//! the crate's own decoder (`crate::chunks`) when it can decode them.

use std::ptr;

use super::checks::{MAX_CHUNK_BYTES, file_size_of};
use super::errors::check;
use super::{Dataset, Datatype, H5Error, H5Type, PropertyList, Result, locked};
use hdf5_sys::h5::{HADDR_UNDEF, hsize_t};
use hdf5_sys::h5d::{H5D_layout_t, H5Dget_create_plist, H5Dget_type, H5Dwrite_chunk};
use hdf5_sys::h5p::{H5P_DEFAULT, H5Pget_chunk, H5Pget_filter2, H5Pget_layout, H5Pget_nfilters};
use hdf5_sys::h5t::H5Tequal;
use hdf5_sys::h5z::{H5Z_FILTER_DEFLATE, H5Z_FILTER_SHUFFLE};

impl Dataset {
    /// Writes one chunk of a chunked 1-D dataset, already filtered (every
    /// filter of the dataset applied, in order): the chunk that starts at
    /// element `first`.
    pub(crate) fn write_chunk(&self, first: usize, bytes: &[u8]) -> Result<()> {
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

    /// The chunk length, in elements, when this dataset's chunks can be
    /// decoded outside the library: chunked in one dimension, of native
    /// 64-bit integers, through the shuffle filter then the deflate filter
    /// and no other (what this crate and the Python package write);
    /// `None` for any other dataset, which HDF5 decodes.
    pub(crate) fn shuffled_deflate_i64_chunks(&self) -> Result<Option<usize>> {
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
    pub(crate) fn read_raw_chunk(&self, first: usize, buf: &mut Vec<u8>) -> Result<Option<u32>> {
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
}
