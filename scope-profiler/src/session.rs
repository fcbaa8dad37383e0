//! The session lifecycle on top of everything: `setup`, `checkpoint`,
//! `finalize`, the [`Run`] handle and the [`SessionGuard`]. Recording sees
//! the session through `active.rs`; a file is planned by `assemble/` and
//! written by `results.rs`.

use crate::options::read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::active::{self, Session, active_generation, active_session};
use crate::assemble;
use crate::clock::{self, Anchor};
use crate::counters::{self, CounterSet};
use crate::error::Error;
use crate::metadata;
use crate::options::{Options, Output};
use crate::registry::{RegionTable, TagFilter};
use crate::results::Results;
use crate::scratch;
use crate::store::{Limits, Store};
use crate::sync::lock;
use crate::thread::{self, Guard};

/// The cargo features of this build that `MetadataDetail::Full` records.
const BUILD_FEATURES: &[&str] = &[
    #[cfg(feature = "enabled")]
    "enabled",
    #[cfg(feature = "hdf5")]
    "hdf5",
    #[cfg(feature = "mpi")]
    "mpi",
    #[cfg(feature = "mpio")]
    "mpio",
];

/// The name of the envelope region of a session (the Python package's).
pub(crate) const SESSION_REGION: &str = "scope_profiler.session";

thread_local! {
    /// The open envelope call of the session `setup` started on this
    /// thread, with that session's generation.
    static ENVELOPE: std::cell::RefCell<Option<(u32, Guard)>> =
        const { std::cell::RefCell::new(None) };
}

/// Ends the envelope call of session `generation` if this thread holds it.
fn end_envelope(generation: u32) {
    let _ = ENVELOPE.try_with(|slot| {
        let mut slot = slot.borrow_mut();
        if slot.as_ref().is_some_and(|(g, _)| *g == generation) {
            slot.take();
        }
    });
}

/// Writes everything `session` recorded up to now with `options`; the
/// calls per region written (for the session's final counts). Called under
/// the lifecycle lock (`serial`).
fn write(
    session: &Session,
    options: &Options,
    #[cfg_attr(not(feature = "mpi"), allow(unused_variables))] serial: &crate::sync::Lifecycle,
) -> Result<(Results, Vec<u64>), Error> {
    #[cfg(feature = "mpi")]
    if let (Some(comm), Output::File(path)) = (&options.mpi, options.output_target()) {
        let comm = comm.serialized(serial);
        // Collective: a rank whose plan fails makes every rank fail.
        let plan = comm.agree(plan(session, scratch::dir_for(Some(path))))?;
        let counts = plan.counts_with_dropped();
        return Ok((Results::publish_mpi(plan, options, &comm, path)?, counts));
    }
    if read::aggregation(options) {
        let end = Anchor::now();
        let metadata = metadata::run_metadata(
            options,
            session.wall_start,
            session.start,
            end,
            BUILD_FEATURES,
        );
        let span = assemble::Span {
            start: session.start,
            end,
        };
        let plan = assemble::plan_aggregate(&session.store, &session.regions, span, metadata);
        let counts = plan.counts.clone();
        return Ok((Results::publish_aggregate(plan, options)?, counts));
    }
    let plan = plan(session, scratch::dir_for(read::file_path(options)))?;
    let counts = plan.counts_with_dropped();
    Ok((Results::publish(plan, options)?, counts))
}

fn plan(session: &Session, dir: PathBuf) -> Result<assemble::Plan, Error> {
    let end = Anchor::now();
    let mut metadata = metadata::run_metadata(
        &session.options,
        session.wall_start,
        session.start,
        end,
        BUILD_FEATURES,
    );
    // Why a session of `#[profile_all]`/`profile_all_items!` functions may
    // have recorded nothing: they ran outside any entrypoint.
    if let Some(name) = crate::callsite::untraced_example() {
        metadata.push((UNTRACED_KEY.to_owned(), name.into()));
    }
    let budget = (read::memory_limit(&session.options) / 2).max(8 << 20);
    let span = assemble::Span {
        start: session.start,
        end,
    };
    let mut plan = assemble::plan(
        &session.store,
        &session.regions,
        span,
        metadata,
        budget,
        dir,
        read::capture_region_source(&session.options),
    )?;
    plan.health.traced_outside_entrypoints = crate::callsite::untraced_example().map(str::to_owned);
    Ok(plan)
}

/// The metadata key naming a traced function that ran outside any trace
/// during the session (and so was not recorded).
pub(crate) const UNTRACED_KEY: &str = "traced_function_outside_entrypoints";

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
        active_generation() == self.generation || deactivated() == Some(self.generation)
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

/// Starts a profiling session.
pub(crate) fn setup(options: Options) -> Result<Run, Error> {
    // The profiler's own allocations are never counted.
    let _quiet = counters::suspend();
    #[cfg_attr(not(feature = "mpi"), allow(unused_variables))]
    let serial = crate::sync::lifecycle();
    let checked = check_setup(&options);
    // An MPI session starts on every rank or on none (collective).
    #[cfg(feature = "mpi")]
    let checked = match &options.mpi {
        Some(comm) => comm.serialized(&serial).agree(checked),
        None => checked,
    };
    checked?;
    if read::deactivate(&options) {
        return Ok(setup_deactivated());
    }
    // What the session counts, checked here (the allocator installed, the
    // perf group opened on this thread).
    let counter_set = CounterSet::new(
        read::track_allocations(&options),
        read::perf_events(&options),
    )?;
    if let Some(set) = &counter_set {
        set.check()?;
    }
    clock::init();
    let generation = active::new_generation();
    let file_path = read::file_path(&options).map(Path::to_path_buf);
    let dir = scratch::dir_for(read::file_path(&options));
    let limits = Limits {
        memory: read::memory_limit(&options),
        disk: read::disk_limit(&options)
            .or_else(|| scratch::free_bytes(&dir).map(|free| free / 2))
            .unwrap_or(u64::MAX),
        on_failure: read::on_spill_failure(&options),
        aggregate: read::aggregation(&options),
        counters: counter_set.map(Arc::new),
    };
    let trace_all = read::trace_all(&options);
    let envelope = read::session_region(&options);
    let filter = TagFilter::new(&options);
    let session = Session::new(
        generation,
        options,
        Anchor::now(),
        SystemTime::now(),
        RegionTable::new(generation, filter),
        Store::new(limits, dir),
    );
    session.store.start_writer();
    crate::trace::set_trace_all(trace_all);
    crate::callsite::forget_untraced();
    if !active::activate(Arc::new(session)) {
        return Err(Error::AlreadyConfigured);
    }
    if envelope {
        let guard = crate::region::region(SESSION_REGION).enter();
        // A guard of an earlier session still held here is dropped: it
        // records nothing in this one.
        let _ = ENVELOPE.try_with(|slot| *slot.borrow_mut() = Some((generation, guard)));
    }
    Ok(Run {
        generation,
        file_path,
    })
}

/// The generation of the deactivated session ([`Options::deactivate`]), if
/// one was set up (in this process: not one inherited through `fork()`),
/// with the fork epoch it was set up in. The hot path never sees it: the
/// active generation stays 0.
static DEACTIVATED: Mutex<Option<(u32, u32)>> = Mutex::new(None);

/// The generation of the deactivated session, if one is set up.
fn deactivated() -> Option<u32> {
    lock(&DEACTIVATED)
        .filter(|(_, epoch)| *epoch == crate::sync::fork_epoch())
        .map(|(generation, _)| generation)
}

/// A session that records nothing: nothing is activated, so every
/// instrumented call costs what it costs with no session.
fn setup_deactivated() -> Run {
    let generation = active::new_generation();
    active::forget_last();
    *lock(&DEACTIVATED) = Some((generation, crate::sync::fork_epoch()));
    Run {
        generation,
        file_path: None,
    }
}

/// Ends the deactivated session (the one of `generation`, if given), if it
/// is the one set up: `Some(Ok(empty results))`, having written nothing.
fn finalize_deactivated(generation: Option<u32>) -> Option<Result<Results, Error>> {
    let set_up = deactivated()?;
    if generation.is_some_and(|g| g != set_up) {
        return None;
    }
    *lock(&DEACTIVATED) = None;
    Some(Ok(Results::deactivated()))
}

/// Why `setup` cannot start a session with `options`.
fn check_setup(options: &Options) -> Result<(), Error> {
    if active::is_active() || deactivated().is_some() {
        return Err(Error::AlreadyConfigured);
    }
    check_options(options)?;
    if read::deactivate(options) {
        return Ok(());
    }
    if let Output::File(path) = options.output_target() {
        check_output_path(path)?;
        check_json_output(options, path)?;
    }
    Ok(())
}

/// An MPI session's collective writers write HDF5 only: a `.json` path
/// (at `setup` or `Run::finalize_to`) is refused on every rank.
#[cfg_attr(not(feature = "mpi"), allow(unused_variables))]
fn check_json_output(options: &Options, path: &Path) -> Result<(), Error> {
    #[cfg(feature = "mpi")]
    if options.mpi.is_some() && crate::jsonfile::is_json_path(path) {
        return Err(Error::InvalidOption {
            option: "mpi",
            message: format!(
                "{}: an MPI session writes an HDF5 file: a JSON profile is not available in \
                 MPI sessions yet",
                path.display()
            ),
        });
    }
    Ok(())
}

/// Option values `setup` refuses, naming the option.
fn check_options(options: &Options) -> Result<(), Error> {
    // HDF5 chunks are at most 4 GiB; the event columns hold 8-byte values.
    const MAX_CHUNK_EVENTS: usize = (u32::MAX / 8) as usize;
    if let Some(n) = read::chunk_size(options)
        && (n == 0 || n > MAX_CHUNK_EVENTS)
    {
        return Err(Error::InvalidOption {
            option: "chunk_size",
            message: format!("{n} events: a chunk holds 1 to {MAX_CHUNK_EVENTS} events"),
        });
    }
    #[cfg(not(feature = "capture-source"))]
    if read::capture_region_source(options) {
        return Err(Error::InvalidOption {
            option: "capture_region_source",
            message: "source texts are compiled into the binary only with the feature \
                      `capture-source` of scope-profiler, which this build leaves out"
                .to_owned(),
        });
    }
    #[cfg(feature = "mpi")]
    if options.mpi.is_some() {
        let refuse = |message: &str| {
            Err(Error::InvalidOption {
                option: "mpi",
                message: message.to_owned(),
            })
        };
        if *options.output_target() == Output::Memory {
            return refuse("an MPI session writes a file: give it a file path, not in_memory()");
        }
        if read::aggregation(options) {
            return refuse("aggregation mode is not available in MPI sessions yet");
        }
        crate::collective::writer(options)?;
    }
    for (key, _) in read::metadata(options) {
        if key.is_empty() || metadata::is_reserved_key(key) {
            return Err(Error::InvalidOption {
                option: "metadata",
                message: format!(
                    "the key {key:?} is {}",
                    if key.is_empty() {
                        "empty"
                    } else {
                        "one the run description writes itself"
                    }
                ),
            });
        }
    }
    Ok(())
}

/// Fails early, naming the path, when the profile could not be published
/// there: a missing directory, a directory as the path, no write permission.
fn check_output_path(path: &Path) -> Result<(), Error> {
    if path.as_os_str().is_empty() {
        return Err(Error::invalid_path(path, "the path is empty"));
    }
    // Without `hdf5`, the JSON profile is the one file format (and
    // uncompressed: gzip comes with the feature).
    #[cfg(not(feature = "hdf5"))]
    if !crate::jsonfile::is_json_path(path) {
        return Err(Error::needs_hdf5(path, "an HDF5 file"));
    } else if crate::jsonfile::is_gzip_path(path) {
        return Err(Error::needs_hdf5(path, "gzip (.json.gz)"));
    }
    check_output_dir(path)
}

/// The rest of `check_output_path`: the path names a file in a directory
/// this process can write.
fn check_output_dir(path: &Path) -> Result<(), Error> {
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

/// Writes everything recorded so far and keeps recording.
pub(crate) fn checkpoint() -> Result<Results, Error> {
    let _quiet = counters::suspend();
    let serial = crate::sync::lifecycle();
    if deactivated().is_some() {
        return Ok(Results::deactivated());
    }
    let session = active_session().ok_or(Error::NotActive)?;
    write(&session, &session.options, &serial).map(|(results, _)| results)
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
    let _quiet = counters::suspend();
    let serial = crate::sync::lifecycle();
    if let Some(done) = finalize_deactivated(generation) {
        return done;
    }
    let session = active_session()
        .filter(|s| generation.is_none_or(|g| g == s.generation))
        .ok_or(Error::NotActive)?;
    let mut options = session.options.clone();
    if let Some(path) = path {
        let checked = check_output_path(path).and_then(|()| check_json_output(&options, path));
        // A path one rank cannot write fails every rank (collective).
        #[cfg(feature = "mpi")]
        let checked = match &options.mpi {
            Some(comm) => comm.serialized(&serial).agree(checked),
            None => checked,
        };
        checked?;
        options.set_output_target(Output::File(path.to_path_buf()));
    }
    end_envelope(session.generation);
    let (results, counts) = write(&session, &options, &serial)?;
    // Written: the session ends. Calls entered from now on record nothing.
    active::deactivate(session, counts);
    crate::trace::set_trace_all(false);
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

/// Pauses recording in the active session; see [`pause`](crate::pause).
pub(crate) fn pause() -> Result<(), Error> {
    let generation = active_generation();
    if generation == 0 {
        // A deactivated session records nothing anyway: pausing it is not
        // an error (code written for profiled runs works unchanged).
        return match deactivated() {
            Some(_) => Ok(()),
            None => Err(Error::NotActive),
        };
    }
    if active::is_paused() {
        return Ok(());
    }
    // The envelope spans the whole session, paused time included; any other
    // open call would be cut in two by the pause.
    let envelope = crate::registry::lookup(SESSION_REGION).and_then(|e| e.id_in(generation));
    let open = thread::open_calls(generation);
    let blocking = match open {
        (0, _) => None,
        (1, Some(bottom)) if Some(bottom) == envelope => None,
        (n, _) => Some(n),
    };
    if let Some(n) = blocking {
        return Err(Error::Usage(format!(
            "cannot pause while profiling scopes are active: {n} call(s) are open on this thread; \
             pause between regions, not inside one"
        )));
    }
    active::set_paused(generation, true);
    Ok(())
}

/// Resumes recording; see [`resume`](crate::resume).
pub(crate) fn resume() {
    let generation = active_generation();
    if generation != 0 {
        active::set_paused(generation, false);
    }
}

/// Chooses which timesteps of a loop are recorded; made by
/// [`sample_every`](crate::sample_every).
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::setup(Options::new().in_memory().verbose(false))?;
/// let sampler = sp::sample_every(2, 1)?;
/// assert!(!sampler.step(0)?.is_sampled()); // before start
/// assert!(sampler.step(1)?.is_sampled());
/// assert!(!sampler.step(2)?.is_sampled());
/// assert!(sampler.step(3)?.is_sampled());
/// drop(sampler);
/// sp::finalize()?;
/// # Ok::<(), sp::Error>(())
/// ```
#[derive(Debug)]
#[must_use = "the previous pause state is restored when the sampler is dropped"]
pub struct Sampler {
    every: u64,
    start: i64,
    /// The session and whether it was paused when the sampler was made.
    before: Option<(u32, bool)>,
}

impl Sampler {
    pub(crate) fn new(every: u64, start: i64) -> Result<Sampler, Error> {
        if every == 0 {
            return Err(Error::Usage(
                "sample_every: `every` must be at least 1".to_owned(),
            ));
        }
        let generation = active_generation();
        Ok(Sampler {
            every,
            start,
            before: (generation != 0).then(|| (generation, active::is_paused())),
        })
    }

    /// Whether `timestep` is one this sampler records.
    ///
    /// ```
    /// let s = scope_profiler::sample_every(5, 2).unwrap();
    /// assert!(s.selects(7) && !s.selects(8) && !s.selects(-3));
    /// ```
    pub fn selects(&self, timestep: i64) -> bool {
        timestep >= self.start && (timestep.abs_diff(self.start)).is_multiple_of(self.every)
    }

    /// Starts timestep `timestep`: resumes recording if it is selected,
    /// pauses it otherwise (an `Err`, as from [`pause`](crate::pause), when
    /// a region is open on this thread). The state holds until the next
    /// step or until the sampler is dropped.
    pub fn step(&self, timestep: i64) -> Result<Step, Error> {
        let sampled = self.selects(timestep);
        if active_generation() != 0 {
            if sampled {
                resume();
            } else {
                pause()?;
            }
        }
        Ok(Step { sampled })
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        if let Some((generation, paused)) = self.before {
            active::set_paused(generation, paused);
        }
    }
}

/// One timestep of a [`Sampler`].
///
/// ```
/// let s = scope_profiler::sample_every(3, 0).unwrap();
/// assert!(s.step(3).unwrap().is_sampled());
/// ```
#[derive(Debug)]
#[must_use = "keep the step for the iteration's work"]
pub struct Step {
    sampled: bool,
}

impl Step {
    /// Whether this timestep is recorded.
    pub fn is_sampled(&self) -> bool {
        self.sampled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Compression;

    /// One session at a time among this crate's unit tests.
    pub(super) static ONE_SESSION: Mutex<()> = Mutex::new(());

    /// Chunks are reused, not remapped (issue 25): a session that spills
    /// many times its memory limit makes no new chunk once a limit's worth
    /// circulates between the recording thread and the spill writer.
    #[test]
    fn a_long_spilling_session_reuses_its_chunks() {
        let _one = lock(&ONE_SESSION);
        let dir = std::env::temp_dir().join(format!("sp-chunk-reuse-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        const LIMIT: usize = 2 << 20;
        let run = crate::setup(
            Options::new()
                .file_path(dir.join("reuse.h5"))
                .memory_limit(LIMIT)
                .compression(Compression::None)
                .verbose(false),
        )
        .unwrap();
        let store = Arc::clone(&active_session().unwrap().store);
        let leaf = crate::region("leaf");
        let calls = 2_000_000;
        for _ in 0..calls {
            let _g = leaf.enter();
        }
        let made = store.chunks_made();
        println!("{made} chunks made for {calls} calls");
        let results = run.finalize().unwrap();
        let spilled = results.health().spilled_bytes;
        assert!(spilled > 0, "the session spilled");
        assert_eq!(results.statistics_of("leaf").unwrap().num_calls(), calls);
        // A chunk is at most 1/64 of the limit: 64 fill it; without reuse
        // the session would make one per 1/64 of its 48 MB of records.
        let records_per_chunk = store.max_chunk() as u64;
        let without_reuse = calls / records_per_chunk;
        assert!(
            without_reuse > 1000,
            "{without_reuse} chunks' worth of calls"
        );
        assert!(
            made <= 64 + 8,
            "{made} chunks made for {without_reuse} chunks' worth of calls"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[cfg(test)]
mod spill_tests {
    use super::*;
    use crate::options::Compression;
    use tests::ONE_SESSION;

    /// Threads that wait for room while the spill writer keeps the chunks
    /// it emptied (counted against the limit) take those chunks: four
    /// threads recording many times a small limit finish, every call kept.
    /// (A waiting thread once slept while the writer had nothing left to
    /// do: 200M calls on 4 threads under 64 MiB never ended.)
    #[test]
    fn threads_waiting_for_room_take_the_chunks_the_writer_keeps() {
        let _one = lock(&ONE_SESSION);
        let dir = std::env::temp_dir().join(format!("sp-wait-room-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (done, finished) = std::sync::mpsc::channel();
        let path = dir.join("wait.h5");
        // Under valgrind (scripts/memcheck.sh), which runs one thread at a
        // time 20-50x slower, a tenth of the calls: still 5 MB of records
        // through a 1 MiB limit, so the threads wait for room all the same.
        let per_thread: u64 = match std::env::var_os("SP_MEMCHECK") {
            Some(_) => 25_000,
            None => 250_000,
        };
        let worker = std::thread::spawn(move || {
            let run = crate::setup(
                Options::new()
                    .file_path(&path)
                    .memory_limit(1 << 20)
                    .compression(Compression::None)
                    .verbose(false),
            )
            .unwrap();
            std::thread::scope(|s| {
                for t in 0..4 {
                    s.spawn(move || {
                        let outer = crate::region(["a", "b", "c", "d"][t]);
                        let inner = crate::region("inner");
                        for _ in 0..per_thread {
                            let _o = outer.enter();
                            let _i = inner.enter();
                        }
                    });
                }
            });
            let results = run.finalize().unwrap();
            let _ = done.send(results);
        });
        let results = finished
            .recv_timeout(std::time::Duration::from_secs(300))
            .expect("4 threads recording under 1 MiB did not finish in 300 s");
        worker.join().unwrap();
        assert!(results.health().spilled_bytes > 0, "the session spilled");
        assert!(results.health().dropped.is_empty());
        assert_eq!(
            results.statistics_of("inner").unwrap().num_calls(),
            4 * per_thread
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
