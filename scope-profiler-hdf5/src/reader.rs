//! Reading an HDF5 profile file in pieces: the index at once, the events
//! in bounded chunks (through `scope_profiler_reader::ProfileReader`).

use std::path::Path;

use super::chunks::ChunkReader;
use super::h5::{Dataset, File, Group, Result};
use super::read::{
    check_len, check_schema, is_aggregate, read_column, read_index_rows, read_metadata,
    read_or_fill, read_sized, read_strings, read_tasks, read_threads,
};
use super::schema;
use crate::error::Error;
use crate::histogram;
use crate::profile::{AggregateRow, CallPath, Events, ReadIndex, RegionRow};

/// The open event datasets of a file.
pub struct Columns {
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
    /// The number of values, checked when opened.
    len: usize,
}

impl Column {
    /// Opens the column `name`, checked: 1-D integers, no more of them
    /// than the file can hold, in chunks of a bounded size.
    fn open(group: &Group, name: &str) -> Result<Column> {
        let dataset = group.dataset(name)?;
        let len = dataset
            .checked_len_of::<i64>()
            .map_err(|e| format!("events/{name}: {e}"))?;
        let chunks = ChunkReader::new(&dataset)?;
        Ok(Column {
            dataset,
            chunks,
            len,
        })
    }

    fn len(&self) -> Result<usize> {
        Ok(self.len)
    }

    /// Values `offset..offset + out.len()`.
    fn read_into(&self, offset: usize, out: &mut [i64]) -> Result<()> {
        if let Some(chunks) = &self.chunks
            && chunks.read(&self.dataset, offset, out)?
        {
            return Ok(());
        }
        self.dataset.read_into(offset, out)
    }
}

impl Columns {
    /// Whether the file has `call_ids` and `parent_ids`.
    pub fn has_parents(&self) -> bool {
        self.call_ids.is_some() && self.parent_ids.is_some()
    }

    /// The events `offset..offset + len` of row `row` (positions within
    /// the row), starts decoded given the start of the event before them
    /// (`previous_start`, ignored at the row's first event).
    /// `Self::read_row_part`, errors naming `path`.
    pub fn read_row(
        &self,
        path: &Path,
        row: &RegionRow,
        within: u64,
        len: usize,
        previous_start: i64,
    ) -> std::result::Result<Events, Error> {
        self.read_row_part(row, within, len, previous_start)
            .map_err(|e| Error::hdf5(path, e))
    }

    fn read_row_part(
        &self,
        row: &RegionRow,
        within: u64,
        len: usize,
        previous_start: i64,
    ) -> Result<Events> {
        let offset = (row.event_offset + within) as usize;
        let c = self;
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
        Ok({
            let mut made = Events::default();
            made.start_ns = start_ns;
            made.durations = durations;
            made.call_ids = call_ids;
            made.parent_ids = parent_ids;
            made.thread_ids = thread_ids;
            made.task_ids = c.task_ids.is_some().then_some(task_ids);
            made
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

/// Opens the file at `path` and reads everything but the events; errors
/// name `path`.
pub fn open(path: &Path) -> std::result::Result<(ReadIndex, Columns), Error> {
    open_index(path).map_err(|e| Error::hdf5(path, e))
}

/// [`open`], with the library's errors.
fn open_index(path: &Path) -> Result<(ReadIndex, Columns)> {
    let file = File::open(path)?;
    let root = file.root()?;
    check_schema(&root)?;
    let schema = root.attr(schema::SCHEMA_ATTR)?.read_i64()?;
    let aggregate_layout = is_aggregate(&root)?;
    let region_names = read_strings(
        &root.group(schema::REGION_TABLE)?,
        schema::REGION_TABLE,
        "names",
    )?;
    let names_len = region_names.len();
    let events = root.group(schema::EVENTS)?;
    let index = root.group(schema::INDEX)?;
    let columns = open_columns(&events)?;
    let event_count = match &columns.starts {
        Some(c) => c.len()?,
        None => 0,
    };
    let mut reader = ReadIndex {
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
        counters: super::read::read_counters(&root)?,
    };
    if aggregate_layout {
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
    Ok((reader, columns))
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
        paths.push({
            let mut made = CallPath::default();
            made.parent = (parent >= 0).then_some(parent as u32);
            made.thread_id = v(1);
            made.task_id = v(2);
            made.region_id = v(3) as u32;
            made.num_calls = v(4).max(0) as u64;
            made.total = v(5);
            made.exclusive = v(6);
            made.minimum = v(7);
            made.maximum = v(8);
            made.first_start = v(9);
            made.last_end = v(10);
            made.histogram = histogram;
            made
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
fn read_rows(group: &Group, reader: &mut ReadIndex) -> Result<()> {
    let index = read_index_rows(group, reader.event_count)?;
    reader.has_summaries = index.has_summaries;
    reader.rows = index.rows;
    reader.tags = index.tags;
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
        .map(|i| {
            let mut made = AggregateRow::default();
            made.region_id = region_ids[i];
            made.rank = ranks[i];
            made.num_calls = calls[i];
            made.total = totals[i];
            made.exclusive = exclusives[i];
            made.minimum = minimums[i];
            made.maximum = maximums[i];
            made
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
        let mut row = RegionRow::default();
        row.event_count = n as u64;
        p.rows.push(row);
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
        let mut row = RegionRow::default();
        row.event_count = n as u64;
        p.rows.push(row);
        p.events.start_ns = (0..n as i64).map(|i| 1_000 + 10 * i).collect();
        p.events.durations = vec![7; n];
        p.events.call_ids = (0..n as i64).collect();
        p.events.parent_ids = vec![7; n];
        p.events.thread_ids = vec![0; n];
        p.threads.push(crate::profile::ThreadInfo::default());
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
        let (_, c) = open_index(&path).unwrap();
        let c = &c;
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
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
