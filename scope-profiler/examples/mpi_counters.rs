//! An MPI session's file holds every rank's region counters (issue 27):
//! `mpirun -n N target/.../examples/mpi_counters FILE direct|parallel`.
//! Rank r makes r + 1 calls of `work`, each allocating and freeing
//! `100 * (r + 1)` bytes; rank 0 reads the file back and checks each
//! rank's `rank<r>/perf_events/work`. Prints `ok` on rank 0.

use mpi::traits::Communicator;
use scope_profiler::{self as sp, CountingAllocator, MpiOutput, Options};

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator::system();

fn main() {
    let universe = mpi::initialize().expect("MPI initializes");
    let world = universe.world();
    let (rank, size) = (world.rank() as u64, world.size() as u64);
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("a file path");
    let writer = match args.next().as_deref() {
        Some("parallel") => MpiOutput::Parallel,
        _ => MpiOutput::Direct,
    };
    sp::setup(
        Options::new()
            .file_path(&path)
            .verbose(false)
            .mpi(&world)
            .mpi_output(writer)
            .track_allocations(true),
    )
    .expect("setup");
    for _ in 0..=rank {
        sp::region("work").run(|| {
            drop(std::hint::black_box(vec![0u8; 100 * (rank as usize + 1)]));
        });
    }
    sp::finalize().expect("finalize");
    if rank == 0 {
        let reader = scope_profiler_reader::ProfileReader::open(&path).expect("read back");
        for r in 0..size {
            let c = reader
                .counters()
                .iter()
                .find(|c| c.rank == r as u32 && c.name == "work")
                .unwrap_or_else(|| panic!("rank {r}: {:?}", reader.counters()));
            assert_eq!(c.num_calls, r + 1, "rank {r}");
            assert_eq!(c.get("alloc-count"), Some(r + 1), "rank {r}");
            assert_eq!(
                c.get("alloc-bytes"),
                Some((r + 1) * (r + 1) * 100),
                "rank {r}"
            );
        }
        println!("ok");
    }
}
