//! The files we write open in the Python package's own reader and CLI.
//!
//! Makes (once, cached under the target directory) a venv with
//! `scope-profiler==0.7.5` from PyPI, runs `scope-profiler/examples/regions.rs` to write a
//! file (`.h5`, then the JSON profile, `.json`), and runs
//! `tests/interop/check_regions.py` on each: region names, call counts,
//! tags, per-call metadata, threads and nesting through `scope_profiler.load`, and
//! `scope-profiler inspect | report | export speedscope | chrome-trace | prof`.
//!
//! Without python3 or PyPI the test is skipped with a loud SKIP, except
//! under `CI=true`, where that is a failure (see `prerequisite_missing`).

use std::path::{Path, PathBuf};
use std::process::Command;

use integration_tests::{output_ok, prerequisite_missing, reader_python};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is in the workspace")
        .to_path_buf()
}

#[test]
fn python_reader_opens_the_example_file() {
    let python = match reader_python(env!("CARGO_TARGET_TMPDIR"), true) {
        Ok(p) => p,
        Err(why) => return prerequisite_missing(&format!("interop test: {why}")),
    };
    let dir = integration_tests::temp_dir("interop");
    for name in ["regions.h5", "regions.json"] {
        let file = dir.join(name);
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let example = output_ok(
            Command::new(cargo)
                .current_dir(workspace_root())
                .args([
                    "run",
                    "--quiet",
                    "-p",
                    "scope-profiler",
                    "--example",
                    "regions",
                    "--",
                ])
                .arg(&file),
            "run cargo",
            "scope-profiler/examples/regions.rs failed",
        );
        let stderr = String::from_utf8_lossy(&example.stderr);
        assert!(
            stderr.contains("└─ inner"),
            "the summary is printed:\n{stderr}"
        );

        let check = Command::new(&python)
            .arg(workspace_root().join("tests/interop/check_regions.py"))
            .arg(&file)
            .output()
            .expect("run python");
        let out = String::from_utf8_lossy(&check.stdout);
        println!("{out}");
        assert!(
            check.status.success(),
            "the Python reader disagrees:\n{out}\n{}",
            String::from_utf8_lossy(&check.stderr)
        );
        assert!(
            out.contains("interop: 15 regions, 428 calls, 0 failure(s)"),
            "{out}"
        );
    }
}
