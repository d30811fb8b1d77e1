/*
 * builtin_int.h: internals of the builtin lowering, shared by its files only:
 * - builtin.c: the driver: a case's token kinds, the events ops request of others, the walk
 *   over the ops in inline order, each kind's hook (GEN_OP_MAP), the destroys post-pass;
 * - builtin_emit.c: the program being built: instructions, slots, streams and events for tokens;
 * - builtin_ops.c: the ops that make runtime calls (lower__<lc> of waits, allocs, copies, sets,
 *   launches, observes, the program's stream ops);
 * - builtin_flow.c: control flow (lower__<lc> of execute, await, call, if, for, branch; a region's
 *   inputs and yields, a block's entry and end);
 * - builtin_faults.c: what each fault switch changes in a value the lowering computes;
 * - builtin_rocm.c: the rocm ABI flavour (staging buffers, 16-bit memsets without
 *   mgpuMemset16).
 * Nothing outside lower/ includes it.
 */
#ifndef LOWER_BUILTIN_INT_H
#define LOWER_BUILTIN_INT_H

#include "lower.h"

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
  void *blk;        /* the block that holds the tables above from tok_slot on (setup) */
  /* rocm flavour: per op, the host staging buffer of an observe of host_shared memory (a copy
   * of it) or of a 16-bit memset (one element of its value, for what memset32 cannot set) */
  int rocm;
  int *stage;                     /* per op, -1: none */
  void (*op)(struct L *l, int i); /* lowers op i (the driver's dispatch: a for's body) */
} L;

/* An op kind's hook: lowers op i, whose dependencies need events as plan_op says (primary: the
 * one whose stream it runs on). Returns the slot of the stream (or event) its token stands for,
 * or -1. */
typedef int (*LowerOpFn)(L *l, int i, int primary, const uint8_t *need);

/* ---- the program being built (builtin_emit.c) ---- */

/* A new instruction in function fn (zeroed, references -1), for case op `op`; NULL on OOM (l->rc
 * set). */
LowerInstr *lower__emit(L *l, int fn, int opc, int op);
int lower__new_slot(L *l, int fn);
/* A create instruction (stream, event) of a new slot; the slot. */
int lower__emit_create(L *l, int fn, int opc, int op);
void lower__emit2(L *l, int fn, int opc, int op, int a, int b);
/* A copy of bytes between buf at off and buf2 at off2 on stream slot s. */
void lower__emit_copy(L *l, int fn, int i, int s, int buf, int64_t off, int buf2, int64_t off2,
                      int64_t bytes);
int lower__is_event_tok(const L *l, int t);
/* Which deps of op i need an event recorded after their definition (need); returns the primary
 * (the stream dependency it runs on), or -1. */
int lower__plan_op(const L *l, int i, uint8_t *need);
/* Creates and records the events other ops requested on token t (defined on stream s). */
void lower__record_requests(L *l, int fn, int t, int s, int op);
/* The stream an async op runs on, with its other dependencies waited on (honor). */
int lower__op_stream(L *l, int fn, int i, int primary, const uint8_t *need, int honor);
/* Stream s waits for every dependency of op i. */
void lower__wait_deps(L *l, int fn, int i, int s, const uint8_t *need);
/* A fresh event for token t, recorded where its work is (-1 when t has no slot). */
int lower__hand_event(L *l, int fn, int t, int op);
/* Token t as an event in fn: its own slot when it is one, else an event recorded on its stream. */
int lower__to_event(L *l, int fn, int t, int op);

/* ---- the kinds' hooks (builtin_ops.c, builtin_flow.c): lower__<lc> ---- */

#define LOWER__HOOK(id, lc, name, mlir, weight, flags)                                             \
  int lower__##lc(L *l, int i, int primary, const uint8_t *need);
GEN_OP_MAP(LOWER__HOOK)
#undef LOWER__HOOK

/* ---- control flow (builtin_flow.c) ---- */

/* Region r's inputs and captured tokens taken at its start; its values yielded at its end. */
void lower__open_region(L *l, int r);
void lower__close_region(L *l, int r);
/* The end of block b (not a for's): the op's token, an event of the yielded one. */
void lower__block_end(L *l, int b);

/* ---- fault switches (builtin_faults.c) ---- */

/* Whether fault f is on. */
int lower__has(const L *l, int f);
/* How many of op o's dependencies the lowering synchronizes (drop_extra_deps: the first). */
int lower__deps_kept(const L *l, const GenOp *o);
/* Whether op o runs on its explicit stream (a launch given one; stream_ignored: none). */
int lower__on_own_stream(const L *l, const GenOp *o);
/* Whether an async op records the events others requested of its token before its work is
 * enqueued (record_early) instead of after. */
int lower__record_early(const L *l);
/* A view's offset and stride as the lowering passes them (view_offset_dropped: the base;
 * view_stride_dropped: contiguous; dim_stride_dropped: a view in rows of `row` elements
 * (gen_view_rows; 0: not one) starts at its first row's index, that dimension's stride left
 * out). */
void lower__view(const L *l, int row, int32_t *off, int32_t *stride);
/* The bytes of dynamic shared memory launch o gives its kernel (smem_dropped: none). */
int32_t lower__smem(const L *l, const GenOp *o);
/* The kernel launch o runs (kernels.h): its form for its type and stage; never a view form, as
 * the lowering passes views as descriptors of flat memrefs. */
int lower__kernel_fn(const GenCase *c, const GenOp *o);
/* The bytes a copy of n elements of es bytes moves (copy_size_i32: 4 per element). */
int64_t lower__copy_bytes(const L *l, int64_t n, int es);

/* ---- the rocm flavour (builtin_rocm.c) ---- */

/* Which ops need a staging buffer (l->stage), numbered from the case's buffer count; how many,
 * or -1 out of memory. */
int lower__plan_stages(L *l);
/* The staging buffers as program buffers: host, of the element type they stage. */
void lower__stage_bufs(L *l);
/* n 16-bit elements of value v from byte off of buf, without mgpuMemset16. */
void lower__memset16_rocm(L *l, int fn, int i, int s, int buf, int64_t off, int64_t n, uint16_t v);

#endif
