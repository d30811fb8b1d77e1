/*
 * builtin_rocm.c: the builtin lowering under the rocm flavour of the runtime ABI (docs/abi.md):
 * MLIR's ROCm wrappers allocate host_shared memory as device memory and have no mgpuMemset16.
 * The host observes a host_shared buffer through a stream-ordered copy into a host staging
 * buffer (builtin_ops.c's observe), and a 16-bit memset is a mgpuMemset32 of value pairs plus
 * copies of single elements from a staging buffer that holds the value. Staging buffers are
 * program buffers past the case's own.
 */
#include "builtin_int.h"

#include <string.h>

/* rocm: MLIR's ROCm wrappers have no mgpuMemset16. n 16-bit elements from byte off: the pairs on
 * 4-byte boundaries with mgpuMemset32 (the value twice), an element left at either end copied
 * from the op's staging buffer, which holds the value. */
void lower__memset16_rocm(L *l, int fn, int i, int s, int buf, int64_t off, int64_t n, uint16_t v) {
  if (n > 0 && off % 4 != 0) {
    lower__emit_copy(l, fn, i, s, buf, off, l->stage[i], 0, 2);
    off += 2;
    n--;
  }
  if (n >= 2) {
    LowerInstr *in = lower__emit(l, fn, LOWER_MEMSET32, i);
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
    lower__emit_copy(l, fn, i, s, buf, off, l->stage[i], 0, 2);
}

/* rocm: the staging buffers are host buffers of the element type of the buffer they stage */
void lower__stage_bufs(L *l) {
  const GenCase *c = l->c;
  LowerProgram *p = l->p;
  for (int i = 0; i < c->nops; i++) {
    int b = l->stage[i], src = c->ops[i].buf;
    if (b < 0)
      continue;
    p->buf_host[b] = 1;
    /* a memset's: its 16-bit pattern, as i16 (an f16's bits) */
    p->buf_elem[b] = c->ops[i].kind == GEN_OP_MEMSET ? GEN_ELEM_I16 : c->bufs[src].elem;
    p->buf_elems[b] = c->ops[i].kind == GEN_OP_MEMSET ? 1 : c->bufs[src].n;
  }
}

/* rocm: which ops need a staging buffer (l->stage), numbered from the case's buffer count.
 * Returns how many, or -1 out of memory. */
int lower__plan_stages(L *l) {
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
        (o->kind == GEN_OP_MEMSET && gen_elem_size(c->bufs[o->buf].elem) == 2))
      l->stage[i] = c->nbufs + n++;
  }
  af_free(shared);
  return n;
}
