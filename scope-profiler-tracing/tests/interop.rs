//! Files written through the layer, in both modes, open in the Python
//! package's reader with the same calls and the same parents as ours, and
//! its `inspect` accepts them.
//!
//! Without python3 or PyPI the test is skipped with a loud SKIP, except
//! under `CI=true`, where that is a failure (see `prerequisite_missing`).

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::{parent_counts, runtime};
use integration_tests::{made_reader_python, output_ok, serial, temp_dir};
use scope_profiler::{self as sp, Options, profile};
use tracing::{Dispatch, Instrument};
use tracing_subscriber::prelude::*;

#[profile]
fn ours(i: u32) -> u32 {
    tracing_fixture_dep::db::transaction(i)
}

fn hex(s: &str) -> String {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap() as char)
        .collect()
}

/// (name, parent name) -> calls, as the Python reader sees `file`.
fn python_parent_counts(python: &Path, file: &Path) -> BTreeMap<(String, Option<String>), u64> {
    let out = output_ok(
        Command::new(python)
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check_nesting.py"))
            .arg(file),
        "run python",
        format_args!("the Python reader failed on {}", file.display()),
    );
    let mut counts = BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let (name, parent) = line.split_once(' ').unwrap();
        let parent = (parent != "-").then(|| hex(parent));
        *counts.entry((hex(name), parent)).or_insert(0) += 1;
    }
    counts
}

#[test]
fn python_reader_reads_both_modes_with_exact_nesting() {
    let Some(python) = made_reader_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let _s = serial();
    let dir = temp_dir("tracing-interop");
    for lifetime in [false, true] {
        let layer = if lifetime {
            scope_profiler_tracing::layer().span_lifetime()
        } else {
            scope_profiler_tracing::layer()
        };
        let dispatch = Dispatch::new(tracing_subscriber::registry().with(layer));
        let rt = runtime(2, &dispatch);
        let _default = tracing::dispatcher::set_default(&dispatch);
        let file = dir.join(format!("tracing-{lifetime}.h5"));
        let run = sp::setup(Options::new().file_path(&file).verbose(false)).unwrap();
        ours(3);
        let handles: Vec<_> = (0..6)
            .map(|i| {
                rt.spawn(
                    async move {
                        tokio::task::yield_now().await;
                        ours(i)
                    }
                    .instrument(tracing::info_span!(target: "app", "task")),
                )
            })
            .collect();
        rt.block_on(async {
            for h in handles {
                h.await.unwrap();
            }
        });
        run.finalize().unwrap();
        drop(rt);
        let profile = sp::read_profile(&file).unwrap();
        let expected = parent_counts(&profile);
        // transaction(i) runs i queries: 3 + (0 + 1 + ... + 5).
        let want = if lifetime {
            // Every span is one call on a task lane of its own: a root.
            common::expect(&[
                ("app::task", None, 6),
                ("ours", None, 7),
                ("tracing_fixture_dep::db::transaction", None, 7),
                ("tracing_fixture_dep::db::query", None, 18),
            ])
        } else {
            common::expect(&[
                ("app::task", None, 18), // 2 polls + the drop, per task
                ("ours", None, 1),
                ("ours", Some("app::task"), 6),
                ("tracing_fixture_dep::db::transaction", Some("ours"), 7),
                (
                    "tracing_fixture_dep::db::query",
                    Some("tracing_fixture_dep::db::transaction"),
                    18,
                ),
            ])
        };
        assert_eq!(expected, want);
        assert_eq!(profile.tasks.len(), if lifetime { 6 + 7 + 18 } else { 0 });
        assert_eq!(
            python_parent_counts(&python, &file),
            expected,
            "{}",
            file.display()
        );
    }
}

#[test]
fn span_fields_read_back_in_python() {
    let Some(python) = made_reader_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let _s = serial();
    let dir = temp_dir("tracing-fields");
    let file = dir.join("fields.h5");
    let layer = scope_profiler_tracing::layer().record_fields(true);
    let dispatch = Dispatch::new(tracing_subscriber::registry().with(layer));
    tracing::dispatcher::with_default(&dispatch, || {
        let run = sp::setup(Options::new().file_path(&file).verbose(false)).unwrap();
        for i in 0..3u64 {
            tracing::info_span!(target: "app", "query", step = i, table = "users").in_scope(|| ());
        }
        run.finalize().unwrap();
    });
    let script = "import sys, json, scope_profiler\n\
                  r = scope_profiler.read_h5(sys.argv[1])\n\
                  print(json.dumps(list(r['app::query'].regions[0].event_metadata)))";
    let out = output_ok(
        Command::new(python).args(["-c", script]).arg(&file),
        "run python",
        "the Python reader failed",
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        r#"[{"step": 0, "table": "users"}, {"step": 1, "table": "users"}, {"step": 2, "table": "users"}]"#
    );
}
