#!/usr/bin/env bash
# Makes a patched copy of mdbx-sys 14.4.0 with patches/libmdbx-0.14.4-dpl-tail.patch in DIR
# and checks the patch with the loose-batch patch's program, patches/loose-batch-check.c (big
# transactions of random inserts and deletes, nested ones, reads and mdbx_env_chk after each),
# built against the pristine and the patched libmdbx with MDBX_CHECKING=3 and run with
# libmdbx's assertions and audit on (every commit checks that each page of the file is
# accounted for; every dirty-page search checks that the list's sorted part is sorted); both
# must pass and print the same thing. About 4 minutes per build.
#
#   patches/dpl-tail-check.sh DIR      (DIR must not exist; nothing in the repository changes)
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 DIR   (where to create the patched mdbx-sys crate; must not exist)" >&2
    exit 2
fi
dest=$1
root=$(cd "$(dirname "$0")/.." && pwd)
patchfile=$root/patches/libmdbx-0.14.4-dpl-tail.patch
expected_sha256=58b770f90b75c533fd66d6d040764f75589565a2bc46034cc2ec2d8d9b257176

if [[ -e "$dest" ]]; then
    echo "error: $dest already exists; give a new directory" >&2
    exit 2
fi
command -v "${CC:-cc}" > /dev/null || { echo "error: a C compiler is needed" >&2; exit 1; }

cargo_home=${CARGO_HOME:-$HOME/.cargo}
src=
for d in "$cargo_home"/registry/src/*/mdbx-sys-14.4.0; do
    [[ -f "$d/libmdbx/mdbx.c" ]] && src=$d
done
if [[ -z "$src" ]]; then
    (cd "$root" && cargo fetch --locked)
    for d in "$cargo_home"/registry/src/*/mdbx-sys-14.4.0; do
        [[ -f "$d/libmdbx/mdbx.c" ]] && src=$d
    done
fi
[[ -n "$src" ]] || { echo "error: mdbx-sys 14.4.0 not found under $cargo_home/registry/src" >&2; exit 1; }
actual=$(sha256sum "$src/libmdbx/mdbx.c" | cut -d' ' -f1)
if [[ "$actual" != "$expected_sha256" ]]; then
    echo "error: $src/libmdbx/mdbx.c has sha256 $actual, not the source the patch was made against" >&2
    exit 1
fi

mkdir -p "$(dirname "$dest")"
cp -a "$src" "$dest"
rm -f "$dest/.cargo-ok"
patch --quiet --forward -p1 -d "$dest" < "$patchfile"
echo "patched mdbx-sys 14.4.0 in $dest"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for variant in pristine patched; do
    crate=$src
    [[ $variant == patched ]] && crate=$dest
    "${CC:-cc}" -O1 -pthread -DMDBX_CHECKING=3 -DMDBX_TXN_CHECKOWNER=0 -DMDBX_BUILD_FLAGS='""' \
        -I "$crate/libmdbx" "$root/patches/loose-batch-check.c" "$crate/libmdbx/mdbx.c" \
        -o "$work/check-$variant"
    mkdir "$work/db-$variant"
    # libmdbx's own notices go to stderr (source line numbers differ); compare stdout.
    "$work/check-$variant" "$work/db-$variant" > "$work/$variant.out" 2> "$work/$variant.err" || {
        echo "error: dpl-tail-check failed on the $variant libmdbx:" >&2
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
echo "dpl-tail-check: passed on both, identical output ($(wc -l < "$work/patched.out") lines)"
