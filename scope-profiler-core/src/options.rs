//! Session options and their defaults.

use std::path::{Path, PathBuf};

use crate::value::Value;

/// How the event columns are compressed in the file.
///
/// ```
/// use scope_profiler::Compression;
/// assert_eq!(Compression::default(), Compression::Auto);
/// assert!(!Compression::Auto.applies_to(16_383));
/// assert!(Compression::Auto.applies_to(16_384));
/// assert_eq!(Compression::Gzip(4).level_for(10), Some(4));
/// assert_eq!(Compression::Auto.level_for(1 << 20), Some(Compression::AUTO_LEVEL));
/// assert_eq!(Compression::None.level_for(1 << 30), None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Compression {
    /// Shuffle + deflate at [`Compression::AUTO_LEVEL`] once the file has at
    /// least [`Compression::AUTO_THRESHOLD`] events, as the Python package
    /// does (which deflates at level 4 with zlib).
    #[default]
    Auto,
    /// No filter.
    None,
    /// Shuffle + deflate at this level (0-9), whatever the size.
    Gzip(u8),
}

impl Compression {
    /// Event count from which [`Compression::Auto`] compresses.
    pub const AUTO_THRESHOLD: usize = 16_384;

    /// The deflate level of [`Compression::Auto`]. This crate deflates with
    /// zlib-rs, whose level 2 makes event columns as small as its level 4
    /// (1.14 and 1.18 bytes per event on bench-compare's simulation) at 1.4x
    /// the speed, and within 3% of the size libdeflate's level 4 made at 2x
    /// its speed.
    pub const AUTO_LEVEL: u8 = 2;

    /// Whether a file with `events` events is compressed.
    pub fn applies_to(self, events: usize) -> bool {
        self.level_for(events).is_some()
    }

    /// The deflate level used for a file with `events` events, if any.
    pub fn level_for(self, events: usize) -> Option<u8> {
        match self {
            Compression::Auto if events >= Self::AUTO_THRESHOLD => Some(Self::AUTO_LEVEL),
            Compression::Auto | Compression::None => None,
            Compression::Gzip(level) => Some(level.min(9)),
        }
    }
}

/// What happens to calls past the memory limit once the scratch file
/// cannot be written (a full disk, a removed directory, a file size limit).
///
/// Either way a warning line on stderr names the directory and the error,
/// and `Results::health().spill_error` reports it.
///
/// ```
/// use scope_profiler::{OnSpillFailure, Options};
/// assert_eq!(OnSpillFailure::default(), OnSpillFailure::KeepInMemory);
/// let o = Options::new().on_spill_failure(OnSpillFailure::DropCalls);
/// assert_eq!(o.get_on_spill_failure(), OnSpillFailure::DropCalls);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OnSpillFailure {
    /// Keep recording in memory past the limit: nothing is lost, memory
    /// grows.
    #[default]
    KeepInMemory,
    /// Drop calls past the limit, counting them and their total time per
    /// region (`Results::health().dropped` and
    /// the file's metadata): memory stays bounded.
    DropCalls,
}

/// Where `finalize` puts the results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    File(PathBuf),
    Memory,
}

/// Settings of a profiling session, built with chained calls.
///
/// ```
/// use scope_profiler::{Compression, Options};
/// let opts = Options::new()
///     .file_path("out/run.h5")
///     .label("baseline")
///     .compression(Compression::Gzip(1))
///     .verbose(false);
/// assert_eq!(opts.get_file_path().unwrap().to_str(), Some("out/run.h5"));
/// assert_eq!(opts.get_label(), "baseline");
///
/// let defaults = Options::new();
/// assert_eq!(defaults.get_file_path().unwrap().to_str(), Some("profiling_data.h5"));
/// assert_eq!(defaults.get_label(), "profiling_data"); // the file stem
/// assert!(defaults.get_verbose());
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
    pub(crate) deactivate: bool,
    pub(crate) metadata_detail: MetadataDetail,
    pub(crate) user_metadata: Vec<(String, Value)>,
    pub(crate) chunk_size: Option<usize>,
    /// The session's communicator: `finalize` is collective.
    #[cfg(feature = "mpi")]
    pub mpi: Option<crate::comm::Comm>,
    #[cfg(feature = "mpi")]
    pub mpi_output: MpiOutput,
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
            deactivate: false,
            metadata_detail: MetadataDetail::Minimal,
            user_metadata: Vec::new(),
            chunk_size: None,
            #[cfg(feature = "mpi")]
            mpi: None,
            #[cfg(feature = "mpi")]
            mpi_output: MpiOutput::Auto,
        }
    }
}

impl Options {
    /// Default of [`Options::memory_limit`]: 256 MiB.
    pub const DEFAULT_MEMORY_LIMIT: usize = 256 << 20;

    /// The defaults: file `profiling_data.h5`, verbose, label = file stem,
    /// [`Compression::Auto`].
    ///
    /// ```
    /// let o = scope_profiler::Options::new();
    /// assert_eq!(o.get_compression(), scope_profiler::Compression::Auto);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Write the profile to this path: the Python package's JSON profile
    /// for a name ending in `.json` (in any build) or `.json.gz` (gzip:
    /// feature `hdf5`), else an HDF5 file (feature `hdf5`; in a build
    /// without it, such a path is an `Err` at `setup` naming the feature).
    ///
    /// ```
    /// let o = scope_profiler::Options::new().file_path("out.h5");
    /// assert_eq!(o.get_file_path(), Some(std::path::Path::new("out.h5")));
    /// let o = scope_profiler::Options::new().file_path("out.json"); // any build
    /// assert_eq!(o.get_file_path(), Some(std::path::Path::new("out.json")));
    /// ```
    pub fn file_path(mut self, path: impl AsRef<Path>) -> Self {
        self.output = Output::File(path.as_ref().to_path_buf());
        self
    }

    /// Write no file: `finalize` hands the results back in memory.
    ///
    /// ```
    /// let o = scope_profiler::Options::new().in_memory();
    /// assert!(o.get_file_path().is_none());
    /// ```
    pub fn in_memory(mut self) -> Self {
        self.output = Output::Memory;
        self
    }

    /// Print the summary to stderr at `finalize` (default `true`).
    ///
    /// ```
    /// assert!(!scope_profiler::Options::new().verbose(false).get_verbose());
    /// ```
    pub fn verbose(mut self, verbose: bool) -> Self {
        self.verbose = verbose;
        self
    }

    /// The run's label, stored as `/metadata/label` (default: the file stem).
    ///
    /// ```
    /// assert_eq!(scope_profiler::Options::new().label("run-7").get_label(), "run-7");
    /// ```
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Compression of the event columns (default [`Compression::Auto`]).
    ///
    /// ```
    /// use scope_profiler::{Compression, Options};
    /// let o = Options::new().compression(Compression::None);
    /// assert_eq!(o.get_compression(), Compression::None);
    /// ```
    pub fn compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }

    /// Make every traced function record, inside a recursive entrypoint or
    /// not. Also switched on by the environment variable
    /// `SCOPE_PROFILER_TRACE_ALL=1`.
    ///
    /// ```
    /// let o = scope_profiler::Options::new().trace_all(true);
    /// # let _ = o;
    /// ```
    pub fn trace_all(mut self, on: bool) -> Self {
        self.trace_all = on;
        self
    }

    /// Bound on the recorded calls held in memory (default 256 MiB). Past
    /// half of it, full per-thread buffers are spilled to a scratch file
    /// beside the output by a background writer; nothing is dropped, and
    /// `finalize` writes the same file as without spilling. If the scratch
    /// file cannot be written, see [`Options::on_spill_failure`]; past
    /// [`Options::disk_limit`], calls are dropped and counted.
    ///
    /// The limit counts recorded calls. Region names and per-region state
    /// are outside it: about 75 bytes per distinct region plus its name
    /// while recording, and about 270 bytes per region with calls plus its
    /// name at the peak of `finalize` (the summary tree, the region table,
    /// per-region counts, the statistics the results keep; index rows are
    /// made and written 16k at a time), so a session with a million
    /// distinct regions needs about 290 MB more at `finalize`. One region's
    /// durations are kept for exact percentiles while they fit an eighth of
    /// `finalize`'s budget (half this limit, at least 8 MiB): 2M calls of a
    /// region by default.
    ///
    /// ```
    /// let o = scope_profiler::Options::new().memory_limit(64 << 20);
    /// assert_eq!(o.get_memory_limit(), 64 << 20);
    /// ```
    pub fn memory_limit(mut self, bytes: usize) -> Self {
        self.memory_limit = bytes;
        self
    }

    /// Bound on the bytes of the scratch file that takes the calls spilled
    /// past the memory limit. Default: half the space free in its directory
    /// at `setup` (unbounded where that cannot be read). Past it, spilling
    /// stops and, once memory is full too, the run degrades gracefully:
    /// each call's event is dropped, while calls and their total time per
    /// region stay exact (`Results::health().dropped`,
    /// `Results::health().events_stopped_ns` and
    /// the file's metadata say which and since when).
    ///
    /// ```
    /// let o = scope_profiler::Options::new().disk_limit(1 << 30);
    /// assert_eq!(o.get_disk_limit(), Some(1 << 30));
    /// assert_eq!(scope_profiler::Options::new().get_disk_limit(), None); // chosen at setup
    /// ```
    pub fn disk_limit(mut self, bytes: u64) -> Self {
        self.disk_limit = Some(bytes);
        self
    }

    /// Where the session writes (a file or memory), for the session's crate.
    #[doc(hidden)]
    pub fn output_target(&self) -> &Output {
        &self.output
    }

    /// Sets where the session writes (`finalize_to`).
    #[doc(hidden)]
    pub fn set_output_target(&mut self, output: Output) {
        self.output = output;
    }

    /// The disk bound set with [`Options::disk_limit`], `None` for the default.
    ///
    /// ```
    /// assert!(scope_profiler::Options::new().get_disk_limit().is_none());
    /// ```
    pub fn get_disk_limit(&self) -> Option<u64> {
        self.disk_limit
    }

    /// What happens past the memory limit if spilling to disk fails
    /// (default [`OnSpillFailure::KeepInMemory`]).
    ///
    /// ```
    /// use scope_profiler::{OnSpillFailure, Options};
    /// let o = Options::new().on_spill_failure(OnSpillFailure::DropCalls);
    /// assert_eq!(o.get_on_spill_failure(), OnSpillFailure::DropCalls);
    /// ```
    pub fn on_spill_failure(mut self, policy: OnSpillFailure) -> Self {
        self.on_spill_failure = policy;
        self
    }

    /// The policy set with [`Options::on_spill_failure`].
    ///
    /// ```
    /// use scope_profiler::{OnSpillFailure, Options};
    /// assert_eq!(Options::new().get_on_spill_failure(), OnSpillFailure::KeepInMemory);
    /// ```
    pub fn get_on_spill_failure(&self) -> OnSpillFailure {
        self.on_spill_failure
    }

    /// The memory bound for recorded calls, in bytes.
    ///
    /// ```
    /// let o = scope_profiler::Options::new();
    /// assert_eq!(o.get_memory_limit(), scope_profiler::Options::DEFAULT_MEMORY_LIMIT);
    /// ```
    pub fn get_memory_limit(&self) -> usize {
        self.memory_limit
    }

    /// The output file, `None` for an in-memory session.
    ///
    /// ```
    /// assert!(scope_profiler::Options::new().get_file_path().is_some());
    /// ```
    pub fn get_file_path(&self) -> Option<&Path> {
        match &self.output {
            Output::File(p) => Some(p),
            Output::Memory => None,
        }
    }

    /// The label the run will carry.
    ///
    /// ```
    /// let o = scope_profiler::Options::new().file_path("data/run3.h5");
    /// assert_eq!(o.get_label(), "run3");
    /// ```
    pub fn get_label(&self) -> String {
        if let Some(label) = &self.label {
            return label.clone();
        }
        match &self.output {
            Output::File(p) => p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            Output::Memory => "in-memory".to_owned(),
        }
    }

    /// Whether the summary is printed at `finalize`.
    ///
    /// ```
    /// assert!(scope_profiler::Options::new().get_verbose());
    /// ```
    pub fn get_verbose(&self) -> bool {
        self.verbose
    }

    /// The compression setting.
    ///
    /// ```
    /// use scope_profiler::{Compression, Options};
    /// assert_eq!(Options::new().compression(Compression::Gzip(1)).get_compression(), Compression::Gzip(1));
    /// ```
    pub fn get_compression(&self) -> Compression {
        self.compression
    }

    /// Enables opt-in tags (see [`register_opt_in_tag`](crate::register_opt_in_tag)):
    /// regions carrying one of them record in this session. `"*"` enables
    /// every opt-in tag. The tags listed in the environment variable
    /// `SCOPE_PROFILER_ENABLE_TAGS` (comma-separated, read by every `setup`)
    /// and those of [`Options::region_tags`] are enabled too, as in the
    /// Python package.
    ///
    /// ```
    /// let o = scope_profiler::Options::new().enable_tags(["mylib"]);
    /// assert_eq!(o.get_enable_tags(), ["mylib"]);
    /// ```
    pub fn enable_tags<I, S>(mut self, tags: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.enable_tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// The opt-in tags enabled by [`Options::enable_tags`] (not counting the
    /// environment's).
    ///
    /// ```
    /// assert!(scope_profiler::Options::new().get_enable_tags().is_empty());
    /// ```
    pub fn get_enable_tags(&self) -> &[String] {
        &self.enable_tags
    }

    /// Records only regions carrying at least one of `tags` (the Python
    /// package's `region_tags`); every other region costs what a region of
    /// an opt-in tag that is off costs. Listing an opt-in tag here enables it.
    ///
    /// ```
    /// let o = scope_profiler::Options::new().region_tags(["io"]);
    /// assert_eq!(o.get_region_tags(), Some(&["io".to_owned()][..]));
    /// ```
    pub fn region_tags<I, S>(mut self, tags: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.region_tags = Some(tags.into_iter().map(Into::into).collect());
        self
    }

    /// The region tag filter, if one is set.
    ///
    /// ```
    /// assert_eq!(scope_profiler::Options::new().get_region_tags(), None);
    /// ```
    pub fn get_region_tags(&self) -> Option<&[String]> {
        self.region_tags.as_deref()
    }

    /// Writes each region's source text (captured at compile time by
    /// `#[profile]` and `#[profile_all]`) into the file's `source_texts`
    /// column, where `scope-profiler inspect --source NAME` prints it.
    /// Off by default, as in the Python package. The texts are compiled in
    /// only with the crate feature `capture-source`; without it, `setup`
    /// with this on is an [`Error::InvalidOption`](crate::Error::InvalidOption)
    /// naming the feature.
    ///
    /// ```
    /// let o = scope_profiler::Options::new().capture_region_source(true);
    /// assert!(o.get_capture_region_source());
    /// ```
    pub fn capture_region_source(mut self, on: bool) -> Self {
        self.capture_region_source = on;
        self
    }

    /// Whether region source text is written.
    ///
    /// ```
    /// assert!(!scope_profiler::Options::new().get_capture_region_source());
    /// ```
    pub fn get_capture_region_source(&self) -> bool {
        self.capture_region_source
    }

    /// Records the envelope region `scope_profiler.session` from `setup` to
    /// `finalize` on the thread that calls `setup`, as
    /// `session` always does (the Python name; `inspect`
    /// fills its "% session" column from it). Off by default for
    /// `setup`/`finalize`, as in Python.
    ///
    /// ```
    /// let o = scope_profiler::Options::new().session_region(true);
    /// assert!(o.get_session_region());
    /// ```
    pub fn session_region(mut self, on: bool) -> Self {
        self.session_region = on;
        self
    }

    /// Whether the session envelope region is recorded.
    ///
    /// ```
    /// assert!(!scope_profiler::Options::new().get_session_region());
    /// ```
    pub fn get_session_region(&self) -> bool {
        self.session_region
    }

    /// Aggregation mode (the Python package's `aggregation_mode`): each
    /// thread keeps, per region, only the count, total, minimum, maximum
    /// and exclusive time of its calls, no per-call records, so memory does
    /// not grow with the number of calls. The file is the Python package's
    /// aggregate layout (`storage_layout = "aggregate"`), one row per region
    /// (threads summed). Instrumented futures are not recorded as calls of
    /// their own in this mode (what they call is), and call metadata
    /// ([`call_metadata`](crate::callmeta::call_metadata), `record_outcome`) is not kept.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false).aggregation(true))?;
    /// for _ in 0..1000 {
    ///     sp::region("hot").run(|| sp::region("inner").run(|| ()));
    /// }
    /// let results = sp::finalize()?;
    /// let hot = results.statistics_of("hot").unwrap();
    /// assert_eq!(hot.num_calls(), 1000);
    /// assert!(hot.exclusive() <= hot.total());
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn aggregation(mut self, on: bool) -> Self {
        self.aggregation = on;
        self
    }

    /// Whether the session aggregates.
    ///
    /// ```
    /// assert!(!scope_profiler::Options::new().get_aggregation());
    /// ```
    pub fn get_aggregation(&self) -> bool {
        self.aggregation
    }

    /// Counts allocations per region: every allocation and deallocation
    /// made through [`CountingAllocator`](crate::counters::CountingAllocator)
    /// (which must be the global allocator: `setup` is an error otherwise)
    /// is attributed to the innermost open call of the recorder active on
    /// the thread (the thread's own, or the instrumented future polled
    /// there). Per region, the events `alloc-count`, `alloc-bytes`,
    /// `free-count` and `free-bytes`, inclusive of callees and own, are in
    /// [`Results::counters`](https://docs.rs/scope-profiler/latest/scope_profiler/struct.Results.html#method.counters)
    /// and the file's `rank0/perf_events` group. The profiler's own
    /// allocations are never counted. TOML key `track_allocations`,
    /// variable `SCOPE_PROFILER_TRACK_ALLOCATIONS=1`. A call of a session
    /// that counts allocations costs a few ns more than one of a session
    /// that does not (the README's "Region counters" has the figures).
    ///
    /// ```
    /// use scope_profiler::Options;
    /// let o = Options::new().track_allocations(true);
    /// assert!(o.get_track_allocations());
    /// ```
    pub fn track_allocations(mut self, on: bool) -> Self {
        self.track_allocations = on;
        self
    }

    /// Whether the session counts allocations.
    ///
    /// ```
    /// assert!(!scope_profiler::Options::new().get_track_allocations());
    /// ```
    pub fn get_track_allocations(&self) -> bool {
        self.track_allocations
    }

    /// Kernel and hardware events counted per region (Linux only), by the
    /// Python package's names: `cycles`, `instructions`,
    /// `cache-references`, `cache-misses`, `branches`, `branch-misses`,
    /// `cpu-clock`, `task-clock`, `page-faults`, `context-switches`. Each
    /// recording thread opens one counter group (`perf_event_open`, pid 0,
    /// cpu -1) at its first call of the session and reads it at every enter
    /// and exit: a `read` system call per boundary, hundreds of ns (1.9 µs
    /// in a VM measured here) a call.
    /// An event the kernel refuses (no PMU in a VM, `perf_event_paranoid`,
    /// an unknown name) makes `setup` an error naming it. TOML key
    /// `perf_events`.
    ///
    /// ```
    /// use scope_profiler::Options;
    /// let o = Options::new().perf_events(["task-clock", "page-faults"]);
    /// assert_eq!(o.get_perf_events(), ["task-clock", "page-faults"]);
    /// ```
    pub fn perf_events<S: Into<String>>(mut self, events: impl IntoIterator<Item = S>) -> Self {
        self.perf_events = events.into_iter().map(Into::into).collect();
        self
    }

    /// The perf events the session counts.
    ///
    /// ```
    /// assert!(scope_profiler::Options::new().get_perf_events().is_empty());
    /// ```
    pub fn get_perf_events(&self) -> &[String] {
        &self.perf_events
    }

    /// Turns profiling off for this session (the Python package's
    /// `deactivate_profiling`): `setup` succeeds, nothing is recorded, no
    /// file is written, and `finalize` returns `Ok` with empty results.
    /// Every instrumented call then costs what a call with no session costs
    /// (the hot path sees no active session), so the instrumentation can
    /// stay in the code. `is_active` is `false` during
    /// such a session; `Run::is_active` is `true`
    /// until it is finalized, and a second `setup` meanwhile is
    /// [`Error::AlreadyConfigured`](crate::Error::AlreadyConfigured).
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// let dir = std::env::temp_dir().join(format!("sp-doc-deact-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let run = sp::setup(Options::new().file_path(dir.join("off.h5")).deactivate(true))?;
    /// sp::region("work").run(|| ());
    /// assert!(!sp::is_active() && run.is_active());
    /// let results = run.finalize()?;
    /// assert!(results.profile().unwrap().events.is_empty());
    /// assert!(!dir.join("off.h5").exists());
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn deactivate(mut self, off: bool) -> Self {
        self.deactivate = off;
        self
    }

    /// Whether the session is deactivated ([`Options::deactivate`]).
    ///
    /// ```
    /// assert!(!scope_profiler::Options::new().get_deactivate());
    /// ```
    pub fn get_deactivate(&self) -> bool {
        self.deactivate
    }

    /// How much of the run's environment `/metadata` describes (default
    /// [`MetadataDetail::Minimal`]: nothing that names a person, a machine,
    /// a directory or a job).
    ///
    /// ```
    /// use scope_profiler::{MetadataDetail, Options};
    /// let o = Options::new().metadata_detail(MetadataDetail::Full);
    /// assert_eq!(o.get_metadata_detail(), MetadataDetail::Full);
    /// ```
    pub fn metadata_detail(mut self, detail: MetadataDetail) -> Self {
        self.metadata_detail = detail;
        self
    }

    /// The metadata level set with [`Options::metadata_detail`].
    ///
    /// ```
    /// use scope_profiler::{MetadataDetail, Options};
    /// assert_eq!(Options::new().get_metadata_detail(), MetadataDetail::Minimal);
    /// ```
    pub fn get_metadata_detail(&self) -> MetadataDetail {
        self.metadata_detail
    }

    /// Adds a `/metadata` attribute of the user's, written under `key` as it
    /// is (as the Python package writes the entries of its metadata dict),
    /// after the run description; the same key again replaces the value. A
    /// key the run description writes itself (`label`, `timestamp`,
    /// `hostname`, `PATH`, `SLURM_*`, ...) is an
    /// [`Error::InvalidOption`](crate::Error::InvalidOption) at `setup`.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Value, Options};
    /// let run = sp::setup(Options::new().in_memory().verbose(false)
    ///     .metadata("experiment", "mesh-refinement")
    ///     .metadata("mesh_cells", 4096))?;
    /// let profile = run.finalize()?.into_profile().unwrap();
    /// assert_eq!(profile.metadata_value("experiment"), Some(&Value::Str("mesh-refinement".into())));
    /// assert_eq!(profile.metadata_value("mesh_cells"), Some(&Value::Int(4096)));
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        let key = key.into();
        let value = value.into();
        match self.user_metadata.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = value,
            None => self.user_metadata.push((key, value)),
        }
        self
    }

    /// The user's metadata entries ([`Options::metadata`]), in order.
    ///
    /// ```
    /// let o = scope_profiler::Options::new().metadata("a", 1).metadata("a", 2);
    /// assert_eq!(o.get_metadata().len(), 1);
    /// ```
    pub fn get_metadata(&self) -> &[(String, Value)] {
        &self.user_metadata
    }

    /// Events per chunk of the event columns (the Python package's
    /// `hdf5_chunk_size`), compressed or not: an uncompressed file is then
    /// chunked too, so readers can read parts of it. Default: contiguous
    /// columns when uncompressed, chunks of up to 65,536 events when
    /// compressed. A chunk never exceeds the column's length. 0, or more
    /// than 536,870,911 (a chunk of 4 GiB, HDF5's limit), is an
    /// [`Error::InvalidOption`](crate::Error::InvalidOption) at `setup`.
    ///
    /// ```
    /// let o = scope_profiler::Options::new().chunk_size(4096);
    /// assert_eq!(o.get_chunk_size(), Some(4096));
    /// ```
    pub fn chunk_size(mut self, events: usize) -> Self {
        self.chunk_size = Some(events);
        self
    }

    /// The chunk size set with [`Options::chunk_size`], `None` for the default.
    ///
    /// ```
    /// assert_eq!(scope_profiler::Options::new().get_chunk_size(), None);
    /// ```
    pub fn get_chunk_size(&self) -> Option<usize> {
        self.chunk_size
    }

    /// Whether every traced function records ([`Options::trace_all`]; the
    /// Python package's `recursive_profile`).
    ///
    /// ```
    /// assert!(scope_profiler::Options::new().trace_all(true).get_trace_all());
    /// ```
    pub fn get_trace_all(&self) -> bool {
        self.trace_all
    }

    /// An MPI session over `communicator` (feature `mpi`): every rank calls
    /// `setup`, `checkpoint` and `finalize` (each is collective), and one
    /// file comes out, with every rank's calls (the `ranks` column), each
    /// rank's thread and task tables, `mpi_size` and `num_nodes`.
    ///
    /// Collective itself: it duplicates the communicator (`MPI_Comm_dup`),
    /// so that the profiler's messages never meet the application's. MPI
    /// must stay initialized until the session is finalized. An MPI session
    /// writes a file: an in-memory or aggregation-mode one is an
    /// [`Error::InvalidOption`](crate::Error::InvalidOption) at `setup`.
    ///
    /// ```no_run
    /// # #[cfg(feature = "mpi")] {
    /// use mpi::traits::Communicator;
    /// use scope_profiler::{self as sp, Options};
    /// let universe = mpi::initialize().unwrap();
    /// let world = universe.world();
    /// sp::setup(Options::new().file_path("run.h5").mpi(&world))?;
    /// sp::region("solve").run(|| ());
    /// sp::finalize()?; // on every rank: one run.h5
    /// # }
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    #[cfg(feature = "mpi")]
    pub fn mpi<C: mpi::traits::Communicator>(mut self, communicator: &C) -> Self {
        self.mpi = Some(crate::comm::Comm::duplicate(communicator));
        self
    }

    /// Whether this is an MPI session ([`Options::mpi`]): its rank and the
    /// number of ranks.
    ///
    /// ```
    /// # #[cfg(feature = "mpi")]
    /// assert_eq!(scope_profiler::Options::new().get_mpi(), None);
    /// ```
    #[cfg(feature = "mpi")]
    pub fn get_mpi(&self) -> Option<(u32, u32)> {
        self.mpi.as_ref().map(|c| (c.rank(), c.size()))
    }

    /// How an MPI session writes its file (default [`MpiOutput::Auto`]; the
    /// Python package's `output_mode`). The same on every rank.
    ///
    /// ```
    /// # #[cfg(feature = "mpi")] {
    /// use scope_profiler::{MpiOutput, Options};
    /// let o = Options::new().mpi_output(MpiOutput::Direct);
    /// assert_eq!(o.get_mpi_output(), MpiOutput::Direct);
    /// # }
    /// ```
    #[cfg(feature = "mpi")]
    pub fn mpi_output(mut self, output: MpiOutput) -> Self {
        self.mpi_output = output;
        self
    }

    /// The writer chosen with [`Options::mpi_output`].
    ///
    /// ```
    /// # #[cfg(feature = "mpi")]
    /// assert_eq!(scope_profiler::Options::new().get_mpi_output(), scope_profiler::MpiOutput::Auto);
    /// ```
    #[cfg(feature = "mpi")]
    pub fn get_mpi_output(&self) -> MpiOutput {
        self.mpi_output
    }
}

/// How the ranks of an MPI session write their one file (feature `mpi`;
/// the Python package's `output_mode`).
///
/// ```
/// # #[cfg(feature = "mpi")] {
/// use scope_profiler::MpiOutput;
/// assert_eq!(MpiOutput::default(), MpiOutput::Auto);
/// assert_eq!(MpiOutput::Parallel.as_str(), "parallel");
/// # }
/// ```
#[cfg(feature = "mpi")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MpiOutput {
    /// [`MpiOutput::Parallel`] when this build has it (feature `mpio`: the
    /// linked HDF5 has MPI-IO), else [`MpiOutput::Direct`]: decided by the
    /// build, the same on every rank.
    #[default]
    Auto,
    /// Serial HDF5: the ranks write their parts of one temporary file in
    /// rank order, each handing the next the region-name table (never
    /// events); rank 0 publishes the file with a rename.
    Direct,
    /// Parallel HDF5 (MPI-IO, feature `mpio`): every rank learns its
    /// offsets from one exclusive scan, and all write their slices of every
    /// column collectively (compressed or not); thread and task columns and
    /// tables included. Without the `mpio` feature, an
    /// [`Error::InvalidOption`](crate::Error::InvalidOption) at `setup`.
    Parallel,
}

#[cfg(feature = "mpi")]
impl MpiOutput {
    /// The Python package's name: `"auto"`, `"direct"` or `"parallel"`.
    ///
    /// ```
    /// # #[cfg(feature = "mpi")]
    /// assert_eq!(scope_profiler::MpiOutput::Direct.as_str(), "direct");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            MpiOutput::Auto => "auto",
            MpiOutput::Direct => "direct",
            MpiOutput::Parallel => "parallel",
        }
    }
}

/// How much of the run's environment the file's `/metadata` describes (the
/// Python package's `metadata_detail`).
///
/// Both levels write the label, `timestamp`, `platform`, `chip_information`,
/// core and thread counts, `mpi_size`, `num_nodes`, `start_time_ns`,
/// `finalize_time_ns`, `source_language` and the crate version.
///
/// ```
/// use scope_profiler::MetadataDetail;
/// assert_eq!(MetadataDetail::default(), MetadataDetail::Minimal);
/// assert_eq!(MetadataDetail::Full.as_str(), "full");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MetadataDetail {
    /// Nothing that names a person, a machine, a directory or a job: no host
    /// name, user, working directory or environment variables, and region
    /// source files relative to the working directory (outside it: from
    /// the crate's directory in Cargo's registry or git checkouts, else the
    /// file name alone), never absolute.
    #[default]
    Minimal,
    /// Also `hostname`, `uname`, `working_directory`, `user`, the
    /// environment variables the Python package records (`PATH`,
    /// `LD_LIBRARY_PATH`, `VIRTUAL_ENV`, `LOADEDMODULES`, ..., every
    /// `SLURM_*`/`SLURMD_*`), the build (`rustc_version`, `target`,
    /// `build_profile`, `scope_profiler_features`) and source files as
    /// compiled (absolute for crates outside the workspace).
    Full,
}

impl MetadataDetail {
    /// The Python package's name of the level: `"minimal"` or `"full"`.
    ///
    /// ```
    /// assert_eq!(scope_profiler::MetadataDetail::Minimal.as_str(), "minimal");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            MetadataDetail::Minimal => "minimal",
            MetadataDetail::Full => "full",
        }
    }
}
