#!/usr/bin/env bash
# The lean library dependency (issue 24): tests/lean/lib depends on
# scope-profiler with `default-features = false, features = ["enabled"]`.
#  1. Its dependency tree (normal and build) holds no -sys crate, no crate
#     that builds C (cc, cmake, bindgen, pkg-config) and nothing the HDF5
#     file needs (scope-profiler-hdf5, flate2, toml).
#  2. It builds and its tests pass with HDF5 pointed nowhere (HDF5_DIR and
#     pkg-config's paths), in a target directory of its own; a session with
#     a file path is refused there, naming the feature.
#     Without `hdf5` it writes a JSON profile (`.json`), which the Python
#     package reads (`scope_profiler.load`, `python -m scope_profiler
#     inspect`) and `scope-prof inspect` shows, with the library's five
#     regions of 10 calls each.
#  3. The application over it (default features) writes one file holding
#     the library's calls nested under its own, read back by our reader
#     (in the app) and by the Python package (names and counts).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
target=${CARGO_TARGET_DIR:-$root/target}
start=$SECONDS

tree=$(cargo tree -q -p lean-lib -e normal,build --prefix none --no-dedupe)
bad=$(grep -E '^([a-z0-9_-]+-sys|cc|cmake|bindgen|pkg-config|flate2|toml|hdf5[a-z0-9_-]*|scope-profiler-hdf5) ' <<<"$tree" || true)
if [ -n "$bad" ]; then
    echo "lean-test: lean-lib's dependency tree holds:" >&2
    echo "$bad" >&2
    exit 1
fi
echo "lean-test: lean-lib's tree: $(sort -u <<<"$tree" | wc -l) crates, no -sys crate, no C build, no flate2/toml"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
HDF5_DIR=/nonexistent/hdf5 PKG_CONFIG_PATH=/nonexistent PKG_CONFIG_LIBDIR=/nonexistent \
    LEAN_EXPECT_NO_HDF5=1 LEAN_JSON_OUT=$work/lean.json CARGO_TARGET_DIR=$target/lean \
    cargo test -q -p lean-lib
echo "lean-test: lean-lib built and tested with HDF5 pointed nowhere; it wrote $(stat -c %s "$work/lean.json") bytes of JSON profile"
# No source text compiled in without `capture-source` (issue 24, item 5):
# the marker comment inside an instrumented function is not in the binary.
lean_test_exe() { # extra cargo args...
    CARGO_TARGET_DIR=$target/lean HDF5_DIR=/nonexistent/hdf5 \
        cargo test -q -p lean-lib --no-run --message-format=json "$@" |
        python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["executable"])' | tail -n 1
}
exe=$(lean_test_exe)
if grep -q "lean-lib-source-marker" "$exe"; then
    echo "lean-test: $exe holds lean-lib's source text without the feature capture-source" >&2
    exit 1
fi
with=$(lean_test_exe --features scope-profiler/capture-source)
if ! grep -q "lean-lib-source-marker" "$with"; then
    echo "lean-test: $with lacks lean-lib's source text with the feature capture-source" >&2
    exit 1
fi
echo "lean-test: source text compiled in only with capture-source ($(stat -c %s "$exe") vs $(stat -c %s "$with") bytes)"

. scripts/hdf5-env.sh
cargo run -q -p lean-app -- "$work/app.h5"
py=$(CARGO_TARGET_DIR="$target" scripts/python-venv.sh)

# The lean build's JSON profile, read by scope-prof (built with `hdf5`).
cargo run -q -p scope-profiler-cli -- inspect "$work/lean.json" >"$work/inspect.txt"
for region in parse tokenize lean_lib::checksum lean_lib::by_name bump; do
    if ! grep -Eq "^ *$region +10 " "$work/inspect.txt"; then
        cat "$work/inspect.txt" >&2
        echo "lean-test: scope-prof inspect does not show $region with 10 calls" >&2
        exit 1
    fi
done
echo "lean-test: scope-prof inspect shows the library's 5 regions x 10 calls"
"$py" - "$work/app.h5" <<'PY'
import sys
import scope_profiler as sp
r = sp.read_h5(sys.argv[1])
calls = {}
for region in r.get_regions():
    for rank, data in region.regions.items():
        calls[region.name] = calls.get(region.name, 0) + int(data.num_calls)
lib = {n: c for n, c in calls.items() if "lean_lib" in n or n.endswith(("parse", "tokenize", "bump"))}
assert len(lib) == 5 and set(lib.values()) == {10}, calls
print(f"lean-test: read by scope_profiler {sp.__version__}: {len(calls)} regions, the library's: {lib}")
PY
# The lean build's JSON profile, read by the Python package as it reads its
# own (`load` sniffs the format; `inspect` is its CLI).
"$py" - "$work/lean.json" <<'PY'
import subprocess, sys
from pathlib import Path
import scope_profiler as sp
r = sp.load(sys.argv[1])
calls = {}
for region in r.get_regions():
    for rank, data in region.regions.items():
        calls[region.name] = calls.get(region.name, 0) + int(data.num_calls)
want = {"parse": 10, "tokenize": 10, "lean_lib::checksum": 10, "lean_lib::by_name": 10, "bump": 10}
assert all(calls.get(k) == v for k, v in want.items()), calls
cli = Path(sys.executable).with_name("scope-profiler")
done = subprocess.run([cli, "inspect", sys.argv[1]], capture_output=True, text=True)
assert done.returncode == 0 and "tokenize" in done.stdout, (done.returncode, done.stdout, done.stderr)
html = Path(sys.argv[1]).with_suffix(".html")
done = subprocess.run([cli, "report", sys.argv[1], "-o", html], capture_output=True, text=True)
assert done.returncode == 0 and "tokenize" in html.read_text(), (done.returncode, done.stderr)
print(f"lean-test: the lean build's JSON profile read by scope_profiler {sp.__version__} (load, inspect, report): {calls}")
PY
echo "lean-test: passed ($((SECONDS - start)) s)"
