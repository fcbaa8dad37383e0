//! Strings and output bounded (issue 33): a good profile whose region
//! names are 4 MiB each (its Chrome trace was 62 GB: every event repeats
//! its name) is refused on read; one at the limit is exported within the
//! output budget. `hostile.rs` reads corrupt files.

use std::process::Command;

use integration_tests::temp_dir;
use scope_profiler::{self as sp, Compression, Profile, RegionRow};
use scope_profiler_reader::ProfileReader;

/// Three regions of 40 calls each, the second and third nested in the
/// first, on one thread.
fn three_regions() -> Profile {
    let mut p = Profile::default();
    p.region_names = vec!["a".into(), "b".into(), "c".into()];
    for region in 0..3u32 {
        let mut row = RegionRow::default();
        row.region_id = region;
        row.event_offset = p.events.start_ns.len() as u64;
        row.event_count = 40;
        p.rows.push(row);
        for i in 0..40i64 {
            let id = p.events.start_ns.len() as i64;
            p.events.start_ns.push(1_000 * i + i64::from(region));
            p.events.durations.push(if region == 0 { 900 } else { 100 });
            p.events.call_ids.push(id);
            p.events.parent_ids.push(if region == 0 { -1 } else { i });
            p.events.thread_ids.push(0);
        }
    }
    p.threads.push(sp::ThreadInfo::default());
    p
}

/// A writer that counts the bytes written to it and keeps none.
#[derive(Default)]
struct Counted(u64);

impl std::io::Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Our profile with every region named by `len` bytes, and `calls` more
/// calls of the first region (one row).
fn long_named(len: usize, calls: i64) -> Profile {
    let mut p = three_regions();
    for (i, name) in p.region_names.iter_mut().enumerate() {
        *name = format!("{i}{}", "x".repeat(len - 1));
    }
    let mut row = RegionRow::default();
    row.event_offset = p.events.start_ns.len() as u64;
    row.event_count = calls as u64;
    p.rows.push(row);
    for i in 0..calls {
        p.events.start_ns.push(1_000_000 + 10 * i);
        p.events.durations.push(5);
        p.events.call_ids.push(1_000_000 + i);
        p.events.parent_ids.push(-1);
        p.events.thread_ids.push(0);
    }
    p
}

/// Issue 33: a good profile whose region names are 4 MiB each (its Chrome
/// trace was 62 GB) is refused on read, naming the dataset and the limit;
/// one whose names are at the limit (64 KiB) reads, and its exports stay
/// within their budget: the Chrome trace, which repeats a name per call,
/// stops at it with an error saying so, in the library and in `scope-prof`.
#[test]
fn huge_names_are_refused_and_exports_stay_within_their_budget() {
    let dir = temp_dir("hostile-names");
    let limit = scope_profiler_reader::limits::NAME;
    assert_eq!(limit, 64 << 10);
    // Refused: names of 4 MiB (and of one byte past the limit).
    for len in [4 << 20, limit + 1] {
        let path = dir.join(format!("names-{len}.h5"));
        sp::write_profile(&long_named(len, 10), &path, Compression::Gzip(4)).expect("write");
        for e in [
            sp::read_profile(&path).unwrap_err().to_string(),
            ProfileReader::open(&path).unwrap_err().to_string(),
        ] {
            assert!(
                e.contains("region_table/names: string 0 is")
                    && e.contains(&format!("past the limit of {limit} bytes")),
                "{len}: {e}"
            );
        }
        let out = Command::new(env!("CARGO_BIN_EXE_scope-prof"))
            .args(["export", "chrome-trace", "-o", "-"])
            .arg(&path)
            .stdout(std::process::Stdio::null())
            .output()
            .expect("run scope-prof");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("past the limit of 65536 bytes"), "{stderr}");
    }
    // At the limit: read, and exported within the budget.
    let path = dir.join("names-at-limit.h5");
    let calls = 6000;
    sp::write_profile(&long_named(limit, calls), &path, Compression::Gzip(4)).expect("write");
    let reader = ProfileReader::open(&path).expect("names at the limit read");
    assert_eq!(reader.region_names()[0].len(), limit);
    let budget = reader.output_budget();
    assert_eq!(budget, reader.input_bytes() * 64 + (256 << 20));
    // The trace would repeat a 64 KiB name for each of 6120 calls (383 MiB).
    let trace_size = (calls as u64 + 120) * limit as u64;
    assert!(trace_size > budget, "{trace_size} <= {budget}");
    let mut trace = Counted::default();
    let e = reader.chrome_trace(&mut trace).unwrap_err();
    assert!(matches!(e, sp::Error::Usage(_)), "{e:?}");
    assert!(e.to_string().contains("output budget"), "{e}");
    assert!(
        trace.0 <= budget && trace.0 > budget / 2,
        "{} of {budget}",
        trace.0
    );
    // The others name a region once per call path: well within it.
    let mut folded = Counted::default();
    reader.folded(&mut folded).expect("folded");
    let mut speedscope = Counted::default();
    reader.speedscope(&mut speedscope).expect("speedscope");
    assert!(folded.0 > limit as u64 && folded.0 <= budget);
    assert!(speedscope.0 > limit as u64 && speedscope.0 <= budget);
    // Through scope-prof: the trace stops at the budget, the JSON
    // statistics are written.
    let out = Command::new(env!("CARGO_BIN_EXE_scope-prof"))
        .args(["export", "chrome-trace", "-o", "-"])
        .arg(&path)
        .stdout(std::process::Stdio::null())
        .output()
        .expect("run scope-prof");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!("output budget of {budget} bytes")),
        "{stderr}"
    );
    let json = dir.join("stats.json");
    let out = Command::new(env!("CARGO_BIN_EXE_scope-prof"))
        .args(["export", "json", "-o"])
        .arg(&json)
        .arg(&path)
        .output()
        .expect("run scope-prof");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::metadata(&json).expect("the statistics").len();
    assert!(written > limit as u64 && written <= budget, "{written}");
    // The budget itself: the write past it fails, and says why.
    let mut sink = Vec::new();
    let mut small = ProfileReader::limit_output(&mut sink, 10);
    use std::io::Write;
    small.write_all(b"0123456789").expect("within");
    let e = small.write_all(b"!").unwrap_err();
    assert!(e.to_string().contains("output budget of 10 bytes"), "{e}");
    drop(small);
    assert_eq!(sink.len(), 10);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A region name holding a terminal escape sequence (one that clears the
/// screen, one that sets the window title) reaches the terminal escaped in
/// every text output: `inspect`'s tree and counters, `diff`, `check`,
/// markdown; JSON escapes it as JSON does.
#[test]
fn escape_sequences_in_names_never_reach_the_terminal() {
    let dir = temp_dir("hostile-escapes");
    let mut p = three_regions();
    p.region_names[1] = "evil\u{1b}[2J".into();
    p.region_names[2] = "title\u{1b}]0;pwned\u{7}".into();
    let path = dir.join("escapes.h5");
    sp::write_profile(&p, &path, Compression::None).unwrap();
    let file = path.to_str().unwrap();
    for args in [
        vec!["inspect", file],
        vec!["inspect", file, "--threads"],
        vec!["diff", file, file],
        vec!["diff", file, file, "--format", "markdown"],
        vec!["check", file, file],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_scope-prof"))
            .args(&args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            !out.stdout.contains(&0x1b) && !out.stderr.contains(&0x1b),
            "{args:?}: an escape reached the terminal:\n{text}"
        );
        assert!(
            text.contains("evil\\u{1b}[2J"),
            "{args:?}: shown escaped:\n{text}"
        );
    }
}
