/* Check for libmdbx-0.14.4-big-dpl.patch: write transactions whose dirty-page lists grow to
 * tens of thousands of pages and then free many of them give the same database as a model, on
 * the pristine and on the patched libmdbx.
 *
 * The patch changes three things that only big transactions reach: an unsorted tail sorted and
 * merged instead of the whole list radix-sorted, a loose-page batch that grows with the list,
 * and a full dirty room freed by merging the whole loose list. So each configuration below fills
 * a table in one transaction and then, in one transaction each, deletes half of it in random
 * order, walks it deleting every other entry ("retain"), and runs a parent transaction with a
 * child that deletes and aborts and one that deletes and commits. After every transaction the
 * table is walked and compared with the model (one version per index, 0: absent): the count, each
 * value the one its version makes, a checksum printed; mdbx_env_chk at the end of each
 * configuration.
 *
 * An entry is a 16-byte key (a hash of its index, then the index) and a value of 24 to 151 bytes
 * made from the index and a version. Configurations (rows; MDBX_opt_txn_dp_limit, 0: libmdbx's
 * default; MDBX_opt_loose_limit, 0: the default 64):
 *   full     400,000 rows, limits 0/0 and 65,536/0 and 8,192/0;
 *   audited  20,000 rows, limits 4,096/4 and 1,024/4, with libmdbx's runtime assertions and audit
 *            on (MDBX_DBG_ASSERT | MDBX_DBG_AUDIT: every page touch checks the dirty-page list,
 *            every commit the page accounting); a loose limit of 4 lets the batch outgrow it in
 *            lists this short.
 * The patched build is run with patches/big-dpl-probe.h included into its mdbx.c, which counts
 * the patch's three paths (big-dpl-check.sh requires each taken).
 *
 *   cc -O1 -pthread -DMDBX_CHECKING=3 -I LIBMDBX big-dpl-check.c LIBMDBX/mdbx.c -o check
 *   mkdir DIR && ./check DIR full && ./check DIR audited
 */
#include "mdbx.h"
#include "env-chk.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *stage = "opening";

#define CHECK(rc, what)                                                                            \
  do {                                                                                             \
    int rc_ = (rc);                                                                                \
    if (rc_ != MDBX_SUCCESS) {                                                                     \
      printf("FAIL: %s: %s: %s (%d)\n", stage, what, mdbx_strerror(rc_), rc_);                     \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint64_t rng_state;
static uint64_t next_random(void) { return mix(rng_state++); }

static void key_of(uint32_t index, unsigned char key[16]) {
  uint64_t a = mix(index), b = index;
  memcpy(key, &a, 8);
  memcpy(key + 8, &b, 8);
}

static uint32_t index_of(const MDBX_val *k) {
  uint64_t b;
  memcpy(&b, (const char *)k->iov_base + 8, 8);
  return (uint32_t)b;
}

static size_t value_of(uint32_t index, uint8_t version, unsigned char value[152]) {
  uint64_t seed = mix(((uint64_t)index << 8) | version);
  size_t len = 24 + (size_t)(seed % 128);
  for (size_t i = 0; i < len; i += 8) {
    uint64_t w = mix(seed + i);
    memcpy(value + i, &w, 8);
  }
  return len;
}

/* The model: the version of each index (0: absent), for the rows of the configuration. */
static uint8_t *model, *saved;
static uint32_t rows, present;

static void put(MDBX_txn *txn, MDBX_dbi dbi, uint32_t index, uint8_t version) {
  unsigned char key[16], value[152];
  key_of(index, key);
  MDBX_val k = {key, 16}, v = {value, value_of(index, version, value)};
  CHECK(mdbx_put(txn, dbi, &k, &v, MDBX_UPSERT), "mdbx_put");
  present += !model[index];
  model[index] = version;
}

static void del(MDBX_txn *txn, MDBX_dbi dbi, uint32_t index) {
  unsigned char key[16];
  key_of(index, key);
  MDBX_val k = {key, 16};
  CHECK(mdbx_del(txn, dbi, &k, NULL), "mdbx_del");
  model[index] = 0;
  present--;
}

/* The indices 0..rows-1 in a random order (Fisher-Yates with the program's generator). */
static uint32_t *shuffled(void) {
  uint32_t *order = malloc(sizeof(uint32_t) * rows);
  if (!order) {
    printf("FAIL: out of memory\n");
    exit(1);
  }
  for (uint32_t i = 0; i < rows; ++i)
    order[i] = i;
  for (uint32_t i = rows - 1; i > 0; --i) {
    uint32_t j = (uint32_t)(next_random() % (i + 1)), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  return order;
}

/* Walks the table in `txn` and compares it with the model; prints the count and a checksum. */
static void verify(MDBX_txn *txn, MDBX_dbi dbi, const char *what) {
  MDBX_cursor *c;
  CHECK(mdbx_cursor_open(txn, dbi, &c), "cursor");
  MDBX_val k, v;
  uint64_t count = 0, sum = 0;
  int rc;
  for (rc = mdbx_cursor_get(c, &k, &v, MDBX_FIRST); rc == MDBX_SUCCESS; rc = mdbx_cursor_get(c, &k, &v, MDBX_NEXT)) {
    unsigned char want[152];
    uint32_t index = k.iov_len == 16 ? index_of(&k) : rows;
    if (index >= rows || !model[index]) {
      printf("FAIL: %s: entry %" PRIu64 " is not in the model\n", what, count);
      exit(1);
    }
    size_t len = value_of(index, model[index], want);
    if (v.iov_len != len || memcmp(want, v.iov_base, len) != 0) {
      printf("FAIL: %s: entry %" PRIu64 " (index %u) has the wrong value\n", what, count, index);
      exit(1);
    }
    sum = mix(sum ^ ((uint64_t)index << 8 | model[index]));
    ++count;
  }
  if (rc != MDBX_NOTFOUND)
    CHECK(rc, "walk");
  mdbx_cursor_close(c);
  if (count != present) {
    printf("FAIL: %s: %" PRIu64 " entries, the model has %u\n", what, count, present);
    exit(1);
  }
  printf("%s: %" PRIu64 " entries as the model, checksum %016" PRIx64 "\n", what, count, sum);
}

static void verify_latest(MDBX_env *env, MDBX_dbi dbi, const char *what) {
  MDBX_txn *txn;
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_RDONLY, &txn), "begin read");
  verify(txn, dbi, what);
  mdbx_txn_abort(txn);
}

/* Deletes every other present entry, walking a cursor (the retain of Tabula's bench). */
static void retain(MDBX_txn *txn, MDBX_dbi dbi) {
  MDBX_cursor *c;
  CHECK(mdbx_cursor_open(txn, dbi, &c), "cursor");
  MDBX_val k, v;
  int rc = mdbx_cursor_get(c, &k, &v, MDBX_FIRST);
  for (uint64_t n = 0; rc == MDBX_SUCCESS; ++n) {
    if (n % 2) {
      rc = mdbx_cursor_get(c, &k, &v, MDBX_NEXT);
      continue;
    }
    uint32_t index = index_of(&k);
    CHECK(mdbx_cursor_del(c, MDBX_CURRENT), "cursor_del");
    model[index] = 0;
    present--;
    /* after a delete the cursor stands on the next entry, or at the end */
    rc = mdbx_cursor_get(c, &k, &v, MDBX_GET_CURRENT);
    if (rc == MDBX_NOTFOUND || rc == MDBX_ENODATA)
      rc = mdbx_cursor_get(c, &k, &v, MDBX_NEXT);
  }
  if (rc != MDBX_NOTFOUND)
    CHECK(rc, "walk");
  mdbx_cursor_close(c);
}

static void run(const char *dir, uint32_t n, unsigned dp_limit, unsigned loose_limit) {
  char what[128], name[64];
  snprintf(name, sizeof(name), "%u rows, dp_limit %u, loose_limit %u", n, dp_limit, loose_limit);
  if (mkdir(dir, 0755) != 0) {
    printf("FAIL: cannot create %s\n", dir);
    exit(1);
  }
  rows = n;
  present = 0;
  model = calloc(rows, 1);
  saved = calloc(rows, 1);
  if (!model || !saved) {
    printf("FAIL: out of memory\n");
    exit(1);
  }
  rng_state = 0x5851F42D4C957F2Dull ^ ((uint64_t)n << 32) ^ dp_limit ^ ((uint64_t)loose_limit << 20);

  MDBX_env *env;
  CHECK(mdbx_env_create(&env), "mdbx_env_create");
  CHECK(mdbx_env_set_option(env, MDBX_opt_max_db, 2), "max_db");
  CHECK(mdbx_env_set_geometry(env, -1, -1, 4l << 30, 1 << 22, -1, 4096), "geometry");
  if (dp_limit)
    CHECK(mdbx_env_set_option(env, MDBX_opt_txn_dp_limit, dp_limit), "txn_dp_limit");
  if (loose_limit)
    CHECK(mdbx_env_set_option(env, MDBX_opt_loose_limit, loose_limit), "loose_limit");
  /* MDBX_opt_spill_parent4child_denominator stays 0: with it set, the pristine libmdbx 0.14.4
   * fails its assertion `(scan->flags & MDBX_TXN_SPILLS) != 0` in page_unspill here (see
   * libmdbx-0.14.4-big-dpl.md, "Noticed"); so the parent leaves its children room instead. */
  CHECK(mdbx_env_open(env, dir, MDBX_NOSTICKYTHREADS, 0644), "mdbx_env_open");
  CHECK(mdbx_env_set_option(env, MDBX_opt_prefer_waf_insteadof_balance, 0), "balance");
  MDBX_txn *txn, *child;
  MDBX_dbi dbi;

  stage = "fill";
  uint32_t *order = shuffled();
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
  CHECK(mdbx_dbi_open(txn, "t", MDBX_CREATE, &dbi), "dbi_open");
  for (uint32_t i = 0; i < rows; ++i)
    put(txn, dbi, order[i], 1);
  CHECK(mdbx_txn_commit(txn), "commit");
  snprintf(what, sizeof(what), "%s: fill", name);
  verify_latest(env, dbi, what);

  stage = "delete half";
  free(order);
  order = shuffled();
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
  for (uint32_t i = 0; i < rows / 2; ++i)
    del(txn, dbi, order[i]);
  CHECK(mdbx_txn_commit(txn), "commit");
  snprintf(what, sizeof(what), "%s: delete half", name);
  verify_latest(env, dbi, what);

  stage = "retain";
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
  retain(txn, dbi);
  CHECK(mdbx_txn_commit(txn), "commit");
  snprintf(what, sizeof(what), "%s: retain every other", name);
  verify_latest(env, dbi, what);

  /* A parent that re-inserts a quarter of the rows (a quarter of a set dirty-page limit), a
   * child that deletes a sixteenth of them (an eighth of a set limit) and aborts, one that does
   * the same and commits, then the parent deletes a quarter of the rows. A child's room is what
   * its parent left. */
  stage = "nested";
  free(order);
  order = shuffled();
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
  for (uint32_t i = 0; i < (dp_limit ? dp_limit / 4 : rows / 4); ++i)
    put(txn, dbi, order[i], 2);
  for (int commit = 0; commit < 2; ++commit) {
    memcpy(saved, model, rows);
    uint32_t saved_present = present;
    CHECK(mdbx_txn_begin(env, txn, MDBX_TXN_READWRITE, &child), "begin child");
    const uint32_t deletes = dp_limit ? dp_limit / 8 : rows / 16;
    for (uint32_t i = 0, done = 0; i < rows && done < deletes; ++i) {
      uint32_t x = order[rows - 1 - i];
      if (model[x]) {
        del(child, dbi, x);
        ++done;
      }
    }
    if (commit)
      CHECK(mdbx_txn_commit(child), "commit child");
    else {
      CHECK(mdbx_txn_abort(child), "abort child");
      memcpy(model, saved, rows);
      present = saved_present;
    }
    snprintf(what, sizeof(what), "%s: nested, after the %s child", name, commit ? "committed" : "aborted");
    verify(txn, dbi, what);
  }
  for (uint32_t i = 0; i < rows / 4; ++i)
    if (model[order[i]])
      del(txn, dbi, order[i]);
  CHECK(mdbx_txn_commit(txn), "commit");
  snprintf(what, sizeof(what), "%s: nested", name);
  verify_latest(env, dbi, what);
  free(order);

  env_chk_or_exit(env, name);
  CHECK(mdbx_env_close(env), "close");
  free(model);
  free(saved);
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[2], "full") != 0 && strcmp(argv[2], "audited") != 0)) {
    fprintf(stderr, "usage: %s DIR full|audited   (DIR: a directory to create databases in)\n", argv[0]);
    return 2;
  }
  const int audited = strcmp(argv[2], "audited") == 0;
  static const unsigned full[][3] = {{400000, 0, 0}, {400000, 65536, 0}, {400000, 8192, 0}};
  static const unsigned small[][3] = {{20000, 4096, 4}, {20000, 1024, 4}};
  const unsigned(*configs)[3] = audited ? small : full;
  const size_t count = audited ? 2 : 3;
  mdbx_setup_debug(MDBX_LOG_WARN, audited ? MDBX_DBG_ASSERT | MDBX_DBG_AUDIT : MDBX_DBG_NONE, MDBX_LOGGER_DONTCHANGE);
  for (size_t i = 0; i < count; ++i) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s-%zu", argv[1], argv[2], i);
    run(path, configs[i][0], configs[i][1], configs[i][2]);
  }
  printf("OK\n");
  return 0;
}
