/*
 * rt_sim_int.h: internals of the runtime library's front end and sim backend, shared by its
 * files only (rt_trace.c, rt_handles.c, rt_sched.c, rt_run.c, rt_prog.c, rt_sim.c, rt_mem.c,
 * rt_print.c, rt_abi.c). They are
 * layered: each file calls only the ones before it in that list. Nothing outside runtime/
 * includes this; the symbols are hidden in libasyncfuzz_rt.so.
 *
 * Model (CUDA Driver API semantics, ../shared/reference/stream-semantics-and-hb.md):
 * - A stream is a FIFO of work items; stream 0 is the legacy default stream (the NULL
 *   handle). Streams made by mgpuStreamCreate are non-blocking, as MLIR's wrappers make
 *   them, so the legacy stream does not synchronize with them.
 * - mgpuEventRecord(e, s) captures "everything enqueued on s so far" as (s, count).
 *   mgpuStreamWaitEvent(s, e) enqueues a wait item on s for that capture (none if never
 *   recorded). Synchronize calls run device steps until the capture completes.
 * - A kernel runs in two steps: start (writes KERNEL_SENTINEL over its output) and finish
 *   (writes the result), so a reader between the two sees sentinels, as on a slow GPU.
 * - mgpuMemAlloc is synchronous (fresh memory reads KERNEL_UNINIT); mgpuMemFree is immediate
 *   and not stream-ordered, as in MLIR's wrappers (memfree_sync=1 models a driver that
 *   synchronizes first). Freed memory is poisoned and kept until the run ends, so work that
 *   touches it later is reported (ILLEGAL_ADDRESS) instead of corrupting the process.
 * - Device work advances only inside runtime calls: at the start of every call the policy
 *   may run some steps (eager: all of them, also after each enqueue; lazy: none; random: a
 *   few random streams; pct: a few steps of the highest-priority stream, priorities lowered
 *   at random change points). Everything is driven by one seeded PRNG: deterministic.
 *
 * Backends `cuda` and `hip` (cfg.backend, rt_dev.h): the same front end (handles, checks,
 * trace) with the device work done by the CUDA driver or the HIP runtime instead of the queues
 * above. In `tagged` mode the program
 * gets the same tagged handles, and a misused handle or a freed buffer is refused before it
 * reaches the driver, as in the sim; freed memory is poisoned on the device and kept until the
 * run ends. In `raw` mode the program gets the driver's own handles, every call goes to the
 * driver as MLIR's wrappers make it, and the trace records what the driver answered.
 */
#ifndef RUNNER_RT_SIM_INT_H
#define RUNNER_RT_SIM_INT_H

#include "asyncfuzz_rt.h"
#include "../kernels/kernels.h"
#include "rt_dev.h"
#include "runtime_int.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Handle encoding: 0xAF in the top byte, kind, the run's epoch and an index. */
#define H_TAG 0xAFull
#define H_STREAM 1u
#define H_EVENT 2u
#define H_MODULE 3u
/* A function handle's index for a kernel the pipeline outlined from a gpu.launch ("<func>_kernel":
 * which one, its first argument says, KERNEL_TAG): RT_FUNC_OUTLINED on the sim; on a GPU,
 * RT_FUNC_OUTLINED + 1 + the slot of the driver's function in ofns. */
#define RT_FUNC_OUTLINED 0x10000
#define RT_OUTLINED_SLOTS 64
#define H_FUNC 4u
/* rt__handle_arg's kind for a stream that must be one the program made (NULL is no stream) */
#define H_STREAM_MADE (H_STREAM | 0x100u)

enum { W_KERNEL, W_MEMCPY, W_MEMSET32, W_MEMSET16, W_WAIT };

typedef struct Work {
  uint8_t kind, phase;
  uint32_t call; /* trace seq of the enqueuing call */
  int kernel, nbufs;
  char *bufs[KERNEL_MAX_BUFS];     /* a kernel's operands (elements of its type) */
  int64_t stride[KERNEL_MAX_BUFS]; /* elements between a kernel operand's elements */
  int64_t n;
  int32_t v;
  int64_t threads; /* a kernel's: threads a block */
  int32_t smem;    /* ... and the bytes of dynamic shared memory its launch gave */
  void *dst;
  const void *src;
  size_t bytes, count;
  uint32_t value;
  int wait_stream;
  uint64_t wait_seq;
  int fx, nfx;  /* a program's kernel: its effects, rt->fx[fx .. fx+nfx) */
  uint64_t mix; /* ... and what it read when it started */
} Work;

/* What a program's kernel does to one whole buffer (rt_prog.c). */
typedef struct KernelFx {
  char *p;
  size_t bytes;
  uint8_t access; /* KERNEL_READ / KERNEL_WRITE */
} KernelFx;

typedef struct Stream {
  void *dh; /* cuda: the driver's stream (NULL: the legacy stream) */
  Work *q;
  int qhead, qlen, qcap;
  uint64_t enq, done;
  int destroyed;
  uint32_t prio;
  /* the streams whose head item waits on this one's work: a list through blk_next (index + 1;
   * 0 ends it), walked when this stream completes an item */
  int blk_first, blk_next;
} Stream;

typedef struct Event {
  void *dh;
  int recorded, destroyed, stream;
  uint64_t seq;
} Event;

typedef struct Alloc {
  char *p;
  size_t bytes;
  int freed, shared;
  int dev; /* allocated by the hardware backend; released (dev 2) when the run ends */
} Alloc;

/* A freed allocation's memory, which work still queued may touch (rt__freed_alloc). */
typedef struct FreedRange {
  const char *lo, *hi;
  int alloc;
} FreedRange;

typedef struct HostBuf {
  char *p;
  size_t bytes;
  int id;
  int adopted; /* memory a program allocated itself (rt__adopt) */
} HostBuf;

typedef struct Rt {
  pthread_mutex_t mu;
  int active;
  /* the run's RtConfig.one_thread: its calls take no lock. Read without the lock, so written
   * only when it changes (never in a run of MLIR-compiled code, whose threads call in at once) */
  int unlocked;
  RtConfig cfg;
  AfRng rng;
  /* a call failed on purpose (cfg.fail_pct): its kind (-1: none), which one of its kind, the
   * error, whether it sticks; calls of that kind so far; the sticky error in force (0: none);
   * the kind of the call being made */
  int inj_call, inj_nth, inj_err, inj_sticky, inj_seen, sticky_err, cur_call;
  uint32_t epoch;
  Stream *streams;
  int nstreams, capstreams;
  int hwstreams;     /* slots below it keep their queue's memory from run to run (q, qcap) */
  uint64_t *runbits; /* the streams whose head item can run now, by index (what the scheduler
                      * picks from), and how many: kept as queues and waits change */
  int nrun, caprun;
  Event *events;
  int nevents, capevents;
  int nmodules, modules_live;
  void **mods; /* cuda: the driver's module of each module handle (NULL once unloaded) */
  int capmods;
  void *fns[KERNEL__IDS];        /* cuda: the driver's function of each kernel, latest module */
  void *ofns[RT_OUTLINED_SLOTS]; /* cuda: the driver's outlined functions (RT_FUNC_OUTLINED) */
  int nofns;
  const RtDevOps *dev; /* the backend's device, or NULL for the sim */
  int dev_broken;      /* a sticky device error: every later call fails */
  int no_trace;        /* a batch case after a sticky error: it writes no trace */
  uint32_t mod_epoch;  /* module handles outlive runs in batch mode (asyncfuzz_case_begin) */
  Alloc *allocs;
  int nallocs, capallocs;
  FreedRange *freed; /* the ranges of the allocations freed so far, in the order they were freed */
  int nfreed, capfreed;
  HostBuf *hosts;
  int nhosts, caphosts;
  KernelFx *fx; /* the effects of the program kernels launched in this run */
  int nfx, capfx;
  RtRec *trace;
  int ntrace, captrace;
  RtRec *prev; /* the run before's trace, kept until the next begin (asyncfuzz_rt_prev_trace) */
  int nprev, capprev;
  RtObs *obs;
  int nobs, capobs;
  int32_t *obsdata;
  int nobsdata, capobsdata;
  uint64_t steps;
  uint64_t change_points[8];
  int nchange;
  int next_tid;
  int oom;
  RtSummary sum;
} Rt;

#pragma GCC visibility push(hidden)

/* ---- the run's state, the trace records (rt_trace.c) ---- */
extern Rt rt__g_rt;
extern const RtDevOps *rt__g_dev[RT__BACKEND_COUNT];
extern RtDeviceInfo rt__g_dev_info[RT__BACKEND_COUNT];
extern int rt__g_env_run;
/* initial-exec: a thread local read directly from the thread pointer, not through __tls_get_addr
 * (4% of a case when every call read it so); the library is linked or dlopened early, and glibc
 * keeps static room for a few bytes of such late-loaded variables */
#if defined(__GNUC__) && defined(__ELF__)
#define RT__TLS_IE __attribute__((tls_model("initial-exec")))
#else
#define RT__TLS_IE
#endif
extern _Thread_local int rt__t_tid RT__TLS_IE;
RtRec *rt__rec_new(Rt *rt, int call);
void rt__rec_arg(RtRec *r, RtRef a);
void rt__rec_fail(Rt *rt, RtRec *r, int err, int detail);
RtRef rt__ref_ptr(Rt *rt, const void *p);
RtRef rt__ref_int(uint64_t v);
extern char rt__g_backend_msg[512];
/* The run's log: what a wrapper would print (a JIT log, a backend's warning), one line per call;
 * cleared when a run begins. */
extern char rt__g_log[2048];
void rt__log(const char *msg);

/* ---- handles and the checks on them; the device's answers (rt_handles.c) ---- */
void *rt__h_make(Rt *rt, unsigned kind, int idx);
int rt__h_decode(Rt *rt, const void *h, unsigned kind, int *detail, RtRef *ref);
int rt__stream_arg(Rt *rt, const void *h, int *detail, RtRef *ref);
void *rt__h_out(Rt *rt, unsigned kind, int idx, void *dh);
int rt__dev_result(Rt *rt, RtRec *r, int code, int detail);
int rt__dev_pass(Rt *rt, int idx);
/* 1 when the run's ABI flavour has no such call (rocm: mgpuModuleLoadJIT, mgpuMemset16); the
 * record fails with RT_ERR_NOT_FOUND, RT_DETAIL_ABI_ABSENT and the call has no effect. */
int rt__abi_absent(Rt *rt, RtRec *r);
/* Allocation i is freed: its memory is poison from now on (a use of it is a use after free). */
void rt__mark_freed(Rt *rt, int i);
int rt__freed_alloc(Rt *rt, const void *p, size_t n);
int rt__range_kind(Rt *rt, const void *p, size_t n);
char *rt__memref_range(int64_t rank, void *desc, int64_t esz, uint64_t *bytes);

/* ---- the scheduler: work queues, steps and the policies (rt_sched.c) ---- */
void rt__drain(Rt *rt);
void rt__run_until(Rt *rt, int s, uint64_t seq);
void rt__pump(Rt *rt);
Work *rt__enqueue(Rt *rt, int s, int kind, uint32_t call);
/* A wait item on stream s for the first seq items of stream t (rt__enqueue, then its target).
 */
Work *rt__enqueue_wait(Rt *rt, int s, int t, uint64_t seq, uint32_t call);
/* A run ends: no stream has work the scheduler may pick. */
void rt__sched_reset(Rt *rt);
/* rocm: streams from mgpuStreamCreate are blocking (hipStreamCreate's default flags): work on
 * the legacy stream s0 first waits for everything enqueued on them, and their later work
 * (an event record too) waits for s0's. Enqueues those waits on s (wait items); 0, or -1 out
 * of memory. rt__enqueue does it for every work item. */
int rt__legacy_order(Rt *rt, int s, uint32_t call);

/* ---- a user's program (rt_prog.c) ---- */
/* Host memory at [p, p+bytes) that no buffer of the run covers, taken as a host buffer of its own
 * (a host.memory record) under cfg.program; a buffer that starts at p grows to bytes. */
void rt__adopt(Rt *rt, const void *p, size_t bytes);
/* A launch of program kernel k (kernel_foreign) on stream s: its buffers from params, its
 * kernel.access records, its work. r is the launch's record. */
void rt__launch_foreign(Rt *rt, RtRec *r, int k, int s, void **params, size_t nparams);
/* The host reads size elements of esize bytes at base, stride elements apart (rt_mem.c): an
 * observation `id` (typed: not i32 elements, whose size the record names). Enters the runtime
 * itself. */
void rt__observe(int32_t id, const char *base, int64_t size, int64_t stride, int esize, int typed);
int rt__new_stream(Rt *rt);

/* ---- the backends: opening a GPU's library (rt_backend.c) ---- */
/* Opens backend's device (its library, then its init), once per process; the lock is held. 0, or
 * AF_EUNSUPPORTED with why in msg. */
int rt__open_dev(int backend, char *msg, size_t n);

/* ---- a run: begin, end, enter and leave every call (rt_run.c) ---- */
Rt *rt__enter(void);
void rt__leave(Rt *rt);

/* ---- an mgpu* entry point: one preamble, one validation ladder ----
 * Every wrapper of the ABI begins with rt__call (or rt__call_on, whose host memory a
 * user's program may own), decodes its handles with rt__handle_arg, asks rt__route where
 * a call on handles goes, and ends with rt__leave. (Inline: these sit on every call.) */

/* The run entered (rt__leave ends it), the work due by now done (rt__pump), the host
 * memory at a and b (bytes each) adopted when the program owns it (cfg.program), and the call's
 * record begun (NULL when the trace is off): the record. */
static inline RtRec *rt__call_on(Rt **rtp, int call, const void *a, const void *b, size_t bytes) {
  Rt *rt = *rtp = rt__enter();
  rt->cur_call = call;
  rt__pump(rt);
  rt__adopt(rt, a, bytes);
  rt__adopt(rt, b, bytes);
  return rt__rec_new(rt, call);
}
static inline RtRec *rt__call(Rt **rtp, int call) {
  return rt__call_on(rtp, call, NULL, NULL, 0);
}

/* A handle argument decoded as kind (H_STREAM: NULL is the legacy stream; H_STREAM_MADE;
 * H_EVENT...) and recorded as the call's next argument: its index, or -1 with *det why it is
 * none. */
static inline int rt__handle_arg(Rt *rt, RtRec *r, const void *h, unsigned kind, int *det) {
  RtRef ref;
  int i = kind == H_STREAM ? rt__stream_arg(rt, h, det, &ref)
                           : rt__h_decode(rt, h, kind & 0xffu, det, &ref);
  rt__rec_arg(r, ref);
  return i;
}

/* Where a call on handles goes (ok: every handle is valid, else det says why not):
 * RT_TO_DEVICE, a GPU backend takes it (raw handles as they are given, else valid ones only);
 * RT_TO_NONE, a handle is misused: the record fails with RT_ERR_INVALID_HANDLE and det, and the
 * call has no effect, as the wrapper's error print; RT_TO_SIM, the simulator carries it out. */
enum { RT_TO_SIM, RT_TO_DEVICE, RT_TO_NONE };
/* Whether the call being made fails on purpose (cfg.fail_pct: the chosen one, or any call after a
 * sticky error): then r fails with the device's error, as reported (RT_DETAIL_INJECTED), and the
 * call has no effect (rt_run.c). */
int rt__injected(Rt *rt, RtRec *r);
static inline int rt__inject(Rt *rt, RtRec *r) {
  return (rt->inj_call >= 0 || rt->sticky_err) && rt__injected(rt, r);
}
static inline int rt__route(Rt *rt, RtRec *r, int ok, int det) {
  if (rt__inject(rt, r))
    return RT_TO_NONE;
  if (rt->dev && (rt->cfg.raw_handles || ok))
    return RT_TO_DEVICE;
  if (!ok) {
    rt__rec_fail(rt, r, RT_ERR_INVALID_HANDLE, det);
    return RT_TO_NONE;
  }
  return RT_TO_SIM;
}

#pragma GCC visibility pop

#endif
