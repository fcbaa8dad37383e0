//! Async calls: an instrumented future records one call from its first poll
//! to its completion (or to its drop, if it is cancelled), and every call
//! made while it is polled nests under it.
//!
//! A plain future's first poll is recorded as a call of the recorder that
//! polls it (`thread::speculate`): most complete there, and are that call
//! and nothing more. One that waits becomes there what it would have been
//! from its first poll: futures interleave on a thread and move between
//! threads, so a future first polled outside any other instrumented
//! future is a *task* with a
//! recorder of its own (its stack of open calls, its chunk), which takes
//! the thread's place while the future is polled (`thread::poll_in_task`):
//! the calls of its polls, and the futures first polled inside it, nest
//! under its call, on whatever thread each poll runs. A completed task's
//! records (its own call last, at depth 0) go as one block to the tasks lane
//! of the thread that completed it (the file's `task_ids` and
//! `/task_table`); a task with many calls gets a lane of its own. A future
//! first polled inside a task is a frame of it: a recorder of its own too,
//! whose calls go, when it ends, under what is open in the recorder around
//! it, so futures polled in turn (`join!`, `select!`) never nest in each
//! other. Its state lives in the future, so the future stays `Send`
//! whenever the wrapped one is.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::active;
use crate::callmeta::{self, NoOutcome, OutcomeOf};
use crate::clock::ticks;
use crate::thread::{self, TaskState};
use crate::trace::{self, TraceScope};

/// How an instrumented future decides whether it records.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `#[profile]`: records whenever a session is active.
    Plain,
    /// `#[profile(recursive)]`: records, and traced code polled inside it records too.
    Entrypoint,
    /// A traced function: records only inside a recursive entrypoint (or trace-all).
    Traced,
    /// A traced function's future made while a trace was on (inside a
    /// recursive entrypoint): it records, and keeps the trace on for what
    /// its polls call, wherever it is polled (a task spawned onto another
    /// thread), as `tracing`'s `#[instrument]` keeps the span it was made in.
    Carried,
}

enum State {
    /// Not polled yet.
    Fresh,
    /// Polled, not recording (no session, or traced outside a trace).
    Off,
    /// A task, or a frame of one (first polled inside it): its recorder
    /// takes the thread's place while it is polled.
    Task(Box<TaskState>),
    /// Completed and recorded.
    Done,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            State::Fresh => "Fresh",
            State::Off => "Off",
            State::Task(_) => "Task",
            State::Done => "Done",
        })
    }
}

/// A future that records its wall time as one call of a region.
///
/// Made by the attribute macros for `async fn`; it is `Send` whenever the
/// wrapped future is. A future that completes in its first poll is a call
/// of whatever polled it, as a sync function's would be; one that waits is
/// a task (or a frame of the task polling it), from its first poll on.
///
/// ```
/// use scope_profiler::{self as sp, Options, profile};
/// use std::task::Poll;
/// #[profile]
/// async fn fetch() -> u32 { 7 }
/// #[profile]
/// async fn slow() -> u32 {
///     let mut waited = false;
///     std::future::poll_fn(|cx| {
///         if std::mem::replace(&mut waited, true) {
///             return Poll::Ready(());
///         }
///         cx.waker().wake_by_ref();
///         Poll::Pending
///     })
///     .await;
///     8
/// }
/// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
/// let waker = std::task::Waker::noop();
/// let mut cx = std::task::Context::from_waker(&waker);
/// let mut fut = std::pin::pin!(fetch());
/// assert_eq!(fut.as_mut().poll(&mut cx), Poll::Ready(7));
/// let mut fut = std::pin::pin!(slow());
/// assert_eq!(fut.as_mut().poll(&mut cx), Poll::Pending);
/// assert_eq!(fut.as_mut().poll(&mut cx), Poll::Ready(8));
/// let results = sp::finalize().unwrap();
/// let profile = results.profile().unwrap();
/// assert_eq!(profile.events.len(), 2);
/// // `slow` only: a task polled twice.
/// assert_eq!(profile.tasks.len(), 1);
/// assert_eq!(profile.tasks[0].steps, 2);
/// ```
///
/// `O` says whether the call's outcome is recorded (`record_outcome`): the
/// status of its output, or "panic" if a poll panics. Without it
/// ([`NoOutcome`]) a poll does nothing more.
#[doc(hidden)]
#[must_use = "futures do nothing unless polled"]
pub struct Instrumented<F, O = NoOutcome> {
    fut: F,
    site: &'static dyn RegionSite,
    mode: Mode,
    state: State,
    outcome: O,
    /// An async entrypoint's being in progress (see `trace`), from its
    /// first poll to its end.
    in_progress: Option<trace::InProgress>,
}

/// Where an instrumented future's region comes from: a call site (see
/// `CallSite::instrument`), resolved at the first poll.
pub(crate) trait RegionSite: Sync {
    /// The region's id in session `generation`, registering it there if
    /// needed; `None` if that session is not active.
    fn region_id(&'static self, generation: u32) -> Option<u32>;
}

impl<F, O> std::fmt::Debug for Instrumented<F, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instrumented")
            .field("mode", &self.mode)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl<F, O> Instrumented<F, O> {
    /// Wraps `fut`, recording it as a call of `site`'s region, and its
    /// outcome as `outcome` says.
    pub(crate) fn new(fut: F, site: &'static dyn RegionSite, mode: Mode, outcome: O) -> Self {
        // The trace is taken when the future is made, not when it is first
        // polled (a future made in a trace and spawned is polled elsewhere).
        let mode = match mode {
            Mode::Traced if trace::tracing_here() => Mode::Carried,
            mode => mode,
        };
        Instrumented {
            fut,
            site,
            mode,
            state: State::Fresh,
            outcome,
            in_progress: None,
        }
    }

    /// The session and region this future records in, at its first poll;
    /// `None` if it records nothing (no session, aggregation, traced
    /// outside a trace).
    fn resolve(&self) -> Option<(u32, u32)> {
        let generation = active::recording_generation();
        // In aggregation mode a future is not a call of its own (what it
        // calls records on the thread that polls it).
        let off = generation == 0
            || active::aggregating()
            || (self.mode == Mode::Traced
                && !trace::tracing_here()
                && !trace::entrypoint_in_progress());
        if off {
            return None;
        }
        Some((generation, self.site.region_id(generation)?))
    }

    /// At the first poll, not speculative: a task of its own, or a frame
    /// of the task being polled, or nothing (`region` `None`).
    fn start(&mut self, region: Option<(u32, u32)>) {
        self.state = match region {
            None => State::Off,
            // Its own call opens in its first poll, at the bottom of its stack.
            Some((generation, region)) => match thread::start_task(generation, region) {
                thread::Start::Task(task) => {
                    if self.mode == Mode::Traced {
                        // Spawned from a trace in progress: carries it.
                        self.mode = Mode::Carried;
                    }
                    State::Task(task)
                }
                // Traced, polled inside a task outside a trace: not in one.
                thread::Start::InTask if self.mode == Mode::Traced && !trace::tracing_here() => {
                    State::Off
                }
                // A frame of the task being polled: its own recorder while
                // polled, its calls handed to the one around it at its end.
                thread::Start::InTask => match thread::start_frame(generation, region) {
                    Some(frame) => State::Task(frame),
                    None => State::Off,
                },
                thread::Start::Off => State::Off,
            },
        };
    }

    /// The first poll of a plain future as a call of the recorder polling
    /// it (`thread::speculate`, whose call `seq` is open): a future that
    /// completes in it is that call and nothing more; one that waits (or
    /// needed a task meanwhile) goes on as a task, or a frame of the task
    /// around it, from its first poll.
    fn poll_first(&mut self, seq: u64, cx: &mut Context<'_>) -> Poll<F::Output>
    where
        F: Future,
    {
        /// Ends the first poll if it unwinds: the call ends, as a sync
        /// call's does.
        struct Unwinding(u64);
        impl Drop for Unwinding {
            fn drop(&mut self) {
                if let Some(task) = thread::end_first_poll(self.0, true) {
                    thread::finish_task(task, ticks());
                }
            }
        }
        // Not polled as a first again, whatever happens.
        self.state = State::Done;
        let unwinding = Unwinding(seq);
        // SAFETY: `fut` is structurally pinned (see `poll`).
        let poll = unsafe { Pin::new_unchecked(&mut self.fut) }.poll(cx);
        std::mem::forget(unwinding);
        if let Some(mut task) = thread::end_first_poll(seq, poll.is_ready()) {
            let now = ticks();
            task.record.polls += 1;
            task.record.running += now.saturating_sub(task.record.start);
            if poll.is_ready() {
                thread::finish_task(task, now);
            } else {
                thread::lend_waiting(&task);
                self.state = State::Task(task);
            }
        }
        poll
    }

    /// Ends the call at `end` (closing whatever it left open, as a
    /// cancelled future does, unless its last poll closed it), and hands
    /// its calls on: a task's to a tasks lane, a frame's to the recorder
    /// around it.
    fn finish(&mut self, end: u64) {
        self.in_progress = None;
        if let State::Task(mut task) = std::mem::replace(&mut self.state, State::Done) {
            let root = task.root;
            if root != 0 {
                thread::poll_in_task(&mut task, || thread::close(root));
            }
            thread::finish_task(task, end);
        }
    }
}

impl<F: Future, O: OutcomeOf<F::Output>> Future for Instrumented<F, O> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `fut` is structurally pinned: it is never moved out of
        // `self`, and the `Drop` impl below does not move it either.
        let this = unsafe { self.get_unchecked_mut() };
        if let State::Fresh = this.state {
            let region = this.resolve();
            // A plain future's first poll: speculative where it can be.
            if let (Some((generation, region)), Mode::Plain, false) =
                (region, this.mode, O::RECORDS)
            {
                let seq = thread::speculate(region, generation);
                if seq != 0 {
                    return this.poll_first(seq, cx);
                }
            }
            this.start(region);
            if this.mode == Mode::Entrypoint && matches!(this.state, State::Task(_)) {
                this.in_progress = Some(trace::InProgress::begin());
            }
        }
        let _trace = matches!(this.mode, Mode::Entrypoint | Mode::Carried).then(TraceScope::poll);
        let fut = &mut this.fut;
        let outcome = &this.outcome;
        // SAFETY: see above; `fut` stays where it is for its lifetime.
        let mut poll_inner = || unsafe { Pin::new_unchecked(&mut *fut) }.poll(cx);
        let poll = match &mut this.state {
            State::Task(task) => {
                let (region, generation) = (task.record.region, task.generation());
                let mut root = task.root;
                let t0 = ticks();
                // In one swap: the task's own call opens at its first poll and
                // closes when the future completes.
                let poll = thread::poll_in_task(task, || {
                    if root == 0 {
                        root = thread::open(region, generation);
                    }
                    let poll = if O::RECORDS {
                        poll_recording_outcome(root, outcome, poll_inner)
                    } else {
                        poll_inner()
                    };
                    if poll.is_ready() {
                        thread::close(root);
                        root = 0;
                    }
                    poll
                });
                task.root = root;
                let t1 = ticks();
                task.record.polls += 1;
                task.record.running += t1.saturating_sub(t0);
                if poll.is_pending() {
                    thread::lend_waiting(task);
                }
                poll
            }
            _ => poll_inner(),
        };
        if poll.is_ready() {
            this.finish(ticks());
        }
        poll
    }
}

/// One poll of a `record_outcome` future whose own call is `root`: the
/// output's status when it is ready, "panic" if the poll unwinds; both
/// while the call is open.
#[inline(never)]
fn poll_recording_outcome<T, O: OutcomeOf<T>>(
    root: u64,
    outcome: &O,
    poll: impl FnOnce() -> Poll<T>,
) -> Poll<T> {
    struct Unwinding(u64);
    impl Drop for Unwinding {
        fn drop(&mut self) {
            if std::thread::panicking() {
                callmeta::record_future_outcome(self.0, callmeta::PANIC);
            }
        }
    }
    if root == 0 {
        return poll();
    }
    let unwinding = Unwinding(root);
    let poll = poll();
    std::mem::forget(unwinding);
    if let Poll::Ready(value) = &poll {
        callmeta::record_future_outcome(root, outcome.status(value));
    }
    poll
}

impl<F, O> Drop for Instrumented<F, O> {
    fn drop(&mut self) {
        // Cancelled after its first poll: the call ends now.
        if matches!(self.state, State::Task(_)) {
            self.finish(ticks());
        }
    }
}
