#!/usr/bin/env python3
"""Checks an MPI profile of examples/mpi_check.rs with h5py and the Python
package scope-profiler 0.7.5 (run with the reader venv's python):

    check-mpi-file.py FILE NRANKS

- h5py: mpi_size, the ranks column of the index, the thread table's rows
  per rank (main thread + one per worker: 1 + rank, none on the idle last
  rank when NRANKS >= 3) and the task table (one task, rank 1);
- scope_profiler.read_h5: num_ranks, each region on the ranks that
  recorded it, with the exact call count;
- the CLI: `inspect`, `plot rank_heatmap` and `plot imbalance`, each
  producing its output.
"""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import h5py
import numpy as np
import scope_profiler as sp

path, size = sys.argv[1], int(sys.argv[2])
active = [r for r in range(size) if not (size >= 3 and r == size - 1)]


def expected(rank):
    if rank not in active:
        return {}
    steps = 10 * (rank + 1)
    out = {"step": steps, "compute": 2 * steps, f"rank_{rank}": rank + 1}
    if rank > 0:
        out["worker"] = out["inner"] = 5 * rank
    if rank % 2 == 0:
        out["even_only"] = 3
    if rank == 1:
        out["fetch"] = 1
    return out


def fail(message):
    print(f"{path}: {message}", file=sys.stderr)
    sys.exit(1)


with h5py.File(path, "r") as f:
    if int(f["metadata"].attrs["mpi_size"]) != size:
        fail(f"mpi_size {f['metadata'].attrs['mpi_size']}")
    ranks = sorted(set(f["rank_region_index/ranks"][()].tolist()))
    if ranks != active:
        fail(f"ranks column {ranks}, expected {active}")
    thread_ranks = f["thread_table/ranks"][()]
    for r in range(size):
        want = 1 + r if r in active else 0
        if int((thread_ranks == r).sum()) != want:
            fail(f"rank {r}: {(thread_ranks == r).sum()} thread rows, expected {want}")
    if size >= 2:
        if f["task_table/ranks"][()].tolist() != [1]:
            fail(f"task table ranks {f['task_table/ranks'][()]}")
        tasks = f["events/task_ids"][()]
        if int((tasks >= 0).sum()) != 1:
            fail("task_ids: not exactly one call in a task")

results = sp.read_h5(path)
if results.num_ranks != size:
    fail(f"read_h5: num_ranks {results.num_ranks}")
found = {}
for region in results.get_regions():
    for rank, data in region.regions.items():
        found[(int(rank), region.name)] = int(data.num_calls)
want = {(r, name): n for r in range(size) for name, n in expected(r).items()}
if found != want:
    fail(f"read_h5 counts\n found {sorted(found.items())}\n want  {sorted(want.items())}")

cli = Path(sys.executable).with_name("scope-profiler")
env = dict(os.environ, MPLBACKEND="Agg")
with tempfile.TemporaryDirectory() as out:
    done = subprocess.run([cli, "inspect", path], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        fail(f"inspect: {done.stderr.strip()[-500:]}")
    for plot in ("rank_heatmap", "imbalance"):
        target = Path(out) / plot
        done = subprocess.run(
            [cli, "plot", plot, path, "-o", str(target)], capture_output=True, text=True, env=env
        )
        if done.returncode != 0 or not target.exists() or not any(target.iterdir()):
            fail(f"plot {plot}: exit {done.returncode}: {(done.stderr or done.stdout).strip()[-500:]}")
print(f"{path}: Python reader ok ({size} ranks, {len(found)} (rank, region) pairs; "
      "inspect, rank_heatmap, imbalance)")
