//! A log histogram of durations: 16 buckets per power of two, so a
//! quantile read from it is within about 3% (half a bucket's width) of the
//! exact one. Used where durations are too many to keep: the call trees of
//! `export`, and the percentiles of a region too large for `finalize`'s
//! memory budget.

/// Sub-buckets per power of two.
const SUB: u32 = 16;

/// The relative error of a quantile read from a [`LogHistogram`]: half a
/// bucket's width, 1/32.
pub(crate) const RELATIVE_ERROR: f64 = 1.0 / 32.0;

/// Buckets of a histogram at most: that of the largest `i64` is below.
pub const BUCKETS: usize = 64 * SUB as usize;

/// Counts of durations per log bucket.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogHistogram {
    counts: Vec<u64>,
}

impl LogHistogram {
    pub fn add(&mut self, duration: i64) {
        let bucket = bucket_of(duration);
        if self.counts.len() <= bucket {
            self.counts.resize(bucket + 1, 0);
        }
        self.counts[bucket] += 1;
    }

    /// The buckets with counts, ascending: `(bucket, count)`.
    pub(crate) fn buckets(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(b, &n)| (b as u32, n))
    }

    /// Adds the counts of `buckets` (as [`Self::buckets`] gives them).
    pub fn add_buckets(&mut self, buckets: &[(u32, u64)]) {
        for &(bucket, n) in buckets {
            let bucket = bucket as usize;
            if bucket >= BUCKETS {
                continue; // no duration falls there: not from `buckets`
            }
            if self.counts.len() <= bucket {
                self.counts.resize(bucket + 1, 0);
            }
            self.counts[bucket] += n;
        }
    }

    /// The `q` quantile (0..=1) of `calls` durations between `min` and
    /// `max`: the middle of its bucket, clamped to `min..=max`.
    pub fn quantile(&self, q: f64, calls: u64, min: i64, max: i64) -> i64 {
        if calls == 0 {
            return 0;
        }
        let rank = rank(q, calls);
        let mut seen = 0;
        for (bucket, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return bucket_mid(bucket).clamp(min, max);
            }
        }
        max
    }
}

/// The 1-based rank of the `q` quantile of `calls` values (nearest rank,
/// as numpy's `inverted_cdf`).
pub(crate) fn rank(q: f64, calls: u64) -> u64 {
    ((q.clamp(0.0, 1.0) * calls as f64).ceil() as u64).clamp(1, calls.max(1))
}

/// The bucket of a duration.
fn bucket_of(duration: i64) -> usize {
    let d = duration.max(0) as u64;
    if d < SUB as u64 {
        return d as usize;
    }
    let log = 63 - d.leading_zeros(); // >= 4
    let shift = log - SUB.trailing_zeros();
    let sub = ((d >> shift) as u32) - SUB; // 0..16
    ((log - SUB.trailing_zeros() + 1) * SUB + sub) as usize
}

/// The middle of a bucket's range of durations.
fn bucket_mid(bucket: usize) -> i64 {
    let bucket = bucket as u32;
    if bucket < SUB {
        return bucket as i64;
    }
    let shift = bucket / SUB - 1;
    let sub = bucket % SUB + SUB;
    let low = (sub as u64) << shift;
    (low + ((1u64 << shift) >> 1)) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_within_the_stated_error() {
        let mut h = LogHistogram::default();
        let values: Vec<i64> = (1..=100_000).map(|i| i * 37 % 1_000_003).collect();
        for &v in &values {
            h.add(v);
        }
        let mut sorted = values.clone();
        sorted.sort_unstable();
        let (min, max) = (sorted[0], *sorted.last().unwrap());
        for q in [0.5, 0.95, 0.99] {
            let exact = sorted[rank(q, sorted.len() as u64) as usize - 1];
            let got = h.quantile(q, sorted.len() as u64, min, max);
            let error = (got - exact).abs() as f64 / exact as f64;
            assert!(error <= RELATIVE_ERROR, "q={q}: {got} vs {exact}");
        }
    }
}
