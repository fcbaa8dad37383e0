//! Sampling inside regions (issue 39): `Options::sample_hz`, each sample
//! given to the innermost call open on its thread, the `.sps` file beside
//! the profile, the errors at `setup`, and no file descriptor left open
//! after a session.
//!
//! The functions a region's samples must fall in are found in this test
//! binary's own symbol table (`object`): the address minus the module's
//! base is the symbol's address in the file.

use std::path::Path;
use std::time::Duration;

use integration_tests::{busy_alpha, busy_beta, cpu_time as cpu, serial, temp_dir};
use object::{Object, ObjectSymbol};
use scope_profiler::{self as sp, Options};
use scope_profiler_reader::sps::{SampleFile, Stacks, stacks_path};

const HZ: u32 = 1000;

/// Whether this machine can sample: under `CI=true` it must; elsewhere a
/// missing prerequisite is said on stderr and the test returns.
fn can_sample() -> bool {
    if cfg!(scope_profiler_portable) || !cfg!(target_os = "linux") {
        return false; // the portable tests below check the error instead
    }
    match sp::setup(Options::new().in_memory().verbose(false).sample_hz(HZ)) {
        Ok(_) => {
            sp::finalize().unwrap();
            true
        }
        Err(e) => {
            if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
                panic!("a prerequisite is missing under CI=true: {e}");
            }
            eprintln!("SKIPPED (prerequisite missing): {e}");
            false
        }
    }
}

/// The symbol of this test binary that holds address `ip` of the process
/// (through the sample file's module table), demangled enough to compare.
fn function_of(file: &SampleFile, module: i32, ip: u64, symbols: &[(u64, u64, String)]) -> String {
    let Some((path, base)) = usize::try_from(module)
        .ok()
        .and_then(|m| file.modules.get(m))
    else {
        return "?".into();
    };
    let exe = std::env::current_exe().unwrap();
    if Path::new(path) != exe {
        return format!("({path})");
    }
    let at = ip - base;
    symbols
        .iter()
        .find(|(start, size, _)| *start <= at && at < start + size)
        .map_or("??".into(), |(.., name)| name.clone())
}

/// The profile's metadata value under `key`, as text.
fn meta(profile: &sp::Profile, key: &str) -> Option<String> {
    profile
        .metadata
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.to_string())
}

/// This binary's function symbols: (address, size, mangled name).
fn own_symbols() -> Vec<(u64, u64, String)> {
    let data = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    let file = object::File::parse(&*data).unwrap();
    file.symbols()
        .filter(|s| s.size() > 0)
        .filter_map(|s| Some((s.address(), s.size(), s.name().ok()?.to_owned())))
        .collect()
}

/// Two regions, each spinning in its own function: their samples are
/// counted at the rate, and nearly all fall in their own function.
#[test]
fn each_regions_samples_fall_in_its_own_function() {
    let _serial = serial();
    if !can_sample() {
        return;
    }
    let dir = temp_dir("sampling-two");
    let path = dir.join("two.h5");
    sp::setup(Options::new().file_path(&path).verbose(false).sample_hz(HZ)).unwrap();
    let (alpha_ms, beta_ms) = (400u64, 250u64);
    let spent = |f: fn(u64) -> u64, ms| {
        let start = cpu();
        std::hint::black_box(f(ms));
        cpu() - start
    };
    let a = sp::region("alpha").run(|| spent(busy_alpha, alpha_ms));
    let b = sp::region("beta").run(|| spent(busy_beta, beta_ms));
    // Asleep: no CPU time, so no sample.
    sp::region("nap").run(|| std::thread::sleep(Duration::from_millis(200)));
    let results = sp::finalize().unwrap();
    let sps = results.samples_path().expect("written beside the profile");
    assert_eq!(sps, dir.join("two_rank00000.sps"));
    let file = SampleFile::parse(&std::fs::read(sps).unwrap()).unwrap();
    assert_eq!(&file, results.samples().unwrap());
    assert_eq!((file.rank, file.hz), (0, HZ as i32));
    assert!(
        file.regions.iter().any(|r| r == "nap"),
        "{:?}",
        file.regions
    );
    let symbols = own_symbols();
    for (name, took, own) in [("alpha", a, "busy_alpha"), ("beta", b, "busy_beta")] {
        let region = file.regions.iter().position(|r| r == name).unwrap() as i32;
        let mine: Vec<_> = file.samples.iter().filter(|s| s.region == region).collect();
        let expected = took.as_secs_f64() * f64::from(HZ);
        let n = mine.len() as f64;
        assert!(
            (n - expected).abs() <= 0.2 * expected,
            "{name}: {n} samples for {took:?} at {HZ} Hz"
        );
        let inside = mine
            .iter()
            .filter(|s| function_of(&file, s.module, s.address, &symbols).contains(own))
            .count();
        assert!(
            inside as f64 >= 0.9 * n,
            "{name}: {inside} of {n} samples in {own}; the others: {:?}",
            mine.iter()
                .map(|s| function_of(&file, s.module, s.address, &symbols))
                .filter(|f| !f.contains(own))
                .take(10)
                .collect::<Vec<_>>()
        );
    }
    let nap = file.regions.iter().position(|r| r == "nap").unwrap() as i32;
    let napping = file.samples.iter().filter(|s| s.region == nap).count();
    assert!(napping <= 2, "a sleeping region has {napping} samples");
    // The profile says how many samples were taken, at which rate.
    let profile = sp::read_profile(&path).unwrap();
    let meta = |key: &str| meta(&profile, key);
    assert_eq!(meta("sample_hz").as_deref(), Some("1000"));
    assert_eq!(meta("samples"), Some(file.samples.len().to_string()));
    assert!(
        results.to_string().contains("samples at 1000 Hz"),
        "{results}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// One region on four threads: every thread is sampled, the samples
/// counted at the rate, all in the region.
#[test]
fn a_region_on_four_threads() {
    let _serial = serial();
    if !can_sample() {
        return;
    }
    sp::setup(Options::new().in_memory().verbose(false).sample_hz(HZ)).unwrap();
    let spent: Duration = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    sp::region("par").run(|| {
                        let start = cpu();
                        std::hint::black_box(busy_alpha(150));
                        cpu() - start
                    })
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let results = sp::finalize().unwrap();
    let file = results.samples().unwrap();
    assert_eq!(file.regions, ["par"]);
    let in_par = file.samples.iter().filter(|s| s.region == 0).count() as f64;
    // Each thread's CPU time in the region, sampled at the rate.
    let expected = spent.as_secs_f64() * f64::from(HZ);
    assert!(
        (in_par - expected).abs() <= 0.2 * expected,
        "{in_par} samples in par for {spent:?} of CPU at {HZ} Hz"
    );
}

#[scope_profiler::profile("spinning_task")]
async fn spinning_task(ms: u64) -> u64 {
    let mut x = busy_alpha(ms / 2);
    // Back to the runtime: the rest may run on another worker.
    tokio::task::yield_now().await;
    x ^= busy_alpha(ms / 2);
    x
}

/// A task's samples go to the task's calls, whichever worker polls it:
/// the workers record no call of their own, yet the samples taken while
/// they poll the tasks land in the tasks' region.
#[test]
fn a_tasks_samples_go_to_its_region_whichever_worker_polls_it() {
    tasks_samples(None);
}

/// The same with the samples past their memory bound: those spilled keep
/// the task they were marked with.
#[test]
fn a_tasks_samples_go_to_its_region_when_they_spill() {
    tasks_samples(Some(1 << 16));
}

/// Four tasks on two workers, sampled (in a memory limit, if given).
fn tasks_samples(memory_limit: Option<usize>) {
    let _serial = serial();
    if !can_sample() {
        return;
    }
    let mut options = Options::new().in_memory().verbose(false).sample_hz(HZ);
    if let Some(bytes) = memory_limit {
        options = options.memory_limit(bytes);
    }
    sp::setup(options).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    runtime.block_on(async {
        let tasks: Vec<_> = (0..4).map(|_| tokio::spawn(spinning_task(120))).collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    drop(runtime);
    let results = sp::finalize().unwrap();
    let file = results.samples().unwrap();
    let profile = results.profile().unwrap();
    assert_eq!(profile.tasks.len(), 4, "four tasks recorded");
    let region = file
        .regions
        .iter()
        .position(|r| r == "spinning_task")
        .unwrap() as i32;
    let total = file.samples.len() as f64;
    let in_task = file.samples.iter().filter(|s| s.region == region).count() as f64;
    // 4 x 120 ms of CPU at 1 kHz; nearly every sample of the process is
    // the tasks' (the runtime's own work is a few samples).
    let expected = 4.0 * 120.0 * f64::from(HZ) / 1000.0;
    assert!(
        (in_task - expected).abs() <= 0.2 * expected,
        "{in_task} samples in the tasks' region, {total} in all, {expected} expected"
    );
    assert!(in_task >= 0.9 * total, "{in_task} of {total} in the tasks");
    let spilled = meta(profile, "samples_spilled");
    if memory_limit.is_some() {
        let spilled: f64 = spilled.expect("the samples spilled").parse().unwrap();
        assert!(spilled >= 0.3 * total, "{spilled} of {total} spilled");
    } else {
        assert_eq!(spilled, None);
    }
}

/// Each sample's path of regions and its call chain: the stacks file
/// beside the `.sps`, the same as `Results::sample_stacks`; a sample in
/// `inner` has the path outer > inner, and this test's own frames (built
/// unoptimized, with frame pointers) in its chain.
#[test]
fn the_stacks_give_each_samples_path_and_chain() {
    let _serial = serial();
    if !can_sample() {
        return;
    }
    let dir = temp_dir("sampling-stacks");
    let path = dir.join("stacks.h5");
    sp::setup(Options::new().file_path(&path).verbose(false).sample_hz(HZ)).unwrap();
    sp::region("outer").run(|| {
        busy_beta(50);
        sp::region("inner").run(|| busy_alpha(150))
    });
    let results = sp::finalize().unwrap();
    let (file, stacks) = (results.samples().unwrap(), results.sample_stacks().unwrap());
    let sps = results.samples_path().unwrap();
    let on_disk = Stacks::parse(&std::fs::read(stacks_path(sps)).unwrap()).unwrap();
    assert_eq!(&on_disk, stacks);
    assert_eq!(stacks.samples.len(), file.samples.len());
    let (outer, inner) = (
        file.regions.iter().position(|r| r == "outer").unwrap() as i32,
        file.regions.iter().position(|r| r == "inner").unwrap() as i32,
    );
    let mut in_inner = 0;
    let mut with_frames = 0;
    for (i, s) in file.samples.iter().enumerate() {
        let path = stacks.path_of(i);
        match s.region {
            r if r == inner => {
                assert_eq!(path, Some(&[outer, inner][..]), "sample {i}");
                in_inner += 1;
                with_frames += usize::from(!stacks.chain_of(i).is_empty());
            }
            r if r == outer => assert_eq!(path, Some(&[outer][..]), "sample {i}"),
            _ => assert_eq!(path, None, "sample {i}"),
        }
    }
    assert!(in_inner >= 100, "{in_inner} samples in inner");
    assert!(
        with_frames * 10 >= in_inner * 9,
        "{with_frames} of {in_inner} samples have a call chain"
    );
    // Each chain is stored once: the samples of one loop share a few.
    let distinct: std::collections::HashSet<_> = stacks.chains.iter().collect();
    assert_eq!(distinct.len(), stacks.chains.len(), "a chain stored twice");
    assert!(
        stacks.chains.len() * 4 <= with_frames,
        "{} chains for {with_frames} samples with one",
        stacks.chains.len()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A checkpoint writes the samples so far beside the file; `finalize`
/// writes them all again, the checkpoint's among them.
#[test]
fn a_checkpoint_writes_the_samples_so_far() {
    let _serial = serial();
    if !can_sample() {
        return;
    }
    let dir = temp_dir("sampling-checkpoint");
    let path = dir.join("cp.h5");
    sp::setup(Options::new().file_path(&path).verbose(false).sample_hz(HZ)).unwrap();
    sp::region("first").run(|| busy_alpha(100));
    let at_checkpoint = sp::checkpoint().unwrap();
    let early = at_checkpoint.samples().unwrap().clone();
    assert_eq!(early.regions, ["first"]);
    sp::region("second").run(|| busy_beta(100));
    let results = sp::finalize().unwrap();
    let all = results.samples().unwrap();
    assert_eq!(all.regions, ["first", "second"]);
    let count = |f: &SampleFile, r: i32| f.samples.iter().filter(|s| s.region == r).count();
    // The first region's samples, all taken before the checkpoint, are
    // the same in both files; the second's come after.
    assert_eq!(count(all, 0), count(&early, 0));
    assert!(count(all, 1) >= 50, "{}", count(all, 1));
    let on_disk = SampleFile::parse(&std::fs::read(dir.join("cp_rank00000.sps")).unwrap()).unwrap();
    assert_eq!(&on_disk, all);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The perf events this process holds open (each a descriptor).
fn open_perf_events() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|target| target.to_string_lossy().contains("perf_event"))
        .count()
}

/// A program that starts many sampled sessions leaves no event open: each
/// thread's event is closed when its session ends, even for threads that
/// live on (issue 39, item 4).
#[test]
fn sessions_leave_no_sampling_event_open() {
    let _serial = serial();
    if !can_sample() {
        return;
    }
    let (go, idle) = std::sync::mpsc::channel::<std::sync::mpsc::Sender<()>>();
    let idle = std::sync::Arc::new(std::sync::Mutex::new(idle));
    // Three threads that record in every session and stay alive.
    let workers: Vec<_> = (0..3)
        .map(|_| {
            let idle = std::sync::Arc::clone(&idle);
            std::thread::spawn(move || {
                loop {
                    let Ok(done) = idle.lock().unwrap().recv() else {
                        return;
                    };
                    sp::region("work").run(|| std::hint::black_box(busy_beta(5)));
                    done.send(()).unwrap();
                }
            })
        })
        .collect();
    assert_eq!(open_perf_events(), 0);
    for _ in 0..20 {
        sp::setup(Options::new().in_memory().verbose(false).sample_hz(HZ)).unwrap();
        let (done, finished) = std::sync::mpsc::channel();
        for _ in 0..3 {
            go.send(done.clone()).unwrap();
        }
        for _ in 0..3 {
            finished.recv().unwrap();
        }
        sp::region("main").run(|| ());
        // Four recording threads, each with its event.
        assert_eq!(open_perf_events(), 4);
        sp::finalize().unwrap();
        assert_eq!(open_perf_events(), 0, "events left open after a session");
    }
    drop(go);
    for w in workers {
        w.join().unwrap();
    }
}

/// The errors at `setup`: a rate the kernel refuses names why; an
/// aggregation-mode session has no calls to give samples to; the portable
/// build names the platform.
#[test]
fn refused_sampling_is_an_error_at_setup() {
    let _serial = serial();
    let err = sp::setup(
        Options::new()
            .in_memory()
            .verbose(false)
            .aggregation(true)
            .sample_hz(HZ),
    )
    .expect_err("an aggregation-mode session cannot sample");
    let text = err.to_string();
    if cfg!(scope_profiler_portable) || !cfg!(target_os = "linux") {
        assert!(
            text.contains("sample_hz") && text.contains("perf_event_open"),
            "{text}"
        );
        assert!(
            !cfg!(scope_profiler_portable) || text.contains("scope_profiler_portable"),
            "{text}"
        );
        return;
    }
    assert!(
        text.contains("sample_hz") && text.contains("aggregation"),
        "{text}"
    );
    if !can_sample() {
        return;
    }
    // Far above any kernel's perf_event_max_sample_rate.
    let err = sp::setup(
        Options::new()
            .in_memory()
            .verbose(false)
            .sample_hz(u32::MAX),
    )
    .expect_err("the kernel refuses this rate");
    let text = err.to_string();
    assert!(
        text.contains("sample_hz")
            && text.contains("refused")
            && text.contains("perf_event_max_sample_rate"),
        "{text}"
    );
    assert!(!sp::is_active());
}

/// The TOML key `sample_hz`.
#[test]
fn toml_key() {
    let _serial = serial();
    use scope_profiler_core::internal::options::read;
    let dir = temp_dir("sampling-toml");
    let path = dir.join("s.toml");
    std::fs::write(&path, "[profiling]\nsample_hz = 997\n").unwrap();
    assert_eq!(
        read::sample_hz(&Options::from_toml(&path).unwrap()),
        Some(997)
    );
    std::fs::write(&path, "[profiling]\nsample_hz = -5\n").unwrap();
    let err = Options::from_toml(&path).unwrap_err().to_string();
    assert!(err.contains("line 2") && err.contains("sample_hz"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A run whose samples pass their memory bound (an eighth of the memory
/// limit): the oldest spill to the scratch directory and come back at
/// finalize, none missed, each still in its region and function.
#[test]
fn samples_past_their_memory_bound_spill_and_none_is_missed() {
    let _serial = serial();
    if !can_sample() {
        return;
    }
    let dir = temp_dir("sampling-spill");
    let path = dir.join("spill.h5");
    // 32 KiB of samples: about 1300 of 24 bytes (their chains kept once
    // apart), so 1.2 s at 1 kHz spills from half of it on.
    let options = Options::new()
        .file_path(&path)
        .verbose(false)
        .memory_limit(1 << 18)
        .sample_hz(HZ);
    sp::setup(options).unwrap();
    let took = sp::region("alpha").run(|| {
        let start = cpu();
        std::hint::black_box(busy_alpha(1200));
        cpu() - start
    });
    let results = sp::finalize().unwrap();
    let file = results.samples().unwrap();
    let profile = sp::read_profile(&path).unwrap();
    let meta = |key: &str| meta(&profile, key);
    assert_eq!(meta("samples_missed").as_deref(), Some("0"));
    let spilled: usize = meta("samples_spilled")
        .expect("the samples spilled")
        .parse()
        .unwrap();
    assert!(spilled >= 300, "{spilled} samples spilled");
    let region = file.regions.iter().position(|r| r == "alpha").unwrap() as i32;
    let mine: Vec<_> = file.samples.iter().filter(|s| s.region == region).collect();
    let expected = took.as_secs_f64() * f64::from(HZ);
    let n = mine.len() as f64;
    assert!(
        (n - expected).abs() <= 0.2 * expected,
        "{n} samples for {took:?} at {HZ} Hz"
    );
    let symbols = own_symbols();
    let inside = mine
        .iter()
        .filter(|s| function_of(file, s.module, s.address, &symbols).contains("busy_alpha"))
        .count();
    assert!(inside as f64 >= 0.9 * n, "{inside} of {n} in busy_alpha");
}
