//! Region counters in the recorder (`Options::track_allocations`,
//! `Options::perf_events`): a recorder's counts at its open calls'
//! enters ([`RecCounts`], frozen and thawed as tasks swap), the thread's
//! counting ([`Counting`]: perf group, per-region table), and what `Cold`
//! does with them at enter, exit and swap.
#![forbid(unsafe_code)]

use std::sync::{Arc, Mutex};

use super::tasks::TaskState;
use super::{Cold, Hot};
use crate::counters::{self, CounterSet};
use crate::lane::CounterTable;
use crate::platform::PerfGroup;
use crate::store::Store;
use crate::sync::lock;

/// A recorder's counters (see `crate::counters`): the counts its open calls
/// started at. While the recorder is the thread's current one (`active`),
/// they are the thread's raw counts then; while it is swapped out (a task
/// between polls), each is kept relative to the counts when it was swapped
/// out, and made raw again, on whichever thread polls it next, when it is
/// swapped back in: what a call counts is what happened while its recorder
/// was current.
#[derive(Default)]
pub(super) struct RecCounts {
    /// Per open call (by depth), `width` values: the counts at its enter.
    pub(super) snaps: Vec<u64>,
    pub(super) active: bool,
    /// A frame's ended depth-0 calls' inclusive deltas (for the call
    /// around it when it ends).
    pub(super) root: Vec<u64>,
}

impl RecCounts {
    /// The thread's own recorder: active.
    pub(super) fn own() -> RecCounts {
        RecCounts {
            active: true,
            ..RecCounts::default()
        }
    }

    pub(super) fn fit(&mut self, width: usize) {
        if self.root.len() != width {
            self.root = vec![0; width];
        }
    }

    /// Swapped out at the thread's counts `raw` with `depth` calls open:
    /// each call's counts become relative to now.
    pub(super) fn freeze(&mut self, raw: &[u64], depth: usize) {
        if self.active {
            let width = raw.len();
            for snap in self.snaps.chunks_exact_mut(width.max(1)).take(depth) {
                for (v, r) in snap.iter_mut().zip(raw) {
                    *v = v.wrapping_sub(*r);
                }
            }
            self.active = false;
        }
    }

    /// Swapped in at the thread's counts `raw` with `depth` calls open:
    /// each call's counts are raw counts again.
    pub(super) fn thaw(&mut self, raw: &[u64], depth: usize) {
        if !self.active {
            let width = raw.len();
            for snap in self.snaps.chunks_exact_mut(width.max(1)).take(depth) {
                for (v, r) in snap.iter_mut().zip(raw) {
                    *v = v.wrapping_add(*r);
                }
            }
            self.active = true;
        }
    }
}

/// A thread's counting in a session that counts: the counters, the perf
/// group (opened on the thread's first call), the per-region totals.
pub(super) struct Counting {
    pub(super) generation: u32,
    pub(super) set: Arc<CounterSet>,
    /// The thread's perf group, shared with the store, which closes it when
    /// the session ends (then this reads nothing more).
    pub(super) perf: Option<Arc<Mutex<Option<PerfGroup>>>>,
    pub(super) store: Arc<Store>,
    /// This thread's slot in `store.counter_tables`.
    pub(super) slot: usize,
    pub(super) table: Arc<CounterTable>,
    /// Scratch: raw counts, deltas.
    pub(super) raw: Vec<u64>,
    pub(super) delta: Vec<u64>,
}

impl Counting {
    pub(super) fn new(generation: u32, set: &Arc<CounterSet>, store: &Arc<Store>) -> Counting {
        let width = set.width();
        // A perf group that cannot be opened here (setup opened one on its
        // own thread: an fd limit, a seccomp filter, another cgroup) is
        // said, once for the thread, and kept in the file's metadata.
        let perf = match set.open_perf() {
            Ok(Some(group)) => {
                let group = Arc::new(Mutex::new(Some(group)));
                lock(&store.perf_groups).push(Arc::clone(&group));
                Some(group)
            }
            Ok(None) => None,
            Err(e) => {
                perf_failed(store, &e.to_string());
                None
            }
        };
        let table = Arc::new(CounterTable::grown(width, 64, None));
        let slot = {
            let mut tables = lock(&store.counter_tables);
            tables.push(Arc::clone(&table));
            tables.len() - 1
        };
        counters::set_tracking(set.allocations);
        Counting {
            generation,
            set: Arc::clone(set),
            perf,
            store: Arc::clone(store),
            slot,
            table,
            raw: vec![0; width],
            delta: vec![0; width],
        }
    }

    /// Reads the thread's raw counts into `self.raw`.
    pub(super) fn read(&mut self) {
        let mut at = 0;
        if self.set.allocations {
            self.raw[..4].copy_from_slice(&counters::alloc_counts());
            at = 4;
        }
        if let Some(perf) = &self.perf
            && let Some(group) = lock(perf).as_ref()
        {
            group.read(&mut self.raw[at..]);
        }
    }

    /// Makes the table hold `region`.
    pub(super) fn fit_table(&mut self, region: usize) {
        if region < self.table.regions() {
            return;
        }
        let grown = Arc::new(CounterTable::grown(
            self.set.width(),
            (region + 1).next_power_of_two().max(64),
            Some(&self.table),
        ));
        lock(&self.store.counter_tables)[self.slot] = Arc::clone(&grown);
        self.table = grown;
    }

    /// Adds one call of `region` (`self.delta`) to the totals, and, with
    /// `parent`, its deltas to that region's children.
    pub(super) fn add(&mut self, region: usize, parent: Option<usize>) {
        self.fit_table(region.max(parent.unwrap_or(0)));
        self.table.add(region, &self.delta);
        if let Some(parent) = parent {
            self.table.add_children(parent, &self.delta);
        }
    }
}

/// Threads whose failure is printed; the others are only in the file.
const PRINTED_FAILURES: usize = 8;

/// Notes that this thread's perf group could not be opened (`why`): in
/// the store (the file's `perf_events_not_counted`) and on stderr, for the
/// first few threads of a session.
fn perf_failed(store: &Store, why: &str) {
    let thread = std::thread::current();
    let tid = crate::platform::native_thread_id();
    let what = format!(
        "thread {} (tid {tid}): {why}",
        thread.name().unwrap_or("unnamed")
    );
    let mut failures = lock(&store.perf_failures);
    match failures.len() {
        n if n < PRINTED_FAILURES => eprintln!(
            "scope-profiler: warning: {what}; this thread's calls count no perf events \
             (the file's metadata perf_events_not_counted lists such threads)"
        ),
        PRINTED_FAILURES => eprintln!(
            "scope-profiler: warning: more threads cannot open their perf events \
             (perf_events_not_counted in the file lists them all)"
        ),
        _ => {}
    }
    failures.push(what);
}

impl Cold {
    /// Makes this thread's counting state for session `generation` if the
    /// current recorder's store counts and it has none for it.
    pub(super) fn ensure_counting(&mut self, generation: u32) -> bool {
        let Some(store) = self.store.as_ref() else {
            return false;
        };
        let Some(set) = store.counters() else {
            return false;
        };
        if self
            .counting
            .as_ref()
            .is_none_or(|c| c.generation != generation)
        {
            self.counting = Some(Box::new(Counting::new(generation, set, store)));
        }
        self.counts.fit(set.width());
        true
    }

    /// Counting: the call just pushed at depth `depth` starts at the
    /// current recorder's counts now.
    pub(super) fn count_enter(&mut self, hot: &Hot, depth: usize) {
        let generation = hot.generation.get();
        if !self.ensure_counting(generation) {
            return;
        }
        let Some(c) = self.counting.as_deref_mut() else {
            return;
        };
        let width = c.set.width();
        c.read();
        let need = (depth + 1) * width;
        if self.counts.snaps.len() < need {
            self.counts.snaps.resize(need.next_power_of_two(), 0);
        }
        self.counts.snaps[depth * width..(depth + 1) * width].copy_from_slice(&c.raw);
    }

    /// Counting: the call at depth `depth` of `region` ends now: its
    /// deltas go to the region's totals and to its parent's children.
    pub(super) fn count_exit(&mut self, hot: &Hot, depth: usize, region: u32) {
        let generation = hot.generation.get();
        let frame = self.task.is_some_and(|t| t.frame);
        if !self.ensure_counting(generation) {
            return;
        }
        let Some(c) = self.counting.as_deref_mut() else {
            return;
        };
        let width = c.set.width();
        let Some(snap) = self.counts.snaps.get(depth * width..(depth + 1) * width) else {
            return;
        };
        c.read();
        for ((d, r), s) in c.delta.iter_mut().zip(&c.raw).zip(snap) {
            *d = r.wrapping_sub(*s);
        }
        let parent = depth
            .checked_sub(1)
            .and_then(|up| self.stack.get(up))
            .map(|o| o.region as usize);
        c.add(region as usize, parent);
        if depth == 0 && frame {
            for (r, d) in self.counts.root.iter_mut().zip(&c.delta) {
                *r = r.wrapping_add(*d);
            }
        }
    }

    /// Counting: the recorder swapped out stops following the thread's
    /// counts (unless the one swapped in is a frame: a frame's calls are
    /// the enclosing call's callees, counted in it too), the one swapped in
    /// follows them from where it was left.
    pub(super) fn swap_counts(&mut self, hot: &Hot, task: &mut TaskState) {
        let incoming_frame = task.id.is_some_and(|t| t.frame);
        let (incoming, current) = (task.generation, hot.generation.get());
        // The thread's counting of a session neither side belongs to (an
        // ended one) is let go: no read per poll for nothing.
        if self
            .counting
            .as_ref()
            .is_some_and(|c| c.generation != incoming && c.generation != current)
        {
            self.counting = None;
            counters::set_tracking(false);
        }
        // A thread that polls a counting session's task counts for it.
        if self.counting.is_none()
            && let Some(store) = task.store.clone().filter(|s| s.counters().is_some())
            && let Some(set) = store.counters()
        {
            self.counting = Some(Box::new(Counting::new(incoming, set, &store)));
        }
        if let Some(c) = self.counting.as_deref_mut() {
            let width = c.set.width();
            self.counts.fit(width);
            task.counts.fit(width);
            c.read();
            if !incoming_frame {
                self.counts.freeze(&c.raw, hot.depth.get());
            }
            task.counts.thaw(&c.raw, task.depth);
        }
        std::mem::swap(&mut self.counts, &mut task.counts);
    }
}
