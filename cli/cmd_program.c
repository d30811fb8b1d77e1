/*
 * cmd_program.c: check-mlir, a user's own program through mlir-opt's lowering and mlir-runner,
 * under several schedules, each run judged (check/program.c; docs/check-mlir.md).
 */
#include "cli.h"
#include "../check/check.h"
#include "../lower/mlir.h"

#include <stdio.h>
#include <string.h>

static const char help[] =
    "usage: asyncfuzz check-mlir FILE.mlir... [--lowering SPEC]... [--matrix AXIS=V,...]...\n"
    "                  [--pipeline P | --lowered] [--schedules LIST] [--seed N]\n"
    "                  [--entry NAME] [--entry-result TYPE] [--shared-libs LIB,...]\n"
    "                  [--runner-arg ARG]... [--leaks error|warn|off] [--memfree-sync]\n"
    "                  [--abi cuda|rocm] [--timeout S] [--json] [--db FILE]\n"
    "Checks a program of your own (gpu.launch or gpu.launch_func kernels, gpu.wait async,\n"
    "gpu.memcpy async, async.execute regions, printMemref* results): mlir-opt lowers it\n"
    "(gpu.launch bodies outlined first), mlir-runner runs it under each schedule against\n"
    "asyncfuzz's runtime library on the simulator, and every run is judged: misused handles,\n"
    "races on buffers (kernels read and write what their bodies load and store), host reads\n"
    "(printMemref*) not ordered after the copies into what they read, leaks, and outputs\n"
    "that differ between schedules. Prints a verdict per run and the findings of each\n"
    "configuration, named as campaigns name theirs (docs/check-mlir.md).\n"
    "  --lowering SPEC   an mlir-opt spec, as `check` takes (default mlir-opt); repeat for more\n"
    "  --matrix AXIS=V,...  configurations of the matrix instead (builds, pipelines, targets,\n"
    "                    jit; `--matrix all`: the whole default matrix)\n"
    "  --pipeline P      your own --pass-pipeline;  --lowered: FILE is lowered already\n"
    "  --schedules LIST  as `check` (default %s)\n"
    "  --entry NAME, --entry-result TYPE  the entry point (default main, void)\n"
    "  --shared-libs L   more libraries for mlir-runner; --runner-arg ARG: more options\n"
    "  --leaks W         what a leaked stream, event or buffer is (default warn)\n"
    "  --db FILE         record the findings in a regression database\n"
    "Exit 0 when every run passes (warnings allowed), 1 when any fails, 2 usage, 3 bad input.\n";

static void help_print(FILE *f) {
  fprintf(f, help, "eager,lazy,random:4,pct:4");
}

typedef struct Args {
  MlirMatrixAxes axes;
  int any_axis, json;
  CliStrs low, rargs;
  const char *pipeline, *scheds, *leaks, *db;
  uint64_t seed;
  ProgOpts po;
} Args;

static int opt_matrix(void *dst, const char *val) {
  Args *a = dst;
  AfErr err = {0};
  a->any_axis = 1;
  if (strcmp(val, "all") != 0 && mlir_matrix_axis(&a->axes, val, &err)) {
    fprintf(stderr, "asyncfuzz check-mlir: %s\n", err.msg);
    return EXIT_USAGE;
  }
  return 0;
}

/* The configurations: the matrix's, or each --lowering's. 0 or an exit code (printed). */
static int configurations(Args *a, LowerSpec **specs, int *n) {
  AfErr err = {0};
  char notes[1024];
  int rc = check_program_specs(a->low.v, a->low.n, a->pipeline, a->any_axis ? &a->axes : NULL,
                               specs, n, notes, sizeof notes, &err);
  if (rc == 0 && notes[0])
    fprintf(stderr, "asyncfuzz check-mlir: matrix: %s\n", notes);
  if (rc)
    fprintf(stderr, "asyncfuzz check-mlir: %s\n", err.msg);
  return rc ? cli_exit_for(rc) : 0;
}

/* One program through every configuration: printed, and recorded with --db. */
static int one_file(const char *path, const Args *a, const LowerSpec *specs, int n,
                    const Schedule *s, int ns, int *failed) {
  ProgResult *res = af_calloc((size_t)n, sizeof *res);
  if (res == NULL)
    return EXIT_INTERNAL;
  int ex = 0, done = 0;
  AfErr err = {0};
  for (; done < n && ex == 0; done++) {
    if (n > 1)
      fprintf(stderr, "asyncfuzz check-mlir: %s: %s (%d of %d)\n", path, specs[done].name, done + 1,
              n);
    int rc = check_program(path, &specs[done], s, ns, &a->po, &res[done], &err);
    if (rc) {
      fprintf(stderr, "asyncfuzz check-mlir: %s: %s\n", path, err.msg);
      ex = rc == AF_EIO || rc == AF_EPARSE ? EXIT_INPUT : cli_exit_for(rc);
      break;
    }
    AfBuf b;
    af_buf_init(&b);
    *failed |= check_format_program(&b, path, &specs[done], &res[done], a->json);
    if (res[done].dir[0])
      fprintf(stderr, "asyncfuzz check-mlir: kept %s\n", res[done].dir);
    ex = b.oom ? EXIT_INTERNAL : cli_write_text(NULL, b.p);
    af_buf_free(&b);
  }
  int nnew = 0;
  char extra[200];
  snprintf(extra, sizeof extra, "%s%s%s", a->leaks ? " --leaks " : "", a->leaks ? a->leaks : "",
           a->po.lowered ? " --lowered" : "");
  if (ex == 0 && a->db && check_program_record(a->db, path, specs, res, n, extra, &nnew, &err)) {
    fprintf(stderr, "asyncfuzz check-mlir: %s: %s\n", a->db, err.msg);
    ex = cli_exit_for(err.rc);
  } else if (ex == 0 && a->db) {
    fprintf(stderr, "asyncfuzz check-mlir: %s: %d new finding(s)\n", a->db, nnew);
  }
  for (int i = 0; i < done; i++)
    check_program_free(&res[i]);
  af_free(res);
  return ex;
}

int cmd_check_mlir(int argc, char **argv) {
  Args a;
  memset(&a, 0, sizeof a);
  a.scheds = "eager,lazy,random:4,pct:4";
  const char *paths[64], *entry_result = NULL;
  int npaths = 0;
  long timeout = 60;
  CheckOpts o = {0};
  const CliOpt opts[] = {CLI_OPT_STRS("--lowering", &a.low),
                         CLI_OPT_FN("--matrix", &a, opt_matrix),
                         CLI_OPT_STR("--pipeline", &a.pipeline),
                         CLI_OPT_FLAG("--lowered", &a.po.lowered, 1),
                         CLI_OPT_STR("--schedules", &a.scheds),
                         CLI_OPT_U64("--seed", &a.seed),
                         CLI_OPT_STR("--entry", &a.po.entry),
                         CLI_OPT_STR("--entry-result", &entry_result),
                         CLI_OPT_STR("--shared-libs", &a.po.libs),
                         CLI_OPT_STRS("--runner-arg", &a.rargs),
                         CLI_OPT_STR("--leaks", &a.leaks),
                         CLI_OPT_FLAG("--memfree-sync", &a.po.memfree_sync, 1),
                         CLI_OPT_LONG("--timeout", &timeout, 1, 86400),
                         CLI_OPT_FLAG("--json", &a.json, 1),
                         CLI_OPT_STR("--db", &a.db),
                         CLI_OPT_FN("--abi", &o, cli_opt_abi),
                         CLI_OPT_END};
  int ex = cli_parse("check-mlir", argc, argv, opts, NULL, NULL, paths, 64, &npaths, help_print);
  if (ex)
    return ex < 0 ? 0 : ex;
  a.po.leaks = !a.leaks || strcmp(a.leaks, "warn") == 0 ? PROG_LEAKS_WARN
               : strcmp(a.leaks, "error") == 0          ? PROG_LEAKS_ERROR
               : strcmp(a.leaks, "off") == 0            ? PROG_LEAKS_OFF
                                                        : -1;
  if (npaths == 0 || a.po.leaks < 0 || (a.pipeline && a.po.lowered)) {
    fprintf(stderr, "asyncfuzz check-mlir: %s (see --help)\n",
            npaths == 0  ? "which program?"
            : a.pipeline ? "--pipeline and --lowered: the file is lowered already, or not"
                         : "--leaks takes error, warn or off");
    return EXIT_USAGE;
  }
  a.po.entry_result = entry_result;
  a.po.abi = o.abi;
  a.po.timeout = (double)timeout;
  for (int i = 0; i < a.rargs.n; i++)
    a.po.runner_args[a.po.nrunner_args++] = a.rargs.v[i];
  Schedule s[CHECK_MAX_SCHED];
  int ns = 0, n = 0, failed = 0;
  AfErr err = {0};
  if (check_parse_schedules(a.scheds, a.seed, s, CHECK_MAX_SCHED, &ns, &err)) {
    fprintf(stderr, "asyncfuzz check-mlir: %s\n", err.msg);
    return EXIT_USAGE;
  }
  LowerSpec *specs = NULL;
  ex = configurations(&a, &specs, &n);
  for (int i = 0; i < npaths && ex == 0; i++)
    ex = one_file(paths[i], &a, specs, n, s, ns, &failed);
  af_free(specs);
  return ex ? ex : failed ? EXIT_FOUND : EXIT_OK;
}

static void import_help(FILE *f) {
  fprintf(f, "usage: asyncfuzz import FILE.mlir [-o CASE.json]\n"
             "Turns a program in the case language's subset into a case (JSON) that campaigns\n"
             "seed from (--seeds) and `reduce` shrinks: main's gpu.wait, gpu.alloc, gpu.dealloc,\n"
             "gpu.memcpy, gpu.memset, gpu.launch_func and gpu.launch (each kernel as the case\n"
             "kernel its body's effects make it), async.execute, async.await and printMemref\n"
             "(observations); the module's own functions are inlined. Element types become i32\n"
             "and values the case's own. Outside the subset, or racy (a case has one meaning),\n"
             "it names the first op it cannot express, or the race. Exit 0, 2 usage, 3 not a\n"
             "case (docs/check-mlir.md).\n");
}

int cmd_import(int argc, char **argv) {
  const char *path[1], *out = NULL;
  int npos;
  const CliOpt opts[] = {CLI_OPT_STR("-o", &out), CLI_OPT_STR("--out", &out), CLI_OPT_END};
  int ex = cli_parse("import", argc, argv, opts, NULL, NULL, path, 1, &npos, import_help);
  if (ex || npos == 0) {
    if (ex == 0)
      fprintf(stderr, "asyncfuzz import: which program? (see --help)\n");
    return ex < 0 ? 0 : ex ? ex : EXIT_USAGE;
  }
  char *text = NULL, *json = NULL;
  AfErr err = {0};
  int rc = af_read_file(path[0], &text, NULL, &err);
  if (rc == 0)
    rc = gen_import_mlir(text, &json, &err);
  af_free(text);
  if (rc) {
    fprintf(stderr, "asyncfuzz import: %s: %s\n", path[0], err.msg);
    return rc == AF_ENOMEM ? EXIT_INTERNAL : EXIT_INPUT;
  }
  ex = cli_write_text(out, json);
  af_free(json);
  return ex;
}
