//! The placed calls to a sink in file order ([`Plan::emit`]) or into an
//! uncompressed file's columns ([`Plan::write_direct`]), each row's start
//! deltas and statistics made on the way.

#![forbid(unsafe_code)]

use super::Plan;
use super::columns::Columns;
use super::rows::RowStats;
use crate::calltree::CallTree;
use crate::error::Error;
use crate::placement::{DirectRuns, InMemory, PLACED_BYTES, PackedReader, PackedRuns, SlotRun};
use crate::sink::{ColumnStore, DURATIONS, EventSink, START_DELTAS};

impl Plan {
    /// Hands every event to `sink` in file order (through scratch columns
    /// past the budget, else from memory); the rows' statistics go to the
    /// sink as each row is completed; returns the summary tree.
    pub fn emit(&mut self, sink: &mut dyn EventSink) -> Result<CallTree, Error> {
        if self.emits_through_scratch() {
            let dir = self.budget.dir.clone();
            let err = |e| Error::io(&dir, e);
            let mut packed = PackedRuns::new(
                &dir,
                self.layout.regions.len(),
                self.run_len(),
                self.layout.with_task_ids,
            )
            .map_err(err)?;
            let summary = self.place(&mut packed).map_err(err)?;
            let mut reader = packed.finish(self.layout.total).map_err(err)?;
            self.column_pass(Source::Packed(&mut reader), sink)
                .map_err(|e| e.or_io(|e| Error::io(&dir, e)))?;
            return Ok(summary);
        }
        let dir = self.budget.dir.clone();
        let mut placed = InMemory::default();
        placed.calls.reserve_exact(self.layout.total);
        let summary = self.place(&mut placed).map_err(|e| Error::io(dir, e))?;
        let mut cols = Columns::default();
        cols.reset(self.layout.total, self.layout.with_task_ids);
        for p in &placed.calls {
            cols.put(p.slot as usize, p);
        }
        drop(placed);
        let mut stats = RowStats::new(&self.layout, &self.walked.exclusive, self.budget.bytes);
        for slot in 0..self.layout.total {
            cols.start_deltas[slot] =
                stats.add(sink, slot as u64, cols.start_ns[slot], cols.durations[slot])?;
        }
        sink.events(0, &cols.slice(self.layout.with_task_ids))?;
        self.statistics = stats.finish(sink)?;
        Ok(summary)
    }

    /// Writes every event straight into the columns of an uncompressed file
    /// (no scratch round trip), then turns the starts into per-row deltas
    /// and computes the statistics (handed to `stats_sink` row by row) in
    /// one pass over the written columns.
    pub fn write_direct(
        &mut self,
        columns: &dyn ColumnStore,
        stats_sink: &mut dyn EventSink,
    ) -> Result<CallTree, Error> {
        let summary = self.place_into(columns)?;
        self.column_pass(Source::Columns(columns), stats_sink)
            .map_err(|e| e.or_io(|e| columns.error(e)))?;
        Ok(summary)
    }

    /// Calls buffered per region before a run of them is written (the
    /// buffers of every region with calls fill the budget).
    fn run_len(&self) -> usize {
        (self.budget.bytes / PLACED_BYTES / self.rows().max(1)).clamp(64, 8192)
    }

    /// The backward walk, writing every call into `columns` at its slot
    /// (starts absolute: [`Plan::column_pass`] makes them deltas).
    fn place_into(&mut self, columns: &dyn ColumnStore) -> Result<CallTree, Error> {
        let mut direct = DirectRuns {
            columns,
            runs: vec![SlotRun::default(); self.layout.regions.len()],
            run_len: self.run_len(),
            with_tasks: self.layout.with_task_ids,
            values: Vec::new(),
        };
        let summary = self.place(&mut direct).map_err(|e| columns.error(e))?;
        direct.flush_all().map_err(|e| columns.error(e))?;
        Ok(summary)
    }

    /// One pass over the placed calls in file order, a step of events at a
    /// time: each row's start deltas and statistics (to `sink`, row by row),
    /// then the deltas written back into the file's columns
    /// ([`Source::Columns`]) or every column handed to `sink`
    /// ([`Source::Packed`]).
    fn column_pass(
        &mut self,
        mut source: Source<'_>,
        sink: &mut dyn EventSink,
    ) -> Result<(), PassError> {
        // Bytes held per event of a step: the columns read, and the deltas.
        // Emitting, steps of 64k events (a compressed chunk of each
        // column), so that the sink's workers deflate one step's chunks
        // while this thread reads the next (with reused buffers no longer
        // zeroed, `compare finalize 10000000 auto` went from 0.60-0.62 s
        // with steps of 1M to 0.52-0.53 s).
        let (held, most) = match source {
            Source::Columns(_) => (3 * 8, 1 << 20),
            Source::Packed(_) => (7 * 8, 1 << 16),
        };
        let step = (self.budget.bytes / held).clamp(4096, most);
        let with_tasks = self.layout.with_task_ids;
        let mut stats = RowStats::new(&self.layout, &self.walked.exclusive, self.budget.bytes);
        let mut cols = Columns::default();
        let mut first = 0usize;
        while first < self.layout.total {
            let len = step.min(self.layout.total - first);
            match &mut source {
                Source::Columns(columns) => {
                    columns.read(START_DELTAS, first, len, &mut cols.start_ns)?;
                    columns.read(DURATIONS, first, len, &mut cols.durations)?;
                }
                Source::Packed(reader) => reader.fill(
                    len,
                    [
                        &mut cols.start_ns,
                        &mut cols.durations,
                        &mut cols.call_ids,
                        &mut cols.parent_ids,
                        &mut cols.thread_ids,
                        &mut cols.task_ids,
                    ],
                )?,
            }
            cols.start_deltas.resize(len, 0);
            for i in 0..len {
                cols.start_deltas[i] = stats.add(
                    sink,
                    (first + i) as u64,
                    cols.start_ns[i],
                    cols.durations[i],
                )?;
            }
            match source {
                Source::Columns(columns) => {
                    columns.write(START_DELTAS, first, &cols.start_deltas)?
                }
                Source::Packed(_) => sink.events(first, &cols.slice(with_tasks))?,
            }
            first += len;
        }
        self.statistics = stats.finish(sink)?;
        Ok(())
    }
}

/// Where [`Plan::column_pass`] reads the placed calls.
enum Source<'a> {
    /// The columns of an uncompressed file, starts absolute: the deltas
    /// are written back.
    Columns(&'a dyn ColumnStore),
    /// Packed runs in scratch: every column goes to the sink.
    Packed(&'a mut PackedReader),
}

/// A column pass's failure: the placed calls' I/O (the caller names the
/// file) or the sink's.
enum PassError {
    Io(std::io::Error),
    Sink(Error),
}

impl PassError {
    fn or_io(self, name: impl FnOnce(std::io::Error) -> Error) -> Error {
        match self {
            PassError::Io(e) => name(e),
            PassError::Sink(e) => e,
        }
    }
}

impl From<std::io::Error> for PassError {
    fn from(e: std::io::Error) -> PassError {
        PassError::Io(e)
    }
}

impl From<Error> for PassError {
    fn from(e: Error) -> PassError {
        PassError::Sink(e)
    }
}
