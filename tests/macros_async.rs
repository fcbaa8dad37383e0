//! `async fn` under `#[profile]` and `profile_all`: the futures stay `Send`,
//! run on a multi-threaded tokio executor, and record one call each from
//! first poll to completion.

#![deny(warnings)]

use std::collections::BTreeMap;
use std::future::Future;
use std::num::ParseIntError;
use std::pin::Pin;

use integration_tests::{calls_per_region, count_map, start_in_memory};
use scope_profiler::{self as sp, profile, profile_all};
use tokio::task::yield_now;

/// Ends the session; the calls per region, read from the results.
fn finalized_counts() -> BTreeMap<String, u64> {
    let results = sp::finalize().unwrap();
    calls_per_region(results.profile().unwrap())
}

/// Compile-time check: the argument's type is `Send`.
fn assert_send<T: Send>(_: &T) {}

#[profile]
async fn fetch(id: u32) -> u32 {
    yield_now().await;
    id + 1
}

#[profile("parse_async")]
async fn parse(text: &str) -> Result<u32, ParseIntError> {
    let value: u32 = text.parse()?;
    yield_now().await;
    if value == 0 {
        return Ok(1);
    }
    Ok(value)
}

#[profile]
async fn boxed_error(text: String) -> Result<u32, Box<dyn std::error::Error + Send + Sync>> {
    yield_now().await;
    let value: u32 = text.parse()?;
    if value > 100 {
        Err("too large")?;
    }
    Ok(value)
}

#[profile]
async fn impl_trait_out(n: u32) -> impl std::fmt::Display + Send {
    yield_now().await;
    n * 2
}

#[profile]
async fn generic<T: Send + Clone>(value: T, mut count: usize) -> Vec<T> {
    let mut out = Vec::new();
    while count > 0 {
        out.push(value.clone());
        count -= 1;
        yield_now().await;
    }
    out
}

#[profile]
async fn no_return_type(flag: &mut bool) {
    yield_now().await;
    *flag = true;
}

#[profile(recursive)]
async fn async_entry(n: u32) -> u32 {
    let a = traced_async(n).await;
    let client = service::Client { base: 10 };
    let b = client.get(n).await;
    a + b + client.consume().await + service::plain_traced()
}

#[profile(traced)]
async fn traced_async(n: u32) -> u32 {
    yield_now().await;
    n
}

#[profile_all]
mod service {
    use tokio::task::yield_now;

    pub struct Client {
        pub base: u32,
    }

    impl Client {
        pub async fn get(&self, key: u32) -> u32 {
            yield_now().await;
            self.base + key
        }

        pub async fn consume(self) -> u32 {
            yield_now().await;
            self.base
        }
    }

    pub fn plain_traced() -> u32 {
        1
    }
}

pub trait Store {
    fn load(&self) -> impl Future<Output = u32> + Send;
}

pub struct Memory(u32);

/// Native `async fn` in a trait impl, under `profile_all(always)`.
#[profile_all(always)]
impl Store for Memory {
    async fn load(&self) -> u32 {
        yield_now().await;
        self.0
    }
}

pub struct Legacy(u32);

impl Legacy {
    /// The shape `#[async_trait]` gives a method: the boxed future is
    /// instrumented, so the call lasts until the future completes.
    #[profile("legacy_load")]
    #[allow(clippy::manual_async_fn)]
    pub fn load(&self) -> Pin<Box<dyn Future<Output = u32> + Send + '_>> {
        Box::pin(async move {
            yield_now().await;
            self.0
        })
    }

    /// A sync fn returning an `async` block.
    #[profile("legacy_block")]
    #[allow(clippy::manual_async_fn)]
    pub fn block(&self) -> impl Future<Output = u32> + Send + '_ {
        async move { self.0 + 1 }
    }
}

#[test]
fn instrumented_futures_are_send() {
    assert_send(&fetch(1));
    assert_send(&parse("1"));
    assert_send(&boxed_error(String::new()));
    assert_send(&impl_trait_out(1));
    assert_send(&generic(1u8, 1));
    let mut flag = false;
    assert_send(&no_return_type(&mut flag));
    assert_send(&async_entry(1));
    assert_send(&traced_async(1));
    let client = service::Client { base: 1 };
    assert_send(&client.get(1));
    assert_send(&Memory(1).load());
    assert_send(&Legacy(1).load());
    assert_send(&Legacy(1).block());
}

/// Runs `future` on a multi-threaded tokio runtime with two workers.
fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("tokio runtime")
        .block_on(future)
}

#[test]
fn async_fns_run_on_a_multi_threaded_executor() {
    let _s = start_in_memory();
    block_on(run_every_async_form());
}

async fn run_every_async_form() {
    let handles: Vec<_> = (0..16).map(|i| tokio::spawn(fetch(i))).collect();
    let mut total = 0;
    for handle in handles {
        total += handle.await.unwrap();
    }
    assert_eq!(total, (1..=16).sum::<u32>());
    assert_eq!(tokio::spawn(parse("41")).await.unwrap(), Ok(41));
    assert_eq!(parse("0").await, Ok(1));
    assert!(parse("x").await.is_err());
    assert!(boxed_error("1000".into()).await.is_err());
    assert!(boxed_error("y".into()).await.is_err());
    assert_eq!(boxed_error("7".into()).await.unwrap(), 7);
    assert_eq!(impl_trait_out(4).await.to_string(), "8");
    assert_eq!(
        tokio::spawn(generic("a", 3)).await.unwrap(),
        ["a", "a", "a"]
    );
    let mut flag = false;
    no_return_type(&mut flag).await;
    assert!(flag);
    assert_eq!(Memory(5).load().await, 5);
    assert_eq!(Legacy(6).load().await, 6);
    assert_eq!(Legacy(6).block().await, 7);

    let counts = finalized_counts();
    assert_eq!(
        counts,
        count_map(&[
            ("fetch", 16),
            ("parse_async", 3),
            ("boxed_error", 3),
            ("impl_trait_out", 1),
            ("generic", 1),
            ("no_return_type", 1),
            ("macros_async::<Memory as Store>::load", 1),
            ("legacy_load", 1),
            ("legacy_block", 1),
        ])
    );
    // Read back after finalize through the region handles too.
    assert_eq!(sp::get_region("fetch").unwrap().num_calls(), 16);
}

#[test]
fn async_entrypoint_traces_async_and_sync_functions() {
    let _s = start_in_memory();
    block_on(run_async_entrypoint());
}

async fn run_async_entrypoint() {
    // Outside the entrypoint, traced functions record nothing.
    assert_eq!(traced_async(1).await, 1);
    assert_eq!(service::Client { base: 0 }.get(1).await, 1);

    assert_eq!(tokio::spawn(async_entry(2)).await.unwrap(), 2 + 12 + 10 + 1);
    assert_eq!(
        finalized_counts(),
        count_map(&[
            ("async_entry", 1),
            ("macros_async::traced_async", 1),
            ("macros_async::service::Client::get", 1),
            ("macros_async::service::Client::consume", 1),
            ("macros_async::service::plain_traced", 1),
        ])
    );
}

#[test]
fn a_future_dropped_before_its_first_poll_records_nothing() {
    let _s = start_in_memory();
    drop(fetch(1));
    assert!(finalized_counts().is_empty());
}

// ---------------------------------------------------------------------------
// Nesting: calls made while an instrumented future is polled nest under it.
// ---------------------------------------------------------------------------

/// One call as the file has it: its region, id, parent id and task.
#[derive(Clone, Debug)]
struct Call {
    name: String,
    id: i64,
    parent: i64,
    task: i64,
}

/// Every call of the in-memory profile `finalize` returns.
fn finalized_calls() -> Vec<Call> {
    let results = sp::finalize().unwrap();
    let p = results.profile().unwrap();
    let mut calls = Vec::new();
    for row in &p.rows {
        for i in row.events() {
            calls.push(Call {
                name: p.region_names[row.region_id as usize].clone(),
                id: p.events.call_ids[i],
                parent: p.events.parent_ids[i],
                task: p.events.task_ids.as_ref().map_or(-1, |t| t[i]),
            });
        }
    }
    calls
}

fn named<'a>(calls: &'a [Call], name: &str) -> Vec<&'a Call> {
    calls.iter().filter(|c| c.name == name).collect()
}

fn by_id(calls: &[Call], id: i64) -> Option<&Call> {
    calls.iter().find(|c| c.id == id)
}

#[profile]
fn parse_sync(x: u32) -> u32 {
    x + 1
}

#[profile]
async fn handler(x: u32) -> u32 {
    let a = parse_sync(x);
    yield_now().await;
    parse_sync(a)
}

/// Checks that every `handler` call has exactly two `parse_sync` children
/// on its own task, and that both are nowhere else.
fn assert_handlers_own_their_parses(calls: &[Call], handlers: usize) {
    let hs = named(calls, "handler");
    assert_eq!(hs.len(), handlers, "{calls:#?}");
    for h in &hs {
        assert_eq!(h.parent, -1, "a handler is a root: {h:?}");
        assert!(h.task >= 0, "a handler is a task: {h:?}");
        let children: Vec<_> = named(calls, "parse_sync")
            .into_iter()
            .filter(|c| c.parent == h.id)
            .collect();
        assert_eq!(children.len(), 2, "children of {h:?}: {calls:#?}");
        assert!(children.iter().all(|c| c.task == h.task), "{children:?}");
    }
}

#[test]
fn sync_calls_nest_under_the_future_being_polled_current_thread() {
    let _s = start_in_memory();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    assert_eq!(rt.block_on(handler(1)), 3);
    let calls = finalized_calls();
    assert_handlers_own_their_parses(&calls, 1);
    assert_eq!(named(&calls, "parse_sync").len(), 2);
}

#[test]
fn concurrent_handlers_on_two_workers_each_own_their_calls() {
    let _s = start_in_memory();
    let total = block_on(async {
        let handles: Vec<_> = (0..4).map(|i| tokio::spawn(handler(i))).collect();
        let mut total = 0;
        for h in handles {
            total += h.await.unwrap();
        }
        total
    });
    assert_eq!(total, (0..4).map(|i| i + 2).sum::<u32>());
    let calls = finalized_calls();
    assert_handlers_own_their_parses(&calls, 4);
    assert_eq!(named(&calls, "parse_sync").len(), 8);
}

#[profile]
async fn inner_async(x: u32) -> u32 {
    yield_now().await;
    parse_sync(x)
}

#[profile]
async fn outer_async(x: u32) -> u32 {
    let a = inner_async(x).await;
    yield_now().await;
    a + inner_async(a).await
}

#[test]
fn nested_async_fns_nest() {
    let _s = start_in_memory();
    assert_eq!(block_on(outer_async(1)), 2 + 3);
    let calls = finalized_calls();
    let outer = named(&calls, "outer_async");
    assert_eq!(outer.len(), 1);
    let inners = named(&calls, "inner_async");
    assert_eq!(inners.len(), 2);
    for inner in &inners {
        assert_eq!(inner.parent, outer[0].id, "{calls:#?}");
        assert_eq!(inner.task, outer[0].task);
    }
    for parse in named(&calls, "parse_sync") {
        let parent = by_id(&calls, parse.parent).expect("parse has a parent");
        assert_eq!(parent.name, "inner_async", "{calls:#?}");
    }
}

#[profile]
async fn spawner() -> u32 {
    let child = tokio::spawn(handler(10));
    parse_sync(0) + child.await.unwrap()
}

#[test]
fn a_spawned_future_starts_its_own_tree() {
    let _s = start_in_memory();
    assert_eq!(block_on(spawner()), 1 + 12);
    let calls = finalized_calls();
    let spawner = named(&calls, "spawner");
    assert_eq!(spawner.len(), 1);
    assert_handlers_own_their_parses(&calls, 1);
    let handler = named(&calls, "handler")[0];
    assert_ne!(
        handler.task, spawner[0].task,
        "the spawned task is its own task"
    );
    let own: Vec<_> = named(&calls, "parse_sync")
        .into_iter()
        .filter(|c| c.parent == spawner[0].id)
        .collect();
    assert_eq!(own.len(), 1, "{calls:#?}");
}

#[profile]
async fn never_done() {
    parse_sync(0);
    {
        let _g = sp::region("held_across_await").enter();
        std::future::pending::<()>().await;
    }
}

#[test]
fn a_cancelled_future_leaves_a_valid_tree() {
    let _s = start_in_memory();
    let mut future = Box::pin(never_done());
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    assert!(future.as_mut().poll(&mut cx).is_pending());
    drop(future); // cancelled after one poll
    let calls = finalized_calls();
    let root = named(&calls, "never_done");
    assert_eq!(root.len(), 1, "the cancelled call is recorded: {calls:#?}");
    assert_eq!(root[0].parent, -1);
    for name in ["parse_sync", "held_across_await"] {
        let c = named(&calls, name);
        assert_eq!(c.len(), 1, "{name}: {calls:#?}");
        assert_eq!(
            c[0].parent, root[0].id,
            "{name} nests under the cancelled call"
        );
    }
}

#[test]
fn sync_calls_outside_futures_stay_on_their_thread() {
    let _s = start_in_memory();
    let outside = parse_sync(1);
    assert_eq!(block_on(handler(outside)), 4);
    let calls = finalized_calls();
    let roots: Vec<_> = named(&calls, "parse_sync")
        .into_iter()
        .filter(|c| c.parent == -1)
        .collect();
    assert_eq!(roots.len(), 1, "{calls:#?}");
    assert_eq!(roots[0].task, -1, "a thread's call has no task");
    assert_handlers_own_their_parses(&calls, 1);
}

#[profile]
async fn long_task(n: u32) -> u32 {
    let mut x = 0;
    for i in 0..n {
        x = parse_sync(x);
        if i % 1000 == 0 {
            yield_now().await;
        }
    }
    x
}

/// A task with more calls than its private chunk holds gets a lane of its
/// own; with a small memory limit every tasks lane spills, and the file
/// keeps every call under its task.
#[test]
fn long_and_many_tasks_spill_and_keep_their_nesting() {
    let _s = integration_tests::serial();
    let dir = integration_tests::temp_dir("async-spill");
    let path = dir.join("tasks.h5");
    sp::setup(
        sp::Options::new()
            .file_path(&path)
            .verbose(false)
            .memory_limit(1 << 20),
    )
    .unwrap();
    let (long, short) = block_on(async {
        let long = tokio::spawn(long_task(200_000));
        let shorts: Vec<_> = (0..2_000).map(|i| tokio::spawn(handler(i))).collect();
        let mut sum = 0;
        for s in shorts {
            sum += s.await.unwrap();
        }
        (long.await.unwrap(), sum)
    });
    assert_eq!(long, 200_000);
    assert_eq!(short, (0..2_000).map(|i| i + 2).sum::<u32>());
    let results = sp::finalize().unwrap();
    assert!(results.health().spilled_bytes > 0, "the run spilled");
    let p = sp::read_profile(&path).unwrap();
    let mut calls = Vec::new();
    for row in &p.rows {
        for i in row.events() {
            calls.push(Call {
                name: p.region_names[row.region_id as usize].clone(),
                id: p.events.call_ids[i],
                parent: p.events.parent_ids[i],
                task: p.events.task_ids.as_ref().map_or(-1, |t| t[i]),
            });
        }
    }
    let by_id: std::collections::HashMap<i64, &Call> = calls.iter().map(|c| (c.id, c)).collect();
    let long_call = named(&calls, "long_task");
    assert_eq!(long_call.len(), 1);
    let mut per_parent: std::collections::HashMap<&str, usize> = Default::default();
    for c in named(&calls, "parse_sync") {
        let parent = by_id.get(&c.parent).expect("every parse has a parent");
        assert_eq!(parent.task, c.task, "{c:?} and its parent are on one task");
        *per_parent.entry(parent.name.as_str()).or_default() += 1;
    }
    assert_eq!(per_parent.get("long_task"), Some(&200_000));
    assert_eq!(per_parent.get("handler"), Some(&4_000));
    assert_eq!(named(&calls, "handler").len(), 2_000);
    let tasks: std::collections::BTreeSet<i64> = calls.iter().map(|c| c.task).collect();
    assert_eq!(
        tasks.len(),
        2_001,
        "one task per spawned future, none for threads"
    );
    assert_eq!(p.tasks.len(), 2_001);
}

#[profile]
async fn panics_in_poll() {
    parse_sync(0);
    yield_now().await;
    panic!("inside a poll");
}

/// A poll that panics gives the thread its own recorder back; the task's
/// call ends when the future is dropped, with what it called under it.
#[test]
fn a_panic_inside_a_poll_leaves_a_valid_tree() {
    let _s = start_in_memory();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let outcome = rt.block_on(async { tokio::spawn(panics_in_poll()).await });
    assert!(outcome.unwrap_err().is_panic());
    let after = parse_sync(5); // on the thread again, not in the task
    assert_eq!(after, 6);
    drop(rt);
    let calls = finalized_calls();
    let root = named(&calls, "panics_in_poll");
    assert_eq!(root.len(), 1, "{calls:#?}");
    let parses = named(&calls, "parse_sync");
    assert_eq!(parses.len(), 2);
    assert_eq!(
        parses.iter().filter(|c| c.parent == root[0].id).count(),
        1,
        "{calls:#?}"
    );
    let outside: Vec<_> = parses.iter().filter(|c| c.parent == -1).collect();
    assert_eq!(outside.len(), 1);
    assert_eq!(
        outside[0].task, -1,
        "the call after the panic is the thread's"
    );
}

/// Polls two futures in turn until both are done (what `join!` does).
struct Join2<A: Future, B: Future> {
    a: Pin<Box<A>>,
    b: Pin<Box<B>>,
    out_a: Option<A::Output>,
    out_b: Option<B::Output>,
}

impl<A: Future, B: Future> Future for Join2<A, B>
where
    A::Output: Unpin,
    B::Output: Unpin,
{
    type Output = (A::Output, B::Output);
    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let this = &mut *self;
        if this.out_a.is_none() {
            this.out_a = match this.a.as_mut().poll(cx) {
                std::task::Poll::Ready(v) => Some(v),
                std::task::Poll::Pending => None,
            };
        }
        if this.out_b.is_none() {
            this.out_b = match this.b.as_mut().poll(cx) {
                std::task::Poll::Ready(v) => Some(v),
                std::task::Poll::Pending => None,
            };
        }
        match (this.out_a.take(), this.out_b.take()) {
            (Some(a), Some(b)) => std::task::Poll::Ready((a, b)),
            (a, b) => {
                (this.out_a, this.out_b) = (a, b);
                std::task::Poll::Pending
            }
        }
    }
}

fn join2<A: Future, B: Future>(a: A, b: B) -> Join2<A, B> {
    Join2 {
        a: Box::pin(a),
        b: Box::pin(b),
        out_a: None,
        out_b: None,
    }
}

#[profile]
async fn joiner() -> u32 {
    let (x, y) = join2(inner_async(1), inner_async(2)).await;
    x + y
}

#[test]
fn futures_polled_in_turn_each_nest_under_their_caller() {
    let _s = start_in_memory();
    assert_eq!(block_on(joiner()), 2 + 3);
    let calls = finalized_calls();
    let joiner = named(&calls, "joiner");
    assert_eq!(joiner.len(), 1);
    let inners = named(&calls, "inner_async");
    assert_eq!(inners.len(), 2);
    for inner in &inners {
        assert_eq!(
            inner.parent, joiner[0].id,
            "a joined future nests under its caller: {calls:#?}"
        );
        let own: Vec<_> = named(&calls, "parse_sync")
            .into_iter()
            .filter(|c| c.parent == inner.id)
            .collect();
        assert_eq!(own.len(), 1, "each has its own call: {calls:#?}");
    }
}

#[profile]
async fn calls_between_polls() {
    let mut pending = Box::pin(inner_async(1));
    std::future::poll_fn(|cx| {
        let _ = pending.as_mut().poll(cx);
        std::task::Poll::Ready(())
    })
    .await;
    parse_sync(7); // while `inner_async` waits: the caller's own call
    pending.await;
}

#[test]
fn a_call_between_a_nested_futures_polls_is_its_callers() {
    let _s = start_in_memory();
    block_on(calls_between_polls());
    let calls = finalized_calls();
    let caller = named(&calls, "calls_between_polls")[0].id;
    let inner = named(&calls, "inner_async")[0].id;
    let parents: Vec<i64> = named(&calls, "parse_sync")
        .iter()
        .map(|c| c.parent)
        .collect();
    assert_eq!(
        parents.iter().filter(|&&p| p == caller).count(),
        1,
        "{calls:#?}"
    );
    assert_eq!(
        parents.iter().filter(|&&p| p == inner).count(),
        1,
        "{calls:#?}"
    );
}

#[profile]
async fn long_inner(n: u32) -> u32 {
    let mut x = 0;
    for i in 0..n {
        x = parse_sync(x);
        if i % 500 == 0 {
            yield_now().await;
        }
    }
    x
}

#[profile]
async fn long_outer(n: u32) -> u32 {
    let (a, b) = join2(long_inner(n), long_inner(n)).await;
    a + b
}

/// Nested futures with more calls than a frame's first chunk: the frames
/// grow and keep every call under their future; past the store's chunk
/// size a frame becomes a task of its own, its calls still under it.
#[test]
fn long_nested_futures_keep_every_call() {
    let _s = integration_tests::serial();
    sp::setup(
        sp::Options::new()
            .in_memory()
            .verbose(false)
            .memory_limit(1 << 20),
    )
    .unwrap();
    assert_eq!(block_on(long_outer(3_000)), 6_000);
    let calls = finalized_calls();
    let inners = named(&calls, "long_inner");
    assert_eq!(inners.len(), 2);
    for inner in &inners {
        let own = named(&calls, "parse_sync")
            .into_iter()
            .filter(|c| c.parent == inner.id)
            .count();
        assert_eq!(own, 3_000, "{inner:?}");
    }
    assert_eq!(named(&calls, "parse_sync").len(), 6_000);
}

// ---- record_outcome on async fns ---------------------------------------------

#[profile(record_outcome)]
async fn checked(text: &str) -> Result<u32, ParseIntError> {
    yield_now().await;
    text.parse()
}

#[profile(record_outcome)]
async fn counted(n: u32) -> u32 {
    yield_now().await;
    n
}

#[profile(record_outcome)]
async fn explode(really: bool) -> u32 {
    yield_now().await;
    if really {
        panic!("explode");
    }
    1
}

/// A plain instrumented future polling two `record_outcome` ones in turn
/// (their calls overlap, at one depth, in its task).
#[profile]
async fn outcome_parent() -> u32 {
    let (a, b) = both(checked("1"), checked("x")).await;
    a.unwrap() + u32::from(b.is_err()) + counted(2).await
}

/// Awaits a panicking `record_outcome` future inside its own call.
#[profile]
async fn panicking_parent() -> u32 {
    explode(true).await
}

/// Polls `a` and `b` in turn until both are ready (`join!`).
async fn both<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    use std::task::Poll;
    let (mut a, mut b) = (std::pin::pin!(a), std::pin::pin!(b));
    let (mut ra, mut rb) = (None, None);
    std::future::poll_fn(move |cx| {
        ra = ra.take().or_else(|| ready(a.as_mut().poll(cx)));
        rb = rb.take().or_else(|| ready(b.as_mut().poll(cx)));
        match (ra.take(), rb.take()) {
            (Some(x), Some(y)) => Poll::Ready((x, y)),
            (x, y) => {
                (ra, rb) = (x, y);
                Poll::Pending
            }
        }
    })
    .await
}

/// A poll's value, if it is ready.
fn ready<T>(poll: std::task::Poll<T>) -> Option<T> {
    match poll {
        std::task::Poll::Ready(v) => Some(v),
        std::task::Poll::Pending => None,
    }
}

/// The `status` (and `exception`, if any) of each call of `region`, sorted.
fn outcomes(profile: &sp::Profile, region: &str) -> Vec<String> {
    let row = profile
        .rows
        .iter()
        .find(|r| profile.region_names[r.region_id as usize] == region)
        .unwrap_or_else(|| panic!("no row {region}"));
    assert_eq!(row.event_metadata.len() as u64, row.event_count, "{region}");
    let mut out: Vec<String> = row
        .event_metadata
        .iter()
        .map(|call| {
            call.iter()
                .map(|(k, v)| format!("{k}={v:?}"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    out.sort();
    out
}

#[test]
fn async_record_outcome_records_ok_error_and_panics_while_polled() {
    let _s = start_in_memory();
    assert_send(&checked("1"));
    assert_send(&outcome_parent());
    block_on(async {
        // Tasks of their own, on the executor's threads.
        assert_eq!(tokio::spawn(checked("5")).await.unwrap(), Ok(5));
        assert!(tokio::spawn(checked("-1")).await.unwrap().is_err());
        assert_eq!(tokio::spawn(counted(3)).await.unwrap(), 3);
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let panicked = tokio::spawn(explode(true)).await.unwrap_err();
        let nested = tokio::spawn(panicking_parent()).await.unwrap_err();
        std::panic::set_hook(hook);
        assert!(panicked.is_panic() && nested.is_panic());
        assert_eq!(tokio::spawn(explode(false)).await.unwrap(), 1);
        // Frames of another task, and futures awaited by the test's own.
        assert_eq!(tokio::spawn(outcome_parent()).await.unwrap(), 4);
        assert_eq!(checked("7").await, Ok(7));
    });
    let results = sp::finalize().unwrap();
    let profile = results.profile().unwrap();
    let ok = r#"status=Str("ok")"#;
    let error = r#"status=Str("error") exception=Str("core::num::error::ParseIntError")"#;
    let panic = r#"status=Str("panic")"#;
    assert_eq!(
        outcomes(profile, "checked"),
        [error, error, ok, ok, ok],
        "5, -1, 1 and x in outcome_parent, 7"
    );
    assert_eq!(outcomes(profile, "counted"), [ok, ok]);
    assert_eq!(outcomes(profile, "explode"), [ok, panic, panic]);
    // The futures without record_outcome have no metadata.
    for plain in ["outcome_parent", "panicking_parent"] {
        let row = profile
            .rows
            .iter()
            .find(|r| profile.region_names[r.region_id as usize] == plain)
            .unwrap();
        assert!(row.event_metadata.is_empty(), "{plain}");
    }
}

/// A sync `record_outcome` function: its calls inside an async call land
/// on the task's lane, where an ok outcome rides in the record and an
/// error is matched by the call's region and start.
#[profile(record_outcome)]
fn parse_in_task(text: &str) -> Result<u32, ParseIntError> {
    text.parse()
}

#[profile]
async fn parses_in_task(texts: &'static [&'static str]) -> usize {
    let mut good = 0;
    for text in texts {
        good += usize::from(parse_in_task(text).is_ok());
        yield_now().await;
    }
    good
}

#[test]
fn sync_record_outcome_calls_inside_tasks_keep_their_outcomes() {
    let _s = start_in_memory();
    block_on(async {
        assert_eq!(
            tokio::spawn(parses_in_task(&["1", "x", "2"]))
                .await
                .unwrap(),
            2
        );
        assert_eq!(parses_in_task(&["y", "3"]).await, 1);
    });
    assert_eq!(parse_in_task("4"), Ok(4)); // on the thread's lane
    let results = sp::finalize().unwrap();
    let profile = results.profile().unwrap();
    let ok = r#"status=Str("ok")"#;
    let error = r#"status=Str("error") exception=Str("core::num::error::ParseIntError")"#;
    assert_eq!(
        outcomes(profile, "parse_in_task"),
        [error, error, ok, ok, ok, ok]
    );
    assert!(
        profile
            .events
            .task_ids
            .as_ref()
            .is_some_and(|t| t.iter().filter(|&&t| t >= 0).count() >= 7),
        "the calls inside the async calls are on task lanes"
    );
}
