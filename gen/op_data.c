/*
 * op_data.c: the op kinds that allocate, free, copy and set device memory (alloc, dealloc,
 * memcpy, memset): each kind's class (gen_int.h): how it is read from and written to the case
 * format, checked, rendered as MLIR and generated.
 */
#include "gen_int.h"

#include "../kernels/kernels.h"

#include <stdio.h>
#include <string.h>

static int parse_alloc(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  (void)ctx;
  const char *mode = gen__jstr(o, "mode");
  if (mode == NULL || strcmp(mode, "async") == 0)
    op->mode = GEN_ALLOC_ASYNC;
  else if (strcmp(mode, "sync") == 0)
    op->mode = GEN_ALLOC_SYNC;
  else if (strcmp(mode, "host_shared") == 0)
    op->mode = GEN_ALLOC_HOST_SHARED;
  else
    return gen__perr(p, AF_EPARSE, "unknown alloc mode \"%s\"%s", mode, NULL);
  op->async = op->mode == GEN_ALLOC_ASYNC;
  return gen__use_buf(p, o, "buf", &op->buf);
}

/* An alloc's or dealloc's "space_cast" (version 2). */
static int parse_spacecast(Parser *p, const cJSON *o, GenOp *op) {
  const cJSON *sc = cJSON_GetObjectItemCaseSensitive(o, "space_cast");
  if (sc && (!cJSON_IsBool(sc) || p->c->version < 2))
    return gen__perr(p, AF_EPARSE, "\"space_cast\" (true or false) needs case format version 2%s%s",
                     NULL, NULL);
  op->spacecast = cJSON_IsTrue(sc);
  return 0;
}

static int parse_alloc_op(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  int rc = parse_alloc(p, o, op, ctx);
  return rc ? rc : parse_spacecast(p, o, op);
}

static int parse_dealloc(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  (void)ctx;
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "async");
  op->async = a == NULL || cJSON_IsTrue(a);
  int rc = gen__use_buf(p, o, "buf", &op->buf);
  return rc ? rc : parse_spacecast(p, o, op);
}

static int parse_memcpy(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  (void)ctx;
  int rc = gen__use_buf(p, o, "dst", &op->buf);
  return rc ? rc : gen__use_buf(p, o, "src", &op->src);
}

static int parse_memset(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  (void)ctx;
  int rc = gen__use_buf(p, o, "dst", &op->buf);
  if (!rc && gen__jint(o, "value", &op->value))
    rc = gen__perr(p, AF_EPARSE, "memset needs an integer \"value\"%s%s", NULL, NULL);
  return rc;
}

static void put_alloc(GenWriter *w, const GenOp *o, int depth) {
  AfBuf *b = w->b;
  (void)depth;
  af_buf_printf(b, ", \"buf\": \"b%d\", \"mode\": \"%s\"", o->buf,
                o->mode == GEN_ALLOC_ASYNC  ? "async"
                : o->mode == GEN_ALLOC_SYNC ? "sync"
                                            : "host_shared");
  if (o->spacecast) /* version 2 */
    af_buf_puts(b, ", \"space_cast\": true");
}

static void put_dealloc(GenWriter *w, const GenOp *o, int depth) {
  AfBuf *b = w->b;
  (void)depth;
  af_buf_printf(b, ", \"buf\": \"b%d\", \"async\": %s", o->buf, o->async ? "true" : "false");
  if (o->spacecast) /* version 2 */
    af_buf_puts(b, ", \"space_cast\": true");
}

static void put_memcpy(GenWriter *w, const GenOp *o, int depth) {
  AfBuf *b = w->b;
  (void)depth;
  af_buf_printf(b, ", \"dst\": \"b%d\", \"src\": \"b%d\"", o->buf, o->src);
}

static void put_memset(GenWriter *w, const GenOp *o, int depth) {
  AfBuf *b = w->b;
  (void)depth;
  af_buf_printf(b, ", \"dst\": \"b%d\", \"value\": %d", o->buf, o->value);
}

/* A device buffer for an alloc, dealloc or memset; an alloc's or dealloc's space_cast only for
 * a buffer in a memory space. */
static int device_buf(V *v, int i) {
  const GenOp *o = &v->c->ops[i];
  if (v->c->bufs[o->buf].kind != GEN_BUF_DEVICE)
    return gen__vfail(v, i, "b%d is a host buffer; this op needs a device buffer", o->buf, 0);
  if (o->spacecast && !v->c->bufs[o->buf].space)
    return gen__vfail(v, i, "casts b%d from the default memory space, which it is in", o->buf, 0);
  return 0;
}

static int check_alloc(V *v, int i) {
  const GenOp *o = &v->c->ops[i];
  if ((o->mode == GEN_ALLOC_ASYNC) != (o->async != 0))
    return gen__vfail(v, i, "alloc mode and async flag disagree", 0, 0);
  if (device_buf(v, i))
    return AF_EINVALID;
  if (o->mode == GEN_ALLOC_HOST_SHARED && v->c->bufs[o->buf].space)
    return gen__vfail(v, i, "allocates b%d, a buffer in a memory space, host_shared", o->buf, 0);
  if (v->alloc_node[o->buf] != -2)
    return gen__vfail(v, i, "allocates b%d a second time (first at op #%d)", o->buf,
                      v->alloc_node[o->buf]);
  v->alloc_node[o->buf] = i;
  v->alloc_ctx[o->buf] = o->ctx;
  return 0;
}

static int check_dealloc(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  int b = o->buf;
  if (device_buf(v, i))
    return AF_EINVALID;
  if (v->alloc_node[b] == -2)
    return gen__vfail(v, i, "deallocates b%d, which is never allocated before it", b, 0);
  if (v->dealloc_node[b] >= 0)
    return gen__vfail(v, i, "deallocates b%d twice (first at op #%d)", b, v->dealloc_node[b]);
  if (!gen__in_scope(c, o->ctx, v->alloc_ctx[b]))
    return gen__vfail(v, i, "deallocates b%d outside the region that allocates it (r%d)", b,
                      v->alloc_ctx[b]);
  if (!gen__before(v, v->alloc_node[b], i))
    return gen__vfail(v, i, "dealloc of b%d is not ordered after its alloc (op #%d)", b,
                      v->alloc_node[b]);
  if (v->last_write[b] >= 0 && !gen__before(v, v->last_write[b], i))
    return gen__vfail(v, i, "dealloc of b%d is not ordered after op #%d, which uses it", b,
                      v->last_write[b]);
  for (int k = 0; k < v->nreads[b]; k++)
    if (!gen__before(v, v->reads[b][k], i))
      return gen__vfail(v, i, "dealloc of b%d is not ordered after op #%d, which uses it", b,
                        v->reads[b][k]);
  v->dealloc_node[b] = i;
  return 0;
}

static int check_memcpy(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  const GenBuf *B = c->bufs;
  if (o->buf == o->src)
    return gen__vfail(v, i, "copies b%d onto itself", o->buf, 0);
  if (B[o->buf].kind == GEN_BUF_HOST && B[o->src].kind == GEN_BUF_HOST)
    return gen__vfail(v, i, "copies host to host (b%d to b%d); gpu.memcpy needs a device side",
                      o->src, o->buf);
  if (gen__check_views(v, i))
    return AF_EINVALID;
  int32_t od, ld, sd, os, ls, ss;
  gen_op_view(c, o, 0, &od, &ld, &sd);
  gen_op_view(c, o, 1, &os, &ls, &ss);
  if (ld != ls)
    return gen__vfail(
        v, i, "copies between views or buffers of different sizes (%d and %d elements)", ls, ld);
  if (B[o->buf].elem != B[o->src].elem)
    return af_err_set(v->err, AF_EINVALID,
                      "op #%d (memcpy): copies between buffers of different types (%s to %s)", i,
                      gen_elem_name(B[o->src].elem), gen_elem_name(B[o->buf].elem));
  return 0;
}

static int check_memset(V *v, int i) {
  const GenOp *o = &v->c->ops[i];
  if (device_buf(v, i) || gen__check_views(v, i))
    return AF_EINVALID;
  if (!gen_elem_settable(v->c->bufs[o->buf].elem))
    return af_err_set(v->err, AF_EINVALID,
                      "op #%d (memset): sets b%d, an %s buffer: no runtime call sets elements of "
                      "that width (MLIR lowers 16- and 32-bit memsets only)",
                      i, o->buf, gen_elem_name(v->c->bufs[o->buf].elem));
  return 0;
}

/* An alloc; a static allocation is cast to the dynamic shape every other op uses; one through
 * the default space (space_cast) is cast to the buffer's space after. A ranked buffer's dynamic
 * extents are index constants written first. */
static int render_alloc(R *r, int i, int depth) {
  const GenCase *c = r->c;
  const GenOp *o = &c->ops[i];
  AfBuf *b = r->b;
  const GenBuf *gb = &c->bufs[o->buf];
  const char *sfx = gb->stat ? "_s" : o->spacecast ? "_d" : "";
  int sp = gb->space && !o->spacecast, rank = gen_buf_rank(c, o->buf);
  char sizes[64] = "", st[64], at[64]; /* its dynamic sizes; its static and allocated types */
  int32_t n1 = gb->n;
  if (rank == 1)
    snprintf(sizes, sizeof sizes, "%%n%d", gb->n);
  for (int d = 0; d < rank && rank > 1 && !gb->stat; d++) {
    if (!(gb->dyn >> d & 1u))
      continue;
    int q = r->k++;
    gen__ind(r, depth);
    af_buf_printf(b, "%%k%d = arith.constant %d : index\n", q, gb->shape[d]);
    size_t l = strlen(sizes);
    snprintf(sizes + l, sizeof sizes - l, "%s%%k%d", l ? ", " : "", q);
  }
  if (rank == 1)
    gen__shape_mty(1, &n1, 0, gb->elem, sp, "", st, sizeof st);
  else
    gen__shape_mty(rank, gb->shape, 0, gb->elem, sp, "", st, sizeof st);
  snprintf(at, sizeof at, "%s", gb->stat ? st : gen__mty_in(c, o->buf, sp));
  gen__ind(r, depth);
  if (o->async) {
    af_buf_printf(b, "%%b%d%s, %%t%d = gpu.alloc async", o->buf, sfx, o->tok);
    gen__deps(r, o);
  } else {
    af_buf_printf(b, "%%b%d%s = gpu.alloc%s", o->buf, sfx,
                  o->mode == GEN_ALLOC_HOST_SHARED ? " host_shared" : "");
  }
  af_buf_printf(b, " (%s) : %s\n", gb->stat ? "" : sizes, at);
  if (!gb->stat && !o->spacecast)
    return 0;
  if (r->map) /* the allocation's calls are on this line */
    gen__map_line(r, gen__lines_so_far(r), i);
  if (gb->stat) {
    gen__ind(r, depth);
    af_buf_printf(b, "%%b%d%s = memref.cast %%b%d_s : %s to %s\n", o->buf, o->spacecast ? "_d" : "",
                  o->buf, st, gen__mty_in(c, o->buf, sp));
  }
  if (o->spacecast) {
    gen__ind(r, depth);
    af_buf_printf(b, "%%b%d = memref.memory_space_cast %%b%d_d : %s to %s\n", o->buf, o->buf,
                  gen__mty_in(c, o->buf, 0), gen__mty(c, o->buf));
  }
  return 0;
}

/* A dealloc; one through the default space (space_cast) frees the buffer cast back to it. */
static int render_dealloc(R *r, int i, int depth) {
  const GenOp *o = &r->c->ops[i];
  char name[32];
  snprintf(name, sizeof name, "%%b%d", o->buf);
  const char *type = gen__mty(r->c, o->buf);
  if (o->spacecast) {
    int k = r->k++;
    gen__ind(r, depth);
    type = gen__mty_in(r->c, o->buf, 0);
    af_buf_printf(r->b, "%%k%d = memref.memory_space_cast %%b%d : %s to %s\n", k, o->buf,
                  gen__mty(r->c, o->buf), type);
    snprintf(name, sizeof name, "%%k%d", k);
  }
  gen__ind(r, depth);
  if (o->async) {
    af_buf_printf(r->b, "%%t%d = gpu.dealloc async", o->tok);
    gen__deps(r, o);
  } else {
    af_buf_puts(r->b, "gpu.dealloc");
  }
  af_buf_printf(r->b, " %s : %s\n", name, type);
  return 0;
}

static int render_memcpy(R *r, int i, int depth) {
  const GenOp *o = &r->c->ops[i];
  const GenCase *c = r->c;
  char dn[48], dt[96], sn[48], st[96];
  gen__view_operand(r, o, 0, depth, dn, sizeof dn, dt, sizeof dt);
  gen__view_operand(r, o, 1, depth, sn, sizeof sn, st, sizeof st);
  /* shapes that match: in rows, a whole side is reshaped into rows too; else whole buffers take
   * the destination's shape, the source's where the destination is of rank 1; beside a view not
   * in rows, both are flat */
  int32_t ext[3];
  int rank = gen_op_rows(c, o, ext);
  if (rank) {
    for (int k = 0; k < 2; k++) {
      int b = k ? o->src : o->buf, row = 1;
      for (int d = 1; d < rank; d++)
        row *= ext[d];
      ext[0] = c->bufs[b].n / row;
      if (o->view[k][1] <= 0 && k == 0)
        gen__reshape(r, depth, b, rank, ext, 1u, dn, sizeof dn, dt, sizeof dt);
      else if (o->view[k][1] <= 0)
        gen__reshape(r, depth, b, rank, ext, 1u, sn, sizeof sn, st, sizeof st);
    }
  } else if (o->view[0][1] > 0 || o->view[1][1] > 0) {
    if (o->view[0][1] <= 0)
      gen__flatten(r, depth, o->buf, dn, sizeof dn, dt, sizeof dt);
    if (o->view[1][1] <= 0)
      gen__flatten(r, depth, o->src, sn, sizeof sn, st, sizeof st);
  } else if (gen_buf_rank(c, o->buf) > 1) {
    const GenBuf *g = &c->bufs[o->buf];
    gen__reshape(r, depth, o->src, g->rank, g->shape, g->dyn, sn, sizeof sn, st, sizeof st);
  } else if (gen_buf_rank(c, o->src) > 1) {
    const GenBuf *g = &c->bufs[o->src];
    gen__reshape(r, depth, o->buf, g->rank, g->shape, g->dyn, dn, sizeof dn, dt, sizeof dt);
  }
  gen__ind(r, depth);
  af_buf_printf(r->b, "%%t%d = gpu.memcpy async", o->tok);
  gen__deps(r, o);
  af_buf_printf(r->b, " %s, %s : %s, %s\n", dn, sn, dt, st);
  return 0;
}

/* A memset: its value as the element type holds it (kernel_elem_value: an i16 truncated, a float
 * exact), then the op. */
static int render_memset(R *r, int i, int depth) {
  const GenOp *o = &r->c->ops[i];
  const GenCase *c = r->c;
  AfBuf *b = r->b;
  int e = c->bufs[o->buf].elem, k = r->k++;
  gen__ind(r, depth);
  int cls = kernel_elem_class(e);
  af_buf_printf(
      b, "%%k%d = arith.constant %lld%s : %s\n", k, (long long)kernel_elem_value(e, o->value),
      cls == KERNEL_EC_FLOAT || cls == KERNEL_EC_HALF || cls == KERNEL_EC_BF16 ? ".0" : "",
      gen_elem_name(e));
  char dn[48], dt[96];
  gen__view_operand(r, o, 0, depth, dn, sizeof dn, dt, sizeof dt);
  gen__ind(r, depth);
  af_buf_printf(b, "%%t%d = gpu.memset async", o->tok);
  gen__deps(r, o);
  af_buf_printf(b, " %s, %%k%d : %s, %s\n", dn, k, dt, gen_elem_name(e));
  return 0;
}

/* Whether device buffer b is in a memory space: drawn apart from the case's other choices, so
 * that a seed makes the same case with --spaces as without it, but for the spaces. */
static int in_space(const G *g, int b) {
  if (g->cfg.space_pct <= 0)
    return 0;
  AfRng r;
  af_rng_seed(&r, g->c->seed ^ 0x5350414345533031ull ^ ((uint64_t)b * 0x9E3779B97F4A7C15ull));
  return af_rng_chance(&r, g->cfg.space_pct);
}

/* Whether a names a shape that takes in s but for its rank (s's op on a buffer of rank 1 is
 * avoided too): then the op takes another form whatever its buffer's rank, and s says nothing of
 * ranks (a "gpu.alloc async deps=0 ranked" beside "gpu.alloc async deps=0"). */
static int unranked_avoided(const GenAvoid *a, const GenShape *s) {
  for (int i = 0; i < a->nshapes; i++) {
    const GenShape *u = &a->shapes[i];
    if (!u->ranked && u->kind == s->kind && u->async == s->async && u->shared == s->shared &&
        (u->deps < 0 || u->deps == s->deps) && (u->view <= 0 || u->view == s->view) &&
        (!u->unthreaded || s->unthreaded) && (!u->elem || u->elem == s->elem) &&
        (!u->stream || s->stream) && (!u->pending || s->pending) && (!u->space || s->space))
      return 1;
  }
  return 0;
}

/* A shape of rank 2 or 3 for device buffer gb (in gb->shape, its dynamic extents in gb->dyn),
 * drawn apart from the case's other choices as the spaces are; none where steering avoids an
 * op that names a ranked memref (the buffers are then of rank 1: the same elements, copied,
 * set and launched on alike; but one in a memory space, which goes through the default space
 * instead); every extent static where it avoids dynamic-extents. */
static void draw_rank(const G *g, int b, GenBuf *gb) {
  if (g->cfg.rank_pct <= 0)
    return;
  for (int i = 0; i < g->cfg.avoid.nshapes; i++)
    if (g->cfg.avoid.shapes[i].ranked && !g->cfg.avoid.shapes[i].space &&
        !unranked_avoided(&g->cfg.avoid, &g->cfg.avoid.shapes[i]))
      return; /* (one in a memory space goes through the default space instead: space_avoided) */
  AfRng r;
  af_rng_seed(&r, g->c->seed ^ 0x52414E4B45443032ull ^ ((uint64_t)b * 0x9E3779B97F4A7C15ull));
  if (!af_rng_chance(&r, g->cfg.rank_pct))
    return;
  int32_t opts[64][3];
  int nopts = 0, rank = af_rng_chance(&r, 30) ? 3 : 2, n = gb->n;
  for (int a = 2; a <= n && nopts < 64; a++) { /* extents of 2 or more, where n has them */
    if (n % a)
      continue;
    if (rank == 2 && n / a >= 2)
      opts[nopts][0] = a, opts[nopts][1] = n / a, opts[nopts++][2] = 1;
    for (int m = 2; rank == 3 && m <= n / a && nopts < 64; m++)
      if ((n / a) % m == 0 && n / a / m >= 2)
        opts[nopts][0] = a, opts[nopts][1] = m, opts[nopts++][2] = n / a / m;
  }
  if (nopts == 0) { /* (a prime n: its one row) */
    rank = 2;
    opts[0][0] = 1, opts[0][1] = n, opts[0][2] = 1;
    nopts = 1;
  }
  int k = (int)af_rng_below(&r, (uint32_t)nopts);
  gb->rank = (uint8_t)rank;
  for (int d = 0; d < rank; d++)
    gb->shape[d] = opts[k][d];
  /* static and dynamic extents mixed (one dynamic) mostly; every extent static or dynamic at a
   * fifth each */
  uint32_t how = af_rng_below(&r, 10);
  gb->dyn = (uint8_t)(how < 2   ? 0
                      : how < 4 ? (1u << rank) - 1
                                : 1u << af_rng_below(&r, (uint32_t)rank));
  if (gen__avoids_construct(g, GEN_CONSTRUCT_DYNAMIC_EXTENTS))
    gb->dyn = 0; /* (after the draws: the same shapes as without it) */
}

/* Whether an alloc or dealloc like o on a buffer in a memory space, as it is, is avoided at any
 * dependency count: then it goes through the default space (space_cast). */
static int space_avoided(const G *g, const GenOp *o) {
  if (g->cfg.avoid.nshapes == 0)
    return 0;
  GenOp op = *o; /* (of a ranked buffer: what a "... space ranked" shape names) */
  op.ranked = g->c->bufs[o->buf].rank != 0;
  GenOp plain = op; /* (a shape that names no space is the other forms' business) */
  plain.space = 0;
  for (int nd = 0; nd <= (o->async ? 2 : 0); nd++)
    if (gen__avoids(g, o->kind, o->async, nd, &op) &&
        !gen__avoids(g, o->kind, o->async, nd, &plain))
      return 1;
  return 0;
}

void gen__op_alloc(G *g, Ctx *x) {
  if (g->live_dev >= g->cfg.buffers)
    return;
  GenBuf gb = {GEN_BUF_DEVICE, g->cfg.elems, 0, GEN_ELEM_I32, 0, 0, 0, 0, 0, {0, 0, 0}};
  if (g->cfg.view_pct > 0) /* (drawn only when on) a static allocation, cast to ?xT */
    gb.stat = af_rng_chance(&g->rng, g->cfg.view_pct) != 0;
  draw_rank(g, g->c->nbufs, &gb);
  if (g->cfg.typed_pct > 0 && af_rng_chance(&g->rng, g->cfg.typed_pct)) { /* only when on */
    gb.elem = (uint8_t)gen__draw_elem(g);
    for (int i = 0; i < g->nalive; i++) { /* mostly the type of a host buffer, to copy to */
      int h = g->alive[i];
      if (g->c->bufs[h].kind == GEN_BUF_HOST && g->c->bufs[h].elem != GEN_ELEM_I32 &&
          af_rng_chance(&g->rng, 70))
        gb.elem = g->c->bufs[h].elem;
    }
  } else if (g->cfg.typed_pct > 0 && g->cfg.wide_types_pct > 0) {
    /* (drawn only when --wide-types is on) the type of a typed host buffer that no live device
     * buffer has, at twice --typed: its data can then go to the device and back */
    int want = -1;
    for (int i = 0; i < g->nalive && want < 0; i++) {
      int h = g->alive[i], dev = 0;
      if (g->c->bufs[h].kind != GEN_BUF_HOST || g->c->bufs[h].elem == GEN_ELEM_I32)
        continue;
      for (int j = 0; j < g->nalive && !dev; j++)
        dev = g->c->bufs[g->alive[j]].kind == GEN_BUF_DEVICE &&
              g->c->bufs[g->alive[j]].elem == g->c->bufs[h].elem;
      if (!dev)
        want = g->c->bufs[h].elem;
    }
    if (want >= 0 && af_rng_chance(&g->rng, 2 * g->cfg.typed_pct))
      gb.elem = (uint8_t)want;
  }
  int b = gen_case_add_buf(g->c, &gb);
  if (b < 0 || af_grow((void **)&g->bs, &g->capbs, b + 1, sizeof(BState)) || gen__buf_born(g, b)) {
    gen__oom(g);
    return;
  }
  BState *st = &g->bs[b];
  memset(st, 0, sizeof *st);
  st->owner = x->id;
  st->writer = -1;
  st->region_private = x->id != 0;
  GenOp o = gen_op_blank(GEN_OP_ALLOC, x->id);
  o.buf = b;
  GenOp hs = o;
  hs.mode = GEN_ALLOC_HOST_SHARED;
  if (af_rng_chance(&g->rng, g->cfg.host_shared_pct) && !gen__avoids(g, GEN_OP_ALLOC, 0, 0, &hs)) {
    o.mode = GEN_ALLOC_HOST_SHARED;
    st->shared = 1;
  } else if (!gen__pick_async(g, GEN_OP_ALLOC, !af_rng_chance(&g->rng, g->cfg.sync_pct))) {
    o.mode = GEN_ALLOC_SYNC;
  } else {
    o.mode = GEN_ALLOC_ASYNC;
    o.async = 1;
  }
  if (o.mode != GEN_ALLOC_HOST_SHARED && in_space(g, b)) {
    g->c->bufs[b].space = 1;
    o.space = 1;
    o.spacecast = (uint8_t)space_avoided(g, &o);
    o.space = !o.spacecast;
  }
  g->live_dev++;
  if (o.async) {
    TSet s;
    s.n = 0;
    if (x->nrecent && af_rng_chance(&g->rng, 60))
      gen__ts_add(&s, x->recent[af_rng_below(&g->rng, (uint32_t)x->nrecent)]);
    st->writer = gen__emit_drawn(g, x, &o, &s);
  } else {
    gen__emit(g, &o);
  }
}

void gen__op_dealloc(G *g, Ctx *x, int b) {
  if (gen__avoids_kind(g, GEN_OP_DEALLOC)) { /* every form avoided: the buffer is dropped */
    /* (left allocated, unused: a leak of the case's own, which never counts) */
    gen__buf_dies(g, b);
    g->live_dev--;
    return;
  }
  TSet s;
  s.n = 0;
  gen__need_for(g, x, &s, b, 1);
  GenOp o = gen_op_blank(GEN_OP_DEALLOC, x->id);
  o.buf = b;
  int async = gen__pick_async(g, GEN_OP_DEALLOC, !af_rng_chance(&g->rng, g->cfg.sync_pct));
  if (g->c->bufs[b].space) {
    o.space = 1;
    o.async = (uint8_t)async;
    o.spacecast = (uint8_t)space_avoided(g, &o);
    o.space = !o.spacecast;
    o.async = 0;
  }
  if (!async) {
    if (s.n)
      gen__host_wait(g, x, &s);
    gen__emit(g, &o);
  } else {
    o.async = 1;
    if (gen__emit_drawn(g, x, &o, &s) < 0)
      return;
  }
  gen__buf_dies(g, b);
  g->live_dev--;
}

static void op_dealloc_any(G *g, Ctx *x) {
  int b = gen__pick_buf(g, x, GEN_BUF_DEVICE, 0, -1, -1, ANY_ELEM);
  if (b >= 0 && (x->id == 0 || g->bs[b].region_private))
    gen__op_dealloc(g, x, b);
}

/* A copy or set whose destination is written (a view elsewhere would leave the rest undefined)
 * and ranked, or a copy from a ranked buffer into a written one, works on whole rows of the
 * ranked side (gen_op_rows) at 75% when views are on, the other side on as many elements,
 * whole rows of the same extents where its size is whole rows: drawn apart from the case's
 * other choices, over the views drawn, so that a seed makes the same case with --ranked as
 * without it, but for the ranks. */
static void rows_view(G *g, GenOp *o) {
  const GenCase *c = g->c;
  g->ndata++; /* (by the copies and sets drawn: the same where steering adds other ops) */
  int copy = o->kind == GEN_OP_MEMCPY, k = gen_buf_rank(c, o->buf) > 1 ? 0 : 1;
  int p = k ? o->src : o->buf, row = gen_buf_row(c, p), nrows = row > 0 ? c->bufs[p].n / row : 0;
  if (gen_buf_rank(c, p) < 2 || (k && !copy) || nrows < 1 || g->cfg.view_pct <= 0 ||
      !g->bs[o->buf].written || gen__avoids_view(g, o->kind))
    return;
  AfRng r;
  af_rng_seed(&r, c->seed ^ 0x524F575356494557ull ^ ((uint64_t)g->ndata * 0x9E3779B97F4A7C15ull));
  if (!af_rng_chance(&r, 75))
    return;
  int rows = 1 + (int)af_rng_below(&r, (uint32_t)nrows), len = rows * row;
  o->view[k][0] = row * (int32_t)af_rng_below(&r, (uint32_t)(nrows - rows + 1));
  o->view[k][1] = len;
  o->view[k][2] = 1;
  if (!copy)
    return;
  int ob = k ? o->buf : o->src, n = c->bufs[ob].n, step = n % row == 0 ? row : 1;
  o->view[1 - k][0] = step * (int32_t)af_rng_below(&r, (uint32_t)((n - len) / step + 1));
  o->view[1 - k][1] = len;
  o->view[1 - k][2] = 1;
}

/* Views for o's operands (drawn only when the knob is on): a memcpy's source and destination,
 * a memset's destination; a destination only once its buffer is written whole. */
static void draw_views(G *g, GenOp *o) {
  if (g->cfg.view_pct <= 0 || !af_rng_chance(&g->rng, g->cfg.view_pct) ||
      gen__avoids_view(g, o->kind))
    return;
  int n = g->c->bufs[o->buf].n, len = 1 + (int)af_rng_below(&g->rng, (uint32_t)n);
  int dst = g->bs[o->buf].written && af_rng_chance(&g->rng, 70);
  int src = o->kind == GEN_OP_MEMCPY; /* (both sides of a copy are the same length) */
  if (!dst)
    len = n; /* a whole-buffer destination: the source's view spans as many elements */
  if (dst)
    gen__draw_view(g, n, len, o->view[0]);
  if (src)
    gen__draw_view(g, g->c->bufs[o->src].n, len, o->view[1]);
}

/* Whether a memcpy or memset onto a buffer of element type e is avoided whatever its
 * dependencies ("gpu.memset async i16"): then it is not drawn on such a buffer. */
static int elem_avoided(const G *g, int kind, int e) {
  if (g->cfg.avoid.nshapes == 0 || e < 0)
    return 0;
  GenOp o = gen_op_blank(kind, 0);
  o.belem = (uint8_t)(1 + gen_elem_storage(e));
  return gen__avoids(g, kind, 1, -1, &o);
}

/* Copy o (its buffers drawn) with the waits it needs, and what it reads and writes noted. */
static void emit_copy(G *g, Ctx *x, GenOp *o) {
  TSet s;
  s.n = 0;
  gen__need_for(g, x, &s, o->buf, 1);
  gen__need_for(g, x, &s, o->src, 0);
  int src = o->src, dst = o->buf;
  int t = gen__emit_drawn(g, x, o, &s);
  if (t < 0)
    return;
  gen__note_access(g, x, src, 0, t);
  gen__note_access(g, x, dst, 1, t);
}

void gen__op_memcpy(G *g, Ctx *x) {
  int dir = (int)af_rng_below(&g->rng, 3); /* 0 H2D, 1 D2H, 2 D2D */
  /* typed buffers are few: half the copies (drawn only when on) look for one first */
  int se = g->cfg.typed_pct > 0 && af_rng_chance(&g->rng, 50) ? NOT_I32 : ANY_ELEM;
  int src, dst;
  if (dir == 0) {
    src = gen__pick_buf(g, x, GEN_BUF_HOST, 1, -1, -1, se);
    if (src < 0)
      src = gen__pick_buf(g, x, GEN_BUF_HOST, 1, -1, -1, ANY_ELEM);
    dst = gen__pick_buf(g, x, GEN_BUF_DEVICE, 0, -1, -1, src >= 0 ? g->c->bufs[src].elem : 0);
  } else if (dir == 1) {
    src = gen__pick_buf(g, x, GEN_BUF_DEVICE, 1, -1, -1, se);
    if (src < 0)
      src = gen__pick_buf(g, x, GEN_BUF_DEVICE, 1, -1, -1, ANY_ELEM);
    dst = gen__pick_buf(g, x, GEN_BUF_HOST, 0, -1, -1, src >= 0 ? g->c->bufs[src].elem : 0);
  } else {
    src = gen__pick_buf(g, x, GEN_BUF_DEVICE, 1, -1, -1, ANY_ELEM);
    dst = gen__pick_buf(g, x, GEN_BUF_DEVICE, 0, src, -1, src >= 0 ? g->c->bufs[src].elem : 0);
  }
  if (src < 0 || dst < 0 || elem_avoided(g, GEN_OP_MEMCPY, g->c->bufs[dst].elem))
    return;
  GenOp o = gen_op_blank(GEN_OP_MEMCPY, x->id);
  o.buf = dst;
  o.src = src;
  o.belem = (uint8_t)(1 + gen_elem_storage(g->c->bufs[dst].elem));
  draw_views(g, &o);
  rows_view(g, &o);
  emit_copy(g, x, &o);
}

void gen__drain(G *g, Ctx *x, int b) {
  int e = g->c->bufs[b].elem;
  if (elem_avoided(g, GEN_OP_MEMCPY, e))
    return;
  int h = gen__pick_buf(g, x, GEN_BUF_HOST, 0, -1, -1, e);
  /* none of the type: one more host buffer, for it (registered as the first ones are: drawn
   * apart, so the knob changes nothing else) */
  if (h < 0 && x->id == 0)
    h = gen__new_host_buf(g, e, (int)af_rng_below(&g->rng, 1000));
  if (h < 0)
    return;
  if (g->bs[h].writer >= 0) /* what a copy wrote there, observed before it is written over */
    gen__observe(g, x, h);
  GenOp o = gen_op_blank(GEN_OP_MEMCPY, x->id);
  o.buf = h;
  o.src = b;
  o.belem = (uint8_t)(1 + gen_elem_storage(e));
  emit_copy(g, x, &o);
}

void gen__op_memset(G *g, Ctx *x) {
  int dst = gen__pick_buf(g, x, GEN_BUF_DEVICE, 0, -1, -1, SETTABLE);
  if (dst >= 0 && elem_avoided(g, GEN_OP_MEMSET, g->c->bufs[dst].elem))
    dst = elem_avoided(g, GEN_OP_MEMSET, GEN_ELEM_I32)
              ? -1
              : gen__pick_buf(g, x, GEN_BUF_DEVICE, 0, -1, -1, GEN_ELEM_I32);
  if (dst < 0)
    return;
  GenOp o = gen_op_blank(GEN_OP_MEMSET, x->id);
  o.buf = dst;
  o.belem = (uint8_t)(1 + gen_elem_storage(g->c->bufs[dst].elem));
  o.value = (int)af_rng_below(&g->rng, 1000);
  if (g->bs[dst].written) /* (a view of a buffer not yet written would leave the rest undefined) */
    draw_views(g, &o);
  rows_view(g, &o);
  TSet s;
  s.n = 0;
  gen__need_for(g, x, &s, dst, 1);
  int t = gen__emit_drawn(g, x, &o, &s);
  if (t >= 0)
    gen__note_access(g, x, dst, 1, t);
}

/* ---- the classes ---- */

const GenOpClass gen__class_alloc = {parse_alloc_op, put_alloc, check_alloc, render_alloc,
                                     gen__op_alloc};
const GenOpClass gen__class_dealloc = {parse_dealloc, put_dealloc, check_dealloc, render_dealloc,
                                       op_dealloc_any};
const GenOpClass gen__class_memcpy = {parse_memcpy, put_memcpy, check_memcpy, render_memcpy,
                                      gen__op_memcpy};
const GenOpClass gen__class_memset = {parse_memset, put_memset, check_memset, render_memset,
                                      gen__op_memset};
