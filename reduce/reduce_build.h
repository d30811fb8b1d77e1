/*
 * reduce_build.h: building the reducer's candidates (build.c). Internal to reduce/.
 */
#ifndef REDUCE_REDUCE_BUILD_H
#define REDUCE_REDUCE_BUILD_H

#include "../gen/gen.h"

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

#endif
