/* Included (cc -include) into the patched libmdbx's mdbx.c alone by patches/big-dpl-check.sh,
 * never shipped: defines the patch's MDBX_BIG_DPL_PROBE hook to count each of the patch's three
 * paths and the largest n it saw, and prints the counts to stderr when the program exits:
 *   tail_merge  an unsorted tail of n >= MDBX_RADIXSORT_THRESHOLD entries sorted and merged;
 *   loose_batch n loose pages merged at once, more than MDBX_opt_loose_limit;
 *   room_merge  a full dirty room freed by merging n loose pages at once. */
/* No header here: it comes before mdbx.c's feature macros (_GNU_SOURCE). stdio.h's own. */
extern int dprintf(int fd, const char *__restrict format, ...);

static unsigned long long big_dpl_count[3], big_dpl_largest[3];
enum { big_dpl_tail_merge, big_dpl_loose_batch, big_dpl_room_merge };

#define MDBX_BIG_DPL_PROBE(event, n)                                                               \
  do {                                                                                             \
    const unsigned long long n_ = (n);                                                             \
    ++big_dpl_count[big_dpl_##event];                                                              \
    if (n_ > big_dpl_largest[big_dpl_##event])                                                     \
      big_dpl_largest[big_dpl_##event] = n_;                                                       \
  } while (0)

__attribute__((destructor)) static void big_dpl_report(void) {
  dprintf(2,
          "big-dpl probe: tail_merge %llu (largest %llu), loose_batch %llu (largest %llu), "
          "room_merge %llu (largest %llu)\n",
          big_dpl_count[0], big_dpl_largest[0], big_dpl_count[1], big_dpl_largest[1], big_dpl_count[2],
          big_dpl_largest[2]);
}
