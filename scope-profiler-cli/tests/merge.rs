//! `scope-prof merge`: a Rust session's profile merged into a host
//! profile of the same process whose calls ran it, thread by thread; the
//! result read back by us and by the Python package.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use integration_tests::{made_reader_python, serial, temp_dir};
use scope_profiler::{
    self as sp, Compression, Events, Options, Profile, RegionRow, ThreadInfo, Value,
};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_scope-prof"))
}

/// A real session: on two named threads, three `rust.kernel` calls, each
/// with a `rust.inner` call inside.
fn rust_profile() -> Profile {
    let _guard = serial();
    sp::setup(Options::new().in_memory().verbose(false)).expect("setup");
    std::thread::scope(|s| {
        for name in ["worker-a", "worker-b"] {
            std::thread::Builder::new()
                .name(name.into())
                .spawn_scoped(s, || {
                    for _ in 0..3 {
                        sp::region("rust.kernel").run(|| sp::region("rust.inner").run(|| ()));
                    }
                })
                .expect("spawn");
        }
    });
    sp::finalize()
        .expect("finalize")
        .into_profile()
        .expect("in memory")
}

/// A host profile as the Python package would write it for the same
/// process: on each of `rust`'s threads one `python.call` around all of
/// that thread's calls, and one call on a thread of its own; `pid` as given.
fn host_profile(rust: &Profile, pid: i64) -> Profile {
    let e = &rust.events;
    let mut host = Profile::default();
    host.region_names = vec!["python.call".to_owned()];
    let mut events = Events::default();
    let mut row = RegionRow::default();
    (row.source_file, row.source_line) = ("host.py".to_owned(), 3);
    let mut lanes: Vec<(i64, i64, i64)> = Vec::new(); // (OS id, first, last)
    for t in &rust.threads {
        let calls = (0..e.len()).filter(|&i| e.thread_ids[i] == t.index);
        let first = calls.clone().map(|i| e.start_ns[i]).min();
        let last = calls.map(|i| e.start_ns[i] + e.durations[i]).max();
        if let (Some(first), Some(last)) = (first, last) {
            lanes.push((t.native_id, first - 1_000, last + 1_000));
        }
    }
    lanes.push((i64::from(i32::MAX), lanes[0].1, lanes[0].1 + 10));
    for (index, &(os, from, to)) in lanes.iter().enumerate() {
        let mut t = ThreadInfo::default();
        (t.index, t.native_id, t.name, t.end_ns, t.cpu_ns) =
            (index as i64, os, format!("py-{index}"), -1, -1);
        host.threads.push(t);
        events.start_ns.push(from);
        events.durations.push(to - from);
        events.call_ids.push(index as i64);
        events.parent_ids.push(-1);
        events.thread_ids.push(index as i64);
    }
    row.event_count = events.len() as u64;
    host.rows = vec![row];
    host.events = events;
    let start = lanes.iter().map(|l| l.1).min().unwrap() - 1_000;
    let end = lanes.iter().map(|l| l.2).max().unwrap() + 1_000;
    host.metadata = vec![
        ("start_time_ns".to_owned(), Value::Int(start)),
        ("finalize_time_ns".to_owned(), Value::Int(end)),
        ("pid".to_owned(), Value::Int(pid)),
    ];
    host
}

/// Each call as (region, parent's region or "", OS thread id), sorted.
fn calls(p: &Profile) -> BTreeMap<(String, String, i64), usize> {
    let e = &p.events;
    let region_of = |pos: usize| {
        let row = p.rows.iter().find(|r| r.events().contains(&pos)).unwrap();
        p.region_names[row.region_id as usize].clone()
    };
    let mut out = BTreeMap::new();
    for pos in 0..e.len() {
        let parent = match e.parent_ids[pos] {
            -1 => String::new(),
            id => {
                let q = (0..e.len()).find(|&q| e.call_ids[q] == id).unwrap();
                assert_eq!(e.thread_ids[q], e.thread_ids[pos], "parent on another lane");
                region_of(q)
            }
        };
        let os = p.threads[e.thread_ids[pos] as usize].native_id;
        *out.entry((region_of(pos), parent, os)).or_default() += 1;
    }
    out
}

#[test]
fn rust_calls_nest_under_the_host_calls_that_ran_them() {
    let dir = temp_dir("cli-merge");
    let rust = rust_profile();
    let pid = i64::from(std::process::id());
    assert_eq!(
        rust.metadata_value("pid"),
        Some(&Value::Int(pid)),
        "our profiles record the process id"
    );
    let host = host_profile(&rust, pid);
    let (host_path, rust_path, merged_path) = (
        dir.join("host.h5"),
        dir.join("rust.json"),
        dir.join("merged.h5"),
    );
    sp::write_profile(&host, &host_path, Compression::None).unwrap();
    sp::write_profile(&rust, &rust_path, Compression::None).unwrap();
    let out = bin()
        .arg("merge")
        .args([&host_path, &rust_path])
        .arg("-o")
        .arg(&merged_path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("2 matched by OS thread id"), "{stderr}");
    let merged = sp::read_profile(&merged_path).unwrap();
    let os: Vec<i64> = rust.threads.iter().map(|t| t.native_id).collect();
    let mut expected = BTreeMap::new();
    for &os in &os {
        expected.insert(("python.call".to_owned(), String::new(), os), 1);
        expected.insert(("rust.kernel".to_owned(), "python.call".to_owned(), os), 3);
        expected.insert(("rust.inner".to_owned(), "rust.kernel".to_owned(), os), 3);
    }
    expected.insert(
        ("python.call".to_owned(), String::new(), i64::from(i32::MAX)),
        1,
    );
    assert_eq!(calls(&merged), expected);
    assert_eq!(merged.threads.len(), 3);

    // The Python package reads the merged file, and its speedscope export
    // opens every Rust call inside the host call on the same thread.
    let Some(python) = made_reader_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let py_dir = dir.join("py");
    let run = |args: &[&str], file: &Path, output: &Path| {
        let out = Command::new(&python)
            .args(["-m", "scope_profiler"])
            .args(args)
            .arg(file)
            .arg("-o")
            .arg(output)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "scope_profiler {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&["export", "speedscope"], &merged_path, &py_dir);
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(py_dir.join("profile.speedscope.json")).unwrap())
            .unwrap();
    let frames = doc["shared"]["frames"].as_array().unwrap();
    let mut kernels_inside = 0;
    for profile in doc["profiles"].as_array().unwrap() {
        let mut open: Vec<&str> = Vec::new();
        for event in profile["events"].as_array().unwrap() {
            let name = frames[event["frame"].as_u64().unwrap() as usize]["name"]
                .as_str()
                .unwrap();
            if event["type"] == "O" {
                if name.contains("rust.kernel") {
                    assert!(
                        open.last().is_some_and(|o| o.contains("python.call")),
                        "rust.kernel opened inside {open:?}"
                    );
                    kernels_inside += 1;
                }
                open.push(name);
            } else {
                open.pop();
            }
        }
    }
    assert_eq!(kernels_inside, 6);
    let report = dir.join("report.html");
    run(&["report"], &merged_path, &report);
    assert!(report.exists());
}

#[test]
fn another_process_is_refused_unless_forced_and_then_kept_apart() {
    let dir = temp_dir("cli-merge-other");
    let rust = rust_profile();
    let other = host_profile(&rust, i64::from(std::process::id()) + 1);
    let (host_path, rust_path, merged_path) = (
        dir.join("other.json"),
        dir.join("rust.h5"),
        dir.join("merged.json"),
    );
    sp::write_profile(&other, &host_path, Compression::None).unwrap();
    sp::write_profile(&rust, &rust_path, Compression::None).unwrap();
    let merge = |force: bool| {
        let mut cmd = bin();
        cmd.arg("merge")
            .args([&host_path, &rust_path])
            .arg("-o")
            .arg(&merged_path);
        if force {
            cmd.arg("--force");
        }
        cmd.output().unwrap()
    };
    let out = merge(false);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not one process"), "{stderr}");
    assert!(!merged_path.exists());
    let out = merge(true);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged = sp::read_profile(&merged_path).unwrap();
    // Nothing of one process nests in the other's calls: every parent is
    // of the same input, and no thread is shared.
    assert!(calls(&merged).keys().all(|(region, parent, _)| {
        parent.is_empty() || region.starts_with("rust") == parent.starts_with("rust")
    }));
    assert_eq!(
        merged.threads.len(),
        other.threads.len() + rust.threads.len()
    );
}
