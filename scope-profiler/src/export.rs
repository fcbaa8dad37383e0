//! Streaming exports of a profile file: Chrome trace event JSON (Perfetto,
//! chrome://tracing), speedscope JSON, folded stacks, and the call tree.
//!
//! Every export reads the file through a [`ProfileReader`] in bounded
//! chunks, never the whole event table: the Chrome trace in file order, the
//! others through an external sort of the calls by (lane, start) in runs of
//! `SORT_RUN` calls spilled to unlinked scratch files and merged (see
//! `export/sort.rs`). The peak memory is two runs (one written as the next
//! fills) plus a block per run, whatever the file's size.
//!
//! JSON is written by hand (names escaped here), so the runtime needs no
//! JSON crate: see ARCHITECTURE.md, "Dependencies".
//!
//! A lane is what records calls one after another: a thread of a rank, or
//! an async task (calls with a `task_id`). The call tree of a lane follows
//! from `parent_ids` when the file has them, from time containment
//! otherwise (schema-2 files).
//!
//! ```
//! use scope_profiler::{self as sp, Options, ProfileReader, export};
//! # let dir = std::env::temp_dir().join(format!("sp-export-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("export.h5");
//! sp::setup(Options::new().file_path(&path).verbose(false))?;
//! sp::region("outer").run(|| sp::region("inner").run(|| ()));
//! sp::finalize()?;
//! let reader = ProfileReader::open(&path)?;
//! let mut folded = Vec::new();
//! export::folded(&reader, &mut folded)?;
//! assert!(String::from_utf8(folded).unwrap().contains("outer;inner "));
//! # Ok::<(), sp::Error>(())
//! ```

use std::cmp::Reverse;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::io::Write;

use crate::error::Error;
use crate::fxhash::FxHasher;
use crate::histogram::LogHistogram;
use crate::profile::CallPath;
use crate::reader::ProfileReader;

mod budget;
mod chrome;
mod filter;
mod sort;
mod speedscope;
mod walk;

use budget::out_err;
pub use budget::{Budgeted, OUTPUT_ALLOWANCE, OUTPUT_PER_INPUT_BYTE, OverBudget, output_budget};
pub use chrome::{chrome_trace, chrome_trace_filtered};
use filter::Resolved;
pub use filter::{Exported, Filter, LaneId};
use sort::sort_calls;
pub use speedscope::{speedscope, speedscope_filtered};
use walk::{Visitor, walk};

/// Events read from the file per chunk.
const CHUNK: usize = 1 << 18;

/// One lane of a profile: a thread of a rank, or an async task.
///
/// ```
/// let lane = scope_profiler::export::Lane::default();
/// assert_eq!((lane.rank, lane.thread, lane.task), (0, 0, 0));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Lane {
    /// MPI rank.
    pub rank: u32,
    /// Index into the thread table, -1 when the file has no thread ids.
    pub thread: i64,
    /// Index into the task table, -1 for a thread lane.
    pub task: i64,
    /// A label: "thread NAME" or "task NAME" (or "main" without threads).
    pub name: String,
}

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

/// How [`call_tree`] groups the calls: one tree per group.
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

/// One call in the external sort (its runs are written to scratch files
/// encoded: see `sort`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
struct Call {
    lane: u64,
    start: i64,
    duration: i64,
    call_id: i64,
    parent_id: i64,
    region: u64,
}

/// The sort order of calls: lane, start, longest first, call id.
type CallKey = (u64, i64, Reverse<i64>, i64);

impl Call {
    fn key(&self) -> CallKey {
        (self.lane, self.start, Reverse(self.duration), self.call_id)
    }

    fn end(&self) -> i64 {
        self.start.wrapping_add(self.duration)
    }
}

/// Maps (rank, thread, task) to dense lane numbers as events come.
struct LaneMap<'r> {
    reader: &'r ProfileReader,
    ids: HashMap<(u32, i64, i64), u64, BuildHasherDefault<FxHasher>>,
    lanes: Vec<Lane>,
    last: Option<((u32, i64, i64), u64)>,
    /// The filter whose lanes are kept, and per lane whether it is.
    filter: Option<&'r Resolved>,
    kept: Vec<bool>,
}

impl<'r> LaneMap<'r> {
    fn new(reader: &'r ProfileReader) -> Self {
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
    fn kept(&self, id: u64) -> bool {
        self.kept.get(id as usize).copied().unwrap_or(true)
    }

    fn lane(&mut self, rank: u32, thread: i64, task: i64) -> u64 {
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
            let lane = Lane {
                rank,
                thread,
                task,
                name: lane_name(self.reader, thread, task),
            };
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

/// One call as [`call_tree_visiting`] meets it.
///
/// ```
/// let call = scope_profiler::export::CallVisit::default();
/// assert_eq!((call.depth, call.task), (0, 0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallVisit {
    /// The lane's rank.
    pub rank: u32,
    /// The lane's thread (-1 for a task lane or without a thread table).
    pub thread: i64,
    /// The lane's task, -1 for a thread lane.
    pub task: i64,
    /// Start, ns (as the file's events).
    pub start: i64,
    /// Duration, ns.
    pub duration: i64,
    /// The region (index into the region names).
    pub region: u32,
    /// Depth in its lane's tree, 0 for a root.
    pub depth: usize,
}

/// Walks the events to build the tree and hands every call to `visit`.
struct Visiting<V> {
    tree: TreeBuilder,
    lanes: Vec<Lane>,
    visit: V,
}

impl<V: FnMut(&CallVisit)> Visitor for Visiting<V> {
    fn open(&mut self, call: &Call, depth: usize, at: i64) -> Result<(), Error> {
        self.tree.open(call, depth, at)?;
        let lane = self.lanes.get(call.lane as usize);
        (self.visit)(&CallVisit {
            rank: lane.map_or(0, |l| l.rank),
            thread: lane.map_or(-1, |l| l.thread),
            task: lane.map_or(-1, |l| l.task),
            start: call.start,
            duration: call.duration,
            region: call.region as u32,
            depth,
        });
        Ok(())
    }

    fn close(&mut self, call: &Call, depth: usize, children: i64, at: i64) -> Result<(), Error> {
        self.tree.close(call, depth, children, at)
    }

    fn lane(&mut self, lane: u64, begin: bool) -> Result<(), Error> {
        self.tree.lane(lane, begin)
    }

    fn lanes(&mut self, lanes: &[Lane]) {
        self.lanes = lanes.to_vec();
        self.tree.lanes(lanes);
    }
}

/// [`call_tree`] built from the events (one pass of the external sort, in
/// bounded memory, even when the file stores its call paths), handing each
/// call to `visit` on the way: lane by lane, each lane's calls by start, a
/// call before the calls it holds. For views of every call (a timeline)
/// that need the tree too, without a second pass.
///
/// # Errors
///
/// As [`call_tree`].
///
/// ```no_run
/// use scope_profiler::{ProfileReader, export};
/// let reader = ProfileReader::open("profiling_data.h5")?;
/// let mut deepest = 0;
/// let tree = export::call_tree_visiting(&reader, export::Grouping::All, |call| {
///     deepest = deepest.max(call.depth);
/// })?;
/// println!("{} call paths, {} levels", tree.nodes.len(), deepest + 1);
/// # Ok::<(), scope_profiler::Error>(())
/// ```
pub fn call_tree_visiting(
    reader: &ProfileReader,
    grouping: Grouping,
    visit: impl FnMut(&CallVisit),
) -> Result<CallTree, Error> {
    let mut visiting = Visiting {
        tree: TreeBuilder::new(grouping),
        lanes: Vec::new(),
        visit,
    };
    let everything = Resolved::new(reader, &Filter::new())?;
    let (lanes, _) = walk(reader, &everything, &mut visiting)?;
    Ok(visiting.tree.finish(lanes))
}

/// Builds the call tree of a file, grouped as `grouping` says: from the
/// call paths the file stores when it has them, otherwise from its events,
/// each call under its parent (by the file's parent ids; by time in a file
/// without them, or for a call whose parent is not open when it starts: a
/// call whose span does not nest in its parent's stays under it, and the
/// calls after it keep their parents).
///
/// # Errors
///
/// [`Error::Hdf5`] if the events cannot be read, [`Error::Io`] if the
/// scratch files of the sort cannot be written.
///
/// ```no_run
/// use scope_profiler::{ProfileReader, export};
/// let reader = ProfileReader::open("profiling_data.h5")?;
/// let tree = export::call_tree(&reader, export::Grouping::All)?;
/// for &child in &tree.nodes[tree.roots[0].0].children {
///     let node = &tree.nodes[child];
///     println!("{} {} calls", reader.region_names()[node.region.unwrap() as usize], node.num_calls);
/// }
/// # Ok::<(), scope_profiler::Error>(())
/// ```
pub fn call_tree(reader: &ProfileReader, grouping: Grouping) -> Result<CallTree, Error> {
    // The paths `finalize` stored are one process's (rank 0's) lanes.
    if let Some(paths) = reader.call_paths()
        && reader.rows().iter().all(|r| r.rank == 0)
    {
        return Ok(tree_of_paths(reader, paths, grouping));
    }
    let everything = Resolved::new(reader, &Filter::new())?;
    Ok(events_tree(reader, grouping, &everything)?.0)
}

/// The call tree of the calls `filter` keeps, from the events.
fn events_tree(
    reader: &ProfileReader,
    grouping: Grouping,
    filter: &Resolved,
) -> Result<(CallTree, Exported), Error> {
    let mut builder = TreeBuilder::new(grouping);
    let (lanes, done) = walk(reader, filter, &mut builder)?;
    Ok((builder.finish(lanes), done))
}

/// The call tree of the call paths a file stores: the tree [`call_tree`]
/// builds from the events, without reading them (children in order of
/// their first call).
fn tree_of_paths(reader: &ProfileReader, paths: &[CallPath], grouping: Grouping) -> CallTree {
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

struct TreeBuilder {
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
    fn new(grouping: Grouping) -> TreeBuilder {
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
    fn finish(self, lanes: Vec<Lane>) -> CallTree {
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

/// Writes the folded stacks of a file: one line `a;b;c <ns>` per call path
/// with the time spent in `c` itself (outside its child calls) on that
/// path, summed over every lane and rank; paths with no own time are left
/// out. Names have `;` replaced by `:`. An aggregate file (no per-call
/// events) gives one line per region with its exclusive total.
///
/// Returns the number of lines written.
///
/// # Errors
///
/// As [`call_tree`], and [`Error::Io`] if `out` fails.
///
/// ```no_run
/// use scope_profiler::{ProfileReader, export};
/// let reader = ProfileReader::open("profiling_data.h5")?;
/// let mut out = std::io::BufWriter::new(std::fs::File::create("profile.folded").unwrap());
/// export::folded(&reader, &mut out)?;
/// # Ok::<(), scope_profiler::Error>(())
/// ```
pub fn folded(reader: &ProfileReader, out: impl Write) -> Result<u64, Error> {
    Ok(write_folded(reader, &Filter::new(), out)?.0)
}

/// [`folded`] of the calls `filter` keeps: a kept call's path starts at
/// it (its callers left out, as in the other exports); the own time of a
/// call counts its children's as recorded, kept or not.
///
/// # Errors
///
/// As [`folded`]; [`Error::Usage`] if `filter` names a region or lane the
/// file does not have, or the file is an aggregate profile (no calls to
/// filter).
///
/// ```
/// use scope_profiler::{self as sp, Options, ProfileReader, export};
/// # let dir = std::env::temp_dir().join(format!("sp-folded-filter-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("folded.h5");
/// sp::setup(Options::new().file_path(&path).verbose(false))?;
/// sp::region("outer").run(|| sp::region("inner").run(|| std::thread::sleep(std::time::Duration::from_millis(1))));
/// sp::region("other").run(|| ());
/// sp::finalize()?;
/// let reader = ProfileReader::open(&path)?;
/// let mut folded = Vec::new();
/// let done = export::folded_filtered(&reader, &export::Filter::new().region("inner"), &mut folded)?;
/// assert_eq!(String::from_utf8(folded).unwrap().split(' ').next(), Some("inner"));
/// assert_eq!((done.events, done.left_out), (1, 0));
/// # Ok::<(), sp::Error>(())
/// ```
pub fn folded_filtered(
    reader: &ProfileReader,
    filter: &Filter,
    out: impl Write,
) -> Result<Exported, Error> {
    Ok(write_folded(reader, filter, out)?.1)
}

/// The folded stacks: the lines written and what was exported.
fn write_folded(
    reader: &ProfileReader,
    filter: &Filter,
    out: impl Write,
) -> Result<(u64, Exported), Error> {
    let mut out = Budgeted::for_export(reader, out);
    if reader.is_aggregate() && !filter.is_empty() {
        return Err(Error::Usage(format!(
            "{} is an aggregate profile (totals only, no calls): it cannot be filtered",
            reader.path().display()
        )));
    }
    let names: Vec<String> = reader
        .region_names()
        .iter()
        .map(|n| n.replace(';', ":"))
        .collect();
    let name = |id: u32| names.get(id as usize).map_or("?", String::as_str);
    let mut lines = 0;
    if reader.is_aggregate() {
        let mut own: Vec<i64> = vec![0; names.len()];
        for row in reader.aggregates() {
            if let Some(o) = own.get_mut(row.region_id as usize) {
                *o += row.exclusive.max(0);
            }
        }
        for (id, own) in own.iter().enumerate() {
            if *own > 0 {
                writeln!(out, "{} {own}", name(id as u32)).map_err(out_err)?;
                lines += 1;
            }
        }
        out.flush().map_err(out_err)?;
        let events = reader.aggregates().iter().map(|a| a.num_calls).sum();
        return Ok((
            lines,
            Exported {
                events,
                left_out: 0,
            },
        ));
    }
    let (tree, done) = if filter.is_empty() {
        let tree = call_tree(reader, Grouping::All)?;
        let calls = tree.nodes.iter().filter(|n| n.region.is_some());
        let events = calls.map(|n| n.num_calls).sum::<u64>();
        (
            tree,
            Exported {
                events,
                left_out: 0,
            },
        )
    } else {
        events_tree(reader, Grouping::All, &Resolved::new(reader, filter)?)?
    };
    let mut path: Vec<&str> = Vec::new();
    // Depth-first, children in order of first call.
    let mut todo: Vec<(usize, usize)> = tree
        .roots
        .iter()
        .rev()
        .flat_map(|(root, _)| tree.nodes[*root].children.iter().rev().map(|&c| (c, 0)))
        .collect();
    let mut line = String::new();
    while let Some((node, depth)) = todo.pop() {
        let n = &tree.nodes[node];
        path.truncate(depth);
        path.push(name(n.region.unwrap_or(u32::MAX)));
        if n.exclusive > 0 {
            line.clear();
            for (i, part) in path.iter().enumerate() {
                if i > 0 {
                    line.push(';');
                }
                line.push_str(part);
            }
            writeln!(out, "{line} {}", n.exclusive).map_err(out_err)?;
            lines += 1;
        }
        todo.extend(n.children.iter().rev().map(|&c| (c, depth + 1)));
    }
    out.flush().map_err(out_err)?;
    Ok((lines, done))
}

/// The earliest start in the file, from the rows' statistics when the file
/// has them (0 otherwise: timestamps stay absolute).
fn origin(reader: &ProfileReader) -> i64 {
    if !reader.has_summaries() {
        return 0;
    }
    reader
        .rows()
        .iter()
        .filter(|r| r.event_count > 0)
        .map(|r| r.stats.start_minimum)
        .min()
        .unwrap_or(0)
}
