//! The call tree of a file: its groups, and how it is built from the call
//! paths a file stores or from the walk of its events. The tree is
//! [`CallTree`], the type of `finalize`'s summary, defined in the core
//! (`calltree`) so that both build it.

#![forbid(unsafe_code)]

use crate::calltree::{CallTree, TreeBuilder};
use crate::error::Error;
use crate::profile::CallPath;
use crate::profile_reader::ProfileReader;

use super::Lane;
use super::filter::{Exported, Resolved};
use super::lanes::LaneMap;
use super::sort::Call;
use super::walk::{Visitor, walk};

/// How [`ProfileReader::call_tree`] groups the calls: one tree per group.
///
/// ```
/// assert_eq!(scope_profiler_reader::export::Grouping::default(), scope_profiler_reader::export::Grouping::All);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Grouping {
    /// Every lane of every rank in one tree.
    #[default]
    All,
    /// One tree per rank.
    Rank,
    /// One tree per lane (thread or task of a rank).
    Lane,
}

impl Grouping {
    /// The label of the group of lane `lane` (`info`: the lane, if known).
    fn label(self, lane: u64, info: Option<&Lane>) -> String {
        match self {
            Grouping::All => "all".to_owned(),
            Grouping::Rank => format!("rank {}", info.map_or(0, |l| l.rank)),
            Grouping::Lane => match info {
                Some(l) => format!("rank {} - {}", l.rank, l.name),
                None => format!("lane {lane}"),
            },
        }
    }
}

/// The call tree of the calls `filter` keeps, from the events.
pub(super) fn events_tree(
    reader: &ProfileReader,
    grouping: Grouping,
    filter: &Resolved,
) -> Result<(CallTree, Exported), Error> {
    let mut builder = TreeWalk::new(grouping);
    let (lanes, done) = walk(reader, filter, &mut builder)?;
    Ok((builder.finish(reader, lanes), done))
}

/// The call tree of the call paths a file stores: the tree [`ProfileReader::call_tree`]
/// builds from the events, without reading them (children in order of
/// their first call).
pub(super) fn tree_of_paths(
    reader: &ProfileReader,
    paths: &[CallPath],
    grouping: Grouping,
) -> CallTree {
    let mut lanes = LaneMap::new(reader);
    let mut builder = TreeBuilder::grouped();
    // Parents come before their paths in the list; in order of first call,
    // a parent (which starts no later) before its paths, at equal starts by
    // depth.
    let mut depth = vec![0u32; paths.len()];
    for (i, p) in paths.iter().enumerate() {
        depth[i] = p
            .parent
            .map_or(0, |q| depth.get(q as usize).map_or(0, |d| d + 1));
    }
    let mut order: Vec<usize> = (0..paths.len()).collect();
    order.sort_by_key(|&i| (paths[i].first_start, depth[i], i));
    let mut node_of = vec![u32::MAX; paths.len()];
    // The (node, lane) pairs counted in the nodes' lanes.
    let mut lanes_seen: std::collections::HashSet<(u32, u64)> = Default::default();
    for i in order {
        let p = &paths[i];
        let parent = match p.parent {
            Some(q) => node_of.get(q as usize).copied().unwrap_or(u32::MAX),
            None => {
                let lane = lanes.lane(0, p.thread_id, p.task_id);
                let root = builder.group(&grouping.label(lane, lanes.lanes.get(lane as usize)));
                builder.add_root_call(root, p.num_calls, p.total);
                root
            }
        };
        if parent == u32::MAX {
            continue; // a parent after its path: not a file of ours
        }
        let node = builder.child(parent, p.region_id);
        node_of[i] = node;
        let lane = lanes.lane(0, p.thread_id, p.task_id);
        if lanes_seen.insert((node, lane)) {
            builder.add_lane(node);
        }
        builder.add_path(node, p);
    }
    builder.finish_grouped(reader.region_names().to_vec(), lanes.lanes)
}

/// Builds the tree of a walk of the events (the walk's [`Visitor`]).
pub(super) struct TreeWalk {
    grouping: Grouping,
    pub(super) tree: TreeBuilder,
    lane_root: u32,
    stack: Vec<u32>,
    lanes: Vec<Lane>,
}

impl TreeWalk {
    pub(super) fn new(grouping: Grouping) -> TreeWalk {
        TreeWalk {
            grouping,
            tree: TreeBuilder::grouped(),
            lane_root: 0,
            stack: Vec::new(),
            lanes: Vec::new(),
        }
    }

    /// The tree, with the names of `reader` and its `lanes`.
    pub(super) fn finish(self, reader: &ProfileReader, lanes: Vec<Lane>) -> CallTree {
        self.tree
            .finish_grouped(reader.region_names().to_vec(), lanes)
    }
}

impl Visitor for TreeWalk {
    fn open(&mut self, call: &Call, depth: usize, _at: i64) -> Result<(), Error> {
        let parent = match depth {
            0 => self.lane_root,
            _ => self.stack.get(depth - 1).copied().unwrap_or(self.lane_root),
        };
        self.stack.truncate(depth);
        let node = self.tree.child(parent, call.region as u32);
        self.tree.on_lane(node, call.lane);
        self.stack.push(node);
        self.tree.span(call.start, call.end());
        Ok(())
    }

    fn close(&mut self, call: &Call, depth: usize, children: i64, _at: i64) -> Result<(), Error> {
        let Some(&node) = self.stack.get(depth) else {
            return Ok(());
        };
        self.tree
            .add_call(node, call.duration, call.duration.wrapping_sub(children));
        if depth == 0
            && let Some(root) = self.tree.parent(node)
        {
            self.tree.add_root_call(root, 1, call.duration);
        }
        Ok(())
    }

    fn lane(&mut self, lane: u64, begin: bool) -> Result<(), Error> {
        if begin {
            let label = self.grouping.label(lane, self.lanes.get(lane as usize));
            self.lane_root = self.tree.group(&label);
            self.stack.clear();
        }
        Ok(())
    }

    fn lanes(&mut self, lanes: &[Lane]) {
        self.lanes = lanes.to_vec();
    }
}
