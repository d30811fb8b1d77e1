/*
 * fake_gpu.c: the model of the test doubles of the CUDA driver and the HIP runtime
 * (fake_gpu.h). TEST ONLY.
 */
#include "fake_gpu.h"

#include <signal.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../kernels/kernels.h"

enum {
  K_STREAM = 0x5354524d,
  K_EVENT = 0x45564e54,
  K_MODULE = 0x4d4f4455,
  K_FUNC = 0x46554e43,
  K_MEM = 0x4d454d21,
  K_HOST = 0x484f5354
};
enum { W_KERNEL, W_COPY, W_SET32, W_SET16, W_WAIT, W_TIME };

typedef struct Obj {
  int kind;
  struct Obj *next; /* the registry of live objects */
} Obj;

typedef struct Work {
  int kind;
  int kernel, nbufs, hang, fault, crash;
  char *bufs[KERNEL_MAX_BUFS]; /* elements of the kernel's type */
  int64_t stride[KERNEL_MAX_BUFS];
  int64_t n, threads; /* a kernel's elements, and its threads a block */
  int32_t v, spin;
  unsigned smem; /* the bytes of dynamic shared memory its launch gave */
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
  int blocking; /* synchronizes with the legacy stream */
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

/* Allocations are never given back to the C library: work still queued may touch them. */
typedef struct Mem {
  Obj o;
  size_t bytes;
  int freed;
  _Alignas(16) char data[];
} Mem;

typedef struct HostReg {
  Obj o;
  char *p;
  size_t bytes;
} HostReg;

static const char *g_prefix = "FAKE_GPU_";
static Obj *g_live;
static Stream g_legacy = {.o = {K_STREAM, NULL}};
static Stream *g_dead;
static int g_sticky;
static int g_launches;
static double g_clock_ns;

void fg_set_prefix(const char *prefix) {
  g_prefix = prefix;
}

static const char *env_str(const char *name) {
  char key[64];
  snprintf(key, sizeof key, "%s%s", g_prefix, name);
  return getenv(key);
}

int fg_env(const char *name) {
  const char *s = env_str(name);
  return s && *s ? atoi(s) : 0;
}

int fg_sticky(void) {
  return g_sticky;
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

static Stream *stream_of(void *s) {
  if (s == NULL)
    return &g_legacy;
  return live(s, K_STREAM) ? (Stream *)s : NULL;
}

static Work *push_raw(Stream *s) {
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

static void wait_item(Stream *s, Stream *t) {
  if (t->done >= t->enq)
    return;
  Work *w = push_raw(s);
  w->kind = W_WAIT;
  w->wst = t;
  w->wseq = t->enq;
}

/* The legacy stream's rule: its work waits for every blocking stream, and their later work
 * (an event record too) waits for it. */
static void legacy_order(Stream *s) {
  if (s == &g_legacy) {
    for (Obj *o = g_live; o; o = o->next)
      if (o->kind == K_STREAM && ((Stream *)o)->blocking)
        wait_item(s, (Stream *)o);
  } else if (s->blocking) {
    wait_item(s, &g_legacy);
  }
}

static Work *push(Stream *s) {
  legacy_order(s);
  return push_raw(s);
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
      g_sticky = FG_ILLEGAL_ADDRESS;
      return;
    }
    const void *src[KERNEL_MAX_BUFS];
    for (int b = 1; b < w->nbufs; b++)
      src[b - 1] = w->bufs[b];
    kernel_ref_strided(w->kernel, w->bufs[0], src, w->stride, w->n, w->v);
    kernel_smem_short(w->kernel, w->bufs[0], w->stride[0], w->n, w->threads, w->smem);
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

int fg_device_sync(void) {
  run_all();
  return g_sticky;
}

#define STICKY()                                                                                   \
  do {                                                                                             \
    if (g_sticky)                                                                                  \
      return g_sticky;                                                                             \
  } while (0)

int fg_module_load(void **m) {
  STICKY();
  Obj *o = malloc(sizeof *o);
  reg(o, K_MODULE);
  *m = o;
  return FG_OK;
}

int fg_module_unload(void *m) {
  STICKY();
  if (!live(m, K_MODULE))
    return FG_INVALID_HANDLE;
  unreg((Obj *)m);
  free(m);
  return FG_OK;
}

int fg_get_function(void **f, void *m, const char *name) {
  STICKY();
  if (!live(m, K_MODULE))
    return FG_INVALID_HANDLE;
  int k = kernel_lookup(name);
  if (k < 0 && kernel_outlined_name(name))
    k = KERNEL__IDS; /* outlined from a gpu.launch: its first argument, a tag, says which */
  if (k < 0)
    return FG_NOT_FOUND;
  static Func funcs[KERNEL__IDS + 1];
  if (!live(&funcs[k], K_FUNC)) {
    funcs[k].kernel = k;
    reg(&funcs[k].o, K_FUNC);
  }
  *f = &funcs[k];
  return FG_OK;
}

int fg_launch(void *f, unsigned gx, unsigned bx, unsigned smem, void *hs, void **params) {
  STICKY();
  Stream *s = stream_of(hs);
  if (!live(f, K_FUNC) || s == NULL)
    return FG_INVALID_HANDLE;
  int k = ((Func *)f)->kernel;
  void *std[5 * KERNEL_MAX_BUFS + 2];
  if (k ==
      KERNEL__IDS) { /* (tag, value, spin, buffers...) as a gpu.func's (buffers, value, spin) */
    if ((k = kernel_untag(params, 0, std)) < 0)
      return FG_INVALID_VALUE;
    params = std;
  }
  const KernelInfo *ki = kernel_info(k);
  Work *w = push(s);
  w->kind = W_KERNEL;
  w->kernel = k;
  w->nbufs = ki->nbufs;
  for (int b = 0; b < ki->nbufs; b++) {
    char *aligned = *(char **)params[5 * b + 1];
    int64_t off = *(int64_t *)params[5 * b + 2];
    w->bufs[b] = aligned + off * kernel_elem_bytes(ki->elem);
    w->stride[b] = *(int64_t *)params[5 * b + 4]; /* the memref descriptor's stride */
    if (b == 0)
      w->n = *(int64_t *)params[5 * b + 3];
  }
  if (w->n > (int64_t)gx * bx)
    w->n = (int64_t)gx * bx;
  w->v = *(int32_t *)params[5 * ki->nbufs];
  w->threads = bx;
  w->smem = smem;
  w->spin = *(int32_t *)params[5 * ki->nbufs + 1];
  g_launches++;
  w->fault = fg_env("FAULT_AT") == g_launches;
  w->hang = fg_env("HANG_AT") == g_launches;
  w->crash = fg_env("CRASH_AT") == g_launches;
  const char *once = env_str("ONCE");
  if ((w->fault || w->hang || w->crash) && once && *once) {
    int mark = open(once, O_CREAT | O_EXCL | O_WRONLY, 0644); /* (one process of many) */
    if (mark < 0)
      w->fault = w->hang = w->crash = 0;
    else
      close(mark);
  }
  return FG_OK;
}

int fg_stream_create(void **out, int blocking) {
  STICKY();
  Stream *s = calloc(1, sizeof *s);
  s->blocking = blocking;
  reg(&s->o, K_STREAM);
  *out = s;
  return FG_OK;
}

int fg_stream_destroy(void *hs) {
  STICKY();
  if (!live(hs, K_STREAM))
    return FG_INVALID_HANDLE;
  Stream *s = hs;
  run_to(s, s->enq); /* pending work still runs */
  unreg(&s->o);
  free(s->q);
  s->q = NULL;
  s->head = s->len = s->cap = 0;
  /* the struct stays: events recorded on the stream still name it (never freed) */
  s->dead_next = g_dead;
  g_dead = s;
  return FG_OK;
}

int fg_stream_sync(void *hs) {
  STICKY();
  Stream *s = stream_of(hs);
  if (s == NULL)
    return FG_INVALID_HANDLE;
  run_to(s, s->enq);
  return g_sticky;
}

int fg_event_create(void **out, int timing) {
  STICKY();
  Event *e = calloc(1, sizeof *e);
  e->timing = timing;
  reg(&e->o, K_EVENT);
  *out = e;
  return FG_OK;
}

int fg_event_destroy(void *he) {
  STICKY();
  if (!live(he, K_EVENT))
    return FG_INVALID_HANDLE;
  unreg((Obj *)he);
  free(he);
  return FG_OK;
}

int fg_event_record(void *he, void *hs) {
  STICKY();
  Stream *s = stream_of(hs);
  if (!live(he, K_EVENT) || s == NULL)
    return FG_INVALID_HANDLE;
  Event *e = he;
  legacy_order(s);
  if (e->timing) {
    Work *w = push_raw(s);
    w->kind = W_TIME;
    w->tev = e;
  }
  e->st = s;
  e->seq = s->enq;
  return FG_OK;
}

int fg_event_sync(void *he) {
  STICKY();
  if (!live(he, K_EVENT))
    return FG_INVALID_HANDLE; /* e.g. a stream given as an event: no wait */
  Event *e = he;
  if (e->st)
    run_to(e->st, e->seq);
  return g_sticky;
}

int fg_stream_wait_event(void *hs, void *he) {
  STICKY();
  Stream *s = stream_of(hs);
  if (!live(he, K_EVENT) || s == NULL)
    return FG_INVALID_HANDLE;
  Event *e = he;
  if (e->st) {
    Work *w = push(s);
    w->kind = W_WAIT;
    w->wst = e->st;
    w->wseq = e->seq;
  }
  return FG_OK;
}

int fg_event_elapsed(float *ms, void *a, void *b) {
  if (!live(a, K_EVENT) || !live(b, K_EVENT))
    return FG_INVALID_HANDLE;
  *ms = (float)((((Event *)b)->ns - ((Event *)a)->ns) / 1e6);
  return FG_OK;
}

static Mem *mem_of(const void *p) {
  for (Obj *o = g_live; o; o = o->next)
    if (o->kind == K_MEM && ((Mem *)o)->data == p)
      return (Mem *)o;
  return NULL;
}

int fg_alloc(void **p, size_t bytes) {
  STICKY();
  Mem *m = calloc(1, sizeof *m + bytes);
  if (m == NULL)
    return FG_OUT_OF_MEMORY;
  m->bytes = bytes;
  reg(&m->o, K_MEM);
  *p = m->data;
  return FG_OK;
}

int fg_free(void *p) {
  STICKY();
  Mem *m = mem_of(p);
  if (m == NULL || m->freed)
    return FG_INVALID_VALUE;
  m->freed = 1;
  return FG_OK;
}

/* Whether p lies in a device allocation or registered host memory (else it is pageable host
 * memory). */
static int is_dev(const void *p) {
  for (Obj *o = g_live; o; o = o->next) {
    Mem *m = (Mem *)o;
    HostReg *h = (HostReg *)o;
    if (o->kind == K_MEM && (const char *)p >= m->data && (const char *)p < m->data + m->bytes)
      return 1;
    if (o->kind == K_HOST && (const char *)p >= h->p && (const char *)p < h->p + h->bytes)
      return 1;
  }
  return 0;
}

/* P HOST_LOG=FILE: each registration and unregistration the driver accepts, a line appended to
 * FILE ("register ADDR" / "unregister ADDR"), so a test sees what a run left registered. */
static void host_log(const char *what, const void *p) {
  const char *f = env_str("HOST_LOG");
  FILE *o = f && *f ? fopen(f, "a") : NULL;
  if (o == NULL)
    return;
  fprintf(o, "%s %p\n", what, p);
  fclose(o);
}

int fg_host_register(void *p, size_t bytes) {
  STICKY();
  if (p == NULL || bytes == 0)
    return FG_INVALID_VALUE;
  char *c = p;
  for (Obj *o = g_live; o; o = o->next) {
    HostReg *h = (HostReg *)o;
    if (o->kind == K_HOST && c < h->p + h->bytes && h->p < c + bytes)
      return FG_HOST_ALREADY_REGISTERED;
  }
  HostReg *h = calloc(1, sizeof *h);
  if (h == NULL)
    return FG_OUT_OF_MEMORY;
  h->p = c;
  h->bytes = bytes;
  reg(&h->o, K_HOST);
  host_log("register", p);
  return FG_OK;
}

int fg_host_unregister(void *p) {
  STICKY();
  for (Obj *o = g_live; o; o = o->next)
    if (o->kind == K_HOST && ((HostReg *)o)->p == p) {
      run_all();
      unreg(o);
      free(o);
      host_log("unregister", p);
      return g_sticky;
    }
  return FG_HOST_NOT_REGISTERED;
}

int fg_memcpy(void *dst, const void *src, size_t bytes, void *hs) {
  STICKY();
  Stream *s = stream_of(hs);
  if (s == NULL)
    return FG_INVALID_HANDLE;
  Work *w = push(s);
  w->kind = W_COPY;
  w->dst = dst;
  w->src = src;
  w->bytes = bytes;
  if (!is_dev(dst) || !is_dev(src))
    run_to(s, s->enq); /* pageable host memory: synchronous */
  return g_sticky;
}

int fg_memset(int esize, void *dst, unsigned v, size_t n, void *hs) {
  STICKY();
  Stream *s = stream_of(hs);
  if (s == NULL)
    return FG_INVALID_HANDLE;
  Work *w = push(s);
  w->kind = esize == 2 ? W_SET16 : W_SET32;
  w->dst = dst;
  w->value = v;
  w->bytes = n;
  return FG_OK;
}
