//! The summary tree printed at `finalize`: regions nested under their callers.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::profile::Profile;
use crate::registry::FxHasher;

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
        // Events by call id (ids are dense per rank), with their row's region.
        let mut region_of = vec![0u32; n];
        for row in &profile.rows {
            let range = row.event_offset as usize..(row.event_offset + row.event_count) as usize;
            region_of[range].fill(row.region_id);
        }
        let mut by_id = vec![usize::MAX; n];
        for (slot, &id) in ev.call_ids.iter().enumerate() {
            if let Some(e) = by_id.get_mut(id as usize) {
                *e = slot;
            }
        }
        let mut child_time = vec![0i64; n];
        for slot in 0..n {
            if let Ok(p) = usize::try_from(ev.parent_ids[slot]) {
                if let Some(c) = child_time.get_mut(p) {
                    *c += ev.durations[slot];
                }
            }
        }
        let mut tree = Summary::default();
        let mut index: HashMap<(usize, u32), usize, BuildHasherDefault<FxHasher>> =
            HashMap::default();
        let mut node_of_call = vec![usize::MAX; n];
        for (id, &slot) in by_id.iter().enumerate() {
            if slot == usize::MAX {
                continue;
            }
            let region = region_of[slot];
            let parent_node = usize::try_from(ev.parent_ids[slot])
                .ok()
                .and_then(|p| node_of_call.get(p).copied())
                .filter(|&p| p != usize::MAX);
            let own = ev.durations[slot] - child_time[id];
            let name = || profile.region_names[region as usize].clone();
            let node = match parent_node {
                Some(p) if tree.nodes[p].name == profile.region_names[region as usize] => {
                    tree.nodes[p].recursive = true;
                    tree.nodes[p].calls += 1;
                    tree.nodes[p].own_ns += own;
                    node_of_call[id] = p;
                    continue;
                }
                Some(p) => *index.entry((p, region)).or_insert_with(|| {
                    tree.nodes.push(SummaryNode::new(name()));
                    let new = tree.nodes.len() - 1;
                    tree.nodes[p].children.push(new);
                    new
                }),
                None => *index.entry((usize::MAX, region)).or_insert_with(|| {
                    tree.nodes.push(SummaryNode::new(name()));
                    tree.roots.push(tree.nodes.len() - 1);
                    tree.nodes.len() - 1
                }),
            };
            let node_ref = &mut tree.nodes[node];
            node_ref.calls += 1;
            node_ref.total_ns += ev.durations[slot];
            node_ref.own_ns += own;
            node_of_call[id] = node;
        }
        tree
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
