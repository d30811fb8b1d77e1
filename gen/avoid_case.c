/*
 * avoid_case.c: whether a case made elsewhere (mutated, read) has what an avoid set names
 * (gen.h: gen_avoid_case), for guided generation's cases, which the generator did not shape.
 */
#include "gen.h"

/* Whether dependency d of op i can go: the case stays valid without it (an extra one). */
static int dep_unneeded(const GenCase *c, int i, int d) {
  GenCase t;
  if (gen_case_copy(&t, c) != 0)
    return 0;
  GenOp *o = &t.ops[i];
  o->deps[d] = o->deps[--o->ndeps];
  AfErr err = {0};
  int ok = gen_validate(&t, &err) == 0;
  gen_case_free(&t);
  return ok;
}

/* Whether case c has construct k (GEN_CONSTRUCT_MAP), as a case made elsewhere (mutated, read)
 * has it: its regions' yields, inputs and captures, a launch on a stream, a stream created and
 * never destroyed, a dependency on a token an earlier host wait of its context named, a
 * dependency the case stays valid without. */
static int has_construct(const GenCase *c, int k) {
  for (int r = 1; r < c->nregions; r++)
    if ((k == GEN_CONSTRUCT_YIELD && c->regions[r].nyields > 0) ||
        (k == GEN_CONSTRUCT_REGION_INPUT && c->regions[r].ninputs > 0) ||
        (k == GEN_CONSTRUCT_CAPTURE && c->regions[r].ncaptures > 0))
      return 1;
  int streams = 0;
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    if (k == GEN_CONSTRUCT_STREAM && o->kind == GEN_OP_LAUNCH && o->stream >= 0)
      return 1;
    streams += o->kind == GEN_OP_STREAM_CREATE ? 1 : o->kind == GEN_OP_STREAM_DESTROY ? -1 : 0;
    for (int d = 0; k == GEN_CONSTRUCT_WAITED && d < o->ndeps; d++)
      for (int j = 0; j < i; j++) /* (an earlier host wait of the same context and block) */
        if (c->ops[j].kind == GEN_OP_HOST_WAIT && c->ops[j].ctx == o->ctx &&
            c->ops[j].blk == o->blk)
          for (int e = 0; e < c->ops[j].ndeps; e++)
            if (c->ops[j].deps[e] == o->deps[d])
              return 1;
    for (int d = 0; k == GEN_CONSTRUCT_EXTRA_DEP && d < o->ndeps; d++)
      if (dep_unneeded(c, i, d))
        return 1;
  }
  return k == GEN_CONSTRUCT_STREAM_END && streams > 0;
}

int gen_avoid_case(const GenAvoid *a, const GenCase *c) {
  for (int i = 0; i < c->nops; i++)
    if (gen_avoid_op(a, &c->ops[i]))
      return 1;
  for (int k = 0; k < GEN_CONSTRUCT__COUNT; k++)
    if ((a->constructs & (1u << k)) && has_construct(c, k))
      return 1;
  return 0;
}
