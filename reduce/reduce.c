/*
 * reduce.c: delta debugging over a Case (see reduce.h).
 */
#include "reduce.h"
#include "reduce_build.h"

#include "../base/proc.h"
#include "../runner/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STOPPED 1 /* R.err: the deadline came (not an error) */

static double mono(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct R {
  GenCase cur;
  ReduceTest test;
  void *ctx;
  ReduceStats *st;
  int err;
  ReduceOpts o;
  int cur_batch; /* adapts: halves after a batch with a hit, doubles after one without */
} R;

/* Tries a candidate: valid and interesting -> it becomes the current case. 1: accepted. */
/* cand: a copy of the current case; 1 (r->err set) when out of memory. */
static int copy_cur(R *r, GenCase *cand) {
  if (gen_case_copy(cand, &r->cur) == 0)
    return 0;
  r->err = AF_ENOMEM;
  return 1;
}

static int try_cand(R *r, GenCase *cand) {
  AfErr e = {0};
  if (r->o.deadline > 0 && mono() > r->o.deadline) {
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
static int try_finished(R *r, GenCase *cand) {
  AfErr e = {0};
  if (gen_case_finish(cand, &e) != 0) {
    gen_case_free(cand);
    return 0;
  }
  return try_cand(r, cand);
}

static int try_drop(R *r, int from, int to) {
  uint8_t *drop = calloc((size_t)(r->cur.nops > 0 ? r->cur.nops : 1), 1);
  if (drop == NULL) {
    r->err = AF_ENOMEM;
    return 0;
  }
  for (int i = from; i < to && i < r->cur.nops; i++)
    drop[i] = 1;
  GenCase cand;
  int rc = reduce__build(&r->cur, drop, 0, &cand);
  free(drop);
  if (rc == AF_ENOMEM)
    r->err = AF_ENOMEM;
  if (rc != 0) {
    r->st->invalid++;
    return 0;
  }
  return try_cand(r, &cand);
}

typedef struct Slice {
  R *r;
  const GenCase *const *cands;
  int n;
} Slice;

/* A child's slice of the batch; the answers go back through the pipe: a status byte, then one
 * byte per candidate. */
static void eval_slice(void *arg, int in, int out) {
  const Slice *sl = arg;
  AfChild parent = {-1, out, in};
  int hit[1024];
  int crc = sl->n <= 1024 ? sl->r->o.batch_test(sl->cands, sl->n, hit, sl->r->ctx) : AF_EINVALID;
  unsigned char buf[1025];
  buf[0] = crc == 0 ? 0 : 1;
  for (int i = 0; i < sl->n && crc == 0; i++)
    buf[1 + i] = (unsigned char)hit[i];
  _exit(af_child_write(&parent, buf, (size_t)sl->n + 1) == 0 ? 0 : 1);
}

/* Evaluates cands[0..n) with the batch test, split among o.jobs child processes. */
static int eval_batch(R *r, const GenCase *const *cands, int n, int *hit) {
  int jobs = r->o.jobs > 1 ? r->o.jobs : 1;
  if (jobs > n)
    jobs = n;
  if (jobs <= 1)
    return r->o.batch_test(cands, n, hit, r->ctx);
  AfChild kids[64];
  if (jobs > 64)
    jobs = 64;
  int per = (n + jobs - 1) / jobs, started = 0, rc = 0;
  for (int j = 0; j < jobs; j++) {
    int from = j * per, cnt = n - from < per ? n - from : per;
    if (cnt <= 0)
      break;
    Slice sl = {r, cands + from, cnt};
    AfErr e = {0};
    if (af_child_start(&kids[j], eval_slice, &sl, 1, &e) != 0) {
      rc = AF_EIO;
      break;
    }
    started++;
  }
  for (int j = 0; j < started; j++) {
    int from = j * per, cnt = n - from < per ? n - from : per;
    unsigned char buf[1025];
    int got = af_child_read(&kids[j], buf, (size_t)cnt + 1, -1);
    int st;
    af_child_end(&kids[j], 0, &st);
    if (got != 0 || buf[0] != 0) {
      rc = rc ? rc : AF_EIO;
      continue;
    }
    for (int i = 0; i < cnt; i++)
      hit[from + i] = buf[1 + i];
  }
  return rc;
}

/* Candidates of the ddmin pass at positions start, start - chunk, ... (the order the
 * one-by-one search tries them), evaluated in one batch: the first interesting one is taken.
 * Returns 1 and sets *at to its position when one was, 0 and sets *at to the next position
 * to try otherwise. */
static int try_drop_batch(R *r, int start, int chunk, int *at) {
  if (r->o.deadline > 0 && mono() > r->o.deadline) {
    r->err = STOPPED;
    *at = start;
    return 0;
  }
  int want = r->cur_batch > 0 ? r->cur_batch : 2;
  if (want > r->o.batch)
    want = r->o.batch > 1 ? r->o.batch : 1;
  GenCase *cands = calloc((size_t)want, sizeof *cands);
  const GenCase **cp = calloc((size_t)want, sizeof *cp);
  int *pos = calloc((size_t)want, sizeof *pos), *hit = calloc((size_t)want, sizeof *hit);
  uint8_t *drop = calloc((size_t)(r->cur.nops > 0 ? r->cur.nops : 1), 1);
  int n = 0, p = start, found = -1;
  if (!cands || !cp || !pos || !hit || !drop) {
    r->err = AF_ENOMEM;
    goto done;
  }
  for (; p > -chunk && n < want; p -= chunk) {
    memset(drop, 0, (size_t)(r->cur.nops > 0 ? r->cur.nops : 1));
    for (int i = p < 0 ? 0 : p; i < p + chunk && i < r->cur.nops; i++)
      drop[i] = 1;
    int rc = reduce__build(&r->cur, drop, 0, &cands[n]);
    if (rc == AF_ENOMEM) {
      r->err = AF_ENOMEM;
      goto done;
    }
    AfErr e = {0};
    if (rc != 0 || gen_validate(&cands[n], &e) != 0) {
      if (rc == 0)
        gen_case_free(&cands[n]);
      r->st->invalid++;
      continue;
    }
    cp[n] = &cands[n];
    pos[n++] = p;
  }
  if (n > 0) {
    int rc = eval_batch(r, cp, n, hit);
    if (rc) {
      r->err = rc;
      goto done;
    }
    for (int i = 0; i < n && found < 0; i++) {
      r->st->tests++; /* as the one-by-one search would have tested them */
      if (hit[i])
        found = i;
    }
  }
  r->cur_batch = found >= 0 ? (want / 2 > 2 ? want / 2 : 2) : want * 2;
  if (found >= 0) {
    r->st->accepted++;
    gen_case_free(&r->cur);
    r->cur = cands[found];
    memset(&cands[found], 0, sizeof cands[found]);
    gen_case_init(&cands[found]);
    *at = pos[found];
  } else {
    *at = p;
  }
done:
  for (int i = 0; cands && i < n; i++)
    gen_case_free(&cands[i]);
  free(cands);
  free(cp);
  free(pos);
  free(hit);
  free(drop);
  return found >= 0;
}

/* ddmin over the ops in inline order: remove chunks, halving their size when none goes. */
static int pass_remove(R *r) {
  int any = 0;
  int chunk = r->cur.nops / 2 > 0 ? r->cur.nops / 2 : 1;
  while (chunk >= 1 && !r->err) {
    int progress = 0;
    for (int start = r->cur.nops - chunk; start > -chunk && !r->err;) {
      if (r->o.batch_test) {
        int at;
        if (try_drop_batch(r, start, chunk, &at)) {
          progress = any = 1;
          start = at > r->cur.nops - chunk ? r->cur.nops - chunk : at;
        } else {
          start = at;
        }
        continue;
      }
      int from = start < 0 ? 0 : start;
      if (try_drop(r, from, start + chunk)) {
        progress = any = 1;
        if (start > r->cur.nops - chunk)
          start = r->cur.nops - chunk;
      } else {
        start -= chunk;
      }
    }
    if (!progress)
      chunk /= 2;
  }
  return any;
}

static int pass_flatten(R *r) {
  int any = 0;
  for (int g = r->cur.nregions - 1; g >= 1 && !r->err; g--) {
    if (g >= r->cur.nregions)
      continue;
    uint8_t *drop = calloc((size_t)(r->cur.nops > 0 ? r->cur.nops : 1), 1);
    if (drop == NULL) {
      r->err = AF_ENOMEM;
      break;
    }
    GenCase cand;
    int rc = reduce__build(&r->cur, drop, g, &cand);
    free(drop);
    if (rc == 0)
      any |= try_cand(r, &cand);
    else
      r->st->invalid++;
  }
  return any;
}

static int pass_deps(R *r) {
  int any = 0;
  for (int i = 0; i < r->cur.nops && !r->err; i++) {
    for (int d = r->cur.ops[i].ndeps - 1; d >= 0 && !r->err; d--) {
      if (d >= r->cur.ops[i].ndeps)
        continue;
      GenCase cand;
      if (copy_cur(r, &cand))
        break;
      GenOp *o = &cand.ops[i];
      memmove(&o->deps[d], &o->deps[d + 1], sizeof(int32_t) * (size_t)(o->ndeps - d - 1));
      o->ndeps--;
      any |= try_cand(r, &cand);
    }
  }
  return any;
}

/* Drops region values nothing awaits or consumes (so what produced them can go too). */
static int pass_yields(R *r) {
  int any = 0;
  for (int g = 1; g < r->cur.nregions && !r->err; g++) {
    for (int v = r->cur.regions[g].nyields - 1; v >= 0 && !r->err; v--) {
      int used = 0;
      for (int i = 0; i < r->cur.nops && !used; i++)
        used = r->cur.ops[i].kind == GEN_OP_AWAIT && r->cur.ops[i].region == g &&
               r->cur.ops[i].vidx == v;
      for (int q = 1; q < r->cur.nregions && !used; q++)
        for (int k = 0; k < r->cur.regions[q].ninputs; k++)
          used |= r->cur.regions[q].inputs[k].region == g && r->cur.regions[q].inputs[k].vidx == v;
      if (used)
        continue;
      GenCase cand;
      if (copy_cur(r, &cand))
        break;
      GenRegion *rg = &cand.regions[g];
      memmove(&rg->yields[v], &rg->yields[v + 1], sizeof(int32_t) * (size_t)(rg->nyields - v - 1));
      rg->nyields--;
      for (int i = 0; i < cand.nops; i++)
        if (cand.ops[i].kind == GEN_OP_AWAIT && cand.ops[i].region == g && cand.ops[i].vidx > v)
          cand.ops[i].vidx--;
      for (int q = 1; q < cand.nregions; q++)
        for (int k = 0; k < cand.regions[q].ninputs; k++)
          if (cand.regions[q].inputs[k].region == g && cand.regions[q].inputs[k].vidx > v)
            cand.regions[q].inputs[k].vidx--;
      any |= try_cand(r, &cand);
    }
  }
  return any;
}

/* Uses of token t become uses of deps[0..n) (ops and region yields). -1: too many deps. */
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
    if (o->kind >= GEN_OP_CALL && o->block > k)
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
static int pass_merge_bufs(R *r) {
  int any = 0;
  for (int from = r->cur.nbufs - 1; from >= 0 && !r->err; from--) {
    for (int to = 0; to < r->cur.nbufs && from < r->cur.nbufs && !r->err; to++) {
      const GenBuf *a = &r->cur.bufs[from], *b = &r->cur.bufs[to];
      if (to == from || a->kind != GEN_BUF_DEVICE || b->kind != a->kind || b->elem != a->elem ||
          b->n != a->n)
        continue;
      GenCase ren;
      if (copy_cur(r, &ren))
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
      if (rc == 0 && try_cand(r, &cand)) {
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
static int pass_inline_blocks(R *r) {
  int any = 0;
  for (int k = r->cur.nblocks - 1; k >= 1 && !r->err; k--) {
    for (int move = 0; move < 2 && k < r->cur.nblocks && !r->err; move++) {
      if (move == 1 && r->cur.blocks[k].nbufargs == 0)
        break;
      GenCase cand;
      if (copy_cur(r, &cand))
        break;
      if (move == 0)
        inline_block(&cand, k);
      else
        cand.blocks[k].nbufargs = 0;
      if (try_finished(r, &cand)) {
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
static int pass_to_wait(R *r) {
  int any = 0;
  for (int i = 0; i < r->cur.nops && !r->err; i++) {
    const GenOp *o = &r->cur.ops[i];
    if ((o->kind != GEN_OP_MEMCPY && o->kind != GEN_OP_MEMSET && o->kind != GEN_OP_LAUNCH) ||
        !tok_used(&r->cur, o->tok))
      continue;
    GenCase cand;
    if (copy_cur(r, &cand))
      break;
    GenOp *m = &cand.ops[i];
    m->kind = GEN_OP_WAIT_ASYNC;
    memset(m->view, 0, sizeof m->view);
    m->buf = m->src = m->stream = -1;
    m->nargs = 0;
    m->args[0] = m->args[1] = m->args[2] = -1;
    m->value = 0;
    m->kernel = 0;
    any |= try_finished(r, &cand);
  }
  return any;
}

/* A host wait goes, its dependencies given to the later async ops of its context instead: the
 * order it gave them stays, one op fewer (a wait that only ordered the next op). */
static int pass_wait_to_deps(R *r) {
  int any = 0;
  for (int i = r->cur.nops - 1; i >= 0 && !r->err; i--) {
    const GenOp *w = &r->cur.ops[i];
    if (w->kind != GEN_OP_HOST_WAIT || w->ndeps == 0)
      continue;
    GenCase tmp, cand;
    if (copy_cur(r, &tmp))
      break;
    int ok = 1;
    for (int j = i + 1; j < tmp.nops && ok; j++) {
      GenOp *o = &tmp.ops[j];
      if (o->ctx != w->ctx || o->blk > 0 || o->tok < 0 || o->kind >= GEN_OP_HOST_WAIT)
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
      any |= try_cand(r, &cand);
    else if (rc == AF_ENOMEM)
      r->err = AF_ENOMEM;
  }
  return any;
}

/* Buffers of i32 instead of i16, i64 or f32 (all at once, then one by one); a memcpy, memset or
 * launch on its whole buffers instead of on views of them; a buffer allocated with its dynamic
 * shape instead of a static one cast to it. */
static int pass_unview(R *r) {
  int any = 0;
  for (int b = -1; b < r->cur.nbufs && !r->err; b++) { /* i32 buffers: all (-1), then one */
    int typed = 0;
    for (int q = 0; q < r->cur.nbufs; q++)
      typed += (b < 0 || q == b) && r->cur.bufs[q].elem != GEN_ELEM_I32;
    if (typed == 0 || (b < 0 && typed == 1))
      continue;
    GenCase cand;
    if (copy_cur(r, &cand))
      break;
    for (int q = 0; q < cand.nbufs; q++)
      if (b < 0 || q == b)
        cand.bufs[q].elem = GEN_ELEM_I32;
    any |= try_finished(r, &cand);
  }
  for (int b = 0; b < r->cur.nbufs && !r->err; b++) {
    if (!r->cur.bufs[b].stat)
      continue;
    GenCase cand;
    if (copy_cur(r, &cand))
      break;
    cand.bufs[b].stat = 0;
    any |= try_finished(r, &cand);
  }
  for (int i = 0; i < r->cur.nops && !r->err; i++) {
    const GenOp *o = &r->cur.ops[i];
    if (!gen_op_has_view(o))
      continue;
    GenCase cand;
    if (copy_cur(r, &cand))
      break;
    memset(cand.ops[i].view, 0, sizeof cand.ops[i].view);
    any |= try_finished(r, &cand);
  }
  return any;
}

/* Simpler ops: a launch becomes a kernel reading fewer buffers, or a memset of what it writes
 * (it reads nothing then), a memcpy a memset, an async alloc a synchronous one, an await of an
 * unused value an await of the region's completion. */
static int pass_simplify(R *r) {
  int any = 0;
  for (int i = 0; i < r->cur.nops && !r->err; i++) {
    const GenOp *o = &r->cur.ops[i];
    int kind = o->kind;
    int launch = kind == GEN_OP_LAUNCH && o->nargs > 1;
    int alloc = kind == GEN_OP_ALLOC && o->async && o->mode == GEN_ALLOC_ASYNC;
    int await = kind == GEN_OP_AWAIT && o->vidx >= 0 && !tok_used(&r->cur, o->tok);
    int copy = kind == GEN_OP_MEMCPY && r->cur.bufs[o->buf].kind == GEN_BUF_DEVICE &&
               r->cur.bufs[o->buf].elem != GEN_ELEM_I64; /* a write that reads nothing */
    if (!launch && !alloc && !await && !copy)
      continue;
    GenCase cand;
    if (copy_cur(r, &cand))
      break;
    GenOp *m = &cand.ops[i];
    /* first a launch that reads less: af_fill (nothing), then af_transform of one input */
    int fewer = 0;
    for (int v = 0; launch && v < 3 && !fewer && !r->err; v++) {
      if ((v == 0 && m->kernel == KERNEL_FILL) || (v > 0 && m->kernel != KERNEL_COMBINE))
        continue;
      GenCase less;
      if (gen_case_copy(&less, &cand)) {
        r->err = AF_ENOMEM;
        break;
      }
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
      fewer = try_finished(r, &less);
    }
    if (fewer || r->err) {
      gen_case_free(&cand);
      any |= fewer;
      if (r->err)
        break;
      continue;
    }
    if (copy) {
      m->kind = GEN_OP_MEMSET;
      m->src = -1;
      m->value = 0;
      m->view[1][0] = m->view[1][1] = m->view[1][2] = 0;
    } else if (launch) { /* (the destination's view, if any, stays the memset's) */
      m->kind = GEN_OP_MEMSET;
      m->buf = m->args[0];
      m->src = -1;
      m->nargs = 0;
      memset(m->view[1], 0, sizeof m->view[1] * 2);
    } else if (alloc) {
      if (replace_tok(&cand, m->tok, m->deps, m->ndeps) != 0) {
        gen_case_free(&cand);
        continue;
      }
      m->async = 0;
      m->mode = GEN_ALLOC_SYNC;
      m->tok = -1;
      m->ndeps = 0;
    } else {
      m->vidx = -1;
      m->tok = -1;
    }
    any |= try_finished(r, &cand);
  }
  return any;
}

/* Drops a region's input or captured token (capture k >= GEN_MAX_REGION_IO): what depended on
 * it depends on nothing in its place, so the region that yields the value can go too. */
static int pass_region_io(R *r) {
  int any = 0;
  for (int g = 1; g < r->cur.nregions && !r->err; g++) {
    for (int k = 2 * GEN_MAX_REGION_IO - 1; k >= 0 && !r->err; k--) {
      const GenRegion *rg = &r->cur.regions[g];
      int cap = k >= GEN_MAX_REGION_IO, q = cap ? k - GEN_MAX_REGION_IO : k;
      if (q >= (cap ? rg->ncaptures : rg->ninputs))
        continue;
      GenCase cand;
      if (copy_cur(r, &cand))
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
      any |= try_finished(r, &cand);
    }
  }
  return any;
}

/* A region input becomes a capture of an await of the same value, placed just before the
 * region's execute op: the region then has what it needs from its parent only, and can be
 * flattened into it (the await orders more, never less). */
static int pass_inputs_to_captures(R *r) {
  int any = 0;
  for (int g = 1; g < r->cur.nregions && !r->err; g++) {
    const GenRegion *rg = &r->cur.regions[g];
    if (rg->ninputs == 0 || rg->ncaptures >= GEN_MAX_REGION_IO)
      continue;
    GenCase cand;
    if (copy_cur(r, &cand))
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
    any |= try_finished(r, &cand);
  }
  return any;
}

static int pass_shrink(R *r) {
  int any = 0;
  /* every buffer to one element at once, then one by one */
  for (int b = -1; b < r->cur.nbufs && !r->err; b++) {
    GenCase cand;
    if (copy_cur(r, &cand))
      break;
    int changed = 0;
    for (int q = 0; q < cand.nbufs; q++)
      if ((b < 0 || q == b) && cand.bufs[q].n > 1) {
        cand.bufs[q].n = 1;
        changed = 1;
      }
    if (!changed) {
      gen_case_free(&cand);
      continue;
    }
    int ok = try_cand(r, &cand);
    any |= ok;
    if (ok && b < 0)
      break;
  }
  static const int spins[] = {0, 1, 4, 16};
  for (size_t k = 0; k < sizeof spins / sizeof spins[0] && !r->err; k++) {
    if (r->cur.spin <= spins[k])
      break;
    GenCase cand;
    if (copy_cur(r, &cand))
      break;
    cand.spin = spins[k];
    if (try_cand(r, &cand)) {
      any = 1;
      break;
    }
  }
  return any;
}

int reduce_case_opts(const GenCase *in, ReduceTest test, void *ctx, const ReduceOpts *o,
                     GenCase *out, ReduceStats *st, AfErr *err) {
  memset(st, 0, sizeof *st);
  st->from_ops = in->nops;
  R r;
  memset(&r, 0, sizeof r);
  r.test = test;
  r.ctx = ctx;
  r.st = st;
  if (o)
    r.o = *o;
  if (gen_case_copy(&r.cur, in))
    return af_err_set(err, AF_ENOMEM, "out of memory");
  for (int round = 0; round < 8 && !r.err; round++) {
    int any = pass_remove(&r);
    any |= pass_flatten(&r);
    any |= pass_inline_blocks(&r);
    any |= pass_to_wait(&r);
    any |= pass_wait_to_deps(&r);
    any |= pass_unview(&r);
    if (r.cur.nops <= 24) /* (n^2 candidates: once the case is small) */
      any |= pass_merge_bufs(&r);
    any |= pass_simplify(&r);
    any |= pass_yields(&r);
    any |= pass_region_io(&r);
    any |= pass_inputs_to_captures(&r);
    any |= pass_flatten(&r);
    any |= pass_remove(&r);
    any |= pass_deps(&r);
    any |= pass_shrink(&r);
    if (!any)
      break;
  }
  st->to_ops = r.cur.nops;
  *out = r.cur;
  if (r.err == STOPPED) {
    st->stopped = 1;
    r.err = 0;
  }
  if (r.err) {
    int rc = r.err == AF_ENOMEM ? AF_ENOMEM : r.err;
    return af_err_set(err, rc, "reduction stopped: %s",
                      rc == AF_ENOMEM ? "out of memory" : "the test failed");
  }
  return 0;
}

int reduce_case(const GenCase *in, ReduceTest test, void *ctx, GenCase *out, ReduceStats *st,
                AfErr *err) {
  return reduce_case_opts(in, test, ctx, NULL, out, st, err);
}
