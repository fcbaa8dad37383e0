//! A task's poll on the hot half alone: its recorder lent to [`Hot`] in
//! place of the current one without a visit of `Cold` ([`lazy_in`],
//! [`lazy_out`]), `Cold` catching up only if something visits it during
//! the poll ([`Cold::settle`]).
//!
//! A further poll of a task that makes no slow-path call (most: its calls
//! fit its stack and chunk) then costs the hot half's cells saved and
//! lent, and the live server's poll marks: no `RefCell` borrow, no swap of
//! `Cold`'s fields. The state after [`lazy_in`] is, for everything that
//! reads the hot half, the state after `Cold::swap_light`; whatever reads
//! `Cold` settles first (`Cold::with`, `Cold::with_unlent`, the full
//! swap), after which the poll goes on, and ends, as a full swap's does.
//!
//! Applies while speculation does (`Hot::spec_cap` not 0: the thread's
//! session neither counts, samples, aggregates nor has a live reader, and
//! `Cold` is not being visited) and no speculation is in progress; else
//! the full swap.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use super::cold::lend_stack_and_chunk;
use super::hot::with_hot;
use super::tasks::TaskState;
use super::{Cold, Hot};
use crate::open::{OpenSlot, OpenStack};
use crate::record::Chunk;

/// What a lazily polled task's recorder took the place of: the hot half's
/// lent cells as they were (the recorder around it, whose allocations
/// `Cold` or the task around it holds meanwhile), and the task lazily
/// polled around this one (null: none). Meaningful only from [`lazy_in`]
/// to [`lazy_out`] or [`Cold::settle`], on the thread polling the task.
pub(super) struct Below {
    chunk: *const Chunk,
    cap: usize,
    stack: (*mut OpenSlot, usize),
    meta: (*mut [AtomicU64; 4], usize),
    marks: *const OpenStack,
    prev: *mut TaskState,
}

// SAFETY: `Below` is plain data between polls: its pointers are
// dereferenced only by the thread that wrote them, within the poll that
// wrote them (`lazy_out`, `Cold::settle`); a task moving to another
// thread between polls carries values nobody reads until its next
// `lazy_in` overwrites them.
unsafe impl Send for Below {}
// SAFETY: as above; no method reads it through a shared reference.
unsafe impl Sync for Below {}

impl Below {
    /// Nothing saved.
    pub(super) const NONE: Below = Below {
        chunk: std::ptr::null(),
        cap: 0,
        stack: (std::ptr::null_mut(), 0),
        meta: (std::ptr::null_mut(), 0),
        marks: std::ptr::null(),
        prev: std::ptr::null_mut(),
    };
}

/// Lends `task`'s recorder to the hot half in place of the current one,
/// leaving `Cold` as it is; `false` (nothing done) where it does not
/// apply (see the module). Until [`lazy_out`] or a visit of `Cold`,
/// `task` must not be touched but through the pointer kept in the hot half
/// (`poll_in_task` holds it for the poll).
#[inline(always)]
pub(super) fn lazy_in(task: &mut TaskState) -> bool {
    with_hot(|hot| {
        if hot.spec_cap.get() == 0
            || hot.spec_seq.get() != 0
            || task.generation != hot.generation.get()
        {
            return false;
        }
        mark_end(hot);
        task.below = Below {
            chunk: hot.chunk.get(),
            cap: hot.cap.get(),
            // The fast paths' stack is the whole stack: the session does
            // not count (`spec_cap`).
            stack: hot.stack.parts(),
            meta: hot.meta.parts(),
            marks: hot.marks.get(),
            prev: hot.polled.get(),
        };
        swap_position(hot, task);
        // SAFETY: the task's stack and chunk, held by `task` (`Arc`s),
        // which nothing touches until `lazy_out` or `Cold::settle` (see
        // above), after which `Cold` holds them: either way they stay
        // allocated and in place until the hot half is disarmed (the
        // settling visit) or lent another recorder (`lazy_out`).
        unsafe { lend_stack_and_chunk(hot, &task.stack, task.chunk.as_ref(), true) };
        // A task's calls are not reached by the thread's metadata scopes.
        hot.meta.withdraw();
        hot.marks
            .set(task.stack.stack().map_or(std::ptr::null(), Arc::as_ptr));
        mark_begin(hot);
        hot.polled.set(task);
        true
    })
}

/// Ends [`lazy_in`]'s poll of `task`: the recorder it took the place of
/// lent again as it was; `false` (nothing done) if `Cold` was visited
/// meanwhile (the poll was settled: the full swap ends it) or a
/// speculation is in progress.
#[inline(always)]
pub(super) fn lazy_out(task: &mut TaskState) -> bool {
    with_hot(|hot| {
        if !std::ptr::eq(hot.polled.get(), task) || hot.spec_seq.get() != 0 {
            return false;
        }
        mark_end(hot);
        swap_position(hot, task);
        let below = &task.below;
        // SAFETY: `hot.polled` is still `task`: no visit of `Cold` since
        // `lazy_in` saved these (every visit settles first, which clears
        // it), so they are the slices lent then, whose memory `Cold` (or
        // the task lazily polled around this one) still holds unchanged:
        // the stack's slots, the metadata rows, atomics.
        unsafe {
            hot.stack.lend(below.stack.0, below.stack.1);
            hot.fast_stack.lend(below.stack.0, below.stack.1);
            hot.meta.lend(below.meta.0, below.meta.1);
        }
        hot.chunk.set(below.chunk);
        hot.cap.set(below.cap);
        hot.marks.set(below.marks);
        hot.polled.set(below.prev);
        mark_begin(hot);
        true
    })
}

/// The hot half's depth and length swapped with those `task` keeps of the
/// recorder it is not lent (as `Cold::swap_recorder` swaps them; the
/// sessions are the same).
#[inline(always)]
fn swap_position(hot: &Hot, task: &mut TaskState) {
    let (depth, len) = (hot.depth.get(), hot.len.get());
    hot.depth.set(task.depth);
    hot.len.set(task.len);
    (task.depth, task.len) = (depth, len);
}

/// The live server's mark that the current recorder's poll ends, as deep
/// as the hot half is (`OpenStack::end_poll`).
#[inline(always)]
fn mark_end(hot: &Hot) {
    // SAFETY: `marks` is null or the stack of the task lent now, which
    // its owner holds (an `Arc`) at least as long as its slots are lent.
    if let Some(stack) = unsafe { hot.marks.get().as_ref() } {
        stack.end_poll(hot.depth.get());
    }
}

/// The mark that the current recorder is being polled (`OpenStack::begin_poll`).
#[inline(always)]
fn mark_begin(hot: &Hot) {
    // SAFETY: as in `mark_end`.
    if let Some(stack) = unsafe { hot.marks.get().as_ref() } {
        stack.begin_poll();
    }
}

impl Cold {
    /// Catches up with the tasks lazily polled now ([`lazy_in`]), the
    /// outermost first: `Cold`'s half of each swap, as `Cold::swap_light`
    /// would have made it. The hot half is left as it is: it already holds
    /// the innermost task's recorder, whose allocations `Cold` now owns.
    pub(super) fn settle(&mut self, hot: &Hot) {
        let innermost = hot.polled.replace(std::ptr::null_mut());
        if !innermost.is_null() {
            self.settle_from(innermost);
        }
    }

    /// `Cold`'s half of the lazy swaps of `task` and of the tasks lazily
    /// polled around it, the outermost first.
    fn settle_from(&mut self, task: *mut TaskState) {
        // SAFETY: a task lazily polled on this thread (the hot half's
        // `polled`, or a `prev` of one): its poll, in `poll_in_task`, which
        // holds it for the poll and touches it only through this pointer,
        // has not ended, or `polled` would no longer lead to it.
        let task = unsafe { &mut *task };
        let around = std::mem::replace(&mut task.below.prev, std::ptr::null_mut());
        if !around.is_null() {
            self.settle_from(around);
        }
        // As `Cold::swap_light` swaps them (the session does not count).
        std::mem::swap(&mut self.counts, &mut task.counts);
        self.swap_owned(task);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tasks::{Start, start_task};
    use super::super::test_support::in_session;
    use super::super::{COLD, HOT, close, enter, finish_task, open, poll_in_task};
    use super::*;
    use crate::clock::ticks;

    /// A task of `region` started on this thread (attached to session `g`).
    fn task(g: u32, region: u32) -> Box<TaskState> {
        match start_task(g, region) {
            Start::Task(task) => task,
            _ => panic!("no task started"),
        }
    }

    /// The innermost task lazily polled now (null: none).
    fn polled() -> *const TaskState {
        HOT.with(|hot| hot.polled.get().cast_const())
    }

    /// The task `Cold` holds the recorder of (its number), if any.
    fn cold_task() -> Option<u32> {
        COLD.with(|cold| cold.borrow().task.map(|t| t.index))
    }

    /// The hot half's lent cells: chunk, capacity, length, stack slots.
    fn lent() -> (*const Chunk, usize, usize, usize) {
        HOT.with(|hot| {
            (
                hot.chunk.get(),
                hot.cap.get(),
                hot.len.get(),
                hot.stack.len(),
            )
        })
    }

    /// `(region, depth)` of the first `task.len` records of its chunk.
    fn task_calls(task: &TaskState) -> Vec<(u32, u32)> {
        let chunk = task.chunk.as_ref().expect("the task's chunk");
        chunk.records()[..task.len]
            .iter()
            .map(|r| (r.region, r.depth()))
            .collect()
    }

    #[test]
    fn a_poll_lends_the_task_to_the_hot_half_only_until_cold_is_visited() {
        in_session(0, |session| {
            let g = session.generation;
            drop(enter(0, g)); // attaches: the hot half armed
            let mut t = task(g, 1);
            let ptr: *const TaskState = &*t;
            let thread_lent = lent();
            let root = poll_in_task(&mut t, || {
                assert!(std::ptr::eq(polled(), ptr), "the lazy path was taken");
                assert_eq!(cold_task(), None, "Cold is still the thread's");
                let root = open(1, g);
                drop(enter(2, g));
                root
            });
            assert!(polled().is_null());
            assert_eq!(lent(), thread_lent, "the thread's recorder lent as it was");
            assert_eq!(
                HOT.with(|hot| hot.depth.get()),
                0,
                "the thread's depth back"
            );
            assert_eq!(task_calls(&t), [(2, 1)], "the poll's call went to the task");
            t.root = root;
            let index = t.record.index;
            poll_in_task(&mut t, || {
                assert!(std::ptr::eq(polled(), ptr));
                // Any visit of `Cold` settles the lazy swap first.
                Cold::with(|_, _| ());
                assert!(polled().is_null(), "settled");
                assert_eq!(cold_task(), Some(index), "Cold holds the task's recorder");
                drop(enter(3, g));
                close(root);
            });
            assert_eq!(cold_task(), None, "the full swap back");
            assert_eq!(task_calls(&t), [(2, 1), (3, 1), (1, 0)]);
            t.root = 0;
            finish_task(t, ticks());
            // The thread's recorder records on, at its own depth.
            let outer = enter(4, g);
            assert_eq!(HOT.with(|hot| hot.depth.get()), 1);
            drop(outer);
        });
    }

    #[test]
    fn tasks_lazily_polled_inside_each_other_end_or_settle_in_order() {
        in_session(0, |session| {
            let g = session.generation;
            drop(enter(0, g));
            let (mut a, mut b) = (task(g, 1), task(g, 2));
            let (pa, pb): (*const TaskState, *const TaskState) = (&*a, &*b);
            // Both lazy, both ending without a visit of `Cold`.
            poll_in_task(&mut a, || {
                drop(enter(3, g));
                poll_in_task(&mut b, || {
                    assert!(std::ptr::eq(polled(), pb));
                    drop(enter(4, g));
                });
                assert!(std::ptr::eq(polled(), pa), "a's poll goes on");
                drop(enter(5, g));
            });
            assert!(polled().is_null());
            assert_eq!(task_calls(&a), [(3, 0), (5, 0)]);
            assert_eq!(task_calls(&b), [(4, 0)]);
            // Both lazy, `Cold` settled inside the inner poll: the
            // outermost first, so `Cold` holds b's recorder, and a's holds
            // the thread's.
            let b_index = b.record.index;
            poll_in_task(&mut a, || {
                poll_in_task(&mut b, || {
                    Cold::with(|_, _| ());
                    assert!(polled().is_null());
                    assert_eq!(cold_task(), Some(b_index));
                    drop(enter(6, g));
                });
                assert!(polled().is_null(), "a was settled too");
                drop(enter(7, g));
            });
            assert_eq!(cold_task(), None, "the thread's recorder is back");
            assert_eq!(HOT.with(|hot| hot.depth.get()), 0);
            assert_eq!(task_calls(&a), [(3, 0), (5, 0), (7, 0)]);
            assert_eq!(task_calls(&b), [(4, 0), (6, 0)]);
            finish_task(b, ticks());
            finish_task(a, ticks());
        });
    }

    #[test]
    fn a_lazily_polled_poll_that_panics_gives_the_thread_its_recorder_back() {
        in_session(0, |session| {
            let g = session.generation;
            drop(enter(0, g));
            let mut t = task(g, 1);
            let thread_lent = lent();
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                poll_in_task(&mut t, || {
                    assert!(!polled().is_null(), "the lazy path was taken");
                    let _open = enter(2, g);
                    panic!("in the poll");
                })
            }));
            assert!(caught.is_err());
            assert!(polled().is_null());
            assert_eq!(lent(), thread_lent, "the thread's recorder lent as it was");
            assert_eq!(task_calls(&t), [(2, 0)], "the call the panic ended");
            finish_task(t, ticks());
        });
    }
}
