#!/usr/bin/env bash
# Checks patches/libmdbx-0.14.4-lazy-dp-limit.patch in the libmdbx Tabula builds
# (crates/mdbx-sys/libmdbx, every patch of series applied) against the pristine libmdbx 0.14.4:
# patches/lazy-dp-limit-check.c (six opens of one environment: some only read, some write, one
# asks for and sets the dirty-page limit) is built against the pristine and the patched
# libmdbx (assertions on), run under strace on both, and
#   - their outputs must be identical, and OK;
#   - the patched build must read /proc/meminfo exactly 4 times (once as the library starts,
#     as the pristine one does; the first write transaction of each of the two environments
#     that write; the one mdbx_env_get_option of the limit before a write), and the pristine
#     one more often (three times an open: otherwise the check would not show the patch doing
#     anything).
#
#   crates/mdbx-sys/patches/lazy-dp-limit-check.sh      (nothing in the repository changes)
#
# Needs cc and strace (scripts/setup.sh installs it).
set -euo pipefail
source "$(dirname "$0")/lib-check.sh"
command -v strace > /dev/null || { echo "error: strace is needed" >&2; exit 1; }
check_setup lazy-dp-limit "$@"

counts=()
for variant in pristine patched; do
    traced_check lazy-dp-limit "$variant" openat
    n=$(grep -cE 'openat\(.*"/proc/meminfo"' "$work/$variant.strace" || true)
    echo "$variant: $(tail -n 1 "$work/$variant.out"), $n reads of /proc/meminfo"
    counts+=("$n")
done
if ! diff -u "$work/pristine.out" "$work/patched.out"; then
    echo "error: the patched libmdbx read other values (diff above)" >&2
    exit 1
fi
if (( counts[1] != 4 )); then
    echo "error: the patched libmdbx read /proc/meminfo ${counts[1]} times, not 4" >&2
    exit 1
fi
if (( counts[0] <= counts[1] )); then
    echo "error: the pristine libmdbx read /proc/meminfo ${counts[0]} times: the check no longer shows the difference" >&2
    exit 1
fi
echo "lazy-dp-limit-check: identical results ($(wc -l < "$work/patched.out") lines); reads of /proc/meminfo ${counts[0]} -> ${counts[1]}"
