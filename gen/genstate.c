/*
 * genstate.c: the generator's token bookkeeping, shared by generate.c and streams.c
 * (genpriv.h).
 */
#include "genpriv.h"

#include <string.h>

uint64_t *gen__anc_row(G *g, int t) {
  return g->anc + (size_t)t * (size_t)g->words;
}

uint64_t *gen__done_row(G *g, int ctx) {
  return g->completed + (size_t)ctx * (size_t)g->words;
}

int gen__bit(const uint64_t *row, int t) {
  return (int)((row[t >> 6] >> (t & 63)) & 1);
}

int gen__oom(G *g) {
  if (g->rc == 0)
    g->rc = af_err_set(g->err, AF_ENOMEM, "out of memory generating a case");
  return g->rc;
}

GenOp gen__blank(int kind, int ctx) {
  GenOp o;
  memset(&o, 0, sizeof o);
  o.kind = (uint8_t)kind;
  o.ctx = ctx;
  o.tok = o.buf = o.src = o.region = o.vidx = o.stream = -1;
  return o;
}

int gen__emit(G *g, GenOp *o) {
  if (g->rc)
    return -1;
  if (o->kind < GEN_OP_CALL)
    o->blk = g->cur_blk;
  int i = gen_case_add_op(g->c, o);
  if (i < 0)
    return gen__oom(g);
  return i;
}

void gen__ts_add(TSet *s, int t) {
  if (t < 0)
    return;
  for (int i = 0; i < s->n; i++)
    if (s->t[i] == t)
      return;
  if (s->n < 256)
    s->t[s->n++] = t;
}

/* Drops tokens implied by another member. */
void gen__ts_minimize(G *g, TSet *s) {
  int n = 0;
  for (int i = 0; i < s->n; i++) {
    int implied = 0;
    for (int j = 0; j < s->n && !implied; j++)
      if (j != i && gen__bit(gen__anc_row(g, s->t[j]), s->t[i]))
        implied = 1;
    if (!implied)
      s->t[n++] = s->t[i];
  }
  s->n = n;
}

/* Re-lays the bitsets out for a larger token capacity. */
int gen__grow_tokens(G *g, int need) {
  if (need <= g->captok && g->c->nregions <= g->caprows)
    return 0;
  int ncap = g->captok;
  while (ncap < need)
    ncap *= 2;
  int nrows = g->caprows;
  while (nrows < g->c->nregions + 1)
    nrows *= 2;
  int nwords = (ncap + 63) / 64;
  uint64_t *na = af_calloc((size_t)ncap * (size_t)nwords, sizeof(uint64_t));
  uint64_t *nd = af_calloc((size_t)nrows * (size_t)nwords, sizeof(uint64_t));
  int *nc = af_realloc(g->tok_ctx, sizeof(int) * (size_t)ncap);
  if (nc)
    g->tok_ctx = nc;
  int *nb = af_realloc(g->tok_blk, sizeof(int) * (size_t)ncap);
  if (nb)
    g->tok_blk = nb;
  if (!na || !nd || !nc || !nb) {
    af_free(na);
    af_free(nd);
    return gen__oom(g);
  }
  for (int t = 0; t < g->ntok; t++)
    memcpy(na + (size_t)t * (size_t)nwords, gen__anc_row(g, t),
           sizeof(uint64_t) * (size_t)g->words);
  for (int r = 0; r < g->caprows; r++)
    memcpy(nd + (size_t)r * (size_t)nwords, gen__done_row(g, r),
           sizeof(uint64_t) * (size_t)g->words);
  af_free(g->anc);
  af_free(g->completed);
  g->anc = na;
  g->completed = nd;
  g->captok = ncap;
  g->caprows = nrows;
  g->words = nwords;
  return 0;
}

void gen__remember(Ctx *x, int t) {
  if (x->nrecent < RECENT) {
    x->recent[x->nrecent++] = t;
  } else {
    memmove(x->recent, x->recent + 1, sizeof(int) * (RECENT - 1));
    x->recent[RECENT - 1] = t;
  }
}

/* A new token of ctx whose ancestors are deps (and their ancestors). */
int gen__new_token(G *g, Ctx *x, const int *deps, int ndeps) {
  if (gen__grow_tokens(g, g->ntok + 1))
    return -1;
  int t = g->ntok++;
  uint64_t *row = gen__anc_row(g, t);
  memset(row, 0, sizeof(uint64_t) * (size_t)g->words);
  for (int d = 0; d < ndeps; d++) {
    const uint64_t *dr = gen__anc_row(g, deps[d]);
    for (int w = 0; w < g->words; w++)
      row[w] |= dr[w];
    row[deps[d] >> 6] |= 1ull << (deps[d] & 63);
  }
  g->tok_ctx[t] = x->id;
  g->tok_blk[t] = g->cur_blk;
  gen__remember(x, t);
  return t;
}

/* Emits an async op o with dependencies deps; returns its token. */
int gen__emit_async(G *g, Ctx *x, GenOp *o, const int *deps, int ndeps) {
  o->ndeps = ndeps;
  memcpy(o->deps, deps, sizeof(int) * (size_t)ndeps);
  o->tok = gen__new_token(g, x, deps, ndeps);
  if (o->tok < 0 || gen__emit(g, o) < 0)
    return -1;
  return o->tok;
}

int gen__join(G *g, Ctx *x, const int *deps, int n) {
  GenOp o = gen__blank(GEN_OP_WAIT_ASYNC, x->id);
  return gen__emit_async(g, x, &o, deps, n);
}
