//! Issue 37, item 6: the text views read at scale. `inspect` and `diff`
//! fit `--width` (names cut in the middle, their tail kept), their
//! numeric columns right-aligned and two spaces apart; the `%` column is
//! one quantity in `inspect` and `report` (the share of the session's wall
//! time on the lanes a path ran on, at most 100); `inspect --threads`
//! groups thousands of task lanes by task name.

use std::path::Path;
use std::process::Command;

use integration_tests::temp_dir;
use scope_profiler::{self as sp, Compression, Profile, RegionRow, SummaryStatistics, TaskInfo};
use serde_json::Value;

fn ok(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_scope-prof"))
        .args(args)
        // The width of the tests' own terminal is no input of theirs.
        .env_remove("COLUMNS")
        .output()
        .expect("run scope-prof");
    assert!(
        out.status.success(),
        "scope-prof {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// A call: `(region, lane task or -1, start, duration, parent call or -1)`.
type Call = (u32, i64, i64, i64, i64);

/// `calls` as a file: one event per call, task lanes in the task table.
fn write(path: &Path, names: &[&str], calls: &[Call], tasks: &[&str]) {
    let mut profile = Profile::default();
    profile.region_names = names.iter().map(|n| (*n).to_owned()).collect();
    for (id, _) in names.iter().enumerate() {
        let mine: Vec<(usize, &Call)> = calls
            .iter()
            .enumerate()
            .filter(|(_, c)| c.0 == id as u32)
            .collect();
        let mut row = RegionRow::default();
        row.region_id = id as u32;
        row.event_offset = profile.events.len() as u64;
        row.event_count = mine.len() as u64;
        row.exclusive = mine.iter().map(|(_, c)| c.3).sum();
        let spans: Vec<(i64, i64)> = mine.iter().map(|(_, c)| (c.2, c.3)).collect();
        row.stats = SummaryStatistics::from_calls(&spans);
        let e = &mut profile.events;
        let task_ids = e.task_ids.get_or_insert_with(Vec::new);
        for (i, c) in &mine {
            task_ids.push(c.1);
            e.start_ns.push(c.2);
            e.durations.push(c.3);
            e.call_ids.push(*i as i64);
            e.parent_ids.push(c.4);
            e.thread_ids.push(0);
        }
        profile.rows.push(row);
    }
    for (i, name) in tasks.iter().enumerate() {
        let mut t = TaskInfo::default();
        t.index = i as i64;
        t.name = (*name).to_owned();
        t.kind = "future".into();
        profile.tasks.push(t);
    }
    sp::write_profile(&profile, path, Compression::None).expect("write");
}

/// The cells of a table row: runs of text two or more spaces apart.
fn cells(line: &str) -> Vec<&str> {
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

/// Where each cell of `line` ends (its last character's column + 1).
fn right_edges(line: &str) -> Vec<usize> {
    let chars: Vec<char> = line.chars().collect();
    let mut edges = Vec::new();
    for i in 0..chars.len() {
        let next_blank = chars.get(i + 1).is_none_or(|c| *c == ' ')
            && chars.get(i + 2).is_none_or(|c| *c == ' ');
        if chars[i] != ' ' && next_blank {
            edges.push(i + 1);
        }
    }
    edges
}

#[test]
fn inspect_fits_the_width_and_keeps_the_tails_of_long_names() {
    let dir = temp_dir("layout-inspect");
    let path = dir.join("deep.h5");
    // Six nested calls with long qualified names, 17 million ns each level.
    let names: Vec<String> = (0..6)
        .map(|i| format!("cratename_with_a_long_name::module_{i}::submodule::function_{i}"))
        .collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let calls: Vec<_> = (0..6)
        .map(|i| (i as u32, -1, i * 10, 170_873_250 - i * 20, i - 1))
        .collect();
    write(&path, &refs, &calls, &[]);
    let f = path.to_str().unwrap();
    // The numbers take 54 columns here: the name column has 26 at 80.
    for width in [80usize, 100, 140] {
        let w = width.to_string();
        let text = ok(&["inspect", f, "--width", &w]);
        let table: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("region"))
            .take_while(|l| !l.is_empty())
            .collect();
        assert_eq!(table.len(), 7, "{text}");
        let header = right_edges(table[0]);
        assert_eq!(header.len(), 7, "region and 6 columns: {}", table[0]);
        for (depth, row) in table[1..].iter().enumerate() {
            let row_cells = cells(row);
            // The name: whole, or its head and tail around an ellipsis.
            let name = row_cells[0];
            let tail = format!("function_{depth}");
            assert!(
                name.ends_with(&tail),
                "width {width}: {name:?} keeps {tail}"
            );
            if width >= 140 {
                assert_eq!(name, names[depth], "room for the whole name");
            } else {
                assert!(name.contains('…'), "width {width}: {name:?} is cut");
            }
            // Numbers right-aligned under their headers, 2+ spaces apart.
            let edges = right_edges(row);
            assert_eq!(
                edges[1..],
                header[1..],
                "width {width}:\n{}\n{row}",
                table[0]
            );
            assert!(row.chars().count() <= width, "width {width}: {row}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn diff_columns_are_right_aligned_and_apart() {
    let dir = temp_dir("layout-diff");
    let (base, new) = (dir.join("base.h5"), dir.join("new.h5"));
    let long = "cratename_with_a_long_name::codec::framed::FramedWrite::poll_flush";
    let names = [long, "solve"];
    // 17,087,325 calls would be a large file: the call count is the row's.
    write(
        &base,
        &names,
        &[(0, -1, 0, 1_000, -1), (1, -1, 2_000, 500, -1)],
        &[],
    );
    write(
        &new,
        &names,
        &[(0, -1, 0, 1_500, -1), (1, -1, 2_000, 400, -1)],
        &[],
    );
    let (b, n) = (base.to_str().unwrap(), new.to_str().unwrap());
    for width in [70usize, 140] {
        let text = ok(&["diff", b, n, "--width", &width.to_string()]);
        let table: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(table.len(), 3, "{text}");
        let header = right_edges(table[0]);
        for row in &table[1..] {
            assert!(row.contains("1 -> 1"), "calls as `base -> new`: {row}");
            assert_eq!(right_edges(row)[1..], header[1..], "{}\n{row}", table[0]);
        }
        let first = cells(table[1])[0];
        assert!(first.ends_with("poll_flush"), "{first}");
        assert_eq!(first.contains('…'), width < 100, "width {width}: {first}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A session of 1 s: `main_work` on the main thread for 450 ms, and
/// `awaited` on 3000 task lanes (task `fetch`) and 1000 (task `store`) at
/// once for the whole second.
fn many_lanes(path: &Path) {
    let mut calls: Vec<Call> = vec![(0, -1, 0, 450_000_000, -1)];
    let mut tasks = Vec::new();
    for t in 0..4000i64 {
        let name = if t < 3000 { "fetch" } else { "store" };
        tasks.push(name);
        calls.push((1, t, 0, 1_000_000_000, -1));
    }
    write(path, &["main_work", "awaited"], &calls, &tasks);
}

#[test]
fn percent_is_the_share_of_the_lanes_a_path_ran_on() {
    let dir = temp_dir("layout-percent");
    let path = dir.join("lanes.h5");
    many_lanes(&path);
    let f = path.to_str().unwrap();
    let text = ok(&["inspect", f, "--width", "100"]);
    let pct = |region: &str| -> f64 {
        let line = text
            .lines()
            .find(|l| l.starts_with(region))
            .unwrap_or_else(|| panic!("{region} in {text}"));
        cells(line).last().unwrap().parse().unwrap()
    };
    // 4000 s of calls over a 1 s session would read 400000%.
    assert_eq!(pct("awaited"), 100.0, "{text}");
    assert_eq!(pct("main_work"), 45.0, "{text}");
    assert!(
        text.contains("total / (session x lanes)"),
        "the legend: {text}"
    );
    // The report's tree carries the lanes its % divides by, the same figures.
    let page = dir.join("lanes.html");
    let out = Command::new(env!("CARGO_BIN_EXE_scope-prof"))
        .args(["report", f, "-o", page.to_str().unwrap()])
        .output()
        .expect("report");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    let at = html
        .find("id=\"report-data\" type=\"application/json\">")
        .unwrap();
    let json = &html[at..];
    let json = &json[json.find('>').unwrap() + 1..json.find("</script>").unwrap()];
    let data: Value = serde_json::from_str(json).expect("the page's data");
    let run = &data["data"]["run"];
    let session = run["session_ns"].as_f64().unwrap();
    let tree = &run["tree"];
    let names = run["names"].as_array().unwrap();
    let mut seen = 0;
    for i in 0..tree["total"].as_array().unwrap().len() {
        let name = names[tree["region"][i].as_u64().unwrap() as usize]
            .as_str()
            .unwrap();
        let share = tree["total"][i].as_f64().unwrap()
            / (session * tree["lanes"][i].as_f64().unwrap())
            * 100.0;
        let want = match name {
            "awaited" => 100.0,
            "main_work" => 45.0,
            other => panic!("{other}"),
        };
        assert!((share - want).abs() < 1e-9, "{name}: {share}");
        seen += 1;
    }
    assert_eq!(seen, 2);
    let js = html.find("function share(i)").map(|i| &html[i..i + 120]);
    assert!(
        js.is_some_and(|s| s.contains("t.lanes")),
        "the page divides by the lanes: {js:?}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn threads_groups_thousands_of_task_lanes_by_task_name() {
    let dir = temp_dir("layout-threads");
    let path = dir.join("lanes.h5");
    many_lanes(&path);
    let f = path.to_str().unwrap();
    let text = ok(&["inspect", f, "--threads"]);
    assert!(text.lines().count() < 30, "{text}");
    for (task, lanes) in [("fetch", 3000), ("store", 1000)] {
        let label = format!("== rank 0 - tasks {task} ({lanes} lanes)");
        let at = text
            .find(&label)
            .unwrap_or_else(|| panic!("{label} in {text}"));
        let row = text[at..]
            .lines()
            .find(|l| l.starts_with("awaited"))
            .expect("its tree");
        let c = cells(row);
        assert_eq!(c[1], lanes.to_string(), "calls summed: {row}");
        assert_eq!(c[5], "-", "no p95 over several lanes: {row}");
        assert_eq!(c[6], "100.0", "{row}");
    }
    assert!(
        text.contains("== rank 0 - thread 0\n"),
        "the thread lane alone: {text}"
    );
    // The JSON carries the lanes the % divides by.
    let json: Value = serde_json::from_str(&ok(&["inspect", f, "--json"])).expect("json");
    let tree = json["groups"][0]["tree"].as_array().expect("a tree");
    let awaited = tree
        .iter()
        .find(|n| n["name"] == "awaited")
        .expect("awaited");
    assert_eq!(awaited["lanes"], 4000);
    let all = ok(&["inspect", f, "--threads", "--all-lanes"]);
    let groups = all.lines().filter(|l| l.starts_with("== ")).count();
    assert_eq!(groups, 4001, "one per lane");
    std::fs::remove_dir_all(&dir).ok();
}
