#!/usr/bin/env bash
# Public-API change control: compares the published crates' API with the last release (the git
# tag in $1, default the newest `v*` tag) using cargo-semver-checks, which it installs when
# missing (`cargo install cargo-semver-checks --locked`, several minutes the first time).
#
#   scripts/semver.sh            passes when the version in Cargo.toml is a large enough bump
#                                for what changed (0.1 -> 0.2 allows breaking changes)
#   scripts/semver.sh --list     lists every breaking change as if this were a minor release,
#                                to check CHANGELOG.md's "Breaking" section against
#
# `tabula-derive` (a proc-macro crate) has no API cargo-semver-checks can read; the derive's
# output is covered by the UI and format-fixture tests instead.
set -euo pipefail
cd "$(dirname "$0")/.."

list=false
baseline=""
for arg in "$@"; do
    case "$arg" in
        --list) list=true ;;
        *) baseline="$arg" ;;
    esac
done
if [ -z "$baseline" ]; then
    baseline=$(git tag --list 'v*' --sort=-v:refname | head -1)
    [ -n "$baseline" ] || { echo "semver: no v* tag to compare with; pass a git revision" >&2; exit 1; }
fi

if ! cargo semver-checks --version >/dev/null 2>&1; then
    echo "semver: installing cargo-semver-checks" >&2
    cargo install cargo-semver-checks --locked >&2
fi

args=(--workspace --exclude tabula-bench --exclude tabula-faultfs --exclude tabula-test-upstream
    --exclude tabula-derive --exclude tabula-cli --all-features --baseline-rev "$baseline")
if $list; then
    echo "semver: breaking changes since $baseline (as if this were a minor release)" >&2
    # A failing status is the expected "breaking changes found" here.
    cargo semver-checks "${args[@]}" --release-type minor || true
else
    echo "semver: checking the version bump against $baseline" >&2
    cargo semver-checks "${args[@]}"
fi
