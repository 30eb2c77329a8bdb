#!/usr/bin/env bash
# Checks patches/libmdbx-0.14.4-lck-sync.patch in the libmdbx Tabula builds (crates/mdbx-sys/libmdbx,
# every patch of series applied) against the pristine libmdbx 0.14.4: patches/lck-sync-check.c
# (a parent and a forked child sharing one environment, then a fresh open) is built against the
# pristine and the patched libmdbx (assertions on), run under strace on both, and
#   - their outputs must be identical, and OK;
#   - the patched build must make no msync call, and the pristine one some (the lock region's
#     flush at each open that initialises it; otherwise the check would not show the patch
#     doing anything).
#
#   crates/mdbx-sys/patches/lck-sync-check.sh      (nothing in the repository changes)
#
# Needs cc and strace (scripts/setup.sh installs it).
set -euo pipefail
source "$(dirname "$0")/lib-check.sh"
command -v strace > /dev/null || { echo "error: strace is needed" >&2; exit 1; }
check_setup lck-sync "$@"

calls=()
for variant in pristine patched; do
    traced_check lck-sync "$variant" msync
    n=$(grep -c 'msync(' "$work/$variant.strace" || true)
    echo "$variant: $(tail -n 1 "$work/$variant.out"), $n msync calls"
    calls+=("$n")
done
if ! diff -u "$work/pristine.out" "$work/patched.out"; then
    echo "error: the patched libmdbx read other values (diff above)" >&2
    exit 1
fi
if (( calls[1] != 0 )); then
    echo "error: the patched libmdbx made ${calls[1]} msync calls" >&2
    exit 1
fi
if (( calls[0] == 0 )); then
    echo "error: the pristine libmdbx made no msync call: the check no longer shows the difference" >&2
    exit 1
fi
echo "lck-sync-check: identical results ($(wc -l < "$work/patched.out") lines); msync calls ${calls[0]} -> 0"
