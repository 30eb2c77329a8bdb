/* Checks of mdbx_dbi_open() semantics around the name lookup that
 * libmdbx-0.14.4-dbi-open.patch changes. It prints one line per step (the
 * step, the return code, the handle number), so its output from the pristine
 * and from the patched libmdbx can be compared with diff; it also exits
 * non-zero when a step's result is not the expected one.
 *
 * Build and run (see patches/README.md, scripts/mdbx-patch.sh --check):
 *   cc -O1 -pthread -DMDBX_FORCE_ASSERTIONS=1 -DMDBX_TXN_CHECKOWNER=0 \
 *      -DMDBX_BUILD_FLAGS='""' -I <crate>/libmdbx patches/dbi-open-check.c \
 *      <crate>/libmdbx/mdbx.c -o dbi-open-check && ./dbi-open-check <empty dir>
 */
#include "mdbx.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int failures;

#define EXPECT(what, got, want)                                                                                        \
  do {                                                                                                                 \
    int got_ = (got), want_ = (want);                                                                                  \
    printf("%-48s rc=%d\n", what, got_);                                                                               \
    if (got_ != want_) {                                                                                               \
      printf("  FAIL: %s: got %d (%s), want %d\n", what, got_, mdbx_strerror(got_), want_);                          \
      ++failures;                                                                                                      \
    }                                                                                                                  \
  } while (0)

#define MUST(expr)                                                                                                     \
  do {                                                                                                                 \
    int rc_ = (expr);                                                                                                  \
    if (rc_ != MDBX_SUCCESS) {                                                                                         \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, mdbx_strerror(rc_));                             \
      exit(2);                                                                                                         \
    }                                                                                                                  \
  } while (0)

static MDBX_env *open_env(const char *dir, unsigned max_dbs) {
  mkdir(dir, 0755);
  MDBX_env *env;
  MUST(mdbx_env_create(&env));
  MUST(mdbx_env_set_maxdbs(env, max_dbs));
  MUST(mdbx_env_set_maxreaders(env, 64));
  MUST(mdbx_env_open(env, dir, MDBX_NOSTICKYTHREADS | MDBX_LIFORECLAIM, 0644));
  return env;
}

static void name_of(char *buf, size_t size, unsigned i) { snprintf(buf, size, "table-%05u", i); }

/* Opens `name` and prints the handle number (0 on failure). */
static int open_named(MDBX_txn *txn, const char *what, const char *name, MDBX_db_flags_t flags, MDBX_dbi *dbi,
                      int want) {
  *dbi = 0;
  int rc = mdbx_dbi_open(txn, name, flags, dbi);
  char line[128];
  snprintf(line, sizeof(line), "%s '%s' -> dbi %u", what, name, (unsigned)*dbi);
  EXPECT(line, rc, want);
  return rc;
}

/* Names that agree in their bytes up to the shorter one's length, or differ
 * only in length, must not find each other's handle. */
static void check_prefixes(MDBX_env *env) {
  MDBX_txn *txn;
  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn));
  static const char *const names[] = {"p", "pp", "ppp", "pq", "q", "P"};
  MDBX_dbi dbis[6];
  for (size_t i = 0; i < 6; ++i)
    open_named(txn, "create prefix", names[i], MDBX_CREATE, &dbis[i], MDBX_SUCCESS);
  for (size_t i = 0; i < 6; ++i)
    for (size_t j = i + 1; j < 6; ++j)
      if (dbis[i] == dbis[j]) {
        printf("  FAIL: '%s' and '%s' share dbi %u\n", names[i], names[j], (unsigned)dbis[i]);
        ++failures;
      }
  /* A name with an embedded zero byte is another name. */
  MDBX_val with_nul = {"p\0x", 3};
  MDBX_dbi nul_dbi = 0;
  int rc = mdbx_dbi_open2(txn, &with_nul, MDBX_CREATE, &nul_dbi);
  EXPECT("create 'p\\0x' (embedded NUL)", rc, MDBX_SUCCESS);
  EXPECT("'p\\0x' is not 'p'", nul_dbi != dbis[0], 1);
  MDBX_dbi again;
  rc = mdbx_dbi_open2(txn, &with_nul, 0, &again);
  EXPECT("reopen 'p\\0x' finds its handle", rc == MDBX_SUCCESS && again == nul_dbi, 1);
  MUST(mdbx_txn_commit(txn));
}

static void check_sequence(const char *dir) {
  MDBX_env *env = open_env(dir, 64);
  MDBX_txn *txn;
  MDBX_dbi dbi[20], d;
  char name[32];

  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn));
  for (unsigned i = 0; i < 20; ++i) {
    name_of(name, sizeof(name), i);
    open_named(txn, "create", name, MDBX_CREATE, &dbi[i], MDBX_SUCCESS);
  }
  open_named(txn, "create again (same handle)", "table-00004", MDBX_CREATE, &d, MDBX_SUCCESS);
  EXPECT("  same handle as first create", d == dbi[4], 1);
  MDBX_dbi dup;
  open_named(txn, "create dupsort", "dups", MDBX_CREATE | MDBX_DUPSORT, &dup, MDBX_SUCCESS);
  MUST(mdbx_txn_commit(txn));
  MUST(mdbx_env_close(env));

  /* A fresh env: every handle is opened anew. */
  env = open_env(dir, 64);
  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_RDONLY, &txn));
  for (unsigned i = 0; i < 20; ++i) {
    name_of(name, sizeof(name), i);
    open_named(txn, "open ro", name, 0, &dbi[i], MDBX_SUCCESS);
  }
  open_named(txn, "open ro again", "table-00019", 0, &d, MDBX_SUCCESS);
  EXPECT("  same handle", d == dbi[19], 1);
  open_named(txn, "open ro missing", "table-99999", 0, &d, MDBX_NOTFOUND);
  open_named(txn, "open dupsort with 0 flags", "dups", 0, &d, MDBX_INCOMPATIBLE);
  open_named(txn, "open dupsort with ACCEDE", "dups", MDBX_DB_ACCEDE, &dup, MDBX_SUCCESS);
  open_named(txn, "open dupsort with DUPSORT", "dups", MDBX_DUPSORT, &d, MDBX_SUCCESS);
  EXPECT("  same handle", d == dup, 1);
  open_named(txn, "open plain with DUPSORT", "table-00000", MDBX_DUPSORT, &d, MDBX_INCOMPATIBLE);
  mdbx_txn_abort(txn);

  /* Rename: the handle follows the new name, the old name is gone. */
  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn));
  EXPECT("rename table-00003 -> renamed", mdbx_dbi_rename(txn, dbi[3], "renamed"), MDBX_SUCCESS);
  open_named(txn, "open new name in rw", "renamed", 0, &d, MDBX_SUCCESS);
  EXPECT("  same handle as before the rename", d == dbi[3], 1);
  open_named(txn, "open old name in rw", "table-00003", 0, &d, MDBX_NOTFOUND);
  EXPECT("rename to an existing name", mdbx_dbi_rename(txn, dbi[4], "table-00005"), MDBX_KEYEXIST);
  MUST(mdbx_txn_commit(txn));
  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_RDONLY, &txn));
  open_named(txn, "open new name after commit", "renamed", 0, &d, MDBX_SUCCESS);
  EXPECT("  same handle", d == dbi[3], 1);
  open_named(txn, "open old name after commit", "table-00003", 0, &d, MDBX_NOTFOUND);
  mdbx_txn_abort(txn);

  /* Rename back and forth inside one txn, then abort it. */
  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn));
  EXPECT("rename renamed -> r2", mdbx_dbi_rename(txn, dbi[3], "r2"), MDBX_SUCCESS);
  EXPECT("rename r2 -> table-00003", mdbx_dbi_rename(txn, dbi[3], "table-00003"), MDBX_SUCCESS);
  open_named(txn, "open table-00003 after renames", "table-00003", 0, &d, MDBX_SUCCESS);
  EXPECT("  same handle", d == dbi[3], 1);
  open_named(txn, "open r2 after renames", "r2", 0, &d, MDBX_NOTFOUND);
  mdbx_txn_abort(txn);

  /* Close a handle: the name is found again (in the same or another slot). */
  EXPECT("close table-00005", mdbx_dbi_close(env, dbi[5]), MDBX_SUCCESS);
  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_RDONLY, &txn));
  open_named(txn, "reopen closed", "table-00005", 0, &d, MDBX_SUCCESS);
  dbi[5] = d;
  open_named(txn, "reopen closed again", "table-00005", 0, &d, MDBX_SUCCESS);
  EXPECT("  same handle", d == dbi[5], 1);
  mdbx_txn_abort(txn);

  /* Close the highest handle and one in the middle, then open new tables. */
  MUST(mdbx_dbi_close(env, dbi[19]));
  MUST(mdbx_dbi_close(env, dbi[10]));
  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn));
  MDBX_dbi n1, n2;
  open_named(txn, "create after closes", "new-1", MDBX_CREATE, &n1, MDBX_SUCCESS);
  open_named(txn, "create after closes", "new-2", MDBX_CREATE, &n2, MDBX_SUCCESS);
  open_named(txn, "reopen closed table-00010", "table-00010", 0, &dbi[10], MDBX_SUCCESS);
  open_named(txn, "reopen closed table-00019", "table-00019", 0, &dbi[19], MDBX_SUCCESS);
  EXPECT("  all four distinct",
         n1 != n2 && n1 != dbi[10] && n1 != dbi[19] && n2 != dbi[10] && n2 != dbi[19] && dbi[10] != dbi[19], 1);
  MUST(mdbx_txn_commit(txn));

  /* A handle created in an aborted txn is released; the name opens again. */
  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn));
  open_named(txn, "create in aborted txn", "ghost", MDBX_CREATE, &d, MDBX_SUCCESS);
  mdbx_txn_abort(txn);
  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn));
  open_named(txn, "open ghost after abort", "ghost", 0, &d, MDBX_NOTFOUND);
  open_named(txn, "create ghost after abort", "ghost", MDBX_CREATE, &d, MDBX_SUCCESS);
  MUST(mdbx_txn_commit(txn));

  /* Nested txn: create in a child that is aborted, then in one committed. */
  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn));
  MDBX_txn *child;
  MUST(mdbx_txn_begin(env, txn, MDBX_TXN_READWRITE, &child));
  open_named(child, "create in aborted child", "kid", MDBX_CREATE, &d, MDBX_SUCCESS);
  mdbx_txn_abort(child);
  open_named(txn, "open kid in parent", "kid", 0, &d, MDBX_NOTFOUND);
  MUST(mdbx_txn_begin(env, txn, MDBX_TXN_READWRITE, &child));
  open_named(child, "create in committed child", "kid", MDBX_CREATE, &d, MDBX_SUCCESS);
  MUST(mdbx_txn_commit(child));
  MDBX_dbi kid = d;
  open_named(txn, "open kid in parent", "kid", 0, &d, MDBX_SUCCESS);
  EXPECT("  same handle", d == kid, 1);
  MUST(mdbx_txn_commit(txn));

  /* Drop: gone after the drop, in the txn and after commit; creatable again. */
  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn));
  EXPECT("drop table-00007", mdbx_drop(txn, dbi[7], true), MDBX_SUCCESS);
  open_named(txn, "open dropped in same txn", "table-00007", 0, &d, MDBX_NOTFOUND);
  open_named(txn, "recreate dropped in same txn", "table-00007", MDBX_CREATE, &d, MDBX_SUCCESS);
  EXPECT("drop it again", mdbx_drop(txn, d, true), MDBX_SUCCESS);
  MUST(mdbx_txn_commit(txn));
  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn));
  open_named(txn, "open dropped after commit", "table-00007", 0, &d, MDBX_NOTFOUND);
  open_named(txn, "recreate dropped after commit", "table-00007", MDBX_CREATE, &d, MDBX_SUCCESS);
  open_named(txn, "recreated with other flags", "table-00007", MDBX_CREATE | MDBX_INTEGERKEY, &d, MDBX_SUCCESS);
  MUST(mdbx_txn_commit(txn));
  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_RDONLY, &txn));
  open_named(txn, "open recreated with ACCEDE", "table-00007", MDBX_DB_ACCEDE, &d, MDBX_SUCCESS);
  MDBX_db_flags_t flags = 0;
  unsigned state = 0;
  MUST(mdbx_dbi_flags_ex(txn, d, &flags, &state));
  EXPECT("  its flags are INTEGERKEY", (flags & MDBX_INTEGERKEY) != 0, 1);
  mdbx_txn_abort(txn);

  check_prefixes(env);
  MUST(mdbx_env_close(env));
}

/* Many tables: each name finds its own handle, before and after reopening. */
static void check_many(const char *dir, unsigned n) {
  MDBX_env *env = open_env(dir, n + 16);
  MDBX_dbi *dbis = calloc(n, sizeof(MDBX_dbi));
  char name[32];
  MDBX_txn *txn;
  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn));
  for (unsigned i = 0; i < n; ++i) {
    name_of(name, sizeof(name), i);
    MUST(mdbx_dbi_open(txn, name, MDBX_CREATE, &dbis[i]));
  }
  MUST(mdbx_txn_commit(txn));
  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_RDONLY, &txn));
  unsigned wrong = 0;
  for (unsigned i = 0; i < n; ++i) {
    MDBX_dbi d;
    name_of(name, sizeof(name), n - 1 - i);
    MUST(mdbx_dbi_open(txn, name, 0, &d));
    wrong += d != dbis[n - 1 - i];
  }
  mdbx_txn_abort(txn);
  printf("%u tables reopened by name, %u on a wrong handle\n", n, wrong);
  if (wrong)
    ++failures;
  free(dbis);
  MUST(mdbx_env_close(env));
}

/* Threads opening existing tables in read txns (the lock-free pass) while
 * another thread creates, closes and renames other tables (under the lock):
 * an existing name must always find its one handle. */
struct race {
  MDBX_env *env;
  MDBX_dbi stable[64];
  volatile int stop;
  unsigned wrong, opens;
};

static void *reader(void *arg) {
  struct race *r = arg;
  char name[32];
  unsigned wrong = 0, opens = 0;
  while (!r->stop) {
    MDBX_txn *txn;
    MUST(mdbx_txn_begin(r->env, NULL, MDBX_TXN_RDONLY, &txn));
    for (unsigned i = 0; i < 64; ++i) {
      MDBX_dbi d;
      name_of(name, sizeof(name), i);
      MUST(mdbx_dbi_open(txn, name, 0, &d));
      wrong += d != r->stable[i];
      ++opens;
    }
    mdbx_txn_abort(txn);
  }
  __atomic_fetch_add(&r->wrong, wrong, __ATOMIC_RELAXED);
  __atomic_fetch_add(&r->opens, opens, __ATOMIC_RELAXED);
  return NULL;
}

static void check_race(const char *dir) {
  struct race r = {.env = open_env(dir, 1024)};
  char name[32];
  MDBX_txn *txn;
  MUST(mdbx_txn_begin(r.env, NULL, MDBX_TXN_READWRITE, &txn));
  for (unsigned i = 0; i < 64; ++i) {
    name_of(name, sizeof(name), i);
    MUST(mdbx_dbi_open(txn, name, MDBX_CREATE, &r.stable[i]));
  }
  MUST(mdbx_txn_commit(txn));
  pthread_t threads[3];
  for (int t = 0; t < 3; ++t)
    pthread_create(&threads[t], NULL, reader, &r);
  for (unsigned round = 0; round < 300; ++round) {
    MUST(mdbx_txn_begin(r.env, NULL, MDBX_TXN_READWRITE, &txn));
    MDBX_dbi a, b;
    snprintf(name, sizeof(name), "churn-a-%u", round % 7);
    MUST(mdbx_dbi_open(txn, name, MDBX_CREATE, &a));
    snprintf(name, sizeof(name), "churn-b-%u", round);
    MUST(mdbx_dbi_open(txn, name, MDBX_CREATE, &b));
    snprintf(name, sizeof(name), "churn-c-%u", round);
    MUST(mdbx_dbi_rename(txn, b, name));
    if (round & 1)
      MUST(mdbx_drop(txn, b, true));
    MUST(mdbx_txn_commit(txn));
    if (!(round & 1))
      MUST(mdbx_dbi_close(r.env, b));
    MUST(mdbx_dbi_close(r.env, a));
  }
  r.stop = 1;
  for (int t = 0; t < 3; ++t)
    pthread_join(threads[t], NULL);
  printf("race: %s (%u wrong handles)\n", r.wrong ? "FAIL" : "ok", r.wrong);
  if (r.wrong || !r.opens)
    ++failures;
  MUST(mdbx_env_close(r.env));
}

/* Prints a table's entry count as its handle sees it. */
static void expect_entries(MDBX_txn *txn, const char *what, MDBX_dbi dbi, unsigned want) {
  MDBX_stat st;
  int rc = mdbx_dbi_stat(txn, dbi, &st, sizeof(st));
  char line[128];
  snprintf(line, sizeof(line), "%s: %u entries", what, rc == MDBX_SUCCESS ? (unsigned)st.ms_entries : 0u);
  EXPECT(line, rc == MDBX_SUCCESS && st.ms_entries == want, 1);
}

/* The first open of a stored table in an env (the lock-free pass reads its
 * record into a free slot, the locked pass takes that slot): the handle must
 * see the table as stored, in a read txn, a write txn and a nested one. */
static void check_first_open_reads_record(const char *dir) {
  MDBX_env *env = open_env(dir, 16);
  MDBX_txn *txn;
  static const char *const names[] = {"rec-a", "rec-b", "rec-c"};
  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn));
  for (unsigned t = 0; t < 3; ++t) {
    MDBX_dbi d;
    open_named(txn, "create with entries", names[t], MDBX_CREATE, &d, MDBX_SUCCESS);
    for (unsigned i = 0; i < 3 + 2 * t; ++i) {
      char k[16];
      snprintf(k, sizeof(k), "k%u", i);
      MDBX_val key = {k, strlen(k)}, val = {k, strlen(k)};
      MUST(mdbx_put(txn, d, &key, &val, MDBX_UPSERT));
    }
  }
  MUST(mdbx_txn_commit(txn));
  MUST(mdbx_env_close(env));

  env = open_env(dir, 16);
  MDBX_dbi a, b, c;
  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_RDONLY, &txn));
  open_named(txn, "first open ro", "rec-a", 0, &a, MDBX_SUCCESS);
  expect_entries(txn, "  rec-a in ro", a, 3);
  mdbx_txn_abort(txn);
  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn));
  open_named(txn, "first open rw", "rec-b", 0, &b, MDBX_SUCCESS);
  expect_entries(txn, "  rec-b in rw", b, 5);
  MDBX_txn *child;
  MUST(mdbx_txn_begin(env, txn, MDBX_TXN_READWRITE, &child));
  open_named(child, "first open in a child", "rec-c", 0, &c, MDBX_SUCCESS);
  expect_entries(child, "  rec-c in the child", c, 7);
  MDBX_val key = {"new", 3}, val = {"v", 1};
  MUST(mdbx_put(child, c, &key, &val, MDBX_UPSERT));
  MUST(mdbx_txn_commit(child));
  expect_entries(txn, "  rec-c in the parent after the child", c, 8);
  MUST(mdbx_txn_commit(txn));
  MUST(mdbx_env_close(env));

  env = open_env(dir, 16);
  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_RDONLY, &txn));
  open_named(txn, "reopen after commit", "rec-c", 0, &c, MDBX_SUCCESS);
  expect_entries(txn, "  rec-c stored", c, 8);
  open_named(txn, "first open of a missing name", "rec-z", 0, &c, MDBX_NOTFOUND);
  mdbx_txn_abort(txn);
  MUST(mdbx_env_close(env));
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s <empty directory>\n", argv[0]);
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof(path), "%s/sequence", argv[1]);
  check_sequence(path);
  snprintf(path, sizeof(path), "%s/many", argv[1]);
  check_many(path, 3000);
  snprintf(path, sizeof(path), "%s/race", argv[1]);
  check_race(path);
  snprintf(path, sizeof(path), "%s/record", argv[1]);
  check_first_open_reads_record(path);
  printf("%s: %d failure(s)\n", failures ? "FAILED" : "passed", failures);
  return failures ? 1 : 0;
}
