//! The call tree: its nodes and groups, built from the call paths a file
//! stores or from the walk of its events.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::error::Error;
use crate::fxhash::FxHasher;
use crate::histogram::LogHistogram;
use crate::profile::CallPath;
use crate::reader::ProfileReader;

use super::filter::{Exported, Resolved};
use super::lanes::{Lane, LaneMap};
use super::sort::Call;
use super::walk::{Visitor, walk};

/// One node of a [`CallTree`]: the calls of one call path (the regions
/// from a root down to this one) in one group.
///
/// ```
/// let node = scope_profiler::export::TreeNode::default();
/// assert_eq!(node.p95(), 0);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct TreeNode {
    /// The enclosing node; `None` for a group's root.
    pub parent: Option<usize>,
    /// The region (index into the region names); `None` for a group's root.
    pub region: Option<u32>,
    /// Children, in order of first call.
    pub children: Vec<usize>,
    /// Calls.
    pub num_calls: u64,
    /// Summed durations, ns.
    pub total: i64,
    /// Summed time outside direct child calls, ns.
    pub exclusive: i64,
    /// Shortest call, ns.
    pub minimum: i64,
    /// Longest call, ns.
    pub maximum: i64,
    /// Lanes (threads or tasks of a rank) with calls of this path.
    pub lanes: u64,
    hist: LogHistogram,
    /// The last lane counted in `lanes`, plus one (0: none yet).
    last_lane: u64,
}

impl TreeNode {
    /// Mean duration, ns (0 without calls).
    ///
    /// ```
    /// assert_eq!(scope_profiler::export::TreeNode::default().mean(), 0.0);
    /// ```
    pub fn mean(&self) -> f64 {
        match self.num_calls {
            0 => 0.0,
            n => self.total as f64 / n as f64,
        }
    }

    /// The 95th percentile of the durations, ns, from a log histogram with
    /// 16 buckets per power of two (within about 3%, clamped to min..max).
    ///
    /// ```
    /// assert_eq!(scope_profiler::export::TreeNode::default().p95(), 0);
    /// ```
    pub fn p95(&self) -> i64 {
        self.quantile(0.95)
    }

    /// The `q` quantile (0..=1) of the durations, as [`Self::p95`].
    ///
    /// ```
    /// assert_eq!(scope_profiler::export::TreeNode::default().quantile(0.5), 0);
    /// ```
    pub fn quantile(&self, q: f64) -> i64 {
        self.hist
            .quantile(q, self.num_calls, self.minimum, self.maximum)
    }

    /// Counts `lane` in [`Self::lanes`] unless it was the last one counted
    /// (the walk gives a lane's calls together).
    fn on_lane(&mut self, lane: u64) {
        if self.last_lane != lane.wrapping_add(1) {
            self.last_lane = lane.wrapping_add(1);
            self.lanes += 1;
        }
    }

    fn add(&mut self, duration: i64, own: i64) {
        if self.num_calls == 0 {
            (self.minimum, self.maximum) = (duration, duration);
        }
        self.num_calls += 1;
        self.total = self.total.wrapping_add(duration);
        self.exclusive = self.exclusive.wrapping_add(own);
        self.minimum = self.minimum.min(duration);
        self.maximum = self.maximum.max(duration);
        self.hist.add(duration);
    }
}

/// How [`ProfileReader::call_tree`] groups the calls: one tree per group.
///
/// ```
/// assert_eq!(scope_profiler::export::Grouping::default(), scope_profiler::export::Grouping::All);
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

/// The call tree of a file: per group (see [`Grouping`]) a root node whose
/// descendants are the call paths, with calls, total and own time.
///
/// ```
/// let tree = scope_profiler::export::CallTree::default();
/// assert!(tree.roots.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct CallTree {
    /// Every node; children refer to them by index.
    pub nodes: Vec<TreeNode>,
    /// One root per group, with its label ("all", "rank 0", "rank 0 - thread main").
    pub roots: Vec<(usize, String)>,
    /// The lanes of the file.
    pub lanes: Vec<Lane>,
    /// Earliest start of any call, ns.
    pub first_start: i64,
    /// Latest end of any call, ns.
    pub last_end: i64,
}

/// The call tree of the calls `filter` keeps, from the events.
pub(super) fn events_tree(
    reader: &ProfileReader,
    grouping: Grouping,
    filter: &Resolved,
) -> Result<(CallTree, Exported), Error> {
    let mut builder = TreeBuilder::new(grouping);
    let (lanes, done) = walk(reader, filter, &mut builder)?;
    Ok((builder.finish(lanes), done))
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
    let mut builder = TreeBuilder::new(grouping);
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
    let mut node_of = vec![usize::MAX; paths.len()];
    // The (node, lane) pairs counted in the nodes' `lanes`.
    let mut lanes_seen: std::collections::HashSet<(usize, u64)> = Default::default();
    for i in order {
        let p = &paths[i];
        let parent = match p.parent {
            Some(q) => node_of.get(q as usize).copied().unwrap_or(usize::MAX),
            None => {
                let lane = lanes.lane(0, p.thread_id, p.task_id);
                let root = builder.root(grouping.label(lane, lanes.lanes.get(lane as usize)));
                let r = &mut builder.tree.nodes[root];
                r.num_calls = r.num_calls.wrapping_add(p.num_calls);
                r.total = r.total.wrapping_add(p.total);
                root
            }
        };
        if parent == usize::MAX {
            continue; // a parent after its path: not a file of ours
        }
        let node = builder.child(parent, p.region_id);
        node_of[i] = node;
        let lane = lanes.lane(0, p.thread_id, p.task_id);
        if lanes_seen.insert((node, lane)) {
            builder.tree.nodes[node].lanes += 1;
        }
        let tree = &mut builder.tree;
        let n = &mut tree.nodes[node];
        if n.num_calls == 0 {
            (n.minimum, n.maximum) = (p.minimum, p.maximum);
        }
        n.num_calls = n.num_calls.wrapping_add(p.num_calls);
        n.total = n.total.wrapping_add(p.total);
        n.exclusive = n.exclusive.wrapping_add(p.exclusive);
        n.minimum = n.minimum.min(p.minimum);
        n.maximum = n.maximum.max(p.maximum);
        n.hist.add_buckets(&p.histogram);
        tree.first_start = tree.first_start.min(p.first_start);
        tree.last_end = tree.last_end.max(p.last_end);
    }
    builder.finish(lanes.lanes)
}

pub(super) struct TreeBuilder {
    grouping: Grouping,
    tree: CallTree,
    /// The node of each `(parent node, region)`.
    index: HashMap<(usize, u32), usize, BuildHasherDefault<FxHasher>>,
    group_roots: HashMap<String, usize>,
    lane_root: usize,
    stack: Vec<usize>,
    lanes: Vec<Lane>,
}

impl TreeBuilder {
    pub(super) fn new(grouping: Grouping) -> TreeBuilder {
        TreeBuilder {
            grouping,
            tree: CallTree {
                first_start: i64::MAX,
                last_end: i64::MIN,
                ..CallTree::default()
            },
            index: HashMap::default(),
            group_roots: HashMap::new(),
            lane_root: 0,
            stack: Vec::new(),
            lanes: Vec::new(),
        }
    }

    /// The tree, with the file's `lanes`.
    pub(super) fn finish(self, lanes: Vec<Lane>) -> CallTree {
        let mut tree = self.tree;
        for n in &mut tree.nodes {
            n.last_lane = 0; // the walk's state: trees from paths and events compare equal
        }
        if tree.first_start == i64::MAX {
            (tree.first_start, tree.last_end) = (0, 0);
        }
        tree.lanes = lanes;
        tree
    }

    /// The node of `region` under `parent`, made on first use.
    fn child(&mut self, parent: usize, region: u32) -> usize {
        let next = self.tree.nodes.len();
        let node = *self.index.entry((parent, region)).or_insert(next);
        if node == next {
            self.tree.nodes.push(TreeNode {
                parent: Some(parent),
                region: Some(region),
                ..TreeNode::default()
            });
            self.tree.nodes[parent].children.push(node);
        }
        node
    }

    fn root(&mut self, label: String) -> usize {
        if let Some(&root) = self.group_roots.get(&label) {
            return root;
        }
        let root = self.tree.nodes.len();
        self.tree.nodes.push(TreeNode::default());
        self.tree.roots.push((root, label.clone()));
        self.group_roots.insert(label, root);
        root
    }
}

impl Visitor for TreeBuilder {
    fn open(&mut self, call: &Call, depth: usize, _at: i64) -> Result<(), Error> {
        let parent = match depth {
            0 => self.lane_root,
            _ => self.stack.get(depth - 1).copied().unwrap_or(self.lane_root),
        };
        self.stack.truncate(depth);
        let node = self.child(parent, call.region as u32);
        self.tree.nodes[node].on_lane(call.lane);
        self.stack.push(node);
        self.tree.first_start = self.tree.first_start.min(call.start);
        self.tree.last_end = self.tree.last_end.max(call.end());
        Ok(())
    }

    fn close(&mut self, call: &Call, depth: usize, children: i64, _at: i64) -> Result<(), Error> {
        let Some(&node) = self.stack.get(depth) else {
            return Ok(());
        };
        self.tree.nodes[node].add(call.duration, call.duration.wrapping_sub(children));
        let root = self.tree.nodes[node].parent;
        if depth == 0
            && let Some(root) = root
        {
            let r = &mut self.tree.nodes[root];
            r.num_calls += 1;
            r.total = r.total.wrapping_add(call.duration);
        }
        Ok(())
    }

    fn lane(&mut self, lane: u64, begin: bool) -> Result<(), Error> {
        if begin {
            let label = self.grouping.label(lane, self.lanes.get(lane as usize));
            self.lane_root = self.root(label);
            self.stack.clear();
        }
        Ok(())
    }

    fn lanes(&mut self, lanes: &[Lane]) {
        self.lanes = lanes.to_vec();
    }
}
