//! The handle on a session, [`Run`]: what `setup` returns, and what
//! `session` returns, which finalizes its session when dropped.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use super::{deactivated, finalize_generation};
use crate::active::{self, active_generation};
use crate::error::Error;
use crate::results::Results;

/// A handle on a session: what [`setup`](crate::setup) and
/// [`session`](crate::session) return.
///
/// Dropping the handle [`setup`](crate::setup) returned does nothing; its
/// session lasts until [`finalize`](crate::finalize) (or
/// [`Run::finalize`]). Dropping the one [`session`](crate::session)
/// returned finalizes its session if it is still active, printing any
/// error to stderr: the form for `main` (call [`Run::finalize`] to get the
/// results and the error instead).
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// let run = sp::setup(Options::new().in_memory().verbose(false))?;
/// assert!(run.is_active());
/// let results = run.finalize()?;
/// assert!(results.profile().unwrap().rows.is_empty());
///
/// {
///     let _session = sp::session(Options::new().in_memory().verbose(false))?;
///     let _g = sp::region("main").enter();
/// } // finalized here; errors would be printed to stderr
/// assert_eq!(sp::get_region("main").unwrap().num_calls(), 1);
/// assert!(!sp::is_active());
/// # Ok::<(), sp::Error>(())
/// ```
#[derive(Debug)]
pub struct Run {
    pub(super) generation: u32,
    pub(super) file_path: Option<PathBuf>,
    /// Whether dropping the handle finalizes its session (`session`'s).
    pub(crate) finalize_on_drop: bool,
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

    /// The address this run's live server listens on ([`Options::live`](crate::Options::live)),
    /// while the session runs: the port the system picked for port 0.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// let run = sp::setup(Options::new().in_memory().verbose(false).live("127.0.0.1:0"))?;
    /// let addr = run.live_addr().expect("serving");
    /// assert!(addr.ip().is_loopback() && addr.port() != 0);
    /// run.finalize()?;
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn live_addr(&self) -> Option<std::net::SocketAddr> {
        super::live::addr(self.generation)
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

    /// Finalizes this run's session (an `Err` if it already ended) and
    /// returns its results; a [`session`](crate::session)'s run is then
    /// not finalized again when dropped.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// let run = sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// assert!(run.finalize().is_ok());
    /// let session = sp::session(Options::new().in_memory().verbose(false)).unwrap();
    /// assert!(session.finalize().is_ok());
    /// ```
    pub fn finalize(mut self) -> Result<Results, Error> {
        self.finalize_on_drop = false;
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

impl Drop for Run {
    /// A [`session`](crate::session)'s run finalizes its session if it is
    /// still active, printing any error to stderr; a [`setup`](crate::setup)
    /// run does nothing.
    fn drop(&mut self) {
        if self.finalize_on_drop
            && self.is_active()
            && let Err(e) = finalize_generation(Some(self.generation), None)
        {
            eprintln!("scope-profiler: {e}");
        }
    }
}
