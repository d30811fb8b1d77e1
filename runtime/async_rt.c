/*
 * async_rt.c: MLIR's async runtime ABI (mlir/ExecutionEngine/AsyncRuntime.h), implemented by
 * the simulator: single-threaded, deterministic, and with its ordering edges in the trace.
 *
 * Code lowered by MLIR runs each async.execute region as a coroutine. Instead of MLIR's thread
 * pool, ready coroutine continuations wait in a queue and run on the calling thread, when the
 * schedule policy lets them: eager runs them as soon as they are ready (an idle worker pool);
 * lazy, random and pct run them only when someone waits (random and pct in a seeded random
 * order), so regions run late and the host runs ahead, as on a slow machine. Run lowered code
 * with libasyncfuzz_rt in --shared-libs *instead of* libmlir_async_runtime.
 *
 * Semantics follow AsyncRuntime.cpp: tokens and values start with two references (the caller's
 * and the one the emplacing task drops), groups with one; emplacing runs the awaiters; a group
 * is ready when every token added to it is. A blocking await that nothing can satisfy returns
 * (instead of hanging) and leaves an error in the trace.
 *
 * Each coroutine is a logical thread of the trace (T<n>, in order of first run; T0 is the host).
 * Edges are recorded as async.release / async.acquire on an object a<N>: Execute releases a task
 * object that the coroutine acquires when it starts; Emplace releases the token or value; an
 * await, or a continuation run after one, acquires it; a group's awaiter acquires its tokens.
 */
#include "runtime_int.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef void (*Resume)(void *);

enum { K_TOKEN, K_VALUE, K_GROUP };
enum { S_PENDING, S_READY, S_ERROR };

typedef struct Obj Obj;

typedef struct Waiter {
  void *hdl; /* coroutine to resume (NULL: a group membership) */
  Resume resume;
  Obj *group; /* for a group membership: the group the token counts toward */
  struct Waiter *next;
} Waiter;

struct Obj {
  int kind, state, id;
  int64_t refs;
  Waiter *waiters;
  /* groups */
  int64_t pending, rank, errors;
  int nmembers, capmembers;
  int *members; /* token ids, acquired by the group's awaiters */
  /* values */
  char *storage;
};

typedef struct Task {
  void *hdl;
  Resume resume;
  int acquire_id; /* object acquired when it runs (-1: none) */
  Obj *acquire_group;
} Task;

static struct {
  Task *q;
  int qhead, qlen, qcap;
  void **coros; /* coroutine handles, and the logical thread of each */
  int *tids;
  int ncoros, capcoros, captids;
  int next_obj;
  AfRng rng;
  int seeded;
  int depth;
} A;

static int policy(void) {
  RtConfig c;
  rt__rt_config(&c);
  if (!A.seeded) {
    af_rng_seed(&A.rng, af_mix64(c.seed, 0xA5F1));
    A.seeded = 1;
  }
  return c.policy;
}

static Obj *obj_new(int kind, int64_t refs, size_t storage) {
  Obj *o = af_calloc(1, sizeof *o);
  if (o == NULL)
    return NULL;
  o->kind = kind;
  o->refs = refs;
  o->id = A.next_obj++;
  if (storage) {
    o->storage = af_calloc(1, storage);
    if (o->storage == NULL) {
      af_free(o);
      return NULL;
    }
  }
  return o;
}

static void obj_free(Obj *o) {
  for (Waiter *w = o->waiters, *n; w; w = n) {
    n = w->next;
    af_free(w);
  }
  af_free(o->members);
  af_free(o->storage);
  af_free(o);
}

/* A coroutine's logical thread: the id it got from the runtime when it first ran. */
static int tid_of(void *hdl) {
  for (int i = 0; i < A.ncoros; i++)
    if (A.coros[i] == hdl)
      return A.tids[i];
  if (af_grow((void **)&A.coros, &A.capcoros, A.ncoros + 1, sizeof(void *)) ||
      af_grow((void **)&A.tids, &A.captids, A.ncoros + 1, sizeof(int)))
    return rt__rt_thread();
  A.coros[A.ncoros] = hdl;
  A.tids[A.ncoros] = rt__rt_new_thread();
  return A.tids[A.ncoros++];
}

static void acquire(int id, Obj *group) {
  if (group) {
    for (int i = 0; i < group->nmembers; i++)
      asyncfuzz_rt_note(RT_NOTE_ACQUIRE, group->members[i], -1);
  } else if (id >= 0) {
    asyncfuzz_rt_note(RT_NOTE_ACQUIRE, id, -1);
  }
}

/* Runs one ready continuation as its coroutine's logical thread. */
static void run_one(void) {
  int pick = 0;
  int p = policy();
  if ((p == RT_RANDOM || p == RT_PCT) && A.qlen > 1)
    pick = (int)af_rng_below(&A.rng, (uint32_t)A.qlen);
  Task t = A.q[A.qhead + pick];
  memmove(&A.q[A.qhead + pick], &A.q[A.qhead + pick + 1],
          sizeof(Task) * (size_t)(A.qlen - pick - 1));
  A.qlen--;
  if (A.qlen == 0)
    A.qhead = 0;
  int saved = rt__rt_thread();
  asyncfuzz_rt_set_thread(tid_of(t.hdl));
  acquire(t.acquire_id, t.acquire_group);
  A.depth++;
  t.resume(t.hdl);
  A.depth--;
  asyncfuzz_rt_set_thread(saved);
}

static void enqueue(void *hdl, Resume resume, int acquire_id, Obj *group) {
  if (A.qhead + A.qlen + 1 > A.qcap) {
    if (A.qhead) {
      memmove(A.q, A.q + A.qhead, sizeof(Task) * (size_t)A.qlen);
      A.qhead = 0;
    }
    if (af_grow((void **)&A.q, &A.qcap, A.qlen + 1, sizeof(Task))) {
      /* no memory to defer it: run it now, which is one valid schedule */
      Task t = {hdl, resume, acquire_id, group};
      int saved = rt__rt_thread();
      asyncfuzz_rt_set_thread(tid_of(hdl));
      acquire(t.acquire_id, t.acquire_group);
      resume(hdl);
      asyncfuzz_rt_set_thread(saved);
      return;
    }
  }
  A.q[A.qhead + A.qlen++] = (Task){hdl, resume, acquire_id, group};
  /* eager: an idle worker would start it at once (bounded nesting keeps the C stack small) */
  if (policy() == RT_EAGER && A.depth < 64)
    while (A.qlen)
      run_one();
}

/* Runs ready continuations until obj is no longer pending (or none is left). */
static void run_until(Obj *o) {
  while (o->state == S_PENDING && A.qlen > 0)
    run_one();
}

static void drop(Obj *o, int64_t n) {
  o->refs -= n;
  if (o->refs <= 0)
    obj_free(o);
}

static void group_token_ready(Obj *g, Obj *tok) {
  if (tok->state == S_ERROR)
    g->errors++;
  if (--g->pending == 0) {
    g->state = g->errors ? S_ERROR : S_READY;
    Waiter *w = g->waiters;
    g->waiters = NULL;
    for (Waiter *n; w; w = n) {
      n = w->next;
      enqueue(w->hdl, w->resume, -1, g);
      af_free(w);
    }
  }
}

/* Marks o ready (or in error) and hands its awaiters to the scheduler. */
static void emplace(Obj *o, int state) {
  asyncfuzz_rt_note(RT_NOTE_RELEASE, o->id, -1);
  o->state = state;
  Waiter *w = o->waiters;
  o->waiters = NULL;
  for (Waiter *n; w; w = n) {
    n = w->next;
    if (w->group) {
      Obj *g = w->group;
      group_token_ready(g, o);
      drop(g, 1);
    } else {
      enqueue(w->hdl, w->resume, o->id, NULL);
    }
    af_free(w);
  }
  drop(o, 1);
}

static void await_then(Obj *o, void *hdl, Resume resume, int is_group) {
  if (o->state != S_PENDING) {
    enqueue(hdl, resume, is_group ? -1 : o->id, is_group ? o : NULL);
    return;
  }
  Waiter *w = af_calloc(1, sizeof *w);
  if (w == NULL) { /* cannot wait for it: run it when the scheduler next runs tasks */
    enqueue(hdl, resume, -1, NULL);
    return;
  }
  w->hdl = hdl;
  w->resume = resume;
  w->next = o->waiters;
  o->waiters = w;
}

static void await_blocking(Obj *o, int is_group) {
  run_until(o);
  if (o->state == S_PENDING) {
    rt__rt_async_error(RT_DETAIL_ASYNC_STUCK);
    return;
  }
  if (is_group)
    acquire(-1, o);
  else
    acquire(o->id, NULL);
}

void mlirAsyncRuntimeAddRef(void *p, int64_t n) {
  ((Obj *)p)->refs += n;
}
void mlirAsyncRuntimeDropRef(void *p, int64_t n) {
  drop((Obj *)p, n);
}
void *mlirAsyncRuntimeCreateToken(void) {
  return obj_new(K_TOKEN, 2, 0);
}
void *mlirAsyncRuntimeCreateValue(int64_t size) {
  return obj_new(K_VALUE, 2, size > 0 ? (size_t)size : 1);
}
void *mlirAsyncRuntimeCreateGroup(int64_t size) {
  (void)size;
  Obj *g = obj_new(K_GROUP, 1, 0);
  if (g)
    g->state = S_READY; /* an empty group is ready */
  return g;
}
int64_t mlirAsyncRuntimeAddTokenToGroup(void *tok, void *group) {
  Obj *t = tok, *g = group;
  int64_t rank = g->rank++;
  if (af_grow((void **)&g->members, &g->capmembers, g->nmembers + 1, sizeof(int)) == 0)
    g->members[g->nmembers++] = t->id;
  g->pending++;
  g->state = S_PENDING;
  if (t->state != S_PENDING) {
    group_token_ready(g, t);
  } else {
    Waiter *w = af_calloc(1, sizeof *w);
    if (w) {
      w->group = g;
      g->refs++; /* alive until the token is ready */
      w->next = t->waiters;
      t->waiters = w;
    }
  }
  return rank;
}
void mlirAsyncRuntimeEmplaceToken(void *tok) {
  emplace(tok, S_READY);
}
void mlirAsyncRuntimeEmplaceValue(void *v) {
  emplace(v, S_READY);
}
void mlirAsyncRuntimeSetTokenError(void *tok) {
  emplace(tok, S_ERROR);
}
void mlirAsyncRuntimeSetValueError(void *v) {
  emplace(v, S_ERROR);
}
bool mlirAsyncRuntimeIsTokenError(void *tok) {
  return ((Obj *)tok)->state == S_ERROR;
}
bool mlirAsyncRuntimeIsValueError(void *v) {
  return ((Obj *)v)->state == S_ERROR;
}
bool mlirAsyncRuntimeIsGroupError(void *g) {
  return ((Obj *)g)->errors > 0;
}
void mlirAsyncRuntimeAwaitToken(void *tok) {
  await_blocking(tok, 0);
}
void mlirAsyncRuntimeAwaitValue(void *v) {
  await_blocking(v, 0);
}
void mlirAsyncRuntimeAwaitAllInGroup(void *g) {
  await_blocking(g, 1);
}
void *mlirAsyncRuntimeGetValueStorage(void *v) {
  return ((Obj *)v)->storage;
}
void mlirAsyncRuntimeExecute(void *hdl, Resume resume) {
  int id = A.next_obj++; /* the task: released at spawn, acquired when it first runs */
  asyncfuzz_rt_note(RT_NOTE_RELEASE, id, -1);
  enqueue(hdl, resume, id, NULL);
}
void mlirAsyncRuntimeAwaitTokenAndExecute(void *tok, void *hdl, Resume resume) {
  await_then(tok, hdl, resume, 0);
}
void mlirAsyncRuntimeAwaitValueAndExecute(void *v, void *hdl, Resume resume) {
  await_then(v, hdl, resume, 0);
}
void mlirAsyncRuntimeAwaitAllInGroupAndExecute(void *g, void *hdl, Resume resume) {
  await_then(g, hdl, resume, 1);
}
int64_t mlirAsyncRuntimGetNumWorkerThreads(void) {
  return 1;
}
void mlirAsyncRuntimePrintCurrentThreadId(void) {}

static int quiesce(void) {
  int ran = 0;
  while (A.qlen > 0) {
    run_one();
    ran++;
  }
  return ran;
}

static void reset(void) {
  af_free(A.q);
  af_free(A.coros);
  af_free(A.tids);
  memset(&A, 0, sizeof A);
}

__attribute__((constructor)) static void register_async(void) {
  rt__rt_set_async(quiesce, reset);
}
