/*
 * render_int.h: internals of the MLIR rendering, shared by render.c (the module: kernels, host
 * functions, batches, the dispatch of ops to their kinds), render_util.c (the pieces every kind
 * uses) and the kinds' classes (gen_int.h). Not a public interface.
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
  /* renders ops [from, to] of context ctx and block blk, each as its kind does (render.c) */
  void (*body)(struct R *r, int from, int to, int ctx, int blk, int depth);
} R;

/* Buffer b's memref type; the same in memory space sp (0 or 1); the host hooks' name suffix for
 * its type ("" for i32). A ranked buffer's type is written into one of a few rotating buffers:
 * use it before the next few calls. */
const char *gen__mty(const GenCase *c, int b);
const char *gen__mty_in(const GenCase *c, int b, int sp);
/* memref<AxBxT[layout][, 1]> of rank extents shape, those in dyn ('?'), into out. */
void gen__shape_mty(int rank, const int32_t *shape, unsigned dyn, int e, int sp, const char *layout,
                    char *out, size_t n);
/* Buffer b's value name (of type type) flattened to memref<?xT> in its space, written at depth
 * (memref.collapse_shape, then a memref.cast where its shape is static): name and type
 * updated; nothing for a buffer of rank 1. */
void gen__flatten(R *r, int depth, int b, char *name, size_t n, char *type, size_t tn);
/* Buffer b's value name (of type type) reshaped to the type of rank extents shape (those in dyn
 * dynamic), in b's space: flattened, then memref.expand_shape; nothing when the type is that. */
void gen__reshape(R *r, int depth, int b, int rank, const int32_t *shape, unsigned dyn, char *name,
                  size_t n, char *type, size_t tn);
/* Kernel k's operand type (memref<?xT>, a view form's strided), into out. */
void gen__kernel_mty(int k, char *out, size_t n);
/* Kernel k's body with operands dst, a, b (memrefs) and v (i32), and %spin, each line after ind
 * (render.c): a gpu.func's, or a gpu.launch's (whose operands are the host's values). */
void gen__kernel_body(AfBuf *b, int k, const char *dst, const char *a, const char *bb,
                      const char *v, const char *ind);
/* memref<?xT> of element type e, in the default memory space; in space sp. */
const char *gen__elem_mty(int e);
const char *gen__elem_mty_in(int e, int sp);
const char *gen__hook_sfx(const GenCase *c, int b);
const char *gen__elem_sfx(int e);
/* A fresh i32 constant of value v, written at depth; its SSA number (%k<N>). */
int gen__i32const(R *r, int depth, int32_t v);
/* The buffers block k's body uses, as a bitmap over c's buffers; how many. */
int gen__block_bufs(const GenCase *c, int k, uint8_t *used);
/* The live body of block k, then its yield with `term` ("scf.yield", "cf.br ^X" or "return"). */
void gen__live_body(R *r, int k, int depth, const char *term, int branch);
/* Ops [from, to] of context ctx and block blk, each as its kind renders it (render.c; a kind
 * reaches it through R.body). */
void gen__render_body(R *r, int from, int to, int ctx, int blk, int depth);
/* Buffer b as op o names it: %bN, or the block argument a branch's live block received it as. */
void gen__buf_name(R *r, const GenOp *o, int b, char *out, size_t n);
/* Lines completed in the buffer so far; case op i starts on line `line` (1-based). */
int gen__lines_so_far(R *r);
void gen__map_line(R *r, int line, int i);
/* Indentation; token t's SSA value (a token a region captured is the spawning context's); a
 * dependency list " [%tN, ...]" (nothing without dependencies). */
void gen__ind(R *r, int depth);
int gen__tok_value(const GenCase *c, int t);
void gen__deps(R *r, const GenOp *o);
/* Operand k of op o (memcpy, memset: 0 dst, 1 src; launch: args[k]) as the op names it: the
 * buffer, or a memref.subview of it written first; its name and type. */
void gen__view_operand(R *r, const GenOp *o, int k, int depth, char *name, size_t n, char *type,
                       size_t tn);

#endif
