/*
 * hb_int.h: internals of the happens-before checker (hb.c), shared by its files only: the
 * replay's state (H: vector clocks per agent, handle tables, shadow memory), the clock
 * operations every step uses (inline: they are the checker's inner loop), and the pieces
 * of hb.c (the driver) and hb_replay.c (the shadow memory and what each runtime call
 * does to the clocks).
 */
#ifndef ORACLE_HB_INT_H
#define ORACLE_HB_INT_H

#include "hb.h"

#include <stdint.h>
#include <string.h>

typedef struct Epoch {
  int32_t agent; /* dense agent index */
  uint32_t clock;
  int32_t seq, op;
} Epoch;

typedef struct Seg {
  uint32_t lo, hi;
  int has_w;
  Epoch w;
  int nr, capr;
  Epoch *r;
} Seg;

typedef struct Buf {
  int known, device, freed;
  int32_t free_seq;
  Epoch alloc;
  uint32_t size;
  int nseg, capseg;
  Seg *seg;
} Buf;

typedef struct H {
  const RtRec *t;
  int n;
  HbOptions opt;
  int nthreads, nstreams, A;
  /* Every vector clock (a row per agent, an event's snapshot, a region's spawn and yield, an
   * async object's release) is stored with its extent: the entries from the extent on are 0
   * and not stored (not even zeroed). Agents are numbered as they appear (threads, then streams
   * as created), so most clocks are shorter than A: joins and copies run over extents only. */
  uint32_t *vc; /* A x A */
  uint32_t *hi; /* extent of each row */
  uint32_t *snap_hi, *spawn_hi, *yield_hi, *async_hi;
  /* ver[t] grows whenever thread t's row changes outside its own component; jver[s * nthreads
   * + t] is ver[t] + 1 when t's row was last fully joined into stream s (0: never). An enqueue by
   * t on s then needs a full join only when t learned something since (a sync, an await). Only
   * threads enqueue, so a stream's version is never read and not kept. */
  uint32_t *ver, *jver;
  /* handles */
  uint8_t *s_created, *s_destroyed, *e_created, *e_destroyed;
  int32_t *s_seq, *s_dseq, *e_seq, *e_dseq;
  /* An event's snapshot (its stream's clock at its last record) is a row of snap, the slot
   * e_slot[e] (-1: none). A destroy gives the slot back (free_slot): a later use of the event is
   * refused by the runtime, or reported (no_snapshot), so only the events alive at once hold
   * slots: 33 on average per check at 1024 ops (about 82 KB), where a row for each of its 861
   * events took 2.2 MB (628 agents), and grew as the square of the case. */
  uint32_t *snap; /* capsnap slots x A, from the arena */
  int32_t *e_slot, *free_slot;
  int nslots, capsnap, nfree;
  int nevents;
  /* regions */
  int nregions;
  uint32_t *spawn_vc, *yield_vc; /* regions x A */
  uint8_t *yielded, *spawned;
  /* async runtime objects: a release publishes the thread's clock, an acquire joins it */
  int nasync;
  uint32_t *async_vc;
  uint8_t *released;
  /* buffers */
  Buf *dev, *host, *reg;
  int ndev, nhost, nreg;
  HbResult *res;
  int act; /* the agent that performed the current record (read only with HbOptions.nops) */
  int capreports;
  int oom;
  /* the check's memory: the tables above and the shadow memory, from chunks freed together at
   * the end of the check (a check made some 50 allocations and frees before) */
  union Chunk *chunks;
  char *ar_next;
  size_t ar_left;
} H;

/* The inner loop's helpers are inlined whatever the compiler's estimate of their size; its rare
 * paths are kept out of it. */
#if defined(__GNUC__)
#define HB__INLINE inline __attribute__((always_inline))
#define HB__COLD __attribute__((noinline, cold))
#else
#define HB__INLINE inline
#define HB__COLD
#endif

static inline uint32_t *hb__row(H *h, int agent) {
  return h->vc + (size_t)agent * (size_t)h->A;
}

/* dst[0..n) = max(dst, src) element-wise; the second form says whether dst changed.
 * (hb_clock.c: written as an unconditional max so that it vectorizes) */
void hb__vmax(uint32_t *restrict dst, const uint32_t *restrict src, int n);
int hb__vmax_changed(uint32_t *restrict dst, const uint32_t *restrict src, int n);

/* Entry i of clock v of extent hi. */
static inline uint32_t hb__get(const uint32_t *v, uint32_t hi, int i) {
  return (uint32_t)i < hi ? v[i] : 0;
}

/* Sets entry i of clock v of extent *hi, extending it. */
static inline void hb__set(uint32_t *v, uint32_t *hi, int i, uint32_t x) {
  if (*hi <= (uint32_t)i) { /* a stream's first tick: up to its own entry, often far */
    memset(v + *hi, 0, sizeof(uint32_t) * ((uint32_t)i - *hi));
    *hi = (uint32_t)i + 1;
  }
  v[i] = x;
}

/* dst = max(dst, src) over the extents; with `track`, says whether dst may have changed (else 0:
 * the join does not find out). */
static HB__INLINE int hb__cjoin(uint32_t *restrict dst, uint32_t *dhi, const uint32_t *restrict src,
                                uint32_t shi, int track) {
  uint32_t n = *dhi < shi ? *dhi : shi;
  int changed = 0;
  if (n && track)
    changed = hb__vmax_changed(dst, src, (int)n);
  else if (n)
    hb__vmax(dst, src, (int)n);
  if (shi > *dhi) {
    memcpy(dst + *dhi, src + *dhi, sizeof(uint32_t) * (shi - *dhi));
    *dhi = shi;
    changed = 1;
  }
  return changed;
}

/* dst = src. */
static inline void hb__ccopy(uint32_t *restrict dst, uint32_t *dhi, const uint32_t *restrict src,
                             uint32_t shi) {
  memcpy(dst, src, sizeof(uint32_t) * shi);
  *dhi = shi;
}

/* Agent a's own entry, and one more step of it. */
static inline uint32_t hb__own(H *h, int a) {
  return hb__get(hb__row(h, a), h->hi[a], a);
}

static inline void hb__tick(H *h, int a) {
  hb__set(hb__row(h, a), &h->hi[a], a, hb__own(h, a) + 1);
}

/* Row d joins clock src of extent shi, keeping a thread's version. A stream's join (most joins:
 * an enqueue's, an event wait's) need not find out whether it changed the row. */
static inline void hb__join_into(H *h, int d, const uint32_t *src, uint32_t shi) {
  if (d < h->nthreads) {
    if (hb__cjoin(hb__row(h, d), &h->hi[d], src, shi, 1))
      h->ver[d]++;
  } else {
    hb__cjoin(hb__row(h, d), &h->hi[d], src, shi, 0);
  }
}

/* Row d joins row a (full join), keeping versions. */
static inline void hb__join_rows(H *h, int d, int a) {
  if (d != a)
    hb__join_into(h, d, hb__row(h, a), h->hi[a]);
}

/* Whether epoch e happened before agent a's clock. */
static inline int hb__before(H *h, const Epoch *e, int a) {
  return e->clock <= hb__get(hb__row(h, a), h->hi[a], e->agent);
}

static inline int hb__is_stream(const H *h, int agent) {
  return agent >= h->nthreads;
}

static inline int hb__stream_agent(const H *h, RtRef r) {
  int s = RT_REF_KIND(r) == RT_REF_STREAM ? RT_REF_ID(r) : 0;
  return h->nthreads + (s < h->nstreams ? s : 0);
}

/* Whether reports of kind (HbKind) are errors (else warnings). */
static inline int hb__is_error(int kind) {
  switch (kind) {
#define HB__KERR(id, name, err)                                                                    \
  case HB_##id:                                                                                    \
    return err;
    HB_KIND_MAP(HB__KERR)
#undef HB__KERR
  default:
    return 0;
  }
}

/* n bytes of the check's memory (aligned as malloc aligns), or NULL with h->oom set; all of it
 * freed at once. (hb_replay.c) */
void *hb__arena(H *h, size_t n);
void hb__arena_free(H *h);

/* Replays the trace, record by record (EXEC and LEAK records aside): each record's agent's
 * clock, then what its call does and the reports it makes; with HbOptions.nops, what each op
 * knew; at the end, the leaks. Stops at h->oom. */
void hb__replay(H *h);
/* After record i of the replay: its epoch, and what its op knew (hb_know.c). */
void hb__know_note(H *h, int i);

#endif
