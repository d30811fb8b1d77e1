/*
 * fake_libcuda.c: a TEST DOUBLE of the CUDA driver (libcuda.so.1), for the tests of the cuda
 * backend on machines without a GPU. It is built only under tests/ and only reached through
 * LD_LIBRARY_PATH in the tests that say so; nothing installed or shipped loads it. The real
 * driver is tested by tests/cuda_gpu_test.sh, which skips where there is no GPU.
 *
 * It models an infinitely slow GPU: work waits in per-stream FIFO queues and runs only when
 * the host forces it (a stream, event or context synchronize; a stream waiting on an event runs
 * the captured work first). So a missing synchronization shows as stale data. A copy to or from
 * pageable host memory runs at once, after the stream's earlier work, as the driver documents
 * for such copies (they return only once the host side is done). Handles are
 * checked against a registry, so an event call given a stream fails with
 * CUDA_ERROR_INVALID_HANDLE, as the driver reports it. Kernels run runner/kernels.c.
 *
 * Fault injection, for the fault-isolation tests (counted over launches in this process):
 *   FAKE_CUDA_FAULT_AT=N  the Nth launch faults when it runs: CUDA_ERROR_ILLEGAL_ADDRESS, sticky
 *   FAKE_CUDA_HANG_AT=N   the Nth launch never finishes (the synchronize waiting for it hangs)
 *   FAKE_CUDA_CRASH_AT=N  the Nth launch kills the process (SIGSEGV) when it runs
 *   FAKE_CUDA_NO_DEVICE=1 cuInit fails with CUDA_ERROR_NO_DEVICE
 *   FAKE_CUDA_ONCE=FILE   inject once across processes: only while FILE does not exist, and
 *                         create it (so a replaced child process runs clean)
 * Timing events advance a virtual clock by 1 ns per spin iteration of each kernel. Modules: PTX
 * text, an ELF cubin or a fat binary (by their first bytes); anything else is refused.
 */
#include <cuda.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../runner/kernels.h"

enum { K_STREAM = 0x5354524d, K_EVENT = 0x45564e54, K_MODULE = 0x4d4f4455, K_FUNC = 0x46554e43 };
enum { W_KERNEL, W_COPY, W_SET32, W_SET16, W_WAIT, W_TIME };

typedef struct Obj {
  int kind;
  struct Obj *next; /* the registry of live objects */
} Obj;

typedef struct Work {
  int kind;
  int kernel, nbufs, hang, fault, crash;
  int32_t *bufs[KERNEL_MAX_BUFS];
  int64_t stride[KERNEL_MAX_BUFS];
  int64_t n;
  int32_t v, spin;
  void *dst;
  const void *src;
  size_t bytes;
  unsigned value;
  struct Stream *wst;
  unsigned long long wseq;
  struct Event *tev;
} Work;

typedef struct Stream {
  Obj o;
  struct Stream *dead_next; /* destroyed streams stay reachable: events may still name them */
  Work *q;
  size_t head, len, cap;
  unsigned long long enq, done;
} Stream;

typedef struct Event {
  Obj o;
  Stream *st;
  unsigned long long seq;
  double ns; /* virtual time when its capture completed */
  int timing;
} Event;

typedef struct Func {
  Obj o;
  int kernel;
} Func;

static Obj *g_live;
static Stream g_legacy = {.o = {K_STREAM, NULL}};
static Stream *g_dead;
static int g_sticky;
static int g_launches;
static double g_clock_ns;
static int g_ctx_dummy;

static int env_int(const char *name) {
  const char *s = getenv(name);
  return s && *s ? atoi(s) : 0;
}

static void reg(Obj *o, int kind) {
  o->kind = kind;
  o->next = g_live;
  g_live = o;
}

static int live(const void *p, int kind) {
  for (Obj *o = g_live; o; o = o->next)
    if (o == p)
      return o->kind == kind;
  return 0;
}

static void unreg(Obj *p) {
  for (Obj **o = &g_live; *o; o = &(*o)->next)
    if (*o == p) {
      *o = p->next;
      return;
    }
}

static Stream *stream_of(CUstream s) {
  if (s == NULL || s == CU_STREAM_LEGACY)
    return &g_legacy;
  return live(s, K_STREAM) ? (Stream *)s : NULL;
}

static Work *push(Stream *s) {
  if (s->head + s->len == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    Work *q = malloc(cap * sizeof *q);
    if (q == NULL)
      abort();
    if (s->len)
      memcpy(q, s->q + s->head, s->len * sizeof *q);
    free(s->q);
    s->q = q;
    s->cap = cap;
    s->head = 0;
  }
  Work *w = &s->q[s->head + s->len++];
  memset(w, 0, sizeof *w);
  s->enq++;
  return w;
}

static void run_to(Stream *s, unsigned long long seq);

static void exec(Work *w) {
  switch (w->kind) {
  case W_KERNEL: {
    if (w->crash)
      raise(SIGSEGV);
    if (w->hang)
      for (;;)
        pause();
    if (w->fault) {
      g_sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
      return;
    }
    const int32_t *src[KERNEL_MAX_BUFS];
    for (int b = 1; b < w->nbufs; b++)
      src[b - 1] = w->bufs[b];
    kernel_ref_strided(w->kernel, w->bufs[0], src, w->stride, w->n, w->v);
    g_clock_ns += w->spin;
    break;
  }
  case W_COPY:
    memmove(w->dst, w->src, w->bytes);
    break;
  case W_SET32:
    for (size_t i = 0; i < w->bytes; i++)
      memcpy((char *)w->dst + 4 * i, &w->value, 4);
    break;
  case W_SET16:
    for (size_t i = 0; i < w->bytes; i++) {
      unsigned short v = (unsigned short)w->value;
      memcpy((char *)w->dst + 2 * i, &v, 2);
    }
    break;
  case W_WAIT:
    run_to(w->wst, w->wseq);
    break;
  case W_TIME:
    w->tev->ns = g_clock_ns;
    break;
  }
}

static void run_to(Stream *s, unsigned long long seq) {
  while (s->done < seq && s->len > 0 && !g_sticky) {
    Work w = s->q[s->head];
    exec(&w);
    s->head++;
    s->len--;
    s->done++;
  }
}

static void run_all(void) {
  run_to(&g_legacy, g_legacy.enq);
  for (Obj *o = g_live; o; o = o->next)
    if (o->kind == K_STREAM)
      run_to((Stream *)o, ((Stream *)o)->enq);
}

#define STICKY()                                                                                   \
  do {                                                                                             \
    if (g_sticky)                                                                                  \
      return (CUresult)g_sticky;                                                                   \
  } while (0)

CUresult cuInit(unsigned flags) {
  (void)flags;
  return env_int("FAKE_CUDA_NO_DEVICE") ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS;
}
CUresult cuDeviceGetCount(int *n) {
  *n = 1;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice *d, int ordinal) {
  *d = ordinal;
  return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}
CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
  (void)d;
  snprintf(name, (size_t)len, "asyncfuzz fake CUDA driver (test double)");
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
  (void)d;
  *v = a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR            ? 9
       : a == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT              ? 1
       : a == CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN ? 49152
                                                                    : 0;
  return CUDA_SUCCESS;
}
CUresult cuDeviceTotalMem_v2(size_t *b, CUdevice d) {
  (void)d;
  *b = (size_t)1 << 30;
  return CUDA_SUCCESS;
}
CUresult cuDriverGetVersion(int *v) {
  *v = 13000;
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
  (void)d;
  *c = (CUcontext)&g_ctx_dummy;
  return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext c) {
  (void)c;
  return CUDA_SUCCESS;
}
CUresult cuCtxGetCurrent(CUcontext *c) {
  *c = (CUcontext)&g_ctx_dummy;
  return CUDA_SUCCESS;
}
CUresult cuCtxSynchronize(void) {
  run_all();
  STICKY();
  return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult e, const char **s) {
  switch (e) {
  case CUDA_SUCCESS:
    *s = "CUDA_SUCCESS";
    return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_VALUE:
    *s = "CUDA_ERROR_INVALID_VALUE";
    return CUDA_SUCCESS;
  case CUDA_ERROR_NO_DEVICE:
    *s = "CUDA_ERROR_NO_DEVICE";
    return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_HANDLE:
    *s = "CUDA_ERROR_INVALID_HANDLE";
    return CUDA_SUCCESS;
  case CUDA_ERROR_NOT_FOUND:
    *s = "CUDA_ERROR_NOT_FOUND";
    return CUDA_SUCCESS;
  case CUDA_ERROR_ILLEGAL_ADDRESS:
    *s = "CUDA_ERROR_ILLEGAL_ADDRESS";
    return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_IMAGE:
    *s = "CUDA_ERROR_INVALID_IMAGE";
    return CUDA_SUCCESS;
  default:
    *s = NULL;
    return CUDA_ERROR_INVALID_VALUE;
  }
}

static int image_ok(const void *img) {
  static const unsigned char elf[4] = {0x7f, 'E', 'L', 'F'};
  static const unsigned char fatbin[4] = {0x50, 0xed, 0x55, 0xba};
  const char *c = img;
  return c && (strncmp(c, "//", 2) == 0 || strncmp(c, ".version", 8) == 0 ||
               memcmp(c, elf, 4) == 0 || memcmp(c, fatbin, 4) == 0);
}
CUresult cuModuleLoadData(CUmodule *m, const void *img) {
  STICKY();
  if (!image_ok(img))
    return CUDA_ERROR_INVALID_IMAGE;
  Obj *o = malloc(sizeof *o);
  reg(o, K_MODULE);
  *m = (CUmodule)o;
  return CUDA_SUCCESS;
}
CUresult cuModuleLoadDataEx(CUmodule *m, const void *img, unsigned n, CUjit_option *o, void **v) {
  (void)n;
  (void)o;
  (void)v;
  return cuModuleLoadData(m, img);
}
CUresult cuModuleUnload(CUmodule m) {
  STICKY();
  if (!live(m, K_MODULE))
    return CUDA_ERROR_INVALID_HANDLE;
  unreg((Obj *)m);
  free(m);
  return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  STICKY();
  if (!live(m, K_MODULE))
    return CUDA_ERROR_INVALID_HANDLE;
  int k = kernel_lookup(name);
  if (k < 0)
    return CUDA_ERROR_NOT_FOUND;
  static Func funcs[KERNEL__IDS];
  if (!live(&funcs[k], K_FUNC)) {
    funcs[k].kernel = k;
    reg(&funcs[k].o, K_FUNC);
  }
  *f = (CUfunction)&funcs[k];
  return CUDA_SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) {
  (void)f;
  (void)a;
  (void)v;
  return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned smem, CUstream hs, void **params,
                        void **extra) {
  (void)gy, (void)gz, (void)by, (void)bz, (void)smem, (void)extra;
  STICKY();
  Stream *s = stream_of(hs);
  if (!live(f, K_FUNC) || s == NULL)
    return CUDA_ERROR_INVALID_HANDLE;
  const KernelInfo *ki = kernel_info(((Func *)f)->kernel);
  Work *w = push(s);
  w->kind = W_KERNEL;
  w->kernel = ((Func *)f)->kernel;
  w->nbufs = ki->nbufs;
  for (int b = 0; b < ki->nbufs; b++) {
    int32_t *aligned = *(int32_t **)params[5 * b + 1];
    int64_t off = *(int64_t *)params[5 * b + 2];
    w->bufs[b] = aligned + off;
    w->stride[b] = *(int64_t *)params[5 * b + 4]; /* the memref descriptor's stride */
    if (b == 0)
      w->n = *(int64_t *)params[5 * b + 3];
  }
  if (w->n > (int64_t)gx * bx)
    w->n = (int64_t)gx * bx;
  w->v = *(int32_t *)params[5 * ki->nbufs];
  w->spin = *(int32_t *)params[5 * ki->nbufs + 1];
  g_launches++;
  w->fault = env_int("FAKE_CUDA_FAULT_AT") == g_launches;
  w->hang = env_int("FAKE_CUDA_HANG_AT") == g_launches;
  w->crash = env_int("FAKE_CUDA_CRASH_AT") == g_launches;
  const char *once = getenv("FAKE_CUDA_ONCE");
  if ((w->fault || w->hang || w->crash) && once && *once) {
    if (access(once, F_OK) == 0) {
      w->fault = w->hang = w->crash = 0;
    } else {
      FILE *mark = fopen(once, "w");
      if (mark)
        fclose(mark);
    }
  }
  return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream *out, unsigned flags) {
  (void)flags;
  STICKY();
  Stream *s = calloc(1, sizeof *s);
  reg(&s->o, K_STREAM);
  *out = (CUstream)s;
  return CUDA_SUCCESS;
}
CUresult cuStreamDestroy_v2(CUstream hs) {
  STICKY();
  if (!live(hs, K_STREAM))
    return CUDA_ERROR_INVALID_HANDLE;
  Stream *s = (Stream *)hs;
  run_to(s, s->enq); /* pending work still runs */
  unreg(&s->o);
  free(s->q);
  s->q = NULL;
  s->head = s->len = s->cap = 0;
  /* the struct stays: events recorded on the stream still name it (never freed) */
  s->dead_next = g_dead;
  g_dead = s;
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream hs) {
  STICKY();
  Stream *s = stream_of(hs);
  if (s == NULL)
    return CUDA_ERROR_INVALID_HANDLE;
  run_to(s, s->enq);
  STICKY();
  return CUDA_SUCCESS;
}
CUresult cuEventCreate(CUevent *out, unsigned flags) {
  STICKY();
  Event *e = calloc(1, sizeof *e);
  e->timing = !(flags & CU_EVENT_DISABLE_TIMING);
  reg(&e->o, K_EVENT);
  *out = (CUevent)e;
  return CUDA_SUCCESS;
}
CUresult cuEventDestroy_v2(CUevent he) {
  STICKY();
  if (!live(he, K_EVENT))
    return CUDA_ERROR_INVALID_HANDLE;
  unreg((Obj *)he);
  free(he);
  return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent he, CUstream hs) {
  STICKY();
  Stream *s = stream_of(hs);
  if (!live(he, K_EVENT) || s == NULL)
    return CUDA_ERROR_INVALID_HANDLE;
  Event *e = (Event *)he;
  if (e->timing) {
    Work *w = push(s);
    w->kind = W_TIME;
    w->tev = e;
  }
  e->st = s;
  e->seq = s->enq;
  return CUDA_SUCCESS;
}
CUresult cuEventSynchronize(CUevent he) {
  STICKY();
  if (!live(he, K_EVENT))
    return CUDA_ERROR_INVALID_HANDLE; /* e.g. a stream given as an event: no wait */
  Event *e = (Event *)he;
  if (e->st)
    run_to(e->st, e->seq);
  STICKY();
  return CUDA_SUCCESS;
}
CUresult cuStreamWaitEvent(CUstream hs, CUevent he, unsigned flags) {
  (void)flags;
  STICKY();
  Stream *s = stream_of(hs);
  if (!live(he, K_EVENT) || s == NULL)
    return CUDA_ERROR_INVALID_HANDLE;
  Event *e = (Event *)he;
  if (e->st) {
    Work *w = push(s);
    w->kind = W_WAIT;
    w->wst = e->st;
    w->wseq = e->seq;
  }
  return CUDA_SUCCESS;
}
CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b) {
  if (!live(a, K_EVENT) || !live(b, K_EVENT))
    return CUDA_ERROR_INVALID_HANDLE;
  *ms = (float)((((Event *)b)->ns - ((Event *)a)->ns) / 1e6);
  return CUDA_SUCCESS;
}

/* Allocations are never given back to the C library: work still queued may touch them. */
typedef struct Mem {
  Obj o;
  size_t bytes;
  int freed;
  _Alignas(16) char data[];
} Mem;

static Mem *mem_of(CUdeviceptr p) {
  for (Obj *o = g_live; o; o = o->next)
    if (o->kind == K_MODULE + 1 && (CUdeviceptr)(uintptr_t)((Mem *)o)->data == p)
      return (Mem *)o;
  return NULL;
}
static CUresult alloc(CUdeviceptr *p, size_t bytes) {
  STICKY();
  Mem *m = calloc(1, sizeof *m + bytes);
  if (m == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  m->bytes = bytes;
  reg(&m->o, K_MODULE + 1);
  *p = (CUdeviceptr)(uintptr_t)m->data;
  return CUDA_SUCCESS;
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
  return alloc(p, bytes);
}
CUresult cuMemAllocManaged(CUdeviceptr *p, size_t bytes, unsigned flags) {
  (void)flags;
  return alloc(p, bytes);
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  STICKY();
  Mem *m = mem_of(p);
  if (m == NULL || m->freed)
    return CUDA_ERROR_INVALID_VALUE;
  m->freed = 1;
  return CUDA_SUCCESS;
}
/* Whether p lies in a device allocation (else it is pageable host memory). */
static int is_dev(CUdeviceptr p) {
  for (Obj *o = g_live; o; o = o->next) {
    Mem *m = (Mem *)o;
    if (o->kind == K_MODULE + 1 && p >= (CUdeviceptr)(uintptr_t)m->data &&
        p < (CUdeviceptr)(uintptr_t)m->data + m->bytes)
      return 1;
  }
  return 0;
}
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream hs) {
  STICKY();
  Stream *s = stream_of(hs);
  if (s == NULL)
    return CUDA_ERROR_INVALID_HANDLE;
  Work *w = push(s);
  w->kind = W_COPY;
  w->dst = (void *)(uintptr_t)dst;
  w->src = (const void *)(uintptr_t)src;
  w->bytes = bytes;
  if (!is_dev(dst) || !is_dev(src))
    run_to(s, s->enq); /* pageable host memory: synchronous */
  STICKY();
  return CUDA_SUCCESS;
}
static CUresult set(int kind, CUdeviceptr dst, unsigned v, size_t n, CUstream hs) {
  STICKY();
  Stream *s = stream_of(hs);
  if (s == NULL)
    return CUDA_ERROR_INVALID_HANDLE;
  Work *w = push(s);
  w->kind = kind;
  w->dst = (void *)(uintptr_t)dst;
  w->value = v;
  w->bytes = n;
  return CUDA_SUCCESS;
}
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned v, size_t n, CUstream hs) {
  return set(W_SET32, dst, v, n, hs);
}
CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short v, size_t n, CUstream hs) {
  return set(W_SET16, dst, v, n, hs);
}
CUresult cuMemHostRegister_v2(void *p, size_t bytes, unsigned flags) {
  (void)flags;
  STICKY();
  return p && bytes ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuMemHostUnregister(void *p) {
  STICKY();
  return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
