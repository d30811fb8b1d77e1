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
 *
 * Every element type has its kernels (kernels.h: "af_fill", "af_fill_f16"...), which compute on
 * 32-bit lanes of the elements' bits (kernel_lane): one template per kernel over a lane type that
 * says how an element of its storage becomes a lane and back, and stores it (an atomic exchange
 * for 4 and 8 bytes, a volatile store, which no compiler merges either, for 1 and 2).
 *
 * Each has a staged form ("af_fill_s", "af_fill_s_f16"; kernels.h's KERNEL_STAGED) that puts each
 * thread's result through its 4-byte slot of the block's dynamic shared memory; a thread whose
 * slot is past what the launch gave (%dynamic_smem_size) writes KERNEL_SMEM_SHORT instead, as the
 * simulator does. (HIP has no such register: there the slot is taken as given.)
 */
#ifdef __HIP__ /* hipcc builds the same kernels for AMD GPUs (the hip backend) */
#include <hip/hip_runtime.h>
#endif
#include <stdint.h>

#define SENTINEL 0x5E5E5E5E   /* KERNEL_SENTINEL */
#define SMEM_SHORT 0x5407CAFE /* KERNEL_SMEM_SHORT */

#define AT(x, i) (x + x##_off + (int64_t)(i)*x##_stride)
/* The thread's element: its linear index over the grid and the blocks, x fastest (as the
 * gpu.func versions compute it). */
#define AF_INDEX()                                                                                 \
  ((((int64_t)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x) *                     \
       ((int64_t)blockDim.x * blockDim.y * blockDim.z) +                                           \
   ((int64_t)threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x)

template <typename S> struct Lane; /* S: the storage of an element */
template <> struct Lane<int8_t> {  /* i8 */
  __device__ static int32_t get(int8_t x) { return x; }
  __device__ static int8_t make(int32_t r) { return (int8_t)r; }
  __device__ static void put(int8_t *p, int8_t x) { *(volatile int8_t *)p = x; }
};
template <> struct Lane<uint8_t> { /* i1: its lowest bit */
  __device__ static int32_t get(uint8_t x) { return x & 1; }
  __device__ static uint8_t make(int32_t r) { return (uint8_t)(r & 1); }
  __device__ static void put(uint8_t *p, uint8_t x) { *(volatile uint8_t *)p = x; }
};
template <> struct Lane<int16_t> { /* i16, f16, bf16 */
  __device__ static int32_t get(int16_t x) { return x; }
  __device__ static int16_t make(int32_t r) { return (int16_t)r; }
  __device__ static void put(int16_t *p, int16_t x) { *(volatile int16_t *)p = x; }
};
template <> struct Lane<int32_t> { /* i32, f32 */
  __device__ static int32_t get(int32_t x) { return x; }
  __device__ static int32_t make(int32_t r) { return r; }
  __device__ static void put(int32_t *p, int32_t x) { atomicExch((int *)p, x); }
};
template <> struct Lane<int64_t> { /* i64, f64, index: the low half; sign-extended back */
  __device__ static int32_t get(int64_t x) { return (int32_t)(uint32_t)(uint64_t)x; }
  __device__ static int64_t make(int32_t r) { return (int64_t)r; }
  __device__ static void put(int64_t *p, int64_t x) {
    atomicExch((unsigned long long *)p, (unsigned long long)x);
  }
};

/* The bytes of dynamic shared memory the launch gave. */
__device__ static uint32_t dyn_smem_size() {
#ifdef __HIP__
  return 0xFFFFFFFFu;
#else
  uint32_t r;
  asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
  return r;
#endif
}

/* A staged kernel's result r through the thread's slot of dynamic shared memory. */
__device__ static uint32_t stage(uint32_t r) {
  extern __shared__ int32_t af_slots[];
  int64_t tid = ((int64_t)threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  if ((uint64_t)(tid + 1) * 4u > dyn_smem_size())
    return (uint32_t)SMEM_SHORT;
  volatile int32_t *slot = &af_slots[tid];
  *slot = (int32_t)r;
  return (uint32_t)*slot;
}

#define MEMREF_T(S, x) S *x##_alloc, S *x, int64_t x##_off, int64_t x##_n, int64_t x##_stride

template <typename S> __device__ static void spin_t(S *p, int32_t spin) {
  S s = Lane<S>::make(SENTINEL);
  for (int32_t k = 0; k < spin; k++)
    Lane<S>::put(p, s);
}

template <typename S, int ST>
__device__ static void fill_t(MEMREF_T(S, dst), int32_t v, int32_t spin) {
  (void)dst_alloc;
  int64_t i = AF_INDEX();
  if (i >= dst_n)
    return;
  spin_t(AT(dst, i), spin);
  uint32_t r = (uint32_t)v * 7u + (uint32_t)i;
  r = ST ? stage(r) : r;
  Lane<S>::put(AT(dst, i), Lane<S>::make((int32_t)r));
}

template <typename S, int ST>
__device__ static void transform_t(MEMREF_T(S, dst), MEMREF_T(S, a), int32_t v, int32_t spin) {
  (void)dst_alloc;
  (void)a_alloc;
  (void)a_n;
  int64_t i = AF_INDEX();
  if (i >= dst_n)
    return;
  spin_t(AT(dst, i), spin);
  uint32_t r = (uint32_t)Lane<S>::get(*AT(a, i)) * 3u + (uint32_t)v;
  r = ST ? stage(r) : r;
  Lane<S>::put(AT(dst, i), Lane<S>::make((int32_t)r));
}

template <typename S, int ST>
__device__ static void combine_t(MEMREF_T(S, dst), MEMREF_T(S, a), MEMREF_T(S, b), int32_t v,
                                 int32_t spin) {
  (void)dst_alloc;
  (void)a_alloc;
  (void)a_n;
  (void)b_alloc;
  (void)b_n;
  int64_t i = AF_INDEX();
  if (i >= dst_n)
    return;
  spin_t(AT(dst, i), spin);
  uint32_t r =
      (uint32_t)Lane<S>::get(*AT(a, i)) + (uint32_t)Lane<S>::get(*AT(b, i)) * 5u + (uint32_t)v;
  r = ST ? stage(r) : r;
  Lane<S>::put(AT(dst, i), Lane<S>::make((int32_t)r));
}

#define ARGS(x) x##_alloc, x, x##_off, x##_n, x##_stride
/* The three kernels of a type, of storage S, their names ending in st sfx ("_s", "_f16"; none for
 * i32's plain ones); ST: staged. */
#define AF_FORMS(st, sfx, S, ST)                                                                   \
  extern "C" __global__ void af_fill##st##sfx(MEMREF_T(S, dst), int32_t v, int32_t spin) {        \
    fill_t<S, ST>(ARGS(dst), v, spin);                                                             \
  }                                                                                                \
  extern "C" __global__ void af_transform##st##sfx(MEMREF_T(S, dst), MEMREF_T(S, a), int32_t v,   \
                                                    int32_t spin) {                                \
    transform_t<S, ST>(ARGS(dst), ARGS(a), v, spin);                                               \
  }                                                                                                \
  extern "C" __global__ void af_combine##st##sfx(MEMREF_T(S, dst), MEMREF_T(S, a),                \
                                                  MEMREF_T(S, b), int32_t v, int32_t spin) {       \
    combine_t<S, ST>(ARGS(dst), ARGS(a), ARGS(b), v, spin);                                        \
  }
#define AF_TYPED(sfx, S) AF_FORMS(, sfx, S, 0) AF_FORMS(_s, sfx, S, 1)

AF_TYPED(, int32_t) /* af_fill, af_transform, af_combine; af_fill_s... */
AF_TYPED(_i16, int16_t)
AF_TYPED(_i64, int64_t)
AF_TYPED(_f32, int32_t)
AF_TYPED(_i8, int8_t)
AF_TYPED(_i1, uint8_t)
AF_TYPED(_f16, int16_t)
AF_TYPED(_bf16, int16_t)
AF_TYPED(_f64, int64_t)
AF_TYPED(_index, int64_t)
