/*
 * gen.h: the Case (a token DAG of GPU operations), its JSON form, its validator, its MLIR
 * rendering and the seeded random generator. The Case is the exchange type of the pipeline:
 * lower/ turns it into a Program, oracle/ executes it sequentially, reduce/ shrinks it.
 *
 * Layout. All ops of a case live in one array in "inline order": an `execute` op is
 * followed directly by the ops of its region body (whose ctx is the region's index), then
 * its parent's ops continue. ctx 0 is the host's main function. A region body is therefore
 * the contiguous range regions[r].first .. regions[r].last of ops with ctx == r, plus the
 * bodies of regions nested in it. Tokens, buffers and regions are small integers; the JSON
 * form names them t<N>, b<N>, r<N> (and r<N>.<K> for the K-th value a region yields).
 *
 * Ownership: a GenCase owns all its arrays; gen_case_free() releases them.
 */
#ifndef GEN_GEN_H
#define GEN_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "../base/afbase.h"

#define GEN_FORMAT_VERSION                                                                         \
  2                         /* the newest; version 1 (no captures, no explicit streams) still      \
                                loads, and a case without a version-2 construct is still written   \
                                as version 1 */
#define GEN_MAX_DEPS 4      /* dependencies of one op */
#define GEN_MAX_REGION_IO 4 /* inputs and yielded values of one region */

typedef enum GenOpKind {
  GEN_OP_WAIT_ASYNC,     /* %t = gpu.wait async [deps] */
  GEN_OP_ALLOC,          /* %b[, %t] = gpu.alloc [async [deps]] [host_shared] */
  GEN_OP_DEALLOC,        /* [%t =] gpu.dealloc [async [deps]] %b */
  GEN_OP_MEMCPY,         /* %t = gpu.memcpy async [deps] %dst, %src */
  GEN_OP_MEMSET,         /* %t = gpu.memset async [deps] %dst, %value */
  GEN_OP_LAUNCH,         /* %t = gpu.launch_func async [deps] kernel(args..., value, spin) */
  GEN_OP_HOST_WAIT,      /* gpu.wait [deps]: the host blocks until deps complete */
  GEN_OP_OBSERVE,        /* the host reads buffer %b: what the oracle compares */
  GEN_OP_EXECUTE,        /* async.execute region: spawns regions[region] */
  GEN_OP_AWAIT,          /* async.await of a region's value (token) or of its completion */
  GEN_OP_STREAM_CREATE,  /* the program makes stream `stream` (version 2) */
  GEN_OP_STREAM_SYNC,    /* the host blocks until the work enqueued on `stream` is done */
  GEN_OP_STREAM_DESTROY, /* the host synchronizes `stream`, then destroys it */
  GEN_OP_CALL,   /* [%t =] func.call of a private callee whose body is blocks[block] (version 2) */
  GEN_OP_IF,     /* [%t =] scf.if on a condition computed at run time: blocks[block] is the
                    branch taken; the other one only yields (version 2) */
  GEN_OP_FOR,    /* %t = scf.for, a run-time trip count, a token carried as iter_arg */
  GEN_OP_BRANCH, /* cf.cond_br to two blocks that branch on to one block; blocks[block] is the
                    block taken; the merge block's argument is %t (version 2) */
  GEN_OP__COUNT
} GenOpKind;

typedef enum GenAllocMode { GEN_ALLOC_ASYNC, GEN_ALLOC_SYNC, GEN_ALLOC_HOST_SHARED } GenAllocMode;
typedef enum GenBufKind { GEN_BUF_HOST, GEN_BUF_DEVICE } GenBufKind;

typedef struct GenOp {
  uint8_t kind;  /* GenOpKind */
  uint8_t async; /* alloc/dealloc: 1 when async (has deps and a token) */
  uint8_t mode;  /* alloc: GenAllocMode */
  uint8_t kernel;
  int32_t ctx; /* 0: host main; r: body of region r */
  int32_t tok; /* token defined by this op, or -1 */
  int32_t ndeps;
  int32_t deps[GEN_MAX_DEPS];
  int32_t buf;   /* alloc, dealloc, memset and memcpy destination, observe */
  int32_t src;   /* memcpy source */
  int32_t nargs; /* launch: buffers, args[0] is written */
  int32_t args[3];
  int32_t value;  /* memset value, launch scalar */
  int32_t region; /* execute, await */
  int32_t vidx;   /* await: value index, or -1 to await completion only */
  int32_t stream; /* launch: the explicit stream it is enqueued on (-1: none, the lowering picks
                     one); stream ops: their stream (version 2) */
  int32_t blk;    /* the block whose body this op is in (0: none) */
  /* memcpy (dst 0, src 1), memset (dst 0), launch (args[k] as k): the operand as a view of its
   * buffer, a memref.subview of `len` elements from `off`, `stride` apart; len 0: the whole
   * buffer (version 2) */
  int32_t view[3][3];
  int32_t block; /* call, if, for, branch: the block it runs */
} GenOp;

/* Element types. Kernels take i32 buffers only; memcpy and memset (not of i64: no runtime call
 * sets 64-bit elements) take any (version 2). */
typedef enum GenElem {
  GEN_ELEM_I32,
  GEN_ELEM_I16,
  GEN_ELEM_I64,
  GEN_ELEM_F32,
  GEN_ELEM__COUNT
} GenElem;

typedef struct GenBuf {
  uint8_t kind; /* GenBufKind */
  int32_t n;    /* elements */
  int32_t init; /* host buffers: initial content kernel_host_init_value(init, i), as the type */
  uint8_t elem; /* GenElem */
  uint8_t stat; /* device: allocated with a static shape, used through a memref.cast to the
                   dynamic memref<?xT> (version 2) */
} GenBuf;

/* "i32", "i16", "i64", "f32"; bytes per element; the type of that name or -1. */
const char *gen_elem_name(int e);
int gen_elem_size(int e);
int gen_elem_lookup(const char *name);
/* The 32-bit words that hold one element of type e as observations carry it: i16 sign-extended,
 * f32 as its bits, i64 as its low then its high word (2 words); v is the element's integer
 * value (memset value, or initial content). Returns the number of words (1 or 2). */
int gen_elem_words(int e, int64_t v, int32_t *w);

typedef struct GenRegionInput {
  int32_t region, vidx; /* the value consumed: regions[region] yields[vidx] */
  int32_t tok;          /* the token it is bound to inside this region */
} GenRegionInput;

/* A token of the spawning context that the region body uses directly (MLIR: an SSA value
 * captured by async.execute), bound inside the region as tok (version 2). */
typedef struct GenRegionCapture {
  int32_t outer; /* a token of the region's parent context, defined before the execute op */
  int32_t tok;   /* its name inside the region */
} GenRegionCapture;

/* The body of a call, if, for or branch op (version 2). It runs inline, in the host context of
 * its op, once, in the case's meaning: a for op runs it `trips` times, and the rules make every
 * iteration do the same (see docs/case-format.md). Its ops are the ones after its op whose blk
 * is this block; blocks do not nest, and a body holds no execute op. A token crosses into the
 * body as an input (a call's argument, a for's iter_arg, a branch's block argument; if, for and
 * branch bodies may also use their context's tokens directly) and out of it as the op's token,
 * bound to the token the body yields. */
typedef struct GenBlock {
  int32_t op;          /* its call/if/for/branch op */
  int32_t first, last; /* body ops: [first, last] (last < first: empty) */
  int32_t ninputs;
  GenRegionCapture inputs[GEN_MAX_REGION_IO]; /* outer token, and its name inside */
  int32_t yield;                      /* the body's token the op's token stands for, or -1 */
  int32_t taken;                      /* if, branch: 1 when the live body is the true
                                         successor, 0 when the condition is false */
  int32_t trips;                      /* for: iterations at run time (1..64) */
  int32_t nbufargs;                   /* branch: buffers passed to the live block as block */
  int32_t bufargs[GEN_MAX_REGION_IO]; /* arguments, which its body then names (same buffers) */
} GenBlock;

typedef struct GenRegion {
  int32_t exec_op; /* index of the execute op; its ctx is the parent */
  int32_t parent;
  int32_t first, last; /* body ops: [first, last] in inline order (last < first: empty) */
  int32_t ninputs;
  GenRegionInput inputs[GEN_MAX_REGION_IO];
  int32_t ncaptures;
  GenRegionCapture captures[GEN_MAX_REGION_IO];
  int32_t nyields;
  int32_t yields[GEN_MAX_REGION_IO]; /* tokens of this region yielded as values */
} GenRegion;

/* Generator knobs. Every case stores the config and seed that made it. */
typedef struct GenConfig {
  int ops;             /* target number of ops (the generator adds a few to close the case) */
  int buffers;         /* most device buffers alive at once */
  int host_bufs;       /* host buffers */
  int elems;           /* elements per buffer */
  int max_deps;        /* most dependencies per op (1..GEN_MAX_DEPS) */
  int extra_dep_pct;   /* chance of adding a not-needed dependency */
  int region_pct;      /* chance that a step opens an execute region */
  int max_nesting;     /* region nesting depth */
  int spin;            /* kernel spin count */
  int host_shared_pct; /* share of allocations that are host_shared */
  int sync_pct;        /* share of allocs/deallocs that are synchronous */
  int capture_pct;     /* chance that a region captures tokens of its spawning context, and that
                          an op of such a region depends on one (version 2) */
  int extra_wait_pct;  /* chance per step of a host `gpu.wait` that orders nothing new: one with
                          no operands, or one on tokens a host wait already completed */
  int root_wait_pct;   /* chance that an async op with no dependency gets a fresh `gpu.wait
                          async` token as its one (the form gpu-async-region makes) */
  int stream_pct;      /* chance that a launch is enqueued on an explicit stream the program
                          creates itself (version 2) */
  int block_pct;       /* chance per step of a call, if, for or branch block (version 2) */
  int typed_pct;       /* share of buffers (but the first host one) of i16, i64 or f32: used by
                          memcpy and memset only (version 2) */
  int view_pct;        /* chance that a memcpy or memset works on memref.subviews (version 2) */
  /* op mix weights */
  int w_launch, w_memcpy, w_memset, w_alloc, w_dealloc, w_wait_async, w_host_wait, w_observe;
} GenConfig;

typedef struct GenCase {
  int version;
  uint64_t seed;
  int has_config;
  GenConfig cfg;
  int spin;
  int nbufs, capbufs;
  GenBuf *bufs;
  int nops, capops;
  GenOp *ops;
  int nregions, capregions; /* regions[0] is unused (ctx 0 is main) */
  GenRegion *regions;
  int nblocks, capblocks; /* blocks[0] is unused (blk 0: no block) */
  GenBlock *blocks;
  int ntoks;    /* token ids are 0..ntoks-1 */
  int nstreams; /* explicit stream ids are 0..nstreams-1 */
} GenCase;

/* ---- model ---- */

/* Default generator knobs. */
void gen_config_default(GenConfig *c);
/* Name of an op kind ("launch"...). */
const char *gen_op_name(int kind);
/* Initializes an empty case (one main context, no ops). */
void gen_case_init(GenCase *c);
void gen_case_free(GenCase *c);
/* Deep copy: dst is initialized by this call. 0 or AF_ENOMEM. */
int gen_case_copy(GenCase *dst, const GenCase *src);
/* Appends an op / buffer / region; returns its index or AF_ENOMEM. */
int gen_case_add_op(GenCase *c, const GenOp *op);
int gen_case_add_buf(GenCase *c, const GenBuf *b);
int gen_case_add_region(GenCase *c, const GenRegion *r);
int gen_case_add_block(GenCase *c, const GenBlock *b);
/* Recomputes ntoks, nstreams and each region's and block's [first, last] from the ops. 0 or
 * AF_EINVALID. */
int gen_case_finish(GenCase *c, AfErr *err);
/* Number of ops that count toward case size (what reduce minimizes). */
int gen_case_size(const GenCase *c);
/* Stable 64-bit hash of the case content (its canonical JSON). */
uint64_t gen_case_hash(const GenCase *c);
/* Operand k (memcpy, memset: 0 dst, 1 src; launch: args[k]) of op o as a view: its offset,
 * length and stride in elements (the whole buffer when it has no view). */
void gen_op_view(const GenCase *c, const GenOp *o, int k, int32_t *off, int32_t *len,
                 int32_t *stride);
/* Whether any operand of o is a view. */
int gen_op_has_view(const GenOp *o);
/* Buffer accessed by op i as (buf, write) pairs; returns how many (<= 4). */
int gen_op_accesses(const GenCase *c, int i, int32_t *bufs, int *writes);

/* ---- JSON (cJSON) ---- */

/* Parses a case from JSON text. On error returns AF_EPARSE or AF_EINVALID with a message
 * naming the op and the reason; c is then left empty. The case is not validated. */
int gen_case_from_json(GenCase *c, const char *text, AfErr *err);
/* Loads a case file. AF_EIO when the file cannot be read. */
int gen_case_load(GenCase *c, const char *path, AfErr *err);
/* Canonical JSON (deterministic bytes); the caller frees with af_free. NULL on OOM. */
char *gen_case_to_json(const GenCase *c);
/* Writes the JSON to path atomically (temporary file, then rename). */
int gen_case_save(const GenCase *c, const char *path, AfErr *err);

/* ---- validation ---- */

/* Checks every rule of a valid Case (ARCHITECTURE.md "The Case"): tokens defined once and
 * before use in their own context, buffers written before read, no use after dealloc, dealloc
 * ordered after every use, every conflicting pair ordered by the token DAG, every region
 * awaited. Returns 0, or AF_EINVALID with err naming the first violating op. */
int gen_validate(const GenCase *c, AfErr *err);

/* ---- MLIR rendering ---- */

/* Renders the case as an MLIR module in the gpu dialect (plus func, memref, arith, scf,
 * async) with the sentinel kernels as gpu.func. Returns text owned by the caller, or NULL. */
char *gen_render_mlir(const GenCase *c);
/* Renders cases cs[0..n) as one module for one mlir-runner process: one kernel module (with
 * the kernels the cases launch), case
 * i's host code as func @af_case_<ids[i]>, and @main calling each once per schedule j <
 * nsched between asyncfuzz_case_begin(id, j) and asyncfuzz_case_end(id, j). Returns text
 * owned by the caller. */
char *gen_render_mlir_batch(const GenCase *const *cs, const int *ids, int n, int nsched);
/* Where each case op's operation stands in a rendering: op[L - 1] is the index (in its case) of
 * the op whose operation starts on line L, or -1. MLIR's locations of the parsed module name
 * these lines, and survive lowering. The caller frees op with af_free. */
typedef struct GenLineMap {
  int32_t *op;
  int nlines, cap;
  int oom;
} GenLineMap;
/* gen_render_mlir_batch, with the rendering's line map (map may be NULL). */
char *gen_render_mlir_batch_map(const GenCase *const *cs, const int *ids, int n, int nsched,
                                GenLineMap *map);

/* ---- op shapes (shape.c) ---- */

/* An op's shape: its kind, whether it is async, and a dependency bucket (0, 1, 2 for two or
 * more; -1 in a pattern: any). */
typedef struct GenShape {
  int kind, async, deps;
  int view; /* 1: a memcpy or memset of a memref.subview ("... view"); -1: any */
} GenShape;
/* Parses an op shape as the mlir-opt lowering's verdicts name the op that stopped a case, in
 * the MLIR spelling the renderer writes ("gpu.launch_func async deps=2+", "gpu.alloc"); the
 * text may go on after a '|'. 0 and *out, or -1 when it names no case op. */
int gen_shape_parse(const char *text, GenShape *out);
/* Whether op o is synchronous on the host (a host wait, an observe, an await, an execute, a
 * synchronous alloc or dealloc): it orders every later op of its context after it. */
int gen_op_is_sync(const GenOp *o);
/* Op o's shape in that spelling ("gpu.launch_func async deps=2+", "gpu.wait deps=1"; the ops
 * that are not gpu ops: "observe", "async.execute", "async.await"). */
void gen_shape_format(const GenOp *o, char *out, size_t n);
/* Whether op o has shape s. */
int gen_op_has_shape(const GenOp *o, const GenShape *s);
/* Whether case c has an op of one of shapes[0..n). */
int gen_case_has_shape(const GenCase *c, const GenShape *shapes, int n);

/* ---- generator ---- */

/* Swarm testing: knobs for the case of `seed`, drawn around base (op count up to base's,
 * features and op kinds left out at random). Deterministic in (base, seed). */
void gen_config_swarm(const GenConfig *base, uint64_t seed, GenConfig *out);
/* Generates a valid case from (seed, config); the same inputs give byte-identical JSON. */
int gen_generate(GenCase *c, uint64_t seed, const GenConfig *cfg, AfErr *err);

#endif
