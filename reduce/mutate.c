/*
 * mutate.c: structure-aware mutations of a case, for guided generation (asyncfuzz fuzz's custom
 * mutator and crossover). Each move edits a copy of the case (an edge rewired, an op dropped as
 * the reducer drops it, a region inlined, a wait added, a view switched on or off, a buffer's
 * element type switched, an allocation's form flipped, a launch moved to a stream, ops wrapped
 * into a new async.execute region or a new call, if, for or branch...), then the
 * copy must pass gen_validate: a move that breaks a rule is thrown away and another is drawn, so
 * every case that comes out is valid. A splice appends a second case to the first, renamed.
 */
#include "reduce_int.h"

#include <stdlib.h>
#include <string.h>

/* The moves: X(ID, name, constructs): the constructs of the case language (GEN_CONSTRUCT_MAP) it
 * may add, which it does not make where they are avoided (op shapes avoided are checked on the
 * result). */
#define C_(id) (1u << GEN_CONSTRUCT_##id)
#define MUTATE_MAP(X)                                                                              \
  X(ADD_DEP, "add-dep", C_(EXTRA_DEP) | C_(WAITED))                                                \
  X(DROP_DEP, "drop-dep", 0)                                                                       \
  X(REWIRE, "rewire-dep", C_(EXTRA_DEP) | C_(WAITED))                                              \
  X(DROP_OP, "drop-op", 0)                                                                         \
  X(INLINE, "inline-region", 0)                                                                    \
  X(HOST_WAIT, "add-host-wait", C_(WAITED))                                                        \
  X(JOIN, "add-wait-async", C_(WAITED))                                                            \
  X(VIEW, "view", 0)                                                                               \
  X(UNVIEW, "unview", 0)                                                                           \
  X(ELEM, "elem-type", 0)                                                                          \
  X(FORM, "alloc-form", 0)                                                                         \
  X(SHARED, "host-shared", 0)                                                                      \
  X(STREAM, "launch-stream", C_(STREAM))                                                           \
  X(SIZE, "buffer-size", 0)                                                                        \
  X(WRAP_REGION, "wrap-region", 0 /* (captures and yields: only where not avoided) */)             \
  X(WRAP_BLOCK, "wrap-block", 0)

enum {
#define MUT__ENUM(id, name, constructs) MUT_##id,
  MUTATE_MAP(MUT__ENUM)
#undef MUT__ENUM
      MUT__COUNT
};

static const char *const mut_names[MUT__COUNT] = {
#define MUT__NAME(id, name, constructs) name,
    MUTATE_MAP(MUT__NAME)
#undef MUT__NAME
};

static const unsigned mut_constructs[MUT__COUNT] = {
#define MUT__CONS(id, name, constructs) constructs,
    MUTATE_MAP(MUT__CONS)
#undef MUT__CONS
};

const char *reduce_mutation_name(int m) {
  return m >= 0 && m < MUT__COUNT ? mut_names[m] : "?";
}

int reduce_mutation_count(void) {
  return MUT__COUNT;
}

/* The op that defines token t (-1: a region's input or capture, a block's argument). */
static int maker(const GenCase *c, int t) {
  for (int i = 0; i < c->nops; i++)
    if (c->ops[i].tok == t)
      return i;
  return -1;
}

/* A random op of c for which ok(op) holds (-1: none). */
static int pick_op(const GenCase *c, AfRng *r, int (*ok)(const GenOp *)) {
  int n = 0;
  for (int i = 0; i < c->nops; i++)
    n += ok(&c->ops[i]);
  if (n == 0)
    return -1;
  int k = (int)af_rng_below(r, (uint32_t)n);
  for (int i = 0; i < c->nops; i++)
    if (ok(&c->ops[i]) && k-- == 0)
      return i;
  return -1;
}

static int takes_deps(const GenOp *o) {
  return gen_op_takes_deps(o);
}
static int has_deps(const GenOp *o) {
  return gen_op_takes_deps(o) && o->ndeps > 0;
}
static int has_views(const GenOp *o) {
  return (gen_op_flags(o->kind) & GEN_K_VIEWS) != 0;
}
static int is_either(const GenOp *o) {
  return (gen_op_flags(o->kind) & GEN_K_EITHER) != 0;
}
static int is_alloc(const GenOp *o) {
  return o->kind == GEN_OP_ALLOC;
}
static int is_launch(const GenOp *o) {
  return gen_kind_launches(o->kind);
}
static int main_op(const GenOp *o) {
  return o->ctx == 0 && o->blk == 0;
}
static int is_execute(const GenOp *o) {
  return o->kind == GEN_OP_EXECUTE;
}

/* A random token defined by an op before op i in its context and block (-1: none). */
static int earlier_token(const GenCase *c, int i, AfRng *r) {
  int n = 0, pick = -1;
  const GenOp *o = &c->ops[i];
  for (int j = 0; j < i; j++) {
    const GenOp *p = &c->ops[j];
    if (p->tok < 0 || p->ctx != o->ctx || p->blk != o->blk)
      continue;
    if (af_rng_below(r, (uint32_t)++n) == 0) /* (reservoir sampling) */
      pick = p->tok;
  }
  return pick;
}

/* Inserts op o before op at (of the main context), moving the later ops' indices on. */
static int insert_op(GenCase *c, int at, const GenOp *o) {
  if (gen_case_add_op(c, o) < 0)
    return -1;
  GenOp t = c->ops[c->nops - 1];
  memmove(&c->ops[at + 1], &c->ops[at], sizeof *c->ops * (size_t)(c->nops - 1 - at));
  c->ops[at] = t;
  for (int r = 1; r < c->nregions; r++)
    c->regions[r].exec_op += c->regions[r].exec_op >= at;
  for (int b = 1; b < c->nblocks; b++)
    c->blocks[b].op += c->blocks[b].op >= at;
  return 0;
}

/* A view of a buffer of n elements: offset, length, stride within it. */
static void draw_view(AfRng *r, int32_t n, int32_t *v) {
  int32_t stride = 1 + (int32_t)af_rng_below(r, n > 4 ? 3 : 1);
  int32_t len = 1 + (int32_t)af_rng_below(r, (uint32_t)(n / stride > 0 ? n / stride : 1));
  int32_t span = (len - 1) * stride + 1;
  v[0] = span < n ? (int32_t)af_rng_below(r, (uint32_t)(n - span + 1)) : 0;
  v[1] = len;
  v[2] = stride;
}

/* The moves on dependencies: add, drop or rewire one. 0 done, 1 nothing to do it on. */
static int move_dep(GenCase *c, int m, AfRng *r) {
  int i = pick_op(c, r, m == MUT_ADD_DEP ? takes_deps : has_deps);
  if (i < 0)
    return 1;
  GenOp *o = &c->ops[i];
  if (m == MUT_ADD_DEP) {
    int t = o->ndeps < GEN_MAX_DEPS ? earlier_token(c, i, r) : -1;
    if (t < 0)
      return 1;
    o->deps[o->ndeps++] = t;
    return 0;
  }
  int d = (int)af_rng_below(r, (uint32_t)o->ndeps);
  if (m == MUT_REWIRE) { /* to another token of the context, or to the dependency's own */
    int t = af_rng_chance(r, 50) ? earlier_token(c, i, r) : -1;
    int mk = maker(c, o->deps[d]);
    if (t < 0 && mk >= 0 && c->ops[mk].ndeps > 0)
      t = c->ops[mk].deps[af_rng_below(r, (uint32_t)c->ops[mk].ndeps)];
    if (t < 0)
      return 1;
    o->deps[d] = t;
    return 0;
  }
  o->deps[d] = o->deps[--o->ndeps];
  return 0;
}

/* The reducer's moves: an op dropped (with what it takes), a region inlined. 0 done, 1 nothing
 * to do it on, AF_ENOMEM. */
static int move_drop(GenCase *c, int m, AfRng *r) {
  uint8_t *drop = af_calloc((size_t)(c->nops > 0 ? c->nops : 1), 1);
  if (drop == NULL)
    return AF_ENOMEM;
  int flatten = 0, i;
  if (m == MUT_DROP_OP && c->nops > 1)
    drop[af_rng_below(r, (uint32_t)c->nops)] = 1;
  else if (m == MUT_INLINE && (i = pick_op(c, r, is_execute)) >= 0)
    flatten = c->ops[i].region;
  GenCase out;
  int rc =
      c->nops > 1 && (m == MUT_DROP_OP || flatten > 0) ? reduce__build(c, drop, flatten, &out) : 1;
  af_free(drop);
  if (rc == 0) {
    gen_case_free(c);
    *c = out;
  }
  return rc;
}

/* A new op before a main op, on one or two earlier tokens: a host wait, or a gpu.wait async. */
static int move_wait(GenCase *c, int m, AfRng *r) {
  int i = pick_op(c, r, main_op);
  if (i < 0)
    return 1;
  GenOp w = gen_op_blank(m == MUT_HOST_WAIT ? GEN_OP_HOST_WAIT : GEN_OP_WAIT_ASYNC, c->ops[i].ctx);
  w.tok = m == MUT_JOIN ? c->ntoks : -1;
  int want = 1 + (int)af_rng_below(r, 2);
  for (int k = 0; k < want; k++) {
    int t = earlier_token(c, i, r);
    if (t >= 0 && (w.ndeps == 0 || w.deps[0] != t))
      w.deps[w.ndeps++] = t;
  }
  if (w.ndeps == 0 && m == MUT_HOST_WAIT)
    return 1;
  return insert_op(c, i, &w) ? AF_ENOMEM : 0;
}

/* An operand of a memcpy, memset or launch as a view of its buffer, or as the whole buffer. */
static int move_view(GenCase *c, int m, AfRng *r) {
  int i = pick_op(c, r, has_views);
  if (i < 0)
    return 1;
  GenOp *o = &c->ops[i];
  int nb = gen_kind_launches(o->kind) ? o->nargs : (gen_op_flags(o->kind) & GEN_K_SRC) ? 2 : 1;
  int k = (int)af_rng_below(r, (uint32_t)(nb > 0 ? nb : 1));
  int b = gen_kind_launches(o->kind) ? o->args[k] : k == 0 ? o->buf : o->src;
  if (m == MUT_UNVIEW || b < 0 || b >= c->nbufs) {
    memset(o->view[k], 0, sizeof o->view[k]);
    return 0;
  }
  draw_view(r, c->bufs[b].n, o->view[k]);
  c->version = GEN_FORMAT_VERSION;
  return 0;
}

/* A device buffer's element type or size; a host buffer registered or not (elem-type's move). */
static int move_buf(GenCase *c, int m, AfRng *r) {
  int b = c->nbufs > 0 ? (int)af_rng_below(r, (uint32_t)c->nbufs) : -1;
  if (b >= 0 && c->bufs[b].kind == GEN_BUF_HOST && m == MUT_ELEM) { /* registered or not */
    c->bufs[b].reg ^= 1;
    c->version = GEN_FORMAT_VERSION;
    return 0;
  }
  if (b < 0 || c->bufs[b].kind != GEN_BUF_DEVICE)
    return 1;
  if (m == MUT_ELEM && c->bufs[b].elem == GEN_ELEM_I32 && af_rng_chance(r, 25)) {
    c->bufs[b].space ^= 1; /* in memory space 1 or not (an alloc host_shared: refused after) */
    for (int i = 0; i < c->nops; i++)
      if (c->ops[i].buf == b)
        c->ops[i].spacecast = 0;
    c->version = GEN_FORMAT_VERSION;
  } else if (m == MUT_ELEM) {
    c->bufs[b].elem = (uint8_t)af_rng_below(r, GEN_ELEM__COUNT);
    c->version = GEN_FORMAT_VERSION;
  } else if (c->bufs[b].n % 4 == 0 && !c->bufs[b].rank && af_rng_chance(r, 25)) {
    c->bufs[b].rank = 2; /* of rank 2, rows of 4 of them, the count dynamic */
    c->bufs[b].shape[0] = c->bufs[b].n / 4;
    c->bufs[b].shape[1] = 4;
    c->bufs[b].dyn = 1;
    c->version = GEN_FORMAT_VERSION;
  } else {
    c->bufs[b].n = 1 + (int32_t)af_rng_below(r, 64);
    c->bufs[b].rank = c->bufs[b].dyn = 0; /* (a shape of the old size: gone) */
  }
  return 0;
}

/* An allocation or deallocation async <-> synchronous; an allocation host_shared or not. */
static int move_form(GenCase *c, int m, AfRng *r) {
  int i = pick_op(c, r, m == MUT_SHARED ? is_alloc : is_either);
  if (i < 0)
    return 1;
  GenOp *o = &c->ops[i];
  if (m == MUT_SHARED) {
    if (o->async)
      return 1; /* (a host_shared allocation is synchronous) */
    o->mode = o->mode == GEN_ALLOC_HOST_SHARED ? GEN_ALLOC_SYNC : GEN_ALLOC_HOST_SHARED;
    return 0;
  }
  if (o->kind == GEN_OP_ALLOC && o->mode == GEN_ALLOC_HOST_SHARED)
    return 1;
  if (o->async) {
    if (o->tok >= 0 && maker(c, o->tok) == i && af_rng_chance(r, 50))
      return 1; /* (its token's users would name nothing: the validator refuses those) */
    o->async = 0;
    o->mode = o->kind == GEN_OP_ALLOC ? GEN_ALLOC_SYNC : o->mode;
    o->ndeps = 0;
    o->tok = -1;
    return 0;
  }
  o->async = 1;
  o->mode = o->kind == GEN_OP_ALLOC ? GEN_ALLOC_ASYNC : o->mode;
  o->tok = c->ntoks;
  int t = earlier_token(c, i, r);
  if (t >= 0)
    o->deps[o->ndeps++] = t;
  return 0;
}

/* A launch onto another explicit stream of the case, or off its own. */
static int move_stream(GenCase *c, AfRng *r) {
  int i = pick_op(c, r, is_launch);
  if (i < 0)
    return 1;
  GenOp *o = &c->ops[i];
  o->stream =
      o->stream >= 0 || c->nstreams == 0 ? -1 : (int32_t)af_rng_below(r, (uint32_t)c->nstreams);
  return 0;
}

/* ---- wrapping: ops moved into a new async.execute region or a new block ---- */

/* An op that may be wrapped: in no block, with no body of its own, not main's alone, not an
 * await (it awaits a region of its own context). */
static int wrappable(const GenOp *o) {
  unsigned f = gen_op_flags(o->kind);
  return o->blk == 0 && !(f & (GEN_K_REGION | GEN_K_BLOCK | GEN_K_MAIN)) && o->kind != GEN_OP_AWAIT;
}
static int body_ok(const GenOp *o) { /* in a call's or an if's body */
  return wrappable(o) && (gen_op_flags(o->kind) & GEN_K_BODY) && o->stream < 0;
}
static int loop_ok(const GenOp *o) { /* in a for's */
  return body_ok(o) && (gen_op_flags(o->kind) & GEN_K_LOOP);
}
static int branch_ok(const GenOp *o) { /* in a branch's (main only) */
  return body_ok(o) && o->ctx == 0;
}

/* The ops to wrap: [*lo, *hi], one to four ops in a row of one context, each ok. -1: none. */
static int wrap_range(const GenCase *c, AfRng *r, int (*ok)(const GenOp *), int *lo, int *hi) {
  int i = pick_op(c, r, ok);
  if (i < 0)
    return -1;
  int j = i;
  while (j + 1 < c->nops && j - i < 3 && ok(&c->ops[j + 1]) && c->ops[j + 1].ctx == c->ops[i].ctx &&
         af_rng_chance(r, 50))
    j++;
  *lo = i;
  *hi = j;
  return 0;
}

/* Adds t to the set s[0..*n) of at most 4 (-1: full). */
static int add_once(int32_t *s, int *n, int32_t t) {
  for (int k = 0; k < *n; k++)
    if (s[k] == t)
      return 0;
  if (*n >= 4)
    return -1;
  s[(*n)++] = t;
  return 0;
}

/* The tokens that cross the edge of ops [lo, hi]: those the ops use from before (in) and those
 * they define that anything else names (out: an op's dependency, a capture, a yield, a block's
 * input or yield). -1 when more than 4 cross either way. */
static int crossing(const GenCase *c, int lo, int hi, int32_t *in, int *nin, int32_t *out,
                    int *nout) {
  *nin = *nout = 0;
  uint8_t *mine = af_calloc((size_t)c->ntoks + 1, 1);
  if (mine == NULL)
    return -1;
  int rc = 0;
  for (int i = lo; i <= hi; i++)
    if (c->ops[i].tok >= 0 && c->ops[i].tok < c->ntoks)
      mine[c->ops[i].tok] = 1;
#define NAMED_(t) (rc |= (t) >= 0 && (t) < c->ntoks && mine[t] ? add_once(out, nout, (t)) : 0)
  for (int i = 0; i < c->nops; i++)
    for (int d = 0; d < c->ops[i].ndeps && d < GEN_MAX_DEPS; d++) {
      int32_t t = c->ops[i].deps[d];
      if (i < lo || i > hi)
        NAMED_(t);
      else if (t >= 0 && t < c->ntoks && !mine[t])
        rc |= add_once(in, nin, t);
    }
  for (int g = 1; g < c->nregions; g++) {
    for (int k = 0; k < c->regions[g].ncaptures; k++)
      NAMED_(c->regions[g].captures[k].outer);
    for (int k = 0; k < c->regions[g].nyields; k++)
      NAMED_(c->regions[g].yields[k]);
  }
  for (int b = 1; b < c->nblocks; b++) {
    for (int k = 0; k < c->blocks[b].ninputs; k++)
      NAMED_(c->blocks[b].inputs[k].outer);
    NAMED_(c->blocks[b].yield);
  }
#undef NAMED_
  af_free(mine);
  return rc;
}

/* Names `to` where anything but ops [lo, hi] names token `from` (inside: where they do). */
static void rename_tok(GenCase *c, int lo, int hi, int inside, int32_t from, int32_t to) {
  for (int i = 0; i < c->nops; i++)
    if ((i >= lo && i <= hi) == inside)
      for (int d = 0; d < c->ops[i].ndeps && d < GEN_MAX_DEPS; d++)
        if (c->ops[i].deps[d] == from)
          c->ops[i].deps[d] = to;
  if (inside)
    return;
  for (int g = 1; g < c->nregions; g++) {
    for (int k = 0; k < c->regions[g].ncaptures; k++)
      if (c->regions[g].captures[k].outer == from)
        c->regions[g].captures[k].outer = to;
    for (int k = 0; k < c->regions[g].nyields; k++)
      if (c->regions[g].yields[k] == from)
        c->regions[g].yields[k] = to;
  }
  for (int b = 1; b < c->nblocks; b++) {
    for (int k = 0; k < c->blocks[b].ninputs; k++)
      if (c->blocks[b].inputs[k].outer == from)
        c->blocks[b].inputs[k].outer = to;
    if (c->blocks[b].yield == from)
      c->blocks[b].yield = to;
  }
}

/* Ops [lo, hi] into the body of a new async.execute region: the tokens they use from their
 * context captured, those they define that others use yielded and awaited right after it, and a
 * completion await where none is (every region is awaited). */
static int move_wrap_region(GenCase *c, AfRng *r, unsigned avoid) {
  int lo, hi, nin, nout;
  int32_t in[4], out[4];
  if (wrap_range(c, r, wrappable, &lo, &hi) || crossing(c, lo, hi, in, &nin, out, &nout))
    return 1;
  if ((nin && (avoid & C_(CAPTURE))) || (nout && (avoid & C_(YIELD))))
    return 1; /* (constructs steering avoids) */
  int ctx = c->ops[lo].ctx, nt = c->ntoks;
  GenRegion g;
  memset(&g, 0, sizeof g);
  g.parent = ctx;
  g.exec_op = lo;
  for (int k = 0; k < nin; k++) {
    g.captures[g.ncaptures].outer = in[k];
    g.captures[g.ncaptures++].tok = nt;
    rename_tok(c, lo, hi, 1, in[k], nt++);
  }
  int32_t awaited[4];
  for (int k = 0; k < nout; k++) {
    g.yields[g.nyields++] = out[k];
    awaited[k] = nt;
    rename_tok(c, lo, hi, 0, out[k], nt++);
  }
  int rg = c->nregions;
  for (int i = lo; i <= hi; i++)
    c->ops[i].ctx = rg;
  GenOp e = gen_op_blank(GEN_OP_EXECUTE, ctx);
  e.region = rg;
  if (insert_op(c, lo, &e) || gen_case_add_region(c, &g) < 0)
    return AF_ENOMEM;
  for (int k = 0; k < (nout ? nout : 1); k++) {
    GenOp a = gen_op_blank(GEN_OP_AWAIT, ctx);
    a.region = rg;
    a.vidx = nout ? k : -1;
    a.tok = nout ? awaited[k] : -1;
    if (insert_op(c, hi + 2 + k, &a))
      return AF_ENOMEM;
  }
  c->ntoks = nt;
  c->version = GEN_FORMAT_VERSION;
  return 0;
}

/* Every op of [lo, hi] after the carried token t: a dependency on it added to an op that follows
 * neither it nor an op that does (where there is room). */
static void follow_carried(GenCase *c, int lo, int hi, int32_t t) {
  int32_t after[8];
  int n = 0;
  after[n++] = t;
  for (int i = lo; i <= hi; i++) {
    GenOp *o = &c->ops[i];
    int ok = 0;
    for (int d = 0; d < o->ndeps && d < GEN_MAX_DEPS; d++)
      for (int q = 0; q < n; q++)
        ok |= o->deps[d] == after[q];
    if (!ok && o->ndeps < GEN_MAX_DEPS && gen_op_takes_deps(o)) {
      o->deps[o->ndeps++] = t;
      ok = 1;
    }
    if (ok && o->tok >= 0 && n < 8)
      after[n++] = o->tok;
  }
}

/* Ops [lo, hi] into the body of a new call, if, for or branch: a call takes the tokens they use
 * as inputs, a for carries one (added as a dependency where the first op has none), the others
 * use them directly; the one token they define that others use is the block's yield, and the
 * block op's token stands for it after the block. */
static int move_wrap_block(GenCase *c, AfRng *r) {
  static const int kinds[4] = {GEN_OP_CALL, GEN_OP_IF, GEN_OP_FOR, GEN_OP_BRANCH};
  int kind = kinds[af_rng_below(r, 4)];
  int (*ok)(const GenOp *) = kind == GEN_OP_FOR      ? loop_ok
                             : kind == GEN_OP_BRANCH ? branch_ok
                                                     : body_ok;
  int lo, hi, nin, nout;
  int32_t in[4], out[4];
  if (wrap_range(c, r, ok, &lo, &hi) || crossing(c, lo, hi, in, &nin, out, &nout) || nout > 1)
    return 1;
  int ctx = c->ops[lo].ctx, nt = c->ntoks;
  GenBlock k;
  memset(&k, 0, sizeof k);
  k.yield = nout ? out[0] : -1;
  k.taken = af_rng_chance(r, 50);
  k.trips = kind == GEN_OP_FOR ? 1 + (int)af_rng_below(r, 4) : 1;
  if (kind == GEN_OP_CALL) {
    for (int q = 0; q < nin; q++) {
      k.inputs[k.ninputs].outer = in[q];
      k.inputs[k.ninputs++].tok = nt;
      rename_tok(c, lo, hi, 1, in[q], nt++);
    }
  } else if (kind == GEN_OP_FOR) { /* one carried token, which every op follows */
    int32_t t = nin ? in[0] : earlier_token(c, lo, r);
    if (t < 0 || (k.yield < 0 && (k.yield = c->ops[hi].tok) < 0))
      return 1;
    k.inputs[k.ninputs].outer = t;
    k.inputs[k.ninputs++].tok = nt;
    if (nin)
      rename_tok(c, lo, hi, 1, t, nt);
    follow_carried(c, lo, hi, nt++);
  } else if (k.yield < 0 && c->ops[hi].tok >= 0 && af_rng_chance(r, 50)) {
    k.yield = c->ops[hi].tok; /* (a yield nothing uses) */
  }
  GenOp b = gen_op_blank(kind, ctx);
  if (k.yield >= 0) {
    b.tok = nt++;
    rename_tok(c, lo, hi, 0, k.yield, b.tok);
  }
  b.block = c->nblocks;
  for (int i = lo; i <= hi; i++)
    c->ops[i].blk = b.block;
  if (insert_op(c, lo, &b))
    return AF_ENOMEM;
  k.op = lo;
  if (gen_case_add_block(c, &k) < 0)
    return AF_ENOMEM;
  c->ntoks = nt;
  c->version = GEN_FORMAT_VERSION;
  return 0;
}

/* Move m on c (edited in place), adding none of the constructs in avoid (1u << GEN_CONSTRUCT_*)
 * that the move decides on as it goes. 0 done, 1 nothing to do it on, AF_ENOMEM. */
static int apply(GenCase *c, int m, AfRng *r, unsigned avoid) {
  switch (m) {
  case MUT_ADD_DEP:
  case MUT_DROP_DEP:
  case MUT_REWIRE:
    return move_dep(c, m, r);
  case MUT_DROP_OP:
  case MUT_INLINE:
    return move_drop(c, m, r);
  case MUT_HOST_WAIT:
  case MUT_JOIN:
    return move_wait(c, m, r);
  case MUT_VIEW:
  case MUT_UNVIEW:
    return move_view(c, m, r);
  case MUT_ELEM:
  case MUT_SIZE:
    return move_buf(c, m, r);
  case MUT_FORM:
  case MUT_SHARED:
    return move_form(c, m, r);
  case MUT_STREAM:
    return move_stream(c, r);
  case MUT_WRAP_REGION:
    return move_wrap_region(c, r, avoid);
  case MUT_WRAP_BLOCK:
    return move_wrap_block(c, r);
  }
  return 1;
}

/* Whether c has something a avoids: an op of a shape it avoids, or a construct it avoids (what a
 * guided run refuses, gen_avoid_case). */
static int avoided(const GenAvoid *a, const GenCase *c) {
  return a && (a->nshapes > 0 || a->constructs != 0) && gen_avoid_case(a, c);
}

/* A case with ops of shapes a avoids (a corpus entry from before steering came to avoid them, or
 * a splice of one) without those ops and what they take: 0 done, 1 no valid case is left that a
 * does not avoid, AF_ENOMEM. */
static int repair(const GenCase *in, const GenAvoid *a, GenCase *out) {
  uint8_t *drop = af_calloc((size_t)(in->nops > 0 ? in->nops : 1), 1);
  if (drop == NULL)
    return AF_ENOMEM;
  int n = 0;
  for (int i = 0; i < in->nops; i++)
    n += drop[i] = gen_avoid_case_op(a, in, i) != 0;
  int rc = n > 0 ? reduce__build(in, drop, 0, out) : 1; /* (none: a construct it avoids) */
  af_free(drop);
  AfErr err = {0};
  if (rc == 0 && (out->nops == 0 || gen_validate(out, &err) != 0 || avoided(a, out))) {
    gen_case_free(out);
    rc = 1;
  }
  return rc;
}

int reduce_mutate(const GenCase *in, AfRng *r, const GenAvoid *avoid, GenCase *out, int *move) {
  if (avoided(avoid, in)) { /* steered away from as it stands: the avoided ops go first */
    int rc = repair(in, avoid, out);
    if (rc == 0 && move)
      *move = MUT_DROP_OP;
    if (rc != 1)
      return rc;
  }
  uint64_t was = gen_case_hash(in);
  for (int tries = 0; tries < 32; tries++) {
    int m = (int)af_rng_below(r, MUT__COUNT);
    if (avoid && (mut_constructs[m] & avoid->constructs))
      continue;
    if (gen_case_copy(out, in))
      return AF_ENOMEM;
    int rc = apply(out, m, r, avoid ? avoid->constructs : 0);
    AfErr err = {0};
    if (rc == 0 && gen_case_finish(out, &err) == 0 && gen_validate(out, &err) == 0 &&
        gen_case_hash(out) != was && !avoided(avoid, out)) {
      if (move)
        *move = m;
      return 0;
    }
    gen_case_free(out);
    if (rc == AF_ENOMEM)
      return rc;
  }
  memset(out, 0, sizeof *out); /* (empty: nothing to free, as gen_case_init would allocate) */
  return 1;
}

/* Renames b's token, buffer, region, block, stream and op numbers past a's. */
static void shift(GenOp *o, const GenCase *a) {
  int32_t *refs[4];
  int n = reduce__buf_refs(o, refs);
  for (int k = 0; k < n; k++)
    *refs[k] += *refs[k] >= 0 ? a->nbufs : 0;
  if (o->tok >= 0)
    o->tok += a->ntoks;
  for (int d = 0; d < o->ndeps && d < GEN_MAX_DEPS; d++)
    o->deps[d] += a->ntoks;
  if (o->ctx > 0)
    o->ctx += a->nregions - 1;
  if (o->blk > 0)
    o->blk += a->nblocks - 1;
  if ((o->kind == GEN_OP_EXECUTE || o->kind == GEN_OP_AWAIT) && o->region > 0)
    o->region += a->nregions - 1;
  if ((gen_op_flags(o->kind) & GEN_K_BLOCK) && o->block > 0)
    o->block += a->nblocks - 1;
  if ((gen_op_flags(o->kind) & (GEN_K_STREAM | GEN_K_ARGS)) && o->stream >= 0)
    o->stream += a->nstreams;
}

/* b's regions and blocks into out (a's numbers first). */
static int splice_tables(GenCase *out, const GenCase *a, const GenCase *b) {
  for (int q = 1; q < b->nregions; q++) {
    GenRegion g = b->regions[q];
    g.exec_op += a->nops;
    g.parent += g.parent > 0 ? a->nregions - 1 : 0;
    for (int k = 0; k < g.ninputs; k++) {
      g.inputs[k].region += a->nregions - 1;
      g.inputs[k].tok += a->ntoks;
    }
    for (int k = 0; k < g.ncaptures; k++) {
      g.captures[k].outer += a->ntoks;
      g.captures[k].tok += a->ntoks;
    }
    for (int k = 0; k < g.nyields; k++)
      g.yields[k] += a->ntoks;
    if (gen_case_add_region(out, &g) < 0)
      return AF_ENOMEM;
  }
  for (int q = 1; q < b->nblocks; q++) {
    GenBlock g = b->blocks[q];
    g.op += a->nops;
    for (int k = 0; k < g.ninputs; k++) {
      g.inputs[k].outer += a->ntoks;
      g.inputs[k].tok += a->ntoks;
    }
    if (g.yield >= 0)
      g.yield += a->ntoks;
    for (int k = 0; k < g.nbufargs; k++)
      g.bufargs[k] += a->nbufs;
    if (gen_case_add_block(out, &g) < 0)
      return AF_ENOMEM;
  }
  return 0;
}

int reduce_splice(const GenCase *a, const GenCase *b, GenCase *out) {
  for (int q = 1; q < b->nblocks; q++) /* (a condition reads the first i32 host buffer: a's) */
    if (gen_op_flags(b->ops[b->blocks[q].op].kind) & GEN_K_COND)
      return 1;
  if (gen_case_copy(out, a))
    return AF_ENOMEM;
  int rc = splice_tables(out, a, b);
  for (int i = 0; i < b->nbufs && rc == 0; i++)
    rc = gen_case_add_buf(out, &b->bufs[i]) < 0 ? AF_ENOMEM : 0;
  for (int i = 0; i < b->nops && rc == 0; i++) {
    GenOp o = b->ops[i];
    shift(&o, a);
    rc = gen_case_add_op(out, &o) < 0 ? AF_ENOMEM : 0;
  }
  if (b->version > out->version)
    out->version = b->version;
  AfErr err = {0};
  if (rc == 0 && (gen_case_finish(out, &err) != 0 || gen_validate(out, &err) != 0))
    rc = 1;
  if (rc) {
    gen_case_free(out);
    gen_case_init(out);
  }
  return rc;
}
