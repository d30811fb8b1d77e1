/*
 * genstate.c: the generator's state, shared by its files (genpriv.h): the tokens (their ancestor
 * sets, what host waits completed), and each buffer's last accesses with what a new access of it
 * must wait for; and how the generator honours its avoid set (below).
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

int gen__emit(G *g, GenOp *o) {
  if (g->rc)
    return -1;
  if (!(gen_op_flags(o->kind) & GEN_K_BLOCK))
    o->blk = g->cur_blk;
  int i = gen_case_add_op(g->c, o);
  if (i < 0)
    return gen__oom(g);
  if (g->cfg.avoid.nshapes > 0) /* (what only shapes tell apart: not worth its cost otherwise) */
    gen_op_mark(g->c, i, &g->c->ops[i]);
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

/* Drops tokens implied by another member: with many members, those in the union of the members'
 * ancestor sets (a token is not its own ancestor), in members x words where the pairwise test is
 * members squared (at 1024 ops, joins of more than 64 tokens). */
void gen__ts_minimize(G *g, TSet *s) {
  int n = 0;
  enum { MAXW = 64 };
  if (s->n > 8 && g->words <= MAXW) {
    uint64_t u[MAXW] = {0};
    int self = 0;
    for (int i = 0; i < s->n; i++) {
      const uint64_t *a = gen__anc_row(g, s->t[i]);
      self |= gen__bit(a, s->t[i]);
      for (int w = 0; w < g->words; w++)
        u[w] |= a[w];
    }
    if (!self) { /* (else the pairwise test below, which leaves a member's own bit out) */
      for (int i = 0; i < s->n; i++)
        if (!gen__bit(u, s->t[i]))
          s->t[n++] = s->t[i];
      s->n = n;
      return;
    }
  }
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
  int *nr = af_realloc(g->tok_root, sizeof(int) * (size_t)ncap);
  if (nr)
    g->tok_root = nr;
  if (!na || !nd || !nc || !nb || !nr) {
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
  g->tok_root[t] = t;
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
  if (ndeps > 0 && o->kind != GEN_OP_WAIT_ASYNC) /* on its first dependency's stream */
    g->tok_root[o->tok] = g->tok_root[deps[0]];
  return o->tok;
}

int gen__join(G *g, Ctx *x, const int *deps, int n) {
  GenOp o = gen_op_blank(GEN_OP_WAIT_ASYNC, x->id);
  if (gen__avoids_construct(g, GEN_CONSTRUCT_WAITED) && n <= 256) {
    TSet s; /* host-wait avoided: a token a host wait completed (its stream gone) is left out */
    s.n = n;
    memcpy(s.t, deps, sizeof(int) * (size_t)n);
    gen__drop_waited(g, x, &s);
    return gen__emit_async(g, x, &o, s.t, s.n);
  }
  return gen__emit_async(g, x, &o, deps, n);
}

int gen__steered(const G *g) {
  return g->cfg.avoid.nshapes > 0 || g->cfg.avoid.constructs != 0;
}

int gen__crossing_avoided(const G *g, int kind) {
  int k = kind == GEN_OP_CALL     ? GEN_CONSTRUCT_CALL_TOKEN
          : kind == GEN_OP_IF     ? GEN_CONSTRUCT_IF_TOKEN
          : kind == GEN_OP_BRANCH ? GEN_CONSTRUCT_BRANCH_TOKEN
                                  : -1;
  return k >= 0 && gen__avoids_construct(g, k);
}

/* A token set as the block being generated may name it (blocks.c has the rules). */
void gen__import(G *g, TSet *s) {
  if (g->cur_blk == 0)
    return;
  const GenBlock *k = &g->c->blocks[g->cur_blk];
  int direct = g->cur_kind == GEN_OP_IF || g->cur_kind == GEN_OP_BRANCH;
  /* (its crossing avoided: what it would name outside, a host wait completed before it) */
  int none = gen__crossing_avoided(g, g->cur_kind);
  int n = 0;
  for (int i = 0; i < s->n; i++) {
    int t = s->t[i];
    if (g->tok_blk[t] != g->cur_blk) {
      for (int q = 0; q < k->ninputs; q++)
        if (k->inputs[q].outer == t)
          t = k->inputs[q].tok;
      if (g->tok_blk[t] != g->cur_blk && !direct)
        t = g->cur_iter; /* stands for every token the context waited for at the block */
      if (g->tok_blk[t] != g->cur_blk && none)
        t = -1;
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

/* Whether a host wait may stand in x (not in a for's body, which repeats). */
static int host_wait_ok(const G *g, const Ctx *x) {
  return !(x->body && g->cur_kind == GEN_OP_FOR);
}

/* Turns a set into at most max_deps dependencies (joining the rest), shuffled. */
int gen__finalize_deps(G *g, Ctx *x, TSet *s, int extra_ok, int *deps) {
  gen__import(g, s);
  gen__ts_minimize(g, s);
  if (s->n == 0 && extra_ok && g->cfg.root_wait_pct > 0 &&
      af_rng_chance(&g->rng, g->cfg.root_wait_pct)) {
    GenOp o = gen_op_blank(GEN_OP_WAIT_ASYNC, x->id);
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
  gen__drop_waited(g, x, s);
  int maxd = g->cfg.max_deps;
  while (s->n > maxd && g->rc == 0) {
    int k = s->n - maxd + 1;
    if (k > maxd)
      k = maxd;
    if (gen__avoids(g, GEN_OP_WAIT_ASYNC, 1, k, NULL) && host_wait_ok(g, x) &&
        !gen__avoids(g, GEN_OP_HOST_WAIT, 0, 1, NULL)) { /* (the avoid set's other form) */
      TSet w;
      w.n = 0;
      for (int i = 0; i < k; i++)
        gen__ts_add(&w, s->t[i]);
      gen__host_wait(g, x, &w);
      memmove(s->t, s->t + k, sizeof(int) * (size_t)(s->n - k));
      s->n -= k;
      continue;
    }
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
  if (nd >= 0)
    nd = gen__fit_deps(g, x, o, deps, nd);
  return nd < 0 ? -1 : gen__emit_async(g, x, o, deps, nd);
}

/* Whether a host wait on s would destroy a stream that a token the wait does not complete still
 * stands for (a lowering that destroys each waited token's stream): two members on one stream,
 * a member's stream shared with a token that is neither complete in x nor an ancestor, or one
 * made outside x (a region's: the contexts it came from may use it later, while x runs). */
static int wait_shares_stream(G *g, Ctx *x, const TSet *s) {
  for (int i = 0; i < s->n; i++) {
    int r = g->tok_root[s->t[i]];
    if (r >= 0 && g->tok_ctx[r] != x->id)
      return 1;
    for (int j = i + 1; j < s->n; j++)
      if (g->tok_root[s->t[j]] == r)
        return 1;
    for (int u = 0; u < g->ntok; u++) {
      if (g->tok_root[u] != r || gen__covered(g, x->id, u))
        continue;
      int done = 0;
      for (int j = 0; j < s->n && !done; j++)
        done = u == s->t[j] || gen__bit(gen__anc_row(g, s->t[j]), u);
      if (!done)
        return 1;
    }
  }
  return 0;
}

/* With host-wait avoided (the construct that destroyed a stream some token still stood for), a
 * wait that would do so waits on joins instead: a gpu.wait async takes the waited tokens (their
 * streams stay), and the host waits on its own stream. s becomes the joins. */
static void wait_through_joins(G *g, Ctx *x, TSet *s) {
  if (!gen__avoids_construct(g, GEN_CONSTRUCT_WAITED) || !wait_shares_stream(g, x, s))
    return;
  int before = g->c->nops, maxd = g->cfg.max_deps;
  for (int off = 0; off < s->n; off += maxd)
    if (gen__avoids(g, GEN_OP_WAIT_ASYNC, 1, s->n - off < maxd ? s->n - off : maxd, NULL))
      return; /* (no other form: waited on as drawn) */
  TSet j;
  j.n = 0;
  for (int off = 0; off < s->n && g->rc == 0;) {
    int k = s->n - off < maxd ? s->n - off : maxd;
    int t = gen__join(g, x, s->t + off, k);
    if (t < 0)
      return;
    gen__ts_add(&j, t);
    off += k;
  }
  g->refit += g->c->nops - before;
  *s = j;
}

void gen__host_wait(G *g, Ctx *x, TSet *s) {
  gen__import(g, s);
  gen__ts_minimize(g, s);
  gen__drop_waited(g, x, s); /* (host-wait avoided: not one completed already) */
  wait_through_joins(g, x, s);
  int off = 0;
  while (off < s->n && g->rc == 0) {
    int k = s->n - off;
    if (k > g->cfg.max_deps)
      k = g->cfg.max_deps;
    if (k > 1 && gen__avoids(g, GEN_OP_HOST_WAIT, 0, k, NULL))
      k = 1; /* (the avoid set's other form: one wait per token) */
    GenOp o = gen_op_blank(GEN_OP_HOST_WAIT, x->id);
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
  if (st->nreaders == MAX_READERS && gen__steered(g)) { /* (readers a host wait completed need
                                                            no join: a block's, out of scope) */
    int n = 0;
    for (int r = 0; r < st->nreaders; r++)
      if (!gen__covered(g, x->id, st->readers[r]))
        st->readers[n++] = st->readers[r];
    st->nreaders = n;
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

int gen__new_host_buf(G *g, int elem, int init) {
  GenBuf gb = {GEN_BUF_HOST, g->cfg.elems, init, (uint8_t)elem, 0, 0, 0, 0, 0, {0, 0, 0}};
  gb.reg = (uint8_t)af_rng_chance(&g->reg, g->cfg.registered_pct);
  int b = gen_case_add_buf(g->c, &gb);
  if (b < 0 || af_grow((void **)&g->bs, &g->capbs, b + 1, sizeof(BState)) || gen__buf_born(g, b)) {
    gen__oom(g);
    return -1;
  }
  memset(&g->bs[b], 0, sizeof(BState));
  g->bs[b].written = 1;
  g->bs[b].writer = -1;
  return b;
}

int gen__buf_born(G *g, int b) {
  if (af_grow((void **)&g->alive, &g->capalive, g->nalive + 1, sizeof(int)))
    return -1;
  g->alive[g->nalive++] = b; /* (the newest: the list stays in order) */
  return 0;
}

void gen__buf_dies(G *g, int b) {
  g->bs[b].owner = -2;
  for (int i = 0; i < g->nalive; i++)
    if (g->alive[i] == b) {
      memmove(g->alive + i, g->alive + i + 1, sizeof(int) * (size_t)(g->nalive - i - 1));
      g->nalive--;
      return;
    }
}

int gen__draw_elem(G *g) {
  if (g->cfg.wide_types_pct > 0 && af_rng_chance(&g->rng, g->cfg.wide_types_pct))
    return GEN_ELEM_TYPED + (int)af_rng_below(&g->rng, GEN_ELEM__COUNT - GEN_ELEM_TYPED);
  return 1 + (int)af_rng_below(&g->rng, GEN_ELEM_TYPED - 1);
}

int gen__pick_buf(G *g, Ctx *x, int want_kind, int need_written, int not1, int not2, int elem) {
  int cand[256], n = 0;
  for (int i = 0; i < g->nalive && n < 256; i++) {
    int b = g->alive[i];
    BState *st = &g->bs[b];
    int e = g->c->bufs[b].elem;
    if (st->owner != x->id || b == not1 || b == not2)
      continue;
    if ((elem >= 0 && e != elem) || (elem == SETTABLE && !gen_elem_settable(e)) ||
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

/* ---- the avoid set ----
 * how the generator honours its avoid set (GenConfig.avoid, avoid.c). It builds the
 * same ordering in another form of the case language wherever one exists, and otherwise leaves
 * the construct out:
 * - an op whose dependency count is avoided: its dependencies joined by one gpu.wait async right
 *   before it (one dependency, threaded: the form "deps=1 unthreaded" does not name), or
 *   completed by a host wait before it (no dependency), or a fresh gpu.wait async token to
 *   depend on (one dependency instead of none);
 * - a synchronous alloc or dealloc avoided: the asynchronous one, and the other way round;
 * - a view avoided: the whole buffer; a block kind avoided: another kind, or none;
 * - the constructs of GEN_CONSTRUCT_MAP: their knobs off (captures become host waits before the
 *   spawn, extra dependencies are not drawn), a launch on a stream depends on the stream's last
 *   launch by its token too (stream-order: the order made explicit), regions lend no buffers and
 *   yield nothing, no dependency on a token a host wait completed.
 * With an empty set the generator draws exactly what it drew before: seeds stay.
 */

int gen__avoids(const G *g, int kind, int async, int ndeps, const GenOp *like) {
  if (g->cfg.avoid.nshapes == 0)
    return 0;
  GenOp o = like ? *like : gen_op_blank(kind, 0);
  o.kind = (uint8_t)kind;
  o.async = (uint8_t)async;
  o.ndeps = ndeps;
  return gen_avoid_op(&g->cfg.avoid, &o);
}

int gen__avoids_construct(const G *g, int id) {
  return (g->cfg.avoid.constructs >> id) & 1;
}

int gen__avoids_view(const G *g, int kind) {
  for (int i = 0; i < g->cfg.avoid.nshapes; i++)
    if (g->cfg.avoid.shapes[i].kind == kind && g->cfg.avoid.shapes[i].view == 1)
      return 1;
  return 0;
}

int gen__avoids_kind(const G *g, int kind) {
  /* every form the kind has (async, synchronous), whatever its dependencies */
  unsigned f = gen_op_flags(kind);
  int forms = 0, gone = 0;
  GenOp rooted = gen_op_blank(kind, 0); /* (the form on a fresh root made right before it) */
  rooted.fresh = 1;
  for (int async = 0; async <= 1; async++) {
    if (async ? !(f & (GEN_K_ASYNC | GEN_K_EITHER)) : (f & GEN_K_ASYNC))
      continue;
    forms++;
    /* (an async form is gone too when each dependency count of it is) */
    gone += gen__avoids(g, kind, async, -1, NULL) ||
            (async && gen__avoids(g, kind, 1, 0, NULL) && gen__avoids(g, kind, 1, 1, NULL) &&
             gen__avoids_threaded(g, kind, &rooted) && gen__avoids(g, kind, 1, 2, NULL));
  }
  return forms > 0 && gone == forms;
}

void gen__avoid_setup(G *g) {
  GenConfig *c = &g->cfg;
  if (gen__avoids_construct(g, GEN_CONSTRUCT_CAPTURE))
    c->capture_pct = 0;
  /* a construct goes when an op kind it needs is avoided: the stream kinds (GEN_K_STREAM), the
   * region's (GEN_K_REGION), every block kind (GEN_K_BLOCK) */
  int blocks = 0;
  for (int k = 0; k < GEN_OP__COUNT; k++) {
    unsigned f = gen_op_flags(k);
    if ((f & GEN_K_STREAM) && gen__avoids_kind(g, k))
      c->stream_pct = 0;
    if ((f & GEN_K_REGION) && gen__avoids_kind(g, k))
      c->region_pct = 0;
    blocks += (f & GEN_K_BLOCK) && !gen__avoids_kind(g, k);
  }
  if (gen__avoids_construct(g, GEN_CONSTRUCT_EXTRA_DEP))
    c->extra_dep_pct = 0;
  if (gen__avoids_construct(g, GEN_CONSTRUCT_INLINE))
    c->inline_pct = 0; /* (gpu.launch_func instead) */
  if (gen__avoids_construct(g, GEN_CONSTRUCT_SHARED_MEMORY))
    c->smem_pct = 0; /* (the kernels' plain forms) */
  if (gen__avoids_construct(g, GEN_CONSTRUCT_REGISTERED))
    c->registered_pct = 0; /* (pageable host memory instead) */
  if (gen__avoids_construct(g, GEN_CONSTRUCT_WAITED))
    c->extra_wait_pct = 0; /* (its waits on completed tokens are what is avoided) */
  if (gen__avoids_kind(g, GEN_OP_WAIT_ASYNC))
    c->root_wait_pct = 0;
  if (blocks == 0)
    c->block_pct = 0;
  for (int k = 0; k < GEN_MIX_COUNT; k++)
    if (gen__avoids_kind(g, k))
      c->w[k] = 0;
}

int gen__pick_async(const G *g, int kind, int drawn) {
  /* the drawn form avoided whatever its dependencies: the other, unless it is too (an async
   * form's dependencies are fitted when it is emitted) */
  if (gen__avoids(g, kind, drawn, -1, NULL) && !gen__avoids(g, kind, !drawn, -1, NULL))
    return !drawn;
  return drawn;
}

/* A gpu.wait async with no dependency: a fresh token to depend on (-1 on failure). */
static int fresh_root(G *g, Ctx *x) {
  GenOp w = gen_op_blank(GEN_OP_WAIT_ASYNC, x->id);
  int none[1] = {0};
  return gen__emit_async(g, x, &w, none, 0);
}

static int fit(G *g, Ctx *x, const GenOp *o, int *deps, int nd);

int gen__avoids_threaded(const G *g, int kind, const GenOp *like) {
  GenOp o = like ? *like : gen_op_blank(kind, 0);
  o.kind = (uint8_t)kind;
  o.async = 1;
  o.ndeps = 1;
  o.threaded = 1;
  return gen_avoid_op(&g->cfg.avoid, &o);
}

/* Whether an op of context x with the one dependency t would be threaded: t is the token of the
 * op the generator made last, a gpu op of x's block (gen_op_threaded). */
static int would_thread(const G *g, const Ctx *x, int t) {
  if (g->c->nops == 0)
    return 0;
  return gen_op_threads_to(&g->c->ops[g->c->nops - 1], x->id, g->cur_blk, t);
}

int gen__fit_deps(G *g, Ctx *x, const GenOp *o, int *deps, int nd) {
  if (g->cfg.avoid.nshapes == 0)
    return nd;
  GenOp as = *o;
  as.threaded = (uint8_t)(nd == 1 && would_thread(g, x, deps[0]));
  if (!gen__avoids(g, o->kind, gen_op_async(o), nd, &as))
    return nd;
  int before = g->c->nops;
  nd = fit(g, x, o, deps, nd);
  g->refit += g->c->nops - before;
  return nd;
}

static int fit(G *g, Ctx *x, const GenOp *o, int *deps, int nd) {
  int a = gen_op_async(o);
  /* joined right before it: one dependency, the token of the op before it (threaded) */
  if (nd >= 1 && a && !gen__avoids_threaded(g, o->kind, o) &&
      !gen__avoids(g, GEN_OP_WAIT_ASYNC, 1, nd, NULL)) {
    int j = gen__join(g, x, deps, nd);
    if (j < 0)
      return -1;
    deps[0] = j;
    return 1;
  }
  if (nd >= 1 && host_wait_ok(g, x) && !gen__avoids(g, GEN_OP_HOST_WAIT, 0, nd, NULL)) {
    int none = !gen__avoids(g, o->kind, a, 0, o);
    GenOp rooted = *o; /* (its one dependency a fresh root made right before it) */
    rooted.fresh = 1;
    int root = !none && !gen__avoids_threaded(g, o->kind, &rooted) &&
               !gen__avoids(g, GEN_OP_WAIT_ASYNC, 1, 0, NULL);
    if (none || root) {
      TSet s;
      s.n = 0;
      for (int i = 0; i < nd; i++)
        gen__ts_add(&s, deps[i]);
      gen__host_wait(g, x, &s);
      if (g->rc)
        return -1;
      if (none)
        return 0;
      deps[0] = fresh_root(g, x);
      return deps[0] < 0 ? -1 : 1;
    }
  }
  GenOp rooted = *o;
  rooted.fresh = 1;
  if (nd == 0 && a && !gen__avoids_threaded(g, o->kind, &rooted) &&
      !gen__avoids(g, GEN_OP_WAIT_ASYNC, 1, 0, NULL)) {
    deps[0] = fresh_root(g, x);
    return deps[0] < 0 ? -1 : 1;
  }
  return nd; /* no other form: built as drawn */
}

void gen__drop_waited(G *g, Ctx *x, TSet *s) {
  if (!gen__avoids_construct(g, GEN_CONSTRUCT_WAITED))
    return;
  int n = 0;
  for (int i = 0; i < s->n; i++)
    if (!gen__covered(g, x->id, s->t[i]) || (s->t[i] == g->cur_iter && g->cur_kind == GEN_OP_FOR))
      s->t[n++] = s->t[i];
  s->n = n;
}

/* Whether block kind k is avoided: itself, or a for whose body could not take the other forms
 * (every op of it follows the carried token, and no host wait may stand in it) of an avoided
 * async shape with one dependency. */
static int block_avoided(const G *g, int k) {
  if (gen__avoids_kind(g, k))
    return 1;
  for (int i = 0; k == GEN_OP_FOR && i < g->cfg.avoid.nshapes; i++) {
    const GenShape *s = &g->cfg.avoid.shapes[i];
    /* (joined in the body, an unthreaded one is not; a kind no for's body holds, a view, an
     * element type or a stream is drawn in its other form there: a whole buffer, another type,
     * no stream) */
    if (s->async && s->deps == 1 && !s->unthreaded && s->view != 1 && s->elem == 0 &&
        s->stream == 0 && (s->kind < 0 || (gen_op_flags(s->kind) & GEN_K_LOOP)))
      return 1;
  }
  return 0;
}

int gen__pick_block_kind(const G *g, int drawn, int n, const int *kinds) {
  if (!block_avoided(g, drawn))
    return drawn;
  for (int i = 0; i < n; i++)
    if (!block_avoided(g, kinds[i]))
      return kinds[i];
  return -1;
}
