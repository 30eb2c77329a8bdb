#!/usr/bin/env bash
# The publishing dry run: packages every crate meant for users (`tabula-db`, `tabula-core`,
# `tabula-derive`, `tabula-migrate`, `tabula-cli`, and `tabula-mdbx-sys`, the libmdbx they
# build) the way `cargo publish` would, then builds each from its package alone (the
# workspace's crates resolved from the packages, not the tree), and stops before uploading.
# Benchmarks, the power-cut file system and test fixtures are `publish = false` and left out.
set -euo pipefail
cd "$(dirname "$0")/.."

published=(tabula-db tabula-core tabula-derive tabula-migrate tabula-cli tabula-mdbx-sys)

# Every published name must be free on crates.io or already ours: a user who pastes an install
# line must get this project, not someone else's crate of the same name (`tabula` itself is an
# unrelated PDF crate). `cargo info` asks the registry; run outside the workspace so it does not
# answer with our own local package. A crate found there is ours when its description is ours.
check_names() {
    local scratch
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' RETURN
    for name in "${published[@]}"; do
        local manifest=Cargo.toml
        [ "$name" = tabula-db ] || manifest="crates/${name#tabula-}/Cargo.toml"
        local ours
        ours=$(sed -n 's/^description = "\(.*\)"/\1/p' "$manifest" | head -1)
        local out status=0
        out=$(cd "$scratch" && timeout 60 cargo info "$name" 2>&1) || status=$?
        if [ $status -ne 0 ]; then
            if grep -q "could not find \`$name\`" <<<"$out"; then
                echo "package: the name $name is free on crates.io" >&2
                continue
            fi
            echo "package: SKIPPING the name check: crates.io could not be asked about $name" >&2
            echo "         (cargo info said: $(head -1 <<<"$out")); publish only after it passes" >&2
            return 0
        fi
        # `cargo info` prints `NAME #tags`, then the crate's description.
        local theirs
        theirs=$(grep -A1 -E "^$name( |$)" <<<"$out" | sed -n 2p)
        if [ "$theirs" != "$ours" ]; then
            echo "package: the name $name is taken on crates.io by another crate: \"$theirs\"" >&2
            echo "         ($(grep -E '^repository:' <<<"$out" || echo 'no repository given')); rename the package" >&2
            exit 1
        fi
        echo "package: $name on crates.io is ours" >&2
    done
}
check_names

# Cargo verifies each package against the packages before it through a temporary registry, and
# unpacks those into $CARGO_HOME/registry/src; an earlier dry run of the same version leaves its
# copy there and cargo reuses it as is, so the check would build the old sources. Remove our own
# crates' unpacked copies first (only ours; they are re-made from the packages below).
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
for crate in "${published[@]}"; do
    rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"$crate-$version"
done
# The verification builds share the workspace's target directory, where cargo fingerprints a
# registry crate by name and version, not by content: a build of an earlier package of the same
# version would be reused (the facade package then failed to find an item that `tabula-core`
# had gained since). Clean the crates that are verified as dependencies of others.
cargo clean -p tabula-mdbx-sys -p tabula-core -p tabula-derive -p tabula-migrate -p tabula-db
cargo publish --dry-run --workspace \
    --exclude tabula-bench --exclude tabula-faultfs --exclude tabula-test-upstream "$@"
