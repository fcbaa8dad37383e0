//! `impl Trait` returns under every form of `#[profile]`, diverging or not.
#![deny(warnings)]
#![allow(dead_code)]

use scope_profiler::profile;

#[profile]
fn plain_iter() -> impl Iterator<Item = u32> {
    0..3
}

#[profile(record_outcome)]
fn outcome_iter() -> impl Iterator<Item = u32> {
    0..3
}

#[profile(record_outcome)]
fn outcome_display() -> impl std::fmt::Display {
    7
}

#[profile(record_outcome)]
fn outcome_debug_diverge() -> impl std::fmt::Debug {
    todo!()
}

#[profile(record_outcome)]
fn outcome_impl_in_result() -> Result<impl std::fmt::Debug, std::fmt::Error> {
    Ok(1)
}

#[profile(record_outcome)]
fn outcome_closure(k: u32) -> impl Fn(u32) -> u32 {
    move |x| x + k
}

#[profile(recursive, record_outcome)]
fn entrypoint_outcome_iter() -> impl Iterator<Item = u8> {
    std::iter::empty()
}

#[profile(traced)]
fn traced_debug_diverge() -> impl std::fmt::Debug {
    unimplemented!()
}

#[profile]
async fn async_impl_trait() -> impl std::fmt::Debug {
    1
}

#[profile(record_outcome)]
async fn async_outcome_impl_trait() -> impl std::fmt::Debug {
    1
}

#[profile(record_outcome)]
async fn async_outcome_impl_trait_diverge() -> impl std::fmt::Debug {
    todo!()
}

#[profile(record_outcome)]
fn outcome_borrowing<'a>(v: &'a [u32]) -> impl Iterator<Item = &'a u32> + 'a {
    v.iter()
}

fn main() {}
