#!/usr/bin/env bash
# Checks patches/libmdbx-0.14.4-page-zeroing.patch in the libmdbx Tabula builds
# (crates/mdbx-sys/libmdbx, every patch of series applied) against the pristine libmdbx 0.14.4:
# patches/page-zeroing-check.c (its own malloc fills every heap block with a marker) is built
# against both with assertions on. The patched libmdbx must write no heap byte (the marker) and
# no heap address into the data file in any round (`strict`), and pass the control (`nomeminit`:
# pages malloc'ed under MDBX_NOMEMINIT stay out of the file once it is cleared, and with it set
# the marker is found); the pristine one is run to report what it writes (`report`). Both must
# print the same entries, checksums, page counts and mdbx_env_chk. About 30 seconds.
#
#   crates/mdbx-sys/patches/page-zeroing-check.sh      (nothing in the repository changes)
set -euo pipefail
source "$(dirname "$0")/lib-check.sh"
check_setup page-zeroing "$@"

run() { # VARIANT MODE
    local variant=$1 mode=$2
    # libmdbx's own notices go to stderr; the findings are the "heap ..." lines of stdout.
    "$work/check-$variant" "$work/db-$variant-$mode" "$mode" > "$work/$variant-$mode.out" \
        2> "$work/$variant-$mode.err" || {
        echo "error: page-zeroing-check $mode failed on the $variant libmdbx:" >&2
        grep -E '^heap|FAIL' "$work/$variant-$mode.out" >&2 || true
        grep -E 'ASSERT|assert' "$work/$variant-$mode.err" | head -n 5 >&2 || true
        exit 1
    }
}

for variant in pristine patched; do
    crate=$src
    [[ $variant == patched ]] && crate=$dest
    build_check "$crate" "$work/check-$variant" "$patches/page-zeroing-check.c" -DMDBX_FORCE_ASSERTIONS=1
done
run pristine report
run patched strict
run patched nomeminit
echo "pristine: $(grep '^heap round 6' "$work/pristine-report.out")"
echo "patched:  $(grep '^heap round 6' "$work/patched-strict.out")"
echo "control:  $(grep '^heap MDBX_NOMEMINIT set, aborted' "$work/patched-nomeminit.out")"
echo "control:  $(grep '^heap MDBX_NOMEMINIT set, committed' "$work/patched-nomeminit.out")"
if ! diff -u <(grep -v '^heap' "$work/pristine-report.out") <(grep -v '^heap' "$work/patched-strict.out"); then
    echo "error: the patched libmdbx left a different database (diff above)" >&2
    exit 1
fi
echo "page-zeroing-check: no heap bytes from the patched libmdbx, identical databases" \
    "($(grep -vc '^heap' "$work/patched-strict.out") lines)"
