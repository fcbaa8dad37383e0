//! A lane's call metadata: [`MetaEntry`]s (an interval's or one call's
//! values, see `callmeta`), and the cheap form of the common scope,
//! [`MetaBlock`]: one fixed-width value per scope, written without a lock
//! or an allocation, a block of rows its thread appends to and any thread
//! reads (a published count, as a record chunk has), naming its keys by the
//! numbers [`intern`] gives them.
//!
//! `sp::call_metadata([("step", i)])` around each call is the common form
//! (a time step, an iteration, a request number): one key, an integer,
//! float or bool. Such a scope becomes one row `[start, end, key and kind,
//! value bits]`; any other scope (several values, a string) is a
//! `MetaEntry` of the lane. A cut turns the rows into `MetaEntry`s for the
//! matching (`callmatch`), so the file is the same either way.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use crate::sync::lock;
use crate::value::{CallMetadata, Value};
use std::collections::HashMap;

/// Metadata for calls of a thread lane (see `crate::callmeta`), kept
/// beside its records and matched to them when the file is assembled.
#[derive(Clone, Debug)]
pub struct MetaEntry {
    pub scope: MetaScope,
    pub values: Arc<CallMetadata>,
}

/// The metadata of a call whose `record_outcome` function returned ok
/// (`status` "ok"), one allocation shared by every such call: flagged in
/// its record ([`Record::ok`](crate::record::Record::ok)) while recording, or a [`MetaEntry`] of it.
pub fn ok_outcome() -> Arc<CallMetadata> {
    static OK: LazyLock<Arc<CallMetadata>> =
        LazyLock::new(|| Arc::new(vec![("status".to_owned(), Value::from("ok"))]));
    Arc::clone(&OK)
}

/// Which calls a [`MetaEntry`] is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetaScope {
    /// Every call that starts at or after `start` and ends at or before
    /// `end` (ticks).
    Interval { start: u64, end: u64 },
    /// The one call at `depth` open at `at` (ticks): a function's outcome.
    Call { depth: u32, at: u64 },
}

/// Rows of one block: 4096 scopes, 128 KiB.
pub const ROWS: usize = 4096;

/// One row: `[start, end, key << 8 | kind, value bits]`; row 0 holds the
/// number of rows published (`[count, 0, 0, 0]`).
pub type Row = [AtomicU64; 4];

/// A block of one thread's one-value metadata scopes.
///
/// One writer, the thread that owns it (through its recorder's lent rows,
/// or [`MetaBlock::push`]), any number of readers: the writer stores a
/// row's words, then the count with `Release`; a reader loads the count
/// with `Acquire` and reads only the rows below it, never one being
/// written. Every word is an atomic, so the block is plain safe code on any
/// memory model.
pub struct MetaBlock {
    rows: Box<[Row]>,
}

impl std::fmt::Debug for MetaBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetaBlock")
            .field("published", &self.published())
            .finish()
    }
}

impl MetaBlock {
    /// An empty block.
    pub fn new() -> MetaBlock {
        MetaBlock {
            rows: (0..=ROWS).map(|_| Row::default()).collect(),
        }
    }

    /// The rows, header first, for the writer's recorder to lend its fast
    /// path (see `thread::raw`).
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// The number of scopes published.
    pub fn published(&self) -> usize {
        (self.rows[0][0].load(Ordering::Acquire) as usize).min(ROWS)
    }

    /// Appends a scope; `false` when the block is full. Only the block's
    /// own thread calls it (or writes through the lent rows).
    pub fn push(&self, row: [u64; 4]) -> bool {
        push_row(&self.rows, row)
    }

    /// The published scopes as the lane's entries, appended to `out`.
    pub fn entries(&self, out: &mut Vec<MetaEntry>) {
        let n = self.published();
        out.reserve(n);
        for row in &self.rows[1..=n] {
            let [start, end, key, bits] = row.each_ref().map(|w| w.load(Ordering::Relaxed));
            let (Some(name), Some(value)) = (key_name((key >> 8) as u32), decode(key as u8, bits))
            else {
                continue; // not written by `encode`: cannot happen
            };
            out.push(MetaEntry {
                scope: MetaScope::Interval { start, end },
                values: Arc::new(vec![(name.to_owned(), value)]),
            });
        }
    }
}

/// Appends `row` to `rows`, a block's rows (its own, or lent to the
/// recorder's fast path): the row's words, then the count in row 0 with
/// `Release` for the block's readers. `false` when they are full. Only the
/// block's own thread writes.
#[inline(always)]
pub fn push_row(rows: &[Row], row: [u64; 4]) -> bool {
    let Some(head) = rows.first() else {
        return false;
    };
    let n = head[0].load(Ordering::Relaxed) as usize; // only this thread writes it
    let Some(slot) = rows.get(n.wrapping_add(1)) else {
        return false;
    };
    for (word, v) in slot.iter().zip(row) {
        word.store(v, Ordering::Relaxed);
    }
    head[0].store(n as u64 + 1, Ordering::Release);
    true
}

impl Default for MetaBlock {
    fn default() -> Self {
        MetaBlock::new()
    }
}

/// A value's kind and bits in a row, if it is fixed-width.
pub fn encode(value: &Value) -> Option<(u8, u64)> {
    Some(match *value {
        Value::Bool(b) => (1, u64::from(b)),
        Value::Int(i) => (2, i as u64),
        Value::UInt(u) => (3, u),
        Value::Float(f) => (4, f.to_bits()),
        _ => return None,
    })
}

/// The value a row's kind and bits stand for.
fn decode(kind: u8, bits: u64) -> Option<Value> {
    Some(match kind {
        1 => Value::Bool(bits != 0),
        2 => Value::Int(bits as i64),
        3 => Value::UInt(bits),
        4 => Value::Float(f64::from_bits(bits)),
        _ => return None,
    })
}

/// At most this many keys are interned (a program that makes a new key
/// per scope gets the lane's entries past it, not unbounded memory).
pub const MAX_KEYS: usize = 4096;

/// Keys longer than this are not interned.
pub const MAX_KEY_LEN: usize = 256;

/// The interned keys: by name, and by number.
#[derive(Default)]
struct Keys {
    ids: HashMap<&'static str, u32>,
    names: Vec<&'static str>,
}

static KEYS: Mutex<Option<Keys>> = Mutex::new(None);

/// The number of `key` and its interned text (which lives as long as the
/// process), interning it if needed; `None` past [`MAX_KEYS`] keys or for
/// a key longer than [`MAX_KEY_LEN`]. Takes a lock: callers cache it.
pub fn intern(key: &str) -> Option<(u32, &'static str)> {
    if key.len() > MAX_KEY_LEN {
        return None;
    }
    let mut keys = lock(&KEYS);
    let keys = keys.get_or_insert_with(Keys::default);
    if let Some((&name, &id)) = keys.ids.get_key_value(key) {
        return Some((id, name));
    }
    if keys.names.len() >= MAX_KEYS {
        return None;
    }
    // Bounded above: at most MAX_KEYS keys of MAX_KEY_LEN bytes, 1 MiB.
    let name: &'static str = Box::leak(key.to_owned().into_boxed_str());
    let id = keys.names.len() as u32;
    keys.names.push(name);
    keys.ids.insert(name, id);
    Some((id, name))
}

/// The text of interned key `id`.
fn key_name(id: u32) -> Option<&'static str> {
    lock(&KEYS).as_ref()?.names.get(id as usize).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_read_back_as_the_entries_they_stand_for() {
        let block = MetaBlock::new();
        let (step, _) = intern("metablock-step").unwrap();
        let (ratio, name) = intern("metablock-ratio").unwrap();
        assert_eq!(
            intern("metablock-ratio"),
            Some((ratio, name)),
            "interned once"
        );
        let values = [
            Value::Int(-3),
            Value::Float(0.5),
            Value::Bool(true),
            Value::UInt(u64::MAX),
        ];
        for (i, v) in values.iter().enumerate() {
            let (kind, bits) = encode(v).unwrap();
            let key = if i == 1 { ratio } else { step };
            assert!(block.push([
                10 * i as u64,
                10 * i as u64 + 5,
                u64::from(key) << 8 | u64::from(kind),
                bits
            ]));
        }
        assert_eq!(encode(&Value::from("text")), None, "not fixed-width");
        let mut out = Vec::new();
        block.entries(&mut out);
        assert_eq!(out.len(), 4);
        assert_eq!(out[1].scope, MetaScope::Interval { start: 10, end: 15 });
        assert_eq!(
            *out[1].values,
            [("metablock-ratio".to_owned(), Value::Float(0.5))]
        );
        assert_eq!(
            *out[3].values,
            [("metablock-step".to_owned(), Value::UInt(u64::MAX))]
        );
    }

    #[test]
    fn a_full_block_refuses_and_long_keys_are_not_interned() {
        let block = MetaBlock::new();
        for i in 0..ROWS as u64 {
            assert!(block.push([i, i, 2, i]), "row {i}");
        }
        assert!(!block.push([0; 4]));
        assert_eq!(block.published(), ROWS);
        assert_eq!(intern(&"k".repeat(MAX_KEY_LEN + 1)), None);
    }
}
