/*
 * op_block.c: call, if, for and branch blocks (version 2): each kind's class (gen_int.h). A block
 * runs inline in its context. A token crosses into its body as an input (a call's argument, a
 * for's iter_arg, a branch's block argument; if, for and branch bodies may also use their
 * context's tokens directly) and out of it as the op's token, bound to the token the body
 * yields.
 *
 * Generating one: the context's buffers stay its own, so the body's ops touch them like any op
 * of it. A call's body and a for's body see the context only through one input: a token joined,
 * at the block's op, from every token the context's buffers still wait for, so it stands for
 * any of them (and in a for, every op then follows the carried token). An if's and a branch's
 * body use the context's tokens directly, and a branch passes one or two of them as block
 * arguments (and buffers, which its body then names by the arguments). The block yields a join of
 * its body's last tokens, and what the buffers waited for inside the body is, after it, the block
 * op's token. A for's body never writes a buffer it read before (gen__pick_buf and
 * gen__note_access keep to that), so every iteration does what the first did.
 */
#include "gen_int.h"

#include "../kernels/kernels.h"

#include <stdio.h>
#include <string.h>

/* A call, if, for or branch op: its block's inputs, body (parsed here) and yield; the op's token,
 * bound after the body. Adds the op itself. */
static int parse_block(Parser *p, const cJSON *o, int ctx, GenOp *opp) {
  const char *kind = gen_op_name(opp->kind);
  if (p->c->version < 2)
    return gen__perr(p, AF_EINVALID, "\"%s\" needs case format version 2%s", kind, NULL);
  if (p->blk)
    return gen__perr(p, AF_EINVALID, "a %s inside a block body (blocks do not nest)%s", kind, NULL);
  GenBlock k;
  memset(&k, 0, sizeof k);
  k.op = p->c->nops;
  k.yield = -1;
  k.trips = 1;
  const cJSON *taken = cJSON_GetObjectItemCaseSensitive(o, "taken");
  if (opp->kind == GEN_OP_IF || opp->kind == GEN_OP_BRANCH) {
    if (!cJSON_IsBool(taken))
      return gen__perr(p, AF_EPARSE,
                       "%s needs \"taken\": true or false (the condition at run time)%s", kind,
                       NULL);
    k.taken = cJSON_IsTrue(taken);
  }
  if (opp->kind == GEN_OP_FOR && (gen__jint(o, "trips", &k.trips) || k.trips < 1 || k.trips > 64))
    return gen__perr(p, AF_EINVALID, "for needs \"trips\", 1 to 64 iterations%s%s", NULL, NULL);
  const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(o, "inputs");
  if (inputs && !cJSON_IsArray(inputs))
    return gen__perr(p, AF_EPARSE, "\"inputs\" must be an array%s%s", NULL, NULL);
  if (cJSON_GetArraySize(inputs) > GEN_MAX_REGION_IO)
    return gen__perr(p, AF_EINVALID, "too many block inputs (at most 4)%s%s", NULL, NULL);
  int rc = gen__parse_bindings(p, inputs, "a block input", k.op, k.inputs, &k.ninputs);
  if (rc)
    return rc;
  const cJSON *bargs = cJSON_GetObjectItemCaseSensitive(o, "buffer_args");
  if (bargs && (!cJSON_IsArray(bargs) || cJSON_GetArraySize(bargs) > GEN_MAX_REGION_IO ||
                opp->kind != GEN_OP_BRANCH))
    return gen__perr(p, AF_EINVALID,
                     "\"buffer_args\" is a branch's array of at most 4 buffer names%s%s", NULL,
                     NULL);
  const cJSON *ba;
  cJSON_ArrayForEach(ba, bargs) {
    int id = cJSON_IsString(ba) ? gen__nm_find(&p->bufs, ba->valuestring) : -1;
    if (id < 0)
      return gen__perr(p, AF_EINVALID, "a buffer argument is not a known buffer%s%s", NULL, NULL);
    k.bufargs[k.nbufargs++] = id;
  }
  opp->block = p->c->nblocks;
  int idx = p->c->nops;
  if (gen_case_add_block(p->c, &k) < 0 || gen_case_add_op(p->c, opp) < 0)
    return af_err_set(p->err, AF_ENOMEM, "out of memory");
  const cJSON *body = cJSON_GetObjectItemCaseSensitive(o, "body");
  if (body && !cJSON_IsArray(body))
    return gen__perr(p, AF_EPARSE, "\"body\" must be an array of ops%s%s", NULL, NULL);
  p->blk = opp->block;
  rc = body ? p->body(p, body, ctx) : 0;
  p->blk = 0;
  if (rc)
    return rc;
  const cJSON *yields = cJSON_GetObjectItemCaseSensitive(o, "yields");
  if (yields && (!cJSON_IsArray(yields) || cJSON_GetArraySize(yields) > 1))
    return gen__perr(p, AF_EPARSE, "a block's \"yields\" is an array of at most one token%s%s",
                     NULL, NULL);
  const cJSON *y = yields ? cJSON_GetArrayItem(yields, 0) : NULL;
  GenBlock *kb = &p->c->blocks[p->c->ops[idx].block];
  if (y && (!cJSON_IsString(y) || (rc = gen__use_token(p, y->valuestring, &kb->yield))))
    return rc ? rc : gen__perr(p, AF_EPARSE, "\"yields\" must name a token%s%s", NULL, NULL);
  const char *tn = gen__jstr(o, "token");
  if ((y != NULL) != (tn != NULL))
    return gen__perr(p, AF_EINVALID, "a %s has a \"token\" exactly when its body yields one%s",
                     kind, NULL);
  if (tn)
    return gen__def_token(p, tn, idx, &p->c->ops[idx].tok);
  return 0;
}

static int parse_call(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  return parse_block(p, o, ctx, op);
}

static int parse_if(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  return parse_block(p, o, ctx, op);
}

static int parse_for(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  return parse_block(p, o, ctx, op);
}

static int parse_branch(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  return parse_block(p, o, ctx, op);
}

/* A call, if, for or branch op: its block's inputs, body and yield (the op's token follows). */
static void put_block(GenWriter *w, const GenOp *o, int depth) {
  AfBuf *b = w->b;
  const GenCase *c = w->c;
  const GenBlock *k = &c->blocks[o->block];
  if (o->kind == GEN_OP_IF || o->kind == GEN_OP_BRANCH)
    af_buf_printf(b, ", \"taken\": %s", k->taken ? "true" : "false");
  if (o->kind == GEN_OP_FOR)
    af_buf_printf(b, ", \"trips\": %d", k->trips);
  af_buf_puts(b, ", \"inputs\": [");
  gen__put_inputs(b, k->inputs, k->ninputs);
  if (k->nbufargs) {
    af_buf_puts(b, "], \"buffer_args\": [");
    for (int q = 0; q < k->nbufargs; q++)
      af_buf_printf(b, "%s\"b%d\"", q ? ", " : "", k->bufargs[q]);
  }
  af_buf_puts(b, "], \"body\": [");
  if (w->body(w, k->first, k->last, o->ctx, o->block, depth + 1)) {
    af_buf_puts(b, "\n");
    gen__indent(b, depth);
  }
  af_buf_puts(b, "], \"yields\": [");
  if (k->yield >= 0)
    af_buf_printf(b, "\"t%d\"", k->yield);
  af_buf_puts(b, "]");
}

static void put_call(GenWriter *w, const GenOp *o, int depth) {
  put_block(w, o, depth);
}

static void put_if(GenWriter *w, const GenOp *o, int depth) {
  put_block(w, o, depth);
}

static void put_for(GenWriter *w, const GenOp *o, int depth) {
  put_block(w, o, depth);
}

static void put_branch(GenWriter *w, const GenOp *o, int depth) {
  put_block(w, o, depth);
}

/* A call, if, for or branch op: its block's shape, and its inputs bound inside. */
static int visit_block(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  const GenBlock *k = &c->blocks[o->block];
  if (o->blk)
    return gen__vfail(v, i, "is in the body of another block (blocks do not nest)", 0, 0);
  if (o->kind == GEN_OP_BRANCH && o->ctx != 0)
    return gen__vfail(v, i, "a branch is in main only (an async.execute body has a single block)",
                      0, 0);
  if (o->kind == GEN_OP_FOR && (k->ninputs != 1 || k->yield < 0))
    return gen__vfail(v, i, "a for carries exactly one token: one input and one yielded token", 0,
                      0);
  if (o->kind == GEN_OP_FOR && (k->trips < 1 || k->trips > 64))
    return gen__vfail(v, i, "a for runs 1 to 64 iterations, not %d", k->trips, 0);
  if (k->ninputs < 0 || k->ninputs > GEN_MAX_REGION_IO || k->taken < 0 || k->taken > 1)
    return gen__vfail(v, i, "its block b%d is malformed", o->block, 0);
  if (o->kind == GEN_OP_IF && k->ninputs)
    return gen__vfail(v, i, "an if takes no inputs (its body uses the context's tokens directly)",
                      0, 0);
  int host = 0;
  for (int b = 0; b < c->nbufs; b++)
    host |= c->bufs[b].kind == GEN_BUF_HOST && c->bufs[b].elem == GEN_ELEM_I32;
  if ((gen_op_flags(o->kind) & GEN_K_COND) && !host)
    return gen__vfail(
        v, i,
        "needs an i32 host buffer: its condition or trip count is computed at run time "
        "from the first one",
        0, 0);
  if (k->nbufargs < 0 || k->nbufargs > GEN_MAX_REGION_IO ||
      (k->nbufargs && o->kind != GEN_OP_BRANCH))
    return gen__vfail(v, i, "only a branch passes buffers as block arguments (at most 4)", 0, 0);
  for (int q = 0; q < k->nbufargs; q++) {
    int b = k->bufargs[q];
    if (b < 0 || b >= c->nbufs)
      return gen__vfail(v, i, "passes buffer %d, which does not exist, as a block argument", b, 0);
    if (v->alloc_node[b] == -2 || v->dealloc_node[b] >= 0 ||
        !gen__in_scope(c, o->ctx, v->alloc_ctx[b]))
      return gen__vfail(v, i, "passes b%d as a block argument where it is not allocated", b, 0);
    for (int p = 0; p < q; p++)
      if (k->bufargs[p] == b)
        return gen__vfail(v, i, "passes b%d twice as a block argument", b, 0);
  }
  for (int q = 0; q < k->ninputs; q++) {
    int t = k->inputs[q].outer;
    if (t < 0 || t >= c->ntoks || v->tok_src[t] == -1)
      return gen__vfail(v, i, "passes token t%d into its block, which is not defined before it", t,
                        0);
    if (v->tok_ctx[t] != o->ctx || v->tok_blk[t] != 0)
      return gen__vfail(v, i, "passes token t%d, which it does not see, into its block", t, 0);
    int rc = gen__define_token(v, i, k->inputs[q].tok, v->tok_src[t], o->ctx);
    if (rc)
      return rc;
    v->tok_blk[k->inputs[q].tok] = o->block;
  }
  return 0;
}

/* A for's body repeats: every op must follow the carried token, the yielded token must follow
 * every op, and no op may write what an earlier op of the body read (each iteration then does
 * exactly what the first did). */
static int check_loop(V *v, int b) {
  const GenCase *c = v->c;
  const GenBlock *k = &c->blocks[b];
  int nt = c->ntoks, rc = 0;
  uint8_t *carried = af_calloc((size_t)nt + 1, 1), *need = af_calloc((size_t)nt + 1, 1);
  uint8_t *read = af_calloc((size_t)c->nbufs + 1, 1);
  if (!carried || !need || !read) {
    rc = af_err_set(v->err, AF_ENOMEM, "out of memory validating the case");
    goto out;
  }
  carried[k->inputs[0].tok] = 1;
  for (int j = k->first; j <= k->last && rc == 0; j++) {
    const GenOp *o = &c->ops[j];
    int ok = 0;
    for (int d = 0; d < o->ndeps; d++)
      ok |= carried[o->deps[d]];
    if (!ok)
      rc = gen__vfail(v, j,
                      "in a for's body, does not follow the carried token (the next iteration "
                      "would race with the last)",
                      0, 0);
    else if (o->tok >= 0)
      carried[o->tok] = 1;
    int32_t bufs[4];
    int writes[4];
    int na = gen_op_accesses(c, j, bufs, writes);
    for (int q = 0; q < na && rc == 0; q++) {
      if (writes[q] && read[bufs[q]])
        rc = gen__vfail(v, j,
                        "writes b%d, which an earlier op of the for's body reads (iterations would "
                        "differ)",
                        bufs[q], 0);
      read[bufs[q]] |= !writes[q];
    }
  }
  need[k->yield] = 1;
  for (int j = k->last; j >= k->first && rc == 0; j--) {
    const GenOp *o = &c->ops[j];
    if (o->tok < 0 || !need[o->tok])
      rc = gen__vfail(v, j,
                      "in a for's body, is not followed by the yielded token (the next iteration "
                      "would race with it)",
                      0, 0);
    for (int d = 0; d < o->ndeps && rc == 0; d++)
      need[o->deps[d]] = 1;
  }
out:
  af_free(read);
  af_free(need);
  af_free(carried);
  return rc;
}

/* The end of block b: its yield, a for's rules, and the op's token, bound to the yield. */
int gen__visit_block_end(V *v, int b) {
  const GenCase *c = v->c;
  const GenBlock *k = &c->blocks[b];
  const GenOp *o = &c->ops[k->op];
  int y = k->yield;
  if (y >= 0 &&
      (y >= c->ntoks || v->tok_src[y] == -1 || v->tok_ctx[y] != o->ctx || !gen__blk_sees(v, b, y)))
    return gen__vfail(v, k->op, "its block yields token t%d, which the block does not see", y, 0);
  int rc = o->kind == GEN_OP_FOR ? check_loop(v, b) : 0;
  if (rc == 0 && o->tok >= 0)
    rc = gen__define_token(v, k->op, o->tok, v->tok_src[y], o->ctx);
  return rc;
}

static int check_call(V *v, int i) {
  return visit_block(v, i);
}

static int check_if(V *v, int i) {
  return visit_block(v, i);
}

static int check_for(V *v, int i) {
  return visit_block(v, i);
}

static int check_branch(V *v, int i) {
  return visit_block(v, i);
}

/* A call op: the call of its callee (render.c writes the callee). */
static int render_call(R *r, int i, int depth) {
  const GenCase *c = r->c;
  const GenOp *o = &c->ops[i];
  const GenBlock *k = &c->blocks[o->block];
  uint8_t *used = af_calloc((size_t)c->nbufs + 1, 1);
  if (used == NULL) {
    r->b->oom = 1;
    return 0;
  }
  gen__block_bufs(c, o->block, used);
  gen__ind(r, depth);
  if (o->tok >= 0)
    af_buf_printf(r->b, "%%t%d = ", o->tok);
  af_buf_printf(r->b, "func.call @%s_fn%d(", r->fname, o->block);
  int n = 0;
  for (int q = 0; q < k->ninputs; q++)
    af_buf_printf(r->b, "%s%%t%d", n++ ? ", " : "", gen__tok_value(c, k->inputs[q].outer));
  for (int b = 0; b < c->nbufs; b++)
    if (used[b])
      af_buf_printf(r->b, "%s%%b%d", n++ ? ", " : "", b);
  af_buf_puts(r->b, ") : (");
  n = 0;
  for (int q = 0; q < k->ninputs; q++)
    af_buf_printf(r->b, "%s!gpu.async.token", n++ ? ", " : "");
  for (int b = 0; b < c->nbufs; b++)
    if (used[b])
      af_buf_printf(r->b, "%s%s", n++ ? ", " : "", gen__mty(c, b));
  af_buf_printf(r->b, ") -> (%s)\n", o->tok >= 0 ? "!gpu.async.token" : "");
  af_free(used);
  return 0;
}

/* An if: the live body where the condition sends the host, the other one yielding a fresh
 * token when the op has one. */
static int render_if(R *r, int i, int depth) {
  const GenCase *c = r->c;
  const GenOp *o = &c->ops[i];
  const GenBlock *g = &c->blocks[o->block];
  AfBuf *b = r->b;
  int k = o->block;
  gen__ind(r, depth);
  if (o->tok >= 0)
    af_buf_printf(b, "%%t%d = ", o->tok);
  af_buf_printf(b, "scf.if %s%s {\n", g->taken ? "%af_true" : "%af_false",
                o->tok >= 0 ? " -> (!gpu.async.token)" : "");
  for (int pass = 0; pass < 2; pass++) { /* the then and the else region */
    if (pass == 1 && (!g->taken || o->tok >= 0)) {
      gen__ind(r, depth);
      af_buf_puts(b, "} else {\n");
    }
    if ((pass == 0) == (g->taken != 0)) {
      gen__live_body(r, k, depth + 1, "scf.yield", 0);
    } else if (o->tok >= 0) {
      gen__ind(r, depth + 1);
      af_buf_printf(b, "%%af_dead%d = gpu.wait async\n", k);
      gen__ind(r, depth + 1);
      af_buf_printf(b, "scf.yield %%af_dead%d : !gpu.async.token\n", k);
    }
  }
  gen__ind(r, depth);
  af_buf_puts(b, "}\n");
  return 1;
}

/* A for: its body, the token carried as iter_arg. */
static int render_for(R *r, int i, int depth) {
  const GenCase *c = r->c;
  const GenOp *o = &c->ops[i];
  const GenBlock *g = &c->blocks[o->block];
  int k = o->block;
  gen__ind(r, depth);
  af_buf_printf(r->b,
                "%%t%d = scf.for %%af_iv%d = %%af_c0 to %%af_trips%d step %%c1 iter_args(%%t%d "
                "= %%t%d) -> (!gpu.async.token) {\n",
                o->tok, k, k, g->inputs[0].tok, gen__tok_value(c, g->inputs[0].outer));
  gen__live_body(r, k, depth + 1, "scf.yield", 0);
  gen__ind(r, depth);
  af_buf_puts(r->b, "}\n");
  return 1;
}

/* A branch's block arguments: its inputs, then its buffers; with their types (decl: as the block
 * declares them, else as the cf.cond_br passes them). */
static void branch_args(R *r, const GenBlock *g, int k, int decl) {
  const GenCase *c = r->c;
  AfBuf *b = r->b;
  if (g->ninputs + g->nbufargs == 0)
    return;
  af_buf_puts(b, "(");
  for (int q = 0; q < g->ninputs; q++)
    if (decl)
      af_buf_printf(b, "%s%%t%d: !gpu.async.token", q ? ", " : "", g->inputs[q].tok);
    else
      af_buf_printf(b, "%s%%t%d", q ? ", " : "", gen__tok_value(c, g->inputs[q].outer));
  for (int q = 0; q < g->nbufargs; q++)
    if (decl)
      af_buf_printf(b, "%s%%af_b%d_b%d: %s", q + g->ninputs ? ", " : "", k, g->bufargs[q],
                    gen__mty(c, g->bufargs[q]));
    else
      af_buf_printf(b, "%s%%b%d", q + g->ninputs ? ", " : "", g->bufargs[q]);
  if (!decl) {
    af_buf_puts(b, " : ");
    for (int q = 0; q < g->ninputs; q++)
      af_buf_printf(b, "%s!gpu.async.token", q ? ", " : "");
    for (int q = 0; q < g->nbufargs; q++)
      af_buf_printf(b, "%s%s", q + g->ninputs ? ", " : "", gen__mty(c, g->bufargs[q]));
  }
  af_buf_puts(b, ")");
}

/* A branch: cf.cond_br to ^t and ^f (in that order in the text), both branching to ^m, whose
 * argument is the op's token; the dead block passes the first input's outer token, or a fresh
 * one. */
static int render_branch(R *r, int i, int depth) {
  const GenCase *c = r->c;
  const GenOp *o = &c->ops[i];
  const GenBlock *g = &c->blocks[o->block];
  AfBuf *b = r->b;
  int k = o->block;
  char merge[48];
  snprintf(merge, sizeof merge, "cf.br ^af_bb%d_m", k);
  gen__ind(r, depth);
  af_buf_printf(b, "cf.cond_br %s, ^af_bb%d_t", g->taken ? "%af_true" : "%af_false", k);
  for (int pass = 0; pass < 2; pass++) {
    if (pass)
      af_buf_printf(b, ", ^af_bb%d_f", k);
    if ((pass == 0) == (g->taken != 0))
      branch_args(r, g, k, 0);
  }
  af_buf_puts(b, "\n");
  for (int pass = 0; pass < 2; pass++) {
    int is_live = (pass == 0) == (g->taken != 0);
    gen__ind(r, depth - 1);
    af_buf_printf(b, "^af_bb%d_%s", k, pass == 0 ? "t" : "f");
    if (is_live)
      branch_args(r, g, k, 1);
    af_buf_puts(b, ":\n");
    if (is_live) {
      gen__live_body(r, k, depth, merge, 1);
      continue;
    }
    gen__ind(r, depth);
    if (o->tok < 0) {
      af_buf_printf(b, "%s\n", merge);
    } else if (g->ninputs) {
      af_buf_printf(b, "%s(%%t%d : !gpu.async.token)\n", merge,
                    gen__tok_value(c, g->inputs[0].outer));
    } else {
      af_buf_printf(b, "%%af_dead%d = gpu.wait async\n", k);
      gen__ind(r, depth);
      af_buf_printf(b, "%s(%%af_dead%d : !gpu.async.token)\n", merge, k);
    }
  }
  gen__ind(r, depth - 1);
  af_buf_printf(b, "^af_bb%d_m", k);
  if (o->tok >= 0)
    af_buf_printf(b, "(%%t%d: !gpu.async.token)", o->tok);
  af_buf_puts(b, ":\n");
  return 1;
}

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
  for (int i = 0; i < g->nalive && g->rc == 0; i++) {
    const BState *st = &g->bs[g->alive[i]];
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
  for (int i = 0; i < g->nalive; i++) {
    BState *st = &g->bs[g->alive[i]];
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
  return gen__pick_block_kind(g, kinds[af_rng_below(&g->rng, (uint32_t)n)], n, kinds);
}

/* The block's inputs (bound inside to new tokens of the block) and g's record of them. */
static int bind_inputs(G *g, Ctx *x, int kind, GenBlock *k) {
  TSet s;
  frontier(g, x, &s);
  k->ninputs = 0;
  g->cur_iter = -1;
  int outer[GEN_MAX_REGION_IO], n = 0;
  if (gen__crossing_avoided(g, kind)) { /* (the order crosses by a host wait before it) */
    if (s.n)
      gen__host_wait(g, x, &s);
    s.n = 0;
  }
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
    for (int i = 0; i < g->nalive && k->nbufargs < 2; i++)
      if (g->bs[g->alive[i]].owner == x->id && af_rng_chance(&g->rng, 30))
        k->bufargs[k->nbufargs++] = g->alive[i];
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
  if (kind < 0)
    return;
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
  GenOp o = gen_op_blank(kind, x->id);
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
  int tok0 = g->ntok; /* (the block's tokens are made from here on: a body holds no block) */
  g->cur_blk = b;
  g->cur_kind = kind;
  g->blk_read = read;
  for (int q = 0; q < g->c->blocks[b].ninputs && g->rc == 0; q++) {
    int outer = g->c->blocks[b].inputs[q].outer;
    int t = gen__new_token(g, &body, &outer, 1);
    if (t >= 0) /* (the same value: its stream) */
      g->tok_root[t] = g->tok_root[outer];
    g->c->blocks[b].inputs[q].tok = t;
  }
  g->cur_iter = g->c->blocks[b].ninputs > 0 ? g->c->blocks[b].inputs[0].tok : -1;
  g->gen_body(g, &body, budget);
  /* the yield: a join of the body's last tokens (a for: of every op, so the next iteration
   * follows all of this one) */
  TSet s;
  s.n = 0;
  int ntok = g->ntok, waited = 0; /* (joins add_all makes are block tokens too, and cover what
                                     they join) */
  int drop = gen__avoids_construct(g, GEN_CONSTRUCT_WAITED);
  for (int t = tok0; t < ntok && g->rc == 0; t++)
    if (g->tok_blk[t] == b && g->tok_ctx[t] == x->id) {
      if (drop && gen__covered(g, x->id, t))
        waited++; /* (host-wait avoided: not one a host wait in it completed) */
      else
        add_all(g, &body, &s, t);
    }
  gen__ts_minimize(g, &s);
  int y;
  if (gen__crossing_avoided(g, kind)) { /* (and out by a host wait at its end) */
    if (s.n)
      gen__host_wait(g, &body, &s);
    y = -1;
  } else {
    y = s.n ? join_all(g, &body, &s) : waited ? gen__join(g, &body, s.t, 0) : -1;
  }
  if (kind != GEN_OP_FOR) /* (a for's body repeats: no host wait) */
    gen__end_streams(g, &body, b, y);
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
  g->tok_root[r] = g->tok_root[y];
  g->c->blocks[b].yield = y;
  g->c->ops[k.op].tok = r;
  remap(g, x, b, r);
}

/* ---- the classes ---- */

const GenOpClass gen__class_call = {parse_call, put_call, check_call, render_call, NULL};
const GenOpClass gen__class_if = {parse_if, put_if, check_if, render_if, NULL};
const GenOpClass gen__class_for = {parse_for, put_for, check_for, render_for, NULL};
const GenOpClass gen__class_branch = {parse_branch, put_branch, check_branch, render_branch, NULL};
