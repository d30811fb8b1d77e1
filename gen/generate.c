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
#include "gen_int.h"

#include "../kernels/kernels.h"

#include <string.h>

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

enum { BLOCK_SCALE = 32 }; /* the default op count: its cases stay as they were */

static void gen_ctx(G *g, Ctx *x, int budget) {
  const GenConfig *c = &g->cfg;
  int start = g->c->nops - g->refit; /* (the avoid set's other forms do not count) */
  int body = x->body, w[GEN_OP__COUNT];
  for (int k = 0; k < GEN_OP__COUNT; k++)
    w[k] = mix_weight(g, x, k);
  int guard = 0;
  while (g->rc == 0 && g->c->nops - g->refit - start < budget &&
         g->c->nops - g->refit < c->ops + 8 && guard++ < 20 * budget + 100) {
    if (body) {
      /* a block's body: only the op kinds below */
    } else if (c->extra_wait_pct > 0 && af_rng_chance(&g->rng, c->extra_wait_pct)) {
      gen__op_extra_wait(g, x); /* drawn only when on: seeds made without the knob stay the same */
      continue;
    } else if (c->block_pct > 0 &&
               !(x->id > 0 && gen__avoids_construct(g, GEN_CONSTRUCT_BLOCK_REGION)) &&
               af_rng_chance(&g->rng, c->block_pct)) {
      /* a body drawn as in a case of at most BLOCK_SCALE ops: a larger case has more blocks,
       * not longer ones (a for's body runs up to 4 times: bodies that grew with the case made
       * a run's work per op grow with it: 1.3 times from 32 ops to 256) */
      int remaining = budget - (g->c->nops - g->refit - start);
      if (remaining > BLOCK_SCALE)
        remaining = BLOCK_SCALE;
      gen__op_block(g, x, 1 + (int)af_rng_below(&g->rng, (uint32_t)(remaining / 3 + 2)));
      continue;
    }
    if (!body && af_rng_chance(&g->rng, c->region_pct) && x->depth < c->max_nesting) {
      int remaining = budget - (g->c->nops - g->refit - start);
      int sub = 2 + (int)af_rng_below(&g->rng, (uint32_t)(remaining / 2 + 2));
      gen__op_execute(g, x, sub);
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
    if (gen__classes[kind]->draw) /* (every kind drawn by weight has one: the mix, await) */
      gen__classes[kind]->draw(g, x);
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

/* The host buffers the program starts with, written before it runs (the first is i32). */
static void add_host_bufs(G *g) {
  const GenConfig *cfg = &g->cfg;
  for (int i = 0; i < cfg->host_bufs && g->rc == 0; i++) {
    int init = (int)af_rng_below(&g->rng, 1000), e = GEN_ELEM_I32;
    if (i > 0 && cfg->typed_pct > 0 && af_rng_chance(&g->rng, 2 * cfg->typed_pct))
      e = gen__draw_elem(g);
    gen__new_host_buf(g, e, init);
  }
}

/* Closes main: awaits everything, frees device buffers, observes every host-visible buffer. */
static void close_main(G *g, Ctx *main) {
  const GenCase *c = g->c;
  while (main->nchildren && g->rc == 0) {
    gen__await_region(g, main, main->children[0], 1);
    gen__drop_child(main, main->children[0]);
  }
  gen__close_streams(g, main);
  gen__claim_leftovers(g, main);
  /* a device buffer of a type other than i32 whose last write nothing read: its data to a host
   * buffer of that type, so that what the ops of the type wrote reaches an observation (typed
   * buffers are few, and a copy back needs one of the same type); one per type, so that a large
   * case does not end in a long tail of copies */
  unsigned drained = 0;
  for (int b = 0; b < c->nbufs && g->rc == 0 && g->cfg.typed_pct > 0; b++)
    if (g->bs[b].owner == 0 && c->bufs[b].kind == GEN_BUF_DEVICE &&
        c->bufs[b].elem != GEN_ELEM_I32 && !(drained >> c->bufs[b].elem & 1) && g->bs[b].written &&
        g->bs[b].nreaders == 0 && !g->bs[b].shared) {
      drained |= 1u << c->bufs[b].elem;
      gen__drain(g, main, b);
    }
  for (int b = 0; b < c->nbufs && g->rc == 0; b++)
    if (g->bs[b].owner == 0 && g->bs[b].shared && g->bs[b].written)
      gen__observe(g, main, b);
  for (int b = 0; b < c->nbufs && g->rc == 0; b++)
    if (g->bs[b].owner == 0 && c->bufs[b].kind == GEN_BUF_DEVICE)
      gen__op_dealloc(g, main, b);
  for (int b = 0; b < c->nbufs && g->rc == 0; b++)
    if (c->bufs[b].kind == GEN_BUF_HOST)
      gen__observe(g, main, b);
  gen__end_streams(g, main, 0, -1);
}

static void g_free(G *g) {
  for (int i = 0; i < g->nvals; i++)
    af_free(g->vals[i].bufs);
  af_free(g->vals);
  af_free(g->bs);
  af_free(g->alive);
  af_free(g->tok_ctx);
  af_free(g->tok_blk);
  af_free(g->tok_root);
  af_free(g->anc);
  af_free(g->completed);
}

int gen_generate(GenCase *c, uint64_t seed, const GenConfig *cfg, AfErr *err) {
  AfRng r;
  af_rng_seed(&r, seed);
  return gen_generate_rng(c, seed, &r, cfg, err);
}

int gen_generate_bytes(GenCase *c, const uint8_t *data, size_t n, const GenConfig *base, int swarm,
                       AfErr *err) {
  uint64_t seed = af_hash_bytes(data, n);
  AfRng r; /* (past the bytes: a stream that depends on the first ones only, so the choices a
              mutation leaves alone stay as they were) */
  af_rng_bytes(&r, data, n, af_hash_bytes(data, n < 8 ? n : 8));
  GenConfig cfg = *base, wide;
  if (swarm > 1)
    gen_config_widen(base, &wide);
  if (swarm)
    gen_config_swarm_rng(swarm > 1 ? &wide : base, &r, &cfg);
  return gen_generate_rng(c, seed, &r, &cfg, err);
}

int gen_generate_rng(GenCase *c, uint64_t seed, AfRng *rng, const GenConfig *cfg, AfErr *err) {
  gen_case_init(c);
  int rc = check_config(cfg, err);
  if (rc)
    return rc;
  /* room for about the ops the knob asks (a case has some 1.3 times as many): the array no longer
   * doubles its way there from 8, a copy each time */
  if (af_grow((void **)&c->ops, &c->capops, cfg->ops + cfg->ops / 2 + 8, sizeof(GenOp)))
    return af_err_set(err, AF_ENOMEM, "out of memory generating a case");
  G g;
  memset(&g, 0, sizeof g);
  g.c = c;
  g.cfg = *cfg;
  gen__avoid_setup(&g);
  g.err = err;
  g.rng = *rng;
  af_rng_seed(&g.reg, seed ^ 0x5245474953544552ull);
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
  g.tok_root = af_malloc(sizeof(int) * 64);
  g.gen_body = gen_ctx;
  g.cur_iter = -1;
  if (!g.anc || !g.completed || !g.tok_ctx || !g.tok_blk || !g.tok_root || c->nregions != 1 ||
      c->nblocks != 1)
    gen__oom(&g);
  else
    add_host_bufs(&g);
  if (g.rc == 0) {
    Ctx main;
    memset(&main, 0, sizeof main);
    int first = 1 + (int)af_rng_below(&g.rng, 2);
    for (int i = 0; i < first; i++)
      gen__op_alloc(&g, &main);
    gen_ctx(&g, &main, cfg->ops);
    close_main(&g, &main);
    af_free(main.children);
    if (g.rc == 0)
      g.rc = gen_case_finish(c, err);
  }
  rc = g.rc;
  g_free(&g);
  if (rc) {
    gen_case_free(c);
    gen_case_init(c);
  }
  return rc;
}
