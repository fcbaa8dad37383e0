//! Reading a JSON profile (ours, or the Python package's): the document
//! parsed once, whole, by the runtime's one JSON reader (`crate::json`'s
//! strict pull parser; metadata values, `tags` and `event_metadata` read
//! from it by `value`'s `read_*` functions), each field checked for the
//! type the format gives it and each row's columns for one length, the
//! rows' statistics computed from their events.

use std::collections::HashMap;
use std::path::Path;

use super::{FORMAT_NAME, FORMAT_VERSION};
use crate::error::Error;
use crate::json::{self, JsonError, Kind, Parser};
use crate::profile::{
    AggregateRow, Events, Profile, ReadIndex, RegionRow, StatsAccumulator, TaskInfo, ThreadInfo,
};
use crate::value::CallMetadata;
use crate::{sink, value};

/// Reads the JSON profile at `path`: its index, every event (rows back to
/// back, in the document's order), and whether every row with events has
/// call and parent ids.
pub(crate) fn read(path: &Path) -> Result<(ReadIndex, Events, bool), Error> {
    let bytes = load(path)?;
    let text = match std::str::from_utf8(&bytes) {
        Ok(text) => text,
        Err(e) => {
            return Err(Error::json(
                path,
                format!("not UTF-8 (at byte {})", e.valid_up_to()),
            ));
        }
    };
    parse(text).map_err(|e| Error::json(path, e))
}

/// Reads the JSON profile at `path` into a [`Profile`]; an aggregate one
/// (totals, no events) is an `Err`.
pub(crate) fn read_profile(path: &Path) -> Result<Profile, Error> {
    let (index, events, _) = read(path)?;
    if !index.aggregates.is_empty() {
        return Err(Error::json(
            path,
            "an aggregate profile (totals, no events): open it with ProfileReader",
        ));
    }
    Ok({
        let mut made = Profile::default();
        made.metadata = index.metadata;
        made.region_names = index.region_names;
        made.rows = index.rows;
        made.events = events;
        made.threads = index.threads;
        made.tasks = index.tasks;
        made
    })
}

/// The file's bytes, gunzipped if they are gzip.
fn load(path: &Path) -> Result<Vec<u8>, Error> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Ok(bytes);
    }
    #[cfg(not(feature = "hdf5"))]
    {
        Err(Error::json(
            path,
            "gzip-compressed: reading it needs the feature `hdf5` of scope-profiler \
             (or of scope-profiler-reader; it brings flate2), which this build leaves \
             out; gunzip it first",
        ))
    }
    #[cfg(feature = "hdf5")]
    {
        use std::io::Read;
        let cap = gunzip_cap(bytes.len());
        let mut text = Vec::new();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .take(cap + 1)
            .read_to_end(&mut text)
            .map_err(|e| Error::json(path, format!("cannot gunzip: {e}")))?;
        if text.len() as u64 > cap {
            return Err(Error::json(
                path,
                format!(
                    "gzip-compressed to less than 1/64 of its size: it inflates past {cap} bytes \
                     (a deflate bomb?); gunzip it first if it is a real profile"
                ),
            ));
        }
        Ok(text)
    }
}

/// At most how many bytes a gzipped JSON profile of `len` bytes inflates
/// to: JSON profiles compress 5 to 20 times; 64 times plus 64 MiB leaves
/// room for any real one and stops a deflate bomb (1000 times) early.
#[cfg(feature = "hdf5")]
fn gunzip_cap(len: usize) -> u64 {
    (len as u64).saturating_mul(64).saturating_add(64 << 20)
}

/// A row being read: its fields and columns.
#[derive(Default)]
struct Row {
    name: Option<String>,
    rank: Option<i64>,
    source_file: String,
    source_line: i64,
    source_text: String,
    /// The tags, and their JSON text as written.
    tags: Option<(Vec<String>, String)>,
    event_metadata: Option<Vec<CallMetadata>>,
    exclusive: Option<i64>,
    starts: Option<Vec<i64>>,
    ends: Option<Vec<i64>>,
    call_ids: Option<Vec<i64>>,
    parent_ids: Option<Vec<i64>>,
    thread_ids: Option<Vec<i64>>,
    task_ids: Option<Vec<i64>>,
    aggregate: Option<AggregateRow>,
}

/// The whole document.
fn parse(text: &str) -> json::Result<(ReadIndex, Events, bool)> {
    let mut p = Parser::new(text);
    if p.kind().ok() != Some(Kind::Object) {
        return p.error("not a JSON object: not a scope-profiler JSON profile");
    }
    let mut index = ReadIndex {
        schema: 3,
        has_summaries: true,
        ..ReadIndex::default()
    };
    let mut events = Events::default();
    let mut tasks_column: Vec<i64> = Vec::new();
    let mut any_tasks = false;
    let mut has_parents = true;
    let mut format: Option<String> = None;
    let mut names: HashMap<String, u32> = HashMap::new();
    p.object(|p, key| {
        match &*key {
            "format" => format = Some(p.string()?.into_owned()),
            "format_version" => {
                let v = p.int()?;
                if v > FORMAT_VERSION {
                    return p.error(format!(
                        "format_version {v}: this reader reads versions up to {FORMAT_VERSION}"
                    ));
                }
            }
            "time_unit" => {
                let unit = p.string()?;
                if unit != "nanoseconds" {
                    return p.error(format!("time_unit {unit:?}: only nanoseconds are read"));
                }
            }
            "metadata" => {
                if !p.null()? {
                    p.object(|p, key| {
                        let key = key.into_owned();
                        let value = value::read_value(p)?;
                        index.metadata.push((key, value));
                        Ok(())
                    })
                    .map_err(|e| e.within("\"metadata\""))?
                }
            }
            "regions" => {
                let mut i = 0;
                p.array(|p| {
                    let row = read_row(p).map_err(|e| e.within(format_args!("regions[{i}]")))?;
                    i += 1;
                    add_row(
                        p,
                        row,
                        &mut index,
                        &mut events,
                        &mut tasks_column,
                        &mut any_tasks,
                        &mut has_parents,
                        &mut names,
                    )
                })
                .map_err(|e| {
                    if e.message.starts_with("in regions") {
                        e
                    } else {
                        e.within("\"regions\"")
                    }
                })?
            }
            "threads" => lane_table(p, |p| {
                let t = read_thread(p)?;
                index.threads.push(t);
                Ok(())
            })
            .map_err(|e| e.within("\"threads\""))?,
            "tasks" => lane_table(p, |p| {
                let t = read_task(p)?;
                index.tasks.push(t);
                Ok(())
            })
            .map_err(|e| e.within("\"tasks\""))?,
            // exporter, num_ranks, event_data_available, likwid,
            // line_profile, and what a later version adds.
            _ => p.skip()?,
        }
        Ok(())
    })?;
    p.end()?;
    match format.as_deref() {
        Some(FORMAT_NAME) => {}
        Some(other) => {
            return Err(JsonError {
                at: 0,
                message: format!(
                    "\"format\" is {other:?}, not {FORMAT_NAME:?}: not a scope-profiler JSON profile"
                ),
            });
        }
        None => {
            return Err(JsonError {
                at: 0,
                message: format!(
                    "no \"format\": {FORMAT_NAME:?}: not a scope-profiler JSON profile"
                ),
            });
        }
    }
    if any_tasks {
        events.task_ids = Some(tasks_column);
    }
    index.event_count = events.len() as u64;
    let mut names: Vec<(String, u32)> = names.into_iter().collect();
    names.sort_by_key(|(_, id)| *id);
    index.region_names = names.into_iter().map(|(n, _)| n).collect();
    Ok((index, events, has_parents))
}

/// `{"<rank>": [item, ...], ...}` (or null).
fn lane_table(
    p: &mut Parser<'_>,
    mut item: impl FnMut(&mut Parser<'_>) -> json::Result<()>,
) -> json::Result<()> {
    if p.null()? {
        return Ok(());
    }
    p.object(|p, _rank| p.array(&mut item))
}

/// A string or null ("" then).
fn opt_string(p: &mut Parser<'_>) -> json::Result<String> {
    if p.null()? {
        return Ok(String::new());
    }
    Ok(p.string()?.into_owned())
}

/// An integer column or null.
fn column(p: &mut Parser<'_>) -> json::Result<Option<Vec<i64>>> {
    if p.null()? {
        return Ok(None);
    }
    let mut v = Vec::new();
    p.ints(&mut v)?;
    Ok(Some(v))
}

/// One object of `regions`.
fn read_row(p: &mut Parser<'_>) -> json::Result<Row> {
    let mut row = Row {
        source_line: -1,
        ..Row::default()
    };
    p.object(|p, key| {
        match &*key {
            "name" => row.name = Some(p.string()?.into_owned()),
            "rank" => row.rank = Some(p.int()?),
            "source_file" => row.source_file = opt_string(p)?,
            "source_lineno" => {
                if !p.null()? {
                    row.source_line = p.int()?;
                }
            }
            "source_text" => row.source_text = opt_string(p)?,
            "tags" => {
                if !p.null()? {
                    let (tags, raw) = p
                        .spanned(value::read_string_list)
                        .map_err(|e| e.within("\"tags\" (a list of strings)"))?;
                    row.tags = Some((tags, raw.to_owned()));
                }
            }
            "event_metadata" => {
                if !p.null()? {
                    let calls = value::read_event_metadata(p)
                        .map_err(|e| e.within("\"event_metadata\" (a list of objects)"))?;
                    row.event_metadata = Some(calls);
                }
            }
            "exclusive_total_ns" => {
                if !p.null()? {
                    row.exclusive = Some(p.int()?);
                }
            }
            "start_times_ns" => row.starts = column(p)?,
            "end_times_ns" => row.ends = column(p)?,
            "call_ids" => row.call_ids = column(p)?,
            "parent_ids" => row.parent_ids = column(p)?,
            "thread_ids" => row.thread_ids = column(p)?,
            "task_ids" => row.task_ids = column(p)?,
            "aggregate" => {
                let mut a = {
                    let mut made = AggregateRow::default();
                    made.exclusive = -1;
                    made.minimum = -1;
                    made.maximum = -1;
                    made
                };
                let mut count = None;
                p.object(|p, key| {
                    match &*key {
                        "count" => count = Some(p.int()?),
                        "total" => a.total = p.int()?,
                        "minimum" => a.minimum = p.int()?,
                        "maximum" => a.maximum = p.int()?,
                        "exclusive" => a.exclusive = p.int()?,
                        _ => p.skip()?,
                    }
                    Ok(())
                })?;
                match count {
                    Some(c) if c >= 0 => a.num_calls = c as u64,
                    Some(c) => return p.error(format!("an aggregate count of {c}")),
                    None => return p.error("an aggregate without \"count\""),
                }
                row.aggregate = Some(a);
            }
            // gpu_durations_ns, await_ns, event_data_available, ...
            _ => p.skip()?,
        }
        Ok(())
    })?;
    Ok(row)
}

/// Checks `row` and adds it to the index and the events.
#[allow(clippy::too_many_arguments)]
fn add_row(
    p: &Parser<'_>,
    row: Row,
    index: &mut ReadIndex,
    events: &mut Events,
    tasks_column: &mut Vec<i64>,
    any_tasks: &mut bool,
    has_parents: &mut bool,
    names: &mut HashMap<String, u32>,
) -> json::Result<()> {
    let Some(name) = row.name else {
        return p.error("a region without \"name\"");
    };
    let rank = match row.rank {
        Some(r) => match u32::try_from(r) {
            Ok(r) => r,
            Err(_) => return p.error(format!("region {name:?}: rank {r}")),
        },
        None => return p.error(format!("region {name:?} without \"rank\"")),
    };
    let next = names.len() as u32;
    let region_id = *names.entry(name.clone()).or_insert(next);
    if let Some(mut a) = row.aggregate {
        a.region_id = region_id;
        a.rank = rank;
        index.aggregates.push(a);
        return Ok(());
    }
    let starts = row.starts.unwrap_or_default();
    let Some(ends) = row.ends.or_else(|| starts.is_empty().then(Vec::new)) else {
        return p.error(format!(
            "region {name:?}: start_times_ns without end_times_ns"
        ));
    };
    let n = starts.len();
    let check = |what: &str, c: &Option<Vec<i64>>| match c {
        Some(c) if c.len() != n => p.error(format!(
            "region {name:?}: {what} has {} values for {n} calls",
            c.len()
        )),
        _ => Ok(()),
    };
    if ends.len() != n {
        return p.error(format!(
            "region {name:?}: end_times_ns has {} values for {n} calls",
            ends.len()
        ));
    }
    check("call_ids", &row.call_ids)?;
    check("parent_ids", &row.parent_ids)?;
    check("thread_ids", &row.thread_ids)?;
    check("task_ids", &row.task_ids)?;
    let metadata = row.event_metadata.unwrap_or_default();
    if !metadata.is_empty() && metadata.len() != n {
        return p.error(format!(
            "region {name:?}: event_metadata has {} entries for {n} calls",
            metadata.len()
        ));
    }
    let mut acc = StatsAccumulator::default();
    for (i, (&s, &e)) in starts.iter().zip(&ends).enumerate() {
        match e.checked_sub(s) {
            Some(d) => {
                acc.add(s, d);
                events.durations.push(d);
            }
            None => {
                return p.error(format!(
                    "region {name:?}: call {i} ends at {e}, which is not a duration after {s}"
                ));
            }
        }
    }
    if n > 0 && (row.call_ids.is_none() || row.parent_ids.is_none()) {
        *has_parents = false;
    }
    let offset = events.start_ns.len() as u64;
    events.start_ns.extend_from_slice(&starts);
    let fill = |all: &mut Vec<i64>, c: Option<Vec<i64>>| match c {
        Some(c) => all.extend_from_slice(&c),
        None => all.resize(all.len() + n, -1),
    };
    fill(&mut events.call_ids, row.call_ids);
    fill(&mut events.parent_ids, row.parent_ids);
    fill(&mut events.thread_ids, row.thread_ids);
    *any_tasks |= row.task_ids.is_some();
    fill(tasks_column, row.task_ids);
    let (tag_list, tags) = row.tags.unwrap_or_else(|| (Vec::new(), "[]".to_owned()));
    index.rows.push({
        let mut made = RegionRow::default();
        made.region_id = region_id;
        made.rank = rank;
        made.event_offset = offset;
        made.event_count = n as u64;
        made.source_file = row.source_file;
        made.source_line = row.source_line;
        made.exclusive = row.exclusive.unwrap_or(-1);
        made.stats = acc.finish();
        made.tags = tag_list;
        made.source_text = row.source_text;
        made.event_metadata = metadata;
        made
    });
    index.tags.push(if tags.trim() == "[]" {
        sink::tags_json::<&str>(&[])
    } else {
        tags
    });
    Ok(())
}

/// An object of `threads`.
fn read_thread(p: &mut Parser<'_>) -> json::Result<ThreadInfo> {
    let mut t = {
        let mut made = ThreadInfo::default();
        made.end_ns = -1;
        made.cpu_ns = -1;
        made
    };
    p.object(|p, key| {
        match &*key {
            "index" => t.index = p.int()?,
            "name" => t.name = opt_string(p)?,
            "ident" => t.ident = int_or(p, 0)?,
            "native_id" => t.native_id = int_or(p, 0)?,
            "daemon" => {
                t.daemon = match p.kind()? {
                    Kind::Bool => p.bool()? as i8,
                    _ => (int_or(p, 0)? != 0) as i8,
                }
            }
            "start_ns" => t.start_ns = int_or(p, -1)?,
            "end_ns" => t.end_ns = int_or(p, -1)?,
            "cpu_ns" => t.cpu_ns = int_or(p, -1)?,
            _ => p.skip()?,
        }
        Ok(())
    })?;
    Ok(t)
}

/// An object of `tasks`.
fn read_task(p: &mut Parser<'_>) -> json::Result<TaskInfo> {
    let mut t = {
        let mut made = TaskInfo::default();
        made.done_ns = -1;
        made
    };
    p.object(|p, key| {
        match &*key {
            "index" => t.index = p.int()?,
            "kind" => t.kind = opt_string(p)?,
            "name" => t.name = opt_string(p)?,
            "coro_name" => t.coro_name = opt_string(p)?,
            "thread_index" => t.thread_index = int_or(p, -1)?,
            "created_ns" => t.created_ns = int_or(p, -1)?,
            "done_ns" => t.done_ns = int_or(p, -1)?,
            "steps" => t.steps = int_or(p, 0)?,
            "running_ns" => t.running_ns = int_or(p, 0)?,
            "suspended_ns" => t.suspended_ns = int_or(p, 0)?,
            _ => p.skip()?,
        }
        Ok(())
    })?;
    Ok(t)
}

/// An integer, or `missing` for null.
fn int_or(p: &mut Parser<'_>, missing: i64) -> json::Result<i64> {
    if p.null()? {
        return Ok(missing);
    }
    p.int()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    fn doc(regions: &str) -> String {
        format!(
            r#"{{"format": "scope-profiler-profile", "format_version": 1, "metadata": {{"a": 1, "b": "x", "c": 1.5, "d": [1]}}, "regions": [{regions}]}}"#
        )
    }

    #[test]
    fn a_document_reads_back_with_statistics() {
        let text = doc(
            r#"{"name": "r", "rank": 0, "start_times_ns": [10, 20], "end_times_ns": [15, 40], "call_ids": [0, 1], "parent_ids": [-1, -1], "thread_ids": [0, 0], "tags": ["io"]},
               {"name": "s", "rank": 1, "aggregate": {"count": 3, "total": 9, "mean": 3.0}}"#,
        );
        let (index, events, parents) = parse(&text).unwrap();
        assert_eq!(index.region_names, ["r", "s"]);
        assert_eq!(events.durations, [5, 20]);
        assert!(parents);
        assert_eq!(index.rows[0].stats.total, 25);
        assert_eq!(index.rows[0].tags, ["io"]);
        assert_eq!(index.aggregates[0].num_calls, 3);
        assert_eq!(index.metadata[0], ("a".into(), Value::Int(1)));
        assert_eq!(index.metadata[2], ("c".into(), Value::Float(1.5)));
        assert_eq!(index.metadata[3], ("d".into(), Value::Json("[1]".into())));
    }

    /// Malformed documents are errors that say what is wrong, never panics.
    #[test]
    fn malformed_documents_are_errors() {
        let good = doc(
            r#"{"name": "r", "rank": 0, "start_times_ns": [10, 20], "end_times_ns": [15, 40]}"#,
        );
        // Every truncation of a good document.
        for end in 0..good.len() {
            assert!(parse(&good[..end]).is_err(), "truncated at {end}");
        }
        let huge = format!(
            r#"{{"name": "r", "rank": 0, "start_times_ns": [{}], "end_times_ns": [1]}}"#,
            vec!["1"; 100_000].join(",")
        );
        for (bad, says) in [
            (doc(r#"{"name": 3, "rank": 0}"#), "expected '\"'"),
            (doc(r#"{"name": "r", "rank": "0"}"#), "expected a number"),
            (doc(r#"{"name": "r", "rank": -1}"#), "rank -1"),
            (doc(r#"{"name": "r", "rank": 1e300}"#), "integer"),
            (
                doc(r#"{"name": "r", "rank": 0, "start_times_ns": [1], "end_times_ns": [2, 3]}"#),
                "has 2 values for 1 calls",
            ),
            (
                doc(
                    r#"{"name": "r", "rank": 0, "start_times_ns": [1], "end_times_ns": [2], "thread_ids": [0, 0]}"#,
                ),
                "thread_ids has 2",
            ),
            (
                doc(
                    r#"{"name": "r", "rank": 0, "start_times_ns": [-9223372036854775808], "end_times_ns": [9223372036854775807]}"#,
                ),
                "not a duration",
            ),
            (
                doc(r#"{"name": "r", "rank": 0, "start_times_ns": ["a"]}"#),
                "expected a number",
            ),
            (doc(r#"{"name": "r", "rank": 0, "tags": [1]}"#), "tags"),
            (doc(&huge), "has 1 values for 100000 calls"),
            (doc(r#"{"rank": 0}"#), "without \"name\""),
            (doc("3"), "expected '{'"),
            ("[1]".to_owned(), "not a JSON object"),
            (
                r#"{"format": "speedscope"}"#.to_owned(),
                "not a scope-profiler JSON profile",
            ),
            (
                r#"{"format": "scope-profiler-profile", "format_version": 2}"#.to_owned(),
                "format_version 2",
            ),
            (
                good.replace(
                    "\"metadata\":",
                    &format!(
                        "\"extra\": {}{}, \"metadata\":",
                        "[".repeat(100),
                        "]".repeat(100)
                    ),
                ),
                "nested",
            ),
        ] {
            match parse(&bad) {
                Ok(_) => panic!("accepted: {bad:.200}"),
                Err(e) => assert!(
                    e.message.contains(says),
                    "{says:?} not in {e} for {bad:.200}"
                ),
            }
        }
        assert!(parse(&good).is_ok());
    }

    /// `tags`, `event_metadata` and metadata values are read in the one
    /// pass over the document, as strictly as the rest of it.
    #[test]
    fn tags_and_metadata_are_read_in_the_same_pass() {
        let text = doc(
            r#"{"name": "r", "rank": 0, "start_times_ns": [1, 2], "end_times_ns": [3, 4], "tags": ["io","x"], "event_metadata": [{"k": 18446744073709551615, "l": [1, {"m": null}]}, {}]}"#,
        );
        let (index, _, _) = parse(&text).unwrap();
        let row = &index.rows[0];
        assert_eq!(row.tags, ["io", "x"]);
        // The tags' text as written (a reader hands it on as it is).
        assert_eq!(index.tags[0], r#"["io","x"]"#);
        assert_eq!(
            row.event_metadata,
            [
                vec![
                    ("k".to_owned(), Value::UInt(u64::MAX)),
                    ("l".to_owned(), Value::Json(r#"[1, {"m": null}]"#.into()))
                ],
                vec![]
            ]
        );
        for (bad, says) in [
            (r#""name": "\ud800""#, "lone surrogate"),
            (r#""name": "r", "tags": ["\udc00"]"#, "lone surrogate"),
            (r#""name": "r", "tags": [1]"#, "in \"tags\""),
            (
                r#""name": "r", "event_metadata": [{"a": "\u+041"}]"#,
                "four hex digits",
            ),
            (r#""name": "r", "event_metadata": [[1]]"#, "event_metadata"),
        ] {
            let text = doc(&format!(r#"{{{bad}, "rank": 0}}"#));
            match parse(&text) {
                Ok(_) => panic!("accepted: {text}"),
                Err(e) => assert!(e.message.contains(says), "{says:?} not in {e}"),
            }
        }
    }

    #[cfg(feature = "hdf5")]
    #[test]
    fn a_gzip_bomb_stops_at_its_cap() {
        // Before: 100 MiB of zeros in a 100 KiB .json.gz were all inflated
        // into memory (any size: a few MB of gzip could hold gigabytes).
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("sp-gzip-bomb-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bomb.json.gz");
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(b"{\"regions\": [").unwrap();
        let spaces = vec![b' '; 1 << 20];
        for _ in 0..100 {
            z.write_all(&spaces).unwrap();
        }
        z.write_all(b"]}").unwrap();
        std::fs::write(&path, z.finish().unwrap()).unwrap();
        let err = read(&path).unwrap_err().to_string();
        assert!(err.contains("inflates past"), "{err}");
        assert!(err.contains("bomb.json.gz"), "{err}");
        // A real profile gzipped is read as before.
        let plain = doc(r#"{"name": "a", "rank": 0, "start_times_ns": [1], "end_times_ns": [2]}"#);
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(plain.as_bytes()).unwrap();
        std::fs::write(&path, z.finish().unwrap()).unwrap();
        assert_eq!(read(&path).unwrap().1.len(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn non_utf8_files_are_errors_naming_the_file() {
        let path = std::env::temp_dir().join(format!("sp-json-bad-{}.json", std::process::id()));
        std::fs::write(&path, b"{\"format\": \"\xff\"}").unwrap();
        let err = read(&path).unwrap_err().to_string();
        assert!(
            err.contains("not UTF-8") && err.contains("sp-json-bad"),
            "{err}"
        );
        std::fs::remove_file(&path).unwrap();
    }
}
