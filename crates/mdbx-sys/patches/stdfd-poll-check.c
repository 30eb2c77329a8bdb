/* Check of libmdbx-0.14.4-stdfd-poll.patch: an open looks at the descriptors 0-2 once, and the
 * guard against a database file getting one of them works.
 *
 *   stdfd-poll-check DIR
 *
 * 1. creates an environment in DIR, commits a value, and opens it three times to read it, with
 *    the descriptors 0-2 open (as the script runs it: stdin from /dev/null, stdout to a file,
 *    stderr to a file);
 * 2. closes descriptors 0 and 2 (a daemon's state), opens the environment (its files must not
 *    get descriptor 0 or 2: libmdbx puts /dev/null there while it opens them), reads the value,
 *    commits another and closes, then opens it once more and reads both;
 * 3. checks that descriptors 0 and 2 are closed again (the stand-ins were closed).
 * Prints one line a step on stdout (fully buffered: no terminal query from stdio); exits
 * non-zero on any failure. The script runs it under strace on the pristine and the patched
 * libmdbx and counts the terminal queries (ioctl TCGETS) of descriptors 0-2 and the poll()s. */
#include "mdbx.h"

#include "kv-check.h"

#include <fcntl.h>
#include <unistd.h>

static char out[1 << 16];

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

  printf("descriptors 0 and 2 closed\n");
  fflush(stdout);
  close(STDIN_FILENO);
  close(STDERR_FILENO);
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
