//! The live server (issue 34): `Options::live`, its snapshot, pause,
//! resume and checkpoint over HTTP, and its errors at `setup`.
//!
//! Each test talks HTTP/1.1 to the session's server with a plain
//! `TcpStream`, as any client would.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use integration_tests::{serial, temp_dir};
use scope_profiler::{self as sp, Options, profile};
use scope_profiler_reader::live::Snapshot;

/// One request; the status and the body.
fn http(addr: SocketAddr, method: &str, path: &str, token: Option<&str>) -> (u16, String) {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Content-Length: 0\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .expect("read the response");
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {response:?}"));
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

fn snapshot(addr: SocketAddr) -> Snapshot {
    let (status, body) = http(addr, "GET", "/snapshot", None);
    assert_eq!(status, 200, "{body}");
    Snapshot::parse(&body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

/// A session in memory serving a free loopback port, and its address.
fn live_in_memory() -> (sp::Run, SocketAddr) {
    let run = sp::setup(
        Options::new()
            .in_memory()
            .verbose(false)
            .live("127.0.0.1:0"),
    )
    .unwrap();
    let addr = run.live_addr().unwrap();
    (run, addr)
}

fn calls(s: &Snapshot, name: &str) -> u64 {
    s.regions
        .iter()
        .find(|r| r.name == name)
        .map_or(0, |r| r.calls)
}

fn spin(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::black_box(0);
    }
}

/// Two threads record nested calls for about two seconds: two snapshots a
/// second apart grow, and the last one, taken once every call has ended,
/// has the file's calls, totals, own times and maxima.
#[test]
fn snapshots_grow_and_end_at_the_files_totals() {
    let _s = serial();
    let dir = temp_dir("live-totals");
    let path = dir.join("live.h5");
    let run = sp::setup(
        Options::new()
            .file_path(&path)
            .verbose(false)
            .live("127.0.0.1:0"),
    )
    .unwrap();
    let addr = run.live_addr().expect("the session serves");
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (first, second) = std::thread::scope(|s| {
        for t in 0..2 {
            let stop = &stop;
            s.spawn(move || {
                let outer = sp::region(["outer-a", "outer-b"][t]);
                let inner = sp::region("inner");
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let _o = outer.enter();
                    spin(Duration::from_micros(20));
                    for _ in 0..3 {
                        let _i = inner.enter();
                        spin(Duration::from_micros(10));
                    }
                }
            });
        }
        std::thread::sleep(Duration::from_millis(700));
        let first = snapshot(addr);
        std::thread::sleep(Duration::from_millis(1000));
        let second = snapshot(addr);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        (first, second)
    });
    assert_eq!(first.version, 1);
    assert!(!first.paused);
    assert!(calls(&first, "inner") > 0, "{first:?}");
    assert!(calls(&second, "inner") > calls(&first, "inner"));
    assert!(calls(&second, "outer-a") > calls(&first, "outer-a"));
    assert!(second.elapsed_ns >= first.elapsed_ns + 900_000_000);
    // Every call has ended: a request folds what ended before it.
    let last = snapshot(addr);
    let results = run.finalize().unwrap();
    assert!(
        sp::read_profile(&path).is_ok(),
        "the file is readable after a live session"
    );
    for name in ["outer-a", "outer-b", "inner"] {
        let file = results.statistics_of(name).unwrap();
        let live = last.regions.iter().find(|r| r.name == name).unwrap();
        assert_eq!(live.calls, file.num_calls(), "{name}");
        let near = |a: i64, b: i64| (a - b).abs() as f64 <= 0.01 * b.abs() as f64 + 1000.0;
        assert!(near(live.total_ns, file.total()), "{name}: {live:?}");
        assert!(near(live.own_ns, file.exclusive()), "{name}: {live:?}");
        assert!(near(live.max_ns, file.maximum()), "{name}: {live:?}");
    }
    let inner = last.regions.iter().find(|r| r.name == "inner").unwrap();
    let outer = last.regions.iter().find(|r| r.name == "outer-a").unwrap();
    assert_eq!(
        inner.own_ns, inner.total_ns,
        "a leaf's own time is its total"
    );
    assert!(
        outer.own_ns < outer.total_ns,
        "the callees' time is not own"
    );
    let threads: u64 = last.threads.iter().map(|t| t.calls).sum();
    let regions: u64 = last.regions.iter().map(|r| r.calls).sum();
    assert_eq!(threads, regions);
    // The server stopped with the session.
    assert!(TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Calls spilled to the scratch file before a snapshot folded them are
/// read back: the snapshot still has every call.
#[test]
fn spilled_calls_are_in_the_snapshot() {
    let _s = serial();
    let dir = temp_dir("live-spill");
    let run = sp::setup(
        Options::new()
            .file_path(dir.join("spill.h5"))
            .memory_limit(1 << 20)
            .verbose(false)
            .live("127.0.0.1:0"),
    )
    .unwrap();
    let addr = run.live_addr().unwrap();
    let leaf = sp::region("leaf");
    let outer = sp::region("outer");
    const N: u64 = 400_000;
    for _ in 0..N / 4 {
        let _o = outer.enter();
        for _ in 0..3 {
            let _l = leaf.enter();
        }
    }
    let s = snapshot(addr);
    let results = run.finalize().unwrap();
    assert!(results.health().spilled_bytes > 0, "the session spilled");
    assert_eq!(calls(&s, "leaf"), 3 * N / 4);
    assert_eq!(calls(&s, "outer"), N / 4);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Pause, resume and checkpoint over HTTP do what they do in the program.
#[test]
fn pause_resume_and_checkpoint_over_http() {
    let _s = serial();
    let dir = temp_dir("live-control");
    let path = dir.join("control.h5");
    let run = sp::setup(
        Options::new()
            .file_path(&path)
            .verbose(false)
            .live("localhost:0"),
    )
    .unwrap();
    let addr = run.live_addr().unwrap();
    let r = sp::region("step");
    {
        let _g = r.enter();
    }
    assert_eq!(
        http(addr, "POST", "/pause", None),
        (200, r#"{"paused":true}"#.into())
    );
    assert!(run.is_paused());
    assert!(snapshot(addr).paused);
    for _ in 0..5 {
        let _g = r.enter(); // not recorded
    }
    assert_eq!(http(addr, "POST", "/resume", None).0, 200);
    assert!(!run.is_paused());
    {
        let _g = r.enter();
    }
    let (status, body) = http(addr, "POST", "/checkpoint", None);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("control.h5"), "{body}");
    let written = sp::read_profile(&path).unwrap();
    let row = written
        .rows
        .iter()
        .find(|row| written.region_names[row.region_id as usize] == "step")
        .unwrap();
    assert_eq!(
        row.event_count, 2,
        "the checkpoint has the two calls recorded"
    );
    assert_eq!(http(addr, "GET", "/pause", None).0, 405);
    assert_eq!(http(addr, "GET", "/nothing", None).0, 404);
    let results = run.finalize().unwrap();
    assert_eq!(results.statistics_of("step").unwrap().num_calls(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A session started paused records nothing until resumed from outside.
#[test]
fn a_session_started_paused_is_switched_on_from_outside() {
    let _s = serial();
    let run = sp::setup(
        Options::new()
            .in_memory()
            .verbose(false)
            .start_paused(true)
            .live("127.0.0.1:0"),
    )
    .unwrap();
    let addr = run.live_addr().unwrap();
    assert!(run.is_paused());
    let r = sp::region("work");
    for _ in 0..3 {
        let _g = r.enter();
    }
    assert!(snapshot(addr).paused);
    assert_eq!(http(addr, "POST", "/resume", None).0, 200);
    {
        let _g = r.enter();
    }
    let results = run.finalize().unwrap();
    assert_eq!(results.statistics_of("work").unwrap().num_calls(), 1);
}

/// A port in use and a non-loopback address without a token are `Err`s
/// at `setup` naming the address, and no session starts.
#[test]
fn setup_refuses_a_port_in_use_and_an_open_address_without_a_token() {
    let _s = serial();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let err = sp::setup(
        Options::new()
            .in_memory()
            .verbose(false)
            .live(addr.as_str()),
    )
    .unwrap_err();
    assert!(matches!(err, sp::Error::Usage(_)), "{err:?}");
    assert!(err.to_string().contains(&addr), "{err}");
    assert!(!sp::is_active());
    let err = sp::setup(Options::new().in_memory().verbose(false).live("0.0.0.0:0")).unwrap_err();
    assert!(err.to_string().contains("live_token"), "{err}");
    assert!(!sp::is_active());
    let err = sp::setup(Options::new().in_memory().verbose(false).live("no port")).unwrap_err();
    assert!(err.to_string().contains("no port"), "{err}");
    assert!(!sp::is_active());
}

/// With a token, every request must carry it: 401 without or with another.
#[test]
fn a_token_is_required_of_every_request() {
    let _s = serial();
    let run = sp::setup(
        Options::new()
            .in_memory()
            .verbose(false)
            .live("0.0.0.0:0")
            .live_token("s3cret"),
    )
    .unwrap();
    let port = run.live_addr().unwrap().port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    assert_eq!(http(addr, "GET", "/snapshot", None).0, 401);
    assert_eq!(http(addr, "GET", "/snapshot", Some("wrong")).0, 401);
    assert_eq!(http(addr, "POST", "/pause", Some("s3cre")).0, 401);
    assert!(!run.is_paused(), "an unauthorized request did nothing");
    let (status, body) = http(addr, "GET", "/snapshot", Some("s3cret"));
    assert_eq!(status, 200, "{body}");
    run.finalize().unwrap();
}

/// A malformed request is answered 400, and the server goes on.
#[test]
fn a_malformed_request_does_not_stop_the_server() {
    let _s = serial();
    let (run, addr) = live_in_memory();
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.write_all(b"\x00\x01 nonsense\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 400"), "{response}");
    // A client that connects and says nothing holds the server 2 s at most.
    let _silent = TcpStream::connect(addr).unwrap();
    let t = Instant::now();
    snapshot(addr);
    assert!(t.elapsed() < Duration::from_secs(10));
    run.finalize().unwrap();
}

/// In aggregation mode the snapshot sums the threads' tables.
#[test]
fn aggregation_mode_snapshots() {
    let _s = serial();
    let run = sp::setup(
        Options::new()
            .in_memory()
            .verbose(false)
            .aggregation(true)
            .live("127.0.0.1:0"),
    )
    .unwrap();
    let addr = run.live_addr().unwrap();
    let (outer, inner) = (sp::region("agg-outer"), sp::region("agg-inner"));
    for _ in 0..100 {
        let _o = outer.enter();
        let _i = inner.enter();
    }
    let s = snapshot(addr);
    assert_eq!(calls(&s, "agg-outer"), 100);
    assert_eq!(calls(&s, "agg-inner"), 100);
    let o = s.regions.iter().find(|r| r.name == "agg-outer").unwrap();
    assert!(o.own_ns <= o.total_ns);
    // No records to tell open calls by: none shown, even this one.
    let _held = outer.enter();
    assert!(snapshot(addr).threads.iter().all(|t| t.open.is_empty()));
    drop(_held);
    run.finalize().unwrap();
}

/// Each thread's calls open now are in the snapshot, outermost first,
/// with how long they have been open; a thread that finished its calls
/// shows none, and aggregation mode (no records to tell them by) none.
#[test]
fn the_snapshot_shows_each_threads_open_calls() {
    let _s = serial();
    let (run, addr) = live_in_memory();
    let (held_tx, held_rx) = std::sync::mpsc::channel::<()>();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("solver".into())
            .spawn_scoped(s, move || {
                let _solve = sp::region("open-solve").enter();
                // Calls come and go under it, deeper than it stays.
                for _ in 0..10_000 {
                    let _f = sp::region("open-factor").enter();
                    let _l = sp::region("open-leaf").enter();
                }
                let _wait = sp::region("open-wait").enter();
                held_tx.send(()).unwrap();
                release_rx.recv().unwrap();
            })
            .unwrap();
        held_rx.recv().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let s = snapshot(addr);
        let solver = s
            .threads
            .iter()
            .find(|t| t.name == "solver")
            .expect("the thread");
        let names: Vec<&str> = solver.open.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["open-solve", "open-wait"], "{s:?}");
        let (solve, wait) = (solver.open[0].open_ns, solver.open[1].open_ns);
        assert!(solve >= wait && wait >= 20_000_000, "{solve} {wait}");
        assert_eq!(calls(&s, "open-factor"), 10_000);
        // This thread holds nothing open.
        let here = std::thread::current();
        let me = s
            .threads
            .iter()
            .find(|t| Some(t.name.as_str()) == here.name());
        assert!(me.is_none_or(|t| t.open.is_empty()), "{me:?}");
        release_tx.send(()).unwrap();
    });
    let s = snapshot(addr);
    let solver = s.threads.iter().find(|t| t.name == "solver").unwrap();
    assert!(solver.open.is_empty(), "the thread ended: {solver:?}");
    assert_eq!(calls(&s, "open-wait"), 1);
    run.finalize().unwrap();
}

#[profile]
async fn frame() {
    for _ in 0..3000 {
        {
            let _g = sp::region("leaf").enter();
        }
        tokio::task::yield_now().await;
    }
}

#[profile]
async fn task() {
    frame().await;
}

/// Async calls (tasks, and frames polled inside them: more than a chunk's
/// worth, so a frame gets a lane of its own that is placed in its task's)
/// are counted once each, with the file's own times.
#[test]
fn async_tasks_and_frames_match_the_file() {
    let _s = serial();
    let dir = temp_dir("live-async");
    let run = sp::setup(
        Options::new()
            .file_path(dir.join("async.h5"))
            // Chunks of 1,024 records: each frame's 3,000 calls outgrow one,
            // so each frame gets a lane of its own, placed in its task's.
            .memory_limit(1 << 20)
            .verbose(false)
            .live("127.0.0.1:0"),
    )
    .unwrap();
    let addr = run.live_addr().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    rt.block_on(async {
        let handles: Vec<_> = (0..8).map(|_| tokio::spawn(task())).collect();
        for h in handles {
            h.await.unwrap();
        }
    });
    drop(rt);
    let last = snapshot(addr);
    let results = run.finalize().unwrap();
    assert_eq!(results.statistics().len(), 3);
    for file in results.statistics() {
        let live = last.regions.iter().find(|r| r.name == file.name()).unwrap();
        assert_eq!(live.calls, file.num_calls(), "{}", file.name());
        let near = |a: i64, b: i64| (a - b).abs() as f64 <= 0.01 * b.abs() as f64 + 1000.0;
        assert!(
            near(live.own_ns, file.exclusive()),
            "{}: {live:?} vs {}",
            file.name(),
            file.exclusive()
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A future pending until its gate opens.
struct Gate(
    std::sync::Arc<(
        std::sync::atomic::AtomicBool,
        std::sync::Mutex<Vec<std::task::Waker>>,
    )>,
);

impl std::future::Future for Gate {
    type Output = ();
    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        let (open, wakers) = &*self.0;
        wakers.lock().unwrap().push(cx.waker().clone());
        if open.load(std::sync::atomic::Ordering::SeqCst) {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    }
}

/// A gate's shared state, closed, with no waker yet.
fn closed_gate() -> std::sync::Arc<(
    std::sync::atomic::AtomicBool,
    std::sync::Mutex<Vec<std::task::Waker>>,
)> {
    std::sync::Arc::new((
        std::sync::atomic::AtomicBool::new(false),
        std::sync::Mutex::new(Vec::new()),
    ))
}

#[profile]
async fn waits(gate: Gate) {
    gate.await;
}

#[profile]
async fn request(gate: Gate) {
    {
        let _before = sp::region("before-wait").enter();
    }
    waits(gate).await;
}

/// The tasks in flight are in the snapshot, each with its own call open
/// (and how long), not polled while they wait, and the calls they finished
/// are counted (once); none in flight once they finished.
#[test]
fn the_snapshot_shows_the_tasks_in_flight() {
    let _s = serial();
    let (run, addr) = live_in_memory();
    let gate = closed_gate();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    let handles: Vec<_> = (0..3)
        .map(|_| rt.spawn(request(Gate(std::sync::Arc::clone(&gate)))))
        .collect();
    // Each has been polled once and waits.
    let start = Instant::now();
    while gate.1.lock().unwrap().len() < 3 {
        assert!(start.elapsed() < Duration::from_secs(10), "the tasks run");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(20));
    let s = snapshot(addr);
    assert_eq!(s.tasks.len(), 3, "{s:?}");
    for t in &s.tasks {
        assert!(!t.polled, "{t:?}");
        // Its own call, and under it the future it awaits (a frame).
        let open: Vec<(&str, u32)> = t.open.iter().map(|c| (c.name.as_str(), c.depth)).collect();
        assert_eq!(open, [("request", 0), ("waits", 1)], "{t:?}");
        assert!(t.open[0].open_ns >= 20_000_000, "{t:?}");
        assert!(t.open[1].open_ns <= t.open[0].open_ns, "{t:?}");
    }
    // The calls they finished before they waited are in no lane yet (in
    // each task's private chunk, lent to the server while it waits).
    assert_eq!(calls(&s, "before-wait"), 3, "{s:?}");
    assert_eq!(calls(&s, "request"), 0, "{s:?}");
    gate.0.store(true, std::sync::atomic::Ordering::SeqCst);
    for w in gate.1.lock().unwrap().drain(..) {
        w.wake();
    }
    for h in handles {
        rt.block_on(h).unwrap();
    }
    let s = snapshot(addr);
    assert!(s.tasks.is_empty(), "{:?}", s.tasks);
    assert_eq!(calls(&s, "request"), 3);
    // Taken back when the tasks ended, then folded from their lane: once.
    assert_eq!(calls(&s, "before-wait"), 3, "{s:?}");
    drop(rt);
    run.finalize().unwrap();
}

/// Two futures polled side by side, as `join!` does.
struct Join2(
    Option<std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>>,
    Option<std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>>,
);

impl std::future::Future for Join2 {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        let this = &mut *self;
        for f in [&mut this.0, &mut this.1] {
            if f.as_mut().is_some_and(|f| f.as_mut().poll(cx).is_ready()) {
                *f = None;
            }
        }
        if this.0.is_none() && this.1.is_none() {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    }
}

#[profile]
async fn inner_wait(gate: Gate) {
    for _ in 0..5 {
        let _c = sp::region("in-frame").enter();
    }
    let _held = sp::region("held").enter();
    waits(gate).await;
}

#[profile]
async fn both(a: Gate, b: Gate) {
    Join2(Some(Box::pin(inner_wait(a))), Some(Box::pin(waits(b)))).await;
}

/// A task awaiting two futures side by side lists both under its own
/// call, each with what it awaits and holds open, at their levels; the
/// calls a waiting frame finished are counted, once.
#[test]
fn a_tasks_frames_side_by_side_are_listed_under_it() {
    let _s = serial();
    let (run, addr) = live_in_memory();
    let gate = closed_gate();
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    let mut task = std::pin::pin!(both(
        Gate(std::sync::Arc::clone(&gate)),
        Gate(std::sync::Arc::clone(&gate))
    ));
    assert!(std::future::Future::poll(task.as_mut(), &mut cx).is_pending());
    let s = snapshot(addr);
    assert_eq!(s.tasks.len(), 1, "{s:?}");
    let open: Vec<(&str, u32)> = s.tasks[0]
        .open
        .iter()
        .map(|c| (c.name.as_str(), c.depth))
        .collect();
    assert_eq!(
        open,
        [
            ("both", 0),
            ("inner_wait", 1),
            ("held", 2),
            ("waits", 3),
            ("waits", 1)
        ],
        "{s:?}"
    );
    // The calls the frame finished, in its private chunk: lent.
    assert_eq!(calls(&s, "in-frame"), 5, "{s:?}");
    gate.0.store(true, std::sync::atomic::Ordering::SeqCst);
    assert!(std::future::Future::poll(task.as_mut(), &mut cx).is_ready());
    let s = snapshot(addr);
    assert!(s.tasks.is_empty(), "{s:?}");
    // Taken back, nested in the task's calls, then in its block: once.
    assert_eq!(
        (
            calls(&s, "both"),
            calls(&s, "waits"),
            calls(&s, "held"),
            calls(&s, "in-frame")
        ),
        (1, 2, 1, 5)
    );
    run.finalize().unwrap();
}

/// Pending at its first poll, ready at the next.
struct YieldOnce(bool);

impl std::future::Future for YieldOnce {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if std::mem::replace(&mut self.0, true) {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    }
}

#[profile]
async fn grows(early: usize, late: usize) {
    for _ in 0..early {
        let _c = sp::region("early").enter();
    }
    YieldOnce(false).await;
    for _ in 0..late {
        let _c = sp::region("late").enter();
    }
    YieldOnce(false).await;
}

/// A waiting task's finished calls are counted once at each step of its
/// life: lent from its private chunk, then in the lane it gets when it
/// outgrows that chunk, then at its end.
#[test]
fn a_waiting_tasks_calls_are_counted_once_as_it_grows() {
    let _s = serial();
    let (run, addr) = live_in_memory();
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    let mut task = std::pin::pin!(grows(10, 100));
    let mut step = || std::future::Future::poll(task.as_mut(), &mut cx);
    assert!(step().is_pending());
    let s = snapshot(addr);
    assert_eq!((calls(&s, "early"), calls(&s, "late")), (10, 0), "{s:?}");
    assert_eq!(s.tasks.len(), 1, "{s:?}");
    // 110 calls: past the private chunk, a lane of its own.
    assert!(step().is_pending());
    let s = snapshot(addr);
    assert_eq!((calls(&s, "early"), calls(&s, "late")), (10, 100), "{s:?}");
    assert!(
        s.threads.iter().any(|t| t.tasks),
        "a lane of its own: {s:?}"
    );
    assert!(step().is_ready());
    let s = snapshot(addr);
    assert_eq!(
        (calls(&s, "early"), calls(&s, "late"), calls(&s, "grows")),
        (10, 100, 1),
        "{s:?}"
    );
    assert!(s.tasks.is_empty(), "{s:?}");
    let results = run.finalize().unwrap();
    let profile = results.profile().unwrap();
    assert_eq!(profile.events.len(), 111);
}

/// The TOML keys `live`, `live_token` and `start_paused`.
#[test]
fn toml_keys() {
    use scope_profiler_core::internal::options::read;
    let dir = temp_dir("live-toml");
    let path = dir.join("live.toml");
    std::fs::write(
        &path,
        "[profiling]\nlive = \"127.0.0.1:0\"\nlive_token = \"t\"\nstart_paused = true\n",
    )
    .unwrap();
    let o = Options::from_toml(&path).unwrap();
    assert_eq!(read::live(&o), Some("127.0.0.1:0"));
    assert_eq!(read::live_token(&o), Some("t"));
    assert!(read::start_paused(&o));
    std::fs::write(&path, "[profiling]\nlive = \"\"\n").unwrap();
    let err = Options::from_toml(&path).unwrap_err().to_string();
    assert!(
        err.contains("line 2") && err.contains("`live` is empty"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
