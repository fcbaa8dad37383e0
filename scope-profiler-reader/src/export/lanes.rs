//! The lanes of a profile (a thread of a rank, or an async task: [`Lane`],
//! defined in the core beside the call tree that lists them), numbered
//! densely as the events name them.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::fxhash::FxHasher;
use crate::profile_reader::ProfileReader;

use super::filter::Resolved;
use crate::calltree::Lane;

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
            let mut lane = Lane::default();
            (lane.rank, lane.thread, lane.task) = (rank, thread, task);
            lane.name = lane_name(self.reader, thread, task);
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
