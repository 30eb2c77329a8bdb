#!/usr/bin/env bash
# Checks patches/libmdbx-0.14.4-search-prefetch.patch in the libmdbx Tabula builds
# (crates/mdbx-sys/libmdbx, every patch of series applied). A prefetch changes no result, so the
# check is that every index the patch prefetches lies within the page's keys and that the searches
# answer as before: patches/branchy-search-check.c (60,000 keys of every shape, a plain and a
# dupsort table, gets and seeks checked against its own model), built against the pristine
# libmdbx 0.14.4 and the patched one with assertions on (each prefetched index is asserted below
# the page's number of keys) and MDBX_DEBUG_SEARCH_BRANCHLESS=1 (libmdbx runs its reference
# binary search beside every page search and panics on a difference), must pass on both with the
# same output. Seconds.
#
#   crates/mdbx-sys/patches/search-prefetch-check.sh      (nothing in the repository changes)
set -euo pipefail
source "$(dirname "$0")/lib-check.sh"
check_setup search-prefetch "$@"
# libmdbx's debug search code (not this patch's) warns about its comparator pointer types: -w.
same_output search-prefetch --program branchy-search -DMDBX_DEBUG_SEARCH_BRANCHLESS=1 -w
