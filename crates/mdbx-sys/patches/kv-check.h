/* The steps the local-fs, lazy-dp-limit, meta-read-once, stdfd-poll, growth-written,
 * open-probes and lck-written checks share: open an environment, put and show a key of the main
 * table, report an environment's recent transaction with a key's value, run a step in a forked
 * child, each failure printed as "FAIL <step>: <error>" with exit code 1 (growth-written uses
 * the first only: `check`). Included by those checks' programs (`#include "kv-check.h"` after
 * "mdbx.h"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* The environment's recent transaction and the value of `key`, one line. */
static inline void report(const char *who, MDBX_env *env, const char *key) {
  MDBX_envinfo info;
  check("env_info", mdbx_env_info_ex(env, NULL, &info, sizeof(info)));
  printf("%s: txnid %llu, ", who, (unsigned long long)info.mi_recent_txnid);
  fflush(stdout);
  show(env, key);
  fflush(stdout);
}

/* Runs `step(arg)` in a forked child (which may open the environment the parent holds: a shared
 * open) and waits for it; a child that fails fails the check. */
static inline void in_child(void (*step)(void *), void *arg) {
  fflush(stdout);
  const pid_t child = fork();
  if (child < 0)
    check("fork", errno);
  if (child == 0) {
    step(arg);
    fflush(stdout);
    _exit(0);
  }
  int status;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    printf("FAIL the child\n");
    exit(1);
  }
}
