/*
 * hb_know.c: what each case op knew when it acted (HbOptions.nops), noted after each record of
 * the replay (hb_replay.c) when the caller asks for it: the knowledge the missing link of a race
 * is found by (oracle/cause.c).
 */
#include "hb_int.h"

#include <string.h>

static int is_access(int call) {
  switch (call) {
  case RT_CALL_MEMCPY:
  case RT_CALL_MEMSET32:
  case RT_CALL_MEMSET16:
  case RT_CALL_LAUNCH_KERNEL:
  case RT_CALL_OBSERVE:
  case RT_CALL_MEM_FREE:
    return 1;
  default:
    return 0;
  }
}

/* After record i: its epoch, and the knowledge of its op unless an access already set it (a
 * later access of the same op, in a later iteration of its loop, sets it again: what the op
 * knew when it last acted). */
void hb__know_note(H *h, int i) {
  HbResult *res = h->res;
  const RtRec *r = &h->t[i];
  res->agent[i] = h->act;
  res->clock[i] = hb__own(h, h->act);
  int op = r->op;
  if (op < 0 || op >= res->nops || (res->known[op] == 2 && (r->err || !is_access(r->call))))
    return;
  uint32_t *k = res->know + (size_t)op * (size_t)h->A;
  uint32_t n = h->hi[h->act]; /* (k is a whole row: its entries past n are 0) */
  if (res->known[op] == 0 || (!r->err && is_access(r->call))) {
    memcpy(k, hb__row(h, h->act), sizeof(uint32_t) * n);
    memset(k + n, 0, sizeof(uint32_t) * ((size_t)h->A - n));
  } else { /* the calls that implement an op without an access: what any of them knew */
    hb__vmax(k, hb__row(h, h->act), (int)n);
  }
  /* an async alloc's token is its stream: what the stream knew passes on to the token's users */
  if (r->call == RT_CALL_MEM_ALLOC && r->nargs > 1 && RT_REF_KIND(r->args[1]) == RT_REF_STREAM) {
    int sa = hb__stream_agent(h, r->args[1]);
    hb__vmax(k, hb__row(h, sa), (int)h->hi[sa]);
  }
  res->known[op] = !r->err && is_access(r->call) ? 2 : 1;
}
