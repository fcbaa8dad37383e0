//! The calls open now, as the live server shows them: a thread's (the
//! slots of its stack the fold has not seen end) and the tasks' in flight
//! (each task's stack between polls, its frames' placed under the calls
//! they were first polled in).

#![forbid(unsafe_code)]

use std::collections::HashMap;

use super::MAX_OPEN_SHOWN;
use crate::open::TaskOpen;

/// A call open on a thread or in a task.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenCall {
    /// The region's id in the session.
    pub region: u32,
    /// Its start, in ticks.
    pub start: u64,
    /// How many listed calls it is nested in: it is nested in the closest
    /// call before it in its list one level up (a thread's calls: its
    /// place in the list; a task's: futures it awaits side by side, as
    /// `join!` polls them, are at one level).
    pub depth: u32,
}

/// A task in flight: an instrumented future polled at least once, not
/// finished.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskInFlight {
    /// Its number in the session and its first thread's lane index.
    pub index: u32,
    pub thread: u32,
    /// Being polled now (then only its own call is known, and the futures
    /// it awaits that wait).
    pub polled: bool,
    /// Its open calls, its own first, then in the order they nest (see
    /// [`OpenCall::depth`]), with those of the instrumented futures it
    /// awaits (its frames); at most [`MAX_OPEN_SHOWN`].
    pub calls: Vec<OpenCall>,
}

/// The calls of `slots` (a thread's stack as read, outermost first) still
/// open: a call at a depth is open if it started after the last call that
/// ended there (`last_start`, from the fold), and the calls under it are
/// open. A call that ended at that depth began at or before the last one
/// that did (calls at one depth of one thread follow each other), so the
/// slot it left, unless a later call took it, starts no later than that.
pub(super) fn still_open(slots: &[(u64, u32)], last_start: &[u64]) -> Vec<OpenCall> {
    slots
        .iter()
        .enumerate()
        .take_while(|(depth, (start, _))| *start > last_start.get(*depth).copied().unwrap_or(0))
        .map(|(depth, &(start, region))| OpenCall {
            region,
            start,
            depth: u32::try_from(depth).unwrap_or(u32::MAX),
        })
        .collect()
}

/// The tasks of `read` (tasks and frames as their stacks were read), each
/// with its frames' calls placed under the calls they were first polled
/// in, by thread and number. A frame whose recorder was not read (being
/// rewritten, or finished) is left out with what nests in it.
pub(super) fn task_trees(read: Vec<TaskOpen>) -> Vec<TaskInFlight> {
    // The frames by where they were first polled: the thread and the start
    // of that recorder's own call; in order of their own calls' starts.
    let mut frames: HashMap<(u32, u64), Vec<&TaskOpen>> = HashMap::new();
    for t in &read {
        if let Some((parent, _)) = t.parent {
            frames.entry((t.thread, parent)).or_default().push(t);
        }
    }
    for siblings in frames.values_mut() {
        siblings.sort_by_key(|f| f.calls.first().map(|c| c.0));
    }
    let mut tasks: Vec<TaskInFlight> = read
        .iter()
        .filter(|t| t.parent.is_none())
        .map(|t| {
            let mut calls = Vec::new();
            place(t, 0, &frames, &mut calls);
            TaskInFlight {
                index: t.index,
                thread: t.thread,
                polled: t.polled,
                calls,
            }
        })
        .collect();
    tasks.sort_by_key(|t| (t.thread, t.index));
    tasks
}

/// Lists `t`'s calls from `depth` on, then its frames' under them, up to
/// `MAX_OPEN_SHOWN` calls in all. Each level lists a call at least, and a
/// frame started after the recorder it nests in: the recursion ends.
fn place(
    t: &TaskOpen,
    depth: u32,
    frames: &HashMap<(u32, u64), Vec<&TaskOpen>>,
    out: &mut Vec<OpenCall>,
) {
    for (i, &(start, region)) in t.calls.iter().enumerate() {
        if out.len() >= MAX_OPEN_SHOWN {
            return;
        }
        let depth = depth.saturating_add(u32::try_from(i).unwrap_or(u32::MAX));
        out.push(OpenCall {
            region,
            start,
            depth,
        });
    }
    let Some(&(own, _)) = t.calls.first() else {
        return;
    };
    for frame in frames.get(&(t.thread, own)).into_iter().flatten() {
        if let Some((_, under)) = frame.parent
            && frame.calls.first().is_some_and(|c| c.0 > own)
        {
            let at = under.min(u32::try_from(t.calls.len()).unwrap_or(u32::MAX));
            place(frame, depth.saturating_add(at), frames, out);
        }
    }
}
