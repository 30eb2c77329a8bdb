/* Check of libmdbx-0.14.4-growth-written.patch: the bytes a data file grows by are written
 * (no unwritten extent left behind the growth), by the commit after the growth and only where
 * that commit did not write pages of its own, and everything stored reads back.
 *
 *   growth-written-check DIR [safe-nosync | one-txn]
 *
 * Creates an environment in DIR (initial size 64 KiB, growth step 1 MiB, at most 64 MiB),
 * commits 40 transactions of 100 entries each (512-byte values), so that the file grows in
 * several steps, then reopens it and reads every entry back and checks the whole environment
 * (mdbx_env_chk). stdout, identical on the pristine and the patched libmdbx: one line a step.
 * The last line, on stderr, counts the bytes at or after the initial size that the file
 * system still holds as unwritten extents (FIEMAP, after a flush of the file): "unwritten
 * after the initial size: N bytes of M". Exits non-zero on any failure, and with 3 (after
 * printing why) where the file system cannot say (no FIEMAP). With `safe-nosync` the environment
 * is opened with MDBX_SAFE_NOSYNC (and flushed before it is closed), where the patch leaves the
 * growth as reserved. With `one-txn` the entries are 16,000, put by one transaction that grows
 * the file by many steps, and stderr says first how many bytes the process wrote from the
 * transaction's begin to the end of its commit ("written by the transaction: N bytes", the
 * `wchar` of /proc/self/io). */
#include "mdbx.h"

#include "env-chk.h"
#include "kv-check.h"

#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define INITIAL (64 * 1024)
#define TXNS 40
#define PER_TXN 100
#define ONE_TXN 16000
#define VALUE_LEN 512

/* The environment in `dir`, grown in 1 MiB steps from INITIAL, opened with `flags`. */
static MDBX_env *open_growing(const char *dir, MDBX_env_flags_t flags) {
  MDBX_env *env;
  check("env_create", mdbx_env_create(&env));
  check("set_geometry", mdbx_env_set_geometry(env, INITIAL, INITIAL, 64 << 20, 1 << 20, -1, 4096));
  check("env_open", mdbx_env_open(env, dir, flags, 0644));
  return env;
}

/* Bytes this process passed to write system calls so far (/proc/self/io's wchar). */
static unsigned long long wchar(void) {
  FILE *f = fopen("/proc/self/io", "r");
  char line[128];
  unsigned long long n = 0;
  int found = 0;
  while (f && fgets(line, sizeof(line), f))
    found |= sscanf(line, "wchar: %llu", &n) == 1;
  if (f)
    fclose(f);
  if (!found) {
    fprintf(stderr, "no wchar in /proc/self/io: the check cannot count the bytes written\n");
    exit(3);
  }
  return n;
}

static void fill(unsigned i, char *key, char *value) {
  snprintf(key, 16, "k%08u", i * 2654435761u % 1000003u);
  for (unsigned j = 0; j < VALUE_LEN; ++j)
    value[j] = (char)('a' + (i + j) % 26);
}

/* Bytes of unwritten extents at or after `from` in the file at `path`; the file's size in
 * `*size`. -1 when the file system has no FIEMAP. */
static long long unwritten_after(const char *path, long long from, long long *size) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    perror(path);
    exit(1);
  }
  *size = lseek(fd, 0, SEEK_END);
  enum { MAX = 512 };
  struct fiemap *map = calloc(1, sizeof(struct fiemap) + MAX * sizeof(struct fiemap_extent));
  long long total = 0;
  unsigned long long start = 0;
  for (;;) {
    map->fm_start = start;
    map->fm_length = FIEMAP_MAX_OFFSET - start;
    map->fm_flags = FIEMAP_FLAG_SYNC;
    map->fm_extent_count = MAX;
    if (ioctl(fd, FS_IOC_FIEMAP, map) != 0) {
      free(map);
      close(fd);
      return -1;
    }
    if (map->fm_mapped_extents == 0)
      break;
    int last = 0;
    for (unsigned i = 0; i < map->fm_mapped_extents; ++i) {
      const struct fiemap_extent *e = &map->fm_extents[i];
      if (e->fe_flags & FIEMAP_EXTENT_UNWRITTEN) {
        long long lo = (long long)e->fe_logical, hi = lo + (long long)e->fe_length;
        if (lo < from)
          lo = from;
        if (hi > *size)
          hi = *size;
        if (hi > lo)
          total += hi - lo;
      }
      start = e->fe_logical + e->fe_length;
      last |= (e->fe_flags & FIEMAP_EXTENT_LAST) != 0;
    }
    if (last)
      break;
  }
  free(map);
  close(fd);
  return total;
}

int main(int argc, char **argv) {
  const char *mode = argc == 3 ? argv[2] : "";
  const int safe_nosync = strcmp(mode, "safe-nosync") == 0, one_txn = strcmp(mode, "one-txn") == 0;
  if (argc != 2 && !(argc == 3 && (safe_nosync || one_txn))) {
    fprintf(stderr, "usage: %s DIR [safe-nosync | one-txn]\n", argv[0]);
    return 2;
  }
  const MDBX_env_flags_t flags = safe_nosync ? MDBX_SAFE_NOSYNC : MDBX_ENV_DEFAULTS;
  const unsigned txns = one_txn ? 1 : TXNS, per_txn = one_txn ? ONE_TXN : PER_TXN;
  char key[16], value[VALUE_LEN];
  MDBX_env *env = open_growing(argv[1], flags);
  const unsigned long long wchar_before = one_txn ? wchar() : 0;
  for (unsigned t = 0; t < txns; ++t) {
    MDBX_txn *txn;
    MDBX_dbi dbi;
    check("begin", mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn));
    check("dbi_open", mdbx_dbi_open(txn, NULL, MDBX_DB_DEFAULTS, &dbi));
    for (unsigned i = t * per_txn; i < (t + 1) * per_txn; ++i) {
      fill(i, key, value);
      MDBX_val k = {.iov_base = key, .iov_len = strlen(key)};
      MDBX_val v = {.iov_base = value, .iov_len = VALUE_LEN};
      check("put", mdbx_put(txn, dbi, &k, &v, MDBX_UPSERT));
    }
    check("commit", mdbx_txn_commit(txn));
  }
  if (one_txn)
    fprintf(stderr, "written by the transaction: %llu bytes\n", wchar() - wchar_before);
  MDBX_envinfo info;
  check("env_info", mdbx_env_info_ex(env, NULL, &info, sizeof(info)));
  printf("committed %u entries in %u txns; the file grew to %llu bytes\n", txns * per_txn, txns,
         (unsigned long long)info.mi_geo.current);
  const int synced = mdbx_env_sync(env);
  check("env_sync", synced == MDBX_RESULT_TRUE /* nothing to flush */ ? MDBX_SUCCESS : synced);
  mdbx_env_close(env);

  env = open_growing(argv[1], flags);
  MDBX_txn *txn;
  MDBX_dbi dbi;
  check("begin", mdbx_txn_begin(env, NULL, MDBX_TXN_RDONLY, &txn));
  check("dbi_open", mdbx_dbi_open(txn, NULL, MDBX_DB_DEFAULTS, &dbi));
  for (unsigned i = 0; i < txns * per_txn; ++i) {
    fill(i, key, value);
    MDBX_val k = {.iov_base = key, .iov_len = strlen(key)}, v;
    check("get", mdbx_get(txn, dbi, &k, &v));
    if (v.iov_len != VALUE_LEN || memcmp(v.iov_base, value, VALUE_LEN) != 0) {
      printf("FAIL entry %u reads back changed\n", i);
      return 1;
    }
  }
  mdbx_txn_abort(txn);
  printf("reopened: every entry reads back\n");
  env_chk_or_exit(env, "reopened");
  mdbx_env_close(env);

  char path[4096];
  snprintf(path, sizeof(path), "%s/mdbx.dat", argv[1]);
  long long size;
  long long unwritten = unwritten_after(path, INITIAL, &size);
  if (unwritten < 0) {
    fprintf(stderr, "no FIEMAP on this file system: the check cannot count unwritten extents\n");
    return 3;
  }
  printf("OK\n");
  fflush(stdout);
  fprintf(stderr, "unwritten after the initial size: %lld bytes of %lld\n", unwritten, size - INITIAL);
  return 0;
}
