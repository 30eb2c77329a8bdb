/* Check of libmdbx-0.14.4-lck-written.patch: the first process to open an environment writes
 * its lock file whole before mapping it.
 *
 *   lck-written-check kv DIR     a new environment in DIR gets a value; an exclusive open reads
 *                                it; then, while the parent holds the environment, a forked
 *                                child opens it too (joining the lock file the parent wrote),
 *                                reads and commits a second value, which the parent reads
 *   lck-written-check make DIR   creates an environment in DIR with a value and closes it
 *   lck-written-check open DIR   opens the environment in DIR (run on a full file system) and
 *                                prints the value, or the error of the open
 *
 * Prints one line a step; exits non-zero on a failure other than the open's error of `open`.
 * The script runs `kv` under strace on the libmdbx before the patch and the patched one, and
 * `make` / `open` on a tmpfs it fills in between. */
#include "mdbx.h"

#include "kv-check.h"


/* The forked child's step: a shared open (the parent holds the environment), read and write. */
static void shared_step(void *dir) {
  MDBX_env *shared = open_env(dir, 1 << 24);
  report("shared (child)", shared, "k");
  put(shared, "k", "two");
  mdbx_env_close(shared);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s kv|make|open DIR\n", argv[0]);
    return 2;
  }
  const char *mode = argv[1], *dir = argv[2];
  if (strcmp(mode, "make") == 0) {
    MDBX_env *env = open_env(dir, 1 << 22);
    put(env, "k", "made");
    mdbx_env_close(env);
    printf("made\n");
    return 0;
  }
  if (strcmp(mode, "open") == 0) {
    MDBX_env *env;
    check("env_create", mdbx_env_create(&env));
    check("set_geometry", mdbx_env_set_geometry(env, -1, -1, 1 << 22, -1, -1, -1));
    const int rc = mdbx_env_open(env, dir, MDBX_ENV_DEFAULTS, 0644);
    if (rc != MDBX_SUCCESS) {
      printf("open: %s\n", mdbx_strerror(rc));
      mdbx_env_close(env);
      return 0;
    }
    report("opened", env, "k");
    mdbx_env_close(env);
    return 0;
  }
  if (strcmp(mode, "kv") != 0) {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  MDBX_env *env = open_env(dir, 1 << 24);
  put(env, "k", "one");
  report("new", env, "k");
  mdbx_env_close(env);
  env = open_env(dir, 1 << 24);
  report("exclusive", env, "k");
  in_child(shared_step, (void *)dir);
  report("after the child", env, "k");
  mdbx_env_close(env);
  printf("OK\n");
  return 0;
}
