/*
 * rt_hip.c: the `hip` backend of the runtime library, over the HIP runtime API (Debian's
 * libamdhip64-dev). Built into libasyncfuzz_hip.so, linked against libamdhip64 and loaded by
 * rt_run.c with dlopen when a run asks for it.
 *
 * Each function makes the HIP calls MLIR's RocmRuntimeWrappers.cpp makes, with the same flags
 * (docs/abi.md): hipStreamCreate (default flags: blocking streams), hipEventCreateWithFlags
 * (hipEventDisableTiming), hipMalloc (isHostShared ignored by the wrappers; the front end
 * passes 0 under the rocm flavour) and hipFree, hipMemcpyAsync with hipMemcpyDefault,
 * hipMemsetD32Async / D16Async, hipModuleLoadData (no JIT: the wrappers' mgpuModuleLoadJIT
 * asserts), hipModuleLaunchKernel with the params array and no shared-memory attribute, and
 * hipSetDevice for the calling thread. Checks of handles and pointers, and the trace, are the
 * front end's (rt_*.c). Memory the front end fills for itself (fresh allocations, poison) goes
 * through a non-blocking stream of the backend's own, so it never waits for the program's
 * blocking streams nor makes them wait.
 */
#include "rt_dev.h"

#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>
#include <stdio.h>
#include <string.h>

/* kernels.cu built by hipcc: a clang offload bundle of code objects for the AMD GPUs listed
 * in CMakeLists.txt (ASYNCFUZZ_HIP_KERNELS 0: hipcc was not found, no builtin kernels) */
extern const unsigned char af_hip_kernels[];

static int g_dev;
static hipModule_t g_builtin; /* the sentinel kernels, loaded once per process */
static hipStream_t g_fill;    /* the backend's own non-blocking stream */

static const char *error_name(int code) {
  const char *s = hipGetErrorName((hipError_t)code);
  if (s && *s && strcmp(s, "hipErrorUnknown") != 0)
    return s;
  static _Thread_local char buf[48];
  snprintf(buf, sizeof buf, "hipError_%d", code);
  return buf;
}

static int init(int device, RtDeviceInfo *info, char *msg, size_t n) {
  hipError_t rc = hipInit(0);
  if (rc != hipSuccess) {
    snprintf(msg, n, "hipInit failed with %s (no usable AMD GPU or driver)", error_name(rc));
    return rc;
  }
  int count = 0;
  if ((rc = hipGetDeviceCount(&count)) != hipSuccess || count == 0) {
    snprintf(msg, n, "no HIP device (hipGetDeviceCount: %s, %d devices)", error_name(rc), count);
    return rc ? rc : hipErrorNoDevice;
  }
  if (device < 0 || device >= count) {
    snprintf(msg, n, "device %d does not exist (%d HIP devices)", device, count);
    return hipErrorInvalidDevice;
  }
  hipDeviceProp_t p;
  memset(&p, 0, sizeof p);
  if ((rc = hipSetDevice(device)) != hipSuccess ||
      (rc = hipGetDeviceProperties(&p, device)) != hipSuccess ||
      (rc = hipStreamCreateWithFlags(&g_fill, hipStreamNonBlocking)) != hipSuccess) {
    snprintf(msg, n, "cannot open device %d: %s", device, error_name(rc));
    return rc;
  }
  g_dev = device;
  memset(info, 0, sizeof *info);
  snprintf(info->name, sizeof info->name, "%.127s", p.name);
  snprintf(info->arch, sizeof info->arch, "%.63s", p.gcnArchName);
  info->cc_major = p.major;
  info->cc_minor = p.minor;
  info->sm_count = p.multiProcessorCount;
  info->mem_mib = (int64_t)(p.totalGlobalMem >> 20);
  hipDriverGetVersion(&info->driver_version);
  info->cuda_version = HIP_VERSION; /* the HIP this backend was built with */
  info->device = device;
  return 0;
}

static void enter(void) {
  int cur = -1;
  if (hipGetDevice(&cur) != hipSuccess || cur != g_dev)
    hipSetDevice(g_dev); /* the device is per thread in HIP */
}

static int module_load(const void *data, int jit, int opt, void **mod, char *log, size_t n) {
  (void)opt;
  hipModule_t m = NULL;
  hipError_t rc;
  *mod = NULL;
  if (jit) { /* RocmRuntimeWrappers' mgpuModuleLoadJIT: assert(false) */
    if (log && n)
      snprintf(log, n, "mgpuModuleLoadJIT is not available in HIP");
    return hipErrorNotSupported;
  }
  if (data == NULL) { /* builtin Programs load and unload it every run: load it once */
    if (!ASYNCFUZZ_HIP_KERNELS) {
      if (log && n)
        snprintf(log, n, "this build has no sentinel kernels for AMD GPUs (hipcc not found)");
      return hipErrorInvalidImage;
    }
    if (g_builtin == NULL && (rc = hipModuleLoadData(&g_builtin, af_hip_kernels)) != hipSuccess) {
      g_builtin = NULL;
      return rc;
    }
    *mod = g_builtin;
    return hipSuccess;
  }
  rc = hipModuleLoadData(&m, data);
  *mod = m;
  return rc;
}

static int module_unload(void *mod) {
  if (mod != NULL && mod == (void *)g_builtin)
    return hipSuccess; /* kept for the process */
  return hipModuleUnload((hipModule_t)mod);
}

static int get_function(void *mod, const char *name, void **fn) {
  hipFunction_t f = NULL;
  hipError_t rc = hipModuleGetFunction(&f, (hipModule_t)mod, name);
  *fn = f;
  return rc;
}

static int launch(void *fn, const intptr_t grid[3], const intptr_t block[3], int32_t smem,
                  void *stream, void **params, void **extra) {
  return hipModuleLaunchKernel((hipFunction_t)fn, (unsigned)grid[0], (unsigned)grid[1],
                               (unsigned)grid[2], (unsigned)block[0], (unsigned)block[1],
                               (unsigned)block[2], (unsigned)smem, (hipStream_t)stream, params,
                               extra);
}

static int stream_create(void **s) {
  hipStream_t st = NULL;
  hipError_t rc = hipStreamCreate(&st); /* default flags, as the ROCm wrappers */
  *s = st;
  return rc;
}

static int stream_destroy(void *s) {
  return hipStreamDestroy((hipStream_t)s);
}

static int stream_sync(void *s) {
  return hipStreamSynchronize((hipStream_t)s);
}

static int stream_wait_event(void *s, void *e) {
  return hipStreamWaitEvent((hipStream_t)s, (hipEvent_t)e, 0);
}

static int event_create(void **e) {
  hipEvent_t ev = NULL;
  hipError_t rc = hipEventCreateWithFlags(&ev, hipEventDisableTiming);
  *e = ev;
  return rc;
}

static int event_destroy(void *e) {
  return hipEventDestroy((hipEvent_t)e);
}

static int event_sync(void *e) {
  return hipEventSynchronize((hipEvent_t)e);
}

static int event_record(void *e, void *s) {
  return hipEventRecord((hipEvent_t)e, (hipStream_t)s);
}

static int mem_alloc(uint64_t bytes, int shared, void **p) {
  void *d = NULL;
  hipError_t rc = shared ? hipMallocManaged(&d, bytes, hipMemAttachGlobal) : hipMalloc(&d, bytes);
  *p = d;
  return rc;
}

static int mem_free(void *p) {
  return hipFree(p);
}

static int memcpy_async(void *dst, const void *src, size_t bytes, void *stream) {
  return hipMemcpyAsync(dst, src, bytes, hipMemcpyDefault, (hipStream_t)stream);
}

static int memset32_async(void *dst, unsigned value, size_t count, void *stream) {
  return hipMemsetD32Async((hipDeviceptr_t)dst, (int)value, count, (hipStream_t)stream);
}

static int memset16_async(void *dst, unsigned short value, size_t count, void *stream) {
  return hipMemsetD16Async((hipDeviceptr_t)dst, value, count, (hipStream_t)stream);
}

static int fill(void *dst, unsigned value, size_t count, int wait) {
  hipError_t rc = hipMemsetD32Async((hipDeviceptr_t)dst, (int)value, count, g_fill);
  return rc == hipSuccess && wait ? hipStreamSynchronize(g_fill) : rc;
}

static int host_register(void *p, size_t bytes) {
  return hipHostRegister(p, bytes, hipHostRegisterDefault);
}

static int host_unregister(void *p) {
  return hipHostUnregister(p);
}

static int ctx_sync(void) {
  return hipDeviceSynchronize();
}

static int time_spin(int spin, int elems, int reps, double *t) {
  void *m = NULL;
  hipFunction_t f = NULL;
  hipStream_t s = NULL;
  hipEvent_t e0 = NULL, e1 = NULL;
  void *d = NULL;
  hipError_t rc = module_load(NULL, 0, 0, &m, NULL, 0);
  if (rc == hipSuccess)
    rc = hipModuleGetFunction(&f, (hipModule_t)m, "af_fill");
  if (rc == hipSuccess)
    rc = hipStreamCreateWithFlags(&s, hipStreamNonBlocking);
  if (rc == hipSuccess)
    rc = hipEventCreate(&e0);
  if (rc == hipSuccess)
    rc = hipEventCreate(&e1);
  if (rc == hipSuccess)
    rc = hipMalloc(&d, (size_t)elems * 4);
  for (int i = 0; i < reps && rc == hipSuccess; i++) {
    void *ptr = d;
    int64_t off = 0, size = elems, stride = 1;
    int32_t v = 1, sp = spin;
    void *params[] = {&ptr, &ptr, &off, &size, &stride, &v, &sp};
    unsigned block = elems < 256 ? (unsigned)elems : 256;
    unsigned grid = (unsigned)((elems + (int)block - 1) / (int)block);
    float ms = 0;
    rc = hipEventRecord(e0, s);
    if (rc == hipSuccess)
      rc = hipModuleLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, s, params, NULL);
    if (rc == hipSuccess)
      rc = hipEventRecord(e1, s);
    if (rc == hipSuccess)
      rc = hipEventSynchronize(e1);
    if (rc == hipSuccess)
      rc = hipEventElapsedTime(&ms, e0, e1);
    t[i] = ms * 1000.0;
  }
  if (d)
    hipFree(d);
  if (e0)
    hipEventDestroy(e0);
  if (e1)
    hipEventDestroy(e1);
  if (s)
    hipStreamDestroy(s);
  return rc;
}

static void set_log(void (*log)(const char *msg)) {
  (void)log; /* (this backend reports nothing besides statuses) */
}

static const RtDevOps ops = {
    .abi = RT_DEV_ABI,
    .name = "hip",
    .init = init,
    .enter = enter,
    .error_name = error_name,
    .module_load = module_load,
    .module_unload = module_unload,
    .get_function = get_function,
    .launch = launch,
    .stream_create = stream_create,
    .stream_destroy = stream_destroy,
    .stream_sync = stream_sync,
    .stream_wait_event = stream_wait_event,
    .event_create = event_create,
    .event_destroy = event_destroy,
    .event_sync = event_sync,
    .event_record = event_record,
    .mem_alloc = mem_alloc,
    .mem_free = mem_free,
    .memcpy_async = memcpy_async,
    .memset32_async = memset32_async,
    .memset16_async = memset16_async,
    .fill = fill,
    .host_register = host_register,
    .host_unregister = host_unregister,
    .ctx_sync = ctx_sync,
    .time_spin = time_spin,
    .set_log = set_log,
};

const RtDevOps *asyncfuzz_dev_ops(void) {
  return &ops;
}
