/*
 * builtin.c: the builtin lowering, a C reference of MLIR's gpu-to-llvm with upstream-main
 * semantics (../shared/reference/mlir-gpu-async.md) and without upstream's leaks.
 *
 * - Inside a context a token is a stream; a token that crosses contexts (a region input,
 *   an awaited value) is an event. Which one is known statically from where it is defined.
 * - An async op runs on its first stream dependency (or a new stream when it has none). Every
 *   other stream dependency gets an event created and recorded right after that dependency's
 *   defining op; the op's stream waits on it. Event dependencies are waited on directly.
 *   gpu.wait async always creates a new stream that waits on all its dependencies.
 * - A launch given an explicit stream runs on it: the stream waits for every dependency (an
 *   event recorded after each stream dependency's definition), and the launch's token is an
 *   event recorded on that stream after it. The program's stream ops are calls on its slot.
 * - A token that crosses into a call, if, for or branch body (an argument, an iter_arg, a block
 *   argument) or out of it (the op's token) is an event: one is recorded on the stream of a
 *   stream token. A body runs inline; a for's body is lowered once per iteration, the carried
 *   event of one iteration being the input of the next.
 * - A sync gpu.wait synchronizes each stream or event dependency. Sync alloc/dealloc use a
 *   null stream. An async dealloc first synchronizes its stream on the host, because
 *   mgpuMemFree is immediate and not stream-ordered.
 * - async.yield records one event per consumer of each yielded token (each consumer owns and
 *   destroys its event, as gpu-async-region's single-use rule intends).
 * - Every stream and event is destroyed exactly once, right after its last use (a post-pass
 *   over each function); a yielded event belongs to its consumer.
 */
#include "lower.h"
#include "mlir.h"

#include "../runner/kernels.h"

#include <stdio.h>
#include <string.h>

/* ---- lowering state ---- */

typedef struct L {
  const GenCase *c;
  unsigned faults;
  LowerProgram *p;
  AfErr *err;
  int rc;
  int *tok_slot; /* slot of each token in its function */
  uint8_t *tok_event;
  int *await_consumer; /* per op */
  int *input_consumer; /* per region * 4 */
  /* event requests: for each op and dep position, the event slot recorded for it */
  int *req_slot;  /* nops * GEN_MAX_DEPS, -1: none */
  uint8_t *needs; /* nops * GEN_MAX_DEPS: 1 if that dep needs an event */
  int *req_head;  /* per token: first request (op*4+d) in a linked list, -1 */
  int *req_next;
  int *stream_slot; /* per explicit stream of the case: its slot */
  /* rocm flavour: per op, the host staging buffer of an observe of host_shared memory (a copy
   * of it) or of a 16-bit memset (one element of its value, for what memset32 cannot set) */
  int rocm;
  int *stage; /* per op, -1: none */
} L;

static int has(const L *l, int f) {
  return (l->faults >> f) & 1u;
}

static LowerInstr *emit(L *l, int fn, int opc, int op) {
  LowerFunc *f = &l->p->funcs[fn];
  if (l->rc)
    return NULL;
  if (af_grow((void **)&f->instrs, &f->capinstrs, f->ninstrs + 1, sizeof(LowerInstr))) {
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

static int new_slot(L *l, int fn) {
  return l->p->funcs[fn].nslots++;
}

static int emit_create(L *l, int fn, int opc, int op) {
  int s = new_slot(l, fn);
  LowerInstr *in = emit(l, fn, opc, op);
  if (in)
    in->a = s;
  return s;
}

static void emit2(L *l, int fn, int opc, int op, int a, int b) {
  LowerInstr *in = emit(l, fn, opc, op);
  if (in) {
    in->a = a;
    in->b = b;
  }
}

static int is_event_tok(const L *l, int t) {
  return l->tok_event[t];
}

/* Whether op o runs on its explicit stream (a launch given one, lowered without the fault). */
static int on_own_stream(const L *l, const GenOp *o) {
  return o->kind == GEN_OP_LAUNCH && o->stream >= 0 && !has(l, LOWER_FAULT_STREAM_IGNORED);
}

/* Which deps of op i need an event recorded after their definition; and the primary. */
static int plan_op(const L *l, int i, uint8_t *need) {
  const GenOp *o = &l->c->ops[i];
  memset(need, 0, GEN_MAX_DEPS);
  int primary = -1;
  int n = o->ndeps;
  if (has(l, LOWER_FAULT_DROP_EXTRA_DEPS) && n > 1)
    n = 1;
  switch (o->kind) {
  case GEN_OP_HOST_WAIT:
  case GEN_OP_OBSERVE:
  case GEN_OP_EXECUTE:
  case GEN_OP_AWAIT:
    return -1;
  case GEN_OP_MEMCPY:
    if (has(l, LOWER_FAULT_COPY_WRONG_STREAM))
      return -1;
    break;
  case GEN_OP_ALLOC:
  case GEN_OP_DEALLOC:
    if (!o->async)
      return -1;
    break;
  default:
    break;
  }
  if (o->kind != GEN_OP_WAIT_ASYNC && !on_own_stream(l, o))
    for (int d = 0; d < n && primary < 0; d++)
      if (!is_event_tok(l, o->deps[d]))
        primary = d;
  for (int d = 0; d < n; d++)
    if (d != primary && !is_event_tok(l, o->deps[d]))
      need[d] = 1;
  return primary;
}

/* Creates and records the events other ops requested on token t (defined on stream s). */
static void record_requests(L *l, int fn, int t, int s, int op) {
  for (int r = l->req_head[t]; r >= 0; r = l->req_next[r]) {
    int e = emit_create(l, fn, LOWER_EVENT_CREATE, op);
    emit2(l, fn, LOWER_EVENT_RECORD, op, e, s);
    l->req_slot[r] = e;
  }
}

/* The stream an async op runs on, with its other dependencies waited on. */
static int op_stream(L *l, int fn, int i, int primary, const uint8_t *need, int honor) {
  const GenOp *o = &l->c->ops[i];
  int s = primary >= 0 ? l->tok_slot[o->deps[primary]] : emit_create(l, fn, LOWER_STREAM_CREATE, i);
  if (!honor)
    return s;
  int n = o->ndeps;
  if (has(l, LOWER_FAULT_DROP_EXTRA_DEPS) && n > 1)
    n = 1;
  for (int d = 0; d < n; d++) {
    if (d == primary)
      continue;
    int t = o->deps[d];
    int e = need[d] ? l->req_slot[i * GEN_MAX_DEPS + d] : l->tok_slot[t];
    if (e >= 0)
      emit2(l, fn, LOWER_STREAM_WAIT_EVENT, i, s, e);
  }
  return s;
}

/* A fresh event for token t, recorded where its work is (an event token is first waited on by
 * a fresh stream), as a region's capture and a block's input get: the handover is visible in
 * the trace. -1 when t has no slot. */
static int hand_event(L *l, int fn, int t, int op) {
  int s = t >= 0 ? l->tok_slot[t] : -1;
  if (s < 0)
    return -1;
  if (is_event_tok(l, t)) {
    int ws = emit_create(l, fn, LOWER_STREAM_CREATE, op);
    emit2(l, fn, LOWER_STREAM_WAIT_EVENT, op, ws, s);
    s = ws;
  }
  int e = emit_create(l, fn, LOWER_EVENT_CREATE, op);
  emit2(l, fn, LOWER_EVENT_RECORD, op, e, s);
  return e;
}

/* Before spawning region r: an event for each token it captures, recorded where the token's
 * work is (an event token is first waited on by a fresh stream), handed over as the region's
 * value nvalues + k. The region owns (and destroys) it. */
static void hand_captures(L *l, int fn, int i, int r) {
  const GenRegion *g = &l->c->regions[r];
  if (has(l, LOWER_FAULT_CAPTURE_DROPPED))
    return;
  for (int k = 0; k < g->ncaptures; k++) {
    int e = hand_event(l, fn, g->captures[k].outer, i);
    if (e < 0)
      continue;
    LowerInstr *in = emit(l, fn, LOWER_YIELD, i);
    if (in) {
      in->a = e;
      in->region = r;
      in->vidx = g->nyields + k;
      in->consumer = 0;
    }
  }
}

/* Stream s waits for every dependency of op i: an event recorded for each stream dependency
 * (need), the event itself for an event dependency. */
static void wait_deps(L *l, int fn, int i, int s, const uint8_t *need) {
  const GenOp *o = &l->c->ops[i];
  int n = o->ndeps;
  if (has(l, LOWER_FAULT_DROP_EXTRA_DEPS) && n > 1)
    n = 1;
  for (int d = 0; d < n; d++) {
    int e = need[d] ? l->req_slot[i * GEN_MAX_DEPS + d] : l->tok_slot[o->deps[d]];
    if (e >= 0) /* (no slot: a dependency the capture_dropped fault lost) */
      emit2(l, fn, LOWER_STREAM_WAIT_EVENT, i, s, e);
  }
}

/* Token t as an event in function fn: its own slot when it is one, else an event recorded on its
 * stream (-1 when t has no slot). */
static int to_event(L *l, int fn, int t, int op) {
  int s = t >= 0 ? l->tok_slot[t] : -1;
  if (s < 0 || is_event_tok(l, t))
    return s;
  int e = emit_create(l, fn, LOWER_EVENT_CREATE, op);
  emit2(l, fn, LOWER_EVENT_RECORD, op, e, s);
  return e;
}

/* A call, if or branch op: its block's inputs, as events inside. */
static void block_entry(L *l, int i) {
  const GenOp *o = &l->c->ops[i];
  const GenBlock *k = &l->c->blocks[o->block];
  int dropped = o->kind == GEN_OP_CALL && has(l, LOWER_FAULT_CALL_ARG_DROPPED);
  for (int q = 0; q < k->ninputs; q++) /* (dropped: the callee's ops wait for nothing) */
    l->tok_slot[k->inputs[q].tok] = dropped ? -1 : hand_event(l, o->ctx, k->inputs[q].outer, i);
}

/* The end of block b: the op's token, an event of the yielded one. */
static void block_end(L *l, int b) {
  const GenBlock *k = &l->c->blocks[b];
  const GenOp *o = &l->c->ops[k->op];
  if (o->tok < 0)
    return;
  int e;
  if (o->kind == GEN_OP_IF && has(l, LOWER_FAULT_IF_RESULT_STALE))
    e = emit_create(l, o->ctx, LOWER_EVENT_CREATE, k->op); /* never recorded: nothing to wait */
  else if (o->kind == GEN_OP_BRANCH && !k->taken && has(l, LOWER_FAULT_MERGE_FIRST_PRED))
    /* the first successor's token: what the dead block passes */
    e = k->ninputs ? to_event(l, o->ctx, k->inputs[0].outer, k->op)
                   : emit_create(l, o->ctx, LOWER_EVENT_CREATE, k->op);
  else
    e = to_event(l, o->ctx, k->yield, k->op);
  l->tok_slot[o->tok] = e;
}

static void lower_op(L *l, int i);

/* A for op: its body once per iteration, each one's yield carried (as an event) into the next. */
static void lower_for(L *l, int i) {
  const GenOp *o = &l->c->ops[i];
  const GenBlock *k = &l->c->blocks[o->block];
  int first = hand_event(l, o->ctx, k->inputs[0].outer, i), iter = first;
  for (int it = 0; it < k->trips && l->rc == 0; it++) {
    l->tok_slot[k->inputs[0].tok] = has(l, LOWER_FAULT_LOOP_CARRIED_INITIAL) ? first : iter;
    for (int j = k->first; j <= k->last; j++)
      if (l->c->ops[j].blk == o->block)
        lower_op(l, j);
    iter = to_event(l, o->ctx, k->yield, i);
  }
  l->tok_slot[o->tok] = iter;
}

/* The program's own stream ops. */
static void lower_stream_op(L *l, int i) {
  const GenOp *o = &l->c->ops[i];
  int fn = o->ctx;
  if (o->kind == GEN_OP_STREAM_CREATE) {
    int s = new_slot(l, fn);
    LowerInstr *in = emit(l, fn, LOWER_STREAM_CREATE, i);
    if (in) {
      in->a = s;
      in->imm = 1; /* its stream_destroy op destroys it */
    }
    l->stream_slot[o->stream] = s;
    return;
  }
  int s = l->stream_slot[o->stream];
  emit2(l, fn, LOWER_STREAM_SYNC, i, s, -1);
  if (o->kind == GEN_OP_STREAM_DESTROY)
    emit2(l, fn, LOWER_STREAM_DESTROY, i, s, -1);
}

/* A launch: on its explicit stream, or on the stream its dependencies give. Returns its token's
 * slot. */
static int lower_launch(L *l, int i, int primary, const uint8_t *need) {
  const GenOp *o = &l->c->ops[i];
  int fn = o->ctx, s;
  int early = has(l, LOWER_FAULT_RECORD_EARLY);
  LowerInstr *in;
  if (on_own_stream(l, o)) {
    s = l->stream_slot[o->stream];
    wait_deps(l, fn, i, s, need);
  } else {
    s = op_stream(l, fn, i, primary, need, 1);
    if (early)
      record_requests(l, fn, o->tok, s, i);
  }
  in = emit(l, fn, LOWER_LAUNCH, i);
  if (in) {
    in->kernel = o->kernel;
    in->nbufs = (uint8_t)o->nargs;
    int32_t len, len0 = 0;
    for (int a = 0; a < o->nargs; a++) {
      in->bufs[a] = o->args[a];
      gen_op_view(l->c, o, a, &in->voff[a], &len, &in->vstride[a]);
      len0 = a ? len0 : len;
      if (has(l, LOWER_FAULT_VIEW_OFFSET_DROPPED))
        in->voff[a] = 0; /* the subview's base pointer, its offset lost */
      if (has(l, LOWER_FAULT_VIEW_STRIDE_DROPPED))
        in->vstride[a] = 1;
    }
    in->b = s;
    in->imm = o->value;
    in->imm2 = len0;
  }
  if (on_own_stream(l, o)) { /* its token: an event after it, not the program's stream */
    int e = emit_create(l, fn, LOWER_EVENT_CREATE, i);
    emit2(l, fn, LOWER_EVENT_RECORD, i, e, s);
    s = e;
  }
  return s;
}

/* A memcpy or memset on stream s: one call over a whole buffer or a contiguous view, one per
 * element of a strided view (mgpuMemcpy and mgpuMemset copy and set contiguous memory). */
/* A copy of bytes between buf at off and buf2 at off2 on stream slot s. */
static void emit_copy(L *l, int fn, int i, int s, int buf, int64_t off, int buf2, int64_t off2,
                      int64_t bytes) {
  LowerInstr *in = emit(l, fn, LOWER_MEMCPY, i);
  if (in == NULL)
    return;
  in->buf = buf;
  in->b = s;
  in->off = off;
  in->buf2 = buf2;
  in->off2 = off2;
  in->imm = bytes;
}

/* rocm: MLIR's ROCm wrappers have no mgpuMemset16. n 16-bit elements from byte off: the pairs on
 * 4-byte boundaries with mgpuMemset32 (the value twice), an element left at either end copied
 * from the op's staging buffer, which holds the value. */
static void memset16_rocm(L *l, int fn, int i, int s, int buf, int64_t off, int64_t n, uint16_t v) {
  if (n > 0 && off % 4 != 0) {
    emit_copy(l, fn, i, s, buf, off, l->stage[i], 0, 2);
    off += 2;
    n--;
  }
  if (n >= 2) {
    LowerInstr *in = emit(l, fn, LOWER_MEMSET32, i);
    if (in == NULL)
      return;
    in->buf = buf;
    in->b = s;
    in->off = off;
    in->imm = (uint32_t)v | (uint32_t)v << 16;
    in->imm2 = n / 2;
    off += n / 2 * 4;
  }
  if (n % 2)
    emit_copy(l, fn, i, s, buf, off, l->stage[i], 0, 2);
}

static void emit_data(L *l, int fn, int i, int s) {
  const GenCase *c = l->c;
  const GenOp *o = &c->ops[i];
  int e = c->bufs[o->buf].elem, es = gen_elem_size(e), copy = o->kind == GEN_OP_MEMCPY;
  int32_t od, ld, sd, os = 0, ls, ss = 1;
  gen_op_view(c, o, 0, &od, &ld, &sd);
  if (copy)
    gen_op_view(c, o, 1, &os, &ls, &ss);
  if (has(l, LOWER_FAULT_VIEW_OFFSET_DROPPED))
    od = os = 0; /* the subview's base pointer, its offset lost */
  if (has(l, LOWER_FAULT_VIEW_STRIDE_DROPPED))
    sd = ss = 1; /* a strided view taken as contiguous */
  int runs = sd == 1 && ss == 1 ? 1 : ld, per = runs == 1 ? ld : 1;
  int32_t w[2];
  gen_elem_words(e, o->value, w);
  if (!copy && e == GEN_ELEM_I16 && l->rocm) {
    for (int k = 0; k < runs; k++)
      memset16_rocm(l, fn, i, s, o->buf, (int64_t)(od + k * sd) * 2, per, (uint16_t)w[0]);
    return;
  }
  for (int k = 0; k < runs; k++) {
    LowerInstr *in = emit(l, fn,
                          copy                ? LOWER_MEMCPY
                          : e == GEN_ELEM_I16 ? LOWER_MEMSET16
                                              : LOWER_MEMSET32,
                          i);
    if (in == NULL)
      return;
    in->buf = o->buf;
    in->b = s;
    in->off = (int64_t)(od + k * sd) * es;
    if (copy) {
      in->buf2 = o->src;
      in->off2 = (int64_t)(os + k * ss) * es;
      in->imm = (int64_t)per * (has(l, LOWER_FAULT_COPY_SIZE_I32) ? 4 : es);
    } else { /* the value as the element type's bits (an f32's, a 16-bit pattern) */
      in->imm = e == GEN_ELEM_I16 ? (uint16_t)w[0] : (uint32_t)w[0];
      in->imm2 = per;
    }
  }
}

static void lower_op(L *l, int i) {
  const GenCase *c = l->c;
  const GenOp *o = &c->ops[i];
  int fn = o->ctx;
  uint8_t need[GEN_MAX_DEPS];
  int primary = plan_op(l, i, need);
  int s = -1;
  int early = has(l, LOWER_FAULT_RECORD_EARLY);
  LowerInstr *in;
  switch (o->kind) {
  case GEN_OP_WAIT_ASYNC:
    s = emit_create(l, fn, LOWER_STREAM_CREATE, i);
    if (early)
      record_requests(l, fn, o->tok, s, i);
    wait_deps(l, fn, i, s, need);
    break;
  case GEN_OP_ALLOC:
    if (o->async) {
      s = op_stream(l, fn, i, primary, need, 1);
      if (early)
        record_requests(l, fn, o->tok, s, i);
    }
    in = emit(l, fn, LOWER_MEM_ALLOC, i);
    if (in) {
      in->buf = o->buf;
      in->b = s;
      in->imm = (int64_t)c->bufs[o->buf].n * gen_elem_size(c->bufs[o->buf].elem);
      in->imm2 = o->mode == GEN_ALLOC_HOST_SHARED;
    }
    break;
  case GEN_OP_DEALLOC:
    if (o->async) {
      s = op_stream(l, fn, i, primary, need, 1);
      if (early)
        record_requests(l, fn, o->tok, s, i);
      if (!has(l, LOWER_FAULT_FREE_UNORDERED))
        emit2(l, fn, LOWER_STREAM_SYNC, i, s, -1);
    }
    in = emit(l, fn, LOWER_MEM_FREE, i);
    if (in) {
      in->buf = o->buf;
      in->b = s;
    }
    break;
  case GEN_OP_MEMCPY:
    if (has(l, LOWER_FAULT_COPY_WRONG_STREAM))
      s = emit_create(l, fn, LOWER_STREAM_CREATE, i);
    else
      s = op_stream(l, fn, i, primary, need, 1);
    if (early)
      record_requests(l, fn, o->tok, s, i);
    emit_data(l, fn, i, s);
    break;
  case GEN_OP_MEMSET:
    s = op_stream(l, fn, i, primary, need, 1);
    if (early)
      record_requests(l, fn, o->tok, s, i);
    emit_data(l, fn, i, s);
    break;
  case GEN_OP_LAUNCH:
    s = lower_launch(l, i, primary, need);
    break;
  case GEN_OP_STREAM_CREATE:
  case GEN_OP_STREAM_SYNC:
  case GEN_OP_STREAM_DESTROY:
    lower_stream_op(l, i);
    break;
  case GEN_OP_CALL:
  case GEN_OP_IF:
  case GEN_OP_BRANCH:
    block_entry(l, i);
    return; /* its token: at the block's end */
  case GEN_OP_FOR:
    lower_for(l, i);
    return;
  case GEN_OP_HOST_WAIT:
    if (has(l, LOWER_FAULT_DROP_HOST_WAIT))
      break;
    for (int d = 0; d < o->ndeps; d++) {
      int t = o->deps[d];
      if (l->tok_slot[t] >= 0)
        emit2(l, fn, is_event_tok(l, t) ? LOWER_EVENT_SYNC : LOWER_STREAM_SYNC, i, l->tok_slot[t],
              -1);
    }
    break;
  case GEN_OP_OBSERVE: {
    int b = o->buf;
    if (l->stage[i] >= 0) { /* rocm: host_shared is device memory; read a copy of it */
      s = emit_create(l, fn, LOWER_STREAM_CREATE, i);
      b = l->stage[i];
      emit_copy(l, fn, i, s, b, 0, o->buf, 0,
                (int64_t)c->bufs[o->buf].n * gen_elem_size(c->bufs[o->buf].elem));
      emit2(l, fn, LOWER_STREAM_SYNC, i, s, -1);
    }
    in = emit(l, fn, LOWER_OBSERVE, i);
    if (in) {
      in->buf = b;
      in->imm = i;
    }
    break;
  }
  case GEN_OP_EXECUTE:
    hand_captures(l, fn, i, o->region);
    in = emit(l, fn, LOWER_SPAWN, i);
    if (in)
      in->region = o->region;
    break;
  case GEN_OP_AWAIT:
    in = emit(l, fn, LOWER_AWAIT, i);
    if (in)
      in->region = o->region;
    if (o->vidx >= 0) {
      int slot = new_slot(l, fn);
      in = emit(l, fn, LOWER_TAKE, i);
      if (in) {
        in->a = slot;
        in->region = o->region;
        in->vidx = o->vidx;
        in->consumer = l->await_consumer[i];
      }
      l->tok_slot[o->tok] = slot;
    }
    break;
  }
  if (o->tok >= 0 && o->kind != GEN_OP_AWAIT) {
    l->tok_slot[o->tok] = s;
    if (!early)
      record_requests(l, fn, o->tok, s, i);
  }
}

static void open_region(L *l, int r) {
  const GenRegion *g = &l->c->regions[r];
  for (int k = 0; k < g->ninputs; k++) {
    int slot = new_slot(l, r);
    LowerInstr *in = emit(l, r, LOWER_TAKE, g->exec_op);
    if (in) {
      in->a = slot;
      in->region = g->inputs[k].region;
      in->vidx = g->inputs[k].vidx;
      in->consumer = l->input_consumer[r * GEN_MAX_REGION_IO + k];
      in->imm = 1; /* a region input: the region starts after its source yielded it */
    }
    l->tok_slot[g->inputs[k].tok] = slot;
  }
  if (has(l, LOWER_FAULT_CAPTURE_DROPPED))
    return; /* the captured tokens have no slot here: ops that depend on them wait for nothing */
  for (int k = 0; k < g->ncaptures; k++) {
    int slot = new_slot(l, r);
    LowerInstr *in = emit(l, r, LOWER_TAKE, g->exec_op);
    if (in) {
      in->a = slot;
      in->region = r;
      in->vidx = g->nyields + k;
      in->consumer = 0;
    }
    l->tok_slot[g->captures[k].tok] = slot;
  }
}

static void close_region(L *l, int r) {
  const GenRegion *g = &l->c->regions[r];
  const LowerRegionInfo *ri = &l->p->regions[r];
  for (int k = 0; k < g->nyields; k++) {
    int t = g->yields[k];
    int src = l->tok_slot[t];
    if (ri->nconsumers[k] == 0)
      continue;
    if (src < 0) { /* a token without a slot (capture_dropped): a stream with no work */
      src = emit_create(l, r, LOWER_STREAM_CREATE, -1);
      l->tok_slot[t] = src;
      l->tok_event[t] = 0;
    }
    if (has(l, LOWER_FAULT_YIELD_STREAM)) {
      for (int j = 0; j < ri->nconsumers[k]; j++) {
        LowerInstr *in = emit(l, r, LOWER_YIELD, -1);
        if (in) {
          in->a = src;
          in->region = r;
          in->vidx = k;
          in->consumer = j;
        }
      }
      continue;
    }
    int s = src;
    if (is_event_tok(l, t)) { /* re-yield of an event: one stream waits on it */
      s = emit_create(l, r, LOWER_STREAM_CREATE, -1);
      emit2(l, r, LOWER_STREAM_WAIT_EVENT, -1, s, src);
    }
    for (int j = 0; j < ri->nconsumers[k]; j++) {
      int e = emit_create(l, r, LOWER_EVENT_CREATE, -1);
      emit2(l, r, LOWER_EVENT_RECORD, -1, e, s);
      LowerInstr *in = emit(l, r, LOWER_YIELD, -1);
      if (in) {
        in->a = e;
        in->region = r;
        in->vidx = k;
        in->consumer = j;
      }
    }
  }
  emit(l, r, LOWER_DONE, -1);
}

/* Slots an instruction reads (as handles). */
static int uses(const LowerInstr *in, int *out) {
  int n = 0;
  switch (in->opc) {
  case LOWER_STREAM_CREATE:
  case LOWER_EVENT_CREATE:
  case LOWER_TAKE:
  case LOWER_STREAM_SYNC:
  case LOWER_EVENT_SYNC:
    out[n++] = in->a;
    break;
  case LOWER_STREAM_WAIT_EVENT:
  case LOWER_EVENT_RECORD:
    out[n++] = in->a;
    out[n++] = in->b;
    break;
  case LOWER_MEM_ALLOC:
  case LOWER_MEM_FREE:
  case LOWER_MEMCPY:
  case LOWER_MEMSET32:
  case LOWER_MEMSET16:
  case LOWER_LAUNCH:
    if (in->b >= 0)
      out[n++] = in->b;
    break;
  default:
    break;
  }
  return n;
}

/* Inserts one destroy per stream/event slot right after its last use (or, with the
 * early_stream_destroy fault, a stream's first use after its creation). */
static int place_destroys(L *l, LowerFunc *f) {
  int ns = f->nslots;
  int *point = af_malloc(sizeof(int) * (size_t)(ns + 1));
  int *nuse = af_calloc((size_t)ns + 1, sizeof(int));
  uint8_t *kind = af_calloc((size_t)ns + 1, 1); /* 1 stream, 2 event */
  uint8_t *given = af_calloc((size_t)ns + 1, 1);
  uint8_t *frozen = af_calloc((size_t)ns + 1, 1); /* the destroy point is fixed */
  LowerInstr *out = NULL;
  int rc = 0;
  if (!point || !nuse || !kind || !given || !frozen) {
    rc = af_err_set(l->err, AF_ENOMEM, "out of memory lowering");
    goto done;
  }
  for (int s = 0; s < ns; s++)
    point[s] = -1;
  int early = has(l, LOWER_FAULT_EARLY_STREAM_DESTROY);
  int wait_destroys = has(l, LOWER_FAULT_WAIT_DESTROYS);
  for (int i = 0; i < f->ninstrs; i++) {
    const LowerInstr *in = &f->instrs[i];
    int host_wait =
        in->op >= 0 && in->op < l->c->nops && l->c->ops[in->op].kind == GEN_OP_HOST_WAIT;
    if (in->opc == LOWER_STREAM_CREATE)
      kind[in->a] = in->imm ? 0 : 1; /* the program's own stream: its stream_destroy op */
    if (in->opc == LOWER_EVENT_CREATE || in->opc == LOWER_TAKE)
      kind[in->a] = 2;
    if (in->opc == LOWER_YIELD) {
      given[in->a] = 1;
      continue;
    }
    int u[2];
    int n = uses(in, u);
    for (int k = 0; k < n; k++) {
      int s = u[k];
      if (s < 0)
        continue;
      nuse[s]++;
      if (frozen[s])
        continue;
      point[s] = i;
      if (early && kind[s] == 1 && nuse[s] == 2)
        frozen[s] = 1; /* the first use after creation */
      if (wait_destroys && kind[s] == 1 && host_wait && in->opc == LOWER_STREAM_SYNC)
        frozen[s] = 1; /* the host's wait on it */
    }
  }
  int cap = f->ninstrs + ns + 1;
  out = af_malloc(sizeof(LowerInstr) * (size_t)cap);
  if (out == NULL) {
    rc = af_err_set(l->err, AF_ENOMEM, "out of memory lowering");
    goto done;
  }
  int n = 0;
  for (int i = 0; i < f->ninstrs; i++) {
    out[n++] = f->instrs[i];
    for (int s = 0; s < ns; s++) {
      if (point[s] != i || given[s] || kind[s] == 0)
        continue;
      LowerInstr d;
      memset(&d, 0, sizeof d);
      d.opc = kind[s] == 1 ? LOWER_STREAM_DESTROY : LOWER_EVENT_DESTROY;
      d.a = s;
      d.b = d.buf = d.buf2 = d.region = d.vidx = d.consumer = -1;
      d.op = f->instrs[i].op;
      out[n++] = d;
    }
  }
  af_free(f->instrs);
  f->instrs = out;
  f->ninstrs = n;
  f->capinstrs = cap;
  out = NULL;
done:
  af_free(out);
  af_free(frozen);
  af_free(given);
  af_free(kind);
  af_free(nuse);
  af_free(point);
  return rc;
}

void lower_program_free(LowerProgram *p) {
  if (p == NULL)
    return;
  for (int i = 0; p->funcs && i < p->nfuncs; i++)
    af_free(p->funcs[i].instrs);
  af_free(p->funcs);
  af_free(p->regions);
  af_free(p->buf_elems);
  af_free(p->buf_host);
  af_free(p->buf_elem);
  af_free(p);
}

/* main's prologue: the kernel module, its functions and the host buffers */
static void prologue(L *l) {
  const GenCase *c = l->c;
  emit(l, 0, LOWER_MODULE_LOAD, -1);
  for (int k = 0; k < KERNEL__COUNT; k++) {
    LowerInstr *in = emit(l, 0, LOWER_GET_FUNCTION, -1);
    if (in)
      in->kernel = (uint8_t)k;
  }
  for (int b = 0; b < c->nbufs; b++) {
    if (c->bufs[b].kind != GEN_BUF_HOST)
      continue;
    LowerInstr *in = emit(l, 0, LOWER_HOST_INIT, -1);
    if (in) {
      in->buf = b;
      in->imm = c->bufs[b].init;
    }
  }
  for (int i = 0; i < c->nops; i++) { /* rocm's staging buffers */
    LowerInstr *in = l->stage[i] >= 0 ? emit(l, 0, LOWER_HOST_INIT, -1) : NULL;
    if (in == NULL)
      continue;
    in->buf = l->stage[i];
    if (c->ops[i].kind == GEN_OP_MEMSET) { /* holds the memset's 16-bit value */
      int32_t w[2];
      gen_elem_words(GEN_ELEM_I16, c->ops[i].value, w);
      in->imm = (uint16_t)w[0];
      in->imm2 = 1;
    }
  }
}

/* rocm: the staging buffers are host buffers of the element type of the buffer they stage */
static void stage_bufs(L *l) {
  const GenCase *c = l->c;
  LowerProgram *p = l->p;
  for (int i = 0; i < c->nops; i++) {
    int b = l->stage[i], src = c->ops[i].buf;
    if (b < 0)
      continue;
    p->buf_host[b] = 1;
    p->buf_elem[b] = c->bufs[src].elem;
    p->buf_elems[b] = c->ops[i].kind == GEN_OP_MEMSET ? 1 : c->bufs[src].n;
  }
}

/* rocm: which ops need a staging buffer (l->stage), numbered from the case's buffer count.
 * Returns how many, or -1 out of memory. */
static int plan_stages(L *l) {
  const GenCase *c = l->c;
  int n = 0;
  for (int i = 0; i < c->nops; i++)
    l->stage[i] = -1;
  if (!l->rocm)
    return 0;
  uint8_t *shared = af_calloc((size_t)c->nbufs + 1, 1); /* allocated host_shared */
  if (shared == NULL)
    return -1;
  for (int i = 0; i < c->nops; i++)
    if (c->ops[i].kind == GEN_OP_ALLOC && c->ops[i].mode == GEN_ALLOC_HOST_SHARED)
      shared[c->ops[i].buf] = 1;
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    if ((o->kind == GEN_OP_OBSERVE && shared[o->buf]) ||
        (o->kind == GEN_OP_MEMSET && c->bufs[o->buf].elem == GEN_ELEM_I16))
      l->stage[i] = c->nbufs + n++;
  }
  af_free(shared);
  return n;
}

int lower_builtin(const GenCase *c, const LowerSpec *spec, LowerProgram **out, AfErr *err) {
  return lower_builtin_abi(c, spec, 0, out, err);
}

int lower_builtin_abi(const GenCase *c, const LowerSpec *spec, int rocm, LowerProgram **out,
                      AfErr *err) {
  *out = NULL;
  L l;
  memset(&l, 0, sizeof l);
  l.c = c;
  l.faults = spec->faults;
  l.err = err;
  l.rocm = rocm;
  int nt = c->ntoks + 1, no = c->nops + 1, nr = c->nregions;
  LowerProgram *p = af_calloc(1, sizeof *p);
  l.p = p;
  l.stage = af_malloc(sizeof(int) * (size_t)no);
  int nstage = p && l.stage ? plan_stages(&l) : -1;
  if (nstage < 0) {
    af_free(p);
    af_free(l.stage);
    return af_err_set(err, AF_ENOMEM, "out of memory lowering");
  }
  int nb = c->nbufs + nstage;
  p->nfuncs = nr;
  p->nbufs = nb;
  p->spin = c->spin;
  p->funcs = af_calloc((size_t)nr, sizeof(LowerFunc));
  p->regions = af_calloc((size_t)nr, sizeof(LowerRegionInfo));
  p->buf_elems = af_malloc(sizeof(int32_t) * (size_t)(nb + 1));
  p->buf_host = af_calloc((size_t)nb + 1, 1);
  p->buf_elem = af_calloc((size_t)nb + 1, 1);
  l.tok_slot = af_malloc(sizeof(int) * (size_t)nt);
  l.tok_event = af_calloc((size_t)nt, 1);
  l.await_consumer = af_malloc(sizeof(int) * (size_t)no);
  l.input_consumer = af_malloc(sizeof(int) * (size_t)nr * GEN_MAX_REGION_IO);
  l.req_slot = af_malloc(sizeof(int) * (size_t)no * GEN_MAX_DEPS);
  l.needs = af_calloc((size_t)no * GEN_MAX_DEPS, 1);
  l.req_head = af_malloc(sizeof(int) * (size_t)nt);
  l.req_next = af_malloc(sizeof(int) * (size_t)no * GEN_MAX_DEPS);
  l.stream_slot = af_calloc((size_t)c->nstreams + 1, sizeof(int));
  if (!p->funcs || !p->regions || !p->buf_elems || !p->buf_host || !p->buf_elem || !l.tok_slot ||
      !l.tok_event || !l.await_consumer || !l.input_consumer || !l.req_slot || !l.needs ||
      !l.req_head || !l.req_next || !l.stream_slot) {
    l.rc = af_err_set(err, AF_ENOMEM, "out of memory lowering");
    goto out;
  }
  for (int b = 0; b < c->nbufs; b++) {
    p->buf_elems[b] = c->bufs[b].n;
    p->buf_host[b] = c->bufs[b].kind == GEN_BUF_HOST;
    p->buf_elem[b] = c->bufs[b].elem;
  }
  stage_bufs(&l);
  for (int t = 0; t < nt; t++) {
    l.tok_slot[t] = -1;
    l.req_head[t] = -1;
  }
  for (int i = 0; i < no * GEN_MAX_DEPS; i++)
    l.req_slot[i] = -1;
  /* token kinds and consumers of region values, in inline order */
  for (int r = 1; r < nr; r++) {
    const GenRegion *g = &c->regions[r];
    p->funcs[r].region = r;
    p->regions[r].parent = g->parent;
    p->regions[r].ninputs = g->ninputs;
    p->regions[r].nvalues = g->nyields;
    p->regions[r].ncaptures = g->ncaptures;
    for (int k = 0; k < g->ncaptures; k++) /* the region receives an event for each */
      l.tok_event[g->captures[k].tok] = 1;
    for (int k = 0; k < g->ninputs; k++) {
      p->regions[r].input_region[k] = g->inputs[k].region;
      p->regions[r].input_vidx[k] = g->inputs[k].vidx;
      l.tok_event[g->inputs[k].tok] = 1;
    }
  }
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    if (on_own_stream(&l, o))
      l.tok_event[o->tok] = 1;
    if (o->kind >= GEN_OP_CALL) { /* a block's tokens across its boundary are events */
      const GenBlock *k = &c->blocks[o->block];
      for (int q = 0; q < k->ninputs; q++)
        l.tok_event[k->inputs[q].tok] = 1;
      if (o->tok >= 0)
        l.tok_event[o->tok] = 1;
    }
    if (o->kind == GEN_OP_AWAIT && o->vidx >= 0) {
      l.tok_event[o->tok] = 1;
      l.await_consumer[i] = p->regions[o->region].nconsumers[o->vidx]++;
    }
    if (o->kind == GEN_OP_EXECUTE) {
      const GenRegion *g = &c->regions[o->region];
      for (int k = 0; k < g->ninputs; k++)
        l.input_consumer[o->region * GEN_MAX_REGION_IO + k] =
            p->regions[g->inputs[k].region].nconsumers[g->inputs[k].vidx]++;
    }
  }
  /* event requests (built in reverse so each list is in op order) */
  for (int i = c->nops - 1; i >= 0; i--) {
    uint8_t need[GEN_MAX_DEPS];
    plan_op(&l, i, need);
    for (int d = GEN_MAX_DEPS - 1; d >= 0; d--) {
      if (!need[d])
        continue;
      int t = c->ops[i].deps[d];
      int r = i * GEN_MAX_DEPS + d;
      l.req_next[r] = l.req_head[t];
      l.req_head[t] = r;
    }
  }
  prologue(&l);
  for (int i = 0; i < c->nops && l.rc == 0; i++) {
    const GenOp *o = &c->ops[i];
    lower_op(&l, i);
    if (o->kind == GEN_OP_EXECUTE)
      open_region(&l, o->region);
    if (o->kind == GEN_OP_FOR && c->blocks[o->block].last > i)
      i = c->blocks[o->block].last; /* (lower_for lowered the body) */
    /* the block that ends here: the one this op is in, or its own when empty */
    int k = o->blk > 0 ? o->blk : o->kind >= GEN_OP_CALL ? o->block : 0;
    if (k > 0 && c->ops[c->blocks[k].op].kind != GEN_OP_FOR &&
        (c->blocks[k].last >= c->blocks[k].first ? c->blocks[k].last : c->blocks[k].op) == i)
      block_end(&l, k);
    for (int r = nr - 1; r >= 1; r--) {
      const GenRegion *g = &c->regions[r];
      int last = g->last >= g->first ? g->last : g->exec_op;
      if (last == i)
        close_region(&l, r);
    }
  }
  emit(&l, 0, LOWER_MODULE_UNLOAD, -1);
  for (int f = 0; f < nr && l.rc == 0; f++)
    l.rc = place_destroys(&l, &p->funcs[f]);
out:
  af_free(l.stage);
  af_free(l.stream_slot);
  af_free(l.req_next);
  af_free(l.req_head);
  af_free(l.needs);
  af_free(l.req_slot);
  af_free(l.input_consumer);
  af_free(l.await_consumer);
  af_free(l.tok_event);
  af_free(l.tok_slot);
  if (l.rc) {
    lower_program_free(p);
    return l.rc;
  }
  *out = p;
  return 0;
}
