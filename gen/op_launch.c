/*
 * op_launch.c: the kernel launch (gpu.launch_func): its class (gen_int.h): the kernel and its
 * arguments (whole buffers or views), an explicit stream when the case gives one; read, written,
 * checked (device buffers of one element type and one length, no aliasing), rendered and generated.
 */
#include "gen_int.h"

#include "../kernels/kernels.h"

#include <stdio.h>
#include <string.h>

/* A launch's kernel, its buffer arguments and its value (the dependencies are parsed after). */
static int parse_kernel(Parser *p, const cJSON *o, GenOp *opp) {
  const char *kn = gen__jstr(o, "kernel");
  int k = kn ? kernel_lookup(kn) : -1;
  if (k < 0)
    return gen__perr(p, AF_EINVALID, "unknown kernel \"%s\"%s", kn ? kn : "(missing)", NULL);
  if (k >= KERNEL__COUNT)
    return gen__perr(p, AF_EINVALID,
                     "kernel \"%s\" is a form the renderer picks (for views, for its buffers' "
                     "type); name %s",
                     kn, kernel_info(KERNEL_BASE(k))->name);
  opp->kernel = (uint8_t)k;
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(o, "args");
  if (!cJSON_IsArray(args))
    return gen__perr(p, AF_EPARSE, "launch needs \"args\", an array of buffer names%s%s", NULL,
                     NULL);
  int n = cJSON_GetArraySize(args);
  if (n != kernel_info(k)->nbufs)
    return gen__perr(p, AF_EINVALID, "kernel %s takes a different number of buffers%s", kn, NULL);
  const cJSON *a;
  cJSON_ArrayForEach(a, args) {
    int id = cJSON_IsString(a) ? gen__nm_find(&p->bufs, a->valuestring) : -1;
    if (id < 0)
      return gen__perr(p, AF_EINVALID, "launch argument is not a known buffer%s%s", NULL, NULL);
    opp->args[opp->nargs++] = id;
  }
  opp->buf = opp->args[0];
  opp->value = 0; /* (absent: 0) */
  if (cJSON_GetObjectItemCaseSensitive(o, "value") && gen__jint(o, "value", &opp->value))
    return gen__perr(p, AF_EPARSE,
                     "launch \"value\" must be an integer from -2147483648 to "
                     "2147483647%s%s",
                     NULL, NULL);
  return 0;
}

/* A launch's "grid" and "block" (three dimensions each, both or neither), "inline" and
 * "shared_memory" (version 2). */
static int parse_shape(Parser *p, const cJSON *o, GenOp *op) {
  static const char *const key[2] = {"grid", "block"};
  int given = 0;
  for (int k = 0; k < 2; k++) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key[k]);
    if (a == NULL)
      continue;
    given |= 1 << k;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 3 || p->c->version < 2)
      return gen__perr(p, AF_EPARSE, "launch \"%s\" is [x, y, z], in case format version 2%s",
                       key[k], NULL);
    for (int d = 0; d < 3; d++) {
      const cJSON *v = cJSON_GetArrayItem(a, d);
      if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 1024 ||
          v->valuedouble != (double)(int)v->valuedouble)
        return gen__perr(p, AF_EPARSE, "launch \"%s\": each dimension is 1 to 1024%s", key[k],
                         NULL);
      op->dims[3 * k + d] = (int32_t)v->valuedouble;
    }
  }
  if (given == 1 || given == 2)
    return gen__perr(p, AF_EPARSE, "launch: \"grid\" and \"block\" go together%s%s", NULL, NULL);
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(o, "inline");
  if (in && (!cJSON_IsBool(in) || p->c->version < 2))
    return gen__perr(p, AF_EPARSE,
                     "launch \"inline\" (true or false) needs case format version 2%s%s", NULL,
                     NULL);
  op->inl = cJSON_IsTrue(in);
  const cJSON *sm = cJSON_GetObjectItemCaseSensitive(o, "shared_memory");
  if (sm && (!cJSON_IsNumber(sm) || p->c->version < 2 || sm->valuedouble < 0 ||
             sm->valuedouble > GEN_MAX_SMEM || sm->valuedouble != (double)(int)sm->valuedouble))
    return gen__perr(p, AF_EPARSE,
                     "launch \"shared_memory\" is its bytes of dynamic shared memory, 0 to 49152, "
                     "in case format version 2%s%s",
                     NULL, NULL);
  op->smem = sm ? (int32_t)sm->valuedouble : 0;
  return 0;
}

static int parse_launch(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  (void)ctx;
  int rc = parse_kernel(p, o, op);
  if (!rc && gen__jstr(o, "stream"))
    rc = gen__use_stream(p, o, 0, &op->stream);
  return rc ? rc : parse_shape(p, o, op);
}

static void put_launch(GenWriter *w, const GenOp *o, int depth) {
  AfBuf *b = w->b;
  (void)depth;
  const KernelInfo *ki = kernel_info(o->kernel);
  af_buf_printf(b, ", \"kernel\": \"%s\", \"args\": [", ki ? ki->name : "?");
  for (int a = 0; a < o->nargs; a++)
    af_buf_printf(b, "%s\"b%d\"", a ? ", " : "", o->args[a]);
  af_buf_printf(b, "], \"value\": %d", o->value);
  if (o->stream >= 0) /* version 2 */
    af_buf_printf(b, ", \"stream\": \"s%d\"", o->stream);
  if (o->dims[0]) /* version 2 */
    af_buf_printf(b, ", \"grid\": [%d, %d, %d], \"block\": [%d, %d, %d]", o->dims[0], o->dims[1],
                  o->dims[2], o->dims[3], o->dims[4], o->dims[5]);
  if (o->inl) /* version 2 */
    af_buf_puts(b, ", \"inline\": true");
  if (o->smem) /* version 2 */
    af_buf_printf(b, ", \"shared_memory\": %d", o->smem);
}

/* A launch's buffers: device, of one element type, distinct, and of one length (views
 * included). */
static int check_kernel_args(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  const GenBuf *B = c->bufs;
  if (gen__check_views(v, i))
    return AF_EINVALID;
  for (int a = 0; a < o->nargs; a++) {
    if (B[o->args[a]].kind != GEN_BUF_DEVICE)
      return gen__vfail(v, i, "passes host buffer b%d to a kernel", o->args[a], 0);
    if (B[o->args[a]].elem != B[o->args[0]].elem)
      return gen__vfail(v, i, "passes b%d to a kernel whose first buffer b%d is of another type",
                        o->args[a], o->args[0]);
    int32_t off, len, len0, stride;
    gen_op_view(c, o, a, &off, &len, &stride);
    gen_op_view(c, o, 0, &off, &len0, &stride);
    if (len != len0)
      return gen__vfail(v, i, "passes buffers or views of different sizes (b%d, b%d)", o->args[0],
                        o->args[a]);
    for (int a2 = 0; a2 < a; a2++)
      if (o->args[a] == o->args[a2])
        return gen__vfail(v, i, "passes b%d twice; kernel arguments must not alias", o->args[a], 0);
  }
  return 0;
}

/* A launch's grid and blocks: a thread for each element (at most 64 times as many), at most
 * 1024 threads a block; a gpu.launch on no explicit stream. */
static int check_shape(V *v, int i) {
  const GenOp *o = &v->c->ops[i];
  int32_t off, len, stride, d[6];
  gen_op_view(v->c, o, 0, &off, &len, &stride);
  gen_op_dims(o, len, d);
  long long block = 1, threads = 1;
  for (int k = 0; k < 6; k++) {
    if (d[k] < 1 || d[k] > 1024)
      return gen__vfail(v, i, "launches a grid or block dimension of %d (1..1024)", d[k], 0);
    threads *= d[k];
    block *= k >= 3 ? d[k] : 1;
  }
  if (block > 1024)
    return gen__vfail(v, i, "launches blocks of %d threads (at most 1024)", (int)block, 0);
  if (threads < len || threads > 64LL * len)
    return gen__vfail(v, i, "launches %d threads for %d elements (one each, at most 64 times)",
                      (int)(threads < 1 << 30 ? threads : 1 << 30), len);
  if (o->inl && o->stream >= 0)
    return gen__vfail(v, i, "is a gpu.launch on explicit stream s%d (gpu.launch_func only)",
                      o->stream, 0);
  if (o->smem < 0 || o->smem > GEN_MAX_SMEM)
    return gen__vfail(v, i, "gives its kernel %d bytes of dynamic shared memory (0..%d)", o->smem,
                      GEN_MAX_SMEM);
  if (o->smem > 0 && o->smem < kernel_smem_need(block))
    return gen__vfail(v, i,
                      "gives its staged kernel %d bytes of dynamic shared memory, less than its "
                      "blocks of %d threads need",
                      o->smem, (int)block);
  return 0;
}

static int check_launch(V *v, int i) {
  const GenOp *o = &v->c->ops[i];
  if (o->kernel >= KERNEL__COUNT || o->nargs != kernel_info(o->kernel)->nbufs)
    return gen__vfail(v, i, "unknown kernel or wrong number of buffers", 0, 0);
  if (check_shape(v, i))
    return AF_EINVALID;
  int rc = check_kernel_args(v, i);
  return rc ? rc : gen__visit_stream(v, i);
}

/* A launch. One with a view among its operands launches the kernel's view form: every operand
 * a memref.subview or a memref.cast to the strided type, one thread per element of the views. */
static int render_launch(R *r, int i, int depth) {
  const GenOp *o = &r->c->ops[i];
  const GenCase *c = r->c;
  AfBuf *b = r->b;
  int view = gen_op_has_view(o), k = gen__i32const(r, depth, o->value), nth = -1;
  int kid = gen_op_kernel_id(c, o);
  char name[KERNEL_MAX_BUFS][48], type[KERNEL_MAX_BUFS][96], mt[96], smt[96];
  gen__kernel_mty(KERNEL_ID(o->kernel, 0, KERNEL_ELEM(kid)), mt, sizeof mt);
  gen__kernel_mty(KERNEL_ID(o->kernel, 1, KERNEL_ELEM(kid)), smt, sizeof smt);
  for (int a = 0; a < o->nargs; a++) {
    gen__view_operand(r, o, a, depth, name[a], sizeof name[a], type[a], sizeof type[a]);
    if (o->view[a][1] <= 0) /* kernels take flat memrefs */
      gen__flatten(r, depth, o->args[a], name[a], sizeof name[a], type[a], sizeof type[a]);
    if (c->bufs[o->args[a]].space) { /* kernels take the default memory space's memrefs */
      int v = r->k++;
      const char *to = o->view[a][1] > 0 ? smt : mt;
      gen__ind(r, depth);
      af_buf_printf(b, "%%k%d = memref.memory_space_cast %s : %s to %s\n", v, name[a], type[a], to);
      snprintf(name[a], sizeof name[a], "%%k%d", v);
      snprintf(type[a], sizeof type[a], "%s", to);
    }
    if (view && o->view[a][1] <= 0) { /* the whole buffer, cast to the strided type */
      int v = r->k++;
      gen__ind(r, depth);
      af_buf_printf(b, "%%k%d = memref.cast %s : %s to %s\n", v, name[a], mt, smt);
      snprintf(name[a], sizeof name[a], "%%k%d", v);
      snprintf(type[a], sizeof type[a], "%s", smt);
    }
  }
  if (view) {
    int32_t off, len, stride;
    gen_op_view(c, o, 0, &off, &len, &stride);
    nth = r->k++;
    gen__ind(r, depth);
    af_buf_printf(b, "%%k%d = arith.constant %d : index\n", nth, len);
  }
  char dim[6][16]; /* each dimension's SSA value */
  for (int q = 0; q < 6; q++)
    snprintf(dim[q], sizeof dim[q], "%%c1");
  if (view)
    snprintf(dim[3], sizeof dim[3], "%%k%d", nth);
  else
    snprintf(dim[3], sizeof dim[3], "%%n%d", c->bufs[o->args[0]].n);
  for (int q = 0; q < 6 && o->dims[0]; q++) {
    if (o->dims[q] == 1) { /* (blocks of one thread in x too: not the element count) */
      snprintf(dim[q], sizeof dim[q], "%%c1");
      continue;
    }
    int kq = r->k++;
    gen__ind(r, depth);
    af_buf_printf(b, "%%k%d = arith.constant %d : index\n", kq, o->dims[q]);
    snprintf(dim[q], sizeof dim[q], "%%k%d", kq);
  }
  char smem[40] = ""; /* its dynamic shared memory */
  if (o->smem > 0) {
    int ks = r->k++;
    gen__ind(r, depth);
    af_buf_printf(b, "%%k%d = arith.constant %d : i32\n", ks, o->smem);
    snprintf(smem, sizeof smem, " dynamic_shared_memory_size %%k%d", ks);
  }
  int tag = -1; /* a gpu.launch's: its kernel, for the runtime (kernels.h's KERNEL_TAG) */
  if (o->inl) {
    tag = r->k++;
    gen__ind(r, depth);
    af_buf_printf(b, "%%k%d = arith.constant %d : i32\n", tag, KERNEL_TAG(kid));
  }
  int first = 0;
  if (r->map) /* (a gpu.launch's calls are on its first line) */
    first = gen__lines_so_far(r) + 1;
  gen__ind(r, depth);
  if (o->inl) {
    af_buf_printf(b, "%%t%d = gpu.launch async", o->tok);
    gen__deps(r, o);
    af_buf_printf(b,
                  " blocks(%%lb%d_x, %%lb%d_y, %%lb%d_z) in (%%lg%d_x = %s, %%lg%d_y = %s, "
                  "%%lg%d_z = %s) threads(%%lt%d_x, %%lt%d_y, %%lt%d_z) in (%%ls%d_x = %s, "
                  "%%ls%d_y = %s, %%ls%d_z = %s)%s {\n",
                  i, i, i, i, dim[0], i, dim[1], i, dim[2], i, i, i, i, dim[3], i, dim[4], i,
                  dim[5], smem);
    char v[24], ind[64];
    snprintf(v, sizeof v, "%%k%d", k);
    snprintf(ind, sizeof ind, "%*s", 2 * depth + 2, "");
    /* the outlined kernel's first arguments, in the order of their first use: its tag, its
     * value, the spin count (its buffers follow, as the body uses them: dst, a, b) */
    af_buf_printf(b,
                  "%s%%af_t0 = arith.addi %%k%d, %s : i32\n"
                  "%s%%af_t1 = arith.addi %%af_t0, %%spin : i32\n",
                  ind, tag, v, ind);
    gen__kernel_body(b, kid, name[0], o->nargs > 1 ? name[1] : "", o->nargs > 2 ? name[2] : "", v,
                     ind);
    gen__ind(r, depth + 1);
    af_buf_puts(b, "gpu.terminator\n");
    gen__ind(r, depth);
    af_buf_puts(b, "}\n");
    if (r->map) /* its calls are on its first line (render_op maps its last) */
      gen__map_line(r, first, i);
    return 0;
  }
  af_buf_printf(b, "%%t%d = gpu.launch_func async", o->tok);
  gen__deps(r, o);
  if (o->stream >= 0)
    af_buf_printf(b, " <%%st%d : !llvm.ptr>", o->stream);
  af_buf_printf(b,
                " @asyncfuzz_kernels::@%s blocks in (%s, %s, %s) threads in (%s, %s, %s)%s args(",
                kernel_info(kid)->name, dim[0], dim[1], dim[2], dim[3], dim[4], dim[5], smem);
  for (int a = 0; a < o->nargs; a++)
    af_buf_printf(b, "%s : %s, ", name[a], type[a]);
  af_buf_printf(b, "%%k%d : i32, %%spin : i32)\n", k);
  return 0;
}

/* Views for a launch's operands (drawn only when the knob is on): one length for all (less than
 * the whole buffer only once the destination is written whole); an operand shorter than its
 * buffer is a view, a source of the whole length one at even odds. */
static void draw_launch_views(G *g, GenOp *o) {
  if (g->cfg.view_pct <= 0 || !af_rng_chance(&g->rng, g->cfg.view_pct) ||
      gen__avoids_view(g, o->kind))
    return;
  int n = g->c->bufs[o->args[0]].n;
  int len = g->bs[o->args[0]].written ? 1 + (int)af_rng_below(&g->rng, (uint32_t)n) : n;
  for (int a = 0; a < o->nargs; a++) {
    int na = g->c->bufs[o->args[a]].n;
    if (len < na || (a > 0 && af_rng_chance(&g->rng, 50)))
      gen__draw_view(g, na, len, o->view[a]);
  }
}

/* A launch's grid and blocks in more than one dimension, and its gpu.launch form: drawn apart
 * from the case's other choices (a seed makes the same case with the knobs as without them, but
 * for these). */
static void draw_shape(G *g, GenOp *o) {
  if (g->cfg.dims_pct <= 0 && g->cfg.inline_pct <= 0 && g->cfg.smem_pct <= 0)
    return;
  AfRng r;
  af_rng_seed(&r,
              g->c->seed ^ 0x4C41554E43483031ull ^ ((uint64_t)g->c->nops * 0x9E3779B97F4A7C15ull));
  if (af_rng_chance(&r, g->cfg.dims_pct)) {
    int32_t off, len, stride;
    gen_op_view(g->c, o, 0, &off, &len, &stride);
    static const int by[] = {1, 2, 4}, bz[] = {1, 2}, gx[] = {1, 2, 3}, gyz[] = {1, 2};
    int32_t d[6] = {gx[af_rng_below(&r, 3)], gyz[af_rng_below(&r, 2)], gyz[af_rng_below(&r, 2)], 1,
                    by[af_rng_below(&r, 3)], bz[af_rng_below(&r, 2)]};
    static const int at[] = {0, 1, 2, 4, 5};
    for (int q = 0; q < 5 && d[0] * d[1] * d[2] * d[4] * d[5] > 32 * len; q++)
      d[at[q]] = 1;                     /* (at most 64 threads an element) */
    if (d[1] * d[2] * d[4] * d[5] == 1) /* (more than one dimension) */
      d[4] = 2;
    int32_t rest = d[0] * d[1] * d[2] * d[4] * d[5];
    d[3] = (len + rest - 1) / rest;
    while (d[3] * d[4] * d[5] > 1024) { /* (at most 1024 threads a block) */
      d[0] *= 2;
      rest *= 2;
      d[3] = (len + rest - 1) / rest;
    }
    memcpy(o->dims, d, sizeof d);
  }
  o->inl = o->stream < 0 && af_rng_chance(&r, g->cfg.inline_pct);
  if (af_rng_chance(&r, g->cfg.smem_pct)) { /* what its blocks need, or up to 48 bytes more */
    int32_t off, len, stride, d[6];
    gen_op_view(g->c, o, 0, &off, &len, &stride);
    gen_op_dims(o, len, d);
    o->smem =
        (int32_t)kernel_smem_need((int64_t)d[3] * d[4] * d[5]) + 16 * (int32_t)af_rng_below(&r, 4);
  }
}

void gen__op_launch(G *g, Ctx *x) {
  int k = (int)af_rng_below(&g->rng, KERNEL__COUNT);
  int dst = gen__pick_buf(g, x, GEN_BUF_DEVICE, 0, -1, -1, -1);
  if (dst < 0)
    return;
  int a = -1, b = -1, e = g->c->bufs[dst].elem; /* (sources of the destination's type) */
  if (k >= KERNEL_TRANSFORM) {
    a = gen__pick_buf(g, x, GEN_BUF_DEVICE, 1, dst, -1, e);
    if (a < 0)
      k = KERNEL_FILL;
  }
  if (k == KERNEL_COMBINE) {
    b = gen__pick_buf(g, x, GEN_BUF_DEVICE, 1, dst, a, e);
    if (b < 0)
      k = KERNEL_TRANSFORM;
  }
  GenOp o = gen_op_blank(GEN_OP_LAUNCH, x->id);
  o.kernel = (uint8_t)k;
  o.nargs = kernel_info(k)->nbufs;
  o.args[0] = dst;
  o.args[1] = a;
  o.args[2] = b;
  o.buf = dst;
  o.value = (int)af_rng_below(&g->rng, 100);
  draw_launch_views(g, &o);
  TSet s;
  s.n = 0;
  gen__need_for(g, x, &s, dst, 1);
  for (int i = 1; i < o.nargs; i++)
    gen__need_for(g, x, &s, o.args[i], 0);
  int sk = g->cfg.stream_pct > 0 && !x->body ? gen__pick_stream(g, x, &s) : -1; /* when on */
  o.stream = sk >= 0 ? x->streams[sk] : -1;
  draw_shape(g, &o);
  int t = gen__emit_drawn(g, x, &o, &s);
  if (t < 0)
    return;
  if (sk >= 0)
    gen__stream_launched(g, x, sk, t);
  for (int i = 1; i < o.nargs; i++)
    gen__note_access(g, x, o.args[i], 0, t);
  gen__note_access(g, x, dst, 1, t);
}

/* ---- the classes ---- */

const GenOpClass gen__class_launch = {parse_launch, put_launch, check_launch, render_launch,
                                      gen__op_launch};
