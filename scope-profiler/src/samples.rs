//! A sampled session's `.sps` file (issue 39): the samples the walk gave
//! to calls, with the files mapped into the process, in the layout of the
//! Python package's `native_samples.py`, written beside the profile as
//! `<stem>_rank<NNNNN>.sps`, where `scope-profiler native-lines` finds it.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use crate::assemble::Plan;
use crate::assemble::samples::Sampled;
use crate::error::Error;
use crate::platform::{self, Module};
use crate::reader::sps::{Sample, SampleFile};

/// The `.sps` file of `sampled` (rank `rank`; regions named as the
/// profile's rows), its addresses placed in the process's modules as they
/// are mapped now.
pub(crate) fn sample_file(sampled: &Sampled, plan: &Plan, rank: i32) -> SampleFile {
    let modules = platform::modules();
    // Every executable range, sorted, with its module's index.
    let mut ranges: Vec<(u64, u64, i32)> = modules
        .iter()
        .enumerate()
        .flat_map(|(i, m)| m.ranges.iter().map(move |&(s, e)| (s, e, i as i32)))
        .collect();
    ranges.sort_unstable();
    let module_of = |ip: u64| -> i32 {
        let at = ranges.partition_point(|&(start, ..)| start <= ip);
        match at.checked_sub(1).map(|i| ranges[i]) {
            Some((_, end, module)) if ip < end => module,
            _ => -1,
        }
    };
    SampleFile {
        rank,
        hz: i32::try_from(sampled.hz).unwrap_or(i32::MAX),
        ticks: i64::try_from(sampled.samples.len() as u64 + sampled.missed).unwrap_or(i64::MAX),
        regions: (0..plan.rows())
            .map(|row| plan.region_name(row).to_owned())
            .collect(),
        modules: modules
            .iter()
            .map(|Module { path, base, .. }| (path.clone(), *base))
            .collect(),
        samples: sampled
            .samples
            .iter()
            .map(|s| Sample {
                region: s.row.map_or(-1, |r| r as i32),
                module: module_of(s.ip),
                address: s.ip,
            })
            .collect(),
    }
}

/// Where the samples of the profile at `profile` go: beside it, named
/// `<stem>_rank<NNNNN>.sps` (`run.h5` -> `run_rank00000.sps`; a
/// `.json.gz` profile loses both extensions).
pub(crate) fn sample_path(profile: &Path, rank: i32) -> PathBuf {
    let name = profile
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    let stem = match name.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem,
        _ => name,
    };
    profile.with_file_name(format!("{stem}_rank{rank:05}.sps"))
}

/// Writes `file` at `path`, atomically (a reader never sees half a file).
pub(crate) fn write(file: &SampleFile, path: &Path) -> Result<(), Error> {
    let bytes = file.to_bytes();
    crate::publish::publish_atomically(path, |temp| {
        std::fs::write(temp, &bytes).map_err(|e| Error::io(temp, e))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_samples_file_is_named_after_the_profile_and_rank() {
        for (profile, rank, want) in [
            ("out/run.h5", 0, "out/run_rank00000.sps"),
            ("run.json.gz", 12, "run_rank00012.sps"),
            ("a.b/prof.json", 3, "a.b/prof_rank00003.sps"),
            ("noext", 0, "noext_rank00000.sps"),
            (".hidden", 0, ".hidden_rank00000.sps"),
        ] {
            assert_eq!(sample_path(Path::new(profile), rank), Path::new(want));
        }
    }
}
