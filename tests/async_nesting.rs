//! Async call trees in the await patterns of real async code (issue 37): a
//! future held in a struct and polled across two sync calls, large futures
//! awaited inside a trace, traced futures spawned onto other workers. Every
//! call lies within its parent's span, on its parent's lane, in the profile
//! `finalize` returns and in the `.h5` and `.json` files it writes.

#![deny(warnings)]

use std::collections::BTreeMap;
use std::future::Future;
use std::hint::black_box;
use std::path::Path;
use std::pin::Pin;
use std::task::{Context, Poll};

use integration_tests::{profile_nesting, serial, temp_dir};
use scope_profiler::{self as sp, Options, Profile, profile};
use tokio::task::yield_now;

/// Runs `future` on a multi-threaded tokio runtime with two workers.
fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("tokio runtime")
        .block_on(future)
}

/// One call: its region's name, its id, its parent's id, its span.
#[derive(Clone, Debug)]
struct Call {
    name: String,
    id: i64,
    parent: i64,
    start: i64,
    end: i64,
}

/// Every call of `p`, named without this crate's path (traced functions'
/// names are qualified).
fn calls(p: &Profile) -> Vec<Call> {
    let e = &p.events;
    let mut out = Vec::new();
    for row in &p.rows {
        let name = &p.region_names[row.region_id as usize];
        let name = name.strip_prefix("async_nesting::").unwrap_or(name);
        for i in row.events() {
            out.push(Call {
                name: name.to_owned(),
                id: e.call_ids[i],
                parent: e.parent_ids[i],
                start: e.start_ns[i],
                end: e.start_ns[i] + e.durations[i],
            });
        }
    }
    out
}

fn named<'a>(calls: &'a [Call], name: &str) -> Vec<&'a Call> {
    calls.iter().filter(|c| c.name == name).collect()
}

/// The name of each call's parent ("-" for a root), per call name, counted.
fn parent_names(calls: &[Call]) -> BTreeMap<(String, String), usize> {
    let by_id: BTreeMap<i64, &Call> = calls.iter().map(|c| (c.id, c)).collect();
    let mut out = BTreeMap::new();
    for c in calls {
        let parent = by_id
            .get(&c.parent)
            .map_or_else(|| "-".to_owned(), |p| p.name.clone());
        *out.entry((c.name.clone(), parent)).or_insert(0) += 1;
    }
    out
}

fn pairs(list: &[(&str, &str, usize)]) -> BTreeMap<(String, String), usize> {
    list.iter()
        .map(|(c, p, n)| ((c.to_string(), p.to_string()), *n))
        .collect()
}

/// Checks the nesting of `p` and returns its calls.
fn nested_calls(p: &Profile, what: &str) -> Vec<Call> {
    let report = profile_nesting(p);
    assert_eq!(report.violation_count(), 0, "{what}: {report}");
    assert_eq!(report.calls, p.events.len() as u64);
    calls(p)
}

/// Reads `path` back, checks its nesting, returns its calls.
fn file_calls(path: &Path) -> Vec<Call> {
    let p = sp::read_profile(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    nested_calls(&p, &path.display().to_string())
}

// ---- a future held in a struct, polled across two sync calls -------------

#[profile]
async fn inner() {
    yield_now().await
}

#[profile]
fn poll_held(f: &mut Pin<Box<dyn Future<Output = ()> + Send>>, cx: &mut Context<'_>) -> Poll<()> {
    // A call of the sync function's own before it polls the held future:
    // it stays this call's child whatever is placed after it.
    leaf();
    f.as_mut().poll(cx)
}

#[profile]
fn leaf() -> u32 {
    black_box(1)
}

#[profile]
async fn outer() {
    let mut held: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(inner());
    std::future::poll_fn(|cx| poll_held(&mut held, cx)).await;
    for _ in 0..10 {
        leaf();
    }
}

/// The program: `inner` starts in the first `poll_held` and ends in
/// the second, so it nests under `outer`, the innermost call that contains
/// it, not under the second `poll_held`; the `leaf` each `poll_held` makes
/// stays under it, and the ten later ones under `outer`. The same tree in
/// the profile, the `.h5` and the `.json`.
#[test]
fn a_future_polled_across_two_sync_calls_nests_under_the_call_containing_it() {
    let _s = serial();
    let dir = temp_dir("held-future");
    let expected = pairs(&[
        ("outer", "-", 1),
        ("poll_held", "outer", 2),
        ("inner", "outer", 1),
        ("leaf", "poll_held", 2),
        ("leaf", "outer", 10),
    ]);
    let mut trees = Vec::new();
    for name in ["held.h5", "held.json"] {
        let path = dir.join(name);
        sp::setup(Options::new().file_path(&path).verbose(false)).unwrap();
        block_on(outer());
        sp::finalize().unwrap();
        let read = file_calls(&path);
        assert_eq!(parent_names(&read), expected, "{name}: {read:#?}");
        let inner = named(&read, "inner")[0];
        let first = named(&read, "poll_held")
            .into_iter()
            .min_by_key(|c| c.start)
            .unwrap();
        assert!(
            inner.start < first.end,
            "the path under test: inner starts in the first poll_held"
        );
        trees.push(parent_names(&read));
    }
    assert_eq!(trees[0], trees[1], ".h5 and .json");
}

#[profile]
async fn big_inner(n: u32) {
    for i in 0..n {
        leaf();
        if i == n / 2 {
            yield_now().await;
        }
    }
}

#[profile]
async fn big_outer(n: u32) {
    let mut held: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(big_inner(n));
    std::future::poll_fn(|cx| poll_held(&mut held, cx)).await;
    leaf();
}

/// The same pattern with a future too large for a frame's chunk (it gets a
/// lane of its own, placed under `big_outer` when it ends), in a session
/// small enough to spill: every call under the right parent.
#[test]
fn a_large_held_future_nests_under_the_call_containing_it_and_spills() {
    let _s = serial();
    let dir = temp_dir("large-held-future");
    let path = dir.join("large.h5");
    sp::setup(
        Options::new()
            .file_path(&path)
            .verbose(false)
            .memory_limit(1 << 20),
    )
    .unwrap();
    block_on(big_outer(40_000));
    let results = sp::finalize().unwrap();
    let expected = pairs(&[
        ("big_outer", "-", 1),
        ("poll_held", "big_outer", 2),
        ("big_inner", "big_outer", 1),
        ("leaf", "poll_held", 2),
        ("leaf", "big_inner", 40_000),
        ("leaf", "big_outer", 1),
    ]);
    assert!(
        results.health().spilled_bytes > 0,
        "the path under test: the session spilled"
    );
    assert_eq!(parent_names(&file_calls(&path)), expected);
}

// ---- large futures awaited inside a trace ---------------------------------

#[profile(traced)]
fn step(x: u64) -> u64 {
    black_box(x + 1)
}

#[profile(traced)]
async fn stage(n: u64) -> u64 {
    let mut x = 0;
    for i in 0..n {
        x = step(x);
        if i % 4_096 == 0 {
            yield_now().await;
        }
    }
    x
}

#[profile(recursive)]
async fn pipeline() -> u64 {
    let mut total = 0;
    for n in [50_000, 10, 30_000, 20, 40_000] {
        total += stage(n).await;
    }
    total
}

/// Five awaited sub-futures, three of them with more calls than a frame's
/// chunk: each stays under the function awaiting it, whose own time is
/// then a small part of its time (it was 292 of 351 ms in the issue).
#[test]
fn large_futures_awaited_in_a_trace_stay_under_their_awaiter() {
    let _s = serial();
    sp::setup(
        Options::new()
            .in_memory()
            .verbose(false)
            .memory_limit(1 << 20),
    )
    .unwrap();
    assert_eq!(block_on(pipeline()), 120_030);
    let results = sp::finalize().unwrap();
    let profile = results.profile().unwrap();
    let recorded = nested_calls(profile, "the profile");
    let expected = pairs(&[
        ("pipeline", "-", 1),
        ("stage", "pipeline", 5),
        ("step", "stage", 120_030),
    ]);
    assert_eq!(parent_names(&recorded), expected);
    let row = |name: &str| {
        profile
            .rows
            .iter()
            .find(|r| profile.region_names[r.region_id as usize].ends_with(name))
            .unwrap()
    };
    let (own, total) = (row("pipeline").exclusive, row("pipeline").stats.total);
    assert!(
        own * 2 < total,
        "pipeline's own time {own} ns of {total} ns: its stages are its children"
    );
}

// ---- traced futures spawned onto other workers ----------------------------

#[profile(traced)]
async fn codec(n: u64) -> u64 {
    yield_now().await;
    step(n)
}

#[profile(recursive)]
async fn serve() -> u64 {
    let handles: Vec<_> = (0..8).map(|n| tokio::spawn(codec(n))).collect();
    let mut total = 0;
    for h in handles {
        total += h.await.unwrap();
    }
    total
}

/// Futures made inside a trace carry it: spawned, polled by other workers
/// outside `serve`'s polls, they record, and so do the traced calls they
/// make. A traced future made outside any trace records nothing.
#[test]
fn traced_futures_spawned_from_a_trace_record_wherever_they_run() {
    let _s = serial();
    sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    assert_eq!(block_on(serve()), 36);
    // Outside a trace: nothing.
    assert_eq!(block_on(async { tokio::spawn(codec(1)).await.unwrap() }), 2);
    let results = sp::finalize().unwrap();
    let recorded = nested_calls(results.profile().unwrap(), "the profile");
    let expected = pairs(&[("serve", "-", 1), ("codec", "-", 8), ("step", "codec", 8)]);
    assert_eq!(parent_names(&recorded), expected);
}

// ---- a future moved from one task to another -------------------------------

#[profile]
async fn moved() {
    yield_now().await;
    leaf();
}

/// Polls a `moved` future once and hands it on, unfinished.
#[profile]
async fn first_poller() -> Pin<Box<dyn Future<Output = ()> + Send>> {
    let mut held: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(moved());
    std::future::poll_fn(|cx| {
        assert!(held.as_mut().poll(cx).is_pending());
        Poll::Ready(())
    })
    .await;
    held
}

#[profile]
async fn finisher(held: Pin<Box<dyn Future<Output = ()> + Send>>) {
    held.await
}

/// A future first polled in one task and completed in another that started
/// after it: nothing open contains it, so it is a task of its own, kept
/// whole (its call and its `leaf`).
#[test]
fn a_future_moved_to_a_later_task_is_a_task_of_its_own() {
    let _s = serial();
    sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("tokio runtime");
    let held = runtime.block_on(first_poller());
    runtime.block_on(finisher(held));
    let results = sp::finalize().unwrap();
    let recorded = nested_calls(results.profile().unwrap(), "the profile");
    let expected = pairs(&[
        ("first_poller", "-", 1),
        ("finisher", "-", 1),
        ("moved", "-", 1),
        ("leaf", "moved", 1),
    ]);
    assert_eq!(parent_names(&recorded), expected);
}

// ---- first polls recorded as plain calls ---------------------------------

/// Returns `Pending` once (waking itself), then `Ready`.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if std::mem::replace(&mut self.0, true) {
            Poll::Ready(())
        } else {
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

#[profile]
async fn quick(calls: u32) -> u32 {
    (0..calls).map(|_| leaf()).sum()
}

#[profile]
async fn waits_once() -> u32 {
    let before = leaf() + leaf();
    YieldOnce(false).await;
    before + leaf()
}

#[profile]
async fn awaits_quick() -> u32 {
    quick(2).await + leaf()
}

#[profile]
async fn boom() {
    leaf();
    panic!("boom");
}

/// Polls `f` once with a waker that does nothing.
fn poll_once<F: Future>(f: Pin<&mut F>) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(std::task::Waker::noop()))
}

/// Polls `f` to completion inside a sync call of its own.
#[profile]
fn caller<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    loop {
        if let Poll::Ready(v) = poll_once(f.as_mut()) {
            return v;
        }
    }
}

/// A future that completes in its first poll is a call of the recorder
/// that polls it, under the call it was polled in: no task (the path that
/// made one is not taken), its calls under it, as a sync function's.
#[test]
fn a_future_completing_in_its_first_poll_is_a_call_of_its_caller() {
    let _s = serial();
    sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    assert_eq!(caller(quick(3)), 3);
    assert_eq!(caller(quick(0)), 0);
    let results = sp::finalize().unwrap();
    let p = results.profile().unwrap();
    assert_eq!(p.tasks.len(), 0, "no task for a future that never waited");
    let calls = nested_calls(p, "first poll");
    assert_eq!(
        parent_names(&calls),
        pairs(&[
            ("caller", "-", 2),
            ("quick", "caller", 2),
            ("leaf", "quick", 3)
        ])
    );
}

/// A first poll that waits makes the future a task from that poll on: the
/// calls it made before it waited move to the task, under its call, with
/// those of its second poll; the sync call that polled it holds none.
#[test]
fn a_first_poll_that_waits_makes_a_task_with_the_calls_it_made() {
    let _s = serial();
    sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    assert_eq!(caller(waits_once()), 3);
    let results = sp::finalize().unwrap();
    let p = results.profile().unwrap();
    assert_eq!(p.tasks.len(), 1, "{:?}", p.tasks);
    assert_eq!(p.tasks[0].steps, 2, "its two polls");
    let calls = nested_calls(p, "waits");
    assert_eq!(
        parent_names(&calls),
        pairs(&[
            ("caller", "-", 1),
            ("waits_once", "-", 1),
            ("leaf", "waits_once", 3)
        ])
    );
    let task_ids = p.events.task_ids.as_ref().expect("task ids");
    for row in &p.rows {
        let name = &p.region_names[row.region_id as usize];
        for i in row.events() {
            let in_task = name != "caller";
            assert_eq!(task_ids[i] >= 0, in_task, "{name}");
        }
    }
}

/// More calls in a first poll than the spec chunk holds (64): the future
/// becomes a task as the chunk fills, and every call is kept under it.
#[test]
fn more_calls_in_a_first_poll_than_its_chunk_holds_are_all_kept() {
    let _s = serial();
    sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    assert_eq!(caller(quick(200)), 200);
    assert_eq!(caller(quick(5)), 5);
    let results = sp::finalize().unwrap();
    let p = results.profile().unwrap();
    assert_eq!(p.tasks.len(), 1, "the large first poll only");
    let calls = nested_calls(p, "large");
    assert_eq!(
        parent_names(&calls),
        pairs(&[
            ("caller", "-", 2),
            ("quick", "caller", 1),
            ("quick", "-", 1),
            ("leaf", "quick", 205),
        ])
    );
}

/// An instrumented future first polled inside another's first poll makes
/// that one a task, and is a frame of it: it nests under it.
#[test]
fn a_future_first_polled_in_a_first_poll_nests_under_it() {
    let _s = serial();
    sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    assert_eq!(caller(awaits_quick()), 3);
    let results = sp::finalize().unwrap();
    let p = results.profile().unwrap();
    assert_eq!(p.tasks.len(), 1);
    let calls = nested_calls(p, "nested");
    assert_eq!(
        parent_names(&calls),
        pairs(&[
            ("caller", "-", 1),
            ("awaits_quick", "-", 1),
            ("quick", "awaits_quick", 1),
            ("leaf", "quick", 2),
            ("leaf", "awaits_quick", 1),
        ])
    );
}

/// A first poll that panics ends its call as a sync call's does, and the
/// thread records on as before.
#[test]
fn a_first_poll_that_panics_ends_its_call() {
    let _s = serial();
    sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let panicked = std::panic::catch_unwind(|| caller(boom()));
    std::panic::set_hook(hook);
    assert!(panicked.is_err());
    assert_eq!(caller(quick(1)), 1);
    let results = sp::finalize().unwrap();
    let p = results.profile().unwrap();
    assert_eq!(p.tasks.len(), 0);
    let calls = nested_calls(p, "panic");
    assert_eq!(
        parent_names(&calls),
        pairs(&[
            ("caller", "-", 2),
            ("boom", "caller", 1),
            ("quick", "caller", 1),
            ("leaf", "boom", 1),
            ("leaf", "quick", 1),
        ])
    );
}

/// Runs a `first_poller` task on this thread, inside a call of its own:
/// the `moved` future it returns, a frame of it, waits.
#[profile]
fn start_held(rt: &tokio::runtime::Runtime) -> Pin<Box<dyn Future<Output = ()> + Send>> {
    rt.block_on(first_poller())
}

/// Polls `held` to completion on this thread, inside a call of its own.
#[profile]
fn finish_held(held: Pin<Box<dyn Future<Output = ()> + Send>>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("tokio runtime");
    rt.block_on(held);
}

/// A frame completed in a sync call (`finish_held`) that started after it
/// is placed when that call ends, after its record: the last record of
/// the chunk then ended first. A one-value metadata scope ending after it
/// (whose end is the last call's, with no clock read) still reaches the
/// call the frame waited for.
#[test]
fn a_scope_ending_after_a_frame_placed_late_reaches_the_call_it_waited_for() {
    let _s = serial();
    sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    // The thread's first scope makes its block of rows (through `Cold`,
    // with a clock read): the next one ends on the fast path.
    drop(sp::call_metadata([("k", 0_i64)]));
    {
        let _a = sp::region("a").enter();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("tokio runtime");
        let held = start_held(&rt);
        let _m = sp::call_metadata([("k", 1_i64)]);
        finish_held(held);
    }
    let results = sp::finalize().unwrap();
    let p = results.profile().unwrap();
    let calls = nested_calls(p, "late");
    assert_eq!(
        parent_names(&calls),
        pairs(&[
            ("a", "-", 1),
            ("start_held", "a", 1),
            ("first_poller", "-", 1),
            ("finish_held", "a", 1),
            ("moved", "a", 1),
            ("leaf", "moved", 1),
        ])
    );
    let meta = |name: &str| {
        let row = p
            .rows
            .iter()
            .find(|r| p.region_names[r.region_id as usize].ends_with(name))
            .unwrap_or_else(|| panic!("no row {name}"));
        row.event_metadata.clone()
    };
    assert_eq!(meta("finish_held"), [[("k".to_owned(), sp::Value::Int(1))]]);
    assert!(
        meta("moved").iter().all(Vec::is_empty),
        "it started before the scope"
    );
}
