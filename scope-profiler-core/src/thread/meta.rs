//! Call metadata from the recorder's side: `sp::call_metadata` scopes and
//! outcomes as entries of the thread's lane, an async call's as keyed
//! entries of the store (see `callmeta`).
#![forbid(unsafe_code)]

use std::sync::Arc;

use super::hot::with_hot;
use super::{Cold, HOT};
use crate::clock::ticks;
use crate::lane::KeyedEntry;
use crate::lanemeta::{MetaEntry, MetaScope};
use crate::sync::lock;
use crate::value::CallMetadata;

/// Adds call metadata to this thread's lane in session `generation`:
/// `scope` gets the depth of the innermost open call (`None`: none is
/// open) and says which calls the values are for. `false` if nothing was
/// added: no such session, or an instrumented future is being polled here
/// (its calls are in a tasks lane, which metadata does not reach).
pub(crate) fn add_metadata(
    generation: u32,
    scope: impl FnOnce(Option<u32>) -> Option<MetaScope>,
    values: Arc<CallMetadata>,
) -> bool {
    Cold::with(|cold, hot| {
        // Aggregation mode keeps no calls to attach metadata to.
        if cold.task.is_some() || !cold.attach(hot, generation) || cold.agg.is_some() {
            return false;
        }
        let innermost = hot.depth.get().checked_sub(1).map(|d| d as u32);
        let (Some(scope), Some(lane)) = (scope(innermost), &cold.lane) else {
            return false;
        };
        lock(&lane.metadata).push(MetaEntry { scope, values });
        true
    })
    .unwrap_or(false)
}

/// The number of metadata key `key` (`lanemeta::intern`), from this
/// thread's cache of keys (no lock, no allocation); `None` if it cannot be
/// interned (see `lanemeta::MAX_KEYS`).
#[inline(always)]
pub(crate) fn meta_key(key: &str) -> Option<u32> {
    let b = key.as_bytes();
    let hash = b.len()
        ^ usize::from(b.first().copied().unwrap_or(0))
        ^ usize::from(b.last().copied().unwrap_or(0)) << 2;
    let slot = hash & 15;
    let (name, id) = HOT.with(|hot| hot.keys[slot].get());
    if id != u32::MAX && same_key(name.as_bytes(), b) {
        return Some(id);
    }
    meta_key_cold(key, slot)
}

/// `a == b` without a call to `bcmp` (a libc call of a dozen instructions
/// and its own for a 4-byte key) for a key of 4 to 16 bytes, the usual one
/// (`"step"`): two loads a side, overlapping when shorter than 8 or 16.
#[inline(always)]
fn same_key(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if (8..=16).contains(&n) {
        let w = |s: &[u8]| u64::from_ne_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]]);
        return w(a) == w(b) && w(&a[n - 8..]) == w(&b[n - 8..]);
    }
    if (4..8).contains(&n) {
        let w = |s: &[u8]| u32::from_ne_bytes([s[0], s[1], s[2], s[3]]);
        return w(a) == w(b) && w(&a[n - 4..]) == w(&b[n - 4..]);
    }
    a == b
}

#[cold]
#[inline(never)]
fn meta_key_cold(key: &str, slot: usize) -> Option<u32> {
    let (id, name) = crate::lanemeta::intern(key)?;
    HOT.with(|hot| hot.keys[slot].set((name, id)));
    Some(id)
}

/// Adds a one-value metadata scope that started at `start` and ends now
/// (a `lanemeta::MetaBlock` row: start, end, key and kind, value bits) to
/// this thread's lane in session `generation`: into the block's rows lent
/// to the fast path, or through `Cold` (the thread's first scope, a full
/// block). `false` if nothing was added (as [`add_metadata`]).
///
/// The scope is for the calls that start in it and end before now. On
/// the fast path its end is the end of the last call the recorder stored
/// (`Hot::last_end`: every call that ended since did so after it, and
/// none has), not a timestamp of its own: no clock read, the same calls;
/// and at least that of the last scope that ended on this thread
/// (`Hot::scope_end`), so that scopes still nest: one ending inside
/// another ends no later.
#[inline(always)]
pub(crate) fn end_meta_row(generation: u32, start: u64, key_kind: u64, bits: u64) -> bool {
    let pushed = with_hot(|hot| {
        if hot.generation.get() != generation || hot.meta.len() == 0 {
            return false;
        }
        let end = match hot.last_end() {
            Some(end) => end.max(hot.scope_end.get()).max(start),
            None => ticks(),
        };
        hot.scope_end.set(end);
        hot.meta.push_row([start, end, key_kind, bits])
    });
    pushed || add_meta_row_cold(generation, [start, ticks(), key_kind, bits])
}

#[cold]
#[inline(never)]
fn add_meta_row_cold(generation: u32, row: [u64; 4]) -> bool {
    Cold::with(|cold, hot| {
        hot.scope_end.set(row[1]);
        cold.push_meta(hot, generation, row)
    })
    .unwrap_or(false)
}

/// A metadata scope of this thread ended at `end` (ticks), other than
/// through [`end_meta_row`]'s fast path: the scopes around it end no
/// earlier.
pub(crate) fn scope_ended(end: u64) {
    let _ = HOT.try_with(|hot| hot.scope_end.set(end));
}

/// Adds `values` for the call `seq`, open on this thread's current recorder,
/// at `at` (ticks, taken as its start if earlier) while it is open: an
/// outcome. On a thread's recorder, an
/// entry of its lane for the one call at that call's depth open at `at`
/// (exact, also when calls it encloses are still open); on a task's, a
/// keyed entry ([`add_keyed_metadata`]). `false` if nothing was added: the
/// call is not open here, or the session keeps no calls (aggregation).
pub(crate) fn add_call_metadata(seq: u64, at: u64, values: Arc<CallMetadata>) -> bool {
    if seq == 0 {
        return false;
    }
    let added = Cold::with(|cold, hot| {
        if cold.task.is_some() {
            return None; // a keyed entry, below
        }
        if cold.agg.is_some() {
            return Some(false);
        }
        let (Some(depth), Some(lane)) = (cold.open_depth(hot, seq), &cold.lane) else {
            return Some(false);
        };
        let scope = MetaScope::Call {
            depth: depth as u32,
            at: at.max(cold.stack.get(depth).map_or(0, |o| o.start)),
        };
        let values = Arc::clone(&values);
        lock(&lane.metadata).push(MetaEntry { scope, values });
        Some(true)
    });
    match added {
        Some(Some(added)) => added,
        Some(None) => add_keyed_metadata(seq, values),
        None => false, // the recorder is busy (re-entered)
    }
}

/// Adds metadata for the call `seq` (from [`open`](super::open)), open on this
/// thread's current recorder (a task's while one is polled), to its
/// session's keyed entries: it reaches that call's record by its region
/// and start, wherever the record goes when the call ends. `false` if
/// nothing was added: the call is not open here, or the session keeps no
/// calls (aggregation mode).
pub(crate) fn add_keyed_metadata(seq: u64, values: Arc<CallMetadata>) -> bool {
    if seq == 0 {
        return false;
    }
    Cold::with(|cold, hot| {
        let (Some(depth), Some(store)) = (cold.open_depth(hot, seq), &cold.store) else {
            return false;
        };
        let Some(call) = cold.stack.get(depth) else {
            return false;
        };
        if cold.agg.is_some() {
            return false;
        }
        lock(&store.keyed_metadata).push(KeyedEntry {
            region: call.region,
            start: call.start,
            values,
        });
        true
    })
    .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::same_key;

    #[test]
    fn keys_compare_as_strings_do() {
        let keys = [
            "",
            "a",
            "ab",
            "abc",
            "step",
            "steps",
            "stepper",
            "iterate",
            "iteration",
            "a key of 16 byte",
            "a key of 17 bytes",
            "a key of sixteen",
        ];
        for a in keys {
            for b in keys {
                assert_eq!(same_key(a.as_bytes(), b.as_bytes()), a == b, "{a:?} {b:?}");
            }
        }
        // Same length, one byte apart, at each place.
        for n in 1..=20 {
            let a = vec![b'x'; n];
            for i in 0..n {
                let mut b = a.clone();
                b[i] = b'y';
                assert!(!same_key(&a, &b), "{n} {i}");
            }
            assert!(same_key(&a, &a.clone()));
        }
    }
}
