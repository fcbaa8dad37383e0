#!/usr/bin/env bash
# Builds the two extension modules (maturin), runs demo.py with the Python
# package scope-profiler 0.7.5 recording the program and each extension its
# own session, merges the three files with `scope-prof merge` and checks the
# merged profile through the Python package's reader (check.py), its CLI's
# inspect, report, speedscope export and flame chart. Everything lives under
# target/python-extension (the venv with maturin and the Python package from
# PyPI, the build, the run's files). CI runs it (scripts/run-tests.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
out="$target/python-extension"
venv="$out/venv"
py="$venv/bin/python"
mkdir -p "$out"
# (matplotlib and maxplotlibx: what its `plot flame_chart` needs.)
if ! "$py" -c 'import scope_profiler, maturin, matplotlib, maxplotlibx' 2>/dev/null; then
    python3 -m venv --clear "$venv"
    "$py" -m pip install -q --disable-pip-version-check 'scope-profiler==0.7.5' \
        'maturin>=1.5,<2' matplotlib 'maxplotlibx>=0.1.9'
fi
# The extensions, each with its own copy of the runtime, built against this
# venv's Python and installed into it.
rm -rf "$out/wheels"
for module in ext_a ext_b; do
    CARGO_TARGET_DIR="$out/cargo" "$venv/bin/maturin" build --release --quiet \
        --manifest-path "$here/$module/Cargo.toml" --interpreter "$py" --out "$out/wheels"
done
"$py" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$out"/wheels/*.whl
# scope-prof, from the main workspace (the test build's, when there).
(cd "$root" && cargo build -q -p scope-profiler-cli)
scope_prof="$target/debug/scope-prof"
run="$out/run"
rm -rf "$run"
mkdir -p "$run"
cd "$run"
"$py" "$here/demo.py" > demo.log || { cat demo.log; exit 1; }
"$scope_prof" merge python.h5 ext_a.h5 ext_b.h5 -o merged.h5
"$py" "$here/check.py" merged.h5 ext_a.h5 stamps.json
# The Python package's own views of the merged file.
"$venv/bin/scope-profiler" inspect merged.h5 > inspect.txt
"$venv/bin/scope-profiler" report merged.h5 -o report.html > /dev/null
"$venv/bin/scope-profiler" export speedscope merged.h5 -o speedscope > /dev/null
MPLBACKEND=Agg "$venv/bin/scope-profiler" plot flame_chart merged.h5 -o plots > /dev/null
test -s plots/flame_chart_plot.png
grep -q "ext_a.kernel" inspect.txt
# The Python package's own path, finalize(native_traces=...), takes an
# extension's file as it is (keeping only each region's start and end times).
"$py" - > native.log <<'PY' || { cat native.log; exit 1; }
import scope_profiler as sp
sp.setup(file_path="native.h5")
with sp.region("python.outer"):
    pass
sp.finalize(native_traces="ext_b.h5")
calls = {r.name: len(r.regions[0].start_times_ns) for r in sp.read_h5("native.h5").get_regions()}
assert calls == {"python.outer": 1, "ext_b.solve": 18}, calls
PY
"$scope_prof" inspect merged.h5 --threads
echo "python-extension: ok ($run)"
