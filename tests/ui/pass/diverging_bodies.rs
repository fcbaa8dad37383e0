//! Every form of `#[profile]` accepts every body that compiles without it:
//! bodies that diverge (`todo!()`, `panic!`, `loop {}`, `return` before
//! the end) and `-> !` functions.
#![deny(warnings)]
#![allow(dead_code)]

use scope_profiler::profile;

#[profile]
fn plain_todo() -> u32 {
    todo!()
}

#[profile]
fn plain_unit_panic() {
    panic!("boom");
}

#[profile(record_outcome)]
fn outcome_todo() -> u32 {
    todo!()
}

#[profile(record_outcome)]
fn outcome_unit_panic() {
    panic!("boom");
}

#[profile(record_outcome)]
fn outcome_result_todo() -> Result<u32, std::fmt::Error> {
    unimplemented!()
}

#[profile(record_outcome)]
fn outcome_loop() -> u32 {
    loop {}
}

#[profile(record_outcome)]
fn outcome_early_return(x: u32) -> u32 {
    return x;
}

#[profile(record_outcome)]
fn outcome_question_mark(x: &str) -> Result<u32, std::num::ParseIntError> {
    let n: u32 = x.parse()?;
    Ok(n)
}

#[profile(record_outcome, tags = ["io"])]
fn outcome_tags_diverge() -> String {
    panic!("no string")
}

#[profile("named", record_outcome)]
fn outcome_named_diverge() -> Vec<u8> {
    unreachable!()
}

#[profile(recursive, record_outcome)]
fn entrypoint_outcome_diverge() -> u32 {
    todo!()
}

#[profile(traced, record_outcome)]
fn traced_outcome_diverge() -> u32 {
    todo!()
}

#[profile(recursive)]
fn entrypoint_diverge() -> u32 {
    todo!()
}

#[profile(traced)]
fn traced_diverge() {
    panic!()
}

#[profile]
fn plain_never() -> ! {
    panic!("never returns")
}

#[profile(record_outcome)]
fn outcome_never() -> ! {
    panic!("never returns")
}

#[profile(record_outcome)]
fn outcome_never_loop() -> ! {
    loop {}
}

#[profile(recursive, record_outcome)]
fn entrypoint_outcome_never() -> ! {
    std::process::exit(0)
}

#[profile(traced)]
fn traced_never() -> ! {
    loop {}
}

struct S;

impl S {
    #[profile(record_outcome)]
    fn method_diverge(&self) -> &Self {
        todo!()
    }

    #[profile(record_outcome)]
    fn method_never(self) -> ! {
        panic!()
    }
}

fn main() {}
