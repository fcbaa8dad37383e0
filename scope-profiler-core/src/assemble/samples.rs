//! Samples given to calls (issue 39): a sample taken on a thread belongs to
//! the innermost call open on that thread at its time, which the lane's
//! records tell by themselves (start, end, depth): nothing is added to
//! enter or exit for it.

#![forbid(unsafe_code)]

use crate::sampling::{ChainTable, NO_TASK, SampleCut};

/// Where a sample landed: the innermost call open at its time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Landing {
    /// The call's region id.
    pub region: u32,
    /// The call's depth on its lane (0: outermost).
    pub depth: u32,
    /// The call's node in the walk's summary tree (its path of regions).
    pub node: u32,
}

/// One finished call of a lane, on the samples' clock: open from `start`
/// (included) to `end` (excluded), `depth` calls deep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: u64,
    pub end: u64,
    pub depth: u32,
    pub region: u32,
    /// Its node in the summary tree (0 where none is kept).
    pub node: u32,
}

/// Samples given to calls as the calls come: each call visits the samples
/// it holds (two binary searches find them), so the work is the calls
/// plus, per sample, the calls open at its time. The calls of one lane
/// nest, so of the calls open at a time the deepest is the innermost.
pub struct Attribution<'t> {
    times: &'t [u64],
    landed: Vec<Option<Landing>>,
}

impl<'t> Attribution<'t> {
    /// For `times`, one lane's samples, sorted.
    pub fn new(times: &'t [u64]) -> Attribution<'t> {
        debug_assert!(times.is_sorted(), "the samples' times are sorted");
        Attribution {
            times,
            landed: vec![None; times.len()],
        }
    }

    /// A finished call of the lane, in any order.
    pub fn call(&mut self, call: Span) {
        land(self.times, &mut self.landed, call);
    }

    /// Where each sample landed (`None`: outside every call).
    pub fn finish(self) -> Vec<Option<Landing>> {
        self.landed
    }
}

/// Gives `call` the samples of `times` (sorted) it holds, unless a deeper
/// call has them: two binary searches find them.
fn land(times: &[u64], landed: &mut [Option<Landing>], call: Span) {
    let lo = times.partition_point(|&t| t < call.start);
    let hi = times.partition_point(|&t| t < call.end).max(lo);
    for slot in &mut landed[lo..hi] {
        if slot.is_none_or(|l| call.depth >= l.depth) {
            *slot = Some(Landing {
                region: call.region,
                depth: call.depth,
                node: call.node,
            });
        }
    }
}

/// Gives each of `times` (one lane's samples, sorted) the innermost of
/// `calls` (the lane's finished calls, in any order) open at it; `None`
/// where no call was. See [`Attribution`].
pub fn attribute(times: &[u64], calls: impl IntoIterator<Item = Span>) -> Vec<Option<Landing>> {
    let mut a = Attribution::new(times);
    for call in calls {
        a.call(call);
    }
    a.finish()
}

/// Where the samples of a cut go while the placing walk meets the calls:
/// a thread's samples taken outside any task's poll to the thread's own
/// calls, those taken while a task was polled to that task's calls
/// (wherever they are: the tasks lane of the thread that completed it, or
/// a lane of its own), each group attributed as [`Attribution`] does.
pub struct Targets {
    groups: Vec<Group>,
    /// The group of each thread lane's own samples (`u32::MAX`: none).
    by_lane: Vec<u32>,
    /// The group of each task, by the file's task index.
    by_task: Vec<u32>,
    /// Per lane of the cut, where each of its samples landed.
    landed: Vec<Vec<Option<Landing>>>,
}

/// One group's samples: sorted times, and which sample of which lane each
/// is.
struct Group {
    times: Vec<u64>,
    refs: Vec<(u32, u32)>,
    landed: Vec<Option<Landing>>,
}

impl Targets {
    /// The groups of `cut`'s samples; `task_pos` gives each task number
    /// its index in the file (-1: not in it, its samples land nowhere).
    pub fn new(cut: &SampleCut, task_pos: &[i32]) -> Targets {
        let mut groups: Vec<Group> = Vec::new();
        let mut by_lane = vec![u32::MAX; cut.lanes.len()];
        let mut by_task: Vec<u32> = Vec::new();
        let group_of = |slot: &mut u32, groups: &mut Vec<Group>| -> usize {
            if *slot == u32::MAX {
                *slot = groups.len() as u32;
                groups.push(Group {
                    times: Vec::new(),
                    refs: Vec::new(),
                    landed: Vec::new(),
                });
            }
            *slot as usize
        };
        for (lane, l) in cut.lanes.iter().enumerate() {
            for (i, (&time, &task)) in l.times.iter().zip(&l.tasks).enumerate() {
                let g = if task == NO_TASK {
                    group_of(&mut by_lane[lane], &mut groups)
                } else {
                    match task_pos
                        .get(task as usize)
                        .and_then(|&p| usize::try_from(p).ok())
                    {
                        Some(pos) => {
                            if by_task.len() <= pos {
                                by_task.resize(pos + 1, u32::MAX);
                            }
                            group_of(&mut by_task[pos], &mut groups)
                        }
                        None => continue,
                    }
                };
                groups[g].times.push(time);
                groups[g].refs.push((lane as u32, i as u32));
            }
        }
        // A task's samples come from every thread that polled it: in time
        // order, as the attribution wants them.
        for g in &mut groups {
            if !g.times.is_sorted() {
                let mut order: Vec<usize> = (0..g.times.len()).collect();
                order.sort_by_key(|&i| g.times[i]);
                g.times = order.iter().map(|&i| g.times[i]).collect();
                g.refs = order.iter().map(|&i| g.refs[i]).collect();
            }
            g.landed = vec![None; g.times.len()];
        }
        Targets {
            groups,
            by_lane,
            by_task,
            landed: cut
                .lanes
                .iter()
                .map(|l| vec![None; l.times.len()])
                .collect(),
        }
    }

    /// A finished call: a sync call of thread lane `thread` (`task` -1) or
    /// a call of the task of file index `task`.
    pub fn call(&mut self, thread: i32, task: i32, call: Span) {
        let group = match usize::try_from(task) {
            Ok(task) => self.by_task.get(task),
            Err(_) => usize::try_from(thread)
                .ok()
                .and_then(|t| self.by_lane.get(t)),
        };
        let Some(g) = group.and_then(|&g| self.groups.get_mut(g as usize)) else {
            return;
        };
        land(&g.times, &mut g.landed, call);
    }

    /// Where each sample of each lane of the cut landed.
    pub fn finish(mut self) -> Vec<Vec<Option<Landing>>> {
        for g in &self.groups {
            for (&(lane, i), landing) in g.refs.iter().zip(&g.landed) {
                self.landed[lane as usize][i as usize] = *landing;
            }
        }
        self.landed
    }
}

/// A sample of the session, given to a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LandedSample {
    /// The sampled thread's index in the file's threads.
    pub thread: u32,
    /// CLOCK_MONOTONIC ns.
    pub time_ns: u64,
    /// The interrupted instruction's address.
    pub ip: u64,
    /// The index row (the file's region) of the innermost call open on the
    /// thread then; `None` outside every recorded call.
    pub row: Option<u32>,
    /// Its path of regions: an index into [`Sampled::paths`].
    pub path: Option<u32>,
    /// Its call chain: a number in [`Sampled::chains`] (`NO_CHAIN`:
    /// none).
    pub chain: u32,
}

/// A session's samples up to the cut, each given to a call.
#[derive(Clone, Debug, Default)]
pub struct Sampled {
    /// Samples per second of a thread's CPU time.
    pub hz: u32,
    /// Every sample kept, thread by thread, in time order in each.
    pub samples: Vec<LandedSample>,
    /// The paths of regions the samples landed in: index rows, outermost
    /// first, the innermost the sample's `row`.
    pub paths: Vec<Vec<u32>>,
    /// The samples' call chains, each once, by number.
    pub chains: ChainTable,
    /// Samples not kept (past the memory bound) or lost by the kernel (a
    /// full ring).
    pub missed: u64,
    /// The threads whose event could not be opened, each with why.
    pub failures: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start: u64, end: u64, depth: u32, region: u32) -> Span {
        Span {
            start,
            end,
            depth,
            region,
            node: 0,
        }
    }

    fn regions(got: &[Option<Landing>]) -> Vec<Option<u32>> {
        got.iter().map(|l| l.map(|l| l.region)).collect()
    }

    #[test]
    fn a_sample_goes_to_the_innermost_open_call() {
        // main [0, 100) > solve [10, 60) > factor [20, 30); io [70, 90).
        // Records come in the order calls ended: children first.
        let calls = [
            span(20, 30, 2, 3),
            span(10, 60, 1, 2),
            span(70, 90, 1, 4),
            span(0, 100, 0, 1),
        ];
        let times = [0, 5, 10, 20, 29, 30, 59, 60, 65, 70, 89, 90, 99, 100, 150];
        let got = attribute(&times, calls);
        assert_eq!(
            regions(&got),
            [
                Some(1), // main's start
                Some(1),
                Some(2), // solve's start
                Some(3),
                Some(3),
                Some(2), // factor ended at 30: back in solve
                Some(2),
                Some(1),
                Some(1),
                Some(4),
                Some(4),
                Some(1),
                Some(1),
                None, // main ended at 100
                None,
            ]
        );
        assert_eq!(
            got[3],
            Some(Landing {
                region: 3,
                depth: 2,
                node: 0
            })
        );
    }

    #[test]
    fn the_calls_order_does_not_matter() {
        let mut calls = vec![
            span(0, 1000, 0, 0),
            span(100, 200, 1, 1),
            span(150, 160, 2, 2),
            span(300, 400, 1, 3),
        ];
        let times: Vec<u64> = (0..1100).step_by(7).collect();
        let want = attribute(&times, calls.clone());
        calls.reverse();
        assert_eq!(attribute(&times, calls.clone()), want);
        calls.swap(0, 2);
        assert_eq!(attribute(&times, calls), want);
    }

    /// Samples taken while a task was polled go to the task's calls,
    /// whichever thread took them; the others to their thread's calls; a
    /// task not in the file gets none.
    #[test]
    fn a_tasks_samples_go_to_its_calls_from_every_thread() {
        use crate::sampling::LaneSamples;
        let lane = |times: &[u64], tasks: &[u32]| LaneSamples {
            times: times.to_vec(),
            ips: vec![0; times.len()],
            tasks: tasks.to_vec(),
            ..LaneSamples::default()
        };
        const T: u32 = NO_TASK;
        let cut = SampleCut {
            hz: 1000,
            lanes: vec![
                // Thread 0: its own call main [0, 100); task 5 polled at 20
                // and 30; task 9 (not in the file) at 40.
                lane(&[10, 20, 30, 40, 50], &[T, 5, 5, 9, T]),
                // Thread 1 polled task 5 at 25 (in the task's inner call).
                lane(&[25], &[5]),
            ],
            ..SampleCut::default()
        };
        // Task number 5 is the file's task 0; 9 is not in the file.
        let mut task_pos = vec![-1; 10];
        task_pos[5] = 0;
        let mut targets = Targets::new(&cut, &task_pos);
        // The task's calls come with the thread that first polled it.
        targets.call(0, 0, span(22, 28, 1, 7));
        targets.call(0, 0, span(15, 35, 0, 6));
        targets.call(0, -1, span(0, 100, 0, 1));
        let landed = targets.finish();
        let regions = |l: &[Option<Landing>]| regions(l);
        assert_eq!(
            regions(&landed[0]),
            [Some(1), Some(6), Some(6), None, Some(1)]
        );
        assert_eq!(regions(&landed[1]), [Some(7)]);
    }

    #[test]
    fn no_samples_or_no_calls() {
        assert!(attribute(&[], [span(0, 10, 0, 1)]).is_empty());
        assert_eq!(attribute(&[1, 2], []), [None, None]);
        // An empty call (start == end) holds no time.
        assert_eq!(attribute(&[5], [span(5, 5, 0, 1)]), [None]);
    }
}
