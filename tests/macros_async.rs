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
