//! The file of an aggregation-mode session (the threads' tables summed),
//! and the region counters of any session.

#![forbid(unsafe_code)]

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::Span;
use super::tables::{complete_regions, health_metadata};
use crate::calltree::{CallTree, TreeBuilder};
use crate::lane::{AggTable, CounterTable};
use crate::profile::{AggregateRow, RecordingHealth, RegionCounters, RegionStatistics};
use crate::registry::RegionTable;
use crate::store::Store;
use crate::sync::lock;
use crate::value::Value;

/// The file of an aggregation-mode session: one row per region with calls
/// (threads summed), in registration order.
pub struct AggregatePlan {
    pub metadata: Vec<(String, Value)>,
    /// The region of each row, by name.
    pub names: Vec<&'static str>,
    /// `region_id` is the row's index in `names`.
    pub rows: Vec<AggregateRow>,
    /// Calls per session region id.
    pub counts: Vec<u64>,
    pub summary: CallTree,
    /// Per region, the counters (see [`Plan::counters`](super::Plan::counters)).
    pub counters: Vec<RegionCounters>,
    /// What the recording did not keep: here, the threads whose perf events
    /// could not be opened (nothing spills or drops in this mode).
    pub health: RecordingHealth,
}

impl AggregatePlan {
    /// The statistics of each row (no percentiles: the calls' durations
    /// were not kept).
    pub fn statistics(&self) -> Vec<RegionStatistics> {
        self.rows
            .iter()
            .zip(&self.names)
            .map(|(row, &name)| RegionStatistics {
                name,
                calls: row.num_calls,
                total_ns: row.total,
                own_ns: row.exclusive,
                min_ns: row.minimum,
                max_ns: row.maximum,
                p50_ns: 0,
                p95_ns: 0,
                p99_ns: 0,
                exact: false,
            })
            .collect()
    }
}

/// Plans the aggregate file of everything `store`'s threads added up so far.
pub fn plan_aggregate(
    store: &Arc<Store>,
    table: &RegionTable,
    span: Span,
    metadata: Vec<(String, Value)>,
) -> AggregatePlan {
    let conv = span.conv.clone();
    let ns = |ticks: u64| conv.ns(span.start.ticks.wrapping_add(ticks)) - span.start.ns;
    // Tables first, then regions: every region a table counts is registered.
    let tables: Vec<Arc<AggTable>> = lock(&store.lanes)
        .iter()
        .filter_map(|l| lock(&l.aggregates).clone())
        .collect();
    let mut sums: Vec<(u64, u128, u64, u64, i128)> = Vec::new();
    for t in &tables {
        for (region, e) in t.entries.iter().enumerate() {
            let count = e.count.load(Ordering::Relaxed);
            if count == 0 {
                continue;
            }
            if sums.len() <= region {
                sums.resize(region + 1, (0, 0, u64::MAX, 0, 0));
            }
            let s = &mut sums[region];
            s.0 += count;
            s.1 += e.total.load(Ordering::Relaxed) as u128;
            s.2 = s.2.min(e.min.load(Ordering::Relaxed));
            s.3 = s.3.max(e.max.load(Ordering::Relaxed));
            s.4 += e.exclusive.load(Ordering::Relaxed) as i64 as i128;
        }
    }
    let regions = complete_regions(table, sums.len());
    let mut counts = vec![0u64; regions.len()];
    let mut names = Vec::new();
    let mut rows = Vec::new();
    let mut summary = TreeBuilder::with_capacity(sums.len());
    for (region, &(calls, total, min, max, own)) in sums.iter().enumerate() {
        if calls == 0 {
            continue;
        }
        counts[region] = calls;
        // Sums of ticks convert as durations do (the map is linear); a sum
        // past u64 ticks is clamped.
        let total_ns = ns(u64::try_from(total).unwrap_or(u64::MAX));
        let own_ns = ns(u64::try_from(own.max(0)).unwrap_or(u64::MAX));
        summary.totals(region as u32, calls, total_ns, own_ns);
        rows.push(AggregateRow {
            region_id: names.len() as u32,
            rank: 0,
            num_calls: calls,
            total: total_ns,
            exclusive: own_ns,
            minimum: ns(min),
            maximum: ns(max),
        });
        names.push(regions.get(region).map_or("", |r| r.entry.name));
    }
    let health = RecordingHealth {
        perf_events_not_counted: lock(&store.perf_failures).clone(),
        ..RecordingHealth::default()
    };
    let mut metadata = metadata;
    metadata.extend(health_metadata(&health, span.start.ns));
    AggregatePlan {
        metadata,
        health,
        names,
        rows,
        counts,
        summary: summary.finish(regions.iter().map(|r| r.entry).collect()),
        counters: counter_totals(store, table),
    }
}

/// Per region with counted calls, in session region id order, the counters
/// every thread of `store` added up (see `crate::counters`); empty if the
/// session counts nothing.
pub fn counter_totals(store: &Store, table: &RegionTable) -> Vec<RegionCounters> {
    let Some(set) = store.counters() else {
        return Vec::new();
    };
    let width = set.width();
    // Tables first, then regions: every region a table counts is registered.
    let tables: Vec<Arc<CounterTable>> = lock(&store.counter_tables).clone();
    let mut sums: Vec<Vec<u64>> = Vec::new();
    for t in &tables {
        for region in 0..t.regions() {
            let Some(row) = t.row(region) else { continue };
            if row[0].load(Ordering::Relaxed) == 0 {
                continue;
            }
            if sums.len() <= region {
                sums.resize(region + 1, vec![0; 1 + 2 * width]);
            }
            for (s, v) in sums[region].iter_mut().zip(row) {
                *s = s.wrapping_add(v.load(Ordering::Relaxed));
            }
        }
    }
    let regions = complete_regions(table, sums.len());
    sums.iter()
        .enumerate()
        .filter(|(_, s)| s[0] > 0)
        .map(|(region, s)| RegionCounters {
            name: regions.get(region).map_or("", |r| r.entry.name).to_owned(),
            rank: 0,
            num_calls: s[0],
            event_names: set.names.clone(),
            inclusive: s[1..=width].to_vec(),
            // Exclusive: inclusive minus the direct children's inclusive.
            exclusive: (0..width)
                .map(|i| s[1 + i].wrapping_sub(s[1 + width + i]))
                .collect(),
        })
        .collect()
}
