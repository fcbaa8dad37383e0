//! The call paths `finalize` stores beside the events: the call tree built
//! from them is the tree built from the events, in every grouping, for
//! threads, async tasks, recursion and spilled lanes; past the limit the
//! file holds none and readers walk the events.

use std::collections::BTreeMap;
use std::path::Path;

use integration_tests::{serial, temp_dir};
use scope_profiler::CallTree;
use scope_profiler::{self as sp, Compression, Options, WritePath};
use scope_profiler_reader::ProfileReader;
use scope_profiler_reader::export::Grouping;

/// Per group label, per call path (names from the root), the node's
/// figures: the tree with its children's order left out.
type Flat = BTreeMap<String, BTreeMap<Vec<String>, (u64, i64, i64, i64, i64, i64)>>;

fn flatten(tree: &CallTree, names: &[String]) -> Flat {
    let mut out = Flat::new();
    for r in tree.roots() {
        let group = out.entry(r.name().to_owned()).or_default();
        group.insert(Vec::new(), (r.num_calls(), r.total(), 0, 0, 0, 0));
        let mut stack = vec![(r, Vec::new())];
        while let Some((node, path)) = stack.pop() {
            for n in node.children() {
                let mut path: Vec<String> = path.clone();
                path.push(names[n.region().unwrap() as usize].clone());
                let figures = (
                    n.num_calls(),
                    n.total(),
                    n.exclusive(),
                    n.minimum().unwrap(),
                    n.maximum().unwrap(),
                    n.quantile(0.95).unwrap(),
                );
                assert!(
                    group.insert(path.clone(), figures).is_none(),
                    "{path:?} twice"
                );
                stack.push((n, path));
            }
        }
    }
    out
}

#[sp::profile]
fn leaf(n: u64) -> u64 {
    (0..n % 50).fold(n, |a, b| a.wrapping_mul(31).wrapping_add(b))
}

#[sp::profile(recursive)]
fn recurse(depth: u32) -> u64 {
    if depth == 0 {
        leaf(7)
    } else {
        recurse(depth - 1).wrapping_add(leaf(u64::from(depth)))
    }
}

/// Waits once between its calls: a task (one that completes in its first
/// poll is a call of the worker's lane instead).
#[sp::profile]
async fn task_body(n: u64) -> u64 {
    let a = leaf(n);
    tokio::task::yield_now().await;
    a.wrapping_add(leaf(n + 1))
}

fn workload() {
    let threads: Vec<_> = (0..3u64)
        .map(|t| {
            std::thread::Builder::new()
                .name(format!("worker-{t}"))
                .spawn(move || {
                    for i in 0..20_000u64 {
                        let _outer = sp::region("outer").enter();
                        leaf(i + t);
                        if i % 7 == 0 {
                            recurse((i % 5) as u32);
                        }
                    }
                })
                .unwrap()
        })
        .collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    rt.block_on(async {
        let handles: Vec<_> = (0..50).map(|i| tokio::spawn(task_body(i))).collect();
        for h in handles {
            h.await.unwrap();
        }
    });
    for t in threads {
        t.join().unwrap();
    }
}

/// The trees of `path` in every grouping, flattened.
fn trees(path: &Path) -> Vec<Flat> {
    let reader = ProfileReader::open(path).unwrap();
    [Grouping::All, Grouping::Rank, Grouping::Lane]
        .into_iter()
        .map(|g| flatten(&reader.call_tree(g).unwrap(), reader.region_names()))
        .collect()
}

fn check(
    compression: Compression,
    memory_limit: usize,
    name: &str,
    written: WritePath,
    spills: bool,
) {
    let _s = serial();
    let dir = temp_dir(name);
    let (stored, events) = (dir.join("stored.h5"), dir.join("events.h5"));
    sp::setup(
        Options::new()
            .file_path(&stored)
            .verbose(false)
            .compression(compression)
            .memory_limit(memory_limit),
    )
    .unwrap();
    workload();
    let results = sp::finalize().unwrap();
    assert_eq!(results.write_path(), written);
    assert_eq!(results.health().spilled_bytes > 0, spills, "spilled");
    // The same events, written without the paths.
    let profile = sp::read_profile(&stored).unwrap();
    sp::write_profile(&profile, &events, Compression::None).unwrap();
    let with_paths = ProfileReader::open(&stored).unwrap();
    let paths = with_paths
        .call_paths()
        .expect("finalize stored the call paths");
    assert!(paths.iter().any(|p| p.task_id >= 0), "no task lane's path");
    assert!(ProfileReader::open(&events).unwrap().call_paths().is_none());
    let (from_paths, from_events) = (trees(&stored), trees(&events));
    for (a, b) in from_paths.iter().zip(&from_events) {
        assert_eq!(a, b);
    }
    // Several lanes, the tasks among them, in the per-lane grouping.
    assert!(from_paths[2].len() >= 4, "{:?}", from_paths[2].keys());
    let tree = with_paths.call_tree(Grouping::All).unwrap();
    let events_tree = ProfileReader::open(&events)
        .unwrap()
        .call_tree(Grouping::All)
        .unwrap();
    assert_eq!(
        (tree.first_start(), tree.last_end()),
        (events_tree.first_start(), events_tree.last_end())
    );
}

#[test]
fn the_stored_call_paths_give_the_events_call_tree() {
    check(
        Compression::Auto,
        256 << 20,
        "call-paths",
        WritePath::Streamed {
            through_scratch: false,
        },
        false,
    );
}

#[test]
fn the_stored_call_paths_of_an_uncompressed_file_written_directly() {
    check(
        Compression::None,
        256 << 20,
        "call-paths-direct",
        WritePath::Direct,
        false,
    );
}

#[test]
fn the_stored_call_paths_survive_spilling_and_compression() {
    check(
        Compression::Gzip(4),
        4 << 20,
        "call-paths-spilled",
        WritePath::Streamed {
            through_scratch: true,
        },
        true,
    );
}

#[test]
fn past_the_limit_no_paths_are_stored_and_the_events_give_the_tree() {
    let _s = serial();
    let path = temp_dir("call-paths-many").join("many.h5");
    sp::setup(Options::new().file_path(&path).verbose(false)).unwrap();
    for i in 0..5_000 {
        let _outer = sp::region("outer").enter();
        let _inner = sp::region(&format!("inner-{i}")).enter();
    }
    sp::finalize().unwrap();
    let reader = ProfileReader::open(&path).unwrap();
    assert!(reader.call_paths().is_none(), "5001 paths stored");
    let tree = reader.call_tree(Grouping::All).unwrap();
    assert_eq!(tree.len(), 1 + 1 + 5_000);
}
