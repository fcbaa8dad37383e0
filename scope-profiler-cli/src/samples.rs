//! `inspect --samples`: a sampled session's `.sps` files (beside the
//! profile, `<stem>_rank<NNNNN>.sps`), each region's hottest functions and
//! lines, symbolized from the binaries' debug info now (the file keeps raw
//! addresses).

use std::io::Write;
use std::path::{Path, PathBuf};

use std::collections::HashMap;

use scope_profiler_reader::sps::{
    RegionSamples, SampleFile, Stacks, Symbolizer, region_samples, stacks_path,
};

use crate::Failure;

/// One `.sps` file read and counted per region, with its stacks (the
/// `.sps.stacks` file beside it, if there is one that matches it).
pub(crate) struct Sampled {
    pub(crate) path: PathBuf,
    pub(crate) file: SampleFile,
    pub(crate) stacks: Option<Stacks>,
    pub(crate) regions: Vec<RegionSamples>,
    symbols: Symbolizer,
}

/// Whether `path` names a sample file rather than a profile.
pub(crate) fn is_sample_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "sps")
}

/// Reads and symbolizes the sample file at `path`, and its stacks (in the
/// watched child: the files and the binaries they name are untrusted). A
/// stacks file that does not match the samples (another run's) is left out,
/// said on stderr.
pub(crate) fn read(path: &Path) -> Result<Sampled, Failure> {
    let bytes =
        std::fs::read(path).map_err(|e| Failure(format!("cannot read {}: {e}", path.display())))?;
    let stacks_at = stacks_path(path);
    let stacks_bytes = std::fs::read(&stacks_at).ok();
    let (file, stacks, regions, symbols) = crate::isolate::opening(path, || {
        let file = SampleFile::parse(&bytes)?;
        let stacks = match stacks_bytes.as_deref().map(Stacks::parse) {
            Some(Ok(stacks)) if stacks.samples.len() == file.samples.len() => Some(stacks),
            Some(Ok(_)) => {
                eprintln!(
                    "note: {} does not match {} (another run's?): left out",
                    stacks_at.display(),
                    path.display()
                );
                None
            }
            Some(Err(e)) => {
                eprintln!("note: {} left out: {e}", stacks_at.display());
                None
            }
            None => None,
        };
        let mut symbols = Symbolizer::new(&file);
        let regions = region_samples(&file, stacks.as_ref(), |m, a| symbols.place(m, a));
        Ok::<_, std::io::Error>((file, stacks, regions, symbols))
    })
    .map_err(|e| {
        Failure(format!(
            "{} is not a readable sample file ({e})",
            path.display()
        ))
    })?;
    Ok(Sampled {
        path: path.to_path_buf(),
        file,
        stacks,
        regions,
        symbols,
    })
}

/// The ns one sample of `s` stands for: `1e9 / rate`.
pub(crate) fn ns_per_sample(s: &Sampled) -> u64 {
    1_000_000_000 / u64::try_from(s.file.hz).unwrap_or(1).max(1)
}

/// The samples as folded stacks (`a;b;f;g`) with their counts: each
/// sample's path of regions, then its sampled frames, outermost first, down
/// to the function it was taken in. The frames every sample of a path
/// shares above the region (the callers of its code) are left out but the
/// last, so the frames hang below the innermost region. With `regions`,
/// only the samples whose path passes one of them, each path starting at
/// the outermost it passes (as the calls' export keeps a region's
/// subtree, not its callers).
pub(crate) fn folded(s: &mut Sampled, regions: &[String]) -> Vec<(String, u64)> {
    let clean = |name: &str| name.replace(';', ":");
    // Per sample: its path's key and its frames' names, outermost first.
    let mut stacks: Vec<(String, Vec<String>)> = Vec::new();
    for (i, sample) in s.file.samples.iter().enumerate() {
        let mut path: Vec<i32> = match s.stacks.as_ref().and_then(|st| st.path_of(i)) {
            Some(path) => path.to_vec(),
            None if sample.region >= 0 => vec![sample.region],
            None => continue,
        };
        if !regions.is_empty() {
            let named = |r: &i32| {
                usize::try_from(*r)
                    .ok()
                    .and_then(|r| s.file.regions.get(r))
                    .is_some_and(|n| regions.contains(n))
            };
            match path.iter().position(named) {
                Some(first) => {
                    path.drain(..first);
                }
                None => continue,
            }
        }
        let key = path
            .iter()
            .map(|&r| {
                usize::try_from(r)
                    .ok()
                    .and_then(|r| s.file.regions.get(r))
                    .map_or_else(|| "?".to_owned(), |n| clean(n))
            })
            .collect::<Vec<_>>()
            .join(";");
        let mut frames: Vec<String> = match s.stacks.as_ref().map(|st| st.chain_of(i)) {
            Some(chain) => chain
                .iter()
                .rev()
                .map(|f| {
                    clean(
                        &s.symbols
                            .place(f.module, f.address.wrapping_sub(1))
                            .function,
                    )
                })
                .collect(),
            None => Vec::new(),
        };
        frames.push(clean(
            &s.symbols.place(sample.module, sample.address).function,
        ));
        stacks.push((key, frames));
    }
    // The frames each path's samples share, from the outermost: per path,
    // its first sample and the length they share with it.
    let mut shared: HashMap<&str, (usize, usize)> = HashMap::new();
    for (i, (key, frames)) in stacks.iter().enumerate() {
        match shared.get_mut(key.as_str()) {
            Some((first, n)) => {
                let common = stacks[*first]
                    .1
                    .iter()
                    .zip(frames)
                    .take_while(|(a, b)| a == b)
                    .count();
                *n = (*n).min(common);
            }
            None => {
                shared.insert(key.as_str(), (i, frames.len()));
            }
        }
    }
    let mut lines: HashMap<String, u64> = HashMap::new();
    for (key, frames) in &stacks {
        let cut = shared
            .get(key.as_str())
            .map_or(0, |&(_, n)| n)
            .saturating_sub(1);
        let cut = cut.min(frames.len().saturating_sub(1));
        let line = format!("{key};{}", frames[cut..].join(";"));
        *lines.entry(line).or_insert(0) += 1;
    }
    let mut lines: Vec<(String, u64)> = lines.into_iter().collect();
    lines.sort();
    lines
}

/// Folded stacks (`a;b;c <ns>` lines) as a speedscope file of one sampled
/// profile (<https://www.speedscope.app/file-format-schema.json>): its
/// frames shared, each line a sample of its stack weighing its ns.
pub(crate) fn speedscope(folded: &[u8], name: &str) -> serde_json::Value {
    use serde_json::json;
    let mut frames: Vec<&str> = Vec::new();
    let mut frame_of: HashMap<&str, usize> = HashMap::new();
    let (mut stacks, mut weights) = (Vec::new(), Vec::new());
    let text = std::str::from_utf8(folded).unwrap_or_default();
    for line in text.lines() {
        let Some((stack, ns)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(ns) = ns.parse::<u64>() else {
            continue;
        };
        let ids: Vec<usize> = stack
            .split(';')
            .map(|f| {
                *frame_of.entry(f).or_insert_with(|| {
                    frames.push(f);
                    frames.len() - 1
                })
            })
            .collect();
        stacks.push(ids);
        weights.push(ns);
    }
    let total: u64 = weights.iter().sum();
    json!({
        "$schema": "https://www.speedscope.app/file-format-schema.json",
        "shared": { "frames": frames.iter().map(|f| json!({ "name": f })).collect::<Vec<_>>() },
        "profiles": [{
            "type": "sampled",
            "name": format!("{name}: samples"),
            "unit": "nanoseconds",
            "startValue": 0,
            "endValue": total,
            "samples": stacks,
            "weights": weights,
        }],
        "name": name,
        "activeProfileIndex": 0,
        "exporter": "scope-prof",
    })
}

/// Each region's hottest functions and lines, `top` of each.
pub(crate) fn print(out: &mut impl Write, s: &Sampled, top: usize) -> std::io::Result<()> {
    let total = s.file.samples.len();
    let in_regions: u64 = s.regions.iter().map(|r| r.samples).sum();
    writeln!(
        out,
        "\nSamples: {} (rank {}, {} Hz): {total} samples, {in_regions} in regions",
        s.path.display(),
        s.file.rank,
        s.file.hz,
    )?;
    let missed = u64::try_from(s.file.ticks)
        .unwrap_or(0)
        .saturating_sub(total as u64);
    if missed > 0 {
        writeln!(
            out,
            "  ({missed} more samples were not kept: see the profile's samples_missed)"
        )?;
    }
    let pct = |n: u64, of: u64| 100.0 * n as f64 / of.max(1) as f64;
    for r in &s.regions {
        let inclusive = match r.inclusive {
            Some(n) => format!("; {n} with the regions inside it"),
            None => String::new(),
        };
        writeln!(
            out,
            "\n  {}  ({} samples, {:.1}% of all{inclusive})",
            r.region,
            r.samples,
            pct(r.samples, total as u64)
        )?;
        writeln!(out, "    functions:")?;
        for (function, n) in r.functions.iter().take(top) {
            writeln!(out, "      {:5.1}%  {n:>7}  {function}", pct(*n, r.samples))?;
        }
        writeln!(out, "    lines:")?;
        for (place, n) in r.lines.iter().take(top) {
            let at = if place.file.is_empty() {
                "?".to_owned()
            } else {
                format!("{}:{}", short(&place.file), place.line)
            };
            writeln!(
                out,
                "      {:5.1}%  {n:>7}  {at}  {}",
                pct(*n, r.samples),
                place.function
            )?;
        }
    }
    Ok(())
}

/// A source path's last two components (`src/solve.rs`).
fn short(path: &str) -> &str {
    let mut cut = path.len();
    for _ in 0..2 {
        match path[..cut].rfind('/') {
            Some(i) => cut = i,
            None => return path,
        }
    }
    &path[cut + 1..]
}

/// The samples as JSON: per region, by function and by line.
pub(crate) fn json(s: &Sampled) -> serde_json::Value {
    use serde_json::json;
    json!({
        "file": s.path.display().to_string(),
        "rank": s.file.rank,
        "hz": s.file.hz,
        "samples": s.file.samples.len(),
        "regions": s.regions.iter().map(|r| json!({
            "region": r.region,
            "samples": r.samples,
            "inclusive": r.inclusive,
            "functions": r.functions.iter().map(|(f, n)| json!({"function": f, "count": n})).collect::<Vec<_>>(),
            "lines": r.lines.iter().map(|(p, n)| json!({
                "function": p.function,
                "file": p.file,
                "line": p.line,
                "count": n,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_paths_are_cut_to_two_components() {
        assert_eq!(short("/a/b/src/solve.rs"), "src/solve.rs");
        assert_eq!(short("solve.rs"), "solve.rs");
    }
}
