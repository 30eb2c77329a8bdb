#!/usr/bin/env bash
# The publishing dry run: packages every crate meant for users (`tabula`, `tabula-core`,
# `tabula-derive`, `tabula-migrate`, `tabula-cli`) the way `cargo publish` would, then builds each
# from its package alone (the workspace's crates resolved from the packages, not the tree),
# and stops before uploading. Benchmarks, the power-cut file system and test fixtures are
# `publish = false` and left out.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo publish --dry-run --workspace \
    --exclude tabula-bench --exclude tabula-faultfs --exclude tabula-test-upstream "$@"
