#!/usr/bin/env bash
# Runs the main example: writes regions.h5 (or the path given) and prints the summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-deps.sh
. scripts/hdf5-env.sh
exec cargo run --release -p scope-profiler --example regions -- "${1:-regions.h5}"
