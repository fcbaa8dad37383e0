//! A task's end ([`finish_task`]): its block of records to the thread's
//! tasks lane ([`TasksLane`], `Cold::append_block`), a frame's calls to the
//! recorder around it, its state kept as the thread's spare.

use std::sync::Arc;

use super::frames::{FrameCalls, Nesting};
use super::tasks::TaskState;
use super::{Cold, FIRST_CHUNK, Hot};
use crate::counters;
use crate::lane::{Lane, Segment, TaskRecord};
use crate::record::{Chunk, Record};
use crate::store::Store;
use crate::sync::lock;

/// A thread's tasks lane and the chunk its blocks go to.
pub(super) struct TasksLane {
    pub(super) generation: u32,
    pub(super) lane: Arc<Lane>,
    pub(super) chunk: Option<Arc<Chunk>>,
    pub(super) len: usize,
}

impl Cold {
    /// Appends a completed task's block of records (its depth-0 call last)
    /// to this thread's tasks lane, with the task, in one step for cuts;
    /// or, if there is no room for all of it, counts its calls as dropped.
    pub(super) fn append_block(
        &mut self,
        hot: &Hot,
        generation: u32,
        records: &[Record],
        task: TaskRecord,
    ) {
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
        if let (Some(store), Some(tasks)) = (&self.store, &mut self.tasks) {
            tasks.append(store, records, task);
        }
    }
}

impl TasksLane {
    /// Appends a completed task's block of records (its depth-0 call last)
    /// with the task, in one step for cuts; or, if there is no room for
    /// all of it, counts its calls as dropped.
    pub(super) fn append(&mut self, store: &Store, records: &[Record], task: TaskRecord) {
        let tasks = self;
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
}

/// Ends a task whose own call was closed (in [`poll_in_task`](super::poll_in_task)) at `end`:
/// a task with a lane of its own gives it its record; else its block goes
/// to this thread's tasks lane, and its private chunk back to the store.
/// A frame's calls go under the innermost call around it that contains
/// its whole span ([`Cold::nest`]); with none, it is a task.
pub(crate) fn finish_task(mut task: Box<TaskState>, end: u64) {
    let _quiet = counters::suspend();
    // The calls lent to a live reader while the task waited are taken back
    // before they go to a lane (a reader counts them once).
    task.stack.take_back();
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
    let kept = chunk.records()[..len]
        .last()
        .is_some_and(|r| r.depth() == 0);
    // One visit of the recorder: the calls placed (a frame's nested, a
    // task's block appended), then the state kept as the thread's spare
    // for the next task (no allocation then). What is left in the slots
    // afterwards goes back to the store: nothing if the frame waits for
    // an open call (its chunk is held there). A task's visit, on the
    // thread of its session with no task polled around it, leaves the
    // hot half armed (`Cold::with_unlent`).
    let (mut chunk_slot, mut task_slot) = (Some(chunk), Some(task));
    let light = !frame
        && Cold::with_unlent(|u, hot| {
            let attached = u.task.is_none() && hot.generation.get() == generation;
            let (true, Some(store), Some(tasks)) = (attached, u.store, u.tasks.as_mut()) else {
                return false;
            };
            if tasks.generation != generation {
                return false;
            }
            let Some(chunk) = chunk_slot.take() else {
                return false;
            };
            if let (true, Some(task)) = (kept, &task_slot) {
                tasks.append(store, &chunk.records()[..len], task.record);
            }
            match keep_spare(u.spare.is_none(), chunk, &mut task_slot, &mut root) {
                Ok(spare) => *u.spare = Some(spare),
                Err(chunk) => chunk_slot = Some(chunk),
            }
            true
        }) == Some(true);
    if !light {
        let _ = Cold::with(|cold, hot| {
            let (Some(chunk), Some(task)) = (chunk_slot.take(), task_slot.as_mut()) else {
                return;
            };
            let mut alone = kept && !frame;
            let chunk = if kept && frame {
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
            let keep = cold.spare.is_none() && hot.generation.get() == generation;
            match keep_spare(keep, chunk, &mut task_slot, &mut root) {
                Ok(spare) => cold.spare = Some(spare),
                Err(chunk) => chunk_slot = Some(chunk),
            }
        });
    }
    if let (Some(chunk), Some(task)) = (chunk_slot, &task_slot)
        && let Some(store) = &task.store
    {
        store.recycle(chunk);
    }
}

/// The finished task's state, to be kept as its thread's spare for the
/// next task (no allocation then) if `keep` (the thread has none, and is
/// of the task's session): its chunk cleared for it, its counts zeroed.
/// Else (or if a live reader still holds the chunk) the chunk back, for
/// the store.
fn keep_spare(
    keep: bool,
    mut chunk: Arc<Chunk>,
    task_slot: &mut Option<Box<TaskState>>,
    root: &mut Vec<u64>,
) -> Result<Box<TaskState>, Arc<Chunk>> {
    if !keep {
        return Err(chunk);
    }
    match Arc::get_mut(&mut chunk) {
        Some(only) => only.clear(),
        None => return Err(chunk),
    }
    let Some(mut task) = task_slot.take() else {
        return Err(chunk);
    };
    task.chunk = Some(chunk);
    (task.len, task.depth, task.root, task.id) = (0, 0, 0, None);
    task.counts.active = false;
    task.counts.root = std::mem::take(root);
    task.counts.root.fill(0);
    Ok(task)
}
