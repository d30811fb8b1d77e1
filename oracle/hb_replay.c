/*
 * hb_replay.c: the checker's replay of a trace, record by record (hb.h), in one file so that
 * its inner loop stays inlined:
 *  - shadow memory: per buffer, a list of byte segments, each with its last write and the
 *    latest read of each agent since (FastTrack-style epochs; the segments a write covers
 *    become one); an access against them reports races, host reads and writes of memory in
 *    use, uses before allocation and after free; a free reports what was still in use;
 *  - what each runtime call does to the clocks: enqueues, streams and events, memory
 *    (allocations, frees, the accesses of copies, sets, kernels and the host), async.execute
 *    regions and async values, and calls the runtime refused;
 *  - the reports (a repeat of a recent pair dropped), the leaks at the end, and what each case
 *    op knew (HbOptions.nops).
 */
#include "hb_int.h"

#include "../kernels/kernels.h"

#include <stddef.h>
#include <stdlib.h>

/* ---- reports ---- */

static int32_t report_agent(const H *h, int agent) {
  return agent < h->nthreads ? agent : -1 - (agent - h->nthreads);
}

static void report(H *h, int kind, int sub, int32_t seq1, int32_t seq2, RtRef buf, uint32_t lo,
                   uint32_t hi, int a1, int a2) {
  HbResult *res = h->res;
  for (int i = res->nreports - 1; i >= 0 && i >= res->nreports - 16; i--) {
    const HbReport *p = &res->reports[i];
    if (p->kind == kind && p->seq1 == seq1 && p->seq2 == seq2)
      return; /* the same pair seen through another segment */
  }
  int max = h->opt.max_reports > 0 ? h->opt.max_reports : 64;
  if (res->nreports >= max) {
    res->truncated = 1;
    return;
  }
  if (af_grow((void **)&res->reports, &h->capreports, res->nreports + 1, sizeof(HbReport))) {
    h->oom = 1;
    return;
  }
  HbReport *r = &res->reports[res->nreports++];
  r->kind = kind;
  r->subkind = sub;
  r->seq1 = seq1;
  r->seq2 = seq2;
  r->op1 = seq1 >= 0 && seq1 < h->n ? h->t[seq1].op : -1;
  r->op2 = seq2 >= 0 && seq2 < h->n ? h->t[seq2].op : -1;
  r->buf = buf;
  r->lo = lo;
  r->hi = hi;
  r->agent1 = a1 >= 0 ? report_agent(h, a1) : HB_NO_AGENT;
  r->agent2 = a2 >= 0 ? report_agent(h, a2) : HB_NO_AGENT;
  if (hb__is_error(kind))
    res->nerrors++;
}

/* At the end of the run: the streams, events and buffers never destroyed or freed. */
static void report_leaks(H *h) {
  for (int s = 1; s < h->nstreams; s++)
    if (h->s_created[s] && !h->s_destroyed[s])
      report(h, HB_LEAK_STREAM, HB_SUB_NONE, -1, h->s_seq[s], RT_REF(RT_REF_STREAM, s, 0), 0, 0, -1,
             -1);
  for (int e = 0; e < h->nevents; e++)
    if (h->e_created[e] && !h->e_destroyed[e])
      report(h, HB_LEAK_EVENT, HB_SUB_NONE, -1, h->e_seq[e], RT_REF(RT_REF_EVENT, e, 0), 0, 0, -1,
             -1);
  for (int b = 0; b < h->ndev; b++)
    if (h->dev[b].known && !h->dev[b].freed)
      report(h, HB_LEAK_BUFFER, HB_SUB_NONE, -1, h->dev[b].alloc.seq, RT_REF(RT_REF_BUF, b, 0), 0,
             h->dev[b].size, -1, h->dev[b].alloc.agent);
}

/* ---- the check's memory ---- */

/* The chunk header, padded so that what follows is aligned as malloc aligns. */
typedef union Chunk {
  union Chunk *next;
  max_align_t align;
} Chunk;

void *hb__arena(H *h, size_t n) {
  n = (n + sizeof(Chunk) - 1) / sizeof(Chunk) * sizeof(Chunk);
  if (n > h->ar_left) {
    size_t cap = n > 16384 ? n : 16384;
    Chunk *c = af_malloc(sizeof(Chunk) + cap);
    if (c == NULL) {
      h->oom = 1;
      return NULL;
    }
    c->next = h->chunks;
    h->chunks = c;
    h->ar_next = (char *)(c + 1);
    h->ar_left = cap;
  }
  void *p = h->ar_next;
  h->ar_next += n;
  h->ar_left -= n;
  return p;
}

void hb__arena_free(H *h) {
  while (h->chunks) {
    Chunk *c = h->chunks;
    h->chunks = c->next;
    af_free(c);
  }
}

/* af_grow from the arena: the array doubles; the old one stays until the check ends. */
static int grow(H *h, void **arr, int *cap, int need, size_t esz) {
  if (need <= *cap)
    return 0;
  int ncap = *cap ? *cap : 4;
  while (ncap < need)
    ncap *= 2;
  void *p = hb__arena(h, (size_t)ncap * esz);
  if (p == NULL)
    return AF_ENOMEM;
  if (*cap)
    memcpy(p, *arr, (size_t)*cap * esz);
  *arr = p;
  *cap = ncap;
  return 0;
}

/* ---- shadow memory ---- */

static Buf *grow_bufs(H *h, Buf **arr, int *n, int id) {
  if (id < 0 || id > (1 << 20))
    return NULL;
  if (id >= *n) {
    int old = *n;
    if (grow(h, (void **)arr, n, id + 1, sizeof(Buf))) {
      h->oom = 1;
      return NULL;
    }
    memset(*arr + old, 0, sizeof(Buf) * (size_t)(*n - old));
  }
  return &(*arr)[id];
}

static HB__INLINE Buf *buf_of(H *h, RtRef r, int create) {
  int k = RT_REF_KIND(r), id = RT_REF_ID(r);
  Buf *b = NULL;
  /* (a known buffer inline; grow_bufs only to make one) */
  if (k == RT_REF_BUF)
    b = id < h->ndev ? &h->dev[id] : create ? grow_bufs(h, &h->dev, &h->ndev, id) : NULL;
  else if (k == RT_REF_HOST && (id & 0x800000))
    b = (id & 0x7FFFFF) < h->nreg ? &h->reg[id & 0x7FFFFF]
        : create                  ? grow_bufs(h, &h->reg, &h->nreg, id & 0x7FFFFF)
                                  : NULL;
  else if (k == RT_REF_HOST)
    b = id < h->nhost ? &h->host[id] : create ? grow_bufs(h, &h->host, &h->nhost, id) : NULL;
  return b && (b->known || create) ? b : NULL;
}

static void buf_reset(H *h, Buf *b, uint32_t size, int device, Epoch alloc) {
  b->known = 1;
  b->device = device;
  b->freed = 0;
  b->alloc = alloc;
  b->size = size;
  b->nseg = 0;
  if (grow(h, (void **)&b->seg, &b->capseg, 1, sizeof(Seg))) {
    h->oom = 1;
    return;
  }
  memset(&b->seg[0], 0, sizeof(Seg));
  b->seg[0].lo = 0;
  b->seg[0].hi = size ? size : 1;
  b->nseg = 1;
}

/* Splits the segment `at` falls inside so that `at` is a boundary. Returns the index of the
 * first segment from `at` on (b->nseg: none). The segments are sorted and contiguous; the scan
 * starts at segment `from`, which starts at or before `at`. */
static HB__INLINE int split(H *h, Buf *b, uint32_t at, int from) {
  for (int i = from; i < b->nseg; i++) {
    Seg *s = &b->seg[i];
    if (at >= s->hi)
      continue;
    if (at <= s->lo)
      return i;
    if (grow(h, (void **)&b->seg, &b->capseg, b->nseg + 1, sizeof(Seg))) {
      h->oom = 1;
      return i + 1;
    }
    s = &b->seg[i];
    memmove(&b->seg[i + 2], &b->seg[i + 1], sizeof(Seg) * (size_t)(b->nseg - i - 1));
    Seg *t = &b->seg[i + 1];
    *t = *s;
    t->lo = at;
    s->hi = at;
    t->r = NULL;
    t->capr = 0;
    t->nr = 0;
    if (s->nr && grow(h, (void **)&t->r, &t->capr, s->nr, sizeof(Epoch)) == 0) {
      memcpy(t->r, s->r, sizeof(Epoch) * (size_t)s->nr);
      t->nr = s->nr;
    } else if (s->nr) {
      h->oom = 1;
    }
    b->nseg++;
    return i + 1;
  }
  return b->nseg;
}

/* One access by agent a (its row's clock) to [lo, hi) of buffer ref. The scan for lo starts at
 * segment `from`, which starts at or before lo (0: the buffer's first). Returns the index of the
 * first segment from hi on (from, when the access did nothing): a next access from hi on starts
 * there, so that a view's elements, one access each, are found in one pass over the buffer. */
static HB__INLINE int access_from(H *h, int a, RtRef ref, uint32_t lo, uint32_t hi, int write,
                                  int32_t seq, int from) {
  Buf *b = buf_of(h, ref, 0);
  if (b == NULL || hi <= lo)
    return from;
  Epoch x = {a, hb__own(h, a), seq, h->t[seq].op};
  RtRef bref = RT_REF(RT_REF_KIND(ref), RT_REF_ID(ref), 0);
  if (b->freed) {
    report(h, HB_USE_AFTER_FREE, HB_SUB_NONE, b->free_seq, seq, bref, lo, hi, -1, a);
    return from;
  }
  if (b->device && !hb__before(h, &b->alloc, a))
    report(h, HB_USE_BEFORE_ALLOC, HB_SUB_NONE, b->alloc.seq, seq, bref, lo, hi, b->alloc.agent, a);
  if (hi > b->size)
    hi = b->size;
  int first = split(h, b, lo, from), end = split(h, b, hi, first);
  int host = !hb__is_stream(h, a);
  for (int i = first; i < end; i++) { /* the segments of [lo, hi) */
    Seg *s = &b->seg[i];
    if (s->has_w && s->w.agent != a && !hb__before(h, &s->w, a)) {
      int kind = HB_DATA_RACE, sub = write ? HB_SUB_WAW : HB_SUB_RAW;
      if (host && hb__is_stream(h, s->w.agent)) {
        kind = write ? HB_HOST_WRITE_WHILE_IN_USE : HB_HOST_READ_BEFORE_COMPLETE;
        sub = HB_SUB_NONE;
      }
      report(h, kind, sub, s->w.seq, seq, bref, s->lo, s->hi, s->w.agent, a);
    }
    if (write) {
      for (int k = 0; k < s->nr; k++) {
        const Epoch *r = &s->r[k];
        if (r->agent != a && !hb__before(h, r, a)) {
          int kind = host && hb__is_stream(h, r->agent) ? HB_HOST_WRITE_WHILE_IN_USE : HB_DATA_RACE;
          report(h, kind, kind == HB_DATA_RACE ? HB_SUB_WAR : HB_SUB_NONE, r->seq, seq, bref, s->lo,
                 s->hi, r->agent, a);
        }
      }
      s->has_w = 1;
      s->w = x;
      s->nr = 0;
    } else {
      int k = 0;
      while (k < s->nr && s->r[k].agent != a)
        k++;
      if (k == s->nr) {
        if (grow(h, (void **)&s->r, &s->capr, s->nr + 1, sizeof(Epoch))) {
          h->oom = 1;
          return 0;
        }
        s->nr++;
      }
      s->r[k] = x;
    }
  }
  /* After a write, the segments of [lo, hi) are alike (this write, no reads): one segment again.
   * Without this a buffer keeps every boundary any access ever made (6 segments per access at
   * 256 ops). A report names the byte range of the segment it was found on: now the whole range
   * of the last write there (less what later accesses cut off), where before it was whatever
   * piece older accesses had left. */
  if (write && end - first > 1) {
    b->seg[first].hi = b->seg[end - 1].hi;
    memmove(&b->seg[first + 1], &b->seg[end], sizeof(Seg) * (size_t)(b->nseg - end));
    b->nseg -= end - first - 1;
    return first + 1;
  }
  return end;
}

static HB__INLINE void access(H *h, int a, RtRef ref, uint32_t lo, uint32_t hi, int write,
                              int32_t seq) {
  (void)access_from(h, a, ref, lo, hi, write, seq, 0);
}

static void free_buf(H *h, int a, const RtRec *r) {
  Buf *b = buf_of(h, r->args[0], 0);
  if (b == NULL)
    return;
  if (h->opt.lenient_free)
    for (int s = 0; s < h->nstreams; s++)
      hb__join_rows(h, a, h->nthreads + s);
  RtRef bref = RT_REF(RT_REF_KIND(r->args[0]), RT_REF_ID(r->args[0]), 0);
  for (int i = 0; i < b->nseg; i++) {
    const Seg *s = &b->seg[i];
    if (s->has_w && s->w.agent != a && !hb__before(h, &s->w, a))
      report(h, HB_FREE_WHILE_IN_USE, HB_SUB_NONE, s->w.seq, (int32_t)r->seq, bref, s->lo, s->hi,
             s->w.agent, a);
    for (int k = 0; k < s->nr; k++)
      if (s->r[k].agent != a && !hb__before(h, &s->r[k], a))
        report(h, HB_FREE_WHILE_IN_USE, HB_SUB_NONE, s->r[k].seq, (int32_t)r->seq, bref, s->lo,
               s->hi, s->r[k].agent, a);
  }
  b->freed = 1;
  b->free_seq = (int32_t)r->seq;
}

/* ---- calls ---- */

/* Host thread t enqueues on stream agent sa: the stream's clock takes in the thread's (and
 * with legacy_sync, the legacy stream's or the created streams'). */
static HB__INLINE void enqueue(H *h, int t, int sa) {
  if (h->opt.legacy_sync) {
    int legacy = h->nthreads;
    if (sa == legacy) {
      for (int s = 1; s < h->nstreams; s++)
        if (h->s_created[s])
          hb__join_rows(h, legacy, legacy + s);
    } else if (h->s_created[sa - legacy]) {
      hb__join_rows(h, sa, legacy);
    }
  }
  uint32_t *jv = &h->jver[(size_t)(sa - h->nthreads) * (size_t)h->nthreads + (size_t)t];
  if (*jv == h->ver[t] + 1) { /* nothing new but t's own clock */
    uint32_t c = hb__own(h, t);
    if (c > hb__get(hb__row(h, sa), h->hi[sa], t))
      hb__set(hb__row(h, sa), &h->hi[sa], t, c);
  } else {
    hb__join_rows(h, sa, t);
    *jv = h->ver[t] + 1; /* + 1: 0 means never joined */
  }
  hb__tick(h, sa);
  h->act = sa;
}

static int thread_agent(const H *h, int tid) {
  return tid >= 0 && tid < h->nthreads ? tid : 0;
}

/* Byte range of a pointer reference of `bytes` bytes. */
static void range_of(RtRef r, uint64_t bytes, uint32_t *lo, uint32_t *hi) {
  *lo = RT_REF_VAL(r);
  uint64_t end = (uint64_t)*lo + bytes;
  *hi = end > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)end;
}

static uint64_t ref_u64(RtRef r) {
  return ((uint64_t)RT_REF_ID(r) << 32) | RT_REF_VAL(r);
}

/* Bytes per element of a host_init or observe record: its fourth argument when typed, else 4. */
static uint32_t elem_bytes(const RtRec *r) {
  return r->nargs > 3 ? (uint32_t)ref_u64(r->args[3]) : 4;
}

static int32_t destroy_seq_of(const H *h, RtRef ref) {
  int id = RT_REF_ID(ref);
  if (RT_REF_KIND(ref) == RT_REF_STREAM && id < h->nstreams)
    return h->s_dseq[id];
  if (RT_REF_KIND(ref) == RT_REF_EVENT && id < h->nevents)
    return h->e_dseq[id];
  return -1;
}

/* A call the runtime refused: it had no effect; report what kind of misuse it was. */
static void refused(H *h, int a, const RtRec *r) {
  RtRef handle = r->nargs ? r->args[0] : 0;
  for (int i = 0; i < r->nargs; i++) {
    int k = RT_REF_KIND(r->args[i]);
    if (k == RT_REF_STREAM || k == RT_REF_EVENT || k == RT_REF_BAD || k == RT_REF_NULL) {
      if (r->detail == RT_DETAIL_DESTROYED && destroy_seq_of(h, r->args[i]) < 0)
        continue;
      handle = r->args[i];
      if (r->detail != RT_DETAIL_WRONG_KIND || k != RT_REF_NULL)
        break;
    }
  }
  switch (r->detail) {
  case RT_DETAIL_WRONG_KIND:
    report(h, HB_INVALID_HANDLE, HB_SUB_WRONG_KIND, -1, (int32_t)r->seq, handle, 0, 0, -1, a);
    break;
  case RT_DETAIL_NOT_A_HANDLE:
  case RT_DETAIL_NULL_HANDLE:
    report(h, HB_INVALID_HANDLE, HB_SUB_NONE, -1, (int32_t)r->seq, handle, 0, 0, -1, a);
    break;
  case RT_DETAIL_DESTROYED:
    report(h, HB_USE_OF_DESTROYED_HANDLE, HB_SUB_NONE, destroy_seq_of(h, handle), (int32_t)r->seq,
           handle, 0, 0, -1, a);
    break;
  case RT_DETAIL_DOUBLE_FREE: {
    Buf *b = buf_of(h, r->args[0], 0);
    report(h, HB_DOUBLE_FREE, HB_SUB_NONE, b ? b->free_seq : -1, (int32_t)r->seq, r->args[0], 0, 0,
           -1, a);
    break;
  }
  case RT_DETAIL_INVALID_FREE:
    report(h, HB_INVALID_FREE, HB_SUB_NONE, -1, (int32_t)r->seq, r->args[0], 0, 0, -1, a);
    break;
  default:
    break; /* bad arguments etc.: runtime errors, not ordering facts */
  }
}

/* A region's spawn or yield clock: agent a's. */
static void region_clock(H *h, uint32_t *rows, uint32_t *his, int region, int a) {
  if (region >= 0 && region < h->nregions)
    hb__ccopy(rows + (size_t)region * (size_t)h->A, &his[region], hb__row(h, a), h->hi[a]);
}

/* A new row for an event's snapshot (hb_int.h); -1 when out of memory. */
static HB__COLD int new_slot(H *h) {
  if (grow(h, (void **)&h->snap, &h->capsnap, h->nslots + 1, sizeof(uint32_t) * (size_t)h->A)) {
    h->oom = 1;
    return -1;
  }
  return h->nslots++;
}

/* A slot for an event's snapshot: one a destroy gave back, else a new row. */
static HB__INLINE int take_slot(H *h) {
  return h->nfree ? h->free_slot[--h->nfree] : new_slot(h);
}

/* A wait or synchronize (record 0), or a record (record 1), on event e while it holds no
 * snapshot slot. Destroyed: a use the runtime let through (raw handles: the driver took it),
 * reported as the runtime reports one it refuses, without effect (the slot may hold another
 * event's snapshot by now); returns 1. Else 0: a wait on a never-recorded event is a warning (it
 * orders nothing), and a record goes on to take a slot. */
static HB__COLD int no_snapshot(H *h, int a, int e, RtRef ref, int32_t seq, int record) {
  if (e < h->nevents && h->e_destroyed[e]) {
    report(h, HB_USE_OF_DESTROYED_HANDLE, HB_SUB_NONE, h->e_dseq[e], seq, ref, 0, 0, -1, a);
    return 1;
  }
  if (!record)
    report(h, HB_WAIT_ON_UNRECORDED_EVENT, HB_SUB_NONE, -1, seq, ref, 0, 0, -1, a);
  return 0;
}

/* Streams and events: creation, destruction, waits and records. */
static HB__INLINE void step_streams(H *h, int a, const RtRec *r, int call) {
  int seq = (int)r->seq;
  switch (call) {
  case RT_CALL_STREAM_CREATE:
    if (RT_REF_KIND(r->ret) == RT_REF_STREAM) {
      int s = RT_REF_ID(r->ret);
      if (s < h->nstreams) {
        h->s_created[s] = 1;
        h->s_seq[s] = seq;
        hb__join_rows(h, h->nthreads + s, a);
        /* the stream has all of a's clock now: a's first enqueue on it needs no full join */
        h->jver[(size_t)s * (size_t)h->nthreads + (size_t)a] = h->ver[a] + 1;
      }
    }
    break;
  case RT_CALL_STREAM_DESTROY:
    if (RT_REF_ID(r->args[0]) < h->nstreams) {
      h->s_destroyed[RT_REF_ID(r->args[0])] = 1;
      h->s_dseq[RT_REF_ID(r->args[0])] = seq;
    }
    break;
  case RT_CALL_STREAM_SYNCHRONIZE:
    hb__join_rows(h, a, hb__stream_agent(h, r->args[0]));
    break;
  case RT_CALL_STREAM_WAIT_EVENT: {
    int sa = hb__stream_agent(h, r->args[0]);
    int e = RT_REF_ID(r->args[1]);
    enqueue(h, a, sa);
    int sl = e < h->nevents ? h->e_slot[e] : -1; /* (a slot: recorded and not destroyed) */
    if (sl >= 0)
      hb__join_into(h, sa, h->snap + (size_t)sl * (size_t)h->A, h->snap_hi[sl]);
    else
      (void)no_snapshot(h, a, e, r->args[1], seq, 0);
    break;
  }
  case RT_CALL_EVENT_CREATE:
    if (RT_REF_KIND(r->ret) == RT_REF_EVENT && RT_REF_ID(r->ret) < h->nevents) {
      h->e_created[RT_REF_ID(r->ret)] = 1;
      h->e_seq[RT_REF_ID(r->ret)] = seq;
    }
    break;
  case RT_CALL_EVENT_DESTROY:
    if (RT_REF_ID(r->args[0]) < h->nevents) {
      int e = RT_REF_ID(r->args[0]);
      h->e_destroyed[e] = 1;
      h->e_dseq[e] = seq;
      if (h->e_slot[e] >= 0) {
        h->free_slot[h->nfree++] = h->e_slot[e];
        h->e_slot[e] = -1;
      }
    }
    break;
  case RT_CALL_EVENT_SYNCHRONIZE: {
    int e = RT_REF_ID(r->args[0]);
    int sl = e < h->nevents ? h->e_slot[e] : -1;
    if (sl >= 0)
      hb__join_into(h, a, h->snap + (size_t)sl * (size_t)h->A, h->snap_hi[sl]);
    else
      (void)no_snapshot(h, a, e, r->args[0], seq, 0);
    break;
  }
  case RT_CALL_EVENT_RECORD: {
    int e = RT_REF_ID(r->args[0]);
    int sa = hb__stream_agent(h, r->args[1]);
    enqueue(h, a, sa);
    if (e >= h->nevents)
      break;
    int sl = h->e_slot[e];
    if (sl < 0 &&
        (no_snapshot(h, a, e, r->args[0], seq, 1) || (sl = h->e_slot[e] = take_slot(h)) < 0))
      break;
    hb__ccopy(h->snap + (size_t)sl * (size_t)h->A, &h->snap_hi[sl], hb__row(h, sa), h->hi[sa]);
    break;
  }
  default:
    break;
  }
}

/* A kernel launch: its reads, then its writes, of each buffer argument (a view's elements
 * only, when its strides follow). */
static void step_launch(H *h, int a, const RtRec *r) {
  int seq = (int)r->seq;
  const KernelInfo *ki = kernel_info(RT_REF_ID(r->args[0]));
  if (ki == NULL || r->nargs < 2 + ki->nbufs + 2)
    return;
  int sa = hb__stream_agent(h, r->args[1]);
  enqueue(h, a, sa);
  uint64_t n = ref_u64(r->args[2 + ki->nbufs + 1]);
  int strided = r->nargs >= 2 + 2 * ki->nbufs + 2; /* views' strides follow */
  uint64_t es = (uint64_t)kernel_elem_bytes(ki->elem);
  for (int pass = 0; pass < 2; pass++) /* reads first, then writes */
    for (int k = 0; k < ki->nbufs; k++) {
      int w = (ki->access[k] & KERNEL_WRITE) != 0;
      uint64_t st = strided ? ref_u64(r->args[2 + ki->nbufs + 2 + k]) : 1;
      if (w != pass)
        continue;
      uint32_t lo, hi;
      if (st <= 1) {
        range_of(r->args[2 + k], n * es, &lo, &hi);
        access(h, sa, r->args[2 + k], lo, hi, w, seq);
        continue;
      }
      int from = 0; /* (the elements in address order: each scan goes on from the last) */
      for (uint64_t e = 0; e < n && e < 0x10000; e++) { /* the view's elements only */
        uint64_t at = RT_REF_VAL(r->args[2 + k]) + e * st * es;
        if (at + es > 0xFFFFFFFFu)
          break;
        from = access_from(h, sa, r->args[2 + k], (uint32_t)at, (uint32_t)(at + es), w, seq, from);
      }
    }
}

/* Memory: allocation, frees, and the accesses of copies, sets, kernels and the host. */
static HB__INLINE void step_memory(H *h, int a, const RtRec *r, int call) {
  int seq = (int)r->seq;
  switch (call) {
  case RT_CALL_MEM_ALLOC:
    if (RT_REF_KIND(r->ret) == RT_REF_BUF) {
      Buf *b = buf_of(h, r->ret, 1);
      Epoch e = {a, hb__own(h, a), seq, r->op};
      if (b)
        buf_reset(h, b, (uint32_t)ref_u64(r->args[0]), 1, e);
    }
    break;
  case RT_CALL_MEM_FREE:
    free_buf(h, a, r);
    break;
  case RT_CALL_MEMCPY: {
    int sa = hb__stream_agent(h, r->args[3]);
    enqueue(h, a, sa);
    uint32_t lo, hi;
    uint64_t bytes = ref_u64(r->args[2]);
    range_of(r->args[1], bytes, &lo, &hi);
    access(h, sa, r->args[1], lo, hi, 0, seq);
    range_of(r->args[0], bytes, &lo, &hi);
    access(h, sa, r->args[0], lo, hi, 1, seq);
    break;
  }
  case RT_CALL_MEMSET32:
  case RT_CALL_MEMSET16: {
    int sa = hb__stream_agent(h, r->args[3]);
    enqueue(h, a, sa);
    uint32_t lo, hi;
    range_of(r->args[0], ref_u64(r->args[2]) * (r->call == RT_CALL_MEMSET32 ? 4 : 2), &lo, &hi);
    access(h, sa, r->args[0], lo, hi, 1, seq);
    break;
  }
  case RT_CALL_LAUNCH_KERNEL:
    step_launch(h, a, r);
    break;
  case RT_CALL_HOST_INIT: {
    RtRef hr = RT_REF(RT_REF_HOST, (int)RT_REF_VAL(r->args[0]), 0);
    Buf *b = buf_of(h, hr, 1);
    Epoch e = {a, hb__own(h, a), seq, r->op};
    if (b) {
      uint32_t bytes = (uint32_t)ref_u64(r->args[2]) * elem_bytes(r);
      if (!b->known) /* first init: the buffer comes into being */
        buf_reset(h, b, bytes, 0, e);
      access(h, a, hr, 0, bytes, 1, seq);
    }
    break;
  }
  case RT_CALL_HOST_ADOPT: /* a program's own memory (grown when it is read further) */
  case RT_CALL_HOST_REGISTER: {
    Buf *b = buf_of(h, r->args[0], 1);
    Epoch e = {a, hb__own(h, a), seq, r->op};
    uint32_t size = (uint32_t)ref_u64(r->args[1]);
    if (b && !b->known)
      buf_reset(h, b, size, 0, e);
    else if (b && b->nseg > 0 && size > b->size && b->seg[b->nseg - 1].hi == b->size)
      b->seg[b->nseg - 1].hi = b->size = size;
    break;
  }
  case RT_CALL_KERNEL_ACCESS: { /* a program's kernel, a whole buffer: named by its launch */
    int sa = hb__stream_agent(h, r->args[3]);
    enqueue(h, a, sa);
    for (int w = 0; w < 2; w++) /* (a read first: a read-write use races as the read) */
      if (ref_u64(r->args[1]) & (w ? KERNEL_WRITE : KERNEL_READ))
        access(h, sa, r->args[0], 0, (uint32_t)ref_u64(r->args[2]), w, (int)r->cause);
    break;
  }
  case RT_CALL_OBSERVE: {
    uint32_t lo, hi;
    range_of(r->args[1], ref_u64(r->args[2]) * elem_bytes(r), &lo, &hi);
    access(h, a, r->args[1], lo, hi, 0, seq);
    break;
  }
  default:
    break;
  }
}

/* async.execute regions and async values: spawn, start, yield, release, acquire, await. */
static HB__INLINE void step_regions(H *h, int a, const RtRec *r, int call) {
  switch (call) {
  case RT_CALL_SPAWN:
    region_clock(h, h->spawn_vc, h->spawn_hi, RT_REF_ID(r->args[0]), a);
    if (RT_REF_ID(r->args[0]) < h->nregions)
      h->spawned[RT_REF_ID(r->args[0])] = 1;
    break;
  case RT_CALL_START:
    if (RT_REF_ID(r->args[0]) < h->nregions && h->spawned[RT_REF_ID(r->args[0])]) {
      hb__join_into(h, a, h->spawn_vc + (size_t)RT_REF_ID(r->args[0]) * (size_t)h->A,
                    h->spawn_hi[RT_REF_ID(r->args[0])]);
    }
    break;
  case RT_CALL_YIELD:
    region_clock(h, h->yield_vc, h->yield_hi, RT_REF_ID(r->args[0]), a);
    if (RT_REF_ID(r->args[0]) < h->nregions)
      h->yielded[RT_REF_ID(r->args[0])] = 1;
    break;
  case RT_CALL_RELEASE: {
    int o = RT_REF_ID(r->args[0]);
    if (o < h->nasync) {
      uint32_t *ov = h->async_vc + (size_t)o * (size_t)h->A;
      if (!h->released[o])
        h->async_hi[o] = 0;
      hb__cjoin(ov, &h->async_hi[o], hb__row(h, a), h->hi[a], 0);
      h->released[o] = 1;
    }
    break;
  }
  case RT_CALL_ACQUIRE: {
    int o = RT_REF_ID(r->args[0]);
    if (o < h->nasync && h->released[o]) {
      hb__join_into(h, a, h->async_vc + (size_t)o * (size_t)h->A, h->async_hi[o]);
    }
    break;
  }
  case RT_CALL_AWAIT:
    if (RT_REF_ID(r->args[0]) < h->nregions && h->yielded[RT_REF_ID(r->args[0])]) {
      hb__join_into(h, a, h->yield_vc + (size_t)RT_REF_ID(r->args[0]) * (size_t)h->A,
                    h->yield_hi[RT_REF_ID(r->args[0])]);
    }
    break;
  default:
    break;
  }
}

/* Record r, by thread a. A thread's own entry is seen only through its epochs (a host access,
 * an allocation) and the copies of its row (an enqueue, a stream's creation, a spawn, a yield, a
 * release); what must hold is that an epoch taken after a copy is not known to the copy's
 * receiver, i.e. a tick between the two. So a record that takes an epoch of a ticks first; the
 * others (98.5% of the records at 256 ops, 94% at 32) tick only with `know` (HbOptions.nops),
 * which keeps each record's clock. Without it nothing can tell the difference: every comparison of
 * an epoch with a clock gives what it gave with a tick per record. */
static HB__INLINE int step(H *h, const RtRec *r, int know) {
  int a = thread_agent(h, r->tid);
  if (know)
    h->act = a;
  /* one dispatch per record: each case has its own copy of the step, the switch in it resolved
   * for that call at compile time (the steps are inlined with the call a constant) */
  switch (r->call) {
  case RT_CALL_EXEC: /* device steps and leak notes: not calls */
  case RT_CALL_LEAK:
    return 0;
#define HB__EPOCH(c, fn)                                                                           \
  case RT_CALL_##c:                                                                                \
    if (r->err)                                                                                    \
      goto refused;                                                                                \
    hb__tick(h, a);                                                                                \
    fn(h, a, r, RT_CALL_##c);                                                                      \
    break;
#define HB__PASS(c, fn)                                                                            \
  case RT_CALL_##c:                                                                                \
    if (r->err)                                                                                    \
      goto refused;                                                                                \
    if (know)                                                                                      \
      hb__tick(h, a);                                                                              \
    fn(h, a, r, RT_CALL_##c);                                                                      \
    break;
    HB__PASS(STREAM_CREATE, step_streams)
    HB__PASS(STREAM_DESTROY, step_streams)
    HB__PASS(STREAM_SYNCHRONIZE, step_streams)
    HB__PASS(STREAM_WAIT_EVENT, step_streams)
    HB__PASS(EVENT_CREATE, step_streams)
    HB__PASS(EVENT_DESTROY, step_streams)
    HB__PASS(EVENT_SYNCHRONIZE, step_streams)
    HB__PASS(EVENT_RECORD, step_streams)
    HB__EPOCH(MEM_ALLOC, step_memory)
    HB__PASS(MEM_FREE, step_memory)
    HB__PASS(MEMCPY, step_memory)
    HB__PASS(MEMSET32, step_memory)
    HB__PASS(MEMSET16, step_memory)
    HB__PASS(LAUNCH_KERNEL, step_memory)
    HB__PASS(KERNEL_ACCESS, step_memory)
    HB__EPOCH(HOST_ADOPT, step_memory)
    HB__EPOCH(HOST_INIT, step_memory)
    HB__EPOCH(HOST_REGISTER, step_memory)
    HB__EPOCH(OBSERVE, step_memory)
    HB__PASS(SPAWN, step_regions)
    HB__PASS(START, step_regions)
    HB__PASS(YIELD, step_regions)
    HB__PASS(RELEASE, step_regions)
    HB__PASS(ACQUIRE, step_regions)
    HB__PASS(AWAIT, step_regions)
#undef HB__EPOCH
#undef HB__PASS
  default:
    if (r->err)
      goto refused;
    hb__tick(h, a);
    break;
  }
  return 1;
refused: /* a call the runtime refused: its reports only */
  hb__tick(h, a);
  refused(h, a, r);
  return 1;
}

/* The loop, in two copies: with and without what each op knew (know a constant in each). */
static HB__INLINE void replay(H *h, int know) {
  const RtRec *t = h->t;
  int n = h->n;
  for (int i = 0; i < n && !h->oom; i++) {
    if (step(h, &t[i], know) && know)
      hb__know_note(h, i);
  }
}

void hb__replay(H *h) {
  if (h->res->know != NULL)
    replay(h, 1);
  else
    replay(h, 0);
  report_leaks(h);
}
