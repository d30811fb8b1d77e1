/*
 * cmd_check.c: the commands that run cases and judge them: run, check, check-trace.
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

/* ---- run / check ---- */

static void run_help(FILE *f) {
  fprintf(f, "usage: asyncfuzz run CASE.json [--lowering SPEC] [--policy eager|lazy|random|pct]\n"
             "                  [--sched-seed N] [--trace FILE|-] [--trace-bin FILE]\n"
             "                  [--device-steps] [--memfree-sync] [--no-checker]\n"
             "                  [--backend B] [--spin N|auto] [--abi cuda|rocm]\n"
             "Executes the case once (on the simulator unless --backend says otherwise) and\n"
             "prints the observations, the verdict, the happens-before checker's reports and\n"
             "(with --trace) the runtime trace (format: docs/trace-format.md; --trace-bin saves\n"
             "it for `asyncfuzz check-trace`). --memfree-sync models mgpuMemFree as\n"
             "synchronizing the device (lenient); --no-checker judges by observations and\n"
             "errors only. `run` executes in this process, also on a GPU (no child process).\n\n");
  cli_print_backend_help(f);
}

/* `run`: one schedule of one case in this process (also on a GPU). */
int cmd_run(int argc, char **argv) {
  const char *path[1], *lowering = "builtin", *trace_path = NULL, *policy = "eager";
  const char *bin_path = NULL;
  uint64_t seed = 0;
  CheckOpts o = {0};
  int npos;
  const CliOpt opts[] = {CLI_OPT_STR("--lowering", &lowering),
                         CLI_OPT_STR("--policy", &policy),
                         CLI_OPT_U64("--sched-seed", &seed),
                         CLI_OPT_STR("--trace", &trace_path),
                         CLI_OPT_STR("--trace-bin", &bin_path),
                         CLI_OPT_FLAG("--device-steps", &o.record_device, 1),
                         CLI_OPT_FLAG("--no-checker", &o.no_checker, 1),
                         CLI_OPT_FLAG("--memfree-sync", &o.memfree_sync, 1),
                         CLI_OPT_END};
  int ex = cli_parse("run", argc, argv, opts, &o, NULL, path, 1, &npos, run_help);
  if (ex)
    return ex < 0 ? 0 : ex;
  if (npos == 0) {
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
  ex = cli_load_case(path[0], &c, 1);
  if (ex == 0 && asyncfuzz_rt_backend_info(o.backend)->gpu)
    ex = cli_open_backend_here(&o);
  Verdict v;
  AfErr err = {0};
  int rc = ex ? 0 : check_run_once(&c, &spec, &s, &o, NULL, &v, &err);
  if (rc) {
    fprintf(stderr, "asyncfuzz run: %s\n", err.msg);
    ex = cli_exit_for(rc);
  }
  if (ex == 0) {
    AfBuf b;
    af_buf_init(&b);
    check_format_run(&b, &c, &spec, &o, &v);
    fputs(b.p ? b.p : "", stdout);
    af_buf_free(&b);
    if ((rc = check_write_traces(trace_path, bin_path, &spec, policy, seed, &err))) {
      fprintf(stderr, "asyncfuzz run: %s\n", err.msg);
      ex = cli_exit_for(rc);
    }
  }
  gen_case_free(&c);
  if (ex)
    return ex;
  return v.cls == VERDICT_PASS ? EXIT_OK : EXIT_FOUND;
}

static const char check_help[] =
    "usage: asyncfuzz check CASE.json... [--lowering SPEC]... [--pipeline P]\n"
    "                    [--schedules LIST] [--seed N] [--json] [--memfree-sync]\n"
    "                    [--no-checker] [--fail-calls PCT] [--backend B] [--spin N|auto]\n"
    "Runs the case under each schedule and judges every run: observations against the\n"
    "sequential oracle, runtime errors, and the happens-before checker over the trace.\n"
    "Each failing run says which of them fired. LIST is NAME[:COUNT][@SEED],... with\n"
    "NAME eager|lazy|random|pct (default %s; seeds derive from --seed\n"
    "unless given).\n"
    "SPEC: builtin (default), builtin:fault=NAME[,NAME], or "
    "mlir-opt[@VARIANT][/TARGET][+O<n>|+Odefault][:PATH]\n"
    "(the real lowering: mlir-opt's passes, run by mlir-runner on the simulator;\n"
    "VARIANT default|async-region; --pipeline replaces the pass pipeline). Several\n"
    "--lowering options check the case with each and report where verdicts differ.\n"
    "Several cases are checked in one batch (one mlir-opt and one mlir-runner process\n"
    "for all of them); --json then prints one JSON object per line.\n"
    "--fail-calls PCT: the device fails a call on purpose in up to PCT%% of the runs (a\n"
    "device_error verdict naming the call: not judged, not a failure).\n"
    "Exit 0 when every run passes, 1 when any fails.\n\n";

static void check_help_print(FILE *f) {
  fprintf(f, check_help, "eager,lazy,random:4,pct:4");
  cli_print_backend_help(f);
}

/* check's lowerings (with --pipeline) and schedules; prints what is wrong. An exit code. */
static int parse_specs(const char **lowerings, int nlow, const char *pipeline, const char *scheds,
                       uint64_t seed, const CheckOpts *o, LowerSpec *specs, Schedule *s, int *ns) {
  AfErr err = {0};
  for (int i = 0; i < nlow; i++) {
    if (cli_parse_lowering("check", lowerings[i], pipeline, 1, &specs[i]))
      return EXIT_USAGE;
    if (check_runs_on(&specs[i], o, &err)) {
      fprintf(stderr, "asyncfuzz check: %s\n", err.msg);
      return EXIT_USAGE;
    }
  }
  if (check_parse_schedules(scheds, seed, s, CHECK_MAX_SCHED, ns, &err)) {
    fprintf(stderr, "asyncfuzz check: %s\n", err.msg);
    return EXIT_USAGE;
  }
  return 0;
}

/* Each case's results under each lowering, as text or JSON lines; sets *any_fail when one
 * failed. */
static int print_results(const char **paths, int npaths, const LowerSpec *specs, int nspecs,
                         const CheckResult *res, int json, const CheckOpts *o, int *any_fail) {
  AfBuf b;
  af_buf_init(&b);
  for (int j = 0; j < npaths; j++)
    *any_fail |= check_format_case(&b, paths[j], j, npaths, specs, nspecs, res, json, o);
  int ex = b.oom ? EXIT_INTERNAL : cli_write_text(NULL, b.p);
  af_buf_free(&b);
  return ex;
}

int cmd_check(int argc, char **argv) {
  const char *scheds = "eager,lazy,random:4,pct:4", *pipeline = NULL;
  const char **paths = af_calloc((size_t)argc, sizeof *paths);
  int npaths = 0;
  if (paths == NULL)
    return EXIT_INTERNAL;
  CliStrs low = {{0}, 0};
  uint64_t seed = 0;
  int json = 0;
  CheckOpts o = {0};
  const CliOpt opts[] = {CLI_OPT_STRS("--lowering", &low),
                         CLI_OPT_STR("--pipeline", &pipeline),
                         CLI_OPT_STR("--schedules", &scheds),
                         CLI_OPT_U64("--seed", &seed),
                         CLI_OPT_FLAG("--json", &json, 1),
                         CLI_OPT_FLAG("--memfree-sync", &o.memfree_sync, 1),
                         CLI_OPT_INT("--fail-calls", &o.fail_pct, 0, 100),
                         CLI_OPT_FLAG("--no-checker", &o.no_checker, 1),
                         CLI_OPT_END};
  int ex = cli_parse("check", argc, argv, opts, &o, NULL, paths, argc, &npaths, check_help_print);
  if (ex == 0 && npaths == 0) {
    fprintf(stderr, "asyncfuzz check: which case? (see --help)\n");
    ex = EXIT_USAGE;
  }
  if (ex) {
    af_free(paths);
    return ex < 0 ? 0 : ex;
  }
  if (low.n == 0)
    low.v[low.n++] = "builtin";
  LowerSpec *specs = af_calloc((size_t)low.n, sizeof *specs);
  CheckResult *res = af_calloc((size_t)low.n * (size_t)npaths, sizeof *res);
  GenCase *cases = af_calloc((size_t)npaths, sizeof *cases);
  const GenCase **cp = af_calloc((size_t)npaths, sizeof *cp);
  if (specs == NULL || res == NULL || cases == NULL || cp == NULL) {
    fprintf(stderr, "asyncfuzz check: out of memory\n");
    ex = EXIT_INTERNAL;
  }
  AfErr err = {0};
  Schedule s[CHECK_MAX_SCHED];
  int ns = 0;
  if (ex == 0)
    ex = parse_specs(low.v, low.n, pipeline, scheds, seed, &o, specs, s, &ns);
  int nloaded = 0;
  for (int j = 0; j < npaths && ex == 0; j++, nloaded++) {
    ex = cli_load_case(paths[j], &cases[j], 1);
    cp[j] = &cases[j];
  }
  char dev[400];
  if (ex == 0)
    ex = cli_backend_start("check", &o, dev, sizeof dev);
  for (int i = 0; i < low.n && ex == 0; i++) {
    CheckResult *r = res + (size_t)i * (size_t)npaths;
    int rc = check_cases(cp, npaths, &specs[i], s, ns, NULL, &o, r, &err);
    for (int j = 0; j < npaths && rc == 0; j++) /* as a campaign names them */
      rc = check_view_free_all(&cases[j], &specs[i], &o, &r[j], &err);
    if (rc) {
      fprintf(stderr, "asyncfuzz check: %s: %s\n", specs[i].name, err.msg);
      ex = cli_exit_for(rc);
    }
  }
  for (int j = 0; j < nloaded; j++)
    gen_case_free(&cases[j]);
  int any_fail = 0;
  if (ex == 0)
    ex = print_results(paths, npaths, specs, low.n, res, json, &o, &any_fail);
  if (ex == 0 && asyncfuzz_rt_backend_info(o.backend)->gpu)
    fprintf(stderr, "asyncfuzz check: device: %d case(s) at once at most (--gpu-jobs %d)\n",
            check_gpu_peak(), check_gpu_jobs(&o));
  if (ex == 0 && check_gpu_restarts() > 0)
    fprintf(stderr,
            "asyncfuzz check: device: %d GPU child process(es) replaced after a sticky error, a "
            "crash or a hang: the next case ran in a new one, with a fresh context\n",
            check_gpu_restarts());
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

static void check_trace_help(FILE *f) {
  fprintf(f, "usage: asyncfuzz check-trace TRACE.bin [--case CASE.json] [--lowering NAME]\n"
             "                          [--memfree-sync] [--print]\n"
             "Runs the happens-before checker over a binary trace written by the runtime\n"
             "library (ASYNCFUZZ_TRACE_BIN=FILE, e.g. code lowered by mlir-opt and run by\n"
             "mlir-runner) and prints its reports. With --case, also judges the run against the\n"
             "case's oracle and prints the verdict and its signature (NAME labels the lowering).\n"
             "--print also prints every record (docs/trace-format.md). The checker follows the\n"
             "ABI flavour the trace records (docs/abi.md). Exit 0 when nothing is wrong, 1 when "
             "something is, 3 on a bad file.\n");
}

int cmd_check_trace(int argc, char **argv) {
  const char *path[1], *case_path = NULL, *lowering = "external";
  int lenient = 0, print = 0, npos;
  const CliOpt opts[] = {CLI_OPT_STR("--case", &case_path), CLI_OPT_STR("--lowering", &lowering),
                         CLI_OPT_FLAG("--memfree-sync", &lenient, 1),
                         CLI_OPT_FLAG("--print", &print, 1), CLI_OPT_END};
  int ex = cli_parse("check-trace", argc, argv, opts, NULL, NULL, path, 1, &npos, check_trace_help);
  if (ex)
    return ex < 0 ? 0 : ex;
  if (npos == 0) {
    fprintf(stderr, "asyncfuzz check-trace: which trace? (see --help)\n");
    return EXIT_USAGE;
  }
  GenCase c;
  if (case_path)
    ex = cli_load_case(case_path, &c, 1); /* initializes c, also on failure */
  else
    gen_case_init(&c);
  AfBuf b;
  af_buf_init(&b);
  AfErr err = {0};
  int failed = 0;
  int rc = ex ? 0
              : check_trace_report(path[0], case_path ? &c : NULL, lowering, lenient, print, &b,
                                   &failed, &err);
  if (rc) {
    fprintf(stderr, "asyncfuzz check-trace: %s\n", err.msg);
    ex = rc == AF_ENOMEM || rc == AF_EINTERNAL ? EXIT_INTERNAL : EXIT_INPUT;
  }
  if (ex == 0)
    ex = b.oom ? EXIT_INTERNAL : cli_write_text(NULL, b.p);
  af_buf_free(&b);
  gen_case_free(&c);
  if (ex)
    return ex;
  return failed ? EXIT_FOUND : EXIT_OK;
}
