//! Compile errors of the macros: the exact messages and the tokens they
//! point at (`tests/ui/*.stderr`). Regenerate with `TRYBUILD=overwrite`,
//! then read every changed `.stderr`.

#[test]
fn compile_errors_point_at_the_offending_token() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/*.rs");
}
