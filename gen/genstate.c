/*
 * genstate.c: the generator's state, shared by its files (genpriv.h): the tokens (their ancestor
 * sets, what host waits completed), and each buffer's last accesses with what a new access of it
 * must wait for.
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
  if (!(gen_op_flags(o->kind) & GEN_K_BLOCK))
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

/* A token set as the block being generated may name it (blocks.c has the rules). */
void gen__import(G *g, TSet *s) {
  if (g->cur_blk == 0)
    return;
  const GenBlock *k = &g->c->blocks[g->cur_blk];
  int direct = g->cur_kind == GEN_OP_IF || g->cur_kind == GEN_OP_BRANCH;
  int n = 0;
  for (int i = 0; i < s->n; i++) {
    int t = s->t[i];
    if (g->tok_blk[t] != g->cur_blk) {
      for (int q = 0; q < k->ninputs; q++)
        if (k->inputs[q].outer == t)
          t = k->inputs[q].tok;
      if (g->tok_blk[t] != g->cur_blk && !direct)
        t = g->cur_iter; /* stands for every token the context waited for at the block */
    }
    int dup = t < 0;
    for (int j = 0; j < n && !dup; j++)
      dup = s->t[j] == t;
    if (!dup)
      s->t[n++] = t;
  }
  s->n = n;
  if (s->n == 0 && g->cur_kind == GEN_OP_FOR)
    s->t[s->n++] = g->cur_iter;
}

/* ---- what an access of a buffer waits for ---- */

int gen__covered(G *g, int ctx, int t) {
  return t < 0 || gen__bit(gen__done_row(g, ctx), t);
}

/* Adds what an access of buffer b needs in ctx. */
void gen__need_for(G *g, Ctx *x, TSet *s, int b, int write) {
  BState *st = &g->bs[b];
  if (!gen__covered(g, x->id, st->writer))
    gen__ts_add(s, st->writer);
  if (write)
    for (int k = 0; k < st->nreaders; k++)
      if (!gen__covered(g, x->id, st->readers[k]))
        gen__ts_add(s, st->readers[k]);
}

/* Turns a set into at most max_deps dependencies (joining the rest), shuffled. */
int gen__finalize_deps(G *g, Ctx *x, TSet *s, int extra_ok, int *deps) {
  gen__import(g, s);
  gen__ts_minimize(g, s);
  if (s->n == 0 && extra_ok && g->cfg.root_wait_pct > 0 &&
      af_rng_chance(&g->rng, g->cfg.root_wait_pct)) {
    GenOp o = gen__blank(GEN_OP_WAIT_ASYNC, x->id);
    int none[1] = {0};
    int t = gen__emit_async(g, x, &o, none, 0);
    if (t < 0)
      return -1;
    gen__ts_add(s, t);
  }
  if (extra_ok && x->nrecent > 0 && af_rng_chance(&g->rng, g->cfg.extra_dep_pct)) {
    gen__ts_add(s, x->recent[af_rng_below(&g->rng, (uint32_t)x->nrecent)]);
  }
  /* a token this region captured (drawn only when the region has some: older seeds stay) */
  const GenRegion *gr = x->id > 0 ? &g->c->regions[x->id] : NULL;
  if (extra_ok && gr && gr->ncaptures > 0 && !g->cur_blk &&
      af_rng_chance(&g->rng, g->cfg.capture_pct))
    gen__ts_add(s, gr->captures[af_rng_below(&g->rng, (uint32_t)gr->ncaptures)].tok);
  int maxd = g->cfg.max_deps;
  while (s->n > maxd && g->rc == 0) {
    int k = s->n - maxd + 1;
    if (k > maxd)
      k = maxd;
    int j = gen__join(g, x, s->t, k);
    if (j < 0)
      return -1;
    memmove(s->t, s->t + k, sizeof(int) * (size_t)(s->n - k));
    s->n -= k;
    s->t[s->n++] = j;
  }
  for (int i = s->n - 1; i > 0; i--) {
    int j = (int)af_rng_below(&g->rng, (uint32_t)(i + 1));
    int tmp = s->t[i];
    s->t[i] = s->t[j];
    s->t[j] = tmp;
  }
  memcpy(deps, s->t, sizeof(int) * (size_t)s->n);
  return s->n;
}

int gen__emit_drawn(G *g, Ctx *x, GenOp *o, TSet *s) {
  int deps[GEN_MAX_DEPS];
  int nd = gen__finalize_deps(g, x, s, 1, deps);
  return nd < 0 ? -1 : gen__emit_async(g, x, o, deps, nd);
}

void gen__host_wait(G *g, Ctx *x, TSet *s) {
  gen__import(g, s);
  gen__ts_minimize(g, s);
  int off = 0;
  while (off < s->n && g->rc == 0) {
    int k = s->n - off;
    if (k > g->cfg.max_deps)
      k = g->cfg.max_deps;
    GenOp o = gen__blank(GEN_OP_HOST_WAIT, x->id);
    o.ndeps = k;
    memcpy(o.deps, s->t + off, sizeof(int) * (size_t)k);
    if (gen__emit(g, &o) < 0)
      return;
    uint64_t *done = gen__done_row(g, x->id);
    for (int d = 0; d < k; d++) {
      const uint64_t *a = gen__anc_row(g, o.deps[d]);
      for (int w = 0; w < g->words; w++)
        done[w] |= a[w];
      done[o.deps[d] >> 6] |= 1ull << (o.deps[d] & 63);
    }
    off += k;
  }
}

void gen__note_access(G *g, Ctx *x, int b, int write, int tok) {
  BState *st = &g->bs[b];
  if (!write && g->blk_read)
    g->blk_read[b] = 1;
  if (write) {
    st->writer = tok;
    st->nreaders = 0;
    st->written = 1;
    return;
  }
  if (st->nreaders == MAX_READERS) {
    int k = g->cfg.max_deps < MAX_READERS ? g->cfg.max_deps : MAX_READERS;
    TSet s; /* (in a block's body: as the body may name them) */
    s.n = 0;
    for (int r = 0; r < k; r++)
      gen__ts_add(&s, st->readers[r]);
    gen__import(g, &s);
    int j = gen__join(g, x, s.t, s.n);
    if (j < 0)
      return;
    memmove(st->readers, st->readers + k, sizeof(int) * (size_t)(MAX_READERS - k));
    st->nreaders -= k;
    st->readers[st->nreaders++] = j;
  }
  st->readers[st->nreaders++] = tok;
}

int gen__pick_buf(G *g, Ctx *x, int want_kind, int need_written, int not1, int not2, int elem) {
  int cand[256], n = 0;
  for (int b = 0; b < g->c->nbufs && n < 256; b++) {
    BState *st = &g->bs[b];
    int e = g->c->bufs[b].elem;
    if (st->owner != x->id || b == not1 || b == not2)
      continue;
    if ((elem >= 0 && e != elem) || (elem == NOT_I64 && e == GEN_ELEM_I64) ||
        (elem == NOT_I32 && e == GEN_ELEM_I32))
      continue;
    if (want_kind >= 0 && g->c->bufs[b].kind != want_kind)
      continue;
    if (need_written && !st->written)
      continue;
    if (!need_written && g->blk_read && g->blk_read[b])
      continue; /* (a for's body: what an earlier op of it read is not written) */
    cand[n++] = b;
  }
  return n ? cand[af_rng_below(&g->rng, (uint32_t)n)] : -1;
}

/* A view of `len` of a buffer's n elements: stride 1 or 2, an offset that keeps it inside. */
void gen__draw_view(G *g, int n, int len, int32_t *v) {
  int stride = af_rng_chance(&g->rng, 50) && (len - 1) * 2 < n ? 2 : 1;
  v[0] = (int32_t)af_rng_below(&g->rng, (uint32_t)(n - (len - 1) * stride));
  v[1] = len;
  v[2] = stride;
}
