#!/usr/bin/env bash
# Runs every check CI runs: formatting, clippy, and the whole test suite
# (unit, integration, doc tests, the macro compile-fail tests and the
# interop test against the Python package from PyPI).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-deps.sh
cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
cargo test
