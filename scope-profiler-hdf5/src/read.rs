//! Reading a schema-2/3 columnar file back into a [`Profile`].

use std::path::Path;

use super::h5::{Attribute, File, Group, H5Type, Result, ScalarKind};
use super::schema::{self, SummaryRecord};
use crate::error::Error;
use crate::limits;
use crate::profile::{
    Events, Profile, RegionCounters, RegionRow, SummaryStatistics, TaskInfo, ThreadInfo,
};
use crate::value::Value;

/// Reads a profile file written by this crate (or a columnar schema-2/3 file
/// from the Python package) back into a [`Profile`].
///
/// Start times are decoded per row from `start_deltas` (schema 3) or taken
/// from `start_times`/`end_times` (schema 2), so a file written from a
/// profile reads back equal to it, metadata order included (strings with a
/// NUL inside too: see [`write_profile`](crate::write_profile)).
///
/// Optional parts may be missing: without `/metadata`, `/thread_table` or
/// `/task_table` those fields are empty; without `events/task_ids` it is
/// `None`; missing `call_ids`, `parent_ids` and `thread_ids` read as -1 per
/// event, `source_files` as "", `source_lines` and `exclusive_totals` as -1,
/// and missing `summary_statistics` are computed from the events. Metadata
/// attributes that are neither integer nor string scalars (float or list
/// values from Python) are skipped.
///
/// # Errors
///
/// [`Error::Hdf5`] naming `path` when the file cannot be opened, a required
/// dataset is missing, the schema attribute is not 2 or 3, or the index
/// does not fit the event columns, or a string is longer than its kind's
/// limit ([`limits`](crate::limits): 64 KiB for region, thread and task
/// names, source files, tags, counter names and metadata keys; 1 MiB for
/// source texts and metadata values; 64 MiB for a row's event metadata),
/// naming its dataset and the limit. An aggregate file (the Python package's
/// `aggregation_mode`: totals per region, no calls) holds no profile of
/// calls: an error that says so; `ProfileReader::open` reads its totals.
///
/// ```no_run
/// let profile = scope_profiler::read_profile("profiling_data.h5")?;
/// println!("{} regions, {} calls", profile.region_names.len(), profile.events.len());
/// # Ok::<(), scope_profiler::Error>(())
/// ```
pub fn read_profile(path: impl AsRef<Path>) -> std::result::Result<Profile, Error> {
    let path = path.as_ref();
    read_file(path).map_err(|e| Error::hdf5(path, e))
}

/// Reads every part of the file.
fn read_file(path: &Path) -> Result<Profile> {
    let file = File::open(path)?;
    let root = file.root()?;
    check_schema(&root)?;
    if is_aggregate(&root)? {
        return Err(
            "an aggregate file (storage_layout \"aggregate\": totals per region, no \
             calls): read_profile reads calls; ProfileReader::open reads its totals"
                .to_owned()
                .into(),
        );
    }
    let region_names = read_strings(
        &root.group(schema::REGION_TABLE)?,
        schema::REGION_TABLE,
        "names",
    )?;
    let mut raw = read_events(&root.group(schema::EVENTS)?)?;
    let rows = read_index(&root.group(schema::INDEX)?, &mut raw)?;
    let names = region_names.len();
    if let Some(row) = rows.iter().find(|r| r.region_id as usize >= names) {
        return Err(format!(
            "rank_region_index names region {} of {names}",
            row.region_id
        )
        .into());
    }
    Ok({
        let mut made = Profile::default();
        made.metadata = read_metadata(&root)?;
        made.region_names = region_names;
        made.rows = rows;
        made.events = raw.events;
        made.threads = read_threads(&root)?;
        made.tasks = read_tasks(&root)?;
        made.counters = read_counters(&root)?;
        made
    })
}

/// Every `rank<N>/perf_events/<region>` group (the Python package's perf
/// events, or our counters), in rank then name order; `own` is zeros where
/// the group has no `own_values` (the Python package's).
pub(super) fn read_counters(root: &Group) -> Result<Vec<RegionCounters>> {
    let mut ranks: Vec<(u32, String)> = root
        .member_names()?
        .into_iter()
        .filter_map(|n| Some((n.strip_prefix("rank")?.parse::<u32>().ok()?, n)))
        .collect();
    ranks.sort();
    let mut out = Vec::new();
    for (rank, name) in ranks {
        let group = root.group(&name)?;
        if !group.contains(schema::PERF_EVENTS)? {
            continue;
        }
        let perf = group.group(schema::PERF_EVENTS)?;
        for region in perf.member_names()? {
            let g = perf.group(&region)?;
            let mut c = RegionCounters::default();
            c.name = crate::strings::decode(&region.replace('\u{2215}', "/"));
            c.rank = rank;
            c.num_calls = u64::try_from(g.attr("calls")?.read_i64()?).unwrap_or(0);
            c.event_names = g.attr("event_names")?.read_string_list()?;
            let what = format!("{name}/perf_events/{region}");
            limits::check(&what, std::slice::from_ref(&region), limits::NAME)?;
            limits::check(&format!("{what} event_names"), &c.event_names, limits::NAME)?;
            c.inclusive = g.dataset("values")?.read::<u64>()?;
            c.exclusive = match g.contains("own_values")? {
                true => g.dataset("own_values")?.read::<u64>()?,
                false => vec![0; c.inclusive.len()],
            };
            if c.inclusive.len() != c.event_names.len() || c.exclusive.len() != c.event_names.len()
            {
                return Err(format!(
                    "{name}/perf_events/{region}: {} event names for {} values",
                    c.event_names.len(),
                    c.inclusive.len()
                )
                .into());
            }
            out.push(c);
        }
    }
    Ok(out)
}

/// Whether the file is an aggregate one: `storage_layout` "aggregate", or
/// the index's `aggregate_counts` column.
pub(super) fn is_aggregate(root: &Group) -> Result<bool> {
    let layout = match root.attr(schema::LAYOUT_ATTR) {
        Ok(attr) => attr.read_string().is_ok_and(|s| s == schema::AGGREGATE),
        Err(_) => false,
    };
    Ok(layout
        || (root.contains(schema::INDEX)?
            && root.group(schema::INDEX)?.contains("aggregate_counts")?))
}

/// The root `scope_profiler_schema` attribute must be a scalar integer 2 or 3.
pub(super) fn check_schema(root: &Group) -> Result<()> {
    let version = root.attr(schema::SCHEMA_ATTR)?.read_i64()?;
    if !(2..=3).contains(&version) {
        return Err(format!(
            "unsupported {} {version}; expected 2 or 3",
            schema::SCHEMA_ATTR
        )
        .into());
    }
    Ok(())
}

/// `/metadata` attributes in creation order (name order for files whose
/// writer did not track it).
pub(super) fn read_metadata(root: &Group) -> Result<Vec<(String, Value)>> {
    if !root.contains(schema::METADATA)? {
        return Ok(Vec::new());
    }
    let group = root.group(schema::METADATA)?;
    let mut metadata = Vec::new();
    for name in group.attr_names()? {
        let what = format!("{} attribute", schema::METADATA);
        limits::check(&what, std::slice::from_ref(&name), limits::NAME)?;
        if let Some(value) = read_meta_value(&group.attr(&name)?)? {
            if let Value::Str(text) = &value {
                let what = format!("{} attribute {name:?}", schema::METADATA);
                limits::check(&what, std::slice::from_ref(text), limits::METADATA_VALUE)?;
            }
            metadata.push((name, value));
        }
    }
    Ok(metadata)
}

/// An integer, float or string scalar attribute; `None` for any other
/// kind.
fn read_meta_value(attr: &Attribute) -> Result<Option<Value>> {
    Ok(match attr.scalar_kind()? {
        Some(ScalarKind::Integer) => Some(Value::Int(attr.read_i64()?)),
        Some(ScalarKind::Unsigned) => Some(Value::from(attr.read_scalar::<u64>()?)),
        Some(ScalarKind::Float) => Some(Value::Float(attr.read_scalar::<f64>()?)),
        Some(ScalarKind::String) => Some(Value::Str(attr.read_string()?)),
        Some(ScalarKind::Other) | None => None,
    })
}

/// The event columns, starts decoded per row later by [`read_index`].
///
/// Until then `start_ns` holds the raw `start_deltas` of a schema-3 file;
/// a schema-2 file's `start_times`/`end_times` are absolute already, which
/// the returned flag says.
fn read_events(group: &Group) -> Result<RawEvents> {
    let (start_ns, durations, delta_encoded) = if group.contains("start_deltas")? {
        (
            read_column(group, "start_deltas")?,
            read_column(group, "durations")?,
            true,
        )
    } else {
        let starts: Vec<i64> = read_column(group, "start_times")?;
        let ends: Vec<i64> = read_column(group, "end_times")?;
        check_len("events/end_times", ends.len(), starts.len())?;
        let durations = ends
            .iter()
            .zip(&starts)
            .map(|(e, s)| e.wrapping_sub(*s))
            .collect();
        (starts, durations, false)
    };
    let n = start_ns.len();
    check_len("events/durations", durations.len(), n)?;
    let task_ids = read_optional::<i64>(group, "task_ids")?;
    if let Some(task_ids) = &task_ids {
        check_len("events/task_ids", task_ids.len(), n)?;
    }
    let events = {
        let mut made = Events::default();
        made.call_ids = read_or_fill(group, "call_ids", n, -1i64)?;
        made.parent_ids = read_or_fill(group, "parent_ids", n, -1i64)?;
        made.thread_ids = read_or_fill(group, "thread_ids", n, -1i64)?;
        made.start_ns = start_ns;
        made.durations = durations;
        made.task_ids = task_ids;
        made
    };
    Ok(RawEvents {
        events,
        delta_encoded,
    })
}

/// Event columns as stored, before the per-row decoding of the starts.
struct RawEvents {
    events: Events,
    delta_encoded: bool,
}

/// `/rank_region_index` as rows; decodes the starts of `raw` row by row and
/// hands the events back decoded.
fn read_index(group: &Group, raw: &mut RawEvents) -> Result<Vec<RegionRow>> {
    let index = read_index_rows(group, raw.events.start_ns.len() as u64)?;
    let mut rows = index.rows;
    decode_starts(&rows, raw)?;
    if !index.has_summaries {
        for row in rows.iter_mut() {
            row.stats = SummaryStatistics::from_calls(&row_calls(row, &raw.events));
        }
    }
    Ok(rows)
}

/// The rows of a columnar `/rank_region_index`, as both readers take them
/// (`read_profile` and `ProfileReader`'s index).
pub(super) struct IndexRows {
    /// The rows, with their statistics from `summary_statistics` (default
    /// when the file has none).
    pub rows: Vec<RegionRow>,
    /// Whether the file has `summary_statistics`.
    pub has_summaries: bool,
    /// Each row's tags as stored (JSON).
    pub tags: Vec<String>,
}

/// Reads the rows of a columnar index: every column checked against the
/// row count, and every row's events against `event_count` (within them,
/// not overlapping).
pub(super) fn read_index_rows(group: &Group, event_count: u64) -> Result<IndexRows> {
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
    check_rows(&offsets, &counts, event_count)?;
    let mut rows = Vec::with_capacity(n);
    for (i, source_file) in source_files.into_iter().enumerate() {
        rows.push({
            let mut made = RegionRow::default();
            made.region_id = region_ids[i];
            made.rank = ranks[i];
            made.event_offset = offsets[i];
            made.event_count = counts[i];
            made.source_file = source_file;
            made.source_line = source_lines[i];
            made.exclusive = exclusive_totals[i];
            made.stats = summaries.as_ref().map(|s| s[i].into()).unwrap_or_default();
            made.tags = details.tags(i)?;
            made.source_text = details.source_texts[i].clone();
            made.event_metadata = details.event_metadata(i)?;
            made
        });
    }
    Ok(IndexRows {
        rows,
        has_summaries: summaries.is_some(),
        tags: details.tags,
    })
}

/// Turns each row's `start_deltas` back into absolute starts (a wrapping
/// cumulative sum, the inverse of the writer's encoding).
fn decode_starts(rows: &[RegionRow], raw: &mut RawEvents) -> Result<()> {
    let n = raw.events.start_ns.len();
    for (i, row) in rows.iter().enumerate() {
        let Some(run) = Some(row.events()).and_then(|r| raw.events.start_ns.get_mut(r)) else {
            return Err(format!(
                "rank_region_index row {i} claims events {}..+{} of {n}",
                row.event_offset, row.event_count
            )
            .into());
        };
        if raw.delta_encoded {
            for j in 1..run.len() {
                run[j] = run[j].wrapping_add(run[j - 1]);
            }
        }
    }
    raw.delta_encoded = false;
    Ok(())
}

/// The `(start_ns, duration_ns)` pairs of `row`; empty if it is out of range.
fn row_calls(row: &RegionRow, events: &Events) -> Vec<(i64, i64)> {
    let Some(range) = Some(row.events()) else {
        return Vec::new();
    };
    match (
        events.start_ns.get(range.clone()),
        events.durations.get(range),
    ) {
        (Some(starts), Some(durations)) => starts
            .iter()
            .copied()
            .zip(durations.iter().copied())
            .collect(),
        _ => Vec::new(),
    }
}

/// `/thread_table` rows; empty without the group.
pub(super) fn read_threads(root: &Group) -> Result<Vec<ThreadInfo>> {
    if !root.contains(schema::THREAD_TABLE)? {
        return Ok(Vec::new());
    }
    let group = root.group(schema::THREAD_TABLE)?;
    let index: Vec<i64> = read_column(&group, "index")?;
    let n = index.len();
    let ident: Vec<i64> = read_sized(&group, "ident", n)?;
    let native_id: Vec<i64> = read_sized(&group, "native_id", n)?;
    let daemon: Vec<i8> = read_sized(&group, "daemon", n)?;
    let start_ns: Vec<i64> = read_sized(&group, "start_ns", n)?;
    let end_ns: Vec<i64> = read_sized(&group, "end_ns", n)?;
    let cpu_ns: Vec<i64> = read_sized(&group, "cpu_ns", n)?;
    let names = read_strings(&group, schema::THREAD_TABLE, "name")?;
    check_len("thread_table/name", names.len(), n)?;
    Ok(names
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            let mut made = ThreadInfo::default();
            made.index = index[i];
            made.ident = ident[i];
            made.native_id = native_id[i];
            made.daemon = daemon[i];
            made.start_ns = start_ns[i];
            made.end_ns = end_ns[i];
            made.cpu_ns = cpu_ns[i];
            made.name = name;
            made
        })
        .collect())
}

/// `/task_table` rows; empty without the group.
pub(super) fn read_tasks(root: &Group) -> Result<Vec<TaskInfo>> {
    if !root.contains(schema::TASK_TABLE)? {
        return Ok(Vec::new());
    }
    let group = root.group(schema::TASK_TABLE)?;
    let index: Vec<i64> = read_column(&group, "index")?;
    let n = index.len();
    let int = |name: &str| read_sized::<i64>(&group, name, n);
    let (thread_index, created_ns, done_ns) =
        (int("thread_index")?, int("created_ns")?, int("done_ns")?);
    let (steps, running_ns, suspended_ns) =
        (int("steps")?, int("running_ns")?, int("suspended_ns")?);
    let string = |name: &str| {
        let values = read_strings(&group, schema::TASK_TABLE, name)?;
        check_len(&format!("task_table/{name}"), values.len(), n).map(|()| values)
    };
    let (kinds, names, coro_names) = (string("kind")?, string("name")?, string("coro_name")?);
    Ok(kinds
        .into_iter()
        .zip(names)
        .zip(coro_names)
        .enumerate()
        .map(|(i, ((kind, name), coro_name))| {
            let mut made = TaskInfo::default();
            made.index = index[i];
            made.thread_index = thread_index[i];
            made.created_ns = created_ns[i];
            made.done_ns = done_ns[i];
            made.steps = steps[i];
            made.running_ns = running_ns[i];
            made.suspended_ns = suspended_ns[i];
            made.kind = kind;
            made.name = name;
            made.coro_name = coro_name;
            made
        })
        .collect())
}

/// A whole dataset in one read.
pub(super) fn read_column<T: H5Type>(group: &Group, name: &str) -> Result<Vec<T>> {
    group
        .dataset(name)?
        .read::<T>()
        .map_err(|e| format!("{name}: {e}").into())
}

/// A dataset that must have `len` values.
pub(super) fn read_sized<T: H5Type>(group: &Group, name: &str, len: usize) -> Result<Vec<T>> {
    let values = read_column(group, name)?;
    check_len(name, values.len(), len)?;
    Ok(values)
}

/// A dataset that may be absent.
pub(super) fn read_optional<T: H5Type>(group: &Group, name: &str) -> Result<Option<Vec<T>>> {
    match group.contains(name)? {
        true => read_column(group, name).map(Some),
        false => Ok(None),
    }
}

/// A dataset of `len` values, or `len` copies of `missing` when absent.
pub(super) fn read_or_fill<T: H5Type>(
    group: &Group,
    name: &str,
    len: usize,
    missing: T,
) -> Result<Vec<T>> {
    let values = read_optional(group, name)?.unwrap_or_else(|| vec![missing; len]);
    check_len(name, values.len(), len)?;
    Ok(values)
}

/// The dataset of strings `table/name` (variable-length or fixed, ASCII
/// or UTF-8), each at most as long as [`limits`](crate::limits) allows
/// strings of its kind.
pub(super) fn read_strings(group: &Group, table: &str, name: &str) -> Result<Vec<String>> {
    let values = group
        .dataset(name)?
        .read_strings()
        .map_err(|e| format!("{name}: {e}"))?;
    let what = format!("{table}/{name}");
    limits::check(&what, &values, limits::of_dataset(name))?;
    Ok(values)
}

/// Fails unless every row's events (`offsets[i]..+counts[i]`) lie within
/// the `total` events and no two rows share an event.
pub(super) fn check_rows(offsets: &[u64], counts: &[u64], total: u64) -> Result<()> {
    for (i, (&offset, &count)) in offsets.iter().zip(counts).enumerate() {
        if offset.checked_add(count).is_none_or(|end| end > total) {
            return Err(format!(
                "rank_region_index row {i} claims events {offset}..+{count} of {total}"
            )
            .into());
        }
    }
    let mut order: Vec<usize> = (0..offsets.len().min(counts.len()))
        .filter(|&i| counts[i] > 0)
        .collect();
    order.sort_unstable_by_key(|&i| offsets[i]);
    for pair in order.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if offsets[a] + counts[a] > offsets[b] {
            return Err(format!(
                "rank_region_index rows {a} and {b} overlap (events {}..+{} and {}..+{})",
                offsets[a], counts[a], offsets[b], counts[b]
            )
            .into());
        }
    }
    Ok(())
}

/// Fails unless a column has the length its table implies.
pub(super) fn check_len(name: &str, len: usize, expected: usize) -> Result<()> {
    if len != expected {
        return Err(format!("{name} has {len} values, expected {expected}").into());
    }
    Ok(())
}

/// The string column `name` of `n` index rows, each `missing` if the file
/// has no such column.
pub(super) fn read_strings_or(
    group: &Group,
    name: &str,
    n: usize,
    missing: &str,
) -> Result<Vec<String>> {
    let values = match group.contains(name)? {
        true => read_strings(group, schema::INDEX, name)?,
        false => vec![missing.to_owned(); n],
    };
    check_len(&format!("rank_region_index/{name}"), values.len(), n)?;
    Ok(values)
}

/// The per-row text columns: `tags`, `source_texts`, `event_metadata`
/// (absent in older files: empty).
pub(super) struct RowDetails {
    /// As stored: JSON lists.
    pub tags: Vec<String>,
    pub source_texts: Vec<String>,
    event_metadata: Vec<String>,
}

impl RowDetails {
    pub(super) fn read(group: &Group, n: usize) -> Result<RowDetails> {
        let strings = |name, missing| read_strings_or(group, name, n, missing);
        Ok(RowDetails {
            tags: strings("tags", schema::EMPTY_JSON_LIST)?,
            source_texts: strings("source_texts", "")?,
            event_metadata: strings("event_metadata", schema::EMPTY_JSON_LIST)?,
        })
    }

    /// Row `i`'s tags.
    pub(super) fn tags(&self, i: usize) -> Result<Vec<String>> {
        let text = &self.tags[i];
        if text.is_empty() {
            return Ok(Vec::new());
        }
        crate::value::parse_string_list(text).ok_or_else(|| {
            format!("rank_region_index/tags row {i} is not a JSON list of strings: {text:?}").into()
        })
    }

    /// Row `i`'s per-call metadata (empty when none).
    pub(super) fn event_metadata(&self, i: usize) -> Result<Vec<crate::value::CallMetadata>> {
        let text = &self.event_metadata[i];
        if text.is_empty() {
            return Ok(Vec::new());
        }
        let calls = crate::value::parse_event_metadata(text).ok_or_else(|| {
            format!("rank_region_index/event_metadata row {i} is not a JSON list of objects")
        })?;
        Ok(if calls.iter().all(|c| c.is_empty()) {
            Vec::new()
        } else {
            calls
        })
    }
}
