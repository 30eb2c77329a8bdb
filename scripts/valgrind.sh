#!/usr/bin/env bash
# Runs the workspace's tests under valgrind memcheck: no invalid read or write, no use of
# uninitialised memory, no definite leak. Not part of `cargo test` (it takes minutes);
# one command:
#
#     scripts/valgrind.sh                 # every test binary but the trybuild UI tests
#     scripts/valgrind.sh typed limits    # only these test targets
#
# Property tests run fewer cases (PROPTEST_CASES, default 16) and the crash tests fewer kills
# (TABULA_CRASH_KILLS, default 6): valgrind makes each step 20-50x slower. Child processes the
# tests spawn run natively (--trace-children=no). Logs: target/valgrind/<binary>.log.
# Exit status: 0 when every binary passed its tests with no memcheck error.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }

export PROPTEST_CASES="${PROPTEST_CASES:-16}"
export TABULA_CRASH_KILLS="${TABULA_CRASH_KILLS:-6}"
export RUST_BACKTRACE=0
# The proc-macro crate's unit tests link the compiler's shared libraries, as `cargo test` does.
sysroot_lib="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/lib"
export LD_LIBRARY_PATH="$sysroot_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

only=("$@")
out=target/valgrind
mkdir -p "$out"

# The static suppressions plus one pwritev entry per iovec index (see scripts/valgrind.supp).
supp="$out/suppressions.supp"
{
  cat scripts/valgrind.supp
  for i in $(seq 0 1023); do
    printf '{\n   libmdbx-writes-unused-page-bytes-pwritev-%d\n   Memcheck:Param\n   pwritev(vector[%d])\n   ...\n   fun:osal_pwritev\n}\n' "$i" "$i"
  done
} >"$supp"

# Build every test binary once and collect the executables cargo reports.
mapfile -t exes < <(
  cargo test --workspace --no-run --message-format=json 2>/dev/null \
    | grep '"test":true' \
    | grep -o '"executable":"[^"]*"' | sed 's/"executable":"\(.*\)"/\1/' | sort -u
)

failed=0
ran=0
for exe in "${exes[@]}"; do
  name=$(basename "$exe" | sed 's/-[0-9a-f]*$//')
  [[ "$name" == ui ]] && continue            # trybuild runs rustc, not our code
  if ((${#only[@]})) && [[ ! " ${only[*]} " == *" $name "* ]]; then continue; fi
  log="$out/$name.log"
  printf '%-28s' "$name"
  start=$SECONDS
  set +e
  valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
    --show-leak-kinds=definite --errors-for-leak-kinds=definite \
    --suppressions="$supp" --trace-children=no --num-callers=30 --log-file="$log.vg" \
    "$exe" --test-threads=2 >"$log" 2>&1
  rc=$?
  set -e
  errors=$(grep -o 'ERROR SUMMARY: [0-9]*' "$log.vg" | tail -1 | grep -o '[0-9]*$' || echo "?")
  definite=$(grep -o 'definitely lost: [0-9,]* bytes' "$log.vg" | tail -1 || true)
  tests=$(grep -o 'test result: [a-z]*\. [0-9]* passed; [0-9]* failed' "$log" | tail -1 || true)
  echo "rc=$rc memcheck-errors=$errors ${definite:-definitely lost: 0 bytes} | ${tests:-no result} | $((SECONDS - start))s"
  ran=$((ran + 1))
  [[ $rc -eq 0 ]] || failed=$((failed + 1))
done

echo "valgrind: $ran test binaries, $failed failed (logs in $out/)"
[[ $failed -eq 0 ]]
