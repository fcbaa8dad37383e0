//! What this crate's tests need from outside: the reference files of the
//! Python package and the C API, and a Python with h5py. A missing one is
//! a failure under `CI=true` (a test that passes without testing is a
//! defect) and a loud skip elsewhere.

use std::path::{Path, PathBuf};

/// The reference files: written by the Python package 0.7.5 and its C API.
pub(crate) const REFERENCE: &str = "/work/shared/reference";

/// The reference files.
pub(crate) const REFERENCE_FILES: [&str; 4] = [
    "python_schema3.h5",
    "python_features.h5",
    "python_aggregate.h5",
    "c_schema2.h5",
];

/// A prerequisite is missing: a panic under `CI=true`, a SKIP line elsewhere.
pub(crate) fn missing(why: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("a prerequisite is missing under CI=true: {why}");
    }
    eprintln!("SKIP (not under CI): {why}");
}

/// The reference file `name`, if present (see [`missing`]).
pub(crate) fn reference(name: &str) -> Option<PathBuf> {
    let path = Path::new(REFERENCE).join(name);
    match path.exists() {
        true => Some(path),
        false => {
            missing(&format!("{} is missing", path.display()));
            None
        }
    }
}

/// A Python that imports h5py: `SP_H5PY`, else the interop test's venv
/// (`target/tmp/interop-venv`, which `scripts/run-tests.sh` makes before
/// the tests run); see [`missing`].
pub(crate) fn h5py() -> Option<PathBuf> {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/tmp/interop-venv/bin/python");
    let python = std::env::var_os("SP_H5PY").map_or(venv, PathBuf::from);
    let imports = std::process::Command::new(&python)
        .args(["-c", "import h5py"])
        .output()
        .is_ok_and(|o| o.status.success());
    match imports {
        true => Some(python),
        false => {
            missing(&format!("{} cannot import h5py", python.display()));
            None
        }
    }
}

/// Two regions of three calls each, nested by parent ids, one of them named
/// with a NUL: a small profile of ours for tests that write a file.
pub(crate) fn small_profile() -> crate::profile::Profile {
    let mut p = crate::profile::Profile::default();
    p.region_names = vec!["a".into(), "b\u{0}c".into()];
    for (region, offset) in [(0u32, 0u64), (1, 3)] {
        let mut row = crate::profile::RegionRow::default();
        row.region_id = region;
        row.event_offset = offset;
        row.event_count = 3;
        p.rows.push(row);
    }
    p.events.start_ns = vec![10, 20, 30, 11, 21, 31];
    p.events.durations = vec![5, 5, 5, 1, 1, 1];
    p.events.call_ids = (0..6).collect();
    p.events.parent_ids = vec![-1, -1, -1, 0, 1, 2];
    p.events.thread_ids = vec![0; 6];
    p.threads.push(crate::profile::ThreadInfo::default());
    p
}
