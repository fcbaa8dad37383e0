//! How `scope-prof live` draws its state: a header (the address, the
//! session's label and age, recording or paused, the sort), the regions'
//! table (calls, calls/s, time/s, total, own, max, a sparkline of calls/s),
//! each thread's calls open now, and the keys at the bottom.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::{Block, Borders, Paragraph, Row, Table, TableState};

use super::model::{Link, LiveView, Row as Region};
use crate::units::duration;
use crate::width::printable;
use scope_profiler_reader::live::{Snapshot, SnapshotCall, SnapshotTask, SnapshotThread};

/// `values` as a line of block characters, the largest the tallest.
pub(crate) fn sparkline(values: &[f64]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let max = values.iter().copied().fold(0.0, f64::max);
    values
        .iter()
        .map(|&v| {
            if max <= 0.0 || v <= 0.0 {
                ' '
            } else {
                BARS[((v / max) * 7.0).round().clamp(0.0, 7.0) as usize]
            }
        })
        .collect()
}

/// A lane's name as shown: a thread's own, or whose tasks.
pub(crate) fn lane_name(t: &SnapshotThread) -> String {
    if t.tasks {
        format!("tasks of {}", t.index)
    } else {
        printable(&t.name)
    }
}

/// Open calls, outermost first, each with how long it has been open:
/// `main 3.10 s > solve 1.20 s`; calls side by side under one (a task's
/// futures polled by `join!`) in brackets: `req 2.0 s > [a 1.9 s | b 1.9 s]`.
pub(crate) fn open_calls(open: &[SnapshotCall]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < open.len() {
        let mut tree = String::new();
        i = subtree(open, i, 0, &mut tree);
        out.push(tree);
    }
    out.join(" | ")
}

/// Writes the call at `i` and the calls nested in it (those after it,
/// deeper); the index after them. Past 64 levels (a hostile document),
/// the rest is one path.
fn subtree(open: &[SnapshotCall], i: usize, level: usize, out: &mut String) -> usize {
    let c = &open[i];
    out.push_str(&format!(
        "{} {}",
        printable(&c.name),
        duration(c.open_ns as f64)
    ));
    if level >= 64 {
        for c in &open[i + 1..] {
            out.push_str(&format!(
                " > {} {}",
                printable(&c.name),
                duration(c.open_ns as f64)
            ));
        }
        return open.len();
    }
    let mut kids = Vec::new();
    let mut j = i + 1;
    while j < open.len() && open[j].depth > c.depth {
        let mut kid = String::new();
        j = subtree(open, j, level + 1, &mut kid);
        kids.push(kid);
    }
    match kids.len() {
        0 => {}
        1 => out.push_str(&format!(" > {}", kids[0])),
        _ => out.push_str(&format!(" > [{}]", kids.join(" | "))),
    }
    j
}

/// The lines of the threads' pane: per thread lane, its calls finished and
/// open now; the tasks lanes on one line.
fn thread_lines(s: &Snapshot) -> Vec<String> {
    let mut lines: Vec<String> = s
        .threads
        .iter()
        .filter(|t| !t.tasks)
        .map(|t| {
            let open = if t.open.is_empty() {
                "(nothing open)".to_owned()
            } else {
                open_calls(&t.open)
            };
            format!("{:<16} {:>10} calls  open: {open}", lane_name(t), t.calls)
        })
        .collect();
    let tasks: Vec<String> = s
        .threads
        .iter()
        .filter(|t| t.tasks)
        .map(|t| format!("{} {}", lane_name(t), t.calls))
        .collect();
    if !tasks.is_empty() {
        lines.push(format!("tasks completed: {}", tasks.join(", ")));
    }
    if !s.tasks.is_empty() {
        // The oldest first: those are the ones to look at.
        let mut flight: Vec<&SnapshotTask> = s.tasks.iter().collect();
        flight.sort_by_key(|t| std::cmp::Reverse(t.open.first().map_or(0, |c| c.open_ns)));
        let oldest: Vec<String> = flight.iter().take(3).map(|t| task_line(t)).collect();
        lines.push(format!(
            "{} tasks in flight, the oldest: {}",
            s.tasks.len(),
            oldest.join("; ")
        ));
    }
    lines
}

/// A task in flight: `task 7: request 1.20 s > db 0.40 s (polled now)`.
pub(crate) fn task_line(t: &SnapshotTask) -> String {
    format!(
        "task {}: {}{}",
        t.index,
        open_calls(&t.open),
        if t.polled { " (polled now)" } else { "" }
    )
}

/// A count per second, short.
fn rate(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// Draws the whole screen.
pub(crate) fn draw(frame: &mut Frame<'_>, v: &LiveView) {
    let lines = v.last.as_ref().map(thread_lines).unwrap_or_default();
    // The threads' pane: a line each, a quarter of the screen at most.
    let room = (frame.area().height / 4).max(2);
    let shown = (lines.len() as u16).min(room);
    let [head, body, threads, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(shown + 1),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    let (state, style) = match (&v.link, &v.last) {
        (Link::Waiting(why), _) => (
            format!("waiting for the program: {}", printable(why)),
            Style::new().fg(Color::Yellow),
        ),
        (Link::Ended, _) => (
            "the program ended (its last snapshot is shown)".to_owned(),
            Style::new().fg(Color::Red),
        ),
        (Link::Trouble(why), _) => (
            format!("no answer: {} (last snapshot shown)", printable(why)),
            Style::new().fg(Color::Yellow),
        ),
        (Link::Up, Some(s)) if s.paused => ("PAUSED".to_owned(), Style::new().fg(Color::Yellow)),
        (Link::Up, _) => ("recording".to_owned(), Style::new().fg(Color::Green)),
    };
    let (label, age) = v.last.as_ref().map_or((String::new(), String::new()), |s| {
        (
            printable(&s.label),
            format!("up {}", duration(s.elapsed_ns as f64)),
        )
    });
    frame.render_widget(
        Paragraph::new(format!(
            "{}  {label}  {age}  {state}  sorted by {} (s)",
            v.addr,
            v.sort.name()
        ))
        .style(style.add_modifier(Modifier::BOLD)),
        head,
    );
    let rows = v.rows();
    table(frame, v, &rows, body);
    let more = lines.len().saturating_sub(shown as usize);
    let mut text: Vec<String> = lines.into_iter().take(shown as usize).collect();
    if more > 0
        && let Some(last) = text.last_mut()
    {
        *last = format!("(and {} more lanes: `--once` lists them all)", more + 1);
    }
    let title = format!(
        " {} lanes, calls open now ",
        v.last.as_ref().map_or(0, |s| s.threads.len())
    );
    frame.render_widget(
        Paragraph::new(text.join("\n")).block(Block::new().borders(Borders::TOP).title(title)),
        threads,
    );
    let keys = "q quit  s sort  p pause  r resume  c checkpoint  arrows/jk move";
    let status = if v.message.is_empty() {
        keys.to_owned()
    } else {
        format!("{}  |  {keys}", printable(&v.message))
    };
    frame.render_widget(Paragraph::new(status), foot);
}

fn table(frame: &mut Frame<'_>, v: &LiveView, rows: &[Region], area: ratatui::layout::Rect) {
    let header = Row::new([
        "region",
        "calls",
        "calls/s",
        "time/s",
        "total",
        "own",
        "max",
        "calls/s, last 30",
    ])
    .style(Style::new().add_modifier(Modifier::BOLD));
    let lines = rows.iter().map(|r| {
        Row::new([
            printable(&r.name),
            r.calls.to_string(),
            rate(r.calls_per_s),
            format!("{}/s", duration(r.time_per_s)),
            duration(r.total_ns as f64),
            duration(r.own_ns as f64),
            duration(r.max_ns as f64),
            sparkline(&r.history),
        ])
    });
    let widths = [
        Constraint::Min(16),
        Constraint::Length(11),
        Constraint::Length(8),
        Constraint::Length(11),
        Constraint::Length(10),
        Constraint::Length(10),
        Constraint::Length(10),
        Constraint::Length(super::model::HISTORY as u16 + 1),
    ];
    let block = Block::default().borders(Borders::TOP).title(format!(
        " {} regions, every call finished so far ",
        rows.len()
    ));
    let mut state =
        TableState::default().with_selected(Some(v.selected.min(rows.len().saturating_sub(1))));
    frame.render_stateful_widget(
        Table::new(lines, widths)
            .header(header)
            .block(block)
            .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED)),
        area,
        &mut state,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparklines() {
        assert_eq!(sparkline(&[0.0, 1.0, 2.0, 4.0]), " ▃▅█");
        assert_eq!(sparkline(&[0.0, 0.0]), "  ");
        assert_eq!(sparkline(&[]), "");
    }

    fn call(name: &str, depth: u32) -> SnapshotCall {
        SnapshotCall {
            name: name.into(),
            open_ns: 2_000_000_000,
            depth,
        }
    }

    #[test]
    fn open_calls_nest_by_depth() {
        let path = [call("main", 0), call("solve", 1)];
        assert_eq!(open_calls(&path), "main 2.00 s > solve 2.00 s");
        // A task awaiting two futures side by side, one of them deeper.
        let tree = [call("req", 0), call("a", 1), call("db", 2), call("b", 1)];
        assert_eq!(
            open_calls(&tree),
            "req 2.00 s > [a 2.00 s > db 2.00 s | b 2.00 s]"
        );
        // A hostile document: far too deep, or starting deep, is shown.
        let deep: Vec<SnapshotCall> = (0..10_000).map(|d| call("x", d)).collect();
        assert!(open_calls(&deep).matches(" > ").count() == 9_999);
        assert_eq!(
            open_calls(&[call("x", 5), call("y", 0)]),
            "x 2.00 s | y 2.00 s"
        );
    }
}
