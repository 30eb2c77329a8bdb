#!/usr/bin/env bash
# Checks patches/libmdbx-0.14.4-lck-written.patch in the libmdbx Tabula builds
# (crates/mdbx-sys/libmdbx, every patch of series applied) against the libmdbx before it
# ("before": the pristine libmdbx 0.14.4 with every patch of series before this one) and the
# pristine one. patches/lck-written-check.c is built against each (assertions on), and
#   - `kv` (a new environment, an exclusive open, a shared one by a forked child while the
#     parent holds it) runs under strace on each: the outputs must be identical and OK; the
#     patched build must reserve nothing with fallocate() and set no length with ftruncate()
#     that the build before it did for the lock file (fewer of each), and write it (more
#     pwrite64 calls, 4096-byte zero pages at offset 0 of a 4096-byte lock file);
#   - on a 4 MiB tmpfs (mounted here: root) an environment is made, the file system filled, and
#     the environment opened again: "tabula" must report ENOSPC from the open; the
#     pristine one, which sets the lock file's length and zeroes it through its map, is shown
#     (a SIGBUS: a store into the map of a page the full tmpfs cannot back).
# Where no tmpfs can be mounted the check fails, unless TABULA_ALLOW_SKIP names `lck-written`.
#
#   crates/mdbx-sys/patches/lck-written-check.sh      (nothing in the repository changes)
#
# Needs cc, strace (scripts/setup.sh installs it), mount and umount.
set -euo pipefail
source "$(dirname "$0")/lib-check.sh"
command -v strace > /dev/null || { echo "error: strace is needed" >&2; exit 1; }
check_setup lck-written "$@"

tree_before lck-written

declare -A calls
for variant in pristine before patched tabula; do
    crate=$(tree_of "$variant")
    # With Tabula's reservation settings (crates/mdbx-sys/build.rs): the lock file is reserved
    # with fallocate(FALLOC_FL_KEEP_SIZE) and then given its length with ftruncate().
    build_check "$crate" "$work/check-$variant" "$patches/lck-written-check.c" -DMDBX_FORCE_ASSERTIONS=1 \
        -DMDBX_USE_FALLOCATE=1 -DFALLOC_FL_ALLOCATE_RANGE=0x00
    mkdir "$work/db-$variant"
    strace -f -e trace=fallocate,ftruncate,pwrite64 -o "$work/$variant.strace" \
        "$work/check-$variant" kv "$work/db-$variant" > "$work/$variant.out" 2> "$work/$variant.err" || {
        echo "error: lck-written-check failed on the $variant libmdbx:" >&2
        cat "$work/$variant.out" >&2
        tail -n 5 "$work/$variant.err" >&2
        exit 1
    }
    for name in fallocate ftruncate pwrite64; do
        calls[$variant.$name]=$(grep -cE "^[0-9]+ +$name\(" "$work/$variant.strace" || true)
    done
done
same_as_pristine before patched tabula
[[ $(tail -n 1 "$work/patched.out") == OK ]] || { echo "error: the check did not finish" >&2; exit 1; }
status=0
for name in fallocate ftruncate; do
    if (( calls[patched.$name] >= calls[before.$name] )); then
        echo "error: the patched libmdbx made ${calls[patched.$name]} $name calls, ${calls[before.$name]} before the patch" >&2
        status=1
    fi
done
if (( calls[patched.pwrite64] <= calls[before.pwrite64] )); then
    echo "error: the patched libmdbx made ${calls[patched.pwrite64]} pwrite64 calls, ${calls[before.pwrite64]} before the patch: it does not write the lock file" >&2
    status=1
fi
# Two exclusive opens (the new environment, the reopen): each writes the lock file's page.
zero_pages=$(grep -cE '^[0-9]+ +pwrite64\([0-9]+, "\\0\\0\\0\\0.*, 4096, 0\) += 4096$' "$work/patched.strace" || true)
if (( zero_pages < 2 )); then
    echo "error: the patched libmdbx wrote $zero_pages zeroed 4096-byte pages at offset 0, not 2 or more" >&2
    status=1
fi
(( status == 0 )) || exit 1
echo "kv: identical results ($(wc -l < "$work/patched.out") lines); fallocate ${calls[before.fallocate]} -> ${calls[patched.fallocate]}," \
    "ftruncate ${calls[before.ftruncate]} -> ${calls[patched.ftruncate]}, pwrite64 ${calls[before.pwrite64]} -> ${calls[patched.pwrite64]}"

# A full tmpfs.
mnt=$work/mnt
mkdir "$mnt"
if ! mount -t tmpfs -o size=4m tmpfs "$mnt" 2> "$work/mount.err"; then
    if [[ ",${TABULA_ALLOW_SKIP:-}," == *,lck-written,* ]]; then
        echo "SKIPPED (TABULA_ALLOW_SKIP names lck-written): cannot mount a tmpfs: $(cat "$work/mount.err")"
        exit 0
    fi
    echo "error: cannot mount a tmpfs (the check needs root): $(cat "$work/mount.err"); allow the skip with TABULA_ALLOW_SKIP=lck-written" >&2
    exit 1
fi
# shellcheck disable=SC2064 # expand $mnt and $work now
trap "umount '$mnt' 2> /dev/null || umount -l '$mnt'; rm -rf '$work'" EXIT
declare -A full
for variant in pristine tabula; do
    mkdir "$mnt/$variant"
    "$work/check-$variant" make "$mnt/$variant" > /dev/null 2>&1
done
head -c 8M /dev/zero > "$mnt/filler" 2> /dev/null || true
for variant in pristine tabula; do
    rc=0
    full[$variant]=$("$work/check-$variant" open "$mnt/$variant" 2> /dev/null) || rc=$?
    if (( rc > 128 )); then
        full[$variant]="killed by signal $((rc - 128)) (SIG$(kill -l $((rc - 128))))"
    elif (( rc != 0 )); then
        full[$variant]="exit $rc: ${full[$variant]}"
    fi
done
echo "full tmpfs: pristine: ${full[pristine]}; Tabula's: ${full[tabula]}"
if [[ ${full[tabula]} != "open: No space left on device" ]]; then
    echo "error: the patched libmdbx's open on a full tmpfs did not fail with ENOSPC" >&2
    exit 1
fi
if [[ ${full[pristine]} != *SIGBUS* ]]; then
    echo "error: the pristine libmdbx's open on a full tmpfs was not a SIGBUS: the check no longer shows the difference" >&2
    exit 1
fi
echo "lck-written-check: passed"
