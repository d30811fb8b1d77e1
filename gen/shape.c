/*
 * shape.c: op shapes, to steer generation away from what is already known. A shape is an op
 * kind, whether it is async, and how many dependencies it has (0, 1, 2 or more), as the
 * mlir-opt lowering's verdicts name the op that stopped a case ("gpu.launch_func async
 * deps=2+", "gpu.alloc"): the MLIR spelling of an op is the one render.c writes.
 */
#include "gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int op_async(const GenOp *o) {
  switch (o->kind) {
  case GEN_OP_WAIT_ASYNC:
  case GEN_OP_MEMCPY:
  case GEN_OP_MEMSET:
  case GEN_OP_LAUNCH:
    return 1;
  case GEN_OP_ALLOC:
  case GEN_OP_DEALLOC:
    return o->async != 0;
  default:
    return 0;
  }
}

int gen_op_is_sync(const GenOp *o) {
  switch (o->kind) {
  case GEN_OP_HOST_WAIT:
  case GEN_OP_OBSERVE:
  case GEN_OP_AWAIT:
  case GEN_OP_EXECUTE:
  case GEN_OP_STREAM_SYNC:
  case GEN_OP_STREAM_DESTROY:
    return 1;
  case GEN_OP_ALLOC:
  case GEN_OP_DEALLOC:
    return !o->async;
  default:
    return 0;
  }
}

int gen_shape_parse(const char *text, GenShape *out) {
  static const struct {
    const char *name;
    int kind_async, kind_sync; /* the case op of the async and the synchronous form, or -1 */
  } ops[] = {{"gpu.launch_func", GEN_OP_LAUNCH, -1},
             {"gpu.memcpy", GEN_OP_MEMCPY, -1},
             {"gpu.memset", GEN_OP_MEMSET, -1},
             {"gpu.alloc", GEN_OP_ALLOC, GEN_OP_ALLOC},
             {"gpu.dealloc", GEN_OP_DEALLOC, GEN_OP_DEALLOC},
             {"gpu.wait", GEN_OP_WAIT_ASYNC, GEN_OP_HOST_WAIT}};
  size_t n = strcspn(text, " |");
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    if (strlen(ops[k].name) != n || strncmp(text, ops[k].name, n) != 0)
      continue;
    const char *rest = text + n;
    size_t rlen = strcspn(rest, "|");
    char buf[64];
    snprintf(buf, sizeof buf, "%.*s", (int)(rlen < 63 ? rlen : 63), rest);
    int async = strstr(buf, " async") != NULL;
    int kind = async ? ops[k].kind_async : ops[k].kind_sync;
    if (kind < 0)
      return -1;
    const char *d = strstr(buf, " deps=");
    out->kind = kind;
    out->async = async;
    out->deps = d == NULL ? -1 : d[6] == '2' ? 2 : d[6] == '1' ? 1 : 0;
    out->view = strstr(buf, " view") ? 1 : -1;
    return 0;
  }
  return -1;
}

void gen_shape_format(const GenOp *o, char *out, size_t n) {
  static const char *const names[GEN_OP__COUNT] = {
      [GEN_OP_WAIT_ASYNC] = "gpu.wait",
      [GEN_OP_ALLOC] = "gpu.alloc",
      [GEN_OP_DEALLOC] = "gpu.dealloc",
      [GEN_OP_MEMCPY] = "gpu.memcpy",
      [GEN_OP_MEMSET] = "gpu.memset",
      [GEN_OP_LAUNCH] = "gpu.launch_func",
      [GEN_OP_HOST_WAIT] = "gpu.wait",
      [GEN_OP_OBSERVE] = "observe",
      [GEN_OP_EXECUTE] = "async.execute",
      [GEN_OP_AWAIT] = "async.await",
      [GEN_OP_STREAM_CREATE] = "llvm.call @mgpuStreamCreate",
      [GEN_OP_STREAM_SYNC] = "llvm.call @mgpuStreamSynchronize",
      [GEN_OP_STREAM_DESTROY] = "llvm.call @mgpuStreamDestroy",
      [GEN_OP_CALL] = "func.call",
      [GEN_OP_IF] = "scf.if",
      [GEN_OP_FOR] = "scf.for",
      [GEN_OP_BRANCH] = "cf.cond_br"};
  const char *name = o->kind < GEN_OP__COUNT ? names[o->kind] : "?";
  if (strncmp(name, "gpu.", 4) != 0) {
    snprintf(out, n, "%s", name);
    return;
  }
  int bucket = o->ndeps >= 2 ? 2 : o->ndeps;
  snprintf(out, n, "%s%s deps=%d%s%s", name, op_async(o) ? " async" : "", bucket,
           bucket == 2 ? "+" : "", gen_op_has_view(o) ? " view" : "");
}

int gen_op_has_shape(const GenOp *o, const GenShape *s) {
  if (o->kind != s->kind || op_async(o) != s->async)
    return 0;
  int bucket = o->ndeps >= 2 ? 2 : o->ndeps;
  if (s->view == 1 && !gen_op_has_view(o))
    return 0;
  return s->deps < 0 || s->deps == bucket;
}

int gen_case_has_shape(const GenCase *c, const GenShape *shapes, int n) {
  for (int i = 0; i < c->nops; i++)
    for (int k = 0; k < n; k++)
      if (gen_op_has_shape(&c->ops[i], &shapes[k]))
        return 1;
  return 0;
}
