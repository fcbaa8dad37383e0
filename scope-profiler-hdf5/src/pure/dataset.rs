//! A dataset of the pure-Rust layer: created and written column by column,
//! or read whole, by slices, or chunk by chunk, every read bounded by the
//! bytes its file holds.

use rust_hdf5::format::messages::datatype::DatatypeMessage;
use rust_hdf5::{H5Dataset, StorageLayout};

use super::types::{Class, Number, check_converts_to};
use super::{H5Error, Result, Shared, context, is_native_i64};
use crate::attrs::AttrValue;
use crate::strings::{decode, encode};

/// How many bytes a read may decode per byte its file holds: deflate's
/// best ratio is about 1032:1, so a true file stays below it, while a
/// dataset that claims 10^15 elements in a small file does not.
const MAX_EXPANSION: u64 = 1100;
/// Bytes any dataset may hold whatever its file stores (a dataset never
/// written reads as fill values).
const SMALL_OBJECT: u64 = 1 << 20;
/// The largest chunk, in bytes, that a read decodes (ours hold 512 KiB,
/// h5py's about 1 MiB): whole chunks are allocated.
pub(crate) const MAX_CHUNK_BYTES: u64 = 64 << 20;

/// A type whose values a dataset stores: its HDF5 type (`rust_hdf5`'s
/// trait) and how it is read back, converted from what the file holds.
pub(crate) trait H5Type: rust_hdf5::H5Type + Default + Send + Sync {
    /// The class of values read as `Self`.
    const CLASS: Class;
    /// A compound's members: name, byte offset, class (8 bytes each).
    const MEMBERS: &'static [(&'static str, u32, Class)] = &[];
    /// Every element of `dataset` as `Self` (its count already checked).
    fn read_all(dataset: &Dataset) -> Result<Vec<Self>>;
    /// Elements `offset..offset + out.len()` into `out`.
    fn read_range(dataset: &Dataset, offset: usize, out: &mut [Self]) -> Result<()>;
    /// A scalar attribute's value as `Self` (integers to integers, floats
    /// to floats, as HDF5's conversions allow).
    fn from_attr(value: &AttrValue) -> Result<Self>;
}

/// Implements [`H5Type`] for integers, read through `rust_hdf5`'s checked
/// numeric conversions.
macro_rules! integers {
    ($($t:ty),*) => {$(
        impl H5Type for $t {
            const CLASS: Class = Class::Integer;
            fn read_all(dataset: &Dataset) -> Result<Vec<Self>> {
                dataset.context(dataset.h5.read_numeric_as::<$t>())
            }
            fn read_range(dataset: &Dataset, offset: usize, out: &mut [Self]) -> Result<()> {
                let read = dataset.h5.read_numeric_slice_as::<$t>(&[offset], &[out.len()]);
                copy_into(context(read, "read part of a dataset")?, out)
            }
            fn from_attr(value: &AttrValue) -> Result<Self> {
                let converted = match value {
                    AttrValue::Int(v) => <$t>::try_from(*v).ok(),
                    AttrValue::UInt(v) => <$t>::try_from(*v).ok(),
                    other => return Err(other.mismatch("integer")),
                };
                converted.ok_or_else(|| {
                    H5Error(format!("the attribute's value {value:?} overflows {}", stringify!($t)))
                })
            }
        }
    )*};
}

integers!(i8, i64, u32, u64);

impl H5Type for f64 {
    const CLASS: Class = Class::Float;
    fn read_all(dataset: &Dataset) -> Result<Vec<Self>> {
        dataset.context(dataset.h5.read_numeric_as::<f64>())
    }
    fn read_range(dataset: &Dataset, offset: usize, out: &mut [Self]) -> Result<()> {
        let read = dataset
            .h5
            .read_numeric_slice_as::<f64>(&[offset], &[out.len()]);
        copy_into(context(read, "read part of a dataset")?, out)
    }
    fn from_attr(value: &AttrValue) -> Result<Self> {
        match value {
            AttrValue::Float(v) => Ok(*v),
            other => Err(other.mismatch("float")),
        }
    }
}

/// `values` into `out`, which must have their count.
fn copy_into<T: Copy>(values: Vec<T>, out: &mut [T]) -> Result<()> {
    if values.len() != out.len() {
        return Err(H5Error(format!(
            "read {} values for {} asked",
            values.len(),
            out.len()
        )));
    }
    out.copy_from_slice(&values);
    Ok(())
}

/// A dataset of an open file.
pub(crate) struct Dataset {
    h5: H5Dataset,
    /// Its path, for errors.
    path: String,
    /// Elements per chunk, for one this file made chunked.
    chunk: Option<usize>,
    /// The size of the file it was read from (0 when written).
    file_size: u64,
    /// The file.
    shared: std::sync::Arc<Shared>,
}

impl Dataset {
    /// `result`'s error as one saying this dataset could not be read.
    fn context<T>(&self, result: rust_hdf5::Result<T>) -> Result<T> {
        context(result, format_args!("read {}", self.path))
    }

    pub(super) fn new(
        h5: H5Dataset,
        path: String,
        chunk: Option<usize>,
        shared: &std::sync::Arc<Shared>,
    ) -> Self {
        Dataset {
            h5,
            path,
            chunk,
            file_size: shared.size,
            shared: shared.clone(),
        }
    }

    /// Writes `values` to elements `offset..offset + values.len()` of a 1-D
    /// dataset of `T`s.
    pub(crate) fn write<T: H5Type>(&self, offset: usize, values: &[T]) -> Result<()> {
        if values.is_empty() {
            return Ok(());
        }
        let written = self.h5.write_slice(&[offset], &[values.len()], values);
        context(written, format_args!("write to {}", self.path))
    }

    /// Writes `values` (`len` of them) as elements `offset..offset + len`
    /// of a dataset of variable-length strings (`name` for errors),
    /// [`super::STRING_BATCH`] at a time.
    pub(crate) fn write_strings_at<S: AsRef<str> + PartialEq>(
        &self,
        name: &str,
        offset: usize,
        len: usize,
        values: impl Iterator<Item = S>,
    ) -> Result<()> {
        let mut values = values.peekable();
        let mut batch: Vec<String> = Vec::with_capacity(len.min(super::STRING_BATCH));
        let mut written = 0;
        while values.peek().is_some() {
            batch.clear();
            let next = values.by_ref().take(super::STRING_BATCH);
            batch.extend(next.map(|v| encode(v.as_ref()).into_owned()));
            let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
            let done = self.h5.write_vlen_strings_slice(offset + written, &refs);
            context(done, format_args!("write the strings {name}"))?;
            written += batch.len();
        }
        match written == len {
            true => Ok(()),
            false => Err(H5Error(format!("{name}: {written} strings for {len}"))),
        }
    }

    /// Writes one chunk of a chunked 1-D dataset, already filtered (every
    /// filter of the dataset applied, in order): the chunk that starts at
    /// element `first`.
    pub(crate) fn write_chunk(&self, first: usize, bytes: &[u8]) -> Result<()> {
        let chunk = self
            .chunk
            .ok_or_else(|| H5Error(format!("{} is not chunked", self.path)))?;
        if !first.is_multiple_of(chunk) {
            return Err(H5Error(format!(
                "element {first} of {} starts no chunk",
                self.path
            )));
        }
        let written = self.h5.write_chunk_raw(first / chunk, bytes, 0);
        context(written, format_args!("write the chunk at element {first}"))
    }

    /// The number of elements of a 1-D dataset read `memory_size` bytes an
    /// element, checked against what its file can hold: the values a read
    /// decodes may not exceed [`MAX_EXPANSION`] times the file's size (its
    /// size itself, for a contiguous dataset) plus [`SMALL_OBJECT`], nor
    /// its chunks [`MAX_CHUNK_BYTES`]; so no read allocates more than a
    /// small multiple of the file's own size.
    pub(crate) fn checked_len(&self, memory_size: usize) -> Result<usize> {
        let shape = self.h5.shape();
        let n = match shape.as_slice() {
            [n] => *n,
            [] => 1,
            _ => {
                return Err(H5Error(format!(
                    "{} has {} dimensions, expected 1",
                    self.path,
                    shape.len()
                )));
            }
        };
        let element = (self.h5.element_size()).max(memory_size) as u64;
        let layout = context(self.h5.storage_layout(), "read a dataset's layout")?;
        let expansion = if layout == StorageLayout::Chunked {
            MAX_EXPANSION
        } else {
            1
        };
        let bound = self
            .file_size
            .saturating_mul(expansion)
            .saturating_add(SMALL_OBJECT);
        if (n as u64).saturating_mul(element) > bound {
            return Err(H5Error(format!(
                "the dataset declares {n} elements of {element} bytes, more than its file holds"
            )));
        }
        if let Some(dims) = self.h5.chunk_dims() {
            let bytes = dims
                .iter()
                .try_fold(element, |b, &d| b.checked_mul(d as u64));
            if bytes.is_none_or(|b| b > MAX_CHUNK_BYTES) {
                return Err(H5Error(format!(
                    "{} has chunks of {dims:?} elements, larger than {MAX_CHUNK_BYTES} bytes",
                    self.path
                )));
            }
        }
        Ok(n)
    }

    /// The number of elements of a 1-D dataset whose values are read as
    /// `T`s ([`Self::checked_len`]), after checking that its type converts
    /// to `T` safely.
    pub(crate) fn checked_len_of<T: H5Type>(&self) -> Result<usize> {
        let dtype = context(self.h5.datatype(), "read a dataset's type")?;
        check_converts_to(&dtype, T::CLASS, T::MEMBERS)?;
        self.checked_len(size_of::<T>())
    }

    /// Every element, converted to `T` (any integer width to any other, a
    /// compound member by member, by name).
    pub(crate) fn read<T: H5Type>(&self) -> Result<Vec<T>> {
        let n = self.checked_len_of::<T>()?;
        if n == 0 {
            return Ok(Vec::new());
        }
        let values = T::read_all(self)?;
        match values.len() == n {
            true => Ok(values),
            false => Err(H5Error(format!(
                "{}: read {} values of {n}",
                self.path,
                values.len()
            ))),
        }
    }

    /// Elements `offset..offset + values.len()` of a 1-D dataset, converted
    /// to `T` into `values`.
    pub(crate) fn read_into<T: H5Type>(&self, offset: usize, values: &mut [T]) -> Result<()> {
        if values.is_empty() {
            return Ok(());
        }
        let n = self.checked_len_of::<T>()?;
        if offset.checked_add(values.len()).is_none_or(|end| end > n) {
            return Err(H5Error(format!(
                "{}: elements {offset}..+{} of {n}",
                self.path,
                values.len()
            )));
        }
        T::read_range(self, offset, values)
    }

    /// The named members of every element of a compound dataset, one
    /// column per name (`None` where the file's compound has no such
    /// member, or one of a type that is not a number).
    pub(crate) fn compound_columns(&self, names: &[&str]) -> Result<Vec<Option<Vec<Number>>>> {
        let n = self.checked_len(0)?;
        let dtype = context(self.h5.datatype(), "read a dataset's type")?;
        let DatatypeMessage::Compound { size, members } = &dtype else {
            return Err(H5Error(format!("{} is not a compound", self.path)));
        };
        let size = *size as usize;
        let raw = match n {
            0 => Vec::new(),
            _ => context(self.h5.read_raw_bytes(), format_args!("read {}", self.path))?,
        };
        if size == 0 || raw.len() != n.saturating_mul(size) {
            return Err(H5Error(format!(
                "{}: {} bytes for {n} elements of {size}",
                self.path,
                raw.len()
            )));
        }
        let column = |name: &str| -> Option<Vec<Number>> {
            let member = members.iter().find(|m| m.name == name)?;
            let offset = member.offset as usize;
            raw.chunks_exact(size)
                .map(|element| Number::decode(&member.datatype, element.get(offset..)?))
                .collect()
        };
        Ok(names.iter().map(|name| column(name)).collect())
    }

    /// The class of the dataset's type, as HDF5 names it ("integer",
    /// "float", "string", "compound"...).
    #[cfg(test)]
    pub(crate) fn class(&self) -> Result<&'static str> {
        let dtype = context(self.h5.datatype(), "read a dataset's type")?;
        Ok(super::types::class_name(&dtype))
    }

    /// Every element of an integer or float dataset as stored (the tests
    /// compare them with what h5py reads).
    #[cfg(test)]
    pub(crate) fn numbers(&self) -> Result<Vec<Number>> {
        let n = self.checked_len(0)?;
        let dtype = context(self.h5.datatype(), "read a dataset's type")?;
        let size = dtype.element_size() as usize;
        let raw = match n {
            0 => Vec::new(),
            _ => context(self.h5.read_raw_bytes(), "read a dataset")?,
        };
        raw.chunks_exact(size.max(1))
            .map(|e| Number::decode(&dtype, e).ok_or_else(|| H5Error("not a number".into())))
            .collect()
    }

    /// The chunk length, in elements, when this dataset's chunks can be
    /// decoded outside the library: chunked in one dimension, of 64-bit
    /// little-endian integers, through the shuffle filter then the deflate
    /// filter and no other (what this crate and the Python package write);
    /// `None` for any other dataset, which the library decodes.
    pub(crate) fn shuffled_deflate_i64_chunks(&self) -> Result<Option<usize>> {
        let layout = context(self.h5.storage_layout(), "read a dataset's layout")?;
        if layout != StorageLayout::Chunked {
            return Ok(None);
        }
        let Some(&[chunk]) = self.h5.chunk_dims().as_deref() else {
            return Ok(None);
        };
        let filters = context(self.h5.filters(), "read a dataset's filters")?;
        let ids: Vec<u16> = filters.iter().map(|f| f.id).collect();
        // HDF5's filter ids: 2 is shuffle, 1 deflate.
        if ids != [2, 1] || chunk == 0 {
            return Ok(None);
        }
        let dtype = context(self.h5.datatype(), "read a dataset's type")?;
        Ok(is_native_i64(&dtype).then_some(chunk))
    }

    /// The stored (filtered) bytes of the chunk whose first element is
    /// `first`, into `buf`, and the chunk's filter mask (bit `i` set:
    /// filter `i` was not applied); `None` if the chunk cannot be read
    /// raw (never written, say), which a read through the library then
    /// reports.
    pub(crate) fn read_raw_chunk(&self, first: usize, buf: &mut Vec<u8>) -> Result<Option<u32>> {
        let Some(&[chunk]) = self.h5.chunk_dims().as_deref() else {
            return Ok(None);
        };
        if chunk == 0 || !first.is_multiple_of(chunk) {
            return Ok(None);
        }
        let Ok((bytes, mask)) = self.h5.read_chunk_raw_at(&[first / chunk]) else {
            return Ok(None);
        };
        // A deflated chunk is at most a little larger than the chunk
        // (itself at most MAX_CHUNK_BYTES); a corrupt index may say more.
        if bytes.len() as u64 > MAX_CHUNK_BYTES + MAX_CHUNK_BYTES / 64 {
            return Err(H5Error(format!(
                "the chunk at element {first} claims {} stored bytes",
                bytes.len()
            )));
        }
        *buf = bytes;
        Ok(Some(mask))
    }

    /// Every element of a string dataset (variable-length or fixed, ASCII
    /// or UTF-8; bytes that are not UTF-8 replaced).
    pub(crate) fn read_strings(&self) -> Result<Vec<String>> {
        let dtype = context(self.h5.datatype(), "read a dataset's type")?;
        check_converts_to(&dtype, Class::String, &[])
            .map_err(|_| H5Error("expected strings".into()))?;
        self.checked_len(16)?;
        let strings = context(
            self.h5.read_strings_lossy(),
            format_args!("read {}", self.path),
        )?;
        Ok(strings.iter().map(|s| decode(s)).collect())
    }

    /// The byte offset of the data in the file, for writing it directly
    /// (a dataset allocated at creation and never filled by the library:
    /// [`super::Layout::Preallocated`]), as the file on disk says: known
    /// once its metadata is written ([`super::File::reopen`]). `None`
    /// unless the dataset is contiguous, allocated, and of its full size.
    pub(crate) fn offset(&self) -> Option<u64> {
        let expected = self.h5.total_elements() as u64 * self.h5.element_size() as u64;
        let os = std::fs::File::open(&self.shared.path).ok()?;
        let path: Vec<&str> = self.path.split('/').collect();
        match crate::attrs::contiguous_data(&os, &path) {
            Ok(Some((address, size))) if size == expected && expected > 0 => Some(address),
            _ => None,
        }
    }
}
