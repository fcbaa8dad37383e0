//! The call paths `finalize` stores beside the events (the file's
//! `call_paths` table, rows of [`CallPath`]): built on the backward walk,
//! one call at a time, so that readers need not walk the events.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::fxhash::FxHasher;
use crate::histogram::LogHistogram;
use crate::profile::CallPath;

/// Call paths at most in the stored tree of a session (see [`CallPaths`]):
/// past them (deep recursion, thousands of distinct paths) the file holds
/// none and readers walk the events. A path holds a histogram of up to a
/// few KiB.
pub(crate) const MAX_CALL_PATHS: usize = 4096;

/// Builds the call paths of every lane (see [`CallPath`]), one call at a
/// time, each after its parent (the backward walk's order): the tree
/// `finalize` stores so that readers need not walk the events.
#[derive(Default)]
pub(crate) struct CallPaths {
    paths: Vec<PathAcc>,
    /// The path of each `(parent path, region)`.
    children: HashMap<(u32, u32), u32, BuildHasherDefault<FxHasher>>,
    /// The root path of each `(thread, task, region)`.
    roots: HashMap<(i64, i64, u32), u32, BuildHasherDefault<FxHasher>>,
    /// The last `(parent, region, path)` found at each depth: a loop's calls
    /// find their path without a lookup.
    last: Vec<(u32, u32, u32)>,
    /// More paths than [`MAX_CALL_PATHS`]: none is kept.
    overflow: bool,
}

struct PathAcc {
    parent: u32,
    thread: i64,
    task: i64,
    region: u32,
    calls: u64,
    total: i64,
    own: i64,
    min: i64,
    max: i64,
    first_start: i64,
    last_end: i64,
    hist: LogHistogram,
}

/// The path of no call (past the limit).
pub(crate) const NO_PATH: u32 = u32::MAX;

impl CallPaths {
    /// Adds a call of `region` at `depth` on lane `(thread, task)` under the
    /// call whose path is `parent` (`None` at depth 0); returns its path,
    /// for its children ([`NO_PATH`] once the paths overflowed).
    pub(crate) fn call(
        &mut self,
        parent: Option<u32>,
        depth: usize,
        lane: (i64, i64),
        region: u32,
        start: i64,
        duration: i64,
    ) -> u32 {
        if self.overflow {
            return NO_PATH;
        }
        let path = match parent {
            Some(NO_PATH) => return NO_PATH,
            Some(p) => {
                self.paths[p as usize].own -= duration;
                match self.last.get(depth) {
                    Some(&(lp, lr, path)) if lp == p && lr == region => path,
                    _ => {
                        let next = self.paths.len() as u32;
                        let path = *self.children.entry((p, region)).or_insert(next);
                        if path == next {
                            self.push(p, lane, region);
                        }
                        path
                    }
                }
            }
            None => {
                let next = self.paths.len() as u32;
                let path = *self.roots.entry((lane.0, lane.1, region)).or_insert(next);
                if path == next {
                    self.push(NO_PATH, lane, region);
                }
                path
            }
        };
        if self.paths.len() > MAX_CALL_PATHS {
            *self = CallPaths {
                overflow: true,
                ..CallPaths::default()
            };
            return NO_PATH;
        }
        if self.last.len() <= depth {
            self.last.resize(depth + 1, (NO_PATH, 0, NO_PATH));
        }
        self.last[depth] = (parent.unwrap_or(NO_PATH), region, path);
        let acc = &mut self.paths[path as usize];
        if acc.calls == 0 {
            (acc.min, acc.max) = (duration, duration);
            (acc.first_start, acc.last_end) = (start, start + duration);
        }
        acc.calls += 1;
        acc.total += duration;
        acc.own += duration;
        acc.min = acc.min.min(duration);
        acc.max = acc.max.max(duration);
        acc.first_start = acc.first_start.min(start);
        acc.last_end = acc.last_end.max(start + duration);
        acc.hist.add(duration);
        path
    }

    fn push(&mut self, parent: u32, lane: (i64, i64), region: u32) {
        self.paths.push(PathAcc {
            parent,
            thread: lane.0,
            task: lane.1,
            region,
            calls: 0,
            total: 0,
            own: 0,
            min: 0,
            max: 0,
            first_start: 0,
            last_end: 0,
            hist: LogHistogram::default(),
        });
    }

    /// The paths, regions mapped by `region_id` (session region id to the
    /// file's); `None` past [`MAX_CALL_PATHS`].
    pub(crate) fn finish(self, region_id: impl Fn(u32) -> u32) -> Option<Vec<CallPath>> {
        if self.overflow {
            return None;
        }
        Some(
            self.paths
                .into_iter()
                .map(|p| CallPath {
                    parent: (p.parent != NO_PATH).then_some(p.parent),
                    thread_id: p.thread,
                    task_id: p.task,
                    region_id: region_id(p.region),
                    num_calls: p.calls,
                    total: p.total,
                    exclusive: p.own,
                    minimum: p.min,
                    maximum: p.max,
                    first_start: p.first_start,
                    last_end: p.last_end,
                    histogram: p.hist.buckets().collect(),
                })
                .collect(),
        )
    }
}
