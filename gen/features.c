/*
 * features.c: the features (base/feat.h) of a case's structure: each op's shape in its context,
 * each dependency edge as the shapes of the op that made the token and of the op that uses it
 * (operation-dependency coverage, as MLIRod rewards it), and each handle a construct of the case
 * carries: a buffer an op takes (its kind, element type, static shape, view) in the op's context,
 * a token a region or block takes in or gives out, by the op that made it, and an explicit stream.
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

/* The handle kind of buffer b as op o takes it as operand k (0 dst, 1 src, launch: arg k). */
static void buffer_feature(const GenCase *c, const GenOp *o, const char *role, int b, int k) {
  if (b < 0 || b >= c->nbufs)
    return;
  const GenBuf *B = &c->bufs[b];
  int view = k >= 0 && k < 3 && (gen_op_flags(o->kind) & GEN_K_VIEWS) && o->view[k][1] > 0;
  af_feat_addf(AF_FEAT_HANDLE, "%s %s: %s %s%s%s in %s", gen_op_mlir(o->kind), role,
               B->kind == GEN_BUF_HOST ? "host" : "device", gen_elem_name(B->elem),
               B->stat ? " static" : "", view ? " view" : "", context(c, o));
}

/* The handle kind of token t as construct `what` carries it: the shape of the op that made it. */
static void token_feature(const GenCase *c, const int *maker, const char *what, int t) {
  char from[96] = "an input";
  if (t >= 0 && t < c->ntoks && maker[t] >= 0)
    gen_shape_format(&c->ops[maker[t]], from, sizeof from);
  af_feat_addf(AF_FEAT_HANDLE, "%s: %s", what, from);
}

static void handle_features(const GenCase *c, const int *maker) {
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    unsigned f = gen_op_flags(o->kind);
    if (f & (GEN_K_BUF | GEN_K_WRITE | GEN_K_READ))
      buffer_feature(c, o, f & GEN_K_SRC ? "dst" : "buffer", o->buf, 0);
    if (f & GEN_K_SRC)
      buffer_feature(c, o, "src", o->src, 1);
    if (f & GEN_K_ARGS)
      for (int k = 0; k < o->nargs && k < 3; k++)
        buffer_feature(c, o, k == 0 ? "written arg" : "arg", o->args[k], k);
    if (gen_op_on_stream(o))
      af_feat_addf(AF_FEAT_HANDLE, "launch on an explicit stream in %s", context(c, o));
  }
  for (int r = 1; r < c->nregions; r++) {
    const GenRegion *R = &c->regions[r];
    for (int k = 0; k < R->ncaptures && k < GEN_MAX_REGION_IO; k++)
      token_feature(c, maker, "capture", R->captures[k].outer);
    for (int k = 0; k < R->nyields && k < GEN_MAX_REGION_IO; k++)
      token_feature(c, maker, "yield", R->yields[k]);
    for (int k = 0; k < R->ninputs && k < GEN_MAX_REGION_IO; k++) {
      const GenRegionInput *in = &R->inputs[k];
      int t = -1;
      if (in->region >= 0 && in->region < c->nregions && in->vidx >= 0 &&
          in->vidx < c->regions[in->region].nyields)
        t = c->regions[in->region].yields[in->vidx];
      token_feature(c, maker, "region-input", t);
    }
  }
  for (int b = 1; b < c->nblocks; b++) {
    const GenBlock *B = &c->blocks[b];
    if (B->op < 0 || B->op >= c->nops)
      continue;
    const char *kind = gen_op_mlir(c->ops[B->op].kind);
    char what[64];
    snprintf(what, sizeof what, "%s input", kind);
    for (int k = 0; k < B->ninputs && k < GEN_MAX_REGION_IO; k++)
      token_feature(c, maker, what, B->inputs[k].outer);
    if (B->yield >= 0) {
      snprintf(what, sizeof what, "%s yield", kind);
      token_feature(c, maker, what, B->yield);
    }
    for (int k = 0; k < B->nbufargs && k < GEN_MAX_REGION_IO; k++)
      buffer_feature(c, &c->ops[B->op], "block argument", B->bufargs[k], -1);
  }
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
  handle_features(c, maker);
  af_free(maker);
}

void gen_case_verdict_features(const GenCase *c, const char *verdict) {
  if (!af_feat_on())
    return;
  unsigned char seen[GEN_OP__COUNT * 24] = {0}; /* a shape: kind, async, shared, view, deps */
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    int bucket = o->ndeps >= 2 ? 2 : o->ndeps;
    int key = o->kind;
    key = key * 2 + (gen_op_async(o) != 0);
    key = key * 2 + (o->kind == GEN_OP_ALLOC && o->mode == GEN_ALLOC_HOST_SHARED);
    key = key * 2 + (gen_op_has_view(o) != 0);
    key = key * 3 + bucket;
    if (o->kind >= GEN_OP__COUNT || seen[key])
      continue;
    seen[key] = 1;
    char shape[96];
    gen_shape_format(o, shape, sizeof shape);
    af_feat_addf(AF_FEAT_SHAPE_VERDICT, "%s: %s", verdict, shape);
  }
}
