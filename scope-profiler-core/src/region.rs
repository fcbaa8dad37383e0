//! The `Region` handle and the by-name API.

use crate::active::{self, Session};
use crate::clock::{Anchor, ticks};
use crate::registry::{self, Entry};
use crate::thread::{self, Guard, TaskState};
use std::sync::Arc;

/// A named region of the current session. Identity is by name:
/// `region("a") == region("a")`.
///
/// A handle belongs to the session in which it was made: one made before
/// `setup` (or in an earlier session) records nothing and never panics.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
/// let solver = sp::region("solver");
/// assert_eq!(solver, sp::region("solver"));
/// {
///     let _g = solver.enter();
/// }
/// let x = solver.run(|| 6 * 7); // the closure form
/// assert_eq!(x, 42);
/// assert_eq!(solver.num_calls(), 2);
/// assert_eq!(solver.durations().len(), 2);
/// sp::finalize().unwrap();
/// ```
#[derive(Clone, Copy)]
pub struct Region {
    entry: &'static Entry,
    generation: u32,
    id: u32,
}

impl Region {
    /// The handle `region` gives with the `enabled` feature off: no name,
    /// never recording.
    #[cfg(not(feature = "enabled"))]
    #[inline]
    pub fn inert() -> Region {
        Region {
            entry: registry::inert_entry(),
            generation: 0,
            id: 0,
        }
    }

    /// The handle of region `id` of session `generation`: an inert one if
    /// that session does not record the region.
    #[inline]
    fn made(entry: &'static Entry, generation: u32, id: u32) -> Region {
        if id == registry::DISABLED {
            Region {
                entry,
                generation: 0,
                id: 0,
            }
        } else {
            Region {
                entry,
                generation,
                id,
            }
        }
    }

    /// The region `name` carrying `tags`, stored in the file's `tags` column
    /// of its rows (a JSON list, as the Python package writes it). Identity is
    /// by name, as for `region`: the first definition that gives tags (this,
    /// or `#[profile(tags = [...])]`) sets them; a later different set is
    /// reported once on stderr and ignored.
    ///
    /// A region carrying a tag registered with `register_opt_in_tag` records
    /// only in sessions that enable it (`Options::enable_tags`); with
    /// `Options::region_tags` set, only regions carrying one of those record.
    /// A region that does not record costs what a region with no session
    /// costs. With the `enabled` feature off, the handle is inert.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options, Region};
    /// sp::register_opt_in_tag("mylib");
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// Region::tagged("io.read", &["io"]).run(|| ());
    /// Region::tagged("mylib.solve", &["mylib"]).run(|| ()); // opt-in, off
    /// let profile = sp::finalize()?.profile().unwrap().clone();
    /// assert_eq!(profile.region_names, ["io.read"]);
    /// assert_eq!(profile.rows[0].tags, ["io"]);
    /// # Ok::<(), sp::Error>(())
    /// ```
    #[track_caller]
    #[inline]
    pub fn tagged(name: &str, tags: &[&str]) -> Region {
        #[cfg(not(feature = "enabled"))]
        {
            let _ = (name, tags);
            Region::inert()
        }
        #[cfg(feature = "enabled")]
        tagged_region(name, tags)
    }

    /// Like `region`, with `file:line` as the region's source location when
    /// it is first defined, instead of the caller's: for regions named at run
    /// time from another instrumentation's metadata (a `tracing` span's
    /// callsite). Resolve it once per place and keep the handle (re-resolving
    /// when [`Region::is_current`] turns false): this looks the name up.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options, Region};
    /// let run = sp::setup(Options::new().in_memory().verbose(false))?;
    /// let r = Region::at("app::db::query", "src/db.rs", 42);
    /// r.run(|| ());
    /// let results = run.finalize()?;
    /// let profile = results.profile().unwrap();
    /// assert_eq!(profile.region_names, ["app::db::query"]);
    /// assert_eq!(profile.rows[0].source_line, 42);
    /// # Ok::<(), sp::Error>(())
    /// ```
    #[inline]
    pub fn at(name: &str, file: &'static str, line: u32) -> Region {
        #[cfg(not(feature = "enabled"))]
        {
            let _ = (name, file, line);
            Region::inert()
        }
        #[cfg(feature = "enabled")]
        region_at(name, file, line)
    }

    /// The region's tags (see [`Region::tagged`]).
    ///
    /// ```
    /// let r = scope_profiler::Region::tagged("io.read", &["io"]);
    /// assert_eq!(r.tags(), ["io"]);
    /// ```
    pub fn tags(&self) -> &'static [&'static str] {
        self.entry.tags()
    }

    /// The region's name.
    ///
    /// ```
    /// assert_eq!(scope_profiler::region("io").name(), "io");
    /// ```
    pub fn name(&self) -> &'static str {
        self.entry.name
    }

    /// Starts a call of this region; it ends when the guard is dropped.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// {
    ///     let _g = sp::region("rhs_evaluation").enter();
    ///     // ... work ...
    /// }
    /// assert_eq!(sp::get_region("rhs_evaluation").unwrap().num_calls(), 1);
    /// sp::finalize().unwrap();
    /// ```
    #[inline]
    pub fn enter(&self) -> Guard {
        if cfg!(not(feature = "enabled")) {
            return Guard::inert();
        }
        let generation = self.generation;
        if generation == 0 || generation != active::recording_generation() {
            return Guard::inert();
        }
        thread::enter(self.id, generation)
    }

    /// Runs `f` as one call of this region and returns its result.
    ///
    /// ```
    /// let n = scope_profiler::region("count").run(|| (1..=4).sum::<i32>());
    /// assert_eq!(n, 10);
    /// ```
    #[inline]
    pub fn run<R>(&self, f: impl FnOnce() -> R) -> R {
        let _guard = self.enter();
        f()
    }

    /// Whether this handle belongs to the session active now, so that
    /// [`enter`](Region::enter) records. A cache of handles (such as a
    /// layer that resolves one region per call site) re-resolves a handle
    /// that is no longer current when a new session starts.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// assert!(!sp::region("r").is_current()); // no session
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// let r = sp::region("r");
    /// assert!(r.is_current());
    /// sp::finalize().unwrap();
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// assert!(!r.is_current()); // made in the previous session
    /// assert!(sp::region("r").is_current());
    /// sp::finalize().unwrap();
    /// ```
    #[inline]
    pub fn is_current(&self) -> bool {
        cfg!(feature = "enabled")
            && self.generation != 0
            && self.generation == active::active_generation()
    }

    /// Starts an async call of this region now: one call on a lane of its
    /// own (the file's `task_ids` and `/task_table`), as `#[profile]` async
    /// fns record, for work that moves between threads or interleaves with
    /// other work on one. It is recorded when [`AsyncCall::finish`] is
    /// called or when it is dropped, on whichever thread that happens.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// let mut call = sp::region("request").start_async();
    /// call.poll_begin();
    /// call.poll_end();
    /// std::thread::spawn(move || {
    ///     call.poll_begin();
    ///     call.poll_end();
    ///     call.finish();
    /// })
    /// .join()
    /// .unwrap();
    /// let results = sp::finalize().unwrap();
    /// let profile = results.profile().unwrap();
    /// assert_eq!(profile.tasks.len(), 1);
    /// assert_eq!(profile.tasks[0].steps, 2);
    /// assert_eq!(profile.events.task_ids, Some(vec![0]));
    /// ```
    pub fn start_async(&self) -> AsyncCall {
        let task = if self.generation != 0
            && self.generation == active::recording_generation()
            && !active::aggregating()
        {
            match thread::start_task_here(self.generation, self.id) {
                thread::Start::Task(mut task) => {
                    let (id, generation) = (self.id, self.generation);
                    task.root = thread::poll_in_task(&mut task, || thread::open(id, generation));
                    Some(task)
                }
                _ => None,
            }
        } else {
            None
        };
        AsyncCall {
            task,
            poll_start: None,
        }
    }

    fn session(&self) -> Option<Arc<Session>> {
        active::find(self.generation)
    }

    /// Completed calls of this region in its session (0 for a handle made
    /// outside a session), also those dropped past the memory and disk
    /// limits (see [`Options::disk_limit`](crate::options::Options::disk_limit)).
    /// Never decreases while the session records. After `finalize` it is
    /// the calls the file accounts for (until the next `setup`).
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// let r = sp::region("r");
    /// r.run(|| ());
    /// assert_eq!(r.num_calls(), 1);
    /// sp::finalize().unwrap();
    /// assert_eq!(r.num_calls(), 1);
    /// ```
    pub fn num_calls(&self) -> u64 {
        self.session().map_or(0, |s| s.num_calls(self.id))
    }

    /// Durations in ns of this region's calls held in memory and not yet
    /// written out by `finalize`, in the order the calls started.
    ///
    /// They are converted from clock ticks with the calibration known now;
    /// `finalize` calibrates again over the whole session, so the file's
    /// durations of the same calls may differ from these by a few parts per
    /// million (a few ns in a millisecond).
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// let r = sp::region("sleepy");
    /// r.run(|| std::thread::sleep(std::time::Duration::from_millis(2)));
    /// assert!(r.durations()[0] >= 2_000_000);
    /// sp::finalize().unwrap();
    /// assert!(r.durations().is_empty());
    /// ```
    pub fn durations(&self) -> Vec<i64> {
        let Some(session) = self.session().filter(|s| !s.is_finished()) else {
            return Vec::new();
        };
        let conv = session.converter(Anchor::now(), false);
        let mut calls = Vec::new();
        for lane in crate::sync::lock(&session.store.lanes).iter() {
            lane.for_each_in_memory(|records| {
                calls.extend(
                    records
                        .iter()
                        .filter(|r| r.region == self.id)
                        .map(|r| (r.start, conv.ns(r.end) - conv.ns(r.start))),
                );
            });
        }
        calls.sort_by_key(|&(start, _)| start);
        calls.into_iter().map(|(_, d)| d).collect()
    }
}

/// An async call in progress, started by [`Region::start_async`]: one call
/// on a task lane, from its start to [`finish`](AsyncCall::finish) (or to
/// its drop), with the number of its polls and the time spent in them.
/// Unlike a [`Guard`] it is `Send`: it may end on another thread.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// let call = sp::region("idle").start_async(); // no session: records nothing
/// assert!(!call.is_recording());
/// ```
#[must_use = "the call is recorded when it is finished or dropped"]
pub struct AsyncCall {
    /// The task it is (its own call open at the bottom of its stack); `None`
    /// when it records nothing.
    task: Option<Box<TaskState>>,
    /// The ticks at which the poll in progress began.
    poll_start: Option<u64>,
}

impl std::fmt::Debug for AsyncCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncCall")
            .field("recording", &self.is_recording())
            .field("polling", &self.poll_start.is_some())
            .finish()
    }
}

impl AsyncCall {
    /// Whether this call will be recorded.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// assert!(sp::region("job").start_async().is_recording());
    /// sp::finalize().unwrap();
    /// ```
    pub fn is_recording(&self) -> bool {
        self.task.is_some()
    }

    /// A poll (a stretch of running) begins now. A poll begun while another
    /// is in progress ends that one first.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// let mut call = sp::region("job").start_async();
    /// call.poll_begin();
    /// call.poll_begin(); // ends the first poll, begins a second
    /// call.finish(); // ends the second poll and the call
    /// let results = sp::finalize().unwrap();
    /// assert_eq!(results.profile().unwrap().tasks[0].steps, 2);
    /// ```
    pub fn poll_begin(&mut self) {
        if self.poll_start.is_some() {
            self.poll_end();
        }
        self.poll_start = Some(ticks());
    }

    /// The poll in progress ends now (nothing if none is).
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// let mut call = sp::region("job").start_async();
    /// call.poll_end(); // no poll in progress: nothing
    /// call.poll_begin();
    /// call.poll_end();
    /// call.finish();
    /// let results = sp::finalize().unwrap();
    /// assert_eq!(results.profile().unwrap().tasks[0].steps, 1);
    /// ```
    pub fn poll_end(&mut self) {
        if let (Some(start), Some(task)) = (self.poll_start.take(), &mut self.task) {
            task.record.polls += 1;
            task.record.running += ticks().saturating_sub(start);
        }
    }

    /// Ends the call now and records it (on this thread's lane table; its
    /// task row names the thread of its start). Dropping it does the same.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// sp::region("job").start_async().finish();
    /// let results = sp::finalize().unwrap();
    /// assert_eq!(results.profile().unwrap().tasks.len(), 1);
    /// ```
    pub fn finish(mut self) {
        self.end();
    }

    fn end(&mut self) {
        self.poll_end();
        let Some(mut task) = self.task.take() else {
            return;
        };
        let root = task.root;
        thread::poll_in_task(&mut task, || thread::close(root));
        let end = ticks().max(task.record.start);
        thread::finish_task(task, end);
    }
}

impl Drop for AsyncCall {
    fn drop(&mut self) {
        self.end();
    }
}

impl PartialEq for Region {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.entry, other.entry)
    }
}

impl Eq for Region {}

impl std::hash::Hash for Region {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.entry.name.hash(state);
    }
}

impl std::fmt::Debug for Region {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Region")
            .field("name", &self.entry.name)
            .field(
                "active",
                &(self.generation != 0 && self.generation == active::active_generation()),
            )
            .finish()
    }
}

/// The region named `name` in the active session, created on first use.
/// The caller's file and line are recorded as the region's source when it is
/// first defined.
#[track_caller]
#[inline]
// Not called with the `enabled` feature off (see `crate::region`).
#[cfg_attr(not(feature = "enabled"), allow(dead_code))]
pub fn region(name: &str) -> Region {
    let entry = registry::intern(name);
    let generation = active::active_generation();
    if generation == 0 {
        return Region {
            entry,
            generation: 0,
            id: 0,
        };
    }
    match entry.state_in(generation) {
        Some(id) => Region::made(entry, generation, id),
        None => register(entry, generation, std::panic::Location::caller()),
    }
}

#[cold]
#[inline(never)]
#[cfg_attr(not(feature = "enabled"), allow(dead_code))]
fn register(
    entry: &'static Entry,
    generation: u32,
    location: &'static std::panic::Location<'static>,
) -> Region {
    match active::active(generation) {
        Some(session) => {
            let id = session
                .regions
                .resolve(entry, location.file(), location.line());
            Region::made(entry, generation, id)
        }
        None => Region {
            entry,
            generation: 0,
            id: 0,
        },
    }
}

/// The region named `name` in the active session, created on first use,
/// with `file:line` as its source location when it is first defined.
#[cfg_attr(not(feature = "enabled"), allow(dead_code))]
fn region_at(name: &str, file: &'static str, line: u32) -> Region {
    let entry = registry::intern(name);
    let generation = active::active_generation();
    if generation == 0 {
        return Region {
            entry,
            generation: 0,
            id: 0,
        };
    }
    if let Some(id) = entry.state_in(generation) {
        return Region::made(entry, generation, id);
    }
    match active::active(generation) {
        Some(session) => Region::made(
            entry,
            generation,
            session.regions.resolve(entry, file, line),
        ),
        None => Region {
            entry,
            generation: 0,
            id: 0,
        },
    }
}

/// The region named `name`, if the active (or last finalized) session has it.
pub fn get_region(name: &str) -> Option<Region> {
    let session = active::current_or_last()?;
    let entry = registry::lookup(name)?;
    let id = entry.id_in(session.generation)?;
    Some(Region {
        entry,
        generation: session.generation,
        id,
    })
}

/// Every region of the active (or last finalized) session, in registration order.
pub fn get_all_regions() -> Vec<(String, Region)> {
    let Some(session) = active::current_or_last() else {
        return Vec::new();
    };
    let generation = session.generation;
    session
        .regions
        .snapshot()
        .into_iter()
        .enumerate()
        .map(|(id, info)| {
            (
                info.entry.name.to_owned(),
                Region {
                    entry: info.entry,
                    generation,
                    id: id as u32,
                },
            )
        })
        .collect()
}

/// Names of the regions with at least one completed call, in registration order.
pub fn recorded_regions() -> Vec<String> {
    let Some(session) = active::current_or_last() else {
        return Vec::new();
    };
    let counts = session.counts();
    session
        .regions
        .snapshot()
        .into_iter()
        .zip(counts.iter().chain(std::iter::repeat(&0)))
        .filter(|(_, n)| **n > 0)
        .map(|(info, _)| info.entry.name.to_owned())
        .collect()
}

/// The region `name` carrying `tags`: as [`region`], and the tags are the
/// region's (first definition with tags wins; a different set later is
/// reported once on stderr and ignored).
#[track_caller]
#[cfg_attr(not(feature = "enabled"), allow(dead_code))]
fn tagged_region(name: &str, tags: &[&str]) -> Region {
    let entry = registry::intern(name);
    if !tags.is_empty() && entry.tags() != tags {
        define_tags(entry, tags);
    }
    region(name)
}

#[cold]
#[inline(never)]
#[cfg_attr(not(feature = "enabled"), allow(dead_code))]
fn define_tags(entry: &'static Entry, tags: &[&str]) {
    if !entry.tags().is_empty() {
        report_tag_conflict(entry, tags);
        return;
    }
    // Leaked once per region (the tags are compared first, so a loop that
    // makes the same tagged region leaks nothing more).
    let tags: Vec<&'static str> = tags
        .iter()
        .map(|t| &*Box::leak(Box::<str>::from(*t)))
        .collect();
    let details = Box::leak(Box::new(registry::Details::new(
        Box::leak(tags.into_boxed_slice()),
        "",
    )));
    if !entry.define(details) {
        report_tag_conflict(entry, details.tags_list());
    }
}

#[cfg_attr(not(feature = "enabled"), allow(dead_code))]
fn report_tag_conflict(entry: &'static Entry, tags: &[&str]) {
    static REPORTED: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());
    let mut reported = crate::sync::lock(&REPORTED);
    let key = entry as *const Entry as usize;
    if !reported.contains(&key) {
        reported.push(key);
        eprintln!(
            "scope-profiler: region {:?} already has tags {:?}; ignoring {:?}",
            entry.name,
            entry.tags(),
            tags
        );
    }
}
