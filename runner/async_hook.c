/*
 * async_hook.c: MLIR's async runtime ABI (AsyncRuntime.h), forwarded to the real library
 * with the happens-before edges between threads recorded in the trace.
 *
 * Code lowered by MLIR runs async.execute regions as coroutines on the async runtime's
 * worker threads. To see which thread's work precedes which, libasyncfuzz_rt defines every
 * mlirAsyncRuntime* function itself and forwards it to libmlir_async_runtime, which it loads
 * with dlopen (ASYNCFUZZ_ASYNC_RUNTIME, or the library found at configure time). Run the
 * lowered code with libasyncfuzz_rt in --shared-libs *instead of* the async runtime library.
 *
 * Recorded edges (trace calls async.release / async.acquire on an object a<N>):
 * - mlirAsyncRuntimeExecute: the caller releases a task object; the coroutine acquires it
 *   when it first runs on a worker (spawn -> start).
 * - Emplace{Token,Value}: the caller releases the token or value (a region's yield).
 * - Await{Token,Value} (blocking): the caller acquires it after the wait returns (await).
 * - Await*AndExecute: the continuation acquires the awaited object when it runs.
 * - Groups: awaiting a group acquires every token added to it.
 */
#define _GNU_SOURCE
#include "asyncfuzz_rt.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef void (*Resume)(void *);

#define ASYNC_FN_MAP(X)                                                                            \
  X(AddRef, void, (void *, int64_t))                                                               \
  X(DropRef, void, (void *, int64_t))                                                              \
  X(CreateToken, void *, (void))                                                                   \
  X(CreateValue, void *, (int64_t))                                                                \
  X(CreateGroup, void *, (int64_t))                                                                \
  X(AddTokenToGroup, int64_t, (void *, void *))                                                    \
  X(EmplaceToken, void, (void *))                                                                  \
  X(EmplaceValue, void, (void *))                                                                  \
  X(SetTokenError, void, (void *))                                                                 \
  X(SetValueError, void, (void *))                                                                 \
  X(IsTokenError, bool, (void *))                                                                  \
  X(IsValueError, bool, (void *))                                                                  \
  X(IsGroupError, bool, (void *))                                                                  \
  X(AwaitToken, void, (void *))                                                                    \
  X(AwaitValue, void, (void *))                                                                    \
  X(AwaitAllInGroup, void, (void *))                                                               \
  X(GetValueStorage, void *, (void *))                                                             \
  X(Execute, void, (void *, Resume))                                                               \
  X(AwaitTokenAndExecute, void, (void *, void *, Resume))                                          \
  X(AwaitValueAndExecute, void, (void *, void *, Resume))                                          \
  X(AwaitAllInGroupAndExecute, void, (void *, void *, Resume))                                     \
  X(PrintCurrentThreadId, void, (void))

static struct {
#define HOOK__FIELD(name, ret, args) ret(*name) args;
  ASYNC_FN_MAP(HOOK__FIELD)
#undef HOOK__FIELD
  int64_t (*GetNumWorkerThreads)(void);
} real;

static pthread_once_t bind_once = PTHREAD_ONCE_INIT;
static int bound; /* 1: every function resolved */

/* Object ids: the address of a live token/value/group/task -> a small id. An address reused
 * after a free gets a new id at its next Create. */
typedef struct ObjMap {
  pthread_mutex_t mu;
  void **keys;
  int *ids;
  int cap, n, next_id;
  /* group members: group id -> token ids (flat pairs) */
  int *gm;
  int ngm, capgm;
} ObjMap;

static ObjMap g_objs = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void bind_real(void) {
  const char *path = getenv("ASYNCFUZZ_ASYNC_RUNTIME");
#ifdef ASYNCFUZZ_DEFAULT_ASYNC_RUNTIME
  if (path == NULL)
    path = ASYNCFUZZ_DEFAULT_ASYNC_RUNTIME;
#endif
  if (path == NULL)
    path = "libmlir_async_runtime.so.22.1";
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL)
    return;
  int ok = 1;
#define HOOK__BIND(name, ret, args)                                                                \
  *(void **)&real.name = dlsym(lib, "mlirAsyncRuntime" #name);                                     \
  ok &= real.name != NULL;
  ASYNC_FN_MAP(HOOK__BIND)
#undef HOOK__BIND
  *(void **)&real.GetNumWorkerThreads = dlsym(lib, "mlirAsyncRuntimGetNumWorkerThreads");
  ok &= real.GetNumWorkerThreads != NULL;
  bound = ok;
}

/* The real library is required: without it the lowered program cannot run at all. */
static void need_real(void) {
  pthread_once(&bind_once, bind_real);
  if (!bound)
    abort(); /* the runner would crash on a null call anyway; fail at a known place */
}

static int obj_id(void *p, int create) {
  ObjMap *m = &g_objs;
  pthread_mutex_lock(&m->mu);
  int id = -1;
  if (m->n * 2 >= m->cap) {
    int ncap = m->cap ? m->cap * 2 : 256;
    void **nk = calloc((size_t)ncap, sizeof(void *));
    int *ni = calloc((size_t)ncap, sizeof(int));
    if (nk && ni) {
      for (int i = 0; i < m->cap; i++) {
        if (m->keys[i] == NULL)
          continue;
        size_t h = ((uintptr_t)m->keys[i] >> 4) & (size_t)(ncap - 1);
        while (nk[h])
          h = (h + 1) & (size_t)(ncap - 1);
        nk[h] = m->keys[i];
        ni[h] = m->ids[i];
      }
      free(m->keys);
      free(m->ids);
      m->keys = nk;
      m->ids = ni;
      m->cap = ncap;
    } else {
      free(nk);
      free(ni);
    }
  }
  if (m->cap) {
    size_t h = ((uintptr_t)p >> 4) & (size_t)(m->cap - 1);
    while (m->keys[h] && m->keys[h] != p)
      h = (h + 1) & (size_t)(m->cap - 1);
    if (m->keys[h] == NULL) {
      m->keys[h] = p;
      m->n++;
      create = 1;
    }
    if (create)
      m->ids[h] = m->next_id++;
    id = m->ids[h];
  }
  pthread_mutex_unlock(&m->mu);
  return id;
}

static void note(int kind, void *obj) {
  int id = obj_id(obj, 0);
  if (id >= 0)
    asyncfuzz_rt_note(kind, id, -1);
}

/* A group's awaiter acquires every token added to the group. */
static void acquire_group(void *group) {
  int gid = obj_id(group, 0);
  ObjMap *m = &g_objs;
  pthread_mutex_lock(&m->mu);
  int n = m->ngm;
  int *pairs = n ? malloc(sizeof(int) * 2 * (size_t)n) : NULL;
  if (pairs)
    memcpy(pairs, m->gm, sizeof(int) * 2 * (size_t)n);
  pthread_mutex_unlock(&m->mu);
  for (int i = 0; pairs && i < n; i++)
    if (pairs[2 * i] == gid)
      asyncfuzz_rt_note(RT_NOTE_ACQUIRE, pairs[2 * i + 1], -1);
  free(pairs);
}

typedef struct Cont {
  void *hdl;
  Resume resume;
  void *obj; /* acquired when the continuation runs */
  int group; /* obj is a group */
} Cont;

static void trampoline(void *p) {
  Cont c = *(Cont *)p;
  /* acquire before the free: a freed address may be reused, and renumbered, at once */
  if (c.group)
    acquire_group(c.obj);
  else
    note(RT_NOTE_ACQUIRE, c.obj);
  free(p);
  c.resume(c.hdl);
}

static Cont *cont(void *hdl, Resume resume, void *obj, int group) {
  Cont *c = malloc(sizeof *c);
  if (c == NULL)
    abort(); /* the coroutine could not be scheduled: nothing sensible remains */
  c->hdl = hdl;
  c->resume = resume;
  c->obj = obj;
  c->group = group;
  return c;
}

void mlirAsyncRuntimeAddRef(void *p, int64_t n) {
  need_real();
  real.AddRef(p, n);
}
void mlirAsyncRuntimeDropRef(void *p, int64_t n) {
  need_real();
  real.DropRef(p, n);
}
void *mlirAsyncRuntimeCreateToken(void) {
  need_real();
  void *t = real.CreateToken();
  obj_id(t, 1);
  return t;
}
void *mlirAsyncRuntimeCreateValue(int64_t size) {
  need_real();
  void *v = real.CreateValue(size);
  obj_id(v, 1);
  return v;
}
void *mlirAsyncRuntimeCreateGroup(int64_t size) {
  need_real();
  void *g = real.CreateGroup(size);
  obj_id(g, 1);
  return g;
}
int64_t mlirAsyncRuntimeAddTokenToGroup(void *tok, void *group) {
  need_real();
  int tid = obj_id(tok, 0), gid = obj_id(group, 0);
  ObjMap *m = &g_objs;
  pthread_mutex_lock(&m->mu);
  if (m->ngm + 1 > m->capgm) {
    int nc = m->capgm ? m->capgm * 2 : 64;
    int *p = realloc(m->gm, sizeof(int) * 2 * (size_t)nc);
    if (p) {
      m->gm = p;
      m->capgm = nc;
    }
  }
  if (m->ngm < m->capgm) {
    m->gm[2 * m->ngm] = gid;
    m->gm[2 * m->ngm + 1] = tid;
    m->ngm++;
  }
  pthread_mutex_unlock(&m->mu);
  return real.AddTokenToGroup(tok, group);
}
void mlirAsyncRuntimeEmplaceToken(void *tok) {
  need_real();
  note(RT_NOTE_RELEASE, tok);
  real.EmplaceToken(tok);
}
void mlirAsyncRuntimeEmplaceValue(void *v) {
  need_real();
  note(RT_NOTE_RELEASE, v);
  real.EmplaceValue(v);
}
void mlirAsyncRuntimeSetTokenError(void *tok) {
  need_real();
  note(RT_NOTE_RELEASE, tok);
  real.SetTokenError(tok);
}
void mlirAsyncRuntimeSetValueError(void *v) {
  need_real();
  note(RT_NOTE_RELEASE, v);
  real.SetValueError(v);
}
bool mlirAsyncRuntimeIsTokenError(void *tok) {
  need_real();
  return real.IsTokenError(tok);
}
bool mlirAsyncRuntimeIsValueError(void *v) {
  need_real();
  return real.IsValueError(v);
}
bool mlirAsyncRuntimeIsGroupError(void *g) {
  need_real();
  return real.IsGroupError(g);
}
void mlirAsyncRuntimeAwaitToken(void *tok) {
  need_real();
  real.AwaitToken(tok);
  note(RT_NOTE_ACQUIRE, tok);
}
void mlirAsyncRuntimeAwaitValue(void *v) {
  need_real();
  real.AwaitValue(v);
  note(RT_NOTE_ACQUIRE, v);
}
void mlirAsyncRuntimeAwaitAllInGroup(void *g) {
  need_real();
  real.AwaitAllInGroup(g);
  acquire_group(g);
}
void *mlirAsyncRuntimeGetValueStorage(void *v) {
  need_real();
  return real.GetValueStorage(v);
}
void mlirAsyncRuntimeExecute(void *hdl, Resume resume) {
  need_real();
  Cont *c = cont(hdl, resume, NULL, 0);
  c->obj = c; /* the task object: released here, acquired when it starts */
  obj_id(c, 1);
  note(RT_NOTE_RELEASE, c);
  real.Execute(c, trampoline);
}
void mlirAsyncRuntimeAwaitTokenAndExecute(void *tok, void *hdl, Resume resume) {
  need_real();
  real.AwaitTokenAndExecute(tok, cont(hdl, resume, tok, 0), trampoline);
}
void mlirAsyncRuntimeAwaitValueAndExecute(void *v, void *hdl, Resume resume) {
  need_real();
  real.AwaitValueAndExecute(v, cont(hdl, resume, v, 0), trampoline);
}
void mlirAsyncRuntimeAwaitAllInGroupAndExecute(void *g, void *hdl, Resume resume) {
  need_real();
  real.AwaitAllInGroupAndExecute(g, cont(hdl, resume, g, 1), trampoline);
}
int64_t mlirAsyncRuntimGetNumWorkerThreads(void) {
  need_real();
  return real.GetNumWorkerThreads();
}
void mlirAsyncRuntimePrintCurrentThreadId(void) {
  need_real();
  real.PrintCurrentThreadId();
}
