//! `scope-prof export` filters (issue 37, item 6) on a recorded file:
//! `--region`, `--lane`, `--from`/`--to`, `--max-events`; each output
//! holds exactly the calls asked for, computed from the file's events.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use integration_tests::{serial, temp_dir};
use scope_profiler::{self as sp, Options, Profile, Value};
use serde_json::Value as Json;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scope-prof"))
        .args(args)
        .output()
        .expect("run scope-prof")
}

/// Runs `export KIND FILE -o OUT ARGS...`; returns OUT's text and stderr.
fn export(kind: &str, file: &Path, out: &Path, args: &[&str]) -> (String, String) {
    let mut all = vec![
        "export",
        kind,
        file.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let o = run(&all);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "scope-prof {all:?} failed: {stderr}");
    (std::fs::read_to_string(out).expect("output"), stderr)
}

/// Nested regions on two named threads, with a pause between two phases
/// (so a window can hold one and not the other).
fn recorded(dir: &Path) -> PathBuf {
    let _guard = serial();
    let path = dir.join("filters.h5");
    sp::setup(Options::new().file_path(&path).verbose(false)).expect("setup");
    fn fib(n: u32) -> u32 {
        sp::region("fib").run(|| if n < 2 { n } else { fib(n - 1) + fib(n - 2) })
    }
    for phase in ["first", "second"] {
        std::thread::scope(|s| {
            for name in ["worker-a", "worker-b"] {
                std::thread::Builder::new()
                    .name(name.into())
                    .spawn_scoped(s, || {
                        sp::region(phase).run(|| {
                            for _ in 0..4 {
                                sp::region("step").run(|| {
                                    sp::region("rhs").run(|| std::hint::black_box(fib(5)));
                                    sp::region("update").run(|| ());
                                });
                            }
                        })
                    })
                    .expect("spawn");
            }
        });
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    sp::finalize().expect("finalize");
    path
}

/// One call of the file.
#[derive(Clone, Debug)]
struct Call {
    region: String,
    start: i64,
    end: i64,
    id: i64,
    parent: i64,
    thread: String,
    thread_index: i64,
}

fn calls(profile: &Profile) -> Vec<Call> {
    let mut out = Vec::new();
    for row in &profile.rows {
        for i in row.events() {
            let e = &profile.events;
            out.push(Call {
                region: profile.region_names[row.region_id as usize].clone(),
                start: e.start_ns[i],
                end: e.start_ns[i] + e.durations[i],
                id: e.call_ids[i],
                parent: e.parent_ids[i],
                thread: profile.threads[e.thread_ids[i] as usize].name.clone(),
                thread_index: e.thread_ids[i],
            });
        }
    }
    out
}

/// The call ids of a Chrome trace, with the lane name of each.
fn chrome_calls(text: &str) -> BTreeMap<i64, (String, String)> {
    let doc: Json = serde_json::from_str(text).expect("JSON");
    let events = doc["traceEvents"].as_array().expect("events");
    let lanes: HashMap<i64, String> = events
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| {
            (
                e["tid"].as_i64().unwrap(),
                e["args"]["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    events
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| {
            let id = e["args"]["call_id"].as_i64().unwrap();
            let lane = lanes[&e["tid"].as_i64().unwrap()].clone();
            (id, (e["name"].as_str().unwrap().to_owned(), lane))
        })
        .collect()
}

/// Opens per frame of a speedscope document, checking each profile is
/// ordered in time and balanced.
fn speedscope_opens(text: &str) -> BTreeMap<String, u64> {
    let doc: Json = serde_json::from_str(text).expect("JSON");
    let frames: Vec<&str> = doc["shared"]["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    let mut opens = BTreeMap::new();
    for p in doc["profiles"].as_array().unwrap() {
        let (mut stack, mut last) = (Vec::new(), i64::MIN);
        for e in p["events"].as_array().unwrap() {
            let at = e["at"].as_i64().unwrap();
            assert!(at >= last, "time goes forward");
            last = at;
            let frame = e["frame"].as_u64().unwrap();
            if e["type"] == "O" {
                stack.push(frame);
                *opens.entry(frames[frame as usize].to_owned()).or_insert(0) += 1;
            } else {
                assert_eq!(stack.pop(), Some(frame), "balanced");
            }
        }
        assert!(stack.is_empty(), "closed");
    }
    opens
}

fn ids<'a>(calls: impl Iterator<Item = &'a Call>) -> BTreeSet<i64> {
    calls.map(|c| c.id).collect()
}

fn count<'a>(calls: impl Iterator<Item = &'a Call>) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for c in calls {
        *out.entry(c.region.clone()).or_insert(0) += 1;
    }
    out
}

/// The calls of regions `names` and every call under them.
fn subtrees<'a>(all: &'a [Call], names: &[&str]) -> Vec<&'a Call> {
    let by_id: HashMap<i64, &Call> = all.iter().map(|c| (c.id, c)).collect();
    all.iter()
        .filter(|c| {
            let mut at = Some(*c);
            while let Some(call) = at {
                if names.contains(&call.region.as_str()) {
                    return true;
                }
                at = by_id.get(&call.parent).copied();
            }
            false
        })
        .collect()
}

#[test]
fn region_keeps_the_calls_of_the_region_and_their_subtrees() {
    let dir = temp_dir("export-filter-region");
    let file = recorded(&dir);
    let all = calls(&sp::read_profile(&file).unwrap());
    let want = subtrees(&all, &["rhs", "update"]);
    assert!(want.iter().any(|c| c.region == "fib"), "fib under rhs");
    let args = ["--region", "rhs", "--region", "update"];
    let (trace, _) = export("chrome-trace", &file, &dir.join("t.json"), &args);
    let got = chrome_calls(&trace);
    assert_eq!(
        got.keys().copied().collect::<BTreeSet<_>>(),
        ids(want.iter().copied())
    );
    let (doc, _) = export("speedscope", &file, &dir.join("s.json"), &args);
    assert_eq!(speedscope_opens(&doc), count(want.iter().copied()));
    let (folded, _) = export("folded", &file, &dir.join("f.txt"), &args);
    assert!(!folded.is_empty());
    for line in folded.lines() {
        assert!(
            line.starts_with("rhs") || line.starts_with("update"),
            "{line}"
        );
    }
    // A glob, as inspect --region takes.
    let globs = ["--region", "rh?", "--region", "up*"];
    let (glob, _) = export("folded", &file, &dir.join("g.txt"), &globs);
    assert_eq!(glob, folded);
    // A region the file does not have is an error, not an empty output.
    let o = run(&[
        "export",
        "folded",
        file.to_str().unwrap(),
        "-o",
        "-",
        "--region",
        "nope",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--region \"nope\": no region of the file matches"),
        "{err}"
    );
}

#[test]
fn lane_keeps_the_calls_of_one_thread() {
    let dir = temp_dir("export-filter-lane");
    let file = recorded(&dir);
    let profile = sp::read_profile(&file).unwrap();
    let all = calls(&profile);
    let want = ids(all.iter().filter(|c| c.thread == "worker-b"));
    assert!(!want.is_empty() && want.len() < all.len());
    // By name: both phases' threads named worker-b; by index: one.
    let index = profile
        .threads
        .iter()
        .find(|t| t.name == "worker-b")
        .unwrap()
        .index;
    let one = ids(all.iter().filter(|c| c.thread_index == index));
    assert!(!one.is_empty() && one.len() < want.len());
    for (lane, want) in [
        ("thread worker-b".to_owned(), &want),
        (index.to_string(), &one),
    ] {
        let (trace, _) = export(
            "chrome-trace",
            &file,
            &dir.join("t.json"),
            &["--lane", &lane],
        );
        let got = chrome_calls(&trace);
        assert_eq!(
            &got.keys().copied().collect::<BTreeSet<_>>(),
            want,
            "--lane {lane}"
        );
        assert!(got.values().all(|(_, l)| l == "thread worker-b"));
    }
    let (doc, _) = export(
        "speedscope",
        &file,
        &dir.join("s.json"),
        &["--lane", "worker-b"],
    );
    let doc_json: Json = serde_json::from_str(&doc).unwrap();
    assert_eq!(
        doc_json["profiles"].as_array().unwrap().len(),
        2,
        "one per thread"
    );
    assert_eq!(
        speedscope_opens(&doc),
        count(all.iter().filter(|c| c.thread == "worker-b"))
    );
    let o = run(&[
        "export",
        "folded",
        file.to_str().unwrap(),
        "-o",
        "-",
        "--lane",
        "task 3",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no lane task 3") && err.contains("worker-a"),
        "{err}"
    );
}

#[test]
fn from_and_to_keep_the_calls_that_overlap_the_window() {
    let dir = temp_dir("export-filter-window");
    let file = recorded(&dir);
    let profile = sp::read_profile(&file).unwrap();
    let all = calls(&profile);
    let start = match profile.metadata.iter().find(|(k, _)| k == "start_time_ns") {
        Some((_, Value::Int(n))) => *n,
        other => panic!("start_time_ns: {other:?}"),
    };
    // The window: from the end of the first phase's first `step` to the
    // start of the second phase (in whole ns after the session's start).
    let first = all
        .iter()
        .filter(|c| c.region == "first")
        .map(|c| c.end)
        .max()
        .unwrap();
    let step = all
        .iter()
        .filter(|c| c.region == "step")
        .map(|c| c.end)
        .min()
        .unwrap();
    let (from, to) = (step - start, first - start + 1);
    let want = ids(all
        .iter()
        .filter(|c| c.start <= start + to && c.end >= start + from));
    assert!(!want.is_empty() && want.len() < all.len());
    assert!(
        !all.iter()
            .any(|c| c.region == "second" && want.contains(&c.id))
    );
    let window = [
        "--from".to_owned(),
        format!("{from}ns"),
        "--to".to_owned(),
        format!("{}us", to as f64 / 1000.0),
    ];
    let window: Vec<&str> = window.iter().map(String::as_str).collect();
    let (trace, _) = export("chrome-trace", &file, &dir.join("t.json"), &window);
    assert_eq!(
        chrome_calls(&trace)
            .keys()
            .copied()
            .collect::<BTreeSet<_>>(),
        want
    );
    let (doc, _) = export("speedscope", &file, &dir.join("s.json"), &window);
    let kept: Vec<&Call> = all.iter().filter(|c| want.contains(&c.id)).collect();
    assert_eq!(speedscope_opens(&doc), count(kept.into_iter()));
    // Past the end: nothing, said on stderr.
    let (trace, err) = export(
        "chrome-trace",
        &file,
        &dir.join("e.json"),
        &["--from", "1000s"],
    );
    assert!(chrome_calls(&trace).is_empty());
    assert!(err.contains("no call passed the filters"), "{err}");
}

#[test]
fn max_events_stops_after_n_calls_and_says_what_it_cut() {
    let dir = temp_dir("export-filter-max");
    let file = recorded(&dir);
    let all = calls(&sp::read_profile(&file).unwrap());
    let (trace, err) = export(
        "chrome-trace",
        &file,
        &dir.join("t.json"),
        &["--max-events", "7"],
    );
    assert_eq!(chrome_calls(&trace).len(), 7);
    let left = all.len() - 7;
    assert!(
        err.contains("wrote 7 calls") && err.contains(&format!("the next {left} ")),
        "{err}"
    );
    let (doc, err) = export(
        "speedscope",
        &file,
        &dir.join("s.json"),
        &["--max-events", "7"],
    );
    assert_eq!(speedscope_opens(&doc).values().sum::<u64>(), 7);
    assert!(err.contains(&format!("the next {left} ")), "{err}");
    // With another filter, what is cut counts the calls that filter keeps.
    let rhs = subtrees(&all, &["rhs"]).len();
    let (folded, err) = export(
        "folded",
        &file,
        &dir.join("f.txt"),
        &["--region", "rhs", "--max-events", "3"],
    );
    assert!(folded.lines().all(|l| l.starts_with("rhs")), "{folded}");
    assert!(err.contains(&format!("the next {} ", rhs - 3)), "{err}");
    // Under the cap: no note.
    let n = all.len().to_string();
    let (_, err) = export(
        "chrome-trace",
        &file,
        &dir.join("all.json"),
        &["--max-events", &n],
    );
    assert!(!err.contains("--max-events"), "{err}");
}

#[test]
fn the_statistics_export_refuses_filters() {
    let dir = temp_dir("export-filter-json");
    let file = recorded(&dir);
    let o = run(&[
        "export",
        "json",
        file.to_str().unwrap(),
        "-o",
        "-",
        "--max-events",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("whole file"));
}
