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

use integration_tests::{check_nesting, prerequisite_missing};

/// Every profile file under `dir`, recursively, sorted.
fn profiles(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            profiles(&path, out);
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
    let mut files = Vec::new();
    profiles(Path::new(&dir), &mut files);
    files.sort();
    let (mut checked, mut calls, mut unreadable) = (0, 0, Vec::new());
    let mut failures = Vec::new();
    for path in &files {
        // The JSON reader takes any JSON file: only profiles are checked.
        let profile = match scope_profiler::read_profile(path) {
            Ok(p) => p,
            Err(e) => {
                unreadable.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        checked += 1;
        match check_nesting(&profile) {
            Ok(n) => calls += n,
            Err(errors) => failures.push(format!("{}:\n  {}", path.display(), errors.join("\n  "))),
        }
    }
    println!(
        "{checked} profiles, {calls} calls checked under {}; {} files not read:",
        Path::new(&dir).display(),
        unreadable.len()
    );
    for u in &unreadable {
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
