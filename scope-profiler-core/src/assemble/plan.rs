//! The [`Plan`] of a session's file, made from a cut of every lane: what
//! the file says about the session, the layout of its rows, and what the
//! walk reads when the file is written.

#![forbid(unsafe_code)]

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use super::counter_totals;
use super::layout::{Layout, layout};
use super::place::Walked;
use super::samples::Sampled;
use super::tables::{
    complete_regions, health_metadata, sampling_metadata, task_info, task_table, thread_info,
};
use super::walk::WalkInput;
use crate::callmatch::KeyedMeta;
use crate::clock::{Anchor, TickConverter};
use crate::error::Error;
use crate::lane::{LaneCut, LaneKind, bump};
use crate::placement;
use crate::profile::{
    CallPath, DroppedCalls, RecordingHealth, RegionCounters, RegionStatistics, TaskInfo, ThreadInfo,
};
use crate::registry::{self, RegionTable};
use crate::sampling::SampleCut;
use crate::sink::{self, IndexRow};
use crate::store::Store;
use crate::sync::lock;
use crate::value::Value;

/// Everything needed to write a session's file: what it tells of the
/// session, the layout of its rows, and the cut of every lane, walked when
/// the file is written.
pub struct Plan {
    // What the file tells of the session, known at the cut.
    pub metadata: Vec<(String, Value)>,
    pub threads: Vec<ThreadInfo>,
    pub tasks: Vec<TaskInfo>,
    /// Spilling and dropped calls, as of the cut.
    pub health: RecordingHealth,
    /// Per region, the counters the threads added up (a session that
    /// counts allocations or perf events).
    pub counters: Vec<RegionCounters>,
    /// The rows and each call's slot, known at the cut.
    pub(super) layout: Layout,
    /// What the walk reads.
    pub(super) walk: WalkInput,
    /// The memory the placed calls may take, and where they go past it.
    pub(super) budget: Budget,
    // Filled in when the file is written.
    /// What the walk adds to the index rows (set by the walk).
    pub(super) walked: Walked,
    /// Each row's statistics, percentiles included (set when the events are
    /// emitted).
    pub statistics: Vec<RegionStatistics>,
    /// Every lane's call paths (set by the walk; `None` past
    /// `MAX_CALL_PATHS`).
    pub call_paths: Option<Vec<CallPath>>,
    /// The samples taken up to the cut, if the session samples (given to
    /// calls by the walk).
    pub(super) sample_cut: Option<SampleCut>,
    /// The samples, each given to the innermost call open at its time (set
    /// by the walk).
    pub sampled: Option<Sampled>,
}

/// The memory the placed calls may hold while the file is written, and
/// where they go past it.
pub(super) struct Budget {
    /// Bytes the placement may hold in memory.
    pub(super) bytes: usize,
    /// Where the scratch files go, past the budget.
    pub(super) dir: PathBuf,
}

impl Plan {
    /// Completed calls per region, by session region id: recorded or dropped.
    pub fn counts_with_dropped(&self) -> Vec<u64> {
        self.layout.counts_with_dropped()
    }

    /// Number of index rows.
    pub fn rows(&self) -> usize {
        self.layout.rows()
    }

    /// The name of the region of index row `row`: the file's region name
    /// `row` (the name the process interned: no copy).
    pub fn region_name(&self, row: usize) -> &'static str {
        self.layout.region_name(row)
    }

    /// Index row `row`, but its statistics (the sink receives them while
    /// the events are written); the exclusive total is known once the
    /// events are written.
    pub fn index_row(&self, row: usize) -> IndexRow<'_> {
        let layout = &self.layout;
        let region = layout.row_regions.get(row).map_or(0, |&r| r as usize);
        let info = layout.regions.get(region);
        let file = info.map_or("", |i| {
            layout.files.get(i.file as usize).copied().unwrap_or("")
        });
        IndexRow {
            region_id: row as u32,
            rank: 0,
            event_offset: layout.row_offset.get(region).copied().unwrap_or(0),
            event_count: layout.counts.get(region).copied().unwrap_or(0),
            source_file: file,
            source_line: match info {
                Some(i) if !file.is_empty() => i.line as i64,
                _ => -1,
            },
            exclusive: self.walked.exclusive.get(region).copied().unwrap_or(0),
            tags: match info {
                Some(i) if !i.entry.tags().is_empty() => {
                    Cow::Owned(sink::tags_json(i.entry.tags()))
                }
                _ => Cow::Borrowed("[]"),
            },
            source_text: match info {
                Some(i) if layout.capture_source => i.entry.source_text(),
                _ => "",
            },
            event_metadata: match self.walked.row_metadata.get(&(row as u32)) {
                Some(json) => Cow::Borrowed(json.as_str()),
                None => Cow::Borrowed("[]"),
            },
        }
    }

    /// Whether [`Plan::emit`] goes through scratch columns.
    pub fn emits_through_scratch(&self) -> bool {
        placement::needs_scratch(self.layout.total, self.budget.bytes)
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.layout.total
    }

    /// Whether the plan has no event.
    pub fn is_empty(&self) -> bool {
        self.layout.total == 0
    }

    /// Whether the `task_ids` column is written.
    pub fn with_task_ids(&self) -> bool {
        self.layout.with_task_ids
    }
}

/// The session's start, the instant of the cut, and the conversion of its
/// ticks (`Session::converter`).
#[derive(Clone)]
pub struct Span {
    pub start: Anchor,
    pub end: Anchor,
    pub conv: TickConverter,
}

/// Plans the file of everything `store` holds now: a cut of every lane and
/// the layout of the rows; `metadata` gets the recording's health added.
/// The calls are walked, within `budget` bytes, when the file is written,
/// with scratch files (past the budget) in `dir`.
pub fn plan(
    store: &Arc<Store>,
    table: &RegionTable,
    span: Span,
    mut metadata: Vec<(String, Value)>,
    budget: usize,
    dir: PathBuf,
    capture_source: bool,
) -> Result<Plan, Error> {
    let conv = span.conv.clone();
    // Lanes first, then regions: every region a cut record uses is
    // registered (its id was published with Release and read with Acquire
    // before the record was made).
    // A spliced lane is read in the lane it was placed in.
    let lanes: Vec<LaneCut> = lock(&store.lanes)
        .iter()
        .filter(|l| !l.is_spliced())
        .map(|l| l.cut())
        .collect();
    // The samples up to the cut's end: a call that ended before it holds
    // only samples taken before it.
    let sample_cut = store
        .sampling()
        .map(|s| s.cut(u64::try_from(span.end.ns).unwrap_or(0)));
    // After the lanes: a keyed entry is added before its call's record.
    let keyed = KeyedMeta::new(&lock(&store.keyed_metadata));
    let (tasks, task_pos) = task_table(&lanes);

    let mut counts = Vec::new();
    let mut dropped = Vec::new();
    let mut dropped_ticks = Vec::new();
    for lane in &lanes {
        for (region, n) in lane.counts.iter().enumerate() {
            bump(&mut counts, region, *n);
        }
        for (region, d) in lane.dropped.iter().enumerate() {
            bump(&mut dropped, region, d.calls);
            bump(&mut dropped_ticks, region, d.ticks);
        }
    }
    let used = counts.len().max(dropped.len());
    let regions = complete_regions(table, used);
    counts.resize(regions.len(), 0);

    let (row_regions, row_offset) = layout(regions.len(), &counts);
    let total = counts.iter().sum::<u64>() as usize;
    let name = |region: usize| regions.get(region).map_or("", |r| r.entry.name);
    let origin = span.start.ns;
    let health = RecordingHealth {
        spilled_bytes: store.spilled_bytes(),
        spill_error: store.spill_stop().map(|s| s.message.clone()),
        dropped: dropped
            .iter()
            .zip(&dropped_ticks)
            .enumerate()
            .filter(|(_, (n, _))| **n > 0)
            .map(|(region, (&calls, &ticks))| DroppedCalls {
                name: name(region).to_owned(),
                num_calls: calls,
                // Durations add up on the linear tick-to-ns map.
                total: conv.ns(span.start.ticks + ticks) - origin,
            })
            .collect(),
        events_stopped_ns: store.first_drop().map(|t| conv.ns(t) - origin),
        // Known to the session, not to the lanes: `session::plan` sets it.
        traced_outside_entrypoints: None,
        perf_events_not_counted: lock(&store.perf_failures).clone(),
    };
    metadata.extend(health_metadata(&health, origin));
    if let Some(cut) = &sample_cut {
        metadata.extend(sampling_metadata(cut));
    }
    Ok(Plan {
        metadata,
        threads: lanes
            .iter()
            .filter(|l| l.lane.kind == LaneKind::Thread)
            .map(|l| thread_info(&l.lane, &conv, origin))
            .collect(),
        tasks: tasks
            .iter()
            .enumerate()
            .map(|(i, t)| task_info(i, t, &conv, origin, name(t.region as usize)))
            .collect(),
        layout: Layout {
            row_regions,
            row_offset,
            regions,
            files: registry::files(),
            counts,
            dropped,
            total,
            with_task_ids: !tasks.is_empty(),
            capture_source,
        },
        counters: counter_totals(store, table),
        health,
        walk: WalkInput {
            conv,
            store: Arc::clone(store),
            lanes,
            task_pos,
            keyed,
        },
        budget: Budget { bytes: budget, dir },
        walked: Walked::default(),
        statistics: Vec::new(),
        call_paths: None,
        sample_cut,
        sampled: None,
    })
}
