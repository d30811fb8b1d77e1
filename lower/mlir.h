/*
 * mlir.h: the real lowering, MLIR's own passes run by an mlir-opt binary (Debian's
 * mlir-22-tools by default, or any build the user names), and mlir-runner to execute what
 * they produce against libasyncfuzz_rt.
 *
 * Lowering is by group (batch/ holds something else: batches compiled ahead of time): the
 * cases of a group go to one mlir-opt process as chunks of one --split-input-file input, so a
 * case that mlir-opt rejects costs only its own chunk. A group whose mlir-opt crashes is lowered
 * again by halves (a group of fewer than 4: one case per process), one that times out one case
 * per process, which isolates the cases responsible. Outcomes:
 *   MLIR_OK           fully converted to the LLVM dialect: runnable
 *   MLIR_REJECTED     mlir-opt failed with a diagnostic located in the case
 *   MLIR_UNCONVERTED  mlir-opt succeeded but gpu/async ops or unrealized casts remain
 *   MLIR_CRASH        mlir-opt died by a signal on this case alone
 *   MLIR_TIMEOUT      mlir-opt ran past its limit on this case alone
 * and a root cause made of op shapes (an op's name, `async` and how many dependencies: 0, 1
 * or 2+) and the normalized message, never SSA names, sizes or seeds.
 */
#ifndef LOWER_MLIR_H
#define LOWER_MLIR_H

#include "../base/proc.h"
#include "lower.h"

enum { MLIR_OK, MLIR_REJECTED, MLIR_UNCONVERTED, MLIR_CRASH, MLIR_TIMEOUT };

typedef struct MlirLowered {
  int outcome;      /* MLIR_* */
  char cause[200];  /* root cause, e.g. "gpu.launch_func async deps=2+|failed to legalize ..." */
  char detail[768]; /* the diagnostic or crash report's top, as mlir-opt wrote it */
  char form[200];   /* rejected, unconverted: the cause with the op's whole shape, dependency
                       count kept ("gpu.memcpy async deps=0,gpu.memcpy async deps=2+": each
                       form of the cause's op left unconverted), the detailed form; else "" */
  char *code;       /* MLIR_OK: the lowered module (runnable on its own), owned */
  int first_line;   /* the line of mlir-opt's input where the case's chunk began (0, 1: the
                       first), which the locations in code count from */
} MlirLowered;

/* The kernel cache (mlir_kcache.c): a gpu.module that a configuration (mlir-opt and a named
 * pipeline) has compiled once in this process is not compiled again: later inputs get its
 * gpu.binary in its place before mlir-opt reads them, with its location and line count, so the
 * output is what the whole pipeline gives. ASYNCFUZZ_KERNEL_CACHE=0 turns it off. Counts: inputs'
 * modules found compiled, not found, and entries held. */
void mlir_kcache_counts(long *hits, long *misses, long *stored);
/* Empties the kernel cache and its counts. */
void mlir_kcache_clear(void);

/* Named pipelines: "default", "async-region". */
/* The runner's name in LLVM `major` ("mlir-cpu-runner" before LLVM 20, then "mlir-runner"); 0:
 * the newest. */
const char *mlir_runner_name(int major);
/* The runner's optimization flag for spec ("-O0".."-O3"), or "" for the runner's own level. */
void mlir_jit_flag(const LowerSpec *spec, char *out, size_t n);
int mlir_variant_count(void);
const char *mlir_variant_name(int i);
const char *mlir_variant_desc(int i);
const char *mlir_variant_pipeline(int i);

/* Lowers chunks[0..n) (each a whole module, from gen_render_mlir_group of one case) with the
 * spec's pipeline, working in directory dir. out[i] is filled for every case. Returns 0, or
 * an error when mlir-opt could not be run at all. */
int mlir_lower_group(const LowerSpec *spec, const char *dir, char *const *chunks, int n,
                     MlirLowered *out, AfErr *err);
/* For the rocdl target, the rendered module's kernels lose their #nvvm.target (in place; lines
 * keep their numbers): rocdl-attach-target gives them theirs, and an NVVM attribute anywhere
 * loads the NVVM dialect, which changes how gpu-to-llvm lowers the host code. Unchanged for
 * other targets. mlir_lower_group and mlir_lower_file (on its input file) call it. */
void mlir_retarget(const LowerSpec *spec, char *text);
/* The LLVM version of an mlir-opt spec, e.g. "22.1.8" (its version string after "version "). */
const char *mlir_llvm_version(const LowerSpec *spec);
/* Lowers the module in in_path to out_path (no splitting). *r says how mlir-opt ended. */
int mlir_lower_file(const LowerSpec *spec, const char *in_path, const char *out_path,
                    const char *err_path, double timeout_s, ProcResult *r, AfErr *err);
/* Runs a lowered module under mlir-runner against libasyncfuzz_rt, with env ("NAME=VALUE",
 * NULL-terminated) for the runtime library. */
int mlir_run_file(const LowerSpec *spec, const char *path, char *const env[], const char *out_path,
                  const char *err_path, double timeout_s, ProcResult *r, AfErr *err);
/* The top of a crash report (an assertion, an LLVM ERROR, or else the first named frame that is
 * not the signal handler's, with the first op's method below it: "in mlir::IntegerAttr::getValue
 * from mlir::memref::ReinterpretCastOp::build"), normalized: no paths, addresses or numbers. */
void mlir_crash_cause(const char *report, char *out, size_t n);
/* The shape of the op on `line` of a program (all: its text), as lowering verdicts name ops
 * ("gpu.memcpy async deps=1"); a call by its callee ("func.call @printMemrefF32"). */
void mlir_line_shape(const char *all, const char *line, char *out, size_t n);
/* A diagnostic normalized: SSA names become %, numbers N. */
void mlir_normalize(const char *msg, char *out, size_t n);
/* Ops that must not remain after a full lowering: out, a sorted list of their shapes ("" if
 * none); root, the first of them, which names the case's root cause (as the first error does
 * for a rejection; unrealized casts only when nothing else remains). */
void mlir_unconverted_ops(const char *code, char *root, size_t rn, char *out, size_t n);
/* The same, naming each op by the shape its own line of mlir-opt's input has (input: the case's
 * chunk, which began on line first_line of that input; NULL: as the output has it), as the case
 * has it when a pass changed its dependencies. */
void mlir_unconverted_ops_in(const char *code, const char *input, int first_line, char *root,
                             size_t rn, char *out, size_t n);
/* The forms of root (a cause's shape, without its count) among ops (a list as
 * mlir_unconverted_ops gives it), comma-separated with their counts; root itself when none. */
void mlir_root_forms(const char *root, const char *ops, char *out, size_t n);
/* Makes a private temporary directory (mode 0700) under $TMPDIR or /tmp. */
int mlir_tmpdir(char *out, size_t n, AfErr *err);
/* A tool of the same LLVM as spec's mlir-opt (mlir-translate, llc): $env_var when set, else
 * NAME or NAME-22 in mlir-opt's real directory. 1 and out filled, or 0. */
int mlir_find_tool(const LowerSpec *spec, const char *name, const char *env_var, char *out,
                   size_t n);

void mlir_lowered_free(MlirLowered *l, int n);

/* Case ops for the calls of lowered code. code is mlir-opt's output (--mlir-print-debuginfo:
 * every op keeps the location of the input op it was lowered from); map says which case op
 * stands on each line of the rendered input (gen_render_mlir_group_map), which began at line
 * first_line of mlir-opt's input. Before every call of the runtime library (mgpu*,
 * mlirAsyncRuntime*, asyncfuzz_observe, asyncfuzz_host_init) a call asyncfuzz_rt_set_op(OP)
 * is inserted: OP is the case op of the call's location, or -1 where none can be recovered (a
 * location stripped or made up by a pass), so the trace names case ops, never a stale one.
 * The pipeline's output is otherwise unchanged. Returns the new text (af_free), or NULL when out
 * of memory. OUT: *ncalls, the calls seen; *ntagged, those given a case op. */
/* The line of mlir-opt's input that the location of the op on `line` (a line of code) names,
 * through code's location aliases; -1 when it names none. */
int mlir_op_line(const char *code, const char *line);
char *mlir_tag_calls(const char *code, const GenLineMap *map, int first_line, int *ncalls,
                     int *ntagged);

/* ---- the matrix of configurations (a campaign's plain `--lowering mlir-opt`) ---- */

typedef struct MlirMatrixAxes {
  const char *builds;    /* "PATH,DIR,...": mlir-opt executables or directories with one; NULL:
                            the builds found (/usr/lib/llvm-N, or $ASYNCFUZZ_MLIR_OPT alone) */
  const char *pipelines; /* "default,async-region" (the default); NULL */
  const char *targets;   /* "nvvm,rocdl"; NULL: both (rocdl where its libraries are) */
  const char *jit;       /* "O0,Odefault" (the default), any of O0..O3 and Odefault */
  const char *custom;    /* --pipeline: the one pipeline ("custom") */
  const char *runs;      /* the targets the backend runs ("nvvm,rocdl"; NULL: both) */
} MlirMatrixAxes;
/* Sets one axis from "AXIS=V1,V2" (--matrix). AF_EUSAGE for an unknown axis. */
int mlir_matrix_axis(MlirMatrixAxes *ax, const char *opt, AfErr *err);
/* The configurations of the axes (every build x pipeline x target x level, builds newest
 * first), each a "matrix:" spec (af_free *out). notes: what the defaults left out and why ("":
 * nothing). AF_EUSAGE for an unknown value or two builds of one version string, AF_EINVALID
 * for a build that cannot be used (no runner next to it, too old), naming the build. */
int mlir_matrix(const MlirMatrixAxes *ax, LowerSpec **out, int *n, char *notes, size_t nn,
                AfErr *err);
/* "LLVM 22.1.8, async-region, rocdl, Odefault": a configuration's axes. */
void mlir_config_axes(const LowerSpec *spec, char *out, size_t n);

/* For lower_spec_parse. */
int lower_mlir_spec_parse(const char *s, LowerSpec *out, AfErr *err);
/* Its grammar alone (lower_spec_syntax). */
int lower_mlir_spec_syntax(const char *s, LowerSpec *out, AfErr *err);

/* Features (base/feat.h, mlir_feat.c) of mlir-opt's action log (--log-actions-to, which the
 * lowering passes where features are on): each pattern tried, with its op ("gpu.wait/1": its name
 * and the async tokens it mentions), and each two patterns in a row; and of lowered code: each
 * three mgpu* calls in a row within a function. */
void mlir_feat_actions(const char *log);
void mlir_feat_calls(const char *code);
/* ... of a batch's module lowered as one (gen_render_mlir_group): each case function's calls
 * (@af_case_N) attributed to case N (af_feat_attribute). */
void mlir_feat_calls_group(const char *code);
/* With features attributed to cases (af_feat_attribute): the next mlir-opt run's input holds
 * n cases, case cases[i] (cases NULL: i) from line first[i] on (before first[0]: none), and the
 * action log's features go to the case whose line the op of each action is located at (an
 * action without a location: the case of the one before it). n = 0: none (the log's features
 * go to the current case). */
void mlir_feat_lines(const long *first, const int *cases, int n);

#endif
