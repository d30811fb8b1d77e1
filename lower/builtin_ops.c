/*
 * builtin_ops.c: the builtin lowering of the ops that make runtime calls (lower__<lc>, named by
 * GEN_OP_MAP's rows): gpu.wait async (a new stream that waits on every dependency), allocs and
 * deallocs (a synchronous one on the null stream; an async dealloc first synchronizes its
 * stream on the host, mgpuMemFree being immediate), copies and sets (one call over a contiguous
 * range, one per element of a strided view), launches (on an explicit stream when the case gives
 * one), host waits, observes and the program's own stream ops.
 */
#include "builtin_int.h"

#include "../kernels/kernels.h"

/* An async op's stream, with its dependencies waited on and, under record_early, the events
 * others requested of its token recorded already. */
static int async_stream(L *l, int i, int primary, const uint8_t *need) {
  const GenOp *o = &l->c->ops[i];
  int s = lower__op_stream(l, o->ctx, i, primary, need, 1);
  if (lower__record_early(l))
    lower__record_requests(l, o->ctx, o->tok, s, i);
  return s;
}

int lower__wait_async(L *l, int i, int primary, const uint8_t *need) {
  const GenOp *o = &l->c->ops[i];
  (void)primary;
  int s = lower__emit_create(l, o->ctx, LOWER_STREAM_CREATE, i);
  if (lower__record_early(l))
    lower__record_requests(l, o->ctx, o->tok, s, i);
  lower__wait_deps(l, o->ctx, i, s, need);
  return s;
}

int lower__alloc(L *l, int i, int primary, const uint8_t *need) {
  const GenCase *c = l->c;
  const GenOp *o = &c->ops[i];
  int s = o->async ? async_stream(l, i, primary, need) : -1;
  LowerInstr *in = lower__emit(l, o->ctx, LOWER_MEM_ALLOC, i);
  if (in) {
    in->buf = o->buf;
    in->b = s;
    in->imm = (int64_t)c->bufs[o->buf].n * gen_elem_size(c->bufs[o->buf].elem);
    in->imm2 = o->mode == GEN_ALLOC_HOST_SHARED;
  }
  return s;
}

int lower__dealloc(L *l, int i, int primary, const uint8_t *need) {
  const GenOp *o = &l->c->ops[i];
  int s = -1;
  if (o->async) {
    s = async_stream(l, i, primary, need);
    if (!lower__has(l, LOWER_FAULT_FREE_UNORDERED))
      lower__emit2(l, o->ctx, LOWER_STREAM_SYNC, i, s, -1);
  }
  LowerInstr *in = lower__emit(l, o->ctx, LOWER_MEM_FREE, i);
  if (in) {
    in->buf = o->buf;
    in->b = s;
  }
  return s;
}

/* A memcpy or memset on stream s: one call over a whole buffer or a contiguous view, one per
 * element of a strided view (mgpuMemcpy and mgpuMemset copy and set contiguous memory). */
static void emit_data(L *l, int fn, int i, int s) {
  const GenCase *c = l->c;
  const GenOp *o = &c->ops[i];
  int e = c->bufs[o->buf].elem, es = gen_elem_size(e), copy = o->kind == GEN_OP_MEMCPY;
  int32_t od, ld, sd, os = 0, ls, ss = 1;
  gen_op_view(c, o, 0, &od, &ld, &sd);
  if (copy)
    gen_op_view(c, o, 1, &os, &ls, &ss);
  lower__view(l, gen_view_rows(c, o, 0), &od, &sd);
  lower__view(l, copy ? gen_view_rows(c, o, 1) : 0, &os, &ss);
  int runs = sd == 1 && ss == 1 ? 1 : ld, per = runs == 1 ? ld : 1;
  if (copy && lower__has(l, LOWER_FAULT_SPACE_SYNC) && gen_op_in_space(c, o))
    s = -1; /* (the default stream: the token's stream, waited on, does not hold it) */
  int32_t w[2];
  gen_elem_words(e, o->value, w);
  if (!copy && es == 2 && l->rocm) {
    for (int k = 0; k < runs; k++)
      lower__memset16_rocm(l, fn, i, s, o->buf, (int64_t)(od + k * sd) * 2, per, (uint16_t)w[0]);
    return;
  }
  for (int k = 0; k < runs; k++) {
    LowerInstr *in = lower__emit(l, fn,
                                 copy      ? LOWER_MEMCPY
                                 : es == 2 ? LOWER_MEMSET16
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
      in->imm = lower__copy_bytes(l, per, es);
    } else { /* the value as the element type's bits (an f32's, a 16-bit pattern) */
      in->imm = es == 2 ? (uint16_t)w[0] : (uint32_t)w[0];
      in->imm2 = per;
    }
  }
}

int lower__memcpy(L *l, int i, int primary, const uint8_t *need) {
  const GenOp *o = &l->c->ops[i];
  int s;
  if (lower__has(l, LOWER_FAULT_COPY_WRONG_STREAM)) {
    s = lower__emit_create(l, o->ctx, LOWER_STREAM_CREATE, i);
    if (lower__record_early(l))
      lower__record_requests(l, o->ctx, o->tok, s, i);
  } else {
    s = async_stream(l, i, primary, need);
  }
  emit_data(l, o->ctx, i, s);
  return s;
}

int lower__memset(L *l, int i, int primary, const uint8_t *need) {
  int s = async_stream(l, i, primary, need);
  emit_data(l, l->c->ops[i].ctx, i, s);
  return s;
}

int lower__kernel_fn(const GenCase *c, const GenOp *o) {
  int k = gen_op_kernel_id(c, o), plain = KERNEL_ID(KERNEL_BASE(k), 0, KERNEL_ELEM(k));
  return KERNEL_STAGED(k) ? KERNEL_STAGED_ID(plain) : plain;
}

/* A launch: on its explicit stream, or on the stream its dependencies give. */
int lower__launch(L *l, int i, int primary, const uint8_t *need) {
  const GenOp *o = &l->c->ops[i];
  int fn = o->ctx, s;
  if (lower__on_own_stream(l, o)) {
    s = l->stream_slot[o->stream];
    lower__wait_deps(l, fn, i, s, need);
  } else {
    s = async_stream(l, i, primary, need);
  }
  LowerInstr *in = lower__emit(l, fn, LOWER_LAUNCH, i);
  if (in) {
    in->kernel = (uint8_t)lower__kernel_fn(l->c, o);
    in->nbufs = (uint8_t)o->nargs;
    int32_t len, len0 = 0;
    for (int a = 0; a < o->nargs; a++) {
      in->bufs[a] = o->args[a];
      gen_op_view(l->c, o, a, &in->voff[a], &len, &in->vstride[a]);
      len0 = a ? len0 : len;
      lower__view(l, 0, &in->voff[a], &in->vstride[a]); /* (kernels take flat memrefs) */
    }
    in->b = s;
    in->imm = o->value;
    in->imm2 = len0;
    gen_op_dims(o, len0, in->dims);
    in->smem = lower__smem(l, o);
  }
  if (lower__on_own_stream(l, o)) { /* its token: an event after it, not the program's stream */
    int e = lower__emit_create(l, fn, LOWER_EVENT_CREATE, i);
    lower__emit2(l, fn, LOWER_EVENT_RECORD, i, e, s);
    s = e;
  }
  return s;
}

/* Whether token t is a copy's from the device into registered host memory (the fault
 * registered_copy_sync takes it as complete when the call returns). */
static int registered_copy(const L *l, int t) {
  const GenCase *c = l->c;
  for (int j = 0; j < c->nops; j++) {
    const GenOp *p = &c->ops[j];
    if (p->tok == t)
      return p->kind == GEN_OP_MEMCPY && c->bufs[p->buf].reg &&
             c->bufs[p->src].kind == GEN_BUF_DEVICE;
  }
  return 0;
}

int lower__host_wait(L *l, int i, int primary, const uint8_t *need) {
  const GenOp *o = &l->c->ops[i];
  (void)primary, (void)need;
  if (lower__has(l, LOWER_FAULT_DROP_HOST_WAIT))
    return -1;
  for (int d = 0; d < o->ndeps; d++) {
    int t = o->deps[d];
    if (lower__has(l, LOWER_FAULT_REGISTERED_COPY_SYNC) && registered_copy(l, t))
      continue;
    if (l->tok_slot[t] >= 0)
      lower__emit2(l, o->ctx, lower__is_event_tok(l, t) ? LOWER_EVENT_SYNC : LOWER_STREAM_SYNC, i,
                   l->tok_slot[t], -1);
  }
  return -1;
}

int lower__observe(L *l, int i, int primary, const uint8_t *need) {
  const GenCase *c = l->c;
  const GenOp *o = &c->ops[i];
  int b = o->buf;
  (void)primary, (void)need;
  if (l->stage[i] >= 0) { /* rocm: host_shared is device memory; read a copy of it */
    int s = lower__emit_create(l, o->ctx, LOWER_STREAM_CREATE, i);
    b = l->stage[i];
    lower__emit_copy(l, o->ctx, i, s, b, 0, o->buf, 0,
                     (int64_t)c->bufs[o->buf].n * gen_elem_size(c->bufs[o->buf].elem));
    lower__emit2(l, o->ctx, LOWER_STREAM_SYNC, i, s, -1);
  }
  LowerInstr *in = lower__emit(l, o->ctx, LOWER_OBSERVE, i);
  if (in) {
    in->buf = b;
    in->imm = i;
  }
  return -1;
}

/* The program's own stream: its slot, destroyed by its stream_destroy op. */
int lower__stream_create(L *l, int i, int primary, const uint8_t *need) {
  const GenOp *o = &l->c->ops[i];
  (void)primary, (void)need;
  int s = lower__new_slot(l, o->ctx);
  LowerInstr *in = lower__emit(l, o->ctx, LOWER_STREAM_CREATE, i);
  if (in) {
    in->a = s;
    in->imm = 1; /* its stream_destroy op destroys it */
  }
  l->stream_slot[o->stream] = s;
  return -1;
}

int lower__stream_sync(L *l, int i, int primary, const uint8_t *need) {
  const GenOp *o = &l->c->ops[i];
  (void)primary, (void)need;
  lower__emit2(l, o->ctx, LOWER_STREAM_SYNC, i, l->stream_slot[o->stream], -1);
  return -1;
}

int lower__stream_destroy(L *l, int i, int primary, const uint8_t *need) {
  const GenOp *o = &l->c->ops[i];
  lower__stream_sync(l, i, primary, need);
  lower__emit2(l, o->ctx, LOWER_STREAM_DESTROY, i, l->stream_slot[o->stream], -1);
  return -1;
}
