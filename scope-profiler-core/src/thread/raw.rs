//! [`RawSlice`]: a slice that this thread's `Cold` owns and lends to its
//! `Hot`, reached through a pointer and a length in cells (no borrow flag,
//! no lazy initialization), every access checked against the length.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::lane::AggEntry;
use crate::lanemeta::{self, Row};
use crate::open::{Open, OpenSlot};

/// A pointer and a length, both in cells, lent by [`RawSlice::lend`] and
/// taken back by [`RawSlice::withdraw`] (length 0). Every access checks its
/// index against the length and runs no other code between the check and
/// the access, so nothing can withdraw the memory in between. Not `Sync`
/// (cells): only the thread whose `Hot` holds it reaches it.
pub(super) struct RawSlice<T> {
    ptr: Cell<*mut T>,
    len: Cell<usize>,
}

impl<T> RawSlice<T> {
    /// Nothing lent.
    pub(super) const fn new() -> RawSlice<T> {
        RawSlice {
            ptr: Cell::new(std::ptr::null_mut()),
            len: Cell::new(0),
        }
    }

    /// Lends `len` elements at `ptr` until [`RawSlice::withdraw`] or the
    /// next `lend`.
    ///
    /// # Safety
    /// Until then, `ptr` points to `len` initialized `T`s that stay
    /// allocated and in place, which this thread reaches only through
    /// `RawSlice`s; no other thread writes them, and none reads them unless
    /// they are atomics (which this type writes only atomically).
    pub(super) unsafe fn lend(&self, ptr: *mut T, len: usize) {
        self.ptr.set(ptr);
        self.len.set(len);
    }

    /// Takes the memory back: every access fails until the next `lend`.
    pub(super) fn withdraw(&self) {
        self.len.set(0);
    }

    /// The pointer and the number of elements lent, to lend again as
    /// they are (`lazy`).
    #[inline(always)]
    pub(super) fn parts(&self) -> (*mut T, usize) {
        (self.ptr.get(), self.len.get())
    }

    /// The number of elements lent (0 when withdrawn).
    #[inline(always)]
    pub(super) fn len(&self) -> usize {
        self.len.get()
    }
}

impl RawSlice<OpenSlot> {
    /// The call in slot `i`, if lent.
    #[inline(always)]
    pub(super) fn open(&self, i: usize) -> Option<Open> {
        if i >= self.len.get() {
            return None;
        }
        // SAFETY: `i < len`: by `lend`'s contract slot `i` is allocated and
        // initialized; its fields are atomics, read through a shared
        // reference (other threads may read them too, never write them).
        Some(unsafe { &*self.ptr.get().add(i) }.load())
    }

    /// Opens a call of `region` numbered `seq` in slot `i`, starting now:
    /// the timestamp is taken only if the slot is lent, and after the
    /// check (the clock runs none of this crate's code, so nothing can
    /// withdraw the slice in between: no second check); `false` (nothing
    /// written, no timestamp) if it is not lent.
    #[inline(always)]
    pub(super) fn open_now(&self, i: usize, seq: u64, region: u32) -> bool {
        if i >= self.len.get() {
            return false;
        }
        // SAFETY: `i < len`: by `lend`'s contract slot `i` is allocated and
        // initialized, and this thread is its only writer; only
        // `fast_ticks()` runs between the check and the access, which reads
        // a clock and calls nothing that could reach this thread's `Cold`
        // and withdraw the slice. Its fields are atomics, written through a
        // shared reference.
        let slot = unsafe { &*self.ptr.get().add(i) };
        slot.store(Open {
            // The session clock: a stack is lent to the fast paths (the
            // only callers) only while it is (`Cold::lend_recorder`).
            start: crate::clock::fast_ticks(),
            seq,
            region,
        });
        true
    }

    /// Writes `open` in slot `i`; `false` (nothing written) if it is not
    /// lent.
    #[inline(always)]
    pub(super) fn set_open(&self, i: usize, open: Open) -> bool {
        if i >= self.len.get() {
            return false;
        }
        // SAFETY: `i < len`: by `lend`'s contract slot `i` is allocated and
        // initialized, and this thread is its only writer; its fields are
        // atomics, written through a shared reference.
        unsafe { &*self.ptr.get().add(i) }.store(open);
        true
    }
}

impl<T: Copy> RawSlice<T> {
    /// Element `i`, if lent.
    #[inline(always)]
    pub(super) fn get(&self, i: usize) -> Option<T> {
        if i >= self.len.get() {
            return None;
        }
        // SAFETY: `i < len`: by `lend`'s contract element `i` is initialized
        // and allocated, and this thread, the only writer, is not writing it
        // (it is here, and a `RawSlice` access runs no other code).
        Some(unsafe { self.ptr.get().add(i).read() })
    }

    /// Sets element `i`; `false` (nothing written) if it is not lent.
    #[inline(always)]
    pub(super) fn set(&self, i: usize, value: T) -> bool {
        if i >= self.len.get() {
            return false;
        }
        // SAFETY: `i < len`: by `lend`'s contract element `i` is allocated,
        // and only this thread reads or writes it, not concurrently with
        // this access (which runs no other code).
        unsafe { self.ptr.get().add(i).write(value) };
        true
    }
}

impl RawSlice<AggEntry> {
    /// Aggregation: adds a call of `region` at `depth` that lasted
    /// `duration` to entry `region`, its own time being `duration` minus
    /// its children's, which `kids` (per depth, the summed durations of the
    /// calls ended there since the enclosing call opened) holds at
    /// `depth + 1` and which restart at 0; its duration goes to its
    /// parent's children at `depth`. `false` (nothing changed) if the
    /// entry or those two counters are not lent.
    #[inline(always)]
    pub(super) fn add_call(
        &self,
        kids: &RawSlice<u64>,
        region: usize,
        depth: usize,
        duration: u64,
    ) -> bool {
        if region >= self.len.get() || depth + 1 >= kids.len.get() {
            return false;
        }
        // SAFETY: `region < len` and `depth + 1 < kids.len`, read just
        // above with nothing run since but these writes to elements of
        // `kids` (no `RawSlice`'s cells): by `lend`, the entry and the two
        // counters are allocated and initialized, the counters reached by
        // this thread only (not concurrently: no other code runs here), the
        // entry shared only as atomics (`AggEntry` is `Sync`).
        unsafe {
            let at = kids.ptr.get().add(depth);
            let children = at.add(1).replace(0);
            at.write(at.read().wrapping_add(duration));
            (*self.ptr.get().add(region)).add(duration, duration.wrapping_sub(children));
        }
        true
    }
}

impl<const N: usize> RawSlice<[AtomicU64; N]> {
    /// Adds to rows of atomics (single writer: relaxed load and store,
    /// read by other threads' cuts): to row `a.0` from column `a.1` on the
    /// values `a.2`, and likewise with `b`; `false` (nothing added) if a
    /// row is not lent.
    #[inline(always)]
    pub(super) fn add_rows(
        &self,
        a: (usize, usize, &[u64]),
        b: Option<(usize, usize, &[u64])>,
    ) -> bool {
        let len = self.len.get();
        if a.0 >= len || b.is_some_and(|b| b.0 >= len) {
            return false;
        }
        let add = |(row, at, values): (usize, usize, &[u64])| {
            // SAFETY: `row < len`, checked above with nothing run since but
            // these atomic adds: the row is allocated and initialized
            // (`lend`); it is shared only as atomics (`AtomicU64` is `Sync`).
            let row = unsafe { &*self.ptr.get().add(row) };
            for (cell, v) in row[at..].iter().zip(values) {
                cell.store(
                    cell.load(Ordering::Relaxed).wrapping_add(*v),
                    Ordering::Relaxed,
                );
            }
        };
        add(a);
        if let Some(b) = b {
            add(b);
        }
        true
    }
}

impl RawSlice<Row> {
    /// Appends `row` to the lent rows of a `lanemeta::MetaBlock` (see
    /// [`lanemeta::push_row`]); `false` if they are full or not lent.
    #[inline(always)]
    pub(super) fn push_row(&self, row: [u64; 4]) -> bool {
        let len = self.len.get();
        if len == 0 {
            return false;
        }
        // SAFETY: `len` rows, lent (`lend`) and not withdrawn since the
        // length was read, with no other code run: allocated, initialized,
        // and shared only as atomics (`AtomicU64` is `Sync`). The slice
        // lives only for the call below, which runs no code that withdraws.
        let rows = unsafe { std::slice::from_raw_parts(self.ptr.get(), len) };
        lanemeta::push_row(rows, row)
    }
}
