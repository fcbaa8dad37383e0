//! The backward walk on hand-made lanes: parents across chunk edges,
//! and a tasks lane's blocks (issue 29, item 5).

// `chunk` fills a chunk with `unsafe` (see `mod.rs`).
#![allow(unsafe_code)]

use std::sync::Arc;

use super::spilled::Spilled;
use super::walk::{Met, Visitor, WalkInput, walk_lane};
use crate::clock::{Anchor, TickConverter};
use crate::lane::{Lane, LaneCut, SegmentCut, TaskRecord};
use crate::options::OnSpillFailure;
use crate::record::{Chunk, Record};
use crate::store::{Limits, Store};

/// Every call the walk meets: `(region, parent's region, start, thread,
/// task)`, in the order met.
#[derive(Default)]
struct Log(Vec<(u32, Option<u32>, i64, i32, i32)>);

impl Visitor for Log {
    type Link = u32;
    fn visit(&mut self, parent: Option<u32>, c: &Met<'_>) -> std::io::Result<u32> {
        self.0
            .push((c.record.region, parent, c.start, c.thread, c.task));
        Ok(c.record.region)
    }
}

/// A call of `region` from `start` to `end` at `depth`.
fn r(region: u32, start: u64, end: u64, depth: u32) -> Record {
    Record::new(start, end, region, depth)
}

fn chunk(records: &[Record]) -> SegmentCut {
    let chunk = Arc::new(Chunk::new(records.len()));
    for (i, record) in records.iter().enumerate() {
        // SAFETY: this thread is the chunk's only writer; indices in order.
        unsafe { chunk.push(i, *record) };
    }
    SegmentCut::Memory(chunk, records.len(), 0)
}

fn cut(lane: Lane, segments: Vec<SegmentCut>, tasks: Vec<TaskRecord>) -> LaneCut {
    LaneCut {
        lane: Arc::new(lane),
        segments,
        tasks,
        counts: Vec::new(),
        dropped: Vec::new(),
        len: 0,
        metadata: Vec::new(),
    }
}

/// A session from tick 0 to 10^6; two tasks numbered 0 and 1 at file
/// positions 5 and 7.
fn input() -> WalkInput {
    let start = Anchor { ticks: 0, ns: 0 };
    let end = Anchor {
        ticks: 1_000_000,
        ns: 1_000_000,
    };
    let limits = Limits {
        memory: 1 << 20,
        disk: 0,
        on_failure: OnSpillFailure::KeepInMemory,
        aggregate: false,
        counters: None,
        sample_hz: None,
    };
    WalkInput {
        conv: TickConverter::new(start, end),
        store: Store::new(limits, std::env::temp_dir()),
        lanes: Vec::new(),
        task_pos: vec![5, 7],
        keyed: None,
    }
}

#[test]
fn parents_are_found_across_chunk_edges() {
    // a [ b [ c ], d ], e: stored in end order, depth = calls open at
    // the start; cut into chunks so that a child and its parent, and a
    // parent and its own parent, sit in different chunks.
    let (a, b, c, d, e) = (1, 2, 3, 4, 5);
    let lane = cut(
        Lane::for_current_thread(3),
        vec![
            chunk(&[r(c, 20, 30, 2)]),
            chunk(&[r(b, 10, 40, 1), r(d, 50, 60, 1)]),
            chunk(&[r(a, 0, 100, 0)]),
            chunk(&[r(e, 200, 300, 0)]),
        ],
        Vec::new(),
    );
    let mut log = Log::default();
    walk_lane(&mut log, &input(), &lane, &mut Spilled::decode()).unwrap();
    let met: Vec<(u32, Option<u32>)> = log.0.iter().map(|m| (m.0, m.1)).collect();
    // Backwards: every call after its parent.
    assert_eq!(
        met,
        [
            (e, None),
            (a, None),
            (d, Some(a)),
            (b, Some(a)),
            (c, Some(b))
        ]
    );
    assert!(log.0.iter().all(|m| m.3 == 3 && m.4 == -1), "{:?}", log.0);
    assert_eq!(log.0[4].2, input().conv.ns(20), "c's start, converted");
}

#[test]
fn a_deeper_call_after_shallower_ones_gets_the_latest_parent() {
    // x [ y ], then x2 [ y2 [ z2 ] ]: z2's parent is y2, not y (the
    // chain is cut back when a shallower call is met).
    let (x, y, x2, y2, z2) = (1, 2, 3, 4, 5);
    let lane = cut(
        Lane::for_current_thread(0),
        vec![
            chunk(&[r(y, 1, 2, 1), r(x, 0, 3, 0), r(z2, 6, 7, 2)]),
            chunk(&[r(y2, 5, 8, 1), r(x2, 4, 9, 0)]),
        ],
        Vec::new(),
    );
    let mut log = Log::default();
    walk_lane(&mut log, &input(), &lane, &mut Spilled::decode()).unwrap();
    let parents: Vec<(u32, Option<u32>)> = log.0.iter().map(|m| (m.0, m.1)).collect();
    assert_eq!(
        parents,
        [
            (x2, None),
            (y2, Some(x2)),
            (z2, Some(y2)),
            (x, None),
            (y, Some(x))
        ]
    );
}

#[test]
fn a_tasks_lane_gives_each_block_its_task_and_first_thread() {
    // Two blocks: task 0 (first polled by lane 4) with one inner call,
    // then task 1 (first polled by lane 6); the depth-0 call of each
    // block is its last record.
    let task = |index, first_lane| TaskRecord {
        index,
        start: 0,
        end: 0,
        region: 9,
        first_lane,
        polls: 1,
        running: 0,
    };
    let lane = cut(
        Lane::for_tasks(2, None),
        vec![
            chunk(&[r(1, 1, 2, 1), r(9, 0, 3, 0)]),
            chunk(&[r(9, 10, 20, 0)]),
        ],
        vec![task(0, 4), task(1, 6)],
    );
    let mut log = Log::default();
    let input = input();
    walk_lane(&mut log, &input, &lane, &mut Spilled::decode()).unwrap();
    let ns = |t| input.conv.ns(t);
    // (region, parent, start, thread, task position in the file)
    assert_eq!(
        log.0,
        [
            (9, None, ns(10), 6, 7),
            (9, None, ns(0), 4, 5),
            (1, Some(9), ns(1), 4, 5),
        ]
    );
}
