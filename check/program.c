/*
 * program.c: a user's own program through a lowering and mlir-runner (asyncfuzz check-mlir;
 * docs/check-mlir.md). The program is lowered once per configuration (gpu.launch bodies
 * outlined first), every runtime call is tagged with the line of the program it comes from, and
 * the lowered module runs once per schedule against the runtime library in program mode: its
 * kernels known by their bodies' effects (gen/mlir_kernels.c), its own host memory adopted, its
 * printMemref calls host reads. Each run is judged from its trace (prog_judge.c).
 */
#include "check.h"
#include "check_int.h"

#include "../kernels/kernels.h"

#include "../base/proc.h"
#include "../lower/mlir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* gpu.launch (not gpu.launch_func) anywhere in text: its bodies must be outlined first. */
static int has_launch_body(const char *text) {
  for (const char *p = strstr(text, "gpu.launch"); p; p = strstr(p + 1, "gpu.launch"))
    if (p[10] == ' ' || p[10] == '(')
      return 1;
  return 0;
}

/* The suffix of asyncfuzz_read<T> for a memref type's element type at t ("memref<4x?xf32>":
 * "F32"), or NULL (another type, a memory space, an unranked memref). */
static const char *read_suffix(const char *t, char *elem, size_t n) {
  static const char *const names[][2] = {{"f32", "F32"},  {"f64", "F64"}, {"i8", "I8"},
                                         {"i16", "I16"},  {"i32", "I32"}, {"i64", "I64"},
                                         {"index", "Ind"}};
  const char *p = t + 7, *e = p + strcspn(p, ",>");
  if (*e == ',' && strncmp(e, ", strided<", 10) != 0)
    return NULL; /* (a memory space) */
  const char *x = p;
  for (const char *q = p; q < e; q++)
    if (*q == 'x')
      x = q + 1;
  af_fmt(elem, n, "%.*s", (int)(e - x), x);
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strcmp(elem, names[i][0]) == 0 && *p != '*')
      return names[i][1];
  return NULL;
}

/* The program with a host read before each host memref.load (outside gpu.module, gpu.func and
 * gpu.launch bodies): a cast to an unranked memref and a call of the runtime's asyncfuzz_read<T>,
 * put on the load's own line (MLIR does not care, and the line keeps its number), their
 * declarations on the module's first line. NULL when out of memory. */
static char *instrument_loads(const char *text) {
  AfBuf b;
  af_buf_init(&b);
  int depth = 0, gpu_at = -1, k = 0, declared = 0;
  unsigned used = 0;
  static const char *const sfx[] = {"F32", "F64", "I8", "I16", "I32", "I64", "Ind"};
  static const char *const ty[] = {"f32", "f64", "i8", "i16", "i32", "i64", "index"};
  for (const char *l = text; *l;) {
    size_t len = strcspn(l, "\n");
    char line[2048];
    af_fmt(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), l);
    const char *ld = strstr(line, "memref.load %"), *colon = ld ? strstr(ld, " : memref<") : NULL;
    char elem[32], src[64];
    const char *suf = colon && gpu_at < 0 ? read_suffix(colon + 3, elem, sizeof elem) : NULL;
    if (suf) {
      af_fmt(src, sizeof src, "%.*s", (int)strcspn(ld + 12, "[ "), ld + 12);
      char type[300];
      af_fmt(type, sizeof type, "%.*s", (int)strcspn(colon + 3, " \n"), colon + 3);
      af_buf_printf(&b,
                    "%.*s%%af_rd%d = memref.cast %s : %s to memref<*x%s> func.call "
                    "@asyncfuzz_read%s(%%af_rd%d) : (memref<*x%s>) -> () ",
                    (int)strspn(line, " "), line, k, src, type, elem, suf, k, elem);
      k++;
      for (unsigned i = 0; i < 7; i++)
        used |= strcmp(suf, sfx[i]) == 0 ? 1u << i : 0;
    }
    af_buf_put(&b, l + (suf ? strspn(line, " ") : 0), len - (suf ? strspn(line, " ") : 0));
    if (!declared && strncmp(l + strspn(l, " "), "module", 6) == 0 && line[len - 1] == '{') {
      af_buf_puts(&b, " @@DECL@@");
      declared = 1;
    }
    af_buf_puts(&b, l[len] ? "\n" : "");
    if (gpu_at < 0 && (strstr(line, "gpu.module @") || strstr(line, "gpu.func @") ||
                       (strstr(line, "gpu.launch ") && !strstr(line, "gpu.launch_func"))))
      gpu_at = depth;
    for (const char *q = line; *q; q++)
      depth += (*q == '{') - (*q == '}');
    if (gpu_at >= 0 && depth <= gpu_at)
      gpu_at = -1;
    l += len + (l[len] == '\n');
  }
  char *out = af_buf_take(&b), decl[1024] = "";
  for (unsigned i = 0; i < 7; i++)
    if (used & (1u << i)) {
      size_t dl = strlen(decl);
      af_fmt(decl + dl, sizeof decl - dl,
             " func.func private @asyncfuzz_read%s(memref<*x%s>) attributes "
             "{llvm.emit_c_interface}",
             sfx[i], ty[i]);
    }
  char *at = out ? strstr(out, " @@DECL@@") : NULL;
  if (at == NULL)
    return out;
  AfBuf r; /* the declarations where the marker is */
  af_buf_init(&r);
  af_buf_put(&r, out, (size_t)(at - out));
  af_buf_puts(&r, decl);
  af_buf_puts(&r, at + 9);
  af_free(out);
  return af_buf_take(&r);
}

/* The kernels' table of the program (its gpu.launch bodies outlined by mlir-opt first, as the
 * pipeline will outline them), written to dir/kernels.txt. */
static int write_kernels(const LowerSpec *spec, const char *dir, const char *in, const char *text,
                         int outline, ProgResult *res, AfErr *err) {
  char *outlined = NULL, path[4200], errp[4200];
  if (outline) {
    af_fmt(path, sizeof path, "%s/outlined.mlir", dir);
    af_fmt(errp, sizeof errp, "%s/outline.err", dir);
    char *argv[] = {(char *)spec->opt, "--gpu-kernel-outlining", (char *)in, "-o", path, NULL};
    ProcResult r;
    int rc = af_proc_run(argv, NULL, NULL, NULL, errp, spec->timeout, &r, err);
    if (rc)
      return rc;
    if (r.exited && r.code == 0 && af_read_file(path, &outlined, NULL, err))
      return err->rc;
  }
  res->kernels = gen_mlir_kernels(outlined ? outlined : text);
  af_free(outlined);
  if (res->kernels == NULL)
    return af_err_set(err, AF_ENOMEM, "out of memory reading the kernels");
  af_fmt(path, sizeof path, "%s/kernels.txt", dir);
  return af_write_file(path, res->kernels, strlen(res->kernels), err);
}

/* The lowering's verdict when mlir-opt did not give runnable code (res->lowering), as the mlir
 * path classifies a case's; 0 with res->lowered = MLIR_OK and *code otherwise. */
static int classify(const LowerSpec *spec, const ProcResult *r, const char *outp, const char *errp,
                    ProgResult *res, char **code, AfErr *err) {
  char *report = NULL;
  MlirLowered l;
  memset(&l, 0, sizeof l);
  if (af_read_file(errp, &report, NULL, err))
    return err->rc;
  l.outcome = MLIR_OK;
  if (r->timed_out) {
    l.outcome = MLIR_TIMEOUT;
    af_fmt(l.cause, sizeof l.cause, "mlir-opt timeout");
    af_fmt(l.detail, sizeof l.detail, "mlir-opt ran past %.0f s", spec->timeout);
  } else if (r->signaled) {
    char c[200];
    mlir_crash_cause(report, c, sizeof c);
    l.outcome = MLIR_CRASH;
    af_fmt(l.cause, sizeof l.cause, "%s|%s", strsignal(r->sig), c);
    af_fmt(l.detail, sizeof l.detail, "mlir-opt killed by %s: %.600s", strsignal(r->sig), report);
  } else if (r->code != 0) {
    const char *e = strstr(report, "error: ");
    char msg[600];
    af_fmt(msg, sizeof msg, "%.*s", (int)strcspn(e ? e + 7 : report, "\n"), e ? e + 7 : report);
    l.outcome = MLIR_REJECTED;
    mlir_normalize(msg, l.cause, sizeof l.cause);
    af_fmt(l.detail, sizeof l.detail, "%.700s", report);
  } else if (af_read_file(outp, code, NULL, err) == 0) {
    char root[200], ops[600];
    mlir_unconverted_ops(*code, root, sizeof root, ops, sizeof ops);
    if (root[0]) {
      l.outcome = MLIR_UNCONVERTED;
      af_fmt(l.cause, sizeof l.cause, "%s", root);
      af_fmt(l.detail, sizeof l.detail, "left unconverted: %s", ops);
    }
  } else {
    af_free(report);
    return err->rc;
  }
  af_free(report);
  res->lowered = l.outcome;
  if (l.outcome != MLIR_OK)
    check_lowering_verdict(spec, &l, &res->lowering);
  return 0;
}

/* The program's text lowered by spec (its pipeline after gpu-kernel-outlining when it has
 * gpu.launch bodies) into dir/lowered.mlir, its runtime calls tagged with their lines. */
static int lower_program(const LowerSpec *spec, const char *dir, const char *in, int outline,
                         ProgResult *res, AfErr *err) {
  LowerSpec sp = *spec;
  const char *head = "builtin.module(";
  if (outline && strncmp(sp.pipeline, head, strlen(head)) == 0)
    af_fmt(sp.pipeline, sizeof sp.pipeline, "%sgpu-kernel-outlining,%s", head,
           spec->pipeline + strlen(head));
  else if (outline)
    af_fmt(sp.pipeline, sizeof sp.pipeline, "gpu-kernel-outlining,%s", spec->pipeline);
  char outp[4200], errp[4200];
  af_fmt(outp, sizeof outp, "%s/opt.mlir", dir);
  af_fmt(errp, sizeof errp, "%s/opt.err", dir);
  ProcResult r;
  char *code = NULL;
  int rc = mlir_lower_file(&sp, in, outp, errp, spec->timeout, &r, err);
  if (rc == 0)
    rc = classify(&sp, &r, outp, errp, res, &code, err);
  if (rc || res->lowered != MLIR_OK) {
    af_free(code);
    return rc;
  }
  GenLineMap map = {NULL, 0, 0, 0}; /* each line stands for itself: a trace's op is a line */
  int lines = 1;
  for (const char *p = res->text; *p; p++)
    lines += *p == '\n';
  map.op = af_calloc((size_t)lines, sizeof *map.op);
  for (int i = 0; map.op && i < lines; i++)
    map.op[i] = i + 1;
  map.nlines = map.op ? lines : 0;
  int ncalls, ntagged;
  char *tagged = map.op ? mlir_tag_calls(code, &map, 1, &ncalls, &ntagged) : NULL;
  af_free(map.op);
  af_free(code);
  if (tagged == NULL)
    return af_err_set(err, AF_ENOMEM, "out of memory tagging the lowered program");
  af_fmt(outp, sizeof outp, "%s/lowered.mlir", dir);
  rc = af_write_file(outp, tagged, strlen(tagged), err);
  af_free(tagged);
  return rc;
}

/* The runner's environment for schedule s: program mode, the kernels, the trace file. */
static void run_env(const LowerSpec *spec, const ProgOpts *o, const char *dir, const Schedule *s,
                    int k, char env[10][4200]) {
  af_fmt(env[0], sizeof env[0], "ASYNCFUZZ_PROGRAM=1");
  af_fmt(env[1], sizeof env[1], "ASYNCFUZZ_KERNELS=%s/kernels.txt", dir);
  af_fmt(env[2], sizeof env[2], "ASYNCFUZZ_POLICY=%s", asyncfuzz_rt_policy_name(s->policy));
  af_fmt(env[3], sizeof env[3], "ASYNCFUZZ_SCHED_SEED=%llu", (unsigned long long)s->seed);
  af_fmt(env[4], sizeof env[4], "ASYNCFUZZ_TRACE_BIN=%s/run-%d.bin", dir, k);
  af_fmt(env[5], sizeof env[5], "ASYNCFUZZ_MEMFREE_SYNC=%d", o->memfree_sync ? 1 : 0);
  CheckOpts co = {0};
  co.abi = o->abi;
  af_fmt(env[6], sizeof env[6], "ASYNCFUZZ_ABI=%s", asyncfuzz_rt_abi_name(check_abi(spec, &co)));
  af_fmt(env[7], sizeof env[7], "ASYNCFUZZ_TRACE");
  const char *pre = getenv("ASYNCFUZZ_RUNNER_PRELOAD"); /* (a sanitizer build: see check/mlir.c) */
  af_fmt(env[8], sizeof env[8], pre && *pre ? "LD_PRELOAD=%s" : "LD_PRELOAD", pre ? pre : "");
  af_fmt(env[9], sizeof env[9],
         pre && *pre ? "ASAN_OPTIONS=detect_leaks=0:handle_segv=0:"
                       "handle_abort=0"
                     : "ASYNCFUZZ_BACKEND");
}

/* One run of the lowered program under schedule k: its output, its trace judged. */
static int run_one(const LowerSpec *spec, const ProgOpts *o, const char *dir, const char *lowered,
                   int k, ProgResult *res, AfErr *err) {
  ProgRun *run = &res->runs[k];
  char env[10][4200], *envp[11], libs[4400], opt[8], entry[300], result[300];
  run_env(spec, o, dir, &run->sched, k, env);
  for (int i = 0; i < 10; i++)
    envp[i] = env[i];
  envp[10] = NULL;
  af_fmt(libs, sizeof libs, "--shared-libs=%s%s%s%s%s", spec->rtlib, spec->utils[0] ? "," : "",
         spec->utils, o->libs && *o->libs ? "," : "", o->libs ? o->libs : "");
  mlir_jit_flag(spec, opt, sizeof opt);
  af_fmt(entry, sizeof entry, "%s", o->entry ? o->entry : "main");
  af_fmt(result, sizeof result, "--entry-point-result=%s",
         o->entry_result ? o->entry_result : "void");
  char *argv[8 + PROG_MAX_RUNNER_ARGS];
  int a = 0;
  argv[a++] = (char *)spec->runner;
  if (opt[0])
    argv[a++] = opt;
  argv[a++] = "-e";
  argv[a++] = entry;
  argv[a++] = result;
  argv[a++] = libs;
  for (int i = 0; i < o->nrunner_args && i < PROG_MAX_RUNNER_ARGS; i++)
    argv[a++] = (char *)o->runner_args[i];
  argv[a++] = (char *)lowered;
  argv[a] = NULL;
  char outp[4200], errp[4200], trace[4200];
  af_fmt(outp, sizeof outp, "%s/run-%d.out", dir, k);
  af_fmt(errp, sizeof errp, "%s/run-%d.err", dir, k);
  af_fmt(trace, sizeof trace, "%s/run-%d.bin", dir, k);
  remove(trace);
  ProcResult r;
  int rc = af_proc_run(argv, envp, NULL, outp, errp, o->timeout > 0 ? o->timeout : 60, &r, err);
  if (rc)
    return rc;
  return check__prog_judge(spec, o, res->text, &r, outp, errp, trace, run, err);
}

int check_program(const char *path, const LowerSpec *spec, const Schedule *s, int ns,
                  const ProgOpts *o, ProgResult *res, AfErr *err) {
  memset(res, 0, sizeof *res);
  if (spec->kind != LOWER_MLIR_OPT)
    return af_err_set(err, AF_EUSAGE, "check-mlir runs a program through an mlir-opt lowering");
  if (af_read_file(path, &res->text, NULL, err))
    return err->rc;
  char dir[4096], in[4200], lowered[4200];
  int rc = mlir_tmpdir(dir, sizeof dir, err);
  if (rc)
    return rc;
  af_fmt(in, sizeof in, "%s/input.mlir", dir);
  af_fmt(lowered, sizeof lowered, "%s/%s", dir, o->lowered ? "input.mlir" : "lowered.mlir");
  int outline = !o->lowered && has_launch_body(res->text);
  char *prog = o->lowered ? NULL : instrument_loads(res->text); /* (host loads are reads) */
  rc = af_write_file(in, prog ? prog : res->text, strlen(prog ? prog : res->text), err);
  af_free(prog);
  if (rc == 0 && !o->lowered)
    rc = write_kernels(spec, dir, in, res->text, outline, res, err);
  if (rc == 0 && o->lowered) { /* (no bodies: every kernel reads and writes all it is given) */
    char kp[4200];
    af_fmt(kp, sizeof kp, "%s/kernels.txt", dir);
    rc = af_write_file(kp, "", 0, err);
  }
  res->lowered = MLIR_OK;
  char msg[200];
  if (rc == 0 && kernel_foreign_set(res->kernels, msg, sizeof msg)) /* (names in the traces) */
    rc = af_err_set(err, AF_EPARSE, "the kernels' table: %s", msg);
  if (rc == 0 && !o->lowered)
    rc = lower_program(spec, dir, in, outline, res, err);
  for (int k = 0; rc == 0 && res->lowered == MLIR_OK && k < ns && k < CHECK_MAX_SCHED; k++) {
    res->runs[k].sched = s[k];
    res->nruns = k + 1;
    rc = run_one(spec, o, dir, lowered, k, res, err);
  }
  if (rc == 0)
    check__prog_outputs(spec, res);
  if (getenv("ASYNCFUZZ_KEEP_TMP"))
    af_fmt(res->dir, sizeof res->dir, "%s", dir);
  else
    af_rm_tree(dir);
  return rc;
}

void check_program_free(ProgResult *res) {
  for (int k = 0; k < res->nruns; k++)
    af_free(res->runs[k].out);
  af_free(res->text);
  af_free(res->kernels);
  memset(res, 0, sizeof *res);
}

int check_program_specs(const char *const *lowerings, int nlow, const char *pipeline,
                        const MlirMatrixAxes *axes, LowerSpec **specs, int *n, char *notes,
                        size_t nn, AfErr *err) {
  *specs = NULL;
  *n = 0;
  notes[0] = '\0';
  if (axes)
    return mlir_matrix(axes, specs, n, notes, nn, err);
  static const char *const plain[] = {"mlir-opt"};
  if (nlow == 0) {
    lowerings = plain;
    nlow = 1;
  }
  *specs = af_calloc((size_t)nlow, sizeof **specs);
  if (*specs == NULL)
    return af_err_set(err, AF_ENOMEM, "out of memory");
  for (; *n < nlow; (*n)++) {
    LowerSpec *sp = &(*specs)[*n];
    int rc = lower_spec_parse(lowerings[*n], sp, err);
    if (rc == 0 && sp->kind != LOWER_MLIR_OPT)
      rc = af_err_set(err, AF_EUSAGE,
                      "%s: a program goes through mlir-opt (the builtin lowering takes cases: "
                      "`asyncfuzz import` makes one)",
                      lowerings[*n]);
    if (rc == 0 && pipeline)
      rc = lower_spec_set_pipeline(sp, pipeline, err);
    if (rc) {
      af_free(*specs);
      *specs = NULL;
      *n = 0;
      return rc;
    }
  }
  return 0;
}
