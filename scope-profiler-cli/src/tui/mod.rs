//! `scope-prof tui FILE`: a finished profile browsed in the terminal (over
//! ssh too), as the Python package's `scope-profiler tui` browses one: the
//! call tree expanded and collapsed, sorted by total, own, calls or name,
//! searched by name; the selected region's totals over every call path,
//! percentiles and the histogram of its durations.
//!
//! The file is read once before the screen opens (the tree, the regions'
//! totals, one pass over the events for the histograms); `model.rs` holds
//! the state and applies keys, `view.rs` draws it, `regions.rs` holds the
//! regions' figures.

mod model;
mod regions;
mod view;

use std::io::IsTerminal;
use std::path::PathBuf;

use ratatui::crossterm::event::{self, Event, KeyEventKind};
use scope_profiler_reader::export::Grouping;

use crate::{Failure, SortKey};
use model::{Action, Browser};

#[derive(clap::Args, Debug)]
pub(crate) struct TuiArgs {
    /// The profile file (HDF5 or JSON).
    file: PathBuf,
    /// The first order of sibling regions (`s` changes it).
    #[arg(long, value_enum, default_value = "total")]
    sort: SortKey,
    /// One tree per thread and per task name (as `inspect --threads`).
    #[arg(long)]
    threads: bool,
    /// One tree per MPI rank.
    #[arg(long)]
    ranks: bool,
}

/// What the browser needs of a file, read before the screen opens.
struct Loaded {
    browser: Browser,
    regions: regions::Regions,
    title: String,
}

fn load(args: &TuiArgs) -> Result<Loaded, Failure> {
    let reader = crate::open(&args.file)?;
    let grouping = match (args.threads, args.ranks) {
        (true, _) => Grouping::Lane,
        (_, true) => Grouping::Rank,
        _ => Grouping::All,
    };
    let tree = crate::stats::file_tree_with(&reader, grouping, true)?;
    let stats = crate::stats::region_stats(&reader)?;
    let histograms = crate::report::region_histograms(&reader)?;
    Ok(Loaded {
        browser: Browser::new(&tree, args.sort),
        regions: regions::regions(reader.region_names(), stats, &tree, histograms),
        title: args.file.display().to_string(),
    })
}

/// Runs the browser until `q`.
pub(crate) fn tui(args: &TuiArgs) -> Result<(), Failure> {
    if !std::io::stdout().is_terminal() {
        return Err(Failure(
            "tui needs a terminal (for a table on a pipe: scope-prof inspect)".to_owned(),
        ));
    }
    let Loaded {
        mut browser,
        regions,
        title,
    } = load(args)?;
    // Restores the terminal on every way out, a panic included.
    let mut terminal = ratatui::init();
    let page = view::Page {
        title: &title,
        regions: &regions,
    };
    let result = (|| -> Result<(), Failure> {
        loop {
            terminal.draw(|frame| view::draw(frame, &mut browser, &page))?;
            if let Event::Key(key) = event::read()?
                && key.kind == KeyEventKind::Press
                && browser.key(key) == Action::Quit
            {
                return Ok(());
            }
        }
    })();
    ratatui::restore();
    result
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::{KeyCode, KeyEvent};

    use super::*;
    use crate::stats::{FileTree, Node, Stat};

    fn screen(terminal: &Terminal<TestBackend>) -> String {
        let buffer = terminal.backend().buffer();
        let mut out = String::new();
        for y in 0..buffer.area.height {
            for x in 0..buffer.area.width {
                out.push_str(buffer[(x, y)].symbol());
            }
            out.push('\n');
        }
        out
    }

    #[test]
    fn the_screen_shows_the_tree_the_region_and_follows_the_keys() {
        let leaf = |name: &str, total| Node {
            name: name.to_owned(),
            stat: Stat {
                calls: 10,
                total,
                own: total,
                min: total / 20,
                max: total / 5,
                mean: total as f64 / 10.0,
                ..Stat::default()
            },
            ..Node::default()
        };
        let mut main = leaf("main", 1_000_000);
        // A hostile name: an escape sequence that would clear the screen.
        main.children = vec![
            leaf("assemble", 600_000),
            leaf("solve", 300_000),
            leaf("evil\u{1b}[2J", 1_000),
        ];
        main.stat.own = 100_000;
        let file = FileTree {
            groups: vec![("all".to_owned(), vec![main])],
            session_ns: 1_000_000,
        };
        let mut histogram = vec![0; 192];
        histogram[crate::report::bin(60_000)] = 10;
        let mut regions = regions::Regions::new();
        regions.insert(
            "assemble".to_owned(),
            regions::Region {
                stat: file.groups[0].1[0].children[0].stat.clone(),
                histogram,
            },
        );
        let mut browser = Browser::new(&file, SortKey::Total);
        let page = view::Page {
            title: "run.h5",
            regions: &regions,
        };
        let mut terminal = Terminal::new(TestBackend::new(110, 24)).unwrap();
        terminal
            .draw(|f| view::draw(f, &mut browser, &page))
            .unwrap();
        let first = screen(&terminal);
        assert!(
            first.contains("run.h5") && first.contains("sorted by total"),
            "{first}"
        );
        let assemble = first.find("assemble").unwrap();
        assert!(assemble < first.find("solve").unwrap(), "{first}");
        assert!(first.contains("▾ main"), "{first}");
        assert!(first.contains("evil\\u{1b}[2J"), "shown escaped: {first}");
        assert!(!first.contains('\u{1b}'), "no escape reaches the terminal");

        // Down to `assemble`: the right pane shows its figures.
        browser.key(KeyEvent::from(KeyCode::Down));
        terminal
            .draw(|f| view::draw(f, &mut browser, &page))
            .unwrap();
        let second = screen(&terminal);
        assert!(second.contains("calls  10"), "{second}");
        assert!(second.contains("p50"), "{second}");
        assert!(second.contains('█'), "the histogram: {second}");

        // `s` three times: by own, by calls, then by name.
        for _ in 0..3 {
            browser.key(KeyEvent::from(KeyCode::Char('s')));
        }
        terminal
            .draw(|f| view::draw(f, &mut browser, &page))
            .unwrap();
        assert!(screen(&terminal).contains("sorted by name"));
    }
}
