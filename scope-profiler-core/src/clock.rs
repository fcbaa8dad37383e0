//! Timestamps: raw counter ticks on the hot path, CLOCK_MONOTONIC nanoseconds
//! when the data is written.
//!
//! The hot path reads the TSC (`rdtsc`, what `quanta::Clock::raw` reads on a
//! machine with an invariant TSC) or, where there is none, `quanta`'s raw
//! clock. Ticks become nanoseconds on the CLOCK_MONOTONIC timeline, the clock
//! of Python's `perf_counter_ns` and of the package's C API, through a linear
//! map between two anchors: (ticks, monotonic ns) pairs taken at `setup` and
//! at `finalize`. Between the anchors the map is off by no more than the
//! anchors themselves (each the midpoint of the tightest of a few
//! `rdtsc`/`clock_gettime`/`rdtsc` brackets: tens of ns), whatever the
//! session's length, so profiles of one process taken by different copies of
//! the runtime (two extension modules) or by Python's `perf_counter_ns` line
//! up (`Profile::merge`). A checkpoint's anchor stays one of the session's,
//! so the values it wrote are those of every later write. Pieces under 10 us
//! use quanta's calibrated rate from their first anchor instead.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Whether `ticks` reads the TSC directly (decided once, see [`init`]).
static USE_TSC: AtomicBool = AtomicBool::new(false);
static QUANTA: OnceLock<quanta::Clock> = OnceLock::new();

/// Pieces at least this long convert with the slope between their two
/// anchors: 10 us. Between its anchors, a slope is off by no more than they
/// are (tens of ns), however short the piece; shorter ones take quanta's
/// rate, whose error (up to about 1e-4) is then under 1 ns at their end. (It
/// was 1 s: a session of 10 ms converted with quanta's rate put two
/// extension modules' calls of one thread 100 ns apart, enough to make
/// sequential calls overlap.)
const MIN_SLOPE_SPAN_NS: i64 = 10_000;

/// The current raw tick count. Cheap: one `rdtsc` on x86_64.
#[inline(always)]
pub(crate) fn ticks() -> u64 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if USE_TSC.load(Relaxed) {
        // SAFETY: `rdtsc` has no preconditions on x86_64 (SSE2 is part of the
        // baseline); it only reads the time-stamp counter.
        #[allow(unused_unsafe)]
        return unsafe { core::arch::x86_64::_rdtsc() };
    }
    fallback_ticks()
}

/// The fast paths' clock read: `rdtsc` on x86_64, without the check
/// [`ticks`] makes (which, being a possible call, also costs the fast
/// paths the registers they keep across it: 91 to 73 instructions a call,
/// callgrind); elsewhere [`ticks`]. A tick of the session clock only while
/// [`fast_ticks_valid`]: the recorder lends its fast paths no stack
/// otherwise, so they never take this read for a time.
#[inline(always)]
pub(crate) fn fast_ticks() -> u64 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        // SAFETY: as in `ticks`.
        #[allow(unused_unsafe)]
        unsafe {
            core::arch::x86_64::_rdtsc()
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        ticks()
    }
}

/// Whether [`fast_ticks`] reads the session clock (the TSC is it; off
/// x86_64, always).
#[inline]
pub(crate) fn fast_ticks_valid() -> bool {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        USE_TSC.load(Relaxed)
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        true
    }
}

/// Makes [`ticks`] read quanta's clock (`false`) or the TSC (`true`, where
/// `init` found it to be quanta's), for the tests of the fallback.
#[cfg(test)]
pub(crate) fn use_tsc_for_tests(tsc: bool) {
    init();
    USE_TSC.store(tsc && quanta_reads_tsc(), Relaxed);
}

#[cold]
#[inline(never)]
fn fallback_ticks() -> u64 {
    quanta().raw()
}

fn quanta() -> &'static quanta::Clock {
    QUANTA.get_or_init(quanta::Clock::new)
}

/// Chooses the tick source, once per process; called by `setup` before any
/// region can record.
pub fn init() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| USE_TSC.store(quanta_reads_tsc(), Relaxed));
}

/// True when quanta's raw clock is the TSC, so `rdtsc` gives the same ticks
/// quanta's calibration applies to. Checked by bracketing: an `rdtsc` read
/// between two quanta reads must fall between them.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
fn quanta_reads_tsc() -> bool {
    let clock = quanta();
    (0..5).any(|_| {
        let before = clock.raw();
        // SAFETY: as in `ticks`.
        #[allow(unused_unsafe)]
        let tsc = unsafe { core::arch::x86_64::_rdtsc() };
        let after = clock.raw();
        before <= tsc && tsc <= after
    })
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
fn quanta_reads_tsc() -> bool {
    false
}

pub(crate) use crate::platform::{monotonic_ns, thread_cpu_ns};

/// A simultaneous reading of the tick counter and CLOCK_MONOTONIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Anchor {
    pub ticks: u64,
    pub ns: i64,
}

impl Anchor {
    /// Reads both clocks; the tick value is the midpoint of the tightest of a
    /// few brackets around the monotonic read.
    pub fn now() -> Anchor {
        let mut best = (u64::MAX, Anchor { ticks: 0, ns: 0 });
        for _ in 0..7 {
            let t0 = ticks();
            let ns = monotonic_ns();
            let t1 = ticks();
            let width = t1.wrapping_sub(t0);
            if width < best.0 {
                best = (
                    width,
                    Anchor {
                        ticks: t0 + width / 2,
                        ns,
                    },
                );
            }
        }
        best.1
    }
}

/// Maps ticks of one session to CLOCK_MONOTONIC nanoseconds: linear between
/// consecutive anchors (the session's start, the checkpoints' kept anchors,
/// the instant of the conversion), so that a value a checkpoint wrote is the
/// value every later write gives the same call.
#[derive(Clone, Debug)]
pub struct TickConverter {
    /// In the order of their anchors' ticks; each maps the ticks from its
    /// anchor to the next segment's (the first also those before it, the
    /// last those after it).
    segments: Vec<Segment>,
}

/// One piece of a [`TickConverter`].
#[derive(Clone, Copy, Debug)]
struct Segment {
    from: Anchor,
    /// The slope to the next anchor, for pieces of at least
    /// `MIN_SLOPE_SPAN_NS`; quanta's rate from `from` otherwise.
    slope: Option<Slope>,
}

/// `span_ns / span_ticks` between two anchors, applied without a division.
#[derive(Clone, Copy, Debug)]
struct Slope {
    span_ns: u64,
    span_ticks: u64,
    /// `floor(span_ns * 2^64 / span_ticks)`.
    scale: u128,
}

impl Slope {
    fn new(span_ns: u64, span_ticks: u64) -> Slope {
        Slope {
            span_ns,
            span_ticks,
            scale: (u128::from(span_ns) << 64) / u128::from(span_ticks),
        }
    }

    /// `floor(a * span_ns / span_ticks)`, exactly, by multiplications
    /// instead of a 128-bit division (3.2 -> 2.0 ns a value here; every
    /// record of a long session is converted twice by each of finalize's two
    /// walks). With `x` that exact quotient, `a *
    /// scale / 2^64` lies in `(x - a / 2^64, x]`, so its floor `q` is
    /// `floor(x)` or one less, which one more product tells apart.
    ///
    /// Every product is of two 64-bit values, one multiplication each
    /// (128-bit operands took twice as many: four conversions a call, in
    /// finalize's two walks, made them a visible share of its time). A
    /// quotient past 64 bits (no tick value of a session gives one) takes
    /// the 128-bit products, and wraps.
    #[inline]
    fn apply(&self, a: u64) -> u64 {
        let wide = u128::from(a);
        let (high, low) = ((self.scale >> 64) as u64, self.scale as u64);
        let q = wide * u128::from(high) + ((wide * u128::from(low)) >> 64);
        let ticks = u128::from(self.span_ticks);
        let below = match u64::try_from(q) {
            // No overflow: `q * span_ticks + span_ticks < 2^128`.
            Ok(q) => u128::from(q) * ticks + ticks <= wide * u128::from(self.span_ns),
            // No overflow: `a * span_ns < 2^127` and `(q + 1) * span_ticks
            // <= a * span_ns + span_ticks`.
            Err(_) => (q + 1) * ticks <= wide * u128::from(self.span_ns),
        };
        (q + u128::from(below)) as u64
    }
}

impl TickConverter {
    /// A converter anchored at the session's start and at `end`.
    #[cfg(test)]
    pub(crate) fn new(start: Anchor, end: Anchor) -> Self {
        TickConverter::through(&[start, end])
    }

    /// A converter through `anchors` (at least one; in the order they were
    /// taken, so their ticks and ns grow).
    pub(crate) fn through(anchors: &[Anchor]) -> Self {
        let segments = match anchors {
            [] => vec![Segment {
                from: Anchor { ticks: 0, ns: 0 },
                slope: None,
            }],
            [only] => vec![Segment {
                from: *only,
                slope: None,
            }],
            _ => anchors
                .windows(2)
                .map(|pair| {
                    let (from, to) = (pair[0], pair[1]);
                    let span_ns = to.ns - from.ns;
                    let span_ticks = to.ticks.wrapping_sub(from.ticks);
                    let slope = (span_ns >= MIN_SLOPE_SPAN_NS && span_ticks > 0)
                        .then(|| Slope::new(span_ns as u64, span_ticks));
                    Segment { from, slope }
                })
                .collect(),
        };
        TickConverter { segments }
    }

    /// Whether an anchor taken at `next` after the last one of `kept` is
    /// kept: when both its clocks moved on (a write at the same tick as the
    /// last adds nothing).
    pub(crate) fn keeps(kept: &[Anchor], next: Anchor) -> bool {
        kept.last()
            .is_none_or(|last| next.ns > last.ns && next.ticks > last.ticks)
    }

    /// Monotonic nanoseconds of a tick value. Monotone in `t`.
    #[inline]
    pub(crate) fn ns(&self, t: u64) -> i64 {
        let segment = match self.segments.as_slice() {
            [one] => one,
            all => {
                let after = all.partition_point(|s| s.from.ticks <= t);
                &all[after.saturating_sub(1)]
            }
        };
        segment.ns(t)
    }
}

impl Segment {
    #[inline]
    fn ns(&self, t: u64) -> i64 {
        let dt = t as i128 - self.from.ticks as i128;
        if let Some(slope) = &self.slope {
            // As `dt * span_ns / span_ticks` in i128 (rounded toward zero).
            let q = slope.apply(dt.unsigned_abs() as u64) as i64;
            if dt >= 0 {
                self.from.ns + q
            } else {
                self.from.ns - q
            }
        } else if dt >= 0 {
            self.from.ns + quanta_delta(self.from.ticks, t) as i64
        } else {
            self.from.ns - quanta_delta(t, self.from.ticks) as i64
        }
    }
}

/// Nanoseconds between two tick values by quanta's calibration: ticks are
/// always quanta's raw units (its TSC, counter or monotonic nanoseconds).
fn quanta_delta(from: u64, to: u64) -> u64 {
    quanta().delta_as_nanos(from, to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_map_onto_the_monotonic_clock() {
        init();
        let a = Anchor::now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        // A tick read bracketed by two clock reads; the narrowest bracket
        // of many, so that a preemption between the reads (a loaded CI
        // machine) widens one attempt, not the check.
        let (before, t, after) = (0..1000)
            .map(|_| (monotonic_ns(), ticks(), monotonic_ns()))
            .min_by_key(|(before, _, after)| after - before)
            .unwrap();
        let b = Anchor::now();
        let conv = TickConverter::new(a, b);
        // 20 ms: the two-anchor slope; within 0.1 ms of the bracket (the
        // anchors' error, tens of ns, on a quiet machine). Under valgrind (scripts/memcheck.sh sets
        // SP_MEMCHECK), which runs one thread at a time and slows each,
        // quanta's calibration is off by up to about 1%: there, within 2% of
        // the time since the start anchor (a CI run's memcheck saw 145 us
        // over 20 ms).
        let tolerance = if std::env::var_os("SP_MEMCHECK").is_some() {
            ((after - a.ns) / 50).max(100_000)
        } else {
            100_000
        };
        assert!(
            conv.ns(t) > before - tolerance && conv.ns(t) < after + tolerance,
            "{} not within {tolerance} ns of [{before}, {after}]",
            conv.ns(t),
        );
        assert!(conv.ns(a.ticks) == a.ns);
    }

    #[test]
    fn a_checkpoints_values_stay_in_later_writes() {
        // Anchors 2 ms apart at a rate of 3 ticks per ns (the start, a
        // checkpoint), then a later write whose anchor says the rate changed.
        let a = Anchor {
            ticks: 1_000,
            ns: 10_000,
        };
        let b = Anchor {
            ticks: 1_000 + 6_000_000,
            ns: 10_000 + 2_000_000,
        };
        let c = Anchor {
            ticks: b.ticks + 9_000_000,
            ns: b.ns + 2_500_000,
        };
        let at_checkpoint = TickConverter::through(&[a, b]);
        let later = TickConverter::through(&[a, b, c]);
        for t in [0, 1_000, 2_500_000, 4_000_000, b.ticks] {
            assert_eq!(later.ns(t), at_checkpoint.ns(t), "tick {t}");
        }
        assert_eq!(later.ns(b.ticks), b.ns);
        assert_eq!(later.ns(c.ticks), c.ns);
        // After the checkpoint, the second piece's rate (3.6 ticks a ns).
        assert_eq!(later.ns(b.ticks + 3_600), b.ns + 1_000);
        // Monotone across the pieces.
        let values: Vec<i64> = (0..40).map(|k| later.ns(k * 500_000)).collect();
        assert!(values.windows(2).all(|w| w[0] <= w[1]), "{values:?}");
        // An anchor where neither clock moved on is not kept.
        assert!(!TickConverter::keeps(&[a, b], b));
        assert!(TickConverter::keeps(&[a, b], c));
    }

    #[test]
    fn long_sessions_use_the_two_anchor_slope() {
        let a = Anchor {
            ticks: 1_000,
            ns: 5_000,
        };
        let b = Anchor {
            ticks: 3_000_001_000,
            ns: 5_000 + 2_000_000_000,
        };
        let conv = TickConverter::new(a, b);
        assert_eq!(conv.ns(1_000), 5_000);
        assert_eq!(conv.ns(3_000_001_000), 2_000_005_000);
        assert_eq!(conv.ns(1_500_001_000), 1_000_005_000);
        // Monotone, including before the first anchor.
        assert!(conv.ns(999) <= conv.ns(1_000));
    }

    #[test]
    fn the_slope_without_division_equals_the_division() {
        let exact = |a: u64, ns: u64, ticks: u64| {
            (u128::from(a) * u128::from(ns) / u128::from(ticks)) as u64
        };
        let spans = [
            (1_000_000_000u64, 3_000_000_000u64),
            (2_000_000_000, 3_000_000_000),
            (1_000_000_007, 2_999_999_993),
            (86_400_000_000_000, 250_000_000_000_000),
            (5_000_000_000, 5_000_000_000),
            (1 << 62, (1 << 62) - 1),
            (3_600_000_000_000, 7),
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for (ns, ticks) in spans {
            let slope = Slope::new(ns, ticks);
            // Exact multiples (where a floor one too low would show), their
            // neighbours, and pseudo-random values of every size.
            let g = {
                let (mut a, mut b) = (ns, ticks);
                while b != 0 {
                    (a, b) = (b, a % b);
                }
                a
            };
            let period = ticks / g;
            let mut values = vec![
                0u64,
                1,
                u64::MAX,
                u64::MAX - 1,
                period,
                2 * period,
                3 * period + 1,
            ];
            for _ in 0..20_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                values.push(x >> (x % 64));
                values.push((x % 1000).saturating_mul(period));
            }
            for a in values {
                assert_eq!(slope.apply(a), exact(a, ns, ticks), "{a} * {ns} / {ticks}");
            }
        }
    }
}
