/*
 * generate.c: the seeded random generator of valid cases.
 *
 * Cases are race-free by construction. Each buffer is owned by one context (main or a
 * region body) at a time and only its owner touches it; ownership moves only where the
 * token DAG carries order across contexts: into a region at spawn (the buffer is first made
 * quiescent with a host wait) or through a region input, and back out through a yielded
 * value that the parent awaits. Within a context, each buffer remembers the tokens that
 * cover its last write and the reads since; a new access depends on the ones it conflicts
 * with, unless a host wait in that context already completed them (tracked with each
 * token's ancestor set). Random extra dependencies, joins (gpu.wait async), host waits and
 * shuffled dependency order give chains, fork/join shapes and multi-dependency ops.
 */
#include "genpriv.h"

#include "../runner/kernels.h"

#include <string.h>

static int covered(G *g, int ctx, int t) {
  return t < 0 || gen__bit(gen__done_row(g, ctx), t);
}

/* Adds what an access of buffer b needs in ctx. */
static void need_for(G *g, Ctx *x, TSet *s, int b, int write) {
  BState *st = &g->bs[b];
  if (!covered(g, x->id, st->writer))
    gen__ts_add(s, st->writer);
  if (write)
    for (int k = 0; k < st->nreaders; k++)
      if (!covered(g, x->id, st->readers[k]))
        gen__ts_add(s, st->readers[k]);
}

/* Turns a set into at most max_deps dependencies (joining the rest), shuffled. */
static int finalize_deps(G *g, Ctx *x, TSet *s, int extra_ok, int *deps) {
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

static void host_wait(G *g, Ctx *x, TSet *s) {
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

static void note_access(G *g, Ctx *x, int b, int write, int tok) {
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

/* ---- picking buffers ---- */

/* A buffer x owns, of kind want_kind (-1: any) and element type elem (ANY_ELEM, NOT_I64, or a
 * GenElem), written before when need_written, other than not1 and not2; -1 when none. */
#define ANY_ELEM -1
#define NOT_I64 -2
#define NOT_I32 -3
static int pick_buf(G *g, Ctx *x, int want_kind, int need_written, int not1, int not2, int elem) {
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

/* ---- op emitters ---- */

static void op_alloc(G *g, Ctx *x) {
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
    int nd = finalize_deps(g, x, &s, 1, deps);
    if (nd < 0)
      return;
    st->writer = gen__emit_async(g, x, &o, deps, nd);
  } else {
    gen__emit(g, &o);
  }
}

static void op_dealloc(G *g, Ctx *x, int b) {
  BState *st = &g->bs[b];
  TSet s;
  s.n = 0;
  need_for(g, x, &s, b, 1);
  GenOp o = gen__blank(GEN_OP_DEALLOC, x->id);
  o.buf = b;
  if (af_rng_chance(&g->rng, g->cfg.sync_pct)) {
    if (s.n)
      host_wait(g, x, &s);
    gen__emit(g, &o);
  } else {
    o.async = 1;
    int deps[GEN_MAX_DEPS];
    int nd = finalize_deps(g, x, &s, 1, deps);
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

static void op_launch(G *g, Ctx *x) {
  int k = (int)af_rng_below(&g->rng, KERNEL__COUNT);
  int dst = pick_buf(g, x, GEN_BUF_DEVICE, 0, -1, -1, GEN_ELEM_I32);
  if (dst < 0)
    return;
  int a = -1, b = -1;
  if (k >= KERNEL_TRANSFORM) {
    a = pick_buf(g, x, GEN_BUF_DEVICE, 1, dst, -1, GEN_ELEM_I32);
    if (a < 0)
      k = KERNEL_FILL;
  }
  if (k == KERNEL_COMBINE) {
    b = pick_buf(g, x, GEN_BUF_DEVICE, 1, dst, a, GEN_ELEM_I32);
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
  need_for(g, x, &s, dst, 1);
  for (int i = 1; i < o.nargs; i++)
    need_for(g, x, &s, o.args[i], 0);
  int sk = g->cfg.stream_pct > 0 && !x->body ? gen__pick_stream(g, x, &s) : -1; /* when on */
  o.stream = sk >= 0 ? x->streams[sk] : -1;
  int deps[GEN_MAX_DEPS];
  int nd = finalize_deps(g, x, &s, 1, deps);
  if (nd < 0)
    return;
  int t = gen__emit_async(g, x, &o, deps, nd);
  if (t < 0)
    return;
  if (sk >= 0)
    gen__stream_launched(g, x, sk, t);
  for (int i = 1; i < o.nargs; i++)
    note_access(g, x, o.args[i], 0, t);
  note_access(g, x, dst, 1, t);
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

static void op_memcpy(G *g, Ctx *x) {
  int dir = (int)af_rng_below(&g->rng, 3); /* 0 H2D, 1 D2H, 2 D2D */
  /* typed buffers are few: half the copies (drawn only when on) look for one first */
  int se = g->cfg.typed_pct > 0 && af_rng_chance(&g->rng, 50) ? NOT_I32 : ANY_ELEM;
  int src, dst;
  if (dir == 0) {
    src = pick_buf(g, x, GEN_BUF_HOST, 1, -1, -1, se);
    if (src < 0)
      src = pick_buf(g, x, GEN_BUF_HOST, 1, -1, -1, ANY_ELEM);
    dst = pick_buf(g, x, GEN_BUF_DEVICE, 0, -1, -1, src >= 0 ? g->c->bufs[src].elem : 0);
  } else if (dir == 1) {
    src = pick_buf(g, x, GEN_BUF_DEVICE, 1, -1, -1, se);
    if (src < 0)
      src = pick_buf(g, x, GEN_BUF_DEVICE, 1, -1, -1, ANY_ELEM);
    dst = pick_buf(g, x, GEN_BUF_HOST, 0, -1, -1, src >= 0 ? g->c->bufs[src].elem : 0);
  } else {
    src = pick_buf(g, x, GEN_BUF_DEVICE, 1, -1, -1, ANY_ELEM);
    dst = pick_buf(g, x, GEN_BUF_DEVICE, 0, src, -1, src >= 0 ? g->c->bufs[src].elem : 0);
  }
  if (src < 0 || dst < 0)
    return;
  GenOp o = gen__blank(GEN_OP_MEMCPY, x->id);
  o.buf = dst;
  o.src = src;
  draw_views(g, &o);
  TSet s;
  s.n = 0;
  need_for(g, x, &s, dst, 1);
  need_for(g, x, &s, src, 0);
  int deps[GEN_MAX_DEPS];
  int nd = finalize_deps(g, x, &s, 1, deps);
  if (nd < 0)
    return;
  int t = gen__emit_async(g, x, &o, deps, nd);
  if (t < 0)
    return;
  note_access(g, x, src, 0, t);
  note_access(g, x, dst, 1, t);
}

static void op_memset(G *g, Ctx *x) {
  int dst = pick_buf(g, x, GEN_BUF_DEVICE, 0, -1, -1, NOT_I64);
  if (dst < 0)
    return;
  GenOp o = gen__blank(GEN_OP_MEMSET, x->id);
  o.buf = dst;
  o.value = (int)af_rng_below(&g->rng, 1000);
  if (g->bs[dst].written) /* (a view of a buffer not yet written would leave the rest undefined) */
    draw_views(g, &o);
  TSet s;
  s.n = 0;
  need_for(g, x, &s, dst, 1);
  int deps[GEN_MAX_DEPS];
  int nd = finalize_deps(g, x, &s, 1, deps);
  if (nd < 0)
    return;
  int t = gen__emit_async(g, x, &o, deps, nd);
  if (t >= 0)
    note_access(g, x, dst, 1, t);
}

static void op_wait_async(G *g, Ctx *x) {
  TSet s;
  s.n = 0;
  int want = 1 + (int)af_rng_below(&g->rng, (uint32_t)g->cfg.max_deps);
  for (int i = 0; i < want && x->nrecent; i++)
    gen__ts_add(&s, x->recent[af_rng_below(&g->rng, (uint32_t)x->nrecent)]);
  if (af_rng_chance(&g->rng, 10))
    s.n = 0; /* a fresh stream */
  int deps[GEN_MAX_DEPS];
  int nd = finalize_deps(g, x, &s, 0, deps);
  if (nd >= 0)
    gen__join(g, x, deps, nd);
}

static void op_host_wait(G *g, Ctx *x) {
  if (g->cfg.stream_pct > 0 && x->nstreams > 0 && af_rng_chance(&g->rng, 35) &&
      gen__stream_wait(g, x))
    return;
  TSet s;
  s.n = 0;
  int b = pick_buf(g, x, -1, 0, -1, -1, ANY_ELEM);
  if (b >= 0 && af_rng_chance(&g->rng, 70))
    need_for(g, x, &s, b, 1);
  else if (x->nrecent)
    gen__ts_add(&s, x->recent[af_rng_below(&g->rng, (uint32_t)x->nrecent)]);
  if (s.n)
    host_wait(g, x, &s);
}

/* A host gpu.wait that orders nothing new: with no operands, or again on tokens of this
 * context that a host wait already completed (a wait on a completed token must still work). */
static void op_extra_wait(G *g, Ctx *x) {
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

static void observe(G *g, Ctx *x, int b) {
  TSet s;
  s.n = 0;
  need_for(g, x, &s, b, 0);
  if (s.n)
    host_wait(g, x, &s);
  GenOp o = gen__blank(GEN_OP_OBSERVE, x->id);
  o.buf = b;
  gen__emit(g, &o);
}

static void op_observe(G *g, Ctx *x) {
  if (x->id != 0)
    return;
  int b = pick_buf(g, x, GEN_BUF_HOST, 1, -1, -1, ANY_ELEM);
  if (af_rng_chance(&g->rng, 30)) {
    int sb = pick_buf(g, x, GEN_BUF_DEVICE, 1, -1, -1, ANY_ELEM);
    if (sb >= 0 && g->bs[sb].shared)
      b = sb;
  }
  if (b >= 0)
    observe(g, x, b);
}

/* ---- regions ---- */

static void gen_ctx(G *g, Ctx *x, int budget);

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
static void await_region(G *g, Ctx *x, int r, int want_value) {
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

static void drop_child(Ctx *x, int r) {
  for (int i = 0; i < x->nchildren; i++)
    if (x->children[i] == r) {
      x->children[i] = x->children[--x->nchildren];
      return;
    }
}

static void op_await(G *g, Ctx *x) {
  if (x->nchildren == 0)
    return;
  int r = x->children[af_rng_below(&g->rng, (uint32_t)x->nchildren)];
  await_region(g, x, r, af_rng_chance(&g->rng, 80));
  drop_child(x, r);
}

/* Values of x's children that still carry buffers nobody claimed: await them again so the
 * buffers come back to x. */
static void claim_leftovers(G *g, Ctx *x) {
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
    await_region(g, x, r, 1);
    drop_child(x, r);
  }
  gen__close_streams(g, x);
  claim_leftovers(g, x);
  for (int b = 0; b < g->c->nbufs && g->rc == 0; b++)
    if (g->bs[b].owner == x->id && g->bs[b].region_private)
      op_dealloc(g, x, b);
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
        need_for(g, x, &s, owned[i], 1);
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
      int nd = finalize_deps(g, x, &s, 0, deps);
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

static void op_execute(G *g, Ctx *x, int budget) {
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
  int hb = pick_buf(g, x, GEN_BUF_HOST, 0, -1, -1, ANY_ELEM);
  if (hb >= 0 && af_rng_chance(&g->rng, 60))
    lend[nl++] = hb;
  while (nl < want) {
    int b = pick_buf(g, x, -1, 0, nl ? lend[0] : -1, nl > 1 ? lend[1] : -1, ANY_ELEM);
    if (b < 0 || (nl > 2 && b == lend[2]))
      break;
    lend[nl++] = b;
  }
  TSet s;
  s.n = 0;
  for (int i = 0; i < nl; i++)
    need_for(g, x, &s, lend[i], 1);
  /* what the lent buffers still wait for: a host wait, or (drawn only when captures are on)
   * one token the region captures and its ops on those buffers depend on */
  int lent_tok = -1;
  if (s.n)
    gen__ts_minimize(g, &s);
  if (s.n && g->cfg.capture_pct > 0 && af_rng_chance(&g->rng, g->cfg.capture_pct) &&
      s.n <= g->cfg.max_deps)
    lent_tok = s.n == 1 ? s.t[0] : gen__join(g, x, s.t, s.n);
  else if (s.n)
    host_wait(g, x, &s);
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
  gen_ctx(g, &child, budget);
  close_region(g, &child, r);
  af_free(child.children);
  if (g->rc == 0 &&
      af_grow((void **)&x->children, &x->capchildren, x->nchildren + 1, sizeof(int)) == 0)
    x->children[x->nchildren++] = r;
  else
    gen__oom(g);
}

/* A dealloc of a device buffer x owns and may free (main frees any; a region its own). */
static void op_dealloc_any(G *g, Ctx *x) {
  int b = pick_buf(g, x, GEN_BUF_DEVICE, 0, -1, -1, ANY_ELEM);
  if (b >= 0 && (x->id == 0 || g->bs[b].region_private))
    op_dealloc(g, x, b);
}

/* The kinds drawn by weight, each with what makes one in context x: the op mix, and await. The
 * others come from their own knobs: execute (region_pct), call, if, for and branch (block_pct),
 * the stream ops (stream_pct, with the launches on them). */
static void (*const draw[GEN_OP__COUNT])(G *g, Ctx *x) = {
    [GEN_OP_LAUNCH] = op_launch,       [GEN_OP_MEMCPY] = op_memcpy,
    [GEN_OP_MEMSET] = op_memset,       [GEN_OP_ALLOC] = op_alloc,
    [GEN_OP_DEALLOC] = op_dealloc_any, [GEN_OP_WAIT_ASYNC] = op_wait_async,
    [GEN_OP_HOST_WAIT] = op_host_wait, [GEN_OP_OBSERVE] = op_observe,
    [GEN_OP_AWAIT] = op_await,
};

#define AWAIT_WEIGHT 6 /* an await's weight while the context has child regions to wait for */

/* Kind k's weight in context x: its mix weight where an op of the kind may stand (a block's
 * body, a for's, main only: GEN_K_BODY, GEN_K_LOOP, GEN_K_MAIN). */
static int mix_weight(const G *g, const Ctx *x, int k) {
  unsigned f = gen_op_flags(k);
  int body = x->body, loop = body && g->cur_kind == GEN_OP_FOR;
  if (!(f & GEN_K_MIX) || (body && !(f & GEN_K_BODY)) || (loop && !(f & GEN_K_LOOP)) ||
      ((f & GEN_K_MAIN) && (x->id != 0 || body)))
    return 0;
  return g->cfg.w[k];
}

static void gen_ctx(G *g, Ctx *x, int budget) {
  const GenConfig *c = &g->cfg;
  int start = g->c->nops;
  int body = x->body, w[GEN_OP__COUNT];
  for (int k = 0; k < GEN_OP__COUNT; k++)
    w[k] = mix_weight(g, x, k);
  int guard = 0;
  while (g->rc == 0 && g->c->nops - start < budget && g->c->nops < c->ops + 8 &&
         guard++ < 20 * budget + 100) {
    if (body) {
      /* a block's body: only the op kinds below */
    } else if (c->extra_wait_pct > 0 && af_rng_chance(&g->rng, c->extra_wait_pct)) {
      op_extra_wait(g, x); /* drawn only when on: seeds made without the knob stay the same */
      continue;
    } else if (c->block_pct > 0 && af_rng_chance(&g->rng, c->block_pct)) {
      int remaining = budget - (g->c->nops - start);
      gen__op_block(g, x, 1 + (int)af_rng_below(&g->rng, (uint32_t)(remaining / 3 + 2)));
      continue;
    }
    if (!body && af_rng_chance(&g->rng, c->region_pct) && x->depth < c->max_nesting) {
      int remaining = budget - (g->c->nops - start);
      int sub = 2 + (int)af_rng_below(&g->rng, (uint32_t)(remaining / 2 + 2));
      op_execute(g, x, sub);
      continue;
    }
    w[GEN_OP_AWAIT] = x->nchildren ? AWAIT_WEIGHT : 0;
    int total = 0;
    for (int k = 0; k < GEN_OP__COUNT; k++)
      total += w[k];
    if (total <= 0)
      break;
    int pick = (int)af_rng_below(&g->rng, (uint32_t)total);
    int kind = 0;
    while (pick >= w[kind])
      pick -= w[kind++];
    if (draw[kind]) /* (every kind with a weight has one) */
      draw[kind](g, x);
  }
}

static int check_config(const GenConfig *c, AfErr *err) {
  for (int i = 0; i < GEN_KNOB_COUNT; i++) {
    const GenKnob *k = gen_knob(i);
    int v = gen_knob_value(c, k);
    if (v < k->lo || v > k->hi)
      return af_err_set(err, AF_EUSAGE, "%s must be %ld..%ld (got %d)", k->option, k->lo, k->hi, v);
  }
  int total = 0;
  for (int k = 0; k < GEN_MIX_COUNT; k++) {
    if (c->w[k] < 0)
      return af_err_set(err, AF_EUSAGE, "op mix weights must not be negative");
    total += c->w[k];
  }
  if (total == 0)
    return af_err_set(err, AF_EUSAGE, "op mix weights are all zero");
  return 0;
}

int gen_generate(GenCase *c, uint64_t seed, const GenConfig *cfg, AfErr *err) {
  gen_case_init(c);
  int rc = check_config(cfg, err);
  if (rc)
    return rc;
  G g;
  memset(&g, 0, sizeof g);
  g.c = c;
  g.cfg = *cfg;
  g.err = err;
  af_rng_seed(&g.rng, seed);
  c->seed = seed;
  c->cfg = *cfg;
  c->has_config = 1;
  c->spin = cfg->spin;
  g.captok = 64;
  g.caprows = 8;
  g.words = 1;
  g.anc = af_calloc(64, sizeof(uint64_t));
  g.completed = af_calloc(8, sizeof(uint64_t));
  g.tok_ctx = af_malloc(sizeof(int) * 64);
  g.tok_blk = af_malloc(sizeof(int) * 64);
  g.gen_body = gen_ctx;
  g.cur_iter = -1;
  if (!g.anc || !g.completed || !g.tok_ctx || !g.tok_blk || c->nregions != 1 || c->nblocks != 1) {
    gen__oom(&g);
    goto out;
  }
  Ctx main;
  memset(&main, 0, sizeof main);
  for (int i = 0; i < cfg->host_bufs; i++) {
    GenBuf gb = {GEN_BUF_HOST, cfg->elems, (int)af_rng_below(&g.rng, 1000), GEN_ELEM_I32, 0};
    if (i > 0 && cfg->typed_pct > 0 && af_rng_chance(&g.rng, 2 * cfg->typed_pct)) /* first: i32 */
      gb.elem = (uint8_t)(1 + af_rng_below(&g.rng, GEN_ELEM__COUNT - 1));
    int b = gen_case_add_buf(c, &gb);
    if (b < 0 || af_grow((void **)&g.bs, &g.capbs, b + 1, sizeof(BState))) {
      gen__oom(&g);
      goto out;
    }
    memset(&g.bs[b], 0, sizeof(BState));
    g.bs[b].written = 1;
    g.bs[b].writer = -1;
  }
  int first = 1 + (int)af_rng_below(&g.rng, 2);
  for (int i = 0; i < first; i++)
    op_alloc(&g, &main);
  gen_ctx(&g, &main, cfg->ops);
  /* close main: await everything, free device buffers, observe every host-visible buffer */
  while (main.nchildren && g.rc == 0) {
    await_region(&g, &main, main.children[0], 1);
    drop_child(&main, main.children[0]);
  }
  gen__close_streams(&g, &main);
  claim_leftovers(&g, &main);
  for (int b = 0; b < c->nbufs && g.rc == 0; b++)
    if (g.bs[b].owner == 0 && g.bs[b].shared && g.bs[b].written)
      observe(&g, &main, b);
  for (int b = 0; b < c->nbufs && g.rc == 0; b++)
    if (g.bs[b].owner == 0 && c->bufs[b].kind == GEN_BUF_DEVICE)
      op_dealloc(&g, &main, b);
  for (int b = 0; b < c->nbufs && g.rc == 0; b++)
    if (c->bufs[b].kind == GEN_BUF_HOST)
      observe(&g, &main, b);
  af_free(main.children);
  if (g.rc == 0)
    g.rc = gen_case_finish(c, err);
out:
  rc = g.rc;
  for (int i = 0; i < g.nvals; i++)
    af_free(g.vals[i].bufs);
  af_free(g.vals);
  af_free(g.bs);
  af_free(g.tok_ctx);
  af_free(g.tok_blk);
  af_free(g.anc);
  af_free(g.completed);
  if (rc) {
    gen_case_free(c);
    gen_case_init(c);
  }
  return rc;
}
