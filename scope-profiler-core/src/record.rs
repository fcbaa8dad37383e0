//! The per-call record and the chunks that hold a thread's records.
//!
//! A chunk has one writer, the thread that owns it, and any number of
//! readers (`checkpoint`, `finalize`, introspection) that may run on other
//! threads at the same time. The writer fills slots in order and publishes
//! the new length with a release store after each record; readers see only
//! the published prefix, so a reader never observes a slot being written.
//!
//! A chunk of 128 KiB or more takes its slots straight from the OS
//! (`mmap`) and gives them back when it is dropped (`munmap`). Through
//! `malloc`, freed chunks raised glibc's dynamic mmap threshold, later
//! chunks came from the heap arenas of the recording threads, and pages
//! freed there stayed resident: 20-30 MiB of RSS past a 64 MiB memory
//! limit at 200M calls. With pages of its own, the memory a chunk counts
//! against the limit is the memory it holds.

use std::alloc::Layout;
use std::cell::{Cell, UnsafeCell};
use std::mem::MaybeUninit;
use std::ptr::NonNull;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One completed call: 24 bytes.
///
/// Records are stored in the order calls *end* (post-order); the depth is
/// the number of calls open on the thread when this one started, which
/// together with that order gives the exact nesting without timestamps.
///
/// The depth's word also holds one flag, [`Record::ok`]: the call was of a
/// `#[profile(record_outcome)]` function that returned ok, so that the
/// common outcome costs no more than a plain call (other outcomes are call
/// metadata of the lane). The word is private so that no reader takes the
/// flag for depth: [`Record::depth`] masks it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Record {
    pub start: u64,
    pub end: u64,
    pub region: u32,
    depth_ok: u32,
}

impl Record {
    /// The flag of an ok outcome in the depth's word.
    const OK: u32 = 1 << 31;

    /// The deepest depth a record holds (the flag takes the top bit).
    pub const MAX_DEPTH: u32 = Self::OK - 1;

    /// A call of `region` from `start` to `end` (ticks) at `depth`, which
    /// is at most [`MAX_DEPTH`](Record::MAX_DEPTH): 2^31 open calls would
    /// take 48 GiB of stack entries, past any session's memory limit.
    #[inline(always)]
    pub const fn new(start: u64, end: u64, region: u32, depth: u32) -> Record {
        debug_assert!(depth <= Self::MAX_DEPTH);
        Record {
            start,
            end,
            region,
            depth_ok: depth,
        }
    }

    /// The number of calls open on its lane when it started.
    #[inline(always)]
    pub const fn depth(&self) -> u32 {
        self.depth_ok & Self::MAX_DEPTH
    }

    /// Whether the call's `record_outcome` function returned ok.
    #[inline(always)]
    pub const fn ok(&self) -> bool {
        self.depth_ok & Self::OK != 0
    }

    /// This record marked as an ok outcome.
    #[inline(always)]
    pub const fn with_ok(self, ok: bool) -> Record {
        Record {
            depth_ok: if ok {
                self.depth_ok | Self::OK
            } else {
                self.depth_ok & Self::MAX_DEPTH
            },
            ..self
        }
    }

    /// This record at `depth` instead (placed inside a lane or a frame
    /// below others), its flag kept.
    #[inline(always)]
    pub const fn at_depth(self, depth: u32) -> Record {
        Record::new(self.start, self.end, self.region, depth).with_ok(self.ok())
    }
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
pub struct Chunk {
    slots: Slots,
    published: AtomicUsize,
}

type Slot = UnsafeCell<MaybeUninit<Record>>;

/// Bytes from which a chunk's slots are pages of their own.
const OWN_PAGES_FROM: usize = 128 << 10;

/// The uninitialized slots of a chunk: from the global allocator when
/// small, else pages mapped for this chunk alone.
struct Slots {
    ptr: NonNull<Slot>,
    len: usize,
    mapped: bool,
}

// SAFETY: `Slots` owns its allocation exclusively (no aliasing pointer
// exists elsewhere); moving it to another thread moves that ownership.
// Shared access goes through `Chunk`, whose own `Sync` impl argues it.
unsafe impl Send for Slots {}

impl Slots {
    fn new(len: usize) -> Slots {
        let layout = Layout::array::<Slot>(len.max(1)).expect("chunk size overflows");
        if layout.size() >= OWN_PAGES_FROM {
            let bytes = mapping_bytes(layout.size());
            if let Some(ptr) = take_spare(bytes).or_else(|| map_pages(bytes)) {
                return Slots {
                    ptr: ptr.cast(),
                    len,
                    mapped: true,
                };
            }
        }
        // SAFETY: `layout` has a non-zero size (at least one slot).
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(ptr) = NonNull::new(raw.cast::<Slot>()) else {
            std::alloc::handle_alloc_error(layout)
        };
        Slots {
            ptr,
            len,
            mapped: false,
        }
    }

    fn layout(&self) -> Layout {
        Layout::array::<Slot>(self.len.max(1)).expect("checked when allocated")
    }

    /// Bytes of the mapping of a chunk with pages of its own.
    fn mapped_bytes(&self) -> usize {
        mapping_bytes(self.layout().size())
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        let layout = self.layout();
        if self.mapped {
            let bytes = self.mapped_bytes();
            if keep_spare(self.ptr.cast(), bytes) {
                return;
            }
            // SAFETY: `ptr` was returned by `map_pages` for exactly `bytes`
            // bytes (as this chunk's, or a spare's of that size) and is
            // given back only here, once, as the slots are dropped.
            unsafe { crate::platform::unmap_pages(self.ptr.cast(), bytes) };
        } else {
            // SAFETY: `ptr` was returned by `alloc(layout)` with this same
            // layout and is freed only here, once.
            unsafe { std::alloc::dealloc(self.ptr.as_ptr().cast(), layout) };
        }
    }
}

/// Mappings of chunks dropped at a session's end kept for the next ones
/// (a new session's), their pages still faulted in: a process that records
/// session after session (a test suite, a benchmark's rounds, recording
/// started and stopped from outside) records into memory it has touched,
/// and takes no page fault for it. The first `SPARES_RESIDENT` stay as
/// they are; more, up to the ending session's budget (half its memory
/// limit: what it held in memory before it would spill), only where the OS
/// can take their pages back when it needs memory (`platform::free_lazily`,
/// Linux's `MADV_FREE`), so what stays resident after a session is 8
/// chunks (16 MiB at most) plus what the kernel has not yet wanted back.
static SPARES: Mutex<Vec<Spare>> = Mutex::new(Vec::new());

/// Spares kept whatever the OS offers: 8 chunks, 16 MiB at most (chunks
/// are at most 2 MiB).
const SPARES_RESIDENT: usize = 8;

thread_local! {
    /// The budget of spares (their bytes in all) while this thread lets a
    /// session's records go (see `keeping_spares`); 0 otherwise, so that
    /// during a session every chunk in memory is one the store counts
    /// against its limit.
    static KEEPING: Cell<usize> = const { Cell::new(0) };
}

/// Runs `f` (a session's end, on the thread that ends it) with the chunks
/// it drops kept as spares, up to `budget` bytes of spares in all past the
/// first `SPARES_RESIDENT` (none on a thread whose thread-locals are
/// already destroyed).
pub fn keeping_spares<R>(budget: usize, f: impl FnOnce() -> R) -> R {
    /// Puts the thread's previous budget back, also if `f` unwinds.
    struct Restore(Option<usize>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(before) = self.0 {
                let _ = KEEPING.try_with(|k| k.set(before));
            }
        }
    }
    let _restore = Restore(KEEPING.try_with(|k| k.replace(budget)).ok());
    f()
}

/// A mapping no chunk holds.
struct Spare {
    ptr: NonNull<u8>,
    bytes: usize,
}

// SAFETY: a spare is a mapping no one else points to (its chunk was
// dropped); handing it to another thread hands over that ownership.
unsafe impl Send for Spare {}

/// A spare mapping of exactly `bytes`, if one is kept.
fn take_spare(bytes: usize) -> Option<NonNull<u8>> {
    let mut spares = crate::sync::lock(&SPARES);
    let at = spares.iter().position(|s| s.bytes == bytes)?;
    Some(spares.swap_remove(at).ptr)
}

/// Keeps the mapping of a dropped chunk as a spare; `false` (the caller
/// unmaps it) when not keeping, when the budget is spent, or when past the
/// first `SPARES_RESIDENT` the OS cannot take the pages back lazily.
fn keep_spare(ptr: NonNull<u8>, bytes: usize) -> bool {
    let budget = KEEPING.try_with(Cell::get).unwrap_or(0);
    if budget == 0 {
        return false;
    }
    let mut spares = crate::sync::lock(&SPARES);
    if spares.len() >= SPARES_RESIDENT {
        let kept: usize = spares.iter().map(|s| s.bytes).sum();
        // SAFETY: `ptr` is the mapping of the chunk being dropped, made by
        // `map_pages(bytes)` and not given back; no one reads its records
        // again (the chunk is gone), and whoever takes the spare writes a
        // slot before reading it (slots are `MaybeUninit`).
        if kept + bytes > budget || !unsafe { crate::platform::free_lazily(ptr, bytes) } {
            return false;
        }
    }
    spares.push(Spare { ptr, bytes });
    true
}

/// A huge page: chunks of at least this size are mapped in whole huge pages,
/// aligned, and offered to the kernel's transparent huge pages.
pub(crate) use crate::platform::HUGE_PAGE;

/// The smallest page size of the targets: a write every `PAGE` bytes
/// touches every page, whatever the size of the OS's pages.
const PAGE: usize = 4096;

/// Bytes mapped for slots of `bytes` bytes: whole huge pages when that
/// wastes at most 1/64 of a huge page (the 8 bytes a chunk of
/// `HUGE_PAGE / 24` records leaves, say), else the size itself.
fn mapping_bytes(bytes: usize) -> usize {
    let huge = bytes.next_multiple_of(HUGE_PAGE);
    if huge - bytes <= HUGE_PAGE / 64 {
        huge
    } else {
        bytes
    }
}

/// `bytes` of fresh memory for one chunk, or `None` if the OS refused
/// (`platform::map_pages`: on Linux a private anonymous mapping, aligned
/// and offered to transparent huge pages when of whole huge pages, so the
/// recording thread takes one page fault per 2 MiB of records instead of
/// 512: about 10 ns per call on a VM, where a fault is dear).
fn map_pages(bytes: usize) -> Option<NonNull<u8>> {
    crate::platform::map_pages(bytes)
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
        Chunk {
            slots: Slots::new(capacity),
            published: AtomicUsize::new(0),
        }
    }

    /// Faults in every page of the chunk's memory by writing a zero byte in
    /// each, so that the thread that fills it later takes no page fault
    /// (nor, for a huge page, the zeroing of 2 MiB): the store's writer
    /// prepares chunks this way, off the recording threads.
    pub(crate) fn prefault(&mut self) {
        let bytes = self.slots.len * std::mem::size_of::<Slot>();
        let base = self.slots.ptr.as_ptr().cast::<u8>();
        for offset in (0..bytes).step_by(PAGE) {
            // SAFETY: `offset < bytes`, the size of the slots' allocation,
            // so the byte lies in it; `&mut self`: no other reference to
            // the chunk exists, so nothing reads or writes it meanwhile;
            // the slots are `MaybeUninit`, so any byte may be written.
            // Volatile, so that the store of a zero is not left out.
            unsafe { base.add(offset).write_volatile(0) };
        }
    }

    /// Gives the pages of a chunk with pages of its own back to the OS: its
    /// records are no longer needed (the session ended), though the thread
    /// that fills it may still hold it, idle, until it records again or
    /// exits. The memory stays mapped: a record pushed later lands on a
    /// fresh zero page. Small chunks are left as they are.
    ///
    /// # Safety
    /// No one reads the records published so far after this call: the
    /// caller knows every reader of them is gone (its lane was released at
    /// the end of the session, and no cut of it is alive). They may read as
    /// zeros from now on.
    pub unsafe fn discard(&self) {
        if !self.slots.mapped {
            return;
        }
        let bytes = self.slots.mapped_bytes();
        // SAFETY: the range is exactly this chunk's own mapping (made by
        // `map_pages` for `bytes` bytes, given back only on drop, which
        // cannot happen while `&self` is held), and by this function's
        // contract no one reads its published records afterwards. The
        // memory stays valid and writable, so the owning thread may still
        // push into it, and the slots are `MaybeUninit` with no invariant.
        unsafe { crate::platform::discard_pages(self.slots.ptr.cast(), bytes) };
    }

    /// Keeps the first `len` records (at most those published), each `by`
    /// calls less deep: a speculative first poll's records, made at the
    /// depths of the recorder it began in, handed to the task it became
    /// (it is not shared: `&mut self`).
    pub(crate) fn rebase(&mut self, len: usize, by: u32) {
        let len = len.min(*self.published.get_mut());
        for slot in &mut self.slots_mut()[..len] {
            // SAFETY: the slot is below the published count: initialized.
            let record = unsafe { slot.get_mut().assume_init_read() };
            *slot.get_mut() = MaybeUninit::new(record.at_depth(record.depth().saturating_sub(by)));
        }
        *self.published.get_mut() = len;
    }

    /// The slots, exclusively (`&mut self`).
    fn slots_mut(&mut self) -> &mut [Slot] {
        // SAFETY: `slots.len` slots allocated at `ptr` (see `Slots::new`),
        // owned by this chunk; `&mut self` excludes every other access.
        unsafe { std::slice::from_raw_parts_mut(self.slots.ptr.as_ptr(), self.slots.len) }
    }

    /// Empties a chunk for reuse (it is not shared: `&mut self`).
    pub(crate) fn clear(&mut self) {
        *self.published.get_mut() = 0;
    }

    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        self.slots.len
    }

    /// Stores `record` at slot `index` and publishes it.
    ///
    /// # Safety
    /// Only the chunk's owning thread may call this, with `index` equal to the
    /// number of records it pushed so far, and `index < capacity()`.
    #[inline(always)]
    pub(crate) unsafe fn push(&self, index: usize, record: Record) {
        debug_assert!(index < self.slots.len);
        // SAFETY: `index < capacity()` by the contract, so the slot lies in
        // the allocation; no other thread writes it and no reader reads it
        // before the store below publishes it.
        unsafe {
            (*self.slots.ptr.as_ptr().add(index))
                .get()
                .write(MaybeUninit::new(record))
        };
        self.published.store(index + 1, Ordering::Release);
    }

    /// The records published so far.
    pub(crate) fn records(&self) -> &[Record] {
        let len = self.published.load(Ordering::Acquire);
        // SAFETY: the first `len` slots were initialized before `len` was
        // published (release/acquire) and are never written again;
        // `UnsafeCell<MaybeUninit<Record>>` has the layout of `Record`.
        unsafe { std::slice::from_raw_parts(self.slots.ptr.as_ptr().cast::<Record>(), len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORD: usize = std::mem::size_of::<Record>();

    #[test]
    fn publishes_in_order() {
        let chunk = Chunk::new(4);
        assert!(chunk.records().is_empty());
        let r = Record::new(1, 2, 3, 0);
        // SAFETY: this thread is the only writer; indices are in order.
        unsafe {
            chunk.push(0, r);
            chunk.push(1, Record { start: 5, ..r });
        }
        assert_eq!(chunk.records().len(), 2);
        assert_eq!(chunk.records()[1].start, 5);
        assert_eq!(chunk.capacity(), 4);
    }

    #[test]
    fn large_chunks_have_pages_of_their_own() {
        let small = Chunk::new(1024);
        let large = Chunk::new(64 * 1024);
        assert!(!small.slots.mapped);
        assert!(large.slots.mapped, "a 1.5 MiB chunk comes from mmap");
        let r = Record::new(7, 9, 1, 2);
        for i in 0..large.capacity() {
            // SAFETY: this thread is the only writer; indices are in order
            // and below the capacity.
            unsafe {
                large.push(
                    i,
                    Record {
                        start: i as u64,
                        ..r
                    },
                )
            };
        }
        let records = large.records();
        assert_eq!(records.len(), 64 * 1024);
        assert_eq!(records[65535], Record { start: 65535, ..r });
    }

    /// Pages of `chunk`'s slots resident in memory, where the platform
    /// can tell (Linux: mincore).
    fn resident_pages(chunk: &Chunk) -> Option<usize> {
        crate::platform::resident_pages(chunk.slots.ptr.cast(), chunk.slots.layout().size())
    }

    /// Whether discarding gives pages back on this platform.
    fn discard_frees_pages() -> bool {
        crate::platform::IMPLEMENTATION == "linux"
    }

    /// The `AnonHugePages` of the mapping that holds `addr`, in KiB, from
    /// /proc/self/smaps; `None` if no mapping holds it.
    fn anon_huge_kib(addr: usize) -> Option<u64> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            let first = line.split_whitespace().next().unwrap_or("");
            if let Some((lo, hi)) = first.split_once('-')
                && let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
            {
                inside = (lo..hi).contains(&addr);
                continue;
            }
            if inside && let Some(kib) = line.strip_prefix("AnonHugePages:") {
                return kib.trim().trim_end_matches("kB").trim().parse().ok();
            }
        }
        None
    }

    #[test]
    fn a_chunk_of_a_huge_page_is_aligned_to_one_and_asks_for_it() {
        let records = HUGE_PAGE / RECORD;
        let chunk = Chunk::new(records);
        let addr = chunk.slots.ptr.as_ptr() as usize;
        assert!(chunk.slots.mapped);
        assert_eq!(addr % HUGE_PAGE, 0, "not aligned to a huge page");
        assert_eq!(chunk.slots.mapped_bytes(), HUGE_PAGE);
        assert_eq!(mapping_bytes(64 * 1024 * RECORD), 64 * 1024 * RECORD);
        let r = Record::new(1, 2, 3, 0);
        for i in 0..records {
            // SAFETY: this thread is the only writer; indices are in order.
            unsafe { chunk.push(i, r) };
        }
        assert_eq!(chunk.records().len(), records);
        // Whether the kernel gave a huge page is its choice; where
        // transparent huge pages are on (always or madvise), it does for a
        // fresh, aligned, advised 2 MiB on a machine with free memory.
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        if crate::platform::IMPLEMENTATION != "linux" {
            eprintln!("the portable platform asks for no huge pages: not checked");
        } else if thp.contains("[always]") || thp.contains("[madvise]") {
            assert_eq!(anon_huge_kib(addr), Some(2048), "no huge page ({thp})");
        } else {
            eprintln!("transparent huge pages are off here ({thp:?}): not checked");
        }
        // SAFETY: no reader of this test's chunk is left.
        unsafe { chunk.discard() };
        if discard_frees_pages() {
            assert_eq!(resident_pages(&chunk), Some(0), "discard kept pages");
        }
    }

    #[test]
    fn a_prefaulted_chunk_has_every_page_in_memory_and_no_record() {
        // A size no session's chunks have: no spare of it (whose pages
        // would be in memory) is left by another test's session.
        let mut chunk = Chunk::new(4096 * 20);
        assert!(chunk.slots.mapped, "a chunk of pages of its own");
        let pages = chunk.slots.layout().size().div_ceil(PAGE);
        if discard_frees_pages() {
            assert!(
                resident_pages(&chunk).unwrap() < pages,
                "a new mapping is not all in memory"
            );
        }
        chunk.prefault();
        if discard_frees_pages() {
            assert_eq!(resident_pages(&chunk), Some(pages), "every page touched");
        }
        assert!(chunk.records().is_empty(), "nothing published");
        let r = Record::new(1, 2, 3, 0);
        // SAFETY: this thread is the only writer; the first index.
        unsafe { chunk.push(0, r) };
        assert_eq!(chunk.records(), [r]);
    }

    #[test]
    fn a_discarded_chunk_gives_its_pages_back_and_stays_writable() {
        let chunk = Chunk::new(64 * 1024);
        let r = Record::new(1, 2, 3, 0);
        for i in 0..chunk.capacity() {
            // SAFETY: this thread is the only writer; indices are in order.
            unsafe { chunk.push(i, r) };
        }
        if discard_frees_pages() {
            assert!(
                resident_pages(&chunk).unwrap() >= 300,
                "the records are in memory"
            );
        }
        // SAFETY: no reader of this test's chunk is left.
        unsafe { chunk.discard() };
        if discard_frees_pages() {
            assert_eq!(resident_pages(&chunk), Some(0), "discard kept pages");
        }
        let small = Chunk::new(16);
        // SAFETY: as above; not mapped: nothing to give back.
        unsafe { small.discard() };
        let fresh = Chunk::new(64 * 1024);
        // SAFETY: as above; a discarded chunk's memory stays mapped.
        unsafe { fresh.push(0, r) };
        // SAFETY: as above.
        unsafe { fresh.discard() };
        // SAFETY: as above.
        unsafe { fresh.push(0, r) };
        assert_eq!(fresh.records(), [r]);
    }

    /// Drops `n` mapped chunks of `records` records while keeping spares
    /// within `budget`, and counts the spares of their size then kept; then
    /// makes `n` chunks again (taking those spares, writing into each) and
    /// drops them unkept, so no spare of the size is left.
    fn kept(records: usize, n: usize, budget: usize) -> usize {
        let chunks: Vec<Chunk> = (0..n).map(|_| Chunk::new(records)).collect();
        assert!(chunks.iter().all(|c| c.slots.mapped), "mapped chunks");
        let bytes = chunks[0].slots.mapped_bytes();
        keeping_spares(budget, || drop(chunks));
        let of_size = |spares: &Vec<Spare>| spares.iter().filter(|s| s.bytes == bytes).count();
        let kept = of_size(&crate::sync::lock(&SPARES));
        let again: Vec<Chunk> = (0..n).map(|_| Chunk::new(records)).collect();
        let r = Record::new(1, 2, 3, 0);
        for chunk in &again {
            // SAFETY: this thread is the only writer; the first index.
            unsafe { chunk.push(0, r) };
            assert_eq!(chunk.records(), [r], "a spare's memory is writable");
        }
        assert_eq!(of_size(&crate::sync::lock(&SPARES)), 0, "every spare taken");
        drop(again);
        assert_eq!(of_size(&crate::sync::lock(&SPARES)), 0, "none kept unasked");
        kept
    }

    // Record counts no other test's chunks have (their sizes are whole
    // pages): the spares of these sizes are this test's alone.
    #[test]
    fn a_session_of_many_chunks_leaves_them_all_to_the_next_where_the_os_can_take_them_back() {
        let got = kept(4096 * 17, 3 * SPARES_RESIDENT, 1 << 30);
        if crate::platform::IMPLEMENTATION == "linux" {
            // Past the first few, kept lazily freed (MADV_FREE).
            assert_eq!(got, 3 * SPARES_RESIDENT, "every mapping kept");
        } else {
            assert!(got <= SPARES_RESIDENT, "{got} spares kept resident");
        }
    }

    #[test]
    fn past_the_budget_only_the_first_few_spares_are_kept() {
        let got = kept(4096 * 18, 3 * SPARES_RESIDENT, 1);
        assert!(got <= SPARES_RESIDENT, "{got} spares kept past the budget");
        let none = kept(4096 * 19, 4, 0);
        assert_eq!(none, 0, "a budget of 0 keeps nothing");
    }
}
