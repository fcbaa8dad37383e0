//! `diff` and `check` as Markdown, for a pull-request comment: a summary
//! line, then one table, regressions first, with the threshold used.

use std::io::{self, Write};
use std::path::Path;

use crate::Metric;
use crate::stats::{self, DiffRow, Stat, Status};
use crate::units::duration;

/// A status's mark in the table.
fn mark(status: Status) -> &'static str {
    match status {
        Status::Regression => "🔴",
        Status::New => "🆕",
        Status::Improvement => "🟢",
        Status::Gone => "➖",
        Status::Unchanged => "",
    }
}

/// Rows shown at most; GitHub comments hold 65536 characters.
const MAX_ROWS: usize = 60;

/// A table cell: `|` escaped, code spans for names.
fn code(name: &str) -> String {
    let name = crate::width::printable(name);
    format!("`{}`", name.replace('`', "'").replace('|', "\\|"))
}

fn file_name(path: &Path) -> String {
    code(&path.display().to_string())
}

/// The diff as Markdown: `threshold` (percent of `metric`) decides what is
/// a regression or an improvement; `verdict` is check's first line, if any.
pub(crate) fn write_diff(
    out: &mut impl Write,
    (base, new): (&Path, &Path),
    rows: &[DiffRow],
    metric: Metric,
    threshold: f64,
    verdict: Option<&str>,
) -> io::Result<()> {
    let mut rows: Vec<(Status, &DiffRow)> = rows
        .iter()
        .map(|r| (Status::of(r, metric, threshold), r))
        .collect();
    let change = |r: &DiffRow| stats::change_pct(r, metric).unwrap_or(0.0);
    let value = |s: &Option<Stat>| s.as_ref().map_or(0.0, |s| stats::metric_value(s, metric));
    rows.sort_by(|(sa, a), (sb, b)| {
        sa.cmp(sb).then_with(|| match sa {
            Status::Regression | Status::Improvement => change(b).abs().total_cmp(&change(a).abs()),
            _ => (value(&b.new) + value(&b.base)).total_cmp(&(value(&a.new) + value(&a.base))),
        })
    });
    let count = |s: Status| rows.iter().filter(|(x, _)| *x == s).count();
    if let Some(v) = verdict {
        writeln!(out, "{v}\n")?;
    }
    writeln!(
        out,
        "**scope-prof diff** {} → {}\n",
        file_name(base),
        file_name(new)
    )?;
    writeln!(
        out,
        "Metric: {}; threshold: ±{threshold}% (a larger change is a regression or an \
         improvement). {} regressions, {} improvements, {} new, {} gone, {} unchanged.\n",
        stats::metric_name(metric),
        count(Status::Regression),
        count(Status::Improvement),
        count(Status::New),
        count(Status::Gone),
        count(Status::Unchanged),
    )?;
    writeln!(
        out,
        "| | region | calls | total | Δ total | own | Δ own | mean | Δ mean |"
    )?;
    writeln!(out, "|---|---|---:|---:|---:|---:|---:|---:|---:|")?;
    let cell = |s: &Option<Stat>, f: &dyn Fn(&Stat) -> String| s.as_ref().map_or("-".into(), f);
    let pct = |r: &DiffRow, m: Metric| match stats::change_pct(r, m) {
        Some(p) => format!("{p:+.1}%"),
        None => "-".to_owned(),
    };
    for (status, r) in rows.iter().take(MAX_ROWS) {
        writeln!(
            out,
            "| {} | {} | {} → {} | {} | {} | {} | {} | {} | {} |",
            mark(*status),
            code(&r.name),
            cell(&r.base, &|s| s.calls.to_string()),
            cell(&r.new, &|s| s.calls.to_string()),
            cell(&r.new, &|s| duration(s.total as f64)),
            pct(r, Metric::Total),
            cell(&r.new, &|s| duration(s.own as f64)),
            pct(r, Metric::Own),
            cell(&r.new, &|s| duration(s.mean)),
            pct(r, Metric::Mean),
        )?;
    }
    if rows.len() > MAX_ROWS {
        let hidden = &rows[MAX_ROWS..];
        let regressions = hidden
            .iter()
            .filter(|(s, _)| *s == Status::Regression)
            .count();
        writeln!(
            out,
            "\n… {} more regions ({regressions} of them regressions past the threshold).",
            hidden.len()
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, base: Option<i64>, new: Option<i64>) -> DiffRow {
        let stat = |t: i64| Stat {
            calls: 1,
            total: t,
            own: t,
            mean: t as f64,
            ..Stat::default()
        };
        DiffRow {
            name: name.into(),
            base: base.map(stat),
            new: new.map(stat),
        }
    }

    #[test]
    fn regressions_come_first_and_pipes_are_escaped() {
        let rows = [
            row("same", Some(100), Some(101)),
            row("faster", Some(100), Some(50)),
            row("a|b", Some(100), Some(130)),
            row("added", None, Some(5)),
        ];
        let mut out = Vec::new();
        write_diff(
            &mut out,
            (Path::new("a.h5"), Path::new("b.h5")),
            &rows,
            Metric::Total,
            5.0,
            None,
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("| ")).collect();
        assert!(
            lines[1].contains("`a\\|b`") && lines[1].contains("+30.0%"),
            "{text}"
        );
        assert!(lines[2].contains("`added`"), "{text}");
        assert!(lines[3].contains("`faster`"), "{text}");
        assert!(text.contains("threshold: ±5%"), "{text}");
        assert!(text.contains("1 regressions, 1 improvements, 1 new, 0 gone, 1 unchanged"));
    }

    #[test]
    fn a_long_table_is_cut_and_says_what_it_left_out() {
        let rows: Vec<DiffRow> = (0..70)
            .map(|i| row(&format!("r{i}"), Some(100), Some(200 + i)))
            .collect();
        let mut out = Vec::new();
        let files = (Path::new("a.h5"), Path::new("b.h5"));
        write_diff(&mut out, files, &rows, Metric::Total, 5.0, None).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().filter(|l| l.starts_with("| 🔴")).count(), 60);
        assert!(
            text.contains("… 10 more regions (10 of them regressions"),
            "{text}"
        );
        assert!(text.contains("| 🔴 | `r69` |"), "largest change first");
    }
}
