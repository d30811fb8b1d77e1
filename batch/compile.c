/*
 * compile.c: a batch compiled ahead of time (batch.h): mlir-opt per case, then the runnable
 * cases as one module through mlir-translate, opt -O0, llc -O0 and cc -shared; the manifest.
 */
#include "batch.h"

#include "../base/proc.h"
#include "../lower/mlir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Runs a compile tool; AF_ETOOL with its message when it fails. */
static int run_tool(const char *what, char *const argv[], const char *out, const char *errp,
                    double limit, AfErr *err) {
  ProcResult r;
  AfErr e = {0};
  if (af_proc_run(argv, NULL, NULL, out, errp, limit, &r, &e))
    return af_err_set(err, AF_ETOOL, "%s: %s", what, e.msg);
  if (!(r.exited && r.code == 0)) {
    char *text = NULL;
    AfErr e2 = {0};
    af_read_file(errp, &text, NULL, &e2);
    af_err_set(err, AF_ETOOL, "%s failed (%s %d):\n%s", what,
               r.timed_out  ? "timed out after"
               : r.signaled ? "signal"
                            : "status",
               r.timed_out  ? (int)limit
               : r.signaled ? r.sig
                            : r.code,
               text ? text : "");
    af_free(text);
    return AF_ETOOL;
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

typedef struct Tools {
  char translate[4096], opt[4096], llc[4096], cc[4096];
} Tools;

static int find_tools(const LowerSpec *spec, Tools *t, AfErr *err) {
  if (!mlir_find_tool(spec, "mlir-translate", "ASYNCFUZZ_MLIR_TRANSLATE", t->translate,
                      sizeof t->translate) ||
      !mlir_find_tool(spec, "opt", "ASYNCFUZZ_LLVM_OPT", t->opt, sizeof t->opt) ||
      !mlir_find_tool(spec, "llc", "ASYNCFUZZ_LLC", t->llc, sizeof t->llc) ||
      !af_find_exe("cc", t->cc, sizeof t->cc))
    return af_err_set(err, AF_EUNSUPPORTED,
                      "mlir-translate, opt and llc of the same LLVM as %s, and cc, are needed "
                      "(Debian: apt-get install mlir-22-tools llvm-22 gcc)",
                      spec->opt);
  return 0;
}

/* The runnable cases run[0..nrun) (ids: their case ids) as one module, through mlir-opt,
 * mlir-translate, opt -O0, llc -O0 and cc -shared into so. */
static int compile_runnable(const LowerSpec *spec, const Tools *t, const char *dir,
                            const GenCase **run, const int *ids, int nrun, const char *so,
                            AfErr *err) {
  char in[4200], lowered[4200], ll[4200], bc[4200], obj[4200], errp[4200];
  snprintf(in, sizeof in, "%s/batch.mlir", dir);
  snprintf(lowered, sizeof lowered, "%s/batch.lowered.mlir", dir);
  snprintf(ll, sizeof ll, "%s/batch.ll", dir);
  snprintf(bc, sizeof bc, "%s/batch.bc", dir);
  snprintf(obj, sizeof obj, "%s/batch.o", dir);
  snprintf(errp, sizeof errp, "%s/tool.err", dir);
  double limit = spec->timeout + 2.0 * (nrun + 1);
  GenLineMap map;
  char *text = gen_render_mlir_group_map(run, ids, nrun, 1, &map);
  ProcResult r;
  int rc = 0;
  if (text == NULL)
    rc = af_err_set(err, AF_ENOMEM, "out of memory");
  else if ((rc = af_write_file(in, text, strlen(text), err)) == 0 &&
           (rc = mlir_lower_file(spec, in, lowered, errp, limit, &r, err)) == 0 &&
           !(r.exited && r.code == 0))
    rc = af_err_set(err, AF_ETOOL, "mlir-opt failed on the batch of runnable cases");
  af_free(text);
  if (rc == 0) { /* each runtime call tagged with its case op, as check runs them */
    char *code = NULL, *tagged = NULL;
    int ncalls, ntagged;
    rc = af_read_file(lowered, &code, NULL, err);
    if (rc == 0 && (tagged = mlir_tag_calls(code, &map, 1, &ncalls, &ntagged)) == NULL)
      rc = af_err_set(err, AF_ENOMEM, "out of memory");
    if (rc == 0)
      rc = af_write_file(lowered, tagged, strlen(tagged), err);
    af_free(code);
    af_free(tagged);
  }
  af_free(map.op);
  if (rc == 0) {
    char *targv[] = {(char *)t->translate, "--mlir-to-llvmir", lowered, "-o", ll, NULL};
    rc = run_tool("mlir-translate", targv, NULL, errp, limit, err);
  }
  if (rc == 0) { /* the batch's @main would shadow nothing, but name it plainly */
    char *ltext = NULL;
    if (af_read_file(ll, &ltext, NULL, err) == 0) {
      char *m = strstr(ltext, "define void @main(");
      AfBuf b;
      af_buf_init(&b);
      if (m) {
        af_buf_printf(&b, "%.*sdefine void @asyncfuzz_batch_main(%s", (int)(m - ltext), ltext,
                      m + strlen("define void @main("));
      }
      if (m && !b.oom && af_write_file(ll, b.p, strlen(b.p), err))
        rc = AF_EIO;
      af_buf_free(&b);
    }
    af_free(ltext);
  }
  if (rc == 0) { /* opt -O0 lowers the async coroutines (llc alone cannot) */
    char *oargv[] = {(char *)t->opt, "-O0", ll, "-o", bc, NULL};
    rc = run_tool("opt", oargv, NULL, errp, limit, err);
  }
  if (rc == 0) {
    char *largv[] = {
        (char *)t->llc, "-O0", "-filetype=obj", "-relocation-model=pic", bc, "-o", obj, NULL};
    rc = run_tool("llc", largv, NULL, errp, limit, err);
  }
  if (rc == 0) {
    char *cargv[] = {(char *)t->cc, "-shared", "-o", (char *)so, obj, NULL};
    rc = run_tool("cc -shared", cargv, NULL, errp, limit, err);
  }
  return rc;
}

static int write_manifest(const LowerSpec *spec, const Tools *t, const GenCase *cases,
                          const char *const *sources, const MlirLowered *low, int n, int nrun,
                          const char *out, AfErr *err) {
  char tv[160], lv[160], p[4400];
  tool_version(t->translate, tv, sizeof tv);
  tool_version(t->llc, lv, sizeof lv);
  AfBuf b;
  af_buf_init(&b);
  af_buf_printf(&b, "{\n  \"format\": \"%s\",\n  \"asyncfuzz\": \"%s\",\n  \"lowering\": ",
                BATCH_FORMAT, ASYNCFUZZ_VERSION);
  af_buf_json_str(&b, spec->name);
  af_buf_puts(&b, ",\n  \"lowering_arg\": ");
  af_buf_json_str(&b, spec->arg);
  af_buf_puts(&b, ",\n  \"lowering_version\": ");
  af_buf_json_str(&b, spec->version);
  af_buf_puts(&b, ",\n  \"pipeline\": ");
  af_buf_json_str(&b, spec->pipeline);
  af_buf_puts(&b, ",\n  \"mlir_translate\": ");
  af_buf_json_str(&b, tv);
  af_buf_puts(&b, ",\n  \"llc\": ");
  af_buf_json_str(&b, lv);
  af_buf_printf(&b, ",\n  \"object\": %s,\n  \"cases\": [", nrun > 0 ? "\"batch.so\"" : "null");
  for (int i = 0; i < n; i++) {
    af_buf_printf(&b, "%s\n    {\"id\": %d, \"file\": \"cases/case-%d.json\", \"seed\": %llu, ",
                  i ? "," : "", i, i, (unsigned long long)cases[i].seed);
    if (sources && sources[i]) {
      af_buf_puts(&b, "\"source\": ");
      af_buf_json_str(&b, sources[i]);
      af_buf_puts(&b, ", ");
    }
    if (low[i].outcome == MLIR_OK) {
      af_buf_puts(&b, "\"lowered\": true}");
    } else {
      Verdict v, pv;
      check_lowering_verdict(spec, &low[i], &v);
      GenCase plain; /* named as check and campaign name it: a view only where it matters */
      Schedule s = {RT_EAGER, 0};
      CheckOpts o = {0};
      AfErr e = {0};
      if (check_view_free(&cases[i], spec, &s, &o, &v, &plain, &pv, &e) == 1) {
        v = pv;
        gen_case_free(&plain);
      }
      af_buf_printf(&b, "\"lowered\": false, \"verdict\": \"%s\", \"signature\": ",
                    oracle_verdict_name(v.cls));
      af_buf_json_str(&b, v.signature);
      af_buf_puts(&b, ", \"detail\": ");
      af_buf_json_str(&b, v.detail);
      if (v.victim[0]) { /* (the detailed form: the op's dependency count) */
        af_buf_puts(&b, ", \"detailed\": ");
        af_buf_json_str(&b, v.victim);
      }
      af_buf_puts(&b, "}");
    }
  }
  af_buf_puts(&b, "\n  ]\n}\n");
  snprintf(p, sizeof p, "%s/manifest.json", out);
  int rc =
      b.oom ? af_err_set(err, AF_ENOMEM, "out of memory") : af_write_file(p, b.p, strlen(b.p), err);
  af_buf_free(&b);
  return rc;
}

static int make_dir(const char *d, AfErr *err) {
  if (mkdir(d, 0777) != 0 && errno != EEXIST)
    return af_err_set(err, AF_EIO, "cannot create %s: %s", d, strerror(errno));
  return 0;
}

int batch_compile(const LowerSpec *spec, const GenCase *cases, const char *const *sources, int n,
                  const char *out, BatchCompiled *res, AfErr *err) {
  memset(res, 0, sizeof *res);
  Tools t;
  int rc = find_tools(spec, &t, err);
  if (rc)
    return rc;
  const GenCase **cp = af_calloc((size_t)n, sizeof *cp);
  char **chunks = af_calloc((size_t)n, sizeof *chunks);
  MlirLowered *low = af_calloc((size_t)n, sizeof *low);
  int *ids = af_calloc((size_t)n, sizeof *ids);
  const GenCase **run = af_calloc((size_t)n, sizeof *run);
  char dir[4096] = "", p[4400], cdir[4200];
  snprintf(cdir, sizeof cdir, "%s/cases", out);
  if (!(cp && chunks && low && ids && run))
    rc = af_err_set(err, AF_ENOMEM, "out of memory");
  if (rc == 0)
    rc = make_dir(out, err);
  if (rc == 0)
    rc = make_dir(cdir, err);
  if (rc == 0)
    rc = mlir_tmpdir(dir, sizeof dir, err);
  for (int i = 0; i < n && rc == 0; i++) {
    int zero = 0;
    cp[i] = &cases[i];
    chunks[i] = gen_render_mlir_group(&cp[i], &zero, 1, 1);
    snprintf(p, sizeof p, "%s/case-%d.json", cdir, i);
    if (chunks[i] == NULL)
      rc = af_err_set(err, AF_ENOMEM, "out of memory");
    else
      rc = gen_case_save(&cases[i], p, err);
  }
  if (rc == 0)
    rc = mlir_lower_group(spec, dir, chunks, n, low, err);
  int nrun = 0;
  for (int i = 0; i < n && rc == 0; i++)
    if (low[i].outcome == MLIR_OK) {
      ids[nrun] = i;
      run[nrun++] = cp[i];
    }
  snprintf(res->so, sizeof res->so, "%s/batch.so", out);
  if (rc == 0 && nrun > 0)
    rc = compile_runnable(spec, &t, dir, run, ids, nrun, res->so, err);
  if (rc == 0)
    rc = write_manifest(spec, &t, cases, sources, low, n, nrun, out, err);
  res->ncompiled = rc == 0 ? nrun : 0;
  if (dir[0] && getenv("ASYNCFUZZ_KEEP_TMP"))
    snprintf(res->kept, sizeof res->kept, "%s", dir);
  else if (dir[0])
    af_rm_tree(dir);
  for (int i = 0; i < n && chunks; i++)
    af_free(chunks[i]);
  if (low)
    mlir_lowered_free(low, n);
  af_free(cp), af_free(chunks), af_free(low), af_free(ids), af_free(run);
  return rc;
}
