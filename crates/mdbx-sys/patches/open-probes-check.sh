#!/usr/bin/env bash
# Checks patches/libmdbx-0.14.4-open-probes.patch in the libmdbx Tabula builds
# (crates/mdbx-sys/libmdbx, every patch of series applied) against the pristine libmdbx 0.14.4:
# patches/open-probes-check.c (a new environment, an exclusive open, an exclusive read-only one,
# and a shared one by a forked child while the parent holds it) is built against the pristine
# libmdbx, every patch of series before this one ("before"), those and this one ("patched"),
# and every patch of series ("tabula", the committed tree), assertions on, run under strace on
# each, and
#   - their outputs must be identical and OK: the same values and transactions, and every
#     descriptor of mdbx.dat and mdbx.lck parked at the same offset;
#   - "patched" must make fewer lseek, fstatfs, newfstatat and madvise calls than "before",
#     each (the calls the patch leaves out), and as many of every other call;
#   - the child's shared open must still ask the kernel to read the lock file ahead
#     (MADV_WILLNEED on the lock file's map: only the first process, which writes it whole, no
#     longer does).
#
#   crates/mdbx-sys/patches/open-probes-check.sh      (nothing in the repository changes)
#
# Needs cc and strace (scripts/setup.sh installs it). Linux (the patch changes nothing elsewhere).
set -euo pipefail
source "$(dirname "$0")/lib-check.sh"
command -v strace > /dev/null || { echo "error: strace is needed" >&2; exit 1; }
check_setup open-probes "$@"

# Every call, by name, of a trace (strace -f: "PID name(..."), but libmdbx's log lines on
# standard error (the patch leaves out a notice with the madvise it does not make).
tally() {
    grep -vE '^[0-9]+ +write\(2, ' "$1" | sed -nE 's/^[0-9]+ +([a-z0-9_]+)\(.*/\1/p' |
        sort | uniq -c | awk '{print $2, $1}'
}

tree_before open-probes

declare -A counts
for variant in pristine before patched tabula; do
    crate=$(tree_of "$variant")
    build_check "$crate" "$work/check-$variant" "$patches/open-probes-check.c" -DMDBX_FORCE_ASSERTIONS=1
    mkdir "$work/db-$variant"
    strace -f -o "$work/$variant.strace" "$work/check-$variant" "$work/db-$variant" \
        > "$work/$variant.out" 2> "$work/$variant.err" || {
        echo "error: open-probes-check failed on the $variant libmdbx:" >&2
        cat "$work/$variant.out" >&2
        tail -n 5 "$work/$variant.err" >&2
        exit 1
    }
    while read -r name n; do
        counts[$variant.$name]=$n
    done < <(tally "$work/$variant.strace")
done
same_as_pristine before patched tabula
[[ $(tail -n 1 "$work/patched.out") == OK ]] || { echo "error: the check did not finish" >&2; exit 1; }
parked=$(grep -c ' at ' "$work/patched.out")
(( parked > 0 )) || { echo "error: no parked descriptor was shown" >&2; exit 1; }

status=0
summary=()
for name in $(printf '%s\n' "${!counts[@]}" | sed -nE 's/^(before|patched)\.//p' | sort -u); do
    p=${counts[before.$name]:-0} q=${counts[patched.$name]:-0}
    case $name in
        lseek | fstatfs | newfstatat | madvise)
            summary+=("$name $p -> $q")
            if (( q >= p )); then
                echo "error: the patched libmdbx made $q $name calls, the one before the patch $p: no fewer" >&2
                status=1
            fi
            ;;
        *)
            if (( p != q )); then
                echo "error: the patched libmdbx made $q $name calls, the one before the patch $p" >&2
                status=1
            fi
            ;;
    esac
done
# The child: the second process of a trace. Its open is the shared one, whose read-ahead of the
# lock file the patch keeps: as many MADV_WILLNEED calls as before the patch.
willneed_of_child() {
    local child
    child=$(awk '{print $1}' "$1" | awk '!seen[$0]++' | sed -n 2p)
    [[ -n $child ]] || { echo "error: no child process in $1" >&2; exit 1; }
    grep -cE "^$child +madvise\(.*MADV_WILLNEED\)" "$1" || true
}
w_before=$(willneed_of_child "$work/before.strace")
w_patched=$(willneed_of_child "$work/patched.strace")
if (( w_patched != w_before || w_patched == 0 )); then
    echo "error: the child's shared open made $w_patched MADV_WILLNEED calls, $w_before before the patch" >&2
    status=1
fi
(( status == 0 )) || exit 1
echo "open-probes-check: identical results ($(wc -l < "$work/patched.out") lines, $parked parked descriptors); $(IFS=,; echo "${summary[*]}" | sed 's/,/, /g')"
