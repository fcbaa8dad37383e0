//! The active session, as recording sees it: the generation number that
//! tells the hot path whether (and which) session is active with one
//! relaxed load, the session's regions and store, where threads register
//! their lanes, and the session finalized last (for introspection). The
//! lifecycle on top (`session.rs`) starts and ends sessions through
//! [`activate`] and [`deactivate`].
//!
//! A `fork()` child starts with no active session: a child handler zeroes
//! the generation, and a session inherited from the parent is recognized by
//! its fork epoch and forgotten (leaked: its threads, writer and scratch
//! file are the parent's).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use crate::clock::{Anchor, TickConverter};
use crate::lane::{Lane, bump};
use crate::options::Options;
use crate::registry::RegionTable;
use crate::store::Store;
use crate::sync::{fork_epoch, lock, note_fork};

/// Generation of the active session; 0 when none is active.
static GENERATION: AtomicU32 = AtomicU32::new(0);
/// What the hot path reads: the active session's generation while it
/// records, 0 when none is active or it is paused ([`pause`]).
static RECORDING: AtomicU32 = AtomicU32::new(0);
/// Whether the active session aggregates (see `Options::aggregation`).
static AGGREGATING: AtomicBool = AtomicBool::new(false);

/// Whether the active session keeps per-region totals instead of calls.
#[inline]
pub(crate) fn aggregating() -> bool {
    AGGREGATING.load(Ordering::Relaxed)
}
static NEXT_GENERATION: AtomicU32 = AtomicU32::new(1);
/// The active session; held only briefly, never while writing a file.
static ACTIVE: Mutex<Option<Arc<Session>>> = Mutex::new(None);
/// The session finalized last, for introspection until the next `setup`.
static LAST: Mutex<Option<Arc<Session>>> = Mutex::new(None);

/// The generation of the active session, 0 if none. One relaxed load.
#[inline(always)]
pub fn active_generation() -> u32 {
    GENERATION.load(Ordering::Relaxed)
}

/// The generation new calls record into: the active session's, or 0 when
/// none is active or it is paused. One relaxed load; what every entry
/// path checks.
#[inline(always)]
pub(crate) fn recording_generation() -> u32 {
    RECORDING.load(Ordering::Relaxed)
}

/// Pauses or resumes recording in the active session `generation`;
/// `false` if that session is not the active one. Under the lock that
/// activation and deactivation take, so a resume never revives a session
/// that has ended.
pub fn set_paused(generation: u32, paused: bool) -> bool {
    let active = lock(&ACTIVE);
    if active.as_ref().is_none_or(|s| s.generation != generation) {
        return false;
    }
    let value = if paused { 0 } else { generation };
    RECORDING.store(value, Ordering::Release);
    true
}

/// Whether the active session is paused.
pub fn is_paused() -> bool {
    let generation = active_generation();
    generation != 0 && recording_generation() != generation
}

/// One profiling session: its options, regions and the lanes of the threads
/// that recorded in it.
pub struct Session {
    pub generation: u32,
    pub options: Options,
    pub start: Anchor,
    pub wall_start: SystemTime,
    pub regions: RegionTable,
    /// The anchors the session's writes converted through: its start, then
    /// those of checkpoints kept (see [`Session::converter`]).
    anchors: Mutex<Vec<Anchor>>,
    /// The lanes of the threads that recorded, and the memory bound.
    pub store: Arc<Store>,
    /// Per-region call counts, set when the session is finalized (its lanes
    /// are then released).
    final_counts: OnceLock<Vec<u64>>,
    /// The fork epoch the session was set up in.
    epoch: u32,
}

impl Session {
    /// A session that is not active yet (see [`activate`]).
    pub fn new(
        generation: u32,
        options: Options,
        start: Anchor,
        wall_start: SystemTime,
        regions: RegionTable,
        store: Arc<Store>,
    ) -> Session {
        Session {
            generation,
            options,
            start,
            wall_start,
            regions,
            anchors: Mutex::new(vec![start]),
            store,
            final_counts: OnceLock::new(),
            epoch: fork_epoch(),
        }
    }

    /// The tick converter of a write (or a read of durations) at `end`:
    /// linear between the anchors of earlier writes and `end`, so the calls a
    /// checkpoint wrote keep their values in every later write. With
    /// `keep` (a write), `end` becomes one of those anchors.
    pub fn converter(&self, end: Anchor, keep: bool) -> TickConverter {
        let mut anchors = lock(&self.anchors);
        let conv = TickConverter::through(&[anchors.as_slice(), &[end]].concat());
        if keep && TickConverter::keeps(&anchors, end) {
            anchors.push(end);
        }
        conv
    }

    /// Completed calls of region `id` so far.
    pub(crate) fn num_calls(&self, id: u32) -> u64 {
        self.counts().get(id as usize).copied().unwrap_or(0)
    }

    /// Completed calls per region id so far: recorded (in the lanes, on
    /// disk or in memory, and async calls) or dropped. Never decreases while
    /// the session records (see `Lane::cut`).
    pub(crate) fn counts(&self) -> Vec<u64> {
        if let Some(counts) = self.final_counts.get() {
            return counts.clone();
        }
        let mut counts = vec![0u64; self.regions.len()];
        for lane in lock(&self.store.lanes).iter() {
            if lane.is_spliced() {
                continue; // counted in the lane it was placed in
            }
            let cut = lane.cut();
            for (region, n) in cut.counts.iter().enumerate() {
                bump(&mut counts, region, *n);
            }
            for (region, d) in cut.dropped.iter().enumerate() {
                bump(&mut counts, region, d.calls);
            }
            if let Some(table) = lock(&lane.aggregates).clone() {
                for (region, e) in table.entries.iter().enumerate() {
                    bump(&mut counts, region, e.count.load(Ordering::Relaxed));
                }
            }
        }
        counts
    }

    /// Whether the session has been finalized.
    pub(crate) fn is_finished(&self) -> bool {
        self.final_counts.get().is_some()
    }

    /// Ends the session: keeps the per-region counts, releases the records
    /// and the scratch file.
    fn finish(&self, counts: Vec<u64>) {
        let _ = self.final_counts.set(counts);
        self.store.release();
    }

    /// Whether this session was inherited through `fork()`: it belongs to
    /// the parent process, and this one has none of its threads.
    fn is_inherited(&self) -> bool {
        self.epoch != fork_epoch()
    }
}

/// Forgets a session inherited through `fork()`: its threads, writer and
/// scratch file are the parent's. It is leaked, never dropped or joined.
fn forget_inherited(slot: &mut Option<Arc<Session>>) {
    if slot.as_ref().is_some_and(|s| s.is_inherited()) {
        std::mem::forget(slot.take());
    }
}

/// Makes a `fork()` child start with no active session: called in the child
/// (only async-signal-safe atomics). See `setup`.
extern "C" fn in_fork_child() {
    GENERATION.store(0, Ordering::Relaxed);
    RECORDING.store(0, Ordering::Relaxed);
    note_fork();
}

/// The session with this generation, active or last finalized.
pub(crate) fn find(generation: u32) -> Option<Arc<Session>> {
    if generation == 0 {
        return None;
    }
    [&ACTIVE, &LAST].into_iter().find_map(|slot| {
        lock(slot)
            .as_ref()
            .filter(|s| s.generation == generation)
            .cloned()
    })
}

/// The active session, or else the last finalized one.
pub fn current_or_last() -> Option<Arc<Session>> {
    lock(&ACTIVE).clone().or_else(|| lock(&LAST).clone())
}

/// The active session if its generation is `generation`.
pub(crate) fn active(generation: u32) -> Option<Arc<Session>> {
    lock(&ACTIVE)
        .as_ref()
        .filter(|s| s.generation == generation)
        .cloned()
}

/// A new lane for the calling thread in session `generation`, if active,
/// with the store it belongs to.
pub(crate) fn register_lane(generation: u32) -> Option<(Arc<Lane>, Arc<Store>)> {
    let session = active(generation)?;
    let mut lanes = lock(&session.store.lanes);
    let index = session.store.next_thread_index();
    let lane = Arc::new(Lane::for_current_thread(index));
    lanes.push(Arc::clone(&lane));
    Some((lane, Arc::clone(&session.store)))
}

/// The active session, if any (one inherited through `fork()` is forgotten
/// here).
pub fn active_session() -> Option<Arc<Session>> {
    let mut active = lock(&ACTIVE);
    forget_inherited(&mut active);
    active.clone()
}

/// A new session's generation number, never 0 and never reused.
pub fn new_generation() -> u32 {
    NEXT_GENERATION.fetch_add(1, Ordering::Relaxed)
}

/// Makes `session` the active one: from now on regions record into it.
/// `false` (and nothing changes) if a session is active already.
#[must_use]
pub fn activate(session: Arc<Session>) -> bool {
    static AT_FORK: std::sync::Once = std::sync::Once::new();
    AT_FORK.call_once(|| {
        // `in_fork_child` only stores to atomics: async-signal-safe, as a
        // fork child handler must be. Where the OS has no such hook, a
        // forked child inherits the session (README, Platforms).
        crate::platform::on_fork_child(in_fork_child);
    });
    forget_inherited(&mut lock(&LAST));
    let mut active = lock(&ACTIVE);
    forget_inherited(&mut active);
    if active.is_some() {
        return false;
    }
    let generation = session.generation;
    AGGREGATING.store(session.options.aggregation, Ordering::Relaxed);
    *lock(&LAST) = None;
    *active = Some(session);
    GENERATION.store(generation, Ordering::Release);
    RECORDING.store(generation, Ordering::Release);
    true
}

/// Whether a session is active (in this process).
pub fn is_active() -> bool {
    active_session().is_some()
}

/// Ends `session`, which was active: calls entered from now on record
/// nothing; its counts are kept as `counts`, its records released, and it
/// stays findable as the last session.
pub fn deactivate(session: Arc<Session>, counts: Vec<u64>) {
    {
        let mut active = lock(&ACTIVE);
        RECORDING.store(0, Ordering::Release);
        GENERATION.store(0, Ordering::Release);
        active.take();
    }
    session.finish(counts);
    *lock(&LAST) = Some(session);
}

/// Forgets the session finalized last: introspection (`get_region`, ...)
/// then finds no session, as after a `setup` (a deactivated one starts none).
pub fn forget_last() {
    forget_inherited(&mut lock(&LAST));
    *lock(&LAST) = None;
}
