//! Region counters (issue 27): allocations counted through
//! `CountingAllocator` (this test binary's global allocator), exact per
//! region, own and inclusive, on threads and tokio tasks; perf software
//! events (task-clock, page-faults, context-switches); a hardware event
//! refused where the machine has no PMU; the file's
//! `rank0/perf_events/<region>` groups read back.

use scope_profiler_core::internal::options::read;
use std::hint::black_box;
use std::sync::Mutex;

use integration_tests::prerequisite_missing;
use scope_profiler::{self as sp, CountingAllocator, Options, RegionCounters, profile};

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator::system();

/// One session at a time in this binary.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn counting() -> Options {
    Options::new()
        .in_memory()
        .verbose(false)
        .track_allocations(true)
}

/// `[alloc-count, alloc-bytes, free-count, free-bytes]`, inclusive.
fn incl(c: &RegionCounters) -> [u64; 4] {
    ["alloc-count", "alloc-bytes", "free-count", "free-bytes"].map(|e| c.get(e).unwrap())
}

/// The same, own.
fn own(c: &RegionCounters) -> [u64; 4] {
    ["alloc-count", "alloc-bytes", "free-count", "free-bytes"].map(|e| c.exclusive_of(e).unwrap())
}

fn three_vectors() {
    let _g = sp::region("three_vectors").enter();
    let a = black_box(vec![1u8; 1000]);
    let b = black_box(vec![2u8; 1000]);
    let c = black_box(vec![3u8; 1000]);
    drop((a, b, c));
}

#[test]
fn a_region_owns_exactly_its_allocations_and_its_caller_includes_them() {
    let _s = serial();
    sp::setup(counting()).unwrap();
    const N: u64 = 50;
    {
        let _caller = sp::region("caller").enter();
        let mine = black_box(vec![0u8; 500]);
        for _ in 0..N {
            three_vectors();
        }
        drop(mine);
    }
    let results = sp::finalize().unwrap();
    let inner = results.counters_of("three_vectors").expect("counted");
    assert_eq!(inner.num_calls, N);
    assert_eq!(incl(inner), [3 * N, 3000 * N, 3 * N, 3000 * N]);
    assert_eq!(own(inner), incl(inner), "no callees");
    let caller = results.counters_of("caller").expect("counted");
    assert_eq!(caller.num_calls, 1);
    assert_eq!(
        incl(caller),
        [3 * N + 1, 3000 * N + 500, 3 * N + 1, 3000 * N + 500]
    );
    assert_eq!(own(caller), [1, 500, 1, 500]);
    // In the in-memory profile too, and in the summary.
    assert_eq!(results.profile().unwrap().counters, results.counters());
    let text = results.to_string();
    assert!(
        text.contains(
            "three_vectors: 50 calls; alloc-count 150 (150), alloc-bytes 150000 (150000)"
        ),
        "{text}"
    );
}

#[test]
fn four_threads_each_count_their_own_sizes() {
    let _s = serial();
    sp::setup(counting()).unwrap();
    std::thread::scope(|scope| {
        for t in 0..4u64 {
            scope.spawn(move || {
                let name = format!("thread{t}");
                let region = sp::region(&name);
                for _ in 0..10 {
                    let _g = region.enter();
                    let v = black_box(vec![0u8; 100 * (t as usize + 1)]);
                    drop(v);
                }
            });
        }
    });
    let results = sp::finalize().unwrap();
    for t in 0..4u64 {
        let c = results.counters_of(&format!("thread{t}")).expect("counted");
        let bytes = 10 * 100 * (t + 1);
        assert_eq!(c.num_calls, 10);
        assert_eq!(incl(c), [10, bytes, 10, bytes], "thread {t}");
        assert_eq!(own(c), incl(c), "thread {t}");
    }
}

#[test]
fn an_allocation_freed_in_another_call_counts_where_each_happened() {
    let _s = serial();
    sp::setup(counting()).unwrap();
    let kept = sp::region("make").run(|| black_box(vec![7u8; 4096]));
    sp::region("free").run(|| drop(kept));
    let results = sp::finalize().unwrap();
    assert_eq!(incl(results.counters_of("make").unwrap()), [1, 4096, 0, 0]);
    assert_eq!(incl(results.counters_of("free").unwrap()), [0, 0, 1, 4096]);
}

/// A realloc is one allocation of the new size and one free of the old.
#[test]
fn a_realloc_counts_as_an_allocation_and_a_free() {
    let _s = serial();
    sp::setup(counting()).unwrap();
    let mut v: Vec<u8> = Vec::with_capacity(100);
    sp::region("grow").run(|| {
        v.reserve_exact(1000); // realloc 100 -> 1000
    });
    let results = sp::finalize().unwrap();
    assert_eq!(
        incl(results.counters_of("grow").unwrap()),
        [1, 1000, 1, 100]
    );
    drop(v);
}

macro_rules! handlers {
    ($($name:ident = $size:expr),*) => {$(
        #[profile]
        async fn $name() {
            for _ in 0..5 {
                let v = black_box(vec![0u8; $size]);
                tokio::task::yield_now().await;
                drop(v);
                tokio::task::yield_now().await;
            }
        }
    )*};
}
handlers!(
    handler_a = 111,
    handler_b = 222,
    handler_c = 333,
    handler_d = 444
);

#[test]
fn tokio_handlers_on_two_workers_each_own_exactly_their_allocations() {
    let _s = serial();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    // Warm-up: each worker's list of tasks that yielded (tokio's `defer`)
    // grows at its first use, an allocation of the task polled then.
    runtime.block_on(async {
        let warm: Vec<_> = (0..16)
            .map(|_| {
                tokio::spawn(async {
                    for _ in 0..20 {
                        // Blocking a little: both workers take tasks.
                        std::thread::sleep(std::time::Duration::from_micros(200));
                        tokio::task::yield_now().await;
                    }
                })
            })
            .collect();
        for h in warm {
            h.await.unwrap();
        }
    });
    sp::setup(counting()).unwrap();
    runtime.block_on(async {
        let handles = [
            tokio::spawn(handler_a()),
            tokio::spawn(handler_b()),
            tokio::spawn(handler_c()),
            tokio::spawn(handler_d()),
        ];
        for h in handles {
            h.await.unwrap();
        }
    });
    let results = sp::finalize().unwrap();
    // A session that counts nothing on the same workers: no counters, the
    // calls recorded as before.
    sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    runtime.block_on(async {
        tokio::spawn(handler_a()).await.unwrap();
    });
    let plain = sp::finalize().unwrap();
    assert!(plain.counters().is_empty());
    assert!(
        plain
            .statistics()
            .iter()
            .any(|s| s.name().ends_with("handler_a") && s.num_calls() == 1)
    );
    drop(runtime);
    for (name, size) in [
        ("handler_a", 111u64),
        ("handler_b", 222),
        ("handler_c", 333),
        ("handler_d", 444),
    ] {
        let c = results
            .counters()
            .iter()
            .find(|c| c.name.ends_with(name))
            .unwrap_or_else(|| panic!("{name} counted: {:?}", results.counters()));
        assert_eq!(c.num_calls, 1, "{name}");
        assert_eq!(incl(c), [5, 5 * size, 5, 5 * size], "{name}");
    }
}

#[test]
fn without_tracking_nothing_is_counted() {
    let _s = serial();
    sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    three_vectors();
    let results = sp::finalize().unwrap();
    assert!(results.counters().is_empty());
}

#[test]
fn counters_go_to_the_file_in_the_python_packages_layout_and_back() {
    let _s = serial();
    let dir = std::env::temp_dir().join(format!("sp-counters-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("counted.h5");
    sp::setup(
        Options::new()
            .file_path(&path)
            .verbose(false)
            .track_allocations(true),
    )
    .unwrap();
    sp::region("outer").run(|| {
        let _v = black_box(vec![0u8; 64]);
        three_vectors();
    });
    let results = sp::finalize().unwrap();
    let read = sp::read_profile(&path).unwrap();
    assert_eq!(read.counters, results.counters());
    let reader = scope_profiler_reader::ProfileReader::open(&path).unwrap();
    assert_eq!(reader.counters(), results.counters());
    drop(reader); // the file is written below
    let inner = read
        .counters
        .iter()
        .find(|c| c.name == "three_vectors")
        .unwrap();
    assert_eq!(incl(inner), [3, 3000, 3, 3000]);
    // The Python package's reader sees the same groups.
    if let Some(python) = integration_tests::made_reader_python(env!("CARGO_TARGET_TMPDIR")) {
        let script = "import sys\nfrom scope_profiler.h5reader import read_h5\n\
             r = read_h5(sys.argv[1]).get_perf_events()\n\
             t = r[0]['three_vectors']\n\
             print(t.calls, t.values['alloc-count'], t.values['alloc-bytes'], \
             r[0]['outer'].values['alloc-count'])";
        let out = std::process::Command::new(&python)
            .args(["-c", script])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1 3 3000 4");
        // Its `plot perf_events` command: everything up to the drawing
        // (which needs matplotlib and maxplotlib, not in the reader's venv),
        // the canvas replaced by one that keeps the bars.
        let out = std::process::Command::new(&python)
            .args(["-c", PLOT_PERF_EVENTS])
            .arg(&path)
            .arg("alloc-bytes")
            .arg(dir.join("plot.png"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        // Regions in name order: outer, three_vectors.
        assert_eq!(
            stdout.lines().last(),
            Some("[[3064.0, 3000.0]]"),
            "{stdout}"
        );
        // A group written by h5py as the Python package writes it (no
        // `own_values`), read back by us.
        let script = "import sys, h5py, numpy as np\n\
             with h5py.File(sys.argv[1], 'a') as f:\n\
             \x20   g = f.require_group('rank1').create_group('perf_events').create_group('py region')\n\
             \x20   g.attrs['calls'] = 7\n\
             \x20   g.attrs['event_names'] = ['task-clock', 'page-faults']\n\
             \x20   g.create_dataset('values', data=np.asarray([123, 4], dtype=np.uint64))\n";
        let out = std::process::Command::new(&python)
            .args(["-c", script])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let read = sp::read_profile(&path).unwrap();
        let py = read.counters.iter().find(|c| c.rank == 1).unwrap();
        assert_eq!(
            (
                py.name.as_str(),
                py.num_calls,
                py.get("task-clock"),
                py.exclusive_of("page-faults")
            ),
            ("py region", 7, Some(123), Some(0))
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The Python package's `scope-profiler plot perf_events FILE --metric M
/// -o OUT`, its canvas and renderer replaced: prints the bars' heights.
const PLOT_PERF_EVENTS: &str = r#"
import sys
import scope_profiler.plotting_scripts as ps
bars = []
class Canvas:
    def __init__(self, *a, **k): pass
    def bar(self, x, heights, **k): bars.append([float(h) for h in heights])
    def __getattr__(self, name): return lambda *a, **k: None
ps._get_canvas = lambda: Canvas
ps._render = lambda *a, **k: None
from scope_profiler.__main__ import main
sys.argv = ["scope-profiler", "plot", "perf_events", sys.argv[1], "--metric", sys.argv[2], "-o", sys.argv[3]]
try:
    main()
except SystemExit as e:
    if e.code not in (0, None):
        raise
print(bars)
"#;

fn perf_options(events: &[&str]) -> Options {
    Options::new()
        .in_memory()
        .verbose(false)
        .perf_events(events.iter().copied())
}

/// Software events, where the kernel counts them (Linux). A build without
/// perf events (not Linux, or the std-only platform code) must refuse
/// them: that is what it tests there.
fn software_events_or_skip(events: &[&str]) -> bool {
    if cfg!(any(not(target_os = "linux"), scope_profiler_portable)) {
        let err = sp::setup(perf_options(events)).expect_err("no perf events in this build");
        assert!(err.to_string().contains("Linux only"), "{err}");
        return false;
    }
    match sp::setup(perf_options(events)) {
        Ok(_) => true,
        Err(e) => {
            prerequisite_missing(&format!("perf software events: {e}"));
            false
        }
    }
}

#[test]
#[cfg(target_os = "linux")]
fn page_faults_of_fresh_pages_are_counted() {
    let _s = serial();
    if !software_events_or_skip(&["page-faults"]) {
        return;
    }
    const PAGES: usize = 256;
    let len = PAGES * 4096;
    // A mapping of its own, without huge pages: whatever the allocator's
    // state and the machine's load, each page faults once at its first write
    // (memory from the allocator may hold pages touched before, and a huge
    // page maps 512 pages in one fault: 199 of 256 were seen so).
    // SAFETY: a fresh private anonymous mapping; no memory of the program's
    // is named.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(
        p,
        libc::MAP_FAILED,
        "mmap: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: advice on the mapping just made.
    let advised = unsafe { libc::madvise(p, len, libc::MADV_NOHUGEPAGE) };
    assert_eq!(advised, 0, "madvise: {}", std::io::Error::last_os_error());
    let p = p.cast::<u8>();
    sp::region("touch").run(|| {
        for i in 0..PAGES {
            // SAFETY: within the mapping; bytes are written, never read.
            unsafe { p.add(i * 4096).write_volatile(1) };
        }
    });
    // SAFETY: the mapping made above, no longer used.
    unsafe { libc::munmap(p.cast(), len) };
    let results = sp::finalize().unwrap();
    let c = results.counters_of("touch").unwrap();
    assert!(c.get("page-faults").unwrap() >= PAGES as u64, "{c:?}");
}

#[test]
fn a_sleeping_region_counts_its_context_switches_and_a_busy_one_its_task_clock() {
    const BUSY: usize = 20;
    let _s = serial();
    if !software_events_or_skip(&["task-clock", "context-switches"]) {
        return;
    }
    // The thread's group opens at its first call; the kernel counts a new
    // per-thread event from the thread's next scheduling in, so the first
    // switch after the opening is not counted: one sleep outside calls.
    sp::region("open").run(|| ());
    std::thread::sleep(std::time::Duration::from_millis(1));
    for _ in 0..20 {
        sp::region("sleep").run(|| std::thread::sleep(std::time::Duration::from_millis(2)));
    }
    // Twenty busy regions of 5 ms: on a loaded machine a thread may wait
    // for a core, so the task clock is compared with the thread's CPU time
    // measured inside each call (CLOCK_THREAD_CPUTIME_ID), which waits too,
    // and with the call's duration, which it cannot pass.
    let mut cpu_ns = [0i64; BUSY];
    for (i, cpu) in cpu_ns.iter_mut().enumerate() {
        sp::region(&format!("busy{i}")).run(|| {
            let before = thread_cpu_ns();
            let until = std::time::Instant::now() + std::time::Duration::from_millis(5);
            let mut x = 0u64;
            while std::time::Instant::now() < until {
                x = black_box(x.wrapping_add(1));
            }
            *cpu = thread_cpu_ns() - before;
        });
    }
    let results = sp::finalize().unwrap();
    let sleep = results.counters_of("sleep").unwrap();
    assert_eq!(sleep.num_calls, 20);
    assert!(sleep.get("context-switches").unwrap() >= 20, "{sleep:?}");
    let clock = |i: usize| {
        let c = results.counters_of(&format!("busy{i}")).unwrap();
        c.get("task-clock").unwrap() as f64
    };
    let ratios: Vec<f64> = (0..BUSY)
        .map(|i| clock(i) / results.statistics_of(&format!("busy{i}")).unwrap().total() as f64)
        .collect();
    assert!(
        ratios.iter().all(|&r| r <= 1.1),
        "task-clock / duration: {ratios:?}"
    );
    // The task clock of a call covers the CPU time measured inside it, and
    // little more (the enter and exit around it).
    let of_cpu: Vec<f64> = (0..BUSY).map(|i| clock(i) / cpu_ns[i] as f64).collect();
    assert!(
        of_cpu.iter().all(|&r| (0.95..1.2).contains(&r)),
        "task-clock / thread CPU time inside the call: {of_cpu:?}"
    );
}

#[test]
fn a_hardware_event_without_a_pmu_is_an_error_naming_it() {
    let _s = serial();
    let pmu = std::path::Path::new("/sys/bus/event_source/devices/cpu").exists();
    match sp::setup(perf_options(&["cycles"])) {
        Ok(_) => {
            sp::finalize().unwrap();
            assert!(pmu, "cycles opened on a machine without a PMU");
        }
        Err(e) => {
            let message = e.to_string();
            assert!(message.contains("\"cycles\""), "{message}");
            assert!(!pmu || !cfg!(target_os = "linux"), "{message}");
            // The errno's meaning, as the Python package says it.
            assert!(
                message.contains("os error") || message.contains("Linux only"),
                "{message}"
            );
        }
    }
    // Nothing is left set up.
    assert!(sp::setup(Options::new().in_memory().verbose(false)).is_ok());
    sp::finalize().unwrap();
}

#[test]
fn unknown_perf_events_are_refused_at_setup() {
    let _s = serial();
    let err = sp::setup(perf_options(&["cycels"])).unwrap_err();
    assert!(err.to_string().contains("cycels"), "{err}");
}

/// Many calls: chunk changes, and a deeper stack, go through the
/// recorder's slow path between calls of the lean one; the counts stay exact.
#[test]
fn counts_stay_exact_over_many_calls_and_depths() {
    let _s = serial();
    sp::setup(counting()).unwrap();
    const N: u64 = 5000;
    sp::region("loop_outer").run(|| {
        for i in 0..N {
            sp::region("loop_inner").run(|| {
                drop(black_box(Box::new(i)));
                if i % 1000 == 0 {
                    // 70 levels: past the first stack's 64 slots.
                    fn deep(n: u32) {
                        if n > 0 {
                            sp::region("deep").run(|| deep(n - 1));
                        }
                    }
                    deep(70);
                }
            });
        }
    });
    let results = sp::finalize().unwrap();
    let inner = results.counters_of("loop_inner").unwrap();
    assert_eq!(inner.num_calls, N);
    assert_eq!(incl(inner), [N, 8 * N, N, 8 * N]);
    assert_eq!(own(inner), incl(inner));
    let outer = results.counters_of("loop_outer").unwrap();
    assert_eq!(incl(outer), [N, 8 * N, N, 8 * N]);
    assert_eq!(own(outer), [0; 4]);
    let deep = results.counters_of("deep").unwrap();
    assert_eq!((deep.num_calls, incl(deep)), (5 * 70, [0; 4]));
}

/// Aggregation mode counts too, and writes the counters beside the
/// aggregate rows.
#[test]
fn aggregation_mode_counts_and_writes_them() {
    let _s = serial();
    let dir = std::env::temp_dir().join(format!("sp-counters-agg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("aggregate.h5");
    sp::setup(
        Options::new()
            .file_path(&path)
            .verbose(false)
            .aggregation(true)
            .track_allocations(true),
    )
    .unwrap();
    for _ in 0..10 {
        three_vectors();
    }
    let results = sp::finalize().unwrap();
    let c = results.counters_of("three_vectors").unwrap();
    assert_eq!((c.num_calls, incl(c)), (10, [30, 30_000, 30, 30_000]));
    let reader = scope_profiler_reader::ProfileReader::open(&path).unwrap();
    assert!(reader.is_aggregate());
    assert_eq!(reader.counters(), results.counters());
    drop(reader);
    std::fs::remove_dir_all(&dir).ok();
}

/// The TOML keys `track_allocations` and `perf_events`, and the variable
/// `SCOPE_PROFILER_TRACK_ALLOCATIONS`.
#[test]
fn the_configuration_file_and_the_environment_turn_counters_on() {
    let _s = serial();
    let dir = std::env::temp_dir().join(format!("sp-counters-toml-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let toml = dir.join("profiling.toml");
    std::fs::write(
        &toml,
        "[profiling]\ntrack_allocations = true\nperf_events = [\"task-clock\", \"page-faults\"]\n",
    )
    .unwrap();
    let options = Options::from_toml(&toml).unwrap();
    assert!(read::track_allocations(&options));
    assert_eq!(read::perf_events(&options), ["task-clock", "page-faults"]);
    // SAFETY: this binary's tests run one at a time (`serial`) and none
    // reads the environment meanwhile on another thread.
    unsafe { std::env::set_var("SCOPE_PROFILER_TRACK_ALLOCATIONS", "1") };
    let from_env = Options::from_env();
    // SAFETY: as above.
    unsafe { std::env::remove_var("SCOPE_PROFILER_TRACK_ALLOCATIONS") };
    assert!(read::track_allocations(&from_env.unwrap()));
    std::fs::remove_dir_all(&dir).ok();
}

#[profile]
async fn inner_frame() {
    let v = black_box(vec![0u8; 700]);
    tokio::task::yield_now().await;
    drop(v);
}

#[profile]
async fn outer_handler() {
    let v = black_box(vec![0u8; 300]);
    // Two frames (futures first polled inside the task), each its own
    // recorder: their calls are the handler's callees.
    inner_frame().await;
    inner_frame().await;
    drop(v);
}

/// Instrumented futures polled inside a task (frames) count in the call
/// around them: its inclusive counts hold theirs, its own do not.
#[test]
fn frames_inside_a_task_are_callees_of_the_call_around_them() {
    let _s = serial();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    // Warm-up, as above.
    runtime.block_on(async {
        let warm: Vec<_> = (0..16)
            .map(|_| {
                tokio::spawn(async {
                    for _ in 0..20 {
                        std::thread::sleep(std::time::Duration::from_micros(200));
                        tokio::task::yield_now().await;
                    }
                })
            })
            .collect();
        for h in warm {
            h.await.unwrap();
        }
    });
    sp::setup(counting()).unwrap();
    runtime.block_on(async {
        tokio::spawn(outer_handler()).await.unwrap();
    });
    let results = sp::finalize().unwrap();
    drop(runtime);
    let find = |name: &str| {
        results
            .counters()
            .iter()
            .find(|c| c.name.ends_with(name))
            .unwrap_or_else(|| panic!("{name}: {:?}", results.counters()))
    };
    let inner = find("inner_frame");
    assert_eq!((inner.num_calls, incl(inner)), (2, [2, 1400, 2, 1400]));
    assert_eq!(own(inner), incl(inner));
    let outer = find("outer_handler");
    assert_eq!(outer.num_calls, 1);
    assert_eq!(incl(outer), [3, 1700, 3, 1700]);
    assert_eq!(own(outer), [1, 300, 1, 300]);
}

/// A profile whose counters do not match their event names is not written.
#[test]
fn mismatched_counters_are_refused_by_the_writer() {
    let dir = std::env::temp_dir().join(format!("sp-counters-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut profile = sp::Profile::default();
    let mut c = RegionCounters::default();
    c.name = "bad".into();
    c.num_calls = 1;
    c.event_names = vec!["alloc-count".into(), "alloc-bytes".into()];
    c.inclusive = vec![1];
    c.exclusive = vec![1, 2];
    profile.counters.push(c);
    let path = dir.join("bad.h5");
    let err = sp::write_profile(&profile, &path, sp::Compression::None).unwrap_err();
    assert!(
        err.to_string().contains("2 event names for 1 inclusive"),
        "{err}"
    );
    assert!(!path.exists(), "nothing published");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn counters_of_regions_named_with_a_slash_or_a_nul_go_to_the_file_and_back() {
    // A '/' would be read as a path and a NUL ends an HDF5 name: the group
    // names of both are stored (U+2215, ␀) and read back as the names were.
    let _s = serial();
    let dir = std::env::temp_dir().join(format!("sp-counter-names-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("names.h5");
    sp::setup(
        Options::new()
            .file_path(&path)
            .verbose(false)
            .track_allocations(true),
    )
    .unwrap();
    for name in ["io/load", "nul\0name"] {
        sp::region(name).run(|| black_box(vec![0u8; 32]));
    }
    let results = sp::finalize().unwrap();
    let read = sp::read_profile(&path).unwrap();
    assert_eq!(read.counters, results.counters());
    let names: Vec<&str> = read.counters.iter().map(|c| c.name.as_str()).collect();
    assert!(
        names.contains(&"io/load") && names.contains(&"nul\0name"),
        "{names:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// This thread's CPU time, ns (CLOCK_THREAD_CPUTIME_ID).
fn thread_cpu_ns() -> i64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec to write.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime: {}", std::io::Error::last_os_error());
    t.tv_sec * 1_000_000_000 + t.tv_nsec
}

/// The perf events' file descriptors this process holds.
#[cfg(target_os = "linux")]
fn perf_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| {
            d.flatten()
                .filter(|e| {
                    std::fs::read_link(e.path())
                        .is_ok_and(|l| l.to_string_lossy().contains("perf_event"))
                })
                .count()
        })
        .unwrap_or(0)
}

/// A thread's perf group is closed when its session ends, not when the
/// thread next records or exits: threads idle after many sessions hold
/// none (issue 39 item 4).
#[test]
#[cfg(target_os = "linux")]
fn perf_groups_close_when_the_session_ends() {
    let _s = serial();
    if !software_events_or_skip(&["task-clock", "context-switches"]) {
        return;
    }
    sp::finalize().unwrap();
    let before = perf_fds();
    let (go, wait) = std::sync::mpsc::channel::<std::sync::mpsc::Sender<()>>();
    let wait = std::sync::Arc::new(std::sync::Mutex::new(wait));
    // Four threads that outlive every session, recording once in each.
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let wait = std::sync::Arc::clone(&wait);
            std::thread::spawn(move || {
                loop {
                    let Ok(done) = wait.lock().unwrap().recv() else {
                        return;
                    };
                    sp::region("idle-after").run(|| std::hint::black_box(0));
                    let _ = done.send(());
                }
            })
        })
        .collect();
    for session in 0..20 {
        let run = sp::setup(perf_options(&["task-clock", "context-switches"])).unwrap();
        let (done, finished) = std::sync::mpsc::channel();
        for _ in 0..4 {
            go.send(done.clone()).unwrap();
        }
        for _ in 0..4 {
            finished.recv().unwrap();
        }
        let during = perf_fds();
        assert!(
            during >= before + 2,
            "session {session}: the threads' groups are open ({during} perf fds, {before} before)"
        );
        run.finalize().unwrap();
        assert_eq!(
            perf_fds(),
            before,
            "session {session}: every group closed at finalize, the threads still alive"
        );
    }
    drop(go);
    for w in workers {
        w.join().unwrap();
    }
}
