/*
 * streams.c: explicit streams in generated cases (version 2). A context creates up to
 * GEN__MAX_STREAMS streams of its own, enqueues launches on them, synchronizes or destroys
 * them from the host, and destroys the ones left when it closes. The stream orders its work:
 * a launch on it needs no dependency on what the stream's earlier launches already imply, so
 * a case whose lowering drops the stream races.
 */
#include "genpriv.h"

#include <string.h>

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
  GenOp o = gen__blank(kind, x->id);
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
    GenOp o = gen__blank(GEN_OP_STREAM_CREATE, x->id);
    o.stream = g->c->nstreams++; /* (gen_case_finish counts them again) */
    if (gen__emit(g, &o) < 0)
      return -1;
    k = x->nstreams++;
    x->streams[k] = o.stream;
    x->stream_last[k] = -1;
  }
  int last = x->stream_last[k];
  if (last >= 0) { /* what the stream's last launch implies needs no dependency */
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
