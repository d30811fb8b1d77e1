/*
 * bench_detect.c: what each detector catches. For every builtin fault switch, over the same
 * generated cases, each case is run under each schedule policy; a case counts as failing when
 * any detector fires on any schedule. Per fault it prints the fraction of failing cases caught
 * by observation alone (wrong values), by the happens-before checker alone, and by both, and
 * the same restricted to the eager policy (a fast GPU, where timing hides most bugs).
 *
 * usage: bench_detect [cases per fault (default 500)]
 */
#include "bench.h"
#include "../check/check.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (bench_help(argc, argv,
                 "usage: bench_detect [cases per fault (default 500)]\n"
                 "Per builtin fault, over the same generated cases under every schedule policy: "
                 "the share of\n"
                 "failing cases caught by the observations alone, by the happens-before checker "
                 "alone and by\n"
                 "both, and the same under eager only.\n"))
    return 0;
  int ncases = argc > 1 ? atoi(argv[1]) : 500;
  GenConfig cfg;
  gen_config_default(&cfg);
  printf("# bench_detect: %d generated cases of %d ops per fault; schedules eager, lazy, "
         "random, pct\n",
         ncases, cfg.ops);
  printf("%-22s %8s %10s %10s %8s | %s\n", "fault", "failing", "obs-only", "checker-only", "both",
         "eager only: failing obs-only checker-only both");
  for (int f = 0; f < LOWER_FAULT__COUNT; f++) {
    char name[160];
    snprintf(name, sizeof name, "builtin:fault=%s", lower_fault_name(f));
    LowerSpec spec;
    AfErr err = {0};
    if (lower_spec_parse(name, &spec, &err))
      return 1;
    int fail = 0, obs_only = 0, hb_only = 0, both = 0;
    int efail = 0, eobs = 0, ehb = 0, eboth = 0;
    for (int i = 0; i < ncases; i++) {
      GenCase c;
      if (gen_generate(&c, (uint64_t)(10000 + i), &cfg, &err))
        return 1;
      Schedule s[4] = {{RT_EAGER, (uint64_t)i},
                       {RT_LAZY, (uint64_t)i},
                       {RT_RANDOM, (uint64_t)i},
                       {RT_PCT, (uint64_t)i}};
      CheckResult r;
      if (check_case(&c, &spec, s, 4, NULL, NULL, &r, &err)) {
        fprintf(stderr, "bench_detect: %s\n", err.msg);
        return 1;
      }
      int obs = 0, hb = 0, any = 0;
      for (int k = 0; k < r.nsched; k++) {
        obs |= r.verdict[k].obs_failed;
        hb |= r.verdict[k].hb_failed;
        any |= r.verdict[k].cls != VERDICT_PASS;
      }
      fail += any;
      obs_only += obs && !hb;
      hb_only += hb && !obs;
      both += obs && hb;
      const Verdict *e = &r.verdict[0];
      efail += e->cls != VERDICT_PASS;
      eobs += e->obs_failed && !e->hb_failed;
      ehb += e->hb_failed && !e->obs_failed;
      eboth += e->obs_failed && e->hb_failed;
      gen_case_free(&c);
    }
    double d = fail ? fail : 1, ed = efail ? efail : 1;
    printf("%-22s %8d %9.1f%% %11.1f%% %7.1f%% | %d %.1f%% %.1f%% %.1f%%\n", lower_fault_name(f),
           fail, 100.0 * obs_only / d, 100.0 * hb_only / d, 100.0 * both / d, efail,
           100.0 * eobs / ed, 100.0 * ehb / ed, 100.0 * eboth / ed);
    fflush(stdout);
  }
  asyncfuzz_rt_shutdown();
  return 0;
}
