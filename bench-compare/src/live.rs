//! The live server's cost (issue 34 item 4), two ways:
//!
//! - per call, one thread: `#[profile]` in a session without `live` and in
//!   one serving it with a client asking for a snapshot every 100 ms (ten
//!   times the view's rate), rounds rotated, each round a session of its
//!   own; a session without `live` runs no extra code per call (the entry
//!   and exit paths do not know the server exists), so the difference is
//!   what the serving thread's folds cost the recording thread (the cache
//!   lines of the records it reads);
//! - the serving thread: 8 threads calling 1,000 regions (each call ~1 us
//!   of work) for a few seconds, a client polling every second; the
//!   thread's CPU time (`/proc/self/task/TID/schedstat`) over the wall
//!   time, and per call folded.

use std::hint::black_box;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use scope_profiler::{self as sp, Options};

use crate::common::{median, quantile, rotated, time, work};
use crate::micro::floor_quanta;
use crate::ours::profiled;

/// `GET /snapshot`; the body's length.
fn poll(addr: SocketAddr) -> usize {
    let Ok(mut s) = TcpStream::connect(addr) else {
        return 0;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = write!(s, "GET /snapshot HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    let mut body = Vec::new();
    let _ = s.read_to_end(&mut body);
    body.len()
}

/// A client polling `addr` every `every` until `stop`; the polls made.
fn client(
    addr: SocketAddr,
    every: Duration,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<u32> {
    std::thread::spawn(move || {
        let mut polls = 0;
        while !stop.load(Ordering::Relaxed) {
            if poll(addr) > 0 {
                polls += 1;
            }
            std::thread::sleep(every);
        }
        polls
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Row {
    Floor,
    Off,
    On,
}

/// What the section measured.
pub struct LiveResult {
    pub calls: u64,
    pub rounds: usize,
    /// ns per call by row: floor, live off, live on (each round's).
    pub rows: [Vec<f64>; 3],
    pub polls: u32,
    pub serving: Serving,
}

/// The serving thread under 8 recording threads.
pub struct Serving {
    pub threads: usize,
    pub regions: usize,
    pub wall_s: f64,
    pub calls: u64,
    /// The serving thread's CPU.
    pub cpu_ns: u64,
    /// The spill writer's CPU, with `live` and in the same run without.
    pub writer_ns: u64,
    pub writer_off_ns: u64,
    pub calls_off: u64,
    pub polls: u32,
    pub snapshot_bytes: usize,
}

pub fn run(calls: u64, rounds: usize) -> LiveResult {
    let mut rows: [Vec<f64>; 3] = Default::default();
    let mut polls = 0;
    let clock = quanta::Clock::new();
    for round in 0..rounds {
        for row in rotated(&[Row::Floor, Row::Off, Row::On], round) {
            let ns = match row {
                Row::Floor => time(calls, |x| floor_quanta(&clock, x)),
                Row::Off => {
                    let run = sp::setup(Options::new().in_memory().verbose(false)).expect("setup");
                    let ns = time(calls, profiled);
                    drop(run.finalize().expect("finalize"));
                    ns
                }
                Row::On => {
                    let run = sp::setup(
                        Options::new()
                            .in_memory()
                            .verbose(false)
                            .live("127.0.0.1:0"),
                    )
                    .expect("setup");
                    let addr = run.live_addr().expect("serving");
                    let stop = Arc::new(AtomicBool::new(false));
                    let polling = client(addr, Duration::from_millis(100), Arc::clone(&stop));
                    let ns = time(calls, profiled);
                    stop.store(true, Ordering::Relaxed);
                    polls += polling.join().unwrap_or(0);
                    drop(run.finalize().expect("finalize"));
                    ns
                }
            };
            let i = match row {
                Row::Floor => 0,
                Row::Off => 1,
                Row::On => 2,
            };
            rows[i].push(ns);
        }
    }
    LiveResult {
        calls,
        rounds,
        rows,
        polls,
        serving: serving(8, 1000, Duration::from_secs(5)),
    }
}

/// CPU ns the thread named `name` has run (`/proc/self/task/*/comm`).
pub fn thread_cpu_ns(name: &str) -> Option<u64> {
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim() == name {
            let stat = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
            return stat.split_whitespace().next()?.parse().ok();
        }
    }
    None
}

/// What one recording of [`record`] gave: calls, wall s, the serving
/// thread's and the spill writer's CPU ns, polls, the last snapshot's bytes.
struct Recorded {
    calls: u64,
    wall_s: f64,
    server_ns: u64,
    writer_ns: u64,
    polls: u32,
    snapshot_bytes: usize,
}

/// `threads` threads call `regions` regions (each ~1 us of work) for
/// `wall`, in a session serving `live` (a client polling every second) or
/// not.
fn record(threads: usize, regions: usize, wall: Duration, live: bool) -> Recorded {
    let names: Vec<String> = (0..regions).map(|i| format!("region-{i:04}")).collect();
    let mut options = Options::new().in_memory().verbose(false);
    if live {
        options = options.live("127.0.0.1:0");
    }
    let run = sp::setup(options).expect("setup");
    // Resolved in this session (a handle made before it records nothing).
    let handles: Vec<sp::Region> = names.iter().map(|n| sp::region(n.as_str())).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let polling = run.live_addr().map(|addr| {
        (
            addr,
            client(addr, Duration::from_secs(1), Arc::clone(&stop)),
        )
    });
    let server0 = thread_cpu_ns(SERVER).unwrap_or(0);
    let writer0 = thread_cpu_ns(WRITER).unwrap_or(0);
    let t = Instant::now();
    let calls: u64 = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|k| {
                let handles = &handles;
                s.spawn(move || {
                    let mut n = 0u64;
                    let mut i = k;
                    while t.elapsed() < wall {
                        for _ in 0..64 {
                            let _g = handles[i % handles.len()].enter();
                            let mut x = i as u64;
                            for _ in 0..300 {
                                x = black_box(work(x));
                            }
                            i += 7;
                            n += 1;
                        }
                    }
                    n
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or(0)).sum()
    });
    let wall_s = t.elapsed().as_secs_f64();
    // One last snapshot, of every call.
    let snapshot_bytes = polling.as_ref().map_or(0, |(addr, _)| poll(*addr));
    let server_ns = thread_cpu_ns(SERVER).unwrap_or(0).saturating_sub(server0);
    let writer_ns = thread_cpu_ns(WRITER).unwrap_or(0).saturating_sub(writer0);
    stop.store(true, Ordering::Relaxed);
    let polls = polling.map_or(0, |(_, p)| p.join().unwrap_or(0) + 1);
    drop(run.finalize().expect("finalize"));
    Recorded {
        calls,
        wall_s,
        server_ns,
        writer_ns,
        polls,
        snapshot_bytes,
    }
}

/// The live server's thread, and the spill writer's (`comm` keeps 15 bytes
/// of a thread's name).
const SERVER: &str = "sp-live-server";
const WRITER: &str = "scope-profiler-";

/// The serving thread's cost under `threads` recording threads, beside the
/// same recording without `live`.
fn serving(threads: usize, regions: usize, wall: Duration) -> Serving {
    let off = record(threads, regions, wall, false);
    let on = record(threads, regions, wall, true);
    Serving {
        threads,
        regions,
        wall_s: on.wall_s,
        calls: on.calls,
        cpu_ns: on.server_ns,
        writer_ns: on.writer_ns,
        writer_off_ns: off.writer_ns,
        calls_off: off.calls,
        polls: on.polls,
        snapshot_bytes: on.snapshot_bytes,
    }
}

/// The section's markdown.
pub fn render(r: &LiveResult) -> String {
    let stat = |v: &[f64]| (median(v), quantile(v, 0.75) - quantile(v, 0.25));
    let (floor, floor_iqr) = stat(&r.rows[0]);
    let mut out = format!(
        "Per call, one thread: {} rounds x {} calls, rows rotated, each `#[profile]` round a \
         session of its own; the `live` row's session serves `127.0.0.1:0` and a client asks \
         for a snapshot every 100 ms ({} snapshots in all).\n\n\
         | variant | ns/call (median) | IQR | over the floor |\n| --- | ---: | ---: | ---: |\n\
         | floor: workload between 2x `quanta::Clock::raw` | {floor:.1} | {floor_iqr:.1} | |\n",
        r.rounds, r.calls, r.polls
    );
    for (label, v) in [
        ("`#[profile]`, no `live`", &r.rows[1]),
        (
            "`#[profile]`, `live` on, a snapshot every 100 ms",
            &r.rows[2],
        ),
    ] {
        let (m, iqr) = stat(v);
        out += &format!("| {label} | {m:.1} | {iqr:.1} | {:+.1} |\n", m - floor);
    }
    let s = &r.serving;
    let core_pct = s.cpu_ns as f64 / (s.wall_s * 1e9) * 100.0;
    // The writer's CPU per call spilled, with and without live: what the
    // folds it makes (a chunk's rest, in its cache) add to it.
    let writer_on = s.writer_ns as f64 / s.calls.max(1) as f64;
    let writer_off = s.writer_off_ns as f64 / s.calls_off.max(1) as f64;
    let added = s.cpu_ns as f64 / s.calls.max(1) as f64 + (writer_on - writer_off);
    out += &format!(
        "\nThe serving thread: {} threads calling {} regions (each call ~1 us of work) for \
         {:.1} s on this machine's cores, a client polling every second ({} snapshots, the \
         last {} bytes). The spill writer folds the rest of each chunk it is about to spill \
         (`SpillWatch`) when the totals are free, so its CPU is shown beside the same \
         recording without `live` ({} calls).\n\n\
         | calls recorded | calls/s | serving thread CPU | % of one core | ns per call folded | spill writer ns/call, `live` / without | CPU `live` adds per call |\n\
         | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n\
         | {} | {:.0} | {:.1} ms | {core_pct:.2}% | {:.2} | {writer_on:.2} / {writer_off:.2} | {added:.2} ns |\n",
        s.threads,
        s.regions,
        s.wall_s,
        s.polls,
        s.snapshot_bytes,
        s.calls_off,
        s.calls,
        s.calls as f64 / s.wall_s,
        s.cpu_ns as f64 / 1e6,
        s.cpu_ns as f64 / s.calls.max(1) as f64,
    );
    out
}
