//! A sampled session's `.sps` file (issue 39): the samples the walk gave
//! to calls, with the files mapped into the process, in the layout of the
//! Python package's `native_samples.py`, written beside the profile as
//! `<stem>_rank<NNNNN>.sps`, where `scope-profiler native-lines` finds it;
//! and beside it the `.sps.stacks` file, each sample's path of regions and
//! call chain (`scope_profiler_reader::sps::Stacks`).

#![forbid(unsafe_code)]

use std::path::Path;

use crate::assemble::Plan;
use crate::assemble::samples::Sampled;
use crate::error::Error;
use crate::platform::{self, Module};
use crate::reader::sps::{Frame, Sample, SampleFile, Stacks};

/// The `.sps` file of `sampled` (rank `rank`; regions named as the
/// profile's rows) and its stacks, its addresses placed in the process's
/// modules as they are mapped now.
pub(crate) fn sample_file(sampled: &Sampled, plan: &Plan, rank: i32) -> (SampleFile, Stacks) {
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
    let file = SampleFile {
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
    };
    // The chains are numbered once each already: the file's table is
    // theirs, each frame placed in its module.
    let chains: Vec<Vec<Frame>> = (0..sampled.chains.len() as u32)
        .map(|id| {
            sampled
                .chains
                .get(id)
                .iter()
                .map(|&address| Frame {
                    // A return address: its call is the byte before.
                    module: module_of(address.wrapping_sub(1)),
                    address,
                })
                .collect()
        })
        .collect();
    let samples = sampled
        .samples
        .iter()
        .map(|s| {
            let chain = i32::try_from(s.chain)
                .ok()
                .filter(|&c| (c as usize) < chains.len())
                .unwrap_or(-1);
            (s.path.map_or(-1, |p| p as i32), chain)
        })
        .collect();
    let stacks = Stacks {
        paths: sampled
            .paths
            .iter()
            .map(|p| p.iter().map(|&r| r as i32).collect())
            .collect(),
        chains,
        samples,
    };
    (file, stacks)
}

/// Writes `bytes` at `path`, atomically (a reader never sees half a file).
pub(crate) fn write(bytes: &[u8], path: &Path) -> Result<(), Error> {
    crate::publish::publish_atomically(path, |temp| {
        std::fs::write(temp, bytes).map_err(|e| Error::io(temp, e))
    })
}
