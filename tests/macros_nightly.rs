//! `#![scope_profiler::profile_all]` as an inner attribute needs nightly
//! features: the small crate `tests/nightly` enables them, and is built and
//! run here with `RUSTC_BOOTSTRAP=1`. Its `main` checks the recorded
//! regions, and the source lines of functions in module files under both
//! forms, itself and exits non-zero when they differ. Here, the positions of
//! the compiler's warnings in those files are checked too.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A subfolder of the workspace's target dir, so that later runs reuse the
/// build and the stable builds are left alone.
fn target_dir() -> PathBuf {
    let base = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    base.join("nightly")
}

#[test]
fn inner_profile_all_attribute_works_with_nightly_features() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("nightly/Cargo.toml");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["run", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .env("RUSTC_BOOTSTRAP", "1")
        .env("CARGO_TARGET_DIR", target_dir())
        .output()
        .expect("run cargo");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "nightly check failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("inner profile_all: 7 regions as expected"),
        "unexpected output:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("source lines: 2 module-file call sites as expected"),
        "unexpected output:\n{stdout}\n{stderr}"
    );
    // The stable form keeps every span: the warning is at the variable.
    let variable = "unused_in_stable_form";
    let line = line_of(include_str!("nightly/src/warned_items.rs"), "let unused");
    assert_eq!(
        warning_at(&stderr, variable),
        format!("src/warned_items.rs:{line}:13"),
        "{stderr}"
    );
    // The nightly inner attribute on a module file gets tokens rustc
    // re-parsed, all at the parent's `mod warned;` (a rustc limitation the
    // docs state; the call sites' lines are right, see `main`). When rustc
    // starts handing real spans, this fails: update the docs.
    let variable = "unused_in_nightly_form";
    let line = line_of(include_str!("nightly/src/main.rs"), "mod warned;");
    assert_eq!(
        warning_at(&stderr, variable),
        format!("src/main.rs:{line}:1"),
        "{stderr}"
    );
}

/// Where the compiler says `variable` is unused: the `--> file:line:col`
/// after its warning.
fn warning_at(stderr: &str, variable: &str) -> String {
    let warning = format!("warning: unused variable: `{variable}`");
    let mut lines = stderr.lines().skip_while(|l| !l.contains(&warning));
    lines.next();
    let arrow = lines.next().unwrap_or_default();
    arrow.trim_start().trim_start_matches("--> ").to_owned()
}

/// The 1-based line of the first line of `source` starting with `start`.
fn line_of(source: &str, start: &str) -> usize {
    let index = source
        .lines()
        .position(|l| l.trim_start().starts_with(start));
    index.expect("the line is in the file") + 1
}
