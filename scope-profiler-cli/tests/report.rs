//! `scope-prof report` (issue 28) rendered in headless Chromium: one run,
//! a threaded run with async tasks, an MPI file of two ranks, a comparison
//! of three runs with a scaling key, and files the Python package wrote.
//! Each page must end with `<body data-report="ready">`, log nothing to the
//! console, and hold the tables and chart canvases expected; a screenshot
//! of each is kept in `target/report-screens/` for a person to look at.
//!
//! Chromium is Debian's `chromium` (scripts/ensure-deps.sh installs it).
//! Without it the test is skipped loudly, and fails under `CI=true`.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{Command, Stdio};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use integration_tests::{prerequisite_missing, serial, temp_dir};
use scope_profiler::{
    self as sp, Compression, Options, Profile, RegionRow, SummaryStatistics, TaskInfo, Value,
};

const REFERENCE: &str = "/work/shared/reference";

fn scope_prof(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_scope-prof"))
        .args(args)
        .output()
        .expect("run scope-prof")
}

fn report(files: &[&Path], out: &Path, extra: &[&str]) {
    let mut args = vec!["report"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    args.extend(["-o", out.to_str().unwrap()]);
    args.extend(extra);
    let result = scope_prof(&args);
    assert!(
        result.status.success(),
        "scope-prof {args:?}: {}",
        String::from_utf8_lossy(&result.stderr)
    );
}

/// Debian's chromium, or `None` after [`prerequisite_missing`].
fn chromium() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("chromium"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        prerequisite_missing(
            "chromium is not installed (Debian's `chromium`: scripts/ensure-deps.sh installs it)",
        );
    }
    found
}

/// Runs headless Chromium on `page` with `args`; returns stdout and stderr.
/// The flags keep it off the network (it hangs without them here).
fn run_chromium(chromium: &Path, page: &Path, hash: &str, args: &[String]) -> (String, String) {
    let profile = temp_dir(&format!(
        "chromium-{}",
        page.file_stem().unwrap().to_string_lossy()
    ));
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}{hash}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).ok();
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut s).ok();
        s
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if child.try_wait().expect("wait chromium").is_some() {
            break;
        }
        if Instant::now() > deadline {
            child.kill().ok();
            child.wait().ok();
            panic!("chromium did not finish {} in 120 s", page.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::fs::remove_dir_all(&profile).ok();
    (out.join().unwrap(), err.join().unwrap())
}

/// A rendered page: its DOM after the scripts ran.
struct Rendered {
    name: String,
    dom: String,
}

impl Rendered {
    /// The attribute `attr` of the element with id `id`.
    fn attr(&self, id: &str, attr: &str) -> Option<String> {
        let at = self.dom.find(&format!("id=\"{id}\""))?;
        let open = self.dom[..at].rfind('<')?;
        let close = open + self.dom[open..].find('>')?;
        let tag = &self.dom[open..close];
        let key = format!(" {attr}=\"");
        let from = tag.find(&key)? + key.len();
        let to = from + tag[from..].find('"')?;
        Some(tag[from..to].to_owned())
    }

    fn number(&self, id: &str, attr: &str) -> u64 {
        self.attr(id, attr)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{}: no numeric {attr} on #{id}", self.name))
    }

    /// Canvases inside the element with id `id` (up to the next section).
    fn canvases(&self, id: &str) -> usize {
        let Some(at) = self.dom.find(&format!("id=\"{id}\"")) else {
            return 0;
        };
        let rest = &self.dom[at..];
        let end = rest.find("</section>").unwrap_or(rest.len());
        rest[..end].matches("<canvas").count()
    }
}

/// Renders `page` in Chromium: checks that the script finished without an
/// error and logged nothing, keeps a screenshot, returns the DOM.
fn render(chromium: &Path, page: &Path) -> Rendered {
    let name = page.file_stem().unwrap().to_string_lossy().into_owned();
    render_at(chromium, page, &name, "")
}

/// [`render`] of `page` with the URL fragment `hash`; the screenshot is
/// `name`.png.
fn render_at(chromium: &Path, page: &Path, name: &str, hash: &str) -> Rendered {
    let name = name.to_owned();
    let (dom, log) = run_chromium(chromium, page, hash, &["--dump-dom".to_owned()]);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(
        console.is_empty(),
        "{name}: console output:\n{}",
        console.join("\n")
    );
    let at = dom.find("<body").expect("a body");
    let body = &dom[at..at + dom[at..].find('>').expect("body tag")];
    assert!(
        body.starts_with("<body data-report=\"ready\"") && !body.contains("data-report-error"),
        "{name}: the page did not finish: {body}"
    );
    let screens = Path::new(env!("CARGO_TARGET_TMPDIR")).join("../report-screens");
    std::fs::create_dir_all(&screens).unwrap();
    let png = screens.join(format!("{name}.png"));
    std::fs::remove_file(&png).ok();
    run_chromium(
        chromium,
        page,
        hash,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1400,2800".to_owned(),
        ],
    );
    assert!(
        std::fs::metadata(&png).is_ok_and(|m| m.len() > 10_000),
        "{name}: no screenshot at {}",
        png.display()
    );
    Rendered { name, dom }
}

/// A copy of `page` named `name`.html with `script` run once the report is
/// ready: the test's own input, kept out of the report itself.
fn with_script(page: &Path, name: &str, script: &str) -> PathBuf {
    let html = std::fs::read_to_string(page).expect("read the page");
    let out = page.with_file_name(format!("{name}.html"));
    // The page's own closing tag is the last one (ECharts' source holds one).
    let at = html.rfind("</body>").expect("</body>");
    let page = format!(
        "{}<script>\n{script}\n</script>\n{}",
        &html[..at],
        &html[at..]
    );
    std::fs::write(&out, page).expect("write");
    out
}

/// Mouse input dispatched as the browser would (`MouseEvent`, `WheelEvent`
/// on ECharts' canvases, a click on a table header); each outcome is an
/// attribute of `<body>`.
const INPUT_SCRIPT: &str = r#"
(function () {
  var body = document.body;
  function at(el, x, y, type, extra) {
    var r = el.getBoundingClientRect(), o = { bubbles: true, cancelable: true, clientX: r.left + x, clientY: r.top + y };
    for (var k in extra || {}) o[k] = extra[k];
    var ev = type === 'wheel' ? new WheelEvent(type, o) : new MouseEvent(type, o);
    // Chromium's own wheel events carry the legacy wheelDelta, which
    // zrender reads; a constructed one does not.
    if (type === 'wheel') Object.defineProperty(ev, 'wheelDelta', { value: -o.deltaY * 2 });
    el.dispatchEvent(ev);
  }
  // Flame graph: the rightmost frame at depth 1.
  var fdiv = document.getElementById('flame-panel-chart'), fc = echarts.getInstanceByDom(fdiv);
  var frames = fc.getOption().series[0].data.filter(function (d) { return d[2] === 1; });
  frames.sort(function (a, b) { return b[0] - a[0]; });
  var p = fc.convertToPixel({ seriesIndex: 0 }, [(frames[0][0] + frames[0][1]) / 2, 1.5]);
  var canvas = fdiv.querySelector('canvas');
  at(canvas, p[0], p[1], 'mousemove'); at(canvas, p[0], p[1], 'mousedown');
  at(canvas, p[0], p[1], 'mouseup'); at(canvas, p[0], p[1], 'click');
  body.setAttribute('data-clicked', fdiv.getAttribute('data-zoom') || 'nothing');
  // Timeline: wheel up over the plot's middle.
  var tdiv = document.getElementById('timeline-chart'), before = +tdiv.getAttribute('data-level');
  var tcanvas = tdiv.querySelector('canvas'), tr = tcanvas.getBoundingClientRect();
  for (var i = 0; i < 12; i++) at(tcanvas, tr.width / 2, 40, 'wheel', { deltaY: -300, deltaMode: 0 });
  setTimeout(function () {
    var after = +tdiv.getAttribute('data-level');
    body.setAttribute('data-wheeled', after > before ? 'finer' : 'level ' + before + ' -> ' + after);
  }, 500);
  // Table: click the Calls header.
  var th = document.querySelector('#tree-table th[data-key=calls]');
  th.click();
  body.setAttribute('data-sorted', th.className === 'sorted' ? 'calls' : 'not sorted');
})();
"#;

/// Checks of a one-run page: the tree's rows, the flame graph, timeline
/// and histogram canvases, the tracks and cells drawn.
fn check_run_page(page: &Rendered, tree_rows: u64, tracks: u64) {
    let name = &page.name;
    assert!(
        page.number("tree-table", "data-rows") >= tree_rows,
        "{name}: tree rows {:?}",
        page.attr("tree-table", "data-rows")
    );
    assert!(page.dom.contains("<th data-key=\"p99\""), "{name}");
    assert!(page.dom.contains("type=\"search\""), "{name}: search box");
    assert!(page.canvases("flame-panel") >= 1, "{name}: flame graph");
    assert!(page.canvases("timeline") >= 1, "{name}: timeline");
    assert!(page.canvases("histograms") >= 1, "{name}: histogram");
    assert_eq!(
        page.number("timeline-chart", "data-tracks"),
        tracks,
        "{name}"
    );
    let cells = page.number("timeline-chart", "data-cells");
    assert!(cells > 0 && cells < 200_000, "{name}: {cells} cells drawn");
}

fn fib(n: u32) -> u32 {
    sp::region("fib").run(|| if n < 2 { n } else { fib(n - 1) + fib(n - 2) })
}

/// One run: nested and recursive regions on two named threads.
fn threaded_run(path: &Path, threads: usize, steps: usize, extra: Options) {
    let run = sp::setup(extra.file_path(path).verbose(false)).expect("setup");
    std::thread::scope(|s| {
        for t in 0..threads {
            std::thread::Builder::new()
                .name(format!("worker-{t}"))
                .spawn_scoped(s, move || {
                    for _ in 0..steps / threads {
                        sp::region("step").run(|| {
                            sp::region("rhs").run(|| std::hint::black_box(fib(8)));
                            sp::region("update").run(|| std::hint::black_box(fib(4)));
                        });
                    }
                })
                .expect("spawn");
        }
    });
    run.finalize().expect("finalize");
}

/// Yields once, so futures polled in turn interleave.
struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            Poll::Pending
        }
    }
}

#[sp::profile("report.fetch")]
async fn fetch(n: u32) -> u32 {
    for _ in 0..3 {
        YieldNow(false).await;
        sp::region("report.parse").run(|| std::hint::black_box(fib(5)));
    }
    n
}

/// Polls the futures in turn on this thread until all are done.
fn run_all(mut futures: Vec<Pin<Box<dyn Future<Output = u32> + Send>>>) {
    let mut cx = Context::from_waker(Waker::noop());
    while !futures.is_empty() {
        futures.retain_mut(|f| f.as_mut().poll(&mut cx).is_pending());
    }
}

#[test]
fn reports_render_in_chromium() {
    let Some(chromium) = chromium() else { return };
    let dir = temp_dir("report-browser");
    let page = |name: &str| dir.join(format!("{name}.html"));

    // One run: two threads.
    let one = dir.join("one-run.h5");
    {
        let _g = serial();
        threaded_run(&one, 2, 200, Options::new().label("one run"));
    }
    report(&[&one], &page("one-run"), &[]);
    let r = render(&chromium, &page("one-run"));
    // step, rhs, fib (recursive: 8 levels), update, fib: at least 4 rows
    // with the top levels open.
    check_run_page(&r, 3, 2 * 10);
    assert!(r.dom.contains("worker-0") && r.dom.contains("worker-1"));
    assert!(
        !r.dom.contains("id=\"counters-table\""),
        "no counters, no table"
    );
    // The same run with region counters (issue 27): a table of them.
    let counted = dir.join("counted.h5");
    let mut profile = sp::read_profile(&one).expect("read the run");
    let mut step = sp::RegionCounters::default();
    step.name = "step".into();
    step.num_calls = 200;
    step.event_names = ["cycles", "instructions", "alloc-bytes", "task-clock"]
        .map(String::from)
        .to_vec();
    step.inclusive = vec![1000, 2000, 4096, 3_000_000];
    step.exclusive = vec![400, 900, 0, 1_000_000];
    profile.counters.push(step);
    sp::write_profile(&profile, &counted, sp::Compression::None).expect("write");
    report(&[&counted], &page("counted"), &[]);
    let c = render(&chromium, &page("counted"));
    let table = c
        .dom
        .split("id=\"counters-table\"")
        .nth(1)
        .expect("a counters table");
    for cell in [
        "<th>instructions</th>",
        "<th>IPC</th>",
        "1,000 (400)",
        "2,000 (900)",
        "4,096 (0)",
        "3.00 ms (1.00 ms)",
        ">2.00<",
        ">20<",
    ] {
        assert!(table.contains(cell), "{cell} in {table}");
    }
    assert!(
        c.dom.contains("href=\"#counters\""),
        "the nav links the section"
    );
    // Zoomed in (`#zoom=`, fractions of the session) on the first 2%, where
    // the first call starts, a finer level is drawn.
    let zoomed = render_at(
        &chromium,
        &page("one-run"),
        "one-run-zoomed",
        "#zoom=0,0.02",
    );
    let (coarse, fine) = (
        r.number("timeline-chart", "data-level"),
        zoomed.number("timeline-chart", "data-level"),
    );
    assert!(fine > coarse, "level {coarse} at full view, {fine} zoomed");
    assert!(zoomed.attr("timeline-chart", "data-view").is_some());
    assert!(zoomed.number("timeline-chart", "data-cells") > 0);
    // The flame graph zoomed to `update` (`#flame=`, what a click does):
    // its frames and their descendants only.
    let flame = render_at(
        &chromium,
        &page("one-run"),
        "one-run-flame",
        "#flame=update",
    );
    let id = "flame-panel-chart";
    assert_eq!(flame.attr(id, "data-zoom").as_deref(), Some("update"));
    assert!(flame.number(id, "data-drawn") < r.number(id, "data-drawn"));
    // The search box (`#search=`): the matches and the paths to them.
    let found = render_at(&chromium, &page("one-run"), "one-run-search", "#search=upd");
    assert_eq!(found.number("tree-table", "data-rows"), 2, "step > update");
    assert!(found.dom.contains("<tr data-node=\"") && found.dom.contains("class=\"match\""));
    // Real input through ECharts: a click on the rightmost frame of depth 1
    // (update) zooms the flame graph to it; wheel turns over the timeline
    // zoom it in; a click on a column header sorts the table by it.
    let input = with_script(&page("one-run"), "one-run-input", INPUT_SCRIPT);
    let r = render(&chromium, &input);
    let body = r
        .dom
        .find("<body")
        .map(|i| &r.dom[i..i + 400])
        .unwrap_or("");
    assert!(r.dom.contains("data-clicked=\"update\""), "{body}");
    assert!(r.dom.contains("data-wheeled=\"finer\""), "{body}");
    assert!(r.dom.contains("data-sorted=\"calls\""), "{body}");

    // 12 threads, about 70 tracks: 40 at a time, a slider for the rest.
    let many = dir.join("many-threads.h5");
    {
        let _g = serial();
        threaded_run(&many, 12, 120, Options::new());
    }
    report(&[&many], &page("many-threads"), &[]);
    let r = render(&chromium, &page("many-threads"));
    let tracks = r.number("timeline-chart", "data-tracks");
    assert!(tracks > 40, "{tracks} tracks");
    assert_eq!(
        r.attr("timeline-chart", "data-shown").as_deref(),
        Some("0-39")
    );

    // Threads and async tasks: 8 concurrent tasks on each of two threads.
    let tasks = dir.join("threads-and-tasks.h5");
    {
        let _g = serial();
        let run = sp::setup(Options::new().file_path(&tasks).verbose(false)).expect("setup");
        std::thread::scope(|s| {
            for t in 0..2 {
                std::thread::Builder::new()
                    .name(format!("executor-{t}"))
                    .spawn_scoped(s, move || {
                        sp::region("executor.batch").run(|| ());
                        run_all((0..8).map(|i| Box::pin(fetch(i)) as _).collect());
                    })
                    .expect("spawn");
            }
        });
        run.finalize().expect("finalize");
    }
    report(&[&tasks], &page("threads-and-tasks"), &[]);
    let r = render(&chromium, &page("threads-and-tasks"));
    let tracks = r.number("timeline-chart", "data-tracks");
    check_run_page(&r, 2, tracks);
    assert!(r.dom.contains("report.fetch") && r.dom.contains("tasks 1"));
    assert!(tracks >= 2 + 8, "threads and packed task lanes: {tracks}");

    // An MPI file: the run above as rank 0 and, shifted, rank 1.
    let mpi = dir.join("mpi-two-ranks.h5");
    let mut profile = sp::read_profile(&one).expect("read");
    let events = profile.events.len() as u64;
    let rows = profile.rows.clone();
    for mut row in rows {
        row.rank = 1;
        let range = row.events();
        row.event_offset += events;
        profile.rows.push(row);
        let e = &mut profile.events;
        for i in range {
            e.start_ns.push(e.start_ns[i] + 1_000);
            e.durations.push(e.durations[i]);
            e.call_ids.push(e.call_ids[i]);
            e.parent_ids.push(e.parent_ids[i]);
            e.thread_ids.push(e.thread_ids[i]);
        }
    }
    profile.metadata.retain(|(k, _)| k != "mpi_size");
    profile.metadata.push(("mpi_size".into(), Value::Int(2)));
    sp::write_profile(&profile, &mpi, Compression::None).expect("write");
    report(&[&mpi], &page("mpi-two-ranks"), &[]);
    let r = render(&chromium, &page("mpi-two-ranks"));
    check_run_page(&r, 3, 2 * 2 * 10);
    assert!(r.dom.contains("rank 1 · worker-0"), "lanes per rank");

    // Three runs, 1, 2 and 4 threads, the same work: a comparison whose
    // scaling key (the thread count) is found by itself, or given (a
    // metadata key of the run's own).
    let mut runs = Vec::new();
    for threads in [1usize, 2, 4] {
        let path = dir.join(format!("scaling-{threads}.h5"));
        let _g = serial();
        threaded_run(
            &path,
            threads,
            400,
            Options::new()
                .label(format!("{threads} threads"))
                .metadata("workers", threads as i64),
        );
        runs.push(path);
    }
    let refs: Vec<&Path> = runs.iter().map(PathBuf::as_path).collect();
    report(&refs, &page("comparison"), &[]);
    let r = render(&chromium, &page("comparison"));
    assert!(r.dom.contains("Scaling against threads"), "auto key");
    assert_eq!(
        r.number("diff-table", "data-rows"),
        4,
        "step, rhs, update, fib"
    );
    assert!(r.canvases("scaling") >= 3, "time, speedup, efficiency");
    assert!(r.number("tree-table", "data-rows") >= 3);
    assert!(r.canvases("flame-panel") >= 1);
    report(
        &refs,
        &page("comparison-by-workers"),
        &["--scaling-key", "workers"],
    );
    let r = render(&chromium, &page("comparison-by-workers"));
    assert!(r.dom.contains("Scaling against workers"));
    // A key that is not there is an error naming the files.
    let out = scope_prof(&[
        "report",
        refs[0].to_str().unwrap(),
        refs[1].to_str().unwrap(),
        "--scaling-key",
        "no_such_key",
        "-o",
        page("x").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no_such_key"));

    // Files the Python package wrote: schema 3 with threads, one with
    // captured source and tags, an aggregate file (no timeline); and the C
    // API's schema 2 (no parent ids: nesting from time containment).
    for (name, rows) in [
        ("python_schema3.h5", 3),
        ("python_features.h5", 2),
        ("python_aggregate.h5", 1),
        ("c_schema2.h5", 1),
    ] {
        let file = Path::new(REFERENCE).join(name);
        if !file.exists() {
            prerequisite_missing(&format!("{} is missing", file.display()));
            continue;
        }
        let stem = name.trim_end_matches(".h5");
        report(&[&file], &page(stem), &[]);
        let r = render(&chromium, &page(stem));
        assert!(r.number("tree-table", "data-rows") >= rows, "{name}");
        if name == "python_aggregate.h5" {
            assert!(r.dom.contains("An aggregate file"), "{name}");
        } else {
            assert!(r.canvases("timeline") >= 1 && r.canvases("flame-panel") >= 1);
        }
        if name == "python_features.h5" {
            assert!(r.dom.contains("def load(i):"), "captured source shown");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A file of 600k calls keeps the page bounded: the timeline's cells stop
/// at the budget and the calls beyond it are drawn as buckets.
#[test]
fn a_large_file_gives_a_bounded_page() {
    let dir = temp_dir("report-large");
    let path = dir.join("large.h5");
    {
        let _g = serial();
        let run = sp::setup(Options::new().file_path(&path).verbose(false)).expect("setup");
        for _ in 0..150_000 {
            sp::scope!("outer");
            for _ in 0..3 {
                sp::scope!("inner");
            }
        }
        run.finalize().expect("finalize");
    }
    let out = dir.join("large.html");
    report(&[&path], &out, &[]);
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.len() < 16 << 20, "{} bytes", html.len());
    let kept = html
        .split("\"calls_kept\":")
        .nth(1)
        .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|s| s.parse::<u64>().ok())
        .expect("calls_kept");
    assert!(kept < 600_000, "{kept}");
    assert!(html.contains("calls drawn one by one"), "the note says so");
    std::fs::remove_dir_all(&dir).ok();
}

/// A session that recorded nothing gives a page that says so; a missing
/// input or an output that cannot be written is exit 2 naming it.
#[test]
fn an_empty_session_and_bad_paths() {
    let dir = temp_dir("report-empty");
    let empty = dir.join("empty.h5");
    {
        let _g = serial();
        let run = sp::setup(Options::new().file_path(&empty).verbose(false)).expect("setup");
        run.finalize().expect("finalize");
    }
    let page = dir.join("empty.html");
    report(&[&empty], &page, &[]);
    if let Some(chromium) = chromium() {
        let r = render(&chromium, &page);
        assert_eq!(r.number("tree-table", "data-rows"), 0);
        assert!(r.dom.contains("No calls."));
    }
    let missing = dir.join("missing.h5");
    let out = scope_prof(&[
        "report",
        missing.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("missing.h5") && !err.contains("panicked"),
        "{err}"
    );
    let unwritable = dir.join("no/such/dir/r.html");
    let out = scope_prof(&[
        "report",
        empty.to_str().unwrap(),
        "-o",
        unwritable.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot write") && err.contains("r.html"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The worst case for the page's size: 1M calls of random lengths and
/// regions back to back, which no bucket merges. The cells stop at the
/// budget: the page stays under 16 MB (the budget's 450k cells are about
/// 12.6 MB of base64).
#[test]
fn random_calls_fill_the_budget_and_no_more() {
    let dir = temp_dir("report-random");
    let path = dir.join("random.h5");
    let mut profile = Profile::default();
    let regions = 8u32;
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut calls: Vec<Vec<(i64, i64)>> = vec![Vec::new(); regions as usize];
    let mut t = 1_000_000i64;
    for _ in 0..1_000_000 {
        let d = 10 + (next() % 5_000) as i64;
        calls[(next() % u64::from(regions)) as usize].push((t, d));
        t += d + (next() % 50) as i64;
    }
    for (id, c) in calls.iter().enumerate() {
        profile.region_names.push(format!("r{id}"));
        let mut row = RegionRow::default();
        row.region_id = id as u32;
        row.event_offset = profile.events.len() as u64;
        row.event_count = c.len() as u64;
        row.exclusive = c.iter().map(|x| x.1).sum();
        row.stats = SummaryStatistics::from_calls(c);
        for (i, &(start, d)) in c.iter().enumerate() {
            let e = &mut profile.events;
            e.start_ns.push(start);
            e.durations.push(d);
            e.call_ids.push((row.event_offset as usize + i) as i64);
            e.parent_ids.push(-1);
            e.thread_ids.push(0);
        }
        profile.rows.push(row);
    }
    sp::write_profile(&profile, &path, Compression::None).expect("write");
    let out = dir.join("random.html");
    report(&[&path], &out, &[]);
    let html = std::fs::read_to_string(&out).unwrap();
    let number = |key: &str| {
        html.split(&format!("\"{key}\":"))
            .nth(1)
            .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("no {key}"))
    };
    assert_eq!(number("calls"), 1_000_000);
    assert!(number("calls_kept") < 1_000_000);
    assert!(html.len() < 16 << 20, "{} bytes", html.len());
    eprintln!(
        "random.html: {} bytes, {} of 1M calls kept one by one",
        html.len(),
        number("calls_kept")
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Measures each flame-graph label against its frame in ECharts' display
/// list (the text as laid out, in the canvas's pixels): `<body
/// data-labels="LABELS OVERFLOWING [the first one]">`.
const LABEL_SCRIPT: &str = r#"
(function () {
  setTimeout(function () {
    var fdiv = document.getElementById('flame-panel-chart'), fc = echarts.getInstanceByDom(fdiv);
    var labels = 0, over = 0, first = '';
    fc.getZr().storage.getDisplayList(true).forEach(function (el) {
      var text = el.getTextContent && el.getTextContent();
      if (!text || !text.style || !text.style.text || text.ignore || text.invisible) return;
      labels++;
      var tb = text.getBoundingRect().clone();
      if (text.transform) tb.applyTransform(text.transform);
      var rb = el.getBoundingRect().clone();
      if (el.transform) rb.applyTransform(el.transform);
      if (tb.x < rb.x - 0.5 || tb.x + tb.width > rb.x + rb.width + 0.5) {
        over++;
        if (!first) first = JSON.stringify({ text: text.style.text, text_x: tb.x, text_w: tb.width, frame_x: rb.x, frame_w: rb.width });
      }
    });
    document.body.setAttribute('data-labels', labels + ' ' + over + ' ' + first);
  }, 300);
})();
"#;

/// Issue 37, item 5: a flame graph of 8 sibling frames with long
/// qualified names, each about 100 px wide: every label is cut to its frame
/// (an ellipsis), none prints over its neighbours.
#[test]
fn flame_graph_labels_stay_in_their_frames() {
    let Some(chromium) = chromium() else { return };
    let dir = temp_dir("report-labels");
    let path = dir.join("labels.h5");
    let mut profile = Profile::default();
    profile.region_names.push("outer".into());
    let push = |profile: &mut Profile, region: u32, start: i64, d: i64, id: i64, parent: i64| {
        let mut row = RegionRow::default();
        row.region_id = region;
        row.event_offset = profile.events.len() as u64;
        row.event_count = 1;
        row.exclusive = d;
        row.stats = SummaryStatistics::from_calls(&[(start, d)]);
        let e = &mut profile.events;
        e.start_ns.push(start);
        e.durations.push(d);
        e.call_ids.push(id);
        e.parent_ids.push(parent);
        e.thread_ids.push(0);
        profile.rows.push(row);
    };
    let children = 8;
    push(&mut profile, 0, 0, 1_000 * children, 0, -1);
    for i in 0..children {
        profile.region_names.push(format!(
            "my_crate::codec::framed::FramedWrite::poll_flush_{i}"
        ));
        push(&mut profile, i as u32 + 1, 1_000 * i, 1_000, i + 1, 0);
    }
    sp::write_profile(&profile, &path, Compression::None).expect("write");
    let page = dir.join("labels.html");
    report(&[&path], &page, &[]);
    let page = with_script(&page, "labels-measured", LABEL_SCRIPT);
    let r = render(&chromium, &page);
    let at = r.dom.find("data-labels=\"").expect("the script ran") + "data-labels=\"".len();
    let measured = &r.dom[at..at + r.dom[at..].find('"').unwrap_or(0)];
    let mut parts = measured.splitn(3, ' ');
    let labels: u64 = parts.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    let over: u64 = parts
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(u64::MAX);
    // `outer` and the 8 children, each wide enough for a label.
    assert!(labels > children as u64, "labels drawn: {measured}");
    assert_eq!(over, 0, "labels past their frame: {measured}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 37, item 6: the page's "% of session" is `inspect`'s: a region
/// awaited on 50 task lanes at once for the whole session reads 100.0 (not
/// 5000.0, nor 0.0 of "session x every lane"), one that took 45% of the
/// main thread reads 45.0.
#[test]
fn percent_of_session_divides_by_the_lanes_a_path_ran_on() {
    let Some(chromium) = chromium() else { return };
    let dir = temp_dir("report-percent");
    let path = dir.join("percent.h5");
    let mut profile = Profile::default();
    profile.region_names = vec!["main_work".into(), "awaited".into()];
    // (task or -1, start, duration) per region.
    let calls: [Vec<(i64, i64, i64)>; 2] = [
        vec![(-1, 0, 450_000_000)],
        (0..50).map(|t| (t, 0, 1_000_000_000)).collect(),
    ];
    for (id, c) in calls.iter().enumerate() {
        let mut row = RegionRow::default();
        row.region_id = id as u32;
        row.event_offset = profile.events.len() as u64;
        row.event_count = c.len() as u64;
        row.exclusive = c.iter().map(|x| x.2).sum();
        let spans: Vec<(i64, i64)> = c.iter().map(|x| (x.1, x.2)).collect();
        row.stats = SummaryStatistics::from_calls(&spans);
        for &(task, start, d) in c {
            let e = &mut profile.events;
            e.call_ids.push(e.start_ns.len() as i64);
            e.start_ns.push(start);
            e.durations.push(d);
            e.parent_ids.push(-1);
            e.thread_ids.push(0);
            e.task_ids.get_or_insert_with(Vec::new).push(task);
        }
        profile.rows.push(row);
    }
    for t in 0..50 {
        let mut task = TaskInfo::default();
        (task.index, task.name, task.kind) = (t, "awaited".into(), "future".into());
        profile.tasks.push(task);
    }
    sp::write_profile(&profile, &path, Compression::None).expect("write");
    let page = dir.join("percent.html");
    report(&[&path], &page, &[]);
    let r = render(&chromium, &page);
    let pct = |region: &str| {
        let at = r
            .dom
            .find(&format!(">{region}</span>"))
            .unwrap_or_else(|| panic!("a row of {region}"));
        let row = &r.dom[at..at + r.dom[at..].find("</tr>").unwrap_or(0)];
        let cell = row.split("<td class=\"pct\">").nth(1).expect("a % cell");
        cell[..cell.find('<').unwrap_or(0)].to_owned()
    };
    assert_eq!(pct("awaited"), "100.0");
    assert_eq!(pct("main_work"), "45.0");
    std::fs::remove_dir_all(&dir).ok();
}
