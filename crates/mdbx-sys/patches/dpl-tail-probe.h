/* Included (cc -include) into the patched libmdbx by patches/dpl-tail-check.sh, never shipped:
 * defines the patch's MDBX_DPL_UNSORTED_TAIL so that it also counts, in txn_dpl_search, the
 * searches that take the patch's new path (a tail longer than 7 scanned, not merged) and those
 * that merge. The limit is the patch's default, 7 + sorted / 2^DPL_TAIL_SHIFT with
 * DPL_TAIL_SHIFT 10 (the script checks that the patch still says so); the script's second
 * patched build sets DPL_TAIL_SHIFT 3 to scan far longer tails. `dl` is txn_dpl_search's list.
 * The counters are defined in patches/dpl-tail-check.c. */
#ifndef DPL_TAIL_SHIFT
#define DPL_TAIL_SHIFT 10
#endif
extern unsigned long long dpl_tail_scans, dpl_tail_merges, dpl_tail_longest;
#define MDBX_DPL_UNSORTED_TAIL(sorted_)                                                           \
  ({                                                                                               \
    const size_t limit_ = 7 + ((sorted_) >> DPL_TAIL_SHIFT), tail_ = dl->length - dl->sorted;      \
    if (tail_ <= limit_) {                                                                         \
      ++dpl_tail_scans;                                                                            \
      if (tail_ > dpl_tail_longest)                                                                \
        dpl_tail_longest = tail_;                                                                  \
    } else                                                                                         \
      ++dpl_tail_merges;                                                                           \
    limit_;                                                                                        \
  })
