//! What a read may allocate: a dataset's element count checked against
//! the bytes its file holds, and its chunks against a bound.

use super::errors::check;
use super::{Dataset, File, H5Error, H5Type, PropertyList, Result, locked};
use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5d::{H5D_layout_t, H5Dget_create_plist, H5Dget_storage_size};
use hdf5_sys::h5f::H5Fget_filesize;
use hdf5_sys::h5i::{H5Iget_file_id, hid_t};
use hdf5_sys::h5p::{H5Pget_chunk, H5Pget_layout};

/// How many bytes a read may decode per byte a dataset stores: deflate's
/// best ratio is 1032:1, so every real column fits, and a declared extent
/// of 10^15 elements in a small file does not.
const MAX_EXPANSION: u64 = 1100;
/// Bytes any dataset or attribute may hold whatever it stores (a dataset
/// never written reads as fill values).
pub(super) const SMALL_OBJECT: u64 = 1 << 20;
/// The largest chunk, in bytes, that a read lets HDF5 or this crate decode
/// (ours hold 512 KiB, h5py's about 1 MiB): HDF5 allocates whole chunks.
pub(super) const MAX_CHUNK_BYTES: u64 = 64 << 20;

/// The size in bytes of the file that holds the object `id`.
/// Call under the lock.
pub(super) fn file_size_of(id: hid_t) -> Result<u64> {
    // SAFETY: `id` is an open object; the returned file id is a new
    // reference that the handle closes.
    let file = File::own(unsafe { H5Iget_file_id(id) }, "get an object's file")?;
    let mut size: hsize_t = 0;
    // SAFETY: `file.0` is an open file; `size` is a valid out-pointer.
    let status = unsafe { H5Fget_filesize(file.0, &mut size) };
    check(status, "get the file's size")?;
    Ok(size)
}

impl Dataset {
    /// The number of elements of a 1-D dataset read `memory_size` bytes an
    /// element, checked against what its file can hold: the values a read
    /// decodes may not exceed [`MAX_EXPANSION`] times the bytes the
    /// dataset stores (or the file's size, if smaller) plus
    /// [`SMALL_OBJECT`], nor its chunks [`MAX_CHUNK_BYTES`]; so no read
    /// allocates more than a small multiple of the file's own size.
    pub(crate) fn checked_len(&self, memory_size: usize) -> Result<usize> {
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
    pub(crate) fn checked_len_of<T: H5Type>(&self) -> Result<usize> {
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
