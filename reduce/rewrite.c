/*
 * rewrite.c: the reducer's passes that rewrite ops rather than remove them: each kind's simpler
 * forms (simpler_<lc>, named by GEN_OP_MAP's rows), an async op as a gpu.wait async, a host wait
 * as dependencies of what follows it, views and typed buffers as whole i32 buffers, blocks
 * inlined, buffers merged, region inputs and captures dropped or turned into one another. Every
 * candidate is validated and tested (build.c); the first accepted one becomes the current case.
 */
#include "reduce_int.h"

#include "../kernels/kernels.h"

#include <stdlib.h>
#include <string.h>

/* Token `from` named `to` wherever a case names a token it uses. */
static void rename_tok(GenCase *c, int32_t from, int32_t to) {
  for (int i = 0; i < c->nops; i++)
    for (int d = 0; d < c->ops[i].ndeps; d++)
      if (c->ops[i].deps[d] == from)
        c->ops[i].deps[d] = to;
  for (int g = 1; g < c->nregions; g++) {
    GenRegion *rg = &c->regions[g];
    for (int k = 0; k < rg->ncaptures; k++)
      if (rg->captures[k].outer == from)
        rg->captures[k].outer = to;
    for (int v = 0; v < rg->nyields; v++)
      if (rg->yields[v] == from)
        rg->yields[v] = to;
  }
  for (int k = 1; k < c->nblocks; k++) {
    GenBlock *b = &c->blocks[k];
    for (int q = 0; q < b->ninputs; q++)
      if (b->inputs[q].outer == from)
        b->inputs[q].outer = to;
    if (b->yield == from)
      b->yield = to;
  }
}

/* cand with block k inlined into its context: its op gone, its inputs named by the tokens they
 * bind, its token by the one its body yields. */
static void inline_block(GenCase *cand, int k) {
  GenBlock *b = &cand->blocks[k];
  int at = b->op, res = cand->ops[at].tok, y = b->yield;
  for (int q = 0; q < b->ninputs; q++)
    rename_tok(cand, b->inputs[q].tok, b->inputs[q].outer);
  y = cand->blocks[k].yield; /* (an input it yielded is now its outer token) */
  if (res >= 0)
    rename_tok(cand, res, y);
  memmove(&cand->ops[at], &cand->ops[at + 1], sizeof(GenOp) * (size_t)(cand->nops - at - 1));
  cand->nops--;
  for (int i = 0; i < cand->nops; i++) {
    GenOp *o = &cand->ops[i];
    if (o->blk == k)
      o->blk = 0;
    else if (o->blk > k)
      o->blk--;
    if ((gen_op_flags(o->kind) & GEN_K_BLOCK) && o->block > k)
      o->block--;
  }
  for (int g = 1; g < cand->nregions; g++)
    if (cand->regions[g].exec_op > at)
      cand->regions[g].exec_op--;
  memmove(&cand->blocks[k], &cand->blocks[k + 1],
          sizeof(GenBlock) * (size_t)(cand->nblocks - k - 1));
  cand->nblocks--;
  for (int q = 1; q < cand->nblocks; q++)
    if (cand->blocks[q].op > at)
      cand->blocks[q].op--;
}

/* Buffer `from` replaced by `to` (same kind, type and size) everywhere, its own alloc and
 * dealloc dropped: fewer buffers and fewer ops when the failure does not need two. */
int reduce__pass_merge_bufs(R *r) {
  int any = 0;
  for (int from = r->cur.nbufs - 1; from >= 0 && !r->err; from--) {
    for (int to = 0; to < r->cur.nbufs && from < r->cur.nbufs && !r->err; to++) {
      const GenBuf *a = &r->cur.bufs[from], *b = &r->cur.bufs[to];
      if (to == from || a->kind != GEN_BUF_DEVICE || b->kind != a->kind || b->elem != a->elem ||
          b->n != a->n)
        continue;
      GenCase ren;
      if (reduce__copy_cur(r, &ren))
        break;
      uint8_t *drop = calloc((size_t)ren.nops + 1, 1);
      if (drop == NULL) {
        gen_case_free(&ren);
        r->err = AF_ENOMEM;
        break;
      }
      for (int i = 0; i < ren.nops; i++) {
        GenOp *o = &ren.ops[i];
        if ((o->kind == GEN_OP_ALLOC || o->kind == GEN_OP_DEALLOC) && o->buf == from) {
          drop[i] = 1;
          continue;
        }
        int32_t *refs[4];
        int n = reduce__buf_refs(o, refs);
        for (int q = 0; q < n; q++)
          if (*refs[q] == from)
            *refs[q] = to;
        for (int k = 1; o->kind == GEN_OP_BRANCH && k < ren.nblocks; k++)
          for (int q = 0; q < ren.blocks[k].nbufargs; q++)
            if (ren.blocks[k].bufargs[q] == from)
              ren.blocks[k].bufargs[q] = to;
      }
      GenCase cand;
      int rc = reduce__build(&ren, drop, 0, &cand);
      free(drop);
      gen_case_free(&ren);
      if (rc == 0 && reduce__try_cand(r, &cand)) {
        any = 1;
        break;
      }
      if (rc != 0)
        r->st->invalid++;
    }
  }
  return any;
}

/* Inlines each block into its context, when the case still fails without it; else passes no
 * buffers as its block arguments, when it passes some. */
int reduce__pass_inline_blocks(R *r) {
  int any = 0;
  for (int k = r->cur.nblocks - 1; k >= 1 && !r->err; k--) {
    for (int move = 0; move < 2 && k < r->cur.nblocks && !r->err; move++) {
      if (move == 1 && r->cur.blocks[k].nbufargs == 0)
        break;
      GenCase cand;
      if (reduce__copy_cur(r, &cand))
        break;
      if (move == 0)
        inline_block(&cand, k);
      else
        cand.blocks[k].nbufargs = 0;
      if (reduce__try_finished(r, &cand)) {
        any = 1;
        break;
      }
    }
  }
  return any;
}

/* Token t goes: every op that depends on it depends on deps[0..n) instead; a block input or a
 * capture of it takes the one dep (a capture of nothing goes, and so do the uses of its name in
 * the region). Returns -1 where it cannot (a yielded token, several deps for one input). */
static int replace_tok(GenCase *c, int32_t t, const int32_t *deps, int n) {
  for (int i = 0; i < c->nops; i++) {
    GenOp *o = &c->ops[i];
    int at = -1;
    for (int d = 0; d < o->ndeps; d++)
      if (o->deps[d] == t)
        at = d;
    if (at < 0)
      continue;
    Fwd f = {0};
    for (int d = 0; d < o->ndeps; d++)
      if (d != at && reduce__add_tok(&f, o->deps[d]))
        return -1;
    for (int q = 0; q < n; q++)
      if (reduce__add_tok(&f, deps[q]))
        return -1;
    o->ndeps = f.n;
    memcpy(o->deps, f.t, sizeof f.t);
  }
  for (int g = 1; g < c->nregions; g++)
    for (int v = 0; v < c->regions[g].nyields; v++)
      if (c->regions[g].yields[v] == t)
        return -1;
  for (int k = 1; k < c->nblocks; k++) /* a block input is one token: it takes the one dep */
    for (int q = 0; q < c->blocks[k].ninputs; q++)
      if (c->blocks[k].inputs[q].outer == t) {
        if (n != 1)
          return -1;
        c->blocks[k].inputs[q].outer = deps[0];
      }
  for (int g = 1; g < c->nregions; g++) { /* a capture takes the one dep, or goes */
    GenRegion *rg = &c->regions[g];
    for (int k = 0; k < rg->ncaptures; k++) {
      if (rg->captures[k].outer != t)
        continue;
      if (n > 1)
        return -1;
      if (n == 1) {
        rg->captures[k].outer = deps[0];
        continue;
      }
      int32_t inner = rg->captures[k].tok;
      memmove(&rg->captures[k], &rg->captures[k + 1],
              sizeof rg->captures[0] * (size_t)(rg->ncaptures - k - 1));
      rg->ncaptures--;
      k--;
      if (replace_tok(c, inner, NULL, 0))
        return -1;
    }
  }
  return 0;
}

static int tok_used(const GenCase *c, int32_t t) {
  for (int i = 0; i < c->nops; i++)
    for (int d = 0; d < c->ops[i].ndeps; d++)
      if (c->ops[i].deps[d] == t)
        return 1;
  for (int g = 1; g < c->nregions; g++) {
    for (int v = 0; v < c->regions[g].nyields; v++)
      if (c->regions[g].yields[v] == t)
        return 1;
    for (int k = 0; k < c->regions[g].ncaptures; k++)
      if (c->regions[g].captures[k].outer == t)
        return 1;
  }
  for (int k = 1; k < c->nblocks; k++) {
    if (c->blocks[k].yield == t)
      return 1;
    for (int q = 0; q < c->blocks[k].ninputs; q++)
      if (c->blocks[k].inputs[q].outer == t)
        return 1;
  }
  return 0;
}

/* An async op whose token later ops need, without its data access: a gpu.wait async on the same
 * dependencies (what it wrote, and the buffers only it read, may then go). */
int reduce__pass_to_wait(R *r) {
  int any = 0;
  for (int i = 0; i < r->cur.nops && !r->err; i++) {
    const GenOp *o = &r->cur.ops[i];
    unsigned f = gen_op_flags(o->kind); /* an async op with a data access */
    if (!(f & GEN_K_ASYNC) || !(f & (GEN_K_WRITE | GEN_K_ARGS)) || !tok_used(&r->cur, o->tok))
      continue;
    GenCase cand;
    if (reduce__copy_cur(r, &cand))
      break;
    GenOp *m = &cand.ops[i];
    m->kind = GEN_OP_WAIT_ASYNC;
    memset(m->view, 0, sizeof m->view);
    m->buf = m->src = m->stream = -1;
    m->nargs = 0;
    m->args[0] = m->args[1] = m->args[2] = -1;
    m->value = 0;
    m->kernel = 0;
    any |= reduce__try_finished(r, &cand);
  }
  return any;
}

/* A host wait goes, its dependencies given to the later async ops of its context instead: the
 * order it gave them stays, one op fewer (a wait that only ordered the next op). */
int reduce__pass_wait_to_deps(R *r) {
  int any = 0;
  for (int i = r->cur.nops - 1; i >= 0 && !r->err; i--) {
    const GenOp *w = &r->cur.ops[i];
    if (w->kind != GEN_OP_HOST_WAIT || w->ndeps == 0)
      continue;
    GenCase tmp, cand;
    if (reduce__copy_cur(r, &tmp))
      break;
    int ok = 1;
    for (int j = i + 1; j < tmp.nops && ok; j++) {
      GenOp *o = &tmp.ops[j];
      if (o->ctx != w->ctx || o->blk > 0 || o->tok < 0 || !gen_op_async(o))
        continue; /* (an async op of the same context takes dependencies) */
      Fwd f = {0};
      for (int d = 0; d < o->ndeps && ok; d++)
        ok = reduce__add_tok(&f, o->deps[d]) == 0;
      for (int d = 0; d < w->ndeps && ok; d++)
        ok = reduce__add_tok(&f, w->deps[d]) == 0;
      ok = ok && f.n <= GEN_MAX_DEPS;
      o->ndeps = f.n;
      memcpy(o->deps, f.t, sizeof o->deps);
    }
    uint8_t *drop = calloc((size_t)tmp.nops, 1);
    if (drop == NULL) {
      gen_case_free(&tmp);
      r->err = AF_ENOMEM;
      break;
    }
    drop[i] = 1;
    int rc = ok ? reduce__build(&tmp, drop, 0, &cand) : -1;
    free(drop);
    gen_case_free(&tmp);
    if (rc == 0)
      any |= reduce__try_cand(r, &cand);
    else if (rc == AF_ENOMEM)
      r->err = AF_ENOMEM;
  }
  return any;
}

/* The buffers that change type with buffer b (all of them for b -1): those a memcpy or a launch
 * ties to it, which must keep one type (bit q: buffer q); NULL when out of memory. */
static uint8_t *typed_group(const GenCase *c, int b) {
  uint8_t *g = af_calloc((size_t)c->nbufs + 1, 1);
  if (g == NULL)
    return NULL;
  for (int q = 0; q < c->nbufs; q++)
    g[q] = b < 0 || q == b;
  for (int grew = 1; grew && b >= 0;) { /* (to a fixed point: groups are small) */
    grew = 0;
    for (int i = 0; i < c->nops; i++) {
      const GenOp *o = &c->ops[i];
      int ties[KERNEL_MAX_BUFS], n = 0, in = 0;
      if (o->kind == GEN_OP_MEMCPY) {
        ties[n++] = o->buf;
        ties[n++] = o->src;
      } else if (gen_kind_launches(o->kind)) {
        for (int a = 0; a < o->nargs && a < KERNEL_MAX_BUFS; a++)
          ties[n++] = o->args[a];
      }
      for (int k = 0; k < n; k++)
        in |= ties[k] >= 0 && ties[k] < c->nbufs && g[ties[k]];
      for (int k = 0; k < n && in; k++)
        if (ties[k] >= 0 && ties[k] < c->nbufs && !g[ties[k]])
          g[ties[k]] = grew = 1;
    }
  }
  return g;
}

/* Buffers of i32 instead of another type (all at once, then each group a memcpy or launch ties
 * together); a memcpy, memset or
 * launch on its whole buffers instead of on views of them, one block of a thread per element
 * and gpu.launch_func instead of its grid and blocks or its gpu.launch; a buffer allocated with its
 * dynamic shape instead of a static one cast to it; a host buffer pageable instead of registered; a
 * device buffer in the default memory space, of rank 1. */
int reduce__pass_unview(R *r) {
  int any = 0;
  for (int b = -1; b < r->cur.nbufs && !r->err; b++) { /* i32 buffers: all (-1), then a group */
    uint8_t *grp = typed_group(&r->cur, b);
    int typed = 0, first = -1;
    for (int q = 0; grp && q < r->cur.nbufs; q++)
      if (grp[q] && r->cur.bufs[q].elem != GEN_ELEM_I32) {
        typed++;
        first = first < 0 ? q : first;
      }
    /* (one candidate per group: the one of its first buffer) */
    if (grp == NULL || typed == 0 || (b < 0 && typed == 1) || (b >= 0 && first != b)) {
      af_free(grp);
      continue;
    }
    GenCase cand;
    if (reduce__copy_cur(r, &cand)) {
      af_free(grp);
      break;
    }
    for (int q = 0; q < cand.nbufs; q++)
      if (grp[q])
        cand.bufs[q].elem = GEN_ELEM_I32;
    af_free(grp);
    any |= reduce__try_finished(r, &cand);
  }
  for (int b = 0; b < r->cur.nbufs && !r->err; b++) {
    if (!r->cur.bufs[b].stat && !r->cur.bufs[b].reg && !r->cur.bufs[b].space &&
        !r->cur.bufs[b].rank)
      continue;
    GenCase cand;
    if (reduce__copy_cur(r, &cand))
      break;
    cand.bufs[b].stat = cand.bufs[b].reg = cand.bufs[b].space = 0;
    cand.bufs[b].rank = cand.bufs[b].dyn = 0;
    memset(cand.bufs[b].shape, 0, sizeof cand.bufs[b].shape);
    for (int i = 0; i < cand.nops; i++) /* (in the default space, no cast to it) */
      if (cand.ops[i].buf == b)
        cand.ops[i].spacecast = 0;
    any |= reduce__try_finished(r, &cand);
  }
  for (int i = 0; i < r->cur.nops && !r->err; i++) { /* one block of a thread per element */
    const GenOp *o = &r->cur.ops[i];
    if (o->kind != GEN_OP_LAUNCH || (!o->dims[0] && !o->inl))
      continue;
    GenCase cand;
    if (reduce__copy_cur(r, &cand))
      break;
    memset(cand.ops[i].dims, 0, sizeof cand.ops[i].dims);
    cand.ops[i].inl = 0;
    if (cand.ops[i].smem > 0) { /* (as much dynamic shared memory as its one block needs) */
      int32_t off, len, stride;
      gen_op_view(&cand, &cand.ops[i], 0, &off, &len, &stride);
      int64_t need = kernel_smem_need(len);
      cand.ops[i].smem = cand.ops[i].smem < need ? (int32_t)need : cand.ops[i].smem;
    }
    any |= reduce__try_finished(r, &cand);
  }
  for (int i = 0; i < r->cur.nops && !r->err; i++) { /* the kernel's plain form, else no more
                                                        dynamic shared memory than it needs */
    const GenOp *o = &r->cur.ops[i];
    if (o->kind != GEN_OP_LAUNCH || !o->smem)
      continue;
    int32_t off, len, stride, d[6];
    gen_op_view(&r->cur, o, 0, &off, &len, &stride);
    gen_op_dims(o, len, d);
    int32_t need = (int32_t)kernel_smem_need((int64_t)d[3] * d[4] * d[5]);
    for (int t = 0; t < 2 && !r->err && (t == 0 || r->cur.ops[i].smem > need); t++) {
      GenCase cand;
      if (reduce__copy_cur(r, &cand))
        break;
      cand.ops[i].smem = t == 0 ? 0 : need;
      int ok = reduce__try_finished(r, &cand);
      any |= ok;
      if (ok)
        break;
    }
  }
  for (int i = 0; i < r->cur.nops && !r->err; i++) {
    const GenOp *o = &r->cur.ops[i];
    if (!gen_op_has_view(o))
      continue;
    GenCase cand;
    if (reduce__copy_cur(r, &cand))
      break;
    memset(cand.ops[i].view, 0, sizeof cand.ops[i].view);
    any |= reduce__try_finished(r, &cand);
  }
  return any;
}

/* ---- each kind's simpler forms: simpler_<lc> (GEN_OP_MAP) tries them on op i of the current
 * case, and returns 1 when one was accepted. */

/* A launch: first a kernel that reads less (af_fill reads nothing, af_transform one input), then
 * a memset of what it writes (it reads nothing then; the destination's view, if any, stays the
 * memset's). */
static int simpler_launch(R *r, int i) {
  if (r->cur.ops[i].nargs <= 1)
    return 0;
  for (int v = 0; v < 3 && !r->err; v++) {
    int kernel = r->cur.ops[i].kernel;
    if ((v == 0 && kernel == KERNEL_FILL) || (v > 0 && kernel != KERNEL_COMBINE))
      continue;
    GenCase less;
    if (reduce__copy_cur(r, &less))
      return 0;
    GenOp *lo = &less.ops[i];
    lo->kernel = v == 0 ? KERNEL_FILL : KERNEL_TRANSFORM;
    lo->nargs = v == 0 ? 1 : 2;
    if (v == 2) {
      lo->args[1] = lo->args[2];
      memcpy(lo->view[1], lo->view[2], sizeof lo->view[1]);
    }
    lo->args[2] = -1;
    memset(lo->view[2], 0, sizeof lo->view[2]);
    if (v == 0) {
      lo->args[1] = -1;
      memset(lo->view[1], 0, sizeof lo->view[1]);
    }
    if (reduce__try_finished(r, &less))
      return 1;
  }
  GenCase cand;
  if (r->err || reduce__copy_cur(r, &cand))
    return 0;
  GenOp *m = &cand.ops[i];
  m->kind = GEN_OP_MEMSET;
  m->buf = m->args[0];
  m->src = -1;
  m->nargs = 0;
  memset(m->view[1], 0, sizeof m->view[1] * 2);
  return reduce__try_finished(r, &cand);
}

/* A memcpy into a device buffer: a memset of it (a write that reads nothing). */
static int simpler_memcpy(R *r, int i) {
  const GenOp *o = &r->cur.ops[i];
  GenCase cand;
  if (r->cur.bufs[o->buf].kind != GEN_BUF_DEVICE || !gen_elem_settable(r->cur.bufs[o->buf].elem) ||
      reduce__copy_cur(r, &cand))
    return 0;
  GenOp *m = &cand.ops[i];
  m->kind = GEN_OP_MEMSET;
  m->src = -1;
  m->value = 0;
  m->view[1][0] = m->view[1][1] = m->view[1][2] = 0;
  return reduce__try_finished(r, &cand);
}

/* An async alloc: a synchronous one (what waited for its token waits for its dependencies). */
static int simpler_alloc(R *r, int i) {
  const GenOp *o = &r->cur.ops[i];
  GenCase cand;
  if (!o->async || o->mode != GEN_ALLOC_ASYNC || reduce__copy_cur(r, &cand))
    return 0;
  GenOp *m = &cand.ops[i];
  if (replace_tok(&cand, m->tok, m->deps, m->ndeps) != 0) {
    gen_case_free(&cand);
    return 0;
  }
  m->async = 0;
  m->mode = GEN_ALLOC_SYNC;
  m->tok = -1;
  m->ndeps = 0;
  return reduce__try_finished(r, &cand);
}

/* An await of a value nothing uses: an await of the region's completion. */
static int simpler_await(R *r, int i) {
  const GenOp *o = &r->cur.ops[i];
  GenCase cand;
  if (o->vidx < 0 || tok_used(&r->cur, o->tok) || reduce__copy_cur(r, &cand))
    return 0;
  cand.ops[i].vidx = -1;
  cand.ops[i].tok = -1;
  return reduce__try_finished(r, &cand);
}

/* The kinds with no simpler form of their own (removing them, or their dependencies, is the
 * passes' work that covers every kind). */
#define simpler_wait_async NULL
#define simpler_memset NULL
#define simpler_dealloc NULL
#define simpler_host_wait NULL
#define simpler_observe NULL
#define simpler_execute NULL
#define simpler_stream_create NULL
#define simpler_stream_sync NULL
#define simpler_stream_destroy NULL
#define simpler_call NULL
#define simpler_if NULL
#define simpler_for NULL
#define simpler_branch NULL

static int (*const simplers[GEN_OP__COUNT])(R *r, int i) = {
#define REDUCE__SIMPLER(id, lc, name, mlir, weight, flags) [GEN_OP_##id] = simpler_##lc,
    GEN_OP_MAP(REDUCE__SIMPLER)
#undef REDUCE__SIMPLER
};

/* Every op in the simpler forms its kind has. */
int reduce__pass_simplify(R *r) {
  int any = 0;
  for (int i = 0; i < r->cur.nops && !r->err; i++)
    if (simplers[r->cur.ops[i].kind])
      any |= simplers[r->cur.ops[i].kind](r, i);
  return any;
}

/* Drops a region's input or captured token (capture k >= GEN_MAX_REGION_IO): what depended on
 * it depends on nothing in its place, so the region that yields the value can go too. */
int reduce__pass_region_io(R *r) {
  int any = 0;
  for (int g = 1; g < r->cur.nregions && !r->err; g++) {
    for (int k = 2 * GEN_MAX_REGION_IO - 1; k >= 0 && !r->err; k--) {
      const GenRegion *rg = &r->cur.regions[g];
      int cap = k >= GEN_MAX_REGION_IO, q = cap ? k - GEN_MAX_REGION_IO : k;
      if (q >= (cap ? rg->ncaptures : rg->ninputs))
        continue;
      GenCase cand;
      if (reduce__copy_cur(r, &cand))
        break;
      GenRegion *cg = &cand.regions[g];
      int32_t t = cap ? cg->captures[q].tok : cg->inputs[q].tok;
      if (replace_tok(&cand, t, NULL, 0) != 0) {
        gen_case_free(&cand);
        continue;
      }
      if (cap) {
        memmove(&cg->captures[q], &cg->captures[q + 1],
                sizeof(GenRegionCapture) * (size_t)(cg->ncaptures - q - 1));
        cg->ncaptures--;
      } else {
        memmove(&cg->inputs[q], &cg->inputs[q + 1],
                sizeof(GenRegionInput) * (size_t)(cg->ninputs - q - 1));
        cg->ninputs--;
      }
      any |= reduce__try_finished(r, &cand);
    }
  }
  return any;
}

/* A region input becomes a capture of an await of the same value, placed just before the
 * region's execute op: the region then has what it needs from its parent only, and can be
 * flattened into it (the await orders more, never less). */
int reduce__pass_inputs_to_captures(R *r) {
  int any = 0;
  for (int g = 1; g < r->cur.nregions && !r->err; g++) {
    const GenRegion *rg = &r->cur.regions[g];
    if (rg->ninputs == 0 || rg->ncaptures >= GEN_MAX_REGION_IO)
      continue;
    GenCase cand;
    if (reduce__copy_cur(r, &cand))
      break;
    GenRegion *cg = &cand.regions[g];
    int at = cg->exec_op;
    GenOp aw;
    memset(&aw, 0, sizeof aw);
    aw.kind = GEN_OP_AWAIT;
    aw.ctx = cg->parent;
    aw.region = cg->inputs[0].region;
    aw.vidx = cg->inputs[0].vidx;
    aw.tok = cand.ntoks;
    aw.buf = aw.src = aw.stream = -1;
    if (gen_case_add_op(&cand, &aw) < 0) {
      gen_case_free(&cand);
      r->err = AF_ENOMEM;
      break;
    }
    memmove(&cand.ops[at + 1], &cand.ops[at], sizeof(GenOp) * (size_t)(cand.nops - 1 - at));
    cand.ops[at] = aw;
    for (int q = 1; q < cand.nregions; q++)
      if (cand.regions[q].exec_op >= at)
        cand.regions[q].exec_op++;
    cg->captures[cg->ncaptures].outer = aw.tok;
    cg->captures[cg->ncaptures++].tok = cg->inputs[0].tok;
    memmove(&cg->inputs[0], &cg->inputs[1], sizeof(GenRegionInput) * (size_t)(cg->ninputs - 1));
    cg->ninputs--;
    any |= reduce__try_finished(r, &cand);
  }
  return any;
}
