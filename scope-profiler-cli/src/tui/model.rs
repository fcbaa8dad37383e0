//! What `scope-prof tui` shows, without a terminal: a file's call tree as
//! rows that the user expands, collapses, sorts and searches, and the
//! selected row. Keys in, rows out: `view.rs` draws them, `mod.rs` runs
//! the terminal.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::SortKey;
use crate::stats::{FileTree, Node, Stat};

/// One node of the tree.
#[derive(Clone, Debug)]
pub(crate) struct Item {
    pub name: String,
    pub stat: Stat,
    pub depth: usize,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    /// A group's root (a thread, a task, a rank), not a region.
    pub group: bool,
}

/// What a key asked for beyond the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    Stay,
    Quit,
}

/// The browser's state.
#[derive(Debug)]
pub(crate) struct Browser {
    pub items: Vec<Item>,
    pub roots: Vec<usize>,
    pub expanded: Vec<bool>,
    pub sort: SortKey,
    /// The selected item (an index into `items`), if the tree has any.
    pub selected: Option<usize>,
    pub session_ns: i64,
    /// The search being typed (after `/`), if any.
    pub typing: Option<String>,
    /// The last search, which `n` and `N` repeat.
    pub query: String,
    /// A line for the status bar (a search without a match...).
    pub message: String,
    /// Rows a page moves (the tree's height, set by the view).
    pub page: usize,
}

impl Browser {
    /// The tree of `file`: one root per group when there are several
    /// (threads, ranks), the regions at the top otherwise. Top-level nodes
    /// start expanded one level.
    pub(crate) fn new(file: &FileTree, sort: SortKey) -> Browser {
        let mut b = Browser {
            items: Vec::new(),
            roots: Vec::new(),
            expanded: Vec::new(),
            sort,
            selected: None,
            session_ns: file.session_ns,
            typing: None,
            query: String::new(),
            message: String::new(),
            page: 20,
        };
        let grouped = file.groups.len() > 1;
        for (label, nodes) in &file.groups {
            if grouped {
                let mut stat = Stat::default();
                for n in nodes {
                    stat.calls = stat.calls.wrapping_add(n.stat.calls);
                    stat.total = stat.total.wrapping_add(n.stat.total);
                }
                let root = b.push(label.clone(), stat, 0, None, true);
                b.roots.push(root);
                for n in nodes {
                    let child = b.add(n, 1, Some(root));
                    b.items[root].children.push(child);
                }
            } else {
                for n in nodes {
                    let root = b.add(n, 0, None);
                    b.roots.push(root);
                }
            }
        }
        for &r in &b.roots.clone() {
            b.expanded[r] = true;
        }
        b.resort();
        b.selected = b.roots.first().copied();
        b
    }

    fn push(
        &mut self,
        name: String,
        stat: Stat,
        depth: usize,
        parent: Option<usize>,
        group: bool,
    ) -> usize {
        self.items.push(Item {
            name,
            stat,
            depth,
            parent,
            children: Vec::new(),
            group,
        });
        self.expanded.push(false);
        self.items.len() - 1
    }

    fn add(&mut self, node: &Node, depth: usize, parent: Option<usize>) -> usize {
        let me = self.push(node.name.clone(), node.stat.clone(), depth, parent, false);
        for child in &node.children {
            let c = self.add(child, depth + 1, Some(me));
            self.items[me].children.push(c);
        }
        me
    }

    /// Sorts every list of siblings by the sort key.
    fn resort(&mut self) {
        let key = self.sort;
        let items = &self.items;
        let order = |list: &mut Vec<usize>| match key {
            SortKey::Name => list.sort_by(|&a, &b| items[a].name.cmp(&items[b].name)),
            SortKey::Total => list.sort_by_key(|&i| std::cmp::Reverse(items[i].stat.total)),
            SortKey::Own => list.sort_by_key(|&i| std::cmp::Reverse(items[i].stat.own)),
            SortKey::Calls => list.sort_by_key(|&i| std::cmp::Reverse(items[i].stat.calls)),
        };
        let mut lists: Vec<Vec<usize>> = self.items.iter().map(|i| i.children.clone()).collect();
        lists.iter_mut().for_each(order);
        let mut roots = self.roots.clone();
        order(&mut roots);
        for (item, list) in self.items.iter_mut().zip(lists) {
            item.children = list;
        }
        self.roots = roots;
    }

    /// The rows shown: the items in tree order, below expanded ones only.
    pub(crate) fn rows(&self) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack: Vec<usize> = self.roots.iter().rev().copied().collect();
        while let Some(i) = stack.pop() {
            out.push(i);
            if self.expanded[i] {
                stack.extend(self.items[i].children.iter().rev());
            }
        }
        out
    }

    /// The selected row's position among [`Browser::rows`].
    pub(crate) fn position(&self, rows: &[usize]) -> usize {
        self.selected
            .and_then(|s| rows.iter().position(|&r| r == s))
            .unwrap_or(0)
    }

    /// The region of the selected row (a group's root has none).
    pub(crate) fn selected_region(&self) -> Option<&str> {
        let item = &self.items[self.selected?];
        (!item.group).then_some(item.name.as_str())
    }

    fn select_row(&mut self, rows: &[usize], pos: isize) {
        if rows.is_empty() {
            return;
        }
        let pos = pos.clamp(0, rows.len() as isize - 1) as usize;
        self.selected = Some(rows[pos]);
    }

    fn step(&mut self, delta: isize) {
        let rows = self.rows();
        let pos = self.position(&rows) as isize;
        self.select_row(&rows, pos + delta);
    }

    /// Every item in tree order (collapsed or not), for the search.
    fn preorder(&self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.items.len());
        let mut stack: Vec<usize> = self.roots.iter().rev().copied().collect();
        while let Some(i) = stack.pop() {
            out.push(i);
            stack.extend(self.items[i].children.iter().rev());
        }
        out
    }

    /// Selects the next item (or the previous, `forward` false) after the
    /// selected one whose name holds the query (any case), wrapping, and
    /// expands the nodes above it.
    pub(crate) fn find(&mut self, forward: bool) {
        if self.query.is_empty() {
            return;
        }
        let needle = self.query.to_lowercase();
        let order = self.preorder();
        let at = self
            .selected
            .and_then(|s| order.iter().position(|&i| i == s))
            .unwrap_or(0);
        let n = order.len();
        let hit = (1..=n)
            .map(|k| {
                if forward {
                    order[(at + k) % n]
                } else {
                    order[(at + n * 2 - k) % n]
                }
            })
            .find(|&i| self.items[i].name.to_lowercase().contains(&needle));
        match hit {
            Some(i) => {
                let mut up = self.items[i].parent;
                while let Some(p) = up {
                    self.expanded[p] = true;
                    up = self.items[p].parent;
                }
                self.selected = Some(i);
                self.message = format!("found \"{}\"", self.query);
            }
            None => self.message = format!("no region matches \"{}\"", self.query),
        }
    }

    /// Expands or collapses every node.
    fn expand_all(&mut self, on: bool) {
        for (e, item) in self.expanded.iter_mut().zip(&self.items) {
            *e = on && !item.children.is_empty();
        }
        if !on {
            // The selection moves to its top-level ancestor, which stays shown.
            let mut s = self.selected;
            while let Some(p) = s.and_then(|i| self.items[i].parent) {
                s = Some(p);
            }
            self.selected = s;
        }
    }

    /// Applies one key; [`Action::Quit`] ends the browser.
    pub(crate) fn key(&mut self, key: KeyEvent) -> Action {
        if let Some(text) = self.typing.as_mut() {
            match key.code {
                KeyCode::Enter => {
                    self.query = self.typing.take().unwrap_or_default();
                    self.find(true);
                }
                KeyCode::Esc => self.typing = None,
                KeyCode::Backspace => {
                    text.pop();
                }
                KeyCode::Char(c) => text.push(c),
                _ => {}
            }
            return Action::Stay;
        }
        self.message.clear();
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('q') | KeyCode::Esc => return Action::Quit,
            KeyCode::Char('c') if ctrl => return Action::Quit,
            KeyCode::Down | KeyCode::Char('j') => self.step(1),
            KeyCode::Up | KeyCode::Char('k') => self.step(-1),
            KeyCode::PageDown => self.step(self.page as isize),
            KeyCode::PageUp => self.step(-(self.page as isize)),
            KeyCode::Home | KeyCode::Char('g') => self.step(isize::MIN / 2),
            KeyCode::End | KeyCode::Char('G') => self.step(isize::MAX / 2),
            KeyCode::Right | KeyCode::Char('l') => {
                if let Some(s) = self.selected {
                    if self.expanded[s] || self.items[s].children.is_empty() {
                        self.step(1);
                    } else {
                        self.expanded[s] = true;
                    }
                }
            }
            KeyCode::Left | KeyCode::Char('h') => {
                if let Some(s) = self.selected {
                    if self.expanded[s] {
                        self.expanded[s] = false;
                    } else if let Some(p) = self.items[s].parent {
                        self.selected = Some(p);
                    }
                }
            }
            KeyCode::Enter | KeyCode::Char(' ') => {
                if let Some(s) = self.selected
                    && !self.items[s].children.is_empty()
                {
                    self.expanded[s] = !self.expanded[s];
                }
            }
            KeyCode::Char('e') => self.expand_all(true),
            KeyCode::Char('c') => self.expand_all(false),
            KeyCode::Char('s') => {
                self.sort = match self.sort {
                    SortKey::Total => SortKey::Own,
                    SortKey::Own => SortKey::Calls,
                    SortKey::Calls => SortKey::Name,
                    SortKey::Name => SortKey::Total,
                };
                self.resort();
            }
            KeyCode::Char('/') => self.typing = Some(String::new()),
            KeyCode::Char('n') => self.find(true),
            KeyCode::Char('N') => self.find(false),
            _ => {}
        }
        Action::Stay
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, total: i64, children: Vec<Node>) -> Node {
        let mut n = Node {
            name: name.to_owned(),
            ..Node::default()
        };
        n.stat.calls = 1;
        n.stat.total = total;
        n.stat.own = total - children.iter().map(|c| c.stat.total).sum::<i64>();
        n.children = children;
        n
    }

    /// main (100) > [solve (70) > [factor (50)], io (20) > [parse (5)]].
    fn sample() -> FileTree {
        let tree = node(
            "main",
            100,
            vec![
                node("io", 20, vec![node("parse", 5, vec![])]),
                node("solve", 70, vec![node("factor", 50, vec![])]),
            ],
        );
        FileTree {
            groups: vec![("all".to_owned(), vec![tree])],
            session_ns: 100,
        }
    }

    fn names(b: &Browser) -> Vec<&str> {
        b.rows().iter().map(|&i| b.items[i].name.as_str()).collect()
    }

    fn press(b: &mut Browser, keys: &str) {
        for c in keys.chars() {
            let code = match c {
                '\n' => KeyCode::Enter,
                '<' => KeyCode::Left,
                '>' => KeyCode::Right,
                c => KeyCode::Char(c),
            };
            b.key(KeyEvent::from(code));
        }
    }

    #[test]
    fn the_top_level_starts_expanded_and_sorted_by_total() {
        let b = Browser::new(&sample(), SortKey::Total);
        assert_eq!(names(&b), ["main", "solve", "io"]);
        assert_eq!(b.selected_region(), Some("main"));
    }

    #[test]
    fn keys_move_expand_and_collapse() {
        let mut b = Browser::new(&sample(), SortKey::Total);
        press(&mut b, "j>");
        assert_eq!(names(&b), ["main", "solve", "factor", "io"]);
        press(&mut b, "j");
        assert_eq!(b.selected_region(), Some("factor"));
        // Left on a leaf goes to the parent; again collapses it.
        press(&mut b, "<<");
        assert_eq!(b.selected_region(), Some("solve"));
        assert_eq!(names(&b), ["main", "solve", "io"]);
        press(&mut b, "e");
        assert_eq!(names(&b), ["main", "solve", "factor", "io", "parse"]);
        press(&mut b, "c");
        assert_eq!(names(&b), ["main"]);
        assert_eq!(b.selected_region(), Some("main"));
        // Moving past either end stays at it.
        press(&mut b, "kkk");
        assert_eq!(b.selected_region(), Some("main"));
    }

    #[test]
    fn s_cycles_the_sort_through_own_calls_and_name() {
        let mut b = Browser::new(&sample(), SortKey::Total);
        press(&mut b, "s");
        assert_eq!(b.sort, SortKey::Own);
        // own: solve 20, io 15.
        assert_eq!(names(&b), ["main", "solve", "io"]);
        press(&mut b, "ss");
        assert_eq!(b.sort, SortKey::Name);
        assert_eq!(names(&b), ["main", "io", "solve"]);
        press(&mut b, "s");
        assert_eq!(b.sort, SortKey::Total);
    }

    #[test]
    fn search_finds_a_collapsed_region_expands_its_path_and_wraps() {
        let mut b = Browser::new(&sample(), SortKey::Total);
        press(&mut b, "/PARS\n");
        assert_eq!(b.selected_region(), Some("parse"));
        assert_eq!(names(&b), ["main", "solve", "io", "parse"]);
        // In tree order main, solve, factor, io, parse: after parse, wrapped.
        press(&mut b, "/o\n");
        assert_eq!(b.selected_region(), Some("solve"));
        press(&mut b, "nn");
        assert_eq!(b.selected_region(), Some("io"));
        press(&mut b, "N");
        assert_eq!(b.selected_region(), Some("factor"));
        press(&mut b, "/zzz\n");
        assert_eq!(b.selected_region(), Some("factor"));
        assert!(b.message.contains("no region matches"), "{}", b.message);
    }

    #[test]
    fn several_groups_get_a_root_each() {
        let mut file = sample();
        file.groups
            .push(("thread 2".to_owned(), vec![node("idle", 3, vec![])]));
        let b = Browser::new(&file, SortKey::Total);
        assert_eq!(names(&b), ["all", "main", "thread 2", "idle"]);
        assert_eq!(b.selected_region(), None, "a group is not a region");
        assert!(b.items[b.roots[0]].group);
    }

    #[test]
    fn an_empty_file_has_no_rows_and_keys_do_nothing() {
        let file = FileTree {
            groups: vec![("all".to_owned(), vec![])],
            session_ns: 0,
        };
        let mut b = Browser::new(&file, SortKey::Total);
        press(&mut b, "jk><\nesc/x\nn");
        assert!(b.rows().is_empty());
        assert_eq!(b.selected_region(), None);
        assert_eq!(b.key(KeyEvent::from(KeyCode::Char('q'))), Action::Quit);
    }
}
