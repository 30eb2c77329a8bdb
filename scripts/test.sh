#!/usr/bin/env bash
# The whole test suite, as CI runs it: formatting, lints (clippy with warnings as errors,
# which includes `clippy::undocumented_unsafe_blocks`), the documentation with its warnings as
# errors, then every test of the workspace (unit, integration, doc examples, compile-fail UI
# tests, the reliability suite, the power-cut tests), the check of each libmdbx patch against
# the pristine libmdbx, then the release checks: the publishing dry run (`scripts/package.sh`:
# every published crate packaged and built from its package alone) and the minimum supported
# Rust version (`scripts/msrv.sh`: installs that toolchain with rustup when missing). Stops at
# the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check" >&2
cargo fmt --all --check
echo "== cargo clippy (warnings are errors)" >&2
cargo clippy --workspace --all-targets --all-features --quiet -- -D warnings
# Core alone, no features: code behind `#[cfg(not(feature = ..))]` is linted too.
cargo clippy -p tabula-core --all-targets --quiet -- -D warnings
echo "== cargo doc (warnings are errors)" >&2
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --all-features --no-deps --quiet
echo "== cargo test --workspace --all-features" >&2
cargo test --workspace --all-features
echo "== libmdbx patch checks (crates/mdbx-sys/patches/check-all.sh)" >&2
crates/mdbx-sys/patches/check-all.sh
echo "== publishing dry run (scripts/package.sh)" >&2
scripts/package.sh
echo "== minimum supported Rust version (scripts/msrv.sh)" >&2
scripts/msrv.sh
