/*
 * trace_feat.c: the features (base/feat.h) of what a run did, read from its trace: each runtime
 * call by the kind of the case op it implements, where it ran (the host, a region's thread, the
 * device) and whether the runtime refused it; and each ordering link the run used, named by the
 * ops at its two ends: an event one op recorded and another op's stream waited on (on the same
 * thread or across threads), the host waiting on an event or a stream for an op, a region
 * awaited. These are the (construct, handle) pairs and happens-before mechanisms that a lowering
 * chose for a case, which the case's shape alone does not tell.
 */
#include "check_int.h"

#include "../base/feat.h"

static const char *op_kind(const GenCase *c, int op) {
  return op >= 0 && op < c->nops ? gen_op_name(c->ops[op].kind) : "none";
}

static const char *where(const RtRec *r) {
  return r->tid < 0 ? "device" : r->tid == 0 ? "host" : "region";
}

/* The stream a record put work or an event record on (its stream argument), or -1. */
static int enqueued_on(const RtRec *r) {
  switch (r->call) {
  case RT_CALL_MEMCPY:
  case RT_CALL_MEMSET32:
  case RT_CALL_MEMSET16:
  case RT_CALL_LAUNCH_KERNEL:
  case RT_CALL_EVENT_RECORD:
    for (int a = 0; a < r->nargs; a++)
      if (RT_REF_KIND(r->args[a]) == RT_REF_STREAM)
        return RT_REF_ID(r->args[a]);
    return -1;
  default:
    return -1;
  }
}

static int id_of(const RtRec *r, int k, int kind, int n) {
  if (r->nargs <= k || RT_REF_KIND(r->args[k]) != kind)
    return -1;
  int id = RT_REF_ID(r->args[k]);
  return id < n ? id : -1;
}

void check_trace_features(const GenCase *c, const RtRec *t, int n) {
  if (!af_feat_on() || n <= 0)
    return;
  /* ids are made by records, so fewer than n of each; per event the op and thread that last
   * recorded it, per stream the op that last enqueued on it */
  int *ev_op = af_malloc(sizeof(int) * 3 * ((size_t)n + 1));
  if (ev_op == NULL)
    return;
  int *ev_tid = ev_op + n + 1, *st_op = ev_tid + n + 1;
  for (int i = 0; i <= n; i++)
    ev_op[i] = ev_tid[i] = st_op[i] = -1;
  for (int i = 0; i < n; i++) {
    const RtRec *r = &t[i];
    if (r->call == RT_CALL_EXEC || r->call == RT_CALL_LEAK)
      continue;
    const char *k = op_kind(c, r->op);
    af_feat_addf(AF_FEAT_RUNTIME, "%s %s %s%s", asyncfuzz_rt_call_name(r->call), k, where(r),
                 r->err ? " refused" : "");
    if (r->err)
      continue;
    int s = enqueued_on(r), e;
    if (s >= 0 && s < n)
      st_op[s] = r->op;
    switch (r->call) {
    case RT_CALL_EVENT_RECORD:
      if ((e = id_of(r, 0, RT_REF_EVENT, n)) >= 0) {
        ev_op[e] = r->op;
        ev_tid[e] = r->tid;
      }
      break;
    case RT_CALL_STREAM_WAIT_EVENT:
      if ((e = id_of(r, 1, RT_REF_EVENT, n)) >= 0)
        af_feat_addf(AF_FEAT_LINK, "event wait: %s -> %s, %s", op_kind(c, ev_op[e]), k,
                     ev_op[e] < 0          ? "never recorded"
                     : ev_tid[e] == r->tid ? "same thread"
                                           : "across threads");
      break;
    case RT_CALL_EVENT_SYNCHRONIZE:
      if ((e = id_of(r, 0, RT_REF_EVENT, n)) >= 0)
        af_feat_addf(AF_FEAT_LINK, "event sync: %s -> %s on the %s", op_kind(c, ev_op[e]), k,
                     where(r));
      break;
    case RT_CALL_STREAM_SYNCHRONIZE:
      if ((s = id_of(r, 0, RT_REF_STREAM, n)) >= 0)
        af_feat_addf(AF_FEAT_LINK, "stream sync: %s -> %s on the %s", op_kind(c, st_op[s]), k,
                     where(r));
      break;
    case RT_CALL_AWAIT:
    case RT_CALL_ACQUIRE:
      af_feat_addf(AF_FEAT_LINK, "%s: %s on the %s", asyncfuzz_rt_call_name(r->call), k, where(r));
      break;
    default:
      break;
    }
  }
  af_free(ev_op);
}
