/*
 * fake_libamdhip64.c: a TEST DOUBLE of the HIP runtime (libamdhip64.so.5), for the tests of
 * the hip backend on machines without an AMD GPU: the HIP calls MLIR's ROCm wrappers make,
 * over the model of ../fake_gpu/fake_gpu.h (its fault injection under FAKE_HIP_*). Built only
 * under tests/ and reached only through LD_LIBRARY_PATH in the tests that say so. The real
 * runtime on a real GPU is tests/hip_gpu_test.sh, which skips where there is none.
 *
 * As HIP documents: hipStreamCreate makes blocking streams (hipStreamNonBlocking: not), and
 * hipFree synchronizes the device first. Modules: a clang offload bundle or an ELF code object
 * (by their first bytes); anything else is refused with hipErrorInvalidImage.
 */
#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <string.h>

#include "../fake_gpu/fake_gpu.h"

static _Thread_local int t_dev;

static hipError_t hip(int fg) {
  static const hipError_t map[] = {
      [FG_OK] = hipSuccess,
      [FG_INVALID_VALUE] = hipErrorInvalidValue,
      [FG_NO_DEVICE] = hipErrorNoDevice,
      [FG_INVALID_DEVICE] = hipErrorInvalidDevice,
      [FG_INVALID_HANDLE] = hipErrorInvalidHandle,
      [FG_NOT_FOUND] = hipErrorNotFound,
      [FG_ILLEGAL_ADDRESS] = hipErrorIllegalAddress,
      [FG_INVALID_IMAGE] = hipErrorInvalidImage,
      [FG_OUT_OF_MEMORY] = hipErrorOutOfMemory,
      [FG_HOST_ALREADY_REGISTERED] = hipErrorHostMemoryAlreadyRegistered,
      [FG_HOST_NOT_REGISTERED] = hipErrorHostMemoryNotRegistered,
  };
  return map[fg];
}

hipError_t hipInit(unsigned flags) {
  (void)flags;
  fg_set_prefix("FAKE_HIP_");
  return fg_env("NO_DEVICE") ? hipErrorNoDevice : hipSuccess;
}
hipError_t hipGetDeviceCount(int *n) {
  *n = fg_env("NO_DEVICE") ? 0 : 1;
  return *n ? hipSuccess : hipErrorNoDevice;
}
hipError_t hipSetDevice(int d) {
  if (d != 0)
    return hipErrorInvalidDevice;
  t_dev = d;
  return hipSuccess;
}
hipError_t hipGetDevice(int *d) {
  *d = t_dev;
  return hipSuccess;
}
hipError_t hipGetDeviceProperties(hipDeviceProp_t *p, int d) {
  if (d != 0)
    return hipErrorInvalidDevice;
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "asyncfuzz fake HIP runtime (test double)");
  snprintf(p->gcnArchName, sizeof p->gcnArchName, "gfx90a:sramecc+:xnack-");
  p->major = 9;
  p->minor = 0;
  p->multiProcessorCount = 1;
  p->totalGlobalMem = (size_t)1 << 30;
  return hipSuccess;
}
hipError_t hipDriverGetVersion(int *v) {
  *v = 50221153;
  return hipSuccess;
}
hipError_t hipDeviceSynchronize(void) {
  return hip(fg_device_sync());
}

const char *hipGetErrorName(hipError_t e) {
  switch (e) {
  case hipSuccess:
    return "hipSuccess";
  case hipErrorInvalidValue:
    return "hipErrorInvalidValue";
  case hipErrorNoDevice:
    return "hipErrorNoDevice";
  case hipErrorInvalidHandle:
    return "hipErrorInvalidHandle";
  case hipErrorNotFound:
    return "hipErrorNotFound";
  case hipErrorIllegalAddress:
    return "hipErrorIllegalAddress";
  case hipErrorInvalidImage:
    return "hipErrorInvalidImage";
  default:
    return "hipErrorUnknown";
  }
}

hipError_t hipModuleLoadData(hipModule_t *m, const void *img) {
  static const unsigned char elf[4] = {0x7f, 'E', 'L', 'F'};
  if (fg_sticky())
    return hip(fg_sticky());
  if (img == NULL || (strncmp(img, "__CLANG_OFFLOAD_BUNDLE__", 24) != 0 && memcmp(img, elf, 4)))
    return hipErrorInvalidImage;
  return hip(fg_module_load((void **)m));
}
hipError_t hipModuleUnload(hipModule_t m) {
  return hip(fg_module_unload(m));
}
hipError_t hipModuleGetFunction(hipFunction_t *f, hipModule_t m, const char *name) {
  return hip(fg_get_function((void **)f, m, name));
}
hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz,
                                 unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                 hipStream_t s, void **params, void **extra) {
  (void)gy, (void)gz, (void)by, (void)bz, (void)extra;
  return hip(fg_launch(f, gx * gy * gz, bx * by * bz, smem, s, params));
}

hipError_t hipStreamCreate(hipStream_t *s) {
  return hip(fg_stream_create((void **)s, 1));
}
hipError_t hipStreamCreateWithFlags(hipStream_t *s, unsigned flags) {
  return hip(fg_stream_create((void **)s, !(flags & hipStreamNonBlocking)));
}
hipError_t hipStreamDestroy(hipStream_t s) {
  return hip(fg_stream_destroy(s));
}
hipError_t hipStreamSynchronize(hipStream_t s) {
  return hip(fg_stream_sync(s));
}
hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t e, unsigned flags) {
  (void)flags;
  return hip(fg_stream_wait_event(s, e));
}
hipError_t hipEventCreateWithFlags(hipEvent_t *e, unsigned flags) {
  return hip(fg_event_create((void **)e, !(flags & hipEventDisableTiming)));
}
hipError_t hipEventCreate(hipEvent_t *e) {
  return hip(fg_event_create((void **)e, 1));
}
hipError_t hipEventDestroy(hipEvent_t e) {
  return hip(fg_event_destroy(e));
}
hipError_t hipEventRecord(hipEvent_t e, hipStream_t s) {
  return hip(fg_event_record(e, s));
}
hipError_t hipEventSynchronize(hipEvent_t e) {
  return hip(fg_event_sync(e));
}
hipError_t hipEventElapsedTime(float *ms, hipEvent_t a, hipEvent_t b) {
  return hip(fg_event_elapsed(ms, a, b));
}

hipError_t hipMalloc(void **p, size_t bytes) {
  return hip(fg_alloc(p, bytes));
}
hipError_t hipMallocManaged(void **p, size_t bytes, unsigned flags) {
  (void)flags;
  return hip(fg_alloc(p, bytes));
}
hipError_t hipFree(void *p) {
  int rc = fg_device_sync(); /* "performs an implicit hipDeviceSynchronize()" */
  return hip(rc ? rc : fg_free(p));
}
hipError_t hipMemcpyAsync(void *dst, const void *src, size_t bytes, hipMemcpyKind kind,
                          hipStream_t s) {
  (void)kind;
  return hip(fg_memcpy(dst, src, bytes, s));
}
hipError_t hipMemsetD32Async(hipDeviceptr_t dst, int v, size_t n, hipStream_t s) {
  return hip(fg_memset(4, dst, (unsigned)v, n, s));
}
hipError_t hipMemsetD16Async(hipDeviceptr_t dst, unsigned short v, size_t n, hipStream_t s) {
  return hip(fg_memset(2, dst, v, n, s));
}
hipError_t hipHostRegister(void *p, size_t bytes, unsigned flags) {
  (void)flags;
  if (fg_sticky())
    return hip(fg_sticky());
  return hip(fg_host_register(p, bytes));
}
hipError_t hipHostUnregister(void *p) {
  if (fg_sticky())
    return hip(fg_sticky());
  return hip(fg_host_unregister(p));
}
