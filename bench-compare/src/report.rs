//! The markdown report: the machine, the command, every table and the
//! issue's targets, each with the figure and whether it is met.

use std::fmt::Write as _;
use std::process::Command;

use crate::Settings;
use crate::common::{median, quantile};
use crate::micro::{MicroResult, Variant};
use crate::scale::{self, FinalizeRow, Scale};
use crate::threads::ThreadsResult;

type OffRows = Result<Vec<(String, scale::Fields)>, String>;

pub struct Report {
    /// The temporary directory the scale section writes to, and its
    /// filesystem type.
    pub scratch: String,
    pub compiled_out: Option<OffRows>,
    pub micro: Option<MicroResult>,
    pub threads: Option<ThreadsResult>,
    pub scale: Option<Scale>,
    pub sustained: Option<Vec<crate::sustained::Row>>,
    /// The table `compare-counters` printed, or why there is none.
    pub counters: Option<Result<String, String>>,
    /// The live server's cost.
    pub live: Option<crate::live::LiveResult>,
    /// Sampling's cost.
    pub sampling: Option<crate::sampling::SamplingResult>,
    date: String,
    machine: String,
    load_before: String,
    load_after: String,
    rustc: String,
    commit: String,
    command: String,
}

fn sh(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

fn load() -> String {
    let up = sh("uptime", &[]);
    if up.is_empty() {
        std::fs::read_to_string("/proc/loadavg").unwrap_or_default()
    } else {
        up
    }
}

fn fmt_ns(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// `median [min-max]` of `xs`.
fn spread(xs: &[f64], digits: usize) -> String {
    if xs.len() == 1 {
        return format!("{:.*}", digits, xs[0]);
    }
    format!(
        "{:.*} [{:.*}-{:.*}]",
        digits,
        median(xs),
        digits,
        quantile(xs, 0.0),
        digits,
        quantile(xs, 1.0)
    )
}

/// One variant's row of the per-call tables.
fn variant_row(w: &mut String, m: &MicroResult, v: Variant, floor: f64, ours: f64) {
    let o = m.overhead(v);
    let (lo, hi) = m.iqr(v);
    let _ = writeln!(
        w,
        "| {} | {} | {}-{} | {:.2} | {:.2} | {} | {:.2} |",
        v.label(),
        fmt_ns(o),
        fmt_ns(lo),
        fmt_ns(hi),
        o / floor,
        o / ours,
        fmt_ns(m.cpu_overhead(v)),
        m.faults_per_k(v)
    );
}

fn mark(ok: bool) -> &'static str {
    if ok { "**met**" } else { "**missed**" }
}

impl Report {
    pub fn new(settings: &Settings) -> Report {
        let model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, m)| m.trim().to_owned())
            })
            .unwrap_or_else(|| "unknown".into());
        let nproc = std::thread::available_parallelism().map_or(0, |n| n.get());
        let clock = format!("{:?}", quanta::Clock::new());
        let tsc = if clock.contains("inner: Counter") {
            "quanta reads the TSC"
        } else {
            "quanta does NOT read the TSC here"
        };
        let dirty = !sh("git", &["status", "--porcelain", "--untracked-files=no"]).is_empty();
        let mut args = settings.args.join(" ");
        if !args.is_empty() {
            args = format!(" -- {args}");
        }
        Report {
            scratch: String::new(),
            compiled_out: None,
            counters: None,
            live: None,
            sampling: None,
            micro: None,
            threads: None,
            scale: None,
            sustained: None,
            date: sh("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
            machine: format!("{nproc} CPUs (nproc), {model}; {tsc}"),
            load_before: load(),
            load_after: String::new(),
            rustc: sh("rustc", &["-V"]),
            commit: format!(
                "{}{}",
                sh("git", &["rev-parse", "--short", "HEAD"]),
                if dirty { " + uncommitted changes" } else { "" }
            ),
            command: format!("cargo run --release -p bench-compare --bin compare{args}"),
        }
    }

    pub fn finish(&mut self) {
        self.load_after = load();
    }

    fn off_row(&self, name: &str) -> Option<&scale::Fields> {
        match &self.compiled_out {
            Some(Ok(rows)) => rows.iter().find(|(n, _)| n == name).map(|(_, f)| f),
            _ => None,
        }
    }

    pub fn render(&self) -> String {
        let mut s = String::new();
        let w = &mut s;
        let _ = writeln!(
            w,
            "# scope-profiler overhead, side by side with its peers\n"
        );
        let _ = writeln!(w, "- Date: {}", self.date);
        let _ = writeln!(w, "- Machine: {}", self.machine);
        let _ = writeln!(w, "- Load (`uptime`) before: `{}`", self.load_before);
        let _ = writeln!(w, "- Load (`uptime`) after: `{}`", self.load_after);
        let _ = writeln!(
            w,
            "- Compiler: {}; workspace at {}",
            self.rustc, self.commit
        );
        let _ = writeln!(w, "- Command (from the workspace root): `{}`", self.command);
        let _ = writeln!(
            w,
            "- Peers: hotpath 0.30 (`hotpath` feature), puffin 0.20, fastrace 0.7 (`enable`), tracing 0.1 + tracing-subscriber 0.3, quanta 0.12\n"
        );
        if let Some(m) = &self.micro {
            self.render_micro(w, m);
        }
        if let Some(t) = &self.threads {
            render_threads(w, t);
        }
        if let Some(scale) = &self.scale {
            render_scale(w, scale, &self.scratch);
        }
        if let Some(rows) = &self.sustained {
            render_sustained(w, rows);
        }
        if let Some(counters) = &self.counters {
            let _ = writeln!(w, "## Region counters (`compare-counters`)\n");
            let _ = writeln!(
                w,
                "Allocation tracking and perf events (issue 27), in a process of their own whose \
                 global allocator is `CountingAllocator` (every other table here runs with the \
                 system allocator). A session with perf events reads the thread's counter group \
                 (a `read` system call) at every enter and exit.\n"
            );
            match counters {
                Ok(table) => {
                    let _ = writeln!(w, "{table}");
                }
                Err(e) => {
                    let _ = writeln!(w, "Not measured: {e}\n");
                }
            }
        }
        if let Some(live) = &self.live {
            let _ = writeln!(w, "## The live server (`Options::live`)\n");
            let _ = writeln!(w, "{}", crate::live::render(live));
        }
        if let Some(sampling) = &self.sampling {
            let _ = writeln!(w, "## Samples inside regions (`Options::sample_hz`)\n");
            let _ = writeln!(w, "{}", crate::sampling::render(sampling));
        }
        self.render_targets(w);
        s
    }

    fn render_micro(&self, w: &mut String, m: &MicroResult) {
        let floor = m.overhead(Variant::FloorQuanta);
        let ours = m.overhead(Variant::Profile);
        let _ = writeln!(w, "## Per call, one thread\n");
        let _ = writeln!(
            w,
            "{} calls per variant per round, {} rounds after a warm-up round; in each round every \
             variant runs once, in an order rotated round by round. Each variant is an \
             `#[inline(never)]` function around the same `#[inline(never)]` workload (a multiply \
             and a rotate); inputs and results go through `black_box`. **ns/call** is the median \
             of the rounds minus the bare workload's median (whose own figure is absolute); \
             **IQR** is the rounds' interquartile range, bare subtracted; **x floor** divides by \
             the floor (two raw TSC reads through quanta), **x ours** by our `#[profile]`. Our \
             session is in memory, finalized and set up again between rounds (outside the timed \
             loops), with a memory limit of 4 GiB: one round's records stay under half of it, \
             so the spill writer spills nothing while the rows are timed (checked each round; \
             the default limit, 256 MiB, would have it compress the earlier rows' records while \
             the later ones run: that cost is under *Recording while spilling*); the \
             runtime-disabled rows run with no session active. **CPU ns/call, all \
             threads** is the CPU time of every thread of the process (`CLOCK_PROCESS_CPUTIME_ID`) \
             from the start of the calls until 30 ms after them, per call, minus the bare \
             workload's: it includes the work a peer hands to a background thread (hotpath's \
             aggregator, fastrace's collector), which the calling thread's ns/call does not. \
             **faults/1k** is the process's minor page faults per 1000 calls (median round). \
             The allocator is set (glibc `mallopt`) to keep freed large blocks in the heap, so \
             the peers record into memory earlier rounds already faulted in. Our session maps its \
             record chunks itself (up to 2 MiB each, in transparent huge pages where the kernel \
             offers them: `/sys/kernel/mm/transparent_hugepage/enabled`: {thp}); at its end it \
             keeps them for the next session (within half its memory limit, lazily freed: \
             `MADV_FREE`), so our rows too record into memory earlier rounds faulted in. Where a \
             session has no such memory, its writer thread faults in the pages of the next \
             full-size chunks before a recording thread takes them (the writer's CPU is in the \
             CPU column). The row \
             \"records into fresh \
             pages\" runs in a new process each round (`compare one profile-fresh`, glibc's \
             defaults, the default memory limit), where every record buffer is new: what a \
             session does with memory it has not used before (see the page faults of the fresh \
             processes under Memory and `finalize`).\n",
            m.calls,
            m.rounds,
            thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
                .map_or_else(|_| "not found".to_owned(), |s| format!("`{}`", s.trim()))
        );
        let _ = writeln!(
            w,
            "| variant | ns/call | IQR | x floor | x ours | CPU ns/call, all threads | faults/1k |"
        );
        let _ = writeln!(w, "|---|---:|---:|---:|---:|---:|---:|");
        for v in Variant::ALL.into_iter().filter(|v| !v.is_whatif()) {
            if v == Variant::Bare {
                let b = m.samples(v);
                let _ = writeln!(
                    w,
                    "| {} | {:.2} (absolute) | {:.2}-{:.2} | | | {:.2} (absolute) | {:.2} |",
                    v.label(),
                    median(b),
                    quantile(b, 0.25),
                    quantile(b, 0.75),
                    median(&m.cpu.iter().find(|(w, _)| *w == v).expect("bare").1),
                    m.faults_per_k(v)
                );
                continue;
            }
            variant_row(w, m, v, floor, ours);
            if v == Variant::DisabledByName {
                match &self.compiled_out {
                    Some(Ok(_)) => {
                        for (name, label) in [
                            ("profile", "ours: compiled out `#[profile]` (`enabled` off)"),
                            ("cached", "ours: compiled out `scope!` (`enabled` off)"),
                            (
                                "by_name",
                                "ours: compiled out `sp::region(name).enter()` (`enabled` off)",
                            ),
                        ] {
                            if let Some(f) = self.off_row(name) {
                                let o = scale::get(f, "overhead_ns");
                                let _ = writeln!(
                                    w,
                                    "| {label} | {:.2} | {:.2}-{:.2} | {:.2} | {:.2} | | |",
                                    o,
                                    scale::get(f, "p25_ns"),
                                    scale::get(f, "p75_ns"),
                                    o / floor,
                                    o / ours
                                );
                            }
                        }
                    }
                    Some(Err(e)) => {
                        let _ = writeln!(w, "| ours: compiled out | failed: {e} | | | | | |");
                    }
                    None => {}
                }
            }
        }
        let r = &m.recorded;
        let batches_per_round = m.calls / crate::common::BATCH;
        let made = m.calls * m.rounds as u64
            + (m.calls / 4 / crate::common::BATCH).max(1) * crate::common::BATCH;
        let _ = writeln!(
            w,
            "\nThe compiled-out rows come from `compare-off`, the same source built with \
             `--no-default-features` in a subprocess and timed against its own bare workload \
             (same method, same rounds)."
        );
        if let (Some(p), Some(c), Some(n)) = (
            self.off_row("profile"),
            self.off_row("cached"),
            self.off_row("bare_again"),
        ) {
            let _ = writeln!(
                w,
                "Null control in that build: a second uninstrumented fn measures {:+.2} ns against \
                 the bare one. Same machine code as the bare fn (a lone `jmp` to the workload, read \
                 from the binary): `#[profile]` {}, `scope!` {}.",
                scale::get(n, "overhead_ns"),
                scale::get(p, "same_code_as_bare") == 1.0,
                scale::get(c, "same_code_as_bare") == 1.0
            );
        }
        let _ = writeln!(
            w,
            "\nChecked after the run (each peer made {made} calls, warm-up included, in batches \
             of {} calls, {batches_per_round} batches per round):\n\n\
             - ours: {}\n\
             - hotpath: {} calls in its report, {} of its `async fn`\n\
             - puffin: {} scopes in its frames (calls plus one frame scope per batch)\n\
             - fastrace: {} spans reported (the calls of its two rows, sync and async, plus \
             one root per batch)\n\
             - tracing: spans are real registry spans: {}\n\
             - tracing-chrome: {} span begins in its trace file (every call of its row)\n",
            crate::common::BATCH,
            m.ours_count_note,
            r.hotpath_calls
                .map_or_else(|| "no report read".to_owned(), |n| n.to_string()),
            r.hotpath_async_calls
                .map_or_else(|| "none read".to_owned(), |n| n.to_string()),
            r.puffin_scopes,
            r.fastrace_spans,
            r.tracing_real_spans,
            r.chrome_begins
        );
        let _ = writeln!(
            w,
            "### What-if (a bench-side mimic, not the runtime)\n\n\
             The same `CallSite` and `Guard`, but only the \"session active\" test inline: \
             `enter` and the guard's exit are `#[inline(never)]` functions (see \
             `src/whatif.rs`). It shows what moving the enabled path out of line would give.\n"
        );
        let _ = writeln!(
            w,
            "| variant | ns/call | IQR | x floor | x ours | CPU ns/call, all threads | faults/1k |"
        );
        let _ = writeln!(w, "|---|---:|---:|---:|---:|---:|---:|");
        for v in Variant::ALL.into_iter().filter(|v| v.is_whatif()) {
            variant_row(w, m, v, floor, ours);
        }
        let _ = writeln!(w);
    }

    fn render_targets(&self, w: &mut String) {
        let _ = writeln!(w, "## Targets of the issue\n");
        let _ = writeln!(w, "| target | figure | |");
        let _ = writeln!(w, "|---|---|---|");
        if let Some(m) = &self.micro {
            let floor = m.overhead(Variant::FloorQuanta);
            let prof = m.overhead(Variant::Profile);
            let cached = m.overhead(Variant::Cached);
            let (best_v, best) = Variant::ALL
                .into_iter()
                .filter(|v| v.is_peer())
                .map(|v| (v, m.overhead(v)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .expect("peers");
            let fresh = m.overhead(Variant::ProfileFresh);
            // The tracing layer (issue 14): what each layer adds over a
            // no-op layer (all go through `Layered`), all rows as scoped
            // defaults.
            let registry = m.overhead(Variant::TracingScoped);
            let identity = m.overhead(Variant::TracingIdentity);
            let with_ours = m.overhead(Variant::TracingOurLayer);
            let with_chrome = m.overhead(Variant::TracingChrome);
            let with_tracy = m.overhead(Variant::TracingTracy);
            let (ours_adds, chrome_adds) = (with_ours - identity, with_chrome - identity);
            let _ = writeln!(
                w,
                "| our tracing layer adds <= 0.5x what tracing-chrome's adds | over `#[instrument]` + `Registry` + a no-op layer ({identity:.1} ns): ours +{ours_adds:.1} ns, tracing-chrome +{chrome_adds:.1} ns, ratio {:.2} (tracing-tracy +{:.1} ns) | {} |",
                ours_adds / chrome_adds,
                with_tracy - identity,
                mark(ours_adds <= 0.5 * chrome_adds)
            );
            let _ = writeln!(
                w,
                "| `#[instrument]` + our layer <= 1.2x `#[instrument]` + `Registry` alone | {with_ours:.1} ns vs {registry:.1} ns: {:.2}x (vs `Registry` + a no-op layer, {identity:.1} ns: {:.2}x; no session: {:.1} ns) | {} |",
                with_ours / registry,
                with_ours / identity,
                m.overhead(Variant::TracingOurLayerOff),
                mark(with_ours <= 1.2 * registry)
            );
            let best_cpu = m.cpu_overhead(best_v);
            for (name, v, cpu) in [
                ("`#[profile]`", prof, m.cpu_overhead(Variant::Profile)),
                ("cached guard", cached, m.cpu_overhead(Variant::Cached)),
            ] {
                let _ = writeln!(
                    w,
                    "| {name} enter+exit <= floor + 10 ns | {v:.1} ns vs floor {floor:.1} + 10 = {:.1} | {} |",
                    floor + 10.0,
                    mark(v <= floor + 10.0)
                );
                let _ = writeln!(
                    w,
                    "| {name} <= 0.6x the best peer | {v:.1} ns vs 0.6 x {best:.1} ({}) = {:.1}; ratio {:.2}. CPU of all threads: {cpu:.1} vs {best_cpu:.1} ns, ratio {:.2} | {} |",
                    best_v.label(),
                    0.6 * best,
                    v / best,
                    cpu / best_cpu,
                    mark(v <= 0.6 * best)
                );
            }
            crate::call_targets::write(w, m, floor, prof, mark);
            let _ = writeln!(
                w,
                "| (not an issue target) `#[profile]` recording into fresh pages <= floor + 10 ns | {fresh:.1} ns vs {:.1} | {} |",
                floor + 10.0,
                mark(fresh <= floor + 10.0)
            );
            let by_name = m.overhead(Variant::ByName);
            let _ = writeln!(
                w,
                "| by name <= cached + 30 ns | {by_name:.1} ns = cached + {:.1} | {} |",
                by_name - cached,
                mark(by_name - cached <= 30.0)
            );
            let traced = m.overhead(Variant::TracedOutside);
            let _ = writeln!(
                w,
                "| traced fn outside a trace <= 2 ns | {traced:.2} ns | {} |",
                mark(traced <= 2.0)
            );
            let dis = m.overhead(Variant::DisabledProfile);
            let dis_c = m.overhead(Variant::DisabledCached);
            let _ = writeln!(
                w,
                "| runtime-disabled <= 1.5 ns | `#[profile]` {dis:.2} ns, `scope!` {dis_c:.2} ns | {} |",
                mark(dis.max(dis_c) <= 1.5)
            );
            if let (Some(p), Some(c), Some(b), Some(n)) = (
                self.off_row("profile"),
                self.off_row("cached"),
                self.off_row("bare"),
                self.off_row("bare_again"),
            ) {
                let (po, co) = (scale::get(p, "overhead_ns"), scale::get(c, "overhead_ns"));
                let null = scale::get(n, "overhead_ns");
                let iqr = scale::get(b, "p75_ns") - scale::get(b, "p25_ns");
                let noise = iqr.max(null.abs()).max(0.25);
                let _ = writeln!(
                    w,
                    "| compiled out indistinguishable from none | `#[profile]` {po:+.2} ns, `scope!` {co:+.2} ns vs bare; noise {noise:.2} ns (the largest of: bare's IQR {iqr:.2}, a second bare fn {null:+.2}, 0.25) | {} |",
                    mark(po.abs() <= noise && co.abs() <= noise)
                );
            }
        }
        if let Some(t) = &self.threads {
            let (one, two) = t.overhead(Variant::Profile, false);
            let (c1, c2) = t.overhead(Variant::Profile, true);
            let (f1, f2) = t.overhead(Variant::FloorQuanta, false);
            let _ = writeln!(
                w,
                "| two threads: per-thread cost <= 1.25x one thread (judged on CPU time) | `#[profile]` CPU time {c1:.1} -> {c2:.1} ns, {:.2}x; wall {one:.1} -> {two:.1} ns, {:.2}x (the floor alone, wall: {f1:.1} -> {f2:.1} ns, {:.2}x) | {} |",
                c2 / c1,
                two / one,
                f2 / f1,
                mark(c2 / c1 <= 1.25)
            );
        }
        if let Some(Scale {
            finalize: rows,
            disk,
            ..
        }) = &self.scale
        {
            let find = |events: u64, comp: &str| {
                rows.iter()
                    .find(|r| r.events == events && r.compression == comp && r.limit_mib == 0)
            };
            let col = |r: &FinalizeRow, key: &str| -> Vec<f64> {
                r.runs.iter().map(|f| scale::get(f, key)).collect()
            };
            let big = rows.iter().map(|r| r.events).max().unwrap_or(0);
            let small = rows.iter().map(|r| r.events).min().unwrap_or(0);
            let per_call = |r: &FinalizeRow| {
                median(
                    &r.runs
                        .iter()
                        .map(|f| scale::get(f, "rss_growth_bytes") / scale::get(f, "events"))
                        .collect::<Vec<_>>(),
                )
            };
            if let (Some(r), Some(s1)) = (find(big, "none"), find(small, "none")) {
                let (mem, mem1) = (per_call(r), per_call(s1));
                let _ = writeln!(
                    w,
                    "| memory <= 24 B per recorded call | {mem:.1} B/call (RSS growth over {big} calls, bounded by the default memory limit, which spills past half of it); {mem1:.1} B/call over {small} calls, all held in memory | {} |",
                    mark(mem <= 24.0)
                );
            }
            for (comp, max_s, max_b) in [("none", 1.5, 41.0), ("auto", 10.0, 6.0)] {
                if let Some(r) = find(big, comp) {
                    let secs = median(&col(r, "finalize_s"));
                    let bpe = median(&col(r, "file_bytes")) / r.events as f64;
                    let _ = writeln!(
                        w,
                        "| finalize {big} events, compression {comp}: <= {max_s} s and <= {max_b} B/event | {secs:.2} s, {bpe:.1} B/event | {} |",
                        mark(secs <= max_s && bpe <= max_b)
                    );
                }
            }
            let disk_s = median(
                &disk
                    .iter()
                    .map(|f| scale::get(f, "disk_s"))
                    .collect::<Vec<_>>(),
            );
            if let (Some(none), Some(auto)) = (find(big, "none"), find(big, "auto")) {
                let (none_s, auto_s) = (
                    median(&col(none, "finalize_s")),
                    median(&col(auto, "finalize_s")),
                );
                let _ = writeln!(
                    w,
                    "| finalize {big} events, compression none: <= 1.1x writing and fsyncing its bytes with `std::fs` | {none_s:.3} s vs {disk_s:.3} s: {:.2}x | {} |",
                    none_s / disk_s,
                    mark(none_s <= 1.1 * disk_s)
                );
                let _ = writeln!(
                    w,
                    "| finalize {big} events, compression auto no slower than none | {auto_s:.3} s vs {none_s:.3} s: {:.2}x | {} |",
                    auto_s / none_s,
                    mark(auto_s <= none_s)
                );
            }
            for comp in ["none", "auto"] {
                if let (Some(a), Some(b)) = (find(small, comp), find(big, comp)) {
                    let ratio = median(&col(b, "finalize_s")) / median(&col(a, "finalize_s"));
                    let scale = big as f64 / small as f64;
                    let _ = writeln!(
                        w,
                        "| finalize growth {small} -> {big} events ({comp}) <= {:.0}x | {ratio:.1}x | {} |",
                        scale * 1.1,
                        mark(ratio <= scale * 1.1)
                    );
                }
            }
        }
        if let Some((pct, text)) = self.sampling.as_ref().and_then(crate::sampling::target) {
            let _ = writeln!(
                w,
                "| sampling at 1 kHz on 4 threads <= 2% of the run time | {text} | {} |",
                mark(pct <= 2.0)
            );
        }
    }
}

fn render_threads(w: &mut String, t: &ThreadsResult) {
    let _ = writeln!(w, "## Two threads recording at once\n");
    let _ = writeln!(
        w,
        "Each round runs every variant on one new thread, then on two new threads released \
         together by a barrier (our session active, in memory). ns/call is per thread: the \
         median over the rounds (and over both threads), minus the bare workload run the same \
         way. **wall** is elapsed time; **CPU** is the thread's own CPU time \
         (`CLOCK_THREAD_CPUTIME_ID`, user + system), which another process taking the core does not inflate; \
         **faults** are minor page faults per 1000 calls (first touch of new record memory). \
         The floor and the bare workload share nothing between the threads: their slowdown is \
         the machine's own.\n"
    );
    let _ = writeln!(
        w,
        "| variant | 1 thread, wall | 2 threads, wall | ratio | 1 thread, CPU | 2 threads, CPU | ratio | faults/1k calls, 1 / 2 threads |"
    );
    let _ = writeln!(w, "|---|---:|---:|---:|---:|---:|---:|---:|");
    for row in &t.rows {
        let v = row.variant;
        let (one, two) = t.overhead(v, false);
        let (c1, c2) = t.overhead(v, true);
        let (f1, f2) = t.faults_per_k(v);
        let label = if v == Variant::Bare {
            "bare workload (absolute)"
        } else {
            v.label()
        };
        let _ = writeln!(
            w,
            "| {label} | {one:.2} | {two:.2} | {:.2} | {c1:.2} | {c2:.2} | {:.2} | {f1:.1} / {f2:.1} |",
            two / one,
            c2 / c1
        );
    }
    let _ = writeln!(w);
}

/// Recording while spilling, next to warm memory (issue 25).
fn render_sustained(w: &mut String, rows: &[crate::sustained::Row]) {
    let _ = writeln!(w, "## Recording while spilling\n");
    let _ = writeln!(
        w,
        "Each line is a fresh process recording calls of the simulation's shape (see \
         `finalize` above) on 1 or 4 threads. The cost is the process's CPU time (user + \
         system, every thread, the spill writer's included) over the recording, per call; \
         the warm line records in memory that the same process used for the same calls \
         just before. Scratch bytes are what the spill writer wrote (compressed blocks), \
         per call. Figures are `median [min-max]`.\n"
    );
    let _ = writeln!(
        w,
        "| row | threads | memory limit | calls | CPU ns/call | x warm | wall ns/call/thread | scratch B/call |"
    );
    let _ = writeln!(w, "|---|---:|---|---:|---:|---:|---:|---:|");
    let col = |r: &crate::sustained::Row, key: &str| -> Vec<f64> {
        r.runs.iter().map(|f| crate::scale::get(f, key)).collect()
    };
    let warm = rows
        .iter()
        .find(|r| r.limit_mib == 0)
        .map_or(f64::NAN, |r| median(&col(r, "cpu_ns")));
    for r in rows {
        let cpu = col(r, "cpu_ns");
        let _ = writeln!(
            w,
            "| {} | {} | {} | {} | {} | {:.2} | {} | {} |",
            r.label,
            r.threads,
            if r.limit_mib == 0 {
                "in memory".to_owned()
            } else {
                format!("{} MiB", r.limit_mib)
            },
            spread(&col(r, "calls"), 0),
            spread(&cpu, 1),
            median(&cpu) / warm,
            spread(&col(r, "wall_ns"), 1),
            spread(&col(r, "scratch_bytes_per_call"), 2),
        );
    }
    let _ = writeln!(w);
}

fn render_scale(w: &mut String, scale: &Scale, scratch: &str) {
    let Scale {
        finalize: rows,
        regions,
        disk,
    } = scale;
    let _ = writeln!(w, "## Memory and `finalize`\n");
    let _ = writeln!(
        w,
        "Each line is a fresh process: a session writing to a file in {scratch} (set `TMPDIR` \
         to move it) records `N` calls shaped like a small simulation (a step holding four \
         phases, two of them calling a leaf: 7 regions, depths 0-2, each call doing 0-63 \
         pseudo-random rounds of work, so the columns compress like real data), then a timed \
         `sp::finalize()`. RSS growth is VmRSS after the calls minus before (from \
         `/proc/self/status`); peak RSS is VmHWM at the end; the allocator is left at glibc's \
         defaults, so record buffers are fresh pages (hence the page faults: one per 4 KiB of \
         24-byte records, or per 2 MiB in the 2 MiB chunks mapped in huge pages). With the default memory limit (256 MiB) the session spills finished \
         buffers to a scratch file past half of it, and `finalize` places calls through a \
         scratch file once they exceed half of it; the last line lifts the limit to show what \
         that costs. Figures are `median [min-max]` over {} runs.\n",
        rows.first().map_or(0, |r| r.runs.len())
    );
    let _ = writeln!(
        w,
        "| events | compression | memory limit | page faults/1k calls | RSS growth B/call | finalize s | file B/event | peak RSS MiB |"
    );
    let _ = writeln!(w, "|---:|---|---|---:|---:|---:|---:|---:|");
    for r in rows {
        let col = |key: &str| -> Vec<f64> { r.runs.iter().map(|f| scale::get(f, key)).collect() };
        let per = |key: &str| -> Vec<f64> {
            r.runs
                .iter()
                .map(|f| scale::get(f, key) / scale::get(f, "events"))
                .collect()
        };
        let mib: Vec<f64> = col("peak_rss_bytes")
            .iter()
            .map(|b| b / 1048576.0)
            .collect();
        let _ = writeln!(
            w,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.events,
            r.compression,
            if r.limit_mib == 0 {
                "default (256 MiB)".to_owned()
            } else {
                format!("{} MiB", r.limit_mib)
            },
            spread(
                &per("minor_faults")
                    .iter()
                    .map(|f| f * 1000.0)
                    .collect::<Vec<_>>(),
                2
            ),
            spread(&per("rss_growth_bytes"), 1),
            spread(&col("finalize_s"), 3),
            spread(&per("file_bytes"), 2),
            spread(&mib, 0)
        );
    }
    let disk_s: Vec<f64> = disk.iter().map(|f| scale::get(f, "disk_s")).collect();
    let _ = writeln!(
        w,
        "\nThe disk, in the same runs: {:.0} MB (the uncompressed big file's columns) written 1 MiB \
         at a time with `std::fs` and fsynced, as `finalize` fsyncs its file: {} s.",
        disk.first().map_or(0.0, |f| scale::get(f, "bytes") / 1e6),
        spread(&disk_s, 3)
    );
    let col = |key: &str| -> Vec<f64> { regions.runs.iter().map(|f| scale::get(f, key)).collect() };
    let _ = writeln!(
        w,
        "\nA file with {} distinct regions (one call each, by name; default compression):\n",
        regions.regions
    );
    let _ = writeln!(
        w,
        "| regions | registering + one call each, s | finalize s | file MiB | peak RSS MiB |"
    );
    let _ = writeln!(w, "|---:|---:|---:|---:|---:|");
    let mib = |key: &str| -> Vec<f64> { col(key).iter().map(|b| b / 1048576.0).collect() };
    let _ = writeln!(
        w,
        "| {} | {} | {} | {} | {} |\n",
        spread(&col("regions"), 0),
        spread(&col("register_s"), 3),
        spread(&col("finalize_s"), 3),
        spread(&mib("file_bytes"), 2),
        spread(&mib("peak_rss_bytes"), 0)
    );
}
