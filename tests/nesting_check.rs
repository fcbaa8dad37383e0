//! `integration_tests::nesting`, the check of `sp-check-nesting`: it finds
//! calls outside their parents and parents that are missing, and passes a
//! recorded session's file.

use integration_tests::nesting::{Violation, check_nesting, check_reader};
use integration_tests::{serial, temp_dir};
use scope_profiler::{self as sp, Events, Options, Profile, RegionRow};
use scope_profiler_reader::ProfileReader;

/// A profile of one region "r" whose calls are `(id, parent, start, end)`,
/// all on thread 0.
fn profile_of(calls: &[(i64, i64, i64, i64)]) -> Profile {
    let mut events = Events::default();
    for &(id, parent, start, end) in calls {
        events.call_ids.push(id);
        events.parent_ids.push(parent);
        events.start_ns.push(start);
        events.durations.push(end - start);
        events.thread_ids.push(0);
    }
    let mut row = RegionRow::default();
    row.event_count = calls.len() as u64;
    let mut profile = Profile::default();
    profile.region_names = vec!["r".to_owned()];
    profile.rows = vec![row];
    profile.events = events;
    profile
}

fn check(calls: &[(i64, i64, i64, i64)]) -> integration_tests::nesting::NestingReport {
    let reader = ProfileReader::from_profile(profile_of(calls)).unwrap();
    check_reader(&reader).unwrap()
}

#[test]
fn nested_calls_pass() {
    let report = check(&[
        (0, -1, 100, 200),
        (1, 0, 100, 150),
        (2, 1, 120, 150),
        (3, 0, 160, 200),
    ]);
    assert_eq!((report.calls, report.roots), (4, 1));
    assert_eq!(report.violation_count(), 0, "{report}");
}

#[test]
fn a_child_outside_its_parent_is_a_violation() {
    // Call 2 starts before its parent (the held future's shape of issue 37),
    // call 3 ends after its parent.
    let report = check(&[
        (0, -1, 100, 200),
        (1, 0, 150, 180),
        (2, 1, 140, 170),
        (3, 0, 190, 210),
    ]);
    assert_eq!(
        report.violations.get(&Violation::Outside),
        Some(&2),
        "{report}"
    );
    assert_eq!(report.violation_count(), 2);
    let text = report.to_string();
    assert!(text.contains("Outside x2"), "{text}");
    assert!(text.contains("call 2 [-10, +20] ns"), "{text}");
}

#[test]
fn a_missing_parent_and_a_larger_parent_id_are_violations() {
    let report = check(&[
        (0, -1, 100, 200),
        (1, 7, 120, 130),
        (2, 3, 140, 150),
        (3, 0, 130, 160),
    ]);
    assert_eq!(
        report.violations.get(&Violation::MissingParent),
        Some(&1),
        "{report}"
    );
    assert_eq!(
        report.violations.get(&Violation::IdOrder),
        Some(&1),
        "{report}"
    );
}

#[sp::profile]
fn leaf() -> u32 {
    std::hint::black_box(1)
}

#[sp::profile]
fn branch() -> u32 {
    (0..3).map(|_| leaf()).sum()
}

#[test]
fn a_recorded_file_passes() {
    let _serial = serial();
    let dir = temp_dir("nesting-check");
    let path = dir.join("run.h5");
    sp::setup(Options::new().file_path(&path).verbose(false)).unwrap();
    let threads: Vec<_> = (0..2)
        .map(|_| std::thread::spawn(|| (0..10).map(|_| branch()).sum::<u32>()))
        .collect();
    for thread in threads {
        assert_eq!(thread.join().unwrap(), 30);
    }
    sp::finalize().unwrap();
    let report = check_nesting(&path).unwrap();
    assert_eq!(
        (report.calls, report.roots, report.in_tasks),
        (80, 20, 0),
        "{report}"
    );
    assert_eq!(report.violation_count(), 0, "{report}");
}
