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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

int lower_is_rocdl(const LowerSpec *spec) {
  return spec->kind == LOWER_MLIR_OPT && strcmp(spec->target, "rocdl") == 0;
}

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
  af_fmt(out, n, "%s", real);
  return 1;
}

static int exists_x(const char *p) {
  return access(p, X_OK) == 0;
}

int mlir_find_tool(const LowerSpec *spec, const char *name, const char *env_var, char *out,
                   size_t n) {
  const char *env = env_var ? getenv(env_var) : NULL;
  if (env && *env) {
    af_fmt(out, n, "%s", env);
    return exists_x(env);
  }
  char bin[PATH_MAX];
  if (!dir_of(spec->opt, bin, sizeof bin))
    return 0;
  char p[PATH_MAX + 64];
  af_fmt(p, sizeof p, "%s/%s", bin, name);
  if (!exists_x(p))
    af_fmt(p, sizeof p, "%s/%s-22", bin, name);
  if (!exists_x(p))
    return 0;
  af_fmt(out, n, "%s", p);
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
  af_fmt(out, n, lvl >= 0 ? "-O%d" : "", lvl);
}

/* The runner utils library of that LLVM, lib/libmlir_runner_utils.so[.MAJOR.1], if installed
 * (the modules asyncfuzz renders call none of it: it is passed to the runner only when found;
 * Debian 12's libmlir-19, which ships it for LLVM 19, cannot be installed with libmlir-22).
 * $ASYNCFUZZ_RUNNER_UTILS names one (it must exist). Returns 1 found, 0 none, -1 a bad env. */
static int find_utils(const char *bindir, int major, char *out, size_t n) {
  const char *env = getenv("ASYNCFUZZ_RUNNER_UTILS");
  out[0] = '\0';
  if (env && *env) {
    af_fmt(out, n, "%s", env);
    return access(env, R_OK) == 0 ? 1 : -1;
  }
  char names[2][64];
  af_fmt(names[0], sizeof names[0], "libmlir_runner_utils.so");
  af_fmt(names[1], sizeof names[1], "libmlir_runner_utils.so.%d.1", major);
  for (size_t i = 0; i < 2; i++) {
    char p[2048];
    af_fmt(p, sizeof p, "%s/../lib/%s", bindir, names[i]);
    if (access(p, R_OK) == 0) {
      char real[PATH_MAX];
      af_fmt(out, n, "%s", realpath(p, real) ? real : p);
      return 1;
    }
  }
  return 0;
}

/* libasyncfuzz_rt.so: $ASYNCFUZZ_RT_LIB, else next to (or below) the running executable. */
static int find_rtlib(char *out, size_t n) {
  const char *env = getenv("ASYNCFUZZ_RT_LIB");
  if (env && *env) {
    af_fmt(out, n, "%s", env);
    return access(env, R_OK) == 0;
  }
  char dir[PATH_MAX];
  if (!dir_of("/proc/self/exe", dir, sizeof dir))
    return 0;
  static const char *const rel[] = {"", "/..", "/../lib", "/../../lib"};
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
    char p[PATH_MAX + 64];
    af_fmt(p, sizeof p, "%s%s/libasyncfuzz_rt.so", dir, rel[i]);
    if (access(p, R_OK) == 0) {
      char real[PATH_MAX];
      af_fmt(out, n, "%s", realpath(p, real) ? real : p);
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
  af_fmt(outp, sizeof outp, "%s/version.txt", tdir);
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
  af_fmt(s->version, sizeof s->version, "%.*s", (int)len, line);
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
    af_fmt(p, sizeof p, "%s/amdgcn/bitcode/ockl.bc", d);
    if (access(p, R_OK) == 0) {
      af_fmt(out, n, "%s", d);
      return 1;
    }
    if (i < 0) {
      af_fmt(out, n, "%s", env);
      return -1;
    }
  }
  return 0;
}

/* rocdl: a code object needs the build's own ld.lld, which gpu-module-to-binary runs as
 * <toolkit>/llvm/bin/ld.lld, and the device libraries at <toolkit>/amdgcn/bitcode. So the
 * toolkit becomes a directory of two links, llvm to the build's LLVM and amdgcn to the device
 * libraries, in the user's cache: $XDG_CACHE_HOME (else ~/.cache, else $TMPDIR or /tmp)
 * /asyncfuzz/rocm-toolkit-HASH (made once, kept). Without ld.lld (Debian's lld-22 for LLVM 22)
 * s->rocm stays the device libraries' root and code_object 0. */
static void rocdl_toolkit(LowerSpec *s) {
  char real[PATH_MAX], root[PATH_MAX], lld[PATH_MAX + 32], dir[PATH_MAX + 96], l[PATH_MAX + 128];
  s->code_object = 0;
  if (realpath(s->opt, real) == NULL || strrchr(real, '/') == NULL)
    return;
  *strrchr(real, '/') = '\0'; /* its bin/ */
  af_fmt(lld, sizeof lld, "%s/ld.lld", real);
  if (!exists_x(lld) || strrchr(real, '/') == NULL)
    return;
  af_fmt(root, sizeof root, "%.*s", (int)(strrchr(real, '/') - real), real);
  uint64_t h = 1469598103934665603ull; /* FNV-1a of both targets */
  for (const char *p = root; *p; p++)
    h = (h ^ (unsigned char)*p) * 1099511628211ull;
  for (const char *p = s->rocm; *p; p++)
    h = (h ^ (unsigned char)*p) * 1099511628211ull;
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME"), *tmp = getenv("TMPDIR");
  if (xdg && *xdg)
    af_fmt(dir, sizeof dir, "%s", xdg);
  else if (home && *home)
    af_fmt(dir, sizeof dir, "%s/.cache", home);
  else
    af_fmt(dir, sizeof dir, "%s", tmp && *tmp ? tmp : "/tmp");
  mkdir(dir, 0700);
  af_fmt(dir + strlen(dir), sizeof dir - strlen(dir), "/asyncfuzz");
  mkdir(dir, 0700);
  af_fmt(dir + strlen(dir), sizeof dir - strlen(dir), "/rocm-toolkit-%016llx",
         (unsigned long long)h);
  mkdir(dir, 0700);
  char rocm[PATH_MAX + 16];
  af_fmt(rocm, sizeof rocm, "%s/amdgcn", s->rocm);
  af_fmt(l, sizeof l, "%s/llvm", dir);
  if (symlink(root, l) != 0 && errno != EEXIST)
    return;
  af_fmt(l, sizeof l, "%s/amdgcn", dir);
  if (symlink(rocm, l) != 0 && errno != EEXIST)
    return;
  af_fmt(l, sizeof l, "%s/llvm/bin/ld.lld", dir);
  char bc[PATH_MAX + 160];
  af_fmt(bc, sizeof bc, "%s/amdgcn/bitcode/ockl.bc", dir);
  if (!exists_x(l) || access(bc, R_OK) != 0)
    return;
  af_fmt(s->rocm, sizeof s->rocm, "%s", dir);
  s->code_object = 1;
}

/* The pipeline of named variant vi for target (nvvm, rocdl: with the ROCm toolkit rocm). A
 * rocdl module becomes a code object (format=bin) where the build's ld.lld is there, else LLVM
 * bitcode (format=llvm); either way the host loads it with mgpuModuleLoad, as MLIR's ROCm
 * wrappers require (isa would call mgpuModuleLoadJIT, which they lack). */
static void compose(int vi, const char *target, const char *rocm, int bin, char *out, size_t n) {
  if (strcmp(target, "rocdl") != 0) {
    af_fmt(out, n, "%s", variants[vi].pipeline);
    return;
  }
  af_fmt(out, n,
         "builtin.module(%sgpu.module(strip-debuginfo,convert-scf-to-cf,convert-gpu-to-rocdl),"
         "rocdl-attach-target{chip=gfx90a}," MLIR_HOST_HEAD
         "gpu-module-to-binary{format=%s toolkit=%s}," MLIR_HOST_TAIL ")",
         vi ? "func.func(gpu-async-region)," : "", bin ? "bin" : "llvm", rocm);
}

const char *mlir_llvm_version(const LowerSpec *s) {
  const char *v = strstr(s->version, "version ");
  return v ? v + 8 : s->version;
}

/* name, family and arg from the spec's parts; path: as the user named the build ("": found) */
static void spec_names(LowerSpec *s, const char *path) {
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
    size_t len = strcspn(p, ":+/");
    af_fmt(variant, vn, "%.*s", (int)len, p);
    p += len;
  }
  if (*p == '/') { /* the target */
    p++;
    size_t len = strcspn(p, ":+");
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
    size_t len = strcspn(p, ":");
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
    af_fmt(s->runner, sizeof s->runner, "%s/%s", bindir, mlir_runner_name(s->major));
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
  af_fmt(s->variant, sizeof s->variant, "%s", variant);
  if (lower_is_rocdl(s)) {
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
  if (lower_is_rocdl(s))
    rocdl_toolkit(s);
  compose(vi, s->target, s->rocm, s->code_object, s->pipeline, sizeof s->pipeline);
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
  af_fmt(s->pipeline, sizeof s->pipeline, "%s", pipeline);
  af_fmt(s->variant, sizeof s->variant, "custom");
  const char *colon = strchr(s->arg + (s->matrix ? 7 : 0), ':');
  char path[sizeof s->arg];
  af_fmt(path, sizeof path, "%s", colon ? colon + 1 : "");
  spec_names(s, path);
  return 0;
}

/* ---- the matrix ---- */

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
    if (!exists_x(p))
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
      if (!exists_x(path))
        af_fmt(path, sizeof path, "%s/bin/mlir-opt", item);
      if (!exists_x(path))
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
  af_fmt(out->variant, sizeof out->variant, "%s", custom ? "custom" : variants[vi].name);
  if (strcmp(target, "rocdl") == 0) {
    int r = find_rocm(out->rocm, sizeof out->rocm);
    if (r <= 0)
      return af_err_set(err, AF_EINVALID,
                        "the rocdl target needs the ROCm device libraries (apt-get install "
                        "rocm-device-libs; scripts/bootstrap.sh does), or ASYNCFUZZ_ROCM_PATH "
                        "naming a ROCm with amdgcn/bitcode%s%s",
                        r < 0 ? ": it has none: " : "", r < 0 ? out->rocm : "");
    rocdl_toolkit(out);
  }
  if (custom)
    af_fmt(out->pipeline, sizeof out->pipeline, "%s", custom);
  else
    compose(vi, target, out->rocm, out->code_object, out->pipeline, sizeof out->pipeline);
  spec_names(out, "");
  return 0;
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
  int nb = 0;
  int rc = ax->builds ? named_builds(ax->builds, b, MAXB, &nb, err)
                      : found_builds(b, MAXB, &nb, notes, nn, err);
  for (int i = 0; rc == 0 && i < nb; i++)
    for (int j = 0; rc == 0 && j < i; j++)
      if (strcmp(b[i].version, b[j].version) == 0)
        rc = af_err_set(err, AF_EUSAGE,
                        "builds %s and %s are both \"%s\": a matrix names each build by its "
                        "version, so name one of them only",
                        b[j].opt, b[i].opt, b[i].version);
  if (rc == 0 && ax->custom && ax->pipelines)
    rc = af_err_set(err, AF_EUSAGE,
                    "--pipeline replaces the matrix's pipelines: leave out --matrix pipelines=");
  /* the other axes */
  int vis[8], nv = 0, jits[8], nj = 0;
  const char *tgs[2];
  int nt = 0;
  char item[64];
  const char *l = ax->pipelines ? ax->pipelines : ax->custom ? "custom" : "default,async-region";
  while (rc == 0 && next_item(&l, item, sizeof item) && nv < 8) {
    int vi = -1;
    for (int i = 0; i < NVARIANTS; i++)
      if (strcmp(variants[i].name, item) == 0)
        vi = i;
    if (strcmp(item, "custom") == 0 && ax->custom)
      vi = 0;
    if (vi < 0)
      rc = af_err_set(err, AF_EUSAGE,
                      "--matrix pipelines: unknown pipeline \"%s\" (default, async-region%s)", item,
                      ax->custom ? ", custom: --pipeline's" : "");
    vis[nv++] = vi;
  }
  char rocm[PATH_MAX];
  int have_rocm = find_rocm(rocm, sizeof rocm) > 0;
  int runs_rocdl = ax->runs == NULL || strstr(ax->runs, "rocdl") != NULL;
  int runs_nvvm = ax->runs == NULL || strstr(ax->runs, "nvvm") != NULL;
  l = ax->targets                 ? ax->targets
      : !runs_nvvm                ? "rocdl"
      : !runs_rocdl || !have_rocm ? "nvvm"
                                  : "nvvm,rocdl";
  if (!ax->targets && runs_rocdl && runs_nvvm && !have_rocm)
    af_fmt(notes + strlen(notes), nn - strlen(notes),
           "%sno rocdl: the ROCm device libraries are not installed (rocm-device-libs)",
           notes[0] ? "; " : "");
  while (rc == 0 && next_item(&l, item, sizeof item) && nt < 2) {
    if (strcmp(item, "nvvm") && strcmp(item, "rocdl"))
      rc =
          af_err_set(err, AF_EUSAGE, "--matrix targets: unknown target \"%s\" (nvvm, rocdl)", item);
    else if (!(strcmp(item, "rocdl") == 0 ? runs_rocdl : runs_nvvm))
      rc = af_err_set(err, AF_EUSAGE, "--matrix targets: the backend runs %s code only", ax->runs);
    else
      tgs[nt++] = strcmp(item, "nvvm") == 0 ? "nvvm" : "rocdl";
  }
  l = ax->jit ? ax->jit : "O0,Odefault";
  while (rc == 0 && next_item(&l, item, sizeof item) && nj < 8) {
    if (strcmp(item, "Odefault") == 0)
      jits[nj++] = -1;
    else if (strlen(item) == 2 && item[0] == 'O' && item[1] >= '0' && item[1] <= '3')
      jits[nj++] = item[1] - '0';
    else
      rc = af_err_set(err, AF_EUSAGE,
                      "--matrix jit: unknown level \"%s\" (O0, O1, O2, O3, Odefault)", item);
  }
  for (int i = 0; rc == 0 && i < nv + nt + nj; i++) /* each value once */
    for (int j = 0; rc == 0 && j < i; j++) {
      int same = i < nv                         ? vis[i] == vis[j]
                 : i < nv + nt && j >= nv       ? tgs[i - nv] == tgs[j - nv]
                 : i >= nv + nt && j >= nv + nt ? jits[i - nv - nt] == jits[j - nv - nt]
                                                : 0;
      if (same)
        rc = af_err_set(err, AF_EUSAGE, "--matrix: %s names a value twice",
                        i < nv        ? "pipelines"
                        : i < nv + nt ? "targets"
                                      : "jit");
    }
  int n = nb * nv * nt * nj;
  LowerSpec *m = rc == 0 ? af_calloc((size_t)(n ? n : 1), sizeof *m) : NULL;
  if (rc == 0 && m == NULL)
    rc = af_err_set(err, AF_ENOMEM, "out of memory");
  int k = 0;
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

int mlir_tmpdir(char *out, size_t n, AfErr *err) {
  const char *base = getenv("TMPDIR");
  if (base == NULL || *base == '\0')
    base = "/tmp";
  af_fmt(out, n, "%s/asyncfuzz-XXXXXX", base);
  if (mkdtemp(out) == NULL)
    return af_err_set(err, AF_EIO, "cannot create a temporary directory in %s: %s", base,
                      strerror(errno));
  return 0;
}
