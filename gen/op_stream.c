/*
 * op_stream.c: explicit streams (version 2): stream_create, stream_sync and stream_destroy, calls
 * of the mgpu* ABI in the rendered module, each kind's class (gen_int.h). The work enqueued on a
 * stream (launches given it) runs in order, and a stream_sync or stream_destroy follows it all.
 * The generator lets a context create up to GEN__MAX_STREAMS streams of its own, enqueue launches
 * on them, synchronize or destroy them from the host, and destroy the ones left when it closes.
 * The stream orders its work: a launch on it needs no dependency on what the stream's earlier
 * launches already imply, so a case whose lowering drops the stream races.
 */
#include "gen_int.h"

#include "../kernels/kernels.h"

#include <stdio.h>
#include <string.h>

static int parse_stream_create(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  (void)ctx;
  return gen__use_stream(p, o, op->kind == GEN_OP_STREAM_CREATE, &op->stream);
}

static int parse_stream_sync(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  return parse_stream_create(p, o, op, ctx);
}

static int parse_stream_destroy(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  return parse_stream_create(p, o, op, ctx);
}

static void put_stream_create(GenWriter *w, const GenOp *o, int depth) {
  AfBuf *b = w->b;
  (void)depth;
  af_buf_printf(b, ", \"stream\": \"s%d\"", o->stream);
}

static void put_stream_sync(GenWriter *w, const GenOp *o, int depth) {
  put_stream_create(w, o, depth);
}

static void put_stream_destroy(GenWriter *w, const GenOp *o, int depth) {
  put_stream_create(w, o, depth);
}

/* An op on an explicit stream (a launch given one, or a stream op): the stream must be one its
 * context created and has not destroyed; the op follows the work enqueued on it before. */
int gen__visit_stream(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  int s = o->stream;
  if (s < 0 && !(gen_op_flags(o->kind) & GEN_K_ON_STREAM))
    return gen__vfail(v, i, "names no stream", 0, 0);
  if (s < 0)
    return 0;
  if (s >= c->nstreams)
    return gen__vfail(v, i, "names stream s%d, which does not exist", s, 0);
  if (o->kind == GEN_OP_STREAM_CREATE) {
    if (v->s_create[s] >= 0)
      return gen__vfail(v, i, "creates stream s%d a second time (first at op #%d)", s,
                        v->s_create[s]);
    v->s_create[s] = i;
    return 0;
  }
  if (v->s_create[s] < 0)
    return gen__vfail(v, i, "uses stream s%d, which is not created before it", s, 0);
  if (v->s_destroy[s] >= 0)
    return gen__vfail(v, i, "uses stream s%d after its stream_destroy (op #%d)", s,
                      v->s_destroy[s]);
  if (c->ops[v->s_create[s]].ctx != o->ctx)
    return gen__vfail(
        v, i, "uses stream s%d of another context (r%d); a stream is used where it is created", s,
        c->ops[v->s_create[s]].ctx);
  gen__edge(v, v->s_last[s], i);
  if (gen_op_flags(o->kind) & GEN_K_ON_STREAM)
    v->s_last[s] = i;
  if (o->kind == GEN_OP_STREAM_DESTROY)
    v->s_destroy[s] = i;
  return 0;
}

static int check_stream_create(V *v, int i) {
  return gen__visit_stream(v, i);
}

static int check_stream_sync(V *v, int i) {
  return gen__visit_stream(v, i);
}

static int check_stream_destroy(V *v, int i) {
  return gen__visit_stream(v, i);
}

static int render_stream_create(R *r, int i, int depth) {
  gen__ind(r, depth);
  af_buf_printf(r->b, "%%st%d = llvm.call @mgpuStreamCreate() : () -> !llvm.ptr\n",
                r->c->ops[i].stream);
  return 0;
}

static int render_stream_sync(R *r, int i, int depth) {
  gen__ind(r, depth);
  af_buf_printf(r->b, "llvm.call @mgpuStreamSynchronize(%%st%d) : (!llvm.ptr) -> ()\n",
                r->c->ops[i].stream);
  return 0;
}

static int render_stream_destroy(R *r, int i, int depth) {
  render_stream_sync(r, i, depth);
  if (r->map) /* both calls are the op's */
    gen__map_line(r, gen__lines_so_far(r), i);
  gen__ind(r, depth);
  af_buf_printf(r->b, "llvm.call @mgpuStreamDestroy(%%st%d) : (!llvm.ptr) -> ()\n",
                r->c->ops[i].stream);
  return 0;
}

/* The host knows the work of x's stream k complete. */
static void stream_done(G *g, Ctx *x, int k) {
  int last = x->stream_last[k];
  if (last < 0)
    return;
  uint64_t *done = gen__done_row(g, x->id);
  const uint64_t *a = gen__anc_row(g, last);
  for (int w = 0; w < g->words; w++)
    done[w] |= a[w];
  done[last >> 6] |= 1ull << (last & 63);
}

/* A stream_sync or stream_destroy of x's stream k. */
static void stream_op(G *g, Ctx *x, int k, int kind) {
  int last = x->stream_last[k];
  if (last >= 0 && gen__avoids_construct(g, GEN_CONSTRUCT_STREAM) &&
      !gen__covered(g, x->id, last)) { /* (stream-order avoided: the host waits by the token) */
    TSet w;
    w.n = 0;
    gen__ts_add(&w, last);
    gen__host_wait(g, x, &w);
  }
  GenOp o = gen_op_blank(kind, x->id);
  o.stream = x->streams[k];
  if (gen__emit(g, &o) < 0)
    return;
  stream_done(g, x, k);
  if (kind == GEN_OP_STREAM_DESTROY) {
    x->nstreams--;
    x->streams[k] = x->streams[x->nstreams];
    x->stream_last[k] = x->stream_last[x->nstreams];
  }
}

int gen__pick_stream(G *g, Ctx *x, TSet *s) {
  if (!af_rng_chance(&g->rng, g->cfg.stream_pct))
    return -1;
  int k;
  if (x->nstreams > 0 && (x->nstreams == GEN__MAX_STREAMS || af_rng_chance(&g->rng, 75))) {
    k = (int)af_rng_below(&g->rng, (uint32_t)x->nstreams);
  } else {
    GenOp o = gen_op_blank(GEN_OP_STREAM_CREATE, x->id);
    o.stream = g->c->nstreams++; /* (gen_case_finish counts them again) */
    if (gen__emit(g, &o) < 0)
      return -1;
    k = x->nstreams++;
    x->streams[k] = o.stream;
    x->stream_last[k] = -1;
  }
  int last = x->stream_last[k];
  if (last >= 0 && gen__avoids_construct(g, GEN_CONSTRUCT_STREAM)) {
    gen__ts_add(s, last); /* (stream-order avoided: the stream's order made explicit by a
                             token, the stream kept) */
    gen__ts_minimize(g, s);
  } else if (last >= 0) { /* what the stream's last launch implies needs no dependency */
    gen__ts_add(s, last);
    gen__ts_minimize(g, s);
    int n = 0;
    for (int i = 0; i < s->n; i++)
      if (s->t[i] != last)
        s->t[n++] = s->t[i];
    s->n = n;
  }
  return k;
}

void gen__stream_launched(G *g, Ctx *x, int k, int t) {
  int last = x->stream_last[k];
  if (t < 0)
    return;
  if (last >= 0) {
    uint64_t *row = gen__anc_row(g, t);
    const uint64_t *a = gen__anc_row(g, last);
    for (int w = 0; w < g->words; w++)
      row[w] |= a[w];
    row[last >> 6] |= 1ull << (last & 63);
  }
  x->stream_last[k] = t;
}

int gen__stream_wait(G *g, Ctx *x) {
  if (x->nstreams == 0)
    return 0;
  int k = (int)af_rng_below(&g->rng, (uint32_t)x->nstreams);
  stream_op(g, x, k, af_rng_chance(&g->rng, 50) ? GEN_OP_STREAM_DESTROY : GEN_OP_STREAM_SYNC);
  return 1;
}

void gen__close_streams(G *g, Ctx *x) {
  while (x->nstreams > 0 && g->rc == 0)
    stream_op(g, x, x->nstreams - 1, GEN_OP_STREAM_DESTROY);
}

/* ---- the classes ---- */

const GenOpClass gen__class_stream_create = {parse_stream_create, put_stream_create,
                                             check_stream_create, render_stream_create, NULL};
const GenOpClass gen__class_stream_sync = {parse_stream_sync, put_stream_sync, check_stream_sync,
                                           render_stream_sync, NULL};
const GenOpClass gen__class_stream_destroy = {parse_stream_destroy, put_stream_destroy,
                                              check_stream_destroy, render_stream_destroy, NULL};
