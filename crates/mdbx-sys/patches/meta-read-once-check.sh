#!/usr/bin/env bash
# Checks patches/libmdbx-0.14.4-meta-read-once.patch in the libmdbx Tabula builds
# (crates/mdbx-sys/libmdbx, every patch of series applied) against the pristine libmdbx 0.14.4:
# patches/meta-read-once-check.c (exclusive opens read-write and read-only, a shared open by a
# forked child while the parent holds the environment, an exclusive open of a 16 KiB-page file
# whose meta page 0 is damaged) is built against the pristine and the patched libmdbx
# (assertions on), run under strace on both, and
#   - their outputs must be identical, and OK (the same transaction and values at every open);
#   - the parent, whose every open seizes the lock exclusively, must read the meta pages
#     (pread64 of 256 bytes) exactly 20 times on the patched build: 3 at each of its six
#     opens (the two creations read the pages they wrote back, in a build with assertions), and
#     the two that the damaged file's second pass reads at other offsets than its first; and
#     more often on the pristine one (72: each page twice, in two passes; otherwise the check
#     would not show the patch doing anything);
#   - the child, whose open shares the environment, must read them as often on both (the
#     re-reads that catch a meta page a writer is updating are kept there).
#
#   crates/mdbx-sys/patches/meta-read-once-check.sh      (nothing in the repository changes)
#
# Needs cc and strace (scripts/setup.sh installs it).
set -euo pipefail
source "$(dirname "$0")/lib-check.sh"
command -v strace > /dev/null || { echo "error: strace is needed" >&2; exit 1; }
check_setup meta-read-once "$@"

parent=() child=()
for variant in pristine patched; do
    traced_check meta-read-once "$variant" pread64
    pid=$(sed -n 's/^child //p' "$work/$variant.err")
    [[ -n $pid ]] || { echo "error: the $variant run did not name its child" >&2; exit 1; }
    reads=$(grep -E ', 256, [0-9]+\) += 256' "$work/$variant.strace" || true)
    p=$(grep -cvE "^$pid " <<< "$reads" || true)
    c=$(grep -cE "^$pid " <<< "$reads" || true)
    echo "$variant: $(tail -n 1 "$work/$variant.out"), meta reads: $p exclusive (parent), $c shared (child)"
    parent+=("$p")
    child+=("$c")
done
if ! diff -u "$work/pristine.out" "$work/patched.out"; then
    echo "error: the patched libmdbx read other values (diff above)" >&2
    exit 1
fi
if (( parent[1] != 20 )); then
    echo "error: the patched libmdbx read meta pages ${parent[1]} times in its exclusive opens, not 20" >&2
    exit 1
fi
if (( parent[0] <= parent[1] )); then
    echo "error: the pristine libmdbx read meta pages ${parent[0]} times: the check no longer shows the difference" >&2
    exit 1
fi
if (( child[1] != child[0] || child[0] == 0 )); then
    echo "error: the shared open read meta pages ${child[0]} times on the pristine libmdbx, ${child[1]} on the patched one" >&2
    exit 1
fi
echo "meta-read-once-check: identical results ($(wc -l < "$work/patched.out") lines); meta reads of exclusive opens ${parent[0]} -> ${parent[1]}, of the shared open ${child[0]} -> ${child[1]}"
