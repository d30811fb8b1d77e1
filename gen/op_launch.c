/*
 * op_launch.c: the kernel launch (gpu.launch_func): its class (gen_int.h): the kernel and its
 * arguments (whole buffers or views), an explicit stream when the case gives one; read, written,
 * checked (device i32 buffers of one length, no aliasing), rendered and generated.
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
                     "kernel \"%s\" is the view form the renderer picks; name %s and give "
                     "\"arg_views\"",
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

static int parse_launch(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  (void)ctx;
  int rc = parse_kernel(p, o, op);
  if (!rc && gen__jstr(o, "stream"))
    rc = gen__use_stream(p, o, 0, &op->stream);
  return rc;
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
}

/* A launch's buffers: device, i32, distinct, and of one length (views included). */
static int check_kernel_args(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  const GenBuf *B = c->bufs;
  if (gen__check_views(v, i))
    return AF_EINVALID;
  for (int a = 0; a < o->nargs; a++) {
    if (B[o->args[a]].kind != GEN_BUF_DEVICE)
      return gen__vfail(v, i, "passes host buffer b%d to a kernel", o->args[a], 0);
    if (B[o->args[a]].elem != GEN_ELEM_I32)
      return gen__vfail(v, i, "passes b%d to a kernel, whose buffers are i32", o->args[a], 0);
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

static int check_launch(V *v, int i) {
  const GenOp *o = &v->c->ops[i];
  if (o->kernel >= KERNEL__COUNT || o->nargs != kernel_info(o->kernel)->nbufs)
    return gen__vfail(v, i, "unknown kernel or wrong number of buffers", 0, 0);
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
  char name[KERNEL_MAX_BUFS][48], type[KERNEL_MAX_BUFS][96];
  for (int a = 0; a < o->nargs; a++) {
    gen__view_operand(r, o, a, depth, name[a], sizeof name[a], type[a], sizeof type[a]);
    if (view && o->view[a][1] <= 0) { /* the whole buffer, cast to the strided type */
      int v = r->k++;
      gen__ind(r, depth);
      af_buf_printf(b, "%%k%d = memref.cast %s : " MT " to " SMT "\n", v, name[a]);
      snprintf(name[a], sizeof name[a], "%%k%d", v);
      snprintf(type[a], sizeof type[a], SMT);
    }
  }
  if (view) {
    int32_t off, len, stride;
    gen_op_view(c, o, 0, &off, &len, &stride);
    nth = r->k++;
    gen__ind(r, depth);
    af_buf_printf(b, "%%k%d = arith.constant %d : index\n", nth, len);
  }
  gen__ind(r, depth);
  af_buf_printf(b, "%%t%d = gpu.launch_func async", o->tok);
  gen__deps(r, o);
  if (o->stream >= 0)
    af_buf_printf(b, " <%%st%d : !llvm.ptr>", o->stream);
  af_buf_printf(b, " @asyncfuzz_kernels::@%s blocks in (%%c1, %%c1, %%c1) threads in (",
                kernel_info(o->kernel + (view ? KERNEL__COUNT : 0))->name);
  if (view)
    af_buf_printf(b, "%%k%d", nth);
  else
    af_buf_printf(b, "%%n%d", c->bufs[o->args[0]].n);
  af_buf_puts(b, ", %c1, %c1) args(");
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

void gen__op_launch(G *g, Ctx *x) {
  int k = (int)af_rng_below(&g->rng, KERNEL__COUNT);
  int dst = gen__pick_buf(g, x, GEN_BUF_DEVICE, 0, -1, -1, GEN_ELEM_I32);
  if (dst < 0)
    return;
  int a = -1, b = -1;
  if (k >= KERNEL_TRANSFORM) {
    a = gen__pick_buf(g, x, GEN_BUF_DEVICE, 1, dst, -1, GEN_ELEM_I32);
    if (a < 0)
      k = KERNEL_FILL;
  }
  if (k == KERNEL_COMBINE) {
    b = gen__pick_buf(g, x, GEN_BUF_DEVICE, 1, dst, a, GEN_ELEM_I32);
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
