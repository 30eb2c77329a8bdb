#!/usr/bin/env bash
# Checks patches/libmdbx-0.14.4-big-dpl.patch in the libmdbx Tabula builds (crates/mdbx-sys/libmdbx,
# every patch of series applied) against the pristine libmdbx 0.14.4 with patches/big-dpl-check.c:
# tables filled in one transaction, then half deleted in random order, every other entry deleted
# by a cursor walk, and nested transactions deleting, each in one transaction, the table compared
# with a model after each and mdbx_env_chk at the end (see the program's comment).
#
# Three builds (MDBX_CHECKING=3), each run twice: "full" (400,000 rows, dirty-page limits
# libmdbx's default, 65,536 and 8,192 pages) and "audited" (20,000 rows, libmdbx's runtime
# assertions and audit on):
#   pristine   the pristine libmdbx 0.14.4;
#   patched    the patch as it is, with patches/big-dpl-probe.h counting its three paths;
#   patched-8  the same with the dpl-tail patch's unsorted tail allowed 7 + sorted/8 entries
#              instead of 7 + sorted/1024, so that tails of MDBX_RADIXSORT_THRESHOLD (142) and
#              more reach the sort in lists this short (with the default they do only in lists
#              of about 140,000 sorted pages).
# Every run must pass and print what the pristine one prints. The probe's counts must show each
# path taken: the loose batch and the room merge in the patched full run, the tail merge in
# patched-8's, the loose batch under audit (the audited runs' lists, at most 4,096 pages, reach
# neither a full dirty room nor a long tail). About two minutes on one core.
#
#   crates/mdbx-sys/patches/big-dpl-check.sh      (nothing in the repository changes)
set -euo pipefail
source "$(dirname "$0")/lib-check.sh"
check_setup big-dpl "$@"

if ! grep -qF '#define MDBX_DPL_UNSORTED_TAIL(sorted) (7 + ((sorted) >> 10))' \
    "$patches/libmdbx-0.14.4-dpl-tail.patch"; then
    echo "error: the dpl-tail patch's default tail is no longer 7 + sorted/1024; update $0" >&2
    exit 1
fi

# build CRATE OUT [CFLAGS...]: the program against CRATE's libmdbx, the CFLAGS (the probe, the
# tail) given to mdbx.c alone.
build() {
    local crate=$1 out=$2
    shift 2
    "${CC:-cc}" -O1 -pthread -DMDBX_TXN_CHECKOWNER=0 -DMDBX_BUILD_FLAGS='""' -DMDBX_CHECKING=3 "$@" \
        -I "$crate/libmdbx" -c "$crate/libmdbx/mdbx.c" -o "$out.o"
    "${CC:-cc}" -O1 -pthread -DMDBX_CHECKING=3 -I "$crate/libmdbx" "$patches/big-dpl-check.c" "$out.o" -o "$out"
}

# count RUN PATH: how many times RUN's probe saw PATH (tail_merge, loose_batch, room_merge).
count() { sed -nE "s/.* $2 ([0-9]+) .*/\1/p" "$work/$1.err"; }

build "$src" "$work/check-pristine"
build "$dest" "$work/check-patched" -include "$patches/big-dpl-probe.h"
build "$dest" "$work/check-patched-8" -include "$patches/big-dpl-probe.h" \
    '-DMDBX_DPL_UNSORTED_TAIL(sorted)=(7 + ((sorted) >> 3))'

for build in pristine patched patched-8; do
    for mode in full audited; do
        run=$build-$mode
        mkdir "$work/db-$run"
        # libmdbx's own notices go to stderr (source line numbers differ); compare stdout.
        "$work/check-$build" "$work/db-$run" "$mode" > "$work/$run.out" 2> "$work/$run.err" || {
            echo "error: big-dpl-check ($mode) failed on the $build libmdbx:" >&2
            cat "$work/$run.out" >&2
            grep -E 'ASSERT|FAIL|audit|assert' "$work/$run.err" | head -n 5 >&2 || true
            exit 1
        }
        echo "$run: $(tail -n 2 "$work/$run.out" | head -n 1), $(tail -n 1 "$work/$run.out")"
        [[ $build == pristine ]] && continue
        echo "  $(grep -F 'big-dpl probe:' "$work/$run.err")"
        if ! diff -u "$work/pristine-$mode.out" "$work/$run.out"; then
            echo "error: the $build libmdbx left a different database than the pristine one (diff above)" >&2
            exit 1
        fi
    done
done

need() {
    local run=$1 path=$2 n
    n=$(count "$run" "$path")
    if [[ -z $n || $n -eq 0 ]]; then
        echo "error: the $run run never took the patch's $path path: the check does not exercise it" >&2
        exit 1
    fi
}
need patched-full loose_batch
need patched-full room_merge
need patched-8-full tail_merge
need patched-audited loose_batch
echo "big-dpl-check: passed on all three builds, identical output ($(wc -l < "$work/patched-full.out") + $(wc -l < "$work/patched-audited.out") lines), each path of the patch taken"
