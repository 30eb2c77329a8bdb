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

traced_gone lck-sync msync 'msync\(' 'msync calls'
