//! Finalize time of an MPI session (feature `mpi`), for
//! `scripts/bench-mpi.sh`:
//!
//! ```text
//! mpirun -n N mpi_bench MODE PATH EVENTS [none|auto]
//! ```
//!
//! Every rank records EVENTS calls (a `step` region around a `kernel`
//! region, half the events each), then all ranks finalize with writer MODE
//! (`direct`, `parallel`, or `serial`: no MPI session, one process's own
//! file). Rank 0 prints one line: ranks, events per rank, writer,
//! compression, the slowest rank's finalize time and the file's size.

use std::time::Instant;

use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives};
use scope_profiler::{self as sp, Compression, MpiOutput, Options};

fn main() -> Result<(), sp::Error> {
    let universe = mpi::initialize().expect("MPI initializes");
    let world = universe.world();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mode, path) = (args[0].as_str(), &args[1]);
    let events: usize = args[2].parse().expect("an event count");
    let compression = match args.get(3).map(String::as_str) {
        Some("none") => Compression::None,
        _ => Compression::Auto,
    };
    let mut options = Options::new()
        .file_path(path)
        .verbose(false)
        .compression(compression);
    options = match mode {
        "direct" => options.mpi(&world).mpi_output(MpiOutput::Direct),
        "parallel" => options.mpi(&world).mpi_output(MpiOutput::Parallel),
        _ => options,
    };
    sp::setup(options)?;
    for _ in 0..events / 2 {
        sp::region("step").run(|| sp::region("kernel").run(|| ()));
    }
    world.barrier();
    let started = Instant::now();
    let results = sp::finalize()?;
    let mine = started.elapsed().as_secs_f64();
    let mut slowest = 0.0f64;
    world.all_reduce_into(&mine, &mut slowest, SystemOperation::max());
    if world.rank() == 0 {
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        println!(
            "ranks={} events_per_rank={} writer={mode} ({:?}) compression={:?} finalize_ms={:.1} file_mib={:.1}",
            world.size(),
            events,
            results.write_path(),
            compression,
            slowest * 1e3,
            size as f64 / (1 << 20) as f64
        );
    }
    Ok(())
}
