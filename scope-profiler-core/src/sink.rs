//! Where assembled events go: slices of the `/events` columns, handed over
//! in order, and the statistics of each row as it is completed, to a file or
//! to memory.

use std::borrow::Cow;
use std::fs::File;
use std::path::PathBuf;

use crate::error::Error;
use crate::profile::{Events, RegionRow, SummaryStatistics};
use crate::{scratch, value};

/// One row of the index as the file stores it, but its statistics (which a
/// sink receives one row at a time, see [`EventSink::row_stats`]): made on
/// demand, so that a million rows are never all in memory at once.
#[derive(Clone, Debug)]
pub struct IndexRow<'a> {
    pub region_id: u32,
    pub rank: u32,
    pub event_offset: u64,
    pub event_count: u64,
    pub source_file: &'a str,
    pub source_line: i64,
    pub exclusive: i64,
    /// The tags as stored: a JSON list.
    pub tags: Cow<'a, str>,
    pub source_text: &'a str,
    /// Each call's metadata as stored: a JSON list of objects, `[]` when
    /// no call has any.
    pub event_metadata: Cow<'a, str>,
}

impl<'a> IndexRow<'a> {
    /// The row of a profile in memory.
    pub fn of(row: &'a RegionRow) -> IndexRow<'a> {
        IndexRow {
            region_id: row.region_id,
            rank: row.rank,
            event_offset: row.event_offset,
            event_count: row.event_count,
            source_file: &row.source_file,
            source_line: row.source_line,
            exclusive: row.exclusive,
            tags: Cow::Owned(tags_json(&row.tags)),
            source_text: &row.source_text,
            event_metadata: Cow::Owned(event_metadata_json(&row.event_metadata)),
        }
    }

    /// The row of a profile in memory, with its statistics.
    pub fn with_stats(self, stats: SummaryStatistics) -> RegionRow {
        RegionRow {
            region_id: self.region_id,
            rank: self.rank,
            event_offset: self.event_offset,
            event_count: self.event_count,
            source_file: self.source_file.to_owned(),
            source_line: self.source_line,
            exclusive: self.exclusive,
            stats,
            tags: value::parse_string_list(&self.tags).unwrap_or_default(),
            source_text: self.source_text.to_owned(),
            event_metadata: value::parse_event_metadata(&self.event_metadata).unwrap_or_default(),
        }
    }
}

/// Tags as the file stores them: a JSON list (`["io", "mylib"]`, as
/// Python's `json.dumps` writes it).
pub fn tags_json<S: AsRef<str>>(tags: &[S]) -> String {
    let mut out = String::from("[");
    for (i, tag) in tags.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        value::write_json_string(&mut out, tag.as_ref());
    }
    out.push(']');
    out
}

/// Per-call metadata as the file stores it: `[]` when no call has any,
/// else one object per call (`{}` for a call without).
pub fn event_metadata_json(calls: &[value::CallMetadata]) -> String {
    if calls.iter().all(|c| c.is_empty()) {
        return "[]".to_owned();
    }
    let mut out = String::from("[");
    for (i, call) in calls.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        value::write_json_object(&mut out, call);
    }
    out.push(']');
    out
}

/// Consecutive events `[offset, offset + len)` of every column.
pub struct EventSlice<'a> {
    /// Absolute starts, ns.
    pub start_ns: &'a [i64],
    /// Starts as stored in the file: per row, the first absolute, then gaps.
    pub start_deltas: &'a [i64],
    pub durations: &'a [i64],
    pub call_ids: &'a [i64],
    pub parent_ids: &'a [i64],
    pub thread_ids: &'a [i64],
    /// `None` when the session recorded no async call.
    pub task_ids: Option<&'a [i64]>,
}

impl<'a> EventSlice<'a> {
    /// The five event columns as the file stores them, in its order:
    /// `start_deltas`, `durations`, `call_ids`, `parent_ids`, `thread_ids`.
    pub fn stored(&self) -> [&'a [i64]; 5] {
        [
            self.start_deltas,
            self.durations,
            self.call_ids,
            self.parent_ids,
            self.thread_ids,
        ]
    }
}

/// Receives the events of a profile, slice after slice, in order, and the
/// statistics of its rows, row after row.
pub trait EventSink {
    /// Takes the events starting at `offset`; offsets come in increasing
    /// order and leave no gap.
    fn events(&mut self, offset: usize, slice: &EventSlice<'_>) -> Result<(), Error>;

    /// Takes the statistics of the next row (rows in index order, each
    /// once).
    fn row_stats(&mut self, stats: &SummaryStatistics) -> Result<(), Error>;
}

/// Event columns written and read back in place, at any position: the
/// datasets of an uncompressed file, whose calls the backward walk writes
/// where they belong (see `placement::DirectRuns`). Columns are numbered in the
/// file's order: `START_DELTAS`, `DURATIONS`, `CALL_IDS`,
/// `PARENT_IDS`, `THREAD_IDS`, `TASK_IDS`.
pub trait ColumnStore {
    /// Writes `values` into `column` from event `first` on.
    fn write(&self, column: usize, first: usize, values: &[i64]) -> std::io::Result<()>;
    /// Reads `len` values of `column` from event `first` on into `out`.
    fn read(
        &self,
        column: usize,
        first: usize,
        len: usize,
        out: &mut Vec<i64>,
    ) -> std::io::Result<()>;
    /// An I/O error of these columns as the crate's error, naming the file.
    fn error(&self, e: std::io::Error) -> Error;
}

/// A [`ColumnStore`] in a file: each column at its own byte offset, 8 bytes
/// an event, in native byte order: the event datasets of an uncompressed
/// file (`hdf5::FileSink::direct`).
pub struct FileColumns {
    file: File,
    /// Byte offset of each column.
    offsets: Vec<u64>,
    /// The path errors name.
    name: PathBuf,
}

impl FileColumns {
    pub fn new(file: File, offsets: Vec<u64>, name: PathBuf) -> FileColumns {
        FileColumns {
            file,
            offsets,
            name,
        }
    }

    fn at(&self, column: usize, first: usize) -> std::io::Result<u64> {
        match self.offsets.get(column) {
            Some(offset) => Ok(offset + first as u64 * 8),
            None => Err(std::io::Error::other(format!("no event column {column}"))),
        }
    }
}

impl ColumnStore for FileColumns {
    fn write(&self, column: usize, first: usize, values: &[i64]) -> std::io::Result<()> {
        scratch::write_at(&self.file, values, self.at(column, first)?)
    }

    fn read(
        &self,
        column: usize,
        first: usize,
        len: usize,
        out: &mut Vec<i64>,
    ) -> std::io::Result<()> {
        scratch::read_at(&self.file, self.at(column, first)?, len, out)
    }

    fn error(&self, e: std::io::Error) -> Error {
        Error::io(&self.name, e)
    }
}

/// Column numbers of a [`ColumnStore`].
pub(crate) const START_DELTAS: usize = 0;
pub(crate) const DURATIONS: usize = 1;
pub(crate) const CALL_IDS: usize = 2;
pub(crate) const PARENT_IDS: usize = 3;
pub(crate) const THREAD_IDS: usize = 4;
pub(crate) const TASK_IDS: usize = 5;

/// Collects the events and row statistics in memory (in-memory sessions).
pub struct MemorySink {
    pub events: Events,
    pub stats: Vec<SummaryStatistics>,
}

impl MemorySink {
    pub fn new(total: usize, with_tasks: bool) -> MemorySink {
        let column = || Vec::with_capacity(total);
        MemorySink {
            events: Events {
                start_ns: column(),
                durations: column(),
                call_ids: column(),
                parent_ids: column(),
                thread_ids: column(),
                task_ids: with_tasks.then(column),
            },
            stats: Vec::new(),
        }
    }
}

impl EventSink for MemorySink {
    fn events(&mut self, _offset: usize, s: &EventSlice<'_>) -> Result<(), Error> {
        let e = &mut self.events;
        e.start_ns.extend_from_slice(s.start_ns);
        e.durations.extend_from_slice(s.durations);
        e.call_ids.extend_from_slice(s.call_ids);
        e.parent_ids.extend_from_slice(s.parent_ids);
        e.thread_ids.extend_from_slice(s.thread_ids);
        if let (Some(all), Some(part)) = (&mut e.task_ids, s.task_ids) {
            all.extend_from_slice(part);
        }
        Ok(())
    }

    fn row_stats(&mut self, stats: &SummaryStatistics) -> Result<(), Error> {
        self.stats.push(*stats);
        Ok(())
    }
}
