//! Whether every call of a written profile lies within its parent's span:
//! the parent ids the file holds, checked against the calls' times. Used by
//! `sp-check-nesting` (scripts/real-async-crate-test.sh) on the profiles an
//! instrumented crate's own tests write.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::Path;

use scope_profiler::Error;
use scope_profiler_reader::ProfileReader;

/// One call as the check needs it.
#[derive(Clone, Copy, Debug)]
struct Call {
    rank: u32,
    id: i64,
    parent: i64,
    start: i64,
    end: i64,
    region: u32,
    thread: i64,
    task: i64,
}

/// What broke: the parent id names no call, the call starts before its
/// parent or ends after it, or the parent's id is not smaller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Violation {
    /// No call of the file has the parent id.
    MissingParent,
    /// The call starts before its parent starts or ends after it ends.
    Outside,
    /// The parent's id is not smaller than the call's.
    IdOrder,
    /// The parent is on another lane (thread or task) than the call.
    OtherLane,
}

/// Violations of one kind between one child region and one parent region.
#[derive(Clone, Debug, Default)]
pub struct Shape {
    /// How many calls.
    pub count: u64,
    /// How many of them have their parent on another lane (thread, task).
    pub other_lane: u64,
    /// The first one met, described.
    pub example: String,
}

/// The outcome of [`check_nesting`] on one file.
#[derive(Clone, Debug, Default)]
pub struct NestingReport {
    /// Calls in the file.
    pub calls: u64,
    /// Calls with no parent.
    pub roots: u64,
    /// Calls on a task's lane (async tasks and what ran in them).
    pub in_tasks: u64,
    /// Calls that break the nesting, by kind.
    pub violations: BTreeMap<Violation, u64>,
    /// The broken calls by (kind, child region, parent region).
    pub shapes: BTreeMap<(Violation, String, String), Shape>,
}

impl NestingReport {
    /// Every violation, of every kind.
    pub fn violation_count(&self) -> u64 {
        self.violations.values().sum()
    }
}

impl fmt::Display for NestingReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} calls checked ({} roots, {} in async tasks), {} violations",
            self.calls,
            self.roots,
            self.in_tasks,
            self.violation_count()
        )?;
        let mut shapes: Vec<_> = self.shapes.iter().collect();
        shapes.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(b.0)));
        for ((kind, child, parent), shape) in shapes.iter().take(20) {
            writeln!(
                f,
                "  {kind:?} x{} ({} across lanes): {child}  under  {parent}\n    e.g. {}",
                shape.count, shape.other_lane, shape.example
            )?;
        }
        if shapes.len() > 20 {
            writeln!(f, "  ... and {} more shapes", shapes.len() - 20)?;
        }
        Ok(())
    }
}

/// Reads every event of the profile at `path` and checks each call
/// against its parent: the parent exists, its id is smaller, and the call
/// lies within its span (start and end inclusive).
pub fn check_nesting(path: &Path) -> Result<NestingReport, Error> {
    check_reader(&ProfileReader::open(path)?)
}

/// [`check_nesting`] on an open profile.
pub fn check_reader(reader: &ProfileReader) -> Result<NestingReport, Error> {
    let names = reader.region_names();
    let mut calls = Vec::with_capacity(usize::try_from(reader.event_count()).unwrap_or(0));
    for chunk in reader.chunks(1 << 20) {
        let chunk = chunk?;
        let row = &reader.rows()[chunk.row];
        let (region, rank) = (row.region_id, row.rank);
        let e = &chunk.events;
        for i in 0..e.len() {
            calls.push(Call {
                rank,
                id: e.call_ids[i],
                parent: e.parent_ids[i],
                start: e.start_ns[i],
                end: e.start_ns[i].saturating_add(e.durations[i]),
                region,
                thread: e.thread_ids[i],
                task: e.task_ids.as_ref().map_or(-1, |t| t[i]),
            });
        }
    }
    // Call ids are a rank's own.
    let by_id: HashMap<(u32, i64), usize> = calls
        .iter()
        .enumerate()
        .map(|(i, c)| ((c.rank, c.id), i))
        .collect();
    let name = |region: u32| {
        names
            .get(region as usize)
            .cloned()
            .unwrap_or_else(|| format!("region {region}"))
    };
    let mut report = NestingReport {
        calls: calls.len() as u64,
        ..NestingReport::default()
    };
    for call in &calls {
        report.in_tasks += u64::from(call.task >= 0);
        if call.parent < 0 {
            report.roots += 1;
            continue;
        }
        let parent = by_id.get(&(call.rank, call.parent)).map(|&i| calls[i]);
        let across = parent.is_some_and(|p| (p.thread, p.task) != (call.thread, call.task));
        let kind = match parent {
            None => Some(Violation::MissingParent),
            Some(p) if call.start < p.start || call.end > p.end => Some(Violation::Outside),
            Some(p) if p.id >= call.id => Some(Violation::IdOrder),
            Some(_) if across => Some(Violation::OtherLane),
            Some(_) => None,
        };
        let Some(kind) = kind else {
            continue;
        };
        *report.violations.entry(kind).or_default() += 1;
        let parent_name = parent.map_or_else(|| "(no such call)".to_owned(), |p| name(p.region));
        let shape = report
            .shapes
            .entry((kind, name(call.region), parent_name))
            .or_default();
        shape.count += 1;
        shape.other_lane += u64::from(across);
        if shape.example.is_empty() {
            shape.example = describe(call, parent.as_ref());
        }
    }
    Ok(report)
}

/// One broken call and its parent, times relative to the parent's start.
fn describe(call: &Call, parent: Option<&Call>) -> String {
    let lane = |c: &Call| format!("thread {} task {}", c.thread, c.task);
    match parent {
        None => format!(
            "call {} ({}) names parent {}, which is not in the file",
            call.id,
            lane(call),
            call.parent
        ),
        Some(p) => format!(
            "call {} [{:+}, {:+}] ns ({}) in parent {} [0, {}] ns ({})",
            call.id,
            call.start - p.start,
            call.end - p.start,
            lane(call),
            p.id,
            p.end - p.start,
            lane(p)
        ),
    }
}
