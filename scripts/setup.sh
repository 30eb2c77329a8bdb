#!/usr/bin/env bash
# Installs what building Tabula needs beyond Rust: libclang, which bindgen (run by mdbx-sys's
# build script) loads to read libmdbx's header. Idempotent: does nothing when it is present.
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

if have_libclang; then
    exit 0
fi

echo "setup: libclang not found; installing libclang-dev (needed by bindgen for mdbx-sys)" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq libclang-dev >/dev/null
have_libclang || { echo "setup: libclang still not found after installing libclang-dev" >&2; exit 1; }
echo "setup: libclang installed" >&2
