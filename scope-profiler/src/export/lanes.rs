//! The lanes of a profile (a thread of a rank, or an async task), numbered
//! densely as the events name them.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::fxhash::FxHasher;
use crate::reader::ProfileReader;

use super::filter::Resolved;

/// One lane of a profile: a thread of a rank, or an async task.
///
/// ```
/// let lane = scope_profiler::export::Lane::default();
/// assert_eq!((lane.rank, lane.thread, lane.task), (0, 0, 0));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Lane {
    /// MPI rank.
    pub rank: u32,
    /// Index into the thread table, -1 when the file has no thread ids.
    pub thread: i64,
    /// Index into the task table, -1 for a thread lane.
    pub task: i64,
    /// A label: "thread NAME" or "task NAME" (or "main" without threads).
    pub name: String,
}

/// Maps (rank, thread, task) to dense lane numbers as events come.
pub(super) struct LaneMap<'r> {
    reader: &'r ProfileReader,
    ids: HashMap<(u32, i64, i64), u64, BuildHasherDefault<FxHasher>>,
    pub(super) lanes: Vec<Lane>,
    last: Option<((u32, i64, i64), u64)>,
    /// The filter whose lanes are kept, and per lane whether it is.
    pub(super) filter: Option<&'r Resolved>,
    kept: Vec<bool>,
}

impl<'r> LaneMap<'r> {
    pub(super) fn new(reader: &'r ProfileReader) -> Self {
        LaneMap {
            reader,
            ids: HashMap::default(),
            lanes: Vec::new(),
            last: None,
            filter: None,
            kept: Vec::new(),
        }
    }

    /// Whether lane `id` (a number [`Self::lane`] gave) is kept.
    pub(super) fn kept(&self, id: u64) -> bool {
        self.kept.get(id as usize).copied().unwrap_or(true)
    }

    pub(super) fn lane(&mut self, rank: u32, thread: i64, task: i64) -> u64 {
        let thread = if task >= 0 { -1 } else { thread };
        let key = (rank, thread, task);
        if let Some((k, id)) = self.last
            && k == key
        {
            return id;
        }
        let next = self.lanes.len() as u64;
        let id = *self.ids.entry(key).or_insert(next);
        if id == next {
            let lane = Lane {
                rank,
                thread,
                task,
                name: lane_name(self.reader, thread, task),
            };
            let kept = self.filter.is_none_or(|f| {
                let named = self.reader.threads().iter().find(|t| t.index == thread);
                f.lane(&lane, named.map(|t| t.name.as_str()))
            });
            self.kept.push(kept);
            self.lanes.push(lane);
        }
        self.last = Some((key, id));
        id
    }
}

/// "thread NAME", "task NAME" or "main".
fn lane_name(reader: &ProfileReader, thread: i64, task: i64) -> String {
    if task >= 0 {
        let name = reader.tasks().iter().find(|t| t.index == task);
        return match name {
            Some(t) => format!("task {} ({})", task, t.name),
            None => format!("task {task}"),
        };
    }
    if thread < 0 {
        return "main".to_owned();
    }
    match reader.threads().iter().find(|t| t.index == thread) {
        Some(t) => format!("thread {}", t.name),
        None => format!("thread {thread}"),
    }
}
