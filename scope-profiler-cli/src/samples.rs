//! `inspect --samples`: a sampled session's `.sps` files (beside the
//! profile, `<stem>_rank<NNNNN>.sps`), each region's hottest functions and
//! lines, symbolized from the binaries' debug info now (the file keeps raw
//! addresses).

use std::io::Write;
use std::path::{Path, PathBuf};

use scope_profiler_reader::sps::{RegionSamples, SampleFile, Symbolizer, region_samples};

use crate::Failure;

/// One `.sps` file read and counted per region.
pub(crate) struct Sampled {
    pub(crate) path: PathBuf,
    pub(crate) file: SampleFile,
    pub(crate) regions: Vec<RegionSamples>,
}

/// Whether `path` names a sample file rather than a profile.
pub(crate) fn is_sample_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "sps")
}

/// Reads and symbolizes the sample file at `path` (in the watched child:
/// the file and the binaries it names are untrusted).
pub(crate) fn read(path: &Path) -> Result<Sampled, Failure> {
    let bytes =
        std::fs::read(path).map_err(|e| Failure(format!("cannot read {}: {e}", path.display())))?;
    let (file, regions) = crate::isolate::opening(path, || {
        let file = SampleFile::parse(&bytes)?;
        let mut symbols = Symbolizer::new(&file);
        let regions = region_samples(&file, |m, a| symbols.place(m, a));
        Ok::<_, std::io::Error>((file, regions))
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
        regions,
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
        writeln!(
            out,
            "\n  {}  ({} samples, {:.1}% of all)",
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
