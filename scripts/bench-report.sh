#!/usr/bin/env bash
# Times `scope-prof report` (this workspace, release) against the Python
# package's `scope-profiler report` on one profile of N calls (default 10M,
# written by scope-profiler-cli's make_big example): wall time, peak RSS and
# the page's size, for issue 28's bounds (<= 10 s, <= 20 MB at 10M calls).
#   bash scripts/bench-report.sh [N] [DIR]
# THREADS=T TASKS=K spread the calls over T threads, each also polling K
# async tasks (task lanes; issue 37's 100M-call measure: N=100000000
# THREADS=4 TASKS=2000; the call tree's external sort writes 48 bytes a call
# to scratch files beside the file, unlinked).
# PYTHON=/path/to/python names a python with scope-profiler 0.7.5 (its
# charts need the `pproc` extra, Plotly); by default the interop venv the
# tests make under target/tmp. The Python report needs about 10 GiB of memory
# and minutes on 10M calls; SKIP_PYTHON=1 skips it.
set -euo pipefail
N=${1:-10000000}
DIR=${2:-$(mktemp -d)}
mkdir -p "$DIR"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
. "$ROOT/scripts/hdf5-env.sh"
cargo build --release -q -p scope-profiler-cli --bin scope-prof --example make_big
BIN=$CARGO_TARGET_DIR/release/scope-prof
THREADS=${THREADS:-1}
TASKS=${TASKS:-0}
FILE=$DIR/bench_$N.h5
[ "$THREADS" = 1 ] && [ "$TASKS" = 0 ] || FILE=$DIR/bench_${N}_${THREADS}t_${TASKS}k.h5
[ -f "$FILE" ] || "$CARGO_TARGET_DIR/release/examples/make_big" "$FILE" "$N" "$THREADS" "$TASKS"
ls -l "$FILE"
measure() { # label, output page, command...
  local label=$1 page=$2; shift 2
  rm -f "$page"
  /usr/bin/time -f "%e %M" -o "$DIR/time.txt" "$@" > /dev/null 2> "$DIR/err.txt" || { cat "$DIR/err.txt"; return 1; }
  read -r secs kib < "$DIR/time.txt"
  awk -v l="$label" -v s="$secs" -v k="$kib" -v b="$(stat -c %s "$page")" \
    'BEGIN { printf "%-30s %8.2f s  peak RSS %6d MiB  page %8.2f MB\n", l, s, k / 1024, b / 1e6 }'
}
measure "scope-prof report" "$DIR/ours.html" "$BIN" report "$FILE" -o "$DIR/ours.html"
if [ "${SKIP_PYTHON:-0}" != 1 ]; then
  PY=${PYTHON:-$CARGO_TARGET_DIR/tmp/interop-venv/bin/python}
  "$PY" -c 'import plotly' 2>/dev/null || echo "note: $PY has no Plotly: its page has no charts (pip install 'scope-profiler[pproc]==0.7.5')"
  measure "python scope-profiler report" "$DIR/python.html" "$PY" -m scope_profiler report "$FILE" -o "$DIR/python.html"
fi
