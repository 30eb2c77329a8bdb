/* The file-compatibility tool of tests/compat.rs, built against a libmdbx source tree (the
 * pristine amalgamation or the patched one):
 *
 *   compat-tool write DIR ROUND   one round of writes (ROUND 0 creates the database): the
 *                                 paths Tabula's patches change (many tables opened, a large
 *                                 transaction that spills, deletes that free pages for reuse,
 *                                 large values, NOMETASYNC commits, a dupsort table)
 *   compat-tool check DIR ROUNDS  mdbx_env_chk must find no problem, and the contents must be
 *                                 exactly what ROUNDS rounds of writes leave; prints a digest
 *
 * The contents are a function of the round numbers only, so a database written by one build
 * and checked by the other is checked against the same expectation. Exit 0 on success. */
#include "mdbx.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TABLES 40
#define BIG_KEYS 3000
#define DUP_KEYS 50
#define DUPS 20

static void fail(const char *what, int rc) {
  fprintf(stderr, "compat-tool: %s: %s (%d)\n", what, mdbx_strerror(rc), rc);
  exit(1);
}

#define CHECK(call)                                                                                                    \
  do {                                                                                                                 \
    int rc_ = (call);                                                                                                  \
    if (rc_ != MDBX_SUCCESS)                                                                                           \
      fail(#call, rc_);                                                                                                \
  } while (0)

static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= UINT64_C(0xff51afd7ed558ccd);
  x ^= x >> 33;
  x *= UINT64_C(0xc4ceb9fe1a85ec53);
  x ^= x >> 33;
  return x;
}

/* The value of key k in table t after round r: its length varies from 8 bytes to 3 pages. */
static size_t value_of(unsigned t, unsigned k, unsigned r, uint8_t *buf) {
  uint64_t h = mix(((uint64_t)t << 40) ^ ((uint64_t)k << 8) ^ r);
  size_t len = 8 + (size_t)(h % 97);
  if (h % 61 == 0)
    len = 9000 + (size_t)(h % 4000); /* an overflow (large) value */
  for (size_t i = 0; i < len; i++)
    buf[i] = (uint8_t)mix(h + i);
  return len;
}

/* Whether key k of the big table is present after round r (round r >= 1 deletes a share of
 * the keys and rewrites the rest). */
static int big_present(unsigned k, unsigned r) { return r == 0 || mix((uint64_t)k * 131 + r) % 4 != 0; }

static MDBX_env *open_env(const char *dir) {
  MDBX_env *env;
  CHECK(mdbx_env_create(&env));
  CHECK(mdbx_env_set_maxdbs(env, TABLES + 8));
  CHECK(mdbx_env_set_geometry(env, -1, -1, 1 << 30, 1 << 20, -1, 4096));
  CHECK(mdbx_env_open(env, dir, MDBX_NOMETASYNC, 0644));
  /* A small dirty-page limit makes the big transaction spill (the dpl-tail path). */
  CHECK(mdbx_env_set_option(env, MDBX_opt_txn_dp_limit, 512));
  return env;
}

static void name_of(unsigned t, char *name) { snprintf(name, 32, "table-%03u", t); }

static void write_round(const char *dir, unsigned r) {
  MDBX_env *env = open_env(dir);
  static uint8_t buf[16384];
  char name[32];
  MDBX_txn *txn;

  /* Many tables, opened and written in separate commits (dbi-open, nometasync-gc). */
  for (unsigned t = 0; t < TABLES; t++) {
    CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn));
    MDBX_dbi dbi;
    name_of(t, name);
    CHECK(mdbx_dbi_open(txn, name, MDBX_CREATE, &dbi));
    for (unsigned k = 0; k < 20; k++) {
      uint32_t key = k;
      MDBX_val kv = {&key, sizeof(key)}, vv = {buf, value_of(t, k, r, buf)};
      CHECK(mdbx_put(txn, dbi, &kv, &vv, 0));
    }
    CHECK(mdbx_txn_commit(txn));
  }

  /* One large transaction: thousands of pages dirtied, spilled, freed and reused
   * (dpl-tail, loose-batch, write-chunks). */
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn));
  MDBX_dbi big, dup;
  CHECK(mdbx_dbi_open(txn, "big", MDBX_CREATE, &big));
  CHECK(mdbx_dbi_open(txn, "dup", MDBX_CREATE | MDBX_DUPSORT, &dup));
  for (unsigned k = 0; k < BIG_KEYS; k++) {
    uint64_t key = mix(k); /* random order */
    MDBX_val kv = {&key, sizeof(key)};
    if (big_present(k, r)) {
      MDBX_val vv = {buf, value_of(1000, k, r, buf)};
      CHECK(mdbx_put(txn, big, &kv, &vv, 0));
    } else {
      int rc = mdbx_del(txn, big, &kv, NULL);
      if (rc != MDBX_SUCCESS && rc != MDBX_NOTFOUND)
        fail("mdbx_del", rc);
    }
  }
  for (unsigned k = 0; k < DUP_KEYS; k++) {
    uint32_t key = k;
    MDBX_val kv = {&key, sizeof(key)};
    int rc = mdbx_del(txn, dup, &kv, NULL);
    if (rc != MDBX_SUCCESS && rc != MDBX_NOTFOUND)
      fail("mdbx_del dup", rc);
    for (unsigned d = 0; d < DUPS; d++) {
      uint64_t v = mix(((uint64_t)k << 16) + d + r);
      MDBX_val vv = {&v, sizeof(v)};
      CHECK(mdbx_put(txn, dup, &kv, &vv, 0));
    }
  }
  CHECK(mdbx_txn_commit(txn));
  CHECK(mdbx_env_sync_ex(env, true, false));
  CHECK(mdbx_env_close(env));
}

static uint64_t digest_add(uint64_t d, const MDBX_val *v) {
  for (size_t i = 0; i < v->iov_len; i++)
    d = mix(d ^ ((const uint8_t *)v->iov_base)[i]);
  return mix(d + v->iov_len);
}

static void chk_issue(MDBX_chk_context_t *ctx, const char *object, uint64_t entry_number, const char *issue,
                      const char *extra_fmt, va_list extra_args) {
  (void)ctx;
  fprintf(stderr, "compat-tool: mdbx_env_chk: %s #%" PRIu64 ": %s ", object, entry_number, issue);
  if (extra_fmt)
    vfprintf(stderr, extra_fmt, extra_args);
  fputc('\n', stderr);
}

static int check(const char *dir, unsigned rounds) {
  const unsigned r = rounds - 1; /* the last round written */
  MDBX_env *env;
  CHECK(mdbx_env_create(&env));
  CHECK(mdbx_env_set_maxdbs(env, TABLES + 8));
  CHECK(mdbx_env_open(env, dir, MDBX_RDONLY, 0644));

  MDBX_chk_callbacks_t cb;
  memset(&cb, 0, sizeof(cb));
  cb.issue = chk_issue;
  MDBX_chk_context_t ctx;
  memset(&ctx, 0, sizeof(ctx));
  CHECK(mdbx_env_chk(env, &cb, &ctx, MDBX_CHK_DEFAULTS, MDBX_chk_error, 0));
  if (ctx.result.total_problems) {
    fprintf(stderr, "compat-tool: mdbx_env_chk found %zu problem(s)\n", (size_t)ctx.result.total_problems);
    return 1;
  }

  MDBX_txn *txn;
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_RDONLY, &txn));
  static uint8_t buf[16384];
  char name[32];
  uint64_t digest = 0;
  int bad = 0;
  for (unsigned t = 0; t < TABLES; t++) {
    MDBX_dbi dbi;
    name_of(t, name);
    CHECK(mdbx_dbi_open(txn, name, 0, &dbi));
    for (unsigned k = 0; k < 20; k++) {
      uint32_t key = k;
      MDBX_val kv = {&key, sizeof(key)}, got;
      CHECK(mdbx_get(txn, dbi, &kv, &got));
      size_t len = value_of(t, k, r, buf);
      bad |= got.iov_len != len || memcmp(got.iov_base, buf, len) != 0;
      digest = digest_add(digest, &got);
    }
  }
  MDBX_dbi big, dup;
  CHECK(mdbx_dbi_open(txn, "big", 0, &big));
  CHECK(mdbx_dbi_open(txn, "dup", MDBX_DUPSORT, &dup));
  MDBX_stat st;
  CHECK(mdbx_dbi_stat(txn, big, &st, sizeof(st)));
  size_t expected = 0;
  for (unsigned k = 0; k < BIG_KEYS; k++) {
    uint64_t key = mix(k);
    MDBX_val kv = {&key, sizeof(key)}, got;
    /* Present after the last round: written in it, or (deleted in it) never. */
    int want = big_present(k, r);
    int rc = mdbx_get(txn, big, &kv, &got);
    if (want) {
      expected++;
      if (rc != MDBX_SUCCESS) {
        bad = 1;
        continue;
      }
      size_t len = value_of(1000, k, r, buf);
      bad |= got.iov_len != len || memcmp(got.iov_base, buf, len) != 0;
      digest = digest_add(digest, &got);
    } else if (rc != MDBX_NOTFOUND) {
      bad = 1;
    }
  }
  bad |= st.ms_entries != expected;
  CHECK(mdbx_dbi_stat(txn, dup, &st, sizeof(st)));
  bad |= st.ms_entries != (uint64_t)DUP_KEYS * DUPS;
  mdbx_txn_abort(txn);
  mdbx_env_close(env);
  printf("contents of %u round(s): %s, digest %016" PRIx64 "\n", rounds, bad ? "WRONG" : "as written", digest);
  return bad;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "write") == 0) {
    write_round(argv[2], (unsigned)atoi(argv[3]));
    return 0;
  }
  if (argc == 4 && strcmp(argv[1], "check") == 0)
    return check(argv[2], (unsigned)atoi(argv[3]));
  fprintf(stderr, "usage: compat-tool write DIR ROUND | check DIR ROUNDS\n");
  return 2;
}
