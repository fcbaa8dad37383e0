//! The peers, each set up so that it really records, around the same
//! workload; and a check, after the run, that it did.
//!
//! - hotpath 0.30 (`hotpath` feature): `#[hotpath::measure]`, with its guard
//!   alive for the whole run (what `#[hotpath::main]` creates). Its report is
//!   written as JSON to a temporary file, read back for the call count.
//! - puffin 0.20: `profile_function!`, scopes on, an outer scope per batch
//!   of 10k calls and `GlobalProfiler::new_frame()` after it. A sink counts
//!   the scopes of every frame.
//! - fastrace 0.7 (`enable`): `#[fastrace::trace]`, a root `Span` per batch
//!   of 10k spans made the local parent; a reporter that only counts spans.
//! - tracing 0.1: `#[tracing::instrument]` with a `tracing_subscriber`
//!   `Registry` (no layers) as the global default; and, as scoped defaults
//!   (`dispatcher::with_default`, so these rows pay the same thread-local
//!   dispatch lookup), a `Registry` alone, with our `scope-profiler-tracing`
//!   layer, and with tracing-chrome 0.7's `ChromeLayer` (writing to a
//!   temporary file), tracing-tracy 0.11's `TracyLayer` (no Tracy server:
//!   its client keeps the zones in memory; measured in a process of its
//!   own, since the client's thread runs until the process ends and took
//!   CPU from every other row), and a no-op layer (`Identity`: what going
//!   through `Layered` costs, the base of what a layer adds).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::common::{poll_once, work};

/// `#[hotpath::measure]` on the workload.
#[hotpath::measure]
#[inline(never)]
pub fn hotpath_fn(x: u64) -> u64 {
    work(x)
}

/// puffin's `profile_function!` in the workload.
#[inline(never)]
pub fn puffin_fn(x: u64) -> u64 {
    puffin::profile_function!();
    work(x)
}

/// `#[fastrace::trace]` on the workload.
#[fastrace::trace]
#[inline(never)]
pub fn fastrace_fn(x: u64) -> u64 {
    work(x)
}

/// `#[tracing::instrument]` on the workload (`x` becomes a span field).
#[tracing::instrument]
#[inline(never)]
pub fn tracing_fn(x: u64) -> u64 {
    work(x)
}

/// `#[hotpath::measure]` on an `async fn` of the workload.
#[hotpath::measure]
async fn hotpath_async(x: u64) -> u64 {
    work(x)
}

/// [`hotpath_async`] polled once to completion (a task each call, as our
/// `async-task` row).
#[inline(never)]
pub fn hotpath_async_fn(x: u64) -> u64 {
    poll_once(hotpath_async(x))
}

/// `#[fastrace::trace]` on an `async fn` of the workload.
#[fastrace::trace]
async fn fastrace_async(x: u64) -> u64 {
    work(x)
}

/// [`fastrace_async`] polled once to completion.
#[inline(never)]
pub fn fastrace_async_fn(x: u64) -> u64 {
    poll_once(fastrace_async(x))
}

/// `#[tracing::instrument]` on an `async fn` of the workload.
#[tracing::instrument]
async fn tracing_async(x: u64) -> u64 {
    work(x)
}

/// [`tracing_async`] polled once to completion.
#[inline(never)]
pub fn tracing_async_fn(x: u64) -> u64 {
    poll_once(tracing_async(x))
}

/// Whether an `#[instrument]`ed function runs inside a real span (one the
/// registry created), as `tracing_fn` does.
#[tracing::instrument]
fn tracing_probe() -> bool {
    let span = tracing::Span::current();
    !span.is_disabled() && span.id().is_some()
}

/// Puffin's per-batch frame: an outer scope, then `new_frame` after it.
pub struct PuffinFrame {
    scope: Option<puffin::ProfilerScope>,
}

impl PuffinFrame {
    /// Opens the batch's outer scope.
    pub fn open() -> PuffinFrame {
        PuffinFrame {
            scope: puffin::profile_scope_custom!("frame"),
        }
    }
}

impl Drop for PuffinFrame {
    fn drop(&mut self) {
        drop(self.scope.take());
        puffin::GlobalProfiler::lock().new_frame();
    }
}

/// fastrace's per-batch root: a sampled root span made the local parent.
pub struct FastraceRoot {
    guard: Option<fastrace::local::LocalParentGuard>,
    _root: fastrace::Span,
}

impl FastraceRoot {
    /// Starts the batch's root span.
    pub fn open() -> FastraceRoot {
        let root = fastrace::Span::root("batch", fastrace::collector::SpanContext::random());
        let guard = root.set_local_parent();
        FastraceRoot {
            guard: Some(guard),
            _root: root,
        }
    }
}

impl Drop for FastraceRoot {
    fn drop(&mut self) {
        // The local parent ends before the root span.
        drop(self.guard.take());
    }
}

static PUFFIN_SCOPES: AtomicU64 = AtomicU64::new(0);

struct CountingReporter(Arc<AtomicU64>);

impl fastrace::collector::Reporter for CountingReporter {
    fn report(&mut self, spans: Vec<fastrace::collector::SpanRecord>) {
        self.0.fetch_add(spans.len() as u64, Relaxed);
    }
}

/// The subscribers of the layered tracing rows, each used as a scoped
/// default by its row (see [`with_layered`]).
pub struct Layered {
    /// `Registry` alone.
    pub scoped: tracing::Dispatch,
    /// `Registry` + our layer.
    pub ours: tracing::Dispatch,
    /// `Registry` + a layer that does nothing.
    pub identity: tracing::Dispatch,
}

/// Set by [`Peers::start`].
pub static LAYERED: std::sync::OnceLock<Layered> = std::sync::OnceLock::new();

/// Runs `f` with the subscriber `pick` chooses as this thread's default.
pub fn with_layered<R>(pick: impl Fn(&Layered) -> &tracing::Dispatch, f: impl FnOnce() -> R) -> R {
    let layered = LAYERED
        .get()
        .expect("Peers::start sets the layered subscribers");
    tracing::dispatcher::with_default(pick(layered), f)
}

/// The peers' global state for one run.
pub struct Peers {
    hotpath: Option<hotpath::HotpathGuard>,
    hotpath_report: PathBuf,
    fastrace_spans: Arc<AtomicU64>,
}

/// What each peer recorded, checked after the run.
#[derive(Debug, Default)]
pub struct Recorded {
    pub hotpath_calls: Option<u64>,
    /// Calls of the `async fn` in hotpath's report.
    pub hotpath_async_calls: Option<u64>,
    pub puffin_scopes: u64,
    pub fastrace_spans: u64,
    pub tracing_real_spans: bool,
    /// Span begins ("ph":"B") in tracing-chrome's trace file.
    pub chrome_begins: u64,
}

impl Peers {
    /// Turns every peer on. `dir` receives hotpath's JSON report.
    pub fn start(dir: &std::path::Path) -> Peers {
        // hotpath: the guard `#[hotpath::main]` would create, kept alive.
        let hotpath_report = dir.join("hotpath-report.json");
        let hotpath = hotpath::HotpathGuardBuilder::new("bench-compare")
            .format(hotpath::Format::Json)
            .output_path(&hotpath_report)
            .build();
        // puffin: scopes on; a sink counts what every frame holds.
        puffin::set_scopes_on(true);
        puffin::GlobalProfiler::lock().add_sink(Box::new(|frame| {
            PUFFIN_SCOPES.fetch_add(frame.meta().num_scopes as u64, Relaxed);
        }));
        // fastrace: a reporter (counting only) makes spans under a root record.
        let fastrace_spans = Arc::new(AtomicU64::new(0));
        fastrace::set_reporter(
            CountingReporter(Arc::clone(&fastrace_spans)),
            fastrace::collector::Config::default(),
        );
        // tracing: a Registry with no layers as the global subscriber.
        tracing::subscriber::set_global_default(tracing_subscriber::registry::Registry::default())
            .expect("no other global tracing subscriber");
        // The layered subscribers, used as scoped defaults by their rows.
        use tracing_subscriber::layer::SubscriberExt;
        let _ = LAYERED.set(Layered {
            scoped: tracing::Dispatch::new(tracing_subscriber::registry()),
            ours: tracing::Dispatch::new(
                tracing_subscriber::registry().with(scope_profiler_tracing::layer()),
            ),
            identity: tracing::Dispatch::new(
                tracing_subscriber::registry().with(tracing_subscriber::layer::Identity::new()),
            ),
        });
        Peers {
            hotpath: Some(hotpath),
            hotpath_report,
            fastrace_spans,
        }
    }

    /// Stops the peers (hotpath writes its report) and reads what they
    /// recorded.
    pub fn finish(mut self) -> Recorded {
        fastrace::flush();
        drop(self.hotpath.take());
        let report = std::fs::read_to_string(&self.hotpath_report).ok();
        let calls = |function| {
            report
                .as_deref()
                .and_then(|json| json_calls(json, function))
        };
        Recorded {
            hotpath_calls: calls("hotpath_fn"),
            hotpath_async_calls: calls("hotpath_async"),
            puffin_scopes: PUFFIN_SCOPES.load(Relaxed),
            fastrace_spans: self.fastrace_spans.load(Relaxed),
            tracing_real_spans: tracing_probe(),
            chrome_begins: CHROME_BEGINS_TOTAL.load(Relaxed),
        }
    }
}

/// The `calls` count hotpath's JSON report gives the function whose name
/// ends with `function`. A scan, not a parser: the report puts
/// `"name": "...", ... "calls": N` in each function's object.
fn json_calls(json: &str, function: &str) -> Option<u64> {
    let at = json.find(&format!("{function}\""))?;
    let rest = &json[at..];
    let calls = rest.find("\"calls\"")?;
    let digits: String = rest[calls + 7..]
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Span begins tracing-chrome wrote, summed over its rows' processes.
pub static CHROME_BEGINS_TOTAL: AtomicU64 = AtomicU64::new(0);

/// tracing-chrome's row, in a process of its own: ns per call with its
/// layer, and the span begins in its trace file once its writer finished.
pub fn chrome_row(calls: u64) -> (f64, u64) {
    use tracing_subscriber::layer::SubscriberExt;
    let file = std::env::temp_dir().join(format!("tracing-chrome-{}.json", std::process::id()));
    let (chrome, flush) = tracing_chrome::ChromeLayerBuilder::new()
        .file(&file)
        .build();
    let dispatch = tracing::Dispatch::new(tracing_subscriber::registry().with(chrome));
    let ns =
        tracing::dispatcher::with_default(&dispatch, || crate::common::time(calls, tracing_fn));
    drop(dispatch);
    drop(flush); // waits for the writer
    // One "B" and one "E" line per call (a JSON array of one event a line).
    let begins = std::fs::read_to_string(&file)
        .map_or(0, |json| json.matches("\"ph\":\"B\"").count() as u64);
    let _ = std::fs::remove_file(&file);
    (ns, begins)
}
