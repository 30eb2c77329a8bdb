/* Reproduces an assertion failure of the pristine libmdbx 0.14.4 (not a check; nothing runs it):
 * with MDBX_opt_spill_parent4child_denominator set, a child transaction begun by a parent that
 * had not spilled before gets no MDBX_TXN_SPILLS flag, because txn_nested_create copies the
 * parent's flags before it spills the parent for the child; the child's first touch of a page
 * its parent spilled then fails page_unspill's `tASSERT0(txn, (scan->flags & MDBX_TXN_SPILLS)
 * != 0)` on the loop's first step (the child). Builds without assertions go on to the parent
 * and find the page. Tabula does not set the option.
 *
 *   cc -O1 -pthread -DMDBX_FORCE_ASSERTIONS=1 -I LIBMDBX nested-spill-flag-repro.c LIBMDBX/mdbx.c -o repro
 *   mkdir DIR && ./repro DIR      (prints "no assertion" and exits 0 when the engine is fixed)
 */
#include "mdbx.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    int rc_ = (x);                                                                                 \
    if (rc_ != MDBX_SUCCESS) {                                                                     \
      printf("FAIL %s: %s\n", #x, mdbx_strerror(rc_));                                             \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static void put(MDBX_txn *txn, MDBX_dbi dbi, uint64_t i, uint64_t version) {
  uint64_t key = __builtin_bswap64(i * 0x9E3779B97F4A7C15ull), value[16];
  for (int w = 0; w < 16; ++w)
    value[w] = i ^ version ^ (uint64_t)w;
  MDBX_val k = {&key, sizeof(key)}, v = {value, sizeof(value)};
  CHECK(mdbx_put(txn, dbi, &k, &v, MDBX_UPSERT));
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  MDBX_env *env;
  CHECK(mdbx_env_create(&env));
  CHECK(mdbx_env_set_geometry(env, -1, -1, 1l << 30, 1 << 20, -1, 4096));
  CHECK(mdbx_env_set_option(env, MDBX_opt_spill_parent4child_denominator, 2));
  CHECK(mdbx_env_open(env, argv[1], MDBX_NOSTICKYTHREADS, 0644));
  MDBX_txn *txn, *child;
  MDBX_dbi dbi;
  /* 150,000 rows, committed */
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn));
  CHECK(mdbx_dbi_open(txn, NULL, MDBX_DB_DEFAULTS, &dbi));
  for (uint64_t i = 0; i < 150000; ++i)
    put(txn, dbi, i, 1);
  CHECK(mdbx_txn_commit(txn));
  CHECK(mdbx_env_set_option(env, MDBX_opt_txn_dp_limit, 8192));
  /* a parent that dirties about 5,000 pages (every 8th row) of its 8,192-page limit: it does
   * not spill on its own */
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn));
  for (uint64_t i = 0; i < 150000; i += 8)
    put(txn, dbi, i, 2);
  /* the child's begin spills half of them (the parent's first spill); the child changes the
   * same rows, so it touches pages its parent spilled */
  CHECK(mdbx_txn_begin(env, txn, MDBX_TXN_READWRITE, &child));
  for (uint64_t i = 0; i < 150000; i += 8)
    put(child, dbi, i, 3);
  CHECK(mdbx_txn_commit(child));
  CHECK(mdbx_txn_commit(txn));
  CHECK(mdbx_env_close(env));
  printf("no assertion\n");
  return 0;
}
