//! The one error type of the crate.

use std::path::PathBuf;

/// What can go wrong when a session is set up, checkpointed or finalized.
///
/// Every variant that concerns a file names the path, so a message is
/// actionable without the code that produced it.
///
/// ```
/// use scope_profiler as sp;
/// // No session is active: finalize has nothing to end.
/// let err = sp::finalize().unwrap_err();
/// assert!(matches!(err, sp::Error::NotActive));
/// assert_eq!(err.to_string(), "no profiling session is active; call scope_profiler::setup first");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `setup` was called while a session is active.
    #[error("profiling is already configured; finalize the active session first")]
    AlreadyConfigured,
    /// `finalize` or `checkpoint` was called with no active session.
    #[error("no profiling session is active; call scope_profiler::setup first")]
    NotActive,
    /// The output path cannot be used: its directory is missing, it names a
    /// directory, or it cannot be written.
    #[error("cannot write the profile to {path}: {reason}")]
    InvalidPath {
        /// The path as given in [`Options::file_path`](crate::options::Options::file_path).
        path: PathBuf,
        /// Why it cannot be used.
        reason: String,
    },
    /// A configuration file (`Options::from_toml`)
    /// cannot be read or holds something this crate cannot use: the message
    /// names the line and column, and for an unknown key the closest known one.
    ///
    /// ```
    /// use scope_profiler::{Error, Options};
    /// let err = Options::from_toml("/no/such/profiling.toml").unwrap_err();
    /// assert!(matches!(err, Error::Config { .. }));
    /// assert!(err.to_string().starts_with("profiling configuration /no/such/profiling.toml: "));
    /// ```
    #[error("profiling configuration {path}: {message}")]
    Config {
        /// The configuration file.
        path: PathBuf,
        /// What is wrong, and where (`line L, column C: ...`).
        message: String,
    },
    /// A `SCOPE_PROFILER_*` environment variable read by
    /// [`Options::from_env`](crate::options::Options::from_env) has a value that means
    /// nothing.
    ///
    /// ```
    /// use scope_profiler::Error;
    /// let err = Error::Env {
    ///     variable: "SCOPE_PROFILER_DISABLE".into(),
    ///     value: "maybe".into(),
    ///     message: "expected 1/true/yes/on or 0/false/no/off".into(),
    /// };
    /// assert_eq!(
    ///     err.to_string(),
    ///     "environment variable SCOPE_PROFILER_DISABLE=\"maybe\": expected 1/true/yes/on or 0/false/no/off"
    /// );
    /// ```
    #[error("environment variable {variable}={value:?}: {message}")]
    Env {
        /// The variable's name.
        variable: String,
        /// Its value.
        value: String,
        /// What is wrong with it.
        message: String,
    },
    /// An option value `setup` cannot use (a chunk size of 0, a metadata key
    /// the run description writes itself, ...).
    ///
    /// ```
    /// use scope_profiler::{self as sp, Error, Options};
    /// let err = sp::setup(Options::new().in_memory().chunk_size(0)).unwrap_err();
    /// assert!(matches!(err, Error::InvalidOption { option: "chunk_size", .. }));
    /// ```
    #[error("invalid option {option}: {message}")]
    InvalidOption {
        /// The option (its `Options` method name).
        option: &'static str,
        /// Why the value cannot be used.
        message: String,
    },
    /// An I/O error while writing or publishing the file.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file being written.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The HDF5 library refused an operation on the file.
    #[error("HDF5 error on {path}: {message}")]
    Hdf5 {
        /// The file being written.
        path: PathBuf,
        /// The library's message.
        message: String,
    },
    /// A JSON profile that cannot be read: not JSON, not a profile (no
    /// `"format": "scope-profiler-profile"`), or a field of the wrong type
    /// or length; the message says what and where (the byte offset).
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("sp-doc-bad-{}.json", std::process::id()));
    /// std::fs::write(&path, "{\"format\": \"scope-profiler-profile\", \"regions\": 3}").unwrap();
    /// let err = scope_profiler::read_profile(&path).unwrap_err();
    /// assert!(matches!(err, scope_profiler::Error::Json { .. }));
    /// assert!(err.to_string().contains("regions"), "{err}");
    /// # std::fs::remove_file(&path).unwrap();
    /// ```
    #[error("JSON profile {path}: {message}")]
    Json {
        /// The file being read.
        path: PathBuf,
        /// What is wrong, and where.
        message: String,
    },
    /// A profiling call used where it cannot work, e.g. `pause`
    /// inside an open region or `sample_every``(0, _)`.
    #[error("{0}")]
    Usage(String),
    /// An MPI session's collective `setup`, `checkpoint` or `finalize`
    /// failed on rank `rank`: every rank returns this same error (feature
    /// `mpi`).
    ///
    /// ```
    /// # #[cfg(feature = "mpi")] {
    /// let e = scope_profiler::Error::Rank { rank: 2, message: "disk full".into() };
    /// assert_eq!(e.to_string(), "rank 2 failed: disk full");
    /// # }
    /// ```
    #[cfg(feature = "mpi")]
    #[error("rank {rank} failed: {message}")]
    Rank {
        /// The rank that failed (the lowest, if several did).
        rank: u32,
        /// What failed there.
        message: String,
    },
}

impl Error {
    /// An I/O error at `path`: [`Error::Io`].
    ///
    /// ```
    /// let e = scope_profiler::Error::io("run.h5", std::io::Error::other("disk full"));
    /// assert!(e.to_string().contains("run.h5") && e.to_string().contains("disk full"));
    /// ```
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// An HDF5 file at `path` that cannot be read or written:
    /// [`Error::Hdf5`].
    ///
    /// ```
    /// let e = scope_profiler::Error::hdf5("run.h5", "no /events");
    /// assert!(matches!(e, scope_profiler::Error::Hdf5 { .. }));
    /// assert!(e.to_string().contains("no /events"));
    /// ```
    pub fn hdf5(path: impl Into<PathBuf>, err: impl std::fmt::Display) -> Self {
        Error::Hdf5 {
            path: path.into(),
            message: err.to_string(),
        }
    }

    /// A path that cannot be used, and why: [`Error::InvalidPath`].
    ///
    /// ```
    /// let e = scope_profiler::Error::invalid_path("/no/dir/run.h5", "no such directory");
    /// assert!(e.to_string().contains("/no/dir/run.h5"));
    /// ```
    pub fn invalid_path(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Error::InvalidPath {
            path: path.into(),
            reason: reason.into(),
        }
    }

    /// An output `what` (an HDF5 file, gzip) in a build without the
    /// `hdf5` feature: an [`Error::InvalidPath`] that names the feature.
    ///
    /// ```
    /// let e = scope_profiler::Error::needs_hdf5("run.h5", "an HDF5 file");
    /// assert!(e.to_string().contains("feature `hdf5`"));
    /// ```
    pub fn needs_hdf5(path: impl Into<PathBuf>, what: &str) -> Self {
        Error::invalid_path(
            path,
            format!(
                "writing {what} needs the feature `hdf5` of scope-profiler, which this build \
                 leaves out (it is a default feature); enable it, write a JSON profile \
                 (a path ending in .json), or use Options::in_memory()"
            ),
        )
    }

    /// A JSON profile at `path` that cannot be read, and why:
    /// [`Error::Json`].
    ///
    /// ```
    /// let e = scope_profiler::Error::json("run.json", "unexpected end at byte 12");
    /// assert!(e.to_string().contains("byte 12"));
    /// ```
    pub fn json(path: impl Into<PathBuf>, message: impl std::fmt::Display) -> Self {
        Error::Json {
            path: path.into(),
            message: message.to_string(),
        }
    }
}
