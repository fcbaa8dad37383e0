//! The session lifecycle: `setup`, `checkpoint`, `finalize`, and the
//! generation number that tells the hot path whether (and which) session is
//! active with one relaxed atomic load.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use crate::assemble;
use crate::clock::{self, Anchor};
use crate::error::Error;
use crate::options::{Options, Output};
use crate::registry::RegionTable;
use crate::results::Results;
use crate::store::Store;
use crate::thread::{Lane, lock};

/// Generation of the active session; 0 when none is active.
static GENERATION: AtomicU32 = AtomicU32::new(0);
static NEXT_GENERATION: AtomicU32 = AtomicU32::new(1);
/// The active session; held only briefly, never while writing a file.
static ACTIVE: Mutex<Option<Arc<Session>>> = Mutex::new(None);
/// The session finalized last, for introspection until the next `setup`.
static LAST: Mutex<Option<Arc<Session>>> = Mutex::new(None);
/// Serializes `setup`, `checkpoint` and `finalize` with each other.
static LIFECYCLE: Mutex<()> = Mutex::new(());

/// The generation of the active session, 0 if none. One relaxed load.
#[inline(always)]
pub(crate) fn active_generation() -> u32 {
    GENERATION.load(Ordering::Relaxed)
}

/// One profiling session: its options, regions and the lanes of the threads
/// that recorded in it.
pub(crate) struct Session {
    pub generation: u32,
    pub options: Options,
    pub start: Anchor,
    pub wall_start: SystemTime,
    pub regions: RegionTable,
    /// The lanes of the threads that recorded, and the memory bound.
    pub store: Arc<Store>,
    /// Per-region call counts, set when the session is finalized (its lanes
    /// are then released).
    final_counts: OnceLock<Vec<u64>>,
}

impl Session {
    /// Completed calls of region `id` so far.
    pub(crate) fn num_calls(&self, id: u32) -> u64 {
        self.counts().get(id as usize).copied().unwrap_or(0)
    }

    /// Completed calls per region id so far.
    pub(crate) fn counts(&self) -> Vec<u64> {
        if let Some(counts) = self.final_counts.get() {
            return counts.clone();
        }
        let mut counts = vec![0u64; self.regions.len()];
        for lane in lock(&self.store.lanes).iter() {
            for (n, spilled) in counts.iter_mut().zip(lock(&lane.spilled_counts).iter()) {
                *n += spilled;
            }
            for task in lock(&lane.tasks).iter() {
                if let Some(n) = counts.get_mut(task.region as usize) {
                    *n += 1;
                }
            }
            lane.for_each_in_memory(|records| {
                for r in records {
                    if let Some(n) = counts.get_mut(r.region as usize) {
                        *n += 1;
                    }
                }
            });
        }
        counts
    }

    /// Whether the session has been finalized.
    pub(crate) fn is_finished(&self) -> bool {
        self.final_counts.get().is_some()
    }

    /// Ends the session: keeps the per-region counts, releases the records.
    fn finish(&self, counts: Vec<u64>) {
        let _ = self.final_counts.set(counts);
        lock(&self.store.lanes).clear();
    }
}

/// The session with this generation, active or last finalized.
pub(crate) fn find(generation: u32) -> Option<Arc<Session>> {
    if generation == 0 {
        return None;
    }
    [&ACTIVE, &LAST].into_iter().find_map(|slot| {
        lock(slot)
            .as_ref()
            .filter(|s| s.generation == generation)
            .cloned()
    })
}

/// The active session, or else the last finalized one.
pub(crate) fn current_or_last() -> Option<Arc<Session>> {
    lock(&ACTIVE).clone().or_else(|| lock(&LAST).clone())
}

/// The active session if its generation is `generation`.
pub(crate) fn active(generation: u32) -> Option<Arc<Session>> {
    lock(&ACTIVE)
        .as_ref()
        .filter(|s| s.generation == generation)
        .cloned()
}

/// A new lane for the calling thread in session `generation`, if active,
/// with the store it belongs to.
pub(crate) fn register_lane(generation: u32) -> Option<(Arc<Lane>, Arc<Store>)> {
    let session = active(generation)?;
    let mut lanes = lock(&session.store.lanes);
    let lane = Arc::new(Lane::for_current_thread(lanes.len() as u32));
    lanes.push(Arc::clone(&lane));
    Some((lane, Arc::clone(&session.store)))
}

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
    generation: u32,
    file_path: Option<PathBuf>,
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
        active_generation() == self.generation
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
}

/// Starts a profiling session.
pub(crate) fn setup(options: Options) -> Result<Run, Error> {
    let _serial = lock(&LIFECYCLE);
    if lock(&ACTIVE).is_some() {
        return Err(Error::AlreadyConfigured);
    }
    if let Output::File(path) = &options.output {
        check_output_path(path)?;
    }
    clock::init();
    let generation = NEXT_GENERATION.fetch_add(1, Ordering::Relaxed);
    let file_path = options.get_file_path().map(Path::to_path_buf);
    let session = Arc::new(Session {
        generation,
        start: Anchor::now(),
        wall_start: SystemTime::now(),
        regions: RegionTable::new(generation),
        store: Store::new(
            options.memory_limit,
            Store::scratch_dir(options.get_file_path()),
        ),
        final_counts: OnceLock::new(),
        options,
    });
    session.store.start_writer();
    crate::trace::set_trace_all(session.options.trace_all);
    *lock(&LAST) = None;
    *lock(&ACTIVE) = Some(session);
    GENERATION.store(generation, Ordering::Release);
    Ok(Run {
        generation,
        file_path,
    })
}

/// Fails early, naming the path, when the profile could not be published
/// there: a missing directory, a directory as the path, no write permission.
fn check_output_path(path: &Path) -> Result<(), Error> {
    if path.as_os_str().is_empty() {
        return Err(Error::invalid_path(path, "the path is empty"));
    }
    if path.is_dir() {
        return Err(Error::invalid_path(path, "it is a directory"));
    }
    let names_a_file =
        path.file_name().is_some() && !path.as_os_str().as_encoded_bytes().ends_with(b"/");
    if !names_a_file {
        return Err(Error::invalid_path(path, "it does not name a file"));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(Error::invalid_path(
            path,
            format!("the directory {} does not exist", dir.display()),
        ));
    }
    // The file is published by creating a sibling and renaming it: probe that.
    let probe = dir.join(format!(".scope-profiler-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(Error::invalid_path(
            path,
            format!("cannot create files in {}: {e}", dir.display()),
        )),
    }
}

/// Writes everything recorded so far and keeps recording.
pub(crate) fn checkpoint() -> Result<Results, Error> {
    let _serial = lock(&LIFECYCLE);
    let session = lock(&ACTIVE).clone().ok_or(Error::NotActive)?;
    let plan = assemble::plan(&session, Anchor::now())?;
    Results::publish(plan, &session.options)
}

/// Ends the active session (the one of `generation`, if given) and writes it.
///
/// `path` overrides the session's output (the file is then written there);
/// it is checked like `setup` checks its path, before the session ends.
pub(crate) fn finalize_generation(
    generation: Option<u32>,
    path: Option<&Path>,
) -> Result<Results, Error> {
    let _serial = lock(&LIFECYCLE);
    if let Some(path) = path {
        check_output_path(path)?;
    }
    let session = {
        let mut active = lock(&ACTIVE);
        match active.as_ref() {
            Some(s) if generation.is_none_or(|g| g == s.generation) => {}
            _ => return Err(Error::NotActive),
        }
        GENERATION.store(0, Ordering::Release);
        match active.take() {
            Some(session) => session,
            None => return Err(Error::NotActive),
        }
    };
    session.store.stop_writer();
    let planned = assemble::plan(&session, Anchor::now());
    let mut options = session.options.clone();
    if let Some(path) = path {
        options.output = Output::File(path.to_path_buf());
    }
    let published = planned.and_then(|plan| {
        let counts = plan.counts.clone();
        Results::publish(plan, &options).map(|results| (results, counts))
    });
    match published {
        Ok((results, counts)) => {
            session.finish(counts);
            *lock(&LAST) = Some(session);
            Ok(results)
        }
        Err(e) => {
            // Nothing is lost: the session goes on, and a later finalize can
            // try again.
            session.store.start_writer();
            GENERATION.store(session.generation, Ordering::Release);
            *lock(&ACTIVE) = Some(session);
            Err(e)
        }
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
    /// assert!(session.finish().is_ok());
    /// ```
    pub fn finish(mut self) -> Result<Results, Error> {
        self.run.take().ok_or(Error::NotActive)?.finalize()
    }
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        if let Some(run) = self.run.take() {
            if let Err(e) = run.finalize() {
                eprintln!("scope-profiler: {e}");
            }
        }
    }
}
