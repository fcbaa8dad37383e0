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

/// Issue 24, item 2: the same workload written as `.h5` and as `.json` (the
/// Python package's JSON profile) reads back equal in the Python package:
/// region names, calls per region, and every call's parent's region; the
/// JSON file also opens in its `inspect`. Threads and a task included.
#[test]
fn a_json_profile_reads_back_in_python_as_the_hdf5_file_does() {
    use scope_profiler::{self as sp, Options};
    let Some(python) = integration_tests::made_reader_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let dir = integration_tests::temp_dir("json-profile");
    let record = |path: &Path| {
        let _s = integration_tests::serial();
        let run = sp::setup(Options::new().file_path(path).verbose(false)).unwrap();
        std::thread::scope(|s| {
            for name in ["worker-a", "worker-b"] {
                std::thread::Builder::new()
                    .name(name.into())
                    .spawn_scoped(s, || {
                        for i in 0..20 {
                            let _step = sp::region("step").enter();
                            sp::region("inner").run(|| {
                                let _scope = sp::call_metadata([("i", i)]);
                                sp::region("leaf \"quoted\" é").run(|| ());
                            });
                        }
                    })
                    .unwrap();
            }
        });
        let results = run.finalize().unwrap();
        assert_eq!(results.file_path(), Some(path));
    };
    let (h5, json) = (dir.join("run.h5"), dir.join("run.json"));
    record(&h5);
    record(&json);
    let check = Command::new(&python)
        .arg("-c")
        .arg(
            r#"
import subprocess, sys
from pathlib import Path
import scope_profiler as sp

def shape(results):
    out = {}
    for region in results.get_regions():
        for rank, r in region.regions.items():
            names = {int(c): region.name for c in r.call_ids}
            out[region.name] = (int(r.num_calls), names)
    by_id = {}
    for name, (n, ids) in out.items():
        by_id.update(ids)
    parents = {}
    for region in results.get_regions():
        for rank, r in region.regions.items():
            for p in r.parent_ids:
                parents.setdefault(region.name, set()).add(by_id.get(int(p), "-"))
    return {name: n for name, (n, _) in out.items()}, parents

h5 = sp.read_h5(sys.argv[1])
js = sp.load(sys.argv[2])
assert shape(h5) == shape(js), (shape(h5), shape(js))
counts, parents = shape(js)
assert counts == {"step": 40, "inner": 40, 'leaf "quoted" é': 40}, counts
assert parents == {"step": {"-"}, "inner": {"step"}, 'leaf "quoted" é': {"inner"}}, parents
cli = Path(sys.executable).with_name("scope-profiler")
done = subprocess.run([cli, "inspect", sys.argv[2]], capture_output=True, text=True)
assert done.returncode == 0 and "inner" in done.stdout, done.stderr
print("json ok", counts)
"#,
        )
        .arg(&h5)
        .arg(&json)
        .output()
        .expect("run python");
    let out = String::from_utf8_lossy(&check.stdout);
    assert!(
        check.status.success() && out.contains("json ok"),
        "{out}\n{}",
        String::from_utf8_lossy(&check.stderr)
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A sample file we write (`scope_profiler_reader::sps`) is what the
/// Python package's `native_samples.read_samples` reads, field by field.
/// A sampled session's `.sps` file, read by the Python package's
/// `scope-profiler native-lines` (which symbolizes with addr2line or
/// llvm-symbolizer): each region's hottest function is the one it spun in.
#[test]
fn native_lines_names_each_regions_hottest_function() {
    use integration_tests::{busy_alpha, busy_beta};
    use scope_profiler::{self as sp, Options};
    let python = match reader_python(env!("CARGO_TARGET_TMPDIR"), true) {
        Ok(p) => p,
        Err(why) => return prerequisite_missing(&format!("interop test: {why}")),
    };
    if cfg!(scope_profiler_portable) {
        return; // no sampling there (tests/sampling.rs checks the error)
    }
    let _serial = integration_tests::serial();
    let dir = integration_tests::temp_dir("interop-native-lines");
    let path = dir.join("native.h5");
    if let Err(e) = sp::setup(
        Options::new()
            .file_path(&path)
            .verbose(false)
            .sample_hz(1000),
    ) {
        return prerequisite_missing(&format!("no sampling here: {e}"));
    }
    sp::region("alpha").run(|| busy_alpha(300));
    sp::region("beta").run(|| busy_beta(200));
    let results = sp::finalize().unwrap();
    let sps = results.samples_path().unwrap().to_path_buf();
    let out = output_ok(
        Command::new(&python)
            .args(["-m", "scope_profiler", "native-lines", "--no-source"])
            .arg(&sps),
        "run scope-profiler native-lines",
        "native-lines failed",
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    for (region, own) in [("alpha", "busy_alpha"), ("beta", "busy_beta")] {
        // The region's block: its header, the table's header and rule,
        // then its lines, hottest first.
        let block = printed
            .split("\n\n")
            .find(|b| b.starts_with(&format!("{region}  (")))
            .unwrap_or_else(|| panic!("no block for {region} in:\n{printed}"));
        let hottest = block.lines().nth(3).unwrap_or("");
        assert!(
            hottest.contains(own) && hottest.contains("lib.rs:"),
            "{region}'s hottest line is not in {own}:\n{printed}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn python_reads_our_sample_file() {
    use scope_profiler_reader::sps::{Sample, SampleFile};
    let python = match reader_python(env!("CARGO_TARGET_TMPDIR"), true) {
        Ok(p) => p,
        Err(why) => return prerequisite_missing(&format!("interop test: {why}")),
    };
    let dir = integration_tests::temp_dir("interop-sps");
    let path = dir.join("run_rank00002.sps");
    let file = SampleFile {
        rank: 2,
        hz: 997,
        ticks: 12345,
        regions: vec!["main".into(), "sölve".into()],
        modules: vec![("/bin/app".into(), 0x5555_0000_0000)],
        samples: vec![
            Sample {
                region: 1,
                module: 0,
                address: 0x5555_0000_1234,
            },
            Sample {
                region: -1,
                module: -1,
                address: 7,
            },
        ],
    };
    std::fs::write(&path, file.to_bytes()).unwrap();
    let script = "import sys\n\
        from scope_profiler.native_samples import read_samples\n\
        f = read_samples(sys.argv[1])\n\
        print(f.rank, f.hz, f.ticks, f.regions, f.modules, f.samples.tolist())\n";
    let out = output_ok(
        Command::new(&python).arg("-c").arg(script).arg(&path),
        "run python",
        "native_samples.read_samples failed",
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    let (base, address) = (0x5555_0000_0000u64, 0x5555_0000_1234u64);
    assert_eq!(
        printed.trim(),
        format!(
            "2 997 12345 ['main', 'sölve'] [('/bin/app', {base})] [(1, 0, {address}), (-1, -1, 7)]"
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
