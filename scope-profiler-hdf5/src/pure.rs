//! The HDF5 file in pure Rust, through the `rust-hdf5` crate: exactly what
//! the writer and the reader need, with the interface of the C layer
//! (`h5/`), which only a build with the MPI writers compiles.
//!
//! `rust-hdf5` writes every part of the layout (groups, attributes with
//! their creation order, contiguous and chunked datasets, shuffle +
//! deflate, chunks written already filtered, the summary compound,
//! variable-length strings) and reads every dataset; what it cannot read,
//! the numeric and list attributes of groups, [`crate::attrs`] reads over
//! its public format code. Strings are stored NUL-free and reversibly
//! ([`crate::strings`]).
//!
//! Reading is bounded by the file: no dataset is read whose values would
//! take more than a small multiple of the bytes the file holds
//! ([`Dataset::checked_len`]), so a hostile header cannot make a read
//! allocate terabytes.

use std::collections::BTreeSet;
use std::fmt::Display;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use rust_hdf5::format::messages::datatype::{ByteOrder, DatatypeMessage};
use rust_hdf5::{FillTime, H5File, H5Group};

use crate::attrs::{self, Attr, AttrValue};
use crate::strings::{decode, encode};

mod dataset;
#[cfg(test)]
mod h5py_tests;
#[cfg(test)]
mod tests;
mod types;

pub(super) use crate::schema::Layout;
pub(super) use dataset::{Dataset, H5Type};
pub(super) use types::{Class, Number};

pub(super) use crate::h5error::{H5Error, Result};

/// `result`'s error as an [`H5Error`] saying what was being done.
fn context<T>(result: rust_hdf5::Result<T>, what: impl Display) -> Result<T> {
    result.map_err(|e| H5Error(format!("cannot {what}: {e}")))
}

/// What every handle of one open file shares.
struct Shared {
    /// The file, while open (taken by [`File::close`]).
    h5: Mutex<Option<H5File>>,
    /// The file as the OS opened it, for [`crate::attrs`] (read mode; its
    /// reads move the file's one cursor, so one at a time).
    os: Option<Mutex<std::fs::File>>,
    /// Its size in bytes when opened (read mode), which bounds every read.
    size: u64,
    /// Its path.
    path: std::path::PathBuf,
    /// The paths of the groups and datasets made so far (write mode).
    made: Mutex<BTreeSet<String>>,
}

impl Shared {
    /// Runs `f` on the open file.
    fn with<T>(&self, f: impl FnOnce(&H5File) -> Result<T>) -> Result<T> {
        let h5 = self.h5.lock().unwrap_or_else(|e| e.into_inner());
        match h5.as_ref() {
            Some(h5) => f(h5),
            None => Err(H5Error("the file is closed".into())),
        }
    }

    fn made(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.made.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// An open HDF5 file.
pub(super) struct File {
    shared: std::sync::Arc<Shared>,
}

impl File {
    /// Creates (or truncates) the file at `path`.
    pub(super) fn create(path: &Path) -> Result<File> {
        let h5 = H5File::options()
            .best_effort_locking()
            .track_times(false)
            .create(path);
        let h5 = context(h5, format_args!("create {}", path.display()))?;
        Ok(File::new(h5, None, 0, path))
    }

    /// Opens the file at `path` to read it.
    pub(super) fn open(path: &Path) -> Result<File> {
        let os = std::fs::File::open(path)
            .map_err(|e| H5Error(format!("cannot open {}: {e}", path.display())))?;
        let size = os
            .metadata()
            .map_err(|e| H5Error(format!("cannot open {}: {e}", path.display())))?
            .len();
        let h5 = H5File::options().best_effort_locking().open(path);
        let h5 = context(h5, format_args!("open {}", path.display()))?;
        Ok(File::new(h5, Some(os), size, path))
    }

    /// Opens the file at `path` to add to it.
    #[cfg(any(test, feature = "mpi"))]
    pub(super) fn open_rw(path: &Path) -> Result<File> {
        let h5 = H5File::options().best_effort_locking().open_rw(path);
        let h5 = context(h5, format_args!("open {}", path.display()))?;
        Ok(File::new(h5, None, 0, path))
    }

    /// Writes everything so far (the metadata, where every dataset's data
    /// lies, among it) and opens the file again to add to it. Handles
    /// taken before are closed: take them again.
    pub(super) fn reopen(&self) -> Result<()> {
        let mut h5 = self.shared.h5.lock().unwrap_or_else(|e| e.into_inner());
        let open = h5
            .take()
            .ok_or_else(|| H5Error("the file is closed".into()))?;
        context(open.close_no_sync(), "close the file to reopen it")?;
        let path = &self.shared.path;
        let again = H5File::options().best_effort_locking().open_rw(path);
        *h5 = Some(context(again, format_args!("reopen {}", path.display()))?);
        Ok(())
    }

    fn new(h5: H5File, os: Option<std::fs::File>, size: u64, path: &Path) -> File {
        File {
            shared: std::sync::Arc::new(Shared {
                h5: Mutex::new(Some(h5)),
                os: os.map(Mutex::new),
                size,
                path: path.to_path_buf(),
                made: Mutex::new(BTreeSet::new()),
            }),
        }
    }

    /// The root group.
    pub(super) fn root(&self) -> Result<Group> {
        let h5 = self.shared.with(|f| Ok(f.root_group()))?;
        Ok(Group::new(h5, String::new(), &self.shared))
    }

    /// Writes what is still in memory and closes the file.
    pub(super) fn close(self) -> Result<()> {
        let h5 = self
            .shared
            .h5
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        match h5 {
            Some(h5) => context(h5.close(), "close the file"),
            None => Err(H5Error("the file was closed twice".into())),
        }
    }
}

/// A group of an open file.
pub(super) struct Group {
    h5: H5Group,
    /// The path from the root, without a leading `/` ("" for the root).
    path: String,
    shared: std::sync::Arc<Shared>,
    /// The group's attributes, read once (read mode).
    attrs: OnceLock<std::result::Result<Vec<Attr>, String>>,
}

impl Group {
    fn new(h5: H5Group, path: String, shared: &std::sync::Arc<Shared>) -> Group {
        Group {
            h5,
            path,
            shared: shared.clone(),
            attrs: OnceLock::new(),
        }
    }

    /// The path of the member `name`.
    fn member(&self, name: &str) -> String {
        match self.path.is_empty() {
            true => name.to_owned(),
            false => format!("{}/{name}", self.path),
        }
    }

    /// Fails for a name HDF5 would read as a path or cannot store.
    fn check_name(name: &str) -> Result<()> {
        match name.is_empty() || name.contains(['/', '\0']) || name == "." {
            true => Err(H5Error(format!("{name:?} cannot name an HDF5 object"))),
            false => Ok(()),
        }
    }

    /// Creates the group `name`; with `track_attr_order` it tracks and
    /// indexes the creation order of its attributes.
    pub(super) fn create_group(&self, name: &str, track_attr_order: bool) -> Result<Group> {
        Group::check_name(name)?;
        let what = format_args!("create group {name}");
        let h5 = self.shared.with(|f| {
            context(f.set_track_order(track_attr_order), what)?;
            let made = self.h5.create_group(name);
            context(f.set_track_order(false), what)?;
            context(made, what)
        })?;
        let path = self.member(name);
        self.shared.made().insert(path.clone());
        Ok(Group::new(h5, path, &self.shared))
    }

    /// Removes the dataset `name` (tests make hostile files with it).
    #[cfg(test)]
    pub(super) fn remove(&self, name: &str) -> Result<()> {
        let path = self.member(name);
        self.shared
            .with(|f| context(f.delete_dataset(&path), format_args!("remove {name}")))
    }

    /// Creates a 1-D dataset `name` of `len` elements of `T` stored as the
    /// type `dtype` (of `T`'s size): tests make hostile files with it.
    #[cfg(test)]
    pub(super) fn create_typed<T: H5Type>(
        &self,
        name: &str,
        dtype: DatatypeMessage,
        len: usize,
        layout: Layout,
    ) -> Result<Dataset> {
        let chunk = match layout {
            Layout::Chunked { chunk } | Layout::Deflate { chunk, .. } => Some(chunk),
            _ => None,
        };
        let builder = self.h5.new_dataset::<T>().shape([len]).datatype(dtype);
        let builder = match layout {
            Layout::Contiguous | Layout::Preallocated => builder,
            // Unlimited, so that no index is made for every chunk of a
            // huge extent.
            Layout::Chunked { chunk } => builder.chunk(&[chunk]).max_shape(&[None]),
            Layout::Deflate { chunk, level } => {
                builder.chunk(&[chunk]).shuffle_deflate(u32::from(level))
            }
        };
        let h5 = context(builder.create(name), format_args!("create dataset {name}"))?;
        Ok(Dataset::new(h5, self.member(name), chunk, &self.shared))
    }

    /// Opens the group `name`.
    pub(super) fn group(&self, name: &str) -> Result<Group> {
        let h5 = context(self.h5.group(name), format_args!("open group {name}"))?;
        Ok(Group::new(h5, self.member(name), &self.shared))
    }

    /// Whether this group has a link `name`.
    pub(super) fn contains(&self, name: &str) -> Result<bool> {
        if self.shared.made().contains(&self.member(name)) {
            return Ok(true);
        }
        // Write mode lists only groups that hold datasets: what this file
        // made is in `made`, what an earlier writer made is listed here.
        let names = context(self.h5.link_names(), "list a group's members")?;
        Ok(names.iter().any(|n| n == name))
    }

    /// The names of the group's links, in name order.
    pub(super) fn member_names(&self) -> Result<Vec<String>> {
        let mut names = context(self.h5.link_names(), "list a group's members")?;
        names.sort();
        Ok(names)
    }

    /// Creates a 1-D dataset `name` of `len` elements of `T`, stored as
    /// `layout` says, to be written later.
    pub(super) fn create_dataset<T: H5Type>(
        &self,
        name: &str,
        len: usize,
        layout: Layout,
    ) -> Result<Dataset> {
        Group::check_name(name)?;
        let builder = self.h5.new_dataset::<T>().shape([len]);
        let (builder, chunk) = match layout {
            Layout::Contiguous => (builder, None),
            Layout::Preallocated => (builder.early_allocation().fill_time(FillTime::Never), None),
            Layout::Chunked { chunk } => (
                builder.chunk(&[chunk]).fill_time(FillTime::Alloc),
                Some(chunk),
            ),
            Layout::Deflate { chunk, level } => (
                builder
                    .chunk(&[chunk])
                    .shuffle_deflate(u32::from(level))
                    .fill_time(FillTime::Alloc),
                Some(chunk),
            ),
        };
        let h5 = context(builder.create(name), format_args!("create dataset {name}"))?;
        self.shared.made().insert(self.member(name));
        Ok(Dataset::new(h5, self.member(name), chunk, &self.shared))
    }

    /// A contiguous dataset `name` of variable-length UTF-8 strings,
    /// written [`STRING_BATCH`] at a time: a table of a million names never
    /// holds a copy of them all.
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
    /// strings, allocated now, to be written later
    /// ([`Dataset::write_strings_at`]).
    pub(super) fn create_strings(&self, name: &str, len: usize) -> Result<Dataset> {
        Group::check_name(name)?;
        let builder = self
            .h5
            .new_dataset::<VlenString>()
            .shape([len])
            .datatype(DatatypeMessage::vlen_string_utf8());
        // Allocated now: strings are written into it slice by slice.
        let builder = match len {
            0 => builder,
            _ => builder.early_allocation(),
        };
        let h5 = context(builder.create(name), format_args!("create dataset {name}"))?;
        self.shared.made().insert(self.member(name));
        Ok(Dataset::new(h5, self.member(name), None, &self.shared))
    }

    /// Opens the dataset `name`.
    pub(super) fn dataset(&self, name: &str) -> Result<Dataset> {
        let path = self.member(name);
        let what = format_args!("open dataset {name}");
        let h5 = self.shared.with(|f| match self.shared.os.is_some() {
            true => context(f.dataset(&path), what),
            false => context(f.dataset_writer(&path), what),
        })?;
        let chunk = match h5.chunk_dims().as_deref() {
            Some(&[chunk]) => Some(chunk),
            _ => None,
        };
        Ok(Dataset::new(h5, path, chunk, &self.shared))
    }

    /// A scalar int64 attribute.
    pub(super) fn write_attr_i64(&self, name: &str, value: i64) -> Result<()> {
        self.write_attr_scalar(name, value)
    }

    /// A scalar attribute of `T`'s type (int64, uint64, float64...).
    pub(super) fn write_attr_scalar<T: H5Type>(&self, name: &str, value: T) -> Result<()> {
        let set = self.h5.set_attr_numeric(name, &value);
        context(set, format_args!("write attribute {name}"))
    }

    /// A 1-D attribute of variable-length UTF-8 strings (what h5py writes
    /// for a list of `str`).
    pub(super) fn write_attr_strs(&self, name: &str, values: &[&str]) -> Result<()> {
        let stored: Vec<String> = values.iter().map(|v| encode(v).into_owned()).collect();
        let refs: Vec<&str> = stored.iter().map(String::as_str).collect();
        let set = self.h5.set_attr_string_array(name, &refs);
        context(set, format_args!("write attribute {name}"))
    }

    /// A scalar variable-length UTF-8 attribute.
    pub(super) fn write_attr_str(&self, name: &str, value: &str) -> Result<()> {
        let set = self.h5.set_attr_string(name, &encode(value));
        context(set, format_args!("write attribute {name}"))
    }

    /// The group's attributes (read mode), read once.
    fn attrs(&self) -> Result<&[Attr]> {
        let attrs = self.attrs.get_or_init(|| {
            let Some(os) = &self.shared.os else {
                return Err("attributes are read in read mode only".into());
            };
            let path: Vec<&str> = match self.path.is_empty() {
                true => Vec::new(),
                false => self.path.split('/').collect(),
            };
            let os = os.lock().unwrap_or_else(|e| e.into_inner());
            match attrs::group_attrs(&os, &path) {
                Ok(Some(attrs)) => Ok(attrs),
                Ok(None) => Err(format!("no group /{}", self.path)),
                Err(e) => Err(e.to_string()),
            }
        });
        match attrs {
            Ok(attrs) => Ok(attrs),
            Err(e) => Err(H5Error(format!(
                "cannot read the attributes of /{}: {e}",
                self.path
            ))),
        }
    }

    /// Opens the attribute `name`.
    pub(super) fn attr(&self, name: &str) -> Result<Attribute> {
        match self.attrs()?.iter().find(|a| a.name == name) {
            Some(attr) => Ok(Attribute(attr.value.clone())),
            None => Err(H5Error(format!(
                "cannot open attribute {name}: /{} has none of that name",
                self.path
            ))),
        }
    }

    /// The names of the group's attributes in creation order, or in name
    /// order if the file does not track it.
    pub(super) fn attr_names(&self) -> Result<Vec<String>> {
        Ok(self.attrs()?.iter().map(|a| a.name.clone()).collect())
    }
}

/// Strings written to a dataset at a time.
const STRING_BATCH: usize = 16 * 1024;

/// An element of a variable-length string dataset as the file holds it (a
/// global heap reference, 16 bytes): the type `rust-hdf5` creates such a
/// dataset with, whose strings are written through
/// `write_vlen_strings_slice`.
#[derive(Clone, Copy, Default)]
struct VlenString(#[allow(dead_code)] [u8; 16]);

impl rust_hdf5::H5Type for VlenString {
    fn hdf5_type() -> DatatypeMessage {
        DatatypeMessage::vlen_string_utf8()
    }
    fn element_size() -> usize {
        16
    }
}

/// An attribute's value, read.
pub(super) struct Attribute(AttrValue);

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

impl Attribute {
    /// What a scalar attribute holds; `None` if it is not scalar.
    pub(super) fn scalar_kind(&self) -> Result<Option<ScalarKind>> {
        Ok(match &self.0 {
            AttrValue::Int(_) => Some(ScalarKind::Integer),
            AttrValue::UInt(_) => Some(ScalarKind::Unsigned),
            AttrValue::Float(_) => Some(ScalarKind::Float),
            AttrValue::Str(_) => Some(ScalarKind::String),
            AttrValue::Strs(_) => None,
            AttrValue::Other(_) => Some(ScalarKind::Other),
        })
    }

    /// The value of a scalar integer attribute, as int64.
    pub(super) fn read_i64(&self) -> Result<i64> {
        self.read_scalar()
    }

    /// The value of a scalar numeric attribute, converted to `T` (a
    /// standard integer or float type of the same class).
    pub(super) fn read_scalar<T: H5Type>(&self) -> Result<T> {
        T::from_attr(&self.0)
    }

    /// The value of a scalar string attribute.
    pub(super) fn read_string(&self) -> Result<String> {
        match &self.0 {
            AttrValue::Str(s) => Ok(decode(s)),
            other => Err(other.mismatch("string")),
        }
    }

    /// The strings of a 1-D string attribute (a scalar one: its one string).
    pub(super) fn read_string_list(&self) -> Result<Vec<String>> {
        match &self.0 {
            AttrValue::Str(s) => Ok(vec![decode(s)]),
            AttrValue::Strs(list) => Ok(list.iter().map(|s| decode(s)).collect()),
            other => Err(other.mismatch("string")),
        }
    }
}

impl AttrValue {
    /// The error of reading this value as `want` (a class name) values.
    pub(crate) fn mismatch(&self, want: &str) -> H5Error {
        let class = match self {
            AttrValue::Int(_) | AttrValue::UInt(_) => "integer",
            AttrValue::Float(_) => "float",
            AttrValue::Str(_) | AttrValue::Strs(_) => "string",
            AttrValue::Other(what) => what,
        };
        H5Error(format!(
            "holds {class} values where {want} values were expected"
        ))
    }
}

/// Whether `dtype` is a little-endian 64-bit signed integer (the event
/// columns' type, which [`crate::chunks`] decodes itself).
fn is_native_i64(dtype: &DatatypeMessage) -> bool {
    matches!(
        dtype,
        DatatypeMessage::FixedPoint {
            size: 8,
            signed: true,
            byte_order: ByteOrder::LittleEndian,
            ..
        }
    )
}
