#!/usr/bin/env bash
# Installs the Debian packages named on the command line: with apt-get
# (`apt-get update` first) when run as root; otherwise prints the one
# command to run and exits 1. Used by ensure-deps.sh and run-tests-mpi.sh.
set -euo pipefail
[ $# -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing $* ..." >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "$@" >/dev/null
else
    echo "Missing system packages. Run:" >&2
    echo "    sudo apt-get update && sudo apt-get install -y $*" >&2
    exit 1
fi
