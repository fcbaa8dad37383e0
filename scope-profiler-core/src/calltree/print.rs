//! The table `Display` prints of a [`CallTree`] (`finalize`'s summary).

use super::{CallNode, CallTree};

impl CallTree {
    /// The printed lines in order, each a node at its depth, or a fold
    /// of the subtree below [`MAX_PRINTED_DEPTH`]; visited without building
    /// them, in memory linear in the number of nodes.
    fn for_each_line(&self, mut f: impl FnMut(Line<'_>)) {
        let mut stack: Vec<(CallNode<'_>, usize)> = self.roots().rev().map(|r| (r, 0)).collect();
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
    fn subtree_below(node: CallNode<'_>) -> (usize, u64) {
        let (mut nodes, mut calls) = (0, 0);
        let mut stack: Vec<CallNode<'_>> = node.children().collect();
        while let Some(c) = stack.pop() {
            nodes += 1;
            calls += c.num_calls();
            stack.extend(c.children());
        }
        (nodes, calls)
    }
}

/// Deeper nodes are not printed one per line: the subtree below this depth
/// is folded into one line saying how much it holds ([`CallTree::nodes`]
/// keeps every node).
pub(crate) const MAX_PRINTED_DEPTH: usize = 24;

/// One line of the printed tree.
enum Line<'a> {
    Node(CallNode<'a>, usize),
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

impl std::fmt::Display for CallTree {
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
