/*
 * rt_prog.c: a user's program (asyncfuzz check-mlir) rather than a case: kernels the library
 * knows only by their memory effects (kernel_foreign, read from their bodies by the harness),
 * and host memory the program allocated itself (memref.alloc), adopted as a host buffer when a
 * call first touches it. Effects are per whole buffer: a launch reads, then writes, each buffer
 * an argument points into, as the kernel's body loads from or stores to that argument.
 */
#include "rt_sim_int.h"

#include <string.h>

void rt__adopt(Rt *rt, const void *p, size_t bytes) {
  if (!rt->cfg.program || p == NULL || bytes == 0)
    return;
  const char *c = p;
  for (int i = 0; i < rt->nallocs; i++)
    if (c >= rt->allocs[i].p && c < rt->allocs[i].p + rt->allocs[i].bytes)
      return;
  int k = -1;
  for (int i = 0; i < rt->nhosts && k < 0; i++) {
    HostBuf *h = &rt->hosts[i];
    if (c >= h->p && c < h->p + h->bytes) {
      if (h->p != c || bytes <= h->bytes || !h->adopted)
        return; /* (inside it; a registered range keeps its size) */
      k = i;    /* an adopted buffer read further than before: it grows */
    }
  }
  if (k < 0) {
    if (af_grow((void **)&rt->hosts, &rt->caphosts, rt->nhosts + 1, sizeof(HostBuf))) {
      rt->oom = 1;
      return;
    }
    k = rt->nhosts++;
    rt->hosts[k].p = (char *)p;
    rt->hosts[k].id = 0x800000 | k; /* (named as registered ranges are) */
    rt->hosts[k].adopted = 1;
  }
  rt->hosts[k].bytes = bytes;
  RtRec *r = rt__rec_new(rt, RT_CALL_HOST_ADOPT);
  rt__rec_arg(r, RT_REF(RT_REF_HOST, rt->hosts[k].id, 0));
  rt__rec_arg(r, rt__ref_int(bytes));
}

/* The whole buffer p points into, with its access, added to the run's effects (merged with an
 * effect of this launch on the same buffer); 0, or -1 when p is in none (the launch fails). */
static int add_fx(Rt *rt, int first, const char *p, uint8_t access) {
  RtRef ref = rt__ref_ptr(rt, p);
  char *base = NULL;
  size_t bytes = 0;
  if (RT_REF_KIND(ref) == RT_REF_BUF) {
    base = rt->allocs[RT_REF_ID(ref)].p;
    bytes = rt->allocs[RT_REF_ID(ref)].bytes;
  } else if (RT_REF_KIND(ref) == RT_REF_HOST) {
    for (int i = 0; i < rt->nhosts && base == NULL; i++)
      if (rt->hosts[i].id == RT_REF_ID(ref)) {
        base = rt->hosts[i].p;
        bytes = rt->hosts[i].bytes;
      }
  }
  if (base == NULL)
    return -1;
  for (int i = first; i < rt->nfx; i++)
    if (rt->fx[i].p == base) {
      rt->fx[i].access |= access;
      return 0;
    }
  if (af_grow((void **)&rt->fx, &rt->capfx, rt->nfx + 1, sizeof(KernelFx))) {
    rt->oom = 1;
    return 0;
  }
  rt->fx[rt->nfx++] = (KernelFx){base, bytes, access};
  return 0;
}

/* The slots the kernel's arguments take in params: each memref expanded (allocated, aligned,
 * offset, sizes, strides), as gpu-to-llvm passes them, or one pointer each (a bare-pointer
 * calling convention); 0 when neither fits nparams (params are then scanned for pointers). */
static int layout(const KernelForeign *f, size_t nparams, int *bare) {
  size_t expanded = 0;
  for (int a = 0; a < f->nargs; a++)
    expanded += f->rank[a] < 0 ? 1 : 3 + 2 * (size_t)f->rank[a];
  *bare = nparams != expanded && nparams == (size_t)f->nargs;
  return f->nargs >= 0 && (nparams == expanded || nparams == 0 || *bare);
}

/* The effects of one launch into rt->fx from `first` on; 0, or -1 for a pointer into no buffer. */
static int launch_fx(Rt *rt, const KernelForeign *f, void **params, size_t nparams, int first) {
  int bare = 0;
  if (!layout(f, nparams, &bare)) { /* no body, or an unknown convention: every buffer, rw */
    for (size_t i = 0; i < nparams; i++) {
      const char *p = *(char *const *)params[i];
      RtRef ref = rt__ref_ptr(rt, p);
      if (RT_REF_KIND(ref) == RT_REF_BUF || RT_REF_KIND(ref) == RT_REF_HOST)
        (void)add_fx(rt, first, p, KERNEL_READ | KERNEL_WRITE);
    }
    return 0;
  }
  size_t slot = 0;
  for (int a = 0; a < f->nargs; a++) {
    if (f->rank[a] < 0) {
      slot++;
      continue;
    }
    const char *p = *(char *const *)params[slot + (bare ? 0 : 1)]; /* (the aligned pointer) */
    if (f->access[a] && add_fx(rt, first, p, f->access[a]))
      return -1;
    slot += bare ? 1 : 3 + 2 * (size_t)f->rank[a];
  }
  return 0;
}

void rt__launch_foreign(Rt *rt, RtRec *r, int k, int s, void **params, size_t nparams) {
  const KernelForeign *f = kernel_foreign(k);
  int first = rt->nfx;
  if (params == NULL && nparams) {
    rt__rec_fail(rt, r, RT_ERR_INVALID_VALUE, RT_DETAIL_BAD_ARGS);
    return;
  }
  if (launch_fx(rt, f, params, nparams, first)) {
    rt->nfx = first;
    rt__rec_fail(rt, r, RT_ERR_ILLEGAL_ADDRESS, RT_DETAIL_BAD_POINTER);
    return;
  }
  rt__rec_arg(r, rt__ref_int((uint64_t)(rt->nfx - first)));
  uint32_t seq = r ? r->seq : 0; /* (r moves when the trace grows: not used below) */
  RtRef sref = RT_REF(RT_REF_STREAM, s, 0);
  for (int pass = 0; pass < 2; pass++) /* reads first, then writes */
    for (int i = first; i < rt->nfx; i++) {
      int w = (rt->fx[i].access & KERNEL_WRITE) != 0;
      if (w != pass)
        continue;
      RtRec *a = rt__rec_new(rt, RT_CALL_KERNEL_ACCESS);
      if (a)
        a->cause = seq;
      rt__rec_arg(a, rt__ref_ptr(rt, rt->fx[i].p));
      rt__rec_arg(a, rt__ref_int(rt->fx[i].access));
      rt__rec_arg(a, rt__ref_int(rt->fx[i].bytes));
      rt__rec_arg(a, sref);
    }
  Work *w = rt__enqueue(rt, s, W_KERNEL, seq);
  if (w) {
    w->kernel = k;
    w->fx = first;
    w->nfx = rt->nfx - first;
  }
  if (rt->cfg.policy == RT_EAGER)
    rt__drain(rt);
}
