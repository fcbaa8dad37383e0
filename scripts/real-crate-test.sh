#!/usr/bin/env bash
# Runs a real crate's own test suite instrumented: semver 1.0.28's source,
# fetched by cargo from crates.io, with every module file's items wrapped in
# `scope_profiler::profile_all_items! { always; ... }` and a path dependency
# on this scope-profiler. Its tests must all pass unchanged. Prints how long
# it took. Works under target/ (or $CARGO_TARGET_DIR), sharing its build of
# scope-profiler's dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/hdf5-env.sh
root=$PWD
target=${CARGO_TARGET_DIR:-$root/target}
work=$target/real-crate
start=$SECONDS

# 1. The exact source crates.io has, through cargo's own registry cache.
rm -rf "$work"
mkdir -p "$work/fetch/src"
cat > "$work/fetch/Cargo.toml" <<'TOML'
[package]
name = "fetch-semver"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
semver = "=1.0.28"

[workspace]
TOML
touch "$work/fetch/src/lib.rs"
cargo fetch --quiet --manifest-path "$work/fetch/Cargo.toml"
registry=${CARGO_HOME:-$HOME/.cargo}/registry/src
source=$(ls -d "$registry"/*/semver-1.0.28 | head -n 1)
cp -r "$source" "$work/semver"
crate=$work/semver

# 2. Every module file's items inside profile_all_items!, its inner
#    attributes and `//!` docs left before the macro, outer `///` docs and
#    attributes with their item inside it (scripts/wrap-items.py).
python3 scripts/wrap-items.py "$crate"/src/*.rs

# 3. The dependency on this scope-profiler, and its own workspace.
cat >> "$crate/Cargo.toml" <<TOML

[dependencies.scope-profiler]
path = "$root/scope-profiler"

[workspace]
TOML
# Start from this workspace's lock file, so the shared dependencies resolve
# to the versions already built.
cp "$root/Cargo.lock" "$crate/Cargo.lock"

# 4. Its own test suite (unit, integration and doc tests), unchanged.
wrapped=$(grep -l "scope_profiler::profile_all_items!" "$crate"/src/*.rs | wc -l)
echo "semver 1.0.28: $wrapped module files instrumented; running its tests"
CARGO_TARGET_DIR=$target cargo test --quiet --manifest-path "$crate/Cargo.toml"
echo "semver 1.0.28 instrumented: all its tests pass ($((SECONDS - start)) s)"
