//! # scope-profiler
//!
//! A region profiler for Rust. Set up a session, enter named **regions**
//! (RAII guards), and `finalize` writes every call's start and end to one
//! HDF5 file in the layout of the Python package
//! [scope-profiler](https://pypi.org/project/scope-profiler/) (schema 3), so
//! its `scope-profiler inspect | report | plot | export | diff` commands open
//! the file as it is; for a `.json` path, its JSON profile instead (in any
//! build, also without the feature `hdf5`), which the same tools,
//! [`read_profile`] and the crate `scope-profiler-reader` open.
//!
//! ```
//! use scope_profiler::{self as sp, Options};
//!
//! # let dir = std::env::temp_dir().join(format!("sp-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).unwrap();
//! # let path = dir.join("regions.h5");
//! let run = sp::setup(Options::new().file_path(&path).verbose(false))?;
//! for _ in 0..10 {
//!     let _step = sp::region("time_step").enter();
//!     sp::region("rhs_evaluation").run(|| { /* ... */ });
//!     sp::scope!("state_update"); // call-site cached, no lookup by name
//! }
//! assert_eq!(sp::get_region("rhs_evaluation").unwrap().num_calls(), 10);
//! let results = run.finalize()?;
//! assert!(path.exists());
//! println!("{results}"); // the summary tree
//! # Ok::<(), sp::Error>(())
//! ```
//!
//! Recording costs one thread-local access, one timestamp (the TSC) and one
//! 24-byte store per call end; nothing is locked, hashed, allocated or
//! formatted per call. Timestamps are written as nanoseconds on the
//! CLOCK_MONOTONIC timeline shared with Python's `perf_counter_ns` and the C
//! API, so regions from several languages of one process line up.
//!
//! This page is the guide: the API by example, then one section per topic.
//! The file format and the `scope-prof` command line are described in the
//! repository's `docs/format.md` and `docs/cli.md`, its design in
//! `ARCHITECTURE.md`.
//!
//! - [The API by example](#the-api-by-example), [bounded memory](#bounded-memory)
//! - [Tags, metadata, pausing and sampling](#tags-metadata-pausing-and-sampling),
//!   aggregation mode, the session envelope and source text
//! - [Attributes: `#[profile]` and `#[profile_all]`](#attributes-profile-and-profile_all),
//!   async functions and futures
//! - [Region counters](#region-counters-allocations-kernel-and-hardware-events):
//!   allocations, kernel and hardware events
//! - [Configuration](#configuration): TOML files and `SCOPE_PROFILER_*` variables
//! - [Live](#live-a-running-programs-regions): a running program's regions, pause,
//!   resume and checkpoint from outside (`scope-prof live`)
//! - [MPI](#mpi)
//! - [Using it with tracing](#using-it-with-tracing)
//! - [Reading and exporting profiles](#reading-and-exporting-profiles)
//! - [Features and platforms](#features-and-platforms)
//! - [How it records](#how-it-records), [performance](#performance)
//!
#![doc = include_str!("../docs/api.md")]
#![doc = include_str!("../docs/attributes.md")]
#![doc = include_str!("../docs/counters.md")]
#![doc = include_str!("../docs/configuration.md")]
#![doc = include_str!("../docs/live.md")]
#![doc = include_str!("../docs/mpi.md")]
#![doc = include_str!("../docs/tracing.md")]
#![doc = include_str!("../docs/reading.md")]
#![doc = include_str!("../docs/platforms.md")]
#![doc = include_str!("../docs/internals.md")]
#![warn(missing_docs)]
#![forbid(unsafe_code)]
#![warn(clippy::undocumented_unsafe_blocks)]

// The modules in layers, bottom first: a module uses only modules of its
// own layer or of the layers below it, with no cycle (tests/layers.rs checks
// it). ARCHITECTURE.md tells what each layer does. Layers 1 to 6 are the
// crate `scope-profiler-core`; the HDF5 file (layer 7) is the crate
// `scope-profiler-hdf5`. Their modules are named here as this crate's own
// (`crate::sink`, `crate::hdf5`), so each module names its layer's modules
// by one path whichever crate holds them.

// 1. Foundation: plain data, errors, clocks, hashing, scratch files.
#[cfg(feature = "live")]
use scope_profiler_core::internal::json;
use scope_profiler_core::internal::{
    clock, counters, error, options, platform, profile, publish, scratch, sync, value,
};
#[cfg(feature = "mpi")]
use scope_profiler_core::internal::{comm, fxhash};

// 2. Records, lanes and memory.
use scope_profiler_core::internal::{sampling, store};

// 3. Names.
use scope_profiler_core::internal::registry;

// 4. The active session, as recording sees it.
use scope_profiler_core::internal::active;

// 5. Recording: the per-thread recorder and the ways into it.
use scope_profiler_core::internal::{callmeta, callsite, region, task, thread, trace};

// 6. Assembly: lanes and names in, rows and columns out.
#[cfg(feature = "live")]
use scope_profiler_core::internal::live;
use scope_profiler_core::internal::{assemble, calltree, metadata, sink};

// 7. Output: the HDF5 file, the JSON profile, reading, the results, the exports.
#[cfg(feature = "mpi")]
mod collective;
#[cfg(feature = "hdf5")]
use scope_profiler_hdf5 as hdf5;
use scope_profiler_reader as reader;
mod python;
mod results;
mod samples;

// 8. Lifecycle: setup, checkpoint, finalize.
mod session;

pub use callmeta::{CallMetadataScope, call_metadata};
pub use calltree::Lane;
pub use calltree::{CallNode, CallTree};
pub use counters::CountingAllocator;
pub use error::Error;
#[cfg(feature = "mpi")]
pub use options::MpiOutput;
pub use options::{Compression, Options};
pub use profile::{
    DroppedCalls, Events, Profile, RecordingHealth, RegionCounters, RegionRow, RegionStatistics,
    SummaryStatistics, TaskInfo, ThreadInfo,
};
pub use reader::read_profile;
pub use region::{AsyncCall, Region};
pub use results::{Results, WritePath};
pub use session::{Run, Sampler};
pub use thread::Guard;
pub use value::Value;

/// Re-exported attribute macros; see the `scope-profiler-macros` crate.
pub use scope_profiler_macros::*;

/// What the macros expand to. Not a public API: it may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use crate::callmeta::{
        Classify, NoOutcome, Outcome, OutcomeGuard, OutcomeOf, OutcomeOfAny, OutcomeOfResult,
        OutcomeProbe, Status, opaque_outcome,
    };
    pub use crate::callsite::{CallSite, EntrypointGuard, TracedGuard};
    pub use crate::registry::Details;
    pub use crate::task::{Instrumented, Mode};
    pub use crate::thread::Guard;
    // The built-in macros the expansion calls, named through this crate so
    // that they resolve in every edition (`::core` does not in 2015).
    pub use core::{concat, file, line, module_path};
    // The hidden attribute a `profile_all` scope hands to a function with its
    // own `#[profile]`.
    pub use scope_profiler_macros::__profile_scope as profile_scope;
}

/// Starts a profiling session.
///
/// Checks the output path first: a missing directory, a directory as the
/// path or a directory without write permission is an `Err` naming the path.
/// A second `setup` while a session is active is [`Error::AlreadyConfigured`].
/// `setup` after `finalize` starts a new session with no regions.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// let run = sp::setup(Options::new().in_memory().verbose(false))?;
/// assert!(matches!(sp::setup(Options::new()), Err(sp::Error::AlreadyConfigured)));
/// run.finalize()?;
/// let err = sp::setup(Options::new().file_path("/no/such/dir/x.h5")).unwrap_err();
/// assert!(err.to_string().contains("/no/such/dir/x.h5"));
/// # Ok::<(), sp::Error>(())
/// ```
pub fn setup(options: Options) -> Result<Run, Error> {
    session::setup(options)
}

/// Writes `profile` to `path`, published atomically (built beside `path`
/// and renamed over it when complete): a JSON profile for a name ending in
/// `.json` or `.json.gz` (gzip needs the feature `hdf5`), in any build;
/// otherwise an HDF5 file (feature `hdf5`; `compression` applies to its
/// event columns), read back exactly by [`read_profile`].
///
/// # Errors
///
/// A profile whose rows and columns do not fit together is an `Err`
/// naming `path`, and nothing is written; so is an HDF5 path in a build
/// without `hdf5`.
///
/// ```
/// use scope_profiler::{self as sp, Compression, Options};
/// let dir = std::env::temp_dir().join(format!("sp-doc-wp-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// sp::setup(Options::new().in_memory().verbose(false))?;
/// sp::region("a").run(|| ());
/// let profile = sp::finalize()?.into_profile().unwrap();
/// let path = dir.join("copy.json");
/// sp::write_profile(&profile, &path, Compression::None)?;
/// let back = sp::read_profile(&path)?;
/// assert_eq!((back.region_names, back.events), (profile.region_names.clone(), profile.events.clone()));
/// # #[cfg(feature = "hdf5")] {
/// let path = dir.join("copy.h5");
/// sp::write_profile(&profile, &path, Compression::None)?;
/// assert_eq!(sp::read_profile(&path)?, profile);
/// # }
/// # Ok::<(), sp::Error>(())
/// ```
pub fn write_profile(
    profile: &Profile,
    path: impl AsRef<std::path::Path>,
    compression: Compression,
) -> Result<(), Error> {
    let path = path.as_ref();
    if reader::internal::jsonfile::is_json_path(path) {
        let _ = compression;
        return publish::publish_atomically(path, |temp| {
            reader::internal::jsonfile::write_profile(profile, temp, path)
        });
    }
    #[cfg(feature = "hdf5")]
    return hdf5::write_profile(profile, path, compression);
    #[cfg(not(feature = "hdf5"))]
    Err(Error::needs_hdf5(path, "an HDF5 file"))
}

/// Starts a session configured by the environment: [`setup`] with
/// [`Options::from_env`] (the TOML file `SCOPE_PROFILER_CONFIG` names, then
/// `SCOPE_PROFILER_OUTPUT`, `SCOPE_PROFILER_RECURSIVE`,
/// `SCOPE_PROFILER_ENABLE_TAGS`, `SCOPE_PROFILER_DISABLE`, ...), as the
/// Python package's `ProfileManager.setup_from_env`. To override a setting
/// in code, use `setup(Options::from_env()?.label("x"))`.
///
/// ```
/// use scope_profiler as sp;
/// # // The output goes to a temporary file (no other thread reads the
/// # // environment in this doc test).
/// # unsafe { std::env::set_var("SCOPE_PROFILER_OUTPUT", std::env::temp_dir().join("sp-doc-env.h5")) };
/// let run = sp::setup_from_env()?;
/// sp::region("work").run(|| ());
/// # let results = run.finalize()?;
/// # assert!(results.file_path().unwrap().ends_with("sp-doc-env.h5"));
/// # Ok::<(), sp::Error>(())
/// ```
pub fn setup_from_env() -> Result<Run, Error> {
    setup(Options::from_env()?)
}

/// Ends the active session: writes the file (unless in memory), prints the
/// summary when verbose, and returns the results. With no active session it
/// is [`Error::NotActive`]. If the file cannot be written the session stays
/// active, with nothing lost, and the error is returned.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::setup(Options::new().in_memory().verbose(false))?;
/// sp::region("a").run(|| ());
/// let results = sp::finalize()?;
/// assert_eq!(results.profile().unwrap().region_names, ["a"]);
/// assert!(matches!(sp::finalize(), Err(sp::Error::NotActive)));
/// # Ok::<(), sp::Error>(())
/// ```
pub fn finalize() -> Result<Results, Error> {
    session::finalize_generation(None, None)
}

/// Writes everything recorded so far and keeps recording (the C API's
/// flush): the file is complete at every checkpoint.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::setup(Options::new().in_memory().verbose(false))?;
/// sp::region("a").run(|| ());
/// assert_eq!(sp::checkpoint()?.profile().unwrap().events.len(), 1);
/// sp::region("a").run(|| ());
/// assert_eq!(sp::finalize()?.profile().unwrap().events.len(), 2);
/// # Ok::<(), sp::Error>(())
/// ```
pub fn checkpoint() -> Result<Results, Error> {
    session::checkpoint()
}

/// Starts a session whose [`Run`] finalizes it when dropped (printing any
/// error to stderr): the form for `main`.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// fn main() -> Result<(), sp::Error> {
///     let _profiling = sp::session(Options::new().in_memory().verbose(false))?;
///     sp::region("work").run(|| ());
///     Ok(())
/// }
/// # main().unwrap();
/// ```
///
/// The session records the envelope region `scope_profiler.session` (the
/// Python package's name) on this thread from start to end, so every
/// region's share of the session is known (`scope-profiler inspect`'s
/// "% session" column); it ends when the run is dropped on this thread.
#[must_use = "the session is finalized when the returned Run is dropped"]
pub fn session(options: Options) -> Result<Run, Error> {
    setup(options.session_region(true)).map(|mut run| {
        run.finalize_on_drop = true;
        run
    })
}

/// Pauses recording in the active session, for every thread: calls
/// entered from now on are not recorded (each costs what a call with no
/// session costs) until [`resume`]. Calls already open finish recording.
///
/// An `Err` when no session is set up (a deactivated one pauses without
/// error, so code written for profiled runs works unchanged), or when this
/// thread has a region open (other than the session envelope): a pause
/// would cut that call in two, so pause between phases, not inside one.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::setup(Options::new().in_memory().verbose(false))?;
/// sp::pause()?;
/// sp::region("skipped").run(|| ());
/// sp::resume();
/// sp::region("kept").run(|| ());
/// {
///     let _open = sp::region("open").enter();
///     assert!(sp::pause().is_err()); // inside a region
/// }
/// sp::finalize()?;
/// assert_eq!(sp::get_region("skipped").unwrap().num_calls(), 0);
/// assert_eq!(sp::get_region("kept").unwrap().num_calls(), 1);
/// # Ok::<(), sp::Error>(())
/// ```
pub fn pause() -> Result<(), Error> {
    session::pause()
}

/// Resumes recording after [`pause`]; harmless when not paused or when no
/// session is active.
///
/// ```
/// scope_profiler::resume(); // nothing to resume: no effect
/// ```
pub fn resume() {
    session::resume()
}

/// Records selected timesteps of a loop: timestep `start` and every
/// `every`-th one after it; the others run paused. Pass each timestep to
/// [`Sampler::step`] at the top of the iteration: it says whether the
/// iteration is recorded. When the sampler is dropped, the session's pause
/// state from before is restored.
///
/// An `Err` for `every == 0`.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::setup(Options::new().in_memory().verbose(false))?;
/// let sampler = sp::sample_every(10, 0)?;
/// for t in 0..100 {
///     let sampled = sampler.step(t)?;
///     assert_eq!(sampled, t % 10 == 0);
///     sp::region("advance").run(|| ());
/// }
/// drop(sampler);
/// sp::finalize()?;
/// assert_eq!(sp::get_region("advance").unwrap().num_calls(), 10);
/// assert!(sp::sample_every(0, 0).is_err());
/// # Ok::<(), sp::Error>(())
/// ```
pub fn sample_every(every: u64, start: i64) -> Result<Sampler, Error> {
    Sampler::new(every, start)
}

/// The region named `name`, created on first use in the active session.
/// The same name always gives the same region. The caller's file and line
/// become the region's source location when it is first defined.
///
/// With the `enabled` feature off, this compiles to nothing: the handle is
/// inert (its name is "", it never records) and the name is not looked up.
///
/// ```
/// use scope_profiler as sp;
/// assert!(sp::region("foo") == sp::region("foo"));
/// ```
#[track_caller]
#[inline]
pub fn region(name: &str) -> Region {
    #[cfg(not(feature = "enabled"))]
    {
        let _ = name;
        Region::inert()
    }
    #[cfg(feature = "enabled")]
    region::region(name)
}

/// Marks `tag` as opt-in: regions carrying it (see [`Region::tagged`] and
/// `#[profile(tags = [...])]`) record only in sessions that enable it, with
/// [`Options::enable_tags`] (`"*"` for all), [`Options::region_tags`], or
/// the environment variable `SCOPE_PROFILER_ENABLE_TAGS=tag1,tag2`. Meant
/// for libraries that ship their own instrumentation: the application
/// records the library's regions only when it asks for them.
///
/// May come before or after `setup`: a session decides for each region at
/// the region's first use in it, so a tag registered after a region was
/// first used in the active session takes effect from the next session.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::register_opt_in_tag("solver-internals");
/// sp::setup(Options::new().in_memory().verbose(false).enable_tags(["solver-internals"]))?;
/// sp::Region::tagged("factorize", &["solver-internals"]).run(|| ());
/// assert_eq!(sp::get_region("factorize").unwrap().num_calls(), 1);
/// sp::finalize()?;
/// # Ok::<(), sp::Error>(())
/// ```
pub fn register_opt_in_tag(tag: &str) {
    registry::register_opt_in_tag(tag)
}

/// Whether a profiling session is active now: one relaxed load. Lets
/// instrumentation that does work before entering a region (a lookup, a
/// thread-local) skip it when nothing records.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// assert!(!sp::is_active());
/// let run = sp::setup(Options::new().in_memory().verbose(false))?;
/// assert!(sp::is_active());
/// run.finalize()?;
/// assert!(!sp::is_active());
/// # Ok::<(), sp::Error>(())
/// ```
#[inline]
pub fn is_active() -> bool {
    cfg!(feature = "enabled") && active::active_generation() != 0
}

/// [`region`] under the Python package's other name for it
/// (`ProfileManager.profile_region`, which the seed page uses), kept so
/// that code ported from Python reads the same; it does what `region` does.
///
/// ```
/// use scope_profiler as sp;
/// assert_eq!(sp::profile_region("x"), sp::region("x"));
/// ```
#[track_caller]
#[inline]
pub fn profile_region(name: &str) -> Region {
    region(name)
}

/// The region named `name` if the active (or last finalized) session has it.
///
/// Named as the Python package names it (`ProfileManager.get_region`), so
/// that code ported from Python reads the same: with
/// [`get_all_regions`], the only `get_` names of this API.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
/// assert!(sp::get_region("never").is_none());
/// sp::region("solver");
/// assert_eq!(sp::get_region("solver").unwrap().num_calls(), 0);
/// sp::finalize().unwrap();
/// ```
pub fn get_region(name: &str) -> Option<Region> {
    region::get_region(name)
}

/// Every region of the active (or last finalized) session, in registration
/// order, including those with no call yet. Named as the Python package's
/// `ProfileManager.get_all_regions` (see [`get_region`]).
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
/// sp::region("b");
/// sp::region("a").run(|| ());
/// let names: Vec<String> = sp::get_all_regions().into_iter().map(|(n, _)| n).collect();
/// assert_eq!(names, ["b", "a"]);
/// sp::finalize().unwrap();
/// ```
pub fn get_all_regions() -> Vec<(String, Region)> {
    region::get_all_regions()
}

/// Names of the regions with at least one completed call, in registration
/// order.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
/// sp::region("idle");
/// sp::region("busy").run(|| ());
/// assert_eq!(sp::recorded_regions(), ["busy"]);
/// sp::finalize().unwrap();
/// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
/// assert!(sp::recorded_regions().is_empty()); // a new session starts empty
/// sp::finalize().unwrap();
/// ```
pub fn recorded_regions() -> Vec<String> {
    region::recorded_regions()
}

/// Enters a call-site cached region until the end of the enclosing block:
/// the region is resolved once per session at this call site, never looked
/// up by name per call. `scope!("name")` binds a hidden guard; to end the
/// call elsewhere, [`scope_guard!`](crate::scope_guard) returns the guard.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
/// for _ in 0..5 {
///     sp::scope!("hot_loop");
/// }
/// assert_eq!(sp::get_region("hot_loop").unwrap().num_calls(), 5);
/// sp::finalize().unwrap();
/// ```
#[cfg(feature = "enabled")]
#[macro_export]
macro_rules! scope {
    ($name:expr) => {
        let _scope_profiler_guard = $crate::scope_guard!($name);
    };
}

/// Enters a call-site cached region (as [`scope!`](crate::scope)) and
/// returns its [`Guard`]: the call ends when the guard is dropped.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
/// let g = sp::scope_guard!("explicit");
/// assert!(g.is_recording());
/// drop(g);
/// assert_eq!(sp::get_region("explicit").unwrap().num_calls(), 1);
/// sp::finalize().unwrap();
/// ```
#[cfg(feature = "enabled")]
#[macro_export]
macro_rules! scope_guard {
    ($name:expr) => {{
        static __SP_SITE: $crate::__private::CallSite =
            $crate::__private::CallSite::new($name, file!(), line!());
        __SP_SITE.enter()
    }};
}

/// With the `enabled` feature off, `scope!` compiles to nothing.
#[cfg(not(feature = "enabled"))]
#[macro_export]
macro_rules! scope {
    ($name:expr) => {
        let _: &str = $name;
    };
}

/// With the `enabled` feature off, `scope_guard!` is an inert guard.
#[cfg(not(feature = "enabled"))]
#[macro_export]
macro_rules! scope_guard {
    ($name:expr) => {{
        let _: &str = $name;
        $crate::Guard::inert()
    }};
}

/// The examples of the crate's README (what crates.io shows), compiled as
/// doc tests so that they stay true. (The workspace README's run as the
/// integration-tests crate's doc tests.)
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
