/* Check for libmdbx-0.14.4-dpl-tail.patch: big write transactions that spill give the same
 * database as a model, on the pristine and on the patched libmdbx.
 *
 * The patch changes when the dirty-page list's unsorted tail is merged. The tail grows once a
 * transaction has spilled: a spilled page changed again is read back ("unspilled") and goes
 * back into the list out of order. So this program forces spills: a low MDBX_opt_txn_dp_limit
 * (1,024 and 8,192 pages; 256 and 1,024 in the audited mode), and transactions that insert,
 * update (with a new value, mostly of another size) and delete random entries across many
 * more pages than the limit, in one transaction each.
 *
 * An entry is a 24-byte key made from its index (two hashed words first, so the index order is
 * not the key order, then the index) and a value of 40 to 219 bytes made from the index and a
 * version. The model is one version number per index (0: absent). After each transaction the
 * table is walked and every entry compared with the model: same count, each value the one its
 * version makes. The rounds, for each limit (operation counts of the full mode; the audited
 * mode does a tenth):
 *   1. 150,000 random inserts in one transaction;
 *   2. one transaction of 200,000 random operations (40 % updates, 30 % deletes, 30 % inserts)
 *      while a read transaction holds round 1's snapshot (checked after the commit);
 *   3. the same mix, 100,000 operations, checked inside the transaction, then aborted (the
 *      table must still be round 2's);
 *   4. a transaction of 60,000 operations with nested ones inside (the parent spills half its
 *      dirty pages when a child starts): one child of limit/8 operations committed, one
 *      aborted, then 60,000 more in the parent;
 *   5. a cursor walk deleting all but one entry in 16, with 32 inserts after every 256 steps.
 * Each round prints the pages spilled and read back during it (mdbx_env_info_ex's
 * mi_pgop_stat); the program fails if no page was spilled or none read back over the run, or
 * if mdbx_env_chk (the checker the mdbx_chk tool runs) finds a problem at the end.
 *
 * Built with MDBX_CHECKING=3 (libmdbx's lite assertions always on). In the audited mode
 * libmdbx's runtime assertions and audit are on too (MDBX_DBG_ASSERT | MDBX_DBG_AUDIT): every
 * page touch checks the dirty-page list, every dirty-page search that its sorted part is
 * sorted, every commit the page accounting. They cost a pass over the list per page touched,
 * hence the smaller sizes.
 *
 *   cc -O1 -pthread -DMDBX_CHECKING=3 -I LIBMDBX dpl-tail-check.c LIBMDBX/mdbx.c -o check
 *   mkdir DIR && ./check DIR full && ./check DIR audited
 *
 * With patches/dpl-tail-probe.h included into the patched libmdbx (dpl-tail-check.sh does), the
 * counts of the patch's new path are printed to stderr.
 */
#include "mdbx.h"
#include "env-chk.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Set by patches/dpl-tail-probe.h's MDBX_DPL_UNSORTED_TAIL in the patched build. */
unsigned long long dpl_tail_scans, dpl_tail_merges, dpl_tail_longest;

/* What the program is doing, for the failure message. */
static const char *stage = "opening";

#define CHECK(rc, what)                                                                            \
  do {                                                                                             \
    int rc_ = (rc);                                                                                \
    if (rc_ != MDBX_SUCCESS) {                                                                     \
      printf("FAIL: %s: %s: %s (%d)\n", stage, what, mdbx_strerror(rc_), rc_);                     \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

#define INDICES 400000u

static uint64_t rng_state;
static uint64_t next_random(void) {
  uint64_t x = rng_state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rng_state = x;
  return x * 0x2545F4914F6CDD1Dull;
}

static uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static void key_of(uint32_t index, unsigned char key[24]) {
  uint64_t a = mix(index), b = mix((uint64_t)index ^ 0xA5A5A5A5ull), c = index;
  memcpy(key, &a, 8);
  memcpy(key + 8, &b, 8);
  memcpy(key + 16, &c, 8);
}

static uint32_t index_of(const unsigned char key[24]) {
  uint64_t c;
  memcpy(&c, key + 16, 8);
  return (uint32_t)c;
}

/* The value of an index at a version; returns its length (40 to 219 bytes). */
static size_t value_of(uint32_t index, uint16_t version, unsigned char value[224]) {
  uint64_t seed = mix(((uint64_t)index << 16) | version);
  size_t len = 40 + (size_t)(seed % 180);
  for (size_t i = 0; i < len; i += 8) {
    uint64_t w = mix(seed + i);
    memcpy(value + i, &w, 8);
  }
  return len;
}

/* The model: the version of each index, 0 when it is absent. */
typedef struct {
  uint16_t version[INDICES];
  uint32_t count;
} model_t;

static void model_copy(model_t *to, const model_t *from) { memcpy(to, from, sizeof(*to)); }

static void put(MDBX_txn *txn, MDBX_dbi dbi, model_t *m, uint32_t index, uint16_t version) {
  unsigned char key[24], value[224];
  key_of(index, key);
  MDBX_val k = {key, 24}, v = {value, value_of(index, version, value)};
  CHECK(mdbx_put(txn, dbi, &k, &v, MDBX_UPSERT), "mdbx_put");
  if (!m->version[index])
    m->count++;
  m->version[index] = version;
}

static void del(MDBX_txn *txn, MDBX_dbi dbi, model_t *m, uint32_t index) {
  unsigned char key[24];
  key_of(index, key);
  MDBX_val k = {key, 24};
  CHECK(mdbx_del(txn, dbi, &k, NULL), "mdbx_del");
  m->version[index] = 0;
  m->count--;
}

/* A random present index (there is at least one), or a random absent one. */
static uint32_t pick(const model_t *m, int present) {
  for (;;) {
    uint32_t i = (uint32_t)(next_random() % INDICES);
    if ((m->version[i] != 0) == present)
      return i;
  }
}

/* `n` random operations: 40 % updates (a new version: another value, mostly another size),
 * 30 % deletes, 30 % inserts of absent indices. */
static void mixed(MDBX_txn *txn, MDBX_dbi dbi, model_t *m, unsigned n) {
  for (unsigned i = 0; i < n; ++i) {
    unsigned r = (unsigned)(next_random() % 10);
    if (m->count == 0 || (r >= 7 && m->count < INDICES * 3 / 4))
      put(txn, dbi, m, pick(m, 0), 1);
    else if (r < 4) {
      uint32_t x = pick(m, 1);
      put(txn, dbi, m, x, (uint16_t)(m->version[x] % 60000 + 1));
    } else
      del(txn, dbi, m, pick(m, 1));
  }
}

/* Walks the table in `txn` and compares it with `m`; prints the count and a checksum. */
static void verify(MDBX_txn *txn, MDBX_dbi dbi, const model_t *m, const char *what) {
  MDBX_cursor *c;
  CHECK(mdbx_cursor_open(txn, dbi, &c), "cursor");
  MDBX_val k, v;
  uint64_t count = 0, sum = 0;
  int rc;
  for (rc = mdbx_cursor_get(c, &k, &v, MDBX_FIRST); rc == MDBX_SUCCESS; rc = mdbx_cursor_get(c, &k, &v, MDBX_NEXT)) {
    unsigned char want[224];
    uint32_t index = k.iov_len == 24 ? index_of(k.iov_base) : INDICES;
    if (index >= INDICES || !m->version[index]) {
      printf("FAIL: %s: entry %" PRIu64 " is not in the model\n", what, count);
      exit(1);
    }
    size_t len = value_of(index, m->version[index], want);
    if (v.iov_len != len || memcmp(want, v.iov_base, len) != 0) {
      printf("FAIL: %s: entry %" PRIu64 " (index %u) has the wrong value\n", what, count, index);
      exit(1);
    }
    sum = mix(sum ^ ((uint64_t)index << 16 | m->version[index]));
    ++count;
  }
  if (rc != MDBX_NOTFOUND)
    CHECK(rc, "walk");
  mdbx_cursor_close(c);
  if (count != m->count) {
    printf("FAIL: %s: %" PRIu64 " entries, the model has %u\n", what, count, m->count);
    exit(1);
  }
  printf("%s: %" PRIu64 " entries as the model, checksum %016" PRIx64 "\n", what, count, sum);
}

static void verify_latest(MDBX_env *env, MDBX_dbi dbi, const model_t *m, const char *what) {
  MDBX_txn *txn;
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_RDONLY, &txn), "begin read");
  verify(txn, dbi, m, what);
  mdbx_txn_abort(txn);
}

static uint64_t spilled_total, unspilled_total, spilled_seen, unspilled_seen;

/* Prints the pages spilled and read back since the last call. */
static void spills(MDBX_env *env, const char *what) {
  MDBX_envinfo info;
  CHECK(mdbx_env_info_ex(env, NULL, &info, sizeof(info)), "env_info");
  uint64_t s = info.mi_pgop_stat.spill - spilled_seen, u = info.mi_pgop_stat.unspill - unspilled_seen;
  spilled_seen = info.mi_pgop_stat.spill;
  unspilled_seen = info.mi_pgop_stat.unspill;
  spilled_total += s;
  unspilled_total += u;
  printf("%s: %" PRIu64 " pages spilled, %" PRIu64 " read back\n", what, s, u);
}

static model_t model, before, snapshot, inner;

/* The operation counts above are divided by this (10 in the audited mode). */
static unsigned scale = 1;

static void run(const char *dir, unsigned dp_limit) {
  if (mkdir(dir, 0755) != 0) {
    printf("FAIL: cannot create %s\n", dir);
    exit(1);
  }
  MDBX_env *env;
  CHECK(mdbx_env_create(&env), "mdbx_env_create");
  CHECK(mdbx_env_set_option(env, MDBX_opt_max_db, 2), "max_db");
  CHECK(mdbx_env_set_geometry(env, -1, -1, 1l << 31, 1 << 20, -1, 4096), "geometry");
  CHECK(mdbx_env_set_option(env, MDBX_opt_txn_dp_limit, dp_limit), "txn_dp_limit");
  /* A child transaction starts by spilling half of its parent's dirty pages (libmdbx's default
   * spills none, and a child of a parent at its limit has no room: MDBX_TXN_FULL). */
  CHECK(mdbx_env_set_option(env, MDBX_opt_spill_parent4child_denominator, 2), "parent4child");
  CHECK(mdbx_env_open(env, dir, MDBX_NOSTICKYTHREADS, 0644), "mdbx_env_open");
  CHECK(mdbx_env_set_option(env, MDBX_opt_prefer_waf_insteadof_balance, 0), "balance");
  uint64_t limit;
  CHECK(mdbx_env_get_option(env, MDBX_opt_txn_dp_limit, &limit), "get txn_dp_limit");
  printf("dp_limit %u: the env's dirty-page limit is %" PRIu64 " pages\n", dp_limit, limit);
  spilled_seen = unspilled_seen = 0;
  {
    MDBX_envinfo info;
    CHECK(mdbx_env_info_ex(env, NULL, &info, sizeof(info)), "env_info");
    spilled_seen = info.mi_pgop_stat.spill;
    unspilled_seen = info.mi_pgop_stat.unspill;
  }
  memset(&model, 0, sizeof(model));
  rng_state = 0x9E3779B97F4A7C15ull ^ dp_limit;
  MDBX_txn *txn, *nested, *reader;
  MDBX_dbi dbi;
  char what[96];

  /* 1. inserts */
  stage = "round 1";
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
  CHECK(mdbx_dbi_open(txn, "t", MDBX_CREATE, &dbi), "dbi_open");
  for (unsigned i = 0; i < 150000 / scale; ++i)
    put(txn, dbi, &model, pick(&model, 0), 1);
  CHECK(mdbx_txn_commit(txn), "commit 1");
  snprintf(what, sizeof(what), "dp_limit %u round 1 (inserts)", dp_limit);
  spills(env, what);
  verify_latest(env, dbi, &model, what);

  /* 2. the mix, beside a reader of round 1's snapshot */
  stage = "round 2";
  model_copy(&snapshot, &model);
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_RDONLY, &reader), "begin reader");
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
  mixed(txn, dbi, &model, 200000 / scale);
  CHECK(mdbx_txn_commit(txn), "commit 2");
  snprintf(what, sizeof(what), "dp_limit %u round 2 (mixed)", dp_limit);
  spills(env, what);
  verify_latest(env, dbi, &model, what);
  snprintf(what, sizeof(what), "dp_limit %u round 2, reader of round 1", dp_limit);
  verify(reader, dbi, &snapshot, what);
  mdbx_txn_abort(reader);

  /* 3. the mix, aborted */
  stage = "round 3";
  model_copy(&before, &model);
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
  mixed(txn, dbi, &model, 100000 / scale);
  snprintf(what, sizeof(what), "dp_limit %u round 3, inside the txn", dp_limit);
  verify(txn, dbi, &model, what);
  CHECK(mdbx_txn_abort(txn), "abort 3");
  model_copy(&model, &before);
  snprintf(what, sizeof(what), "dp_limit %u round 3 (aborted)", dp_limit);
  spills(env, what);
  verify_latest(env, dbi, &model, what);

  /* 4. nested transactions. A child's room is what its parent has left (half the limit here,
   * the parent spills half its dirty pages when a child starts), and a child cannot spill a
   * page its parent spilled: mdbx.h (MDBX_opt_spill_parent4child_denominator) says a child
   * may reach MDBX_TXN_FULL either way. So each child does an eighth of the limit's worth of
   * operations, on pages its parent spilled or not. */
  stage = "round 4, parent";
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
  mixed(txn, dbi, &model, 60000 / scale);
  model_copy(&inner, &model);
  stage = "round 4, first child";
  CHECK(mdbx_txn_begin(env, txn, MDBX_TXN_READWRITE, &nested), "begin nested");
  mixed(nested, dbi, &inner, dp_limit / 8);
  CHECK(mdbx_txn_commit(nested), "commit nested");
  model_copy(&model, &inner);
  stage = "round 4, second child";
  CHECK(mdbx_txn_begin(env, txn, MDBX_TXN_READWRITE, &nested), "begin nested");
  mixed(nested, dbi, &inner, dp_limit / 8);
  CHECK(mdbx_txn_abort(nested), "abort nested");
  snprintf(what, sizeof(what), "dp_limit %u round 4, after the aborted child", dp_limit);
  verify(txn, dbi, &model, what);
  stage = "round 4, parent after the children";
  mixed(txn, dbi, &model, 60000 / scale);
  CHECK(mdbx_txn_commit(txn), "commit 4");
  snprintf(what, sizeof(what), "dp_limit %u round 4 (nested)", dp_limit);
  spills(env, what);
  verify_latest(env, dbi, &model, what);

  stage = "round 5";
  /* 5. a cursor walk deleting all but one in 16, with 32 inserts after every 256 steps (the
   * walk's cursor is closed around them and set again at the key it had reached) */
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
  {
    unsigned char resume[24];
    int rc, started = 0;
    for (;;) {
      MDBX_cursor *c;
      CHECK(mdbx_cursor_open(txn, dbi, &c), "cursor");
      MDBX_val k = {resume, 24}, v;
      rc = mdbx_cursor_get(c, &k, &v, started ? MDBX_SET_RANGE : MDBX_FIRST);
      started = 1;
      for (unsigned step = 0; rc == MDBX_SUCCESS && step < 256; ++step) {
        uint32_t index = index_of(k.iov_base);
        if (mix(index) % 16 != 0) {
          unsigned char deleted[24];
          memcpy(deleted, k.iov_base, 24);
          CHECK(mdbx_cursor_del(c, MDBX_CURRENT), "cursor_del");
          model.version[index] = 0;
          model.count--;
          /* on to the first entry after the deleted key */
          k.iov_base = deleted;
          k.iov_len = 24;
          rc = mdbx_cursor_get(c, &k, &v, MDBX_SET_RANGE);
        } else
          rc = mdbx_cursor_get(c, &k, &v, MDBX_NEXT);
      }
      if (rc == MDBX_SUCCESS)
        memcpy(resume, k.iov_base, 24);
      mdbx_cursor_close(c);
      if (rc != MDBX_SUCCESS)
        break;
      for (unsigned i = 0; i < 32; ++i)
        put(txn, dbi, &model, pick(&model, 0), 2);
    }
    if (rc != MDBX_NOTFOUND)
      CHECK(rc, "walk");
  }
  CHECK(mdbx_txn_commit(txn), "commit 5");
  snprintf(what, sizeof(what), "dp_limit %u round 5 (walk and delete)", dp_limit);
  spills(env, what);
  verify_latest(env, dbi, &model, what);

  snprintf(what, sizeof(what), "dp_limit %u", dp_limit);
  env_chk_or_exit(env, what);
  CHECK(mdbx_env_close(env), "close");
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[2], "full") != 0 && strcmp(argv[2], "audited") != 0)) {
    fprintf(stderr, "usage: %s DIR full|audited   (DIR: a directory to create databases in)\n", argv[0]);
    return 2;
  }
  /* full: the sizes above, with the build's lite checks only (MDBX_CHECKING's unconditional
   * assertions); audited: a tenth of them with libmdbx's runtime assertions and audit on (they
   * cost a pass over the dirty-page list per page touched, too slow at full size). */
  const int audited = strcmp(argv[2], "audited") == 0;
  static const unsigned full_limits[] = {1024, 8192}, audited_limits[] = {256, 1024};
  const unsigned *limits = audited ? audited_limits : full_limits;
  scale = audited ? 10 : 1;
  mdbx_setup_debug(MDBX_LOG_DONTCHANGE, audited ? MDBX_DBG_ASSERT | MDBX_DBG_AUDIT : MDBX_DBG_NONE,
                   MDBX_LOGGER_DONTCHANGE);
  printf("%s: operation counts / %u\n", argv[2], scale);
  for (size_t i = 0; i < 2; ++i) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s-limit%u", argv[1], argv[2], limits[i]);
    run(path, limits[i]);
  }
  printf("spills over the run: %" PRIu64 " pages spilled, %" PRIu64 " read back\n", spilled_total, unspilled_total);
  fprintf(stderr, "dpl-tail probe: %llu searches scanned a tail longer than 7 (the longest %llu), %llu merged\n",
          dpl_tail_scans, dpl_tail_longest, dpl_tail_merges);
  if (spilled_total == 0 || unspilled_total == 0) {
    printf("FAILED: the run did not spill and read back pages, so it does not check the patch\n");
    return 1;
  }
  printf("OK\n");
  return 0;
}
