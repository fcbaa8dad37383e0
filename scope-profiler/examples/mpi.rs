//! One profile from every rank of an MPI job (feature `mpi`):
//!
//! ```text
//! cargo build --release -p scope-profiler --features mpio --example mpi
//! mpirun -n 4 target/release/examples/mpi mpi_run.h5 [auto|direct|parallel]
//! ```
//!
//! Every rank records its own calls (rank r solves r + 1 steps, and spawns
//! r worker threads); `finalize` is collective and writes one file, with a
//! `ranks` column and each rank's thread table.

use mpi::traits::Communicator;
use scope_profiler::{self as sp, MpiOutput, Options};

fn main() -> Result<(), sp::Error> {
    let universe = mpi::initialize().expect("MPI is initialized once");
    let world = universe.world();
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "mpi_run.h5".to_owned());
    let output = match args.next().as_deref() {
        Some("direct") => MpiOutput::Direct,
        Some("parallel") => MpiOutput::Parallel,
        _ => MpiOutput::Auto,
    };
    sp::setup(
        Options::new()
            .file_path(&path)
            .mpi(&world)
            .mpi_output(output)
            .verbose(false),
    )?;
    let rank = world.rank() as usize;
    for _ in 0..=rank {
        sp::region("solve").run(|| sp::region("assemble").run(|| ()));
    }
    let workers: Vec<_> = (0..rank)
        .map(|_| std::thread::spawn(|| sp::region("worker").run(|| ())))
        .collect();
    for worker in workers {
        worker.join().expect("a worker thread");
    }
    let results = sp::finalize()?;
    if rank == 0 {
        println!(
            "{} ranks wrote {} ({:?})",
            world.size(),
            path,
            results.write_path()
        );
    }
    Ok(())
}
