//! From the records of every lane to the file's rows and columns, in
//! bounded memory.
//!
//! Per lane, records are stored in the order calls ended, each with its
//! depth. Walking a lane *backwards* meets every call after its parent: the
//! parent of a call at depth `d` is the last call seen at depth `d - 1`, so
//! one backward pass with a chain of the open ancestors (O(depth) memory)
//! gives every call its parent, its id (ids count calls in that backward
//! order, so a parent's id is smaller than its children's), the exclusive
//! times and the summary tree. Each call's place in the file is known
//! beforehand from a counting pass: rows region by region in registration
//! order, lanes in order within a row, calls in end order within a lane.
//! Placed calls (placement.rs) go straight into columns: an uncompressed
//! file's ([`Plan::write_direct`]), or scratch columns that [`Plan::emit`]
//! then hands to a sink in file order; or, when they fit the budget, into
//! memory.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::callmatch::{self, KeyedMeta, LaneMeta};
use crate::clock::{Anchor, TickConverter};
use crate::error::Error;
use crate::histogram::{self, LogHistogram};
use crate::lane::{AggTable, CounterTable, Lane, LaneCut, LaneKind, SegmentCut, TaskRecord, bump};
use crate::metadata::json_string;
use crate::placement::{
    self, DirectRuns, InMemory, PLACED_BYTES, PackedReader, PackedRuns, PlacedCall, Placer, SlotRun,
};
use crate::profile::{
    AggregateRow, CallPath, DroppedCalls, RecordingHealth, RegionCounters, RegionStatistics,
    StatsAccumulator, TaskInfo, ThreadInfo,
};
use crate::record::Record;
use crate::registry::{self, RegionInfo, RegionTable};
use crate::sink::{self, ColumnStore, DURATIONS, EventSink, EventSlice, IndexRow, START_DELTAS};
use crate::store::Store;
use crate::summary::{CallPaths, Summary, SummaryBuilder};
use crate::sync::lock;
use crate::value::Value;
use crate::value::{self, CallMetadata};

/// Everything needed to write a session's file: the layout of its rows,
/// and the cut of every lane, walked when the file is written.
pub struct Plan {
    pub metadata: Vec<(String, Value)>,
    pub threads: Vec<ThreadInfo>,
    pub tasks: Vec<TaskInfo>,
    /// The session region id of each index row (regions with calls, in
    /// registration order); see [`Plan::index_row`].
    row_regions: Vec<u32>,
    /// Where each region is defined, by session region id.
    regions: Vec<RegionInfo>,
    /// The source files of [`RegionInfo::file`].
    files: Vec<&'static str>,
    /// Exclusive ns per session region id (set by the walk).
    exclusive: Vec<i64>,
    /// Recorded calls per region, by session region id.
    pub counts: Vec<u64>,
    /// Spilling and dropped calls, as of the cut.
    pub health: RecordingHealth,
    /// Dropped calls per region, by session region id.
    dropped: Vec<u64>,
    with_task_ids: bool,
    total: usize,
    walk: WalkInput,
    /// Whether the regions' source text goes into the rows.
    capture_source: bool,
    /// Each row's statistics, percentiles included (set when the events are
    /// emitted).
    pub statistics: Vec<RegionStatistics>,
    /// The `event_metadata` of the rows whose calls have any (set by the
    /// walk), by row.
    row_metadata: std::collections::HashMap<u32, String>,
    /// Every lane's call paths (set by the walk; `None` past
    /// `MAX_CALL_PATHS`).
    pub call_paths: Option<Vec<CallPath>>,
    /// Per region, the counters the threads added up (a session that
    /// counts allocations or perf events).
    pub counters: Vec<RegionCounters>,
}

/// What the backward walk reads.
struct WalkInput {
    conv: TickConverter,
    store: Arc<Store>,
    lanes: Vec<LaneCut>,
    /// The file's task index of each task number (-1: not in the file).
    task_pos: Vec<i32>,
    /// The metadata of calls known by region and start, if any.
    keyed: Option<KeyedMeta>,
    /// First slot of each region's row, by session region id.
    row_offset: Vec<u64>,
    /// Bytes the placement may hold in memory.
    budget: usize,
    dir: PathBuf,
}

impl Plan {
    /// Completed calls per region, by session region id: recorded or dropped.
    pub fn counts_with_dropped(&self) -> Vec<u64> {
        let mut counts = self.counts.clone();
        for (region, n) in self.dropped.iter().enumerate() {
            bump(&mut counts, region, *n);
        }
        counts
    }

    /// Number of index rows.
    pub fn rows(&self) -> usize {
        self.row_regions.len()
    }

    /// The name of the region of index row `row`: the file's region name
    /// `row` (the name the process interned: no copy).
    pub fn region_name(&self, row: usize) -> &'static str {
        let region = self
            .row_regions
            .get(row)
            .map_or(usize::MAX, |&r| r as usize);
        self.regions.get(region).map_or("", |r| r.entry.name)
    }

    /// The exclusive time of the calls of row `row`, ns (set by the walk).
    fn row_exclusive(&self, row: usize) -> i64 {
        let region = self
            .row_regions
            .get(row)
            .map_or(usize::MAX, |&r| r as usize);
        self.exclusive.get(region).copied().unwrap_or(0)
    }

    /// Index row `row`, but its statistics (the sink receives them while
    /// the events are written); the exclusive total is known once the
    /// events are written.
    pub fn index_row(&self, row: usize) -> IndexRow<'_> {
        let region = self.row_regions.get(row).map_or(0, |&r| r as usize);
        let info = self.regions.get(region);
        let file = info.map_or("", |i| {
            self.files.get(i.file as usize).copied().unwrap_or("")
        });
        IndexRow {
            region_id: row as u32,
            rank: 0,
            event_offset: self.walk.row_offset.get(region).copied().unwrap_or(0),
            event_count: self.counts.get(region).copied().unwrap_or(0),
            source_file: file,
            source_line: match info {
                Some(i) if !file.is_empty() => i.line as i64,
                _ => -1,
            },
            exclusive_total: self.exclusive.get(region).copied().unwrap_or(0),
            tags: match info {
                Some(i) if !i.entry.tags().is_empty() => {
                    Cow::Owned(sink::tags_json(i.entry.tags()))
                }
                _ => Cow::Borrowed("[]"),
            },
            source_text: match info {
                Some(i) if self.capture_source => i.entry.source_text(),
                _ => "",
            },
            event_metadata: match self.row_metadata.get(&(row as u32)) {
                Some(json) => Cow::Borrowed(json.as_str()),
                None => Cow::Borrowed("[]"),
            },
        }
    }

    /// The `event_metadata` JSON of each row that has calls with metadata,
    /// from `(slot, entry)` pairs in slot order.
    fn rows_metadata(
        &self,
        call_meta: &[(u64, Arc<CallMetadata>)],
    ) -> std::collections::HashMap<u32, String> {
        let mut rows = std::collections::HashMap::new();
        let mut next = 0;
        while next < call_meta.len() {
            let slot = call_meta[next].0;
            // The row holding `slot`: rows are in slot order.
            let row = self.row_regions.partition_point(|&region| {
                let offset = self
                    .walk
                    .row_offset
                    .get(region as usize)
                    .copied()
                    .unwrap_or(0);
                offset <= slot
            }) - 1;
            let region = self.row_regions[row] as usize;
            let offset = self.walk.row_offset[region];
            let count = self.counts.get(region).copied().unwrap_or(0);
            // One object per call of the row, `{}` for a call without.
            let mut json = String::from("[");
            for slot in offset..offset + count {
                if slot > offset {
                    json.push_str(", ");
                }
                let same = call_meta[next..].partition_point(|(s, _)| *s == slot);
                let entries = call_meta[next..next + same].iter().map(|(_, e)| &**e);
                value::write_json_object(&mut json, &callmatch::merge(entries));
                next += same;
            }
            json.push(']');
            rows.insert(row as u32, json);
        }
        rows
    }

    /// Whether [`Plan::emit`] goes through scratch columns.
    pub fn emits_through_scratch(&self) -> bool {
        placement::needs_scratch(self.total, self.walk.budget)
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.total
    }

    /// Whether the plan has no event.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Whether the `task_ids` column is written.
    pub fn with_task_ids(&self) -> bool {
        self.with_task_ids
    }

    /// Hands every event to `sink` in file order (through scratch columns
    /// past the budget, else from memory); the rows' statistics go to the
    /// sink as each row is completed; returns the summary tree.
    pub fn emit(&mut self, sink: &mut dyn EventSink) -> Result<Summary, Error> {
        if self.emits_through_scratch() {
            let dir = self.walk.dir.clone();
            let err = |e| Error::io(&dir, e);
            let mut packed =
                PackedRuns::new(&dir, self.regions.len(), self.run_len(), self.with_task_ids)
                    .map_err(err)?;
            let summary = self.place(&mut packed).map_err(err)?;
            let mut reader = packed.finish(self.total).map_err(err)?;
            self.column_pass(Source::Packed(&mut reader), sink)
                .map_err(|e| e.or_io(|e| Error::io(&dir, e)))?;
            return Ok(summary);
        }
        let dir = self.walk.dir.clone();
        let mut placed = InMemory::default();
        placed.calls.reserve_exact(self.total);
        let summary = self.place(&mut placed).map_err(|e| Error::io(dir, e))?;
        let mut cols = Columns::default();
        cols.reset(self.total, self.with_task_ids);
        for p in &placed.calls {
            cols.put(p.slot as usize, p);
        }
        drop(placed);
        let mut stats = RowStats::new(self);
        for slot in 0..self.total {
            cols.start_deltas[slot] =
                stats.add(sink, slot as u64, cols.start_ns[slot], cols.durations[slot])?;
        }
        sink.events(0, &cols.slice(self.with_task_ids))?;
        self.statistics = stats.finish(sink)?;
        Ok(summary)
    }

    /// Writes every event straight into the columns of an uncompressed file
    /// (no scratch round trip), then turns the starts into per-row deltas
    /// and computes the statistics (handed to `stats_sink` row by row) in
    /// one pass over the written columns.
    pub fn write_direct(
        &mut self,
        columns: &dyn ColumnStore,
        stats_sink: &mut dyn EventSink,
    ) -> Result<Summary, Error> {
        let summary = self.place_into(columns)?;
        self.column_pass(Source::Columns(columns), stats_sink)
            .map_err(|e| e.or_io(|e| columns.error(e)))?;
        Ok(summary)
    }

    /// Calls buffered per region before a run of them is written (the
    /// buffers of every region with calls fill the budget).
    fn run_len(&self) -> usize {
        (self.walk.budget / PLACED_BYTES / self.rows().max(1)).clamp(64, 8192)
    }

    /// The backward walk, writing every call into `columns` at its slot
    /// (starts absolute: [`Plan::column_pass`] makes them deltas).
    fn place_into(&mut self, columns: &dyn ColumnStore) -> Result<Summary, Error> {
        let mut direct = DirectRuns {
            columns,
            runs: vec![SlotRun::default(); self.regions.len()],
            run_len: self.run_len(),
            with_tasks: self.with_task_ids,
            values: Vec::new(),
        };
        let summary = self.place(&mut direct).map_err(|e| columns.error(e))?;
        direct.flush_all().map_err(|e| columns.error(e))?;
        Ok(summary)
    }

    /// One pass over the placed calls in file order, a step of events at a
    /// time: each row's start deltas and statistics (to `sink`, row by row),
    /// then the deltas written back into the file's columns
    /// ([`Source::Columns`]) or every column handed to `sink`
    /// ([`Source::Packed`]).
    fn column_pass(
        &mut self,
        mut source: Source<'_>,
        sink: &mut dyn EventSink,
    ) -> Result<(), PassError> {
        // Bytes held per event of a step: the columns read, and the deltas.
        // Emitting, steps of 64k events (a compressed chunk of each
        // column), so that the sink's workers deflate one step's chunks
        // while this thread reads the next (with reused buffers no longer
        // zeroed, `compare finalize 10000000 auto` went from 0.60-0.62 s
        // with steps of 1M to 0.52-0.53 s).
        let (held, most) = match source {
            Source::Columns(_) => (3 * 8, 1 << 20),
            Source::Packed(_) => (7 * 8, 1 << 16),
        };
        let step = (self.walk.budget / held).clamp(4096, most);
        let with_tasks = self.with_task_ids;
        let mut stats = RowStats::new(self);
        let mut cols = Columns::default();
        let mut first = 0usize;
        while first < self.total {
            let len = step.min(self.total - first);
            match &mut source {
                Source::Columns(columns) => {
                    columns.read(START_DELTAS, first, len, &mut cols.start_ns)?;
                    columns.read(DURATIONS, first, len, &mut cols.durations)?;
                }
                Source::Packed(reader) => reader.fill(
                    len,
                    [
                        &mut cols.start_ns,
                        &mut cols.durations,
                        &mut cols.call_ids,
                        &mut cols.parent_ids,
                        &mut cols.thread_ids,
                        &mut cols.task_ids,
                    ],
                )?,
            }
            cols.start_deltas.resize(len, 0);
            for i in 0..len {
                cols.start_deltas[i] = stats.add(
                    sink,
                    (first + i) as u64,
                    cols.start_ns[i],
                    cols.durations[i],
                )?;
            }
            match source {
                Source::Columns(columns) => {
                    columns.write(START_DELTAS, first, &cols.start_deltas)?
                }
                Source::Packed(_) => sink.events(first, &cols.slice(with_tasks))?,
            }
            first += len;
        }
        self.statistics = stats.finish(sink)?;
        Ok(())
    }

    /// The backward walk over every lane (threads' and tasks'): every call
    /// goes to `placer` with its slot; sets the rows' exclusive totals and
    /// returns the summary tree.
    ///
    /// Two walks of the same records run at once: this thread places the
    /// calls and builds the summary tree ([`Placing`]) while a helper thread
    /// decodes spilled blocks and builds the call paths ([`Paths`]), so that
    /// finalize uses two cores from the start (the scale test's 50M calls:
    /// with the summary tree on the helper, this thread waited for its
    /// blocks 0.2-0.5 of about 1.4 s; with it here, the helper waits
    /// 0.2-0.3 s for room to hand blocks on). Without a helper (the thread cannot be
    /// started), both walks run here in turn.
    fn place<P: Placer>(&mut self, placer: &mut P) -> std::io::Result<Summary> {
        let input = &self.walk;
        let mut placing = Placing {
            exclusive: vec![0i64; self.regions.len()],
            // Each lane's calls of a region fill its part of the row
            // backwards: `cursor` goes from the end of the lane's part to
            // its start, then past it to the end (the next lane's start).
            cursor: input.row_offset.clone(),
            placer,
            call_meta: Vec::new(),
            call: 0,
            meta: None,
            keyed: input.keyed.as_ref(),
            matched: Vec::new(),
            // Every region with calls has a node at least.
            summary: SummaryBuilder::with_capacity(self.row_regions.len()),
        };
        // The paths' state is made by the thread that walks it, so that
        // its small, hot allocations come from that thread's own heap
        // arena: made here, beside `placing`'s, they shared cache lines
        // with it, and both walks ran at half speed (false sharing: 0.47
        // instead of 0.24 s for 10M calls, depending on the build's
        // allocation order).
        let walk_paths = |mut source: Spilled| -> std::io::Result<CallPaths> {
            let mut paths = Paths(CallPaths::default());
            for lane in &input.lanes {
                walk_lane(&mut paths, input, lane, &mut source)?;
            }
            Ok(paths.0)
        };
        let (placed, paths) = std::thread::scope(|s| {
            let (decode, mut receive) = Spilled::pair();
            let helper = std::thread::Builder::new()
                .name("scope-profiler-walk".into())
                .spawn_scoped(s, move || walk_paths(decode));
            if helper.is_err() {
                receive = Spilled::decode();
            }
            let placed: std::io::Result<()> = (|| {
                let mut call_base = 0i64;
                for lane in &input.lanes {
                    placing.lane(input, lane, call_base, &mut receive)?;
                    call_base += lane.len as i64;
                }
                Ok(())
            })();
            // A placing walk that stopped early takes no more blocks: the
            // helper's next hand-over must fail, not wait for room.
            drop(receive);
            let paths = match helper {
                Ok(helper) => helper
                    .join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("the walk's thread panicked"))),
                Err(_) => walk_paths(Spilled::decode()),
            };
            (placed, paths)
        });
        placed?;
        let paths = paths?;
        let Placing {
            exclusive,
            mut call_meta,
            summary,
            ..
        } = placing;
        self.exclusive = exclusive;
        let mut row_of = vec![u32::MAX; self.regions.len()];
        for (row, &region) in self.row_regions.iter().enumerate() {
            row_of[region as usize] = row as u32;
        }
        self.call_paths = paths.finish(|region| row_of[region as usize]);
        call_meta.sort_by_key(|(slot, _)| *slot); // stable: precedence kept
        self.row_metadata = self.rows_metadata(&call_meta);
        Ok(summary.finish(self.regions.iter().map(|r| r.entry).collect()))
    }
}

/// Per-row statistics and start deltas, fed one event at a time in file
/// order: one accumulator, for the row being filled, whose statistics go to
/// the sink when the row's last event has been added.
struct RowStats<'a> {
    plan: &'a Plan,
    /// `(first slot, end slot)` of the row being filled.
    bounds: (u64, u64),
    row: usize,
    acc: StatsAccumulator,
    previous_start: i64,
    /// The row's durations, for exact percentiles, while they fit `cap`.
    durations: Vec<i64>,
    cap: usize,
    /// The row's durations once they did not fit (percentiles within
    /// [`histogram::RELATIVE_ERROR`]).
    hist: Option<LogHistogram>,
    /// The statistics of the rows closed so far.
    statistics: Vec<RegionStatistics>,
}

impl<'a> RowStats<'a> {
    fn new(plan: &'a Plan) -> RowStats<'a> {
        RowStats {
            plan,
            bounds: Self::bounds(plan, 0),
            row: 0,
            acc: StatsAccumulator::default(),
            previous_start: 0,
            durations: Vec::new(),
            // An eighth of the walk's budget holds one row's durations.
            cap: (plan.walk.budget / 8 / 8).max(1 << 16),
            hist: None,
            statistics: Vec::with_capacity(plan.rows()),
        }
    }

    /// `(first slot, end slot)` of `row`; past the last row, none.
    fn bounds(plan: &Plan, row: usize) -> (u64, u64) {
        if row >= plan.rows() {
            return (u64::MAX, u64::MAX);
        }
        let region = plan.row_regions[row] as usize;
        let offset = plan.walk.row_offset.get(region).copied().unwrap_or(0);
        (
            offset,
            offset + plan.counts.get(region).copied().unwrap_or(0),
        )
    }

    /// Adds the event at `slot` (slots come in ascending order, each row's
    /// events back to back); returns its start as the file stores it:
    /// absolute for a row's first event, else the gap to the previous one.
    fn add(
        &mut self,
        sink: &mut dyn EventSink,
        slot: u64,
        start: i64,
        duration: i64,
    ) -> Result<i64, Error> {
        while slot >= self.bounds.1 && self.row < self.plan.rows() {
            self.close_row(sink)?;
        }
        let delta = if slot == self.bounds.0 {
            start
        } else {
            start.wrapping_sub(self.previous_start)
        };
        self.previous_start = start;
        self.acc.add(start, duration);
        match &mut self.hist {
            Some(hist) => hist.add(duration),
            None if self.durations.len() < self.cap => self.durations.push(duration),
            None => {
                let mut hist = LogHistogram::default();
                for &d in &self.durations {
                    hist.add(d);
                }
                hist.add(duration);
                self.durations = Vec::new();
                self.hist = Some(hist);
            }
        }
        Ok(delta)
    }

    /// Hands the statistics of the row being filled to the sink and moves
    /// to the next row.
    fn close_row(&mut self, sink: &mut dyn EventSink) -> Result<(), Error> {
        let acc = std::mem::take(&mut self.acc);
        let stats = acc.finish();
        sink.row_stats(&stats)?;
        let calls = self.bounds.1.saturating_sub(self.bounds.0);
        let (p50, p95, p99) = match self.hist.take() {
            Some(hist) => {
                let q = |q| hist.quantile(q, calls, stats.minimum, stats.maximum);
                (q(0.50), q(0.95), q(0.99))
            }
            None => exact_percentiles(&mut self.durations),
        };
        self.statistics.push(RegionStatistics {
            name: self.plan.region_name(self.row),
            calls,
            total_ns: stats.total,
            own_ns: self.plan.row_exclusive(self.row),
            min_ns: stats.minimum,
            max_ns: stats.maximum,
            p50_ns: p50,
            p95_ns: p95,
            p99_ns: p99,
            exact: calls as usize <= self.cap,
        });
        self.durations.clear();
        self.row += 1;
        self.bounds = Self::bounds(self.plan, self.row);
        Ok(())
    }

    /// Closes the rows left (the last one, after its last event); the
    /// statistics of every row.
    fn finish(mut self, sink: &mut dyn EventSink) -> Result<Vec<RegionStatistics>, Error> {
        while self.row < self.plan.rows() {
            self.close_row(sink)?;
        }
        Ok(self.statistics)
    }
}

/// p50, p95 and p99 of `durations` (nearest rank, as numpy's
/// `inverted_cdf`), in linear time; 0s when empty.
fn exact_percentiles(durations: &mut [i64]) -> (i64, i64, i64) {
    let n = durations.len() as u64;
    if n == 0 {
        return (0, 0, 0);
    }
    let at = |q| histogram::rank(q, n) as usize - 1;
    let (i50, i95, i99) = (at(0.50), at(0.95), at(0.99));
    let (_, &mut p50, upper) = durations.select_nth_unstable(i50);
    // p95 and p99 are in the part above p50.
    let p95 = if i95 == i50 {
        p50
    } else {
        *upper.select_nth_unstable(i95 - i50 - 1).1
    };
    let upper = &mut durations[i95 + 1..];
    let p99 = if i99 == i95 {
        p95
    } else {
        *upper.select_nth_unstable(i99 - i95 - 1).1
    };
    (p50, p95, p99)
}

/// Where [`Plan::column_pass`] reads the placed calls.
enum Source<'a> {
    /// The columns of an uncompressed file, starts absolute: the deltas
    /// are written back.
    Columns(&'a dyn ColumnStore),
    /// Packed runs in scratch: every column goes to the sink.
    Packed(&'a mut PackedReader),
}

/// A column pass's failure: the placed calls' I/O (the caller names the
/// file) or the sink's.
enum PassError {
    Io(std::io::Error),
    Sink(Error),
}

impl PassError {
    fn or_io(self, name: impl FnOnce(std::io::Error) -> Error) -> Error {
        match self {
            PassError::Io(e) => name(e),
            PassError::Sink(e) => e,
        }
    }
}

impl From<std::io::Error> for PassError {
    fn from(e: std::io::Error) -> PassError {
        PassError::Io(e)
    }
}

impl From<Error> for PassError {
    fn from(e: Error) -> PassError {
        PassError::Sink(e)
    }
}

/// The event columns of a step of events.
#[derive(Default)]
struct Columns {
    start_ns: Vec<i64>,
    start_deltas: Vec<i64>,
    durations: Vec<i64>,
    call_ids: Vec<i64>,
    parent_ids: Vec<i64>,
    thread_ids: Vec<i64>,
    task_ids: Vec<i64>,
}

impl Columns {
    fn reset(&mut self, len: usize, with_tasks: bool) {
        for c in [
            &mut self.start_ns,
            &mut self.start_deltas,
            &mut self.durations,
            &mut self.call_ids,
            &mut self.parent_ids,
            &mut self.thread_ids,
        ] {
            c.clear();
            c.resize(len, 0);
        }
        self.task_ids.clear();
        self.task_ids.resize(if with_tasks { len } else { 0 }, -1);
    }

    fn put(&mut self, i: usize, p: &PlacedCall) {
        self.start_ns[i] = p.start;
        self.durations[i] = p.duration;
        self.call_ids[i] = p.call;
        self.parent_ids[i] = p.parent;
        self.thread_ids[i] = p.thread as i64;
        if let Some(t) = self.task_ids.get_mut(i) {
            *t = p.task as i64;
        }
    }

    fn slice(&self, with_tasks: bool) -> EventSlice<'_> {
        EventSlice {
            start_ns: &self.start_ns,
            start_deltas: &self.start_deltas,
            durations: &self.durations,
            call_ids: &self.call_ids,
            parent_ids: &self.parent_ids,
            thread_ids: &self.thread_ids,
            task_ids: with_tasks.then_some(&self.task_ids[..]),
        }
    }
}

/// A call as the backward walk meets it.
struct Met<'r> {
    record: &'r Record,
    depth: usize,
    start: i64,
    duration: i64,
    /// The lane's thread (for a task's calls: the thread that first polled
    /// it).
    thread: i32,
    /// The file's task index, -1 for a sync call outside any task.
    task: i32,
}

/// What a backward walk does with each call.
trait Visitor {
    /// What a call's children need of it.
    type Link: Copy;
    /// Visits `call`, whose parent's link is `parent` (none for a root).
    fn visit(&mut self, parent: Option<Self::Link>, call: &Met<'_>) -> std::io::Result<Self::Link>;
}

/// Walks `lane` backwards: every call after its parent (see the module's
/// comment), with the chain of its open ancestors' links.
fn walk_lane<V: Visitor>(
    v: &mut V,
    input: &WalkInput,
    lane: &LaneCut,
    source: &mut Spilled,
) -> std::io::Result<()> {
    let mut chain: Vec<Option<V::Link>> = Vec::new();
    let mut thread = lane.lane.index as i32;
    // A tasks lane: each block's task, met backwards at its depth-0 call;
    // records after the last block belong to the lane's own task.
    let tasks_lane = lane.lane.kind == LaneKind::Tasks;
    let position = |number: u32| input.task_pos.get(number as usize).copied().unwrap_or(-1);
    let mut task = lane.lane.task_index.map_or(-1, position);
    let mut block = lane.tasks.len();
    for segment in lane.segments.iter().rev() {
        // Spilled records come with their times converted (once, by the
        // walk that decodes them); records in memory are converted here.
        let (records, times, below): (&[Record], &[(i64, i64)], u32) = match segment {
            SegmentCut::Memory(chunk, n, below) => (&chunk.records()[..*n], &[], *below),
            SegmentCut::Spilled {
                offset,
                len,
                bytes,
                depth,
            } => {
                let block = source.block(input, (*offset, *len, *bytes))?;
                (&block.records, &block.times, *depth)
            }
        };
        for (i, r) in records.iter().enumerate().rev() {
            // A nested lane's records, at their depth here.
            let placed;
            let r = if below == 0 {
                r
            } else {
                placed = Record {
                    depth: r.depth + below,
                    ..*r
                };
                &placed
            };
            let depth = r.depth as usize;
            if tasks_lane && depth == 0 && block > 0 {
                block -= 1;
                let t = &lane.tasks[block];
                (task, thread) = (position(t.index), t.first_lane as i32);
            }
            let parent = depth
                .checked_sub(1)
                .and_then(|d| chain.get(d).copied().flatten());
            let (start, duration) = match times.get(i) {
                Some(&t) => t,
                None => {
                    let start = input.conv.ns(r.start);
                    (start, input.conv.ns(r.end) - start)
                }
            };
            let met = Met {
                record: r,
                depth,
                start,
                duration,
                thread,
                task,
            };
            let link = v.visit(parent, &met)?;
            chain.resize(depth + 1, None);
            chain[depth] = Some(link);
        }
        if let SegmentCut::Spilled { .. } = segment {
            source.walked()?;
        }
    }
    Ok(())
}

/// A decoded spilled block: its records and each one's start and duration
/// in nanoseconds.
#[derive(Default)]
struct Block {
    records: Vec<Record>,
    times: Vec<(i64, i64)>,
}

/// A decoded block, as a walk sends it to another walk.
type DecodedBlock = std::io::Result<Block>;

/// Where a walk gets the records of spilled segments: each is decoded, and
/// its times converted, once per finalize, by the call paths' walk, which
/// hands each decoded block on to the placing walk (decoding had been a
/// sixth of each walk, converting the times a visible share).
enum Spilled {
    /// Reads and decodes them; with `to`, hands each decoded block on, in
    /// walk order, once walked, taking its buffers back from `back`.
    Decode {
        buffers: crate::spill::Buffers,
        block: Block,
        to: Option<(
            std::sync::mpsc::SyncSender<DecodedBlock>,
            std::sync::mpsc::Receiver<Block>,
        )>,
    },
    /// Receives them from a walk that decodes, in walk order, and gives
    /// each buffer back once walked.
    Receive {
        from: std::sync::mpsc::Receiver<DecodedBlock>,
        back: std::sync::mpsc::Sender<Block>,
        block: Block,
    },
}

impl Spilled {
    /// Decodes by itself.
    fn decode() -> Spilled {
        Spilled::Decode {
            buffers: Default::default(),
            block: Block::default(),
            to: None,
        }
    }

    /// A walk that decodes and one that receives its decoded blocks.
    fn pair() -> (Spilled, Spilled) {
        // Two blocks in flight, so that at most five are decoded at once
        // (each at most a chunk: 1/64 of the memory limit): those, the one
        // each walk is on, and one on its way back.
        let (to, from) = std::sync::mpsc::sync_channel(2);
        let (back, returned) = std::sync::mpsc::channel();
        (
            Spilled::Decode {
                buffers: Default::default(),
                block: Block::default(),
                to: Some((to, returned)),
            },
            Spilled::Receive {
                from,
                back,
                block: Block::default(),
            },
        )
    }

    /// The decoded block of the spilled segment `(offset, len, bytes)`.
    fn block(&mut self, input: &WalkInput, segment: (u64, usize, u32)) -> std::io::Result<&Block> {
        match self {
            Spilled::Decode { buffers, block, to } => {
                if let Err(e) = input
                    .store
                    .read_spilled(segment, buffers, &mut block.records)
                {
                    if let Some((to, _)) = to {
                        let _ = to.send(Err(std::io::Error::new(e.kind(), e.to_string())));
                    }
                    return Err(e);
                }
                block.times.clear();
                block.times.extend(block.records.iter().map(|r| {
                    let start = input.conv.ns(r.start);
                    (start, input.conv.ns(r.end) - start)
                }));
                Ok(block)
            }
            Spilled::Receive { from, block, .. } => {
                *block = from.recv().map_err(|_| {
                    std::io::Error::other("the walk that decodes spilled records ended early")
                })??;
                if block.records.len() != segment.1 || block.times.len() != segment.1 {
                    return Err(std::io::Error::other(
                        "a decoded block of spilled records out of order",
                    ));
                }
                Ok(block)
            }
        }
    }

    /// The last block of [`Spilled::block`] has been walked.
    ///
    /// # Errors
    /// A walk that hands blocks on and finds the other walk gone (it
    /// stopped on an error of its own, which is the one reported): this
    /// walk's result is not needed.
    fn walked(&mut self) -> std::io::Result<()> {
        match self {
            Spilled::Decode {
                block,
                to: Some((to, returned)),
                ..
            } => {
                let spare = returned.try_recv().unwrap_or_default();
                to.send(Ok(std::mem::replace(block, spare)))
                    .map_err(|_| std::io::Error::other("the placing walk stopped"))
            }
            Spilled::Decode { to: None, .. } => Ok(()),
            Spilled::Receive { back, block, .. } => {
                // The other walk may be done with its buffers.
                let _ = back.send(std::mem::take(block));
                Ok(())
            }
        }
    }
}

/// The walk that places the calls: ids, parents, slots, exclusive times
/// and call metadata.
struct Placing<'a, P: Placer> {
    /// Exclusive ns per session region id.
    exclusive: Vec<i64>,
    /// Per session region id, the slot after the next call's (see
    /// [`Plan::place`]).
    cursor: Vec<u64>,
    placer: &'a mut P,
    /// `(slot, metadata entry)` of every call with metadata.
    call_meta: Vec<(u64, Arc<CallMetadata>)>,
    /// The next call's id.
    call: i64,
    /// The metadata of the lane being walked (a thread's lane with any).
    meta: Option<LaneMeta>,
    /// The session's metadata of calls known by region and start.
    keyed: Option<&'a KeyedMeta>,
    matched: Vec<Arc<CallMetadata>>,
    summary: SummaryBuilder,
}

impl<'a, P: Placer> Placing<'a, P> {
    /// Places the calls of `lane`, whose first id is `call_base`.
    fn lane(
        &mut self,
        input: &'a WalkInput,
        lane: &'a LaneCut,
        call_base: i64,
        source: &mut Spilled,
    ) -> std::io::Result<()> {
        let past_lane = |cursor: &mut [u64]| {
            for (region, at) in cursor.iter_mut().enumerate() {
                *at += lane.counts.get(region).copied().unwrap_or(0);
            }
        };
        past_lane(&mut self.cursor);
        self.call = call_base;
        self.meta = match lane.lane.kind {
            LaneKind::Thread => LaneMeta::new(&lane.metadata),
            LaneKind::Tasks => None,
        };
        walk_lane(self, input, lane, source)?;
        past_lane(&mut self.cursor);
        Ok(())
    }
}

impl<P: Placer> Visitor for Placing<'_, P> {
    /// The call's id, region and node in the summary tree.
    type Link = (i64, u32, u32);

    fn visit(
        &mut self,
        parent: Option<(i64, u32, u32)>,
        c: &Met<'_>,
    ) -> std::io::Result<(i64, u32, u32)> {
        let region = c.record.region;
        let node = self
            .summary
            .call(parent.map(|p| p.2), region, c.start, c.duration);
        self.exclusive[region as usize] += c.duration;
        if let Some((_, parent_region, _)) = parent {
            self.exclusive[parent_region as usize] -= c.duration;
        }
        self.cursor[region as usize] -= 1;
        let slot = self.cursor[region as usize];
        if self.meta.is_some() || self.keyed.is_some() {
            self.matched.clear();
            if let Some(meta) = &self.meta {
                meta.matches(c.record, &mut self.matched);
            }
            if let Some(keyed) = self.keyed {
                keyed.matches(c.record, &mut self.matched);
            }
            self.call_meta
                .extend(self.matched.drain(..).map(|m| (slot, m)));
        }
        let call = self.call;
        self.placer.put(PlacedCall {
            slot,
            start: c.start,
            duration: c.duration,
            call,
            parent: parent.map_or(-1, |(id, ..)| id),
            thread: c.thread,
            task: c.task,
            region,
        })?;
        self.call += 1;
        Ok((call, region, node))
    }
}

/// The walk that builds the call paths.
struct Paths(CallPaths);

impl Visitor for Paths {
    /// The call's path.
    type Link = u32;

    fn visit(&mut self, parent: Option<u32>, c: &Met<'_>) -> std::io::Result<u32> {
        let region = c.record.region;
        let path = self.0.call(
            parent,
            c.depth,
            (i64::from(c.thread), i64::from(c.task)),
            region,
            c.start,
            c.duration,
        );
        Ok(path)
    }
}

/// The session's start and the instant of the cut.
#[derive(Clone, Copy)]
pub struct Span {
    pub start: Anchor,
    pub end: Anchor,
}

/// Plans the file of everything `store` holds now: a cut of every lane and
/// the layout of the rows; `metadata` gets the recording's health added.
/// The calls are walked, within `budget` bytes, when the file is written,
/// with scratch files (past the budget) in `dir`.
pub fn plan(
    store: &Arc<Store>,
    table: &RegionTable,
    span: Span,
    mut metadata: Vec<(String, Value)>,
    budget: usize,
    dir: PathBuf,
    capture_source: bool,
) -> Result<Plan, Error> {
    let conv = TickConverter::new(span.start, span.end);
    // Lanes first, then regions: every region a cut record uses is
    // registered (its id was published with Release and read with Acquire
    // before the record was made).
    // A spliced lane is read in the lane it was placed in.
    let lanes: Vec<LaneCut> = lock(&store.lanes)
        .iter()
        .filter(|l| !l.is_spliced())
        .map(|l| l.cut())
        .collect();
    // After the lanes: a keyed entry is added before its call's record.
    let keyed = KeyedMeta::new(&lock(&store.keyed_metadata));
    let (tasks, task_pos) = task_table(&lanes);

    let mut counts = Vec::new();
    let mut dropped = Vec::new();
    let mut dropped_ticks = Vec::new();
    for lane in &lanes {
        for (region, n) in lane.counts.iter().enumerate() {
            bump(&mut counts, region, *n);
        }
        for (region, d) in lane.dropped.iter().enumerate() {
            bump(&mut dropped, region, d.calls);
            bump(&mut dropped_ticks, region, d.ticks);
        }
    }
    let used = counts.len().max(dropped.len());
    let regions = complete_regions(table, used);
    counts.resize(regions.len(), 0);

    let (row_regions, row_offset) = layout(regions.len(), &counts);
    let total = counts.iter().sum::<u64>() as usize;
    let name = |region: usize| regions.get(region).map_or("", |r| r.entry.name);
    let origin = span.start.ns;
    let health = RecordingHealth {
        spilled_bytes: store.spilled_bytes(),
        spill_error: store.spill_stop().map(|s| s.message.clone()),
        dropped: dropped
            .iter()
            .zip(&dropped_ticks)
            .enumerate()
            .filter(|(_, (n, _))| **n > 0)
            .map(|(region, (&calls, &ticks))| DroppedCalls {
                name: name(region).to_owned(),
                num_calls: calls,
                // Durations add up on the linear tick-to-ns map.
                total: conv.ns(span.start.ticks + ticks) - origin,
            })
            .collect(),
        events_stopped_ns: store.first_drop().map(|t| conv.ns(t) - origin),
        // Known to the session, not to the lanes: `session::plan` sets it.
        traced_outside_entrypoints: None,
    };
    metadata.extend(health_metadata(&health, origin));
    Ok(Plan {
        metadata,
        threads: lanes
            .iter()
            .filter(|l| l.lane.kind == LaneKind::Thread)
            .map(|l| thread_info(&l.lane, &conv, origin))
            .collect(),
        tasks: tasks
            .iter()
            .enumerate()
            .map(|(i, t)| task_info(i, t, &conv, origin, name(t.region as usize)))
            .collect(),
        with_task_ids: !tasks.is_empty(),
        row_regions,
        regions,
        files: registry::files(),
        capture_source,
        row_metadata: Default::default(),
        call_paths: None,
        counters: counter_totals(store, table),
        statistics: Vec::new(),
        exclusive: Vec::new(),
        counts,
        health,
        dropped,
        total,
        walk: WalkInput {
            conv,
            store: Arc::clone(store),
            lanes,
            task_pos,
            keyed,
            row_offset,
            budget,
            dir,
        },
    })
}

/// The tasks in the cut, in order of their numbers, and the file's index
/// of each task number. A task whose lane of its own is in the cut before
/// its record (still running, or completing at the cut) is listed with what
/// is known: its start, no end yet.
fn task_table(lanes: &[LaneCut]) -> (Vec<TaskRecord>, Vec<i32>) {
    let mut tasks: Vec<TaskRecord> = lanes.iter().flat_map(|l| l.tasks.iter().copied()).collect();
    for l in lanes {
        if let Some(index) = l.lane.task_index
            && l.tasks.is_empty()
            && l.len > 0
        {
            tasks.push(TaskRecord {
                index,
                start: l.lane.start_ticks,
                end: 0,
                region: u32::MAX,
                first_lane: l.lane.index,
                polls: 0,
                running: 0,
            });
        }
    }
    tasks.sort_by_key(|t| t.index);
    let numbers = tasks.last().map_or(0, |t| t.index as usize + 1);
    let mut pos = vec![-1i32; numbers];
    for (i, t) in tasks.iter().enumerate() {
        pos[t.index as usize] = i as i32;
    }
    (tasks, pos)
}

/// The region table with at least `used` regions. Every id a cut uses is in
/// the table (see `plan`); should one ever not be, it is named
/// `<unregistered region N>` rather than lost or indexed out of bounds.
fn complete_regions(table: &RegionTable, used: usize) -> Vec<RegionInfo> {
    let mut regions = table.snapshot();
    for id in regions.len()..used {
        let entry = registry::intern(&format!("<unregistered region {id}>"));
        regions.push(RegionInfo::new(entry, "", 0));
    }
    regions
}

/// The `/metadata` entries that say what a run did not keep: written only
/// when something was spilled, failed or dropped.
fn health_metadata(health: &RecordingHealth, origin_ns: i64) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = Vec::new();
    if health.spilled_bytes > 0 {
        out.push(("spilled_bytes".into(), (health.spilled_bytes as i64).into()));
    }
    if let Some(error) = &health.spill_error {
        out.push(("spill_error".into(), error.clone().into()));
    }
    if !health.dropped.is_empty() {
        let total: u64 = health.dropped.iter().map(|d| d.num_calls).sum();
        out.push(("dropped_calls".into(), (total as i64).into()));
        let by_region: Vec<String> = health
            .dropped
            .iter()
            .map(|d| {
                format!(
                    "{}: {{\"calls\": {}, \"total_ns\": {}}}",
                    json_string(&d.name),
                    d.num_calls,
                    d.total
                )
            })
            .collect();
        out.push((
            "dropped_calls_by_region".into(),
            format!("{{{}}}", by_region.join(", ")).into(),
        ));
    }
    if let Some(ns) = health.events_stopped_ns {
        out.push(("events_stopped_time_ns".into(), (origin_ns + ns).into()));
    }
    out
}

/// The rows (the session region ids of the regions with calls, in
/// registration order) and each region's first slot (by session id).
fn layout(regions: usize, counts: &[u64]) -> (Vec<u32>, Vec<u64>) {
    let used = counts.iter().filter(|&&n| n > 0).count();
    let mut rows = Vec::with_capacity(used);
    let mut row_offset = vec![0u64; regions];
    let mut offset = 0u64;
    for (region, (&count, first)) in counts.iter().zip(&mut row_offset).enumerate() {
        if count > 0 {
            *first = offset;
            rows.push(region as u32);
            offset += count;
        }
    }
    (rows, row_offset)
}

fn task_info(
    index: usize,
    t: &TaskRecord,
    conv: &TickConverter,
    origin_ns: i64,
    name: &str,
) -> TaskInfo {
    let created = conv.ns(t.start);
    let running = conv.ns(t.start + t.running) - created;
    // A task still running at the cut has no end yet (-1).
    let done = (t.end != 0).then(|| conv.ns(t.end));
    TaskInfo {
        index: index as i64,
        thread_index: t.first_lane as i64,
        created_ns: created - origin_ns,
        done_ns: done.map_or(-1, |d| d - origin_ns),
        steps: t.polls as i64,
        running_ns: running,
        suspended_ns: done.map_or(0, |d| (d - created - running).max(0)),
        kind: "future".to_owned(),
        name: name.to_owned(),
        coro_name: name.to_owned(),
    }
}

fn thread_info(lane: &Lane, conv: &TickConverter, origin_ns: i64) -> ThreadInfo {
    let exit = *lock(&lane.exit);
    ThreadInfo {
        index: lane.index as i64,
        ident: lane.ident,
        native_id: lane.native_id,
        daemon: 0,
        start_ns: conv.ns(lane.start_ticks) - origin_ns,
        end_ns: exit.map_or(-1, |(t, _)| conv.ns(t) - origin_ns),
        cpu_ns: lane.cpu_ns(),
        name: lane.name.clone(),
    }
}

/// The file of an aggregation-mode session: one row per region with calls
/// (threads summed), in registration order.
pub struct AggregatePlan {
    pub metadata: Vec<(String, Value)>,
    /// The region of each row, by name.
    pub names: Vec<&'static str>,
    /// `region_id` is the row's index in `names`.
    pub rows: Vec<AggregateRow>,
    /// Calls per session region id.
    pub counts: Vec<u64>,
    pub summary: Summary,
    /// Per region, the counters (see [`Plan::counters`]).
    pub counters: Vec<RegionCounters>,
}

impl AggregatePlan {
    /// The statistics of each row (no percentiles: the calls' durations
    /// were not kept).
    pub fn statistics(&self) -> Vec<RegionStatistics> {
        self.rows
            .iter()
            .zip(&self.names)
            .map(|(row, &name)| RegionStatistics {
                name,
                calls: row.num_calls,
                total_ns: row.total,
                own_ns: row.exclusive,
                min_ns: row.minimum,
                max_ns: row.maximum,
                p50_ns: 0,
                p95_ns: 0,
                p99_ns: 0,
                exact: false,
            })
            .collect()
    }
}

/// Plans the aggregate file of everything `store`'s threads added up so far.
pub fn plan_aggregate(
    store: &Arc<Store>,
    table: &RegionTable,
    span: Span,
    metadata: Vec<(String, Value)>,
) -> AggregatePlan {
    let conv = TickConverter::new(span.start, span.end);
    let ns = |ticks: u64| conv.ns(span.start.ticks.wrapping_add(ticks)) - span.start.ns;
    // Tables first, then regions: every region a table counts is registered.
    let tables: Vec<Arc<AggTable>> = lock(&store.lanes)
        .iter()
        .filter_map(|l| lock(&l.aggregates).clone())
        .collect();
    let mut sums: Vec<(u64, u128, u64, u64, i128)> = Vec::new();
    for t in &tables {
        for (region, e) in t.entries.iter().enumerate() {
            let count = e.count.load(Ordering::Relaxed);
            if count == 0 {
                continue;
            }
            if sums.len() <= region {
                sums.resize(region + 1, (0, 0, u64::MAX, 0, 0));
            }
            let s = &mut sums[region];
            s.0 += count;
            s.1 += e.total.load(Ordering::Relaxed) as u128;
            s.2 = s.2.min(e.min.load(Ordering::Relaxed));
            s.3 = s.3.max(e.max.load(Ordering::Relaxed));
            s.4 += e.exclusive.load(Ordering::Relaxed) as i64 as i128;
        }
    }
    let regions = complete_regions(table, sums.len());
    let mut counts = vec![0u64; regions.len()];
    let mut names = Vec::new();
    let mut rows = Vec::new();
    let mut summary = SummaryBuilder::with_capacity(sums.len());
    for (region, &(calls, total, min, max, own)) in sums.iter().enumerate() {
        if calls == 0 {
            continue;
        }
        counts[region] = calls;
        // Sums of ticks convert as durations do (the map is linear); a sum
        // past u64 ticks is clamped.
        let total_ns = ns(u64::try_from(total).unwrap_or(u64::MAX));
        let own_ns = ns(u64::try_from(own.max(0)).unwrap_or(u64::MAX));
        summary.totals(region as u32, calls, total_ns, own_ns);
        rows.push(AggregateRow {
            region_id: names.len() as u32,
            rank: 0,
            num_calls: calls,
            total: total_ns,
            exclusive: own_ns,
            minimum: ns(min),
            maximum: ns(max),
        });
        names.push(regions.get(region).map_or("", |r| r.entry.name));
    }
    AggregatePlan {
        metadata,
        names,
        rows,
        counts,
        summary: summary.finish(regions.iter().map(|r| r.entry).collect()),
        counters: counter_totals(store, table),
    }
}

/// Per region with counted calls, in session region id order, the counters
/// every thread of `store` added up (see `crate::counters`); empty if the
/// session counts nothing.
pub fn counter_totals(store: &Store, table: &RegionTable) -> Vec<RegionCounters> {
    let Some(set) = store.counters() else {
        return Vec::new();
    };
    let width = set.width();
    // Tables first, then regions: every region a table counts is registered.
    let tables: Vec<Arc<CounterTable>> = lock(&store.counter_tables).clone();
    let mut sums: Vec<Vec<u64>> = Vec::new();
    for t in &tables {
        for region in 0..t.regions() {
            let Some(row) = t.row(region) else { continue };
            if row[0].load(Ordering::Relaxed) == 0 {
                continue;
            }
            if sums.len() <= region {
                sums.resize(region + 1, vec![0; 1 + 2 * width]);
            }
            for (s, v) in sums[region].iter_mut().zip(row) {
                *s = s.wrapping_add(v.load(Ordering::Relaxed));
            }
        }
    }
    let regions = complete_regions(table, sums.len());
    sums.iter()
        .enumerate()
        .filter(|(_, s)| s[0] > 0)
        .map(|(region, s)| RegionCounters {
            name: regions.get(region).map_or("", |r| r.entry.name).to_owned(),
            rank: 0,
            calls: s[0],
            event_names: set.names.clone(),
            inclusive: s[1..=width].to_vec(),
            // Own: inclusive minus the direct children's inclusive.
            own: (0..width)
                .map(|i| s[1 + i].wrapping_sub(s[1 + width + i]))
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    //! The backward walk on hand-made lanes: parents across chunk edges,
    //! and a tasks lane's blocks (issue 29, item 5).

    use super::*;
    use crate::lane::{Lane, LaneCut, SegmentCut, TaskRecord};
    use crate::options::OnSpillFailure;
    use crate::record::{Chunk, Record};
    use crate::store::{Limits, Store};

    /// Every call the walk meets: `(region, parent's region, start, thread,
    /// task)`, in the order met.
    #[derive(Default)]
    struct Log(Vec<(u32, Option<u32>, i64, i32, i32)>);

    impl Visitor for Log {
        type Link = u32;
        fn visit(&mut self, parent: Option<u32>, c: &Met<'_>) -> std::io::Result<u32> {
            self.0
                .push((c.record.region, parent, c.start, c.thread, c.task));
            Ok(c.record.region)
        }
    }

    /// A call of `region` from `start` to `end` at `depth`.
    fn r(region: u32, start: u64, end: u64, depth: u32) -> Record {
        Record {
            start,
            end,
            region,
            depth,
        }
    }

    fn chunk(records: &[Record]) -> SegmentCut {
        let chunk = Arc::new(Chunk::new(records.len()));
        for (i, record) in records.iter().enumerate() {
            // SAFETY: this thread is the chunk's only writer; indices in order.
            unsafe { chunk.push(i, *record) };
        }
        SegmentCut::Memory(chunk, records.len(), 0)
    }

    fn cut(lane: Lane, segments: Vec<SegmentCut>, tasks: Vec<TaskRecord>) -> LaneCut {
        LaneCut {
            lane: Arc::new(lane),
            segments,
            tasks,
            counts: Vec::new(),
            dropped: Vec::new(),
            len: 0,
            metadata: Vec::new(),
        }
    }

    /// A session from tick 0 to 10^6; two tasks numbered 0 and 1 at file
    /// positions 5 and 7.
    fn input() -> WalkInput {
        let start = Anchor { ticks: 0, ns: 0 };
        let end = Anchor {
            ticks: 1_000_000,
            ns: 1_000_000,
        };
        let limits = Limits {
            memory: 1 << 20,
            disk: 0,
            on_failure: OnSpillFailure::KeepInMemory,
            aggregate: false,
            counters: None,
        };
        WalkInput {
            conv: TickConverter::new(start, end),
            store: Store::new(limits, std::env::temp_dir()),
            lanes: Vec::new(),
            task_pos: vec![5, 7],
            keyed: None,
            row_offset: Vec::new(),
            budget: 0,
            dir: std::env::temp_dir(),
        }
    }

    #[test]
    fn parents_are_found_across_chunk_edges() {
        // a [ b [ c ], d ], e: stored in end order, depth = calls open at
        // the start; cut into chunks so that a child and its parent, and a
        // parent and its own parent, sit in different chunks.
        let (a, b, c, d, e) = (1, 2, 3, 4, 5);
        let lane = cut(
            Lane::for_current_thread(3),
            vec![
                chunk(&[r(c, 20, 30, 2)]),
                chunk(&[r(b, 10, 40, 1), r(d, 50, 60, 1)]),
                chunk(&[r(a, 0, 100, 0)]),
                chunk(&[r(e, 200, 300, 0)]),
            ],
            Vec::new(),
        );
        let mut log = Log::default();
        walk_lane(&mut log, &input(), &lane, &mut Spilled::decode()).unwrap();
        let met: Vec<(u32, Option<u32>)> = log.0.iter().map(|m| (m.0, m.1)).collect();
        // Backwards: every call after its parent.
        assert_eq!(
            met,
            [
                (e, None),
                (a, None),
                (d, Some(a)),
                (b, Some(a)),
                (c, Some(b))
            ]
        );
        assert!(log.0.iter().all(|m| m.3 == 3 && m.4 == -1), "{:?}", log.0);
        assert_eq!(log.0[4].2, input().conv.ns(20), "c's start, converted");
    }

    #[test]
    fn a_deeper_call_after_shallower_ones_gets_the_latest_parent() {
        // x [ y ], then x2 [ y2 [ z2 ] ]: z2's parent is y2, not y (the
        // chain is cut back when a shallower call is met).
        let (x, y, x2, y2, z2) = (1, 2, 3, 4, 5);
        let lane = cut(
            Lane::for_current_thread(0),
            vec![
                chunk(&[r(y, 1, 2, 1), r(x, 0, 3, 0), r(z2, 6, 7, 2)]),
                chunk(&[r(y2, 5, 8, 1), r(x2, 4, 9, 0)]),
            ],
            Vec::new(),
        );
        let mut log = Log::default();
        walk_lane(&mut log, &input(), &lane, &mut Spilled::decode()).unwrap();
        let parents: Vec<(u32, Option<u32>)> = log.0.iter().map(|m| (m.0, m.1)).collect();
        assert_eq!(
            parents,
            [
                (x2, None),
                (y2, Some(x2)),
                (z2, Some(y2)),
                (x, None),
                (y, Some(x))
            ]
        );
    }

    #[test]
    fn a_tasks_lane_gives_each_block_its_task_and_first_thread() {
        // Two blocks: task 0 (first polled by lane 4) with one inner call,
        // then task 1 (first polled by lane 6); the depth-0 call of each
        // block is its last record.
        let task = |index, first_lane| TaskRecord {
            index,
            start: 0,
            end: 0,
            region: 9,
            first_lane,
            polls: 1,
            running: 0,
        };
        let lane = cut(
            Lane::for_tasks(2, None),
            vec![
                chunk(&[r(1, 1, 2, 1), r(9, 0, 3, 0)]),
                chunk(&[r(9, 10, 20, 0)]),
            ],
            vec![task(0, 4), task(1, 6)],
        );
        let mut log = Log::default();
        let input = input();
        walk_lane(&mut log, &input, &lane, &mut Spilled::decode()).unwrap();
        let ns = |t| input.conv.ns(t);
        // (region, parent, start, thread, task position in the file)
        assert_eq!(
            log.0,
            [
                (9, None, ns(10), 6, 7),
                (9, None, ns(0), 4, 5),
                (1, Some(9), ns(1), 4, 5),
            ]
        );
    }
}
