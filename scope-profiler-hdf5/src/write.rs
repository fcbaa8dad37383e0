//! The schema-3 layout, written column by column.
//!
//! Every column is one dataset created at its final size and written with a
//! single `H5Dwrite` from the profile's own buffer; only `start_deltas` needs
//! a new buffer (one pass over the starts). Names and dtypes follow
//! `scope_profiler/h5writer.py` of the Python package 0.7.5.

use std::path::{Path, PathBuf};

use super::chunks::ChunkWriter;
use super::h5::{Dataset, File, Group, H5Type, Layout, Result};
use super::schema::{self, SummaryRecord};
use crate::error::Error;
use crate::options::Compression;
use crate::profile::{
    AggregateRow, CallPath, Events, Profile, RegionCounters, RegionRow, SummaryStatistics,
    TaskInfo, ThreadInfo,
};
use crate::publish::publish_atomically;
use crate::sink::{EventSink, EventSlice, FileColumns, IndexRow};
use crate::value::Value;

/// Writes `profile` to `path` in the schema-3 layout, atomically: the file
/// is built beside `path` and renamed over it only when complete.
///
/// With `compression.level_for(events)` = `Some(level)` the event columns
/// are chunked (up to 65536 elements a chunk) with shuffle + deflate(level);
/// otherwise, and for every other dataset (and empty event columns),
/// storage is contiguous and unfiltered.
///
/// HDF5 strings end at NUL, so a NUL inside a string (a region name, say)
/// is stored as U+2400 (␀) and a literal ␀ as ␀␀ (with an invisible U+2060
/// after the ␀ of a NUL followed by NUL, ␀ or U+2060): the Python tools show
/// "a␀b" for "a\0b", and [`read_profile`](crate::read_profile) gives every
/// string back exactly.
///
/// The profile is checked first (event columns of one length, rows inside
/// the columns and not overlapping, region ids inside the name table): a
/// profile the Python reader would reject is an [`Error::Hdf5`] naming
/// `path`, and nothing is written.
///
/// ```
/// use scope_profiler::{self as sp, Compression, Options};
/// let dir = std::env::temp_dir().join(format!("sp-doc-wp-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// sp::setup(Options::new().in_memory().verbose(false))?;
/// sp::region("a").run(|| ());
/// let profile = sp::finalize()?.into_profile().unwrap();
/// let path = dir.join("copy.h5");
/// sp::write_profile(&profile, &path, Compression::None)?;
/// assert_eq!(sp::read_profile(&path)?, profile);
/// # Ok::<(), sp::Error>(())
/// ```
pub fn write_profile(
    profile: &Profile,
    path: impl AsRef<Path>,
    compression: Compression,
) -> std::result::Result<(), Error> {
    let path = path.as_ref();
    check_profile(profile).map_err(|e| Error::hdf5(path, format!("invalid profile: {e}")))?;
    let header = Header {
        metadata: &profile.metadata,
        names: profile.region_names.len(),
        region_name: &|i| &profile.region_names[i],
        threads: &profile.threads,
        tasks: &profile.tasks,
        events: profile.events.len(),
        rows: profile.rows.len(),
        with_task_ids: profile.events.task_ids.is_some(),
    };
    let events = &profile.events;
    let start_deltas = encode_start_deltas(&events.start_ns, &profile.rows);
    let slice = EventSlice {
        start_ns: &events.start_ns,
        start_deltas: &start_deltas,
        durations: &events.durations,
        call_ids: &events.call_ids,
        parent_ids: &events.parent_ids,
        thread_ids: &events.thread_ids,
        task_ids: events.task_ids.as_deref(),
    };
    publish_atomically(path, |temp| {
        let mut sink = FileSink::create(temp, path, &header, compression, None)?;
        sink.events(0, &slice)?;
        for row in &profile.rows {
            sink.row_stats(&row.stats)?;
        }
        sink.counters(&profile.counters)?;
        sink.finish(profile.rows.len(), &|i| IndexRow::of(&profile.rows[i]))
    })
}

/// The event columns but `task_ids`, in the file's order.
const EVENT_COLUMNS: [&str; 5] = [
    "start_deltas",
    "durations",
    "call_ids",
    "parent_ids",
    "thread_ids",
];

/// Everything of a profile but its events and rows: what is known before
/// the events are assembled.
pub struct Header<'a> {
    pub metadata: &'a [(String, Value)],
    /// Number of region names, and name `i` for each.
    pub names: usize,
    pub region_name: &'a dyn Fn(usize) -> &'a str,
    pub threads: &'a [ThreadInfo],
    pub tasks: &'a [TaskInfo],
    /// Number of events.
    pub events: usize,
    /// Number of index rows.
    pub rows: usize,
    /// Whether the `task_ids` column is written.
    pub with_task_ids: bool,
}

/// A schema-3 file being written: the header is in, the event columns are
/// created at their final size and filled slice by slice, in order; the
/// rows come last, when their statistics are known.
pub struct FileSink {
    file: File,
    /// `start_deltas`, `durations`, `call_ids`, `parent_ids`, `thread_ids`.
    columns: [Dataset; 5],
    task_ids: Option<Dataset>,
    /// For compressed columns: the chunks, filtered on every core.
    chunks: Option<ChunkWriter>,
    /// Whether the event columns are contiguous and allocated at creation
    /// ([`Storage::Direct`]), so that [`FileSink::direct`] may find them.
    preallocated: bool,
    /// `/rank_region_index`, and its `summary_statistics`, filled as rows
    /// are completed, through a buffer of `ROW_BATCH` rows.
    index: Group,
    stats: Dataset,
    stats_buffer: Vec<SummaryRecord>,
    stats_written: usize,
    /// The file being written (the temporary sibling of `target`).
    path: PathBuf,
    /// The path errors name: the target, not the temporary file.
    target: PathBuf,
}

impl FileSink {
    /// Creates the file at `path` (a temporary sibling of `target`) with
    /// everything but the events and the index; the event columns in
    /// chunks of at most `chunk_size` events if given (compressed or not).
    pub fn create(
        path: &Path,
        target: &Path,
        header: &Header<'_>,
        compression: Compression,
        chunk_size: Option<usize>,
    ) -> std::result::Result<FileSink, Error> {
        let level = compression.level_for(header.events);
        let chunk = chunk_len(header.events, chunk_size);
        let create = || -> Result<FileSink> {
            let file = File::create(path)?;
            let root = file.root()?;
            write_root_attrs(&root)?;
            write_metadata(&root, header.metadata)?;
            write_region_table(&root, header.names, header.region_name)?;
            if !header.threads.is_empty() {
                write_thread_table(&root, header.threads)?;
            }
            if !header.tasks.is_empty() {
                write_task_table(&root, header.tasks)?;
            }
            let group = root.create_group(schema::EVENTS, false)?;
            let storage = match (level, chunk_size) {
                (Some(level), _) => Storage::Deflate { chunk, level },
                (None, Some(_)) => Storage::Chunked { chunk },
                (None, None) => Storage::Direct,
            };
            let column = |name: &str| create_event_column(&group, name, header.events, storage);
            let columns = [
                column(EVENT_COLUMNS[0])?,
                column(EVENT_COLUMNS[1])?,
                column(EVENT_COLUMNS[2])?,
                column(EVENT_COLUMNS[3])?,
                column(EVENT_COLUMNS[4])?,
            ];
            let task_ids = match header.with_task_ids {
                true => Some(column("task_ids")?),
                false => None,
            };
            let index = root.create_group(schema::INDEX, false)?;
            let stats = index.create_dataset::<SummaryRecord>(
                "summary_statistics",
                header.rows,
                Layout::Contiguous,
            )?;
            let chunks = match level {
                Some(level) if header.events > 0 => Some(ChunkWriter::new(
                    columns.len() + usize::from(task_ids.is_some()),
                    header.events,
                    chunk,
                    level,
                )?),
                _ => None,
            };
            Ok(FileSink {
                file,
                columns,
                task_ids,
                chunks,
                preallocated: matches!(storage, Storage::Direct) && header.events > 0,
                index,
                stats,
                stats_buffer: Vec::new(),
                stats_written: 0,
                path: path.to_path_buf(),
                target: target.to_path_buf(),
            })
        };
        create().map_err(|e| Error::hdf5(target, e))
    }

    /// The event columns as byte ranges of the file, for writing them
    /// directly (bypassing HDF5, which never writes those ranges: the
    /// datasets are allocated at creation and never filled by the library):
    /// `None` unless they are stored contiguously (uncompressed) and
    /// allocated.
    ///
    /// The pure-Rust layer knows where a dataset lies only once the file's
    /// metadata is written: the file is closed and opened again to add the
    /// rest (the index, call paths, counters), and this sink's handles are
    /// taken again; the C layer asks `H5Dget_offset`.
    pub fn direct(&mut self) -> std::result::Result<Option<FileColumns>, Error> {
        if !self.preallocated {
            return Ok(None);
        }
        let mut offsets = Vec::new();
        let mut find = || -> Result<bool> {
            #[cfg(not(feature = "mpio"))]
            self.reopen()?;
            for dataset in self.columns.iter().chain(&self.task_ids) {
                match dataset.offset() {
                    Some(offset) => offsets.push(offset),
                    None => return Ok(false),
                }
            }
            Ok(true)
        };
        if !find().map_err(|e| Error::hdf5(&self.target, e))? {
            return Ok(None);
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.path)
            .map_err(|e| Error::io(&self.target, e))?;
        Ok(Some(FileColumns::new(file, offsets, self.target.clone())))
    }

    /// Closes and opens the file again ([`File::reopen`]), and takes this
    /// sink's handles again.
    #[cfg(not(feature = "mpio"))]
    fn reopen(&mut self) -> Result<()> {
        self.flush_stats_raw()?;
        self.file.reopen()?;
        let root = self.file.root()?;
        let events = root.group(schema::EVENTS)?;
        for (dataset, name) in self.columns.iter_mut().zip(EVENT_COLUMNS) {
            *dataset = events.dataset(name)?;
        }
        if let Some(dataset) = &mut self.task_ids {
            *dataset = events.dataset("task_ids")?;
        }
        self.index = root.group(schema::INDEX)?;
        self.stats = self.index.dataset("summary_statistics")?;
        Ok(())
    }

    /// Writes the rest of the index, `row(i)` for each of its `rows` rows
    /// (whose statistics it has all received), and closes the file.
    pub fn finish<'a>(
        mut self,
        rows: usize,
        row: &dyn Fn(usize) -> IndexRow<'a>,
    ) -> std::result::Result<(), Error> {
        self.flush_stats()?;
        if let Some(chunks) = &mut self.chunks {
            let datasets: Vec<&Dataset> = self.columns.iter().chain(&self.task_ids).collect();
            chunks
                .flush(&datasets)
                .and_then(|()| chunks.check_complete())
                .map_err(|e| Error::hdf5(&self.target, e))?;
        }
        let FileSink {
            file,
            columns,
            task_ids,
            index,
            stats,
            stats_written,
            target,
            ..
        } = self;
        drop((columns, task_ids, stats));
        let finish = || -> Result<()> {
            if stats_written != rows {
                return Err(format!("statistics of {stats_written} rows for {rows} rows").into());
            }
            write_index(&index, rows, row)?;
            drop(index);
            file.close()
        };
        finish().map_err(|e| Error::hdf5(&target, e))
    }

    /// Writes the call paths of every lane (see [`CallPath`]) into this
    /// crate's own group.
    pub fn call_paths(&mut self, paths: &[CallPath]) -> std::result::Result<(), Error> {
        let write = || -> Result<()> {
            let group = self.file.root()?.create_group(schema::CALL_PATHS, false)?;
            let column = |name: &str, values: &[i64]| -> Result<()> {
                group
                    .create_dataset::<i64>(name, values.len(), Layout::Contiguous)?
                    .write(0, values)
            };
            let fields: [fn(&CallPath) -> i64; 11] = [
                |p| p.parent.map_or(-1, i64::from),
                |p| p.thread_id,
                |p| p.task_id,
                |p| i64::from(p.region_id),
                |p| p.num_calls as i64,
                |p| p.total,
                |p| p.exclusive,
                |p| p.minimum,
                |p| p.maximum,
                |p| p.first_start,
                |p| p.last_end,
            ];
            let mut values = Vec::with_capacity(paths.len());
            for (name, field) in schema::CALL_PATH_COLUMNS.iter().zip(fields) {
                values.clear();
                values.extend(paths.iter().map(field));
                column(name, &values)?;
            }
            let mut offsets = vec![0i64];
            let (mut buckets, mut counts) = (Vec::new(), Vec::new());
            for p in paths {
                buckets.extend(p.histogram.iter().map(|&(b, _)| i64::from(b)));
                counts.extend(p.histogram.iter().map(|&(_, n)| n as i64));
                offsets.push(buckets.len() as i64);
            }
            column("histogram_offsets", &offsets)?;
            column("histogram_buckets", &buckets)?;
            column("histogram_counts", &counts)
        };
        write().map_err(|e| Error::hdf5(&self.target, e))
    }

    /// Writes each region's counters where the Python package writes perf
    /// events: `rank<N>/perf_events/<region>` (see `write_counters`).
    pub fn counters(&mut self, counters: &[RegionCounters]) -> std::result::Result<(), Error> {
        let write = || write_counters(&self.file.root()?, counters);
        write().map_err(|e| Error::hdf5(&self.target, e))
    }

    fn flush_stats(&mut self) -> std::result::Result<(), Error> {
        self.flush_stats_raw()
            .map_err(|e| Error::hdf5(&self.target, e))
    }

    /// The buffered statistics, written.
    fn flush_stats_raw(&mut self) -> Result<()> {
        self.stats.write(self.stats_written, &self.stats_buffer)?;
        self.stats_written += self.stats_buffer.len();
        self.stats_buffer.clear();
        Ok(())
    }
}

impl EventSink for FileSink {
    fn events(&mut self, offset: usize, s: &EventSlice<'_>) -> std::result::Result<(), Error> {
        let range = offset..offset + s.durations.len();
        if range.is_empty() {
            return Ok(());
        }
        let parts = s.stored();
        let mut write = || -> Result<()> {
            if let Some(chunks) = &mut self.chunks {
                let datasets: Vec<&Dataset> = self.columns.iter().chain(&self.task_ids).collect();
                let mut columns: Vec<(usize, &[i64])> = parts.into_iter().enumerate().collect();
                if let Some(values) = s.task_ids.filter(|_| self.task_ids.is_some()) {
                    columns.push((parts.len(), values));
                }
                return chunks.put(offset, &datasets, &columns);
            }
            for (dataset, values) in self.columns.iter().zip(parts) {
                dataset.write(offset, values)?;
            }
            if let (Some(dataset), Some(values)) = (&self.task_ids, s.task_ids) {
                dataset.write(offset, values)?;
            }
            Ok(())
        };
        write().map_err(|e| Error::hdf5(&self.target, e))
    }

    fn row_stats(&mut self, stats: &SummaryStatistics) -> std::result::Result<(), Error> {
        self.stats_buffer.push(SummaryRecord::from(stats));
        if self.stats_buffer.len() >= ROW_BATCH {
            self.flush_stats()?;
        }
        Ok(())
    }
}

/// Index rows made and written at a time.
pub(super) const ROW_BATCH: usize = 16 * 1024;

/// `scope_profiler_schema` = 3 and `storage_layout` = "columnar", both scalars.
pub(super) fn write_root_attrs(root: &Group) -> Result<()> {
    root.write_attr_i64(schema::SCHEMA_ATTR, schema::SCHEMA_VERSION)?;
    root.write_attr_str(schema::LAYOUT_ATTR, schema::COLUMNAR)
}

/// `/metadata`: one scalar attribute per entry (int64, uint64, float64 or
/// a UTF-8 string; a bool, null or JSON value as its JSON text). The group
/// tracks attribute creation order, so the reader gives the entries back
/// in this order.
pub(super) fn write_metadata(root: &Group, metadata: &[(String, Value)]) -> Result<()> {
    let group = root.create_group(schema::METADATA, true)?;
    for (key, value) in metadata {
        match value {
            Value::Int(v) => group.write_attr_i64(key, *v)?,
            Value::UInt(v) => group.write_attr_scalar(key, *v)?,
            Value::Float(v) => group.write_attr_scalar(key, *v)?,
            Value::Str(s) => group.write_attr_str(key, s)?,
            other => group.write_attr_str(key, &other.to_string())?,
        }
    }
    Ok(())
}

/// `/region_table/names`.
fn write_region_table<'a>(
    root: &Group,
    names: usize,
    name: &dyn Fn(usize) -> &'a str,
) -> Result<()> {
    let group = root.create_group(schema::REGION_TABLE, false)?;
    group.write_strings("names", (0..names).map(name))
}

/// `/rank_region_index`, one row per (rank, region), but the statistics
/// (written as rows are completed): `row(i)` for each of `rows` rows.
fn write_index<'a>(group: &Group, rows: usize, row: &dyn Fn(usize) -> IndexRow<'a>) -> Result<()> {
    write_rows(group, "region_ids", rows, row, |r| r.region_id)?;
    write_rows(group, "ranks", rows, row, |r| r.rank)?;
    write_rows(group, "event_offsets", rows, row, |r| r.event_offset)?;
    write_rows(group, "event_counts", rows, row, |r| r.event_count)?;
    write_rows(group, "source_lines", rows, row, |r| r.source_line)?;
    group.write_strings("source_files", (0..rows).map(|i| row(i).source_file))?;
    group.write_strings("source_texts", (0..rows).map(|i| row(i).source_text))?;
    group.write_strings("tags", (0..rows).map(|i| row(i).tags))?;
    group.write_strings("event_metadata", (0..rows).map(|i| row(i).event_metadata))?;
    write_rows(group, "exclusive_totals", rows, row, |r| r.exclusive)
}

/// A contiguous dataset of one field of each index row, written in batches.
fn write_rows<'a, T: H5Type>(
    group: &Group,
    name: &str,
    rows: usize,
    row: &dyn Fn(usize) -> IndexRow<'a>,
    field: impl Fn(&IndexRow<'a>) -> T,
) -> Result<()> {
    let dataset = group.create_dataset::<T>(name, rows, Layout::Contiguous)?;
    let mut values = Vec::with_capacity(rows.min(ROW_BATCH));
    let mut first = 0;
    while first < rows {
        let end = (first + ROW_BATCH).min(rows);
        values.clear();
        values.extend((first..end).map(|i| field(&row(i))));
        dataset.write(first, &values)?;
        first = end;
    }
    Ok(())
}

/// `/thread_table`, rank 0 for every thread (a serial run).
fn write_thread_table(root: &Group, threads: &[ThreadInfo]) -> Result<()> {
    let group = root.create_group(schema::THREAD_TABLE, false)?;
    write_small(&group, "ranks", threads, |_| 0u32)?;
    write_small(&group, "index", threads, |t| t.index)?;
    write_small(&group, "ident", threads, |t| t.ident)?;
    write_small(&group, "native_id", threads, |t| t.native_id)?;
    write_small(&group, "daemon", threads, |t| t.daemon)?;
    write_small(&group, "start_ns", threads, |t| t.start_ns)?;
    write_small(&group, "end_ns", threads, |t| t.end_ns)?;
    write_small(&group, "cpu_ns", threads, |t| t.cpu_ns)?;
    group.write_strings("name", threads.iter().map(|t| t.name.as_str()))
}

/// `/task_table`, rank 0 for every task.
fn write_task_table(root: &Group, tasks: &[TaskInfo]) -> Result<()> {
    let group = root.create_group(schema::TASK_TABLE, false)?;
    write_small(&group, "ranks", tasks, |_| 0u32)?;
    write_small(&group, "index", tasks, |t| t.index)?;
    write_small(&group, "thread_index", tasks, |t| t.thread_index)?;
    write_small(&group, "created_ns", tasks, |t| t.created_ns)?;
    write_small(&group, "done_ns", tasks, |t| t.done_ns)?;
    write_small(&group, "steps", tasks, |t| t.steps)?;
    write_small(&group, "running_ns", tasks, |t| t.running_ns)?;
    write_small(&group, "suspended_ns", tasks, |t| t.suspended_ns)?;
    group.write_strings("kind", tasks.iter().map(|t| t.kind.as_str()))?;
    group.write_strings("name", tasks.iter().map(|t| t.name.as_str()))?;
    group.write_strings("coro_name", tasks.iter().map(|t| t.coro_name.as_str()))
}

/// Schema-3 starts: within each row, the first value is the row's first
/// absolute start and every other one the gap to the previous start of the
/// same row (`np.diff(starts, prepend=0)` per row). Arithmetic wraps, as
/// numpy's does, so decoding with a wrapping cumulative sum is exact for any
/// input. Events outside every row (none in a checked profile) stay absolute.
pub(super) fn encode_start_deltas(starts: &[i64], rows: &[RegionRow]) -> Vec<i64> {
    let mut deltas = starts.to_vec();
    for row in rows {
        if let Some(run) = Some(row.events()).and_then(|range| deltas.get_mut(range)) {
            for i in (1..run.len()).rev() {
                run[i] = run[i].wrapping_sub(run[i - 1]);
            }
        }
    }
    deltas
}

/// Why `profile` cannot be written as a file the Python reader accepts.
fn check_profile(profile: &Profile) -> std::result::Result<(), String> {
    check_event_columns(&profile.events)?;
    check_rows(
        &profile.rows,
        profile.events.len(),
        profile.region_names.len(),
    )
}

/// Every event column has as many values as there are starts.
fn check_event_columns(events: &Events) -> std::result::Result<(), String> {
    let n = events.len();
    let columns = [
        ("durations", Some(events.durations.len())),
        ("call_ids", Some(events.call_ids.len())),
        ("parent_ids", Some(events.parent_ids.len())),
        ("thread_ids", Some(events.thread_ids.len())),
        ("task_ids", events.task_ids.as_ref().map(Vec::len)),
    ];
    for (name, len) in columns {
        if let Some(len) = len.filter(|&len| len != n) {
            return Err(format!("events.{name} has {len} values for {n} events"));
        }
    }
    Ok(())
}

/// Rows name known regions and cover disjoint slices of the event columns.
fn check_rows(
    rows: &[RegionRow],
    events: usize,
    regions: usize,
) -> std::result::Result<(), String> {
    let mut ranges = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        if row.region_id as usize >= regions {
            return Err(format!(
                "row {i} has region id {} of {regions} regions",
                row.region_id
            ));
        }
        match Some(row.events()).filter(|r| r.end <= events) {
            Some(range) => ranges.push((range, i)),
            None => {
                return Err(format!(
                    "row {i} claims events {}..+{} of {events}",
                    row.event_offset, row.event_count
                ));
            }
        }
    }
    ranges.sort_by_key(|(r, _)| (r.start, r.end));
    for pair in ranges.windows(2) {
        let ((a, i), (b, j)) = (&pair[0], &pair[1]);
        if b.start < a.end {
            return Err(format!(
                "rows {i} and {j} share events {}..{}",
                b.start, a.end
            ));
        }
    }
    Ok(())
}

/// How the event columns are stored.
#[derive(Clone, Copy)]
pub(super) enum Storage {
    /// Contiguous, written directly ([`FileSink::direct`]).
    Direct,
    /// Chunked, unfiltered (an explicit chunk size without compression).
    Chunked { chunk: usize },
    /// Chunked, shuffled and deflated at `level`.
    Deflate { chunk: usize, level: u8 },
}

/// An int64 event column of `len` values, to be filled later: chunked (and
/// filtered when compressed); or contiguous, allocated now and never filled
/// by the library, so that its bytes may be written directly
/// ([`FileSink::direct`]). Empty columns are contiguous and unallocated.
pub(super) fn create_event_column(
    group: &Group,
    name: &str,
    len: usize,
    storage: Storage,
) -> Result<Dataset> {
    let layout = match storage {
        _ if len == 0 => Layout::Contiguous,
        Storage::Deflate { chunk, level } => Layout::Deflate { chunk, level },
        Storage::Chunked { chunk } => Layout::Chunked { chunk },
        Storage::Direct => Layout::Preallocated,
    };
    group.create_dataset::<i64>(name, len, layout)
}

/// Chunk length of a chunked column of `len` values: `chunk_size` if given
/// (as the Python package: the Options check it at `setup`), else at most
/// [`schema::MAX_CHUNK`]; at most `len`, at least 1.
pub(super) fn chunk_len(len: usize, chunk_size: Option<usize>) -> usize {
    len.min(chunk_size.unwrap_or(schema::MAX_CHUNK)).max(1)
}

/// A contiguous dataset of one field of each item (index and lane tables).
fn write_small<S, T: H5Type>(
    group: &Group,
    name: &str,
    items: &[S],
    field: impl Fn(&S) -> T,
) -> Result<()> {
    // In batches: a field of a million rows never needs a copy of them all.
    const BATCH: usize = 16 * 1024;
    let dataset = group.create_dataset::<T>(name, items.len(), Layout::Contiguous)?;
    let mut values = Vec::with_capacity(items.len().min(BATCH));
    for (i, batch) in items.chunks(BATCH).enumerate() {
        values.clear();
        values.extend(batch.iter().map(&field));
        dataset.write(i * BATCH, &values)?;
    }
    Ok(())
}

/// The group name of a region in `perf_events`: its name, a `/` (which
/// HDF5 reads as a path) written as U+2215 DIVISION SLASH, and a NUL (which
/// ends an HDF5 name) stored as strings are (`crate::strings::encode`).
pub(super) fn counter_group_name(region: &str) -> String {
    crate::strings::encode(region).replace('/', "\u{2215}")
}

/// `rank<N>/perf_events/<region>` for each region's counters, as the
/// Python package writes perf events: attributes `calls` (int64) and
/// `event_names` (UTF-8 strings), dataset `values` (uint64, inclusive
/// totals); and ours, `own_values` (uint64, callees excluded), which the
/// Python reader ignores.
pub(super) fn write_counters(root: &Group, counters: &[RegionCounters]) -> Result<()> {
    let mut ranks: Vec<u32> = counters.iter().map(|c| c.rank).collect();
    ranks.sort_unstable();
    ranks.dedup();
    for rank in ranks {
        let name = format!("rank{rank}");
        let group = match root.contains(&name)? {
            true => root.group(&name)?,
            false => root.create_group(&name, false)?,
        };
        let perf = group.create_group(schema::PERF_EVENTS, false)?;
        for c in counters.iter().filter(|c| c.rank == rank) {
            let n = c.event_names.len();
            if c.inclusive.len() != n || c.exclusive.len() != n {
                return Err(format!(
                    "the counters of {:?} have {n} event names for {} inclusive and {} exclusive values",
                    c.name,
                    c.inclusive.len(),
                    c.exclusive.len()
                )
                .into());
            }
            let region = perf.create_group(&counter_group_name(&c.name), false)?;
            region.write_attr_i64("calls", i64::try_from(c.num_calls).unwrap_or(i64::MAX))?;
            let names: Vec<&str> = c.event_names.iter().map(String::as_str).collect();
            region.write_attr_strs("event_names", &names)?;
            for (dataset, values) in [("values", &c.inclusive), ("own_values", &c.exclusive)] {
                region
                    .create_dataset::<u64>(dataset, values.len(), Layout::Contiguous)?
                    .write(0, values)?;
            }
        }
    }
    Ok(())
}

/// Adds `counters` (every rank's, each with its `rank`) to the closed file
/// at `temp` (published as `target`): an MPI session's rank 0 does it once
/// every rank has written its part.
#[cfg(feature = "mpi")]
pub fn append_counters(
    temp: &Path,
    target: &Path,
    counters: &[RegionCounters],
) -> std::result::Result<(), Error> {
    if counters.is_empty() {
        return Ok(());
    }
    let write = || -> Result<()> {
        let file = File::open_rw(temp)?;
        write_counters(&file.root()?, counters)?;
        file.close()
    };
    write().map_err(|e| Error::hdf5(target, e))
}

/// Writes the aggregate layout of an aggregation-mode session at `temp`
/// (published as `target`): what the Python package writes for
/// `aggregation_mode`: the columnar layout's groups and columns, empty, and
/// per-(rank, region) `aggregate_*` columns.
pub fn write_aggregate(
    temp: &Path,
    target: &Path,
    metadata: &[(String, Value)],
    names: &[&str],
    rows: &[AggregateRow],
    counters: &[RegionCounters],
) -> std::result::Result<(), Error> {
    let write = || -> Result<()> {
        let file = File::create(temp)?;
        let root = file.root()?;
        root.write_attr_i64(schema::SCHEMA_ATTR, schema::SCHEMA_VERSION)?;
        root.write_attr_str(schema::LAYOUT_ATTR, schema::AGGREGATE)?;
        write_metadata(&root, metadata)?;
        write_region_table(&root, names.len(), &|i| names[i])?;
        let events = root.create_group(schema::EVENTS, false)?;
        for column in ["start_deltas", "durations"] {
            events.create_dataset::<i64>(column, 0, Layout::Contiguous)?;
        }
        let index = root.create_group(schema::INDEX, false)?;
        index.create_dataset::<SummaryRecord>("summary_statistics", 0, Layout::Contiguous)?;
        for column in ["event_counts", "event_offsets"] {
            index.create_dataset::<u64>(column, 0, Layout::Contiguous)?;
        }
        for column in ["exclusive_totals", "source_lines"] {
            index.create_dataset::<i64>(column, 0, Layout::Contiguous)?;
        }
        for column in ["source_files", "source_texts", "tags", "event_metadata"] {
            index.write_strings(column, std::iter::empty::<&str>())?;
        }
        write_small(&index, "region_ids", rows, |r| r.region_id)?;
        write_small(&index, "ranks", rows, |r| r.rank)?;
        write_small(&index, "aggregate_counts", rows, |r| r.num_calls)?;
        write_small(&index, "aggregate_totals", rows, |r| r.total)?;
        write_small(&index, "aggregate_minimums", rows, |r| r.minimum)?;
        write_small(&index, "aggregate_maximums", rows, |r| r.maximum)?;
        write_small(&index, "aggregate_exclusives", rows, |r| r.exclusive)?;
        write_counters(&root, counters)?;
        drop((events, index, root));
        file.close()
    };
    write().map_err(|e| Error::hdf5(target, e))
}
