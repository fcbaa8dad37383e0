//! `scope-prof report`: one self-contained HTML page per run, or per
//! comparison of several runs.
//!
//! The data are gathered here (`run`: header, call tree, histograms,
//! sources; `timeline`: the calls reduced to a bounded pyramid of cells;
//! `compare`: the table of what changed and the scaling key), numbers in
//! columns (`encode`: base64 typed arrays for the large ones), and written
//! into one page with the vendored Apache ECharts and the page's script
//! (`assets/`), all inline: the page needs no network.

mod compare;
mod encode;
mod run;
mod timeline;

// The durations' histograms, for `scope-prof tui` too.
#[cfg(test)]
pub(crate) use timeline::bin;
pub(crate) use timeline::{BINS_PER_OCTAVE, bin_start, region_histograms};

use std::io::Write;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::Failure;

/// Apache ECharts 6.1.0 (`dist/echarts.min.js` from the npm package).
const ECHARTS: &str = include_str!("../../assets/echarts/echarts.min.js");
/// The page's own script: tables, and the glue that feeds ECharts.
const APP_JS: &str = include_str!("../../assets/report.js");
const APP_CSS: &str = include_str!("../../assets/report.css");

/// `scope-prof report` arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct ReportArgs {
    /// Profile files (HDF5, schema 2 or 3, aggregate files; JSON profiles).
    /// Several files give a comparison.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Output HTML file.
    #[arg(short, long, value_name = "OUT", default_value = "report.html")]
    pub output: PathBuf,
    /// With several files: the metadata key the scaling charts are drawn
    /// against (`threads`: the thread count; `mpi_size`: the ranks). By
    /// default the first of mpi_size, omp_num_threads, threads, num_nodes,
    /// label that differs between the runs.
    #[arg(long, value_name = "KEY")]
    pub scaling_key: Option<String>,
    /// Page title (default: the label of the run, or "Comparison").
    #[arg(long)]
    pub title: Option<String>,
}

/// JSON safe inside a `<script>` element: every `<` (only ever inside
/// strings) as `\u003c`.
fn script_json(value: &Value) -> Result<String, Failure> {
    Ok(serde_json::to_string(value)?.replace('<', "\\u003c"))
}

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Writes the report of `args.files` to `args.output`.
pub(crate) fn report(args: &ReportArgs) -> Result<(), Failure> {
    let mut files = Vec::new();
    for path in &args.files {
        files.push((path.clone(), crate::open(path)?));
    }
    let (data, title) = if files.len() == 1 {
        let (path, reader) = &files[0];
        for note in crate::stats::recording_notes(reader) {
            eprintln!("scope-prof: {}: note: {note}", path.display());
        }
        let run = run::run_json(path, reader, true)?;
        let title = run["label"].as_str().unwrap_or("").to_owned();
        (json!({ "kind": "run", "run": run }), title)
    } else {
        let cmp = compare::compare_json(&files, args.scaling_key.as_deref())?;
        (
            json!({ "kind": "compare", "compare": cmp }),
            "Comparison".to_owned(),
        )
    };
    let title = args.title.clone().unwrap_or(title);
    let data = script_json(&json!({
        "title": title,
        "generator": format!("scope-prof {}", env!("CARGO_PKG_VERSION")),
        "data": data,
    }))?;
    let named = |e: std::io::Error| Failure(format!("cannot write {}: {e}", args.output.display()));
    let file = std::fs::File::create(&args.output).map_err(named)?;
    // At most what the exports of its files may write together.
    let budget = files.iter().fold(0u64, |sum, (_, reader)| {
        sum.saturating_add(reader.output_budget())
    });
    let file = scope_profiler_reader::ProfileReader::limit_output(file, budget);
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{} - scope-prof report</title>\n<style>\n{APP_CSS}</style>\n</head>\n\
         <body data-report=\"loading\">\n<div id=\"app\"><p id=\"loading\">Loading the report…</p></div>\n\
         <script id=\"report-data\" type=\"application/json\">{data}</script>\n\
         <script>\n{ECHARTS}\n</script>\n<script>\n{APP_JS}\n</script>\n</body>\n</html>\n",
        escape_html(&title),
    )
    .map_err(named)?;
    out.flush().map_err(named)?;
    eprintln!("wrote {}", args.output.display());
    Ok(())
}
