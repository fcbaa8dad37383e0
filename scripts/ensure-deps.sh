#!/usr/bin/env bash
# Makes sure what the build and the tests need is on this machine:
# the HDF5 C library (libhdf5-dev + pkg-config) and, for the interop test,
# python3 with venv. Installs them with apt-get when run as root; otherwise
# prints the one command to run and fails.
set -euo pipefail

missing=()
pkg-config --exists hdf5 2>/dev/null || missing+=(libhdf5-dev pkg-config)
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    missing+=(python3 python3-venv python3-pip)
fi
if ! command -v cargo >/dev/null 2>&1; then
    echo "cargo not found: install Rust first (https://rustup.rs), then run this again." >&2
    exit 1
fi
[ ${#missing[@]} -eq 0 ] && exit 0
exec "$(dirname "$0")/apt-install.sh" "${missing[@]}"
