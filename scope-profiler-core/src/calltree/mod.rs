//! The call tree: regions nested under their callers, one node per call
//! path. One type for `finalize`'s summary (`Results::summary`,
//! [`CallTree::from_profile`]) and for the tree a reader builds of a file
//! (`ProfileReader::call_tree`, per group of lanes, with the durations'
//! minimum, maximum and quantiles); the exports, `scope-prof` and the report
//! read it.
//!
//! A tree of a million nodes is held in about 50 bytes a node: compact
//! nodes, the children of every node in one array, and the names the
//! process interned (not copied) when the tree comes from `finalize`. A
//! reader's tree adds per node the durations' extremes, its lanes and a
//! log histogram (`Detail`).
//!
//! Files: `mod.rs` (the tree and its nodes), `build.rs` (`TreeBuilder`, one
//! call or one path at a time), `print.rs` (the table `Display` prints),
//! `paths.rs` (`CallPaths`, the rows of the file's `call_paths` table that
//! `finalize` stores).

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::fxhash::FxHasher;
use crate::histogram::LogHistogram;
use crate::profile::Profile;
use crate::registry::Entry;

mod build;
mod paths;
mod print;

pub use build::TreeBuilder;
pub(crate) use paths::CallPaths;

/// The call tree of a profile: each node a region reached through one call
/// path.
///
/// Two sources build it, and say so in what its nodes report:
/// - `finalize` (`Results::summary`) and [`CallTree::from_profile`]: the
///   roots are the top-level regions; direct self-recursion is pooled into
///   one node marked [`CallNode::recursive`]. The durations of single calls
///   are not kept: [`CallNode::minimum`], [`CallNode::maximum`],
///   [`CallNode::lanes`] and [`CallNode::quantile`] are `None`, and
///   [`CallTree::lanes`] is empty.
/// - `ProfileReader::call_tree` (a file or a profile in memory, grouped by
///   `export::Grouping`): one root per group, a node with no region named by
///   the group's label ("all", "rank 0", "rank 0 - thread main") holding the
///   group's top-level calls and time; below it, the call paths, with no
///   pooling (a recursion is a path per level). Every node has its
///   durations' minimum, maximum, lanes and quantiles (from a log
///   histogram, within about 3%).
///
/// `Display` prints it as a table, in memory linear in its lines, folding
/// what lies deeper than 24 levels into one line per subtree (the nodes
/// keep everything).
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
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CallTree {
    nodes: Vec<Node>,
    /// The children of every node, back to back (see `Node::children`).
    children: Vec<u32>,
    roots: Vec<u32>,
    names: Names,
    /// The groups' labels; a group's root has `group` set and its index
    /// here as its `region`.
    labels: Vec<String>,
    /// Per node, what only a reader's tree knows (empty otherwise).
    details: Vec<Detail>,
    lanes: Vec<Lane>,
    first_start: i64,
    last_end: i64,
}

/// A node as stored: 40 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Node {
    calls: u64,
    total: i64,
    exclusive: i64,
    region: u32,
    /// The node's children are `CallTree::children[children..children + len]`.
    children: u32,
    len: u32,
    recursive: bool,
    /// The root of a group (`region` is the group's label).
    group: bool,
}

/// What a reader's tree keeps per node beside the sums.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Detail {
    minimum: i64,
    maximum: i64,
    lanes: u64,
    histogram: LogHistogram,
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

impl PartialEq for Names {
    fn eq(&self, other: &Names) -> bool {
        self.len() == other.len() && (0..self.len() as u32).all(|r| self.get(r) == other.get(r))
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

    fn len(&self) -> usize {
        match self {
            Names::Interned(entries) => entries.len(),
            Names::Owned(names) => names.len(),
        }
    }
}

/// One lane of a profile: a thread of a rank, or an async task (see
/// [`CallTree::lanes`]).
///
/// ```
/// let lane = scope_profiler::Lane::default();
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

/// One node of a [`CallTree`]: the calls of a region reached through one
/// call path (in one group, in a reader's tree), or the root of a group.
///
/// Direct self-recursion is pooled into one node in `finalize`'s tree
/// (marked `recursive`): its `num_calls` count every level, its `total`
/// only the outermost calls.
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
pub struct CallNode<'a> {
    tree: &'a CallTree,
    index: u32,
}

impl<'a> CallNode<'a> {
    fn node(&self) -> &'a Node {
        &self.tree.nodes[self.index as usize]
    }

    fn detail(&self) -> Option<&'a Detail> {
        self.tree.details.get(self.index as usize)
    }

    /// The node's position in [`CallTree::node`].
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

    /// The region's name; a group's label for the root of a group.
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
        let n = self.node();
        match n.group {
            true => self
                .tree
                .labels
                .get(n.region as usize)
                .map_or("", String::as_str),
            false => self.tree.names.get(n.region),
        }
    }

    /// The region (its index into the region names); `None` for the root
    /// of a group.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// sp::region("a").run(|| ());
    /// let results = sp::finalize().unwrap();
    /// let a = results.summary().roots().next().unwrap();
    /// assert_eq!(a.region(), Some(0));
    /// ```
    pub fn region(&self) -> Option<u32> {
        let n = self.node();
        (!n.group).then_some(n.region)
    }

    /// Completed calls along this path (a group's root: its top-level calls).
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
        self.node().total
    }

    /// Time in these calls outside their child calls, ns (0 for a group's
    /// root).
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
        self.node().exclusive
    }

    /// Mean duration, ns (0 without calls): [`Self::total`] over
    /// [`Self::num_calls`], so a recursive node's counts every level.
    ///
    /// ```
    /// assert_eq!(scope_profiler::CallTree::default().nodes().map(|n| n.mean()).sum::<f64>(), 0.0);
    /// ```
    pub fn mean(&self) -> f64 {
        match self.num_calls() {
            0 => 0.0,
            n => self.total() as f64 / n as f64,
        }
    }

    /// Shortest call, ns; `None` in a tree that does not keep single
    /// calls' durations (`finalize`'s, see [`CallTree`]).
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// sp::region("a").run(|| ());
    /// let results = sp::finalize().unwrap();
    /// assert_eq!(results.summary().roots().next().unwrap().minimum(), None);
    /// ```
    pub fn minimum(&self) -> Option<i64> {
        self.detail().map(|d| d.minimum)
    }

    /// Longest call, ns; `None` as [`Self::minimum`].
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// sp::region("a").run(|| ());
    /// let results = sp::finalize().unwrap();
    /// assert_eq!(results.summary().roots().next().unwrap().maximum(), None);
    /// ```
    pub fn maximum(&self) -> Option<i64> {
        self.detail().map(|d| d.maximum)
    }

    /// Lanes (threads or tasks of a rank) with calls of this path; `None`
    /// as [`Self::minimum`].
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// sp::region("a").run(|| ());
    /// let results = sp::finalize().unwrap();
    /// assert_eq!(results.summary().roots().next().unwrap().lanes(), None);
    /// ```
    pub fn lanes(&self) -> Option<u64> {
        self.detail().map(|d| d.lanes)
    }

    /// The `q` quantile (0..=1) of the durations, ns, from a log histogram
    /// with 16 buckets per power of two (within about 3%, clamped to
    /// minimum..maximum); `None` as [`Self::minimum`].
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// sp::region("a").run(|| ());
    /// let results = sp::finalize().unwrap();
    /// assert_eq!(results.summary().roots().next().unwrap().quantile(0.95), None);
    /// ```
    pub fn quantile(&self, q: f64) -> Option<i64> {
        let d = self.detail()?;
        Some(
            d.histogram
                .quantile(q, self.num_calls(), d.minimum, d.maximum),
        )
    }

    /// Whether the region called itself directly (its levels pooled here).
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

    /// Child nodes, in the order they were first called (in a reader's
    /// tree: first met walking the lanes one after another).
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
        self,
    ) -> impl DoubleEndedIterator<Item = CallNode<'a>> + ExactSizeIterator + 'a {
        let n = self.node();
        let tree = self.tree;
        let start = n.children as usize;
        tree.children[start..start + n.len as usize]
            .iter()
            .map(move |&index| CallNode { tree, index })
    }
}

impl std::fmt::Debug for CallNode<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallNode")
            .field("index", &self.index)
            .field("name", &self.name())
            .field("num_calls", &self.num_calls())
            .field("total", &self.total())
            .field("exclusive", &self.exclusive())
            .field("recursive", &self.recursive())
            .field("children", &self.children().len())
            .finish()
    }
}

/// An unused node index.
pub(crate) const NO_NODE: u32 = u32::MAX;

impl CallTree {
    /// Builds `finalize`'s tree from the call and parent ids of a profile.
    /// A malformed profile (rows outside the events, columns of different
    /// lengths, unknown parents) gives the tree of what is consistent in it,
    /// never a panic.
    ///
    /// ```
    /// use scope_profiler::{CallTree, Profile};
    /// let mut broken = Profile::default();
    /// broken.events.call_ids = vec![0, 1];
    /// broken.rows.push(Default::default());
    /// broken.rows[0].event_count = 99;
    /// assert!(CallTree::from_profile(&broken).is_empty());
    /// ```
    pub fn from_profile(profile: &Profile) -> CallTree {
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
        let mut tree = TreeBuilder::default();
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

    /// Number of nodes (the roots of groups included).
    ///
    /// ```
    /// assert_eq!(scope_profiler::CallTree::default().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the tree has no node (no call was recorded).
    ///
    /// ```
    /// assert!(scope_profiler::CallTree::default().is_empty());
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
    pub fn node(&self, index: usize) -> Option<CallNode<'_>> {
        (index < self.nodes.len()).then_some(CallNode {
            tree: self,
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
    pub fn nodes(&self) -> impl DoubleEndedIterator<Item = CallNode<'_>> + ExactSizeIterator {
        (0..self.nodes.len() as u32).map(move |index| CallNode { tree: self, index })
    }

    /// The nodes nothing calls, in the order first called: the top-level
    /// regions of `finalize`'s tree, the groups' roots of a reader's.
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
    pub fn roots(&self) -> impl DoubleEndedIterator<Item = CallNode<'_>> + ExactSizeIterator {
        self.roots
            .iter()
            .map(move |&index| CallNode { tree: self, index })
    }

    /// The lanes of the file a reader's tree was built from (empty for
    /// `finalize`'s).
    ///
    /// ```
    /// assert!(scope_profiler::CallTree::default().lanes().is_empty());
    /// ```
    pub fn lanes(&self) -> &[Lane] {
        &self.lanes
    }

    /// Earliest start of any call, ns (0 without calls, or in a tree
    /// without call times: an aggregation-mode session's).
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    /// sp::region("a").run(|| std::thread::sleep(std::time::Duration::from_millis(1)));
    /// let results = sp::finalize().unwrap();
    /// let tree = results.summary();
    /// assert!(tree.last_end() - tree.first_start() >= tree.roots().next().unwrap().total());
    /// ```
    pub fn first_start(&self) -> i64 {
        self.first_start
    }

    /// Latest end of any call, ns (0 as [`Self::first_start`]).
    ///
    /// ```
    /// assert_eq!(scope_profiler::CallTree::default().last_end(), 0);
    /// ```
    pub fn last_end(&self) -> i64 {
        self.last_end
    }
}
