#!/usr/bin/env bash
# Makes sure what the build and the tests need is on this machine: the HDF5
# C library and pkg-config, and, for the interop test, python3 with venv
# (Debian's python3-venv). Asks the package manager for each package
# (scripts/need-packages.sh); installs the missing ones with apt-get when
# run as root, otherwise prints the one command to run and fails.
set -euo pipefail
if ! command -v cargo >/dev/null 2>&1; then
    echo "cargo not found: install Rust first (https://rustup.rs), then run this again." >&2
    exit 1
fi
exec "$(dirname "$0")/need-packages.sh" libhdf5-dev pkg-config python3-venv chromium
