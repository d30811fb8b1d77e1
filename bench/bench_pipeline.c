/*
 * bench_pipeline.c: cases per second of the in-process pipeline on one core: generate a
 * case, validate it, lower it with the builtin lowering, simulate it under 3 schedules (lazy,
 * random, pct), compute the oracle's expectations and compare; with the happens-before
 * checker on every run (what `check` and `campaign` do) and without it. In each of 7 rounds the
 * sizes' cases run interleaved, case by case, and each case is checked both ways, one right after
 * the other: the checker's cost is the median of the rounds' ratios, and the time per op at each
 * size the median of its rounds' ratios to the first size's (and to 32 ops', when 32 is a later
 * size), so that a change in machine load (30% from one half-second to the next on a shared
 * machine) moves neither much. Prints one line per size and mode with the median cases/s. Then,
 * with the checker on, the same for the newer constructs of the case language (extra host
 * waits, captures, explicit streams, call, if, for and branch blocks, i16/i64/f32 buffers,
 * views and static allocations) off and on: what the richer language costs per case, and in
 * case size.
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

static long fixed_cases;   /* > 0: run exactly this many cases (--cases), whatever the seconds */
static long total_records; /* the trace records of each case's last schedule, summed */
/* --campaign-seeds: each schedule seeded as a campaign seeds it (its own seed), not all three with
 * the case seed. With one seed, random and pct interleave the interpreter's tasks alike, so pct's
 * trace is random's and the builtin check reuses random's check (check/builtin.c). */
static int campaign_seeds;

/* Checks case c (seed s0) under lazy, random and pct, with the checker or without; a failure
 * or an error ends the bench. */
static void check_one(const GenCase *c, const LowerSpec *spec, uint64_t s0, int checker) {
  Schedule s[3] = {{RT_LAZY, s0}, {RT_RANDOM, s0}, {RT_PCT, s0}};
  for (int j = 0; j < 3 && campaign_seeds; j++)
    s[j].seed = af_mix64(s0, (uint64_t)j + 1);
  CheckResult r;
  CheckOpts o = {0};
  o.no_checker = !checker;
  AfErr err = {0};
  if (check_case(c, spec, s, 3, NULL, &o, &r, &err) || r.first_fail >= 0) {
    fprintf(stderr, "bench: case %llu: %s\n", (unsigned long long)s0,
            r.first_fail >= 0 ? r.verdict[r.first_fail].signature : err.msg);
    exit(1);
  }
}

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
  double t0 = af_mono(), t;
  do {
    for (int k = 0; k < 16 && (fixed_cases <= 0 || n < fixed_cases); k++) {
      GenCase c;
      uint64_t s0 = (*seed)++;
      if (gen_generate(&c, s0, &cfg, &err) || gen_validate(&c, &err)) {
        fprintf(stderr, "bench: %s\n", err.msg);
        exit(1);
      }
      check_one(&c, &spec, s0, checker);
      total_ops += c.nops;
      int nrec = 0;
      (void)asyncfuzz_rt_trace(&nrec);
      total_records += nrec;
      gen_case_free(&c);
      n++;
    }
    t = af_mono();
  } while (fixed_cases > 0 ? n < fixed_cases : t - t0 < secs);
  *mean_ops = (double)total_ops / (double)n;
  return (double)n / (t - t0);
}

enum { MAXSZ = 16, REPS = 7 }; /* sizes per run; rounds */

/* g[i] = a[i] / b[i] for each round, sorted (g[REPS / 2]: the median). */
static void round_ratios(const double *a, const double *b, double *g) {
  for (int i = 0; i < REPS; i++)
    g[i] = a[i] / b[i];
  qsort(g, REPS, sizeof(double), cmp_double);
}

typedef struct Round { /* one size's share of a round */
  long n, ops;
  double spent[2];
} Round;

/* One case of `ops` ops, seed s0: generated once, checked without and with the checker. */
static void one_case(int ops, uint64_t s0, Round *rd) {
  GenConfig cfg;
  gen_config_default(&cfg);
  cfg.ops = ops;
  LowerSpec spec;
  AfErr err = {0};
  lower_spec_parse("builtin", &spec, &err);
  GenCase c;
  double a = af_mono();
  if (gen_generate(&c, s0, &cfg, &err) || gen_validate(&c, &err)) {
    fprintf(stderr, "bench: %s\n", err.msg);
    exit(1);
  }
  double gen = af_mono() - a;
  for (int k = 0; k < 2; k++) {
    int checker = (int)((rd->n + k) & 1);
    a = af_mono();
    check_one(&c, &spec, s0, checker);
    rd->spent[checker] += gen + (af_mono() - a);
  }
  rd->ops += c.nops;
  rd->n++;
  gen_case_free(&c);
}

/* One round: cases of every size (at most MAXSZ), case by case, for about `secs` seconds per size,
 * each case checked twice, with the checker off and on (which first alternates from case to case);
 * the next case is always of the size that has had the least time so far. So a change in machine
 * load, which moves a run of 0.5 s by 30% on a shared machine, hits both checker modes and every
 * size alike, milliseconds apart. Each case's generation counts in both modes. Per size: cases/s
 * without and with the checker (rate), and the time per op with it (us_op); the mean op count in
 * mean_ops. */
static void run_round(const int *size, int nsz, double secs, uint64_t *seed, double (*rate)[2],
                      double *us_op, double *mean_ops) {
  Round rd[MAXSZ];
  memset(rd, 0, sizeof rd);
  for (;;) {
    int z = 0;
    for (int k = 1; k < nsz; k++)
      if (rd[k].spent[1] < rd[z].spent[1])
        z = k;
    if (rd[z].spent[1] >= secs)
      break;
    one_case(size[z], seed[z]++, &rd[z]);
  }
  for (int z = 0; z < nsz; z++) {
    rate[z][0] = (double)rd[z].n / rd[z].spent[0];
    rate[z][1] = (double)rd[z].n / rd[z].spent[1];
    us_op[z] = 1e6 * rd[z].spent[1] / (double)rd[z].ops;
    mean_ops[z] = (double)rd[z].ops / (double)rd[z].n;
  }
}

int main(int argc, char **argv) {
  if (bench_help(
          argc, argv,
          "usage: bench_pipeline [seconds per run (default 0.5)] [ops,ops,... (default "
          "16,32,64,256)]\n"
          "Cases per second of the in-process pipeline on one core (generate, validate, lower, "
          "simulate\n"
          "under lazy, random and pct, judge), with the happens-before checker and without (each "
          "case\n"
          "both ways), the checker's cost, the time per op against the first size's (and 32 "
          "ops'),\nand the newer "
          "constructs of the case language off and on: medians of 7 rounds, the sizes "
          "interleaved.\n"
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
  int size[MAXSZ], nsz = 0;
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    if (nsz == MAXSZ || atoi(tok) <= 0) {
      fprintf(stderr, "bench_pipeline: sizes: at most %d, each > 0\n", MAXSZ);
      return 2;
    }
    size[nsz++] = atoi(tok);
  }
  printf("# bench_pipeline: generate + validate + lower + simulate x3 (lazy, random, pct) + "
         "oracle + compare [+ happens-before checker], one core; %d rounds of %.2f s per size, "
         "the sizes' cases interleaved, each case checked without and with the checker; "
         "medians; schedules seeded %s\n",
         REPS, secs, campaign_seeds ? "each its own (--campaign-seeds)" : "all with the case seed");
  /* the checker off and on, and the sizes, case by case (run_round) */
  static double r[MAXSZ][2][REPS], ratio[MAXSZ][REPS], us_op[MAXSZ][REPS], mean_ops[MAXSZ];
  for (int i = 0; i < REPS; i++) {
    uint64_t s0[MAXSZ];
    double rate[MAXSZ][2], u[MAXSZ];
    for (int z = 0; z < nsz; z++)
      s0[z] = 1 + (uint64_t)z * REPS * 1000000 + (uint64_t)i * 1000000;
    run_round(size, nsz, secs, s0, rate, u, mean_ops);
    for (int z = 0; z < nsz; z++) {
      r[z][0][i] = rate[z][0];
      r[z][1][i] = rate[z][1];
      ratio[z][i] = rate[z][0] / rate[z][1];
      us_op[z][i] = u[z];
    }
  }
  /* the time per op against the first size's, and against 32 ops' (issue 31's reference) when
   * 32 is a later size: each the median of the rounds' ratios */
  int ref32 = -1;
  for (int z = 1; z < nsz && ref32 < 0; z++)
    if (size[z] == 32)
      ref32 = z;
  for (int z = 0; z < nsz; z++) {
    int ops = size[z];
    for (int checker = 0; checker <= 1; checker++) {
      double *v = r[z][checker];
      qsort(v, REPS, sizeof(double), cmp_double);
      printf("ops=%d checker=%d mean_case_ops=%.1f cases_per_s_median=%.0f min=%.0f max=%.0f\n",
             ops, checker, mean_ops[z], v[REPS / 2], v[0], v[REPS - 1]);
    }
    double *c = ratio[z];
    qsort(c, REPS, sizeof(double), cmp_double);
    printf("ops=%d checker_cost=%.1f%% (time per case with / without, median of the rounds' "
           "ratios = %.3f; min %.3f, max %.3f)\n",
           ops, (c[REPS / 2] - 1.0) * 100.0, c[REPS / 2], c[0], c[REPS - 1]);
    double g[REPS];
    round_ratios(us_op[z], us_op[0], g);
    double u[REPS];
    memcpy(u, us_op[z], sizeof u);
    qsort(u, REPS, sizeof(double), cmp_double);
    printf("ops=%d checker=1 us_per_op_median=%.3f per_op_vs_ops_%d=%.3f (median of the rounds' "
           "ratios; min %.3f, max %.3f)\n",
           ops, u[REPS / 2], size[0], g[REPS / 2], g[0], g[REPS - 1]);
    if (ref32 >= 0) {
      round_ratios(us_op[z], us_op[ref32], g);
      printf("ops=%d checker=1 per_op_vs_ops_32=%.3f (median of the rounds' ratios; min %.3f, "
             "max %.3f)\n",
             ops, g[REPS / 2], g[0], g[REPS - 1]);
    }
    fflush(stdout);
  }
  /* the newer constructs off and on (different cases: not paired), checker on */
  for (int z = 0; z < nsz; z++) {
    int ops = size[z];
    double rr[2][REPS], med[2], mo[2];
    for (int i = 0; i < REPS; i++)
      for (int on = 0; on <= 1; on++) {
        uint64_t s0 = 1 + (uint64_t)z * REPS * 1000000 + (uint64_t)i * 1000000;
        rr[on][i] = run(ops, 1, on, secs, &s0, &mo[on]);
      }
    for (int on = 0; on <= 1; on++) {
      qsort(rr[on], REPS, sizeof(double), cmp_double);
      med[on] = rr[on][REPS / 2];
      printf("ops=%d checker=1 constructs=%s mean_case_ops=%.1f cases_per_s_median=%.0f min=%.0f "
             "max=%.0f\n",
             ops, on ? "on" : "off", mo[on], med[on], rr[on][0], rr[on][REPS - 1]);
    }
    printf("ops=%d constructs_cost=%.1f%% (time per case on / off = %.3f; ops per case on / off "
           "= %.2f)\n",
           ops, (med[0] / med[1] - 1.0) * 100.0, med[0] / med[1], mo[1] / mo[0]);
    fflush(stdout);
  }
  asyncfuzz_rt_shutdown();
  return 0;
}
