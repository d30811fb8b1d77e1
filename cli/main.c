/*
 * main.c: the asyncfuzz command: gen, render, validate, lower, run, check, campaign.
 */
#include "cli.h"
#include "../check/check.h"
#include "../base/proc.h"
#include "../lower/mlir.h"
#include "../reduce/reduce.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char main_help[] =
    "asyncfuzz " ASYNCFUZZ_VERSION
    ": differential testing of GPU async lowerings (gpu.async.token DAGs -> mgpu* calls)\n"
    "\n"
    "usage: asyncfuzz COMMAND [options]     (asyncfuzz COMMAND --help for details)\n"
    "\n"
    "commands:\n"
    "  gen        generate a random valid case (JSON, or MLIR with --mlir)\n"
    "  render     print a case as an MLIR gpu-dialect module\n"
    "  validate   check that a case file is well formed and race-free\n"
    "  lower      print a lowering of a case (builtin: mgpu* call program; mlir-opt)\n"
    "  run        execute a case once and print its observations and trace\n"
    "  check      run a case under several schedules and judge each run\n"
    "  campaign   generate and check cases in a loop, saving failures\n"
    "  check-trace  check a runtime trace file (e.g. of code run by mlir-runner)\n"
    "  reduce     minimize a failing case to a small reproducer (.json and .mlir)\n"
    "  db         query the regression database (list, show, stats, mark, export, merge)\n"
    "  device     describe the GPU of the cuda backend and calibrate its spin count\n"
    "  compile-batch  lower and compile cases ahead of time into a shared object (mlir-opt)\n"
    "  run-batch  run a compiled batch (GPU runners without MLIR) and judge every case\n"
    "  report     write an HTML report of the regression database\n"
    "\n"
    "exit codes: 0 ok/pass, 1 failure found, 2 usage error, 3 bad input, 4 internal error\n";

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
    "  --mix L,C,S,A,D,W,H,O  op weights: launch, memcpy, memset, alloc, dealloc,\n"
    "                     wait_async, host_wait, observe (default 30,20,8,8,5,8,6,6)\n";

const char cli_backend_help[] =
    "backends (where lowered code runs):\n"
    "  --backend sim       the deterministic CPU simulator (default)\n"
    "  --backend cuda      an NVIDIA GPU through the CUDA Driver API, with tagged handles:\n"
    "                      misuse is refused and reported before it reaches the driver\n"
    "  --backend cuda:raw  the driver's own handles: misuse reaches the driver, as with\n"
    "                      MLIR's wrappers (the driver's answer is traced)\n"
    "  --spin N|auto       cuda: sentinel writes per kernel element, replacing each case's\n"
    "                      spin (auto: calibrated so a kernel lasts $ASYNCFUZZ_SPIN_US us,\n"
    "                      default 200). GPU work runs in a child process with a watchdog\n"
    "                      ($ASYNCFUZZ_GPU_TIMEOUT s per case, default 60): a fault or hang\n"
    "                      gives that case a verdict and a fresh child takes over.\n";

int cli_backend_opt(CheckOpts *o, const char *opt, const char *val) {
  if (strcmp(opt, "--backend") == 0) {
    int b = val ? asyncfuzz_rt_backend_parse(val, &o->raw_handles) : -1;
    if (b < 0) {
      fprintf(stderr, "asyncfuzz: --backend takes sim, cuda or cuda:raw, not %s\n",
              val ? val : "nothing");
      return -1;
    }
    o->backend = b;
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

int cli_backend_start(const char *cmd, CheckOpts *o, char *dev, size_t n) {
  if (o->backend != RT_BACKEND_CUDA) {
    snprintf(dev, n, "sim (deterministic CPU simulator)");
    return 0;
  }
  o->isolate = 1;
  CheckGpuInfo gi;
  AfErr err = {0};
  if (check_gpu_info(o, &gi, &err)) {
    fprintf(stderr, "asyncfuzz %s: the cuda backend cannot run here: %s\n", cmd, err.msg);
    return EXIT_INTERNAL;
  }
  o->spin = gi.spin;
  char spin[64] = "each case's own spin";
  if (gi.spin > 0 && gi.spin_us > 0)
    snprintf(spin, sizeof spin, "spin %d (calibrated: %.1f us)", gi.spin, gi.spin_us);
  else if (gi.spin > 0)
    snprintf(spin, sizeof spin, "spin %d", gi.spin);
  snprintf(dev, n, "%s %s (sm_%d%d, %d SMs, %lld MiB, driver %d.%d, built with CUDA %d.%d), %s",
           o->raw_handles ? "cuda:raw" : "cuda", gi.dev.name, gi.dev.cc_major, gi.dev.cc_minor,
           gi.dev.sm_count, (long long)gi.dev.mem_mib, gi.dev.driver_version / 1000,
           gi.dev.driver_version % 1000 / 10, gi.dev.cuda_version / 1000,
           gi.dev.cuda_version % 1000 / 10, spin);
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
#define is_help cli_is_help

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

static int write_text(const char *path, const char *text) {
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

/* ---- gen ---- */

static int cmd_gen(int argc, char **argv) {
  GenConfig cfg;
  gen_config_default(&cfg);
  uint64_t seed = 1;
  const char *out = NULL;
  int mlir = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (is_help(a)) {
      printf("usage: asyncfuzz gen [--seed N] [-o FILE] [--mlir] [knobs]\n"
             "Generates a random valid case. The same seed and knobs give byte-identical "
             "output.\n\n%s",
             cli_gen_knobs_help);
      return 0;
    } else if (strcmp(a, "--seed") == 0) {
      if (cli_u64(a, i + 1 < argc ? argv[++i] : NULL, &seed))
        return EXIT_USAGE;
    } else if (strcmp(a, "-o") == 0 || strcmp(a, "--out") == 0) {
      if (i + 1 >= argc) {
        fprintf(stderr, "asyncfuzz: %s needs a file name\n", a);
        return EXIT_USAGE;
      }
      out = argv[++i];
    } else if (strcmp(a, "--mlir") == 0) {
      mlir = 1;
    } else {
      int k = cli_gen_knob(&cfg, a, i + 1 < argc ? argv[i + 1] : NULL);
      if (k < 0)
        return EXIT_USAGE;
      if (k == 0) {
        fprintf(stderr, "asyncfuzz gen: unknown option %s (see --help)\n", a);
        return EXIT_USAGE;
      }
      i++;
    }
  }
  GenCase c;
  AfErr err = {0};
  int rc = gen_generate(&c, seed, &cfg, &err);
  if (rc) {
    fprintf(stderr, "asyncfuzz gen: %s\n", err.msg);
    gen_case_free(&c);
    return cli_exit_for(rc);
  }
  char *text = mlir ? gen_render_mlir(&c) : gen_case_to_json(&c);
  gen_case_free(&c);
  if (text == NULL) {
    fprintf(stderr, "asyncfuzz gen: out of memory\n");
    return EXIT_INTERNAL;
  }
  rc = write_text(out, text);
  af_free(text);
  return rc;
}

/* ---- render / validate ---- */

static int cmd_render(int argc, char **argv) {
  if (argc != 2 || is_help(argv[1])) {
    printf("usage: asyncfuzz render CASE.json\n"
           "Prints the case as an MLIR module (gpu, func, memref, arith, scf, async dialects)\n"
           "with the sentinel kernels as gpu.func, ready for mlir-opt.\n");
    return argc == 2 ? 0 : EXIT_USAGE;
  }
  GenCase c;
  int ex = cli_load_case(argv[1], &c, 1);
  if (ex) {
    gen_case_free(&c);
    return ex;
  }
  char *text = gen_render_mlir(&c);
  gen_case_free(&c);
  if (text == NULL)
    return EXIT_INTERNAL;
  ex = write_text(NULL, text);
  af_free(text);
  return ex;
}

static int cmd_validate(int argc, char **argv) {
  if (argc != 2 || is_help(argv[1])) {
    printf("usage: asyncfuzz validate CASE.json\n"
           "Checks the case format and the rules that give a case one meaning: tokens defined\n"
           "once before use, buffers written before read, no use after dealloc, every\n"
           "conflicting access pair ordered by the token DAG, every region awaited.\n");
    return argc == 2 ? 0 : EXIT_USAGE;
  }
  GenCase c;
  int ex = cli_load_case(argv[1], &c, 1);
  if (ex == 0)
    printf("%s: valid (%d ops, %d buffers, %d regions)\n", argv[1], c.nops, c.nbufs,
           c.nregions - 1);
  gen_case_free(&c);
  return ex;
}

/* ---- lower ---- */

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

static void print_faults(FILE *f) {
  fprintf(f, "builtin fault switches (--lowering builtin:fault=NAME[,NAME]):\n");
  for (int k = 0; k < LOWER_FAULT__COUNT; k++)
    fprintf(f, "  %-22s %s\n", lower_fault_name(k), lower_fault_desc(k));
}

/* The module mlir-opt makes of the case, or its lowering outcome. */
static int lower_with_mlir(const GenCase *c, const LowerSpec *spec) {
  AfErr err = {0};
  char dir[4096];
  if (mlir_tmpdir(dir, sizeof dir, &err)) {
    fprintf(stderr, "asyncfuzz lower: %s\n", err.msg);
    return EXIT_INTERNAL;
  }
  int zero = 0;
  char *chunk = gen_render_mlir_batch(&c, &zero, 1, 1);
  MlirLowered l;
  memset(&l, 0, sizeof l);
  int rc = chunk ? mlir_lower_batch(spec, dir, &chunk, 1, &l, &err)
                 : af_err_set(&err, AF_ENOMEM, "out of memory");
  af_free(chunk);
  af_rm_tree(dir);
  if (rc) {
    fprintf(stderr, "asyncfuzz lower: %s\n", err.msg);
    return cli_exit_for(rc);
  }
  int ex;
  if (l.outcome == MLIR_OK) {
    ex = write_text(NULL, l.code);
  } else {
    Verdict v;
    check_lowering_verdict(spec, &l, &v);
    printf("%s\nsignature: %s\ndetail: %s\n", oracle_verdict_name(v.cls), v.signature, v.detail);
    ex = EXIT_FOUND;
  }
  mlir_lowered_free(&l, 1);
  return ex;
}

static int cmd_lower(int argc, char **argv) {
  const char *path = NULL, *lowering = "builtin", *pipeline = NULL;
  for (int i = 1; i < argc; i++) {
    if (is_help(argv[i])) {
      printf(
          "usage: asyncfuzz lower CASE.json [--lowering SPEC] [--pipeline P]\n"
          "Prints the mgpu* call program the builtin lowering makes of the case, or, with\n"
          "SPEC mlir-opt[@VARIANT][:PATH], the LLVM-dialect module mlir-opt makes of it (or\n"
          "its outcome class and signature when it does not lower fully; exit 1).\n"
          "SPEC: builtin (default), builtin:fault=NAME[,NAME] or mlir-opt[@VARIANT][:PATH].\n\n");
      printf("mlir-opt pipelines (mlir-opt@VARIANT):\n");
      for (int k = 0; k < mlir_variant_count(); k++)
        printf("  %-14s %s:\n                 %s\n", mlir_variant_name(k), mlir_variant_desc(k),
               mlir_variant_pipeline(k));
      printf("\n");
      print_faults(stdout);
      return 0;
    } else if (strcmp(argv[i], "--list-faults") == 0) {
      print_faults(stdout);
      return 0;
    } else if (strcmp(argv[i], "--lowering") == 0 && i + 1 < argc) {
      lowering = argv[++i];
    } else if (strcmp(argv[i], "--pipeline") == 0 && i + 1 < argc) {
      pipeline = argv[++i];
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "asyncfuzz lower: unknown option %s (see --help)\n", argv[i]);
      return EXIT_USAGE;
    } else if (path == NULL) {
      path = argv[i];
    } else {
      fprintf(stderr, "asyncfuzz lower: one case at a time\n");
      return EXIT_USAGE;
    }
  }
  if (path == NULL) {
    fprintf(stderr, "asyncfuzz lower: which case? (see --help)\n");
    return EXIT_USAGE;
  }
  LowerSpec spec;
  if (cli_parse_lowering("lower", lowering, pipeline, 0, &spec))
    return EXIT_USAGE;
  AfErr err = {0};
  GenCase c;
  int ex = cli_load_case(path, &c, 1);
  if (ex) {
    gen_case_free(&c);
    return ex;
  }
  if (spec.kind == LOWER_MLIR_OPT) {
    ex = lower_with_mlir(&c, &spec);
    gen_case_free(&c);
    return ex;
  }
  LowerProgram *p;
  int rc = lower_builtin(&c, &spec, &p, &err);
  gen_case_free(&c);
  if (rc) {
    fprintf(stderr, "asyncfuzz lower: %s\n", err.msg);
    return cli_exit_for(rc);
  }
  char *text = lower_program_to_text(p);
  lower_program_free(p);
  if (text == NULL)
    return EXIT_INTERNAL;
  ex = write_text(NULL, text);
  af_free(text);
  return ex;
}

/* ---- run / check ---- */

/* `run` and `device`: the cuda backend in this process, the spin calibrated when asked. */
static int open_backend_here(CheckOpts *o) {
  RtDeviceInfo di;
  char msg[600];
  if (asyncfuzz_rt_backend_open(RT_BACKEND_CUDA, &di, msg, sizeof msg)) {
    fprintf(stderr, "asyncfuzz: the cuda backend cannot run here: %s\n", msg);
    return EXIT_INTERNAL;
  }
  fprintf(stderr,
          "asyncfuzz: device %d: %s (sm_%d%d, %d SMs, %lld MiB, driver %d.%d, built with CUDA "
          "%d.%d)\n",
          di.device, di.name, di.cc_major, di.cc_minor, di.sm_count, (long long)di.mem_mib,
          di.driver_version / 1000, di.driver_version % 1000 / 10, di.cuda_version / 1000,
          di.cuda_version % 1000 / 10);
  if (o->spin < 0) {
    const char *t = getenv("ASYNCFUZZ_SPIN_US");
    double target = t && atof(t) > 0 ? atof(t) : 200, us = 0;
    if (asyncfuzz_rt_calibrate(target, 256, &o->spin, &us, msg, sizeof msg)) {
      fprintf(stderr, "asyncfuzz: calibration failed: %s\n", msg);
      return EXIT_INTERNAL;
    }
    fprintf(stderr, "asyncfuzz: spin %d: af_fill on 256 elements takes %.1f us (target %.0f us)\n",
            o->spin, us, target);
  }
  return 0;
}

static int cmd_device(int argc, char **argv) {
  CheckOpts o = {0};
  o.backend = RT_BACKEND_CUDA;
  for (int i = 1; i < argc; i++) {
    if (is_help(argv[i])) {
      printf("usage: asyncfuzz device [--calibrate] [--target-us N]\n"
             "Opens the cuda backend's GPU ($ASYNCFUZZ_CUDA_DEVICE, default 0) and prints its\n"
             "name, compute capability, driver and CUDA versions. --calibrate also measures the\n"
             "sentinel kernel and prints the spin count that makes it last N microseconds\n"
             "(default $ASYNCFUZZ_SPIN_US or 200): the value of --spin auto.\n"
             "Exit 0, or 4 when there is no usable GPU (the reason is printed).\n");
      return 0;
    } else if (strcmp(argv[i], "--calibrate") == 0) {
      o.spin = -1;
    } else if (strcmp(argv[i], "--target-us") == 0 && i + 1 < argc) {
      long v;
      if (cli_int(argv[i], argv[i + 1], 1, 10000000, &v))
        return EXIT_USAGE;
      char buf[32];
      snprintf(buf, sizeof buf, "%ld", v);
      setenv("ASYNCFUZZ_SPIN_US", buf, 1);
      i++;
    } else {
      fprintf(stderr, "asyncfuzz device: unknown or incomplete option %s (see --help)\n", argv[i]);
      return EXIT_USAGE;
    }
  }
  int ex = open_backend_here(&o);
  if (ex == 0 && o.spin > 0)
    printf("spin %d\n", o.spin);
  return ex;
}

static int cmd_run(int argc, char **argv) {
  const char *path = NULL, *lowering = "builtin", *trace_path = NULL, *policy = "eager";
  const char *bin_path = NULL;
  uint64_t seed = 0;
  CheckOpts o = {0};
  int bo;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (is_help(a)) {
      printf("usage: asyncfuzz run CASE.json [--lowering SPEC] [--policy eager|lazy|random|pct]\n"
             "                  [--sched-seed N] [--trace FILE|-] [--trace-bin FILE]\n"
             "                  [--device-steps] [--memfree-sync] [--no-checker]\n"
             "                  [--backend sim|cuda|cuda:raw] [--spin N|auto]\n"
             "Executes the case once (on the simulator unless --backend says otherwise) and\n"
             "prints the observations, the verdict, the happens-before checker's reports and\n"
             "(with --trace) the runtime trace (format: docs/trace-format.md; --trace-bin saves\n"
             "it for `asyncfuzz check-trace`). --memfree-sync models mgpuMemFree as\n"
             "synchronizing the device (lenient); --no-checker judges by observations and\n"
             "errors only. `run` executes in this process, also on a GPU (no child process).\n\n"
             "%s",
             cli_backend_help);
      return 0;
    } else if (strcmp(a, "--lowering") == 0 && i + 1 < argc) {
      lowering = argv[++i];
    } else if (strcmp(a, "--policy") == 0 && i + 1 < argc) {
      policy = argv[++i];
    } else if (strcmp(a, "--sched-seed") == 0) {
      if (cli_u64(a, i + 1 < argc ? argv[++i] : NULL, &seed))
        return EXIT_USAGE;
    } else if (strcmp(a, "--trace") == 0 && i + 1 < argc) {
      trace_path = argv[++i];
    } else if (strcmp(a, "--trace-bin") == 0 && i + 1 < argc) {
      bin_path = argv[++i];
    } else if (strcmp(a, "--device-steps") == 0) {
      o.record_device = 1;
    } else if (strcmp(a, "--no-checker") == 0) {
      o.no_checker = 1;
    } else if (strcmp(a, "--memfree-sync") == 0) {
      o.memfree_sync = 1;
    } else if ((bo = cli_backend_opt(&o, a, i + 1 < argc ? argv[i + 1] : NULL)) != 0) {
      if (bo < 0)
        return EXIT_USAGE;
      i++;
    } else if (a[0] == '-') {
      fprintf(stderr, "asyncfuzz run: unknown or incomplete option %s (see --help)\n", a);
      return EXIT_USAGE;
    } else if (path == NULL) {
      path = a;
    } else {
      fprintf(stderr, "asyncfuzz run: one case at a time\n");
      return EXIT_USAGE;
    }
  }
  if (path == NULL) {
    fprintf(stderr, "asyncfuzz run: which case? (see --help)\n");
    return EXIT_USAGE;
  }
  Schedule s;
  s.policy = asyncfuzz_rt_policy_parse(policy);
  s.seed = seed;
  if (s.policy < 0) {
    fprintf(stderr, "asyncfuzz run: unknown policy %s (eager, lazy, random, pct)\n", policy);
    return EXIT_USAGE;
  }
  LowerSpec spec;
  if (cli_parse_lowering("run", lowering, NULL, 0, &spec))
    return EXIT_USAGE;
  if (spec.kind == LOWER_MLIR_OPT) {
    fprintf(stderr,
            "asyncfuzz run: the mlir-opt lowering runs through `asyncfuzz check CASE "
            "--lowering %s --schedules POLICY@SEED`; with ASYNCFUZZ_KEEP_TMP=1 it keeps "
            "the lowered module and the binary traces for `asyncfuzz check-trace`\n",
            spec.arg);
    return EXIT_USAGE;
  }
  GenCase c;
  int ex = cli_load_case(path, &c, 1);
  if (ex) {
    gen_case_free(&c);
    return ex;
  }
  Verdict v;
  AfErr err = {0};
  if (o.backend == RT_BACKEND_CUDA && (ex = open_backend_here(&o)) != 0) {
    gen_case_free(&c);
    return ex;
  }
  int rc = check_run_once(&c, &spec, &s, &o, NULL, &v, &err);
  if (rc) {
    fprintf(stderr, "asyncfuzz run: %s\n", err.msg);
    gen_case_free(&c);
    return cli_exit_for(rc);
  }
  int nobs;
  const RtObs *obs = asyncfuzz_rt_observations(&nobs);
  for (int k = 0; k < nobs; k++) {
    printf("observe op #%d (T%d):", obs[k].id, obs[k].tid);
    for (int64_t i = 0; i < obs[k].n; i++)
      printf(" %d", obs[k].vals[i]);
    printf("\n");
  }
  printf("verdict: %s\n", oracle_verdict_name(v.cls));
  if (v.cls != VERDICT_PASS)
    printf("signature: %s\ndetail: %s\n", v.signature, v.detail);
  if (!o.no_checker) {
    int ntrace;
    const RtRec *trace = asyncfuzz_rt_trace(&ntrace);
    HbOptions ho = {0};
    ho.lenient_free = o.memfree_sync;
    ho.max_reports = 200;
    HbResult *hb = NULL;
    if (hb_check(trace, ntrace, &ho, &hb, &err) == 0) {
      AfBuf b;
      af_buf_init(&b);
      af_buf_printf(&b, "checker: %d report(s)%s\n", hb->nreports,
                    hb->truncated ? " (more not shown)" : "");
      for (int i = 0; i < hb->nreports; i++) {
        af_buf_puts(&b, "  ");
        hb_format_report(&b, &hb->reports[i], trace, ntrace);
        if (hb_kind_is_error(hb->reports[i].kind) &&
            !oracle_report_counts(&c, &hb->reports[i], trace, ntrace))
          af_buf_puts(&b, "\n    (not counted: the case itself never frees this buffer)");
        af_buf_puts(&b, "\n");
      }
      fputs(b.p ? b.p : "", stdout);
      af_buf_free(&b);
      hb_result_free(hb);
    }
  }
  if (bin_path && asyncfuzz_rt_write_trace_bin(bin_path) != 0) {
    fprintf(stderr, "asyncfuzz run: cannot write %s\n", bin_path);
    ex = EXIT_INTERNAL;
  }
  if (trace_path && ex == 0) {
    AfBuf b;
    af_buf_init(&b);
    af_buf_printf(&b, "# asyncfuzz trace v1 lowering=%s policy=%s seed=%llu\n", spec.name, policy,
                  (unsigned long long)seed);
    asyncfuzz_rt_format_trace(&b, 0, -1);
    ex = b.oom ? EXIT_INTERNAL : write_text(trace_path, b.p);
    af_buf_free(&b);
  }
  gen_case_free(&c);
  if (ex)
    return ex;
  return v.cls == VERDICT_PASS ? EXIT_OK : EXIT_FOUND;
}

void cli_check_json(AfBuf *b, const char *path, const LowerSpec *spec, const CheckResult *res) {
  af_buf_puts(b, "{\"case\": ");
  af_buf_json_str(b, path);
  af_buf_puts(b, ", \"lowering\": ");
  af_buf_json_str(b, spec->name);
  af_buf_puts(b, ", \"lowering_version\": ");
  af_buf_json_str(b, lower_version(spec));
  if (spec->kind == LOWER_MLIR_OPT) {
    af_buf_puts(b, ", \"pipeline\": ");
    af_buf_json_str(b, spec->pipeline);
  }
  af_buf_printf(b, ", \"asyncfuzz_version\": \"%s\", ", ASYNCFUZZ_VERSION);
  af_buf_printf(b, "\"verdict\": \"%s\", \"runs\": [",
                res->first_fail < 0 ? "pass"
                                    : oracle_verdict_name(res->verdict[res->first_fail].cls));
  for (int k = 0; k < res->nsched; k++) {
    char sch[64];
    check_schedule_str(&res->sched[k], sch, sizeof sch);
    const Verdict *v = &res->verdict[k];
    af_buf_printf(b, "%s{\"schedule\": \"%s\", \"verdict\": \"%s\", ", k ? ", " : "", sch,
                  oracle_verdict_name(v->cls));
    af_buf_printf(b,
                  "\"observation_failed\": %s, \"runtime_failed\": %s, \"checker_failed\": %s, "
                  "\"checker_reports\": %d, \"signature\": ",
                  v->obs_failed ? "true" : "false", v->rt_failed ? "true" : "false",
                  v->hb_failed ? "true" : "false", v->hb_errors);
    af_buf_json_str(b, v->cls == VERDICT_PASS ? "" : v->signature);
    af_buf_puts(b, ", \"detail\": ");
    af_buf_json_str(b, v->detail);
    af_buf_puts(b, "}");
  }
  af_buf_puts(b, "]}");
}

static int is_lowering_class(int cls) {
  return cls == VERDICT_LOWERING_REJECTED || cls == VERDICT_LOWERING_UNCONVERTED ||
         cls == VERDICT_LOWERING_CRASH || cls == VERDICT_TIMEOUT;
}

void cli_check_text(AfBuf *b, const char *path, const LowerSpec *spec, const CheckResult *res,
                    int header, const CheckOpts *o) {
  if (header)
    af_buf_printf(b, "== lowering %s (%s)\n", spec->name, lower_version(spec));
  for (int k = 0; k < res->nsched; k++) {
    char sch[64];
    check_schedule_str(&res->sched[k], sch, sizeof sch);
    const Verdict *v = &res->verdict[k];
    af_buf_printf(b, "%-24s %s", sch, oracle_verdict_name(v->cls));
    if (v->cls != VERDICT_PASS) {
      if (is_lowering_class(v->cls))
        af_buf_puts(b, "  [found by: mlir-opt]");
      else
        af_buf_printf(b, "  [found by:%s%s%s]", v->obs_failed ? " observation" : "",
                      v->rt_failed ? " runtime-error" : "", v->hb_failed ? " checker" : "");
      af_buf_printf(b, "\n    signature: %s\n    ", v->signature);
      for (const char *p = v->detail; *p; p++) { /* indent the detail's lines */
        af_buf_put(b, p, 1);
        if (*p == '\n')
          af_buf_puts(b, "    ");
      }
    }
    af_buf_puts(b, "\n");
  }
  if (res->first_fail >= 0) {
    const Schedule *f = &res->sched[res->first_fail];
    if (spec->kind == LOWER_MLIR_OPT)
      af_buf_printf(b,
                    "FAIL: replay with: asyncfuzz check %s --lowering %s --schedules %s@%llu%s\n",
                    path, spec->arg, asyncfuzz_rt_policy_name(f->policy),
                    (unsigned long long)f->seed, check_backend_args(o));
    else
      af_buf_printf(b,
                    "FAIL: replay with: asyncfuzz run %s --lowering %s --policy %s --sched-seed "
                    "%llu --trace -%s\n",
                    path, spec->arg, asyncfuzz_rt_policy_name(f->policy),
                    (unsigned long long)f->seed, check_backend_args(o));
  } else {
    af_buf_printf(b, "PASS: %d schedule(s)\n", res->nsched);
  }
}

#define CHECK_MAX_LOWERINGS 8

static int cmd_check(int argc, char **argv) {
  const char *scheds = "eager,lazy,random:4,pct:4", *pipeline = NULL;
  const char **paths = af_calloc((size_t)argc, sizeof *paths);
  int npaths = 0;
  if (paths == NULL)
    return EXIT_INTERNAL;
  const char *lowerings[CHECK_MAX_LOWERINGS];
  int nlow = 0;
  uint64_t seed = 0;
  int json = 0;
  CheckOpts o = {0};
  int bo;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (is_help(a)) {
      printf("usage: asyncfuzz check CASE.json... [--lowering SPEC]... [--pipeline P]\n"
             "                    [--schedules LIST] [--seed N] [--json] [--memfree-sync]\n"
             "                    [--no-checker] [--backend B] [--spin N|auto]\n"
             "Runs the case under each schedule and judges every run: observations against the\n"
             "sequential oracle, runtime errors, and the happens-before checker over the trace.\n"
             "Each failing run says which of them fired. LIST is NAME[:COUNT][@SEED],... with\n"
             "NAME eager|lazy|random|pct (default %s; seeds derive from --seed\n"
             "unless given).\n"
             "SPEC: builtin (default), builtin:fault=NAME[,NAME], or mlir-opt[@VARIANT][:PATH]\n"
             "(the real lowering: mlir-opt's passes, run by mlir-runner on the simulator;\n"
             "VARIANT default|async-region; --pipeline replaces the pass pipeline). Several\n"
             "--lowering options check the case with each and report where verdicts differ.\n"
             "Several cases are checked in one batch (one mlir-opt and one mlir-runner process\n"
             "for all of them); --json then prints one JSON object per line.\n"
             "Exit 0 when every run passes, 1 when any fails.\n\n%s",
             "eager,lazy,random:4,pct:4", cli_backend_help);
      af_free(paths);
      return 0;
    } else if (strcmp(a, "--lowering") == 0 && i + 1 < argc) {
      if (nlow == CHECK_MAX_LOWERINGS) {
        fprintf(stderr, "asyncfuzz check: at most %d lowerings\n", CHECK_MAX_LOWERINGS);
        af_free(paths);
        return EXIT_USAGE;
      }
      lowerings[nlow++] = argv[++i];
    } else if (strcmp(a, "--pipeline") == 0 && i + 1 < argc) {
      pipeline = argv[++i];
    } else if (strcmp(a, "--schedules") == 0 && i + 1 < argc) {
      scheds = argv[++i];
    } else if (strcmp(a, "--seed") == 0) {
      if (cli_u64(a, i + 1 < argc ? argv[++i] : NULL, &seed)) {
        af_free(paths);
        return EXIT_USAGE;
      }
    } else if (strcmp(a, "--json") == 0) {
      json = 1;
    } else if (strcmp(a, "--memfree-sync") == 0) {
      o.memfree_sync = 1;
    } else if (strcmp(a, "--no-checker") == 0) {
      o.no_checker = 1;
    } else if ((bo = cli_backend_opt(&o, a, i + 1 < argc ? argv[i + 1] : NULL)) != 0) {
      if (bo < 0) {
        af_free(paths);
        return EXIT_USAGE;
      }
      i++;
    } else if (a[0] == '-') {
      fprintf(stderr, "asyncfuzz check: unknown or incomplete option %s (see --help)\n", a);
      af_free(paths);
      return EXIT_USAGE;
    } else {
      paths[npaths++] = a;
    }
  }
  if (npaths == 0) {
    fprintf(stderr, "asyncfuzz check: which case? (see --help)\n");
    af_free(paths);
    return EXIT_USAGE;
  }
  if (nlow == 0)
    lowerings[nlow++] = "builtin";
  LowerSpec *specs = af_calloc((size_t)nlow, sizeof *specs);
  CheckResult *res = af_calloc((size_t)nlow * (size_t)npaths, sizeof *res);
  GenCase *cases = af_calloc((size_t)npaths, sizeof *cases);
  const GenCase **cp = af_calloc((size_t)npaths, sizeof *cp);
  int ex = 0;
  if (specs == NULL || res == NULL || cases == NULL || cp == NULL) {
    fprintf(stderr, "asyncfuzz check: out of memory\n");
    ex = EXIT_INTERNAL;
  }
  AfErr err = {0};
  for (int i = 0; i < nlow && ex == 0; i++) {
    ex = cli_parse_lowering("check", lowerings[i], pipeline, 1, &specs[i]);
  }
  Schedule s[CHECK_MAX_SCHED];
  int ns = 0;
  if (ex == 0 && check_parse_schedules(scheds, seed, s, CHECK_MAX_SCHED, &ns, &err)) {
    fprintf(stderr, "asyncfuzz check: %s\n", err.msg);
    ex = EXIT_USAGE;
  }
  int nloaded = 0;
  for (int j = 0; j < npaths && ex == 0; j++, nloaded++) {
    ex = cli_load_case(paths[j], &cases[j], 1);
    cp[j] = &cases[j];
  }
  char dev[400];
  if (ex == 0)
    ex = cli_backend_start("check", &o, dev, sizeof dev);
  for (int i = 0; i < nlow && ex == 0; i++) {
    int rc =
        check_cases(cp, npaths, &specs[i], s, ns, NULL, &o, res + (size_t)i * (size_t)npaths, &err);
    if (rc) {
      fprintf(stderr, "asyncfuzz check: %s: %s\n", specs[i].name, err.msg);
      ex = cli_exit_for(rc);
    }
  }
  for (int j = 0; j < nloaded; j++)
    gen_case_free(&cases[j]);
  int any_fail = 0;
  AfBuf b;
  af_buf_init(&b);
  for (int j = 0; j < npaths && ex == 0; j++) {
    const CheckResult *r[CHECK_MAX_LOWERINGS];
    int differ = 0;
    for (int i = 0; i < nlow; i++) {
      r[i] = &res[(size_t)i * (size_t)npaths + (size_t)j];
      any_fail |= r[i]->first_fail >= 0;
      int cls = r[i]->first_fail < 0 ? VERDICT_PASS : r[i]->verdict[r[i]->first_fail].cls;
      int cls0 = r[0]->first_fail < 0 ? VERDICT_PASS : r[0]->verdict[r[0]->first_fail].cls;
      differ |= cls != cls0;
    }
    const char *path = paths[j];
    if (json && nlow == 1) {
      cli_check_json(&b, path, &specs[0], r[0]);
      af_buf_puts(&b, "\n");
    } else if (json) {
      af_buf_puts(&b, "{\"case\": ");
      af_buf_json_str(&b, path);
      af_buf_printf(&b, ", \"differ\": %s, \"lowerings\": [", differ ? "true" : "false");
      for (int i = 0; i < nlow; i++) {
        af_buf_puts(&b, i ? ", " : "");
        cli_check_json(&b, path, &specs[i], r[i]);
      }
      af_buf_puts(&b, "]}\n");
    } else {
      if (npaths > 1)
        af_buf_printf(&b, "%s== case %s\n", j ? "\n" : "", path);
      for (int i = 0; i < nlow; i++)
        cli_check_text(&b, path, &specs[i], r[i], nlow > 1, &o);
      if (nlow > 1) {
        af_buf_printf(&b, "%s:", differ ? "DIFFER: verdicts differ" : "SAME: verdicts agree");
        for (int i = 0; i < nlow; i++)
          af_buf_printf(&b, " %s=%s", specs[i].name,
                        oracle_verdict_name(r[i]->first_fail < 0
                                                ? VERDICT_PASS
                                                : r[i]->verdict[r[i]->first_fail].cls));
        af_buf_puts(&b, "\n");
      }
    }
  }
  if (ex == 0)
    ex = b.oom ? EXIT_INTERNAL : write_text(NULL, b.p);
  af_buf_free(&b);
  af_free(specs);
  af_free(res);
  af_free(cases);
  af_free(cp);
  af_free(paths);
  if (ex)
    return ex;
  return any_fail ? EXIT_FOUND : EXIT_OK;
}

/* ---- check-trace ---- */

static int cmd_check_trace(int argc, char **argv) {
  const char *path = NULL, *case_path = NULL, *lowering = "external";
  int lenient = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (is_help(a)) {
      printf("usage: asyncfuzz check-trace TRACE.bin [--case CASE.json] [--lowering NAME]\n"
             "                          [--memfree-sync]\n"
             "Runs the happens-before checker over a binary trace written by the runtime\n"
             "library (ASYNCFUZZ_TRACE_BIN=FILE, e.g. code lowered by mlir-opt and run by\n"
             "mlir-runner) and prints its reports. With --case, also judges the run against the\n"
             "case's oracle and prints the verdict and its signature (NAME labels the lowering).\n"
             "Exit 0 when nothing is wrong, 1 when something is, 3 on a bad file.\n");
      return 0;
    } else if (strcmp(a, "--case") == 0 && i + 1 < argc) {
      case_path = argv[++i];
    } else if (strcmp(a, "--lowering") == 0 && i + 1 < argc) {
      lowering = argv[++i];
    } else if (strcmp(a, "--memfree-sync") == 0) {
      lenient = 1;
    } else if (a[0] == '-') {
      fprintf(stderr, "asyncfuzz check-trace: unknown or incomplete option %s (see --help)\n", a);
      return EXIT_USAGE;
    } else if (path == NULL) {
      path = a;
    } else {
      fprintf(stderr, "asyncfuzz check-trace: one trace at a time\n");
      return EXIT_USAGE;
    }
  }
  if (path == NULL) {
    fprintf(stderr, "asyncfuzz check-trace: which trace? (see --help)\n");
    return EXIT_USAGE;
  }
  RunnerTrace t;
  AfErr err = {0};
  if (runner_trace_load(path, &t, &err)) {
    fprintf(stderr, "asyncfuzz check-trace: %s\n", err.msg);
    return err.rc == AF_ENOMEM ? EXIT_INTERNAL : EXIT_INPUT;
  }
  GenCase c;
  int ex = 0;
  if (case_path)
    ex = cli_load_case(case_path, &c, 1); /* initializes c, also on failure */
  else
    gen_case_init(&c);
  HbOptions ho = {0};
  ho.lenient_free = lenient;
  ho.max_reports = 200;
  HbResult *hb = NULL;
  if (ex == 0 && hb_check(t.recs, t.nrecs, &ho, &hb, &err)) {
    fprintf(stderr, "asyncfuzz check-trace: %s\n", err.msg);
    ex = EXIT_INTERNAL;
  }
  int failed = 0;
  if (ex == 0) {
    AfBuf b;
    af_buf_init(&b);
    af_buf_printf(&b, "%d records, %d observations; checker: %d report(s), %d error(s)%s\n",
                  t.nrecs, t.nobs, hb->nreports, hb->nerrors,
                  hb->truncated ? " (more not shown)" : "");
    for (int i = 0; i < hb->nreports; i++) {
      af_buf_puts(&b, "  ");
      hb_format_report(&b, &hb->reports[i], t.recs, t.nrecs);
      af_buf_puts(&b, "\n");
    }
    failed = hb->nerrors > 0 || t.sum.nerrors > 0;
    if (case_path) {
      OracleExpected *e = NULL;
      Verdict v;
      if (oracle_expect(&c, &e, &err) ||
          oracle_judge(&c, e, t.obs, t.nobs, t.recs, t.nrecs, &t.sum, hb, lowering, &v)) {
        ex = EXIT_INTERNAL;
      } else {
        af_buf_printf(&b, "verdict: %s\n", oracle_verdict_name(v.cls));
        if (v.cls != VERDICT_PASS)
          af_buf_printf(&b, "signature: %s\ndetail: %s\n", v.signature, v.detail);
        failed = v.cls != VERDICT_PASS;
      }
      oracle_expected_free(e);
    }
    if (ex == 0)
      ex = b.oom ? EXIT_INTERNAL : write_text(NULL, b.p);
    af_buf_free(&b);
  }
  hb_result_free(hb);
  gen_case_free(&c);
  runner_trace_free(&t);
  if (ex)
    return ex;
  return failed ? EXIT_FOUND : EXIT_OK;
}

/* ---- reduce ---- */

static int cmd_reduce(int argc, char **argv) {
  const char *path = NULL, *lowering = "builtin", *scheds = "eager,lazy,random:4,pct:4";
  const char *out_json = NULL, *out_mlir = NULL, *want_sig = NULL, *pipeline = NULL;
  uint64_t seed = 0;
  long repro = 10, batch = -1, jobs = 1;
  CheckOpts o = {0};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (is_help(a)) {
      printf(
          "usage: asyncfuzz reduce CASE.json [--lowering SPEC] [--pipeline P] [--schedules LIST]\n"
          "                     [--signature SIG] [-o OUT.json] [--mlir OUT.mlir]\n"
          "                     [--repro N] [--batch N] [--jobs N] [--memfree-sync] "
          "[--no-checker]\n"
          "Minimizes a failing case: delta debugging over the case (ops with what only they\n"
          "feed, regions, dependencies, unused values and buffers, buffer sizes, the spin\n"
          "count). Every candidate is a valid case and must fail with the same root-cause\n"
          "signature (the first failing schedule's, or SIG) under that schedule, judged on\n"
          "the simulator with the checker. The result is re-run N times (default 10) for\n"
          "its reproduction rate. Writes the minimized case (-o, default stdout) and, with\n"
          "--mlir, a self-contained reproducer with RUN lines, the verdict and the trace.\n"
          "Exit 0 when reduced, 1 when the case does not fail, 2 usage, 3 bad input.\n");
      return 0;
    } else if (strcmp(a, "--lowering") == 0 && val) {
      lowering = argv[++i];
    } else if (strcmp(a, "--schedules") == 0 && val) {
      scheds = argv[++i];
    } else if (strcmp(a, "--pipeline") == 0 && val) {
      pipeline = argv[++i];
    } else if (strcmp(a, "--signature") == 0 && val) {
      want_sig = argv[++i];
    } else if (strcmp(a, "-o") == 0 && val) {
      out_json = argv[++i];
    } else if (strcmp(a, "--mlir") == 0 && val) {
      out_mlir = argv[++i];
    } else if (strcmp(a, "--batch") == 0) {
      if (cli_int(a, val, 1, 1024, &batch))
        return EXIT_USAGE;
      i++;
    } else if (strcmp(a, "--jobs") == 0) {
      if (cli_int(a, val, 1, 64, &jobs))
        return EXIT_USAGE;
      i++;
    } else if (strcmp(a, "--repro") == 0) {
      if (cli_int(a, val, 1, CHECK_MAX_SCHED, &repro))
        return EXIT_USAGE;
      i++;
    } else if (strcmp(a, "--seed") == 0) {
      if (cli_u64(a, val, &seed))
        return EXIT_USAGE;
      i++;
    } else if (strcmp(a, "--memfree-sync") == 0) {
      o.memfree_sync = 1;
    } else if (strcmp(a, "--no-checker") == 0) {
      o.no_checker = 1;
    } else if (a[0] == '-') {
      fprintf(stderr, "asyncfuzz reduce: unknown or incomplete option %s (see --help)\n", a);
      return EXIT_USAGE;
    } else if (path == NULL) {
      path = a;
    } else {
      fprintf(stderr, "asyncfuzz reduce: one case at a time\n");
      return EXIT_USAGE;
    }
  }
  if (path == NULL) {
    fprintf(stderr, "asyncfuzz reduce: which case? (see --help)\n");
    return EXIT_USAGE;
  }
  LowerSpec spec;
  if (cli_parse_lowering("reduce", lowering, pipeline, 0, &spec))
    return EXIT_USAGE;
  AfErr err = {0};
  Schedule s[CHECK_MAX_SCHED];
  int ns;
  if (check_parse_schedules(scheds, seed, s, CHECK_MAX_SCHED, &ns, &err)) {
    fprintf(stderr, "asyncfuzz reduce: %s\n", err.msg);
    return EXIT_USAGE;
  }
  GenCase c;
  int ex = cli_load_case(path, &c, 1);
  if (ex) {
    gen_case_free(&c);
    return ex;
  }
  CheckResult *res = af_malloc(sizeof *res);
  if (res == NULL) {
    gen_case_free(&c);
    return EXIT_INTERNAL;
  }
  int rc = check_case(&c, &spec, s, ns, NULL, &o, res, &err);
  int k = -1;
  for (int j = 0; rc == 0 && j < res->nsched && k < 0; j++)
    if (res->verdict[j].cls != VERDICT_PASS &&
        (want_sig == NULL || strcmp(res->verdict[j].signature, want_sig) == 0))
      k = j;
  if (rc || k < 0) {
    if (rc)
      fprintf(stderr, "asyncfuzz reduce: %s\n", err.msg);
    else
      fprintf(stderr, "asyncfuzz reduce: %s does not fail%s%s under %s: nothing to reduce\n", path,
              want_sig ? " with " : "", want_sig ? want_sig : "", scheds);
    af_free(res);
    gen_case_free(&c);
    return rc ? cli_exit_for(rc) : EXIT_FOUND;
  }
  Schedule fail = res->sched[k];
  char sig[256];
  snprintf(sig, sizeof sig, "%s", res->verdict[k].signature);
  CheckSigTest t = {&spec, &fail, 1, o, sig};
  GenCase out;
  ReduceStats st;
  fprintf(stderr, "asyncfuzz reduce: %s: %d ops, signature %s (schedule ", path, c.nops, sig);
  char sch[64];
  check_schedule_str(&fail, sch, sizeof sch);
  fprintf(stderr, "%s)\n", sch);
  ReduceOpts ro_ = {NULL, 1, (int)jobs, 0};
  if (batch < 0)
    batch = spec.kind == LOWER_MLIR_OPT ? 16 : 1;
  if (batch > 1 || jobs > 1) {
    ro_.batch_test = check_signature_test_many;
    ro_.batch = (int)(batch > jobs ? batch : jobs);
  }
  rc = reduce_case_opts(&c, check_signature_test, &t, &ro_, &out, &st, &err);
  gen_case_free(&c);
  if (rc) {
    fprintf(stderr, "asyncfuzz reduce: %s\n", err.msg);
    af_free(res);
    gen_case_free(&out);
    return cli_exit_for(rc);
  }
  /* confirmation: the failing schedule, then other seeds of its policy */
  Schedule rs[CHECK_MAX_SCHED];
  for (int j = 0; j < repro; j++) {
    rs[j] = fail;
    if (j > 0)
      rs[j].seed = af_mix64(fail.seed, (uint64_t)j);
  }
  CheckOpts ro = o;
  ro.stop_at_first = 0;
  int hits = 0;
  rc = check_case(&out, &spec, rs, (int)repro, NULL, &ro, res, &err);
  for (int j = 0; rc == 0 && j < res->nsched; j++)
    hits += strcmp(res->verdict[j].signature, sig) == 0;
  /* the failing run once more: its verdict and trace go into the reproducer */
  Verdict v;
  if (rc == 0)
    rc = check_run_once(&out, &spec, &fail, &o, NULL, &v, &err);
  if (rc) {
    fprintf(stderr, "asyncfuzz reduce: %s\n", err.msg);
    af_free(res);
    gen_case_free(&out);
    return cli_exit_for(rc);
  }
  fprintf(stderr,
          "asyncfuzz reduce: %d -> %d ops (%d candidates tested, %d kept, %d refused by the "
          "validator); reproduces in %d of %d runs on sim\n",
          st.from_ops, st.to_ops, st.tests, st.accepted, st.invalid, hits, res->nsched);
  char *json = gen_case_to_json(&out);
  ex = json ? write_text(out_json, json) : EXIT_INTERNAL;
  af_free(json);
  if (ex == 0 && out_mlir) {
    char *m = check_reproducer(&out, &spec, &fail, &v, out_json);
    ex = m ? write_text(out_mlir, m) : EXIT_INTERNAL;
    af_free(m);
  }
  af_free(res);
  gen_case_free(&out);
  return ex;
}

int main(int argc, char **argv) {
  if (argc < 2 || is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
    fputs(main_help, argc < 2 ? stderr : stdout);
    return argc < 2 ? EXIT_USAGE : EXIT_OK;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("asyncfuzz %s\n", ASYNCFUZZ_VERSION);
    return 0;
  }
  const char *cmd = argv[1];
  int rc;
  if (strcmp(cmd, "gen") == 0)
    rc = cmd_gen(argc - 1, argv + 1);
  else if (strcmp(cmd, "render") == 0)
    rc = cmd_render(argc - 1, argv + 1);
  else if (strcmp(cmd, "validate") == 0)
    rc = cmd_validate(argc - 1, argv + 1);
  else if (strcmp(cmd, "lower") == 0)
    rc = cmd_lower(argc - 1, argv + 1);
  else if (strcmp(cmd, "run") == 0)
    rc = cmd_run(argc - 1, argv + 1);
  else if (strcmp(cmd, "check") == 0)
    rc = cmd_check(argc - 1, argv + 1);
  else if (strcmp(cmd, "campaign") == 0)
    rc = cmd_campaign(argc - 1, argv + 1);
  else if (strcmp(cmd, "check-trace") == 0)
    rc = cmd_check_trace(argc - 1, argv + 1);
  else if (strcmp(cmd, "reduce") == 0)
    rc = cmd_reduce(argc - 1, argv + 1);
  else if (strcmp(cmd, "db") == 0)
    rc = cmd_db(argc - 1, argv + 1);
  else if (strcmp(cmd, "report") == 0)
    rc = cmd_report(argc - 1, argv + 1);
  else if (strcmp(cmd, "device") == 0)
    rc = cmd_device(argc - 1, argv + 1);
  else if (strcmp(cmd, "compile-batch") == 0)
    rc = cmd_compile_batch(argc - 1, argv + 1);
  else if (strcmp(cmd, "run-batch") == 0)
    rc = cmd_run_batch(argc - 1, argv + 1);
  else {
    fprintf(stderr, "asyncfuzz: unknown command \"%s\"\n\n%s", cmd, main_help);
    rc = EXIT_USAGE;
  }
  check_gpu_stop();
  asyncfuzz_rt_shutdown();
  return rc;
}
