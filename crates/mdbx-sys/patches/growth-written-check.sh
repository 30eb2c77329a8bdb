#!/usr/bin/env bash
# Checks patches/libmdbx-0.14.4-growth-written.patch in the libmdbx Tabula builds
# (crates/mdbx-sys/libmdbx, every patch of series applied) against the pristine libmdbx 0.14.4:
# patches/growth-written-check.c (a data file grown in 1 MiB steps by 40 commits, reopened, every
# entry read back, mdbx_env_chk) is built against the pristine and the patched libmdbx
# (assertions on, and the fallocate() path Tabula's build.rs selects), run on a new directory
# under $TMPDIR (or /tmp), and
#   - their outputs must be identical, and OK;
#   - the patched build must leave no unwritten extent in what the file grew by, and the
#     pristine one some (the reserved tail of its last growth step; otherwise the check would
#     not show the patch doing anything).
# The patch writes a growth only on ext4 and XFS: on another file system (or one without
# FIEMAP) the check fails, unless TABULA_ALLOW_SKIP names `growth-written`.
#
#   crates/mdbx-sys/patches/growth-written-check.sh      (nothing in the repository changes)
#
# Needs cc.
set -euo pipefail
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

unwritten=()
for variant in pristine patched; do
    crate=$src
    [[ $variant == patched ]] && crate=$dest
    build_check "$crate" "$work/check-$variant" "$patches/growth-written-check.c" -DMDBX_FORCE_ASSERTIONS=1 \
        -DMDBX_USE_FALLOCATE=1 -DFALLOC_FL_ALLOCATE_RANGE=0x00
    mkdir "$work/db-$variant"
    status=0
    "$work/check-$variant" "$work/db-$variant" > "$work/$variant.out" 2> "$work/$variant.err" || status=$?
    if (( status == 3 )); then
        skip "$(tail -n 1 "$work/$variant.err")"
    elif (( status != 0 )); then
        echo "error: growth-written-check failed on the $variant libmdbx:" >&2
        cat "$work/$variant.out" >&2
        tail -n 5 "$work/$variant.err" >&2
        exit 1
    fi
    line=$(grep '^unwritten after the initial size: ' "$work/$variant.err")
    echo "$variant: $(tail -n 1 "$work/$variant.out"), $line"
    n=${line#unwritten after the initial size: }
    unwritten+=("${n%% *}")
done
if ! diff -u "$work/pristine.out" "$work/patched.out"; then
    echo "error: the patched libmdbx read other values (diff above)" >&2
    exit 1
fi
if (( unwritten[1] != 0 )); then
    echo "error: the patched libmdbx left ${unwritten[1]} bytes of its growth unwritten" >&2
    exit 1
fi
if (( unwritten[0] == 0 )); then
    echo "error: the pristine libmdbx left nothing unwritten: the check no longer shows the difference" >&2
    exit 1
fi
echo "growth-written-check: identical results ($(wc -l < "$work/patched.out") lines); unwritten bytes of the growth ${unwritten[0]} -> 0"
