/* Check of libmdbx-0.14.4-local-fs.patch: environments on a local file system open, write and
 * read back as before.
 *
 *   local-fs-check DIR
 *
 * Opens a new environment in DIR (the data file's and the lock file's maps each go through
 * osal_check_fs_local), commits a value, closes; opens the environment again, reads the value
 * and commits a second one; closes, and a third open reads both. Prints one line a step; exits
 * non-zero on any failure. The script runs it under strace on the pristine and the patched
 * libmdbx and counts the reads of the mount table. */
#include "mdbx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what, int rc) {
  printf("FAIL %s: %s\n", what, mdbx_strerror(rc));
  fflush(stdout);
  exit(1);
}

static void check(const char *what, int rc) {
  if (rc != MDBX_SUCCESS)
    fail(what, rc);
}

static MDBX_env *open_env(const char *dir) {
  MDBX_env *env;
  check("env_create", mdbx_env_create(&env));
  check("set_geometry", mdbx_env_set_geometry(env, -1, -1, 1 << 24, -1, -1, -1));
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

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  MDBX_env *env = open_env(argv[1]);
  put(env, "a", "first");
  mdbx_env_close(env);
  env = open_env(argv[1]);
  show(env, "a");
  put(env, "b", "second");
  mdbx_env_close(env);
  env = open_env(argv[1]);
  show(env, "a");
  show(env, "b");
  mdbx_env_close(env);
  printf("OK\n");
  return 0;
}
