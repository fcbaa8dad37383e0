//! Memory per recorded call, `finalize` of 1M and 10M events with and
//! without compression, and a file with 100k distinct regions.
//!
//! Each measurement runs in a fresh child process (`compare finalize ...`,
//! `compare regions ...`), so that its RSS and peak RSS are its own and no
//! heap left over by another measurement hides or adds memory.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use scope_profiler::{self as sp, Compression, Options};

use scope_profiler::__private::CallSite;

/// A `key=value` line a child prints, read back by the parent.
pub type Fields = Vec<(String, f64)>;

pub fn status_kib(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Minor page faults of the process so far.
pub fn minor_faults(who: i32) -> u64 {
    // SAFETY: `getrusage` only writes the struct it is given.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut u);
        u.ru_minflt as u64
    }
}

fn compression(name: &str) -> Compression {
    match name {
        "none" => Compression::None,
        "auto" => Compression::Auto,
        other => match other.strip_prefix("gzip").and_then(|l| l.parse().ok()) {
            Some(level) => Compression::Gzip(level),
            None => panic!("unknown compression {other:?} (none | auto | gzipN)"),
        },
    }
}

/// The regions of [`mixed`]: a step, four phases in it, two leaves.
static SITES: [CallSite; 7] = [
    CallSite::new("sim::step", file!(), line!()),
    CallSite::new("sim::phase_rhs", file!(), line!()),
    CallSite::new("sim::phase_solve", file!(), line!()),
    CallSite::new("sim::phase_update", file!(), line!()),
    CallSite::new("sim::phase_output", file!(), line!()),
    CallSite::new("sim::kernel", file!(), line!()),
    CallSite::new("sim::io", file!(), line!()),
];

/// Work of a variable length: `n` multiply-rotate rounds.
#[inline(never)]
fn spin(n: u64) -> u64 {
    let mut acc = std::hint::black_box(n);
    for _ in 0..n {
        acc = acc.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(7);
    }
    std::hint::black_box(acc)
}

/// Records exactly `events` calls shaped like a small simulation, so that
/// the file's columns compress like real data, not like one region called
/// back to back: a `step` (depth 0) holding four phases (depth 1), two of
/// which call a leaf (depth 2), each call doing a pseudo-random 0-63 rounds
/// of work.
pub fn mixed(events: u64) {
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng & 63
    };
    let mut left = events;
    while left > 0 {
        let _step = SITES[0].enter();
        left -= 1;
        for phase in 1..=4 {
            if left == 0 {
                break;
            }
            let _phase = SITES[phase].enter();
            left -= 1;
            spin(next());
            if phase % 2 == 1 && left > 0 {
                let _leaf = SITES[5 + phase / 2].enter();
                left -= 1;
                spin(next());
            }
        }
    }
}

/// Child: records `events` calls of [`mixed`] in a session writing to
/// `dir`, then finalizes it. Prints RSS growth, recording and finalize
/// times, file size and peak RSS.
/// `limit_mib` sets `Options::memory_limit` (0: the default).
pub fn child_finalize(events: u64, comp: &str, dir: &Path, limit_mib: usize) {
    let path = dir.join(format!(
        "finalize-{events}-{comp}-{}.h5",
        std::process::id()
    ));
    let mut options = Options::new()
        .file_path(&path)
        .compression(compression(comp))
        .verbose(false);
    if limit_mib > 0 {
        options = options.memory_limit(limit_mib << 20);
    }
    let session = sp::setup(options).expect("setup");
    let rss0 = status_kib("VmRSS:");
    let faults0 = minor_faults(libc::RUSAGE_SELF);
    let t = Instant::now();
    mixed(events);
    let ns = t.elapsed().as_nanos() as f64 / events as f64;
    let faults = minor_faults(libc::RUSAGE_SELF) - faults0;
    let rss1 = status_kib("VmRSS:");
    let t = Instant::now();
    let results = session.finalize().expect("finalize");
    let secs = t.elapsed().as_secs_f64();
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let recorded: u64 = sp::get_all_regions()
        .iter()
        .map(|(_, r)| r.num_calls())
        .sum();
    drop(results);
    let hwm = status_kib("VmHWM:");
    remove_and_settle(&path);
    println!(
        "events={recorded} record_ns={ns:.3} minor_faults={faults} rss_growth_bytes={} finalize_s={secs:.4} file_bytes={bytes} rss_before_finalize_bytes={} peak_rss_bytes={}",
        (rss1.saturating_sub(rss0)) * 1024,
        rss1 * 1024,
        hwm * 1024
    );
}

/// Child: one call in each of `n` distinct regions (by name), then a
/// timed `finalize` to a file.
pub fn child_regions(n: usize, comp: &str, dir: &Path) {
    let path = dir.join(format!("regions-{n}-{comp}-{}.h5", std::process::id()));
    let names: Vec<String> = (0..n).map(|i| format!("bench::region_{i:06}")).collect();
    let session = sp::setup(
        Options::new()
            .file_path(&path)
            .compression(compression(comp))
            .verbose(false),
    )
    .expect("setup");
    let t = Instant::now();
    for name in &names {
        sp::region(name).run(|| ());
    }
    let register_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let results = session.finalize().expect("finalize");
    let secs = t.elapsed().as_secs_f64();
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let regions = sp::get_all_regions().len();
    drop(results);
    remove_and_settle(&path);
    println!(
        "regions={regions} register_s={register_s:.4} finalize_s={secs:.4} file_bytes={bytes} peak_rss_bytes={}",
        status_kib("VmHWM:") * 1024
    );
}

/// Removes the file at `path` (written by a measurement, after it) and
/// waits until the file system has committed the removal. On a file system
/// mounted with `discard` (this machine's ext4), the freed blocks of a big
/// fsynced file are trimmed at the next journal commit, up to 5 s later:
/// in the middle of the next measurement, whose writes it slowed by up to
/// 2x (the walk of an uncompressed 10M-event finalize: 0.24 s, or 0.48 s
/// right after such a removal). `syncfs` commits now.
fn remove_and_settle(path: &Path) {
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let _ = std::fs::remove_file(path);
    if let Ok(dir) = std::fs::File::open(&dir) {
        use std::os::fd::AsRawFd;
        // SAFETY: `dir` is an open descriptor for the call's duration.
        unsafe { libc::syncfs(dir.as_raw_fd()) };
    }
}

/// Child: writes `bytes` bytes (1 MiB at a time) to a new file in `dir`
/// with plain `std::fs` and fsyncs it: the disk's speed for what an
/// uncompressed `finalize` writes. Prints the seconds.
pub fn child_disk(bytes: u64, dir: &Path) {
    use std::io::Write;
    let path = dir.join(format!("disk-{bytes}-{}.bin", std::process::id()));
    // Not zeros, which a file system could store sparsely or compress.
    let block: Vec<u8> = (0..1u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let t = Instant::now();
    let mut file = std::fs::File::create(&path).expect("create");
    let mut left = bytes;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        file.write_all(&block[..n]).expect("write");
        left -= n as u64;
    }
    file.sync_all().expect("fsync");
    drop(file);
    let secs = t.elapsed().as_secs_f64();
    remove_and_settle(&path);
    println!("bytes={bytes} disk_s={secs:.4}");
}

/// Runs this binary as a child with `args` and parses its last line.
pub fn spawn(args: &[String]) -> Fields {
    spawn_exe(&std::env::current_exe().expect("own path"), args)
}

/// [`spawn`] of another build of this program (`exe`).
pub fn spawn_exe(exe: &std::path::Path, args: &[String]) -> Fields {
    let out = Command::new(exe)
        .args(args)
        .output()
        .expect("run the child");
    assert!(
        out.status.success(),
        "child {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    parse_fields(&String::from_utf8_lossy(&out.stdout))
}

/// The `key=value` pairs of the last non-empty line of `text`.
pub fn parse_fields(text: &str) -> Fields {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            Some((k.to_owned(), v.parse().ok()?))
        })
        .collect()
}

/// The value of `key` in `fields` (NaN if missing).
pub fn get(fields: &Fields, key: &str) -> f64 {
    fields
        .iter()
        .find(|(k, _)| k == key)
        .map_or(f64::NAN, |(_, v)| *v)
}

/// One finalize configuration, repeated.
pub struct FinalizeRow {
    pub events: u64,
    pub compression: &'static str,
    /// `Options::memory_limit` in MiB; 0 for the default.
    pub limit_mib: usize,
    pub runs: Vec<Fields>,
}

/// The 100k-region file, repeated.
pub struct RegionsRow {
    pub regions: usize,
    pub runs: Vec<Fields>,
}

/// Every scale measurement.
pub struct Scale {
    pub finalize: Vec<FinalizeRow>,
    pub regions: RegionsRow,
    /// Plain `std::fs` writes and an fsync of the bytes of the big
    /// uncompressed file ([`child_disk`]), interleaved with the finalize
    /// runs.
    pub disk: Vec<Fields>,
}

/// Every scale measurement, each `reps` times in fresh processes.
pub fn run(reps: usize, big: u64, small: u64, regions: usize, dir: &Path) -> Scale {
    let dir_s = dir.display().to_string();
    let mut rows = Vec::new();
    for &events in &[small, big] {
        for comp in ["none", "auto"] {
            rows.push(FinalizeRow {
                events,
                compression: comp,
                limit_mib: 0,
                runs: Vec::new(),
            });
        }
    }
    // The big file again with a memory limit that holds every record and
    // every placed call: what the default limit's spilling costs.
    rows.push(FinalizeRow {
        events: big,
        compression: "none",
        limit_mib: 2048,
        runs: Vec::new(),
    });
    // Repetitions interleaved, so that a slow spell of the machine spreads
    // over every configuration.
    let mut disk = Vec::new();
    // The columns of the uncompressed file: 5 of 8 bytes an event.
    let disk_bytes = big * 40;
    for _ in 0..reps {
        eprintln!("  {disk_bytes} bytes written and fsynced with std::fs");
        disk.push(spawn(&[
            "disk".into(),
            disk_bytes.to_string(),
            dir_s.clone(),
        ]));
        for row in rows.iter_mut() {
            eprintln!(
                "  finalize {} events, compression {}, memory limit {} MiB (0: default)",
                row.events, row.compression, row.limit_mib
            );
            row.runs.push(spawn(&[
                "finalize".into(),
                row.events.to_string(),
                row.compression.into(),
                dir_s.clone(),
                row.limit_mib.to_string(),
            ]));
        }
    }
    let mut r = RegionsRow {
        regions,
        runs: Vec::new(),
    };
    for _ in 0..reps {
        eprintln!("  {regions} distinct regions");
        r.runs.push(spawn(&[
            "regions".into(),
            regions.to_string(),
            "auto".into(),
            dir_s.clone(),
        ]));
    }
    Scale {
        finalize: rows,
        regions: r,
        disk,
    }
}
