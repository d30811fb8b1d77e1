/*
 * gen_int.h: internals of gen/, shared by its files only.
 *
 * Each op kind has a class (GenOpClass): how an op of the kind is read from the case format,
 * written to it, checked, rendered as MLIR and drawn by the generator. The classes of a family
 * of kinds share a file: op_data.c (alloc, dealloc, memcpy, memset), op_launch.c, op_wait.c
 * (wait_async, host_wait, observe), op_region.c (execute, await), op_block.c (call, if, for,
 * branch), op_stream.c (the stream ops). opclass.c gathers them in GEN_OP_MAP's order.
 *
 * The concern files dispatch to the classes: case_read.c (the reader), case.c (the writer),
 * validate.c (the validator), render.c (the renderer), generate.c (the generator). The classes
 * use each concern's shared pieces: json.c (names, tokens, buffers and bindings of the case
 * format), vgraph.c (the validator's ordering graph), render_util.c (render_int.h: SSA names,
 * views, bodies), genstate.c (genpriv.h: the generator's tokens and buffers), model.c (the Case).
 * A class reaches the bodies of regions and blocks through its concern's body hook (Parser.body,
 * GenWriter.body, R.body, G.gen_body), so no class calls back into a concern file.
 */
#ifndef GEN_GEN_INT_H
#define GEN_GEN_INT_H

#include "genpriv.h"
#include "render_int.h"

#include <cjson/cJSON.h>

/* ---- the reader (case_read.c; json.c) ---- */

/* A name table: names of tokens, buffers, regions and streams to ids (linear probing). */
typedef struct NameMap {
  char **keys;
  int *vals;
  int cap, n;
} NameMap;

typedef struct Parser {
  GenCase *c;
  AfErr *err;
  NameMap toks, bufs, regions, streams;
  int *tok_def; /* op index (or -2 for a region input) defining each token */
  int captokdef;
  int blk; /* the block whose body is being parsed (0: none) */
  /* parses the ops of a body into context ctx (case_read.c) */
  int (*body)(struct Parser *p, const cJSON *body, int ctx);
} Parser;

void gen__nm_free(NameMap *m);
/* The id of name k, or -1. */
int gen__nm_find(const NameMap *m, const char *k);
/* Adds k as id v. 0 or AF_ENOMEM. */
int gen__nm_put(NameMap *m, const char *k, int v);
/* An error of the op being parsed: "op #N: " and fmt with a and b (NULL: ""); returns rc. */
int gen__perr(Parser *p, int rc, const char *fmt, const char *a, const char *b);
/* Field key of o as a string (NULL: absent or not one), as an int (-1: absent or not one). */
const char *gen__jstr(const cJSON *o, const char *key);
int gen__jint(const cJSON *o, const char *key, int *out);
/* Token name defined by op `def` (a new id in *out), or used (a known one). */
int gen__def_token(Parser *p, const char *name, int def, int *out);
int gen__use_token(Parser *p, const char *name, int *out);
/* The buffer that field key of o names. */
int gen__use_buf(Parser *p, const cJSON *o, const char *key, int *out);
/* The op's "stream": a new name when `define` (a stream_create), else one created before. */
int gen__use_stream(Parser *p, const cJSON *o, int define, int32_t *out);
/* [{"token": OUTER, "as": NAME}...]: tokens of the context bound to new names (defined by def). */
int gen__parse_bindings(Parser *p, const cJSON *arr, const char *what, int def,
                        GenRegionCapture *out, int32_t *n);

/* ---- the writer (case.c; json.c) ---- */

typedef struct GenWriter {
  AfBuf *b;
  const GenCase *c;
  /* writes ops [from, to] of context ctx and block blk at depth; 1 when it wrote any (case.c) */
  int (*body)(struct GenWriter *w, int from, int to, int ctx, int blk, int depth);
} GenWriter;

void gen__indent(AfBuf *b, int depth);
void gen__put_inputs(AfBuf *b, const GenRegionCapture *in, int n);

/* ---- the validator (validate.c; vgraph.c) ---- */

typedef struct V {
  const GenCase *c;
  AfErr *err;
  int nnodes, words;
  uint64_t *reach; /* nnodes * words */
  int *tok_src;    /* node producing each token (-1: not yet defined) */
  int *tok_ctx;
  int *tok_blk; /* block whose body defines each token (0: none) */
  int *tok_defs;
  int *last_sync;           /* per context */
  int *awaited;             /* per region */
  int *closes, *close_next; /* the regions each op ends (gen_region_ends) */
  /* per explicit stream: its stream_create, its last launch (-1: none), its stream_destroy */
  int *s_create, *s_last, *s_destroy;
  /* per buffer */
  int *alloc_node, *alloc_ctx, *dealloc_node, *last_write;
  int *nreads, *capreads;
  int **reads;
  void *blk; /* the block that holds every table above but the reads themselves */
} V;

/* The nodes of region r's start and end (after the ops' nodes). */
#define START(v, r) ((v)->c->nops + 2 * (r))
#define END(v, r) ((v)->c->nops + 2 * (r) + 1)

/* Whether node a happens before node b (a < 0: program start, before everything). */
int gen__before(V *v, int a, int b);
/* Node `to` follows node `from` and all it follows. */
void gen__edge(V *v, int from, int to);
/* The error of node i: "op #N (kind): " and fmt with a and b; AF_EINVALID. */
int gen__vfail(V *v, int i, const char *fmt, int a, int b);
/* Whether context ctx is outer or nested in it. */
int gen__in_scope(const GenCase *c, int ctx, int outer);
/* Whether token t may be used in block blk (0: outside blocks). */
int gen__blk_sees(const V *v, int blk, int t);
/* Token t defined by op i, produced by node src, in context ctx. */
int gen__define_token(V *v, int i, int t, int src, int ctx);
/* Op i's views lie inside their buffers. */
int gen__check_views(V *v, int i);
/* What op i does on its explicit stream, if any (op_stream.c; launches too). */
int gen__visit_stream(V *v, int i);
/* The start and end of region r, and the end of block b, where validate.c's walk meets them
 * (op_region.c, op_block.c). */
int gen__visit_region_start(V *v, int r);
int gen__visit_region_end(V *v, int r);
int gen__visit_block_end(V *v, int b);

/* ---- the classes (op_*.c, opclass.c) ---- */

typedef struct GenOpClass {
  /* Reads the kind's own fields of op o (views, dependencies and the token are read after: a
   * kind with a body, GEN_K_REGION or GEN_K_BLOCK, adds its op and all itself). */
  int (*parse)(Parser *p, const cJSON *o, GenOp *op, int ctx);
  /* Writes the kind's own fields (views, dependencies and the token are written after). */
  void (*put)(GenWriter *w, const GenOp *o, int depth);
  /* The kind's rules, after the rules of every op and the op's dependencies; what the op does
   * to the ordering graph and to its buffers' state. */
  int (*check)(V *v, int i);
  /* Renders op i at depth; 1 when its operation starts on the first line it wrote (an op with
   * its body in place), 0 when on the last. */
  int (*render)(R *r, int i, int depth);
  /* Draws an op of the kind in context x (the op mix); NULL: not drawn by weight. */
  void (*draw)(G *g, Ctx *x);
} GenOpClass;

#define GEN__CLASS_DECL(id, lc, name, mlir, weight, flags) extern const GenOpClass gen__class_##lc;
GEN_OP_MAP(GEN__CLASS_DECL)
#undef GEN__CLASS_DECL

/* Each kind's class, by GenOpKind (opclass.c). */
extern const GenOpClass *const gen__classes[GEN_OP__COUNT];

#endif
