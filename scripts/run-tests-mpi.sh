#!/usr/bin/env bash
# The MPI tests (issue 17): builds scope-profiler with the `mpio` feature
# (rsmpi + the collective parallel-HDF5 writer) against Debian's openmpi
# HDF5, then with `mpirun -n N` for N = 1, 2, 4 and both writers (Direct,
# Parallel) runs examples/mpi_check.rs, which records a workload that
# differs by rank (regions, thread counts, a task, an idle rank) and checks
# the one file every rank wrote: exact per-rank counts, nesting per rank
# and thread, the ranks column, mpi_size, the thread and task tables. Each
# file is then read by the Python package (scripts/check-mpi-file.py:
# read_h5, inspect, the rank_heatmap and imbalance plots), the Direct and
# Parallel files are compared, ranks spill under a small memory limit and
# still write every call, and one rank's failure (fault injected
# mid-write, or a path it cannot write) must give every rank the same Err,
# under a timeout, the previous file intact.
#
# Then the same checks with feature `mpi` alone, which writes through the
# pure-Rust HDF5 layer (the Direct writer, which Auto falls back to there).
#
# Installs libopenmpi-dev, openmpi-bin, libclang-dev and libhdf5-openmpi-dev
# (the `mpio` build's C library) when the package manager says they are missing (as
# root, with apt-get; scripts/need-packages.sh); otherwise prints the
# command. Under CI=true a missing prerequisite fails; elsewhere the tests
# are skipped, loudly. The build names its HDF5 (HDF5_DIR) and
# has a target directory of its own (target/mpi, or $MPI_TARGET_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
start=$SECONDS

skip_or_fail() {
    echo "run-tests-mpi: $*" >&2
    if [ "${CI:-}" = true ]; then
        exit 1
    fi
    echo "run-tests-mpi: SKIPPED: the MPI tests did not run" >&2
    exit 0
}

hdf5_openmpi() {
    for dir in /usr/lib/*-linux-gnu/hdf5/openmpi; do
        if [ -e "$dir/include/hdf5.h" ]; then
            echo "$dir"
            return 0
        fi
    done
    return 1
}

"$root/scripts/need-packages.sh" openmpi-bin libopenmpi-dev libclang-dev libhdf5-openmpi-dev ||
    skip_or_fail "missing system packages (see above)"
HDF5_DIR=$(hdf5_openmpi) || skip_or_fail "no openmpi HDF5 under /usr/lib/*-linux-gnu/hdf5/openmpi"
export HDF5_DIR
export CARGO_TARGET_DIR=${MPI_TARGET_DIR:-$root/target/mpi}
echo "run-tests-mpi: HDF5_DIR=$HDF5_DIR CARGO_TARGET_DIR=$CARGO_TARGET_DIR"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Both builds share the target directory (the crates with and without
# `mpio` are different units); their examples are copied apart. With
# `mpio`, every file goes through the HDF5 C library (the openmpi build).
cargo build -q -p scope-profiler --features mpio --example mpi_check --example mpi \
    --example mpi_counters --example h5_copy
bin=$work/mpio
mkdir -p "$bin"
cp "$CARGO_TARGET_DIR"/debug/examples/{mpi_check,mpi,mpi_counters,h5_copy} "$bin"/
# Feature `mpi` alone: the Direct writer only, through the pure-Rust HDF5
# layer (no C library: HDF5_DIR and the library paths point nowhere).
empty=$work/empty
mkdir -p "$empty" "$work/serial"
HDF5_DIR=$empty PKG_CONFIG_PATH=$empty cargo build -q -p scope-profiler --features mpi \
    --example mpi_check --example h5_copy
cp "$CARGO_TARGET_DIR"/debug/examples/{mpi_check,h5_copy} "$work/serial/"
if ldd "$work/serial/mpi_check" | grep -q libhdf5; then
    echo "run-tests-mpi: the build with feature mpi alone links libhdf5" >&2
    exit 1
fi
echo "run-tests-mpi: built in $((SECONDS - start)) s"
# The runtime's unit tests with the feature (configuration, message encoding).
cargo test -q -p scope-profiler -p scope-profiler-core -p scope-profiler-reader \
    --features scope-profiler/mpio,scope-profiler-core/mpio,scope-profiler-reader/mpio --lib

# The Python package 0.7.5 with its plotting extras, in a venv of its own.
# A venv's scripts name its python by the path it was made at: one moved with
# its target directory imports fine, but its `scope-profiler` command cannot
# start. Such a venv is made again.
venv=$CARGO_TARGET_DIR/reader-venv
if ! "$venv/bin/python" -c 'import scope_profiler, matplotlib' 2>/dev/null ||
    [ "$(head -n1 "$venv/bin/scope-profiler" 2>/dev/null)" != "#!$venv/bin/python" ]; then
    python3 -m venv --clear "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check \
        'scope-profiler==0.7.5' matplotlib maxplotlibx
fi
py=$venv/bin/python

mpirun_n() { # N, command...
    local n=$1
    shift
    timeout 120 mpirun --allow-run-as-root --oversubscribe -n "$n" "$@"
}

for n in 1 2 4; do
    for writer in direct parallel; do
        file=$work/$writer-$n.h5
        mpirun_n "$n" "$bin/mpi_check" write "$writer" "$file"
        "$py" scripts/check-mpi-file.py "$file" "$n"
    done
    "$bin/mpi_check" same "$work/direct-$n.h5" "$work/parallel-$n.h5"
done
# Every rank's region counters (issue 27), with both writers, read back by
# us (in the example) and by the Python package's get_perf_events().
for n in 1 2 4; do
    for writer in direct parallel; do
        file=$work/counters-$writer-$n.h5
        mpirun_n "$n" "$bin/mpi_counters" "$file" "$writer" | grep -qx ok
        "$py" -c 'import sys
from scope_profiler import read_h5
r = read_h5(sys.argv[1]).get_perf_events()
n = int(sys.argv[2])
got = {k: (v["work"].calls, v["work"].values["alloc-bytes"]) for k, v in r.items()}
assert got == {k: (k + 1, 100 * (k + 1) ** 2) for k in range(n)}, got' "$file" "$n"
    done
done
# Options::from_env with SCOPE_PROFILER_MPI=1 (the world communicator).
SCOPE_PROFILER_MPI=1 SCOPE_PROFILER_OUTPUT=$work/env-4.h5 mpirun_n 4 \
    -x SCOPE_PROFILER_MPI -x SCOPE_PROFILER_OUTPUT "$bin/mpi_check" env auto "$work/env-4.h5"
"$py" scripts/check-mpi-file.py "$work/env-4.h5" 4
# Bounded memory per rank: every rank spills, every call is written.
for writer in direct parallel; do
    mpirun_n 2 "$bin/mpi_check" spill "$writer" "$work/spill-$writer.h5"
done
# Auto chooses Parallel in this build (feature mpio).
mpirun_n 2 "$bin/mpi_check" write auto "$work/auto-2.h5" | grep -q MpiParallel
echo "run-tests-mpi: auto chose the parallel writer"
# A rank whose live port is taken makes every rank's setup the same Err
# (agreed, so no rank waits for one that gave up).
mpirun_n 3 "$bin/mpi_check" liveclash auto "$work/none.h5" > "$work/live.txt"
test "$(grep -c refused "$work/live.txt")" = 3
echo "run-tests-mpi: a live port taken on one rank is every rank's Err"

# One session through both HDF5 layers (issue 33): recorded (with counters)
# by the pure-Rust layer (the build with `mpi` alone), then that layer and
# the C library of the build with `mpio` each read it and write it,
# uncompressed and compressed, and each reads all the files back equal.
pure=$work/serial/h5_copy
c_lib=$bin/h5_copy
"$pure" record "$work/one.h5"
for compression in none gzip; do
    "$pure" copy "$work/one.h5" "$work/pure-$compression.h5" "$compression"
    "$c_lib" copy "$work/one.h5" "$work/c-$compression.h5" "$compression"
    "$pure" same "$work/pure-$compression.h5" "$work/c-$compression.h5"
    "$c_lib" same "$work/pure-$compression.h5" "$work/c-$compression.h5"
    "$c_lib" same "$work/one.h5" "$work/pure-$compression.h5"
done
echo "run-tests-mpi: one session written by the pure-Rust and the C layer reads back equal in both"

# Feature `mpi` alone (the pure-Rust layer): Auto and Direct write with the
# Direct writer, the same checks; Parallel is an Err at setup on every rank.
for n in 2 4; do
    file=$work/serial-$n.h5
    mpirun_n "$n" "$work/serial/mpi_check" write auto "$file" | tee "$work/out.txt"
    grep -q MpiDirect "$work/out.txt"
    "$py" scripts/check-mpi-file.py "$file" "$n"
    # The pure-Rust layer's MPI file holds what the C library's (the mpio
    # build's Direct writer) does, read by the C library; and a copy the
    # pure-Rust layer writes of it reads back equal in the C library.
    "$bin/mpi_check" same "$file" "$work/direct-$n.h5"
    "$pure" copy "$file" "$work/pure-copy-$n.h5" gzip
    "$c_lib" same "$file" "$work/pure-copy-$n.h5"
done
if mpirun_n 2 "$work/serial/mpi_check" write parallel "$work/none.h5" 2> "$work/err.txt"; then
    echo "run-tests-mpi: Parallel without the mpio feature did not fail" >&2
    exit 1
fi
grep -q "needs parallel HDF5" "$work/err.txt"
echo "run-tests-mpi: build with feature mpi alone (pure Rust): Direct checked, Parallel refused at setup"

# One rank fails: every rank gets the same Err, nothing hangs (timeout),
# the previous file stays as it was, no temporary file is left.
for writer in direct parallel; do
    for bad in 0 2; do
        SCOPE_PROFILER_MPI_TEST_FAIL_RANK=$bad mpirun_n 4 -x SCOPE_PROFILER_MPI_TEST_FAIL_RANK \
            "$bin/mpi_check" fail "$writer" "$work/$writer-4.h5" "$bad"
    done
    mpirun_n 4 "$bin/mpi_check" badpath "$writer" "$work/$writer-4.h5" 1
done

# The MPI example (examples/mpi.rs; the crate docs' "MPI" section shows it).
mpirun_n 2 "$bin/mpi" "$work/example.h5" | grep -q "2 ranks wrote"
"$py" /dev/stdin "$work/example.h5" <<'PY'
import sys, scope_profiler as sp
r = sp.read_h5(sys.argv[1])
assert r.num_ranks == 2, r.num_ranks
print(f"examples/mpi.rs: {sys.argv[1]} read by scope_profiler {sp.__version__}: {r.num_ranks} ranks")
PY
echo "run-tests-mpi: all MPI tests passed ($((SECONDS - start)) s)"
