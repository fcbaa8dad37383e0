//! Recursive entrypoints and traced functions.
//!
//! A *traced* function (`#[profile(traced)]`, or any function of a
//! `profile_all` scope) records only while a recursive entrypoint
//! (`#[profile(recursive)]`) runs on the same thread, or always when
//! [`Options::trace_all`](crate::options::Options::trace_all) is set. The check is one
//! thread-local read: a depth counter that entrypoints raise while they run.
//!
//! Futures move: a traced future made inside a trace and spawned is polled
//! by another thread, outside the entrypoint's polls. So a traced future
//! also records when it is first polled as a task of its own (outside any
//! recording future) while a recursive entrypoint is in progress anywhere
//! in the process (a sync one running, an async one between its first poll
//! and its end: `InProgress`); it then keeps the trace on for what its
//! polls call. An `async fn`'s body, and so its instrumented future, only
//! starts at its first poll: nothing of it runs where it was called, so the
//! trace cannot be taken there; a spawned task records while the trace
//! that could have spawned it is in progress, not only if it did.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

static TRACE_ALL: AtomicBool = AtomicBool::new(false);

/// Recursive entrypoints in progress in the process: sync ones running
/// (counted by the outermost [`TraceScope`] of a thread), async ones from
/// their first poll to their end ([`InProgress`]).
static IN_PROGRESS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Number of recursive entrypoints running on this thread.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Number of sync entrypoints running on this thread ([`TraceScope::begin`]).
    static ENTRIES: Cell<u32> = const { Cell::new(0) };
}

pub fn set_trace_all(on: bool) {
    TRACE_ALL.store(on, Relaxed);
}

/// Whether a traced function called now, on this thread, records.
#[inline(always)]
pub(crate) fn tracing_here() -> bool {
    DEPTH.try_with(Cell::get).unwrap_or(0) > 0 || TRACE_ALL.load(Relaxed)
}

/// Whether a recursive entrypoint is in progress anywhere in the process
/// (or trace-all is on): a traced future first polled as a task of its own
/// then records (see the module's doc).
pub(crate) fn entrypoint_in_progress() -> bool {
    IN_PROGRESS.load(Relaxed) > 0 || TRACE_ALL.load(Relaxed)
}

/// An async recursive entrypoint in progress, from its first poll to its
/// end (see [`entrypoint_in_progress`]).
#[derive(Debug)]
pub(crate) struct InProgress(());

impl InProgress {
    pub(crate) fn begin() -> InProgress {
        IN_PROGRESS.fetch_add(1, Relaxed);
        InProgress(())
    }
}

impl Drop for InProgress {
    fn drop(&mut self) {
        IN_PROGRESS.fetch_sub(1, Relaxed);
    }
}

/// Marks the current thread as inside a recursive entrypoint while it lives.
#[doc(hidden)]
#[derive(Debug)]
pub struct TraceScope {
    counted: bool,
    _not_send: PhantomData<*const ()>,
}

impl TraceScope {
    /// Raises this thread's trace depth until the scope is dropped: a sync
    /// entrypoint's call. While a thread has one, it counts as an
    /// entrypoint in progress in the process.
    #[inline]
    pub fn begin() -> TraceScope {
        let _ = ENTRIES.try_with(|e| {
            if e.get() == 0 {
                IN_PROGRESS.fetch_add(1, Relaxed);
            }
            e.set(e.get() + 1);
        });
        let mut scope = TraceScope::poll();
        scope.counted = true;
        scope
    }

    /// Raises this thread's trace depth while a future is polled (an async
    /// entrypoint counts itself in progress with [`InProgress`]).
    #[inline]
    pub(crate) fn poll() -> TraceScope {
        let _ = DEPTH.try_with(|d| d.set(d.get().saturating_add(1)));
        TraceScope {
            counted: false,
            _not_send: PhantomData,
        }
    }
}

impl Drop for TraceScope {
    #[inline]
    fn drop(&mut self) {
        let _ = DEPTH.try_with(|d| d.set(d.get().saturating_sub(1)));
        if self.counted {
            let _ = ENTRIES.try_with(|e| {
                e.set(e.get().saturating_sub(1));
                if e.get() == 0 {
                    IN_PROGRESS.fetch_sub(1, Relaxed);
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_nested_entrypoints() {
        assert!(!tracing_here());
        {
            let _a = TraceScope::begin();
            assert!(tracing_here());
            {
                let _b = TraceScope::begin();
            }
            assert!(tracing_here());
        }
        assert!(!tracing_here());
    }
}
