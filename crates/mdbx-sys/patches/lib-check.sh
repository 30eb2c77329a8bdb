# Sourced by the *-check.sh scripts beside it: the steps every patch check shares.
#
#   source "$(dirname "$0")/lib-check.sh"
#   check_setup NAME "$@"   # NAME: e.g. dpl-tail for libmdbx-0.14.4-dpl-tail.patch
#
# check_setup takes the script's arguments (none), checks that the patch is in `series`, that
# cc and patch are there and that crates/mdbx-sys/libmdbx/ is the pristine libmdbx with the
# patches of `series` applied (scripts/libmdbx.sh --check), and copies the pristine tree. It
# sets:
#   root      the repository's root
#   patches   this directory
#   src       the pristine libmdbx 0.14.4 (a copy of ../pristine, as src/libmdbx/)
#   dest      crates/mdbx-sys, whose libmdbx/ is what Tabula builds: every patch applied
#   work      a temporary directory, removed when the script exits
# and build_check CRATE OUT PROGRAM.c [CFLAGS...] compiles PROGRAM.c with CRATE's libmdbx/mdbx.c
# (-O1 -pthread, the thread-owner check off, an empty MDBX_BUILD_FLAGS) into OUT;
# traced_check NAME VARIANT SYSCALLS builds NAME-check.c against the pristine or the patched
# libmdbx (VARIANT, assertions on) and runs it on a new directory under strace (the SYSCALLS
# traced), leaving $work/VARIANT.out, .err and .strace, or says why it failed and exits;
# tree_before NAME writes $work/before/libmdbx, the pristine libmdbx with every patch of series
# before libmdbx-0.14.4-NAME.patch applied, and $work/through/libmdbx, the same with that patch
# too (what the patch itself changes, compared alone: the patches after it may change the same
# calls), and sets `before` and `through` to them; tree_of VARIANT prints the tree of a variant
# of such a check (pristine, before, patched: through the patch, tabula: every patch, the
# committed tree), and same_as_pristine VARIANT... fails unless each variant's $work/VARIANT.out
# is the pristine one's;
# same_output NAME [--program PROGRAM] [CFLAGS...] builds NAME-check.c (PROGRAM-check.c when
# given) against the pristine and the patched libmdbx (assertions on, CFLAGS added), runs each on
# a new directory, and fails unless both pass with identical output (stdout: libmdbx's own
# notices on stderr carry source line numbers);
# traced_gone NAME SYSCALLS PATTERN WHAT runs traced_check on both and fails unless their
# outputs are identical, the patched run made no call matching PATTERN (an extended regexp
# over the strace log; WHAT names those calls in the messages) and the pristine run some.
# Nothing in the repository changes.

check_setup() {
    local name=$1
    shift
    if [[ $# -ne 0 ]]; then
        echo "usage: $0   (checks the committed patched libmdbx against the pristine one)" >&2
        exit 2
    fi
    patches=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    root=$(cd "$patches/../../.." && pwd)
    dest=$root/crates/mdbx-sys
    if ! grep -qx "libmdbx-0.14.4-$name.patch" "$patches/series"; then
        echo "error: libmdbx-0.14.4-$name.patch is not in $patches/series" >&2
        exit 1
    fi
    local tool
    for tool in "${CC:-cc}" patch sha256sum; do
        command -v "$tool" > /dev/null || { echo "error: $tool is needed" >&2; exit 1; }
    done
    "$root/scripts/libmdbx.sh" --check > /dev/null

    work=$(mktemp -d)
    # shellcheck disable=SC2064 # expand $work now
    trap "rm -rf '$work'" EXIT
    src=$work/pristine
    mkdir -p "$src/libmdbx"
    cp "$dest"/pristine/* "$src/libmdbx/"
}

build_check() {
    local crate=$1 out=$2 program=$3
    shift 3
    "${CC:-cc}" -O1 -pthread -DMDBX_TXN_CHECKOWNER=0 -DMDBX_BUILD_FLAGS='""' "$@" \
        -I "$crate/libmdbx" "$program" "$crate/libmdbx/mdbx.c" -o "$out"
}

traced_check() {
    local name=$1 variant=$2 syscalls=$3 crate=$src
    [[ $variant == patched ]] && crate=$dest
    build_check "$crate" "$work/check-$variant" "$patches/$name-check.c" -DMDBX_FORCE_ASSERTIONS=1
    mkdir "$work/db-$variant"
    strace -f -e "trace=$syscalls" -o "$work/$variant.strace" \
        "$work/check-$variant" "$work/db-$variant" > "$work/$variant.out" 2> "$work/$variant.err" || {
        echo "error: $name-check failed on the $variant libmdbx:" >&2
        cat "$work/$variant.out" >&2
        tail -n 5 "$work/$variant.err" >&2
        exit 1
    }
}

traced_gone() {
    local name=$1 syscalls=$2 pattern=$3 what=$4 variant n
    local -a counts=()
    for variant in pristine patched; do
        traced_check "$name" "$variant" "$syscalls"
        n=$(grep -cE "$pattern" "$work/$variant.strace" || true)
        echo "$variant: $(tail -n 1 "$work/$variant.out"), $n $what"
        counts+=("$n")
    done
    if ! diff -u "$work/pristine.out" "$work/patched.out"; then
        echo "error: the patched libmdbx read other values (diff above)" >&2
        exit 1
    fi
    if (( counts[1] != 0 )); then
        echo "error: the patched libmdbx made ${counts[1]} $what" >&2
        exit 1
    fi
    if (( counts[0] == 0 )); then
        echo "error: the pristine libmdbx made no $what: the check no longer shows the difference" >&2
        exit 1
    fi
    echo "$name-check: identical results ($(wc -l < "$work/patched.out") lines); $what ${counts[0]} -> 0"
}

same_output() {
    local name=$1 program=$1 variant crate
    shift
    if [[ ${1:-} == --program ]]; then
        program=$2
        shift 2
    fi
    for variant in pristine patched; do
        crate=$src
        [[ $variant == patched ]] && crate=$dest
        build_check "$crate" "$work/check-$variant" "$patches/$program-check.c" -DMDBX_FORCE_ASSERTIONS=1 "$@"
        mkdir "$work/db-$variant"
        "$work/check-$variant" "$work/db-$variant" > "$work/$variant.out" 2> "$work/$variant.err" || {
            echo "error: $name-check failed on the $variant libmdbx:" >&2
            grep -E 'FAIL|failure' "$work/$variant.out" >&2 || true
            tail -n 5 "$work/$variant.err" >&2
            exit 1
        }
    done
    if ! diff -u "$work/pristine.out" "$work/patched.out"; then
        echo "error: the patched libmdbx answers differently from the pristine one (diff above)" >&2
        exit 1
    fi
    echo "$name-check: passed on both, identical output ($(wc -l < "$work/patched.out") lines)"
}

tree_before() {
    local name=$1 line
    before=$work/before
    through=$work/through
    mkdir -p "$before/libmdbx" "$through/libmdbx"
    cp "$src"/libmdbx/* "$before/libmdbx/"
    while read -r line; do
        line=${line%%#*}
        line=${line//[[:space:]]/}
        [[ -z $line ]] && continue
        if [[ $line == "libmdbx-0.14.4-$name.patch" ]]; then
            cp "$before"/libmdbx/* "$through/libmdbx/"
            patch --quiet --forward --fuzz=0 --no-backup-if-mismatch -p1 -d "$through" < "$patches/$line"
            return 0
        fi
        patch --quiet --forward --fuzz=0 --no-backup-if-mismatch -p1 -d "$before" < "$patches/$line"
    done < "$patches/series"
    echo "error: libmdbx-0.14.4-$name.patch is not in series" >&2
    exit 1
}

tree_of() {
    case $1 in
        pristine) echo "$src" ;;
        before) echo "$before" ;;
        patched) echo "$through" ;;
        tabula) echo "$dest" ;;
        *) echo "error: no tree for variant $1" >&2; exit 1 ;;
    esac
}

same_as_pristine() {
    local variant
    for variant in "$@"; do
        if ! diff -u "$work/pristine.out" "$work/$variant.out"; then
            echo "error: the $variant libmdbx gave other results than the pristine one (diff above)" >&2
            exit 1
        fi
    done
}
