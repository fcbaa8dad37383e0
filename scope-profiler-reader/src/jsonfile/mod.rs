//! The JSON profile: the Python package's `scope-profiler-profile` document
//! (format version 1, `json_export.py`), written by `finalize` for a
//! `.json` or `.json.gz` path in any build, and read back by
//! [`ProfileReader`](crate::ProfileReader) and
//! [`read_profile`](crate::read_profile).
//!
//! ```text
//! {"format": "scope-profiler-profile", "format_version": 1,
//!  "exporter": "scope-profiler-rs@<version>", "time_unit": "nanoseconds",
//!  "num_ranks": 1, "event_data_available": true,
//!  "metadata": {<the HDF5 file's /metadata attributes>},
//!  "regions": [{"name", "rank", "source_file", "source_lineno",
//!               "source_text", "tags", "exclusive_total_ns",
//!               "event_metadata", "start_times_ns", "end_times_ns",
//!               "call_ids", "parent_ids", "thread_ids", ["task_ids"]}
//!              or {"name", "rank", "aggregate": {"count", "total",
//!                  "minimum", "maximum", "exclusive"}}, ...],
//!  "threads": {"0": [{"index", "name", "ident", "native_id", "daemon",
//!                     "start_ns", "end_ns", "cpu_ns"}, ...]},
//!  "tasks": {"0": [{"index", "kind", "name", "coro_name", "thread_index",
//!                   "created_ns", "done_ns", "steps", "running_ns",
//!                   "suspended_ns"}, ...]}}
//! ```
//!
//! One object per region row with its columns as arrays, rows in the HDF5
//! file's order. `.json.gz` is the same document gzip-compressed (feature
//! `hdf5`, which brings flate2). JSON is written and parsed by hand
//! (`crate::json`): no JSON crate in the runtime.

mod read;
mod write;

use std::path::Path;

pub(crate) use read::{read, read_profile};
pub use write::{Document, JsonSink, write_aggregate, write_profile};

/// The document's `format`.
pub(crate) const FORMAT_NAME: &str = "scope-profiler-profile";

/// The newest `format_version` read and the one written.
pub(crate) const FORMAT_VERSION: i64 = 1;

/// Whether `path` names a JSON profile (`.json` or `.json.gz`, any case),
/// as the Python package's `json_export.is_json_path`.
pub fn is_json_path(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    name.ends_with(".json") || name.ends_with(".json.gz")
}

/// Whether a JSON profile at `path` is gzip-compressed (`.gz`).
pub fn is_gzip_path(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    name.ends_with(".gz")
}
