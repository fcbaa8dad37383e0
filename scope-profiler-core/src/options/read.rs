//! Reading the settings of an [`Options`]: for the crates of this
//! workspace (the facade's session, the HDF5 writer, the tests), not part of
//! the public API. `Options` is a builder whose methods are named after the
//! settings; a getter of the same name cannot exist beside them, and the Rust
//! API guidelines say no `get_` prefix, so the settings are read through
//! these functions, one per setting: `read::label(&options)`.

#![forbid(unsafe_code)]

use std::path::Path;

use super::*;

/// Whether the session counts allocations.
///
/// ```
/// assert!(!scope_profiler_core::internal::options::read::track_allocations(&scope_profiler::Options::new()));
/// ```
pub fn track_allocations(options: &Options) -> bool {
    options.track_allocations
}

/// The perf events the session counts.
///
/// ```
/// assert!(scope_profiler_core::internal::options::read::perf_events(&scope_profiler::Options::new()).is_empty());
/// ```
pub fn perf_events(options: &Options) -> &[String] {
    &options.perf_events
}

/// The rate at which recording threads are sampled, `None` when off.
///
/// ```
/// assert_eq!(scope_profiler_core::internal::options::read::sample_hz(&scope_profiler::Options::new()), None);
/// ```
pub fn sample_hz(options: &Options) -> Option<u32> {
    (options.sample_hz > 0).then_some(options.sample_hz)
}

/// The memory bound for recorded calls, in bytes.
///
/// ```
/// let o = scope_profiler::Options::new();
/// assert_eq!(scope_profiler_core::internal::options::read::memory_limit(&o), scope_profiler::Options::DEFAULT_MEMORY_LIMIT);
/// ```
pub fn memory_limit(options: &Options) -> usize {
    options.memory_limit
}

/// The disk bound set with [`Options::disk_limit`], `None` for the default.
///
/// ```
/// assert!(scope_profiler_core::internal::options::read::disk_limit(&scope_profiler::Options::new()).is_none());
/// ```
pub fn disk_limit(options: &Options) -> Option<u64> {
    options.disk_limit
}

/// The policy set with [`Options::drop_calls_on_spill_failure`].
///
/// ```
/// use scope_profiler_core::internal::options::{OnSpillFailure, read};
/// assert_eq!(read::on_spill_failure(&scope_profiler::Options::new()), OnSpillFailure::KeepInMemory);
/// ```
pub fn on_spill_failure(options: &Options) -> OnSpillFailure {
    options.on_spill_failure
}

/// The metadata level set with [`Options::full_metadata`].
///
/// ```
/// use scope_profiler_core::internal::options::{MetadataDetail, read};
/// assert_eq!(read::metadata_detail(&scope_profiler::Options::new()), MetadataDetail::Minimal);
/// ```
pub fn metadata_detail(options: &Options) -> MetadataDetail {
    options.metadata_detail
}

/// The user's metadata entries ([`Options::metadata`]), in order.
///
/// ```
/// let o = scope_profiler::Options::new().metadata("a", 1).metadata("a", 2);
/// assert_eq!(scope_profiler_core::internal::options::read::metadata(&o).len(), 1);
/// ```
pub fn metadata(options: &Options) -> &[(String, Value)] {
    &options.user_metadata
}

#[cfg(feature = "mpi")]
/// Whether this is an MPI session ([`Options::mpi`]): its rank and the
/// number of ranks.
///
/// ```
/// # #[cfg(feature = "mpi")]
/// assert_eq!(scope_profiler_core::internal::options::read::mpi(&scope_profiler::Options::new()), None);
/// ```
pub fn mpi(options: &Options) -> Option<(u32, u32)> {
    options.mpi.as_ref().map(|c| (c.rank(), c.size()))
}

#[cfg(feature = "mpi")]
/// The writer chosen with [`Options::mpi_output`].
///
/// ```
/// # #[cfg(feature = "mpi")]
/// assert_eq!(scope_profiler_core::internal::options::read::mpi_output(&scope_profiler::Options::new()), scope_profiler::MpiOutput::Auto);
/// ```
pub fn mpi_output(options: &Options) -> MpiOutput {
    options.mpi_output
}

/// The output file, `None` for an in-memory session.
///
/// ```
/// assert!(scope_profiler_core::internal::options::read::file_path(&scope_profiler::Options::new()).is_some());
/// ```
pub fn file_path(options: &Options) -> Option<&Path> {
    match &options.output {
        Output::File(p) => Some(p),
        Output::Memory => None,
    }
}

/// Whether the summary is printed at `finalize`.
///
/// ```
/// assert!(scope_profiler_core::internal::options::read::verbose(&scope_profiler::Options::new()));
/// ```
pub fn verbose(options: &Options) -> bool {
    options.verbose
}

/// The label the run will carry.
///
/// ```
/// let o = scope_profiler::Options::new().file_path("data/run3.h5");
/// assert_eq!(scope_profiler_core::internal::options::read::label(&o), "run3");
/// ```
pub fn label(options: &Options) -> String {
    if let Some(label) = &options.label {
        return label.clone();
    }
    match &options.output {
        Output::File(p) => p
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        Output::Memory => "in-memory".to_owned(),
    }
}

/// The compression setting.
///
/// ```
/// use scope_profiler::{Compression, Options};
/// assert_eq!(scope_profiler_core::internal::options::read::compression(&Options::new().compression(Compression::Gzip(1))), Compression::Gzip(1));
/// ```
pub fn compression(options: &Options) -> Compression {
    options.compression
}

/// The chunk size set with [`Options::chunk_size`], `None` for the default.
///
/// ```
/// assert_eq!(scope_profiler_core::internal::options::read::chunk_size(&scope_profiler::Options::new()), None);
/// ```
pub fn chunk_size(options: &Options) -> Option<usize> {
    options.chunk_size
}

/// Whether every traced function records ([`Options::trace_all`]; the
/// Python package's `recursive_profile`).
///
/// ```
/// assert!(scope_profiler_core::internal::options::read::trace_all(&scope_profiler::Options::new().trace_all(true)));
/// ```
pub fn trace_all(options: &Options) -> bool {
    options.trace_all
}

/// The opt-in tags enabled by [`Options::enable_tags`] (not counting the
/// environment's).
///
/// ```
/// assert!(scope_profiler_core::internal::options::read::enable_tags(&scope_profiler::Options::new()).is_empty());
/// ```
pub fn enable_tags(options: &Options) -> &[String] {
    &options.enable_tags
}

/// The region tag filter, if one is set.
///
/// ```
/// assert_eq!(scope_profiler_core::internal::options::read::region_tags(&scope_profiler::Options::new()), None);
/// ```
pub fn region_tags(options: &Options) -> Option<&[String]> {
    options.region_tags.as_deref()
}

/// Whether region source text is written.
///
/// ```
/// assert!(!scope_profiler_core::internal::options::read::capture_region_source(&scope_profiler::Options::new()));
/// ```
pub fn capture_region_source(options: &Options) -> bool {
    options.capture_region_source
}

/// Whether the session envelope region is recorded.
///
/// ```
/// assert!(!scope_profiler_core::internal::options::read::session_region(&scope_profiler::Options::new()));
/// ```
pub fn session_region(options: &Options) -> bool {
    options.session_region
}

/// Whether the session aggregates.
///
/// ```
/// assert!(!scope_profiler_core::internal::options::read::aggregation(&scope_profiler::Options::new()));
/// ```
pub fn aggregation(options: &Options) -> bool {
    options.aggregation
}

/// Whether the session is deactivated ([`Options::deactivate`]).
///
/// ```
/// assert!(!scope_profiler_core::internal::options::read::deactivate(&scope_profiler::Options::new()));
/// ```
pub fn deactivate(options: &Options) -> bool {
    options.deactivate
}

/// Where the session writes: a file or memory.
///
/// ```
/// use scope_profiler_core::internal::options::{Output, read};
/// assert_eq!(*read::output(&scope_profiler::Options::new().in_memory()), Output::Memory);
/// ```
pub fn output(options: &Options) -> &Output {
    &options.output
}

/// The communicator of an MPI session ([`Options::mpi`]): `finalize` is
/// collective over it.
#[cfg(feature = "mpi")]
pub fn communicator(options: &Options) -> Option<&crate::comm::Comm> {
    options.mpi.as_ref()
}

/// The live server's address, if the session serves one.
///
/// ```
/// assert_eq!(scope_profiler_core::internal::options::read::live(&scope_profiler::Options::new()), None);
/// ```
pub fn live(options: &Options) -> Option<&str> {
    options.live.as_deref()
}

/// The token the live server's requests must carry, if any.
///
/// ```
/// assert_eq!(scope_profiler_core::internal::options::read::live_token(&scope_profiler::Options::new()), None);
/// ```
pub fn live_token(options: &Options) -> Option<&str> {
    options.live_token.as_deref()
}

/// Whether the session starts with recording paused.
///
/// ```
/// assert!(!scope_profiler_core::internal::options::read::start_paused(&scope_profiler::Options::new()));
/// ```
pub fn start_paused(options: &Options) -> bool {
    options.start_paused
}
