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
//! PlacedCall calls (placement.rs) go either straight into an uncompressed
//! file's columns ([`Plan::write_direct`]), or to buckets of consecutive
//! slots that [`Plan::emit`] then hands to a sink in file order.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::callmatch::{self, LaneMeta};
use crate::clock::{Anchor, TickConverter};
use crate::error::Error;
use crate::histogram::{self, LogHistogram};
use crate::lane::{AggTable, Lane, LaneCut, LaneKind, SegmentCut, TaskRecord, bump};
use crate::metadata::json_string;
use crate::placement::{Buckets, DirectRuns, PLACED_BYTES, PlacedCall, Placer, SlotRun};
use crate::profile::{
    AggregateRow, CallPath, DroppedCalls, MetaValue, RecordingHealth, RegionStatistics,
    StatsAccumulator, TaskInfo, ThreadInfo,
};
use crate::record::Record;
use crate::registry::{self, RegionInfo, RegionTable};
use crate::sink::{self, ColumnStore, DURATIONS, EventSink, EventSlice, IndexRow, START_DELTAS};
use crate::store::Store;
use crate::summary::{CallPaths, Summary, SummaryBuilder};
use crate::sync::lock;
use crate::value::{self, CallMetadata};

/// Everything needed to write a session's file: the layout of its rows,
/// and the cut of every lane, walked when the file is written.
pub(crate) struct Plan {
    pub metadata: Vec<(String, MetaValue)>,
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
}

/// What the backward walk reads.
struct WalkInput {
    conv: TickConverter,
    store: Arc<Store>,
    lanes: Vec<LaneCut>,
    /// The file's task index of each task number (-1: not in the file).
    task_pos: Vec<i32>,
    /// First slot of each region's row, by session region id.
    row_offset: Vec<u64>,
    /// Bytes the placement may hold in memory.
    budget: usize,
    dir: PathBuf,
}

impl Plan {
    /// Completed calls per region, by session region id: recorded or dropped.
    pub(crate) fn counts_with_dropped(&self) -> Vec<u64> {
        let mut counts = self.counts.clone();
        for (region, n) in self.dropped.iter().enumerate() {
            bump(&mut counts, region, *n);
        }
        counts
    }

    /// Number of index rows.
    pub(crate) fn rows(&self) -> usize {
        self.row_regions.len()
    }

    /// The name of the region of index row `row`: the file's region name
    /// `row` (the name the process interned: no copy).
    pub(crate) fn region_name(&self, row: usize) -> &'static str {
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
    pub(crate) fn index_row(&self, row: usize) -> IndexRow<'_> {
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

    /// Whether [`Plan::emit`] goes through a scratch file.
    pub(crate) fn buckets_need_scratch(&self) -> bool {
        Buckets::needs_scratch(self.total, self.walk.budget)
    }

    /// Number of events.
    pub(crate) fn len(&self) -> usize {
        self.total
    }

    /// Whether the `task_ids` column is written.
    pub(crate) fn with_task_ids(&self) -> bool {
        self.with_task_ids
    }

    fn io_error(&self) -> impl Fn(std::io::Error) -> Error + use<> {
        let dir = self.walk.dir.clone();
        move |e| Error::io(dir.clone(), e)
    }

    /// Hands every event to `sink` in file order, through buckets of
    /// consecutive slots (in memory, or a scratch file past the budget);
    /// the rows' statistics go to the sink as each row is completed;
    /// returns the summary tree.
    pub(crate) fn emit(&mut self, sink: &mut dyn EventSink) -> Result<Summary, Error> {
        let io = self.io_error();
        let mut placement =
            Buckets::new(self.total, self.walk.budget, &self.walk.dir).map_err(&io)?;
        let summary = self.place(&mut placement).map_err(&io)?;
        placement.flush_all().map_err(&io)?;
        let mut stats = RowStats::new(self);
        let mut placed = Vec::new();
        let mut cols = Columns::default();
        for bucket in 0..placement.buckets() {
            let range = placement.range(bucket);
            placement.read(bucket, &mut placed).map_err(&io)?;
            cols.reset(range.len(), self.with_task_ids);
            for p in &placed {
                cols.put(p.slot as usize - range.start, p);
            }
            for (i, slot) in range.clone().enumerate() {
                cols.start_deltas[i] =
                    stats.add(sink, slot as u64, cols.start_ns[i], cols.durations[i])?;
            }
            sink.events(range.start, &cols.slice(self.with_task_ids))?;
        }
        self.statistics = stats.finish(sink)?;
        Ok(summary)
    }

    /// Writes every event straight into the columns of an uncompressed file
    /// (no scratch round trip), then turns the starts into per-row deltas
    /// and computes the statistics (handed to `stats_sink` row by row) in
    /// one pass over the written columns.
    pub(crate) fn write_direct(
        &mut self,
        columns: &dyn ColumnStore,
        stats_sink: &mut dyn EventSink,
    ) -> Result<Summary, Error> {
        let budget = self.walk.budget;
        let active_regions = self.rows().max(1);
        let mut direct = DirectRuns {
            columns,
            runs: vec![SlotRun::default(); self.regions.len()],
            run_len: (budget / PLACED_BYTES / active_regions).clamp(64, 8192),
            with_tasks: self.with_task_ids,
        };
        let summary = self.place(&mut direct).map_err(|e| columns.error(e))?;
        direct.flush_all().map_err(|e| columns.error(e))?;
        let mut stats = RowStats::new(self);
        let (mut starts, mut durations) = (Vec::new(), Vec::new());
        let step = (budget / 24).clamp(4096, 1 << 20);
        let mut first = 0usize;
        while first < self.total {
            let len = step.min(self.total - first);
            let read = |column, out: &mut Vec<i64>| columns.read(column, first, len, out);
            read(START_DELTAS, &mut starts).map_err(|e| columns.error(e))?;
            read(DURATIONS, &mut durations).map_err(|e| columns.error(e))?;
            for i in 0..len {
                starts[i] = stats.add(stats_sink, (first + i) as u64, starts[i], durations[i])?;
            }
            columns
                .write(START_DELTAS, first, &starts)
                .map_err(|e| columns.error(e))?;
            first += len;
        }
        self.statistics = stats.finish(stats_sink)?;
        Ok(summary)
    }

    /// The backward walk over every lane (threads' and tasks'): every call
    /// goes to `placer` with its slot; sets the rows' exclusive totals and
    /// returns the summary tree.
    fn place(&mut self, placer: &mut dyn Placer) -> std::io::Result<Summary> {
        let input = &self.walk;
        let mut walk = Walk {
            conv: &input.conv,
            store: &input.store,
            // Every region with calls has a node at least.
            summary: SummaryBuilder::with_capacity(self.row_regions.len()),
            paths: CallPaths::default(),
            exclusive: vec![0i64; self.regions.len()],
            placer,
            call_meta: Vec::new(),
        };
        // Each lane's calls of a region fill its part of the row backwards:
        // `cursor` goes from the end of the lane's part to its start, then
        // past it to the end (the next lane's start).
        let mut cursor = input.row_offset.clone();
        let past_lane = |cursor: &mut [u64], lane: &LaneCut| {
            for (region, at) in cursor.iter_mut().enumerate() {
                *at += lane.counts.get(region).copied().unwrap_or(0);
            }
        };
        let mut call_base = 0i64;
        for lane in &input.lanes {
            past_lane(&mut cursor, lane);
            walk.lane(lane, call_base, &mut cursor, &input.task_pos)?;
            past_lane(&mut cursor, lane);
            call_base += lane.len as i64;
        }
        let Walk {
            summary,
            paths,
            exclusive,
            mut call_meta,
            ..
        } = walk;
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

/// The event columns of one bucket.
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

/// An ancestor of the calls being walked.
#[derive(Clone, Copy)]
struct Link {
    call: i64,
    region: u32,
    node: u32,
    /// The call's path in `Walk::paths`.
    path: u32,
}

/// The session's start and the instant of the cut.
#[derive(Clone, Copy)]
pub(crate) struct Span {
    pub start: Anchor,
    pub end: Anchor,
}

/// Plans the file of everything `store` holds now: a cut of every lane and
/// the layout of the rows; `metadata` gets the recording's health added.
/// The calls are walked, within `budget` bytes, when the file is written,
/// with scratch files (past the budget) in `dir`.
pub(crate) fn plan(
    store: &Arc<Store>,
    table: &RegionTable,
    span: Span,
    mut metadata: Vec<(String, MetaValue)>,
    budget: usize,
    dir: PathBuf,
    capture_source: bool,
) -> Result<Plan, Error> {
    let conv = TickConverter::new(span.start, span.end);
    // Lanes first, then regions: every region a cut record uses is
    // registered (its id was published with Release and read with Acquire
    // before the record was made).
    let lanes: Vec<LaneCut> = lock(&store.lanes).iter().map(|l| l.cut()).collect();
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
                calls,
                // Durations add up on the linear tick-to-ns map.
                total_ns: conv.ns(span.start.ticks + ticks) - origin,
            })
            .collect(),
        events_stopped_ns: store.first_drop().map(|t| conv.ns(t) - origin),
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
        if let Some(index) = l.lane.task_index {
            if l.tasks.is_empty() && l.len > 0 {
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
fn health_metadata(health: &RecordingHealth, origin_ns: i64) -> Vec<(String, MetaValue)> {
    let mut out: Vec<(String, MetaValue)> = Vec::new();
    if health.spilled_bytes > 0 {
        out.push(("spilled_bytes".into(), (health.spilled_bytes as i64).into()));
    }
    if let Some(error) = &health.spill_error {
        out.push(("spill_error".into(), error.clone().into()));
    }
    if !health.dropped.is_empty() {
        let total: u64 = health.dropped.iter().map(|d| d.calls).sum();
        out.push(("dropped_calls".into(), (total as i64).into()));
        let by_region: Vec<String> = health
            .dropped
            .iter()
            .map(|d| {
                format!(
                    "{}: {{\"calls\": {}, \"total_ns\": {}}}",
                    json_string(&d.name),
                    d.calls,
                    d.total_ns
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

/// The state of the backward walk over every lane.
struct Walk<'a> {
    conv: &'a TickConverter,
    store: &'a Store,
    summary: SummaryBuilder,
    /// The call paths of every lane, stored in the file.
    paths: CallPaths,
    /// Exclusive ns per session region id.
    exclusive: Vec<i64>,
    placer: &'a mut dyn Placer,
    /// `(slot, metadata entry)` of every call with metadata.
    call_meta: Vec<(u64, Arc<CallMetadata>)>,
}

impl Walk<'_> {
    /// Walks one lane backwards; `cursor[region]` is one past the last slot
    /// of this lane's part of the region's row.
    fn lane(
        &mut self,
        lane: &LaneCut,
        call_base: i64,
        cursor: &mut [u64],
        task_pos: &[i32],
    ) -> std::io::Result<()> {
        let mut chain: Vec<Option<Link>> = Vec::new();
        let mut buffer = Vec::new();
        let mut call = call_base;
        let mut thread = lane.lane.index as i32;
        // A tasks lane: each block's task, met backwards at its depth-0
        // call; records after the last block belong to the lane's own task.
        let tasks_lane = lane.lane.kind == LaneKind::Tasks;
        let position = |number: u32| task_pos.get(number as usize).copied().unwrap_or(-1);
        let mut task = lane.lane.task_index.map_or(-1, position);
        let mut block = lane.tasks.len();
        let meta = match lane.lane.kind {
            LaneKind::Thread => LaneMeta::new(&lane.metadata),
            LaneKind::Tasks => None,
        };
        let mut matched = Vec::new();
        for segment in lane.segments.iter().rev() {
            let records: &[Record] = match segment {
                SegmentCut::Memory(chunk, n) => &chunk.records()[..*n],
                SegmentCut::Spilled { offset, len } => {
                    self.store.read_spilled(*offset, *len, &mut buffer)?;
                    &buffer
                }
            };
            for r in records.iter().rev() {
                let depth = r.depth as usize;
                if tasks_lane && depth == 0 && block > 0 {
                    block -= 1;
                    let t = &lane.tasks[block];
                    (task, thread) = (position(t.index), t.first_lane as i32);
                }
                let parent = depth
                    .checked_sub(1)
                    .and_then(|d| chain.get(d).copied().flatten());
                let start = self.conv.ns(r.start);
                let duration = self.conv.ns(r.end) - start;
                let node = self
                    .summary
                    .call(parent.map(|p| p.node), r.region, start, duration);
                let path = self.paths.call(
                    parent.map(|p| p.path),
                    depth,
                    (i64::from(thread), i64::from(task)),
                    r.region,
                    start,
                    duration,
                );
                self.exclusive[r.region as usize] += duration;
                if let Some(p) = parent {
                    self.exclusive[p.region as usize] -= duration;
                }
                cursor[r.region as usize] -= 1;
                if let Some(meta) = &meta {
                    matched.clear();
                    meta.matches(r, &mut matched);
                    let slot = cursor[r.region as usize];
                    self.call_meta.extend(matched.drain(..).map(|m| (slot, m)));
                }
                self.placer.put(PlacedCall {
                    slot: cursor[r.region as usize],
                    start,
                    duration,
                    call,
                    parent: parent.map_or(-1, |p| p.call),
                    thread,
                    task,
                    region: r.region,
                    _pad: 0,
                })?;
                chain.resize(depth + 1, None);
                chain[depth] = Some(Link {
                    call,
                    region: r.region,
                    node,
                    path,
                });
                call += 1;
            }
        }
        Ok(())
    }
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
pub(crate) struct AggregatePlan {
    pub metadata: Vec<(String, MetaValue)>,
    /// The region of each row, by name.
    pub names: Vec<&'static str>,
    /// `region_id` is the row's index in `names`.
    pub rows: Vec<AggregateRow>,
    /// Calls per session region id.
    pub counts: Vec<u64>,
    pub summary: Summary,
}

impl AggregatePlan {
    /// The statistics of each row (no percentiles: the calls' durations
    /// were not kept).
    pub(crate) fn statistics(&self) -> Vec<RegionStatistics> {
        self.rows
            .iter()
            .zip(&self.names)
            .map(|(row, &name)| RegionStatistics {
                name,
                calls: row.calls,
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
pub(crate) fn plan_aggregate(
    store: &Arc<Store>,
    table: &RegionTable,
    span: Span,
    metadata: Vec<(String, MetaValue)>,
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
            calls,
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
    }
}
