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

static void reduce_help_print(FILE *f) {
  fputs(reduce_help, f);
}

/* 0, an exit code, or -1 for --help (printed). */
static int reduce_args(int argc, char **argv, ReduceArgs *r) {
  const char *path[1];
  int npos;
  const CliOpt opts[] = {CLI_OPT_STR("--lowering", &r->lowering),
                         CLI_OPT_STR("--schedules", &r->scheds),
                         CLI_OPT_STR("--pipeline", &r->pipeline),
                         CLI_OPT_STR("--signature", &r->want_sig),
                         CLI_OPT_STR("-o", &r->out_json),
                         CLI_OPT_STR("--mlir", &r->out_mlir),
                         CLI_OPT_LONG("--batch", &r->batch, 1, 1024),
                         CLI_OPT_LONG("--jobs", &r->jobs, 1, 64),
                         CLI_OPT_LONG("--repro", &r->repro, 1, CHECK_MAX_SCHED),
                         CLI_OPT_FN("--abi", &r->o, cli_opt_abi),
                         CLI_OPT_U64("--seed", &r->seed),
                         CLI_OPT_FLAG("--memfree-sync", &r->o.memfree_sync, 1),
                         CLI_OPT_FLAG("--no-checker", &r->o.no_checker, 1),
                         CLI_OPT_END};
  int ex = cli_parse("reduce", argc, argv, opts, NULL, NULL, path, 1, &npos, reduce_help_print);
  if (ex == 0 && npos == 0) {
    fprintf(stderr, "asyncfuzz reduce: which case? (see --help)\n");
    return EXIT_USAGE;
  }
  r->path = npos ? path[0] : NULL;
  return ex;
}

/* The first schedule of res that fails (with signature want when not NULL), or -1. */
static int first_failing(const CheckResult *res, const char *want) {
  for (int j = 0; j < res->nsched; j++)
    if (res->verdict[j].cls != VERDICT_PASS &&
        (want == NULL || oracle_verdict_has(&res->verdict[j], want)))
      return j;
  return -1;
}

/* The reduced case run again: the failing schedule, then other seeds of its policy (*hits: how
 * many give sig, of res->nsched), then the failing run once more for v, whose verdict and trace
 * go into the reproducer. 0 or an AF_E* code. */
static int confirm(const GenCase *out, const LowerSpec *spec, const Schedule *fail,
                   const ReduceArgs *a, const char *sig, CheckResult *res, int *hits, Verdict *v,
                   AfErr *err) {
  Schedule rs[CHECK_MAX_SCHED];
  for (int j = 0; j < a->repro; j++) {
    rs[j] = *fail;
    if (j > 0)
      rs[j].seed = af_mix64(fail->seed, (uint64_t)j);
  }
  CheckOpts ro = a->o;
  ro.stop_at_first = 0;
  *hits = 0;
  int rc = check_case(out, spec, rs, (int)a->repro, NULL, &ro, res, err);
  for (int j = 0; rc == 0 && j < res->nsched; j++)
    *hits += oracle_verdict_has(&res->verdict[j], sig);
  return rc ? rc : check_run_once(out, spec, fail, &a->o, NULL, v, err);
}

/* The minimized case (-o, default stdout) and, with --mlir, its reproducer. An exit code. */
static int write_outputs(const GenCase *out, const LowerSpec *spec, const Schedule *fail,
                         const Verdict *v, const ReduceArgs *a) {
  char *json = gen_case_to_json(out);
  int ex = json ? cli_write_text(a->out_json, json) : EXIT_INTERNAL;
  af_free(json);
  if (ex == 0 && a->out_mlir) {
    char *m = check_reproducer(out, spec, fail, v, &a->o, a->out_json);
    ex = m ? cli_write_text(a->out_mlir, m) : EXIT_INTERNAL;
    af_free(m);
  }
  return ex;
}

/* Reduces case c, which fails under schedule fail with signature sig, confirms and writes the
 * result. res: room for the confirmation's results. An exit code. */
static int reduce_failing(const GenCase *c, const LowerSpec *spec, Schedule fail, const char *sig,
                          ReduceArgs *a, CheckResult *res) {
  char sch[64];
  check_schedule_str(&fail, sch, sizeof sch);
  fprintf(stderr, "asyncfuzz reduce: %s: %d ops, signature %s (schedule %s)\n", a->path, c->nops,
          sig, sch);
  CheckSigTest t = {spec, &fail, 1, a->o, sig};
  ReduceOpts ro = {NULL, 1, (int)a->jobs, 0};
  if (a->batch < 0)
    a->batch = spec->kind == LOWER_MLIR_OPT ? 16 : 1;
  if (a->batch > 1 || a->jobs > 1) {
    ro.batch_test = check_signature_test_many;
    ro.batch = (int)(a->batch > a->jobs ? a->batch : a->jobs);
  }
  GenCase out;
  ReduceStats st;
  AfErr err = {0};
  int hits = 0, ex = 0;
  Verdict v;
  int rc = reduce_case_opts(c, check_signature_test, &t, &ro, &out, &st, &err);
  if (rc == 0)
    rc = confirm(&out, spec, &fail, a, sig, res, &hits, &v, &err);
  if (rc) {
    fprintf(stderr, "asyncfuzz reduce: %s\n", err.msg);
    ex = cli_exit_for(rc);
  } else {
    fprintf(stderr,
            "asyncfuzz reduce: %d -> %d ops (%d candidates tested, %d kept, %d refused by the "
            "validator); reproduces in %d of %d runs on sim\n",
            st.from_ops, st.to_ops, st.tests, st.accepted, st.invalid, hits, res->nsched);
    ex = write_outputs(&out, spec, &fail, &v, a);
  }
  gen_case_free(&out);
  return ex;
}

int cmd_reduce(int argc, char **argv) {
  ReduceArgs a = {.lowering = "builtin",
                  .scheds = "eager,lazy,random:4,pct:4",
                  .repro = 10,
                  .batch = -1,
                  .jobs = 1};
  int ex = reduce_args(argc, argv, &a);
  if (ex)
    return ex < 0 ? 0 : ex;
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
  CheckResult *res = af_malloc(sizeof *res);
  ex = cli_load_case(a.path, &c, 1);
  if (ex == 0 && res == NULL)
    ex = EXIT_INTERNAL;
  int rc = ex ? 0 : check_case(&c, &spec, s, ns, NULL, &a.o, res, &err);
  int k = ex || rc ? -1 : first_failing(res, a.want_sig);
  if (rc) {
    fprintf(stderr, "asyncfuzz reduce: %s\n", err.msg);
    ex = cli_exit_for(rc);
  } else if (ex == 0 && k < 0) {
    fprintf(stderr, "asyncfuzz reduce: %s does not fail%s%s under %s: nothing to reduce\n", a.path,
            a.want_sig ? " with " : "", a.want_sig ? a.want_sig : "", a.scheds);
    ex = EXIT_FOUND;
  } else if (ex == 0) {
    char sig[256];
    snprintf(sig, sizeof sig, "%s", res->verdict[k].signature);
    ex = reduce_failing(&c, &spec, res->sched[k], sig, &a, res);
  }
  gen_case_free(&c);
  af_free(res);
  return ex;
}
