//! Finished frames (futures first polled inside a task) placed in the
//! recorder around them: under the innermost open call that started before
//! them, at once or, when that is not the innermost open call, once the
//! open call above it ends; a large frame's lane spliced in place.
#![forbid(unsafe_code)]

use std::sync::Arc;

use super::{Cold, Hot};
use crate::lane::Lane;
use crate::record::Chunk;

/// Set in an open call's sequence number on the stack while finished
/// frames wait for that call's end to be placed after it ([`Deferred`]):
/// the fast exit paths then miss it and take `exit_cold`, which places
/// them. Sequence numbers stay far below it (a thread's base is its
/// number times 2^40).
pub(super) const DEFERS: u64 = 1 << 63;

/// The calls of a finished frame (a future first polled inside a task),
/// to be placed in the recorder around it.
pub(super) enum FrameCalls {
    /// The first `len` records of a frame's private chunk, its own call
    /// last, at depth 0.
    Records(Arc<Chunk>, usize),
    /// A large frame's own lane (see `Cold::graduate`).
    Lane(Arc<Lane>),
}

/// A finished frame that started before the innermost open call did: it
/// nests under the innermost call that contains its whole span, one of
/// those open below it (a future first polled in one sync call and
/// completed in a later one). Its calls are placed right after the end of
/// the open call above that one, `seq`, at that call's depth: then, walking
/// the lane backwards (see `assemble`), they are met after every call of
/// `seq`'s subtree, before the parent's own record.
pub(super) struct Deferred {
    seq: u64,
    depth: u32,
    pub(super) calls: FrameCalls,
}

/// Where a finished frame went ([`Cold::nest`]).
pub(super) enum Nesting {
    /// Placed now; the calls are the caller's again (a chunk to reuse).
    Placed(FrameCalls),
    /// Kept until an open call ends.
    Deferred,
    /// Nothing open contains it: it is a task of its own.
    Alone(FrameCalls),
}

impl Cold {
    /// Places a finished frame that started at `start` (ticks) in this
    /// recorder: under the innermost open call that started before it,
    /// now if that is the innermost open call, else when the open call
    /// above it ends ([`Deferred`]). `root`: the frame's own call's counts
    /// (counting sessions), its parent's children's.
    pub(super) fn nest(
        &mut self,
        hot: &Hot,
        generation: u32,
        start: u64,
        root: &[u64],
        calls: FrameCalls,
    ) -> Nesting {
        if hot.generation.get() != generation
            && (self.task.is_some() || !self.attach(hot, generation))
        {
            return Nesting::Alone(calls);
        }
        let depth = hot.depth.get().min(self.stack.len());
        let base = self
            .stack
            .calls(depth)
            .rposition(|o| o.start <= start)
            .map_or(0, |i| i + 1);
        if base == 0 && self.task.is_some() {
            // Moved to another task that started after it.
            return Nesting::Alone(calls);
        }
        self.count_frame_root(base, root);
        if base == depth {
            self.place(hot, base as u32, &calls);
            return Nesting::Placed(calls);
        }
        let Some(mut call) = self.stack.get(base) else {
            return Nesting::Alone(calls);
        };
        let seq = call.seq & !DEFERS;
        call.seq |= DEFERS;
        self.stack.set(base, call);
        self.deferred.push(Deferred {
            seq,
            depth: base as u32,
            calls,
        });
        Nesting::Deferred
    }

    /// Appends a finished frame's calls to this recorder, `depth` calls
    /// deep: its records, or its lane after what this recorder has so far
    /// (this recorder then goes on in a new chunk).
    fn place(&mut self, hot: &Hot, depth: u32, calls: &FrameCalls) {
        match calls {
            FrameCalls::Records(chunk, len) => {
                for r in &chunk.records()[..*len] {
                    self.push_record(hot, r.at_depth(r.depth() + depth));
                }
            }
            FrameCalls::Lane(nested) => {
                if self.lane.is_none() {
                    self.graduate(hot, true);
                }
                // Without a lane here (no store: not recording) the frame's
                // lane stays one of its own, its calls kept.
                let (Some(host), Some(store)) = (self.lane.clone(), self.store.clone()) else {
                    return;
                };
                store.splice(&host, nested, depth);
                self.next_chunk(hot);
            }
        }
    }

    /// The open call `seq` moved `by` calls less deep (to the task a
    /// speculative first poll became): the frames waiting for its end are
    /// placed that much less deep too.
    pub(super) fn rebase_deferred(&mut self, seq: u64, by: u32) {
        if seq & DEFERS == 0 {
            return;
        }
        for d in &mut self.deferred {
            if d.seq == seq & !DEFERS {
                d.depth = d.depth.saturating_sub(by);
            }
        }
    }

    /// The call `seq` just ended (its record pushed): places the frames
    /// that waited for it.
    pub(super) fn place_deferred(&mut self, hot: &Hot, seq: u64) {
        let mut i = 0;
        while i < self.deferred.len() {
            if self.deferred[i].seq != seq {
                i += 1;
                continue;
            }
            let d = self.deferred.remove(i);
            self.place(hot, d.depth, &d.calls);
            if let (FrameCalls::Records(chunk, _), Some(store)) = (d.calls, &self.store) {
                store.recycle(chunk);
            }
        }
    }

    /// Counting: a frame's ended depth-0 calls (`root`) are children of
    /// the open call at depth `base - 1`, which contains it.
    fn count_frame_root(&mut self, base: usize, root: &[u64]) {
        let Some(c) = self.counting.as_deref_mut() else {
            return;
        };
        let Some(up) = base.checked_sub(1) else {
            return;
        };
        let Some(parent) = self.stack.get(up).map(|o| o.region as usize) else {
            return;
        };
        c.fit_table(parent);
        c.table.add_children(parent, root);
    }
}
