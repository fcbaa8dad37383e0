//! Reading a profile file in pieces: the index at once, the events in
//! bounded chunks.

use std::path::{Path, PathBuf};

use super::chunks::ChunkReader;
use super::h5::{Dataset, File, Group, Result};
use super::read::{
    RowDetails, check_len, check_schema, read_column, read_metadata, read_optional, read_or_fill,
    read_sized, read_strings, read_strings_or, read_tasks, read_threads,
};
use super::schema::{self, SummaryRecord};
use crate::error::Error;
use crate::histogram;
use crate::profile::{AggregateRow, CallPath, Events, MetaValue, RegionRow, TaskInfo, ThreadInfo};

/// A run of consecutive events of one row, starts decoded to absolute ns.
///
/// ```no_run
/// let reader = scope_profiler::ProfileReader::open("profiling_data.h5")?;
/// for chunk in reader.chunks(1 << 20) {
///     let chunk = chunk?;
///     let region = reader.rows()[chunk.row].region_id;
///     println!("{} calls of region {region}", chunk.events.len());
/// }
/// # Ok::<(), scope_profiler::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct EventChunk {
    /// Index into [`ProfileReader::rows`].
    pub row: usize,
    /// Position of the first event in `/events`.
    pub offset: u64,
    /// The events; absent columns read as -1 (`task_ids` as `None`).
    pub events: Events,
}

/// An open profile file: the index (names, rows, threads, tasks, metadata)
/// read at once, the event columns read on demand in bounded chunks, so a
/// file of hundreds of millions of calls is walked in little memory.
///
/// Reads what [`read_profile`](crate::read_profile) reads (schema 2 and 3,
/// files of this crate and of the Python package with tags and
/// `event_metadata`) and also aggregate files, whose rows come in
/// [`ProfileReader::aggregates`] instead of [`ProfileReader::rows`].
///
/// ```
/// use scope_profiler::{self as sp, Options, ProfileReader};
/// # let dir = std::env::temp_dir().join(format!("sp-reader-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("reader.h5");
/// sp::setup(Options::new().file_path(&path).verbose(false))?;
/// for _ in 0..3 { sp::region("step").run(|| ()); }
/// sp::finalize()?;
/// let reader = ProfileReader::open(&path)?;
/// assert_eq!(reader.region_names(), ["step"]);
/// assert_eq!(reader.event_count(), 3);
/// let calls: usize = reader.chunks(2).map(|c| c.map(|c| c.events.len())).sum::<Result<_, _>>()?;
/// assert_eq!(calls, 3);
/// # Ok::<(), sp::Error>(())
/// ```
pub struct ProfileReader {
    path: PathBuf,
    columns: Columns,
    schema: i64,
    region_names: Vec<String>,
    rows: Vec<RegionRow>,
    has_summaries: bool,
    tags: Vec<String>,
    aggregates: Vec<AggregateRow>,
    metadata: Vec<(String, MetaValue)>,
    threads: Vec<ThreadInfo>,
    tasks: Vec<TaskInfo>,
    event_count: u64,
    call_paths: Option<Vec<CallPath>>,
    progress: Option<Box<dyn Fn(u64)>>,
}

impl std::fmt::Debug for ProfileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProfileReader")
            .field("path", &self.path)
            .field("schema", &self.schema)
            .field("regions", &self.region_names.len())
            .field("rows", &self.rows.len())
            .field("events", &self.event_count)
            .finish_non_exhaustive()
    }
}

/// The open event datasets.
struct Columns {
    /// `start_deltas` (schema 3) or `start_times` (schema 2).
    starts: Option<Column>,
    /// `durations`, or `end_times` for schema 2.
    durations: Option<Column>,
    /// True when `durations` holds end times.
    ends: bool,
    delta_encoded: bool,
    call_ids: Option<Column>,
    parent_ids: Option<Column>,
    thread_ids: Option<Column>,
    task_ids: Option<Column>,
}

/// An event dataset, and its chunk decoder when its chunks are decoded
/// here rather than by HDF5's filters.
struct Column {
    dataset: Dataset,
    chunks: Option<ChunkReader>,
}

impl Column {
    fn open(group: &Group, name: &str) -> Result<Column> {
        let dataset = group.dataset(name)?;
        let chunks = ChunkReader::new(&dataset)?;
        Ok(Column { dataset, chunks })
    }

    fn len(&self) -> Result<usize> {
        self.dataset.len()
    }

    /// Values `offset..offset + out.len()`.
    fn read_into(&self, offset: usize, out: &mut [i64]) -> Result<()> {
        if let Some(chunks) = &self.chunks {
            if chunks.read(&self.dataset, offset, out)? {
                return Ok(());
            }
        }
        self.dataset.read_into(offset, out)
    }
}

impl ProfileReader {
    /// Opens `path` and reads its index (not its events).
    ///
    /// # Errors
    ///
    /// [`Error::Hdf5`] naming `path` when it is not an HDF5 file, not a
    /// profile (no `scope_profiler_schema` 2 or 3), is missing a required
    /// dataset, or its index points outside the event columns.
    ///
    /// ```
    /// let err = scope_profiler::ProfileReader::open("/no/such/file.h5").unwrap_err();
    /// assert!(err.to_string().contains("/no/such/file.h5"));
    /// ```
    pub fn open(path: impl AsRef<Path>) -> std::result::Result<Self, Error> {
        let path = path.as_ref();
        open(path).map_err(|e| Error::hdf5(path, e))
    }

    /// The file's path.
    ///
    /// ```no_run
    /// let reader = scope_profiler::ProfileReader::open("a.h5")?;
    /// assert_eq!(reader.path(), std::path::Path::new("a.h5"));
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The `scope_profiler_schema` version, 2 or 3.
    ///
    /// ```no_run
    /// let reader = scope_profiler::ProfileReader::open("a.h5")?;
    /// assert!((2..=3).contains(&reader.schema()));
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn schema(&self) -> i64 {
        self.schema
    }

    /// `/region_table/names`.
    ///
    /// ```no_run
    /// let reader = scope_profiler::ProfileReader::open("a.h5")?;
    /// for name in reader.region_names() { println!("{name}"); }
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn region_names(&self) -> &[String] {
        &self.region_names
    }

    /// `/rank_region_index` rows of a columnar file (empty for an aggregate
    /// file). Their `stats` are zero unless [`Self::has_summaries`].
    ///
    /// ```no_run
    /// let reader = scope_profiler::ProfileReader::open("a.h5")?;
    /// let calls: u64 = reader.rows().iter().map(|r| r.event_count).sum();
    /// assert_eq!(calls, reader.event_count());
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn rows(&self) -> &[RegionRow] {
        &self.rows
    }

    /// Whether the rows' `stats` come from the file's `summary_statistics`.
    ///
    /// ```no_run
    /// let reader = scope_profiler::ProfileReader::open("a.h5")?;
    /// println!("{}", reader.has_summaries());
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn has_summaries(&self) -> bool {
        self.has_summaries
    }

    /// The `tags` of each row as stored: a JSON list of strings, `"[]"`
    /// when the file has none.
    ///
    /// ```no_run
    /// let reader = scope_profiler::ProfileReader::open("a.h5")?;
    /// assert_eq!(reader.row_tags().len(), reader.rows().len());
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn row_tags(&self) -> &[String] {
        &self.tags
    }

    /// The rows of an aggregate file; empty for a columnar one.
    ///
    /// ```no_run
    /// let reader = scope_profiler::ProfileReader::open("a.h5")?;
    /// assert!(reader.is_aggregate() == !reader.aggregates().is_empty() || reader.rows().is_empty());
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn aggregates(&self) -> &[AggregateRow] {
        &self.aggregates
    }

    /// True for an aggregate file (no per-call events).
    ///
    /// ```no_run
    /// let reader = scope_profiler::ProfileReader::open("a.h5")?;
    /// if reader.is_aggregate() { println!("totals only"); }
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn is_aggregate(&self) -> bool {
        !self.aggregates.is_empty()
    }

    /// `/metadata` attributes (integer and string ones).
    ///
    /// ```no_run
    /// let reader = scope_profiler::ProfileReader::open("a.h5")?;
    /// for (key, value) in reader.metadata() { println!("{key} = {value:?}"); }
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn metadata(&self) -> &[(String, MetaValue)] {
        &self.metadata
    }

    /// `/thread_table`; empty without it.
    ///
    /// ```no_run
    /// let reader = scope_profiler::ProfileReader::open("a.h5")?;
    /// for t in reader.threads() { println!("{} {}", t.index, t.name); }
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn threads(&self) -> &[ThreadInfo] {
        &self.threads
    }

    /// `/task_table`; empty without it.
    ///
    /// ```no_run
    /// let reader = scope_profiler::ProfileReader::open("a.h5")?;
    /// for t in reader.tasks() { println!("{} {}", t.index, t.name); }
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn tasks(&self) -> &[TaskInfo] {
        &self.tasks
    }

    /// The call paths of every lane that `finalize` stored beside the
    /// events (files of this crate since 0.1, with at most a few thousand
    /// paths); `None` for other files. A call tree built from them needs no
    /// pass over the events ([`export::call_tree`](crate::export::call_tree)
    /// uses them).
    ///
    /// ```no_run
    /// let reader = scope_profiler::ProfileReader::open("profiling_data.h5")?;
    /// if let Some(paths) = reader.call_paths() {
    ///     let calls: u64 = paths.iter().filter(|p| p.parent.is_none()).map(|p| p.num_calls).sum();
    ///     println!("{calls} calls at the lanes' roots");
    /// }
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn call_paths(&self) -> Option<&[CallPath]> {
        self.call_paths.as_deref()
    }

    /// Number of events (calls) in `/events`.
    ///
    /// ```no_run
    /// let reader = scope_profiler::ProfileReader::open("a.h5")?;
    /// println!("{} calls", reader.event_count());
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn event_count(&self) -> u64 {
        self.event_count
    }

    /// Whether the file has `call_ids` and `parent_ids` (schema 2 files do
    /// not: then the call tree follows from time containment).
    ///
    /// ```no_run
    /// let reader = scope_profiler::ProfileReader::open("a.h5")?;
    /// println!("{}", reader.has_parents());
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn has_parents(&self) -> bool {
        self.columns.call_ids.is_some() && self.columns.parent_ids.is_some()
    }

    /// Calls `progress` with the number of events read so far after each
    /// chunk that [`Self::chunks`] reads (for a progress bar).
    ///
    /// ```no_run
    /// let mut reader = scope_profiler::ProfileReader::open("a.h5")?;
    /// reader.set_progress(|n| eprintln!("{n} events read"));
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn set_progress(&mut self, progress: impl Fn(u64) + 'static) {
        self.progress = Some(Box::new(progress));
    }

    /// Every event, in file order (rows by ascending offset), in chunks of
    /// at most `max_len` events of one row each; starts decoded to absolute
    /// ns. Memory is bounded by one chunk.
    ///
    /// ```no_run
    /// let reader = scope_profiler::ProfileReader::open("a.h5")?;
    /// let mut total = 0i64;
    /// for chunk in reader.chunks(1 << 20) {
    ///     total += chunk?.events.durations.iter().sum::<i64>();
    /// }
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn chunks(&self, max_len: usize) -> EventChunks<'_> {
        let mut order: Vec<usize> = (0..self.rows.len()).collect();
        order.sort_by_key(|&i| self.rows[i].event_offset);
        EventChunks {
            reader: self,
            order,
            next_row: 0,
            within: 0,
            last_start: 0,
            max_len: max_len.max(1),
            read: 0,
        }
    }

    /// The events `offset..offset + len` of row `row` (positions within
    /// the row), starts decoded given the start of the event before them
    /// (`previous_start`, ignored at the row's first event).
    fn read_row_part(
        &self,
        row: usize,
        within: u64,
        len: usize,
        previous_start: i64,
    ) -> Result<Events> {
        let offset = (self.rows[row].event_offset + within) as usize;
        let c = &self.columns;
        let [
            mut start_ns,
            mut durations,
            call_ids,
            parent_ids,
            thread_ids,
            task_ids,
        ] = read_columns(
            [
                (c.starts.as_ref(), 0),
                (c.durations.as_ref(), 0),
                (c.call_ids.as_ref(), -1),
                (c.parent_ids.as_ref(), -1),
                (c.thread_ids.as_ref(), -1),
                (c.task_ids.as_ref(), -1),
            ],
            offset,
            len,
        )?;
        if c.ends {
            for (d, s) in durations.iter_mut().zip(&start_ns) {
                *d = d.wrapping_sub(*s);
            }
        }
        if c.delta_encoded {
            let mut previous = previous_start;
            for (j, s) in start_ns.iter_mut().enumerate() {
                if within > 0 || j > 0 {
                    *s = s.wrapping_add(previous);
                }
                previous = *s;
            }
        }
        Ok(Events {
            start_ns,
            durations,
            call_ids,
            parent_ids,
            thread_ids,
            task_ids: c.task_ids.is_some().then_some(task_ids),
        })
    }
}

/// Events from which the columns of a read are decoded on threads of their
/// own (when their chunks are decoded here).
const PARALLEL_FROM: usize = 1 << 14;

/// Values `offset..offset + len` of each column, or `len` copies of its
/// `missing` value; the columns decoded here go one per thread for reads
/// of [`PARALLEL_FROM`] events or more.
fn read_columns<const N: usize>(
    columns: [(Option<&Column>, i64); N],
    offset: usize,
    len: usize,
) -> Result<[Vec<i64>; N]> {
    let mut out: [Vec<i64>; N] = std::array::from_fn(|i| vec![columns[i].1; len]);
    let parallel = len >= PARALLEL_FROM
        && columns
            .iter()
            .filter(|(c, _)| c.is_some_and(|c| c.chunks.is_some()))
            .count()
            > 1;
    if !parallel {
        for ((column, _), values) in columns.iter().zip(&mut out) {
            if let Some(column) = column {
                column.read_into(offset, values)?;
            }
        }
        return Ok(out);
    }
    std::thread::scope(|scope| -> Result<()> {
        let handles: Vec<_> = columns
            .iter()
            .zip(&mut out)
            .filter_map(|((column, _), values)| {
                let column = (*column)?;
                Some(scope.spawn(move || column.read_into(offset, values)))
            })
            .collect();
        for handle in handles {
            handle
                .join()
                .unwrap_or_else(|_| Err("a column's reading thread panicked".to_string().into()))?;
        }
        Ok(())
    })?;
    Ok(out)
}

/// The iterator of [`ProfileReader::chunks`].
pub struct EventChunks<'r> {
    reader: &'r ProfileReader,
    order: Vec<usize>,
    next_row: usize,
    within: u64,
    last_start: i64,
    max_len: usize,
    read: u64,
}

impl std::fmt::Debug for EventChunks<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventChunks")
            .field("read", &self.read)
            .finish_non_exhaustive()
    }
}

impl Iterator for EventChunks<'_> {
    type Item = std::result::Result<EventChunk, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let &row = self.order.get(self.next_row)?;
            let count = self.reader.rows[row].event_count;
            if self.within >= count {
                self.next_row += 1;
                self.within = 0;
                continue;
            }
            let len = (count - self.within).min(self.max_len as u64) as usize;
            let within = self.within;
            let result = self
                .reader
                .read_row_part(row, within, len, self.last_start)
                .map_err(|e| Error::hdf5(&self.reader.path, e));
            let events = match result {
                Ok(events) => events,
                Err(e) => {
                    self.order.clear(); // no more chunks after an error
                    return Some(Err(e));
                }
            };
            self.last_start = events.start_ns.last().copied().unwrap_or(self.last_start);
            self.within += len as u64;
            self.read += len as u64;
            if let Some(progress) = &self.reader.progress {
                progress(self.read);
            }
            return Some(Ok(EventChunk {
                row,
                offset: self.reader.rows[row].event_offset + within,
                events,
            }));
        }
    }
}

/// Opens the file and reads everything but the events.
fn open(path: &Path) -> Result<ProfileReader> {
    let file = File::open(path)?;
    let root = file.root()?;
    check_schema(&root)?;
    let schema = root.attr(schema::SCHEMA_ATTR)?.read_i64()?;
    let aggregate_layout = match root.attr(schema::LAYOUT_ATTR) {
        Ok(attr) => attr
            .read_string()
            .map(|s| s == "aggregate")
            .unwrap_or(false),
        Err(_) => false,
    };
    let region_names = read_strings(&root.group(schema::REGION_TABLE)?, "names")?;
    let names_len = region_names.len();
    let events = root.group(schema::EVENTS)?;
    let index = root.group(schema::INDEX)?;
    let columns = open_columns(&events)?;
    let event_count = match &columns.starts {
        Some(c) => c.len()?,
        None => 0,
    };
    let mut reader = ProfileReader {
        path: path.to_path_buf(),
        columns,
        schema,
        region_names,
        rows: Vec::new(),
        has_summaries: false,
        tags: Vec::new(),
        aggregates: Vec::new(),
        metadata: read_metadata(&root)?,
        threads: read_threads(&root)?,
        tasks: read_tasks(&root)?,
        event_count: event_count as u64,
        call_paths: match root.contains(schema::CALL_PATHS)? {
            true => Some(read_call_paths(
                &root.group(schema::CALL_PATHS)?,
                names_len,
            )?),
            false => None,
        },
        progress: None,
    };
    if aggregate_layout || index.contains("aggregate_counts")? {
        reader.aggregates = read_aggregates(&index)?;
    } else {
        read_rows(&index, &mut reader)?;
    }
    let names = reader.region_names.len();
    let bad_region = reader
        .rows
        .iter()
        .map(|r| r.region_id)
        .chain(reader.aggregates.iter().map(|r| r.region_id))
        .find(|&id| id as usize >= names);
    if let Some(id) = bad_region {
        return Err(format!("rank_region_index names region {id} of {names}").into());
    }
    Ok(reader)
}

/// The call paths `finalize` stored (see [`CallPath`]), checked: every
/// parent before its path, regions among the `names` file regions, the
/// histograms within their columns.
fn read_call_paths(group: &Group, names: usize) -> Result<Vec<CallPath>> {
    let mut columns = Vec::with_capacity(schema::CALL_PATH_COLUMNS.len());
    for name in schema::CALL_PATH_COLUMNS {
        columns.push(group.dataset(name)?.read::<i64>()?);
    }
    let n = columns[0].len();
    let offsets = group.dataset("histogram_offsets")?.read::<i64>()?;
    let buckets = group.dataset("histogram_buckets")?.read::<i64>()?;
    let counts = group.dataset("histogram_counts")?.read::<i64>()?;
    let bad = |what: String| -> Result<Vec<CallPath>> {
        Err(format!("{}: {what}", schema::CALL_PATHS).into())
    };
    if columns.iter().any(|c| c.len() != n) || offsets.len() != n + 1 {
        return bad("columns of different lengths".into());
    }
    if buckets.len() != counts.len() || offsets.last().copied() != Some(buckets.len() as i64) {
        return bad("histograms do not fit their columns".into());
    }
    let mut paths = Vec::with_capacity(n);
    for i in 0..n {
        let v = |c: usize| columns[c][i];
        let parent = v(0);
        if parent >= i as i64 || parent < -1 {
            return bad(format!("path {i} has parent {parent}"));
        }
        if v(3) < 0 || v(3) as usize >= names {
            return bad(format!("path {i} names region {} of {names}", v(3)));
        }
        let (from, to) = (offsets[i], offsets[i + 1]);
        if from < 0 || from > to || to as usize > buckets.len() {
            return bad(format!("path {i}'s histogram at {from}..{to}"));
        }
        let mut histogram = Vec::with_capacity((to - from) as usize);
        for j in from as usize..to as usize {
            let (bucket, count) = (buckets[j], counts[j]);
            if !(0..histogram::BUCKETS as i64).contains(&bucket) || count < 0 {
                return bad(format!("path {i}'s histogram bucket {bucket}"));
            }
            histogram.push((bucket as u32, count as u64));
        }
        paths.push(CallPath {
            parent: (parent >= 0).then_some(parent as u32),
            thread_id: v(1),
            task_id: v(2),
            region_id: v(3) as u32,
            num_calls: v(4).max(0) as u64,
            total: v(5),
            exclusive: v(6),
            minimum: v(7),
            maximum: v(8),
            first_start: v(9),
            last_end: v(10),
            histogram,
        });
    }
    Ok(paths)
}

/// The event datasets, checked to have one length.
fn open_columns(group: &Group) -> Result<Columns> {
    let optional = |name: &str| -> Result<Option<Column>> {
        match group.contains(name)? {
            true => Column::open(group, name).map(Some),
            false => Ok(None),
        }
    };
    let (starts, durations, ends, delta_encoded) = if group.contains("start_deltas")? {
        (
            Some(Column::open(group, "start_deltas")?),
            Some(Column::open(group, "durations")?),
            false,
            true,
        )
    } else {
        (
            Some(Column::open(group, "start_times")?),
            Some(Column::open(group, "end_times")?),
            true,
            false,
        )
    };
    let columns = Columns {
        starts,
        durations,
        ends,
        delta_encoded,
        call_ids: optional("call_ids")?,
        parent_ids: optional("parent_ids")?,
        thread_ids: optional("thread_ids")?,
        task_ids: optional("task_ids")?,
    };
    let n = match &columns.starts {
        Some(d) => d.len()?,
        None => 0,
    };
    for (name, dataset) in [
        ("durations", &columns.durations),
        ("call_ids", &columns.call_ids),
        ("parent_ids", &columns.parent_ids),
        ("thread_ids", &columns.thread_ids),
        ("task_ids", &columns.task_ids),
    ] {
        if let Some(d) = dataset {
            check_len(&format!("events/{name}"), d.len()?, n)?;
        }
    }
    Ok(columns)
}

/// The rows of a columnar index, checked against the event count.
fn read_rows(group: &Group, reader: &mut ProfileReader) -> Result<()> {
    let region_ids: Vec<u32> = read_column(group, "region_ids")?;
    let n = region_ids.len();
    let ranks: Vec<u32> = read_sized(group, "ranks", n)?;
    let offsets: Vec<u64> = read_sized(group, "event_offsets", n)?;
    let counts: Vec<u64> = read_sized(group, "event_counts", n)?;
    let source_lines = read_or_fill(group, "source_lines", n, -1i64)?;
    let source_files = read_strings_or(group, "source_files", n, "")?;
    let details = RowDetails::read(group, n)?;
    let exclusive_totals = read_or_fill(group, "exclusive_totals", n, -1i64)?;
    let summaries = read_optional::<SummaryRecord>(group, "summary_statistics")?;
    if let Some(s) = &summaries {
        check_len("rank_region_index/summary_statistics", s.len(), n)?;
    }
    reader.has_summaries = summaries.is_some();
    let total = reader.event_count;
    for (i, source_file) in source_files.into_iter().enumerate() {
        let end = offsets[i].checked_add(counts[i]);
        if end.is_none_or(|end| end > total) {
            return Err(format!(
                "rank_region_index row {i} claims events {}..+{} of {total}",
                offsets[i], counts[i]
            )
            .into());
        }
        reader.rows.push(RegionRow {
            region_id: region_ids[i],
            rank: ranks[i],
            event_offset: offsets[i],
            event_count: counts[i],
            source_file,
            source_line: source_lines[i],
            exclusive_total: exclusive_totals[i],
            stats: summaries.as_ref().map(|s| s[i].into()).unwrap_or_default(),
            tags: details.tags(i)?,
            source_text: details.source_texts[i].clone(),
            event_metadata: details.event_metadata(i)?,
        });
    }
    reader.tags = details.tags;
    Ok(())
}

/// The rows of an aggregate index.
fn read_aggregates(group: &Group) -> Result<Vec<AggregateRow>> {
    let region_ids: Vec<u32> = read_column(group, "region_ids")?;
    let n = region_ids.len();
    let ranks: Vec<u32> = read_sized(group, "ranks", n)?;
    let calls: Vec<u64> = read_sized(group, "aggregate_counts", n)?;
    let totals: Vec<i64> = read_sized(group, "aggregate_totals", n)?;
    let exclusives = read_or_fill(group, "aggregate_exclusives", n, -1i64)?;
    let minimums = read_or_fill(group, "aggregate_minimums", n, -1i64)?;
    let maximums = read_or_fill(group, "aggregate_maximums", n, -1i64)?;
    Ok((0..n)
        .map(|i| AggregateRow {
            region_id: region_ids[i],
            rank: ranks[i],
            num_calls: calls[i],
            total: totals[i],
            exclusive: exclusives[i],
            minimum: minimums[i],
            maximum: maximums[i],
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Compression;
    use crate::profile::Profile;

    /// A profile of `n` events in one region, with values that use every
    /// byte of their 8.
    fn profile(n: usize) -> Profile {
        let mut p = Profile::default();
        p.region_names.push("r".into());
        p.rows.push(RegionRow {
            event_count: n as u64,
            ..RegionRow::default()
        });
        let mut start = 1_000i64;
        for i in 0..n as i64 {
            start += (i * 7_919) % 1_000 + 1;
            p.events.start_ns.push(start);
            p.events.durations.push((i * 104_729) % 5_000 + (i << 33));
            p.events.call_ids.push(i);
            p.events
                .parent_ids
                .push(if i % 3 == 0 { -1 } else { i - 1 });
            // Constant over the first chunks (filtered once, reused).
            p.events
                .thread_ids
                .push(if i < 140_000 { 3 } else { i % 5 - 2 });
        }
        p
    }

    #[test]
    fn constant_chunks_and_a_padded_last_chunk_come_back_exactly() {
        // Chunks of one repeated value are deflated once and their bytes
        // reused, also in another column; the last, partial chunk of a
        // column of 7s is padded with 0s, so it is not such a chunk.
        let dir = std::env::temp_dir().join(format!("sp-chunk-const-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.h5");
        let n = 2 * 65_536 + 100;
        let mut p = Profile::default();
        p.region_names.push("r".into());
        p.rows.push(RegionRow {
            event_count: n as u64,
            ..RegionRow::default()
        });
        p.events.start_ns = (0..n as i64).map(|i| 1_000 + 10 * i).collect();
        p.events.durations = vec![7; n];
        p.events.call_ids = (0..n as i64).collect();
        p.events.parent_ids = vec![7; n];
        p.events.thread_ids = vec![0; n];
        p.threads.push(crate::ThreadInfo::default());
        for compression in [Compression::Gzip(4), Compression::Auto] {
            crate::write_profile(&p, &path, compression).unwrap();
            let back = crate::read_profile(&path).unwrap();
            assert_eq!(back.events, p.events, "{compression:?}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn compressed_columns_decode_here_as_hdf5_decodes_them() {
        let dir = std::env::temp_dir().join(format!("sp-chunk-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.h5");
        let n = 200_003; // several chunks and a partial last one
        crate::write_profile(&profile(n), &path, Compression::Gzip(4)).unwrap();
        let reader = ProfileReader::open(&path).unwrap();
        let c = &reader.columns;
        let columns = [
            &c.starts,
            &c.durations,
            &c.call_ids,
            &c.parent_ids,
            &c.thread_ids,
        ];
        for column in columns {
            let column = column.as_ref().unwrap();
            assert!(column.chunks.is_some(), "the fast path is not taken");
            for (offset, len) in [(0, 10), (65_530, 20), (0, n), (n - 7, 7), (131_072, 65_536)] {
                let (mut ours, mut hdf5) = (vec![0i64; len], vec![0i64; len]);
                let decoded = column.chunks.as_ref().unwrap();
                assert!(decoded.read(&column.dataset, offset, &mut ours).unwrap());
                column.dataset.read_into(offset, &mut hdf5).unwrap();
                assert_eq!(ours, hdf5, "values {offset}..+{len}");
            }
        }
        // Through the public reader, in parallel and in small pieces.
        let whole: Vec<i64> = reader
            .chunks(n)
            .flat_map(|chunk| chunk.unwrap().events.durations)
            .collect();
        let pieces: Vec<i64> = reader
            .chunks(1_000)
            .flat_map(|chunk| chunk.unwrap().events.durations)
            .collect();
        assert_eq!(whole, profile(n).events.durations);
        assert_eq!(pieces, whole);
        let threads: Vec<i64> = reader
            .chunks(n)
            .flat_map(|chunk| chunk.unwrap().events.thread_ids)
            .collect();
        assert_eq!(threads, profile(n).events.thread_ids);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
