//! Writes a profile of N calls (default 10M) for the benchmarks:
//! `cargo run --release -p scope-profiler-cli --example make_big -- OUT.h5 [N] [THREADS] [TASKS]`.
//! Each `step` holds one `rhs` with two `kernel` calls and an `update`;
//! THREADS threads (default 1) share the steps; with TASKS > 0, each
//! thread also polls TASKS async tasks (`task_step`, one `rhs` each) spread
//! over its steps, each a task lane of its own in the file.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use scope_profiler::{self as sp, Options};

fn step() {
    sp::scope!("step");
    {
        sp::scope!("rhs");
        for _ in 0..2 {
            sp::scope!("kernel");
            std::hint::black_box(0);
        }
    }
    sp::scope!("update");
}

#[sp::profile]
async fn task_step() {
    sp::scope!("rhs");
    for _ in 0..2 {
        sp::scope!("kernel");
        std::hint::black_box(0);
    }
}

/// Polls `fut` to its end on this thread (the futures here never wait).
fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = args
        .next()
        .ok_or("usage: make_big OUT.h5 [CALLS] [THREADS] [TASKS]")?;
    let calls: u64 = args.next().map_or(Ok(10_000_000), |n| n.parse())?;
    let threads: u64 = args.next().map_or(Ok(1), |n| n.parse())?;
    let tasks: u64 = args.next().map_or(Ok(0), |n| n.parse())?;
    let threads = threads.max(1);
    let run = sp::setup(Options::new().file_path(&out).verbose(false))?;
    let steps = calls / 5 / threads;
    let work = move || {
        // A task every `every` steps (none without tasks).
        let every = steps.checked_div(tasks).map_or(u64::MAX, |e| e.max(1));
        for i in 0..steps {
            step();
            if i % every == every - 1 {
                block_on(task_step());
            }
        }
    };
    let others: Vec<_> = (1..threads)
        .map(|t| {
            std::thread::Builder::new()
                .name(format!("worker-{t}"))
                .spawn(work)
        })
        .collect::<Result<_, _>>()?;
    work();
    for t in others {
        t.join().map_err(|_| "a worker panicked")?;
    }
    run.finalize()?;
    println!("wrote {out} ({calls} calls, {threads} threads, {tasks} tasks each)");
    Ok(())
}
