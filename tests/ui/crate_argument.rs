use scope_profiler::{profile, profile_all};

#[profile(crate)]
fn no_value() {}

#[profile(crate = "not a path")]
fn string_not_a_path() {}

#[profile(crate = sp, crate = sp)]
fn twice() {}

#[profile_all(crate = 1)]
mod m {}

fn main() {
    no_value();
    string_not_a_path();
    twice();
}
