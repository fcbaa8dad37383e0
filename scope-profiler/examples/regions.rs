//! The "Profiling regions" page of the scope-profiler docs, in Rust.
//!
//! Run with `cargo run --release --example regions [-- OUTPUT.h5]`; it writes
//! `regions.h5` (or OUTPUT.h5) and prints the summary.

use std::time::Duration;

use scope_profiler::{self as sp, Options, profile, profile_all};

/// `@ProfileManager.profile("solver")`: an explicit region name.
mod explicit {
    use super::*;

    #[profile("solver")]
    pub fn solve(a: f64, b: &[f64]) -> Vec<f64> {
        b.iter().map(|x| x / a).collect()
    }
}

/// `@ProfileManager.profile`: the region is named after the function.
mod plain {
    use super::*;

    #[profile]
    pub fn solve(a: f64, b: &[f64]) -> Vec<f64> {
        b.iter().map(|x| x / a).collect()
    }
}

/// `@ProfileManager.profile("solve", recursive=True)`: an entrypoint. While
/// it runs, the traced functions it reaches record too, under their
/// fully-qualified names.
mod entry {
    use super::*;

    #[profile("solve", recursive)]
    pub fn solve(_a: f64, b: &[f64]) -> f64 {
        crate::pipeline::run_pipeline(b)
    }
}

/// Every function of this module is traced: it records inside an entrypoint.
#[profile_all]
mod pipeline {
    pub fn run_pipeline(b: &[f64]) -> f64 {
        b.iter().sum()
    }
}

fn compute_rhs(state: &[f64]) -> Vec<f64> {
    state.iter().map(|x| 2.0 * x).collect()
}

fn time_step(state: &mut [f64], dt: f64) {
    let rhs = sp::region("rhs_evaluation").run(|| compute_rhs(state));
    let _update = sp::region("state_update").enter();
    for (s, r) in state.iter_mut().zip(&rhs) {
        *s += dt * r;
    }
}

fn process(_chunk: u32) {
    std::thread::sleep(Duration::from_millis(1));
}

/// The attribute and the context manager share the "compute" region.
#[profile("compute")]
fn compute_batch(data: &[u32]) {
    for &chunk in data {
        let _g = sp::region("compute").enter();
        process(chunk);
    }
}

/// A sync function called from an async one: it nests under the async
/// call that was being polled.
#[profile]
fn parse(x: u32) -> u32 {
    x + 1
}

/// An async fn: one call from its first poll to its completion; the calls
/// of its polls nest under it, whichever thread polls it.
#[profile]
async fn handler(x: u32) -> u32 {
    let a = parse(x);
    YieldOnce(false).await;
    parse(a)
}

/// A library's instrumentation behind an opt-in tag: off unless the run
/// enables `mylib` (here it does, in `main`).
#[profile("mylib.solve", tags = ["mylib"])]
fn mylib_solve(x: f64) -> f64 {
    x * 2.0
}

/// Tagged and recording its outcome: each call's `status` ("ok", "error"
/// with the error type, or "panic") goes into its metadata.
#[profile("io.load", tags = ["io"], record_outcome)]
fn load(step: u32) -> Result<u32, std::fmt::Error> {
    if step == 3 {
        return Err(std::fmt::Error);
    }
    Ok(step)
}

/// A future that is pending once, like an executor's `yield_now`.
struct YieldOnce(bool);

impl std::future::Future for YieldOnce {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.0 {
            return std::task::Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}

/// Polls `future` to completion on this thread (what an executor does).
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

fn main() -> Result<(), sp::Error> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "regions.h5".to_owned());
    sp::register_opt_in_tag("mylib");
    let run = sp::setup(Options::new().file_path(&path).enable_tags(["mylib"]))?;

    // Creating regions.
    let (a, b) = (1.0, [1.0, 1.0, 1.0]);
    println!("{:?}", explicit::solve(a, &b));
    println!("{}", sp::get_region("solver").map_or(0, |r| r.num_calls()));

    println!("{:?}", plain::solve(a, &b));
    println!("{}", sp::recorded_regions().contains(&"solve".to_owned()));

    // Recursive profiling from an entrypoint.
    println!("{}", entry::solve(a, &b));
    let traced: Vec<String> = sp::recorded_regions()
        .into_iter()
        .filter(|n| n.contains("run_pipeline"))
        .collect();
    println!("{traced:?}");
    // Outside an entrypoint the traced function records nothing.
    pipeline::run_pipeline(&b);

    // A region around a section of code.
    let mut state = vec![1.0; 3];
    time_step(&mut state, 0.1);

    // `profile_region` is the same function as `region`.
    let same: fn(&str) -> sp::Region = sp::profile_region;
    assert_eq!(same("rhs_evaluation"), sp::region("rhs_evaluation"));

    // Mixing both: one region, calls add up.
    compute_batch(&[1, 2, 3]);
    println!("{}", sp::get_region("compute").map_or(0, |r| r.num_calls()));

    // Region identity.
    println!("{}", sp::region("foo") == sp::region("foo"));

    // Nesting, kept exactly: the file has parent ids.
    {
        let _outer = sp::region("outer").enter();
        let _inner = sp::region("inner").enter();
        std::thread::sleep(Duration::from_millis(1));
    }

    // Threads record into their own buffers; their calls nest per thread.
    std::thread::scope(|s| {
        for t in 0..2 {
            s.spawn(move || {
                for _ in 0..100 {
                    let _w = sp::region("worker").enter();
                    sp::scope!("worker_step");
                    std::hint::black_box(t);
                }
            });
        }
    });

    // Async: `parse` runs twice inside `handler`, across two polls.
    println!("{}", block_on(handler(1)));

    // Tags, per-call metadata and outcomes: each call of `mylib.solve` and
    // `io.load` carries its timestep and phase; `io.load` also its status.
    for step in 0..5 {
        let _m = sp::call_metadata([
            ("step", sp::Value::from(step)),
            ("phase", sp::Value::from("predictor")),
        ]);
        mylib_solve(step as f64);
        let _ = load(step);
    }

    // Timestep sampling: steps 0, 2 and 4 of 6 record, the others run paused.
    let sampler = sp::sample_every(2, 0)?;
    for t in 0..6 {
        sampler.step(t)?;
        sp::region("sampled_step").run(|| std::hint::black_box(t));
    }
    drop(sampler);

    // Region data at runtime.
    let region = sp::get_region("solver").expect("registered above");
    println!("{}", region.num_calls());
    let durations = region.durations();
    println!("({},) int64", durations.len());
    for (name, region) in sp::get_all_regions() {
        println!("{name}: {} calls", region.num_calls());
    }

    // Finalizing writes the file and prints the summary.
    run.finalize()?;

    // A following setup starts a new session, which clears all regions
    // (in memory here, so the file above stays the walk-through's).
    sp::setup(Options::new().in_memory().verbose(false))?;
    println!("{:?}", sp::recorded_regions());
    sp::finalize()?;
    println!("wrote {path}");
    Ok(())
}
