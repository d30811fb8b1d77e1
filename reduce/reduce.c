/*
 * reduce.c: delta debugging over a Case (see reduce.h): the passes in their order, rounds until
 * none makes progress, and the ddmin pass with its candidates tested in batches, split among
 * child processes (rewrite.c has the passes that rewrite ops, build.c the candidates).
 */
#include "reduce_int.h"

#include "../base/proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
  return reduce__try_cand(r, &cand);
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
  if (r->o.deadline > 0 && reduce__mono() > r->o.deadline) {
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
      any |= reduce__try_cand(r, &cand);
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
      if (reduce__copy_cur(r, &cand))
        break;
      GenOp *o = &cand.ops[i];
      memmove(&o->deps[d], &o->deps[d + 1], sizeof(int32_t) * (size_t)(o->ndeps - d - 1));
      o->ndeps--;
      any |= reduce__try_cand(r, &cand);
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
      if (reduce__copy_cur(r, &cand))
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
      any |= reduce__try_cand(r, &cand);
    }
  }
  return any;
}

static int pass_shrink(R *r) {
  int any = 0;
  /* every buffer to one element at once, then one by one */
  for (int b = -1; b < r->cur.nbufs && !r->err; b++) {
    GenCase cand;
    if (reduce__copy_cur(r, &cand))
      break;
    int changed = 0;
    for (int q = 0; q < cand.nbufs; q++)
      if ((b < 0 || q == b) && cand.bufs[q].n > 1) {
        cand.bufs[q].n = 1;
        cand.bufs[q].rank = cand.bufs[q].dyn = 0; /* (one element: of rank 1) */
        changed = 1;
      }
    if (!changed) {
      gen_case_free(&cand);
      continue;
    }
    int ok = reduce__try_cand(r, &cand);
    any |= ok;
    if (ok && b < 0)
      break;
  }
  static const int spins[] = {0, 1, 4, 16};
  for (size_t k = 0; k < sizeof spins / sizeof spins[0] && !r->err; k++) {
    if (r->cur.spin <= spins[k])
      break;
    GenCase cand;
    if (reduce__copy_cur(r, &cand))
      break;
    cand.spin = spins[k];
    if (reduce__try_cand(r, &cand)) {
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
    any |= reduce__pass_inline_blocks(&r);
    any |= reduce__pass_to_wait(&r);
    any |= reduce__pass_wait_to_deps(&r);
    any |= reduce__pass_unview(&r);
    if (r.cur.nops <= 24) /* (n^2 candidates: once the case is small) */
      any |= reduce__pass_merge_bufs(&r);
    any |= reduce__pass_simplify(&r);
    any |= pass_yields(&r);
    any |= reduce__pass_region_io(&r);
    any |= reduce__pass_inputs_to_captures(&r);
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
