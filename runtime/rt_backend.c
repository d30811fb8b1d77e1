/*
 * rt_backend.c: the backends (RtBackendInfo, asyncfuzz_rt.h): one row each, read by the runtime
 * (which library opens a GPU, the device string), the harness (which flavour and which kernels a
 * backend runs: check/backend.c) and the command line (--backend, --help). A GPU backend's
 * library is loaded with dlopen only when a run asks for it, so the sim works on machines
 * without a driver; calibration times the sentinel kernel on it.
 */
#define _GNU_SOURCE /* dladdr */
#include "rt_sim_int.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void describe_sim(const RtDeviceInfo *d, char *out, size_t n) {
  (void)d;
  snprintf(out, n, "sim (deterministic CPU simulator)");
}

static void describe_cuda(const RtDeviceInfo *d, char *out, size_t n) {
  snprintf(out, n, "%s (sm_%d%d, %d SMs, %lld MiB, driver %d.%d, built with CUDA %d.%d)", d->name,
           d->cc_major, d->cc_minor, d->sm_count, (long long)d->mem_mib, d->driver_version / 1000,
           d->driver_version % 1000 / 10, d->cuda_version / 1000, d->cuda_version % 1000 / 10);
}

static void describe_hip(const RtDeviceInfo *d, char *out, size_t n) {
  snprintf(out, n, "%s (%s, %d CUs, %lld MiB, driver %d, built with HIP %d.%d)", d->name, d->arch,
           d->sm_count, (long long)d->mem_mib, d->driver_version, d->cuda_version / 10000000,
           d->cuda_version / 100000 % 100);
}

static const RtBackendInfo backends[RT__BACKEND_COUNT] = {
    [RT_BACKEND_SIM] = {.name = "sim",
                        .help = "the deterministic CPU simulator (default), in every ABI flavour",
                        .abi = -1,
                        .targets = "nvvm,rocdl",
                        .describe = describe_sim},
    [RT_BACKEND_CUDA] = {.name = "cuda",
                         .help = "an NVIDIA GPU through the CUDA Driver API, with tagged handles:\n"
                                 "misuse is refused and reported before it reaches the driver;\n"
                                 "cuda:raw passes the driver's own handles, as MLIR's wrappers do\n"
                                 "(misuse reaches the driver, whose answer is traced)",
                         .gpu = 1,
                         .abi = RT_ABI_CUDA,
                         .targets = "nvvm",
                         .lib = "libasyncfuzz_cuda.so",
                         .lib_env = "ASYNCFUZZ_CUDA_BACKEND",
                         .dev_env = "ASYNCFUZZ_CUDA_DEVICE",
                         .driver = "libcuda.so",
                         .driver_what = "the NVIDIA driver library",
                         .missing = "CUDA driver",
                         .builds = "the CUDA toolkit",
                         .describe = describe_cuda},
    [RT_BACKEND_HIP] = {.name = "hip",
                        .help = "an AMD GPU through the HIP runtime, as MLIR's ROCm wrappers call\n"
                                "it (the rocm flavour; docs/hip.md); hip:raw: the runtime's own\n"
                                "handles",
                        .gpu = 1,
                        .abi = RT_ABI_ROCM,
                        .targets = "rocdl",
                        .code_object = 1,
                        .lib = "libasyncfuzz_hip.so",
                        .lib_env = "ASYNCFUZZ_HIP_BACKEND",
                        .dev_env = "ASYNCFUZZ_HIP_DEVICE",
                        .driver = "libamdhip64.so",
                        .driver_what = "the HIP runtime library",
                        .missing = "HIP runtime",
                        .builds = "the HIP headers (libamdhip64-dev)",
                        .describe = describe_hip},
};

const RtBackendInfo *asyncfuzz_rt_backend_info(int backend) {
  return backend >= 0 && backend < RT__BACKEND_COUNT ? &backends[backend] : NULL;
}

const char *asyncfuzz_rt_backend_name(int backend) {
  return backend >= 0 && backend < RT__BACKEND_COUNT ? backends[backend].name : "?";
}

int asyncfuzz_rt_backend_parse(const char *name, int *raw) {
  *raw = 0;
  for (int b = 0; b < RT__BACKEND_COUNT; b++) {
    size_t k = strlen(backends[b].name);
    if (strncmp(name, backends[b].name, k) != 0)
      continue;
    if (name[k] == '\0' || (backends[b].gpu && strcmp(name + k, ":tagged") == 0))
      return b;
    if (backends[b].gpu && strcmp(name + k, ":raw") == 0) {
      *raw = 1;
      return b;
    }
  }
  return -1;
}

int rt__open_dev(int backend, char *msg, size_t n) {
  static int tried[RT__BACKEND_COUNT], failed[RT__BACKEND_COUNT];
  static char why[RT__BACKEND_COUNT][512];
  const RtBackendInfo *bi = asyncfuzz_rt_backend_info(backend);
  if (bi == NULL || !bi->gpu) {
    snprintf(msg, n, "backend %d has no device library", backend);
    return AF_EUNSUPPORTED;
  }
  if (rt__g_dev[backend])
    return 0;
  if (tried[backend] && failed[backend]) {
    snprintf(msg, n, "%s", why[backend]);
    return AF_EUNSUPPORTED;
  }
  tried[backend] = 1;
  char path[4096];
  const char *env = getenv(bi->lib_env);
  Dl_info di; /* the backend's library: $<lib_env>, else next to this library */
  if (env && *env)
    snprintf(path, sizeof path, "%s", env);
  else if (dladdr((void *)rt__open_dev, &di) && di.dli_fname && strchr(di.dli_fname, '/'))
    snprintf(path, sizeof path, "%.*s/%s", (int)(strrchr(di.dli_fname, '/') - di.dli_fname),
             di.dli_fname, bi->lib);
  else
    snprintf(path, sizeof path, "%s", bi->lib);
  failed[backend] = 1;
  char *w = why[backend];
  size_t wn = sizeof why[backend];
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    const char *e = dlerror();
    if (e && strstr(e, bi->driver))
      snprintf(w, wn, "%s is missing (%.300s): this machine has no %s", bi->driver_what, e,
               bi->missing);
    else
      snprintf(w, wn, "cannot load the %s backend (%.300s): build asyncfuzz with %s, or set %s",
               bi->name, e ? e : path, bi->builds, bi->lib_env);
  } else {
    const RtDevOps *(*get)(void) = (const RtDevOps *(*)(void))dlsym(lib, "asyncfuzz_dev_ops");
    const RtDevOps *ops = get ? get() : NULL;
    const char *d = getenv(bi->dev_env);
    char m[400] = "";
    if (ops == NULL || ops->abi != RT_DEV_ABI || strcmp(ops->name, bi->name) != 0)
      snprintf(w, wn, "%.400s is not the %s backend of this asyncfuzz build", path, bi->name);
    else if (ops->init(d && *d ? atoi(d) : 0, &rt__g_dev_info[backend], m, sizeof m))
      snprintf(w, wn, "%s", m);
    else
      rt__g_dev[backend] = ops, failed[backend] = 0;
    if (rt__g_dev[backend])
      ops->set_log(rt__log);
  }
  if (failed[backend])
    snprintf(msg, n, "%s", w);
  return failed[backend] ? AF_EUNSUPPORTED : 0;
}

int asyncfuzz_rt_backend_open(int backend, RtDeviceInfo *info, char *msg, size_t n) {
  if (info)
    memset(info, 0, sizeof *info);
  if (backend == RT_BACKEND_SIM) {
    if (info)
      snprintf(info->name, sizeof info->name, "sim");
    return 0;
  }
  pthread_mutex_lock(&rt__g_rt.mu);
  int rc = rt__open_dev(backend, msg, n);
  if (rc == 0 && info)
    *info = rt__g_dev_info[backend];
  pthread_mutex_unlock(&rt__g_rt.mu);
  return rc;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int asyncfuzz_rt_calibrate(int backend, double target_us, int elems, int *spin, double *us,
                           char *msg, size_t n) {
  if (backend == RT_BACKEND_SIM) {
    snprintf(msg, n, "the sim has no clock to calibrate against");
    return AF_EUNSUPPORTED;
  }
  int rc = asyncfuzz_rt_backend_open(backend, NULL, msg, n);
  if (rc)
    return rc;
  const RtDevOps *dev = rt__g_dev[backend];
  pthread_mutex_lock(&rt__g_rt.mu);
  dev->enter();
  int code = 0;
  double t[5] = {0}; /* the median of 5 launches */
  int s = 1;
  for (; s <= (1 << 24); s *= 2) {
    if ((code = dev->time_spin(s, elems, 5, t)) != 0)
      break;
    qsort(t, 5, sizeof t[0], cmp_double);
    if (t[2] >= target_us)
      break;
  }
  pthread_mutex_unlock(&rt__g_rt.mu);
  if (code) {
    snprintf(msg, n, "timing the sentinel kernel failed: %s", dev->error_name(code));
    return AF_ERUNTIME;
  }
  *spin = s > (1 << 24) ? (1 << 24) : s;
  *us = t[2];
  return 0;
}
