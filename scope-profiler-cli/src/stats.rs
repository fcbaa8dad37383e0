//! Statistics of a file: its call tree, per-region totals, diffs.

use std::collections::HashMap;
use std::path::Path;

use scope_profiler::CallNode;
use scope_profiler_reader::ProfileReader;
use scope_profiler_reader::export::Grouping;
use serde_json::{Value, json};

use crate::{Failure, Metric};

/// Statistics of one call path.
#[derive(Clone, Debug, Default)]
pub(crate) struct Stat {
    pub calls: u64,
    pub total: i64,
    pub own: i64,
    pub mean: f64,
    pub p95: i64,
    pub min: i64,
    pub max: i64,
    /// Lanes (threads or tasks) the calls ran on: the `%` column is
    /// `total / (session x lanes)`, see [`share_pct`].
    pub lanes: u64,
}

/// The `%` column of `inspect` and `report`: the share of the session's
/// wall time the calls took on the lanes they ran on, `total / (session x
/// lanes)` (at most 100 but for clock skew; a region that ran on one lane
/// for half the session is 50 whatever else ran beside it; a region awaited
/// on 4000 task lanes at once for the whole session is 100, not 400000).
pub(crate) fn share_pct(stat: &Stat, session_ns: i64) -> f64 {
    let lanes = stat.lanes.max(1) as f64;
    stat.total as f64 / (session_ns.max(1) as f64 * lanes) * 100.0
}

impl Stat {
    /// Adds `other`'s calls (the same path on other lanes) to these.
    fn absorb(&mut self, other: &Stat) {
        if other.calls == 0 {
            return;
        }
        if self.calls == 0 {
            *self = other.clone();
            return;
        }
        self.calls = self.calls.wrapping_add(other.calls);
        self.total = self.total.wrapping_add(other.total);
        self.own = self.own.wrapping_add(other.own);
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.lanes = self.lanes.wrapping_add(other.lanes);
        self.mean = self.total as f64 / self.calls as f64;
        // Quantiles of several lanes do not add up: unknown.
        self.p95 = -1;
    }
}

/// A node of a file's tree, by name.
#[derive(Clone, Debug, Default)]
pub(crate) struct Node {
    pub name: String,
    pub tags: Vec<String>,
    pub stat: Stat,
    pub children: Vec<Node>,
}

/// A file's trees, one per group, and the session's wall time.
#[derive(Clone, Debug, Default)]
pub(crate) struct FileTree {
    pub groups: Vec<(String, Vec<Node>)>,
    pub session_ns: i64,
}

/// Tags per region name, from the rows' JSON lists.
fn region_tags(reader: &ProfileReader) -> HashMap<u32, Vec<String>> {
    let mut tags: HashMap<u32, Vec<String>> = HashMap::new();
    for (row, raw) in reader.rows().iter().zip(reader.row_tags()) {
        let parsed: Vec<String> = serde_json::from_str(raw).unwrap_or_default();
        let entry = tags.entry(row.region_id).or_default();
        for t in parsed {
            if !entry.contains(&t) {
                entry.push(t);
            }
        }
    }
    tags
}

/// The call tree of a file (flat for an aggregate file).
pub(crate) fn file_tree(reader: &ProfileReader, grouping: Grouping) -> Result<FileTree, Failure> {
    file_tree_with(reader, grouping, false)
}

/// As [`file_tree`]; with `group_tasks` and [`Grouping::Lane`], the task
/// lanes of a rank are one group per task name (see [`group_task_lanes`]).
pub(crate) fn file_tree_with(
    reader: &ProfileReader,
    grouping: Grouping,
    group_tasks: bool,
) -> Result<FileTree, Failure> {
    let names = reader.region_names();
    let name = |id: u32| names.get(id as usize).cloned().unwrap_or_default();
    if reader.is_aggregate() {
        let mut by_region: Vec<(u32, Stat)> = Vec::new();
        for row in reader.aggregates() {
            let i = match by_region.iter().position(|(id, _)| *id == row.region_id) {
                Some(i) => i,
                None => {
                    by_region.push((row.region_id, Stat::default()));
                    by_region.len() - 1
                }
            };
            let s = &mut by_region[i].1;
            if s.calls == 0 {
                (s.min, s.max) = (row.minimum, row.maximum);
            }
            // A file's values may be anything: sums wrap, never panic.
            s.calls = s.calls.wrapping_add(row.num_calls);
            s.lanes = s.lanes.wrapping_add(1);
            s.total = s.total.wrapping_add(row.total);
            s.own = s.own.wrapping_add(row.exclusive);
            s.min = s.min.min(row.minimum);
            s.max = s.max.max(row.maximum);
        }
        let session_ns = by_region.iter().map(|(_, s)| s.total).max().unwrap_or(0);
        let nodes = by_region
            .into_iter()
            .map(|(id, mut stat)| {
                stat.mean = if stat.calls > 0 {
                    stat.total as f64 / stat.calls as f64
                } else {
                    0.0
                };
                stat.p95 = -1; // unknown without events
                Node {
                    name: name(id),
                    tags: Vec::new(),
                    stat,
                    children: Vec::new(),
                }
            })
            .collect();
        return Ok(FileTree {
            groups: vec![("all".to_owned(), nodes)],
            session_ns,
        });
    }
    let tree = reader
        .call_tree(grouping)
        .map_err(|e| Failure(e.to_string()))?;
    let tags = region_tags(reader);
    /// A node of the tree by name, with its statistics: the quantities the
    /// reader's tree always knows (minimum, maximum, lanes, p95).
    fn convert(n: CallNode<'_>, tags: &HashMap<u32, Vec<String>>) -> Node {
        let region = n.region().unwrap_or(u32::MAX);
        Node {
            name: n.name().to_owned(),
            tags: tags.get(&region).cloned().unwrap_or_default(),
            stat: Stat {
                calls: n.num_calls(),
                total: n.total(),
                own: n.exclusive(),
                mean: n.mean(),
                p95: n.quantile(0.95).unwrap_or(-1),
                min: n.minimum().unwrap_or(0),
                max: n.maximum().unwrap_or(0),
                lanes: n.lanes().unwrap_or(0),
            },
            children: n.children().map(|c| convert(c, tags)).collect(),
        }
    }
    let mut groups: Vec<(String, Vec<Node>)> = tree
        .roots()
        .map(|root| {
            let nodes = root.children().map(|c| convert(c, &tags)).collect();
            (root.name().to_owned(), nodes)
        })
        .collect();
    if group_tasks && grouping == Grouping::Lane {
        groups = group_task_lanes(reader, tree.lanes(), groups);
    }
    Ok(FileTree {
        groups,
        session_ns: tree.last_end().saturating_sub(tree.first_start()),
    })
}

/// The groups of a tree by lane with the task lanes of each rank merged
/// by task name (the task's region): one group "rank R - tasks NAME (N
/// lanes)" in place of N, at the place of the first, its paths' calls and
/// times summed (their p95 unknown once two lanes add up). Thread lanes
/// stay as they are.
pub(crate) fn group_task_lanes(
    reader: &ProfileReader,
    lanes: &[scope_profiler::Lane],
    groups: Vec<(String, Vec<Node>)>,
) -> Vec<(String, Vec<Node>)> {
    let task_names: HashMap<i64, &str> = reader
        .tasks()
        .iter()
        .map(|t| (t.index, t.name.as_str()))
        .collect();
    // The label `call_tree` gives each lane's group, and its task's key.
    let key_of: HashMap<String, (u32, String)> = lanes
        .iter()
        .filter(|l| l.task >= 0)
        .map(|l| {
            let name = task_names.get(&l.task).copied().unwrap_or("?");
            (
                format!("rank {} - {}", l.rank, l.name),
                (l.rank, name.to_owned()),
            )
        })
        .collect();
    let mut out: Vec<(String, Vec<Node>)> = Vec::new();
    // Per task key: its place in `out` and its number of lanes.
    let mut merged: HashMap<(u32, String), (usize, u64)> = HashMap::new();
    for (label, nodes) in groups {
        let Some(key) = key_of.get(&label) else {
            out.push((label, nodes));
            continue;
        };
        match merged.get_mut(key) {
            Some((at, n)) => {
                *n += 1;
                merge_nodes(&mut out[*at].1, nodes);
            }
            None => {
                merged.insert(key.clone(), (out.len(), 1));
                out.push((String::new(), nodes));
            }
        }
    }
    for ((rank, name), (at, n)) in merged {
        let lanes = if n == 1 { "lane" } else { "lanes" };
        out[at].0 = format!("rank {rank} - tasks {name} ({n} {lanes})");
    }
    out
}

/// Adds `from`'s paths into `into`, by name at each level.
fn merge_nodes(into: &mut Vec<Node>, from: Vec<Node>) {
    for node in from {
        match into.iter_mut().find(|m| m.name == node.name) {
            Some(m) => {
                m.stat.absorb(&node.stat);
                merge_nodes(&mut m.children, node.children);
            }
            None => into.push(node),
        }
    }
}

/// Which regions `inspect` shows.
#[derive(Clone, Debug, Default)]
pub(crate) struct Filter {
    pub tag: Option<String>,
    pub region: Option<String>,
}

impl Filter {
    fn matches(&self, node: &Node) -> bool {
        self.tag.as_ref().is_none_or(|t| node.tags.contains(t))
            && self.region.as_ref().is_none_or(|g| glob(g, &node.name))
    }

    fn active(&self) -> bool {
        self.tag.is_some() || self.region.is_some()
    }

    /// The nodes kept: those that match and the paths to them.
    pub(crate) fn apply(&self, nodes: &[Node]) -> Vec<Node> {
        if !self.active() {
            return nodes.to_vec();
        }
        nodes
            .iter()
            .filter_map(|n| {
                let children = self.apply(&n.children);
                (self.matches(n) || !children.is_empty()).then(|| Node {
                    children,
                    ..n.clone()
                })
            })
            .collect()
    }
}

/// Shell-style glob: `*` any run, `?` one character.
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

fn node_json(node: &Node) -> Value {
    json!({
        "name": node.name,
        "calls": node.stat.calls,
        "total_ns": node.stat.total,
        "own_ns": node.stat.own,
        "mean_ns": node.stat.mean,
        "p95_ns": if node.stat.p95 < 0 { Value::Null } else { json!(node.stat.p95) },
        "min_ns": node.stat.min,
        "max_ns": node.stat.max,
        "lanes": node.stat.lanes,
        "tags": node.tags,
        "children": node.children.iter().map(node_json).collect::<Vec<_>>(),
    })
}

/// A file's statistics as JSON: metadata, per-region totals, the tree.
pub(crate) fn tree_json(
    path: &Path,
    reader: &ProfileReader,
    tree: &FileTree,
    filter: &Filter,
) -> Value {
    let metadata: serde_json::Map<String, Value> = reader
        .metadata()
        .iter()
        .map(|(k, v)| (k.clone(), value_json(v)))
        .collect();
    let regions: Vec<Value> = region_stats(reader)
        .unwrap_or_default()
        .into_iter()
        .map(|(name, s)| {
            json!({"name": name, "calls": s.calls, "total_ns": s.total, "own_ns": s.own, "mean_ns": s.mean})
        })
        .collect();
    json!({
        "counters": counters_json(reader),
        "file": path.display().to_string(),
        "schema": reader.schema(),
        "aggregate": reader.is_aggregate(),
        "events": reader.event_count(),
        "session_ns": tree.session_ns,
        "metadata": metadata,
        "recording_notes": recording_notes(reader),
        "regions": regions,
        "groups": tree.groups.iter().map(|(label, nodes)| json!({
            "label": label,
            "tree": filter.apply(nodes).iter().map(node_json).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// The region counters (allocations, perf events) as JSON: per region and
/// rank, the calls and per event its inclusive and own totals, with the
/// derived `ipc` and `alloc_bytes_per_call` where they apply.
pub(crate) fn counters_json(reader: &ProfileReader) -> Vec<Value> {
    reader
        .counters()
        .iter()
        .map(|c| {
            let events: serde_json::Map<String, Value> = c
                .event_names
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let v = json!({"inclusive": c.inclusive.get(i), "own": c.exclusive.get(i)});
                    (e.clone(), v)
                })
                .collect();
            json!({
                "name": c.name,
                "rank": c.rank,
                "calls": c.num_calls,
                "events": events,
                "ipc": c.ipc(),
                "alloc_bytes_per_call": c.per_call("alloc-bytes"),
            })
        })
        .collect()
}

/// A node of the side-by-side tree of several files.
#[derive(Clone, Debug, Default)]
pub(crate) struct Merged {
    pub name: String,
    pub stats: Vec<Option<Stat>>,
    pub children: Vec<Merged>,
}

/// Merges the files' trees by group label and call path.
pub(crate) fn merge(
    files: &[(std::path::PathBuf, ProfileReader, FileTree)],
    filter: &Filter,
) -> Vec<(String, Vec<Merged>)> {
    let n = files.len();
    let mut groups: Vec<(String, Vec<Merged>)> = Vec::new();
    fn add(into: &mut Vec<Merged>, nodes: &[Node], file: usize, n: usize) {
        for node in nodes {
            let i = match into.iter().position(|m| m.name == node.name) {
                Some(i) => i,
                None => {
                    into.push(Merged {
                        name: node.name.clone(),
                        stats: vec![None; n],
                        children: Vec::new(),
                    });
                    into.len() - 1
                }
            };
            into[i].stats[file] = Some(node.stat.clone());
            add(&mut into[i].children, &node.children, file, n);
        }
    }
    for (file, (_, _, tree)) in files.iter().enumerate() {
        for (label, nodes) in &tree.groups {
            let i = match groups.iter().position(|(l, _)| l == label) {
                Some(i) => i,
                None => {
                    groups.push((label.clone(), Vec::new()));
                    groups.len() - 1
                }
            };
            add(&mut groups[i].1, &filter.apply(nodes), file, n);
        }
    }
    groups
}

/// Per-region totals (over every rank and call path), by name, in region order.
pub(crate) fn region_stats(reader: &ProfileReader) -> Result<Vec<(String, Stat)>, Failure> {
    let names = reader.region_names();
    let mut stats: Vec<Option<Stat>> = vec![None; names.len()];
    let mut add = |id: u32, calls: u64, total: i64, own: i64| {
        if let Some(slot) = stats.get_mut(id as usize) {
            let s = slot.get_or_insert_with(Stat::default);
            s.calls = s.calls.wrapping_add(calls);
            s.total = s.total.wrapping_add(total);
            s.own = s.own.wrapping_add(own);
        }
    };
    if reader.is_aggregate() {
        for r in reader.aggregates() {
            add(r.region_id, r.num_calls, r.total, r.exclusive);
        }
    } else if reader.has_summaries() && reader.rows().iter().all(|r| r.exclusive >= 0) {
        for r in reader.rows() {
            add(r.region_id, r.event_count, r.stats.total, r.exclusive);
        }
    } else {
        let tree = reader
            .call_tree(Grouping::All)
            .map_err(|e| Failure(e.to_string()))?;
        for node in tree.nodes() {
            if let Some(region) = node.region() {
                add(region, node.num_calls(), node.total(), node.exclusive());
            }
        }
    }
    Ok(names
        .iter()
        .zip(stats)
        .filter_map(|(name, s)| {
            s.map(|mut s| {
                s.mean = if s.calls > 0 {
                    s.total as f64 / s.calls as f64
                } else {
                    0.0
                };
                (name.clone(), s)
            })
        })
        .collect())
}

/// One region in a diff: its statistics in the base and the new file.
#[derive(Clone, Debug)]
pub(crate) struct DiffRow {
    pub name: String,
    pub base: Option<Stat>,
    pub new: Option<Stat>,
}

/// Regions of both files, base order first.
pub(crate) fn diff(base: &[(String, Stat)], new: &[(String, Stat)]) -> Vec<DiffRow> {
    let new_by: HashMap<&str, &Stat> = new.iter().map(|(n, s)| (n.as_str(), s)).collect();
    let base_by: HashMap<&str, &Stat> = base.iter().map(|(n, s)| (n.as_str(), s)).collect();
    let mut rows: Vec<DiffRow> = base
        .iter()
        .map(|(name, s)| DiffRow {
            name: name.clone(),
            base: Some(s.clone()),
            new: new_by.get(name.as_str()).map(|s| (*s).clone()),
        })
        .collect();
    rows.extend(
        new.iter()
            .filter(|(n, _)| !base_by.contains_key(n.as_str()))
            .map(|(name, s)| DiffRow {
                name: name.clone(),
                base: None,
                new: Some(s.clone()),
            }),
    );
    rows
}

pub(crate) fn metric_name(metric: Metric) -> &'static str {
    match metric {
        Metric::Total => "total",
        Metric::Own => "own",
        Metric::Mean => "mean",
    }
}

pub(crate) fn metric_value(stat: &Stat, metric: Metric) -> f64 {
    match metric {
        Metric::Total => stat.total as f64,
        Metric::Own => stat.own as f64,
        Metric::Mean => stat.mean,
    }
}

/// Percent change of `metric` from base to new; `None` without both or
/// with a zero base.
pub(crate) fn change_pct(row: &DiffRow, metric: Metric) -> Option<f64> {
    let (b, n) = (row.base.as_ref()?, row.new.as_ref()?);
    let (b, n) = (metric_value(b, metric), metric_value(n, metric));
    (b != 0.0).then(|| (n - b) / b * 100.0)
}

/// The regions over budget (and, with `fail_on_new`, the new ones).
pub(crate) fn check(
    rows: &[DiffRow],
    metric: Metric,
    max_regression: f64,
    fail_on_new: bool,
) -> Vec<String> {
    rows.iter()
        .filter(|r| match (&r.base, &r.new) {
            (None, Some(_)) => fail_on_new,
            (Some(_), Some(_)) => change_pct(r, metric).is_some_and(|p| p > max_regression),
            _ => false,
        })
        .map(|r| r.name.clone())
        .collect()
}

/// What happened to a region between the two files, `threshold` in percent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Status {
    Regression,
    New,
    Improvement,
    Gone,
    Unchanged,
}

impl Status {
    pub(crate) fn of(row: &DiffRow, metric: Metric, threshold: f64) -> Status {
        match (&row.base, &row.new) {
            (None, _) => Status::New,
            (_, None) => Status::Gone,
            _ => match change_pct(row, metric) {
                Some(p) if p > threshold => Status::Regression,
                Some(p) if p < -threshold => Status::Improvement,
                _ => Status::Unchanged,
            },
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Status::Regression => "regression",
            Status::New => "new",
            Status::Improvement => "improvement",
            Status::Gone => "gone",
            Status::Unchanged => "unchanged",
        }
    }
}

/// The diff as JSON, one object per region; `status` says what `threshold`
/// (percent of `metric`) makes of its change.
pub(crate) fn diff_json(rows: &[DiffRow], metric: Metric, threshold: f64) -> Value {
    let stat = |s: &Option<Stat>| match s {
        Some(s) => {
            json!({"calls": s.calls, "total_ns": s.total, "own_ns": s.own, "mean_ns": s.mean})
        }
        None => Value::Null,
    };
    Value::Array(
        rows.iter()
            .map(|r| {
                json!({
                    "name": r.name,
                    "base": stat(&r.base),
                    "new": stat(&r.new),
                    "total_pct": change_pct(r, Metric::Total),
                    "own_pct": change_pct(r, Metric::Own),
                    "mean_pct": change_pct(r, Metric::Mean),
                    "status": Status::of(r, metric, threshold).name(),
                })
            })
            .collect(),
    )
}

/// A metadata value as JSON: numbers, strings, booleans and null as
/// themselves, a list or object kept as JSON text parsed back (its text,
/// as a string, if it does not parse).
pub(crate) fn value_json(value: &scope_profiler::Value) -> Value {
    use scope_profiler::Value as V;
    match value {
        V::Int(i) => json!(i),
        V::UInt(u) => json!(u),
        V::Float(f) => json!(f),
        V::Bool(b) => json!(b),
        V::Str(s) => json!(s),
        V::Json(raw) => serde_json::from_str(raw).unwrap_or_else(|_| json!(raw)),
        _ => Value::Null,
    }
}

/// What the recording kept out of the file's events, from its metadata,
/// one sentence each: calls dropped past the limits (in all, when events
/// stopped, and per region), why spilling stopped, and, for a file with no
/// calls, traced functions that ran outside any entrypoint (issue 29,
/// items 6 and 7b). Empty for a file that kept everything.
pub(crate) fn recording_notes(reader: &ProfileReader) -> Vec<String> {
    use scope_profiler::Value as V;
    let int = |key: &str| match reader.metadata().iter().find(|(k, _)| k == key) {
        Some((_, V::Int(v))) => Some(*v),
        _ => None,
    };
    let text = |key: &str| match reader.metadata().iter().find(|(k, _)| k == key) {
        Some((_, V::Str(v))) => Some(v.clone()),
        _ => None,
    };
    let mut notes = Vec::new();
    if let Some(dropped) = int("dropped_calls").filter(|&n| n > 0) {
        let when = match (int("events_stopped_time_ns"), int("start_time_ns")) {
            (Some(stop), Some(start)) => format!(
                "; events stop {} into the session",
                crate::units::duration((stop - start) as f64)
            ),
            _ => String::new(),
        };
        notes.push(format!(
            "{dropped} calls were counted but not recorded (past the memory or disk limit){when}: \
             they are not in the events, the tree or the exports"
        ));
        let by_region: serde_json::Map<String, Value> = text("dropped_calls_by_region")
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default();
        for (region, v) in &by_region {
            let calls = v.get("calls").and_then(Value::as_u64).unwrap_or(0);
            let total = v.get("total_ns").and_then(Value::as_f64).unwrap_or(0.0);
            notes.push(format!(
                "  {region}: {calls} calls not in the events ({} in all)",
                crate::units::duration(total)
            ));
        }
    }
    if let Some(error) = text("spill_error") {
        notes.push(format!("spilling stopped: {error}"));
    }
    let not_counted: Vec<String> = text("perf_events_not_counted")
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default();
    if !not_counted.is_empty() {
        notes.push(format!(
            "{} thread(s) counted no perf events (their perf group could not be opened), \
             so the regions' perf counts leave their calls out:",
            not_counted.len()
        ));
        notes.extend(not_counted.iter().map(|t| format!("  {t}")));
    }
    // A sampled session's samples that were not kept, and its threads
    // that could not be sampled (their time has no samples, not zero).
    if let Some(missed) = int("samples_missed").filter(|&n| n > 0) {
        notes.push(format!(
            "{missed} samples were not kept (past the samples' memory bound, or lost by the \
             kernel when a ring was full): the regions' sample counts leave them out"
        ));
    }
    let not_sampled: Vec<String> = text("samples_not_taken")
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default();
    if !not_sampled.is_empty() {
        notes.push(format!(
            "{} thread(s) could not be sampled (their sampling event could not be opened), \
             so their time has no samples:",
            not_sampled.len()
        ));
        notes.extend(not_sampled.iter().map(|t| format!("  {t}")));
    }
    if reader.event_count() == 0
        && !reader.is_aggregate()
        && let Some(name) = text("traced_function_outside_entrypoints")
    {
        notes.push(format!(
            "no calls were recorded: traced functions (such as {name}) ran outside any \
                 entrypoint; mark one with #[profile(recursive)], or record every traced \
                 function with Options::trace_all(true) (SCOPE_PROFILER_TRACE_ALL=1)"
        ));
    }
    notes
}
