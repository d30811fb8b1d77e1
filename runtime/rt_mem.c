/*
 * rt_mem.c: the mgpu* memory calls (alloc, free, memcpy, memset, host registration) and
 * the harness's host buffers and observations.
 */
#include "rt_sim_int.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared) {
  Rt *rt;
  RtRec *r = rt__call(&rt, RT_CALL_MEM_ALLOC);
  int det;
  RtRef sref;
  (void)rt__stream_arg(rt, stream, &det, &sref); /* ignored, as in MLIR's wrappers */
  rt__rec_arg(r, rt__ref_int(sizeBytes));
  rt__rec_arg(r, sref);
  rt__rec_arg(r, rt__ref_int(isHostShared ? 1 : 0));
  /* ROCm's mgpuMemAlloc ignores isHostShared: hipMalloc, device memory */
  int shared = isHostShared && rt->cfg.abi != RT_ABI_ROCM;
  void *p = NULL;
  if (sizeBytes == 0 || rt__inject(rt, r)) {
    if (r)
      r->ret = RT_REF(RT_REF_NULL, 0, 0);
    rt__leave(rt);
    return NULL;
  }
  if (rt->dev) {
    int code = af_grow((void **)&rt->allocs, &rt->capallocs, rt->nallocs + 1, sizeof(Alloc))
                   ? 2
                   : rt->dev->mem_alloc(sizeBytes, shared, &p);
    /* fresh memory reads KERNEL_UNINIT, as in the sim: set (ordered with none of the
     * program's streams) and waited for before the pointer is returned (the allocation is
     * synchronous) */
    if (code == 0)
      code = rt->dev->fill(p, (unsigned)KERNEL_UNINIT, sizeBytes / 4, 1);
    if (rt__dev_result(rt, r, code, RT_DETAIL_NONE) == 0) {
      Alloc *a = &rt->allocs[rt->nallocs];
      memset(a, 0, sizeof *a);
      a->p = p;
      a->bytes = sizeBytes;
      a->shared = shared;
      a->dev = 1;
      if (r)
        r->ret = RT_REF(RT_REF_BUF, rt->nallocs, 0);
      rt->nallocs++;
    } else {
      p = NULL;
    }
  } else if (af_grow((void **)&rt->allocs, &rt->capallocs, rt->nallocs + 1, sizeof(Alloc)) == 0 &&
             (p = malloc(sizeBytes)) != NULL) {
    Alloc *a = &rt->allocs[rt->nallocs];
    memset(a, 0, sizeof *a);
    a->p = p;
    a->bytes = sizeBytes;
    a->freed = 0;
    a->shared = shared;
    int32_t u = KERNEL_UNINIT;
    for (uint64_t i = 0; i + 4 <= sizeBytes; i += 4)
      memcpy((char *)p + i, &u, 4);
    if (r)
      r->ret = RT_REF(RT_REF_BUF, rt->nallocs, 0);
    rt->nallocs++;
  } else {
    /* host memory ran out: an environment failure of the harness, not a finding */
    rt->oom = 1;
    rt__rec_fail(rt, r, RT_ERR_OUT_OF_MEMORY, RT_DETAIL_NONE);
  }
  rt__leave(rt);
  return p;
}

void mgpuMemFree(void *ptr, void *stream) {
  Rt *rt;
  RtRec *r = rt__call(&rt, RT_CALL_MEM_FREE);
  int det;
  RtRef sref;
  (void)rt__stream_arg(rt, stream, &det, &sref); /* ignored: the free is not stream-ordered */
  RtRef pref = rt__ref_ptr(rt, ptr);
  rt__rec_arg(r, pref);
  rt__rec_arg(r, sref);
  if (ptr == NULL || rt__inject(rt, r)) {
    rt__leave(rt);
    return;
  }
  if (rt->dev && rt->cfg.raw_handles) { /* cuMemFree at once, whatever the pointer */
    if (rt__dev_result(rt, r, rt->dev->mem_free(ptr), RT_DETAIL_NONE) == 0 &&
        RT_REF_KIND(pref) == RT_REF_BUF)
      rt__mark_freed(rt, RT_REF_ID(pref));
    rt__leave(rt);
    return;
  }
  if (RT_REF_KIND(pref) != RT_REF_BUF || RT_REF_VAL(pref) != 0) {
    rt__rec_fail(rt, r, RT_ERR_INVALID_VALUE, RT_DETAIL_INVALID_FREE);
  } else {
    Alloc *a = &rt->allocs[RT_REF_ID(pref)];
    if (a->freed) {
      rt__rec_fail(rt, r, RT_ERR_INVALID_VALUE, RT_DETAIL_DOUBLE_FREE);
    } else {
      /* hipFree (rocm) performs an implicit hipDeviceSynchronize */
      int sync = rt->cfg.memfree_sync || rt->cfg.abi == RT_ABI_ROCM;
      if (sync)
        rt__drain(rt);
      rt__mark_freed(rt, RT_REF_ID(pref));
      if (rt->dev) {
        /* tagged: kept until the run ends, poisoned in no order with the program's streams:
         * work still using it reads poison, as it would read a reused allocation */
        if (sync)
          rt__dev_result(rt, r, rt->dev->ctx_sync(), RT_DETAIL_NONE);
        rt__dev_result(rt, r, rt->dev->fill(a->p, (unsigned)KERNEL_POISON, a->bytes / 4, 0),
                       RT_DETAIL_NONE);
      } else {
        int32_t poison = KERNEL_POISON;
        for (size_t i = 0; i + 4 <= a->bytes; i += 4)
          memcpy(a->p + i, &poison, 4);
      }
    }
  }
  rt__leave(rt);
}

void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream) {
  Rt *rt; /* (a program's own host memory adopted: cfg.program) */
  RtRec *r = rt__call_on(&rt, RT_CALL_MEMCPY, dst, src, sizeBytes);
  int det;
  RtRef sref;
  int s = rt__stream_arg(rt, stream, &det, &sref);
  rt__rec_arg(r, rt__ref_ptr(rt, dst));
  rt__rec_arg(r, rt__ref_ptr(rt, src));
  rt__rec_arg(r, rt__ref_int(sizeBytes));
  rt__rec_arg(r, sref);
  if (rt__inject(rt, r)) {
    /* failed on purpose: no effect */
  } else if (rt->dev && rt->cfg.raw_handles) {
    rt__dev_result(rt, r, rt->dev->memcpy_async(dst, src, sizeBytes, stream), det);
  } else if (s < 0) {
    rt__rec_fail(rt, r, RT_ERR_INVALID_HANDLE, det);
  } else if (dst == NULL || src == NULL) {
    rt__rec_fail(rt, r, RT_ERR_INVALID_VALUE, RT_DETAIL_NONE);
  } else if (rt__range_kind(rt, dst, sizeBytes) < 0 || rt__range_kind(rt, src, sizeBytes) < 0) {
    rt__rec_fail(rt, r, RT_ERR_ILLEGAL_ADDRESS, RT_DETAIL_BAD_POINTER);
  } else if (rt->dev) {
    if (rt__freed_alloc(rt, dst, sizeBytes) >= 0 || rt__freed_alloc(rt, src, sizeBytes) >= 0)
      rt__rec_fail(rt, r, RT_ERR_ILLEGAL_ADDRESS, RT_DETAIL_USE_AFTER_FREE);
    else
      rt__dev_result(rt, r, rt->dev->memcpy_async(dst, src, sizeBytes, rt->streams[s].dh),
                     RT_DETAIL_NONE);
  } else {
    Work *w = rt__enqueue(rt, s, W_MEMCPY, r ? r->seq : 0);
    if (w) {
      w->dst = dst;
      w->src = src;
      w->bytes = sizeBytes;
    }
    if (rt->cfg.policy == RT_EAGER)
      rt__drain(rt);
  }
  rt__leave(rt);
}

static void memset_common(int call, int kind, void *dst, unsigned value, size_t count,
                          void *stream) {
  Rt *rt;
  RtRec *r = rt__call(&rt, call);
  int det;
  RtRef sref;
  int s = rt__stream_arg(rt, stream, &det, &sref);
  rt__rec_arg(r, rt__ref_ptr(rt, dst));
  rt__rec_arg(r, rt__ref_int(value));
  rt__rec_arg(r, rt__ref_int(count));
  rt__rec_arg(r, sref);
  size_t esz = kind == W_MEMSET32 ? 4 : 2;
  if (rt__abi_absent(rt, r) || rt__inject(rt, r)) {
    /* ROCm's wrappers define no mgpuMemset16, or it failed on purpose: nothing is set */
  } else if (rt->dev && (rt->cfg.raw_handles ||
                         (s >= 0 && dst != NULL && rt__range_kind(rt, dst, count * esz) >= 0 &&
                          rt__freed_alloc(rt, dst, count * esz) < 0))) {
    void *ds = s >= 0 && !rt->cfg.raw_handles ? rt->streams[s].dh : stream;
    int code = esz == 4 ? rt->dev->memset32_async(dst, value, count, ds)
                        : rt->dev->memset16_async(dst, (unsigned short)value, count, ds);
    rt__dev_result(rt, r, code, det);
  } else if (s < 0) {
    rt__rec_fail(rt, r, RT_ERR_INVALID_HANDLE, det);
  } else if (dst == NULL) {
    rt__rec_fail(rt, r, RT_ERR_INVALID_VALUE, RT_DETAIL_NONE);
  } else if (rt__range_kind(rt, dst, count * esz) < 0) {
    rt__rec_fail(rt, r, RT_ERR_ILLEGAL_ADDRESS, RT_DETAIL_BAD_POINTER);
  } else if (rt->dev) {
    rt__rec_fail(rt, r, RT_ERR_ILLEGAL_ADDRESS, RT_DETAIL_USE_AFTER_FREE);
  } else {
    Work *w = rt__enqueue(rt, s, kind, r ? r->seq : 0);
    if (w) {
      w->dst = dst;
      w->value = value;
      w->count = count;
    }
    if (rt->cfg.policy == RT_EAGER)
      rt__drain(rt);
  }
  rt__leave(rt);
}

void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream) {
  memset_common(RT_CALL_MEMSET32, W_MEMSET32, dst, value, count, stream);
}

void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream) {
  memset_common(RT_CALL_MEMSET16, W_MEMSET16, dst, value, count, stream);
}

/* Registers a host range (gpu.host_register) so device work may use it and the trace can
 * name it hr<k>. Registration does not copy or wait. */
static void host_register(int call, void *ptr, uint64_t bytes) {
  Rt *rt;
  RtRec *r = rt__call(&rt, call);
  rt__rec_arg(r, rt__ref_ptr(rt, ptr));
  rt__rec_arg(r, rt__ref_int(bytes));
  if (rt__inject(rt, r)) {
    /* after a sticky error: not registered */
  } else if (ptr == NULL && !(rt->dev && rt->cfg.raw_handles)) {
    rt__rec_fail(rt, r, RT_ERR_INVALID_VALUE, RT_DETAIL_BAD_POINTER);
  } else if (rt->dev &&
             rt__dev_result(rt, r, rt->dev->host_register(ptr, (size_t)bytes), RT_DETAIL_NONE)) {
    /* the driver refused: not registered */
  } else if (af_grow((void **)&rt->hosts, &rt->caphosts, rt->nhosts + 1, sizeof(HostBuf)) == 0) {
    HostBuf *h = &rt->hosts[rt->nhosts];
    h->p = ptr;
    h->bytes = (size_t)bytes;
    h->id = 0x800000 | rt->nhosts;
    h->adopted = 0;
    rt->nhosts++;
    if (r && RT_REF_KIND(r->args[0]) == RT_REF_PTR) /* (named by what it now is) */
      r->args[0] = RT_REF(RT_REF_HOST, h->id, 0);
  } else {
    rt->oom = 1;
  }
  rt__leave(rt);
}

static void host_unregister(void *ptr) {
  Rt *rt;
  RtRec *r = rt__call(&rt, RT_CALL_HOST_UNREGISTER);
  rt__rec_arg(r, rt__ref_ptr(rt, ptr));
  int found = -1;
  for (int i = 0; i < rt->nhosts && found < 0; i++)
    if (rt->hosts[i].p == ptr && (rt->hosts[i].id & 0x800000) && !rt->hosts[i].adopted &&
        rt->hosts[i].bytes > 0)
      found = i;
  if (rt__inject(rt, r)) {
    /* after a sticky error: no effect */
  } else if (rt->dev && (found >= 0 || rt->cfg.raw_handles)) {
    if (rt__dev_result(rt, r, rt->dev->host_unregister(ptr), RT_DETAIL_NONE) == 0 && found >= 0)
      rt->hosts[found].bytes = 0;
  } else if (found < 0) {
    rt__rec_fail(rt, r, RT_ERR_INVALID_VALUE, RT_DETAIL_BAD_POINTER);
  } else {
    rt->hosts[found].bytes = 0; /* keeps its slot (and name) but covers nothing */
  }
  rt__leave(rt);
}

void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes) {
  host_register(RT_CALL_HOST_REGISTER, ptr, sizeBytes);
}

void mgpuMemHostUnregister(void *ptr) {
  host_unregister(ptr);
}

void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor, int64_t elementSizeBytes) {
  uint64_t bytes = 0;
  char *p = descriptor ? rt__memref_range(rank, descriptor, elementSizeBytes, &bytes) : NULL;
  host_register(RT_CALL_HOST_REGISTER, p, bytes);
}

void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor, int64_t elementSizeBytes) {
  uint64_t bytes = 0;
  host_unregister(descriptor ? rt__memref_range(rank, descriptor, elementSizeBytes, &bytes) : NULL);
}

/* ---- host hooks ---- */

/* The host reads `size` elements of esize bytes at base (stride elements apart). Typed calls
 * (esize != 4 or not i32) record the element size as a fourth argument. */
void rt__observe(int32_t id, const char *base, int64_t size, int64_t stride, int esize, int typed) {
  Rt *rt;
  size_t span = size > 0 && stride > 0 ? (size_t)((size - 1) * stride + 1) * (size_t)esize : 0;
  RtRec *r = rt__call_on(&rt, RT_CALL_OBSERVE, base, NULL, span);
  rt__rec_arg(r, rt__ref_int((uint32_t)id));
  rt__rec_arg(r, rt__ref_ptr(rt, base));
  rt__rec_arg(r, rt__ref_int((uint64_t)size));
  if (esize != 4 || typed)
    rt__rec_arg(r, rt__ref_int((uint64_t)esize));
  RtRef bref = rt__ref_ptr(rt, base);
  /* device memory (not host_shared, or any under rocm): the host cannot read it, on the sim as
   * on a GPU */
  int devmem = RT_REF_KIND(bref) == RT_REF_BUF && !rt->allocs[RT_REF_ID(bref)].shared;
  if (base == NULL || size < 0 || devmem ||
      rt__freed_alloc(rt, base, (size_t)size * (size_t)esize) >= 0) {
    rt__rec_fail(rt, r, RT_ERR_ILLEGAL_ADDRESS,
                 base == NULL || size < 0 ? RT_DETAIL_BAD_POINTER
                 : devmem                 ? RT_DETAIL_HOST_DEVICE_MEM
                                          : RT_DETAIL_USE_AFTER_FREE);
    rt__leave(rt);
    return;
  }
  int per = esize == 8 ? 2 : 1;
  if (af_grow((void **)&rt->obs, &rt->capobs, rt->nobs + 1, sizeof(RtObs)) ||
      af_grow((void **)&rt->obsdata, &rt->capobsdata, rt->nobsdata + (int)size * per + 1,
              sizeof(int32_t))) {
    rt->oom = 1;
    rt__leave(rt);
    return;
  }
  RtObs *o = &rt->obs[rt->nobs++];
  o->id = id;
  o->tid = rt__t_tid;
  o->seq = r ? r->seq : 0;
  o->n = size * per;
  o->vals = (const int32_t *)(intptr_t)rt->nobsdata; /* an offset until end() */
  for (int64_t i = 0; i < size; i++)
    rt->nobsdata += kernel_elem_words(base + i * stride * esize, esize, &rt->obsdata[rt->nobsdata]);
  rt__leave(rt);
}

void asyncfuzz_observe(int32_t id, int32_t *allocated, int32_t *aligned, int64_t offset,
                       int64_t size, int64_t stride) {
  (void)allocated;
  rt__observe(id, aligned ? (const char *)(aligned + offset) : NULL, size, stride, 4, 0);
}

/* The host fills a host buffer: element i is kernel_host_init_value(init, i) as element type e
 * (kernel_elem_bits). */
static void host_init_common(int32_t id, int32_t init, char *base, int64_t size, int64_t stride,
                             int e) {
  Rt *rt;
  RtRec *r = rt__call(&rt, RT_CALL_HOST_INIT);
  int esize = kernel_elem_bytes(e);
  if (base == NULL || size < 0) {
    rt__rec_fail(rt, r, RT_ERR_INVALID_VALUE, RT_DETAIL_BAD_POINTER);
    rt__leave(rt);
    return;
  }
  for (int64_t i = 0; i < size; i++)
    kernel_elem_store(e, kernel_host_init_value(init, i), base + i * stride * esize);
  if (af_grow((void **)&rt->hosts, &rt->caphosts, rt->nhosts + 1, sizeof(HostBuf)) == 0) {
    HostBuf *h = &rt->hosts[rt->nhosts++];
    h->p = base;
    h->bytes = (size_t)(size > 0 ? size : 0) * (size_t)esize * (size_t)(stride > 0 ? stride : 1);
    h->id = id;
    h->adopted = 0;
  } else {
    rt->oom = 1;
  }
  rt__rec_arg(r, rt__ref_int((uint32_t)id));
  rt__rec_arg(r, rt__ref_int((uint32_t)init));
  rt__rec_arg(r, rt__ref_int((uint64_t)size));
  if (e != KERNEL_ELEM_I32)
    rt__rec_arg(r, rt__ref_int((uint64_t)esize));
  rt__leave(rt);
}

void asyncfuzz_host_init(int32_t id, int32_t init, int32_t *allocated, int32_t *aligned,
                         int64_t offset, int64_t size, int64_t stride) {
  (void)allocated;
  host_init_common(id, init, aligned ? (char *)(aligned + offset) : NULL, size, stride,
                   KERNEL_ELEM_I32);
}

#define ELEM_HOOKS(sfx, T, E)                                                                      \
  void asyncfuzz_observe_##sfx(int32_t id, T *allocated, T *aligned, int64_t offset, int64_t size, \
                               int64_t stride) {                                                   \
    (void)allocated;                                                                               \
    rt__observe(id, aligned ? (const char *)(aligned + offset) : NULL, size, stride,               \
                kernel_elem_bytes(KERNEL_ELEM_##E), 1);                                            \
  }                                                                                                \
  void asyncfuzz_host_init_##sfx(int32_t id, int32_t init, T *allocated, T *aligned,               \
                                 int64_t offset, int64_t size, int64_t stride) {                   \
    (void)allocated;                                                                               \
    host_init_common(id, init, aligned ? (char *)(aligned + offset) : NULL, size, stride,          \
                     KERNEL_ELEM_##E);                                                             \
  }
RT_ELEM_HOOK_MAP(ELEM_HOOKS)
#undef ELEM_HOOKS
