/*
 * genpriv.h: the generator's state, shared by its files (generate.c, genstate.c, streams.c). Not a
 * public interface.
 */
#ifndef GEN_GENPRIV_H
#define GEN_GENPRIV_H

#include "gen.h"

#define GEN__MAX_STREAMS 2 /* explicit streams alive at once in one context */

#define MAX_READERS 6
#define RECENT 8

typedef struct BState {
  int owner; /* ctx, or -1 while carried by a region value, -2 when dead */
  int written;
  int writer; /* token covering the last write (or the async alloc), -1: none */
  int nreaders;
  int readers[MAX_READERS];
  int region_private; /* allocated inside a region: must be freed there */
  int shared;         /* host_shared allocation */
} BState;

typedef struct Value {
  int region, vidx;
  int nbufs;
  int *bufs;
  int claimed;
} Value;

typedef struct Ctx {
  int id, depth;
  int recent[RECENT];
  int nrecent;
  int *children; /* regions spawned here, not yet awaited for completion */
  int nchildren, capchildren;
  int nstreams; /* explicit streams this context created and has not destroyed */
  int streams[GEN__MAX_STREAMS];
  int stream_last[GEN__MAX_STREAMS]; /* token of the last launch on each, -1: none */
  int body; /* 1: a block's body (async work and host waits only; see blocks.c) */
} Ctx;

typedef struct G {
  GenCase *c;
  GenConfig cfg;
  AfRng rng;
  AfErr *err;
  int rc;
  /* tokens */
  int ntok, captok, words;
  uint64_t *anc;       /* captok rows of `words` */
  uint64_t *completed; /* per region (capregions rows): tokens a host wait completed */
  int caprows;
  int *tok_ctx;
  int *tok_blk; /* the block whose body made each token (0: none) */
  /* buffers */
  BState *bs;
  int capbs;
  int live_dev;
  /* values */
  Value *vals;
  int nvals, capvals;
  /* the block whose body is being generated (blocks.c) */
  int cur_blk;       /* 0: none */
  int cur_kind;      /* its op's kind */
  int cur_iter;      /* a call's or for's input that stands for every outer token, or -1 */
  uint8_t *blk_read; /* for: buffers an op of the body read (no later op may write them) */
  void (*gen_body)(struct G *g, Ctx *x, int budget); /* generates a context's ops (gen_ctx) */
} G;

/* A set of tokens to wait for (small). */
typedef struct TSet {
  int n;
  int t[256];
} TSet;

/* ---- token bookkeeping (genstate.c) ---- */

/* Token t's ancestor set; the tokens a host wait in ctx completed. */
uint64_t *gen__anc_row(G *g, int t);
uint64_t *gen__done_row(G *g, int ctx);
int gen__bit(const uint64_t *row, int t);
/* Records an out-of-memory error; returns the generator's error code. */
int gen__oom(G *g);
/* An op of kind in ctx with every reference field -1. */
GenOp gen__blank(int kind, int ctx);
/* Appends o to the case; its index, or -1. */
int gen__emit(G *g, GenOp *o);
void gen__ts_add(TSet *s, int t);
/* Re-lays the bitsets out for room for `need` tokens (and every region). 0 or AF_ENOMEM. */
int gen__grow_tokens(G *g, int need);
/* Notes t as one of x's recent tokens (extra dependencies draw from them). */
void gen__remember(Ctx *x, int t);
/* A new token of x (in the block being generated, if any) whose ancestors are deps and theirs;
 * -1 on OOM. */
int gen__new_token(G *g, Ctx *x, const int *deps, int ndeps);
/* Emits async op o with dependencies deps; returns its token (-1 on OOM). */
int gen__emit_async(G *g, Ctx *x, GenOp *o, const int *deps, int ndeps);
/* A gpu.wait async on deps; its token. */
int gen__join(G *g, Ctx *x, const int *deps, int n);
/* Drops tokens implied by another member. */
void gen__ts_minimize(G *g, TSet *s);

/* ---- explicit streams (streams.c) ---- */

/* For a launch: with the stream_pct chance, a stream of x to enqueue it on (created here when x
 * has none to reuse), or -1. The tokens s holds that the stream's earlier work implies are
 * dropped: the stream orders the launch after them. */
int gen__pick_stream(G *g, Ctx *x, TSet *s);
/* The launch on stream slot k of x made token t: t follows the stream's earlier work. */
void gen__stream_launched(G *g, Ctx *x, int k, int t);
/* A host stream_sync or stream_destroy of one of x's streams, when it has one (the host then
 * knows the stream's work complete). Returns 1 when it emitted one. */
int gen__stream_wait(G *g, Ctx *x);
/* Destroys every stream x still has (a context closes). */
void gen__close_streams(G *g, Ctx *x);

/* ---- call, if, for and branch blocks (blocks.c) ---- */

/* A block op of a kind drawn for x, with a body of about budget ops (made by g->gen_body). */
void gen__op_block(G *g, Ctx *x, int budget);
/* Token set s as the body being generated may use it: a token of the context that a call's or
 * for's body cannot use directly becomes the input that stands for it; a for's op with nothing
 * to wait for waits for the carried token. */
void gen__import(G *g, TSet *s);

#endif
