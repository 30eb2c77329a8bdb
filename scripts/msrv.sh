#!/usr/bin/env bash
# Checks that the published crates build with the Rust version the manifest declares
# (`rust-version` in the root Cargo.toml): installs that toolchain with rustup when it is
# missing (minimal profile), then `cargo check`s the library crates and the CLI with every
# feature, in a target directory of its own. The tests and benchmarks are not part of the
# promise: they use the current toolchain.
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
echo "msrv: checking the published crates with Rust $toolchain" >&2
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/msrv" cargo "+$toolchain" check \
    -p tabula -p tabula-core -p tabula-derive -p tabula-migrate -p tabula-cli --all-features
echo "msrv: Rust $toolchain builds every published crate" >&2
