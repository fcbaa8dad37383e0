//! Reading a profile in pieces, whatever its format: the index at once,
//! the events in bounded chunks. An HDF5 file (feature `hdf5`) is read a
//! slice of each column at a time; a JSON profile (`jsonfile`) is parsed
//! whole, as a profile in memory is held.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::jsonfile;
use crate::platform;
use crate::profile::{
    AggregateRow, CallPath, Events, Profile, ReadIndex, RegionCounters, RegionRow, TaskInfo,
    ThreadInfo,
};
use crate::value::Value;

/// A run of consecutive events of one row, starts decoded to absolute ns.
///
/// ```no_run
/// let reader = scope_profiler_reader::ProfileReader::open("profiling_data.h5")?;
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

/// An open profile: the index (names, rows, threads, tasks, metadata) read
/// at once, the events handed out in bounded chunks.
///
/// Opens the HDF5 files [`read_profile`] reads (schema 2 and 3, files of
/// this crate and of the Python package with tags and `event_metadata`;
/// feature `hdf5`), aggregate files, whose rows come in
/// [`ProfileReader::aggregates`] instead of [`ProfileReader::rows`], and
/// JSON profiles (`.json`, `.json.gz`: this crate's and the Python
/// package's `scope-profiler export json`), in any build. The format is
/// told by the file's first bytes, not its name. An HDF5 file's event
/// columns are read on demand, a slice at a time, so a file of hundreds of
/// millions of calls is walked in little memory; a JSON profile is parsed
/// whole (its events held in memory, 48 bytes a call).
///
/// # Untrusted files
///
/// What the reader promises for any file, however made (truncated,
/// bit-flipped, crafted): an [`Error`] naming the file and what is wrong,
/// never a panic, for everything the reader itself parses and checks.
/// Every dataset is checked before it is read: one dimension, an element
/// type that converts safely (standard integers and IEEE floats; the
/// summary compound's exact member names, offsets and sizes), no more
/// elements than about 1100 times the bytes it stores (deflate's best
/// ratio) plus 1 MiB, chunks of at most 64 MiB, and a compressed chunk
/// that inflates past its chunk is an error; so no read allocates more
/// than a small multiple of the file's size. Index rows must lie within
/// the events without overlapping, and name regions of the file; call
/// paths name earlier parents only. Ids inside the events (call, parent,
/// thread and task ids) are not indexes: any values are read as they are
/// (an export nests calls by matching parent ids against open calls, so
/// forward, self or cyclic parents give a flatter tree, not a loop).
/// Sums of durations wrap or saturate rather than overflow. Strings are
/// bounded per kind ([`limits`](crate::limits): 64 KiB for region, thread
/// and task names, source files, tags, counter names and metadata keys;
/// 1 MiB for source texts and metadata values; 64 MiB for a row's event
/// metadata): a longer one is an error naming its dataset and the limit.
/// Every export writes at most
/// [`ProfileReader::output_budget`] bytes (64
/// times [`ProfileReader::input_bytes`] plus 256 MiB), or stops with an
/// [`Error::Usage`] saying so. A JSON
/// profile is parsed by a strict, depth-bounded parser; a `.json.gz` is
/// inflated up to 64 times its size plus 64 MiB, no further.
///
/// The HDF5 file's own structures (superblock, object headers, B-trees,
/// heaps) are parsed in pure Rust (the `rust-hdf5` crate, then this
/// crate's checks): a corrupt file is an error, not a crash. The C library
/// is compiled only with the MPI writers (feature `mpi`), whose reader
/// parses through it and can crash on a crafted file; a program built so
/// that opens files it does not trust should read them in a child process,
/// as `scope-prof` does.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// use scope_profiler_reader::{ProfileReader};
/// # let dir = std::env::temp_dir().join(format!("sp-reader-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("reader.json");
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
    index: ReadIndex,
    source: Source,
    progress: Option<Box<dyn Fn(u64)>>,
    /// The file's size when opened (0 for a profile in memory).
    file_size: u64,
}

/// Where the events are.
enum Source {
    /// The event datasets of an HDF5 file.
    #[cfg(feature = "hdf5")]
    Hdf5(Box<crate::hdf5::Columns>),
    /// Every event in memory (a JSON profile, a `Profile`).
    Memory { events: Events, has_parents: bool },
}

impl std::fmt::Debug for ProfileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProfileReader")
            .field("path", &self.path)
            .field("schema", &self.index.schema)
            .field("regions", &self.index.region_names.len())
            .field("rows", &self.index.rows.len())
            .field("events", &self.index.event_count)
            .finish_non_exhaustive()
    }
}

/// The format of a profile file, from its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    Hdf5,
    Json,
    /// Neither signature: taken for HDF5 where it can be read.
    Unknown,
}

/// What `path` holds, from its first bytes (as the Python package's
/// `profile_io.sniff_profile_format`): the HDF5 signature, gzip (a
/// `.json.gz`) or `{` after whitespace; anything else is read as HDF5
/// where the build can (whose reader then names what is wrong).
pub(crate) fn sniff(path: &Path) -> Result<Format, Error> {
    use std::io::Read;
    let mut head = [0u8; 64];
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut len = 0;
    while len < head.len() {
        match file.read(&mut head[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    let head = &head[..len];
    if head.starts_with(b"\x89HDF\r\n\x1a\n") {
        return Ok(Format::Hdf5);
    }
    if head.starts_with(&[0x1f, 0x8b]) {
        return Ok(Format::Json);
    }
    let text = head.trim_ascii_start();
    if text.starts_with(b"{") || (text.is_empty() && len > 0) {
        return Ok(Format::Json);
    }
    Ok(Format::Unknown)
}

/// An HDF5 file (or no profile at all) in a build without the feature.
#[cfg(not(feature = "hdf5"))]
fn hdf5_needed(path: &Path, format: Format) -> Error {
    let message = match format {
        Format::Hdf5 => {
            "an HDF5 file: reading it needs the feature `hdf5` of scope-profiler \
             (or of scope-profiler-reader), which this build leaves out (it is a \
             default feature)"
        }
        _ => "not a profile: neither a JSON profile (it does not start with '{') nor an HDF5 file",
    };
    Error::json(path, message)
}

/// Reads a whole profile file (HDF5 or JSON, told by its first bytes) into
/// a [`Profile`].
///
/// # Errors
///
/// [`Error::Io`] if the file cannot be read; [`Error::Hdf5`] or
/// [`Error::Json`] naming `path` if it is not a profile (or, without the
/// feature `hdf5`, is an HDF5 file); an aggregate profile (totals, no
/// events) is an `Err` too: open it with [`ProfileReader`].
/// A string of an HDF5 file longer than its kind's limit
/// ([`limits`](crate::limits): 64 KiB for region, thread and task names,
/// source files, tags and metadata keys; 1 MiB for source texts and
/// metadata values; 64 MiB for a row's event metadata) is an
/// [`Error::Hdf5`] naming the dataset and the limit.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// let path = std::env::temp_dir().join(format!("sp-read-doc-{}.json", std::process::id()));
/// sp::setup(Options::new().file_path(&path).verbose(false))?;
/// sp::region("a").run(|| ());
/// sp::finalize()?;
/// let profile = sp::read_profile(&path)?;
/// assert_eq!((profile.region_names.len(), profile.events.len()), (1, 1));
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), sp::Error>(())
/// ```
pub fn read_profile(path: impl AsRef<Path>) -> Result<Profile, Error> {
    let path = path.as_ref();
    match sniff(path)? {
        Format::Json => jsonfile::read_profile(path),
        #[cfg(feature = "hdf5")]
        Format::Hdf5 | Format::Unknown => crate::hdf5::read_profile(path),
        #[cfg(not(feature = "hdf5"))]
        format => Err(hdf5_needed(path, format)),
    }
}

impl ProfileReader {
    /// Caps this process's address space at `bytes` (Linux: `RLIMIT_AS`, never
    /// above the hard limit), for a process that reads profiles it does not
    /// trust. [`ProfileReader`] checks every size it reads before allocating;
    /// the cap is a second guard, for an allocation no check bounded (and, in
    /// a build with the feature `mpi`, whose reader is the HDF5 C library,
    /// which allocates on the word of a file's metadata: 2-3 GB for a few
    /// flipped bits, an error under the cap): a Rust allocation past it aborts
    /// instead of taking the machine's memory. The limit is the whole process's: set
    /// it in a process that only reads (`scope-prof` reads in a child process
    /// under 4 GiB plus 64 times the size of the files it opens).
    ///
    /// # Errors
    /// The OS's error; `ErrorKind::Unsupported` where the process's address
    /// space cannot be limited (every OS but Linux, and portable builds).
    ///
    /// ```no_run
    /// // In a process that reads files people sent: at most 8 GiB.
    /// scope_profiler_reader::ProfileReader::limit_address_space(8 << 30)?;
    /// let reader = scope_profiler_reader::ProfileReader::open("mailed.h5");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn limit_address_space(bytes: u64) -> std::io::Result<()> {
        platform::limit_address_space(bytes)
    }

    /// Opens `path` and reads its index (an HDF5 file's events stay in the
    /// file). The format is told by the file's first bytes.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if the file cannot be read; [`Error::Hdf5`] naming
    /// `path` when it is not an HDF5 file, not a profile (no
    /// `scope_profiler_schema` 2 or 3), is missing a required dataset, or
    /// its index points outside the event columns, or a string is longer
    /// than its kind's limit ([`limits`](crate::limits), see "Untrusted
    /// files" above); [`Error::Json`] naming
    /// `path` and what is wrong for a malformed JSON profile (or, without
    /// the feature `hdf5`, an HDF5 file).
    ///
    /// ```
    /// let err = scope_profiler_reader::ProfileReader::open("/no/such/file.h5").unwrap_err();
    /// assert!(err.to_string().contains("/no/such/file.h5"));
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        match sniff(path)? {
            Format::Json => {
                let (index, events, has_parents) = jsonfile::read(path)?;
                Ok(ProfileReader {
                    path: path.to_path_buf(),
                    index,
                    source: Source::Memory {
                        events,
                        has_parents,
                    },
                    progress: None,
                    file_size: std::fs::metadata(path).map_or(0, |m| m.len()),
                })
            }
            #[cfg(feature = "hdf5")]
            Format::Hdf5 | Format::Unknown => {
                let (index, columns) = crate::hdf5::open_reader(path)?;
                Ok(ProfileReader {
                    path: path.to_path_buf(),
                    index,
                    source: Source::Hdf5(Box::new(columns)),
                    progress: None,
                    file_size: std::fs::metadata(path).map_or(0, |m| m.len()),
                })
            }
            #[cfg(not(feature = "hdf5"))]
            format => Err(hdf5_needed(path, format)),
        }
    }

    /// A reader of a profile in memory (an in-memory session's, say), so
    /// that the exports work on it as on a file. Rows whose events lie
    /// outside `profile.events` are an [`Error::Usage`].
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// use scope_profiler_reader::{export, ProfileReader};
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// sp::region("outer").run(|| sp::region("inner").run(|| ()));
    /// let profile = sp::finalize()?.into_profile().unwrap();
    /// let reader = ProfileReader::from_profile(profile)?;
    /// let mut folded = Vec::new();
    /// reader.folded(&mut folded)?;
    /// assert!(String::from_utf8(folded).unwrap().contains("outer;inner "));
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn from_profile(profile: Profile) -> Result<Self, Error> {
        let n = profile.events.len();
        let e = &profile.events;
        let same = [&e.durations, &e.call_ids, &e.parent_ids, &e.thread_ids]
            .iter()
            .all(|c| c.len() == n)
            && e.task_ids.as_ref().is_none_or(|t| t.len() == n);
        if !same {
            return Err(Error::Usage(
                "the profile's event columns differ in length".into(),
            ));
        }
        let names = profile.region_names.len();
        for (i, row) in profile.rows.iter().enumerate() {
            let end = row.event_offset.checked_add(row.event_count);
            if end.is_none_or(|end| end > n as u64) || row.region_id as usize >= names {
                return Err(Error::Usage(format!(
                    "the profile's row {i} lies outside its events or names"
                )));
            }
        }
        let tags = profile
            .rows
            .iter()
            .map(|r| crate::sink::tags_json(&r.tags))
            .collect();
        let index = ReadIndex {
            schema: 3,
            region_names: profile.region_names,
            rows: profile.rows,
            has_summaries: true,
            tags,
            aggregates: Vec::new(),
            metadata: profile.metadata,
            threads: profile.threads,
            tasks: profile.tasks,
            event_count: n as u64,
            call_paths: None,
            counters: profile.counters,
        };
        Ok(ProfileReader {
            path: PathBuf::new(),
            index,
            source: Source::Memory {
                events: profile.events,
                has_parents: true,
            },
            progress: None,
            file_size: 0,
        })
    }

    /// The file's path (empty for [`ProfileReader::from_profile`]).
    ///
    /// ```no_run
    /// let reader = scope_profiler_reader::ProfileReader::open("a.h5")?;
    /// assert_eq!(reader.path(), std::path::Path::new("a.h5"));
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The `scope_profiler_schema` version, 2 or 3 (3 for a JSON profile
    /// and a profile in memory: the layout of their data).
    ///
    /// ```no_run
    /// let reader = scope_profiler_reader::ProfileReader::open("a.h5")?;
    /// assert!((2..=3).contains(&reader.schema()));
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn schema(&self) -> i64 {
        self.index.schema
    }

    /// `/region_table/names`.
    ///
    /// ```no_run
    /// let reader = scope_profiler_reader::ProfileReader::open("a.h5")?;
    /// for name in reader.region_names() { println!("{name}"); }
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn region_names(&self) -> &[String] {
        &self.index.region_names
    }

    /// `/rank_region_index` rows of a columnar file (empty for an aggregate
    /// file). Their `stats` are zero unless [`Self::has_summaries`].
    ///
    /// ```no_run
    /// let reader = scope_profiler_reader::ProfileReader::open("a.h5")?;
    /// let calls: u64 = reader.rows().iter().map(|r| r.event_count).sum();
    /// assert_eq!(calls, reader.event_count());
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn rows(&self) -> &[RegionRow] {
        &self.index.rows
    }

    /// Whether the rows' `stats` come from the file's `summary_statistics`.
    ///
    /// ```no_run
    /// let reader = scope_profiler_reader::ProfileReader::open("a.h5")?;
    /// println!("{}", reader.has_summaries());
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn has_summaries(&self) -> bool {
        self.index.has_summaries
    }

    /// The `tags` of each row as stored: a JSON list of strings, `"[]"`
    /// when the file has none.
    ///
    /// ```no_run
    /// let reader = scope_profiler_reader::ProfileReader::open("a.h5")?;
    /// assert_eq!(reader.row_tags().len(), reader.rows().len());
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn row_tags(&self) -> &[String] {
        &self.index.tags
    }

    /// Per region (and MPI rank), the counters of a session that counted
    /// allocations or perf events (`rank<N>/perf_events`: ours, or the
    /// Python package's perf events, whose `own` are zeros); empty if none.
    ///
    /// ```no_run
    /// let reader = scope_profiler_reader::ProfileReader::open("a.h5")?;
    /// for c in reader.counters() {
    ///     println!("{}: {:?}", c.name, c.get("alloc-bytes"));
    /// }
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn counters(&self) -> &[RegionCounters] {
        &self.index.counters
    }

    /// The rows of an aggregate file; empty for a columnar one.
    ///
    /// ```no_run
    /// let reader = scope_profiler_reader::ProfileReader::open("a.h5")?;
    /// assert!(reader.is_aggregate() == !reader.aggregates().is_empty() || reader.rows().is_empty());
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn aggregates(&self) -> &[AggregateRow] {
        &self.index.aggregates
    }

    /// True for an aggregate file (no per-call events).
    ///
    /// ```no_run
    /// let reader = scope_profiler_reader::ProfileReader::open("a.h5")?;
    /// if reader.is_aggregate() { println!("totals only"); }
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn is_aggregate(&self) -> bool {
        !self.index.aggregates.is_empty()
    }

    /// `/metadata` attributes (integer and string ones).
    ///
    /// ```no_run
    /// let reader = scope_profiler_reader::ProfileReader::open("a.h5")?;
    /// for (key, value) in reader.metadata() { println!("{key} = {value:?}"); }
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn metadata(&self) -> &[(String, Value)] {
        &self.index.metadata
    }

    /// `/thread_table`; empty without it.
    ///
    /// ```no_run
    /// let reader = scope_profiler_reader::ProfileReader::open("a.h5")?;
    /// for t in reader.threads() { println!("{} {}", t.index, t.name); }
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn threads(&self) -> &[ThreadInfo] {
        &self.index.threads
    }

    /// `/task_table`; empty without it.
    ///
    /// ```no_run
    /// let reader = scope_profiler_reader::ProfileReader::open("a.h5")?;
    /// for t in reader.tasks() { println!("{} {}", t.index, t.name); }
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn tasks(&self) -> &[TaskInfo] {
        &self.index.tasks
    }

    /// The call paths of every lane that `finalize` stored beside the
    /// events (files of this crate since 0.1, with at most a few thousand
    /// paths); `None` for other files. A call tree built from them needs no
    /// pass over the events ([`ProfileReader::call_tree`]
    /// uses them).
    ///
    /// ```no_run
    /// let reader = scope_profiler_reader::ProfileReader::open("profiling_data.h5")?;
    /// if let Some(paths) = reader.call_paths() {
    ///     let calls: u64 = paths.iter().filter(|p| p.parent.is_none()).map(|p| p.num_calls).sum();
    ///     println!("{calls} calls at the lanes' roots");
    /// }
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn call_paths(&self) -> Option<&[CallPath]> {
        self.index.call_paths.as_deref()
    }

    /// Number of events (calls) in `/events`.
    ///
    /// ```no_run
    /// let reader = scope_profiler_reader::ProfileReader::open("a.h5")?;
    /// println!("{} calls", reader.event_count());
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn event_count(&self) -> u64 {
        self.index.event_count
    }

    /// The bytes of the profile as read, which bound what an export of it
    /// may write ([`ProfileReader::output_budget`]):
    /// the file's size, plus 48 bytes per event (its six columns decoded),
    /// plus the bytes of the region names (for a profile in memory, which
    /// has no file).
    ///
    /// ```no_run
    /// let reader = scope_profiler_reader::ProfileReader::open("a.h5")?;
    /// assert!(reader.input_bytes() >= 48 * reader.event_count());
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn input_bytes(&self) -> u64 {
        let names: usize = self.index.region_names.iter().map(String::len).sum();
        self.file_size
            .saturating_add(self.index.event_count.saturating_mul(48))
            .saturating_add(names as u64)
    }

    /// Whether the file has `call_ids` and `parent_ids` (schema 2 files do
    /// not: then the call tree follows from time containment).
    ///
    /// ```no_run
    /// let reader = scope_profiler_reader::ProfileReader::open("a.h5")?;
    /// println!("{}", reader.has_parents());
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn has_parents(&self) -> bool {
        match &self.source {
            #[cfg(feature = "hdf5")]
            Source::Hdf5(columns) => columns.has_parents(),
            Source::Memory { has_parents, .. } => *has_parents,
        }
    }

    /// Calls `progress` with the number of events read so far after each
    /// chunk that [`Self::chunks`] reads (for a progress bar).
    ///
    /// ```no_run
    /// let mut reader = scope_profiler_reader::ProfileReader::open("a.h5")?;
    /// reader.set_progress(|n| eprintln!("{n} events read"));
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn set_progress(&mut self, progress: impl Fn(u64) + 'static) {
        self.progress = Some(Box::new(progress));
    }

    /// Every event, in file order (rows by ascending offset), in chunks of
    /// at most `max_len` events of one row each; starts decoded to absolute
    /// ns. Memory is bounded by one chunk (and, for a JSON profile, the
    /// events it holds).
    ///
    /// ```no_run
    /// let reader = scope_profiler_reader::ProfileReader::open("a.h5")?;
    /// let mut total = 0i64;
    /// for chunk in reader.chunks(1 << 20) {
    ///     total += chunk?.events.durations.iter().sum::<i64>();
    /// }
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn chunks(
        &self,
        max_len: usize,
    ) -> impl Iterator<Item = Result<EventChunk, Error>> + std::fmt::Debug + '_ {
        let rows = &self.index.rows;
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by_key(|&i| rows[i].event_offset);
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

    /// The events `within..within + len` of row `row` (positions within
    /// the row), starts decoded given the start of the event before them
    /// (`previous_start`, ignored at the row's first event).
    fn read_row_part(
        &self,
        row: usize,
        within: u64,
        len: usize,
        previous_start: i64,
    ) -> Result<Events, Error> {
        let row = &self.index.rows[row];
        match &self.source {
            #[cfg(feature = "hdf5")]
            Source::Hdf5(columns) => columns.read_row(&self.path, row, within, len, previous_start),
            Source::Memory { events, .. } => {
                let _ = previous_start;
                let from =
                    usize::try_from(row.event_offset.saturating_add(within)).unwrap_or(usize::MAX);
                let range = from..from.saturating_add(len);
                let part = |c: &Vec<i64>| c.get(range.clone()).map(<[i64]>::to_vec);
                let missing = || Error::Usage(format!("events {range:?} are not in the profile"));
                Ok({
                    let mut made = Events::default();
                    made.start_ns = part(&events.start_ns).ok_or_else(missing)?;
                    made.durations = part(&events.durations).ok_or_else(missing)?;
                    made.call_ids = part(&events.call_ids).ok_or_else(missing)?;
                    made.parent_ids = part(&events.parent_ids).ok_or_else(missing)?;
                    made.thread_ids = part(&events.thread_ids).ok_or_else(missing)?;
                    made.task_ids = match &events.task_ids {
                        Some(t) => Some(part(t).ok_or_else(missing)?),
                        None => None,
                    };
                    made
                })
            }
        }
    }
}

/// The iterator of [`ProfileReader::chunks`].
struct EventChunks<'r> {
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
    type Item = Result<EventChunk, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let &row = self.order.get(self.next_row)?;
            let count = self.reader.index.rows[row].event_count;
            if self.within >= count {
                self.next_row += 1;
                self.within = 0;
                continue;
            }
            let len = (count - self.within).min(self.max_len as u64) as usize;
            let within = self.within;
            let events = match self.reader.read_row_part(row, within, len, self.last_start) {
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
                offset: self.reader.index.rows[row].event_offset + within,
                events,
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compressed file's columns come back equal through the public
    /// reader whole and in small pieces (read in parallel, one column per
    /// thread, each chunk decoded by `scope-profiler-hdf5`'s reader).
    #[cfg(feature = "hdf5")]
    #[test]
    fn compressed_columns_read_in_pieces_equal_the_whole() {
        use crate::options::Compression;
        let dir = std::env::temp_dir().join(format!("sp-reader-pieces-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.h5");
        let n = 200_003; // several chunks and a partial last one
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
            p.events
                .thread_ids
                .push(if i < 140_000 { 3 } else { i % 5 - 2 });
        }
        crate::hdf5::write_profile(&p, &path, Compression::Gzip(4)).unwrap();
        let reader = ProfileReader::open(&path).unwrap();
        let whole: Vec<i64> = reader
            .chunks(n)
            .flat_map(|chunk| chunk.unwrap().events.durations)
            .collect();
        let pieces: Vec<i64> = reader
            .chunks(1_000)
            .flat_map(|chunk| chunk.unwrap().events.durations)
            .collect();
        assert_eq!(whole, p.events.durations);
        assert_eq!(pieces, whole);
        let threads: Vec<i64> = reader
            .chunks(n)
            .flat_map(|chunk| chunk.unwrap().events.thread_ids)
            .collect();
        assert_eq!(threads, p.events.thread_ids);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Files that are no profile, or an HDF5 file in a build without
    /// `hdf5`, are errors naming the file, never panics.
    #[test]
    fn foreign_files_are_errors_naming_them() {
        let dir = std::env::temp_dir().join(format!("sp-reader-foreign-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cases: [(&str, &[u8]); 5] = [
            ("sig.h5", b"\x89HDF\r\n\x1a\n\0\0\0\0"),
            ("text.txt", b"hello"),
            ("empty.json", b""),
            ("blank.json", b"   \n"),
            ("gz.json.gz", b"\x1f\x8b\x08\0\0\0"),
        ];
        for (name, bytes) in cases {
            let path = dir.join(name);
            std::fs::write(&path, bytes).unwrap();
            let err = ProfileReader::open(&path).unwrap_err().to_string();
            assert!(err.contains(name), "{name}: {err}");
            assert!(read_profile(&path).is_err(), "{name}");
            #[cfg(not(feature = "hdf5"))]
            if name == "sig.h5" || name.ends_with(".gz") {
                assert!(err.contains("feature `hdf5`"), "{name}: {err}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
