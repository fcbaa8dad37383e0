//! One schema-3 file from the ranks of an MPI session (feature `mpi`): the
//! layout at its final size ([`create_layout`]), then each rank's slices of
//! every column ([`RankWriter`]), as the Python package lays out its MPI
//! files (`h5writer.py` `write_parallel_payload` and `write_lane_tables`:
//! one `ranks` column in the index and in both lane tables).
//!
//! The same code serves both writers: `Direct` opens the file with the
//! serial driver, one rank after the other; `Parallel` creates it with the
//! MPI-IO driver on every rank at once (every creation is collective and
//! identical on all ranks; strings are fixed-length, as parallel HDF5
//! cannot write variable-length data; the event columns are written in
//! collective rounds).

// Without the `mpio` feature only `Direct` is built: the parallel writer's
// parts (fixed-length strings, rounds) are compiled but unused.
#![cfg_attr(not(feature = "mpio"), allow(dead_code))]

use std::path::{Path, PathBuf};

use super::h5::{Dataset, File, Group, H5Type, Layout, Result};
use super::schema::{self, SummaryRecord};
use super::write::{
    ROW_BATCH, Storage, chunk_len, create_event_column, write_metadata, write_root_attrs,
};
use crate::error::Error;
use crate::options::Compression;
use crate::profile::{SummaryStatistics, TaskInfo, ThreadInfo};
use crate::sink::{EventSink, EventSlice, IndexRow};
use crate::value::Value;

/// The event columns, in the file's order.
const EVENT_COLUMNS: [&str; 6] = [
    "start_deltas",
    "durations",
    "call_ids",
    "parent_ids",
    "thread_ids",
    "task_ids",
];

/// The index's string columns.
const INDEX_STRINGS: [&str; 4] = ["source_files", "source_texts", "tags", "event_metadata"];

/// Events per column and rank in one collective round of the parallel
/// writer (2 MiB of int64 a column).
pub const ROUND: usize = 1 << 18;

/// Byte widths of the string columns of a parallel file (fixed-length
/// strings), the maximum over every rank.
#[derive(Clone, Copy, Debug, Default)]
pub struct Widths {
    pub names: usize,
    /// `source_files`, `source_texts`, `tags`, `event_metadata`.
    pub index: [usize; 4],
    pub thread_name: usize,
    /// `kind`, `name`, `coro_name`.
    pub task: [usize; 3],
}

/// How the file's strings are stored.
#[derive(Clone, Copy, Debug)]
pub enum Strings {
    /// Variable-length (serial HDF5: `Direct`).
    Variable,
    /// Fixed-length of these widths (parallel HDF5).
    Fixed(Widths),
}

/// The whole file's shape: totals over every rank.
pub struct Layout3<'a> {
    /// Rank 0's run description (with the MPI entries).
    pub metadata: &'a [(String, Value)],
    pub events: usize,
    pub rows: usize,
    pub threads: usize,
    pub tasks: usize,
    /// Whether `task_ids` is written (some rank has tasks).
    pub with_task_ids: bool,
    pub compression: Compression,
    pub chunk_size: Option<usize>,
    pub strings: Strings,
    /// The region names, when known at creation (`Parallel`); else they
    /// are written at the end by [`write_names`].
    pub names: Option<usize>,
}

/// Creates every group and dataset of the file at its final size, writes
/// the root attributes and the metadata, no column.
pub(crate) fn create_layout(file: &File, layout: &Layout3<'_>) -> Result<()> {
    let root = file.root()?;
    write_root_attrs(&root)?;
    write_metadata(&root, layout.metadata)?;
    let strings = |group: &Group, name: &str, len: usize, width: usize| -> Result<()> {
        match layout.strings {
            Strings::Variable => group.create_strings(name, len).map(drop),
            #[cfg(feature = "mpio")]
            Strings::Fixed(_) => group.create_fixed_strings(name, len, width).map(drop),
            #[cfg(not(feature = "mpio"))]
            Strings::Fixed(_) => {
                let _ = width;
                Err("fixed-length strings need the `mpio` feature"
                    .to_owned()
                    .into())
            }
        }
    };
    let widths = match layout.strings {
        Strings::Fixed(w) => w,
        Strings::Variable => Widths::default(),
    };
    if let Some(names) = layout.names {
        let table = root.create_group(schema::REGION_TABLE, false)?;
        strings(&table, "names", names, widths.names)?;
    }
    let events = root.create_group(schema::EVENTS, false)?;
    let level = layout.compression.level_for(layout.events);
    let chunk = chunk_len(layout.events, layout.chunk_size);
    let storage = match (level, layout.chunk_size) {
        (Some(level), _) => Storage::Deflate { chunk, level },
        (None, Some(_)) => Storage::Chunked { chunk },
        (None, None) => Storage::Direct,
    };
    let columns = if layout.with_task_ids { 6 } else { 5 };
    for name in &EVENT_COLUMNS[..columns] {
        create_event_column(&events, name, layout.events, storage)?;
    }
    let index = root.create_group(schema::INDEX, false)?;
    let rows = layout.rows;
    index.create_dataset::<SummaryRecord>("summary_statistics", rows, Layout::Contiguous)?;
    index.create_dataset::<u32>("region_ids", rows, Layout::Contiguous)?;
    index.create_dataset::<u32>("ranks", rows, Layout::Contiguous)?;
    index.create_dataset::<u64>("event_offsets", rows, Layout::Contiguous)?;
    index.create_dataset::<u64>("event_counts", rows, Layout::Contiguous)?;
    index.create_dataset::<i64>("source_lines", rows, Layout::Contiguous)?;
    index.create_dataset::<i64>("exclusive_totals", rows, Layout::Contiguous)?;
    for (name, width) in INDEX_STRINGS.iter().zip(widths.index) {
        strings(&index, name, rows, width)?;
    }
    if layout.threads > 0 {
        let group = root.create_group(schema::THREAD_TABLE, false)?;
        let n = layout.threads;
        group.create_dataset::<u32>("ranks", n, Layout::Contiguous)?;
        for name in ["index", "ident", "native_id"] {
            group.create_dataset::<i64>(name, n, Layout::Contiguous)?;
        }
        group.create_dataset::<i8>("daemon", n, Layout::Contiguous)?;
        for name in ["start_ns", "end_ns", "cpu_ns"] {
            group.create_dataset::<i64>(name, n, Layout::Contiguous)?;
        }
        strings(&group, "name", n, widths.thread_name)?;
    }
    if layout.tasks > 0 {
        let group = root.create_group(schema::TASK_TABLE, false)?;
        let n = layout.tasks;
        group.create_dataset::<u32>("ranks", n, Layout::Contiguous)?;
        for name in [
            "index",
            "thread_index",
            "created_ns",
            "done_ns",
            "steps",
            "running_ns",
            "suspended_ns",
        ] {
            group.create_dataset::<i64>(name, n, Layout::Contiguous)?;
        }
        for (name, width) in ["kind", "name", "coro_name"].iter().zip(widths.task) {
            strings(&group, name, n, width)?;
        }
    }
    Ok(())
}

/// `/region_table/names` of a `Direct` file, known once every rank has
/// written (variable-length strings).
pub(crate) fn write_names(file: &File, names: &[String]) -> Result<()> {
    let table = file.root()?.create_group(schema::REGION_TABLE, false)?;
    table.write_strings("names", names.iter())
}

/// Where this rank's part of the file starts in each table.
#[derive(Clone, Copy, Debug, Default)]
pub struct Part {
    pub rank: u32,
    pub event_base: usize,
    pub row_base: usize,
    pub thread_base: usize,
    pub task_base: usize,
}

/// The parallel writer's event columns: staged, written in collective
/// rounds of [`ROUND`] events.
struct Rounds {
    staged: [Vec<i64>; 6],
    /// Rounds every rank makes (the most any rank needs).
    total: usize,
    done: usize,
    /// Events of this rank written so far.
    written: usize,
}

/// One rank's part of the file, written into the layout
/// [`create_layout`] made: events in order through [`EventSink`], then the
/// rows and the lane tables in [`RankWriter::finish`].
pub struct RankWriter {
    file: File,
    columns: Vec<Dataset>,
    index: Group,
    stats: Dataset,
    stats_buffer: Vec<SummaryRecord>,
    stats_written: usize,
    part: Part,
    strings: Strings,
    rounds: Option<Rounds>,
    target: PathBuf,
}

impl RankWriter {
    /// This rank's writer of `file` (errors name `target`); `rounds`: the
    /// number of collective rounds of a parallel file, `None` for a
    /// `Direct` one.
    fn new(
        file: File,
        part: Part,
        strings: Strings,
        rounds: Option<usize>,
        target: &Path,
    ) -> std::result::Result<RankWriter, Error> {
        let open = || -> Result<RankWriter> {
            let root = file.root()?;
            let events = root.group(schema::EVENTS)?;
            let mut columns = Vec::new();
            for name in EVENT_COLUMNS {
                if events.contains(name)? {
                    columns.push(events.dataset(name)?);
                }
            }
            let index = root.group(schema::INDEX)?;
            let stats = index.dataset("summary_statistics")?;
            drop((events, root));
            Ok(RankWriter {
                file,
                columns,
                index,
                stats,
                stats_buffer: Vec::new(),
                stats_written: 0,
                part,
                strings,
                rounds: rounds.map(|total| Rounds {
                    staged: Default::default(),
                    total,
                    done: 0,
                    written: 0,
                }),
                target: target.to_path_buf(),
            })
        };
        open().map_err(|e| Error::hdf5(target, e))
    }

    /// Writes the staged events in one collective round (every rank makes
    /// the same number of rounds).
    #[cfg(feature = "mpio")]
    fn round(&mut self) -> Result<()> {
        let Some(rounds) = &mut self.rounds else {
            return Ok(());
        };
        let first = self.part.event_base + rounds.written;
        let len = rounds.staged[0].len();
        for (dataset, staged) in self.columns.iter().zip(&mut rounds.staged) {
            dataset.write_collective(first, staged)?;
            staged.clear();
        }
        rounds.written += len;
        rounds.done += 1;
        Ok(())
    }

    #[cfg(not(feature = "mpio"))]
    fn round(&mut self) -> Result<()> {
        Err("collective writes need the `mpio` feature"
            .to_owned()
            .into())
    }

    /// Writes the rest of this rank's part: the last rounds of a parallel
    /// file, its `rows` index rows (`row(i)`, with their file's region id,
    /// rank and offset), and its thread and task rows; closes the file
    /// (collectively, for a parallel one).
    pub fn finish<'a>(
        mut self,
        rows: usize,
        row: &dyn Fn(usize) -> IndexRow<'a>,
        threads: &[ThreadInfo],
        tasks: &[TaskInfo],
    ) -> std::result::Result<(), Error> {
        let target = self.target.clone();
        let mut finish = || -> Result<()> {
            self.complete_rounds()?;
            self.flush_stats()?;
            if self.stats_written != rows {
                return Err(
                    format!("statistics of {} rows for {rows} rows", self.stats_written).into(),
                );
            }
            self.complete_rounds()?;
            self.write_rows(rows, row)?;
            // Every rank opens what every rank opens (a parallel file).
            let root = self.file.root()?;
            if root.contains(schema::THREAD_TABLE)? {
                self.write_threads(&root.group(schema::THREAD_TABLE)?, threads)?;
            }
            if root.contains(schema::TASK_TABLE)? {
                self.write_tasks(&root.group(schema::TASK_TABLE)?, tasks)?;
            }
            Ok(())
        };
        finish().map_err(|e| Error::hdf5(&target, e))?;
        self.close()
    }

    /// Closes the file, every handle of it first.
    fn close(self) -> std::result::Result<(), Error> {
        let RankWriter {
            file,
            columns,
            index,
            stats,
            target,
            ..
        } = self;
        drop((columns, index, stats));
        file.close().map_err(|e| Error::hdf5(&target, e))
    }

    /// The last rounds of a parallel file: the staged events, then empty
    /// rounds up to the number every rank makes.
    fn complete_rounds(&mut self) -> Result<()> {
        if self
            .rounds
            .as_ref()
            .is_some_and(|r| !r.staged[0].is_empty())
        {
            self.round()?;
        }
        while self.rounds.as_ref().is_some_and(|r| r.done < r.total) {
            self.round()?;
        }
        Ok(())
    }

    /// Gives up this rank's part after a failure, but takes part in what
    /// stays collective (the remaining rounds of a parallel file, the
    /// close).
    pub fn abandon(mut self) {
        if let Some(rounds) = &mut self.rounds {
            rounds.staged.iter_mut().for_each(Vec::clear);
        }
        // The error being reported matters more than these.
        let _ = self.complete_rounds();
        let _ = self.close();
    }

    fn flush_stats(&mut self) -> Result<()> {
        self.stats
            .write(self.part.row_base + self.stats_written, &self.stats_buffer)?;
        self.stats_written += self.stats_buffer.len();
        self.stats_buffer.clear();
        Ok(())
    }

    fn write_rows<'a>(&self, rows: usize, row: &dyn Fn(usize) -> IndexRow<'a>) -> Result<()> {
        let base = self.part.row_base;
        let g = &self.index;
        put(g, "region_ids", base, rows, &|i| row(i).region_id)?;
        put(g, "ranks", base, rows, &|i| row(i).rank)?;
        put(g, "event_offsets", base, rows, &|i| row(i).event_offset)?;
        put(g, "event_counts", base, rows, &|i| row(i).event_count)?;
        put(g, "source_lines", base, rows, &|i| row(i).source_line)?;
        put(g, "exclusive_totals", base, rows, &|i| row(i).exclusive)?;
        self.put_strings(g, "source_files", base, rows, &|i| {
            row(i).source_file.to_owned()
        })?;
        self.put_strings(g, "source_texts", base, rows, &|i| {
            row(i).source_text.to_owned()
        })?;
        self.put_strings(g, "tags", base, rows, &|i| row(i).tags.into_owned())?;
        self.put_strings(g, "event_metadata", base, rows, &|i| {
            row(i).event_metadata.into_owned()
        })
    }

    fn write_threads(&self, g: &Group, threads: &[ThreadInfo]) -> Result<()> {
        let (base, n, t) = (self.part.thread_base, threads.len(), threads);
        put(g, "ranks", base, n, &|_| self.part.rank)?;
        put(g, "index", base, n, &|i| t[i].index)?;
        put(g, "ident", base, n, &|i| t[i].ident)?;
        put(g, "native_id", base, n, &|i| t[i].native_id)?;
        put(g, "daemon", base, n, &|i| t[i].daemon)?;
        put(g, "start_ns", base, n, &|i| t[i].start_ns)?;
        put(g, "end_ns", base, n, &|i| t[i].end_ns)?;
        put(g, "cpu_ns", base, n, &|i| t[i].cpu_ns)?;
        self.put_strings(g, "name", base, n, &|i| t[i].name.clone())
    }

    fn write_tasks(&self, g: &Group, tasks: &[TaskInfo]) -> Result<()> {
        let (base, n, t) = (self.part.task_base, tasks.len(), tasks);
        put(g, "ranks", base, n, &|_| self.part.rank)?;
        put(g, "index", base, n, &|i| t[i].index)?;
        put(g, "thread_index", base, n, &|i| t[i].thread_index)?;
        put(g, "created_ns", base, n, &|i| t[i].created_ns)?;
        put(g, "done_ns", base, n, &|i| t[i].done_ns)?;
        put(g, "steps", base, n, &|i| t[i].steps)?;
        put(g, "running_ns", base, n, &|i| t[i].running_ns)?;
        put(g, "suspended_ns", base, n, &|i| t[i].suspended_ns)?;
        self.put_strings(g, "kind", base, n, &|i| t[i].kind.clone())?;
        self.put_strings(g, "name", base, n, &|i| t[i].name.clone())?;
        self.put_strings(g, "coro_name", base, n, &|i| t[i].coro_name.clone())
    }

    /// Writes `value(i)` for `i` in `0..n` as elements `base..` of the
    /// string dataset `name` of `group`, in batches.
    fn put_strings(
        &self,
        group: &Group,
        name: &str,
        base: usize,
        n: usize,
        value: &dyn Fn(usize) -> String,
    ) -> Result<()> {
        let dataset = group.dataset(name)?;
        let mut first = 0;
        while first < n {
            let end = (first + ROW_BATCH).min(n);
            let values = (first..end).map(value);
            match self.strings {
                Strings::Variable => {
                    dataset.write_strings_at(name, base + first, end - first, values)?
                }
                #[cfg(feature = "mpio")]
                Strings::Fixed(_) => {
                    let width = fixed_width(&dataset)?;
                    dataset.write_fixed_strings_at(base + first, width, values)?
                }
                #[cfg(not(feature = "mpio"))]
                Strings::Fixed(_) => {
                    return Err("fixed-length strings need the `mpio` feature"
                        .to_owned()
                        .into());
                }
            }
            first = end;
        }
        Ok(())
    }
}

/// The byte width of a fixed-length string dataset.
#[cfg(feature = "mpio")]
fn fixed_width(dataset: &Dataset) -> Result<usize> {
    dataset.string_width()
}

/// Writes `value(i)` for `i` in `0..n` as elements `base..` of the dataset
/// `name` of `group`, in batches.
fn put<T: H5Type>(
    group: &Group,
    name: &str,
    base: usize,
    n: usize,
    value: &dyn Fn(usize) -> T,
) -> Result<()> {
    let dataset = group.dataset(name)?;
    let mut values = Vec::with_capacity(n.min(ROW_BATCH));
    let mut first = 0;
    while first < n {
        let end = (first + ROW_BATCH).min(n);
        values.clear();
        values.extend((first..end).map(value));
        dataset.write(base + first, &values)?;
        first = end;
    }
    Ok(())
}

impl EventSink for RankWriter {
    fn events(&mut self, offset: usize, s: &EventSlice<'_>) -> std::result::Result<(), Error> {
        let parts = s.stored();
        let len = s.durations.len();
        // A rank without tasks in a file with a task_ids column: -1 each.
        let tasks: std::borrow::Cow<'_, [i64]> = match s.task_ids {
            Some(ids) => ids.into(),
            None if self.columns.len() > parts.len() => vec![-1; len].into(),
            None => (&[][..]).into(),
        };
        let columns = parts.into_iter().chain([&tasks[..]]);
        let target = self.target.clone();
        let ncol = self.columns.len();
        let write = || -> Result<()> {
            if self.rounds.is_none() {
                let first = self.part.event_base + offset;
                for (dataset, values) in self.columns.iter().zip(columns) {
                    dataset.write(first, values)?;
                }
                return Ok(());
            }
            // Staged in rounds of ROUND events.
            let mut at = 0;
            while at < len {
                let Some(rounds) = &mut self.rounds else {
                    break;
                };
                let room = ROUND - rounds.staged[0].len();
                let take = room.min(len - at);
                for (staged, values) in rounds
                    .staged
                    .iter_mut()
                    .zip(parts.into_iter().chain([&tasks[..]]).take(ncol))
                {
                    staged.extend_from_slice(&values[at..at + take]);
                }
                at += take;
                if rounds.staged[0].len() == ROUND {
                    self.round()?;
                }
            }
            Ok(())
        };
        write().map_err(|e| Error::hdf5(&target, e))
    }

    fn row_stats(&mut self, stats: &SummaryStatistics) -> std::result::Result<(), Error> {
        self.stats_buffer.push(SummaryRecord::from(stats));
        if self.stats_buffer.len() >= ROW_BATCH {
            self.flush_stats()
                .map_err(|e| Error::hdf5(&self.target, e))?;
        }
        Ok(())
    }
}

/// `Direct`: this rank's turn at the file at `temp` (published as
/// `target`): created with `create` by the first rank, opened by the
/// others. The events go to the writer ([`EventSink`]), then
/// [`RankWriter::finish`] writes the rows and closes the file for the next
/// rank.
pub fn open_direct(
    temp: &Path,
    target: &Path,
    create: Option<&Layout3<'_>>,
    part: Part,
) -> std::result::Result<RankWriter, Error> {
    let open = || -> Result<File> {
        match create {
            Some(layout) => {
                let file = File::create(temp)?;
                create_layout(&file, layout)?;
                Ok(file)
            }
            None => File::open_rw(temp),
        }
    };
    let file = open().map_err(|e| Error::hdf5(target, e))?;
    RankWriter::new(file, part, Strings::Variable, None, target)
}

/// `Direct`, the last step (rank 0): the region names every rank
/// registered, into the file at `temp`.
pub fn write_direct_names(
    temp: &Path,
    target: &Path,
    names: &[String],
) -> std::result::Result<(), Error> {
    let write = || -> Result<()> {
        let file = File::open_rw(temp)?;
        write_names(&file, names)?;
        file.close()
    };
    write().map_err(|e| Error::hdf5(target, e))
}

/// `Parallel`: every rank at once (collective) creates the file at `temp`
/// over `comm` with `layout`, and rank 0 writes the region `names`. The
/// events go to the writer in `rounds` collective rounds; then
/// [`RankWriter::finish`] (or, after a failure, [`RankWriter::abandon`],
/// which still takes part in every round) closes the file collectively.
#[cfg(feature = "mpio")]
pub fn open_parallel(
    temp: &Path,
    target: &Path,
    comm: &mpi::topology::SimpleCommunicator,
    layout: &Layout3<'_>,
    names: Option<&[String]>,
    part: Part,
    rounds: usize,
) -> std::result::Result<RankWriter, Error> {
    let open = || -> Result<File> {
        let file = File::create_mpio(temp, comm)?;
        create_layout(&file, layout)?;
        let table = file.root()?.group(schema::REGION_TABLE)?;
        let dataset = table.dataset("names")?;
        if let Some(names) = names {
            dataset.write_fixed_strings_at(0, dataset.string_width()?, names.iter())?;
        }
        drop((dataset, table));
        Ok(file)
    };
    let file = open().map_err(|e| Error::hdf5(target, e))?;
    RankWriter::new(file, part, layout.strings, Some(rounds), target)
}
