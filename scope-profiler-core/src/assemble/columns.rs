//! A step of the `/events` columns, as the placed calls fill them.

#![forbid(unsafe_code)]

use crate::placement::PlacedCall;
use crate::sink::EventSlice;

/// The event columns of a step of events.
#[derive(Default)]
pub(super) struct Columns {
    pub(super) start_ns: Vec<i64>,
    pub(super) start_deltas: Vec<i64>,
    pub(super) durations: Vec<i64>,
    pub(super) call_ids: Vec<i64>,
    pub(super) parent_ids: Vec<i64>,
    pub(super) thread_ids: Vec<i64>,
    pub(super) task_ids: Vec<i64>,
}

impl Columns {
    pub(super) fn reset(&mut self, len: usize, with_tasks: bool) {
        for c in [
            &mut self.start_ns,
            &mut self.start_deltas,
            &mut self.durations,
            &mut self.call_ids,
            &mut self.parent_ids,
            &mut self.thread_ids,
        ] {
            c.clear();
            c.resize(len, 0);
        }
        self.task_ids.clear();
        self.task_ids.resize(if with_tasks { len } else { 0 }, -1);
    }

    pub(super) fn put(&mut self, i: usize, p: &PlacedCall) {
        self.start_ns[i] = p.start;
        self.durations[i] = p.duration;
        self.call_ids[i] = p.call;
        self.parent_ids[i] = p.parent;
        self.thread_ids[i] = p.thread as i64;
        if let Some(t) = self.task_ids.get_mut(i) {
            *t = p.task as i64;
        }
    }

    pub(super) fn slice(&self, with_tasks: bool) -> EventSlice<'_> {
        EventSlice {
            start_ns: &self.start_ns,
            start_deltas: &self.start_deltas,
            durations: &self.durations,
            call_ids: &self.call_ids,
            parent_ids: &self.parent_ids,
            thread_ids: &self.thread_ids,
            task_ids: with_tasks.then_some(&self.task_ids[..]),
        }
    }
}
