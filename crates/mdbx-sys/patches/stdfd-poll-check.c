/* Check of libmdbx-0.14.4-stdfd-poll.patch: an open looks at the descriptors 0-2 once, the
 * guard against a database file getting one of them works, and its fallback logs nothing into
 * the file.
 *
 *   stdfd-poll-check DIR
 *
 * 1. creates an environment in DIR, commits a value, and opens it three times to read it, with
 *    the descriptors 0-2 open (as the script runs it: stdin from /dev/null, stdout and stderr to
 *    files);
 * 2. opens the environment (descriptors 0-2 open), closes descriptor 2, and copies the
 *    environment to DIR/copy (mdbx_env_copy): the copy, a file opened after the open's own,
 *    must not get descriptor 2 (libmdbx asks again, and puts /dev/null there meanwhile);
 * 3. with descriptor 2 still closed, has poll() (this program's own, which libmdbx calls instead of the
 *    C library's) say that all three are open, as if another thread had closed descriptor 2
 *    after libmdbx looked; opens the environment read-write, reads the value and closes: the
 *    data file gets descriptor 2 and is moved off it (libmdbx's fallback), and the first page
 *    of the data file must be what it was (no log line written into it: the log goes to
 *    descriptor 2). The pristine libmdbx is in this state without the help: its check never
 *    finds a descriptor closed;
 * 4. closes descriptor 0 as well (a daemon's state), poll() honest again, opens the environment
 *    (its files must not get descriptor 0 or 2: libmdbx puts /dev/null there while it opens
 *    them), reads the value, commits another and closes, then opens it once more and reads both;
 *    descriptors 0 and 2 must be closed again after (the stand-ins were closed).
 * Prints one line a step on stdout (fully buffered: no terminal query from stdio); exits
 * non-zero on any failure. The script runs it under strace on the pristine and the patched
 * libmdbx and counts the terminal queries (ioctl TCGETS) of descriptors 0-2 and the poll()s. */
#define _GNU_SOURCE /* ppoll */
#include "mdbx.h"

#include "kv-check.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

static char out[1 << 16];
static int fooled;

/* libmdbx's poll(): the C library's (ppoll, another symbol), or all open while `fooled`. */
int poll(struct pollfd *fds, nfds_t n, int timeout) {
  if (fooled) {
    for (nfds_t i = 0; i < n; i++)
      fds[i].revents = 0;
    return 0;
  }
  struct timespec zero = {0, 0}, limit = {timeout / 1000, (timeout % 1000) * 1000000L};
  return ppoll(fds, n, timeout < 0 ? NULL : timeout == 0 ? &zero : &limit, NULL);
}

static void first_page(const char *dir, char page[4096]) {
  char path[4200];
  snprintf(path, sizeof(path), "%s/mdbx.dat", dir);
  const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY); /* O_NOCTTY: not libmdbx's, for the script */
  if (fd < 0 || pread(fd, page, 4096, 0) != 4096 || close(fd) != 0)
    check("read the data file", errno);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  setvbuf(stdout, out, _IOFBF, sizeof(out));
  MDBX_env *env = open_env(argv[1], 1 << 26);
  put(env, "a", "first");
  mdbx_env_close(env);
  for (int i = 0; i < 3; i++) {
    env = open_env(argv[1], 1 << 26);
    show(env, "a");
    mdbx_env_close(env);
  }

  printf("descriptor 2 closed\n");
  fflush(stdout);
  char copy[4200];
  snprintf(copy, sizeof(copy), "%s/copy", argv[1]);
  env = open_env(argv[1], 1 << 26);
  close(STDERR_FILENO);
  check("env_copy", mdbx_env_copy(env, copy, MDBX_CP_DEFAULTS));
  mdbx_env_close(env);
  printf("copied\n");

  printf("poll() fooled\n");
  fflush(stdout);
  char before[4096], after[4096];
  first_page(argv[1], before);
  fooled = 1;
  env = open_env(argv[1], 1 << 26);
  fooled = 0;
  show(env, "a");
  mdbx_env_close(env);
  first_page(argv[1], after);
  printf("the data file's first page %s\n", memcmp(before, after, sizeof(before)) ? "CHANGED" : "unchanged");

  printf("descriptors 0 and 2 closed\n");
  fflush(stdout);
  close(STDIN_FILENO);
  env = open_env(argv[1], 1 << 26);
  show(env, "a");
  put(env, "b", "second");
  mdbx_env_close(env);
  env = open_env(argv[1], 1 << 26);
  show(env, "a");
  show(env, "b");
  mdbx_env_close(env);
  printf("descriptor 0 %s, descriptor 2 %s\n", fcntl(STDIN_FILENO, F_GETFD) < 0 ? "closed" : "OPEN",
         fcntl(STDERR_FILENO, F_GETFD) < 0 ? "closed" : "OPEN");
  printf("OK\n");
  return 0;
}
