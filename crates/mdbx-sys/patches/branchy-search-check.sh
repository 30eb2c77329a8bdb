#!/usr/bin/env bash
# Checks patches/libmdbx-0.14.4-branchy-search.patch in the libmdbx Tabula builds
# (crates/mdbx-sys/libmdbx, every patch of series applied): patches/branchy-search-check.c,
# built against the pristine libmdbx 0.14.4 and the patched one with assertions on and
# MDBX_DEBUG_SEARCH_BRANCHLESS=1 (libmdbx then checks every page search against its reference
# binary search, which compares with cmp_lexical, and panics on a difference), must pass on both
# with the same output: the same keys in the same order, the same gets and seeks. Seconds.
#
#   crates/mdbx-sys/patches/branchy-search-check.sh      (nothing in the repository changes)
set -euo pipefail
source "$(dirname "$0")/lib-check.sh"
check_setup branchy-search "$@"
# libmdbx's debug search code (not this patch's) warns about its comparator pointer types: -w.
same_output branchy-search -DMDBX_DEBUG_SEARCH_BRANCHLESS=1 -w
