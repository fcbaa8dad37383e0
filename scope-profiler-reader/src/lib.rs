#![doc = include_str!("reading.md")]
#![warn(missing_docs)]
#![forbid(unsafe_code)]

// The core's modules this crate uses, named as its own (`crate::sink`), as
// in the `scope-profiler` crate. The whole crate is the module `reader` of
// the runtime's layer 7 (ARCHITECTURE.md): it uses the core (layers 1 to
// 6) and the HDF5 file's crate (layer 7), and `scope-profiler` uses it.
#[cfg(test)]
use scope_profiler_core::internal::options;
use scope_profiler_core::internal::{
    calltree, error, fxhash, json, platform, profile, scratch, sink, value,
};
#[cfg(feature = "hdf5")]
use scope_profiler_hdf5 as hdf5;

pub mod export;
pub mod live;
pub mod sps;
use internal::jsonfile;
mod profile_reader;

pub use profile_reader::{EventChunk, ProfileReader, read_profile};
pub use scope_profiler_core::internal::calltree::{CallNode, CallTree, Lane};
pub use scope_profiler_core::internal::error::Error;
pub use scope_profiler_core::internal::profile::{
    AggregateRow, CallPath, Events, Profile, RegionCounters, RegionRow, SummaryStatistics,
    TaskInfo, ThreadInfo,
};
pub use scope_profiler_core::internal::value::Value;
/// The longest strings [`read_profile`] and [`ProfileReader`] accept from
/// an HDF5 file, by kind (names 64 KiB, source texts 1 MiB...): a longer
/// one is an error naming its dataset and the limit.
#[cfg(feature = "hdf5")]
pub use scope_profiler_hdf5::limits;

/// What `scope-profiler` needs of this crate beyond its public API: see
/// `internal.rs`.
#[doc(hidden)]
pub mod internal;
