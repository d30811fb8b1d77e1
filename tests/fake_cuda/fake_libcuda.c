/*
 * fake_libcuda.c: a TEST DOUBLE of the CUDA driver (libcuda.so.1), for the tests of the cuda
 * backend on machines without a GPU: the driver API over the model of ../fake_gpu/fake_gpu.h
 * (its fault injection under FAKE_CUDA_*). It is built only under tests/ and only reached
 * through LD_LIBRARY_PATH in the tests that say so; nothing installed or shipped loads it. The
 * real driver is tested by tests/cuda_gpu_test.sh, which skips where there is no GPU.
 *
 * Streams made with flags 0 are blocking (CU_STREAM_NON_BLOCKING: not). Modules: PTX text, an
 * ELF cubin or a fat binary (by their first bytes); anything else is refused.
 */
#include <cuda.h>
#include <stdio.h>
#include <string.h>

#include "../fake_gpu/fake_gpu.h"

static int g_ctx_dummy;

static CUresult cu(int fg) {
  static const CUresult map[] = {
      [FG_OK] = CUDA_SUCCESS,
      [FG_INVALID_VALUE] = CUDA_ERROR_INVALID_VALUE,
      [FG_NO_DEVICE] = CUDA_ERROR_NO_DEVICE,
      [FG_INVALID_DEVICE] = CUDA_ERROR_INVALID_DEVICE,
      [FG_INVALID_HANDLE] = CUDA_ERROR_INVALID_HANDLE,
      [FG_NOT_FOUND] = CUDA_ERROR_NOT_FOUND,
      [FG_ILLEGAL_ADDRESS] = CUDA_ERROR_ILLEGAL_ADDRESS,
      [FG_INVALID_IMAGE] = CUDA_ERROR_INVALID_IMAGE,
      [FG_OUT_OF_MEMORY] = CUDA_ERROR_OUT_OF_MEMORY,
      [FG_HOST_ALREADY_REGISTERED] = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
      [FG_HOST_NOT_REGISTERED] = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
  };
  return map[fg];
}

static void *st(CUstream s) {
  return s == CU_STREAM_LEGACY ? NULL : (void *)s;
}

CUresult cuInit(unsigned flags) {
  (void)flags;
  fg_set_prefix("FAKE_CUDA_");
  return fg_env("NO_DEVICE") ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS;
}
CUresult cuDeviceGetCount(int *n) {
  *n = 1;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice *d, int ordinal) {
  *d = ordinal;
  return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}
CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
  (void)d;
  snprintf(name, (size_t)len, "asyncfuzz fake CUDA driver (test double)");
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
  (void)d;
  *v = a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR            ? 9
       : a == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT              ? 1
       : a == CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN ? 49152
                                                                    : 0;
  return CUDA_SUCCESS;
}
CUresult cuDeviceTotalMem_v2(size_t *b, CUdevice d) {
  (void)d;
  *b = (size_t)1 << 30;
  return CUDA_SUCCESS;
}
CUresult cuDriverGetVersion(int *v) {
  *v = 13000;
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
  (void)d;
  *c = (CUcontext)&g_ctx_dummy;
  return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext c) {
  (void)c;
  return CUDA_SUCCESS;
}
CUresult cuCtxGetCurrent(CUcontext *c) {
  *c = (CUcontext)&g_ctx_dummy;
  return CUDA_SUCCESS;
}
CUresult cuCtxSynchronize(void) {
  return cu(fg_device_sync());
}

CUresult cuGetErrorName(CUresult e, const char **s) {
  static const struct {
    CUresult e;
    const char *name;
  } names[] = {
      {CUDA_SUCCESS, "CUDA_SUCCESS"},
      {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE"},
      {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE"},
      {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE"},
      {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND"},
      {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS"},
      {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE"},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].e == e) {
      *s = names[i].name;
      return CUDA_SUCCESS;
    }
  *s = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

static int image_ok(const void *img) {
  static const unsigned char elf[4] = {0x7f, 'E', 'L', 'F'};
  static const unsigned char fatbin[4] = {0x50, 0xed, 0x55, 0xba};
  const char *c = img;
  return c && (strncmp(c, "//", 2) == 0 || strncmp(c, ".version", 8) == 0 ||
               memcmp(c, elf, 4) == 0 || memcmp(c, fatbin, 4) == 0);
}
CUresult cuModuleLoadData(CUmodule *m, const void *img) {
  if (fg_sticky())
    return cu(fg_sticky());
  if (!image_ok(img))
    return CUDA_ERROR_INVALID_IMAGE;
  return cu(fg_module_load((void **)m));
}
CUresult cuModuleLoadDataEx(CUmodule *m, const void *img, unsigned n, CUjit_option *o, void **v) {
  (void)n;
  (void)o;
  (void)v;
  return cuModuleLoadData(m, img);
}
CUresult cuModuleUnload(CUmodule m) {
  return cu(fg_module_unload(m));
}
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  return cu(fg_get_function((void **)f, m, name));
}
CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) {
  (void)f;
  (void)a;
  (void)v;
  return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned smem, CUstream hs, void **params,
                        void **extra) {
  (void)gy, (void)gz, (void)by, (void)bz, (void)extra;
  return cu(fg_launch(f, gx * gy * gz, bx * by * bz, smem, st(hs), params));
}

CUresult cuStreamCreate(CUstream *out, unsigned flags) {
  return cu(fg_stream_create((void **)out, !(flags & CU_STREAM_NON_BLOCKING)));
}
CUresult cuStreamDestroy_v2(CUstream hs) {
  return cu(fg_stream_destroy(hs));
}
CUresult cuStreamSynchronize(CUstream hs) {
  return cu(fg_stream_sync(st(hs)));
}
CUresult cuEventCreate(CUevent *out, unsigned flags) {
  return cu(fg_event_create((void **)out, !(flags & CU_EVENT_DISABLE_TIMING)));
}
CUresult cuEventDestroy_v2(CUevent he) {
  return cu(fg_event_destroy(he));
}
CUresult cuEventRecord(CUevent he, CUstream hs) {
  return cu(fg_event_record(he, st(hs)));
}
CUresult cuEventSynchronize(CUevent he) {
  return cu(fg_event_sync(he));
}
CUresult cuStreamWaitEvent(CUstream hs, CUevent he, unsigned flags) {
  (void)flags;
  return cu(fg_stream_wait_event(st(hs), he));
}
CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b) {
  return cu(fg_event_elapsed(ms, a, b));
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
  void *d = NULL;
  CUresult rc = cu(fg_alloc(&d, bytes));
  *p = (CUdeviceptr)(uintptr_t)d;
  return rc;
}
CUresult cuMemAllocManaged(CUdeviceptr *p, size_t bytes, unsigned flags) {
  (void)flags;
  return cuMemAlloc_v2(p, bytes);
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  return cu(fg_free((void *)(uintptr_t)p));
}
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream hs) {
  return cu(fg_memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes, st(hs)));
}
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned v, size_t n, CUstream hs) {
  return cu(fg_memset(4, (void *)(uintptr_t)dst, v, n, st(hs)));
}
CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short v, size_t n, CUstream hs) {
  return cu(fg_memset(2, (void *)(uintptr_t)dst, v, n, st(hs)));
}
CUresult cuMemHostRegister_v2(void *p, size_t bytes, unsigned flags) {
  (void)flags;
  if (fg_sticky())
    return cu(fg_sticky());
  return cu(fg_host_register(p, bytes));
}
CUresult cuMemHostUnregister(void *p) {
  if (fg_sticky())
    return cu(fg_sticky());
  return cu(fg_host_unregister(p));
}
