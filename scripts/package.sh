#!/usr/bin/env bash
# The publishing dry run: packages every crate meant for users (`tabula`, `tabula-core`,
# `tabula-derive`, `tabula-migrate`, `tabula-cli`) the way `cargo publish` would, then builds each
# from its package alone (the workspace's crates resolved from the packages, not the tree),
# and stops before uploading. Benchmarks, the power-cut file system and test fixtures are
# `publish = false` and left out.
set -euo pipefail
cd "$(dirname "$0")/.."

# Cargo verifies each package against the packages before it through a temporary registry, and
# unpacks those into $CARGO_HOME/registry/src; an earlier dry run of the same version leaves its
# copy there and cargo reuses it as is, so the check would build the old sources. Remove our own
# crates' unpacked copies first (only ours; they are re-made from the packages below).
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
for crate in tabula tabula-core tabula-derive tabula-migrate tabula-cli; do
    rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"$crate-$version"
done
# The verification builds share the workspace's target directory, where cargo fingerprints a
# registry crate by name and version, not by content: a build of an earlier package of the same
# version would be reused (the `tabula` package then failed to find an item that `tabula-core`
# had gained since). Clean the crates that are verified as dependencies of others.
cargo clean -p tabula-core -p tabula-derive -p tabula-migrate -p tabula
cargo publish --dry-run --workspace \
    --exclude tabula-bench --exclude tabula-faultfs --exclude tabula-test-upstream "$@"
