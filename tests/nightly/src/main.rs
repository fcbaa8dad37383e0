//! Checks `#![scope_profiler::profile_all]` on nightly features: in a module
//! file and in an inline module. Exits non-zero when the recorded regions
//! are not the expected ones.

#![feature(custom_inner_attributes, proc_macro_hygiene)]

use physics::Energy;
use scope_profiler::{self as sp, Options};

mod physics;
// Each with a deliberate `unused_variables` warning, whose position
// `tests/macros_nightly.rs` checks.
mod warned;
mod warned_items;

mod inline_scope {
    #![scope_profiler::profile_all(always)]

    pub fn tick() -> u32 {
        1
    }
}

#[scope_profiler::profile(recursive)]
fn run() -> f64 {
    let mut body = physics::Body::new(2.0);
    body.step(0.5);
    body.energy() + physics::gravity(1.0)
}

/// The line of the first line of `source` starting with `start`.
fn line_of(source: &str, start: &str) -> i64 {
    let index = source.lines().position(|l| l.trim_start().starts_with(start));
    index.expect("the function is in the file") as i64 + 1
}

/// The call sites recorded for functions of module files are in those
/// files, at the functions' own lines, under both forms.
fn check_source_lines() {
    sp::setup(Options::new().in_memory().verbose(false)).expect("setup");
    assert_eq!(warned::noisy() + warned_items::noisy(), 5);
    let results = sp::finalize().expect("finalize");
    let profile = results.profile().expect("an in-memory session");
    let mut sites: Vec<(String, String, i64)> = profile
        .rows
        .iter()
        .map(|r| {
            let name = profile.region_names[r.region_id as usize].clone();
            (name, r.source_file.clone(), r.source_line)
        })
        .collect();
    sites.sort();
    let expected = vec![
        (
            "sp_nightly_check::warned::noisy".to_owned(),
            "src/warned.rs".to_owned(),
            line_of(include_str!("warned.rs"), "pub fn noisy"),
        ),
        (
            "sp_nightly_check::warned_items::noisy".to_owned(),
            "src/warned_items.rs".to_owned(),
            line_of(include_str!("warned_items.rs"), "pub fn noisy"),
        ),
    ];
    if sites != expected {
        eprintln!("unexpected call sites:\n  recorded {sites:?}\n  expected {expected:?}");
        std::process::exit(1);
    }
    println!("source lines: {} module-file call sites as expected", sites.len());
}

fn main() {
    check_source_lines();
    sp::setup(Options::new().in_memory().verbose(false)).expect("setup");
    physics::gravity(1.0); // outside the entrypoint: not recorded
    let energy = run();
    inline_scope::tick();
    let results = sp::finalize().expect("finalize");
    let profile = results.profile().expect("an in-memory session");
    let mut recorded: Vec<(String, u64)> = profile
        .rows
        .iter()
        .map(|r| {
            (
                profile.region_names[r.region_id as usize].clone(),
                r.event_count,
            )
        })
        .collect();
    recorded.sort();
    let mut expected: Vec<(String, u64)> = [
        ("run", 1),
        ("sp_nightly_check::physics::Body::new", 1),
        ("sp_nightly_check::physics::Body::step", 1),
        ("sp_nightly_check::physics::<Body as Energy>::energy", 1),
        ("sp_nightly_check::physics::forces::drag", 1),
        ("sp_nightly_check::physics::gravity", 1),
        ("sp_nightly_check::inline_scope::tick", 1),
    ]
    .iter()
    .map(|(n, c)| (n.to_string(), *c))
    .collect();
    expected.sort();
    if recorded != expected || energy <= 0.0 {
        eprintln!("unexpected regions:\n  recorded {recorded:?}\n  expected {expected:?}");
        std::process::exit(1);
    }
    println!("inner profile_all: {} regions as expected", recorded.len());
}
