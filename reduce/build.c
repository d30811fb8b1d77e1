/*
 * build.c: the reducer's candidates: a case without some of its ops (and what they take with
 * them), or with one region flattened into its parent, every token of a removed op forwarded to
 * what it stood for; and trying a candidate (reduce_int.h).
 */
#include "reduce_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static int in_region(const GenCase *c, int i, int r) {
  for (int x = c->ops[i].ctx, guard = 0; x > 0 && guard <= c->nregions;
       x = c->regions[x].parent, guard++)
    if (x == r)
      return 1;
  return 0;
}

int reduce__add_tok(Fwd *f, int32_t t) {
  for (int k = 0; k < f->n; k++)
    if (f->t[k] == t)
      return 0;
  if (f->n == GEN_MAX_DEPS)
    return -1;
  f->t[f->n++] = t;
  return 0;
}

/* The op's buffer references, for renumbering: pointers into o to the fields gen_op_bufs reads
 * (by the kind's operand flags). */
int reduce__buf_refs(GenOp *o, int32_t **refs) {
  int n = 0, fl = gen_op_flags(o->kind);
  if (fl & (GEN_K_BUF | GEN_K_WRITE | GEN_K_READ))
    refs[n++] = &o->buf;
  if (fl & GEN_K_SRC)
    refs[n++] = &o->src;
  for (int k = 0; (fl & GEN_K_ARGS) && k < o->nargs && k < 3; k++)
    refs[n++] = &o->args[k];
  return n;
}

/* Adds to f token t, or, when t's op is gone, the tokens it forwards to. -1 when f is full. */
static int add_live(Fwd *f, const Fwd *fwd, const uint8_t *alive, int32_t t) {
  if (alive[t])
    return reduce__add_tok(f, t);
  for (int q = 0; q < fwd[t].n; q++)
    if (reduce__add_tok(f, fwd[t].t[q]))
      return -1;
  return 0;
}

/* A dropped stream_create or stream_destroy takes the whole stream with it: its other stream
 * ops go, and its launches stay, on no explicit stream (add_ops). */
static void expand_stream_drops(const GenCase *c, uint8_t *drop) {
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    if (!drop[i] || (o->kind != GEN_OP_STREAM_CREATE && o->kind != GEN_OP_STREAM_DESTROY))
      continue;
    for (int j = 0; j < c->nops; j++)
      if ((gen_op_flags(c->ops[j].kind) & GEN_K_STREAM) && c->ops[j].stream == o->stream)
        drop[j] = 1;
  }
}

/* Marks what dropped execute ops take with them: their bodies, their awaits, and the
 * execute ops that take their values as region inputs; and what dropped stream ops take. */
static void expand_drops(const GenCase *c, uint8_t *drop) {
  int nr = c->nregions;
  for (int changed = 1; changed;) {
    changed = 0;
    for (int r = 1; r < nr; r++) {
      if (!drop[c->regions[r].exec_op])
        continue;
      for (int i = 0; i < c->nops; i++) {
        const GenOp *o = &c->ops[i];
        if (!drop[i] && (in_region(c, i, r) || (o->kind == GEN_OP_AWAIT && o->region == r))) {
          drop[i] = 1;
          changed = 1;
        }
      }
      for (int q = 1; q < nr; q++)
        for (int k = 0; k < c->regions[q].ninputs; k++)
          if (c->regions[q].inputs[k].region == r && !drop[c->regions[q].exec_op]) {
            drop[c->regions[q].exec_op] = 1;
            changed = 1;
          }
    }
  }
  expand_stream_drops(c, drop);
  for (int i = 0; i < c->nops; i++) /* a dropped block op takes its body */
    if (c->ops[i].blk > 0 && c->ops[i].blk < c->nblocks && drop[c->blocks[c->ops[i].blk].op])
      drop[i] = 1;
}

/* A candidate being built: the maps from c's regions, tokens, ops and buffers to out's. */
typedef struct Build {
  const GenCase *c;
  const uint8_t *drop;
  int flatten;
  GenCase *out;
  int *newr;      /* region -> its index in out (-1: gone) */
  Fwd *fwd;       /* token of a removed op -> the live tokens it stands for */
  uint8_t *alive; /* token still defined */
  int *newop;     /* op kept (1) or gone (-1) */
  int *newbuf;    /* buffer -> its index in out (-1: unused) */
  int *newstream; /* explicit stream -> its index in out (-1: not yet seen) */
  int nstreams;   /* streams numbered so far */
  int *newblk;    /* block -> its index in out (-1: gone) */
  int *screate;   /* explicit stream -> the op that creates it (-1: none) */
} Build;

/* The tokens region r captures, at its execute op: kept while the token they capture (or the
 * one live token it forwards to) lives; forwarded to it when r is flattened into its parent;
 * otherwise gone, and ops that depended on them depend on nothing in their place. */
static int forward_captures(Build *b, int r) {
  const GenRegion *g = &b->c->regions[r];
  for (int k = 0; k < g->ncaptures; k++) {
    int outer = g->captures[k].outer, t = g->captures[k].tok;
    b->fwd[t].n = 0;
    b->alive[t] = 0;
    if (r == b->flatten) {
      if (add_live(&b->fwd[t], b->fwd, b->alive, outer))
        return 1;
    } else if (b->newr[r] > 0 && (b->alive[outer] || b->fwd[outer].n == 1)) {
      b->alive[t] = 1;
    }
  }
  return 0;
}

/* The inputs of block op i: alive while the block stays (what they bind is checked when the
 * block is copied, add_blocks). */
static int forward_block_inputs(Build *b, int i) {
  const GenOp *o = &b->c->ops[i];
  if (o->block <= 0 || o->block >= b->c->nblocks)
    return 0;
  const GenBlock *k = &b->c->blocks[o->block];
  for (int q = 0; q < k->ninputs; q++) {
    int t = k->inputs[q].tok;
    b->fwd[t].n = 0;
    b->alive[t] = !b->drop[i];
  }
  return 0;
}

/* Which ops stay; every token of a removed op is forwarded to its own dependencies (an await
 * of the flattened region's value: to the token it yields). 0, or 1 when a forward overflows. */
static int forward_tokens(Build *b) {
  const GenCase *c = b->c;
  int flatten = b->flatten;
  for (int r = 1; r < c->nregions; r++)
    if (b->newr[r] > 0)
      for (int q = 0; q < c->regions[r].ninputs; q++)
        b->alive[c->regions[r].inputs[q].tok] = 1;
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    if (o->kind == GEN_OP_EXECUTE && o->region > 0 && o->region < c->nregions &&
        forward_captures(b, o->region))
      return 1;
    if ((gen_op_flags(o->kind) & GEN_K_BLOCK) && forward_block_inputs(b, i))
      return 1;
    int gone = b->drop[i] || (flatten > 0 && i == c->regions[flatten].exec_op) ||
               (flatten > 0 && o->kind == GEN_OP_AWAIT && o->region == flatten);
    if (!gone) {
      b->newop[i] = 1;
      if (o->tok >= 0)
        b->alive[o->tok] = 1;
      continue;
    }
    b->newop[i] = -1;
    if (o->tok < 0)
      continue;
    Fwd *f = &b->fwd[o->tok];
    f->n = 0;
    if (gen_op_flags(o->kind) &
        GEN_K_BLOCK) { /* a dropped block: its token stands for its inputs */
      const GenBlock *k = &c->blocks[o->block];
      for (int q = 0; q < k->ninputs; q++)
        if (add_live(f, b->fwd, b->alive, k->inputs[q].outer))
          return 1;
      continue;
    }
    if (o->kind == GEN_OP_AWAIT) {
      /* an await of a flattened region's value is its yielded token, now in the parent */
      if (flatten > 0 && o->region == flatten && o->vidx >= 0 && !b->drop[i] &&
          add_live(f, b->fwd, b->alive, c->regions[flatten].yields[o->vidx]))
        return 1;
      continue;
    }
    for (int d = 0; d < o->ndeps; d++)
      if (add_live(f, b->fwd, b->alive, o->deps[d]))
        return 1;
  }
  return 0;
}

/* The buffers the kept ops still use, renumbered into out. 0 or AF_ENOMEM. */
static int keep_bufs(Build *b) {
  const GenCase *c = b->c;
  for (int k = 0; k < c->nbufs; k++)
    b->newbuf[k] = -1;
  for (int i = 0; i < c->nops; i++) {
    if (b->newop[i] < 0)
      continue;
    GenOp o = c->ops[i];
    int32_t *refs[4];
    int n = reduce__buf_refs(&o, refs);
    for (int q = 0; q < n; q++)
      if (*refs[q] >= 0 && *refs[q] < c->nbufs)
        b->newbuf[*refs[q]] = 1;
    for (int q = 0; o.kind == GEN_OP_BRANCH && q < c->blocks[o.block].nbufargs; q++)
      b->newbuf[c->blocks[o.block].bufargs[q]] = 1;
    if (gen_op_flags(o.kind) & GEN_K_COND) /* its condition's host buffer */
      for (int k = 0; k < c->nbufs; k++)
        if (c->bufs[k].kind == GEN_BUF_HOST) {
          b->newbuf[k] = 1;
          break;
        }
  }
  int nb = 0;
  for (int k = 0; k < c->nbufs; k++)
    if (b->newbuf[k] > 0) {
      b->newbuf[k] = nb++;
      if (gen_case_add_buf(b->out, &c->bufs[k]) < 0)
        return AF_ENOMEM;
    }
  return 0;
}

/* The kept regions into out (exec_op fixed up by add_ops). 0, 1 (no such case), AF_ENOMEM. */
static int add_regions(Build *b) {
  const GenCase *c = b->c;
  for (int r = 1; r < c->nregions; r++) {
    if (b->newr[r] <= 0)
      continue;
    GenRegion g = c->regions[r];
    int p = g.parent;
    while (p > 0 && b->newr[p] < 0)
      p = c->regions[p].parent; /* a flattened parent: its own parent */
    g.parent = p > 0 ? b->newr[p] : 0;
    for (int q = 0; q < g.ninputs; q++) {
      if (b->newr[g.inputs[q].region] <= 0)
        return 1;
      g.inputs[q].region = b->newr[g.inputs[q].region];
    }
    int nc = 0; /* the captures that stay, of the token that lives */
    for (int q = 0; q < g.ncaptures; q++) {
      GenRegionCapture cap = g.captures[q];
      if (!b->alive[cap.tok])
        continue;
      if (!b->alive[cap.outer])
        cap.outer = b->fwd[cap.outer].t[0];
      g.captures[nc++] = cap;
    }
    g.ncaptures = nc;
    for (int q = 0; q < g.nyields; q++) {
      int32_t y = g.yields[q];
      if (!b->alive[y]) {
        if (b->fwd[y].n != 1)
          return 1;
        g.yields[q] = b->fwd[y].t[0];
      }
    }
    while (b->out->nregions < b->newr[r])
      if (gen_case_add_region(b->out, &(GenRegion){0}) < 0)
        return AF_ENOMEM;
    if (gen_case_add_region(b->out, &g) < 0)
      return AF_ENOMEM;
  }
  return 0;
}

/* The kept blocks into out, in order, with their inputs' outer tokens and their yields
 * forwarded. 0, 1 (no such case), AF_ENOMEM. */
static int add_blocks(Build *b) {
  const GenCase *c = b->c;
  int nb = 1;
  b->newblk[0] = 0;
  for (int k = 1; k < c->nblocks; k++) {
    b->newblk[k] = -1;
    if (b->drop[c->blocks[k].op])
      continue;
    GenBlock g = c->blocks[k];
    for (int q = 0; q < g.ninputs; q++)
      if (!b->alive[g.inputs[q].outer]) {
        if (b->fwd[g.inputs[q].outer].n != 1)
          return 1;
        g.inputs[q].outer = b->fwd[g.inputs[q].outer].t[0];
      }
    if (g.yield >= 0 && !b->alive[g.yield]) {
      if (b->fwd[g.yield].n != 1)
        return 1;
      g.yield = b->fwd[g.yield].t[0];
    }
    for (int q = 0; q < g.nbufargs; q++)
      g.bufargs[q] = b->newbuf[g.bufargs[q]];
    b->newblk[k] = nb++;
    if (gen_case_add_block(b->out, &g) < 0)
      return AF_ENOMEM;
  }
  return 0;
}

/* The kept ops into out, with forwarded dependencies and renumbered buffers and regions.
 * 0, 1 (no such case), AF_ENOMEM. */
static int add_ops(Build *b) {
  const GenCase *c = b->c;
  for (int i = 0; i < c->nops; i++) {
    if (b->newop[i] < 0)
      continue;
    GenOp o = c->ops[i];
    int x = o.ctx;
    while (x > 0 && b->newr[x] < 0)
      x = c->regions[x].parent;
    o.ctx = x > 0 ? b->newr[x] : 0;
    Fwd deps = {0};
    for (int d = 0; d < o.ndeps; d++)
      if (add_live(&deps, b->fwd, b->alive, o.deps[d]))
        return 1;
    o.ndeps = deps.n;
    memcpy(o.deps, deps.t, sizeof deps.t);
    /* fields an op kind does not use are -1, as the generator leaves them */
    if (!(gen_op_flags(o.kind) & (GEN_K_BUF | GEN_K_WRITE | GEN_K_READ)))
      o.buf = -1;
    if (!(gen_op_flags(o.kind) & GEN_K_SRC))
      o.src = -1;
    if (gen_op_on_stream(&o)) { /* its stream is gone: on none */
      int cr = o.stream < c->nstreams ? b->screate[o.stream] : -1;
      if (cr < 0 || b->newop[cr] < 0)
        o.stream = -1;
    }
    if (o.stream >= 0 && o.stream < c->nstreams) { /* numbered in order of appearance */
      if (b->newstream[o.stream] < 0)
        b->newstream[o.stream] = b->nstreams++;
      o.stream = b->newstream[o.stream];
    }
    int32_t *refs[4];
    int n = reduce__buf_refs(&o, refs);
    for (int q = 0; q < n; q++)
      *refs[q] = b->newbuf[*refs[q]];
    if (o.kind == GEN_OP_EXECUTE || o.kind == GEN_OP_AWAIT) {
      if (b->newr[o.region] <= 0)
        return 1;
      o.region = b->newr[o.region];
    }
    if (o.blk > 0)
      o.blk = b->newblk[o.blk];
    if (gen_op_flags(o.kind) & GEN_K_BLOCK)
      o.block = b->newblk[o.block];
    if (o.blk < 0 || ((gen_op_flags(o.kind) & GEN_K_BLOCK) && o.block <= 0))
      return 1;
    int idx = gen_case_add_op(b->out, &o);
    if (idx < 0)
      return AF_ENOMEM;
    if (o.kind == GEN_OP_EXECUTE)
      b->out->regions[o.region].exec_op = idx;
    if (gen_op_flags(o.kind) & GEN_K_BLOCK)
      b->out->blocks[o.block].op = idx;
  }
  return 0;
}

/* c without the ops marked in drop[] (expanded here to what they take with them), with region
 * `flatten` (0: none) inlined into its parent. Returns 0 and fills *out (initialized), 1 when
 * no such case can be made, or AF_ENOMEM (then *out holds nothing to free). */
int reduce__build(const GenCase *c, uint8_t *drop, int flatten, GenCase *out) {
  gen_case_init(out);
  int nr = c->nregions, rc = 1;
  Build b = {c, drop, flatten, out, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL};
  b.newr = calloc((size_t)(nr > 0 ? nr : 1), sizeof *b.newr);
  b.fwd = calloc((size_t)(c->ntoks > 0 ? c->ntoks : 1), sizeof *b.fwd);
  b.alive = calloc((size_t)(c->ntoks > 0 ? c->ntoks : 1), 1);
  b.newop = calloc((size_t)(c->nops > 0 ? c->nops : 1), sizeof *b.newop);
  b.newbuf = calloc((size_t)(c->nbufs > 0 ? c->nbufs : 1), sizeof *b.newbuf);
  b.newstream = malloc(sizeof *b.newstream * (size_t)(c->nstreams + 1));
  b.newblk = malloc(sizeof *b.newblk * (size_t)(c->nblocks + 1));
  b.screate = malloc(sizeof *b.screate * (size_t)(c->nstreams + 1));
  if (!b.newr || !b.fwd || !b.alive || !b.newop || !b.newbuf || !b.newstream || !b.newblk ||
      !b.screate) {
    rc = AF_ENOMEM;
    goto done;
  }
  for (int s = 0; s < c->nstreams; s++)
    b.newstream[s] = b.screate[s] = -1;
  for (int i = 0; i < c->nops; i++)
    if (c->ops[i].kind == GEN_OP_STREAM_CREATE && c->ops[i].stream >= 0 &&
        c->ops[i].stream < c->nstreams)
      b.screate[c->ops[i].stream] = i;
  expand_drops(c, drop);
  if (flatten > 0 && (drop[c->regions[flatten].exec_op] || c->regions[flatten].ninputs > 0))
    goto done;
  if (flatten > 0) /* nothing may consume the flattened region's values as region inputs */
    for (int q = 1; q < nr; q++)
      for (int k = 0; k < c->regions[q].ninputs; k++)
        if (c->regions[q].inputs[k].region == flatten && !drop[c->regions[q].exec_op])
          goto done;
  int k = 0;
  b.newr[0] = 0;
  for (int r = 1; r < nr; r++)
    b.newr[r] = (drop[c->regions[r].exec_op] || r == flatten) ? -1 : ++k;
  if ((rc = forward_tokens(&b)) != 0 || (rc = keep_bufs(&b)) != 0 || (rc = add_regions(&b)) != 0 ||
      (rc = add_blocks(&b)) != 0 || (rc = add_ops(&b)) != 0)
    goto done;
  out->version = c->version;
  out->seed = c->seed;
  out->has_config = c->has_config;
  out->cfg = c->cfg;
  out->spin = c->spin;
  AfErr e = {0};
  rc = gen_case_finish(out, &e) == 0 ? 0 : 1;
done:
  if (rc != 0)
    gen_case_free(out); /* the caller owns nothing then */
  free(b.newr);
  free(b.fwd);
  free(b.alive);
  free(b.newop);
  free(b.newbuf);
  free(b.newstream);
  free(b.newblk);
  free(b.screate);
  return rc;
}

/* ---- trying a candidate ---- */

double reduce__mono(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int reduce__copy_cur(R *r, GenCase *cand) {
  if (gen_case_copy(cand, &r->cur) == 0)
    return 0;
  r->err = AF_ENOMEM;
  return 1;
}

int reduce__try_cand(R *r, GenCase *cand) {
  AfErr e = {0};
  if (r->o.deadline > 0 && reduce__mono() > r->o.deadline) {
    r->err = STOPPED;
    gen_case_free(cand);
    return 0;
  }
  if (gen_validate(cand, &e) != 0) {
    r->st->invalid++;
    gen_case_free(cand);
    return 0;
  }
  r->st->tests++;
  int t = r->test(cand, r->ctx);
  if (t < 0) {
    r->err = t;
    gen_case_free(cand);
    return 0;
  }
  if (t == 0) {
    gen_case_free(cand);
    return 0;
  }
  r->st->accepted++;
  gen_case_free(&r->cur);
  r->cur = *cand;
  return 1;
}

/* try_cand on a candidate edited in place: its derived fields recomputed first (a candidate
 * that cannot be finished is dropped). */
int reduce__try_finished(R *r, GenCase *cand) {
  AfErr e = {0};
  if (gen_case_finish(cand, &e) != 0) {
    gen_case_free(cand);
    return 0;
  }
  return reduce__try_cand(r, cand);
}
