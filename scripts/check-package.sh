#!/usr/bin/env bash
# Packages and verifies every published crate of the workspace in one
# `cargo package` (dependency order, each built from its .crate file), then
# builds the documentation as docs.rs does, with warnings as errors.
# Members with `publish = false` (tests, fixtures, benchmarks) are left out.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-deps.sh
. scripts/hdf5-env.sh
mapfile -t crates < <(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["publish"] is None or p["publish"]:
        print(p["name"])
')
if [ "${#crates[@]}" -eq 0 ]; then
    echo "check-package: no publishable crate found" >&2
    exit 1
fi
args=()
for c in "${crates[@]}"; do args+=(-p "$c"); done
# `cargo package` verifies each crate against the others through a local
# registry, whose unpacked sources Cargo keeps in its home and never
# refreshes: an earlier run's copy of a crate would be built instead of
# this one. Those copies (only ours, only of local registries) go first.
# The same goes for what an earlier run built from them (in the workspace's
# target directory): Cargo takes a registry crate of one version as
# unchanged.
for c in "${crates[@]}"; do
    rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/"$c"-[0-9]*
    cargo clean --quiet -p "$c"
done
rm -rf "${CARGO_TARGET_DIR:-target}/package"
echo "check-package: ${crates[*]}"
cargo package "${args[@]}" "$@"
for c in "${crates[@]}"; do
    crate="${CARGO_TARGET_DIR:-target}/package/$c-$(cargo metadata --no-deps --format-version 1 | python3 -c "
import json, sys
print(next(p['version'] for p in json.load(sys.stdin)['packages'] if p['name'] == '$c'))
").crate"
    echo "check-package: $crate: $(tar -tzf "$crate" | wc -l) files, $(du -h "$crate" | cut -f1)"
    if tar -tzf "$crate" | grep -E '\.(h5|hdf5)$'; then
        echo "check-package: $crate ships data files" >&2
        exit 1
    fi
done
# docs.rs: --cfg docsrs, broken intra-doc links and every other rustdoc
# warning are errors, on the default features (what docs.rs builds).
RUSTDOCFLAGS="--cfg docsrs -D warnings" cargo doc --no-deps "${args[@]}"
