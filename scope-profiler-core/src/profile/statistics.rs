//! Statistics of calls: a row's exact summary ([`SummaryStatistics`], the
//! file's `summary_statistics` compound, built by [`StatsAccumulator`]) and
//! a region's statistics as `finalize` returns them ([`RegionStatistics`]).

#![forbid(unsafe_code)]

/// Exact per-row statistics over the durations of one (rank, region) row, in
/// row order: the `summary_statistics` compound of the file.
///
/// ```
/// use scope_profiler::SummaryStatistics;
/// let s = SummaryStatistics::from_calls(&[(100, 10), (200, 30)]);
/// assert_eq!((s.total, s.minimum, s.maximum, s.first, s.last), (40, 10, 30, 10, 30));
/// assert_eq!((s.start_minimum, s.end_maximum), (100, 230));
/// assert_eq!((s.mean, s.m2), (20.0, 200.0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct SummaryStatistics {
    /// Sum of the durations, ns.
    pub total: i64,
    /// Shortest duration, ns.
    pub minimum: i64,
    /// Longest duration, ns.
    pub maximum: i64,
    /// Duration of the row's first call, ns.
    pub first: i64,
    /// Duration of the row's last call, ns.
    pub last: i64,
    /// Earliest start, absolute ns.
    pub start_minimum: i64,
    /// Latest end, absolute ns.
    pub end_maximum: i64,
    /// GPU-timed calls and their time (the file's columns: always 0, no
    /// GPU timing in this crate; kept as read from other files).
    gpu_count: u64,
    gpu_total: i64,
    /// Mean duration, ns.
    pub mean: f64,
    /// Sum of squared deviations from the mean, ns².
    pub m2: f64,
}

impl SummaryStatistics {
    /// The file's GPU columns `(gpu_count, gpu_total)`, for the HDF5 file
    /// crate (always 0 in this crate's files; kept as read from others).
    #[doc(hidden)]
    pub fn gpu(&self) -> (u64, i64) {
        (self.gpu_count, self.gpu_total)
    }

    /// Sets the file's GPU columns (see [`Self::gpu`]).
    #[doc(hidden)]
    pub fn set_gpu(&mut self, count: u64, total: i64) {
        self.gpu_count = count;
        self.gpu_total = total;
    }

    /// Statistics of `(start_ns, duration_ns)` pairs in row order.
    ///
    /// Sums are exact (128-bit integers); `mean` and `m2` are the correctly
    /// rounded `f64` of the exact rational values.
    ///
    /// ```
    /// let stats = scope_profiler::SummaryStatistics::from_calls(&[(100, 10), (200, 30)]);
    /// assert_eq!((stats.total, stats.minimum, stats.maximum), (40, 10, 30));
    /// assert_eq!((stats.first, stats.last), (10, 30));
    /// assert_eq!((stats.start_minimum, stats.end_maximum), (100, 230));
    /// assert_eq!(stats.mean, 20.0);
    /// ```
    pub fn from_calls(calls: &[(i64, i64)]) -> Self {
        let mut acc = StatsAccumulator::default();
        for &(start, duration) in calls {
            acc.add(start, duration);
        }
        acc.finish()
    }
}

/// Builds [`SummaryStatistics`] one call at a time, in row order.
#[derive(Clone, Copy, Debug, Default)]
pub struct StatsAccumulator {
    n: u64,
    sum: i128,
    sum_sq: i128,
    stats: SummaryStatistics,
}

impl StatsAccumulator {
    pub fn add(&mut self, start: i64, duration: i64) {
        let s = &mut self.stats;
        if self.n == 0 {
            *s = SummaryStatistics {
                minimum: duration,
                maximum: duration,
                first: duration,
                start_minimum: start,
                end_maximum: start.saturating_add(duration),
                ..SummaryStatistics::default()
            };
        }
        self.n = self.n.saturating_add(1);
        self.sum = self.sum.saturating_add(duration as i128);
        self.sum_sq = self
            .sum_sq
            .saturating_add((duration as i128) * (duration as i128));
        s.minimum = s.minimum.min(duration);
        s.maximum = s.maximum.max(duration);
        s.last = duration;
        s.start_minimum = s.start_minimum.min(start);
        // Saturating: a file's values may be anything.
        s.end_maximum = s.end_maximum.max(start.saturating_add(duration));
    }

    pub fn finish(self) -> SummaryStatistics {
        let mut s = self.stats;
        if self.n == 0 {
            return s;
        }
        let n = self.n as i128;
        s.total = self.sum as i64;
        s.mean = self.sum as f64 / self.n as f64;
        // m2 = (n Σd² - (Σd)²) / n, exact in integers before the one rounding;
        // beyond 128 bits (absurdly long runs), the f64 form.
        s.m2 = match n
            .checked_mul(self.sum_sq)
            .and_then(|a| a.checked_sub(self.sum.checked_mul(self.sum)?))
        {
            Some(numerator) => numerator as f64 / self.n as f64,
            None => (self.sum_sq as f64 - self.sum as f64 * s.mean).max(0.0),
        };
        s
    }
}

/// The statistics of one region's calls (all threads), as `finalize`
/// computed them while writing: the Python package's `ProfilingResults`
/// per region. See `Results::statistics`.
///
/// The percentiles are exact (nearest rank, as numpy's `inverted_cdf`)
/// when the region's durations fit an eighth of `finalize`'s memory budget
/// (half of [`Options::memory_limit`](crate::options::Options::memory_limit), at
/// least 8 MiB: 2M calls by default); above that they come from a log histogram, within
/// [`RegionStatistics::RELATIVE_ERROR`] of the exact value, and
/// [`RegionStatistics::is_exact`] is false.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::setup(Options::new().in_memory().verbose(false))?;
/// for _ in 0..100 {
///     sp::region("step").run(|| ());
/// }
/// let results = sp::finalize()?;
/// let step = results.statistics_of("step").unwrap();
/// assert_eq!(step.num_calls(), 100);
/// assert!(step.minimum() <= step.p50() && step.p50() <= step.p99());
/// assert!(step.p99() <= step.maximum() && step.is_exact());
/// # Ok::<(), sp::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RegionStatistics {
    pub(crate) name: &'static str,
    pub(crate) calls: u64,
    pub(crate) total_ns: i64,
    pub(crate) own_ns: i64,
    pub(crate) min_ns: i64,
    pub(crate) max_ns: i64,
    pub(crate) p50_ns: i64,
    pub(crate) p95_ns: i64,
    pub(crate) p99_ns: i64,
    pub(crate) exact: bool,
}

impl RegionStatistics {
    /// The bound on the relative error of the percentiles of a region whose
    /// durations did not fit the budget: 1/32 (half a log bucket).
    ///
    /// ```
    /// assert_eq!(scope_profiler::RegionStatistics::RELATIVE_ERROR, 1.0 / 32.0);
    /// ```
    pub const RELATIVE_ERROR: f64 = crate::histogram::RELATIVE_ERROR;

    /// The region's name.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// sp::region("outer").run(|| sp::region("inner").run(|| ()));
    /// let results = sp::finalize()?;
    /// let outer = results.statistics_of("outer").unwrap();
    /// let inner = results.statistics_of("inner").unwrap();
    /// assert_eq!(outer.name(), "outer");
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn name(&self) -> &str {
        self.name
    }
    /// Number of calls.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// sp::region("outer").run(|| sp::region("inner").run(|| ()));
    /// let results = sp::finalize()?;
    /// let outer = results.statistics_of("outer").unwrap();
    /// let inner = results.statistics_of("inner").unwrap();
    /// assert_eq!(outer.num_calls(), 1);
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn num_calls(&self) -> u64 {
        self.calls
    }
    /// Summed duration of the calls, ns.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// sp::region("outer").run(|| sp::region("inner").run(|| ()));
    /// let results = sp::finalize()?;
    /// let outer = results.statistics_of("outer").unwrap();
    /// let inner = results.statistics_of("inner").unwrap();
    /// assert!(outer.total() >= inner.total()); // outer contains inner
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn total(&self) -> i64 {
        self.total_ns
    }
    /// Time spent in the calls outside their child calls, ns.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// sp::region("outer").run(|| sp::region("inner").run(|| ()));
    /// let results = sp::finalize()?;
    /// let outer = results.statistics_of("outer").unwrap();
    /// let inner = results.statistics_of("inner").unwrap();
    /// assert!(outer.exclusive() <= outer.total() - inner.total() + 1);
    /// assert_eq!(inner.exclusive(), inner.total()); // inner calls nothing
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn exclusive(&self) -> i64 {
        self.own_ns
    }
    /// Shortest call, ns.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// sp::region("outer").run(|| sp::region("inner").run(|| ()));
    /// let results = sp::finalize()?;
    /// let outer = results.statistics_of("outer").unwrap();
    /// let inner = results.statistics_of("inner").unwrap();
    /// assert!(outer.minimum() <= outer.maximum());
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn minimum(&self) -> i64 {
        self.min_ns
    }
    /// Longest call, ns.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// sp::region("outer").run(|| sp::region("inner").run(|| ()));
    /// let results = sp::finalize()?;
    /// let outer = results.statistics_of("outer").unwrap();
    /// let inner = results.statistics_of("inner").unwrap();
    /// assert_eq!(outer.maximum(), outer.total()); // one call
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn maximum(&self) -> i64 {
        self.max_ns
    }
    /// Mean duration, ns (0 without calls).
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// sp::region("outer").run(|| sp::region("inner").run(|| ()));
    /// let results = sp::finalize()?;
    /// let outer = results.statistics_of("outer").unwrap();
    /// let inner = results.statistics_of("inner").unwrap();
    /// assert_eq!(outer.mean(), outer.total() as f64);
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn mean(&self) -> f64 {
        match self.calls {
            0 => 0.0,
            n => self.total_ns as f64 / n as f64,
        }
    }
    /// Median duration, ns.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// sp::region("outer").run(|| sp::region("inner").run(|| ()));
    /// let results = sp::finalize()?;
    /// let outer = results.statistics_of("outer").unwrap();
    /// let inner = results.statistics_of("inner").unwrap();
    /// assert!(outer.minimum() <= outer.p50() && outer.p50() <= outer.maximum());
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn p50(&self) -> i64 {
        self.p50_ns
    }
    /// 95th percentile of the durations, ns.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// sp::region("outer").run(|| sp::region("inner").run(|| ()));
    /// let results = sp::finalize()?;
    /// let outer = results.statistics_of("outer").unwrap();
    /// let inner = results.statistics_of("inner").unwrap();
    /// assert!(outer.p50() <= outer.p95());
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn p95(&self) -> i64 {
        self.p95_ns
    }
    /// 99th percentile of the durations, ns.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// sp::region("outer").run(|| sp::region("inner").run(|| ()));
    /// let results = sp::finalize()?;
    /// let outer = results.statistics_of("outer").unwrap();
    /// let inner = results.statistics_of("inner").unwrap();
    /// assert!(outer.p95() <= outer.p99() && outer.p99() <= outer.maximum());
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn p99(&self) -> i64 {
        self.p99_ns
    }
    /// Whether the percentiles are exact (see the type's documentation).
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// sp::region("outer").run(|| sp::region("inner").run(|| ()));
    /// let results = sp::finalize()?;
    /// let outer = results.statistics_of("outer").unwrap();
    /// let inner = results.statistics_of("inner").unwrap();
    /// assert!(outer.is_exact()); // one duration fits any budget
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn is_exact(&self) -> bool {
        self.exact
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_of_a_files_extreme_values_saturate_rather_than_overflow() {
        // A file's starts and durations may be anything: `start + duration`
        // overflowed (a panic in debug builds) for a start near i64::MAX.
        let s = SummaryStatistics::from_calls(&[(i64::MAX - 1, 10), (i64::MIN, -5), (0, i64::MAX)]);
        assert_eq!(s.end_maximum, i64::MAX);
        assert_eq!(s.minimum, -5);
    }
}
