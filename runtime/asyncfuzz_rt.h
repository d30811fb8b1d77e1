/*
 * asyncfuzz_rt.h: the runtime library (libasyncfuzz_rt), the one seam of asyncfuzz.
 *
 * It implements MLIR's mgpu* runtime ABI (CudaRuntimeWrappers.cpp) with exactly its C
 * signatures, so code lowered by the real MLIR pipeline and builtin Programs replayed by the
 * interpreter (runner.h) call the same functions. Like MLIR's wrappers, no mgpu* function
 * returns a status: an error is recorded in the trace and the call has no effect.
 *
 * Backend `sim` (this file's implementation): a deterministic CPU model of CUDA streams and
 * events. Device work waits in per-stream FIFO queues and advances only inside runtime calls,
 * as the schedule policy decides. Handles are tagged values, never raw pointers, so an event
 * call given a stream (or a destroyed handle) is detected, fails with CUDA_ERROR_INVALID_HANDLE
 * and has no effect, exactly as the driver behaves for an invalid handle.
 *
 * Every call appends a record (thread, call, symbolic arguments, result, error) to the
 * trace; docs/trace-format.md documents the text form. One run at a time per process:
 * asyncfuzz_rt_begin() resets everything, asyncfuzz_rt_end() drains the device and computes
 * leak counts. All entry points are serialized by one mutex, so MLIR's async worker threads
 * may call them concurrently.
 */
#ifndef ASYNCFUZZ_RT_H
#define ASYNCFUZZ_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/afbase.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The mgpu* ABI (MLIR CudaRuntimeWrappers.cpp, LLVM 22) ---- */
void *mgpuModuleLoad(void *data, size_t gpuBlobSize);
void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                      intptr_t blockX, intptr_t blockY, intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount);
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate(void);
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);
void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream);
void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream);
void mgpuSetDefaultDevice(int32_t device);
/* gpu.host_register / host_unregister. The MemRef forms take a ranked memref descriptor
 * {allocated, aligned, offset, sizes[rank], strides[rank]} of any element size. */
void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes);
void mgpuMemHostUnregister(void *ptr);
void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor, int64_t elementSizeBytes);
void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor, int64_t elementSizeBytes);

/* The rest of the wrappers' functions (MLIR 19.1.7 and 22.1.8; runtime/abi/, docs/abi.md):
 * - mgpuLaunchClusterKernel (cuda): a launch, recorded as mgpuLaunchKernel (the cluster shape
 *   orders nothing); the rocm flavour has none.
 * - mgpuMemGetDeviceMemRef1dFloat/Int32 (rocm): the device's view of registered host memory, the
 *   same memref (one address space); the cuda flavour has none.
 * - the tensor-map (TMA) and sparse (cuSPARSE, cuSPARSELt) families, RT_UNMODELLED_MAP: each call
 *   is recorded as its name, fails with CUDA_ERROR_NOT_SUPPORTED and has no effect; it returns
 *   0 (NULL). They take their wrappers' arguments, unread. */
void mgpuLaunchClusterKernel(void *function, intptr_t clusterX, intptr_t clusterY,
                             intptr_t clusterZ, intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                             intptr_t blockX, intptr_t blockY, intptr_t blockZ, int32_t smem,
                             void *stream, void **params, void **extra, size_t paramsCount);
typedef struct RtMemRef1d {
  void *allocated, *aligned;
  int64_t offset, size, stride;
} RtMemRef1d;
RtMemRef1d mgpuMemGetDeviceMemRef1dFloat(float *allocated, float *aligned, int64_t offset,
                                         int64_t size, int64_t stride);
RtMemRef1d mgpuMemGetDeviceMemRef1dInt32(int32_t *allocated, int32_t *aligned, int64_t offset,
                                         int64_t size, int64_t stride);
#define RT_UNMODELLED_MAP(X)                                                                       \
  X(mgpuTensorMapEncodeTiled)                                                                      \
  X(mgpuTensorMapEncodeTiledMemref)                                                                \
  X(mgpuCreateSparseEnv)                                                                           \
  X(mgpuDestroySparseEnv)                                                                          \
  X(mgpuCreateDnVec)                                                                               \
  X(mgpuDestroyDnVec)                                                                              \
  X(mgpuCreateDnMat)                                                                               \
  X(mgpuDestroyDnMat)                                                                              \
  X(mgpuCreateCoo)                                                                                 \
  X(mgpuCreateCooAoS)                                                                              \
  X(mgpuCreateCsr)                                                                                 \
  X(mgpuCreateCsc)                                                                                 \
  X(mgpuCreateBsr)                                                                                 \
  X(mgpuDestroySpMat)                                                                              \
  X(mgpuSpMVBufferSize)                                                                            \
  X(mgpuSpMV)                                                                                      \
  X(mgpuSpMMBufferSize)                                                                            \
  X(mgpuSpMM)                                                                                      \
  X(mgpuSDDMMBufferSize)                                                                           \
  X(mgpuSDDMM)                                                                                     \
  X(mgpuSpGEMMCreateDescr)                                                                         \
  X(mgpuSpGEMMDestroyDescr)                                                                        \
  X(mgpuSpGEMMWorkEstimation)                                                                      \
  X(mgpuSpGEMMCompute)                                                                             \
  X(mgpuSpGEMMCopy)                                                                                \
  X(mgpuSpMatGetSize)                                                                              \
  X(mgpuSetCsrPointers)                                                                            \
  X(mgpuCreateSparseLtEnv)                                                                         \
  X(mgpuDestroySparseLtEnv)                                                                        \
  X(mgpuCreateCuSparseLtDnMat)                                                                     \
  X(mgpuDestroyCuSparseLtDnMat)                                                                    \
  X(mgpuCusparseLtCreate2To4SpMat)                                                                 \
  X(mgpuDestroyCuSparseLtSpMat)                                                                    \
  X(mgpuCuSparseLtSpMMBufferSize)                                                                  \
  X(mgpuCuSparseLtSpMM)
#define RT__UNMODELLED_DECL(name) intptr_t name(void);
RT_UNMODELLED_MAP(RT__UNMODELLED_DECL)
#undef RT__UNMODELLED_DECL
/* The name of unmodelled function i (RT_UNMODELLED_MAP's order, then a flavour's absent calls
 * mgpuLaunchClusterKernel, mgpuMemGetDeviceMemRef1dFloat, ...Int32), or "?". */
const char *asyncfuzz_rt_unmodelled_name(int i);

/* ---- Host hooks called by lowered programs (memref<?xi32> passed as expanded fields) ---- */

/* The host reads a buffer: the values are recorded as observation `id`. */
void asyncfuzz_observe(int32_t id, int32_t *allocated, int32_t *aligned, int64_t offset,
                       int64_t size, int64_t stride);
/* The host initializes host buffer `id` with kernel_host_init_value(init, i) and registers it,
 * so the trace can name it h<id>. */
void asyncfuzz_host_init(int32_t id, int32_t init, int32_t *allocated, int32_t *aligned,
                         int64_t offset, int64_t size, int64_t stride);
/* The same for buffers of the other element types (memref<?xi16>..., kernels/kernels.h's
 * KERNEL_ELEM_MAP), one row each: X(name, C element type, KERNEL_ELEM_*). An observation carries
 * each element as 32-bit words (kernel_elem_words: 1- and 2-byte elements sign-extended, an f32
 * as its bits, 8-byte ones low word then high word); host_init writes kernel_elem_bits of each
 * value; the trace records the element size as a fourth argument. */
#define RT_ELEM_HOOK_MAP(X)                                                                        \
  X(i16, int16_t, I16)                                                                             \
  X(i64, int64_t, I64)                                                                             \
  X(f32, float, F32)                                                                               \
  X(i8, int8_t, I8)                                                                                \
  X(i1, uint8_t, I1)                                                                               \
  X(f16, uint16_t, F16)                                                                            \
  X(bf16, uint16_t, BF16)                                                                          \
  X(f64, double, F64)                                                                              \
  X(index, int64_t, INDEX)
#define RT__ELEM_HOOK_DECL(sfx, T, E)                                                              \
  void asyncfuzz_observe_##sfx(int32_t id, T *allocated, T *aligned, int64_t offset, int64_t size, \
                               int64_t stride);                                                    \
  void asyncfuzz_host_init_##sfx(int32_t id, int32_t init, T *allocated, T *aligned,               \
                                 int64_t offset, int64_t size, int64_t stride);
RT_ELEM_HOOK_MAP(RT__ELEM_HOOK_DECL)
#undef RT__ELEM_HOOK_DECL
/* A batch (many cases in one mlir-runner process, gen_render_mlir_group) brackets each run of
 * a case under schedule `sched`: begin starts a fresh run, keeping the kernel modules loaded
 * so far, under schedule number `sched` of $ASYNCFUZZ_SCHEDULES ("POLICY@SEED,...", else
 * ASYNCFUZZ_POLICY and ASYNCFUZZ_SCHED_SEED) with ASYNCFUZZ_MEMFREE_SYNC and
 * ASYNCFUZZ_FAIL_CALLS (RtConfig.fail_pct); end runs the case's
 * queued coroutines, ends the run and writes $ASYNCFUZZ_TRACE_DIR/case-ID-SCHED.bin. */
void asyncfuzz_case_begin(int32_t id, int32_t sched);
void asyncfuzz_case_end(int32_t id, int32_t sched);

/* ---- Control API (the harness) ---- */

typedef enum RtPolicy { RT_EAGER, RT_LAZY, RT_RANDOM, RT_PCT, RT__POLICY_COUNT } RtPolicy;

/* Name of a policy ("eager"...), and the policy for a name (-1 when unknown). */
const char *asyncfuzz_rt_policy_name(int policy);
int asyncfuzz_rt_policy_parse(const char *name);

/* Where device work runs: the deterministic simulator, an NVIDIA GPU through the CUDA Driver
 * API (libasyncfuzz_cuda.so, loaded on first use; see docs/cuda.md), or an AMD GPU through the
 * HIP runtime (libasyncfuzz_hip.so; docs/hip.md). Each one's row is an RtBackendInfo
 * (asyncfuzz_rt_backend_info, rt_backend.c), which the runtime, the harness and the command
 * line read. */
typedef enum RtBackend {
  RT_BACKEND_SIM,
  RT_BACKEND_CUDA,
  RT_BACKEND_HIP,
  RT__BACKEND_COUNT
} RtBackend;

/* The flavour of the mgpu* ABI a run follows: what MLIR's CUDA wrappers do, or what its ROCm
 * wrappers (RocmRuntimeWrappers.cpp) do with the same names (docs/abi.md):
 * - rocm: mgpuStreamCreate makes streams that synchronize with the legacy (NULL) stream
 *   (hipStreamCreate's default flags); mgpuMemAlloc ignores isHostShared (device memory, which
 *   the host cannot read); mgpuMemFree is hipFree, which first synchronizes the device;
 *   mgpuModuleLoadJIT and mgpuMemset16 do not exist (a call fails, ABI_ABSENT).
 * - cuda: non-blocking streams, managed memory for isHostShared, frees not ordered. */
typedef enum RtAbi { RT_ABI_CUDA, RT_ABI_ROCM, RT__ABI_COUNT } RtAbi;
/* "cuda" / "rocm"; -1 for an unknown name. */
int asyncfuzz_rt_abi_parse(const char *name);
const char *asyncfuzz_rt_abi_name(int abi);

typedef struct RtConfig {
  int policy;        /* RtPolicy */
  uint64_t seed;     /* schedule seed (random, pct) */
  int memfree_sync;  /* 1: mgpuMemFree first completes all device work (lenient model) */
  int pct_depth;     /* pct: number of priority change points (default 3 when 0) */
  int record_device; /* 1: also record device-side execution steps (DEV lines) */
  int backend;       /* RtBackend */
  int raw_handles;   /* cuda: hand the driver's own handles to the program (no checks) */
  int spin;          /* cuda: >0 replaces the spin argument of every launch (calibration) */
  int abi;           /* RtAbi */
  /* 1: every call of the run comes from the thread that began it (the builtin interpreter runs
   * its tasks in turn on one thread): the calls take no lock. MLIR-compiled code has threads. */
  int one_thread;
  /* 1: a user's program (asyncfuzz check-mlir): its kernels are the table of kernel_foreign_set
   * (ASYNCFUZZ_KERNELS=FILE), and host memory it allocated itself is adopted as a host buffer
   * (a host.memory record) when a copy or a host read first touches it */
  int program;
  /* the device fails a call on purpose (asyncfuzz --fail-calls PCT): with this chance, drawn from
   * the schedule seed (never from the schedule's own draws), the run's n-th call of one kind
   * fails as a device reports it (mgpuMemAlloc out of memory, a launch failing and leaving the
   * context unusable: every later call fails, a sticky error...); RtSummary.injected names it */
  int fail_pct;
} RtConfig;

/* What a hardware backend reports of its device; recorded with each run. */
typedef struct RtDeviceInfo {
  char name[128];
  int device, cc_major, cc_minor, sm_count;
  int driver_version; /* cuDriverGetVersion: 13000 = 13.0 (hip: hipDriverGetVersion) */
  int cuda_version;   /* the CUDA toolkit the backend was built with (hip: HIP_VERSION) */
  int64_t mem_mib;
  char arch[64]; /* hip: the GPU's gcnArchName ("gfx90a:sramecc+:xnack-") */
} RtDeviceInfo;

/* A backend: what it is called, what it runs and refuses, how it opens. */
typedef struct RtBackendInfo {
  const char *name;    /* --backend NAME (NAME:raw for a GPU's own handles); runs record it */
  const char *help;    /* what --help says of it (and of NAME:raw) */
  int gpu;             /* a GPU: its library loaded on demand, its work in a child process */
  int abi;             /* the RtAbi it runs; -1: any (the sim models every flavour) */
  const char *targets; /* the mlir-opt kernel targets whose code it runs: "nvvm", "rocdl" */
  int code_object;     /* rocdl code must be a code object (an AMD GPU loads no LLVM bitcode) */
  /* a GPU's library, the variables naming another one and the device, the driver library it
   * links, what that is and what a machine without it lacks, what builds the library */
  const char *lib, *lib_env, *dev_env, *driver, *driver_what, *missing, *builds;
  /* its device as runs record it ("NAME (sm_90, 132 SMs, ..., built with CUDA 13.0)") */
  void (*describe)(const RtDeviceInfo *d, char *out, size_t n);
} RtBackendInfo;
/* Backend b's row (NULL for no backend). */
const RtBackendInfo *asyncfuzz_rt_backend_info(int backend);
/* "sim", "cuda", "cuda:raw", "hip", "hip:raw" (tagged handles are the default: "cuda:tagged",
 * "hip:tagged"). Returns the RtBackend and sets *raw, or -1 for an unknown name. */
int asyncfuzz_rt_backend_parse(const char *name, int *raw);
const char *asyncfuzz_rt_backend_name(int backend);
/* Opens a backend in this process (cuda: loads libasyncfuzz_cuda.so, or $ASYNCFUZZ_CUDA_BACKEND,
 * and initializes device $ASYNCFUZZ_CUDA_DEVICE, default 0; hip: libasyncfuzz_hip.so or
 * $ASYNCFUZZ_HIP_BACKEND, device $ASYNCFUZZ_HIP_DEVICE). Idempotent. Returns 0, or
 * AF_EUNSUPPORTED with the reason in msg (no driver, no GPU, a build without the backend). A GPU
 * process must not fork afterwards: isolate GPU work in a child that opens it itself. */
int asyncfuzz_rt_backend_open(int backend, RtDeviceInfo *info, char *msg, size_t n);
/* Spin calibration (a GPU backend): the smallest power-of-two spin count whose af_fill launch on
 * `elems` elements takes at least target_us (median of 5), and that time. 0 or AF_E* with msg. */
int asyncfuzz_rt_calibrate(int backend, double target_us, int elems, int *spin, double *us,
                           char *msg, size_t n);
/* 1 when the device context of this process hit a sticky error (a kernel fault): every later
 * CUDA call fails, so the process must be replaced. A batch case begun after it runs on the sim
 * and writes no trace (asyncfuzz_case_begin), so the harness runs it again elsewhere. */
int asyncfuzz_rt_device_broken(void);
/* Why the runtime refused the settings of the current or last run ("" when it did not): a run
 * started from the environment (code compiled by MLIR, no harness) with an unknown
 * ASYNCFUZZ_BACKEND or ASYNCFUZZ_ABI, an ASYNCFUZZ_SCHED_SEED that is not a whole decimal number,
 * or a backend that cannot open here, goes on on the sim with a runtime.config record that fails
 * (RT_DETAIL_CONFIG). The library never prints or exits. */
const char *asyncfuzz_rt_config_error(void);
/* Why ASYNCFUZZ_SCHED_SEED, when set, is no seed (a whole decimal number from 0 to 2^64-1); NULL
 * when it is one or unset. What the asyncfuzz command checks before it starts anything. */
const char *asyncfuzz_rt_env_seed_error(void);
/* What the current or last run reported besides its records, one line each: what MLIR's wrappers
 * would print to stderr (a JIT's log, a GPU backend's warning). "" when nothing. */
const char *asyncfuzz_rt_log(void);

/* Starts a run: discards all state of the previous run (handles, buffers, trace). Returns 0
 * or AF_ENOMEM. */
int asyncfuzz_rt_begin(const RtConfig *cfg);
/* Ends the run: completes all pending device work (recording any error it meets) and counts
 * what was never destroyed. The trace and observations stay readable until the next begin. */
int asyncfuzz_rt_end(void);
/* Frees everything the runtime holds (for leak-counting tests and clean exits). */
void asyncfuzz_rt_shutdown(void);

/* Sets the calling thread's trace id (the interpreter's task id: 0 = host main). Threads that
 * never call it get ids in order of their first call. */
void asyncfuzz_rt_set_thread(int tid);

/* Tags the calling thread's next records with the Case op they implement (-1: none), so
 * checkers can map trace calls back to the Case. */
void asyncfuzz_rt_set_op(int op);

/* Region notes recorded by whoever runs async.execute regions (the interpreter):
 * spawn(r) by the parent, start(r) by the region's thread, yield(r) when its values are
 * ready, await(r) when a thread has waited for them (a host await or a region input). */
typedef enum RtRegionNote {
  RT_NOTE_SPAWN,
  RT_NOTE_START,
  RT_NOTE_YIELD,
  RT_NOTE_AWAIT,
  RT_NOTE_RELEASE, /* async object `region` (an id): the calling thread's work so far is published
                    */
  RT_NOTE_ACQUIRE  /* the calling thread has seen what was published on that object */
} RtRegionNote;
void asyncfuzz_rt_note(int note, int region, int value);

/* ---- The trace ---- */

#define RT_CALL_MAP(X)                                                                             \
  X(MODULE_LOAD, "mgpuModuleLoad")                                                                 \
  X(MODULE_LOAD_JIT, "mgpuModuleLoadJIT")                                                          \
  X(MODULE_UNLOAD, "mgpuModuleUnload")                                                             \
  X(MODULE_GET_FUNCTION, "mgpuModuleGetFunction")                                                  \
  X(LAUNCH_KERNEL, "mgpuLaunchKernel")                                                             \
  X(STREAM_CREATE, "mgpuStreamCreate")                                                             \
  X(STREAM_DESTROY, "mgpuStreamDestroy")                                                           \
  X(STREAM_SYNCHRONIZE, "mgpuStreamSynchronize")                                                   \
  X(STREAM_WAIT_EVENT, "mgpuStreamWaitEvent")                                                      \
  X(EVENT_CREATE, "mgpuEventCreate")                                                               \
  X(EVENT_DESTROY, "mgpuEventDestroy")                                                             \
  X(EVENT_SYNCHRONIZE, "mgpuEventSynchronize")                                                     \
  X(EVENT_RECORD, "mgpuEventRecord")                                                               \
  X(MEM_ALLOC, "mgpuMemAlloc")                                                                     \
  X(MEM_FREE, "mgpuMemFree")                                                                       \
  X(MEMCPY, "mgpuMemcpy")                                                                          \
  X(MEMSET32, "mgpuMemset32")                                                                      \
  X(MEMSET16, "mgpuMemset16")                                                                      \
  X(SET_DEFAULT_DEVICE, "mgpuSetDefaultDevice")                                                    \
  X(HOST_REGISTER, "mgpuMemHostRegister")                                                          \
  X(HOST_UNREGISTER, "mgpuMemHostUnregister")                                                      \
  X(HOST_INIT, "asyncfuzz_host_init")                                                              \
  X(OBSERVE, "asyncfuzz_observe")                                                                  \
  X(SPAWN, "region.spawn")                                                                         \
  X(START, "region.start")                                                                         \
  X(YIELD, "region.yield")                                                                         \
  X(AWAIT, "region.await")                                                                         \
  X(RELEASE, "async.release")                                                                      \
  X(ACQUIRE, "async.acquire")                                                                      \
  X(ASYNC_ERROR, "async.error")                                                                    \
  X(EXEC, "exec")                                                                                  \
  X(DEVICE_SYNC, "device.sync")                                                                    \
  X(LEAK, "leak")                                                                                  \
  X(CONFIG, "runtime.config") /* the run's settings were refused: it went on on the sim */         \
  /* a program's kernel (kernel_foreign) touches a whole buffer: (buffer, KERNEL_READ/WRITE,       \
   * bytes, stream), after its mgpuLaunchKernel (the cause), reads first */                        \
  X(KERNEL_ACCESS, "kernel.access")                                                                \
  /* host memory the program allocated itself, first touched by a call: (host ref, bytes) */       \
  X(HOST_ADOPT, "host.memory")                                                                     \
  /* a wrapper function the runtime does not model (asyncfuzz_rt_unmodelled_name of its one        \
   * argument): refused, no effect; printed by its own name */                                     \
  X(UNMODELLED, "unmodelled")

typedef enum RtCall {
#define RT__CALL_ENUM(id, name) RT_CALL_##id,
  RT_CALL_MAP(RT__CALL_ENUM)
#undef RT__CALL_ENUM
      RT__CALL_COUNT
} RtCall;

/* CUDA-like error codes a call can fail with. */
#define RT_ERROR_MAP(X)                                                                            \
  X(OK, "CUDA_SUCCESS")                                                                            \
  X(INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE")                                                   \
  X(INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE")                                                     \
  X(NOT_FOUND, "CUDA_ERROR_NOT_FOUND")                                                             \
  X(ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS")                                                 \
  X(OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY")                                                     \
  X(LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED")                                                     \
  X(LAUNCH_TIMEOUT, "CUDA_ERROR_LAUNCH_TIMEOUT")                                                   \
  X(INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT")                                                 \
  X(INVALID_PTX, "CUDA_ERROR_INVALID_PTX")                                                         \
  X(CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED")                                       \
  X(OTHER, "CUDA_ERROR_OTHER") /* any other driver status; its code is the record's last arg */    \
  X(NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED")                                                     \
  X(HOST_MEMORY_ALREADY_REGISTERED, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED")                   \
  X(HOST_MEMORY_NOT_REGISTERED, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED")

typedef enum RtError {
#define RT__ERR_ENUM(id, name) RT_ERR_##id,
  RT_ERROR_MAP(RT__ERR_ENUM)
#undef RT__ERR_ENUM
      RT__ERR_COUNT
} RtError;

/* Why a call failed, beyond the code. */
#define RT_DETAIL_MAP(X)                                                                           \
  X(NONE, "")                                                                                      \
  X(WRONG_KIND, "handle of the wrong kind")                                                        \
  X(DESTROYED, "handle already destroyed")                                                         \
  X(NOT_A_HANDLE, "not a handle of this run")                                                      \
  X(NULL_HANDLE, "null handle")                                                                    \
  X(USE_AFTER_FREE, "device memory used after mgpuMemFree")                                        \
  X(DOUBLE_FREE, "memory freed twice")                                                             \
  X(INVALID_FREE, "pointer was never allocated")                                                   \
  X(BAD_ARGS, "kernel arguments do not match its signature")                                       \
  X(UNKNOWN_KERNEL, "no kernel of that name")                                                      \
  X(BAD_POINTER, "pointer range outside every buffer of this run")                                 \
  X(LEAKED, "never destroyed")                                                                     \
  X(ASYNC_STUCK, "async.await of an object nothing can complete")                                  \
  X(DRIVER, "reported by the driver")                                                              \
  X(ABI_ABSENT, "not in this ABI flavour's runtime wrappers")                                      \
  X(HOST_DEVICE_MEM, "host access to device memory")                                               \
  X(CONFIG, "the runtime's settings are refused (asyncfuzz_rt_config_error says why): the run "    \
            "went on on the sim")                                                                  \
  X(UNMODELLED, "a wrapper function asyncfuzz's runtime does not model (docs/abi.md)")             \
  X(INJECTED, "failed on purpose (--fail-calls): the device reported it")

typedef enum RtDetail {
#define RT__DET_ENUM(id, text) RT_DETAIL_##id,
  RT_DETAIL_MAP(RT__DET_ENUM)
#undef RT__DET_ENUM
      RT__DETAIL_COUNT
} RtDetail;

/* A symbolic reference: what a trace argument was, never a raw address (traces of the same
 * run are byte-identical). kind in bits 56..63, id in 32..55, value in 0..31. */
typedef uint64_t RtRef;
enum {
  RT_REF_NONE,
  RT_REF_INT,    /* value: a 32-bit integer (sizes are stored whole in id:value) */
  RT_REF_NULL,   /* a null pointer or handle */
  RT_REF_STREAM, /* id: stream number (0 = legacy default stream) */
  RT_REF_EVENT,
  RT_REF_MODULE,
  RT_REF_FUNC,   /* id: kernel id */
  RT_REF_BUF,    /* id: device allocation number, value: byte offset */
  RT_REF_HOST,   /* id: host buffer id (registered ranges: 0x800000 | k), value: offset */
  RT_REF_PTR,    /* an unknown pointer (not a buffer of this run) */
  RT_REF_BAD,    /* a value that is no handle of this run */
  RT_REF_REGION, /* id: region, value: value index + 1 (0: completion) */
  RT_REF_STR,    /* id: kernel name index (known) or 0xFFFFFF (unknown) */
  RT_REF_ASYNC   /* id: an async runtime object (token, value, group, task) */
};
#define RT_REF(kind, id, val)                                                                      \
  (((uint64_t)(kind) << 56) | (((uint64_t)(id)&0xFFFFFFu) << 32) | (uint32_t)(val))
#define RT_REF_KIND(r) ((int)((r) >> 56))
#define RT_REF_ID(r) ((int)(((r) >> 32) & 0xFFFFFFu))
#define RT_REF_VAL(r) ((uint32_t)(r))

#define RT_REC_ARGS 10
typedef struct RtRec {
  uint32_t seq;  /* index in the trace */
  int32_t tid;   /* calling thread (0 = host); -1 for device-side EXEC records */
  int32_t op;    /* the Case op being executed (asyncfuzz_rt_set_op), or -1 */
  uint8_t call;  /* RtCall */
  uint8_t nargs; /* number of args used */
  uint8_t err;   /* RtError */
  uint8_t detail;
  uint32_t cause; /* EXEC: seq of the enqueuing call; errors: seq of the related call */
  RtRef args[RT_REC_ARGS];
  RtRef ret;
} RtRec;

typedef struct RtObs {
  int32_t id;   /* observe id given by the program */
  int32_t tid;  /* thread that observed */
  uint32_t seq; /* trace record */
  int64_t n;    /* number of values */
  const int32_t *vals;
} RtObs;

typedef struct RtSummary {
  int nerrors;        /* records with err != OK (calls and device steps) */
  int first_error;    /* seq of the first such record, or -1 */
  int streams_leaked; /* created streams never destroyed (the legacy stream excluded) */
  int events_leaked;
  int buffers_leaked; /* device allocations never freed */
  int streams_created, events_created;
  /* sizes of the run's id spaces (for checkers: one past the largest id in the trace) */
  int max_threads, max_streams, max_events, max_regions, max_async;
  /* the call failed on purpose (RtConfig.fail_pct): its RT_CALL_* + 1 (0: none), its RtError,
   * and 1 when the error was sticky (every later call failed with it) */
  int injected, injected_err, injected_sticky;
} RtSummary;

/* The trace of the current or last run. Valid until the next begin. */
const RtRec *asyncfuzz_rt_trace(int *n);
/* The trace of the run before the last one (valid until the next run begins): a caller that
 * compares two runs' traces keeps neither copy. */
const RtRec *asyncfuzz_rt_prev_trace(int *n);
/* Observations of the last run, in the order they were made (valid after end). */
const RtObs *asyncfuzz_rt_observations(int *n);
void asyncfuzz_rt_summary(RtSummary *out);

const char *asyncfuzz_rt_call_name(int call);
const char *asyncfuzz_rt_error_name(int err);
const char *asyncfuzz_rt_detail_text(int detail);

/* The binary trace format's version: 2 since RtSummary names a call failed on purpose (a file of
 * another version, or of another RtRec size, is refused as another build's). */
#define ASYNCFUZZ_TRACE_VERSION 2
/* Writes the last run's trace and observations in the binary trace format (docs/trace-format.md:
 * a header, the RtRec records, then the observations), which check_trace_load() reads back.
 * 0, or AF_EIO. Code compiled by MLIR gets this at exit with ASYNCFUZZ_TRACE_BIN=FILE. */
int asyncfuzz_rt_write_trace_bin(const char *path);

/* Appends the trace text (docs/trace-format.md) of records [from, to) to b; to = -1: all. */
void asyncfuzz_rt_format_trace(AfBuf *b, int from, int to);
/* Appends one record's text (no newline). */
void asyncfuzz_rt_format_rec(AfBuf *b, const RtRec *r);

#ifdef __cplusplus
}
#endif
#endif
