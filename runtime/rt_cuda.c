/*
 * rt_cuda.c: the `cuda` backend of the runtime library, over the CUDA Driver API. Built into
 * libasyncfuzz_cuda.so, linked against libcuda (the toolkit's stub library at build time, the
 * driver at run time) and loaded by rt_run.c with dlopen when a run asks for it.
 *
 * Each function makes the driver calls MLIR's CudaRuntimeWrappers.cpp makes, with the same
 * flags (../shared/reference/mlir-gpu-async.md): the primary context retained once, streams
 * CU_STREAM_NON_BLOCKING, events CU_EVENT_DISABLE_TIMING, cuMemAlloc / cuMemAllocManaged,
 * cuMemFree at once, cuMemcpyAsync with the direction from unified addressing,
 * cuMemsetD32Async / D16Async, cuModuleLoadData / cuModuleLoadDataEx (JIT with a 4 KiB log
 * and the optimization level), cuLaunchKernel with the params array. Checks of handles and
 * pointers, and the trace, are the front end's (rt_*.c).
 */
#include "rt_dev.h"

#include <cuda.h>
#include <stdio.h>
#include <string.h>

/* kernels.cu built by nvcc: a fat binary (sm_80, sm_90 machine code; compute_75 PTX) */
extern const unsigned char af_cuda_kernels_fatbin[];

static CUdevice g_dev;
static CUcontext g_ctx;
static CUmodule g_builtin; /* the sentinel kernels, loaded once per process */

static const char *error_name(int code) {
  const char *s = NULL;
  if (cuGetErrorName((CUresult)code, &s) == CUDA_SUCCESS && s)
    return s;
  static _Thread_local char buf[48];
  snprintf(buf, sizeof buf, "CUDA_ERROR_%d", code);
  return buf;
}

static int init(int device, RtDeviceInfo *info, char *msg, size_t n) {
  CUresult rc = cuInit(0);
  if (rc != CUDA_SUCCESS) {
    snprintf(msg, n, "cuInit failed with %s (no usable NVIDIA GPU or driver)", error_name(rc));
    return rc;
  }
  int count = 0;
  if ((rc = cuDeviceGetCount(&count)) != CUDA_SUCCESS || count == 0) {
    snprintf(msg, n, "no CUDA device (cuDeviceGetCount: %s, %d devices)", error_name(rc), count);
    return rc ? rc : CUDA_ERROR_NO_DEVICE;
  }
  if (device < 0 || device >= count) {
    snprintf(msg, n, "device %d does not exist (%d CUDA devices)", device, count);
    return CUDA_ERROR_INVALID_DEVICE;
  }
  if ((rc = cuDeviceGet(&g_dev, device)) != CUDA_SUCCESS ||
      (rc = cuDevicePrimaryCtxRetain(&g_ctx, g_dev)) != CUDA_SUCCESS ||
      (rc = cuCtxSetCurrent(g_ctx)) != CUDA_SUCCESS) {
    snprintf(msg, n, "cannot open device %d: %s", device, error_name(rc));
    return rc;
  }
  memset(info, 0, sizeof *info);
  cuDeviceGetName(info->name, (int)sizeof info->name, g_dev);
  cuDeviceGetAttribute(&info->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, g_dev);
  cuDeviceGetAttribute(&info->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, g_dev);
  cuDeviceGetAttribute(&info->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, g_dev);
  size_t mem = 0;
  cuDeviceTotalMem(&mem, g_dev);
  info->mem_mib = (int64_t)(mem >> 20);
  cuDriverGetVersion(&info->driver_version);
  info->cuda_version = CUDA_VERSION; /* the toolkit this backend was built with */
  info->device = device;
  return 0;
}

static void enter(void) {
  CUcontext cur = NULL;
  if (cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur != g_ctx)
    cuCtxSetCurrent(g_ctx);
}

static int module_load(const void *data, int jit, int opt, void **mod, char *log, size_t n) {
  CUmodule m = NULL;
  CUresult rc;
  if (data == NULL) { /* builtin Programs load and unload it every run: load it once */
    if (g_builtin == NULL && (rc = cuModuleLoadData(&g_builtin, af_cuda_kernels_fatbin)) != 0) {
      g_builtin = NULL;
      *mod = NULL;
      return rc;
    }
    *mod = g_builtin;
    return CUDA_SUCCESS;
  }
  if (jit) {
    char buf[4096] = "";
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                           CU_JIT_OPTIMIZATION_LEVEL};
    void *vals[] = {buf, (void *)(uintptr_t)sizeof buf, (void *)(intptr_t)opt};
    rc = cuModuleLoadDataEx(&m, data, 3, opts, vals);
    if (rc != CUDA_SUCCESS && log && n)
      snprintf(log, n, "JIT compilation failed with: '%s'", buf);
  } else {
    rc = cuModuleLoadData(&m, data);
  }
  *mod = m;
  return rc;
}

static int module_unload(void *mod) {
  if (mod != NULL && mod == (void *)g_builtin)
    return CUDA_SUCCESS; /* kept for the process */
  CUresult rc = cuModuleUnload((CUmodule)mod);
  return rc == CUDA_ERROR_DEINITIALIZED ? CUDA_SUCCESS : rc; /* as since llvm#190563 */
}

static int get_function(void *mod, const char *name, void **fn) {
  CUfunction f = NULL;
  CUresult rc = cuModuleGetFunction(&f, (CUmodule)mod, name);
  *fn = f;
  return rc;
}

static void (*g_log)(const char *msg); /* the front end's log */

static void set_log(void (*log)(const char *msg)) {
  g_log = log;
}

static int launch(void *fn, const intptr_t grid[3], const intptr_t block[3], int32_t smem,
                  void *stream, void **params, void **extra) {
  CUfunction f = fn;
  if (smem > 0) {
    int max = 0;
    cuDeviceGetAttribute(&max, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, g_dev);
    char msg[160];
    snprintf(msg, sizeof msg,
             "asyncfuzz cuda: requested shared memory (%d bytes) exceeds the device's opt-in "
             "maximum (%d bytes)",
             smem, max);
    if (smem > max && g_log)
      g_log(msg);
    cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem);
  }
  return cuLaunchKernel(f, (unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2],
                        (unsigned)block[0], (unsigned)block[1], (unsigned)block[2], (unsigned)smem,
                        (CUstream)stream, params, extra);
}

static int stream_create(void **s) {
  CUstream st = NULL;
  CUresult rc = cuStreamCreate(&st, CU_STREAM_NON_BLOCKING);
  *s = st;
  return rc;
}

static int stream_destroy(void *s) {
  return cuStreamDestroy((CUstream)s);
}

static int stream_sync(void *s) {
  return cuStreamSynchronize((CUstream)s);
}

static int stream_wait_event(void *s, void *e) {
  return cuStreamWaitEvent((CUstream)s, (CUevent)e, 0);
}

static int event_create(void **e) {
  CUevent ev = NULL;
  CUresult rc = cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING);
  *e = ev;
  return rc;
}

static int event_destroy(void *e) {
  return cuEventDestroy((CUevent)e);
}

static int event_sync(void *e) {
  return cuEventSynchronize((CUevent)e);
}

static int event_record(void *e, void *s) {
  return cuEventRecord((CUevent)e, (CUstream)s);
}

static int mem_alloc(uint64_t bytes, int shared, void **p) {
  CUdeviceptr d = 0;
  CUresult rc = shared ? cuMemAllocManaged(&d, bytes, CU_MEM_ATTACH_GLOBAL) : cuMemAlloc(&d, bytes);
  *p = (void *)(uintptr_t)d;
  return rc;
}

static int mem_free(void *p) {
  return cuMemFree((CUdeviceptr)(uintptr_t)p);
}

static int memcpy_async(void *dst, const void *src, size_t bytes, void *stream) {
  return cuMemcpyAsync((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, bytes,
                       (CUstream)stream);
}

static int memset32_async(void *dst, unsigned value, size_t count, void *stream) {
  return cuMemsetD32Async((CUdeviceptr)(uintptr_t)dst, value, count, (CUstream)stream);
}

static int memset16_async(void *dst, unsigned short value, size_t count, void *stream) {
  return cuMemsetD16Async((CUdeviceptr)(uintptr_t)dst, value, count, (CUstream)stream);
}

static int fill(void *dst, unsigned value, size_t count, int wait) {
  CUresult rc = cuMemsetD32Async((CUdeviceptr)(uintptr_t)dst, value, count, NULL);
  return rc == CUDA_SUCCESS && wait ? cuStreamSynchronize(NULL) : rc;
}

static int host_register(void *p, size_t bytes) {
  return cuMemHostRegister(p, bytes, 0);
}

static int host_unregister(void *p) {
  return cuMemHostUnregister(p);
}

static int ctx_sync(void) {
  return cuCtxSynchronize();
}

static int time_spin(int spin, int elems, int reps, double *t) {
  CUmodule m = NULL;
  CUfunction f = NULL;
  CUstream s = NULL;
  CUevent e0 = NULL, e1 = NULL;
  CUdeviceptr d = 0;
  CUresult rc = module_load(NULL, 1, 2, (void **)&m, NULL, 0);
  if (rc == CUDA_SUCCESS)
    rc = cuModuleGetFunction(&f, m, "af_fill");
  if (rc == CUDA_SUCCESS)
    rc = cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  if (rc == CUDA_SUCCESS)
    rc = cuEventCreate(&e0, CU_EVENT_DEFAULT);
  if (rc == CUDA_SUCCESS)
    rc = cuEventCreate(&e1, CU_EVENT_DEFAULT);
  if (rc == CUDA_SUCCESS)
    rc = cuMemAlloc(&d, (size_t)elems * 4);
  for (int i = 0; i < reps && rc == CUDA_SUCCESS; i++) {
    void *ptr = (void *)(uintptr_t)d;
    int64_t off = 0, size = elems, stride = 1;
    int32_t v = 1, sp = spin;
    void *params[] = {&ptr, &ptr, &off, &size, &stride, &v, &sp};
    unsigned block = elems < 256 ? (unsigned)elems : 256;
    unsigned grid = (unsigned)((elems + (int)block - 1) / (int)block);
    float ms = 0;
    rc = cuEventRecord(e0, s);
    if (rc == CUDA_SUCCESS)
      rc = cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, s, params, NULL);
    if (rc == CUDA_SUCCESS)
      rc = cuEventRecord(e1, s);
    if (rc == CUDA_SUCCESS)
      rc = cuEventSynchronize(e1);
    if (rc == CUDA_SUCCESS)
      rc = cuEventElapsedTime(&ms, e0, e1);
    t[i] = ms * 1000.0;
  }
  if (d)
    cuMemFree(d);
  if (e0)
    cuEventDestroy(e0);
  if (e1)
    cuEventDestroy(e1);
  if (s)
    cuStreamDestroy(s);
  return rc;
}

static const RtDevOps ops = {
    .abi = RT_DEV_ABI,
    .name = "cuda",
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
