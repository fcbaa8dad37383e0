#!/usr/bin/env bash
# Makes (or keeps) the interop venv, target/tmp/interop-venv (or under
# $CARGO_TARGET_DIR), with the Python package scope-profiler==0.7.5 (and so
# h5py) from PyPI: the one tests/lib.rs's `reader_python` makes, made here
# before the tests so that every test finds it, whichever runs first (the
# HDF5 crate's tests compare what they read with h5py). Prints its python.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-$PWD/target}"
venv="$target/tmp/interop-venv"
py="$venv/bin/python"
# A venv moved with its target directory names its old path in its scripts:
# made again (tests/lib.rs checks the same).
if ! "$py" -c 'import scope_profiler, h5py' 2>/dev/null ||
    [ "$(head -1 "$venv/bin/scope-profiler" 2>/dev/null)" != "#!$py" ]; then
    mkdir -p "$target/tmp"
    python3 -m venv --clear "$venv" >&2
    "$py" -m pip install -q --disable-pip-version-check 'scope-profiler==0.7.5' >&2
fi
echo "$py"
