//! The per-thread recorder: a stack of open calls and the chunks of finished
//! ones, reached through one thread-local per event.
//!
//! Entering a region pushes `(start, call sequence number, region)` on the
//! thread's stack; leaving it pops the entry and appends a complete
//! [`Record`] to the thread's current chunk. No lock, hash, allocation or
//! formatting happens per call once the current chunk has room: a full chunk
//! is replaced by a new one (the only allocation, once per chunk) and handed
//! to the thread's [`Lane`], which the session holds, so the records of a
//! thread that exits stay with the session.

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::active;
use crate::clock::{thread_cpu_ns, ticks};
use crate::counters::{self, CounterSet};
use crate::lane::{
    AggEntry, AggTable, CounterTable, KeyedEntry, Lane, MetaEntry, MetaScope, Segment, TaskRecord,
};
use crate::platform::PerfGroup;
use crate::record::{Chunk, Record};
use crate::store::Store;
use crate::sync::lock;
use crate::value::CallMetadata;

const FIRST_CHUNK: usize = 1024;

mod frames;

use frames::{DEFERS, Deferred, FrameCalls, Nesting};

/// A call that has started and not ended.
#[derive(Clone, Copy, Default)]
struct Open {
    start: u64,
    seq: u64,
    region: u32,
}

/// The hot half of a thread's recorder: cells and raw pointers only, so
/// reaching it is a thread-local address with no lazy initialization,
/// destructor registration or borrow flag.
///
/// Invariant (kept by every function of [`Cold`] that changes what the
/// pointers refer to): while `stack_cap > 0`, `stack` points to `stack_cap`
/// initialized `Open`s owned by this thread's `Cold`, and likewise to
/// `stack_len` of them while `stack_len > 0` (`stack_cap` is 0 in a session
/// that counts, `stack_len` never is while armed); while `cap > 0`,
/// `chunk` points to the chunk `Cold` holds, which has `cap` slots of which
/// `len` are pushed. `Cold` zeroes both capacities before it touches those
/// allocations (so a re-entrant call, from an instrumented allocator say,
/// takes the slow path, finds `Cold` busy and records nothing) and when it
/// is destroyed at thread exit. Likewise while `agg_len > 0` (aggregation
/// mode), `agg` points to `agg_len` entries of the table `Cold` holds, and
/// `kids` to `kids_len` counters `Cold` owns; `disarm` zeroes both lengths.
struct Hot {
    /// Session generation the lane belongs to (0: none).
    generation: Cell<u32>,
    /// Sequence number of the last call entered on this thread; never reset,
    /// so a guard from an earlier session can never match a newer call.
    seq: Cell<u64>,
    stack: Cell<*mut Open>,
    depth: Cell<usize>,
    stack_cap: Cell<usize>,
    /// The stack's length (`stack_cap` is 0 while the session counts: every
    /// enter and exit then takes the slow path, which counts).
    stack_len: Cell<usize>,
    chunk: Cell<*const Chunk>,
    len: Cell<usize>,
    cap: Cell<usize>,
    /// Allocation counting, the lean path (see [`Hot::enter_counted`]): on
    /// while the current recorder counts allocations only, in the thread's
    /// session, and is not a frame (whose depth-0 calls `Cold` hands to
    /// the call around it). Then `snaps` points to `snap_depths * 4`
    /// values of `Cold`'s `RecCounts::snaps` (raw counts: it is active),
    /// `table` to `table_regions` rows of the thread's
    /// `CounterTable` (9 atomics each).
    count_fast: Cell<bool>,
    snaps: Cell<*mut u64>,
    snap_depths: Cell<usize>,
    table: Cell<*const AtomicU64>,
    table_regions: Cell<usize>,
    /// Aggregation mode: the thread's per-region totals.
    agg: Cell<*const AggEntry>,
    agg_len: Cell<usize>,
    /// Aggregation mode: per depth, the summed durations of the calls ended
    /// there since the enclosing call opened (its children's time).
    kids: Cell<*mut u64>,
    kids_len: Cell<usize>,
}

impl Hot {
    const fn new() -> Hot {
        Hot {
            generation: Cell::new(0),
            seq: Cell::new(0),
            stack: Cell::new(std::ptr::null_mut()),
            depth: Cell::new(0),
            stack_cap: Cell::new(0),
            stack_len: Cell::new(0),
            chunk: Cell::new(std::ptr::null()),
            len: Cell::new(0),
            cap: Cell::new(0),
            count_fast: Cell::new(false),
            snaps: Cell::new(std::ptr::null_mut()),
            snap_depths: Cell::new(0),
            table: Cell::new(std::ptr::null()),
            table_regions: Cell::new(0),
            agg: Cell::new(std::ptr::null()),
            agg_len: Cell::new(0),
            kids: Cell::new(std::ptr::null_mut()),
            kids_len: Cell::new(0),
        }
    }

    /// Aggregation mode: adds the ended call to the totals of its region
    /// (and its time to its parent's children); `false` when not
    /// aggregating, or the table or the counters need to grow (`Cold`).
    #[inline(always)]
    fn aggregate(&self, record: Record) -> bool {
        let region = record.region as usize;
        let depth = record.depth as usize;
        if region >= self.agg_len.get() || depth + 1 >= self.kids_len.get() {
            return false;
        }
        let duration = record.end.wrapping_sub(record.start);
        // SAFETY: `depth + 1 < kids_len` and `region < agg_len`: by the
        // invariant both are inside the live allocations `Cold` holds, the
        // counters only this thread touches, the entry only this thread
        // writes (atomics, read by cuts).
        unsafe {
            let kids = self.kids.get();
            let children = kids.add(depth + 1).replace(0);
            *kids.add(depth) = (*kids.add(depth)).wrapping_add(duration);
            (*self.agg.get().add(region)).add(duration, duration.wrapping_sub(children));
        }
        true
    }

    /// Pushes an open call; `false` when the stack is full (or disarmed).
    #[inline(always)]
    fn push_open(&self, region: u32, seq: u64) -> bool {
        let depth = self.depth.get();
        if depth >= self.stack_cap.get() {
            return false;
        }
        // SAFETY: `depth < stack_cap`, so by the invariant the slot is inside
        // the live stack buffer, which only this thread accesses.
        unsafe {
            self.stack.get().add(depth).write(Open {
                start: ticks(),
                seq,
                region,
            })
        };
        self.depth.set(depth + 1);
        true
    }

    /// The innermost open call, if the stack is armed and not empty.
    #[inline(always)]
    fn top(&self) -> Option<Open> {
        let depth = self.depth.get();
        if depth == 0 || depth > self.stack_cap.get() {
            return None;
        }
        // SAFETY: `0 < depth <= stack_cap`: slot `depth - 1` is initialized
        // and inside the live stack buffer.
        Some(unsafe { self.stack.get().add(depth - 1).read() })
    }

    /// Appends a record to the current chunk; `false` when it is full.
    #[inline(always)]
    fn push_record(&self, record: Record) -> bool {
        let len = self.len.get();
        if len >= self.cap.get() {
            return false;
        }
        // SAFETY: `len < cap`: by the invariant `chunk` is the live chunk
        // this thread owns as its only writer, and `len` records were pushed.
        unsafe { (*self.chunk.get()).push(len, record) };
        self.len.set(len + 1);
        true
    }

    /// Allocation counting's lean enter: pushes the call with its counts
    /// (the recorder's allocation counts now, no children yet); `None` if
    /// the lean path is off or out of room (then `Cold` does it).
    #[inline(always)]
    fn enter_counted(&self, region: u32, generation: u32) -> Option<u64> {
        let depth = self.depth.get();
        if !self.count_fast.get()
            || self.generation.get() != generation
            || depth >= self.stack_len.get()
            || depth >= self.snap_depths.get()
        {
            return None;
        }
        let counts = counters::alloc_counts();
        let seq = self.seq.get() + 1;
        // SAFETY: `count_fast`: `snaps` points to `snap_depths * 4` and
        // `stack` to `stack_len` live slots of `Cold`'s, which only this
        // thread touches; `depth` is below both.
        unsafe {
            let snap = self.snaps.get().add(depth * 4);
            for (i, c) in counts.iter().enumerate() {
                snap.add(i).write(*c);
            }
            self.stack.get().add(depth).write(Open {
                start: ticks(),
                seq,
                region,
            });
        }
        self.seq.set(seq);
        self.depth.set(depth + 1);
        Some(seq)
    }

    /// Allocation counting's lean exit of the innermost call `seq` at
    /// `end`: its record stored, its counts added to its region's totals
    /// and to its parent's children; `false` if the lean path is off or
    /// out of room (then `Cold` does it).
    #[inline(always)]
    fn exit_counted(&self, seq: u64, end: u64) -> bool {
        let depth = self.depth.get();
        if !self.count_fast.get()
            || depth == 0
            || depth > self.stack_len.get().min(self.snap_depths.get())
        {
            return false;
        }
        let d = depth - 1;
        // SAFETY: `0 < depth <= stack_len`: slot `d` is initialized.
        let top = unsafe { self.stack.get().add(d).read() };
        if top.seq != seq || top.region as usize >= self.table_regions.get() {
            return false;
        }
        let record = Record {
            start: top.start,
            end,
            region: top.region,
            depth: d as u32,
        };
        // The parent's region, for its children's totals.
        let parent = match d.checked_sub(1) {
            // SAFETY: `d - 1 < stack_len`: an initialized slot.
            Some(up) => unsafe { self.stack.get().add(up).read() }.region as usize,
            None => 0,
        };
        if d > 0 && parent >= self.table_regions.get() {
            return false;
        }
        if !self.push_record(record) {
            return false;
        }
        let counts = counters::alloc_counts();
        // SAFETY: `count_fast`: `snaps` (slot `d`, below `snap_depths`) and
        // the table's rows `region` and `parent` (below `table_regions`)
        // are live and written by this thread only.
        unsafe {
            let snap = self.snaps.get().add(d * 4);
            let table = self.table.get();
            let row = table.add(top.region as usize * 9);
            let bump = |a: *const AtomicU64, v: u64| {
                let a = &*a;
                a.store(a.load(Ordering::Relaxed).wrapping_add(v), Ordering::Relaxed);
            };
            bump(row, 1);
            let mut delta = [0u64; 4];
            for (i, c) in counts.iter().enumerate() {
                delta[i] = c.wrapping_sub(snap.add(i).read());
                bump(row.add(1 + i), delta[i]);
            }
            if d > 0 {
                let up = table.add(parent * 9 + 5);
                for (i, v) in delta.iter().enumerate() {
                    bump(up.add(i), *v);
                }
            }
        }
        self.depth.set(d);
        true
    }

    /// Makes the fast paths divert to `Cold` until re-armed.
    fn disarm(&self) {
        self.count_fast.set(false);
        self.stack_cap.set(0);
        self.stack_len.set(0);
        self.cap.set(0);
        self.agg_len.set(0);
        self.kids_len.set(0);
    }
}

/// The owning half of a thread's recorder, used on slow paths only.
///
/// While an instrumented future is polled, `lane`, `store`, `chunk`,
/// `stack` and `task` are the future's (see [`poll_in_task`]); the rest is
/// the thread's own.
struct Cold {
    lane: Option<Arc<Lane>>,
    store: Option<Arc<Store>>,
    chunk: Option<Arc<Chunk>>,
    stack: Vec<Open>,
    /// The task being polled, if one is.
    task: Option<TaskId>,
    /// The thread's tasks lane: the blocks of the tasks it completed.
    tasks: Option<TasksLane>,
    /// The state of the last task completed here, for the next one.
    spare: Option<Box<TaskState>>,
    /// Aggregation mode: the thread's totals (also in its lane) and the
    /// children's time per depth (see `Hot`).
    agg: Option<Arc<AggTable>>,
    kids: Vec<u64>,
    /// The current recorder's counter state (a task's while one is polled).
    counts: RecCounts,
    /// The thread's counting in a session that counts (see `counters`).
    counting: Option<Box<Counting>>,
    /// Finished frames waiting for an open call of the current recorder to
    /// end. The thread's own, not swapped with a task's: the call waited
    /// for is a sync call of this poll, or a guard held across an `.await`
    /// (not `Send`: its future stays on this thread), never a task's or a
    /// frame's own call, which may move (see `Cold::nest`); its sequence
    /// number, this thread's, names it.
    deferred: Vec<Deferred>,
    /// The session this thread attached to and its own lane's index (kept
    /// while a task's recorder takes the thread's place).
    own: Option<(u32, u32)>,
}

/// A recorder's counters (see `crate::counters`): the counts its open calls
/// started at. While the recorder is the thread's current one (`active`),
/// they are the thread's raw counts then; while it is swapped out (a task
/// between polls), each is kept relative to the counts when it was swapped
/// out, and made raw again, on whichever thread polls it next, when it is
/// swapped back in: what a call counts is what happened while its recorder
/// was current.
#[derive(Default)]
struct RecCounts {
    /// Per open call (by depth), `width` values: the counts at its enter.
    snaps: Vec<u64>,
    active: bool,
    /// A frame's ended depth-0 calls' inclusive deltas (for the call
    /// around it when it ends).
    root: Vec<u64>,
}

impl RecCounts {
    /// The thread's own recorder: active.
    fn own() -> RecCounts {
        RecCounts {
            active: true,
            ..RecCounts::default()
        }
    }

    fn fit(&mut self, width: usize) {
        if self.root.len() != width {
            self.root = vec![0; width];
        }
    }

    /// Swapped out at the thread's counts `raw` with `depth` calls open:
    /// each call's counts become relative to now.
    fn freeze(&mut self, raw: &[u64], depth: usize) {
        if self.active {
            let width = raw.len();
            for snap in self.snaps.chunks_exact_mut(width.max(1)).take(depth) {
                for (v, r) in snap.iter_mut().zip(raw) {
                    *v = v.wrapping_sub(*r);
                }
            }
            self.active = false;
        }
    }

    /// Swapped in at the thread's counts `raw` with `depth` calls open:
    /// each call's counts are raw counts again.
    fn thaw(&mut self, raw: &[u64], depth: usize) {
        if !self.active {
            let width = raw.len();
            for snap in self.snaps.chunks_exact_mut(width.max(1)).take(depth) {
                for (v, r) in snap.iter_mut().zip(raw) {
                    *v = v.wrapping_add(*r);
                }
            }
            self.active = true;
        }
    }
}

/// A thread's counting in a session that counts: the counters, the perf
/// group (opened on the thread's first call), the per-region totals.
struct Counting {
    generation: u32,
    set: Arc<CounterSet>,
    perf: Option<PerfGroup>,
    store: Arc<Store>,
    /// This thread's slot in `store.counter_tables`.
    slot: usize,
    table: Arc<CounterTable>,
    /// Scratch: raw counts, deltas.
    raw: Vec<u64>,
    delta: Vec<u64>,
}

impl Counting {
    fn new(generation: u32, set: &Arc<CounterSet>, store: &Arc<Store>) -> Counting {
        let width = set.width();
        // A perf group that cannot be opened here (setup opened one on its
        // own thread) leaves this thread's perf counts at 0.
        let perf = set.open_perf().ok().flatten();
        let table = Arc::new(CounterTable::grown(width, 64, None));
        let slot = {
            let mut tables = lock(&store.counter_tables);
            tables.push(Arc::clone(&table));
            tables.len() - 1
        };
        counters::set_tracking(set.allocations);
        Counting {
            generation,
            set: Arc::clone(set),
            perf,
            store: Arc::clone(store),
            slot,
            table,
            raw: vec![0; width],
            delta: vec![0; width],
        }
    }

    /// Reads the thread's raw counts into `self.raw`.
    fn read(&mut self) {
        let mut at = 0;
        if self.set.allocations {
            self.raw[..4].copy_from_slice(&counters::alloc_counts());
            at = 4;
        }
        if let Some(perf) = &self.perf {
            perf.read(&mut self.raw[at..]);
        }
    }

    /// Makes the table hold `region`.
    fn fit_table(&mut self, region: usize) {
        if region < self.table.regions() {
            return;
        }
        let grown = Arc::new(CounterTable::grown(
            self.set.width(),
            (region + 1).next_power_of_two().max(64),
            Some(&self.table),
        ));
        lock(&self.store.counter_tables)[self.slot] = Arc::clone(&grown);
        self.table = grown;
    }

    /// Adds one call of `region` (`self.delta`) to the totals, and, with
    /// `parent`, its deltas to that region's children.
    fn add(&mut self, region: usize, parent: Option<usize>) {
        self.fit_table(region.max(parent.unwrap_or(0)));
        self.table.add(region, &self.delta);
        if let Some(parent) = parent {
            self.table.add_children(parent, &self.delta);
        }
    }
}

/// A task: its number and its first thread's lane index.
#[derive(Clone, Copy)]
struct TaskId {
    index: u32,
    thread: u32,
    /// A future polled inside a task (a frame of it): its calls go as one
    /// block to the recorder around it when it ends, not to a lane.
    frame: bool,
}

/// A thread's tasks lane and the chunk its blocks go to.
struct TasksLane {
    generation: u32,
    lane: Arc<Lane>,
    chunk: Option<Arc<Chunk>>,
    len: usize,
}

/// Records a task's private chunk holds; a task with more gets a lane of
/// its own.
const TASK_CHUNK: usize = 64;

/// Gives each thread its own range of call sequence numbers: a task's
/// stack can hold calls entered on several threads, and they never share
/// a number.
static SEQ_BASES: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static HOT: Hot = const { Hot::new() };
    static COLD: RefCell<Cold> = const {
        RefCell::new(Cold {
            lane: None,
            store: None,
            chunk: None,
            stack: Vec::new(),
            task: None,
            tasks: None,
            spare: None,
            agg: None,
            kids: Vec::new(),
            counts: RecCounts {
                snaps: Vec::new(),
                active: true,
                root: Vec::new(),
            },
            counting: None,
            deferred: Vec::new(),
            own: None,
        })
    };
}

impl Cold {
    /// Runs `f` on this thread's cold recorder with the fast paths disarmed,
    /// then re-arms them from what `Cold` owns. `None` if the recorder is
    /// busy (re-entered) or gone (thread exit).
    fn with<R>(f: impl FnOnce(&mut Cold, &Hot) -> R) -> Option<R> {
        // The recorder's own allocations are never counted.
        let _quiet = counters::suspend();
        COLD.try_with(|cold| {
            let mut cold = cold.try_borrow_mut().ok()?;
            HOT.with(|hot| {
                hot.disarm();
                let result = f(&mut cold, hot);
                cold.arm(hot);
                Some(result)
            })
        })
        .ok()
        .flatten()
    }

    /// Points the hot half at this recorder's stack and chunk.
    fn arm(&mut self, hot: &Hot) {
        hot.stack.set(self.stack.as_mut_ptr());
        // A session that counts takes the slow paths, which count: the
        // fast ones stay as they are without counters.
        let counting = self.store.as_ref().is_some_and(|s| s.counters().is_some());
        hot.stack_cap
            .set(if counting { 0 } else { self.stack.len() });
        hot.stack_len.set(self.stack.len());
        self.arm_counted(hot);
        match &self.chunk {
            Some(chunk) => {
                hot.chunk.set(Arc::as_ptr(chunk));
                hot.cap.set(chunk.capacity());
            }
            None => hot.cap.set(0),
        }
        match &self.agg {
            Some(table) => {
                hot.agg.set(table.entries.as_ptr());
                hot.agg_len.set(table.entries.len());
                hot.kids.set(self.kids.as_mut_ptr());
                hot.kids_len.set(self.kids.len());
            }
            None => {
                hot.agg_len.set(0);
                hot.kids_len.set(0);
            }
        }
    }

    /// Points the lean allocation-counting path at this recorder's counts
    /// and the thread's table, when it applies (see `Hot::count_fast`).
    fn arm_counted(&mut self, hot: &Hot) {
        hot.count_fast.set(false);
        let Some(c) = self.counting.as_deref() else {
            return;
        };
        let lean = c.set.allocations && c.set.perf.is_empty() && c.set.width() == 4;
        if !lean
            || c.generation != hot.generation.get()
            || !self.counts.active
            || self.task.is_some_and(|t| t.frame)
            || self.agg.is_some()
        {
            return;
        }
        let need = self.stack.len() * 4;
        if self.counts.snaps.len() < need {
            self.counts.snaps.resize(need, 0);
        }
        hot.snaps.set(self.counts.snaps.as_mut_ptr());
        hot.snap_depths.set(self.counts.snaps.len() / 4);
        hot.table.set(c.table.values.as_ptr());
        hot.table_regions.set(c.table.regions());
        hot.count_fast.set(true);
    }

    /// Aggregation mode: adds `record` to the totals, growing the table or
    /// the counters first if they are too small; `false` when the thread is
    /// not aggregating.
    fn aggregate(&mut self, hot: &Hot, record: Record) -> bool {
        let Some(table) = &self.agg else {
            return false;
        };
        let region = record.region as usize;
        if region >= table.entries.len() {
            let grown = Arc::new(AggTable::grown(
                (region + 1).next_power_of_two().max(64),
                Some(table),
            ));
            if let Some(lane) = &self.lane {
                *lock(&lane.aggregates) = Some(Arc::clone(&grown));
            }
            self.agg = Some(grown);
        }
        let depth = record.depth as usize;
        if depth + 1 >= self.kids.len() {
            self.kids.resize((depth + 2).next_power_of_two().max(64), 0);
        }
        self.arm(hot);
        let done = hot.aggregate(record);
        hot.disarm();
        done
    }

    /// Joins the session `generation`: a new lane, an empty stack.
    fn attach(&mut self, hot: &Hot, generation: u32) -> bool {
        if hot.generation.get() == generation {
            return true;
        }
        if self.task.is_some() {
            return false; // a task of another session is being polled
        }
        let Some((lane, store)) = active::register_lane(generation) else {
            return false;
        };
        if hot.seq.get() == 0 {
            hot.seq.set(SEQ_BASES.fetch_add(1, Ordering::Relaxed) << 40);
        }
        hot.generation.set(generation);
        hot.depth.set(0);
        hot.len.set(0);
        self.agg = None;
        if store.aggregates() {
            let table = Arc::new(AggTable::grown(64, None));
            *lock(&lane.aggregates) = Some(Arc::clone(&table));
            self.agg = Some(table);
            self.kids = vec![0; 64];
        }
        self.counts = RecCounts::own();
        self.counting = None;
        counters::set_tracking(false);
        self.own = Some((generation, lane.index));
        self.lane = Some(lane);
        self.store = Some(store);
        self.chunk = None;
        self.ensure_counting(generation);
        true
    }

    /// Makes this thread's counting state for session `generation` if the
    /// current recorder's store counts and it has none for it.
    fn ensure_counting(&mut self, generation: u32) -> bool {
        let Some(store) = self.store.as_ref() else {
            return false;
        };
        let Some(set) = store.counters() else {
            return false;
        };
        if self
            .counting
            .as_ref()
            .is_none_or(|c| c.generation != generation)
        {
            self.counting = Some(Box::new(Counting::new(generation, set, store)));
        }
        self.counts.fit(set.width());
        true
    }

    /// Counting: the call just pushed at depth `depth` starts at the
    /// current recorder's counts now.
    fn count_enter(&mut self, hot: &Hot, depth: usize) {
        let generation = hot.generation.get();
        if !self.ensure_counting(generation) {
            return;
        }
        let Some(c) = self.counting.as_deref_mut() else {
            return;
        };
        let width = c.set.width();
        c.read();
        let need = (depth + 1) * width;
        if self.counts.snaps.len() < need {
            self.counts.snaps.resize(need.next_power_of_two(), 0);
        }
        self.counts.snaps[depth * width..(depth + 1) * width].copy_from_slice(&c.raw);
    }

    /// Counting: the call at depth `depth` of `region` ends now: its
    /// deltas go to the region's totals and to its parent's children.
    fn count_exit(&mut self, hot: &Hot, depth: usize, region: u32) {
        let generation = hot.generation.get();
        let frame = self.task.is_some_and(|t| t.frame);
        if !self.ensure_counting(generation) {
            return;
        }
        let Some(c) = self.counting.as_deref_mut() else {
            return;
        };
        let width = c.set.width();
        let Some(snap) = self.counts.snaps.get(depth * width..(depth + 1) * width) else {
            return;
        };
        c.read();
        for ((d, r), s) in c.delta.iter_mut().zip(&c.raw).zip(snap) {
            *d = r.wrapping_sub(*s);
        }
        let parent = depth
            .checked_sub(1)
            .and_then(|up| self.stack.get(up))
            .map(|o| o.region as usize);
        c.add(region as usize, parent);
        if depth == 0 && frame {
            for (r, d) in self.counts.root.iter_mut().zip(&c.delta) {
                *r = r.wrapping_add(*d);
            }
        }
    }

    /// Makes room for one more open call.
    fn grow_stack(&mut self, hot: &Hot) {
        let depth = hot.depth.get();
        if depth >= self.stack.len() {
            let mut grown = vec![Open::default(); (self.stack.len() * 2).max(64)];
            grown[..self.stack.len()].copy_from_slice(&self.stack);
            self.stack = grown;
        }
    }

    /// Replaces the full (or missing) current chunk by a new one, if the
    /// store hands one out (see `Store::new_chunk`); else leaves none.
    fn next_chunk(&mut self, hot: &Hot) {
        if self.lane.is_none() {
            self.graduate(hot, false);
            if self.lane.is_none() && self.task.is_some_and(|t| t.frame) {
                return; // the frame's chunk grew: `close_top` pushes there
            }
        }
        let (Some(lane), Some(store)) = (&self.lane, &self.store) else {
            return;
        };
        let previous = self.chunk.as_ref().map_or(0, |c| c.capacity());
        let cap = (previous * 2).clamp(FIRST_CHUNK, store.max_chunk().max(FIRST_CHUNK));
        // Let go of the full chunk first (its lane holds it): the writer can
        // then spill it and keep it for reuse while this thread waits for
        // room (the hot half is disarmed here, so nothing points at it).
        self.chunk = None;
        self.chunk = store.new_chunk(cap);
        if let Some(chunk) = &self.chunk {
            lock(&lane.segments).push(Segment::Memory(Arc::clone(chunk)));
        }
        hot.len.set(0);
    }

    /// The state of a new task (or, with `frame`, a frame of the task being
    /// polled) of `region` first polled on the thread of lane `thread`: the
    /// state the last finished one left here if it is of this session (no
    /// allocation), else a new one with a private chunk from `store`.
    fn task_state(
        &mut self,
        generation: u32,
        store: Arc<Store>,
        thread: u32,
        region: u32,
        frame: bool,
    ) -> Option<Box<TaskState>> {
        let spare = self.spare.take().filter(|s| s.generation == generation);
        let mut task = match spare {
            Some(spare) => spare,
            None => {
                let chunk = store.new_task_chunk(TASK_CHUNK)?;
                Box::new(TaskState {
                    generation,
                    lane: None,
                    store: Some(Arc::clone(&store)),
                    chunk: Some(chunk),
                    stack: Vec::new(),
                    id: None,
                    depth: 0,
                    len: 0,
                    counts: RecCounts::default(),
                    record: TaskRecord::default(),
                    root: 0,
                })
            }
        };
        // A frame gets a number only if it becomes a task.
        let index = if frame {
            u32::MAX
        } else {
            store.next_task_index()
        };
        task.id = Some(TaskId {
            index,
            thread,
            frame,
        });
        task.record = TaskRecord {
            index,
            start: ticks(),
            end: 0,
            region,
            first_lane: thread,
            polls: 0,
            running: 0,
        };
        Some(task)
    }

    /// A task being polled whose private chunk is full gets a lane of its
    /// own, which starts with that chunk. A frame grows its chunk first, up
    /// to the store's chunk size; past it (or with `force`), it gets a lane
    /// too, which is no lane of the file: when the frame ends, that lane is
    /// placed in the recorder around it (`Store::splice`), so a large
    /// future stays under the call that awaits it.
    fn graduate(&mut self, hot: &Hot, force: bool) {
        let (Some(task), Some(store)) = (self.task, self.store.clone()) else {
            return;
        };
        if task.frame && !force {
            // The frame's private chunk doubles (records copied).
            let old = self.chunk.as_ref().map_or(0, |c| c.capacity());
            if old < store.max_chunk() {
                let Some(bigger) = store.new_task_chunk((old * 2).max(TASK_CHUNK)) else {
                    return;
                };
                let len = hot.len.get();
                if let Some(chunk) = self.chunk.take() {
                    for (i, r) in chunk.records()[..len.min(chunk.records().len())]
                        .iter()
                        .enumerate()
                    {
                        // SAFETY: `bigger` is new, held only here; slots are
                        // written in order, below its capacity (twice the
                        // old one's).
                        unsafe { bigger.push(i, *r) };
                    }
                    store.recycle(chunk);
                }
                self.chunk = Some(bigger);
                return;
            }
        }
        let lane = store.register_tasks_lane(task.thread, (!task.frame).then_some(task.index));
        if let Some(chunk) = &self.chunk {
            lock(&lane.segments).push(Segment::Memory(Arc::clone(chunk)));
        }
        self.lane = Some(lane);
    }

    /// Swaps the task's recorder with the thread's (twice: back).
    fn swap_task(&mut self, hot: &Hot, task: &mut TaskState) {
        self.swap_counts(hot, task);
        std::mem::swap(&mut self.lane, &mut task.lane);
        std::mem::swap(&mut self.store, &mut task.store);
        std::mem::swap(&mut self.chunk, &mut task.chunk);
        std::mem::swap(&mut self.stack, &mut task.stack);
        std::mem::swap(&mut self.task, &mut task.id);
        let (depth, len, generation) = (hot.depth.get(), hot.len.get(), hot.generation.get());
        hot.depth.set(task.depth);
        hot.len.set(task.len);
        hot.generation.set(task.generation);
        (task.depth, task.len, task.generation) = (depth, len, generation);
    }

    /// Counting: the recorder swapped out stops following the thread's
    /// counts (unless the one swapped in is a frame: a frame's calls are
    /// the enclosing call's callees, counted in it too), the one swapped in
    /// follows them from where it was left.
    fn swap_counts(&mut self, hot: &Hot, task: &mut TaskState) {
        let incoming_frame = task.id.is_some_and(|t| t.frame);
        let (incoming, current) = (task.generation, hot.generation.get());
        // The thread's counting of a session neither side belongs to (an
        // ended one) is let go: no read per poll for nothing.
        if self
            .counting
            .as_ref()
            .is_some_and(|c| c.generation != incoming && c.generation != current)
        {
            self.counting = None;
            counters::set_tracking(false);
        }
        // A thread that polls a counting session's task counts for it.
        if self.counting.is_none()
            && let Some(store) = task.store.clone().filter(|s| s.counters().is_some())
            && let Some(set) = store.counters()
        {
            self.counting = Some(Box::new(Counting::new(incoming, set, &store)));
        }
        if let Some(c) = self.counting.as_deref_mut() {
            let width = c.set.width();
            self.counts.fit(width);
            task.counts.fit(width);
            c.read();
            if !incoming_frame {
                self.counts.freeze(&c.raw, hot.depth.get());
            }
            task.counts.thaw(&c.raw, task.depth);
        }
        std::mem::swap(&mut self.counts, &mut task.counts);
    }

    /// Appends a completed task's block of records (its depth-0 call last)
    /// to this thread's tasks lane, with the task, in one step for cuts;
    /// or, if there is no room for all of it, counts its calls as dropped.
    fn append_block(&mut self, hot: &Hot, generation: u32, records: &[Record], task: TaskRecord) {
        let ready = self
            .tasks
            .as_ref()
            .is_some_and(|t| t.generation == generation);
        if !ready {
            let thread = match self.task {
                // A task of the session is polled here (a future completed
                // or dropped inside its poll): the thread's lane is swapped
                // out, its index kept at attach; a thread that never
                // attached gives the polled task's.
                Some(around) if hot.generation.get() == generation => match self.own {
                    Some((g, index)) if g == generation => index,
                    _ => around.thread,
                },
                Some(_) => return,
                None => {
                    if !self.attach(hot, generation) {
                        return;
                    }
                    match &self.lane {
                        Some(lane) => lane.index,
                        None => return,
                    }
                }
            };
            let Some(store) = self.store.clone() else {
                return;
            };
            self.tasks = Some(TasksLane {
                generation,
                lane: store.register_tasks_lane(thread, None),
                chunk: None,
                len: 0,
            });
        }
        let Some(store) = self.store.clone() else {
            return;
        };
        let Some(tasks) = &mut self.tasks else {
            return;
        };
        let mut blocks = lock(&tasks.lane.tasks);
        let room = tasks.chunk.as_ref().map_or(0, |c| c.capacity() - tasks.len);
        if room < records.len() {
            let cap = tasks.chunk.as_ref().map_or(0, |c| c.capacity());
            let cap = (cap * 2)
                .clamp(FIRST_CHUNK, store.max_chunk().max(FIRST_CHUNK))
                .max(records.len());
            match store.new_chunk(cap) {
                Some(chunk) => {
                    // Whatever did not fit goes to the next chunk.
                    lock(&tasks.lane.segments).push(Segment::Memory(Arc::clone(&chunk)));
                    let old = tasks.chunk.replace(chunk);
                    let old_len = std::mem::replace(&mut tasks.len, 0);
                    if let Some(old) = old {
                        let fit = old.capacity() - old_len;
                        for (i, r) in records[..fit].iter().enumerate() {
                            // SAFETY: this thread is the only writer of its
                            // tasks lane's chunks; `old_len + i` is the next
                            // slot, below the capacity.
                            unsafe { old.push(old_len + i, *r) };
                        }
                        for (i, r) in records[fit..].iter().enumerate() {
                            // SAFETY: as above, in the new chunk, whose
                            // capacity is at least the block's length.
                            unsafe { tasks.chunk.as_ref().map(|c| c.push(i, *r)) };
                        }
                        tasks.len = records.len() - fit;
                        blocks.push(task);
                        return;
                    }
                }
                None => {
                    for r in records {
                        tasks
                            .lane
                            .count_dropped(r.region, r.end.saturating_sub(r.start));
                    }
                    store.note_drop();
                    return;
                }
            }
        }
        if let Some(chunk) = &tasks.chunk {
            for (i, r) in records.iter().enumerate() {
                // SAFETY: this thread is the only writer of its tasks lane's
                // chunks; slots `len..len + records.len()` are free (checked
                // or made room for above).
                unsafe { chunk.push(tasks.len + i, *r) };
            }
            tasks.len += records.len();
            blocks.push(task);
        }
    }

    /// Stores `record` in the current chunk (a new one if it is full), or
    /// counts it as dropped if there is no room.
    fn push_record(&mut self, hot: &Hot, record: Record) {
        if self.aggregate(hot, record) {
            return;
        }
        if hot.len.get() >= self.chunk.as_ref().map_or(0, |c| c.capacity()) {
            self.next_chunk(hot);
        }
        let len = hot.len.get();
        match &self.chunk {
            Some(chunk) if len < chunk.capacity() => {
                // SAFETY: this thread is the only writer of its current chunk
                // (`Cold` owns it and is thread-local), `len` is the number
                // of records it pushed there, and `len < capacity` was just
                // checked.
                unsafe { chunk.push(len, record) };
                hot.len.set(len + 1);
            }
            _ => {
                // No room to be had (see `Store::new_chunk`): count the call.
                if let (Some(lane), Some(store)) = (&self.lane, &self.store) {
                    lane.count_dropped(record.region, record.end.saturating_sub(record.start));
                    store.note_drop();
                }
            }
        }
    }

    /// Ends the innermost open call at `end` and records it.
    fn close_top(&mut self, hot: &Hot, end: u64) {
        let depth = hot.depth.get();
        let Some(open) = depth
            .checked_sub(1)
            .and_then(|d| self.stack.get(d).copied())
        else {
            return;
        };
        hot.depth.set(depth - 1);
        if self.counting.is_some() {
            self.count_exit(hot, depth - 1, open.region);
        }
        let record = Record {
            start: open.start,
            end,
            region: open.region,
            depth: (depth - 1) as u32,
        };
        self.push_record(hot, record);
        if open.seq & DEFERS != 0 {
            self.place_deferred(hot, open.seq & !DEFERS);
        }
    }
}

impl Drop for Cold {
    fn drop(&mut self) {
        let _ = HOT.try_with(|hot| {
            hot.disarm();
            hot.generation.set(0);
        });
        if let Some(lane) = &self.lane {
            *lock(&lane.exit) = Some((ticks(), thread_cpu_ns().unwrap_or(-1)));
        }
        if let Some(tasks) = &self.tasks {
            *lock(&tasks.lane.exit) = Some((ticks(), -1)); // its last chunk may spill
        }
        // Frames that waited for a call that never ended: their chunks go
        // back to the store's count (a large frame's lane stays a lane).
        for d in std::mem::take(&mut self.deferred) {
            if let (FrameCalls::Records(chunk, _), Some(store)) = (d.calls, &self.store) {
                store.recycle(chunk);
            }
        }
    }
}

/// Starts a call of region `region` of session `generation` on this thread.
/// Returns an inert guard if the thread cannot record (no such session, or
/// the recorder is busy because the allocator itself is being profiled).
#[inline(always)]
pub(crate) fn enter(region: u32, generation: u32) -> Guard {
    let seq = HOT.with(|hot| {
        let seq = hot.seq.get() + 1;
        if hot.generation.get() == generation && hot.push_open(region, seq) {
            hot.seq.set(seq);
            seq
        } else {
            enter_slow(region, generation)
        }
    });
    Guard {
        seq,
        _not_send: PhantomData,
    }
}

/// [`Hot::enter_counted`] with a direct thread-local access.
#[inline(always)]
fn enter_counted(region: u32, generation: u32) -> Option<u64> {
    // The address first (a closure this small is inlined: a direct
    // thread-local access), then the work.
    let hot: *const Hot = HOT.with(|hot| hot as *const Hot);
    // SAFETY: the calling thread's `Hot`, alive while the thread runs.
    unsafe { &*hot }.enter_counted(region, generation)
}

/// [`Hot::exit_counted`] (see [`enter_counted`]).
#[inline(always)]
fn exit_counted(seq: u64, end: u64) -> bool {
    let hot: *const Hot = HOT.with(|hot| hot as *const Hot);
    // SAFETY: as in `enter_counted`.
    unsafe { &*hot }.exit_counted(seq, end)
}

/// Where `enter` goes when the stack has no room (as in every session
/// that counts): the lean allocation-counting path if it applies, else
/// [`enter_cold`]. Not `#[cold]`: the lean path is a counting session's
/// every call, optimized as such.
#[inline(never)]
fn enter_slow(region: u32, generation: u32) -> u64 {
    // A session counting allocations only: the lean path, if it applies.
    if let Some(seq) = enter_counted(region, generation) {
        return seq;
    }
    enter_cold(region, generation)
}

#[cold]
#[inline(never)]
fn enter_cold(region: u32, generation: u32) -> u64 {
    Cold::with(|cold, hot| {
        if !cold.attach(hot, generation) {
            return 0;
        }
        cold.grow_stack(hot);
        let depth = hot.depth.get();
        let seq = hot.seq.get() + 1;
        hot.seq.set(seq);
        if cold.counting.is_some() {
            cold.count_enter(hot, depth);
        }
        cold.stack[depth] = Open {
            start: ticks(),
            seq,
            region,
        };
        hot.depth.set(depth + 1);
        seq
    })
    .unwrap_or(0)
}

#[inline(always)]
fn exit(seq: u64) {
    let end = ticks();
    HOT.with(|hot| match hot.top() {
        Some(top) if top.seq == seq => {
            let depth = hot.depth.get() - 1;
            let record = Record {
                start: top.start,
                end,
                region: top.region,
                depth: depth as u32,
            };
            hot.depth.set(depth);
            if !hot.push_record(record) {
                hot.depth.set(depth + 1);
                exit_unpushed(seq, end);
            }
        }
        _ => exit_slow(seq, end),
    });
}

/// The exit of the innermost call whose record did not fit the chunk:
/// aggregation mode (no chunk at all: the call is added to the thread's
/// totals here), or a full chunk (`exit_slow`). Out of line and with the
/// arguments of `exit_slow`, so that `exit` keeps its size and is inlined
/// whole (a larger one was not: ~28 instructions more per call). It makes
/// the record again as `exit` does, on purpose: sharing that code with
/// `exit` through a helper was measured to stop `exit` being inlined too.
#[inline(never)]
fn exit_unpushed(seq: u64, end: u64) {
    let aggregated = HOT.with(|hot| match hot.top() {
        Some(top) if top.seq == seq => {
            let depth = hot.depth.get() - 1;
            let record = Record {
                start: top.start,
                end,
                region: top.region,
                depth: depth as u32,
            };
            let done = hot.aggregate(record);
            if done {
                hot.depth.set(depth);
            }
            done
        }
        _ => false,
    });
    if !aggregated {
        exit_slow(seq, end);
    }
}

/// The exit of a call whose guard is not the innermost (dropped out of
/// order, or already ended by an enclosing guard, or another session's), or
/// that needs a new chunk. Closing a call that encloses still-open ones ends
/// them at the same instant, so the nesting stays exact.
/// Not `#[cold]`, like [`enter_slow`].
#[inline(never)]
fn exit_slow(seq: u64, end: u64) {
    if exit_counted(seq, end) {
        return;
    }
    exit_cold(seq, end);
}

#[cold]
#[inline(never)]
fn exit_cold(seq: u64, end: u64) {
    Cold::with(|cold, hot| {
        let open = &cold.stack[..hot.depth.get().min(cold.stack.len())];
        // From the top: a task's stack holds calls of several threads,
        // whose numbers are not in order.
        let Some(pos) = open.iter().rposition(|o| o.seq & !DEFERS == seq) else {
            return;
        };
        while hot.depth.get() > pos {
            cold.close_top(hot, end);
        }
    });
}

/// What an instrumented future carries from poll to poll: its recorder
/// (swapped with the thread's while it is polled), and its task.
pub(crate) struct TaskState {
    generation: u32,
    lane: Option<Arc<Lane>>,
    store: Option<Arc<Store>>,
    chunk: Option<Arc<Chunk>>,
    stack: Vec<Open>,
    id: Option<TaskId>,
    depth: usize,
    len: usize,
    counts: RecCounts,
    /// The task, its end set when it completes.
    pub record: TaskRecord,
    /// The sequence number of the task's own call (depth 0) while it is
    /// open; 0 before its first poll and after it closed.
    pub root: u64,
}

impl TaskState {
    /// The session the task records into.
    pub(crate) fn generation(&self) -> u32 {
        self.generation
    }
}

/// How an instrumented future starts (at its first poll).
pub(crate) enum Start {
    /// A task of its own.
    Task(Box<TaskState>),
    /// A task is being polled on this thread: the future's call nests in it.
    InTask,
    /// Nothing recorded (no session, the recorder busy, calls dropped).
    Off,
}

/// Starts a task of `region` in session `generation` on this thread (its
/// first poll): a private chunk from the store, the next task number;
/// unless a task is being polled here.
pub(crate) fn start_task(generation: u32, region: u32) -> Start {
    let started = Cold::with(|cold, hot| {
        if cold.task.is_some() {
            return Some(Start::InTask);
        }
        if !cold.attach(hot, generation) {
            return None;
        }
        let store = cold.store.clone()?;
        let thread = cold.lane.as_ref()?.index;
        cold.task_state(generation, store, thread, region, false)
            .map(Start::Task)
    })
    .flatten();
    started.unwrap_or(Start::Off)
}

/// Starts a task of `region` in session `generation` on this thread even
/// while another task is polled here (then on the same thread lane): a
/// call that is its own task wherever it starts ([`crate::AsyncCall`]).
pub(crate) fn start_task_here(generation: u32, region: u32) -> Start {
    match start_task(generation, region) {
        Start::InTask => match start_inside(generation, region, false) {
            Some(task) => Start::Task(task),
            None => Start::Off,
        },
        other => other,
    }
}

/// Starts a frame of `region` (a future first polled inside the task or
/// frame being polled on this thread): a recorder of its own while it is
/// polled, whose calls go as one block to the recorder around it when it
/// ends; siblings polled in turn (`join!`, `select!`) each keep theirs.
pub(crate) fn start_frame(generation: u32, region: u32) -> Option<Box<TaskState>> {
    start_inside(generation, region, true)
}

/// A task or frame started while a task of session `generation` is polled
/// on this thread: the polled task lends its store and thread.
fn start_inside(generation: u32, region: u32, frame: bool) -> Option<Box<TaskState>> {
    Cold::with(|cold, hot| {
        let around = cold.task?;
        if hot.generation.get() != generation {
            return None;
        }
        let store = cold.store.clone()?;
        cold.task_state(generation, store, around.thread, region, frame)
    })
    .flatten()
}

/// Runs `f` (a poll) with `task`'s recorder in place of the thread's: every
/// call it makes goes to the task. The thread's is back when `f` returns or
/// unwinds. If the recorder is busy (re-entered), `f` runs as it is.
pub(crate) fn poll_in_task<R>(task: &mut TaskState, f: impl FnOnce() -> R) -> R {
    struct Back<'a> {
        task: &'a mut TaskState,
        swapped: bool,
    }
    impl Drop for Back<'_> {
        fn drop(&mut self) {
            if self.swapped {
                let _ = Cold::with(|cold, hot| cold.swap_task(hot, self.task));
            }
        }
    }
    let swapped = Cold::with(|cold, hot| cold.swap_task(hot, task)).is_some();
    let _back = Back { task, swapped };
    f()
}

/// Ends a task whose own call was closed (in [`poll_in_task`]) at `end`:
/// a task with a lane of its own gives it its record; else its block goes
/// to this thread's tasks lane, and its private chunk back to the store.
/// A frame's calls go under the innermost call around it that contains
/// its whole span ([`Cold::nest`]); with none, it is a task.
pub(crate) fn finish_task(mut task: Box<TaskState>, end: u64) {
    let _quiet = counters::suspend();
    task.record.end = end;
    let frame = task.id.is_some_and(|id| id.frame);
    if let Some(id) = task.id {
        task.record.index = id.index;
    }
    let generation = task.generation;
    let start = task.record.start;
    let mut root = std::mem::take(&mut task.counts.root);
    if let Some(lane) = task.lane.clone() {
        *lock(&lane.exit) = Some((end, -1)); // its last chunk may spill
        if frame {
            let calls = FrameCalls::Lane(Arc::clone(&lane));
            match Cold::with(|cold, hot| cold.nest(hot, generation, start, &root, calls)) {
                Some(Nesting::Placed(_) | Nesting::Deferred) => return,
                // A task of its own, in the file's task table.
                _ => match &task.store {
                    Some(store) => task.record.index = store.next_task_index(),
                    None => return,
                },
            }
        }
        lock(&lane.tasks).push(task.record);
        return;
    }
    let Some(chunk) = task.chunk.take() else {
        return;
    };
    let len = task.len.min(chunk.records().len());
    // A block is the task's calls with its own call last, the only one at
    // depth 0 (a tasks lane is read block by block at depth 0). Without it
    // (the recorder was busy, re-entered, when the task started: as for any
    // call made then) nothing is kept.
    let kept = chunk.records()[..len].last().is_some_and(|r| r.depth == 0);
    // One visit of the recorder: the calls placed (a frame's nested, a
    // task's block appended), then the state kept as the thread's spare
    // for the next task (no allocation then). What is left in the slots
    // afterwards goes back to the store: nothing if the frame waits for
    // an open call (its chunk is held there).
    let (mut chunk_slot, mut task_slot) = (Some(chunk), Some(task));
    let _ = Cold::with(|cold, hot| {
        let (Some(chunk), Some(task)) = (chunk_slot.take(), task_slot.as_mut()) else {
            return;
        };
        let mut alone = kept && !frame;
        let mut chunk = if kept && frame {
            match cold.nest(
                hot,
                generation,
                start,
                &root,
                FrameCalls::Records(chunk, len),
            ) {
                Nesting::Placed(FrameCalls::Records(chunk, _)) => chunk,
                Nesting::Alone(FrameCalls::Records(chunk, _)) => {
                    alone = true;
                    if let Some(store) = &task.store {
                        task.record.index = store.next_task_index();
                    }
                    chunk
                }
                _ => return, // kept until an open call ends
            }
        } else {
            chunk
        };
        if alone {
            cold.append_block(hot, generation, &chunk.records()[..len], task.record);
        }
        let spare = cold.spare.is_none() && hot.generation.get() == generation;
        match Arc::get_mut(&mut chunk) {
            Some(only) if spare => only.clear(),
            _ => {
                chunk_slot = Some(chunk);
                return;
            }
        }
        let Some(mut task) = task_slot.take() else {
            return;
        };
        task.chunk = Some(chunk);
        (task.len, task.depth, task.root, task.id) = (0, 0, 0, None);
        task.counts.active = false;
        task.counts.root = std::mem::take(&mut root);
        task.counts.root.fill(0);
        cold.spare = Some(task);
    });
    if let (Some(chunk), Some(task)) = (chunk_slot, &task_slot)
        && let Some(store) = &task.store
    {
        store.recycle(chunk);
    }
}

/// Opens a call of `region` on this thread's current recorder (the task's
/// while one is polled); returns its sequence number (0: not recording).
pub(crate) fn open(region: u32, generation: u32) -> u64 {
    let guard = enter(region, generation);
    let seq = guard.seq;
    std::mem::forget(guard);
    seq
}

/// The calls open on this thread's current recorder in session
/// `generation`: how many, and the region of the outermost.
pub fn open_calls(generation: u32) -> (usize, Option<u32>) {
    HOT.try_with(|hot| {
        if hot.generation.get() != generation {
            return (0, None);
        }
        let depth = hot.depth.get().min(hot.stack_len.get());
        if depth == 0 {
            return (0, None);
        }
        // SAFETY: `0 < depth <= stack_len`: slot 0 is initialized and inside
        // the live stack buffer, which only this thread touches.
        let bottom = unsafe { hot.stack.get().read() };
        (depth, Some(bottom.region))
    })
    .unwrap_or((0, None))
}

/// Adds call metadata to this thread's lane in session `generation`:
/// `scope` gets the depth of the innermost open call (`None`: none is
/// open) and says which calls the values are for. `false` if nothing was
/// added: no such session, or an instrumented future is being polled here
/// (its calls are in a tasks lane, which metadata does not reach).
pub(crate) fn add_metadata(
    generation: u32,
    scope: impl FnOnce(Option<u32>) -> Option<MetaScope>,
    values: Arc<CallMetadata>,
) -> bool {
    Cold::with(|cold, hot| {
        // Aggregation mode keeps no calls to attach metadata to.
        if cold.task.is_some() || !cold.attach(hot, generation) || cold.agg.is_some() {
            return false;
        }
        let innermost = hot.depth.get().checked_sub(1).map(|d| d as u32);
        let (Some(scope), Some(lane)) = (scope(innermost), &cold.lane) else {
            return false;
        };
        lock(&lane.metadata).push(MetaEntry { scope, values });
        true
    })
    .unwrap_or(false)
}

/// Adds metadata for the call `seq` (from [`open`]), open on this
/// thread's current recorder (a task's while one is polled), to its
/// session's keyed entries: it reaches that call's record by its region
/// and start, wherever the record goes when the call ends. `false` if
/// nothing was added: the call is not open here, or the session keeps no
/// calls (aggregation mode).
pub(crate) fn add_keyed_metadata(seq: u64, values: Arc<CallMetadata>) -> bool {
    if seq == 0 {
        return false;
    }
    Cold::with(|cold, hot| {
        let open = &cold.stack[..hot.depth.get().min(cold.stack.len())];
        let (Some(call), Some(store)) =
            (open.iter().rfind(|o| o.seq & !DEFERS == seq), &cold.store)
        else {
            return false;
        };
        if cold.agg.is_some() {
            return false;
        }
        lock(&store.keyed_metadata).push(KeyedEntry {
            region: call.region,
            start: call.start,
            values,
        });
        true
    })
    .unwrap_or(false)
}

/// Closes the call `open` returned, and any opened after it.
pub(crate) fn close(seq: u64) {
    if seq != 0 {
        exit(seq);
    }
}

/// A call in progress: the region's call ends when the guard is dropped.
///
/// Guards belong to the stack of the thread that made them (they are not
/// `Send`). Dropping them out of order is safe: the calls they enclose end
/// at the same instant.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
/// {
///     let _outer = sp::region("outer").enter();
///     let _inner = sp::region("inner").enter();
/// } // inner ends, then outer
/// assert_eq!(sp::get_region("inner").unwrap().num_calls(), 1);
/// sp::finalize().unwrap();
/// ```
#[must_use = "the call ends when the guard is dropped: bind it with `let _g = ...`"]
pub struct Guard {
    seq: u64,
    _not_send: PhantomData<*const ()>,
}

impl Guard {
    /// A guard that records nothing (no session, or profiling disabled).
    ///
    /// ```
    /// let g = scope_profiler::Guard::inert();
    /// assert!(!g.is_recording());
    /// ```
    #[inline(always)]
    pub const fn inert() -> Guard {
        Guard {
            seq: 0,
            _not_send: PhantomData,
        }
    }

    /// Whether this guard's call will be recorded when it is dropped.
    #[inline(always)]
    ///
    /// ```
    /// use scope_profiler as sp;
    /// // Before setup, regions record nothing.
    /// assert!(!sp::region("early").enter().is_recording());
    /// ```
    pub fn is_recording(&self) -> bool {
        self.seq != 0
    }
}

impl Drop for Guard {
    #[inline(always)]
    fn drop(&mut self) {
        if self.seq != 0 {
            exit(self.seq);
        }
    }
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("recording", &self.is_recording())
            .finish()
    }
}

#[cfg(test)]
mod tests;
