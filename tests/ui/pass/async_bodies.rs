//! `async` bodies under every form of `#[profile]`: diverging ones, ones
//! that never return (`-> !`, `loop {}`), `?`, and `record_outcome`; the
//! futures stay `Send`.
#![deny(warnings)]
#![allow(dead_code)]

use scope_profiler::profile;

#[profile]
async fn plain_todo() -> u32 {
    todo!()
}

#[profile]
async fn plain_unit_panic() {
    panic!("boom");
}

#[profile]
async fn plain_forever() {
    loop {}
}

#[profile]
async fn plain_never() -> ! {
    loop {}
}

#[profile(record_outcome)]
async fn outcome_ok() -> u32 {
    1
}

#[profile(record_outcome)]
async fn outcome_result(x: &str) -> Result<u32, std::num::ParseIntError> {
    let n: u32 = x.parse()?;
    Ok(n)
}

#[profile(record_outcome)]
async fn outcome_early_return(x: u32) -> u32 {
    if x > 1 {
        return x;
    }
    0
}

#[profile(record_outcome)]
async fn outcome_todo() -> u32 {
    todo!()
}

#[profile(record_outcome)]
async fn outcome_unit_panic() {
    panic!("boom");
}

#[profile(record_outcome)]
async fn outcome_forever() {
    loop {}
}

#[profile(record_outcome)]
async fn outcome_never() -> ! {
    loop {}
}

#[profile(recursive, record_outcome)]
async fn entrypoint_outcome(x: u32) -> Result<u32, String> {
    Ok(x)
}

#[profile(traced, record_outcome)]
async fn traced_outcome_diverge() -> u32 {
    panic!()
}

#[profile("named", tags = ["net"], record_outcome)]
async fn named_outcome(v: &[u8]) -> usize {
    v.len()
}

#[profile(record_outcome)]
fn boxed_outcome() -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<u8, ()>> + Send>> {
    Box::pin(async move { Ok(1) })
}

#[profile(record_outcome)]
fn block_outcome() -> impl std::future::Future<Output = u8> {
    async move { 1 }
}

#[profile(record_outcome)]
fn boxed_outcome_diverge() -> std::pin::Pin<Box<dyn std::future::Future<Output = u32> + Send>> {
    Box::pin(async move { todo!() })
}

#[profile(record_outcome)]
fn block_outcome_diverge() -> impl std::future::Future<Output = Result<u8, String>> {
    async move { unimplemented!() }
}

#[profile(record_outcome)]
fn block_outcome_never() -> impl std::future::Future<Output = std::convert::Infallible> {
    async move { loop {} }
}

#[profile(record_outcome)]
async fn outcome_impl_future_out() -> impl std::future::Future<Output = u8> {
    async { 1 }
}

struct S(u32);

impl S {
    #[profile(record_outcome)]
    async fn method(&self) -> Result<u32, std::fmt::Error> {
        Ok(self.0)
    }

    #[profile(record_outcome)]
    async fn method_diverge(&mut self) -> u32 {
        todo!()
    }
}

fn assert_send<T: Send>(_: T) {}

fn main() {
    assert_send(outcome_result("1"));
    assert_send(outcome_todo());
    assert_send(outcome_forever());
    assert_send(named_outcome(&[]));
    assert_send(S(1).method());
}
