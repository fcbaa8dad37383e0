//! Plain-text tables as wide as the terminal (or `--width`): numeric
//! columns right-aligned, as wide as their widest cell, two spaces apart;
//! the name column takes the rest, names cut in the middle.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use scope_profiler_reader::ProfileReader;

use crate::stats::{self, DiffRow, FileTree, Merged, Stat};
use crate::units::duration;
use crate::width::{cut, fit, printable};
use crate::{Metric, SortKey};

/// Spaces between two columns.
const GAP: usize = 2;

/// Narrowest name column, whatever the width.
const MIN_NAME: usize = 16;

/// A line of a table: a row of cells (the name, then right-aligned
/// numbers), or text printed as is.
enum Line {
    Row(Vec<String>),
    Text(String),
}

/// Writes `lines` in `width` columns: each numeric column as wide as its
/// widest cell, the name column what is left (at least [`MIN_NAME`]),
/// names longer than it cut in the middle.
fn write_table(out: &mut impl Write, lines: &[Line], width: usize) -> io::Result<()> {
    // Names and notes from a file reach the terminal escaped.
    let lines: Vec<Line> = lines
        .iter()
        .map(|line| match line {
            Line::Text(text) => Line::Text(printable(text)),
            Line::Row(cells) => Line::Row(cells.iter().map(|c| printable(c)).collect()),
        })
        .collect();
    let lines = &lines[..];
    let mut widths: Vec<usize> = Vec::new();
    for line in lines {
        if let Line::Row(cells) = line {
            if widths.len() < cells.len() {
                widths.resize(cells.len(), 0);
            }
            for (w, c) in widths.iter_mut().zip(cells) {
                *w = (*w).max(c.chars().count());
            }
        }
    }
    let numbers: usize = widths.iter().skip(1).map(|w| w + GAP).sum();
    let name = widths
        .first()
        .copied()
        .unwrap_or(0)
        .min(width.saturating_sub(numbers))
        .max(MIN_NAME);
    for line in lines {
        match line {
            Line::Text(text) => writeln!(out, "{text}")?,
            Line::Row(cells) => {
                let mut text = fit(cells.first().map_or("", String::as_str), name);
                for (c, w) in cells.iter().zip(&widths).skip(1) {
                    text.push_str(&format!("{:GAP$}{c:>w$}", ""));
                }
                writeln!(out, "{}", text.trim_end())?;
            }
        }
    }
    Ok(())
}

fn sort(nodes: &mut [Merged], key: SortKey) {
    let first = |m: &Merged| m.stats.iter().flatten().next().cloned().unwrap_or_default();
    match key {
        SortKey::Name => nodes.sort_by(|a, b| a.name.cmp(&b.name)),
        SortKey::Total => nodes.sort_by_key(|m| std::cmp::Reverse(first(m).total)),
        SortKey::Own => nodes.sort_by_key(|m| std::cmp::Reverse(first(m).own)),
        SortKey::Calls => nodes.sort_by_key(|m| std::cmp::Reverse(first(m).calls)),
    }
}

/// How `print_tree` lays out the tree.
pub(crate) struct TreeLayout {
    pub key: SortKey,
    pub top: Option<usize>,
    /// Width of the table in characters.
    pub width: usize,
}

/// The call tree of one or more files (side by side). The `%` column is
/// [`stats::share_pct`].
pub(crate) fn print_tree(
    out: &mut impl Write,
    files: &[(PathBuf, ProfileReader, FileTree)],
    groups: &[(String, Vec<Merged>)],
    layout: &TreeLayout,
) -> io::Result<()> {
    let single = files.len() == 1;
    for (i, (path, reader, tree)) in files.iter().enumerate() {
        let about = format!(
            "  (schema {}, {} calls, session {}{})",
            reader.schema(),
            reader.event_count(),
            duration(tree.session_ns as f64),
            if reader.is_aggregate() {
                ", aggregate: totals only"
            } else {
                ""
            }
        );
        // The path gives way (cut in the middle) so the line fits the width.
        let label = format!("[{}] ", i + 1);
        let room = layout
            .width
            .saturating_sub(label.chars().count() + about.chars().count())
            .max(16);
        let path = crate::width::cut(&path.display().to_string(), room);
        writeln!(out, "{label}{path}{about}")?;
        for note in crate::stats::recording_notes(reader) {
            writeln!(out, "    note: {note}")?;
        }
    }
    let mut header = vec!["region".to_owned()];
    for i in 0..files.len() {
        if single {
            header.extend(["calls", "total", "own", "mean", "p95", "%"].map(str::to_owned));
        } else {
            header.extend([
                format!("calls[{}]", i + 1),
                format!("total[{}]", i + 1),
                format!("%[{}]", i + 1),
            ]);
        }
    }
    let mut lines = Vec::new();
    for (label, nodes) in groups {
        lines.push(Line::Text(String::new()));
        if groups.len() > 1 || label != "all" {
            lines.push(Line::Text(format!("== {label}")));
        }
        lines.push(Line::Row(header.clone()));
        let mut nodes = nodes.clone();
        tree_lines(&mut lines, files, &mut nodes, 0, layout);
    }
    write_table(out, &lines, layout.width)?;
    if groups.iter().any(|(_, nodes)| !nodes.is_empty()) {
        writeln!(
            out,
            "\n%: share of the session's wall time on the lanes a path ran on, total / (session x lanes)"
        )?;
    }
    Ok(())
}

fn tree_lines(
    lines: &mut Vec<Line>,
    files: &[(PathBuf, ProfileReader, FileTree)],
    nodes: &mut [Merged],
    depth: usize,
    layout: &TreeLayout,
) {
    sort(nodes, layout.key);
    let shown = layout.top.unwrap_or(usize::MAX).min(nodes.len());
    let single = files.len() == 1;
    let indent = "  ".repeat(depth.min(20));
    for node in nodes[..shown].iter_mut() {
        let mut row = vec![format!("{indent}{}", node.name)];
        for (i, stat) in node.stats.iter().enumerate() {
            let session = files[i].2.session_ns;
            match stat {
                Some(s) => {
                    let pct = format!("{:.1}", stats::share_pct(s, session));
                    if single {
                        let p95 = if s.p95 < 0 {
                            "-".to_owned()
                        } else {
                            duration(s.p95 as f64)
                        };
                        row.extend([
                            s.calls.to_string(),
                            duration(s.total as f64),
                            duration(s.own as f64),
                            duration(s.mean),
                            p95,
                            pct,
                        ]);
                    } else {
                        row.extend([s.calls.to_string(), duration(s.total as f64), pct]);
                    }
                }
                None => {
                    let n = if single { 6 } else { 3 };
                    row.extend(std::iter::repeat_n(String::new(), n));
                }
            }
        }
        lines.push(Line::Row(row));
        tree_lines(lines, files, &mut node.children, depth + 1, layout);
    }
    if shown < nodes.len() {
        lines.push(Line::Text(format!(
            "{indent}... {} more",
            nodes.len() - shown
        )));
    }
}

fn signed_pct(p: Option<f64>) -> String {
    match p {
        Some(p) => format!("{p:+.1}%"),
        None => "-".to_owned(),
    }
}

fn cell(s: &Option<Stat>, f: impl Fn(&Stat) -> String) -> String {
    s.as_ref().map_or_else(|| "-".to_owned(), f)
}

/// The per-region diff table, largest absolute change of `metric` first,
/// in `width` columns: calls as `base -> new`, then the new total, own and
/// mean, each with its change in percent.
pub(crate) fn print_diff(
    out: &mut impl Write,
    base: &Path,
    new: &Path,
    rows: &[DiffRow],
    metric: Metric,
    width: usize,
) -> io::Result<()> {
    // The paths give way (cut in the middle) so the line fits the width.
    let room = (width.saturating_sub("base:    new: ".len() + 2) / 2).max(16);
    let (base, new) = (base.display().to_string(), new.display().to_string());
    writeln!(
        out,
        "base: {}   new: {}",
        crate::width::cut(&base, room),
        crate::width::cut(&new, room)
    )?;
    let mut lines = vec![Line::Row(
        ["region", "calls", "total", "Δ%", "own", "Δ%", "mean", "Δ%"]
            .map(str::to_owned)
            .to_vec(),
    )];
    let mut rows: Vec<&DiffRow> = rows.iter().collect();
    let delta = |r: &DiffRow| {
        let v = |s: &Option<Stat>| s.as_ref().map_or(0.0, |s| stats::metric_value(s, metric));
        (v(&r.new) - v(&r.base)).abs()
    };
    rows.sort_by(|a, b| delta(b).total_cmp(&delta(a)));
    for r in rows {
        let calls = format!(
            "{} -> {}",
            cell(&r.base, |s| s.calls.to_string()),
            cell(&r.new, |s| s.calls.to_string())
        );
        let mut row = vec![r.name.clone(), calls];
        for (m, get) in [
            (
                Metric::Total,
                (|s: &Stat| s.total as f64) as fn(&Stat) -> f64,
            ),
            (Metric::Own, |s: &Stat| s.own as f64),
            (Metric::Mean, |s: &Stat| s.mean),
        ] {
            row.push(cell(&r.new, |s| duration(get(s))));
            row.push(signed_pct(stats::change_pct(r, m)));
        }
        lines.push(Line::Row(row));
    }
    write_table(out, &lines, width)
}

/// The region counters of each file that has them (allocations, perf
/// events; `rank<N>/perf_events`): per region and rank, the calls, each
/// event's inclusive total (own in parentheses where the file has it), and
/// the derived columns: instructions per cycle where both were counted,
/// bytes allocated per call where allocations were.
pub(crate) fn print_counters(
    out: &mut impl Write,
    files: &[(PathBuf, ProfileReader, FileTree)],
) -> io::Result<()> {
    for (path, reader, _) in files {
        let counters = reader.counters();
        if counters.is_empty() {
            continue;
        }
        // The Python package's files have inclusive totals only.
        let has_own = counters.iter().any(|c| c.exclusive.iter().any(|&o| o != 0));
        let of = match files.len() {
            1 => String::new(),
            _ => format!(" of {}", path.display()),
        };
        let own = if has_own { "; own in parentheses" } else { "" };
        writeln!(out, "\nRegion counters{of} (inclusive{own})")?;
        let mut events: Vec<&str> = Vec::new();
        for c in counters {
            for e in &c.event_names {
                if !events.contains(&e.as_str()) {
                    events.push(e);
                }
            }
        }
        let ipc = events.contains(&"cycles") && events.contains(&"instructions");
        let bytes = events.contains(&"alloc-bytes");
        let ranks = counters.iter().any(|c| c.rank != 0);
        // Cells first, then each column as wide as its widest cell.
        let mut header = vec!["region".to_owned(), "calls".to_owned()];
        if ranks {
            header.push("rank".to_owned());
        }
        header.extend(events.iter().map(|e| (*e).to_owned()));
        if ipc {
            header.push("IPC".to_owned());
        }
        if bytes {
            header.push("B alloc/call".to_owned());
        }
        let mut rows = vec![header];
        for c in counters {
            let mut row = vec![cut(&c.name, 40), c.num_calls.to_string()];
            if ranks {
                row.push(c.rank.to_string());
            }
            for e in &events {
                row.push(match (c.get(e), c.exclusive_of(e)) {
                    (Some(v), Some(own)) if has_own => format!("{v} ({own})"),
                    (Some(v), _) => v.to_string(),
                    (None, _) => "-".to_owned(),
                });
            }
            if ipc {
                row.push(
                    c.ipc()
                        .map_or_else(|| "-".to_owned(), |v| format!("{v:.2}")),
                );
            }
            if bytes {
                row.push(
                    c.per_call("alloc-bytes")
                        .map_or_else(|| "-".to_owned(), |v| format!("{v:.1}")),
                );
            }
            rows.push(row);
        }
        let widths: Vec<usize> = (0..rows[0].len())
            .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
            .collect();
        for row in &rows {
            let mut line = format!("{:<w$}", row[0], w = widths[0]);
            for (cell, w) in row.iter().zip(&widths).skip(1) {
                line.push_str(&format!("  {cell:>w$}"));
            }
            writeln!(out, "{}", line.trim_end())?;
        }
    }
    Ok(())
}

/// The captured source of each region in `names`, per file: its place
/// (`file:line`) and its lines, indented, as the Python package's
/// `inspect --source` prints them.
pub(crate) fn print_sources(
    out: &mut impl Write,
    files: &[(PathBuf, ProfileReader, FileTree)],
    names: &[String],
) -> io::Result<()> {
    writeln!(out, "\nSource ({})", names.len())?;
    for (path, reader, _) in files {
        if files.len() > 1 {
            writeln!(out, "{}", path.display())?;
        }
        for name in names {
            let id = reader.region_names().iter().position(|n| n == name);
            let row = id.and_then(|id| {
                let rows = reader.rows().iter().filter(|r| r.region_id as usize == id);
                let mut rows = rows.peekable();
                let first = rows.peek().copied();
                rows.find(|r| !r.source_text.is_empty()).or(first)
            });
            match row {
                None => writeln!(out, "  {}: no such region", printable(name))?,
                Some(row) => {
                    let place = match (row.source_file.as_str(), row.source_line) {
                        ("", _) => String::new(),
                        (file, line) if line >= 0 => format!("  ({file}:{line})"),
                        (file, _) => format!("  ({file})"),
                    };
                    writeln!(out, "  {}{}", printable(name), printable(&place))?;
                    if row.source_text.is_empty() {
                        writeln!(
                            out,
                            "    (no source captured: record with \
                             Options::capture_region_source(true))"
                        )?;
                    }
                    for line in row.source_text.lines() {
                        writeln!(out, "    {line}")?;
                    }
                }
            }
        }
    }
    Ok(())
}
