/* The end the dpl-tail, loose-batch, big-dpl and growth-written checks share: mdbx_env_chk (the
 * checker the mdbx_chk tool runs) over the whole environment, its result printed as "LABEL:
 * mdbx_env_chk ok, 0 problems", and the program ended with "FAILED" (exit code 1) on any
 * problem.
 * Included by those checks' programs (`#include "env-chk.h"` after "mdbx.h"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void env_chk_or_exit(MDBX_env *env, const char *label) {
  MDBX_chk_callbacks_t cb;
  memset(&cb, 0, sizeof(cb));
  MDBX_chk_context_t ctx;
  memset(&ctx, 0, sizeof(ctx));
  int rc = mdbx_env_chk(env, &cb, &ctx, MDBX_CHK_DEFAULTS, MDBX_chk_error, 0);
  printf("%s: mdbx_env_chk %s, %zu problems\n", label, rc == MDBX_SUCCESS ? "ok" : mdbx_strerror(rc),
         (size_t)ctx.result.total_problems);
  if (rc != MDBX_SUCCESS || ctx.result.total_problems) {
    printf("FAILED\n");
    exit(1);
  }
}
