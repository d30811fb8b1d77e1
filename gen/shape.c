/*
 * shape.c: op shapes, to steer generation away from what is already known. A shape is an op
 * kind, whether it is async, and how many dependencies it has (0, 1, 2 or more), as the
 * mlir-opt lowering's verdicts name the op that stopped a case ("gpu.launch_func async
 * deps=2+", "gpu.alloc", "scf.if"): the MLIR spelling of an op is the one render.c writes.
 */
#include "gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kind of gpu op `name` (n bytes) in its async or synchronous form, or -1. */
static int gpu_kind(const char *name, size_t n, int async) {
  for (int k = 0; k < GEN_OP__COUNT; k++) {
    const char *m = gen_op_mlir(k);
    unsigned f = gen_op_flags(k);
    if (strncmp(m, "gpu.", 4) != 0 || strlen(m) != n || strncmp(name, m, n) != 0)
      continue;
    if (f & (async ? GEN_K_ASYNC | GEN_K_EITHER : GEN_K_HOST | GEN_K_EITHER))
      return k;
  }
  return -1;
}

/* A kind that is not a gpu op but has a shape of its own: a block op ("scf.if"), a region
 * ("async.execute") or a stream op ("llvm.call @mgpuStreamCreate"), named in full at the start of
 * text; -1 when none. */
static int other_kind(const char *text) {
  for (int k = 0; k < GEN_OP__COUNT; k++) {
    const char *m = gen_op_mlir(k);
    size_t n = strlen(m);
    if ((gen_op_flags(k) & (GEN_K_BLOCK | GEN_K_REGION | GEN_K_STREAM)) &&
        strncmp(text, m, n) == 0 && (text[n] == '\0' || text[n] == ' ' || text[n] == '|'))
      return k;
  }
  return -1;
}

int gen_shape_parse(const char *text, GenShape *out) {
  int other = other_kind(text);
  if (other >= 0) {
    out->kind = other;
    out->async = 0;
    out->deps = out->view = -1;
    out->shared = out->unthreaded = out->elem = out->stream = out->pending = out->space = 0;
    out->ranked = 0;
    return 0;
  }
  size_t n = strcspn(text, " |");
  const char *rest = text + n;
  size_t rlen = strcspn(rest, "|");
  char buf[64];
  snprintf(buf, sizeof buf, "%.*s", (int)(rlen < 63 ? rlen : 63), rest);
  int async = strstr(buf, " async") != NULL;
  int kind = gpu_kind(text, n, async);
  if (kind < 0)
    return -1;
  const char *d = strstr(buf, " deps=");
  out->kind = kind;
  out->async = async;
  out->deps = d == NULL ? -1 : d[6] == '2' ? 2 : d[6] == '1' ? 1 : 0;
  out->view = strstr(buf, " view") ? 1 : -1;
  out->shared = strstr(buf, " host_shared") != NULL;
  out->unthreaded = out->deps == 1 && strstr(buf, " unthreaded") != NULL;
  out->stream = (gen_op_flags(kind) & GEN_K_ON_STREAM) && strstr(buf, " stream") != NULL;
  out->pending = out->deps != 0 && strstr(buf, " pending") != NULL;
  out->space = strstr(buf, " space") != NULL;
  out->ranked = strstr(buf, " ranked") != NULL;
  out->elem = 0;
  size_t end = strlen(buf);
  while (end > 0 && buf[end - 1] == ' ')
    buf[--end] = '\0';
  const char *last = strrchr(buf, ' '); /* the last word names an element type */
  int e = last && (gen_op_flags(kind) & GEN_K_TYPED) ? gen_elem_lookup(last + 1) : -1;
  if (e >= 0)
    out->elem = 1 + gen_elem_storage(e);
  return 0;
}

void gen_shape_text(const GenShape *s, char *out, size_t n) {
  const char *name = gen_op_mlir(s->kind);
  if (strncmp(name, "gpu.", 4) != 0) {
    snprintf(out, n, "%s", name);
    return;
  }
  char deps[24] = "";
  if (s->deps >= 0)
    snprintf(deps, sizeof deps, " deps=%d%s", s->deps, s->deps == 2 ? "+" : "");
  snprintf(out, n, "%s%s%s%s%s%s%s%s%s%s%s%s", name, s->shared ? " host_shared" : "",
           s->async ? " async" : "", deps, s->unthreaded && s->deps == 1 ? " unthreaded" : "",
           s->pending ? " pending" : "", s->view == 1 ? " view" : "", s->stream ? " stream" : "",
           s->space ? " space" : "", s->ranked ? " ranked" : "", s->elem > 0 ? " " : "",
           s->elem > 0 ? gen_elem_name(s->elem - 1) : "");
}

/* A host_shared allocation: a shape of its own, as mlir-opt lowers it by its own rule. */
static int shared(const GenOp *o) {
  return o->kind == GEN_OP_ALLOC && o->mode == GEN_ALLOC_HOST_SHARED;
}

void gen_shape_format(const GenOp *o, char *out, size_t n) {
  const char *name = gen_op_mlir(o->kind);
  if (strncmp(name, "gpu.", 4) != 0) {
    snprintf(out, n, "%s", name);
    return;
  }
  int bucket = o->ndeps >= 2 ? 2 : o->ndeps;
  snprintf(out, n, "%s%s%s deps=%d%s%s%s%s", name, shared(o) ? " host_shared" : "",
           gen_op_async(o) ? " async" : "", bucket, bucket == 2 ? "+" : "",
           gen_op_has_view(o) ? " view" : "", o->space ? " space" : "", o->ranked ? " ranked" : "");
}

int gen_op_has_shape(const GenOp *o, const GenShape *s) {
  /* a shape names an MLIR operation: every kind rendered as it has it (a launch-like kind is a
   * gpu.launch_func, as a launch) */
  if ((o->kind != s->kind && strcmp(gen_op_mlir(o->kind), gen_op_mlir(s->kind)) != 0) ||
      gen_op_async(o) != s->async || shared(o) != (s->shared == 1))
    return 0;
  int bucket = o->ndeps >= 2 ? 2 : o->ndeps;
  if (s->view == 1 && !gen_op_has_view(o))
    return 0;
  if (s->unthreaded && o->threaded)
    return 0;
  if (s->elem > 0 && o->belem != s->elem)
    return 0;
  if (s->stream && !gen_op_on_stream(o))
    return 0;
  if (s->pending && o->fresh)
    return 0;
  if (s->space && !o->space)
    return 0;
  if (s->ranked && !o->ranked)
    return 0;
  return s->deps < 0 || s->deps == bucket;
}

int gen_op_threaded(const GenCase *c, int i) {
  if (i <= 0 || i >= c->nops || c->ops[i].ndeps != 1)
    return 0;
  const GenOp *o = &c->ops[i];
  return gen_op_threads_to(&c->ops[i - 1], o->ctx, o->blk, o->deps[0]);
}

int gen_op_threads_to(const GenOp *p, int ctx, int blk, int tok) {
  /* the op before it in the rendering: of its context and block (a block's or region's body
   * follows the op that runs it), a gpu op whose token it is */
  int gpu = (gen_op_flags(p->kind) & GEN_K_ASYNC) ||
            ((gen_op_flags(p->kind) & GEN_K_EITHER) && gen_op_async(p));
  return gpu && p->ctx == ctx && p->blk == blk && p->tok >= 0 && p->tok == tok;
}

void gen_op_mark(const GenCase *c, int i, GenOp *o) {
  *o = c->ops[i];
  o->threaded = (uint8_t)gen_op_threaded(c, i);
  int fresh = o->ndeps > 0;
  for (int d = 0; d < o->ndeps && fresh; d++) { /* (its maker: the last op before it with it) */
    int j = i - 1;
    while (j >= 0 && c->ops[j].tok != o->deps[d])
      j--;
    fresh = j >= 0 && c->ops[j].kind == GEN_OP_WAIT_ASYNC && c->ops[j].ndeps == 0;
  }
  o->fresh = (uint8_t)fresh;
  o->belem = (gen_op_flags(o->kind) & GEN_K_TYPED) && o->buf >= 0 && o->buf < c->nbufs
                 ? (uint8_t)(1 + gen_elem_storage(c->bufs[o->buf].elem))
                 : 0;
}

int gen_case_has_shape(const GenCase *c, const GenShape *shapes, int n) {
  for (int i = 0; i < c->nops; i++) {
    GenOp o;
    gen_op_mark(c, i, &o);
    for (int k = 0; k < n; k++)
      if (gen_op_has_shape(&o, &shapes[k]))
        return 1;
  }
  return 0;
}

const char *gen_gpu_mix_name(int i) {
  static const char *const names[GEN_GPU_MIX__COUNT] = {
#define GEN__GPU_MIX_NAME(id, name, help) name,
      GEN_GPU_MIX_MAP(GEN__GPU_MIX_NAME)
#undef GEN__GPU_MIX_NAME
  };
  return i >= 0 && i < GEN_GPU_MIX__COUNT ? names[i] : "?";
}

unsigned gen_case_gpu_mix(const GenCase *c) {
  /* a fresh root (a gpu.wait async of nothing) orders nothing: a dependency on it is none */
  char *fresh = af_calloc((size_t)c->ntoks + 1, 1);
  for (int i = 0; fresh && i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    if (o->kind == GEN_OP_WAIT_ASYNC && o->ndeps == 0 && o->tok >= 0 && o->tok < c->ntoks)
      fresh[o->tok] = 1;
  }
  unsigned m = 0;
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    int gpu = (gen_op_flags(o->kind) & (GEN_K_ARGS | GEN_K_TYPED)) != 0; /* device work */
    if (!gpu)
      continue;
    int ordered = 0;
    for (int d = 0; d < o->ndeps && !ordered; d++)
      ordered = !fresh || o->deps[d] < 0 || o->deps[d] >= c->ntoks || !fresh[o->deps[d]];
    if (ordered)
      m |= 1u << (gen_kind_launches(o->kind)            ? GEN_GPU_MIX_LAUNCH
                  : (gen_op_flags(o->kind) & GEN_K_SRC) ? GEN_GPU_MIX_COPY
                                                        : GEN_GPU_MIX_MEMSET);
    if (gen_op_on_stream(o))
      m |= 1u << GEN_GPU_MIX_STREAM;
    if (o->ctx > 0)
      m |= 1u << GEN_GPU_MIX_REGION;
  }
  af_free(fresh);
  return m;
}
