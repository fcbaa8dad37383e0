#!/usr/bin/env bash
# The default builds have no C (issue 33): `scope-profiler` with its default
# features, `scope-profiler-cli` and `scope-profiler-tracing`
#  1. have no -sys crate, no `cc`, `cmake` or `bindgen` build step, no
#     libz-sys and no HDF5 C binding in `cargo tree -e normal,build`;
#  2. build with HDF5_DIR, PKG_CONFIG_PATH and LD_LIBRARY_PATH pointed at an
#     empty directory (nothing to find a C library with; no crate of these
#     trees reads them, so the workspace's target directory is shared);
#  3. link only the C runtime's libraries: `ldd` of `scope-prof` and of the
#     `regions` example names nothing else;
#  4. `cargo install --path scope-profiler-cli` works so;
#  5. and that example writes a file the CLI reads back.
set -euo pipefail
cd "$(dirname "$0")/.."
fail() { echo "check-no-c: FAILED: $*" >&2; exit 1; }

for package in scope-profiler scope-profiler-cli scope-profiler-tracing; do
    tree=$(cargo tree -p "$package" -e normal,build --prefix none --no-dedupe | sort -u)
    # linux-raw-sys (rustix's, under crossterm: the terminal views) is the
    # Linux kernel's system-call ABI in Rust: no C is built or linked.
    bad=$(grep -E '^([A-Za-z0-9_-]+-sys|cc|cmake|bindgen|pkg-config|vcpkg|libz-sys|hdf5[a-z-]*) v' <<<"$tree" |
        grep -v '^linux-raw-sys v' || true)
    [ -z "$bad" ] || fail "$package depends on C build steps or bindings:
$bad"
    echo "check-no-c: $package: $(wc -l <<<"$tree") crates, none builds C or binds a C library"
done

empty=$(mktemp -d)
trap 'rm -rf "$empty"' EXIT
target="${CARGO_TARGET_DIR:-$PWD/target}"
build() {
    HDF5_DIR="$empty" PKG_CONFIG_PATH="$empty" LD_LIBRARY_PATH="$empty" CARGO_TARGET_DIR="$target" \
        cargo build -q --release "$@"
}
build -p scope-profiler-cli -p scope-profiler-tracing
build -p scope-profiler --example regions

# The C runtime's libraries (glibc's), and the dynamic loader.
allowed='^(linux-vdso\.so|libc\.so|libm\.so|libgcc_s\.so|libpthread\.so|libdl\.so|librt\.so|/lib(64)?/ld-linux)'
for binary in "$target/release/scope-prof" "$target/release/examples/regions"; do
    libs=$(ldd "$binary" | awk '{print $1}')
    others=$(grep -Ev "$allowed" <<<"$libs" || true)
    [ -z "$others" ] || fail "$binary links libraries beyond the C runtime: $others"
    echo "check-no-c: $(basename "$binary") links only: $(tr '\n' ' ' <<<"$libs")"
done

# `cargo install` of the CLI, as a user runs it, with nothing to find a C
# library by (the build above is reused: same target directory and profile).
HDF5_DIR="$empty" PKG_CONFIG_PATH="$empty" LD_LIBRARY_PATH="$empty" \
    cargo install -q --path scope-profiler-cli --root "$empty/root" --target-dir "$target"
"$empty/root/bin/scope-prof" --version >/dev/null || fail "the installed scope-prof does not run"
echo "check-no-c: cargo install --path scope-profiler-cli: $empty/root/bin/scope-prof runs"

out="$empty/regions.h5"
LD_LIBRARY_PATH="$empty" "$target/release/examples/regions" "$out" >/dev/null 2>&1 ||
    fail "the regions example could not write $out"
LD_LIBRARY_PATH="$empty" "$target/release/scope-prof" inspect "$out" >/dev/null ||
    fail "scope-prof could not read $out"
echo "check-no-c: the example wrote $out and scope-prof read it, with no C library to find"
