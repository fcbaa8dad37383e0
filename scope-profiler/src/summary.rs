//! The summary tree printed at `finalize`: regions nested under their callers.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::fxhash::FxHasher;
use crate::profile::Profile;

/// One node of the call tree: a region reached through one call path.
///
/// Direct self-recursion is pooled into one node (marked `recursive`): its
/// `calls` count every level, its `total_ns` only the outermost calls.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SummaryNode {
    /// The region: borrowed from the names interned for the process when
    /// the tree comes from `finalize` (no copy per node), owned when it is
    /// built from a profile read back.
    pub name: Cow<'static, str>,
    /// Completed calls along this path.
    pub calls: u64,
    /// Time in these calls, ns.
    pub total_ns: i64,
    /// Time in these calls outside their child calls, ns.
    pub own_ns: i64,
    /// Whether the region called itself directly.
    pub recursive: bool,
    /// Child nodes, in the order they were first called.
    pub children: Vec<usize>,
}

/// The call tree of a profile; `Display` prints it as a table, in memory
/// linear in its lines, folding what lies deeper than 24 levels into one
/// line per subtree (the nodes keep everything).
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
/// for _ in 0..3 {
///     sp::region("step").run(|| sp::region("rhs").run(|| ()));
/// }
/// let results = sp::finalize().unwrap();
/// let summary = results.summary();
/// let step = &summary.nodes()[summary.roots()[0]];
/// assert_eq!((&*step.name, step.calls), ("step", 3));
/// let rhs = &summary.nodes()[step.children[0]];
/// assert_eq!((&*rhs.name, rhs.calls), ("rhs", 3));
/// assert_eq!(step.own_ns, step.total_ns - rhs.total_ns);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Summary {
    nodes: Vec<SummaryNode>,
    roots: Vec<usize>,
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
    /// assert!(Summary::from_profile(&broken).roots().is_empty());
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
        tree.finish(|region| {
            let name = profile.region_names.get(region as usize);
            Cow::Owned(name.cloned().unwrap_or_default())
        })
    }

    /// All nodes; [`Summary::roots`] and [`SummaryNode::children`] index into it.
    pub fn nodes(&self) -> &[SummaryNode] {
        &self.nodes
    }

    /// Top-level nodes, in the order first called.
    pub fn roots(&self) -> &[usize] {
        &self.roots
    }

    /// The printed lines in order, each a node at its depth, or a fold
    /// of the subtree below [`MAX_PRINTED_DEPTH`]; visited without building
    /// them, in memory linear in the number of nodes.
    fn for_each_line(&self, mut f: impl FnMut(Line<'_>)) {
        let mut stack: Vec<(usize, usize)> = self.roots.iter().rev().map(|&r| (r, 0)).collect();
        while let Some((node, depth)) = stack.pop() {
            let n = &self.nodes[node];
            f(Line::Node(n, depth));
            if n.children.is_empty() {
                continue;
            }
            if depth + 1 >= MAX_PRINTED_DEPTH {
                let (nodes, calls) = self.subtree_below(node);
                f(Line::Folded { nodes, calls });
                continue;
            }
            for &c in n.children.iter().rev() {
                stack.push((c, depth + 1));
            }
        }
    }

    /// Nodes and calls strictly below `node`.
    fn subtree_below(&self, node: usize) -> (usize, u64) {
        let (mut nodes, mut calls) = (0, 0);
        let mut stack = self.nodes[node].children.clone();
        while let Some(c) = stack.pop() {
            nodes += 1;
            calls += self.nodes[c].calls;
            stack.extend_from_slice(&self.nodes[c].children);
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
    Node(&'a SummaryNode, usize),
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
            Line::Node(n, _) => format!("{}{}", n.name, if n.recursive { " ↻" } else { "" }),
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
    nodes: Vec<SummaryNode>,
    /// Region of each node (index into the names given to `finish`).
    regions: Vec<u32>,
    /// Earliest start of each node's calls: the order nodes are shown in.
    first_start: Vec<i64>,
    roots: Vec<usize>,
    children: HashMap<(u32, u32), u32, BuildHasherDefault<FxHasher>>,
}

impl SummaryBuilder {
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
            if self.regions[p as usize] == region {
                // Direct self-recursion pools into the caller's node: count
                // the call; its time is already inside the outer call.
                let node = &mut self.nodes[p as usize];
                node.recursive = true;
                node.calls += 1;
                return p;
            }
            self.nodes[p as usize].own_ns -= duration;
        }
        let key = (parent.unwrap_or(NO_NODE), region);
        let node = match self.children.get(&key) {
            Some(&node) => node,
            None => {
                let node = self.nodes.len() as u32;
                self.nodes.push(SummaryNode::new(Cow::Borrowed("")));
                self.regions.push(region);
                self.first_start.push(start);
                match parent {
                    Some(p) => self.nodes[p as usize].children.push(node as usize),
                    None => self.roots.push(node as usize),
                }
                self.children.insert(key, node);
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

    /// The tree, with `name(region)` as each node's name.
    pub(crate) fn finish(mut self, name: impl Fn(u32) -> Cow<'static, str>) -> Summary {
        let first = &self.first_start;
        for (node, &region) in self.nodes.iter_mut().zip(&self.regions) {
            node.name = name(region);
            node.children.sort_by_key(|&c| first[c]);
        }
        self.roots.sort_by_key(|&r| first[r]);
        Summary {
            nodes: self.nodes,
            roots: self.roots,
        }
    }
}

impl SummaryNode {
    fn new(name: Cow<'static, str>) -> Self {
        SummaryNode {
            name,
            calls: 0,
            total_ns: 0,
            own_ns: 0,
            recursive: false,
            children: Vec::new(),
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
                    n.calls,
                    n.total_ns as f64 * 1e-9,
                    n.own_ns as f64 * 1e-9
                ),
                Line::Folded { .. } => writeln!(f, "  │ {label}{:pad$}{:>42} │", "", ""),
            };
        });
        result?;
        writeln!(f, "  ╰{}╯", "─".repeat(inner + 2))
    }
}
