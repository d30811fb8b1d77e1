/*
 * rt_dev.h: the device interface between the runtime library's front end (rt_*.c: handles,
 * checks, the trace) and a hardware backend. The `cuda` backend (rt_cuda.c) is built into its
 * own library, libasyncfuzz_cuda.so, linked against the CUDA driver, and the `hip` backend
 * (rt_hip.c) into libasyncfuzz_hip.so, linked against the HIP runtime; each is loaded with
 * dlopen only when a run asks for it: libasyncfuzz_rt itself never needs a driver, so the `sim`
 * backend works on machines without one.
 *
 * Every function returns the driver's status code (0: success) and does what the matching
 * wrapper of MLIR's CudaRuntimeWrappers.cpp (RocmRuntimeWrappers.cpp for hip) does, with the
 * same driver calls and flags.
 * Not part of the contract; nothing outside runtime/ includes it.
 */
#ifndef RUNNER_RT_DEV_H
#define RUNNER_RT_DEV_H

#include "asyncfuzz_rt.h"

#define RT_DEV_ABI 3

typedef struct RtDevOps {
  int abi; /* RT_DEV_ABI */
  const char *name;
  /* cuInit, the device's primary context (as ScopedContext retains it). msg: why not. */
  int (*init)(int device, RtDeviceInfo *info, char *msg, size_t n);
  /* Makes the context current on the calling thread. */
  void (*enter)(void);
  /* "CUDA_ERROR_INVALID_HANDLE" for a status code; "CUDA_ERROR_<code>" when unknown. */
  const char *(*error_name)(int code);
  /* A module from an image: cubin/fatbin (jit 0) or PTX (jit 1, with the optimization level).
   * data NULL: the library's own sentinel kernels (a fat binary built by nvcc, loaded once
   * per process; unloading it is a no-op). log: the JIT's log. */
  int (*module_load)(const void *data, int jit, int opt, void **mod, char *log, size_t n);
  int (*module_unload)(void *mod);
  int (*get_function)(void *mod, const char *name, void **fn);
  int (*launch)(void *fn, const intptr_t grid[3], const intptr_t block[3], int32_t smem,
                void *stream, void **params, void **extra);
  int (*stream_create)(void **s); /* non-blocking */
  int (*stream_destroy)(void *s);
  int (*stream_sync)(void *s);
  int (*stream_wait_event)(void *s, void *e);
  int (*event_create)(void **e); /* without timing */
  int (*event_destroy)(void *e);
  int (*event_sync)(void *e);
  int (*event_record)(void *e, void *s);
  int (*mem_alloc)(uint64_t bytes, int shared, void **p);
  int (*mem_free)(void *p);
  int (*memcpy_async)(void *dst, const void *src, size_t bytes, void *stream);
  int (*memset32_async)(void *dst, unsigned value, size_t count, void *stream);
  int (*memset16_async)(void *dst, unsigned short value, size_t count, void *stream);
  /* Sets count 32-bit words for the front end itself (fresh memory, poison), ordered with none
   * of the program's streams (cuda: the legacy stream, which its non-blocking streams do not
   * wait for; hip: a non-blocking stream of the backend's own); wait: the host waits for it. */
  int (*fill)(void *dst, unsigned value, size_t count, int wait);
  int (*host_register)(void *p, size_t bytes);
  int (*host_unregister)(void *p);
  int (*ctx_sync)(void);
  /* Times the builtin af_fill kernel on `elems` elements with `spin` sentinel writes: each of
   * `reps` launches into t[], in microseconds (events with timing). */
  int (*time_spin)(int spin, int elems, int reps, double *t);
  /* Where the backend reports what the wrapper it mirrors would print (a warning, a JIT log):
   * the front end's log of the run (asyncfuzz_rt_log). A backend never prints. */
  void (*set_log)(void (*log)(const char *msg));
} RtDevOps;

/* Exported by libasyncfuzz_cuda.so. */
const RtDevOps *asyncfuzz_dev_ops(void);

#endif
