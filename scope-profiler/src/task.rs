//! Async calls: an instrumented future records one call from its first poll
//! to its completion (or to its drop, if it is cancelled).
//!
//! Futures interleave on a thread and move between threads, so an async call
//! is not pushed on a thread's stack of open calls: it is recorded on a lane
//! of its own (the file's `task_ids` and `/task_table`), with its number of
//! polls and the time spent inside them. Its state lives in the future, so
//! the future stays `Send` whenever the wrapped one is.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::active;
use crate::clock::ticks;
use crate::lane::TaskRecord;
use crate::thread;
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
}

#[derive(Debug, Clone, Copy)]
enum State {
    /// Not polled yet.
    Fresh,
    /// Polled, not recording (no session, or traced outside a trace).
    Off,
    /// Recording into session `generation`.
    On { generation: u32, record: TaskRecord },
    /// Completed and recorded.
    Done,
}

/// A future that records its wall time as one call of a region.
///
/// Made by the attribute macros for `async fn`; it is `Send` whenever the
/// wrapped future is.
///
/// ```
/// use scope_profiler::{self as sp, Options, profile};
/// #[profile]
/// async fn fetch() -> u32 { 7 }
/// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
/// let waker = std::task::Waker::noop();
/// let mut cx = std::task::Context::from_waker(&waker);
/// let mut fut = std::pin::pin!(fetch());
/// assert_eq!(fut.as_mut().poll(&mut cx), std::task::Poll::Ready(7));
/// let results = sp::finalize().unwrap();
/// assert_eq!(results.profile().unwrap().tasks.len(), 1);
/// assert_eq!(results.profile().unwrap().events.task_ids, Some(vec![0]));
/// ```
#[doc(hidden)]
#[must_use = "futures do nothing unless polled"]
pub struct Instrumented<F> {
    fut: F,
    site: &'static dyn RegionSite,
    mode: Mode,
    state: State,
}

/// Where an instrumented future's region comes from: a call site (see
/// `CallSite::instrument`), resolved at the first poll.
pub(crate) trait RegionSite: Sync {
    /// The region's id in session `generation`, registering it there if
    /// needed; `None` if that session is not active.
    fn region_id(&'static self, generation: u32) -> Option<u32>;
}

impl<F> std::fmt::Debug for Instrumented<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instrumented")
            .field("mode", &self.mode)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl<F> Instrumented<F> {
    /// Wraps `fut`, recording it as a call of `site`'s region.
    pub(crate) fn new(fut: F, site: &'static dyn RegionSite, mode: Mode) -> Self {
        Instrumented {
            fut,
            site,
            mode,
            state: State::Fresh,
        }
    }

    fn start(&mut self) {
        let generation = active::active_generation();
        let off = generation == 0 || (self.mode == Mode::Traced && !trace::tracing_here());
        let region = if off {
            None
        } else {
            self.site.region_id(generation)
        };
        let lane = region.and_then(|_| thread::lane_index(generation));
        self.state = match (region, lane) {
            (Some(region), Some(first_lane)) => State::On {
                generation,
                record: TaskRecord {
                    start: ticks(),
                    end: 0,
                    region,
                    first_lane,
                    polls: 0,
                    running: 0,
                },
            },
            _ => State::Off,
        };
    }

    fn finish(&mut self, end: u64) {
        if let State::On {
            generation,
            mut record,
        } = self.state
        {
            record.end = end;
            thread::record_task(generation, record);
        }
        self.state = State::Done;
    }
}

impl<F: Future> Future for Instrumented<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `fut` is structurally pinned: it is never moved out of
        // `self`, and the `Drop` impl below does not move it either.
        let this = unsafe { self.get_unchecked_mut() };
        if let State::Fresh = this.state {
            this.start();
        }
        let _trace = (this.mode == Mode::Entrypoint).then(TraceScope::begin);
        let t0 = ticks();
        // SAFETY: see above; `this.fut` stays where it is for its lifetime.
        let poll = unsafe { Pin::new_unchecked(&mut this.fut) }.poll(cx);
        let t1 = ticks();
        if let State::On { record, .. } = &mut this.state {
            record.polls += 1;
            record.running += t1.saturating_sub(t0);
        }
        if poll.is_ready() {
            this.finish(t1);
        }
        poll
    }
}

impl<F> Drop for Instrumented<F> {
    fn drop(&mut self) {
        // Cancelled after its first poll: the call ends now.
        if let State::On { .. } = self.state {
            self.finish(ticks());
        }
    }
}
