/*
 * bench_mlir.c: cases per second through the real lowering (mlir-opt, then mlir-runner on the
 * simulator, then the checker and the oracle), pinned to one core, batched (one mlir-opt and
 * one mlir-runner per schedule for a batch of cases) and one case per process.
 *
 * Two workloads, both generated with the campaign's swarm knobs and its schedules (lazy,
 * random, pct):
 *   generated  every case as the default campaign meets it (32 ops; most stop at mlir-opt on
 *              LLVM 22)
 *   runnable   only cases that lower fully (found among swarm cases around 16 ops without
 *              synchronous allocations, where every root op waits on a fresh token), so every case
 * runs under mlir-runner. Prints, per workload and mode, the median cases/s of the repetitions and
 * the ratio; then where a batched runnable case's time goes (mlir-opt, mlir-runner, the harness)
 * against the floor, the tools run on empty programs (docs/performance.md, "The real-lowering
 * path").
 *
 * usage: bench_mlir [repetitions (default 3)] [batch size (default 64, the campaign's)] [mlir-opt
 * spec]
 */
#define _GNU_SOURCE
#include "bench.h"
#include "../check/check.h"
#include "../lower/mlir.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static LowerSpec spec;
static Schedule sched[3];
static CheckResult *res;

/* Checks cases[0..n) in groups of `batch`; returns cases/s. */
static double measure(const GenCase **cases, int n, int batch) {
  CheckOpts o = {0};
  o.stop_at_first = 1;
  AfErr err = {0};
  double t0 = af_mono();
  for (int i = 0; i < n; i += batch) {
    int k = n - i < batch ? n - i : batch;
    if (check_cases(cases + i, k, &spec, sched, 3, NULL, &o, res, &err)) {
      fprintf(stderr, "bench_mlir: %s\n", err.msg);
      exit(1);
    }
  }
  return n / (af_mono() - t0);
}

/* The floor of a case's tool runs: mlir-opt through the pipeline on an empty module and
 * mlir-runner on an empty main, through the fork servers as a campaign runs them; the median of
 * k runs of each, in ms (opt_ms, run_ms). */
static int floor_runs(int k, double *opt_ms, double *run_ms) {
  AfErr err = {0};
  char dir[4096], in[4200], out[4200], errp[4200], prog[4200];
  if (mlir_tmpdir(dir, sizeof dir, &err))
    return -1;
  snprintf(in, sizeof in, "%s/empty.mlir", dir);
  snprintf(out, sizeof out, "%s/empty.out.mlir", dir);
  snprintf(errp, sizeof errp, "%s/empty.err", dir);
  snprintf(prog, sizeof prog, "%s/main.mlir", dir);
  static const char empty[] = "module {\n}\n";
  static const char main_only[] = "module {\n  llvm.func @main() {\n    llvm.return\n  }\n}\n";
  double o[64], r[64];
  k = k > 64 ? 64 : k;
  int rc = af_write_file(prog, main_only, strlen(main_only), &err);
  for (int i = 0; i < k && rc == 0; i++) {
    ProcResult pr;
    rc = af_write_file(in, empty, strlen(empty), &err);
    double t0 = af_mono();
    if (rc == 0)
      rc = mlir_lower_file(&spec, in, out, errp, 60, &pr, &err);
    o[i] = 1000 * (af_mono() - t0);
    if (rc == 0 && !(pr.exited && pr.code == 0))
      rc = -1;
    t0 = af_mono();
    if (rc == 0)
      rc = mlir_run_file(&spec, prog, NULL, NULL, errp, 60, &pr, &err);
    r[i] = 1000 * (af_mono() - t0);
    if (rc == 0 && !(pr.exited && pr.code == 0))
      rc = -1;
  }
  af_rm_tree(dir);
  if (rc)
    return -1;
  qsort(o, (size_t)k, sizeof o[0], cmp_double);
  qsort(r, (size_t)k, sizeof r[0], cmp_double);
  *opt_ms = o[k / 2];
  *run_ms = r[k / 2];
  return 0;
}

/* Where a batched case's time goes (the runnable workload): ms per case in mlir-opt, in
 * mlir-runner and in the harness (everything else: rendering, the sim, the checker, judging). */
static void budget(const GenCase **cases, int n, int batch) {
  double t0[AF_TOOL__COUNT], t1[AF_TOOL__COUNT];
  af_proc_seconds(t0);
  double w0 = af_mono();
  measure(cases, n, batch);
  double wall = af_mono() - w0;
  af_proc_seconds(t1);
  double opt = t1[AF_TOOL_MLIR_OPT] - t0[AF_TOOL_MLIR_OPT];
  double run = t1[AF_TOOL_RUNNER] - t0[AF_TOOL_RUNNER];
  double other = t1[AF_TOOL_OTHER] - t0[AF_TOOL_OTHER];
  double fo = 0, fr = 0;
  long hits = 0, misses = 0;
  mlir_kcache_counts(&hits, &misses, NULL);
  printf("per runnable case, batches of %d: %.1f ms in all: mlir-opt %.1f, mlir-runner %.1f, "
         "other tools %.1f, the harness %.1f (kernel modules found compiled so far: %ld, "
         "compiled: %ld)\n",
         batch, 1000 * wall / n, 1000 * opt / n, 1000 * run / n, 1000 * other / n,
         1000 * (wall - opt - run - other) / n, hits, misses);
  if (floor_runs(9, &fo, &fr) == 0)
    printf("floor (median of 9 runs through the fork servers): mlir-opt on an empty module %.1f "
           "ms, mlir-runner on an empty main %.1f ms; a batch of %d pays each once at least: "
           "%.1f ms per case\n",
           fo, fr, batch, (fo + fr) / batch);
  else
    printf("floor: the empty runs failed\n");
}

/* Generates swarm cases from seed on; runnable_only keeps those that lower fully. */
static int make_cases(GenCase *out, int n, uint64_t seed, int runnable_only) {
  GenConfig base;
  gen_config_default(&base);
  if (runnable_only) { /* knobs under which LLVM 22 lowers a useful share of cases fully */
    base.ops = 16;
    base.sync_pct = 0;
    base.max_deps = 2;
    base.extra_dep_pct = 0;
    base.root_wait_pct = 100;
  }
  AfErr err = {0};
  int have = 0;
  char dir[4096];
  if (mlir_tmpdir(dir, sizeof dir, &err))
    return -1;
  while (have < n) {
    enum { B = 32 };
    GenCase c[B];
    char *chunk[B];
    MlirLowered low[B];
    for (int j = 0; j < B; j++) {
      GenConfig cfg;
      gen_config_swarm(&base, seed, &cfg);
      if (gen_generate(&c[j], seed++, &cfg, &err))
        return -1;
      int zero = 0;
      const GenCase *cp = &c[j];
      chunk[j] = gen_render_mlir_group(&cp, &zero, 1, 1);
    }
    if (runnable_only && mlir_lower_group(&spec, dir, chunk, B, low, &err))
      return -1;
    for (int j = 0; j < B; j++) {
      int keep = have < n && (!runnable_only || low[j].outcome == MLIR_OK);
      if (keep)
        out[have++] = c[j];
      else
        gen_case_free(&c[j]);
      af_free(chunk[j]);
    }
    if (runnable_only)
      mlir_lowered_free(low, B);
  }
  af_rm_tree(dir);
  return 0;
}

int main(int argc, char **argv) {
  if (bench_help(
          argc, argv,
          "usage: bench_mlir [repetitions (default 3)] [batch size (default 64)] [mlir-opt spec]\n"
          "Cases per second through mlir-opt, mlir-runner on the simulator, the checker and the "
          "oracle,\n"
          "on one core: batched against one case per process, for generated and for runnable "
          "cases.\n"))
    return 0;
  int reps = argc > 1 ? atoi(argv[1]) : 3;
  int batch = argc > 2 ? atoi(argv[2]) : 64;
  const char *which = argc > 3 ? argv[3] : "mlir-opt";
  if (reps < 1 || batch < 1) {
    fprintf(stderr, "usage: bench_mlir [repetitions] [batch] [mlir-opt spec]\n");
    return 2;
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  sched_setaffinity(0, sizeof one, &one); /* children (mlir-opt, mlir-runner) inherit it */
  AfErr err = {0};
  if (lower_spec_parse(which, &spec, &err)) {
    fprintf(stderr, "bench_mlir: %s\n", err.msg);
    return 77;
  }
  int ns;
  if (check_parse_schedules("lazy,random,pct", 1, sched, 3, &ns, &err))
    return 1;
  res = af_calloc((size_t)batch, sizeof *res);
  enum { NBATCHED = 64, NSINGLE = 8 };
  GenCase *gen = af_calloc(NBATCHED, sizeof *gen), *run = af_calloc(NBATCHED, sizeof *run);
  const GenCase *gp[NBATCHED], *rp[NBATCHED];
  if (!res || !gen || !run || make_cases(gen, NBATCHED, 1000, 0) ||
      make_cases(run, NBATCHED, 5000, 1)) {
    fprintf(stderr, "bench_mlir: cannot make the cases\n");
    return 1;
  }
  double gops = 0, rops = 0;
  for (int i = 0; i < NBATCHED; i++) {
    gp[i] = &gen[i];
    rp[i] = &run[i];
    gops += gen[i].nops;
    rops += run[i].nops;
  }
  printf("bench_mlir: %s (%s), one core, schedules lazy,random,pct, batch %d, %d reps\n", spec.name,
         spec.version, batch, reps);
  printf("workload   cases  mean-ops  batched-cases/s  per-process-cases/s  ratio\n");
  const char *names[2] = {"generated", "runnable"};
  const GenCase **sets[2] = {gp, rp};
  double mean[2] = {gops / NBATCHED, rops / NBATCHED};
  for (int w = 0; w < 2; w++) {
    double b[16], s[16];
    for (int r = 0; r < reps && r < 16; r++) { /* alternate the modes */
      b[r] = measure(sets[w], NBATCHED, batch);
      s[r] = measure(sets[w] + r * NSINGLE % NBATCHED, NSINGLE, 1);
    }
    int m = reps < 16 ? reps : 16;
    qsort(b, (size_t)m, sizeof b[0], cmp_double);
    qsort(s, (size_t)m, sizeof s[0], cmp_double);
    printf("%-10s %5d  %8.1f  %15.1f  %19.2f  %5.1fx\n", names[w], NBATCHED, mean[w], b[m / 2],
           s[m / 2], b[m / 2] / s[m / 2]);
  }
  budget(rp, NBATCHED, batch);
  for (int i = 0; i < NBATCHED; i++) {
    gen_case_free(&gen[i]);
    gen_case_free(&run[i]);
  }
  af_free(gen);
  af_free(run);
  af_free(res);
  return 0;
}
