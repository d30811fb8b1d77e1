/*
 * blocks.c: call, if, for and branch blocks in generated cases (version 2).
 *
 * A block runs inline in its context, so the generator's ownership of buffers does not change:
 * the body's ops touch the context's buffers like any op of it. What changes is which tokens
 * the body may name. A call's body and a for's body see the context only through one input: a
 * token joined, at the block's op, from every token the context's buffers still wait for, so
 * it stands for any of them (and in a for, every op then follows the carried token). An if's
 * and a branch's body use the context's tokens directly, and a branch passes one or two of
 * them as block arguments (and buffers, which its body then names by the arguments). The block
 * yields a join of its body's last tokens, and what the
 * buffers waited for inside the body is, after it, the block op's token. A for's body never
 * writes a buffer it read before (pick_buf and note_access keep to that), so every iteration
 * does what the first did.
 */
#include "genpriv.h"

#include <string.h>

static int join_all(G *g, Ctx *x, TSet *s);

/* Adds t to s, which stands for everything it holds: a full set is first reduced to the tokens
 * no other one implies, and joined into one when that is not enough. */
static void add_all(G *g, Ctx *x, TSet *s, int t) {
  if (s->n == (int)(sizeof s->t / sizeof s->t[0])) {
    gen__ts_minimize(g, s);
    if (s->n == (int)(sizeof s->t / sizeof s->t[0])) {
      int j = join_all(g, x, s);
      s->n = 0;
      if (j >= 0)
        s->t[s->n++] = j;
    }
  }
  gen__ts_add(s, t);
}

/* What x's buffers wait for: their writers' and readers' tokens not yet completed. */
static void frontier(G *g, Ctx *x, TSet *s) {
  s->n = 0;
  for (int b = 0; b < g->c->nbufs && g->rc == 0; b++) {
    const BState *st = &g->bs[b];
    if (st->owner != x->id)
      continue;
    if (!gen__covered(g, x->id, st->writer))
      add_all(g, x, s, st->writer);
    for (int r = 0; r < st->nreaders; r++)
      if (!gen__covered(g, x->id, st->readers[r]))
        add_all(g, x, s, st->readers[r]);
  }
  gen__ts_minimize(g, s);
}

/* One token that follows every token of s (s itself when it has one; a gpu.wait async of
 * several, joined max_deps at a time; a fresh one when s is empty). */
static int join_all(G *g, Ctx *x, TSet *s) {
  if (s->n == 1)
    return s->t[0];
  while (s->n > g->cfg.max_deps && g->rc == 0) {
    int j = gen__join(g, x, s->t, g->cfg.max_deps);
    if (j < 0)
      return -1;
    memmove(s->t, s->t + g->cfg.max_deps, sizeof(int) * (size_t)(s->n - g->cfg.max_deps));
    s->n -= g->cfg.max_deps;
    s->t[s->n++] = j;
  }
  return gen__join(g, x, s->t, s->n);
}

/* After block b: what x's buffers waited for inside it is the block's token. */
static void remap(G *g, Ctx *x, int b, int tok) {
  for (int k = 0; k < g->c->nbufs; k++) {
    BState *st = &g->bs[k];
    if (st->owner != x->id)
      continue;
    if (st->writer >= 0 && g->tok_blk[st->writer] == b)
      st->writer = tok;
    int n = 0;
    for (int r = 0; r < st->nreaders; r++) {
      int t = g->tok_blk[st->readers[r]] == b ? tok : st->readers[r];
      int dup = 0;
      for (int j = 0; j < n && !dup; j++)
        dup = st->readers[j] == t;
      if (!dup)
        st->readers[n++] = t;
    }
    st->nreaders = n;
  }
}

static int draw_kind(G *g, Ctx *x) {
  static const int kinds[] = {GEN_OP_CALL, GEN_OP_IF, GEN_OP_FOR, GEN_OP_BRANCH};
  int n = x->id == 0 ? 4 : 3; /* a branch only in main: an async.execute body has one block */
  return kinds[af_rng_below(&g->rng, (uint32_t)n)];
}

/* The block's inputs (bound inside to new tokens of the block) and g's record of them. */
static int bind_inputs(G *g, Ctx *x, int kind, GenBlock *k) {
  TSet s;
  frontier(g, x, &s);
  k->ninputs = 0;
  g->cur_iter = -1;
  int outer[GEN_MAX_REGION_IO], n = 0;
  if (kind == GEN_OP_CALL || kind == GEN_OP_FOR) {
    if (s.n > 0 || kind == GEN_OP_FOR) {
      int j = join_all(g, x, &s);
      if (j < 0)
        return -1;
      outer[n++] = j;
    }
  } else if (kind == GEN_OP_BRANCH) {
    for (int i = 0; i < s.n && n < 2; i++)
      if (af_rng_chance(&g->rng, 60))
        outer[n++] = s.t[i];
    /* buffers of the context, passed as block arguments too */
    for (int b = 0; b < g->c->nbufs && k->nbufargs < 2; b++)
      if (g->bs[b].owner == x->id && af_rng_chance(&g->rng, 30))
        k->bufargs[k->nbufargs++] = b;
  }
  for (int q = 0; q < n; q++) {
    k->inputs[q].outer = outer[q];
    k->inputs[q].tok = -1; /* bound once the block exists (its tokens carry its number) */
  }
  k->ninputs = n;
  return 0;
}

void gen__op_block(G *g, Ctx *x, int budget) {
  if (x->body)
    return;
  int kind = draw_kind(g, x);
  GenBlock k;
  memset(&k, 0, sizeof k);
  k.yield = -1;
  k.taken = af_rng_chance(&g->rng, 50);
  k.trips = kind == GEN_OP_FOR ? 1 + (int)af_rng_below(&g->rng, 4) : 1;
  if (bind_inputs(g, x, kind, &k) || g->rc)
    return;
  k.op = g->c->nops;
  int b = gen_case_add_block(g->c, &k);
  if (b < 0) {
    gen__oom(g);
    return;
  }
  GenOp o = gen__blank(kind, x->id);
  o.block = b;
  if (gen__emit(g, &o) < 0)
    return;
  uint8_t *read = kind == GEN_OP_FOR ? af_calloc((size_t)g->c->nbufs + 1, 1) : NULL;
  if (kind == GEN_OP_FOR && read == NULL) {
    gen__oom(g);
    return;
  }
  Ctx body;
  memset(&body, 0, sizeof body);
  body.id = x->id;
  body.depth = x->depth;
  body.body = 1;
  g->cur_blk = b;
  g->cur_kind = kind;
  g->blk_read = read;
  for (int q = 0; q < g->c->blocks[b].ninputs && g->rc == 0; q++) {
    int outer = g->c->blocks[b].inputs[q].outer;
    int t = gen__new_token(g, &body, &outer, 1);
    g->c->blocks[b].inputs[q].tok = t;
  }
  g->cur_iter = g->c->blocks[b].ninputs > 0 ? g->c->blocks[b].inputs[0].tok : -1;
  g->gen_body(g, &body, budget);
  /* the yield: a join of the body's last tokens (a for: of every op, so the next iteration
   * follows all of this one) */
  TSet s;
  s.n = 0;
  int ntok = g->ntok; /* (joins add_all makes are block tokens too, and cover what they join) */
  for (int t = 0; t < ntok && g->rc == 0; t++)
    if (g->tok_blk[t] == b && g->tok_ctx[t] == x->id)
      add_all(g, &body, &s, t);
  gen__ts_minimize(g, &s);
  int y = s.n ? join_all(g, &body, &s) : -1;
  g->cur_blk = 0;
  g->cur_kind = 0;
  g->cur_iter = -1;
  g->blk_read = NULL;
  af_free(read);
  if (y < 0 || g->rc)
    return;
  int r = gen__new_token(g, x, &y, 1);
  if (r < 0)
    return;
  g->c->blocks[b].yield = y;
  g->c->ops[k.op].tok = r;
  remap(g, x, b, r);
}
