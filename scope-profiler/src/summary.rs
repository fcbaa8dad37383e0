//! The summary tree printed at `finalize`: regions nested under their callers.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::fxhash::FxHasher;
use crate::profile::Profile;

/// One node of the call tree: a region reached through one call path.
///
/// Direct self-recursion is pooled into one node (marked `recursive`): its
/// `calls` count every level, its `total_ns` only the outermost calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SummaryNode {
    /// The region.
    pub name: String,
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

/// The call tree of a profile; `Display` prints it as a table.
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
/// assert_eq!((step.name.as_str(), step.calls), ("step", 3));
/// let rhs = &summary.nodes()[step.children[0]];
/// assert_eq!((rhs.name.as_str(), rhs.calls), ("rhs", 3));
/// assert_eq!(step.own_ns, step.total_ns - rhs.total_ns);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Summary {
    nodes: Vec<SummaryNode>,
    roots: Vec<usize>,
}

impl Summary {
    /// Builds the tree from the call and parent ids of a profile.
    pub fn from_profile(profile: &Profile) -> Summary {
        let ev = &profile.events;
        let n = ev.len();
        let mut region_of = vec![0u32; n];
        for row in &profile.rows {
            let range = row.event_offset as usize..(row.event_offset + row.event_count) as usize;
            region_of[range].fill(row.region_id);
        }
        // Parents before children: ascending call ids.
        let mut order: Vec<usize> = (0..n).collect();
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
        tree.finish(&profile.region_names)
    }

    /// All nodes; [`Summary::roots`] and [`SummaryNode::children`] index into it.
    pub fn nodes(&self) -> &[SummaryNode] {
        &self.nodes
    }

    /// Top-level nodes, in the order first called.
    pub fn roots(&self) -> &[usize] {
        &self.roots
    }

    fn lines(&self) -> Vec<(String, &SummaryNode)> {
        let mut out = Vec::new();
        let mut stack: Vec<(usize, String)> = self
            .roots
            .iter()
            .rev()
            .map(|&r| (r, String::new()))
            .collect();
        while let Some((node, prefix)) = stack.pop() {
            let n = &self.nodes[node];
            let mark = if n.recursive { " ↻" } else { "" };
            out.push((format!("{prefix}{}{mark}", n.name), n));
            let child_prefix = if prefix.is_empty() {
                "└─ ".to_owned()
            } else {
                format!("│  {prefix}")
            };
            for &c in n.children.iter().rev() {
                stack.push((c, child_prefix.clone()));
            }
        }
        out
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
                self.nodes.push(SummaryNode::new(String::new()));
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

    /// The tree, with `names[region]` as each node's name.
    pub(crate) fn finish(mut self, names: &[String]) -> Summary {
        let first = &self.first_start;
        for (node, &region) in self.nodes.iter_mut().zip(&self.regions) {
            node.name = names.get(region as usize).cloned().unwrap_or_default();
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
    fn new(name: String) -> Self {
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
        let lines = self.lines();
        let width = lines
            .iter()
            .map(|(l, _)| l.chars().count())
            .chain([6])
            .max()
            .unwrap_or(6)
            .min(100);
        let inner = width + 3 * 14;
        writeln!(f, "  ╭{}╮", "─".repeat(inner + 2))?;
        writeln!(
            f,
            "  │ {:<width$}{:>14}{:>14}{:>14} │",
            "region", "calls", "total [s]", "own [s]"
        )?;
        writeln!(f, "  ├{}┤", "─".repeat(inner + 2))?;
        if lines.is_empty() {
            writeln!(f, "  │ {:<inner$} │", "(no calls recorded)")?;
        }
        for (label, n) in &lines {
            let label: String = label.chars().take(width).collect();
            let pad = width - label.chars().count();
            writeln!(
                f,
                "  │ {label}{:pad$}{:>14}{:>14.6}{:>14.6} │",
                "",
                n.calls,
                n.total_ns as f64 * 1e-9,
                n.own_ns as f64 * 1e-9
            )?;
        }
        writeln!(f, "  ╰{}╯", "─".repeat(inner + 2))
    }
}
