//! The timeline of a report: every call of a file placed on its lane and
//! depth, reduced as it streams by to a bounded number of cells the page
//! draws (the calls come from the call tree's walk, `Builder::call`, in
//! bounded memory: a first pass over the events gives the session's span,
//! the lanes' lifetimes and the histograms; no call is kept).
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

use scope_profiler_reader::ProfileReader;

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

/// Per region id, the histogram of its calls' durations (bins of
/// [`bin`]; empty for a region without calls): one pass over the events.
pub(crate) fn region_histograms(reader: &ProfileReader) -> Result<Vec<Vec<u64>>, Failure> {
    Ok(survey(reader)?.histograms)
}

/// The lower edge of bin `b` (the inverse of [`bin`]), ns.
pub(crate) fn bin_start(b: usize) -> f64 {
    (b as f64 / BINS_PER_OCTAVE).exp2()
}

/// Cells count between two checks of the budget.
const CHECK_EVERY: u64 = 4096;

/// A source lane: a thread or a task of a rank (a task's thread is -1).
type LaneKey = (u32, i64, i64);

/// The first pass over the events: the session's span, each source lane's
/// first start and last end, the histograms and the calls.
pub(crate) struct Survey {
    t0: i64,
    end: i64,
    calls: u64,
    lanes: HashMap<LaneKey, (i64, i64)>,
    histograms: Vec<Vec<u64>>,
}

/// Reads the events once, in chunks, keeping no call.
pub(crate) fn survey(reader: &ProfileReader) -> Result<Survey, Failure> {
    let mut sv = Survey {
        t0: i64::MAX,
        end: i64::MIN,
        calls: 0,
        lanes: HashMap::new(),
        histograms: vec![Vec::new(); reader.region_names().len()],
    };
    let rows = reader.rows();
    for chunk in reader.chunks(1 << 18) {
        let chunk = chunk.map_err(|e| Failure(format!("{}: {e}", reader.path().display())))?;
        let row = &rows[chunk.row];
        let ev = &chunk.events;
        let Some(hist) = sv.histograms.get_mut(row.region_id as usize) else {
            continue;
        };
        if hist.is_empty() {
            hist.resize(BINS, 0);
        }
        let mut last: Option<(LaneKey, (i64, i64))> = None;
        for i in 0..ev.len() {
            let task = ev.task_ids.as_ref().map_or(-1, |t| t[i]).max(-1);
            let thread = if task >= 0 { -1 } else { ev.thread_ids[i] };
            let key = (row.rank, thread, task);
            let dur = ev.durations[i].max(0);
            let (start, end) = (ev.start_ns[i], ev.start_ns[i].saturating_add(dur));
            hist[bin(dur)] += 1;
            sv.calls += 1;
            sv.t0 = sv.t0.min(start);
            sv.end = sv.end.max(end);
            // Runs of one lane are the rule: one map update per run.
            match &mut last {
                Some((k, span)) if *k == key => *span = (span.0.min(start), span.1.max(end)),
                _ => {
                    if let Some((k, span)) = last.take() {
                        let e = sv.lanes.entry(k).or_insert(span);
                        *e = (e.0.min(span.0), e.1.max(span.1));
                    }
                    last = Some((key, (start, end)));
                }
            }
        }
        if let Some((k, span)) = last {
            let e = sv.lanes.entry(k).or_insert(span);
            *e = (e.0.min(span.0), e.1.max(span.1));
        }
    }
    Ok(sv)
}

/// The cells of one track of the lane being walked, at one level.
#[derive(Default)]
struct Local {
    individual: Cells,
    buckets: Cells,
    open: Option<Open>,
}

/// A source lane's cells of one track, in a level's arrays.
struct Segment {
    track: (usize, u32),
    start: f64,
    range: std::ops::Range<usize>,
}

/// One level of the pyramid being built: its cells, source lane by source
/// lane, and whether any call is shorter than its buckets.
#[derive(Default)]
struct Level {
    alive: bool,
    more: bool,
    individual: Cells,
    individual_segments: Vec<Segment>,
    buckets: Cells,
    bucket_segments: Vec<Segment>,
    /// Cells so far, the walked lane's included.
    count: u64,
}

/// Builds the timeline from the calls of a walk, in bounded memory: every
/// level of the pyramid at once, a level (and every finer one) dropped as
/// soon as the cells up to it pass the budget.
pub(crate) struct Builder {
    t0: i64,
    span: i64,
    widths: Vec<f64>,
    budget: u64,
    levels: Vec<Level>,
    /// The display lane of each source lane.
    display: HashMap<LaneKey, usize>,
    lanes: Vec<Lane>,
    /// The walked lane: its key, display lane and tracks (by depth, level).
    current: Option<(LaneKey, usize)>,
    tracks: Vec<Vec<Local>>,
    since_check: u64,
    calls: u64,
    histograms: Vec<Vec<u64>>,
}

impl Builder {
    /// A builder for the calls `survey` saw; the lanes of `reader` name
    /// the display lanes.
    pub(crate) fn new(reader: &ProfileReader, survey: Survey) -> Builder {
        let mut lanes = Vec::new();
        let display = pack_lanes(reader, &survey.lanes, &mut lanes);
        Builder::with(survey, CELL_BUDGET, lanes, display)
    }

    fn with(
        survey: Survey,
        budget: u64,
        lanes: Vec<Lane>,
        display: HashMap<LaneKey, usize>,
    ) -> Builder {
        let (t0, end) = match survey.calls {
            0 => (0, 0),
            _ => (survey.t0, survey.end),
        };
        let span = end.saturating_sub(t0).max(1);
        let w0 = span as f64 / 1024.0;
        let widths: Vec<f64> = (0..MAX_LEVELS).map(|l| w0 / 4f64.powi(l as i32)).collect();
        let levels = (0..MAX_LEVELS)
            .map(|_| Level {
                alive: true,
                ..Level::default()
            })
            .collect();
        Builder {
            t0,
            span,
            widths,
            budget,
            levels,
            display,
            lanes,
            current: None,
            tracks: Vec::new(),
            since_check: 0,
            calls: survey.calls,
            histograms: survey.histograms,
        }
    }

    /// One call of the walk (lane by lane, by start, a call before the
    /// calls it holds).
    pub(crate) fn call(&mut self, c: &scope_profiler_reader::export::CallVisit) {
        let task = c.task.max(-1);
        let key = (c.rank, if task >= 0 { -1 } else { c.thread }, task);
        if self.current.map(|(k, _)| k) != Some(key) {
            self.end_lane();
            // A lane the survey did not see (a file changed under us) is
            // drawn on the first display lane rather than lost.
            let display = self.display.get(&key).copied().unwrap_or(0);
            self.current = Some((key, display));
        }
        if self.lanes.is_empty() {
            return;
        }
        let depth = (c.depth as u32).min(MAX_DEPTH) as usize;
        if self.tracks.len() <= depth {
            self.tracks.resize_with(depth + 1, || {
                (0..MAX_LEVELS).map(|_| Local::default()).collect()
            });
        }
        let dur = c.duration.max(0);
        let class = class_of(dur as f64, &self.widths);
        let rel = c.start.saturating_sub(self.t0).max(0);
        let mut added = 0u64;
        for l in 0..=class.min(MAX_LEVELS - 1) {
            let level = &mut self.levels[l];
            if !level.alive {
                break;
            }
            let local = &mut self.tracks[depth][l];
            if class == l {
                local.individual.push(rel, dur, c.region, 1, 1.0);
                level.count += 1;
                added += 1;
                continue;
            }
            level.more = true;
            let width = self.widths[l];
            let before = local.buckets.len();
            bucket(local, rel, dur, c.region, width);
            let grew = (local.buckets.len() - before) as u64;
            level.count += grew;
            added += grew;
        }
        self.since_check += added;
        if self.since_check >= CHECK_EVERY {
            self.since_check = 0;
            self.check_budget();
        }
    }

    /// Drops every level from the first one (past level 0) whose cells,
    /// with the coarser levels', pass the budget.
    fn check_budget(&mut self) {
        let mut used = 0u64;
        let mut dead = None;
        for (l, level) in self.levels.iter().enumerate() {
            if !level.alive {
                break;
            }
            used += level.count;
            if l > 0 && used > self.budget {
                dead = Some(l);
                break;
            }
        }
        if let Some(from) = dead {
            for level in &mut self.levels[from..] {
                *level = Level::default();
            }
            for track in &mut self.tracks {
                for local in &mut track[from..] {
                    *local = Local::default();
                }
            }
        }
    }

    /// Moves the walked lane's cells into the levels, a segment per track.
    fn end_lane(&mut self) {
        let Some((_, display)) = self.current.take() else {
            return;
        };
        let depths = self.tracks.len() as u32;
        if let Some(lane) = self.lanes.get_mut(display) {
            lane.depths = lane.depths.max(depths);
        }
        for (depth, track) in self.tracks.drain(..).enumerate() {
            for (l, mut local) in track.into_iter().enumerate() {
                let level = &mut self.levels[l];
                if !level.alive {
                    break;
                }
                if let Some(o) = local.open.take() {
                    let before = local.buckets.len();
                    close(&mut local.buckets, &o, self.widths[l]);
                    level.count += (local.buckets.len() - before) as u64;
                }
                let t = (display, depth as u32);
                append(
                    &mut level.individual,
                    &mut level.individual_segments,
                    t,
                    &local.individual,
                );
                append(
                    &mut level.buckets,
                    &mut level.bucket_segments,
                    t,
                    &local.buckets,
                );
            }
        }
        self.check_budget();
    }

    /// The timeline: the levels kept, each track's cells in start order.
    pub(crate) fn finish(mut self) -> Timeline {
        self.end_lane();
        let kept = {
            let alive = self.levels.iter().take_while(|l| l.alive).count().max(1);
            // No finer level once every call is drawn individually.
            match self.levels[..alive].iter().position(|l| !l.more) {
                Some(l) => l + 1,
                None => alive,
            }
        };
        let mut first_track = Vec::with_capacity(self.lanes.len());
        let mut tracks = 0usize;
        for lane in &self.lanes {
            first_track.push(tracks);
            tracks += lane.depths as usize;
        }
        let track_of = |(display, depth): (usize, u32)| first_track[display] + depth as usize;
        let mut tl = Timeline {
            t0: self.t0,
            span: self.span,
            widths: self.widths[..kept].to_vec(),
            calls: self.calls,
            histograms: std::mem::take(&mut self.histograms),
            ..Timeline::default()
        };
        for (l, level) in self.levels.drain(..).take(kept).enumerate() {
            tl.classes.push(gather(
                &level.individual,
                level.individual_segments,
                tracks,
                &track_of,
                None,
            ));
            tl.levels.push(gather(
                &level.buckets,
                level.bucket_segments,
                tracks,
                &track_of,
                Some(self.widths[l]),
            ));
        }
        tl.calls_kept = tl.classes.iter().map(|c| c.len() as u64).sum();
        tl.lanes = self.lanes;
        tl
    }
}

/// A call shorter than a level's buckets, added to the walked track's
/// buckets at that level: it fills the rest of its first bucket and, past
/// its end, the start of the next.
fn bucket(local: &mut Local, rel: i64, dur: i64, region: u32, width: f64) {
    let index = (rel as f64 / width) as u64;
    // The open bucket is closed and reused (its region list kept), not
    // dropped: a fine level opens one per call or so.
    let o = match &mut local.open {
        Some(o) => {
            if o.index != index {
                close(&mut local.buckets, o, width);
                o.reset(index);
            }
            o
        }
        None => local.open.insert(Open::new(index)),
    };
    let first = (dur as f64).min((index + 1) as f64 * width - rel as f64);
    o.count += 1;
    o.add(region, first);
    let rest = dur as f64 - first;
    if rest > 0.0 {
        close(&mut local.buckets, o, width);
        o.reset(index + 1);
        o.add(region, rest);
    }
}

/// Appends `from` to a level's `cells` as one segment of `track`.
fn append(cells: &mut Cells, segments: &mut Vec<Segment>, track: (usize, u32), from: &Cells) {
    if from.len() == 0 {
        return;
    }
    let at = cells.len();
    cells.start.extend_from_slice(&from.start);
    cells.dur.extend_from_slice(&from.dur);
    cells.region.extend_from_slice(&from.region);
    cells.count.extend_from_slice(&from.count);
    cells.busy.extend_from_slice(&from.busy);
    segments.push(Segment {
        track,
        start: from.start[0],
        range: at..cells.len(),
    });
}

/// A level's cells grouped by track (`offsets`), each track's segments by
/// start. With `merge` (buckets of that width), where one source lane's
/// segment meets the one before it on the track (task lanes packed into
/// one display lane), a bucket they share, or adjacent buckets of one
/// region, become one cell, as within a lane.
fn gather(
    cells: &Cells,
    mut segments: Vec<Segment>,
    tracks: usize,
    track_of: &dyn Fn((usize, u32)) -> usize,
    merge: Option<f64>,
) -> Cells {
    segments.sort_by(|a, b| {
        track_of(a.track)
            .cmp(&track_of(b.track))
            .then(a.start.total_cmp(&b.start))
    });
    let mut out = Cells::with_tracks(tracks);
    let mut next = segments.iter().peekable();
    for t in 0..tracks {
        let track_start = out.len();
        out.offsets.push(track_start as u32);
        while let Some(s) = next.next_if(|s| track_of(s.track) == t) {
            let mut r = s.range.clone();
            if let Some(width) = merge
                && out.len() > track_start
                && merge_into_last(&mut out, cells, r.start, width)
            {
                r.start += 1;
            }
            out.start.extend_from_slice(&cells.start[r.clone()]);
            out.dur.extend_from_slice(&cells.dur[r.clone()]);
            out.region.extend_from_slice(&cells.region[r.clone()]);
            out.count.extend_from_slice(&cells.count[r.clone()]);
            out.busy.extend_from_slice(&cells.busy[r]);
        }
    }
    out.offsets.push(out.len() as u32);
    out
}

/// Merges bucket cell `i` of `from` into the last of `out` when it starts
/// inside it, or where it ends with the same region; the region of the
/// two is the one with more busy time.
fn merge_into_last(out: &mut Cells, from: &Cells, i: usize, width: f64) -> bool {
    let last = out.len() - 1;
    let end = out.start[last] + out.dur[last] as f64;
    let (start, dur) = (from.start[i], from.dur[i] as f64);
    let inside = start < end - width * 0.01;
    let adjacent = (end - start).abs() < width * 0.01 && out.region[last] == from.region[i];
    if !(inside || adjacent) {
        return false;
    }
    let busy_last = out.busy[last] as f64 / 255.0 * out.dur[last] as f64;
    let busy_next = from.busy[i] as f64 / 255.0 * dur;
    if busy_next > busy_last {
        out.region[last] = from.region[i];
    }
    let new_dur = (end.max(start + dur) - out.start[last]) as f32;
    out.dur[last] = new_dur;
    out.count[last] = out.count[last].saturating_add(from.count[i]);
    let busy = (busy_last + busy_next) / new_dur.max(f32::MIN_POSITIVE) as f64;
    out.busy[last] = (busy.clamp(0.0, 1.0) * 255.0).round() as u8;
    true
}

/// The display lanes: each thread lane alone; the task lanes of a rank
/// packed, first come first placed, into as few lanes as their lifetimes
/// (first start to last end) allow. Returns the display lane of each
/// source lane.
fn pack_lanes(
    reader: &ProfileReader,
    spans: &HashMap<LaneKey, (i64, i64)>,
    out: &mut Vec<Lane>,
) -> HashMap<LaneKey, usize> {
    let ranks: std::collections::BTreeSet<u32> = spans.keys().map(|k| k.0).collect();
    let multi_rank = ranks.len() > 1;
    let thread_names: HashMap<i64, &str> = reader
        .threads()
        .iter()
        .map(|t| (t.index, t.name.as_str()))
        .collect();
    let thread_name = |t: i64| match thread_names.get(&t) {
        Some(name) => (*name).to_owned(),
        None if t < 0 => "main".to_owned(),
        None => format!("thread {t}"),
    };
    let prefix = |rank: u32| match multi_rank {
        true => format!("rank {rank} · "),
        false => String::new(),
    };
    let mut keys: Vec<LaneKey> = spans.keys().copied().collect();
    keys.sort_by_key(|k| (k.0, k.2 >= 0, k.1, k.2));
    let mut display = HashMap::with_capacity(keys.len());
    let mut tasks: Vec<LaneKey> = Vec::new();
    for key in keys {
        if key.2 < 0 {
            out.push(Lane {
                label: format!("{}{}", prefix(key.0), thread_name(key.1)),
                depths: 0,
            });
            display.insert(key, out.len() - 1);
        } else {
            tasks.push(key);
        }
    }
    tasks.sort_by_key(|k| (k.0, spans[k].0, k.2));
    // Per rank: the task lanes' (display index, end of their last task).
    let mut task_lanes: HashMap<u32, Vec<(usize, i64)>> = HashMap::new();
    for key in tasks {
        let (start, end) = spans[&key];
        let lanes = task_lanes.entry(key.0).or_default();
        match lanes.iter_mut().find(|(_, free)| *free <= start) {
            Some((d, free)) => {
                display.insert(key, *d);
                *free = end;
            }
            None => {
                out.push(Lane {
                    label: format!("{}tasks {}", prefix(key.0), lanes.len() + 1),
                    depths: 0,
                });
                display.insert(key, out.len() - 1);
                lanes.push((out.len() - 1, end));
            }
        }
    }
    display
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

    /// Empty again, as bucket `index`.
    fn reset(&mut self, index: u64) {
        self.index = index;
        self.count = 0;
        self.busy = 0.0;
        self.by_region.clear();
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
fn close(cells: &mut Cells, o: &Open, width: f64) {
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
mod tests;
