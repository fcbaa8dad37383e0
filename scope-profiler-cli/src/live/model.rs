//! The live view's state: the last two snapshots (rates are their
//! difference), a short history of each region's calls per second, the
//! sort, the selection, the link to the program, and the keys.

use std::collections::{HashMap, VecDeque};

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use scope_profiler_reader::live::Snapshot;

use super::client::Failed;

/// Refreshes a region's sparkline remembers.
pub(crate) const HISTORY: usize = 30;

/// The order of the regions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LiveSort {
    /// Longest total time first.
    Total,
    /// Longest own time first.
    Own,
    /// Most calls first.
    Calls,
    /// Most time per second since the last refresh first.
    Rate,
}

impl LiveSort {
    pub(crate) fn name(self) -> &'static str {
        match self {
            LiveSort::Total => "total",
            LiveSort::Own => "own",
            LiveSort::Calls => "calls",
            LiveSort::Rate => "time/s",
        }
    }

    fn next(self) -> LiveSort {
        match self {
            LiveSort::Total => LiveSort::Own,
            LiveSort::Own => LiveSort::Calls,
            LiveSort::Calls => LiveSort::Rate,
            LiveSort::Rate => LiveSort::Total,
        }
    }
}

/// How the program answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Link {
    /// No answer yet (the program has not started, or the address is
    /// wrong): why.
    Waiting(String),
    Up,
    /// It answered before and listens no more: it ended.
    Ended,
    /// It answered before and fails now (slow, or an error): why.
    Trouble(String),
}

/// One region as the view shows it.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Row {
    pub name: String,
    pub calls: u64,
    pub total_ns: i64,
    pub own_ns: i64,
    pub max_ns: i64,
    /// Since the previous snapshot.
    pub calls_per_s: f64,
    /// ns of calls per s since the previous snapshot.
    pub time_per_s: f64,
    /// Calls per second at each of the last refreshes, oldest first.
    pub history: Vec<f64>,
}

/// What a key asks of the program or the view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    None,
    Quit,
    /// `POST` this path.
    Post(&'static str),
}

pub(crate) struct LiveView {
    pub addr: String,
    pub sort: LiveSort,
    pub link: Link,
    /// The last snapshot and the one before (for rates).
    pub last: Option<Snapshot>,
    prev: Option<Snapshot>,
    history: HashMap<String, VecDeque<f64>>,
    /// The row selected, in the current order.
    pub selected: usize,
    /// The last command's outcome.
    pub message: String,
}

impl LiveView {
    pub(crate) fn new(addr: &str, sort: LiveSort) -> LiveView {
        LiveView {
            addr: addr.to_owned(),
            sort,
            link: Link::Waiting("connecting".to_owned()),
            last: None,
            prev: None,
            history: HashMap::new(),
            selected: 0,
            message: String::new(),
        }
    }

    /// A refresh's outcome.
    pub(crate) fn update(&mut self, result: Result<Snapshot, Failed>) {
        let snapshot = match result {
            Ok(s) => s,
            Err(e) => {
                self.link = match (&self.last, e) {
                    (None, e) => Link::Waiting(e.to_string()),
                    (Some(_), Failed::Refused(_)) => Link::Ended,
                    (Some(_), e) => Link::Trouble(e.to_string()),
                };
                return;
            }
        };
        self.link = Link::Up;
        // A program started again: its clock went back. Start over.
        if self
            .last
            .as_ref()
            .is_some_and(|l| snapshot.elapsed_ns < l.elapsed_ns || snapshot.label != l.label)
        {
            self.last = None;
            self.history.clear();
            self.message = "the program started again".to_owned();
        }
        self.prev = self.last.replace(snapshot);
        let rates = self.rates();
        for r in self.last.iter().flat_map(|s| &s.regions) {
            let h = self.history.entry(r.name.clone()).or_default();
            h.push_back(rates.get(&r.name).map_or(0.0, |x| x.0));
            while h.len() > HISTORY {
                h.pop_front();
            }
        }
    }

    /// Per region: calls per second and ns per second since the previous
    /// snapshot.
    fn rates(&self) -> HashMap<String, (f64, f64)> {
        let (Some(last), Some(prev)) = (&self.last, &self.prev) else {
            return HashMap::new();
        };
        let dt = (last.elapsed_ns - prev.elapsed_ns) as f64 / 1e9;
        if dt <= 0.0 {
            return HashMap::new();
        }
        let before: HashMap<&str, _> = prev.regions.iter().map(|r| (r.name.as_str(), r)).collect();
        last.regions
            .iter()
            .map(|r| {
                let (calls, total) = before
                    .get(r.name.as_str())
                    .map_or((0, 0), |p| (p.calls, p.total_ns));
                let dc = r.calls.saturating_sub(calls) as f64;
                let dn = (r.total_ns - total).max(0) as f64;
                (r.name.clone(), (dc / dt, dn / dt))
            })
            .collect()
    }

    /// The regions in the current order.
    pub(crate) fn rows(&self) -> Vec<Row> {
        let Some(last) = &self.last else {
            return Vec::new();
        };
        let rates = self.rates();
        let mut rows: Vec<Row> = last
            .regions
            .iter()
            .map(|r| {
                let (calls_per_s, time_per_s) = rates.get(&r.name).copied().unwrap_or_default();
                Row {
                    name: r.name.clone(),
                    calls: r.calls,
                    total_ns: r.total_ns,
                    own_ns: r.own_ns,
                    max_ns: r.max_ns,
                    calls_per_s,
                    time_per_s,
                    history: self
                        .history
                        .get(&r.name)
                        .map(|h| h.iter().copied().collect())
                        .unwrap_or_default(),
                }
            })
            .collect();
        match self.sort {
            LiveSort::Total => rows.sort_by_key(|r| std::cmp::Reverse(r.total_ns)),
            LiveSort::Own => rows.sort_by_key(|r| std::cmp::Reverse(r.own_ns)),
            LiveSort::Calls => rows.sort_by_key(|r| std::cmp::Reverse(r.calls)),
            LiveSort::Rate => rows.sort_by(|a, b| b.time_per_s.total_cmp(&a.time_per_s)),
        }
        rows
    }

    /// Applies a key.
    pub(crate) fn key(&mut self, key: KeyEvent) -> Action {
        let n = self.last.as_ref().map_or(0, |s| s.regions.len());
        match key.code {
            KeyCode::Char('q') | KeyCode::Esc => return Action::Quit,
            KeyCode::Char('s') => self.sort = self.sort.next(),
            KeyCode::Char('p') => return Action::Post("/pause"),
            KeyCode::Char('r') => return Action::Post("/resume"),
            KeyCode::Char('c') => return Action::Post("/checkpoint"),
            KeyCode::Down | KeyCode::Char('j') => self.selected += 1,
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::PageDown => self.selected += 10,
            KeyCode::PageUp => self.selected = self.selected.saturating_sub(10),
            KeyCode::Home | KeyCode::Char('g') => self.selected = 0,
            KeyCode::End | KeyCode::Char('G') => self.selected = n.saturating_sub(1),
            _ => {}
        }
        self.selected = self.selected.min(n.saturating_sub(1));
        Action::None
    }

    /// A command's outcome, for the status line.
    pub(crate) fn command_done(&mut self, path: &str, result: Result<String, Failed>) {
        self.message = match (path, result) {
            ("/pause", Ok(_)) => "recording paused".to_owned(),
            ("/resume", Ok(_)) => "recording resumed".to_owned(),
            ("/checkpoint", Ok(body)) => {
                let file = serde_json::from_str::<serde_json::Value>(&body)
                    .ok()
                    .and_then(|v| v.get("checkpoint")?.as_str().map(str::to_owned));
                match file {
                    Some(f) => format!("checkpoint written: {f}"),
                    None => "checkpoint taken (in memory)".to_owned(),
                }
            }
            (_, Ok(_)) => format!("{path}: done"),
            (_, Err(e)) => format!("{path}: {e}"),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scope_profiler_reader::live::SnapshotRegion;

    fn snap(elapsed_s: i64, regions: &[(&str, u64, i64)]) -> Snapshot {
        let mut s = Snapshot::new();
        s.elapsed_ns = elapsed_s * 1_000_000_000;
        s.regions = regions
            .iter()
            .map(|&(name, calls, total_ns)| SnapshotRegion {
                name: name.to_owned(),
                calls,
                total_ns,
                own_ns: total_ns / 2,
                max_ns: total_ns,
                dropped: 0,
            })
            .collect();
        s
    }

    #[test]
    fn rates_sorts_history_and_restarts() {
        let mut v = LiveView::new("x:1", LiveSort::Total);
        v.update(Ok(snap(1, &[("a", 10, 1000), ("b", 5, 5000)])));
        v.update(Ok(snap(3, &[("a", 110, 201_000), ("b", 6, 5100)])));
        assert_eq!(v.link, Link::Up);
        let rows = v.rows();
        assert_eq!(rows[0].name, "a", "by total");
        assert_eq!(rows[0].calls_per_s, 50.0);
        assert_eq!(rows[0].time_per_s, 100_000.0);
        assert_eq!(rows[0].history, vec![0.0, 50.0]);
        v.key(KeyEvent::from(KeyCode::Char('s')));
        v.key(KeyEvent::from(KeyCode::Char('s')));
        assert_eq!(v.sort, LiveSort::Calls);
        v.key(KeyEvent::from(KeyCode::Char('s')));
        assert_eq!(v.rows()[0].name, "a", "by time/s");
        // The program ends: its last snapshot stays.
        v.update(Err(Failed::Refused("nothing listens".into())));
        assert_eq!(v.link, Link::Ended);
        assert_eq!(v.rows().len(), 2);
        // It starts again: the history starts over.
        v.update(Ok(snap(1, &[("a", 1, 10)])));
        assert_eq!(v.rows()[0].history, vec![0.0]);
        assert!(v.message.contains("again"));
        assert_eq!(
            v.key(KeyEvent::from(KeyCode::Char('p'))),
            Action::Post("/pause")
        );
        assert_eq!(v.key(KeyEvent::from(KeyCode::Char('q'))), Action::Quit);
    }

    #[test]
    fn a_program_not_there_yet_is_waited_for() {
        let mut v = LiveView::new("x:1", LiveSort::Total);
        v.update(Err(Failed::Refused("nothing listens on x:1".into())));
        assert!(matches!(v.link, Link::Waiting(ref m) if m.contains("nothing listens")));
        v.command_done("/checkpoint", Ok(r#"{"checkpoint":"/tmp/a.h5"}"#.into()));
        assert_eq!(v.message, "checkpoint written: /tmp/a.h5");
    }
}
