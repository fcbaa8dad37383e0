//! Groups: created and opened, their members listed, and the datasets
//! they hold created and opened.

use std::ffi::{c_char, c_uint};
use std::ptr;

use super::errors::{c_name, check};
use super::{
    Dataset, Dataspace, Datatype, Group, H5Error, H5Type, Layout, PropertyList, Result, locked,
};
use hdf5_sys::h5::{H5_index_t, H5_iter_order_t, hsize_t};
use hdf5_sys::h5d::{H5D_alloc_time_t, H5D_fill_time_t, H5D_layout_t, H5Dcreate2, H5Dopen2};
use hdf5_sys::h5g::{H5G_info_t, H5Gcreate2, H5Gget_info, H5Gopen2};
use hdf5_sys::h5l::{H5Lexists, H5Lget_name_by_idx};
use hdf5_sys::h5p::{
    H5P_CLS_DATASET_CREATE, H5P_CLS_GROUP_CREATE, H5P_CRT_ORDER_INDEXED, H5P_CRT_ORDER_TRACKED,
    H5P_DEFAULT, H5Pset_alloc_time, H5Pset_attr_creation_order, H5Pset_chunk, H5Pset_deflate,
    H5Pset_fill_time, H5Pset_layout, H5Pset_obj_track_times, H5Pset_shuffle,
};

impl Group {
    /// Creates the group `name`; with `track_attr_order` it tracks and
    /// indexes the creation order of its attributes.
    pub(crate) fn create_group(&self, name: &str, track_attr_order: bool) -> Result<Group> {
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
    pub(crate) fn group(&self, name: &str) -> Result<Group> {
        let c = c_name(name.as_bytes())?;
        locked(|| {
            // SAFETY: `self.0` is an open group; `c` is NUL-terminated.
            let id = unsafe { H5Gopen2(self.0, c.as_ptr(), H5P_DEFAULT) };
            Group::own(id, format_args!("open group {name}"))
        })
    }

    /// Whether this group has a link `name`.
    pub(crate) fn contains(&self, name: &str) -> Result<bool> {
        let c = c_name(name.as_bytes())?;
        locked(|| {
            // SAFETY: `self.0` is an open group; `c` is NUL-terminated.
            let exists = unsafe { H5Lexists(self.0, c.as_ptr(), H5P_DEFAULT) };
            check(exists, format_args!("look up {name}")).map(|e| e > 0)
        })
    }

    /// Creates a 1-D dataset `name` of `len` elements of `T`, stored as
    /// `layout` says, to be written later.
    pub(crate) fn create_dataset<T: H5Type>(
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
}

impl Group {
    /// Opens the dataset `name`.
    pub(crate) fn dataset(&self, name: &str) -> Result<Dataset> {
        let c = c_name(name.as_bytes())?;
        locked(|| {
            // SAFETY: `self.0` is an open group; `c` is NUL-terminated.
            let id = unsafe { H5Dopen2(self.0, c.as_ptr(), H5P_DEFAULT) };
            Dataset::own(id, format_args!("open dataset {name}"))
        })
    }

    /// The names of the group's links, in name order.
    pub(crate) fn member_names(&self) -> Result<Vec<String>> {
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
}
