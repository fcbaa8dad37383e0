//! `scope-prof live ADDR` against a session of this process (started with
//! `Options::live`, recording on a thread of its own): `--once` as text
//! and JSON for scripts, and the terminal view in tmux (`send-keys`,
//! `capture-pane`), its screens kept under `target/tmp/live-screens/`.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use integration_tests::tmux::{self, Tmux};
use integration_tests::{prerequisite_missing, serial, temp_dir};
use scope_profiler::{self as sp, Options, Run};
use scope_profiler_reader::live::Snapshot;

fn spin(us: u64) {
    let t = Instant::now();
    while t.elapsed() < Duration::from_micros(us) {
        std::hint::black_box(0);
    }
}

/// Pending for ever.
struct Never;

impl std::future::Future for Never {
    type Output = ();
    fn poll(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        std::task::Poll::Pending
    }
}

#[sp::profile]
async fn db_query() {
    Never.await;
}

#[sp::profile]
async fn request() {
    db_query().await;
}

/// A thread, `worker`, recording `heavy` (few long calls, the most time)
/// and `light` (many short ones, the most calls) inside `main-loop`, open
/// until `stop`; and a task in flight, `request`, waiting in `db_query`
/// (polled once, then cancelled at `stop`).
fn record(stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new()
        .name("worker".into())
        .spawn(move || {
            let mut task = Box::pin(request());
            let waker = std::task::Waker::noop();
            let pending = std::future::Future::poll(
                task.as_mut(),
                &mut std::task::Context::from_waker(waker),
            );
            assert!(pending.is_pending());
            let (heavy, light) = (sp::region("heavy"), sp::region("light"));
            let _loop = sp::region("main-loop").enter();
            while !stop.load(Ordering::Relaxed) {
                heavy.run(|| spin(2000));
                for _ in 0..50 {
                    light.run(|| spin(2));
                }
            }
        })
        .unwrap()
}

fn scope_prof(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_scope-prof"))
        .args(args)
        .env_remove("SCOPE_PROFILER_LIVE_TOKEN")
        .output()
        .expect("scope-prof runs")
}

fn start(dir: &Path) -> (Run, SocketAddr) {
    let run = sp::setup(
        Options::new()
            .file_path(dir.join("live.h5"))
            .verbose(false)
            .live("127.0.0.1:0"),
    )
    .unwrap();
    let addr = run.live_addr().unwrap();
    (run, addr)
}

#[test]
fn once_prints_a_snapshot_as_text_or_json() {
    let _one = serial();
    let dir = temp_dir("cli-live-once");
    let (run, addr) = start(&dir);
    let stop = Arc::new(AtomicBool::new(false));
    let worker = record(Arc::clone(&stop));
    std::thread::sleep(Duration::from_millis(300));
    let addr = addr.to_string();
    let json = scope_prof(&["live", &addr, "--once", "--format", "json"]);
    assert!(json.status.success(), "{json:?}");
    let snapshot = Snapshot::parse(String::from_utf8_lossy(&json.stdout).trim()).unwrap();
    assert!(
        snapshot
            .regions
            .iter()
            .any(|r| r.name == "light" && r.calls > 0)
    );
    let text = scope_prof(&["live", &addr, "--once"]);
    assert!(text.status.success(), "{text:?}");
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("recording"), "{text}");
    let (heavy, light) = (text.find("heavy").unwrap(), text.find("light").unwrap());
    assert!(heavy < light, "by total, heavy first:\n{text}");
    // The worker's calls open now, outermost first.
    let worker_line = text.lines().find(|l| l.starts_with("worker: ")).unwrap();
    assert!(worker_line.contains("open: main-loop "), "{text}");
    // The task in flight, with the future it awaits.
    assert!(text.contains("1 tasks in flight:"), "{text}");
    let task_line = text.lines().find(|l| l.contains("task 0: ")).unwrap();
    assert!(
        task_line.contains("request ") && task_line.contains(" > db_query "),
        "{text}"
    );
    stop.store(true, Ordering::Relaxed);
    worker.join().unwrap();
    run.finalize().unwrap();
    // A program with a token: without it, the error says so; with it, read.
    let run = sp::setup(
        Options::new()
            .in_memory()
            .verbose(false)
            .live("127.0.0.1:0")
            .live_token("s3cret"),
    )
    .unwrap();
    let with_token = run.live_addr().unwrap().to_string();
    let denied = scope_prof(&["live", &with_token, "--once"]);
    assert_eq!(denied.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&denied.stderr);
    assert!(
        stderr.contains("HTTP 401") && stderr.contains("token"),
        "{stderr}"
    );
    let allowed = scope_prof(&["live", &with_token, "--once", "--token", "s3cret"]);
    assert!(allowed.status.success(), "{allowed:?}");
    run.finalize().unwrap();
    // The program ended: nothing listens, an error that says so.
    let gone = scope_prof(&["live", &addr, "--once"]);
    assert_eq!(gone.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&gone.stderr);
    assert!(stderr.contains("nothing listens"), "{stderr}");
}

fn keep(name: &str, screen: &str) {
    tmux::keep(
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("live-screens"),
        name,
        screen,
    );
}

/// The line of `region` in the table.
fn row(screen: &str, region: &str) -> usize {
    screen
        .lines()
        .position(|l| l.trim_start().starts_with(region) || l.contains(&format!(" {region} ")))
        .unwrap_or_else(|| panic!("no row for {region}:\n{screen}"))
}

#[test]
fn the_live_view_sorts_pauses_checkpoints_and_outlives_the_program() {
    if !tmux::available() {
        prerequisite_missing("tmux is missing (Debian's tmux)");
        return;
    }
    let _one = serial();
    let dir = temp_dir("cli-live-tmux");
    let (run, addr) = start(&dir);
    let stop = Arc::new(AtomicBool::new(false));
    let worker = record(Arc::clone(&stop));
    let command = format!("{} live {addr}", env!("CARGO_BIN_EXE_scope-prof"));
    let tmux = Tmux::start("live", 130, 24, &command);

    // Two refreshes: the rates and sparklines have a difference to show.
    tmux.wait_for("heavy");
    std::thread::sleep(Duration::from_millis(2500));
    let first = tmux.wait_for("sorted by total");
    keep("1-by-total.txt", &first);
    assert!(first.contains("recording"), "{first}");
    // The threads' pane: the worker's calls open now.
    let line = first
        .lines()
        .find(|l| l.starts_with("worker "))
        .unwrap_or_else(|| panic!("no line for the worker:\n{first}"));
    assert!(line.contains("open: main-loop "), "{first}");
    assert!(
        first.contains("1 tasks in flight, the oldest: task 0: request "),
        "{first}"
    );
    assert!(first.contains(" > db_query "), "{first}");
    assert!(row(&first, "heavy") < row(&first, "light"), "{first}");
    assert!(first.contains("/s"), "time per second:\n{first}");

    // `s` twice: by calls, light first.
    tmux.keys(&["s", "s"]);
    let by_calls = tmux.wait_for("sorted by calls");
    keep("2-by-calls.txt", &by_calls);
    assert!(
        row(&by_calls, "light") < row(&by_calls, "heavy"),
        "{by_calls}"
    );

    // `p` pauses the program's recording, `r` resumes it.
    tmux.keys(&["p"]);
    let paused = tmux.wait_for("PAUSED");
    keep("3-paused.txt", &paused);
    assert!(run.is_paused());
    tmux.keys(&["r"]);
    tmux.wait_for("recording resumed");
    assert!(!run.is_paused());

    // `c` takes a checkpoint: the file is written.
    tmux.keys(&["c"]);
    let checkpoint = tmux.wait_for("checkpoint written");
    keep("4-checkpoint.txt", &checkpoint);
    assert!(dir.join("live.h5").exists());

    // The program's session ends: the view says so and keeps its figures.
    stop.store(true, Ordering::Relaxed);
    worker.join().unwrap();
    run.finalize().unwrap();
    let ended = tmux.wait_for("the program ended");
    keep("5-ended.txt", &ended);
    assert!(ended.contains("heavy"), "{ended}");
    tmux.keys(&["q"]);
    let start = Instant::now();
    while tmux.alive() {
        assert!(start.elapsed() < Duration::from_secs(10), "q did not quit");
        std::thread::sleep(Duration::from_millis(50));
    }
}
