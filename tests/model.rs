//! Property tests: random programs of nested regions on several threads,
//! recorded for real into a file, read back, and compared with a model
//! computed from the program alone.
//!
//! A program gives each thread a sequence of operations on a stack of live
//! guards: enter a region (from a small pool of names), drop the innermost
//! guard, drop a guard that is not innermost (the calls it encloses end at
//! the same instant), or leak the innermost guard with `mem::forget` (its
//! call ends when an enclosing guard ends, or never). Operations that make
//! no sense (exit with no guard) are skipped; at the end the remaining
//! guards are dropped innermost first.
//!
//! The model knows which calls end, and which ones end together; from the
//! file it checks: per thread, the forest of calls (region names, parent
//! links, in start order) equals the model's; every parent is on its child's
//! thread with a smaller call id; durations are non-negative, children lie
//! within their parents, siblings do not overlap, calls ended together have
//! one end time; per row, the count, the exclusive total (Σ durations − Σ
//! durations of direct children) and the summary statistics (total, min,
//! max, first, last, mean) match the row's events.
//!
//! 64 cases by default; `PROPTEST_CASES=N` runs more.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use integration_tests::{event_of_call, event_range, on_named_threads, serial, temp_dir};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use scope_profiler::{self as sp, Guard, Options, Profile};

/// The pool of region names: a few, so that calls repeat and recurse.
const NAMES: [&str; 5] = ["alpha", "beta", "gamma/δ", "e.f", "ω"];

#[derive(Clone, Copy, Debug)]
enum Op {
    /// Enter region `NAMES[i]`.
    Enter(u8),
    /// Drop the innermost live guard.
    Exit,
    /// Drop the live guard at index `k % live` (0 = outermost).
    DropAt(u8),
    /// `mem::forget` the innermost live guard.
    Forget,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0..NAMES.len() as u8).prop_map(Op::Enter),
        4 => Just(Op::Exit),
        1 => any::<u8>().prop_map(Op::DropAt),
        1 => Just(Op::Forget),
    ]
}

/// One sequence of operations per thread.
fn program() -> impl Strategy<Value = Vec<Vec<Op>>> {
    prop::collection::vec(prop::collection::vec(op(), 0..40), 1..=4)
}

/// A call as the model sees it.
#[derive(Clone, Debug)]
struct ModelCall {
    name: &'static str,
    /// The call that was innermost open when this one started.
    parent: Option<usize>,
    /// Whether the call ended (only ended calls are recorded).
    ended: bool,
    /// Calls ended by one guard drop share a group (and an end time).
    group: usize,
}

/// Runs `ops` on the calling thread with real guards; returns the model of
/// the calls it made, in the order they started.
fn run_thread(ops: &[Op]) -> Vec<ModelCall> {
    let mut calls: Vec<ModelCall> = Vec::new();
    // The thread's stack of open calls (what the recorder holds).
    let mut open: Vec<usize> = Vec::new();
    // Live guards, outermost first, with the call each one started.
    let mut guards: Vec<(usize, Guard)> = Vec::new();
    let mut groups = 0;
    let mut end = |calls: &mut Vec<ModelCall>, open: &mut Vec<usize>, call: usize| {
        // Dropping a guard ends its call and every call opened after it,
        // unless an enclosing guard ended it already.
        if let Some(pos) = open.iter().position(|&c| c == call) {
            groups += 1;
            for c in open.drain(pos..) {
                calls[c].ended = true;
                calls[c].group = groups;
            }
        }
    };
    for &op in ops {
        match op {
            Op::Enter(i) => {
                let name = NAMES[i as usize];
                calls.push(ModelCall {
                    name,
                    parent: open.last().copied(),
                    ended: false,
                    group: 0,
                });
                let guard = sp::region(name).enter();
                assert!(guard.is_recording());
                open.push(calls.len() - 1);
                guards.push((calls.len() - 1, guard));
            }
            Op::Exit => {
                if let Some((call, guard)) = guards.pop() {
                    drop(guard);
                    end(&mut calls, &mut open, call);
                }
            }
            Op::DropAt(k) => {
                if !guards.is_empty() {
                    let (call, guard) = guards.remove(k as usize % guards.len());
                    drop(guard);
                    end(&mut calls, &mut open, call);
                }
            }
            Op::Forget => {
                if let Some((_, guard)) = guards.pop() {
                    std::mem::forget(guard);
                }
            }
        }
    }
    while let Some((call, guard)) = guards.pop() {
        drop(guard);
        end(&mut calls, &mut open, call);
    }
    calls
}

/// Per thread, the recorded calls in start order as (name, parent position):
/// the parent is the enclosing call if it was recorded, else none (a call
/// whose enclosing call never ended is a root in the file).
type Forest = Vec<(String, Option<usize>)>;

fn model_forest(calls: &[ModelCall]) -> (Forest, Vec<usize>) {
    let mut position = vec![None; calls.len()];
    let mut forest = Vec::new();
    let mut groups = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        if !c.ended {
            continue;
        }
        position[i] = Some(forest.len());
        let parent = c.parent.and_then(|p| position[p]);
        forest.push((c.name.to_owned(), parent));
        groups.push(c.group);
    }
    (forest, groups)
}

/// Checks one recorded file against the per-thread models.
fn check(p: &Profile, models: &[Vec<ModelCall>]) -> Result<(), TestCaseError> {
    let ev = &p.events;
    let n = ev.len();
    prop_assert_eq!(ev.durations.len(), n);
    prop_assert_eq!(ev.call_ids.len(), n);
    prop_assert_eq!(ev.parent_ids.len(), n);
    prop_assert_eq!(ev.thread_ids.len(), n);

    // Region of each event, from the rows.
    let mut region: Vec<Option<usize>> = vec![None; n];
    for row in &p.rows {
        prop_assert!(row.event_count > 0);
        let range = event_range(row);
        prop_assert!(range.end <= n, "row past the events: {:?}", row);
        for slot in &mut region[range] {
            prop_assert!(slot.is_none(), "rows overlap");
            *slot = Some(row.region_id as usize);
        }
    }
    prop_assert!(
        region.iter().all(Option::is_some),
        "an event outside every row"
    );
    let region: Vec<usize> = region.into_iter().map(Option::unwrap).collect();

    // Calls per region: the model's ended calls.
    let mut want_counts: BTreeMap<&str, u64> = BTreeMap::new();
    for c in models.iter().flatten().filter(|c| c.ended) {
        *want_counts.entry(c.name).or_default() += 1;
    }
    let counts: BTreeMap<&str, u64> = p
        .rows
        .iter()
        .map(|r| (p.region_names[r.region_id as usize].as_str(), r.event_count))
        .collect();
    prop_assert_eq!(&counts, &want_counts);
    prop_assert_eq!(
        p.region_names.len(),
        want_counts.len(),
        "names without calls"
    );

    // Parent links: to a call of the same thread, with a smaller id.
    let by_id = event_of_call(ev);
    prop_assert_eq!(by_id.len(), n, "call ids are not unique");
    let mut parent = vec![None; n];
    for (i, &pid) in ev.parent_ids.iter().enumerate() {
        prop_assert!(ev.durations[i] >= 0, "negative duration");
        if pid == -1 {
            continue;
        }
        let j = *by_id
            .get(&pid)
            .ok_or_else(|| TestCaseError::fail(format!("parent id {pid} is no call")))?;
        prop_assert_eq!(
            ev.thread_ids[j],
            ev.thread_ids[i],
            "parent on another thread"
        );
        prop_assert!(pid < ev.call_ids[i], "parent id not smaller than child id");
        let (cs, ce) = (ev.start_ns[i], ev.start_ns[i] + ev.durations[i]);
        let (ps, pe) = (ev.start_ns[j], ev.start_ns[j] + ev.durations[j]);
        prop_assert!(
            ps <= cs && ce <= pe,
            "child [{cs},{ce}] outside parent [{ps},{pe}]"
        );
        parent[i] = Some(j);
    }

    // Per row: exclusive totals and statistics.
    let mut children_total = vec![0i64; n];
    for (&p, &d) in parent.iter().zip(&ev.durations) {
        if let Some(j) = p {
            children_total[j] += d;
        }
    }
    for row in &p.rows {
        let range = event_range(row);
        let d = &ev.durations[range.clone()];
        let total: i64 = d.iter().sum();
        let inner: i64 = children_total[range].iter().sum();
        prop_assert_eq!(row.exclusive, total - inner, "exclusive total");
        let st = &row.stats;
        prop_assert_eq!(st.total, total);
        prop_assert_eq!(st.minimum, *d.iter().min().unwrap());
        prop_assert_eq!(st.maximum, *d.iter().max().unwrap());
        prop_assert_eq!(st.first, d[0]);
        prop_assert_eq!(st.last, d[d.len() - 1]);
        let mean = total as f64 / d.len() as f64;
        prop_assert!((st.mean - mean).abs() <= 1e-9 * mean.abs().max(1.0), "mean");
    }

    // Per thread: the forest in start order equals the model's.
    let thread_index: HashMap<&str, i64> = p
        .threads
        .iter()
        .map(|t| (t.name.as_str(), t.index))
        .collect();
    let mut seen = 0;
    for (t, model) in models.iter().enumerate() {
        let (want, groups) = model_forest(model);
        let name = format!("model-{t}");
        let mut events: Vec<usize> = match thread_index.get(name.as_str()) {
            Some(&ti) => (0..n).filter(|&i| ev.thread_ids[i] == ti).collect(),
            None => Vec::new(),
        };
        events.sort_by_key(|&i| (ev.start_ns[i], ev.call_ids[i]));
        let position: HashMap<usize, usize> =
            events.iter().enumerate().map(|(k, &i)| (i, k)).collect();
        let got: Forest = events
            .iter()
            .map(|&i| {
                (
                    p.region_names[region[i]].clone(),
                    parent[i].map(|j| position[&j]),
                )
            })
            .collect();
        prop_assert_eq!(&got, &want, "the calls of thread {}", t);
        seen += events.len();

        // Calls ended by one drop end at one instant; siblings do not overlap.
        let end = |k: usize| ev.start_ns[events[k]] + ev.durations[events[k]];
        let mut group_end: HashMap<usize, i64> = HashMap::new();
        for (k, &g) in groups.iter().enumerate() {
            let e = *group_end.entry(g).or_insert(end(k));
            prop_assert_eq!(e, end(k), "calls ended together end at different times");
        }
        let mut last_child_end: HashMap<Option<usize>, i64> = HashMap::new();
        for (k, (_, parent)) in got.iter().enumerate() {
            let start = ev.start_ns[events[k]];
            if let Some(&prev) = last_child_end.get(parent) {
                prop_assert!(prev <= start, "siblings overlap on thread {}", t);
            }
            last_child_end.insert(*parent, end(k));
        }
    }
    prop_assert_eq!(seen, n, "events on threads outside the program");
    Ok(())
}

/// Runs one program in a file session and checks the file.
fn run_case(path: &Path, program: &[Vec<Op>]) -> Result<(), TestCaseError> {
    let _ = sp::finalize(); // a failed case may have left its session
    sp::setup(Options::new().file_path(path).verbose(false))
        .map_err(|e| TestCaseError::fail(format!("setup: {e}")))?;
    let models: Vec<Vec<ModelCall>> =
        on_named_threads("model", program.len(), None, |t| run_thread(&program[t]));
    sp::finalize().map_err(|e| TestCaseError::fail(format!("finalize: {e}")))?;
    let p = sp::read_profile(path).map_err(|e| TestCaseError::fail(format!("read: {e}")))?;
    check(&p, &models)
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

#[test]
fn random_programs_on_threads_match_the_model() {
    let _s = serial();
    let path = temp_dir("model").join("case.h5");
    let config = Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let outcome = runner.run(&program(), |program| run_case(&path, &program));
    let _ = sp::finalize();
    if let Err(e) = outcome {
        panic!("{e}");
    }
}

#[test]
fn the_model_handles_every_kind_of_operation() {
    // A fixed program that uses each operation, as a guard against a
    // generator that never produces some of them.
    let _s = serial();
    let path = temp_dir("model-fixed").join("fixed.h5");
    use Op::*;
    let program = vec![
        vec![
            Enter(0),
            Enter(1),
            Enter(2),
            DropAt(1),
            Exit,
            Exit,
            Enter(3),
            Exit,
        ],
        vec![
            Enter(0),
            Forget,
            Enter(1),
            Exit,
            Enter(4),
            Enter(4),
            Forget,
            Exit,
        ],
        vec![Enter(2), Enter(0), Forget, Enter(1), Exit, Exit, Enter(3)],
        vec![Exit, Forget, DropAt(7), Enter(1), Enter(1), Enter(1)],
    ];
    run_case(&path, &program).unwrap();
    let _ = sp::finalize();
}
