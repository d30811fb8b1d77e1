/*
 * leak.c: how a leaked handle is named (oracle.c): an event by what it was made for, a stream by
 * how its order was last passed on when that says more than its maker (docs/signatures.md,
 * "Leaks").
 */
#include "oracle.h"

/* What a leaked event was made for, by the calls that used it: another stream waited on it
 * ("stream-wait"), the host did ("host-wait"), or nothing did ("unused"). */
const char *oracle_event_use(RtRef h, const RtRec *trace, int ntrace) {
  int host = 0;
  for (int i = 0; i < ntrace; i++)
    for (int a = 0; a < trace[i].nargs; a++) {
      RtRef x = trace[i].args[a];
      if (RT_REF_KIND(x) != RT_REF_EVENT || RT_REF_ID(x) != RT_REF_ID(h))
        continue;
      if (trace[i].call == RT_CALL_STREAM_WAIT_EVENT)
        return "stream-wait";
      host |= trace[i].call == RT_CALL_EVENT_SYNCHRONIZE;
    }
  return host ? "host-wait" : "unused";
}

/* Whether the case consumes token t anywhere: a dependency, a yield (a region's or a block's),
 * an input a block or a region takes, a capture. */
static int token_consumed(const GenCase *c, int t) {
  for (int i = 0; i < c->nops; i++)
    for (int d = 0; d < c->ops[i].ndeps && d < GEN_MAX_DEPS; d++)
      if (c->ops[i].deps[d] == t)
        return 1;
  for (int r = 0; r < c->nregions; r++) {
    for (int y = 0; y < c->regions[r].nyields; y++)
      if (c->regions[r].yields[y] == t)
        return 1;
    for (int q = 0; q < c->regions[r].ncaptures; q++)
      if (c->regions[r].captures[q].outer == t)
        return 1;
  }
  for (int b = 0; b < c->nblocks; b++) {
    if (c->blocks[b].yield == t)
      return 1;
    for (int q = 0; q < c->blocks[b].ninputs; q++)
      if (c->blocks[b].inputs[q].outer == t)
        return 1;
  }
  return 0;
}

/* How a leaked stream's order was last passed on, when that names its cause better than its
 * maker: "handed-on:event", its last call was an event recorded on it for another stream or the
 * host, and whoever took that event left the stream behind; "unconsumed", the case op that used
 * it last has a token the case never consumes (the end of a chain nobody waited for: no one is
 * there to end the stream, whatever ops worked on it before). NULL otherwise (the stream is
 * named by its maker). */
const char *oracle_stream_end(const GenCase *c, RtRef h, const RtRec *trace, int ntrace) {
  int last = -1, last_op = -1;
  for (int i = 0; i < ntrace; i++) {
    int made = trace[i].call == RT_CALL_STREAM_CREATE &&
               RT_REF_KIND(trace[i].ret) == RT_REF_STREAM &&
               RT_REF_ID(trace[i].ret) == RT_REF_ID(h);
    for (int a = 0; a < trace[i].nargs && trace[i].call != RT_CALL_LEAK && !made; a++)
      if (RT_REF_KIND(trace[i].args[a]) == RT_REF_STREAM &&
          RT_REF_ID(trace[i].args[a]) == RT_REF_ID(h)) {
        made = 1;
        break;
      }
    if (made) {
      last = trace[i].call;
      last_op = trace[i].op;
    }
  }
  if (last == RT_CALL_EVENT_RECORD)
    return "handed-on:event";
  if (last_op >= 0 && last_op < c->nops && c->ops[last_op].tok >= 0 &&
      !token_consumed(c, c->ops[last_op].tok))
    return "unconsumed";
  return NULL;
}
