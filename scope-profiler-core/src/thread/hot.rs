//! The hot half of a thread's recorder ([`Hot`]): cells and slices lent
//! by what [`Cold`](super::Cold) owns, the fast paths of enter and exit
//! (a push on the stack of open calls, a record into the current chunk),
//! aggregation's and allocation counting's lean paths.

use std::cell::Cell;
use std::sync::atomic::AtomicU64;

use super::HOT;
use super::raw::RawSlice;
use super::tasks::TaskState;
use crate::clock::ticks;
use crate::counters;
use crate::lane::AggEntry;
use crate::open::{Open, OpenSlot, OpenStack};
use crate::record::{Chunk, Record};

/// The hot half of a thread's recorder: cells only, so reaching it is a
/// thread-local address with no lazy initialization, destructor
/// registration or borrow flag.
///
/// What `Cold` owns it lends here as [`RawSlice`]s (the stack of open
/// calls, counting's snapshots and table, aggregation's totals and
/// children's time), every access checked. `Cold` withdraws them all
/// ([`Hot::disarm`]) before it touches those allocations (so a re-entrant
/// call, from an instrumented allocator say, takes the slow path, finds
/// `Cold` busy and records nothing) and when it is destroyed at thread
/// exit. Raw pointers are left to the current chunk, whose
/// `Chunk::push` has a contract of its own: while `cap > 0`, `chunk`
/// points to a chunk `Cold` holds (its current one, or its spec chunk
/// during a speculative first poll), which has `cap` slots of which `len`
/// are pushed, by this thread only; `disarm` zeroes `cap` too. The same
/// holds of `spec_chunk` while `spec_cap > 0`, and of `saved_chunk` (the
/// current chunk, `saved_cap` slots, `saved_len` pushed) while `spec_seq`
/// is not 0: only a visit of `Cold` lets go of a chunk, and it ends the
/// speculation first.
pub(super) struct Hot {
    /// Session generation the lane belongs to (0: none).
    pub(super) generation: Cell<u32>,
    /// Sequence number of the last call entered on this thread; never reset,
    /// so a guard from an earlier session can never match a newer call.
    pub(super) seq: Cell<u64>,
    /// The stack of open calls as the fast paths see it: the whole stack,
    /// or nothing while the session counts (every enter and exit then takes
    /// the slow path, which counts).
    pub(super) fast_stack: RawSlice<OpenSlot>,
    pub(super) depth: Cell<usize>,
    /// The whole stack, also while the session counts.
    pub(super) stack: RawSlice<OpenSlot>,
    pub(super) chunk: Cell<*const Chunk>,
    pub(super) len: Cell<usize>,
    pub(super) cap: Cell<usize>,
    /// Allocation counting, the lean path (see [`Hot::enter_counted`]): on
    /// while the current recorder counts allocations only, in the thread's
    /// session, and is not a frame (whose depth-0 calls `Cold` hands to
    /// the call around it). Then `snaps` holds `Cold`'s `RecCounts::snaps`
    /// (raw counts: it is active), 4 per depth, and `table` the rows of the
    /// thread's `CounterTable` (9 atomics each).
    pub(super) count_fast: Cell<bool>,
    pub(super) snaps: RawSlice<[u64; 4]>,
    pub(super) table: RawSlice<[AtomicU64; 9]>,
    /// The rows of the thread's current `lanemeta::MetaBlock` (one-value
    /// metadata scopes), header row first; withdrawn while a task is polled
    /// (its calls are not reached by scopes).
    pub(super) meta: RawSlice<[AtomicU64; 4]>,
    /// Metadata keys interned (`lanemeta::intern`) by this thread: 16
    /// slots, by a hash of the key's length and ends (see `meta_key`).
    pub(super) keys: [Cell<(&'static str, u32)>; 16],
    /// Aggregation mode: the thread's per-region totals.
    pub(super) agg: RawSlice<AggEntry>,
    /// Aggregation mode: per depth, the summed durations of the calls ended
    /// there since the enclosing call opened (its children's time).
    pub(super) kids: RawSlice<u64>,
    /// A speculative first poll (see `spec`): the sequence number of its
    /// call while it is polled on this recorder (0: none). Meanwhile
    /// `chunk`, `len` and `cap` are the spec chunk's, and the recorder's
    /// own wait in `saved_*`; a visit of `Cold` ends it first
    /// (`Cold::convert_spec`).
    pub(super) spec_seq: Cell<u64>,
    pub(super) saved_chunk: Cell<*const Chunk>,
    pub(super) saved_len: Cell<usize>,
    pub(super) saved_cap: Cell<usize>,
    /// The thread's spec chunk, lent by `Cold` (`spec_cap` 0: none, no
    /// speculation: the session counts, samples or aggregates).
    pub(super) spec_chunk: Cell<*const Chunk>,
    pub(super) spec_cap: Cell<usize>,
    /// The one record of a chunk that did not end last ([`Hot::last_end`]):
    /// with `late_len` records in `late_chunk`, the last one pushed is a
    /// frame placed after the call it waited for, which ended at
    /// `late_end`, later (`late_len` 0: none).
    pub(super) late_chunk: Cell<*const Chunk>,
    pub(super) late_len: Cell<usize>,
    pub(super) late_end: Cell<u64>,
    /// The end of the last metadata scope that ended on this thread
    /// (see `meta::end_meta_row`).
    pub(super) scope_end: Cell<u64>,
    /// The stack of the task or frame whose recorder is lent now, for the
    /// live server's poll marks (null: none, the thread's own, or
    /// disarmed).
    pub(super) marks: Cell<*const OpenStack>,
    /// The innermost task lazily polled now (see `lazy`): its recorder is
    /// lent here while `Cold` still holds the one it took the place of
    /// (null: none; `Cold` is the current recorder's).
    pub(super) polled: Cell<*mut TaskState>,
}

impl Hot {
    pub(super) const fn new() -> Hot {
        Hot {
            generation: Cell::new(0),
            seq: Cell::new(0),
            fast_stack: RawSlice::new(),
            depth: Cell::new(0),
            stack: RawSlice::new(),
            chunk: Cell::new(std::ptr::null()),
            len: Cell::new(0),
            cap: Cell::new(0),
            count_fast: Cell::new(false),
            snaps: RawSlice::new(),
            table: RawSlice::new(),
            meta: RawSlice::new(),
            keys: [const { Cell::new(("", u32::MAX)) }; 16],
            agg: RawSlice::new(),
            kids: RawSlice::new(),
            spec_seq: Cell::new(0),
            saved_chunk: Cell::new(std::ptr::null()),
            saved_len: Cell::new(0),
            saved_cap: Cell::new(0),
            spec_chunk: Cell::new(std::ptr::null()),
            spec_cap: Cell::new(0),
            late_chunk: Cell::new(std::ptr::null()),
            late_len: Cell::new(0),
            late_end: Cell::new(0),
            scope_end: Cell::new(0),
            marks: Cell::new(std::ptr::null()),
            polled: Cell::new(std::ptr::null_mut()),
        }
    }

    /// Aggregation mode: adds the ended call to the totals of its region
    /// (and its time to its parent's children); `false` when not
    /// aggregating, or the table or the counters need to grow (`Cold`).
    #[inline(always)]
    pub(super) fn aggregate(&self, record: Record) -> bool {
        let duration = record.end.wrapping_sub(record.start);
        self.agg.add_call(
            &self.kids,
            record.region as usize,
            record.depth() as usize,
            duration,
        )
    }

    /// Pushes an open call; `false` when the stack is full (or disarmed).
    #[inline(always)]
    pub(super) fn push_open(&self, region: u32, seq: u64) -> bool {
        let depth = self.depth.get();
        // The timestamp only once there is room.
        if !self.fast_stack.open_now(depth, seq, region) {
            return false;
        }
        self.depth.set(depth + 1);
        true
    }

    /// The end of the call that ended last among those stored in the
    /// current chunk: that of its last record (records are pushed as calls
    /// end), or, if that record is a frame placed after the call it waited
    /// for (`late_*`), that call's. `None` if the chunk holds none (or is
    /// not lent).
    #[inline(always)]
    pub(super) fn last_end(&self) -> Option<u64> {
        let len = self.len.get();
        if len == 0 || len > self.cap.get() {
            return None;
        }
        let chunk = self.chunk.get();
        if self.late_len.get() == len && std::ptr::eq(self.late_chunk.get(), chunk) {
            return Some(self.late_end.get());
        }
        // SAFETY: `0 < len <= cap`: `chunk` is a live chunk `Cold` holds,
        // whose first `len` records this thread pushed (see `Hot`); read
        // through a shared reference, only published records.
        unsafe { &*chunk }.records().get(len - 1).map(|r| r.end)
    }

    /// The innermost open call, if the stack is armed and not empty.
    #[inline(always)]
    pub(super) fn top(&self) -> Option<Open> {
        // At depth 0 the index wraps to `usize::MAX`, never below a length:
        // one comparison for both checks.
        self.fast_stack.open(self.depth.get().wrapping_sub(1))
    }

    /// Appends a record to the current chunk; `false` when it is full.
    #[inline(always)]
    pub(super) fn push_record(&self, record: Record) -> bool {
        let len = self.len.get();
        if len >= self.cap.get() {
            return false;
        }
        // SAFETY: `len < cap`: while `cap > 0`, `chunk` is a live chunk
        // `Cold` holds (its current one, or during a speculative first poll
        // its spec chunk; it zeroes `cap` before it lets go of either), of
        // `cap` slots, which this thread alone pushes to, `len` so far (see
        // `Hot`).
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
            || depth >= self.stack.len()
            || depth >= self.snaps.len()
        {
            return None;
        }
        let counts = counters::alloc_counts();
        let seq = self.seq.get() + 1;
        if !self.snaps.set(depth, counts) {
            return None;
        }
        let open = Open {
            start: ticks(),
            seq,
            region,
        };
        if !self.stack.set_open(depth, open) {
            return None;
        }
        self.seq.set(seq);
        self.depth.set(depth + 1);
        Some(seq)
    }

    /// Allocation counting's lean exit of the innermost call `seq` at
    /// `end`: its counts added to its region's totals and to its parent's
    /// children, its record stored; `false` (nothing done) if the lean path
    /// is off or out of room (then `Cold` does it).
    #[inline(always)]
    pub(super) fn exit_counted(&self, seq: u64, end: u64) -> bool {
        if !self.count_fast.get() {
            return false;
        }
        // At depth 0 the index wraps to `usize::MAX`, never below a length.
        let d = self.depth.get().wrapping_sub(1);
        let Some(top) = self.stack.open(d) else {
            return false;
        };
        if top.seq != seq || d >= self.snaps.len() {
            return false;
        }
        // The parent's region, for its children's totals.
        let parent = match d.checked_sub(1) {
            Some(up) => match self.stack.open(up) {
                Some(open) => Some(open.region as usize),
                None => return false,
            },
            None => None,
        };
        let len = self.len.get();
        if len >= self.cap.get() {
            return false;
        }
        let counts = counters::alloc_counts();
        let Some(snap) = self.snaps.get(d) else {
            return false;
        };
        let mut delta = [0u64; 4];
        for (i, c) in counts.iter().enumerate() {
            delta[i] = c.wrapping_sub(snap[i]);
        }
        let [a, b, c, e] = delta;
        let children = parent.map(|p| (p, 5, &delta[..]));
        if !self
            .table
            .add_rows((top.region as usize, 0, &[1, a, b, c, e]), children)
        {
            return false;
        }
        let record = Record::new(top.start, end, top.region, d as u32);
        // SAFETY: `len < cap`, checked above, and since then only the
        // counter table's atomics were written, none of this `Hot`'s cells:
        // while `cap > 0`, `chunk` is the live chunk `Cold` holds, of `cap`
        // slots, which this thread alone pushes to, `len` so far (see `Hot`).
        unsafe { (*self.chunk.get()).push(len, record) };
        self.len.set(len + 1);
        self.depth.set(d);
        true
    }

    /// Makes the fast paths divert to `Cold` until re-armed: every slice
    /// withdrawn, no chunk.
    pub(super) fn disarm(&self) {
        self.count_fast.set(false);
        self.fast_stack.withdraw();
        self.stack.withdraw();
        self.cap.set(0);
        self.snaps.withdraw();
        self.table.withdraw();
        self.meta.withdraw();
        self.agg.withdraw();
        self.kids.withdraw();
        self.spec_cap.set(0);
        self.marks.set(std::ptr::null());
    }

    /// The calls open in this recorder: how many, and the outermost.
    pub(super) fn outermost(&self) -> (usize, Option<Open>) {
        let depth = self.depth.get().min(self.stack.len());
        match self.stack.open(0) {
            Some(bottom) if depth > 0 => (depth, Some(bottom)),
            _ => (0, None),
        }
    }
}

/// Runs `f` on this thread's `Hot`, reached through a direct thread-local
/// access (a closure that only takes the address is inlined where a larger
/// one passed to `LocalKey::with` may not be).
#[inline(always)]
pub(super) fn with_hot<R>(f: impl FnOnce(&Hot) -> R) -> R {
    let hot: *const Hot = HOT.with(|hot| hot as *const Hot);
    // SAFETY: the calling thread's `Hot`, a thread-local without a
    // destructor: alive while the thread runs.
    f(unsafe { &*hot })
}

/// [`Hot::enter_counted`] with a direct thread-local access.
#[inline(always)]
pub(super) fn enter_counted(region: u32, generation: u32) -> Option<u64> {
    // The address first (a closure this small is inlined: a direct
    // thread-local access), then the work.
    let hot: *const Hot = HOT.with(|hot| hot as *const Hot);
    // SAFETY: the calling thread's `Hot`, a thread-local without a
    // destructor: alive while the thread runs.
    unsafe { &*hot }.enter_counted(region, generation)
}

/// [`Hot::exit_counted`] (see [`enter_counted`]).
#[inline(always)]
pub(super) fn exit_counted(seq: u64, end: u64) -> bool {
    let hot: *const Hot = HOT.with(|hot| hot as *const Hot);
    // SAFETY: the calling thread's `Hot`, a thread-local without a
    // destructor: alive while the thread runs.
    unsafe { &*hot }.exit_counted(seq, end)
}
