//! Every profile the test suites wrote lies within its parents: each call
//! of each `.h5`, `.json` and `.json.gz` file under `SP_TEST_OUTPUT` (the
//! `TMPDIR` that `scripts/run-tests.sh` gives `cargo test`) starts no
//! earlier and ends no later than its parent, on its parent's lane.
//!
//! Run after the suites, by `scripts/run-tests.sh`:
//! `SP_TEST_OUTPUT=DIR cargo test -p integration-tests --test every_file_nests -- --ignored`.
//! Files that cannot be read are listed (the reliability and hostile-file
//! tests write truncated and corrupt files on purpose), not checked.

use std::path::{Path, PathBuf};

use integration_tests::nesting::check_nesting;
use integration_tests::prerequisite_missing;

/// Every profile file under `dir`, recursively, sorted; directories with a
/// `NOT-RECORDED` file (profiles built by hand, not recorded) go to `skipped`.
fn profiles(dir: &Path, out: &mut Vec<PathBuf>, skipped: &mut Vec<PathBuf>) {
    if dir.join("NOT-RECORDED").exists() {
        skipped.push(dir.to_owned());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            profiles(&path, out, skipped);
        } else if kind.is_file() {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.ends_with(".h5") || name.ends_with(".json") || name.ends_with(".json.gz") {
                out.push(path);
            }
        }
    }
}

#[test]
#[ignore = "run by scripts/run-tests.sh after the suites, with SP_TEST_OUTPUT set"]
fn every_profile_the_tests_wrote_lies_within_its_parents() {
    let Some(dir) = std::env::var_os("SP_TEST_OUTPUT") else {
        prerequisite_missing("SP_TEST_OUTPUT (the directory the suites wrote their files in)");
        return;
    };
    let (mut files, mut skipped) = (Vec::new(), Vec::new());
    profiles(Path::new(&dir), &mut files, &mut skipped);
    files.sort();
    let (mut checked, mut calls, mut unreadable) = (0, 0, Vec::new());
    let mut failures = Vec::new();
    for path in &files {
        // Files that are not profiles, or are damaged on purpose, are
        // listed below.
        let report = match check_nesting(path) {
            Ok(report) => report,
            Err(e) => {
                unreadable.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        checked += 1;
        calls += report.calls;
        if report.violation_count() > 0 {
            failures.push(format!("{}: {report}", path.display()));
        }
    }
    println!(
        "{checked} profiles, {calls} calls checked under {}; {} files not read, {} \
         directories of hand-built profiles skipped:",
        Path::new(&dir).display(),
        unreadable.len(),
        skipped.len()
    );
    for u in unreadable.iter().chain(
        &skipped
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>(),
    ) {
        println!("  {u}");
    }
    assert!(
        failures.is_empty(),
        "calls outside their parents:\n{}",
        failures.join("\n")
    );
    // The path under test: the suites' files were found and read.
    assert!(
        checked >= 50 && calls > 100_000,
        "only {checked} profiles ({calls} calls) under {}",
        Path::new(&dir).display()
    );
}
