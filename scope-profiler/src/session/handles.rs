//! The handles on a session: [`Run`] (what `setup` returns) and
//! [`SessionGuard`] (what `session` returns, finalizing on drop).

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use super::{deactivated, finalize_generation};
use crate::active::{self, active_generation};
use crate::error::Error;
use crate::results::Results;

/// A handle on the session started by [`setup`](crate::setup).
///
/// Dropping it does nothing; the session lasts until
/// [`finalize`](crate::finalize) (or [`Run::finalize`]).
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// let run = sp::setup(Options::new().in_memory().verbose(false))?;
/// assert!(run.is_active());
/// let results = run.finalize()?;
/// assert!(results.profile().unwrap().rows.is_empty());
/// # Ok::<(), sp::Error>(())
/// ```
#[derive(Debug)]
pub struct Run {
    pub(super) generation: u32,
    pub(super) file_path: Option<PathBuf>,
}

impl Run {
    /// The output file, `None` for an in-memory session.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// let run = sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// assert!(run.file_path().is_none());
    /// run.finalize().unwrap();
    /// ```
    pub fn file_path(&self) -> Option<&Path> {
        self.file_path.as_deref()
    }

    /// Whether this run's session is still active.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// let run = sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// assert!(run.is_active());
    /// sp::finalize().unwrap();
    /// assert!(!run.is_active());
    /// ```
    pub fn is_active(&self) -> bool {
        active_generation() == self.generation || deactivated() == Some(self.generation)
    }

    /// Whether this run's session is active and paused (see
    /// [`pause`](crate::pause)).
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// let run = sp::setup(Options::new().in_memory().verbose(false))?;
    /// sp::pause()?;
    /// assert!(run.is_paused());
    /// sp::resume();
    /// assert!(!run.is_paused());
    /// run.finalize()?;
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn is_paused(&self) -> bool {
        active_generation() == self.generation && active::is_paused()
    }

    /// Finalizes this run's session (an `Err` if it already ended).
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// let run = sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// assert!(run.finalize().is_ok());
    /// ```
    pub fn finalize(self) -> Result<Results, Error> {
        finalize_generation(Some(self.generation), None)
    }

    /// Like [`Run::finalize`], but writes the file to `path` instead of the
    /// path given at `setup` (also for an in-memory session). The path is
    /// checked first; if it cannot be used, or the write fails, the session
    /// stays active with everything it recorded, so another path can be
    /// tried with the same handle.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// let dir = std::env::temp_dir().join(format!("sp-doc-fin-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let run = sp::setup(Options::new().file_path("/no/such/dir/run.h5").in_memory().verbose(false))?;
    /// sp::region("a").run(|| ());
    /// assert!(run.finalize_to("/no/such/dir/run.h5").is_err()); // still active
    /// let results = run.finalize_to(dir.join("run.h5"))?;
    /// assert_eq!(sp::read_profile(results.file_path().unwrap())?.events.len(), 1);
    /// assert!(!run.is_active());
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn finalize_to(&self, path: impl AsRef<Path>) -> Result<Results, Error> {
        finalize_generation(Some(self.generation), Some(path.as_ref()))
    }
}

/// A session that finalizes itself when dropped; see [`session`](crate::session).
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// {
///     let _session = sp::session(Options::new().in_memory().verbose(false))?;
///     let _g = sp::region("main").enter();
/// } // finalized here; errors would be printed to stderr
/// assert_eq!(sp::get_region("main").unwrap().num_calls(), 1);
/// # Ok::<(), sp::Error>(())
/// ```
#[derive(Debug)]
#[must_use = "the session is finalized when this guard is dropped"]
pub struct SessionGuard {
    run: Option<Run>,
}

impl SessionGuard {
    pub(crate) fn new(run: Run) -> Self {
        SessionGuard { run: Some(run) }
    }

    /// Finalizes now and returns the results instead of printing errors.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// let session = sp::session(Options::new().in_memory().verbose(false)).unwrap();
    /// assert!(session.finalize().is_ok());
    /// ```
    pub fn finalize(mut self) -> Result<Results, Error> {
        self.run.take().ok_or(Error::NotActive)?.finalize()
    }
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        if let Some(run) = self.run.take()
            && let Err(e) = run.finalize()
        {
            eprintln!("scope-profiler: {e}");
        }
    }
}
