#!/usr/bin/env bash
# Checks patches/libmdbx-0.14.4-local-fs.patch in the libmdbx Tabula builds (crates/mdbx-sys/libmdbx,
# every patch of series applied) against the pristine libmdbx 0.14.4: patches/local-fs-check.c
# (three opens of one environment, each writing or reading) is built against the pristine and
# the patched libmdbx (assertions on), run under strace on both, in a directory of the file
# system the scripts' temporary directory is on, and
#   - their outputs must be identical, and OK;
#   - the patched build must not read the mount table (/proc/mounts, /etc/mtab), and the
#     pristine one must (twice per open: otherwise the check would not show the patch doing
#     anything).
# The file system must be one of the patch's local types (ext2/3/4, xfs, btrfs, f2fs, tmpfs,
# overlayfs); on another the check fails unless TABULA_LOCAL_FS_CHECK_SKIP=1 says that a skip
# is intended.
#
#   crates/mdbx-sys/patches/local-fs-check.sh      (nothing in the repository changes)
#
# Needs cc, strace (scripts/setup.sh installs it) and stat.
set -euo pipefail
source "$(dirname "$0")/lib-check.sh"
command -v strace > /dev/null || { echo "error: strace is needed" >&2; exit 1; }
check_setup local-fs "$@"

fs=$(stat -f -c %T "$work")
case "$fs" in
    ext2/ext3 | xfs | btrfs | f2fs | tmpfs | overlayfs) ;;
    *)
        if [[ ${TABULA_LOCAL_FS_CHECK_SKIP:-} == 1 ]]; then
            echo "local-fs-check: skipped, $work is on $fs (TABULA_LOCAL_FS_CHECK_SKIP=1)"
            exit 0
        fi
        echo "error: $work is on $fs, not a file system the patch covers; run with TMPDIR on" \
            "one, or TABULA_LOCAL_FS_CHECK_SKIP=1 to skip" >&2
        exit 1
        ;;
esac

traced_gone local-fs openat 'openat\(.*"(/proc/mounts|/etc/mtab)"' 'reads of the mount table'
