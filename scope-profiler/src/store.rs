//! The recorded data of one session: the lanes of the threads that record,
//! and the bound on the memory their records take.
//!
//! Chunks are counted when they are allocated. Once the chunks in memory
//! reach half the session's memory limit, a background writer moves every
//! finished chunk (full, or left by an exited thread) to a scratch file and
//! puts a descriptor in its place in the lane, so a lane is always its
//! records in order, some on disk and some in memory. A recording thread
//! waits only when the writer is behind by the whole limit; nothing is ever
//! dropped. The scratch file is unlinked as soon as it is created: it never
//! outlives the process, whatever happens to it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::record::{Chunk, Record};
use crate::scratch;
use crate::thread::{Lane, lock};

/// Bytes of one record in memory and in the scratch file.
const RECORD_BYTES: usize = std::mem::size_of::<Record>();

/// Spilled chunks kept for reuse, at most: a few per recording thread.
const FREE_CHUNKS: usize = 8;

/// A run of a lane's records, in memory or in the scratch file.
#[derive(Clone)]
pub(crate) enum Segment {
    Memory(Arc<Chunk>),
    Spilled { offset: u64, len: usize },
}

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

/// The lanes of a session and its memory bound.
pub(crate) struct Store {
    pub lanes: Mutex<Vec<Arc<Lane>>>,
    limit: usize,
    /// Records per chunk at most, so that a chunk is a small part of the limit.
    max_chunk: usize,
    /// Bytes of the chunks alive in memory.
    in_memory: AtomicUsize,
    /// Spilled chunks kept for reuse (counted in `in_memory`).
    free: Mutex<Vec<Chunk>>,
    scratch: Mutex<ScratchFile>,
    control: Mutex<Control>,
    wake_writer: Condvar,
    space_freed: Condvar,
}

impl Store {
    /// A store bounded by `limit` bytes, spilling into a scratch file in `dir`.
    pub(crate) fn new(limit: usize, dir: PathBuf) -> Arc<Store> {
        let max_chunk = (limit / 64 / RECORD_BYTES).clamp(1024, 64 * 1024);
        Arc::new(Store {
            lanes: Mutex::new(Vec::new()),
            limit,
            max_chunk,
            in_memory: AtomicUsize::new(0),
            free: Mutex::new(Vec::new()),
            scratch: Mutex::new(ScratchFile {
                dir,
                file: None,
                len: 0,
            }),
            control: Mutex::new(Control::default()),
            wake_writer: Condvar::new(),
            space_freed: Condvar::new(),
        })
    }

    /// The scratch directory for output `path` (beside it), or the system's.
    pub(crate) fn scratch_dir(path: Option<&Path>) -> PathBuf {
        match path.and_then(Path::parent) {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            Some(_) => PathBuf::from("."),
            None => std::env::temp_dir(),
        }
    }

    /// Records per chunk at most.
    pub(crate) fn max_chunk(&self) -> usize {
        self.max_chunk
    }

    /// Starts the background writer (again, after a failed finalize).
    pub(crate) fn start_writer(self: &Arc<Self>) {
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
    }

    /// Stops the background writer and waits for it.
    pub(crate) fn stop_writer(&self) {
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

    /// A chunk of `records` records for a recording thread: one the writer
    /// recycled (its pages already faulted in) or a new one. Wakes the
    /// writer past half the limit and waits while the chunks in memory
    /// exceed the limit and the writer can still free some.
    pub(crate) fn new_chunk(&self, records: usize) -> Arc<Chunk> {
        let recycled = {
            let mut free = lock(&self.free);
            free.iter()
                .position(|c| c.capacity() == records)
                .map(|i| free.swap_remove(i))
        };
        if let Some(chunk) = recycled {
            return Arc::new(chunk); // still counted in `in_memory`
        }
        self.reserve(records);
        Arc::new(Chunk::new(records))
    }

    fn reserve(&self, records: usize) {
        let bytes = records * RECORD_BYTES;
        let now = self.in_memory.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if now < self.limit / 2 {
            return;
        }
        let mut control = lock(&self.control);
        control.requested = true;
        self.wake_writer.notify_one();
        while self.in_memory.load(Ordering::Relaxed) > self.limit
            && control.worker.is_some()
            && !control.shutdown
        {
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

    fn run_writer(&self) {
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
            while self.in_memory.load(Ordering::Relaxed) >= self.limit / 2 {
                match self.spill_finished_chunks() {
                    Ok(0) | Err(_) => break,
                    Ok(_) => self.space_freed.notify_all(),
                }
            }
            self.space_freed.notify_all();
        }
    }

    fn has_spillable(&self) -> bool {
        lock(&self.lanes)
            .iter()
            .any(|lane| !spillable(lane).is_empty())
    }

    /// Moves every finished chunk of every lane to the scratch file; returns
    /// the number of chunks moved. An I/O error leaves the chunks in memory.
    fn spill_finished_chunks(&self) -> std::io::Result<usize> {
        let lanes: Vec<Arc<Lane>> = lock(&self.lanes).clone();
        let mut moved = 0;
        for lane in lanes {
            for (index, chunk) in spillable(&lane) {
                let records = chunk.records();
                let offset = self.append(records)?;
                let len = records.len();
                {
                    let mut segments = lock(&lane.segments);
                    segments[index] = Segment::Spilled { offset, len };
                    let mut counts = lock(&lane.spilled_counts);
                    for r in records {
                        let region = r.region as usize;
                        if region >= counts.len() {
                            counts.resize(region + 1, 0);
                        }
                        counts[region] += 1;
                    }
                }
                self.recycle(chunk);
                moved += 1;
            }
        }
        Ok(moved)
    }

    /// Keeps a spilled chunk for reuse if no one else holds it and the free
    /// list has room; otherwise frees it.
    fn recycle(&self, chunk: Arc<Chunk>) {
        let bytes = chunk.capacity() * RECORD_BYTES;
        if let Ok(mut chunk) = Arc::try_unwrap(chunk) {
            let mut free = lock(&self.free);
            if free.len() < FREE_CHUNKS {
                chunk.clear();
                free.push(chunk);
                return;
            }
        }
        self.in_memory.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Appends records to the scratch file (created on first use); returns
    /// their byte offset.
    fn append(&self, records: &[Record]) -> std::io::Result<u64> {
        let mut scratch = lock(&self.scratch);
        if scratch.file.is_none() {
            scratch.file = Some(scratch::create(&scratch.dir, "spill")?);
        }
        let offset = scratch.len;
        if let Some(file) = &scratch.file {
            scratch::write_at(file, records, offset)?;
        }
        scratch.len += (records.len() * RECORD_BYTES) as u64;
        Ok(offset)
    }

    /// Reads `len` spilled records at `offset` into `out` (replacing it).
    pub(crate) fn read_spilled(
        &self,
        offset: u64,
        len: usize,
        out: &mut Vec<Record>,
    ) -> std::io::Result<()> {
        let scratch = lock(&self.scratch);
        let file = scratch
            .file
            .as_ref()
            .ok_or_else(|| std::io::Error::other("no scratch file"))?;
        scratch::read_at(file, offset, len, out)
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        lock(&self.control).shutdown = true;
        self.wake_writer.notify_all();
    }
}

/// The finished in-memory chunks of a lane: full ones, or every non-empty
/// one if its thread has exited (its recorder no longer writes).
fn spillable(lane: &Lane) -> Vec<(usize, Arc<Chunk>)> {
    let exited = lock(&lane.exit).is_some();
    lock(&lane.segments)
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match s {
            Segment::Memory(c) => {
                let n = c.records().len();
                (n == c.capacity() || (exited && n > 0)).then(|| (i, Arc::clone(c)))
            }
            Segment::Spilled { .. } => None,
        })
        .collect()
}
