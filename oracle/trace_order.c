/*
 * trace_order.c: what a trace says of how the lowering ordered one case op after another
 * (oracle.h): which streams an op's calls were ordered after, and an event that stood for too
 * little. The evidence cause.c and oracle.c name a missing link by, beside what each op knew.
 */
#include "oracle.h"

#include <string.h>

/* The most trace records one question (ordered after? an event before its work?) looks at
 * through chains of waits: a bound on the work of a long trace's chains, past which the answer
 * is "not found". */
#define SEARCH_BUDGET 200000

/* The stream trace record s acted on (its stream argument), or 0. */
static RtRef stream_of(const RtRec *trace, int ntrace, int32_t s) {
  if (s < 0 || s >= ntrace)
    return 0;
  for (int a = 0; a < trace[s].nargs; a++)
    if (RT_REF_KIND(trace[s].args[a]) == RT_REF_STREAM)
      return trace[s].args[a];
  return 0;
}

static int same_handle(RtRef a, RtRef b) {
  return RT_REF_KIND(a) == RT_REF_KIND(b) && RT_REF_ID(a) == RT_REF_ID(b);
}

/* The stream event ev was last recorded on before record `before`, or 0. */
static RtRef recorded_on(const RtRec *trace, int32_t before, RtRef ev, int32_t *at) {
  for (int j = before - 1; j >= 0; j--)
    if (trace[j].call == RT_CALL_EVENT_RECORD && trace[j].nargs >= 2 &&
        same_handle(trace[j].args[0], ev)) {
      if (at)
        *at = j;
      return trace[j].args[1];
    }
  return 0;
}

/* Op's last call before record `before` that put something on a stream (work, or a wait for
 * an event): what a later op must be ordered after. An op that put nothing there is done at the
 * last event it recorded. -1 when it made neither. */
static int32_t last_stream_call(const RtRec *trace, int32_t before, int op) {
  int32_t rec = -1;
  for (int i = before - 1; i >= 0; i--) {
    int c = trace[i].call;
    if (trace[i].op != op)
      continue;
    if (c == RT_CALL_LAUNCH_KERNEL || c == RT_CALL_MEMCPY || c == RT_CALL_MEMSET32 ||
        c == RT_CALL_MEMSET16 || c == RT_CALL_STREAM_WAIT_EVENT ||
        ((c == RT_CALL_MEM_ALLOC || c == RT_CALL_MEM_FREE) && trace[i].nargs > 1 &&
         RT_REF_KIND(trace[i].args[1]) == RT_REF_STREAM))
      return i;
    if (c == RT_CALL_EVENT_RECORD && rec < 0)
      rec = i;
  }
  return rec;
}

/* Stream s, as it was at record `at` (what it held then orders the op). */
static void add(OracleSyncs *sy, RtRef s, int32_t at) {
  if (s == 0)
    return;
  for (int i = 0; i < sy->n; i++)
    if (same_handle(sy->s[i], s)) {
      sy->at[i] = at > sy->at[i] ? at : sy->at[i];
      return;
    }
  if (sy->n >= ORACLE_MAX_SYNCS)
    return;
  sy->at[sy->n] = at;
  sy->s[sy->n++] = s;
}

/* The stream event ev was last recorded on before record w, added as it was then. */
static void add_recorded(OracleSyncs *sy, const RtRec *trace, int32_t w, RtRef ev) {
  int32_t at = -1;
  RtRef on = recorded_on(trace, w, ev, &at);
  add(sy, on, at);
}

int oracle_consumer_syncs(const RtRec *trace, int ntrace, int n, int32_t after, OracleSyncs *sy) {
  memset(sy, 0, sizeof *sy);
  sy->first = -1;
  int i = after + 1;
  while (i < ntrace && (trace[i].op != n || trace[i].call == RT_CALL_EXEC))
    i++;
  if (i >= ntrace)
    return 0;
  sy->first = i;
  /* a free's stream orders nothing: it frees at once, after what the host synchronized with,
   * whatever its stream waited for */
  int frees = 0;
  for (int j = i; j < ntrace && (trace[j].op == n || trace[j].call == RT_CALL_EXEC); j++)
    frees |= trace[j].op == n && trace[j].call == RT_CALL_MEM_FREE;
  /* the op's calls from there, until another op's (device steps run in between) */
  for (; i < ntrace && (trace[i].op == n || trace[i].call == RT_CALL_EXEC); i++) {
    const RtRec *r = &trace[i];
    if (r->op != n || r->call == RT_CALL_EXEC || r->call == RT_CALL_STREAM_CREATE ||
        r->call == RT_CALL_STREAM_DESTROY || r->call == RT_CALL_EVENT_CREATE ||
        r->call == RT_CALL_EVENT_DESTROY || r->call == RT_CALL_EVENT_RECORD ||
        r->call == RT_CALL_MEM_FREE ||
        (frees && r->call != RT_CALL_STREAM_SYNCHRONIZE && r->call != RT_CALL_EVENT_SYNCHRONIZE))
      continue;
    if (r->call == RT_CALL_STREAM_WAIT_EVENT && r->nargs >= 2) {
      add_recorded(sy, trace, i, r->args[1]);
      add(sy, r->args[0], sy->first);
    } else if (r->call == RT_CALL_EVENT_SYNCHRONIZE && r->nargs >= 1) {
      add_recorded(sy, trace, i, r->args[0]);
    } else {
      RtRef st = stream_of(trace, ntrace, i);
      add(sy, st, sy->first); /* its work's stream, or the one it synchronized */
      /* (a free after the host synchronized a stream is ordered after what that stream waited
       * for in this go) */
      for (int32_t j = sy->first; frees && j < i; j++)
        if (trace[j].op == n && trace[j].call == RT_CALL_STREAM_WAIT_EVENT && trace[j].nargs >= 2 &&
            same_handle(trace[j].args[0], st))
          add_recorded(sy, trace, j, trace[j].args[1]);
    }
  }
  return 1;
}

/* Whether stream s, by record `before`, was ordered after what stream ss held at record `at`:
 * it is ss (by then), or it waited for an event recorded on ss at `at` or after, or on a stream
 * that was, so (depth streams at most). */
static int reaches(const RtRec *trace, RtRef s, int32_t before, RtRef ss, int32_t at, int depth,
                   int *budget) {
  if (same_handle(s, ss))
    return before >= at;
  for (int32_t j = before - 1; depth > 0 && j > at && --*budget > 0; j--) {
    const RtRec *w = &trace[j];
    if (w->call != RT_CALL_STREAM_WAIT_EVENT || w->nargs < 2 || !same_handle(w->args[0], s))
      continue;
    int32_t rec = -1;
    RtRef on = recorded_on(trace, j, w->args[1], &rec);
    if (on && rec >= at && reaches(trace, on, rec, ss, at, depth - 1, budget))
      return 1;
  }
  return 0;
}

int oracle_ordered_after(const RtRec *trace, const OracleSyncs *sy, int src) {
  int32_t sc = sy->first < 0 ? -1 : last_stream_call(trace, sy->first, src);
  RtRef ss = stream_of(trace, sy->first, sc);
  if (!ss)
    return -1;
  int budget = SEARCH_BUDGET;
  for (int i = 0; i < sy->n; i++)
    if (reaches(trace, sy->s[i], sy->at[i], ss, sc, 4, &budget))
      return 1;
  return 0;
}

int oracle_synced_elsewhere(const RtRec *trace, const OracleSyncs *sy, int n) {
  for (int k = 0; k < sy->n; k++)
    for (int i = sy->first - 1; i >= 0; i--)
      if (trace[i].op != n && trace[i].op >= 0 && trace[i].call != RT_CALL_EXEC &&
          same_handle(trace[i].call == RT_CALL_STREAM_CREATE ? trace[i].ret
                                                             : stream_of(trace, sy->first, i),
                      sy->s[k]))
        return 1;
  return 0;
}

int oracle_synced_with_nothing(const RtRec *trace, int ntrace, int n, int32_t after) {
  OracleSyncs sy;
  return trace && oracle_consumer_syncs(trace, ntrace, n, after, &sy) && sy.n > 0 &&
         !oracle_synced_elsewhere(trace, &sy, n);
}

/* Whether op `from`'s work at record seq on stream ws came after record r in the same go of
 * `from` (no other op's call between them), and before record w. */
static int work_between(const RtRec *trace, int ntrace, int from, RtRef ws, int32_t r, int32_t seq,
                        int32_t w) {
  if (seq <= r || seq >= w || !same_handle(stream_of(trace, ntrace, seq), ws))
    return 0;
  for (int32_t p = r + 1; p < seq; p++)
    if (trace[p].op != from && trace[p].call != RT_CALL_EXEC)
      return 0;
  return 1;
}

/* Whether the op that recorded an event at record r went on, in the same go, to put more on
 * that stream (work, or a wait for another event): the event stood for less than its op. */
static int more_after(const RtRec *trace, int ntrace, int32_t r) {
  int x = trace[r].op;
  RtRef on = trace[r].args[1];
  for (int32_t p = r + 1;
       x >= 0 && p < ntrace && (trace[p].op == x || trace[p].call == RT_CALL_EXEC); p++) {
    int c = trace[p].call;
    if (c == RT_CALL_EXEC || c == RT_CALL_EVENT_RECORD || c == RT_CALL_EVENT_CREATE ||
        c == RT_CALL_EVENT_DESTROY || c == RT_CALL_STREAM_CREATE || c == RT_CALL_STREAM_DESTROY)
      continue;
    if (same_handle(stream_of(trace, ntrace, p), on))
      return 1;
  }
  return 0;
}

/* Whether the wait at record w, for event ev, went back to an event that `from` recorded on
 * ws just before putting its work seq there, or that any op recorded before it put more on
 * that stream: directly, or through the events the recording stream had waited for (depth of
 * them). */
static int early(const RtRec *trace, int ntrace, int32_t w, RtRef ev, RtRef ws, int from,
                 int32_t seq, int depth, int *budget) {
  int32_t r = -1;
  RtRef on = recorded_on(trace, w, ev, &r);
  if (!on)
    return 0;
  if ((same_handle(on, ws) && trace[r].op == from &&
       work_between(trace, ntrace, from, ws, r, seq, w)) ||
      more_after(trace, ntrace, r))
    return 1;
  for (int32_t j = r - 1; depth > 0 && j >= 0 && --*budget > 0; j--)
    if (trace[j].call == RT_CALL_STREAM_WAIT_EVENT && trace[j].nargs >= 2 &&
        same_handle(trace[j].args[0], on) &&
        early(trace, ntrace, j, trace[j].args[1], ws, from, seq, depth - 1, budget))
      return 1;
  return 0;
}

int oracle_event_before_work(const GenCase *c, const RtRec *trace, int ntrace, int from,
                             int32_t seq, int to) {
  RtRef ws = trace ? stream_of(trace, ntrace, seq) : 0;
  if (trace == NULL || ws == 0 || from < 0 || from >= c->nops || to < 0 || to >= c->nops)
    return 0;
  int budget = SEARCH_BUDGET;
  for (int i = 0; i < ntrace; i++) {
    const RtRec *w = &trace[i];
    if (w->op == to && w->call == RT_CALL_STREAM_WAIT_EVENT && w->nargs >= 2 &&
        early(trace, ntrace, i, w->args[1], ws, from, seq, 3, &budget))
      return 1;
    if (w->op == to && w->call == RT_CALL_EVENT_SYNCHRONIZE && w->nargs >= 1 &&
        early(trace, ntrace, i, w->args[0], ws, from, seq, 3, &budget))
      return 1;
  }
  return 0;
}
