//! What `finalize` and `checkpoint` hand back.

use crate::options::read;
use std::path::{Path, PathBuf};

use crate::assemble::{AggregatePlan, Plan};
use crate::calltree::CallTree;
use crate::error::Error;
#[cfg(feature = "hdf5")]
use crate::hdf5::{self, FileSink, Header};
use crate::metadata;
use crate::options::{MetadataDetail, Options, Output};
use crate::profile::{Profile, RecordingHealth, RegionCounters, RegionStatistics};
use crate::reader::internal::jsonfile::{self, Document, JsonSink};
use crate::reader::sps::{SampleFile, Stacks};
use crate::sink::{IndexRow, MemorySink};

/// `row` with its source file as the metadata level shows it (a suffix of it).
fn shown(detail: MetadataDetail, mut row: IndexRow<'_>) -> IndexRow<'_> {
    row.source_file = metadata::shown_source_file(detail, row.source_file);
    row
}

/// How `finalize` or `checkpoint` wrote the events: for tests and
/// benchmarks of the writer, not part of the documented API.
///
/// ```
/// use scope_profiler::{self as sp, Options, WritePath};
/// sp::setup(Options::new().in_memory().verbose(false))?;
/// assert_eq!(sp::finalize()?.write_path(), WritePath::Memory);
/// # Ok::<(), sp::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[doc(hidden)]
pub enum WritePath {
    /// Into memory: an in-memory session's [`Profile`].
    Memory,
    /// Straight into the columns of an uncompressed file.
    Direct,
    /// Handed to the file in order (compressed files): placed in memory, or,
    /// past the placement budget, in scratch columns (an unlinked file in
    /// the output's directory) read back in order.
    Streamed {
        /// Whether the events went through scratch columns.
        through_scratch: bool,
    },
    /// Into a JSON profile (a file named `.json` or `.json.gz`), in order
    /// as `Streamed`.
    Json {
        /// Whether the events went through scratch columns.
        through_scratch: bool,
    },
    /// Nowhere: the session was deactivated ([`Options::deactivate`]) and
    /// recorded nothing.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options, WritePath};
    /// sp::setup(Options::new().deactivate(true))?;
    /// assert_eq!(sp::finalize()?.write_path(), WritePath::Deactivated);
    /// # Ok::<(), sp::Error>(())
    /// ```
    Deactivated,
    /// An MPI session's file, by the `Direct` writer (feature `mpi`): the
    /// ranks in turn, serial HDF5. [`Results::summary`] and
    /// [`Results::statistics`] are this rank's.
    #[cfg(feature = "mpi")]
    MpiDirect,
    /// An MPI session's file, by the `Parallel` writer (feature `mpio`):
    /// every rank at once, MPI-IO.
    #[cfg(feature = "mpi")]
    MpiParallel,
}

/// The results of a session: the profile as written, where it was written,
/// and (through `Display`) the summary tree printed at `finalize`.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
/// sp::region("outer").run(|| sp::region("inner").run(|| ()));
/// let results = sp::finalize().unwrap();
/// assert!(results.file_path().is_none());
/// let text = results.to_string();
/// assert!(text.contains("outer") && text.contains("└─ inner"));
/// ```
#[derive(Debug, Clone)]
pub struct Results {
    /// The data, kept for in-memory sessions only: a file session's data is
    /// in its file (read it back with [`read_profile`](crate::read_profile)).
    profile: Option<Profile>,
    summary: CallTree,
    file_path: Option<PathBuf>,
    health: RecordingHealth,
    write_path: WritePath,
    statistics: Vec<RegionStatistics>,
    /// Per region, the counters of a session that counts.
    counters: Vec<RegionCounters>,
    /// A sampled session's samples, their stacks, and where they were
    /// written.
    samples: Option<SessionSamples>,
}

/// A sampled session's samples as written (see [`Results::samples`]).
#[derive(Debug, Clone)]
struct SessionSamples {
    file: SampleFile,
    stacks: Stacks,
    path: Option<PathBuf>,
}

/// A sampled session's samples, as the `.sps` file (and its `.stacks`)
/// holds them, written beside the profile at `profile` (if the session
/// writes one) for `rank`.
fn publish_samples(
    plan: &mut Plan,
    profile: Option<&Path>,
    rank: i32,
) -> Result<Option<SessionSamples>, Error> {
    let Some(sampled) = plan.sampled.take() else {
        return Ok(None);
    };
    let (file, stacks) = crate::samples::sample_file(&sampled, plan, rank);
    let path = match profile {
        Some(profile) => {
            let path = crate::reader::sps::path_for(profile, rank);
            // The stacks first: a reader that finds the `.sps` finds them.
            crate::samples::write(&stacks.to_bytes(), &crate::reader::sps::stacks_path(&path))?;
            crate::samples::write(&file.to_bytes(), &path)?;
            Some(path)
        }
        None => None,
    };
    Ok(Some(SessionSamples { file, stacks, path }))
}

/// The planned profile, emitted into memory, with its call tree.
fn in_memory(plan: &mut Plan, detail: MetadataDetail) -> Result<(Profile, CallTree), Error> {
    let mut sink = MemorySink::new(plan.len(), plan.with_task_ids());
    let summary = plan.emit(&mut sink)?;
    let rows = (0..plan.rows())
        .zip(sink.stats)
        .map(|(i, stats)| shown(detail, plan.index_row(i)).with_stats(stats))
        .collect();
    let region_names = (0..plan.rows())
        .map(|row| plan.region_name(row).to_owned())
        .collect();
    let profile = {
        let mut made = Profile::default();
        made.metadata = std::mem::take(&mut plan.metadata);
        made.region_names = region_names;
        made.rows = rows;
        made.events = sink.events;
        made.threads = std::mem::take(&mut plan.threads);
        made.tasks = std::mem::take(&mut plan.tasks);
        made.counters = plan.counters.clone();
        made
    };
    Ok((profile, summary))
}

impl Results {
    /// Writes the planned profile where `options` say (a file, published
    /// atomically, or memory) and prints the summary if verbose.
    pub(crate) fn publish(mut plan: Plan, options: &Options) -> Result<Results, Error> {
        let health = std::mem::take(&mut plan.health);
        let statistics;
        let detail = read::metadata_detail(options);
        let mut write_path = WritePath::Memory;
        let (profile, summary, file_path) = match read::output(options) {
            Output::File(path) if jsonfile::is_json_path(path) => {
                let mut summary = None;
                crate::publish::publish_atomically(path, |temp| {
                    let counts = (0..plan.rows())
                        .map(|i| plan.index_row(i).event_count)
                        .collect();
                    let mut sink = JsonSink::new(path, counts, plan.with_task_ids())?;
                    summary = Some(plan.emit(&mut sink)?);
                    let doc = Document {
                        metadata: &plan.metadata,
                        threads: &plan.threads,
                        tasks: &plan.tasks,
                    };
                    sink.finish(
                        temp,
                        jsonfile::is_gzip_path(path),
                        &doc,
                        &|i| plan.region_name(i).to_owned(),
                        &|i| shown(detail, plan.index_row(i)),
                    )
                })?;
                write_path = WritePath::Json {
                    through_scratch: plan.emits_through_scratch(),
                };
                statistics = std::mem::take(&mut plan.statistics);
                (None, summary.unwrap_or_default(), Some(path.clone()))
            }
            #[cfg(not(feature = "hdf5"))]
            Output::File(path) => return Err(Error::needs_hdf5(path, "an HDF5 file")),
            #[cfg(feature = "hdf5")]
            Output::File(path) => {
                let mut summary = None;
                crate::publish::publish_atomically(path, |temp| {
                    let header = Header {
                        metadata: &plan.metadata,
                        names: plan.rows(),
                        region_name: &|row| plan.region_name(row),
                        threads: &plan.threads,
                        tasks: &plan.tasks,
                        events: plan.len(),
                        rows: plan.rows(),
                        with_task_ids: plan.with_task_ids(),
                    };
                    let mut sink = FileSink::create(
                        temp,
                        path,
                        &header,
                        read::compression(options),
                        read::chunk_size(options),
                    )?;
                    let tree = match sink.direct()? {
                        Some(columns) => {
                            write_path = WritePath::Direct;
                            plan.write_direct(&columns, &mut sink)?
                        }
                        None => {
                            write_path = WritePath::Streamed {
                                through_scratch: plan.emits_through_scratch(),
                            };
                            plan.emit(&mut sink)?
                        }
                    };
                    summary = Some(tree);
                    if let Some(paths) = &plan.call_paths {
                        sink.call_paths(paths)?;
                    }
                    sink.counters(&plan.counters)?;
                    sink.finish(plan.rows(), &|i| shown(detail, plan.index_row(i)))
                })?;
                statistics = std::mem::take(&mut plan.statistics);
                (None, summary.unwrap_or_default(), Some(path.clone()))
            }
            Output::Memory => {
                let (profile, summary) = in_memory(&mut plan, detail)?;
                statistics = std::mem::take(&mut plan.statistics);
                (Some(profile), summary, None)
            }
        };
        let samples = publish_samples(&mut plan, file_path.as_deref(), 0)?;
        let results = Results {
            profile,
            summary,
            file_path,
            health,
            write_path,
            statistics,
            counters: std::mem::take(&mut plan.counters),
            samples,
        };
        if read::verbose(options) {
            eprintln!("{results}");
        }
        Ok(results)
    }

    /// Writes an MPI session's `plan` into the one file at `path`, with
    /// every other rank's (collective: see `collective.rs`); this rank's
    /// results (its own call tree and statistics); the summary printed on
    /// rank 0 if verbose.
    #[cfg(feature = "mpi")]
    pub(crate) fn publish_mpi(
        mut plan: Plan,
        options: &Options,
        comm: &crate::comm::Serialized<'_>,
        path: &Path,
    ) -> Result<Results, Error> {
        let written = crate::collective::write(&mut plan, options, comm, path)?;
        let rank = i32::try_from(comm.rank()).unwrap_or(i32::MAX);
        let samples = publish_samples(&mut plan, Some(path), rank)?;
        let results = Results {
            samples,
            profile: None,
            summary: written.summary,
            file_path: Some(path.to_path_buf()),
            health: std::mem::take(&mut plan.health),
            write_path: match written.writer {
                crate::collective::Writer::Direct => WritePath::MpiDirect,
                crate::collective::Writer::Parallel => WritePath::MpiParallel,
            },
            statistics: std::mem::take(&mut plan.statistics),
            counters: std::mem::take(&mut plan.counters),
        };
        if read::verbose(options) && comm.rank() == 0 {
            eprintln!("{results}");
        }
        Ok(results)
    }

    /// Writes an aggregation-mode session's rows where `options` say (the
    /// aggregate layout, published atomically, or memory) and prints the
    /// summary if verbose.
    pub(crate) fn publish_aggregate(
        plan: AggregatePlan,
        options: &Options,
    ) -> Result<Results, Error> {
        let file_path = match read::output(options) {
            Output::File(path) if jsonfile::is_json_path(path) => {
                crate::publish::publish_atomically(path, |temp| {
                    let doc = Document {
                        metadata: &plan.metadata,
                        threads: &[],
                        tasks: &[],
                    };
                    jsonfile::write_aggregate(temp, path, &doc, &plan.names, &plan.rows)
                })?;
                Some(path.clone())
            }
            #[cfg(not(feature = "hdf5"))]
            Output::File(path) => return Err(Error::needs_hdf5(path, "an HDF5 file")),
            #[cfg(feature = "hdf5")]
            Output::File(path) => {
                crate::publish::publish_atomically(path, |temp| {
                    hdf5::write_aggregate(
                        temp,
                        path,
                        &plan.metadata,
                        &plan.names,
                        &plan.rows,
                        &plan.counters,
                    )
                })?;
                Some(path.clone())
            }
            Output::Memory => None,
        };
        let results = Results {
            profile: None,
            statistics: plan.statistics(),
            summary: plan.summary,
            file_path,
            health: plan.health,
            write_path: WritePath::Memory,
            counters: plan.counters,
            samples: None,
        };
        if read::verbose(options) {
            eprintln!("{results}");
        }
        Ok(results)
    }

    /// The results of a deactivated session: an empty profile, written
    /// nowhere.
    pub(crate) fn deactivated() -> Results {
        Results {
            profile: Some(Profile::default()),
            summary: CallTree::default(),
            file_path: None,
            health: RecordingHealth::default(),
            write_path: WritePath::Deactivated,
            statistics: Vec::new(),
            counters: Vec::new(),
            samples: None,
        }
    }

    /// Per region, the counters of a session that counted allocations
    /// ([`Options::track_allocations`](crate::Options::track_allocations))
    /// or perf events ([`Options::perf_events`](crate::Options::perf_events)),
    /// inclusive of callees and own; empty otherwise.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// // The doc test's binary has no CountingAllocator: perf events need
    /// // Linux, so this counts nothing and shows the empty case.
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// sp::region("work").run(|| ());
    /// assert!(sp::finalize()?.counters().is_empty());
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn counters(&self) -> &[RegionCounters] {
        &self.counters
    }

    /// The counters of the region `name`, if it was counted.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// sp::region("work").run(|| ());
    /// assert!(sp::finalize()?.counters_of("work").is_none());
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn counters_of(&self, name: &str) -> Option<&RegionCounters> {
        self.counters.iter().find(|c| c.name == name)
    }

    /// The recorded data of an in-memory session; `None` for a file session,
    /// whose data is in its file.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// sp::region("r").run(|| ());
    /// assert_eq!(sp::finalize().unwrap().profile().unwrap().events.len(), 1);
    /// ```
    pub fn profile(&self) -> Option<&Profile> {
        self.profile.as_ref()
    }

    /// The recorded data of an in-memory session, by value.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// let profile = sp::finalize().unwrap().into_profile().unwrap();
    /// assert!(profile.events.is_empty());
    /// ```
    pub fn into_profile(self) -> Option<Profile> {
        self.profile
    }

    /// The file written, `None` for an in-memory session.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// assert!(sp::finalize().unwrap().file_path().is_none());
    /// ```
    pub fn file_path(&self) -> Option<&Path> {
        self.file_path.as_deref()
    }

    /// The call tree: regions nested under the regions that called them.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// sp::region("a").run(|| sp::region("b").run(|| ()));
    /// let results = sp::finalize().unwrap();
    /// let tree = results.summary();
    /// assert_eq!(tree.roots().next().unwrap().children().len(), 1);
    /// ```
    pub fn summary(&self) -> &CallTree {
        &self.summary
    }

    /// Per-region statistics of the calls written (calls, total, own, min,
    /// max, mean, p50/p95/p99), in the file's region order, for a file
    /// session as for an in-memory one. For an aggregation-mode session
    /// ([`Options::aggregation`](crate::Options::aggregation)) they are its
    /// totals, without percentiles (the durations were not kept:
    /// [`RegionStatistics::is_exact`] is false and the percentiles 0).
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// let path = std::env::temp_dir().join(format!("stats-doc-{}.h5", std::process::id()));
    /// sp::setup(Options::new().file_path(&path).verbose(false))?;
    /// sp::region("a").run(|| sp::region("b").run(|| ()));
    /// let results = sp::finalize()?;
    /// let names: Vec<&str> = results.statistics().iter().map(|s| s.name()).collect();
    /// assert_eq!(names, ["a", "b"]);
    /// assert!(results.statistics()[0].exclusive() <= results.statistics()[0].total());
    /// # std::fs::remove_file(&path).unwrap();
    ///
    /// sp::setup(Options::new().in_memory().verbose(false).aggregation(true))?;
    /// sp::region("hot").run(|| ());
    /// let results = sp::finalize()?;
    /// let hot = results.statistics_of("hot").unwrap();
    /// assert_eq!((hot.num_calls(), hot.is_exact()), (1, false));
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn statistics(&self) -> &[RegionStatistics] {
        &self.statistics
    }

    /// The statistics of region `name`, if it has calls in the results.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// sp::region("solve").run(|| ());
    /// let results = sp::finalize()?;
    /// assert_eq!(results.statistics_of("solve").unwrap().num_calls(), 1);
    /// assert!(results.statistics_of("missing").is_none());
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn statistics_of(&self, name: &str) -> Option<&RegionStatistics> {
        self.statistics.iter().find(|s| s.name() == name)
    }
}

impl Results {
    /// How the recording went: bytes spilled to disk, why spilling stopped
    /// (if it did), calls dropped.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// assert_eq!(sp::finalize()?.health().spilled_bytes, 0);
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn health(&self) -> &RecordingHealth {
        &self.health
    }

    /// A sampled session's samples ([`Options::sample_hz`](crate::Options::sample_hz)):
    /// each sample's region (an index into the profile's region names, -1
    /// outside every call), module and address, as the `.sps` file beside
    /// the profile holds them; `None` if the session did not sample.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// // Sampling needs Linux's perf events: elsewhere `setup` says why.
    /// if sp::setup(Options::new().in_memory().verbose(false).sample_hz(1000)).is_ok() {
    ///     sp::region("spin").run(|| {
    ///         let t = std::time::Instant::now();
    ///         while t.elapsed().as_millis() < 50 {}
    ///     });
    ///     let results = sp::finalize()?;
    ///     let samples = results.samples().unwrap();
    ///     assert_eq!(samples.hz, 1000);
    ///     assert_eq!(samples.regions, ["spin"]);
    ///     assert!(results.samples_path().is_none()); // in memory
    /// }
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn samples(&self) -> Option<&SampleFile> {
        self.samples.as_ref().map(|s| &s.file)
    }

    /// A sampled session's stacks: each sample's path of regions
    /// (outermost first) and its call chain (innermost first; frames need
    /// the binary built with frame pointers, `-C force-frame-pointers=yes`),
    /// as the `.sps.stacks` file beside the `.sps` holds them.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// if sp::setup(Options::new().in_memory().verbose(false).sample_hz(1000)).is_ok() {
    ///     sp::region("outer").run(|| sp::region("inner").run(|| {
    ///         let t = std::time::Instant::now();
    ///         while t.elapsed().as_millis() < 50 {}
    ///     }));
    ///     let results = sp::finalize()?;
    ///     let (samples, stacks) = (results.samples().unwrap(), results.sample_stacks().unwrap());
    ///     assert_eq!(stacks.samples.len(), samples.samples.len());
    ///     for (i, s) in samples.samples.iter().enumerate() {
    ///         // A sample in `inner` has the path outer > inner.
    ///         if s.region >= 0 {
    ///             let path = stacks.path_of(i).unwrap();
    ///             assert_eq!(path.last(), Some(&s.region));
    ///         }
    ///     }
    /// }
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn sample_stacks(&self) -> Option<&Stacks> {
        self.samples.as_ref().map(|s| &s.stacks)
    }

    /// Where a sampled session's samples were written: beside the profile,
    /// `<stem>_rank<NNNNN>.sps` (`None` in memory or without sampling).
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// assert!(sp::finalize()?.samples_path().is_none());
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn samples_path(&self) -> Option<&Path> {
        self.samples.as_ref().and_then(|s| s.path.as_deref())
    }

    /// How the events were written (for tests of the writer; hidden from
    /// the documented API with [`WritePath`]).
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options, WritePath};
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// assert_eq!(sp::finalize()?.write_path(), WritePath::Memory);
    /// # Ok::<(), sp::Error>(())
    /// ```
    #[doc(hidden)]
    pub fn write_path(&self) -> WritePath {
        self.write_path
    }
}

impl std::fmt::Display for Results {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.summary())?;
        if let Some(error) = self.health.spill_error.as_deref() {
            writeln!(f, "  Spilling stopped: {error}")?;
        }
        if !self.health.perf_events_not_counted.is_empty() {
            writeln!(
                f,
                "  {} thread(s) counted no perf events (their group could not be opened): {}",
                self.health.perf_events_not_counted.len(),
                self.health.perf_events_not_counted.join("; ")
            )?;
        }
        if !self.health.dropped.is_empty() {
            let total: u64 = self.health.dropped.iter().map(|d| d.num_calls).sum();
            writeln!(
                f,
                "  {total} calls past the limits were counted but not recorded \
                 (see the file's dropped_calls_by_region metadata)"
            )?;
        }
        if !self.counters.is_empty() {
            // Per counted region: calls and each event's inclusive total
            // (own in parentheses), at most 20 regions.
            writeln!(f, "  Region counters (inclusive, own in parentheses):")?;
            for c in self.counters.iter().take(20) {
                let events: Vec<String> = c
                    .event_names
                    .iter()
                    .zip(c.inclusive.iter().zip(&c.exclusive))
                    .map(|(e, (i, o))| format!("{e} {i} ({o})"))
                    .collect();
                writeln!(
                    f,
                    "    {}: {} calls; {}",
                    c.name,
                    c.num_calls,
                    events.join(", ")
                )?;
            }
            if self.counters.len() > 20 {
                writeln!(f, "    ... {} more regions", self.counters.len() - 20)?;
            }
        }
        if let (true, Some(name)) = (
            self.statistics().is_empty(),
            &self.health.traced_outside_entrypoints,
        ) {
            writeln!(
                f,
                "  No calls were recorded: traced functions (such as {name}) ran outside any \
                 entrypoint. Mark one with #[profile(recursive)], or record every traced \
                 function with Options::trace_all(true) (SCOPE_PROFILER_TRACE_ALL=1)."
            )?;
        }
        if let Some(SessionSamples {
            file: samples,
            path,
            ..
        }) = &self.samples
        {
            let landed = samples.samples.iter().filter(|s| s.region >= 0).count();
            write!(
                f,
                "  {} samples at {} Hz, {landed} in regions",
                samples.samples.len(),
                samples.hz
            )?;
            let missed = u64::try_from(samples.ticks)
                .unwrap_or(0)
                .saturating_sub(samples.samples.len() as u64);
            if missed > 0 {
                write!(f, " ({missed} not kept: the file's samples_missed)")?;
            }
            match path {
                Some(path) => writeln!(
                    f,
                    "; written to {}\n  Samples: scope-prof inspect --samples {}",
                    path.display(),
                    self.file_path.as_deref().unwrap_or(path).display()
                )?,
                None => writeln!(f)?,
            }
        }
        match &self.file_path {
            Some(path) => {
                let p = path.display();
                writeln!(f, "  Profile written to {p}")?;
                writeln!(f, "  Inspect: scope-profiler inspect {p}")?;
                writeln!(f, "  Report:  scope-profiler report {p} -o report.html")?;
                writeln!(f, "  Plot:    scope-profiler plot default {p} -o plots")
            }
            None => writeln!(f, "  (in-memory session: no file written)"),
        }
    }
}
