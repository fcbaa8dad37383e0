#!/usr/bin/env bash
# Runs the runtime's unit tests and one short multi-threaded spilling test
# (a recording thread, a polling thread and the spill writer) under valgrind
# memcheck; any error fails. Installs valgrind (Debian package) when the
# package manager says it is missing (scripts/need-packages.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/hdf5-env.sh

scripts/need-packages.sh valgrind

# The test executables cargo builds, by target name.
executable() {
    cargo test --no-run --message-format=json "$@" 2>/dev/null |
        python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["executable"])' | tail -n 1
}

memcheck() {
    valgrind --tool=memcheck --error-exitcode=1 --leak-check=full \
        --errors-for-leak-kinds=definite --show-leak-kinds=definite \
        --quiet "$@"
}

reliability=$(executable -p integration-tests --test reliability)
# The runtime's unit tests, crate by crate: the core (recording, assembly),
# the HDF5 file, the reader (readers, exports, the JSON profile) and the
# facade (sessions).
# SP_MEMCHECK: tests that record millions of calls on several threads
# record fewer (valgrind runs one thread at a time, 20-50x slower).
for crate in scope-profiler-core scope-profiler-hdf5 scope-profiler-reader scope-profiler; do
    unit=$(executable -p "$crate" --lib)
    echo "memcheck: $crate unit tests ($unit)"
    SP_MEMCHECK=1 memcheck "$unit" --test-threads=2
done
echo "memcheck: a recording thread, a polling thread and the spill writer"
# --fair-sched=yes: valgrind runs one thread at a time, and with its default
# lock the polling thread of this test starved the recording thread (74-122 s
# to record what takes 20 s with fair scheduling; one CI run hit the test's
# 120 s bound before the writer spilled). Not for the unit tests: their clock
# test reads two clocks back to back, which fair switching can part.
memcheck --fair-sched=yes "$reliability" --exact num_calls_never_decreases_while_the_writer_spills
echo "memcheck: no errors"
