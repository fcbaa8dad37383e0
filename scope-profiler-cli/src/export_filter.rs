//! The filters of `scope-prof export`: `--region`, `--lane`, `--from`,
//! `--to`, `--max-events`, turned into the library's `export::Filter`,
//! and the note that says what `--max-events` cut.

use scope_profiler_reader::export::{Exported, Filter};

/// The export filters as given on the command line.
#[derive(clap::Args, Debug, Default)]
pub(crate) struct FilterArgs {
    /// Only the calls of the regions whose name matches this glob (`*`,
    /// `?`; as `inspect --region`) and everything they call (their whole
    /// subtrees; their callers are left out). Repeatable. With
    /// `--samples`: the samples taken inside those regions, their stacks
    /// starting at the outermost region that matches.
    #[arg(long, value_name = "GLOB")]
    region: Vec<String>,
    /// Only the calls of this lane, as `inspect --threads` names it:
    /// `N` or `thread N` (thread index), `thread NAME` (thread name),
    /// `task N` (task index). Repeatable.
    #[arg(long, value_name = "LANE", value_parser = parse_lane)]
    lane: Vec<String>,
    /// Only the calls that overlap the window starting TIME after the
    /// session's start (ms, or with a unit: 250us, 1.5s, 20ms, 300ns).
    /// Calls are kept whole, not cut at the window's edges.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    from: Option<i64>,
    /// Only the calls that overlap the window ending TIME after the
    /// session's start (as --from).
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    to: Option<i64>,
    /// Write at most N calls (events), the first in the order written
    /// (lane by lane, by start); a note on stderr says how many were cut.
    #[arg(long, value_name = "N")]
    max_events: Option<u64>,
}

impl FilterArgs {
    /// Whether a filter other than `--region` is given (the sample files
    /// keep no thread or time per sample, so only `--region` applies to
    /// `--samples`).
    pub(crate) fn more_than_regions(&self) -> bool {
        !self.lane.is_empty()
            || self.from.is_some()
            || self.to.is_some()
            || self.max_events.is_some()
    }

    /// The library's filter for a file with regions `names`: each
    /// `--region` glob becomes the names it matches (none is an error).
    pub(crate) fn filter(&self, names: &[String]) -> Result<Filter, String> {
        let mut f = Filter::new().window(self.from, self.to);
        for pattern in &self.region {
            let mut found = false;
            for name in names.iter().filter(|n| crate::stats::glob(pattern, n)) {
                if !f.regions.contains(name) {
                    f = f.region(name.clone());
                }
                found = true;
            }
            if !found {
                return Err(format!(
                    "--region {pattern:?}: no region of the file matches"
                ));
            }
        }
        for l in &self.lane {
            f = f.lane(l).map_err(|e| format!("--lane {l:?}: {e}"))?;
        }
        if let Some(n) = self.max_events {
            f = f.max_events(n);
        }
        Ok(f)
    }
}

/// `s` if the library's filter takes it as a lane (so that clap refuses a
/// malformed `--lane` before anything is read).
fn parse_lane(s: &str) -> Result<String, String> {
    Filter::new()
        .lane(s)
        .map(|_| s.to_owned())
        .map_err(|e| e.to_string())
}

/// A time after the session's start, in ns: a number of milliseconds, or
/// a number with a unit (`ns`, `us`, `ms`, `s`).
pub(crate) fn parse_time(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let (number, scale) = [
        ("ns", 1.0),
        ("us", 1e3),
        ("µs", 1e3),
        ("ms", 1e6),
        ("s", 1e9),
    ]
    .iter()
    .find_map(|(unit, scale)| t.strip_suffix(unit).map(|n| (n.trim(), *scale)))
    .unwrap_or((t, 1e6));
    let v: f64 = number.parse().map_err(|_| {
        format!("{s:?}: a time is a number of ms, or a number with ns, us, ms or s")
    })?;
    let ns = v * scale;
    if !ns.is_finite() || ns < 0.0 || ns > i64::MAX as f64 {
        return Err(format!("{s:?}: a time from 0 after the session's start"));
    }
    Ok(ns.round() as i64)
}

/// The note for stderr when `--max-events` cut calls.
pub(crate) fn cut_note(done: &Exported, max: Option<u64>) -> Option<String> {
    (done.left_out > 0).then(|| {
        format!(
            "--max-events {}: wrote {} calls and left out the next {} that the other filters keep",
            max.unwrap_or(done.events),
            done.events,
            done.left_out
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_region_glob_becomes_the_names_it_matches() {
        let names: Vec<String> = ["app::solve", "app::load", "lib::solve"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let args = FilterArgs {
            region: vec!["*::solve".into(), "app::solve".into()],
            ..FilterArgs::default()
        };
        assert_eq!(
            args.filter(&names).unwrap().regions,
            ["app::solve", "lib::solve"]
        );
        let none = FilterArgs {
            region: vec!["nope*".into()],
            ..FilterArgs::default()
        };
        assert!(none.filter(&names).unwrap_err().contains("nope*"));
    }

    #[test]
    fn times_are_ms_unless_they_say_their_unit() {
        assert_eq!(parse_time("20"), Ok(20_000_000));
        assert_eq!(parse_time("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_time("250us"), Ok(250_000));
        assert_eq!(parse_time("300ns"), Ok(300));
        assert_eq!(parse_time("2 ms"), Ok(2_000_000));
        assert!(parse_time("-1").is_err());
        assert!(parse_time("soon").is_err());
    }

    #[test]
    fn the_note_says_what_was_cut_and_nothing_when_nothing_was() {
        let mut done = Exported::default();
        assert_eq!(cut_note(&done, Some(5)), None);
        done.events = 5;
        done.left_out = 7;
        let note = cut_note(&done, Some(5)).unwrap();
        assert!(
            note.contains("wrote 5 calls") && note.contains("next 7"),
            "{note}"
        );
    }
}
