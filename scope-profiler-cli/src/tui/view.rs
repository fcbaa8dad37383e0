//! How `scope-prof tui` draws its state: a header (the file, the session,
//! the sort), the call tree on the left (calls, total, own, % per row), the
//! selected region on the right (its totals, percentiles and the histogram
//! of its durations), the keys or the search being typed at the bottom.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Row, Table, TableState};

use super::model::Browser;
use super::regions::{Region, Regions};
use crate::SortKey;
use crate::report::bin_start;
use crate::stats::share_pct;
use crate::units::duration;
use crate::width::printable;

/// What the view shows besides the browser's state.
pub(crate) struct Page<'a> {
    pub title: &'a str,
    pub regions: &'a Regions,
}

fn sort_name(key: SortKey) -> &'static str {
    match key {
        SortKey::Total => "total",
        SortKey::Own => "own",
        SortKey::Calls => "calls",
        SortKey::Name => "name",
    }
}

/// Draws the whole screen; sets the browser's page height.
pub(crate) fn draw(frame: &mut Frame<'_>, b: &mut Browser, page: &Page<'_>) {
    let [head, body, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(62), Constraint::Percentage(38)]).areas(body);
    frame.render_widget(
        Paragraph::new(format!(
            "{}  session {}  sorted by {} (s)",
            printable(page.title),
            duration(b.session_ns as f64),
            sort_name(b.sort)
        ))
        .style(Style::new().add_modifier(Modifier::BOLD)),
        head,
    );
    b.page = left.height.saturating_sub(3).max(1) as usize;
    tree(frame, b, left);
    detail(frame, b, page.regions, right);
    let status = match &b.typing {
        Some(text) => format!("search: {}_   (Enter: find, Esc: cancel)", printable(text)),
        None if !b.message.is_empty() => printable(&b.message),
        None => "q quit  arrows/jk move  Enter/Space/</> open-close  e/c all  s sort  / search  n/N next/prev"
            .to_owned(),
    };
    frame.render_widget(Paragraph::new(status), foot);
}

fn tree(frame: &mut Frame<'_>, b: &Browser, area: Rect) {
    let rows = b.rows();
    let table_rows: Vec<Row<'_>> = rows
        .iter()
        .map(|&i| {
            let item = &b.items[i];
            let marker = match (item.children.is_empty(), b.expanded[i]) {
                (true, _) => "  ",
                (false, true) => "▾ ",
                (false, false) => "▸ ",
            };
            let name = format!(
                "{}{marker}{}",
                "  ".repeat(item.depth),
                printable(&item.name)
            );
            let s = &item.stat;
            let (own, pct) = if item.group {
                (String::new(), String::new())
            } else {
                (
                    duration(s.own as f64),
                    format!("{:.1}", share_pct(s, b.session_ns)),
                )
            };
            Row::new(vec![
                name,
                s.calls.to_string(),
                duration(s.total as f64),
                own,
                pct,
            ])
        })
        .collect();
    let widths = [
        Constraint::Min(20),
        Constraint::Length(10),
        Constraint::Length(10),
        Constraint::Length(10),
        Constraint::Length(6),
    ];
    let table = Table::new(table_rows, widths)
        .header(
            Row::new(vec!["region", "calls", "total", "own", "%"])
                .style(Style::new().add_modifier(Modifier::BOLD)),
        )
        .block(Block::new().borders(Borders::ALL).title(" call tree "))
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED))
        // Shown without colours too (a screen captured as text).
        .highlight_symbol("> ");
    let mut state = TableState::default();
    if !rows.is_empty() {
        state.select(Some(b.position(&rows)));
    }
    frame.render_stateful_widget(table, area, &mut state);
}

fn detail(frame: &mut Frame<'_>, b: &Browser, regions: &Regions, area: Rect) {
    let block = Block::new().borders(Borders::ALL).title(" region ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(name) = b.selected_region() else {
        frame.render_widget(
            Paragraph::new("a group of lanes: select a region below it"),
            inner,
        );
        return;
    };
    let mut lines = vec![Line::from(Span::styled(
        printable(name),
        Style::new().add_modifier(Modifier::BOLD),
    ))];
    match regions.get(name) {
        Some(r) => lines.extend(region_lines(r, inner.width as usize, inner.height as usize)),
        None => lines.push(Line::from("no calls")),
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The region's figures, then as much of its histogram as fits.
fn region_lines(r: &Region, width: usize, height: usize) -> Vec<Line<'static>> {
    let s = &r.stat;
    let mut out = vec![
        Line::from("over all its call paths:"),
        Line::from(format!("  calls  {}", s.calls)),
        Line::from(format!("  total  {}", duration(s.total as f64))),
        Line::from(format!("  own    {}", duration(s.own as f64))),
        Line::from(format!("  mean   {}", duration(s.mean))),
    ];
    if r.histogram.iter().all(|&c| c == 0) {
        out.push(Line::from("  (no events: totals only)"));
        return out;
    }
    let q = |q: f64| r.quantile(q).map_or("-".to_owned(), duration);
    out.push(Line::from(format!(
        "  min {}  max {}",
        duration(s.min as f64),
        duration(s.max as f64)
    )));
    out.push(Line::from(format!(
        "  p50 {}  p90 {}  p99 {}",
        q(0.5),
        q(0.9),
        q(0.99)
    )));
    out.push(Line::from("durations (bins of 1/4 octave):"));
    let room = height.saturating_sub(out.len() + 1).max(1);
    out.extend(histogram_lines(&r.histogram, width, room));
    out
}

/// The histogram's bins from the first to the last non-empty one, merged
/// by pairs until they fit `rows` lines: a duration label, a bar, a count.
pub(crate) fn histogram_lines(hist: &[u64], width: usize, rows: usize) -> Vec<Line<'static>> {
    let (Some(first), Some(last)) = (
        hist.iter().position(|&c| c > 0),
        hist.iter().rposition(|&c| c > 0),
    ) else {
        return Vec::new();
    };
    // Bars start at a multiple of `span`, so count them from there.
    let bars_of = |span: usize| (last - (first - first % span)) / span + 1;
    let mut span = 1;
    while bars_of(span) > rows.max(1) {
        span *= 2;
    }
    let start = first - first % span;
    let bars: Vec<(usize, u64)> = (start..=last)
        .step_by(span)
        .map(|b| (b, hist[b..(b + span).min(hist.len())].iter().sum()))
        .collect();
    let most = bars.iter().map(|&(_, c)| c).max().unwrap_or(1).max(1);
    let room = width.saturating_sub(10 + 1 + 8).max(1);
    bars.into_iter()
        .map(|(b, count)| {
            let len = (count as f64 / most as f64 * room as f64).ceil() as usize;
            Line::from(format!(
                "{:>10} {:<room$} {count}",
                duration(bin_start(b)),
                "█".repeat(len.min(room))
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_escaped_never_sent() {
        assert_eq!(printable("solve"), "solve");
        assert_eq!(printable("a\u{1b}]0;x\u{7}b"), "a\\u{1b}]0;x\\u{7}b");
    }

    #[test]
    fn the_histogram_fits_its_rows_and_keeps_every_call() {
        let mut hist = vec![0u64; 192];
        for (b, c) in [(40, 3), (41, 5), (60, 1), (80, 7)] {
            hist[b] = c;
        }
        let lines = histogram_lines(&hist, 40, 6);
        assert!(lines.len() <= 6, "{lines:?}");
        let total: u64 = lines
            .iter()
            .map(|l| {
                let text = l.to_string();
                text.split_whitespace()
                    .last()
                    .unwrap()
                    .parse::<u64>()
                    .unwrap()
            })
            .sum();
        assert_eq!(total, 16);
        assert!(histogram_lines(&[0; 8], 40, 6).is_empty());
        // Bins 7 to 12 in 3 rows: pairs from 6 would take 4, so by fours.
        let mut hist = vec![0u64; 16];
        hist[7..=12].fill(1);
        let lines = histogram_lines(&hist, 40, 3);
        assert!(lines.len() <= 3, "{lines:?}");
    }
}
