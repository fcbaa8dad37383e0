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
use crate::lane::{Lane, bump};
use crate::metadata;
use crate::options::{Options, Output};
use crate::registry::RegionTable;
use crate::results::Results;
use crate::scratch;
use crate::store::{Limits, Store};
use crate::sync::{fork_epoch, lock, note_fork};

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
    /// The fork epoch the session was set up in.
    epoch: u32,
}

impl Session {
    /// Completed calls of region `id` so far.
    pub(crate) fn num_calls(&self, id: u32) -> u64 {
        self.counts().get(id as usize).copied().unwrap_or(0)
    }

    /// Completed calls per region id so far: recorded (in the lanes, on
    /// disk or in memory, and async calls) or dropped. Never decreases while
    /// the session records (see `Lane::cut`).
    pub(crate) fn counts(&self) -> Vec<u64> {
        if let Some(counts) = self.final_counts.get() {
            return counts.clone();
        }
        let mut counts = vec![0u64; self.regions.len()];
        for lane in lock(&self.store.lanes).iter() {
            let cut = lane.cut();
            for (region, n) in cut.counts.iter().enumerate() {
                bump(&mut counts, region, *n);
            }
            for (region, d) in cut.dropped.iter().enumerate() {
                bump(&mut counts, region, d.calls);
            }
            for task in &cut.tasks {
                bump(&mut counts, task.region as usize, 1);
            }
        }
        counts
    }

    /// Whether the session has been finalized.
    pub(crate) fn is_finished(&self) -> bool {
        self.final_counts.get().is_some()
    }

    /// Ends the session: keeps the per-region counts, releases the records
    /// and the scratch file, turns trace-all off.
    fn finish(&self, counts: Vec<u64>) {
        let _ = self.final_counts.set(counts);
        self.store.release();
        crate::trace::set_trace_all(false);
    }

    /// Whether this session was inherited through `fork()`: it belongs to
    /// the parent process, and this one has none of its threads.
    fn is_inherited(&self) -> bool {
        self.epoch != fork_epoch()
    }

    /// Plans the file of everything recorded up to now, with the scratch
    /// files of the write in `dir`.
    fn plan(&self, dir: PathBuf) -> Result<assemble::Plan, Error> {
        let end = Anchor::now();
        let metadata = metadata::run_metadata(&self.options, self.wall_start, self.start, end);
        let budget = (self.options.memory_limit / 2).max(8 << 20);
        assemble::plan(
            &self.store,
            &self.regions,
            assemble::Span {
                start: self.start,
                end,
            },
            metadata,
            budget,
            dir,
        )
    }
}

/// Forgets a session inherited through `fork()`: its threads, writer and
/// scratch file are the parent's. It is leaked, never dropped or joined.
fn forget_inherited(slot: &mut Option<Arc<Session>>) {
    if slot.as_ref().is_some_and(|s| s.is_inherited()) {
        std::mem::forget(slot.take());
    }
}

/// Makes a `fork()` child start with no active session: called in the child
/// (only async-signal-safe atomics). See [`setup`](crate::setup).
extern "C" fn in_fork_child() {
    GENERATION.store(0, Ordering::Relaxed);
    note_fork();
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
    static AT_FORK: std::sync::Once = std::sync::Once::new();
    AT_FORK.call_once(|| {
        // SAFETY: the handler is an `extern "C" fn()` that lives for the
        // process and only stores to atomics (async-signal-safe, as a fork
        // child handler must be).
        unsafe { libc::pthread_atfork(None, None, Some(in_fork_child)) };
    });
    let _serial = lock(&LIFECYCLE);
    forget_inherited(&mut lock(&LAST));
    {
        let mut active = lock(&ACTIVE);
        forget_inherited(&mut active);
        if active.is_some() {
            return Err(Error::AlreadyConfigured);
        }
    }
    if let Output::File(path) = &options.output {
        check_output_path(path)?;
    }
    clock::init();
    let generation = NEXT_GENERATION.fetch_add(1, Ordering::Relaxed);
    let file_path = options.get_file_path().map(Path::to_path_buf);
    let dir = scratch::dir_for(options.get_file_path());
    let limits = Limits {
        memory: options.memory_limit,
        disk: options
            .disk_limit
            .or_else(|| scratch::free_bytes(&dir).map(|free| free / 2))
            .unwrap_or(u64::MAX),
        on_failure: options.on_spill_failure,
    };
    let session = Arc::new(Session {
        generation,
        start: Anchor::now(),
        wall_start: SystemTime::now(),
        regions: RegionTable::new(generation),
        store: Store::new(limits, dir),
        final_counts: OnceLock::new(),
        epoch: fork_epoch(),
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
    let dir = scratch::dir_of(path);
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

/// The active session of this process, if any (one inherited through
/// `fork()` is forgotten here).
fn active_session() -> Option<Arc<Session>> {
    let mut active = lock(&ACTIVE);
    forget_inherited(&mut active);
    active.clone()
}

/// Writes everything recorded so far and keeps recording.
pub(crate) fn checkpoint() -> Result<Results, Error> {
    let _serial = lock(&LIFECYCLE);
    let session = active_session().ok_or(Error::NotActive)?;
    let plan = session.plan(scratch::dir_for(session.options.get_file_path()))?;
    Results::publish(plan, &session.options)
}

/// Ends the active session (the one of `generation`, if given) and writes it.
///
/// `path` overrides the session's output (the file is then written there);
/// it is checked like `setup` checks its path, before anything is written.
/// The session records on while the file is written, and ends only once it
/// is: the file has every call completed before the cut (the start of the
/// write); calls that end during the write are not in it. If the write
/// fails, the session goes on with everything it recorded, before and
/// during the attempt.
pub(crate) fn finalize_generation(
    generation: Option<u32>,
    path: Option<&Path>,
) -> Result<Results, Error> {
    let _serial = lock(&LIFECYCLE);
    let session = active_session()
        .filter(|s| generation.is_none_or(|g| g == s.generation))
        .ok_or(Error::NotActive)?;
    let mut options = session.options.clone();
    if let Some(path) = path {
        check_output_path(path)?;
        options.output = Output::File(path.to_path_buf());
    }
    let plan = session.plan(scratch::dir_for(options.get_file_path()))?;
    let counts = plan.counts_with_dropped();
    let results = Results::publish(plan, &options)?;
    // Written: the session ends. Calls entered from now on record nothing.
    GENERATION.store(0, Ordering::Release);
    lock(&ACTIVE).take();
    session.finish(counts);
    *lock(&LAST) = Some(session);
    Ok(results)
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
