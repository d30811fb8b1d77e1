/*
 * renumber.c: a case numbered as its JSON reads back. The JSON names tokens, regions, blocks
 * and streams by number, and the reader numbers them again in the order it meets them (ops in
 * the order the writer nests them, each region's and block's bound tokens before its body, a
 * block's token after it). A case a mutation made may number them otherwise: renumbered, it is
 * the case its JSON gives, without writing and reading it.
 */
#include "gen.h"

#include <string.h>

typedef struct Renum {
  const GenCase *c;
  int *order, n;               /* new op -> old op */
  int *pos;                    /* old op -> new op */
  int *tok, *reg, *blk, *strm; /* old -> new, -1: not met */
  int ntok, nreg, nblk, nstrm;
} Renum;

static void def_tok(Renum *k, int t) {
  if (t >= 0 && t < k->c->ntoks && k->tok[t] < 0)
    k->tok[t] = k->ntok++;
}

/* The writer's walk (case.c put_body): ops [from, to] of context ctx and block blk, each
 * region's and block's body right after its op. */
static void walk(Renum *k, int from, int to, int ctx, int blk) {
  const GenCase *c = k->c;
  for (int i = from; i <= to && i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    if (o->ctx != ctx || o->blk != blk)
      continue;
    k->pos[i] = k->n;
    k->order[k->n++] = i;
    unsigned f = gen_op_flags(o->kind);
    if ((f & GEN_K_REGION) && o->region > 0 && o->region < c->nregions) {
      const GenRegion *g = &c->regions[o->region];
      k->reg[o->region] = k->nreg++;
      for (int q = 0; q < g->ninputs && q < GEN_MAX_REGION_IO; q++)
        def_tok(k, g->inputs[q].tok);
      for (int q = 0; q < g->ncaptures && q < GEN_MAX_REGION_IO; q++)
        def_tok(k, g->captures[q].tok);
      walk(k, g->first, g->last, o->region, 0);
    } else if ((f & GEN_K_BLOCK) && o->block > 0 && o->block < c->nblocks) {
      const GenBlock *b = &c->blocks[o->block];
      k->blk[o->block] = k->nblk++;
      for (int q = 0; q < b->ninputs && q < GEN_MAX_REGION_IO; q++)
        def_tok(k, b->inputs[q].tok);
      walk(k, b->first, b->last, o->ctx, o->block);
    }
    if (o->kind == GEN_OP_STREAM_CREATE && o->stream >= 0 && o->stream < c->nstreams &&
        k->strm[o->stream] < 0)
      k->strm[o->stream] = k->nstrm++;
    def_tok(k, o->tok);
    i = gen_op_body_end(c, i);
  }
}

static int32_t map(const int *m, int n, int32_t v) {
  return v >= 0 && v < n ? m[v] : v;
}

static void map_tok(const Renum *k, int32_t *t) {
  *t = map(k->tok, k->c->ntoks, *t);
}

/* The regions and blocks the walk met, renumbered, into out (which has room for them). */
static void put_regions(const Renum *k, GenCase *out) {
  const GenCase *in = k->c;
  for (int r = 1; r < in->nregions; r++) {
    if (k->reg[r] < 1)
      continue; /* (not written: not read back) */
    GenRegion g = in->regions[r];
    g.exec_op = map(k->pos, in->nops, g.exec_op);
    g.parent = map(k->reg, in->nregions, g.parent);
    for (int q = 0; q < g.ninputs && q < GEN_MAX_REGION_IO; q++) {
      g.inputs[q].region = map(k->reg, in->nregions, g.inputs[q].region);
      map_tok(k, &g.inputs[q].tok);
    }
    for (int q = 0; q < g.ncaptures && q < GEN_MAX_REGION_IO; q++) {
      map_tok(k, &g.captures[q].outer);
      map_tok(k, &g.captures[q].tok);
    }
    for (int q = 0; q < g.nyields && q < GEN_MAX_REGION_IO; q++)
      map_tok(k, &g.yields[q]);
    out->regions[k->reg[r]] = g;
  }
  for (int b = 1; b < in->nblocks; b++) {
    if (k->blk[b] < 1)
      continue;
    GenBlock g = in->blocks[b];
    g.op = map(k->pos, in->nops, g.op);
    for (int q = 0; q < g.ninputs && q < GEN_MAX_REGION_IO; q++) {
      map_tok(k, &g.inputs[q].outer);
      map_tok(k, &g.inputs[q].tok);
    }
    map_tok(k, &g.yield);
    out->blocks[k->blk[b]] = g;
  }
}

int gen_case_renumber(const GenCase *in, GenCase *out, AfErr *err) {
  gen_case_init(out);
  size_t nops = (size_t)in->nops + 1, ntoks = (size_t)in->ntoks + 1;
  size_t nreg = (size_t)in->nregions + 1, nblk = (size_t)in->nblocks + 1;
  size_t nstrm = (size_t)in->nstreams + 1;
  Renum k = {in,
             af_malloc(sizeof(int) * nops),
             0,
             af_malloc(sizeof(int) * nops),
             af_malloc(sizeof(int) * ntoks),
             af_malloc(sizeof(int) * nreg),
             af_malloc(sizeof(int) * nblk),
             af_malloc(sizeof(int) * nstrm),
             0,
             1,
             1,
             0};
  int rc = 0;
  if (!k.order || !k.pos || !k.tok || !k.reg || !k.blk || !k.strm || out->nregions != 1 ||
      out->nblocks != 1) {
    rc = af_err_set(err, AF_ENOMEM, "out of memory");
    goto done;
  }
  memset(k.pos, -1, sizeof(int) * nops);
  memset(k.tok, -1, sizeof(int) * ntoks);
  memset(k.reg, -1, sizeof(int) * nreg);
  memset(k.blk, -1, sizeof(int) * nblk);
  memset(k.strm, -1, sizeof(int) * nstrm);
  k.reg[0] = k.blk[0] = 0; /* main, no block */
  walk(&k, 0, in->nops - 1, 0, 0);
  out->version = in->version;
  out->seed = in->seed;
  out->has_config = in->has_config;
  out->cfg = in->cfg;
  out->spin = in->spin;
  for (int b = 0; b < in->nbufs && rc == 0; b++)
    if (gen_case_add_buf(out, &in->bufs[b]) < 0)
      rc = af_err_set(err, AF_ENOMEM, "out of memory");
  GenRegion r0 = out->regions[0];
  GenBlock b0 = out->blocks[0];
  if (rc == 0 && (af_grow((void **)&out->regions, &out->capregions, k.nreg, sizeof(GenRegion)) ||
                  af_grow((void **)&out->blocks, &out->capblocks, k.nblk, sizeof(GenBlock)))) {
    rc = af_err_set(err, AF_ENOMEM, "out of memory");
    goto done;
  }
  out->regions[0] = r0;
  out->blocks[0] = b0;
  for (int p = 0; p < k.n && rc == 0; p++) {
    GenOp o = in->ops[k.order[p]];
    unsigned f = gen_op_flags(o.kind);
    map_tok(&k, &o.tok);
    for (int d = 0; d < o.ndeps && d < GEN_MAX_DEPS; d++)
      map_tok(&k, &o.deps[d]);
    o.ctx = map(k.reg, in->nregions, o.ctx);
    o.blk = map(k.blk, in->nblocks, o.blk);
    if ((f & GEN_K_REGION) || o.kind == GEN_OP_AWAIT)
      o.region = map(k.reg, in->nregions, o.region);
    if (f & GEN_K_BLOCK)
      o.block = map(k.blk, in->nblocks, o.block);
    o.stream = map(k.strm, in->nstreams, o.stream);
    if (gen_case_add_op(out, &o) < 0)
      rc = af_err_set(err, AF_ENOMEM, "out of memory");
  }
  if (rc == 0)
    put_regions(&k, out);
  out->nregions = k.nreg;
  out->nblocks = k.nblk;
  if (rc == 0)
    rc = gen_case_finish(out, err);
done:
  af_free(k.order), af_free(k.pos), af_free(k.tok);
  af_free(k.reg), af_free(k.blk), af_free(k.strm);
  if (rc)
    gen_case_free(out);
  return rc;
}
