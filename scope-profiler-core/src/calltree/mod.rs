//! The summary tree printed at `finalize`: regions nested under their callers.
//!
//! A tree of a million nodes is held in about 50 bytes a node: compact
//! nodes, the children of every node in one array, and the names the
//! process interned (not copied) when the tree comes from `finalize`.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::fxhash::FxHasher;
use crate::histogram::LogHistogram;
use crate::profile::{CallPath, Profile};
use crate::registry::Entry;

/// The call tree of a profile: each node a region reached through one call
/// path. `Display` prints it as a table, in memory linear in its lines,
/// folding what lies deeper than 24 levels into one line per subtree (the
/// nodes keep everything).
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
/// for _ in 0..3 {
///     sp::region("step").run(|| sp::region("rhs").run(|| ()));
/// }
/// let results = sp::finalize().unwrap();
/// let summary = results.summary();
/// let step = summary.roots().next().unwrap();
/// assert_eq!((step.name(), step.num_calls()), ("step", 3));
/// let rhs = step.children().next().unwrap();
/// assert_eq!((rhs.name(), rhs.num_calls()), ("rhs", 3));
/// assert_eq!(step.exclusive(), step.total() - rhs.total());
/// assert_eq!(summary.len(), 2);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Summary {
    nodes: Vec<Node>,
    /// The children of every node, back to back (see `Node::children`).
    children: Vec<u32>,
    roots: Vec<u32>,
    names: Names,
}

/// A node as stored: 40 bytes.
#[derive(Clone, Copy, Debug, Default)]
struct Node {
    calls: u64,
    total_ns: i64,
    own_ns: i64,
    region: u32,
    /// The node's children are `Summary::children[children..children + len]`.
    children: u32,
    len: u32,
    recursive: bool,
}

/// Region names by region id.
#[derive(Clone, Debug)]
enum Names {
    /// The regions the process interned (a tree from `finalize`).
    Interned(Vec<&'static Entry>),
    /// Names read from a file.
    Owned(Vec<String>),
}

impl Default for Names {
    fn default() -> Names {
        Names::Interned(Vec::new())
    }
}

impl Names {
    fn get(&self, region: u32) -> &str {
        let region = region as usize;
        match self {
            Names::Interned(entries) => entries.get(region).map_or("", |e| e.name),
            Names::Owned(names) => names.get(region).map_or("", String::as_str),
        }
    }
}

/// One node of a [`Summary`]: a region reached through one call path.
///
/// Direct self-recursion is pooled into one node (marked `recursive`): its
/// `calls` count every level, its `total_ns` only the outermost calls.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
/// fn fact(n: u64) -> u64 {
///     let _g = sp::region("fact").enter();
///     if n == 0 { 1 } else { n * fact(n - 1) }
/// }
/// fact(4);
/// let results = sp::finalize().unwrap();
/// let fact = results.summary().roots().next().unwrap();
/// assert!(fact.recursive());
/// assert_eq!(fact.num_calls(), 5);
/// assert_eq!(fact.children().len(), 0);
/// ```
#[derive(Clone, Copy)]
pub struct SummaryNode<'a> {
    summary: &'a Summary,
    index: u32,
}

impl<'a> SummaryNode<'a> {
    fn node(&self) -> &'a Node {
        &self.summary.nodes[self.index as usize]
    }

    /// The node's position in [`Summary::node`].
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// sp::region("a").run(|| sp::region("b").run(|| ()));
    /// let results = sp::finalize().unwrap();
    /// let a = results.summary().roots().next().unwrap();
    /// assert_eq!(results.summary().node(a.index()).unwrap().name(), "a");
    /// ```
    pub fn index(&self) -> usize {
        self.index as usize
    }

    /// The region's name.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// sp::region("a").run(|| sp::region("b").run(|| ()));
    /// let results = sp::finalize().unwrap();
    /// let a = results.summary().roots().next().unwrap();
    /// assert_eq!(a.name(), "a");
    /// ```
    pub fn name(&self) -> &'a str {
        self.summary.names.get(self.node().region)
    }

    /// Completed calls along this path.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// sp::region("a").run(|| sp::region("b").run(|| ()));
    /// let results = sp::finalize().unwrap();
    /// let a = results.summary().roots().next().unwrap();
    /// assert_eq!(a.num_calls(), 1);
    /// ```
    pub fn num_calls(&self) -> u64 {
        self.node().calls
    }

    /// Time in these calls, ns.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// sp::region("a").run(|| sp::region("b").run(|| ()));
    /// let results = sp::finalize().unwrap();
    /// let a = results.summary().roots().next().unwrap();
    /// assert!(a.total() >= a.children().next().unwrap().total());
    /// ```
    pub fn total(&self) -> i64 {
        self.node().total_ns
    }

    /// Time in these calls outside their child calls, ns.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// sp::region("a").run(|| sp::region("b").run(|| ()));
    /// let results = sp::finalize().unwrap();
    /// let a = results.summary().roots().next().unwrap();
    /// assert_eq!(a.exclusive(), a.total() - a.children().next().unwrap().total());
    /// ```
    pub fn exclusive(&self) -> i64 {
        self.node().own_ns
    }

    /// Whether the region called itself directly.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// sp::region("a").run(|| sp::region("b").run(|| ()));
    /// let results = sp::finalize().unwrap();
    /// let a = results.summary().roots().next().unwrap();
    /// assert!(!a.recursive());
    /// ```
    pub fn recursive(&self) -> bool {
        self.node().recursive
    }

    /// Child nodes, in the order they were first called.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// sp::region("a").run(|| sp::region("b").run(|| ()));
    /// let results = sp::finalize().unwrap();
    /// let a = results.summary().roots().next().unwrap();
    /// assert_eq!(a.children().map(|c| c.name()).collect::<Vec<_>>(), ["b"]);
    /// ```
    pub fn children(
        &self,
    ) -> impl DoubleEndedIterator<Item = SummaryNode<'a>> + ExactSizeIterator + 'a {
        let n = self.node();
        let summary = self.summary;
        let start = n.children as usize;
        summary.children[start..start + n.len as usize]
            .iter()
            .map(move |&index| SummaryNode { summary, index })
    }
}

impl std::fmt::Debug for SummaryNode<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SummaryNode")
            .field("index", &self.index)
            .field("name", &self.name())
            .field("calls", &self.num_calls())
            .field("total_ns", &self.total())
            .field("own_ns", &self.exclusive())
            .field("recursive", &self.recursive())
            .field("children", &self.children().len())
            .finish()
    }
}

impl Summary {
    /// Builds the tree from the call and parent ids of a profile. A
    /// malformed profile (rows outside the events, columns of different
    /// lengths, unknown parents) gives the tree of what is consistent in it,
    /// never a panic.
    ///
    /// ```
    /// use scope_profiler::{Profile, Summary};
    /// let mut broken = Profile::default();
    /// broken.events.call_ids = vec![0, 1];
    /// broken.rows.push(Default::default());
    /// broken.rows[0].event_count = 99;
    /// assert!(Summary::from_profile(&broken).is_empty());
    /// ```
    pub fn from_profile(profile: &Profile) -> Summary {
        let ev = &profile.events;
        let n = [
            ev.start_ns.len(),
            ev.durations.len(),
            ev.call_ids.len(),
            ev.parent_ids.len(),
        ]
        .into_iter()
        .min()
        .unwrap_or(0);
        let mut region_of = vec![NO_NODE; n];
        for row in &profile.rows {
            if let Some(slots) = region_of.get_mut(row.events()) {
                slots.fill(row.region_id);
            }
        }
        // Parents before children: ascending call ids.
        let mut order: Vec<usize> = (0..n).filter(|&slot| region_of[slot] != NO_NODE).collect();
        order.sort_unstable_by_key(|&slot| ev.call_ids[slot]);
        let slot_of: HashMap<i64, usize, BuildHasherDefault<FxHasher>> = order
            .iter()
            .map(|&slot| (ev.call_ids[slot], slot))
            .collect();
        let mut node_of = vec![NO_NODE; n];
        let mut tree = SummaryBuilder::default();
        for &slot in &order {
            let parent = slot_of
                .get(&ev.parent_ids[slot])
                .map(|&p| node_of[p])
                .filter(|&p| p != NO_NODE);
            node_of[slot] = tree.call(
                parent,
                region_of[slot],
                ev.start_ns[slot],
                ev.durations[slot],
            );
        }
        tree.finish_owned(profile.region_names.clone())
    }

    /// Number of nodes.
    ///
    /// ```
    /// assert_eq!(scope_profiler::Summary::default().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the tree has no node (no call was recorded).
    ///
    /// ```
    /// assert!(scope_profiler::Summary::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Node `index` (`0..len()`), if there is one.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// sp::region("a").run(|| ());
    /// let results = sp::finalize().unwrap();
    /// let a = results.summary().roots().next().unwrap();
    /// assert_eq!(results.summary().node(a.index()).unwrap().name(), "a");
    /// assert!(results.summary().node(1).is_none());
    /// ```
    pub fn node(&self, index: usize) -> Option<SummaryNode<'_>> {
        (index < self.nodes.len()).then_some(SummaryNode {
            summary: self,
            index: index as u32,
        })
    }

    /// Every node, in no particular order.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// sp::region("a").run(|| sp::region("b").run(|| ()));
    /// let results = sp::finalize().unwrap();
    /// let calls: u64 = results.summary().nodes().map(|n| n.num_calls()).sum();
    /// assert_eq!(calls, 2);
    /// ```
    pub fn nodes(&self) -> impl DoubleEndedIterator<Item = SummaryNode<'_>> + ExactSizeIterator {
        (0..self.nodes.len() as u32).map(move |index| SummaryNode {
            summary: self,
            index,
        })
    }

    /// Top-level nodes, in the order first called.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// sp::region("first").run(|| ());
    /// sp::region("second").run(|| ());
    /// let results = sp::finalize().unwrap();
    /// let names: Vec<&str> = results.summary().roots().map(|n| n.name()).collect();
    /// assert_eq!(names, ["first", "second"]);
    /// ```
    pub fn roots(&self) -> impl DoubleEndedIterator<Item = SummaryNode<'_>> + ExactSizeIterator {
        self.roots.iter().map(move |&index| SummaryNode {
            summary: self,
            index,
        })
    }

    /// The printed lines in order, each a node at its depth, or a fold
    /// of the subtree below [`MAX_PRINTED_DEPTH`]; visited without building
    /// them, in memory linear in the number of nodes.
    fn for_each_line(&self, mut f: impl FnMut(Line<'_>)) {
        let mut stack: Vec<(SummaryNode<'_>, usize)> = self.roots().rev().map(|r| (r, 0)).collect();
        while let Some((node, depth)) = stack.pop() {
            f(Line::Node(node, depth));
            if node.children().len() == 0 {
                continue;
            }
            if depth + 1 >= MAX_PRINTED_DEPTH {
                let (nodes, calls) = Self::subtree_below(node);
                f(Line::Folded { nodes, calls });
                continue;
            }
            stack.extend(node.children().rev().map(|c| (c, depth + 1)));
        }
    }

    /// Nodes and calls strictly below `node`.
    fn subtree_below(node: SummaryNode<'_>) -> (usize, u64) {
        let (mut nodes, mut calls) = (0, 0);
        let mut stack: Vec<SummaryNode<'_>> = node.children().collect();
        while let Some(c) = stack.pop() {
            nodes += 1;
            calls += c.num_calls();
            stack.extend(c.children());
        }
        (nodes, calls)
    }
}

/// Deeper nodes are not printed one per line: the subtree below this depth
/// is folded into one line saying how much it holds ([`Summary::nodes`]
/// keeps every node).
pub(crate) const MAX_PRINTED_DEPTH: usize = 24;

/// One line of the printed tree.
enum Line<'a> {
    Node(SummaryNode<'a>, usize),
    Folded { nodes: usize, calls: u64 },
}

impl Line<'_> {
    /// The tree drawing before a label at `depth`.
    fn prefix(depth: usize) -> impl std::fmt::Display {
        struct Prefix(usize);
        impl std::fmt::Display for Prefix {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                for _ in 1..self.0 {
                    f.write_str("│  ")?;
                }
                if self.0 > 0 {
                    f.write_str("└─ ")?;
                }
                Ok(())
            }
        }
        Prefix(depth)
    }

    /// The label without the prefix.
    fn label(&self) -> String {
        match self {
            Line::Node(n, _) => format!("{}{}", n.name(), if n.recursive() { " ↻" } else { "" }),
            Line::Folded { nodes, calls, .. } => {
                format!("… {nodes} deeper nodes ({calls} calls) folded")
            }
        }
    }

    /// The depth its prefix draws: a fold is drawn without one, so that
    /// its text always fits the table.
    fn depth(&self) -> usize {
        match self {
            Line::Node(_, d) => *d,
            Line::Folded { .. } => 0,
        }
    }
}

const NO_NODE: u32 = u32::MAX;

/// Builds a [`Summary`] one call at a time, each call after its parent.
#[derive(Default)]
pub(crate) struct SummaryBuilder {
    nodes: Vec<Node>,
    /// Parent of each node (`NO_NODE` for a root).
    parents: Vec<u32>,
    /// Earliest start of each node's calls: the order nodes are shown in.
    first_start: Vec<i64>,
    /// The node of each `(parent, region)`.
    children: HashMap<(u32, u32), u32, BuildHasherDefault<FxHasher>>,
    /// Recently met `(parent, region, node)`s, direct-mapped: a program's
    /// loops meet the same few edges again and again, and a hit saves the
    /// map's hash and probe (the tree walk of the scale test's 50M calls:
    /// see [`SummaryBuilder::call`]). An entry's region is `NO_NODE` while
    /// it is empty.
    recent: Vec<(u32, u32, u32)>,
}

/// Entries of [`SummaryBuilder::recent`] (a power of two).
const RECENT: usize = 256;

impl SummaryBuilder {
    /// A builder for a tree of at least `nodes` nodes.
    pub(crate) fn with_capacity(nodes: usize) -> SummaryBuilder {
        SummaryBuilder {
            nodes: Vec::with_capacity(nodes),
            parents: Vec::with_capacity(nodes),
            first_start: Vec::with_capacity(nodes),
            children: HashMap::with_capacity_and_hasher(nodes, Default::default()),
            recent: Vec::new(),
        }
    }

    /// Adds a call of `region` from `start` lasting `duration` ns under the
    /// call whose node is `parent`; returns this call's node (for its
    /// children). Calls may come in any order, as long as each comes after
    /// its parent.
    pub(crate) fn call(
        &mut self,
        parent: Option<u32>,
        region: u32,
        start: i64,
        duration: i64,
    ) -> u32 {
        if let Some(p) = parent {
            let node = &mut self.nodes[p as usize];
            if node.region == region {
                // Direct self-recursion pools into the caller's node: count
                // the call; its time is already inside the outer call.
                node.recursive = true;
                node.calls += 1;
                return p;
            }
            node.own_ns -= duration;
        }
        let key = (parent.unwrap_or(NO_NODE), region);
        if self.recent.is_empty() {
            self.recent = vec![(NO_NODE, NO_NODE, NO_NODE); RECENT];
        }
        let slot = (key.0.wrapping_mul(0x9e37_79b1) ^ region) as usize % RECENT;
        let node = match self.recent[slot] {
            (p, r, node) if (p, r) == key => node,
            _ => {
                let node = *self.children.entry(key).or_insert_with(|| {
                    self.nodes.push(Node {
                        region,
                        ..Node::default()
                    });
                    self.parents.push(key.0);
                    self.first_start.push(start);
                    self.nodes.len() as u32 - 1
                });
                self.recent[slot] = (key.0, key.1, node);
                node
            }
        };
        let first = &mut self.first_start[node as usize];
        *first = (*first).min(start);
        let n = &mut self.nodes[node as usize];
        n.calls += 1;
        n.total_ns += duration;
        n.own_ns += duration;
        node
    }

    /// Adds `calls` calls of `region` as a root, from their totals (an
    /// aggregation-mode session, whose calls' nesting was not kept).
    pub fn totals(&mut self, region: u32, calls: u64, total_ns: i64, own_ns: i64) {
        self.nodes.push(Node {
            region,
            calls,
            total_ns,
            own_ns,
            ..Node::default()
        });
        self.parents.push(NO_NODE);
        self.first_start.push(self.first_start.len() as i64);
    }

    /// The tree, named by the names the process interned (by region id).
    pub(crate) fn finish(self, names: Vec<&'static Entry>) -> Summary {
        self.build(Names::Interned(names))
    }

    /// The tree, with names of its own (by region id).
    pub(crate) fn finish_owned(self, names: Vec<String>) -> Summary {
        self.build(Names::Owned(names))
    }

    fn build(self, names: Names) -> Summary {
        let SummaryBuilder {
            mut nodes,
            parents,
            first_start,
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
        let by_first = |&c: &u32| first_start[c as usize];
        for node in &nodes {
            let start = node.children as usize;
            child_list[start..start + node.len as usize].sort_by_key(by_first);
        }
        roots.sort_by_key(by_first);
        Summary {
            nodes,
            children: child_list,
            roots,
            names,
        }
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut width = 6;
        let mut empty = true;
        self.for_each_line(|line| {
            empty = false;
            width = width.max(3 * line.depth() + line.label().chars().count());
        });
        let width = width.min(100);
        let inner = width + 3 * 14;
        writeln!(f, "  ╭{}╮", "─".repeat(inner + 2))?;
        writeln!(
            f,
            "  │ {:<width$}{:>14}{:>14}{:>14} │",
            "region", "calls", "total [s]", "own [s]"
        )?;
        writeln!(f, "  ├{}┤", "─".repeat(inner + 2))?;
        if empty {
            writeln!(f, "  │ {:<inner$} │", "(no calls recorded)")?;
        }
        let mut result = Ok(());
        self.for_each_line(|line| {
            if result.is_err() {
                return;
            }
            let full = format!("{}{}", Line::prefix(line.depth()), line.label());
            let label: String = full.chars().take(width).collect();
            let pad = width - label.chars().count();
            result = match line {
                Line::Node(n, _) => writeln!(
                    f,
                    "  │ {label}{:pad$}{:>14}{:>14.6}{:>14.6} │",
                    "",
                    n.num_calls(),
                    n.total() as f64 * 1e-9,
                    n.exclusive() as f64 * 1e-9
                ),
                Line::Folded { .. } => writeln!(f, "  │ {label}{:pad$}{:>42} │", "", ""),
            };
        });
        result?;
        writeln!(f, "  ╰{}╯", "─".repeat(inner + 2))
    }
}

/// Call paths at most in the stored tree of a session (see [`CallPaths`]):
/// past them (deep recursion, thousands of distinct paths) the file holds
/// none and readers walk the events. A path holds a histogram of up to a
/// few KiB.
pub(crate) const MAX_CALL_PATHS: usize = 4096;

/// Builds the call paths of every lane (see [`CallPath`]), one call at a
/// time, each after its parent (the backward walk's order): the tree
/// `finalize` stores so that readers need not walk the events.
#[derive(Default)]
pub(crate) struct CallPaths {
    paths: Vec<PathAcc>,
    /// The path of each `(parent path, region)`.
    children: HashMap<(u32, u32), u32, BuildHasherDefault<FxHasher>>,
    /// The root path of each `(thread, task, region)`.
    roots: HashMap<(i64, i64, u32), u32, BuildHasherDefault<FxHasher>>,
    /// The last `(parent, region, path)` found at each depth: a loop's calls
    /// find their path without a lookup.
    last: Vec<(u32, u32, u32)>,
    /// More paths than [`MAX_CALL_PATHS`]: none is kept.
    overflow: bool,
}

struct PathAcc {
    parent: u32,
    thread: i64,
    task: i64,
    region: u32,
    calls: u64,
    total: i64,
    own: i64,
    min: i64,
    max: i64,
    first_start: i64,
    last_end: i64,
    hist: LogHistogram,
}

/// The path of no call (past the limit).
pub(crate) const NO_PATH: u32 = u32::MAX;

impl CallPaths {
    /// Adds a call of `region` at `depth` on lane `(thread, task)` under the
    /// call whose path is `parent` (`None` at depth 0); returns its path,
    /// for its children ([`NO_PATH`] once the paths overflowed).
    pub(crate) fn call(
        &mut self,
        parent: Option<u32>,
        depth: usize,
        lane: (i64, i64),
        region: u32,
        start: i64,
        duration: i64,
    ) -> u32 {
        if self.overflow {
            return NO_PATH;
        }
        let path = match parent {
            Some(NO_PATH) => return NO_PATH,
            Some(p) => {
                self.paths[p as usize].own -= duration;
                match self.last.get(depth) {
                    Some(&(lp, lr, path)) if lp == p && lr == region => path,
                    _ => {
                        let next = self.paths.len() as u32;
                        let path = *self.children.entry((p, region)).or_insert(next);
                        if path == next {
                            self.push(p, lane, region);
                        }
                        path
                    }
                }
            }
            None => {
                let next = self.paths.len() as u32;
                let path = *self.roots.entry((lane.0, lane.1, region)).or_insert(next);
                if path == next {
                    self.push(NO_PATH, lane, region);
                }
                path
            }
        };
        if self.paths.len() > MAX_CALL_PATHS {
            *self = CallPaths {
                overflow: true,
                ..CallPaths::default()
            };
            return NO_PATH;
        }
        if self.last.len() <= depth {
            self.last.resize(depth + 1, (NO_PATH, 0, NO_PATH));
        }
        self.last[depth] = (parent.unwrap_or(NO_PATH), region, path);
        let acc = &mut self.paths[path as usize];
        if acc.calls == 0 {
            (acc.min, acc.max) = (duration, duration);
            (acc.first_start, acc.last_end) = (start, start + duration);
        }
        acc.calls += 1;
        acc.total += duration;
        acc.own += duration;
        acc.min = acc.min.min(duration);
        acc.max = acc.max.max(duration);
        acc.first_start = acc.first_start.min(start);
        acc.last_end = acc.last_end.max(start + duration);
        acc.hist.add(duration);
        path
    }

    fn push(&mut self, parent: u32, lane: (i64, i64), region: u32) {
        self.paths.push(PathAcc {
            parent,
            thread: lane.0,
            task: lane.1,
            region,
            calls: 0,
            total: 0,
            own: 0,
            min: 0,
            max: 0,
            first_start: 0,
            last_end: 0,
            hist: LogHistogram::default(),
        });
    }

    /// The paths, regions mapped by `region_id` (session region id to the
    /// file's); `None` past [`MAX_CALL_PATHS`].
    pub(crate) fn finish(self, region_id: impl Fn(u32) -> u32) -> Option<Vec<CallPath>> {
        if self.overflow {
            return None;
        }
        Some(
            self.paths
                .into_iter()
                .map(|p| CallPath {
                    parent: (p.parent != NO_PATH).then_some(p.parent),
                    thread_id: p.thread,
                    task_id: p.task,
                    region_id: region_id(p.region),
                    num_calls: p.calls,
                    total: p.total,
                    exclusive: p.own,
                    minimum: p.min,
                    maximum: p.max,
                    first_start: p.first_start,
                    last_end: p.last_end,
                    histogram: p.hist.buckets().collect(),
                })
                .collect(),
        )
    }
}
