//! The per-thread recorder: a stack of open calls and the chunks of finished
//! ones, reached through one thread-local per event.
//!
//! Entering a region pushes `(start, call sequence number, region)` on the
//! thread's stack; leaving it pops the entry and appends a complete
//! [`Record`] to the thread's current chunk. No lock, hash, allocation or
//! formatting happens per call once the current chunk has room: a full chunk
//! is replaced by a new one (the only allocation, once per chunk) and handed
//! to the thread's [`Lane`], which the session holds, so the records of a
//! thread that exits stay with the session.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use crate::clock::{thread_cpu_ns, ticks};
use crate::record::{Chunk, Record};
use crate::session;
use crate::store::{Segment, Store};

const FIRST_CHUNK: usize = 1024;

/// The records one thread made during one session, shared with the session.
pub(crate) struct Lane {
    /// Dense per-session thread index (the file's `thread_ids`).
    pub index: u32,
    pub name: String,
    pub ident: i64,
    pub native_id: i64,
    /// Ticks when the thread first recorded in the session.
    pub start_ticks: u64,
    /// `(ticks, cpu ns)` when the thread exited, if it did.
    pub exit: Mutex<Option<(u64, i64)>>,
    /// The thread's records in order, in memory or spilled to disk.
    pub segments: Mutex<Vec<Segment>>,
    /// Calls per region id among the spilled records.
    pub spilled_counts: Mutex<Vec<u64>>,
    /// Async calls that ended on this thread.
    pub tasks: Mutex<Vec<TaskRecord>>,
}

/// One async call: from its first poll to its completion or cancellation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TaskRecord {
    pub start: u64,
    pub end: u64,
    pub region: u32,
    /// Lane index of the thread that first polled it.
    pub first_lane: u32,
    pub polls: u64,
    /// Ticks spent inside polls.
    pub running: u64,
}

impl Lane {
    /// A lane for the calling thread.
    pub(crate) fn for_current_thread(index: u32) -> Lane {
        let thread = std::thread::current();
        let name = thread
            .name()
            .map(str::to_owned)
            .unwrap_or_else(|| format!("thread-{index}"));
        Lane {
            index,
            name,
            ident: thread_ident(thread.id()),
            // SAFETY: gettid has no preconditions and cannot fail.
            native_id: unsafe { libc::gettid() } as i64,
            start_ticks: ticks(),
            exit: Mutex::new(None),
            segments: Mutex::new(Vec::new()),
            spilled_counts: Mutex::new(Vec::new()),
            tasks: Mutex::new(Vec::new()),
        }
    }

    /// Visits the records held in memory (not spilled), chunk by chunk.
    pub(crate) fn for_each_in_memory(&self, mut f: impl FnMut(&[Record])) {
        for segment in lock(&self.segments).iter() {
            if let Segment::Memory(chunk) = segment {
                f(chunk.records());
            }
        }
    }

    /// CPU time of the thread: at its exit, or now from /proc while it runs.
    pub(crate) fn cpu_ns(&self) -> i64 {
        if let Some((_, cpu)) = *lock(&self.exit) {
            return cpu;
        }
        let path = format!("/proc/self/task/{}/schedstat", self.native_id);
        std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse().ok())
            .unwrap_or(-1)
    }
}

/// Rust's `ThreadId` as an integer (its `as_u64` is unstable).
fn thread_ident(id: std::thread::ThreadId) -> i64 {
    let text = format!("{id:?}");
    text.trim_start_matches("ThreadId(")
        .trim_end_matches(')')
        .parse()
        .unwrap_or(-1)
}

/// Locks a mutex, going on with the data if a panicking thread poisoned it:
/// every critical section here leaves the data consistent.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A call that has started and not ended.
#[derive(Clone, Copy)]
struct Open {
    start: u64,
    seq: u64,
    region: u32,
}

struct Recorder {
    /// Session generation this recorder's lane belongs to (0: none).
    generation: u32,
    lane: Option<Arc<Lane>>,
    store: Option<Arc<Store>>,
    chunk: Option<Arc<Chunk>>,
    len: usize,
    cap: usize,
    stack: Vec<Open>,
    /// Sequence number of the last call entered on this thread; never reset,
    /// so a guard from an earlier session can never match a newer call.
    seq: u64,
}

impl Recorder {
    const fn new() -> Self {
        Recorder {
            generation: 0,
            lane: None,
            store: None,
            chunk: None,
            len: 0,
            cap: 0,
            stack: Vec::new(),
            seq: 0,
        }
    }

    #[inline(always)]
    fn open(&mut self, region: u32, generation: u32) -> u64 {
        if self.generation != generation && !self.attach(generation) {
            return 0;
        }
        self.seq += 1;
        let seq = self.seq;
        self.stack.push(Open {
            start: ticks(),
            seq,
            region,
        });
        seq
    }

    #[inline(always)]
    fn close(&mut self, seq: u64, end: u64) {
        match self.stack.last() {
            Some(top) if top.seq == seq => self.close_top(end),
            _ => self.close_out_of_order(seq, end),
        }
    }

    /// A guard dropped while calls it encloses are still open (or a guard
    /// whose call was already closed that way). Closes the enclosed calls at
    /// the same instant, so the nesting stays exact, then the call itself.
    #[cold]
    #[inline(never)]
    fn close_out_of_order(&mut self, seq: u64, end: u64) {
        let Ok(pos) = self.stack.binary_search_by_key(&seq, |o| o.seq) else {
            return; // already closed by an enclosing guard, or another session's
        };
        while self.stack.len() > pos {
            self.close_top(end);
        }
    }

    /// Ends the innermost open call at `end` and records it.
    #[inline(always)]
    fn close_top(&mut self, end: u64) {
        if let Some(open) = self.stack.pop() {
            let depth = self.stack.len() as u32;
            self.store(Record {
                start: open.start,
                end,
                region: open.region,
                depth,
            });
        }
    }

    #[inline(always)]
    fn store(&mut self, record: Record) {
        if self.len == self.cap {
            self.next_chunk();
        }
        if let Some(chunk) = &self.chunk {
            // SAFETY: this thread is the only writer of its current chunk
            // (chunks are created here and only read elsewhere); `len` counts
            // the records pushed into it and is below its capacity.
            unsafe { chunk.push(self.len, record) };
            self.len += 1;
        }
    }

    #[cold]
    #[inline(never)]
    fn next_chunk(&mut self) {
        let (Some(lane), Some(store)) = (&self.lane, &self.store) else {
            return;
        };
        let cap = (self.cap * 2).clamp(FIRST_CHUNK, store.max_chunk().max(FIRST_CHUNK));
        store.reserve(cap);
        let chunk = Arc::new(Chunk::new(cap));
        lock(&lane.segments).push(Segment::Memory(Arc::clone(&chunk)));
        self.chunk = Some(chunk);
        self.len = 0;
        self.cap = cap;
    }

    /// Joins the session `generation`: a new lane, an empty stack.
    #[cold]
    #[inline(never)]
    fn attach(&mut self, generation: u32) -> bool {
        let Some((lane, store)) = session::register_lane(generation) else {
            return false;
        };
        self.generation = generation;
        self.lane = Some(lane);
        self.store = Some(store);
        self.chunk = None;
        self.len = 0;
        self.cap = 0;
        self.stack.clear();
        true
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Some(lane) = &self.lane {
            *lock(&lane.exit) = Some((ticks(), thread_cpu_ns().unwrap_or(-1)));
        }
    }
}

thread_local! {
    static RECORDER: RefCell<Recorder> = const { RefCell::new(Recorder::new()) };
}

/// Starts a call of region `region` of session `generation` on this thread.
/// Returns an inert guard if the thread cannot record (no such session, or
/// the recorder is busy because the allocator itself is being profiled).
#[inline]
pub(crate) fn enter(region: u32, generation: u32) -> Guard {
    let seq = RECORDER
        .try_with(|r| match r.try_borrow_mut() {
            Ok(mut r) => r.open(region, generation),
            Err(_) => 0,
        })
        .unwrap_or(0);
    Guard {
        seq,
        _not_send: PhantomData,
    }
}

/// The lane index of this thread in session `generation`, joining it if needed.
pub(crate) fn lane_index(generation: u32) -> Option<u32> {
    with_lane(generation, |lane| lane.index)
}

/// Keeps an async call that ended on this thread.
pub(crate) fn record_task(generation: u32, task: TaskRecord) {
    with_lane(generation, |lane| lock(&lane.tasks).push(task));
}

fn with_lane<R>(generation: u32, f: impl FnOnce(&Lane) -> R) -> Option<R> {
    RECORDER
        .try_with(|r| {
            let mut r = r.try_borrow_mut().ok()?;
            if r.generation != generation && !r.attach(generation) {
                return None;
            }
            r.lane.as_deref().map(f)
        })
        .ok()
        .flatten()
}

#[inline]
fn exit(seq: u64) {
    let end = ticks();
    let _ = RECORDER.try_with(|r| {
        if let Ok(mut r) = r.try_borrow_mut() {
            r.close(seq, end);
        }
    });
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
    ///
    /// ```
    /// use scope_profiler as sp;
    /// // Before setup, regions record nothing.
    /// assert!(!sp::region("early").enter().is_recording());
    /// ```
    pub fn is_recording(&self) -> bool {
        self.seq != 0
    }
}

impl Drop for Guard {
    #[inline(always)]
    fn drop(&mut self) {
        if self.seq != 0 {
            exit(self.seq);
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
