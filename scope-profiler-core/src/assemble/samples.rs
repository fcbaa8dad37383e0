//! Samples given to calls (issue 39): a sample taken on a thread belongs to
//! the innermost call open on that thread at its time, which the lane's
//! records tell by themselves (start, end, depth): nothing is added to
//! enter or exit for it.

#![forbid(unsafe_code)]

/// Where a sample landed: the innermost call open at its time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Landing {
    /// The call's region id.
    pub region: u32,
    /// The call's depth on its lane (0: outermost).
    pub depth: u32,
}

/// One finished call of a lane, on the samples' clock: open from `start`
/// (included) to `end` (excluded), `depth` calls deep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: u64,
    pub end: u64,
    pub depth: u32,
    pub region: u32,
}

/// Samples given to calls as the calls come: each call visits the samples
/// it holds (two binary searches find them), so the work is the calls
/// plus, per sample, the calls open at its time. The calls of one lane
/// nest, so of the calls open at a time the deepest is the innermost.
pub struct Attribution<'t> {
    times: &'t [u64],
    landed: Vec<Option<Landing>>,
}

impl<'t> Attribution<'t> {
    /// For `times`, one lane's samples, sorted.
    pub fn new(times: &'t [u64]) -> Attribution<'t> {
        debug_assert!(times.is_sorted(), "the samples' times are sorted");
        Attribution {
            times,
            landed: vec![None; times.len()],
        }
    }

    /// A finished call of the lane, in any order.
    pub fn call(&mut self, call: Span) {
        let lo = self.times.partition_point(|&t| t < call.start);
        let hi = self.times.partition_point(|&t| t < call.end).max(lo);
        for slot in &mut self.landed[lo..hi] {
            if slot.is_none_or(|l| call.depth >= l.depth) {
                *slot = Some(Landing {
                    region: call.region,
                    depth: call.depth,
                });
            }
        }
    }

    /// Where each sample landed (`None`: outside every call).
    pub fn finish(self) -> Vec<Option<Landing>> {
        self.landed
    }
}

/// Gives each of `times` (one lane's samples, sorted) the innermost of
/// `calls` (the lane's finished calls, in any order) open at it; `None`
/// where no call was. See [`Attribution`].
pub fn attribute(times: &[u64], calls: impl IntoIterator<Item = Span>) -> Vec<Option<Landing>> {
    let mut a = Attribution::new(times);
    for call in calls {
        a.call(call);
    }
    a.finish()
}

/// A sample of the session, given to a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LandedSample {
    /// The sampled thread's index in the file's threads.
    pub thread: u32,
    /// CLOCK_MONOTONIC ns.
    pub time_ns: u64,
    /// The interrupted instruction's address.
    pub ip: u64,
    /// The index row (the file's region) of the innermost call open on the
    /// thread then; `None` outside every recorded call.
    pub row: Option<u32>,
}

/// A session's samples up to the cut, each given to a call.
#[derive(Clone, Debug, Default)]
pub struct Sampled {
    /// Samples per second of a thread's CPU time.
    pub hz: u32,
    /// Every sample kept, thread by thread, in time order in each.
    pub samples: Vec<LandedSample>,
    /// Samples not kept (past the memory bound) or lost by the kernel (a
    /// full ring).
    pub missed: u64,
    /// The threads whose event could not be opened, each with why.
    pub failures: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start: u64, end: u64, depth: u32, region: u32) -> Span {
        Span {
            start,
            end,
            depth,
            region,
        }
    }

    fn regions(got: &[Option<Landing>]) -> Vec<Option<u32>> {
        got.iter().map(|l| l.map(|l| l.region)).collect()
    }

    #[test]
    fn a_sample_goes_to_the_innermost_open_call() {
        // main [0, 100) > solve [10, 60) > factor [20, 30); io [70, 90).
        // Records come in the order calls ended: children first.
        let calls = [
            span(20, 30, 2, 3),
            span(10, 60, 1, 2),
            span(70, 90, 1, 4),
            span(0, 100, 0, 1),
        ];
        let times = [0, 5, 10, 20, 29, 30, 59, 60, 65, 70, 89, 90, 99, 100, 150];
        let got = attribute(&times, calls);
        assert_eq!(
            regions(&got),
            [
                Some(1), // main's start
                Some(1),
                Some(2), // solve's start
                Some(3),
                Some(3),
                Some(2), // factor ended at 30: back in solve
                Some(2),
                Some(1),
                Some(1),
                Some(4),
                Some(4),
                Some(1),
                Some(1),
                None, // main ended at 100
                None,
            ]
        );
        assert_eq!(
            got[3],
            Some(Landing {
                region: 3,
                depth: 2
            })
        );
    }

    #[test]
    fn the_calls_order_does_not_matter() {
        let mut calls = vec![
            span(0, 1000, 0, 0),
            span(100, 200, 1, 1),
            span(150, 160, 2, 2),
            span(300, 400, 1, 3),
        ];
        let times: Vec<u64> = (0..1100).step_by(7).collect();
        let want = attribute(&times, calls.clone());
        calls.reverse();
        assert_eq!(attribute(&times, calls.clone()), want);
        calls.swap(0, 2);
        assert_eq!(attribute(&times, calls), want);
    }

    #[test]
    fn no_samples_or_no_calls() {
        assert!(attribute(&[], [span(0, 10, 0, 1)]).is_empty());
        assert_eq!(attribute(&[1, 2], []), [None, None]);
        // An empty call (start == end) holds no time.
        assert_eq!(attribute(&[5], [span(5, 5, 0, 1)]), [None]);
    }
}
