/*
 * builtin_emit.c: the builtin lowering's program being built (builtin_int.h): instructions,
 * slots, and the streams and events that stand for tokens. Inside a context a token is a
 * stream; a token that crosses contexts, or a block's boundary, is an event. An async op runs on
 * its first stream dependency; every other stream dependency gets an event recorded right after
 * its defining op (a request), which the op's stream waits on.
 */
#include "builtin_int.h"

#include <string.h>

LowerInstr *lower__emit(L *l, int fn, int opc, int op) {
  LowerFunc *f = &l->p->funcs[fn];
  if (l->rc)
    return NULL;
  /* a function's first instruction makes room for about all of main's (some 3 for each op of
   * the case) or a region's, where doubling from 8 copied the array 4 times a case */
  int need = f->capinstrs ? f->ninstrs + 1 : fn == 0 ? 3 * l->c->nops + 16 : 16;
  if (af_grow((void **)&f->instrs, &f->capinstrs, need, sizeof(LowerInstr))) {
    l->rc = af_err_set(l->err, AF_ENOMEM, "out of memory lowering");
    return NULL;
  }
  LowerInstr *in = &f->instrs[f->ninstrs++];
  memset(in, 0, sizeof *in);
  in->opc = (uint8_t)opc;
  in->a = in->b = in->buf = in->buf2 = -1;
  in->region = in->vidx = in->consumer = -1;
  in->op = op;
  return in;
}

int lower__new_slot(L *l, int fn) {
  return l->p->funcs[fn].nslots++;
}

int lower__emit_create(L *l, int fn, int opc, int op) {
  int s = lower__new_slot(l, fn);
  LowerInstr *in = lower__emit(l, fn, opc, op);
  if (in)
    in->a = s;
  return s;
}

void lower__emit2(L *l, int fn, int opc, int op, int a, int b) {
  LowerInstr *in = lower__emit(l, fn, opc, op);
  if (in) {
    in->a = a;
    in->b = b;
  }
}

void lower__emit_copy(L *l, int fn, int i, int s, int buf, int64_t off, int buf2, int64_t off2,
                      int64_t bytes) {
  LowerInstr *in = lower__emit(l, fn, LOWER_MEMCPY, i);
  if (in == NULL)
    return;
  in->buf = buf;
  in->b = s;
  in->off = off;
  in->buf2 = buf2;
  in->off2 = off2;
  in->imm = bytes;
}

int lower__is_event_tok(const L *l, int t) {
  return l->tok_event[t];
}

int lower__plan_op(const L *l, int i, uint8_t *need) {
  const GenOp *o = &l->c->ops[i];
  memset(need, 0, GEN_MAX_DEPS);
  int primary = -1, n = lower__deps_kept(l, o);
  if (!gen_op_async(o)) /* a host wait synchronizes its dependencies themselves */
    return -1;
  if (o->kind == GEN_OP_MEMCPY && lower__has(l, LOWER_FAULT_COPY_WRONG_STREAM))
    return -1;
  if (o->kind != GEN_OP_WAIT_ASYNC && !lower__on_own_stream(l, o))
    for (int d = 0; d < n && primary < 0; d++)
      if (!lower__is_event_tok(l, o->deps[d]))
        primary = d;
  for (int d = 0; d < n; d++)
    if (d != primary && !lower__is_event_tok(l, o->deps[d]))
      need[d] = 1;
  return primary;
}

void lower__record_requests(L *l, int fn, int t, int s, int op) {
  for (int r = l->req_head[t]; r >= 0; r = l->req_next[r]) {
    int e = lower__emit_create(l, fn, LOWER_EVENT_CREATE, op);
    lower__emit2(l, fn, LOWER_EVENT_RECORD, op, e, s);
    l->req_slot[r] = e;
  }
}

int lower__op_stream(L *l, int fn, int i, int primary, const uint8_t *need, int honor) {
  const GenOp *o = &l->c->ops[i];
  int s = primary >= 0 ? l->tok_slot[o->deps[primary]]
                       : lower__emit_create(l, fn, LOWER_STREAM_CREATE, i);
  if (!honor)
    return s;
  int n = lower__deps_kept(l, o);
  for (int d = 0; d < n; d++) {
    if (d == primary)
      continue;
    int t = o->deps[d];
    int e = need[d] ? l->req_slot[i * GEN_MAX_DEPS + d] : l->tok_slot[t];
    if (e >= 0)
      lower__emit2(l, fn, LOWER_STREAM_WAIT_EVENT, i, s, e);
  }
  return s;
}

void lower__wait_deps(L *l, int fn, int i, int s, const uint8_t *need) {
  const GenOp *o = &l->c->ops[i];
  int n = lower__deps_kept(l, o);
  for (int d = 0; d < n; d++) {
    int e = need[d] ? l->req_slot[i * GEN_MAX_DEPS + d] : l->tok_slot[o->deps[d]];
    if (e >= 0) /* (no slot: a dependency the capture_dropped fault lost) */
      lower__emit2(l, fn, LOWER_STREAM_WAIT_EVENT, i, s, e);
  }
}

/* (an event token is first waited on by a fresh stream, so the handover is visible in the trace,
 * as a region's capture and a block's input get it) */
int lower__hand_event(L *l, int fn, int t, int op) {
  int s = t >= 0 ? l->tok_slot[t] : -1;
  if (s < 0)
    return -1;
  if (lower__is_event_tok(l, t)) {
    int ws = lower__emit_create(l, fn, LOWER_STREAM_CREATE, op);
    lower__emit2(l, fn, LOWER_STREAM_WAIT_EVENT, op, ws, s);
    s = ws;
  }
  int e = lower__emit_create(l, fn, LOWER_EVENT_CREATE, op);
  lower__emit2(l, fn, LOWER_EVENT_RECORD, op, e, s);
  return e;
}

int lower__to_event(L *l, int fn, int t, int op) {
  int s = t >= 0 ? l->tok_slot[t] : -1;
  if (s < 0 || lower__is_event_tok(l, t))
    return s;
  int e = lower__emit_create(l, fn, LOWER_EVENT_CREATE, op);
  lower__emit2(l, fn, LOWER_EVENT_RECORD, op, e, s);
  return e;
}
