/*
 * bench_reduce.c: reduction time and final size, on one core, for generated failing cases of
 * about 50, 200 and 800 ops under each builtin fault (the first failing case of each size and
 * fault), and, when mlir-opt 22 is installed, for failing cases of the real lowering. Prints
 * one line per size and lowering with the median and the worst of the final sizes and times.
 *
 * usage: bench_reduce [cases per fault and size (default 3)] [mlir cases (default 3)]
 */
#define _GNU_SOURCE
#include "bench.h"
#include "../check/check.h"
#include "../reduce/reduce.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Reduces up to `want` failing cases of about `ops` ops under `spec`; appends sizes and
 * times. Returns how many were reduced. */
static int run(const LowerSpec *spec, int ops, int want, uint64_t seed0, double *sizes,
               double *times, int *n, int *from_ops) {
  GenConfig cfg;
  gen_config_default(&cfg);
  cfg.ops = ops;
  cfg.buffers = ops >= 200 ? 8 : 4;
  if (spec->kind == LOWER_MLIR_OPT)
    cfg.root_wait_pct = 100; /* cases LLVM 22 lowers far enough to fail at run time too */
  AfErr err = {0};
  CheckResult *res = af_malloc(sizeof *res);
  int got = 0;
  for (uint64_t seed = seed0; got < want && seed < seed0 + 400; seed++) {
    GenCase c;
    GenConfig cc = cfg;
    if (spec->kind == LOWER_MLIR_OPT)
      gen_config_swarm(&cfg, seed, &cc);
    if (gen_generate(&c, seed, &cc, &err)) {
      gen_case_free(&c);
      continue;
    }
    Schedule s[2] = {{RT_LAZY, seed}, {RT_RANDOM, seed + 1}};
    CheckOpts o = {0};
    o.stop_at_first = 1;
    if (check_case(&c, spec, s, 2, NULL, &o, res, &err) || res->first_fail < 0 ||
        (spec->kind != LOWER_MLIR_OPT && c.nops < ops * 9 / 10)) {
      gen_case_free(&c);
      continue;
    }
    Schedule fail = res->sched[res->first_fail];
    char sig[256];
    snprintf(sig, sizeof sig, "%s", res->verdict[res->first_fail].signature);
    CheckSigTest t = {spec, &fail, 1, {0}, sig};
    GenCase out;
    ReduceStats st;
    double t0 = af_mono();
    int rc = reduce_case(&c, check_signature_test, &t, &out, &st, &err);
    double dt = af_mono() - t0;
    if (rc == 0) {
      sizes[*n] = out.nops;
      times[*n] = dt;
      from_ops[*n] = c.nops;
      (*n)++;
      got++;
    }
    gen_case_free(&out);
    gen_case_free(&c);
  }
  af_free(res);
  return got;
}

static void report(const char *what, int ops, double *sizes, double *times, int n,
                   const int *from) {
  if (n == 0) {
    printf("%-34s %5d  no failing case found\n", what, ops);
    return;
  }
  long sum = 0;
  for (int i = 0; i < n; i++)
    sum += from[i];
  qsort(sizes, (size_t)n, sizeof *sizes, cmp_double);
  qsort(times, (size_t)n, sizeof *times, cmp_double);
  printf("%-34s %5d %6d %9.1f %7.0f %6.0f %11.3f %9.3f\n", what, ops, n, (double)sum / n,
         sizes[n / 2], sizes[n - 1], times[n / 2], times[n - 1]);
}

int main(int argc, char **argv) {
  if (bench_help(
          argc, argv,
          "usage: bench_reduce [cases per fault and size (default 3)] [mlir cases (default 3)]\n"
          "Reduction time and final size on one core, for failing cases of about 50, 200 and 800 "
          "ops\n"
          "under each builtin fault, and for failing cases of mlir-opt 22 when it is installed.\n"))
    return 0;
  int per = argc > 1 ? atoi(argv[1]) : 3;
  int mlir_cases = argc > 2 ? atoi(argv[2]) : 3;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  sched_setaffinity(0, sizeof one, &one);
  static const int sizes_ops[] = {50, 200, 800};
  printf("bench_reduce: one core; per size: cases, their mean size, final size median/max,\n"
         "seconds median/max; candidates judged on the simulator with the checker\n");
  printf("%-34s %5s %6s %9s %7s %6s %11s %9s\n", "lowering", "ops", "cases", "mean-in", "out-med",
         "out-max", "s-median", "s-max");
  for (size_t z = 0; z < sizeof sizes_ops / sizeof sizes_ops[0]; z++) {
    double sizes[64], times[64];
    int from[64], n = 0;
    for (int f = 0; f < LOWER_FAULT__COUNT; f++) {
      char name[160];
      snprintf(name, sizeof name, "builtin:fault=%s", lower_fault_name(f));
      LowerSpec spec;
      AfErr err = {0};
      lower_spec_parse(name, &spec, &err);
      run(&spec, sizes_ops[z], per, 1000 * (uint64_t)(z + 1), sizes, times, &n, from);
    }
    report("builtin, all 7 faults", sizes_ops[z], sizes, times, n, from);
  }
  LowerSpec spec;
  AfErr err = {0};
  if (mlir_cases > 0 && lower_spec_parse("mlir-opt", &spec, &err) == 0) {
    for (size_t z = 0; z < 2; z++) {
      double sizes[64], times[64];
      int from[64], n = 0;
      run(&spec, sizes_ops[z], mlir_cases, 7000 + 1000 * (uint64_t)z, sizes, times, &n, from);
      char what[320];
      snprintf(what, sizeof what, "%s (%s)", spec.name, spec.version);
      report(what, sizes_ops[z], sizes, times, n, from);
    }
  } else if (mlir_cases > 0) {
    printf("mlir-opt: skipped (%s)\n", err.msg);
  }
  asyncfuzz_rt_shutdown();
  return 0;
}
