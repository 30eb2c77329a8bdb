/* Check for libmdbx-0.14.4-loose-batch.patch: transactions that free many of their own dirty
 * pages give the same database, and libmdbx's own audit finds every page accounted for.
 *
 * Built with MDBX_CHECKING=3 and run with MDBX_DBG_ASSERT | MDBX_DBG_AUDIT: every commit audits
 * the page accounting (used + GC + free pages = the file, `audit_ex`), and the dirty-page list
 * is checked on every page touch (`txn_dpl_check`). The rounds, each printing the entry count
 * and a checksum of every key and value:
 *   1. 60,000 random inserts in one transaction;
 *   2. one transaction deleting 70 % of the entries at random (pages merge: freed dirty pages)
 *      while inserting 10,000 new ones (freed pages are reused);
 *   3. a transaction with nested ones: one deletes and aborts, one deletes and commits;
 *   4. one transaction deleting all but every 50th entry, then inserting 5,000;
 *   5. the same rounds' shape once more with MDBX_opt_loose_limit 1 (the smallest loose list).
 * The output is compared line for line between the pristine and the patched libmdbx.
 *
 *   cc -O1 -pthread -DMDBX_CHECKING=3 -I LIBMDBX loose-batch-check.c LIBMDBX/mdbx.c -o check
 *   ./check DIR
 */
#include "mdbx.h"
#include "env-chk.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CHECK(rc, what)                                                                            \
  do {                                                                                             \
    int rc_ = (rc);                                                                                \
    if (rc_ != MDBX_SUCCESS) {                                                                     \
      printf("FAIL: %s: %s (%d)\n", what, mdbx_strerror(rc_), rc_);                                \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static uint64_t rng_state;
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

static void value_of(const unsigned char key[24], unsigned char value[150]) {
  uint64_t seed;
  memcpy(&seed, key + 8, 8);
  for (int i = 0; i < 150; i += 8) {
    uint64_t w = mix(seed + (uint64_t)i);
    memcpy(value + i, &w, (150 - i) < 8 ? (size_t)(150 - i) : 8);
  }
}

static void random_key(unsigned char key[24]) {
  for (int w = 0; w < 3; ++w) {
    uint64_t r = next_random();
    memcpy(key + 8 * w, &r, 8);
  }
}

static void put(MDBX_txn *txn, MDBX_dbi dbi, const unsigned char key[24]) {
  unsigned char value[150];
  value_of(key, value);
  MDBX_val k = {(void *)key, 24}, v = {value, 150};
  CHECK(mdbx_put(txn, dbi, &k, &v, MDBX_UPSERT), "mdbx_put");
}

/* Deletes the entries for which keep() is false, walking a cursor. */
static void delete_where(MDBX_txn *txn, MDBX_dbi dbi, int keep_one_in, uint64_t salt) {
  MDBX_cursor *c;
  CHECK(mdbx_cursor_open(txn, dbi, &c), "cursor");
  MDBX_val k, v;
  int rc = mdbx_cursor_get(c, &k, &v, MDBX_FIRST);
  while (rc == MDBX_SUCCESS) {
    uint64_t w;
    memcpy(&w, k.iov_base, 8);
    if (mix(w ^ salt) % (uint64_t)keep_one_in != 0) {
      CHECK(mdbx_cursor_del(c, MDBX_CURRENT), "cursor_del");
      rc = mdbx_cursor_get(c, &k, &v, MDBX_GET_CURRENT);
      if (rc == MDBX_NOTFOUND || rc == MDBX_ENODATA)
        rc = mdbx_cursor_get(c, &k, &v, MDBX_NEXT);
      /* GET_CURRENT after a delete lands on the next entry already */
      continue;
    }
    rc = mdbx_cursor_get(c, &k, &v, MDBX_NEXT);
  }
  if (rc != MDBX_NOTFOUND)
    CHECK(rc, "walk");
  mdbx_cursor_close(c);
}

static void report(MDBX_env *env, MDBX_dbi dbi, const char *what) {
  MDBX_txn *txn;
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_RDONLY, &txn), "begin read");
  MDBX_cursor *c;
  CHECK(mdbx_cursor_open(txn, dbi, &c), "cursor");
  MDBX_val k, v;
  uint64_t count = 0, sum = 0;
  for (int rc = mdbx_cursor_get(c, &k, &v, MDBX_FIRST); rc == MDBX_SUCCESS;
       rc = mdbx_cursor_get(c, &k, &v, MDBX_NEXT)) {
    unsigned char want[150];
    value_of(k.iov_base, want);
    if (k.iov_len != 24 || v.iov_len != 150 || memcmp(want, v.iov_base, 150) != 0) {
      printf("FAIL: %s: entry %" PRIu64 " is wrong\n", what, count);
      exit(1);
    }
    uint64_t w;
    memcpy(&w, k.iov_base, 8);
    sum = mix(sum ^ w);
    ++count;
  }
  mdbx_cursor_close(c);
  MDBX_stat st;
  CHECK(mdbx_dbi_stat(txn, dbi, &st, sizeof(st)), "stat");
  mdbx_txn_abort(txn);
  printf("%s: %" PRIu64 " entries, checksum %016" PRIx64 ", %" PRIu64 " leaf pages, depth %u\n", what,
         count, sum, (uint64_t)st.ms_leaf_pages, st.ms_depth);
}

static void run(const char *dir, unsigned loose_limit) {
  if (mkdir(dir, 0755) != 0) {
    printf("FAIL: cannot create %s\n", dir);
    exit(1);
  }
  MDBX_env *env;
  CHECK(mdbx_env_create(&env), "mdbx_env_create");
  CHECK(mdbx_env_set_option(env, MDBX_opt_max_db, 2), "max_db");
  CHECK(mdbx_env_set_geometry(env, -1, -1, 1l << 30, 1 << 20, -1, 4096), "geometry");
  if (loose_limit)
    CHECK(mdbx_env_set_option(env, MDBX_opt_loose_limit, loose_limit), "loose_limit");
  CHECK(mdbx_env_open(env, dir, MDBX_NOSTICKYTHREADS, 0644), "mdbx_env_open");
  CHECK(mdbx_env_set_option(env, MDBX_opt_prefer_waf_insteadof_balance, 0), "balance");
  rng_state = 0x9E3779B97F4A7C15ull;
  MDBX_txn *txn;
  MDBX_dbi dbi;
  unsigned char key[24];
  char what[64];

  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
  CHECK(mdbx_dbi_open(txn, "t", MDBX_CREATE, &dbi), "dbi_open");
  for (int i = 0; i < 60000; ++i) {
    random_key(key);
    put(txn, dbi, key);
  }
  CHECK(mdbx_txn_commit(txn), "commit 1");
  snprintf(what, sizeof(what), "loose %u round 1", loose_limit);
  report(env, dbi, what);

  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
  delete_where(txn, dbi, 3, 1); /* keeps about a third */
  for (int i = 0; i < 10000; ++i) {
    random_key(key);
    put(txn, dbi, key);
  }
  CHECK(mdbx_txn_commit(txn), "commit 2");
  snprintf(what, sizeof(what), "loose %u round 2", loose_limit);
  report(env, dbi, what);

  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
  delete_where(txn, dbi, 2, 2);
  MDBX_txn *nested;
  CHECK(mdbx_txn_begin(env, txn, MDBX_TXN_READWRITE, &nested), "begin nested");
  delete_where(nested, dbi, 2, 3);
  CHECK(mdbx_txn_abort(nested), "abort nested");
  CHECK(mdbx_txn_begin(env, txn, MDBX_TXN_READWRITE, &nested), "begin nested");
  delete_where(nested, dbi, 2, 4);
  for (int i = 0; i < 3000; ++i) {
    random_key(key);
    put(nested, dbi, key);
  }
  CHECK(mdbx_txn_commit(nested), "commit nested");
  CHECK(mdbx_txn_commit(txn), "commit 3");
  snprintf(what, sizeof(what), "loose %u round 3", loose_limit);
  report(env, dbi, what);

  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
  delete_where(txn, dbi, 50, 5);
  for (int i = 0; i < 5000; ++i) {
    random_key(key);
    put(txn, dbi, key);
  }
  CHECK(mdbx_txn_commit(txn), "commit 4");
  snprintf(what, sizeof(what), "loose %u round 4", loose_limit);
  report(env, dbi, what);

  snprintf(what, sizeof(what), "loose %u", loose_limit);
  env_chk_or_exit(env, what);
  CHECK(mdbx_env_close(env), "close");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR (an empty directory)\n", argv[0]);
    return 2;
  }
  mdbx_setup_debug(MDBX_LOG_DONTCHANGE, MDBX_DBG_ASSERT | MDBX_DBG_AUDIT, MDBX_LOGGER_DONTCHANGE);
  char path[4096];
  snprintf(path, sizeof(path), "%s/default", argv[1]);
  run(path, 0);
  snprintf(path, sizeof(path), "%s/loose1", argv[1]);
  run(path, 1);
  printf("OK\n");
  return 0;
}
