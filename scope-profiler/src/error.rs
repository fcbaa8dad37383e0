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
        /// The path as given in [`Options::file_path`](crate::Options::file_path).
        path: PathBuf,
        /// Why it cannot be used.
        reason: String,
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
    /// A profiling call used where it cannot work, e.g. [`pause`](crate::pause)
    /// inside an open region or [`sample_every`](crate::sample_every)`(0, _)`.
    #[error("{0}")]
    Usage(String),
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn hdf5(path: impl Into<PathBuf>, err: impl std::fmt::Display) -> Self {
        Error::Hdf5 {
            path: path.into(),
            message: err.to_string(),
        }
    }

    pub(crate) fn invalid_path(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Error::InvalidPath {
            path: path.into(),
            reason: reason.into(),
        }
    }
}
