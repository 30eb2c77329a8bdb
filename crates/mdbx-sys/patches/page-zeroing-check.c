/* Check for libmdbx-0.14.4-page-zeroing.patch: no heap bytes reach the data file, and the
 * database is the same as the pristine libmdbx's.
 *
 * The program replaces malloc, calloc, realloc, free and the aligned allocators (through
 * glibc's __libc_* functions): every block malloc hands out, and every block freed, is filled
 * with the marker "HeApJuNk" repeated, and the address ranges handed out are kept. Every value and key the program writes is lower-case letters (one aborted transaction
 * writes digits), so neither the marker nor an 8-byte word that is a heap address can come
 * from them. After each round the whole data file is read back and searched for
 *   - any 8 bytes of the marker (at any offset, in any phase): heap bytes written to the file;
 *   - any 8-byte aligned word that is an address in a 1 MiB region malloc handed a block out
 *     in: a pointer (a free list's link) written to the file (no word of letters or digits,
 *     0x30..0x39 and 0x61..0x7a, falls in the regions glibc uses, 0x55.., 0x56.. and 0x7f..).
 * The rounds, on three tables (plain; MDBX_DUPSORT; MDBX_DUPSORT | MDBX_DUPFIXED), each ending
 * with a line of entry counts, checksums of every key and value, and leaf pages and depth:
 *   1. 20,000 inserts in one transaction, values of 20 to 300 bytes, one in 8 of 800 to 1,900
 *      (pages of two or three entries), one in 50 of 5,000 to 15,000 (large pages);
 *   2. 300 small transactions of 20 random writes or deletes of 1 % of a table (pages taken
 *      from the reserve);
 *   3. one transaction deleting 60 % of the entries and inserting 3,000 (merged pages);
 *   4. an aborted transaction writing 4,000 values of digits, then 3,000 inserts;
 *   5. nested transactions, one aborted, one committed, rewriting large values in place;
 *   6. a transaction with a dirty-page limit of 256 pages touching every page (spills);
 * then mdbx_env_chk.
 *
 *   ./check DIR strict     fail at the first heap byte or address found in the file
 *   ./check DIR report     print what is found (the pristine libmdbx: see the script)
 *   ./check DIR nomeminit  after round 1, the control: pages malloc'ed under MDBX_NOMEMINIT (an
 *                          aborted transaction) must not reach the file once mdbx_env_set_flags
 *                          has cleared it; with MDBX_NOMEMINIT set, the marker must be found
 *                          (else the check cannot see heap bytes)
 *
 *   cc -O1 -pthread -I LIBMDBX page-zeroing-check.c LIBMDBX/mdbx.c -o check
 */
#include "mdbx.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the heap: every block marked ---- */

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static const unsigned char marker[8] = {'H', 'e', 'A', 'p', 'J', 'u', 'N', 'k'};
/* The 1 MiB regions of the (47-bit) address space that malloc handed out a block in. */
static uint64_t heap_regions[(1ull << 27) / 64];

static int is_heap_address(uint64_t w) {
  return w < (1ull << 47) && (heap_regions[(w >> 20) / 64] >> ((w >> 20) % 64) & 1);
}

static void *marked(void *p) {
  if (p) {
    size_t n = malloc_usable_size(p);
    unsigned char *b = p;
    for (size_t i = 0; i < n; ++i)
      b[i] = marker[i & 7];
    for (uint64_t r = (uintptr_t)p >> 20; r <= ((uintptr_t)p + n) >> 20 && r < (1ull << 27); ++r)
      heap_regions[r / 64] |= 1ull << (r % 64);
  }
  return p;
}

void *malloc(size_t n) { return marked(__libc_malloc(n)); }
void free(void *p) {
  if (p) {
    size_t n = malloc_usable_size(p);
    unsigned char *b = p;
    for (size_t i = 0; i < n; ++i)
      b[i] = marker[i & 7];
    __libc_free(p);
  }
}
void *calloc(size_t a, size_t b) {
  void *p = __libc_calloc(a, b);
  if (p) {
    marked(p);
    memset(p, 0, malloc_usable_size(p));
  }
  return p;
}
void *realloc(void *p, size_t n) {
  if (!p)
    return malloc(n);
  if (!n) {
    free(p);
    return NULL;
  }
  void *q = malloc(n);
  if (q) {
    size_t old = malloc_usable_size(p);
    memcpy(q, p, old < n ? old : n);
    free(p);
  }
  return q;
}
void *memalign(size_t a, size_t n) { return marked(__libc_memalign(a, n)); }
void *aligned_alloc(size_t a, size_t n) { return marked(__libc_memalign(a, n)); }
int posix_memalign(void **r, size_t a, size_t n) {
  void *p = marked(__libc_memalign(a, n));
  if (!p)
    return ENOMEM;
  *r = p;
  return 0;
}

/* ---- the workload ---- */

#define CHECK(rc, what)                                                                            \
  do {                                                                                             \
    int rc_ = (rc);                                                                                \
    if (rc_ != MDBX_SUCCESS) {                                                                     \
      printf("FAIL: %s: %s (%d)\n", what, mdbx_strerror(rc_), rc_);                                \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

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

static uint64_t hash_bytes(const void *p, size_t n, uint64_t h) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; ++i)
    h = (h ^ b[i]) * 0x100000001B3ull;
  return h;
}

/* Fills buf[0..n) with letters ('a'..'z'), or digits when digits != 0, from seed. */
static void fill(unsigned char *buf, size_t n, uint64_t seed, int digits) {
  for (size_t i = 0; i < n; ++i) {
    if ((i & 7) == 0)
      seed = mix(seed + i);
    unsigned r = (unsigned)(seed >> (8 * (i & 7))) & 0xff;
    buf[i] = digits ? (unsigned char)('0' + r % 10) : (unsigned char)('a' + r % 26);
  }
}

enum { PLAIN, DUPS, FIXED, TABLES };
static const char *const names[TABLES] = {"plain", "dups", "fixed"};
static MDBX_dbi dbis[TABLES];
static unsigned char big[16000];

static size_t plain_len(uint64_t r) {
  if (r % 50 == 0)
    return 5000 + (size_t)(r >> 8) % 10000;
  if (r % 8 == 0)
    return 800 + (size_t)(r >> 8) % 1100;
  return 20 + (size_t)(r >> 8) % 280;
}

/* One write to table t, its key and value from r; digits for the aborted transaction. */
static void write_one(MDBX_txn *txn, int t, uint64_t r, int digits) {
  unsigned char key[16];
  fill(key, t == PLAIN ? 16 : 8, r % (t == PLAIN ? UINT64_MAX : 4000), 0);
  MDBX_val k = {key, t == PLAIN ? 16 : 8}, v = {big, 0};
  if (t == PLAIN)
    v.iov_len = plain_len(r);
  else if (t == DUPS)
    v.iov_len = 10 + (size_t)(r >> 12) % 50;
  else
    v.iov_len = 12;
  fill(big, v.iov_len, r ^ 0x5555, digits);
  CHECK(mdbx_put(txn, dbis[t], &k, &v, 0), "mdbx_put");
}

/* Deletes the entries whose hash with salt falls below pct % (a walk of the whole table). */
static void delete_some(MDBX_txn *txn, int t, unsigned pct, uint64_t salt) {
  MDBX_cursor *c;
  CHECK(mdbx_cursor_open(txn, dbis[t], &c), "cursor");
  MDBX_val k, v;
  int rc = mdbx_cursor_get(c, &k, &v, MDBX_FIRST);
  while (rc == MDBX_SUCCESS) {
    uint64_t h = hash_bytes(v.iov_base, v.iov_len < 8 ? v.iov_len : 8, hash_bytes(k.iov_base, k.iov_len, salt));
    if (mix(h) % 100 < pct) {
      CHECK(mdbx_cursor_del(c, MDBX_CURRENT), "cursor_del");
      rc = mdbx_cursor_get(c, &k, &v, MDBX_GET_CURRENT);
      if (rc == MDBX_NOTFOUND || rc == MDBX_ENODATA)
        rc = mdbx_cursor_get(c, &k, &v, MDBX_NEXT);
      continue;
    }
    rc = mdbx_cursor_get(c, &k, &v, MDBX_NEXT);
  }
  if (rc != MDBX_NOTFOUND)
    CHECK(rc, "walk");
  mdbx_cursor_close(c);
}

static void report(MDBX_env *env, const char *what) {
  MDBX_txn *txn;
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_RDONLY, &txn), "begin read");
  printf("%s:", what);
  for (int t = 0; t < TABLES; ++t) {
    MDBX_cursor *c;
    CHECK(mdbx_cursor_open(txn, dbis[t], &c), "cursor");
    MDBX_val k, v;
    uint64_t count = 0, sum = 0;
    for (int rc = mdbx_cursor_get(c, &k, &v, MDBX_FIRST); rc == MDBX_SUCCESS;
         rc = mdbx_cursor_get(c, &k, &v, MDBX_NEXT)) {
      sum = mix(hash_bytes(v.iov_base, v.iov_len, hash_bytes(k.iov_base, k.iov_len, sum)));
      ++count;
    }
    mdbx_cursor_close(c);
    MDBX_stat st;
    CHECK(mdbx_dbi_stat(txn, dbis[t], &st, sizeof(st)), "stat");
    printf(" %s %" PRIu64 " entries, checksum %016" PRIx64 ", %" PRIu64 " leaf %" PRIu64 " large pages, depth %u;",
           names[t], count, sum, (uint64_t)st.ms_leaf_pages, (uint64_t)st.ms_overflow_pages, st.ms_depth);
  }
  printf("\n");
  mdbx_txn_abort(txn);
}

/* ---- the file scan ---- */

static char datafile[4096];
static const char *mode;
static int scans_with_heap;

/* Searches the whole data file (a large page's run as one). Returns the number of findings. */
static uint64_t scan(const char *what) {
  int fd = open(datafile, O_RDONLY);
  if (fd < 0) {
    printf("FAIL: open %s\n", datafile);
    exit(1);
  }
  struct stat sb;
  fstat(fd, &sb);
  size_t size = (size_t)sb.st_size;
  unsigned char *buf = __libc_malloc(size + 8);
  size_t got = 0;
  while (got < size) {
    ssize_t n = pread(fd, buf + got, size - got, (off_t)got);
    if (n <= 0) {
      printf("FAIL: read %s\n", datafile);
      exit(1);
    }
    got += (size_t)n;
  }
  close(fd);
  const size_t ps = 4096;
  uint64_t markers = 0, addresses = 0, pages = 0;
  size_t first_marker = SIZE_MAX, first_address = SIZE_MAX;
  for (size_t pg = 0; pg < size / ps;) {
    size_t run = 1;
    const unsigned char *p = buf + pg * ps;
    uint16_t flags;
    uint32_t npages;
    memcpy(&flags, p + 10, 2);
    memcpy(&npages, p + 12, 4);
    if ((flags & 0x04 /* P_LARGE */) && npages > 1 && pg + npages <= size / ps)
      run = npages;
    {
      ++pages;
      for (size_t i = pg * ps; i + 8 <= (pg + run) * ps; ++i) {
        const unsigned char *b = buf + i;
        const unsigned char *m = memchr(marker, b[0], 8);
        if (m) {
          size_t r = (size_t)(m - marker), j = 1;
          while (j < 8 && b[j] == marker[(r + j) & 7])
            ++j;
          if (j == 8) {
            ++markers;
            if (first_marker == SIZE_MAX)
              first_marker = i;
          }
        }
        if ((i & 7) == 0) {
          uint64_t w;
          memcpy(&w, b, 8);
          if (is_heap_address(w)) {
            ++addresses;
            if (first_address == SIZE_MAX)
              first_address = i;
          }
        }
      }
    }
    pg += run;
  }
  __libc_free(buf);
  printf("heap %s: %" PRIu64 " pages searched, %" PRIu64 " marker windows (first at byte %zd), %" PRIu64
         " heap addresses (first at byte %zd)\n",
         what, pages, markers, first_marker == SIZE_MAX ? (ssize_t)-1 : (ssize_t)first_marker, addresses,
         first_address == SIZE_MAX ? (ssize_t)-1 : (ssize_t)first_address);
  fflush(stdout);
  if (markers + addresses) {
    ++scans_with_heap;
    if (strcmp(mode, "strict") == 0) {
      printf("FAIL: heap bytes in the data file after %s\n", what);
      exit(1);
    }
  }
  return markers + addresses;
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[2], "strict") && strcmp(argv[2], "report") && strcmp(argv[2], "nomeminit"))) {
    fprintf(stderr, "usage: %s DIR strict|report|nomeminit (DIR: a directory to create)\n", argv[0]);
    return 2;
  }
  mode = argv[2];
  const int nomeminit = strcmp(mode, "nomeminit") == 0;
  if (mkdir(argv[1], 0755) != 0) {
    printf("FAIL: cannot create %s\n", argv[1]);
    return 1;
  }
  snprintf(datafile, sizeof(datafile), "%s/mdbx.dat", argv[1]);
  MDBX_env *env;
  CHECK(mdbx_env_create(&env), "mdbx_env_create");
  CHECK(mdbx_env_set_option(env, MDBX_opt_max_db, 4), "max_db");
  CHECK(mdbx_env_set_geometry(env, -1, -1, 1l << 30, 1 << 20, -1, 4096), "geometry");
  CHECK(mdbx_env_open(env, argv[1], MDBX_NOSTICKYTHREADS | MDBX_LIFORECLAIM, 0644), "mdbx_env_open");
  rng_state = 0x9E3779B97F4A7C15ull;
  MDBX_txn *txn, *nested;

  /* 1 */
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
  CHECK(mdbx_dbi_open(txn, "plain", MDBX_CREATE, &dbis[PLAIN]), "dbi plain");
  CHECK(mdbx_dbi_open(txn, "dups", MDBX_CREATE | MDBX_DUPSORT, &dbis[DUPS]), "dbi dups");
  CHECK(mdbx_dbi_open(txn, "fixed", MDBX_CREATE | MDBX_DUPSORT | MDBX_DUPFIXED, &dbis[FIXED]), "dbi fixed");
  for (int i = 0; i < 20000; ++i) {
    write_one(txn, PLAIN, next_random(), 0);
    write_one(txn, DUPS, next_random(), 0);
    write_one(txn, FIXED, next_random(), 0);
  }
  CHECK(mdbx_txn_commit(txn), "commit 1");
  report(env, "round 1");
  scan("round 1");

  if (nomeminit) {
    /* The control. A transaction under MDBX_NOMEMINIT that is aborted leaves the reserve with
     * pages malloc'ed without zeroing and the file without heap bytes; after
     * mdbx_env_set_flags clears MDBX_NOMEMINIT, small transactions (pages from the reserve)
     * must still write none. Then, with MDBX_NOMEMINIT set again, a big transaction must write
     * the marker into the file, or this check cannot see heap bytes. */
    mode = "strict";
    /* Empties the reserve, so that the aborted transaction mallocs its pages. */
    CHECK(mdbx_env_set_option(env, MDBX_opt_dp_reserve_limit, 0), "dp_reserve_limit 0");
    CHECK(mdbx_env_set_option(env, MDBX_opt_dp_reserve_limit, 4096), "dp_reserve_limit");
    CHECK(mdbx_env_set_flags(env, MDBX_NOMEMINIT, true), "set MDBX_NOMEMINIT");
    CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
    for (int i = 0; i < 6000; ++i)
      write_one(txn, (int)(i % TABLES), next_random(), 0);
    CHECK(mdbx_txn_abort(txn), "abort");
    CHECK(mdbx_env_set_flags(env, MDBX_NOMEMINIT, false), "clear MDBX_NOMEMINIT");
    for (int n = 0; n < 100; ++n) {
      CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
      for (int i = 0; i < 20; ++i)
        write_one(txn, (int)(next_random() % TABLES), next_random(), 0);
      CHECK(mdbx_txn_commit(txn), "commit");
    }
    scan("MDBX_NOMEMINIT set, aborted, cleared");
    CHECK(mdbx_env_set_flags(env, MDBX_NOMEMINIT, true), "set MDBX_NOMEMINIT");
    CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
    for (int i = 0; i < 6000; ++i)
      write_one(txn, (int)(i % TABLES), next_random(), 0);
    CHECK(mdbx_txn_commit(txn), "commit");
    mode = "report";
    if (!scan("MDBX_NOMEMINIT set, committed")) {
      printf("FAIL: with MDBX_NOMEMINIT no heap bytes were found: the check cannot see them\n");
      return 1;
    }
    printf("OK\n");
    return 0;
  }

  /* 2 */
  for (int n = 0; n < 300; ++n) {
    CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
    for (int i = 0; i < 20; ++i) {
      uint64_t r = next_random();
      int t = (int)(r % TABLES);
      if (r % 4 == 0)
        delete_some(txn, t, 1, r); /* about 1 % of the table's entries */
      else
        write_one(txn, t, next_random(), 0);
    }
    CHECK(mdbx_txn_commit(txn), "commit 2");
    if (n % 100 == 99) {
      char what[32];
      snprintf(what, sizeof(what), "round 2.%d", n / 100);
      scan(what);
    }
  }
  report(env, "round 2");

  /* 3 */
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
  for (int t = 0; t < TABLES; ++t)
    delete_some(txn, t, 60, 3);
  for (int i = 0; i < 3000; ++i)
    write_one(txn, (int)(i % TABLES), next_random(), 0);
  CHECK(mdbx_txn_commit(txn), "commit 3");
  report(env, "round 3");
  scan("round 3");

  /* 4 */
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
  for (int i = 0; i < 4000; ++i)
    write_one(txn, (int)(i % TABLES), next_random(), 1);
  delete_some(txn, PLAIN, 30, 4);
  CHECK(mdbx_txn_abort(txn), "abort 4");
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
  for (int i = 0; i < 3000; ++i)
    write_one(txn, (int)(i % TABLES), next_random(), 0);
  CHECK(mdbx_txn_commit(txn), "commit 4");
  report(env, "round 4");
  scan("round 4");

  /* 5: the same large values rewritten in a parent and then in nested transactions */
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
  uint64_t larges[64];
  int nlarge = 0;
  for (uint64_t r = 1; nlarge < 64; ++r)
    if (plain_len(r) >= 5000)
      larges[nlarge++] = r;
  for (int i = 0; i < nlarge; ++i)
    write_one(txn, PLAIN, larges[i], 0);
  delete_some(txn, DUPS, 20, 5);
  CHECK(mdbx_txn_begin(env, txn, MDBX_TXN_READWRITE, &nested), "begin nested");
  for (int i = 0; i < nlarge; ++i)
    write_one(nested, PLAIN, larges[i], 0);
  delete_some(nested, PLAIN, 30, 6);
  CHECK(mdbx_txn_abort(nested), "abort nested");
  CHECK(mdbx_txn_begin(env, txn, MDBX_TXN_READWRITE, &nested), "begin nested");
  for (int i = 0; i < nlarge; ++i)
    write_one(nested, PLAIN, larges[i], 0);
  delete_some(nested, FIXED, 30, 7);
  for (int i = 0; i < 1000; ++i)
    write_one(nested, (int)(i % TABLES), next_random(), 0);
  CHECK(mdbx_txn_commit(nested), "commit nested");
  CHECK(mdbx_txn_commit(txn), "commit 5");
  report(env, "round 5");
  scan("round 5");

  /* 6 */
  CHECK(mdbx_env_set_option(env, MDBX_opt_txn_dp_limit, 256), "dp_limit");
  CHECK(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "begin");
  for (int t = 0; t < TABLES; ++t)
    delete_some(txn, t, 10, 8);
  for (int i = 0; i < 3000; ++i)
    write_one(txn, (int)(i % TABLES), next_random(), 0);
  CHECK(mdbx_txn_commit(txn), "commit 6");
  report(env, "round 6");
  scan("round 6");

  MDBX_chk_callbacks_t cb;
  memset(&cb, 0, sizeof(cb));
  MDBX_chk_context_t ctx;
  memset(&ctx, 0, sizeof(ctx));
  int rc = mdbx_env_chk(env, &cb, &ctx, MDBX_CHK_DEFAULTS, MDBX_chk_error, 0);
  printf("mdbx_env_chk %s, %zu problems\n", rc == MDBX_SUCCESS ? "ok" : mdbx_strerror(rc),
         (size_t)ctx.result.total_problems);
  if (rc != MDBX_SUCCESS || ctx.result.total_problems) {
    printf("FAILED\n");
    return 1;
  }
  CHECK(mdbx_env_close(env), "close");
  printf("OK\n");
  return 0;
}
