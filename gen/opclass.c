/*
 * opclass.c: each op kind's class (gen_int.h), in GEN_OP_MAP's order: the table the concern
 * files dispatch through. A row of GEN_OP_MAP without its class does not link.
 */
#include "gen_int.h"

const GenOpClass *const gen__classes[GEN_OP__COUNT] = {
#define GEN__CLASS_ROW(id, lc, name, mlir, weight, flags) [GEN_OP_##id] = &gen__class_##lc,
    GEN_OP_MAP(GEN__CLASS_ROW)
#undef GEN__CLASS_ROW
};
