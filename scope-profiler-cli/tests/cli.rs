//! `scope-prof` on files of this crate, on the Python package's reference
//! files, and on broken files.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use integration_tests::{made_reader_python, serial, temp_dir};
use scope_profiler::{self as sp, Compression, Options, Profile, RegionRow, SummaryStatistics};
use serde_json::Value;

const REFERENCE: &str = "/work/shared/reference";

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_scope-prof"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run scope-prof")
}

fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "scope-prof {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// A file of this crate: nested and recursive regions on two named threads.
fn our_file(dir: &Path) -> PathBuf {
    let _guard = serial();
    let path = dir.join("ours.h5");
    let run = sp::setup(Options::new().file_path(&path).verbose(false)).expect("setup");
    fn fib(n: u32) -> u32 {
        sp::region("fib").run(|| if n < 2 { n } else { fib(n - 1) + fib(n - 2) })
    }
    std::thread::scope(|s| {
        for name in ["worker-a", "worker-b"] {
            std::thread::Builder::new()
                .name(name.into())
                .spawn_scoped(s, || {
                    for _ in 0..5 {
                        sp::region("step").run(|| {
                            sp::region("rhs").run(|| std::hint::black_box(fib(6)));
                            sp::region("update").run(|| ());
                        });
                    }
                })
                .expect("spawn");
        }
    });
    run.finalize().expect("finalize");
    path
}

fn reference(name: &str) -> Option<PathBuf> {
    let path = Path::new(REFERENCE).join(name);
    if path.exists() {
        Some(path)
    } else {
        integration_tests::prerequisite_missing(&format!("{} is missing", path.display()));
        None
    }
}

fn json_file(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("read")).expect("valid JSON")
}

#[test]
fn every_command_has_help() {
    for args in [
        &["--help"][..],
        &["inspect", "--help"],
        &["export", "--help"],
        &["diff", "--help"],
        &["check", "--help"],
        &["report", "--help"],
        &["merge", "--help"],
    ] {
        let out = ok(args);
        assert!(out.contains("Usage"), "{args:?}: {out}");
    }
}

#[test]
fn chrome_trace_has_one_complete_event_per_call_with_lane_parent_and_duration() {
    let dir = temp_dir("cli-chrome");
    let file = our_file(&dir);
    let out = dir.join("trace.json");
    ok(&[
        "export",
        "chrome-trace",
        file.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let profile = sp::read_profile(&file).expect("read");
    let doc = json_file(&out);
    let events: Vec<&Value> = doc["traceEvents"]
        .as_array()
        .expect("array")
        .iter()
        .filter(|e| e["ph"] == "X")
        .collect();
    assert_eq!(events.len(), profile.events.len());
    // Each call, by call id: its duration, parent and thread in the file.
    let mut by_id = HashMap::new();
    for row in &profile.rows {
        for i in row.events() {
            let e = &profile.events;
            let name = &profile.region_names[row.region_id as usize];
            by_id.insert(
                e.call_ids[i],
                (
                    name.clone(),
                    e.durations[i],
                    e.parent_ids[i],
                    e.thread_ids[i],
                ),
            );
        }
    }
    let thread_names: HashMap<i64, String> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| {
            (
                e["tid"].as_i64().unwrap(),
                e["args"]["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for e in events {
        let id = e["args"]["call_id"].as_i64().expect("call id");
        let (name, duration, parent, thread) = &by_id[&id];
        assert_eq!(e["name"].as_str(), Some(name.as_str()));
        assert_eq!(e["args"]["parent_id"].as_i64(), Some(*parent));
        let dur_ns = (e["dur"].as_f64().unwrap() * 1000.0).round() as i64;
        assert_eq!(dur_ns, *duration);
        let lane = &thread_names[&e["tid"].as_i64().unwrap()];
        let expected = &profile.threads[*thread as usize].name;
        assert_eq!(lane, &format!("thread {expected}"));
    }
}

#[test]
fn speedscope_is_balanced_per_lane_with_one_open_per_call() {
    let dir = temp_dir("cli-speedscope");
    let file = our_file(&dir);
    let out = dir.join("s.json");
    ok(&[
        "export",
        "speedscope",
        file.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let profile = sp::read_profile(&file).expect("read");
    let doc = json_file(&out);
    let frames: Vec<&str> = doc["shared"]["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    let profiles = doc["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 2, "one profile per thread lane");
    let mut opens: BTreeMap<String, u64> = BTreeMap::new();
    for p in profiles {
        let mut stack = Vec::new();
        let mut last = i64::MIN;
        for e in p["events"].as_array().unwrap() {
            let at = e["at"].as_i64().unwrap();
            assert!(at >= last, "time goes forward");
            last = at;
            let frame = e["frame"].as_u64().unwrap();
            match e["type"].as_str().unwrap() {
                "O" => {
                    stack.push(frame);
                    *opens.entry(frames[frame as usize].to_owned()).or_default() += 1;
                }
                _ => assert_eq!(stack.pop(), Some(frame), "balanced"),
            }
        }
        assert!(stack.is_empty());
    }
    assert_eq!(opens, integration_tests::calls_per_region(&profile));
}

#[test]
fn folded_totals_equal_the_exclusive_totals() {
    let dir = temp_dir("cli-folded");
    let file = our_file(&dir);
    let folded = ok(&["export", "folded", file.to_str().unwrap(), "-o", "-"]);
    let mut by_leaf: BTreeMap<String, i64> = BTreeMap::new();
    for line in folded.lines() {
        let (stack, ns) = line.rsplit_once(' ').expect("a;b ns");
        let leaf = stack.rsplit(';').next().unwrap();
        *by_leaf.entry(leaf.to_owned()).or_default() += ns.parse::<i64>().unwrap();
    }
    assert!(folded.contains("step;rhs;fib;fib"), "{folded}");
    let profile = sp::read_profile(&file).expect("read");
    let mut exclusive: BTreeMap<String, i64> = BTreeMap::new();
    for row in &profile.rows {
        *exclusive
            .entry(profile.region_names[row.region_id as usize].clone())
            .or_default() += row.exclusive;
    }
    exclusive.retain(|_, v| *v > 0);
    assert_eq!(by_leaf, exclusive);
}

#[test]
fn inspect_shows_the_tree_in_100_columns_and_as_json() {
    let dir = temp_dir("cli-inspect");
    let file = our_file(&dir);
    let f = file.to_str().unwrap();
    let text = ok(&["inspect", f]);
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    assert!(
        text.contains("\nstep ") && text.contains("\n  rhs ") && text.contains("\n    fib "),
        "{text}"
    );
    let threads = ok(&["inspect", f, "--threads", "--sort", "name"]);
    assert!(
        threads.contains("thread worker-a") && threads.contains("thread worker-b"),
        "{threads}"
    );
    let only = ok(&["inspect", f, "--region", "upd*"]);
    assert!(only.contains("update") && !only.contains("rhs"), "{only}");
    let two = ok(&["inspect", f, f]);
    assert!(
        two.contains("calls[2]") && two.lines().all(|l| l.chars().count() <= 100),
        "{two}"
    );
    let json: Value = serde_json::from_str(&ok(&["inspect", f, "--json"])).expect("json");
    let tree = &json["groups"][0]["tree"];
    let step = tree
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "step")
        .unwrap();
    assert_eq!(step["calls"], 10);
    let stats = dir.join("stats.json");
    ok(&["export", "json", f, "-o", stats.to_str().unwrap()]);
    assert_eq!(json_file(&stats)["regions"].as_array().unwrap().len(), 4);
}

#[test]
fn the_reference_files_inspect_and_export() {
    let dir = temp_dir("cli-reference");
    for name in [
        "python_schema3.h5",
        "python_features.h5",
        "c_schema2.h5",
        "python_aggregate.h5",
    ] {
        let Some(file) = reference(name) else { return };
        let f = file.to_str().unwrap();
        ok(&["inspect", f]);
        serde_json::from_str::<Value>(&ok(&["inspect", f, "--json"])).expect("json");
        for kind in ["folded", "flamegraph", "json"] {
            let out = dir.join(format!("{name}.{kind}"));
            ok(&["export", kind, f, "-o", out.to_str().unwrap()]);
        }
        let aggregate = name == "python_aggregate.h5";
        for kind in ["chrome-trace", "speedscope"] {
            let out = dir.join(format!("{name}.{kind}.json"));
            let result = run(&["export", kind, f, "-o", out.to_str().unwrap()]);
            if aggregate {
                assert_eq!(result.status.code(), Some(2));
                assert!(String::from_utf8_lossy(&result.stderr).contains("aggregate"));
            } else {
                assert!(result.status.success(), "{name} {kind}");
                json_file(&out);
            }
        }
    }
    let Some(features) = reference("python_features.h5") else {
        return;
    };
    let tagged = ok(&["inspect", features.to_str().unwrap(), "--tag", "io"]);
    assert!(
        tagged.contains("io.load") && !tagged.contains("mylib.solve"),
        "{tagged}"
    );
}

/// A file with one region of the given total over 10 calls.
fn synthetic(path: &Path, names: &[(&str, i64)]) {
    let mut profile = Profile::default();
    let mut start = 1_000;
    for (id, (name, total)) in names.iter().enumerate() {
        profile.region_names.push((*name).to_owned());
        let mut row = RegionRow::default();
        row.region_id = id as u32;
        row.event_offset = profile.events.len() as u64;
        row.event_count = 10;
        let mut calls = Vec::new();
        for i in 0..10 {
            let d = total / 10;
            calls.push((start, d));
            profile.events.start_ns.push(start);
            profile.events.durations.push(d);
            profile.events.call_ids.push((id * 10 + i) as i64);
            profile.events.parent_ids.push(-1);
            profile.events.thread_ids.push(0);
            start += d + 10;
        }
        row.exclusive = *total;
        row.stats = SummaryStatistics::from_calls(&calls);
        profile.rows.push(row);
    }
    sp::write_profile(&profile, path, Compression::None).expect("write");
}

#[test]
fn check_exit_codes_on_a_20_percent_regression() {
    let dir = temp_dir("cli-check");
    let (base, new) = (dir.join("base.h5"), dir.join("new.h5"));
    synthetic(&base, &[("solve", 100_000), ("io", 50_000)]);
    synthetic(
        &new,
        &[("solve", 120_000), ("io", 50_000), ("extra", 1_000)],
    );
    let (b, n) = (base.to_str().unwrap(), new.to_str().unwrap());
    let code = |args: &[&str]| {
        let out = run(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Exit 2 is an error, never a verdict: say which.
        assert_ne!(out.status.code(), Some(2), "scope-prof {args:?}: {stderr}");
        out.status.code()
    };
    assert_eq!(code(&["check", b, n, "--max-regression", "10"]), Some(1));
    assert_eq!(code(&["check", b, n, "--max-regression", "25"]), Some(0));
    assert_eq!(
        code(&["check", b, n, "--max-regression", "25", "--fail-on-new"]),
        Some(1)
    );
    assert_eq!(
        code(&["check", b, n, "--max-regression", "10", "--metric", "mean"]),
        Some(1)
    );
    assert_eq!(code(&["check", b, b, "--metric", "own"]), Some(0));
    let out = ok(&["check", b, n, "--max-regression", "25"]);
    assert!(out.contains("PASS") && out.contains("+20.0%"), "{out}");
    let diff = ok(&["diff", b, n]);
    assert!(
        diff.contains("solve") && diff.contains("+20.0%") && diff.contains("extra"),
        "{diff}"
    );
    let json: Value = serde_json::from_str(&ok(&["diff", b, n, "--json"])).expect("json");
    assert_eq!(json[0]["total_pct"].as_f64().map(f64::round), Some(20.0));
}

#[test]
fn corrupt_truncated_and_foreign_files_exit_2_naming_the_file() {
    let dir = temp_dir("cli-corrupt");
    let good = dir.join("good.h5");
    synthetic(&good, &[("a", 1_000)]);
    let bytes = std::fs::read(&good).unwrap();
    let truncated = dir.join("truncated.h5");
    std::fs::write(&truncated, &bytes[..bytes.len() / 3]).unwrap();
    let text = dir.join("text.h5");
    std::fs::write(&text, "not hdf5").unwrap();
    // 2000 bytes from byte 600 and the last 2000 (rust-hdf5 writes the
    // metadata, which the reader must refuse, after the raw data).
    let mut flipped = bytes.clone();
    let tail = flipped.len() - 2000;
    for (i, b) in flipped.iter_mut().enumerate() {
        if (600..2600).contains(&i) || i >= tail {
            *b ^= 0x5a;
        }
    }
    let corrupt = dir.join("corrupt.h5");
    std::fs::write(&corrupt, &flipped).unwrap();
    let missing = dir.join("missing.h5");
    for file in [&truncated, &text, &corrupt, &missing] {
        let f = file.to_str().unwrap();
        for args in [
            vec!["inspect", f],
            vec!["export", "folded", f, "-o", "-"],
            vec!["export", "chrome-trace", f, "-o", "-"],
            vec!["check", f, good.to_str().unwrap()],
        ] {
            let out = run(&args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
            assert!(
                stderr.contains(f) && !stderr.contains("panicked"),
                "{args:?}: {stderr}"
            );
        }
    }
}

/// The Python package's `export speedscope` and ours agree on frame names
/// and the number of calls per frame.
#[test]
fn speedscope_agrees_with_the_python_package() {
    let Some(python) = made_reader_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let dir = temp_dir("cli-interop");
    let ours = our_file(&dir);
    let mut files = vec![ours];
    files.extend(reference("python_schema3.h5"));
    for file in files {
        let py_dir = dir.join("py");
        let out = Command::new(&python)
            .args(["-m", "scope_profiler", "export", "speedscope"])
            .arg(&file)
            .arg("-o")
            .arg(&py_dir)
            .output()
            .expect("run python");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let theirs = json_file(&py_dir.join("profile.speedscope.json"));
        let mine_path = dir.join("mine.json");
        ok(&[
            "export",
            "speedscope",
            file.to_str().unwrap(),
            "-o",
            mine_path.to_str().unwrap(),
        ]);
        let mine = json_file(&mine_path);
        let opens = |doc: &Value| {
            let frames = doc["shared"]["frames"].as_array().unwrap();
            let mut counts: BTreeMap<String, u64> = BTreeMap::new();
            for p in doc["profiles"].as_array().unwrap() {
                for e in p["events"].as_array().unwrap() {
                    if e["type"] == "O" {
                        let f = e["frame"].as_u64().unwrap() as usize;
                        *counts
                            .entry(frames[f]["name"].as_str().unwrap().to_owned())
                            .or_default() += 1;
                    }
                }
            }
            counts
        };
        assert_eq!(opens(&mine), opens(&theirs), "{}", file.display());
    }
}

/// A function whose source the test below expects to see.
#[sp::profile("cli.sourced")]
fn sourced(x: u32) -> u32 {
    x + 1 // the line inspect --source shows
}

#[test]
fn inspect_source_prints_the_captured_text() {
    let dir = temp_dir("cli-source");
    let path = dir.join("sourced.h5");
    {
        let _guard = serial();
        let run = sp::setup(
            Options::new()
                .file_path(&path)
                .verbose(false)
                .capture_region_source(true),
        )
        .expect("setup");
        sourced(1);
        sp::region("cli.plain").run(|| ());
        run.finalize().expect("finalize");
    }
    let f = path.to_str().unwrap();
    let text = ok(&[
        "inspect",
        f,
        "--source",
        "cli.sourced",
        "cli.plain",
        "cli.missing",
    ]);
    let source = &text[text.find("\nSource (3)").expect("a Source section")..];
    assert!(
        source.contains("cli.sourced  (scope-profiler-cli/tests/cli.rs:"),
        "{source}"
    );
    assert!(
        source.contains("    #[sp::profile(\"cli.sourced\")]"),
        "{source}"
    );
    assert!(
        source.contains("x + 1 // the line inspect --source shows"),
        "{source}"
    );
    assert!(
        source.contains("cli.plain") && source.contains("no source captured"),
        "{source}"
    );
    assert!(source.contains("cli.missing: no such region"), "{source}");
    // The Python package's own file: its captured `with` blocks and functions.
    if let Some(reference) = reference("python_features.h5") {
        let text = ok(&[
            "inspect",
            reference.to_str().unwrap(),
            "--source",
            "io.load",
        ]);
        assert!(text.contains("def load(i):"), "{text}");
    }
    assert!(
        !run(&["inspect", f, "--source", "x", "--json"])
            .status
            .success()
    );
}

/// Issue 29, items 6 and 7b: what the recording kept out of the events is
/// said at the top of `inspect` (text and JSON) and by `export`: calls
/// dropped past the disk limit, in all, when, and per region; and, for a
/// session that recorded nothing, why.
#[test]
fn inspect_and_export_say_what_the_recording_dropped() {
    let dir = temp_dir("cli-dropped");
    let path = dir.join("dropped.h5");
    {
        let _guard = serial();
        sp::setup(
            Options::new()
                .file_path(&path)
                .verbose(false)
                .memory_limit(2 << 20)
                .disk_limit(1 << 20),
        )
        .expect("setup");
        for _ in 0..1_000_000 {
            sp::scope!("dropped/hot");
        }
        let results = sp::finalize().expect("finalize");
        assert!(
            !results.health().dropped.is_empty(),
            "nothing was dropped: {results}"
        );
    }
    let text = ok(&["inspect", path.to_str().unwrap()]);
    let header: Vec<&str> = text.lines().take_while(|l| !l.trim().is_empty()).collect();
    let notes = header.join("\n");
    assert!(
        notes.contains("note: ") && notes.contains("calls were counted but not recorded"),
        "{text}"
    );
    assert!(notes.contains("events stop"), "{notes}");
    assert!(
        notes.contains("dropped/hot: ") && notes.contains("calls not in the events"),
        "{notes}"
    );
    let json: Value =
        serde_json::from_str(&ok(&["inspect", "--json", path.to_str().unwrap()])).unwrap();
    let listed = json["recording_notes"].as_array().expect("recording_notes");
    assert!(listed.len() >= 2, "{listed:?}");
    let out = run(&[
        "export",
        "folded",
        path.to_str().unwrap(),
        "-o",
        dir.join("p.folded").to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not recorded"),
        "{out:?}"
    );

    // A session of traced functions outside any entrypoint: no calls, and why.
    let empty = dir.join("empty.h5");
    {
        let _guard = serial();
        sp::setup(Options::new().file_path(&empty).verbose(false)).expect("setup");
        static SITE: sp::__private::CallSite =
            sp::__private::CallSite::new("app::helper", file!(), line!());
        drop(SITE.enter_traced());
        sp::finalize().expect("finalize");
    }
    let text = ok(&["inspect", empty.to_str().unwrap()]);
    assert!(
        text.contains("no calls were recorded") && text.contains("app::helper"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Opens of each frame in a speedscope document.
fn speedscope_opens(doc: &Value) -> BTreeMap<String, u64> {
    let frames = doc["shared"]["frames"].as_array().unwrap();
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for p in doc["profiles"].as_array().unwrap() {
        for e in p["events"].as_array().unwrap() {
            if e["type"] == "O" {
                let f = e["frame"].as_u64().unwrap() as usize;
                *counts
                    .entry(frames[f]["name"].as_str().unwrap().to_owned())
                    .or_default() += 1;
            }
        }
    }
    counts
}

/// A JSON profile (ours; the Python package's, plain and gzip, when its
/// venv is there) inspects, exports and diffs as the HDF5 file it holds
/// the calls of.
#[test]
fn json_profiles_inspect_export_and_diff_as_the_hdf5_file() {
    let dir = temp_dir("cli-json");
    let h5 = our_file(&dir);
    let json = dir.join("ours.json");
    sp::write_profile(&sp::read_profile(&h5).unwrap(), &json, Compression::None).unwrap();
    let mut files = vec![json];
    if let Some(python) = made_reader_python(env!("CARGO_TARGET_TMPDIR")) {
        for (sub, gzip) in [("py", false), ("pygz", true)] {
            let out_dir = dir.join(sub);
            let mut cmd = Command::new(&python);
            cmd.args(["-m", "scope_profiler", "export", "json"])
                .arg(&h5)
                .arg("-o")
                .arg(&out_dir);
            if gzip {
                cmd.arg("--gzip");
            }
            let out = cmd.output().expect("run python");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let name = if gzip {
                "profile.json.gz"
            } else {
                "profile.json"
            };
            files.push(out_dir.join(name));
        }
    }
    let h = h5.to_str().unwrap();
    let groups = |f: &str| {
        let v: Value = serde_json::from_str(&ok(&["inspect", f, "--json"])).expect("json");
        v["groups"].clone()
    };
    let export = |kind: &str, f: &str, name: &str| {
        let out = dir.join(name);
        ok(&["export", kind, f, "-o", out.to_str().unwrap()]);
        std::fs::read(&out).unwrap()
    };
    let h5_folded = export("folded", h, "h5.folded");
    let h5_opens =
        speedscope_opens(&serde_json::from_slice(&export("speedscope", h, "h5.ss")).unwrap());
    let trace_calls = |bytes: &[u8]| {
        let v: Value = serde_json::from_slice(bytes).unwrap();
        v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "X")
            .count()
    };
    let h5_trace = trace_calls(&export("chrome-trace", h, "h5.trace"));
    assert_eq!(h5_trace, 2 * 5 * (3 + 25));
    for file in &files {
        let f = file.to_str().unwrap();
        let text = ok(&["inspect", f]);
        assert!(
            text.contains("\nstep ") && text.contains("\n  rhs ") && text.contains("\n    fib "),
            "{f}: {text}"
        );
        assert_eq!(groups(f), groups(h), "{f}");
        assert_eq!(export("folded", f, "j.folded"), h5_folded, "{f}");
        let ss: Value = serde_json::from_slice(&export("speedscope", f, "j.ss")).unwrap();
        assert_eq!(speedscope_opens(&ss), h5_opens, "{f}");
        assert_eq!(
            trace_calls(&export("chrome-trace", f, "j.trace")),
            h5_trace,
            "{f}"
        );
        let diff = ok(&["diff", h, f]);
        assert!(diff.contains("step"), "{diff}");
    }
    // A truncated JSON profile: exit 2, naming the file and the byte.
    let bad = dir.join("bad.json");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    std::fs::write(&bad, &text[..text.len() / 2]).unwrap();
    let out = run(&["inspect", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.json") && err.contains("at byte"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 28: `diff` and `check` print text, Markdown (a PR comment's table,
/// regressions first, with the threshold) or JSON; the exit code of
/// `check` is the same in every format.
#[test]
fn diff_and_check_print_text_markdown_and_json() {
    let dir = temp_dir("cli-formats");
    let (base, new) = (dir.join("base.h5"), dir.join("new.h5"));
    synthetic(
        &base,
        &[("solve", 100_000), ("io", 50_000), ("setup", 40_000)],
    );
    synthetic(
        &new,
        &[
            ("solve", 120_000),
            ("io", 50_000),
            ("setup", 20_000),
            ("extra", 1_000),
        ],
    );
    let (b, n) = (base.to_str().unwrap(), new.to_str().unwrap());
    // Markdown: the summary, the threshold, a table whose first row is the regression.
    let md = ok(&["diff", b, n, "--format", "markdown", "--threshold", "10"]);
    assert!(md.contains("threshold: ±10%"), "{md}");
    assert!(
        md.contains("1 regressions, 1 improvements, 1 new, 0 gone, 1 unchanged"),
        "{md}"
    );
    let table: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    assert!(
        table[0].contains("| region |") && table[1].starts_with("|---"),
        "{md}"
    );
    assert!(
        table[2].contains("`solve`") && table[2].contains("+20.0%"),
        "{md}"
    );
    assert!(table[3].contains("`extra`"), "new regions next: {md}");
    assert!(
        table[4].contains("`setup`") && table[4].contains("-50.0%"),
        "{md}"
    );
    assert_eq!(table.len(), 2 + 4);
    // JSON: the old array, with each region's status.
    let json: Value = serde_json::from_str(&ok(&["diff", b, n, "--format", "json"])).unwrap();
    let status: BTreeMap<&str, &str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    assert_eq!(status["solve"], "regression");
    assert_eq!(status["setup"], "improvement");
    assert_eq!(status["io"], "unchanged");
    assert_eq!(status["extra"], "new");
    let legacy: Value = serde_json::from_str(&ok(&["diff", b, n, "--json"])).unwrap();
    assert_eq!(legacy, json);
    assert!(ok(&["diff", b, n, "--format", "text"]).contains("base: "));
    // check: same verdict and exit code in every format.
    for format in ["text", "markdown", "json"] {
        let out = run(&["check", b, n, "--max-regression", "10", "--format", format]);
        assert_eq!(out.status.code(), Some(1), "{format}");
        let text = String::from_utf8_lossy(&out.stdout);
        match format {
            "markdown" => {
                assert!(
                    text.starts_with("### ❌ Regression check: FAIL (budget +10% (total))"),
                    "{text}"
                );
                assert!(text.contains("Over budget: `solve`"), "{text}");
                assert!(text.contains("threshold: ±10%"), "{text}");
            }
            "json" => {
                let v: Value = serde_json::from_str(&text).unwrap();
                assert_eq!(v["pass"], false);
                assert_eq!(v["violations"], serde_json::json!(["solve"]));
                assert_eq!(v["max_regression_pct"], 10.0);
                assert_eq!(v["regions"].as_array().unwrap().len(), 4);
            }
            _ => assert!(text.contains("Regression check: FAIL"), "{text}"),
        }
        let pass = run(&["check", b, n, "--max-regression", "25", "--format", format]);
        assert_eq!(pass.status.code(), Some(0), "{format}");
    }
    let md = ok(&[
        "check",
        b,
        n,
        "--max-regression",
        "25",
        "--format",
        "markdown",
    ]);
    assert!(md.starts_with("### ✅ Regression check: PASS"), "{md}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A file with region counters (`rank0/perf_events`): inspect shows their
/// columns (IPC, bytes allocated per call), inspect --json and export json
/// carry them.
#[test]
fn inspect_and_export_json_show_region_counters() {
    let dir = temp_dir("cli-counters");
    let path = dir.join("counted.h5");
    synthetic(&path, &[("solve", 100_000), ("io", 50_000)]);
    let mut profile = sp::read_profile(&path).unwrap();
    let names = ["cycles", "instructions", "alloc-count", "alloc-bytes"];
    for (name, values, own) in [
        ("solve", [1000u64, 2500, 20, 4000], [600u64, 1500, 10, 2000]),
        ("io", [400, 200, 10, 2000], [400, 200, 10, 2000]),
    ] {
        let mut c = sp::RegionCounters::default();
        c.name = name.to_owned();
        c.num_calls = 10;
        c.event_names = names.iter().map(|s| (*s).to_owned()).collect();
        c.inclusive = values.to_vec();
        c.exclusive = own.to_vec();
        profile.counters.push(c);
    }
    sp::write_profile(&profile, &path, Compression::None).unwrap();
    let text = ok(&["inspect", path.to_str().unwrap()]);
    assert!(text.contains("Region counters"), "{text}");
    let line = text
        .lines()
        .skip_while(|l| !l.contains("Region counters"))
        .find(|l| l.starts_with("solve"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("2500 (1500)"), "{line}");
    assert!(line.contains("2.50"), "IPC: {line}");
    assert!(line.contains("400.0"), "bytes per call: {line}");
    let json: Value =
        serde_json::from_str(&ok(&["inspect", "--json", path.to_str().unwrap()])).expect("json");
    let solve = json["counters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "solve")
        .unwrap()
        .clone();
    assert_eq!(solve["events"]["alloc-bytes"]["inclusive"], 4000);
    assert_eq!(solve["events"]["alloc-bytes"]["own"], 2000);
    assert_eq!(solve["ipc"], 2.5);
    assert_eq!(solve["alloc_bytes_per_call"], 400.0);
    let out = dir.join("stats.json");
    ok(&[
        "export",
        "json",
        path.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let exported = json_file(&out);
    assert_eq!(exported["counters"], json["counters"]);
}

/// `inspect --samples`: a sampled session's regions, each with its hottest
/// function and line, symbolized by `scope-prof` from this test binary's
/// debug info; the `.sps` file given alone; JSON; a profile without one.
#[test]
fn inspect_samples_names_each_regions_hottest_function_and_line() {
    use integration_tests::{busy_alpha, busy_beta, prerequisite_missing};
    if cfg!(scope_profiler_portable) {
        return; // no sampling there (tests/sampling.rs checks the error)
    }
    let dir = temp_dir("cli-samples");
    let path = dir.join("sampled.h5");
    {
        let _guard = serial();
        let options = Options::new()
            .file_path(&path)
            .verbose(false)
            .sample_hz(1000);
        if let Err(e) = sp::setup(options) {
            return prerequisite_missing(&format!("no sampling here: {e}"));
        }
        sp::region("alpha").run(|| busy_alpha(200));
        sp::region("beta").run(|| busy_beta(100));
        sp::region("outer").run(|| sp::region("gamma").run(|| busy_beta(60)));
        sp::finalize().expect("finalize");
    }
    let text = ok(&["inspect", "--samples", path.to_str().unwrap()]);
    let block = |region: &str| -> Vec<String> {
        text.lines()
            .skip_while(|l| !l.trim_start().starts_with(&format!("{region}  (")))
            .take(6)
            .map(str::to_owned)
            .collect()
    };
    for (region, own) in [("alpha", "busy_alpha"), ("beta", "busy_beta")] {
        let b = block(region);
        // The header, "functions:", the hottest, ..., "lines:".
        assert!(
            b.len() == 6 && b[2].contains(own),
            "{region}: {b:?}\n{text}"
        );
        let hottest_line = text
            .lines()
            .skip_while(|l| !l.trim_start().starts_with(&format!("{region}  (")))
            .skip_while(|l| l.trim() != "lines:")
            .nth(1)
            .unwrap_or_default();
        assert!(
            hottest_line.contains("tests/lib.rs:") && hottest_line.contains(own),
            "{region}: {hottest_line}\n{text}"
        );
    }
    let sps = dir.join("sampled_rank00000.sps");
    let alone = ok(&["inspect", sps.to_str().unwrap()]);
    assert!(alone.starts_with("\nSamples: "), "{alone}");
    assert!(alone.contains("busy_alpha"), "{alone}");
    let json: Value = serde_json::from_str(&ok(&[
        "inspect",
        "--json",
        "--samples",
        path.to_str().unwrap(),
    ]))
    .expect("json");
    let regions = json["samples"][0]["regions"].as_array().expect("regions");
    let alpha = regions.iter().find(|r| r["region"] == "alpha").unwrap();
    assert!(
        alpha["functions"][0]["function"]
            .as_str()
            .unwrap()
            .contains("busy_alpha")
    );
    assert!(alpha["lines"][0]["line"].as_u64().unwrap() > 0);
    // `export json` carries them too.
    let exported = dir.join("stats.json");
    ok(&[
        "export",
        "json",
        path.to_str().unwrap(),
        "-o",
        exported.to_str().unwrap(),
    ]);
    assert_eq!(json_file(&exported)["samples"], json["samples"]);
    // The stacks beside the `.sps` give inclusive counts...
    assert!(
        text.contains("with the regions inside it"),
        "no inclusive counts:\n{text}"
    );
    // ...and the folded stacks of the samples: the region, then the frames
    // below it down to the function each sample was taken in (its call
    // chain: this test is built unoptimized, with frame pointers).
    let folded = ok(&[
        "export",
        "folded",
        "--samples",
        path.to_str().unwrap(),
        "-o",
        "-",
    ]);
    let weight = |pred: &dyn Fn(&str) -> bool| -> u64 {
        folded
            .lines()
            .filter(|l| pred(l))
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum()
    };
    for (region, own) in [("alpha", "busy_alpha"), ("beta", "busy_beta")] {
        let all = weight(&|l| l.starts_with(&format!("{region};")));
        let leaf = weight(&|l| {
            l.starts_with(&format!("{region};"))
                && l.rsplit(' ')
                    .nth(1)
                    .unwrap()
                    .rsplit(';')
                    .next()
                    .unwrap()
                    .contains(own)
        });
        assert!(
            all > 0 && leaf * 10 >= all * 9,
            "{region}: {leaf} of {all} ns in {own}:\n{folded}"
        );
        // 1 ms per sample at 1000 Hz.
        assert_eq!(all % 1_000_000, 0, "{folded}");
    }
    // speedscope: one sampled profile of the same stacks and weights.
    let scope: Value = serde_json::from_str(&ok(&[
        "export",
        "speedscope",
        "--samples",
        path.to_str().unwrap(),
        "-o",
        "-",
    ]))
    .expect("speedscope json");
    let profile = &scope["profiles"][0];
    assert_eq!(profile["type"], "sampled");
    let frames = scope["shared"]["frames"].as_array().unwrap();
    let weights: u64 = profile["weights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_u64().unwrap())
        .sum();
    assert_eq!(weights, weight(&|_| true));
    assert_eq!(
        profile["samples"].as_array().unwrap().len(),
        folded.lines().count()
    );
    assert!(
        frames
            .iter()
            .any(|f| f["name"].as_str().unwrap().contains("busy_alpha"))
    );
    // --region keeps the samples inside the regions it matches (and their
    // weight); a filter the sample files cannot apply is refused.
    let only_alpha = ok(&[
        "export",
        "folded",
        "--samples",
        "--region",
        "alph*",
        path.to_str().unwrap(),
        "-o",
        "-",
    ]);
    assert!(
        only_alpha.lines().all(|l| l.starts_with("alpha;")),
        "{only_alpha}"
    );
    let alpha_weight = weight(&|l| l.starts_with("alpha;"));
    let kept: u64 = only_alpha
        .lines()
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(kept, alpha_weight);
    // A region inside another: its stacks start at it, its callers left
    // out (as the calls' export keeps a region's subtree).
    let only_gamma = ok(&[
        "export",
        "folded",
        "--samples",
        "--region",
        "gamma",
        path.to_str().unwrap(),
        "-o",
        "-",
    ]);
    assert!(
        !only_gamma.is_empty() && only_gamma.lines().all(|l| l.starts_with("gamma;")),
        "{only_gamma}"
    );
    assert!(weight(&|l| l.starts_with("outer;gamma;")) > 0, "{folded}");
    let by_lane = run(&[
        "export",
        "folded",
        "--samples",
        "--lane",
        "0",
        path.to_str().unwrap(),
        "-o",
        "-",
    ]);
    assert!(!by_lane.status.success());
    let why = String::from_utf8_lossy(&by_lane.stderr);
    assert!(why.contains("--samples takes --region only"), "{why}");
    let svg = dir.join("samples.svg");
    ok(&[
        "export",
        "flamegraph",
        "--samples",
        path.to_str().unwrap(),
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert!(
        std::fs::read_to_string(&svg)
            .unwrap()
            .contains("busy_alpha")
    );
    // The report page has them (its section is drawn from this JSON).
    let page = dir.join("report.html");
    ok(&[
        "report",
        path.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("\"samples\":[{") && html.contains("busy_alpha"),
        "no samples in the page"
    );
    // ...with a flame graph of the regions and the sampled frames below.
    assert!(
        html.contains("\"samples_flame\":{\"names\":["),
        "no samples' flame graph"
    );
    // A profile without a sample file beside it: an error naming why.
    let plain = our_file(&dir);
    let out = run(&["inspect", "--samples", plain.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no sample file beside") && err.contains("sample_hz"),
        "{err}"
    );
}

/// A sampled file's notes: samples not kept, and threads that could not be
/// sampled (named, their time not read as idle), under the tree and in
/// `--json`'s `recording_notes`.
#[test]
fn inspect_says_which_samples_are_missing() {
    let dir = temp_dir("cli-samples-notes");
    let path = dir.join("noted.h5");
    synthetic(&path, &[("solve", 1_000)]);
    let mut profile = sp::read_profile(&path).unwrap();
    profile
        .metadata
        .push(("samples_missed".into(), 42i64.into()));
    profile.metadata.push((
        "samples_not_taken".into(),
        sp::Value::Str("[\"thread worker-3 (tid 77): Too many open files (os error 24)\"]".into()),
    ));
    sp::write_profile(&profile, &path, Compression::None).unwrap();
    let text = ok(&["inspect", path.to_str().unwrap()]);
    assert!(text.contains("42 samples were not kept"), "{text}");
    assert!(
        text.contains("1 thread(s) could not be sampled") && text.contains("worker-3 (tid 77)"),
        "{text}"
    );
    let json: Value =
        serde_json::from_str(&ok(&["inspect", "--json", path.to_str().unwrap()])).unwrap();
    let notes = json["recording_notes"].to_string();
    assert!(notes.contains("worker-3"), "{notes}");
    std::fs::remove_dir_all(&dir).ok();
}
