//! Sampling's cost (issue 39 item 5): 4 threads each make the same calls
//! (a region around ~1 us of work) in a session without sampling and in one
//! sampling at 1 kHz, rounds rotated, each round a session of its own; the
//! wall time of the recording, the drainer thread's CPU, the samples taken
//! against the threads' CPU time at the rate, and `finalize`'s time (the
//! samples given to calls, the `.sps` file written beside the profile).
//! The 4 threads share 2 cores here, so a round's time varies by several
//! percent: the per-sample cost itself is measured apart, on one thread
//! doing a fixed amount of work in one region, sampling or not, rounds
//! paired, by that thread's CPU time.

use std::hint::black_box;
use std::time::Instant;

use scope_profiler::{self as sp, Options};

use crate::common::{median, quantile, rotated, work};

const THREADS: usize = 4;
const HZ: u32 = 1000;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Row {
    Off,
    On,
}

/// One round of one row.
#[derive(Clone, Copy, Default)]
struct Round {
    wall_s: f64,
    finalize_s: f64,
    /// The threads' CPU time while recording.
    cpu_s: f64,
    drainer_ns: u64,
    samples: usize,
    in_regions: usize,
}

/// What the section measured.
pub struct SamplingResult {
    pub calls: u64,
    pub rounds: usize,
    off: Vec<Round>,
    on: Vec<Round>,
    /// Symbolizing a file of 1M samples: distinct addresses, seconds, and
    /// how many were placed in a named function.
    symbolized: Option<(usize, f64, usize)>,
    /// Why sampling could not be measured (no perf events here).
    pub refused: Option<String>,
    /// One thread's fixed work, per round: its CPU seconds without and
    /// with sampling, and the samples taken.
    alone: Vec<(f64, f64, usize)>,
}

/// Iterations of `work` of the one-thread rounds (about 0.3 s).
const ALONE_WORK: u64 = 300_000_000;

/// One thread's CPU seconds for `ALONE_WORK` in one region, sampled or
/// not, and the samples taken.
fn alone(sample: bool, dir: &std::path::Path) -> Result<(f64, usize), sp::Error> {
    let mut options = Options::new()
        .file_path(dir.join("alone.h5"))
        .verbose(false);
    if sample {
        options = options.sample_hz(HZ);
    }
    let run = sp::setup(options)?;
    let region = sp::region("alone");
    let cpu = std::thread::spawn(move || {
        let c0 = thread_cpu();
        let mut x = 1u64;
        region.run(|| {
            for _ in 0..ALONE_WORK {
                x = black_box(work(x));
            }
        });
        black_box(x);
        thread_cpu() - c0
    })
    .join()
    .unwrap_or(0.0);
    let results = run.finalize()?;
    Ok((cpu, results.samples().map_or(0, |s| s.samples.len())))
}

/// CPU seconds of the calling thread (`/proc/thread-self/schedstat`).
fn thread_cpu() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap_or(0) as f64
        / 1e9
}

/// `calls` calls per thread on 4 threads, in a session writing to `dir`
/// (the profile and, sampling, its `.sps` file).
fn round(calls: u64, sample: bool, dir: &std::path::Path) -> Result<Round, sp::Error> {
    let mut options = Options::new()
        .file_path(dir.join("sampling.h5"))
        .verbose(false);
    if sample {
        options = options.sample_hz(HZ);
    }
    let run = sp::setup(options)?;
    let region = sp::region("sampled-work");
    let drainer0 = crate::live::thread_cpu_ns(DRAINER).unwrap_or(0);
    let t = Instant::now();
    let cpu: f64 = std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|k| {
                let region = &region;
                s.spawn(move || {
                    let c0 = thread_cpu();
                    let mut x = k as u64;
                    for _ in 0..calls {
                        let _g = region.enter();
                        for _ in 0..300 {
                            x = black_box(work(x));
                        }
                    }
                    black_box(x);
                    thread_cpu() - c0
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or(0.0)).sum()
    });
    let wall_s = t.elapsed().as_secs_f64();
    let drainer_ns = crate::live::thread_cpu_ns(DRAINER)
        .unwrap_or(0)
        .saturating_sub(drainer0);
    let f = Instant::now();
    let results = run.finalize()?;
    let finalize_s = f.elapsed().as_secs_f64();
    let (samples, in_regions) = results.samples().map_or((0, 0), |s| {
        (
            s.samples.len(),
            s.samples.iter().filter(|s| s.region >= 0).count(),
        )
    });
    Ok(Round {
        wall_s,
        finalize_s,
        cpu_s: cpu,
        drainer_ns,
        samples,
        in_regions,
    })
}

/// The drainer's thread name (`Sampling::start`).
const DRAINER: &str = "sp-sampler";

pub fn run(calls: u64, rounds: usize, dir: &std::path::Path) -> SamplingResult {
    let mut r = SamplingResult {
        calls,
        rounds,
        off: Vec::new(),
        on: Vec::new(),
        refused: None,
        symbolized: None,
        alone: Vec::new(),
    };
    for k in 0..rounds {
        for row in rotated(&[Row::Off, Row::On], k) {
            match round(calls, row == Row::On, dir) {
                Ok(done) => match row {
                    Row::Off => r.off.push(done),
                    Row::On => r.on.push(done),
                },
                Err(e) => {
                    r.refused = Some(e.to_string());
                    return r;
                }
            }
        }
    }
    for k in 0..rounds {
        let mut pair = (0.0, 0.0, 0);
        for row in rotated(&[Row::Off, Row::On], k) {
            match alone(row == Row::On, dir) {
                Ok((cpu, _)) if row == Row::Off => pair.0 = cpu,
                Ok((cpu, samples)) => (pair.1, pair.2) = (cpu, samples),
                Err(e) => {
                    r.refused = Some(e.to_string());
                    return r;
                }
            }
        }
        r.alone.push(pair);
    }
    r.symbolized = symbolize_million();
    r
}

/// The one-thread rounds: the CPU time sampling adds, in %, paired per
/// round (median and quartiles), and per sample in us (median).
fn alone_cost(r: &SamplingResult) -> Option<(f64, f64, f64, f64)> {
    if r.alone.is_empty() {
        return None;
    }
    let pct: Vec<f64> = r
        .alone
        .iter()
        .map(|(off, on, _)| (on / off - 1.0) * 100.0)
        .collect();
    let per: Vec<f64> = r
        .alone
        .iter()
        .map(|(off, on, n)| (on - off) * 1e6 / (*n).max(1) as f64)
        .collect();
    Some((
        median(&pct),
        quantile(&pct, 0.25),
        quantile(&pct, 0.75),
        median(&per),
    ))
}

/// Samples in the file of a big run: 1M of them over 20,000 distinct
/// addresses of this binary's code (its executable mapping in
/// `/proc/self/maps`), in 10 regions, placed by `sps::Symbolizer` and
/// counted per region: the time `scope-prof inspect --samples` takes.
fn symbolize_million() -> Option<(usize, f64, usize)> {
    use scope_profiler_reader::sps::{Sample, SampleFile, Symbolizer, region_samples};
    const SAMPLES: u32 = 1_000_000;
    const DISTINCT: u64 = 20_000;
    let exe = std::env::current_exe().ok()?;
    let exe = exe.to_str()?;
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let mut base = u64::MAX;
    let mut text = None;
    for line in maps.lines().filter(|l| l.ends_with(exe)) {
        let mut f = line.split_whitespace();
        let (range, perms, offset) = (f.next()?, f.next()?, f.next()?);
        let (start, end) = range.split_once('-')?;
        let start = u64::from_str_radix(start, 16).ok()?;
        let end = u64::from_str_radix(end, 16).ok()?;
        base = base.min(start - u64::from_str_radix(offset, 16).ok()?);
        if perms.contains('x') {
            text = Some((start, end));
        }
    }
    let (start, end) = text?;
    let step = ((end - start) / DISTINCT).max(1);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let samples = (0..SAMPLES)
        .map(|i| {
            x = work(x);
            Sample {
                region: (i % 10) as i32,
                module: 0,
                address: start + (x % DISTINCT) * step,
            }
        })
        .collect();
    let file = SampleFile {
        hz: HZ as i32,
        ticks: i64::from(SAMPLES),
        regions: (0..10).map(|i| format!("region-{i}")).collect(),
        modules: vec![(exe.to_owned(), base)],
        samples,
        ..SampleFile::default()
    };
    let t = Instant::now();
    let mut symbols = Symbolizer::new(&file);
    let by_region = region_samples(&file, None, |m, a| symbols.place(m, a));
    let took = t.elapsed().as_secs_f64();
    let named = by_region
        .iter()
        .flat_map(|r| &r.functions)
        .filter(|(f, _)| !f.contains("+0x"))
        .map(|(_, n)| *n as usize)
        .sum();
    Some((DISTINCT as usize, took, named))
}

/// The change sampling makes to `f` of a round, in %, paired: each
/// round's run with sampling against the one without it ran next to (a
/// drift of the machine's speed cancels); the median and the quartiles
/// over the rounds.
fn paired(r: &SamplingResult, f: fn(&Round) -> f64) -> (f64, f64, f64) {
    let pct: Vec<f64> =
        r.on.iter()
            .zip(&r.off)
            .map(|(on, off)| (f(on) / f(off) - 1.0) * 100.0)
            .collect();
    (median(&pct), quantile(&pct, 0.25), quantile(&pct, 0.75))
}

/// The target: the recording's wall time with sampling over
/// without (paired per round), in %, and its line in the targets' table.
pub fn target(r: &SamplingResult) -> Option<(f64, String)> {
    if r.refused.is_some() || r.on.is_empty() || r.off.is_empty() {
        return None;
    }
    let (pct, q1, q3) = paired(r, |x| x.wall_s);
    let (one, one_q1, one_q3, per) = alone_cost(r)?;
    // The figure judged: the one thread's, whose quartiles are a tenth of
    // the 4 threads' on 2 cores.
    Some((
        one,
        format!(
            "one thread's CPU {one:+.2}% (quartiles {one_q1:+.2}% to {one_q3:+.2}%; {per:.1} us \
             per sample: the kernel's timer interrupt and the sample's write); 4 threads' \
             wall {pct:+.2}% (quartiles {q1:+.2}% to {q3:+.2}%)"
        ),
    ))
}

/// The section's markdown.
pub fn render(r: &SamplingResult) -> String {
    if let Some(why) = &r.refused {
        return format!("Not measured: {why}\n");
    }
    let stat = |v: &[Round], f: fn(&Round) -> f64| {
        let x: Vec<f64> = v.iter().map(f).collect();
        (median(&x), quantile(&x, 0.75) - quantile(&x, 0.25))
    };
    let (off, off_iqr) = stat(&r.off, |x| x.wall_s * 1e3);
    let (on, on_iqr) = stat(&r.on, |x| x.wall_s * 1e3);
    let (fin_off, _) = stat(&r.off, |x| x.finalize_s * 1e3);
    let (fin_on, _) = stat(&r.on, |x| x.finalize_s * 1e3);
    let (drainer, _) = stat(&r.on, |x| x.drainer_ns as f64 / 1e6);
    let (samples, _) = stat(&r.on, |x| x.samples as f64);
    let (in_regions, _) = stat(&r.on, |x| x.in_regions as f64);
    let (expected, _) = stat(&r.on, |x| x.cpu_s * f64::from(HZ));
    let (cpu_off, _) = stat(&r.off, |x| x.cpu_s * 1e3);
    let (cpu_on, _) = stat(&r.on, |x| x.cpu_s * 1e3);
    let wall_pair = paired(r, |x| x.wall_s);
    let cpu_pair = paired(r, |x| x.cpu_s);
    format!(
        "{THREADS} threads, each {} calls of a region around ~1 us of work (`work` x 300), in a \
         session writing a file, without sampling and sampling at {HZ} Hz \
         (`Options::sample_hz`); {} rounds, rows rotated, medians.\n\n\
         | variant | recording wall ms | IQR | vs without | the threads' CPU ms | finalize ms |\n\
         | --- | ---: | ---: | ---: | ---: | ---: |\n\
         | without sampling | {off:.1} | {off_iqr:.1} | | {cpu_off:.1} | {fin_off:.1} |\n\
         | sampling at {HZ} Hz | {on:.1} | {on_iqr:.1} | {:+.2}% | {cpu_on:.1} | {fin_on:.1} |\n\n\
         Sampling at {HZ} Hz: {samples:.0} samples ({in_regions:.0} in the region) for the \
         threads' CPU time x the rate = {expected:.0}; the drainer thread's CPU \
         {drainer:.2} ms per round ({:.2}% of the recording's wall time); the sampled \
         threads' CPU grows by {:.1} us per sample (the kernel's timer interrupt and the \
         sample's write, charged to the thread it samples). Paired, each round's run with \
         sampling against the one without it next to it (the machine's drift cancels): wall \
         {:+.2}% (quartiles {:+.2}% to {:+.2}%), the threads' CPU {:+.2}% (quartiles {:+.2}% \
         to {:+.2}%).\n",
        r.calls,
        r.rounds,
        (on - off) / off * 100.0,
        drainer / on * 100.0,
        (cpu_on - cpu_off) * 1e3 / samples.max(1.0),
        wall_pair.0,
        wall_pair.1,
        wall_pair.2,
        cpu_pair.0,
        cpu_pair.1,
        cpu_pair.2,
    ) + &match alone_cost(r) {
        Some((pct, q1, q3, per)) => format!(
            "\nThe cost per sample, measured apart: one thread running {ALONE_WORK} iterations \
             of `work` in one region, sampling at {HZ} Hz or not, {} rounds paired, by the \
             thread's CPU time: {pct:+.2}% (quartiles {q1:+.2}% to {q3:+.2}%), {per:.1} us per \
             sample (median).\n",
            r.alone.len()
        ),
        None => String::new(),
    } + &match r.symbolized {
        Some((distinct, s, named)) => format!(
            "\nSymbolizing a file of 1,000,000 samples over {distinct} distinct addresses of this \
             binary's code (release build: its symbol table, no line tables) and counting them \
             per region (`sps::Symbolizer`, `sps::region_samples`, what `scope-prof inspect \
             --samples` does): {s:.2} s; {named} samples placed in a named function.\n"
        ),
        None => "\nSymbolizing 1M samples: not measured (no executable mapping found).\n".into(),
    }
}
