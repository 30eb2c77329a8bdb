#!/usr/bin/env bash
# Checks patches/libmdbx-0.14.4-stdfd-poll.patch in the libmdbx Tabula builds
# (crates/mdbx-sys/libmdbx, every patch of series applied) against the pristine libmdbx 0.14.4:
# patches/stdfd-poll-check.c (five opens with descriptors 0-2 open, the last one copying the
# environment after descriptor 2 is closed; one with descriptor 2 closed and libmdbx's poll() told
# all are open, as if another thread had closed it after the look; two with descriptors 0 and 2
# closed) is built against the pristine and the patched libmdbx
# (assertions on), run under strace on both, and
#   - the patched build must pass (OK; the data file's first page unchanged by the open whose
#     files got descriptor 2 and were moved off it), open database files (mdbx.dat, mdbx.lck)
#     onto descriptors 0-2 only in that open (3: dxb, lck, dsync), never the copy, ask no
#     terminal about descriptors 0-2 (ioctl TCGETS: the check it replaces), and poll exactly 14
#     times: once an open while descriptors 0-2 are open (5), once for the copy's file, once an
#     open and once a file while two of them are closed (2 x 4);
#   - the pristine build must give the same lines while descriptors 0-2 are open, and ask about
#     them with ioctl TCGETS (otherwise the check would not show the patch doing anything). Its
#     later steps are shown, not compared: its check never finds a descriptor closed
#     (`isatty(fd) < 0` never holds), so with descriptor 2 closed its data file gets it and the
#     warning it logs before moving the file goes into the file (meta page 0), and with 0 and 2
#     closed its data file gets 0, is moved onto 2 by dup() and refused.
#
#   crates/mdbx-sys/patches/stdfd-poll-check.sh      (nothing in the repository changes)
#
# Needs cc and strace (scripts/setup.sh installs it).
set -euo pipefail
source "$(dirname "$0")/lib-check.sh"
command -v strace > /dev/null || { echo "error: strace is needed" >&2; exit 1; }
check_setup stdfd-poll "$@"

declare -A tcgets polls lowfd
for variant in pristine patched; do
    crate=$src
    [[ $variant == patched ]] && crate=$dest
    build_check "$crate" "$work/check-$variant" "$patches/stdfd-poll-check.c" -DMDBX_FORCE_ASSERTIONS=1
    mkdir "$work/db-$variant"
    status=0
    strace -f -e trace=ioctl,poll,ppoll,openat -o "$work/$variant.strace" \
        "$work/check-$variant" "$work/db-$variant" < /dev/null > "$work/$variant.out" 2> "$work/$variant.err" ||
        status=$?
    tcgets[$variant]=$(grep -cE 'ioctl\([012], TCGETS' "$work/$variant.strace" || true)
    polls[$variant]=$(grep -cE '^[0-9]+ +p?poll\(' "$work/$variant.strace" || true)
    lowfd[$variant]=$(grep -vF O_NOCTTY "$work/$variant.strace" | grep -cE 'openat\(.*/(mdbx\.(dat|lck)|copy)".*= [012]$' || true)
    echo "$variant: exit $status, $(tail -n 1 "$work/$variant.out"); ioctl TCGETS of 0-2: ${tcgets[$variant]}," \
        "poll: ${polls[$variant]}, database files opened onto 0-2: ${lowfd[$variant]}"
    if [[ $variant == patched && ( $status != 0 || $(tail -n 1 "$work/$variant.out") != OK ) ]]; then
        echo "error: stdfd-poll-check failed on the patched libmdbx:" >&2
        cat "$work/$variant.out" >&2
        exit 1
    fi
done
# The lines both give while descriptors 0-2 are open.
steps=$(grep -n -m 1 '^descriptor 2 closed$' "$work/patched.out" | cut -d: -f1)
if ! grep -qx "the data file's first page unchanged" "$work/patched.out"; then
    echo "error: the patched libmdbx changed the data file's first page in an open" >&2
    exit 1
fi
if ! diff -u <(head -n "$steps" "$work/pristine.out") <(head -n "$steps" "$work/patched.out"); then
    echo "error: the patched libmdbx read other values (diff above)" >&2
    exit 1
fi
if (( tcgets[patched] != 0 || polls[patched] != 14 || lowfd[patched] != 3 )); then
    echo "error: the patched libmdbx made ${tcgets[patched]} ioctl TCGETS of descriptors 0-2 (0 expected)," \
        "${polls[patched]} poll() (14 expected) and opened ${lowfd[patched]} database files onto them (3 expected)" >&2
    exit 1
fi
if (( tcgets[pristine] == 0 )); then
    echo "error: the pristine libmdbx made no ioctl TCGETS: the check no longer shows the difference" >&2
    exit 1
fi
echo "stdfd-poll-check: the same $((steps - 1)) lines with descriptors 0-2 open; ioctl TCGETS ${tcgets[pristine]} -> 0," \
    "poll 0 -> ${polls[patched]}; the pristine libmdbx's later steps:"
tail -n +"$((steps + 1))" "$work/pristine.out" | sed 's/^/    /'
echo "    (the patched one's: $(tail -n +"$((steps + 1))" "$work/patched.out" | paste -sd '|' | sed 's/|/; /g'))"
