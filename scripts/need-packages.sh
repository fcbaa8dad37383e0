#!/usr/bin/env bash
# Makes sure the Debian packages named on the command line are installed.
# Whether a package is there is asked of the package manager
# (`dpkg-query -W`, status "install ok installed"), never guessed from files:
# a file such as libclang-cpp14's libclang-cpp.so.14 can match a glob meant
# for another package (issue 23). The missing ones are installed with
# apt-get (`apt-get update` first) when run as root; otherwise the one
# command to run is printed and the script exits 1.
#   scripts/need-packages.sh PKG...
# On a machine without dpkg (not Debian/Ubuntu) nothing can be asked: the
# script says which packages it assumes and exits 0; the build then fails
# with its own message if one is missing.
set -euo pipefail
[ $# -eq 0 ] && exit 0
if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "need-packages: no dpkg on this machine; make sure the equivalents of these are installed: $*" >&2
    exit 0
fi
installed() {
    [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}
missing=()
for pkg in "$@"; do
    installed "$pkg" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "need-packages: installing ${missing[*]} ..." >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
    for pkg in "${missing[@]}"; do
        if ! installed "$pkg"; then
            echo "need-packages: $pkg is still not installed after apt-get install" >&2
            exit 1
        fi
    done
else
    echo "Missing system packages. Run:" >&2
    echo "    sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi
