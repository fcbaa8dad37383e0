//! Where the backward walk puts each call: at its slot in the file.
//!
//! `DirectRuns` writes runs of consecutive slots straight into columns: those
//! of an uncompressed file, or [`scratch_columns`] that a sink then reads in
//! file order; [`InMemory`] keeps every placed call, when they fit the
//! budget.

use std::path::Path;

use crate::scratch;
use crate::sink::{
    CALL_IDS, ColumnStore, DURATIONS, FileColumns, PARENT_IDS, START_DELTAS, TASK_IDS, THREAD_IDS,
};

/// Bytes of a placed call in memory ([`InMemory`], [`SlotRun`]).
pub(crate) const PLACED_BYTES: usize = std::mem::size_of::<PlacedCall>();
/// Bytes of a call in the columns it is emitted in.
pub const COLUMN_BYTES: usize = 6 * 8;

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
    /// One column of a run, as written.
    pub values: Vec<i64>,
}

/// One column's value of a placed call.
type Field = fn(&PlacedCall) -> i64;

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
        let fields: [(usize, Field); 6] = [
            (START_DELTAS, |p| p.start),
            (DURATIONS, |p| p.duration),
            (CALL_IDS, |p| p.call),
            (PARENT_IDS, |p| p.parent),
            (THREAD_IDS, |p| p.thread as i64),
            (TASK_IDS, |p| p.task as i64),
        ];
        let written = 5 + usize::from(self.with_tasks);
        for (column, field) in fields.into_iter().take(written) {
            self.values.clear();
            self.values.extend(run.calls.iter().map(field));
            self.columns.write(column, first, &self.values)?;
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

/// One call with its place in the file.
#[derive(Clone, Copy, Debug, Default)]
pub struct PlacedCall {
    pub slot: u64,
    pub start: i64,
    pub duration: i64,
    pub call: i64,
    pub parent: i64,
    pub thread: i32,
    pub task: i32,
    pub region: u32,
}

/// Every placed call, in memory: a session whose calls fit the budget.
#[derive(Default)]
pub struct InMemory {
    pub calls: Vec<PlacedCall>,
}

impl Placer for InMemory {
    fn put(&mut self, p: PlacedCall) -> std::io::Result<()> {
        self.calls.push(p);
        Ok(())
    }
}

/// Whether `total` events need more than `budget` bytes in memory (a
/// [`PlacedCall`] each, then its columns), and so go through
/// [`scratch_columns`] instead of [`InMemory`].
pub fn needs_scratch(total: usize, budget: usize) -> bool {
    total > (budget / (PLACED_BYTES + COLUMN_BYTES)).max(4096)
}

/// `columns` columns of `total` events in an unlinked scratch file in
/// `dir`, back to back, for the backward walk to write into
/// (`DirectRuns`) and the sink to read in file order.
pub fn scratch_columns(dir: &Path, total: usize, columns: usize) -> std::io::Result<FileColumns> {
    let file = scratch::create(dir, "place")?;
    let offsets = (0..columns).map(|c| (c * total * 8) as u64).collect();
    Ok(FileColumns::new(file, offsets, dir.to_path_buf()))
}
