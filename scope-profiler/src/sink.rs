//! Where assembled events go: slices of the `/events` columns, handed over
//! in order, to a file or to memory.

use crate::error::Error;
use crate::profile::Events;

/// Consecutive events `[offset, offset + len)` of every column.
pub(crate) struct EventSlice<'a> {
    /// Absolute starts, ns.
    pub start_ns: &'a [i64],
    /// Starts as stored in the file: per row, the first absolute, then gaps.
    pub start_deltas: &'a [i64],
    pub durations: &'a [i64],
    pub call_ids: &'a [i64],
    pub parent_ids: &'a [i64],
    pub thread_ids: &'a [i64],
    /// `None` when the session recorded no async call.
    pub task_ids: Option<&'a [i64]>,
}

/// Receives the events of a profile, slice after slice, in order.
pub(crate) trait EventSink {
    /// Takes the events starting at `offset`; offsets come in increasing
    /// order and leave no gap.
    fn events(&mut self, offset: usize, slice: &EventSlice<'_>) -> Result<(), Error>;
}

/// Collects the events in memory (in-memory sessions, `write_profile`'s tests).
pub(crate) struct MemorySink {
    pub events: Events,
}

impl MemorySink {
    pub(crate) fn new(total: usize, with_tasks: bool) -> MemorySink {
        let column = || Vec::with_capacity(total);
        MemorySink {
            events: Events {
                start_ns: column(),
                durations: column(),
                call_ids: column(),
                parent_ids: column(),
                thread_ids: column(),
                task_ids: with_tasks.then(column),
            },
        }
    }
}

impl EventSink for MemorySink {
    fn events(&mut self, _offset: usize, s: &EventSlice<'_>) -> Result<(), Error> {
        let e = &mut self.events;
        e.start_ns.extend_from_slice(s.start_ns);
        e.durations.extend_from_slice(s.durations);
        e.call_ids.extend_from_slice(s.call_ids);
        e.parent_ids.extend_from_slice(s.parent_ids);
        e.thread_ids.extend_from_slice(s.thread_ids);
        if let (Some(all), Some(part)) = (&mut e.task_ids, s.task_ids) {
            all.extend_from_slice(part);
        }
        Ok(())
    }
}
