/*
 * rt_helpers.h: what the runtime library's tests (test_sim.c, test_abi.c) share: the builtin
 * af_fill kernel, launched as MLIR's code launches it, and the value it writes.
 */
#ifndef ASYNCFUZZ_RT_HELPERS_H
#define ASYNCFUZZ_RT_HELPERS_H

#include "../runtime/asyncfuzz_rt.h"
#include "../kernels/kernels.h"

static inline void *fill_fn(void) {
  void *m = mgpuModuleLoad("k", 1);
  return mgpuModuleGetFunction(m, "af_fill");
}

/* mgpuLaunchKernel(af_fill, dst, v) with MLIR's expanded memref parameters. */
static inline void launch_fill(void *f, int32_t *dst, int64_t n, int32_t v, void *stream) {
  void *alloc = dst, *aligned = dst;
  int64_t off = 0, size = n, stride = 1;
  int32_t spin = 8;
  void *params[] = {&alloc, &aligned, &off, &size, &stride, &v, &spin};
  mgpuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, stream, params, NULL, 7);
}

/* What af_fill writes at element i for value v. */
static inline int32_t fill_value(int32_t v, int i) {
  int32_t r;
  kernel_ref(KERNEL_FILL, &r, NULL, 1, v);
  return r + i;
}

#endif
