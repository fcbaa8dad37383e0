//! The timeline's pyramid, budget, depths and packed task lanes.

use super::*;
use scope_profiler_reader::export::CallVisit;

/// The timeline of one thread's calls `(start, dur, region)`, all at
/// depth 0, over a session of `1024 x w0` ns from 0.
fn build(calls: &[(i64, i64, u32)], w0: f64, budget: u64) -> Timeline {
    let survey = Survey {
        t0: 0,
        end: (w0 * 1024.0) as i64,
        calls: calls.len() as u64,
        lanes: HashMap::new(),
        histograms: Vec::new(),
    };
    let lanes = vec![Lane {
        label: "main".into(),
        depths: 0,
    }];
    let display = HashMap::from([((0, 0, -1), 0)]);
    let mut b = Builder::with(survey, budget, lanes, display);
    for &(start, duration, region) in calls {
        let mut c = CallVisit::default();
        (c.thread, c.task, c.start, c.duration, c.region) = (0, -1, start, duration, region);
        b.call(&c);
    }
    b.finish()
}

fn cells(tl: &Timeline) -> usize {
    tl.classes.iter().chain(&tl.levels).map(Cells::len).sum()
}

#[test]
fn long_calls_are_individual_and_short_ones_merge_into_runs() {
    // Buckets of 100 ns, then 25.
    let mut calls = vec![(0, 150, 0)];
    // One long call, then 8 short ones of region 1 back to back.
    for i in 0..8 {
        calls.push((200 + i * 10, 10, 1));
    }
    let tl = build(&calls, 100.0, 1000);
    let (classes, levels) = (&tl.classes, &tl.levels);
    assert_eq!(classes[0].len(), 1, "the 150 ns call from level 0 on");
    assert_eq!(classes[1].len(), 0);
    // Level 0: buckets 2 (200..300) holds all 8; one cell.
    assert_eq!(levels[0].len(), 1);
    assert_eq!(levels[0].count[0], 8);
    assert_eq!(levels[0].region[0], 1);
    // Level 1: the buckets of 25 ns from 200 to 300 (the last call ends
    // at 280) merged into one run.
    assert_eq!(levels[1].len(), 1, "{:?}", levels[1].start);
    assert_eq!(levels[1].count[0], 8);
    assert_eq!((levels[1].start[0], levels[1].dur[0]), (200.0, 100.0));
    // Level 2 (6.25 ns) draws the 10 ns calls one by one: the last.
    assert_eq!(tl.widths.len(), 3);
    assert_eq!(tl.calls_kept, 9);
    assert_eq!(tl.lanes[0].depths, 1);
}

#[test]
fn the_budget_bounds_the_levels() {
    // Alternating regions: buckets merge only while they hold both.
    let many: Vec<(i64, i64, u32)> = (0..2_000_000).map(|i| (i * 5, 4, (i % 2) as u32)).collect();
    let tl = build(&many, 1e6, 100_000);
    assert!(
        cells(&tl) <= 100_000 + CHECK_EVERY as usize && tl.levels.len() > 1,
        "{} cells, {} levels",
        cells(&tl),
        tl.levels.len()
    );
    assert!(tl.levels.len() < MAX_LEVELS);
    let few = [(0, 4, 0), (10, 4, 0)];
    let tl = build(&few, 1e6, 100_000);
    assert_eq!(
        tl.levels.len(),
        class_of(4.0, &tl.widths) + 1,
        "a small file goes down to its shortest call"
    );
    assert_eq!(tl.classes.last().map(Cells::len), Some(2));
    // A 0 ns call is drawn individually once buckets are under 1 ns.
    let zero = [(0, 0, 0), (10, 1, 0)];
    let tl = build(&zero, 1e6, 100_000);
    assert_eq!(tl.classes.iter().map(Cells::len).sum::<usize>(), 2);
}

#[test]
fn task_lanes_on_one_display_lane_share_their_buckets() {
    let survey = Survey {
        t0: 0,
        end: 102_400,
        calls: 5,
        lanes: HashMap::new(),
        histograms: Vec::new(),
    };
    let lanes = vec![Lane {
        label: "tasks 1".into(),
        depths: 0,
    }];
    // Four tasks one after another in bucket 0 (100 ns), then one alone
    // in bucket 5; walked in task order, not time order.
    let display = (0..5).map(|t| ((0, -1, t), 0)).collect();
    let mut b = Builder::with(survey, 1000, lanes, display);
    for (task, start) in [(4, 500), (0, 0), (1, 20), (2, 40), (3, 60)] {
        let mut c = CallVisit::default();
        (c.task, c.start, c.duration) = (task, start, 10);
        b.call(&c);
    }
    let tl = b.finish();
    let level0 = &tl.levels[0];
    assert_eq!(level0.start, vec![0.0, 500.0], "one cell per bucket");
    assert_eq!(level0.count, vec![4, 1]);
}

#[test]
fn nested_calls_go_to_their_depth_and_lanes_to_their_tracks() {
    let survey = Survey {
        t0: 0,
        end: 1024,
        calls: 3,
        lanes: HashMap::new(),
        histograms: Vec::new(),
    };
    let lanes = vec![
        Lane {
            label: "a".into(),
            depths: 0,
        },
        Lane {
            label: "b".into(),
            depths: 0,
        },
    ];
    let display = HashMap::from([((0, 0, -1), 0), ((0, 1, -1), 1)]);
    let mut b = Builder::with(survey, 1000, lanes, display);
    for (thread, start, duration, depth) in [(1, 0, 1000, 0), (0, 0, 1000, 0), (0, 10, 500, 1)] {
        let mut c = CallVisit::default();
        (c.thread, c.task, c.start, c.duration, c.depth) = (thread, -1, start, duration, depth);
        b.call(&c);
    }
    let tl = b.finish();
    assert_eq!((tl.lanes[0].depths, tl.lanes[1].depths), (2, 1));
    // Tracks: a/0, a/1, b/0; every call individual at level 0.
    assert_eq!(tl.classes[0].offsets, vec![0, 1, 2, 3]);
    assert_eq!(tl.classes[0].start, vec![0.0, 10.0, 0.0]);
}
