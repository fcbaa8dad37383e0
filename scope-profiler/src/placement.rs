//! Where the backward walk puts each call: at its slot in the file.
//!
//! [`Buckets`] keeps placed calls by bucket of consecutive slots (in
//! memory, or in an unlinked scratch file past the budget) for a sink that
//! takes events in file order; [`DirectRuns`] writes runs of consecutive slots
//! straight into the columns of an uncompressed file.

use std::fs::File;
use std::path::Path;

use crate::scratch;
use crate::sink::{
    CALL_IDS, ColumnStore, DURATIONS, PARENT_IDS, START_DELTAS, TASK_IDS, THREAD_IDS,
};

/// Bytes of a placed call in a bucket, and of its columns when emitted.
pub(crate) const PLACED_BYTES: usize = std::mem::size_of::<PlacedCall>();
pub(crate) const COLUMN_BYTES: usize = 6 * 8;

/// Receives every call with its slot, in the order of the backward walk.
pub(crate) trait Placer {
    fn put(&mut self, p: PlacedCall) -> std::io::Result<()>;
}

/// Buffered runs of consecutive slots per region, written straight into
/// the file's columns.
pub(crate) struct DirectRuns<'a> {
    pub columns: &'a dyn ColumnStore,
    pub runs: Vec<SlotRun>,
    pub run_len: usize,
    pub with_tasks: bool,
}

/// Calls of one region for consecutive slots, in the order they came:
/// descending (the backward walk) or ascending (async calls).
#[derive(Clone, Default)]
pub(crate) struct SlotRun {
    calls: Vec<PlacedCall>,
}

impl DirectRuns<'_> {
    fn flush(&mut self, region: usize) -> std::io::Result<()> {
        let run = &mut self.runs[region];
        if run.calls.is_empty() {
            return Ok(());
        }
        if run.calls.len() > 1 && run.calls[0].slot > run.calls[1].slot {
            run.calls.reverse();
        }
        let first = run.calls[0].slot as usize;
        let column = |f: fn(&PlacedCall) -> i64| run.calls.iter().map(f).collect::<Vec<i64>>();
        let c = self.columns;
        c.write(START_DELTAS, first, &column(|p| p.start))?;
        c.write(DURATIONS, first, &column(|p| p.duration))?;
        c.write(CALL_IDS, first, &column(|p| p.call))?;
        c.write(PARENT_IDS, first, &column(|p| p.parent))?;
        c.write(THREAD_IDS, first, &column(|p| p.thread as i64))?;
        if self.with_tasks {
            c.write(TASK_IDS, first, &column(|p| p.task as i64))?;
        }
        run.calls.clear();
        Ok(())
    }

    pub(crate) fn flush_all(&mut self) -> std::io::Result<()> {
        (0..self.runs.len()).try_for_each(|r| self.flush(r))
    }
}

impl Placer for DirectRuns<'_> {
    fn put(&mut self, p: PlacedCall) -> std::io::Result<()> {
        let region = p.region as usize;
        let follows = |run: &SlotRun| match run.calls.as_slice() {
            [] => true,
            [only] => p.slot + 1 == only.slot || p.slot == only.slot + 1,
            [a, .., last] => {
                let down = a.slot > last.slot;
                if down {
                    p.slot + 1 == last.slot
                } else {
                    p.slot == last.slot + 1
                }
            }
        };
        if !follows(&self.runs[region]) || self.runs[region].calls.len() >= self.run_len {
            self.flush(region)?;
        }
        self.runs[region].calls.push(p);
        Ok(())
    }
}

impl Placer for Buckets {
    fn put(&mut self, p: PlacedCall) -> std::io::Result<()> {
        self.put_placed(p)
    }
}

/// One call with its place in the file.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub(crate) struct PlacedCall {
    pub slot: u64,
    pub start: i64,
    pub duration: i64,
    pub call: i64,
    pub parent: i64,
    pub thread: i32,
    pub task: i32,
    pub region: u32,
    pub _pad: u32,
}

const _: () = assert!(PLACED_BYTES == 56);

// SAFETY: `repr(C)`, integer fields only (one u64, four i64, two i32, two
// u32: 56 bytes, no padding, checked above).
unsafe impl scratch::Plain for PlacedCall {}

/// PlacedCall calls by bucket of consecutive slots: all in memory when they fit
/// the budget, else in an unlinked scratch file, one region per bucket,
/// written through a small buffer per bucket.
pub(crate) struct Buckets {
    pub total: usize,
    bucket_len: usize,
    memory: Vec<PlacedCall>,
    file: Option<File>,
    buffers: Vec<Vec<PlacedCall>>,
    written: Vec<usize>,
    buffer_len: usize,
}

impl Buckets {
    /// Events per bucket for `budget` bytes.
    fn bucket_len(budget: usize) -> usize {
        (budget / (PLACED_BYTES + COLUMN_BYTES)).max(4096)
    }

    /// Whether `total` events within `budget` bytes go through a scratch file.
    pub(crate) fn needs_scratch(total: usize, budget: usize) -> bool {
        total > Self::bucket_len(budget)
    }

    pub(crate) fn new(total: usize, budget: usize, dir: &Path) -> std::io::Result<Buckets> {
        let bucket_len = Self::bucket_len(budget);
        let mut p = Buckets {
            total,
            bucket_len,
            memory: Vec::new(),
            file: None,
            buffers: Vec::new(),
            written: Vec::new(),
            buffer_len: 0,
        };
        if !Self::needs_scratch(total, budget) {
            p.memory = Vec::with_capacity(total);
            return Ok(p);
        }
        p.file = Some(scratch::create(dir, "place")?);
        let buckets = p.buckets();
        p.buffer_len = (budget / 2 / buckets / PLACED_BYTES).clamp(64, 4096);
        p.buffers = vec![Vec::new(); buckets];
        p.written = vec![0; buckets];
        Ok(p)
    }

    pub(crate) fn buckets(&self) -> usize {
        self.total.div_ceil(self.bucket_len).max(1)
    }

    pub(crate) fn range(&self, bucket: usize) -> std::ops::Range<usize> {
        let start = bucket * self.bucket_len;
        start..(start + self.bucket_len).min(self.total)
    }

    fn put_placed(&mut self, p: PlacedCall) -> std::io::Result<()> {
        if self.file.is_none() {
            self.memory.push(p);
            return Ok(());
        }
        let bucket = p.slot as usize / self.bucket_len;
        self.buffers[bucket].push(p);
        if self.buffers[bucket].len() >= self.buffer_len {
            self.flush(bucket)?;
        }
        Ok(())
    }

    fn flush(&mut self, bucket: usize) -> std::io::Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let buffer = &mut self.buffers[bucket];
        let offset = (bucket * self.bucket_len + self.written[bucket]) * PLACED_BYTES;
        scratch::write_at(file, buffer, offset as u64)?;
        self.written[bucket] += buffer.len();
        buffer.clear();
        Ok(())
    }

    pub(crate) fn flush_all(&mut self) -> std::io::Result<()> {
        for bucket in 0..self.buffers.len() {
            self.flush(bucket)?;
        }
        self.buffers = Vec::new();
        Ok(())
    }

    /// The placed calls of `bucket`, in no particular order.
    pub(crate) fn read(&self, bucket: usize, out: &mut Vec<PlacedCall>) -> std::io::Result<()> {
        let Some(file) = &self.file else {
            out.clear();
            out.extend_from_slice(&self.memory);
            return Ok(());
        };
        let range = self.range(bucket);
        scratch::read_at(file, (range.start * PLACED_BYTES) as u64, range.len(), out)
    }
}
