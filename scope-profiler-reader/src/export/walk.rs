//! The walk that rebuilds each lane's call tree from its events, sorted by
//! start, with a stack of open calls, and hands each kept call to a
//! visitor in tree order.
//!
//! **Where a call goes.** With parent ids (every file we write, and the
//! Python package's): under its parent when that parent is among the
//! `PARENT_SCAN` innermost open calls, the calls above it closing; a root (parent id -1) closes every
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
use crate::profile_reader::ProfileReader;

/// How many open calls, from the innermost, a call's parent is looked for
/// among.
const PARENT_SCAN: usize = 64;

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
        // The innermost open calls only: a hostile file (every parent id
        // naming no call) must not make each call scan a deep stack. A
        // parent deeper down than that is rare: the calls above it are
        // open siblings' calls; the call goes by time then.
        let mut top = stack.iter().rev().take(PARENT_SCAN);
        if let Some(up) = top.position(|o| o.call.call_id == call.parent_id) {
            return stack.len() - up;
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

#[cfg(test)]
mod tests {
    //! The instants the walk hands on, and where it places a call.

    use super::*;
    use crate::export::filter::Filter;
    use crate::profile::{Profile, RegionRow};

    /// Records what the visitor gets: (open?, region, depth, at).
    #[derive(Default)]
    struct Log(Vec<(bool, u64, usize, i64)>);

    impl Visitor for Log {
        fn open(&mut self, call: &Call, depth: usize, at: i64) -> Result<(), Error> {
            self.0.push((true, call.region, depth, at));
            Ok(())
        }
        fn close(&mut self, call: &Call, depth: usize, _: i64, at: i64) -> Result<(), Error> {
            self.0.push((false, call.region, depth, at));
            Ok(())
        }
        fn lane(&mut self, _: u64, _: bool) -> Result<(), Error> {
            Ok(())
        }
        fn lanes(&mut self, _: &[Lane]) {}
    }

    /// (region, start, end, id, parent) calls of one thread, one row per
    /// region id.
    fn log(calls: &[(u32, i64, i64, i64, i64)]) -> Vec<(bool, u64, usize, i64)> {
        let mut p = Profile::default();
        let regions = calls.iter().map(|c| c.0).max().map_or(0, |m| m + 1);
        for r in 0..regions {
            p.region_names.push(format!("r{r}"));
            let mut row = RegionRow::default();
            row.region_id = r;
            row.event_offset = p.events.len() as u64;
            for &(_, start, end, id, parent) in calls.iter().filter(|c| c.0 == r) {
                p.events.start_ns.push(start);
                p.events.durations.push(end - start);
                p.events.call_ids.push(id);
                p.events.parent_ids.push(parent);
                p.events.thread_ids.push(0);
                row.event_count += 1;
            }
            p.rows.push(row);
        }
        let reader = ProfileReader::from_profile(p).unwrap();
        let filter = Resolved::new(&reader, &Filter::new()).unwrap();
        let mut log = Log::default();
        walk(&reader, &filter, &mut log).unwrap();
        log.0
    }

    #[test]
    fn a_child_that_sticks_out_is_cut_at_its_parents_end() {
        // r1 [100, 200] in r0 [0, 1000]; r2 starts in r1 and ends after r0.
        let got = log(&[
            (0, 0, 1000, 1, -1),
            (1, 100, 200, 2, 1),
            (2, 150, 1500, 3, 2),
            (1, 500, 700, 4, 1),
        ]);
        let want = vec![
            (true, 0, 0, 0),
            (true, 1, 1, 100),
            (true, 2, 2, 150),
            (false, 2, 2, 200),
            (false, 1, 1, 200),
            (true, 1, 1, 500),
            (false, 1, 1, 700),
            (false, 0, 0, 1000),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn a_sibling_that_overlaps_an_earlier_one_opens_when_it_closes() {
        // Two roots by id, the second starting inside the first.
        let got = log(&[(0, 0, 10, 1, -1), (1, 5, 12, 2, -1)]);
        let want = vec![
            (true, 0, 0, 0),
            (false, 0, 0, 10),
            (true, 1, 0, 10),
            (false, 1, 0, 12),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn a_call_whose_parent_starts_later_goes_by_time_and_closes_nothing() {
        // r2's parent (id 4) starts after it: placed in r1, which it
        // starts in; r0 and r1 stay open for the second r1.
        let got = log(&[
            (0, 0, 1000, 1, -1),
            (1, 100, 200, 2, 1),
            (2, 150, 600, 3, 4),
            (1, 500, 700, 4, 1),
            (3, 800, 900, 5, 1),
        ]);
        let depths: Vec<(u64, usize)> = got.iter().filter(|e| e.0).map(|e| (e.1, e.2)).collect();
        assert_eq!(depths, [(0, 0), (1, 1), (2, 2), (1, 1), (3, 1)]);
    }

    fn open(call_id: i64, bound: i64) -> Open {
        Open {
            call: Call {
                call_id,
                ..Call::default()
            },
            children: 0,
            at: 0,
            bound,
            subtree: true,
            shown: true,
            inner: 0,
        }
    }

    #[test]
    fn deep_calls_whose_parents_are_not_in_the_file_nest_by_time() {
        // Each call's parent id names no call: every one is placed by time,
        // under the one before (after a bounded look down the stack).
        let n = 50_000i64;
        let calls: Vec<_> = (0..n)
            .map(|i| ((i % 3) as u32, i, 2 * n - i, i, i + 10 * n))
            .collect();
        let got = log(&calls);
        assert_eq!(got.len(), 2 * n as usize);
        let depths: Vec<usize> = got.iter().filter(|e| e.0).map(|e| e.2).collect();
        assert!(depths.iter().enumerate().all(|(i, &d)| d == i));
    }

    #[test]
    fn placement_by_ids_finds_the_parent_below_the_top_and_by_time_keeps_what_is_open() {
        let stack = [open(1, 100), open(2, 50), open(3, 40)];
        let call = |start, duration, parent_id| Call {
            start,
            duration,
            parent_id,
            call_id: 9,
            ..Call::default()
        };
        assert_eq!(placement(&stack, &call(45, 1, 1), true), 1);
        assert_eq!(placement(&stack, &call(45, 1, 2), true), 2);
        assert_eq!(placement(&stack, &call(45, 1, -1), true), 0);
        // Parent 7 is not open: by time, r3 ended (40), r2 is open (50).
        assert_eq!(placement(&stack, &call(45, 100, 7), true), 2);
        assert_eq!(placement(&stack, &call(45, 100, 7), false), 2);
        // At the very end of r3, lasting 0 ns: still in it.
        assert_eq!(placement(&stack, &call(40, 0, 7), false), 3);
        assert_eq!(placement(&stack, &call(100, 1, 7), false), 0);
    }
}
