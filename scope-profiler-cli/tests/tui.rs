//! `scope-prof tui FILE` in a real terminal: tmux runs it, keys go in with
//! `send-keys`, the screen comes back with `capture-pane`. Each screen is
//! kept under `target/tmp/tui-screens/` to look at. tmux is Debian's
//! `tmux` (scripts/ensure-deps.sh installs it).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use integration_tests::tmux::{self, Tmux, keep};
use integration_tests::{prerequisite_missing, serial, temp_dir};
use scope_profiler::{self as sp, Options};

/// A file with a tree to browse: main > {assemble > {quadrature}, solve >
/// {factor, substitute}}.
fn profile(dir: &Path) -> PathBuf {
    let path = dir.join("tui.h5");
    // One session at a time in this process.
    let _one = serial();
    let run = sp::setup(Options::new().file_path(&path).verbose(false)).unwrap();
    let spin = |us: u64| {
        let t = Instant::now();
        while t.elapsed() < Duration::from_micros(us) {}
    };
    sp::region("main").run(|| {
        for _ in 0..3 {
            sp::region("assemble").run(|| sp::region("quadrature").run(|| spin(300)));
        }
        sp::region("solve").run(|| {
            // 20 ms against assemble's 0.9: solve stays above it by total
            // however long a preemption stretches a spin (wall time) on a
            // loaded machine (1.0 ms against 0.9 flaked in CI: 1.07 ms).
            sp::region("factor").run(|| spin(18_000));
            sp::region("substitute").run(|| spin(2_000));
        });
    });
    run.finalize().unwrap();
    path
}

#[test]
fn without_a_terminal_it_says_so_and_exits_2() {
    let dir = temp_dir("tui-pipe");
    let file = profile(&dir);
    let out = Command::new(env!("CARGO_BIN_EXE_scope-prof"))
        .arg("tui")
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("tui needs a terminal"), "{stderr}");
}

#[test]
fn the_browser_sorts_searches_and_quits_in_a_real_terminal() {
    if !tmux::available() {
        prerequisite_missing("tmux is missing (Debian's tmux)");
        return;
    }
    let dir = temp_dir("tui");
    let file = profile(&dir);
    let screens = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tui-screens");
    let command = format!(
        "{} tui {}",
        env!("CARGO_BIN_EXE_scope-prof"),
        file.display()
    );
    let tmux = Tmux::start("tui", 120, 30, &command);

    // The tree by total: main, then solve (20 ms) above assemble (0.9 ms).
    let first = tmux.wait_for("call tree");
    keep(&screens, "1-start.txt", &first);
    assert!(first.contains("sorted by total"), "{first}");
    assert!(first.contains("▾ main"), "{first}");
    let (solve, assemble) = (
        first.find("solve").unwrap(),
        first.find("assemble").unwrap(),
    );
    assert!(solve < assemble, "solve first by total:\n{first}");
    assert!(
        !first.contains("factor"),
        "solve starts collapsed:\n{first}"
    );

    // `s` three times: by name, assemble above solve.
    tmux.keys(&["s", "s", "s"]);
    let by_name = tmux.wait_for("sorted by name");
    keep(&screens, "2-by-name.txt", &by_name);
    assert!(by_name.find("assemble").unwrap() < by_name.find("solve").unwrap());

    // Search a collapsed region: its path opens, the pane shows it.
    tmux.keys(&["/", "fact", "Enter"]);
    let found = tmux.wait_for("found \"fact\"");
    keep(&screens, "3-search.txt", &found);
    assert!(found.contains("▾ solve"), "{found}");
    let selected: Vec<&str> = found.lines().filter(|l| l.contains("│> ")).collect();
    assert!(
        selected.len() == 1 && selected[0].contains("factor"),
        "the selected row is factor's:\n{found}"
    );
    // The pane's first line is the region's name, right of the tree's border.
    assert!(found.contains("over all its call paths"), "{found}");
    assert_eq!(
        found.lines().filter(|l| l.contains("│factor")).count(),
        1,
        "the region pane names factor:\n{found}"
    );
    assert!(found.contains("calls  1"), "{found}");
    assert!(found.contains("p50"), "{found}");

    // Collapse all, then quit: the program ends.
    tmux.keys(&["c"]);
    let collapsed = tmux.wait_for("▸ main");
    keep(&screens, "4-collapsed.txt", &collapsed);
    tmux.keys(&["q"]);
    let start = Instant::now();
    while tmux.alive() {
        assert!(start.elapsed() < Duration::from_secs(10), "q did not quit");
        std::thread::sleep(Duration::from_millis(50));
    }
}
