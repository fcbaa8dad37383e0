//! `scope-prof merge`: profiles recorded in one process (a Python program's
//! and its Rust extensions') as one file, each call nested under the call
//! that ran it on its thread (`Profile::merge`).

use std::path::PathBuf;

use scope_profiler::{self as sp, Compression, Profile, Value};

use crate::Failure;

/// Arguments of `scope-prof merge`.
#[derive(clap::Args, Debug)]
pub(crate) struct MergeArgs {
    /// The profiles (HDF5 or JSON): the host program's first (where two
    /// calls of different files span the same interval, the earlier file's
    /// is the outer).
    #[arg(required = true, num_args = 1..)]
    inputs: Vec<PathBuf>,
    /// The merged profile: JSON for a name ending in `.json` or
    /// `.json.gz`, HDF5 otherwise.
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// Merge profiles that do not look like one process's (other hosts or
    /// pids, sessions apart in time); profiles of different pids still
    /// get lanes of their own, never nested into each other.
    #[arg(long)]
    force: bool,
}

/// Reads the inputs, merges them, writes the output; a summary on stderr.
pub(crate) fn merge(args: &MergeArgs) -> Result<(), Failure> {
    let inputs = args
        .inputs
        .iter()
        .map(|path| crate::opened(path, |p| sp::read_profile(p)))
        .collect::<Result<Vec<Profile>, Failure>>()?;
    let merged = if args.force {
        Profile::merge_forced(&inputs)
    } else {
        Profile::merge(&inputs)
    }
    .map_err(|e| Failure(format!("{e} (inputs: {})", names(&args.inputs))))?;
    let threads: usize = inputs.iter().map(|p| p.threads.len()).sum();
    sp::write_profile(&merged, &args.output, Compression::Auto)?;
    eprintln!(
        "scope-prof: merged {} profiles: {} calls of {} regions on {} threads ({} matched by OS \
         thread id) -> {}",
        inputs.len(),
        merged.events.len(),
        merged.region_names.len(),
        merged.threads.len(),
        threads.saturating_sub(merged.threads.len()),
        args.output.display()
    );
    if let (Some(Value::Int(moved)), Some(Value::Int(max))) = (
        merged.metadata_value("merge_moved_ends"),
        merged.metadata_value("merge_moved_ns_max"),
    ) {
        eprintln!(
            "scope-prof: {moved} call ends moved by at most {max} ns so that calls of different \
             files nest exactly (their clocks disagree by that much)"
        );
    }
    Ok(())
}

fn names(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
