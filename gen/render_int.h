/*
 * render_int.h: internals of the MLIR rendering, shared by render.c (the module: kernels, host
 * functions, batches) and render_ops.c (each op kind's rendering). Not a public interface.
 */
#ifndef GEN_RENDER_INT_H
#define GEN_RENDER_INT_H

#include "gen.h"

#define MT "memref<?xi32>"
#define SMT "memref<?xi32, strided<[?], offset: ?>>" /* a view form's operands */

typedef struct R {
  const GenCase *c;
  const char *fname; /* the case's host function */
  AfBuf *b;
  int k;           /* fresh SSA counter */
  GenLineMap *map; /* NULL: none wanted */
  size_t scanned;  /* bytes of b counted into line */
  int line;        /* lines completed in b */
} R;

/* Buffer b's memref type; the host hooks' name suffix for its type ("" for i32). */
const char *gen__mty(const GenCase *c, int b);
const char *gen__hook_sfx(const GenCase *c, int b);
/* A fresh i32 constant of value v, written at depth; its SSA number (%k<N>). */
int gen__i32const(R *r, int depth, int32_t v);
/* The buffers block k's body uses, as a bitmap over c's buffers; how many. */
int gen__block_bufs(const GenCase *c, int k, uint8_t *used);
/* The live body of block k, then its yield with `term` ("scf.yield", "cf.br ^X" or "return"). */
void gen__live_body(R *r, int k, int depth, const char *term, int branch);
/* Ops [from, to] of context ctx and block blk, each as its kind renders it. */
void gen__render_body(R *r, int from, int to, int ctx, int blk, int depth);

#endif
