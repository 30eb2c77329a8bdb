/* Checks libmdbx-0.14.4-branchy-search.patch: the page searches of tables with libmdbx's default
 * (lexical) comparator compare keys with cmp_lexical_branchy() instead of cmp_lexical(), which
 * must order every pair of keys the same way.
 *
 * Built with MDBX_DEBUG_SEARCH_BRANCHLESS=1, libmdbx runs every page search twice, its
 * branchless search and the reference binary search of earlier versions (old_node_search(),
 * which compares with the table's comparator function, cmp_lexical), and panics when they land
 * on a different entry. The program exercises those searches on keys made to reach every path of
 * the comparator: keys shorter than 8 bytes, exactly 8, longer with equal and different first 8
 * bytes, prefixes of one another, and bytes above 0x7f. It writes them into a plain table and
 * into a dupsort table (whose values are searched with the same comparator), deletes some, and
 * prints a digest of what each read returns: the keys in cursor order, point gets of present and
 * absent keys, MDBX_SET_RANGE and MDBX_GET_BOTH_RANGE seeks. Its output from the pristine and
 * the patched libmdbx must be identical, and it exits non-zero when a read contradicts the model
 * it keeps (a sorted array, compared with memcmp then length, as libmdbx documents the default
 * order).
 *
 *   cc -O1 -pthread -DMDBX_FORCE_ASSERTIONS=1 -DMDBX_DEBUG_SEARCH_BRANCHLESS=1 \
 *      -DMDBX_TXN_CHECKOWNER=0 -DMDBX_BUILD_FLAGS='""' -I <crate>/libmdbx \
 *      patches/branchy-search-check.c <crate>/libmdbx/mdbx.c -o check && ./check <empty dir>
 */
#include "mdbx.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define KEYS 60000
#define MAX_LEN 24
#define DUP_KEYS 64

#define MUST(expr)                                                                                                     \
  do {                                                                                                                 \
    int rc_ = (expr);                                                                                                  \
    if (rc_ != MDBX_SUCCESS) {                                                                                         \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, mdbx_strerror(rc_));                             \
      exit(2);                                                                                                         \
    }                                                                                                                  \
  } while (0)

typedef struct {
  uint8_t len;
  uint8_t b[MAX_LEN];
} key_t_;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* A few 8-byte words, so that many keys share their first 8 bytes. */
static const uint8_t words[4][8] = {
    {0, 0, 0, 0, 0, 0, 0, 1}, {0x7f, 0x80, 0, 0xff, 1, 2, 3, 4}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}, {'k', 'e', 'y', '-', '0', '0', '0', '0'}};

static void make_key(key_t_ *k) {
  uint64_t r = next_rand();
  switch (r % 6) {
  case 0: /* short */
    k->len = (uint8_t)(1 + (r >> 8) % 7);
    break;
  case 1:
  case 2: /* exactly 8: a big-endian integer key */
    k->len = 8;
    break;
  default: /* longer */
    k->len = (uint8_t)(9 + (r >> 8) % (MAX_LEN - 8));
    break;
  }
  for (size_t i = 0; i < k->len; ++i)
    k->b[i] = (uint8_t)(next_rand() >> 56);
  if (k->len >= 8 && (r >> 20) % 2 == 0)
    memcpy(k->b, words[(r >> 24) % 4], 8);
  if ((r >> 30) % 8 == 0)
    for (size_t i = 0; i < k->len && i < 8; ++i)
      k->b[i] = (uint8_t)((r >> 40) % 3);
}

/* libmdbx's documented default order: memcmp of the common length, then the shorter first. */
static int model_cmp(const void *pa, const void *pb) {
  const key_t_ *a = pa, *b = pb;
  size_t n = a->len < b->len ? a->len : b->len;
  int d = n ? memcmp(a->b, b->b, n) : 0;
  return d ? d : (int)a->len - (int)b->len;
}

static const key_t_ *sort_base;
static int order_cmp(const void *pa, const void *pb) {
  size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
  return model_cmp(&sort_base[a], &sort_base[b]);
}

static uint64_t digest = 1469598103934665603ull;
static void fold(const void *p, size_t n) {
  const uint8_t *b = p;
  for (size_t i = 0; i < n; ++i)
    digest = (digest ^ b[i]) * 1099511628211ull;
  uint8_t len = (uint8_t)n;
  digest = (digest ^ len) * 1099511628211ull;
}

static int failures;
static void fail(const char *what, size_t i) {
  if (failures++ < 10)
    printf("FAIL: %s (probe %zu)\n", what, i);
}

static key_t_ keys[KEYS], probes[KEYS];

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s <empty dir>\n", argv[0]);
    return 2;
  }
  mkdir(argv[1], 0755);
  MDBX_env *env;
  MUST(mdbx_env_create(&env));
  MUST(mdbx_env_set_maxdbs(env, 4));
  MUST(mdbx_env_set_geometry(env, -1, -1, 1 << 30, -1, -1, 4096));
  MUST(mdbx_env_open(env, argv[1], MDBX_NOSTICKYTHREADS, 0644));

  for (size_t i = 0; i < KEYS; ++i) {
    make_key(&keys[i]);
    make_key(&probes[i]);
  }

  /* Write every key (the plain table) and DUP_KEYS keys' worth of values (the dupsort table),
   * in a few transactions, then delete every fifth key. */
  MDBX_txn *txn;
  MDBX_dbi plain, dups;
  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn));
  MUST(mdbx_dbi_open(txn, "plain", MDBX_CREATE, &plain));
  MUST(mdbx_dbi_open(txn, "dups", MDBX_CREATE | MDBX_DUPSORT, &dups));
  for (size_t i = 0; i < KEYS; ++i) {
    MDBX_val k = {keys[i].b, keys[i].len}, v = {&i, sizeof(i)};
    MUST(mdbx_put(txn, plain, &k, &v, MDBX_UPSERT));
    uint8_t dk = (uint8_t)(i % DUP_KEYS);
    MDBX_val d = {&dk, 1};
    MUST(mdbx_put(txn, dups, &d, &k, MDBX_UPSERT));
    if (i % 20000 == 19999) {
      MUST(mdbx_txn_commit(txn));
      MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn));
    }
  }
  for (size_t i = 0; i < KEYS; i += 5) {
    MDBX_val k = {keys[i].b, keys[i].len};
    int rc = mdbx_del(txn, plain, &k, NULL);
    if (rc != MDBX_SUCCESS && rc != MDBX_NOTFOUND)
      MUST(rc);
  }
  MUST(mdbx_txn_commit(txn));

  /* The keys left, read in cursor order: each must follow the one before in the model's order
   * (which also makes them unique), and they are the model the reads below are checked
   * against. */
  static key_t_ left[KEYS];
  size_t n = 0;
  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_RDONLY, &txn));
  MDBX_cursor *c;
  MUST(mdbx_cursor_open(txn, plain, &c));
  MDBX_val k, v;
  int rc = mdbx_cursor_get(c, &k, &v, MDBX_FIRST);
  while (rc == MDBX_SUCCESS) {
    if (k.iov_len > MAX_LEN)
      fail("a key longer than any written", n);
    left[n].len = (uint8_t)k.iov_len;
    memcpy(left[n].b, k.iov_base, k.iov_len);
    if (n > 0 && model_cmp(&left[n - 1], &left[n]) >= 0)
      fail("cursor order is not the default order", n);
    fold(k.iov_base, k.iov_len);
    ++n;
    rc = mdbx_cursor_get(c, &k, &v, MDBX_NEXT);
  }
  if (rc != MDBX_NOTFOUND)
    MUST(rc);
  /* Independently: the keys written, sorted; a key is left when none of its writes was at a
   * position deleted above (every fifth). */
  static key_t_ sorted[KEYS];
  static size_t order[KEYS];
  for (size_t i = 0; i < KEYS; ++i)
    order[i] = i;
  sort_base = keys;
  qsort(order, KEYS, sizeof(size_t), order_cmp);
  size_t expected = 0;
  for (size_t i = 0; i < KEYS;) {
    size_t j = i;
    int deleted = 0;
    while (j < KEYS && model_cmp(&keys[order[i]], &keys[order[j]]) == 0)
      deleted |= order[j++] % 5 == 0;
    if (!deleted)
      sorted[expected++] = keys[order[i]];
    i = j;
  }
  if (expected != n)
    fail("the table holds another number of keys than written and not deleted", n);
  for (size_t i = 0; i < n && i < expected; ++i)
    if (model_cmp(&sorted[i], &left[i]) != 0) {
      fail("the table holds another key than written", i);
      break;
    }
  printf("walk: %zu keys, digest %016llx\n", n, (unsigned long long)digest);

  /* Point gets and range seeks of every written key and of as many other keys. */
  size_t found = 0, absent = 0;
  digest = 1469598103934665603ull;
  for (size_t pass = 0; pass < 2; ++pass) {
    const key_t_ *set = pass ? probes : keys;
    for (size_t i = 0; i < KEYS; ++i) {
      MDBX_val q = {(void *)set[i].b, set[i].len};
      const key_t_ *hit = bsearch(&set[i], left, n, sizeof(key_t_), model_cmp);
      rc = mdbx_get(txn, plain, &q, &v);
      if (rc == MDBX_SUCCESS)
        ++found;
      else if (rc == MDBX_NOTFOUND)
        ++absent;
      else
        MUST(rc);
      if ((rc == MDBX_SUCCESS) != (hit != NULL))
        fail("a get disagrees with the model", i);
      /* SET_RANGE: the first key >= the probe. */
      k = q;
      rc = mdbx_cursor_get(c, &k, &v, MDBX_SET_RANGE);
      size_t lo = 0, hi = n;
      while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (model_cmp(&left[mid], &set[i]) < 0)
          lo = mid + 1;
        else
          hi = mid;
      }
      if (rc == MDBX_NOTFOUND) {
        if (lo != n)
          fail("SET_RANGE found nothing", i);
        fold("", 0);
      } else {
        MUST(rc);
        if (lo == n || k.iov_len != left[lo].len || memcmp(k.iov_base, left[lo].b, k.iov_len) != 0)
          fail("SET_RANGE landed elsewhere", i);
        fold(k.iov_base, k.iov_len);
      }
    }
  }
  printf("gets: %zu found, %zu absent; seeks digest %016llx\n", found, absent, (unsigned long long)digest);

  /* The dupsort table: each value sought with GET_BOTH_RANGE under its key. */
  MDBX_cursor *dc;
  MUST(mdbx_cursor_open(txn, dups, &dc));
  digest = 1469598103934665603ull;
  for (size_t i = 0; i < KEYS; ++i) {
    uint8_t dk = (uint8_t)(i % DUP_KEYS);
    MDBX_val d = {&dk, 1}, q = {probes[i].b, probes[i].len};
    rc = mdbx_cursor_get(dc, &d, &q, MDBX_GET_BOTH_RANGE);
    if (rc == MDBX_NOTFOUND)
      fold("", 0);
    else {
      MUST(rc);
      key_t_ got = {(uint8_t)q.iov_len, {0}};
      memcpy(got.b, q.iov_base, q.iov_len);
      if (model_cmp(&got, &probes[i]) < 0)
        fail("GET_BOTH_RANGE landed below the value sought", i);
      fold(q.iov_base, q.iov_len);
    }
  }
  printf("dupsort seeks digest %016llx\n", (unsigned long long)digest);
  mdbx_cursor_close(dc);
  mdbx_cursor_close(c);
  mdbx_txn_abort(txn);
  MUST(mdbx_env_close(env));
  if (failures) {
    printf("%d failures\n", failures);
    return 1;
  }
  printf("OK\n");
  return 0;
}
