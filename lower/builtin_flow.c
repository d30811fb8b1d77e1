/*
 * builtin_flow.c: the builtin lowering of control flow (lower__<lc> of execute, await, call, if,
 * for, branch). A region's tokens that cross its boundary are events: a region input and an
 * awaited value are taken from the async runtime; async.yield records one event per consumer of
 * each yielded token (each consumer owns and destroys its event, as gpu-async-region's
 * single-use rule intends); a captured token is handed over as an event the parent records
 * before it spawns the region. A token that crosses into a call, if, for or branch body (an
 * argument, an iter_arg, a block argument) or out of it (the op's token) is an event too. A body
 * runs inline; a for's body is lowered once per iteration, the carried event of one iteration
 * being the input of the next.
 */
#include "builtin_int.h"

/* Before spawning region r: an event for each token it captures, recorded where the token's
 * work is, handed over as the region's value nvalues + k. The region owns (and destroys) it. */
static void hand_captures(L *l, int fn, int i, int r) {
  const GenRegion *g = &l->c->regions[r];
  if (lower__has(l, LOWER_FAULT_CAPTURE_DROPPED))
    return;
  for (int k = 0; k < g->ncaptures; k++) {
    int e = lower__hand_event(l, fn, g->captures[k].outer, i);
    if (e < 0)
      continue;
    LowerInstr *in = lower__emit(l, fn, LOWER_YIELD, i);
    if (in) {
      in->a = e;
      in->region = r;
      in->vidx = g->nyields + k;
      in->consumer = 0;
    }
  }
}

int lower__execute(L *l, int i, int primary, const uint8_t *need) {
  const GenOp *o = &l->c->ops[i];
  (void)primary, (void)need;
  hand_captures(l, o->ctx, i, o->region);
  LowerInstr *in = lower__emit(l, o->ctx, LOWER_SPAWN, i);
  if (in)
    in->region = o->region;
  return -1;
}

int lower__await(L *l, int i, int primary, const uint8_t *need) {
  const GenOp *o = &l->c->ops[i];
  (void)primary, (void)need;
  LowerInstr *in = lower__emit(l, o->ctx, LOWER_AWAIT, i);
  if (in)
    in->region = o->region;
  if (o->vidx >= 0) { /* the value: an event of the region's, taken */
    int slot = lower__new_slot(l, o->ctx);
    in = lower__emit(l, o->ctx, LOWER_TAKE, i);
    if (in) {
      in->a = slot;
      in->region = o->region;
      in->vidx = o->vidx;
      in->consumer = l->await_consumer[i];
    }
    l->tok_slot[o->tok] = slot;
  }
  return -1;
}

void lower__open_region(L *l, int r) {
  const GenRegion *g = &l->c->regions[r];
  for (int k = 0; k < g->ninputs; k++) {
    int slot = lower__new_slot(l, r);
    LowerInstr *in = lower__emit(l, r, LOWER_TAKE, g->exec_op);
    if (in) {
      in->a = slot;
      in->region = g->inputs[k].region;
      in->vidx = g->inputs[k].vidx;
      in->consumer = l->input_consumer[r * GEN_MAX_REGION_IO + k];
      in->imm = 1; /* a region input: the region starts after its source yielded it */
    }
    l->tok_slot[g->inputs[k].tok] = slot;
  }
  if (lower__has(l, LOWER_FAULT_CAPTURE_DROPPED))
    return; /* the captured tokens have no slot here: ops that depend on them wait for nothing */
  for (int k = 0; k < g->ncaptures; k++) {
    int slot = lower__new_slot(l, r);
    LowerInstr *in = lower__emit(l, r, LOWER_TAKE, g->exec_op);
    if (in) {
      in->a = slot;
      in->region = r;
      in->vidx = g->nyields + k;
      in->consumer = 0;
    }
    l->tok_slot[g->captures[k].tok] = slot;
  }
}

/* Value k of region r handed to its consumers: one event each, recorded on the yielded token's
 * stream (yield_stream: the slot itself, whatever it is). A yield's calls are its region op's,
 * as mlir-opt's are (the async.execute's). */
static void yield_value(L *l, int r, int k, int src, int nconsumers) {
  int t = l->c->regions[r].yields[k], s = src;
  int as_is = lower__has(l, LOWER_FAULT_YIELD_STREAM), x = l->c->regions[r].exec_op;
  if (!as_is && lower__is_event_tok(l, t)) { /* re-yield of an event: one stream waits on it */
    s = lower__emit_create(l, r, LOWER_STREAM_CREATE, x);
    lower__emit2(l, r, LOWER_STREAM_WAIT_EVENT, x, s, src);
  }
  for (int j = 0; j < nconsumers; j++) {
    int e = src;
    if (!as_is) {
      e = lower__emit_create(l, r, LOWER_EVENT_CREATE, x);
      lower__emit2(l, r, LOWER_EVENT_RECORD, x, e, s);
    }
    LowerInstr *in = lower__emit(l, r, LOWER_YIELD, x);
    if (in) {
      in->a = e;
      in->region = r;
      in->vidx = k;
      in->consumer = j;
    }
  }
}

void lower__close_region(L *l, int r) {
  const GenRegion *g = &l->c->regions[r];
  const LowerRegionInfo *ri = &l->p->regions[r];
  for (int k = 0; k < g->nyields; k++) {
    int t = g->yields[k];
    int src = l->tok_slot[t];
    if (ri->nconsumers[k] == 0)
      continue;
    if (src < 0) { /* a token without a slot (capture_dropped): a stream with no work */
      src = lower__emit_create(l, r, LOWER_STREAM_CREATE, g->exec_op);
      l->tok_slot[t] = src;
      l->tok_event[t] = 0;
    }
    yield_value(l, r, k, src, ri->nconsumers[k]);
  }
  lower__emit(l, r, LOWER_DONE, -1);
}

/* A call, if or branch op: its block's inputs, as events inside; its token at the block's end. */
static int block_entry(L *l, int i) {
  const GenOp *o = &l->c->ops[i];
  const GenBlock *k = &l->c->blocks[o->block];
  int dropped = o->kind == GEN_OP_CALL && lower__has(l, LOWER_FAULT_CALL_ARG_DROPPED);
  for (int q = 0; q < k->ninputs; q++) /* (dropped: the callee's ops wait for nothing) */
    l->tok_slot[k->inputs[q].tok] =
        dropped ? -1 : lower__hand_event(l, o->ctx, k->inputs[q].outer, i);
  return -1;
}

int lower__call(L *l, int i, int primary, const uint8_t *need) {
  (void)primary, (void)need;
  return block_entry(l, i);
}

int lower__if(L *l, int i, int primary, const uint8_t *need) {
  (void)primary, (void)need;
  return block_entry(l, i);
}

int lower__branch(L *l, int i, int primary, const uint8_t *need) {
  (void)primary, (void)need;
  return block_entry(l, i);
}

void lower__block_end(L *l, int b) {
  const GenBlock *k = &l->c->blocks[b];
  const GenOp *o = &l->c->ops[k->op];
  if (o->tok < 0)
    return;
  int e;
  if (o->kind == GEN_OP_IF && lower__has(l, LOWER_FAULT_IF_RESULT_STALE))
    e = lower__emit_create(l, o->ctx, LOWER_EVENT_CREATE, k->op); /* never recorded */
  else if (o->kind == GEN_OP_BRANCH && !k->taken && lower__has(l, LOWER_FAULT_MERGE_FIRST_PRED))
    /* the first successor's token: what the dead block passes */
    e = k->ninputs ? lower__to_event(l, o->ctx, k->inputs[0].outer, k->op)
                   : lower__emit_create(l, o->ctx, LOWER_EVENT_CREATE, k->op);
  else
    e = lower__to_event(l, o->ctx, k->yield, k->op);
  l->tok_slot[o->tok] = e;
}

/* A for op: its body once per iteration, each one's yield carried (as an event) into the next. */
int lower__for(L *l, int i, int primary, const uint8_t *need) {
  const GenOp *o = &l->c->ops[i];
  const GenBlock *k = &l->c->blocks[o->block];
  (void)primary, (void)need;
  int first = lower__hand_event(l, o->ctx, k->inputs[0].outer, i), iter = first;
  for (int it = 0; it < k->trips && l->rc == 0; it++) {
    l->tok_slot[k->inputs[0].tok] = lower__has(l, LOWER_FAULT_LOOP_CARRIED_INITIAL) ? first : iter;
    for (int j = k->first; j <= k->last; j++)
      if (l->c->ops[j].blk == o->block)
        l->op(l, j);
    iter = lower__to_event(l, o->ctx, k->yield, i);
  }
  l->tok_slot[o->tok] = iter;
  return -1;
}
