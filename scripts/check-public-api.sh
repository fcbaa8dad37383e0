#!/usr/bin/env bash
# The public API of `scope_profiler` (default features) against its snapshot,
# scope-profiler/public-api.txt: any change to the surface is a visible diff
# in review. `--bless` writes the snapshot instead of comparing.
#
# The listing comes from rustdoc's JSON output (scripts/public_api.py reads
# it), an unstable rustdoc format: RUSTC_BOOTSTRAP=1 lets the stable
# toolchain emit it, and the script is written for the toolchain's format.
# It also bounds the surface (issue 38): at most MAX_TYPES public types and
# MAX_FUNCTIONS free functions at the root and in the public modules, and
# every item has an example in its docs.
# The reader's crate (`scope-profiler-reader`: ProfileReader, the exports)
# has a snapshot of its own, scope-profiler-reader/public-api.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
MAX_TYPES=25
MAX_FUNCTIONS=18
target="${CARGO_TARGET_DIR:-$PWD/target}"
doc="$target/doc"
RUSTC_BOOTSTRAP=1 cargo rustdoc -q -p scope-profiler --lib -- \
    -Z unstable-options --output-format json
# The reader with `symbols` (as docs.rs and scope-prof build it).
RUSTC_BOOTSTRAP=1 cargo rustdoc -q -p scope-profiler-reader --features symbols --lib -- \
    -Z unstable-options --output-format json
for crate in scope-profiler-core scope-profiler-hdf5; do
    # Their modules are #[doc(hidden)]: the items the facade re-exports
    # from them are found among the hidden ones. The core as the facade's
    # default features build it (`enabled`).
    features=()
    [ "$crate" = scope-profiler-core ] && features=(--features enabled)
    RUSTC_BOOTSTRAP=1 cargo rustdoc -q -p "$crate" "${features[@]}" --lib -- \
        -Z unstable-options --output-format json --document-hidden-items -A warnings
done
listing="$target/public-api.txt"
python3 scripts/public_api.py "$doc" > "$listing"
reader_listing="$target/public-api-reader.txt"
python3 scripts/public_api.py "$doc" --root scope_profiler_reader > "$reader_listing"
if [ "${1:-}" = "--bless" ]; then
    cp "$listing" scope-profiler/public-api.txt
    cp "$reader_listing" scope-profiler-reader/public-api.txt
    echo "check-public-api: wrote scope-profiler/public-api.txt ($(wc -l < "$listing") items)" \
        "and scope-profiler-reader/public-api.txt ($(wc -l < "$reader_listing") items)"
    exit 0
fi
for pair in "scope-profiler/public-api.txt:$listing" "scope-profiler-reader/public-api.txt:$reader_listing"; do
    if ! diff -u "${pair%%:*}" "${pair#*:}"; then
        echo "check-public-api: the public API changed (${pair%%:*}; diff above: - snapshot, + now)." >&2
        echo "If the change is meant, run scripts/check-public-api.sh --bless and commit the snapshot." >&2
        exit 1
    fi
done
python3 scripts/public_api.py "$doc" --counts | tee "$target/public-api-counts.txt"
types=$(sed -n 's/^types: //p' "$target/public-api-counts.txt")
functions=$(sed -n 's/^functions: //p' "$target/public-api-counts.txt")
if [ "$types" -gt "$MAX_TYPES" ] || [ "$functions" -gt "$MAX_FUNCTIONS" ]; then
    echo "check-public-api: $types types (at most $MAX_TYPES), $functions free functions (at most $MAX_FUNCTIONS)" >&2
    exit 1
fi
# Every item (type, function, method, macro, constant) of both crates has
# an example in its docs (issue 38).
missing=$( { python3 scripts/public_api.py "$doc" --missing-examples
             python3 scripts/public_api.py "$doc" --missing-examples --root scope_profiler_reader; } )
if [ -n "$missing" ]; then
    echo "check-public-api: items without an example in their docs:" >&2
    echo "$missing" >&2
    exit 1
fi
echo "check-public-api: the snapshot matches ($(wc -l < "$listing") items), every item has an example"
