/*
 * batch.c: ahead-of-time batches, for GPU runners with no MLIR installed.
 *
 * `compile-batch` (a CPU machine with LLVM 22): renders the cases, lowers them with mlir-opt
 * (each case alone first, --split-input-file, so a rejected case costs only its own chunk),
 * lowers the runnable ones as one module, translates it to LLVM IR (mlir-translate), compiles
 * it (opt -O0, which lowers the async coroutines, then llc -O0, position independent: upstream
 * runs async code at -O0) and links a shared
 * object (cc -shared). The batch directory holds batch.so, the cases and manifest.json (the
 * lowering, its version and pipeline, each case's lowering outcome, the tool versions).
 *
 * `run-batch` (the GPU machine): loads batch.so in a child process, in which the kernel
 * modules load (the object's constructors call mgpuModuleLoadJIT) and each case's host code
 * @af_case_ID runs under every schedule between asyncfuzz_case_begin/end, which write one
 * binary trace per run. The parent watches the child with a watchdog: a crash or hang costs
 * the case it was on (a verdict) and a fresh child goes on from the next case. Every trace is
 * then judged as `check` judges one: observations, runtime errors, the checker.
 */
#include "cli.h"
#include "../check/check.h"

#include "../base/proc.h"
#include "../results/store.h"

#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BATCH_FORMAT "asyncfuzz-batch-1"

static int run_tool(const char *what, char *const argv[], const char *out, const char *errp,
                    double limit) {
  ProcResult r;
  AfErr err = {0};
  if (af_proc_run(argv, NULL, NULL, out, errp, limit, &r, &err)) {
    fprintf(stderr, "asyncfuzz compile-batch: %s: %s\n", what, err.msg);
    return EXIT_INTERNAL;
  }
  if (!(r.exited && r.code == 0)) {
    char *text = NULL;
    AfErr e2 = {0};
    af_read_file(errp, &text, NULL, &e2);
    fprintf(stderr, "asyncfuzz compile-batch: %s failed (%s %d):\n%s\n", what,
            r.timed_out  ? "timed out after"
            : r.signaled ? "signal"
                         : "status",
            r.timed_out  ? (int)limit
            : r.signaled ? r.sig
                         : r.code,
            text ? text : "");
    af_free(text);
    return EXIT_INTERNAL;
  }
  return 0;
}

/* The first line a tool prints for --version (llc prints an empty line first). */
static void tool_version(const char *exe, char *out, size_t n) {
  char dir[4096];
  AfErr err = {0};
  snprintf(out, n, "unknown");
  if (mlir_tmpdir(dir, sizeof dir, &err))
    return;
  char o[4200];
  snprintf(o, sizeof o, "%s/v", dir);
  char *argv[] = {(char *)exe, "--version", NULL};
  ProcResult r;
  char *text = NULL;
  if (af_proc_run(argv, NULL, NULL, o, NULL, 30, &r, &err) == 0 &&
      af_read_file(o, &text, NULL, &err) == 0) {
    const char *l = strstr(text, "LLVM version");
    while (l && l > text && l[-1] != '\n')
      l--; /* the whole line: "Debian LLVM version 22.1.8" */
    if (l) {
      size_t k = strcspn(l, "\n");
      snprintf(out, n, "%.*s", (int)k, l);
    }
  }
  af_free(text);
  af_rm_tree(dir);
}

int cmd_compile_batch(int argc, char **argv) {
  const char *out = NULL, *lowering = "mlir-opt", *pipeline = NULL;
  const char **paths = af_calloc((size_t)argc, sizeof *paths);
  int npaths = 0;
  long ngen = 0;
  uint64_t seed = 1;
  GenConfig gcfg;
  gen_config_default(&gcfg);
  if (paths == NULL)
    return EXIT_INTERNAL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (cli_is_help(a)) {
      printf("usage: asyncfuzz compile-batch (CASE.json... | --gen N [--seed S] [knobs]) -o DIR\n"
             "                               [--lowering mlir-opt[@VARIANT][:PATH]] [--pipeline "
             "P]\n"
             "Lowers and compiles cases ahead of time, on a machine with LLVM 22 (mlir-opt,\n"
             "mlir-translate, opt, llc; $ASYNCFUZZ_MLIR_TRANSLATE, $ASYNCFUZZ_LLVM_OPT and\n"
             "$ASYNCFUZZ_LLC override), into\n"
             "DIR/batch.so, for `asyncfuzz run-batch DIR` on a GPU runner without MLIR. --gen N\n"
             "generates N cases from seeds S, S+1, ... (swarm knobs, as campaigns do). Cases the\n"
             "lowering rejects or leaves unconverted are recorded in DIR/manifest.json with\n"
             "their verdicts; the others are compiled. Exit 0, or 4 when a tool fails.\n\n%s",
             cli_gen_knobs_help);
      af_free(paths);
      return 0;
    } else if ((strcmp(a, "-o") == 0 || strcmp(a, "--out") == 0) && val) {
      out = argv[++i];
    } else if (strcmp(a, "--lowering") == 0 && val) {
      lowering = argv[++i];
    } else if (strcmp(a, "--pipeline") == 0 && val) {
      pipeline = argv[++i];
    } else if (strcmp(a, "--gen") == 0) {
      if (cli_int(a, val, 1, 100000, &ngen)) {
        af_free(paths);
        return EXIT_USAGE;
      }
      i++;
    } else if (strcmp(a, "--seed") == 0) {
      if (cli_u64(a, val, &seed)) {
        af_free(paths);
        return EXIT_USAGE;
      }
      i++;
    } else if (a[0] == '-') {
      int r = cli_gen_knob(&gcfg, a, val);
      if (r <= 0) {
        if (r == 0)
          fprintf(stderr, "asyncfuzz compile-batch: unknown or incomplete option %s\n", a);
        af_free(paths);
        return EXIT_USAGE;
      }
      i++;
    } else {
      paths[npaths++] = a;
    }
  }
  if (out == NULL || (npaths == 0 && ngen == 0)) {
    fprintf(stderr, "asyncfuzz compile-batch: which cases, and -o DIR? (see --help)\n");
    af_free(paths);
    return EXIT_USAGE;
  }
  AfErr err = {0};
  LowerSpec spec;
  if (cli_parse_lowering("compile-batch", lowering, pipeline, 0, &spec)) {
    af_free(paths);
    return EXIT_USAGE;
  }
  if (spec.kind != LOWER_MLIR_OPT) {
    fprintf(stderr, "asyncfuzz compile-batch: batches are for the mlir-opt lowering (the builtin "
                    "lowering needs no compilation: use check --backend)\n");
    af_free(paths);
    return EXIT_USAGE;
  }
  char translate[4096], optx[4096], llc[4096], cc[4096];
  if (!mlir_find_tool(&spec, "mlir-translate", "ASYNCFUZZ_MLIR_TRANSLATE", translate,
                      sizeof translate) ||
      !mlir_find_tool(&spec, "opt", "ASYNCFUZZ_LLVM_OPT", optx, sizeof optx) ||
      !mlir_find_tool(&spec, "llc", "ASYNCFUZZ_LLC", llc, sizeof llc) ||
      !af_find_exe("cc", cc, sizeof cc)) {
    fprintf(
        stderr,
        "asyncfuzz compile-batch: mlir-translate, opt and llc of the same LLVM as %s, and cc, are "
        "needed (Debian: apt-get install mlir-22-tools llvm-22 gcc)\n",
        spec.opt);
    af_free(paths);
    return EXIT_INTERNAL;
  }
  int n = npaths + (int)ngen;
  GenCase *cases = af_calloc((size_t)n, sizeof *cases);
  const GenCase **cp = af_calloc((size_t)n, sizeof *cp);
  char **chunks = af_calloc((size_t)n, sizeof *chunks);
  MlirLowered *low = af_calloc((size_t)n, sizeof *low);
  int *ids = af_calloc((size_t)n, sizeof *ids);
  const GenCase **run = af_calloc((size_t)n, sizeof *run);
  int ex = cases && cp && chunks && low && ids && run ? 0 : EXIT_INTERNAL;
  for (int i = 0; i < npaths && ex == 0; i++)
    ex = cli_load_case(paths[i], &cases[i], 1);
  for (int i = 0; i < (int)ngen && ex == 0; i++) {
    GenConfig c;
    gen_config_swarm(&gcfg, seed + (uint64_t)i, &c);
    if (gen_generate(&cases[npaths + i], seed + (uint64_t)i, &c, &err)) {
      fprintf(stderr, "asyncfuzz compile-batch: %s\n", err.msg);
      ex = EXIT_USAGE;
    }
  }
  char dir[4096], p[4400], cdir[4200];
  if (ex == 0 && (mkdir(out, 0777) != 0 && errno != EEXIST)) {
    fprintf(stderr, "asyncfuzz compile-batch: cannot create %s: %s\n", out, strerror(errno));
    ex = EXIT_INTERNAL;
  }
  snprintf(cdir, sizeof cdir, "%s/cases", out);
  if (ex == 0 && mkdir(cdir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "asyncfuzz compile-batch: cannot create %s: %s\n", cdir, strerror(errno));
    ex = EXIT_INTERNAL;
  }
  if (ex == 0 && mlir_tmpdir(dir, sizeof dir, &err)) {
    fprintf(stderr, "asyncfuzz compile-batch: %s\n", err.msg);
    ex = EXIT_INTERNAL;
  }
  if (ex) {
    for (int i = 0; i < n && cases; i++)
      gen_case_free(&cases[i]);
    af_free(cases), af_free(cp), af_free(chunks), af_free(low), af_free(ids), af_free(run);
    af_free(paths);
    return ex;
  }
  fprintf(stderr, "asyncfuzz compile-batch: lowering %d case(s) with %s (%s)\n", n, spec.name,
          spec.version);
  for (int i = 0; i < n && ex == 0; i++) {
    int zero = 0;
    cp[i] = &cases[i];
    chunks[i] = gen_render_mlir_batch(&cp[i], &zero, 1, 1);
    snprintf(p, sizeof p, "%s/case-%d.json", cdir, i);
    if (chunks[i] == NULL || gen_case_save(&cases[i], p, &err)) {
      fprintf(stderr, "asyncfuzz compile-batch: %s\n", chunks[i] ? err.msg : "out of memory");
      ex = EXIT_INTERNAL;
    }
  }
  if (ex == 0 && mlir_lower_batch(&spec, dir, chunks, n, low, &err)) {
    fprintf(stderr, "asyncfuzz compile-batch: %s\n", err.msg);
    ex = EXIT_INTERNAL;
  }
  int nrun = 0;
  for (int i = 0; i < n && ex == 0; i++)
    if (low[i].outcome == MLIR_OK) {
      ids[nrun] = i;
      run[nrun++] = cp[i];
    }
  char in[4200], lowered[4200], ll[4200], bc[4200], obj[4200], so[4200], errp[4200];
  snprintf(in, sizeof in, "%s/batch.mlir", dir);
  snprintf(lowered, sizeof lowered, "%s/batch.lowered.mlir", dir);
  snprintf(ll, sizeof ll, "%s/batch.ll", dir);
  snprintf(bc, sizeof bc, "%s/batch.bc", dir);
  snprintf(obj, sizeof obj, "%s/batch.o", dir);
  snprintf(so, sizeof so, "%s/batch.so", out);
  snprintf(errp, sizeof errp, "%s/tool.err", dir);
  double limit = spec.timeout + 2.0 * (nrun + 1);
  if (ex == 0 && nrun > 0) {
    char *text = gen_render_mlir_batch(run, ids, nrun, 1);
    ProcResult r;
    if (text == NULL || af_write_file(in, text, strlen(text), &err) ||
        mlir_lower_file(&spec, in, lowered, errp, limit, &r, &err)) {
      fprintf(stderr, "asyncfuzz compile-batch: %s\n", text ? err.msg : "out of memory");
      ex = EXIT_INTERNAL;
    } else if (!(r.exited && r.code == 0)) {
      fprintf(stderr, "asyncfuzz compile-batch: mlir-opt failed on the batch of runnable cases\n");
      ex = EXIT_INTERNAL;
    }
    af_free(text);
  }
  if (ex == 0 && nrun > 0) {
    char *targv[] = {translate, "--mlir-to-llvmir", lowered, "-o", ll, NULL};
    ex = run_tool("mlir-translate", targv, NULL, errp, limit);
  }
  if (ex == 0 && nrun > 0) { /* the batch's @main would shadow nothing, but name it plainly */
    char *text = NULL;
    if (af_read_file(ll, &text, NULL, &err) == 0) {
      char *m = strstr(text, "define void @main(");
      AfBuf b;
      af_buf_init(&b);
      if (m) {
        af_buf_printf(&b, "%.*sdefine void @asyncfuzz_batch_main(%s", (int)(m - text), text,
                      m + strlen("define void @main("));
      }
      if (m && !b.oom && af_write_file(ll, b.p, strlen(b.p), &err))
        ex = EXIT_INTERNAL;
      af_buf_free(&b);
    }
    af_free(text);
  }
  if (ex == 0 && nrun > 0) { /* opt -O0 lowers the async coroutines (llc alone cannot) */
    char *oargv[] = {optx, "-O0", ll, "-o", bc, NULL};
    ex = run_tool("opt", oargv, NULL, errp, limit);
  }
  if (ex == 0 && nrun > 0) {
    char *largv[] = {llc, "-O0", "-filetype=obj", "-relocation-model=pic", bc, "-o", obj, NULL};
    ex = run_tool("llc", largv, NULL, errp, limit);
  }
  if (ex == 0 && nrun > 0) {
    char *cargv[] = {cc, "-shared", "-o", so, obj, NULL};
    ex = run_tool("cc -shared", cargv, NULL, errp, limit);
  }
  /* the manifest */
  if (ex == 0) {
    char tv[160], lv[160];
    tool_version(translate, tv, sizeof tv);
    tool_version(llc, lv, sizeof lv);
    AfBuf b;
    af_buf_init(&b);
    af_buf_printf(&b, "{\n  \"format\": \"%s\",\n  \"asyncfuzz\": \"%s\",\n  \"lowering\": ",
                  BATCH_FORMAT, ASYNCFUZZ_VERSION);
    af_buf_json_str(&b, spec.name);
    af_buf_puts(&b, ",\n  \"lowering_arg\": ");
    af_buf_json_str(&b, spec.arg);
    af_buf_puts(&b, ",\n  \"lowering_version\": ");
    af_buf_json_str(&b, spec.version);
    af_buf_puts(&b, ",\n  \"pipeline\": ");
    af_buf_json_str(&b, spec.pipeline);
    af_buf_puts(&b, ",\n  \"mlir_translate\": ");
    af_buf_json_str(&b, tv);
    af_buf_puts(&b, ",\n  \"llc\": ");
    af_buf_json_str(&b, lv);
    af_buf_printf(&b, ",\n  \"object\": %s,\n  \"cases\": [", nrun > 0 ? "\"batch.so\"" : "null");
    for (int i = 0; i < n; i++) {
      af_buf_printf(&b, "%s\n    {\"id\": %d, \"file\": \"cases/case-%d.json\", \"seed\": %llu, ",
                    i ? "," : "", i, i, (unsigned long long)cases[i].seed);
      if (i < npaths) {
        af_buf_puts(&b, "\"source\": ");
        af_buf_json_str(&b, paths[i]);
        af_buf_puts(&b, ", ");
      }
      if (low[i].outcome == MLIR_OK) {
        af_buf_puts(&b, "\"lowered\": true}");
      } else {
        Verdict v;
        check_lowering_verdict(&spec, &low[i], &v);
        af_buf_printf(&b, "\"lowered\": false, \"verdict\": \"%s\", \"signature\": ",
                      oracle_verdict_name(v.cls));
        af_buf_json_str(&b, v.signature);
        af_buf_puts(&b, ", \"detail\": ");
        af_buf_json_str(&b, v.detail);
        af_buf_puts(&b, "}");
      }
    }
    af_buf_puts(&b, "\n  ]\n}\n");
    snprintf(p, sizeof p, "%s/manifest.json", out);
    if (b.oom || af_write_file(p, b.p, strlen(b.p), &err)) {
      fprintf(stderr, "asyncfuzz compile-batch: %s\n", b.oom ? "out of memory" : err.msg);
      ex = EXIT_INTERNAL;
    }
    af_buf_free(&b);
  }
  if (ex == 0)
    fprintf(stderr,
            "asyncfuzz compile-batch: %d of %d case(s) compiled into %s; %d kept their "
            "lowering verdicts (manifest.json)\n",
            nrun, n, nrun ? so : "(nothing)", n - nrun);
  if (getenv("ASYNCFUZZ_KEEP_TMP"))
    fprintf(stderr, "asyncfuzz: kept %s\n", dir);
  else
    af_rm_tree(dir);
  for (int i = 0; i < n; i++) {
    gen_case_free(&cases[i]);
    af_free(chunks[i]);
  }
  mlir_lowered_free(low, n);
  af_free(cases), af_free(cp), af_free(chunks), af_free(low), af_free(ids), af_free(run);
  af_free(paths);
  return ex;
}

/* ---- run-batch ---- */

typedef struct BatchCase {
  int id, lowered;
  char file[4200];
  GenCase c;
  Verdict lv; /* the lowering verdict of a case not lowered */
} BatchCase;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* The child: loads the object (its constructors load the kernel modules), runs cases from
 * `from` on, and writes each finished case's index to fd. */
static void batch_child(const char *so, const BatchCase *bc, int n, int from, int ns, int fd) {
  dup2(2, 1); /* whatever the compiled code prints must not mix with the verdicts */
  void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "asyncfuzz run-batch: cannot load %s: %s\n", so, dlerror());
    _exit(3);
  }
  for (int i = from; i < n; i++) {
    if (!bc[i].lowered)
      continue;
    char name[32];
    snprintf(name, sizeof name, "af_case_%d", bc[i].id);
    void (*fn)(void) = (void (*)(void))dlsym(h, name);
    if (fn == NULL) {
      fprintf(stderr, "asyncfuzz run-batch: %s has no %s\n", so, name);
      _exit(3);
    }
    for (int k = 0; k < ns; k++) {
      asyncfuzz_case_begin(bc[i].id, k);
      fn();
      asyncfuzz_case_end(bc[i].id, k);
    }
    int32_t done = i;
    if (write(fd, &done, sizeof done) != sizeof done)
      _exit(1);
  }
  _exit(0);
}

/* One failing case of a batch in the database: its first failing run, with the case, its
 * rendering, the lowering's version and pipeline, and the command that replays it (`check` of
 * the case file, on a machine with the lowering's mlir-opt). */
static int record_failure(Store *db, int64_t run, const LowerSpec *spec, const CheckOpts *o,
                          const BatchCase *bc, const Verdict *v, const Schedule *s, int *nnew,
                          AfErr *err) {
  char sched[64], replay[6000];
  check_schedule_str(s, sched, sizeof sched);
  snprintf(replay, sizeof replay, "asyncfuzz check %s --lowering %s --schedules %s%s", bc->file,
           spec->arg, sched, check_backend_args(o));
  char *json = gen_case_to_json(&bc->c);
  char *mlir = gen_render_mlir(&bc->c);
  StoreOccurrence oc = {0};
  oc.signature = v->signature;
  oc.cls = oracle_verdict_name(v->cls);
  oc.lowering = spec->name;
  oc.detail = v->detail;
  oc.lowering_version = spec->version;
  oc.pipeline = spec->pipeline;
  oc.backend = o->backend == RT_BACKEND_CUDA ? (o->raw_handles ? "cuda:raw" : "cuda") : "sim";
  oc.schedule = sched;
  oc.case_seed = bc->c.seed;
  oc.case_ops = bc->c.nops;
  oc.case_json = json;
  oc.case_mlir = mlir;
  oc.replay = replay;
  int is_new = 0, status = 0;
  int rc = json && mlir ? store_record(db, run, &oc, &is_new, &status, err)
                        : af_err_set(err, AF_ENOMEM, "out of memory");
  *nnew += is_new;
  af_free(json);
  af_free(mlir);
  return rc;
}

int cmd_run_batch(int argc, char **argv) {
  const char *dir = NULL, *scheds = "eager,lazy,random:4,pct:4", *dbp = NULL;
  uint64_t seed = 0;
  int json = 0;
  CheckOpts o = {0};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    int bo;
    if (cli_is_help(a)) {
      printf("usage: asyncfuzz run-batch DIR [--backend B] [--spin N|auto] [--schedules LIST]\n"
             "                          [--seed N] [--json] [--memfree-sync] [--no-checker]\n"
             "                          [--db FILE]\n"
             "Runs a batch made by `asyncfuzz compile-batch` (no MLIR needed here): every\n"
             "compiled case under each schedule, in a child process watched by a watchdog\n"
             "($ASYNCFUZZ_GPU_TIMEOUT s per case, default 60; a crash or hang gives that case a\n"
             "verdict and a fresh child goes on). Each run is judged as `check` judges it; cases\n"
             "the lowering did not lower keep their verdicts from the manifest. Output and exit\n"
             "status as `check`. --db records the run (device, tools from the manifest) and each\n"
             "failing case's first failing run in the regression database, as campaigns do.\n\n%s",
             cli_backend_help);
      return 0;
    } else if (strcmp(a, "--schedules") == 0 && val) {
      scheds = argv[++i];
    } else if (strcmp(a, "--seed") == 0) {
      if (cli_u64(a, val, &seed))
        return EXIT_USAGE;
      i++;
    } else if (strcmp(a, "--json") == 0) {
      json = 1;
    } else if (strcmp(a, "--db") == 0 && val) {
      dbp = argv[++i];
    } else if (strcmp(a, "--memfree-sync") == 0) {
      o.memfree_sync = 1;
    } else if (strcmp(a, "--no-checker") == 0) {
      o.no_checker = 1;
    } else if ((bo = cli_backend_opt(&o, a, val)) != 0) {
      if (bo < 0)
        return EXIT_USAGE;
      i++;
    } else if (a[0] == '-' || dir) {
      fprintf(stderr, "asyncfuzz run-batch: unknown or incomplete option %s (see --help)\n", a);
      return EXIT_USAGE;
    } else {
      dir = a;
    }
  }
  if (dir == NULL) {
    fprintf(stderr, "asyncfuzz run-batch: which batch directory? (see --help)\n");
    return EXIT_USAGE;
  }
  AfErr err = {0};
  Schedule s[CHECK_MAX_SCHED];
  int ns = 0;
  if (check_parse_schedules(scheds, seed, s, CHECK_MAX_SCHED, &ns, &err)) {
    fprintf(stderr, "asyncfuzz run-batch: %s\n", err.msg);
    return EXIT_USAGE;
  }
  char mpath[4200], *text = NULL;
  snprintf(mpath, sizeof mpath, "%s/manifest.json", dir);
  if (af_read_file(mpath, &text, NULL, &err)) {
    fprintf(stderr, "asyncfuzz run-batch: %s (is %s a batch of compile-batch?)\n", err.msg, dir);
    return EXIT_INPUT;
  }
  cJSON *m = cJSON_Parse(text);
  af_free(text);
  const cJSON *fmtj = cJSON_GetObjectItemCaseSensitive(m, "format");
  const cJSON *jc = cJSON_GetObjectItemCaseSensitive(m, "cases");
  if (m == NULL || !cJSON_IsString(fmtj) || strcmp(fmtj->valuestring, BATCH_FORMAT) != 0 ||
      !cJSON_IsArray(jc)) {
    fprintf(stderr, "asyncfuzz run-batch: %s is not a manifest of this asyncfuzz (%s)\n", mpath,
            BATCH_FORMAT);
    cJSON_Delete(m);
    return EXIT_INPUT;
  }
  /* the lowering as recorded (its name, version and pipeline; its tools need not be here) */
  LowerSpec spec;
  memset(&spec, 0, sizeof spec);
  spec.kind = LOWER_MLIR_OPT;
  const char *fields[][2] = {{"lowering", spec.name},
                             {"lowering_arg", spec.arg},
                             {"lowering_version", spec.version},
                             {"pipeline", spec.pipeline}};
  size_t sizes[] = {sizeof spec.name, sizeof spec.arg, sizeof spec.version, sizeof spec.pipeline};
  for (int f = 0; f < 4; f++) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(m, fields[f][0]);
    snprintf((char *)fields[f][1], sizes[f], "%s", cJSON_IsString(j) ? j->valuestring : "");
  }
  int n = cJSON_GetArraySize(jc);
  BatchCase *bc = af_calloc((size_t)(n > 0 ? n : 1), sizeof *bc);
  int ex = bc ? 0 : EXIT_INTERNAL, nlow = 0;
  for (int i = 0; i < n && ex == 0; i++) {
    const cJSON *e = cJSON_GetArrayItem(jc, i);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(e, "file");
    const cJSON *lowered = cJSON_GetObjectItemCaseSensitive(e, "lowered");
    if (!cJSON_IsNumber(id) || !cJSON_IsString(file) || !cJSON_IsBool(lowered)) {
      fprintf(stderr, "asyncfuzz run-batch: %s: case %d is malformed\n", mpath, i);
      ex = EXIT_INPUT;
      break;
    }
    bc[i].id = id->valueint;
    bc[i].lowered = cJSON_IsTrue(lowered);
    nlow += bc[i].lowered;
    snprintf(bc[i].file, sizeof bc[i].file, "%s/%s", dir, file->valuestring);
    ex = cli_load_case(bc[i].file, &bc[i].c, 1);
    if (!bc[i].lowered) {
      const cJSON *vj = cJSON_GetObjectItemCaseSensitive(e, "verdict");
      const cJSON *sj = cJSON_GetObjectItemCaseSensitive(e, "signature");
      const cJSON *dj = cJSON_GetObjectItemCaseSensitive(e, "detail");
      Verdict *v = &bc[i].lv;
      v->cls = VERDICT_LOWERING_REJECTED;
      for (int c = 0; c < VERDICT__COUNT && cJSON_IsString(vj); c++)
        if (strcmp(oracle_verdict_name(c), vj->valuestring) == 0)
          v->cls = c;
      v->hb_first = v->error_seq = -1;
      snprintf(v->signature, sizeof v->signature, "%s", cJSON_IsString(sj) ? sj->valuestring : "");
      snprintf(v->detail, sizeof v->detail, "%s", cJSON_IsString(dj) ? dj->valuestring : "");
    }
  }
  char tools[4096] = "";
  {
    const cJSON *tv = cJSON_GetObjectItemCaseSensitive(m, "mlir_translate");
    const cJSON *lv = cJSON_GetObjectItemCaseSensitive(m, "llc");
    AfBuf tb;
    af_buf_init(&tb);
    af_buf_puts(&tb, "[{\"lowering\": ");
    af_buf_json_str(&tb, spec.name);
    af_buf_puts(&tb, ", \"version\": ");
    af_buf_json_str(&tb, spec.version);
    af_buf_puts(&tb, ", \"pipeline\": ");
    af_buf_json_str(&tb, spec.pipeline);
    af_buf_puts(&tb, ", \"mlir_translate\": ");
    af_buf_json_str(&tb, cJSON_IsString(tv) ? tv->valuestring : "");
    af_buf_puts(&tb, ", \"llc\": ");
    af_buf_json_str(&tb, cJSON_IsString(lv) ? lv->valuestring : "");
    af_buf_puts(&tb, ", \"batch\": true}]");
    snprintf(tools, sizeof tools, "%s", tb.p && !tb.oom ? tb.p : "[]");
    af_buf_free(&tb);
  }
  cJSON_Delete(m);
  char dev[400] = "";
  if (ex == 0 && o.backend == RT_BACKEND_CUDA) {
    ex = cli_backend_start("run-batch", &o, dev, sizeof dev);
    check_gpu_stop(); /* the batch child opens the device itself */
  }
  Store *db = NULL;
  int64_t run_id = 0;
  if (ex == 0 && dbp) {
    StoreRun run;
    store_run_init(&run);
    snprintf(run.tools, sizeof run.tools, "%s", tools);
    snprintf(run.device, sizeof run.device, "%s",
             dev[0] ? dev : "sim (deterministic CPU simulator)");
    snprintf(run.config, sizeof run.config,
             "{\"batch\": true, \"schedules\": \"%s\", \"seed\": %llu, \"memfree_sync\": %s, "
             "\"checker\": %s, \"backend\": \"%s\", \"spin\": %d}",
             scheds, (unsigned long long)seed, o.memfree_sync ? "true" : "false",
             o.no_checker ? "false" : "true",
             o.backend == RT_BACKEND_CUDA ? (o.raw_handles ? "cuda:raw" : "cuda") : "sim", o.spin);
    if (store_open(dbp, 1, &db, &err) || store_run_begin(db, &run, &run_id, &err)) {
      fprintf(stderr, "asyncfuzz run-batch: %s\n", err.msg);
      ex = err.rc == AF_EPARSE ? EXIT_INPUT : EXIT_INTERNAL;
    }
  }
  char tdir[4096], so[4200];
  snprintf(so, sizeof so, "%s/batch.so", dir);
  if (ex == 0 && mlir_tmpdir(tdir, sizeof tdir, &err)) {
    fprintf(stderr, "asyncfuzz run-batch: %s\n", err.msg);
    ex = EXIT_INTERNAL;
  }
  if (ex) {
    for (int i = 0; i < n && bc; i++)
      gen_case_free(&bc[i].c);
    af_free(bc);
    store_close(db);
    return ex;
  }
  /* the runtime's settings, as mlir-runner gets them */
  char sv[4200] = "";
  size_t k = 0;
  for (int j = 0; j < ns && k < sizeof sv; j++)
    k += (size_t)snprintf(sv + k, sizeof sv - k, "%s%s@%llu", j ? "," : "",
                          asyncfuzz_rt_policy_name(s[j].policy), (unsigned long long)s[j].seed);
  setenv("ASYNCFUZZ_SCHEDULES", sv, 1);
  setenv("ASYNCFUZZ_TRACE_DIR", tdir, 1);
  setenv("ASYNCFUZZ_MEMFREE_SYNC", o.memfree_sync ? "1" : "0", 1);
  setenv("ASYNCFUZZ_BACKEND",
         o.backend == RT_BACKEND_CUDA ? (o.raw_handles ? "cuda:raw" : "cuda") : "sim", 1);
  char spin[32];
  snprintf(spin, sizeof spin, "%d", o.spin > 0 ? o.spin : 0);
  setenv("ASYNCFUZZ_SPIN", spin, 1);
  unsetenv("ASYNCFUZZ_TRACE");
  unsetenv("ASYNCFUZZ_TRACE_BIN");
  const char *t = getenv("ASYNCFUZZ_GPU_TIMEOUT");
  double limit = t && atof(t) > 0 ? atof(t) : 60;
  /* fault[i]: the child died (1) or hung (2) on case i, why[i] says how */
  int *fault = af_calloc((size_t)(n > 0 ? n : 1), sizeof *fault);
  char(*why)[64] = af_calloc((size_t)(n > 0 ? n : 1), sizeof *why);
  int from = 0, restarts = 0;
  double t0 = now_s();
  while (ex == 0 && nlow > 0 && from < n && fault && why) {
    int pfd[2];
    if (pipe(pfd)) {
      fprintf(stderr, "asyncfuzz run-batch: pipe: %s\n", strerror(errno));
      ex = EXIT_INTERNAL;
      break;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
      close(pfd[0]);
      batch_child(so, bc, n, from, ns, pfd[1]);
    }
    close(pfd[1]);
    if (pid < 0) {
      close(pfd[0]);
      fprintf(stderr, "asyncfuzz run-batch: fork: %s\n", strerror(errno));
      ex = EXIT_INTERNAL;
      break;
    }
    int next = from, hung = 0;
    for (;;) {
      struct pollfd pf = {.fd = pfd[0], .events = POLLIN};
      int pr = poll(&pf, 1, (int)(limit * 1000));
      if (pr < 0 && errno == EINTR)
        continue;
      if (pr == 0) {
        hung = 1;
        kill(pid, SIGKILL);
        break;
      }
      int32_t done;
      if (read(pfd[0], &done, sizeof done) != sizeof done)
        break;
      next = done + 1;
    }
    close(pfd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
      ;
    while (next < n && !bc[next].lowered)
      next++;
    if (next >= n)
      break;
    if (!hung && WIFEXITED(st) && WEXITSTATUS(st) == 3) {
      ex = EXIT_INPUT; /* the object could not be loaded: printed by the child */
      break;
    }
    /* the child stopped on case `next`: it gets the verdict, a fresh child goes on */
    fault[next] = hung ? 2 : 1;
    if (hung)
      snprintf(why[next], sizeof why[next], "hang");
    else if (WIFSIGNALED(st))
      snprintf(why[next], sizeof why[next], "signal-%d", WTERMSIG(st));
    else
      snprintf(why[next], sizeof why[next], "exit-%d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    from = next + 1;
    restarts++;
  }
  double secs = now_s() - t0;
  /* judge every run */
  int failed = 0, nnew = 0;
  AfBuf b;
  af_buf_init(&b);
  CheckResult *res = af_calloc(1, sizeof *res);
  for (int i = 0; i < n && ex == 0 && res; i++) {
    memset(res, 0, sizeof *res);
    res->first_fail = -1;
    OracleExpected *e = NULL;
    if (bc[i].lowered && !fault[i] && oracle_expect(&bc[i].c, &e, &err)) {
      fprintf(stderr, "asyncfuzz run-batch: %s\n", err.msg);
      ex = EXIT_INTERNAL;
      break;
    }
    for (int j = 0; j < ns; j++) {
      Verdict v;
      memset(&v, 0, sizeof v);
      v.hb_first = v.error_seq = -1;
      int found = 1;
      if (!bc[i].lowered) {
        v = bc[i].lv;
      } else if (fault[i]) {
        v.cls = fault[i] == 2 ? VERDICT_TIMEOUT : VERDICT_RUNTIME_ERROR;
        v.rt_failed = 1;
        snprintf(v.signature, sizeof v.signature, "%s|%s|%s", spec.name,
                 fault[i] == 2 ? "timeout|device" : "runtime_error|device-process", why[i]);
        snprintf(v.detail, sizeof v.detail,
                 "the batch's child process stopped on this case (%s); a fresh one went on",
                 why[i]);
      } else {
        char tp[4300];
        snprintf(tp, sizeof tp, "%s/case-%d-%d.bin", tdir, bc[i].id, j);
        if (check_judge_trace(tp, &bc[i].c, &spec, e, &o, &v, &found, &err)) {
          fprintf(stderr, "asyncfuzz run-batch: %s\n", err.msg);
          ex = EXIT_INTERNAL;
          break;
        }
        if (!found) {
          v.cls = VERDICT_RUNTIME_ERROR;
          v.rt_failed = 1;
          snprintf(v.signature, sizeof v.signature, "%s|runtime_error|no-trace", spec.name);
          snprintf(v.detail, sizeof v.detail, "the run left no trace");
        }
      }
      res->sched[j] = s[j];
      res->verdict[j] = v;
      res->nsched = j + 1;
      if (v.cls != VERDICT_PASS && res->first_fail < 0)
        res->first_fail = j;
      if (!bc[i].lowered)
        break; /* one verdict: nothing ran */
    }
    oracle_expected_free(e);
    failed += res->first_fail >= 0;
    if (db && res->first_fail >= 0 &&
        record_failure(db, run_id, &spec, &o, &bc[i], &res->verdict[res->first_fail],
                       &res->sched[res->first_fail], &nnew, &err)) {
      fprintf(stderr, "asyncfuzz run-batch: %s\n", err.msg);
      ex = EXIT_INTERNAL;
    }
    if (json)
      cli_check_json(&b, bc[i].file, &spec, res);
    else
      cli_check_text(&b, bc[i].file, &spec, res, 0, &o);
  }
  if (ex == 0) {
    fputs(b.p ? b.p : "", stdout);
    fprintf(stderr,
            "asyncfuzz run-batch: %d case(s), %d compiled, %d x %d run(s) in %.2f s on %s; %d "
            "failing; %d child restart(s)\n",
            n, nlow, nlow, ns, secs, dev[0] ? dev : "sim", failed, restarts);
    if (db)
      fprintf(stderr, "asyncfuzz run-batch: %d new finding(s) in %s\n", nnew, dbp);
  }
  if (db && store_run_end(db, run_id, n, secs, &err))
    fprintf(stderr, "asyncfuzz run-batch: %s\n", err.msg);
  store_close(db);
  af_buf_free(&b);
  af_free(res);
  af_free(fault);
  af_free(why);
  if (getenv("ASYNCFUZZ_KEEP_TMP"))
    fprintf(stderr, "asyncfuzz: kept %s (traces)\n", tdir);
  else
    af_rm_tree(tdir);
  for (int i = 0; i < n; i++)
    gen_case_free(&bc[i].c);
  af_free(bc);
  return ex ? ex : failed ? EXIT_FOUND : EXIT_OK;
}
