/*
 * lower.h: lowerings under test. A lowering turns a Case into something that calls the
 * mgpu* ABI. The builtin lowering (builtin.c) produces a Program: one function per context
 * (main and each async.execute region) of mgpu* calls over slots, which check/interp.c
 * replays through the runtime library. Its fault switches inject plausible lowering bugs so
 * that the harness can be shown to catch them.
 *
 * A lowering is named by a spec string: "builtin" or "builtin:fault=NAME[,NAME...]".
 */
#ifndef LOWER_LOWER_H
#define LOWER_LOWER_H

#include <stdint.h>
#include <stdio.h>

#include "../base/afbase.h"
#include "../gen/gen.h"

/* X(ID, name, trigger, description). trigger: what a finding of the same bug on a real lowering
 * makes steering avoid, and the construct that holds it where a finding can take that whole
 * (async.execute, whose JIT compile crashes on some configurations); avoid entries that hold one
 * of these words, comma-separated. Where that is what takes a fault's cases away, the
 * configuration's finding excuses the miss (bench/steering_power.sh); anything else that does
 * is steering losing bugs. */
#define LOWER_FAULT_MAP(X)                                                                         \
  X(YIELD_STREAM, "yield_stream", "yield,async.execute",                                           \
    "async.yield passes the stream itself instead of recording an event (upstream #170833)")       \
  X(DROP_EXTRA_DEPS, "drop_extra_deps", "deps=2+,extra-dep",                                       \
    "only the first dependency of an op is synchronized")                                          \
  X(EARLY_STREAM_DESTROY, "early_stream_destroy", "",                                              \
    "a stream is destroyed after its first use instead of its last")                               \
  X(DROP_HOST_WAIT, "drop_host_wait", "", "a synchronous gpu.wait lowers to nothing")              \
  X(COPY_WRONG_STREAM, "copy_wrong_stream", "gpu.memcpy async",                                    \
    "gpu.memcpy is put on a fresh stream that waits for none of its dependencies")                 \
  X(FREE_UNORDERED, "free_unordered", "gpu.dealloc async",                                         \
    "an async gpu.dealloc frees at once, without waiting for its dependencies")                    \
  X(RECORD_EARLY, "record_early", "deps=2+,extra-dep",                                             \
    "the event for an extra dependency is recorded before the dependency's work is enqueued")      \
  X(WAIT_DESTROYS, "wait_destroys", "host-wait",                                                   \
    "a host gpu.wait destroys the streams it waits on, as if no later op used their tokens")       \
  X(CAPTURE_DROPPED, "capture_dropped", "capture,async.execute",                                   \
    "an op in an async.execute region drops its dependency on a token captured from outside")      \
  X(STREAM_IGNORED, "stream_ignored", "stream-order, stream",                                      \
    "a launch given an explicit stream runs where its dependencies put it, as if it had none")     \
  X(CALL_ARG_DROPPED, "call_arg_dropped", "func.call,call-token",                                  \
    "a token passed to a function is not waited on in its body: the callee's ops that depend on "  \
    "it wait for nothing")                                                                         \
  X(IF_RESULT_STALE, "if_result_stale", "scf.if,if-token",                                         \
    "the token an scf.if returns carries none of its branch's work")                               \
  X(LOOP_CARRIED_INITIAL, "loop_carried_initial", "scf.for",                                       \
    "every iteration of an scf.for waits on the initial token, not on the one the last "           \
    "iteration yielded")                                                                           \
  X(MERGE_FIRST_PRED, "merge_first_pred", "cf.cond_br,branch-token",                               \
    "a block reached from two branches takes its token argument from the first one in the text, "  \
    "whichever branch ran")                                                                        \
  X(COPY_SIZE_I32, "copy_size_i32", "gpu.memcpy async",                                            \
    "gpu.memcpy copies 4 bytes per element, whatever the element type")                            \
  X(VIEW_OFFSET_DROPPED, "view_offset_dropped", " view",                                           \
    "a memcpy, memset or kernel operand that is a memref.subview starts at its buffer's base: "    \
    "the view's offset is ignored")                                                                \
  X(VIEW_STRIDE_DROPPED, "view_stride_dropped", " view",                                           \
    "a strided memref.subview is passed to a memcpy, memset or kernel as if it were contiguous: "  \
    "its stride is taken as 1")                                                                    \
  X(EVENT_LEAKED, "event_leaked", "",                                                              \
    "an event the lowering creates to order one stream after another is never destroyed")          \
  X(REGISTERED_COPY_SYNC, "registered_copy_sync", "registered-copy",                               \
    "a copy from the device into registered host memory is taken as synchronous: a host "          \
    "gpu.wait on its token waits for nothing")                                                     \
  X(SPACE_SYNC, "space_sync", " space",                                                            \
    "a gpu.memcpy of a memref in a memory space runs on the default stream, as if synchronous: "   \
    "its dependencies' stream does not order it")                                                  \
  X(DIM_STRIDE_DROPPED, "dim_stride_dropped", " ranked",                                           \
    "a view in rows of a ranked memref starts at its first dimension's offset without that "       \
    "dimension's stride: at its first row's index, not at the row's first element")                \
  X(SMEM_DROPPED, "smem_dropped", "shared-memory",                                                 \
    "a launch's dynamic_shared_memory_size is dropped: its kernel gets no dynamic shared memory")

enum {
#define LOWER__FENUM(id, name, trigger, desc) LOWER_FAULT_##id,
  LOWER_FAULT_MAP(LOWER__FENUM)
#undef LOWER__FENUM
      LOWER_FAULT__COUNT
};

const char *lower_fault_name(int f);
const char *lower_fault_desc(int f);
const char *lower_fault_trigger(int f);
/* Prints each fault: its name, what it does and its trigger (asyncfuzz lower --list-faults). */
void lower_fault_list(FILE *f);
/* The fault with that name, or -1. */
int lower_fault_lookup(const char *name);

typedef enum LowerKind { LOWER_BUILTIN, LOWER_MLIR_OPT } LowerKind;

typedef struct LowerSpec {
  int kind;        /* LowerKind */
  unsigned faults; /* bit f set: fault f injected */
  char name[160];  /* canonical name, never a path: "builtin:fault=yield_stream", "mlir-opt",
                      "mlir-opt@async-region", "mlir-opt-22.1.8/rocdl" (a matrix configuration);
                      it starts every signature, but for matrix configurations (family) */
  char arg[1200];  /* what --lowering takes to get this lowering again (name, or name:PATH) */
  /* mlir-opt (lower/mlir_spec.c, lower/mlir.c) */
  char variant[32];    /* named pipeline, or "custom" */
  char opt[1024];      /* the mlir-opt executable */
  char runner[1024];   /* mlir-runner (mlir-cpu-runner in LLVM 19) next to it */
  char utils[1024];    /* libmlir_runner_utils next to it ("": none installed) */
  char rtlib[1024];    /* libasyncfuzz_rt.so */
  char version[128];   /* what mlir-opt --version says, e.g. "Debian LLVM version 22.1.8" */
  int major;           /* its LLVM major version (19 or newer) */
  int jit_opt;         /* the runner's JIT optimization level: 0 to 3 (-O<n>), or -1 for the
                          runner's default (no -O flag) */
  char pipeline[2048]; /* the --pass-pipeline string */
  char target[8];      /* the kernels' target: "nvvm" or "rocdl" */
  char rocm[1024];     /* rocdl: the ROCm toolkit whose amdgcn/bitcode is linked */
  int code_object;     /* rocdl: the kernels are a code object an AMD GPU loads (format=bin,
                          linked by the build's own ld.lld), not LLVM bitcode (format=llvm: the
                          sim only) */
  int matrix;          /* a configuration of a campaign's matrix ("matrix:" spec) */
  char family[160];    /* what its signatures start with: name, or "mlir-opt" for matrix
                          configurations, so one bug is one finding on every configuration */
  double timeout;      /* seconds per case for each tool (batches get more) */
} LowerSpec;

/* Parses a lowering spec: "builtin", "builtin:fault=NAME[,NAME...]", or
 * "[matrix:]mlir-opt[@VARIANT][/nvvm|/rocdl][+O<n>|+Odefault][:PATH]" (/: the kernels' target,
 * nvvm when not given; +O: the runner's JIT optimization level, -O0 when not given; matrix:
 * a configuration of a campaign's matrix, named by its build, its signatures by "mlir-opt"). An
 * mlir-opt spec finds the tools and asks mlir-opt for its version here, so a missing, unusable or
 * too old mlir-opt is reported at once. Returns 0, AF_EUSAGE with a message listing what is valid,
 * or AF_EINVALID (the tools). */
int lower_spec_parse(const char *s, LowerSpec *out, AfErr *err);
/* The grammar of lower_spec_parse alone: no tool is looked for or run (an mlir-opt spec's build
 * path, if any, in out->opt). What the spec fuzzer parses. */
int lower_spec_syntax(const char *s, LowerSpec *out, AfErr *err);
/* Replaces an mlir-opt spec's pipeline with `pipeline` (variant "custom"). */
int lower_spec_set_pipeline(LowerSpec *spec, const char *pipeline, AfErr *err);
/* The version string recorded with results of this lowering. */
const char *lower_version(const LowerSpec *spec);
/* Whether spec is an mlir-opt lowering whose kernels are AMD GPU code (target rocdl). */
int lower_is_rocdl(const LowerSpec *spec);
/* What its signatures start with: the family of a matrix configuration, else the name. */
const char *lower_family(const LowerSpec *spec);

/* ---- Program: the builtin lowering's output ---- */

/* The Program's instructions (LowerOpc), one row each: ID, lc (the interpreter carries it out in
 * check/interp.c's x_<lc>, which the table's expansion names: a row without it does not link),
 * the runtime call it makes ("" for the harness's own steps), and its listing (listing.c): the
 * text with directives %C the call, %a and %b the slots a and b ("%N"), %s slot b or "null",
 * %B buf ("bN"), %u buf and its byte offset ("bN+OFF"), %v buf2 and off2, %k the kernel's name,
 * %i imm, %j imm2, %L a launch's buffers and their views, %P " (the program's)" when imm, %r
 * region, %x vidx, %c consumer. Operands as LowerInstr says:
 *   MODULE_LOAD        the program-level kernel module
 *   GET_FUNCTION       kernel
 *   HOST_INIT          buf, imm = init; imm2 = 1: every element holds imm instead (rocm's staging
 *                      buffer of a 16-bit memset)
 *   STREAM_CREATE      a = slot; imm = 1: the program's own stream (a stream_create op), which
 *                      its stream_destroy op destroys
 *   STREAM_WAIT_EVENT  a = stream slot, b = event slot;  EVENT_RECORD: a = event, b = stream
 *   MEM_ALLOC          buf, b = stream slot or -1 (null), imm = bytes, imm2 = host_shared
 *   MEM_FREE           buf, b = stream slot or -1
 *   MEMCPY             buf = dst, buf2 = src, b = stream, imm = bytes
 *   MEMSET32, 16       buf, b = stream, imm = value, imm2 = count
 *   LAUNCH             kernel, bufs[nbufs] (views voff, vstride), b = stream, imm = value,
 *                      imm2 = elements, dims, smem = dynamic shared memory
 *   OBSERVE            buf, imm = observe id
 *   SPAWN, AWAIT       region (AWAIT blocks until it is done)
 *   YIELD              a = slot handed to consumer `consumer` of value (region, vidx)
 *   DONE               the region's completion (its async.token becomes ready)
 *   TAKE               a = slot <- value (region, vidx) for consumer `consumer`; imm = 1: a
 *                      region input (the task starts after its source yielded it) */
#define LOWER_OPC_MAP(X)                                                                           \
  X(MODULE_LOAD, module_load, "mgpuModuleLoad", "%C()")                                            \
  X(GET_FUNCTION, get_function, "mgpuModuleGetFunction", "%C(\"%k\")")                             \
  X(MODULE_UNLOAD, module_unload, "mgpuModuleUnload", "%C()")                                      \
  X(HOST_INIT, host_init, "asyncfuzz_host_init", "%C(%B, init=%i)")                                \
  X(HOST_REGISTER, host_register, "mgpuMemHostRegister", "%C(%B)")                                 \
  X(HOST_UNREGISTER, host_unregister, "mgpuMemHostUnregister", "%C(%B)")                           \
  X(STREAM_CREATE, stream_create, "mgpuStreamCreate", "%a = %C()%P")                               \
  X(STREAM_DESTROY, stream_destroy, "mgpuStreamDestroy", "%C(%a)")                                 \
  X(STREAM_SYNC, stream_sync, "mgpuStreamSynchronize", "%C(%a)")                                   \
  X(STREAM_WAIT_EVENT, stream_wait_event, "mgpuStreamWaitEvent", "%C(%a, %b)")                     \
  X(EVENT_CREATE, event_create, "mgpuEventCreate", "%a = %C()")                                    \
  X(EVENT_DESTROY, event_destroy, "mgpuEventDestroy", "%C(%a)")                                    \
  X(EVENT_SYNC, event_sync, "mgpuEventSynchronize", "%C(%a)")                                      \
  X(EVENT_RECORD, event_record, "mgpuEventRecord", "%C(%a, %b)")                                   \
  X(MEM_ALLOC, mem_alloc, "mgpuMemAlloc", "%B = %C(%i, %s, %j)")                                   \
  X(MEM_FREE, mem_free, "mgpuMemFree", "%C(%B, %s)")                                               \
  X(MEMCPY, memcpy, "mgpuMemcpy", "%C(%u, %v, %i, %s)")                                            \
  X(MEMSET32, memset32, "mgpuMemset32", "%C(%u, %i, %j, %s)")                                      \
  X(MEMSET16, memset16, "mgpuMemset16", "%C(%u, %i, %j, %s)")                                      \
  X(LAUNCH, launch, "mgpuLaunchKernel", "%C(%k, [%L], v=%i, n=%j%G, %s)")                          \
  X(OBSERVE, observe, "asyncfuzz_observe", "%C(%i, %B)")                                           \
  X(SPAWN, spawn, "", "async.execute @region%r")                                                   \
  X(YIELD, yield, "", "yield r%r.%x to consumer %c: %a")                                           \
  X(DONE, done, "", "region done")                                                                 \
  X(AWAIT, await, "", "async.await @region%r")                                                     \
  X(TAKE, take, "", "%a = take r%r.%x as consumer %c")

typedef enum LowerOpc {
#define LOWER__OPC_ENUM(ID, lc, call, listing) LOWER_##ID,
  LOWER_OPC_MAP(LOWER__OPC_ENUM)
#undef LOWER__OPC_ENUM
      LOWER__OPC_COUNT
} LowerOpc;
/* An instruction's runtime call ("" for none), its listing's format (LOWER_OPC_MAP). */
const char *lower_opc_call(int opc);
const char *lower_opc_listing(int opc);

typedef struct LowerInstr {
  uint8_t opc;
  uint8_t kernel, nbufs;
  int32_t a, b;
  int32_t buf, buf2;
  int32_t bufs[3];
  int32_t region, vidx, consumer;
  int32_t op; /* the Case op this instruction lowers, or -1 */
  int64_t imm, imm2;
  int64_t off, off2;           /* memcpy, memset: byte offsets into buf and buf2 (views) */
  int32_t voff[3], vstride[3]; /* launch: each operand's view, offset and stride in elements */
  int32_t dims[6];             /* launch: grid x, y, z, then block x, y, z */
  int32_t smem;                /* launch: bytes of dynamic shared memory */
} LowerInstr;

typedef struct LowerFunc {
  int region; /* 0: main */
  int ninstrs, capinstrs;
  LowerInstr *instrs;
  int nslots;
} LowerFunc;

typedef struct LowerRegionInfo {
  int parent;
  int ninputs;
  int input_region[4], input_vidx[4];
  int nvalues;
  int nconsumers[4]; /* consumers of each value */
  int ncaptures;     /* tokens captured from the parent: values nvalues.. of this region, one
                        consumer each, handed over by the parent before it spawns the region */
} LowerRegionInfo;

typedef struct LowerProgram {
  int nfuncs; /* funcs[r] lowers region r; funcs[0] is main */
  LowerFunc *funcs;
  LowerRegionInfo *regions; /* nfuncs entries */
  int nbufs;
  int32_t *buf_elems; /* elements per buffer */
  uint8_t *buf_elem;  /* their GenElem */
  uint8_t *buf_host;  /* 1: a host buffer the program allocates */
  int spin;
} LowerProgram;

/* Lowers a valid case with the builtin lowering. *out is owned by the caller
 * (lower_program_free). Returns 0, AF_ENOMEM, or AF_EUNSUPPORTED. */
int lower_builtin(const GenCase *c, const LowerSpec *spec, LowerProgram **out, AfErr *err);
/* The same for the ABI flavour the program will run under: rocm != 0 lowers for MLIR's ROCm
 * wrappers (docs/abi.md), which allocate host_shared as device memory and lack mgpuMemset16:
 * the host observes a host_shared buffer through a stream-ordered copy into a host staging
 * buffer, and a 16-bit memset is a mgpuMemset32 of value pairs plus copies of single elements
 * from a staging buffer that holds the value (program buffers past the case's own). */
int lower_builtin_abi(const GenCase *c, const LowerSpec *spec, int rocm, LowerProgram **out,
                      AfErr *err);
void lower_program_free(LowerProgram *p);
/* A readable listing of the program (used by `asyncfuzz lower` and the golden tests). */
char *lower_program_to_text(const LowerProgram *p);

#endif
