//! Checks `#![scope_profiler::profile_all]` on nightly features: in a module
//! file and in an inline module. Exits non-zero when the recorded regions
//! are not the expected ones.

#![feature(custom_inner_attributes, proc_macro_hygiene)]

use physics::Energy;
use scope_profiler::{self as sp, Options};

mod physics;

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

fn main() {
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
