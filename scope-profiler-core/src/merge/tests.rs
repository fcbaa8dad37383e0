//! Merges of made profiles, with the exact trees expected.

use crate::profile::{Events, Profile, RegionCounters, RegionRow, ThreadInfo};
use crate::value::Value;

/// A call of a made profile: region name, thread index, start, end,
/// parent (index into the same list), task.
struct C {
    region: &'static str,
    thread: i64,
    start: i64,
    end: i64,
    parent: Option<usize>,
    rank: u32,
}

fn c(region: &'static str, thread: i64, start: i64, end: i64, parent: Option<usize>) -> C {
    C {
        region,
        thread,
        start,
        end,
        parent,
        rank: 0,
    }
}

/// A profile of `calls` on threads with OS ids `os` (thread index i has
/// OS id os[i]), with metadata `meta`.
fn made(calls: &[C], os: &[i64], meta: &[(&str, Value)]) -> Profile {
    let mut p = Profile::default();
    for (i, &id) in os.iter().enumerate() {
        p.threads.push(ThreadInfo {
            index: i as i64,
            native_id: id,
            name: format!("t{i}"),
            end_ns: -1,
            cpu_ns: -1,
            ..ThreadInfo::default()
        });
    }
    p.metadata = meta
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    // Rows per (rank, region) in first-seen order; call ids = list index.
    let mut keys: Vec<(u32, &str)> = Vec::new();
    for call in calls {
        if !keys.contains(&(call.rank, call.region)) {
            keys.push((call.rank, call.region));
        }
    }
    let mut events = Events::default();
    for (rank, region) in keys {
        let id = match p.region_names.iter().position(|n| n == region) {
            Some(id) => id,
            None => {
                p.region_names.push(region.to_owned());
                p.region_names.len() - 1
            }
        };
        let mut row = RegionRow {
            region_id: id as u32,
            rank,
            event_offset: events.len() as u64,
            ..RegionRow::default()
        };
        for (k, call) in calls.iter().enumerate() {
            if (call.rank, call.region) != (rank, region) {
                continue;
            }
            events.start_ns.push(call.start);
            events.durations.push(call.end.wrapping_sub(call.start));
            events.call_ids.push(k as i64);
            events.parent_ids.push(call.parent.map_or(-1, |q| q as i64));
            events.thread_ids.push(call.thread);
            row.event_count += 1;
        }
        p.rows.push(row);
    }
    p.events = events;
    p
}

/// The merged profile's calls as (region, parent's region or "", OS thread
/// id), by start.
fn tree(p: &Profile) -> Vec<(String, String, i64)> {
    let e = &p.events;
    let mut out: Vec<(i64, String, String, i64)> = Vec::new();
    for row in &p.rows {
        for pos in row.events() {
            let parent = e.parent_ids[pos];
            let parent_name = if parent < 0 {
                String::new()
            } else {
                let q = (0..e.len())
                    .find(|&q| e.call_ids[q] == parent)
                    .expect("the parent is a call of the profile");
                let r = p.rows.iter().find(|r| r.events().contains(&q)).unwrap();
                assert!(e.call_ids[q] < e.call_ids[pos], "a parent's id is smaller");
                assert_eq!(
                    e.thread_ids[q], e.thread_ids[pos],
                    "a parent on another lane"
                );
                p.region_names[r.region_id as usize].clone()
            };
            let os = p.threads[e.thread_ids[pos] as usize].native_id;
            out.push((
                e.start_ns[pos],
                p.region_names[row.region_id as usize].clone(),
                parent_name,
                os,
            ));
        }
    }
    out.sort();
    out.into_iter().map(|(_, r, p, t)| (r, p, t)).collect()
}

fn t(region: &str, parent: &str, os: i64) -> (String, String, i64) {
    (region.to_owned(), parent.to_owned(), os)
}

const PID: (&str, Value) = ("pid", Value::Int(42));

#[test]
fn a_call_nests_under_the_other_inputs_call_on_its_thread() {
    // Python: step [0, 100] with child io [60, 90] on OS thread 7; a
    // second thread (OS 8) runs work [0, 50].
    let python = made(
        &[
            c("step", 0, 0, 100, None),
            c("io", 0, 60, 90, Some(0)),
            c("work", 1, 0, 50, None),
        ],
        &[7, 8],
        &[PID, ("start_time_ns", Value::Int(0))],
    );
    // Rust: kernel [10, 40] with child inner [20, 30] on OS thread 7;
    // kernel [5, 45] on OS thread 8; kernel [200, 210] on OS 9.
    let rust = made(
        &[
            c("kernel", 0, 10, 40, None),
            c("inner", 0, 20, 30, Some(0)),
            c("kernel", 1, 5, 45, None),
            c("kernel", 2, 200, 210, None),
        ],
        &[7, 8, 9],
        &[PID, ("start_time_ns", Value::Int(1))],
    );
    let merged = Profile::merge(&[python, rust]).unwrap();
    assert_eq!(
        merged.region_names,
        ["step", "io", "work", "kernel", "inner"]
    );
    assert_eq!(
        tree(&merged),
        [
            t("step", "", 7),
            t("work", "", 8),
            t("kernel", "work", 8),
            t("kernel", "step", 7),
            t("inner", "kernel", 7),
            t("io", "step", 7),
            t("kernel", "", 9),
        ]
    );
    // One thread per OS thread.
    let os: Vec<i64> = merged.threads.iter().map(|t| t.native_id).collect();
    assert_eq!(os, [7, 8, 9]);
    // "kernel" is one region: one row, its three calls.
    let kernel = merged.rows.iter().filter(|r| r.region_id == 3).count();
    assert_eq!(kernel, 1);
    assert_eq!(merged.rows.iter().map(|r| r.event_count).sum::<u64>(), 7);
    // Exclusive times follow the new nesting: step 100 - kernel 30 - io 30.
    let step = merged.rows.iter().find(|r| r.region_id == 0).unwrap();
    assert_eq!(step.exclusive, 40);
    assert_eq!(step.stats.total, 100);
    assert_eq!(
        merged.metadata_value("merged_profiles"),
        Some(&Value::Int(2))
    );
    assert_eq!(merged.metadata_value("start_time_ns"), Some(&Value::Int(0)));
}

#[test]
fn the_recorded_parent_wins_over_an_outer_call_of_another_input() {
    // Rust: outer [0, 100] > mid [10, 90]; Python: p [5, 95] lies between
    // them in time: mid nests under p, p under outer.
    let rust = made(
        &[c("outer", 0, 0, 100, None), c("mid", 0, 10, 90, Some(0))],
        &[3],
        &[PID],
    );
    let python = made(&[c("p", 0, 5, 95, None)], &[3], &[PID]);
    let merged = Profile::merge(&[rust, python]).unwrap();
    assert_eq!(
        tree(&merged),
        [t("outer", "", 3), t("p", "outer", 3), t("mid", "p", 3)]
    );
}

#[test]
fn overlapping_calls_that_do_not_nest_keep_their_own_parents() {
    let a = made(&[c("a", 0, 0, 50, None)], &[3], &[PID]);
    let b = made(
        &[c("b", 0, 40, 90, None), c("b.child", 0, 45, 48, Some(0))],
        &[3],
        &[PID],
    );
    let merged = Profile::merge(&[a, b]).unwrap();
    // b.child [45, 48] lies in a and in b: its innermost enclosing call
    // is b (started later), its own parent.
    assert_eq!(
        tree(&merged),
        [t("a", "", 3), t("b", "", 3), t("b.child", "b", 3)]
    );
}

#[test]
fn the_same_span_on_both_sides_nests_the_later_input_inside() {
    let a = made(&[c("py", 0, 10, 20, None)], &[3], &[PID]);
    let b = made(&[c("rs", 0, 10, 20, None)], &[3], &[PID]);
    let merged = Profile::merge(&[a, b]).unwrap();
    assert_eq!(tree(&merged), [t("py", "", 3), t("rs", "py", 3)]);
}

#[test]
fn ranks_are_lanes_of_their_own() {
    let mut calls = vec![c("step", 0, 0, 100, None)];
    calls.push(C {
        rank: 1,
        ..c("step", 0, 0, 100, None)
    });
    let a = made(&calls, &[3], &[PID]);
    let b = made(
        &[C {
            rank: 1,
            ..c("kernel", 0, 10, 20, None)
        }],
        &[3],
        &[PID],
    );
    let merged = Profile::merge(&[a, b]).unwrap();
    let e = &merged.events;
    let kernel = merged.rows.iter().find(|r| r.region_id == 1).unwrap();
    assert_eq!(kernel.rank, 1);
    let pos = kernel.event_offset as usize;
    let parent = e.parent_ids[pos];
    let step1 = merged
        .rows
        .iter()
        .find(|r| r.region_id == 0 && r.rank == 1)
        .unwrap();
    assert_eq!(parent, e.call_ids[step1.event_offset as usize]);
}

#[test]
fn other_processes_are_refused_and_kept_apart_when_forced() {
    let a = made(&[c("py", 0, 0, 100, None)], &[3], &[("pid", Value::Int(1))]);
    let b = made(&[c("rs", 0, 10, 20, None)], &[3], &[("pid", Value::Int(2))]);
    let err = Profile::merge(&[
        made(&[c("py", 0, 0, 100, None)], &[3], &[("pid", Value::Int(1))]),
        made(&[c("rs", 0, 10, 20, None)], &[3], &[("pid", Value::Int(2))]),
    ])
    .unwrap_err()
    .to_string();
    assert!(err.contains("pid 1") && err.contains("pid 2"), "{err}");
    let merged = Profile::merge_forced(&[a, b]).unwrap();
    // Two lanes for OS thread 3: one per process; nothing nested.
    assert_eq!(merged.threads.len(), 2);
    assert_eq!(tree(&merged), [t("py", "", 3), t("rs", "", 3)]);
}

#[test]
fn other_hosts_and_sessions_apart_in_time_are_refused() {
    let host = |h: &str| ("hostname", Value::Str(h.to_owned()));
    let err = Profile::merge(&[
        made(&[c("a", 0, 0, 10, None)], &[3], &[host("x")]),
        made(&[c("b", 0, 0, 10, None)], &[3], &[host("y")]),
    ])
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("hostname x") && err.contains("hostname y"),
        "{err}"
    );
    let session = |from: i64, to: i64| {
        [
            ("start_time_ns", Value::Int(from)),
            ("finalize_time_ns", Value::Int(to)),
        ]
    };
    let err = Profile::merge(&[
        made(&[c("a", 0, 0, 10, None)], &[3], &session(0, 10)),
        made(&[c("b", 0, 50, 60, None)], &[3], &session(50, 60)),
    ])
    .unwrap_err()
    .to_string();
    assert!(err.contains("overlaps no other"), "{err}");
    // Without pids or hosts, overlapping sessions merge.
    let merged = Profile::merge(&[
        made(&[c("a", 0, 0, 100, None)], &[3], &session(0, 100)),
        made(&[c("b", 0, 50, 60, None)], &[3], &session(40, 70)),
    ])
    .unwrap();
    assert_eq!(tree(&merged), [t("a", "", 3), t("b", "a", 3)]);
}

#[test]
fn metadata_tasks_and_counters_are_kept() {
    let mut a = made(&[c("py", 0, 0, 100, None)], &[3], &[PID]);
    a.rows[0].event_metadata = vec![vec![("step".to_owned(), Value::Int(4))]];
    a.rows[0].tags = vec!["solver".to_owned()];
    let mut b = made(
        &[c("rs", 0, 10, 20, None), c("task", 0, 30, 40, None)],
        &[3],
        &[PID],
    );
    b.events.task_ids = Some(vec![-1, 0]);
    b.tasks.push(crate::profile::TaskInfo {
        index: 0,
        thread_index: 0,
        name: "task".into(),
        ..Default::default()
    });
    let counter = |calls| RegionCounters {
        name: "py".into(),
        num_calls: calls,
        event_names: vec!["alloc-count".into()],
        inclusive: vec![calls * 2],
        exclusive: vec![calls],
        ..RegionCounters::default()
    };
    a.counters.push(counter(1));
    b.counters.push(counter(3));
    let merged = Profile::merge(&[a, b]).unwrap();
    let py = merged.rows.iter().find(|r| r.region_id == 0).unwrap();
    assert_eq!(py.event_metadata, [[("step".to_owned(), Value::Int(4))]]);
    assert_eq!(py.tags, ["solver"]);
    // The task lane stays its own: its call has no parent.
    assert_eq!(
        tree(&merged),
        [t("py", "", 3), t("rs", "py", 3), t("task", "", 3)]
    );
    assert_eq!(merged.events.task_ids, Some(vec![-1, -1, 0]));
    assert_eq!(merged.tasks.len(), 1);
    assert_eq!(merged.counters.len(), 1);
    assert_eq!(merged.counters[0].num_calls, 4);
    assert_eq!(merged.counters[0].inclusive, [8]);
}

#[test]
fn inputs_that_do_not_fit_their_columns_are_errors() {
    let mut bad = made(&[c("a", 0, 0, 10, None)], &[3], &[]);
    bad.rows[0].event_count = 5;
    assert!(Profile::merge(&[bad]).is_err());
    let mut bad = made(&[c("a", 0, 0, 10, None)], &[3], &[]);
    bad.events.durations.clear();
    assert!(Profile::merge(&[bad]).is_err());
    assert!(Profile::merge(&[]).is_err());
}

#[test]
fn a_profile_on_another_clock_is_refused() {
    let clock = |c: &str| ("clock", Value::Str(c.to_owned()));
    let err = Profile::merge(&[
        made(&[c("py", 0, 0, 100, None)], &[3], &[]),
        made(&[c("rs", 0, 10, 20, None)], &[3], &[clock("process")]),
    ])
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("\"process\"") && err.contains("input 1"),
        "{err}"
    );
    let merged = Profile::merge(&[
        made(&[c("py", 0, 0, 100, None)], &[3], &[]),
        made(
            &[c("rs", 0, 10, 20, None)],
            &[3],
            &[clock("CLOCK_MONOTONIC")],
        ),
    ])
    .unwrap();
    assert_eq!(tree(&merged), [t("py", "", 3), t("rs", "py", 3)]);
}

#[test]
fn a_region_named_on_both_sides_is_one_region() {
    // "solve" on both sides: the Python wrapper and the Rust function it
    // calls; one region, its calls nested in each other.
    let python = made(&[c("solve", 0, 0, 100, None)], &[3], &[PID]);
    let rust = made(
        &[c("solve", 0, 10, 90, None), c("inner", 0, 20, 30, Some(0))],
        &[3],
        &[PID],
    );
    let merged = Profile::merge(&[python, rust]).unwrap();
    assert_eq!(merged.region_names, ["solve", "inner"]);
    assert_eq!(merged.rows.len(), 2);
    let solve = &merged.rows[0];
    assert_eq!((solve.region_id, solve.event_count), (0, 2));
    assert_eq!(
        tree(&merged),
        [
            t("solve", "", 3),
            t("solve", "solve", 3),
            t("inner", "solve", 3)
        ]
    );
    // Exclusive: 100 - 80 (the inner solve) + 80 - 10 (inner).
    assert_eq!(solve.exclusive, 20 + 70);
    assert_eq!(solve.stats.total, 180);
}

/// (start, end) of each call of `p` by region name, by start.
fn spans(p: &Profile) -> Vec<(String, i64, i64)> {
    let mut out = Vec::new();
    for row in &p.rows {
        for pos in row.events() {
            let (s, d) = (p.events.start_ns[pos], p.events.durations[pos]);
            out.push((p.region_names[row.region_id as usize].clone(), s, s + d));
        }
    }
    out.sort_by_key(|(_, s, e)| (*s, -*e));
    out
}

#[test]
fn clocks_a_few_ns_apart_are_made_to_nest_exactly() {
    // The Rust call ends 3 ns after the Python call that ran it (their
    // clocks disagree by that much), and its child 1 ns after that.
    let python = made(&[c("py", 0, 0, 100, None)], &[3], &[PID]);
    let rust = made(
        &[
            c("rs", 0, 50, 103, None),
            c("rs.child", 0, 101, 102, Some(0)),
        ],
        &[3],
        &[PID],
    );
    let merged = Profile::merge(&[python, rust]).unwrap();
    assert_eq!(
        tree(&merged),
        [t("py", "", 3), t("rs", "py", 3), t("rs.child", "rs", 3)]
    );
    assert_eq!(
        spans(&merged),
        [
            ("py".to_owned(), 0, 100),
            ("rs".to_owned(), 50, 100),
            ("rs.child".to_owned(), 100, 100),
        ]
    );
    assert_eq!(
        merged.metadata_value("merge_moved_ends"),
        Some(&Value::Int(1))
    );
    assert_eq!(
        merged.metadata_value("merge_moved_ns_max"),
        Some(&Value::Int(3))
    );
    // The Rust call starts 2 ns before the Python call before it ended:
    // they follow one another, the earlier one ending where the later starts.
    let python = made(
        &[c("py", 0, 0, 100, None), c("py.child", 0, 90, 100, Some(0))],
        &[3],
        &[PID],
    );
    let rust = made(&[c("rs", 0, 98, 300, None)], &[3], &[PID]);
    let merged = Profile::merge(&[python, rust]).unwrap();
    assert_eq!(
        tree(&merged),
        [t("py", "", 3), t("py.child", "py", 3), t("rs", "", 3)]
    );
    assert_eq!(
        spans(&merged),
        [
            ("py".to_owned(), 0, 98),
            ("py.child".to_owned(), 90, 98),
            ("rs".to_owned(), 98, 300),
        ]
    );
    assert_eq!(
        merged.metadata_value("merge_moved_ends"),
        Some(&Value::Int(2))
    );
}

#[test]
fn calls_overlapping_by_more_than_a_microsecond_are_refused_unless_forced() {
    let inputs = [
        made(&[c("py", 0, 0, 10_000, None)], &[3], &[PID]),
        made(&[c("rs", 0, 5_000, 20_000, None)], &[3], &[PID]),
    ];
    let err = Profile::merge(&inputs).unwrap_err().to_string();
    assert!(
        err.contains("1 pairs") && err.contains("py of input 0") && err.contains("rs of input 1"),
        "{err}"
    );
    let merged = Profile::merge_forced(&inputs).unwrap();
    assert_eq!(tree(&merged), [t("py", "", 3), t("rs", "", 3)]);
    assert_eq!(merged.metadata_value("merge_moved_ends"), None);
}

#[test]
fn extreme_times_and_ids_are_merged_without_overflow() {
    // Values a hostile or broken file may hold: the extremes of i64, a
    // parent id naming no call, a call its own parent, negative durations.
    let mut a = made(
        &[
            c("a", 0, i64::MIN, i64::MAX, None),
            c("b", 0, i64::MIN + 1, 0, Some(0)),
        ],
        &[3],
        &[],
    );
    a.events.parent_ids[1] = 99;
    let mut b = made(
        &[
            c("x", 0, i64::MAX - 5, i64::MAX, None),
            c("y", 0, 5, 1, None),
        ],
        &[3],
        &[],
    );
    b.events.parent_ids[1] = b.events.call_ids[1];
    for merged in [
        Profile::merge_forced(&[a.clone(), b.clone()]),
        Profile::merge_forced(&[b, a]),
    ] {
        let merged = merged.unwrap();
        assert_eq!(merged.events.len(), 4);
        assert!(merged.events.durations.iter().all(|&d| d >= 0));
    }
}
