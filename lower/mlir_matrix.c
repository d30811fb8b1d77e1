/*
 * mlir_matrix.c: the matrix of mlir-opt configurations a campaign rotates through (mlir.h):
 * builds (found or named) x pipelines x targets x JIT levels, each a LowerSpec.
 */
#define _GNU_SOURCE
#include "mlir_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int mlir_matrix_axis(MlirMatrixAxes *ax, const char *opt, AfErr *err) {
  static const char *const names[] = {"builds", "pipelines", "targets", "jit"};
  const char **dst[] = {&ax->builds, &ax->pipelines, &ax->targets, &ax->jit};
  const char *eq = strchr(opt, '=');
  for (int i = 0; eq && i < 4; i++)
    if (strlen(names[i]) == (size_t)(eq - opt) && strncmp(opt, names[i], strlen(names[i])) == 0) {
      if (eq[1] == '\0')
        return af_err_set(err, AF_EUSAGE, "--matrix %s: no values", opt);
      *dst[i] = eq + 1;
      return 0;
    }
  return af_err_set(err, AF_EUSAGE,
                    "--matrix \"%s\": unknown axis; AXIS=V1,V2,... with AXIS one of builds "
                    "(mlir-opt paths or directories), pipelines (default, async-region), targets "
                    "(nvvm, rocdl), jit (O0..O3, Odefault)",
                    opt);
}

/* The next comma-separated item of *list into out; 0 at the end. */
static int next_item(const char **list, char *out, size_t n) {
  const char *p = *list;
  while (*p == ',' || *p == ' ')
    p++;
  if (*p == '\0')
    return 0;
  size_t len = strcspn(p, ",");
  af_fmt(out, n, "%.*s", (int)len, p);
  while (len > 0 && out[len - 1] == ' ')
    out[--len] = '\0';
  *list = p + strcspn(p, ",");
  return 1;
}

/* The builds found: $ASYNCFUZZ_MLIR_OPT alone when set, else every /usr/lib/llvm-N/bin/mlir-opt
 * of LLVM 19 or newer with its runner (newest first), else mlir-opt on the PATH. A build
 * found but unusable is left out and said in notes. */
static int found_builds(LowerSpec *b, int max, int *nb, char *notes, size_t nn, AfErr *err) {
  *nb = 0;
  const char *env = getenv("ASYNCFUZZ_MLIR_OPT");
  if (env && *env)
    return lower_mlir_spec_parse("mlir-opt", &b[(*nb)++], err);
  for (int major = 40; major >= MLIR_OLDEST_MAJOR && *nb < max; major--) {
    char p[64];
    af_fmt(p, sizeof p, "/usr/lib/llvm-%d/bin/mlir-opt", major);
    if (!mlir__exists_x(p))
      continue;
    char spec[128];
    af_fmt(spec, sizeof spec, "mlir-opt:%s", p);
    AfErr e = {0};
    if (lower_mlir_spec_parse(spec, &b[*nb], &e) == 0)
      (*nb)++;
    else
      af_fmt(notes + strlen(notes), nn - strlen(notes), "%sleft out %s: %s", notes[0] ? "; " : "",
             p, e.msg);
  }
  if (*nb == 0)
    return lower_mlir_spec_parse("mlir-opt", &b[(*nb)++], err);
  return 0;
}

/* The builds named: mlir-opt executables, or directories holding one (DIR/mlir-opt or
 * DIR/bin/mlir-opt). */
static int named_builds(const char *list, LowerSpec *b, int max, int *nb, AfErr *err) {
  char item[PATH_MAX];
  *nb = 0;
  while (next_item(&list, item, sizeof item)) {
    if (*nb == max)
      return af_err_set(err, AF_EUSAGE, "--matrix builds: at most %d builds", max);
    char path[PATH_MAX + 16];
    af_fmt(path, sizeof path, "%s", item);
    struct stat stt;
    if (stat(item, &stt) == 0 && S_ISDIR(stt.st_mode)) {
      af_fmt(path, sizeof path, "%s/mlir-opt", item);
      if (!mlir__exists_x(path))
        af_fmt(path, sizeof path, "%s/bin/mlir-opt", item);
      if (!mlir__exists_x(path))
        return af_err_set(err, AF_EINVALID, "build %s: no mlir-opt in it (nor in its bin/)", item);
    }
    char spec[PATH_MAX + 32];
    af_fmt(spec, sizeof spec, "mlir-opt:%s", path);
    int rc = lower_mlir_spec_parse(spec, &b[*nb], err);
    if (rc) {
      char msg[sizeof err->msg];
      af_fmt(msg, sizeof msg, "%s", err->msg);
      af_err_clear(err);
      return af_err_set(err, rc, "build %s: %s", item, msg);
    }
    (*nb)++;
  }
  if (*nb == 0)
    return af_err_set(err, AF_EUSAGE, "--matrix builds: no build named");
  return 0;
}

/* configuration (vi, target, jit) of build b into out */
static int config_of(const LowerSpec *b, int vi, const char *custom, const char *target, int jit,
                     LowerSpec *out, AfErr *err) {
  *out = *b;
  out->matrix = 1;
  out->jit_opt = jit;
  af_fmt(out->target, sizeof out->target, "%s", target);
  af_fmt(out->variant, sizeof out->variant, "%s", custom ? "custom" : mlir_variant_name(vi));
  if (strcmp(target, "rocdl") == 0) {
    int r = mlir__find_rocm(out->rocm, sizeof out->rocm);
    if (r <= 0)
      return af_err_set(err, AF_EINVALID,
                        "the rocdl target needs the ROCm device libraries (apt-get install "
                        "rocm-device-libs; scripts/bootstrap.sh does), or ASYNCFUZZ_ROCM_PATH "
                        "naming a ROCm with amdgcn/bitcode%s%s",
                        r < 0 ? ": it has none: " : "", r < 0 ? out->rocm : "");
    mlir__rocdl_toolkit(out);
  }
  if (custom)
    af_fmt(out->pipeline, sizeof out->pipeline, "%s", custom);
  else
    mlir__compose(vi, target, out->rocm, out->code_object, out->pipeline, sizeof out->pipeline);
  mlir__spec_names(out, "");
  return 0;
}

/* The builds: named (--matrix builds=) or found; each build's version once. */
static int matrix_builds(const MlirMatrixAxes *ax, LowerSpec *b, int max, int *nb, char *notes,
                         size_t nn, AfErr *err) {
  int rc = ax->builds ? named_builds(ax->builds, b, max, nb, err)
                      : found_builds(b, max, nb, notes, nn, err);
  for (int i = 0; rc == 0 && i < *nb; i++)
    for (int j = 0; rc == 0 && j < i; j++)
      if (strcmp(b[i].version, b[j].version) == 0)
        rc = af_err_set(err, AF_EUSAGE,
                        "builds %s and %s are both \"%s\": a matrix names each build by its "
                        "version, so name one of them only",
                        b[j].opt, b[i].opt, b[i].version);
  if (rc == 0 && ax->custom && ax->pipelines)
    rc = af_err_set(err, AF_EUSAGE,
                    "--pipeline replaces the matrix's pipelines: leave out --matrix pipelines=");
  return rc;
}

/* The pipelines axis: named variants (or --pipeline's, "custom"). */
static int matrix_pipelines(const MlirMatrixAxes *ax, int *vis, int *nv, AfErr *err) {
  char item[64];
  const char *l = ax->pipelines ? ax->pipelines : ax->custom ? "custom" : "default,async-region";
  while (next_item(&l, item, sizeof item) && *nv < 8) {
    int vi = -1;
    for (int i = 0; i < mlir_variant_count(); i++)
      if (strcmp(mlir_variant_name(i), item) == 0)
        vi = i;
    if (strcmp(item, "custom") == 0 && ax->custom)
      vi = 0;
    if (vi < 0)
      return af_err_set(err, AF_EUSAGE,
                        "--matrix pipelines: unknown pipeline \"%s\" (default, async-region%s)",
                        item, ax->custom ? ", custom: --pipeline's" : "");
    vis[(*nv)++] = vi;
  }
  return 0;
}

/* The targets axis: named, else those the backend runs (rocdl where the ROCm device libraries
 * are installed; notes say when they are not). */
static int matrix_targets(const MlirMatrixAxes *ax, const char **tgs, int *nt, char *notes,
                          size_t nn, AfErr *err) {
  char rocm[PATH_MAX], item[64];
  int have_rocm = mlir__find_rocm(rocm, sizeof rocm) > 0;
  int runs_rocdl = ax->runs == NULL || strstr(ax->runs, "rocdl") != NULL;
  int runs_nvvm = ax->runs == NULL || strstr(ax->runs, "nvvm") != NULL;
  const char *l = ax->targets                 ? ax->targets
                  : !runs_nvvm                ? "rocdl"
                  : !runs_rocdl || !have_rocm ? "nvvm"
                                              : "nvvm,rocdl";
  if (!ax->targets && runs_rocdl && runs_nvvm && !have_rocm)
    af_fmt(notes + strlen(notes), nn - strlen(notes),
           "%sno rocdl: the ROCm device libraries are not installed (rocm-device-libs)",
           notes[0] ? "; " : "");
  while (next_item(&l, item, sizeof item) && *nt < 2) {
    if (strcmp(item, "nvvm") && strcmp(item, "rocdl"))
      return af_err_set(err, AF_EUSAGE, "--matrix targets: unknown target \"%s\" (nvvm, rocdl)",
                        item);
    if (!(strcmp(item, "rocdl") == 0 ? runs_rocdl : runs_nvvm))
      return af_err_set(err, AF_EUSAGE, "--matrix targets: the backend runs %s code only",
                        ax->runs);
    tgs[(*nt)++] = strcmp(item, "nvvm") == 0 ? "nvvm" : "rocdl";
  }
  return 0;
}

/* The JIT levels axis (-1: the runner's default). */
static int matrix_jits(const MlirMatrixAxes *ax, int *jits, int *nj, AfErr *err) {
  char item[64];
  const char *l = ax->jit ? ax->jit : "O0,Odefault";
  while (next_item(&l, item, sizeof item) && *nj < 8) {
    if (strcmp(item, "Odefault") == 0)
      jits[(*nj)++] = -1;
    else if (strlen(item) == 2 && item[0] == 'O' && item[1] >= '0' && item[1] <= '3')
      jits[(*nj)++] = item[1] - '0';
    else
      return af_err_set(err, AF_EUSAGE,
                        "--matrix jit: unknown level \"%s\" (O0, O1, O2, O3, Odefault)", item);
  }
  return 0;
}

/* Index of the first repeated value of an axis, or -1. */
static int repeated(const int *v, int n) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      if (v[i] == v[j])
        return i;
  return -1;
}

int mlir_matrix(const MlirMatrixAxes *ax, LowerSpec **out, int *nout, char *notes, size_t nn,
                AfErr *err) {
  enum { MAXB = 16 };
  LowerSpec *b = af_calloc(MAXB, sizeof *b);
  *out = NULL;
  *nout = 0;
  notes[0] = '\0';
  if (b == NULL)
    return af_err_set(err, AF_ENOMEM, "out of memory");
  int nb = 0, vis[8], nv = 0, jits[8], nj = 0, nt = 0, tgi[2];
  const char *tgs[2];
  int rc = matrix_builds(ax, b, MAXB, &nb, notes, nn, err);
  if (rc == 0)
    rc = matrix_pipelines(ax, vis, &nv, err);
  if (rc == 0)
    rc = matrix_targets(ax, tgs, &nt, notes, nn, err);
  if (rc == 0)
    rc = matrix_jits(ax, jits, &nj, err);
  for (int t = 0; t < nt; t++)
    tgi[t] = tgs[t][0];
  if (rc == 0 && (repeated(vis, nv) >= 0 || repeated(tgi, nt) >= 0 || repeated(jits, nj) >= 0))
    rc = af_err_set(err, AF_EUSAGE, "--matrix: %s names a value twice",
                    repeated(vis, nv) >= 0   ? "pipelines"
                    : repeated(tgi, nt) >= 0 ? "targets"
                                             : "jit");
  int n = nb * nv * nt * nj, k = 0;
  LowerSpec *m = rc == 0 ? af_calloc((size_t)(n ? n : 1), sizeof *m) : NULL;
  if (rc == 0 && m == NULL)
    rc = af_err_set(err, AF_ENOMEM, "out of memory");
  for (int i = 0; rc == 0 && i < nb; i++)
    for (int v = 0; rc == 0 && v < nv; v++)
      for (int t = 0; rc == 0 && t < nt; t++)
        for (int j = 0; rc == 0 && j < nj; j++)
          rc = config_of(&b[i], vis[v], ax->custom, tgs[t], jits[j], &m[k++], err);
  af_free(b);
  if (rc) {
    af_free(m);
    return rc;
  }
  *out = m;
  *nout = n;
  return 0;
}

void mlir_config_axes(const LowerSpec *s, char *out, size_t n) {
  char lvl[16];
  af_fmt(lvl, sizeof lvl, s->jit_opt < 0 ? "Odefault" : "O%d", s->jit_opt);
  af_fmt(out, n, "LLVM %s, %s, %s, %s", mlir_llvm_version(s), s->variant, s->target, lvl);
}
