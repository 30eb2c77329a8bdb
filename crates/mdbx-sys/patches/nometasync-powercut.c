/* A power cut under MDBX_NOMETASYNC that damages the last durable snapshot (libmdbx 0.14.4).
 *
 *   nometasync-powercut write DIR   run the workload in DIR (under faultfs-run, see below)
 *   nometasync-powercut check DIR   open what the disk kept, read it all, run mdbx_env_chk
 *
 * The workload: 6 commits in MDBX_NOMETASYNC mode, each rewriting the same 200 records, so
 * that every commit frees the pages of the snapshot before it. After commit 5 returns, the
 * program marks that point on the disk (a lookup of `.faultfs-mark-c5`); the disk then cuts
 * the power at the next fsync, the data flush of commit 6. At that moment the page cache holds
 * meta page 5 (written without a flush by commit 5) and the data pages of commit 6; the disk
 * keeps every one of them except the meta pages, an order of write-back that POSIX allows
 * between two flushes. Snapshot 4, whose meta page was flushed by commit 5's data flush, is
 * what the disk must fall back to: mdbx.h promises for MDBX_NOMETASYNC that "a system crash
 * may undo the last committed transaction" and that "this trade-off maintains database
 * integrity".
 *
 * `check` exits 0 when the database opens, reads back as the state after commit 4 or 5 and
 * mdbx_env_chk finds no problem; 1 otherwise. See patches/README.md for how to run it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mdbx.h"

#define RECORDS 200
#define VALUE_SIZE 96
#define COMMITS 6

static void die(const char *what, int rc) {
  fprintf(stderr, "%s: %s (%d)\n", what, mdbx_strerror(rc), rc);
  exit(2);
}

/* libmdbx's warnings, on stdout in order with the rest. */
static void logger(MDBX_log_level_t level, const char *function, int line, const char *fmt, va_list args) {
  char text[1024];
  (void)level;
  (void)line;
  vsnprintf(text, sizeof(text), fmt, args);
  text[strcspn(text, "\n")] = '\0';
  printf("libmdbx (%s): %s\n", function, text);
  fflush(stdout);
}

/* The value of record `i` after commit `c`. */
static void value_of(unsigned c, unsigned i, unsigned char *out) {
  for (unsigned j = 0; j < VALUE_SIZE; ++j)
    out[j] = (unsigned char)(c * 31 + i * 7 + j);
}

/* Records a point in the disk's order of events (tabula-faultfs `mark`). */
static void mark(const char *dir, const char *label) {
  char path[4096];
  struct stat st;
  snprintf(path, sizeof(path), "%s/.faultfs-mark-%s", dir, label);
  (void)stat(path, &st); /* fails with ENOENT by design */
}

static MDBX_env *open_env(const char *dir, MDBX_env_flags_t flags) {
  MDBX_env *env;
  int rc = mdbx_env_create(&env);
  if (rc)
    die("mdbx_env_create", rc);
  /* 4 KiB pages, so the meta pages are the first 12 KiB of mdbx.dat. */
  rc = mdbx_env_set_geometry(env, -1, 1 << 20, 16 << 20, 1 << 20, -1, 4096);
  if (rc)
    die("mdbx_env_set_geometry", rc);
  rc = mdbx_env_open(env, dir, flags, 0644);
  if (rc)
    die("mdbx_env_open", rc);
  return env;
}

static int do_write(const char *dir) {
  MDBX_env *env = open_env(dir, MDBX_NOMETASYNC);
  for (unsigned c = 1; c <= COMMITS; ++c) {
    MDBX_txn *txn;
    MDBX_dbi dbi;
    int rc = mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn);
    if (rc)
      die("mdbx_txn_begin", rc);
    rc = mdbx_dbi_open(txn, NULL, 0, &dbi);
    if (rc)
      die("mdbx_dbi_open", rc);
    for (unsigned i = 0; i < RECORDS; ++i) {
      uint32_t k = __builtin_bswap32(i);
      unsigned char v[VALUE_SIZE];
      value_of(c, i, v);
      MDBX_val key = {&k, sizeof(k)}, val = {v, sizeof(v)};
      rc = mdbx_put(txn, dbi, &key, &val, MDBX_UPSERT);
      if (rc)
        die("mdbx_put", rc);
    }
    const uint64_t id = mdbx_txn_id(txn);
    rc = mdbx_txn_commit(txn);
    if (rc)
      die("mdbx_txn_commit", rc);
    printf("commit %u: txnid %" PRIu64 "\n", c, id);
    fflush(stdout);
    char label[16];
    snprintf(label, sizeof(label), "c%u", c);
    mark(dir, label);
  }
  mdbx_env_close(env);
  return 0;
}

static int do_check(const char *dir) {
  mdbx_setup_debug(MDBX_LOG_WARN, MDBX_DBG_DONTCHANGE, logger);
  MDBX_env *env = open_env(dir, MDBX_ENV_DEFAULTS);
  MDBX_envinfo info;
  int rc = mdbx_env_info_ex(env, NULL, &info, sizeof(info));
  if (rc)
    die("mdbx_env_info_ex", rc);
  for (int m = 0; m < 3; ++m)
    printf("meta %d: txnid %" PRIu64 ", %s\n", m, info.mi_meta_txnid[m],
           info.mi_meta_sign[m] > 1 ? "steady" : info.mi_meta_sign[m] == 1 ? "weak" : "none");
  printf("opened at txnid %" PRIu64 "\n", info.mi_recent_txnid);

  int failed = 0;
  MDBX_txn *txn;
  MDBX_dbi dbi;
  MDBX_cursor *cur;
  rc = mdbx_txn_begin(env, NULL, MDBX_TXN_RDONLY, &txn);
  if (rc)
    die("mdbx_txn_begin", rc);
  rc = mdbx_dbi_open(txn, NULL, 0, &dbi);
  if (rc == MDBX_SUCCESS)
    rc = mdbx_cursor_open(txn, dbi, &cur);
  unsigned found = 0, commit = 0;
  if (rc == MDBX_SUCCESS) {
    MDBX_val key, val;
    for (rc = mdbx_cursor_get(cur, &key, &val, MDBX_FIRST); rc == MDBX_SUCCESS;
         rc = mdbx_cursor_get(cur, &key, &val, MDBX_NEXT), ++found) {
      unsigned char want[VALUE_SIZE];
      uint32_t k;
      memcpy(&k, key.iov_base, sizeof(k));
      const unsigned i = __builtin_bswap32(k);
      unsigned c = 0;
      for (unsigned t = 1; t <= COMMITS && !c; ++t) {
        value_of(t, i, want);
        if (val.iov_len == VALUE_SIZE && !memcmp(val.iov_base, want, VALUE_SIZE))
          c = t;
      }
      if (i != found || !c || (commit && c != commit)) {
        printf("FAIL: record %u (the %u-th) holds no value that commit %u wrote\n", i, found, commit);
        failed = 1;
        break;
      }
      commit = c;
    }
    if (rc == MDBX_NOTFOUND)
      rc = MDBX_SUCCESS;
    mdbx_cursor_close(cur);
  }
  mdbx_txn_abort(txn);
  if (rc) {
    printf("FAIL: reading the snapshot of txnid %" PRIu64 ": %s (%d)\n", info.mi_recent_txnid, mdbx_strerror(rc),
           rc);
    failed = 1;
  } else if (!failed && (found != RECORDS || commit < COMMITS - 2)) {
    printf("FAIL: %u records from commit %u; expected all %u from commit %u or %u\n", found, commit, RECORDS,
           COMMITS - 2, COMMITS - 1);
    failed = 1;
  } else if (!failed) {
    printf("read: all %u records as commit %u left them\n", found, commit);
  }

  MDBX_chk_callbacks_t cb;
  MDBX_chk_context_t ctx;
  memset(&cb, 0, sizeof(cb));
  memset(&ctx, 0, sizeof(ctx));
  rc = mdbx_env_chk(env, &cb, &ctx, MDBX_CHK_DEFAULTS, MDBX_chk_severity_prio_shift, 0);
  if (rc || ctx.result.total_problems) {
    printf("FAIL: mdbx_env_chk: %s (%d), %zu problems (%zu in the trees, %zu in the GC)\n", mdbx_strerror(rc), rc,
           ctx.result.total_problems, ctx.result.tree_problems, ctx.result.problems_gc);
    failed = 1;
  } else {
    printf("mdbx_env_chk: no problems\n");
  }
  mdbx_env_close(env);
  printf("%s\n", failed ? "DAMAGED" : "OK");
  return failed;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "write"))
    return do_write(argv[2]);
  if (argc == 3 && !strcmp(argv[1], "check"))
    return do_check(argv[2]);
  fprintf(stderr, "usage: %s write|check DIR\n", argv[0]);
  return 2;
}
