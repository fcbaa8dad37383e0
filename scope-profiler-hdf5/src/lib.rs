//! The HDF5 file of [scope-profiler](https://docs.rs/scope-profiler): the
//! schema-3 layout the Python package `scope-profiler` 0.7.5 reads, written
//! atomically, and read back: in pure Rust (`rust-hdf5`, `pure.rs`, and our
//! group-attribute reader, `attrs.rs`), or with the feature `mpio` over the
//! HDF5 C library (`hdf5-sys`, `h5/`), which MPI-IO needs.
//!
//! **Use the `scope-profiler` crate** (its default feature `hdf5` brings this
//! one): this crate's items are shared by the scope-profiler crates only,
//! released together and pinned to one version.
//!
//! - [`write_profile`] writes a
//!   [`Profile`](crate::profile::Profile) to a sibling temporary file and
//!   publishes it with a rename, so a failed write never leaves a partial
//!   file at the target and never touches the previous one.
//! - [`read_profile`] reads such a file (or a schema-2/3 file from the Python
//!   package without the optional columns) back into a `Profile`.
//!
//! The layout, group by group:
//!
//! ```text
//! /                      attrs scope_profiler_schema = 3 (int64 scalar),
//!                              storage_layout = "columnar" (UTF-8 scalar)
//! /metadata              one scalar attribute per metadata entry
//! /region_table/names    UTF-8 strings
//! /rank_region_index/    region_ids u32, ranks u32, event_offsets u64,
//!                        event_counts u64, source_lines i64, source_files,
//!                        source_texts, tags, event_metadata (UTF-8),
//!                        exclusive_totals i64, summary_statistics (compound)
//! /events/               start_deltas, durations, call_ids, parent_ids,
//!                        thread_ids, [task_ids] (int64)
//! /thread_table/         when the profile has threads
//! /task_table/           when the profile has tasks
//! /rank<N>/perf_events/<region>   when the session counted (allocations, perf
//!                        events): attrs calls (int64), event_names (UTF-8
//!                        strings); values u64 (inclusive), own_values u64
//! ```

#![warn(clippy::undocumented_unsafe_blocks)]
// Only the HDF5 C library (`h5/`, feature `mpio`) needs unsafe code.
#![cfg_attr(not(feature = "mpio"), forbid(unsafe_code))]

// The core's modules this crate uses, named as its own (`crate::sink`), as
// in the `scope-profiler` crate.
#[cfg(feature = "mpio")]
use scope_profiler_core::internal::platform;
use scope_profiler_core::internal::{
    error, histogram, options, profile, publish, sink, sync, value,
};

#[cfg(not(feature = "mpio"))]
mod attrs;
mod chunks;
pub mod limits;
// The HDF5 layer: pure Rust (`rust-hdf5`), or with the parallel MPI writer
// (feature `mpio`) the C library (`hdf5-sys`), which MPI-IO needs; both
// offer one interface.
#[cfg(feature = "mpio")]
mod h5;
mod h5error;
#[cfg(not(feature = "mpio"))]
mod pure;
#[cfg(not(feature = "mpio"))]
use pure as h5;
#[cfg(all(test, not(feature = "mpio")))]
mod hostile_tests;
#[cfg(feature = "mpi")]
mod ranks;
mod read;
mod reader;
mod schema;
mod strings;
#[cfg(all(test, not(feature = "mpio")))]
mod test_support;
mod write;

#[cfg(feature = "mpi")]
pub use ranks::{Layout3, Part, RankWriter, Strings, open_direct, write_direct_names};
#[cfg(feature = "mpi")]
#[cfg(feature = "mpio")]
pub use ranks::{ROUND, Widths, open_parallel};
pub use read::read_profile;
pub use reader::{Columns, open as open_reader};
#[cfg(feature = "mpi")]
pub use write::append_counters;
pub use write::write_profile;
pub use write::{FileSink, Header, write_aggregate};
