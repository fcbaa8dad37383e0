//! Call trees rebuilt from the events (issue 37, item 2): a child whose
//! span does not nest in its parent's (a future first polled inside one
//! call and completed inside a later one) stays local; the calls after it
//! keep their parents, by parent ids (in memory, JSON, HDF5 past the
//! call-path limit) and by time (a JSON profile without ids); speedscope
//! stays ordered and complete, folded stacks complete.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::hint::black_box;
use std::path::Path;
use std::pin::Pin;
use std::task::{Context, Poll};

use integration_tests::{hand_built_dir, serial, temp_dir};
use scope_profiler::CallTree;
use scope_profiler::{self as sp, Compression, Options, Profile, RegionRow, SummaryStatistics};
use scope_profiler_reader::ProfileReader;
use scope_profiler_reader::export::Grouping;

/// One hand-made call.
#[derive(Clone, Copy)]
struct C {
    region: &'static str,
    start: i64,
    end: i64,
    id: i64,
    parent: i64,
    thread: i64,
}

fn c(region: &'static str, start: i64, end: i64, id: i64, parent: i64) -> C {
    C {
        region,
        start,
        end,
        id,
        parent,
        thread: 0,
    }
}

/// A profile of `calls`: one row per region (in order of first call).
fn profile(calls: &[C]) -> Profile {
    let mut p = Profile::default();
    let mut regions: Vec<&str> = Vec::new();
    for c in calls {
        if !regions.contains(&c.region) {
            regions.push(c.region);
        }
    }
    for (id, name) in regions.iter().enumerate() {
        p.region_names.push((*name).to_owned());
        let mut row = RegionRow::default();
        row.region_id = id as u32;
        row.event_offset = p.events.len() as u64;
        let mut spans = Vec::new();
        for c in calls.iter().filter(|c| c.region == *name) {
            p.events.start_ns.push(c.start);
            p.events.durations.push(c.end - c.start);
            p.events.call_ids.push(c.id);
            p.events.parent_ids.push(c.parent);
            p.events.thread_ids.push(c.thread);
            spans.push((c.start, c.end - c.start));
        }
        row.event_count = spans.len() as u64;
        row.stats = SummaryStatistics::from_calls(&spans);
        p.rows.push(row);
    }
    p
}

/// Path (names from the root) -> calls, over every lane.
type Paths = BTreeMap<Vec<String>, u64>;

/// The tree the parent ids give: each call's path up its parents.
fn parent_id_tree(calls: &[C]) -> Paths {
    let by_id: HashMap<i64, &C> = calls.iter().map(|c| (c.id, c)).collect();
    let mut out = Paths::new();
    for c in calls {
        let mut path = vec![c.region.to_owned()];
        let mut at = c;
        while let Some(p) = by_id.get(&at.parent) {
            path.insert(0, p.region.to_owned());
            at = p;
        }
        *out.entry(path).or_default() += 1;
    }
    out
}

fn paths(tree: &CallTree, names: &[String]) -> Paths {
    let mut out = Paths::new();
    let mut todo: Vec<_> = tree.roots().map(|r| (r, Vec::new())).collect();
    while let Some((node, path)) = todo.pop() {
        for n in node.children() {
            let mut path = path.clone();
            path.push(names[n.region().unwrap() as usize].clone());
            *out.entry(path.clone()).or_default() += n.num_calls();
            todo.push((n, path));
        }
    }
    out
}

fn tree_of(reader: &ProfileReader) -> Paths {
    let tree = reader.call_tree(Grouping::All).unwrap();
    paths(&tree, reader.region_names())
}

/// Per speedscope profile, checks that its events never go back in time
/// and balance; returns the opens per frame name.
fn speedscope_opens(reader: &ProfileReader) -> BTreeMap<String, u64> {
    let mut out = Vec::new();
    reader.speedscope(&mut out).unwrap();
    let doc = String::from_utf8(out).unwrap();
    let frames_at = doc.find("\"shared\":{\"frames\":[").expect("frames");
    let frames: Vec<String> = doc[frames_at..]
        .split("{\"name\":\"")
        .skip(1)
        .map(|f| f[..f.find('"').unwrap()].to_owned())
        .collect();
    let mut opens = BTreeMap::new();
    let body = &doc[..frames_at];
    for profile in body.split("{\"type\":\"evented\"").skip(1) {
        let mut stack = Vec::new();
        let mut last = i64::MIN;
        for event in profile.split("{\"type\":\"").skip(1) {
            let kind = &event[..1];
            let field = |name: &str| -> i64 {
                let at = event.find(name).unwrap() + name.len();
                let rest = &event[at..];
                let end = rest.find([',', '}']).unwrap();
                rest[..end].parse().unwrap()
            };
            let (frame, at) = (field("\"frame\":"), field("\"at\":"));
            assert!(
                at >= last,
                "speedscope goes back in time: {kind} at {at} after {last}"
            );
            last = at;
            if kind == "O" {
                stack.push(frame);
                *opens.entry(frames[frame as usize].clone()).or_default() += 1;
            } else {
                assert_eq!(stack.pop(), Some(frame), "unbalanced close");
            }
        }
        assert!(stack.is_empty(), "calls left open");
    }
    opens
}

fn calls_per_region(calls: &[C]) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for c in calls {
        *out.entry(c.region.to_owned()).or_default() += 1;
    }
    out
}

/// The folded stacks as path -> own ns.
fn folded(reader: &ProfileReader) -> BTreeMap<String, i64> {
    let mut out = Vec::new();
    reader.folded(&mut out).unwrap();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| {
            let (path, ns) = l.rsplit_once(' ').unwrap();
            (path.to_owned(), ns.parse().unwrap())
        })
        .collect()
}

/// The held future's shape, hand-made: `inner` starts inside the first
/// `poll` but its parent id is the second `poll` (which starts later);
/// `late` (on thread 1) ends after its grandparent. Then ten `leaf`s.
fn held_calls() -> Vec<C> {
    let mut calls = vec![
        c("outer", 0, 1000, 1, -1),
        c("poll", 100, 200, 2, 1),
        c("inner", 150, 600, 3, 4),
        c("poll", 500, 700, 4, 1),
    ];
    for i in 0..10 {
        calls.push(c("leaf", 710 + 20 * i, 720 + 20 * i, 10 + i, 1));
    }
    let other: Vec<C> = vec![
        c("outer", 0, 1000, 101, -1),
        c("poll", 100, 200, 102, 101),
        c("late", 150, 1500, 103, 102),
        c("poll", 500, 700, 104, 101),
        c("leaf", 800, 900, 105, 101),
    ];
    calls.extend(other.into_iter().map(|c| C { thread: 1, ..c }));
    calls
}

fn expected_held() -> Paths {
    let p = |names: &[&str], n: u64| (names.iter().map(|s| s.to_string()).collect(), n);
    [
        p(&["outer"], 2),
        p(&["outer", "poll"], 4),
        p(&["outer", "poll", "inner"], 1),
        p(&["outer", "poll", "late"], 1),
        p(&["outer", "leaf"], 11),
    ]
    .into_iter()
    .collect()
}

#[test]
fn a_child_outside_its_parent_stays_local_by_parent_ids() {
    let calls = held_calls();
    let reader = ProfileReader::from_profile(profile(&calls)).unwrap();
    assert!(reader.has_parents());
    assert_eq!(tree_of(&reader), expected_held());
    // The parent ids' tree, path by path (both `poll`s are one path).
    assert_eq!(tree_of(&reader), parent_id_tree(&calls));
    assert_eq!(speedscope_opens(&reader), calls_per_region(&calls));
    let f = folded(&reader);
    assert_eq!(f.get("outer;leaf"), Some(&(10 * 10 + 100)));
    assert_eq!(f.get("outer;poll;late"), Some(&1350));
    // Own time is the duration less the children's, as recorded.
    assert_eq!(f.get("outer"), Some(&(2 * (1000 - 400))), "{f:?}");
}

#[test]
fn the_same_profile_as_json_keeps_its_parent_ids() {
    let calls = held_calls();
    let path = hand_built_dir("event-trees-json").join("held.json");
    sp::write_profile(&profile(&calls), &path, Compression::None).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"parent_ids\": [") || text.contains("\"parent_ids\":["));
    let reader = ProfileReader::open(&path).unwrap();
    assert!(reader.has_parents(), "the JSON reader kept the ids");
    assert_eq!(tree_of(&reader), expected_held());
    assert_eq!(speedscope_opens(&reader), calls_per_region(&calls));
}

/// A JSON profile without ids (the time placement): start and end times
/// and thread ids only.
fn json_without_ids(path: &Path, calls: &[C]) {
    let mut regions: Vec<&str> = Vec::new();
    for c in calls {
        if !regions.contains(&c.region) {
            regions.push(c.region);
        }
    }
    let column = |name: &str, f: &dyn Fn(&C) -> i64| -> String {
        let v: Vec<String> = calls
            .iter()
            .filter(|c| c.region == name)
            .map(|c| f(c).to_string())
            .collect();
        format!("[{}]", v.join(","))
    };
    let rows: Vec<String> = regions
        .iter()
        .map(|name| {
            format!(
                "{{\"name\":\"{name}\",\"rank\":0,\"start_times_ns\":{},\"end_times_ns\":{},\"thread_ids\":{}}}",
                column(name, &|c| c.start),
                column(name, &|c| c.end),
                column(name, &|c| c.thread)
            )
        })
        .collect();
    let doc = format!(
        "{{\"format\":\"scope-profiler-profile\",\"format_version\":1,\"time_unit\":\"nanoseconds\",\"regions\":[{}]}}",
        rows.join(",")
    );
    std::fs::write(path, doc).unwrap();
}

#[test]
fn without_parent_ids_a_child_that_ends_after_its_parent_stays_its_child() {
    let mut calls = held_calls();
    // By time, `inner` starts inside the first `poll`: its child there.
    // Before, `late` (ending after `outer`) closed every open call, and
    // the second `poll` and the leaves went under it.
    calls.retain(|c| c.region != "inner");
    calls.push(c("inner", 150, 600, 3, 4));
    let path = hand_built_dir("event-trees-no-ids").join("no-ids.json");
    json_without_ids(&path, &calls);
    let reader = ProfileReader::open(&path).unwrap();
    assert!(!reader.has_parents(), "placed by time");
    assert_eq!(tree_of(&reader), expected_held());
    assert_eq!(speedscope_opens(&reader), calls_per_region(&calls));
}

/// `n` spawns under `main`, each with a region of its own (past the
/// call-path limit), and one held call that starts inside spawn
/// `n / 2` and ends inside a later one, its parent id that later spawn.
fn many_paths(n: i64) -> Vec<C> {
    const NAMES: usize = 5_000;
    static WORK: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    let work = WORK.get_or_init(|| {
        (0..NAMES)
            .map(|i| &*Box::leak(format!("work-{i}").into_boxed_str()))
            .collect()
    });
    let mut calls = vec![c("main", 0, n * 1000 + 10, 0, -1)];
    for i in 0..n {
        let at = i * 1000;
        calls.push(c("spawn", at + 1, at + 900, 2 * i + 1, 0));
        calls.push(c(
            work[i as usize % NAMES],
            at + 10,
            at + 500,
            2 * i + 2,
            2 * i + 1,
        ));
    }
    let half = n / 2;
    calls.push(c(
        "held",
        half * 1000 + 600,
        half * 1000 + 3_500,
        10 * n,
        2 * (half + 3) + 1,
    ));
    calls
}

#[test]
fn past_the_call_path_limit_the_events_tree_is_the_parent_id_tree() {
    let calls = many_paths(5_000);
    let want = parent_id_tree(&calls);
    assert!(want.len() > 5_000);
    let memory = ProfileReader::from_profile(profile(&calls)).unwrap();
    let tree = tree_of(&memory);
    assert_eq!(tree, want);
    let roots: Vec<_> = tree.keys().filter(|p| p.len() == 1).collect();
    assert_eq!(roots.len(), 1, "one root: {roots:?}");
    assert_eq!(speedscope_opens(&memory), calls_per_region(&calls));
    // The same as an HDF5 file (no stored call paths) and as JSON.
    let dir = hand_built_dir("event-trees-many");
    for name in ["many.h5", "many.json"] {
        let path = dir.join(name);
        sp::write_profile(&profile(&calls), &path, Compression::None).unwrap();
        let reader = ProfileReader::open(&path).unwrap();
        assert!(reader.call_paths().is_none());
        assert_eq!(tree_of(&reader), want, "{name}");
        let f = folded(&reader);
        assert_eq!(f.len(), want.len(), "one line per path with own time");
        assert_eq!(f.get("main;spawn;held"), Some(&2_900));
    }
}

// The program: a future kept in a struct, polled across two sync
// calls.

#[sp::profile]
async fn inner() {
    tokio::task::yield_now().await
}

#[sp::profile]
fn poll_held(f: &mut Pin<Box<dyn Future<Output = ()>>>, cx: &mut Context<'_>) -> Poll<()> {
    f.as_mut().poll(cx)
}

#[sp::profile]
fn leaf() -> u32 {
    black_box(1)
}

#[sp::profile]
async fn outer() {
    let mut held: Pin<Box<dyn Future<Output = ()>>> = Box::pin(inner());
    std::future::poll_fn(|cx| poll_held(&mut held, cx)).await;
    for _ in 0..10 {
        leaf();
    }
}

fn run_held(path: &Path) {
    let _s = serial();
    sp::setup(Options::new().file_path(path).verbose(false)).unwrap();
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(outer());
    sp::finalize().unwrap();
}

/// The tree's paths by their last names (the module path cut off).
fn short(paths: Paths) -> Paths {
    paths
        .into_iter()
        .map(|(p, n)| {
            let p = p
                .into_iter()
                .map(|s| s.rsplit("::").next().unwrap().to_owned())
                .collect();
            (p, n)
        })
        .collect()
}

#[test]
fn the_held_future_gives_one_tree_from_json_and_hdf5() {
    let dir = temp_dir("event-trees-held");
    let (h5, json) = (dir.join("held.h5"), dir.join("held.json"));
    run_held(&h5);
    run_held(&json);
    let stored = ProfileReader::open(&h5).unwrap();
    assert!(
        stored.call_paths().is_some(),
        "the tree of the stored paths"
    );
    let from_json = ProfileReader::open(&json).unwrap();
    assert!(from_json.has_parents());
    let tree = short(tree_of(&stored));
    assert_eq!(short(tree_of(&from_json)), tree);
    let count = |p: &[&str]| {
        let p: Vec<String> = p.iter().map(|s| s.to_string()).collect();
        tree.get(&p).copied()
    };
    assert_eq!(count(&["outer"]), Some(1), "{tree:?}");
    assert_eq!(count(&["outer", "leaf"]), Some(10), "{tree:?}");
    assert_eq!(tree.keys().filter(|p| p.len() == 1).count(), 1, "{tree:?}");
    // The same events as JSON: every figure of the tree, not only paths.
    let converted = dir.join("converted.json");
    sp::write_profile(
        &sp::read_profile(&h5).unwrap(),
        &converted,
        Compression::None,
    )
    .unwrap();
    let converted = ProfileReader::open(&converted).unwrap();
    let full = |r: &ProfileReader| r.call_tree(Grouping::All).unwrap();
    let figures = |t: &CallTree| {
        let mut v: Vec<_> = t
            .nodes()
            .map(|n| {
                (
                    n.region(),
                    n.num_calls(),
                    n.total(),
                    n.exclusive(),
                    n.minimum(),
                    n.maximum(),
                )
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(figures(&full(&converted)), figures(&full(&stored)));
    let profile = sp::read_profile(&json).unwrap();
    assert_eq!(
        speedscope_opens(&from_json),
        integration_tests::calls_per_region(&profile)
    );
}

#[sp::profile]
async fn spawned(i: u64) -> u64 {
    tokio::task::yield_now().await;
    u64::from(leaf()) + i
}

/// The held future among 4,200 distinct regions and 3,000 spawned tasks:
/// past the call-path limit, so the `.h5` too is walked from its events.
fn run_held_past_the_limit(path: &Path) {
    let _s = serial();
    sp::setup(Options::new().file_path(path).verbose(false)).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    rt.block_on(async {
        outer().await;
        let tasks: Vec<_> = (0..3_000).map(|i| tokio::spawn(spawned(i))).collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    for i in 0..4_200 {
        sp::region(&format!("distinct-{i}")).run(leaf);
    }
    sp::finalize().unwrap();
}

#[test]
fn past_the_call_path_limit_the_held_future_gives_one_tree_from_json_and_hdf5() {
    let dir = temp_dir("event-trees-held-many");
    let (h5, json) = (dir.join("held.h5"), dir.join("held.json"));
    run_held_past_the_limit(&h5);
    run_held_past_the_limit(&json);
    let from_h5 = ProfileReader::open(&h5).unwrap();
    assert!(
        from_h5.call_paths().is_none(),
        "past the limit: no stored paths"
    );
    let tree = short(tree_of(&from_h5));
    assert_eq!(short(tree_of(&ProfileReader::open(&json).unwrap())), tree);
    let count = |p: &[&str]| {
        let p: Vec<String> = p.iter().map(|s| s.to_string()).collect();
        tree.get(&p).copied()
    };
    assert_eq!(
        count(&["outer", "leaf"]),
        Some(10),
        "{:?}",
        count(&["leaf"])
    );
    // The recorder gives `inner` the call that contains its whole span.
    assert_eq!(count(&["outer", "inner"]), Some(1));
    assert_eq!(count(&["outer", "poll_held"]), Some(2));
    assert_eq!(count(&["spawned", "leaf"]), Some(3_000));
    assert_eq!(count(&["distinct-4199", "leaf"]), Some(1));
    // Every leaf under its caller: none is a root.
    assert_eq!(count(&["leaf"]), None);
}
