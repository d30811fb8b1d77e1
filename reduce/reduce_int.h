/*
 * reduce_int.h: internals of the reducer, shared by its files only: reduce.c (the driver: the
 * passes in their order, ddmin with batches and jobs), rewrite.c (the passes that rewrite ops:
 * each kind's simpler forms, simpler_<lc>, named by GEN_OP_MAP; inlining, merging, views) and
 * build.c (a case without some ops; trying a candidate).
 */
#ifndef REDUCE_REDUCE_INT_H
#define REDUCE_REDUCE_INT_H

#include "reduce.h"

#define STOPPED 1 /* R.err: the deadline came (not an error) */

typedef struct R {
  GenCase cur;
  ReduceTest test;
  void *ctx;
  ReduceStats *st;
  int err;
  ReduceOpts o;
  int cur_batch; /* adapts: halves after a batch with a hit, doubles after one without */
} R;

/* ---- candidates (build.c) ---- */

/* The live tokens a removed op's token stands for. */
typedef struct Fwd {
  int n;
  int32_t t[GEN_MAX_DEPS];
} Fwd;

/* The op's buffer references (pointers into o, at most 4); how many. */
int reduce__buf_refs(GenOp *o, int32_t **refs);
/* Adds t to f once; -1 when f is full. */
int reduce__add_tok(Fwd *f, int32_t t);
/* c without the ops marked in drop[] (expanded here to what they take with them), with region
 * `flatten` (0: none) inlined into its parent. Returns 0 and fills *out (initialized), 1 when
 * no such case can be made, or AF_ENOMEM (then *out holds nothing to free). */
int reduce__build(const GenCase *c, uint8_t *drop, int flatten, GenCase *out);
/* CLOCK_MONOTONIC seconds. */
double reduce__mono(void);
/* cand: a copy of the current case; 1 (r->err set) when out of memory. */
int reduce__copy_cur(R *r, GenCase *cand);
/* Tries a candidate: valid and interesting -> it becomes the current case (1: accepted); cand is
 * taken either way. */
int reduce__try_cand(R *r, GenCase *cand);
/* reduce__try_cand on a candidate edited in place: its derived fields recomputed first (one that
 * cannot be finished is dropped). */
int reduce__try_finished(R *r, GenCase *cand);

/* ---- passes that rewrite ops (rewrite.c); each returns 1 when a candidate was accepted ---- */

int reduce__pass_merge_bufs(R *r);
int reduce__pass_inline_blocks(R *r);
int reduce__pass_to_wait(R *r);
int reduce__pass_wait_to_deps(R *r);
int reduce__pass_unview(R *r);
int reduce__pass_simplify(R *r);
int reduce__pass_region_io(R *r);
int reduce__pass_inputs_to_captures(R *r);

#endif
