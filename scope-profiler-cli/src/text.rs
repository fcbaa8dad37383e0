//! Plain-text tables that fit 100 columns.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use scope_profiler::ProfileReader;

use crate::stats::{self, DiffRow, FileTree, Merged, Stat};
use crate::units::duration;
use crate::{Metric, SortKey};

/// Width of the output.
const WIDTH: usize = 100;

/// `text` cut to `width` characters (with an ellipsis), padded.
fn fit(text: &str, width: usize) -> String {
    let n = text.chars().count();
    if n <= width {
        format!("{text:<width$}")
    } else {
        let cut: String = text.chars().take(width.saturating_sub(1)).collect();
        format!("{cut}…")
    }
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

/// The call tree of one or more files (side by side).
pub(crate) fn print_tree(
    out: &mut impl Write,
    files: &[(PathBuf, ProfileReader, FileTree)],
    groups: &[(String, Vec<Merged>)],
    key: SortKey,
    top: Option<usize>,
) -> io::Result<()> {
    let single = files.len() == 1;
    // Per file: calls total own mean p95 % (one file), or calls total % (several).
    let per_file = if single { 9 * 5 + 7 } else { 9 * 2 + 7 };
    let name_width = WIDTH.saturating_sub(per_file * files.len()).max(24);
    for (i, (path, reader, tree)) in files.iter().enumerate() {
        writeln!(
            out,
            "[{}] {}  (schema {}, {} calls, session {}{})",
            i + 1,
            path.display(),
            reader.schema(),
            reader.event_count(),
            duration(tree.session_ns as f64),
            if reader.is_aggregate() {
                ", aggregate: totals only"
            } else {
                ""
            }
        )?;
        for note in crate::stats::recording_notes(reader) {
            writeln!(out, "    note: {note}")?;
        }
    }
    let mut header = fit("region", name_width);
    for i in 0..files.len() {
        if single {
            header.push_str(&format!(
                "{:>9}{:>9}{:>9}{:>9}{:>9}{:>7}",
                "calls", "total", "own", "mean", "p95", "%"
            ));
        } else {
            header.push_str(&format!(
                "{:>9}{:>9}{:>7}",
                format!("calls[{}]", i + 1),
                format!("total[{}]", i + 1),
                "%"
            ));
        }
    }
    for (label, nodes) in groups {
        writeln!(out)?;
        if groups.len() > 1 || label != "all" {
            writeln!(out, "== {label}")?;
        }
        writeln!(out, "{}", header.trim_end())?;
        let mut nodes = nodes.clone();
        print_nodes(out, files, &mut nodes, 0, name_width, key, top)?;
    }
    Ok(())
}

fn print_nodes(
    out: &mut impl Write,
    files: &[(PathBuf, ProfileReader, FileTree)],
    nodes: &mut [Merged],
    depth: usize,
    name_width: usize,
    key: SortKey,
    top: Option<usize>,
) -> io::Result<()> {
    sort(nodes, key);
    let shown = top.unwrap_or(usize::MAX).min(nodes.len());
    let single = files.len() == 1;
    for node in nodes[..shown].iter_mut() {
        let indent = "  ".repeat(depth.min(20));
        let mut line = fit(&format!("{indent}{}", node.name), name_width);
        for (i, stat) in node.stats.iter().enumerate() {
            let session = files[i].2.session_ns.max(1) as f64;
            match stat {
                Some(s) => {
                    let pct = format!("{:.1}", s.total as f64 / session * 100.0);
                    if single {
                        let p95 = if s.p95 < 0 {
                            "-".to_owned()
                        } else {
                            duration(s.p95 as f64)
                        };
                        line.push_str(&format!(
                            "{:>9}{:>9}{:>9}{:>9}{:>9}{:>7}",
                            s.calls,
                            duration(s.total as f64),
                            duration(s.own as f64),
                            duration(s.mean),
                            p95,
                            pct
                        ));
                    } else {
                        line.push_str(&format!(
                            "{:>9}{:>9}{:>7}",
                            s.calls,
                            duration(s.total as f64),
                            pct
                        ));
                    }
                }
                None => line.push_str(&" ".repeat(if single { 52 } else { 25 })),
            }
        }
        writeln!(out, "{}", line.trim_end())?;
        print_nodes(
            out,
            files,
            &mut node.children,
            depth + 1,
            name_width,
            key,
            top,
        )?;
    }
    if shown < nodes.len() {
        let indent = "  ".repeat(depth.min(20));
        writeln!(out, "{indent}... {} more", nodes.len() - shown)?;
    }
    Ok(())
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

/// The per-region diff table, largest absolute change of `metric` first.
pub(crate) fn print_diff(
    out: &mut impl Write,
    base: &Path,
    new: &Path,
    rows: &[DiffRow],
    metric: Metric,
) -> io::Result<()> {
    writeln!(out, "base: {}   new: {}", base.display(), new.display())?;
    let name_width = 28;
    writeln!(
        out,
        "{}{:>15}{:>19}{:>19}{:>19}",
        fit("region", name_width),
        "calls",
        "total",
        "own",
        "mean"
    )?;
    let mut rows: Vec<&DiffRow> = rows.iter().collect();
    let delta = |r: &DiffRow| {
        let v = |s: &Option<Stat>| s.as_ref().map_or(0.0, |s| stats::metric_value(s, metric));
        (v(&r.new) - v(&r.base)).abs()
    };
    rows.sort_by(|a, b| delta(b).total_cmp(&delta(a)));
    for r in rows {
        let calls = format!(
            "{}->{}",
            cell(&r.base, |s| s.calls.to_string()),
            cell(&r.new, |s| s.calls.to_string())
        );
        let col = |m: Metric, get: fn(&Stat) -> f64| {
            format!(
                "{} {}",
                cell(&r.new, |s| duration(get(s))),
                signed_pct(stats::change_pct(r, m))
            )
        };
        writeln!(
            out,
            "{}{:>15}{:>19}{:>19}{:>19}",
            fit(&r.name, name_width),
            calls,
            col(Metric::Total, |s| s.total as f64),
            col(Metric::Own, |s| s.own as f64),
            col(Metric::Mean, |s| s.mean),
        )?;
    }
    Ok(())
}

/// The captured source of each region in `names`, per file: its place
/// (`file:line`) and its lines, indented, as the Python package's
/// `inspect --source` prints them.
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
        let has_own = counters.iter().any(|c| c.own.iter().any(|&o| o != 0));
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
            let mut row = vec![c.name.chars().take(40).collect(), c.calls.to_string()];
            if ranks {
                row.push(c.rank.to_string());
            }
            for e in &events {
                row.push(match (c.get(e), c.own_of(e)) {
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
                None => writeln!(out, "  {name}: no such region")?,
                Some(row) => {
                    let place = match (row.source_file.as_str(), row.source_line) {
                        ("", _) => String::new(),
                        (file, line) if line >= 0 => format!("  ({file}:{line})"),
                        (file, _) => format!("  ({file})"),
                    };
                    writeln!(out, "  {name}{place}")?;
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
