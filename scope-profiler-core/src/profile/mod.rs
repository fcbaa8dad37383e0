//! The recorded data of a session, laid out the way the HDF5 file stores it.
//!
//! [`Profile`] is what the writer writes, what the summary is computed from and
//! what an in-memory session hands back from `finalize`. Columns follow the
//! Python package's schema 3 (`/region_table`, `/rank_region_index`, `/events`,
//! `/thread_table`), so a field here is a dataset there.

use crate::value::Value;

mod health;
mod statistics;

pub use health::{DroppedCalls, RecordingHealth};
pub use statistics::{RegionStatistics, StatsAccumulator, SummaryStatistics};

/// One row of `/rank_region_index`: the calls of one region on one rank.
///
/// ```
/// # use scope_profiler::{RegionRow, SummaryStatistics};
/// let mut row = RegionRow::default();
/// (row.event_offset, row.event_count) = (4, 2);
/// row.stats = SummaryStatistics::from_calls(&[(0, 10), (20, 5)]);
/// assert_eq!(row.stats.total, 15);
/// assert_eq!(row.events(), 4..6);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct RegionRow {
    /// Index into [`Profile::region_names`].
    pub region_id: u32,
    /// MPI rank; 0 for a serial run.
    pub rank: u32,
    /// First event of the row in [`Profile::events`].
    pub event_offset: u64,
    /// Number of events of the row.
    pub event_count: u64,
    /// Where the region is defined, "" when unknown.
    pub source_file: String,
    /// Line of the definition, -1 when unknown.
    pub source_line: i64,
    /// Time spent in the region's calls outside their direct child calls, ns
    /// (the file's `exclusive_totals`; -1 where a file has none).
    pub exclusive: i64,
    /// Exact statistics of the row's durations.
    pub stats: SummaryStatistics,
    /// The region's tags (the file's `tags`), see
    /// `Region::tagged`.
    pub tags: Vec<String>,
    /// The region's source text (the file's `source_texts`), "" when not
    /// captured; see [`Options::capture_region_source`](crate::options::Options::capture_region_source).
    pub source_text: String,
    /// Each call's metadata (its keys in the order they were set), in the
    /// order of the row's events (the file's `event_metadata`); empty when
    /// no call of the row has any. See
    /// [`call_metadata`](crate::callmeta::call_metadata).
    pub event_metadata: Vec<Vec<(String, crate::value::Value)>>,
}

impl RegionRow {
    /// The positions of the row's events in [`Profile::events`] (saturating:
    /// an offset or count too large for memory gives an empty range).
    ///
    /// ```
    /// let mut row = scope_profiler::RegionRow::default();
    /// (row.event_offset, row.event_count) = (10, 3);
    /// assert_eq!(row.events(), 10..13);
    /// ```
    pub fn events(&self) -> std::ops::Range<usize> {
        let start = usize::try_from(self.event_offset).unwrap_or(usize::MAX);
        let count = usize::try_from(self.event_count).unwrap_or(usize::MAX);
        start..start.saturating_add(count)
    }
}

/// The per-call columns of `/events`, every row's calls back to back.
///
/// Starts are absolute nanoseconds on the CLOCK_MONOTONIC timeline; the file
/// stores them delta-encoded per row (`start_deltas`).
///
/// ```
/// # use scope_profiler::Events;
/// let events = Events::default();
/// assert!(events.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Events {
    /// Start of each call, absolute ns (CLOCK_MONOTONIC).
    pub start_ns: Vec<i64>,
    /// End minus start, ns.
    pub durations: Vec<i64>,
    /// Unique id of the call on its rank; a parent's id is smaller than its children's.
    pub call_ids: Vec<i64>,
    /// Call id of the enclosing call on the same lane, -1 for a root.
    pub parent_ids: Vec<i64>,
    /// Index into [`Profile::threads`].
    pub thread_ids: Vec<i64>,
    /// Index into [`Profile::tasks`] for calls of async fns, -1 otherwise;
    /// `None` when the session recorded no async call.
    pub task_ids: Option<Vec<i64>>,
}

impl Events {
    /// Number of events.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// sp::region("a").run(|| ());
    /// sp::region("a").run(|| ());
    /// let profile = sp::finalize()?.into_profile().unwrap();
    /// assert_eq!(profile.events.len(), 2);
    /// assert!(!profile.events.is_empty());
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.start_ns.len()
    }

    /// True when no call was recorded.
    ///
    /// ```
    /// assert!(scope_profiler::Events::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.start_ns.is_empty()
    }
}

/// One row of `/thread_table`: a thread that recorded calls.
///
/// ```
/// # use scope_profiler::ThreadInfo;
/// let mut t = ThreadInfo::default();
/// (t.name, t.end_ns) = ("main".into(), -1); // still running when written
/// assert_eq!(t.end_ns, -1);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ThreadInfo {
    /// Dense index, what [`Events::thread_ids`] refers to.
    pub index: i64,
    /// Rust's `ThreadId` as an integer.
    pub ident: i64,
    /// The kernel's thread id (`gettid`).
    pub native_id: i64,
    /// 1 for threads Rust does not join at exit (never known here: 0).
    pub daemon: i8,
    /// When the thread first recorded, ns relative to the session start.
    pub start_ns: i64,
    /// When the thread exited, relative ns; -1 if it was still running.
    pub end_ns: i64,
    /// CPU time the thread used, ns; -1 when unknown.
    pub cpu_ns: i64,
    /// The thread's name, or `thread-<index>` for unnamed threads.
    pub name: String,
}

/// One row of `/task_table`: an async call lane (one per instrumented future).
///
/// ```
/// # use scope_profiler::TaskInfo;
/// let mut t = TaskInfo::default();
/// (t.created_ns, t.done_ns, t.name) = (5, 9, "fetch".into());
/// assert_eq!(t.done_ns - t.created_ns, 4);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskInfo {
    /// Dense index, what [`Events::task_ids`] refers to.
    pub index: i64,
    /// The thread that first polled it.
    pub thread_index: i64,
    /// First poll, ns relative to the session start.
    pub created_ns: i64,
    /// Completion or cancellation, relative ns.
    pub done_ns: i64,
    /// Number of polls.
    pub steps: i64,
    /// Time spent inside polls, ns.
    pub running_ns: i64,
    /// Time between polls, ns.
    pub suspended_ns: i64,
    /// "future".
    pub kind: String,
    /// The region name.
    pub name: String,
    /// The function's path.
    pub coro_name: String,
}

/// Everything one session recorded, as written to the file.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
/// { let _g = sp::region("step").enter(); }
/// let results = sp::finalize().unwrap();
/// let profile = results.profile().unwrap();
/// assert_eq!(profile.region_names, ["step"]);
/// assert_eq!(profile.rows[0].event_count, 1);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Profile {
    /// `/metadata` attributes, in the order written.
    pub metadata: Vec<(String, Value)>,
    /// `/region_table/names`: the regions that recorded at least one call.
    pub region_names: Vec<String>,
    /// `/rank_region_index`, one row per region with calls.
    pub rows: Vec<RegionRow>,
    /// `/events`.
    pub events: Events,
    /// `/thread_table`.
    pub threads: Vec<ThreadInfo>,
    /// `/task_table`; empty when no async call was recorded.
    pub tasks: Vec<TaskInfo>,
    /// `/rank<N>/perf_events`: per region, the counters of a session that
    /// counted allocations or perf events; empty otherwise.
    pub counters: Vec<RegionCounters>,
}

/// One region's counters (allocations, perf events) on one rank: the
/// Python package's `rank<N>/perf_events/<region>` group (attributes
/// `calls` and `event_names`, dataset `values`, inclusive totals), with our
/// own totals (`own_values`: inclusive minus the direct callees').
///
/// ```
/// let mut c = scope_profiler::RegionCounters::default();
/// c.name = "work".into();
/// c.num_calls = 2;
/// c.event_names = vec!["alloc-count".into()];
/// c.inclusive = vec![6];
/// c.exclusive = vec![4];
/// assert_eq!(c.get("alloc-count"), Some(6));
/// assert_eq!(c.exclusive_of("alloc-count"), Some(4));
/// assert_eq!(c.per_call("alloc-count"), Some(3.0));
/// assert_eq!(c.get("cycles"), None);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RegionCounters {
    /// The region's name.
    pub name: String,
    /// MPI rank (0 without MPI).
    pub rank: u32,
    /// Calls counted.
    pub num_calls: u64,
    /// The events, in the order of `inclusive` and `exclusive`.
    pub event_names: Vec<String>,
    /// Per event, the sum over the calls of the call's count (callees
    /// included).
    pub inclusive: Vec<u64>,
    /// Per event, the calls' exclusive counts (callees excluded); zeros
    /// when read from a file that does not have them (the Python package's).
    pub exclusive: Vec<u64>,
}

impl RegionCounters {
    fn index(&self, event: &str) -> Option<usize> {
        self.event_names.iter().position(|e| e == event)
    }

    /// The inclusive total of `event`, if counted.
    ///
    /// ```
    /// assert_eq!(scope_profiler::RegionCounters::default().get("cycles"), None);
    /// ```
    pub fn get(&self, event: &str) -> Option<u64> {
        self.index(event)
            .and_then(|i| self.inclusive.get(i).copied())
    }

    /// The exclusive total of `event` (callees excluded), if counted.
    ///
    /// ```
    /// assert_eq!(scope_profiler::RegionCounters::default().exclusive_of("cycles"), None);
    /// ```
    pub fn exclusive_of(&self, event: &str) -> Option<u64> {
        self.index(event)
            .and_then(|i| self.exclusive.get(i).copied())
    }

    /// The inclusive total of `event` per call.
    ///
    /// ```
    /// assert_eq!(scope_profiler::RegionCounters::default().per_call("x"), None);
    /// ```
    pub fn per_call(&self, event: &str) -> Option<f64> {
        let total = self.get(event)?;
        (self.num_calls > 0).then(|| total as f64 / self.num_calls as f64)
    }

    /// Instructions per cycle, where both were counted (and cycles > 0).
    ///
    /// ```
    /// let mut c = scope_profiler::RegionCounters::default();
    /// c.event_names = vec!["cycles".into(), "instructions".into()];
    /// c.inclusive = vec![100, 250];
    /// assert_eq!(c.ipc(), Some(2.5));
    /// ```
    pub fn ipc(&self) -> Option<f64> {
        let cycles = self.get("cycles").filter(|&c| c > 0)?;
        Some(self.get("instructions")? as f64 / cycles as f64)
    }
}

impl Profile {
    /// A metadata value by key.
    ///
    /// ```
    /// # use scope_profiler::{Profile, Value};
    /// let mut p = Profile::default();
    /// p.metadata.push(("mpi_size".into(), Value::Int(1)));
    /// assert_eq!(p.metadata_value("mpi_size"), Some(&Value::Int(1)));
    /// ```
    pub fn metadata_value(&self, key: &str) -> Option<&Value> {
        self.metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The events of one row, as `(start_ns, duration_ns)` pairs; none if
    /// the row points outside the events (a malformed profile).
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// sp::region("a").run(|| ());
    /// let profile = sp::finalize()?.into_profile().unwrap();
    /// assert_eq!(profile.row_calls(&profile.rows[0]).count(), 1);
    /// let mut bad = profile.rows[0].clone();
    /// bad.event_offset = 99;
    /// assert_eq!(profile.row_calls(&bad).count(), 0);
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn row_calls(&self, row: &RegionRow) -> impl Iterator<Item = (i64, i64)> + '_ {
        let range = row.events();
        let starts = self.events.start_ns.get(range.clone()).unwrap_or_default();
        let durations = self.events.durations.get(range).unwrap_or_default();
        starts.iter().copied().zip(durations.iter().copied())
    }
}

/// One row of an aggregate file (`storage_layout = "aggregate"`, written by
/// the Python package's `aggregation_mode`): per-(rank, region) totals
/// without per-call events.
///
/// ```
/// let row = scope_profiler_reader::AggregateRow::default();
/// assert_eq!((row.num_calls, row.total), (0, 0));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AggregateRow {
    /// Index into `ProfileReader::region_names`.
    pub region_id: u32,
    /// MPI rank.
    pub rank: u32,
    /// Number of calls.
    pub num_calls: u64,
    /// Summed duration, ns.
    pub total: i64,
    /// Summed exclusive (own) time, ns.
    pub exclusive: i64,
    /// Shortest call, ns.
    pub minimum: i64,
    /// Longest call, ns.
    pub maximum: i64,
}

/// One call path of one lane, as `finalize` stores it beside the events
/// (group `/scope_profiler_call_paths`, which only this crate reads): the
/// calls of region `region` made under the path's `parent`, with their
/// totals and a log histogram of their durations: a row of the file's
/// table, not a tree. Readers build the `CallTree`
/// from these instead of walking every event (see
/// `ProfileReader::call_paths` and `ProfileReader::call_tree`).
///
/// ```
/// let path = scope_profiler_reader::CallPath::default();
/// assert_eq!((path.parent, path.num_calls), (None, 0));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallPath {
    /// The enclosing path (an index into the same list, always smaller);
    /// `None` for a call at the lane's root.
    pub parent: Option<u32>,
    /// The lane: index into the thread table (-1 without one).
    pub thread_id: i64,
    /// The lane: index into the task table, -1 for a thread lane.
    pub task_id: i64,
    /// Index into the file's region names.
    pub region_id: u32,
    /// Calls.
    pub num_calls: u64,
    /// Summed durations, ns.
    pub total: i64,
    /// Summed time outside direct child calls, ns.
    pub exclusive: i64,
    /// Shortest call, ns.
    pub minimum: i64,
    /// Longest call, ns.
    pub maximum: i64,
    /// Earliest start, ns since the session's origin (as the events' starts).
    pub first_start: i64,
    /// Latest end, ns (as `first_start`).
    pub last_end: i64,
    /// The durations' log histogram (16 buckets per power of two): `(bucket,
    /// count)` for each bucket with calls, buckets ascending.
    pub histogram: Vec<(u32, u64)>,
}

/// What a reader of a profile file holds at once (everything but the
/// events): the index of a `ProfileReader`, made
/// by the HDF5 or the JSON reader.
#[derive(Clone, Debug, Default)]
pub struct ReadIndex {
    /// `scope_profiler_schema` (2 or 3); 3 for a JSON profile.
    pub schema: i64,
    pub region_names: Vec<String>,
    pub rows: Vec<RegionRow>,
    /// Whether the rows' `stats` are known.
    pub has_summaries: bool,
    /// Each row's tags as stored: a JSON list.
    pub tags: Vec<String>,
    pub aggregates: Vec<AggregateRow>,
    pub metadata: Vec<(String, Value)>,
    pub threads: Vec<ThreadInfo>,
    pub tasks: Vec<TaskInfo>,
    pub event_count: u64,
    pub call_paths: Option<Vec<CallPath>>,
    /// Per region and rank, the counters (`rank<N>/perf_events`).
    pub counters: Vec<RegionCounters>,
}
