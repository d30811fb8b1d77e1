/*
 * rt_sim.c: the mgpu* ABI over the deterministic `sim` backend, and the trace.
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
 * Backend `cuda` (cfg.backend, rt_dev.h): the same front end (handles, checks, trace) with the
 * device work done by the CUDA driver instead of the queues above. In `tagged` mode the program
 * gets the same tagged handles, and a misused handle or a freed buffer is refused before it
 * reaches the driver, as in the sim; freed memory is poisoned on the device and kept until the
 * run ends. In `raw` mode the program gets the driver's own handles, every call goes to the
 * driver as MLIR's wrappers make it, and the trace records what the driver answered.
 */
#define _GNU_SOURCE /* dladdr */
#include "asyncfuzz_rt.h"
#include "kernels.h"
#include "rt_dev.h"
#include "runner_int.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Handle encoding: 0xAF in the top byte, kind, the run's epoch and an index. */
#define H_TAG 0xAFull
#define H_STREAM 1u
#define H_EVENT 2u
#define H_MODULE 3u
#define H_FUNC 4u

enum { W_KERNEL, W_MEMCPY, W_MEMSET32, W_MEMSET16, W_WAIT };

typedef struct Work {
  uint8_t kind, phase;
  uint32_t call; /* trace seq of the enqueuing call */
  int kernel, nbufs;
  int32_t *bufs[KERNEL_MAX_BUFS];
  int64_t n;
  int32_t v;
  void *dst;
  const void *src;
  size_t bytes, count;
  uint32_t value;
  int wait_stream;
  uint64_t wait_seq;
} Work;

typedef struct Stream {
  void *dh; /* cuda: the driver's stream (NULL: the legacy stream) */
  Work *q;
  int qhead, qlen, qcap;
  uint64_t enq, done;
  int destroyed;
  uint32_t prio;
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

typedef struct HostBuf {
  char *p;
  size_t bytes;
  int id;
} HostBuf;

typedef struct Rt {
  pthread_mutex_t mu;
  int active;
  RtConfig cfg;
  AfRng rng;
  uint32_t epoch;
  Stream *streams;
  int nstreams, capstreams;
  Event *events;
  int nevents, capevents;
  int nmodules, modules_live;
  void **mods; /* cuda: the driver's module of each module handle (NULL once unloaded) */
  int capmods;
  void *fns[KERNEL__COUNT]; /* cuda: the driver's function of each kernel, latest module */
  const RtDevOps *dev;      /* the backend's device, or NULL for the sim */
  int dev_broken;           /* a sticky device error: every later call fails */
  uint32_t mod_epoch;       /* module handles outlive runs in batch mode (asyncfuzz_case_begin) */
  Alloc *allocs;
  int nallocs, capallocs;
  HostBuf *hosts;
  int nhosts, caphosts;
  RtRec *trace;
  int ntrace, captrace;
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

static Rt g_rt = {.mu = PTHREAD_MUTEX_INITIALIZER};
static const RtDevOps *g_cuda; /* libasyncfuzz_cuda.so's device, once opened */
static RtDeviceInfo g_cuda_info;
static int g_env_run; /* the current run was started from the environment (no harness) */
static _Thread_local int t_tid = -1;
static _Thread_local int t_op = -1;

/* ---- names ---- */

static const char *const call_names[] = {
#define RT__CALL_NAME(id, name) name,
    RT_CALL_MAP(RT__CALL_NAME)
#undef RT__CALL_NAME
};
static const char *const err_names[] = {
#define RT__ERR_NAME(id, name) name,
    RT_ERROR_MAP(RT__ERR_NAME)
#undef RT__ERR_NAME
};
static const char *const detail_texts[] = {
#define RT__DET_TEXT(id, text) text,
    RT_DETAIL_MAP(RT__DET_TEXT)
#undef RT__DET_TEXT
};
static const char *const policy_names[RT__POLICY_COUNT] = {"eager", "lazy", "random", "pct"};

const char *asyncfuzz_rt_call_name(int call) {
  return call >= 0 && call < RT__CALL_COUNT ? call_names[call] : "?";
}
const char *asyncfuzz_rt_error_name(int err) {
  return err >= 0 && err < RT__ERR_COUNT ? err_names[err] : "?";
}
const char *asyncfuzz_rt_detail_text(int detail) {
  return detail >= 0 && detail < RT__DETAIL_COUNT ? detail_texts[detail] : "?";
}
const char *asyncfuzz_rt_policy_name(int policy) {
  return policy >= 0 && policy < RT__POLICY_COUNT ? policy_names[policy] : "?";
}
int asyncfuzz_rt_policy_parse(const char *name) {
  for (int i = 0; i < RT__POLICY_COUNT; i++)
    if (strcmp(name, policy_names[i]) == 0)
      return i;
  return -1;
}

/* ---- trace ---- */

static RtRec *rec_new(Rt *rt, int call) {
  if (af_grow((void **)&rt->trace, &rt->captrace, rt->ntrace + 1, sizeof(RtRec))) {
    rt->oom = 1;
    return NULL;
  }
  RtRec *r = &rt->trace[rt->ntrace];
  memset(r, 0, sizeof *r);
  r->seq = (uint32_t)rt->ntrace++;
  r->tid = t_tid;
  if (t_tid >= rt->sum.max_threads)
    rt->sum.max_threads = t_tid + 1;
  r->op = t_op;
  r->call = (uint8_t)call;
  return r;
}

static void rec_arg(RtRec *r, RtRef a) {
  if (r && r->nargs < RT_REC_ARGS)
    r->args[r->nargs++] = a;
}

static void rec_fail(Rt *rt, RtRec *r, int err, int detail) {
  if (r == NULL)
    return;
  if (r->err == RT_ERR_OK) {
    rt->sum.nerrors++;
    if (rt->sum.first_error < 0)
      rt->sum.first_error = (int)r->seq;
  }
  r->err = (uint8_t)err;
  r->detail = (uint8_t)detail;
}

/* Symbolic name of a pointer: a device allocation, a registered host buffer or unknown. */
static RtRef ref_ptr(Rt *rt, const void *p) {
  if (p == NULL)
    return RT_REF(RT_REF_NULL, 0, 0);
  const char *c = p;
  for (int i = rt->nallocs - 1; i >= 0; i--) {
    Alloc *a = &rt->allocs[i];
    if (c >= a->p && c < a->p + (a->bytes ? a->bytes : 1))
      return RT_REF(RT_REF_BUF, i, (uint32_t)(c - a->p));
  }
  for (int i = 0; i < rt->nhosts; i++) {
    HostBuf *h = &rt->hosts[i];
    if (c >= h->p && c < h->p + (h->bytes ? h->bytes : 1))
      return RT_REF(RT_REF_HOST, h->id, (uint32_t)(c - h->p));
  }
  return RT_REF(RT_REF_PTR, 0, 0);
}

static RtRef ref_int(uint64_t v) {
  return RT_REF(RT_REF_INT, (v >> 32) & 0xFFFFFF, (uint32_t)v);
}

/* ---- handles ---- */

static void *h_make(Rt *rt, unsigned kind, int idx) {
  uint32_t ep = kind == H_MODULE ? rt->mod_epoch : rt->epoch;
  uint64_t v =
      (H_TAG << 56) | ((uint64_t)kind << 48) | ((uint64_t)(ep & 0xFFFF) << 32) | (uint32_t)idx;
  return (void *)(uintptr_t)v;
}

/* Raw handles (cuda:raw): the driver's own pointer, named by searching the run's tables, the
 * newest live one first. Returns the index as h_decode does. */
static int h_lookup(Rt *rt, const void *h, unsigned kind, int *detail, RtRef *ref) {
  int found = -1, fkind = 0, dead = 0;
  for (int pass = 0; pass < 2 && found < 0; pass++) { /* live handles, then destroyed ones */
    for (int i = rt->nstreams - 1; i >= 1 && found < 0; i--)
      if (rt->streams[i].dh == h && rt->streams[i].destroyed == pass)
        found = i, fkind = H_STREAM, dead = pass;
    for (int i = rt->nevents - 1; i >= 0 && found < 0; i--)
      if (rt->events[i].dh == h && rt->events[i].destroyed == pass)
        found = i, fkind = H_EVENT, dead = pass;
  }
  for (int i = rt->nmodules - 1; i >= 0 && found < 0; i--)
    if (rt->mods[i] == h)
      found = i, fkind = H_MODULE;
  for (int k = 0; k < KERNEL__COUNT && found < 0; k++)
    if (rt->fns[k] == h)
      found = k, fkind = H_FUNC;
  if (found < 0) {
    *ref = ref_ptr(rt, h);
    if (RT_REF_KIND(*ref) == RT_REF_PTR)
      *ref = RT_REF(RT_REF_BAD, 0, 0);
    *detail = RT_DETAIL_NOT_A_HANDLE;
    return -1;
  }
  int rk = fkind == H_STREAM   ? RT_REF_STREAM
           : fkind == H_EVENT  ? RT_REF_EVENT
           : fkind == H_MODULE ? RT_REF_MODULE
                               : RT_REF_FUNC;
  *ref = RT_REF(rk, found, 0);
  if ((unsigned)fkind != kind) {
    *detail = RT_DETAIL_WRONG_KIND;
    return -1;
  }
  if (dead) {
    *detail = RT_DETAIL_DESTROYED;
    return -1;
  }
  return found;
}

/* Decodes a handle expected to be of `kind`. Returns the index, or -1 and sets *detail. */
static int h_decode(Rt *rt, const void *h, unsigned kind, int *detail, RtRef *ref) {
  uint64_t v = (uint64_t)(uintptr_t)h;
  *detail = RT_DETAIL_NONE;
  if (h == NULL) {
    *ref = RT_REF(RT_REF_NULL, 0, 0);
    *detail = RT_DETAIL_NULL_HANDLE;
    return -1;
  }
  if (rt->dev && rt->cfg.raw_handles)
    return h_lookup(rt, h, kind, detail, ref);
  unsigned hk = (unsigned)((v >> 48) & 0xFF);
  int idx = (int)(uint32_t)v;
  uint32_t ep = hk == H_MODULE ? rt->mod_epoch : rt->epoch;
  if ((v >> 56) != H_TAG || ((v >> 32) & 0xFFFF) != (ep & 0xFFFF)) {
    *ref = ref_ptr(rt, h);
    if (RT_REF_KIND(*ref) == RT_REF_PTR)
      *ref = RT_REF(RT_REF_BAD, 0, 0);
    *detail = RT_DETAIL_NOT_A_HANDLE;
    return -1;
  }
  int n = hk == H_STREAM   ? rt->nstreams
          : hk == H_EVENT  ? rt->nevents
          : hk == H_MODULE ? rt->nmodules
          : hk == H_FUNC   ? KERNEL__COUNT
                           : 0;
  int rk = hk == H_STREAM   ? RT_REF_STREAM
           : hk == H_EVENT  ? RT_REF_EVENT
           : hk == H_MODULE ? RT_REF_MODULE
           : hk == H_FUNC   ? RT_REF_FUNC
                            : RT_REF_BAD;
  if (idx < 0 || idx >= n || rk == RT_REF_BAD) {
    *ref = RT_REF(RT_REF_BAD, 0, 0);
    *detail = RT_DETAIL_NOT_A_HANDLE;
    return -1;
  }
  *ref = RT_REF(rk, idx, 0);
  if (hk != kind) {
    *detail = RT_DETAIL_WRONG_KIND;
    return -1;
  }
  if ((hk == H_STREAM && rt->streams[idx].destroyed) ||
      (hk == H_EVENT && rt->events[idx].destroyed)) {
    *detail = RT_DETAIL_DESTROYED;
    return -1;
  }
  return idx;
}

/* A stream argument: NULL is the legacy stream (0). Returns -1 on a bad handle. */
static int stream_arg(Rt *rt, const void *h, int *detail, RtRef *ref) {
  if (h == NULL && rt->nstreams == 0) { /* the legacy stream could not be made (no memory) */
    *detail = RT_DETAIL_NULL_HANDLE;
    *ref = RT_REF(RT_REF_NULL, 0, 0);
    return -1;
  }
  if (h == NULL) {
    *detail = RT_DETAIL_NONE;
    *ref = RT_REF(RT_REF_STREAM, 0, 0);
    return 0;
  }
  return h_decode(rt, h, H_STREAM, detail, ref);
}

/* ---- the hardware backend ---- */

/* The handle the program gets for table entry dh / tagged (kind, idx). */
static void *h_out(Rt *rt, unsigned kind, int idx, void *dh) {
  return rt->dev && rt->cfg.raw_handles ? dh : h_make(rt, kind, idx);
}

static int dev_error(int code) {
  switch (code) {
  case 0:
    return RT_ERR_OK;
  case 1:
    return RT_ERR_INVALID_VALUE;
  case 2:
    return RT_ERR_OUT_OF_MEMORY;
  case 201:
    return RT_ERR_INVALID_CONTEXT;
  case 218:
    return RT_ERR_INVALID_PTX;
  case 400:
    return RT_ERR_INVALID_HANDLE;
  case 500:
    return RT_ERR_NOT_FOUND;
  case 700:
    return RT_ERR_ILLEGAL_ADDRESS;
  case 702:
    return RT_ERR_LAUNCH_TIMEOUT;
  case 719:
    return RT_ERR_LAUNCH_FAILED;
  default:
    return RT_ERR_OTHER;
  }
}

/* Errors after which the context is unusable (the driver's "sticky" errors). */
static int dev_sticky(int code) {
  return code == 700 || (code >= 714 && code <= 720) || code == 702 || code == 999;
}

/* Records the driver's answer `code` to the call of record r (detail: what the front end knows of
 * the handles involved, else "reported by the driver"). Returns code. */
static int dev_result(Rt *rt, RtRec *r, int code, int detail) {
  if (code == 0)
    return 0;
  if (dev_sticky(code))
    rt->dev_broken = 1;
  int e = dev_error(code);
  if (e == RT_ERR_OTHER)
    rec_arg(r, ref_int((uint32_t)code));
  rec_fail(rt, r, e, detail != RT_DETAIL_NONE ? detail : RT_DETAIL_DRIVER);
  return code;
}

/* Where a device call goes in cuda mode: tagged, only a handle that decoded (idx >= 0), as the
 * table's driver handle; raw, whatever the program passed. Returns 0 when the call must not be
 * made (tagged, refused). */
static int dev_pass(Rt *rt, int idx) {
  return rt->cfg.raw_handles || idx >= 0;
}

/* ---- device model ---- */

static int event_complete(Rt *rt, int s, uint64_t seq) {
  return rt->streams[s].done >= seq;
}

static int stream_runnable(Rt *rt, int s) {
  Stream *st = &rt->streams[s];
  if (st->qlen == 0)
    return 0;
  Work *w = &st->q[st->qhead];
  if (w->kind == W_WAIT)
    return event_complete(rt, w->wait_stream, w->wait_seq);
  return 1;
}

/* An allocation containing [p, p+n) that was freed, or -1. */
static int freed_alloc(Rt *rt, const void *p, size_t n) {
  const char *c = p;
  for (int i = 0; i < rt->nallocs; i++) {
    Alloc *a = &rt->allocs[i];
    if (a->freed && c < a->p + a->bytes && c + (n ? n : 1) > a->p)
      return i;
  }
  return -1;
}

/* Where [p, p+n) lies: 1 inside one device allocation or registered host buffer, 0 outside
 * every one of them (plain host memory), -1 when it is NULL or overruns a buffer it starts
 * in. Kernels need 1; copies and sets accept plain host memory, as CUDA does with UVA. */
static int range_kind(Rt *rt, const void *p, size_t n) {
  const char *c = p;
  if (c == NULL)
    return -1;
  for (int i = 0; i < rt->nallocs; i++) {
    Alloc *a = &rt->allocs[i];
    if (c >= a->p && c < a->p + a->bytes)
      return c + n <= a->p + a->bytes ? 1 : -1;
  }
  for (int i = 0; i < rt->nhosts; i++) {
    HostBuf *h = &rt->hosts[i];
    if (c >= h->p && c < h->p + h->bytes)
      return c + n <= h->p + h->bytes ? 1 : -1;
  }
  return 0;
}

/* phase: EXEC_START (a kernel wrote its sentinels) or EXEC_DONE */
enum { EXEC_START = 1, EXEC_DONE = 2 };

static void exec_rec(Rt *rt, int s, Work *w, int phase, int err, int detail) {
  if (!rt->cfg.record_device && err == RT_ERR_OK)
    return;
  int save = t_tid;
  t_tid = -1;
  RtRec *r = rec_new(rt, RT_CALL_EXEC);
  t_tid = save;
  if (r == NULL)
    return;
  r->cause = w->call;
  r->op = w->call < (uint32_t)rt->ntrace ? rt->trace[w->call].op : -1;
  rec_arg(r, RT_REF(RT_REF_STREAM, s, 0));
  rec_arg(r, ref_int(w->call));
  rec_arg(r, ref_int((uint64_t)phase));
  if (err)
    rec_fail(rt, r, err, detail);
}

/* Runs one step of the head item of stream s (which must be runnable). */
static void step(Rt *rt, int s) {
  Stream *st = &rt->streams[s];
  Work *w = &st->q[st->qhead];
  rt->steps++;
  int bad = -1;
  switch (w->kind) {
  case W_KERNEL:
    for (int b = 0; b < w->nbufs && bad < 0; b++)
      bad = freed_alloc(rt, w->bufs[b], (size_t)w->n * 4);
    if (bad >= 0) {
      exec_rec(rt, s, w, EXEC_DONE, RT_ERR_ILLEGAL_ADDRESS, RT_DETAIL_USE_AFTER_FREE);
      break;
    }
    if (w->phase == 0) {
      for (int64_t i = 0; i < w->n; i++)
        w->bufs[0][i] = KERNEL_SENTINEL;
      w->phase = 1;
      exec_rec(rt, s, w, EXEC_START, 0, 0);
      return; /* stays at the head */
    } else {
      const int32_t *src[KERNEL_MAX_BUFS];
      for (int b = 1; b < w->nbufs; b++)
        src[b - 1] = w->bufs[b];
      kernel_ref(w->kernel, w->bufs[0], src, w->n, w->v);
      exec_rec(rt, s, w, EXEC_DONE, 0, 0);
    }
    break;
  case W_MEMCPY:
    bad = freed_alloc(rt, w->dst, w->bytes);
    if (bad < 0)
      bad = freed_alloc(rt, w->src, w->bytes);
    if (bad >= 0) {
      exec_rec(rt, s, w, EXEC_DONE, RT_ERR_ILLEGAL_ADDRESS, RT_DETAIL_USE_AFTER_FREE);
      break;
    }
    memmove(w->dst, w->src, w->bytes);
    exec_rec(rt, s, w, EXEC_DONE, 0, 0);
    break;
  case W_MEMSET32:
  case W_MEMSET16: {
    size_t esz = w->kind == W_MEMSET32 ? 4 : 2;
    if (freed_alloc(rt, w->dst, w->count * esz) >= 0) {
      exec_rec(rt, s, w, EXEC_DONE, RT_ERR_ILLEGAL_ADDRESS, RT_DETAIL_USE_AFTER_FREE);
      break;
    }
    for (size_t i = 0; i < w->count; i++) {
      if (esz == 4)
        memcpy((char *)w->dst + 4 * i, &w->value, 4);
      else {
        uint16_t v16 = (uint16_t)w->value;
        memcpy((char *)w->dst + 2 * i, &v16, 2);
      }
    }
    exec_rec(rt, s, w, EXEC_DONE, 0, 0);
    break;
  }
  case W_WAIT:
    exec_rec(rt, s, w, EXEC_DONE, 0, 0);
    break;
  }
  st->qhead++;
  st->qlen--;
  st->done++;
  if (st->qlen == 0)
    st->qhead = 0;
}

static int collect_runnable(Rt *rt, int *out) {
  int n = 0;
  for (int s = 0; s < rt->nstreams; s++)
    if (stream_runnable(rt, s))
      out[n++] = s;
  return n;
}

/* Picks a runnable stream as the policy wants; -1 when none. */
static int pick(Rt *rt) {
  int stackbuf[64];
  int *cand = rt->nstreams <= 64 ? stackbuf : malloc(sizeof(int) * (size_t)rt->nstreams);
  if (cand == NULL)
    return -1;
  int n = collect_runnable(rt, cand);
  int s = -1;
  if (n > 0) {
    switch (rt->cfg.policy) {
    case RT_RANDOM:
      s = cand[af_rng_below(&rt->rng, (uint32_t)n)];
      break;
    case RT_PCT:
      s = cand[0];
      for (int i = 1; i < n; i++)
        if (rt->streams[cand[i]].prio > rt->streams[s].prio)
          s = cand[i];
      for (int i = 0; i < rt->nchange; i++)
        if (rt->change_points[i] == rt->steps)
          rt->streams[s].prio = (uint32_t)i; /* demote below every initial priority */
      break;
    default:
      s = cand[0];
      break;
    }
  }
  if (cand != stackbuf)
    free(cand);
  return s;
}

static void drain(Rt *rt) {
  int s;
  if (rt->dev)
    return; /* the hardware runs its own queues */
  while ((s = pick(rt)) >= 0)
    step(rt, s);
}

/* Runs device steps until stream s has completed `seq` items. */
static void run_until(Rt *rt, int s, uint64_t seq) {
  if (rt->dev)
    return;
  while (!event_complete(rt, s, seq)) {
    int t;
    if (rt->cfg.policy == RT_EAGER || rt->cfg.policy == RT_LAZY) {
      /* Only what the wait needs: follow the chain of waits from s. */
      t = s;
      for (int guard = 0; guard <= rt->nstreams; guard++) {
        Stream *st = &rt->streams[t];
        Work *w = &st->q[st->qhead];
        if (w->kind == W_WAIT && !event_complete(rt, w->wait_stream, w->wait_seq))
          t = w->wait_stream;
        else
          break;
      }
      if (!stream_runnable(rt, t))
        t = pick(rt);
    } else {
      t = pick(rt);
    }
    if (t < 0)
      return; /* cannot happen: waits only capture work enqueued earlier */
    step(rt, t);
  }
}

/* The policy's chance to advance device work at a runtime call. */
static void pump(Rt *rt) {
  if (rt->dev) {
    rt->dev->enter();
    return;
  }
  switch (rt->cfg.policy) {
  case RT_EAGER:
    drain(rt);
    break;
  case RT_LAZY:
    break;
  case RT_RANDOM:
  case RT_PCT: {
    int k = (int)af_rng_below(&rt->rng, 4);
    for (int i = 0; i < k; i++) {
      int s = pick(rt);
      if (s < 0)
        break;
      step(rt, s);
    }
    break;
  }
  }
}

static Work *enqueue(Rt *rt, int s, int kind, uint32_t call) {
  Stream *st = &rt->streams[s];
  if (st->qhead + st->qlen + 1 > st->qcap) {
    if (st->qhead > 0) {
      memmove(st->q, st->q + st->qhead, sizeof(Work) * (size_t)st->qlen);
      st->qhead = 0;
    }
    if (af_grow((void **)&st->q, &st->qcap, st->qlen + 1, sizeof(Work))) {
      rt->oom = 1;
      return NULL;
    }
  }
  Work *w = &st->q[st->qhead + st->qlen++];
  memset(w, 0, sizeof *w);
  w->kind = (uint8_t)kind;
  w->call = call;
  st->enq++;
  return w;
}

static int new_stream(Rt *rt) {
  if (af_grow((void **)&rt->streams, &rt->capstreams, rt->nstreams + 1, sizeof(Stream))) {
    rt->oom = 1;
    return -1;
  }
  Stream *st = &rt->streams[rt->nstreams];
  memset(st, 0, sizeof *st);
  st->prio = (uint32_t)(16 + af_rng_below(&rt->rng, 1u << 20));
  return rt->nstreams++;
}

/* ---- run control ---- */

/* cuda, at the end of a run: waits for the device (a failure is the run's last record: a kernel
 * fault surfaces here), then gives back what the program left (leaks are counted first, from the
 * tables) and the quarantined memory. */
static void dev_finish(Rt *rt) {
  if (rt->dev == NULL)
    return;
  rt->dev->enter();
  int code = rt->dev->ctx_sync();
  if (code == 4) /* CUDA_ERROR_DEINITIALIZED: at process exit, after the driver's own teardown */
    code = 0;
  if (code) {
    int save = t_tid;
    t_tid = 0;
    RtRec *r = rec_new(rt, RT_CALL_DEVICE_SYNC);
    t_tid = save;
    dev_result(rt, r, code, RT_DETAIL_NONE);
  }
}

static void dev_release(Rt *rt) {
  if (rt->dev == NULL)
    return;
  for (int i = 1; i < rt->nstreams; i++)
    if (!rt->streams[i].destroyed && rt->streams[i].dh) {
      rt->dev->stream_destroy(rt->streams[i].dh);
      rt->streams[i].destroyed = 2;
    }
  for (int i = 0; i < rt->nevents; i++)
    if (!rt->events[i].destroyed && rt->events[i].dh) {
      rt->dev->event_destroy(rt->events[i].dh);
      rt->events[i].destroyed = 2;
    }
  for (int i = 0; i < rt->nallocs; i++) {
    Alloc *a = &rt->allocs[i];
    if (a->dev == 1 && !(a->freed && rt->cfg.raw_handles))
      rt->dev->mem_free(a->p);
    a->dev = 2;
  }
}

static void free_run(Rt *rt) {
  dev_release(rt);
  for (int i = 0; i < rt->nstreams; i++)
    af_free(rt->streams[i].q);
  for (int i = 0; i < rt->nallocs; i++)
    if (!rt->allocs[i].dev)
      free(rt->allocs[i].p);
  rt->nstreams = rt->nevents = rt->nallocs = rt->nhosts = 0;
  rt->ntrace = rt->nobs = rt->nobsdata = 0;
}

/* keep_modules: the modules loaded so far stay valid (a batch loads them once, in a global
 * constructor, before its first case begins) */
static char g_backend_msg[512]; /* why the last begin could not open its backend */

static int open_cuda_locked(char *msg, size_t n);

static int begin_locked(Rt *rt, const RtConfig *cfg, int keep_modules) {
  free_run(rt);
  if (!keep_modules) {
    for (int i = 0; i < rt->nmodules && rt->dev; i++)
      if (rt->mods[i])
        rt->dev->module_unload(rt->mods[i]);
    rt->nmodules = rt->modules_live = 0;
    rt->mod_epoch = rt->epoch + 1;
    memset(rt->fns, 0, sizeof rt->fns);
  }
  rt->dev = NULL;
  if (cfg->backend == RT_BACKEND_CUDA) {
    if (open_cuda_locked(g_backend_msg, sizeof g_backend_msg))
      return AF_EUNSUPPORTED;
    rt->dev = g_cuda;
    rt->dev->enter();
  }
  runner__async_reset();
  memset(&rt->sum, 0, sizeof rt->sum);
  rt->sum.first_error = -1;
  rt->cfg = *cfg;
  if (rt->cfg.pct_depth <= 0)
    rt->cfg.pct_depth = 3;
  if (rt->cfg.pct_depth > 8)
    rt->cfg.pct_depth = 8;
  af_rng_seed(&rt->rng, af_mix64(cfg->seed, (uint64_t)cfg->policy + 1));
  rt->epoch++;
  rt->steps = 0;
  rt->oom = 0;
  rt->next_tid = 1;
  rt->nchange = rt->cfg.policy == RT_PCT ? rt->cfg.pct_depth : 0;
  for (int i = 0; i < rt->nchange; i++)
    rt->change_points[i] = 1 + af_rng_below(&rt->rng, 96);
  new_stream(rt); /* stream 0: the legacy default stream */
  rt->active = 1;
  return 0;
}

static RtConfig env_config(void) {
  RtConfig c;
  memset(&c, 0, sizeof c);
  c.policy = RT_EAGER;
  const char *p = getenv("ASYNCFUZZ_POLICY");
  if (p && asyncfuzz_rt_policy_parse(p) >= 0)
    c.policy = asyncfuzz_rt_policy_parse(p);
  const char *s = getenv("ASYNCFUZZ_SCHED_SEED");
  if (s)
    c.seed = strtoull(s, NULL, 0);
  const char *m = getenv("ASYNCFUZZ_MEMFREE_SYNC");
  c.memfree_sync = m && strcmp(m, "1") == 0;
  const char *b = getenv("ASYNCFUZZ_BACKEND");
  if (b && *b) {
    c.backend = asyncfuzz_rt_backend_parse(b, &c.raw_handles);
    if (c.backend < 0) {
      fprintf(stderr,
              "asyncfuzz runtime: ASYNCFUZZ_BACKEND=%s is not a backend (sim, cuda, "
              "cuda:raw)\n",
              b);
      exit(2);
    }
  }
  const char *sp = getenv("ASYNCFUZZ_SPIN");
  if (sp && *sp)
    c.spin = atoi(sp);
  return c;
}

/* A run the program started itself (no harness) cannot go on without its backend. */
static void begin_or_die(Rt *rt, const RtConfig *c, int keep_modules) {
  if (begin_locked(rt, c, keep_modules)) {
    fprintf(stderr, "asyncfuzz runtime: backend %s: %s\n", asyncfuzz_rt_backend_name(c->backend),
            g_backend_msg);
    exit(2);
  }
}

/* Every entry point: lock, start a run from the environment if none is active (code compiled
 * by MLIR calls mgpu* without a harness), name the thread, and pump. */
static Rt *enter(void) {
  Rt *rt = &g_rt;
  pthread_mutex_lock(&rt->mu);
  if (!rt->active) {
    RtConfig c = env_config();
    begin_or_die(rt, &c, 0);
    rt->next_tid = 0; /* no harness: the first thread to call in is the host, T0 */
    g_env_run = 1;
  }
  if (t_tid < 0)
    t_tid = rt->next_tid++;
  return rt;
}

static void leave(Rt *rt) {
  pthread_mutex_unlock(&rt->mu);
}

int asyncfuzz_rt_begin(const RtConfig *cfg) {
  Rt *rt = &g_rt;
  pthread_mutex_lock(&rt->mu);
  g_env_run = 0;
  int rc = begin_locked(rt, cfg, 0);
  int oom = rt->oom;
  pthread_mutex_unlock(&rt->mu);
  return rc ? rc : oom ? AF_ENOMEM : 0;
}

/* Ends the run; drain: first complete the pending device work (only while the memory it
 * touches is surely alive: not at process exit, after the program has freed its buffers). */
static int end_run(int do_drain) {
  Rt *rt = &g_rt;
  pthread_mutex_lock(&rt->mu);
  int save = t_tid;
  if (do_drain)
    drain(rt);
  dev_finish(rt); /* cuda: always, so the device is idle before its memory goes */
  t_tid = -1;
  for (int i = 1; i < rt->nstreams; i++) {
    if (!rt->streams[i].destroyed) {
      rt->sum.streams_leaked++;
      RtRec *r = rec_new(rt, RT_CALL_LEAK);
      rec_arg(r, RT_REF(RT_REF_STREAM, i, 0));
    }
  }
  for (int i = 0; i < rt->nevents; i++) {
    if (!rt->events[i].destroyed) {
      rt->sum.events_leaked++;
      RtRec *r = rec_new(rt, RT_CALL_LEAK);
      rec_arg(r, RT_REF(RT_REF_EVENT, i, 0));
    }
  }
  for (int i = 0; i < rt->nallocs; i++) {
    if (!rt->allocs[i].freed) {
      rt->sum.buffers_leaked++;
      RtRec *r = rec_new(rt, RT_CALL_LEAK);
      rec_arg(r, RT_REF(RT_REF_BUF, i, 0));
    }
  }
  t_tid = save;
  rt->sum.streams_created = rt->nstreams - 1;
  rt->sum.events_created = rt->nevents;
  rt->sum.max_streams = rt->nstreams;
  rt->sum.max_events = rt->nevents;
  rt->sum.max_threads = rt->next_tid > rt->sum.max_threads ? rt->next_tid : rt->sum.max_threads;
  for (int i = 0; i < rt->nobs; i++)
    rt->obs[i].vals = rt->obsdata + (intptr_t)rt->obs[i].vals;
  dev_release(rt);
  rt->active = 0;
  int oom = rt->oom;
  pthread_mutex_unlock(&rt->mu);
  return oom ? AF_ENOMEM : 0;
}

int asyncfuzz_rt_end(void) {
  return end_run(1);
}

void asyncfuzz_rt_shutdown(void) {
  Rt *rt = &g_rt;
  pthread_mutex_lock(&rt->mu);
  free_run(rt);
  af_free(rt->streams);
  af_free(rt->events);
  af_free(rt->allocs);
  af_free(rt->hosts);
  af_free(rt->trace);
  af_free(rt->obs);
  af_free(rt->obsdata);
  af_free(rt->mods);
  rt->mods = NULL;
  rt->capmods = rt->nmodules = 0;
  rt->streams = NULL;
  rt->events = NULL;
  rt->allocs = NULL;
  rt->hosts = NULL;
  rt->trace = NULL;
  rt->obs = NULL;
  rt->obsdata = NULL;
  rt->capstreams = rt->capevents = rt->capallocs = rt->caphosts = 0;
  rt->captrace = rt->capobs = rt->capobsdata = 0;
  rt->active = 0;
  pthread_mutex_unlock(&rt->mu);
}

/* ---- backends ---- */

static const char *const backend_names[RT__BACKEND_COUNT] = {"sim", "cuda"};

const char *asyncfuzz_rt_backend_name(int backend) {
  return backend >= 0 && backend < RT__BACKEND_COUNT ? backend_names[backend] : "?";
}

int asyncfuzz_rt_backend_parse(const char *name, int *raw) {
  *raw = 0;
  if (strcmp(name, "sim") == 0)
    return RT_BACKEND_SIM;
  if (strcmp(name, "cuda") == 0 || strcmp(name, "cuda:tagged") == 0)
    return RT_BACKEND_CUDA;
  if (strcmp(name, "cuda:raw") == 0) {
    *raw = 1;
    return RT_BACKEND_CUDA;
  }
  return -1;
}

/* libasyncfuzz_cuda.so: $ASYNCFUZZ_CUDA_BACKEND, else next to this library. */
static int open_cuda_locked(char *msg, size_t n) {
  static int tried, failed;
  static char why[512];
  if (g_cuda)
    return 0;
  if (tried && failed) {
    snprintf(msg, n, "%s", why);
    return AF_EUNSUPPORTED;
  }
  tried = 1;
  char path[4096];
  const char *env = getenv("ASYNCFUZZ_CUDA_BACKEND");
  Dl_info di;
  if (env && *env) {
    snprintf(path, sizeof path, "%s", env);
  } else if (dladdr((void *)open_cuda_locked, &di) && di.dli_fname && strchr(di.dli_fname, '/')) {
    snprintf(path, sizeof path, "%.*s/libasyncfuzz_cuda.so",
             (int)(strrchr(di.dli_fname, '/') - di.dli_fname), di.dli_fname);
  } else {
    snprintf(path, sizeof path, "libasyncfuzz_cuda.so");
  }
  failed = 1;
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    const char *e = dlerror();
    if (e && strstr(e, "libcuda.so"))
      snprintf(why, sizeof why,
               "the NVIDIA driver library is missing (%.300s): this machine has no "
               "CUDA driver",
               e);
    else
      snprintf(why, sizeof why,
               "cannot load the cuda backend (%.300s): build asyncfuzz with the CUDA "
               "toolkit, or set ASYNCFUZZ_CUDA_BACKEND",
               e ? e : path);
  } else {
    const RtDevOps *(*get)(void) = (const RtDevOps *(*)(void))dlsym(lib, "asyncfuzz_dev_ops");
    const RtDevOps *ops = get ? get() : NULL;
    const char *d = getenv("ASYNCFUZZ_CUDA_DEVICE");
    char m[400] = "";
    if (ops == NULL || ops->abi != RT_DEV_ABI)
      snprintf(why, sizeof why, "%.400s is not a backend of this asyncfuzz build", path);
    else if (ops->init(d && *d ? atoi(d) : 0, &g_cuda_info, m, sizeof m))
      snprintf(why, sizeof why, "%s", m);
    else
      g_cuda = ops, failed = 0;
  }
  if (failed)
    snprintf(msg, n, "%s", why);
  return failed ? AF_EUNSUPPORTED : 0;
}

int asyncfuzz_rt_backend_open(int backend, RtDeviceInfo *info, char *msg, size_t n) {
  if (info)
    memset(info, 0, sizeof *info);
  if (backend == RT_BACKEND_SIM) {
    if (info)
      snprintf(info->name, sizeof info->name, "sim");
    return 0;
  }
  if (backend != RT_BACKEND_CUDA) {
    snprintf(msg, n, "unknown backend %d", backend);
    return AF_EUNSUPPORTED;
  }
  pthread_mutex_lock(&g_rt.mu);
  int rc = open_cuda_locked(msg, n);
  if (rc == 0 && info)
    *info = g_cuda_info;
  pthread_mutex_unlock(&g_rt.mu);
  return rc;
}

int asyncfuzz_rt_calibrate(double target_us, int elems, int *spin, double *us, char *msg,
                           size_t n) {
  int rc = asyncfuzz_rt_backend_open(RT_BACKEND_CUDA, NULL, msg, n);
  if (rc)
    return rc;
  pthread_mutex_lock(&g_rt.mu);
  g_cuda->enter();
  int code = 0;
  double t = 0;
  int s = 1;
  for (; s <= (1 << 24); s *= 2) {
    if ((code = g_cuda->time_spin(s, elems, 5, &t)) != 0 || t >= target_us)
      break;
  }
  pthread_mutex_unlock(&g_rt.mu);
  if (code) {
    snprintf(msg, n, "timing the sentinel kernel failed: %s", g_cuda->error_name(code));
    return AF_ERUNTIME;
  }
  *spin = s > (1 << 24) ? (1 << 24) : s;
  *us = t;
  return 0;
}

int asyncfuzz_rt_device_broken(void) {
  return g_rt.dev_broken;
}

void asyncfuzz_rt_set_thread(int tid) {
  t_tid = tid;
}

void runner__rt_config(RtConfig *out) {
  Rt *rt = enter();
  *out = rt->cfg;
  leave(rt);
}

int runner__rt_thread(void) {
  Rt *rt = enter();
  int tid = t_tid;
  leave(rt);
  return tid;
}

int runner__rt_new_thread(void) {
  Rt *rt = enter();
  int tid = rt->next_tid++;
  leave(rt);
  return tid;
}

void runner__rt_async_error(int detail) {
  Rt *rt = enter();
  RtRec *r = rec_new(rt, RT_CALL_ASYNC_ERROR);
  rec_fail(rt, r, RT_ERR_INVALID_VALUE, detail);
  leave(rt);
}

void asyncfuzz_rt_set_op(int op) {
  t_op = op;
}

void asyncfuzz_rt_note(int note, int region, int value) {
  static const int calls[] = {RT_CALL_SPAWN, RT_CALL_START,   RT_CALL_YIELD,
                              RT_CALL_AWAIT, RT_CALL_RELEASE, RT_CALL_ACQUIRE};
  Rt *rt = enter();
  int async = note == RT_NOTE_RELEASE || note == RT_NOTE_ACQUIRE;
  int *max = async ? &rt->sum.max_async : &rt->sum.max_regions;
  if (region >= *max)
    *max = region + 1;
  if (note >= 0 && note <= RT_NOTE_ACQUIRE) {
    RtRec *r = rec_new(rt, calls[note]);
    rec_arg(r, async ? RT_REF(RT_REF_ASYNC, region, 0)
                     : RT_REF(RT_REF_REGION, region, (uint32_t)(value + 1)));
  }
  leave(rt);
}

const RtRec *asyncfuzz_rt_trace(int *n) {
  *n = g_rt.ntrace;
  return g_rt.trace;
}

const RtObs *asyncfuzz_rt_observations(int *n) {
  *n = g_rt.nobs;
  return g_rt.obs;
}

void asyncfuzz_rt_summary(RtSummary *out) {
  *out = g_rt.sum;
}

/* ---- the mgpu* ABI ---- */

/* The blob the interpreter loads for builtin Programs: the library's own kernels. */
static int builtin_blob(const void *data, size_t size) {
  return data && size == 17 && memcmp(data, "asyncfuzz-kernels", 17) == 0;
}

/* The sim's kernels are built in: a module is only a handle, whatever the blob holds. The cuda
 * backend loads the blob (cubin/fatbin, or PTX for JIT) or, for builtin Programs, its own PTX. */
static void *module_load(int call, void *data, size_t size, int opt) {
  Rt *rt = enter();
  pump(rt);
  RtRec *r = rec_new(rt, call);
  void *dh = NULL;
  if (rt->dev) {
    char log[4200] = "";
    int jit = call == RT_CALL_MODULE_LOAD_JIT;
    int code = rt->dev->module_load(builtin_blob(data, size) ? NULL : data, jit, opt, &dh, log,
                                    sizeof log);
    if (dev_result(rt, r, code, RT_DETAIL_NONE)) {
      if (*log)
        fprintf(stderr, "asyncfuzz runtime: %s\n", log); /* as the wrapper prints it */
      leave(rt);
      return NULL;
    }
  }
  if (af_grow((void **)&rt->mods, &rt->capmods, rt->nmodules + 1, sizeof(void *))) {
    rt->oom = 1;
    leave(rt);
    return NULL;
  }
  int idx = rt->nmodules++;
  rt->mods[idx] = dh;
  rt->modules_live++;
  void *h = h_out(rt, H_MODULE, idx, dh);
  if (r)
    r->ret = RT_REF(RT_REF_MODULE, idx, 0);
  leave(rt);
  return h;
}

void *mgpuModuleLoad(void *data, size_t gpuBlobSize) {
  return module_load(RT_CALL_MODULE_LOAD, data, gpuBlobSize, 0);
}

void *mgpuModuleLoadJIT(void *data, int optLevel) {
  return module_load(RT_CALL_MODULE_LOAD_JIT, data, 0, optLevel);
}

void mgpuModuleUnload(void *module) {
  /* the module unloads when mlir-runner tears the JIT'd code down: coroutines still queued run
   * now, while their code exists, as MLIR's runtime finishes its tasks before it goes */
  runner__async_quiesce();
  Rt *rt = enter();
  pump(rt);
  RtRec *r = rec_new(rt, RT_CALL_MODULE_UNLOAD);
  int detail;
  RtRef ref;
  int idx = h_decode(rt, module, H_MODULE, &detail, &ref);
  rec_arg(r, ref);
  if (rt->dev && dev_pass(rt, idx)) {
    void *dh = idx >= 0 ? rt->mods[idx] : module;
    if (dev_result(rt, r, rt->dev->module_unload(dh), detail) == 0 && idx >= 0) {
      rt->mods[idx] = NULL;
      rt->modules_live--;
    }
  } else if (idx < 0) {
    rec_fail(rt, r, RT_ERR_INVALID_HANDLE, detail);
  } else {
    rt->modules_live--;
  }
  leave(rt);
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  Rt *rt = enter();
  pump(rt);
  RtRec *r = rec_new(rt, RT_CALL_MODULE_GET_FUNCTION);
  int detail;
  RtRef ref;
  void *h = NULL;
  int idx = h_decode(rt, module, H_MODULE, &detail, &ref);
  int k = name ? kernel_lookup(name) : -1;
  rec_arg(r, ref);
  rec_arg(r, RT_REF(RT_REF_STR, k >= 0 ? k : 0xFFFFFF, 0));
  if (idx < 0 && !(rt->dev && rt->cfg.raw_handles)) {
    rec_fail(rt, r, RT_ERR_INVALID_HANDLE, detail);
  } else if (k < 0) {
    rec_fail(rt, r, RT_ERR_NOT_FOUND, RT_DETAIL_UNKNOWN_KERNEL);
  } else if (rt->dev) {
    void *fn = NULL;
    if (dev_result(rt, r, rt->dev->get_function(idx >= 0 ? rt->mods[idx] : module, name, &fn),
                   detail) == 0) {
      rt->fns[k] = fn;
      h = h_out(rt, H_FUNC, k, fn);
      if (r)
        r->ret = RT_REF(RT_REF_FUNC, k, 0);
    }
  } else {
    h = h_make(rt, H_FUNC, k);
    if (r)
      r->ret = RT_REF(RT_REF_FUNC, k, 0);
  }
  leave(rt);
  return h;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                      intptr_t blockX, intptr_t blockY, intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount) {
  Rt *rt = enter();
  pump(rt);
  RtRec *r = rec_new(rt, RT_CALL_LAUNCH_KERNEL);
  int fdet, sdet;
  RtRef fref, sref;
  int k = h_decode(rt, function, H_FUNC, &fdet, &fref);
  int s = stream_arg(rt, stream, &sdet, &sref);
  int raw = rt->dev && rt->cfg.raw_handles;
  rec_arg(r, fref);
  rec_arg(r, sref);
  const intptr_t grid[3] = {gridX, gridY, gridZ}, block[3] = {blockX, blockY, blockZ};
  if (raw && k < 0) { /* not a kernel asyncfuzz knows: the driver decides */
    dev_result(rt, r, rt->dev->launch(function, grid, block, smem, stream, params, extra), fdet);
    leave(rt);
    return;
  }
  if (k < 0 || (s < 0 && !raw)) {
    rec_fail(rt, r, RT_ERR_INVALID_HANDLE, k < 0 ? fdet : sdet);
    leave(rt);
    return;
  }
  const KernelInfo *ki = kernel_info(k);
  size_t want = (size_t)ki->nbufs * 5 + 2;
  if (params == NULL || (paramsCount != 0 && paramsCount != want)) {
    rec_fail(rt, r, RT_ERR_INVALID_VALUE, RT_DETAIL_BAD_ARGS);
    leave(rt);
    return;
  }
  int32_t *bufs[KERNEL_MAX_BUFS];
  int64_t n = -1;
  int bad = 0;
  for (int b = 0; b < ki->nbufs; b++) {
    int32_t *aligned = *(int32_t **)params[5 * b + 1];
    int64_t off = *(int64_t *)params[5 * b + 2];
    int64_t size = *(int64_t *)params[5 * b + 3];
    bufs[b] = aligned + off;
    rec_arg(r, ref_ptr(rt, bufs[b]));
    if (n < 0)
      n = size;
    else if (size != n)
      bad = 1;
  }
  int32_t v = *(int32_t *)params[5 * ki->nbufs];
  rec_arg(r, ref_int((uint32_t)v));
  rec_arg(r, ref_int((uint64_t)(n > 0 ? n : 0)));
  if (bad || n < 0 || (intptr_t)n > gridX * blockX) {
    rec_fail(rt, r, RT_ERR_INVALID_VALUE, RT_DETAIL_BAD_ARGS);
    leave(rt);
    return;
  }
  for (int b = 0; b < ki->nbufs && !raw; b++) {
    int bad_ptr = range_kind(rt, bufs[b], (size_t)n * 4) != 1;
    if (bad_ptr || (rt->dev && freed_alloc(rt, bufs[b], (size_t)n * 4) >= 0)) {
      rec_fail(rt, r, RT_ERR_ILLEGAL_ADDRESS,
               bad_ptr ? RT_DETAIL_BAD_POINTER : RT_DETAIL_USE_AFTER_FREE);
      leave(rt);
      return;
    }
  }
  if (rt->dev) {
    void *args[5 * KERNEL_MAX_BUFS + 2];
    int32_t spin = rt->cfg.spin;
    size_t np = (size_t)ki->nbufs * 5 + 2;
    memcpy(args, params, sizeof(void *) * np);
    if (spin > 0)
      args[np - 1] = &spin; /* the calibrated window replaces the program's spin count */
    void *dstream = raw ? stream : rt->streams[s].dh;
    dev_result(rt, r, rt->dev->launch(rt->fns[k], grid, block, smem, dstream, args, extra),
               raw && s < 0 ? sdet : RT_DETAIL_NONE);
    leave(rt);
    return;
  }
  Work *w = enqueue(rt, s, W_KERNEL, r ? r->seq : 0);
  if (w) {
    w->kernel = k;
    w->nbufs = ki->nbufs;
    memcpy(w->bufs, bufs, sizeof bufs);
    w->n = n;
    w->v = v;
  }
  if (rt->cfg.policy == RT_EAGER)
    drain(rt);
  leave(rt);
}

void *mgpuStreamCreate(void) {
  Rt *rt = enter();
  pump(rt);
  RtRec *r = rec_new(rt, RT_CALL_STREAM_CREATE);
  void *dh = NULL;
  if (rt->dev && dev_result(rt, r, rt->dev->stream_create(&dh), RT_DETAIL_NONE)) {
    if (r)
      r->ret = RT_REF(RT_REF_NULL, 0, 0);
    leave(rt);
    return NULL; /* as the wrapper: later work silently goes to the legacy stream */
  }
  int s = new_stream(rt);
  if (s >= 0)
    rt->streams[s].dh = dh;
  void *h = s >= 0 ? h_out(rt, H_STREAM, s, dh) : NULL;
  if (r)
    r->ret = s >= 0 ? RT_REF(RT_REF_STREAM, s, 0) : RT_REF(RT_REF_NULL, 0, 0);
  leave(rt);
  return h;
}

void mgpuStreamDestroy(void *stream) {
  Rt *rt = enter();
  pump(rt);
  RtRec *r = rec_new(rt, RT_CALL_STREAM_DESTROY);
  int det;
  RtRef ref;
  int s = h_decode(rt, stream, H_STREAM, &det, &ref);
  rec_arg(r, ref);
  if (rt->dev && dev_pass(rt, s))
    dev_result(rt, r, rt->dev->stream_destroy(s >= 0 ? rt->streams[s].dh : stream), det);
  else if (s < 0)
    rec_fail(rt, r, RT_ERR_INVALID_HANDLE, det);
  if (s >= 0)
    rt->streams[s].destroyed = 1; /* pending work still runs */
  leave(rt);
}

void mgpuStreamSynchronize(void *stream) {
  Rt *rt = enter();
  pump(rt);
  RtRec *r = rec_new(rt, RT_CALL_STREAM_SYNCHRONIZE);
  int det;
  RtRef ref;
  int s = stream_arg(rt, stream, &det, &ref);
  rec_arg(r, ref);
  if (rt->dev && dev_pass(rt, s))
    dev_result(rt, r, rt->dev->stream_sync(s >= 0 ? rt->streams[s].dh : stream), det);
  else if (s < 0)
    rec_fail(rt, r, RT_ERR_INVALID_HANDLE, det);
  else
    run_until(rt, s, rt->streams[s].enq);
  leave(rt);
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  Rt *rt = enter();
  pump(rt);
  RtRec *r = rec_new(rt, RT_CALL_STREAM_WAIT_EVENT);
  int sdet, edet;
  RtRef sref, eref;
  int s = stream_arg(rt, stream, &sdet, &sref);
  int e = h_decode(rt, event, H_EVENT, &edet, &eref);
  rec_arg(r, sref);
  rec_arg(r, eref);
  if (rt->dev && (rt->cfg.raw_handles || (s >= 0 && e >= 0))) {
    dev_result(rt, r,
               rt->dev->stream_wait_event(s >= 0 ? rt->streams[s].dh : stream,
                                          e >= 0 ? rt->events[e].dh : event),
               s < 0 ? sdet : edet);
  } else if (s < 0 || e < 0) {
    rec_fail(rt, r, RT_ERR_INVALID_HANDLE, s < 0 ? sdet : edet);
  } else if (rt->events[e].recorded) {
    Work *w = enqueue(rt, s, W_WAIT, r ? r->seq : 0);
    if (w) {
      w->wait_stream = rt->events[e].stream;
      w->wait_seq = rt->events[e].seq;
    }
    if (rt->cfg.policy == RT_EAGER)
      drain(rt);
  }
  leave(rt);
}

void *mgpuEventCreate(void) {
  Rt *rt = enter();
  pump(rt);
  RtRec *r = rec_new(rt, RT_CALL_EVENT_CREATE);
  void *h = NULL, *dh = NULL;
  if (rt->dev && dev_result(rt, r, rt->dev->event_create(&dh), RT_DETAIL_NONE)) {
    if (r)
      r->ret = RT_REF(RT_REF_NULL, 0, 0);
  } else if (af_grow((void **)&rt->events, &rt->capevents, rt->nevents + 1, sizeof(Event)) == 0) {
    int e = rt->nevents++;
    memset(&rt->events[e], 0, sizeof(Event));
    rt->events[e].dh = dh;
    h = h_out(rt, H_EVENT, e, dh);
    if (r)
      r->ret = RT_REF(RT_REF_EVENT, e, 0);
  } else {
    rt->oom = 1;
    rec_fail(rt, r, RT_ERR_OUT_OF_MEMORY, RT_DETAIL_NONE);
  }
  leave(rt);
  return h;
}

void mgpuEventDestroy(void *event) {
  Rt *rt = enter();
  pump(rt);
  RtRec *r = rec_new(rt, RT_CALL_EVENT_DESTROY);
  int det;
  RtRef ref;
  int e = h_decode(rt, event, H_EVENT, &det, &ref);
  rec_arg(r, ref);
  if (rt->dev && dev_pass(rt, e))
    dev_result(rt, r, rt->dev->event_destroy(e >= 0 ? rt->events[e].dh : event), det);
  else if (e < 0)
    rec_fail(rt, r, RT_ERR_INVALID_HANDLE, det);
  if (e >= 0)
    rt->events[e].destroyed = 1;
  leave(rt);
}

void mgpuEventSynchronize(void *event) {
  Rt *rt = enter();
  pump(rt);
  RtRec *r = rec_new(rt, RT_CALL_EVENT_SYNCHRONIZE);
  int det;
  RtRef ref;
  int e = h_decode(rt, event, H_EVENT, &det, &ref);
  rec_arg(r, ref);
  if (rt->dev && dev_pass(rt, e)) /* raw: the driver answers a stream given as event */
    dev_result(rt, r, rt->dev->event_sync(e >= 0 ? rt->events[e].dh : event), det);
  else if (e < 0)
    rec_fail(rt, r, RT_ERR_INVALID_HANDLE, det); /* the wrapper prints and does not wait */
  else if (rt->events[e].recorded)
    run_until(rt, rt->events[e].stream, rt->events[e].seq);
  leave(rt);
}

void mgpuEventRecord(void *event, void *stream) {
  Rt *rt = enter();
  pump(rt);
  RtRec *r = rec_new(rt, RT_CALL_EVENT_RECORD);
  int sdet, edet;
  RtRef sref, eref;
  int e = h_decode(rt, event, H_EVENT, &edet, &eref);
  int s = stream_arg(rt, stream, &sdet, &sref);
  rec_arg(r, eref);
  rec_arg(r, sref);
  int failed = 0;
  if (rt->dev && (rt->cfg.raw_handles || (s >= 0 && e >= 0)))
    failed = dev_result(rt, r,
                        rt->dev->event_record(e >= 0 ? rt->events[e].dh : event,
                                              s >= 0 ? rt->streams[s].dh : stream),
                        e < 0 ? edet : sdet) != 0;
  if (e < 0 || s < 0) {
    if (!rt->dev || !rt->cfg.raw_handles)
      rec_fail(rt, r, RT_ERR_INVALID_HANDLE, e < 0 ? edet : sdet);
  } else if (!failed) {
    rt->events[e].recorded = 1;
    rt->events[e].stream = s;
    rt->events[e].seq = rt->streams[s].enq;
  }
  leave(rt);
}

void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared) {
  Rt *rt = enter();
  pump(rt);
  RtRec *r = rec_new(rt, RT_CALL_MEM_ALLOC);
  int det;
  RtRef sref;
  (void)stream_arg(rt, stream, &det, &sref); /* ignored, as in MLIR's wrappers */
  rec_arg(r, ref_int(sizeBytes));
  rec_arg(r, sref);
  rec_arg(r, ref_int(isHostShared ? 1 : 0));
  void *p = NULL;
  if (sizeBytes == 0) {
    if (r)
      r->ret = RT_REF(RT_REF_NULL, 0, 0);
    leave(rt);
    return NULL;
  }
  if (rt->dev) {
    int code = af_grow((void **)&rt->allocs, &rt->capallocs, rt->nallocs + 1, sizeof(Alloc))
                   ? 2
                   : rt->dev->mem_alloc(sizeBytes, isHostShared, &p);
    /* fresh memory reads KERNEL_UNINIT, as in the sim: set and waited for on the legacy
     * stream before the pointer is returned (the allocation is synchronous) */
    if (code == 0) {
      code = rt->dev->memset32_async(p, (unsigned)KERNEL_UNINIT, sizeBytes / 4, NULL);
      if (code == 0)
        code = rt->dev->stream_sync(NULL);
    }
    if (dev_result(rt, r, code, RT_DETAIL_NONE) == 0) {
      Alloc *a = &rt->allocs[rt->nallocs];
      memset(a, 0, sizeof *a);
      a->p = p;
      a->bytes = sizeBytes;
      a->shared = isHostShared;
      a->dev = 1;
      if (r)
        r->ret = RT_REF(RT_REF_BUF, rt->nallocs, 0);
      rt->nallocs++;
    } else {
      p = NULL;
    }
  } else if (af_grow((void **)&rt->allocs, &rt->capallocs, rt->nallocs + 1, sizeof(Alloc)) == 0 &&
             (p = malloc(sizeBytes)) != NULL) {
    Alloc *a = &rt->allocs[rt->nallocs];
    memset(a, 0, sizeof *a);
    a->p = p;
    a->bytes = sizeBytes;
    a->freed = 0;
    a->shared = isHostShared;
    int32_t u = KERNEL_UNINIT;
    for (uint64_t i = 0; i + 4 <= sizeBytes; i += 4)
      memcpy((char *)p + i, &u, 4);
    if (r)
      r->ret = RT_REF(RT_REF_BUF, rt->nallocs, 0);
    rt->nallocs++;
  } else {
    /* host memory ran out: an environment failure of the harness, not a finding */
    rt->oom = 1;
    rec_fail(rt, r, RT_ERR_OUT_OF_MEMORY, RT_DETAIL_NONE);
  }
  leave(rt);
  return p;
}

void mgpuMemFree(void *ptr, void *stream) {
  Rt *rt = enter();
  pump(rt);
  RtRec *r = rec_new(rt, RT_CALL_MEM_FREE);
  int det;
  RtRef sref;
  (void)stream_arg(rt, stream, &det, &sref); /* ignored: the free is not stream-ordered */
  RtRef pref = ref_ptr(rt, ptr);
  rec_arg(r, pref);
  rec_arg(r, sref);
  if (ptr == NULL) {
    leave(rt);
    return;
  }
  if (rt->dev && rt->cfg.raw_handles) { /* cuMemFree at once, whatever the pointer */
    if (dev_result(rt, r, rt->dev->mem_free(ptr), RT_DETAIL_NONE) == 0 &&
        RT_REF_KIND(pref) == RT_REF_BUF)
      rt->allocs[RT_REF_ID(pref)].freed = 1;
    leave(rt);
    return;
  }
  if (RT_REF_KIND(pref) != RT_REF_BUF || RT_REF_VAL(pref) != 0) {
    rec_fail(rt, r, RT_ERR_INVALID_VALUE, RT_DETAIL_INVALID_FREE);
  } else {
    Alloc *a = &rt->allocs[RT_REF_ID(pref)];
    if (a->freed) {
      rec_fail(rt, r, RT_ERR_INVALID_VALUE, RT_DETAIL_DOUBLE_FREE);
    } else {
      if (rt->cfg.memfree_sync)
        drain(rt);
      a->freed = 1;
      if (rt->dev) {
        /* tagged: kept until the run ends, poisoned on the legacy stream, which does not wait
         * for the program's (non-blocking) streams: work still using it reads poison, as it
         * would read a reused allocation */
        if (rt->cfg.memfree_sync)
          dev_result(rt, r, rt->dev->ctx_sync(), RT_DETAIL_NONE);
        dev_result(rt, r,
                   rt->dev->memset32_async(a->p, (unsigned)KERNEL_POISON, a->bytes / 4, NULL),
                   RT_DETAIL_NONE);
      } else {
        int32_t poison = KERNEL_POISON;
        for (size_t i = 0; i + 4 <= a->bytes; i += 4)
          memcpy(a->p + i, &poison, 4);
      }
    }
  }
  leave(rt);
}

void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream) {
  Rt *rt = enter();
  pump(rt);
  RtRec *r = rec_new(rt, RT_CALL_MEMCPY);
  int det;
  RtRef sref;
  int s = stream_arg(rt, stream, &det, &sref);
  rec_arg(r, ref_ptr(rt, dst));
  rec_arg(r, ref_ptr(rt, src));
  rec_arg(r, ref_int(sizeBytes));
  rec_arg(r, sref);
  if (rt->dev && rt->cfg.raw_handles) {
    dev_result(rt, r, rt->dev->memcpy_async(dst, src, sizeBytes, stream), det);
  } else if (s < 0) {
    rec_fail(rt, r, RT_ERR_INVALID_HANDLE, det);
  } else if (dst == NULL || src == NULL) {
    rec_fail(rt, r, RT_ERR_INVALID_VALUE, RT_DETAIL_NONE);
  } else if (range_kind(rt, dst, sizeBytes) < 0 || range_kind(rt, src, sizeBytes) < 0) {
    rec_fail(rt, r, RT_ERR_ILLEGAL_ADDRESS, RT_DETAIL_BAD_POINTER);
  } else if (rt->dev) {
    if (freed_alloc(rt, dst, sizeBytes) >= 0 || freed_alloc(rt, src, sizeBytes) >= 0)
      rec_fail(rt, r, RT_ERR_ILLEGAL_ADDRESS, RT_DETAIL_USE_AFTER_FREE);
    else
      dev_result(rt, r, rt->dev->memcpy_async(dst, src, sizeBytes, rt->streams[s].dh),
                 RT_DETAIL_NONE);
  } else {
    Work *w = enqueue(rt, s, W_MEMCPY, r ? r->seq : 0);
    if (w) {
      w->dst = dst;
      w->src = src;
      w->bytes = sizeBytes;
    }
    if (rt->cfg.policy == RT_EAGER)
      drain(rt);
  }
  leave(rt);
}

static void memset_common(int call, int kind, void *dst, unsigned value, size_t count,
                          void *stream) {
  Rt *rt = enter();
  pump(rt);
  RtRec *r = rec_new(rt, call);
  int det;
  RtRef sref;
  int s = stream_arg(rt, stream, &det, &sref);
  rec_arg(r, ref_ptr(rt, dst));
  rec_arg(r, ref_int(value));
  rec_arg(r, ref_int(count));
  rec_arg(r, sref);
  size_t esz = kind == W_MEMSET32 ? 4 : 2;
  if (rt->dev &&
      (rt->cfg.raw_handles || (s >= 0 && dst != NULL && range_kind(rt, dst, count * esz) >= 0 &&
                               freed_alloc(rt, dst, count * esz) < 0))) {
    void *ds = s >= 0 && !rt->cfg.raw_handles ? rt->streams[s].dh : stream;
    int code = esz == 4 ? rt->dev->memset32_async(dst, value, count, ds)
                        : rt->dev->memset16_async(dst, (unsigned short)value, count, ds);
    dev_result(rt, r, code, det);
  } else if (s < 0) {
    rec_fail(rt, r, RT_ERR_INVALID_HANDLE, det);
  } else if (dst == NULL) {
    rec_fail(rt, r, RT_ERR_INVALID_VALUE, RT_DETAIL_NONE);
  } else if (range_kind(rt, dst, count * esz) < 0) {
    rec_fail(rt, r, RT_ERR_ILLEGAL_ADDRESS, RT_DETAIL_BAD_POINTER);
  } else if (rt->dev) {
    rec_fail(rt, r, RT_ERR_ILLEGAL_ADDRESS, RT_DETAIL_USE_AFTER_FREE);
  } else {
    Work *w = enqueue(rt, s, kind, r ? r->seq : 0);
    if (w) {
      w->dst = dst;
      w->value = value;
      w->count = count;
    }
    if (rt->cfg.policy == RT_EAGER)
      drain(rt);
  }
  leave(rt);
}

void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream) {
  memset_common(RT_CALL_MEMSET32, W_MEMSET32, dst, value, count, stream);
}

void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream) {
  memset_common(RT_CALL_MEMSET16, W_MEMSET16, dst, value, count, stream);
}

void mgpuSetDefaultDevice(int32_t device) {
  Rt *rt = enter();
  pump(rt);
  RtRec *r = rec_new(rt, RT_CALL_SET_DEFAULT_DEVICE);
  rec_arg(r, ref_int((uint32_t)device));
  leave(rt);
}

/* Registers a host range (gpu.host_register) so device work may use it and the trace can
 * name it hr<k>. Registration does not copy or wait. */
static void host_register(int call, void *ptr, uint64_t bytes) {
  Rt *rt = enter();
  pump(rt);
  RtRec *r = rec_new(rt, call);
  rec_arg(r, ref_ptr(rt, ptr));
  rec_arg(r, ref_int(bytes));
  if (ptr == NULL && !(rt->dev && rt->cfg.raw_handles)) {
    rec_fail(rt, r, RT_ERR_INVALID_VALUE, RT_DETAIL_BAD_POINTER);
  } else if (rt->dev &&
             dev_result(rt, r, rt->dev->host_register(ptr, (size_t)bytes), RT_DETAIL_NONE)) {
    /* the driver refused: not registered */
  } else if (af_grow((void **)&rt->hosts, &rt->caphosts, rt->nhosts + 1, sizeof(HostBuf)) == 0) {
    HostBuf *h = &rt->hosts[rt->nhosts];
    h->p = ptr;
    h->bytes = (size_t)bytes;
    h->id = 0x800000 | rt->nhosts;
    rt->nhosts++;
  } else {
    rt->oom = 1;
  }
  leave(rt);
}

static void host_unregister(void *ptr) {
  Rt *rt = enter();
  pump(rt);
  RtRec *r = rec_new(rt, RT_CALL_HOST_UNREGISTER);
  rec_arg(r, ref_ptr(rt, ptr));
  int found = -1;
  for (int i = 0; i < rt->nhosts && found < 0; i++)
    if (rt->hosts[i].p == ptr && (rt->hosts[i].id & 0x800000) && rt->hosts[i].bytes > 0)
      found = i;
  if (rt->dev && (found >= 0 || rt->cfg.raw_handles)) {
    if (dev_result(rt, r, rt->dev->host_unregister(ptr), RT_DETAIL_NONE) == 0 && found >= 0)
      rt->hosts[found].bytes = 0;
  } else if (found < 0) {
    rec_fail(rt, r, RT_ERR_INVALID_VALUE, RT_DETAIL_BAD_POINTER);
  } else {
    rt->hosts[found].bytes = 0; /* keeps its slot (and name) but covers nothing */
  }
  leave(rt);
}

/* The bytes and start of a ranked memref descriptor, as MLIR's wrappers compute them. */
static char *memref_range(int64_t rank, void *desc, int64_t esz, uint64_t *bytes) {
  struct {
    char *allocated, *aligned;
    int64_t offset;
    int64_t rest[];
  } *d = desc;
  uint64_t n = 1;
  for (int64_t i = 0; i < rank; i++)
    n *= (uint64_t)d->rest[i];
  *bytes = n * (uint64_t)esz;
  return d->aligned + d->offset * esz;
}

void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes) {
  host_register(RT_CALL_HOST_REGISTER, ptr, sizeBytes);
}

void mgpuMemHostUnregister(void *ptr) {
  host_unregister(ptr);
}

void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor, int64_t elementSizeBytes) {
  uint64_t bytes = 0;
  char *p = descriptor ? memref_range(rank, descriptor, elementSizeBytes, &bytes) : NULL;
  host_register(RT_CALL_HOST_REGISTER, p, bytes);
}

void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor, int64_t elementSizeBytes) {
  uint64_t bytes = 0;
  host_unregister(descriptor ? memref_range(rank, descriptor, elementSizeBytes, &bytes) : NULL);
}

/* ---- host hooks ---- */

void asyncfuzz_observe(int32_t id, int32_t *allocated, int32_t *aligned, int64_t offset,
                       int64_t size, int64_t stride) {
  (void)allocated;
  Rt *rt = enter();
  pump(rt);
  RtRec *r = rec_new(rt, RT_CALL_OBSERVE);
  const int32_t *base = aligned + offset;
  rec_arg(r, ref_int((uint32_t)id));
  rec_arg(r, ref_ptr(rt, base));
  rec_arg(r, ref_int((uint64_t)size));
  RtRef bref = ref_ptr(rt, base);
  int devmem = rt->dev && RT_REF_KIND(bref) == RT_REF_BUF && !rt->allocs[RT_REF_ID(bref)].shared;
  if (aligned == NULL || size < 0 || devmem || freed_alloc(rt, base, (size_t)size * 4) >= 0) {
    rec_fail(rt, r, RT_ERR_ILLEGAL_ADDRESS,
             aligned && size >= 0 && !devmem ? RT_DETAIL_USE_AFTER_FREE : RT_DETAIL_BAD_POINTER);
    leave(rt);
    return;
  }
  if (af_grow((void **)&rt->obs, &rt->capobs, rt->nobs + 1, sizeof(RtObs)) ||
      af_grow((void **)&rt->obsdata, &rt->capobsdata, rt->nobsdata + (int)size + 1,
              sizeof(int32_t))) {
    rt->oom = 1;
    leave(rt);
    return;
  }
  RtObs *o = &rt->obs[rt->nobs++];
  o->id = id;
  o->tid = t_tid;
  o->seq = r ? r->seq : 0;
  o->n = size;
  o->vals = (const int32_t *)(intptr_t)rt->nobsdata; /* an offset until end() */
  for (int64_t i = 0; i < size; i++)
    rt->obsdata[rt->nobsdata++] = base[i * stride];
  leave(rt);
}

void asyncfuzz_host_init(int32_t id, int32_t init, int32_t *allocated, int32_t *aligned,
                         int64_t offset, int64_t size, int64_t stride) {
  (void)allocated;
  Rt *rt = enter();
  pump(rt);
  RtRec *r = rec_new(rt, RT_CALL_HOST_INIT);
  if (aligned == NULL || size < 0) {
    rec_fail(rt, r, RT_ERR_INVALID_VALUE, RT_DETAIL_BAD_POINTER);
    leave(rt);
    return;
  }
  int32_t *base = aligned + offset;
  for (int64_t i = 0; i < size; i++)
    base[i * stride] = kernel_host_init_value(init, i);
  if (af_grow((void **)&rt->hosts, &rt->caphosts, rt->nhosts + 1, sizeof(HostBuf)) == 0) {
    HostBuf *h = &rt->hosts[rt->nhosts++];
    h->p = (char *)base;
    h->bytes = (size_t)(size > 0 ? size : 0) * 4 * (size_t)(stride > 0 ? stride : 1);
    h->id = id;
  } else {
    rt->oom = 1;
  }
  rec_arg(r, ref_int((uint32_t)id));
  rec_arg(r, ref_int((uint32_t)init));
  rec_arg(r, ref_int((uint64_t)size));
  leave(rt);
}

/* ---- trace text ---- */

static void fmt_ref(AfBuf *b, RtRef a) {
  switch (RT_REF_KIND(a)) {
  case RT_REF_INT: {
    uint64_t v = ((uint64_t)RT_REF_ID(a) << 32) | RT_REF_VAL(a);
    if (v >> 31 && (v >> 32) == 0)
      af_buf_printf(b, "%d", (int32_t)(uint32_t)v); /* a negative i32 */
    else
      af_buf_printf(b, "%llu", (unsigned long long)v);
    break;
  }
  case RT_REF_NULL:
    af_buf_puts(b, "null");
    break;
  case RT_REF_STREAM:
    af_buf_printf(b, "s%d", RT_REF_ID(a));
    break;
  case RT_REF_EVENT:
    af_buf_printf(b, "e%d", RT_REF_ID(a));
    break;
  case RT_REF_MODULE:
    af_buf_printf(b, "m%d", RT_REF_ID(a));
    break;
  case RT_REF_FUNC:
    af_buf_printf(b, "f:%s", kernel_info(RT_REF_ID(a))->name);
    break;
  case RT_REF_BUF:
    af_buf_printf(b, "b%d+%u", RT_REF_ID(a), RT_REF_VAL(a));
    break;
  case RT_REF_HOST:
    if (RT_REF_ID(a) & 0x800000)
      af_buf_printf(b, "hr%d+%u", RT_REF_ID(a) & 0x7FFFFF, RT_REF_VAL(a));
    else
      af_buf_printf(b, "h%d+%u", RT_REF_ID(a), RT_REF_VAL(a));
    break;
  case RT_REF_PTR:
    af_buf_puts(b, "ptr?");
    break;
  case RT_REF_BAD:
    af_buf_puts(b, "bad-handle");
    break;
  case RT_REF_REGION:
    if (RT_REF_VAL(a))
      af_buf_printf(b, "r%d.%u", RT_REF_ID(a), RT_REF_VAL(a) - 1);
    else
      af_buf_printf(b, "r%d", RT_REF_ID(a));
    break;
  case RT_REF_ASYNC:
    af_buf_printf(b, "a%d", RT_REF_ID(a));
    break;
  case RT_REF_STR:
    if (RT_REF_ID(a) == 0xFFFFFF)
      af_buf_puts(b, "\"?\"");
    else
      af_buf_printf(b, "\"%s\"", kernel_info(RT_REF_ID(a))->name);
    break;
  default:
    af_buf_puts(b, "-");
    break;
  }
}

void asyncfuzz_rt_format_rec(AfBuf *b, const RtRec *r) {
  if (r->tid < 0)
    af_buf_printf(b, "%u D ", r->seq);
  else
    af_buf_printf(b, "%u T%d ", r->seq, r->tid);
  if (r->call == RT_CALL_EXEC) { /* exec(stream, #enqueuing call, phase) */
    af_buf_puts(b, "exec(");
    fmt_ref(b, r->args[0]);
    af_buf_printf(b, ", #%u, %s)", r->cause, RT_REF_VAL(r->args[2]) == 1 ? "start" : "done");
    if (r->err)
      af_buf_printf(b, " ! %s (%s)", asyncfuzz_rt_error_name(r->err),
                    asyncfuzz_rt_detail_text(r->detail));
    return;
  }
  af_buf_puts(b, asyncfuzz_rt_call_name(r->call));
  af_buf_puts(b, "(");
  for (int i = 0; i < r->nargs; i++) {
    if (i)
      af_buf_puts(b, ", ");
    fmt_ref(b, r->args[i]);
  }
  af_buf_puts(b, ")");
  if (RT_REF_KIND(r->ret) != RT_REF_NONE) {
    af_buf_puts(b, " -> ");
    fmt_ref(b, r->ret);
  }
  if (r->err)
    af_buf_printf(b, " ! %s (%s)", asyncfuzz_rt_error_name(r->err),
                  asyncfuzz_rt_detail_text(r->detail));
}

void asyncfuzz_rt_format_trace(AfBuf *b, int from, int to) {
  int n = g_rt.ntrace;
  if (to < 0 || to > n)
    to = n;
  for (int i = from < 0 ? 0 : from; i < to; i++) {
    asyncfuzz_rt_format_rec(b, &g_rt.trace[i]);
    af_buf_puts(b, "\n");
  }
}

#define TRACE_MAGIC "AFTRACE1"

/* ---- batches: many cases in one process ---- */

/* Schedule number k of $ASYNCFUZZ_SCHEDULES ("POLICY@SEED,..."), over the env defaults. */
static void env_schedule(RtConfig *c, int k) {
  const char *p = getenv("ASYNCFUZZ_SCHEDULES");
  for (int i = 0; p && *p && i < k; i++) {
    p = strchr(p, ',');
    p = p ? p + 1 : NULL;
  }
  if (p == NULL || *p == '\0')
    return;
  char name[16];
  size_t len = strcspn(p, "@,");
  snprintf(name, sizeof name, "%.*s", (int)(len < 15 ? len : 15), p);
  int pol = asyncfuzz_rt_policy_parse(name);
  if (pol >= 0)
    c->policy = pol;
  if (p[len] == '@')
    c->seed = strtoull(p + len + 1, NULL, 0);
}

void asyncfuzz_case_begin(int32_t id, int32_t sched) {
  (void)id;
  Rt *rt = &g_rt;
  pthread_mutex_lock(&rt->mu);
  RtConfig c = env_config();
  env_schedule(&c, sched);
  /* the modules the batch loaded in its constructor, before the first case, stay valid */
  begin_or_die(rt, &c, rt->active || g_env_run);
  rt->next_tid = 0;
  t_tid = rt->next_tid++; /* the caller is the host, T0 */
  g_env_run = 1;
  pthread_mutex_unlock(&rt->mu);
}

/* Ends case `id`: its coroutines still queued run now (as at process exit), the run ends
 * without draining (its host buffers are freed) and the trace goes to
 * $ASYNCFUZZ_TRACE_DIR/case-ID-SCHED.bin, written to a temporary name and renamed, so a case whose
 * file exists finished. */
void asyncfuzz_case_end(int32_t id, int32_t sched) {
  runner__async_quiesce();
  Rt *rt = &g_rt;
  pthread_mutex_lock(&rt->mu);
  int active = rt->active;
  pthread_mutex_unlock(&rt->mu);
  if (!active)
    return;
  end_run(0);
  const char *dir = getenv("ASYNCFUZZ_TRACE_DIR");
  if (dir == NULL)
    return;
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/case-%d-%d.bin", dir, (int)id, (int)sched);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  if (asyncfuzz_rt_write_trace_bin(tmp) == 0)
    rename(tmp, path);
  else
    remove(tmp);
  if (rt->dev_broken) {
    /* a sticky error: every later case of this process would fail with it; the harness runs
     * the rest of the batch in fresh processes */
    fprintf(stderr, "asyncfuzz runtime: the CUDA context is lost after case %d; exiting\n",
            (int)id);
    _exit(75);
  }
}

int asyncfuzz_rt_write_trace_bin(const char *path) {
  Rt *rt = &g_rt;
  FILE *f = fopen(path, "wb");
  if (f == NULL)
    return AF_EIO;
  uint32_t hdr[6] = {1,
                     (uint32_t)sizeof(RtRec),
                     (uint32_t)rt->ntrace,
                     (uint32_t)rt->nobs,
                     (uint32_t)rt->cfg.policy,
                     0};
  int bad = fwrite(TRACE_MAGIC, 1, 8, f) != 8;
  bad |= fwrite(hdr, sizeof hdr, 1, f) != 1;
  bad |= fwrite(&rt->sum, sizeof rt->sum, 1, f) != 1;
  if (rt->ntrace)
    bad |= fwrite(rt->trace, sizeof(RtRec), (size_t)rt->ntrace, f) != (size_t)rt->ntrace;
  for (int i = 0; i < rt->nobs && !bad; i++) {
    const RtObs *o = &rt->obs[i];
    int64_t head[4] = {o->id, o->tid, o->seq, o->n};
    bad |= fwrite(head, sizeof head, 1, f) != 1;
    if (o->n > 0)
      bad |= fwrite(o->vals, sizeof(int32_t), (size_t)o->n, f) != (size_t)o->n;
  }
  bad |= fclose(f) != 0;
  return bad ? AF_EIO : 0;
}

/* Code compiled by MLIR runs with no harness around it: when the run was started from the
 * environment and ASYNCFUZZ_TRACE names a file, the run is ended at process exit and its trace
 * (docs/trace-format.md) and observations ("observe ID V0 V1 ...") are written there. */
__attribute__((destructor)) static void env_run_exit(void) {
  const char *path = getenv("ASYNCFUZZ_TRACE");
  const char *bin = getenv("ASYNCFUZZ_TRACE_BIN");
  if (!g_env_run || (path == NULL && bin == NULL) || !g_rt.active)
    return;
  /* no drain: the program has freed its host buffers by now, and work still pending on them
   * would write into freed memory (the trace shows it never completed) */
  end_run(0);
  if (bin)
    asyncfuzz_rt_write_trace_bin(bin);
  if (path == NULL)
    return;
  AfBuf b;
  af_buf_init(&b);
  af_buf_printf(&b, "# asyncfuzz trace v1 policy=%s seed=%llu\n",
                asyncfuzz_rt_policy_name(g_rt.cfg.policy), (unsigned long long)g_rt.cfg.seed);
  asyncfuzz_rt_format_trace(&b, 0, -1);
  for (int i = 0; i < g_rt.nobs; i++) {
    af_buf_printf(&b, "observe %d", g_rt.obs[i].id);
    for (int64_t k = 0; k < g_rt.obs[i].n; k++)
      af_buf_printf(&b, " %d", g_rt.obs[i].vals[k]);
    af_buf_puts(&b, "\n");
  }
  FILE *f = b.oom ? NULL : fopen(path, "w");
  if (f) {
    fputs(b.p ? b.p : "", f);
    fclose(f);
  }
  af_buf_free(&b);
}
