#!/usr/bin/env bash
# Checks patches/libmdbx-0.14.4-dbi-open.patch in the libmdbx Tabula builds (crates/mdbx-sys/libmdbx,
# every patch of series applied): patches/dbi-open-check.c, built against the pristine libmdbx
# 0.14.4 and the patched one (assertions on), must pass on both with the same output.
#
#   crates/mdbx-sys/patches/dbi-open-check.sh      (nothing in the repository changes)
set -euo pipefail
source "$(dirname "$0")/lib-check.sh"
check_setup dbi-open "$@"

same_output dbi-open
