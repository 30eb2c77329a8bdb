#!/usr/bin/env bash
# Installs the tools the test suite calls beyond Rust and a C compiler. Building Tabula needs
# only those two: libmdbx is compiled from the source vendored in crates/mdbx-sys, whose Rust
# bindings are committed (no bindgen, no libclang).
# Idempotent: does nothing when all of it is present.
set -euo pipefail

# The test suite mounts file systems (`mkfs.ext4`, `losetup`: e2fsprogs, mount), runs a child
# on a pseudo-terminal (`script`: bsdutils), checks the vendored libmdbx against its pristine
# copy and patches (`patch`), and traces the patch checks' system calls (`strace`: the
# write-chunks and lck-sync checks); a minimal image may lack them.
missing_tools=""
for tool in mkfs.ext4:e2fsprogs losetup:mount script:bsdutils patch:patch strace:strace; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || missing_tools="$missing_tools ${tool#*:}"
done

if [ -z "$missing_tools" ]; then
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
echo "setup: installing$missing_tools" >&2
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq $missing_tools >/dev/null
echo "setup: installed$missing_tools" >&2
