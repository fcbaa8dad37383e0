//! The per-call record and the chunks that hold a thread's records.
//!
//! A chunk has one writer, the thread that owns it, and any number of
//! readers (`checkpoint`, `finalize`, introspection) that may run on other
//! threads at the same time. The writer fills slots in order and publishes
//! the new length with a release store after each record; readers see only
//! the published prefix, so a reader never observes a slot being written.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One completed call: 24 bytes.
///
/// Records are stored in the order calls *end* (post-order); `depth` is the
/// number of calls open on the thread when this one started, which together
/// with that order gives the exact nesting without timestamps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Record {
    pub start: u64,
    pub end: u64,
    pub region: u32,
    pub depth: u32,
}

const _: () = assert!(std::mem::size_of::<Record>() == 24);

// SAFETY: `repr(C)`, two u64 and two u32 fields: 24 bytes, no padding
// (checked above).
unsafe impl crate::scratch::Plain for Record {}

/// A fixed-capacity block of records with one writer.
///
/// Aligned to two cache lines so that the `published` counter, stored after
/// every record, never shares a line with another thread's data.
#[repr(align(128))]
pub(crate) struct Chunk {
    slots: Box<[UnsafeCell<MaybeUninit<Record>>]>,
    published: AtomicUsize,
}

// SAFETY: slots below `published` are never written again and are only read;
// the slot at `published` is written by the single owning thread (the
// contract of `Chunk::push`) before the release store that makes it visible.
// Readers acquire `published` first, so reads and writes never touch the same
// slot concurrently.
unsafe impl Sync for Chunk {}

impl Chunk {
    /// An empty chunk of `capacity` records.
    pub(crate) fn new(capacity: usize) -> Chunk {
        let slots = (0..capacity)
            .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
            .collect();
        Chunk {
            slots,
            published: AtomicUsize::new(0),
        }
    }

    /// Empties a chunk for reuse (it is not shared: `&mut self`).
    pub(crate) fn clear(&mut self) {
        *self.published.get_mut() = 0;
    }

    pub(crate) fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Stores `record` at slot `index` and publishes it.
    ///
    /// # Safety
    /// Only the chunk's owning thread may call this, with `index` equal to the
    /// number of records it pushed so far, and `index < capacity()`.
    #[inline(always)]
    pub(crate) unsafe fn push(&self, index: usize, record: Record) {
        debug_assert!(index < self.slots.len());
        // SAFETY: by the contract, no other thread writes this slot and no
        // reader reads it before the store below publishes it.
        unsafe { (*self.slots.get_unchecked(index).get()).write(record) };
        self.published.store(index + 1, Ordering::Release);
    }

    /// The records published so far.
    pub(crate) fn records(&self) -> &[Record] {
        let len = self.published.load(Ordering::Acquire);
        // SAFETY: the first `len` slots were initialized before `len` was
        // published (release/acquire) and are never written again;
        // `UnsafeCell<MaybeUninit<Record>>` has the layout of `Record`.
        unsafe { std::slice::from_raw_parts(self.slots.as_ptr().cast::<Record>(), len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publishes_in_order() {
        let chunk = Chunk::new(4);
        assert!(chunk.records().is_empty());
        let r = Record {
            start: 1,
            end: 2,
            region: 3,
            depth: 0,
        };
        // SAFETY: this thread is the only writer; indices are in order.
        unsafe {
            chunk.push(0, r);
            chunk.push(1, Record { start: 5, ..r });
        }
        assert_eq!(chunk.records().len(), 2);
        assert_eq!(chunk.records()[1].start, 5);
        assert_eq!(chunk.capacity(), 4);
    }
}
