#!/usr/bin/env bash
# Makes a patched copy of mdbx-sys 14.4.0 with patches/libmdbx-0.14.4-write-chunks.patch in DIR
# and checks the patch: patches/write-chunks-check.c is built against the pristine and the
# patched libmdbx (assertions on), run under strace on both, and
#   - their outputs (entry counts, checksums of everything read back, mdbx_env_chk) must be
#     identical, and OK;
#   - the patched build's largest write call must be at most 64 KiB, and the pristine one's
#     larger (otherwise the check would not show the patch doing anything).
#
#   patches/write-chunks-check.sh DIR      (DIR must not exist; nothing in the repository changes)
#
# Use DIR in a `[patch.crates-io]` section to measure (see patches/libmdbx-0.14.4-write-chunks.md).
# Needs cc and strace.
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 DIR   (where to create the patched mdbx-sys crate; must not exist)" >&2
    exit 2
fi
dest=$1
root=$(cd "$(dirname "$0")/.." && pwd)
patchfile=$root/patches/libmdbx-0.14.4-write-chunks.patch
expected_sha256=58b770f90b75c533fd66d6d040764f75589565a2bc46034cc2ec2d8d9b257176
limit=65536

if [[ -e "$dest" ]]; then
    echo "error: $dest already exists; give a new directory" >&2
    exit 2
fi
for tool in cc strace patch; do
    command -v "$tool" > /dev/null || { echo "error: $tool is needed" >&2; exit 1; }
done

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
largest=()
for variant in pristine patched; do
    crate=$src
    [[ $variant == patched ]] && crate=$dest
    "${CC:-cc}" -O1 -pthread -DMDBX_FORCE_ASSERTIONS=1 -DMDBX_TXN_CHECKOWNER=0 -DMDBX_BUILD_FLAGS='""' \
        -I "$crate/libmdbx" "$root/patches/write-chunks-check.c" "$crate/libmdbx/mdbx.c" \
        -o "$work/check-$variant"
    mkdir "$work/db-$variant"
    strace -f -e trace=write,writev,pwrite64,pwritev,pwritev2 -o "$work/$variant.strace" \
        "$work/check-$variant" "$work/db-$variant" > "$work/$variant.out" 2> "$work/$variant.err" || {
        echo "error: write-chunks-check failed on the $variant libmdbx:" >&2
        cat "$work/$variant.out" >&2
        tail -n 5 "$work/$variant.err" >&2
        exit 1
    }
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
