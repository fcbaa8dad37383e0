//! The calls handed, one by one, to the visitor of
//! [`ProfileReader::call_tree_visiting`] while the tree is built.

#![forbid(unsafe_code)]

use crate::error::Error;

use super::sort::Call;
use super::tree::TreeWalk;
use super::walk::Visitor;
use crate::calltree::Lane;

/// One call as [`ProfileReader::call_tree_visiting`](crate::ProfileReader::call_tree_visiting) meets it.
///
/// ```
/// let call = scope_profiler_reader::export::CallVisit::default();
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
pub(super) struct Visiting<V> {
    pub(super) tree: TreeWalk,
    pub(super) lanes: Vec<Lane>,
    pub(super) visit: V,
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
