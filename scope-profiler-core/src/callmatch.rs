//! Matching a thread lane's call metadata (its `MetaEntry`s) to its calls,
//! for the file's `event_metadata`: pure, lanes' entries and records in,
//! the entries of each call out.
//!
//! An interval scope is for the calls inside it; scopes on one thread nest
//! (their guards end in reverse order), so sorted by start (the longer
//! first on a tie) each has the nearest enclosing one as its parent, and
//! the scopes around a call are the chain up from the last scope starting
//! at or before it. An outcome (or an annotation) is for the one call at
//! its depth open at its instant (calls at one depth of a thread never
//! overlap). A keyed entry (an instrumented future's outcome) is for the
//! one call of its region that started at its instant, on any lane.

use std::sync::Arc;

use crate::lane::KeyedEntry;
use crate::lanemeta::{MetaEntry, MetaScope};
use crate::record::Record;
use crate::value::{CallMetadata, Value};

const NO_PARENT: u32 = u32::MAX;

/// A lane's entries, ready to be matched.
pub(crate) struct LaneMeta {
    /// `(start, end, values)`, by start, the longer first on a tie.
    intervals: Vec<(u64, u64, Arc<CallMetadata>)>,
    /// The nearest enclosing interval of each, or [`NO_PARENT`].
    parents: Vec<u32>,
    /// `(depth, at, values)`, in that order.
    outcomes: Vec<(u32, u64, Arc<CallMetadata>)>,
}

impl LaneMeta {
    /// `None` when the lane has no entries.
    pub(crate) fn new(entries: &[MetaEntry]) -> Option<LaneMeta> {
        if entries.is_empty() {
            return None;
        }
        let mut intervals = Vec::new();
        let mut outcomes = Vec::new();
        for e in entries {
            match e.scope {
                MetaScope::Interval { start, end } => {
                    intervals.push((start, end, Arc::clone(&e.values)))
                }
                MetaScope::Call { depth, at } => outcomes.push((depth, at, Arc::clone(&e.values))),
            }
        }
        intervals.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        outcomes.sort_by_key(|o| (o.0, o.1));
        let mut parents = Vec::with_capacity(intervals.len());
        let mut open: Vec<u32> = Vec::new();
        for (i, &(start, end, _)) in intervals.iter().enumerate() {
            while let Some(&top) = open.last() {
                let (s, e, _) = &intervals[top as usize];
                if *s <= start && end <= *e {
                    break;
                }
                open.pop();
            }
            parents.push(open.last().copied().unwrap_or(NO_PARENT));
            open.push(i as u32);
        }
        Some(LaneMeta {
            intervals,
            parents,
            outcomes,
        })
    }

    /// The entries for call `r`, outermost scope first and its outcome
    /// last, appended to `out`.
    pub(crate) fn matches(&self, r: &Record, out: &mut Vec<Arc<CallMetadata>>) {
        let first = out.len();
        let last_before = self.intervals.partition_point(|i| i.0 <= r.start);
        let mut at = last_before.checked_sub(1).map_or(NO_PARENT, |i| i as u32);
        while at != NO_PARENT {
            let (start, end, values) = &self.intervals[at as usize];
            if *start <= r.start && r.end <= *end {
                out.push(Arc::clone(values));
            }
            at = self.parents[at as usize];
        }
        out[first..].reverse();
        let i = self
            .outcomes
            .partition_point(|o| (o.0, o.1) < (r.depth(), r.start));
        // Every entry of this call (annotations, then its outcome), in time.
        for (_, _, values) in self.outcomes[i..]
            .iter()
            .take_while(|(depth, when, _)| *depth == r.depth() && *when <= r.end)
        {
            out.push(Arc::clone(values));
        }
    }
}

/// The session's [`KeyedEntry`]s, ready to be matched to the records of
/// every lane.
pub(crate) struct KeyedMeta {
    /// `(region, start, values)`, in that order (entries of one call in
    /// the order they were added).
    entries: Vec<(u32, u64, Arc<CallMetadata>)>,
}

impl KeyedMeta {
    /// `None` when there are no entries.
    pub fn new(entries: &[KeyedEntry]) -> Option<KeyedMeta> {
        if entries.is_empty() {
            return None;
        }
        let mut entries: Vec<_> = entries
            .iter()
            .map(|e| (e.region, e.start, Arc::clone(&e.values)))
            .collect();
        // Stable: the entries of one call keep their order.
        entries.sort_by_key(|e| (e.0, e.1));
        Some(KeyedMeta { entries })
    }

    /// The entries for call `r`, appended to `out`.
    pub(crate) fn matches(&self, r: &Record, out: &mut Vec<Arc<CallMetadata>>) {
        let key = (r.region, r.start);
        let i = self.entries.partition_point(|e| (e.0, e.1) < key);
        for (_, _, values) in self.entries[i..].iter().take_while(|e| (e.0, e.1) == key) {
            out.push(Arc::clone(values));
        }
    }
}

/// One call's metadata from its entries: keys in first-set order, a later
/// entry's value winning (as Python's `dict.update`).
pub(crate) fn merge<'a>(entries: impl IntoIterator<Item = &'a CallMetadata>) -> CallMetadata {
    let mut merged: Vec<(String, Value)> = Vec::new();
    for entry in entries {
        for (key, value) in entry.iter() {
            match merged.iter_mut().find(|(k, _)| k == key) {
                Some(slot) => slot.1 = value.clone(),
                None => merged.push((key.clone(), value.clone())),
            }
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(scope: MetaScope, key: &str, v: i64) -> MetaEntry {
        MetaEntry {
            scope,
            values: Arc::new(vec![(key.to_owned(), Value::Int(v))]),
        }
    }

    fn call(start: u64, end: u64, depth: u32) -> Record {
        Record::new(start, end, 0, depth)
    }

    fn keys(meta: &LaneMeta, r: Record) -> CallMetadata {
        let mut out = Vec::new();
        meta.matches(&r, &mut out);
        merge(out.iter().map(|e| &**e))
    }

    #[test]
    fn nested_scopes_and_outcomes_reach_exactly_their_calls() {
        use MetaScope::*;
        let entries = [
            entry(Interval { start: 10, end: 20 }, "inner", 1),
            entry(Interval { start: 0, end: 100 }, "outer", 0),
            entry(Interval { start: 30, end: 60 }, "inner", 2),
            entry(Call { depth: 1, at: 45 }, "status", 7),
            entry(Call { depth: 1, at: 42 }, "status", 6),
            entry(Call { depth: 1, at: 44 }, "note", 5),
            entry(Interval { start: 30, end: 60 }, "same", 3),
        ];
        let meta = LaneMeta::new(&entries).unwrap();
        let v = |k: &str, v: i64| (k.to_owned(), Value::Int(v));
        assert_eq!(keys(&meta, call(12, 18, 0)), [v("outer", 0), v("inner", 1)]);
        assert_eq!(keys(&meta, call(25, 28, 0)), [v("outer", 0)]);
        // Both equal scopes, and the outcome of the depth-1 call open at 45.
        assert_eq!(
            keys(&meta, call(40, 50, 1)),
            [
                v("outer", 0),
                v("inner", 2),
                v("same", 3),
                v("status", 7),
                v("note", 5)
            ]
        );
        assert_eq!(keys(&meta, call(40, 50, 2)).len(), 3); // not its depth
        assert!(keys(&meta, call(90, 110, 0)).is_empty()); // ends outside
        assert!(keys(&meta, call(150, 160, 0)).is_empty());
    }

    #[test]
    fn keyed_entries_reach_the_call_of_their_region_and_start_only() {
        let keyed = |region, start, key: &str| KeyedEntry {
            region,
            start,
            values: Arc::new(vec![(key.to_owned(), Value::Int(0))]),
        };
        let meta = KeyedMeta::new(&[
            keyed(2, 40, "second"),
            keyed(1, 40, "first"),
            keyed(2, 40, "again"),
        ])
        .unwrap();
        let of = |region, start, depth| {
            let mut out = Vec::new();
            let r = Record::new(start, start + 100, region, depth);
            meta.matches(&r, &mut out);
            merge(out.iter().map(|e| &**e))
                .into_iter()
                .map(|(k, _)| k)
                .collect::<Vec<_>>()
        };
        // At any depth; both entries of one call, in order.
        assert_eq!(of(2, 40, 0), ["second", "again"]);
        assert_eq!(of(2, 40, 3), ["second", "again"]);
        assert_eq!(of(1, 40, 1), ["first"]);
        // Another start or region: not that call (even if open at 40).
        assert!(of(2, 39, 0).is_empty());
        assert!(of(3, 40, 0).is_empty());
        assert!(KeyedMeta::new(&[]).is_none());
    }

    #[test]
    fn later_values_win_and_keep_the_first_position() {
        let a = Arc::new(vec![
            ("step".to_owned(), Value::Int(1)),
            ("phase".to_owned(), Value::from("a")),
        ]);
        let b = Arc::new(vec![("step".to_owned(), Value::Int(2))]);
        assert_eq!(
            merge([&a, &b].map(|e| &**e)),
            [
                ("step".to_owned(), Value::Int(2)),
                ("phase".to_owned(), Value::from("a"))
            ]
        );
    }
}
