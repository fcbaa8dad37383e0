//! What the index rows get from the walk and the events: each row's start
//! deltas and statistics ([`RowStats`]), and the `event_metadata` JSON of
//! the rows whose calls have metadata.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::sync::Arc;

use super::layout::Layout;
use crate::callmatch;
use crate::error::Error;
use crate::histogram::{self, LogHistogram};
use crate::profile::{RegionStatistics, StatsAccumulator};
use crate::sink::EventSink;
use crate::value::{self, CallMetadata};

/// The `event_metadata` JSON of each row of `layout` that has calls with
/// metadata, from `(slot, entry)` pairs in slot order.
pub(super) fn rows_metadata(
    layout: &Layout,
    call_meta: &[(u64, Arc<CallMetadata>)],
) -> HashMap<u32, String> {
    let mut rows = HashMap::new();
    let mut next = 0;
    while next < call_meta.len() {
        let slot = call_meta[next].0;
        // The row holding `slot`: rows are in slot order.
        let row = layout.row_regions.partition_point(|&region| {
            let offset = layout.row_offset.get(region as usize).copied().unwrap_or(0);
            offset <= slot
        }) - 1;
        let region = layout.row_regions[row] as usize;
        let offset = layout.row_offset[region];
        let count = layout.counts.get(region).copied().unwrap_or(0);
        // One object per call of the row, `{}` for a call without.
        let mut json = String::from("[");
        for slot in offset..offset + count {
            if slot > offset {
                json.push_str(", ");
            }
            let same = call_meta[next..].partition_point(|(s, _)| *s == slot);
            let entries = call_meta[next..next + same].iter().map(|(_, e)| &**e);
            value::write_json_object(&mut json, &callmatch::merge(entries));
            next += same;
        }
        json.push(']');
        rows.insert(row as u32, json);
    }
    rows
}

/// Per-row statistics and start deltas, fed one event at a time in file
/// order: one accumulator, for the row being filled, whose statistics go to
/// the sink when the row's last event has been added.
pub(super) struct RowStats<'a> {
    layout: &'a Layout,
    /// Exclusive ns per session region id (set by the walk).
    exclusive: &'a [i64],
    /// `(first slot, end slot)` of the row being filled.
    bounds: (u64, u64),
    row: usize,
    acc: StatsAccumulator,
    previous_start: i64,
    /// The row's durations, for exact percentiles, while they fit `cap`.
    durations: Vec<i64>,
    cap: usize,
    /// The row's durations once they did not fit (percentiles within
    /// [`histogram::RELATIVE_ERROR`]).
    hist: Option<LogHistogram>,
    /// The statistics of the rows closed so far.
    statistics: Vec<RegionStatistics>,
}

impl<'a> RowStats<'a> {
    /// The statistics of `layout`'s rows, whose calls' exclusive times are
    /// `exclusive` (by session region id), with `budget` bytes to hold
    /// them in.
    pub(super) fn new(layout: &'a Layout, exclusive: &'a [i64], budget: usize) -> RowStats<'a> {
        RowStats {
            layout,
            exclusive,
            bounds: layout.bounds(0),
            row: 0,
            acc: StatsAccumulator::default(),
            previous_start: 0,
            durations: Vec::new(),
            // An eighth of the walk's budget holds one row's durations.
            cap: (budget / 8 / 8).max(1 << 16),
            hist: None,
            statistics: Vec::with_capacity(layout.rows()),
        }
    }

    /// Adds the event at `slot` (slots come in ascending order, each row's
    /// events back to back); returns its start as the file stores it:
    /// absolute for a row's first event, else the gap to the previous one.
    pub(super) fn add(
        &mut self,
        sink: &mut dyn EventSink,
        slot: u64,
        start: i64,
        duration: i64,
    ) -> Result<i64, Error> {
        while slot >= self.bounds.1 && self.row < self.layout.rows() {
            self.close_row(sink)?;
        }
        let delta = if slot == self.bounds.0 {
            start
        } else {
            start.wrapping_sub(self.previous_start)
        };
        self.previous_start = start;
        self.acc.add(start, duration);
        match &mut self.hist {
            Some(hist) => hist.add(duration),
            None if self.durations.len() < self.cap => self.durations.push(duration),
            None => {
                let mut hist = LogHistogram::default();
                for &d in &self.durations {
                    hist.add(d);
                }
                hist.add(duration);
                self.durations = Vec::new();
                self.hist = Some(hist);
            }
        }
        Ok(delta)
    }

    /// Hands the statistics of the row being filled to the sink and moves
    /// to the next row.
    fn close_row(&mut self, sink: &mut dyn EventSink) -> Result<(), Error> {
        let acc = std::mem::take(&mut self.acc);
        let stats = acc.finish();
        sink.row_stats(&stats)?;
        let calls = self.bounds.1.saturating_sub(self.bounds.0);
        let (p50, p95, p99) = match self.hist.take() {
            Some(hist) => {
                let q = |q| hist.quantile(q, calls, stats.minimum, stats.maximum);
                (q(0.50), q(0.95), q(0.99))
            }
            None => exact_percentiles(&mut self.durations),
        };
        self.statistics.push(RegionStatistics {
            name: self.layout.region_name(self.row),
            calls,
            total_ns: stats.total,
            own_ns: self
                .exclusive
                .get(self.layout.region(self.row))
                .copied()
                .unwrap_or(0),
            min_ns: stats.minimum,
            max_ns: stats.maximum,
            p50_ns: p50,
            p95_ns: p95,
            p99_ns: p99,
            exact: calls as usize <= self.cap,
        });
        self.durations.clear();
        self.row += 1;
        self.bounds = self.layout.bounds(self.row);
        Ok(())
    }

    /// Closes the rows left (the last one, after its last event); the
    /// statistics of every row.
    pub(super) fn finish(
        mut self,
        sink: &mut dyn EventSink,
    ) -> Result<Vec<RegionStatistics>, Error> {
        while self.row < self.layout.rows() {
            self.close_row(sink)?;
        }
        Ok(self.statistics)
    }
}

/// p50, p95 and p99 of `durations` (nearest rank, as numpy's
/// `inverted_cdf`), in linear time; 0s when empty.
fn exact_percentiles(durations: &mut [i64]) -> (i64, i64, i64) {
    let n = durations.len() as u64;
    if n == 0 {
        return (0, 0, 0);
    }
    let at = |q| histogram::rank(q, n) as usize - 1;
    let (i50, i95, i99) = (at(0.50), at(0.95), at(0.99));
    let (_, &mut p50, upper) = durations.select_nth_unstable(i50);
    // p95 and p99 are in the part above p50.
    let p95 = if i95 == i50 {
        p50
    } else {
        *upper.select_nth_unstable(i95 - i50 - 1).1
    };
    let upper = &mut durations[i95 + 1..];
    let p99 = if i99 == i95 {
        p95
    } else {
        *upper.select_nth_unstable(i99 - i95 - 1).1
    };
    (p50, p95, p99)
}
