/*
 * batch.c: `asyncfuzz compile-batch` and `asyncfuzz run-batch`: their options and output.
 * The batches themselves are batch/batch.h.
 */
#include "cli.h"
#include "../batch/batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char compile_help[] =
    "usage: asyncfuzz compile-batch (CASE.json... | --gen N [--seed S] [knobs]) -o DIR\n"
    "                               [--lowering mlir-opt[@VARIANT][+O<n>][:PATH]] [--pipeline P]\n"
    "Lowers and compiles cases ahead of time, on a machine with LLVM 22 (mlir-opt,\n"
    "mlir-translate, opt, llc; $ASYNCFUZZ_MLIR_TRANSLATE, $ASYNCFUZZ_LLVM_OPT and\n"
    "$ASYNCFUZZ_LLC override), into\n"
    "DIR/batch.so, for `asyncfuzz run-batch DIR` on a GPU runner without MLIR. --gen N\n"
    "generates N cases from seeds S, S+1, ... (swarm knobs, as campaigns do). Cases the\n"
    "lowering rejects or leaves unconverted are recorded in DIR/manifest.json with\n"
    "their verdicts; the others are compiled. Exit 0, or 4 when a tool fails.\n\n";

typedef struct CompileArgs {
  const char *out, *lowering, *pipeline;
  const char **paths;
  int npaths;
  long ngen;
  uint64_t seed;
  GenConfig gcfg;
} CompileArgs;

static void compile_help_print(FILE *f) {
  fputs(compile_help, f);
  cli_print_knobs_help(f);
}

/* 0, an exit code, or -1 for --help (printed). */
static int compile_args(int argc, char **argv, CompileArgs *a) {
  const CliOpt opts[] = {CLI_OPT_STR("-o", &a->out),
                         CLI_OPT_STR("--out", &a->out),
                         CLI_OPT_STR("--lowering", &a->lowering),
                         CLI_OPT_STR("--pipeline", &a->pipeline),
                         CLI_OPT_LONG("--gen", &a->ngen, 1, 100000),
                         CLI_OPT_U64("--seed", &a->seed),
                         CLI_OPT_END};
  int ex = cli_parse("compile-batch", argc, argv, opts, NULL, &a->gcfg, a->paths, argc, &a->npaths,
                     compile_help_print);
  if (ex == 0 && (a->out == NULL || (a->npaths == 0 && a->ngen == 0))) {
    fprintf(stderr, "asyncfuzz compile-batch: which cases, and -o DIR? (see --help)\n");
    return EXIT_USAGE;
  }
  return ex;
}

/* The cases: the files given, then --gen N generated (swarm knobs). */
static int compile_cases(const CompileArgs *a, GenCase *cases) {
  AfErr err = {0};
  for (int i = 0; i < a->npaths; i++) {
    int ex = cli_load_case(a->paths[i], &cases[i], 1);
    if (ex)
      return ex;
  }
  for (int i = 0; i < (int)a->ngen; i++) {
    GenConfig c;
    gen_config_swarm(&a->gcfg, a->seed + (uint64_t)i, &c);
    if (gen_generate(&cases[a->npaths + i], a->seed + (uint64_t)i, &c, &err)) {
      fprintf(stderr, "asyncfuzz compile-batch: %s\n", err.msg);
      return EXIT_USAGE;
    }
  }
  return 0;
}

int cmd_compile_batch(int argc, char **argv) {
  CompileArgs a;
  memset(&a, 0, sizeof a);
  a.lowering = "mlir-opt";
  a.seed = 1;
  gen_config_default(&a.gcfg);
  a.paths = af_calloc((size_t)argc, sizeof *a.paths);
  if (a.paths == NULL)
    return EXIT_INTERNAL;
  int ex = compile_args(argc, argv, &a);
  LowerSpec spec;
  if (ex == 0 && cli_parse_lowering("compile-batch", a.lowering, a.pipeline, 0, &spec))
    ex = EXIT_USAGE;
  if (ex == 0 && spec.kind != LOWER_MLIR_OPT) {
    fprintf(stderr, "asyncfuzz compile-batch: batches are for the mlir-opt lowering (the builtin "
                    "lowering needs no compilation: use check --backend)\n");
    ex = EXIT_USAGE;
  }
  int n = a.npaths + (int)a.ngen;
  GenCase *cases = ex == 0 ? af_calloc((size_t)n, sizeof *cases) : NULL;
  if (ex == 0 && cases == NULL)
    ex = EXIT_INTERNAL;
  if (ex == 0)
    ex = compile_cases(&a, cases);
  if (ex == 0) {
    const char **sources = af_calloc((size_t)n, sizeof *sources);
    for (int i = 0; i < a.npaths && sources; i++)
      sources[i] = a.paths[i];
    fprintf(stderr, "asyncfuzz compile-batch: lowering %d case(s) with %s (%s)\n", n, spec.name,
            spec.version);
    BatchCompiled r;
    AfErr err = {0};
    if (sources == NULL || batch_compile(&spec, cases, sources, n, a.out, &r, &err)) {
      fprintf(stderr, "asyncfuzz compile-batch: %s\n", sources ? err.msg : "out of memory");
      ex = EXIT_INTERNAL;
    } else {
      fprintf(stderr,
              "asyncfuzz compile-batch: %d of %d case(s) compiled into %s; %d kept their "
              "lowering verdicts (manifest.json)\n",
              r.ncompiled, n, r.ncompiled ? r.so : "(nothing)", n - r.ncompiled);
    }
    if (sources && r.kept[0])
      fprintf(stderr, "asyncfuzz: kept %s\n", r.kept);
    af_free(sources);
  }
  for (int i = 0; cases && i < n; i++)
    gen_case_free(&cases[i]);
  af_free(cases);
  af_free(a.paths);
  return ex < 0 ? 0 : ex;
}

/* ---- run-batch ---- */

typedef struct RunArgs {
  const char *dir, *scheds, *dbp;
  uint64_t seed;
  int json;
  CheckOpts o;
} RunArgs;

static void run_batch_help(FILE *f) {
  fprintf(f, "usage: asyncfuzz run-batch DIR [--backend B] [--spin N|auto] [--schedules LIST]\n"
             "                          [--seed N] [--json] [--memfree-sync] [--no-checker]\n"
             "                          [--db FILE] [--fail-calls PCT] [--gpu-jobs N]\n"
             "Runs a batch made by `asyncfuzz compile-batch` (no MLIR needed here): every\n"
             "compiled case under each schedule, in child processes watched by a watchdog\n"
             "($ASYNCFUZZ_GPU_TIMEOUT s per case, default 60; a crash or hang gives that case a\n"
             "verdict and a fresh child goes on). On a GPU, --gpu-jobs children (default 4) run\n"
             "cases at once, each with its own context; on the sim one runs them all. Each run is "
             "judged as `check` judges it; cases\n"
             "the lowering did not lower keep their verdicts from the manifest. Output and exit\n"
             "status as `check`. --db records the run (device, tools from the manifest) and each\n"
             "failing case's first failing run in the regression database, as campaigns do.\n"
             "--fail-calls PCT: the device fails a call on purpose in up to PCT%% of the runs\n"
             "(device_error verdicts, counted, never failures; docs/signatures.md).\n\n");
  cli_print_backend_help(f);
}

/* 0, an exit code, or -1 for --help (printed). */
static int run_args(int argc, char **argv, RunArgs *a) {
  int npos;
  const CliOpt opts[] = {CLI_OPT_STR("--schedules", &a->scheds),
                         CLI_OPT_U64("--seed", &a->seed),
                         CLI_OPT_FLAG("--json", &a->json, 1),
                         CLI_OPT_STR("--db", &a->dbp),
                         CLI_OPT_FLAG("--memfree-sync", &a->o.memfree_sync, 1),
                         CLI_OPT_FLAG("--no-checker", &a->o.no_checker, 1),
                         CLI_OPT_INT("--fail-calls", &a->o.fail_pct, 0, 100),
                         CLI_OPT_END};
  int ex = cli_parse("run-batch", argc, argv, opts, &a->o, NULL, &a->dir, 1, &npos, run_batch_help);
  if (ex == 0 && npos == 0) {
    fprintf(stderr, "asyncfuzz run-batch: which batch directory? (see --help)\n");
    return EXIT_USAGE;
  }
  return ex;
}

/* Judges and prints every case; records failing ones in db. *failed: the failing cases;
 * *device_errors: the cases with a device error (--fail-calls). */
static int run_judge(Batch *b, const RunArgs *a, Store *db, int64_t run_id, int *failed,
                     int *device_errors, int *nnew) {
  AfBuf out;
  af_buf_init(&out);
  CheckResult *res = af_calloc(1, sizeof *res);
  AfErr err = {0};
  int ex = res ? 0 : EXIT_INTERNAL;
  const LowerSpec *spec = batch_spec(b);
  for (int i = 0; i < batch_ncases(b) && ex == 0; i++) {
    if (batch_judge(b, i, &a->o, res, &err)) {
      fprintf(stderr, "asyncfuzz run-batch: %s\n", err.msg);
      ex = EXIT_INTERNAL;
      break;
    }
    *failed += res->first_fail >= 0;
    *device_errors += res->device_errors > 0;
    if (db && res->first_fail >= 0 && batch_db_record(b, db, run_id, i, &a->o, res, nnew, &err)) {
      fprintf(stderr, "asyncfuzz run-batch: %s\n", err.msg);
      ex = EXIT_INTERNAL;
    }
    if (a->json)
      check_format_json(&out, batch_case_file(b, i), spec, res);
    else
      check_format_text(&out, batch_case_file(b, i), spec, res, 0, &a->o);
  }
  if (ex == 0)
    fputs(out.p ? out.p : "", stdout);
  af_buf_free(&out);
  af_free(res);
  return ex;
}

int cmd_run_batch(int argc, char **argv) {
  RunArgs a;
  memset(&a, 0, sizeof a);
  a.scheds = "eager,lazy,random:4,pct:4";
  int ex = run_args(argc, argv, &a);
  if (ex)
    return ex < 0 ? 0 : ex;
  AfErr err = {0};
  Schedule s[CHECK_MAX_SCHED];
  int ns = 0;
  if (check_parse_schedules(a.scheds, a.seed, s, CHECK_MAX_SCHED, &ns, &err)) {
    fprintf(stderr, "asyncfuzz run-batch: %s\n", err.msg);
    return EXIT_USAGE;
  }
  Batch *b;
  int rc = batch_open(a.dir, &b, &err);
  if (rc) {
    fprintf(stderr, "asyncfuzz run-batch: %s\n", err.msg);
    return cli_exit_for(rc);
  }
  char dev[400] = "";
  if (check_runs_on(batch_spec(b), &a.o, &err)) {
    fprintf(stderr, "asyncfuzz run-batch: %s\n", err.msg);
    ex = EXIT_USAGE;
  }
  if (ex == 0 && asyncfuzz_rt_backend_info(a.o.backend)->gpu) {
    ex = cli_backend_start("run-batch", &a.o, dev, sizeof dev);
    check_gpu_stop(); /* the batch child opens the device itself */
  }
  Store *db = NULL;
  int64_t run_id = 0;
  if (ex == 0 && a.dbp &&
      (store_open(a.dbp, 1, &db, &err) ||
       batch_db_begin(b, db, a.scheds, a.seed, &a.o, dev, &run_id, &err))) {
    fprintf(stderr, "asyncfuzz run-batch: %s\n", err.msg);
    ex = err.rc == AF_EPARSE ? EXIT_INPUT : EXIT_INTERNAL;
  }
  BatchRunStats st = {0};
  if (ex == 0 && (rc = batch_run(b, s, ns, &a.o, &st, &err)) != 0) {
    fprintf(stderr, "asyncfuzz run-batch: %s\n", err.msg);
    ex = rc == AF_EPARSE ? EXIT_INPUT : EXIT_INTERNAL;
  }
  int failed = 0, nnew = 0, dev_errors = 0;
  if (ex == 0)
    ex = run_judge(b, &a, db, run_id, &failed, &dev_errors, &nnew);
  if (ex == 0) {
    int n = batch_ncases(b), nlow = batch_ncompiled(b);
    fprintf(stderr,
            "asyncfuzz run-batch: %d case(s), %d compiled, %d x %d run(s) in %.2f s on %s (%d at "
            "once); %d failing; %d child restart(s)\n",
            n, nlow, nlow, ns, st.seconds, dev[0] ? dev : "sim", st.children, failed, st.restarts);
    if (dev_errors > 0)
      fprintf(stderr,
              "asyncfuzz run-batch: %d case(s) had a run whose device failed a call on purpose "
              "(--fail-calls): not judged, not failures\n",
              dev_errors);
    if (db)
      fprintf(stderr, "asyncfuzz run-batch: %d new finding(s) in %s\n", nnew, a.dbp);
  }
  if (db && store_run_end(db, run_id, batch_ncases(b), batch_ncompiled(b), st.seconds, &err))
    fprintf(stderr, "asyncfuzz run-batch: %s\n", err.msg);
  store_close(db);
  if (batch_trace_dir(b)[0] && getenv("ASYNCFUZZ_KEEP_TMP"))
    fprintf(stderr, "asyncfuzz: kept %s (traces)\n", batch_trace_dir(b));
  batch_free(b);
  return ex ? ex : failed ? EXIT_FOUND : EXIT_OK;
}
