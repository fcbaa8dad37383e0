//! The longest strings a reader accepts from a file, in bytes (UTF-8, as
//! stored), by kind. A longer one is an error naming its dataset (or
//! attribute) and the limit: a hostile file must not make every event of
//! an export repeat a name of megabytes (a 12.8 MB file whose region names
//! were 4 MiB each made a Chrome trace of 62 GB). The limits are far past
//! what a program records: Rust's longest generic paths are a few KiB.

/// Region names (`/region_table/names`), thread and task names, task kinds
/// and coroutine names, counter and counter-event names, metadata keys:
/// 64 KiB.
///
/// ```
/// assert_eq!(scope_profiler_reader::limits::NAME, 64 << 10);
/// ```
pub const NAME: usize = 64 << 10;
/// Source file paths (`rank_region_index/source_files`): 64 KiB.
///
/// ```
/// assert_eq!(scope_profiler_reader::limits::SOURCE_FILE, 64 << 10);
/// ```
pub const SOURCE_FILE: usize = 64 << 10;
/// A row's tags, stored as one JSON list (`rank_region_index/tags`):
/// 64 KiB.
///
/// ```
/// assert_eq!(scope_profiler_reader::limits::TAGS, 64 << 10);
/// ```
pub const TAGS: usize = 64 << 10;
/// The captured source of a region (`rank_region_index/source_texts`):
/// 1 MiB.
///
/// ```
/// assert_eq!(scope_profiler_reader::limits::SOURCE_TEXT, 1 << 20);
/// ```
pub const SOURCE_TEXT: usize = 1 << 20;
/// A string value of `/metadata`: 1 MiB.
///
/// ```
/// assert_eq!(scope_profiler_reader::limits::METADATA_VALUE, 1 << 20);
/// ```
pub const METADATA_VALUE: usize = 1 << 20;
/// A row's per-call metadata, one JSON list of an object per call
/// (`rank_region_index/event_metadata`): 64 MiB.
///
/// ```
/// assert_eq!(scope_profiler_reader::limits::EVENT_METADATA, 64 << 20);
/// ```
pub const EVENT_METADATA: usize = 64 << 20;

/// The limit of the string dataset `name` (of the index or a table).
pub(crate) fn of_dataset(name: &str) -> usize {
    match name {
        "source_files" => SOURCE_FILE,
        "tags" => TAGS,
        "source_texts" => SOURCE_TEXT,
        "event_metadata" => EVENT_METADATA,
        _ => NAME,
    }
}

/// Fails if a string of `values` is longer than `limit` bytes: the error
/// names `what` (a dataset or attribute), the string and the limit.
pub(crate) fn check<S: AsRef<str>>(what: &str, values: &[S], limit: usize) -> Result<(), String> {
    match values.iter().position(|s| s.as_ref().len() > limit) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{what}: string {i} is {} bytes long, past the limit of {limit} bytes ({} KiB) \
             for such strings",
            values[i].as_ref().len(),
            limit >> 10
        )),
    }
}
