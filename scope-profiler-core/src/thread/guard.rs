//! A call's enter and exit ([`enter`], [`Guard`]'s drop): the fast paths
//! through [`Hot`](super::Hot), the slow ones (a full stack or chunk, a counting
//! session, a guard dropped out of order) and the cold ones through
//! `Cold`; `open`/`close` for calls without a guard.
#![forbid(unsafe_code)]

use std::marker::PhantomData;

use super::hot::{enter_counted, exit_counted};
use super::meta::add_call_metadata;
use super::{Cold, HOT, Open};
use crate::clock::{fast_ticks, fast_ticks_valid, ticks};
use crate::lanemeta::ok_outcome;
use crate::record::Record;

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
        cold.stack.set(
            depth,
            Open {
                start: ticks(),
                seq,
                region,
            },
        );
        hot.depth.set(depth + 1);
        seq
    })
    .unwrap_or(0)
}

/// Ends the innermost call `seq` at the fast path's cost: its record,
/// flagged as an ok outcome if `OK` ([`Record::ok`]: a `record_outcome`
/// function that returned ok, so that the outcome costs nothing more; a
/// constant, so the plain exit has no trace of it). Where the record
/// cannot be pushed here (the call is not the innermost, the chunk is full,
/// the session counts or aggregates), the slow paths; an ok outcome is
/// then added as the call's metadata first.
#[inline(always)]
fn exit<const OK: bool>(seq: u64) {
    // Unchecked: a time only if the fast path below is taken (see
    // `clock::fast_ticks`); the slow paths make sure of it (`session_end`).
    let end = fast_ticks();
    HOT.with(|hot| match hot.top() {
        Some(top) if top.seq == seq => {
            let depth = hot.depth.get() - 1;
            let record = Record::new(top.start, end, top.region, depth as u32);
            let record = if OK { record.with_ok(true) } else { record };
            hot.depth.set(depth);
            if !hot.push_record(record) {
                hot.depth.set(depth + 1);
                if OK {
                    exit_ok_unpushed(seq, end);
                } else {
                    exit_unpushed(seq, end);
                }
            }
        }
        _ if OK => exit_ok_unpushed(seq, end),
        _ => exit_slow(seq, end),
    });
}

/// The slow path of an ok call's exit: the outcome as metadata of the
/// call (still open), then the exit of a call whose record was not pushed.
#[cold]
#[inline(never)]
fn exit_ok_unpushed(seq: u64, end: u64) {
    let end = session_end(end);
    // Before `end`: a call at its depth starting at `end` is another.
    add_call_metadata(seq, end.saturating_sub(1), ok_outcome());
    exit_unpushed(seq, end);
}

/// `end`, read by `exit` unchecked, as a time of the session clock: itself
/// where the fast paths' read is that clock, else the clock read now.
#[inline(always)]
fn session_end(end: u64) -> u64 {
    if fast_ticks_valid() { end } else { ticks() }
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
            let record = Record::new(top.start, end, top.region, depth as u32);
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
    let end = session_end(end);
    if exit_counted(seq, end) {
        return;
    }
    exit_cold(seq, end);
}

#[cold]
#[inline(never)]
fn exit_cold(seq: u64, end: u64) {
    Cold::with(|cold, hot| {
        let Some(pos) = cold.open_depth(hot, seq) else {
            return;
        };
        while hot.depth.get() > pos {
            cold.close_top(hot, end);
        }
    });
}

/// Opens a call of `region` on this thread's current recorder (the task's
/// while one is polled); returns its sequence number (0: not recording).
pub(crate) fn open(region: u32, generation: u32) -> u64 {
    let guard = enter(region, generation);
    let seq = guard.seq;
    std::mem::forget(guard);
    seq
}

/// Closes the call `open` returned, and any opened after it.
#[inline(always)]
pub(crate) fn close(seq: u64) {
    if seq != 0 {
        exit::<false>(seq);
    }
}

/// The calls open on this thread's current recorder in session
/// `generation`: how many, and the region of the outermost.
pub fn open_calls(generation: u32) -> (usize, Option<u32>) {
    HOT.try_with(|hot| {
        if hot.generation.get() != generation {
            return (0, None);
        }
        let (depth, bottom) = hot.outermost();
        (depth, bottom.map(|o| o.region))
    })
    .unwrap_or((0, None))
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

    /// The number of its call on its thread (0: not recording).
    pub(crate) fn seq(&self) -> u64 {
        self.seq
    }

    /// Ends the call as one of a `record_outcome` function that returned
    /// ok: the outcome rides in the call's record, at the cost of a plain
    /// exit. Not a public API (the attribute's expansion calls it).
    #[doc(hidden)]
    #[inline(always)]
    pub fn end_ok(self) {
        let seq = self.seq;
        std::mem::forget(self);
        if seq != 0 {
            exit::<true>(seq);
        }
    }
}

impl Drop for Guard {
    #[inline(always)]
    fn drop(&mut self) {
        if self.seq != 0 {
            exit::<false>(self.seq);
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
