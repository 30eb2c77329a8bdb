#!/usr/bin/env bash
# Checks that the published crates build with the Rust version the manifest declares
# (`rust-version` in the root Cargo.toml): installs that toolchain with rustup when it is
# missing (minimal profile), then `cargo check`s the whole workspace with every feature and
# every target (libraries, the CLI, tests, examples), in a target directory of its own. The
# benchmark harness is left out: it declares its own, newer `rust-version` (its peers need it)
# and is not published.
set -euo pipefail
cd "$(dirname "$0")/.."

msrv=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml | head -1)
[ -n "$msrv" ] || { echo "msrv: no rust-version in Cargo.toml" >&2; exit 1; }
toolchain="$msrv"
# rustup names a release by its full version: 1.88 -> 1.88.0.
[[ "$toolchain" =~ ^[0-9]+\.[0-9]+$ ]] && toolchain="$toolchain.0"

command -v rustup >/dev/null || {
    echo "msrv: rustup is not installed; install Rust with rustup (https://rustup.rs) to check Rust $toolchain" >&2
    exit 1
}
if ! rustup run "$toolchain" rustc --version >/dev/null 2>&1; then
    echo "msrv: installing Rust $toolchain" >&2
    rustup toolchain install "$toolchain" --profile minimal >&2
fi
echo "msrv: checking the workspace with Rust $toolchain" >&2
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/msrv" cargo "+$toolchain" check \
    --workspace --exclude tabula-bench --all-targets --all-features
echo "msrv: Rust $toolchain builds the workspace (all but the benchmark harness)" >&2
