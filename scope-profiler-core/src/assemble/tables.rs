//! What a cut tells about the session besides its calls: the threads and
//! tasks tables, the recording's health as metadata, the region table made
//! complete.

#![forbid(unsafe_code)]

use crate::clock::TickConverter;
use crate::lane::{Lane, LaneCut, TaskRecord};
use crate::metadata::json_string;
use crate::profile::{RecordingHealth, TaskInfo, ThreadInfo};
use crate::registry::{self, RegionInfo, RegionTable};
use crate::sampling::SampleCut;
use crate::sync::lock;
use crate::value::Value;

/// The tasks in the cut, in order of their numbers, and the file's index
/// of each task number. A task whose lane of its own is in the cut before
/// its record (still running, or completing at the cut) is listed with what
/// is known: its start, no end yet.
pub(super) fn task_table(lanes: &[LaneCut]) -> (Vec<TaskRecord>, Vec<i32>) {
    let mut tasks: Vec<TaskRecord> = lanes.iter().flat_map(|l| l.tasks.iter().copied()).collect();
    for l in lanes {
        if let Some(index) = l.lane.task_index
            && l.tasks.is_empty()
            && l.len > 0
        {
            tasks.push(TaskRecord {
                index,
                start: l.lane.start_ticks,
                end: 0,
                region: u32::MAX,
                first_lane: l.lane.index,
                polls: 0,
                running: 0,
            });
        }
    }
    tasks.sort_by_key(|t| t.index);
    let numbers = tasks.last().map_or(0, |t| t.index as usize + 1);
    let mut pos = vec![-1i32; numbers];
    for (i, t) in tasks.iter().enumerate() {
        pos[t.index as usize] = i as i32;
    }
    (tasks, pos)
}

/// The region table with at least `used` regions. Every id a cut uses is in
/// the table (see `plan`); should one ever not be, it is named
/// `<unregistered region N>` rather than lost or indexed out of bounds.
pub(super) fn complete_regions(table: &RegionTable, used: usize) -> Vec<RegionInfo> {
    let mut regions = table.snapshot();
    for id in regions.len()..used {
        let entry = registry::intern(&format!("<unregistered region {id}>"));
        regions.push(RegionInfo::new(entry, "", 0));
    }
    regions
}

/// The `/metadata` entries that say what a run did not keep: written only
/// when something was spilled, failed or dropped.
pub(super) fn health_metadata(health: &RecordingHealth, origin_ns: i64) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = Vec::new();
    if health.spilled_bytes > 0 {
        out.push(("spilled_bytes".into(), (health.spilled_bytes as i64).into()));
    }
    if let Some(error) = &health.spill_error {
        out.push(("spill_error".into(), error.clone().into()));
    }
    if !health.dropped.is_empty() {
        let total: u64 = health.dropped.iter().map(|d| d.num_calls).sum();
        out.push(("dropped_calls".into(), (total as i64).into()));
        let by_region: Vec<String> = health
            .dropped
            .iter()
            .map(|d| {
                format!(
                    "{}: {{\"calls\": {}, \"total_ns\": {}}}",
                    json_string(&d.name),
                    d.num_calls,
                    d.total
                )
            })
            .collect();
        out.push((
            "dropped_calls_by_region".into(),
            format!("{{{}}}", by_region.join(", ")).into(),
        ));
    }
    if let Some(ns) = health.events_stopped_ns {
        out.push(("events_stopped_time_ns".into(), (origin_ns + ns).into()));
    }
    if !health.perf_events_not_counted.is_empty() {
        let threads: Vec<String> = health
            .perf_events_not_counted
            .iter()
            .map(|t| json_string(t))
            .collect();
        out.push((
            "perf_events_not_counted".into(),
            format!("[{}]", threads.join(", ")).into(),
        ));
    }
    out
}

/// The file's notes on a session's sampling: the rate, the samples kept
/// (and of them, those that went through the scratch file) and missed,
/// and the threads that could not be sampled.
pub(super) fn sampling_metadata(cut: &SampleCut) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = vec![
        ("sample_hz".into(), cut.hz.into()),
        ("samples".into(), cut.len().into()),
        ("samples_missed".into(), (cut.dropped + cut.lost).into()),
    ];
    if cut.spilled > 0 {
        out.push(("samples_spilled".into(), cut.spilled.into()));
    }
    if cut.unchained > 0 {
        out.push(("samples_without_chain".into(), cut.unchained.into()));
    }
    if !cut.failures.is_empty() {
        let threads: Vec<String> = cut.failures.iter().map(|t| json_string(t)).collect();
        out.push((
            "samples_not_taken".into(),
            format!("[{}]", threads.join(", ")).into(),
        ));
    }
    out
}

pub(super) fn task_info(
    index: usize,
    t: &TaskRecord,
    conv: &TickConverter,
    origin_ns: i64,
    name: &str,
) -> TaskInfo {
    let created = conv.ns(t.start);
    let running = conv.ns(t.start + t.running) - created;
    // A task still running at the cut has no end yet (-1).
    let done = (t.end != 0).then(|| conv.ns(t.end));
    TaskInfo {
        index: index as i64,
        thread_index: t.first_lane as i64,
        created_ns: created - origin_ns,
        done_ns: done.map_or(-1, |d| d - origin_ns),
        steps: t.polls as i64,
        running_ns: running,
        suspended_ns: done.map_or(0, |d| (d - created - running).max(0)),
        kind: "future".to_owned(),
        name: name.to_owned(),
        coro_name: name.to_owned(),
    }
}

pub(super) fn thread_info(lane: &Lane, conv: &TickConverter, origin_ns: i64) -> ThreadInfo {
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
