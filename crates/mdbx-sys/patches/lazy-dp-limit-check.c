/* Check of libmdbx-0.14.4-lazy-dp-limit.patch: the default dirty-page limit is computed by the
 * first write transaction of an environment instead of three times by every open, and reads
 * and writes go on as before.
 *
 *   lazy-dp-limit-check DIR
 *
 * 1. creates an environment in DIR and commits a value, closes;
 * 2. opens it three times and reads the value in a read transaction (no write);
 * 3. opens it, asks for the dirty-page limit (mdbx_env_get_option), commits a second value, asks
 *    again (the same limit, within 1 %: the default follows the RAM available, which moves
 *    between the two reads), sets a limit of its own and reads it back, closes;
 * 4. opens it and reads both values.
 * Prints one line a step; exits non-zero on any failure. The script runs it under strace on the
 * pristine and the patched libmdbx and counts the reads of /proc/meminfo: both read it once
 * when the library starts (its own estimate of the RAM); then the patched libmdbx reads it in
 * step 1's write transaction, in step 3's first mdbx_env_get_option and in step 3's first
 * write transaction, and nowhere else (4 reads in all), the pristine one three times at every
 * open. */
#include "mdbx.h"

#include "kv-check.h"

static uint64_t option(MDBX_env *env, MDBX_option_t which) {
  uint64_t value;
  check("get_option", mdbx_env_get_option(env, which, &value));
  return value;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  MDBX_env *env = open_env(argv[1], 1 << 26);
  put(env, "a", "first");
  mdbx_env_close(env);
  for (int i = 0; i < 3; i++) {
    env = open_env(argv[1], 1 << 26);
    show(env, "a");
    mdbx_env_close(env);
  }

  env = open_env(argv[1], 1 << 26);
  const uint64_t before = option(env, MDBX_opt_txn_dp_limit);
  put(env, "b", "second");
  const uint64_t after = option(env, MDBX_opt_txn_dp_limit);
  const uint64_t apart = before > after ? before - after : after - before;
  printf("default dirty-page limit: %s\n", before >= 256 && apart * 100 <= before ? "the same before and after a write"
                                                                                    : "CHANGED");
  if (apart * 100 > before)
    printf("  before %llu, after %llu\n", (unsigned long long)before, (unsigned long long)after);
  check("set_option", mdbx_env_set_option(env, MDBX_opt_txn_dp_limit, 1000));
  printf("dirty-page limit set: %llu\n", (unsigned long long)option(env, MDBX_opt_txn_dp_limit));
  put(env, "c", "third");
  mdbx_env_close(env);

  env = open_env(argv[1], 1 << 26);
  show(env, "a");
  show(env, "b");
  show(env, "c");
  mdbx_env_close(env);
  printf("OK\n");
  return 0;
}
