//! A sample file's samples counted per region: by function and by line,
//! hottest first (what `scope-profiler native-lines` prints, and `scope-prof
//! inspect --samples`).

use std::collections::HashMap;

use super::{SampleFile, Stacks};

/// Where in the source an address is: its function (demangled), file and
/// line (0 and an empty file when the binary has no line tables).
///
/// ```
/// let p = scope_profiler_reader::sps::Place {
///     function: "app::solve".into(),
///     file: "src/solve.rs".into(),
///     line: 42,
/// };
/// assert_eq!(p.to_string(), "src/solve.rs:42 app::solve");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Place {
    /// The function, demangled (an inlined one where the code was inlined).
    pub function: String,
    /// The source file ("" when unknown).
    pub file: String,
    /// The line (0 when unknown).
    pub line: u32,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.file.is_empty() {
            write!(f, "{}", self.function)
        } else {
            write!(f, "{}:{} {}", self.file, self.line, self.function)
        }
    }
}

/// One region's samples: how many, and by function and by line (each with
/// its count, hottest first; ties by name).
///
/// ```
/// use scope_profiler_reader::sps::{Place, RegionSamples};
/// let r = RegionSamples {
///     region: "solve".into(),
///     samples: 3,
///     inclusive: None,
///     functions: vec![("kernel".into(), 3)],
///     lines: vec![(Place { function: "kernel".into(), file: "k.rs".into(), line: 9 }, 3)],
/// };
/// assert_eq!(r.functions[0].1, r.samples);
/// assert_eq!(r.inclusive, None); // no stacks file
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegionSamples {
    /// The region's name.
    pub region: String,
    /// Its samples (the innermost region open at each).
    pub samples: u64,
    /// Its samples and those of the regions open inside it (each sample
    /// once), when the stacks file tells each sample's path of regions.
    pub inclusive: Option<u64>,
    /// Its samples by function, hottest first.
    pub functions: Vec<(String, u64)>,
    /// Its samples by line, hottest first.
    pub lines: Vec<(Place, u64)>,
}

/// Each region's samples (the most sampled region first; regions without
/// samples and samples outside every region left out), each distinct
/// address placed once by `place(module, address)` (a [`Symbolizer`] with
/// the feature `symbols`, or anything that knows the binaries). With the
/// file's `stacks`, each region's inclusive count too (its samples and
/// those of the regions inside it), and regions whose time is all in
/// regions inside them are listed.
///
/// [`Symbolizer`]: https://docs.rs/scope-profiler-reader/latest/scope_profiler_reader/sps/struct.Symbolizer.html
///
/// ```
/// use scope_profiler_reader::sps::{Place, Sample, SampleFile, region_samples};
/// let s = |region, address| Sample { region, module: 0, address };
/// let file = SampleFile {
///     regions: vec!["solve".into(), "io".into()],
///     samples: vec![s(0, 0x10), s(0, 0x10), s(0, 0x20), s(1, 0x30), s(-1, 0x40)],
///     ..SampleFile::default()
/// };
/// let by = region_samples(&file, None, |_, a| Place {
///     function: if a < 0x30 { "solve_kernel" } else { "write" }.into(),
///     file: "src/lib.rs".into(),
///     line: a as u32,
/// });
/// assert_eq!(by[0].region, "solve");
/// assert_eq!(by[0].samples, 3);
/// assert_eq!(by[0].functions, [("solve_kernel".to_string(), 3)]);
/// assert_eq!(by[0].lines[0].1, 2); // line 0x10, twice
/// assert_eq!(by[1].region, "io");
/// ```
pub fn region_samples(
    file: &SampleFile,
    stacks: Option<&Stacks>,
    mut place: impl FnMut(i32, u64) -> Place,
) -> Vec<RegionSamples> {
    // Inclusive counts from each sample's path (a recursive region once).
    let inclusive: Option<Vec<u64>> = stacks.map(|stacks| {
        let mut counts = vec![0u64; file.regions.len()];
        let mut seen: Vec<usize> = Vec::new();
        for i in 0..file.samples.len() {
            seen.clear();
            for &r in stacks.path_of(i).unwrap_or(&[]) {
                if let Ok(r) = usize::try_from(r)
                    && r < counts.len()
                    && !seen.contains(&r)
                {
                    counts[r] += 1;
                    seen.push(r);
                }
            }
        }
        counts
    });
    let mut places: HashMap<(i32, u64), usize> = HashMap::new();
    let mut known: Vec<Place> = Vec::new();
    // Per region: per place index, its count.
    let mut counts: Vec<HashMap<usize, u64>> = vec![HashMap::new(); file.regions.len()];
    for s in &file.samples {
        let Some(region) = usize::try_from(s.region)
            .ok()
            .and_then(|r| counts.get_mut(r))
        else {
            continue;
        };
        let at = *places.entry((s.module, s.address)).or_insert_with(|| {
            known.push(place(s.module, s.address));
            known.len() - 1
        });
        *region.entry(at).or_insert(0) += 1;
    }
    let mut out: Vec<RegionSamples> = counts
        .into_iter()
        .enumerate()
        .filter(|(r, c)| !c.is_empty() || inclusive.as_ref().is_some_and(|inc| inc[*r] > 0))
        .map(|(r, c)| {
            // Several addresses may be one line: counted by place.
            let mut functions: HashMap<&str, u64> = HashMap::new();
            let mut by_line: HashMap<&Place, u64> = HashMap::new();
            for (&at, &n) in &c {
                *functions.entry(known[at].function.as_str()).or_insert(0) += n;
                *by_line.entry(&known[at]).or_insert(0) += n;
            }
            let mut lines: Vec<(Place, u64)> =
                by_line.into_iter().map(|(p, n)| (p.clone(), n)).collect();
            lines.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            let mut functions: Vec<(String, u64)> = functions
                .into_iter()
                .map(|(f, n)| (f.to_owned(), n))
                .collect();
            functions.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            RegionSamples {
                region: file.regions[r].clone(),
                samples: c.values().sum(),
                inclusive: inclusive.as_ref().map(|inc| inc[r]),
                functions,
                lines,
            }
        })
        .collect();
    // The most sampled first: inclusively when known.
    let key = |r: &RegionSamples| r.inclusive.unwrap_or(r.samples);
    out.sort_by(|a, b| key(b).cmp(&key(a)).then_with(|| a.region.cmp(&b.region)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sps::Sample;

    /// With stacks: a region whose samples are all in a region inside it
    /// is listed, with its inclusive count; a recursive path counts once.
    #[test]
    fn inclusive_counts_follow_the_paths() {
        use crate::sps::Stacks;
        let s = |region, address| Sample {
            region,
            module: 0,
            address,
        };
        let file = SampleFile {
            regions: vec!["outer".into(), "inner".into(), "io".into()],
            samples: vec![s(1, 1), s(1, 1), s(1, 2), s(2, 3), s(-1, 4)],
            ..SampleFile::default()
        };
        let stacks = Stacks {
            paths: vec![vec![0, 1], vec![0, 1, 0, 1], vec![2]],
            chains: vec![],
            samples: vec![(0, -1), (1, -1), (0, -1), (2, -1), (-1, -1)],
        };
        let by = region_samples(&file, Some(&stacks), |_, a| Place {
            function: format!("f{a}"),
            ..Place::default()
        });
        let got: Vec<(&str, u64, Option<u64>)> = by
            .iter()
            .map(|r| (r.region.as_str(), r.samples, r.inclusive))
            .collect();
        assert_eq!(
            got,
            [
                ("inner", 3, Some(3)),
                ("outer", 0, Some(3)),
                ("io", 1, Some(1))
            ]
        );
    }

    /// Two addresses on one line are one line; a region index past the
    /// list is skipped, not a panic.
    #[test]
    fn addresses_of_one_line_add_up() {
        let s = |region, address| Sample {
            region,
            module: 0,
            address,
        };
        let file = SampleFile {
            regions: vec!["r".into()],
            samples: vec![s(0, 1), s(0, 2), s(0, 3), s(7, 1), s(0, 9)],
            ..SampleFile::default()
        };
        let by = region_samples(&file, None, |_, a| Place {
            function: if a < 9 { "f" } else { "g" }.into(),
            file: "x.rs".into(),
            line: if a < 3 { 10 } else { 11 },
        });
        assert_eq!(by.len(), 1);
        assert_eq!(by[0].samples, 4);
        assert_eq!(
            by[0].functions,
            [("f".to_string(), 3), ("g".to_string(), 1)]
        );
        let lines: Vec<(u32, u64)> = by[0].lines.iter().map(|(p, n)| (p.line, *n)).collect();
        assert_eq!(lines, [(10, 2), (11, 1), (11, 1)]);
    }
}
