#!/usr/bin/env bash
# Checks patches/libmdbx-0.14.4-dbi-open.patch in the libmdbx Tabula builds (crates/mdbx-sys/libmdbx,
# every patch of series applied): patches/dbi-open-check.c, built against the pristine libmdbx
# 0.14.4 and the patched one (assertions on), must pass on both with the same output.
#
#   crates/mdbx-sys/patches/dbi-open-check.sh      (nothing in the repository changes)
set -euo pipefail
source "$(dirname "$0")/lib-check.sh"
check_setup dbi-open "$@"

for variant in pristine patched; do
    crate=$src
    [[ $variant == patched ]] && crate=$dest
    build_check "$crate" "$work/check-$variant" "$patches/dbi-open-check.c" -DMDBX_FORCE_ASSERTIONS=1
    mkdir "$work/db-$variant"
    # libmdbx's own notices go to stderr (source line numbers differ); compare stdout.
    "$work/check-$variant" "$work/db-$variant" > "$work/$variant.out" 2> "$work/$variant.err" || {
        echo "error: dbi-open-check failed on the $variant libmdbx:" >&2
        grep -E 'FAIL|failure' "$work/$variant.out" >&2 || true
        tail -n 5 "$work/$variant.err" >&2
        exit 1
    }
done
if ! diff -u "$work/pristine.out" "$work/patched.out"; then
    echo "error: the patched libmdbx answers differently from the pristine one (diff above)" >&2
    exit 1
fi
echo "dbi-open-check: passed on both, identical output ($(wc -l < "$work/patched.out") lines)"
