/*
 * rt_abi.c: the rest of MLIR's runtime wrappers (asyncfuzz_rt.h; the lists of runtime/abi/): the
 * cluster launch of the cuda flavour, the rocm flavour's device memrefs of registered memory, and
 * the families the runtime does not model (tensor maps, cuSPARSE, cuSPARSELt), which refuse.
 * With them every mgpu* function of the CUDA and ROCm wrappers of LLVM 19.1.7 and 22.1.8 links.
 */
#include "rt_sim_int.h"

#include <string.h>

enum {
#define RT__UNMODELLED_ENUM(n) U_##n,
  RT_UNMODELLED_MAP(RT__UNMODELLED_ENUM)
#undef RT__UNMODELLED_ENUM
      U_CLUSTER,
  U_DEVMEM_F32,
  U_DEVMEM_I32
};

/* A call of wrapper function i that does nothing here: recorded, failed with err/detail. */
static void refuse(int i, int err, int detail) {
  Rt *rt;
  RtRec *r = rt__call(&rt, RT_CALL_UNMODELLED);
  rt__rec_arg(r, rt__ref_int((uint32_t)i));
  rt__rec_fail(rt, r, err, detail);
  rt__leave(rt);
}

#define RT__UNMODELLED_DEF(n)                                                                      \
  intptr_t n(void) {                                                                               \
    refuse(U_##n, RT_ERR_NOT_SUPPORTED, RT_DETAIL_UNMODELLED);                                     \
    return 0;                                                                                      \
  }
RT_UNMODELLED_MAP(RT__UNMODELLED_DEF)
#undef RT__UNMODELLED_DEF

static int rocm(void) {
  Rt *rt = rt__enter();
  int r = rt->cfg.abi == RT_ABI_ROCM;
  rt__leave(rt);
  return r;
}

void mgpuLaunchClusterKernel(void *function, intptr_t clusterX, intptr_t clusterY,
                             intptr_t clusterZ, intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                             intptr_t blockX, intptr_t blockY, intptr_t blockZ, int32_t smem,
                             void *stream, void **params, void **extra, size_t paramsCount) {
  (void)clusterX, (void)clusterY, (void)clusterZ;
  if (rocm()) /* (not in the ROCm wrappers) */
    refuse(U_CLUSTER, RT_ERR_NOT_FOUND, RT_DETAIL_ABI_ABSENT);
  else
    mgpuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY, blockZ, smem, stream, params,
                     extra, paramsCount);
}

static RtMemRef1d device_memref(int i, void *allocated, void *aligned, int64_t offset, int64_t size,
                                int64_t stride) {
  RtMemRef1d m;
  memset(&m, 0, sizeof m);
  if (!rocm()) { /* (not in the CUDA wrappers) */
    refuse(i, RT_ERR_NOT_FOUND, RT_DETAIL_ABI_ABSENT);
    return m;
  }
  m = (RtMemRef1d){allocated, aligned, offset, size, stride}; /* one address space */
  return m;
}

RtMemRef1d mgpuMemGetDeviceMemRef1dFloat(float *allocated, float *aligned, int64_t offset,
                                         int64_t size, int64_t stride) {
  return device_memref(U_DEVMEM_F32, allocated, aligned, offset, size, stride);
}

RtMemRef1d mgpuMemGetDeviceMemRef1dInt32(int32_t *allocated, int32_t *aligned, int64_t offset,
                                         int64_t size, int64_t stride) {
  return device_memref(U_DEVMEM_I32, allocated, aligned, offset, size, stride);
}
