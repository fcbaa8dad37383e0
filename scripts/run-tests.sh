#!/usr/bin/env bash
# Runs every check CI runs: formatting, clippy, and the whole test suite
# (unit, integration, doc tests, the macro compile-fail tests and the
# interop test against the Python package from PyPI), the lean library
# dependency, the runtime's and integration tests again on the std-only
# platform code (--cfg scope_profiler_portable), valgrind memcheck on
# the runtime's unit tests and a spilling test, a real crate's suite
# instrumented, the packages and their docs, the default builds free of C
# (check-no-c.sh), the 200M-call bounded-memory
# test in release mode, the nesting of every profile the suites wrote
# (every_file_nests), then a real async crate's suite instrumented (the
# nesting of its profiles checked). Between them: two PyO3 extension modules
# and a Python program, their profiles merged (examples/python-extension).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-deps.sh
. scripts/hdf5-env.sh
cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
# The lean build (no `hdf5`) has code of its own (cfg): lint it too.
cargo clippy -p scope-profiler -p scope-profiler-core --all-targets --no-default-features --features enabled -- -D warnings
cargo clippy -p scope-profiler-reader --all-targets --no-default-features -- -D warnings
# The public API against its snapshot (scope-profiler/public-api.txt), and its size.
scripts/check-public-api.sh
# The suites write their files under a temporary directory of their own,
# whose profiles every_file_nests checks at the end.
test_output="${CARGO_TARGET_DIR:-$PWD/target}/test-output"
rm -rf "$test_output"
mkdir -p "$test_output"
# The interop venv (the Python package and h5py), before any test needs it.
SP_H5PY=$(scripts/python-venv.sh)
export SP_H5PY
TMPDIR="$test_output" cargo test
# A library on the lean dependency (no C code), and its application's file.
scripts/lean-test.sh
# The std-only platform code (what macOS and Windows compile), here on Linux:
# the runtime's and the integration tests, in a target directory of their own.
RUSTFLAGS="--cfg scope_profiler_portable" CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}/portable" \
    cargo test -p scope-profiler-core -p scope-profiler-reader -p scope-profiler -p integration-tests
# The runtime's unit tests and a multi-threaded spilling test under valgrind memcheck.
scripts/memcheck.sh
# A real crate's own test suite (semver 1.0.28), every module file instrumented.
scripts/real-crate-test.sh
# Every published crate packaged and verified, and its docs built as docs.rs does.
scripts/check-package.sh --allow-dirty
# Python and Rust in one profile: two PyO3 extension modules built with
# maturin, run from Python threads under the Python package, their profiles
# merged and checked through its reader (examples/python-extension).
cargo fmt --manifest-path examples/python-extension/Cargo.toml --all -- --check
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}/python-extension/cargo" \
    cargo clippy --manifest-path examples/python-extension/Cargo.toml -- -D warnings
examples/python-extension/run.sh
# The default builds have no C: no C build step or binding in their trees,
# a build with nothing to find libhdf5 by, only the C runtime linked.
scripts/check-no-c.sh
# The 200M-call bounded-memory run (about 2.5 minutes in release), and 50M calls
# under 16 MiB counting the chunks mapped (seconds).
cargo test --release -p integration-tests --test scale -- --ignored --nocapture --test-threads=1 \
  two_hundred_million_calls_under_a_64_mib_limit fifty_million_calls_under_a_16_mib_limit
# Every call of every profile the suites above wrote lies within its parent
# (release: the scale test built it; a debug walk of their ~50M calls is slow).
SP_TEST_OUTPUT="$test_output" cargo test --release -p integration-tests --test every_file_nests \
  -- --ignored --nocapture
# A real async crate's own tests (tokio-util 0.7.20), every module file
# instrumented, each test process writing a profile whose nesting is checked.
scripts/real-async-crate-test.sh
