#!/usr/bin/env bash
# Installs what building Tabula needs beyond Rust: libclang, which bindgen (run by mdbx-sys's
# build script) loads to read libmdbx's header. Idempotent: does nothing when it is present.
set -euo pipefail

have_libclang() {
    if [ -n "${LIBCLANG_PATH:-}" ] && ls "$LIBCLANG_PATH"/libclang*.so* >/dev/null 2>&1; then
        return 0
    fi
    ldconfig -p 2>/dev/null | grep -q 'libclang\(-[0-9.]*\)\?\.so' && return 0
    ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1
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
