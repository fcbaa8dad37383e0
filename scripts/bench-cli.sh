#!/usr/bin/env bash
# Times scope-prof (this workspace, release) against the Python package's CLI
# on one profile of N calls (default 10M): speedscope and chrome-trace exports,
# plus our folded export and inspect. Prints wall time and peak RSS of each.
#   bash scripts/bench-cli.sh [N] [DIR]      (PYTHON=/path/to/python with scope-profiler 0.7.5)
# The Python CLI needs many GiB of memory on 10M calls; SKIP_PYTHON=1 skips it.
set -euo pipefail
N=${1:-10000000}
DIR=${2:-$(mktemp -d)}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
. "$ROOT/scripts/hdf5-env.sh"
cargo build --release -q -p scope-profiler-cli --bin scope-prof --example make_big
BIN=$CARGO_TARGET_DIR/release/scope-prof
FILE=$DIR/bench_$N.h5
[ -f "$FILE" ] || "$CARGO_TARGET_DIR/release/examples/make_big" "$FILE" "$N"
ls -l "$FILE"
measure() { # label, command...
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$DIR/time.txt" "$@" > /dev/null 2> "$DIR/err.txt" || { cat "$DIR/err.txt"; return 1; }
  read -r secs kib < "$DIR/time.txt"
  printf '%-34s %8.2f s  peak RSS %6d MiB\n' "$label" "$secs" $((kib / 1024))
}
measure "ours inspect" "$BIN" inspect "$FILE"
measure "ours export folded" "$BIN" export folded "$FILE" -o "$DIR/p.folded"
measure "ours export speedscope" "$BIN" export speedscope "$FILE" -o "$DIR/p.speedscope.json"
measure "ours export chrome-trace" "$BIN" export chrome-trace "$FILE" -o "$DIR/p.trace.json"
if [ "${SKIP_PYTHON:-0}" != 1 ]; then
  PY=${PYTHON:-$CARGO_TARGET_DIR/tmp/interop-venv/bin/python}
  measure "python export speedscope" "$PY" -m scope_profiler export speedscope "$FILE" -o "$DIR/py"
  measure "python export chrome-trace" "$PY" -m scope_profiler export chrome-trace "$FILE" -o "$DIR/py"
fi
