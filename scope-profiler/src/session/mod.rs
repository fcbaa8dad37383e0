//! The session lifecycle on top of everything: `setup`, `checkpoint`,
//! `finalize`, the [`Run`] handle. Recording sees
//! the session through `active.rs`; a file is planned by `assemble/` and
//! written by `results.rs`. The handles are in `handles.rs`, what `setup`
//! checks in `checks.rs`, pausing and sampling in `pause.rs`, the live
//! server in `live/`.

mod checks;
mod handles;
mod live;
mod pause;

use checks::{check_json_output, check_output_path, check_setup};
pub use handles::Run;
pub use pause::Sampler;
pub(crate) use pause::{pause, resume};

use crate::options::read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::active::{self, Session, active_session};
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
use crate::thread::Guard;

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
    if let (Some(comm), Output::File(path)) = (read::communicator(options), read::output(options)) {
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
            conv: session.converter(end, true),
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
        conv: session.converter(end, true),
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

/// Starts a profiling session.
pub(crate) fn setup(options: Options) -> Result<Run, Error> {
    // The profiler's own allocations are never counted.
    let _quiet = counters::suspend();
    #[cfg_attr(not(feature = "mpi"), allow(unused_variables))]
    let serial = crate::sync::lifecycle();
    // The live server's address is bound here, before anything starts: a
    // port in use is an `Err` of `setup` (of every rank's, with MPI).
    let checked = check_setup(&options).and_then(|()| match read::deactivate(&options) {
        true => Ok(None),
        false => live::bind(&options),
    });
    // An MPI session starts on every rank or on none (collective).
    #[cfg(feature = "mpi")]
    let checked = match read::communicator(&options) {
        Some(comm) => comm.serialized(&serial).agree(checked),
        None => checked,
    };
    let live = checked?;
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
        sample_hz: read::sample_hz(&options),
    };
    let trace_all = read::trace_all(&options);
    let envelope = read::session_region(&options);
    let start_paused = read::start_paused(&options);
    let verbose = read::verbose(&options);
    let filter = TagFilter::new(&options);
    let session = Arc::new(Session::new(
        generation,
        options,
        Anchor::now(),
        SystemTime::now(),
        RegionTable::new(generation, filter),
        Store::new(limits, dir),
    ));
    // The server runs before the session is active: a thread that cannot
    // start is an `Err` with nothing started.
    if let Some(bound) = live {
        live::start(bound, &session, verbose)?;
    }
    session.store.start_writer();
    crate::trace::set_trace_all(trace_all);
    crate::callsite::forget_untraced();
    if !active::activate(session) {
        live::stop_ended();
        return Err(Error::AlreadyConfigured);
    }
    if envelope {
        let guard = crate::region::region(SESSION_REGION).enter();
        // A guard of an earlier session still held here is dropped: it
        // records nothing in this one.
        let _ = ENVELOPE.try_with(|slot| *slot.borrow_mut() = Some((generation, guard)));
    }
    if start_paused {
        active::set_paused(generation, true);
    }
    Ok(Run {
        generation,
        file_path,
        finalize_on_drop: false,
    })
}

/// The generation of the deactivated session ([`Options::deactivate`]), if
/// one was set up (in this process: not one inherited through `fork()`),
/// with the fork epoch it was set up in. The hot path never sees it: the
/// active generation stays 0.
static DEACTIVATED: Mutex<Option<(u32, u32)>> = Mutex::new(None);

/// The generation of the deactivated session, if one is set up.
pub(super) fn deactivated() -> Option<u32> {
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
        finalize_on_drop: false,
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
/// during the attempt. A live server of the session stops once it ended.
pub(crate) fn finalize_generation(
    generation: Option<u32>,
    path: Option<&Path>,
) -> Result<Results, Error> {
    let done = finalize_locked(generation, path);
    // After the lifecycle lock is released: a `POST /checkpoint` the server
    // is answering may be waiting for it.
    live::stop_ended();
    done
}

fn finalize_locked(generation: Option<u32>, path: Option<&Path>) -> Result<Results, Error> {
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
        let checked = match read::communicator(&options) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Compression;

    /// One session at a time among this crate's unit tests.
    pub(super) static ONE_SESSION: Mutex<()> = Mutex::new(());

    /// Past its first full-size chunk, a recording thread fills chunks the
    /// spill writer made and faulted in beforehand: it makes none itself.
    #[test]
    fn full_size_chunks_come_prepared_by_the_writer() {
        let _one = lock(&ONE_SESSION);
        let run = crate::setup(Options::new().in_memory().verbose(false)).unwrap();
        let store = Arc::clone(&active_session().unwrap().store);
        let leaf = crate::region("leaf");
        let full = store.max_chunk() as u64;
        // The writer keeps two ready (`store::PREPARED`); it made
        // `prepared` once the count reaches it (bounded wait).
        let wait_prepared = |prepared: u64| {
            let since = std::time::Instant::now();
            while store.chunks_prepared() < prepared {
                assert!(
                    since.elapsed() < std::time::Duration::from_secs(30),
                    "{} chunks prepared, expected {prepared}",
                    store.chunks_prepared()
                );
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        };
        // Past the small first chunks, into a full-size one of its own.
        let mut calls = 2 * full;
        for _ in 0..calls {
            let _g = leaf.enter();
        }
        wait_prepared(2);
        let own = store.chunks_made() - store.chunks_prepared();
        for more in 1..=3 {
            for _ in 0..full {
                let _g = leaf.enter();
            }
            calls += full;
            // The thread took one prepared chunk; the writer made another.
            wait_prepared(2 + more);
        }
        assert_eq!(
            store.chunks_made() - store.chunks_prepared(),
            own,
            "the recording thread made no chunk of its own"
        );
        let results = run.finalize().unwrap();
        assert_eq!(results.statistics_of("leaf").unwrap().num_calls(), calls);
    }

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
