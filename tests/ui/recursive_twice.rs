use scope_profiler::profile;

#[profile("solve", recursive, recursive)]
fn solve() {}

fn main() {
    solve();
}
