#!/usr/bin/env bash
# Recreates the patched copy of the mdbx-sys 14.4.0 crate (libmdbx 0.14.4 with
# patches/libmdbx-0.14.4-*.patch applied: dbi-open, nometasync-gc) in DIR, for
# measuring it through a `[patch.crates-io]` section (see patches/README.md).
#
#   scripts/mdbx-patch.sh DIR           copy the registry source to DIR, apply the patches
#   scripts/mdbx-patch.sh --check DIR   the same, then check them against the pristine
#                                       libmdbx:
#       - patches/dbi-open-check.c, built against both, must pass on both with the same
#         output;
#       - patches/nometasync-powercut.c, run on a tabula-faultfs disk (faultfs-run) with a
#         power cut at commit 6's data flush, must find the file DAMAGED on the pristine
#         libmdbx and OK on the patched one. This part needs root and /dev/fuse; without
#         them it fails, unless TABULA_ALLOW_SKIP names `powercut`.
#
# DIR must not exist yet. The registry source comes from cargo's cache
# (`cargo fetch` fills it when missing); nothing in the repository is changed.
set -euo pipefail

check=0
if [[ "${1:-}" == "--check" ]]; then
    check=1
    shift
fi
if [[ $# -ne 1 ]]; then
    echo "usage: $0 [--check] DIR   (DIR: where to create the patched mdbx-sys crate; must not exist)" >&2
    exit 2
fi
dest=$1
root=$(cd "$(dirname "$0")/.." && pwd)
patchfiles=("$root/patches/libmdbx-0.14.4-dbi-open.patch" "$root/patches/libmdbx-0.14.4-nometasync-gc.patch")
# The mdbx.c the patch was made against (mdbx-sys 14.4.0 from crates.io).
expected_sha256=58b770f90b75c533fd66d6d040764f75589565a2bc46034cc2ec2d8d9b257176

if [[ -e "$dest" ]]; then
    echo "error: $dest already exists; give a new directory (the copy is made from scratch)" >&2
    exit 2
fi

cargo_home=${CARGO_HOME:-$HOME/.cargo}
find_src() {
    local d
    for d in "$cargo_home"/registry/src/*/mdbx-sys-14.4.0; do
        if [[ -f "$d/libmdbx/mdbx.c" ]]; then
            echo "$d"
            return 0
        fi
    done
    return 1
}
src=$(find_src) || {
    echo "mdbx-sys 14.4.0 is not in $cargo_home/registry/src; running cargo fetch" >&2
    (cd "$root" && cargo fetch --locked)
    src=$(find_src) || {
        echo "error: mdbx-sys 14.4.0 still not found under $cargo_home/registry/src after cargo fetch" >&2
        exit 1
    }
}

actual_sha256=$(sha256sum "$src/libmdbx/mdbx.c" | cut -d' ' -f1)
if [[ "$actual_sha256" != "$expected_sha256" ]]; then
    echo "error: $src/libmdbx/mdbx.c has sha256 $actual_sha256, expected $expected_sha256" >&2
    echo "       (not the mdbx-sys 14.4.0 source the patch was made against)" >&2
    exit 1
fi

mkdir -p "$(dirname "$dest")"
cp -a "$src" "$dest"
rm -f "$dest/.cargo-ok"
for patchfile in "${patchfiles[@]}"; do
    patch --quiet --forward -p1 -d "$dest" < "$patchfile"
done
echo "patched mdbx-sys 14.4.0 in $dest ($(printf '%s ' "${patchfiles[@]##*/}"))"
echo "use it with, in the workspace Cargo.toml (not to be committed):"
echo "  [patch.crates-io]"
echo "  mdbx-sys = { path = \"$dest\" }"

if [[ $check -eq 1 ]]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    for variant in pristine patched; do
        crate=$src
        [[ $variant == patched ]] && crate=$dest
        "${CC:-cc}" -O1 -pthread -DMDBX_FORCE_ASSERTIONS=1 -DMDBX_TXN_CHECKOWNER=0 -DMDBX_BUILD_FLAGS='""' \
            -I "$crate/libmdbx" "$root/patches/dbi-open-check.c" "$crate/libmdbx/mdbx.c" \
            -o "$work/check-$variant"
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

    # The power-cut reproduction: needs root and /dev/fuse (faultfs-run mounts a FUSE disk).
    if [[ $(id -u) -ne 0 || ! -e /dev/fuse ]]; then
        why="the power-cut check needs root and /dev/fuse"
        if [[ ",${TABULA_ALLOW_SKIP:-}," == *,powercut,* ]]; then
            echo "SKIPPED (TABULA_ALLOW_SKIP names powercut): $why"
            exit 0
        fi
        echo "error: $why (allow the skip with TABULA_ALLOW_SKIP=powercut)" >&2
        exit 1
    fi
    (cd "$root" && cargo build --quiet -p tabula-faultfs --bin faultfs-run)
    runner=$(cd "$root" && cargo metadata --format-version 1 --no-deps |
        sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/debug/faultfs-run
    for variant in pristine patched; do
        crate=$src
        [[ $variant == patched ]] && crate=$dest
        "${CC:-cc}" -O1 -pthread -DMDBX_FORCE_ASSERTIONS=1 -DMDBX_TXN_CHECKOWNER=0 -DMDBX_BUILD_FLAGS='""' \
            -I "$crate/libmdbx" "$root/patches/nometasync-powercut.c" "$crate/libmdbx/mdbx.c" \
            -o "$work/powercut-$variant"
        # Cut at commit 6's data flush; every unflushed write reaches the disk except the
        # meta pages (the first 12 KiB of mdbx.dat: 4 KiB pages).
        "$runner" --cut-at-fsync-after c5 --keep all --lose mdbx.dat:0-12288 \
            --image "$work/image-$variant" -- "$work/powercut-$variant" write '{}' \
            > "$work/powercut-$variant.run" 2>&1 || {
            echo "error: the power-cut run failed on the $variant libmdbx:" >&2
            tail -n 20 "$work/powercut-$variant.run" >&2
            exit 1
        }
        "$work/powercut-$variant" check "$work/image-$variant" > "$work/powercut-$variant.out" 2>&1 || true
        echo "nometasync-powercut, $variant libmdbx:"
        sed 's/^/    /' "$work/powercut-$variant.out"
    done
    if [[ $(tail -n 1 "$work/powercut-pristine.out") != DAMAGED ]]; then
        echo "error: the reproduction no longer damages the pristine libmdbx's file" >&2
        exit 1
    fi
    if [[ $(tail -n 1 "$work/powercut-patched.out") != OK ]]; then
        echo "error: the patched libmdbx's file is damaged after the cut" >&2
        exit 1
    fi
    echo "nometasync-powercut: DAMAGED on the pristine libmdbx, OK on the patched one"
fi
