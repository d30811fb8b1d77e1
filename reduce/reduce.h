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

/* Several candidates at once (e.g. one mlir-opt and one mlir-runner process for all):
 * interesting[i] = 1, 0; returns 0 or an error. */
typedef int (*ReduceBatchTest)(const GenCase *const *cands, int n, int *interesting, void *ctx);

typedef struct ReduceOpts {
  ReduceBatchTest batch_test; /* NULL: candidates one by one */
  int batch;                  /* candidates per batch (the ddmin pass) */
  int jobs;                   /* > 1: a batch is split among this many child processes */
  double deadline;            /* > 0: stop at this CLOCK_MONOTONIC time with the best so far */
} ReduceOpts;

typedef struct ReduceStats {
  int tests;    /* candidates tested */
  int accepted; /* of them interesting */
  int invalid;  /* candidates the validator refused (never tested) */
  int from_ops, to_ops;
  int stopped; /* the deadline came first: the result is valid and interesting, not minimal */
} ReduceStats;

/* Minimizes `in` (which must itself be interesting) into *out (initialized by this call).
 * Returns 0, or an error from the test or AF_ENOMEM. */
int reduce_case(const GenCase *in, ReduceTest test, void *ctx, GenCase *out, ReduceStats *st,
                AfErr *err);
/* The same with batched and parallel evaluation of the ddmin pass's candidates. The result
 * is the same as reduce_case's: of a batch, the first interesting candidate in the order the
 * one-by-one search would try them is taken, and the search goes on from there. */
int reduce_case_opts(const GenCase *in, ReduceTest test, void *ctx, const ReduceOpts *o,
                     GenCase *out, ReduceStats *st, AfErr *err);

/* ---- mutations (mutate.c): guided generation's structure-aware moves ---- */

/* A valid case one random move away from in (a dependency added, dropped or rewired; an op
 * dropped; a region inlined; a host wait or a gpu.wait async added; a view on or off; a
 * device buffer's element type or size; an allocation's form; a launch's stream), drawn from r
 * until one gives a valid case that differs and has nothing avoid (may be NULL) names: no move
 * that may add a construct it avoids, and none that has an op of a shape or a construct it avoids
 * (gen_avoid_case; 32 tries). An input with ops of shapes avoid names loses them first, with what
 * they take (a drop-op move). 0 and *out (initialized; *move: which move,
 * reduce_mutation_name), 1 none found (*out empty), or AF_ENOMEM. */
int reduce_mutate(const GenCase *in, AfRng *r, const GenAvoid *avoid, GenCase *out, int *move);
int reduce_mutation_count(void);
const char *reduce_mutation_name(int m);
/* a followed by b (its tokens, buffers, regions, blocks and streams renamed past a's), when
 * that is valid: 0 and *out (initialized), 1 not (b has a block run on a condition, which
 * would read a's host buffer), or AF_ENOMEM. */
int reduce_splice(const GenCase *a, const GenCase *b, GenCase *out);

#endif
