# Sourced by patches/*-check.sh: the steps every patch check shares.
#
#   source "$(dirname "$0")/lib-check.sh"
#   check_setup PATCH_NAME "$@"   # PATCH_NAME: e.g. dpl-tail for libmdbx-0.14.4-dpl-tail.patch
#
# check_setup takes the script's arguments (one: DIR, which must not exist), checks that cc and
# patch are there, finds mdbx-sys 14.4.0 in cargo's registry (fetching it if needed) and checks
# that its mdbx.c is the source the patches were made against, copies the crate to DIR and
# applies the patch there. It sets:
#   root   the repository's root
#   src    the pristine crate (in cargo's registry; never changed)
#   dest   the patched copy (DIR)
#   work   a temporary directory, removed when the script exits
# and build_check VARIANT CRATE OUT PROGRAM.c [CFLAGS...] compiles PROGRAM.c with CRATE's mdbx.c
# (-O1 -pthread, the thread-owner check off, an empty MDBX_BUILD_FLAGS) into OUT.
# Nothing in the repository changes.

mdbx_c_sha256=58b770f90b75c533fd66d6d040764f75589565a2bc46034cc2ec2d8d9b257176

check_setup() {
    local name=$1
    shift
    if [[ $# -ne 1 ]]; then
        echo "usage: $0 DIR   (where to create the patched mdbx-sys crate; must not exist)" >&2
        exit 2
    fi
    dest=$1
    root=$(cd "$(dirname "$0")/.." && pwd)
    local patchfile=$root/patches/libmdbx-0.14.4-$name.patch
    if [[ -e "$dest" ]]; then
        echo "error: $dest already exists; give a new directory" >&2
        exit 2
    fi
    local tool
    for tool in "${CC:-cc}" patch sha256sum; do
        command -v "$tool" > /dev/null || { echo "error: $tool is needed" >&2; exit 1; }
    done

    local cargo_home=${CARGO_HOME:-$HOME/.cargo} d
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
    local actual
    actual=$(sha256sum "$src/libmdbx/mdbx.c" | cut -d' ' -f1)
    if [[ "$actual" != "$mdbx_c_sha256" ]]; then
        echo "error: $src/libmdbx/mdbx.c has sha256 $actual, not the source the patch was made against" >&2
        exit 1
    fi

    mkdir -p "$(dirname "$dest")"
    cp -a "$src" "$dest"
    rm -f "$dest/.cargo-ok"
    patch --quiet --forward -p1 -d "$dest" < "$patchfile"
    echo "patched mdbx-sys 14.4.0 in $dest"

    work=$(mktemp -d)
    # shellcheck disable=SC2064 # expand $work now
    trap "rm -rf '$work'" EXIT
}

build_check() {
    local crate=$1 out=$2 program=$3
    shift 3
    "${CC:-cc}" -O1 -pthread -DMDBX_TXN_CHECKOWNER=0 -DMDBX_BUILD_FLAGS='""' "$@" \
        -I "$crate/libmdbx" "$program" "$crate/libmdbx/mdbx.c" -o "$out"
}
