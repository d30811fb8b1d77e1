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

void cli_print_knobs_help(FILE *f) {
  fprintf(f, "generator knobs:\n");
  for (int i = 0; i < GEN_KNOB_COUNT; i++) {
    const GenKnob *k = gen_knob(i);
    char opt[64];
    snprintf(opt, sizeof opt, "%s %s", k->option, k->arg);
    fprintf(f, "  %-18s ", opt);
    for (const char *p = k->help; *p; p++) /* its lines under one another */
      fprintf(f, *p == '\n' ? "\n                     " : "%c", *p);
    fprintf(f, " (default %d)\n", k->def);
  }
  GenConfig d;
  gen_config_default(&d);
  fprintf(f, "  %-18s op weights, in this order (default ", "--mix W,W,...");
  for (int k = 0; k < GEN_MIX_COUNT; k++)
    fprintf(f, "%s%d", k ? "," : "", d.w[k]);
  fprintf(f, "):\n                    ");
  for (int k = 0; k < GEN_MIX_COUNT; k++)
    fprintf(f, "%s %s", k ? "," : "", gen_op_name(k));
  fprintf(
      f,
      "\n  %-18s build no op of this shape, or not this construct (repeatable): an op\n"
      "                     shape as findings name it (\"gpu.alloc async deps=0\", \"gpu.memcpy\n"
      "                     async deps=1 view\", \"scf.if\"), a block's crossing (call-arg,\n"
      "                     call-result, if-arg, if-result, loop-carried, loop-result,\n"
      "                     branch-arg, merge-arg: that block kind), or a construct:\n",
      "--avoid WHAT");
  for (int i = 0; i < GEN_CONSTRUCT__COUNT; i++)
    fprintf(f, "                       %-13s %s\n", gen_construct_name(i), gen_construct_help(i));
}

const char *cli_backend_list(int gpu_only) {
  static char list[256];
  size_t n = 0;
  list[0] = '\0';
  for (int b = 0; b < RT__BACKEND_COUNT && n < sizeof list; b++) {
    const RtBackendInfo *bi = asyncfuzz_rt_backend_info(b);
    if (gpu_only && !bi->gpu)
      continue;
    int w = snprintf(list + n, sizeof list - n, "%s%s%s%s", n ? "|" : "", bi->name,
                     bi->gpu && !gpu_only ? "|" : "", bi->gpu && !gpu_only ? bi->name : "");
    n += w > 0 ? (size_t)w : 0;
    if (bi->gpu && !gpu_only && n < sizeof list)
      n += (size_t)snprintf(list + n, sizeof list - n, ":raw");
  }
  return list;
}

void cli_print_backend_help(FILE *f) {
  fprintf(f, "backends (where lowered code runs):\n");
  for (int b = 0; b < RT__BACKEND_COUNT; b++) {
    const RtBackendInfo *bi = asyncfuzz_rt_backend_info(b);
    char opt[48];
    snprintf(opt, sizeof opt, "--backend %s%s", bi->name, bi->gpu ? "[:raw]" : "");
    fprintf(f, "  %-20s ", opt);
    for (const char *p = bi->help; *p; p++) /* its lines under one another */
      fprintf(f, *p == '\n' ? "\n                       " : "%c", *p);
    fprintf(f, "\n");
  }
  fputs("  --spin N|auto        a GPU: sentinel writes per kernel element, replacing each case's\n"
        "                       spin (auto: calibrated so a kernel lasts $ASYNCFUZZ_SPIN_US us,\n"
        "                       default 200). GPU work runs in a child process with a watchdog\n"
        "                       ($ASYNCFUZZ_GPU_TIMEOUT s per case, default 60): a fault or\n"
        "                       hang gives that case a verdict and a fresh child takes over.\n"
        "  --gpu-jobs N         a GPU: cases at once, each in a child process of its own (its\n"
        "                       own context, streams and buffers; default 4; 1: one at a time)\n"
        "  --abi cuda|rocm      the flavour of the mgpu* ABI runs follow: MLIR's CUDA or ROCm\n"
        "                       wrappers (docs/abi.md; default: the backend's, or on the sim\n"
        "                       rocm for rocdl code, else cuda)\n",
        f);
}

int cli_backend_opt(CheckOpts *o, const char *opt, const char *val) {
  if (strcmp(opt, "--backend") == 0) {
    int b = val ? asyncfuzz_rt_backend_parse(val, &o->raw_handles) : -1;
    if (b < 0) {
      fprintf(stderr, "asyncfuzz: --backend takes one of %s, not %s\n", cli_backend_list(0),
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
  if (strcmp(opt, "--gpu-jobs") == 0) {
    long v;
    if (cli_int(opt, val, 1, CHECK_GPU_JOBS_MAX, &v))
      return -1;
    o->gpu_jobs = (int)v;
    return 1;
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

int cli_opt_abi(void *o, const char *val) {
  return cli_backend_opt(o, "--abi", val) < 0 ? EXIT_USAGE : 0;
}

int cli_backend_start(const char *cmd, CheckOpts *o, char *dev, size_t n) {
  if (!asyncfuzz_rt_backend_info(o->backend)->gpu) {
    asyncfuzz_rt_backend_info(o->backend)->describe(NULL, dev, n);
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
  for (int i = 0; i < GEN_KNOB_COUNT; i++) {
    const GenKnob *k = gen_knob(i);
    if (strcmp(opt, k->option) == 0) {
      long v;
      if (cli_int(opt, val, k->lo, k->hi, &v))
        return -1;
      *gen_knob_field(cfg, k) = (int)v;
      return 1;
    }
  }
  if (strcmp(opt, "--avoid") == 0) { /* repeatable: what the generator must not build */
    if (val == NULL || gen_avoid_add(&cfg->avoid, val) < 0) {
      fprintf(stderr,
              "asyncfuzz: --avoid needs an op shape (\"gpu.alloc async deps=0\", \"scf.if\") or "
              "a construct (%s) (got %s)\n",
              "see --help", val ? val : "nothing");
      return -1;
    }
    return 1;
  }
  if (strcmp(opt, "--mix") == 0) { /* the weights of the kinds of the op mix, in table order */
    int w[GEN_MIX_COUNT], k = 0;
    const char *p = val ? val : "";
    char *end = (char *)p;
    while (k < GEN_MIX_COUNT) {
      long v = strtol(p, &end, 10);
      if (end == p || v < 0 || v > 1000)
        break;
      w[k++] = (int)v;
      if (*end != ',')
        break;
      p = end + 1;
    }
    if (k != GEN_MIX_COUNT || *end != '\0') {
      fprintf(stderr, "asyncfuzz: --mix needs %d comma-separated weights of 0..1000 (",
              GEN_MIX_COUNT);
      for (int i = 0; i < GEN_MIX_COUNT; i++)
        fprintf(stderr, "%s%s", i ? "," : "", gen_op_name(i));
      fprintf(stderr, ")\n");
      return -1;
    }
    memcpy(cfg->w, w, sizeof w);
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

/* Option a of opts with its value val: 1 when it took val, 0 when not, or -EXIT_USAGE. */
static int take_opt(const CliOpt *op, const char *a, const char *val) {
  long v;
  if (op->arg == CLI_FLAG) {
    *(int *)op->dst = (int)op->lo;
    return 0;
  }
  if (val == NULL) {
    fprintf(stderr, "asyncfuzz: %s needs a value\n", a);
    return -EXIT_USAGE;
  }
  switch (op->arg) {
  case CLI_STR:
    *(const char **)op->dst = val;
    return 1;
  case CLI_INT:
  case CLI_LONG:
    if (cli_int(a, val, op->lo, op->hi, &v))
      return -EXIT_USAGE;
    if (op->arg == CLI_INT)
      *(int *)op->dst = (int)v;
    else
      *(long *)op->dst = v;
    return 1;
  case CLI_U64:
    return cli_u64(a, val, op->dst) ? -EXIT_USAGE : 1;
  case CLI_STRS: {
    CliStrs *l = op->dst;
    if (l->n == CLI_MAX_STRS) {
      fprintf(stderr, "asyncfuzz: %s given more than %d times\n", a, CLI_MAX_STRS);
      return -EXIT_USAGE;
    }
    l->v[l->n++] = val;
    return 1;
  }
  default: {
    int ex = op->fn(op->dst, val);
    return ex ? -ex : 1;
  }
  }
}

int cli_parse(const char *cmd, int argc, char **argv, const CliOpt *opts, CheckOpts *o,
              GenConfig *k, const char **pos, int maxpos, int *npos, void (*help)(FILE *f)) {
  *npos = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    const CliOpt *op = opts;
    while (op && op->name && strcmp(op->name, a) != 0)
      op++;
    int r = 0;
    if (cli_is_help(a)) {
      help(stdout);
      return -1;
    } else if (op && op->name) {
      r = take_opt(op, a, val);
    } else if (o && (r = cli_backend_opt(o, a, val)) != 0) {
      r = r < 0 ? -EXIT_USAGE : 1;
    } else if (k && (r = cli_gen_knob(k, a, val)) != 0) {
      r = r < 0 ? -EXIT_USAGE : 1;
    } else if (a[0] == '-' && a[1] != '\0') {
      fprintf(stderr, "asyncfuzz %s: unknown option %s (see --help)\n", cmd, a);
      return EXIT_USAGE;
    } else if (*npos == maxpos) {
      fprintf(stderr, "asyncfuzz %s: too many arguments (%s; see --help)\n", cmd, a);
      return EXIT_USAGE;
    } else {
      pos[(*npos)++] = a;
    }
    if (r < 0)
      return -r;
    i += r;
  }
  return 0;
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
