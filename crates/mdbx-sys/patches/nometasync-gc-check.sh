#!/usr/bin/env bash
# Checks patches/libmdbx-0.14.4-nometasync-gc.patch in the libmdbx Tabula builds
# (crates/mdbx-sys/libmdbx, every patch of series applied): patches/nometasync-powercut.c, run
# on a tabula-faultfs disk (faultfs-run) with a power cut at commit 6's data flush, must find
# the file DAMAGED on the pristine libmdbx 0.14.4 and OK on the patched one. Needs root and
# /dev/fuse; without them it fails, unless TABULA_ALLOW_SKIP names `powercut`.
#
#   crates/mdbx-sys/patches/nometasync-gc-check.sh      (nothing in the repository changes)
set -euo pipefail
source "$(dirname "$0")/lib-check.sh"
check_setup nometasync-gc "$@"

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
    build_check "$crate" "$work/powercut-$variant" "$patches/nometasync-powercut.c" -DMDBX_FORCE_ASSERTIONS=1
    # Cut at commit 6's data flush; every unflushed write reaches the disk except the meta
    # pages (the first 12 KiB of mdbx.dat: 4 KiB pages).
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
echo "nometasync-gc-check: DAMAGED on the pristine libmdbx, OK on the patched one"
