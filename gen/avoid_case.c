/*
 * avoid_case.c: whether a case made elsewhere (mutated, read) has what an avoid set names
 * (gen.h: gen_avoid_case), for guided generation's cases, which the generator did not shape.
 */
#include "gen.h"

enum { GEN_MAX_STREAMS_CASE = 256 }; /* (a case with more is taken to have stream-order) */

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

/* Adds edge "token to is ordered after token from" to e (pairs), -1 out of memory. */
static int edge(int **e, int *n, int *cap, int to, int from) {
  if (to < 0 || from < 0)
    return 0;
  if (af_grow((void **)e, cap, *n + 1, 2 * sizeof(int)))
    return -1;
  (*e)[2 * *n] = to;
  (*e)[2 * *n + 1] = from;
  (*n)++;
  return 0;
}

/* The token graph of c, as pairs (to, from): token `to` is ordered after token `from` (an op's
 * token after its dependencies, a block's or region's inner name after the outer token, a
 * block's token after its yield and its inputs). *n pairs; NULL (n 0) when there are none or
 * memory ran out (*oom). */
static int *token_edges(const GenCase *c, int *n, int *oom) {
  int *e = NULL, cap = 0, rc = 0;
  *n = 0;
  for (int j = 0; j < c->nops && rc == 0; j++) {
    const GenOp *o = &c->ops[j];
    for (int d = 0; d < o->ndeps && rc == 0; d++)
      rc = edge(&e, n, &cap, o->tok, o->deps[d]);
    if (o->block > 0 && o->block < c->nblocks) {
      const GenBlock *k = &c->blocks[o->block];
      rc |= edge(&e, n, &cap, o->tok, k->yield);
      for (int q = 0; q < k->ninputs && rc == 0; q++)
        rc = edge(&e, n, &cap, k->inputs[q].tok, k->inputs[q].outer) ||
             edge(&e, n, &cap, o->tok, k->inputs[q].outer);
    }
  }
  for (int r = 1; r < c->nregions && rc == 0; r++)
    for (int q = 0; q < c->regions[r].ncaptures && rc == 0; q++)
      rc = edge(&e, n, &cap, c->regions[r].captures[q].tok, c->regions[r].captures[q].outer);
  *oom = rc != 0;
  return e;
}

/* Whether op i of c is ordered after token t by tokens: through its dependencies and the edges
 * e[0..n) (token_edges). */
static int reaches(const GenCase *c, const int *e, int n, int i, int t) {
  char *seen = af_calloc((size_t)c->ntoks + 1, 1);
  int *stack = af_calloc((size_t)n + GEN_MAX_DEPS + 1, sizeof(int)) /* (a push per edge) */,
      top = 0, hit = 0;
  if (!seen || !stack) {
    af_free(seen), af_free(stack);
    return 0;
  }
  for (int d = 0; d < c->ops[i].ndeps; d++)
    stack[top++] = c->ops[i].deps[d];
  while (top > 0 && !hit) {
    int u = stack[--top];
    hit = u == t;
    if (hit || u < 0 || u >= c->ntoks || seen[u])
      continue;
    seen[u] = 1;
    for (int k = 0; k < n; k++)
      if (e[2 * k] == u && e[2 * k + 1] >= 0 && e[2 * k + 1] < c->ntoks && !seen[e[2 * k + 1]])
        stack[top++] = e[2 * k + 1];
  }
  af_free(seen), af_free(stack);
  return hit;
}

/* Whether a launch on a stream of c is ordered after the stream's last launch by the stream
 * alone: no token of that launch among its ancestors (out of memory: taken as yes). */
static int stream_alone(const GenCase *c) {
  int last[GEN_MAX_STREAMS_CASE], n, oom, alone = 0;
  for (int s = 0; s < GEN_MAX_STREAMS_CASE; s++)
    last[s] = -1;
  int *e = token_edges(c, &n, &oom);
  for (int i = 0; i < c->nops && !alone; i++) {
    const GenOp *o = &c->ops[i];
    if (!gen_op_on_stream(o))
      continue;
    alone = oom || o->stream >= GEN_MAX_STREAMS_CASE ||
            (last[o->stream] >= 0 && !reaches(c, e, n, i, last[o->stream]));
    if (!alone)
      last[o->stream] = o->tok;
  }
  af_free(e);
  return alone;
}

/* Whether a block of c of kind kind takes or gives a token: an input, a result, or (an if, a
 * branch) an op of its body that depends on a token made outside it. */
static int has_crossing(const GenCase *c, int kind) {
  for (int b = 1; b < c->nblocks; b++) {
    const GenBlock *k = &c->blocks[b];
    if (k->op < 0 || k->op >= c->nops || c->ops[k->op].kind != kind)
      continue;
    if (k->ninputs > 0 || k->yield >= 0 || c->ops[k->op].tok >= 0)
      return 1;
    for (int i = k->first; i <= k->last && i < c->nops; i++)
      for (int d = 0; d < c->ops[i].ndeps; d++) {
        int j = i - 1; /* (its maker: the last op before it with it) */
        while (j >= 0 && c->ops[j].tok != c->ops[i].deps[d])
          j--;
        if (j < 0 || c->ops[j].blk != b)
          return 1;
      }
  }
  return 0;
}

/* Whether case c has construct k (GEN_CONSTRUCT_MAP), as a case made elsewhere (mutated, read)
 * has it: its regions' yields, inputs and captures, a launch on a stream after its last by the
 * stream alone, a stream created and never destroyed, a dependency on a token an earlier host wait
 * of its context named, a dependency the case stays valid without. */
static int has_construct(const GenCase *c, int k) {
  for (int r = 1; r < c->nregions; r++)
    if ((k == GEN_CONSTRUCT_YIELD && c->regions[r].nyields > 0) ||
        (k == GEN_CONSTRUCT_REGION_INPUT && c->regions[r].ninputs > 0) ||
        (k == GEN_CONSTRUCT_CAPTURE && c->regions[r].ncaptures > 0))
      return 1;
  if (k == GEN_CONSTRUCT_STREAM)
    return stream_alone(c);
  if (k == GEN_CONSTRUCT_CALL_TOKEN || k == GEN_CONSTRUCT_IF_TOKEN ||
      k == GEN_CONSTRUCT_BRANCH_TOKEN)
    return has_crossing(c, k == GEN_CONSTRUCT_CALL_TOKEN ? GEN_OP_CALL
                           : k == GEN_CONSTRUCT_IF_TOKEN ? GEN_OP_IF
                                                         : GEN_OP_BRANCH);
  for (int i = 0; k == GEN_CONSTRUCT_BLOCK_REGION && i < c->nops; i++)
    if ((gen_op_flags(c->ops[i].kind) & GEN_K_BLOCK) && c->ops[i].ctx > 0)
      return 1;
  int streams = 0;
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
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
    if (gen_avoid_case_op(a, c, i))
      return 1;
  for (int k = 0; k < GEN_CONSTRUCT__COUNT; k++)
    if ((a->constructs & (1u << k)) && has_construct(c, k))
      return 1;
  return 0;
}
