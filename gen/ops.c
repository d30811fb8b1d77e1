/*
 * ops.c: the op kinds (GEN_OP_MAP in gen.h): each kind's name, MLIR operation and flags, and what
 * the flags say of an op.
 */
#include "gen.h"

#include "../kernels/kernels.h"

#include <string.h>

static const struct {
  const char *name, *mlir;
} op_kinds[GEN_OP__COUNT] = {
#define GEN__OP_ROW(id, lc, name, mlir, weight, flags) {name, mlir},
    GEN_OP_MAP(GEN__OP_ROW)
#undef GEN__OP_ROW
};

const unsigned gen__op_flags[GEN_OP__COUNT] = {
#define GEN__OP_FLAGS(id, lc, name, mlir, weight, flags) flags,
    GEN_OP_MAP(GEN__OP_FLAGS)
#undef GEN__OP_FLAGS
};

const char *gen_op_name(int kind) {
  return kind >= 0 && kind < GEN_OP__COUNT ? op_kinds[kind].name : "?";
}

const char *gen_op_mlir(int kind) {
  return kind >= 0 && kind < GEN_OP__COUNT ? op_kinds[kind].mlir : "?";
}

int gen_op_lookup(const char *name) {
  for (int k = 0; name && k < GEN_OP__COUNT; k++)
    if (strcmp(name, op_kinds[k].name) == 0)
      return k;
  return -1;
}

GenOp gen_op_blank(int kind, int ctx) {
  GenOp o;
  memset(&o, 0, sizeof o);
  o.kind = (uint8_t)kind;
  o.ctx = ctx;
  o.tok = o.buf = o.src = o.region = o.vidx = o.stream = -1;
  return o;
}

int gen_op_has_token(const GenCase *c, const GenOp *o) {
  unsigned f = gen_op_flags(o->kind);
  if (f & GEN_K_VALUE)
    return o->vidx >= 0;
  if (f & GEN_K_BLOCK)
    return o->block > 0 && o->block < c->nblocks && c->blocks[o->block].yield >= 0;
  return gen_op_async(o);
}

int gen_op_bufs(const GenOp *o, int32_t *bufs) {
  unsigned f = gen_op_flags(o->kind);
  int n = 0;
  if (f & GEN_K_ARGS) {
    n = o->nargs < 0 ? 0 : o->nargs > 3 ? 3 : o->nargs;
    memcpy(bufs, o->args, sizeof *bufs * (size_t)n);
    return n;
  }
  if (f & (GEN_K_BUF | GEN_K_WRITE | GEN_K_READ))
    bufs[n++] = o->buf;
  if (f & GEN_K_SRC)
    bufs[n++] = o->src;
  return n;
}

int gen_op_accesses(const GenCase *c, int i, int32_t *bufs, int *writes) {
  const GenOp *o = &c->ops[i];
  unsigned f = gen_op_flags(o->kind);
  int n = 0;
  if (f & GEN_K_SRC) /* (read first: an access of distinct buffers is checked per buffer) */
    bufs[n] = o->src, writes[n++] = 0;
  if (f & (GEN_K_WRITE | GEN_K_READ))
    bufs[n] = o->buf, writes[n++] = (f & GEN_K_WRITE) != 0;
  if (f & GEN_K_ARGS) {
    const KernelInfo *ki = kernel_info(o->kernel);
    for (int a = 0; ki && a < o->nargs && a < KERNEL_MAX_BUFS; a++)
      bufs[n] = o->args[a], writes[n++] = (ki->access[a] & KERNEL_WRITE) != 0;
  }
  return n;
}

void gen_region_ends(const GenCase *c, int *closes, int *next) {
  for (int i = 0; i < c->nops; i++)
    closes[i] = -1;
  for (int r = 1; r < c->nregions; r++) {
    const GenRegion *g = &c->regions[r];
    int last = g->last >= g->first ? g->last : g->exec_op;
    next[r] = -1;
    if (last >= 0 && last < c->nops) {
      next[r] = closes[last];
      closes[last] = r;
    }
  }
}

int gen_op_body_end(const GenCase *c, int i) {
  const GenOp *o = &c->ops[i];
  unsigned f = gen_op_flags(o->kind);
  int last = f & GEN_K_REGION  ? c->regions[o->region].last
             : f & GEN_K_BLOCK ? c->blocks[o->block].last
                               : i;
  return last > i ? last : i;
}
