#!/usr/bin/env bash
# Checks patches/libmdbx-0.14.4-dpl-tail.patch in the libmdbx Tabula builds (crates/mdbx-sys/libmdbx,
# every patch of series applied) against the pristine libmdbx 0.14.4 with patches/dpl-tail-check.c: big write transactions that spill (a low
# MDBX_opt_txn_dp_limit; random inserts, updates and deletes in one transaction, an aborted
# one, nested ones, a deleting cursor walk), the table compared with a model after each, and
# mdbx_env_chk at the end; the pages spilled and read back are counted, and the program fails
# if there were none.
#
# Three builds (MDBX_CHECKING=3), each run twice: "full" (the program's sizes, the build's lite
# assertions) and "audited" (a tenth of the sizes, libmdbx's runtime assertions and audit on):
#   pristine   the pristine libmdbx 0.14.4;
#   patched    the patch as it is, with patches/dpl-tail-probe.h counting its new path;
#   patched-8  the patch with the tail allowed 7 + sorted/8 entries instead of 7 + sorted/1024
#              (the probe's DPL_TAIL_SHIFT 3), so that far longer tails are scanned.
# Every run must pass and print the same thing as the pristine one (the entries, checksums and
# mdbx_env_chk of every round), except how many pages were spilled and read back: which pages
# a transaction dirties and spills is the engine's own business, and the patched build spills a
# few pages more or fewer than the pristine one (seen: 608,426 pages spilled and 559,790 read
# back against 608,425 and 559,796 over a full run); each build must spill and read back some
# (the program fails otherwise). The patched builds must also have taken the new path (in the audited runs only patched-8 can: their lists stay below
# the 1,024 sorted pages where the default tail first exceeds 7). About 3 minutes per build,
# most of it the audited run.
#
#   crates/mdbx-sys/patches/dpl-tail-check.sh      (nothing in the repository changes)
set -euo pipefail
source "$(dirname "$0")/lib-check.sh"
check_setup dpl-tail "$@"

probe=$patches/dpl-tail-probe.h
if ! grep -qF '#define MDBX_DPL_UNSORTED_TAIL(sorted) (7 + ((sorted) >> 10))' \
    "$patches/libmdbx-0.14.4-dpl-tail.patch"; then
    echo "error: the patch's default tail is no longer 7 + sorted/1024; update $probe" >&2
    exit 1
fi

# A run's output without its spill counts (see above).
same() { grep -v -E 'pages spilled, [0-9]+ read back' "$1"; }

for build in pristine patched patched-8; do
    case $build in
        pristine) build_check "$src" "$work/check-$build" "$patches/dpl-tail-check.c" -DMDBX_CHECKING=3 ;;
        patched) build_check "$dest" "$work/check-$build" "$patches/dpl-tail-check.c" -DMDBX_CHECKING=3 \
            -include "$probe" ;;
        patched-8) build_check "$dest" "$work/check-$build" "$patches/dpl-tail-check.c" -DMDBX_CHECKING=3 \
            -DDPL_TAIL_SHIFT=3 -include "$probe" ;;
    esac
    for mode in full audited; do
        run=$build-$mode
        mkdir "$work/db-$run"
        # libmdbx's own notices go to stderr (source line numbers differ); compare stdout.
        "$work/check-$build" "$work/db-$run" "$mode" > "$work/$run.out" 2> "$work/$run.err" || {
            echo "error: dpl-tail-check ($mode) failed on the $build libmdbx:" >&2
            cat "$work/$run.out" >&2
            grep -E 'ASSERT|FAIL|audit|assert' "$work/$run.err" | head -n 5 >&2 || true
            exit 1
        }
        probe_line=$(grep -F 'dpl-tail probe:' "$work/$run.err")
        echo "$run: $(grep -F 'spills over the run' "$work/$run.out"), $(tail -n 1 "$work/$run.out")"
        if [[ $build != pristine ]]; then
            echo "  ${probe_line}"
            scans=$(sed -nE 's/.*probe: ([0-9]+) searches.*/\1/p' <<< "$probe_line")
            # The audited run's lists stay below 1,024 sorted pages, where the patch's default
            # tail is still 7: only the patched-8 build takes the new path there.
            if [[ ($mode == full || $build == patched-8) && (-z "$scans" || "$scans" -eq 0) ]]; then
                echo "error: the $build build never took the patch's new path ($mode): the check does not exercise it" >&2
                exit 1
            fi
            if ! diff -u <(same "$work/pristine-$mode.out") <(same "$work/$run.out"); then
                echo "error: the $build libmdbx left a different database than the pristine one (diff above)" >&2
                exit 1
            fi
        fi
    done
done
echo "dpl-tail-check: passed on all three builds, identical output but for the spill counts ($(wc -l < "$work/patched-full.out") + $(wc -l < "$work/patched-audited.out") lines)"
