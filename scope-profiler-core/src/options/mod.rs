//! Session options and their defaults.
//!
//! `Options` and its defaults here; its settings by group: `output.rs`
//! (file or memory, label, compression, chunks), `limits.rs` (memory, disk,
//! spill failures), `recording.rs` (what is recorded), `counters.rs`,
//! `metadata.rs`, `live.rs` (the live server, starting paused), `sampling.rs`
//! (samples inside regions), `mpi.rs`
//! (feature `mpi`).

#![forbid(unsafe_code)]

mod counters;
mod limits;
mod live;
mod metadata;
#[cfg(feature = "mpi")]
mod mpi;
mod output;
pub mod read;
mod recording;
mod sampling;

use std::path::PathBuf;

use crate::value::Value;

#[cfg(feature = "mpi")]
pub use self::mpi::MpiOutput;
pub use limits::OnSpillFailure;
pub use metadata::MetadataDetail;
pub use output::{Compression, Output};

/// Settings of a profiling session, built with chained calls.
///
/// ```
/// use scope_profiler::{Compression, Options};
/// let opts = Options::new()
///     .file_path("out/run.h5")
///     .label("baseline")
///     .compression(Compression::Gzip(1))
///     .verbose(false);
/// assert_eq!(scope_profiler_core::internal::options::read::file_path(&opts).unwrap().to_str(), Some("out/run.h5"));
/// assert_eq!(scope_profiler_core::internal::options::read::label(&opts), "baseline");
///
/// let defaults = Options::new();
/// assert_eq!(scope_profiler_core::internal::options::read::file_path(&defaults).unwrap().to_str(), Some("profiling_data.h5"));
/// assert_eq!(scope_profiler_core::internal::options::read::label(&defaults), "profiling_data"); // the file stem
/// assert!(scope_profiler_core::internal::options::read::verbose(&defaults));
/// ```
#[derive(Clone, Debug)]
pub struct Options {
    pub(crate) output: Output,
    pub(crate) verbose: bool,
    pub(crate) label: Option<String>,
    pub(crate) compression: Compression,
    pub(crate) trace_all: bool,
    pub(crate) memory_limit: usize,
    pub(crate) disk_limit: Option<u64>,
    pub(crate) on_spill_failure: OnSpillFailure,
    pub(crate) enable_tags: Vec<String>,
    pub(crate) region_tags: Option<Vec<String>>,
    pub(crate) capture_region_source: bool,
    pub(crate) session_region: bool,
    pub(crate) aggregation: bool,
    pub(crate) track_allocations: bool,
    pub(crate) perf_events: Vec<String>,
    pub(crate) sample_hz: u32,
    pub(crate) deactivate: bool,
    pub(crate) metadata_detail: MetadataDetail,
    pub(crate) user_metadata: Vec<(String, Value)>,
    pub(crate) chunk_size: Option<usize>,
    pub(crate) live: Option<String>,
    pub(crate) live_token: Option<String>,
    pub(crate) start_paused: bool,
    /// The session's communicator: `finalize` is collective.
    #[cfg(feature = "mpi")]
    pub(crate) mpi: Option<crate::comm::Comm>,
    #[cfg(feature = "mpi")]
    pub(crate) mpi_output: MpiOutput,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            output: Output::File(PathBuf::from("profiling_data.h5")),
            verbose: true,
            label: None,
            compression: Compression::Auto,
            trace_all: std::env::var("SCOPE_PROFILER_TRACE_ALL").is_ok_and(|v| v == "1"),
            memory_limit: Self::DEFAULT_MEMORY_LIMIT,
            disk_limit: None,
            on_spill_failure: OnSpillFailure::KeepInMemory,
            enable_tags: Vec::new(),
            region_tags: None,
            capture_region_source: false,
            session_region: false,
            aggregation: false,
            track_allocations: false,
            perf_events: Vec::new(),
            sample_hz: 0,
            deactivate: false,
            metadata_detail: MetadataDetail::Minimal,
            user_metadata: Vec::new(),
            chunk_size: None,
            live: None,
            live_token: None,
            start_paused: false,
            #[cfg(feature = "mpi")]
            mpi: None,
            #[cfg(feature = "mpi")]
            mpi_output: MpiOutput::Auto,
        }
    }
}

impl Options {
    /// Default of [`Options::memory_limit`]: 256 MiB.
    ///
    /// ```
    /// use scope_profiler::Options;
    /// let o = Options::new();
    /// assert_eq!(scope_profiler_core::internal::options::read::memory_limit(&o), Options::DEFAULT_MEMORY_LIMIT);
    /// ```
    pub const DEFAULT_MEMORY_LIMIT: usize = 256 << 20;

    /// The defaults: file `profiling_data.h5`, verbose, label = file stem,
    /// [`Compression::Auto`].
    ///
    /// ```
    /// let o = scope_profiler::Options::new();
    /// assert_eq!(scope_profiler_core::internal::options::read::compression(&o), scope_profiler::Compression::Auto);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }
}
