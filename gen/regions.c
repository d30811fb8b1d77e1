/*
 * regions.c: async.execute regions in generated cases. A region is spawned with the buffers its
 * parent lends it (made quiescent first, or captured with the token they wait for) and the values
 * of earlier regions it consumes; its body is generated like any context; it closes by awaiting
 * its children, freeing what it allocated and yielding its buffers in values, which the parent
 * claims back when it awaits them.
 */
#include "genpriv.h"

#include <string.h>

static void claim(G *g, Ctx *x, Value *v, int tok) {
  if (v->claimed)
    return;
  v->claimed = 1;
  for (int i = 0; i < v->nbufs; i++) {
    BState *st = &g->bs[v->bufs[i]];
    st->owner = x->id;
    st->writer = tok;
    st->nreaders = 0;
  }
}

static Value *find_value(G *g, int region, int vidx) {
  for (int i = 0; i < g->nvals; i++)
    if (g->vals[i].region == region && g->vals[i].vidx == vidx)
      return &g->vals[i];
  return NULL;
}

/* Awaits child region r from ctx x: a value (claiming its buffers) or its completion. */
void gen__await_region(G *g, Ctx *x, int r, int want_value) {
  const GenRegion *gr = &g->c->regions[r];
  GenOp o = gen__blank(GEN_OP_AWAIT, x->id);
  o.region = r;
  int vidx = -1;
  if (want_value && gr->nyields > 0) {
    /* prefer a value that still carries buffers */
    for (int k = 0; k < gr->nyields && vidx < 0; k++) {
      Value *v = find_value(g, r, k);
      if (v && !v->claimed && v->nbufs)
        vidx = k;
    }
    if (vidx < 0)
      vidx = (int)af_rng_below(&g->rng, (uint32_t)gr->nyields);
  }
  o.vidx = vidx;
  if (vidx >= 0) {
    o.tok = gen__new_token(g, x, NULL, 0);
    if (o.tok < 0 || gen__emit(g, &o) < 0)
      return;
    Value *v = find_value(g, r, vidx);
    if (v)
      claim(g, x, v, o.tok);
  } else {
    gen__emit(g, &o);
  }
}

void gen__drop_child(Ctx *x, int r) {
  for (int i = 0; i < x->nchildren; i++)
    if (x->children[i] == r) {
      x->children[i] = x->children[--x->nchildren];
      return;
    }
}

void gen__op_await(G *g, Ctx *x) {
  if (x->nchildren == 0)
    return;
  int r = x->children[af_rng_below(&g->rng, (uint32_t)x->nchildren)];
  gen__await_region(g, x, r, af_rng_chance(&g->rng, 80));
  gen__drop_child(x, r);
}

/* Values of x's children that still carry buffers nobody claimed: await them again so the
 * buffers come back to x. */
void gen__claim_leftovers(G *g, Ctx *x) {
  for (int i = 0; i < g->nvals && g->rc == 0; i++) {
    Value *v = &g->vals[i];
    if (!v->claimed && v->nbufs && g->c->regions[v->region].parent == x->id) {
      GenOp o = gen__blank(GEN_OP_AWAIT, x->id);
      o.region = v->region;
      o.vidx = v->vidx;
      o.tok = gen__new_token(g, x, NULL, 0);
      if (o.tok < 0 || gen__emit(g, &o) < 0)
        return;
      claim(g, x, v, o.tok);
    }
  }
}

/* Closes region ctx x: awaits its children, frees its private buffers, yields values. */
static void close_region(G *g, Ctx *x, int region) {
  while (x->nchildren && g->rc == 0) {
    int r = x->children[0];
    gen__await_region(g, x, r, 1);
    gen__drop_child(x, r);
  }
  gen__close_streams(g, x);
  gen__claim_leftovers(g, x);
  for (int b = 0; b < g->c->nbufs && g->rc == 0; b++)
    if (g->bs[b].owner == x->id && g->bs[b].region_private)
      gen__op_dealloc(g, x, b);
  int owned[256], n = 0;
  for (int b = 0; b < g->c->nbufs && n < 256; b++)
    if (g->bs[b].owner == x->id)
      owned[n++] = b;
  int nv = n == 0 ? (x->nrecent && af_rng_chance(&g->rng, 50) ? 1 : 0)
                  : 1 + (int)af_rng_below(&g->rng, n < 2 ? 1 : 2);
  int group[256];
  for (int i = 0; i < n; i++)
    group[i] = (int)af_rng_below(&g->rng, (uint32_t)nv);
  g->c->regions[region].nyields = 0;
  for (int k = 0; k < nv && g->rc == 0; k++) {
    TSet s;
    s.n = 0;
    int nb = 0;
    for (int i = 0; i < n; i++)
      if (group[i] == k) {
        gen__need_for(g, x, &s, owned[i], 1);
        nb++;
      }
    gen__ts_minimize(g, &s);
    int t;
    if (s.n == 0 && nb == 0 && x->nrecent)
      t = x->recent[x->nrecent - 1];
    else if (s.n == 1 && af_rng_chance(&g->rng, 85))
      t = s.t[0];
    else {
      int deps[GEN_MAX_DEPS];
      int nd = gen__finalize_deps(g, x, &s, 0, deps);
      if (nd < 0)
        return;
      t = gen__join(g, x, deps, nd);
    }
    if (t < 0)
      return;
    GenRegion *out = &g->c->regions[region];
    out->yields[out->nyields++] = t;
    if (af_grow((void **)&g->vals, &g->capvals, g->nvals + 1, sizeof(Value))) {
      gen__oom(g);
      return;
    }
    Value *v = &g->vals[g->nvals++];
    memset(v, 0, sizeof *v);
    v->region = region;
    v->vidx = k;
    v->bufs = nb ? af_malloc(sizeof(int) * (size_t)nb) : NULL;
    if (nb && v->bufs == NULL) {
      gen__oom(g);
      return;
    }
    for (int i = 0; i < n; i++)
      if (group[i] == k) {
        v->bufs[v->nbufs++] = owned[i];
        g->bs[owned[i]].owner = -1;
      }
  }
}

void gen__op_execute(G *g, Ctx *x, int budget) {
  if (x->depth >= g->cfg.max_nesting)
    return;
  GenRegion gr;
  memset(&gr, 0, sizeof gr);
  gr.parent = x->id;
  /* inputs: unclaimed values of this context's children, to chain regions */
  for (int i = 0; i < g->nvals && gr.ninputs < 2; i++) {
    Value *v = &g->vals[i];
    if (!v->claimed && g->c->regions[v->region].parent == x->id && af_rng_chance(&g->rng, 50)) {
      gr.inputs[gr.ninputs].region = v->region;
      gr.inputs[gr.ninputs].vidx = v->vidx;
      gr.ninputs++;
    }
  }
  /* lent buffers: made quiescent first */
  int lend[4], nl = 0;
  int want = 1 + (int)af_rng_below(&g->rng, 3);
  int hb = gen__pick_buf(g, x, GEN_BUF_HOST, 0, -1, -1, ANY_ELEM);
  if (hb >= 0 && af_rng_chance(&g->rng, 60))
    lend[nl++] = hb;
  while (nl < want) {
    int b = gen__pick_buf(g, x, -1, 0, nl ? lend[0] : -1, nl > 1 ? lend[1] : -1, ANY_ELEM);
    if (b < 0 || (nl > 2 && b == lend[2]))
      break;
    lend[nl++] = b;
  }
  TSet s;
  s.n = 0;
  for (int i = 0; i < nl; i++)
    gen__need_for(g, x, &s, lend[i], 1);
  /* what the lent buffers still wait for: a host wait, or (drawn only when captures are on)
   * one token the region captures and its ops on those buffers depend on */
  int lent_tok = -1;
  if (s.n)
    gen__ts_minimize(g, &s);
  if (s.n && g->cfg.capture_pct > 0 && af_rng_chance(&g->rng, g->cfg.capture_pct) &&
      s.n <= g->cfg.max_deps)
    lent_tok = s.n == 1 ? s.t[0] : gen__join(g, x, s.t, s.n);
  else if (s.n)
    gen__host_wait(g, x, &s);
  if (g->rc)
    return;
  GenOp o = gen__blank(GEN_OP_EXECUTE, x->id);
  gr.exec_op = g->c->nops;
  int r = gen_case_add_region(g->c, &gr);
  if (r < 0 || gen__grow_tokens(g, g->ntok + 1)) {
    gen__oom(g);
    return;
  }
  o.region = r;
  if (gen__emit(g, &o) < 0)
    return;
  memset(gen__done_row(g, r), 0, sizeof(uint64_t) * (size_t)g->words);
  Ctx child;
  memset(&child, 0, sizeof child);
  child.id = r;
  child.depth = x->depth + 1;
  for (int k = 0; k < gr.ninputs; k++) {
    int t = gen__new_token(g, &child, NULL, 0);
    if (t < 0)
      return;
    g->c->regions[r].inputs[k].tok = t;
    Value *v = find_value(g, gr.inputs[k].region, gr.inputs[k].vidx);
    if (v)
      claim(g, &child, v, t);
  }
  int lent_in = -1; /* lent_tok as the region names it */
  if (lent_tok >= 0) {
    lent_in = gen__new_token(g, &child, &lent_tok, 1);
    if (lent_in < 0)
      return;
    GenRegion *cr = &g->c->regions[r];
    cr->captures[cr->ncaptures].outer = lent_tok;
    cr->captures[cr->ncaptures++].tok = lent_in;
  }
  /* captures: tokens of this context that the region uses directly (drawn only when on) */
  if (g->cfg.capture_pct > 0 && x->nrecent > 0 && af_rng_chance(&g->rng, g->cfg.capture_pct)) {
    int ncap = 1 + (int)af_rng_below(&g->rng, 2);
    for (int k = 0; k < ncap && g->rc == 0 && g->c->regions[r].ncaptures < GEN_MAX_REGION_IO; k++) {
      int outer = x->recent[af_rng_below(&g->rng, (uint32_t)x->nrecent)];
      GenRegion *cr = &g->c->regions[r];
      int dup = 0;
      for (int j = 0; j < cr->ncaptures; j++)
        dup |= cr->captures[j].outer == outer;
      if (dup)
        continue;
      int t = gen__new_token(g, &child, &outer, 1);
      if (t < 0)
        return;
      cr->captures[cr->ncaptures].outer = outer;
      cr->captures[cr->ncaptures].tok = t;
      cr->ncaptures++;
    }
  }
  for (int i = 0; i < nl; i++) {
    BState *st = &g->bs[lend[i]];
    st->owner = r;
    st->writer = lent_in; /* -1 after a host wait: nothing pending */
    st->nreaders = 0;
  }
  g->gen_body(g, &child, budget);
  close_region(g, &child, r);
  af_free(child.children);
  if (g->rc == 0 &&
      af_grow((void **)&x->children, &x->capchildren, x->nchildren + 1, sizeof(int)) == 0)
    x->children[x->nchildren++] = r;
  else
    gen__oom(g);
}

/* A dealloc of a device buffer x owns and may free (main frees any; a region its own). */
