//! The calls open now: a recorder's stack of open calls (`OpenStack`),
//! in slots of atomics that its thread writes on every enter and another
//! thread (the live server) may read at any time.
//!
//! The recording thread alone writes a stack, with relaxed stores that
//! compile to the plain stores of a plain struct (x86-64, AArch64): the
//! hot path pays nothing for another thread being able to look. A slot
//! keeps a call's start, its sequence number and a tag, the region with
//! the low 32 bits of the start. The tag is stored before the start, and
//! the start with `Release`: a reader that loads the start with `Acquire`
//! then sees that call's tag or a later one, and a later call's tag names
//! another start, so a slot read while it is rewritten shows as torn
//! (unless two starts at one depth are a multiple of 2^32 ticks apart: one
//! chance in 2^32) and is never read as a call that did not happen.
//!
//! Which slots of a thread's stack hold calls still open is not in the
//! stack (its depth is the recorder's thread-local): a reader tells it
//! from the calls that ended, as the live fold does (`live.rs`): a call is
//! open if no call at its depth that started at or after it has ended.
//!
//! A task's stack (an instrumented future's, see `thread::tasks`) says it
//! itself, at the edges of its polls, which cost a few stores more than
//! they did: its header's `version` is odd while the task is polled and
//! even between polls, with the depth it was left at; `read_task` is the
//! reader's side of that seqlock (its stores between the odd and even
//! versions are read again if the version moved).
//!
//! A frame (a future first polled inside a task) has a stack of its own,
//! listed like a task's once one of its polls ends pending while a live
//! server runs (`set_frame`: where it was first polled, so that the
//! server places it under that recorder's calls). A waiting task or frame
//! also lends the server its private chunk of finished calls (`lend`),
//! which are in no lane yet, and takes it back before they move.

#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence};
use std::sync::{Arc, Mutex};

use crate::record::Chunk;
use crate::sync::lock;

/// A call that has started and not ended, as its recorder sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Open {
    pub(crate) start: u64,
    pub(crate) seq: u64,
    pub(crate) region: u32,
}

/// One open call's slot (see the module docs for the order of its
/// stores).
#[derive(Default)]
pub(crate) struct OpenSlot {
    start: AtomicU64,
    seq: AtomicU64,
    /// `region | (start as u32) << 32`.
    tag: AtomicU64,
}

impl OpenSlot {
    /// The call in the slot, read by the thread that writes it.
    #[inline(always)]
    pub(crate) fn load(&self) -> Open {
        Open {
            start: self.start.load(Ordering::Relaxed),
            seq: self.seq.load(Ordering::Relaxed),
            region: self.tag.load(Ordering::Relaxed) as u32,
        }
    }

    /// Writes `open` in the slot; only its recording thread does.
    #[inline(always)]
    pub(crate) fn store(&self, open: Open) {
        self.tag.store(
            u64::from(open.region) | (open.start << 32),
            Ordering::Relaxed,
        );
        self.seq.store(open.seq, Ordering::Relaxed);
        self.start.store(open.start, Ordering::Release);
    }

    /// The call's start and region as another thread sees them; `None`
    /// if the slot is being rewritten (torn) or was never written.
    pub(crate) fn read(&self) -> Option<(u64, u32)> {
        let start = self.start.load(Ordering::Acquire);
        let tag = self.tag.load(Ordering::Relaxed);
        (start != 0 && tag >> 32 == start & 0xffff_ffff).then_some((start, tag as u32))
    }
}

/// A recorder's stack of open calls, by depth; a task's also says which
/// task it is and, between polls, how deep.
#[derive(Default)]
pub(crate) struct OpenStack {
    slots: Box<[OpenSlot]>,
    /// A task's: odd while it is polled, even between polls.
    version: AtomicU64,
    /// A task's depth when its last poll ended.
    depth: AtomicUsize,
    /// The task's number + 1 (0: not listed: a thread's stack, a frame's
    /// until it waits with a live reader on; `FRAME`: a frame's).
    task: AtomicU64,
    /// The task's first thread (its lane index) and first poll (ticks).
    thread: AtomicU32,
    started: AtomicU64,
    /// A frame's: the start of the own call of the task or frame it was
    /// first polled in, and how many calls were open there then.
    parent: AtomicU64,
    under: AtomicU32,
    /// Listed in its store's task stacks (`Store::register_task_stack`).
    pub(crate) registered: AtomicBool,
    /// A waiting task's finished calls (its private chunk), lent to the
    /// live server (`lend`) with the task's first poll: they are in no
    /// lane until the task ends.
    records: Mutex<Option<(u64, Arc<Chunk>)>>,
    /// Whether `records` holds a chunk (the recording thread's to read).
    lent: AtomicBool,
}

/// The header's `task` of a frame's stack (see `OpenStack::set_frame`).
const FRAME: u64 = 1 << 32;

/// A task (or a frame of one) in flight as a reader saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TaskOpen {
    /// The task's number in the session (`u32::MAX` for a frame) and its
    /// first thread's lane index.
    pub(crate) index: u32,
    pub(crate) thread: u32,
    /// Being polled now (then only its own call is known).
    pub(crate) polled: bool,
    /// Its open calls' starts and regions, outermost (its own) first.
    pub(crate) calls: Vec<(u64, u32)>,
    /// A frame's: where it was first polled (`OpenStack::set_frame`).
    pub(crate) parent: Option<(u64, u32)>,
}

impl OpenStack {
    /// `len` empty slots.
    pub(crate) fn new(len: usize) -> OpenStack {
        OpenStack {
            slots: (0..len).map(|_| OpenSlot::default()).collect(),
            ..OpenStack::default()
        }
    }

    /// A copy with `len` slots (at least this one's), its header too (not
    /// its registration, nor a chunk lent).
    pub(crate) fn grown(&self, len: usize) -> OpenStack {
        let grown = OpenStack::new(len.max(self.len()));
        for (to, from) in grown.slots.iter().zip(self.slots.iter()) {
            to.store(from.load());
        }
        for (to, from) in [
            (&grown.version, &self.version),
            (&grown.task, &self.task),
            (&grown.started, &self.started),
            (&grown.parent, &self.parent),
        ] {
            to.store(from.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        grown
            .depth
            .store(self.depth.load(Ordering::Relaxed), Ordering::Relaxed);
        for (to, from) in [(&grown.thread, &self.thread), (&grown.under, &self.under)] {
            to.store(from.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        grown
    }

    /// Marks the stack as task `index`'s, first polled now on the thread of
    /// lane `thread` (`None`: a frame's, not listed as a task).
    /// Between polls, as a poll's stores are (see `read_task`).
    pub(crate) fn set_task(&self, task: Option<(u32, u32, u64)>) {
        self.begin_poll();
        let (index, thread, started) = task.map_or((0, 0, 0), |(i, t, s)| (u64::from(i) + 1, t, s));
        self.thread.store(thread, Ordering::Relaxed);
        self.started.store(started, Ordering::Relaxed);
        self.task.store(index, Ordering::Relaxed);
        self.parent.store(0, Ordering::Relaxed);
        self.end_poll(0);
    }

    /// Lists the stack as a frame's: first polled at `started` inside the
    /// task or frame whose own call started at `parent` (on the thread of
    /// lane `thread`), `under` calls deep there; its last poll left it
    /// `depth` deep. Between polls (see `read_task`).
    pub(crate) fn set_frame(&self, thread: u32, started: u64, parent: (u64, u32), depth: usize) {
        self.begin_poll();
        self.thread.store(thread, Ordering::Relaxed);
        self.started.store(started, Ordering::Relaxed);
        self.parent.store(parent.0, Ordering::Relaxed);
        self.under.store(parent.1, Ordering::Relaxed);
        self.task.store(FRAME, Ordering::Relaxed);
        self.end_poll(depth);
    }

    /// Whether the stack is listed as a task's or a frame's; its
    /// recording thread only.
    pub(crate) fn listed(&self) -> bool {
        self.task.load(Ordering::Relaxed) != 0
    }

    /// A poll of the task begins (the version turns odd).
    #[inline]
    pub(crate) fn begin_poll(&self) {
        let v = self.version.load(Ordering::Relaxed);
        self.version.store(v | 1, Ordering::Relaxed);
        // The slots' stores of the poll come after the odd version.
        fence(Ordering::Release);
    }

    /// A poll of the task ends, the task left `depth` calls deep (the
    /// version turns even).
    #[inline]
    pub(crate) fn end_poll(&self, depth: usize) {
        self.depth.store(depth, Ordering::Relaxed);
        let v = self.version.load(Ordering::Relaxed);
        self.version.store((v | 1) + 1, Ordering::Release);
    }

    /// From another thread: the task (or frame) this stack is of, if it is
    /// one and is in flight (its own call open), with its open calls (up to
    /// `max`); `None` if it is none, finished, or changed while it was read.
    pub(crate) fn read_task(&self, max: usize) -> Option<TaskOpen> {
        let before = self.version.load(Ordering::Acquire);
        let task = self.task.load(Ordering::Relaxed);
        let (thread, started) = (
            self.thread.load(Ordering::Relaxed),
            self.started.load(Ordering::Relaxed),
        );
        let parent = (task == FRAME).then(|| {
            (
                self.parent.load(Ordering::Relaxed),
                self.under.load(Ordering::Relaxed),
            )
        });
        let polled = before & 1 == 1;
        // While it is polled its depth is its thread's to know: its own
        // call (which stays in slot 0 for the whole task) only.
        let depth = if polled {
            1
        } else {
            self.depth.load(Ordering::Relaxed)
        };
        let calls: Vec<(u64, u32)> = self
            .slots
            .iter()
            .take(depth.min(max))
            .map_while(OpenSlot::read)
            .collect();
        fence(Ordering::Acquire);
        if self.version.load(Ordering::Relaxed) != before || task == 0 {
            return None;
        }
        // Its own call is open, opened at or after its first poll.
        let own = calls.first()?;
        if own.0 < started || (!polled && calls.len() < depth.min(max)) {
            return None;
        }
        Some(TaskOpen {
            index: u32::try_from(task - 1).ok()?,
            thread,
            polled,
            calls,
            parent,
        })
    }

    /// Lends the task's private chunk to a live reader (`None`: takes it
    /// back, as the task must before its records go anywhere else, so
    /// that a reader counts them once). Its recording thread only.
    /// `chunk` comes with the task's first poll (`started`).
    pub(crate) fn lend(&self, chunk: Option<(u64, Arc<Chunk>)>) {
        self.lent.store(chunk.is_some(), Ordering::Relaxed);
        *lock(&self.records) = chunk;
    }

    /// Whether a chunk is lent (see `lend`); its recording thread only.
    pub(crate) fn lent(&self) -> bool {
        self.lent.load(Ordering::Relaxed)
    }

    /// Takes back the chunk lent, if one is (a test of `lent`, no lock
    /// otherwise): before the task's records move. Its recording thread
    /// only.
    pub(crate) fn take_back(&self) {
        if self.lent() {
            self.lend(None);
        }
    }

    /// From another thread: the first poll of the task whose chunk is
    /// lent now, if one is.
    pub(crate) fn lent_since(&self) -> Option<u64> {
        lock(&self.records).as_ref().map(|(started, _)| *started)
    }

    /// From another thread: the chunk lent now, if it is still the task's
    /// first polled at `started`. Held, it is not reused (a chunk is
    /// cleared only by its one owner), only read: its records published so
    /// far are finished calls of the task.
    pub(crate) fn lent_records(&self, started: u64) -> Option<Arc<Chunk>> {
        lock(&self.records)
            .as_ref()
            .filter(|(s, _)| *s == started)
            .map(|(_, chunk)| Arc::clone(chunk))
    }

    /// The number of slots.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// The slots, for the recorder to lend its hot path.
    #[inline]
    pub(crate) fn slots(&self) -> &[OpenSlot] {
        &self.slots
    }

    /// The call at `depth`, read by the recording thread.
    pub(crate) fn get(&self, depth: usize) -> Option<Open> {
        self.slots.get(depth).map(OpenSlot::load)
    }

    /// Writes the call at `depth` (the recording thread); `false` if the
    /// stack has no such slot.
    pub(crate) fn set(&self, depth: usize, open: Open) -> bool {
        match self.slots.get(depth) {
            Some(slot) => {
                slot.store(open);
                true
            }
            None => false,
        }
    }

    /// From another thread: the starts and regions of the first slots,
    /// outermost first, up to `max` and up to the first slot that is
    /// empty, torn, or starts before the one under it (left by an earlier,
    /// deeper stack). Which of them are still open is the reader's to tell
    /// (see the module docs).
    pub(crate) fn read(&self, max: usize) -> Vec<(u64, u32)> {
        let mut calls: Vec<(u64, u32)> = Vec::new();
        for slot in self.slots.iter().take(max) {
            match slot.read() {
                Some(call) if calls.last().is_none_or(|up| up.0 <= call.0) => calls.push(call),
                _ => break,
            }
        }
        calls
    }
}

/// A recorder's stack as its recorder holds it: none until its first
/// call, then an [`OpenStack`] that its lane may share (`Lane::open`),
/// replaced by a larger one when it is full.
#[derive(Default)]
pub(crate) struct Stack(Option<Arc<OpenStack>>);

impl Stack {
    /// No slots yet.
    pub(crate) const fn none() -> Stack {
        Stack(None)
    }

    /// The number of slots.
    pub(crate) fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |s| s.len())
    }

    /// The slots (none yet: empty).
    #[inline]
    pub(crate) fn slots(&self) -> &[OpenSlot] {
        self.0.as_ref().map_or(&[], |s| s.slots())
    }

    /// The call at `depth`.
    pub(crate) fn get(&self, depth: usize) -> Option<Open> {
        self.0.as_ref().and_then(|s| s.get(depth))
    }

    /// Writes the call at `depth`; `false` if there is no such slot.
    pub(crate) fn set(&self, depth: usize, open: Open) -> bool {
        self.0.as_ref().is_some_and(|s| s.set(depth, open))
    }

    /// The calls at depths `0..depth` (fewer if the stack is shorter).
    pub(crate) fn calls(
        &self,
        depth: usize,
    ) -> impl DoubleEndedIterator<Item = Open> + ExactSizeIterator + '_ {
        self.slots().iter().take(depth).map(OpenSlot::load)
    }

    /// Replaces the stack by a copy with `len` slots (at least its own).
    pub(crate) fn grow(&mut self, len: usize) {
        let grown = match &self.0 {
            Some(s) => s.grown(len),
            None => OpenStack::new(len),
        };
        self.0 = Some(Arc::new(grown));
    }

    /// A new, empty stack of `len` slots (the old one is left to whoever
    /// shares it).
    pub(crate) fn renew(&mut self, len: usize) {
        self.0 = Some(Arc::new(OpenStack::new(len)));
    }

    /// The stack, to share with the lane.
    pub(crate) fn shared(&self) -> Option<Arc<OpenStack>> {
        self.0.clone()
    }

    /// The stack itself, if it has slots yet.
    #[inline]
    pub(crate) fn stack(&self) -> Option<&Arc<OpenStack>> {
        self.0.as_ref()
    }

    /// See [`OpenStack::begin_poll`].
    #[inline]
    pub(crate) fn begin_poll(&self) {
        if let Some(s) = &self.0 {
            s.begin_poll();
        }
    }

    /// See [`OpenStack::end_poll`].
    #[inline]
    pub(crate) fn end_poll(&self, depth: usize) {
        if let Some(s) = &self.0 {
            s.end_poll(depth);
        }
    }

    /// See [`OpenStack::take_back`].
    pub(crate) fn take_back(&self) {
        if let Some(s) = &self.0 {
            s.take_back();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(start: u64, region: u32) -> Open {
        Open {
            start,
            seq: start + 1,
            region,
        }
    }

    #[test]
    fn slots_read_back_and_stop_where_the_stack_does() {
        let stack = OpenStack::new(4);
        assert!(stack.read(8).is_empty(), "never written");
        assert!(stack.set(0, open(100, 7)));
        assert!(stack.set(1, open(150, 9)));
        assert!(!stack.set(4, open(1, 1)), "no such slot");
        assert_eq!(stack.get(1), Some(open(150, 9)));
        assert_eq!(stack.read(8), vec![(100, 7), (150, 9)]);
        assert_eq!(stack.read(1), vec![(100, 7)]);
        // Depth 0 rewritten by a later call: depth 1 is older than it, left
        // by the earlier stack.
        stack.set(0, open(200, 3));
        assert_eq!(stack.read(8), vec![(200, 3)]);
        let grown = stack.grown(8);
        assert_eq!(grown.len(), 8);
        assert_eq!(grown.get(1), Some(open(150, 9)));
    }

    #[test]
    fn a_torn_slot_is_not_a_call() {
        let slot = OpenSlot::default();
        slot.store(open(0x1_0000_0005, 4));
        assert_eq!(slot.read(), Some((0x1_0000_0005, 4)));
        // The next call's tag is stored, its start not yet.
        slot.tag.store(8 | (0x2_0000_0009 << 32), Ordering::Relaxed);
        assert_eq!(slot.read(), None);
        slot.start.store(0x2_0000_0009, Ordering::Release);
        assert_eq!(slot.read(), Some((0x2_0000_0009, 8)));
    }
}
