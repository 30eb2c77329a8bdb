#!/usr/bin/env bash
# Installs what building and testing Tabula needs beyond Rust: libclang, which bindgen (run by
# mdbx-sys's build script) loads to read libmdbx's header, and the tools the test suite calls.
# Idempotent: does nothing when all of it is present.
set -euo pipefail

have_libclang() {
    # libclang-cpp (shipped with LLVM) is a different library: bindgen needs libclang itself.
    local dirs="${LIBCLANG_PATH:-} /usr/lib/llvm-*/lib /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib"
    for d in $dirs; do
        for f in "$d"/libclang.so "$d"/libclang.so.* "$d"/libclang-[0-9]*.so*; do
            [ -e "$f" ] && return 0
        done
    done
    return 1
}

# The test suite also mounts file systems (`mkfs.ext4`, `losetup`: e2fsprogs, mount) and runs
# a child on a pseudo-terminal (`script`: bsdutils); a minimal image may lack them.
missing_tools=""
for tool in mkfs.ext4:e2fsprogs losetup:mount script:bsdutils; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || missing_tools="$missing_tools ${tool#*:}"
done

if have_libclang && [ -z "$missing_tools" ]; then
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
have_libclang || missing_tools="$missing_tools libclang-dev"
echo "setup: installing$missing_tools" >&2
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq $missing_tools >/dev/null
have_libclang || { echo "setup: libclang still not found after installing libclang-dev" >&2; exit 1; }
echo "setup: installed$missing_tools" >&2
