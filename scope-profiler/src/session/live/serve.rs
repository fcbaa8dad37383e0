//! The serving thread: its loop (accept, answer, fold once a second), its
//! routes, and the running servers by session.

#![forbid(unsafe_code)]

use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::Bound;
use super::http::{self, Failed};
use crate::active::{self, Session, active_generation};
use crate::clock::Anchor;
use crate::error::Error;
use crate::live::{LiveTotals, OpenCall};
use crate::reader::live::{Snapshot, SnapshotCall, SnapshotRegion, SnapshotTask, SnapshotThread};
use crate::sync::{fork_epoch, lock};

/// How often the totals are folded without a request (a request folds
/// first, whenever it comes). Seldom, so that the spill writer, which reads
/// each chunk it spills anyway, folds most of them (`SpillWatch`): folding
/// every 100 ms instead took the serving thread from 0.9-1.5% to 2.2% of a
/// core at 4.6M calls/s (bench-compare's live section).
const FOLD_EVERY: Duration = Duration::from_secs(1);
/// How long the loop sleeps when no connection waits.
const IDLE: Duration = Duration::from_millis(25);

/// A running server.
struct Server {
    generation: u32,
    /// The fork epoch it was started in: a `fork()` child has no thread of
    /// its parent's to stop.
    epoch: u32,
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// The running servers (one per session that serves; at most one session
/// is active, a finalized one's server stops right after).
static SERVERS: Mutex<Vec<Server>> = Mutex::new(Vec::new());

pub(super) fn start(
    bound: Bound,
    session: &Arc<Session>,
    verbose: bool,
) -> Result<SocketAddr, Error> {
    let failed = |why: std::io::Error| Error::Usage(format!("live: cannot serve: {why}"));
    let addr = bound.listener.local_addr().map_err(failed)?;
    bound.listener.set_nonblocking(true).map_err(failed)?;
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = Arc::clone(&stop);
    let serving = Serving::new(Arc::clone(session), bound.token);
    let thread = std::thread::Builder::new()
        .name("sp-live-server".into())
        .spawn(move || serving.run(bound.listener, &stopping))
        .map_err(failed)?;
    if verbose {
        eprintln!("scope-profiler: live on http://{addr} (scope-prof live {addr})");
    }
    lock(&SERVERS).push(Server {
        generation: session.generation,
        epoch: fork_epoch(),
        addr,
        stop,
        thread: Some(thread),
    });
    Ok(addr)
}

pub(super) fn stop_ended() {
    let active = active_generation();
    let ended: Vec<Server> = {
        let mut servers = lock(&SERVERS);
        let (ended, kept) = std::mem::take(&mut *servers)
            .into_iter()
            .partition(|s| s.generation != active);
        *servers = kept;
        ended
    };
    for mut server in ended {
        server.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = server.thread.take() {
            if server.epoch == fork_epoch() {
                let _ = thread.join();
            } else {
                // A `fork()` child: the thread is its parent's (joining
                // would wait forever); its handle is left alone.
                std::mem::forget(thread);
            }
        }
    }
}

pub(super) fn addr(generation: u32) -> Option<SocketAddr> {
    lock(&SERVERS)
        .iter()
        .find(|s| s.generation == generation)
        .map(|s| s.addr)
}

/// The serving thread's state.
struct Serving {
    session: Arc<Session>,
    token: Option<String>,
    /// Shared with the session's spill writer (`SpillWatch`), which folds
    /// a chunk's rest before it spills it, when the totals are free.
    totals: Arc<Mutex<LiveTotals>>,
    folded: Option<Instant>,
    /// Why the last fold failed (a spilled block unreadable), if it did.
    error: Option<String>,
}

impl Serving {
    fn new(session: Arc<Session>, token: Option<String>) -> Serving {
        let totals = Arc::new(Mutex::new(LiveTotals::new()));
        session.store.watch_spills(Arc::clone(&totals) as _);
        Serving {
            session,
            token,
            totals,
            folded: None,
            error: None,
        }
    }

    fn run(mut self, listener: std::net::TcpListener, stop: &AtomicBool) {
        // The profiler's own work is never counted as the program's.
        let _quiet = crate::counters::suspend();
        while !stop.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok((mut stream, _)) => {
                    let _ = stream.set_nonblocking(false);
                    self.answer(&mut stream);
                }
                Err(_) => {
                    if self.folded.is_none_or(|t| t.elapsed() >= FOLD_EVERY) {
                        self.fold();
                    }
                    std::thread::sleep(IDLE);
                }
            }
        }
    }

    /// Folds the calls finished since the last fold.
    fn fold(&mut self) {
        self.folded = Some(Instant::now());
        let folded = lock(&self.totals).update(&self.session.store);
        if let Some(Err(e)) = folded {
            self.error = Some(e.to_string());
        }
    }

    fn answer(&mut self, stream: &mut TcpStream) {
        let request = match http::read_request(stream) {
            Ok(r) => r,
            Err(Failed::Gone) => return,
            Err(Failed::Status(status, why)) => {
                return http::respond(stream, status, &message(why));
            }
        };
        if let Some(token) = &self.token
            && !http::authorized(request.authorization.as_deref(), token)
        {
            return http::respond(
                stream,
                401,
                &message("this session's live server needs its token: Authorization: Bearer TOKEN"),
            );
        }
        let (status, body) = self.route(&request.method, &request.path);
        http::respond(stream, status, &body);
    }

    fn route(&mut self, method: &str, path: &str) -> (u16, String) {
        let ended = active_generation() != self.session.generation;
        match (method, path) {
            ("GET", "/snapshot") => {
                // Each record is folded once: a request costs what the
                // calls since the last fold cost to fold, however often.
                self.fold();
                if let Some(e) = &self.error {
                    return (500, message(e));
                }
                (200, self.snapshot().to_json())
            }
            ("POST", _) if ended => (409, message("the session has ended")),
            ("POST", "/pause") => match super::super::pause() {
                Ok(()) => (200, state(true)),
                Err(e) => (409, message(&e.to_string())),
            },
            ("POST", "/resume") => {
                super::super::resume();
                (200, state(false))
            }
            ("POST", "/checkpoint") => match super::super::checkpoint() {
                Ok(results) => {
                    let mut body = b"{\"checkpoint\":".to_vec();
                    match results.file_path() {
                        Some(p) => crate::json::push_string(&mut body, &p.to_string_lossy()),
                        None => body.extend_from_slice(b"null"),
                    }
                    body.push(b'}');
                    (200, String::from_utf8(body).unwrap_or_default())
                }
                Err(e) => (409, message(&e.to_string())),
            },
            (_, "/snapshot" | "/pause" | "/resume" | "/checkpoint") => (
                405,
                message("GET /snapshot; POST /pause, /resume, /checkpoint"),
            ),
            _ => (
                404,
                message("GET /snapshot; POST /pause, /resume, /checkpoint"),
            ),
        }
    }

    /// The totals folded so far, as the snapshot document.
    fn snapshot(&self) -> Snapshot {
        let session = &self.session;
        let totals = lock(&self.totals);
        let now = Anchor::now();
        let ticks = now.ticks.saturating_sub(session.start.ticks).max(1);
        let ns_per_tick = (now.ns - session.start.ns).max(0) as f64 / ticks as f64;
        let ns = |t: u64| (t as f64 * ns_per_tick) as i64;
        let table = session.regions.snapshot();
        let call = |c: &OpenCall| SnapshotCall {
            name: table.get(c.region as usize).map_or_else(
                || format!("region {}", c.region),
                |i| i.entry.name.to_owned(),
            ),
            open_ns: ns(now.ticks.saturating_sub(c.start)),
            depth: c.depth,
        };
        let mut s = Snapshot::new();
        s.elapsed_ns = now.ns - session.start.ns;
        s.paused = active_generation() == session.generation && active::is_paused();
        s.label = crate::options::read::label(&session.options);
        for (id, total) in totals.regions().iter().enumerate() {
            if total.calls == 0 && total.dropped == 0 {
                continue;
            }
            let Some(info) = table.get(id) else {
                continue;
            };
            s.regions.push(SnapshotRegion {
                name: info.entry.name.to_owned(),
                calls: total.calls,
                total_ns: ns(total.total),
                own_ns: ns(total.own),
                max_ns: ns(total.max),
                dropped: total.dropped,
            });
        }
        s.threads = totals
            .lanes(&session.store)
            .into_iter()
            .map(|l| SnapshotThread {
                index: l.index,
                name: l.name,
                tasks: l.tasks,
                calls: l.calls,
                open: l.open.iter().map(call).collect(),
            })
            .collect();
        s.tasks = totals
            .tasks()
            .iter()
            .map(|t| SnapshotTask {
                thread: t.thread,
                index: t.index,
                polled: t.polled,
                open: t.calls.iter().map(call).collect(),
            })
            .collect();
        s
    }
}

/// `{"message": ...}`.
fn message(text: &str) -> String {
    let mut body = b"{\"message\":".to_vec();
    crate::json::push_string(&mut body, text);
    body.push(b'}');
    String::from_utf8(body).unwrap_or_default()
}

/// `{"paused": ...}`.
fn state(paused: bool) -> String {
    format!("{{\"paused\":{paused}}}")
}
