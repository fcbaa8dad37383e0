//! What the benchmark binaries share: the workload, the timed loop, the
//! statistics and the allocation rows' calls (also compiled into
//! `bench-alloc-peers`, by path, whose binaries have the peers' allocators).
//!
//! Every variant is an `#[inline(never)]` function around the same
//! `#[inline(never)]` workload, called from the same loop shape: `calls`
//! calls in batches of [`BATCH`], the input `black_box`ed and every result
//! folded into an accumulator that is `black_box`ed at the end. A variant
//! may open something around each batch (puffin's frame scope, fastrace's
//! root span); that cost is inside the timed region and amortized over the
//! batch, as it is in a real program.

use std::hint::black_box;
use std::time::Instant;

/// Calls per batch: puffin gets a frame, fastrace a root span per batch.
pub const BATCH: u64 = 10_000;

/// The workload: a multiply and a rotate, about 1-2 ns, never inlined.
#[inline(never)]
pub fn work(x: u64) -> u64 {
    x.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17)
}

/// Polls `future` once; it must complete (the async variants never wait:
/// ours and the peers' alike, a task each call, polled once to completion).
#[allow(dead_code)] // `compare` only
#[inline(always)]
pub fn poll_once<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(out) => out,
        std::task::Poll::Pending => unreachable!("the async variants complete in one poll"),
    }
}

/// The uninstrumented function every variant is compared with.
#[inline(never)]
pub fn bare(x: u64) -> u64 {
    work(x)
}

/// Nanoseconds per call of `f` over `calls` calls (rounded down to whole
/// batches), with `open` called before each batch and its value dropped
/// after it.
#[inline(never)]
pub fn time_batched<S>(
    calls: u64,
    mut open: impl FnMut() -> S,
    mut f: impl FnMut(u64) -> u64,
) -> f64 {
    let batches = (calls / BATCH).max(1);
    let start = Instant::now();
    let mut acc = 0u64;
    let mut i = 0u64;
    for _ in 0..batches {
        let scope = open();
        for _ in 0..BATCH {
            acc ^= f(black_box(i));
            i += 1;
        }
        drop(scope);
    }
    black_box(acc);
    start.elapsed().as_nanos() as f64 / (batches * BATCH) as f64
}

/// [`time_batched`] with nothing around the batches.
#[inline(never)]
pub fn time(calls: u64, f: impl FnMut(u64) -> u64) -> f64 {
    time_batched(calls, || (), f)
}

/// The median of `v` (the mean of the two middle values for an even count).
pub fn median(v: &[f64]) -> f64 {
    quantile(v, 0.5)
}

/// The `q` quantile of `v`, linear between ranks.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let pos = q * (s.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    s[lo] + (s[hi] - s[lo]) * (pos - lo as f64)
}

/// Rotates `order` by `round` so that no variant always runs first.
pub fn rotated<T: Copy>(order: &[T], round: usize) -> Vec<T> {
    let k = round % order.len().max(1);
    order[k..].iter().chain(&order[..k]).copied().collect()
}

/// The block every allocation row allocates and frees.
pub const LAYOUT: std::alloc::Layout = match std::alloc::Layout::from_size_align(64, 8) {
    Ok(l) => l,
    Err(_) => panic!("layout"),
};

/// An allocation and a free of [`LAYOUT`] through `System`, then the workload.
#[inline(never)]
#[allow(dead_code)] // not every binary has allocation rows
pub fn alloc_system(x: u64) -> u64 {
    use std::alloc::GlobalAlloc;
    // SAFETY: a valid non-zero layout; the block is freed with it at once.
    unsafe {
        let p = std::alloc::System.alloc(LAYOUT);
        black_box(p);
        std::alloc::System.dealloc(p, LAYOUT);
    }
    work(x)
}

/// An allocation and a free of [`LAYOUT`] through the global allocator,
/// then the workload.
#[inline(never)]
#[allow(dead_code)] // not every binary has allocation rows
pub fn alloc_global(x: u64) -> u64 {
    // SAFETY: as above, through the global allocator.
    unsafe {
        let p = std::alloc::alloc(LAYOUT);
        black_box(p);
        std::alloc::dealloc(p, LAYOUT);
    }
    work(x)
}
