/*
 * rt_handles.c: tagged handles (0xAF, kind, the run's epoch, an index), their decoding
 * and checks, device memory ranges, and the device's answers as trace errors.
 */
#include "rt_sim_int.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- handles ---- */

void *rt__h_make(Rt *rt, unsigned kind, int idx) {
  uint32_t ep = kind == H_MODULE ? rt->mod_epoch : rt->epoch;
  uint64_t v =
      (H_TAG << 56) | ((uint64_t)kind << 48) | ((uint64_t)(ep & 0xFFFF) << 32) | (uint32_t)idx;
  return (void *)(uintptr_t)v;
}

/* Raw handles (cuda:raw): the driver's own pointer, named by searching the run's tables, the
 * newest live one first. Returns the index as rt__h_decode does. (Out of line, as
 * not_a_handle below: the decode of a good tagged handle, which every call makes, stays short.) */
__attribute__((noinline)) static int h_lookup(Rt *rt, const void *h, unsigned kind, int *detail,
                                              RtRef *ref) {
  int found = -1, fkind = 0, dead = 0;
  for (int pass = 0; pass < 2 && found < 0; pass++) { /* live handles, then destroyed ones */
    for (int i = rt->nstreams - 1; i >= 1 && found < 0; i--)
      if (rt->streams[i].dh == h && rt->streams[i].destroyed == pass)
        found = i, fkind = H_STREAM, dead = pass;
    for (int i = rt->nevents - 1; i >= 0 && found < 0; i--)
      if (rt->events[i].dh == h && rt->events[i].destroyed == pass)
        found = i, fkind = H_EVENT, dead = pass;
  }
  for (int i = rt->nmodules - 1; i >= 0 && found < 0; i--)
    if (rt->mods[i] == h)
      found = i, fkind = H_MODULE;
  for (int k = 0; k < KERNEL__IDS && found < 0; k++)
    if (rt->fns[k] == h)
      found = k, fkind = H_FUNC;
  for (int k = 0; k < rt->nofns && k < RT_OUTLINED_SLOTS && found < 0; k++)
    if (rt->ofns[k] == h)
      found = RT_FUNC_OUTLINED + 1 + k, fkind = H_FUNC;
  if (found < 0) {
    *ref = rt__ref_ptr(rt, h);
    if (RT_REF_KIND(*ref) == RT_REF_PTR)
      *ref = RT_REF(RT_REF_BAD, 0, 0);
    *detail = RT_DETAIL_NOT_A_HANDLE;
    return -1;
  }
  int rk = fkind == H_STREAM   ? RT_REF_STREAM
           : fkind == H_EVENT  ? RT_REF_EVENT
           : fkind == H_MODULE ? RT_REF_MODULE
                               : RT_REF_FUNC;
  *ref = RT_REF(rk, found, 0);
  if ((unsigned)fkind != kind) {
    *detail = RT_DETAIL_WRONG_KIND;
    return -1;
  }
  if (dead) {
    *detail = RT_DETAIL_DESTROYED;
    return -1;
  }
  return found;
}

/* Not one of this run's tagged handles: named as a pointer where it is one (a buffer passed as a
 * handle), else bad. */
__attribute__((noinline)) static int not_a_handle(Rt *rt, const void *h, int *detail, RtRef *ref) {
  *ref = rt__ref_ptr(rt, h);
  if (RT_REF_KIND(*ref) == RT_REF_PTR)
    *ref = RT_REF(RT_REF_BAD, 0, 0);
  *detail = RT_DETAIL_NOT_A_HANDLE;
  return -1;
}

/* Decodes a handle expected to be of `kind`. Returns the index, or -1 and sets *detail. */
int rt__h_decode(Rt *rt, const void *h, unsigned kind, int *detail, RtRef *ref) {
  uint64_t v = (uint64_t)(uintptr_t)h;
  *detail = RT_DETAIL_NONE;
  if (h == NULL) {
    *ref = RT_REF(RT_REF_NULL, 0, 0);
    *detail = RT_DETAIL_NULL_HANDLE;
    return -1;
  }
  if (rt->dev && rt->cfg.raw_handles)
    return h_lookup(rt, h, kind, detail, ref);
  unsigned hk = (unsigned)((v >> 48) & 0xFF);
  int idx = (int)(uint32_t)v;
  uint32_t ep = hk == H_MODULE ? rt->mod_epoch : rt->epoch;
  if ((v >> 56) != H_TAG || ((v >> 32) & 0xFFFF) != (ep & 0xFFFF))
    return not_a_handle(rt, h, detail, ref);
  int n = hk == H_STREAM   ? rt->nstreams
          : hk == H_EVENT  ? rt->nevents
          : hk == H_MODULE ? rt->nmodules
          : hk == H_FUNC   ? KERNEL__IDS + kernel_foreign_count()
                           : 0;
  int rk = hk == H_STREAM   ? RT_REF_STREAM
           : hk == H_EVENT  ? RT_REF_EVENT
           : hk == H_MODULE ? RT_REF_MODULE
           : hk == H_FUNC   ? RT_REF_FUNC
                            : RT_REF_BAD;
  int outlined =
      hk == H_FUNC && idx >= RT_FUNC_OUTLINED &&
      idx <= RT_FUNC_OUTLINED + (rt->nofns < RT_OUTLINED_SLOTS ? rt->nofns : RT_OUTLINED_SLOTS);
  if (idx < 0 || (idx >= n && !outlined) || rk == RT_REF_BAD) {
    *ref = RT_REF(RT_REF_BAD, 0, 0);
    *detail = RT_DETAIL_NOT_A_HANDLE;
    return -1;
  }
  *ref = RT_REF(rk, idx, 0);
  if (hk != kind) {
    *detail = RT_DETAIL_WRONG_KIND;
    return -1;
  }
  if ((hk == H_STREAM && rt->streams[idx].destroyed) ||
      (hk == H_EVENT && rt->events[idx].destroyed)) {
    *detail = RT_DETAIL_DESTROYED;
    return -1;
  }
  return idx;
}

/* A stream argument: NULL is the legacy stream (0). Returns -1 on a bad handle. */
int rt__stream_arg(Rt *rt, const void *h, int *detail, RtRef *ref) {
  if (h == NULL && rt->nstreams == 0) { /* the legacy stream could not be made (no memory) */
    *detail = RT_DETAIL_NULL_HANDLE;
    *ref = RT_REF(RT_REF_NULL, 0, 0);
    return -1;
  }
  if (h == NULL) {
    *detail = RT_DETAIL_NONE;
    *ref = RT_REF(RT_REF_STREAM, 0, 0);
    return 0;
  }
  return rt__h_decode(rt, h, H_STREAM, detail, ref);
}

/* ---- the hardware backend ---- */

/* The handle the program gets for table entry dh / tagged (kind, idx). */
void *rt__h_out(Rt *rt, unsigned kind, int idx, void *dh) {
  return rt->dev && rt->cfg.raw_handles ? dh : rt__h_make(rt, kind, idx);
}

/* The driver's status as an RtError (HIP's hipError_t uses CUDA's numbers for these). */
static int dev_error(int code) {
  switch (code) {
  case 0:
    return RT_ERR_OK;
  case 1:
    return RT_ERR_INVALID_VALUE;
  case 2:
    return RT_ERR_OUT_OF_MEMORY;
  case 201:
    return RT_ERR_INVALID_CONTEXT;
  case 218:
    return RT_ERR_INVALID_PTX;
  case 400:
    return RT_ERR_INVALID_HANDLE;
  case 500:
    return RT_ERR_NOT_FOUND;
  case 700:
    return RT_ERR_ILLEGAL_ADDRESS;
  case 702:
    return RT_ERR_LAUNCH_TIMEOUT;
  case 709: /* what cuEventSynchronize says of a stream given as event (driver 13, H200) */
    return RT_ERR_CONTEXT_IS_DESTROYED;
  case 712:
    return RT_ERR_HOST_MEMORY_ALREADY_REGISTERED;
  case 713:
    return RT_ERR_HOST_MEMORY_NOT_REGISTERED;
  case 719:
    return RT_ERR_LAUNCH_FAILED;
  default:
    return RT_ERR_OTHER;
  }
}

/* Errors after which the context is unusable (the driver's "sticky" errors). */
static int dev_sticky(int code) {
  return code == 700 || (code >= 714 && code <= 720) || code == 702 || code == 999;
}

/* Records the driver's answer `code` to the call of record r (detail: what the front end knows of
 * the handles involved, else "reported by the driver"). Returns code. */
int rt__dev_result(Rt *rt, RtRec *r, int code, int detail) {
  if (code == 0)
    return 0;
  if (dev_sticky(code))
    rt->dev_broken = 1;
  int e = dev_error(code);
  if (e == RT_ERR_OTHER)
    rt__rec_arg(r, rt__ref_int((uint32_t)code));
  rt__rec_fail(rt, r, e, detail != RT_DETAIL_NONE ? detail : RT_DETAIL_DRIVER);
  return code;
}

/* Where a device call goes in cuda mode: tagged, only a handle that decoded (idx >= 0), as the
 * table's driver handle; raw, whatever the program passed. Returns 0 when the call must not be
 * made (tagged, refused). */
int rt__dev_pass(Rt *rt, int idx) {
  return rt->cfg.raw_handles || idx >= 0;
}

void rt__mark_freed(Rt *rt, int i) {
  Alloc *a = &rt->allocs[i];
  a->freed = 1;
  if (af_grow((void **)&rt->freed, &rt->capfreed, rt->nfreed + 1, sizeof(FreedRange))) {
    rt->oom = 1;
    return;
  }
  rt->freed[rt->nfreed++] = (FreedRange){a->p, a->p + a->bytes, i};
}

/* A freed allocation overlapping [p, p+n), or -1. Every device step asks, so it looks through
 * the freed ones only (where it looked through every allocation of the run). */
int rt__freed_alloc(Rt *rt, const void *p, size_t n) {
  const char *c = p, *end = c + (n ? n : 1);
  for (int i = 0; i < rt->nfreed; i++)
    if (c < rt->freed[i].hi && end > rt->freed[i].lo)
      return rt->freed[i].alloc;
  return -1;
}

/* Where [p, p+n) lies: 1 inside one device allocation or registered host buffer, 0 outside
 * every one of them (plain host memory), -1 when it is NULL or overruns a buffer it starts
 * in. Kernels need 1; copies and sets accept plain host memory, as CUDA does with UVA. */
int rt__range_kind(Rt *rt, const void *p, size_t n) {
  const char *c = p;
  if ((uintptr_t)c < 4096) /* NULL, or a view of it: a failed allocation's buffer plus an offset */
    return -1;
  for (int i = 0; i < rt->nallocs; i++) {
    Alloc *a = &rt->allocs[i];
    if (c >= a->p && c < a->p + a->bytes)
      return c + n <= a->p + a->bytes ? 1 : -1;
  }
  for (int i = 0; i < rt->nhosts; i++) {
    HostBuf *h = &rt->hosts[i];
    if (c >= h->p && c < h->p + h->bytes)
      return c + n <= h->p + h->bytes ? 1 : -1;
  }
  return 0;
}

/* The bytes and start of a ranked memref descriptor, as MLIR's wrappers compute them. */
char *rt__memref_range(int64_t rank, void *desc, int64_t esz, uint64_t *bytes) {
  struct {
    char *allocated, *aligned;
    int64_t offset;
    int64_t rest[];
  } *d = desc;
  uint64_t n = 1;
  for (int64_t i = 0; i < rank; i++)
    n *= (uint64_t)d->rest[i];
  *bytes = n * (uint64_t)esz;
  return d->aligned + d->offset * esz;
}

int rt__abi_absent(Rt *rt, RtRec *r) {
  if (rt->cfg.abi != RT_ABI_ROCM || r == NULL ||
      (r->call != RT_CALL_MODULE_LOAD_JIT && r->call != RT_CALL_MEMSET16))
    return 0;
  rt__rec_fail(rt, r, RT_ERR_NOT_FOUND, RT_DETAIL_ABI_ABSENT);
  return 1;
}
