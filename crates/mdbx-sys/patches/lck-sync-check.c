/* Check of libmdbx-0.14.4-lck-sync.patch: the lock region initialised without a flush is seen
 * by every process that shares the environment.
 *
 *   lck-sync-check DIR
 *
 * A parent opens a new environment in DIR (it seizes the lock file and initialises the lock
 * region) and commits a value; a forked child opens the same environment while the parent
 * holds it (so it takes the region as the parent left it: magic, format, reader table, the
 * writer's lock), reads the parent's value, commits its own and exits; the parent reads the
 * child's value in a new read transaction, closes, and a fresh open (which seizes and
 * initialises the region again) reads it once more. Prints one line a step; exits non-zero
 * on any failure. The script runs it under strace on the pristine and the patched libmdbx. */
#include "mdbx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void fail(const char *what, int rc) {
  printf("FAIL %s: %s\n", what, mdbx_strerror(rc));
  fflush(stdout);
  exit(1);
}

static MDBX_env *open_env(const char *dir) {
  MDBX_env *env;
  int rc = mdbx_env_create(&env);
  if (rc != MDBX_SUCCESS)
    fail("env_create", rc);
  rc = mdbx_env_set_geometry(env, -1, -1, 1 << 24, -1, -1, -1);
  if (rc != MDBX_SUCCESS)
    fail("set_geometry", rc);
  rc = mdbx_env_open(env, dir, MDBX_ENV_DEFAULTS, 0644);
  if (rc != MDBX_SUCCESS)
    fail("env_open", rc);
  return env;
}

/* Begins a transaction with `flags` and opens the main table in it. */
static MDBX_dbi begin(MDBX_env *env, MDBX_txn_flags_t flags, MDBX_txn **txn) {
  MDBX_dbi dbi;
  int rc = mdbx_txn_begin(env, NULL, flags, txn);
  if (rc != MDBX_SUCCESS)
    fail("begin", rc);
  rc = mdbx_dbi_open(*txn, NULL, MDBX_DB_DEFAULTS, &dbi);
  if (rc != MDBX_SUCCESS)
    fail("dbi_open", rc);
  return dbi;
}

static void put(MDBX_env *env, const char *value) {
  MDBX_txn *txn;
  MDBX_dbi dbi = begin(env, MDBX_TXN_READWRITE, &txn);
  int rc;
  MDBX_val k = {.iov_base = "k", .iov_len = 1};
  MDBX_val v = {.iov_base = (void *)value, .iov_len = strlen(value)};
  rc = mdbx_put(txn, dbi, &k, &v, MDBX_UPSERT);
  if (rc != MDBX_SUCCESS)
    fail("put", rc);
  rc = mdbx_txn_commit(txn);
  if (rc != MDBX_SUCCESS)
    fail("commit", rc);
}

static void expect(MDBX_env *env, const char *who, const char *value) {
  MDBX_txn *txn;
  MDBX_dbi dbi = begin(env, MDBX_TXN_RDONLY, &txn);
  MDBX_val k = {.iov_base = "k", .iov_len = 1}, v;
  int rc = mdbx_get(txn, dbi, &k, &v);
  if (rc != MDBX_SUCCESS)
    fail("get", rc);
  if (v.iov_len != strlen(value) || memcmp(v.iov_base, value, v.iov_len) != 0) {
    printf("FAIL %s read %.*s, expected %s\n", who, (int)v.iov_len, (const char *)v.iov_base, value);
    fflush(stdout);
    exit(1);
  }
  mdbx_txn_abort(txn);
  printf("%s read %s\n", who, value);
  fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  MDBX_env *env = open_env(argv[1]);
  put(env, "parent");
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) {
    perror("fork");
    return 1;
  }
  if (child == 0) {
    MDBX_env *shared = open_env(argv[1]);
    expect(shared, "child", "parent");
    put(shared, "child");
    mdbx_env_close(shared);
    _exit(0);
  }
  int status;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    printf("FAIL the child ended with status %d\n", status);
    return 1;
  }
  expect(env, "parent", "child");
  mdbx_env_close(env);
  env = open_env(argv[1]);
  expect(env, "reopened", "child");
  mdbx_env_close(env);
  printf("OK\n");
  return 0;
}
