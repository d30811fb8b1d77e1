/*
 * op_wait.c: joins and the host's synchronous ops: gpu.wait async (a token following its
 * dependencies), gpu.wait (the host blocks), observe (the host reads a buffer: what the oracle
 * compares): each kind's class (gen_int.h).
 */
#include "gen_int.h"

#include "../kernels/kernels.h"

#include <stdio.h>
#include <string.h>

static int parse_wait_async(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  (void)p, (void)o, (void)op, (void)ctx;
  return 0;
}

static int parse_host_wait(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  return parse_wait_async(p, o, op, ctx);
}

static int parse_observe(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  (void)ctx;
  return gen__use_buf(p, o, "buf", &op->buf);
}

static void put_wait_async(GenWriter *w, const GenOp *o, int depth) {
  (void)w, (void)o, (void)depth;
}

static void put_host_wait(GenWriter *w, const GenOp *o, int depth) {
  put_wait_async(w, o, depth);
}

static void put_observe(GenWriter *w, const GenOp *o, int depth) {
  AfBuf *b = w->b;
  (void)depth;
  af_buf_printf(b, ", \"buf\": \"b%d\"", o->buf);
}

static int check_wait_async(V *v, int i) {
  (void)v, (void)i;
  return 0;
}

static int check_host_wait(V *v, int i) {
  return check_wait_async(v, i);
}

static int check_observe(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  if (o->ctx != 0)
    return gen__vfail(v, i, "observe must be in the host's main function, not in region r%d",
                      o->ctx, 0);
  if (c->bufs[o->buf].kind != GEN_BUF_HOST && v->alloc_node[o->buf] >= 0 &&
      c->ops[v->alloc_node[o->buf]].mode != GEN_ALLOC_HOST_SHARED)
    return gen__vfail(v, i,
                      "observes device buffer b%d; the host can read only host or "
                      "host_shared memory",
                      o->buf, 0);
  return 0;
}

static int render_wait_async(R *r, int i, int depth) {
  const GenOp *o = &r->c->ops[i];
  gen__ind(r, depth);
  af_buf_printf(r->b, "%%t%d = gpu.wait async", o->tok);
  gen__deps(r, o);
  af_buf_puts(r->b, "\n");
  return 0;
}

static int render_host_wait(R *r, int i, int depth) {
  gen__ind(r, depth);
  af_buf_puts(r->b, "gpu.wait");
  gen__deps(r, &r->c->ops[i]);
  af_buf_puts(r->b, "\n");
  return 0;
}

static int render_observe(R *r, int i, int depth) {
  const GenOp *o = &r->c->ops[i];
  int k = gen__i32const(r, depth, i);
  char name[32], type[64]; /* (a ranked buffer, flattened: the hooks take memref<?xT>) */
  snprintf(name, sizeof name, "%%b%d", o->buf);
  snprintf(type, sizeof type, "%s", gen__mty(r->c, o->buf));
  gen__flatten(r, depth, o->buf, name, sizeof name, type, sizeof type);
  gen__ind(r, depth);
  af_buf_printf(r->b, "func.call @asyncfuzz_observe%s(%%k%d, %s) : (i32, %s) -> ()\n",
                gen__hook_sfx(r->c, o->buf), k, name, type);
  return 0;
}

void gen__op_wait_async(G *g, Ctx *x) {
  TSet s;
  s.n = 0;
  int want = 1 + (int)af_rng_below(&g->rng, (uint32_t)g->cfg.max_deps);
  for (int i = 0; i < want && x->nrecent; i++)
    gen__ts_add(&s, x->recent[af_rng_below(&g->rng, (uint32_t)x->nrecent)]);
  if (af_rng_chance(&g->rng, 10))
    s.n = 0; /* a fresh stream */
  int deps[GEN_MAX_DEPS];
  int nd = gen__finalize_deps(g, x, &s, 0, deps);
  if (nd >= 0 && !gen__avoids(g, GEN_OP_WAIT_ASYNC, 1, nd, NULL))
    gen__join(g, x, deps, nd);
}

void gen__op_host_wait(G *g, Ctx *x) {
  if (g->cfg.stream_pct > 0 && x->nstreams > 0 && af_rng_chance(&g->rng, 35) &&
      gen__stream_wait(g, x))
    return;
  TSet s;
  s.n = 0;
  int b = gen__pick_buf(g, x, -1, 0, -1, -1, ANY_ELEM);
  if (b >= 0 && af_rng_chance(&g->rng, 70))
    gen__need_for(g, x, &s, b, 1);
  else if (x->nrecent)
    gen__ts_add(&s, x->recent[af_rng_below(&g->rng, (uint32_t)x->nrecent)]);
  if (s.n)
    gen__host_wait(g, x, &s);
}

/* A host gpu.wait that orders nothing new: with no operands, or again on tokens of this
 * context that a host wait already completed (a wait on a completed token must still work). */
void gen__op_extra_wait(G *g, Ctx *x) {
  GenOp o = gen_op_blank(GEN_OP_HOST_WAIT, x->id);
  if (af_rng_chance(&g->rng, 60)) {
    const uint64_t *done = gen__done_row(g, x->id);
    int cand[64], n = 0;
    for (int t = 0; t < g->ntok && n < 64; t++)
      if (g->tok_ctx[t] == x->id && g->tok_blk[t] == 0 && gen__bit(done, t))
        cand[n++] = t;
    int k = n < g->cfg.max_deps ? n : 1 + (int)af_rng_below(&g->rng, (uint32_t)g->cfg.max_deps);
    for (int d = 0; d < k && n > 0; d++) {
      int j = (int)af_rng_below(&g->rng, (uint32_t)n);
      o.deps[o.ndeps++] = cand[j];
      cand[j] = cand[--n];
    }
  }
  gen__emit(g, &o);
}

/* Whether op o makes a stream of its own in a lowering that runs each op on its first
 * dependency's stream: a gpu.wait async, or an async op with no dependency. */
static int makes_stream(const GenOp *o) {
  return o->tok >= 0 && gen_op_async(o) && (o->kind == GEN_OP_WAIT_ASYNC || o->ndeps == 0);
}

void gen__end_streams(G *g, Ctx *x, int blk, int keep) {
  if (!gen__avoids_construct(g, GEN_CONSTRUCT_STREAM_END) || g->rc)
    return;
  const GenCase *c = g->c;
  int *last = af_malloc(sizeof(int) * (size_t)(g->ntok + 1)); /* per stream: its latest token */
  uint8_t *mine = af_calloc((size_t)g->ntok + 1, 1);          /* 1 made here, 2 ended */
  if (last == NULL || mine == NULL) {
    af_free(last), af_free(mine);
    gen__oom(g);
    return;
  }
  for (int t = 0; t < g->ntok; t++)
    last[t] = -1;
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    if (o->ctx == x->id && o->blk == blk && makes_stream(o) && g->tok_root[o->tok] == o->tok &&
        mine[o->tok] == 0)
      mine[o->tok] = 1;
    if (o->kind == GEN_OP_HOST_WAIT) /* (ends the stream of each token it waits for) */
      for (int d = 0; d < o->ndeps; d++)
        mine[g->tok_root[o->deps[d]]] = 2;
  }
  for (int r = 1; r < c->nregions; r++) /* (a yield ends its tokens' streams) */
    for (int k = 0; k < c->regions[r].nyields; k++)
      if (c->regions[r].yields[k] >= 0)
        mine[g->tok_root[c->regions[r].yields[k]]] = 2;
  if (keep >= 0)
    mine[g->tok_root[keep]] = 2;
  for (int t = 0; t < g->ntok; t++)
    if (g->tok_ctx[t] == x->id && g->tok_blk[t] == blk && mine[g->tok_root[t]] == 1)
      last[g->tok_root[t]] = t;
  GenOp o = gen_op_blank(GEN_OP_HOST_WAIT, x->id);
  int k = g->cfg.max_deps;
  if (gen__avoids(g, GEN_OP_HOST_WAIT, 0, 2, NULL))
    k = 1; /* (one wait per stream, as gen__host_wait makes them) */
  for (int r = 0; r <= g->ntok && g->rc == 0; r++) {
    if (r < g->ntok && last[r] >= 0)
      o.deps[o.ndeps++] = last[r];
    if (o.ndeps > 0 && (o.ndeps == k || r == g->ntok)) {
      /* (the last ops of x or of the body: the tokens are not marked complete, which a wait
       * in a conditional body would not make them) */
      if (gen__emit(g, &o) < 0)
        break;
      g->refit++;
      o = gen_op_blank(GEN_OP_HOST_WAIT, x->id);
    }
  }
  af_free(last);
  af_free(mine);
}

void gen__observe(G *g, Ctx *x, int b) {
  TSet s;
  s.n = 0;
  gen__need_for(g, x, &s, b, 0);
  if (s.n)
    gen__host_wait(g, x, &s);
  GenOp o = gen_op_blank(GEN_OP_OBSERVE, x->id);
  o.buf = b;
  gen__emit(g, &o);
}

void gen__op_observe(G *g, Ctx *x) {
  if (x->id != 0)
    return;
  int b = gen__pick_buf(g, x, GEN_BUF_HOST, 1, -1, -1, ANY_ELEM);
  if (af_rng_chance(&g->rng, 30)) {
    int sb = gen__pick_buf(g, x, GEN_BUF_DEVICE, 1, -1, -1, ANY_ELEM);
    if (sb >= 0 && g->bs[sb].shared)
      b = sb;
  }
  if (b >= 0)
    gen__observe(g, x, b);
}

/* ---- the classes ---- */

const GenOpClass gen__class_wait_async = {parse_wait_async, put_wait_async, check_wait_async,
                                          render_wait_async, gen__op_wait_async};
const GenOpClass gen__class_host_wait = {parse_host_wait, put_host_wait, check_host_wait,
                                         render_host_wait, gen__op_host_wait};
const GenOpClass gen__class_observe = {parse_observe, put_observe, check_observe, render_observe,
                                       gen__op_observe};
