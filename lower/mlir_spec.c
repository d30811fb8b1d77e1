/*
 * mlir_spec.c: an mlir-opt lowering's configuration (mlir.h): its pipelines and targets,
 * finding the tools and asking their version, parsing a spec, and the matrix of
 * configurations a campaign rotates through.
 */
#define _GNU_SOURCE
#include "mlir.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* snprintf where cutting short is intended (long paths) */
__attribute__((format(printf, 3, 4))) static void fmt(char *out, size_t n, const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  vsnprintf(out, n, f, ap);
  va_end(ap);
}

/* The kernels' pipeline and the host's, as upstream's GPU integration tests run them, in one
 * --pass-pipeline (gpu-module-to-binary emits PTX text: no CUDA is needed to compile). The host
 * part starts with expand-strided-metadata, as upstream's gpu-lower-to-nvvm-pipeline does: no
 * later pass lowers a memref.subview, so without it every view would stay unconverted. */
#define MLIR_KERNELS                                                                               \
  "gpu.module(strip-debuginfo,convert-scf-to-cf,convert-gpu-to-nvvm),nvvm-attach-target"
#define MLIR_HOST_HEAD "expand-strided-metadata,gpu-to-llvm,reconcile-unrealized-casts,"
#define MLIR_HOST_TAIL                                                                             \
  "async-to-async-runtime,async-runtime-ref-counting,convert-async-to-llvm,convert-scf-to-cf,"     \
  "convert-func-to-llvm,convert-arith-to-llvm,convert-cf-to-llvm,finalize-memref-to-llvm,"         \
  "reconcile-unrealized-casts"
#define MLIR_HOST MLIR_HOST_HEAD "gpu-module-to-binary{format=isa}," MLIR_HOST_TAIL

static const struct {
  const char *name, *desc, *pipeline;
} variants[] = {
    {"default", "upstream's GPU integration-test pipeline",
     "builtin.module(" MLIR_KERNELS "," MLIR_HOST ")"},
    {"async-region", "gpu-async-region on every function first, then the default pipeline",
     "builtin.module(func.func(gpu-async-region)," MLIR_KERNELS "," MLIR_HOST ")"},
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

/* ---- finding the tools ---- */

static int dir_of(const char *path, char *out, size_t n) {
  char real[PATH_MAX];
  if (realpath(path, real) == NULL)
    return 0;
  char *slash = strrchr(real, '/');
  if (slash == NULL)
    return 0;
  *slash = '\0';
  fmt(out, n, "%s", real);
  return 1;
}

static int exists_x(const char *p) {
  return access(p, X_OK) == 0;
}

int mlir_find_tool(const LowerSpec *spec, const char *name, const char *env_var, char *out,
                   size_t n) {
  const char *env = env_var ? getenv(env_var) : NULL;
  if (env && *env) {
    fmt(out, n, "%s", env);
    return exists_x(env);
  }
  char bin[PATH_MAX];
  if (!dir_of(spec->opt, bin, sizeof bin))
    return 0;
  char p[PATH_MAX + 64];
  fmt(p, sizeof p, "%s/%s", bin, name);
  if (!exists_x(p))
    fmt(p, sizeof p, "%s/%s-22", bin, name);
  if (!exists_x(p))
    return 0;
  fmt(out, n, "%s", p);
  return 1;
}

/* What differs between the LLVM releases asyncfuzz drives, in one place: the oldest it takes
 * (gpu-module-to-binary and the async lowering as the pipelines use them: LLVM 19), and the
 * runner's name (mlir-cpu-runner until LLVM 19, mlir-runner from LLVM 20). The pipelines'
 * passes have the same names in all of them. */
#define MLIR_OLDEST_MAJOR 19
const char *mlir_runner_name(int major) {
  return major <= 0 || major >= 20 ? "mlir-runner" : "mlir-cpu-runner";
}

void mlir_jit_flag(const LowerSpec *spec, char *out, size_t n) {
  int lvl = spec->kind == LOWER_MLIR_OPT ? spec->jit_opt : 0;
  fmt(out, n, lvl >= 0 ? "-O%d" : "", lvl);
}

/* The runner utils library of that LLVM, lib/libmlir_runner_utils.so[.MAJOR.1], if installed
 * (the modules asyncfuzz renders call none of it: it is passed to the runner only when found;
 * Debian 12's libmlir-19, which ships it for LLVM 19, cannot be installed with libmlir-22).
 * $ASYNCFUZZ_RUNNER_UTILS names one (it must exist). Returns 1 found, 0 none, -1 a bad env. */
static int find_utils(const char *bindir, int major, char *out, size_t n) {
  const char *env = getenv("ASYNCFUZZ_RUNNER_UTILS");
  out[0] = '\0';
  if (env && *env) {
    fmt(out, n, "%s", env);
    return access(env, R_OK) == 0 ? 1 : -1;
  }
  char names[2][64];
  fmt(names[0], sizeof names[0], "libmlir_runner_utils.so");
  fmt(names[1], sizeof names[1], "libmlir_runner_utils.so.%d.1", major);
  for (size_t i = 0; i < 2; i++) {
    char p[2048];
    fmt(p, sizeof p, "%s/../lib/%s", bindir, names[i]);
    if (access(p, R_OK) == 0) {
      char real[PATH_MAX];
      fmt(out, n, "%s", realpath(p, real) ? real : p);
      return 1;
    }
  }
  return 0;
}

/* libasyncfuzz_rt.so: $ASYNCFUZZ_RT_LIB, else next to (or below) the running executable. */
static int find_rtlib(char *out, size_t n) {
  const char *env = getenv("ASYNCFUZZ_RT_LIB");
  if (env && *env) {
    fmt(out, n, "%s", env);
    return access(env, R_OK) == 0;
  }
  char dir[PATH_MAX];
  if (!dir_of("/proc/self/exe", dir, sizeof dir))
    return 0;
  static const char *const rel[] = {"", "/..", "/../lib", "/../../lib"};
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
    char p[PATH_MAX + 64];
    fmt(p, sizeof p, "%s%s/libasyncfuzz_rt.so", dir, rel[i]);
    if (access(p, R_OK) == 0) {
      char real[PATH_MAX];
      fmt(out, n, "%s", realpath(p, real) ? real : p);
      return 1;
    }
  }
  return 0;
}

static int ask_version(LowerSpec *s, AfErr *err) {
  char tdir[4096];
  if (mlir_tmpdir(tdir, sizeof tdir, err))
    return err->rc;
  char outp[4200];
  fmt(outp, sizeof outp, "%s/version.txt", tdir);
  char *argv[] = {s->opt, "--version", NULL};
  ProcResult r;
  int rc = af_proc_run(argv, NULL, NULL, outp, outp, 60, &r, err);
  char *text = NULL;
  if (rc == 0)
    rc = af_read_file(outp, &text, NULL, err);
  af_rm_tree(tdir);
  if (rc)
    return rc;
  if (!r.exited || r.code != 0) {
    af_free(text);
    return af_err_set(err, AF_EINVALID,
                      "%s --version failed (%s %d): is it an mlir-opt? Install mlir-22-tools or "
                      "name one with --lowering mlir-opt:PATH",
                      s->opt, r.exited ? "exit" : "signal", r.exited ? r.code : r.sig);
  }
  const char *v = strstr(text, "LLVM version ");
  if (v == NULL) {
    af_free(text);
    return af_err_set(err, AF_EINVALID,
                      "%s --version does not name an LLVM version: is it an mlir-opt?", s->opt);
  }
  const char *line = v;
  while (line > text && line[-1] != '\n')
    line--;
  while (*line == ' ')
    line++;
  size_t len = strcspn(line, "\n");
  fmt(s->version, sizeof s->version, "%.*s", (int)len, line);
  s->major = atoi(v + 13);
  af_free(text);
  if (s->major < MLIR_OLDEST_MAJOR)
    return af_err_set(err, AF_EINVALID,
                      "%s is %s; asyncfuzz needs LLVM %d or newer (gpu-module-to-binary and the "
                      "async lowering as its pipelines use them): install mlir-22-tools or name "
                      "a newer build with --lowering mlir-opt:PATH",
                      s->opt, s->version, MLIR_OLDEST_MAJOR);
  return 0;
}

/* The ROCm device libraries that gpu-module-to-binary links into rocdl code, at
 * TOOLKIT/amdgcn/bitcode: $ASYNCFUZZ_ROCM_PATH (it must have them), /opt/rocm, or Debian's
 * rocm-device-libs under the multiarch library directory. 1 and out filled, 0 none, -1 a bad
 * env. */
static int find_rocm(char *out, size_t n) {
  const char *env = getenv("ASYNCFUZZ_ROCM_PATH");
  static const char *const dirs[] = {"/opt/rocm", "/usr/lib/x86_64-linux-gnu",
                                     "/usr/lib/aarch64-linux-gnu", "/usr/lib"};
  int ndirs = (int)(sizeof dirs / sizeof dirs[0]);
  for (int i = env && *env ? -1 : 0; i < ndirs; i++) {
    const char *d = i < 0 ? env : dirs[i];
    char p[PATH_MAX + 32];
    fmt(p, sizeof p, "%s/amdgcn/bitcode/ockl.bc", d);
    if (access(p, R_OK) == 0) {
      fmt(out, n, "%s", d);
      return 1;
    }
    if (i < 0) {
      fmt(out, n, "%s", env);
      return -1;
    }
  }
  return 0;
}

/* The pipeline of named variant vi for target (nvvm, rocdl: with the ROCm toolkit rocm). A
 * rocdl module is compiled to LLVM bitcode (format=llvm: the host loads it with mgpuModuleLoad,
 * as MLIR's ROCm wrappers require; isa would call mgpuModuleLoadJIT, which they lack). */
static void compose(int vi, const char *target, const char *rocm, char *out, size_t n) {
  if (strcmp(target, "rocdl") != 0) {
    fmt(out, n, "%s", variants[vi].pipeline);
    return;
  }
  fmt(out, n,
      "builtin.module(%sgpu.module(strip-debuginfo,convert-scf-to-cf,convert-gpu-to-rocdl),"
      "rocdl-attach-target{chip=gfx90a}," MLIR_HOST_HEAD
      "gpu-module-to-binary{format=llvm toolkit=%s}," MLIR_HOST_TAIL ")",
      vi ? "func.func(gpu-async-region)," : "", rocm);
}

const char *mlir_llvm_version(const LowerSpec *s) {
  const char *v = strstr(s->version, "version ");
  return v ? v + 8 : s->version;
}

/* name, family and arg from the spec's parts; path: as the user named the build ("": found) */
static void spec_names(LowerSpec *s, const char *path) {
  char lvl[16] = "", base[160]; /* the level is named unless -O0, as before levels existed */
  if (s->jit_opt != 0)
    fmt(lvl, sizeof lvl, s->jit_opt < 0 ? "+Odefault" : "+O%d", s->jit_opt);
  const char *tg = strcmp(s->target, "nvvm") == 0 ? "" : "/";
  fmt(base, sizeof base, "%s%s%s%s%s", strcmp(s->variant, "default") ? "@" : "",
      strcmp(s->variant, "default") ? s->variant : "", tg, *tg ? s->target : "", lvl);
  if (s->matrix) { /* a configuration of the matrix: named by its build, signatures by none */
    fmt(s->name, sizeof s->name, "mlir-opt-%s%s", mlir_llvm_version(s), base);
    fmt(s->family, sizeof s->family, "mlir-opt");
    fmt(s->arg, sizeof s->arg, "matrix:mlir-opt%s:%s", base, s->opt);
    return;
  }
  fmt(s->name, sizeof s->name, "mlir-opt%s", base);
  fmt(s->family, sizeof s->family, "%s", s->name);
  if (path[0])
    fmt(s->arg, sizeof s->arg, "%s:%s", s->name, path);
  else
    fmt(s->arg, sizeof s->arg, "%s", s->name);
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
  fmt(variant, vn, "default");
  fmt(s->target, sizeof s->target, "nvvm");
  if (*p == '@') {
    p++;
    size_t len = strcspn(p, ":+/");
    fmt(variant, vn, "%.*s", (int)len, p);
    p += len;
  }
  if (*p == '/') { /* the target */
    p++;
    size_t len = strcspn(p, ":+");
    char tg[32];
    fmt(tg, sizeof tg, "%.*s", (int)len, p);
    p += len;
    if (strcmp(tg, "nvvm") != 0 && strcmp(tg, "rocdl") != 0)
      return af_err_set(err, AF_EUSAGE, "unknown target \"%s\" in %s (targets: nvvm, rocdl)", tg,
                        str);
    fmt(s->target, sizeof s->target, "%s", tg);
  }
  if (*p == '+') { /* the runner's JIT optimization level */
    p++;
    size_t len = strcspn(p, ":");
    char jit[32];
    fmt(jit, sizeof jit, "%.*s", (int)len, p);
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

/* The runner next to s->opt (or $ASYNCFUZZ_MLIR_RUNNER), its utils, and libasyncfuzz_rt. */
static int find_runner(LowerSpec *s, AfErr *err) {
  char bindir[PATH_MAX];
  if (!dir_of(s->opt, bindir, sizeof bindir))
    return af_err_set(err, AF_EINVALID, "cannot resolve %s: %s", s->opt, strerror(errno));
  const char *renv = getenv("ASYNCFUZZ_MLIR_RUNNER");
  if (renv && *renv) {
    if (!af_find_exe(renv, s->runner, sizeof s->runner))
      return af_err_set(err, AF_EINVALID, "ASYNCFUZZ_MLIR_RUNNER=%s: not found or not executable",
                        renv);
  } else {
    fmt(s->runner, sizeof s->runner, "%s/%s", bindir, mlir_runner_name(s->major));
    if (!exists_x(s->runner))
      return af_err_set(err, AF_EINVALID,
                        "%s not found next to %s (%s, in %s): install mlir-%d-tools, or set "
                        "ASYNCFUZZ_MLIR_RUNNER",
                        mlir_runner_name(s->major), s->opt, s->version, bindir, s->major);
  }
  if (find_utils(bindir, s->major, s->utils, sizeof s->utils) < 0)
    return af_err_set(err, AF_EINVALID, "ASYNCFUZZ_RUNNER_UTILS=%s: not found or not readable",
                      s->utils);
  if (!find_rtlib(s->rtlib, sizeof s->rtlib))
    return af_err_set(err, AF_EINVALID,
                      "libasyncfuzz_rt.so not found next to the asyncfuzz executable: set "
                      "ASYNCFUZZ_RT_LIB");
  return 0;
}

int lower_mlir_spec_parse(const char *str, LowerSpec *s, AfErr *err) {
  memset(s, 0, sizeof *s);
  s->kind = LOWER_MLIR_OPT;
  s->timeout = 60;
  const char *t = getenv("ASYNCFUZZ_TOOL_TIMEOUT");
  if (t && atof(t) > 0)
    s->timeout = atof(t);
  char variant[64];
  const char *path = "";
  int rc = parse_parts(str, s, variant, sizeof variant, &path, err);
  if (rc)
    return rc;
  int vi = -1;
  for (int i = 0; i < NVARIANTS; i++)
    if (strcmp(variants[i].name, variant) == 0)
      vi = i;
  if (vi < 0) {
    AfBuf b;
    af_buf_init(&b);
    for (int i = 0; i < NVARIANTS; i++)
      af_buf_printf(&b, "%s%s", i ? ", " : "", variants[i].name);
    rc = af_err_set(err, AF_EUSAGE, "unknown mlir-opt pipeline \"%s\" (named pipelines: %s)",
                    variant, b.p ? b.p : "");
    af_buf_free(&b);
    return rc;
  }
  fmt(s->variant, sizeof s->variant, "%s", variant);
  if (strcmp(s->target, "rocdl") == 0) {
    int r = find_rocm(s->rocm, sizeof s->rocm);
    if (r <= 0)
      return af_err_set(err, AF_EINVALID,
                        r < 0 ? "ASYNCFUZZ_ROCM_PATH=%s has no amdgcn/bitcode/ockl.bc (the ROCm "
                                "device libraries that rocdl code links)"
                              : "the rocdl target needs the ROCm device libraries%s (apt-get "
                                "install rocm-device-libs; scripts/bootstrap.sh does), or "
                                "ASYNCFUZZ_ROCM_PATH naming a ROCm with amdgcn/bitcode",
                        s->rocm);
  }
  compose(vi, s->target, s->rocm, s->pipeline, sizeof s->pipeline);
  if (*path) {
    if (!af_find_exe(path, s->opt, sizeof s->opt))
      return af_err_set(err, AF_EINVALID, "mlir-opt %s not found or not executable", path);
  } else {
    const char *env = getenv("ASYNCFUZZ_MLIR_OPT");
    int found = 0;
    if (env && *env) {
      found = af_find_exe(env, s->opt, sizeof s->opt);
      if (!found)
        return af_err_set(err, AF_EINVALID, "ASYNCFUZZ_MLIR_OPT=%s: not found or not executable",
                          env);
    }
    if (!found)
      found = af_find_exe("mlir-opt-22", s->opt, sizeof s->opt) ||
              af_find_exe("/usr/lib/llvm-22/bin/mlir-opt", s->opt, sizeof s->opt) ||
              af_find_exe("mlir-opt", s->opt, sizeof s->opt);
    if (!found)
      return af_err_set(err, AF_EINVALID,
                        "mlir-opt not found: install Debian's mlir-22-tools (apt-get install "
                        "mlir-22-tools; scripts/bootstrap.sh does), or name one with --lowering "
                        "mlir-opt:PATH or ASYNCFUZZ_MLIR_OPT");
  }
  rc = ask_version(s, err);
  if (rc == 0)
    rc = find_runner(s, err);
  spec_names(s, path);
  return rc;
}

int lower_spec_set_pipeline(LowerSpec *s, const char *pipeline, AfErr *err) {
  if (s->kind != LOWER_MLIR_OPT)
    return af_err_set(err, AF_EUSAGE, "--pipeline applies to mlir-opt lowerings only");
  if (strlen(pipeline) >= sizeof s->pipeline)
    return af_err_set(err, AF_EUSAGE, "--pipeline: too long");
  fmt(s->pipeline, sizeof s->pipeline, "%s", pipeline);
  fmt(s->variant, sizeof s->variant, "custom");
  const char *colon = strchr(s->arg + (s->matrix ? 7 : 0), ':');
  char path[sizeof s->arg];
  fmt(path, sizeof path, "%s", colon ? colon + 1 : "");
  spec_names(s, path);
  return 0;
}

int mlir_tmpdir(char *out, size_t n, AfErr *err) {
  const char *base = getenv("TMPDIR");
  if (base == NULL || *base == '\0')
    base = "/tmp";
  fmt(out, n, "%s/asyncfuzz-XXXXXX", base);
  if (mkdtemp(out) == NULL)
    return af_err_set(err, AF_EIO, "cannot create a temporary directory in %s: %s", base,
                      strerror(errno));
  return 0;
}
