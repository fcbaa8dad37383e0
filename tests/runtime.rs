//! The runtime's rules, end to end: sessions, regions, threads, panics,
//! misuse and errors.

use std::collections::HashMap;

use integration_tests::{calls_per_region, event_range, hand_built_dir, serial, temp_dir};
use scope_profiler::{self as sp, Error, Options, Profile};

fn in_memory() -> Options {
    Options::new().in_memory().verbose(false)
}

/// For every event: (region name, thread id, call id, parent id).
fn calls(p: &Profile) -> Vec<(String, i64, i64, i64)> {
    let mut out = Vec::new();
    for row in &p.rows {
        for i in event_range(row) {
            out.push((
                p.region_names[row.region_id as usize].clone(),
                p.events.thread_ids[i],
                p.events.call_ids[i],
                p.events.parent_ids[i],
            ));
        }
    }
    out
}

fn parent_names(p: &Profile, name: &str) -> Vec<Option<String>> {
    let all = calls(p);
    let by_id: HashMap<i64, &(String, i64, i64, i64)> = all.iter().map(|c| (c.2, c)).collect();
    all.iter()
        .filter(|c| c.0 == name)
        .map(|c| by_id.get(&c.3).map(|parent| parent.0.clone()))
        .collect()
}

#[test]
fn lifecycle_errors_are_values() {
    let _s = serial();
    assert!(matches!(sp::finalize(), Err(Error::NotActive)));
    assert!(matches!(sp::checkpoint(), Err(Error::NotActive)));
    let run = sp::setup(in_memory()).unwrap();
    assert!(matches!(
        sp::setup(in_memory()),
        Err(Error::AlreadyConfigured)
    ));
    run.finalize().unwrap();
    assert!(matches!(sp::finalize(), Err(Error::NotActive)));
}

#[test]
fn a_run_handle_finalizes_only_its_own_session() {
    let _s = serial();
    let old = sp::setup(in_memory()).unwrap();
    sp::finalize().unwrap();
    let _new = sp::setup(in_memory()).unwrap();
    assert!(!old.is_active());
    assert!(matches!(old.finalize(), Err(Error::NotActive)));
    sp::finalize().unwrap();
}

#[test]
fn setup_after_finalize_clears_every_region() {
    let _s = serial();
    sp::setup(in_memory()).unwrap();
    sp::region("a").run(|| ());
    sp::region("zero");
    sp::finalize().unwrap();
    // Until the next setup, the finished session still answers.
    assert_eq!(sp::get_region("a").unwrap().num_calls(), 1);
    assert_eq!(sp::recorded_regions(), ["a"]);
    assert_eq!(sp::get_all_regions().len(), 2);
    sp::setup(in_memory()).unwrap();
    assert!(sp::recorded_regions().is_empty());
    assert!(sp::get_all_regions().is_empty());
    assert!(sp::get_region("a").is_none());
    sp::finalize().unwrap();
}

#[test]
fn handles_made_outside_a_session_record_nothing() {
    let _s = serial();
    let early = sp::region("early");
    assert!(!early.enter().is_recording());
    sp::setup(in_memory()).unwrap();
    assert!(
        !early.enter().is_recording(),
        "a handle made before setup stays inert"
    );
    assert_eq!(early.num_calls(), 0);
    let fresh = sp::region("early");
    assert!(fresh.enter().is_recording());
    let results = sp::finalize().unwrap();
    assert_eq!(calls_per_region(results.profile().unwrap())["early"], 1);
    assert!(
        !fresh.enter().is_recording(),
        "after finalize nothing records"
    );
}

#[test]
fn decorator_and_scope_share_one_region_by_name() {
    let _s = serial();
    sp::setup(in_memory()).unwrap();
    for _ in 0..3 {
        sp::scope!("compute");
    }
    sp::region("compute").run(|| ());
    assert_eq!(sp::get_region("compute").unwrap().num_calls(), 4);
    assert_eq!(sp::region("compute"), sp::profile_region("compute"));
    let results = sp::finalize().unwrap();
    assert_eq!(calls_per_region(results.profile().unwrap())["compute"], 4);
}

#[test]
fn nesting_is_exact_and_exclusive_times_add_up() {
    let _s = serial();
    sp::setup(in_memory()).unwrap();
    {
        let _outer = sp::region("outer").enter();
        for _ in 0..3 {
            let _inner = sp::region("inner").enter();
            std::hint::black_box(0);
        }
    }
    let results = sp::finalize().unwrap();
    let p = results.profile().unwrap();
    assert_eq!(parent_names(p, "inner"), vec![Some("outer".to_owned()); 3]);
    assert_eq!(parent_names(p, "outer"), vec![None]);
    let outer = &p.rows[0];
    let inner = &p.rows[1];
    assert_eq!(outer.exclusive, outer.stats.total - inner.stats.total);
    assert_eq!(inner.exclusive, inner.stats.total);
    // Every child lies inside its parent, and a parent's id is smaller.
    let (s, d) = (&p.events.start_ns, &p.events.durations);
    for i in 1..4 {
        assert!(s[0] <= s[i] && s[i] + d[i] <= s[0] + d[0]);
        assert!(p.events.call_ids[i] > p.events.call_ids[0]);
    }
}

#[test]
fn threads_record_exactly_and_nest_on_their_own_lane() {
    let _s = serial();
    const THREADS: usize = 8;
    const CALLS: usize = 100_000;
    sp::setup(in_memory()).unwrap();
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                for _ in 0..CALLS / 2 {
                    sp::scope!("t_outer");
                    sp::scope!("t_inner");
                }
            });
        }
    }); // the threads have exited: their buffers must be kept
    let results = sp::finalize().unwrap();
    let p = results.profile().unwrap();
    let c = calls_per_region(p);
    assert_eq!(c["t_outer"], (THREADS * CALLS / 2) as u64);
    assert_eq!(c["t_inner"], (THREADS * CALLS / 2) as u64);
    assert_eq!(p.threads.len(), THREADS);
    assert!(
        p.threads
            .iter()
            .all(|t| t.end_ns >= t.start_ns && t.end_ns >= 0)
    );
    let all = calls(p);
    let by_id: HashMap<i64, &(String, i64, i64, i64)> = all.iter().map(|c| (c.2, c)).collect();
    assert_eq!(by_id.len(), all.len(), "call ids are unique");
    for call in &all {
        match call.0.as_str() {
            "t_inner" => {
                let parent = by_id[&call.3];
                assert_eq!(parent.0, "t_outer");
                assert_eq!(parent.1, call.1, "a parent is on its child's thread");
            }
            _ => assert_eq!(call.3, -1),
        }
    }
}

#[test]
fn a_panic_inside_regions_is_recorded_and_the_stack_stays_consistent() {
    let _s = serial();
    sp::setup(in_memory()).unwrap();
    let caught = std::panic::catch_unwind(|| {
        let _outer = sp::region("p_outer").enter();
        let _inner = sp::region("p_inner").enter();
        panic!("boom");
    });
    assert!(caught.is_err());
    {
        let _after = sp::region("p_after").enter();
        sp::scope!("p_child");
    }
    let results = sp::finalize().unwrap();
    let p = results.profile().unwrap();
    let c = calls_per_region(p);
    assert_eq!(
        (c["p_outer"], c["p_inner"], c["p_after"], c["p_child"]),
        (1, 1, 1, 1)
    );
    assert_eq!(parent_names(p, "p_inner"), [Some("p_outer".to_owned())]);
    assert_eq!(parent_names(p, "p_after"), [None]);
    assert_eq!(parent_names(p, "p_child"), [Some("p_after".to_owned())]);
}

#[test]
fn out_of_order_and_leaked_guards_keep_the_nesting_valid() {
    let _s = serial();
    sp::setup(in_memory()).unwrap();
    let a = sp::region("o_a").enter();
    let b = sp::region("o_b").enter();
    drop(a); // ends o_b at the same instant
    drop(b); // already ended: nothing more
    {
        let _c = sp::region("o_c").enter();
        std::mem::forget(sp::region("o_leaked").enter());
    } // o_c's end also ends the leaked call
    sp::region("o_d").run(|| ());
    let results = sp::finalize().unwrap();
    let p = results.profile().unwrap();
    let c = calls_per_region(p);
    assert_eq!(
        (c["o_a"], c["o_b"], c["o_c"], c["o_leaked"], c["o_d"]),
        (1, 1, 1, 1, 1)
    );
    assert_eq!(parent_names(p, "o_b"), [Some("o_a".to_owned())]);
    assert_eq!(parent_names(p, "o_leaked"), [Some("o_c".to_owned())]);
    assert_eq!(parent_names(p, "o_d"), [None]);
    let end = |name: &str| {
        let row = p
            .rows
            .iter()
            .find(|r| p.region_names[r.region_id as usize] == name)
            .unwrap();
        let i = row.event_offset as usize;
        p.events.start_ns[i] + p.events.durations[i]
    };
    assert_eq!(end("o_a"), end("o_b"));
}

#[test]
fn deep_recursion_and_many_names() {
    let _s = serial();
    sp::setup(in_memory()).unwrap();
    fn recurse(n: u32) {
        sp::scope!("rec");
        if n > 0 {
            recurse(n - 1);
        }
    }
    recurse(9_999);
    let names: Vec<String> = (0..1000).map(|i| format!("name/{i}.ü")).collect();
    for n in &names {
        sp::region(n).run(|| ());
    }
    let results = sp::finalize().unwrap();
    let p = results.profile().unwrap();
    assert_eq!(calls_per_region(p)["rec"], 10_000);
    assert_eq!(p.region_names.len(), 1001);
    assert_eq!(&p.region_names[1..], &names[..]);
    let summary = results.summary();
    let rec = summary.roots().next().unwrap();
    assert!(rec.recursive() && rec.num_calls() == 10_000);
}

#[test]
fn durations_and_counts_at_runtime() {
    let _s = serial();
    sp::setup(in_memory()).unwrap();
    let r = sp::region("sleep");
    r.run(|| std::thread::sleep(std::time::Duration::from_millis(3)));
    r.run(|| ());
    let d = r.durations();
    assert_eq!(d.len(), 2);
    assert!(d[0] >= 3_000_000 && d[1] < 3_000_000, "{d:?}");
    let results = sp::finalize().unwrap();
    assert_eq!(r.num_calls(), 2);
    assert!(r.durations().is_empty());
    let row = &results.profile().unwrap().rows[0];
    // finalize calibrates ticks to ns over the whole session, so the file's
    // total may differ from the runtime durations by a few ppm, not more
    let runtime_total = d.iter().sum::<i64>();
    let tolerance = runtime_total / 10_000 + 10;
    assert!(
        (row.stats.total - runtime_total).abs() <= tolerance,
        "file {} ns, at runtime {runtime_total} ns",
        row.stats.total
    );
}

#[test]
fn regions_by_name_carry_their_source_location() {
    let _s = serial();
    sp::setup(in_memory()).unwrap();
    let line = line!() + 1;
    sp::region("located").run(|| ());
    let results = sp::finalize().unwrap();
    let row = &results.profile().unwrap().rows[0];
    assert!(
        row.source_file.ends_with("runtime.rs"),
        "{}",
        row.source_file
    );
    assert_eq!(row.source_line, line as i64);
}

#[test]
fn bad_output_paths_fail_at_setup_naming_the_path() {
    let _s = serial();
    let dir = temp_dir("bad-paths");
    let cases = [
        dir.join("missing/sub/x.h5"),
        dir.clone(),
        "/proc/scope-profiler-cannot-write.h5".into(),
    ];
    for path in cases {
        let err = sp::setup(Options::new().file_path(&path)).unwrap_err();
        assert!(matches!(err, Error::InvalidPath { .. }), "{err}");
        assert!(
            err.to_string().contains(&path.display().to_string()),
            "{err}"
        );
    }
    assert!(
        matches!(sp::finalize(), Err(Error::NotActive)),
        "no session was started"
    );
}

#[test]
fn files_round_trip_and_checkpoints_keep_recording() {
    let _s = serial();
    let dir = temp_dir("roundtrip");
    let path = dir.join("run.h5");
    sp::setup(Options::new().file_path(&path).verbose(false).label("lbl")).unwrap();
    sp::region("first").run(|| ());
    let cp = sp::checkpoint().unwrap();
    assert_eq!(cp.file_path(), Some(path.as_path()));
    assert_eq!(sp::read_profile(&path).unwrap().events.len(), 1);
    sp::region("second").run(|| ());
    let results = sp::finalize().unwrap();
    assert!(
        results.profile().is_none(),
        "a file session's data is in its file"
    );
    let read = sp::read_profile(&path).unwrap();
    assert_eq!(read.region_names, ["first", "second"]);
    assert_eq!(read.events.len(), 2);
    assert_eq!(read.events.parent_ids, [-1, -1]);
    assert_eq!(
        read.rows.iter().map(|r| r.event_count).collect::<Vec<_>>(),
        [1, 1]
    );
    assert_eq!(read.threads.len(), 1);
    let meta = |k: &str| read.metadata_value(k).cloned();
    assert_eq!(meta("label"), Some("lbl".into()));
    assert_eq!(meta("mpi_size"), Some(1i64.into()));
    assert_eq!(meta("source_language"), Some("rust".into()));
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["run.h5"], "no temporary file is left behind");
}

#[test]
fn a_failed_write_loses_nothing() {
    let _s = serial();
    let dir = temp_dir("failed-write");
    let path = dir.join("out.h5");
    sp::setup(Options::new().file_path(&path).verbose(false)).unwrap();
    sp::region("kept").run(|| ());
    std::fs::remove_dir_all(&dir).unwrap();
    let err = sp::finalize().unwrap_err();
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
    // The session is still active with its data; once the directory is back
    // the next finalize writes everything.
    sp::region("kept").run(|| ());
    std::fs::create_dir_all(&dir).unwrap();
    sp::finalize().unwrap();
    assert_eq!(
        calls_per_region(&sp::read_profile(&path).unwrap())["kept"],
        2
    );
}

#[test]
fn a_session_guard_finalizes_on_drop() {
    let _s = serial();
    {
        let _session = sp::session(in_memory()).unwrap();
        sp::region("guarded").run(|| ());
    }
    assert!(matches!(sp::finalize(), Err(Error::NotActive)));
    assert_eq!(sp::get_region("guarded").unwrap().num_calls(), 1);
    // Nothing but the session's envelope.
    let finished = sp::session(in_memory()).unwrap().finalize().unwrap();
    assert_eq!(
        finished.profile().unwrap().region_names,
        ["scope_profiler.session"]
    );
}

#[test]
fn the_summary_prints_the_tree() {
    let _s = serial();
    sp::setup(in_memory()).unwrap();
    sp::region("solve").run(|| {
        sp::region("assemble").run(|| ());
        sp::region("assemble").run(|| ());
    });
    let text = sp::finalize().unwrap().to_string();
    let solve = text.lines().find(|l| l.contains("solve")).unwrap();
    let assemble = text.lines().find(|l| l.contains("└─ assemble")).unwrap();
    assert!(solve.split_whitespace().any(|w| w == "1"), "{text}");
    assert!(assemble.split_whitespace().any(|w| w == "2"), "{text}");
}

#[test]
fn async_calls_get_their_own_lanes_and_record_wall_time() {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};
    static SITE: sp::__private::CallSite =
        sp::__private::CallSite::new("a_fetch", file!(), line!());

    /// Pending once, then ready.
    struct YieldOnce(bool);
    impl Future for YieldOnce {
        type Output = ();
        fn poll(mut self: std::pin::Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
            if self.0 {
                Poll::Ready(())
            } else {
                self.0 = true;
                Poll::Pending
            }
        }
    }
    let _s = serial();
    let path = temp_dir("async").join("async.h5");
    sp::setup(Options::new().file_path(&path).verbose(false)).unwrap();
    let mut cx = Context::from_waker(Waker::noop());
    let mk = || SITE.instrument(sp::__private::Mode::Plain, YieldOnce(false));
    let (mut a, mut b) = (Box::pin(mk()), Box::pin(mk()));
    let _outer = sp::region("a_sync_outer").enter();
    assert!(a.as_mut().poll(&mut cx).is_pending());
    assert!(b.as_mut().poll(&mut cx).is_pending());
    assert!(a.as_mut().poll(&mut cx).is_ready()); // a ends while b is still open
    std::thread::sleep(std::time::Duration::from_millis(1));
    let mut c = Box::pin(mk());
    assert!(c.as_mut().poll(&mut cx).is_pending());
    drop(c); // cancelled: recorded up to now
    assert!(b.as_mut().poll(&mut cx).is_ready());
    drop(_outer);
    sp::finalize().unwrap();
    let p = &sp::read_profile(&path).unwrap();
    assert_eq!(calls_per_region(p)["a_fetch"], 3);
    assert_eq!(p.tasks.len(), 3);
    assert!(
        p.tasks
            .iter()
            .all(|t| t.name == "a_fetch" && t.done_ns >= t.created_ns)
    );
    assert_eq!(
        p.tasks.iter().map(|t| t.steps).collect::<Vec<_>>(),
        [2, 2, 1]
    );
    let task_ids = p.events.task_ids.as_ref().expect("task_ids column");
    let mut lanes: Vec<i64> = task_ids.iter().copied().filter(|&t| t >= 0).collect();
    lanes.sort();
    assert_eq!(lanes, [0, 1, 2], "one lane per async call");
    assert_eq!(parent_names(p, "a_fetch"), [None, None, None]);
}

/// Two runs of one deterministic program hold the same calls: names, rows,
/// call and parent ids, threads (timestamps aside).
fn assert_same_calls(a: &Profile, b: &Profile) {
    assert_eq!(a.region_names, b.region_names);
    assert_eq!(a.events.call_ids, b.events.call_ids);
    assert_eq!(a.events.parent_ids, b.events.parent_ids);
    assert_eq!(a.events.thread_ids, b.events.thread_ids);
    let shape = |p: &Profile| {
        p.rows
            .iter()
            .map(|r| (r.region_id, r.event_offset, r.event_count))
            .collect::<Vec<_>>()
    };
    assert_eq!(shape(a), shape(b));
}

/// Runs the same single-threaded program under `options`; returns its
/// profile, whether it spilled, and how the events were written.
fn run_program(options: Options) -> (Profile, bool, sp::WritePath) {
    sp::setup(options).unwrap();
    for i in 0..300_000u32 {
        sp::scope!("sp_step");
        if i % 3 == 0 {
            sp::scope!("sp_inner");
            sp::region(if i % 2 == 0 { "sp_even" } else { "sp_odd" }).run(|| ());
        }
    }
    let results = sp::finalize().unwrap();
    let (spilled, path) = (results.health().spilled_bytes > 0, results.write_path());
    let profile = match results.file_path() {
        Some(file) => sp::read_profile(file).unwrap(),
        None => results.into_profile().unwrap(),
    };
    (profile, spilled, path)
}

#[test]
fn a_spilled_run_gives_the_same_profile_as_an_unspilled_one() {
    let _s = serial();
    let (unspilled, did_spill, _) = run_program(in_memory());
    assert!(!did_spill, "the default limit spilled 12 MB of records");
    // 1 MiB: records spill to disk and the placement goes through buckets.
    let (spilled, did_spill, path) = run_program(in_memory().memory_limit(1 << 20));
    assert!(did_spill, "nothing spilled under a 1 MiB limit");
    assert_eq!(path, sp::WritePath::Memory);
    assert_eq!(spilled.events.len(), 500_000);
    assert_same_calls(&spilled, &unspilled);
    // Every call's parent is the call that encloses it.
    let c = calls_per_region(&spilled);
    assert_eq!(
        (c["sp_step"], c["sp_inner"], c["sp_even"], c["sp_odd"]),
        (300_000, 100_000, 50_000, 50_000)
    );
    assert_eq!(
        parent_names(&spilled, "sp_even"),
        vec![Some("sp_inner".to_owned()); 50_000]
    );
}

#[test]
fn files_written_directly_and_through_buckets_hold_the_same_calls() {
    let _s = serial();
    let dir = temp_dir("direct-vs-buckets");
    // In memory: the bucket path. Uncompressed file: columns written in place.
    let (buckets, _, path) = run_program(in_memory().memory_limit(1 << 20));
    assert_eq!(path, sp::WritePath::Memory);
    let (direct, _, direct_path) = run_program(
        Options::new()
            .file_path(dir.join("direct.h5"))
            .verbose(false)
            .compression(sp::Compression::None)
            .memory_limit(1 << 20),
    );
    assert_eq!(direct_path, sp::WritePath::Direct);
    let (compressed, _, compressed_path) = run_program(
        Options::new()
            .file_path(dir.join("gzip.h5"))
            .verbose(false)
            .compression(sp::Compression::Gzip(1))
            .memory_limit(1 << 20),
    );
    // 500k events do not fit the 8 MiB placement budget: buckets on disk.
    assert_eq!(
        compressed_path,
        sp::WritePath::Streamed {
            through_scratch: true
        }
    );
    // A JSON profile, through the same buckets; its 300k-call row spills its
    // columns' text to scratch files (past 4 MiB).
    let (json, _, json_path) = run_program(
        Options::new()
            .file_path(dir.join("run.json"))
            .verbose(false)
            .memory_limit(1 << 20),
    );
    assert_eq!(
        json_path,
        sp::WritePath::Json {
            through_scratch: true
        }
    );
    // The exclusive totals written agree with the file's own events.
    let mut own: HashMap<u32, i64> = HashMap::new();
    let mut region_of: HashMap<i64, u32> = HashMap::new();
    for row in &json.rows {
        for i in event_range(row) {
            region_of.insert(json.events.call_ids[i], row.region_id);
            *own.entry(row.region_id).or_default() += json.events.durations[i];
        }
    }
    for row in &json.rows {
        for i in event_range(row) {
            if let Some(parent) = region_of.get(&json.events.parent_ids[i]) {
                *own.entry(*parent).or_default() -= json.events.durations[i];
            }
        }
    }
    for row in &json.rows {
        assert_eq!(row.exclusive, own[&row.region_id]);
    }
    for file in [&direct, &compressed, &json] {
        assert_same_calls(file, &buckets);
        // Statistics and exclusive totals agree with the file's own events.
        for row in &file.rows {
            let calls: Vec<(i64, i64)> = file.row_calls(row).collect();
            assert_eq!(row.stats, sp::SummaryStatistics::from_calls(&calls));
        }
        assert!(file.events.durations.iter().all(|&d| d >= 0));
    }
}

/// Compressed columns are shuffled and deflated chunk by chunk on worker
/// threads and written with `H5Dwrite_chunk`; HDF5's own filters must read
/// them back exactly, the last, partial chunk and the `task_ids` column too.
#[test]
fn compressed_columns_read_back_exactly_through_the_stock_filters() {
    let dir = hand_built_dir("parallel-chunks");
    let n = 3 * 65_536 + 17; // three whole chunks and a partial one
    let mut profile = Profile::default();
    profile.region_names = vec!["a".into(), "b".into()];
    let mut rows = [sp::RegionRow::default(), sp::RegionRow::default()];
    (rows[0].region_id, rows[0].event_offset, rows[0].event_count) = (0, 0, 100_000);
    (rows[1].region_id, rows[1].event_offset, rows[1].event_count) = (1, 100_000, n - 100_000);
    let e = &mut profile.events;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..n as i64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17; // noise, so that some chunks compress poorly
        e.start_ns.push(1_000_000 + i * 10 + (x % 7) as i64);
        e.durations.push((x % 1_000_003) as i64);
        e.call_ids.push(i);
        e.parent_ids.push(if i % 3 == 0 { -1 } else { i - 1 });
        e.thread_ids.push((x % 4) as i64);
    }
    e.task_ids = Some(
        (0..n as i64)
            .map(|i| if i % 5 == 0 { i / 5 } else { -1 })
            .collect(),
    );
    for row in &mut rows {
        let calls: Vec<(i64, i64)> = row
            .events()
            .map(|i| (e.start_ns[i], e.durations[i]))
            .collect();
        row.stats = sp::SummaryStatistics::from_calls(&calls);
    }
    profile.rows = rows.to_vec();
    profile.tasks = (0..=(n as i64 / 5))
        .map(|i| {
            let mut task = sp::TaskInfo::default();
            task.index = i;
            task
        })
        .collect();
    let plain = dir.join("plain.h5");
    let gzip = dir.join("gzip.h5");
    sp::write_profile(&profile, &plain, sp::Compression::None).unwrap();
    sp::write_profile(&profile, &gzip, sp::Compression::Gzip(6)).unwrap();
    let (from_plain, from_gzip) = (
        sp::read_profile(&plain).unwrap(),
        sp::read_profile(&gzip).unwrap(),
    );
    assert_eq!(from_gzip.events, profile.events);
    assert_eq!(from_gzip, from_plain);
    let size = |p: &std::path::Path| std::fs::metadata(p).unwrap().len();
    assert!(
        size(&gzip) < size(&plain) / 2,
        "the columns were not compressed: {} vs {} bytes",
        size(&gzip),
        size(&plain)
    );
}

/// The public API for instrumentation built on the runtime (the `tracing`
/// layer): `Region::at` sets the source location, `is_current` tells a cache
/// when to re-resolve, `start_async` records one call on a task lane that
/// may end on another thread, and a handle of an earlier session records
/// nothing.
#[test]
fn region_at_is_current_and_async_calls() {
    let _s = serial();
    assert!(!sp::is_active());
    let stale = sp::Region::at("ext::span", "src/ext.rs", 7);
    assert!(!stale.is_current());
    assert!(!stale.start_async().is_recording());

    let run = sp::setup(in_memory()).unwrap();
    assert!(sp::is_active());
    let r = sp::Region::at("ext::span", "src/ext.rs", 7);
    assert!(r.is_current() && !stale.is_current());
    let mut call = r.start_async();
    call.poll_begin();
    {
        let _inner = sp::region("inner").enter();
    }
    call.poll_end();
    std::thread::spawn(move || {
        call.poll_begin();
        call.poll_end();
        drop(call); // recorded on drop, on this other thread
    })
    .join()
    .unwrap();
    let results = run.finalize().unwrap();
    let p = results.profile().unwrap();
    assert_eq!(p.region_names, ["ext::span", "inner"]);
    assert_eq!(p.rows[0].source_file, "src/ext.rs");
    assert_eq!(p.rows[0].source_line, 7);
    assert_eq!(p.tasks.len(), 1);
    assert_eq!(p.tasks[0].steps, 2);
    assert_eq!(
        calls_per_region(p),
        integration_tests::count_map(&[("ext::span", 1), ("inner", 1)])
    );
    // The async call is on its task lane, the region on the thread's.
    let task_ids = p.events.task_ids.as_ref().unwrap();
    let ext = event_range(&p.rows[0]).start;
    let inner = event_range(&p.rows[1]).start;
    assert_eq!((task_ids[ext], task_ids[inner]), (0, -1));
    assert!(!r.is_current());
}

/// The nearest-rank `q` quantile of `sorted`.
fn nearest_rank(sorted: &[i64], q: f64) -> i64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

#[test]
fn finalize_statistics_match_a_sort_of_the_durations() {
    let _s = serial();
    let dir = temp_dir("statistics");
    let path = dir.join("stats.h5");
    // Small memory limit: `finalize`'s budget is its floor, 8 MiB, so a
    // region of 300k calls is past the exact percentiles' 131072.
    sp::setup(
        Options::new()
            .file_path(&path)
            .verbose(false)
            .memory_limit(4 << 20),
    )
    .unwrap();
    for i in 0..2_000u64 {
        sp::region("varied").run(|| {
            let mut x = i;
            for _ in 0..(i % 97) * 10 {
                x = std::hint::black_box(x.wrapping_mul(31).rotate_left(7));
            }
            sp::region("leaf").run(|| std::hint::black_box(x));
        });
    }
    for _ in 0..300_000 {
        sp::region("many").run(|| ());
    }
    let results = sp::finalize().unwrap();
    let profile = sp::read_profile(&path).unwrap();
    let names: Vec<&str> = results.statistics().iter().map(|s| s.name()).collect();
    assert_eq!(names, profile.region_names);
    for (row, stats) in profile.rows.iter().zip(results.statistics()) {
        let mut durations = profile.events.durations[row.events()].to_vec();
        durations.sort_unstable();
        assert_eq!(stats.num_calls(), row.event_count);
        assert_eq!(stats.total(), row.stats.total);
        assert_eq!(stats.exclusive(), row.exclusive);
        assert_eq!(
            (stats.minimum(), stats.maximum()),
            (durations[0], *durations.last().unwrap())
        );
        let mean = durations.iter().sum::<i64>() as f64 / durations.len() as f64;
        assert!((stats.mean() - mean).abs() < 1e-6 * mean.max(1.0));
        let got = [stats.p50(), stats.p95(), stats.p99()];
        let exact = [0.5, 0.95, 0.99].map(|q| nearest_rank(&durations, q));
        if stats.name() == "many" {
            assert!(!stats.is_exact(), "300k calls are past the budget");
            for (g, e) in got.iter().zip(exact) {
                let error = (g - e).abs() as f64 / e.max(1) as f64;
                assert!(
                    error <= sp::RegionStatistics::RELATIVE_ERROR || (g - e).abs() <= 1,
                    "{g} vs {e}"
                );
            }
        } else {
            assert!(stats.is_exact());
            assert_eq!(got, exact, "{}", stats.name());
        }
    }
    assert!(
        results.statistics_of("varied").unwrap().p99()
            > results.statistics_of("varied").unwrap().p50()
    );
}

/// A `.json` file name picks the JSON profile at `finalize_to` too
/// (issue 24, item 2), whatever the case of the name.
#[test]
fn a_json_file_name_at_finalize_to_writes_the_json_profile() {
    let _s = integration_tests::serial();
    let dir = integration_tests::temp_dir("json-name");
    let json = dir.join("Run.JSON");
    let run = sp::setup(Options::new().file_path(dir.join("run.h5")).verbose(false)).unwrap();
    sp::region("step").run(|| ());
    let results = run.finalize_to(&json).unwrap();
    assert!(matches!(results.write_path(), sp::WritePath::Json { .. }));
    let text = std::fs::read_to_string(&json).unwrap();
    assert!(
        text.trim_start().starts_with('{') && text.contains("scope-profiler-profile"),
        "{}",
        &text[..text.len().min(200)]
    );
    assert!(!dir.join("run.h5").exists());
    let profile = sp::read_profile(&json).unwrap();
    assert_eq!(profile.region_names, ["step"]);
    std::fs::remove_dir_all(&dir).ok();
}

/// The same recorded calls written to `.h5` (at a checkpoint) and to
/// `.json` and `.json.gz` (at finalize, nothing recorded in between) read
/// back equal: names, rows, every event column, threads, metadata keys;
/// and the readers of both formats give the same chunks.
#[test]
fn a_json_profile_reads_back_as_the_hdf5_file_does() {
    let _s = serial();
    let dir = temp_dir("json-profile");
    let (h5, json, gz) = (
        dir.join("run.h5"),
        dir.join("run.json"),
        dir.join("run.json.gz"),
    );
    let run = sp::setup(
        Options::new()
            .file_path(&h5)
            .verbose(false)
            .metadata("case", "json \"quoted\" é"),
    )
    .unwrap();
    std::thread::Builder::new()
        .name("worker".into())
        .spawn(|| {
            for _ in 0..3 {
                sp::region("worker.step").run(|| sp::region("worker.inner").run(|| ()));
            }
        })
        .unwrap()
        .join()
        .unwrap();
    for t in 0..5i64 {
        let _m = sp::call_metadata([("t", sp::Value::from(t))]);
        sp::Region::tagged("outer", &["io"]).run(|| sp::region("inner").run(|| ()));
    }
    sp::checkpoint().unwrap();
    let results = run.finalize_to(&json).unwrap();
    assert_eq!(results.file_path(), Some(json.as_path()));
    assert_eq!(results.statistics_of("inner").unwrap().num_calls(), 5);
    let from_h5 = sp::read_profile(&h5).unwrap();
    let from_json = sp::read_profile(&json).unwrap();
    assert_eq!(from_json.region_names, from_h5.region_names);
    assert_eq!(from_json.events, from_h5.events);
    // A running thread's CPU time is read at each write.
    let threads = |p: &Profile| {
        let mut t = p.threads.clone();
        for t in t.iter_mut().filter(|t| t.end_ns == -1) {
            t.cpu_ns = 0;
        }
        t
    };
    assert_eq!(threads(&from_json), threads(&from_h5));
    assert_eq!(from_json.threads.len(), 2);
    let keys = |p: &Profile| {
        p.metadata
            .iter()
            .map(|(k, _)| k.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(&from_json), keys(&from_h5));
    assert_eq!(
        from_json.metadata_value("case"),
        Some(&sp::Value::from("json \"quoted\" é"))
    );
    for (a, b) in from_json.rows.iter().zip(&from_h5.rows) {
        assert_eq!(
            (a.region_id, a.event_offset, a.event_count, a.exclusive),
            (b.region_id, b.event_offset, b.event_count, b.exclusive)
        );
        assert_eq!((&a.tags, &a.event_metadata), (&b.tags, &b.event_metadata));
        assert_eq!(
            (&a.source_file, a.source_line),
            (&b.source_file, b.source_line)
        );
        assert_eq!(a.stats, b.stats);
    }
    assert_eq!(from_json.rows.len(), from_h5.rows.len());
    assert_eq!(calls_per_region(&from_json)["worker.inner"], 3);

    // Through ProfileReader, in chunks, and gzip-compressed.
    sp::write_profile(&from_json, &gz, sp::Compression::None).unwrap();
    let mut bytes = [0u8; 2];
    std::io::Read::read_exact(&mut std::fs::File::open(&gz).unwrap(), &mut bytes).unwrap();
    assert_eq!(bytes, [0x1f, 0x8b]);
    let chunks = |path: &std::path::Path| {
        let reader = scope_profiler_reader::ProfileReader::open(path).unwrap();
        assert!(reader.has_parents() && reader.has_summaries());
        reader
            .chunks(2)
            .map(|c| c.unwrap())
            .map(|c| (c.row, c.offset, c.events))
            .collect::<Vec<_>>()
    };
    assert_eq!(chunks(&json), chunks(&h5));
    assert_eq!(chunks(&gz), chunks(&h5));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An aggregation-mode session writes the `"aggregate"` rows; a malformed
/// JSON file is an `Err` naming it.
#[test]
fn aggregation_mode_writes_json_aggregate_rows() {
    let _s = serial();
    let dir = temp_dir("json-aggregate");
    let path = dir.join("agg.json");
    sp::setup(
        Options::new()
            .file_path(&path)
            .verbose(false)
            .aggregation(true),
    )
    .unwrap();
    for _ in 0..4 {
        sp::region("hot").run(|| ());
    }
    sp::finalize().unwrap();
    let reader = scope_profiler_reader::ProfileReader::open(&path).unwrap();
    assert!(reader.is_aggregate());
    assert_eq!(reader.region_names(), ["hot"]);
    assert_eq!(reader.aggregates()[0].num_calls, 4);
    assert!(sp::read_profile(&path).is_err());

    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        "{\"format\": \"scope-profiler-profile\", \"regions\": [{",
    )
    .unwrap();
    let err = scope_profiler_reader::ProfileReader::open(&bad)
        .unwrap_err()
        .to_string();
    assert!(err.contains("bad.json") && err.contains("byte"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// This binary's global allocator is the system's: a session tracking
/// allocations is refused at setup, saying how to install the counting one.
#[test]
fn tracking_allocations_without_the_counting_allocator_is_refused() {
    let _s = serial();
    let err = sp::setup(
        Options::new()
            .in_memory()
            .verbose(false)
            .track_allocations(true),
    )
    .expect_err("no CountingAllocator here");
    let message = err.to_string();
    assert!(
        message.contains("#[global_allocator]") && message.contains("CountingAllocator::system()"),
        "{message}"
    );
    // Nothing was set up.
    assert!(sp::setup(Options::new().in_memory().verbose(false)).is_ok());
    sp::finalize().unwrap();
}

/// A scope of one key and a fixed-width value is a row of its thread's
/// block (no lock, no allocation), any other an entry of its lane: both
/// reach exactly their calls, nested in either order, across blocks (4096
/// rows each) and past the interned keys' limit (where rows give way to
/// entries).
#[test]
fn one_value_metadata_scopes_reach_their_calls_as_entries_do() {
    let _s = serial();
    sp::setup(in_memory()).unwrap();
    const N: u64 = 10_000;
    for i in 0..N {
        let _step = sp::call_metadata([("step", i)]);
        if i.is_multiple_of(3) {
            let _phase = sp::call_metadata([("phase", "predictor")]); // a string
            let _ratio = sp::call_metadata([("ratio", i as f64 / 2.0)]);
            let _both = sp::call_metadata([
                ("odd", sp::Value::from(i % 2 == 1)),
                ("u", sp::Value::from(u64::MAX)),
            ]);
            sp::region("advance").run(|| ());
        } else {
            sp::region("advance").run(|| ());
        }
    }
    // Fresh keys past the limit of interned keys: entries from then on.
    let many = scope_profiler_core_keys_limit();
    for k in 0..many {
        let _m = sp::call_metadata([(format!("key{k}"), k as i64)]);
        sp::region("fresh").run(|| ());
    }
    let results = sp::finalize().unwrap();
    let p = results.profile().unwrap();
    let row = |name: &str| {
        p.rows
            .iter()
            .find(|r| p.region_names[r.region_id as usize] == name)
            .unwrap()
    };
    let advance = &row("advance").event_metadata;
    assert_eq!(advance.len(), N as usize);
    for (i, call) in advance.iter().enumerate() {
        let i = i as u64;
        let mut expected = vec![("step".to_owned(), sp::Value::from(i))];
        if i.is_multiple_of(3) {
            expected.extend([
                ("phase".to_owned(), sp::Value::from("predictor")),
                ("ratio".to_owned(), sp::Value::from(i as f64 / 2.0)),
                ("odd".to_owned(), sp::Value::from(i % 2 == 1)),
                ("u".to_owned(), sp::Value::from(u64::MAX)),
            ]);
        }
        assert_eq!(call, &expected, "call {i}");
    }
    let fresh = &row("fresh").event_metadata;
    assert_eq!(fresh.len(), many);
    for (k, call) in fresh.iter().enumerate() {
        assert_eq!(call, &[(format!("key{k}"), sp::Value::from(k as i64))]);
    }
}

/// More fresh keys than the runtime interns (`lanemeta::MAX_KEYS`).
fn scope_profiler_core_keys_limit() -> usize {
    4096 + 100
}
