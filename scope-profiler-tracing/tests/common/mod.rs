//! Helpers of the layer's tests: a subscriber per test, calls with their
//! parents read back from a profile, a layer counting enters.

#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use integration_tests::event_range;
use scope_profiler::Profile;
use tracing_core::span::Id;
use tracing_core::{Dispatch, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// One recorded call: region name, thread id, task id (-1 on a thread
/// lane), parent region name (None for a root).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Call {
    pub name: String,
    pub thread: i64,
    pub task: i64,
    pub parent: Option<String>,
}

/// Every call of `p`, sorted.
pub fn calls(p: &Profile) -> Vec<Call> {
    let mut region_of_event = vec![String::new(); p.events.len()];
    for row in &p.rows {
        for i in event_range(row) {
            region_of_event[i] = p.region_names[row.region_id as usize].clone();
        }
    }
    let by_call: HashMap<i64, usize> = p
        .events
        .call_ids
        .iter()
        .enumerate()
        .map(|(i, &c)| (c, i))
        .collect();
    let mut out: Vec<Call> = (0..p.events.len())
        .map(|i| Call {
            name: region_of_event[i].clone(),
            thread: p.events.thread_ids[i],
            task: p.events.task_ids.as_ref().map_or(-1, |t| t[i]),
            parent: by_call
                .get(&p.events.parent_ids[i])
                .map(|&j| region_of_event[j].clone()),
        })
        .collect();
    out.sort();
    out
}

/// (name, parent name) -> number of calls.
pub fn parent_counts(p: &Profile) -> BTreeMap<(String, Option<String>), u64> {
    let mut out = BTreeMap::new();
    for c in calls(p) {
        *out.entry((c.name, c.parent)).or_insert(0) += 1;
    }
    out
}

/// Builds the expectation of [`parent_counts`].
pub fn expect(pairs: &[(&str, Option<&str>, u64)]) -> BTreeMap<(String, Option<String>), u64> {
    pairs
        .iter()
        .map(|(n, p, c)| ((n.to_string(), p.map(str::to_string)), *c))
        .collect()
}

/// Counts `on_enter` per span name, as the subscriber delivers them: what
/// the thread-lane mode must record one call for each.
#[derive(Clone, Default)]
pub struct EnterCounter(pub Arc<Mutex<BTreeMap<String, u64>>>);

impl EnterCounter {
    pub fn get(&self, name: &str) -> u64 {
        self.0.lock().unwrap().get(name).copied().unwrap_or(0)
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for EnterCounter {
    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        if let Some(meta) = ctx.metadata(id) {
            *self
                .0
                .lock()
                .unwrap()
                .entry(meta.name().to_string())
                .or_insert(0) += 1;
        }
    }
}

/// A tokio runtime with `workers` threads whose default subscriber is
/// `dispatch` (as `init()` would make it for the whole program).
pub fn runtime(workers: usize, dispatch: &Dispatch) -> tokio::runtime::Runtime {
    let dispatch = dispatch.clone();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .on_thread_start(move || {
            // Kept for the thread's lifetime.
            std::mem::forget(tracing::dispatcher::set_default(&dispatch));
        })
        .build()
        .unwrap()
}
