/*
 * kernels.cu: the CUDA versions of the sentinel kernels (kernels/kernels.c is the
 * specification). nvcc builds them to a fat binary with PTX, which libasyncfuzz_cuda.so embeds
 * and loads for builtin Programs, so one build runs on every GPU the driver supports; hipcc
 * builds the same source (as HIP) to code objects for AMD GPUs, for libasyncfuzz_hip.so.
 *
 * The parameters are laid out exactly as MLIR passes a memref<?xi32> to a gpu.func (allocated
 * pointer, aligned pointer, offset, size, stride), then the i32 value and the i32 spin count,
 * so the interpreter and MLIR-compiled code build the same params array. Like the gpu.func
 * versions (gen/render.c), each thread writes KERNEL_SENTINEL over its output element `spin`
 * times with atomic stores, then its result.
 */
#ifdef __HIP__ /* hipcc builds the same kernels for AMD GPUs (the hip backend) */
#include <hip/hip_runtime.h>
#endif
#include <stdint.h>

#define SENTINEL 0x5E5E5E5E /* KERNEL_SENTINEL */

#define MEMREF(x) int32_t *x##_alloc, int32_t *x, int64_t x##_off, int64_t x##_n, int64_t x##_stride
#define AT(x, i) (x + x##_off + (int64_t)(i)*x##_stride)
/* The thread's element: its linear index over the grid and the blocks, x fastest (as the
 * gpu.func versions compute it). */
#define AF_INDEX()                                                                                 \
  ((((int64_t)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x) *                     \
       ((int64_t)blockDim.x * blockDim.y * blockDim.z) +                                           \
   ((int64_t)threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x)

__device__ static void spin_phase(int32_t *p, int32_t spin) {
  for (int32_t s = 0; s < spin; s++)
    atomicExch((int *)p, SENTINEL);
}

extern "C" __global__ void af_fill(MEMREF(dst), int32_t v, int32_t spin) {
  (void)dst_alloc;
  int64_t i = AF_INDEX();
  if (i >= dst_n)
    return;
  spin_phase(AT(dst, i), spin);
  uint32_t r = (uint32_t)v * 7u + (uint32_t)i;
  atomicExch((int *)AT(dst, i), (int)r);
}

extern "C" __global__ void af_transform(MEMREF(dst), MEMREF(a), int32_t v, int32_t spin) {
  (void)dst_alloc;
  (void)a_alloc;
  (void)a_n;
  int64_t i = AF_INDEX();
  if (i >= dst_n)
    return;
  spin_phase(AT(dst, i), spin);
  uint32_t r = (uint32_t)*AT(a, i) * 3u + (uint32_t)v;
  atomicExch((int *)AT(dst, i), (int)r);
}

extern "C" __global__ void af_combine(MEMREF(dst), MEMREF(a), MEMREF(b), int32_t v, int32_t spin) {
  (void)dst_alloc;
  (void)a_alloc;
  (void)a_n;
  (void)b_alloc;
  (void)b_n;
  int64_t i = AF_INDEX();
  if (i >= dst_n)
    return;
  spin_phase(AT(dst, i), spin);
  uint32_t r = (uint32_t)*AT(a, i) + (uint32_t)*AT(b, i) * 5u + (uint32_t)v;
  atomicExch((int *)AT(dst, i), (int)r);
}
