/*
 * mlir_spec.c: an mlir-opt lowering's configuration (mlir.h): its named pipelines and targets,
 * and parsing a spec (mlir-opt[@VARIANT][/TARGET][+O<n>][:PATH]) into a LowerSpec whose tools
 * mlir_tools.c finds. The matrix of configurations is mlir_matrix.c.
 */
#define _GNU_SOURCE
#include "mlir_int.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The kernels' pipeline and the host's, as upstream's GPU integration tests run them, in one
 * --pass-pipeline (gpu-module-to-binary emits PTX text: no CUDA is needed to compile). The host
 * part starts with expand-strided-metadata, as upstream's gpu-lower-to-nvvm-pipeline does: no
 * later pass lowers a memref.subview, so without it every view would stay unconverted; then
 * lower-affine, as upstream's pipeline has it, for the affine.apply that expanding a subview of
 * a ranked memref leaves (its offset, a sum of the indices times the strides). */
#define MLIR_KERNELS                                                                               \
  "gpu.module(strip-debuginfo,convert-scf-to-cf,convert-gpu-to-nvvm),nvvm-attach-target"
/* First of all, gpu.launch bodies become kernels of their own module, launched by
 * gpu.launch_func (as gpu-lower-to-nvvm-pipeline begins; nothing to do in a module without). */
#define MLIR_OUTLINE "gpu-kernel-outlining,"
#define MLIR_HOST_HEAD                                                                             \
  "expand-strided-metadata,lower-affine,gpu-to-llvm,reconcile-unrealized-casts,"
#define MLIR_HOST_TAIL                                                                             \
  "async-to-async-runtime,async-runtime-ref-counting,convert-async-to-llvm,convert-scf-to-cf,"     \
  "convert-func-to-llvm,convert-arith-to-llvm,convert-cf-to-llvm,finalize-memref-to-llvm,"         \
  "reconcile-unrealized-casts"
#define MLIR_HOST MLIR_HOST_HEAD "gpu-module-to-binary{format=isa}," MLIR_HOST_TAIL

int lower_is_rocdl(const LowerSpec *spec) {
  return spec->kind == LOWER_MLIR_OPT && strcmp(spec->target, "rocdl") == 0;
}

static const struct {
  const char *name, *desc, *pipeline;
} variants[] = {
    {"default", "upstream's GPU integration-test pipeline",
     "builtin.module(" MLIR_OUTLINE MLIR_KERNELS "," MLIR_HOST ")"},
    {"async-region", "gpu-async-region on every function first, then the default pipeline",
     "builtin.module(" MLIR_OUTLINE "func.func(gpu-async-region)," MLIR_KERNELS "," MLIR_HOST ")"},
};
#define NVARIANTS ((int)(sizeof variants / sizeof variants[0]))

int mlir_variant_count(void) {
  return NVARIANTS;
}
const char *mlir_variant_name(int i) {
  return variants[i].name;
}
const char *mlir_variant_desc(int i) {
  return variants[i].desc;
}
const char *mlir_variant_pipeline(int i) {
  return variants[i].pipeline;
}

/* The pipeline of named variant vi for target (nvvm, rocdl: with the ROCm toolkit rocm). A
 * rocdl module becomes a code object (format=bin) where the build's ld.lld is there, else LLVM
 * bitcode (format=llvm); either way the host loads it with mgpuModuleLoad, as MLIR's ROCm
 * wrappers require (isa would call mgpuModuleLoadJIT, which they lack). */
void mlir__compose(int vi, const char *target, const char *rocm, int bin, char *out, size_t n) {
  if (strcmp(target, "rocdl") != 0) {
    af_fmt(out, n, "%s", variants[vi].pipeline);
    return;
  }
  af_fmt(out, n,
         "builtin.module(" MLIR_OUTLINE
         "%sgpu.module(strip-debuginfo,convert-scf-to-cf,convert-gpu-to-rocdl),"
         "rocdl-attach-target{chip=gfx90a}," MLIR_HOST_HEAD
         "gpu-module-to-binary{format=%s toolkit=%s}," MLIR_HOST_TAIL ")",
         vi ? "func.func(gpu-async-region)," : "", bin ? "bin" : "llvm", rocm);
}

const char *mlir_llvm_version(const LowerSpec *s) {
  const char *v = strstr(s->version, "version ");
  return v ? v + 8 : s->version;
}

/* name, family and arg from the spec's parts; path: as the user named the build ("": found) */
void mlir__spec_names(LowerSpec *s, const char *path) {
  char lvl[16] = "", base[160]; /* the level is named unless -O0, as before levels existed */
  if (s->jit_opt != 0)
    af_fmt(lvl, sizeof lvl, s->jit_opt < 0 ? "+Odefault" : "+O%d", s->jit_opt);
  const char *tg = strcmp(s->target, "nvvm") == 0 ? "" : "/";
  af_fmt(base, sizeof base, "%s%s%s%s%s", strcmp(s->variant, "default") ? "@" : "",
         strcmp(s->variant, "default") ? s->variant : "", tg, *tg ? s->target : "", lvl);
  if (s->matrix) { /* a configuration of the matrix: named by its build, signatures by none */
    af_fmt(s->name, sizeof s->name, "mlir-opt-%s%s", mlir_llvm_version(s), base);
    af_fmt(s->family, sizeof s->family, "mlir-opt");
    af_fmt(s->arg, sizeof s->arg, "matrix:mlir-opt%s:%s", base, s->opt);
    return;
  }
  af_fmt(s->name, sizeof s->name, "mlir-opt%s", base);
  af_fmt(s->family, sizeof s->family, "%s", s->name);
  if (path[0])
    af_fmt(s->arg, sizeof s->arg, "%s:%s", s->name, path);
  else
    af_fmt(s->arg, sizeof s->arg, "%s", s->name);
}

/* The length of p's leading characters that are not in stops (strcspn, which GCC's link-time
 * inlining misreads on a constant spec as reading past its end). */
static size_t part_len(const char *p, const char *stops) {
  size_t n = 0;
  while (p[n] && !strchr(stops, p[n]))
    n++;
  return n;
}

/* "[matrix:]mlir-opt[@VARIANT][/TARGET][+LEVEL]": the parts before the build's path. */
static int parse_parts(const char *str, LowerSpec *s, char *variant, size_t vn, const char **path,
                       AfErr *err) {
  const char *p = str;
  if (strncmp(p, "matrix:", 7) == 0) {
    s->matrix = 1;
    p += 7;
  }
  p += 8; /* mlir-opt */
  af_fmt(variant, vn, "default");
  af_fmt(s->target, sizeof s->target, "nvvm");
  if (*p == '@') {
    p++;
    size_t len = part_len(p, ":+/");
    af_fmt(variant, vn, "%.*s", (int)len, p);
    p += len;
  }
  if (*p == '/') { /* the target */
    p++;
    size_t len = part_len(p, ":+");
    char tg[32];
    af_fmt(tg, sizeof tg, "%.*s", (int)len, p);
    p += len;
    if (strcmp(tg, "nvvm") != 0 && strcmp(tg, "rocdl") != 0)
      return af_err_set(err, AF_EUSAGE, "unknown target \"%s\" in %s (targets: nvvm, rocdl)", tg,
                        str);
    af_fmt(s->target, sizeof s->target, "%s", tg);
  }
  if (*p == '+') { /* the runner's JIT optimization level */
    p++;
    size_t len = part_len(p, ":");
    char jit[32];
    af_fmt(jit, sizeof jit, "%.*s", (int)len, p);
    p += len;
    if (strcmp(jit, "Odefault") == 0)
      s->jit_opt = -1;
    else if (strlen(jit) == 2 && jit[0] == 'O' && jit[1] >= '0' && jit[1] <= '3')
      s->jit_opt = jit[1] - '0';
    else
      return af_err_set(err, AF_EUSAGE,
                        "unknown JIT optimization level \"+%s\" in %s (+O0, +O1, +O2, +O3, or "
                        "+Odefault: the runner's own)",
                        jit, str);
  }
  if (*p && *p != ':')
    return af_err_set(err, AF_EUSAGE,
                      "cannot read lowering \"%s\": "
                      "mlir-opt[@VARIANT][/nvvm|/rocdl][+O<n>|+Odefault][:PATH]",
                      str);
  *path = *p == ':' ? p + 1 : "";
  return 0;
}

/* The grammar of an mlir-opt spec into s (its build's path in *path), vi: its named pipeline; no
 * tool is looked for. */
static int spec_syntax(const char *str, LowerSpec *s, const char **path, int *vi, AfErr *err) {
  memset(s, 0, sizeof *s);
  s->kind = LOWER_MLIR_OPT;
  s->timeout = 60;
  const char *t = getenv("ASYNCFUZZ_TOOL_TIMEOUT");
  if (t && atof(t) > 0)
    s->timeout = atof(t);
  char variant[64];
  *path = "";
  int rc = parse_parts(str, s, variant, sizeof variant, path, err);
  if (rc)
    return rc;
  *vi = -1;
  for (int i = 0; i < NVARIANTS; i++)
    if (strcmp(variants[i].name, variant) == 0)
      *vi = i;
  if (*vi < 0) {
    AfBuf b;
    af_buf_init(&b);
    for (int i = 0; i < NVARIANTS; i++)
      af_buf_printf(&b, "%s%s", i ? ", " : "", variants[i].name);
    rc = af_err_set(err, AF_EUSAGE, "unknown mlir-opt pipeline \"%s\" (named pipelines: %s)",
                    variant, b.p ? b.p : "");
    af_buf_free(&b);
    return rc;
  }
  af_fmt(s->variant, sizeof s->variant, "%s", variant);
  return 0;
}

int lower_mlir_spec_syntax(const char *str, LowerSpec *s, AfErr *err) {
  const char *path;
  int vi;
  int rc = spec_syntax(str, s, &path, &vi, err);
  if (rc == 0)
    af_fmt(s->opt, sizeof s->opt, "%s", path);
  return rc;
}

int lower_mlir_spec_parse(const char *str, LowerSpec *s, AfErr *err) {
  const char *path;
  int vi;
  int rc = spec_syntax(str, s, &path, &vi, err);
  if (rc)
    return rc;
  if (lower_is_rocdl(s)) {
    int r = mlir__find_rocm(s->rocm, sizeof s->rocm);
    if (r <= 0)
      return af_err_set(err, AF_EINVALID,
                        r < 0 ? "ASYNCFUZZ_ROCM_PATH=%s has no amdgcn/bitcode/ockl.bc (the ROCm "
                                "device libraries that rocdl code links)"
                              : "the rocdl target needs the ROCm device libraries%s (apt-get "
                                "install rocm-device-libs; scripts/bootstrap.sh does), or "
                                "ASYNCFUZZ_ROCM_PATH naming a ROCm with amdgcn/bitcode",
                        s->rocm);
  }
  rc = mlir__find_opt(path, s, err);
  if (rc)
    return rc;
  if (lower_is_rocdl(s))
    mlir__rocdl_toolkit(s);
  mlir__compose(vi, s->target, s->rocm, s->code_object, s->pipeline, sizeof s->pipeline);
  rc = mlir__ask_version(s, err);
  if (rc == 0)
    rc = mlir__find_runner(s, err);
  mlir__spec_names(s, path);
  return rc;
}

int lower_spec_set_pipeline(LowerSpec *s, const char *pipeline, AfErr *err) {
  if (s->kind != LOWER_MLIR_OPT)
    return af_err_set(err, AF_EUSAGE, "--pipeline applies to mlir-opt lowerings only");
  if (strlen(pipeline) >= sizeof s->pipeline)
    return af_err_set(err, AF_EUSAGE, "--pipeline: too long");
  af_fmt(s->pipeline, sizeof s->pipeline, "%s", pipeline);
  af_fmt(s->variant, sizeof s->variant, "custom");
  const char *colon = strchr(s->arg + (s->matrix ? 7 : 0), ':');
  char path[sizeof s->arg];
  af_fmt(path, sizeof path, "%s", colon ? colon + 1 : "");
  mlir__spec_names(s, path);
  return 0;
}

/* ---- the matrix ---- */
