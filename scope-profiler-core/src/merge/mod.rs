//! Profiles recorded in one process, merged into one ([`Profile::merge`]):
//! a Rust extension's profile and the Python program's that ran it, or two
//! extensions' copies of the runtime. Pure: profiles in, a profile out.
//!
//! Lanes are matched by the OS thread id every side records
//! (`thread_table/native_id`); on a lane, every call nests under the
//! innermost call that encloses it in time, of its own profile (its parent
//! as recorded) or of another (the Python call that ran it). Task lanes
//! stay each profile's own. Regions with one name are one region.

#[cfg(test)]
mod tests;

use std::collections::HashMap;

use crate::error::Error;
use crate::profile::{
    Events, Profile, RegionCounters, RegionRow, SummaryStatistics, TaskInfo, ThreadInfo,
};
use crate::value::{CallMetadata, Value};

impl Profile {
    /// The profiles `inputs`, recorded in one process, as one: lanes matched
    /// by OS thread id (and rank), every call nested under the innermost
    /// call of any input that encloses it in time on its thread (its own
    /// parent as recorded, or a call of another input: the Python call that
    /// ran a Rust extension), parent ids, call ids and statistics rebuilt,
    /// regions with one name made one. Tags, event metadata, counters and
    /// the thread and task tables are kept; task lanes stay each input's.
    /// When two calls of different inputs span the very same interval, the
    /// one of the earlier input is the outer; a matched thread keeps the
    /// first input's name. Each input's session is read on one clock: both
    /// sides' starts are CLOCK_MONOTONIC nanoseconds on Linux.
    ///
    /// The metadata is the first input's, its `start_time_ns` and
    /// `finalize_time_ns` widened to every input's, with `merged_profiles`
    /// (the number of inputs).
    ///
    /// Two calls of different inputs that overlap on one thread by at most
    /// 1 us without one
    /// holding the other (two clocks disagreeing by a few ns) are made to
    /// nest or to follow one another by the shorter move of one end, so
    /// that every reader (the Python package's too, which refuses such
    /// overlaps) finds exact nesting; the metadata then says how many ends
    /// moved and by how much at most (`merge_moved_ends`,
    /// `merge_moved_ns_max`). Counters are each input's own measurement
    /// (their exclusive values exclude only that input's callees).
    ///
    /// # Errors
    ///
    /// Calls of different inputs on one thread that overlap by more than
    /// the tolerance without one holding the other. Inputs that cannot be
    /// one process's: different `hostname`s or `pid`s
    /// where both record one, a session that overlaps no other input's in
    /// time (on one clock, sessions of one process overlap), or a profile
    /// of ours timed on another clock than CLOCK_MONOTONIC (the portable
    /// build, macOS and Windows: its timestamps count from its process's
    /// start, so nothing lines up with them); see
    /// [`Profile::merge_forced`]. An input whose rows or ids do not fit its
    /// columns is an error too, as is no input at all.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options, Profile};
    /// let session = |name: &str| -> Result<Profile, sp::Error> {
    ///     sp::setup(Options::new().in_memory().verbose(false))?;
    ///     sp::region(name).run(|| ());
    ///     Ok(sp::finalize()?.into_profile().unwrap())
    /// };
    /// let (mut outer, inner) = (session("python.step")?, session("rust.kernel")?);
    /// // Two sessions of this process one after the other overlap nowhere:
    /// assert!(Profile::merge(&[outer.clone(), inner.clone()]).is_err());
    /// // As if the outer call had run the inner one, around it in time:
    /// outer.events.start_ns[0] = inner.events.start_ns[0] - 1_000;
    /// outer.events.durations[0] = inner.events.durations[0] + 2_000;
    /// let merged = Profile::merge_forced(&[outer, inner])?;
    /// assert_eq!(merged.region_names, ["python.step", "rust.kernel"]);
    /// let e = &merged.events;
    /// assert_eq!(e.parent_ids[1], e.call_ids[0]); // the kernel under the step
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn merge(inputs: &[Profile]) -> Result<Profile, Error> {
        merge(inputs, true)
    }

    /// [`Profile::merge`] without the checks that the inputs are one
    /// process's (host, process id, overlapping sessions): for profiles
    /// whose metadata says less than the truth. Inputs with different `pid`s
    /// are still kept apart: their lanes are never matched, so no call of
    /// one process nests under a call of another.
    ///
    /// ```
    /// use scope_profiler::{Profile, Value};
    /// let mut a = Profile::default();
    /// a.metadata.push(("pid".into(), Value::Int(1)));
    /// let mut b = Profile::default();
    /// b.metadata.push(("pid".into(), Value::Int(2)));
    /// assert!(Profile::merge(&[a.clone(), b.clone()]).is_err());
    /// assert!(Profile::merge_forced(&[a, b]).is_ok());
    /// ```
    pub fn merge_forced(inputs: &[Profile]) -> Result<Profile, Error> {
        merge(inputs, false)
    }
}

/// How far two inputs' calls may overlap without one holding the other and
/// still be made to nest or follow one another (their ends moved): 1 us,
/// far above what two runtimes' clocks disagree by (tens of ns, the error
/// of their anchors), far below any call a user would see.
const TOLERANCE_NS: i64 = 1_000;

/// The ends a merge moved (see [`TOLERANCE_NS`]), and what it could not
/// make nest.
#[derive(Default)]
struct Adjusted {
    calls: u64,
    max_ns: i64,
    conflicts: u64,
    example: Option<(usize, usize)>,
}

impl Adjusted {
    fn note(&mut self, ns: i64) {
        self.calls += 1;
        self.max_ns = self.max_ns.max(ns);
    }
}

/// An input's session on the common clock, absolute ns.
#[derive(Clone, Copy, Debug)]
struct Window {
    start: i64,
    end: i64,
}

fn int(profile: &Profile, key: &str) -> Option<i64> {
    match profile.metadata_value(key) {
        Some(Value::Int(v)) => Some(*v),
        _ => None,
    }
}

fn text<'a>(profile: &'a Profile, key: &str) -> Option<&'a str> {
    match profile.metadata_value(key) {
        Some(Value::Str(v)) if !v.is_empty() => Some(v),
        _ => None,
    }
}

/// The input's session: `start_time_ns` to `finalize_time_ns`, or its
/// calls' extent where the metadata has none.
fn window(profile: &Profile) -> Window {
    let e = &profile.events;
    let first = e.start_ns.iter().copied().min();
    let last = e
        .start_ns
        .iter()
        .zip(&e.durations)
        .map(|(s, d)| s.saturating_add(*d))
        .max();
    let start = int(profile, "start_time_ns").or(first).unwrap_or(0);
    let end = int(profile, "finalize_time_ns")
        .or(last)
        .unwrap_or(start)
        .max(start);
    Window { start, end }
}

fn usage(message: String) -> Error {
    Error::Usage(format!("cannot merge the profiles: {message}"))
}

/// Refuses inputs that cannot be one process's.
fn check_one_process(inputs: &[Profile], windows: &[Window]) -> Result<(), Error> {
    // Our files name their timeline; the Python package's do not (on Linux
    // its `perf_counter_ns` is CLOCK_MONOTONIC; elsewhere no build of ours
    // is on its timeline, and ours says so).
    for (i, p) in inputs.iter().enumerate() {
        if let Some(clock) = text(p, "clock")
            && clock != "CLOCK_MONOTONIC"
            && inputs.len() > 1
        {
            return Err(usage(format!(
                "input {i} was timed on the clock {clock:?} (a portable build: its timestamps \
                 count from its own process's start, its thread ids are not the OS's), which \
                 no other profile's timestamps line up with"
            )));
        }
    }
    for key in ["hostname", "pid"] {
        let mut seen: Option<(usize, String)> = None;
        for (i, p) in inputs.iter().enumerate() {
            let value = match key {
                "pid" => int(p, key).map(|v| v.to_string()),
                _ => text(p, key).map(str::to_owned),
            };
            let Some(value) = value else { continue };
            match &seen {
                Some((j, first)) if *first != value => {
                    return Err(usage(format!(
                        "input {j} has {key} {first} and input {i} {key} {value}: not one process \
                         (merge_forced, `scope-prof merge --force`, keeps their lanes apart)"
                    )));
                }
                Some(_) => {}
                None => seen = Some((i, value)),
            }
        }
    }
    if inputs.len() > 1 {
        for (i, w) in windows.iter().enumerate() {
            let overlaps = windows
                .iter()
                .enumerate()
                .any(|(j, o)| j != i && w.start <= o.end && o.start <= w.end);
            if !overlaps {
                return Err(usage(format!(
                    "the session of input {i} ({} to {} ns) overlaps no other input's: not one \
                     process on one clock (merge_forced, `scope-prof merge --force`, merges anyway)",
                    w.start, w.end
                )));
            }
        }
    }
    Ok(())
}

/// One call of an input, placed in the merged profile.
#[derive(Clone, Copy, Debug)]
struct Call {
    input: u32,
    /// Its row in its input and its position there.
    row: usize,
    at: usize,
    region: u32,
    rank: u32,
    start: i64,
    end: i64,
    thread: i64,
    task: i64,
    /// Its parent as its input recorded it (an index into the calls).
    own_parent: Option<usize>,
    /// Its depth in its input's nesting.
    depth: u32,
    /// Its parent in the merged profile.
    parent: Option<usize>,
    id: i64,
}

/// Where each input's thread index goes in the merged thread table.
struct Threads {
    table: Vec<ThreadInfo>,
    /// Per input, its thread index -> the merged one.
    maps: Vec<HashMap<i64, i64>>,
}

/// The merged thread table: one thread per (process, OS thread id), first
/// seen first; a thread without an OS id (0 or less) stays its input's.
fn threads(inputs: &[Profile], processes: &[i64], origin: i64, windows: &[Window]) -> Threads {
    let mut table: Vec<ThreadInfo> = Vec::new();
    let mut by_os: HashMap<(i64, i64), usize> = HashMap::new();
    let mut maps = Vec::with_capacity(inputs.len());
    let rebase = |rel: i64, w: &Window| -> i64 {
        if rel < 0 {
            rel
        } else {
            w.start.saturating_add(rel).saturating_sub(origin)
        }
    };
    for (i, p) in inputs.iter().enumerate() {
        let mut map = HashMap::new();
        for t in &p.threads {
            let (start, end) = (
                rebase(t.start_ns, &windows[i]),
                rebase(t.end_ns, &windows[i]),
            );
            let key = (processes[i], t.native_id);
            let found = (t.native_id > 0)
                .then(|| by_os.get(&key).copied())
                .flatten();
            let at = match found {
                Some(at) => {
                    let m = &mut table[at];
                    m.start_ns = m.start_ns.min(start);
                    m.end_ns = if m.end_ns < 0 || end < 0 {
                        -1
                    } else {
                        m.end_ns.max(end)
                    };
                    m.cpu_ns = m.cpu_ns.max(t.cpu_ns);
                    m.daemon = m.daemon.max(t.daemon);
                    at
                }
                None => {
                    let at = table.len();
                    let mut m = t.clone();
                    (m.index, m.start_ns, m.end_ns) = (at as i64, start, end);
                    table.push(m);
                    if t.native_id > 0 {
                        by_os.insert(key, at);
                    }
                    at
                }
            };
            map.insert(t.index, at as i64);
        }
        maps.push(map);
    }
    Threads { table, maps }
}

fn merge(inputs: &[Profile], check: bool) -> Result<Profile, Error> {
    if inputs.is_empty() {
        return Err(usage("no profile given".to_owned()));
    }
    for (i, p) in inputs.iter().enumerate() {
        validate(i, p)?;
    }
    let windows: Vec<Window> = inputs.iter().map(window).collect();
    if check {
        check_one_process(inputs, &windows)?;
    }
    let origin = windows.iter().map(|w| w.start).min().unwrap_or(0);
    let end = windows.iter().map(|w| w.end).max().unwrap_or(origin);
    // The process of each input: its pid, or the first known one.
    let known = inputs.iter().find_map(|p| int(p, "pid")).unwrap_or(0);
    let processes: Vec<i64> = inputs
        .iter()
        .map(|p| int(p, "pid").unwrap_or(known))
        .collect();

    // Regions by name, first seen first.
    let mut region_names: Vec<String> = Vec::new();
    let mut region_of: HashMap<&str, u32> = HashMap::new();
    let mut region_maps: Vec<Vec<u32>> = Vec::with_capacity(inputs.len());
    for p in inputs {
        let map = p
            .region_names
            .iter()
            .map(|name| {
                *region_of.entry(name.as_str()).or_insert_with(|| {
                    region_names.push(name.clone());
                    (region_names.len() - 1) as u32
                })
            })
            .collect();
        region_maps.push(map);
    }

    let Threads {
        table: mut thread_table,
        maps: mut thread_maps,
    } = threads(inputs, &processes, origin, &windows);

    // Tasks, each input's after the previous ones'.
    let mut tasks: Vec<TaskInfo> = Vec::new();
    let mut task_maps: Vec<HashMap<i64, i64>> = Vec::with_capacity(inputs.len());
    for (i, p) in inputs.iter().enumerate() {
        let mut map = HashMap::new();
        let shift = windows[i].start.saturating_sub(origin);
        for t in &p.tasks {
            let mut m = t.clone();
            m.index = tasks.len() as i64;
            m.thread_index = thread_maps[i].get(&t.thread_index).copied().unwrap_or(-1);
            m.created_ns = t.created_ns.saturating_add(shift);
            m.done_ns = t.done_ns.saturating_add(shift);
            map.insert(t.index, m.index);
            tasks.push(m);
        }
        task_maps.push(map);
    }

    // Every call of every input.
    let mut calls: Vec<Call> = Vec::with_capacity(inputs.iter().map(|p| p.events.len()).sum());
    for (i, p) in inputs.iter().enumerate() {
        let first = calls.len();
        let e = &p.events;
        let mut by_id: HashMap<(u32, i64), usize> = HashMap::new();
        for (r, row) in p.rows.iter().enumerate() {
            for (at, pos) in row.events().enumerate() {
                let start = e.start_ns[pos];
                let task = e.task_ids.as_ref().map_or(-1, |t| t[pos]);
                let old = e.thread_ids[pos];
                // A thread the table does not list (a file without a thread
                // table): a thread of this input's own, never matched.
                let thread = *thread_maps[i].entry(old).or_insert_with(|| {
                    let index = thread_table.len() as i64;
                    thread_table.push(ThreadInfo {
                        index,
                        name: format!("thread-{old}"),
                        end_ns: -1,
                        cpu_ns: -1,
                        ..ThreadInfo::default()
                    });
                    index
                });
                by_id.insert((row.rank, e.call_ids[pos]), calls.len());
                calls.push(Call {
                    input: i as u32,
                    row: r,
                    at,
                    region: region_maps[i][row.region_id as usize],
                    rank: row.rank,
                    start,
                    end: start.saturating_add(e.durations[pos].max(0)),
                    thread,
                    task: if task >= 0 {
                        task_maps[i].get(&task).copied().unwrap_or(-1)
                    } else {
                        -1
                    },
                    own_parent: None,
                    depth: 0,
                    parent: None,
                    id: 0,
                });
            }
        }
        for (c, call) in calls.iter_mut().enumerate().skip(first) {
            let pos = p.rows[call.row].events().start + call.at;
            let parent = e.parent_ids[pos];
            call.own_parent = (parent >= 0)
                .then(|| by_id.get(&(call.rank, parent)).copied())
                .flatten()
                .filter(|&q| q != c);
        }
        // Depths through the recorded parents (ids grow from parent to
        // child, so a chain ends; a file whose ids loop is cut at its
        // length).
        for c in first..calls.len() {
            let (mut depth, mut at) = (0u32, calls[c].own_parent);
            while let Some(q) = at {
                depth += 1;
                if depth as usize > calls.len() - first {
                    break;
                }
                at = calls[q].own_parent;
            }
            calls[c].depth = depth;
        }
    }

    // One sweep per lane, in start order: the parent is the innermost
    // enclosing call that is the recorded parent or another input's.
    let mut order: Vec<usize> = (0..calls.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&calls[a], &calls[b]);
        (a.rank, a.start, std::cmp::Reverse(a.end), a.input, a.depth).cmp(&(
            b.rank,
            b.start,
            std::cmp::Reverse(b.end),
            b.input,
            b.depth,
        ))
    });
    let mut next_id: HashMap<u32, i64> = HashMap::new();
    let mut stacks: HashMap<(u32, i64, i64), Vec<usize>> = HashMap::new();
    let mut adjusted = Adjusted::default();
    for &c in &order {
        let id = next_id.entry(calls[c].rank).or_insert(0);
        calls[c].id = *id;
        *id += 1;
        let call = calls[c];
        let stack = stacks
            .entry((call.rank, call.thread, call.task))
            .or_default();
        while let Some(&top) = stack.last() {
            let (ts, te) = (calls[top].start, calls[top].end);
            let (cs, ce) = (calls[c].start, calls[c].end);
            // Its recorded parent holds it (also when a move below has
            // shortened the parent: it is clamped into it then).
            if (ts <= cs && ce <= te) || Some(top) == call.own_parent {
                break;
            }
            // Two inputs' calls that overlap without one holding the other:
            // the clocks of two runtimes (or of Python and Rust) disagree by
            // a few ns. Within TOLERANCE_NS, the shorter move makes them
            // nest (the later call ends where the other ends) or follow one
            // another (the earlier call ends where the later starts).
            if calls[top].input != call.input && ts <= cs && cs < te && te < ce {
                let (overhang, overlap) = (ce.saturating_sub(te), te.saturating_sub(cs));
                if overhang <= overlap && overhang <= TOLERANCE_NS {
                    calls[c].end = te;
                    adjusted.note(overhang);
                    break;
                }
                if overlap <= TOLERANCE_NS {
                    calls[top].end = cs;
                    adjusted.note(overlap);
                } else {
                    adjusted.conflicts += 1;
                    adjusted.example.get_or_insert((top, c));
                }
            }
            stack.pop();
        }
        let parent = stack
            .iter()
            .rev()
            .copied()
            .find(|&q| calls[q].input != call.input || Some(q) == call.own_parent);
        // Inside the parent, also when a move above shortened it.
        if let Some(p) = parent {
            let (ps, pe) = (calls[p].start, calls[p].end);
            let d = &mut calls[c];
            (d.start, d.end) = (d.start.clamp(ps, pe), d.end.clamp(ps, pe));
        }
        calls[c].parent = parent;
        stack.push(c);
    }
    if check && adjusted.conflicts > 0 {
        let (a, b) = adjusted.example.unwrap_or_default();
        let name = |q: usize| {
            let call = &calls[q];
            format!(
                "{} of input {} ({} to {} ns)",
                region_names[call.region as usize], call.input, call.start, call.end
            )
        };
        return Err(usage(format!(
            "{} pairs of calls of different inputs overlap on one thread by more than {} ns \
             without one holding the other, as {} and {}: not one clock \
             (merge_forced, `scope-prof merge --force`, keeps them as they are)",
            adjusted.conflicts,
            TOLERANCE_NS,
            name(a),
            name(b)
        )));
    }

    // Children's time, for the exclusive totals.
    let mut children = vec![0i64; calls.len()];
    for c in &calls {
        if let Some(p) = c.parent {
            children[p] = children[p].saturating_add(c.end.saturating_sub(c.start));
        }
    }

    // Rows per (rank, region), their calls by start.
    let mut rows_of: HashMap<(u32, u32), Vec<usize>> = HashMap::new();
    for (c, call) in calls.iter().enumerate() {
        rows_of.entry((call.rank, call.region)).or_default().push(c);
    }
    let mut keys: Vec<(u32, u32)> = rows_of.keys().copied().collect();
    keys.sort_unstable();
    let with_tasks = inputs.iter().any(|p| p.events.task_ids.is_some());
    let mut events = Events {
        task_ids: with_tasks.then(Vec::new),
        ..Events::default()
    };
    let mut rows = Vec::with_capacity(keys.len());
    for (rank, region) in keys {
        let mut members = rows_of.remove(&(rank, region)).unwrap_or_default();
        members.sort_by_key(|&c| (calls[c].start, calls[c].id));
        let mut row = row_details(inputs, &region_maps, region, rank);
        row.event_offset = events.len() as u64;
        row.event_count = members.len() as u64;
        let mut exclusive = 0i64;
        let mut metadata: Vec<CallMetadata> = Vec::with_capacity(members.len());
        let mut spans = Vec::with_capacity(members.len());
        for &c in &members {
            let call = &calls[c];
            let duration = call.end.saturating_sub(call.start);
            events.start_ns.push(call.start);
            events.durations.push(duration);
            events.call_ids.push(call.id);
            events
                .parent_ids
                .push(call.parent.map_or(-1, |p| calls[p].id));
            events.thread_ids.push(call.thread);
            if let Some(t) = &mut events.task_ids {
                t.push(call.task);
            }
            exclusive = exclusive.saturating_add(duration.saturating_sub(children[c]));
            spans.push((call.start, duration));
            let input = &inputs[call.input as usize];
            metadata.push(
                input.rows[call.row]
                    .event_metadata
                    .get(call.at)
                    .cloned()
                    .unwrap_or_default(),
            );
        }
        row.exclusive = exclusive;
        let gpu = row.stats.gpu();
        row.stats = SummaryStatistics::from_calls(&spans);
        row.stats.set_gpu(gpu.0, gpu.1);
        row.event_metadata = if metadata.iter().any(|m| !m.is_empty()) {
            metadata
        } else {
            Vec::new()
        };
        rows.push(row);
    }

    let mut metadata = inputs[0].metadata.clone();
    set(&mut metadata, "start_time_ns", Value::Int(origin));
    set(&mut metadata, "finalize_time_ns", Value::Int(end));
    set(
        &mut metadata,
        "merged_profiles",
        Value::Int(inputs.len() as i64),
    );
    if adjusted.calls > 0 {
        set(
            &mut metadata,
            "merge_moved_ends",
            Value::Int(adjusted.calls as i64),
        );
        set(
            &mut metadata,
            "merge_moved_ns_max",
            Value::Int(adjusted.max_ns),
        );
    }
    Ok(Profile {
        metadata,
        region_names,
        rows,
        events,
        threads: thread_table,
        tasks,
        counters: counters(inputs),
    })
}

/// Checks that `p`'s rows and ids fit its columns.
fn validate(i: usize, p: &Profile) -> Result<(), Error> {
    let e = &p.events;
    let n = e.len();
    let columns = [
        e.durations.len(),
        e.call_ids.len(),
        e.parent_ids.len(),
        e.thread_ids.len(),
        e.task_ids.as_ref().map_or(n, Vec::len),
    ];
    if columns.iter().any(|&len| len != n) {
        return Err(usage(format!(
            "input {i}: its event columns differ in length"
        )));
    }
    for (r, row) in p.rows.iter().enumerate() {
        let range = row.events();
        if range.end > n || row.region_id as usize >= p.region_names.len() {
            return Err(usage(format!(
                "input {i}: row {r} names events or a region it does not have"
            )));
        }
        if !row.event_metadata.is_empty() && row.event_metadata.len() != range.len() {
            return Err(usage(format!(
                "input {i}: row {r} has {} calls' metadata for {} calls",
                row.event_metadata.len(),
                range.len()
            )));
        }
    }
    Ok(())
}

/// The row of `region` on `rank` without its calls: the source, tags and
/// text of the first input that has the region (a later one's where the
/// first has none).
fn row_details(inputs: &[Profile], maps: &[Vec<u32>], region: u32, rank: u32) -> RegionRow {
    let mut row = RegionRow {
        region_id: region,
        rank,
        source_line: -1,
        ..RegionRow::default()
    };
    let (mut gpu_count, mut gpu_total) = (0u64, 0i64);
    for (p, map) in inputs.iter().zip(maps) {
        for r in p.rows.iter().filter(|r| r.rank == rank) {
            if map.get(r.region_id as usize) != Some(&region) {
                continue;
            }
            if row.source_file.is_empty() && !r.source_file.is_empty() {
                (row.source_file, row.source_line) = (r.source_file.clone(), r.source_line);
            }
            if row.tags.is_empty() {
                row.tags = r.tags.clone();
            }
            if row.source_text.is_empty() {
                row.source_text = r.source_text.clone();
            }
            let (count, total) = r.stats.gpu();
            gpu_count = gpu_count.saturating_add(count);
            gpu_total = gpu_total.saturating_add(total);
        }
    }
    row.stats.set_gpu(gpu_count, gpu_total);
    row
}

/// Every input's counters; one region's on one rank with the same events
/// in several inputs are summed.
fn counters(inputs: &[Profile]) -> Vec<RegionCounters> {
    let mut out: Vec<RegionCounters> = Vec::new();
    for c in inputs.iter().flat_map(|p| &p.counters) {
        match out
            .iter_mut()
            .find(|o| o.name == c.name && o.rank == c.rank && o.event_names == c.event_names)
        {
            Some(o) => {
                o.num_calls = o.num_calls.saturating_add(c.num_calls);
                for (a, b) in o.inclusive.iter_mut().zip(&c.inclusive) {
                    *a = a.saturating_add(*b);
                }
                for (a, b) in o.exclusive.iter_mut().zip(&c.exclusive) {
                    *a = a.saturating_add(*b);
                }
            }
            None => out.push(c.clone()),
        }
    }
    out
}

fn set(metadata: &mut Vec<(String, Value)>, key: &str, value: Value) {
    match metadata.iter_mut().find(|(k, _)| k == key) {
        Some((_, v)) => *v = value,
        None => metadata.push((key.to_owned(), value)),
    }
}
