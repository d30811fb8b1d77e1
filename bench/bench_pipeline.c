/*
 * bench_pipeline.c: cases per second of the in-process pipeline on one core: generate a
 * case, validate it, lower it with the builtin lowering, simulate it under 3 schedules (lazy,
 * random, pct), compute the oracle's expectations and compare; with the happens-before
 * checker on every run (what `check` and `campaign` do) and without it. Prints one line per
 * size and mode with the median of 7 runs (checker off and on alternating, on the same cases),
 * and the checker's cost as a ratio of medians. Then, with the checker on, the same for the
 * newer constructs of the case language (extra host waits, captures, explicit streams, call,
 * if, for and branch blocks, i16/i64/f32 buffers, views and static allocations) off and on: what
 * the richer language costs per case, and in case size.
 *
 * usage: bench_pipeline [--campaign-seeds] [seconds-per-run (default 0.5)] [ops,ops,...]
 *        bench_pipeline [--campaign-seeds] --cases N OPS CHECKER
 */
#include "bench.h"
#include "../check/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static long fixed_cases;   /* > 0: run exactly this many cases (--cases), whatever the seconds */
static long total_records; /* the trace records of each case's last schedule, summed */
/* --campaign-seeds: each schedule seeded as a campaign seeds it (its own seed), not all three with
 * the case seed. With one seed, random and pct interleave the interpreter's tasks alike, so pct's
 * trace is random's and the builtin check reuses random's check (check/builtin.c). */
static int campaign_seeds;

/* Runs cases for `secs` seconds; returns cases/s, and the mean op count in *mean_ops. */
static double run(int ops, int checker, int constructs, double secs, uint64_t *seed,
                  double *mean_ops) {
  GenConfig cfg;
  gen_config_default(&cfg);
  cfg.ops = ops;
  if (!constructs) { /* the straight-line i32 language before extra waits, captures, explicit
                        streams, blocks, element types and views */
    cfg.extra_wait_pct = 0;
    cfg.capture_pct = 0;
    cfg.stream_pct = 0;
    cfg.block_pct = 0;
    cfg.typed_pct = 0;
    cfg.view_pct = 0;
  }
  LowerSpec spec;
  AfErr err = {0};
  lower_spec_parse("builtin", &spec, &err);
  long n = 0, total_ops = 0;
  double t0 = now_s(), t;
  do {
    for (int k = 0; k < 16 && (fixed_cases <= 0 || n < fixed_cases); k++) {
      GenCase c;
      uint64_t s0 = (*seed)++;
      if (gen_generate(&c, s0, &cfg, &err) || gen_validate(&c, &err)) {
        fprintf(stderr, "bench: %s\n", err.msg);
        exit(1);
      }
      Schedule s[3] = {{RT_LAZY, s0}, {RT_RANDOM, s0}, {RT_PCT, s0}};
      for (int j = 0; j < 3 && campaign_seeds; j++)
        s[j].seed = af_mix64(s0, (uint64_t)j + 1);
      CheckResult r;
      CheckOpts o = {0};
      o.no_checker = !checker;
      if (check_case(&c, &spec, s, 3, NULL, &o, &r, &err) || r.first_fail >= 0) {
        fprintf(stderr, "bench: case %llu: %s\n", (unsigned long long)s0,
                r.first_fail >= 0 ? r.verdict[r.first_fail].signature : err.msg);
        exit(1);
      }
      total_ops += c.nops;
      int nrec = 0;
      (void)asyncfuzz_rt_trace(&nrec);
      total_records += nrec;
      gen_case_free(&c);
      n++;
    }
    t = now_s();
  } while (fixed_cases > 0 ? n < fixed_cases : t - t0 < secs);
  *mean_ops = (double)total_ops / (double)n;
  return (double)n / (t - t0);
}

int main(int argc, char **argv) {
  if (bench_help(
          argc, argv,
          "usage: bench_pipeline [seconds per run (default 0.5)] [ops,ops,... (default "
          "16,32,64,256)]\n"
          "Cases per second of the in-process pipeline on one core (generate, validate, lower, "
          "simulate\n"
          "under lazy, random and pct, judge), with the happens-before checker and without, and "
          "with the\n"
          "newer constructs of the case language off and on: medians of 7 alternating runs.\n"
          "   or: bench_pipeline --cases N OPS CHECKER(0|1)\n"
          "Runs exactly N cases of OPS ops (seeds 1..N), once: for counting instructions under\n"
          "valgrind (bench/pipeline_ir.sh), which wall-clock noise does not touch.\n"
          "--campaign-seeds first: each schedule its own seed, as in a campaign (by default all\n"
          "three take the case seed, so pct repeats random's trace and reuses its check).\n"))
    return 0;
  if (argc > 1 && strcmp(argv[1], "--campaign-seeds") == 0) {
    campaign_seeds = 1;
    argv[1] = argv[0];
    argv++;
    argc--;
  }
  if (argc > 1 && strcmp(argv[1], "--cases") == 0) {
    if (argc != 5 || atol(argv[2]) <= 0 || atoi(argv[3]) <= 0 ||
        (strcmp(argv[4], "0") != 0 && strcmp(argv[4], "1") != 0)) {
      fprintf(stderr, "bench_pipeline: --cases needs N > 0, OPS > 0 and CHECKER 0 or 1\n");
      return 2;
    }
    fixed_cases = atol(argv[2]);
    uint64_t s0 = 1;
    double mean_ops = 0;
    double rate = run(atoi(argv[3]), atoi(argv[4]), 1, 0, &s0, &mean_ops);
    printf(
        "cases=%ld ops=%s checker=%s mean_case_ops=%.2f mean_case_records=%.2f cases_per_s=%.0f\n",
        fixed_cases, argv[3], argv[4], mean_ops, (double)total_records / (double)fixed_cases, rate);
    asyncfuzz_rt_shutdown();
    return 0;
  }
  double secs = argc > 1 ? atof(argv[1]) : 0.5;
  const char *sizes = argc > 2 ? argv[2] : "16,32,64,256";
  char buf[256];
  snprintf(buf, sizeof buf, "%s", sizes);
  printf("# bench_pipeline: generate + validate + lower + simulate x3 (lazy, random, pct) + "
         "oracle + compare [+ happens-before checker], one core, median of 7 alternating runs "
         "of %.2f s; schedules seeded %s\n",
         secs, campaign_seeds ? "each its own (--campaign-seeds)" : "all with the case seed");
  uint64_t seed = 1;
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    int ops = atoi(tok);
    /* off and on alternate, on the same cases, so a change in machine load hits both */
    enum { REPS = 7 };
    double r[2][REPS], mean_ops = 0;
    for (int i = 0; i < REPS; i++)
      for (int checker = 0; checker <= 1; checker++) {
        uint64_t s0 = seed + (uint64_t)i * 1000000;
        r[checker][i] = run(ops, checker, 1, secs, &s0, &mean_ops);
      }
    double med[2];
    for (int checker = 0; checker <= 1; checker++) {
      qsort(r[checker], REPS, sizeof(double), cmp_double);
      med[checker] = r[checker][REPS / 2];
      printf("ops=%d checker=%d mean_case_ops=%.1f cases_per_s_median=%.0f min=%.0f max=%.0f\n",
             ops, checker, mean_ops, med[checker], r[checker][0], r[checker][REPS - 1]);
    }
    printf("ops=%d checker_cost=%.1f%% (time per case with / without = %.3f)\n", ops,
           (med[0] / med[1] - 1.0) * 100.0, med[0] / med[1]);
    double mo[2];
    for (int i = 0; i < REPS; i++)
      for (int on = 0; on <= 1; on++) {
        uint64_t s0 = seed + (uint64_t)i * 1000000;
        r[on][i] = run(ops, 1, on, secs, &s0, &mo[on]);
      }
    for (int on = 0; on <= 1; on++) {
      qsort(r[on], REPS, sizeof(double), cmp_double);
      med[on] = r[on][REPS / 2];
      printf("ops=%d checker=1 constructs=%s mean_case_ops=%.1f cases_per_s_median=%.0f min=%.0f "
             "max=%.0f\n",
             ops, on ? "on" : "off", mo[on], med[on], r[on][0], r[on][REPS - 1]);
    }
    printf("ops=%d constructs_cost=%.1f%% (time per case on / off = %.3f; ops per case on / off "
           "= %.2f)\n",
           ops, (med[0] / med[1] - 1.0) * 100.0, med[0] / med[1], mo[1] / mo[0]);
    fflush(stdout);
    seed += (uint64_t)REPS * 1000000;
  }
  asyncfuzz_rt_shutdown();
  return 0;
}
