//! The owning half of a thread's recorder ([`Cold`]), reached on slow
//! paths only: joining a session, growing the stack, the next chunk, a
//! record stored (or aggregated, or counted as dropped) there, the end of
//! the innermost call, the thread's exit.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::counting::{Counting, RecCounts};
use super::finish::TasksLane;
use super::frames::{DEFERS, Deferred, FrameCalls};
use super::tasks::{Polling, TaskId, TaskState};
use super::{COLD, FIRST_CHUNK, HOT, Hot, SEQ_BASES};
use crate::active;
use crate::clock::{thread_cpu_ns, ticks};
use crate::counters;
use crate::lane::{AggTable, Lane, LaneKind, Segment};
use crate::lanemeta::MetaBlock;
use crate::open::Stack;
use crate::record::{Chunk, Record};
use crate::store::Store;
use crate::sync::lock;

/// The owning half of a thread's recorder, used on slow paths only.
///
/// While an instrumented future is polled, `lane`, `store`, `chunk`,
/// `stack` and `task` are the future's (see [`poll_in_task`](super::poll_in_task)); the rest is
/// the thread's own.
pub(super) struct Cold {
    pub(super) lane: Option<Arc<Lane>>,
    pub(super) store: Option<Arc<Store>>,
    pub(super) chunk: Option<Arc<Chunk>>,
    pub(super) stack: Stack,
    /// The task being polled, if one is.
    pub(super) task: Option<TaskId>,
    /// The thread's tasks lane: the blocks of the tasks it completed.
    pub(super) tasks: Option<TasksLane>,
    /// The state of the last task completed here, for the next one.
    pub(super) spare: Option<Box<TaskState>>,
    /// Aggregation mode: the thread's totals (also in its lane) and the
    /// children's time per depth (see `Hot`).
    pub(super) agg: Option<Arc<AggTable>>,
    pub(super) kids: Vec<u64>,
    /// The current recorder's counter state (a task's while one is polled).
    pub(super) counts: RecCounts,
    /// The thread's counting in a session that counts (see `counters`).
    pub(super) counting: Option<Box<Counting>>,
    /// Finished frames waiting for an open call of the current recorder to
    /// end. The thread's own, not swapped with a task's: the call waited
    /// for is a sync call of this poll, or a guard held across an `.await`
    /// (not `Send`: its future stays on this thread), never a task's or a
    /// frame's own call, which may move (see `Cold::nest`); its sequence
    /// number, this thread's, names it.
    pub(super) deferred: Vec<Deferred>,
    /// The session this thread attached to and its own lane's index (kept
    /// while a task's recorder takes the thread's place).
    pub(super) own: Option<(u32, u32)>,
    /// The thread's block of one-value metadata scopes being filled (also
    /// in its own lane), lent to `Hot` while no task is polled.
    pub(super) meta: Option<Arc<MetaBlock>>,
    /// In a sampled session: the log of the thread's polls of tasks (see
    /// `Cold::swap_task`).
    pub(super) polls: Option<Box<Polling>>,
    /// The private chunk a speculative first poll records into (see
    /// `spec`), lent to `Hot` while speculation is allowed.
    pub(super) spec_chunk: Option<Arc<Chunk>>,
    /// Speculative first polls made tasks (or frames) before they ended
    /// (`Cold::convert_spec`), innermost last: each holds the recorder
    /// its task took the place of, until its poll ends.
    pub(super) converted: Vec<(u64, Box<TaskState>)>,
}

/// What `Cold` never lends to the hot half, for [`Cold::with_unlent`]:
/// the spare task state, the tasks lane, and (read only) the store, the
/// current lane's index and the task being polled.
pub(super) struct Unlent<'a> {
    pub(super) spare: &'a mut Option<Box<TaskState>>,
    pub(super) tasks: &'a mut Option<TasksLane>,
    pub(super) store: Option<&'a Arc<Store>>,
    pub(super) lane: Option<u32>,
    pub(super) task: Option<TaskId>,
}

/// Lends the hot half a recorder's stack (to the fast paths too if
/// `fast`) and chunk.
///
/// # Safety
/// `stack`'s slots and `chunk` stay allocated and in place, written by this
/// thread only, until the hot half is disarmed or lent another recorder's.
#[inline(always)]
pub(super) unsafe fn lend_stack_and_chunk(
    hot: &Hot,
    stack: &Stack,
    chunk: Option<&Arc<Chunk>>,
    fast: bool,
) {
    let slots = stack.slots();
    let (ptr, len) = (slots.as_ptr().cast_mut(), slots.len());
    // SAFETY: by the contract, `len` slots of atomics, kept in place; other
    // threads only read them (`OpenSlot::read`).
    unsafe {
        hot.stack.lend(ptr, len);
        hot.fast_stack.lend(ptr, if fast { len } else { 0 });
    }
    match chunk {
        Some(chunk) => {
            hot.chunk.set(Arc::as_ptr(chunk));
            hot.cap.set(chunk.capacity());
        }
        None => hot.cap.set(0),
    }
}

impl Cold {
    /// Runs `f` on this thread's cold recorder with the fast paths disarmed,
    /// then re-arms them from what `Cold` owns. `None` if the recorder is
    /// busy (re-entered) or gone (thread exit).
    pub(super) fn with<R>(f: impl FnOnce(&mut Cold, &Hot) -> R) -> Option<R> {
        Cold::visit(true, f)
    }

    /// [`Cold::with`], which makes a speculation in progress a task first
    /// only if `convert` (else `f` does what it needs).
    pub(super) fn visit<R>(convert: bool, f: impl FnOnce(&mut Cold, &Hot) -> R) -> Option<R> {
        // The recorder's own allocations are never counted.
        let _quiet = counters::suspend();
        COLD.try_with(|cold| {
            let mut cold = cold.try_borrow_mut().ok()?;
            HOT.with(|hot| {
                hot.disarm();
                // A task lazily polled: `Cold` catches up with it first.
                cold.settle(hot);
                // A speculative first poll in progress becomes a task
                // first: `f` may need one, or let go of its chunk.
                if convert && hot.spec_seq.get() != 0 {
                    cold.convert_spec(hot);
                }
                let result = f(&mut cold, hot);
                cold.arm(hot);
                Some(result)
            })
        })
        .ok()
        .flatten()
    }

    /// Runs `f` on the parts of this thread's cold recorder that it never
    /// lends to the hot half ([`Unlent`]), without disarming it and arming
    /// it again (a task polled once: 1446 to 1286 instructions for its two
    /// such visits, callgrind): a task's start on a
    /// thread already attached, a task's block appended to the thread's
    /// tasks lane. What is lent stays in place meanwhile (`f` cannot reach
    /// it), so a re-entrant call (an instrumented allocator) takes the
    /// fast paths on it, or finds `Cold` busy. `None` if the recorder is
    /// busy or gone.
    pub(super) fn with_unlent<R>(f: impl FnOnce(Unlent<'_>, &Hot) -> R) -> Option<R> {
        let _quiet = counters::suspend();
        COLD.try_with(|cold| {
            let mut cold = cold.try_borrow_mut().ok()?;
            let cold = &mut *cold;
            // The task being polled, lazily polled: `Cold` catches up.
            HOT.with(|hot| cold.settle(hot));
            let unlent = Unlent {
                spare: &mut cold.spare,
                tasks: &mut cold.tasks,
                store: cold.store.as_ref(),
                lane: cold.lane.as_ref().map(|l| l.index),
                task: cold.task,
            };
            HOT.with(|hot| Some(f(unlent, hot)))
        })
        .ok()
        .flatten()
    }

    /// Lends the hot half this recorder's stack, chunk and (aggregation
    /// mode) totals. Called with the hot half disarmed (`Cold::with`).
    ///
    /// What is lent stays in place until the hot half is disarmed again:
    /// `Cold` changes its stack, counts, table or kids only inside
    /// `Cold::with` (which disarms first, then calls this), in
    /// `Cold::aggregate` (which disarms before it returns), in
    /// `Cold::swap_light` (which lends the recorder it swaps in at once,
    /// running no other code in between; the one swapped out stays
    /// allocated, in the task) and in its drop (which disarms first).
    pub(super) fn arm(&mut self, hot: &Hot) {
        // A session that counts takes the slow paths, which count: the
        // fast ones stay as they are without counters.
        let counting = self.store.as_ref().is_some_and(|s| s.counters().is_some());
        self.lend_recorder(hot, counting);
        self.arm_counted(hot);
        self.arm_spec(hot, counting);
        match &self.agg {
            Some(table) => {
                let entries = &table.entries;
                // SAFETY: the entries of the table `Cold` holds (an `Arc`,
                // kept until the next disarm), atomics; and this thread's
                // own `kids`, not touched by `Cold` until then.
                unsafe {
                    hot.agg.lend(entries.as_ptr().cast_mut(), entries.len());
                    hot.kids.lend(self.kids.as_mut_ptr(), self.kids.len());
                }
            }
            None => {
                hot.agg.withdraw();
                hot.kids.withdraw();
            }
        }
    }

    /// Lends the hot half the current recorder's stack (the fast paths get
    /// none while the session `counting`), chunk and, on the thread's own
    /// recorder, its metadata rows (see `arm` for how long they stay).
    fn lend_recorder(&mut self, hot: &Hot, counting: bool) {
        // The fast paths read the clock unchecked (`clock::fast_ticks`):
        // no stack for them where that read is not the session clock.
        let fast = !counting && crate::clock::fast_ticks_valid();
        // SAFETY: the current stack and chunk, which `Cold` holds (`Arc`s)
        // and does not replace until the next disarm or lend (see `arm`).
        unsafe { lend_stack_and_chunk(hot, &self.stack, self.chunk.as_ref(), fast) };
        // A task's (or frame's) stack says when it is polled; a thread's
        // is read without (see `open`).
        let marks = match (self.task, self.stack.stack()) {
            (Some(_), Some(stack)) => Arc::as_ptr(stack),
            _ => std::ptr::null(),
        };
        hot.marks.set(marks);
        match (&self.meta, self.task) {
            (Some(block), None) => {
                let rows = block.rows();
                // SAFETY: the rows of the block `Cold` holds (an `Arc`,
                // kept until the next disarm), atomics.
                unsafe { hot.meta.lend(rows.as_ptr().cast_mut(), rows.len()) };
            }
            _ => hot.meta.withdraw(),
        }
    }

    /// Swaps the task's recorder with the current one (see
    /// `Cold::swap_task`) without disarming the hot half: only what the
    /// swap changes is lent again (stack, chunk, metadata rows). `false`
    /// (nothing done) unless both are of the thread's session, which
    /// neither counts nor samples nor aggregates, and no speculative first
    /// poll is in progress: `Cold::with` then.
    pub(super) fn swap_light(&mut self, hot: &Hot, task: &mut TaskState) -> bool {
        if task.generation != hot.generation.get()
            || hot.spec_seq.get() != 0
            || self.counting.is_some()
            || self.polls.is_some()
            || self.agg.is_some()
            || self.store.as_ref().is_none_or(|s| s.counters().is_some())
        {
            return false;
        }
        self.stack.end_poll(hot.depth.get());
        std::mem::swap(&mut self.counts, &mut task.counts);
        self.swap_recorder(hot, task);
        self.stack.begin_poll();
        self.lend_recorder(hot, false);
        true
    }

    /// Points the lean allocation-counting path at this recorder's counts
    /// and the thread's table, when it applies (see `Hot::count_fast`).
    pub(super) fn arm_counted(&mut self, hot: &Hot) {
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
        let (snaps, values) = (&mut self.counts.snaps, &c.table.values);
        // SAFETY: `snaps`, this recorder's own counts (4 a depth: `lean`),
        // not touched by `Cold` until the next disarm (see `Cold::arm`);
        // the rows of the thread's table (9 atomics each: `lean`), which
        // `Cold` holds (an `Arc`) until then.
        unsafe {
            hot.snaps
                .lend(snaps.as_mut_ptr().cast::<[u64; 4]>(), snaps.len() / 4);
            hot.table.lend(
                values.as_ptr().cast::<[AtomicU64; 9]>().cast_mut(),
                values.len() / 9,
            );
        }
        hot.count_fast.set(true);
    }

    /// Aggregation mode: adds `record` to the totals, growing the table or
    /// the counters first if they are too small; `false` when the thread is
    /// not aggregating.
    pub(super) fn aggregate(&mut self, hot: &Hot, record: Record) -> bool {
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
        let depth = record.depth() as usize;
        if depth + 1 >= self.kids.len() {
            self.kids.resize((depth + 2).next_power_of_two().max(64), 0);
        }
        self.arm(hot);
        let done = hot.aggregate(record);
        hot.disarm();
        done
    }

    /// Joins the session `generation`: a new lane, an empty stack.
    pub(super) fn attach(&mut self, hot: &Hot, generation: u32) -> bool {
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
        hot.late_len.set(0);
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
        // A stack of the lane's own, which the live server may read.
        self.stack.renew(self.stack.len().max(64));
        *lock(&lane.open) = self.stack.shared();
        // The thread's sampling event, once per session (its samples are
        // given to this lane's calls at the cut, or to the tasks polled
        // here, which it logs).
        self.polls = store.sampling().map(|sampling| {
            sampling.open_thread(lane.index);
            Box::new(Polling {
                log: sampling.poll_log(lane.index),
                open: None,
            })
        });
        // The session's chunk for speculative first polls (see `spec`).
        self.spec_chunk = store.new_task_chunk(super::tasks::TASK_CHUNK);
        self.lane = Some(lane);
        self.store = Some(store);
        self.chunk = None;
        self.meta = None;
        self.ensure_counting(generation);
        true
    }

    /// The depth of the call `seq` among the calls open on the current
    /// recorder, if it is open. From the top: a task's stack holds calls of
    /// several threads, whose numbers are not in order.
    pub(super) fn open_depth(&self, hot: &Hot, seq: u64) -> Option<usize> {
        self.stack
            .calls(hot.depth.get())
            .rposition(|o| o.seq & !DEFERS == seq)
    }

    /// Appends a one-value metadata scope to the thread's block, a new one
    /// if it is full (or there is none); `false` if the thread cannot
    /// record in session `generation`, a task is being polled (scopes do
    /// not reach its calls) or the session aggregates.
    pub(super) fn push_meta(&mut self, hot: &Hot, generation: u32, row: [u64; 4]) -> bool {
        if self.task.is_some() || !self.attach(hot, generation) || self.agg.is_some() {
            return false;
        }
        if self.meta.as_ref().is_some_and(|block| block.push(row)) {
            return true;
        }
        let Some(lane) = &self.lane else {
            return false;
        };
        let block = Arc::new(MetaBlock::new());
        let pushed = block.push(row);
        lock(&lane.meta_blocks).push(Arc::clone(&block));
        self.meta = Some(block);
        pushed
    }

    /// Makes room for one more open call.
    pub(super) fn grow_stack(&mut self, hot: &Hot) {
        let depth = hot.depth.get();
        if depth >= self.stack.len() {
            self.stack.grow((self.stack.len() * 2).max(64));
            // The thread's own stack (not a task's polled here): its lane
            // shows the new one.
            match (self.task, &self.lane) {
                (None, Some(lane)) if lane.kind == LaneKind::Thread => {
                    *lock(&lane.open) = self.stack.shared();
                }
                // A task's, or a frame's listed for a live reader.
                (Some(task), _)
                    if !task.frame || self.stack.stack().is_some_and(|s| s.listed()) =>
                {
                    if let (Some(store), Some(stack)) = (&self.store, self.stack.stack()) {
                        store.register_task_stack(stack);
                    }
                }
                _ => {}
            }
        }
    }

    /// Replaces the full (or missing) current chunk by a new one, if the
    /// store hands one out (see `Store::new_chunk`); else leaves none.
    pub(super) fn next_chunk(&mut self, hot: &Hot) {
        if self.lane.is_none() {
            self.graduate(hot, false);
            if self.lane.is_none() && self.task.is_some_and(|t| t.frame) {
                return; // the frame's chunk grew: `close_top` pushes there
            }
        }
        let (Some(lane), Some(store)) = (&self.lane, &self.store) else {
            return;
        };
        if lane.is_stopped() {
            // A call was dropped here: nothing more is recorded in the lane.
            self.chunk = None;
            hot.len.set(0);
            return;
        }
        let previous = self.chunk.as_ref().map_or(0, |c| c.capacity());
        let cap = (previous * 2).clamp(FIRST_CHUNK, store.max_chunk().max(FIRST_CHUNK));
        // No record of the new chunk ended late (see `Hot::last_end`).
        hot.late_len.set(0);
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

    /// Stores `record` in the current chunk (a new one if it is full), or
    /// counts it as dropped if there is no room.
    pub(super) fn push_record(&mut self, hot: &Hot, record: Record) {
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
                    lane.stop_recording();
                    store.note_drop();
                }
            }
        }
    }

    /// Ends the innermost open call at `end` and records it.
    pub(super) fn close_top(&mut self, hot: &Hot, end: u64) {
        let depth = hot.depth.get();
        let Some(open) = depth.checked_sub(1).and_then(|d| self.stack.get(d)) else {
            return;
        };
        hot.depth.set(depth - 1);
        if self.counting.is_some() {
            self.count_exit(hot, depth - 1, open.region);
        }
        let record = Record::new(open.start, end, open.region, (depth - 1) as u32);
        self.push_record(hot, record);
        if open.seq & DEFERS != 0 {
            self.place_deferred(hot, open.seq & !DEFERS);
            // The last record is the frames', which ended before `end`.
            if let Some(chunk) = &self.chunk {
                hot.late_chunk.set(Arc::as_ptr(chunk));
                hot.late_len.set(hot.len.get());
                hot.late_end.set(end);
            }
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
            // The thread is gone: nothing of it is open now.
            *lock(&lane.open) = None;
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
