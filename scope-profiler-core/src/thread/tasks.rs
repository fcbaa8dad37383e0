//! Instrumented futures' recorders: a task's or frame's state
//! ([`TaskState`], swapped with the thread's while it is polled), how it
//! starts, its private chunk growing into a lane of its own.

use std::sync::Arc;

use super::counting::RecCounts;
use super::lazy::{Below, lazy_in, lazy_out};
use super::{COLD, Cold, HOT, Hot};
use crate::clock::ticks;
use crate::lane::{Lane, Segment, TaskRecord};
use crate::open::Stack;
use crate::record::Chunk;
use crate::sampling::PollLog;
use crate::store::Store;
use crate::sync::lock;

/// A task: its number and its first thread's lane index.
#[derive(Clone, Copy)]
pub(super) struct TaskId {
    pub(super) index: u32,
    pub(super) thread: u32,
    /// A future polled inside a task (a frame of it): its calls go as one
    /// block to the recorder around it when it ends, not to a lane.
    pub(super) frame: bool,
}

/// A sampled session's log of a thread's polls of tasks, and the task it
/// polls now with the ticks its poll started at.
pub(super) struct Polling {
    pub(super) log: Arc<PollLog>,
    pub(super) open: Option<(u32, u64)>,
}

#[cfg(test)]
thread_local! {
    /// Full swaps (`Cold::swap_task`) made on this thread, for the tests
    /// that assert a path without one.
    pub(super) static FULL_SWAPS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Records a task's private chunk holds; a task with more gets a lane of
/// its own.
pub(super) const TASK_CHUNK: usize = 64;

/// What an instrumented future carries from poll to poll: its recorder
/// (swapped with the thread's while it is polled), and its task.
pub(crate) struct TaskState {
    pub(super) generation: u32,
    pub(super) lane: Option<Arc<Lane>>,
    pub(super) store: Option<Arc<Store>>,
    pub(super) chunk: Option<Arc<Chunk>>,
    pub(super) stack: Stack,
    pub(super) id: Option<TaskId>,
    pub(super) depth: usize,
    pub(super) len: usize,
    pub(super) counts: RecCounts,
    /// The task, its end set when it completes.
    pub record: TaskRecord,
    /// The sequence number of the task's own call (depth 0) while it is
    /// open; 0 before its first poll and after it closed.
    pub root: u64,
    /// A frame's: the start of the own call of the recorder it was first
    /// polled in, and that recorder's depth then (0: unknown).
    pub(super) parent: (u64, u32),
    /// While it is lazily polled (see `lazy`), what its recorder took the
    /// place of.
    pub(super) below: Below,
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

/// The state of a new task (or, with `frame`, a frame of the task being
/// polled) of `region` first polled on the thread of lane `thread`: the
/// state the last finished one left in `spare` if it is of this session (no
/// allocation), else a new one with a private chunk from `store`.
pub(super) fn task_state(
    spare: &mut Option<Box<TaskState>>,
    generation: u32,
    store: Arc<Store>,
    thread: u32,
    region: u32,
    frame: bool,
) -> Option<Box<TaskState>> {
    let spare = spare.take().filter(|s| s.generation == generation);
    let mut task = match spare {
        Some(spare) => spare,
        None => {
            let chunk = store.new_task_chunk(TASK_CHUNK)?;
            Box::new(TaskState {
                generation,
                lane: None,
                store: Some(Arc::clone(&store)),
                chunk: Some(chunk),
                stack: Stack::none(),
                id: None,
                depth: 0,
                len: 0,
                counts: RecCounts::default(),
                record: TaskRecord::default(),
                root: 0,
                parent: (0, 0),
                below: Below::NONE,
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
    let start = ticks();
    // A task's stack, listed for the live server from its first poll on
    // (a frame's is not a task: its calls show in its task's).
    if !frame && task.stack.len() == 0 {
        task.stack.grow(16);
    }
    if let Some(stack) = task.stack.stack() {
        stack.set_task((!frame).then_some((index, thread, start)));
        // A recorder kept from the last task is listed already.
        if !frame && !stack.registered.load(std::sync::atomic::Ordering::Relaxed) {
            store.register_task_stack(stack);
        }
    }
    task.record = TaskRecord {
        index,
        start,
        end: 0,
        region,
        first_lane: thread,
        polls: 0,
        running: 0,
    };
    Some(task)
}

impl Cold {
    /// A task being polled whose private chunk is full gets a lane of its
    /// own, which starts with that chunk. A frame grows its chunk first, up
    /// to the store's chunk size; past it (or with `force`), it gets a lane
    /// too, which is no lane of the file: when the frame ends, that lane is
    /// placed in the recorder around it (`Store::splice`), so a large
    /// future stays under the call that awaits it.
    pub(super) fn graduate(&mut self, hot: &Hot, force: bool) {
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
                // The chunk lent while it waited goes: the bigger one is
                // lent when it next waits.
                self.stack.take_back();
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
        // Its records go to its lane, where a live reader folds them: the
        // chunk lent while it waited is taken back first (counted once).
        self.stack.take_back();
        let lane = store.register_tasks_lane(task.thread, (!task.frame).then_some(task.index));
        if let Some(chunk) = &self.chunk {
            lock(&lane.segments).push(Segment::Memory(Arc::clone(chunk)));
        }
        self.lane = Some(lane);
    }

    /// Swaps the task's recorder with the thread's (twice: back).
    pub(super) fn swap_task(&mut self, hot: &Hot, task: &mut TaskState) {
        #[cfg(test)]
        FULL_SWAPS.with(|n| n.set(n.get() + 1));
        // The stack that leaves says how deep it was left; the one that
        // comes in is being polled (see `open`).
        self.stack.end_poll(hot.depth.get());
        self.swap_counts(hot, task);
        self.swap_recorder(hot, task);
        self.stack.begin_poll();
        if self.polls.is_some() {
            self.log_poll(task.id);
        }
    }

    /// The recorder itself swapped: lane, store, chunk, stack and task, and
    /// the hot half's depth, length and session.
    pub(super) fn swap_recorder(&mut self, hot: &Hot, task: &mut TaskState) {
        self.swap_owned(task);
        let (depth, len, generation) = (hot.depth.get(), hot.len.get(), hot.generation.get());
        hot.depth.set(task.depth);
        hot.len.set(task.len);
        hot.generation.set(task.generation);
        (task.depth, task.len, task.generation) = (depth, len, generation);
    }

    /// `Cold`'s half of [`Cold::swap_recorder`]: the lane, store, chunk,
    /// stack and task it owns (also `Cold::settle`'s, after a lazy poll).
    pub(super) fn swap_owned(&mut self, task: &mut TaskState) {
        std::mem::swap(&mut self.lane, &mut task.lane);
        std::mem::swap(&mut self.store, &mut task.store);
        std::mem::swap(&mut self.chunk, &mut task.chunk);
        std::mem::swap(&mut self.stack, &mut task.stack);
        std::mem::swap(&mut self.task, &mut task.id);
    }

    /// In a sampled session, the swap that brought task `self.task` in
    /// place of `leaving`: the poll of the one ends, the other's starts.
    /// A frame's polls are its task's.
    #[cold]
    #[inline(never)]
    fn log_poll(&mut self, leaving: Option<TaskId>) {
        let arriving = self.task;
        if arriving.is_some_and(|t| t.frame) || leaving.is_some_and(|t| t.frame) {
            return;
        }
        let Some(polling) = self.polls.as_mut() else {
            return;
        };
        let now = ticks();
        let ended = polling.open.take();
        polling.open = arriving.map(|task| (task.index, now));
        polling.log.switch(ended, arriving.map(|t| t.index), now);
    }
}

/// Starts a task of `region` in session `generation` on this thread (its
/// first poll): a private chunk from the store, the next task number;
/// unless a task is being polled here.
pub(crate) fn start_task(generation: u32, region: u32) -> Start {
    // On a thread attached to the session, nothing lent to the hot half
    // changes: no disarming (`Cold::with_unlent`).
    let light = Cold::with_unlent(|u, hot| {
        if hot.spec_seq.get() != 0 {
            // A speculative first poll in progress: `Cold::with` makes it
            // a task first, and this one a frame of it.
            return None;
        }
        if u.task.is_some() {
            return Some(Some(Start::InTask));
        }
        if hot.generation.get() != generation {
            return None; // to attach first
        }
        let (Some(store), Some(thread)) = (u.store, u.lane) else {
            return Some(None);
        };
        let task = task_state(
            u.spare,
            generation,
            Arc::clone(store),
            thread,
            region,
            false,
        );
        Some(task.map(Start::Task))
    });
    let started = match light {
        Some(Some(started)) => started,
        Some(None) => Cold::with(|cold, hot| {
            if cold.task.is_some() {
                return Some(Start::InTask);
            }
            if !cold.attach(hot, generation) {
                return None;
            }
            let store = cold.store.clone()?;
            let thread = cold.lane.as_ref()?.index;
            task_state(&mut cold.spare, generation, store, thread, region, false).map(Start::Task)
        })
        .flatten(),
        None => None,
    };
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
        // Where a frame nests, for the live server to place its stack.
        let parent = match cold.stack.get(0) {
            Some(own) if frame => (own.start, u32::try_from(hot.depth.get()).unwrap_or(0)),
            _ => (0, 0),
        };
        let mut task = task_state(
            &mut cold.spare,
            generation,
            store,
            around.thread,
            region,
            frame,
        )?;
        task.parent = parent;
        Some(task)
    })
    .flatten()
}

/// A task's (or frame's) poll ended and it waits. For a live reader (if
/// the store has one), a frame's stack is listed (a task's is from its
/// start), and the calls it finished so far, which are in no lane until
/// it ends or outgrows its private chunk, are lent (`OpenStack::lend`).
#[inline]
pub(crate) fn lend_waiting(task: &TaskState) {
    if task.len != 0 || task.id.is_some_and(|id| id.frame) {
        lend_records(task);
    }
}

#[inline(never)]
fn lend_records(task: &TaskState) {
    let (Some(store), Some(stack), Some(id)) = (&task.store, task.stack.stack(), task.id) else {
        return;
    };
    if !store.watched() {
        return;
    }
    if id.frame && !stack.listed() && task.parent.0 != 0 {
        stack.set_frame(id.thread, task.record.start, task.parent, task.depth);
        store.register_task_stack(stack);
    }
    if let (Some(chunk), None, false) = (&task.chunk, &task.lane, stack.lent())
        && task.len != 0
    {
        stack.lend(Some((task.record.start, Arc::clone(chunk))));
    }
}

/// Runs `f` (a poll) with `task`'s recorder in place of the thread's: every
/// call it makes goes to the task. The thread's is back when `f` returns or
/// unwinds. The swap is lazy where it can be (`lazy`: the hot half only),
/// else full. If the recorder is busy (re-entered), `f` runs as it is.
pub(crate) fn poll_in_task<R>(task: &mut TaskState, f: impl FnOnce() -> R) -> R {
    /// The task, reached only through this pointer until the poll ends
    /// (a lazy swap keeps a copy of it in the hot half, for `Cold` to
    /// settle with).
    struct Back {
        task: *mut TaskState,
        swapped: bool,
    }
    impl Drop for Back {
        fn drop(&mut self) {
            if self.swapped {
                // SAFETY: from the `&mut TaskState` `poll_in_task` holds
                // for the whole poll and does not use otherwise; the
                // pointers derived from it (the hot half's) are not used
                // past this swap back, which ends the lazy poll or finds
                // it settled.
                let task = unsafe { &mut *self.task };
                if !lazy_out(task) {
                    swap(task);
                }
            }
        }
    }
    let task: *mut TaskState = task;
    // SAFETY: as in `Back::drop`: the only use of the borrow until then.
    let in_task = unsafe { &mut *task };
    let swapped = lazy_in(in_task) || swap(in_task);
    let _back = Back { task, swapped };
    f()
}

/// Swaps `task`'s recorder with the current one: without disarming the
/// hot half where it can (`Cold::swap_light`), else through `Cold::with`.
/// `false` if the recorder is busy (re-entered) or gone.
#[inline]
fn swap(task: &mut TaskState) -> bool {
    let light = COLD
        .try_with(|cold| {
            let mut cold = cold.try_borrow_mut().ok()?;
            Some(HOT.with(|hot| {
                // A task lazily polled around this one: `Cold` catches up.
                cold.settle(hot);
                cold.swap_light(hot, task)
            }))
        })
        .ok()
        .flatten();
    match light {
        Some(true) => true,
        Some(false) => Cold::with(|cold, hot| cold.swap_task(hot, task)).is_some(),
        None => false,
    }
}
