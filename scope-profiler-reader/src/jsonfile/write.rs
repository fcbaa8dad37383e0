//! Writing the JSON profile in bounded memory.
//!
//! Events come in file order (each row's events back to back, rows in
//! order), but the document wants, per row, one array per column. So
//! [`JsonSink`] keeps the row being filled as one text buffer per column
//! (spilled to an unlinked scratch file per column past [`SPILL_BYTES`]),
//! and appends each completed row's arrays to an unlinked scratch "body"
//! file. The rows' other fields (name, source, tags, exclusive time,
//! per-call metadata) are known once the events are written, so
//! [`JsonSink::finish`] writes the document: each row's fields, then its
//! arrays copied from the body. Memory: the buffers and one offset per
//! row.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::{FORMAT_NAME, FORMAT_VERSION};
use crate::error::Error;
use crate::json::{push_int, push_string};
use crate::profile::{AggregateRow, Profile, SummaryStatistics, TaskInfo, ThreadInfo};
use crate::scratch;
use crate::sink::{EventSink, EventSlice, IndexRow};
use crate::value::Value;

/// Bytes of column text a row holds in memory before it spills.
const SPILL_BYTES: usize = 4 << 20;

/// The columns of a row, in the order written.
const COLUMNS: [&str; 6] = [
    "start_times_ns",
    "end_times_ns",
    "call_ids",
    "parent_ids",
    "thread_ids",
    "task_ids",
];

/// What the document holds besides the rows.
pub struct Document<'a> {
    pub metadata: &'a [(String, Value)],
    pub threads: &'a [ThreadInfo],
    pub tasks: &'a [TaskInfo],
}

/// The output file, gzip-compressed or not.
enum Out {
    Plain(BufWriter<File>),
    #[cfg(feature = "hdf5")]
    Gzip(Box<flate2::write::GzEncoder<BufWriter<File>>>),
}

impl Out {
    /// Truncates `temp` and writes to it (gzip for `gzip`).
    fn create(temp: &Path, target: &Path, gzip: bool) -> Result<Out, Error> {
        #[cfg(not(feature = "hdf5"))]
        if gzip {
            return Err(Error::needs_hdf5(target, "gzip (.json.gz)"));
        }
        let file = File::create(temp).map_err(|e| Error::io(target, e))?;
        let file = BufWriter::with_capacity(1 << 20, file);
        #[cfg(feature = "hdf5")]
        if gzip {
            // No name and no time in the header (as the Python writer):
            // the same run gives the same bytes.
            return Ok(Out::Gzip(Box::new(
                flate2::GzBuilder::new()
                    .mtime(0)
                    .write(file, flate2::Compression::default()),
            )));
        }
        Ok(Out::Plain(file))
    }

    /// Completes the stream and flushes it to the file.
    #[cfg_attr(not(feature = "hdf5"), allow(clippy::infallible_destructuring_match))]
    fn finish(self) -> io::Result<()> {
        let mut file = match self {
            Out::Plain(file) => file,
            #[cfg(feature = "hdf5")]
            Out::Gzip(gz) => gz.finish()?,
        };
        file.flush()
    }
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Out::Plain(w) => w.write(buf),
            #[cfg(feature = "hdf5")]
            Out::Gzip(w) => w.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Out::Plain(w) => w.write_all(buf),
            #[cfg(feature = "hdf5")]
            Out::Gzip(w) => w.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Out::Plain(w) => w.flush(),
            #[cfg(feature = "hdf5")]
            Out::Gzip(w) => w.flush(),
        }
    }
}

/// Receives a session's events in file order and writes the JSON profile
/// (see the module's documentation).
pub struct JsonSink {
    /// The target, which errors name.
    target: PathBuf,
    /// Where scratch files go.
    dir: PathBuf,
    /// Events of each row, in row order.
    counts: Vec<u64>,
    /// The row being filled, and its events still to come.
    row: usize,
    left: u64,
    /// Whether the row being filled has no event yet.
    empty_row: bool,
    with_tasks: bool,
    /// The row's column text held in memory...
    columns: [Vec<u8>; 6],
    /// ... and, past [`SPILL_BYTES`], in scratch files (bytes in each).
    spilled: [Option<(File, u64)>; 6],
    /// Completed rows' arrays, and where each row's end.
    body: BufWriter<File>,
    body_len: u64,
    body_ends: Vec<u64>,
}

impl JsonSink {
    /// A sink for rows of `counts` events (in row order), its scratch
    /// files beside `target`.
    pub fn new(target: &Path, counts: Vec<u64>, with_tasks: bool) -> Result<Self, Error> {
        let dir = scratch::dir_of(target);
        let body = scratch::create(&dir, "json-body").map_err(|e| Error::io(&dir, e))?;
        let mut sink = JsonSink {
            target: target.to_path_buf(),
            dir,
            left: counts.first().copied().unwrap_or(0),
            counts,
            row: 0,
            empty_row: true,
            with_tasks,
            columns: Default::default(),
            spilled: Default::default(),
            body: BufWriter::with_capacity(1 << 20, body),
            body_len: 0,
            body_ends: Vec::new(),
        };
        sink.body_ends.reserve(sink.counts.len());
        Ok(sink)
    }

    fn io(&self, e: io::Error) -> Error {
        Error::io(&self.target, e)
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.body.write_all(bytes)?;
        self.body_len += bytes.len() as u64;
        Ok(())
    }

    /// Appends the row being filled (all its columns) to the body and moves
    /// to the next row.
    fn close_row(&mut self) -> io::Result<()> {
        let n = if self.with_tasks { 6 } else { 5 };
        for (c, name) in COLUMNS.iter().enumerate().take(n) {
            let mut head = Vec::with_capacity(24);
            if c > 0 {
                head.push(b',');
            }
            push_string(&mut head, name);
            head.extend_from_slice(b":[");
            self.put(&head)?;
            if let Some((file, len)) = &mut self.spilled[c] {
                file.seek(SeekFrom::Start(0))?;
                let copied = io::copy(&mut (&mut *file).take(*len), &mut self.body)?;
                if copied != *len {
                    return Err(io::Error::other("a scratch file came back short"));
                }
                self.body_len += copied;
                file.set_len(0)?;
                file.seek(SeekFrom::Start(0))?;
                *len = 0;
            }
            let text = std::mem::take(&mut self.columns[c]);
            self.put(&text)?;
            self.columns[c] = text;
            self.columns[c].clear();
            self.put(b"]")?;
        }
        self.body_ends.push(self.body_len);
        self.row += 1;
        self.left = self.counts.get(self.row).copied().unwrap_or(0);
        self.empty_row = true;
        Ok(())
    }

    /// Moves the row's column text to its scratch files.
    fn spill(&mut self) -> io::Result<()> {
        for (c, text) in self.columns.iter_mut().enumerate() {
            if text.is_empty() {
                continue;
            }
            if self.spilled[c].is_none() {
                self.spilled[c] = Some((scratch::create(&self.dir, "json-column")?, 0));
            }
            if let Some((file, len)) = &mut self.spilled[c] {
                file.write_all(text)?;
                *len += text.len() as u64;
            }
            text.clear();
        }
        Ok(())
    }

    /// Writes the document to `temp` (gzip for `gzip`): the prelude, each
    /// row's fields (`index_row`, `name`) and arrays, the lane tables.
    pub fn finish<'r>(
        mut self,
        temp: &Path,
        gzip: bool,
        doc: &Document<'_>,
        name: &dyn Fn(usize) -> String,
        index_row: &dyn Fn(usize) -> IndexRow<'r>,
    ) -> Result<(), Error> {
        while self.row < self.counts.len() {
            self.close_row().map_err(|e| self.io(e))?;
        }
        let target = self.target.clone();
        let io_err = |e: io::Error| Error::io(&target, e);
        let mut body = self.body.into_inner().map_err(|e| io_err(e.into_error()))?;
        body.seek(SeekFrom::Start(0)).map_err(io_err)?;
        let mut out = Out::create(temp, &target, gzip)?;
        let ranks = (0..self.counts.len())
            .map(|i| index_row(i).rank as i64 + 1)
            .max()
            .unwrap_or(1);
        let mut buf = prelude(doc, ranks, true);
        let mut start = 0u64;
        for (i, &end) in self.body_ends.iter().enumerate() {
            if i > 0 {
                buf.extend_from_slice(b",\n");
            }
            row_fields(&mut buf, &name(i), &index_row(i));
            buf.push(b',');
            out.write_all(&buf).map_err(io_err)?;
            buf.clear();
            let len = end.saturating_sub(start);
            let copied = io::copy(&mut (&mut body).take(len), &mut out).map_err(io_err)?;
            if copied != len {
                return Err(io_err(io::Error::other("the scratch body came back short")));
            }
            buf.push(b'}');
            start = end;
        }
        buf.extend_from_slice(b"]");
        lanes(&mut buf, doc);
        buf.extend_from_slice(b"}\n");
        out.write_all(&buf).map_err(io_err)?;
        out.finish().map_err(io_err)
    }
}

impl EventSink for JsonSink {
    fn events(&mut self, _offset: usize, s: &EventSlice<'_>) -> Result<(), Error> {
        let tasks = s.task_ids.filter(|_| self.with_tasks);
        for i in 0..s.start_ns.len() {
            while self.left == 0 {
                if self.row >= self.counts.len() {
                    return Err(Error::io(
                        &self.target,
                        io::Error::other("more events than the rows hold"),
                    ));
                }
                self.close_row().map_err(|e| self.io(e))?;
            }
            let start = s.start_ns[i];
            let values = [
                start,
                start.wrapping_add(s.durations[i]),
                s.call_ids[i],
                s.parent_ids[i],
                s.thread_ids[i],
                tasks.map_or(-1, |t| t[i]),
            ];
            let n = if self.with_tasks { 6 } else { 5 };
            for (column, &v) in self.columns.iter_mut().zip(&values).take(n) {
                if !self.empty_row {
                    column.push(b',');
                }
                push_int(column, v);
            }
            self.empty_row = false;
            self.left -= 1;
            if self.columns[0].len() * n > SPILL_BYTES {
                self.spill().map_err(|e| self.io(e))?;
            }
        }
        Ok(())
    }

    fn row_stats(&mut self, _stats: &SummaryStatistics) -> Result<(), Error> {
        // The reader computes them from the events.
        Ok(())
    }
}

/// The document up to the first row: `{"format": ..., "regions": [`.
fn prelude(doc: &Document<'_>, ranks: i64, events: bool) -> Vec<u8> {
    let mut buf = Vec::with_capacity(4096);
    buf.extend_from_slice(b"{\"format\": ");
    push_string(&mut buf, FORMAT_NAME);
    buf.extend_from_slice(b", \"format_version\": ");
    push_int(&mut buf, FORMAT_VERSION);
    buf.extend_from_slice(b", \"exporter\": ");
    push_string(
        &mut buf,
        concat!("scope-profiler-rs@", env!("CARGO_PKG_VERSION")),
    );
    buf.extend_from_slice(b", \"time_unit\": \"nanoseconds\", \"num_ranks\": ");
    push_int(&mut buf, ranks.max(1));
    buf.extend_from_slice(b", \"event_data_available\": ");
    buf.extend_from_slice(if events { b"true" } else { b"false" });
    buf.extend_from_slice(b",\n\"metadata\": {");
    for (i, (key, value)) in doc.metadata.iter().enumerate() {
        if i > 0 {
            buf.extend_from_slice(b", ");
        }
        push_string(&mut buf, key);
        buf.extend_from_slice(b": ");
        buf.extend_from_slice(value.to_json().as_bytes());
    }
    buf.extend_from_slice(b"},\n\"regions\": [\n");
    buf
}

/// `{"name": ..., ...` of a row, up to its arrays (no closing brace), as
/// the Python writer leaves out what is unknown.
fn row_fields(buf: &mut Vec<u8>, name: &str, row: &IndexRow<'_>) {
    buf.extend_from_slice(b"{\"name\": ");
    push_string(buf, name);
    buf.extend_from_slice(b", \"rank\": ");
    push_int(buf, row.rank as i64);
    if !row.source_file.is_empty() {
        buf.extend_from_slice(b", \"source_file\": ");
        push_string(buf, row.source_file);
    }
    if row.source_line >= 0 {
        buf.extend_from_slice(b", \"source_lineno\": ");
        push_int(buf, row.source_line);
    }
    if !row.source_text.is_empty() {
        buf.extend_from_slice(b", \"source_text\": ");
        push_string(buf, row.source_text);
    }
    // Both are JSON already (a list of strings, a list of objects).
    if row.tags.trim() != "[]" && !row.tags.trim().is_empty() {
        buf.extend_from_slice(b", \"tags\": ");
        buf.extend_from_slice(row.tags.as_bytes());
    }
    if row.event_metadata.trim() != "[]" && !row.event_metadata.trim().is_empty() {
        buf.extend_from_slice(b", \"event_metadata\": ");
        buf.extend_from_slice(row.event_metadata.as_bytes());
    }
    if row.exclusive >= 0 {
        buf.extend_from_slice(b", \"exclusive_total_ns\": ");
        push_int(buf, row.exclusive);
    }
}

/// `, "threads": {"0": [...]}, "tasks": {"0": [...]}` (each when not
/// empty).
fn lanes(buf: &mut Vec<u8>, doc: &Document<'_>) {
    if !doc.threads.is_empty() {
        buf.extend_from_slice(b",\n\"threads\": {\"0\": [");
        for (i, t) in doc.threads.iter().enumerate() {
            if i > 0 {
                buf.extend_from_slice(b", ");
            }
            buf.extend_from_slice(b"{\"index\": ");
            push_int(buf, t.index);
            buf.extend_from_slice(b", \"name\": ");
            push_string(buf, &t.name);
            for (key, v) in [("ident", t.ident), ("native_id", t.native_id)] {
                buf.extend_from_slice(b", \"");
                buf.extend_from_slice(key.as_bytes());
                buf.extend_from_slice(b"\": ");
                push_int(buf, v);
            }
            buf.extend_from_slice(b", \"daemon\": ");
            buf.extend_from_slice(if t.daemon != 0 { b"true" } else { b"false" });
            for (key, v) in [
                ("start_ns", t.start_ns),
                ("end_ns", t.end_ns),
                ("cpu_ns", t.cpu_ns),
            ] {
                buf.extend_from_slice(b", \"");
                buf.extend_from_slice(key.as_bytes());
                buf.extend_from_slice(b"\": ");
                push_int(buf, v);
            }
            buf.push(b'}');
        }
        buf.extend_from_slice(b"]}");
    }
    if !doc.tasks.is_empty() {
        buf.extend_from_slice(b",\n\"tasks\": {\"0\": [");
        for (i, t) in doc.tasks.iter().enumerate() {
            if i > 0 {
                buf.extend_from_slice(b", ");
            }
            buf.extend_from_slice(b"{\"index\": ");
            push_int(buf, t.index);
            for (key, s) in [
                ("kind", &t.kind),
                ("name", &t.name),
                ("coro_name", &t.coro_name),
            ] {
                buf.extend_from_slice(b", \"");
                buf.extend_from_slice(key.as_bytes());
                buf.extend_from_slice(b"\": ");
                push_string(buf, s);
            }
            for (key, v) in [
                ("thread_index", t.thread_index),
                ("created_ns", t.created_ns),
                ("done_ns", t.done_ns),
                ("steps", t.steps),
                ("running_ns", t.running_ns),
                ("suspended_ns", t.suspended_ns),
            ] {
                buf.extend_from_slice(b", \"");
                buf.extend_from_slice(key.as_bytes());
                buf.extend_from_slice(b"\": ");
                push_int(buf, v);
            }
            buf.push(b'}');
        }
        buf.extend_from_slice(b"]}");
    }
}

/// Writes an aggregation-mode session's document to `temp`: one row per
/// region with its `"aggregate"` totals (the keys the Python package's
/// reader gives an aggregate HDF5 file's rows), no events.
pub fn write_aggregate(
    temp: &Path,
    target: &Path,
    doc: &Document<'_>,
    names: &[&str],
    rows: &[AggregateRow],
) -> Result<(), Error> {
    let io_err = |e: io::Error| Error::io(target, e);
    let mut out = Out::create(temp, target, super::is_gzip_path(target))?;
    let ranks = rows.iter().map(|r| r.rank as i64 + 1).max().unwrap_or(1);
    let mut buf = prelude(doc, ranks, true);
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            buf.extend_from_slice(b",\n");
        }
        buf.extend_from_slice(b"{\"name\": ");
        push_string(
            &mut buf,
            names.get(row.region_id as usize).copied().unwrap_or(""),
        );
        buf.extend_from_slice(b", \"rank\": ");
        push_int(&mut buf, row.rank as i64);
        buf.extend_from_slice(b", \"aggregate\": {\"count\": ");
        push_int(&mut buf, i64::try_from(row.num_calls).unwrap_or(i64::MAX));
        for (key, v) in [
            ("total", row.total),
            ("minimum", row.minimum),
            ("maximum", row.maximum),
            ("exclusive", row.exclusive),
        ] {
            buf.extend_from_slice(b", \"");
            buf.extend_from_slice(key.as_bytes());
            buf.extend_from_slice(b"\": ");
            push_int(&mut buf, v);
        }
        buf.extend_from_slice(b"}}");
    }
    buf.extend_from_slice(b"]");
    lanes(&mut buf, doc);
    buf.extend_from_slice(b"}\n");
    out.write_all(&buf).map_err(io_err)?;
    out.finish().map_err(io_err)
}

/// Writes `profile` as a JSON profile to `temp` (for `target`), through
/// the same sink as a session.
pub fn write_profile(profile: &Profile, temp: &Path, target: &Path) -> Result<(), Error> {
    let e = &profile.events;
    let n = e.len();
    let same = [&e.durations, &e.call_ids, &e.parent_ids, &e.thread_ids]
        .iter()
        .all(|c| c.len() == n)
        && e.task_ids.as_ref().is_none_or(|t| t.len() == n);
    let mut order: Vec<usize> = (0..profile.rows.len()).collect();
    order.sort_by_key(|&i| profile.rows[i].event_offset);
    let mut next = 0u64;
    for &i in &order {
        let row = &profile.rows[i];
        if !same
            || row.event_offset != next
            || (row.region_id as usize) >= profile.region_names.len()
        {
            return Err(Error::json(
                target,
                "the profile's rows do not cover its events back to back, or its columns differ in length",
            ));
        }
        next = row.event_offset + row.event_count;
    }
    if next != n as u64 {
        return Err(Error::json(
            target,
            "the profile has events outside its rows",
        ));
    }
    let counts = order.iter().map(|&i| profile.rows[i].event_count).collect();
    let mut sink = JsonSink::new(target, counts, e.task_ids.is_some())?;
    sink.events(
        0,
        &EventSlice {
            start_ns: &e.start_ns,
            start_deltas: &[],
            durations: &e.durations,
            call_ids: &e.call_ids,
            parent_ids: &e.parent_ids,
            thread_ids: &e.thread_ids,
            task_ids: e.task_ids.as_deref(),
        },
    )?;
    let doc = Document {
        metadata: &profile.metadata,
        threads: &profile.threads,
        tasks: &profile.tasks,
    };
    let row = |i: usize| &profile.rows[order[i]];
    sink.finish(
        temp,
        super::is_gzip_path(target),
        &doc,
        &|i| profile.region_names[row(i).region_id as usize].clone(),
        &|i| IndexRow::of(row(i)),
    )
}
