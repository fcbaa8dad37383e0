#!/usr/bin/env bash
# Instructions per call of bench-compare's rows, counted exactly by valgrind's
# callgrind (this machine has no PMU for `perf stat`, and a VM's timing noise
# hides a nanosecond): each row runs `compare one SLUG N` and `... 2N` with
# collection on inside `Variant::run` (the timed loop: no setup, no
# finalize, no other thread, so a peer's background collector is not
# counted), and the difference over N is its instructions per call; the bare
# loop's are subtracted. Prints a markdown table.
#
#   scripts/bench-instructions.sh [SLUG...]   # default: ours, the floor and the peers
#
# Needs valgrind (scripts/need-packages.sh valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/need-packages.sh valgrind
cargo build --release -q -p bench-compare --bin compare
target="${CARGO_TARGET_DIR:-$PWD/target}"
compare="$target/release/compare"
n=200000 # a multiple of every row's batch: 10000 tasks of 20 polls (`async-polls-20`)
slugs=("$@")
if [ ${#slugs[@]} -eq 0 ]; then
    slugs=(floor-rdtsc profile cached async-task in-task async-nested outcome in-metadata
        metadata-per-call async-polls async-polls-20 plain-polls fastrace hotpath puffin tracing
        fastrace-async hotpath-async tracing-async)
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
count() { # SLUG CALLS -> instructions collected
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*Variant::run*' \
        --callgrind-out-file="$out/$1.$2" "$compare" one "$1" "$2" > /dev/null 2>&1
    sed -n 's/^summary: //p' "$out/$1.$2"
}
per_call() { # SLUG -> instructions per call, loop included
    local one two
    one=$(count "$1" "$n")
    two=$(count "$1" $((2 * n)))
    echo $(((two - one) * 100 / n))
}
bare=$(per_call bare)
echo "| row (\`compare one SLUG\`) | instructions per call |"
echo "|---|---:|"
for slug in "${slugs[@]}"; do
    x=$(($(per_call "$slug") - bare))
    printf '| %s | %d.%02d |\n' "$slug" $((x / 100)) $((x % 100))
done
