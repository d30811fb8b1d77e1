/*
 * ops.c: the op kinds (GEN_OP_MAP in gen.h): each kind's name, MLIR operation and flags, and what
 * the flags say of an op.
 */
#include "gen.h"

#include <string.h>

static const struct {
  const char *name, *mlir;
  unsigned flags;
} op_kinds[GEN_OP__COUNT] = {
#define GEN__OP_ROW(id, lc, name, mlir, weight, flags) {name, mlir, flags},
    GEN_OP_MAP(GEN__OP_ROW)
#undef GEN__OP_ROW
};

const char *gen_op_name(int kind) {
  return kind >= 0 && kind < GEN_OP__COUNT ? op_kinds[kind].name : "?";
}

const char *gen_op_mlir(int kind) {
  return kind >= 0 && kind < GEN_OP__COUNT ? op_kinds[kind].mlir : "?";
}

unsigned gen_op_flags(int kind) {
  return kind >= 0 && kind < GEN_OP__COUNT ? op_kinds[kind].flags : 0;
}

int gen_op_lookup(const char *name) {
  for (int k = 0; name && k < GEN_OP__COUNT; k++)
    if (strcmp(name, op_kinds[k].name) == 0)
      return k;
  return -1;
}

int gen_op_async(const GenOp *o) {
  unsigned f = gen_op_flags(o->kind);
  return (f & GEN_K_ASYNC) || ((f & GEN_K_EITHER) && o->async);
}

int gen_op_is_sync(const GenOp *o) {
  unsigned f = gen_op_flags(o->kind);
  return (f & GEN_K_HOST) || ((f & GEN_K_EITHER) && !o->async);
}
