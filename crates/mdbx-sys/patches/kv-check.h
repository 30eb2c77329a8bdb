/* The steps the local-fs, lazy-dp-limit, meta-read-once, stdfd-poll and growth-written checks
 * share: open an environment, put and show a key of the main table, each failure printed as
 * "FAIL <step>: <error>" with exit code 1 (growth-written uses the last only: `check`).
 * Included by those checks' programs (`#include "kv-check.h"` after "mdbx.h"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(const char *what, int rc) {
  if (rc != MDBX_SUCCESS) {
    printf("FAIL %s: %s\n", what, mdbx_strerror(rc));
    fflush(stdout);
    exit(1);
  }
}

/* The environment in `dir`, its map at most `upper` bytes. */
static MDBX_env *open_env(const char *dir, intptr_t upper) {
  MDBX_env *env;
  check("env_create", mdbx_env_create(&env));
  check("set_geometry", mdbx_env_set_geometry(env, -1, -1, upper, -1, -1, -1));
  check("env_open", mdbx_env_open(env, dir, MDBX_ENV_DEFAULTS, 0644));
  return env;
}

static void put(MDBX_env *env, const char *key, const char *value) {
  MDBX_txn *txn;
  MDBX_dbi dbi;
  check("begin", mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn));
  check("dbi_open", mdbx_dbi_open(txn, NULL, MDBX_DB_DEFAULTS, &dbi));
  MDBX_val k = {.iov_base = (void *)key, .iov_len = strlen(key)};
  MDBX_val v = {.iov_base = (void *)value, .iov_len = strlen(value)};
  check("put", mdbx_put(txn, dbi, &k, &v, MDBX_UPSERT));
  check("commit", mdbx_txn_commit(txn));
}

static void show(MDBX_env *env, const char *key) {
  MDBX_txn *txn;
  MDBX_dbi dbi;
  check("begin", mdbx_txn_begin(env, NULL, MDBX_TXN_RDONLY, &txn));
  check("dbi_open", mdbx_dbi_open(txn, NULL, MDBX_DB_DEFAULTS, &dbi));
  MDBX_val k = {.iov_base = (void *)key, .iov_len = strlen(key)}, v;
  check("get", mdbx_get(txn, dbi, &k, &v));
  printf("%s = %.*s\n", key, (int)v.iov_len, (const char *)v.iov_base);
  mdbx_txn_abort(txn);
}
