/*
 * mlir_tools.c: the tools an mlir-opt lowering runs, found and asked their version: mlir-opt
 * (named, $ASYNCFUZZ_MLIR_OPT, or Debian's), its runner and runner utils, libasyncfuzz_rt,
 * the ROCm device libraries and the toolkit rocdl code objects need; temporary directories.
 */
#define _GNU_SOURCE
#include "mlir_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

int mlir__exists_x(const char *p) {
  return access(p, X_OK) == 0;
}

int mlir_find_tool(const LowerSpec *spec, const char *name, const char *env_var, char *out,
                   size_t n) {
  const char *env = env_var ? getenv(env_var) : NULL;
  if (env && *env) {
    af_fmt(out, n, "%s", env);
    return mlir__exists_x(env);
  }
  char bin[PATH_MAX];
  if (!dir_of(spec->opt, bin, sizeof bin))
    return 0;
  char p[PATH_MAX + 64];
  af_fmt(p, sizeof p, "%s/%s", bin, name);
  if (!mlir__exists_x(p))
    af_fmt(p, sizeof p, "%s/%s-22", bin, name);
  if (!mlir__exists_x(p))
    return 0;
  af_fmt(out, n, "%s", p);
  return 1;
}

/* The runner's name: mlir-cpu-runner until LLVM 19, mlir-runner from LLVM 20. */
const char *mlir_runner_name(int major) {
  return major <= 0 || major >= 20 ? "mlir-runner" : "mlir-cpu-runner";
}

void mlir_jit_flag(const LowerSpec *spec, char *out, size_t n) {
  int lvl = spec->kind == LOWER_MLIR_OPT ? spec->jit_opt : 0;
  af_fmt(out, n, lvl >= 0 ? "-O%d" : "", lvl);
}

/* When p is readable: its real path into out, and 1. */
static int readable_at(const char *p, char *out, size_t n) {
  if (access(p, R_OK) != 0)
    return 0;
  char real[PATH_MAX];
  af_fmt(out, n, "%s", realpath(p, real) ? real : p);
  return 1;
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
    if (readable_at(p, out, n))
      return 1;
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
    if (readable_at(p, out, n))
      return 1;
  }
  return 0;
}

int mlir__ask_version(LowerSpec *s, AfErr *err) {
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
int mlir__find_rocm(char *out, size_t n) {
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
void mlir__rocdl_toolkit(LowerSpec *s) {
  char real[PATH_MAX], root[PATH_MAX], lld[PATH_MAX + 32], dir[PATH_MAX + 96], l[PATH_MAX + 128];
  s->code_object = 0;
  if (realpath(s->opt, real) == NULL || strrchr(real, '/') == NULL)
    return;
  *strrchr(real, '/') = '\0'; /* its bin/ */
  af_fmt(lld, sizeof lld, "%s/ld.lld", real);
  if (!mlir__exists_x(lld) || strrchr(real, '/') == NULL)
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
  if (!mlir__exists_x(l) || access(bc, R_OK) != 0)
    return;
  af_fmt(s->rocm, sizeof s->rocm, "%s", dir);
  s->code_object = 1;
}

/* The runner next to s->opt (or $ASYNCFUZZ_MLIR_RUNNER), its utils, and libasyncfuzz_rt. */
int mlir__find_runner(LowerSpec *s, AfErr *err) {
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
    if (!mlir__exists_x(s->runner))
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
  /* the tools' fork servers: libasyncfuzz_fs.so beside the runtime library, unless
   * ASYNCFUZZ_FORKSERVER=0 (base/forkserver.c) */
  const char *fs = getenv("ASYNCFUZZ_FORKSERVER");
  if (af_proc_servers_lib()[0] == '\0' && !(fs && strcmp(fs, "0") == 0)) {
    char dir[PATH_MAX], p[PATH_MAX + 32];
    af_fmt(dir, sizeof dir, "%s", s->rtlib);
    char *slash = strrchr(dir, '/');
    if (slash)
      *slash = '\0';
    af_fmt(p, sizeof p, "%s/libasyncfuzz_fs.so", slash ? dir : ".");
    af_proc_servers(p);
  }
  return 0;
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

int mlir__find_opt(const char *path, LowerSpec *s, AfErr *err) {
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
  return 0;
}
