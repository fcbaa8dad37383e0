use scope_profiler::profile;

#[profile(tags)]
fn no_value() {}

#[profile(tags = "io")]
fn not_a_list() {}

#[profile(tags = [io])]
fn not_a_literal() {}

#[profile(tags = ["io", ""])]
fn empty_tag() {}

#[profile(tags = ["io", "io"])]
fn repeated_tag() {}

#[profile(tags = ["io"], tags = ["net"])]
fn tags_twice() {}

#[profile(record_outcome = true)]
fn outcome_with_value() -> Result<(), ()> {
    Ok(())
}

#[profile(skip, tags = ["io"])]
fn skipped_with_tags() {}

fn main() {}
