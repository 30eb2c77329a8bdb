/* Check of libmdbx-0.14.4-meta-read-once.patch: an open that seizes the lock exclusively reads
 * each meta page once, and still finds the same meta pages, the same transaction and the same
 * data as the pristine libmdbx; an open that shares the environment reads as before.
 *
 *   meta-read-once-check DIR
 *
 * 1. creates DIR/a (the default page size) with three commits, closes it;
 * 2. opens it (exclusively: no other process has it) read-write, then read-only, and prints
 *    the recent transaction and the value each time;
 * 3. opens it, and a forked child opens it too (shared: the parent holds it), prints the same,
 *    commits a new value and exits; the parent reads the child's value and closes;
 * 4. creates DIR/b with 16 KiB pages and three commits, damages its meta page 0 (the first
 *    bytes of the file zeroed: no magic), and opens it exclusively: the page size is not known
 *    from meta 0, so the first pass reads metas 1 and 2 at the system page size's offsets and
 *    the second pass at the environment's own (not read before), and the open takes the
 *    better of metas 1 and 2;
 * Prints one line a step (the child's process id on stderr, for the script); exits non-zero
 * on any failure. The script runs it under strace on the pristine and the patched libmdbx and
 * counts the 256-byte meta reads of the parent (every open exclusive) and of the child
 * (shared). */
#include "mdbx.h"

#include "kv-check.h"

#include <fcntl.h>

static MDBX_env *open_with(const char *dir, intptr_t pagesize, MDBX_env_flags_t flags) {
  MDBX_env *env;
  check("env_create", mdbx_env_create(&env));
  check("set_geometry", mdbx_env_set_geometry(env, -1, -1, 1 << 26, -1, -1, pagesize));
  check("env_open", mdbx_env_open(env, dir, flags, 0644));
  return env;
}

/* The forked child's step: a shared open (the parent holds the environment), read and write. */
static void shared_step(void *dir) {
  fprintf(stderr, "child %d\n", (int)getpid());
  MDBX_env *shared = open_with(dir, -1, MDBX_ENV_DEFAULTS);
  report("shared", shared, "k");
  put(shared, "k", "four");
  mdbx_env_close(shared);
}

static void fill(const char *dir, intptr_t pagesize) {
  MDBX_env *env = open_with(dir, pagesize, MDBX_ENV_DEFAULTS);
  put(env, "k", "one");
  put(env, "k", "two");
  put(env, "k", "three");
  mdbx_env_close(env);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  char a[4096], b[4096];
  snprintf(a, sizeof(a), "%s/a", argv[1]);
  snprintf(b, sizeof(b), "%s/b", argv[1]);

  fill(a, -1);
  MDBX_env *env = open_with(a, -1, MDBX_ENV_DEFAULTS);
  report("exclusive", env, "k");
  mdbx_env_close(env);
  env = open_with(a, -1, MDBX_RDONLY);
  report("exclusive read-only", env, "k");
  mdbx_env_close(env);

  env = open_with(a, -1, MDBX_ENV_DEFAULTS);
  in_child(shared_step, a);
  report("after the child", env, "k");
  mdbx_env_close(env);

  fill(b, 16384);
  char dat[4200];
  snprintf(dat, sizeof(dat), "%s/mdbx.dat", b);
  const int fd = open(dat, O_WRONLY);
  static const char zeros[64];
  if (fd < 0 || pwrite(fd, zeros, sizeof(zeros), 0) != (ssize_t)sizeof(zeros) || close(fd) != 0)
    check("damage meta 0", errno);
  env = open_with(b, 16384, MDBX_ENV_DEFAULTS);
  report("16 KiB pages, meta 0 damaged", env, "k");
  mdbx_env_close(env);
  printf("OK\n");
  return 0;
}
