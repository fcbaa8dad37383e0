//! A region's figures for the detail pane of `scope-prof tui`: its totals
//! over every call path, and the histogram of its calls' durations (one
//! pass over the events, as the report page's; bins of a quarter octave)
//! with the percentiles read from it.

use std::collections::HashMap;

use crate::report::BINS_PER_OCTAVE;
use crate::stats::{FileTree, Node, Stat};

/// One region: its totals and its durations' histogram.
#[derive(Clone, Debug, Default)]
pub(crate) struct Region {
    pub stat: Stat,
    /// Calls per bin: bin `b` holds durations from `2^(b / 4)` ns up to the
    /// next bin's start (empty when the file has no events: an aggregate).
    pub histogram: Vec<u64>,
}

impl Region {
    /// The duration below which a share `q` (0 to 1) of the calls lie,
    /// interpolated within its bin (log-uniformly): within a quarter octave
    /// (19%) of the exact value, and clamped to the region's minimum and
    /// maximum (which `q` 0 and 1 are). `None` without a histogram.
    pub(crate) fn quantile(&self, q: f64) -> Option<f64> {
        let n: u64 = self.histogram.iter().sum();
        if n == 0 {
            return None;
        }
        // The ends are known exactly.
        let (lo, hi) = (self.stat.min as f64, self.stat.max as f64);
        let known = hi >= lo && hi > 0.0;
        if known && q <= 0.0 {
            return Some(lo);
        }
        if known && q >= 1.0 {
            return Some(hi);
        }
        let rank = (q.clamp(0.0, 1.0) * n as f64).max(1.0);
        let mut below = 0u64;
        for (b, &count) in self.histogram.iter().enumerate() {
            if count == 0 {
                continue;
            }
            if (below + count) as f64 >= rank {
                let within = (rank - below as f64) / count as f64;
                let ns = ((b as f64 + within) / BINS_PER_OCTAVE).exp2();
                return Some(if known { ns.clamp(lo, hi) } else { ns });
            }
            below += count;
        }
        None
    }
}

/// Regions by name.
pub(crate) type Regions = HashMap<String, Region>;

/// Joins the regions' totals, their shortest and longest calls over the
/// call paths of `tree`, and their histograms (by region id, as the file
/// names them).
pub(crate) fn regions(
    names: &[String],
    stats: Vec<(String, Stat)>,
    tree: &FileTree,
    histograms: Vec<Vec<u64>>,
) -> Regions {
    let mut out: Regions = stats
        .into_iter()
        .map(|(name, stat)| {
            (
                name,
                Region {
                    stat,
                    histogram: Vec::new(),
                },
            )
        })
        .collect();
    for (name, histogram) in names.iter().zip(histograms) {
        if let Some(r) = out.get_mut(name) {
            r.histogram = histogram;
        }
    }
    let mut seen: HashMap<String, (i64, i64)> = HashMap::new();
    let mut stack: Vec<&Node> = tree.groups.iter().flat_map(|(_, n)| n).collect();
    while let Some(node) = stack.pop() {
        if node.stat.calls > 0 {
            let e = seen
                .entry(node.name.clone())
                .or_insert((node.stat.min, node.stat.max));
            *e = (e.0.min(node.stat.min), e.1.max(node.stat.max));
        }
        stack.extend(&node.children);
    }
    for (name, (min, max)) in seen {
        if let Some(r) = out.get_mut(&name) {
            (r.stat.min, r.stat.max) = (min, max);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(durations: &[i64]) -> Region {
        let mut histogram = vec![0; 192];
        for &d in durations {
            histogram[crate::report::bin(d)] += 1;
        }
        let stat = Stat {
            calls: durations.len() as u64,
            min: *durations.iter().min().unwrap(),
            max: *durations.iter().max().unwrap(),
            ..Stat::default()
        };
        Region { stat, histogram }
    }

    #[test]
    fn quantiles_are_within_a_quarter_octave_and_inside_the_extremes() {
        let durations: Vec<i64> = (1..=1000).map(|i| i * 1000).collect();
        let r = region(&durations);
        for (q, exact) in [(0.5, 500_000.0), (0.9, 900_000.0), (0.99, 990_000.0)] {
            let got = r.quantile(q).unwrap();
            assert!(
                (got / exact - 1.0).abs() < 0.19,
                "q {q}: {got} against {exact}"
            );
        }
        assert_eq!(r.quantile(1.0), Some(1_000_000.0), "the maximum");
        assert_eq!(r.quantile(0.0), Some(1000.0), "the minimum");
        assert!(
            r.quantile(0.0001).unwrap() >= 1000.0,
            "clamped to the minimum"
        );
        assert_eq!(Region::default().quantile(0.5), None);
    }

    #[test]
    fn regions_join_totals_and_histograms_by_name() {
        let names = vec!["a".to_owned(), "b".to_owned()];
        let stat = Stat {
            calls: 2,
            ..Stat::default()
        };
        let mut node = Node {
            name: "b".to_owned(),
            ..Node::default()
        };
        (node.stat.calls, node.stat.min, node.stat.max) = (1, 7, 9);
        let mut deeper = node.clone();
        (deeper.stat.min, deeper.stat.max) = (3, 8);
        node.children.push(deeper);
        let tree = FileTree {
            groups: vec![("all".to_owned(), vec![node])],
            session_ns: 10,
        };
        let r = regions(
            &names,
            vec![("b".to_owned(), stat)],
            &tree,
            vec![vec![1], vec![0, 2]],
        );
        assert_eq!(
            (r["b"].stat.min, r["b"].stat.max),
            (3, 9),
            "over both paths"
        );
        assert_eq!(r.len(), 1, "a region without calls has no entry");
        assert_eq!(r["b"].histogram, [0, 2]);
        assert_eq!(r["b"].stat.calls, 2);
    }
}
