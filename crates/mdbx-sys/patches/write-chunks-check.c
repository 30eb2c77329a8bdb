/* Check for libmdbx-0.14.4-write-chunks.patch: the same database results, whatever the size of
 * the write calls.
 *
 * Builds a database the way an import and the commits after it do (one transaction of 80,000
 * appended entries, a transaction of 40,000 random inserts, then 2,000 one-entry commits, in
 * SYNC_DURABLE and again in SAFE_NOSYNC), closes it, reopens it, and prints: the entry count,
 * a checksum over every key and value read back, and the result of mdbx_env_chk. The output is
 * the same line for line on the pristine and on the patched libmdbx (the script compares it);
 * the script also records the write calls (strace) and checks their largest size.
 *
 *   cc -O1 -pthread -I LIBMDBX write-chunks-check.c LIBMDBX/mdbx.c -o check && ./check DIR
 */
#include "mdbx.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int failures;

#define CHECK(rc, what)                                                                            \
  do {                                                                                             \
    int rc_ = (rc);                                                                                \
    if (rc_ != MDBX_SUCCESS) {                                                                     \
      printf("FAIL: %s: %s (%d)\n", what, mdbx_strerror(rc_), rc_);                                \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void) {
  uint64_t x = rng_state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rng_state = x;
  return x * 0x2545F4914F6CDD1Dull;
}

static uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* 24-byte key, 150-byte value derived from it. */
static void value_of(const unsigned char key[24], unsigned char value[150]) {
  uint64_t seed;
  memcpy(&seed, key, 8);
  for (int i = 0; i < 150; i += 8) {
    uint64_t w = mix(seed + (uint64_t)i);
    memcpy(value + i, &w, (150 - i) < 8 ? (size_t)(150 - i) : 8);
  }
}

static void put(MDBX_txn *txn, MDBX_dbi dbi, const unsigned char key[24], MDBX_put_flags_t flags) {
  unsigned char value[150];
  value_of(key, value);
  MDBX_val k = {(void *)key, 24}, v = {value, 150};
  CHECK(mdbx_put(txn, dbi, &k, &v, flags), "mdbx_put");
}

static MDBX_env *open_env(const char *dir, MDBX_env_flags_t flags) {
  MDBX_env *env;
  CHECK(mdbx_env_create(&env), "mdbx_env_create");
  CHECK(mdbx_env_set_option(env, MDBX_opt_max_db, 2), "max_db");
  CHECK(mdbx_env_set_geometry(env, -1, -1, 1l << 30, 1 << 20, -1, 4096), "geometry");
  CHECK(mdbx_env_open(env, dir, flags | MDBX_NOSTICKYTHREADS, 0644), "mdbx_env_open");
  return env;
}

static void run(const char *dir, MDBX_env_flags_t flags, const char *mode) {
  if (mkdir(dir, 0755) != 0) {
    printf("FAIL: cannot create %s\n", dir);
    exit(1);
  }
  MDBX_env *env = open_env(dir, flags);
  MDBX_txn *txn;
  MDBX_dbi dbi;
  unsigned char key[24];

  /* An import: 80,000 entries appended in one transaction (contiguous dirty pages). */
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
  CHECK(mdbx_dbi_open(txn, "t", MDBX_CREATE, &dbi), "dbi_open");
  for (uint64_t i = 0; i < 80000; ++i) {
    uint64_t be = __builtin_bswap64(i);
    memset(key, 0, 24);
    memcpy(key, &be, 8);
    put(txn, dbi, key, MDBX_APPEND);
  }
  CHECK(mdbx_txn_commit(txn), "commit import");

  /* A big transaction of random inserts. */
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
  for (int i = 0; i < 40000; ++i) {
    for (int w = 0; w < 3; ++w) {
      uint64_t r = next_random();
      memcpy(key + 8 * w, &r, 8);
    }
    put(txn, dbi, key, MDBX_UPSERT);
  }
  CHECK(mdbx_txn_commit(txn), "commit random");

  /* Many one-entry commits. */
  for (int i = 0; i < 2000; ++i) {
    CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
    for (int w = 0; w < 3; ++w) {
      uint64_t r = next_random();
      memcpy(key + 8 * w, &r, 8);
    }
    put(txn, dbi, key, MDBX_UPSERT);
    CHECK(mdbx_txn_commit(txn), "commit small");
  }
  int sync = mdbx_env_sync_ex(env, true, false);
  CHECK(sync == MDBX_RESULT_TRUE ? MDBX_SUCCESS : sync, "sync");
  CHECK(mdbx_env_close(env), "close");

  /* Reopen and read everything back. */
  env = open_env(dir, flags);
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_RDONLY, &txn), "begin read");
  CHECK(mdbx_dbi_open(txn, "t", 0, &dbi), "dbi_open");
  MDBX_cursor *c;
  CHECK(mdbx_cursor_open(txn, dbi, &c), "cursor");
  MDBX_val k, v;
  uint64_t count = 0, sum = 0;
  for (int rc = mdbx_cursor_get(c, &k, &v, MDBX_FIRST); rc == MDBX_SUCCESS;
       rc = mdbx_cursor_get(c, &k, &v, MDBX_NEXT)) {
    unsigned char want[150];
    if (k.iov_len != 24 || v.iov_len != 150) {
      printf("FAIL: %s: entry %" PRIu64 " has a %zu-byte key and a %zu-byte value\n", mode, count,
             k.iov_len, v.iov_len);
      ++failures;
      break;
    }
    value_of(k.iov_base, want);
    if (memcmp(want, v.iov_base, 150) != 0) {
      printf("FAIL: %s: entry %" PRIu64 " holds the wrong value\n", mode, count);
      ++failures;
    }
    for (size_t i = 0; i < 24; i += 8) {
      uint64_t w;
      memcpy(&w, (const unsigned char *)k.iov_base + i, 8);
      sum = mix(sum ^ w);
    }
    ++count;
  }
  mdbx_cursor_close(c);
  mdbx_txn_abort(txn);

  MDBX_chk_callbacks_t cb;
  memset(&cb, 0, sizeof(cb));
  MDBX_chk_context_t ctx;
  memset(&ctx, 0, sizeof(ctx));
  int rc = mdbx_env_chk(env, &cb, &ctx, MDBX_CHK_DEFAULTS, MDBX_chk_error, 0);
  printf("%s: %" PRIu64 " entries, key checksum %016" PRIx64 ", mdbx_env_chk %s, %zu problems\n", mode,
         count, sum, rc == MDBX_SUCCESS ? "ok" : mdbx_strerror(rc), (size_t)ctx.result.total_problems);
  if (rc != MDBX_SUCCESS || ctx.result.total_problems)
    ++failures;
  CHECK(mdbx_env_close(env), "close");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR (an empty directory)\n", argv[0]);
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof(path), "%s/durable", argv[1]);
  run(path, MDBX_SYNC_DURABLE, "durable");
  snprintf(path, sizeof(path), "%s/safe-nosync", argv[1]);
  run(path, MDBX_SAFE_NOSYNC, "safe-nosync");
  printf("%s\n", failures ? "FAILED" : "OK");
  return failures ? 1 : 0;
}
