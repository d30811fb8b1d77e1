/*
 * opts.c: what the commands share: option values, generator knobs, --lowering and --backend,
 * loading a case, writing output, exit codes. Only cli/ includes cli.h.
 */
#include "cli.h"
#include "../check/check.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cli_gen_knobs_help[] =
    "generator knobs:\n"
    "  --ops N            target op count (default 32)\n"
    "  --buffers N        most device buffers alive at once (default 4)\n"
    "  --host-bufs N      host buffers (default 2)\n"
    "  --elems N          elements per buffer, 1..1024 (default 16)\n"
    "  --max-deps N       most dependencies per op, 2..4 (default 3)\n"
    "  --extra-deps PCT   chance of an extra, unneeded dependency (default 15)\n"
    "  --regions PCT      chance per step of opening an async.execute region (default 8)\n"
    "  --nesting N        region nesting depth (default 2)\n"
    "  --spin N           kernel spin count (default 64)\n"
    "  --host-shared PCT  share of host_shared allocations (default 10)\n"
    "  --sync PCT         share of synchronous allocs/deallocs (default 20)\n"
    "  --root-wait PCT    chance that an async op with no dependency waits on a fresh\n"
    "                     `gpu.wait async` token instead (default 0)\n"
    "  --extra-wait PCT   chance per step of a host `gpu.wait` that orders nothing new:\n"
    "                     with no operands, or on tokens already waited (default 8)\n"
    "  --captures PCT     chance that a region uses tokens of its spawning context\n"
    "                     directly, and that its ops depend on them (default 30)\n"
    "  --streams PCT      chance that a launch goes on an explicit stream the program\n"
    "                     creates, synchronizes and destroys itself (default 20)\n"
    "  --blocks PCT       chance per step of a func.call, scf.if, scf.for or cf.cond_br\n"
    "                     block whose body issues async work (default 6)\n"
    "  --typed PCT        share of buffers of i16, i64 or f32 elements, which memcpy\n"
    "                     and memset use (kernels take i32) (default 25)\n"
    "  --views PCT        chance that a memcpy, memset or kernel launch works on\n"
    "                     memref.subviews (offset, size, stride) of its buffers, and\n"
    "                     that a device buffer is static, cast to ?xT (default 15)\n"
    "  --mix L,C,S,A,D,W,H,O  op weights: launch, memcpy, memset, alloc, dealloc,\n"
    "                     wait_async, host_wait, observe (default 30,20,8,8,5,8,6,6)\n";

const char cli_backend_help[] =
    "backends (where lowered code runs):\n"
    "  --backend sim       the deterministic CPU simulator (default)\n"
    "  --backend cuda      an NVIDIA GPU through the CUDA Driver API, with tagged handles:\n"
    "                      misuse is refused and reported before it reaches the driver\n"
    "  --backend cuda:raw  the driver's own handles: misuse reaches the driver, as with\n"
    "                      MLIR's wrappers (the driver's answer is traced)\n"
    "  --backend hip[:raw] an AMD GPU through the HIP runtime, as MLIR's ROCm wrappers\n"
    "                      call it (the rocm flavour; docs/hip.md)\n"
    "  --spin N|auto       a GPU: sentinel writes per kernel element, replacing each case's\n"
    "                      spin (auto: calibrated so a kernel lasts $ASYNCFUZZ_SPIN_US us,\n"
    "                      default 200). GPU work runs in a child process with a watchdog\n"
    "                      ($ASYNCFUZZ_GPU_TIMEOUT s per case, default 60): a fault or hang\n"
    "                      gives that case a verdict and a fresh child takes over.\n"
    "  --abi cuda|rocm     the flavour of the mgpu* ABI runs follow: MLIR's CUDA or ROCm\n"
    "                      wrappers (docs/abi.md; default: rocm for rocdl code and on hip)\n";

int cli_backend_opt(CheckOpts *o, const char *opt, const char *val) {
  if (strcmp(opt, "--backend") == 0) {
    int b = val ? asyncfuzz_rt_backend_parse(val, &o->raw_handles) : -1;
    if (b < 0) {
      fprintf(stderr, "asyncfuzz: --backend takes sim, cuda, cuda:raw, hip or hip:raw, not %s\n",
              val ? val : "nothing");
      return -1;
    }
    o->backend = b;
    return 1;
  }
  if (strcmp(opt, "--abi") == 0) {
    if ((o->abi = 1 + (val ? asyncfuzz_rt_abi_parse(val) : -1)) > 0)
      return 1;
    fprintf(stderr, "asyncfuzz: --abi takes cuda or rocm, not %s\n", val ? val : "nothing");
    return -1;
  }
  if (strcmp(opt, "--spin") == 0) {
    long v;
    if (val && strcmp(val, "auto") == 0) {
      o->spin = -1;
      return 1;
    }
    if (cli_int(opt, val, 1, 1L << 24, &v))
      return -1;
    o->spin = (int)v;
    return 1;
  }
  return 0;
}

int cli_backend_start(const char *cmd, CheckOpts *o, char *dev, size_t n) {
  if (o->backend == RT_BACKEND_SIM) {
    snprintf(dev, n, "sim (deterministic CPU simulator)");
    return 0;
  }
  o->isolate = 1;
  CheckGpuInfo gi;
  AfErr err = {0};
  if (check_gpu_info(o, &gi, &err)) {
    fprintf(stderr, "asyncfuzz %s: the %s backend cannot run here: %s\n", cmd,
            asyncfuzz_rt_backend_name(o->backend), err.msg);
    return EXIT_INTERNAL;
  }
  o->spin = gi.spin;
  check_gpu_describe(o, &gi, dev, n);
  fprintf(stderr, "asyncfuzz %s: device: %s\n", cmd, dev);
  return 0;
}

int cli_int(const char *opt, const char *val, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = val ? strtol(val, &end, 0) : 0;
  if (val == NULL || *val == '\0' || *end != '\0' || errno || v < lo || v > hi) {
    fprintf(stderr, "asyncfuzz: %s needs an integer in %ld..%ld (got %s)\n", opt, lo, hi,
            val ? val : "nothing");
    return -1;
  }
  *out = v;
  return 0;
}

int cli_u64(const char *opt, const char *val, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = val ? strtoull(val, &end, 0) : 0;
  if (val == NULL || *val == '\0' || *end != '\0' || errno || val[0] == '-') {
    fprintf(stderr, "asyncfuzz: %s needs a non-negative integer (got %s)\n", opt,
            val ? val : "nothing");
    return -1;
  }
  *out = v;
  return 0;
}

int cli_gen_knob(GenConfig *cfg, const char *opt, const char *val) {
  struct {
    const char *name;
    int *field;
    long lo, hi;
  } knobs[] = {
      {"--ops", &cfg->ops, 1, 100000},
      {"--buffers", &cfg->buffers, 1, 200},
      {"--host-bufs", &cfg->host_bufs, 1, 32},
      {"--elems", &cfg->elems, 1, 1024},
      {"--max-deps", &cfg->max_deps, 2, GEN_MAX_DEPS},
      {"--extra-deps", &cfg->extra_dep_pct, 0, 100},
      {"--regions", &cfg->region_pct, 0, 100},
      {"--nesting", &cfg->max_nesting, 0, 8},
      {"--spin", &cfg->spin, 0, 1 << 24},
      {"--host-shared", &cfg->host_shared_pct, 0, 100},
      {"--sync", &cfg->sync_pct, 0, 100},
      {"--root-wait", &cfg->root_wait_pct, 0, 100},
      {"--extra-wait", &cfg->extra_wait_pct, 0, 100},
      {"--captures", &cfg->capture_pct, 0, 100},
      {"--streams", &cfg->stream_pct, 0, 100},
      {"--blocks", &cfg->block_pct, 0, 100},
      {"--typed", &cfg->typed_pct, 0, 100},
      {"--views", &cfg->view_pct, 0, 100},
  };
  for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++) {
    if (strcmp(opt, knobs[i].name) == 0) {
      long v;
      if (cli_int(opt, val, knobs[i].lo, knobs[i].hi, &v))
        return -1;
      *knobs[i].field = (int)v;
      return 1;
    }
  }
  if (strcmp(opt, "--mix") == 0) {
    int w[8];
    if (val == NULL || sscanf(val, "%d,%d,%d,%d,%d,%d,%d,%d", &w[0], &w[1], &w[2], &w[3], &w[4],
                              &w[5], &w[6], &w[7]) != 8) {
      fprintf(stderr, "asyncfuzz: --mix needs 8 comma-separated weights\n");
      return -1;
    }
    for (int i = 0; i < 8; i++)
      if (w[i] < 0 || w[i] > 1000) {
        fprintf(stderr, "asyncfuzz: --mix weights must be 0..1000\n");
        return -1;
      }
    cfg->w_launch = w[0];
    cfg->w_memcpy = w[1];
    cfg->w_memset = w[2];
    cfg->w_alloc = w[3];
    cfg->w_dealloc = w[4];
    cfg->w_wait_async = w[5];
    cfg->w_host_wait = w[6];
    cfg->w_observe = w[7];
    return 1;
  }
  return 0;
}

int cli_exit_for(int rc) {
  switch (rc) {
  case 0:
    return EXIT_OK;
  case AF_EUSAGE:
    return EXIT_USAGE;
  case AF_EPARSE:
  case AF_EINVALID:
    return EXIT_INPUT;
  case AF_EIO:
    return EXIT_INPUT;
  default:
    return EXIT_INTERNAL;
  }
}

int cli_is_help(const char *a) {
  return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

/* Loads and validates a case; prints the error. Returns an exit code. */
int cli_load_case(const char *path, GenCase *c, int validate) {
  AfErr err = {0};
  int rc = gen_case_load(c, path, &err);
  if (rc == 0 && validate)
    rc = gen_validate(c, &err);
  if (rc) {
    fprintf(stderr, "asyncfuzz: %s: %s\n", path, err.msg[0] ? err.msg : af_strerror(rc));
    return rc == AF_EIO ? EXIT_INPUT : cli_exit_for(rc);
  }
  return 0;
}

int cli_write_text(const char *path, const char *text) {
  if (path == NULL || strcmp(path, "-") == 0) {
    if (fputs(text, stdout) == EOF || fflush(stdout) == EOF) {
      fprintf(stderr, "asyncfuzz: cannot write output: %s\n", strerror(errno));
      return EXIT_INTERNAL;
    }
    return 0;
  }
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  if (f == NULL) {
    fprintf(stderr, "asyncfuzz: cannot write %s: %s\n", path, strerror(errno));
    return EXIT_INTERNAL;
  }
  int bad = fputs(text, f) == EOF;
  bad |= fclose(f) != 0;
  if (bad || rename(tmp, path) != 0) {
    fprintf(stderr, "asyncfuzz: cannot write %s: %s\n", path, strerror(errno));
    remove(tmp);
    return EXIT_INTERNAL;
  }
  return 0;
}

int cli_parse_lowering(const char *cmd, const char *s, const char *pipeline, int mixed,
                       LowerSpec *spec) {
  AfErr err = {0};
  if (lower_spec_parse(s, spec, &err) || (pipeline && (!mixed || spec->kind == LOWER_MLIR_OPT) &&
                                          lower_spec_set_pipeline(spec, pipeline, &err))) {
    fprintf(stderr, "asyncfuzz %s: %s\n", cmd, err.msg);
    return EXIT_USAGE;
  }
  return 0;
}

/* `run` and `device`: a GPU backend in this process, the spin calibrated when asked. */
int cli_open_backend_here(CheckOpts *o) {
  RtDeviceInfo di;
  char msg[600], d[400];
  const char *name = asyncfuzz_rt_backend_name(o->backend);
  if (asyncfuzz_rt_backend_open(o->backend, &di, msg, sizeof msg)) {
    fprintf(stderr, "asyncfuzz: the %s backend cannot run here: %s\n", name, msg);
    return EXIT_INTERNAL;
  }
  check_device_str(o, &di, d, sizeof d);
  fprintf(stderr, "asyncfuzz: %s device %d: %s\n", name, di.device, d);
  if (o->spin < 0) {
    const char *t = getenv("ASYNCFUZZ_SPIN_US");
    double target = t && atof(t) > 0 ? atof(t) : 200, us = 0;
    if (asyncfuzz_rt_calibrate(o->backend, target, 256, &o->spin, &us, msg, sizeof msg)) {
      fprintf(stderr, "asyncfuzz: calibration failed: %s\n", msg);
      return EXIT_INTERNAL;
    }
    fprintf(stderr, "asyncfuzz: spin %d: af_fill on 256 elements takes %.1f us (target %.0f us)\n",
            o->spin, us, target);
  }
  return 0;
}
