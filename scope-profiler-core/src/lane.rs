//! Lanes: the records one thread made during one session, in order, some in
//! memory and some spilled to the scratch file, and the one routine that
//! counts them (for `num_calls` and for the cut `finalize` writes).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::clock::ticks;
use crate::lanemeta::{MetaBlock, MetaEntry};
use crate::open::OpenStack;
use crate::record::{Chunk, Record};
use crate::sync::lock;
use crate::value::CallMetadata;

/// A run of a lane's records, in memory or in the scratch file.
#[derive(Clone)]
pub enum Segment {
    Memory(Arc<Chunk>),
    /// `len` records compressed into `bytes` bytes at `offset` of the
    /// scratch file (a `spill` block).
    Spilled {
        offset: u64,
        len: usize,
        bytes: u32,
    },
    /// The records of another lane (a large frame's: a future first polled
    /// inside a task, see `thread`), all finished, placed here as if they
    /// had been recorded here, `depth` calls deep. That lane stays in the
    /// store (its chunks spill as any lane's) but is no lane of the file
    /// ([`Lane::is_spliced`]).
    Nested {
        lane: Arc<Lane>,
        depth: u32,
    },
}

/// One async call: from its first poll to its completion or cancellation.
/// Its calls (itself at depth 0, last) are a block of records in a tasks
/// lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskRecord {
    /// The task's number in the session, in order of first polls.
    pub index: u32,
    pub start: u64,
    pub end: u64,
    pub region: u32,
    /// Lane index of the thread that first polled it.
    pub first_lane: u32,
    pub polls: u64,
    /// Ticks spent inside polls.
    pub running: u64,
}

/// One thread's per-region totals in aggregation mode, by session region
/// id: written by that thread only, read by cuts. Relaxed atomics, each
/// field a plain load and store on the recording thread (no read-modify-
/// write is needed with one writer), whole on every target; a cut of a
/// thread still recording may see one field a call ahead of another.
pub struct AggTable {
    pub entries: Box<[AggEntry]>,
}

/// Calls of one region on one thread, in ticks.
pub struct AggEntry {
    pub count: AtomicU64,
    pub total: AtomicU64,
    pub min: AtomicU64,
    pub max: AtomicU64,
    /// Wrapping sum of the calls' durations minus their direct children's.
    pub exclusive: AtomicU64,
}

impl Default for AggEntry {
    fn default() -> AggEntry {
        AggEntry {
            count: AtomicU64::new(0),
            total: AtomicU64::new(0),
            min: AtomicU64::new(u64::MAX),
            max: AtomicU64::new(0),
            exclusive: AtomicU64::new(0),
        }
    }
}

impl AggEntry {
    /// Adds one call (by the table's thread only).
    #[inline(always)]
    pub(crate) fn add(&self, duration: u64, own: u64) {
        let bump = |field: &AtomicU64, f: &dyn Fn(u64) -> u64| {
            field.store(f(field.load(Ordering::Relaxed)), Ordering::Relaxed)
        };
        bump(&self.count, &|c| c + 1);
        bump(&self.total, &|t| t.wrapping_add(duration));
        bump(&self.min, &|m| m.min(duration));
        bump(&self.max, &|m| m.max(duration));
        bump(&self.exclusive, &|e| e.wrapping_add(own));
    }
}

impl AggTable {
    /// A table of `len` regions, with the totals of `from` (a smaller one).
    pub(crate) fn grown(len: usize, from: Option<&AggTable>) -> AggTable {
        let entries: Box<[AggEntry]> = (0..len).map(|_| AggEntry::default()).collect();
        for (new, old) in entries
            .iter()
            .zip(from.iter().flat_map(|t| t.entries.iter()))
        {
            for (n, o) in [
                (&new.count, &old.count),
                (&new.total, &old.total),
                (&new.min, &old.min),
                (&new.max, &old.max),
                (&new.exclusive, &old.exclusive),
            ] {
                n.store(o.load(Ordering::Relaxed), Ordering::Relaxed);
            }
        }
        AggTable { entries }
    }
}

/// One recorder thread's per-region counter totals (see `crate::counters`),
/// by session region id: per region `1 + 2 * width` relaxed atomics,
/// written by that thread only (a load and a store, no read-modify-write),
/// read by `finalize`: the calls, then each counter's inclusive total, then
/// the inclusive totals of the region's calls' direct children (own =
/// inclusive - children, computed when read).
pub struct CounterTable {
    pub width: usize,
    pub values: Box<[AtomicU64]>,
}

impl CounterTable {
    /// A table of `regions` regions, with the totals of `from` (a smaller one).
    pub(crate) fn grown(width: usize, regions: usize, from: Option<&CounterTable>) -> CounterTable {
        let values: Box<[AtomicU64]> = (0..regions * (1 + 2 * width))
            .map(|_| AtomicU64::new(0))
            .collect();
        for (n, o) in values.iter().zip(from.iter().flat_map(|t| t.values.iter())) {
            n.store(o.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        CounterTable { width, values }
    }

    /// Regions the table has room for.
    pub fn regions(&self) -> usize {
        self.values.len() / (1 + 2 * self.width)
    }

    /// Region `region`'s calls, inclusive totals and children's totals
    /// (`None` past the table).
    pub fn row(&self, region: usize) -> Option<&[AtomicU64]> {
        let stride = 1 + 2 * self.width;
        self.values.get(region * stride..(region + 1) * stride)
    }

    /// Adds one call of `region` with its `inclusive` deltas (by the
    /// table's thread only); `false` if the table is too small.
    pub(crate) fn add(&self, region: usize, inclusive: &[u64]) -> bool {
        let Some(row) = self.row(region) else {
            return false;
        };
        add_single_writer(&row[0], 1);
        for (a, &v) in row[1..].iter().zip(inclusive) {
            add_single_writer(a, v);
        }
        true
    }

    /// Adds a child call's inclusive deltas to its parent's region
    /// `region`; `false` if the table is too small.
    pub(crate) fn add_children(&self, region: usize, inclusive: &[u64]) -> bool {
        let Some(row) = self.row(region) else {
            return false;
        };
        for (a, &v) in row[1 + self.width..].iter().zip(inclusive) {
            add_single_writer(a, v);
        }
        true
    }
}

/// Adds `v` to a single-writer counter: a load and a store.
#[inline(always)]
fn add_single_writer(a: &AtomicU64, v: u64) {
    a.store(a.load(Ordering::Relaxed).wrapping_add(v), Ordering::Relaxed)
}

/// What a lane's records are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneKind {
    /// The calls of one thread, outside instrumented futures.
    Thread,
    /// Async calls with everything called while they were polled: one
    /// block of records per task, its depth-0 call last, in the order of
    /// the lane's `tasks`. Either the tasks one thread completed, or one
    /// long task (see `task_index`).
    Tasks,
}

/// Calls of one region that completed but were not kept (the memory limit
/// was reached after spilling stopped), with their summed duration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dropped {
    pub calls: u64,
    pub ticks: u64,
}

/// The records one thread made during one session, shared with the session.
pub struct Lane {
    pub kind: LaneKind,
    /// Dense per-session thread index (the file's `thread_ids`): the
    /// thread's own, or for a tasks lane the thread it belongs to.
    pub index: u32,
    /// For the lane of one long task, its number: the task of records
    /// before its depth-0 call is made.
    pub task_index: Option<u32>,
    pub name: String,
    pub ident: i64,
    pub native_id: i64,
    /// Ticks when the thread first recorded in the session.
    pub start_ticks: u64,
    /// `(ticks, cpu ns)` when the thread exited, if it did.
    pub exit: Mutex<Option<(u64, i64)>>,
    /// The thread's records in order, in memory or spilled to disk.
    /// Lock order: `segments`, then `spilled_counts`.
    pub segments: Mutex<Vec<Segment>>,
    /// Calls per region id among the spilled records.
    pub spilled_counts: Mutex<Vec<u64>>,
    /// For a tasks lane, the task of each block, in order. Lock order:
    /// `tasks`, then `segments`: a block and its task are published together.
    pub tasks: Mutex<Vec<TaskRecord>>,
    /// Calls per region id that were dropped, not recorded.
    pub dropped: Mutex<Vec<Dropped>>,
    /// Metadata for this thread's calls, in the order the scopes ended.
    pub metadata: Mutex<Vec<MetaEntry>>,
    /// The thread's one-value metadata scopes, written without this lock
    /// (see `lanemeta`): the blocks in order, the last one being filled.
    pub meta_blocks: Mutex<Vec<Arc<MetaBlock>>>,
    /// The thread's per-region totals in aggregation mode (replaced by a
    /// larger table as regions appear).
    pub aggregates: Mutex<Option<Arc<AggTable>>>,
    /// A thread lane: its recorder's stack of open calls (the thread's own,
    /// not a task's it polls), for the live server; `None` once the thread
    /// exited. Replaced when the stack grows.
    pub(crate) open: Mutex<Option<Arc<OpenStack>>>,
    /// Whether the lane's records were placed in another lane (a
    /// [`Segment::Nested`] there): then cuts read them there, and only
    /// there. Set under the store's lock of its lanes (`Store::splice`),
    /// which cuts of every lane are taken under too.
    spliced: AtomicBool,
    /// A call of the lane was dropped: its recorder records nothing more
    /// in it (see [`Lane::stop_recording`]).
    stopped: AtomicBool,
}

/// A segment of a lane as it was at a cut: a chunk with the number of its
/// records published then, or a spilled run; each with the depth its
/// records' depths start at (0 but for the records of a nested lane).
pub(crate) enum SegmentCut {
    Memory(Arc<Chunk>, usize, u32),
    Spilled {
        offset: u64,
        len: usize,
        bytes: u32,
        depth: u32,
    },
}

/// A lane as it was at one instant (a consistent cut: records published
/// later are not included), with its calls counted per region.
pub(crate) struct LaneCut {
    pub lane: Arc<Lane>,
    pub segments: Vec<SegmentCut>,
    pub tasks: Vec<TaskRecord>,
    /// Recorded calls per session region id.
    pub counts: Vec<u64>,
    /// Dropped calls per session region id.
    pub dropped: Vec<Dropped>,
    /// Number of records in `segments`.
    pub len: usize,
    /// The lane's call metadata as of the cut.
    pub metadata: Vec<MetaEntry>,
}

impl Lane {
    /// A lane for the calling thread.
    pub(crate) fn for_current_thread(index: u32) -> Lane {
        let thread = std::thread::current();
        let name = thread
            .name()
            .map(str::to_owned)
            .unwrap_or_else(|| format!("thread-{index}"));
        let native_id = crate::platform::native_thread_id();
        Lane::empty(
            LaneKind::Thread,
            index,
            None,
            name,
            thread_ident(thread.id()),
            native_id,
        )
    }

    /// A tasks lane for the thread of lane `index`: the tasks it completes,
    /// or (with `task_index`) one long task.
    pub(crate) fn for_tasks(index: u32, task_index: Option<u32>) -> Lane {
        Lane::empty(LaneKind::Tasks, index, task_index, String::new(), -1, -1)
    }

    /// A lane with nothing recorded yet, starting now.
    fn empty(
        kind: LaneKind,
        index: u32,
        task_index: Option<u32>,
        name: String,
        ident: i64,
        native_id: i64,
    ) -> Lane {
        Lane {
            kind,
            index,
            task_index,
            name,
            ident,
            native_id,
            start_ticks: ticks(),
            exit: Mutex::new(None),
            segments: Mutex::new(Vec::new()),
            spilled_counts: Mutex::new(Vec::new()),
            tasks: Mutex::new(Vec::new()),
            dropped: Mutex::new(Vec::new()),
            metadata: Mutex::new(Vec::new()),
            meta_blocks: Mutex::new(Vec::new()),
            aggregates: Mutex::new(None),
            open: Mutex::new(None),
            spliced: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
        }
    }

    /// A call of this lane was dropped (no room): every later call of it is
    /// dropped too, and counted. Its children, recorded before it, would
    /// otherwise be taken for the children of the next call kept at its
    /// depth, which started after them: without later records they stay at
    /// the lane's end, as the finished children of a call still open at a
    /// cut do.
    pub(crate) fn stop_recording(&self) {
        self.stopped.store(true, Ordering::Relaxed);
    }

    /// Whether a call of this lane was dropped (see [`Lane::stop_recording`]).
    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }

    /// Whether the lane's records are read as part of another lane's (see
    /// [`Segment::Nested`]), not as a lane of their own.
    pub fn is_spliced(&self) -> bool {
        self.spliced.load(Ordering::Acquire)
    }

    /// Marks the lane as placed in another (`Store::splice`, under the
    /// store's lock of its lanes).
    pub(crate) fn set_spliced(&self) {
        self.spliced.store(true, Ordering::Release);
    }

    /// Visits the records held in memory (not spilled), chunk by chunk.
    pub(crate) fn for_each_in_memory(&self, mut f: impl FnMut(&[Record])) {
        for segment in lock(&self.segments).iter() {
            if let Segment::Memory(chunk) = segment {
                f(chunk.records());
            }
        }
    }

    /// Replaces in-memory segment `index` by the spilled block of its
    /// records (`bytes` bytes at `offset`), and counts them among the
    /// spilled calls, in one step for readers.
    pub fn mark_spilled(&self, index: usize, records: &[Record], offset: u64, bytes: u32) {
        let mut segments = lock(&self.segments);
        segments[index] = Segment::Spilled {
            offset,
            len: records.len(),
            bytes,
        };
        let mut counts = lock(&self.spilled_counts);
        for r in records {
            bump(&mut counts, r.region as usize, 1);
        }
    }

    /// Counts a call of `region` lasting `ticks` that was not recorded.
    pub(crate) fn count_dropped(&self, region: u32, ticks: u64) {
        let mut dropped = lock(&self.dropped);
        let region = region as usize;
        if region >= dropped.len() {
            dropped.resize(region + 1, Dropped::default());
        }
        dropped[region].calls += 1;
        dropped[region].ticks += ticks;
    }

    /// The lane as it is now, counted: the only routine that counts a lane's
    /// calls. `segments` and `spilled_counts` are read under both locks
    /// (taken in the writer's order), so a chunk being spilled is counted
    /// exactly once, and counts never go down between two cuts.
    pub(crate) fn cut(self: &Arc<Self>) -> LaneCut {
        // A tasks lane's blocks are published with their task under `tasks`.
        let tasks = lock(&self.tasks);
        let mut segments = Vec::new();
        let mut counts = Vec::new();
        let mut dropped = lock(&self.dropped).clone();
        self.cut_segments(0, &mut segments, &mut counts, &mut dropped);
        let mut len = 0;
        for s in &segments {
            match s {
                SegmentCut::Memory(chunk, n, _) => {
                    for r in &chunk.records()[..*n] {
                        bump(&mut counts, r.region as usize, 1);
                    }
                    len += n;
                }
                SegmentCut::Spilled { len: n, .. } => len += n,
            }
        }
        LaneCut {
            lane: Arc::clone(self),
            segments,
            tasks: tasks.clone(),
            counts,
            dropped,
            len,
            metadata: self.metadata_now(),
        }
    }

    /// The lane's call metadata now: its entries, and its blocks' scopes
    /// published so far.
    fn metadata_now(&self) -> Vec<MetaEntry> {
        let mut out = lock(&self.metadata).clone();
        for block in lock(&self.meta_blocks).iter() {
            block.entries(&mut out);
        }
        out
    }

    /// Appends the lane's segments as they are now to `out`, at `depth`,
    /// those of its nested lanes in their place; adds the spilled calls to
    /// `counts` (in memory ones are counted from the cut) and a nested
    /// lane's dropped calls to `dropped`.
    fn cut_segments(
        &self,
        depth: u32,
        out: &mut Vec<SegmentCut>,
        counts: &mut Vec<u64>,
        dropped: &mut Vec<Dropped>,
    ) {
        let segments = lock(&self.segments);
        for (region, n) in lock(&self.spilled_counts).iter().enumerate() {
            bump(counts, region, *n);
        }
        for s in segments.iter() {
            match s {
                Segment::Memory(c) => {
                    out.push(SegmentCut::Memory(Arc::clone(c), c.records().len(), depth))
                }
                Segment::Spilled { offset, len, bytes } => out.push(SegmentCut::Spilled {
                    offset: *offset,
                    len: *len,
                    bytes: *bytes,
                    depth,
                }),
                Segment::Nested { lane, depth: more } => {
                    for (region, d) in lock(&lane.dropped).iter().enumerate() {
                        if region >= dropped.len() {
                            dropped.resize(region + 1, Dropped::default());
                        }
                        dropped[region].calls += d.calls;
                        dropped[region].ticks += d.ticks;
                    }
                    lane.cut_segments(depth + more, out, counts, dropped);
                }
            }
        }
    }

    /// Lets go of every record (the session ended): the lane may outlive
    /// the session in an idle thread's recorder.
    pub fn release(&self) {
        for segment in std::mem::take(&mut *lock(&self.segments)) {
            if let Segment::Memory(chunk) = segment {
                // An idle thread may still hold its current chunk: its pages
                // go back to the OS now, not when the thread records again.
                // A chunk only the lane holds is dropped here instead (its
                // mapping may be kept, warm, for the next session).
                if Arc::strong_count(&chunk) > 1 {
                    // SAFETY: the session ended and its lanes are released
                    // here, after its last cut was written and dropped: no
                    // reader of these records is left, and the thread that
                    // may push more reads none of them.
                    unsafe { chunk.discard() };
                }
            }
        }
        *lock(&self.spilled_counts) = Vec::new();
        *lock(&self.tasks) = Vec::new();
        *lock(&self.metadata) = Vec::new();
        *lock(&self.meta_blocks) = Vec::new();
    }

    /// CPU time of the thread: at its exit, or now from /proc while it runs.
    pub fn cpu_ns(&self) -> i64 {
        if let Some((_, cpu)) = *lock(&self.exit) {
            return cpu;
        }
        let path = format!("/proc/self/task/{}/schedstat", self.native_id);
        std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse().ok())
            .unwrap_or(-1)
    }
}

/// Adds `n` to `counts[index]`, growing `counts` as needed.
pub(crate) fn bump(counts: &mut Vec<u64>, index: usize, n: u64) {
    if index >= counts.len() {
        counts.resize(index + 1, 0);
    }
    counts[index] += n;
}

/// Rust's `ThreadId` as an integer (its `as_u64` is unstable).
fn thread_ident(id: std::thread::ThreadId) -> i64 {
    let text = format!("{id:?}");
    text.trim_start_matches("ThreadId(")
        .trim_end_matches(')')
        .parse()
        .unwrap_or(-1)
}

/// Metadata for the one call of `region` that started at tick `start`,
/// whichever lane and depth its record ends up at: the outcome of an
/// instrumented future, whose call moves, when it ends, from its own
/// recorder to a task's block or to the recorder around it (a frame's
/// calls go under what is open there). Kept by the session's store.
#[derive(Debug)]
pub struct KeyedEntry {
    pub region: u32,
    pub start: u64,
    pub values: Arc<CallMetadata>,
}
