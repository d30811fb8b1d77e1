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

/* `run` and `device`: the cuda backend in this process, the spin calibrated when asked. */
int cmd_run(int argc, char **argv) {
  const char *path = NULL, *lowering = "builtin", *trace_path = NULL, *policy = "eager";
  const char *bin_path = NULL;
  uint64_t seed = 0;
  CheckOpts o = {0};
  int bo;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (cli_is_help(a)) {
      printf("usage: asyncfuzz run CASE.json [--lowering SPEC] [--policy eager|lazy|random|pct]\n"
             "                  [--sched-seed N] [--trace FILE|-] [--trace-bin FILE]\n"
             "                  [--device-steps] [--memfree-sync] [--no-checker]\n"
             "                  [--backend B] [--spin N|auto] [--abi cuda|rocm]\n"
             "Executes the case once (on the simulator unless --backend says otherwise) and\n"
             "prints the observations, the verdict, the happens-before checker's reports and\n"
             "(with --trace) the runtime trace (format: docs/trace-format.md; --trace-bin saves\n"
             "it for `asyncfuzz check-trace`). --memfree-sync models mgpuMemFree as\n"
             "synchronizing the device (lenient); --no-checker judges by observations and\n"
             "errors only. `run` executes in this process, also on a GPU (no child process).\n\n");
      cli_print_backend_help(stdout);
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
  if (asyncfuzz_rt_backend_info(o.backend)->gpu && (ex = cli_open_backend_here(&o)) != 0) {
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
    printf("signature: %s\ndetailed: %s\ndetail: %s\n", v.signature, v.victim, v.detail);
  if (!o.no_checker) {
    int ntrace;
    const RtRec *trace = asyncfuzz_rt_trace(&ntrace);
    HbOptions ho = {0};
    hb_options_for(&ho, check_abi(&spec, &o), o.memfree_sync);
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
    ex = b.oom ? EXIT_INTERNAL : cli_write_text(trace_path, b.p);
    af_buf_free(&b);
  }
  gen_case_free(&c);
  if (ex)
    return ex;
  return v.cls == VERDICT_PASS ? EXIT_OK : EXIT_FOUND;
}

#define CHECK_MAX_LOWERINGS 8

static const char check_help[] =
    "usage: asyncfuzz check CASE.json... [--lowering SPEC]... [--pipeline P]\n"
    "                    [--schedules LIST] [--seed N] [--json] [--memfree-sync]\n"
    "                    [--no-checker] [--backend B] [--spin N|auto]\n"
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
    "Exit 0 when every run passes, 1 when any fails.\n\n";

/* check's output of case j (of npaths) through nlow lowerings: text, or JSON lines.
 * Returns whether it failed with any of them. */
static int print_case(AfBuf *b, const char *path, int j, int npaths, const LowerSpec *specs,
                      int nlow, const CheckResult *res, int json, const CheckOpts *o) {
  int any_fail = 0;
  const CheckResult *r[CHECK_MAX_LOWERINGS];
  int differ = 0;
  for (int i = 0; i < nlow; i++) {
    r[i] = &res[(size_t)i * (size_t)npaths + (size_t)j];
    any_fail |= r[i]->first_fail >= 0;
    int cls = r[i]->first_fail < 0 ? VERDICT_PASS : r[i]->verdict[r[i]->first_fail].cls;
    int cls0 = r[0]->first_fail < 0 ? VERDICT_PASS : r[0]->verdict[r[0]->first_fail].cls;
    differ |= cls != cls0;
  }
  if (json && nlow == 1) {
    cli_check_json(b, path, &specs[0], r[0]);
    af_buf_puts(b, "\n");
  } else if (json) {
    af_buf_puts(b, "{\"case\": ");
    af_buf_json_str(b, path);
    af_buf_printf(b, ", \"differ\": %s, \"lowerings\": [", differ ? "true" : "false");
    for (int i = 0; i < nlow; i++) {
      af_buf_puts(b, i ? ", " : "");
      cli_check_json(b, path, &specs[i], r[i]);
    }
    af_buf_puts(b, "]}\n");
  } else {
    if (npaths > 1)
      af_buf_printf(b, "%s== case %s\n", j ? "\n" : "", path);
    for (int i = 0; i < nlow; i++)
      cli_check_text(b, path, &specs[i], r[i], nlow > 1, o);
    if (nlow > 1) {
      af_buf_printf(b, "%s:", differ ? "DIFFER: verdicts differ" : "SAME: verdicts agree");
      for (int i = 0; i < nlow; i++)
        af_buf_printf(b, " %s=%s", specs[i].name,
                      oracle_verdict_name(r[i]->first_fail < 0
                                              ? VERDICT_PASS
                                              : r[i]->verdict[r[i]->first_fail].cls));
      af_buf_puts(b, "\n");
    }
  }
  return any_fail;
}

/* A lowering verdict named by an op on a view is named without the view where the view does
 * not matter (check_view_free), as a campaign names its findings. */
static int view_free(const GenCase *c, const LowerSpec *spec, const CheckOpts *o, CheckResult *r) {
  for (int k = 0; k < r->nsched; k++) {
    GenCase plain;
    Verdict pv;
    AfErr err = {0};
    int rc = check_view_free(c, spec, &r->sched[k], o, &r->verdict[k], &plain, &pv, &err);
    if (rc < 0) {
      fprintf(stderr, "asyncfuzz check: %s: %s\n", spec->name, err.msg);
      return cli_exit_for(rc);
    }
    if (rc == 1) {
      r->verdict[k] = pv;
      gen_case_free(&plain);
    }
  }
  return 0;
}

int cmd_check(int argc, char **argv) {
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
    if (cli_is_help(a)) {
      printf(check_help, "eager,lazy,random:4,pct:4");
      cli_print_backend_help(stdout);
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
    if (ex == 0 && check_runs_on(&specs[i], &o, &err)) {
      fprintf(stderr, "asyncfuzz check: %s\n", err.msg);
      ex = EXIT_USAGE;
    }
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
  for (int i = 0; i < nlow && ex == 0; i++) /* as a campaign names them */
    for (int j = 0; j < npaths && ex == 0; j++)
      ex = view_free(&cases[j], &specs[i], &o, res + (size_t)i * (size_t)npaths + j);
  for (int j = 0; j < nloaded; j++)
    gen_case_free(&cases[j]);
  int any_fail = 0;
  AfBuf b;
  af_buf_init(&b);
  for (int j = 0; j < npaths && ex == 0; j++) {
    any_fail |= print_case(&b, paths[j], j, npaths, specs, nlow, res, json, &o);
  }
  if (ex == 0)
    ex = b.oom ? EXIT_INTERNAL : cli_write_text(NULL, b.p);
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

int cmd_check_trace(int argc, char **argv) {
  const char *path = NULL, *case_path = NULL, *lowering = "external";
  int lenient = 0, print = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (cli_is_help(a)) {
      printf("usage: asyncfuzz check-trace TRACE.bin [--case CASE.json] [--lowering NAME]\n"
             "                          [--memfree-sync] [--print]\n"
             "Runs the happens-before checker over a binary trace written by the runtime\n"
             "library (ASYNCFUZZ_TRACE_BIN=FILE, e.g. code lowered by mlir-opt and run by\n"
             "mlir-runner) and prints its reports. With --case, also judges the run against the\n"
             "case's oracle and prints the verdict and its signature (NAME labels the lowering).\n"
             "--print also prints every record (docs/trace-format.md). The checker follows the\n"
             "ABI flavour the trace records (docs/abi.md). Exit 0 when nothing is wrong, 1 when "
             "something is, 3 on a bad file.\n");
      return 0;
    } else if (strcmp(a, "--case") == 0 && i + 1 < argc) {
      case_path = argv[++i];
    } else if (strcmp(a, "--lowering") == 0 && i + 1 < argc) {
      lowering = argv[++i];
    } else if (strcmp(a, "--memfree-sync") == 0) {
      lenient = 1;
    } else if (strcmp(a, "--print") == 0) {
      print = 1;
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
  CheckTrace t;
  AfErr err = {0};
  if (check_trace_load(path, &t, &err)) {
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
  hb_options_for(&ho, t.abi, lenient);
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
    for (int i = 0; print && i < t.nrecs; i++) {
      asyncfuzz_rt_format_rec(&b, &t.recs[i]);
      af_buf_puts(&b, "\n");
    }
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
          af_buf_printf(&b, "signature: %s\ndetailed: %s\ndetail: %s\n", v.signature, v.victim,
                        v.detail);
        failed = v.cls != VERDICT_PASS;
      }
      oracle_expected_free(e);
    }
    if (ex == 0)
      ex = b.oom ? EXIT_INTERNAL : cli_write_text(NULL, b.p);
    af_buf_free(&b);
  }
  hb_result_free(hb);
  gen_case_free(&c);
  check_trace_free(&t);
  if (ex)
    return ex;
  return failed ? EXIT_FOUND : EXIT_OK;
}
