//! Hostile input (issues 26 and 33): the fuzzing corpus (`fuzz/corpus`),
//! its seeds (`fuzz/seeds`) and a few thousand fresh, seeded mutations of
//! real files (ours, the Python package's, the C API's) are read **in this
//! process** by `ProfileReader` (open, every event chunk, exports that walk
//! the call tree) and `read_profile`, the pure-Rust HDF5 reader having no
//! C library left to crash. Each input is read:
//!
//! - inside `catch_unwind`: a panic is a failure (0 allowed), also one in a
//!   column's reading thread that the reader turns into an error (the
//!   panic hook counts every panic while an input is read);
//! - under a watchdog: an input not read in [`HANG`] is a failure;
//! - under a counting global allocator ([`Counting`]): no single
//!   allocation may exceed [`allocation_bound`] of the input's size (1100
//!   times it plus 80 MiB: the reader's own promise, values decoded at
//!   most 1100 times the bytes stored plus 1 MiB, and chunks of at most
//!   64 MiB). An allocation past it is refused, which aborts this test
//!   binary ("memory allocation of N bytes failed") after one line naming
//!   the input, saved as `current-input` in the test's directory.
//!
//! Failing inputs are saved in the test's directory (`failed-<i>.h5`), its
//! path printed. A sample also goes through `scope-prof`: exit code 0, or
//! 2 with one line naming the file.
//!
//! `SP_HOSTILE_MUTATIONS` sets the number of fresh mutations (3000 by
//! default), `SP_HOSTILE_SEED` their seed. A debug build reads the default
//! 3246 inputs in about 10 s (2 cores, another build beside it), the
//! `scope-prof` sample in under 1 s more.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use integration_tests::{prerequisite_missing, temp_dir};
use scope_profiler::{self as sp, Compression, Profile, RegionRow};
use scope_profiler_reader::ProfileReader;

/// How long one input may take before it counts as a hang.
const HANG: std::time::Duration = std::time::Duration::from_secs(5);

/// The largest single allocation an input of `len` bytes may make its
/// reader ask for: 1100 times its size (the reader decodes at most 1100
/// times the bytes a dataset stores, deflate's best ratio, plus 1 MiB) plus
/// 80 MiB (a chunk is at most 64 MiB, its stored bytes 1/64 more).
fn allocation_bound(len: usize) -> usize {
    len.saturating_mul(1100).saturating_add(80 << 20)
}

/// The global allocator of this test binary: `System`, counting the
/// largest single allocation while an input is read, and refusing one past
/// [`BOUND`].
struct Counting;

/// The bound on one allocation while an input is read; `usize::MAX` when
/// none is.
static BOUND: AtomicUsize = AtomicUsize::new(usize::MAX);
/// The largest single allocation asked for while an input was read.
static LARGEST: AtomicUsize = AtomicUsize::new(0);
/// Where the input being read is saved, for the line an allocation past
/// the bound prints.
static CURRENT: OnceLock<PathBuf> = OnceLock::new();

impl Counting {
    /// Whether an allocation of `size` bytes may go ahead (it is counted).
    /// One past the bound is refused after a line naming the input: the
    /// program then aborts, as for any failed allocation. Nothing here
    /// allocates.
    fn admit(size: usize) -> bool {
        let bound = BOUND.load(Ordering::Relaxed);
        if bound == usize::MAX {
            return true;
        }
        LARGEST.fetch_max(size, Ordering::Relaxed);
        if size <= bound {
            return true;
        }
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "hostile: FAILED: the reader asked for {size} bytes at once, past the bound of \
             {bound}; the input is saved at {}",
            CURRENT
                .get()
                .map_or(Path::new("?"), |p| p.as_path())
                .display()
        );
        false
    }
}

// SAFETY: every method hands the caller's layout and pointer to `System`
// unchanged, or returns null (a failed allocation, which callers handle).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !Counting::admit(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: `alloc`'s contract is the caller's, passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !Counting::admit(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: `alloc_zeroed`'s contract is the caller's, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` (every allocation here
        // is) with `layout`, as the caller guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !Counting::admit(new_size) {
            return std::ptr::null_mut();
        }
        // SAFETY: `ptr` was allocated by `System` with `layout`; the rest
        // of `realloc`'s contract is the caller's, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// xorshift64*: the same mutations on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A file's bytes and what it is.
type Named = (String, Vec<u8>);

/// A small profile of ours: three nested regions on two threads, one call
/// with an odd name, tags and metadata.
fn our_profile() -> Profile {
    let mut p = Profile::default();
    p.region_names = vec!["main".into(), "solve".into(), "io \u{0} ☃".into()];
    p.metadata
        .push(("run".into(), sp::Value::Str("hostile".into())));
    let mut start = 1_000i64;
    for (region, calls) in [(0u32, 40u64), (1, 300), (2, 60)] {
        let mut row = RegionRow::default();
        row.region_id = region;
        row.event_offset = p.events.start_ns.len() as u64;
        row.event_count = calls;
        p.rows.push(row);
        for i in 0..calls as i64 {
            start += 7 + i % 13;
            let id = p.events.start_ns.len() as i64;
            p.events.start_ns.push(start);
            p.events.durations.push(5 + (i * 7919) % 1000);
            p.events.call_ids.push(id);
            p.events
                .parent_ids
                .push(if region == 0 { -1 } else { i % 40 });
            p.events.thread_ids.push(i % 2);
        }
    }
    for i in 0..2 {
        let mut t = sp::ThreadInfo::default();
        t.index = i;
        t.name = format!("worker-{i}");
        p.threads.push(t);
    }
    p
}

/// The files mutated (ours, plain and compressed; the reference files; the
/// corpus's profiles) and the rest of the corpus, read as it is. Each as
/// (name, bytes).
fn seeds(dir: &Path) -> (Vec<Named>, Vec<Named>) {
    let mut seeds = Vec::new();
    for (name, compression) in [
        ("ours.h5", Compression::None),
        ("ours-gz.h5", Compression::Gzip(4)),
    ] {
        let path = dir.join(name);
        sp::write_profile(&our_profile(), &path, compression).expect("write our file");
        seeds.push((
            name.to_owned(),
            std::fs::read(&path).expect("read our file"),
        ));
    }
    // The seeds of the fuzz targets: ours, the Python package's reference
    // files, the C API's schema-2 file.
    let seed_dir = repo_root().join("fuzz/seeds");
    let mut seed_files: Vec<PathBuf> = std::fs::read_dir(&seed_dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    seed_files.sort();
    if seed_files.is_empty() {
        prerequisite_missing(&format!("no seeds in {}", seed_dir.display()));
    }
    for path in seed_files {
        let name = format!("seeds/{}", path.file_name().unwrap_or_default().display());
        seeds.push((name, std::fs::read(&path).expect("read a seed")));
    }
    let corpus = repo_root().join("fuzz/corpus");
    let mut corpus_files = Vec::new();
    for target in std::fs::read_dir(&corpus).into_iter().flatten().flatten() {
        for file in std::fs::read_dir(target.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            corpus_files.push(file.path());
        }
    }
    corpus_files.sort();
    if corpus_files.is_empty() {
        prerequisite_missing(&format!("no corpus in {}", corpus.display()));
    }
    let mut replay = Vec::new();
    for path in corpus_files {
        let name = path
            .strip_prefix(&corpus)
            .unwrap_or(&path)
            .display()
            .to_string();
        let bytes = std::fs::read(&path).expect("read the corpus");
        // Profiles of the corpus are mutated too; the rest (TOML files,
        // edit scripts) is only read as it is.
        if name.ends_with(".json") || bytes.starts_with(b"\x89HDF") {
            seeds.push((name, bytes));
        } else {
            replay.push((name, bytes));
        }
    }
    (seeds, replay)
}

/// Positions of the little-endian integers of `width` bytes in `bytes`
/// whose value is small and not zero: the sizes, counts and offsets of
/// HDF5's structures (and our values) are among them.
fn size_fields(bytes: &[u8], width: usize) -> Vec<usize> {
    (0..bytes.len().saturating_sub(width))
        .filter(|&i| {
            let mut v = [0u8; 8];
            v[..width].copy_from_slice(&bytes[i..i + width]);
            let v = u64::from_le_bytes(v);
            (1..1 << 20).contains(&v) && (width == 8 || v > 8)
        })
        .collect()
}

/// Mutation `n` of `seed` (the same on every run): bit flips, byte
/// overwrites, truncations, spliced blocks, or a structure-aware edit (a
/// size, count or offset field made huge, zero, negative or off by one).
fn mutate(seed: &[u8], n: u64, fields: &[Vec<usize>; 2]) -> Vec<u8> {
    let mut rng = Rng(n.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut bytes = seed.to_vec();
    if bytes.is_empty() {
        return bytes;
    }
    let len = bytes.len();
    match rng.below(7) {
        0 => {
            for _ in 0..1 + rng.below(8) {
                let bit = rng.below(len * 8);
                bytes[bit / 8] ^= 1 << (bit % 8);
            }
        }
        1 => {
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(len);
                bytes[at] = [0, 0xff, 0x7f, 0x80, rng.next() as u8][rng.below(5)];
            }
        }
        2 => bytes.truncate(rng.below(len)),
        3 => {
            let (from, to, n) = (rng.below(len), rng.below(len), 1 + rng.below(64));
            let block: Vec<u8> = bytes[from..(from + n).min(len)].to_vec();
            let end = (to + block.len()).min(len);
            bytes[to..end].copy_from_slice(&block[..end - to]);
        }
        kind => {
            let width = if kind == 6 { 4 } else { 8 };
            let candidates = &fields[usize::from(width == 4)];
            if candidates.is_empty() {
                bytes.truncate(len / 2);
                return bytes;
            }
            for _ in 0..1 + rng.below(2) {
                let at = candidates[rng.below(candidates.len())];
                let mut old = [0u8; 8];
                old[..width].copy_from_slice(&bytes[at..at + width]);
                let old = u64::from_le_bytes(old);
                let new = match rng.below(7) {
                    0 => 0,
                    1 => u64::MAX,
                    2 => 1_000_000_000_000_000,
                    3 => old + 1,
                    4 => old.saturating_sub(1),
                    5 => old << (8 + rng.below(40)),
                    _ => 1 << 62,
                };
                bytes[at..at + width].copy_from_slice(&new.to_le_bytes()[..width]);
            }
        }
    }
    bytes
}

/// The inputs: every seed and corpus file as is, then `count` mutations
/// of the seeds in turn.
struct Inputs {
    seeds: Vec<Named>,
    replay: Vec<Named>,
    fields: Vec<[Vec<usize>; 2]>,
    seed: u64,
    count: usize,
}

impl Inputs {
    fn load(dir: &Path, count: usize, seed: u64) -> Inputs {
        let (seeds, replay) = seeds(dir);
        let fields = seeds
            .iter()
            .map(|(_, b)| [size_fields(b, 8), size_fields(b, 4)])
            .collect();
        Inputs {
            seeds,
            replay,
            fields,
            seed,
            count,
        }
    }

    fn len(&self) -> usize {
        self.seeds.len() + self.replay.len() + self.count
    }

    /// Input `i`: its description and bytes.
    fn get(&self, i: usize) -> (String, Vec<u8>) {
        if let Some((name, bytes)) = self.seeds.iter().chain(&self.replay).nth(i) {
            return (name.clone(), bytes.clone());
        }
        let m = i - self.seeds.len() - self.replay.len();
        let s = m % self.seeds.len();
        let n = self.seed.wrapping_add(m as u64);
        let bytes = mutate(&self.seeds[s].1, n, &self.fields[s]);
        (format!("mutation {n} of {}", self.seeds[s].0), bytes)
    }
}

/// Everything a reader does with a file: open it, read every event, walk
/// the call tree, read it whole. Errors are fine; nothing else is. Returns
/// what it did (for the test's counts): whether `ProfileReader::open` and
/// `read_profile` succeeded.
fn read_everything(path: &Path) -> (bool, bool) {
    let opened = match ProfileReader::open(path) {
        Ok(reader) => {
            let _ = reader.region_names().len() + reader.threads().len();
            for chunk in reader.chunks(4096) {
                if chunk.is_err() {
                    break;
                }
            }
            let _ = reader.folded(&mut std::io::sink());
            let _ = reader.chrome_trace(&mut std::io::sink());
            true
        }
        Err(_) => false,
    };
    (opened, sp::read_profile(path).is_ok())
}

/// Whether an input is being read: panics then are recorded in [`PANICS`].
static READING: AtomicBool = AtomicBool::new(false);
/// The panics seen while an input was read (on any thread: the reader's
/// column threads turn theirs into errors).
static PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// How reading one input went.
enum Outcome {
    /// Read (with errors or not): whether `open` and `read_profile` did.
    Read(bool, bool),
    /// A panic, with its message.
    Panicked(String),
    /// No answer in [`HANG`].
    Hung,
}

/// One input read at a time ([`BOUND`], [`READING`] and [`PANICS`] are
/// the process's).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// `read(path)` on a thread of its own, in `catch_unwind`, with a watchdog
/// and the allocation bound for an input of `len` bytes armed.
fn read_watched(path: &Path, len: usize, read: fn(&Path) -> (bool, bool)) -> Outcome {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let earlier = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| match READING.load(Ordering::SeqCst) {
            true => PANICS
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(info.to_string()),
            false => earlier(info),
        }));
    });
    PANICS.lock().unwrap_or_else(|e| e.into_inner()).clear();
    READING.store(true, Ordering::SeqCst);
    BOUND.store(allocation_bound(len), Ordering::SeqCst);
    let (done, answer) = std::sync::mpsc::channel();
    let owned = path.to_owned();
    std::thread::Builder::new()
        .name("hostile-reader".into())
        .spawn(move || {
            let read = std::panic::catch_unwind(|| read(&owned));
            let _ = done.send(read.ok());
        })
        .expect("a reading thread");
    let answer = answer.recv_timeout(HANG);
    BOUND.store(usize::MAX, Ordering::SeqCst);
    READING.store(false, Ordering::SeqCst);
    let panics = std::mem::take(&mut *PANICS.lock().unwrap_or_else(|e| e.into_inner()));
    match answer {
        Err(_) => Outcome::Hung,
        Ok(_) if !panics.is_empty() => Outcome::Panicked(panics.join("; ")),
        Ok(None) => Outcome::Panicked("a panic without a message".into()),
        Ok(Some((opened, read))) => Outcome::Read(opened, read),
    }
}

/// A failed input: what went wrong, and where it is saved.
#[derive(Debug)]
struct Failure {
    input: usize,
    what: String,
    saved: PathBuf,
}

#[test]
fn mutated_files_give_errors_never_crashes() {
    let dir = temp_dir("hostile-mutations");
    let started = std::time::Instant::now();
    let count = std::env::var("SP_HOSTILE_MUTATIONS").map_or(3000, |v| v.parse().expect("a count"));
    let seed = std::env::var("SP_HOSTILE_SEED").map_or(26, |v| v.parse().expect("a seed"));
    let inputs = Inputs::load(&dir, count, seed);
    let total = inputs.len();
    let current = dir.join("current-input");
    CURRENT
        .set(current.clone())
        .expect("one hostile run per process");
    let mut failures: Vec<Failure> = Vec::new();
    let (mut opened, mut read, mut largest) = (0, 0, (0usize, 0usize, 0usize));
    for i in 0..total {
        let (what, bytes) = inputs.get(i);
        std::fs::write(&current, &bytes).expect("write the input");
        std::fs::write(dir.join("current-input.txt"), &what).expect("write its name");
        LARGEST.store(0, Ordering::SeqCst);
        let outcome = read_watched(&current, bytes.len(), read_everything);
        let asked = LARGEST.load(Ordering::SeqCst);
        if asked > largest.0 {
            largest = (asked, bytes.len(), i);
        }
        let what = match outcome {
            Outcome::Read(o, r) => {
                opened += usize::from(o);
                read += usize::from(r);
                continue;
            }
            Outcome::Panicked(message) => format!("panicked: {message}"),
            Outcome::Hung => format!("no answer in {HANG:?}"),
        };
        let hung = what.starts_with("no answer");
        failures.push(save(&dir, &inputs, i, what));
        // The hung reading thread is still at work: read no more.
        if hung {
            break;
        }
    }
    let in_process = started.elapsed();
    // A sample through the CLI: exit 0, or 2 with one line naming the file.
    let mut through_cli = [0usize; 2];
    for i in (0..total).step_by(97) {
        let (what, bytes) = inputs.get(i);
        let path = dir.join(format!("cli-{i}.h5"));
        std::fs::write(&path, bytes).expect("write");
        let out = Command::new(env!("CARGO_BIN_EXE_scope-prof"))
            .env("SCOPE_PROF_OPEN_TIMEOUT", "5")
            .args(["export", "folded", "-o", "-"])
            .arg(&path)
            .output()
            .expect("run scope-prof");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        let named = matches!(lines.as_slice(), [one] if one.starts_with("scope-prof: error: ")
            && one.contains(&path.display().to_string()));
        match out.status.code() {
            Some(0) => through_cli[0] += 1,
            Some(2) if named => through_cli[1] += 1,
            _ => failures.push(Failure {
                input: i,
                what: format!("{what}: scope-prof gave {:?}: {stderr}", out.status),
                saved: path.clone(),
            }),
        }
        let _ = std::fs::remove_file(&path);
    }
    eprintln!(
        "hostile: {total} inputs ({} seeds, {count} mutations, seed {seed}; {} corpus files read \
         as they are) read in this process in {:.1} s ({opened} opened, {read} read whole by \
         read_profile); largest single allocation {} bytes (input {} of {} bytes; bound {}); \
         {} through scope-prof ({} read, {} refused with one line) in {:.1} s",
        inputs.seeds.len(),
        inputs.replay.len(),
        in_process.as_secs_f64(),
        largest.0,
        largest.2,
        largest.1,
        allocation_bound(largest.1),
        through_cli[0] + through_cli[1],
        through_cli[0],
        through_cli[1],
        (started.elapsed() - in_process).as_secs_f64(),
    );
    // The path meant was taken: good files open, mutations are refused.
    assert!(opened > 0 && opened < total, "{opened} of {total} opened");
    assert!(through_cli[0] > 0 && through_cli[1] > 0, "{through_cli:?}");
    let report: Vec<String> = failures
        .iter()
        .map(|f| format!("input {} ({}): {}", f.input, f.saved.display(), f.what))
        .collect();
    assert!(
        failures.is_empty(),
        "{} inputs failed (saved in {}):\n{}",
        failures.len(),
        dir.display(),
        report.join("\n")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The harness itself: a panic (also on a thread the reader joins and
/// turns into an error) and a hang are reported as such, not as reads; an
/// allocation past the bound aborts the binary with one line naming the
/// input (in a child: this test run again).
#[test]
fn the_harness_reports_panics_hangs_and_huge_allocations() {
    const CHILD: &str = "SP_HOSTILE_HUGE_ALLOCATION";
    let here = Path::new("hostile-harness");
    if std::env::var_os(CHILD).is_some() {
        let _ = CURRENT.set(here.to_owned());
        read_watched(here, 1000, |_| {
            let huge: Vec<u8> = Vec::with_capacity(std::hint::black_box(1 << 30));
            (huge.capacity() > 0, false)
        });
        unreachable!("the allocation was allowed");
    }
    let panics = |_: &Path| -> (bool, bool) { panic!("the reader panicked") };
    assert!(
        matches!(read_watched(here, 0, panics), Outcome::Panicked(m) if m.contains("the reader panicked"))
    );
    let joined = |_: &Path| -> (bool, bool) {
        let inner = std::thread::spawn(|| panic!("a column thread panicked")).join();
        (inner.is_err(), true)
    };
    assert!(
        matches!(read_watched(here, 0, joined), Outcome::Panicked(m) if m.contains("a column thread"))
    );
    let small = |_: &Path| -> (bool, bool) { (!vec![0u8; 1 << 20].is_empty(), true) };
    assert!(matches!(
        read_watched(here, 0, small),
        Outcome::Read(true, true)
    ));
    let hangs = |_: &Path| -> (bool, bool) {
        std::thread::sleep(HANG * 3);
        (true, true)
    };
    assert!(matches!(read_watched(here, 0, hangs), Outcome::Hung));
    let out = Command::new(std::env::current_exe().expect("the test binary"))
        .args([
            "the_harness_reports_panics_hangs_and_huge_allocations",
            "--exact",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .output()
        .expect("run the test binary");
    let stderr = String::from_utf8_lossy(&out.stderr);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(6), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "hostile: FAILED: the reader asked for {} bytes at once, past the bound of {}; \
             the input is saved at hostile-harness",
            1 << 30,
            allocation_bound(1000)
        )),
        "{stderr}"
    );
}

/// Saves input `i` where a failure report can point to it.
fn save(dir: &Path, inputs: &Inputs, i: usize, what: String) -> Failure {
    let (description, bytes) = inputs.get(i);
    let saved = dir.join(format!("failed-{i}.h5"));
    std::fs::write(&saved, bytes).expect("save the input");
    Failure {
        input: i,
        what: format!("{description}: {what}"),
        saved,
    }
}

/// Totals that overflow when summed (two aggregate rows of one region at
/// i64::MAX and u64::MAX calls): `inspect` and `diff` panicked on `+=` in
/// debug builds ("attempt to add with overflow"); they wrap now.
#[test]
fn totals_that_overflow_when_summed_do_not_panic() {
    let dir = temp_dir("hostile-sums");
    let path = dir.join("sums.json");
    let big = i64::MAX;
    let row = |rank: u32| {
        format!(
            r#"{{"name": "r", "rank": {rank}, "aggregate": {{"count": {big}, "total": {big}, "exclusive": {big}}}}}"#
        )
    };
    std::fs::write(
        &path,
        format!(
            r#"{{"format": "scope-profiler-profile", "format_version": 1, "regions": [{}, {}, {}]}}"#,
            row(0),
            row(1),
            row(2)
        ),
    )
    .expect("write");
    for args in [
        &["inspect"][..],
        &["inspect", "--json"],
        &["export", "json", "-o", "-"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_scope-prof"))
            .args(args)
            .arg(&path)
            .output()
            .expect("run scope-prof");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            matches!(out.status.code(), Some(0 | 2)),
            "{args:?}: {stderr}"
        );
    }
    let out = Command::new(env!("CARGO_BIN_EXE_scope-prof"))
        .arg("diff")
        .args([&path, &path])
        .output()
        .expect("run scope-prof");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "diff: {stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The reading process runs under a memory cap (`SCOPE_PROF_MEMORY_LIMIT`,
/// MiB; by default 4 GiB plus 64 times the files' size): what the reader would
/// allocate on a corrupt file's word fails instead. A cap too small for
/// any reading turns a good file into exit code 2 naming it; the default
/// reads it.
#[test]
fn the_reading_process_runs_under_a_memory_cap() {
    let dir = temp_dir("hostile-memory-cap");
    let path = dir.join("ours.h5");
    sp::write_profile(&our_profile(), &path, Compression::None).expect("write our file");
    let inspect = |limit: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_scope-prof"));
        command.arg("inspect").arg(&path);
        if let Some(limit) = limit {
            command.env("SCOPE_PROF_MEMORY_LIMIT", limit);
        }
        command.output().expect("run scope-prof")
    };
    for limit in [None, Some("0"), Some("8192")] {
        let out = inspect(limit);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{limit:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = inspect(Some("4"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&path.display().to_string()), "{stderr}");
    assert!(stderr.contains("SCOPE_PROF_MEMORY_LIMIT"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
