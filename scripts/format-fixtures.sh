#!/usr/bin/env bash
# Writes the on-disk format fixtures of this release into tests/fixtures/format-v1/structural/
# (or into the directory given): five small databases (plain, dupsort, integer, composite,
# migrated) written by the writer in tests/format_fixtures.rs, each copied compacted.
#
# `cargo test --test format_fixtures` then opens every set under tests/fixtures/format-v1/ and
# checks every entry. Rewrite a set only when this release's format is meant to be pinned anew;
# never rewrite `spelled/` (written by commit 00350fa, the release before structural identity):
# a later release must keep opening those files, or ship a migration that does
# (docs/design.md, "Schema identity").
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-tests/fixtures/format-v1/structural}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
TABULA_WRITE_FORMAT_FIXTURES="$out" cargo test -p tabula-db --test format_fixtures
