/*
 * features.c: the features (base/feat.h) of a case's structure: each op's shape in its context,
 * and each dependency edge as the shapes of the op that made the token and of the op that uses
 * it (operation-dependency coverage, as MLIRod rewards it).
 */
#include "gen.h"
#include "../base/feat.h"

#include <stdio.h>

/* The context op i is in: "main", "region" or its block's kind ("scf.for"). */
static const char *context(const GenCase *c, const GenOp *o) {
  if (o->blk > 0 && o->blk < c->nblocks && c->blocks[o->blk].op >= 0)
    return gen_op_mlir(c->ops[c->blocks[o->blk].op].kind);
  return o->ctx > 0 ? "async.execute" : "main";
}

void gen_case_features(const GenCase *c) {
  if (!af_feat_on() || c->ntoks <= 0)
    return;
  int *maker = af_malloc(sizeof *maker * (size_t)c->ntoks);
  if (maker == NULL)
    return;
  for (int t = 0; t < c->ntoks; t++)
    maker[t] = -1;
  for (int i = 0; i < c->nops; i++)
    if (c->ops[i].tok >= 0 && c->ops[i].tok < c->ntoks)
      maker[c->ops[i].tok] = i;
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    char shape[96];
    gen_shape_format(o, shape, sizeof shape);
    af_feat_addf(AF_FEAT_SHAPE, "%s in %s", shape, context(c, o));
    for (int d = 0; d < o->ndeps && d < GEN_MAX_DEPS; d++) {
      int t = o->deps[d];
      char from[96] = "an input"; /* a region's input or capture, a block's argument */
      if (t >= 0 && t < c->ntoks && maker[t] >= 0)
        gen_shape_format(&c->ops[maker[t]], from, sizeof from);
      af_feat_addf(AF_FEAT_EDGE, "%s -> %s in %s", from, shape, context(c, o));
    }
  }
  af_free(maker);
}
