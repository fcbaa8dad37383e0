use scope_profiler::profile;

#[profile(fast)]
fn solve() {}

#[profile("solve", recursive, verbose = true)]
fn solve_named() {}

fn main() {
    solve();
    solve_named();
}
