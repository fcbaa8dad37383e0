//! `scope-prof live ADDR`: a running program's regions (a session started
//! with `Options::live`), refreshed every second in the terminal: sorted
//! by total, own, calls or time per second, each with its calls and time
//! per second since the last refresh and a sparkline; keys pause and resume
//! recording and take a checkpoint. It outlives the program (says it ended,
//! keeps its last snapshot, and picks up a program started again on the
//! same address). `--once` prints one snapshot, as text or JSON, for
//! scripts.
//!
//! `client.rs` talks HTTP to the program's server; `model.rs` holds the
//! state and applies keys; `view.rs` draws it. Requests run on a thread of
//! their own, so a slow program never freezes the screen.

mod client;
mod model;
mod view;

use std::io::{IsTerminal, Write};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{self, Event, KeyEventKind};
use scope_profiler_reader::live::Snapshot;

use crate::Failure;
use client::{Client, Failed};
use model::{Action, LiveSort, LiveView};

#[derive(clap::Args, Debug)]
pub(crate) struct LiveArgs {
    /// The program's live address (`Options::live`, `SCOPE_PROFILER_LIVE`),
    /// as it printed it: 127.0.0.1:7878.
    addr: String,
    /// Print one snapshot and exit.
    #[arg(long)]
    once: bool,
    /// With --once: a table, or the snapshot's JSON as the program sent it.
    #[arg(long, value_enum, default_value = "text", requires = "once")]
    format: OnceFormat,
    /// The program's token (`Options::live_token`), if it set one.
    #[arg(long, env = "SCOPE_PROFILER_LIVE_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// The first order of the regions (`s` changes it).
    #[arg(long, value_enum, default_value = "total")]
    sort: LiveSort,
    /// Seconds between refreshes.
    #[arg(long, default_value_t = 1.0)]
    interval: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum OnceFormat {
    Text,
    Json,
}

pub(crate) fn live(args: &LiveArgs) -> Result<(), Failure> {
    let client = Client {
        addr: args.addr.clone(),
        token: args.token.clone(),
    };
    if args.once {
        return once(&client, args.format, args.sort);
    }
    if !std::io::stdout().is_terminal() {
        return Err(Failure(
            "live needs a terminal (for scripts: scope-prof live ADDR --once [--format json])"
                .to_owned(),
        ));
    }
    if !(args.interval.is_finite() && args.interval >= 0.05) {
        return Err(Failure("--interval: at least 0.05 s".to_owned()));
    }
    watch(client, args.sort, Duration::from_secs_f64(args.interval))
}

/// One snapshot to stdout.
fn once(client: &Client, format: OnceFormat, sort: LiveSort) -> Result<(), Failure> {
    let text = client
        .snapshot_text()
        .map_err(|e| Failure(format!("{}: {e}", client.addr)))?;
    let mut out = std::io::stdout().lock();
    if format == OnceFormat::Json {
        writeln!(out, "{text}")?;
        return Ok(());
    }
    let snapshot = Snapshot::parse(&text)?;
    let mut view = LiveView::new(&client.addr, sort);
    view.update(Ok(snapshot));
    print_text(&mut out, &view)?;
    Ok(())
}

/// The snapshot as a table.
fn print_text(out: &mut impl Write, view: &LiveView) -> std::io::Result<()> {
    use crate::units::duration;
    let Some(s) = &view.last else {
        return Ok(());
    };
    writeln!(
        out,
        "{}  {}  up {}  {}",
        view.addr,
        crate::width::printable(&s.label),
        duration(s.elapsed_ns as f64),
        if s.paused { "PAUSED" } else { "recording" }
    )?;
    let rows = view.rows();
    let width = rows
        .iter()
        .map(|r| crate::width::printable(&r.name).chars().count())
        .max()
        .unwrap_or(0)
        .max(6);
    writeln!(
        out,
        "{:width$}  {:>12}  {:>10}  {:>10}  {:>10}",
        "region", "calls", "total", "own", "max"
    )?;
    for r in rows {
        writeln!(
            out,
            "{:width$}  {:>12}  {:>10}  {:>10}  {:>10}",
            crate::width::printable(&r.name),
            r.calls,
            duration(r.total_ns as f64),
            duration(r.own_ns as f64),
            duration(r.max_ns as f64)
        )?;
    }
    for t in &s.threads {
        if t.tasks {
            writeln!(out, "{}: {} calls", view::lane_name(t), t.calls)?;
        } else {
            writeln!(
                out,
                "{}: {} calls, open: {}",
                view::lane_name(t),
                t.calls,
                if t.open.is_empty() {
                    "nothing".to_owned()
                } else {
                    view::open_calls(&t.open)
                }
            )?;
        }
    }
    if !s.tasks.is_empty() {
        writeln!(out, "{} tasks in flight:", s.tasks.len())?;
        for t in &s.tasks {
            writeln!(
                out,
                "  {} (first polled on thread {})",
                view::task_line(t),
                t.thread
            )?;
        }
    }
    Ok(())
}

/// What the request thread sends the screen.
enum Answer {
    Snapshot(Result<Snapshot, Failed>),
    Command(&'static str, Result<String, Failed>),
}

/// The terminal view until `q`.
fn watch(client: Client, sort: LiveSort, interval: Duration) -> Result<(), Failure> {
    let (commands, to_do) = mpsc::channel::<&'static str>();
    let (answers, answered) = mpsc::channel::<Answer>();
    let mut view = LiveView::new(&client.addr, sort);
    // Requests on their own thread: a slow program never freezes the keys.
    std::thread::spawn(move || {
        let mut next = Instant::now();
        loop {
            match to_do.recv_timeout(next.saturating_duration_since(Instant::now())) {
                Ok(path) => {
                    let done = client.post(path);
                    if answers.send(Answer::Command(path, done)).is_err() {
                        return;
                    }
                    // The screen shows the command's effect at once.
                    next = Instant::now();
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    next = Instant::now() + interval;
                    if answers.send(Answer::Snapshot(client.snapshot())).is_err() {
                        return;
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        }
    });
    let mut terminal = ratatui::init();
    let result = (|| -> Result<(), Failure> {
        loop {
            while let Ok(answer) = answered.try_recv() {
                match answer {
                    Answer::Snapshot(s) => view.update(s),
                    Answer::Command(path, done) => view.command_done(path, done),
                }
            }
            terminal.draw(|frame| view::draw(frame, &view))?;
            if event::poll(Duration::from_millis(100))?
                && let Event::Key(key) = event::read()?
                && key.kind == KeyEventKind::Press
            {
                match view.key(key) {
                    Action::Quit => return Ok(()),
                    Action::Post(path) => {
                        view.message = format!("{path}...");
                        let _ = commands.send(path);
                    }
                    Action::None => {}
                }
            }
        }
    })();
    ratatui::restore();
    result
}
