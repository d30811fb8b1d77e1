/*
 * refused.c: a run as if every call the runtime refused for its handle had succeeded (oracle.c,
 * judge_also). A refused handle is the headline of its run; what else went wrong counts as an
 * independent cause only where the checker still reports it in this run, where the refusal
 * itself cannot be why.
 */
#include "oracle.h"

#include <string.h>

static int is_refused_handle(const RtRec *r) {
  return r->call != RT_CALL_EXEC && r->err != RT_ERR_OK &&
         (r->detail == RT_DETAIL_WRONG_KIND || r->detail == RT_DETAIL_NOT_A_HANDLE ||
          r->detail == RT_DETAIL_NULL_HANDLE);
}

/* A record of the rewritten run: r's thread and op, with call, arguments and no error. */
static RtRec as_ok(const RtRec *r, int call, RtRef a0, RtRef a1, int nargs) {
  RtRec x = *r;
  x.call = (uint8_t)call;
  x.err = RT_ERR_OK;
  x.detail = 0;
  x.cause = 0;
  x.nargs = (uint8_t)nargs;
  memset(x.args, 0, sizeof x.args);
  x.args[0] = a0;
  x.args[1] = a1;
  x.ret = 0;
  return x;
}

/* What the refused call r meant, as the calls that do it on the handle it was given, into out
 * (room for 4): how many (0: it is left out). A sync or destroy of an event given a stream syncs
 * or destroys that stream (and the other way round); a stream that waits for a stream where an
 * event belongs waits for that stream's work, through a fresh event `fresh`; anything else
 * refused (a null handle, a record into a stream) is left out. */
static int meant(const RtRec *r, int fresh, RtRec *out) {
  RtRef h = r->nargs > 0 ? r->args[0] : 0;
  int k = RT_REF_KIND(h);
  if (r->detail != RT_DETAIL_WRONG_KIND)
    return 0;
  switch (r->call) {
  case RT_CALL_EVENT_SYNCHRONIZE:
    return k == RT_REF_STREAM ? (out[0] = as_ok(r, RT_CALL_STREAM_SYNCHRONIZE, h, 0, 1), 1) : 0;
  case RT_CALL_EVENT_DESTROY:
    return k == RT_REF_STREAM ? (out[0] = as_ok(r, RT_CALL_STREAM_DESTROY, h, 0, 1), 1) : 0;
  case RT_CALL_STREAM_SYNCHRONIZE:
    return k == RT_REF_EVENT ? (out[0] = as_ok(r, RT_CALL_EVENT_SYNCHRONIZE, h, 0, 1), 1) : 0;
  case RT_CALL_STREAM_DESTROY:
    return k == RT_REF_EVENT ? (out[0] = as_ok(r, RT_CALL_EVENT_DESTROY, h, 0, 1), 1) : 0;
  case RT_CALL_STREAM_WAIT_EVENT: {
    RtRef s = h, t = r->nargs > 1 ? r->args[1] : 0;
    if (RT_REF_KIND(s) != RT_REF_STREAM || RT_REF_KIND(t) != RT_REF_STREAM)
      return 0;
    RtRef e = RT_REF(RT_REF_EVENT, fresh, 0);
    out[0] = as_ok(r, RT_CALL_EVENT_CREATE, 0, 0, 0);
    out[0].ret = e;
    out[1] = as_ok(r, RT_CALL_EVENT_RECORD, e, t, 2);
    out[2] = as_ok(r, RT_CALL_STREAM_WAIT_EVENT, s, e, 2);
    out[3] = as_ok(r, RT_CALL_EVENT_DESTROY, e, 0, 1);
    return 4;
  }
  default:
    return 0;
  }
}

int oracle_as_if_succeeded(const RtRec *trace, int ntrace, RtRec **out, int *nout) {
  *out = NULL;
  *nout = 0;
  int nrefused = 0, fresh = 0;
  for (int i = 0; i < ntrace; i++) {
    nrefused += is_refused_handle(&trace[i]);
    for (int a = 0; a < trace[i].nargs && a < RT_REC_ARGS; a++)
      if (RT_REF_KIND(trace[i].args[a]) == RT_REF_EVENT && RT_REF_ID(trace[i].args[a]) >= fresh)
        fresh = RT_REF_ID(trace[i].args[a]) + 1;
    if (RT_REF_KIND(trace[i].ret) == RT_REF_EVENT && RT_REF_ID(trace[i].ret) >= fresh)
      fresh = RT_REF_ID(trace[i].ret) + 1;
  }
  RtRec *t = af_malloc(((size_t)ntrace + 3 * (size_t)nrefused + 1) * sizeof *t);
  uint32_t *at = af_malloc(((size_t)ntrace + 1) * sizeof *at); /* old index -> new */
  if (t == NULL || at == NULL) {
    af_free(t);
    af_free(at);
    return AF_ENOMEM;
  }
  int n = 0;
  for (int i = 0; i < ntrace; i++) {
    at[i] = (uint32_t)n;
    if (!is_refused_handle(&trace[i]))
      t[n++] = trace[i];
    else
      n += meant(&trace[i], fresh++, &t[n]);
  }
  for (int i = 0; i < n; i++) { /* numbered anew; causes follow their calls */
    t[i].seq = (uint32_t)i;
    if ((t[i].call == RT_CALL_EXEC || t[i].err != RT_ERR_OK) && t[i].cause < (uint32_t)ntrace)
      t[i].cause = at[t[i].cause];
  }
  af_free(at);
  *out = t;
  *nout = n;
  return 0;
}
