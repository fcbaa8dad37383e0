//! Compile errors of the macros: the exact messages and the tokens they
//! point at (`tests/ui/*.stderr`). Regenerate with `TRYBUILD=overwrite`,
//! then read every changed `.stderr`.

#[test]
fn compile_errors_point_at_the_offending_token() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/*.rs");
}

/// Every form of the attribute accepts every body that compiles without
/// it (`tests/ui/pass/*.rs`, with `#![deny(warnings)]`).
#[test]
fn every_body_that_compiles_bare_compiles_instrumented() {
    let cases = trybuild::TestCases::new();
    cases.pass("ui/pass/*.rs");
}
