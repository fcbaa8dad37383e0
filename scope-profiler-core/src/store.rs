//! The recorded data of one session: the lanes of the threads that record,
//! and the bounds on the memory and the scratch disk their records take.
//!
//! Chunks are counted when they are allocated. Once the chunks in memory
//! reach half the session's memory limit, a background writer moves every
//! finished chunk (full, or left by an exited thread) to a scratch file and
//! puts a descriptor in its place in the lane, so a lane is always its
//! records in order, some on disk and some in memory. A recording thread
//! waits only while the writer is behind by the whole limit and can still
//! make room. Below half the limit, the writer keeps two full-size chunks
//! ready, their pages faulted in, for the threads whose chunks fill
//! (`prepare_chunks`). The scratch file is unlinked as soon as it is created: it
//! never outlives the process, whatever happens to it.
//!
//! Spilling stops for good when the scratch file cannot be written (a full
//! disk, a removed directory, a file size limit) or would pass the disk
//! limit. Nothing waits on it from then on: past the memory limit, calls are
//! kept in memory (the default after a write failure) or dropped and counted
//! per region with their total time (always past the disk limit, or by
//! [`OnSpillFailure::DropCalls`]). Either way a warning names the directory
//! and the reason once on stderr, and the results and the file say so.

use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::Duration;

use crate::clock::ticks;
use crate::counters::CounterSet;
use crate::lane::{CounterTable, KeyedEntry, Lane, Segment};
use crate::open::OpenStack;
use crate::options::OnSpillFailure;
use crate::platform::PerfGroup;
use crate::record::{Chunk, HUGE_PAGE, Record};
use crate::sampling::Sampling;
use crate::scratch;
use crate::spill::{self, Encoder};
use crate::sync::{fork_epoch, lock};

/// Bytes of one record in memory and in the scratch file.
const RECORD_BYTES: usize = std::mem::size_of::<Record>();

/// Full-size chunks the writer keeps ready while memory allows (see
/// `Store::prepare_chunks`): one for each of two threads that fill theirs
/// at about the same time.
const PREPARED: usize = 2;

#[derive(Default)]
struct Control {
    requested: bool,
    shutdown: bool,
    worker: Option<std::thread::JoinHandle<()>>,
}

struct ScratchFile {
    dir: PathBuf,
    file: Option<File>,
    len: u64,
}

/// Why spilling stopped.
#[derive(Clone, Debug)]
pub struct SpillStop {
    /// What happened, naming the scratch directory.
    pub message: String,
    /// The disk limit was reached (not an I/O error).
    pub disk_limit: bool,
}

/// The bounds a store keeps.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Bytes of records in memory.
    pub memory: usize,
    /// Bytes of records in the scratch file.
    pub disk: u64,
    /// What happens past the memory limit once spilling failed.
    pub on_failure: OnSpillFailure,
    /// Aggregation mode: threads keep per-region totals (`lane::AggTable`)
    /// instead of records; no chunk is ever handed out.
    pub aggregate: bool,
    /// What the session's threads count besides time (`None`: nothing).
    pub counters: Option<Arc<CounterSet>>,
    /// The rate at which recording threads are sampled (`None`: not).
    pub sample_hz: Option<u32>,
}

/// The lanes of a session and its memory bound.
pub struct Store {
    pub lanes: Mutex<Vec<Arc<Lane>>>,
    limits: Limits,
    /// Records per chunk at most, so that a chunk is a small part of the limit.
    max_chunk: usize,
    /// Bytes of the chunks alive in memory.
    in_memory: AtomicUsize,
    /// Spilled chunks kept for reuse (counted in `in_memory`, so within the
    /// memory limit): a long session stops making chunks once a limit's
    /// worth circulates (recording thread -> spill writer -> here).
    free: Mutex<Vec<Chunk>>,
    /// Chunks made (mapped or allocated) so far; recycled ones not counted.
    chunks_made: AtomicU64,
    /// Chunks the writer made ahead of need, their pages faulted in.
    chunks_prepared: AtomicU64,
    scratch: Mutex<ScratchFile>,
    /// Set once, when spilling stops for good.
    stopped: OnceLock<SpillStop>,
    /// Ticks of the first dropped call (0: none dropped).
    first_drop: AtomicU64,
    /// The session ended: no more chunks are handed out.
    closed: AtomicBool,
    /// The fork epoch the store was made in (see `sync::fork_epoch`).
    epoch: u32,
    /// Thread lanes and tasks numbered so far.
    threads: AtomicU32,
    tasks: AtomicU32,
    control: Mutex<Control>,
    wake_writer: Condvar,
    space_freed: Condvar,
    /// Metadata of calls known by region and start: the outcomes of
    /// instrumented futures, whose records move between recorders.
    pub keyed_metadata: Mutex<Vec<KeyedEntry>>,
    /// Every recording thread's counter totals (see `Limits::counters`),
    /// a thread's slot replaced when its table grows.
    pub counter_tables: Mutex<Vec<Arc<CounterTable>>>,
    /// Every recording thread's perf group, closed (its file descriptors)
    /// when the session ends, not when its thread next records or exits.
    pub perf_groups: Mutex<Vec<Arc<Mutex<Option<PerfGroup>>>>>,
    /// The threads whose perf group could not be opened, each with why
    /// (`thread NAME (tid N): ...`): their calls count no perf events.
    pub perf_failures: Mutex<Vec<String>>,
    /// The recording threads' sampling events and their samples, if the
    /// session samples (closed with the store).
    sampling: Option<Arc<Sampling>>,
    /// The stacks of the session's tasks (see `open`), for the live server:
    /// weak, so a task's stack goes when its recorder does.
    task_stacks: Mutex<TaskStacks>,
    /// Held by a live reader (`read_live`) and by `release`: no record is
    /// read after the store let go of it.
    reading: Mutex<()>,
    /// Shown each chunk the writer spills, before it is spilled (a live
    /// reader folds what it has not yet, while the records are in memory).
    watch: OnceLock<Arc<dyn SpillWatch>>,
}

/// The task stacks a store lists, and its length when it last let go of
/// the stacks of finished recorders.
#[derive(Default)]
struct TaskStacks {
    list: Vec<Weak<OpenStack>>,
    pruned_at: usize,
}

/// What the spill writer shows each chunk it is about to spill: a live
/// reader of the records (`live`), which folds the part it has not folded
/// yet while the records are still in memory and in the writer's cache.
/// Called on the writer's thread, which must not wait for anything there.
pub trait SpillWatch: Send + Sync {
    /// `records` of `lane`'s segment `index` are about to be spilled.
    fn spilling(&self, lane: &Arc<Lane>, index: usize, records: &[Record]);
}

impl Store {
    /// A store within `limits`, spilling into a scratch file in `dir`.
    pub fn new(limits: Limits, dir: PathBuf) -> Arc<Store> {
        let max_chunk = (limits.memory / 64 / RECORD_BYTES).clamp(1024, HUGE_PAGE / RECORD_BYTES);
        // Samples may take an eighth of the memory limit, besides it, and
        // an eighth of the disk limit, in a scratch file of their own.
        let sampling = limits.sample_hz.map(|hz| {
            Arc::new(Sampling::new(
                hz,
                limits.memory / 8,
                dir.clone(),
                limits.disk / 8,
            ))
        });
        Arc::new(Store {
            lanes: Mutex::new(Vec::new()),
            limits,
            max_chunk,
            in_memory: AtomicUsize::new(0),
            free: Mutex::new(Vec::new()),
            chunks_made: AtomicU64::new(0),
            chunks_prepared: AtomicU64::new(0),
            scratch: Mutex::new(ScratchFile {
                dir,
                file: None,
                len: 0,
            }),
            stopped: OnceLock::new(),
            first_drop: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            epoch: fork_epoch(),
            threads: AtomicU32::new(0),
            tasks: AtomicU32::new(0),
            control: Mutex::new(Control::default()),
            wake_writer: Condvar::new(),
            space_freed: Condvar::new(),
            keyed_metadata: Mutex::new(Vec::new()),
            counter_tables: Mutex::new(Vec::new()),
            perf_groups: Mutex::new(Vec::new()),
            perf_failures: Mutex::new(Vec::new()),
            sampling,
            task_stacks: Mutex::new(TaskStacks::default()),
            reading: Mutex::new(()),
            watch: OnceLock::new(),
        })
    }

    /// What the session counts besides time, if anything.
    pub fn counters(&self) -> Option<&Arc<CounterSet>> {
        self.limits.counters.as_ref()
    }

    /// The session's sampling, if it samples.
    pub fn sampling(&self) -> Option<&Arc<Sampling>> {
        self.sampling.as_ref()
    }

    /// Whether the session keeps per-region totals instead of records.
    pub fn aggregates(&self) -> bool {
        self.limits.aggregate
    }

    /// The next thread lane's index (dense, from 0).
    pub(crate) fn next_thread_index(&self) -> u32 {
        self.threads.fetch_add(1, Ordering::Relaxed)
    }

    /// Lists a task's stack (once: `registered`), for the live server.
    pub(crate) fn register_task_stack(&self, stack: &Arc<OpenStack>) {
        // A recorder kept for the next task is listed already (a task's
        // start tests `registered` inline before it calls this).
        if stack.registered.swap(true, Ordering::Relaxed) {
            return;
        }
        let mut stacks = lock(&self.task_stacks);
        // The stacks of finished recorders go before the list doubles.
        if stacks.list.len() >= stacks.pruned_at.max(64) * 2 {
            stacks.list.retain(|s| s.strong_count() > 0);
            stacks.pruned_at = stacks.list.len();
        }
        stacks.list.push(Arc::downgrade(stack));
    }

    /// The stacks of the session's task recorders alive now.
    pub(crate) fn task_stacks(&self) -> Vec<Arc<OpenStack>> {
        lock(&self.task_stacks)
            .list
            .iter()
            .filter_map(Weak::upgrade)
            .collect()
    }

    /// The next task's number (dense, from 0, in order of first polls).
    pub(crate) fn next_task_index(&self) -> u32 {
        self.tasks.fetch_add(1, Ordering::Relaxed)
    }

    /// A new tasks lane for the thread of lane `thread` (one long task's if
    /// `task` is given).
    pub(crate) fn register_tasks_lane(&self, thread: u32, task: Option<u32>) -> Arc<Lane> {
        let lane = Arc::new(Lane::for_tasks(thread, task));
        lock(&self.lanes).push(Arc::clone(&lane));
        lane
    }

    /// Places the finished lane `nested` in `host` after its records so
    /// far, `depth` calls deep (a [`Segment::Nested`]); from then on cuts
    /// read it there and not as a lane of its own. Under the lock of the
    /// lanes, as every cut of them is taken, so that no cut sees it twice
    /// or not at all.
    pub(crate) fn splice(&self, host: &Lane, nested: &Arc<Lane>, depth: u32) {
        let _lanes = lock(&self.lanes);
        lock(&host.segments).push(Segment::Nested {
            lane: Arc::clone(nested),
            depth,
        });
        nested.set_spliced();
    }

    /// Runs `f` on the lanes as they are now (a copy of the list), unless
    /// the session has ended (`None`); `release` waits for it. For a reader
    /// of records while the session runs (`live`): the lanes' own locks
    /// order each read with the recording threads.
    pub fn read_live<R>(&self, f: impl FnOnce(&[Arc<Lane>]) -> R) -> Option<R> {
        let _reading = lock(&self.reading);
        if self.closed.load(Ordering::Relaxed) {
            return None;
        }
        let lanes = lock(&self.lanes).clone();
        Some(f(&lanes))
    }

    /// Shows `watch` every chunk spilled from now on (the first watch set
    /// stays).
    pub fn watch_spills(&self, watch: Arc<dyn SpillWatch>) {
        let _ = self.watch.set(watch);
    }

    /// Whether a live reader watches the store (`watch_spills`): a waiting
    /// task then lends it the calls it finished (`OpenStack::lend`).
    pub(crate) fn watched(&self) -> bool {
        self.watch.get().is_some()
    }

    /// Records per chunk at most.
    pub fn max_chunk(&self) -> usize {
        self.max_chunk
    }

    /// Bytes written to the scratch file so far.
    pub fn spilled_bytes(&self) -> u64 {
        lock(&self.scratch).len
    }

    /// Chunks made so far (each a mapping of its own when it has pages of
    /// its own); a chunk taken back from the spill writer is not counted.
    pub fn chunks_made(&self) -> u64 {
        self.chunks_made.load(Ordering::Relaxed)
    }

    /// Why spilling stopped, if it did.
    pub fn spill_stop(&self) -> Option<&SpillStop> {
        self.stopped.get()
    }

    /// Ticks of the first call that was dropped, if any was.
    pub fn first_drop(&self) -> Option<u64> {
        match self.first_drop.load(Ordering::Relaxed) {
            0 => None,
            t => Some(t),
        }
    }

    /// Notes that a call was dropped (the first time only).
    pub(crate) fn note_drop(&self) {
        let _ = self.first_drop.compare_exchange(
            0,
            ticks().max(1),
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }

    /// Starts the background writer.
    pub fn start_writer(self: &Arc<Self>) {
        let mut control = lock(&self.control);
        if control.worker.is_some() {
            return;
        }
        control.shutdown = false;
        let store = Arc::clone(self);
        control.worker = std::thread::Builder::new()
            .name("scope-profiler-spill".into())
            .spawn(move || store.run_writer())
            .ok();
        if let Some(sampling) = &self.sampling {
            sampling.start();
        }
    }

    /// Stops the background writer and waits for it.
    fn stop_writer(&self) {
        let worker = {
            let mut control = lock(&self.control);
            control.shutdown = true;
            control.worker.take()
        };
        self.wake_writer.notify_all();
        self.space_freed.notify_all();
        if let Some(worker) = worker {
            let _ = worker.join();
        }
    }

    /// Ends the store with its session: stops the writer, closes the
    /// scratch file and lets go of every record, also those of lanes that
    /// idle threads still hold.
    pub fn release(&self) {
        // A live reader finishes first, and starts no more.
        let _reading = lock(&self.reading);
        self.closed.store(true, Ordering::Relaxed);
        self.stop_writer();
        lock(&self.scratch).file = None;
        let free = std::mem::take(&mut *lock(&self.free));
        let freed: usize = free.iter().map(|c| c.capacity() * RECORD_BYTES).sum();
        self.in_memory.fetch_sub(freed, Ordering::Relaxed);
        // The threads' perf groups are closed now: a thread idle after the
        // session holds no file descriptor of it.
        for group in std::mem::take(&mut *lock(&self.perf_groups)) {
            lock(&group).take();
        }
        if let Some(sampling) = &self.sampling {
            sampling.close();
        }
        let lanes = std::mem::take(&mut *lock(&self.lanes));
        // The chunks let go here (kept ones, prepared ones, the lanes')
        // become spares for the next session, within half the limit.
        crate::record::keeping_spares(self.limits.memory / 2, || {
            drop(free);
            for lane in lanes {
                lane.release();
            }
        });
    }

    /// A chunk of `records` records for a recording thread: one the writer
    /// recycled (its pages already faulted in) or a new one. Wakes the
    /// writer past half the memory limit, and waits while the chunks in
    /// memory exceed the limit and the writer can still free some. `None`
    /// when the call must be dropped: past the limit after spilling stopped
    /// (see the module doc), after the session ended, or in a `fork()`
    /// child, which has no writer.
    pub(crate) fn new_chunk(&self, records: usize) -> Option<Arc<Chunk>> {
        self.chunk(records, true)
    }

    /// A chunk for a task's first records (see `thread::start_task`),
    /// counted like any but never waited for: tasks start by the thousand,
    /// and their private chunks are not the writer's to spill. `None` when
    /// calls are being dropped.
    pub(crate) fn new_task_chunk(&self, records: usize) -> Option<Arc<Chunk>> {
        self.chunk(records, false)
    }

    /// A recycled chunk of `records` records or a new one, counted; waits
    /// for room (`reserve`) only if `wait`.
    fn chunk(&self, records: usize, wait: bool) -> Option<Arc<Chunk>> {
        if self.epoch != fork_epoch() || self.closed.load(Ordering::Relaxed) {
            return None;
        }
        // A kept chunk first: it is counted already, so it adds no memory
        // even when calls past the limit are being dropped.
        let recycled = self.take_free(records);
        if let Some(chunk) = recycled {
            // Still counted in `in_memory`. The writer spills the chunk this
            // one replaces, and so keeps the free list filled.
            self.wake_writer_for(records);
            return Some(Arc::new(chunk));
        }
        if self.dropping() {
            return None;
        }
        let bytes = records * RECORD_BYTES;
        if wait {
            if !self.reserve(bytes) {
                return None;
            }
            // The writer may have put one back while `reserve` waited.
            if let Some(chunk) = self.take_free(records) {
                self.in_memory.fetch_sub(bytes, Ordering::Relaxed);
                self.wake_writer_for(records);
                return Some(Arc::new(chunk));
            }
        } else {
            self.in_memory.fetch_add(bytes, Ordering::Relaxed);
        }
        self.chunks_made.fetch_add(1, Ordering::Relaxed);
        self.wake_writer_for(records);
        Some(Arc::new(Chunk::new(records)))
    }

    /// Wakes the writer, once a recording thread took a chunk of `records`
    /// records, if it has work: spilling, past half the limit (until
    /// spilling stops); below it, after a full-size chunk, preparing
    /// another (`prepare_chunks`) if one fits under half the limit.
    fn wake_writer_for(&self, records: usize) {
        let (in_memory, half) = (
            self.in_memory.load(Ordering::Relaxed),
            self.limits.memory / 2,
        );
        let spill = in_memory >= half && self.stopped.get().is_none();
        let prepare =
            records == self.max_chunk && in_memory + self.max_chunk * RECORD_BYTES <= half;
        if spill || prepare {
            lock(&self.control).requested = true;
            self.wake_writer.notify_one();
        }
    }

    /// Keeps [`PREPARED`] full-size chunks among the kept ones, their pages
    /// faulted in, while the chunks in memory stay within half the limit
    /// (past it the writer spills, and the chunks it frees are kept, their
    /// pages in memory). A thread whose chunk is full then takes one whose
    /// pages are there: the first touch of fresh pages (a huge page's 2 MiB
    /// zeroed by the kernel; on a VM, the host's fault) is done here, on the
    /// writer's thread, not in the middle of the recording thread's calls.
    fn prepare_chunks(&self) {
        let records = self.max_chunk;
        let bytes = records * RECORD_BYTES;
        loop {
            if self.closed.load(Ordering::Relaxed) || self.stopped.get().is_some() {
                return;
            }
            let kept = lock(&self.free)
                .iter()
                .filter(|c| c.capacity() == records)
                .count();
            if kept >= PREPARED {
                return;
            }
            // Counted first, so that the limit holds whatever the
            // recording threads count meanwhile.
            let now = self.in_memory.fetch_add(bytes, Ordering::Relaxed) + bytes;
            if now > self.limits.memory / 2 {
                self.in_memory.fetch_sub(bytes, Ordering::Relaxed);
                return;
            }
            let mut chunk = Chunk::new(records);
            chunk.prefault();
            self.chunks_made.fetch_add(1, Ordering::Relaxed);
            self.chunks_prepared.fetch_add(1, Ordering::Relaxed);
            lock(&self.free).push(chunk);
        }
    }

    /// Chunks the writer prepared so far (see `prepare_chunks`).
    pub fn chunks_prepared(&self) -> u64 {
        self.chunks_prepared.load(Ordering::Relaxed)
    }

    /// Whether a kept chunk of `bytes` bytes is there to take: kept chunks
    /// count against the limit, so one waiting for room takes it instead.
    fn has_free(&self, bytes: usize) -> bool {
        lock(&self.free)
            .iter()
            .any(|c| c.capacity() * RECORD_BYTES == bytes)
    }

    /// A kept chunk of `records` records, if there is one.
    fn take_free(&self, records: usize) -> Option<Chunk> {
        let mut free = lock(&self.free);
        free.iter()
            .position(|c| c.capacity() == records)
            .map(|i| free.swap_remove(i))
    }

    /// Whether calls past the limit are being dropped now.
    fn dropping(&self) -> bool {
        self.stopped
            .get()
            .is_some_and(|s| s.disk_limit || self.limits.on_failure == OnSpillFailure::DropCalls)
            && self.in_memory.load(Ordering::Relaxed) >= self.limits.memory
    }

    /// Counts `bytes` of a new chunk against the limit; `false` (nothing
    /// counted) if the chunk must not be made.
    fn reserve(&self, bytes: usize) -> bool {
        let limit = self.limits.memory;
        let mut now = self.in_memory.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if now < limit / 2 {
            return true;
        }
        if now > limit {
            // Kept chunks of other sizes give way to the new one before
            // anyone waits.
            let freed: usize = {
                let mut free = lock(&self.free);
                let before = free.len();
                let mut freed = 0;
                free.retain(|c| {
                    let other = c.capacity() * RECORD_BYTES != bytes;
                    freed += if other {
                        c.capacity() * RECORD_BYTES
                    } else {
                        0
                    };
                    !other
                });
                debug_assert!(free.len() <= before);
                freed
            };
            now = self.in_memory.fetch_sub(freed, Ordering::Relaxed) - freed;
            if now < limit / 2 {
                return true;
            }
        }
        if self.stopped.get().is_none() {
            let mut control = lock(&self.control);
            control.requested = true;
            self.wake_writer.notify_one();
            while self.in_memory.load(Ordering::Relaxed) > limit
                && control.worker.is_some()
                && !control.shutdown
                && self.stopped.get().is_none()
                && !self.has_free(bytes)
            {
                // Asked again each time: a chunk may have become spillable
                // after the writer last looked (it then sleeps until asked).
                control.requested = true;
                self.wake_writer.notify_one();
                let (c, timeout) = self
                    .space_freed
                    .wait_timeout(control, Duration::from_millis(50))
                    .unwrap_or_else(|e| e.into_inner());
                control = c;
                if timeout.timed_out() && !self.has_spillable() {
                    break; // only current chunks are left: nothing to wait for
                }
            }
        }
        if self.dropping() {
            self.in_memory.fetch_sub(bytes, Ordering::Relaxed);
            return false;
        }
        true
    }

    fn run_writer(&self) {
        let mut encoder = Encoder::default();
        loop {
            {
                let mut control = lock(&self.control);
                while !control.requested && !control.shutdown {
                    control = self
                        .wake_writer
                        .wait(control)
                        .unwrap_or_else(|e| e.into_inner());
                }
                if control.shutdown {
                    return;
                }
                control.requested = false;
            }
            while self.in_memory.load(Ordering::Relaxed) >= self.limits.memory / 2 {
                match self.spill_finished_chunks(&mut encoder) {
                    Ok(0) => break,
                    Ok(_) => self.space_freed.notify_all(),
                    Err(stop) => {
                        self.stop_spilling(stop);
                        self.space_freed.notify_all();
                        return;
                    }
                }
            }
            self.prepare_chunks();
            self.space_freed.notify_all();
        }
    }

    /// Stops spilling for good and says so once on stderr.
    fn stop_spilling(&self, stop: SpillStop) {
        let then = if stop.disk_limit || self.limits.on_failure == OnSpillFailure::DropCalls {
            "calls past the memory limit are dropped and counted per region"
        } else {
            "recording goes on in memory past the memory limit"
        };
        eprintln!("scope-profiler: warning: {}; {then}", stop.message);
        let _ = self.stopped.set(stop);
    }

    fn has_spillable(&self) -> bool {
        lock(&self.lanes)
            .iter()
            .any(|lane| !spillable(lane).is_empty())
    }

    /// Moves every finished chunk of every lane to the scratch file, each
    /// compressed into a block (`spill`) by `encoder`; returns the number of
    /// chunks moved. A failure leaves the chunks in memory.
    fn spill_finished_chunks(&self, encoder: &mut Encoder) -> Result<usize, SpillStop> {
        let lanes: Vec<Arc<Lane>> = lock(&self.lanes).clone();
        let mut moved = 0;
        for lane in lanes {
            for (index, chunk) in spillable(&lane) {
                let records = chunk.records();
                if let Some(watch) = self.watch.get() {
                    watch.spilling(&lane, index, records);
                }
                let block = encoder.encode(records);
                let offset = self.append(block)?;
                lane.mark_spilled(index, records, offset, block.len() as u32);
                self.recycle(chunk);
                moved += 1;
            }
        }
        Ok(moved)
    }

    /// Keeps a chunk whose records are no longer needed here (spilled, or
    /// copied elsewhere) for reuse if no one else holds it and the session
    /// goes on; otherwise frees it. Kept chunks stay counted against the
    /// memory limit, and `reserve` frees them before a chunk of another
    /// size would wait for room.
    pub(crate) fn recycle(&self, chunk: Arc<Chunk>) {
        let bytes = chunk.capacity() * RECORD_BYTES;
        if let Ok(mut chunk) = Arc::try_unwrap(chunk) {
            let mut free = lock(&self.free);
            let kept: usize = free.iter().map(|c| c.capacity() * RECORD_BYTES).sum();
            if kept + bytes <= self.limits.memory && !self.closed.load(Ordering::Relaxed) {
                chunk.clear();
                free.push(chunk);
                return;
            }
        }
        self.in_memory.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Appends a block to the scratch file (created on first use); returns
    /// its byte offset.
    fn append(&self, block: &[u8]) -> Result<u64, SpillStop> {
        let mut scratch = lock(&self.scratch);
        let bytes = block.len() as u64;
        let failed = |message: String, disk_limit| SpillStop {
            message,
            disk_limit,
        };
        if scratch.len + bytes > self.limits.disk {
            return Err(failed(
                format!(
                    "the disk limit for scratch data ({} bytes) in {} is reached",
                    self.limits.disk,
                    scratch.dir.display()
                ),
                true,
            ));
        }
        let io = |e: std::io::Error, dir: &PathBuf| {
            failed(
                format!("cannot spill recorded calls to {}: {e}", dir.display()),
                false,
            )
        };
        if scratch.file.is_none() {
            let file = scratch::create(&scratch.dir, "spill").map_err(|e| io(e, &scratch.dir))?;
            scratch.file = Some(file);
        }
        let offset = scratch.len;
        if let Some(file) = &scratch.file {
            scratch::write_at(file, block, offset).map_err(|e| io(e, &scratch.dir))?;
        }
        scratch.len += bytes;
        Ok(offset)
    }

    /// Reads the `len` records spilled in the block of `bytes` bytes at
    /// `offset` into `out` (replacing it); the block is read under the
    /// scratch file's lock and decoded outside it.
    ///
    /// # Errors
    /// An I/O error, or `InvalidData` naming the block and the scratch
    /// directory if the block was changed on disk.
    pub(crate) fn read_spilled(
        &self,
        (offset, len, bytes): (u64, usize, u32),
        buffers: &mut spill::Buffers,
        out: &mut Vec<Record>,
    ) -> std::io::Result<()> {
        let dir = {
            let scratch = lock(&self.scratch);
            let file = scratch
                .file
                .as_ref()
                .ok_or_else(|| std::io::Error::other("the scratch file is closed"))?;
            scratch::read_at(file, offset, bytes as usize, &mut buffers.block)?;
            scratch.dir.clone()
        };
        spill::decode(&buffers.block, len, &mut buffers.raw, out).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!(
                    "{e} (the block of {len} calls at byte {offset} of the scratch file in {})",
                    dir.display()
                ),
            )
        })
    }
}

/// The finished in-memory chunks of a lane: full ones, those a nested
/// lane follows (its host went on in a new chunk), or every non-empty one
/// if its thread has exited (its recorder no longer writes).
fn spillable(lane: &Lane) -> Vec<(usize, Arc<Chunk>)> {
    let exited = lock(&lane.exit).is_some();
    let segments = lock(&lane.segments);
    segments
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match s {
            Segment::Memory(c) => {
                let n = c.records().len();
                let sealed = matches!(segments.get(i + 1), Some(Segment::Nested { .. }));
                (n == c.capacity() || ((exited || sealed) && n > 0)).then(|| (i, Arc::clone(c)))
            }
            Segment::Spilled { .. } | Segment::Nested { .. } => None,
        })
        .collect()
}
