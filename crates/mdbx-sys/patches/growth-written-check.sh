#!/usr/bin/env bash
# Checks patches/libmdbx-0.14.4-growth-written.patch in the libmdbx Tabula builds
# (crates/mdbx-sys/libmdbx, every patch of series applied) against the pristine libmdbx 0.14.4:
# patches/growth-written-check.c (a data file grown in 1 MiB steps by 40 commits, reopened, every
# entry read back, mdbx_env_chk) is built against the pristine and the patched libmdbx
# (assertions on, and the fallocate() path Tabula's build.rs selects), run on new directories
# under $TMPDIR (or /tmp), durable, with MDBX_SAFE_NOSYNC, and durable with one transaction
# that grows the file by many steps (`one-txn`), and in each mode
#   - their outputs must be identical, and OK;
#   - the pristine build must leave some of what the file grew by as unwritten extents (the
#     reserved tail of its last growth step; otherwise the check would not show the patch
#     doing anything);
#   - the patched build none when durable, and some at MDBX_SAFE_NOSYNC (where the patch
#     leaves the growth as reserved);
#   - with one-txn, the patched build writes at most one growth step (1 MiB) more than the
#     pristine one: zeroes go only where the commit wrote no page of its own.
# The patch writes a growth only on ext4 and XFS: on another file system (or one without
# FIEMAP) the check fails, unless TABULA_ALLOW_SKIP names `growth-written`.
#
#   crates/mdbx-sys/patches/growth-written-check.sh      (nothing in the repository changes)
#
# Needs cc.
set -euo pipefail
summary=
source "$(dirname "$0")/lib-check.sh"
check_setup growth-written "$@"

skip() {
    if [[ ",${TABULA_ALLOW_SKIP:-}," == *,growth-written,* ]]; then
        echo "SKIPPED (TABULA_ALLOW_SKIP names growth-written): $1"
        exit 0
    fi
    echo "error: $1 (allow the skip with TABULA_ALLOW_SKIP=growth-written)" >&2
    exit 1
}
fs=$(stat -f -c %T "$work")
[[ $fs == ext2/ext3 || $fs == xfs ]] || skip "$work is on $fs, not ext4 or XFS, where the patch writes a growth"

for variant in pristine patched; do
    crate=$src
    [[ $variant == patched ]] && crate=$dest
    build_check "$crate" "$work/check-$variant" "$patches/growth-written-check.c" -DMDBX_FORCE_ASSERTIONS=1 \
        -DMDBX_USE_FALLOCATE=1 -DFALLOC_FL_ALLOCATE_RANGE=0x00
done

# Runs the check program of $1 (pristine, patched) in mode $2 (durable, safe-nosync) on a new
# directory; prints its result; sets `bytes` to the unwritten bytes it counted, and with one-txn
# `written` to the bytes the transaction wrote.
run() {
    local variant=$1 mode=$2 status=0 line
    local -a args=()
    [[ $mode != durable ]] && args=("$mode")
    mkdir "$work/db-$variant-$mode"
    "$work/check-$variant" "$work/db-$variant-$mode" "${args[@]}" > "$work/$variant-$mode.out" \
        2> "$work/$variant-$mode.err" || status=$?
    if (( status == 3 )); then
        skip "$(tail -n 1 "$work/$variant-$mode.err")"
    elif (( status != 0 )); then
        echo "error: growth-written-check ($mode) failed on the $variant libmdbx:" >&2
        cat "$work/$variant-$mode.out" >&2
        tail -n 5 "$work/$variant-$mode.err" >&2
        exit 1
    fi
    line=$(grep '^unwritten after the initial size: ' "$work/$variant-$mode.err")
    echo "$variant, $mode: $(tail -n 1 "$work/$variant-$mode.out"), $line"
    bytes=${line#unwritten after the initial size: }
    bytes=${bytes%% *}
    written=
    if [[ $mode == one-txn ]]; then
        line=$(grep '^written by the transaction: ' "$work/$variant-$mode.err")
        echo "  $variant, $mode: $line"
        written=${line#written by the transaction: }
        written=${written%% *}
    fi
}

for mode in durable safe-nosync one-txn; do
    run pristine "$mode"
    pristine=$bytes pristine_written=$written
    run patched "$mode"
    patched=$bytes
    if ! diff -u "$work/pristine-$mode.out" "$work/patched-$mode.out"; then
        echo "error: the patched libmdbx read other values ($mode; diff above)" >&2
        exit 1
    fi
    if (( pristine == 0 )); then
        echo "error: the pristine libmdbx left nothing unwritten ($mode): the check no longer shows the difference" >&2
        exit 1
    fi
    if [[ $mode != safe-nosync ]] && (( patched != 0 )); then
        echo "error: the patched libmdbx left $patched bytes of its growth unwritten" >&2
        exit 1
    fi
    if [[ $mode == safe-nosync ]] && (( patched == 0 )); then
        echo "error: the patched libmdbx wrote the growth at MDBX_SAFE_NOSYNC, where it should leave it reserved" >&2
        exit 1
    fi
    if [[ $mode == one-txn ]]; then
        if (( written > pristine_written + (1 << 20) )); then
            echo "error: the patched libmdbx wrote $written bytes in one transaction, the pristine one $pristine_written: more than one growth step (1 MiB) of zeroes" >&2
            exit 1
        fi
        summary+="; $mode: bytes written $pristine_written -> $written"
    fi
    summary+="; $mode: unwritten bytes of the growth $pristine -> $patched"
done
echo "growth-written-check: identical results on both builds${summary}"
