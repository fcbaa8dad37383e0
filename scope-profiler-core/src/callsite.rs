//! Call-site cached regions: the path of `scope!` and of the attribute
//! macros. A call site resolves its region once per session and keeps
//! `(generation, id)` in one atomic, so entering it never looks a name up.

use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use crate::active;
use crate::callmeta::{Classify, NoOutcome, OutcomeGuard, Status};
use crate::registry::{self, Details};
use crate::task::{Instrumented, Mode, RegionSite};
use crate::thread::{self, Guard};
use crate::trace::{self, TraceScope};

/// The first traced function that ran outside any trace since
/// [`forget_untraced`]: null while none has.
static UNTRACED: AtomicPtr<CallSite> = AtomicPtr::new(std::ptr::null_mut());

#[cold]
#[inline(never)]
fn note_untraced(site: &'static CallSite) {
    let site = (site as *const CallSite).cast_mut();
    // Only the first one is kept; losing the race to another is fine.
    let _ = UNTRACED.compare_exchange(
        std::ptr::null_mut(),
        site,
        Ordering::Relaxed,
        Ordering::Relaxed,
    );
}

/// Forgets the traced functions that ran outside a trace (a new session
/// starts).
pub fn forget_untraced() {
    UNTRACED.store(std::ptr::null_mut(), Ordering::Relaxed);
}

/// The name of a traced function that ran outside any trace (and so was
/// not recorded) since [`forget_untraced`], if one did.
pub fn untraced_example() -> Option<&'static str> {
    let site = UNTRACED.load(Ordering::Relaxed);
    // SAFETY: a non-null value was stored by `note_untraced` from a
    // `&'static CallSite`, which lives, unchanged but for its atomics, for
    // the whole program; only its `name` (never written) is read.
    (!site.is_null()).then(|| unsafe { (*site).name })
}

/// A region bound to one place in the source, resolved once per session.
///
/// Made by `scope!` and the attribute macros as a `static`;
/// use those rather than this type.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// use scope_profiler::__private::CallSite;
/// static SITE: CallSite = CallSite::new("step", file!(), line!());
/// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
/// for _ in 0..3 {
///     let _g = SITE.enter();
/// }
/// assert_eq!(sp::get_region("step").unwrap().num_calls(), 3);
/// sp::finalize().unwrap();
/// ```
#[derive(Debug)]
pub struct CallSite {
    name: &'static str,
    file: &'static str,
    line: u32,
    /// [`registry::pack`]ed `(generation, region id)`, valid while that
    /// session is active; `(!generation, 0)` when that session does not
    /// record the region (see [`registry::DISABLED`]).
    cache: AtomicU64,
    details: Details,
}

impl CallSite {
    /// A call site for region `name`, defined at `file:line`.
    pub const fn new(name: &'static str, file: &'static str, line: u32) -> CallSite {
        CallSite {
            name,
            file,
            line,
            cache: AtomicU64::new(0),
            details: Details::new(&[], ""),
        }
    }

    /// This call site with the region's tags and captured source text.
    pub const fn with_details(
        mut self,
        tags: &'static [&'static str],
        source: &'static str,
    ) -> CallSite {
        self.details = Details::new(tags, source);
        self
    }

    /// The region's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Starts a call; it ends when the guard is dropped. Records nothing
    /// when no session is active.
    #[inline(always)]
    pub fn enter(&'static self) -> Guard {
        if cfg!(not(feature = "enabled")) {
            return Guard::inert();
        }
        let generation = active::recording_generation();
        if generation == 0 {
            return Guard::inert();
        }
        // Acquire pairs with the Release in `resolve`: the region's
        // registration happens before any record that carries its id, so a
        // cut that sees the record sees the region (also on weak-memory
        // targets). A plain load on x86_64.
        let cached = self.cache.load(Ordering::Acquire);
        let cached_generation = (cached >> 32) as u32;
        if cached_generation == generation {
            return thread::enter(cached as u32, generation);
        }
        if cached_generation == !generation {
            return Guard::inert(); // not recorded in this session
        }
        self.enter_resolving(generation)
    }

    #[cold]
    #[inline(never)]
    fn enter_resolving(&'static self, generation: u32) -> Guard {
        match self.resolve(generation) {
            Some(id) => thread::enter(id, generation),
            None => Guard::inert(),
        }
    }

    /// This site's region id in session `generation`, registering it there
    /// on first use; `None` if that session is not active.
    fn id(&'static self, generation: u32) -> Option<u32> {
        let cached = self.cache.load(Ordering::Acquire);
        if (cached >> 32) as u32 == generation {
            return Some(cached as u32);
        }
        if (cached >> 32) as u32 == !generation {
            return None;
        }
        self.resolve(generation)
    }

    fn resolve(&'static self, generation: u32) -> Option<u32> {
        let session = active::active(generation)?;
        let entry = registry::intern(self.name);
        entry.define(&self.details);
        let id = session.regions.resolve(entry, self.file, self.line);
        if id == registry::DISABLED {
            self.cache
                .store(registry::pack(!generation, 0), Ordering::Release);
            return None;
        }
        self.cache
            .store(registry::pack(generation, id), Ordering::Release);
        Some(id)
    }

    /// Enters a recursive entrypoint: records this call and, while the guard
    /// lives, lets traced functions on this thread record too.
    #[inline(always)]
    pub fn enter_entrypoint(&'static self) -> EntrypointGuard {
        let trace = TraceScope::begin();
        EntrypointGuard {
            guard: self.enter(),
            _trace: trace,
        }
    }

    /// Enters a traced function: records only inside a recursive entrypoint
    /// on this thread, or when trace-all is on. Only that check is inlined
    /// into the traced function, so outside a trace it costs one
    /// thread-local read and one relaxed load of a static (whether a
    /// traced function has run outside a trace yet: the first one is noted
    /// out of line, so that a session that recorded nothing can say why),
    /// and nothing else (no register spills for a recording path it does
    /// not take).
    #[inline(always)]
    pub fn enter_traced(&'static self) -> TracedGuard {
        if trace::tracing_here() {
            TracedGuard(std::mem::ManuallyDrop::new(self.enter_tracing()))
        } else {
            if UNTRACED.load(Ordering::Relaxed).is_null() {
                note_untraced(self);
            }
            TracedGuard(std::mem::ManuallyDrop::new(Guard::inert()))
        }
    }

    #[inline(never)]
    fn enter_tracing(&'static self) -> Guard {
        self.enter()
    }

    /// Wraps the body future of an instrumented `async fn`.
    #[doc(hidden)]
    #[inline]
    pub fn instrument<F: Future>(&'static self, mode: Mode, fut: F) -> Instrumented<F> {
        Instrumented::new(fut, self, mode, NoOutcome)
    }

    /// Wraps the body future of a `record_outcome` `async fn`: the call's
    /// metadata gets the status `classify` gives its output (or "panic",
    /// if a poll panics), as for a sync function.
    ///
    /// ```
    /// use scope_profiler::__private::{CallSite, Mode, OutcomeProbe, OutcomeOfResult as _};
    /// static SITE: CallSite = CallSite::new("fetch", file!(), line!());
    /// let fut = SITE.instrument_outcome(Mode::Plain, async { Err::<u8, ()>(()) }, |v| {
    ///     (&&OutcomeProbe(v)).outcome()
    /// });
    /// let waker = std::task::Waker::noop();
    /// let mut cx = std::task::Context::from_waker(&waker);
    /// let ready = std::future::Future::poll(std::pin::pin!(fut), &mut cx);
    /// assert_eq!(ready, std::task::Poll::Ready(Err(())));
    /// ```
    #[doc(hidden)]
    #[inline]
    pub fn instrument_outcome<F, C>(
        &'static self,
        mode: Mode,
        fut: F,
        classify: C,
    ) -> Instrumented<F, Classify<C>>
    where
        F: Future,
        C: Fn(&F::Output) -> Status,
    {
        Instrumented::new(fut, self, mode, Classify(classify))
    }
}

impl RegionSite for CallSite {
    fn region_id(&'static self, generation: u32) -> Option<u32> {
        self.id(generation)
    }
}

/// The guard of a traced function; ends its call, if it records one, out of
/// line (see [`CallSite::enter_traced`]).
///
/// ```
/// use scope_profiler::__private::CallSite;
/// static SITE: CallSite = CallSite::new("app::helper", file!(), line!());
/// // No session and no entrypoint: nothing is recorded.
/// assert!(!SITE.enter_traced().is_recording());
/// ```
#[derive(Debug)]
#[must_use = "the call ends when the guard is dropped"]
pub struct TracedGuard(std::mem::ManuallyDrop<Guard>);

impl TracedGuard {
    /// Whether this guard's call will be recorded.
    pub fn is_recording(&self) -> bool {
        self.0.is_recording()
    }
}

impl Drop for TracedGuard {
    #[inline(always)]
    fn drop(&mut self) {
        if self.0.is_recording() {
            // SAFETY: the guard is taken exactly once, here, and never used
            // again (`self` is being dropped).
            end_traced(unsafe { std::mem::ManuallyDrop::take(&mut self.0) });
        }
    }
}

#[inline(never)]
fn end_traced(guard: Guard) {
    drop(guard);
}

impl OutcomeGuard for TracedGuard {
    fn call_seq(&self) -> u64 {
        self.0.call_seq()
    }

    fn end_ok(self) {
        // Its own drop is not run: the call is taken out (an inert guard,
        // which holds nothing, left in its place) and ended here.
        let mut this = std::mem::ManuallyDrop::new(self);
        let guard = std::mem::replace(&mut *this.0, Guard::inert());
        guard.end_ok();
    }
}

/// The guard of a recursive entrypoint: its own call plus the trace scope.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// use scope_profiler::__private::CallSite;
/// static MAIN: CallSite = CallSite::new("main", file!(), line!());
/// static HELPER: CallSite = CallSite::new("app::helper", file!(), line!());
/// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
/// drop(HELPER.enter_traced()); // outside any entrypoint: not recorded
/// {
///     let _e = MAIN.enter_entrypoint();
///     drop(HELPER.enter_traced()); // recorded
/// }
/// assert_eq!(sp::get_region("app::helper").unwrap().num_calls(), 1);
/// sp::finalize().unwrap();
/// ```
#[derive(Debug)]
#[must_use = "the entrypoint ends when the guard is dropped"]
pub struct EntrypointGuard {
    // Field order: the call ends before the trace scope closes.
    guard: Guard,
    _trace: TraceScope,
}

impl EntrypointGuard {
    /// Whether the entrypoint's own call is being recorded.
    pub fn is_recording(&self) -> bool {
        self.guard.is_recording()
    }
}

impl OutcomeGuard for EntrypointGuard {
    fn call_seq(&self) -> u64 {
        self.guard.call_seq()
    }

    fn end_ok(self) {
        // As its drop: the call ends before the trace scope closes.
        let EntrypointGuard { guard, _trace } = self;
        guard.end_ok();
        drop(_trace);
    }
}
