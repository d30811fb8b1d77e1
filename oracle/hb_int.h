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
  uint32_t *vc; /* A x A */
  /* ver[a] grows whenever row a changes outside its own component; jver[s * nthreads + t]
   * is ver[t] when thread t's row was last fully joined into stream s. An enqueue by t on s
   * then needs a full join only when t learned something since (a sync, an await). */
  uint32_t *ver, *jver;
  /* handles */
  uint8_t *s_created, *s_destroyed, *e_created, *e_destroyed, *e_recorded;
  int32_t *s_seq, *s_dseq, *e_seq, *e_dseq;
  uint32_t *snap; /* events x A */
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
  int act; /* the agent that performed the current record */
  int capreports;
  int oom;
  char *block; /* the tables above, in one allocation (hb.c) */
} H;

static inline uint32_t *hb__row(H *h, int agent) {
  return h->vc + (size_t)agent * (size_t)h->A;
}

/* dst[0..n) = max(dst, src) element-wise; the second form says whether dst changed.
 * (hb_clock.c: written as an unconditional max so that it vectorizes) */
void hb__vmax(uint32_t *restrict dst, const uint32_t *restrict src, int n);
int hb__vmax_changed(uint32_t *restrict dst, const uint32_t *restrict src, int n);

/* dst = max(dst, src), element-wise, over the agents. */
static inline void hb__join(H *h, uint32_t *restrict dst, const uint32_t *restrict src) {
  hb__vmax(dst, src, h->A);
}

/* dst row of agent d joins src row of agent a (full join), keeping versions. */
static inline void hb__join_rows(H *h, int d, int a) {
  if (d != a && hb__vmax_changed(hb__row(h, d), hb__row(h, a), h->A))
    h->ver[d]++;
}

/* Whether epoch e happened before clock v. */
static inline int hb__before(const Epoch *e, const uint32_t *v) {
  return e->clock <= v[e->agent];
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

/* Frees the shadow state of n buffers. (hb_replay.c) */
void hb__free_bufs(Buf *arr, int n);

/* Replays the trace, record by record (EXEC and LEAK records aside): each record's agent's
 * clock, then what its call does and the reports it makes; with HbOptions.nops, what each op
 * knew; at the end, the leaks. Stops at h->oom. */
void hb__replay(H *h);

#endif
