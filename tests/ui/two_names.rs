use scope_profiler::profile;

#[profile("solver", name = "solve")]
fn literal_then_named() {}

#[profile("solver", "solve")]
fn two_literals() {}

fn main() {
    literal_then_named();
    two_literals();
}
