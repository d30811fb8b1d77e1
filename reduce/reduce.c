/*
 * reduce.c: delta debugging over a Case (see reduce.h).
 */
#include "reduce.h"

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

typedef struct Fwd {
  int n;
  int32_t t[GEN_MAX_DEPS];
} Fwd;

static int in_region(const GenCase *c, int i, int r) {
  for (int x = c->ops[i].ctx, guard = 0; x > 0 && guard <= c->nregions;
       x = c->regions[x].parent, guard++)
    if (x == r)
      return 1;
  return 0;
}

static int add_tok(Fwd *f, int32_t t) {
  for (int k = 0; k < f->n; k++)
    if (f->t[k] == t)
      return 0;
  if (f->n == GEN_MAX_DEPS)
    return -1;
  f->t[f->n++] = t;
  return 0;
}

/* The op's buffer references, for renumbering: pointers into o. */
static int buf_refs(GenOp *o, int32_t **refs) {
  int n = 0;
  switch (o->kind) {
  case GEN_OP_ALLOC:
  case GEN_OP_DEALLOC:
  case GEN_OP_MEMSET:
  case GEN_OP_OBSERVE:
    refs[n++] = &o->buf;
    break;
  case GEN_OP_MEMCPY:
    refs[n++] = &o->buf;
    refs[n++] = &o->src;
    break;
  case GEN_OP_LAUNCH:
    for (int k = 0; k < o->nargs && k < 3; k++)
      refs[n++] = &o->args[k];
    break;
  default:
    break;
  }
  return n;
}

/* Adds to f token t, or, when t's op is gone, the tokens it forwards to. -1 when f is full. */
static int add_live(Fwd *f, const Fwd *fwd, const uint8_t *alive, int32_t t) {
  if (alive[t])
    return add_tok(f, t);
  for (int q = 0; q < fwd[t].n; q++)
    if (add_tok(f, fwd[t].t[q]))
      return -1;
  return 0;
}

/* The op that creates explicit stream s, or -1. */
static int stream_creator(const GenCase *c, int s) {
  for (int i = 0; i < c->nops; i++)
    if (c->ops[i].kind == GEN_OP_STREAM_CREATE && c->ops[i].stream == s)
      return i;
  return -1;
}

/* A dropped stream_create or stream_destroy takes the whole stream with it: its other stream
 * ops go, and its launches stay, on no explicit stream (add_ops). */
static void expand_stream_drops(const GenCase *c, uint8_t *drop) {
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    if (!drop[i] || (o->kind != GEN_OP_STREAM_CREATE && o->kind != GEN_OP_STREAM_DESTROY))
      continue;
    for (int j = 0; j < c->nops; j++)
      if (c->ops[j].kind >= GEN_OP_STREAM_CREATE && c->ops[j].stream == o->stream)
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
    int n = buf_refs(&o, refs);
    for (int q = 0; q < n; q++)
      if (*refs[q] >= 0 && *refs[q] < c->nbufs)
        b->newbuf[*refs[q]] = 1;
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
    if (o.kind != GEN_OP_ALLOC && o.kind != GEN_OP_DEALLOC && o.kind != GEN_OP_MEMSET &&
        o.kind != GEN_OP_OBSERVE && o.kind != GEN_OP_MEMCPY)
      o.buf = -1;
    if (o.kind != GEN_OP_MEMCPY)
      o.src = -1;
    if (o.kind == GEN_OP_LAUNCH && o.stream >= 0) { /* its stream is gone: on none */
      int cr = stream_creator(c, o.stream);
      if (cr < 0 || b->newop[cr] < 0)
        o.stream = -1;
    }
    if (o.stream >= 0 && o.stream < c->nstreams) { /* numbered in order of appearance */
      if (b->newstream[o.stream] < 0)
        b->newstream[o.stream] = b->nstreams++;
      o.stream = b->newstream[o.stream];
    }
    int32_t *refs[4];
    int n = buf_refs(&o, refs);
    for (int q = 0; q < n; q++)
      *refs[q] = b->newbuf[*refs[q]];
    if (o.kind == GEN_OP_EXECUTE || o.kind == GEN_OP_AWAIT) {
      if (b->newr[o.region] <= 0)
        return 1;
      o.region = b->newr[o.region];
    }
    int idx = gen_case_add_op(b->out, &o);
    if (idx < 0)
      return AF_ENOMEM;
    if (o.kind == GEN_OP_EXECUTE)
      b->out->regions[o.region].exec_op = idx;
  }
  return 0;
}

/* c without the ops marked in drop[] (expanded here to what they take with them), with region
 * `flatten` (0: none) inlined into its parent. Returns 0 and fills *out (initialized), 1 when
 * no such case can be made, or AF_ENOMEM (then *out holds nothing to free). */
static int build(const GenCase *c, uint8_t *drop, int flatten, GenCase *out) {
  gen_case_init(out);
  int nr = c->nregions, rc = 1;
  Build b = {c, drop, flatten, out, NULL, NULL, NULL, NULL, NULL, NULL, 0};
  b.newr = calloc((size_t)(nr > 0 ? nr : 1), sizeof *b.newr);
  b.fwd = calloc((size_t)(c->ntoks > 0 ? c->ntoks : 1), sizeof *b.fwd);
  b.alive = calloc((size_t)(c->ntoks > 0 ? c->ntoks : 1), 1);
  b.newop = calloc((size_t)(c->nops > 0 ? c->nops : 1), sizeof *b.newop);
  b.newbuf = calloc((size_t)(c->nbufs > 0 ? c->nbufs : 1), sizeof *b.newbuf);
  b.newstream = malloc(sizeof *b.newstream * (size_t)(c->nstreams + 1));
  if (!b.newr || !b.fwd || !b.alive || !b.newop || !b.newbuf || !b.newstream) {
    rc = AF_ENOMEM;
    goto done;
  }
  for (int s = 0; s < c->nstreams; s++)
    b.newstream[s] = -1;
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
      (rc = add_ops(&b)) != 0)
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
  return rc;
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
  int rc = build(&r->cur, drop, 0, &cand);
  free(drop);
  if (rc == AF_ENOMEM)
    r->err = AF_ENOMEM;
  if (rc != 0) {
    r->st->invalid++;
    return 0;
  }
  return try_cand(r, &cand);
}

/* Evaluates cands[0..n) with the batch test, split among o.jobs child processes. */
static int eval_batch(R *r, const GenCase *const *cands, int n, int *hit) {
  int jobs = r->o.jobs > 1 ? r->o.jobs : 1;
  if (jobs > n)
    jobs = n;
  if (jobs <= 1)
    return r->o.batch_test(cands, n, hit, r->ctx);
  int fds[64][2];
  pid_t pids[64];
  if (jobs > 64)
    jobs = 64;
  int per = (n + jobs - 1) / jobs, started = 0, rc = 0;
  for (int j = 0; j < jobs; j++) {
    int from = j * per, cnt = n - from < per ? n - from : per;
    if (cnt <= 0)
      break;
    if (pipe(fds[j]) != 0) {
      rc = AF_EIO;
      break;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
      close(fds[j][0]);
      close(fds[j][1]);
      rc = AF_EIO;
      break;
    }
    if (pid == 0) { /* a slice of the batch; the answers go back through the pipe */
      close(fds[j][0]);
      int out[1024];
      int crc = cnt <= 1024 ? r->o.batch_test(cands + from, cnt, out, r->ctx) : AF_EINVALID;
      unsigned char buf[1025];
      buf[0] = crc == 0 ? 0 : 1;
      for (int i = 0; i < cnt && crc == 0; i++)
        buf[1 + i] = (unsigned char)out[i];
      ssize_t w = write(fds[j][1], buf, (size_t)cnt + 1);
      _exit(w == (ssize_t)cnt + 1 ? 0 : 1);
    }
    close(fds[j][1]);
    pids[j] = pid;
    started++;
  }
  for (int j = 0; j < started; j++) {
    int from = j * per, cnt = n - from < per ? n - from : per;
    unsigned char buf[1025];
    ssize_t got = 0, k;
    while (got < cnt + 1 && (k = read(fds[j][0], buf + got, (size_t)(cnt + 1 - got))) > 0)
      got += k;
    close(fds[j][0]);
    int st;
    waitpid(pids[j], &st, 0);
    if (got != cnt + 1 || buf[0] != 0) {
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
    int rc = build(&r->cur, drop, 0, &cands[n]);
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
    int rc = build(&r->cur, drop, g, &cand);
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
      if (gen_case_copy(&cand, &r->cur)) {
        r->err = AF_ENOMEM;
        break;
      }
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
      if (gen_case_copy(&cand, &r->cur)) {
        r->err = AF_ENOMEM;
        break;
      }
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
      if (d != at && add_tok(&f, o->deps[d]))
        return -1;
    for (int q = 0; q < n; q++)
      if (add_tok(&f, deps[q]))
        return -1;
    o->ndeps = f.n;
    memcpy(o->deps, f.t, sizeof f.t);
  }
  for (int g = 1; g < c->nregions; g++)
    for (int v = 0; v < c->regions[g].nyields; v++)
      if (c->regions[g].yields[v] == t)
        return -1;
  return 0;
}

static int tok_used(const GenCase *c, int32_t t) {
  for (int i = 0; i < c->nops; i++)
    for (int d = 0; d < c->ops[i].ndeps; d++)
      if (c->ops[i].deps[d] == t)
        return 1;
  for (int g = 1; g < c->nregions; g++)
    for (int v = 0; v < c->regions[g].nyields; v++)
      if (c->regions[g].yields[v] == t)
        return 1;
  return 0;
}

/* Simpler ops: a launch becomes a memset of what it writes (it reads nothing then), an async
 * alloc a synchronous one, an await of an unused value an await of the region's completion. */
static int pass_simplify(R *r) {
  int any = 0;
  for (int i = 0; i < r->cur.nops && !r->err; i++) {
    const GenOp *o = &r->cur.ops[i];
    int kind = o->kind;
    int launch = kind == GEN_OP_LAUNCH && o->nargs > 1;
    int alloc = kind == GEN_OP_ALLOC && o->async && o->mode == GEN_ALLOC_ASYNC;
    int await = kind == GEN_OP_AWAIT && o->vidx >= 0 && !tok_used(&r->cur, o->tok);
    if (!launch && !alloc && !await)
      continue;
    GenCase cand;
    if (gen_case_copy(&cand, &r->cur)) {
      r->err = AF_ENOMEM;
      break;
    }
    GenOp *m = &cand.ops[i];
    if (launch && m->kernel != KERNEL_FILL) { /* first a launch that reads nothing */
      GenCase fill;
      if (gen_case_copy(&fill, &cand)) {
        gen_case_free(&cand);
        r->err = AF_ENOMEM;
        break;
      }
      fill.ops[i].kernel = KERNEL_FILL;
      fill.ops[i].nargs = 1;
      fill.ops[i].args[1] = fill.ops[i].args[2] = -1;
      if (try_finished(r, &fill)) {
        gen_case_free(&cand);
        any = 1;
        continue;
      }
    }
    if (launch) {
      m->kind = GEN_OP_MEMSET;
      m->buf = m->args[0];
      m->src = -1;
      m->nargs = 0;
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
      if (gen_case_copy(&cand, &r->cur)) {
        r->err = AF_ENOMEM;
        break;
      }
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
    if (gen_case_copy(&cand, &r->cur)) {
      r->err = AF_ENOMEM;
      break;
    }
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
    if (gen_case_copy(&cand, &r->cur)) {
      r->err = AF_ENOMEM;
      break;
    }
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
    if (gen_case_copy(&cand, &r->cur)) {
      r->err = AF_ENOMEM;
      break;
    }
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
