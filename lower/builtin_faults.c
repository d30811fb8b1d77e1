/*
 * builtin_faults.c: the fault switches of the builtin lowering (LOWER_FAULT_MAP in lower.h),
 * where a fault changes a value the lowering computes: how many dependencies it synchronizes,
 * which stream a launch runs on, when requested events are recorded, a view's offset and stride
 * (and a view in rows' first dimension's stride),
 * a copy's size, a launch's dynamic shared memory. A fault that changes which calls are made is
 * tested where those calls are made: copy_wrong_stream, free_unordered and drop_host_wait in
 * builtin_ops.c; yield_stream, capture_dropped, call_arg_dropped, if_result_stale, merge_first_pred
 * and loop_carried_initial in builtin_flow.c; early_stream_destroy, wait_destroys and event_leaked
 * in the destroys of builtin.c.
 */
#include "builtin_int.h"

int lower__has(const L *l, int f) {
  return (l->faults >> f) & 1u;
}

int lower__deps_kept(const L *l, const GenOp *o) {
  return lower__has(l, LOWER_FAULT_DROP_EXTRA_DEPS) && o->ndeps > 1 ? 1 : o->ndeps;
}

int lower__on_own_stream(const L *l, const GenOp *o) {
  return gen_op_on_stream(o) && !lower__has(l, LOWER_FAULT_STREAM_IGNORED);
}

int lower__record_early(const L *l) {
  return lower__has(l, LOWER_FAULT_RECORD_EARLY);
}

void lower__view(const L *l, int row, int32_t *off, int32_t *stride) {
  if (lower__has(l, LOWER_FAULT_VIEW_OFFSET_DROPPED))
    *off = 0; /* the subview's base pointer, its offset lost */
  if (lower__has(l, LOWER_FAULT_DIM_STRIDE_DROPPED) && row > 0)
    *off /= row; /* the first dimension's offset, without its stride (a row's elements) */
  if (lower__has(l, LOWER_FAULT_VIEW_STRIDE_DROPPED))
    *stride = 1; /* a strided view taken as contiguous */
}

int32_t lower__smem(const L *l, const GenOp *o) {
  return lower__has(l, LOWER_FAULT_SMEM_DROPPED) ? 0 : o->smem;
}

int64_t lower__copy_bytes(const L *l, int64_t n, int es) {
  return n * (lower__has(l, LOWER_FAULT_COPY_SIZE_I32) ? 4 : es);
}
