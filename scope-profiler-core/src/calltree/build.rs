//! [`TreeBuilder`]: a [`CallTree`] built one call (or one stored path) at a
//! time, each after its parent: `finalize`'s backward walk and
//! [`CallTree::from_profile`] through [`TreeBuilder::call`] (self-recursion
//! pooled), a reader's walk of its events or of its stored call paths
//! through [`TreeBuilder::grouped`] (groups, per-node durations, lanes).

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::fxhash::FxHasher;
use crate::profile::CallPath;
use crate::registry::Entry;

use super::{CallTree, Detail, Lane, NO_NODE, Names, Node};

/// Builds a [`CallTree`] one call at a time, each call after its parent.
#[derive(Default)]
pub struct TreeBuilder {
    nodes: Vec<Node>,
    /// Parent of each node (`NO_NODE` for a root).
    parents: Vec<u32>,
    /// Earliest start of each node's calls: the order nodes are shown in
    /// (`finalize`'s tree; a grouped tree keeps the order nodes were made).
    first_start: Vec<i64>,
    /// The node of each `(parent, region)`.
    children: HashMap<(u32, u32), u32, BuildHasherDefault<FxHasher>>,
    /// Recently met `(parent, region, node)`s, direct-mapped: a program's
    /// loops meet the same few edges again and again, and a hit saves the
    /// map's hash and probe (the tree walk of the scale test's 50M calls:
    /// see [`TreeBuilder::call`]). An entry's region is `NO_NODE` while
    /// it is empty.
    recent: Vec<(u32, u32, u32)>,
    /// A grouped tree (see [`TreeBuilder::grouped`]).
    grouped: bool,
    /// Per node of a grouped tree: durations, lanes, histogram.
    details: Vec<Detail>,
    /// Per node of a grouped tree: the last lane counted, plus one.
    last_lane: Vec<u64>,
    labels: Vec<String>,
    /// The root node of each group, by label.
    groups: HashMap<String, u32>,
    /// Earliest start and latest end of any call.
    span: Option<(i64, i64)>,
}

/// Entries of [`TreeBuilder::recent`] (a power of two).
const RECENT: usize = 256;

impl TreeBuilder {
    /// A builder of `finalize`'s tree of at least `nodes` nodes.
    pub fn with_capacity(nodes: usize) -> TreeBuilder {
        TreeBuilder {
            nodes: Vec::with_capacity(nodes),
            parents: Vec::with_capacity(nodes),
            first_start: Vec::with_capacity(nodes),
            children: HashMap::with_capacity_and_hasher(nodes, Default::default()),
            ..TreeBuilder::default()
        }
    }

    /// A builder of a reader's tree: groups ([`Self::group`]), nodes made
    /// by [`Self::child`] (no pooling), each with its durations, lanes and
    /// histogram, children in the order they were made.
    pub fn grouped() -> TreeBuilder {
        TreeBuilder {
            grouped: true,
            ..TreeBuilder::default()
        }
    }

    /// The node of `region` under `parent` (`None`: a root), made on first
    /// use (`start`: the call's, for the order of `finalize`'s tree).
    fn node_of(&mut self, parent: Option<u32>, region: u32, start: i64) -> u32 {
        let key = (parent.unwrap_or(NO_NODE), region);
        if self.recent.is_empty() {
            self.recent = vec![(NO_NODE, NO_NODE, NO_NODE); RECENT];
        }
        let slot = (key.0.wrapping_mul(0x9e37_79b1) ^ region) as usize % RECENT;
        match self.recent[slot] {
            (p, r, node) if (p, r) == key => node,
            _ => {
                let node = match self.children.get(&key) {
                    Some(&node) => node,
                    None => {
                        let node = self.push(key.0, region, false, start);
                        self.children.insert(key, node);
                        node
                    }
                };
                self.recent[slot] = (key.0, key.1, node);
                node
            }
        }
    }

    fn push(&mut self, parent: u32, region: u32, group: bool, start: i64) -> u32 {
        self.nodes.push(Node {
            region,
            group,
            ..Node::default()
        });
        self.parents.push(parent);
        if self.grouped {
            self.details.push(Detail::default());
            self.last_lane.push(0);
        } else {
            self.first_start.push(start);
        }
        self.nodes.len() as u32 - 1
    }

    /// Adds a call of `region` from `start` lasting `duration` ns under the
    /// call whose node is `parent`; returns this call's node (for its
    /// children). Calls may come in any order, as long as each comes after
    /// its parent. Direct self-recursion pools into the caller's node.
    pub fn call(&mut self, parent: Option<u32>, region: u32, start: i64, duration: i64) -> u32 {
        self.span(start, start.wrapping_add(duration));
        if let Some(p) = parent {
            let node = &mut self.nodes[p as usize];
            if node.region == region {
                // Direct self-recursion pools into the caller's node: count
                // the call; its time is already inside the outer call.
                node.recursive = true;
                node.calls += 1;
                return p;
            }
            node.exclusive -= duration;
        }
        let node = self.node_of(parent, region, start);
        let first = &mut self.first_start[node as usize];
        *first = (*first).min(start);
        let n = &mut self.nodes[node as usize];
        n.calls += 1;
        n.total += duration;
        n.exclusive += duration;
        node
    }

    /// The regions from the root to `node` (outermost first), as
    /// [`TreeBuilder::call`] made it (`node` is one it returned; empty for
    /// an unknown one).
    pub fn path(&self, node: u32) -> Vec<u32> {
        let mut path = Vec::new();
        let mut at = node;
        while let Some(n) = self.nodes.get(at as usize) {
            path.push(n.region);
            at = self.parents.get(at as usize).copied().unwrap_or(NO_NODE);
            if path.len() > self.nodes.len() {
                break; // a cycle cannot be made; never loop on one
            }
        }
        path.reverse();
        path
    }

    /// Adds `calls` calls of `region` as a root, from their totals (an
    /// aggregation-mode session, whose calls' nesting was not kept).
    pub fn totals(&mut self, region: u32, calls: u64, total: i64, exclusive: i64) {
        let at = self.first_start.len() as i64;
        let node = self.push(NO_NODE, region, false, at);
        let n = &mut self.nodes[node as usize];
        (n.calls, n.total, n.exclusive) = (calls, total, exclusive);
    }

    /// The root node of the group labelled `label`, made on first use.
    pub fn group(&mut self, label: &str) -> u32 {
        if let Some(&root) = self.groups.get(label) {
            return root;
        }
        let root = self.push(NO_NODE, self.labels.len() as u32, true, 0);
        self.labels.push(label.to_owned());
        self.groups.insert(label.to_owned(), root);
        root
    }

    /// The node of `region` under node `parent` (a group's root or a
    /// path), made on first use; no pooling.
    pub fn child(&mut self, parent: u32, region: u32) -> u32 {
        self.node_of(Some(parent), region, 0)
    }

    /// The parent of `node` (`None` for a root).
    pub fn parent(&self, node: u32) -> Option<u32> {
        self.parents
            .get(node as usize)
            .copied()
            .filter(|&p| p != NO_NODE)
    }

    /// Adds a call lasting `duration` ns, `exclusive` of them outside its
    /// children, to `node` of a grouped tree.
    pub fn add_call(&mut self, node: u32, duration: i64, exclusive: i64) {
        let n = &mut self.nodes[node as usize];
        let d = &mut self.details[node as usize];
        if n.calls == 0 {
            (d.minimum, d.maximum) = (duration, duration);
        }
        n.calls += 1;
        n.total = n.total.wrapping_add(duration);
        n.exclusive = n.exclusive.wrapping_add(exclusive);
        d.minimum = d.minimum.min(duration);
        d.maximum = d.maximum.max(duration);
        d.histogram.add(duration);
    }

    /// Adds a top-level call lasting `duration` ns to a group's `root`.
    pub fn add_root_call(&mut self, root: u32, calls: u64, duration: i64) {
        let n = &mut self.nodes[root as usize];
        n.calls = n.calls.wrapping_add(calls);
        n.total = n.total.wrapping_add(duration);
    }

    /// Adds a stored call path's calls to `node` of a grouped tree.
    pub fn add_path(&mut self, node: u32, path: &CallPath) {
        let n = &mut self.nodes[node as usize];
        let d = &mut self.details[node as usize];
        if n.calls == 0 {
            (d.minimum, d.maximum) = (path.minimum, path.maximum);
        }
        n.calls = n.calls.wrapping_add(path.num_calls);
        n.total = n.total.wrapping_add(path.total);
        n.exclusive = n.exclusive.wrapping_add(path.exclusive);
        d.minimum = d.minimum.min(path.minimum);
        d.maximum = d.maximum.max(path.maximum);
        d.histogram.add_buckets(&path.histogram);
        self.span(path.first_start, path.last_end);
    }

    /// Counts `lane` in the lanes of `node` unless it was the last one
    /// counted there (a walk gives a lane's calls together).
    pub fn on_lane(&mut self, node: u32, lane: u64) {
        let last = &mut self.last_lane[node as usize];
        if *last != lane.wrapping_add(1) {
            *last = lane.wrapping_add(1);
            self.details[node as usize].lanes += 1;
        }
    }

    /// Counts one more lane in the lanes of `node`.
    pub fn add_lane(&mut self, node: u32) {
        self.details[node as usize].lanes += 1;
    }

    /// Widens the tree's span to `start..end`.
    pub fn span(&mut self, start: i64, end: i64) {
        self.span = Some(match self.span {
            Some((s, e)) => (s.min(start), e.max(end)),
            None => (start, end),
        });
    }

    /// The tree, named by the names the process interned (by region id).
    pub fn finish(self, names: Vec<&'static Entry>) -> CallTree {
        self.build(Names::Interned(names), Vec::new())
    }

    /// The tree, with names of its own (by region id).
    pub fn finish_owned(self, names: Vec<String>) -> CallTree {
        self.build(Names::Owned(names), Vec::new())
    }

    /// A reader's tree, with the names and lanes of its file.
    pub fn finish_grouped(self, names: Vec<String>, lanes: Vec<Lane>) -> CallTree {
        self.build(Names::Owned(names), lanes)
    }

    fn build(self, names: Names, lanes: Vec<Lane>) -> CallTree {
        let TreeBuilder {
            mut nodes,
            parents,
            first_start,
            details,
            labels,
            span,
            grouped,
            ..
        } = self;
        // Each node's children, back to back, in node order; then each
        // node's slice (and the roots) sorted by first call.
        for &p in &parents {
            if let Some(parent) = nodes.get_mut(p as usize) {
                parent.len += 1;
            }
        }
        let mut next = 0u32;
        for node in &mut nodes {
            node.children = next;
            next += node.len;
        }
        let mut filled: Vec<u32> = nodes.iter().map(|n| n.children).collect();
        let mut child_list = vec![0u32; next as usize];
        let mut roots = Vec::new();
        for (child, &p) in parents.iter().enumerate() {
            match filled.get_mut(p as usize) {
                Some(at) => {
                    child_list[*at as usize] = child as u32;
                    *at += 1;
                }
                None => roots.push(child as u32),
            }
        }
        drop(filled);
        if !grouped {
            // A grouped tree keeps the order its nodes were made in.
            let by_first = |&c: &u32| first_start[c as usize];
            for node in &nodes {
                let start = node.children as usize;
                child_list[start..start + node.len as usize].sort_by_key(by_first);
            }
            roots.sort_by_key(by_first);
        }
        let (first_start, last_end) = span.unwrap_or((0, 0));
        CallTree {
            nodes,
            children: child_list,
            roots,
            names,
            labels,
            details,
            lanes,
            first_start,
            last_end,
        }
    }
}
