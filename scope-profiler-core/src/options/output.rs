//! Where a session writes and how: the output (a file or memory), its
//! label, the compression and chunking of the event columns, and the
//! summary printed at `finalize`.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use super::Options;

/// How the event columns are compressed in the file.
///
/// ```
/// use scope_profiler::Compression;
/// assert_eq!(Compression::default(), Compression::Auto);
/// assert!(!Compression::Auto.applies_to(16_383));
/// assert!(Compression::Auto.applies_to(16_384));
/// assert_eq!(Compression::Gzip(4).level_for(10), Some(4));
/// assert_eq!(Compression::Auto.level_for(1 << 20), Some(Compression::AUTO_LEVEL));
/// assert_eq!(Compression::None.level_for(1 << 30), None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Compression {
    /// Shuffle + deflate at [`Compression::AUTO_LEVEL`] once the file has at
    /// least [`Compression::AUTO_THRESHOLD`] events, as the Python package
    /// does (which deflates at level 4 with zlib).
    #[default]
    Auto,
    /// No filter.
    None,
    /// Shuffle + deflate at this level (0-9), whatever the size.
    Gzip(u8),
}

impl Compression {
    /// Event count from which [`Compression::Auto`] compresses.
    ///
    /// ```
    /// use scope_profiler::Compression;
    /// assert!(Compression::Auto.applies_to(Compression::AUTO_THRESHOLD));
    /// assert!(!Compression::Auto.applies_to(Compression::AUTO_THRESHOLD - 1));
    /// ```
    pub const AUTO_THRESHOLD: usize = 16_384;

    /// The deflate level of [`Compression::Auto`]. This crate deflates with
    /// zlib-rs, whose level 2 makes event columns as small as its level 4
    /// (1.14 and 1.18 bytes per event on bench-compare's simulation) at 1.4x
    /// the speed, and within 3% of the size libdeflate's level 4 made at 2x
    /// its speed.
    ///
    /// ```
    /// use scope_profiler::Compression;
    /// assert_eq!(Compression::Auto.level_for(1 << 20), Some(Compression::AUTO_LEVEL));
    /// ```
    pub const AUTO_LEVEL: u8 = 2;

    /// Whether a file with `events` events is compressed.
    ///
    /// ```
    /// use scope_profiler::Compression;
    /// assert!(Compression::Gzip(1).applies_to(1) && !Compression::None.applies_to(1 << 30));
    /// ```
    pub fn applies_to(self, events: usize) -> bool {
        self.level_for(events).is_some()
    }

    /// The deflate level used for a file with `events` events, if any.
    ///
    /// ```
    /// use scope_profiler::Compression;
    /// assert_eq!(Compression::Gzip(6).level_for(10), Some(6));
    /// assert_eq!(Compression::Auto.level_for(10), None); // below AUTO_THRESHOLD
    /// ```
    pub fn level_for(self, events: usize) -> Option<u8> {
        match self {
            Compression::Auto if events >= Self::AUTO_THRESHOLD => Some(Self::AUTO_LEVEL),
            Compression::Auto | Compression::None => None,
            Compression::Gzip(level) => Some(level.min(9)),
        }
    }
}

/// Where `finalize` puts the results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    File(PathBuf),
    Memory,
}

impl Options {
    /// Write the profile to this path: the Python package's JSON profile
    /// for a name ending in `.json` (in any build) or `.json.gz` (gzip:
    /// feature `hdf5`), else an HDF5 file (feature `hdf5`; in a build
    /// without it, such a path is an `Err` at `setup` naming the feature).
    ///
    /// ```
    /// let o = scope_profiler::Options::new().file_path("out.h5");
    /// assert_eq!(scope_profiler_core::internal::options::read::file_path(&o), Some(std::path::Path::new("out.h5")));
    /// let o = scope_profiler::Options::new().file_path("out.json"); // any build
    /// assert_eq!(scope_profiler_core::internal::options::read::file_path(&o), Some(std::path::Path::new("out.json")));
    /// ```
    pub fn file_path(mut self, path: impl AsRef<Path>) -> Self {
        self.output = Output::File(path.as_ref().to_path_buf());
        self
    }

    /// Write no file: `finalize` hands the results back in memory.
    ///
    /// ```
    /// let o = scope_profiler::Options::new().in_memory();
    /// assert!(scope_profiler_core::internal::options::read::file_path(&o).is_none());
    /// ```
    pub fn in_memory(mut self) -> Self {
        self.output = Output::Memory;
        self
    }

    /// Sets where the session writes (`finalize_to`).
    #[doc(hidden)]
    pub fn set_output_target(&mut self, output: Output) {
        self.output = output;
    }

    /// Print the summary to stderr at `finalize` (default `true`).
    ///
    /// ```
    /// assert!(!scope_profiler_core::internal::options::read::verbose(&scope_profiler::Options::new().verbose(false)));
    /// ```
    pub fn verbose(mut self, verbose: bool) -> Self {
        self.verbose = verbose;
        self
    }

    /// The run's label, stored as `/metadata/label` (default: the file stem).
    ///
    /// ```
    /// assert_eq!(scope_profiler_core::internal::options::read::label(&scope_profiler::Options::new().label("run-7")), "run-7");
    /// ```
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Compression of the event columns (default [`Compression::Auto`]).
    ///
    /// ```
    /// use scope_profiler::{Compression, Options};
    /// let o = Options::new().compression(Compression::None);
    /// assert_eq!(scope_profiler_core::internal::options::read::compression(&o), Compression::None);
    /// ```
    pub fn compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }

    /// Events per chunk of the event columns (the Python package's
    /// `hdf5_chunk_size`), compressed or not: an uncompressed file is then
    /// chunked too, so readers can read parts of it. Default: contiguous
    /// columns when uncompressed, chunks of up to 65,536 events when
    /// compressed. A chunk never exceeds the column's length. 0, or more
    /// than 536,870,911 (a chunk of 4 GiB, HDF5's limit), is an
    /// [`Error::InvalidOption`](crate::Error::InvalidOption) at `setup`.
    ///
    /// ```
    /// let o = scope_profiler::Options::new().chunk_size(4096);
    /// assert_eq!(scope_profiler_core::internal::options::read::chunk_size(&o), Some(4096));
    /// ```
    pub fn chunk_size(mut self, events: usize) -> Self {
        self.chunk_size = Some(events);
        self
    }
}
