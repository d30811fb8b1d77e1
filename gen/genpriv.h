/*
 * genpriv.h: the generator's state, shared by its files: generate.c (the driver: contexts, the
 * draw, closing main), genstate.c (tokens, buffers' accesses), genops.c (the ops of the mix),
 * regions.c (async.execute), blocks.c (call, if, for, branch), streams.c (explicit streams). Not
 * a public interface.
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
  AfRng reg; /* which host buffers are registered: drawn apart from the case's other choices, so
                that a seed makes the same case with the knob as without it, but for them */
  AfErr *err;
  int rc;
  /* tokens */
  int ntok, captok, words;
  uint64_t *anc;       /* captok rows of `words` */
  uint64_t *completed; /* per region (capregions rows): tokens a host wait completed */
  int caprows;
  int *tok_ctx;
  int *tok_blk;  /* the block whose body made each token (0: none) */
  int *tok_root; /* the token whose op made the stream each token stands for, as a lowering that
                    runs an op on its first dependency's stream makes it (itself: a new one) */
  /* buffers */
  BState *bs;
  int capbs;
  int live_dev;
  int *alive; /* the buffers not dead (owner -2), in order: what a context's ops may pick from,
                 where the case's buffers grow with its ops (gen__buf_born, gen__buf_dies) */
  int nalive, capalive;
  /* values */
  Value *vals;
  int nvals, capvals;
  /* the block whose body is being generated (blocks.c) */
  int cur_blk;       /* 0: none */
  int cur_kind;      /* its op's kind */
  int cur_iter;      /* a call's or for's input that stands for every outer token, or -1 */
  uint8_t *blk_read; /* for: buffers an op of the body read (no later op may write them) */
  void (*gen_body)(struct G *g, Ctx *x, int budget); /* generates a context's ops (gen_ctx) */
  int refit; /* ops the avoid set's other forms added (genstate.c): not counted in the budget */
  int ndata; /* copies and sets drawn so far: what draws apart from the others count by */
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

/* ---- what an access of a buffer waits for (genstate.c) ---- */

/* Whether token t is complete for ctx: none (-1), or completed by a host wait there. */
int gen__covered(G *g, int ctx, int t);
/* Adds to s what an access of buffer b (a write, or a read) needs in x: the token of its last
 * write, and for a write the tokens of the reads since, unless a host wait completed them. */
void gen__need_for(G *g, Ctx *x, TSet *s, int b, int write);
/* Turns s into at most max_deps dependencies in deps (joining the rest), shuffled; extra_ok: with
 * the knobs' chances of a fresh root token, an extra dependency, a captured token. Returns how
 * many, or -1 out of memory. */
int gen__finalize_deps(G *g, Ctx *x, TSet *s, int extra_ok, int *deps);
/* Emits async op o with the dependencies of s, finalized as gen__finalize_deps does (extras
 * drawn); returns its token, or -1 (g->rc says why). */
int gen__emit_drawn(G *g, Ctx *x, GenOp *o, TSet *s);
/* Host waits (max_deps tokens each) that complete every token of s in x. */
void gen__host_wait(G *g, Ctx *x, TSet *s);
/* Records an access of buffer b by the op of token tok. */
void gen__note_access(G *g, Ctx *x, int b, int write, int tok);
/* A buffer x owns, of kind want_kind (-1: any) and element type elem (ANY_ELEM, SETTABLE, NOT_I32,
 * or a GenElem), written before when need_written, other than not1 and not2; -1 when none. */
#define ANY_ELEM -1
#define SETTABLE -2 /* gen_elem_settable */
#define NOT_I32 -3
/* The element type of a typed buffer (--typed chose one): one of --wide-types' share of them
 * (drawn only when that is on), else i16, i64 or f32. */
int gen__draw_elem(G *g);
/* Buffer b, just added to the case, is alive (-1 on failure); it dies (owner -2). */
int gen__buf_born(G *g, int b);
void gen__buf_dies(G *g, int b);
int gen__pick_buf(G *g, Ctx *x, int want_kind, int need_written, int not1, int not2, int elem);
/* A view of `len` of a buffer's n elements into v ([offset, length, stride]): stride 1 or 2, an
 * offset that keeps it inside. */
void gen__draw_view(G *g, int n, int len, int32_t *v);

/* ---- the ops of the mix (genops.c) ---- */

/* Each makes one op of its kind in x (when x has what it needs: buffers, a free slot). */
void gen__op_alloc(G *g, Ctx *x);
void gen__op_launch(G *g, Ctx *x);
void gen__op_memcpy(G *g, Ctx *x);
/* Device buffer b's data, to a host buffer of its element type (observed first where a copy wrote
 * it; in main, a new one where there is none), with the waits it needs. */
void gen__drain(G *g, Ctx *x, int b);
/* A host buffer of main, written before the program runs (init), registered or not (drawn from
 * g->reg); -1: none (out of memory, g->rc set). */
int gen__new_host_buf(G *g, int elem, int init);
void gen__op_memset(G *g, Ctx *x);
void gen__op_wait_async(G *g, Ctx *x);
void gen__op_host_wait(G *g, Ctx *x);
void gen__op_observe(G *g, Ctx *x);
/* A dealloc of buffer b (async or synchronous, as the knobs draw it). */
void gen__op_dealloc(G *g, Ctx *x, int b);
/* With stream-end avoided: host waits that end each stream x made in block blk (0: x's own ops)
 * that no host wait or yield ends, but the one token keep stands for (-1: none). */
void gen__end_streams(G *g, Ctx *x, int blk, int keep);
/* A host gpu.wait that orders nothing new (no operands, or tokens a host wait completed). */
void gen__op_extra_wait(G *g, Ctx *x);
/* The host reads buffer b (after a host wait for its last write, when needed). */
void gen__observe(G *g, Ctx *x, int b);

/* ---- async.execute regions (regions.c) ---- */

/* A region of about budget ops spawned from x (its body made by g->gen_body), when x may nest
 * one more. */
void gen__op_execute(G *g, Ctx *x, int budget);
/* An await of one of x's child regions (of a value, or of its completion). */
void gen__op_await(G *g, Ctx *x);
/* Awaits child region r from x: a value (claiming its buffers) or its completion. */
void gen__await_region(G *g, Ctx *x, int r, int want_value);
/* Forgets r as a child x still has to await. */
void gen__drop_child(Ctx *x, int r);
/* Awaits again the values of x's children that carry buffers nobody claimed. */
void gen__claim_leftovers(G *g, Ctx *x);

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
/* Whether g makes its case under an avoid set (what only steering needs is done only then: a
 * seed makes the same case without one as before). */
int gen__steered(const G *g);
/* Whether block kind kind's token crossing is avoided (call-token, if-token, branch-token). */
int gen__crossing_avoided(const G *g, int kind);
void gen__import(G *g, TSet *s);

/* ---- the avoid set (genstate.c) ---- */

/* Whether the avoid set has op kind in form async with ndeps dependencies (-1: with some count);
 * like: the op (its views), or NULL. */
int gen__avoids(const G *g, int kind, int async, int ndeps, const GenOp *like);
int gen__avoids_construct(const G *g, int id);
/* Whether the avoid set has kind's async form with one dependency, threaded (gen_op_threaded). */
int gen__avoids_threaded(const G *g, int kind, const GenOp *like);
/* Whether views of kind's operands are avoided; whether every form of kind is. */
int gen__avoids_view(const G *g, int kind);
int gen__avoids_kind(const G *g, int kind);
/* The knobs and op mix without what the avoid set turns off (on g->cfg). */
void gen__avoid_setup(G *g);
/* An alloc's or dealloc's form: drawn (1 async), or the other when the drawn one is avoided. */
int gen__pick_async(const G *g, int kind, int drawn);
/* deps[0..nd) of op o, in a form o's shape is not avoided with (joined, completed by a host
 * wait, or a fresh root token); returns the new count, or -1 (g->rc says why). */
int gen__fit_deps(G *g, Ctx *x, const GenOp *o, int *deps, int nd);
/* Drops from s the tokens a host wait of x completed, when depending on them is avoided. */
void gen__drop_waited(G *g, Ctx *x, TSet *s);
/* A block kind for drawn: itself, or the first of kinds[0..n) not avoided; -1 when none. */
int gen__pick_block_kind(const G *g, int drawn, int n, const int *kinds);

#endif
