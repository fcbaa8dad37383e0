//! The hot half of a thread's recorder ([`Hot`]): cells and raw pointers
//! into what [`Cold`](super::Cold) owns, the fast paths of enter and exit
//! (a push on the stack of open calls, a record into the current chunk),
//! aggregation's and allocation counting's lean paths.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{HOT, Open};
use crate::clock::ticks;
use crate::counters;
use crate::lane::AggEntry;
use crate::record::{Chunk, Record};

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
pub(super) struct Hot {
    /// Session generation the lane belongs to (0: none).
    pub(super) generation: Cell<u32>,
    /// Sequence number of the last call entered on this thread; never reset,
    /// so a guard from an earlier session can never match a newer call.
    pub(super) seq: Cell<u64>,
    pub(super) stack: Cell<*mut Open>,
    pub(super) depth: Cell<usize>,
    pub(super) stack_cap: Cell<usize>,
    /// The stack's length (`stack_cap` is 0 while the session counts: every
    /// enter and exit then takes the slow path, which counts).
    pub(super) stack_len: Cell<usize>,
    pub(super) chunk: Cell<*const Chunk>,
    pub(super) len: Cell<usize>,
    pub(super) cap: Cell<usize>,
    /// Allocation counting, the lean path (see [`Hot::enter_counted`]): on
    /// while the current recorder counts allocations only, in the thread's
    /// session, and is not a frame (whose depth-0 calls `Cold` hands to
    /// the call around it). Then `snaps` points to `snap_depths * 4`
    /// values of `Cold`'s `RecCounts::snaps` (raw counts: it is active),
    /// `table` to `table_regions` rows of the thread's
    /// `CounterTable` (9 atomics each).
    pub(super) count_fast: Cell<bool>,
    pub(super) snaps: Cell<*mut u64>,
    pub(super) snap_depths: Cell<usize>,
    pub(super) table: Cell<*const AtomicU64>,
    pub(super) table_regions: Cell<usize>,
    /// Aggregation mode: the thread's per-region totals.
    pub(super) agg: Cell<*const AggEntry>,
    pub(super) agg_len: Cell<usize>,
    /// Aggregation mode: per depth, the summed durations of the calls ended
    /// there since the enclosing call opened (its children's time).
    pub(super) kids: Cell<*mut u64>,
    pub(super) kids_len: Cell<usize>,
}

impl Hot {
    pub(super) const fn new() -> Hot {
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
    pub(super) fn aggregate(&self, record: Record) -> bool {
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
    pub(super) fn push_open(&self, region: u32, seq: u64) -> bool {
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
    pub(super) fn top(&self) -> Option<Open> {
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
    pub(super) fn push_record(&self, record: Record) -> bool {
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
    pub(super) fn enter_counted(&self, region: u32, generation: u32) -> Option<u64> {
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
    pub(super) fn exit_counted(&self, seq: u64, end: u64) -> bool {
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
    pub(super) fn disarm(&self) {
        self.count_fast.set(false);
        self.stack_cap.set(0);
        self.stack_len.set(0);
        self.cap.set(0);
        self.agg_len.set(0);
        self.kids_len.set(0);
    }
}

/// [`Hot::enter_counted`] with a direct thread-local access.
#[inline(always)]
pub(super) fn enter_counted(region: u32, generation: u32) -> Option<u64> {
    // The address first (a closure this small is inlined: a direct
    // thread-local access), then the work.
    let hot: *const Hot = HOT.with(|hot| hot as *const Hot);
    // SAFETY: the calling thread's `Hot`, alive while the thread runs.
    unsafe { &*hot }.enter_counted(region, generation)
}

/// [`Hot::exit_counted`] (see [`enter_counted`]).
#[inline(always)]
pub(super) fn exit_counted(seq: u64, end: u64) -> bool {
    let hot: *const Hot = HOT.with(|hot| hot as *const Hot);
    // SAFETY: as in `enter_counted`.
    unsafe { &*hot }.exit_counted(seq, end)
}
