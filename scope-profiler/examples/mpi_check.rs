//! The MPI test driver of `scripts/run-tests-mpi.sh` (feature `mpi`).
//!
//! - `mpi_check write MODE PATH`: every rank records a workload that
//!   depends on its rank (different regions, thread counts, a task, an idle
//!   last rank when there are 3 or more), finalizes collectively with
//!   writer MODE (`direct`, `parallel`, `auto`), and rank 0 reads the file
//!   back and checks it: every rank's exact call counts per region, the
//!   `ranks` column, `mpi_size`, the nesting of every call (its parent is
//!   the expected region, on the same rank and thread), the thread and task
//!   tables' sizes.
//! - `mpi_check fail MODE PATH RANK`: the same workload, with rank RANK
//!   failing its part of the write (`SCOPE_PROFILER_MPI_TEST_FAIL_RANK=RANK`
//!   in the environment, `mpirun -x`):
//!   every rank must get the same `Err`, and the file at PATH (written
//!   before by `write`) must be unchanged.
//! - `mpi_check badpath MODE PATH RANK`: rank RANK finalizes to a path in a
//!   missing directory: every rank must get the same `Err`, PATH unchanged.
//! - `mpi_check spill MODE PATH`: every rank records 500k calls under a
//!   4 MiB memory limit (so each spills to its scratch file, and finalize
//!   goes through scratch buckets); every rank must have spilled, and the
//!   file holds each rank's 500k calls.
//! - `mpi_check env MODE PATH`: as `write`, the options from
//!   `Options::from_env()` (`SCOPE_PROFILER_MPI=1` and
//!   `SCOPE_PROFILER_OUTPUT=PATH` set by the launcher).
//! - `mpi_check liveclash MODE PATH`: rank 1 asks for a live server on a
//!   port rank 0 holds, the others on free ports: every rank's `setup`
//!   must be the same `Err` naming that port (none hangs, none starts).
//! - `mpi_check same A B` (no MPI): the two files hold the same profile.

use scope_profiler_core::internal::options::read;
use std::collections::{BTreeMap, HashMap};
use std::process::ExitCode;

use mpi::traits::{Communicator, CommunicatorCollectives};
use scope_profiler::{self as sp, MpiOutput, Options, Profile, Value};

/// Calls per region that rank `rank` of `size` makes.
fn expected(rank: usize, size: usize) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    if size >= 3 && rank == size - 1 {
        return out; // the idle rank
    }
    let steps = 10 * (rank as u64 + 1);
    out.insert("step".to_owned(), steps);
    out.insert("compute".to_owned(), 2 * steps);
    if rank > 0 {
        out.insert("worker".to_owned(), 5 * rank as u64);
        out.insert("inner".to_owned(), 5 * rank as u64);
    }
    out.insert(format!("rank_{rank}"), rank as u64 + 1);
    if rank.is_multiple_of(2) {
        out.insert("even_only".to_owned(), 3);
    }
    if rank == 1 {
        out.insert("fetch".to_owned(), 1);
    }
    out
}

/// Records rank `rank`'s workload.
fn workload(rank: usize, size: usize) {
    if size >= 3 && rank == size - 1 {
        return;
    }
    for _ in 0..10 * (rank + 1) {
        sp::region("step").run(|| {
            sp::region("compute").run(|| ());
            sp::region("compute").run(|| ());
        });
    }
    let threads: Vec<_> = (0..rank)
        .map(|_| {
            std::thread::spawn(|| {
                for _ in 0..5 {
                    sp::region("worker").run(|| sp::region("inner").run(|| ()));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("worker thread");
    }
    let name = format!("rank_{rank}");
    for _ in 0..=rank {
        sp::region(&name).run(|| ());
    }
    if rank.is_multiple_of(2) {
        for _ in 0..3 {
            sp::region("even_only").run(|| ());
        }
    }
    if rank == 1 {
        let mut call = sp::region("fetch").start_async();
        call.poll_begin();
        call.poll_end();
        call.finish();
    }
}

/// The memory limit and calls per rank of `spill`.
const SPILL_LIMIT: usize = 4 << 20;
const SPILL_CALLS: u64 = 500_000;

/// The parent region each nested region must have.
const PARENTS: &[(&str, &str)] = &[("compute", "step"), ("inner", "worker")];

fn check_file(path: &str, size: usize) -> Result<(), String> {
    let profile = sp::read_profile(path).map_err(|e| e.to_string())?;
    let meta = |key: &str| profile.metadata_value(key).cloned();
    if meta("mpi_size") != Some(Value::Int(size as i64)) {
        return Err(format!("mpi_size {:?}, expected {size}", meta("mpi_size")));
    }
    if meta("num_nodes") != Some(Value::Int(1)) {
        return Err(format!("num_nodes {:?}", meta("num_nodes")));
    }
    // Exact counts per (rank, region).
    let mut found: BTreeMap<(u32, String), u64> = BTreeMap::new();
    for row in &profile.rows {
        let name = profile.region_names[row.region_id as usize].clone();
        if found
            .insert((row.rank, name.clone()), row.event_count)
            .is_some()
        {
            return Err(format!("two rows for rank {} region {name}", row.rank));
        }
    }
    let mut want: BTreeMap<(u32, String), u64> = BTreeMap::new();
    for rank in 0..size {
        for (name, n) in expected(rank, size) {
            want.insert((rank as u32, name), n);
        }
    }
    if found != want {
        return Err(format!(
            "counts per (rank, region):\n found {found:?}\n want  {want:?}"
        ));
    }
    // Nesting, per rank and thread.
    let task_ids = profile.events.task_ids.as_ref();
    for rank in 0..size as u32 {
        let mut calls: HashMap<i64, (&str, i64)> = HashMap::new();
        let rows: Vec<_> = profile.rows.iter().filter(|r| r.rank == rank).collect();
        for row in &rows {
            let name = profile.region_names[row.region_id as usize].as_str();
            for i in row.events() {
                calls.insert(
                    profile.events.call_ids[i],
                    (name, profile.events.thread_ids[i]),
                );
            }
        }
        for row in &rows {
            let name = profile.region_names[row.region_id as usize].as_str();
            for i in row.events() {
                let parent = profile.events.parent_ids[i];
                let thread = profile.events.thread_ids[i];
                match PARENTS.iter().find(|(child, _)| *child == name) {
                    Some((_, want)) => match calls.get(&parent) {
                        Some((p, t)) if p == want && *t == thread => {}
                        other => {
                            return Err(format!(
                                "rank {rank}: {name} call {} has parent {parent} = {other:?}, \
                                 expected {want} on thread {thread}",
                                profile.events.call_ids[i]
                            ));
                        }
                    },
                    None if parent != -1 => {
                        return Err(format!("rank {rank}: top-level {name} has parent {parent}"));
                    }
                    None => {}
                }
                let task = task_ids.map_or(-1, |t| t[i]);
                if (name == "fetch") != (task >= 0) {
                    return Err(format!("rank {rank}: {name} has task id {task}"));
                }
            }
        }
    }
    // Threads: one per recording thread of every rank (main + rank
    // workers); one task, on rank 1.
    let threads: usize = (0..size)
        .filter(|&r| !expected(r, size).is_empty())
        .map(|r| 1 + r)
        .sum();
    if profile.threads.len() != threads {
        return Err(format!(
            "{} thread rows, expected {threads}",
            profile.threads.len()
        ));
    }
    let tasks = usize::from(size >= 2);
    if profile.tasks.len() != tasks {
        return Err(format!(
            "{} task rows, expected {tasks}",
            profile.tasks.len()
        ));
    }
    Ok(())
}

fn mode(name: &str) -> MpiOutput {
    match name {
        "direct" => MpiOutput::Direct,
        "parallel" => MpiOutput::Parallel,
        _ => MpiOutput::Auto,
    }
}

/// The profiles' content, without what differs between two runs (times,
/// durations): metadata keys and values, regions, rows, the call structure
/// (call, parent, thread and task ids), the thread and task tables.
fn shape(p: &Profile) -> String {
    let rows: Vec<_> = p
        .rows
        .iter()
        .map(|r| {
            (
                r.rank,
                p.region_names[r.region_id as usize].clone(),
                r.event_offset,
                r.event_count,
            )
        })
        .collect();
    // Metadata: every key, and the values that do not change between runs
    // and file names.
    let metadata: Vec<_> = p
        .metadata
        .iter()
        .map(|(k, v)| match k.as_str() {
            // The label is the file stem.
            "label" | "timestamp" | "start_time_ns" | "finalize_time_ns" | "pid" => {
                (k.clone(), None)
            }
            _ => (k.clone(), Some(v.clone())),
        })
        .collect();
    let threads: Vec<_> = p
        .threads
        .iter()
        .map(|t| (t.index, t.name.clone()))
        .collect();
    let tasks: Vec<_> = p
        .tasks
        .iter()
        .map(|t| {
            (
                t.index,
                t.thread_index,
                t.kind.clone(),
                t.name.clone(),
                t.steps,
            )
        })
        .collect();
    format!(
        "metadata {metadata:?}\nnames {:?}\nrows {:?}\ncalls {:?}\nparents {:?}\nthreads {:?}\ntasks {:?}\nthread table {threads:?}\ntask table {tasks:?}",
        p.region_names,
        rows,
        p.events.call_ids,
        p.events.parent_ids,
        p.events.thread_ids,
        p.events.task_ids,
    )
}

/// `mpi_check liveclash`: see the module's doc.
fn live_clash(world: &mpi::topology::SimpleCommunicator, options: Options) -> ExitCode {
    use mpi::traits::Root;
    let rank = world.rank();
    let held = (rank == 0).then(|| std::net::TcpListener::bind("127.0.0.1:0").expect("a port"));
    let mut port = held
        .as_ref()
        .map_or(0, |l| l.local_addr().expect("its address").port());
    world.process_at_rank(0).broadcast_into(&mut port);
    let addr = match rank {
        1 => format!("127.0.0.1:{port}"),
        _ => "127.0.0.1:0".to_owned(),
    };
    match sp::setup(options.live(addr)) {
        Ok(_) => {
            eprintln!("rank {rank}: setup succeeded beside a rank whose port is taken");
            ExitCode::FAILURE
        }
        Err(e) if e.to_string().contains(&port.to_string()) && !sp::is_active() => {
            println!("rank {rank}: refused: {e}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rank {rank}: another error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("same") {
        let read = |p: &String| sp::read_profile(p).map(|p| shape(&p));
        return match (read(&args[1]), read(&args[2])) {
            (Ok(a), Ok(b)) if a == b => {
                println!("same content: {} and {}", args[1], args[2]);
                ExitCode::SUCCESS
            }
            (Ok(a), Ok(b)) => {
                eprintln!("the files differ:\n{a}\n---\n{b}");
                ExitCode::FAILURE
            }
            (a, b) => {
                eprintln!("unreadable: {:?} {:?}", a.err(), b.err());
                ExitCode::FAILURE
            }
        };
    }
    let universe = mpi::initialize().expect("MPI initializes");
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let (command, writer, path) = (args[0].as_str(), mode(&args[1]), args[2].clone());
    let mut options = match command {
        "env" => match Options::from_env() {
            Ok(o) if read::mpi(&o) == Some((rank as u32, size as u32)) => o.mpi_output(writer),
            other => {
                eprintln!("rank {rank}: from_env: {other:?}");
                return ExitCode::FAILURE;
            }
        },
        _ => Options::new()
            .file_path(&path)
            .mpi(&world)
            .mpi_output(writer),
    }
    .verbose(false);
    if command == "spill" {
        options = options.memory_limit(SPILL_LIMIT);
    }
    if command == "liveclash" {
        return live_clash(&world, options);
    }
    let run = match sp::setup(options) {
        Ok(run) => run,
        Err(e) => {
            eprintln!("rank {rank}: setup: {e}");
            return ExitCode::FAILURE;
        }
    };
    if command == "spill" {
        for _ in 0..SPILL_CALLS {
            sp::region("bulk").run(|| ());
        }
    } else {
        workload(rank, size);
    }
    match command {
        "spill" => {
            let done = sp::finalize();
            let spilled = done.as_ref().is_ok_and(|r| r.health().spilled_bytes > 0);
            let mut all = vec![0u8; size];
            world.all_gather_into(&u8::from(spilled), &mut all[..]);
            if let Err(e) = done {
                eprintln!("rank {rank}: finalize: {e}");
                return ExitCode::FAILURE;
            }
            if rank == 0 {
                if all.contains(&0) {
                    eprintln!("not every rank spilled: {all:?}");
                    return ExitCode::FAILURE;
                }
                let profile = match sp::read_profile(&path) {
                    Ok(p) => p,
                    Err(e) => {
                        eprintln!("{path}: {e}");
                        return ExitCode::FAILURE;
                    }
                };
                let counts: Vec<(u32, u64)> = profile
                    .rows
                    .iter()
                    .map(|r| (r.rank, r.event_count))
                    .collect();
                let want: Vec<(u32, u64)> = (0..size as u32).map(|r| (r, SPILL_CALLS)).collect();
                if counts != want {
                    eprintln!("{path}: rows {counts:?}, expected {want:?}");
                    return ExitCode::FAILURE;
                }
                println!(
                    "{path}: {size} ranks spilled under {SPILL_LIMIT} B each, {SPILL_CALLS} calls each written"
                );
            }
            ExitCode::SUCCESS
        }
        "write" | "env" => {
            // A checkpoint is collective too: the file as of now.
            if let Err(e) = sp::checkpoint() {
                eprintln!("rank {rank}: checkpoint: {e}");
                return ExitCode::FAILURE;
            }
            world.barrier();
            if rank == 0
                && let Err(e) = check_file(&path, size)
            {
                eprintln!("{path} (checkpoint): {e}");
                return ExitCode::FAILURE;
            }
            let started = std::time::Instant::now();
            let done = sp::finalize();
            let elapsed = started.elapsed();
            world.barrier();
            if let Err(e) = done {
                eprintln!("rank {rank}: finalize: {e}");
                return ExitCode::FAILURE;
            }
            if rank == 0 {
                if let Err(e) = check_file(&path, size) {
                    eprintln!("{path}: {e}");
                    return ExitCode::FAILURE;
                }
                println!(
                    "{path}: {size} ranks, {:?}, checked (finalize {:.1} ms)",
                    done.map(|r| r.write_path()).ok(),
                    elapsed.as_secs_f64() * 1e3
                );
            }
            ExitCode::SUCCESS
        }
        "fail" | "badpath" => {
            let bad: usize = args[3].parse().expect("a rank");
            let before = std::fs::read(&path).expect("the file of an earlier run");
            // `fail`: the launcher sets SCOPE_PROFILER_MPI_TEST_FAIL_RANK.
            let done = if command == "fail" {
                sp::finalize()
            } else if rank == bad {
                run.finalize_to("/nonexistent-scope-profiler-dir/x.h5")
            } else {
                run.finalize_to(&path)
            };
            let message = match done {
                Ok(_) => {
                    eprintln!("rank {rank}: finalize succeeded, expected an error");
                    return ExitCode::FAILURE;
                }
                Err(e) => e.to_string(),
            };
            // Every rank has the same error: its length and a hash of it
            // are the same on every rank.
            let mine = [
                message.len() as u64,
                message
                    .bytes()
                    .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b))),
            ];
            let mut all = vec![0u64; 2 * size];
            world.all_gather_into(&mine[..], &mut all[..]);
            if all.chunks(2).any(|theirs| theirs != mine) {
                eprintln!("rank {rank}: errors differ between ranks: {message}");
                return ExitCode::FAILURE;
            }
            if !message.contains(&format!("rank {bad}")) {
                eprintln!("rank {rank}: error does not name rank {bad}: {message}");
                return ExitCode::FAILURE;
            }
            world.barrier();
            if rank == 0 {
                let after = std::fs::read(&path).expect("the file is still there");
                if after != before {
                    eprintln!("{path} changed");
                    return ExitCode::FAILURE;
                }
                let dir = std::path::Path::new(&path).parent().expect("a directory");
                let temps = std::fs::read_dir(dir)
                    .expect("readable")
                    .filter(|e| {
                        e.as_ref()
                            .is_ok_and(|e| e.file_name().to_string_lossy().contains(".tmp"))
                    })
                    .count();
                if temps != 0 {
                    eprintln!("{temps} temporary files left in {}", dir.display());
                    return ExitCode::FAILURE;
                }
                println!(
                    "{command} on rank {bad} of {size}: every rank got: {message}; {path} unchanged"
                );
            }
            ExitCode::SUCCESS
        }
        other => {
            eprintln!("unknown command {other}");
            ExitCode::FAILURE
        }
    }
}
