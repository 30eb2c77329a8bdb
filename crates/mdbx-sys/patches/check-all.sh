#!/usr/bin/env bash
# Runs the check of every patch in series against the libmdbx Tabula builds
# (crates/mdbx-sys/libmdbx) and the pristine libmdbx 0.14.4, as many at a time as there are
# cores (`TABULA_PATCH_CHECK_JOBS` overrides), the longest first; prints each check's output
# in series order and fails when any failed. scripts/test.sh runs it. The fallocate-enospc
# patch's check is tests/disk_full.rs (cargo test).
set -euo pipefail
cd "$(dirname "$0")"
# Longest first (about 10, 6.5, 2.2, 0.7, 0.4, 0.3, 0.3 and 0.1 minutes on two idle cores; local-fs
# and lazy-dp-limit 0.4 and 0.3 minutes with both cores busy; branchy-search and search-prefetch,
# then meta-read-once, stdfd-poll, open-probes and lck-written, seconds each; growth-written about 15 s).
names=(dpl-tail loose-batch big-dpl nometasync-gc write-chunks growth-written dbi-open page-zeroing lck-sync local-fs lazy-dp-limit branchy-search search-prefetch meta-read-once stdfd-poll open-probes lck-written)
jobs_max=${TABULA_PATCH_CHECK_JOBS:-$(nproc)}
out=$(mktemp -d)
# shellcheck disable=SC2064 # expand $out now
trap "rm -rf '$out'" EXIT

run() {
    local name=$1 start=$SECONDS status=ok
    "./$name-check.sh" > "$out/$name.log" 2>&1 || status=failed
    echo "$status $((SECONDS - start))" > "$out/$name.status"
}

for name in "${names[@]}"; do
    while (( $(jobs -rp | wc -l) >= jobs_max )); do
        wait -n || true
    done
    run "$name" &
done
wait

failed=()
for name in $(cat series | sed -nE 's/^libmdbx-0\.14\.4-(.*)\.patch$/\1/p'); do
    if [[ ! -e $out/$name.status ]]; then
        [[ $name == fallocate-enospc ]] && continue # checked by cargo test
        echo "error: libmdbx-0.14.4-$name.patch is in series but has no check in $0" >&2
        exit 1
    fi
    read -r status seconds < "$out/$name.status"
    echo "== patch check: $name ($status, $seconds s)" >&2
    cat "$out/$name.log" >&2
    [[ $status == ok ]] || failed+=("$name")
done
for name in "${names[@]}"; do
    [[ -e $out/$name.status ]] || { echo "error: the $name check did not run" >&2; exit 1; }
done
if (( ${#failed[@]} )); then
    echo "error: patch check(s) failed: ${failed[*]}" >&2
    exit 1
fi
