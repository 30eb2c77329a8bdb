#!/bin/sh
# get_cold experiment (docs/benchmarks-get-cold.md, lead 4): libmdbx 0.14.4 patched so one global
# picks its binary search at run time (0 = upstream branchless, 1 = branchy like LMDB,
# 2 = branchless + prefetch of both next candidates), and heed, on identical data, timed in
# interleaved rounds in one process. Builds outside the workspace, in $OUT (default /tmp/cold-exp).
# Usage: run.sh [entries] [gets] [rounds] [page_size]
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/cold-exp}
SRC=$(ls -d "$HOME"/.cargo/registry/src/*/mdbx-sys-14.4.0 | head -1)
mkdir -p "$OUT/probe/src"
if [ ! -d "$OUT/mdbx-sys" ]; then
  cp -r "$SRC" "$OUT/mdbx-sys"
  chmod -R u+w "$OUT/mdbx-sys"
  (cd "$OUT/mdbx-sys" && patch -p1 < "$HERE/mdbx-search-modes.patch")
fi
cp "$HERE/probe.Cargo.toml" "$OUT/probe/Cargo.toml"
cp "$HERE/probe.rs" "$OUT/probe/src/main.rs"
cp "$HERE/../../Cargo.lock" "$OUT/probe/Cargo.lock"
cd "$OUT/probe"
CARGO_TARGET_DIR="$OUT/target" cargo build --release --offline
"$OUT/target/release/cold-probe" "$@"
