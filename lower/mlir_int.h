/*
 * mlir_int.h: internals of the mlir-opt lowering's configuration, shared by mlir_spec.c (named
 * pipelines, parsing a spec), mlir_tools.c (finding the tools) and mlir_matrix.c (the matrix
 * of configurations). Nothing outside lower/ includes it.
 */
#ifndef LOWER_MLIR_INT_H
#define LOWER_MLIR_INT_H

#include "mlir.h"

#include <stddef.h>

/* What differs between the LLVM releases asyncfuzz drives, in one place: the oldest it takes
 * (gpu-module-to-binary and the async lowering as the pipelines use them: LLVM 19), and the
 * runner's name (mlir-cpu-runner until LLVM 19, mlir-runner from LLVM 20). The pipelines'
 * passes have the same names in all of them. */
#define MLIR_OLDEST_MAJOR 19

/* ---- mlir_tools.c ---- */

/* Whether path is an executable file. */
int mlir__exists_x(const char *path);
/* mlir-opt into s->opt: path when named (""), else $ASYNCFUZZ_MLIR_OPT, else LLVM 22's or the
 * PATH's. 0, or AF_EINVALID saying what to install. */
int mlir__find_opt(const char *path, LowerSpec *s, AfErr *err);
/* s->version and s->major from s->opt --version; refuses an LLVM older than MLIR_OLDEST_MAJOR. */
int mlir__ask_version(LowerSpec *s, AfErr *err);
/* The runner next to s->opt (or $ASYNCFUZZ_MLIR_RUNNER), its utils, and libasyncfuzz_rt. */
int mlir__find_runner(LowerSpec *s, AfErr *err);
/* The ROCm device libraries' root into out: 1 found, 0 none, -1 $ASYNCFUZZ_ROCM_PATH has none. */
int mlir__find_rocm(char *out, size_t n);
/* The toolkit rocdl code objects need (s->rocm, s->code_object). */
void mlir__rocdl_toolkit(LowerSpec *s);

/* ---- mlir_spec.c ---- */

/* The pipeline of named variant vi for target (nvvm, rocdl: with the ROCm toolkit rocm; bin: a
 * code object, else LLVM bitcode). */
void mlir__compose(int vi, const char *target, const char *rocm, int bin, char *out, size_t n);
/* s's name, family and arg from its parts; path: the build as the user named it ("": found). */
void mlir__spec_names(LowerSpec *s, const char *path);

/* ---- mlir_feat.c: features (base/feat.h) ---- */

/* Where features are on: the --log-actions-to argument for an mlir-opt whose output is out_path
 * (into arg), else "". batch: a --split-input-file run, whose log is read as it is written. */
void mlir__feat_arg(const char *out_path, int batch, char *arg, size_t n);
/* ... and, after that run, the features of its action log (which it removes); keep 0: the log
 * is removed, its features not counted. */
void mlir__feat_take(const char *out_path, int keep);
/* LLVM 19's chunk-relative locations rewritten to the file's own lines (mlir_tag.c); NULL when
 * out of memory. */
char *mlir__unsplit_locs(const char *text);

/* ---- mlir_kcache.c: the kernel cache (mlir.h) ---- */

/* Whether spec's runs use the kernel cache: a named pipeline, and not ASYNCFUZZ_KERNEL_CACHE=0. */
int mlir__kcache_on(const LowerSpec *spec);
/* text with each gpu.module the cache holds for spec replaced by its gpu.binary (on the module's
 * first line, its other lines left empty: every later line keeps its number); NULL when none is
 * held (text is used as it is). The caller frees it. *missed (where not NULL): whether text holds
 * a module the cache lacks (the run's output has a binary to take). */
char *mlir__kcache_apply(const LowerSpec *spec, const char *text, int *missed);
/* After a run of spec that lowered in (the text before mlir__kcache_apply) to out[0..n): the
 * gpu.binary of each gpu.module of in that the cache lacks. */
void mlir__kcache_take(const LowerSpec *spec, const char *in, const char *out, size_t n);

#endif
