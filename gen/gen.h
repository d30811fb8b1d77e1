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
#include "../kernels/kernels.h"

#define GEN_FORMAT_VERSION                                                                         \
  2                         /* the newest; version 1 (no captures, no explicit streams) still      \
                                loads, and a case without a version-2 construct is still written   \
                                as version 1 */
#define GEN_MAX_DEPS 4      /* dependencies of one op */
#define GEN_MAX_REGION_IO 4 /* inputs and yielded values of one region */
#define GEN_MAX_SMEM 49152  /* bytes of dynamic shared memory a launch gives (48 KiB) */

/* The op kinds: one row each, X(ID, lc, name, mlir, weight, flags).
 * - ID: GEN_OP_<ID>; lc: the kind's lower-case identifier, which names its hook in each module
 *   that works per kind (its class gen__class_<lc> in gen/op_<family>.c: parse, put, check,
 *   render, draw; lower__<lc> in lower/builtin_ops.c or builtin_flow.c; expect_<lc> in
 *   oracle/expect.c; simpler_<lc> in reduce/rewrite.c): a row without its hooks does not link;
 * - name: the case format's "op"; mlir: the MLIR operation its shape names
 *   ("gpu.launch_func async deps=2+"; gen_shape_format);
 * - weight: the generator's default weight (GenConfig.w), for the kinds of the op mix (flag
 *   GEN_K_MIX: the first rows, in the order --mix and a case's "mix" list them); the generator
 *   draws the kinds in table order, so the order of the rows is part of what a seed makes;
 * - flags: GEN_K_*, below.
 * Adding a kind: docs/architecture.md has the checklist. */
#define GEN_OP_MAP(X)                                                                              \
  X(LAUNCH, launch, "launch", "gpu.launch_func", 30,                                               \
    GEN_K_MIX | GEN_K_ASYNC | GEN_K_ARGS | GEN_K_VIEWS | GEN_K_BODY | GEN_K_LOOP |                 \
        GEN_K_ON_STREAM)                                                                           \
  X(MEMCPY, memcpy, "memcpy", "gpu.memcpy", 20,                                                    \
    GEN_K_MIX | GEN_K_SWARM | GEN_K_ASYNC | GEN_K_WRITE | GEN_K_SRC | GEN_K_VIEWS | GEN_K_BODY |   \
        GEN_K_LOOP | GEN_K_TYPED)                                                                  \
  X(MEMSET, memset, "memset", "gpu.memset", 8,                                                     \
    GEN_K_MIX | GEN_K_SWARM | GEN_K_ASYNC | GEN_K_WRITE | GEN_K_VIEWS | GEN_K_BODY | GEN_K_LOOP |  \
        GEN_K_TYPED)                                                                               \
  X(ALLOC, alloc, "alloc", "gpu.alloc", 8, GEN_K_MIX | GEN_K_SWARM | GEN_K_EITHER | GEN_K_BUF)     \
  X(DEALLOC, dealloc, "dealloc", "gpu.dealloc", 5,                                                 \
    GEN_K_MIX | GEN_K_SWARM | GEN_K_EITHER | GEN_K_BUF)                                            \
  X(WAIT_ASYNC, wait_async, "wait_async", "gpu.wait", 8,                                           \
    GEN_K_MIX | GEN_K_SWARM | GEN_K_ASYNC | GEN_K_BODY | GEN_K_LOOP)                               \
  X(HOST_WAIT, host_wait, "host_wait", "gpu.wait", 6,                                              \
    GEN_K_MIX | GEN_K_SWARM | GEN_K_HOST | GEN_K_DEPS | GEN_K_BODY)                                \
  X(OBSERVE, observe, "observe", "observe", 6, GEN_K_MIX | GEN_K_HOST | GEN_K_READ | GEN_K_MAIN)   \
  X(EXECUTE, execute, "execute", "async.execute", 0, GEN_K_HOST | GEN_K_REGION)                    \
  X(AWAIT, await, "await", "async.await", 0, GEN_K_HOST | GEN_K_VALUE)                             \
  X(STREAM_CREATE, stream_create, "stream_create", "llvm.call @mgpuStreamCreate", 0,               \
    GEN_K_STREAM | GEN_K_V2)                                                                       \
  X(STREAM_SYNC, stream_sync, "stream_sync", "llvm.call @mgpuStreamSynchronize", 0,                \
    GEN_K_HOST | GEN_K_STREAM | GEN_K_V2)                                                          \
  X(STREAM_DESTROY, stream_destroy, "stream_destroy", "llvm.call @mgpuStreamDestroy", 0,           \
    GEN_K_HOST | GEN_K_STREAM | GEN_K_V2)                                                          \
  X(CALL, call, "call", "func.call", 0, GEN_K_BLOCK | GEN_K_V2)                                    \
  X(IF, if, "if", "scf.if", 0, GEN_K_BLOCK | GEN_K_COND | GEN_K_V2)                                \
  X(FOR, for, "for", "scf.for", 0, GEN_K_BLOCK | GEN_K_COND | GEN_K_V2)                            \
  X(BRANCH, branch, "branch", "cf.cond_br", 0, GEN_K_BLOCK | GEN_K_COND | GEN_K_MAIN | GEN_K_V2)

/* What the ops of a kind are (GEN_OP_MAP's flags). */
enum {
  GEN_K_MIX = 1 << 0,     /* drawn by the generator with its weight (GenConfig.w), in the op mix */
  GEN_K_SWARM = 1 << 1,   /* swarm testing may leave the kind out of a case's mix */
  GEN_K_ASYNC = 1 << 2,   /* async: a token, dependencies; ordered on the device only */
  GEN_K_EITHER = 1 << 3,  /* async (a token, dependencies) or synchronous (as GEN_K_HOST), as the op
                            says (GenOp.async) */
  GEN_K_HOST = 1 << 4,    /* synchronous on the host: every later op of its context follows it */
  GEN_K_DEPS = 1 << 5,    /* takes dependencies without being async (a host wait) */
  GEN_K_VALUE = 1 << 6,   /* defines a token when it names a region's value (await) */
  GEN_K_REGION = 1 << 7,  /* spawns an async.execute region (its body follows it) */
  GEN_K_BLOCK = 1 << 8,   /* runs a block (call, if, for, branch) whose body follows it; defines a
                            token when the body yields one */
  GEN_K_COND = 1 << 9,    /* its block runs on a condition computed at run time from the first i32
                            host buffer */
  GEN_K_STREAM = 1 << 10, /* works on an explicit stream the program creates (GenOp.stream) */
  GEN_K_VIEWS = 1 << 11,  /* its buffer operands may be memref.subviews (GenOp.view) */
  GEN_K_BODY = 1 << 12,   /* may be in a block's body */
  GEN_K_LOOP = 1 << 13,   /* may be in a for's body (which repeats) */
  GEN_K_MAIN = 1 << 14,   /* only in the host's main function */
  GEN_K_V2 = 1 << 15,     /* needs case format version 2 */
  /* its operands: */
  GEN_K_BUF = 1 << 16,   /* a buffer, GenOp.buf (with GEN_K_WRITE or GEN_K_READ: an access) */
  GEN_K_WRITE = 1 << 17, /* writes GenOp.buf */
  GEN_K_READ = 1 << 18,  /* reads GenOp.buf */
  GEN_K_SRC = 1 << 19,   /* reads a source buffer, GenOp.src */
  GEN_K_ARGS =
      1 << 20, /* launches a kernel on its arguments, GenOp.args, accessed as the kernel says */
  GEN_K_ON_STREAM = 1 << 21, /* its work may go on a stream the program made (GenOp.stream; -1:
                              none), which orders it after that stream's earlier work */
  GEN_K_TYPED = 1 << 22      /* device work on GenOp.buf whose runtime call and meaning follow the
                               buffer's element type (a copy, a set): named by it, as `i16` */
};

typedef enum GenOpKind {
#define GEN__OP_ENUM(id, lc, name, mlir, weight, flags) GEN_OP_##id,
  GEN_OP_MAP(GEN__OP_ENUM)
#undef GEN__OP_ENUM
      GEN_OP__COUNT
} GenOpKind;

/* The op mix: the kinds with GEN_K_MIX, the first GEN_MIX_COUNT rows. */
#define GEN__OP_MIX(id, lc, name, mlir, weight, flags) +(((flags)&GEN_K_MIX) != 0)
#define GEN_MIX_COUNT (0 GEN_OP_MAP(GEN__OP_MIX))

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
  int32_t block;     /* call, if, for, branch: the block it runs */
  uint8_t threaded;  /* not in the case format: its one dependency is the token of the op just
                        before it in its block (gen_op_threaded), as the generator made it; what
                        a "deps=1 unthreaded" shape tells apart */
  uint8_t belem;     /* not in the case format: a memcpy's or memset's destination element type
                        + 1, by its storage (gen_elem_storage; gen_op_mark), what a "gpu.memset
                        async i16" shape tells apart */
  uint8_t fresh;     /* not in the case format: it has dependencies, each a fresh root (a
                        gpu.wait async of nothing), so no work to follow (gen_op_mark) */
  int32_t dims[6];   /* launch: its grid (x, y, z) then its blocks (x, y, z) (version 2); all 0:
                        one block of one thread per element (gen_op_dims) */
  uint8_t inl;       /* launch: rendered as a gpu.launch whose body is the kernel's, which the
                        pipeline outlines (version 2) */
  int32_t smem;      /* launch: bytes of dynamic shared memory it gives its kernel, whose staged
                        form (kernels.h) it then launches; 0: none, the kernel's plain form
                        (version 2) */
  uint8_t spacecast; /* alloc, dealloc of a buffer in a memory space: through the default space
                        (allocated there, then memref.memory_space_cast to the buffer's; cast
                        back to be freed) (version 2) */
  uint8_t space;     /* not in the case format: it works on a buffer in a memory space as it is
                        (gen_case_finish): what a "gpu.alloc async deps=1 space" shape tells
                        apart */
  uint8_t ranked;    /* not in the case format: it names a memref of rank 2 or 3 (gen_op_ranked;
                        gen_case_finish): what a "gpu.memcpy async deps=1 ranked" shape tells
                        apart */
} GenOp;

/* Element types (kernels/kernels.h's KERNEL_ELEM_MAP: i32, i16, i64, f32, then i8, i1, f16, bf16,
 * f64, index). Kernels and memcpy take any, all their buffers of one type (version 2); memset takes
 * the 16- and 32-bit ones (no runtime call sets elements of another width: MLIR lowers 16- and
 * 32-bit memsets only). --typed draws the first GEN_ELEM_TYPED of them, --wide-types the others. */
typedef enum GenElem {
#define GEN__ELEM_ENUM(id, name, bytes, cls) GEN_ELEM_##id = KERNEL_ELEM_##id,
  KERNEL_ELEM_MAP(GEN__ELEM_ENUM)
#undef GEN__ELEM_ENUM
      GEN_ELEM__COUNT = KERNEL_ELEM__COUNT
} GenElem;
#define GEN_ELEM_TYPED 4 /* i32 and the types of --typed; the rest are --wide-types' */

typedef struct GenBuf {
  uint8_t kind;     /* GenBufKind */
  int32_t n;        /* elements */
  int32_t init;     /* host buffers: initial content kernel_host_init_value(init, i), as the type */
  uint8_t elem;     /* GenElem */
  uint8_t stat;     /* device: allocated with a static shape, used through a memref.cast to the
                       dynamic memref<?xT> (version 2) */
  uint8_t space;    /* device: its memory space, memref<?xT, 1> (version 2); 0: the default */
  uint8_t reg;      /* host: page-locked by gpu.host_register after its initial content is written,
                       gpu.host_unregister'ed at the end (version 2): copies from the device into it
                       are truly asynchronous on a GPU, where pageable ones hide a missing wait */
  uint8_t rank;     /* device: 2 or 3, a memref<AxBxT> of shape[0..rank-1] (product n), whose
                       dimensions in dyn are dynamic (version 2); 0: one dimension, memref<?xT> */
  uint8_t dyn;      /* bit d: dimension d is dynamic (?) in the buffer's type */
  int32_t shape[3]; /* its extents */
} GenBuf;

/* "i32", "f16"...; bytes per element; the type of that name or -1. */
const char *gen_elem_name(int e);
int gen_elem_size(int e);
int gen_elem_lookup(const char *name);
/* The type that names element type e where the names of findings and op shapes carry it: the
 * integer type of its storage width (i1 is i8's, f16 and bf16 i16's, f64 and index i64's),
 * as the runtime calls and copy sizes a lowering chooses go by width; i32 and f32 their own. */
int gen_elem_storage(int e);
/* Whether a gpu.memset may set elements of type e (16- and 32-bit ones). */
int gen_elem_settable(int e);
/* The 32-bit words that hold one element of type e as observations carry it (kernel_elem_words
 * of its bits, kernel_elem_bits): 1- and 2-byte elements sign-extended, f32 as its bits, 8-byte
 * ones as their low then high word (2 words); v is the element's integer value (memset value,
 * or initial content). Returns the number of words (1 or 2). */
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

/* An op's shape: its kind, whether it is async, and a dependency bucket (0, 1, 2 for two or
 * more; -1 in a pattern: any). */
typedef struct GenShape {
  int kind, async, deps;
  int view;       /* 1: a memcpy or memset of a memref.subview ("... view"); -1: any */
  int shared;     /* an alloc: 1 a host_shared one ("gpu.alloc host_shared"), 0 any other */
  int unthreaded; /* a deps=1 shape: 1 only the op whose dependency is not the token of the op
                     just before it in its block ("deps=1 unthreaded": a pipeline that threads
                     a token through the ops, as gpu-async-region does, gives it a second one);
                     0 any */
  int elem;       /* a memcpy or memset: 1 + the GenElem of its destination ("gpu.memset async
                     i16": a runtime call for that width fails); 0 any */
  int stream;     /* a launch: 1 only one on an explicit stream ("gpu.launch_func async deps=1
                     stream"); 0 any */
  int pending;    /* 1 only an op with a dependency other than a fresh root (a gpu.wait async of
                     nothing): work it must follow ("gpu.dealloc async deps=1 pending"); 0 any */
  int space;      /* 1 only an op on a buffer in a memory space, as it is ("gpu.alloc async deps=1
                     space"); 0 any */
  int ranked;     /* 1 only an op that names a memref of rank 2 or 3 ("gpu.memcpy async deps=1
                     ranked"); 0 any */
} GenShape;
/* What steering asks the generator not to build (avoid.c): op shapes and constructs of the case
 * language, each named as the causes of findings name it. The generator expresses the same
 * ordering in another form instead (a join by gpu.wait async for an op that may not take so many
 * dependencies, a host wait before an op that may take none, an asynchronous allocation for a
 * synchronous one, a whole buffer for a view...) or leaves the construct out. Part of a case's
 * config ("avoid"), so its seed and knobs make it again. X(ID, name, words, help): words are the
 * other cause words that name it. */
#define GEN_CONSTRUCT_MAP(X)                                                                       \
  X(YIELD, "yield", "await-value", "a region yields a token (its buffers go back through it)")     \
  X(REGION_INPUT, "region-input", "", "a region takes another region's yielded token")             \
  X(CAPTURE, "capture", "into-region", "a region uses its spawning context's tokens directly")     \
  X(STREAM, "stream-order", "stream",                                                              \
    "a launch on an explicit stream ordered after its last launch by the stream alone (with it "   \
    "avoided, by a token too)")                                                                    \
  X(EXTRA_DEP, "extra-dep", "", "an extra, unneeded dependency")                                   \
  X(WAITED, "host-wait", "", "a dependency on a token a host wait already completed")              \
  X(STREAM_END, "stream-end", "leaked_stream",                                                     \
    "a stream left to the program's end (with it avoided, a host wait ends each one)")             \
  X(BLOCK_REGION, "block-in-region", "",                                                           \
    "a block (call, if, for, branch) in an async.execute region's body")                           \
  X(CALL_TOKEN, "call-token", "call-arg call-result",                                              \
    "a token passed to or returned by a func.call (with it avoided, host waits carry the order "   \
    "across the call)")                                                                            \
  X(IF_TOKEN, "if-token", "if-arg if-result",                                                      \
    "a token used in or returned by an scf.if (with it avoided, host waits carry the order)")      \
  X(BRANCH_TOKEN, "branch-token", "branch-arg merge-arg",                                          \
    "a token passed to a cf.cond_br's blocks or their merge (with it avoided, host waits carry "   \
    "the order)")                                                                                  \
  X(INLINE, "gpu-launch", "gpu.launch",                                                            \
    "a launch written as a gpu.launch body the pipeline outlines (with it avoided, "               \
    "gpu.launch_func)")                                                                            \
  X(REGISTERED, "host-register", "gpu.host_register registered-copy",                              \
    "a host buffer registered with gpu.host_register (with it avoided, pageable host memory)")     \
  X(DYNAMIC_EXTENTS, "dynamic-extents", "",                                                        \
    "a ranked buffer with dynamic extents (with it avoided, every extent static)")                 \
  X(SHARED_MEMORY, "shared-memory", "dynamic_shared_memory_size",                                  \
    "a launch that gives its kernel dynamic shared memory (with it avoided, none)")

typedef enum GenConstruct {
#define GEN__CONSTRUCT_ENUM(id, name, words, help) GEN_CONSTRUCT_##id,
  GEN_CONSTRUCT_MAP(GEN__CONSTRUCT_ENUM)
#undef GEN__CONSTRUCT_ENUM
      GEN_CONSTRUCT__COUNT
} GenConstruct;

#define GEN_MAX_AVOID 32 /* shapes one avoid set holds */
typedef struct GenAvoid {
  int nshapes;
  GenShape shapes[GEN_MAX_AVOID];
  unsigned constructs; /* 1u << GEN_CONSTRUCT_* */
} GenAvoid;

/* The generator's knobs (but the op mix, GenConfig.w), one row each: X(field, option, arg, lo,
 * hi, def, always, help). field: GenConfig's, and its key in a case's "config"; option, arg: the
 * command line's ("--ops N"); lo..hi: the values it takes; def: gen_config_default's; always:
 * a case's "config" always holds it (0: only when not 0: knobs added later, which a case made
 * before reads as 0, so its seed makes the same case); help: what --help says of it. The order
 * is the order of a case's "config" and of replay commands. */
#define GEN_KNOB_MAP(X)                                                                            \
  X(ops, "--ops", "N", 1, 100000, 32, 1, "target op count")                                        \
  X(buffers, "--buffers", "N", 1, 200, 4, 1, "most device buffers alive at once")                  \
  X(host_bufs, "--host-bufs", "N", 1, 32, 2, 1, "host buffers")                                    \
  X(elems, "--elems", "N", 1, 1024, 16, 1, "elements per buffer, 1..1024")                         \
  X(max_deps, "--max-deps", "N", 2, GEN_MAX_DEPS, 3, 1, "most dependencies per op, 2..4")          \
  X(extra_dep_pct, "--extra-deps", "PCT", 0, 100, 15, 1,                                           \
    "chance of an extra, unneeded dependency")                                                     \
  X(region_pct, "--regions", "PCT", 0, 100, 8, 1,                                                  \
    "chance per step of opening an async.execute region")                                          \
  X(max_nesting, "--nesting", "N", 0, 8, 2, 1, "region nesting depth")                             \
  X(spin, "--spin", "N", 0, 1 << 24, 64, 1, "kernel spin count")                                   \
  X(host_shared_pct, "--host-shared", "PCT", 0, 100, 10, 1, "share of host_shared allocations")    \
  X(sync_pct, "--sync", "PCT", 0, 100, 20, 1, "share of synchronous allocs/deallocs")              \
  X(root_wait_pct, "--root-wait", "PCT", 0, 100, 0, 0,                                             \
    "chance that an async op with no dependency waits on a fresh\n`gpu.wait async` token instead") \
  X(extra_wait_pct, "--extra-wait", "PCT", 0, 100, 8, 0,                                           \
    "chance per step of a host `gpu.wait` that orders nothing new:\nwith no operands, or on "      \
    "tokens "                                                                                      \
    "already waited")                                                                              \
  X(capture_pct, "--captures", "PCT", 0, 100, 30, 0,                                               \
    "chance that a region uses tokens of its spawning context\ndirectly, and that its ops depend " \
    "on them")                                                                                     \
  X(stream_pct, "--streams", "PCT", 0, 100, 20, 0,                                                 \
    "chance that a launch goes on an explicit stream the program\ncreates, synchronizes and "      \
    "destroys itself")                                                                             \
  X(block_pct, "--blocks", "PCT", 0, 100, 6, 0,                                                    \
    "chance per step of a func.call, scf.if, scf.for or cf.cond_br\nblock whose body issues "      \
    "async "                                                                                       \
    "work")                                                                                        \
  X(typed_pct, "--typed", "PCT", 0, 100, 30, 0,                                                    \
    "share of buffers of i16, i64 or f32 elements (kernels,\nmemcpy and memset take them; all "    \
    "else: i32)")                                                                                  \
  X(view_pct, "--views", "PCT", 0, 100, 15, 0,                                                     \
    "chance that a memcpy, memset or kernel launch works on\nmemref.subviews (offset, size, "      \
    "stride) of its buffers, and\nthat a device buffer is static, cast to ?xT")                    \
  X(wide_types_pct, "--wide-types", "PCT", 0, 100, 67, 0,                                          \
    "share of typed buffers of i8, i1, f16, bf16, f64 or index\nelements (the others: i16, i64, "  \
    "f32)")                                                                                        \
  X(space_pct, "--spaces", "PCT", 0, 100, 15, 0,                                                   \
    "share of device buffers (not host_shared) in memory space 1,\nmemref<?xT, 1>, which "         \
    "kernels take through a\nmemref.memory_space_cast")                                            \
  X(rank_pct, "--ranked", "PCT", 0, 100, 25, 0,                                                    \
    "share of device buffers of rank 2 or 3 (memref<4x?xT>, static\nand dynamic sizes mixed), "    \
    "copied and set as they are, in rows\nby views, flattened for kernels")                        \
  X(dims_pct, "--launch-dims", "PCT", 0, 100, 20, 0,                                               \
    "chance that a launch's grid and blocks span more than one\ndimension (gpu.launch_func "       \
    "blocks "                                                                                      \
    "in (x, y, z) threads in\n(x, y, z))")                                                         \
  X(inline_pct, "--inline", "PCT", 0, 100, 15, 0,                                                  \
    "chance that a launch is a gpu.launch whose body is the\nkernel's, outlined by the pipeline "  \
    "(the runtime knows it by\nthe tag it takes first)")                                           \
  X(smem_pct, "--shared-memory", "PCT", 0, 100, 15, 0,                                             \
    "chance that a launch gives its kernel dynamic shared memory\n(dynamic_shared_memory_size), "  \
    "through which the kernel's\nstaged form passes each thread's result")                         \
  X(registered_pct, "--registered", "PCT", 0, 100, 30, 0,                                          \
    "share of host buffers registered with gpu.host_register,\nso copies from the device into "    \
    "them are "                                                                                    \
    "truly asynchronous on a GPU")

/* Generator knobs. Every case stores the config and seed that made it. */
typedef struct GenConfig {
#define GEN__KNOB_FIELD(field, opt, arg, lo, hi, def, always, help) int field;
  GEN_KNOB_MAP(GEN__KNOB_FIELD)
#undef GEN__KNOB_FIELD
  int w[GEN_OP__COUNT]; /* the op mix: each kind's weight, w[GEN_OP_LAUNCH]... (GEN_K_MIX
                           kinds; 0 for the others) */
  GenAvoid avoid;       /* what not to build (empty: everything) */
} GenConfig;

/* A knob of GEN_KNOB_MAP, as a table row (gen_knob(i) for i < GEN_KNOB_COUNT). */
typedef struct GenKnob {
  const char *field, *option, *arg;
  long lo, hi;
  int def, always;
  const char *help;
  size_t off; /* of its field in GenConfig */
} GenKnob;
#define GEN__KNOB_COUNT(field, opt, arg, lo, hi, def, always, help) +1
#define GEN_KNOB_COUNT (0 GEN_KNOB_MAP(GEN__KNOB_COUNT))
const GenKnob *gen_knob(int i);
/* Knob k's field in c, and its value. */
int *gen_knob_field(GenConfig *c, const GenKnob *k);
int gen_knob_value(const GenConfig *c, const GenKnob *k);
/* The command-line options that give c's knobs and op mix ("--ops 32 ... --mix 30,20,..."): what
 * replay commands regenerate a case with. */
void gen_config_args(const GenConfig *c, char *out, size_t n);
/* Room for gen_config_args: every knob, the mix and a full avoid set, quoted. */
#define GEN_CONFIG_ARGS_MAX 4096

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

/* Launch o's grid (d[0..2]) and blocks (d[3..5]) for len threads' worth of elements: its own,
 * or one block of len threads. */
void gen_op_dims(const GenOp *o, int32_t len, int32_t d[6]);
/* The kernel launch o of c runs (kernels.h's KERNEL_ID): its kernel's form for its buffers'
 * element type, the view form when an operand is a view. */
int gen_op_kernel_id(const GenCase *c, const GenOp *o);

/* Whether op o of c works on a buffer in a memory space as it is: an alloc or dealloc of one
 * (not through the default space), a memcpy or memset with one among its operands (GenOp.space,
 * which gen_case_finish sets). */
int gen_op_in_space(const GenCase *c, const GenOp *o);
/* Buffer b's rank (1, 2 or 3) and the elements of one of its rows (the extents after the first
 * multiplied; its n at rank 1). */
int gen_buf_rank(const GenCase *c, int b);
int gen_buf_row(const GenCase *c, int b);
/* Whether memcpy or memset o works in rows: a view of whole rows (offset and length whole rows,
 * stride 1) of a ranked buffer's row (its destination's, else its source's), and on the other
 * side whole rows too, or a whole buffer. Then each side is a memref of that rank, its extents
 * after the first the ranked buffer's: a view a memref.subview of whole rows in every dimension
 * (memref<?x?xT, strided<[?, ?], offset: ?>>), of the buffer as it is where its shape has those
 * extents, else of it reshaped (memref.collapse_shape, memref.expand_shape) into rows of them,
 * and a whole buffer reshaped so. Returns the rank (0: not in rows) and, in ext[1..rank-1] (when
 * ext is not NULL), those extents. A view of a ranked buffer not in rows is a view of it
 * flattened. */
int gen_op_rows(const GenCase *c, const GenOp *o, int32_t *ext);
/* The elements of a row of operand k of op o where it is a view in rows (gen_op_rows), else 0. */
int gen_view_rows(const GenCase *c, const GenOp *o, int k);
/* Whether op o names a memref of rank 2 or 3: an alloc or dealloc of a ranked buffer, a memcpy
 * or memset of one whole or in rows (a kernel takes its buffers flattened). */
int gen_op_ranked(const GenCase *c, const GenOp *o);

/* Default generator knobs. */
void gen_config_default(GenConfig *c);
/* An op kind's columns of GEN_OP_MAP: its name in the case format ("launch"; "?" for no kind),
 * the MLIR operation of its shape, its GEN_K_* flags (0 for no kind); the kind of a name (-1). */
const char *gen_op_name(int kind);
const char *gen_op_mlir(int kind);
int gen_op_lookup(const char *name);
extern const unsigned gen__op_flags[GEN_OP__COUNT]; /* the flags column (ops.c) */
static inline unsigned gen_op_flags(int kind) {
  return kind >= 0 && kind < GEN_OP__COUNT ? gen__op_flags[kind] : 0;
}
/* Whether op o is async (it defines a token ordered on the device: GEN_K_ASYNC, or GEN_K_EITHER
 * in its async form). (Inline, as the next two: the generator and the lowerings ask per op.) */
/* Whether ops of kind k launch a kernel (GEN_K_ARGS); whether op o runs on a stream the program
 * made (GEN_K_ON_STREAM, and it names one). */
static inline int gen_kind_launches(int k) {
  return (gen_op_flags(k) & GEN_K_ARGS) != 0;
}
static inline int gen_op_on_stream(const GenOp *o) {
  return (gen_op_flags(o->kind) & GEN_K_ON_STREAM) && o->stream >= 0;
}
static inline int gen_op_async(const GenOp *o) {
  unsigned f = gen_op_flags(o->kind);
  return (f & GEN_K_ASYNC) || ((f & GEN_K_EITHER) && o->async);
}
/* An op of kind in context ctx, with no token and every other reference (buffers, region, value,
 * stream) -1, and the rest 0. */
GenOp gen_op_blank(int kind, int ctx);
/* Whether op o defines a token: async (gen_op_async), an await of a value, a block op whose body
 * yields one. */
int gen_op_has_token(const GenCase *c, const GenOp *o);
/* The last op of op i's body (an execute's region, a block op's block; i for an op without one,
 * or with an empty one): where the ops of i's own context go on, in inline order. */
int gen_op_body_end(const GenCase *c, int i);
/* The regions each op ends (after its last op, or its execute op when its body is empty),
 * innermost (the latest) first: for op i, closes[i], then next[r] until -1. closes has c->nops
 * entries, next c->nregions. Made once, where every op looking through every region was
 * quadratic in the case. */
void gen_region_ends(const GenCase *c, int *closes, int *next);
/* Whether op o takes dependencies (an async op, a host wait). */
static inline int gen_op_takes_deps(const GenOp *o) {
  return gen_op_async(o) || (gen_op_flags(o->kind) & GEN_K_DEPS);
}
/* Whether op o is synchronous on the host (GEN_K_HOST: a host wait, an observe, an await, an
 * execute, a stream_sync or stream_destroy; GEN_K_EITHER in its synchronous form): it orders
 * every later op of its context after it. */
static inline int gen_op_is_sync(const GenOp *o) {
  unsigned f = gen_op_flags(o->kind);
  return (f & GEN_K_HOST) || ((f & GEN_K_EITHER) && !o->async);
}
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
/* Case in numbered as its JSON reads back (ops in the order the JSON nests them; tokens, regions,
 * blocks and streams in the order the reader meets them), into out: what gen_case_from_json of
 * gen_case_to_json(in) gives, without writing and reading it. 0, or an error (out is then empty).
 */
int gen_case_renumber(const GenCase *in, GenCase *out, AfErr *err);
/* Stable 64-bit hash of the case content (its canonical JSON). */
uint64_t gen_case_hash(const GenCase *c);
/* Operand k (memcpy, memset: 0 dst, 1 src; launch: args[k]) of op o as a view: its offset,
 * length and stride in elements (the whole buffer when it has no view). */
void gen_op_view(const GenCase *c, const GenOp *o, int k, int32_t *off, int32_t *len,
                 int32_t *stride);
/* Whether any operand of o is a view. */
int gen_op_has_view(const GenOp *o);
/* The buffers op o names (an alloc's, a memcpy's destination and source, a launch's arguments...),
 * whatever it does with them; how many (<= 3). */
int gen_op_bufs(const GenOp *o, int32_t *bufs);
/* Buffer accessed by op i as (buf, write) pairs; returns how many (<= 4). */
int gen_op_accesses(const GenCase *c, int i, int32_t *bufs, int *writes);

/* ---- JSON (cJSON) ---- */

/* How deep a case's JSON may nest (arrays and objects); deeper is refused as such. */
#define GEN_JSON_MAX_DEPTH 256
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

/* ---- reading MLIR: a program's kernels, and a program as a case (mlir_kernels.c, import.c) */
/* The memory effects of text's gpu.func kernels, one line each: "NAME ARG..." with ARG `s` (a
 * scalar) or `m<RANK>:<r|w|rw|->` (a memref: what the body does with it: loads, stores, both,
 * neither), through any view of it; an op it does not know counts as both (kernel_foreign_set
 * reads the table). Text owned by the caller, or NULL. */
char *gen_mlir_kernels(const char *text);
/* The effects of the ops in [body, end) on names[0..n) (SSA names, "%d"): acc[i] gets
 * KERNEL_READ and KERNEL_WRITE bits. 0. */
int gen_mlir_effects(const char *body, const char *end, const char *const *names, int n,
                     uint8_t *acc);
/* A program in the case language's subset as a case (asyncfuzz import, docs/check-mlir.md): its
 * main function's gpu ops, async.execute regions, awaits, host waits and printMemref calls
 * (observations), each kernel as the case kernel with its effects (af_fill: writes one buffer;
 * af_transform: writes one, reads one; af_combine: reads two). Calls of the module's own
 * functions are inlined. Element types become i32 and values are the case's own: a case models
 * the program's ordering. *json: the case (af_free). AF_EINVALID with "LINE: OP: why" for the
 * first op outside the subset, AF_EPARSE for text it cannot read. */
int gen_import_mlir(const char *text, char **json, AfErr *err);
/* Renders cases cs[0..n) as one module for one mlir-runner process: one kernel module (with
 * the kernels the cases launch), case
 * i's host code as func @af_case_<ids[i]>, and @main calling each once per schedule j <
 * nsched between asyncfuzz_case_begin(id, j) and asyncfuzz_case_end(id, j). Returns text
 * owned by the caller. */
char *gen_render_mlir_group(const GenCase *const *cs, const int *ids, int n, int nsched);
/* Where each case op's operation stands in a rendering: op[L - 1] is the index (in its case) of
 * the op whose operation starts on line L, or -1. MLIR's locations of the parsed module name
 * these lines, and survive lowering. The caller frees op with af_free. */
typedef struct GenLineMap {
  int32_t *op;
  int nlines, cap;
  int oom;
} GenLineMap;
/* gen_render_mlir_group, with the rendering's line map (map may be NULL). */
char *gen_render_mlir_group_map(const GenCase *const *cs, const int *ids, int n, int nsched,
                                GenLineMap *map);

/* Parses an op shape as the mlir-opt lowering's verdicts name the op that stopped a case, in
 * the MLIR spelling the renderer writes ("gpu.launch_func async deps=2+", "gpu.alloc"); the
 * text may go on after a '|'. 0 and *out, or -1 when it names no case op. */
int gen_shape_parse(const char *text, GenShape *out);
/* Op o's shape in that spelling ("gpu.launch_func async deps=2+", "gpu.wait deps=1"; the ops
 * that are not gpu ops: "observe", "async.execute", "async.await"). */
void gen_shape_format(const GenOp *o, char *out, size_t n);
/* Whether op o has shape s (o->threaded as it says). */
int gen_op_has_shape(const GenOp *o, const GenShape *s);
/* Whether op i of c has one dependency, the token of the op just before it in its block (the
 * rendering puts nothing with side effects between them): a pipeline that threads a token
 * through a block's ops (gpu-async-region) gives it no other. */
int gen_op_threaded(const GenCase *c, int i);
/* Whether p, the op right before one of context ctx and block blk, is a gpu op whose token is
 * tok: that op's one dependency, if tok, is threaded (gen_op_threaded; the generator asks it of
 * the op it is about to make). */
int gen_op_threads_to(const GenOp *p, int ctx, int blk, int tok);
/* Op i of c with what its shape tells apart and the case format does not hold (threaded, belem,
 * fresh) set from the case: into *o. */
void gen_op_mark(const GenCase *c, int i, GenOp *o);
/* Whether case c has an op of one of shapes[0..n). */
int gen_case_has_shape(const GenCase *c, const GenShape *shapes, int n);
/* Shape s in the spelling gen_shape_parse reads ("gpu.alloc async deps=0", "scf.if"). */
void gen_shape_text(const GenShape *s, char *out, size_t n);

/* The GPU work a case holds, that can race or produce a wrong value (what steering must keep),
 * X(ID, name, help): a campaign counts the cases holding each (summary.json's "mix"). */
#define GEN_GPU_MIX_MAP(X)                                                                         \
  X(LAUNCH, "launch", "a kernel launch with a token dependency (not on a fresh root alone)")       \
  X(COPY, "copy", "a gpu.memcpy with a token dependency (not on a fresh root alone)")              \
  X(MEMSET, "memset", "a gpu.memset with a token dependency (not on a fresh root alone)")          \
  X(STREAM, "stream", "a launch on an explicit stream")                                            \
  X(REGION, "region", "a launch, copy or memset inside an async.execute region")

typedef enum GenGpuMix {
#define GEN__GPU_MIX_ENUM(id, name, help) GEN_GPU_MIX_##id,
  GEN_GPU_MIX_MAP(GEN__GPU_MIX_ENUM)
#undef GEN__GPU_MIX_ENUM
      GEN_GPU_MIX__COUNT
} GenGpuMix;

/* The name of GEN_GPU_MIX_* i ("launch"). */
const char *gen_gpu_mix_name(int i);
/* The GPU work case c holds: bit GEN_GPU_MIX_* for each. */
unsigned gen_case_gpu_mix(const GenCase *c);

/* The forms of the language's types and launches a case exercises (forms.c), X(ID, name, help):
 * each element type e but i32 (form GEN_FORM_ELEM(e), named by the type), then the rest.
 * A form counts only where it is exercised: what an op of it writes reaches a host buffer that
 * is then observed (by the op, or by a copy back from the device, with nothing else written to
 * the buffer between). bench_language counts them over default cases; a campaign per
 * configuration, the cases that hold each and how many of them executed (summary.json's
 * "forms"). */
#define GEN_FORM_MAP(X)                                                                            \
  X(REGISTERED, "registered", "a registered host buffer a copy from the device writes")            \
  X(SPACE, "space", "a buffer in memory space 1 a copy, memset or kernel writes")                  \
  X(RANKED, "ranked", "a copy or set of a memref of rank 2 or 3")                                  \
  X(ROWS, "rows", "a copy or set in rows of a ranked memref (a multi-dimensional subview)")        \
  X(DIMS, "launch-dims", "a launch on a grid and blocks of more than one dimension")               \
  X(OUTLINED, "gpu.launch", "a launch of a gpu.launch body, outlined by the pipeline")             \
  X(TYPED_LAUNCH, "typed-launch", "a launch on buffers of a type other than i32")                  \
  X(SHARED_MEMORY, "shared-memory", "a launch that gives its kernel dynamic shared memory")

#define GEN_FORM_ELEM(e) ((e)-1) /* e != GEN_ELEM_I32 (0): a copy, memset or kernel on e */
typedef enum GenForm {
#define GEN__FORM_ENUM(id, name, help) GEN_FORM_##id,
  GEN_FORM__TYPES = GEN_FORM_ELEM(GEN_ELEM__COUNT) - 1, /* (the types' forms come first) */
  GEN_FORM_MAP(GEN__FORM_ENUM)
#undef GEN__FORM_ENUM
      GEN_FORM__COUNT
} GenForm;

/* The name of form f ("i1", "space"), and what it is (for a help text). */
const char *gen_form_name(int f);
const char *gen_form_help(int f);
/* The forms case c exercises: bit f for each (f < 32). */
uint32_t gen_case_forms(const GenCase *c);
/* The forms case c holds, exercised or not: an op of the form, or on a buffer of it (its type,
 * memory space, rank, registration); what a finding's case has (a rejected allocation in memory
 * space 1 is of the form, though nothing it writes is observed). */
uint32_t gen_case_forms_held(const GenCase *c);
/* The names of the forms of mask m, ", " between them ("" for none), into buf. */
void gen_forms_str(uint32_t m, char *buf, size_t n);

/* ---- avoid sets (avoid.c) ---- */

/* Adds what text names to a: a construct (its name or one of its words, GEN_CONSTRUCT_MAP: a
 * call's, an if's or a branch's crossing, "call-result", "merge-arg"...), a loop's crossing
 * ("loop-carried", "loop-result": the for is left out), "sync-op" (the synchronous alloc and
 * dealloc forms, as destroyed-by: names an op without a token), "everything" (the forced test set)
 * or an op shape (gen_shape_parse). 1 added, 0 there already, -1 names nothing it knows (or a is
 * full). */
int gen_avoid_add(GenAvoid *a, const char *text);
/* Adds to a the block, region and stream kinds case c has (scf.if, async.execute, llvm.call
 * @mgpuStreamCreate...): what names a crash that names no op, by its minimized case. How many
 * were added. */
int gen_avoid_structure(GenAvoid *a, const GenCase *c);
/* Adds every entry of b to a. */
void gen_avoid_union(GenAvoid *a, const GenAvoid *b);
/* Entries of a (shapes, then constructs), and entry i as gen_avoid_add reads it. */
int gen_avoid_count(const GenAvoid *a);
void gen_avoid_text(const GenAvoid *a, int i, char *out, size_t n);
/* Whether a avoids op o as it stands (its kind, form, dependencies, views). */
int gen_avoid_op(const GenAvoid *a, const GenOp *o);
/* Whether a avoids op i of case c (gen_avoid_op, with the op's dependency threaded or not as
 * the case has it). */
int gen_avoid_case_op(const GenAvoid *a, const GenCase *c, int i);
/* Whether a avoids something case c has as it stands (a case not made by the generator under a:
 * mutated, read): an op of a shape it avoids, or a construct it avoids (a dependency the case is
 * valid without is an extra one; one on a token an earlier host wait of its context named is
 * host-wait's). */
int gen_avoid_case(const GenAvoid *a, const GenCase *c);
/* Construct id's name (GEN_CONSTRUCT_MAP) and what it is, for --help. */
const char *gen_construct_name(int id);
const char *gen_construct_help(int id);

/* ---- generator ---- */

/* Swarm testing: knobs for the case of `seed`, drawn around base (op count up to base's,
 * features and op kinds left out at random). Deterministic in (base, seed). */
void gen_config_swarm(const GenConfig *base, uint64_t seed, GenConfig *out);
/* Generates a valid case from (seed, config); the same inputs give byte-identical JSON. */
int gen_generate(GenCase *c, uint64_t seed, const GenConfig *cfg, AfErr *err);
/* The same, its choices from rng (its seed: what the case records). */
int gen_generate_rng(GenCase *c, uint64_t seed, AfRng *rng, const GenConfig *cfg, AfErr *err);
/* A wider base for swarm testing (--wide-swarm): up to twice the ops, buffers and the chances
 * of regions, captures, streams, blocks, views, typed buffers and extra waits; nesting up to 4,
 * dependencies up to GEN_MAX_DEPS. */
void gen_config_widen(const GenConfig *base, GenConfig *out);
/* gen_config_swarm with the choices from rng. */
void gen_config_swarm_rng(const GenConfig *base, AfRng *rng, GenConfig *out);
/* A valid case whose choices are the bytes data[0..n) (a fuzzer's input: af_rng_bytes), the
 * first ones choosing the swarm knobs around base when swarm is set: every byte string makes a
 * valid case, and the same bytes the same case (swarm 2: around gen_config_widen's base). Its
 * seed is the bytes' hash (af_hash_bytes);
 * its seed and knobs alone do not make it again: its JSON does. */
int gen_generate_bytes(GenCase *c, const uint8_t *data, size_t n, const GenConfig *base, int swarm,
                       AfErr *err);

/* ---- features (features.c) ---- */

/* Adds the case's features (base/feat.h: op shapes in their contexts, dependency edges) where
 * features are on. */
void gen_case_features(const GenCase *c);
/* Adds each op shape of the case with `verdict` (a configuration and its verdict on the case) where
 * features are on. */
void gen_case_verdict_features(const GenCase *c, const char *verdict);

#endif
