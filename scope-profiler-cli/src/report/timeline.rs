//! The timeline of a report: every call of a file placed on its lane and
//! depth, then reduced to a bounded number of cells the page draws.
//!
//! A *track* is one depth of one lane (a thread of a rank; async tasks of a
//! rank are packed into as few lanes as their lifetimes allow). The page
//! draws a view at one *level* `L` of a pyramid whose bucket width is
//! `w_L = w_0 / 4^L` (`w_0`: the session over 1024): calls at least `w_L`
//! long are drawn one by one (kept in `classes`, by the coarsest level they
//! are drawn at), shorter ones as the buckets of width `w_L` they start in
//! (the region with the most time in the bucket, the number of calls, the
//! fraction of the bucket they fill); adjacent buckets of the same region
//! merge. The finest level is the deepest whose cells fit [`CELL_BUDGET`],
//! so the page stays small whatever the file holds; a file that fits shows
//! every call individually down to nanoseconds.

use std::collections::HashMap;

use scope_profiler::ProfileReader;

use crate::Failure;

/// At most this many cells (individual calls and buckets, every level) go
/// into the page: about 21 bytes each, 28 in base64.
pub(crate) const CELL_BUDGET: u64 = 450_000;

/// Levels of the pyramid at most (`w_0 / 4^15` is below a nanosecond for
/// any session under 1000 s).
const MAX_LEVELS: usize = 16;

/// Deepest depth drawn; deeper calls are drawn at this depth.
const MAX_DEPTH: u32 = 255;

/// Duration histogram of one region: counts per log bin, 4 bins per power
/// of two from 1 ns.
pub(crate) const BINS_PER_OCTAVE: f64 = 4.0;
const BINS: usize = 4 * 48;

/// One call as read from the file.
#[derive(Clone, Copy)]
struct Call {
    start: i64,
    dur: i64,
    region: u32,
}

/// Cells of one kind (individual calls or buckets), grouped by track:
/// track `t`'s cells are `offsets[t]..offsets[t + 1]`, by start.
#[derive(Default)]
pub(crate) struct Cells {
    pub offsets: Vec<u32>,
    pub start: Vec<f64>,
    pub dur: Vec<f32>,
    pub region: Vec<u32>,
    pub count: Vec<u32>,
    /// Fraction of the cell the calls fill, 0..=255.
    pub busy: Vec<u8>,
}

impl Cells {
    fn with_tracks(tracks: usize) -> Self {
        Cells {
            offsets: Vec::with_capacity(tracks + 1),
            ..Cells::default()
        }
    }

    fn push(&mut self, start: i64, dur: i64, region: u32, count: u32, busy: f64) {
        self.start.push(start as f64);
        self.dur.push(dur as f32);
        self.region.push(region);
        self.count.push(count);
        self.busy.push((busy.clamp(0.0, 1.0) * 255.0).round() as u8);
    }

    pub(crate) fn len(&self) -> usize {
        self.start.len()
    }
}

/// A lane of the timeline.
pub(crate) struct Lane {
    pub label: String,
    /// Tracks (depths) of the lane.
    pub depths: u32,
}

/// What the page's timeline and histograms need.
#[derive(Default)]
pub(crate) struct Timeline {
    /// Earliest start of any call, ns (times in cells are relative to it).
    pub t0: i64,
    pub span: i64,
    pub lanes: Vec<Lane>,
    /// Bucket width per level, ns.
    pub widths: Vec<f64>,
    /// Buckets per level.
    pub levels: Vec<Cells>,
    /// Individual calls per class (class `c`: drawn from level `c` on).
    pub classes: Vec<Cells>,
    /// Calls drawn individually at the finest level, and in all.
    pub calls_kept: u64,
    pub calls: u64,
    /// Per region id: histogram counts (empty for regions without calls).
    pub histograms: Vec<Vec<u64>>,
}

/// The histogram bin of a duration.
pub(crate) fn bin(dur: i64) -> usize {
    let d = (dur.max(1)) as f64;
    ((d.log2() * BINS_PER_OCTAVE) as usize).min(BINS - 1)
}

/// Reads every call of `reader` and builds the timeline.
pub(crate) fn build(reader: &ProfileReader) -> Result<Timeline, Failure> {
    let mut tl = Timeline {
        histograms: vec![Vec::new(); reader.region_names().len()],
        ..Timeline::default()
    };
    if reader.is_aggregate() || reader.event_count() == 0 {
        return Ok(tl);
    }
    // Calls per source lane (rank, thread, task).
    let mut lane_of: HashMap<(u32, i64, i64), usize> = HashMap::new();
    let mut keys: Vec<(u32, i64, i64)> = Vec::new();
    let mut calls: Vec<Vec<Call>> = Vec::new();
    let rows = reader.rows();
    for chunk in reader.chunks(1 << 18) {
        let chunk = chunk.map_err(|e| Failure(format!("{}: {e}", reader.path().display())))?;
        let row = &rows[chunk.row];
        let ev = &chunk.events;
        let hist = match tl.histograms.get_mut(row.region_id as usize) {
            Some(h) => h,
            None => continue,
        };
        if hist.is_empty() {
            hist.resize(BINS, 0);
        }
        for i in 0..ev.len() {
            let task = ev.task_ids.as_ref().map_or(-1, |t| t[i]);
            let key = (row.rank, ev.thread_ids[i], task.max(-1));
            let lane = *lane_of.entry(key).or_insert_with(|| {
                keys.push(key);
                calls.push(Vec::new());
                keys.len() - 1
            });
            let dur = ev.durations[i].max(0);
            hist[bin(dur)] += 1;
            calls[lane].push(Call {
                start: ev.start_ns[i],
                dur,
                region: row.region_id,
            });
        }
    }
    tl.calls = calls.iter().map(|c| c.len() as u64).sum();
    tl.t0 = calls
        .iter()
        .flat_map(|c| c.iter().map(|c| c.start))
        .min()
        .unwrap_or(0);
    let end = calls
        .iter()
        .flat_map(|c| c.iter().map(|c| c.start.saturating_add(c.dur)))
        .max()
        .unwrap_or(0);
    tl.span = (end - tl.t0).max(1);
    // Start order within each lane, an enclosing call before the calls it holds.
    for c in &mut calls {
        c.sort_by_key(|c| (c.start, std::cmp::Reverse(c.dur)));
    }
    let display = pack_lanes(reader, &keys, &calls, &mut tl.lanes);
    // Each display lane's calls in start order, with their depth.
    let mut tracks: Vec<Vec<Call>> = Vec::new();
    let mut first_track = Vec::with_capacity(display.len());
    for (l, sources) in display.iter().enumerate() {
        let mut depth_calls: Vec<Vec<Call>> = Vec::new();
        for &src in sources {
            let mut stack: Vec<i64> = Vec::new();
            // Taken, so each source lane is freed once its calls are placed:
            // the peak is the calls plus the largest lane, not twice the calls.
            for c in &std::mem::take(&mut calls[src]) {
                while stack.last().is_some_and(|&end| end <= c.start) {
                    stack.pop();
                }
                let depth = (stack.len() as u32).min(MAX_DEPTH);
                stack.push(c.start.saturating_add(c.dur));
                if depth_calls.len() <= depth as usize {
                    depth_calls.resize_with(depth as usize + 1, Vec::new);
                }
                depth_calls[depth as usize].push(*c);
            }
        }
        tl.lanes[l].depths = depth_calls.len() as u32;
        first_track.push(tracks.len());
        tracks.extend(depth_calls);
    }
    drop(calls);
    let w0 = tl.span as f64 / 1024.0;
    let widths: Vec<f64> = (0..MAX_LEVELS).map(|l| w0 / 4f64.powi(l as i32)).collect();
    let (classes, buckets) = pyramid(&tracks, &widths, tl.t0, CELL_BUDGET);
    tl.widths = widths[..buckets.len()].to_vec();
    tl.calls_kept = classes.iter().map(|c| c.len() as u64).sum();
    tl.classes = classes;
    tl.levels = buckets;
    Ok(tl)
}

/// The display lanes: each thread lane alone; the task lanes of a rank
/// packed, first come first placed, into as few lanes as their lifetimes
/// (first start to last end) allow. Returns the source lanes of each.
fn pack_lanes(
    reader: &ProfileReader,
    keys: &[(u32, i64, i64)],
    calls: &[Vec<Call>],
    out: &mut Vec<Lane>,
) -> Vec<Vec<usize>> {
    let ranks: std::collections::BTreeSet<u32> = keys.iter().map(|k| k.0).collect();
    let multi_rank = ranks.len() > 1;
    let thread_name = |t: i64| {
        reader
            .threads()
            .iter()
            .find(|th| th.index == t)
            .map_or_else(
                || match t {
                    ..0 => "main".to_owned(),
                    t => format!("thread {t}"),
                },
                |th| th.name.clone(),
            )
    };
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&i| (keys[i].0, keys[i].2 >= 0, keys[i].1, keys[i].2));
    let mut display: Vec<Vec<usize>> = Vec::new();
    // Per rank: the task lanes' (display index, end of their last task).
    let mut task_lanes: HashMap<u32, Vec<(usize, i64)>> = HashMap::new();
    let mut tasks: Vec<usize> = Vec::new();
    for &i in &order {
        let (rank, thread, task) = keys[i];
        let prefix = if multi_rank {
            format!("rank {rank} · ")
        } else {
            String::new()
        };
        if task < 0 {
            out.push(Lane {
                label: format!("{prefix}{}", thread_name(thread)),
                depths: 0,
            });
            display.push(vec![i]);
        } else {
            tasks.push(i);
        }
    }
    let first = |i: usize| calls[i].first().map_or(0, |c| c.start);
    let last = |i: usize| {
        calls[i]
            .iter()
            .map(|c| c.start.saturating_add(c.dur))
            .max()
            .unwrap_or(0)
    };
    tasks.sort_by_key(|&i| (keys[i].0, first(i)));
    for i in tasks {
        let rank = keys[i].0;
        let lanes = task_lanes.entry(rank).or_default();
        let (start, end) = (first(i), last(i));
        match lanes.iter_mut().find(|(_, free)| *free <= start) {
            Some((d, free)) => {
                display[*d].push(i);
                *free = end;
            }
            None => {
                let prefix = if multi_rank {
                    format!("rank {rank} · ")
                } else {
                    String::new()
                };
                out.push(Lane {
                    label: format!("{prefix}tasks {}", lanes.len() + 1),
                    depths: 0,
                });
                display.push(vec![i]);
                lanes.push((display.len() - 1, end));
            }
        }
    }
    display
}

/// The pyramid, level by level from the coarsest, while its cells fit
/// `budget`: per level `L`, the calls first drawn individually there (class
/// `L`) and the buckets of the calls shorter than `w_L`, adjacent buckets
/// of one region merged. Stops after the level at which every call is
/// drawn individually. Level 0 (at most 1024 buckets a track) is always
/// kept. Returns the classes and the levels, as many of each.
fn pyramid(tracks: &[Vec<Call>], widths: &[f64], t0: i64, budget: u64) -> (Vec<Cells>, Vec<Cells>) {
    let (mut classes, mut levels) = (Vec::new(), Vec::new());
    let mut used = 0u64;
    for l in 0..widths.len() {
        let limit = if l == 0 {
            u64::MAX
        } else {
            budget.saturating_sub(used)
        };
        let Some((individual, buckets, more)) = level(tracks, widths, l, t0, limit) else {
            break;
        };
        used += (individual.len() + buckets.len()) as u64;
        classes.push(individual);
        levels.push(buckets);
        if !more {
            break;
        }
    }
    (classes, levels)
}

/// Level `l` of the pyramid: the calls of class `l`, the buckets of the
/// shorter ones, and whether any call is shorter than `w_l` (a finer level
/// would show more); `None` once the cells pass `limit`.
fn level(
    tracks: &[Vec<Call>],
    widths: &[f64],
    l: usize,
    t0: i64,
    limit: u64,
) -> Option<(Cells, Cells, bool)> {
    let mut individual = Cells::with_tracks(tracks.len());
    let mut buckets = Cells::with_tracks(tracks.len());
    let mut more = false;
    let width = widths[l];
    for track in tracks {
        individual.offsets.push(individual.len() as u32);
        buckets.offsets.push(buckets.len() as u32);
        let mut open: Option<Open> = None;
        for c in track {
            let class = class_of(c.dur as f64, widths);
            if class == l {
                individual.push(c.start - t0, c.dur, c.region, 1, 1.0);
            }
            if class <= l {
                continue;
            }
            more = true;
            let index = ((c.start - t0) as f64 / width) as u64;
            if open.as_ref().is_some_and(|o| o.index != index) {
                if let Some(o) = open.take() {
                    close(&mut buckets, o, width);
                }
                if (individual.len() + buckets.len()) as u64 > limit {
                    return None;
                }
            }
            // A call shorter than a bucket fills the rest of its first
            // bucket and, past its end, the start of the next.
            let rel = (c.start - t0) as f64;
            let first = (c.dur as f64).min((index + 1) as f64 * width - rel);
            let o = open.get_or_insert_with(|| Open::new(index));
            o.count += 1;
            o.add(c.region, first);
            let rest = c.dur as f64 - first;
            if rest > 0.0 {
                if let Some(o) = open.replace(Open::new(index + 1)) {
                    close(&mut buckets, o, width);
                }
                if let Some(o) = open.as_mut() {
                    o.add(c.region, rest);
                }
            }
        }
        if let Some(o) = open {
            close(&mut buckets, o, width);
        }
    }
    individual.offsets.push(individual.len() as u32);
    buckets.offsets.push(buckets.len() as u32);
    ((individual.len() + buckets.len()) as u64 <= limit).then_some((individual, buckets, more))
}

/// The first level at which a call of `dur` ns is drawn individually
/// (`widths.len()`: never).
fn class_of(dur: f64, widths: &[f64]) -> usize {
    // A call shorter than the clock's resolution (0 ns) is drawn as 1 ns.
    let dur = dur.max(1.0);
    widths
        .iter()
        .position(|&w| dur >= w)
        .unwrap_or(widths.len())
}

/// A bucket being filled: its index, and time per region.
struct Open {
    index: u64,
    count: u32,
    busy: f64,
    by_region: Vec<(u32, f64)>,
}

impl Open {
    fn new(index: u64) -> Self {
        Open {
            index,
            count: 0,
            busy: 0.0,
            by_region: Vec::new(),
        }
    }

    /// `ns` of `region`'s time in the bucket.
    fn add(&mut self, region: u32, ns: f64) {
        self.busy += ns;
        match self.by_region.iter_mut().find(|(r, _)| *r == region) {
            Some((_, t)) => *t += ns,
            None => self.by_region.push((region, ns)),
        }
    }
}

/// Appends a finished bucket to `cells`, merged into the cell before it
/// when that one ends where it starts and has the same region.
fn close(cells: &mut Cells, o: Open, width: f64) {
    let region = o
        .by_region
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(0, |r| r.0);
    let start = o.index as f64 * width;
    let track_start = cells.offsets.last().copied().unwrap_or(0) as usize;
    if let Some(i) = cells.len().checked_sub(1).filter(|&i| i >= track_start) {
        let end = cells.start[i] + cells.dur[i] as f64;
        if cells.region[i] == region && (end - start).abs() < width * 0.01 {
            let busy_ns = cells.busy[i] as f64 / 255.0 * cells.dur[i] as f64 + o.busy;
            let dur = (start + width - cells.start[i]) as f32;
            cells.dur[i] = dur;
            cells.count[i] = cells.count[i].saturating_add(o.count);
            cells.busy[i] = ((busy_ns / dur as f64).clamp(0.0, 1.0) * 255.0).round() as u8;
            return;
        }
    }
    cells.start.push(start);
    cells.dur.push(width as f32);
    cells.region.push(region);
    cells.count.push(o.count);
    cells
        .busy
        .push(((o.busy / width).clamp(0.0, 1.0) * 255.0).round() as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn track(calls: &[(i64, i64, u32)]) -> Vec<Call> {
        calls
            .iter()
            .map(|&(start, dur, region)| Call { start, dur, region })
            .collect()
    }

    #[test]
    fn long_calls_are_individual_and_short_ones_merge_into_runs() {
        let widths = [100.0, 25.0];
        // One long call, then 8 short ones of region 1 back to back.
        let mut calls = vec![(0, 150, 0)];
        for i in 0..8 {
            calls.push((200 + i * 10, 10, 1));
        }
        let (classes, levels) = pyramid(&[track(&calls)], &widths, 0, 1000);
        assert_eq!(classes[0].len(), 1, "the 150 ns call from level 0 on");
        assert_eq!(classes[1].len(), 0);
        // Level 0: buckets 2 (200..300) holds all 8; one cell.
        assert_eq!(levels[0].len(), 1);
        assert_eq!(levels[0].count[0], 8);
        assert_eq!(levels[0].region[0], 1);
        // Level 1: the buckets of 25 ns from 200 to 300 (the last call ends
        // at 280) merged into one run.
        assert_eq!(levels[1].len(), 1, "{:?}", levels[1].start);
        assert_eq!(levels[1].count[0], 8);
        assert_eq!((levels[1].start[0], levels[1].dur[0]), (200.0, 100.0));
    }

    #[test]
    fn the_budget_bounds_the_levels() {
        let widths: Vec<f64> = (0..MAX_LEVELS).map(|l| 1e6 / 4f64.powi(l as i32)).collect();
        // Alternating regions: buckets merge only while they hold both.
        let many: Vec<(i64, i64, u32)> =
            (0..2_000_000).map(|i| (i * 5, 4, (i % 2) as u32)).collect();
        let (classes, levels) = pyramid(&[track(&many)], &widths, 0, 100_000);
        let cells: usize = classes.iter().chain(&levels).map(Cells::len).sum();
        assert!(
            cells <= 100_000 && levels.len() > 1,
            "{cells} cells, {} levels",
            levels.len()
        );
        assert!(levels.len() < MAX_LEVELS);
        let few = [(0, 4, 0), (10, 4, 0)];
        let (classes, levels) = pyramid(&[track(&few)], &widths, 0, 100_000);
        assert_eq!(
            levels.len(),
            class_of(4.0, &widths) + 1,
            "a small file goes down to its shortest call"
        );
        assert_eq!(classes.last().map(Cells::len), Some(2));
        // A 0 ns call is drawn individually once buckets are under 1 ns.
        let zero = [(0, 0, 0), (10, 1, 0)];
        let (classes, _) = pyramid(&[track(&zero)], &widths, 0, 100_000);
        assert_eq!(classes.iter().map(Cells::len).sum::<usize>(), 2);
    }
}
