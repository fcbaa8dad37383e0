#!/usr/bin/env bash
# Finalize time of MPI sessions (examples/mpi_bench.rs, release build with
# `mpio` against the openmpi HDF5): 1, 2 and 4 ranks x 1M events each, in
# both writers, and 4M events from one rank (both writers, and a plain
# session without MPI), in one run; the slowest rank's time, best of
# ROUNDS (default 3). Prints a markdown table.
#   bash scripts/bench-mpi.sh [COMPRESSION: auto|none]
set -euo pipefail
cd "$(dirname "$0")/.."
compression=${1:-auto}
rounds=${ROUNDS:-3}
for dir in /usr/lib/*-linux-gnu/hdf5/openmpi; do export HDF5_DIR=$dir; done
export CARGO_TARGET_DIR=${MPI_TARGET_DIR:-$PWD/target/mpi}
echo "bench-mpi: HDF5_DIR=$HDF5_DIR CARGO_TARGET_DIR=$CARGO_TARGET_DIR, $(mpirun --version | head -n 1)" >&2
cargo build -q --release -p scope-profiler --features mpio --example mpi_bench
bin=$CARGO_TARGET_DIR/release/examples/mpi_bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
best() { # ranks, writer, events per rank: "best_ms file_mib"
    local ms=() line size=
    for _ in $(seq "$rounds"); do
        line=$(timeout 300 mpirun --allow-run-as-root --oversubscribe -n "$1" "$bin" "$2" "$work/b.h5" "$3" "$compression")
        ms+=("$(sed -E 's/.*finalize_ms=([0-9.]+).*/\1/' <<<"$line")")
        size=$(sed -E 's/.*file_mib=([0-9.]+).*/\1/' <<<"$line")
    done
    echo "$(printf '%s\n' "${ms[@]}" | sort -n | head -n 1) $size"
}
echo "| ranks x events per rank | total events | Direct (ms) | Parallel (ms) | no MPI (ms) | file (MiB) |"
echo "| --- | --- | --- | --- | --- | --- |"
for n in 1 2 4; do
    read -r d size < <(best "$n" direct 1000000)
    read -r p _ < <(best "$n" parallel 1000000)
    echo "| $n x 1M | ${n}M | $d | $p | | $size |"
done
read -r d size < <(best 1 direct 4000000)
read -r p _ < <(best 1 parallel 4000000)
read -r s _ < <(best 1 serial 4000000)
echo "| 1 x 4M | 4M | $d | $p | $s | $size |"
