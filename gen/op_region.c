/*
 * op_region.c: async.execute regions and their awaits: each kind's class (gen_int.h). A region
 * consumes values of earlier regions and captures tokens of its parent; its body is any ops of
 * a context; it yields tokens as !async.value<!gpu.async.token>. The generator spawns it with
 * the buffers its parent lends (made quiescent first, or captured with the token they wait for),
 * closes it by awaiting its children, freeing what it allocated and yielding its buffers in
 * values, which the parent claims back when it awaits them.
 */
#include "gen_int.h"

#include "../kernels/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_value_ref(Parser *p, const char *s, int *region, int *vidx) {
  const char *dot = s ? strrchr(s, '.') : NULL;
  if (dot == NULL)
    return gen__perr(p, AF_EPARSE, "bad region value \"%s\" (expected rN.K)%s", s ? s : "", NULL);
  char name[128];
  size_t len = (size_t)(dot - s);
  if (len >= sizeof name)
    return gen__perr(p, AF_EPARSE, "region name too long%s%s", NULL, NULL);
  memcpy(name, s, len);
  name[len] = '\0';
  char *end;
  long k = strtol(dot + 1, &end, 10);
  if (*end != '\0' || k < 0 || k >= GEN_MAX_REGION_IO)
    return gen__perr(p, AF_EPARSE, "bad value index in \"%s\"%s", s, NULL);
  int r = gen__nm_find(&p->regions, name);
  if (r < 0)
    return gen__perr(p, AF_EINVALID, "region %s is used before its execute op%s", name, NULL);
  *region = r;
  *vidx = (int)k;
  return 0;
}

/* An execute op: its region, inputs, body (recursively) and yields. Adds the op itself. */
static int parse_region(Parser *p, const cJSON *o, int ctx, GenOp *opp) {
  int rc;
  const char *rn = gen__jstr(o, "region");
  GenRegion g;
  memset(&g, 0, sizeof g);
  g.parent = ctx;
  g.exec_op = p->c->nops;
  int ridx = p->c->nregions;
  if (rn && gen__nm_find(&p->regions, rn) >= 0)
    return gen__perr(p, AF_EINVALID, "region %s is defined twice%s", rn, NULL);
  const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(o, "inputs");
  if (inputs && !cJSON_IsArray(inputs))
    return gen__perr(p, AF_EPARSE, "\"inputs\" must be an array%s%s", NULL, NULL);
  if (cJSON_GetArraySize(inputs) > GEN_MAX_REGION_IO)
    return gen__perr(p, AF_EINVALID, "too many region inputs (at most 4)%s%s", NULL, NULL);
  const cJSON *in;
  cJSON_ArrayForEach(in, inputs) {
    GenRegionInput *gi = &g.inputs[g.ninputs];
    rc = parse_value_ref(p, gen__jstr(in, "value"), &gi->region, &gi->vidx);
    if (rc)
      return rc;
    rc = gen__def_token(p, gen__jstr(in, "as"), -2 - ridx, &gi->tok);
    if (rc)
      return rc;
    g.ninputs++;
  }
  const cJSON *caps = cJSON_GetObjectItemCaseSensitive(o, "captures");
  if (caps && !cJSON_IsArray(caps))
    return gen__perr(p, AF_EPARSE, "\"captures\" must be an array%s%s", NULL, NULL);
  if (caps && p->c->version < 2)
    return gen__perr(p, AF_EINVALID, "\"captures\" needs case format version 2%s%s", NULL, NULL);
  if (cJSON_GetArraySize(caps) > GEN_MAX_REGION_IO)
    return gen__perr(p, AF_EINVALID, "too many captured tokens (at most 4)%s%s", NULL, NULL);
  if ((rc = gen__parse_bindings(p, caps, "a capture", -2 - ridx, g.captures, &g.ncaptures)))
    return rc;
  opp->region = ridx;
  if (gen_case_add_region(p->c, &g) < 0 || gen_case_add_op(p->c, opp) < 0)
    return af_err_set(p->err, AF_ENOMEM, "out of memory");
  char autoname[32];
  snprintf(autoname, sizeof autoname, "r%d", ridx);
  if (gen__nm_put(&p->regions, rn ? rn : autoname, ridx))
    return af_err_set(p->err, AF_ENOMEM, "out of memory");
  const cJSON *body = cJSON_GetObjectItemCaseSensitive(o, "body");
  if (body && !cJSON_IsArray(body))
    return gen__perr(p, AF_EPARSE, "\"body\" must be an array of ops%s%s", NULL, NULL);
  if (body && (rc = p->body(p, body, ridx)))
    return rc;
  const cJSON *yields = cJSON_GetObjectItemCaseSensitive(o, "yields");
  if (yields && !cJSON_IsArray(yields))
    return gen__perr(p, AF_EPARSE, "\"yields\" must be an array of token names%s%s", NULL, NULL);
  if (cJSON_GetArraySize(yields) > GEN_MAX_REGION_IO)
    return gen__perr(p, AF_EINVALID, "too many yielded values (at most 4)%s%s", NULL, NULL);
  GenRegion *gr = &p->c->regions[ridx];
  const cJSON *y;
  cJSON_ArrayForEach(y, yields) {
    if (!cJSON_IsString(y))
      return gen__perr(p, AF_EPARSE, "\"yields\" must be an array of token names%s%s", NULL, NULL);
    rc = gen__use_token(p, y->valuestring, &gr->yields[gr->nyields]);
    if (rc)
      return rc;
    gr->nyields++;
  }
  return 0;
}

static int parse_execute(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  if (p->blk)
    return gen__perr(p, AF_EINVALID, "an execute inside a block body%s%s", NULL, NULL);
  return parse_region(p, o, ctx, op);
}

static int parse_await(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  (void)ctx;
  const char *v = gen__jstr(o, "value");
  if (v)
    return parse_value_ref(p, v, &op->region, &op->vidx);
  const char *rn = gen__jstr(o, "region");
  op->region = rn ? gen__nm_find(&p->regions, rn) : -1;
  if (op->region < 0)
    return gen__perr(p, AF_EINVALID, "await names no known region (\"value\" or \"region\")%s%s",
                     NULL, NULL);
  return 0;
}

static void put_execute(GenWriter *w, const GenOp *o, int depth) {
  AfBuf *b = w->b;
  const GenCase *c = w->c;
  const GenRegion *g = &c->regions[o->region];
  af_buf_printf(b, ", \"region\": \"r%d\", \"inputs\": [", o->region);
  for (int k = 0; k < g->ninputs; k++)
    af_buf_printf(b, "%s{\"value\": \"r%d.%d\", \"as\": \"t%d\"}", k ? ", " : "",
                  g->inputs[k].region, g->inputs[k].vidx, g->inputs[k].tok);
  if (g->ncaptures) { /* version 2 */
    af_buf_puts(b, "], \"captures\": [");
    gen__put_inputs(b, g->captures, g->ncaptures);
  }
  af_buf_puts(b, "], \"body\": [");
  if (w->body(w, g->first, g->last, o->region, 0, depth + 1)) {
    af_buf_puts(b, "\n");
    gen__indent(b, depth);
  }
  af_buf_puts(b, "], \"yields\": [");
  for (int k = 0; k < g->nyields; k++)
    af_buf_printf(b, "%s\"t%d\"", k ? ", " : "", g->yields[k]);
  af_buf_puts(b, "]");
}

static void put_await(GenWriter *w, const GenOp *o, int depth) {
  AfBuf *b = w->b;
  (void)depth;
  if (o->vidx >= 0)
    af_buf_printf(b, ", \"value\": \"r%d.%d\"", o->region, o->vidx);
  else
    af_buf_printf(b, ", \"region\": \"r%d\"", o->region);
}

static int check_execute(V *v, int i) {
  const GenCase *c = v->c;
  int r = c->ops[i].region;
  if (r <= 0 || r >= c->nregions || c->regions[r].exec_op != i)
    return gen__vfail(v, i, "names region %d, which it does not define", r, 0);
  return 0;
}

static int check_await(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  int r = o->region;
  if (r <= 0 || r >= c->nregions || c->regions[r].exec_op >= i)
    return gen__vfail(v, i, "awaits region r%d before its execute op", r, 0);
  if (c->regions[r].parent != o->ctx)
    return gen__vfail(v, i, "awaits region r%d, which is spawned in another context (r%d)", r,
                      c->regions[r].parent);
  if (o->vidx >= c->regions[r].nyields)
    return gen__vfail(v, i, "awaits value %d of r%d, which yields fewer values", o->vidx, r);
  gen__edge(v, END(v, r), i);
  v->awaited[r] = 1;
  return 0;
}

int gen__visit_region_start(V *v, int r) {
  const GenCase *c = v->c;
  const GenRegion *g = &c->regions[r];
  int node = START(v, r);
  gen__edge(v, g->exec_op, node);
  for (int k = 0; k < g->ninputs; k++) {
    const GenRegionInput *in = &g->inputs[k];
    if (in->region <= 0 || in->region >= r || c->regions[in->region].exec_op >= g->exec_op)
      return gen__vfail(v, g->exec_op,
                        "region r%d consumes a value of r%d, which is not spawned "
                        "before it",
                        r, in->region);
    if (c->regions[in->region].parent != g->parent)
      return gen__vfail(v, g->exec_op,
                        "region r%d consumes a value of r%d, spawned in another context", r,
                        in->region);
    if (in->vidx < 0 || in->vidx >= c->regions[in->region].nyields)
      return gen__vfail(v, g->exec_op,
                        "region r%d consumes value %d, which its source does not yield", r,
                        in->vidx);
    gen__edge(v, END(v, in->region), node);
    int src = v->tok_src[c->regions[in->region].yields[in->vidx]];
    int rc = gen__define_token(v, g->exec_op, in->tok, src, r);
    if (rc)
      return rc;
  }
  for (int k = 0; k < g->ncaptures; k++) {
    int t = g->captures[k].outer;
    if (t < 0 || t >= c->ntoks || v->tok_src[t] == -1)
      return gen__vfail(v, g->exec_op,
                        "region r%d captures token t%d, which is not defined before it", r, t);
    if (v->tok_ctx[t] != g->parent || v->tok_blk[t] != 0)
      return gen__vfail(
          v, g->exec_op,
          "region r%d captures token t%d of another context (a nested region captures "
          "what its parent captured)",
          r, t);
    int rc = gen__define_token(v, g->exec_op, g->captures[k].tok, v->tok_src[t], r);
    if (rc)
      return rc;
  }
  v->last_sync[r] = node;
  return 0;
}

int gen__visit_region_end(V *v, int r) {
  const GenRegion *g = &v->c->regions[r];
  for (int k = 0; k < g->nyields; k++) {
    int t = g->yields[k];
    if (t < 0 || t >= v->c->ntoks || v->tok_src[t] == -1 || v->tok_ctx[t] != r ||
        v->tok_blk[t] != 0)
      return gen__vfail(v, g->exec_op, "region r%d yields token t%d, which it does not define", r,
                        t);
  }
  gen__edge(v, v->last_sync[r], END(v, r));
  return 0;
}

static int render_execute(R *r, int i, int depth) {
  const GenCase *c = r->c;
  const GenOp *o = &c->ops[i];
  const GenRegion *g = &c->regions[o->region];
  AfBuf *b = r->b;
  gen__ind(r, depth);
  af_buf_printf(b, "%%r%d", o->region);
  for (int v = 0; v < g->nyields; v++)
    af_buf_printf(b, ", %%r%d_%d", o->region, v);
  af_buf_puts(b, " = async.execute");
  if (g->ninputs) {
    af_buf_puts(b, " (");
    for (int k = 0; k < g->ninputs; k++)
      af_buf_printf(b, "%s%%r%d_%d as %%t%d : !async.value<!gpu.async.token>", k ? ", " : "",
                    g->inputs[k].region, g->inputs[k].vidx, g->inputs[k].tok);
    af_buf_puts(b, ")");
  }
  if (g->nyields) {
    af_buf_puts(b, " -> (");
    for (int v = 0; v < g->nyields; v++)
      af_buf_printf(b, "%s!async.value<!gpu.async.token>", v ? ", " : "");
    af_buf_puts(b, ")");
  }
  af_buf_puts(b, " {\n");
  r->body(r, g->first, g->last, o->region, 0, depth + 1);
  gen__ind(r, depth + 1);
  af_buf_puts(b, "async.yield");
  for (int v = 0; v < g->nyields; v++)
    af_buf_printf(b, "%s%%t%d", v ? ", " : " ", gen__tok_value(c, g->yields[v]));
  if (g->nyields) {
    af_buf_puts(b, " : ");
    for (int v = 0; v < g->nyields; v++)
      af_buf_printf(b, "%s!gpu.async.token", v ? ", " : "");
  }
  af_buf_puts(b, "\n");
  if (r->map) /* the yield's calls (its events, the streams it ends) are the region op's */
    gen__map_line(r, gen__lines_so_far(r), i);
  gen__ind(r, depth);
  af_buf_puts(b, "}\n");
  return 1;
}

static int render_await(R *r, int i, int depth) {
  const GenOp *o = &r->c->ops[i];
  gen__ind(r, depth);
  if (o->vidx >= 0)
    af_buf_printf(r->b, "%%t%d = async.await %%r%d_%d : !async.value<!gpu.async.token>\n", o->tok,
                  o->region, o->vidx);
  else
    af_buf_printf(r->b, "async.await %%r%d : !async.token\n", o->region);
  return 0;
}

static void claim(G *g, Ctx *x, Value *v, int tok) {
  if (v->claimed)
    return;
  v->claimed = 1;
  for (int i = 0; i < v->nbufs; i++) {
    BState *st = &g->bs[v->bufs[i]];
    st->owner = x->id;
    st->writer = tok;
    st->nreaders = 0;
  }
}

static Value *find_value(G *g, int region, int vidx) {
  for (int i = 0; i < g->nvals; i++)
    if (g->vals[i].region == region && g->vals[i].vidx == vidx)
      return &g->vals[i];
  return NULL;
}

/* Awaits child region r from ctx x: a value (claiming its buffers) or its completion. */
void gen__await_region(G *g, Ctx *x, int r, int want_value) {
  const GenRegion *gr = &g->c->regions[r];
  GenOp o = gen_op_blank(GEN_OP_AWAIT, x->id);
  o.region = r;
  int vidx = -1;
  if (want_value && gr->nyields > 0) {
    /* prefer a value that still carries buffers */
    for (int k = 0; k < gr->nyields && vidx < 0; k++) {
      Value *v = find_value(g, r, k);
      if (v && !v->claimed && v->nbufs)
        vidx = k;
    }
    if (vidx < 0)
      vidx = (int)af_rng_below(&g->rng, (uint32_t)gr->nyields);
  }
  o.vidx = vidx;
  if (vidx >= 0) {
    o.tok = gen__new_token(g, x, NULL, 0);
    if (o.tok < 0 || gen__emit(g, &o) < 0)
      return;
    Value *v = find_value(g, r, vidx);
    if (v)
      claim(g, x, v, o.tok);
  } else if (gen__emit(g, &o) >= 0) {
    Value *v = find_value(g, r, -1); /* (what it gave back with its completion) */
    if (v)
      claim(g, x, v, -1);
  }
}

void gen__drop_child(Ctx *x, int r) {
  for (int i = 0; i < x->nchildren; i++)
    if (x->children[i] == r) {
      x->children[i] = x->children[--x->nchildren];
      return;
    }
}

void gen__op_await(G *g, Ctx *x) {
  if (x->nchildren == 0)
    return;
  int r = x->children[af_rng_below(&g->rng, (uint32_t)x->nchildren)];
  gen__await_region(g, x, r, af_rng_chance(&g->rng, 80));
  gen__drop_child(x, r);
}

/* Values of x's children that still carry buffers nobody claimed: await them again so the
 * buffers come back to x. */
void gen__claim_leftovers(G *g, Ctx *x) {
  for (int i = 0; i < g->nvals && g->rc == 0; i++) {
    Value *v = &g->vals[i];
    if (!v->claimed && v->nbufs && g->c->regions[v->region].parent == x->id) {
      GenOp o = gen_op_blank(GEN_OP_AWAIT, x->id);
      o.region = v->region;
      o.vidx = v->vidx;
      o.tok = v->vidx >= 0 ? gen__new_token(g, x, NULL, 0) : -1; /* (-1: its completion) */
      if ((v->vidx >= 0 && o.tok < 0) || gen__emit(g, &o) < 0)
        return;
      claim(g, x, v, o.tok);
    }
  }
}

/* yield avoided: the buffers the region still owns go back with its completion instead (the
 * work passed, not a token): a host wait in the region on what they wait for, then a value of
 * no token (vidx -1) that the parent's async.await of the region claims, nothing pending. */
static void give_back(G *g, Ctx *x, int region, const int *owned, int n) {
  if (n == 0)
    return;
  TSet s;
  s.n = 0;
  for (int i = 0; i < n; i++)
    gen__need_for(g, x, &s, owned[i], 1);
  if (s.n)
    gen__host_wait(g, x, &s);
  if (g->rc || af_grow((void **)&g->vals, &g->capvals, g->nvals + 1, sizeof(Value))) {
    gen__oom(g);
    return;
  }
  Value *v = &g->vals[g->nvals++];
  memset(v, 0, sizeof *v);
  v->region = region;
  v->vidx = -1;
  v->bufs = af_malloc(sizeof(int) * (size_t)n);
  if (v->bufs == NULL) {
    gen__oom(g);
    return;
  }
  for (int i = 0; i < n; i++) {
    v->bufs[v->nbufs++] = owned[i];
    g->bs[owned[i]].owner = -1;
  }
}

/* Closes region ctx x: awaits its children, frees its private buffers, yields values. */
static void close_region(G *g, Ctx *x, int region) {
  while (x->nchildren && g->rc == 0) {
    int r = x->children[0];
    gen__await_region(g, x, r, 1);
    gen__drop_child(x, r);
  }
  gen__close_streams(g, x);
  gen__claim_leftovers(g, x);
  for (int i = 0; i < g->nalive && g->rc == 0; i++) {
    int b = g->alive[i];
    if (g->bs[b].owner == x->id && g->bs[b].region_private) {
      int before = g->nalive;
      gen__op_dealloc(g, x, b);
      i -= g->nalive < before; /* (it died: the next buffer took its place) */
    }
  }
  int owned[256], n = 0;
  for (int i = 0; i < g->nalive && n < 256; i++)
    if (g->bs[g->alive[i]].owner == x->id)
      owned[n++] = g->alive[i];
  int nv = n == 0 ? (x->nrecent && af_rng_chance(&g->rng, 50) ? 1 : 0)
                  : 1 + (int)af_rng_below(&g->rng, n < 2 ? 1 : 2);
  if (gen__avoids_construct(g, GEN_CONSTRUCT_YIELD)) {
    give_back(g, x, region, owned, n);
    nv = 0;
  }
  int group[256];
  for (int i = 0; i < n && nv > 0; i++) /* (none: yield avoided, given back above) */
    group[i] = (int)af_rng_below(&g->rng, (uint32_t)nv);
  g->c->regions[region].nyields = 0;
  for (int k = 0; k < nv && g->rc == 0; k++) {
    TSet s;
    s.n = 0;
    int nb = 0;
    for (int i = 0; i < n; i++)
      if (group[i] == k) {
        gen__need_for(g, x, &s, owned[i], 1);
        nb++;
      }
    gen__ts_minimize(g, &s);
    int t;
    if (s.n == 0 && nb == 0 && x->nrecent)
      t = x->recent[x->nrecent - 1];
    else if (s.n == 1 && af_rng_chance(&g->rng, 85))
      t = s.t[0];
    else {
      int deps[GEN_MAX_DEPS];
      int nd = gen__finalize_deps(g, x, &s, 0, deps);
      if (nd < 0)
        return;
      t = gen__join(g, x, deps, nd);
    }
    if (t < 0)
      return;
    GenRegion *out = &g->c->regions[region];
    out->yields[out->nyields++] = t;
    if (af_grow((void **)&g->vals, &g->capvals, g->nvals + 1, sizeof(Value))) {
      gen__oom(g);
      return;
    }
    Value *v = &g->vals[g->nvals++];
    memset(v, 0, sizeof *v);
    v->region = region;
    v->vidx = k;
    v->bufs = nb ? af_malloc(sizeof(int) * (size_t)nb) : NULL;
    if (nb && v->bufs == NULL) {
      gen__oom(g);
      return;
    }
    for (int i = 0; i < n; i++)
      if (group[i] == k) {
        v->bufs[v->nbufs++] = owned[i];
        g->bs[owned[i]].owner = -1;
      }
  }
  gen__end_streams(g, x, 0, -1); /* (after the yields, which end theirs) */
}

/* The region's inputs: unclaimed values of this context's children, to chain regions. */
static void pick_inputs(G *g, Ctx *x, GenRegion *gr) {
  if (gen__avoids_construct(g, GEN_CONSTRUCT_REGION_INPUT))
    return;
  for (int i = 0; i < g->nvals && gr->ninputs < 2; i++) {
    Value *v = &g->vals[i];
    if (!v->claimed && v->vidx >= 0 && g->c->regions[v->region].parent == x->id &&
        af_rng_chance(&g->rng, 50)) {
      gr->inputs[gr->ninputs].region = v->region;
      gr->inputs[gr->ninputs].vidx = v->vidx;
      gr->ninputs++;
    }
  }
}

/* The buffers lent to the region (up to 3, a host buffer first sometimes); returns how many. */
static int pick_lent(G *g, Ctx *x, int lend[4]) {
  int nl = 0;
  int want = 1 + (int)af_rng_below(&g->rng, 3);
  int hb = gen__pick_buf(g, x, GEN_BUF_HOST, 0, -1, -1, ANY_ELEM);
  if (hb >= 0 && af_rng_chance(&g->rng, 60))
    lend[nl++] = hb;
  while (nl < want) {
    int b = gen__pick_buf(g, x, -1, 0, nl ? lend[0] : -1, nl > 1 ? lend[1] : -1, ANY_ELEM);
    if (b < 0 || (nl > 2 && b == lend[2]))
      break;
    lend[nl++] = b;
  }
  return nl;
}

/* Makes the lent buffers quiescent: what they still wait for becomes a host wait, or (drawn
 * only when captures are on) one token the region captures and its ops on those buffers depend
 * on, which this returns (-1: none). */
static int settle_lent(G *g, Ctx *x, const int *lend, int nl) {
  TSet s;
  s.n = 0;
  for (int i = 0; i < nl; i++)
    gen__need_for(g, x, &s, lend[i], 1);
  int lent_tok = -1;
  if (s.n)
    gen__ts_minimize(g, &s);
  if (s.n && g->cfg.capture_pct > 0 && af_rng_chance(&g->rng, g->cfg.capture_pct) &&
      s.n <= g->cfg.max_deps)
    lent_tok = s.n == 1 ? s.t[0] : gen__join(g, x, s.t, s.n);
  else if (s.n)
    gen__host_wait(g, x, &s);
  return lent_tok;
}

/* Region r's input tokens, each claiming the value it chains; 0, or -1 on failure. */
static int add_inputs(G *g, Ctx *child, int r, const GenRegion *gr) {
  for (int k = 0; k < gr->ninputs; k++) {
    int t = gen__new_token(g, child, NULL, 0);
    if (t < 0)
      return -1;
    g->c->regions[r].inputs[k].tok = t;
    Value *v = find_value(g, gr->inputs[k].region, gr->inputs[k].vidx);
    if (v)
      claim(g, child, v, t);
  }
  return 0;
}

/* Region r's captures: lent_tok (returned as the region names it in *lent_in) and, drawn only
 * when captures are on, tokens of this context that the region uses directly; 0, or -1. */
static int add_captures(G *g, Ctx *x, Ctx *child, int r, int lent_tok, int *lent_in) {
  *lent_in = -1;
  if (lent_tok >= 0) {
    *lent_in = gen__new_token(g, child, &lent_tok, 1);
    if (*lent_in < 0)
      return -1;
    g->tok_root[*lent_in] = g->tok_root[lent_tok];
    GenRegion *cr = &g->c->regions[r];
    cr->captures[cr->ncaptures].outer = lent_tok;
    cr->captures[cr->ncaptures++].tok = *lent_in;
  }
  if (!(g->cfg.capture_pct > 0 && x->nrecent > 0 && af_rng_chance(&g->rng, g->cfg.capture_pct)))
    return 0;
  int ncap = 1 + (int)af_rng_below(&g->rng, 2);
  for (int k = 0; k < ncap && g->rc == 0 && g->c->regions[r].ncaptures < GEN_MAX_REGION_IO; k++) {
    int outer = x->recent[af_rng_below(&g->rng, (uint32_t)x->nrecent)];
    if (gen__avoids_construct(g, GEN_CONSTRUCT_WAITED) && gen__covered(g, x->id, outer))
      continue; /* (host-wait avoided: not a token a host wait completed) */
    GenRegion *cr = &g->c->regions[r];
    int dup = 0;
    for (int j = 0; j < cr->ncaptures; j++)
      dup |= cr->captures[j].outer == outer;
    if (dup)
      continue;
    int t = gen__new_token(g, child, &outer, 1);
    if (t < 0)
      return -1;
    g->tok_root[t] = g->tok_root[outer]; /* (the same value: its stream) */
    cr->captures[cr->ncaptures].outer = outer;
    cr->captures[cr->ncaptures].tok = t;
    cr->ncaptures++;
  }
  return 0;
}

void gen__op_execute(G *g, Ctx *x, int budget) {
  if (x->depth >= g->cfg.max_nesting)
    return;
  GenRegion gr;
  memset(&gr, 0, sizeof gr);
  gr.parent = x->id;
  pick_inputs(g, x, &gr);
  int lend[4];
  int nl = pick_lent(g, x, lend);
  int lent_tok = settle_lent(g, x, lend, nl);
  if (g->rc)
    return;
  GenOp o = gen_op_blank(GEN_OP_EXECUTE, x->id);
  gr.exec_op = g->c->nops;
  int r = gen_case_add_region(g->c, &gr);
  if (r < 0 || gen__grow_tokens(g, g->ntok + 1)) {
    gen__oom(g);
    return;
  }
  o.region = r;
  if (gen__emit(g, &o) < 0)
    return;
  /* (steered: what the host completed before it spawned the region is complete in it too) */
  if (gen__steered(g))
    memcpy(gen__done_row(g, r), gen__done_row(g, x->id), sizeof(uint64_t) * (size_t)g->words);
  else
    memset(gen__done_row(g, r), 0, sizeof(uint64_t) * (size_t)g->words);
  Ctx child;
  memset(&child, 0, sizeof child);
  child.id = r;
  child.depth = x->depth + 1;
  int lent_in; /* lent_tok as the region names it */
  if (add_inputs(g, &child, r, &gr) < 0 || add_captures(g, x, &child, r, lent_tok, &lent_in) < 0)
    return;
  for (int i = 0; i < nl; i++) {
    BState *st = &g->bs[lend[i]];
    st->owner = r;
    st->writer = lent_in; /* -1 after a host wait: nothing pending */
    st->nreaders = 0;
  }
  g->gen_body(g, &child, budget);
  close_region(g, &child, r);
  af_free(child.children);
  if (g->rc == 0 &&
      af_grow((void **)&x->children, &x->capchildren, x->nchildren + 1, sizeof(int)) == 0)
    x->children[x->nchildren++] = r;
  else
    gen__oom(g);
}

/* ---- the classes ---- */

const GenOpClass gen__class_execute = {parse_execute, put_execute, check_execute, render_execute,
                                       NULL};
const GenOpClass gen__class_await = {parse_await, put_await, check_await, render_await,
                                     gen__op_await};
