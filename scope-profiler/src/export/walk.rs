//! The walk that rebuilds each lane's call tree from its events, sorted by
//! start, with a stack of open calls, and hands each kept call to a
//! visitor in tree order.
//!
//! **Where a call goes.** With parent ids (every file we write, and the
//! Python package's): under its parent wherever that parent is on the
//! stack, the calls above it closing; a root (parent id -1) closes every
//! open call. A call whose parent is not open (it started later, or
//! ended before the call began, or is not in the file) and every call of
//! a file without parent ids is placed by time, closing only the open
//! calls that ended before it starts: a call that starts inside the
//! innermost open call is its child even if it ends after it. So one call
//! whose span does not nest in its parent's stays local: the calls after
//! it keep their parents.
//!
//! **The times handed on.** A visitor gets, beside each call as
//! recorded, the instants at which it opens and closes in the tree: its
//! start and end clamped to its parent's (a child that sticks out of its
//! parent is cut at the parent's edges) and never before an instant
//! already handed on in the lane (the sequence of opens and closes of a
//! lane never goes back in time). For calls that nest, these are their
//! start and end.
//!
//! **Filters** ([`Resolved`]): a lane that is not kept is left out when
//! the events are read; a call is handed on when it (or a call above it)
//! is of a kept region and it overlaps the window, until the cap on the
//! events is reached; the calls that are not handed on still place the
//! others, so a kept call's parent is the nearest kept call above it.

use super::filter::{Exported, Resolved};
use super::{Call, Lane, sort_calls};
use crate::error::Error;
use crate::reader::ProfileReader;

/// Receives the kept calls of each lane in tree order.
pub(super) trait Visitor {
    /// A call opens at `depth` (0 for a root) at instant `at`.
    fn open(&mut self, call: &Call, depth: usize, at: i64) -> Result<(), Error>;
    /// The call opened last at `depth` closes at `at`; `children` is the
    /// summed duration of its direct children as recorded.
    fn close(&mut self, call: &Call, depth: usize, children: i64, at: i64) -> Result<(), Error>;
    /// A lane with kept calls begins (its calls follow) or ends.
    fn lane(&mut self, lane: u64, begin: bool) -> Result<(), Error>;
    /// The lanes, before any call.
    fn lanes(&mut self, lanes: &[Lane]);
}

/// An open call of the walk.
#[derive(Clone, Copy, Debug)]
struct Open {
    call: Call,
    /// Summed durations of its direct children.
    children: i64,
    /// The instant it opened at, and the latest instant inside it.
    at: i64,
    bound: i64,
    /// It or a call above it is of a kept region.
    subtree: bool,
    /// Handed to the visitor.
    shown: bool,
    /// The visitor's depth of its children: its shown ancestors and it.
    inner: usize,
}

/// How many calls of `stack` stay open under `call` (its parent is the
/// last of them).
fn placement(stack: &[Open], call: &Call, by_ids: bool) -> usize {
    if by_ids {
        if call.parent_id < 0 {
            return 0;
        }
        if let Some(k) = stack.iter().rposition(|o| o.call.call_id == call.parent_id) {
            return k + 1;
        }
    }
    // By time: close the calls that ended before this one starts (a call
    // at the very end of its parent, lasting 0 ns, is still inside it).
    let mut keep = stack.len();
    for open in stack.iter().rev() {
        if call.start < open.bound || call.end() <= open.bound {
            break;
        }
        keep -= 1;
    }
    keep
}

/// The state of one walk.
struct Walk<'v, V: Visitor> {
    visitor: &'v mut V,
    filter: &'v Resolved,
    stack: Vec<Open>,
    /// The last instant handed on in the lane.
    now: i64,
    lane: Option<u64>,
    begun: bool,
    done: Exported,
}

impl<V: Visitor> Walk<'_, V> {
    /// Closes the open calls above the first `keep`.
    fn close_to(&mut self, keep: usize) -> Result<(), Error> {
        while self.stack.len() > keep {
            let Some(done) = self.stack.pop() else { break };
            if done.shown {
                let at = done.bound.max(self.now);
                self.now = at;
                let depth = done.inner - 1;
                self.visitor.close(&done.call, depth, done.children, at)?;
            }
            if let Some(p) = self.stack.last_mut() {
                p.children = p.children.wrapping_add(done.call.duration);
            }
        }
        Ok(())
    }

    fn end_lane(&mut self) -> Result<(), Error> {
        self.close_to(0)?;
        if let (Some(lane), true) = (self.lane, self.begun) {
            self.visitor.lane(lane, false)?;
        }
        self.begun = false;
        Ok(())
    }

    fn call(&mut self, call: Call, by_ids: bool) -> Result<(), Error> {
        if self.lane != Some(call.lane) {
            self.end_lane()?;
            self.lane = Some(call.lane);
            self.now = i64::MIN;
        }
        let keep = placement(&self.stack, &call, by_ids);
        self.close_to(keep)?;
        let parent = self.stack.last();
        let subtree = self.filter.region(call.region) || parent.is_some_and(|p| p.subtree);
        let wanted = subtree && self.filter.window(call.start, call.end());
        let shown = wanted && self.done.events < self.filter.max_events;
        if wanted && !shown {
            self.done.left_out += 1;
        }
        let depth = parent.map_or(0, |p| p.inner);
        let mut at = call.start;
        if shown {
            at = at.max(self.now);
        }
        let mut ceiling = i64::MAX;
        if let Some(p) = parent {
            at = at.max(p.at).min(p.bound);
            ceiling = p.bound;
        }
        let bound = at.max(call.end().min(ceiling));
        if shown {
            if !self.begun {
                self.begun = true;
                self.visitor.lane(call.lane, true)?;
            }
            self.now = at;
            self.done.events += 1;
            self.visitor.open(&call, depth, at)?;
        }
        self.stack.push(Open {
            call,
            children: 0,
            at,
            bound,
            subtree,
            shown,
            inner: depth + usize::from(shown),
        });
        Ok(())
    }
}

/// Walks the sorted calls of `reader` lane by lane, handing the calls
/// `filter` keeps to `visitor`; returns the lanes and what was handed on.
pub(super) fn walk(
    reader: &ProfileReader,
    filter: &Resolved,
    visitor: &mut impl Visitor,
) -> Result<(Vec<Lane>, Exported), Error> {
    let (mut sorted, lanes) = sort_calls(reader, filter)?;
    visitor.lanes(&lanes);
    let by_ids = reader.has_parents();
    let mut walk = Walk {
        visitor,
        filter,
        stack: Vec::new(),
        now: i64::MIN,
        lane: None,
        begun: false,
        done: Exported::default(),
    };
    while let Some(call) = sorted.next_call(reader.path())? {
        walk.call(call, by_ids)?;
    }
    walk.end_lane()?;
    Ok((lanes, walk.done))
}
