//! Speculative first polls: an instrumented future's first poll is
//! recorded as a plain call of the recorder polling it ([`speculate`]),
//! the calls it makes going to the thread's private spec chunk. Most
//! futures complete there ([`end_first_poll`]): their calls are copied to
//! the recorder's chunk and the call ends as any other, with no task, no
//! recorder swapped. One that returns `Pending`, or that needs `Cold`
//! meanwhile (a nested instrumented future, a full stack or chunk, a
//! metadata scope), becomes a task (or a frame of the task around it)
//! there and then ([`Cold::convert_spec`]): its open calls move to the
//! task's stack and the spec chunk becomes the task's private chunk, so
//! the file is the same as if it had been a task from its first poll.
//!
//! Off (the spec chunk not lent) while the session counts, samples
//! (samples are given to the calls open on their thread, which a
//! conversion would move), aggregates, or has a live reader (which reads
//! the thread's open calls and its tasks' as they are: a call moved to a
//! task would show on both); every first poll is a task's or frame's then.

use super::hot::with_hot;
use super::tasks::{TaskState, task_state};
use super::{Cold, HOT, Hot};
use crate::record::Chunk;
use std::sync::Arc;

/// Opens the call of a future of `region` in session `generation` on
/// this thread's current recorder and points the hot half at the spec
/// chunk, for the future's first poll; its sequence number, or 0 if the
/// first poll cannot be speculative here (no spec chunk lent, one in
/// progress, another session, no room on the stack): it starts as a
/// task then.
#[inline(always)]
pub(crate) fn speculate(region: u32, generation: u32) -> u64 {
    let seq = with_hot(|hot| {
        if hot.generation.get() != generation {
            return u64::MAX; // to attach first
        }
        if hot.spec_seq.get() != 0 || hot.spec_cap.get() == 0 {
            return 0;
        }
        let seq = hot.seq.get() + 1;
        if !hot.push_open(region, seq) {
            return 0;
        }
        hot.seq.set(seq);
        hot.saved_chunk.set(hot.chunk.get());
        hot.saved_len.set(hot.len.get());
        hot.saved_cap.set(hot.cap.get());
        hot.chunk.set(hot.spec_chunk.get());
        hot.len.set(0);
        hot.cap.set(hot.spec_cap.get());
        hot.spec_seq.set(seq);
        seq
    });
    if seq == u64::MAX {
        return attach_and_speculate(region, generation);
    }
    seq
}

/// [`speculate`] on a thread not attached to session `generation` yet:
/// it attaches first (once a session), as any first call does.
#[cold]
#[inline(never)]
fn attach_and_speculate(region: u32, generation: u32) -> u64 {
    let attached = Cold::with(|cold, hot| cold.attach(hot, generation)) == Some(true);
    let attached = attached && HOT.with(|hot| hot.generation.get() == generation);
    if attached {
        speculate(region, generation)
    } else {
        0
    }
}

/// Ends the speculative first poll of the call `seq` ([`speculate`]),
/// which completed if `ready`. Still speculative: its calls go to the
/// recorder's chunk and, if it completed, its call ends now; `None`. Made
/// a task (or frame) meanwhile or now (it waits): the task, swapped out,
/// its own call closed if it completed (then for `finish_task`).
///
/// If no task can be made (the store hands out no chunk: calls are being
/// dropped), its calls go to the recorder's chunk and its call ends at
/// this poll: `None`.
#[inline(always)]
pub(crate) fn end_first_poll(seq: u64, ready: bool) -> Option<Box<TaskState>> {
    if ready {
        let copied = with_hot(|hot| give_back(hot, seq));
        match copied {
            Ok(()) => {
                super::close(seq);
                return None;
            }
            Err(true) => {
                give_back_cold(seq);
                return None;
            }
            Err(false) => {}
        }
    }
    end_cold(seq, ready)
}

/// Ends the speculation of call `seq` on the hot half, if it is still in
/// progress: the recorder's chunk back in place, the poll's calls copied
/// to it. `Err(true)`: they do not fit (left in the spec chunk, for
/// `Cold`); `Err(false)`: not in progress.
#[inline(always)]
fn give_back(hot: &Hot, seq: u64) -> Result<(), bool> {
    if hot.spec_seq.get() != seq || hot.cap.get() == 0 {
        return Err(false);
    }
    let n = hot.len.get();
    let spec = hot.chunk.get();
    hot.spec_seq.set(0);
    hot.chunk.set(hot.saved_chunk.get());
    hot.len.set(hot.saved_len.get());
    hot.cap.set(hot.saved_cap.get());
    if n == 0 {
        return Ok(());
    }
    if hot.cap.get().saturating_sub(hot.len.get()) < n {
        return Err(true);
    }
    // SAFETY: `spec_seq` was `seq` and `cap` not 0: no visit of `Cold`
    // since `speculate`, so `spec` is still the spec chunk `Cold` holds
    // (see `Hot`), alive while this thread runs; read through a shared
    // reference (only this thread writes it, and not during this loop,
    // which pushes to another).
    let records = unsafe { &*spec }.records();
    for r in records.iter().take(n) {
        hot.push_record(*r);
    }
    Ok(())
}

/// A completed speculative first poll whose calls do not fit the
/// recorder's chunk: they go through `Cold` (a new chunk), then its call
/// ends.
#[cold]
#[inline(never)]
fn give_back_cold(seq: u64) {
    let _ = Cold::with(|cold, hot| {
        let Some(spec) = cold.spec_chunk.clone() else {
            return;
        };
        // `hot.len` is the recorder's again; the spec chunk's records are
        // those the poll pushed, all published.
        for r in spec.records() {
            cold.push_record(hot, *r);
        }
    });
    super::close(seq);
}

/// A speculative first poll that waits, or was made a task while it ran:
/// the task, back out of the thread's place.
#[cold]
#[inline(never)]
fn end_cold(seq: u64, ready: bool) -> Option<Box<TaskState>> {
    let end = crate::clock::ticks();
    let task = Cold::visit(false, |cold, hot| {
        if !ready && hot.spec_seq.get() == seq {
            // Still speculative as it waits: a task made as it is between
            // polls.
            return cold.convert_waiting(hot);
        }
        // Else a speculation in progress is made a task first, as
        // `Cold::with` does.
        if hot.spec_seq.get() != 0 {
            cold.convert_spec(hot);
        }
        cold.take_converted(hot, seq, ready.then_some(end))
    });
    let task = match task {
        Some(task) => task,
        None => {
            // `Cold` busy (re-entered) or gone: the speculation ends on the
            // hot half, its calls kept as far as the chunk has room.
            let _ = HOT.with(|hot| give_back(hot, seq));
            None
        }
    };
    if task.is_none() {
        // Not made a task (or already ended): its call, if still open on
        // this recorder, ends here.
        super::close(seq);
    }
    task
}

impl Cold {
    /// Lends the hot half the spec chunk, if first polls may be
    /// speculative here (not while the session counts, samples,
    /// aggregates or has a live reader).
    pub(super) fn arm_spec(&mut self, hot: &Hot, counting: bool) {
        // `counting`: also where the fast paths get no stack (see
        // `lend_recorder`), on which speculation and lazy polls rely.
        let allowed = !counting
            && crate::clock::fast_ticks_valid()
            && self.counting.is_none()
            && self.polls.is_none()
            && self.agg.is_none()
            && self.store.as_ref().is_some_and(|s| !s.watched());
        match &self.spec_chunk {
            Some(chunk) if allowed => {
                hot.spec_chunk.set(Arc::as_ptr(chunk));
                hot.spec_cap.set(chunk.capacity());
            }
            _ => hot.spec_cap.set(0),
        }
    }

    /// Makes the speculative first poll in progress (`hot.spec_seq`) a task
    /// of its own, or a frame of the task being polled, and puts its
    /// recorder in the thread's place for the rest of the poll: its open
    /// calls move to the task's stack, its records (the spec chunk) become
    /// the task's private chunk. Called with the hot half disarmed. If no
    /// task can be made, its records go to the recorder's chunk and its
    /// call stays open there.
    pub(super) fn convert_spec(&mut self, hot: &Hot) {
        if let Some(converted) = self.spec_to_task(hot, true) {
            self.converted.push(converted);
        }
    }

    /// [`Cold::convert_spec`] of a first poll that ended and waits: the
    /// task is made as it is between polls, never taking the thread's
    /// place (no swap in and out: about 200 instructions less).
    pub(super) fn convert_waiting(&mut self, hot: &Hot) -> Option<Box<TaskState>> {
        let (_, task) = self.spec_to_task(hot, false)?;
        // For a live reader: the task waits, this deep.
        task.stack.end_poll(task.depth);
        Some(task)
    }

    /// The speculation in progress made a task (`take_place`: swapped in
    /// for the rest of the poll), with its call's number; `None` (its
    /// records and call left to the recorder) if none can be made.
    fn spec_to_task(&mut self, hot: &Hot, take_place: bool) -> Option<(u64, Box<TaskState>)> {
        let seq = hot.spec_seq.replace(0);
        let n = hot.len.get();
        // The recorder's own chunk is `self.chunk`, lent again by `arm`.
        hot.len.set(hot.saved_len.get());
        let spec = self.spec_chunk.take();
        match self.spec_task(hot, seq, n, spec, take_place) {
            Ok(task) => Some((seq, task)),
            Err(spec) => {
                if let Some(spec) = &spec {
                    for r in spec.records().iter().take(n) {
                        self.push_record(hot, *r);
                    }
                }
                self.spec_chunk = spec;
                None
            }
        }
    }

    /// The task the speculation of call `seq` becomes, swapped in if
    /// `take_place`; or the spec chunk back if none can be made.
    fn spec_task(
        &mut self,
        hot: &Hot,
        seq: u64,
        n: usize,
        spec: Option<Arc<Chunk>>,
        take_place: bool,
    ) -> Result<Box<TaskState>, Option<Arc<Chunk>>> {
        let Some(mut spec) = spec else {
            return Err(None);
        };
        let depth = hot.depth.get();
        let (Some(d), Some(store), true) = (
            self.open_depth(hot, seq),
            self.store.clone(),
            Arc::get_mut(&mut spec).is_some(),
        ) else {
            return Err(Some(spec));
        };
        let Some(own) = self.stack.get(d) else {
            return Err(Some(spec));
        };
        // A frame of the task being polled, else a task of its own on this
        // thread's lane.
        let frame = self.task.is_some();
        let thread = match (self.task, &self.lane) {
            (Some(around), _) => around.thread,
            (None, Some(lane)) => lane.index,
            (None, None) => return Err(Some(spec)),
        };
        let generation = hot.generation.get();
        let Some(mut task) = task_state(
            &mut self.spare,
            generation,
            store,
            thread,
            own.region,
            frame,
        ) else {
            return Err(Some(spec));
        };
        if frame {
            // Where it nests, for the live server to place its stack.
            task.parent = match self.stack.get(0) {
                Some(around) => (around.start, u32::try_from(d).unwrap_or(0)),
                None => (0, 0),
            };
        }
        // Its records, at depths counted from its own call: the task's
        // chunk; the task's own (empty) chunk is the next spec chunk.
        if let Some(only) = Arc::get_mut(&mut spec) {
            only.rebase(n, d as u32);
        }
        self.spec_chunk = task.chunk.replace(spec);
        task.len = n;
        // Its open calls, its own at the bottom.
        let open = depth - d;
        if task.stack.len() < open {
            task.stack.grow(open.next_power_of_two().max(16));
        }
        for i in 0..open {
            if let Some(call) = self.stack.get(d + i) {
                task.stack.set(i, call);
                self.rebase_deferred(call.seq, d as u32);
            }
        }
        hot.depth.set(d);
        task.depth = open;
        task.root = seq;
        task.record.start = own.start;
        if let (false, Some(stack)) = (frame, task.stack.stack()) {
            // For a live reader: the task started with its own call.
            stack.set_task(Some((task.record.index, thread, own.start)));
        }
        if take_place {
            // The rest of the poll records in the task.
            self.swap_task(hot, &mut task);
        }
        Ok(task)
    }

    /// The task the speculative first poll of call `seq` became, back out
    /// of the thread's place (its own call closed at `end` first if it
    /// completed); `None` if it is not the innermost one made a task.
    pub(super) fn take_converted(
        &mut self,
        hot: &Hot,
        seq: u64,
        end: Option<u64>,
    ) -> Option<Box<TaskState>> {
        if self.converted.last().map(|(s, _)| *s) != Some(seq) {
            return None;
        }
        let (_, mut task) = self.converted.pop()?;
        if let Some(end) = end
            && let Some(pos) = self.open_depth(hot, seq)
        {
            while hot.depth.get() > pos {
                self.close_top(hot, end);
            }
            task.root = 0;
        }
        self.swap_task(hot, &mut task);
        Some(task)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tasks::FULL_SWAPS;
    use super::super::test_support::in_session;
    use super::super::{COLD, enter, finish_task};
    use super::*;
    use crate::clock::ticks;

    #[test]
    fn a_first_poll_that_waits_is_made_a_task_without_taking_the_threads_place() {
        in_session(0, |session| {
            let g = session.generation;
            drop(enter(0, g)); // attached: the spec chunk lent
            let swaps = FULL_SWAPS.with(|n| n.get());
            let seq = speculate(1, g);
            assert_ne!(seq, 0, "speculative");
            drop(enter(2, g));
            let task = end_first_poll(seq, false).expect("made a task as it waits");
            assert_eq!(FULL_SWAPS.with(|n| n.get()), swaps, "never swapped in");
            assert_eq!((task.depth, task.len, task.root), (1, 1, seq));
            let chunk = task.chunk.as_ref().expect("its chunk");
            let call = chunk.records()[0];
            assert_eq!((call.region, call.depth()), (2, 1), "its call, rebased");
            let stack = task.stack.stack().expect("its stack");
            assert_eq!(stack.get(0).map(|o| o.seq), Some(seq), "its own call open");
            let seen = stack
                .read_task(4)
                .expect("a task in flight, for a live reader");
            assert!(!seen.polled, "waiting, not being polled");
            assert_eq!(seen.calls.len(), 1, "its own call, the one open");
            // The thread's recorder is its own, at its own depth.
            assert!(COLD.with(|c| c.borrow().task.is_none()));
            assert_eq!(HOT.with(|hot| hot.depth.get()), 0);
            finish_task(task, ticks());
        });
    }
}
