//! The data of one run for the page: header, call tree (as columns, in
//! pre-order), per-region histograms, captured sources and the timeline.

use std::path::Path;

use scope_profiler::{self as sp};
use scope_profiler_reader::ProfileReader;
use scope_profiler_reader::export::Grouping;
use serde_json::{Map, Value, json};

use super::encode;
use super::timeline::{self, Timeline};
use crate::Failure;
use crate::stats;

/// Every metadata value as JSON.
pub(crate) fn metadata_json(reader: &ProfileReader) -> Map<String, Value> {
    reader
        .metadata()
        .iter()
        .map(|(k, v)| (k.clone(), crate::stats::value_json(v)))
        .collect()
}

/// A metadata value by key.
pub(crate) fn meta<'r>(reader: &'r ProfileReader, key: &str) -> Option<&'r sp::Value> {
    reader
        .metadata()
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

/// Number of MPI ranks: `mpi_size`, else the distinct ranks of the rows.
pub(crate) fn ranks(reader: &ProfileReader) -> u64 {
    if let Some(sp::Value::Int(n)) = meta(reader, "mpi_size") {
        return (*n).max(1) as u64;
    }
    let mut ranks: Vec<u32> = reader.rows().iter().map(|r| r.rank).collect();
    ranks.extend(reader.aggregates().iter().map(|r| r.rank));
    ranks.sort_unstable();
    ranks.dedup();
    ranks.len().max(1) as u64
}

/// The run's label: `label` metadata, else the file stem.
pub(crate) fn label(path: &Path, reader: &ProfileReader) -> String {
    match meta(reader, "label") {
        Some(sp::Value::Str(s)) if !s.is_empty() => s.clone(),
        _ => path
            .file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned()),
    }
}

/// Call tree columns in pre-order: `parent` is the index of the enclosing
/// node (-1 at the top).
#[derive(Default)]
struct TreeColumns {
    parent: Vec<i64>,
    region: Vec<u32>,
    calls: Vec<f64>,
    total: Vec<f64>,
    own: Vec<f64>,
    min: Vec<f64>,
    max: Vec<f64>,
    p50: Vec<f64>,
    p95: Vec<f64>,
    p99: Vec<f64>,
    /// Lanes the node's calls ran on (the `%` column divides by them).
    lanes: Vec<f64>,
}

impl TreeColumns {
    fn json(&self) -> Value {
        json!({
            "parent": self.parent, "region": self.region, "calls": self.calls,
            "total": self.total, "own": self.own, "min": self.min, "max": self.max,
            "p50": self.p50, "p95": self.p95, "p99": self.p99, "lanes": self.lanes,
        })
    }
}

/// The call tree of every lane together, with quantiles; for an aggregate
/// file, its regions (no quantiles: -1). With `timeline`, the timeline
/// too, built as the tree's walk goes by (no call kept).
fn tree(reader: &ProfileReader, timeline: bool) -> Result<(TreeColumns, i64, Timeline), Failure> {
    let mut cols = TreeColumns::default();
    if reader.is_aggregate() {
        let ft = stats::file_tree(reader, Grouping::All)?;
        for (_, nodes) in &ft.groups {
            for n in nodes {
                let id = reader.region_names().iter().position(|r| *r == n.name);
                cols.parent.push(-1);
                cols.region.push(id.unwrap_or(0) as u32);
                cols.calls.push(n.stat.calls as f64);
                cols.total.push(n.stat.total as f64);
                cols.own.push(n.stat.own as f64);
                cols.min.push(n.stat.min as f64);
                cols.max.push(n.stat.max as f64);
                cols.p50.push(-1.0);
                cols.p95.push(-1.0);
                cols.p99.push(-1.0);
                cols.lanes.push(n.stat.lanes.max(1) as f64);
            }
        }
        return Ok((cols, ft.session_ns, Timeline::default()));
    }
    let named = |e: sp::Error| Failure(format!("{}: {e}", reader.path().display()));
    let (tree, tl) = if timeline && reader.event_count() > 0 {
        let mut builder = timeline::Builder::new(reader, timeline::survey(reader)?);
        let tree = reader
            .call_tree_visiting(Grouping::All, |c| builder.call(c))
            .map_err(named)?;
        (tree, builder.finish())
    } else {
        let tree = reader.call_tree(Grouping::All).map_err(named)?;
        (tree, Timeline::default())
    };
    let mut stack = Vec::new();
    for root in tree.roots().rev() {
        for c in root.children().rev() {
            stack.push((c, -1));
        }
    }
    while let Some((n, parent)) = stack.pop() {
        let me = cols.parent.len() as i64;
        // The reader's tree knows every node's extremes, lanes and quantiles.
        let q = |q| n.quantile(q).unwrap_or(-1) as f64;
        cols.parent.push(parent);
        cols.region.push(n.region().unwrap_or(0));
        cols.calls.push(n.num_calls() as f64);
        cols.total.push(n.total() as f64);
        cols.own.push(n.exclusive() as f64);
        cols.min.push(n.minimum().unwrap_or(0) as f64);
        cols.max.push(n.maximum().unwrap_or(0) as f64);
        cols.p50.push(q(0.5));
        cols.p95.push(q(0.95));
        cols.p99.push(q(0.99));
        cols.lanes.push(n.lanes().unwrap_or(0).max(1) as f64);
        for c in n.children().rev() {
            stack.push((c, me));
        }
    }
    Ok((cols, tree.last_end().saturating_sub(tree.first_start()), tl))
}

/// Captured source text per region: `[name, file, line, text]`.
fn sources(reader: &ProfileReader) -> Vec<Value> {
    let names = reader.region_names();
    let mut seen = vec![false; names.len()];
    let mut out = Vec::new();
    for row in reader.rows() {
        let id = row.region_id as usize;
        if row.source_text.is_empty() || seen.get(id).copied().unwrap_or(true) {
            continue;
        }
        seen[id] = true;
        out.push(json!([
            names[id],
            row.source_file,
            row.source_line,
            row.source_text
        ]));
    }
    out
}

fn cells_json(c: &timeline::Cells) -> Value {
    json!({
        "offsets": encode::u32s(&c.offsets),
        "start": encode::f64s(&c.start),
        "dur": encode::f32s(&c.dur),
        "region": encode::u32s(&c.region),
        "count": encode::u32s(&c.count),
        "busy": encode::u8s(&c.busy),
    })
}

fn timeline_json(tl: &Timeline) -> Value {
    json!({
        "t0": tl.t0,
        "span": tl.span,
        "lanes": tl.lanes.iter().map(|l| json!({"label": l.label, "depths": l.depths})).collect::<Vec<_>>(),
        "widths": tl.widths,
        "levels": tl.levels.iter().map(cells_json).collect::<Vec<_>>(),
        "classes": tl.classes.iter().map(cells_json).collect::<Vec<_>>(),
        "calls": tl.calls,
        "calls_kept": tl.calls_kept,
    })
}

/// Histograms as `[region, first bin, counts...]`, only the bins from the
/// first to the last non-empty one.
fn histograms_json(tl: &Timeline) -> Vec<Value> {
    tl.histograms
        .iter()
        .enumerate()
        .filter_map(|(region, h)| {
            let first = h.iter().position(|&c| c > 0)?;
            let last = h.iter().rposition(|&c| c > 0)?;
            Some(json!([region, first, &h[first..=last]]))
        })
        .collect()
}

/// A sampled session's samples (the sample files beside the profile): each
/// region's by function and by line, and a flame graph of the regions with
/// the sampled frames below them (`null` without samples), as the page's
/// call tree is given: columns in pre-order, `parent` -1 at the top, `region`
/// an index into `names`, times in ns, `calls` the samples.
fn samples_json(path: &Path) -> Result<(Vec<Value>, Value), Failure> {
    let mut lines: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
    let mut files = Vec::new();
    for f in scope_profiler_reader::sps::files_for(path) {
        let mut s = crate::samples::read(&f)?;
        files.push(crate::samples::json(&s));
        let ns = crate::samples::ns_per_sample(&s);
        for (line, n) in crate::samples::folded(&mut s, &[]) {
            let at = lines.entry(line).or_insert((0, 0));
            *at = (at.0 + n, at.1 + n * ns);
        }
    }
    if lines.is_empty() {
        return Ok((files, Value::Null));
    }
    // A trie of the stacks, each node after its parent (as the page's
    // tree model wants them).
    let mut names: Vec<String> = Vec::new();
    let mut name_of: std::collections::HashMap<String, u32> = Default::default();
    let (mut parent, mut region, mut total, mut own, mut calls) = (
        Vec::<i64>::new(),
        Vec::<u32>::new(),
        Vec::<u64>::new(),
        Vec::<u64>::new(),
        Vec::<u64>::new(),
    );
    let mut child: std::collections::HashMap<(i64, u32), usize> = Default::default();
    for (line, &(n, ns)) in &lines {
        let mut at: i64 = -1;
        let frames: Vec<&str> = line.split(';').collect();
        for (depth, frame) in frames.iter().enumerate() {
            let id = *name_of.entry((*frame).to_owned()).or_insert_with(|| {
                names.push((*frame).to_owned());
                names.len() as u32 - 1
            });
            let node = *child.entry((at, id)).or_insert_with(|| {
                parent.push(at);
                region.push(id);
                total.push(0);
                own.push(0);
                calls.push(0);
                region.len() - 1
            });
            total[node] += ns;
            calls[node] += n;
            if depth + 1 == frames.len() {
                own[node] += ns;
            }
            at = node as i64;
        }
    }
    let tree = json!({
        "parent": parent,
        "region": region,
        "total": total,
        "own": own,
        "calls": calls,
    });
    Ok((files, json!({ "names": names, "tree": tree })))
}

/// Everything the page shows of one run; without `timeline`, no timeline
/// and no histograms (the runs of a comparison), and no pass over the
/// events when the file stores its call paths.
pub(crate) fn run_json(
    path: &Path,
    reader: &ProfileReader,
    timeline: bool,
) -> Result<Value, Failure> {
    let (tree, session_ns, tl) = tree(reader, timeline)?;
    let (samples, samples_flame) = samples_json(path)?;
    let mut notes = stats::recording_notes(reader);
    if tl.calls > tl.calls_kept && tl.calls > 0 {
        let finest = tl.widths.last().copied().unwrap_or(0.0);
        notes.push(format!(
            "timeline: {} of {} calls drawn one by one; shorter calls than {} are drawn as \
             buckets of that width (region with the most time, count, fill)",
            tl.calls_kept,
            tl.calls,
            crate::units::duration(finest)
        ));
    }
    let text = |key: &str| match meta(reader, key) {
        Some(v) => crate::stats::value_json(v),
        None => Value::Null,
    };
    Ok(json!({
        "file": path.display().to_string(),
        "label": label(path, reader),
        "date": text("timestamp"),
        "host": text("hostname"),
        "schema": reader.schema(),
        "aggregate": reader.is_aggregate(),
        "events": reader.event_count(),
        "session_ns": session_ns,
        "threads": reader.threads().len(),
        "tasks": reader.tasks().len(),
        "ranks": ranks(reader),
        "notes": notes,
        "metadata": metadata_json(reader),
        "names": reader.region_names(),
        "tree": tree.json(),
        "bins_per_octave": timeline::BINS_PER_OCTAVE,
        "histograms": histograms_json(&tl),
        "sources": sources(reader),
        "counters": crate::stats::counters_json(reader),
        "samples": samples,
        "samples_flame": samples_flame,
        "timeline": timeline_json(&tl),
    }))
}
