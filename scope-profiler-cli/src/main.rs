//! `scope-prof`: look at scope-profiler HDF5 files and JSON profiles from
//! the command line.
//!
//! Commands: `inspect` (the call tree), `export` (Chrome trace, speedscope,
//! folded stacks, flamegraph SVG, JSON statistics), `diff` and `check` (a
//! CI regression budget; text, markdown or JSON), `report` (one HTML page),
//! `merge` (profiles of one process), `tui` (a profile browsed in the terminal). Exit codes: 0 success, 1 a `check` regression,
//! 2 an unreadable input or any other error.

#![forbid(unsafe_code)]

mod export_filter;
mod isolate;
mod live;
mod markdown;
mod merge;
mod report;
mod samples;
mod stats;
mod text;
mod tui;
mod units;
mod width;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use scope_profiler_reader::ProfileReader;
use scope_profiler_reader::export::Grouping;

/// Inspect, export, diff, check and merge scope-profiler profiles (HDF5 or JSON).
#[derive(Parser, Debug)]
#[command(
    name = "scope-prof",
    version,
    about,
    long_about = None,
    after_help = "Files are read in a watched child process: a file on which the reader \
                  crashes or hangs is exit code 2. Environment: SCOPE_PROF_OPEN_TIMEOUT (seconds an \
                  opening may take, 60), SCOPE_PROF_MEMORY_LIMIT (MiB of address space for \
                  the reading; by default 4 GiB + 64 x the files' size; 0: none)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the call tree of one or more profiles: calls, total, own, mean,
    /// p95 and % per call path (several files side by side). %: the share
    /// of the session's wall time the calls took on the lanes (threads,
    /// tasks) they ran on, total / (session x lanes).
    Inspect(InspectArgs),
    /// Export a profile: Chrome trace (Perfetto), speedscope, folded
    /// stacks, a flamegraph SVG or the statistics as JSON.
    Export(ExportArgs),
    /// Compare two profiles region by region: calls, total, own and mean.
    Diff(DiffArgs),
    /// Fail (exit code 1) when a region of NEW regressed past the budget.
    Check(CheckArgs),
    /// Write one self-contained HTML page (no network needed to view it):
    /// header, call tree, flame graph, timeline, duration histograms; with
    /// several files, what changed and scaling charts.
    Report(report::ReportArgs),
    /// Merge profiles recorded in one process (a Python program's and its
    /// Rust extensions') into one: lanes matched by OS thread id, each
    /// call nested under the innermost call that encloses it on its thread.
    Merge(merge::MergeArgs),
    /// Browse a profile in the terminal: the call tree (expand, collapse,
    /// sort, search) and the selected region's percentiles and histogram.
    Tui(tui::TuiArgs),
    /// Watch a running program's regions (a session started with
    /// `Options::live`): refreshed every second, sorted by total, own,
    /// calls or time/s; pause, resume and checkpoint it. `--once` prints
    /// one snapshot (text or JSON) for scripts.
    Live(live::LiveArgs),
}

/// Ordering of the regions.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum SortKey {
    /// Longest total time first.
    Total,
    /// Longest own (exclusive) time first.
    Own,
    /// Most calls first.
    Calls,
    /// By name.
    Name,
}

#[derive(clap::Args, Debug)]
struct InspectArgs {
    /// Profile files (HDF5, schema 2 or 3; JSON profiles, .json or .json.gz).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Order of sibling regions.
    #[arg(long, value_enum, default_value_t = SortKey::Total)]
    sort: SortKey,
    /// Show at most N children per node.
    #[arg(long, value_name = "N")]
    top: Option<usize>,
    /// One tree per thread, and one per task name (the task lanes of a
    /// rank that ran the same task merged, with their count).
    #[arg(long, conflicts_with = "ranks")]
    threads: bool,
    /// With --threads: one tree per task lane too (thousands for a run with
    /// thousands of tasks).
    #[arg(long, requires = "threads")]
    all_lanes: bool,
    /// Width of the table in characters (names are cut in the middle to
    /// fit). Default: $COLUMNS, else the terminal's width, else 100.
    #[arg(long, value_name = "N")]
    width: Option<usize>,
    /// One tree per MPI rank.
    #[arg(long)]
    ranks: bool,
    /// Only regions with this tag (and the paths to them).
    #[arg(long, value_name = "T")]
    tag: Option<String>,
    /// Only regions whose name matches this glob (`*`, `?`), and the paths to them.
    #[arg(long, value_name = "GLOB")]
    region: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// After the tree, print the captured source of these regions (written
    /// when the run had `Options::capture_region_source(true)`).
    #[arg(long, value_name = "NAME", num_args = 1.., conflicts_with = "json")]
    source: Vec<String>,
    /// After the tree, each region's hottest functions and source lines,
    /// from the sample files beside the profile (`<stem>_rank<N>.sps`,
    /// written by a session with `Options::sample_hz`), symbolized from the
    /// binaries' debug info now. A `.sps` file given as FILE is shown so.
    #[arg(long)]
    samples: bool,
}

/// Export formats.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum ExportKind {
    /// Chrome trace event JSON: open in <https://ui.perfetto.dev> or chrome://tracing.
    ChromeTrace,
    /// speedscope JSON (evented profiles, one per lane): <https://www.speedscope.app>.
    Speedscope,
    /// Folded stacks, `a;b;c <own ns>` per call path.
    Folded,
    /// A flamegraph SVG (rendered by inferno).
    Flamegraph,
    /// The statistics (metadata, regions, call tree) as JSON; a sampled
    /// session's samples too (`samples`: per region, by function and by line),
    /// from the sample files beside the profile.
    Json,
}

impl ExportKind {
    /// The Python CLI's file name for the kind.
    fn default_output(self) -> &'static str {
        match self {
            ExportKind::ChromeTrace => "profile.trace.json",
            ExportKind::Speedscope => "profile.speedscope.json",
            ExportKind::Folded => "profile.folded",
            ExportKind::Flamegraph => "flamegraph.svg",
            ExportKind::Json => "profile.json",
        }
    }
}

#[derive(clap::Args, Debug)]
struct ExportArgs {
    /// What to write.
    #[arg(value_enum)]
    kind: ExportKind,
    /// The profile file.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Output file (`-` for standard output); by default the Python CLI's
    /// name in the current directory (profile.trace.json, ...).
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// Flamegraph title (default: the file name).
    #[arg(long)]
    title: Option<String>,
    /// Flamegraph width in pixels.
    #[arg(long, default_value_t = 1200)]
    width: usize,
    /// folded, flamegraph and speedscope: the samples of a sampled session
    /// (the sample files beside the profile) instead of the calls: each
    /// sample's path of regions, then the frames it was taken in (its call
    /// chain, with frame pointers), weighing 1e9 / rate ns (speedscope: one
    /// sampled profile).
    #[arg(long)]
    samples: bool,
    #[command(flatten)]
    filters: export_filter::FilterArgs,
}

/// Statistic compared by `diff` and `check`.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub(crate) enum Metric {
    /// Summed duration.
    Total,
    /// Summed exclusive (own) time.
    Own,
    /// Mean duration per call.
    Mean,
}

/// Output of `diff` and `check`.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum Format {
    /// A table for the terminal.
    Text,
    /// A Markdown table for a pull-request comment, regressions first.
    Markdown,
    /// JSON: one object per region (and, for check, the verdict).
    Json,
}

#[derive(clap::Args, Debug)]
struct DiffArgs {
    /// Baseline profile.
    #[arg(value_name = "BASE")]
    base: PathBuf,
    /// Profile to compare with it.
    #[arg(value_name = "NEW")]
    new: PathBuf,
    /// Statistic to order by.
    #[arg(long, value_enum, default_value_t = Metric::Total)]
    metric: Metric,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Change in percent past which a region counts as a regression (or,
    /// downwards, an improvement) in the markdown and JSON output.
    #[arg(long, value_name = "PCT", default_value_t = 5.0)]
    threshold: f64,
    /// Same as `--format json`.
    #[arg(long, hide = true, conflicts_with = "format")]
    json: bool,
    /// Width of the text table in characters (names are cut in the middle
    /// to fit). Default: $COLUMNS, else the terminal's width, else 100.
    #[arg(long, value_name = "N")]
    width: Option<usize>,
}

#[derive(clap::Args, Debug)]
struct CheckArgs {
    /// Baseline profile.
    #[arg(value_name = "BASE")]
    base: PathBuf,
    /// Candidate profile.
    #[arg(value_name = "NEW")]
    new: PathBuf,
    /// Maximum allowed increase in percent.
    #[arg(long, value_name = "PCT", default_value_t = 0.0)]
    max_regression: f64,
    /// Treat regions absent from the baseline as failures.
    #[arg(long)]
    fail_on_new: bool,
    /// Statistic to compare.
    #[arg(long, value_enum, default_value_t = Metric::Total)]
    metric: Metric,
    /// Output format (the exit code is the same in every format).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Width of the text table in characters (as `diff --width`).
    #[arg(long, value_name = "N")]
    width: Option<usize>,
}

/// An error for the user: the message, exit code 2.
#[derive(Debug)]
pub(crate) struct Failure(pub(crate) String);

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure(e.to_string())
    }
}

fn main() -> ExitCode {
    // Files are read in a watched child process (see isolate.rs).
    if let Some(code) = isolate::supervise() {
        return code;
    }
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        // A closed pipe (`scope-prof inspect f.h5 | head`) is not an error.
        Err(Failure(message)) if message.contains("Broken pipe") => ExitCode::SUCCESS,
        Err(Failure(message)) => {
            eprintln!("scope-prof: error: {}", width::printable(&message));
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode, Failure> {
    match cli.command {
        Command::Inspect(args) => inspect(args).map(|()| ExitCode::SUCCESS),
        Command::Export(args) => export_cmd(args).map(|()| ExitCode::SUCCESS),
        Command::Report(args) => report::report(&args).map(|()| ExitCode::SUCCESS),
        Command::Diff(args) => diff_cmd(args).map(|()| ExitCode::SUCCESS),
        Command::Check(args) => check_cmd(args),
        Command::Merge(args) => merge::merge(&args).map(|()| ExitCode::SUCCESS),
        Command::Tui(args) => tui::tui(&args).map(|()| ExitCode::SUCCESS),
        Command::Live(args) => live::live(&args).map(|()| ExitCode::SUCCESS),
    }
}

fn diff_cmd(args: DiffArgs) -> Result<(), Failure> {
    let (base, new) = (open(&args.base)?, open(&args.new)?);
    let rows = stats::diff(&stats::region_stats(&base)?, &stats::region_stats(&new)?);
    let mut out = std::io::stdout().lock();
    let format = if args.json { Format::Json } else { args.format };
    match format {
        Format::Json => {
            let json = stats::diff_json(&rows, args.metric, args.threshold);
            writeln!(out, "{}", serde_json::to_string_pretty(&json)?)?;
        }
        Format::Markdown => markdown::write_diff(
            &mut out,
            (&args.base, &args.new),
            &rows,
            args.metric,
            args.threshold,
            None,
        )?,
        Format::Text => text::print_diff(
            &mut out,
            &args.base,
            &args.new,
            &rows,
            args.metric,
            width::table(args.width),
        )?,
    }
    Ok(())
}

fn check_cmd(args: CheckArgs) -> Result<ExitCode, Failure> {
    let (base, new) = (open(&args.base)?, open(&args.new)?);
    let rows = stats::diff(&stats::region_stats(&base)?, &stats::region_stats(&new)?);
    let failures = stats::check(&rows, args.metric, args.max_regression, args.fail_on_new);
    let pass = failures.is_empty();
    let code = if pass {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    let mut out = std::io::stdout().lock();
    let budget = format!(
        "+{}% ({})",
        args.max_regression,
        stats::metric_name(args.metric)
    );
    match args.format {
        Format::Json => {
            let json = serde_json::json!({
                "base": args.base.display().to_string(),
                "new": args.new.display().to_string(),
                "metric": stats::metric_name(args.metric),
                "max_regression_pct": args.max_regression,
                "fail_on_new": args.fail_on_new,
                "pass": pass,
                "violations": failures,
                "regions": stats::diff_json(&rows, args.metric, args.max_regression),
            });
            writeln!(out, "{}", serde_json::to_string_pretty(&json)?)?;
        }
        Format::Markdown => {
            let verdict = if pass {
                format!("### ✅ Regression check: PASS (budget {budget})")
            } else {
                format!(
                    "### ❌ Regression check: FAIL (budget {budget})\n\nOver budget: {}",
                    failures
                        .iter()
                        .map(|f| format!("`{}`", f.replace('`', "'")))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            markdown::write_diff(
                &mut out,
                (&args.base, &args.new),
                &rows,
                args.metric,
                args.max_regression,
                Some(&verdict),
            )?;
        }
        Format::Text => {
            writeln!(out, "Baseline: {}", args.base.display())?;
            writeln!(out, "Candidate: {}", args.new.display())?;
            writeln!(out, "Regression budget: {budget}")?;
            text::print_diff(
                &mut out,
                &args.base,
                &args.new,
                &rows,
                args.metric,
                width::table(args.width),
            )?;
            if pass {
                writeln!(out, "Regression check: PASS")?;
            } else {
                writeln!(out, "Regression check: FAIL")?;
                writeln!(
                    out,
                    "Budget violations: {}",
                    width::printable(&failures.join(", "))
                )?;
            }
        }
    }
    Ok(code)
}

/// Opens a profile; the error names the file and what is wrong.
pub(crate) fn open(path: &Path) -> Result<ProfileReader, Failure> {
    opened(path, |p| ProfileReader::open(p))
}

/// `read(path)` in the watched child ([`isolate::opening`]); the error names
/// the file and what is wrong.
pub(crate) fn opened<T>(
    path: &Path,
    read: impl FnOnce(&Path) -> Result<T, scope_profiler::Error>,
) -> Result<T, Failure> {
    if let Err(e) = std::fs::metadata(path) {
        return Err(Failure(format!("cannot read {}: {e}", path.display())));
    }
    isolate::opening(path, || read(path)).map_err(|e| {
        Failure(format!(
            "{} is not a readable scope-profiler profile ({e})",
            path.display()
        ))
    })
}

fn inspect(args: InspectArgs) -> Result<(), Failure> {
    let grouping = match (args.threads, args.ranks) {
        (true, _) => Grouping::Lane,
        (_, true) => Grouping::Rank,
        _ => Grouping::All,
    };
    // Sample files first: a `.sps` given as FILE is shown as samples only.
    let show_samples = args.samples || args.files.iter().any(|p| samples::is_sample_file(p));
    let mut sampled = Vec::new();
    if show_samples {
        for path in &args.files {
            let found = scope_profiler_reader::sps::files_for(path);
            if found.is_empty() {
                return Err(Failure(format!(
                    "no sample file beside {} (a session with Options::sample_hz writes \
                     <stem>_rank<NNNNN>.sps beside its profile)",
                    path.display()
                )));
            }
            for f in found {
                sampled.push(samples::read(&f)?);
            }
        }
    }
    let top = args.top.unwrap_or(10);
    let mut files = Vec::new();
    for path in args.files.iter().filter(|p| !samples::is_sample_file(p)) {
        let reader = open(path)?;
        let tree = stats::file_tree_with(&reader, grouping, !args.all_lanes)?;
        files.push((path.clone(), reader, tree));
    }
    let filter = stats::Filter {
        tag: args.tag.clone(),
        region: args.region.clone(),
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let mut json: Vec<_> = files
            .iter()
            .map(|(path, reader, tree)| stats::tree_json(path, reader, tree, &filter))
            .collect();
        if show_samples {
            let samples: Vec<_> = sampled.iter().map(samples::json).collect();
            match json.as_mut_slice() {
                [serde_json::Value::Object(one)] => {
                    one.insert("samples".into(), serde_json::Value::Array(samples));
                }
                _ => json.extend(samples),
            }
        }
        let json = match json.len() {
            1 => json.into_iter().next().unwrap_or_default(),
            _ => serde_json::Value::Array(json),
        };
        writeln!(out, "{}", serde_json::to_string_pretty(&json)?)?;
        return Ok(());
    }
    if !files.is_empty() {
        let merged = stats::merge(&files, &filter);
        let layout = text::TreeLayout {
            key: args.sort,
            top: args.top,
            width: width::table(args.width),
        };
        text::print_tree(&mut out, &files, &merged, &layout)?;
        text::print_counters(&mut out, &files)?;
        if !args.source.is_empty() {
            text::print_sources(&mut out, &files, &args.source)?;
        }
    }
    for s in &sampled {
        samples::print(&mut out, s, top)?;
    }
    Ok(())
}

/// The folded stacks of the samples beside the profile at `profile` (every
/// rank's file, added up).
fn sampled_folded(profile: &Path, regions: &[String]) -> Result<Vec<u8>, Failure> {
    let files = scope_profiler_reader::sps::files_for(profile);
    if files.is_empty() {
        return Err(Failure(format!(
            "--samples: no sample file beside {} (a session with Options::sample_hz writes \
             <stem>_rank<NNNNN>.sps beside its profile)",
            profile.display()
        )));
    }
    let mut lines: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
    for f in files {
        let mut s = samples::read(&f)?;
        let ns = samples::ns_per_sample(&s);
        for (line, n) in samples::folded(&mut s, regions) {
            *lines.entry(line).or_insert(0) += n * ns;
        }
    }
    let mut out = Vec::new();
    for (line, ns) in lines {
        writeln!(out, "{line} {ns}")?;
    }
    Ok(out)
}

/// A progress bar on stderr for files over a million events, when stderr
/// is a terminal.
fn progress(reader: &mut ProfileReader) -> Option<indicatif::ProgressBar> {
    let total = reader.event_count();
    if total < 1_000_000 || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{msg} [{bar:40}] {human_pos}/{human_len} events ({eta})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_message("reading");
    let b = bar.clone();
    reader.set_progress(move |n| b.set_position(n));
    Some(bar)
}

fn export_cmd(args: ExportArgs) -> Result<(), Failure> {
    let mut reader = open(&args.file)?;
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(args.kind.default_output()));
    let to_stdout = output.as_os_str() == "-";
    if reader.is_aggregate()
        && matches!(args.kind, ExportKind::ChromeTrace | ExportKind::Speedscope)
    {
        return Err(Failure(format!(
            "{} is an aggregate profile (totals only, no per-call events): it has no timeline to export",
            args.file.display()
        )));
    }
    let filter = args
        .filters
        .filter(reader.region_names())
        .map_err(Failure)?;
    if args.samples && args.filters.more_than_regions() {
        // Not ignored: the sample files keep no thread or time per sample.
        return Err(Failure(
            "export --samples takes --region only: the sample files keep no thread or time per \
             sample, so --lane, --from, --to and --max-events apply to the calls' exports \
             (without --samples)"
                .to_owned(),
        ));
    }
    if args.kind == ExportKind::Json && !filter.is_empty() {
        return Err(Failure(
            "export json writes the statistics of the whole file: --region, --lane, --from, \
             --to and --max-events apply to chrome-trace, speedscope, folded and flamegraph"
                .to_owned(),
        ));
    }
    for note in stats::recording_notes(&reader) {
        eprintln!(
            "scope-prof: {}: note: {}",
            args.file.display(),
            width::printable(&note)
        );
    }
    let bar = progress(&mut reader);
    // Every export writes at most its budget (`ProfileReader::output_budget`):
    // the library's exports check theirs, this one covers the flamegraph
    // and the JSON statistics too.
    let budget = reader.output_budget();
    let mut sink: Box<dyn Write> = if to_stdout {
        let out = ProfileReader::limit_output(std::io::stdout().lock(), budget);
        Box::new(std::io::BufWriter::new(out))
    } else {
        let file = std::fs::File::create(&output)
            .map_err(|e| Failure(format!("cannot write {}: {e}", output.display())))?;
        let file = ProfileReader::limit_output(file, budget);
        Box::new(std::io::BufWriter::with_capacity(1 << 20, file))
    };
    let named = |e: scope_profiler::Error| match e {
        scope_profiler::Error::Io { source, .. } => {
            Failure(format!("cannot write {}: {source}", output.display()))
        }
        e => Failure(e.to_string()),
    };
    let mut done = None;
    match args.kind {
        ExportKind::ChromeTrace => {
            done = Some(
                reader
                    .chrome_trace_filtered(&filter, &mut sink)
                    .map_err(named)?,
            );
        }
        ExportKind::Speedscope if args.samples => {
            let title = args.file.display().to_string();
            let folded = sampled_folded(&args.file, &filter.regions)?;
            serde_json::to_writer(&mut sink, &samples::speedscope(&folded, &title))?;
            writeln!(sink)?;
        }
        ExportKind::Speedscope => {
            done = Some(
                reader
                    .speedscope_filtered(&filter, &mut sink)
                    .map_err(named)?,
            );
        }
        ExportKind::Folded if args.samples => {
            sink.write_all(&sampled_folded(&args.file, &filter.regions)?)?;
        }
        ExportKind::Folded => {
            done = Some(reader.folded_filtered(&filter, &mut sink).map_err(named)?);
        }
        ExportKind::Flamegraph => {
            let mut folded = Vec::new();
            if args.samples {
                folded = sampled_folded(&args.file, &filter.regions)?;
            } else {
                done = Some(
                    reader
                        .folded_filtered(&filter, &mut folded)
                        .map_err(named)?,
                );
            }
            let text = String::from_utf8_lossy(&folded);
            let mut options = inferno::flamegraph::Options::default();
            options.title = args.title.clone().unwrap_or_else(|| {
                args.file
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
            });
            options.count_name = "ns".to_owned();
            options.image_width = Some(args.width);
            if text.trim().is_empty() {
                return Err(Failure(format!(
                    "{} has no recorded time to draw",
                    args.file.display()
                )));
            }
            inferno::flamegraph::from_lines(&mut options, text.lines(), &mut sink)
                .map_err(|e| Failure(format!("cannot write {}: {e}", output.display())))?;
        }
        ExportKind::Json => {
            let tree = stats::file_tree(&reader, Grouping::All)?;
            let mut json = stats::tree_json(&args.file, &reader, &tree, &stats::Filter::default());
            // A sampled session's samples, from the sample files beside it.
            let sampled = scope_profiler_reader::sps::files_for(&args.file)
                .iter()
                .map(|f| samples::read(f).map(|s| samples::json(&s)))
                .collect::<Result<Vec<_>, _>>()?;
            if let (false, serde_json::Value::Object(map)) = (sampled.is_empty(), &mut json) {
                map.insert("samples".into(), serde_json::Value::Array(sampled));
            }
            serde_json::to_writer(&mut sink, &json)?;
            writeln!(sink)?;
        }
    }
    sink.flush()
        .map_err(|e| Failure(format!("cannot write {}: {e}", output.display())))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let cut = done.and_then(|d| export_filter::cut_note(&d, filter.max_events));
    if let Some(note) = cut {
        eprintln!(
            "scope-prof: {}: note: {}",
            args.file.display(),
            width::printable(&note)
        );
    }
    if done.is_some_and(|d| d.events == 0) && !filter.is_empty() {
        eprintln!(
            "scope-prof: {}: note: no call passed the filters",
            args.file.display()
        );
    }
    if !to_stdout {
        eprintln!("wrote {}", output.display());
    }
    Ok(())
}
