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

#include "kv-check.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  MDBX_env *env = open_env(argv[1], 1 << 24);
  put(env, "a", "first");
  mdbx_env_close(env);
  env = open_env(argv[1], 1 << 24);
  show(env, "a");
  put(env, "b", "second");
  mdbx_env_close(env);
  env = open_env(argv[1], 1 << 24);
  show(env, "a");
  show(env, "b");
  mdbx_env_close(env);
  printf("OK\n");
  return 0;
}
