/*
 * genops.c: the ops the generator draws from the op mix: allocs and deallocs, launches (on views,
 * on explicit streams), copies and sets, joins and host waits, observes. Each picks the buffers
 * its context owns, waits for what their last accesses need (genstate.c) and records its own.
 */
#include "genpriv.h"

#include "../runner/kernels.h"

#include <string.h>

void gen__op_alloc(G *g, Ctx *x) {
  if (g->live_dev >= g->cfg.buffers)
    return;
  GenBuf gb = {GEN_BUF_DEVICE, g->cfg.elems, 0, GEN_ELEM_I32, 0};
  if (g->cfg.view_pct > 0) /* (drawn only when on) a static allocation, cast to ?xT */
    gb.stat = af_rng_chance(&g->rng, g->cfg.view_pct) != 0;
  if (g->cfg.typed_pct > 0 && af_rng_chance(&g->rng, g->cfg.typed_pct)) { /* only when on */
    gb.elem = (uint8_t)(1 + af_rng_below(&g->rng, GEN_ELEM__COUNT - 1));
    for (int h = 0; h < g->c->nbufs; h++) /* mostly the type of a host buffer, to copy to */
      if (g->c->bufs[h].kind == GEN_BUF_HOST && g->c->bufs[h].elem != GEN_ELEM_I32 &&
          af_rng_chance(&g->rng, 70))
        gb.elem = g->c->bufs[h].elem;
  }
  int b = gen_case_add_buf(g->c, &gb);
  if (b < 0 || af_grow((void **)&g->bs, &g->capbs, b + 1, sizeof(BState))) {
    gen__oom(g);
    return;
  }
  BState *st = &g->bs[b];
  memset(st, 0, sizeof *st);
  st->owner = x->id;
  st->writer = -1;
  st->region_private = x->id != 0;
  GenOp o = gen__blank(GEN_OP_ALLOC, x->id);
  o.buf = b;
  if (af_rng_chance(&g->rng, g->cfg.host_shared_pct)) {
    o.mode = GEN_ALLOC_HOST_SHARED;
    st->shared = 1;
  } else if (af_rng_chance(&g->rng, g->cfg.sync_pct)) {
    o.mode = GEN_ALLOC_SYNC;
  } else {
    o.mode = GEN_ALLOC_ASYNC;
    o.async = 1;
  }
  g->live_dev++;
  if (o.async) {
    TSet s;
    s.n = 0;
    int deps[GEN_MAX_DEPS];
    if (x->nrecent && af_rng_chance(&g->rng, 60))
      gen__ts_add(&s, x->recent[af_rng_below(&g->rng, (uint32_t)x->nrecent)]);
    int nd = gen__finalize_deps(g, x, &s, 1, deps);
    if (nd < 0)
      return;
    st->writer = gen__emit_async(g, x, &o, deps, nd);
  } else {
    gen__emit(g, &o);
  }
}

void gen__op_dealloc(G *g, Ctx *x, int b) {
  BState *st = &g->bs[b];
  TSet s;
  s.n = 0;
  gen__need_for(g, x, &s, b, 1);
  GenOp o = gen__blank(GEN_OP_DEALLOC, x->id);
  o.buf = b;
  if (af_rng_chance(&g->rng, g->cfg.sync_pct)) {
    if (s.n)
      gen__host_wait(g, x, &s);
    gen__emit(g, &o);
  } else {
    o.async = 1;
    int deps[GEN_MAX_DEPS];
    int nd = gen__finalize_deps(g, x, &s, 1, deps);
    if (nd < 0)
      return;
    gen__emit_async(g, x, &o, deps, nd);
  }
  st->owner = -2;
  g->live_dev--;
}

/* A view of `len` of a buffer's n elements: stride 1 or 2, an offset that keeps it inside. */
static void draw_view(G *g, int n, int len, int32_t *v) {
  int stride = af_rng_chance(&g->rng, 50) && (len - 1) * 2 < n ? 2 : 1;
  v[0] = (int32_t)af_rng_below(&g->rng, (uint32_t)(n - (len - 1) * stride));
  v[1] = len;
  v[2] = stride;
}

/* Views for a launch's operands (drawn only when the knob is on): one length for all (less than
 * the whole buffer only once the destination is written whole); an operand shorter than its
 * buffer is a view, a source of the whole length one at even odds. */
static void draw_launch_views(G *g, GenOp *o) {
  if (g->cfg.view_pct <= 0 || !af_rng_chance(&g->rng, g->cfg.view_pct))
    return;
  int n = g->c->bufs[o->args[0]].n;
  int len = g->bs[o->args[0]].written ? 1 + (int)af_rng_below(&g->rng, (uint32_t)n) : n;
  for (int a = 0; a < o->nargs; a++) {
    int na = g->c->bufs[o->args[a]].n;
    if (len < na || (a > 0 && af_rng_chance(&g->rng, 50)))
      draw_view(g, na, len, o->view[a]);
  }
}

void gen__op_launch(G *g, Ctx *x) {
  int k = (int)af_rng_below(&g->rng, KERNEL__COUNT);
  int dst = gen__pick_buf(g, x, GEN_BUF_DEVICE, 0, -1, -1, GEN_ELEM_I32);
  if (dst < 0)
    return;
  int a = -1, b = -1;
  if (k >= KERNEL_TRANSFORM) {
    a = gen__pick_buf(g, x, GEN_BUF_DEVICE, 1, dst, -1, GEN_ELEM_I32);
    if (a < 0)
      k = KERNEL_FILL;
  }
  if (k == KERNEL_COMBINE) {
    b = gen__pick_buf(g, x, GEN_BUF_DEVICE, 1, dst, a, GEN_ELEM_I32);
    if (b < 0)
      k = KERNEL_TRANSFORM;
  }
  GenOp o = gen__blank(GEN_OP_LAUNCH, x->id);
  o.kernel = (uint8_t)k;
  o.nargs = kernel_info(k)->nbufs;
  o.args[0] = dst;
  o.args[1] = a;
  o.args[2] = b;
  o.buf = dst;
  o.value = (int)af_rng_below(&g->rng, 100);
  draw_launch_views(g, &o);
  TSet s;
  s.n = 0;
  gen__need_for(g, x, &s, dst, 1);
  for (int i = 1; i < o.nargs; i++)
    gen__need_for(g, x, &s, o.args[i], 0);
  int sk = g->cfg.stream_pct > 0 && !x->body ? gen__pick_stream(g, x, &s) : -1; /* when on */
  o.stream = sk >= 0 ? x->streams[sk] : -1;
  int deps[GEN_MAX_DEPS];
  int nd = gen__finalize_deps(g, x, &s, 1, deps);
  if (nd < 0)
    return;
  int t = gen__emit_async(g, x, &o, deps, nd);
  if (t < 0)
    return;
  if (sk >= 0)
    gen__stream_launched(g, x, sk, t);
  for (int i = 1; i < o.nargs; i++)
    gen__note_access(g, x, o.args[i], 0, t);
  gen__note_access(g, x, dst, 1, t);
}

/* Views for o's operands (drawn only when the knob is on): a memcpy's source and destination,
 * a memset's destination; a destination only once its buffer is written whole. */
static void draw_views(G *g, GenOp *o) {
  if (g->cfg.view_pct <= 0 || !af_rng_chance(&g->rng, g->cfg.view_pct))
    return;
  int n = g->c->bufs[o->buf].n, len = 1 + (int)af_rng_below(&g->rng, (uint32_t)n);
  int dst = g->bs[o->buf].written && af_rng_chance(&g->rng, 70);
  int src = o->kind == GEN_OP_MEMCPY; /* (both sides of a copy are the same length) */
  if (!dst)
    len = n; /* a whole-buffer destination: the source's view spans as many elements */
  if (dst)
    draw_view(g, n, len, o->view[0]);
  if (src)
    draw_view(g, g->c->bufs[o->src].n, len, o->view[1]);
}

void gen__op_memcpy(G *g, Ctx *x) {
  int dir = (int)af_rng_below(&g->rng, 3); /* 0 H2D, 1 D2H, 2 D2D */
  /* typed buffers are few: half the copies (drawn only when on) look for one first */
  int se = g->cfg.typed_pct > 0 && af_rng_chance(&g->rng, 50) ? NOT_I32 : ANY_ELEM;
  int src, dst;
  if (dir == 0) {
    src = gen__pick_buf(g, x, GEN_BUF_HOST, 1, -1, -1, se);
    if (src < 0)
      src = gen__pick_buf(g, x, GEN_BUF_HOST, 1, -1, -1, ANY_ELEM);
    dst = gen__pick_buf(g, x, GEN_BUF_DEVICE, 0, -1, -1, src >= 0 ? g->c->bufs[src].elem : 0);
  } else if (dir == 1) {
    src = gen__pick_buf(g, x, GEN_BUF_DEVICE, 1, -1, -1, se);
    if (src < 0)
      src = gen__pick_buf(g, x, GEN_BUF_DEVICE, 1, -1, -1, ANY_ELEM);
    dst = gen__pick_buf(g, x, GEN_BUF_HOST, 0, -1, -1, src >= 0 ? g->c->bufs[src].elem : 0);
  } else {
    src = gen__pick_buf(g, x, GEN_BUF_DEVICE, 1, -1, -1, ANY_ELEM);
    dst = gen__pick_buf(g, x, GEN_BUF_DEVICE, 0, src, -1, src >= 0 ? g->c->bufs[src].elem : 0);
  }
  if (src < 0 || dst < 0)
    return;
  GenOp o = gen__blank(GEN_OP_MEMCPY, x->id);
  o.buf = dst;
  o.src = src;
  draw_views(g, &o);
  TSet s;
  s.n = 0;
  gen__need_for(g, x, &s, dst, 1);
  gen__need_for(g, x, &s, src, 0);
  int deps[GEN_MAX_DEPS];
  int nd = gen__finalize_deps(g, x, &s, 1, deps);
  if (nd < 0)
    return;
  int t = gen__emit_async(g, x, &o, deps, nd);
  if (t < 0)
    return;
  gen__note_access(g, x, src, 0, t);
  gen__note_access(g, x, dst, 1, t);
}

void gen__op_memset(G *g, Ctx *x) {
  int dst = gen__pick_buf(g, x, GEN_BUF_DEVICE, 0, -1, -1, NOT_I64);
  if (dst < 0)
    return;
  GenOp o = gen__blank(GEN_OP_MEMSET, x->id);
  o.buf = dst;
  o.value = (int)af_rng_below(&g->rng, 1000);
  if (g->bs[dst].written) /* (a view of a buffer not yet written would leave the rest undefined) */
    draw_views(g, &o);
  TSet s;
  s.n = 0;
  gen__need_for(g, x, &s, dst, 1);
  int deps[GEN_MAX_DEPS];
  int nd = gen__finalize_deps(g, x, &s, 1, deps);
  if (nd < 0)
    return;
  int t = gen__emit_async(g, x, &o, deps, nd);
  if (t >= 0)
    gen__note_access(g, x, dst, 1, t);
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
  if (nd >= 0)
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
  GenOp o = gen__blank(GEN_OP_HOST_WAIT, x->id);
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

void gen__observe(G *g, Ctx *x, int b) {
  TSet s;
  s.n = 0;
  gen__need_for(g, x, &s, b, 0);
  if (s.n)
    gen__host_wait(g, x, &s);
  GenOp o = gen__blank(GEN_OP_OBSERVE, x->id);
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
