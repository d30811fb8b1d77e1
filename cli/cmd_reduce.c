/*
 * cmd_reduce.c: the reduce command: a failing case minimized to a small .json and .mlir.
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

static const char reduce_help[] =
    "usage: asyncfuzz reduce CASE.json [--lowering SPEC] [--pipeline P] [--schedules LIST]\n"
    "                     [--signature SIG] [-o OUT.json] [--mlir OUT.mlir] [--abi A]\n"
    "                     [--repro N] [--batch N] [--jobs N] [--memfree-sync] [--no-checker]\n"
    "Minimizes a failing case: delta debugging over the case (ops with what only they\n"
    "feed, regions, dependencies, unused values and buffers, buffer sizes, the spin\n"
    "count). Every candidate is a valid case and must fail with the same root-cause\n"
    "signature (the first failing schedule's, or SIG) under that schedule, judged on\n"
    "the simulator (under --abi's flavour: docs/abi.md) with the checker. The result\n"
    "is re-run N times (default 10) for its reproduction rate. Writes the minimized\n"
    "case (-o, default stdout) and, with --mlir, a self-contained reproducer with RUN\n"
    "lines, the verdict and the trace.\n"
    "Exit 0 when reduced, 1 when the case does not fail, 2 usage, 3 bad input.\n";

typedef struct ReduceArgs {
  const char *path, *lowering, *scheds, *out_json, *out_mlir, *want_sig, *pipeline;
  uint64_t seed;
  long repro, batch, jobs;
  CheckOpts o;
} ReduceArgs;

/* 0, an exit code, or -1 for --help (printed). */
static int reduce_args(int argc, char **argv, ReduceArgs *r) {
  struct {
    const char *name;
    long *v, hi;
  } ints[] = {{"--batch", &r->batch, 1024},
              {"--jobs", &r->jobs, 64},
              {"--repro", &r->repro, CHECK_MAX_SCHED}};
  for (int i = 1, k; i < argc; i++) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    for (k = 0; k < 3 && strcmp(a, ints[k].name) != 0; k++)
      ;
    if (cli_is_help(a)) {
      fputs(reduce_help, stdout);
      return -1;
    } else if (strcmp(a, "--lowering") == 0 && val) {
      r->lowering = argv[++i];
    } else if (strcmp(a, "--schedules") == 0 && val) {
      r->scheds = argv[++i];
    } else if (strcmp(a, "--pipeline") == 0 && val) {
      r->pipeline = argv[++i];
    } else if (strcmp(a, "--signature") == 0 && val) {
      r->want_sig = argv[++i];
    } else if (strcmp(a, "-o") == 0 && val) {
      r->out_json = argv[++i];
    } else if (strcmp(a, "--mlir") == 0 && val) {
      r->out_mlir = argv[++i];
    } else if (k < 3 || strcmp(a, "--abi") == 0) {
      if (k < 3 ? cli_int(a, val, 1, ints[k].hi, ints[k].v) : cli_backend_opt(&r->o, a, val) < 0)
        return EXIT_USAGE;
      i++;
    } else if (strcmp(a, "--seed") == 0) {
      if (cli_u64(a, val, &r->seed))
        return EXIT_USAGE;
      i++;
    } else if (strcmp(a, "--memfree-sync") == 0) {
      r->o.memfree_sync = 1;
    } else if (strcmp(a, "--no-checker") == 0) {
      r->o.no_checker = 1;
    } else if (a[0] == '-') {
      fprintf(stderr, "asyncfuzz reduce: unknown or incomplete option %s (see --help)\n", a);
      return EXIT_USAGE;
    } else if (r->path == NULL) {
      r->path = a;
    } else {
      fprintf(stderr, "asyncfuzz reduce: one case at a time\n");
      return EXIT_USAGE;
    }
  }
  if (r->path == NULL) {
    fprintf(stderr, "asyncfuzz reduce: which case? (see --help)\n");
    return EXIT_USAGE;
  }
  return 0;
}

int cmd_reduce(int argc, char **argv) {
  ReduceArgs a = {.lowering = "builtin",
                  .scheds = "eager,lazy,random:4,pct:4",
                  .repro = 10,
                  .batch = -1,
                  .jobs = 1};
  int ex0 = reduce_args(argc, argv, &a);
  if (ex0)
    return ex0 < 0 ? 0 : ex0;
  LowerSpec spec;
  if (cli_parse_lowering("reduce", a.lowering, a.pipeline, 0, &spec))
    return EXIT_USAGE;
  AfErr err = {0};
  Schedule s[CHECK_MAX_SCHED];
  int ns;
  if (check_parse_schedules(a.scheds, a.seed, s, CHECK_MAX_SCHED, &ns, &err)) {
    fprintf(stderr, "asyncfuzz reduce: %s\n", err.msg);
    return EXIT_USAGE;
  }
  GenCase c;
  int ex = cli_load_case(a.path, &c, 1);
  if (ex) {
    gen_case_free(&c);
    return ex;
  }
  CheckResult *res = af_malloc(sizeof *res);
  if (res == NULL) {
    gen_case_free(&c);
    return EXIT_INTERNAL;
  }
  int rc = check_case(&c, &spec, s, ns, NULL, &a.o, res, &err);
  int k = -1;
  for (int j = 0; rc == 0 && j < res->nsched && k < 0; j++)
    if (res->verdict[j].cls != VERDICT_PASS &&
        (a.want_sig == NULL || strcmp(res->verdict[j].signature, a.want_sig) == 0))
      k = j;
  if (rc || k < 0) {
    if (rc)
      fprintf(stderr, "asyncfuzz reduce: %s\n", err.msg);
    else
      fprintf(stderr, "asyncfuzz reduce: %s does not fail%s%s under %s: nothing to reduce\n",
              a.path, a.want_sig ? " with " : "", a.want_sig ? a.want_sig : "", a.scheds);
    af_free(res);
    gen_case_free(&c);
    return rc ? cli_exit_for(rc) : EXIT_FOUND;
  }
  Schedule fail = res->sched[k];
  char sig[256];
  snprintf(sig, sizeof sig, "%s", res->verdict[k].signature);
  CheckSigTest t = {&spec, &fail, 1, a.o, sig};
  GenCase out;
  ReduceStats st;
  fprintf(stderr, "asyncfuzz reduce: %s: %d ops, signature %s (schedule ", a.path, c.nops, sig);
  char sch[64];
  check_schedule_str(&fail, sch, sizeof sch);
  fprintf(stderr, "%s)\n", sch);
  ReduceOpts ro_ = {NULL, 1, (int)a.jobs, 0};
  if (a.batch < 0)
    a.batch = spec.kind == LOWER_MLIR_OPT ? 16 : 1;
  if (a.batch > 1 || a.jobs > 1) {
    ro_.batch_test = check_signature_test_many;
    ro_.batch = (int)(a.batch > a.jobs ? a.batch : a.jobs);
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
  for (int j = 0; j < a.repro; j++) {
    rs[j] = fail;
    if (j > 0)
      rs[j].seed = af_mix64(fail.seed, (uint64_t)j);
  }
  CheckOpts ro = a.o;
  ro.stop_at_first = 0;
  int hits = 0;
  rc = check_case(&out, &spec, rs, (int)a.repro, NULL, &ro, res, &err);
  for (int j = 0; rc == 0 && j < res->nsched; j++)
    hits += strcmp(res->verdict[j].signature, sig) == 0;
  /* the failing run once more: its verdict and trace go into the reproducer */
  Verdict v;
  if (rc == 0)
    rc = check_run_once(&out, &spec, &fail, &a.o, NULL, &v, &err);
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
  ex = json ? cli_write_text(a.out_json, json) : EXIT_INTERNAL;
  af_free(json);
  if (ex == 0 && a.out_mlir) {
    char *m = check_reproducer(&out, &spec, &fail, &v, a.out_json);
    ex = m ? cli_write_text(a.out_mlir, m) : EXIT_INTERNAL;
    af_free(m);
  }
  af_free(res);
  gen_case_free(&out);
  return ex;
}
