//! Names and record types the writer and the reader share, so the two cannot
//! drift apart. They follow `scope_profiler/h5writer.py` of the Python package.

#[cfg(feature = "mpio")]
use std::mem::{offset_of, size_of};

#[cfg(feature = "mpio")]
use super::h5::{self, Datatype, H5Type};
use crate::profile::SummaryStatistics;

/// Root attribute holding the schema version.
pub(super) const SCHEMA_ATTR: &str = "scope_profiler_schema";
/// The schema version written: per-row delta-encoded starts plus durations.
pub(super) const SCHEMA_VERSION: i64 = 3;
/// Root attribute naming the storage layout.
pub(super) const LAYOUT_ATTR: &str = "storage_layout";
/// The only storage layout written: one row per (rank, region), events in columns.
pub(super) const COLUMNAR: &str = "columnar";
/// `storage_layout` of an aggregation-mode file.
pub(super) const AGGREGATE: &str = "aggregate";

/// Group of run metadata attributes.
pub(super) const METADATA: &str = "metadata";
/// Group holding `names`, the region id → name dictionary.
pub(super) const REGION_TABLE: &str = "region_table";
/// Group of per-(rank, region) columns.
pub(super) const INDEX: &str = "rank_region_index";
/// Group of per-call columns.
pub(super) const EVENTS: &str = "events";
/// Group of per-thread columns.
pub(super) const THREAD_TABLE: &str = "thread_table";
/// This crate's own group (the Python package reads none of it): the call
/// paths of every lane, as `finalize` builds them (see `CallPath`).
pub(super) const CALL_PATHS: &str = "scope_profiler_call_paths";
/// The integer columns of [`CALL_PATHS`], one value per path; the
/// histograms follow as `histogram_offsets` (one more than the paths),
/// `histogram_buckets` and `histogram_counts`.
pub(super) const CALL_PATH_COLUMNS: [&str; 11] = [
    "parent",
    "thread_id",
    "task_id",
    "region_id",
    "calls",
    "total_ns",
    "own_ns",
    "min_ns",
    "max_ns",
    "first_start_ns",
    "last_end_ns",
];
/// Group of per-task columns.
pub(super) const TASK_TABLE: &str = "task_table";

/// `tags` and `event_metadata` value of a row without any: an empty JSON list.
pub(super) const EMPTY_JSON_LIST: &str = "[]";

/// Largest chunk of a compressed column, in elements (512 KiB of int64).
pub(super) const MAX_CHUNK: usize = 65_536;

/// How a dataset's elements are stored (either HDF5 layer creates it so).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Layout {
    /// One contiguous block.
    Contiguous,
    /// One contiguous block allocated at creation and never filled by the
    /// library, so that its bytes may be written directly.
    Preallocated,
    /// Chunks of `chunk` elements, unfiltered.
    Chunked {
        /// Elements per chunk.
        chunk: usize,
    },
    /// Chunks of `chunk` elements, filtered by shuffle then deflate(`level`).
    Deflate {
        /// Elements per chunk.
        chunk: usize,
        /// The deflate level, 0-9.
        level: u8,
    },
}

/// One element of `rank_region_index/summary_statistics`, field for field the
/// numpy dtype `_SUMMARY_DTYPE` of the Python writer (names and order matter).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub(super) struct SummaryRecord {
    total: i64,
    minimum: i64,
    maximum: i64,
    first: i64,
    last: i64,
    start_minimum: i64,
    end_maximum: i64,
    gpu_count: u64,
    gpu_total: i64,
    mean: f64,
    m2: f64,
}

/// The members of [`SummaryRecord`], in its order.
#[cfg(not(feature = "mpio"))]
const SUMMARY_FIELDS: [&str; 11] = [
    "total",
    "minimum",
    "maximum",
    "first",
    "last",
    "start_minimum",
    "end_maximum",
    "gpu_count",
    "gpu_total",
    "mean",
    "m2",
];

/// The compound of the Python writer's `_SUMMARY_DTYPE`: ten 8-byte
/// integers (`gpu_count` unsigned) then two float64s, packed, 88 bytes.
#[cfg(not(feature = "mpio"))]
impl rust_hdf5::H5Type for SummaryRecord {
    fn hdf5_type() -> rust_hdf5::format::messages::datatype::DatatypeMessage {
        use rust_hdf5::format::messages::datatype::{CompoundMember, DatatypeMessage};
        let members = SUMMARY_FIELDS
            .iter()
            .enumerate()
            .map(|(i, name)| CompoundMember {
                name: (*name).to_owned(),
                offset: 8 * i as u32,
                datatype: match *name {
                    "gpu_count" => DatatypeMessage::u64_type(),
                    "mean" | "m2" => DatatypeMessage::f64_type(),
                    _ => DatatypeMessage::i64_type(),
                },
            })
            .collect();
        DatatypeMessage::compound(88, members)
    }

    fn element_size() -> usize {
        88
    }
}

// The layout `hdf5_type` describes: eleven 8-byte fields, no padding.
#[cfg(not(feature = "mpio"))]
const _: () = assert!(std::mem::size_of::<SummaryRecord>() == 88);

#[cfg(not(feature = "mpio"))]
impl super::h5::H5Type for SummaryRecord {
    const CLASS: super::h5::Class = super::h5::Class::Compound;
    const MEMBERS: &'static [(&'static str, u32, super::h5::Class)] = &{
        use super::h5::Class::{Float, Integer};
        let mut members = [("", 0, Integer); 11];
        let mut i = 0;
        while i < 11 {
            let class = if i >= 9 { Float } else { Integer };
            members[i] = (SUMMARY_FIELDS[i], 8 * i as u32, class);
            i += 1;
        }
        members
    };
    fn read_all(dataset: &super::h5::Dataset) -> super::h5::Result<Vec<Self>> {
        SummaryRecord::read(dataset)
    }

    fn read_range(_: &super::h5::Dataset, _: usize, _: &mut [Self]) -> super::h5::Result<()> {
        Err("summary records are read whole".to_owned().into())
    }

    fn from_attr(_: &crate::attrs::AttrValue) -> super::h5::Result<Self> {
        Err("no attribute holds a summary record".to_owned().into())
    }
}

#[cfg(not(feature = "mpio"))]
impl SummaryRecord {
    /// Every record of the compound dataset `dataset`, member by member by
    /// name (a member the file's compound lacks reads as 0), as HDF5
    /// converts one compound to another.
    fn read(dataset: &super::h5::Dataset) -> super::h5::Result<Vec<Self>> {
        use super::pure::Number;
        let columns = dataset.compound_columns(&SUMMARY_FIELDS)?;
        let n = columns.iter().flatten().map(Vec::len).next().unwrap_or(0);
        let value = |field: usize, row: usize| -> Number {
            columns[field].as_ref().map_or(Number::Int(0), |c| c[row])
        };
        Ok((0..n)
            .map(|row| SummaryRecord {
                total: value(0, row).as_i64(),
                minimum: value(1, row).as_i64(),
                maximum: value(2, row).as_i64(),
                first: value(3, row).as_i64(),
                last: value(4, row).as_i64(),
                start_minimum: value(5, row).as_i64(),
                end_maximum: value(6, row).as_i64(),
                gpu_count: value(7, row).as_u64(),
                gpu_total: value(8, row).as_i64(),
                mean: value(9, row).as_f64(),
                m2: value(10, row).as_f64(),
            })
            .collect())
    }
}

// SAFETY: the compound lists every field of this `repr(C)` struct at its
// offset, with the native type of the field's own type (`member` infers it
// from the field), at the struct's size; any bits are a valid i64, u64 or f64.
#[cfg(feature = "mpio")]
unsafe impl H5Type for SummaryRecord {
    fn datatype() -> h5::Result<Datatype> {
        /// A compound member: the field's name, offset and datatype.
        fn member<T: H5Type>(
            name: &'static str,
            offset: usize,
            _field: fn(&SummaryRecord) -> &T,
        ) -> h5::Result<(&'static str, usize, Datatype)> {
            Ok((name, offset, T::datatype()?))
        }
        macro_rules! members {
            ($($field:ident),*) => {
                [$(member(
                    stringify!($field),
                    offset_of!(SummaryRecord, $field),
                    |r| &r.$field,
                )?),*]
            };
        }
        let members = members!(
            total,
            minimum,
            maximum,
            first,
            last,
            start_minimum,
            end_maximum,
            gpu_count,
            gpu_total,
            mean,
            m2
        );
        Datatype::compound(size_of::<Self>(), &members)
    }
}

impl From<&SummaryStatistics> for SummaryRecord {
    fn from(s: &SummaryStatistics) -> Self {
        SummaryRecord {
            total: s.total,
            minimum: s.minimum,
            maximum: s.maximum,
            first: s.first,
            last: s.last,
            start_minimum: s.start_minimum,
            end_maximum: s.end_maximum,
            gpu_count: s.gpu().0,
            gpu_total: s.gpu().1,
            mean: s.mean,
            m2: s.m2,
        }
    }
}

impl From<SummaryRecord> for SummaryStatistics {
    fn from(r: SummaryRecord) -> Self {
        {
            let mut made = SummaryStatistics::default();
            made.total = r.total;
            made.minimum = r.minimum;
            made.maximum = r.maximum;
            made.first = r.first;
            made.last = r.last;
            made.start_minimum = r.start_minimum;
            made.end_maximum = r.end_maximum;
            made.set_gpu(r.gpu_count, r.gpu_total);
            made.mean = r.mean;
            made.m2 = r.m2;
            made
        }
    }
}

/// The group of a rank's per-region counters (`rank<N>/perf_events`), as
/// the Python package names it.
pub(super) const PERF_EVENTS: &str = "perf_events";
