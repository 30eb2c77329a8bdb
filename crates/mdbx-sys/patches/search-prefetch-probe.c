/* A probe of the machine, not a check: random point gets over a table of N entries (8-byte
 * big-endian keys, 48-byte values, loaded with MDBX_APPEND), GETS a round, ROUNDS rounds in one
 * read transaction; prints the nanoseconds a get of each round, and fails when the sum of the
 * values read is not the one the keys give. With N = 1,000,000 the table (about 70 MiB) is beyond
 * the CPU caches and most probes of a search miss them; with N = 20,000 it is hot. Used for
 * libmdbx-0.14.4-search-prefetch.md: build it against the pristine and the patched libmdbx and
 * run the two one after the other, several times.
 *
 *   cc -O2 -pthread -DNDEBUG -DMDBX_TXN_CHECKOWNER=0 -DMDBX_BUILD_FLAGS='""' -I <crate>/libmdbx \
 *      patches/search-prefetch-probe.c <crate>/libmdbx/mdbx.c -o probe
 *   ./probe FILE [N [GETS [ROUNDS]]] 2> /dev/null      (FILE is created on the first run)
 */
#include "mdbx.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MUST(expr)                                                                                                     \
  do {                                                                                                                 \
    int rc_ = (expr);                                                                                                  \
    if (rc_ != MDBX_SUCCESS) {                                                                                         \
      fprintf(stderr, "%s: %s\n", #expr, mdbx_strerror(rc_));                                                          \
      exit(1);                                                                                                         \
    }                                                                                                                  \
  } while (0)

static uint64_t state = 88172645463325252ull;

/* xorshift64: the same keys on every run. */
static uint64_t next_random(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

/* The stored key of entry i: i * 7, big-endian (so byte order is numeric order). */
static uint64_t key_of(uint64_t i) { return __builtin_bswap64(i * 7); }

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE [N [GETS [ROUNDS]]]\n", argv[0]);
    return 2;
  }
  const uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
  const size_t gets = argc > 3 ? strtoull(argv[3], NULL, 10) : 2000000;
  const int rounds = argc > 4 ? atoi(argv[4]) : 5;
  MDBX_env *env;
  MDBX_txn *txn;
  MDBX_dbi dbi;
  MUST(mdbx_env_create(&env));
  MUST(mdbx_env_set_geometry(env, -1, -1, (intptr_t)1 << 34, -1, -1, -1));
  MUST(mdbx_env_set_maxdbs(env, 8));
  MUST(mdbx_env_open(env, argv[1], MDBX_NOSUBDIR | MDBX_LIFORECLAIM | MDBX_NORDAHEAD | MDBX_SAFE_NOSYNC, 0644));

  MUST(mdbx_txn_begin(env, NULL, 0, &txn));
  MUST(mdbx_dbi_open(txn, "t", MDBX_CREATE, &dbi));
  MDBX_stat stat;
  MUST(mdbx_dbi_stat(txn, dbi, &stat, sizeof(stat)));
  if (stat.ms_entries == 0) {
    MDBX_cursor *cursor;
    MUST(mdbx_cursor_open(txn, dbi, &cursor));
    for (uint64_t i = 0; i < n; i++) {
      uint64_t key = key_of(i);
      uint8_t value[48];
      memset(value, (int)i, sizeof(value));
      memcpy(value, &i, sizeof(i));
      MDBX_val k = {&key, sizeof(key)}, v = {value, sizeof(value)};
      MUST(mdbx_cursor_put(cursor, &k, &v, MDBX_APPEND));
    }
    mdbx_cursor_close(cursor);
  } else if (stat.ms_entries != n) {
    fprintf(stderr, "%s holds %llu entries, not %llu: use another file\n", argv[1],
            (unsigned long long)stat.ms_entries, (unsigned long long)n);
    return 1;
  }
  MUST(mdbx_txn_commit(txn));

  MUST(mdbx_txn_begin(env, NULL, MDBX_TXN_RDONLY, &txn));
  uint64_t *entries = malloc(gets * sizeof(uint64_t));
  uint64_t expected = 0;
  for (size_t i = 0; i < gets; i++) {
    entries[i] = next_random() % n;
    expected += entries[i];
  }
  for (int r = 0; r < rounds; r++) {
    uint64_t sum = 0;
    const double start = now_ns();
    for (size_t i = 0; i < gets; i++) {
      uint64_t key = key_of(entries[i]), read;
      MDBX_val k = {&key, sizeof(key)}, v;
      MUST(mdbx_get(txn, dbi, &k, &v));
      memcpy(&read, v.iov_base, sizeof(read));
      sum += read;
    }
    const double elapsed = now_ns() - start;
    if (sum != expected) {
      fprintf(stderr, "the values read do not match the keys\n");
      return 1;
    }
    printf("%.1f\n", elapsed / gets);
  }
  free(entries);
  mdbx_txn_abort(txn);
  mdbx_env_close(env);
  return 0;
}
