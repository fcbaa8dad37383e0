//! From the records of every lane to the file's rows and columns.
//!
//! Per lane, records arrive in the order calls ended, each with its depth.
//! One forward pass over them finds every call's parent (the first later
//! record one level up), its subtree size and its children's total time; one
//! backward pass gives each call its pre-order position, which is the order
//! calls started. Call ids are those positions, lane after lane, so a parent's
//! id is always smaller than its children's. Rows are then filled region by
//! region with a counting sort: lanes in order, calls in start order.

use std::sync::Arc;

use crate::clock::{Anchor, TickConverter};
use crate::metadata;
use crate::profile::{Events, Profile, RegionRow, SummaryStatistics, TaskInfo, ThreadInfo};
use crate::record::Record;
use crate::session::Session;
use crate::thread::{Lane, TaskRecord, lock};

const NONE: u32 = u32::MAX;

/// The assembled profile and the per-region call counts (by session id).
pub(crate) struct Assembly {
    pub profile: Profile,
    pub counts: Vec<u64>,
}

/// The nesting of one lane's calls, indexed like its records (end order).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Nesting {
    /// Index of the enclosing call, `NONE` for a root (or a call whose
    /// enclosing call had not ended yet).
    pub parent: Vec<u32>,
    /// Position of each call in start order.
    pub pre: Vec<u32>,
}

/// Recovers the call tree of one lane from end order and depths.
pub(crate) fn nest(records: &[Record]) -> Nesting {
    let n = records.len();
    let mut parent = vec![NONE; n];
    let mut size = vec![1u32; n];
    let mut pending: Vec<u32> = Vec::new();
    for (i, record) in records.iter().enumerate() {
        while let Some(&top) = pending.last() {
            if records[top as usize].depth <= record.depth {
                break;
            }
            parent[top as usize] = i as u32;
            size[i] += size[top as usize];
            pending.pop();
        }
        pending.push(i as u32);
    }
    // pre(i) = calls ended before i's subtree began + i's recorded ancestors.
    let mut ancestors = vec![0u32; n];
    let mut pre = vec![0u32; n];
    for i in (0..n).rev() {
        if parent[i] != NONE {
            ancestors[i] = ancestors[parent[i] as usize] + 1;
        }
        pre[i] = i as u32 + 1 - size[i] + ancestors[i];
    }
    Nesting { parent, pre }
}

/// One lane's calls, converted and nested.
struct LaneCalls {
    lane: Arc<Lane>,
    records: Vec<Record>,
    nesting: Nesting,
    start_ns: Vec<i64>,
    duration_ns: Vec<i64>,
    exclusive_ns: Vec<i64>,
}

impl LaneCalls {
    fn new(lane: Arc<Lane>, conv: &TickConverter) -> LaneCalls {
        let mut records = Vec::new();
        lane.for_each_chunk(|chunk| records.extend_from_slice(chunk));
        let nesting = nest(&records);
        let start_ns: Vec<i64> = records.iter().map(|r| conv.ns(r.start)).collect();
        let duration_ns: Vec<i64> = records
            .iter()
            .zip(&start_ns)
            .map(|(r, &s)| conv.ns(r.end) - s)
            .collect();
        let mut exclusive_ns = duration_ns.clone();
        for (i, &p) in nesting.parent.iter().enumerate() {
            if p != NONE {
                exclusive_ns[p as usize] -= duration_ns[i];
            }
        }
        LaneCalls {
            lane,
            records,
            nesting,
            start_ns,
            duration_ns,
            exclusive_ns,
        }
    }

    /// Record indices in start order.
    fn in_start_order(&self) -> Vec<u32> {
        let mut order = vec![0u32; self.records.len()];
        for (i, &p) in self.nesting.pre.iter().enumerate() {
            order[p as usize] = i as u32;
        }
        order
    }
}

/// Builds the profile of everything `session` recorded up to `end`.
pub(crate) fn assemble(session: &Session, end: Anchor) -> Assembly {
    let conv = TickConverter::new(session.start, end);
    let regions = session.regions.snapshot();
    let lanes: Vec<Arc<Lane>> = lock(&session.lanes).clone();
    let mut tasks: Vec<TaskRecord> = Vec::new();
    for lane in &lanes {
        tasks.extend_from_slice(&lock(&lane.tasks));
    }
    tasks.sort_by_key(|t| (t.start, std::cmp::Reverse(t.end)));
    let lanes: Vec<LaneCalls> = lanes
        .into_iter()
        .map(|l| LaneCalls::new(l, &conv))
        .collect();

    let mut counts = vec![0u64; regions.len()];
    let task_regions = tasks.iter().map(|t| t.region);
    for region in lanes
        .iter()
        .flat_map(|l| l.records.iter().map(|r| r.region))
        .chain(task_regions)
    {
        counts[region as usize] += 1;
    }
    // File ids: the regions with calls, in registration order.
    let mut file_id = vec![NONE; regions.len()];
    let mut rows = Vec::new();
    let mut offset = 0u64;
    for (id, info) in regions.iter().enumerate() {
        if counts[id] == 0 {
            continue;
        }
        file_id[id] = rows.len() as u32;
        rows.push(RegionRow {
            region_id: rows.len() as u32,
            rank: 0,
            event_offset: offset,
            event_count: counts[id],
            source_file: info.file.to_owned(),
            source_line: if info.file.is_empty() {
                -1
            } else {
                info.line as i64
            },
            exclusive_total: 0,
            stats: SummaryStatistics::default(),
        });
        offset += counts[id];
    }
    let region_names = regions
        .iter()
        .zip(&counts)
        .filter(|(_, n)| **n > 0)
        .map(|(info, _)| info.entry.name.to_owned())
        .collect();

    let mut events = fill_rows(&lanes, &file_id, &mut rows, offset as usize);
    if !tasks.is_empty() {
        fill_task_rows(&tasks, &conv, &file_id, &lanes, &mut rows, &mut events);
    }
    for row in &mut rows {
        let range = row.event_offset as usize..(row.event_offset + row.event_count) as usize;
        let calls: Vec<(i64, i64)> = events.start_ns[range.clone()]
            .iter()
            .copied()
            .zip(events.durations[range].iter().copied())
            .collect();
        row.stats = SummaryStatistics::from_calls(&calls);
    }
    let threads = lanes
        .iter()
        .map(|l| thread_info(&l.lane, &conv, session.start.ns))
        .collect();
    let origin = session.start.ns;
    let tasks = tasks
        .iter()
        .enumerate()
        .map(|(index, t)| task_info(index, t, &conv, origin, &regions[t.region as usize]))
        .collect();
    let profile = Profile {
        metadata: metadata::run_metadata(session, end),
        region_names,
        rows,
        events,
        threads,
        tasks,
    };
    Assembly { profile, counts }
}

/// Scatters every lane's calls into their rows; sets the rows' exclusive totals.
fn fill_rows(lanes: &[LaneCalls], file_id: &[u32], rows: &mut [RegionRow], total: usize) -> Events {
    let mut events = Events {
        start_ns: vec![0; total],
        durations: vec![0; total],
        call_ids: vec![0; total],
        parent_ids: vec![0; total],
        thread_ids: vec![0; total],
        task_ids: None,
    };
    let mut cursor: Vec<usize> = rows.iter().map(|r| r.event_offset as usize).collect();
    let mut exclusive = vec![0i64; rows.len()];
    let mut call_base = 0i64;
    for lane in lanes {
        for i in lane.in_start_order() {
            let i = i as usize;
            let row = file_id[lane.records[i].region as usize] as usize;
            let slot = cursor[row];
            cursor[row] += 1;
            let parent = lane.nesting.parent[i];
            events.start_ns[slot] = lane.start_ns[i];
            events.durations[slot] = lane.duration_ns[i];
            events.call_ids[slot] = call_base + lane.nesting.pre[i] as i64;
            events.parent_ids[slot] = match parent {
                NONE => -1,
                p => call_base + lane.nesting.pre[p as usize] as i64,
            };
            events.thread_ids[slot] = lane.lane.index as i64;
            exclusive[row] += lane.exclusive_ns[i];
        }
        call_base += lane.records.len() as i64;
    }
    for (row, total) in rows.iter_mut().zip(exclusive) {
        row.exclusive_total = total;
    }
    events
}

/// Places the async calls after the thread calls of their rows, each on its
/// own task lane (no parent: its polls may interleave with anything).
fn fill_task_rows(
    tasks: &[TaskRecord],
    conv: &TickConverter,
    file_id: &[u32],
    lanes: &[LaneCalls],
    rows: &mut [RegionRow],
    events: &mut Events,
) {
    let total = events.len();
    let mut task_ids = vec![-1i64; total];
    // Each row's thread calls come first; its async calls follow them.
    let mut cursor: Vec<usize> = rows.iter().map(|r| r.event_offset as usize).collect();
    for lane in lanes {
        for r in &lane.records {
            cursor[file_id[r.region as usize] as usize] += 1;
        }
    }
    let first_call_id = lanes.iter().map(|l| l.records.len() as i64).sum::<i64>();
    for (index, t) in tasks.iter().enumerate() {
        let row = file_id[t.region as usize] as usize;
        let slot = cursor[row];
        cursor[row] += 1;
        let start = conv.ns(t.start);
        let duration = conv.ns(t.end) - start;
        events.start_ns[slot] = start;
        events.durations[slot] = duration;
        events.call_ids[slot] = first_call_id + index as i64;
        events.parent_ids[slot] = -1;
        events.thread_ids[slot] = t.first_lane as i64;
        task_ids[slot] = index as i64;
        rows[row].exclusive_total += duration;
    }
    events.task_ids = Some(task_ids);
}

fn task_info(
    index: usize,
    t: &TaskRecord,
    conv: &TickConverter,
    origin_ns: i64,
    region: &crate::registry::RegionInfo,
) -> TaskInfo {
    let (created, done) = (conv.ns(t.start), conv.ns(t.end));
    let running = conv.ns(t.start + t.running) - created;
    TaskInfo {
        index: index as i64,
        thread_index: t.first_lane as i64,
        created_ns: created - origin_ns,
        done_ns: done - origin_ns,
        steps: t.polls as i64,
        running_ns: running,
        suspended_ns: (done - created - running).max(0),
        kind: "future".to_owned(),
        name: region.entry.name.to_owned(),
        coro_name: region.entry.name.to_owned(),
    }
}

fn thread_info(lane: &Lane, conv: &TickConverter, origin_ns: i64) -> ThreadInfo {
    let exit = *lock(&lane.exit);
    ThreadInfo {
        index: lane.index as i64,
        ident: lane.ident,
        native_id: lane.native_id,
        daemon: 0,
        start_ns: conv.ns(lane.start_ticks) - origin_ns,
        end_ns: exit.map_or(-1, |(t, _)| conv.ns(t) - origin_ns),
        cpu_ns: lane.cpu_ns(),
        name: lane.name.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(depth: u32, region: u32) -> Record {
        Record {
            start: 0,
            end: 0,
            region,
            depth,
        }
    }

    #[test]
    fn nesting_from_end_order_and_depth() {
        // a { b { c } d } e   ended in order: c b d a e
        let records = [rec(2, 2), rec(1, 1), rec(1, 3), rec(0, 0), rec(0, 4)];
        let n = nest(&records);
        assert_eq!(n.parent, vec![1, 3, 3, NONE, NONE]);
        // start order: a b c d e
        assert_eq!(n.pre, vec![2, 1, 3, 0, 4]);
    }

    #[test]
    fn calls_whose_parent_is_still_open_are_roots() {
        // outer still open: only its children ended.
        let records = [rec(1, 1), rec(2, 2), rec(1, 1)];
        let n = nest(&records);
        assert_eq!(n.parent, vec![NONE, 2, NONE]);
        assert_eq!(n.pre, vec![0, 2, 1]);
    }
}
