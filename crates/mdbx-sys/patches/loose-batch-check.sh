#!/usr/bin/env bash
# Checks patches/libmdbx-0.14.4-loose-batch.patch in the libmdbx Tabula builds (crates/mdbx-sys/libmdbx,
# every patch of series applied) against the pristine libmdbx 0.14.4: patches/loose-batch-check.c is built against the pristine and the patched
# libmdbx with MDBX_CHECKING=3 and run with libmdbx's assertions and audit on (every commit
# checks that each page of the file is accounted for, every page touch checks the dirty-page
# list); both must pass and print the same thing (entry counts, checksums, leaf pages and
# mdbx_env_chk after each round). About 4 minutes per build.
#
#   crates/mdbx-sys/patches/loose-batch-check.sh      (nothing in the repository changes)
set -euo pipefail
source "$(dirname "$0")/lib-check.sh"
check_setup loose-batch "$@"

for variant in pristine patched; do
    crate=$src
    [[ $variant == patched ]] && crate=$dest
    build_check "$crate" "$work/check-$variant" "$patches/loose-batch-check.c" -DMDBX_CHECKING=3
    mkdir "$work/db-$variant"
    # libmdbx's own notices go to stderr (source line numbers differ); compare stdout.
    "$work/check-$variant" "$work/db-$variant" > "$work/$variant.out" 2> "$work/$variant.err" || {
        echo "error: loose-batch-check failed on the $variant libmdbx:" >&2
        cat "$work/$variant.out" >&2
        grep -E 'ASSERT|FAIL|audit' "$work/$variant.err" | head -n 5 >&2 || true
        exit 1
    }
    echo "$variant: $(tail -n 1 "$work/$variant.out")"
done
if ! diff -u "$work/pristine.out" "$work/patched.out"; then
    echo "error: the patched libmdbx left a different database (diff above)" >&2
    exit 1
fi
echo "loose-batch-check: passed on both, identical output ($(wc -l < "$work/patched.out") lines)"
