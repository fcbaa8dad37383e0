#![scope_profiler::profile_all(always)]
//! The nightly form on a module file, with a deliberate warning: rustc
//! re-parses the file's tokens, so the warning points at `mod warned;`.

pub fn noisy() -> u32 {
    let unused_in_nightly_form = 1;
    2
}
