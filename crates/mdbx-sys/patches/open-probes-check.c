/* Check of libmdbx-0.14.4-open-probes.patch: environments open, write and read back as before,
 * and every file libmdbx opens is parked at the same offset.
 *
 *   open-probes-check DIR
 *
 * 1. creates an environment in DIR/a and commits a value;
 * 2. opens it again (exclusive) and then read-only, each time printing the recent transaction,
 *    the value and where each descriptor of mdbx.dat and mdbx.lck stands (its "parking lot":
 *    libmdbx seeks every file it opens far past the data, as far as the file system allows,
 *    found by a search the patch remembers);
 * 3. opens it, and a forked child opens it too (shared: the parent holds it, so the child joins
 *    the lock file instead of initialising it), prints the same, commits a new value and exits;
 *    the parent reads the child's value and closes.
 * Prints one line a step; exits non-zero on any failure. The script runs it under strace on the
 * pristine and the patched libmdbx, compares the lines and counts the system calls the patch
 * leaves out. */
#include "mdbx.h"

#include "kv-check.h"

#include <dirent.h>
#include <sys/stat.h>

static MDBX_env *open_with(const char *dir, MDBX_env_flags_t flags) {
  MDBX_env *env;
  check("env_create", mdbx_env_create(&env));
  check("set_geometry", mdbx_env_set_geometry(env, -1, -1, 1 << 26, -1, -1, -1));
  check("env_open", mdbx_env_open(env, dir, flags, 0644));
  return env;
}

/* The file position of every descriptor of this process open on mdbx.dat or mdbx.lck, sorted
 * by name and position (descriptor numbers are left out: they are not what is compared). */
static void positions(void) {
  char lines[16][128];
  int n = 0;
  DIR *fds = opendir("/proc/self/fd");
  if (!fds)
    check("opendir /proc/self/fd", errno);
  struct dirent *e;
  while ((e = readdir(fds)) != NULL && n < 16) {
    char link[256], target[4096], info[256];
    snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
    const ssize_t len = readlink(link, target, sizeof(target) - 1);
    if (len <= 0)
      continue;
    target[len] = 0;
    const char *name = strrchr(target, '/');
    if (!name || (strcmp(name, "/mdbx.dat") != 0 && strcmp(name, "/mdbx.lck") != 0))
      continue;
    snprintf(info, sizeof(info), "/proc/self/fdinfo/%s", e->d_name);
    FILE *f = fopen(info, "r");
    unsigned long long pos = 0;
    if (!f || fscanf(f, "pos: %llu", &pos) != 1)
      check("read fdinfo", EIO);
    fclose(f);
    snprintf(lines[n++], sizeof(lines[0]), "  %s at %llu", name + 1, pos);
  }
  closedir(fds);
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (strcmp(lines[j], lines[i]) < 0) {
        char t[128];
        memcpy(t, lines[i], sizeof(t));
        memcpy(lines[i], lines[j], sizeof(t));
        memcpy(lines[j], t, sizeof(t));
      }
  for (int i = 0; i < n; i++)
    printf("%s\n", lines[i]);
}

/* report(), then where the files stand. */
static void report_parked(const char *who, MDBX_env *env, const char *key) {
  report(who, env, key);
  positions();
  fflush(stdout);
}

/* The forked child's step: a shared open (the parent holds the environment), read and write. */
static void shared_step(void *dir) {
  MDBX_env *shared = open_with(dir, MDBX_ENV_DEFAULTS);
  report_parked("shared (child)", shared, "k");
  put(shared, "k", "two");
  mdbx_env_close(shared);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  char a[4096];
  snprintf(a, sizeof(a), "%s/a", argv[1]);
  if (mkdir(a, 0755) != 0)
    check("mkdir", errno);

  MDBX_env *env = open_with(a, MDBX_ENV_DEFAULTS);
  put(env, "k", "one");
  report_parked("new", env, "k");
  mdbx_env_close(env);
  env = open_with(a, MDBX_ENV_DEFAULTS);
  report_parked("exclusive", env, "k");
  mdbx_env_close(env);
  env = open_with(a, MDBX_RDONLY);
  report_parked("exclusive read-only", env, "k");
  mdbx_env_close(env);

  env = open_with(a, MDBX_ENV_DEFAULTS);
  report_parked("before the child", env, "k");
  in_child(shared_step, a);
  report_parked("after the child", env, "k");
  mdbx_env_close(env);
  printf("OK\n");
  return 0;
}
