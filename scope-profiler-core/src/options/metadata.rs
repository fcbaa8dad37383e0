//! The file's `/metadata`: how much of the run's environment it
//! describes, and the user's own entries.

#![forbid(unsafe_code)]

use super::Options;
use crate::value::Value;

/// How much of the run's environment the file's `/metadata` describes (the
/// Python package's `metadata_detail`): set with [`Options::full_metadata`],
/// or the TOML key `metadata_detail`.
///
/// Both levels write the label, `timestamp`, `platform`, `chip_information`,
/// core and thread counts, `mpi_size`, `num_nodes`, `start_time_ns`,
/// `finalize_time_ns`, `source_language` and the crate version.
///
/// ```
/// use scope_profiler_core::internal::options::MetadataDetail;
/// assert_eq!(MetadataDetail::default(), MetadataDetail::Minimal);
/// assert_eq!(MetadataDetail::Full.as_str(), "full");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MetadataDetail {
    /// Nothing that names a person, a machine, a directory or a job: no host
    /// name, user, working directory or environment variables, and region
    /// source files relative to the working directory (outside it: from
    /// the crate's directory in Cargo's registry or git checkouts, else the
    /// file name alone), never absolute.
    #[default]
    Minimal,
    /// Also `hostname`, `uname`, `working_directory`, `user`, the
    /// environment variables the Python package records (`PATH`,
    /// `LD_LIBRARY_PATH`, `VIRTUAL_ENV`, `LOADEDMODULES`, ..., every
    /// `SLURM_*`/`SLURMD_*`), the build (`rustc_version`, `target`,
    /// `build_profile`, `scope_profiler_features`) and source files as
    /// compiled (absolute for crates outside the workspace).
    Full,
}

impl MetadataDetail {
    /// The Python package's name of the level: `"minimal"` or `"full"`.
    ///
    /// ```
    /// use scope_profiler_core::internal::options::MetadataDetail;
    /// assert_eq!(MetadataDetail::Minimal.as_str(), "minimal");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            MetadataDetail::Minimal => "minimal",
            MetadataDetail::Full => "full",
        }
    }
}

impl Options {
    /// How much of the run's environment `/metadata` describes: the Python
    /// package's `metadata_detail`, `"minimal"` (`false`, the default:
    /// nothing that names a person, a machine, a directory or a job) or
    /// `"full"` (`true`: also `hostname`, `uname`, `working_directory`,
    /// `user`, the environment variables the Python package records
    /// (`PATH`, `LD_LIBRARY_PATH`, `VIRTUAL_ENV`, `LOADEDMODULES`, ...,
    /// every `SLURM_*`/`SLURMD_*`), the build (`rustc_version`, `target`,
    /// `build_profile`, `scope_profiler_features`) and source files as
    /// compiled). Both levels write the label, `timestamp`, `platform`,
    /// `chip_information`, core and thread counts, `mpi_size`,
    /// `num_nodes`, `start_time_ns`, `finalize_time_ns`, `source_language`
    /// and the crate version. The TOML key `metadata_detail` takes the
    /// Python package's words.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// let run = sp::setup(Options::new().in_memory().verbose(false).full_metadata(true))?;
    /// let profile = run.finalize()?.into_profile().unwrap();
    /// assert_eq!(profile.metadata_value("metadata_detail").unwrap().to_json(), "\"full\"");
    /// assert!(profile.metadata_value("hostname").is_some());
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn full_metadata(mut self, on: bool) -> Self {
        self.metadata_detail = if on {
            MetadataDetail::Full
        } else {
            MetadataDetail::Minimal
        };
        self
    }

    /// Adds a `/metadata` attribute of the user's, written under `key` as it
    /// is (as the Python package writes the entries of its metadata dict),
    /// after the run description; the same key again replaces the value. A
    /// key the run description writes itself (`label`, `timestamp`,
    /// `hostname`, `PATH`, `SLURM_*`, ...) is an
    /// [`Error::InvalidOption`](crate::Error::InvalidOption) at `setup`.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Value, Options};
    /// let run = sp::setup(Options::new().in_memory().verbose(false)
    ///     .metadata("experiment", "mesh-refinement")
    ///     .metadata("mesh_cells", 4096))?;
    /// let profile = run.finalize()?.into_profile().unwrap();
    /// assert_eq!(profile.metadata_value("experiment"), Some(&Value::Str("mesh-refinement".into())));
    /// assert_eq!(profile.metadata_value("mesh_cells"), Some(&Value::Int(4096)));
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        let key = key.into();
        let value = value.into();
        match self.user_metadata.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = value,
            None => self.user_metadata.push((key, value)),
        }
        self
    }
}
