//! Live totals: every call a running session has finished so far, per
//! region (calls, total, own and longest duration), for the live server.
//!
//! Each record is folded once, by the reading thread, never by the
//! recording threads: [`LiveTotals::update`] goes on from where the last
//! update stopped in each lane (its segment and the records of it already
//! folded), decoding a block only if it was spilled before it was folded.
//! A lane's records are in the order the calls ended, each at its depth,
//! so a call's children come right before it: a running sum of durations
//! per depth gives each call's own time (its duration minus its children's
//! sum) in one forward pass, kept across updates and chunk edges. A nested
//! lane (a large frame's, see `Segment::Nested`) is folded with its own
//! sums, and its depth-0 calls are added to its host's sum at the depth it
//! was placed at. In aggregation mode the threads' tables are summed
//! instead. A task in flight keeps its finished calls in a private chunk
//! until it ends: the chunks waiting tasks lend (`OpenStack::lend`) are
//! counted afresh at each update, apart from the folded totals.
//!
//! The store's lanes are read under `Store::read_live`, which `release`
//! waits for: no record is read after the session let go of it.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use crate::lane::{Lane, Segment};
use crate::open::OpenStack;
use crate::platform;
use crate::record::Record;
use crate::spill;
use crate::store::{SpillWatch, Store};
use crate::sync::lock;

mod open_now;

pub use open_now::{OpenCall, TaskInFlight};
use open_now::{still_open, task_trees};

/// Depths past this are folded without their own time (their own time is
/// their duration): the running sums stay small whatever a record says.
const MAX_TRACKED_DEPTH: usize = 4096;

/// The open calls shown per thread at most (the outermost ones).
pub const MAX_OPEN_SHOWN: usize = 64;

/// How many records ahead of the one folded its memory is asked for.
const PREFETCH_AHEAD: usize = 64;

/// Region ids past this are not counted (a region id is a session's dense
/// index: a million regions is far beyond any program's).
const MAX_REGIONS: usize = 1 << 24;

/// One region's finished calls so far, in ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegionTotal {
    pub calls: u64,
    /// Summed durations.
    pub total: u64,
    /// Summed durations minus the direct children's.
    pub own: u64,
    /// The longest call.
    pub max: u64,
    /// Calls that finished but were not kept (the memory limit, after
    /// spilling stopped).
    pub dropped: u64,
}

/// One lane's calls folded so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaneTotal {
    /// The thread's index in the session (a tasks lane: its thread's).
    pub index: u32,
    /// Whether the lane holds tasks (async calls), not a thread's calls.
    pub tasks: bool,
    pub name: String,
    /// Calls folded.
    pub calls: u64,
    /// A thread lane: the calls open on the thread at the last update,
    /// outermost first (none in aggregation mode, which keeps no records
    /// to tell them by, and none once a call of the lane was dropped).
    pub open: Vec<OpenCall>,
}

/// Where one lane's fold stands.
#[derive(Default)]
struct LaneFold {
    /// The segment being folded and the records of it folded so far.
    segment: usize,
    offset: usize,
    /// Per depth, the summed durations of the calls at that depth since
    /// the last call one level up ended (its children, when it ends).
    sums: Vec<u64>,
    /// Per depth, the start of the last call folded there: a call open on
    /// the thread at that depth started after it (see `open`).
    last_start: Vec<u64>,
    calls: u64,
    /// The calls open at the last update (a thread lane's).
    open: Vec<OpenCall>,
}

/// The totals of one session's calls, updated in place.
#[derive(Default)]
pub struct LiveTotals {
    /// The calls folded from the lanes, each once.
    folded: Vec<RegionTotal>,
    /// `folded` and, at the last update, the calls the tasks in flight
    /// finished (lent while they wait, in no lane yet: see `update`).
    regions: Vec<RegionTotal>,
    /// By the lane's address (the store keeps every lane it registered
    /// until the session ends).
    lanes: HashMap<usize, LaneFold>,
    buffers: spill::Buffers,
    decoded: Vec<Record>,
    /// Spilled blocks read back (folded after they spilled).
    blocks_read: u64,
    /// The tasks in flight at the last update.
    tasks: Vec<TaskInFlight>,
}

impl LiveTotals {
    /// Nothing folded yet.
    pub fn new() -> LiveTotals {
        LiveTotals::default()
    }

    /// Folds the calls `store`'s lanes finished since the last update.
    /// `None` if the session has ended (its records are gone): the totals
    /// are then those of the last update.
    ///
    /// # Errors
    /// A spilled block that cannot be read back (the message says which);
    /// the totals hold what was folded before it.
    pub fn update(&mut self, store: &Store) -> Option<std::io::Result<()>> {
        store.read_live(|lanes| {
            if store.aggregates() {
                self.sum_tables(lanes);
                return Ok(());
            }
            for lane in lanes {
                // A spliced lane is folded where its host places it.
                if !lane.is_spliced() {
                    // The slots first, the calls that ended then: a call
                    // that ends in between is not shown open.
                    let slots = lock(&lane.open)
                        .as_ref()
                        .map(|stack| stack.read(MAX_OPEN_SHOWN))
                        .unwrap_or_default();
                    self.fold_lane(store, lane)?;
                    if let Some(fold) = self.lanes.get_mut(&key(lane)) {
                        fold.open = if lane.is_stopped() {
                            Vec::new()
                        } else {
                            still_open(&slots, &fold.last_start)
                        };
                    }
                }
            }
            let stacks = store.task_stacks();
            self.tasks = task_trees(
                stacks
                    .iter()
                    .filter_map(|s| s.read_task(MAX_OPEN_SHOWN))
                    .collect(),
            );
            self.count_lent(&stacks);
            for total in &mut self.regions {
                total.dropped = 0;
            }
            for lane in lanes {
                for (region, d) in lock(&lane.dropped).iter().enumerate() {
                    if let Some(total) = self.regions.get_mut(region) {
                        total.dropped += d.calls;
                    }
                }
            }
            Ok(())
        })
    }

    /// `folded` and the calls the waiting tasks and frames finished (each
    /// in its private chunk until it ends or outgrows it), counted afresh
    /// from the chunks they lend. A task or frame takes its chunk back
    /// before its records go to a lane (read above) or to the recorder it
    /// nests in, which started before it: the chunks are read in the order
    /// of their recorders' starts, so a call moved while they are read is
    /// missed by this update (not by the next), never counted twice.
    fn count_lent(&mut self, stacks: &[Arc<OpenStack>]) {
        self.regions.clone_from(&self.folded);
        let mut lent: Vec<(u64, &Arc<OpenStack>)> = stacks
            .iter()
            .filter_map(|s| s.lent_since().map(|t| (t, s)))
            .collect();
        lent.sort_by_key(|(started, _)| *started);
        for (started, stack) in lent {
            if let Some(chunk) = stack.lent_records(started) {
                fold_records(&mut self.regions, &mut LaneFold::default(), chunk.records());
            }
        }
    }

    /// The spilled blocks read back so far: chunks spilled before they
    /// were folded (neither a fold nor the spill writer's `SpillWatch` got
    /// to them in memory).
    pub fn blocks_read(&self) -> u64 {
        self.blocks_read
    }

    /// The tasks in flight (instrumented futures polled at least once and
    /// not finished) at the last update, by thread and number: each with
    /// its open calls and its frames', its own first; only its own and its
    /// waiting frames' while it is polled.
    pub fn tasks(&self) -> &[TaskInFlight] {
        &self.tasks
    }

    /// Per region id, its finished calls so far.
    pub fn regions(&self) -> &[RegionTotal] {
        &self.regions
    }

    /// The calls folded per lane of `store` (lanes placed in another are
    /// not listed), in the store's order.
    pub fn lanes(&self, store: &Store) -> Vec<LaneTotal> {
        store
            .read_live(|lanes| {
                lanes
                    .iter()
                    .filter(|l| !l.is_spliced())
                    .map(|l| LaneTotal {
                        index: l.index,
                        tasks: l.kind == crate::lane::LaneKind::Tasks,
                        name: l.name.clone(),
                        calls: self.lanes.get(&key(l)).map_or(0, |f| f.calls),
                        open: self
                            .lanes
                            .get(&key(l))
                            .map(|f| f.open.clone())
                            .unwrap_or_default(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Aggregation mode: the threads' tables summed (they hold every call).
    fn sum_tables(&mut self, lanes: &[Arc<Lane>]) {
        for total in &mut self.regions {
            *total = RegionTotal::default();
        }
        for lane in lanes {
            let Some(table) = lock(&lane.aggregates).clone() else {
                continue;
            };
            let mut calls = 0;
            let n = table.entries.len().min(MAX_REGIONS);
            if self.regions.len() < n {
                self.regions.resize(n, RegionTotal::default());
            }
            for (region, e) in table.entries.iter().enumerate() {
                let Some(total) = self.regions.get_mut(region) else {
                    break;
                };
                let count = e.count.load(Ordering::Relaxed);
                calls += count;
                total.calls += count;
                total.total = total.total.wrapping_add(e.total.load(Ordering::Relaxed));
                total.own = total.own.wrapping_add(e.exclusive.load(Ordering::Relaxed));
                total.max = total.max.max(e.max.load(Ordering::Relaxed));
            }
            self.lanes.entry(key(lane)).or_default().calls = calls;
        }
    }

    /// Folds `lane`'s records from where its fold stands.
    fn fold_lane(&mut self, store: &Store, lane: &Arc<Lane>) -> std::io::Result<()> {
        let mut fold = self.lanes.remove(&key(lane)).unwrap_or_default();
        let done = self.fold_segments(store, lane, &mut fold);
        self.lanes.insert(key(lane), fold);
        done
    }

    fn fold_segments(
        &mut self,
        store: &Store,
        lane: &Arc<Lane>,
        fold: &mut LaneFold,
    ) -> std::io::Result<()> {
        // A tasks lane's block is published whole under `tasks`: the chunk
        // it began in is complete once the next segment is seen under it.
        let segments: Vec<Segment> = {
            let _tasks = lock(&lane.tasks);
            lock(&lane.segments)
                .get(fold.segment..)
                .map(<[Segment]>::to_vec)
                .unwrap_or_default()
        };
        let count = segments.len();
        for (i, segment) in segments.into_iter().enumerate() {
            let last = i + 1 == count;
            match segment {
                Segment::Memory(chunk) => {
                    let records = chunk.records();
                    let new = records.get(fold.offset..).unwrap_or_default();
                    self.fold_records(fold, new);
                    fold.offset = records.len();
                }
                Segment::Spilled { offset, len, bytes } => {
                    if fold.offset < len {
                        let mut decoded = std::mem::take(&mut self.decoded);
                        let read = store.read_spilled(
                            (offset, len, bytes),
                            &mut self.buffers,
                            &mut decoded,
                        );
                        self.blocks_read += 1;
                        if read.is_ok() {
                            self.fold_records(fold, decoded.get(fold.offset..).unwrap_or_default());
                            fold.offset = len;
                        }
                        self.decoded = decoded;
                        read?;
                    }
                }
                // Spliced when its frame ended: complete, folded once.
                Segment::Nested {
                    lane: nested,
                    depth,
                } if fold.offset == 0 => {
                    let mut inner = self.lanes.remove(&key(&nested)).unwrap_or_default();
                    let done = self.fold_segments(store, &nested, &mut inner);
                    let below = inner.sums.first().copied().unwrap_or(0);
                    fold.calls += inner.calls;
                    self.lanes.insert(key(&nested), inner);
                    done?;
                    add_at(&mut fold.sums, depth as usize, below);
                    fold.offset = 1;
                }
                Segment::Nested { .. } => {}
            }
            if !last {
                fold.segment += 1;
                fold.offset = 0;
            }
        }
        Ok(())
    }

    /// Folds `records`, the lane's next.
    fn fold_records(&mut self, fold: &mut LaneFold, records: &[Record]) {
        fold_records(&mut self.folded, fold, records);
    }
}

/// Adds `records` (the next of the lane `fold` stands in) to `regions`.
fn fold_records(regions: &mut Vec<RegionTotal>, fold: &mut LaneFold, records: &[Record]) {
    for (i, r) in records.iter().enumerate() {
        // The records were written by other cores, usually a while ago:
        // the loop waits on memory, not on its arithmetic (perf: two
        // thirds of its samples on the record's first loads). Asking
        // for the line 64 records (1.5 KiB) ahead took the serving
        // thread from ~8 to ~4 ns a record on the 2-core VM (24 ahead:
        // ~5; 160: no better than 64; bench-compare's live section).
        if let Some(ahead) = records.get(i + PREFETCH_AHEAD) {
            platform::prefetch(ahead);
        }
        let duration = r.end.saturating_sub(r.start);
        let depth = r.depth() as usize;
        let children = if depth < MAX_TRACKED_DEPTH {
            let children = fold.sums.get(depth + 1).copied().unwrap_or(0);
            if let Some(s) = fold.sums.get_mut(depth + 1) {
                *s = 0;
            }
            add_at(&mut fold.sums, depth, duration);
            if fold.last_start.len() <= depth {
                fold.last_start.resize(depth + 1, 0);
            }
            fold.last_start[depth] = r.start;
            children
        } else {
            0
        };
        fold.calls += 1;
        let region = r.region as usize;
        if region >= regions.len() && region < MAX_REGIONS {
            regions.resize(region + 1, RegionTotal::default());
        }
        if let Some(total) = regions.get_mut(r.region as usize) {
            total.calls += 1;
            total.total = total.total.wrapping_add(duration);
            total.own = total.own.wrapping_add(duration.saturating_sub(children));
            total.max = total.max.max(duration);
        }
    }
}

impl LiveTotals {
    /// Folds what is left of `records`, segment `index` of `lane` (a
    /// finished chunk), if the lane's fold stands in that segment (it goes
    /// in order: a segment further on waits for the folds before it, and is
    /// decoded then); the fold then stands at the next segment.
    fn fold_spilling(&mut self, lane: &Arc<Lane>, index: usize, records: &[Record]) {
        let fold = match self.lanes.remove(&key(lane)) {
            Some(f) => f,
            None if index == 0 => LaneFold::default(),
            None => return,
        };
        let mut fold = fold;
        if fold.segment == index && fold.offset <= records.len() {
            let rest = &records[fold.offset..];
            self.fold_records(&mut fold, rest);
            // The writer spills finished chunks only (full, followed by a
            // nested lane, or their thread gone): this one is done.
            fold.segment = index + 1;
            fold.offset = 0;
        }
        self.lanes.insert(key(lane), fold);
    }
}

/// The spill writer shows the live totals each chunk before it spills it:
/// what they have not folded yet of it is folded there, in memory, instead
/// of decoded from the scratch file later. Never waits: if a fold holds
/// the totals, the chunk is decoded later instead.
impl SpillWatch for Mutex<LiveTotals> {
    fn spilling(&self, lane: &Arc<Lane>, index: usize, records: &[Record]) {
        if let Ok(mut totals) = self.try_lock() {
            totals.fold_spilling(lane, index, records);
        }
    }
}

/// Adds `v` to `sums[depth]`, growing `sums` to hold it.
fn add_at(sums: &mut Vec<u64>, depth: usize, v: u64) {
    if depth >= MAX_TRACKED_DEPTH {
        return;
    }
    if sums.len() <= depth {
        sums.resize(depth + 1, 0);
    }
    sums[depth] = sums[depth].wrapping_add(v);
}

/// A lane's key among the folds: its address, stable while the store
/// holds it.
fn key(lane: &Arc<Lane>) -> usize {
    Arc::as_ptr(lane) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thread::test_support::in_session;

    /// Nested calls, many more than the memory limit holds: `outer` of 3
    /// `inner` calls, `n` times.
    fn record(n: usize) {
        let (outer, inner) = (
            crate::region::region("outer"),
            crate::region::region("inner"),
        );
        for _ in 0..n {
            let _o = outer.enter();
            for _ in 0..3 {
                let _i = inner.enter();
            }
        }
    }

    fn check(totals: &LiveTotals, n: u64) {
        let by_calls: Vec<u64> = totals.regions().iter().map(|r| r.calls).collect();
        assert_eq!(by_calls, [n, 3 * n]);
        let (outer, inner) = (totals.regions()[0], totals.regions()[1]);
        assert_eq!(inner.own, inner.total, "a leaf's own time is its total");
        assert!(outer.own < outer.total);
        // Own time is the duration minus the children's, exactly.
        assert_eq!(outer.own + inner.total, outer.total);
    }

    /// Blocks spilled before any fold are read back from the scratch file.
    #[test]
    fn spilled_blocks_are_decoded() {
        in_session(1 << 20, |session| {
            record(100_000);
            // The writer has spilled (past half of 1 MiB, 24 bytes a call).
            let mut totals = LiveTotals::new();
            totals.update(&session.store).unwrap().unwrap();
            assert!(totals.blocks_read() > 0, "blocks were read back");
            check(&totals, 100_000);
            // Folded once: a second update adds nothing.
            totals.update(&session.store).unwrap().unwrap();
            check(&totals, 100_000);
        });
    }

    /// With the totals watching the spills, the writer folds each chunk
    /// before it spills it: no block is read back.
    #[test]
    fn watched_spills_are_folded_in_memory() {
        in_session(1 << 20, |session| {
            let totals = Arc::new(Mutex::new(LiveTotals::new()));
            session.store.watch_spills(Arc::clone(&totals) as _);
            record(100_000);
            // The writer may still be spilling what the calls left past
            // half the limit: a chunk it spills while the fold below holds
            // the totals is not folded (the writer never waits) and is read
            // back. Wait until it has stopped (its spilled bytes unchanged
            // for 300 ms; at most 20 s, then the assertion says why).
            let (mut last, mut still) = (session.store.spilled_bytes(), 0);
            for _ in 0..1000 {
                std::thread::sleep(std::time::Duration::from_millis(20));
                let now = session.store.spilled_bytes();
                still = if now == last { still + 1 } else { 0 };
                last = now;
                if still == 15 {
                    break;
                }
            }
            let mut totals = lock(&totals);
            totals.update(&session.store).unwrap().unwrap();
            assert!(session.store.spilled_bytes() > 0, "the session spilled");
            assert_eq!(totals.blocks_read(), 0, "every chunk folded in memory");
            check(&totals, 100_000);
        });
    }

    /// Folds between calls go on from where they stopped, inside a chunk
    /// and across a call still open: own times stay exact.
    #[test]
    fn folds_go_on_where_they_stopped() {
        in_session(64 << 20, |session| {
            let mut totals = LiveTotals::new();
            let (outer, inner) = (
                crate::region::region("outer"),
                crate::region::region("inner"),
            );
            for _ in 0..50 {
                let _o = outer.enter();
                for _ in 0..3 {
                    let _i = inner.enter();
                    drop(_i);
                    // A fold with `outer` open: its children wait in the sums.
                    totals.update(&session.store).unwrap().unwrap();
                }
            }
            totals.update(&session.store).unwrap().unwrap();
            check(&totals, 50);
            assert_eq!(totals.blocks_read(), 0);
        });
    }

    /// The regions open on each thread lane now, by id.
    fn open_now(totals: &mut LiveTotals, session: &Arc<crate::active::Session>) -> Vec<Vec<u32>> {
        totals.update(&session.store).unwrap().unwrap();
        totals
            .lanes(&session.store)
            .iter()
            .filter(|l| !l.tasks)
            .map(|l| l.open.iter().map(|c| c.region).collect())
            .collect()
    }

    /// A thread's open calls are its stack now: not the calls that came
    /// and went under it, not a call that just ended, nothing of a thread
    /// that exited.
    #[test]
    fn the_calls_open_now_are_the_threads_stack() {
        in_session(64 << 20, |session| {
            let mut totals = LiveTotals::new();
            let (outer, middle, inner) = (
                crate::region::region("outer"),
                crate::region::region("middle"),
                crate::region::region("inner"),
            );
            let o = outer.enter();
            // Deeper calls come and go under `outer`, in several chunks.
            for _ in 0..5000 {
                let _m = middle.enter();
                let _i = inner.enter();
            }
            assert_eq!(open_now(&mut totals, session), [vec![0]]);
            let m = middle.enter();
            let i = inner.enter();
            assert_eq!(open_now(&mut totals, session), [vec![0, 1, 2]]);
            drop(i);
            assert_eq!(open_now(&mut totals, session), [vec![0, 1]]);
            drop(m);
            let start = totals.lanes(&session.store)[0].open[0].start;
            drop(o);
            assert_eq!(open_now(&mut totals, session), [Vec::<u32>::new()]);
            let o = outer.enter();
            let again = open_now(&mut totals, session);
            assert_eq!(again, [vec![0]]);
            assert!(
                totals.lanes(&session.store)[0].open[0].start > start,
                "the new call"
            );
            drop(o);

            // Another thread's stack, while it runs; none once it exited.
            let (held, release) = (
                std::sync::mpsc::channel::<()>(),
                std::sync::mpsc::channel::<()>(),
            );
            let (held_tx, held_rx) = held;
            let (release_tx, release_rx) = release;
            std::thread::scope(|s| {
                s.spawn(move || {
                    let _w = crate::region::region("worker").enter();
                    let _i = crate::region::region("inner").enter();
                    held_tx.send(()).unwrap();
                    release_rx.recv().unwrap();
                });
                held_rx.recv().unwrap();
                assert_eq!(open_now(&mut totals, session), [vec![], vec![3, 2]]);
                release_tx.send(()).unwrap();
            });
            assert_eq!(
                open_now(&mut totals, session),
                [Vec::<u32>::new(), Vec::new()]
            );
        });
    }
}
