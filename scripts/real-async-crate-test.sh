#!/usr/bin/env bash
# Runs a real async crate's own tests instrumented, and checks the nesting of
# the profiles they write: tokio-util 0.7.20's source (codecs, cancellation
# tokens, task tracking, a delay queue, poll_* adapters holding futures),
# fetched by cargo from crates.io, with every module file's items wrapped in
# `scope_profiler::profile_all_items! { always, macro_rules; ... }`
# (scripts/wrap-items.py; `macro_rules`: the functions its macros generate
# too) and a path dependency on this scope-profiler. Then a second copy in
# traced mode (`profile_all_items! { macro_rules; ... }`), its tests run with
# `SCOPE_PROFILER_TRACE_ALL=1` so that the traced functions record everywhere.
#
# Its unit and integration tests (not its doc tests: hundreds of binaries to
# build) run under `--features full`, unchanged but for the same wrapping of
# the integration test files: their `#[tokio::test] async fn`s are then
# instrumented futures, and the crate's futures polled inside them are
# recorded as frames nested in them, as in an application instrumented whole
# (the shapes of issue 37: a future held by a `poll_*` adapter and completed
# in a later call). Left bare, every future of the crate polled by a test is a
# task of its own, and those shapes never arise. To make them record, the
# script appends one module to the crate's lib.rs, outside the macro: a
# constructor the loader runs before `main` (`.init_array`) sets up a session
# writing `$REAL_ASYNC_PROFILE_DIR/<test binary>-<pid>.<format>`, and an
# `atexit` handler finalizes it when the test binary exits (after the main
# thread's thread-locals are gone, which is why the library offers no such
# hook: here the main thread runs only libtest, and every test's calls were
# recorded on its own thread, still in the session). Every test process
# that links the crate (each integration test file naming it, the lib's unit
# tests) writes its own file. The tests run twice: writing HDF5 files, then
# JSON profiles (the two writers' parent ids).
#
# Then `sp-check-nesting` (tests/check_nesting) reads every file and checks
# every call against its parent: the parent exists, has a smaller id, and the
# call lies within its span. Violations are listed by shape and fail the
# script. Prints how long each step took. Works under target/ (or
# $CARGO_TARGET_DIR), sharing its build of scope-profiler's dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/hdf5-env.sh
root=$PWD
target=${CARGO_TARGET_DIR:-$root/target}
work=$target/real-async-crate
start=$SECONDS
name=tokio-util
version=0.7.20

# 1. The exact source crates.io has, through cargo's own registry cache.
rm -rf "$work"
mkdir -p "$work/fetch/src"
cat > "$work/fetch/Cargo.toml" <<TOML
[package]
name = "fetch-$name"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
$name = "=$version"

[workspace]
TOML
touch "$work/fetch/src/lib.rs"
cargo fetch --quiet --manifest-path "$work/fetch/Cargo.toml"
registry=${CARGO_HOME:-$HOME/.cargo}/registry/src
source=$(ls -d "$registry"/*/"$name-$version" | head -n 1)
CARGO_TARGET_DIR=$target cargo build --quiet -p integration-tests --bin sp-check-nesting

# Each mode: the crate instrumented, built, and its tests run twice (HDF5,
# JSON), each run's profiles in profiles/<mode>/<format>. Both modes use one
# copy at one path, made afresh: cargo records the sources of a crate inside
# the target directory by their path there, so a second copy elsewhere would
# be taken for the first one's sources, unchanged, and not rebuilt.
instrument_and_run() {
local mode=$1 arguments=$2
local crate=$work/$name
rm -rf "$crate"
cp -r "$source" "$crate"

# 2. Every module file's items inside profile_all_items! (with the mode's
#    arguments), and every integration test file's.
local files
mapfile -t files < <(find "$crate/src" -name '*.rs' | sort; ls "$crate"/tests/*.rs)
python3 scripts/wrap-items.py --arguments "$arguments" "${files[@]}"

# 3. The session of each test process, outside the macro (see above).
cat >> "$crate/src/lib.rs" <<'RUST'

/// Added by scripts/real-async-crate-test.sh: a profiling session for the
/// whole test process when `REAL_ASYNC_PROFILE_DIR` is set (written as
/// `REAL_ASYNC_PROFILE_FORMAT`, `h5` or `json`; other options from the
/// `SCOPE_PROFILER_*` environment), set up before `main` and finalized at
/// exit.
#[doc(hidden)]
#[allow(unsafe_code, missing_docs, unreachable_pub)]
mod __scope_profiler_session {
    #[used]
    #[link_section = ".init_array"]
    static START: extern "C" fn() = start;

    extern "C" {
        fn atexit(callback: extern "C" fn()) -> std::os::raw::c_int;
    }

    extern "C" fn start() {
        let Some(dir) = std::env::var_os("REAL_ASYNC_PROFILE_DIR") else {
            return;
        };
        let exe = std::env::current_exe()
            .ok()
            .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .unwrap_or_default();
        let format = std::env::var("REAL_ASYNC_PROFILE_FORMAT").unwrap_or_else(|_| "h5".into());
        let path = std::path::Path::new(&dir).join(format!("{exe}-{}.{format}", std::process::id()));
        let options = match scope_profiler::Options::from_env() {
            Ok(options) => options.file_path(&path).verbose(false),
            Err(error) => {
                eprintln!("real-async-crate-test: {error}");
                std::process::abort();
            }
        };
        if let Err(error) = scope_profiler::setup(options) {
            eprintln!("real-async-crate-test: setup of {}: {error}", path.display());
            std::process::abort();
        }
        // SAFETY: registers a plain function with the C library.
        if unsafe { atexit(finish) } != 0 {
            eprintln!("real-async-crate-test: atexit failed");
            std::process::abort();
        }
    }

    extern "C" fn finish() {
        if let Err(error) = scope_profiler::finalize() {
            eprintln!("real-async-crate-test: finalize: {error}");
            std::process::abort();
        }
    }
}
RUST

# 4. The dependency on this scope-profiler, and its own workspace. Start
#    from this workspace's lock file, so the shared dependencies resolve to
#    the versions already built.
cat >> "$crate/Cargo.toml" <<TOML

[dependencies.scope-profiler]
path = "$root/scope-profiler"

[workspace]
TOML
cp "$root/Cargo.lock" "$crate/Cargo.lock"

# 5. Its own unit and integration tests, unchanged, each process writing a
#    profile.
local wrapped tests expected profiles format step
wrapped=$(grep -rl "scope_profiler::profile_all_items!" "$crate/src" | wc -l)
tests=$(grep -l "scope_profiler::profile_all_items!" "$crate"/tests/*.rs | wc -l)
echo "$name $version, $mode: $wrapped module files and $tests test files instrumented" \
    "({ $arguments; }); building and running its tests"
step=$SECONDS
CARGO_TARGET_DIR=$target cargo test --quiet --manifest-path "$crate/Cargo.toml" \
    --features full --lib --tests --no-run
echo "$name $version, $mode: built in $((SECONDS - step)) s"
# The processes that must write a profile: the lib's unit tests, and each
# integration test file that names the crate (one that does not, such as a
# feature check, does not link it).
expected=$(( $(grep -l "tokio_util" "$crate"/tests/*.rs | wc -l) + 1 ))
for format in h5 json; do
    step=$SECONDS
    mkdir -p "$work/profiles/$mode/$format"
    env "${@:3}" REAL_ASYNC_PROFILE_DIR="$work/profiles/$mode/$format" \
        REAL_ASYNC_PROFILE_FORMAT=$format CARGO_TARGET_DIR="$target" \
        cargo test --quiet --manifest-path "$crate/Cargo.toml" --features full --lib --tests
    profiles=$(find "$work/profiles/$mode/$format" -name "*.$format" | wc -l)
    echo "$name $version, $mode: all its tests pass ($((SECONDS - step)) s)," \
        "$profiles $format profiles written"
    if [ "$profiles" -ne "$expected" ]; then
        echo "$name $version: $expected test processes should have written a profile" >&2
        exit 1
    fi
done
}

instrument_and_run always "always, macro_rules"
instrument_and_run traced "macro_rules" SCOPE_PROFILER_TRACE_ALL=1

# 6. The nesting of every call of every profile.
step=$SECONDS
status=0
"$target/debug/sp-check-nesting" "$work"/profiles/*/* || status=$?
echo "$name $version: nesting checked in $((SECONDS - step)) s; $((SECONDS - start)) s in all"
if [ "$status" -ne 0 ]; then
    echo "$name $version: its profiles have calls outside their parents (listed above)" >&2
    exit "$status"
fi
