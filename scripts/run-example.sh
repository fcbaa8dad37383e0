#!/usr/bin/env bash
# Runs the main example: writes regions.h5 (or the path given) and prints the summary.
# Needs nothing but a Rust toolchain (the HDF5 file is pure Rust).
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo run --release -p scope-profiler --example regions -- "${1:-regions.h5}"
