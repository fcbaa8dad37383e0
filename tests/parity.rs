//! Parity with the Python package, part 1: tags and opt-in tags, per-call
//! metadata and outcomes, pause/resume and timestep sampling, the session
//! envelope, captured source text. The file of one run (the Rust twin of
//! `../shared/reference/python_features.py`) is read back with this crate's
//! reader and with the Python package's reader and CLI.

use std::panic::catch_unwind;
use std::path::Path;
use std::process::Command;

use integration_tests::{prerequisite_missing, reader_python, serial, temp_dir};
use scope_profiler::{self as sp, Options, Value, profile};

#[profile("mylib.solve", tags = ["mylib"])]
fn solve(x: i64) -> i64 {
    x * 2
}

#[profile("io.load", tags = ["io"], record_outcome)]
fn load(i: i64) -> Result<i64, std::fmt::Error> {
    if i == 3 {
        return Err(std::fmt::Error);
    }
    Ok(i)
}

#[profile(record_outcome)]
fn crashy(i: i64) -> i64 {
    if i == 1 {
        panic!("crashy({i})");
    }
    i
}

#[profile("mylib2.hidden", tags = ["mylib2"])]
fn hidden() {}

/// The run: as python_features.py, plus a panicking call and a region of
/// an opt-in tag that is off.
fn features_run(path: &Path) -> sp::Results {
    sp::register_opt_in_tag("mylib");
    sp::register_opt_in_tag("mylib2");
    let session = sp::session(
        Options::new()
            .file_path(path)
            .verbose(false)
            .capture_region_source(true)
            .enable_tags(["mylib"]),
    )
    .unwrap();
    for i in 0..5 {
        let _m = sp::call_metadata([
            ("step", Value::from(i)),
            ("phase", Value::from("predictor")),
        ]);
        assert_eq!(solve(i), 2 * i);
        let _ = load(i);
    }
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let outcomes: Vec<_> = (0..2).map(|i| catch_unwind(|| crashy(i)).is_ok()).collect();
    std::panic::set_hook(hook);
    assert_eq!(outcomes, [true, false]);
    {
        let sampler = sp::sample_every(2, 0).unwrap();
        for t in 0..6 {
            let _step = sampler.step(t).unwrap();
            sp::region("sampled").run(|| ());
        }
    }
    hidden();
    session.finalize().unwrap()
}

#[test]
fn features_round_trip_through_our_reader_and_python() {
    let _serial = serial();
    let dir = temp_dir("parity-features");
    let path = dir.join("features.h5");
    let results = features_run(&path);
    let profile = sp::read_profile(&path).unwrap();
    assert_eq!(
        profile.region_names,
        [
            "scope_profiler.session",
            "mylib.solve",
            "io.load",
            "crashy",
            "sampled"
        ]
    );
    let calls: Vec<u64> = profile.rows.iter().map(|r| r.event_count).collect();
    assert_eq!(calls, [1, 5, 5, 2, 3]);
    let tags: Vec<&[String]> = profile.rows.iter().map(|r| &r.tags[..]).collect();
    assert_eq!(
        tags,
        [&[][..], &["mylib".to_owned()], &["io".to_owned()], &[], &[]]
    );
    let step = |i: i64| {
        vec![
            ("step".to_owned(), Value::Int(i)),
            ("phase".to_owned(), Value::from("predictor")),
        ]
    };
    let solve_meta: Vec<_> = (0..5).map(step).collect();
    assert_eq!(profile.rows[1].event_metadata, solve_meta);
    let load_meta: Vec<_> = (0..5)
        .map(|i| {
            let mut m = step(i);
            if i == 3 {
                m.push(("status".to_owned(), Value::from("error")));
                m.push(("exception".to_owned(), Value::from("core::fmt::Error")));
            } else {
                m.push(("status".to_owned(), Value::from("ok")));
            }
            m
        })
        .collect();
    assert_eq!(profile.rows[2].event_metadata, load_meta);
    let status = |s: &str| vec![("status".to_owned(), Value::from(s))];
    assert_eq!(
        profile.rows[3].event_metadata,
        [status("ok"), status("panic")]
    );
    assert!(profile.rows[4].event_metadata.is_empty());
    // The source text of the functions, their attribute line included.
    assert!(
        profile.rows[2]
            .source_text
            .starts_with("#[profile(\"io.load\""),
        "{:?}",
        profile.rows[2].source_text
    );
    assert!(
        profile.rows[2]
            .source_text
            .contains("return Err(std::fmt::Error);")
    );
    assert_eq!(profile.rows[0].source_text, "");
    // The session envelope encloses everything, its call id first.
    assert_eq!(
        profile.events.parent_ids[profile.rows[1].events()][0],
        profile.events.call_ids[0]
    );
    // The results of the run say the same as the file.
    assert_eq!(results.summary().len(), 5);

    let python = match reader_python(env!("CARGO_TARGET_TMPDIR"), true) {
        Ok(p) => p,
        Err(why) => return prerequisite_missing(&format!("parity interop: {why}")),
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("interop/check_features.py");
    let out = Command::new(python)
        .arg(script)
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success() && stdout.contains("features: 5 regions, 16 calls, 0 failure(s)"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn source_text_is_written_only_when_asked() {
    let _serial = serial();
    let dir = temp_dir("parity-source");
    let path = dir.join("nosource.h5");
    sp::setup(Options::new().file_path(&path).verbose(false)).unwrap();
    let _ = load(1);
    sp::finalize().unwrap();
    let profile = sp::read_profile(&path).unwrap();
    assert_eq!(profile.region_names, ["io.load"]);
    assert_eq!(profile.rows[0].source_text, "");
    assert_eq!(profile.rows[0].tags, ["io"]);
}

#[test]
fn opt_in_and_region_tag_filters_decide_per_session() {
    let _serial = serial();
    sp::register_opt_in_tag("parity-optin");
    let run = |options: Options| {
        sp::setup(options.in_memory().verbose(false)).unwrap();
        sp::Region::tagged("p.optin", &["parity-optin"]).run(|| ());
        sp::Region::tagged("p.io", &["parity-io"]).run(|| ());
        sp::region("p.plain").run(|| ());
        let results = sp::finalize().unwrap();
        let mut names = results.profile().unwrap().region_names.clone();
        names.sort();
        names
    };
    assert_eq!(run(Options::new()), ["p.io", "p.plain"]);
    assert_eq!(
        run(Options::new().enable_tags(["parity-optin"])),
        ["p.io", "p.optin", "p.plain"]
    );
    assert_eq!(
        run(Options::new().enable_tags(["*"])),
        ["p.io", "p.optin", "p.plain"]
    );
    assert_eq!(run(Options::new().region_tags(["parity-io"])), ["p.io"]);
    // Listing an opt-in tag in region_tags enables it.
    assert_eq!(
        run(Options::new().region_tags(["parity-optin"])),
        ["p.optin"]
    );
    // A handle of a region that is off records nothing and is not current.
    sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    let off = sp::Region::tagged("p.optin", &["parity-optin"]);
    assert!(!off.enter().is_recording());
    assert!(sp::get_region("p.optin").is_none());
    sp::finalize().unwrap();
}

#[test]
fn pause_resume_and_sampling_count_exactly() {
    let _serial = serial();
    let run = sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    sp::region("a").run(|| ());
    sp::pause().unwrap();
    assert!(run.is_paused());
    for _ in 0..10 {
        sp::region("a").run(|| ());
        let _ = load(1);
    }
    // Handles made while paused record once resumed.
    let made_paused = sp::region("made_paused");
    sp::pause().unwrap(); // pausing twice is harmless
    sp::resume();
    sp::resume(); // so is resuming twice
    made_paused.run(|| ());
    sp::region("a").run(|| ());
    {
        let _open = sp::region("open").enter();
        let err = sp::pause().unwrap_err();
        assert!(
            err.to_string()
                .contains("cannot pause while profiling scopes are active"),
            "{err}"
        );
        let sampler = sp::sample_every(3, 1).unwrap();
        assert!(
            sampler.step(0).is_err(),
            "pausing step inside an open region"
        );
    }
    // The sampler restores the state from before it.
    sp::pause().unwrap();
    {
        let sampler = sp::sample_every(3, 1).unwrap();
        for t in 0..10 {
            let sampled = sampler.step(t).unwrap();
            assert_eq!(sampled, t == 1 || t == 4 || t == 7);
            assert_eq!(run.is_paused(), !sampled);
            sp::region("sampled").run(|| ());
        }
    }
    assert!(run.is_paused());
    sp::resume();
    let err = sp::sample_every(0, 0).unwrap_err();
    assert!(matches!(err, sp::Error::Usage(_)), "{err}");
    assert_eq!(sp::get_region("a").unwrap().num_calls(), 2);
    assert_eq!(sp::get_region("sampled").unwrap().num_calls(), 3);
    assert_eq!(sp::get_region("made_paused").unwrap().num_calls(), 1);
    // Paused, `#[profile]` call sites do not even resolve their region.
    assert!(sp::get_region("io.load").is_none());
    sp::finalize().unwrap();
    assert!(!run.is_paused());
    assert!(matches!(sp::pause(), Err(sp::Error::NotActive)));
}

#[test]
fn the_envelope_is_recorded_by_session_and_on_request() {
    let _serial = serial();
    let names = |results: sp::Results| results.profile().unwrap().region_names.clone();
    sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    sp::region("work").run(|| ());
    assert_eq!(names(sp::finalize().unwrap()), ["work"]);
    sp::setup(
        Options::new()
            .in_memory()
            .verbose(false)
            .session_region(true),
    )
    .unwrap();
    sp::region("work").run(|| ());
    // Pausing is allowed with only the envelope open.
    sp::pause().unwrap();
    sp::resume();
    assert_eq!(
        names(sp::finalize().unwrap()),
        ["scope_profiler.session", "work"]
    );
    let session = sp::session(Options::new().in_memory().verbose(false)).unwrap();
    sp::region("work").run(|| ());
    let results = session.finalize().unwrap();
    let profile = results.profile().unwrap();
    assert_eq!(profile.region_names, ["scope_profiler.session", "work"]);
    let envelope = &profile.rows[0];
    let work = &profile.rows[1];
    assert!(envelope.stats.total >= work.stats.total);
    assert_eq!(
        profile.events.parent_ids[work.events()][0],
        profile.events.call_ids[envelope.events()][0]
    );
}

#[test]
fn metadata_of_any_size_and_text_round_trips() {
    let _serial = serial();
    let dir = temp_dir("parity-metadata");
    let path = dir.join("meta.h5");
    sp::setup(Options::new().file_path(&path).verbose(false)).unwrap();
    let big = "x".repeat(200_000);
    let odd = "quote \" backslash \\ newline \n tab \t nul-ish \u{1} emoji 🦀 rtl \u{202e}";
    {
        let _outer = sp::call_metadata([("outer", Value::from(true)), ("k", Value::from(1))]);
        let _inner = sp::call_metadata([
            ("k", Value::from(2.5)),
            ("big", Value::from(big.as_str())),
            ("odd", Value::from(odd)),
        ]);
        sp::region("m").run(|| ());
    }
    sp::region("m").run(|| ());
    sp::finalize().unwrap();
    let profile = sp::read_profile(&path).unwrap();
    let meta = &profile.rows[0].event_metadata;
    assert_eq!(meta.len(), 2);
    assert_eq!(
        meta[0],
        [
            ("outer".to_owned(), Value::Bool(true)),
            ("k".to_owned(), Value::Float(2.5)),
            ("big".to_owned(), Value::Str(big)),
            ("odd".to_owned(), Value::from(odd)),
        ]
    );
    assert!(meta[1].is_empty());
}

#[test]
fn enable_tags_from_the_environment() {
    // The variable is read by every setup: set it in a child of this test
    // binary that runs only the test below.
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_with_enable_tags_env",
            "--ignored",
            "--test-threads=1",
        ])
        .env("SCOPE_PROFILER_ENABLE_TAGS", " parity-env , other,")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[ignore = "run by enable_tags_from_the_environment, with the variable set"]
fn child_with_enable_tags_env() {
    assert!(
        std::env::var("SCOPE_PROFILER_ENABLE_TAGS").is_ok(),
        "run by the test above"
    );
    let _serial = serial();
    sp::register_opt_in_tag("parity-env");
    sp::register_opt_in_tag("parity-env-off");
    sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    sp::Region::tagged("env.on", &["parity-env"]).run(|| ());
    sp::Region::tagged("env.off", &["parity-env-off"]).run(|| ());
    let results = sp::finalize().unwrap();
    assert_eq!(results.profile().unwrap().region_names, ["env.on"]);
}

fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

#[test]
fn aggregation_keeps_totals_not_calls_and_python_reads_them() {
    let _serial = serial();
    let dir = temp_dir("parity-aggregate");
    let path = dir.join("aggregate.h5");
    sp::setup(
        Options::new()
            .file_path(&path)
            .verbose(false)
            .aggregation(true),
    )
    .unwrap();
    // 4 threads x 25k outer calls, each with exactly one inner call.
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for i in 0..25_000u64 {
                    sp::region("outer").run(|| {
                        sp::region("inner").run(|| std::hint::black_box(i));
                    });
                }
            });
        }
    });
    // Memory does not grow with the number of calls.
    let before = rss_bytes();
    for i in 0..2_000_000u64 {
        sp::region("hot").run(|| std::hint::black_box(i));
    }
    let growth = rss_bytes().saturating_sub(before);
    assert!(
        growth < 1 << 20,
        "RSS grew {growth} bytes over 2M aggregated calls"
    );
    assert_eq!(sp::get_region("hot").unwrap().num_calls(), 2_000_000);
    // No calls are kept to attach metadata to.
    sp::region("annotated").run(|| assert!(!sp::Guard::annotate([("k", 1)])));
    let results = sp::finalize().unwrap();
    // The totals in the program: the statistics (no percentiles in this
    // mode: the durations were not kept).
    let agg = |name: &str| results.statistics_of(name).unwrap().clone();
    let (outer, inner, hot) = (agg("outer"), agg("inner"), agg("hot"));
    assert_eq!(
        (outer.num_calls(), inner.num_calls(), hot.num_calls()),
        (100_000, 100_000, 2_000_000)
    );
    assert!(!hot.is_exact());
    // Own time of outer: its total minus its one child's, to the rounding
    // of two tick-to-ns conversions.
    assert!(
        (outer.exclusive() - (outer.total() - inner.total())).abs() <= 2,
        "{outer:?} {inner:?}"
    );
    assert_eq!(inner.exclusive(), inner.total());
    for row in [&outer, &inner, &hot] {
        assert!(
            row.minimum() <= row.total() / row.num_calls() as i64
                && row.total() / row.num_calls() as i64 <= row.maximum(),
            "{row:?}"
        );
    }
    // The file: the aggregate layout, read back equal by our reader ...
    let reader = scope_profiler_reader::ProfileReader::open(&path).unwrap();
    assert_eq!(
        reader.region_names(),
        ["outer", "inner", "hot", "annotated"]
    );
    // The file's rows are the statistics the program got, region by region.
    assert_eq!(reader.aggregates().len(), results.statistics().len());
    for row in reader.aggregates() {
        let name = &reader.region_names()[row.region_id as usize];
        let stats = results.statistics_of(name).unwrap();
        assert_eq!(
            (
                row.num_calls,
                row.total,
                row.exclusive,
                row.minimum,
                row.maximum
            ),
            (
                stats.num_calls(),
                stats.total(),
                stats.exclusive(),
                stats.minimum(),
                stats.maximum()
            ),
            "{name}"
        );
    }
    // ... and by the Python package's reader, inspect and diff.
    let python = match reader_python(env!("CARGO_TARGET_TMPDIR"), true) {
        Ok(p) => p,
        Err(why) => return prerequisite_missing(&format!("aggregate interop: {why}")),
    };
    let script = r#"
import sys, subprocess, scope_profiler
r = scope_profiler.read_h5(sys.argv[1])
for name in r.region_names:
    reg = r[name].regions[0]
    print(name, reg.num_calls, reg.total_duration_ns if hasattr(reg, "total_duration_ns") else int(round(reg.total_duration * 1e9)), int(round(reg.min_duration * 1e9)), int(round(reg.max_duration * 1e9)))
for cmd in (["inspect", sys.argv[1]], ["diff", sys.argv[1], sys.argv[1]]):
    out = subprocess.run([sys.executable, "-m", "scope_profiler", *cmd], capture_output=True, text=True)
    assert out.returncode == 0, (cmd, out.stderr)
    assert "hot" in out.stdout, out.stdout
print("ok")
"#;
    let out = Command::new(python)
        .args(["-c", script])
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.last(), Some(&"ok"));
    assert_eq!(lines.len(), 5, "{stdout}");
    for (line, row) in lines.iter().zip([&outer, &inner, &hot]) {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f[1].parse::<u64>().unwrap(), row.num_calls(), "{line}");
        // Python reads seconds as floats: equal to the ns within rounding.
        for (got, want) in [
            (f[2], row.total()),
            (f[3], row.minimum()),
            (f[4], row.maximum()),
        ] {
            let got: i64 = got.parse().unwrap();
            assert!(
                (got - want).abs() <= (want / 1_000_000_000).max(1),
                "{line}: {got} vs {want}"
            );
        }
    }
}
