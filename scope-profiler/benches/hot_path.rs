//! Per-call cost of the recording paths, against a baseline measured in the
//! same run: `cargo bench -p scope-profiler --bench hot_path`.
//!
//! Every variant calls the same `#[inline(never)]` workload; rounds are
//! interleaved and the median of the rounds is printed, minus the bare
//! workload, with the ratio to the floor (two raw TSC reads through quanta).

use std::hint::black_box;
use std::time::Instant;

use scope_profiler::__private::CallSite;
use scope_profiler::{self as sp, Options};

const CALLS: u64 = 1_000_000;
const ROUNDS: usize = 11;

#[inline(never)]
fn work(x: u64) -> u64 {
    x.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17)
}

fn time(f: &mut dyn FnMut(u64) -> u64) -> f64 {
    let t = Instant::now();
    let mut acc = 0;
    for i in 0..CALLS {
        acc ^= f(black_box(i));
    }
    black_box(acc);
    t.elapsed().as_nanos() as f64 / CALLS as f64
}

fn main() {
    static SITE: CallSite = CallSite::new("cached", file!(), line!());
    let clock = quanta::Clock::new();
    let by_name = "by_name".to_owned();
    type Variant<'a> = (&'a str, Box<dyn FnMut(u64) -> u64 + 'a>);
    let mut variants: Vec<Variant> = vec![
        ("bare workload", Box::new(work)),
        (
            "floor: 2x quanta raw",
            Box::new(|x| {
                let a = clock.raw();
                let r = work(x);
                black_box(clock.raw().wrapping_sub(a)) ^ r
            }),
        ),
        (
            "call-site cached guard",
            Box::new(|x| {
                let _g = SITE.enter();
                work(x)
            }),
        ),
        (
            "sp::region(name).enter()",
            Box::new(|x| {
                let _g = sp::region(black_box(&by_name)).enter();
                work(x)
            }),
        ),
    ];
    let run = sp::setup(Options::new().in_memory().verbose(false)).expect("setup");
    let mut samples = vec![Vec::new(); variants.len()];
    for _ in 0..ROUNDS {
        for (i, (_, f)) in variants.iter_mut().enumerate() {
            samples[i].push(time(f.as_mut()));
        }
    }
    let results = run.finalize().expect("finalize");
    // Disabled: no session is active now.
    let mut disabled = Vec::new();
    for _ in 0..ROUNDS {
        disabled.push(time(&mut |x| {
            let _g = SITE.enter();
            work(x)
        }));
        samples[0].push(time(&mut work));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let base = median(&mut samples[0].clone());
    let floor = median(&mut samples[1].clone()) - base;
    println!("{:<28} {:>10} {:>10}", "variant", "ns/call", "x floor");
    for (i, (name, _)) in variants.iter().enumerate().skip(1) {
        let ns = median(&mut samples[i]) - base;
        println!("{name:<28} {ns:>10.2} {:>10.2}", ns / floor);
    }
    println!(
        "{:<28} {:>10.2}",
        "disabled (no session)",
        median(&mut disabled) - base
    );
    println!(
        "(bare workload {base:.2} ns; {} events recorded)",
        results.profile().unwrap().events.len()
    );
}
