/*
 * rt_sched.c: the sim's device: per-stream work queues, kernel start and finish steps,
 * waits on events, and the schedule policies (eager, lazy, random, pct) that pick the steps.
 */
#include "rt_sim_int.h"

#include <string.h>

/* ---- device model ---- */

static void head_changed(Rt *rt, int s);
static void wake(Rt *rt, int t);

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

/* phase: EXEC_START (a kernel wrote its sentinels) or EXEC_DONE */
enum { EXEC_START = 1, EXEC_DONE = 2 };

static void exec_rec(Rt *rt, int s, Work *w, int phase, int err, int detail) {
  if (!rt->cfg.record_device && err == RT_ERR_OK)
    return;
  int save = rt__t_tid;
  rt__t_tid = -1;
  RtRec *r = rt__rec_new(rt, RT_CALL_EXEC);
  rt__t_tid = save;
  if (r == NULL)
    return;
  r->cause = w->call;
  r->op = w->call < (uint32_t)rt->ntrace ? rt->trace[w->call].op : -1;
  rt__rec_arg(r, RT_REF(RT_REF_STREAM, s, 0));
  rt__rec_arg(r, rt__ref_int(w->call));
  rt__rec_arg(r, rt__ref_int((uint64_t)phase));
  if (err)
    rt__rec_fail(rt, r, err, detail);
}

/* A program's kernel (rt_prog.c): its body is not run. Started, it reads what it loads (a hash
 * of those bytes) and writes KERNEL_SENTINEL over what it stores to; finished, it writes words
 * mixed from what it read, so that what a consumer sees depends on the order, as on a GPU.
 * Returns 1 when it stays at the head. */
static int foreign_step(Rt *rt, int s, Work *w) {
  for (int i = 0; i < w->nfx; i++)
    if (rt__freed_alloc(rt, rt->fx[w->fx + i].p, rt->fx[w->fx + i].bytes) >= 0) {
      exec_rec(rt, s, w, EXEC_DONE, RT_ERR_ILLEGAL_ADDRESS, RT_DETAIL_USE_AFTER_FREE);
      return 0;
    }
  for (int i = 0; i < w->nfx; i++) {
    const KernelFx *f = &rt->fx[w->fx + i];
    if (w->phase == 0 && (f->access & KERNEL_READ)) {
      uint64_t h = w->mix ? w->mix : 1469598103934665603ull ^ (uint64_t)w->kernel;
      for (size_t b = 0; b < f->bytes; b++)
        h = (h ^ (uint8_t)f->p[b]) * 1099511628211ull;
      w->mix = h;
    }
  }
  for (int i = 0; i < w->nfx; i++) {
    const KernelFx *f = &rt->fx[w->fx + i];
    for (size_t b = 0; (f->access & KERNEL_WRITE) && b + 4 <= f->bytes; b += 4) {
      uint64_t x = (w->mix + b) * 0x9E3779B97F4A7C15ull;
      int32_t word = w->phase == 0 ? KERNEL_SENTINEL : (int32_t)(uint32_t)(x >> 40);
      memcpy(f->p + b, &word, 4);
    }
  }
  exec_rec(rt, s, w, w->phase == 0 ? EXEC_START : EXEC_DONE, 0, 0);
  return w->phase++ == 0;
}

/* A step of one of asyncfuzz's kernels: started, it writes its sentinel over its output; finished,
 * its result (kernel_ref_strided; a staged one's threads given no slot of dynamic shared memory,
 * KERNEL_SMEM_SHORT), in elements of its type. Returns 1 when it stays at the head. */
static int kernel_step(Rt *rt, int s, Work *w) {
  if (w->kernel >= KERNEL__IDS)
    return foreign_step(rt, s, w);
  int e = kernel_info(w->kernel)->elem, bad = -1;
  size_t es = (size_t)kernel_elem_bytes(e);
  for (int b = 0; b < w->nbufs && bad < 0; b++)
    bad = rt__freed_alloc(rt, w->bufs[b],
                          w->n > 0 ? ((size_t)(w->n - 1) * (size_t)w->stride[b] + 1) * es : 0);
  if (bad >= 0) {
    exec_rec(rt, s, w, EXEC_DONE, RT_ERR_ILLEGAL_ADDRESS, RT_DETAIL_USE_AFTER_FREE);
    return 0;
  }
  if (w->phase == 0) {
    for (int64_t i = 0; i < w->n; i++)
      kernel_lane_store(e, KERNEL_SENTINEL, w->bufs[0] + i * w->stride[0] * (int64_t)es);
    w->phase = 1;
    exec_rec(rt, s, w, EXEC_START, 0, 0);
    return 1;
  }
  const void *src[KERNEL_MAX_BUFS];
  for (int b = 1; b < w->nbufs; b++)
    src[b - 1] = w->bufs[b];
  kernel_ref_strided(w->kernel, w->bufs[0], src, w->stride, w->n, w->v);
  kernel_smem_short(w->kernel, w->bufs[0], w->stride[0], w->n, w->threads, w->smem);
  exec_rec(rt, s, w, EXEC_DONE, 0, 0);
  return 0;
}

/* Runs one step of the head item of stream s (which must be runnable). */
static void step(Rt *rt, int s) {
  Stream *st = &rt->streams[s];
  Work *w = &st->q[st->qhead];
  rt->steps++;
  int bad = -1;
  switch (w->kind) {
  case W_KERNEL:
    if (kernel_step(rt, s, w))
      return; /* stays at the head */
    break;
  case W_MEMCPY:
    bad = rt__freed_alloc(rt, w->dst, w->bytes);
    if (bad < 0)
      bad = rt__freed_alloc(rt, w->src, w->bytes);
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
    if (rt__freed_alloc(rt, w->dst, w->count * esz) >= 0) {
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
  head_changed(rt, s);
  if (st->blk_first)
    wake(rt, s);
}

/* ---- what can run ---- */

/* rt->runbits has a bit for each stream whose head item can run now: it came to the head of its
 * queue, and it is not a wait on work not yet done. A case makes many streams and few have work
 * at once, and fewer can run; the scheduler picks from the bits, where it tested every stream
 * with work at every pick (its cost per step grew with the case). A wait that cannot run yet is
 * on the list of the stream it waits on, which wakes it when it completes enough items. */
static void run_set(Rt *rt, int s, int on) {
  uint64_t bit = 1ull << (s & 63), *w = &rt->runbits[s >> 6];
  if (!(*w & bit) == !on)
    return;
  *w ^= bit;
  rt->nrun += on ? 1 : -1;
}

static void head_changed(Rt *rt, int s) {
  Stream *st = &rt->streams[s];
  if (st->qlen == 0) {
    run_set(rt, s, 0);
    return;
  }
  Work *w = &st->q[st->qhead];
  if (w->kind == W_WAIT && !event_complete(rt, w->wait_stream, w->wait_seq)) {
    Stream *t = &rt->streams[w->wait_stream];
    st->blk_next = t->blk_first;
    t->blk_first = s + 1;
    run_set(rt, s, 0);
  } else {
    run_set(rt, s, 1);
  }
}

/* Stream t completed an item: the waits on it that it now satisfies can run. */
static void wake(Rt *rt, int t) {
  int *link = &rt->streams[t].blk_first;
  while (*link) {
    int s = *link - 1;
    Stream *st = &rt->streams[s];
    if (event_complete(rt, t, st->q[st->qhead].wait_seq)) {
      *link = st->blk_next;
      st->blk_next = 0;
      run_set(rt, s, 1);
    } else {
      link = &st->blk_next;
    }
  }
}

void rt__sched_reset(Rt *rt) {
  if (rt->caprun > 0)
    memset(rt->runbits, 0, sizeof(uint64_t) * (size_t)rt->caprun);
  rt->nrun = 0;
}

/* Set bits of w. (__builtin_popcountll is a libgcc call on the x86-64 baseline, which has no
 * popcnt instruction: 3.7 times as many of its instructions per op at 1024 ops as at 256.) */
static inline uint32_t popcount64(uint64_t w) {
  w -= (w >> 1) & 0x5555555555555555ull;
  w = (w & 0x3333333333333333ull) + ((w >> 2) & 0x3333333333333333ull);
  w = (w + (w >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return (uint32_t)((w * 0x0101010101010101ull) >> 56);
}

/* The k-th (from 0) stream that can run, in index order. Most words are empty (a case at 1024
 * ops makes some 400 to 500 streams, few of which can run at once): they cost a test each. */
static int nth_runnable(Rt *rt, uint32_t k) {
  for (int i = 0; i < (rt->nstreams + 63) / 64; i++) {
    uint64_t w = rt->runbits[i];
    if (w == 0)
      continue;
    uint32_t c = popcount64(w);
    if (k < c) {
      while (k--)
        w &= w - 1;
      return i * 64 + __builtin_ctzll(w);
    }
    k -= c;
  }
  return -1; /* (not reached: k < rt->nrun) */
}

/* Picks a stream that can run as the policy wants; -1 when none. */
static int pick(Rt *rt) {
  if (rt->nrun == 0)
    return -1;
  int s;
  switch (rt->cfg.policy) {
  case RT_RANDOM:
    s = nth_runnable(rt, af_rng_below(&rt->rng, (uint32_t)rt->nrun));
    break;
  case RT_PCT:
    s = -1;
    for (int i = 0; i < (rt->nstreams + 63) / 64; i++)
      for (uint64_t w = rt->runbits[i]; w; w &= w - 1) {
        int c = i * 64 + __builtin_ctzll(w);
        if (s < 0 || rt->streams[c].prio > rt->streams[s].prio)
          s = c;
      }
    for (int i = 0; i < rt->nchange; i++)
      if (rt->change_points[i] == rt->steps)
        rt->streams[s].prio = (uint32_t)i; /* demote below every initial priority */
    break;
  default:
    s = nth_runnable(rt, 0);
    break;
  }
  return s;
}

void rt__drain(Rt *rt) {
  int s;
  if (rt->dev)
    return; /* the hardware runs its own queues */
  while ((s = pick(rt)) >= 0)
    step(rt, s);
}

/* Runs device steps until stream s has completed `seq` items. */
void rt__run_until(Rt *rt, int s, uint64_t seq) {
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
void rt__pump(Rt *rt) {
  if (rt->dev) {
    rt->dev->enter();
    return;
  }
  switch (rt->cfg.policy) {
  case RT_EAGER:
    rt__drain(rt);
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

static Work *push(Rt *rt, int s, int kind, uint32_t call);

/* A wait item on stream s for the first seq items of stream t; its head judged (a wait waits on
 * work enqueued before it, so a wait of s on s runs when it comes to the head). */
static Work *push_wait(Rt *rt, int s, int t, uint64_t seq, uint32_t call) {
  Work *w = push(rt, s, W_WAIT, call);
  if (w == NULL)
    return NULL;
  w->wait_stream = t;
  w->wait_seq = seq;
  if (rt->streams[s].qlen == 1)
    head_changed(rt, s);
  return w;
}

/* A wait item on stream s for everything enqueued on stream t so far, unless it is done. */
static int wait_for(Rt *rt, int s, int t, uint32_t call) {
  if (rt->streams[t].done >= rt->streams[t].enq)
    return 0;
  return push_wait(rt, s, t, rt->streams[t].enq, call) ? 0 : -1;
}

int rt__legacy_order(Rt *rt, int s, uint32_t call) {
  if (rt->cfg.abi != RT_ABI_ROCM)
    return 0;
  if (s != 0)
    return wait_for(rt, s, 0, call);
  for (int t = 1; t < rt->nstreams; t++)
    if (wait_for(rt, 0, t, call))
      return -1;
  return 0;
}

Work *rt__enqueue(Rt *rt, int s, int kind, uint32_t call) {
  return rt__legacy_order(rt, s, call) ? NULL : push(rt, s, kind, call);
}

Work *rt__enqueue_wait(Rt *rt, int s, int t, uint64_t seq, uint32_t call) {
  return rt__legacy_order(rt, s, call) ? NULL : push_wait(rt, s, t, seq, call);
}

static Work *push(Rt *rt, int s, int kind, uint32_t call) {
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
  if (st->qlen == 1 && kind != W_WAIT)
    run_set(rt, s, 1); /* (push_wait judges a wait's head once it knows what it waits on) */
  return w;
}

int rt__new_stream(Rt *rt) {
  int words = rt->nstreams / 64 + 1, had = rt->caprun;
  if (af_grow((void **)&rt->streams, &rt->capstreams, rt->nstreams + 1, sizeof(Stream)) ||
      (words > had && af_grow((void **)&rt->runbits, &rt->caprun, words, sizeof(uint64_t)))) {
    rt->oom = 1;
    return -1;
  }
  if (rt->caprun > had) /* (bits of streams not made yet are clear) */
    memset(rt->runbits + had, 0, sizeof(uint64_t) * (size_t)(rt->caprun - had));
  Stream *st = &rt->streams[rt->nstreams];
  Work *q = NULL; /* an earlier run's queue memory, kept: no allocation per stream and run */
  int qcap = 0;
  if (rt->nstreams < rt->hwstreams) {
    q = st->q;
    qcap = st->qcap;
  } else {
    rt->hwstreams = rt->nstreams + 1;
  }
  memset(st, 0, sizeof *st);
  st->q = q;
  st->qcap = qcap;
  st->prio = (uint32_t)(16 + af_rng_below(&rt->rng, 1u << 20));
  return rt->nstreams++;
}
