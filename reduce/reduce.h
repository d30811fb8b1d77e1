/*
 * reduce.h: minimizing a failing Case (delta debugging on the token DAG, not on MLIR text).
 *
 * Candidates: remove chunks of ops (ddmin, then one op at a time), where removing an op
 * forwards its token's uses to its own dependencies so the remaining order is kept, and
 * removing an execute op removes its region, its awaits and the regions that consume its
 * values; flatten regions into their parent; drop dependencies; drop unused buffers; shrink
 * buffers to one element and the spin count. Every candidate passes gen_validate before it
 * is tested, so the result is always a valid Case. The test decides what is interesting
 * (reduce_same_signature: the same root-cause signature under the failure's schedules).
 * Deterministic: the same input and test give the same output.
 */
#ifndef REDUCE_REDUCE_H
#define REDUCE_REDUCE_H

#include "../gen/gen.h"

/* 1: the candidate (a valid case) is still interesting; 0: not; < 0: an error (stops). */
typedef int (*ReduceTest)(const GenCase *cand, void *ctx);

typedef struct ReduceStats {
  int tests;    /* candidates tested */
  int accepted; /* of them interesting */
  int invalid;  /* candidates the validator refused (never tested) */
  int from_ops, to_ops;
} ReduceStats;

/* Minimizes `in` (which must itself be interesting) into *out (initialized by this call).
 * Returns 0, or an error from the test or AF_ENOMEM. */
int reduce_case(const GenCase *in, ReduceTest test, void *ctx, GenCase *out, ReduceStats *st,
                AfErr *err);

#endif
