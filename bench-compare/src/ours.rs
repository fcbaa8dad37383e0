//! scope-profiler's variants: each the workload behind one way of entering a
//! region. The same source is built twice: with the runtime's `enabled`
//! feature (the `compare` binary) and without it (`compare-off`), where the
//! attributes expand to the item unchanged and `scope!` to nothing.

use scope_profiler as sp;

use crate::common::{poll_once, work};

/// `#[profile]` on a function.
#[cfg(feature = "macros")]
#[scope_profiler::profile]
#[inline(never)]
pub fn profiled(x: u64) -> u64 {
    work(x)
}

/// A call-site cached guard: `scope!("name")`, a `static CallSite` and `.enter()`.
#[inline(never)]
pub fn cached(x: u64) -> u64 {
    sp::scope!("cached");
    work(x)
}

/// The region looked up by name on every call.
#[inline(never)]
#[allow(dead_code)] // `compare` only
pub fn by_name(name: &str, x: u64) -> u64 {
    let _g = sp::region(name).enter();
    work(x)
}

/// `sp::region("by_name").enter()` with the name written in place: the
/// compiled-out build's by-name row (no `black_box` on the name, which
/// would cost by itself), whose code must be the bare workload's.
#[inline(never)]
#[allow(dead_code)] // `compare-off` only
pub fn by_name_literal(x: u64) -> u64 {
    let _g = sp::region("by_name").enter();
    work(x)
}

/// A traced function (`#[profile(traced)]`), called outside any recursive
/// entrypoint: it checks and records nothing.
#[cfg(feature = "macros")]
#[scope_profiler::profile(traced)]
#[inline(never)]
pub fn traced(x: u64) -> u64 {
    work(x)
}

/// The expansion of `#[profile(traced)]`, written by hand (used when the
/// `macros` feature is off).
#[cfg(not(feature = "macros"))]
#[inline(never)]
pub fn traced(x: u64) -> u64 {
    static SITE: sp::__private::CallSite = sp::__private::CallSite::new("traced", file!(), line!());
    let _g = SITE.enter_traced();
    work(x)
}

/// The expansion of `#[profile]`, written by hand (used when the `macros`
/// feature is off, so that the runtime-disabled row still exists).
#[cfg(not(feature = "macros"))]
#[inline(never)]
pub fn profiled(x: u64) -> u64 {
    static SITE: sp::__private::CallSite =
        sp::__private::CallSite::new("profiled", file!(), line!());
    let _g = SITE.enter();
    work(x)
}

/// Whether `profiled` is the attribute (true) or its hand-written expansion.
pub const PROFILE_IS_ATTRIBUTE: bool = cfg!(feature = "macros");

/// `#[profile] async fn` polled once to completion outside any other: a
/// task each call (the expansion written out, so that it builds without
/// the macros too).
#[inline(never)]
#[allow(dead_code)] // `compare` only
pub fn async_task(x: u64) -> u64 {
    static SITE: sp::__private::CallSite =
        sp::__private::CallSite::new("async_task", file!(), line!());
    poll_once(SITE.instrument(sp::__private::Mode::Plain, async move { work(x) }))
}

/// Polls of each future of the `async-polls` and `plain-polls` rows: it
/// waits 9 times, each poll doing the workload once.
pub const POLLS: u64 = 10;

/// Returns `Pending` once (waking itself), then `Ready`.
struct WaitOnce(bool);

impl std::future::Future for WaitOnce {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if std::mem::replace(&mut self.0, true) {
            std::task::Poll::Ready(())
        } else {
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    }
}

/// The body of the polled-`polls`-times rows: the workload in each poll.
async fn polls_body(x: u64, polls: u64) -> u64 {
    let mut acc = x;
    for _ in 1..polls {
        acc = work(acc);
        WaitOnce(false).await;
    }
    work(acc)
}

/// Polls `future` until it is ready, with a waker that does nothing.
fn poll_to_end<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

/// `#[profile] async fn` waiting 9 times: a task polled 10 times (the
/// expansion written out, as `async_task`'s).
#[inline(never)]
#[allow(dead_code)] // `compare` only
pub fn async_polls(x: u64) -> u64 {
    static SITE: sp::__private::CallSite =
        sp::__private::CallSite::new("async_polls", file!(), line!());
    poll_to_end(SITE.instrument(sp::__private::Mode::Plain, polls_body(x, POLLS)))
}

/// The same, waiting `2 * POLLS - 1` times: against [`async_polls`], what
/// each further poll costs (the first poll's and the end's share cancel).
#[inline(never)]
#[allow(dead_code)] // `compare` only
pub fn async_polls_long(x: u64) -> u64 {
    static SITE: sp::__private::CallSite =
        sp::__private::CallSite::new("async_polls_long", file!(), line!());
    poll_to_end(SITE.instrument(sp::__private::Mode::Plain, polls_body(x, 2 * POLLS)))
}

/// The same future uninstrumented: what polling it costs without us.
#[inline(never)]
#[allow(dead_code)] // `compare` only
pub fn plain_polls(x: u64) -> u64 {
    poll_to_end(polls_body(x, POLLS))
}

/// Runs `f` inside the poll of an instrumented future (a task), whose
/// recorder then takes the thread's.
#[allow(dead_code)] // `compare` only
pub fn in_task<R>(f: impl FnOnce() -> R) -> R {
    static SITE: sp::__private::CallSite =
        sp::__private::CallSite::new("in_task", file!(), line!());
    poll_once(SITE.instrument(sp::__private::Mode::Plain, async move { f() }))
}

/// The tag of [`opt_in_off`]'s region, registered as opt-in and never
/// enabled.
pub const OPT_IN_TAG: &str = "bench-opt-in";

/// A region carrying an opt-in tag that is off: resolved once per session
/// as "not recorded", then one comparison per call.
#[inline(never)]
#[allow(dead_code)] // `compare` only
pub fn opt_in_off(x: u64) -> u64 {
    static SITE: sp::__private::CallSite =
        sp::__private::CallSite::new("opt_in_off", file!(), line!())
            .with_details(&[OPT_IN_TAG], "");
    let _g = SITE.enter();
    work(x)
}

/// `#[profile(record_outcome)]` on a function returning `Result`.
#[cfg(feature = "macros")]
#[scope_profiler::profile(record_outcome)]
#[inline(never)]
#[allow(dead_code)] // `compare` only
pub fn outcome(x: u64) -> u64 {
    outcome_result(x).unwrap_or(0)
}

#[inline(always)]
#[allow(dead_code)]
fn outcome_result(x: u64) -> Result<u64, std::fmt::Error> {
    Ok(work(x))
}

/// Without the macros: the same function uninstrumented (the row then
/// measures nothing of ours).
#[cfg(not(feature = "macros"))]
#[inline(never)]
#[allow(dead_code)]
pub fn outcome(x: u64) -> u64 {
    outcome_result(x).unwrap_or(0)
}

/// A `#[profile]`-style call inside a metadata scope opened around the loop.
#[inline(never)]
#[allow(dead_code)] // `compare` only
pub fn in_metadata(x: u64) -> u64 {
    static SITE: sp::__private::CallSite =
        sp::__private::CallSite::new("in_metadata", file!(), line!());
    let _g = SITE.enter();
    work(x)
}

/// A `#[profile]`-style call in a metadata scope of its own.
#[inline(never)]
#[allow(dead_code)] // `compare` only
pub fn metadata_per_call(x: u64) -> u64 {
    static SITE: sp::__private::CallSite =
        sp::__private::CallSite::new("metadata_per_call", file!(), line!());
    let _m = sp::call_metadata([("step", x)]);
    let _g = SITE.enter();
    work(x)
}
