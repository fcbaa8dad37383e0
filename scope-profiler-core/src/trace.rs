//! Recursive entrypoints and traced functions.
//!
//! A *traced* function (`#[profile(traced)]`, or any function of a
//! `profile_all` scope) records only while a recursive entrypoint
//! (`#[profile(recursive)]`) runs on the same thread, or always when
//! [`Options::trace_all`](crate::options::Options::trace_all) is set. The check is one
//! thread-local read: a depth counter that entrypoints raise while they run.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

static TRACE_ALL: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Number of recursive entrypoints running on this thread.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

pub fn set_trace_all(on: bool) {
    TRACE_ALL.store(on, Relaxed);
}

/// Whether a traced function called now, on this thread, records.
#[inline(always)]
pub(crate) fn tracing_here() -> bool {
    DEPTH.try_with(Cell::get).unwrap_or(0) > 0 || TRACE_ALL.load(Relaxed)
}

/// Marks the current thread as inside a recursive entrypoint while it lives.
#[doc(hidden)]
#[derive(Debug)]
pub struct TraceScope {
    _not_send: PhantomData<*const ()>,
}

impl TraceScope {
    /// Raises this thread's trace depth until the scope is dropped.
    #[inline]
    pub fn begin() -> TraceScope {
        let _ = DEPTH.try_with(|d| d.set(d.get().saturating_add(1)));
        TraceScope {
            _not_send: PhantomData,
        }
    }
}

impl Drop for TraceScope {
    #[inline]
    fn drop(&mut self) {
        let _ = DEPTH.try_with(|d| d.set(d.get().saturating_sub(1)));
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
