/* A probe, not a check: the open of an existing environment with 10 tables, by the first
 * process (exclusive: it initialises the lock file) or by one joining an environment another
 * process holds open. Built against libmdbx (default) or LMDB (-DUSE_LMDB), for the lck-written
 * write-up:
 *
 *   F="-O2 -pthread -DNDEBUG=1 -DMDBX_DEBUG=0 -DMDBX_TXN_CHECKOWNER=0 -DMDBX_BUILD_FLAGS=\"\" \
 *      -DMDBX_USE_FALLOCATE=1 -DFALLOC_FL_ALLOCATE_RANGE=0x00"
 *   cc $F -I ../libmdbx open-probe.c ../libmdbx/mdbx.c -o open-mdbx
 *   L=~/.cargo/registry/src/<index>/lmdb-master-sys-0.2.6/lmdb/libraries/liblmdb
 *   cc -O2 -pthread -DUSE_LMDB -I $L open-probe.c $L/mdb.c $L/midl.c -o open-lmdb
 *   ./open-mdbx DIR 2000 excl; ./open-mdbx DIR2 2000 join    (DIR: a new directory)
 *
 * Prints the median µs of the environment open and of the open plus a read transaction that
 * opens the 10 tables; each open is closed again, untimed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#ifdef USE_LMDB
#include "lmdb.h"
#define ENV MDB_env
#define TXN MDB_txn
#define DBI MDB_dbi
static void op(ENV **e, const char *d) { mdb_env_create(e); mdb_env_set_maxdbs(*e, 16); mdb_env_set_mapsize(*e, 8ULL << 30); if (mdb_env_open(*e, d, 0, 0644)) { perror("open"); exit(1);} }
static void tables(ENV *e, int create) { TXN *t; DBI dbi; char n[16]; mdb_txn_begin(e, 0, create ? 0 : MDB_RDONLY, &t); for (int i = 0; i < 10; i++) { sprintf(n, "t%d", i); if (mdb_dbi_open(t, n, create ? MDB_CREATE : 0, &dbi)) exit(2);} mdb_txn_commit(t); }
#define CLOSE mdb_env_close
#else
#include "mdbx.h"
#define ENV MDBX_env
#define TXN MDBX_txn
#define DBI MDBX_dbi
static void op(ENV **e, const char *d) { mdbx_env_create(e); mdbx_env_set_maxdbs(*e, 16); mdbx_env_set_geometry(*e, -1, -1, 8LL << 30, -1, -1, -1); if (mdbx_env_open(*e, d, 0, 0644)) { perror("open"); exit(1);} }
static void tables(ENV *e, int create) { TXN *t; DBI dbi; char n[16]; mdbx_txn_begin(e, 0, create ? 0 : MDBX_TXN_RDONLY, &t); for (int i = 0; i < 10; i++) { sprintf(n, "t%d", i); if (mdbx_dbi_open(t, n, create ? MDBX_CREATE : 0, &dbi)) exit(2);} mdbx_txn_commit(t); }
#define CLOSE mdbx_env_close
#endif
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc, char **argv) {
  const char *d = argv[1]; int n = atoi(argv[2]); int join = argc > 3 && !strcmp(argv[3], "join");
#ifndef USE_LMDB
  mdbx_setup_debug(MDBX_LOG_WARN, MDBX_DBG_DONTCHANGE, MDBX_LOGGER_DONTCHANGE);
#endif
  mkdir(d, 0755);
  ENV *e; op(&e, d); tables(e, 1); CLOSE(e);
  pid_t holder = 0; int p[2]; pipe(p);
  if (join) { holder = fork(); if (!holder) { ENV *h; op(&h, d); write(p[1], "x", 1); pause(); _exit(0);} char c; read(p[0], &c, 1); }
  double *v = malloc(n * sizeof(double)), *w = malloc(n * sizeof(double));
  for (int k = 0; k < n; k++) { double a = now(); op(&e, d); double b = now(); tables(e, 0); double c = now(); CLOSE(e); v[k] = b - a; w[k] = c - a; }
  if (holder) { kill(holder, SIGTERM); waitpid(holder, 0, 0); }
  qsort(v, n, sizeof(double), cmp); qsort(w, n, sizeof(double), cmp);
  printf("%s %s: env open %.1f us, with 10 tables %.1f us (median of %d)\n", argv[0], join ? "joining" : "exclusive", v[n/2], w[n/2], n);
}
