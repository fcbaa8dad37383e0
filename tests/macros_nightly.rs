//! `#![scope_profiler::profile_all]` as an inner attribute needs nightly
//! features: the small crate `tests/nightly` enables them, and is built and
//! run here with `RUSTC_BOOTSTRAP=1`. Its `main` checks the recorded
//! regions itself and exits non-zero when they differ.

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
}
