//! The layout of a session's file, known at the cut: its rows, each
//! region's slots, and what the index rows tell of each region.

#![forbid(unsafe_code)]

use crate::lane::bump;
use crate::registry::RegionInfo;

/// Where every call of a plan goes: the rows (regions with calls, in
/// registration order) and each row's slots, with what the rows tell of
/// their regions. Known at the cut; the walk only reads it.
pub(super) struct Layout {
    /// The session region id of each index row (regions with calls, in
    /// registration order); see [`Plan::index_row`](super::Plan::index_row).
    pub(super) row_regions: Vec<u32>,
    /// First slot of each region's row, by session region id.
    pub(super) row_offset: Vec<u64>,
    /// Where each region is defined, by session region id.
    pub(super) regions: Vec<RegionInfo>,
    /// The source files of [`RegionInfo::file`].
    pub(super) files: Vec<&'static str>,
    /// Recorded calls per region, by session region id.
    pub(super) counts: Vec<u64>,
    /// Dropped calls per region, by session region id.
    pub(super) dropped: Vec<u64>,
    /// Number of events.
    pub(super) total: usize,
    /// Whether the `task_ids` column is written.
    pub(super) with_task_ids: bool,
    /// Whether the regions' source text goes into the rows.
    pub(super) capture_source: bool,
}

impl Layout {
    /// Completed calls per region, by session region id: recorded or dropped.
    pub(super) fn counts_with_dropped(&self) -> Vec<u64> {
        let mut counts = self.counts.clone();
        for (region, n) in self.dropped.iter().enumerate() {
            bump(&mut counts, region, *n);
        }
        counts
    }

    /// Number of index rows.
    pub(super) fn rows(&self) -> usize {
        self.row_regions.len()
    }

    /// The session region id of index row `row`; past the last row, none
    /// (`usize::MAX`).
    pub(super) fn region(&self, row: usize) -> usize {
        self.row_regions
            .get(row)
            .map_or(usize::MAX, |&r| r as usize)
    }

    /// The name of the region of index row `row` (the name the process
    /// interned: no copy).
    pub(super) fn region_name(&self, row: usize) -> &'static str {
        self.regions
            .get(self.region(row))
            .map_or("", |r| r.entry.name)
    }

    /// `(first slot, end slot)` of `row`; past the last row, none.
    pub(super) fn bounds(&self, row: usize) -> (u64, u64) {
        if row >= self.rows() {
            return (u64::MAX, u64::MAX);
        }
        let region = self.row_regions[row] as usize;
        let offset = self.row_offset.get(region).copied().unwrap_or(0);
        (
            offset,
            offset + self.counts.get(region).copied().unwrap_or(0),
        )
    }
}

/// The rows (the session region ids of the regions with calls, in
/// registration order) and each region's first slot (by session id).
pub(super) fn layout(regions: usize, counts: &[u64]) -> (Vec<u32>, Vec<u64>) {
    let used = counts.iter().filter(|&&n| n > 0).count();
    let mut rows = Vec::with_capacity(used);
    let mut row_offset = vec![0u64; regions];
    let mut offset = 0u64;
    for (region, (&count, first)) in counts.iter().zip(&mut row_offset).enumerate() {
        if count > 0 {
            *first = offset;
            rows.push(region as u32);
            offset += count;
        }
    }
    (rows, row_offset)
}
