use scope_profiler::profile;

#[profile(recursive, traced)]
fn entry_and_traced() {}

#[profile(skip, "name")]
fn skipped_with_name() {}

#[profile(recursive = true)]
fn flag_with_value() {}

#[profile]
#[profile("again")]
fn profiled_twice() {}

fn main() {
    entry_and_traced();
    skipped_with_name();
    flag_with_value();
    profiled_twice();
}
