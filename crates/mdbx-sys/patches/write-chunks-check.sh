#!/usr/bin/env bash
# Checks patches/libmdbx-0.14.4-write-chunks.patch in the libmdbx Tabula builds (crates/mdbx-sys/libmdbx,
# every patch of series applied) against the pristine libmdbx 0.14.4: patches/write-chunks-check.c is built against the pristine and the
# patched libmdbx (assertions on), run under strace on both, and
#   - their outputs (entry counts, checksums of everything read back, mdbx_env_chk) must be
#     identical, and OK;
#   - the patched build's largest write call must be at most 64 KiB, and the pristine one's
#     larger (otherwise the check would not show the patch doing anything).
#
#   crates/mdbx-sys/patches/write-chunks-check.sh      (nothing in the repository changes)
#
# Needs cc and strace (scripts/setup.sh installs it).
set -euo pipefail
source "$(dirname "$0")/lib-check.sh"
command -v strace > /dev/null || { echo "error: strace is needed" >&2; exit 1; }
check_setup write-chunks "$@"
limit=65536

largest=()
for variant in pristine patched; do
    traced_check write-chunks "$variant" write,writev,pwrite64,pwritev,pwritev2
    # The largest byte count any write call returned.
    max=$(grep -E '(pwrite64|pwritev2?|writev|write)\(' "$work/$variant.strace" \
        | sed -nE 's/.*= ([0-9]+)$/\1/p' | sort -n | tail -n 1)
    calls=$(grep -cE '(pwrite64|pwritev2?|writev)\(' "$work/$variant.strace")
    echo "$variant: $(tail -n 1 "$work/$variant.out"), $calls write calls, the largest $max bytes"
    largest+=("$max")
done
if ! diff -u "$work/pristine.out" "$work/patched.out"; then
    echo "error: the patched libmdbx left a different database (diff above)" >&2
    exit 1
fi
if (( largest[1] > limit )); then
    echo "error: the patched libmdbx wrote ${largest[1]} bytes in one call (limit $limit)" >&2
    exit 1
fi
if (( largest[0] <= limit )); then
    echo "error: the pristine libmdbx wrote at most ${largest[0]} bytes per call: the check no longer shows the difference" >&2
    exit 1
fi
echo "write-chunks-check: identical results ($(wc -l < "$work/patched.out") lines); largest write call ${largest[0]} -> ${largest[1]} bytes"
