//! The per-thread recorder: a stack of open calls and the chunks of finished
//! ones, reached through one thread-local per event.
//!
//! Entering a region pushes `(start, call sequence number, region)` on the
//! thread's stack; leaving it pops the entry and appends a complete
//! [`Record`](crate::record::Record) to the thread's current chunk. No lock, hash, allocation or
//! formatting happens per call once the current chunk has room: a full chunk
//! is replaced by a new one (the only allocation, once per chunk) and handed
//! to the thread's [`Lane`](crate::lane::Lane), which the session holds, so the records of a
//! thread that exits stay with the session.
//!
//! Its rooms: `hot` (the fast paths), `cold` (the owning half, slow paths),
//! `guard` (enter and exit, `Guard`), `counting` (region counters),
//! `spec` (an instrumented future's first poll as a plain call, made a
//! task only if it waits), `tasks` and `finish` (instrumented futures'
//! recorders, their start and end), `lazy` (a task's poll swapped on the
//! hot half only), `frames` (a finished frame placed in
//! the recorder around it),
//! `meta` (call metadata).

use std::cell::RefCell;
use std::sync::atomic::AtomicU64;

mod cold;
mod counting;
mod finish;
mod frames;
mod guard;
mod hot;
mod lazy;
mod meta;
mod raw;
mod spec;
mod tasks;
#[cfg(test)]
pub(crate) mod test_support;

use cold::Cold;
use counting::RecCounts;
use hot::Hot;

pub(crate) use finish::finish_task;
pub use guard::{Guard, open_calls};
pub(crate) use guard::{close, enter, open};
pub(crate) use meta::{
    add_call_metadata, add_keyed_metadata, add_metadata, end_meta_row, meta_key, scope_ended,
};
pub(crate) use spec::{end_first_poll, speculate};
pub(crate) use tasks::{
    Start, TaskState, lend_waiting, poll_in_task, start_frame, start_task, start_task_here,
};

const FIRST_CHUNK: usize = 1024;

use crate::open::{Open, Stack};

/// Gives each thread its own range of call sequence numbers: a task's
/// stack can hold calls entered on several threads, and they never share
/// a number.
static SEQ_BASES: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static HOT: Hot = const { Hot::new() };
    static COLD: RefCell<Cold> = const {
        RefCell::new(Cold {
            lane: None,
            store: None,
            chunk: None,
            stack: Stack::none(),
            task: None,
            tasks: None,
            spare: None,
            agg: None,
            kids: Vec::new(),
            counts: RecCounts {
                snaps: Vec::new(),
                active: true,
                root: Vec::new(),
            },
            counting: None,
            deferred: Vec::new(),
            own: None,
            meta: None,
            polls: None,
            spec_chunk: None,
            converted: Vec::new(),
        })
    };
}
