#!/usr/bin/env bash
# Runs the check of every patch in series against the libmdbx Tabula builds
# (crates/mdbx-sys/libmdbx) and the pristine libmdbx 0.14.4; stops at the first failure.
# scripts/test.sh runs it. The fallocate-enospc patch's check is tests/disk_full.rs (cargo test).
set -euo pipefail
cd "$(dirname "$0")"
for name in dbi-open nometasync-gc write-chunks loose-batch dpl-tail page-zeroing; do
    echo "== patch check: $name" >&2
    start=$SECONDS
    "./$name-check.sh"
    echo "   ($((SECONDS - start)) s)" >&2
done
