#!/usr/bin/env bash
# Makes sure what the tests need is on this machine (the build needs only
# Rust: the HDF5 file is pure Rust): for the interop test, python3 with venv
# (Debian's python3-venv); for the report pages' test, chromium; for the
# terminal browser's test, tmux; for the samples' interop test, addr2line
# (binutils). Asks the package manager for each package
# (scripts/need-packages.sh); installs the missing ones with apt-get when
# run as root, otherwise prints the one command to run and fails.
set -euo pipefail
if ! command -v cargo >/dev/null 2>&1; then
    echo "cargo not found: install Rust first (https://rustup.rs), then run this again." >&2
    exit 1
fi
exec "$(dirname "$0")/need-packages.sh" python3-venv chromium tmux binutils
