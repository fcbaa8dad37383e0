//! The JSON profile: the Python package's second file format
//! (`json_export.py`, `"format": "scope-profiler-profile"`, version 1),
//! which its `load`, `inspect`, `report`, `plot` and `export` read like an
//! HDF5 file. A session whose file name ends in `.json` (or `.json.gz`,
//! gzip-compressed, with the `hdf5` feature) is written in it, in any
//! build: the format of the lean build, which links no C library.
//!
//! The document is written as the Python package writes it: one object with
//! the run's metadata, one entry per region row with its own columns
//! (`start_times_ns`, `end_times_ns`, `call_ids`, `parent_ids`,
//! `thread_ids`, `task_ids`, in absolute ns), and the thread and task
//! tables with the columns of the HDF5 file's. It is published like the HDF5
//! file (a sibling temporary file, fsynced, renamed over the target).
//!
//! Unlike the HDF5 writer, this one holds the session's events in memory
//! while it writes (40 bytes a call, as an in-memory session does): for
//! sessions of many millions of calls, HDF5 is the bounded format.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

use crate::error::Error;
use crate::profile::{MetaValue, Profile};
use crate::publish::publish_atomically;
use crate::sink;
use crate::value::write_json_string;

/// The document's `format`.
const FORMAT: &str = "scope-profiler-profile";
/// The document's `format_version`.
const FORMAT_VERSION: u32 = 1;

/// Whether `path` names a JSON profile (`.json` or `.json.gz`, any case),
/// as the Python package's `is_json_path` decides.
pub(crate) fn is_json_path(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    name.ends_with(".json") || name.ends_with(".json.gz")
}

/// Whether `path` names a gzip-compressed JSON profile.
pub(crate) fn is_gzip_path(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().to_lowercase().ends_with(".gz"))
}

/// Writes `profile` to `path` as a JSON profile, atomically.
pub(crate) fn publish(profile: &Profile, path: &Path) -> Result<(), Error> {
    publish_atomically(path, |temp| {
        let file = std::fs::File::create(temp).map_err(|e| Error::io(path, e))?;
        let out = io::BufWriter::with_capacity(1 << 20, file);
        let written = if is_gzip_path(path) {
            write_gzip(profile, out)
        } else {
            write_document(profile, out)
                .and_then(|out| out.into_inner().map_err(|e| e.into_error()))
        };
        written
            .and_then(|file| file.sync_all())
            .map_err(|e| Error::io(path, e))
    })
}

#[cfg(feature = "hdf5")]
fn write_gzip(profile: &Profile, out: io::BufWriter<std::fs::File>) -> io::Result<std::fs::File> {
    // No name and no time in the header, as the Python package writes it:
    // two writes of one profile are the same bytes.
    let gz = flate2::GzBuilder::new().write(out, flate2::Compression::new(6));
    let gz = write_document(profile, gz)?;
    gz.finish()?.into_inner().map_err(|e| e.into_error())
}

#[cfg(not(feature = "hdf5"))]
fn write_gzip(_profile: &Profile, _out: io::BufWriter<std::fs::File>) -> io::Result<std::fs::File> {
    // Refused at setup and finalize_to (`session::check_output_path`).
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "gzip-compressed JSON profiles need the feature `hdf5` of scope-profiler",
    ))
}

/// The whole document, to `out`.
fn write_document<W: Write>(profile: &Profile, mut out: W) -> io::Result<W> {
    let mut text = String::with_capacity(1 << 16);
    text.push_str("{\"format\": ");
    write_json_string(&mut text, FORMAT);
    let _ = write!(
        text,
        ", \"format_version\": {FORMAT_VERSION}, \"exporter\": "
    );
    write_json_string(
        &mut text,
        concat!("scope-profiler-rs@", env!("CARGO_PKG_VERSION")),
    );
    text.push_str(", \"time_unit\": \"nanoseconds\", \"num_ranks\": 1");
    text.push_str(", \"event_data_available\": true, \"metadata\": {");
    for (i, (key, value)) in profile.metadata.iter().enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        write_json_string(&mut text, key);
        text.push_str(": ");
        match value {
            MetaValue::Int(v) => {
                let _ = write!(text, "{v}");
            }
            MetaValue::Str(s) => write_json_string(&mut text, s),
        }
    }
    text.push_str("}, \"regions\": [");
    for (i, row) in profile.rows.iter().enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        region_row(&mut text, profile, row);
        if text.len() > 1 << 20 {
            out.write_all(text.as_bytes())?;
            text.clear();
        }
    }
    text.push(']');
    lane_tables(&mut text, profile);
    text.push('}');
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(out)
}

/// One region row: its name, source, tags, columns and exclusive total.
fn region_row(text: &mut String, profile: &Profile, row: &crate::profile::RegionRow) {
    let name = profile
        .region_names
        .get(row.region_id as usize)
        .map_or("", String::as_str);
    text.push_str("{\"name\": ");
    write_json_string(text, name);
    let _ = write!(text, ", \"rank\": {}", row.rank);
    if !row.source_file.is_empty() {
        text.push_str(", \"source_file\": ");
        write_json_string(text, &row.source_file);
    }
    if row.source_line >= 0 {
        let _ = write!(text, ", \"source_lineno\": {}", row.source_line);
    }
    if !row.source_text.is_empty() {
        text.push_str(", \"source_text\": ");
        write_json_string(text, &row.source_text);
    }
    if !row.tags.is_empty() {
        let _ = write!(text, ", \"tags\": {}", sink::tags_json(&row.tags));
    }
    let events = &profile.events;
    let first = (row.event_offset as usize).min(events.len());
    let last = first
        .saturating_add(row.event_count as usize)
        .min(events.len());
    let range = first..last;
    let column = |text: &mut String, key: &str, values: &mut dyn Iterator<Item = i64>| {
        let _ = write!(text, ", \"{key}\": [");
        for (i, v) in values.enumerate() {
            if i > 0 {
                text.push_str(", ");
            }
            let _ = write!(text, "{v}");
        }
        text.push(']');
    };
    column(
        text,
        "start_times_ns",
        &mut events.start_ns[range.clone()].iter().copied(),
    );
    column(
        text,
        "end_times_ns",
        &mut events.start_ns[range.clone()]
            .iter()
            .zip(&events.durations[range.clone()])
            .map(|(s, d)| s.wrapping_add(*d)),
    );
    let metadata = sink::event_metadata_json(&row.event_metadata);
    if metadata != "[]" {
        let _ = write!(text, ", \"event_metadata\": {metadata}");
    }
    column(
        text,
        "call_ids",
        &mut events.call_ids[range.clone()].iter().copied(),
    );
    column(
        text,
        "parent_ids",
        &mut events.parent_ids[range.clone()].iter().copied(),
    );
    column(
        text,
        "thread_ids",
        &mut events.thread_ids[range.clone()].iter().copied(),
    );
    if let Some(tasks) = &events.task_ids {
        column(text, "task_ids", &mut tasks[range].iter().copied());
    }
    let _ = write!(text, ", \"exclusive_total_ns\": {}}}", row.exclusive_total);
}

/// The thread and task tables, rank 0, with the HDF5 file's columns (what
/// the Python package's `lane_tables_from_columns` reads from either).
fn lane_tables(text: &mut String, profile: &Profile) {
    if !profile.threads.is_empty() {
        text.push_str(", \"threads\": {\"0\": [");
        for (i, t) in profile.threads.iter().enumerate() {
            if i > 0 {
                text.push_str(", ");
            }
            let _ = write!(text, "{{\"index\": {}, \"name\": ", t.index);
            write_json_string(text, &t.name);
            let _ = write!(
                text,
                ", \"ident\": {}, \"native_id\": {}, \"daemon\": {}, \"start_ns\": {}, \
                 \"end_ns\": {}, \"cpu_ns\": {}}}",
                t.ident,
                t.native_id,
                t.daemon != 0,
                t.start_ns,
                t.end_ns,
                t.cpu_ns
            );
        }
        text.push_str("]}");
    }
    if !profile.tasks.is_empty() {
        text.push_str(", \"tasks\": {\"0\": [");
        for (i, t) in profile.tasks.iter().enumerate() {
            if i > 0 {
                text.push_str(", ");
            }
            let _ = write!(text, "{{\"index\": {}, \"kind\": ", t.index);
            write_json_string(text, &t.kind);
            text.push_str(", \"name\": ");
            write_json_string(text, &t.name);
            text.push_str(", \"coro_name\": ");
            write_json_string(text, &t.coro_name);
            let _ = write!(
                text,
                ", \"thread_index\": {}, \"created_ns\": {}, \"done_ns\": {}, \"steps\": {}, \
                 \"running_ns\": {}, \"suspended_ns\": {}}}",
                t.thread_index, t.created_ns, t.done_ns, t.steps, t.running_ns, t.suspended_ns
            );
        }
        text.push_str("]}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{Events, RegionRow, ThreadInfo};

    #[test]
    fn json_paths_are_named_as_the_python_package_names_them() {
        for (name, json, gz) in [
            ("run.json", true, false),
            ("RUN.JSON", true, false),
            ("run.json.gz", true, true),
            ("run.h5", false, false),
            ("run.jsonl", false, false),
            ("json", false, false),
        ] {
            assert_eq!(is_json_path(Path::new(name)), json, "{name}");
            assert_eq!(
                is_json_path(Path::new(name)) && is_gzip_path(Path::new(name)),
                gz
            );
        }
    }

    #[test]
    fn a_profile_becomes_the_python_package_document() {
        let profile = Profile {
            metadata: vec![
                ("label".into(), MetaValue::Str("a \"run\"".into())),
                ("mpi_size".into(), MetaValue::Int(1)),
            ],
            region_names: vec!["outer".into(), "inner".into()],
            rows: vec![
                RegionRow {
                    region_id: 1,
                    event_offset: 0,
                    event_count: 1,
                    source_line: -1,
                    ..RegionRow::default()
                },
                RegionRow {
                    region_id: 0,
                    event_offset: 1,
                    event_count: 1,
                    source_file: "src/main.rs".into(),
                    source_line: 7,
                    exclusive_total: 5,
                    tags: vec!["io".into()],
                    ..RegionRow::default()
                },
            ],
            events: Events {
                start_ns: vec![102, 100],
                durations: vec![3, 8],
                call_ids: vec![1, 0],
                parent_ids: vec![0, -1],
                thread_ids: vec![0, 0],
                task_ids: None,
            },
            threads: vec![ThreadInfo {
                name: "main".into(),
                end_ns: -1,
                ..ThreadInfo::default()
            }],
            tasks: Vec::new(),
        };
        let text = String::from_utf8(write_document(&profile, Vec::new()).unwrap()).unwrap();
        for part in [
            "{\"format\": \"scope-profiler-profile\", \"format_version\": 1",
            "\"metadata\": {\"label\": \"a \\\"run\\\"\", \"mpi_size\": 1}",
            "{\"name\": \"inner\", \"rank\": 0, \"start_times_ns\": [102], \"end_times_ns\": [105], \"call_ids\": [1], \"parent_ids\": [0], \"thread_ids\": [0], \"exclusive_total_ns\": 0}",
            "{\"name\": \"outer\", \"rank\": 0, \"source_file\": \"src/main.rs\", \"source_lineno\": 7, \"tags\": [\"io\"], \"start_times_ns\": [100], \"end_times_ns\": [108]",
            "\"threads\": {\"0\": [{\"index\": 0, \"name\": \"main\", \"ident\": 0, \"native_id\": 0, \"daemon\": false, \"start_ns\": 0, \"end_ns\": -1, \"cpu_ns\": 0}]}",
        ] {
            assert!(text.contains(part), "{part}\nnot in\n{text}");
        }
        assert!(!text.contains("\"tasks\""), "{text}");
        assert!(text.ends_with("]}}"), "{text}");
    }
}
