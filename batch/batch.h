/*
 * batch.h: ahead-of-time batches, for GPU runners with no MLIR installed.
 *
 * Compiling (a CPU machine with LLVM 22, compile.c): the cases are rendered and lowered with
 * mlir-opt (each case alone first, --split-input-file, so a rejected case costs only its own
 * chunk); the runnable ones are lowered as one module, translated to LLVM IR (mlir-translate),
 * compiled (opt -O0, which lowers the async coroutines, then llc -O0, position independent:
 * upstream runs async code at -O0) and linked into a shared object (cc -shared). The batch
 * directory holds batch.so, cases/case-ID.json and manifest.json (the lowering, its version
 * and pipeline, each case's lowering outcome, the tool versions).
 *
 * Running (the GPU machine, run.c): batch.so is loaded in a child process, in which the kernel
 * modules load (the object's constructors call mgpuModuleLoadJIT) and each case's host code
 * @af_case_ID runs under every schedule between asyncfuzz_case_begin/end, which write one
 * binary trace per run. The parent watches the child with a watchdog: a crash or hang costs
 * the case it was on (a verdict) and a fresh child goes on from the next case. Every trace is
 * then judged as check.h judges one: observations, runtime errors, the checker.
 *
 * Nothing here prints.
 */
#ifndef BATCH_BATCH_H
#define BATCH_BATCH_H

#include "../check/check.h"
#include "../results/store.h"

#define BATCH_FORMAT "asyncfuzz-batch-1"

/* ---- compiling ---- */

typedef struct BatchCompiled {
  int ncompiled;
  char so[4200];   /* DIR/batch.so, when ncompiled > 0 */
  char kept[4096]; /* the temporary directory, kept because $ASYNCFUZZ_KEEP_TMP is set, or "" */
} BatchCompiled;

/* Compiles cases[0..n) (valid; sources[i]: the file case i came from, or NULL) with the
 * mlir-opt lowering spec into the directory out (created). AF_EUNSUPPORTED when a tool is
 * missing, AF_ETOOL when one fails (err has its message), AF_EIO when out cannot be written. */
int batch_compile(const LowerSpec *spec, const GenCase *cases, const char *const *sources, int n,
                  const char *out, BatchCompiled *res, AfErr *err);

/* ---- running ---- */

typedef struct Batch Batch;

/* Reads DIR/manifest.json and loads (and validates) its cases. AF_EIO when it cannot be read,
 * AF_EPARSE when it is not a manifest of this asyncfuzz, the case's error for a bad case. */
int batch_open(const char *dir, Batch **out, AfErr *err);
void batch_free(Batch *b);
/* The lowering as recorded (its name, version and pipeline; its tools need not be here). */
const LowerSpec *batch_spec(const Batch *b);
int batch_ncases(const Batch *b);
int batch_ncompiled(const Batch *b);
/* The file of case i (under DIR/cases/). */
const char *batch_case_file(const Batch *b, int i);
/* The tools of the run, as the database records them (JSON). */
const char *batch_tools_json(const Batch *b);

typedef struct BatchRunStats {
  double seconds;
  int restarts; /* children replaced after a crash or a hang */
  int children; /* children at once (a GPU: check_gpu_jobs(o); the sim: one) */
} BatchRunStats;

/* Runs every compiled case under schedules s[0..ns) on o's backend, in child processes with
 * a watchdog ($ASYNCFUZZ_GPU_TIMEOUT seconds per case, default 60): on a GPU up to
 * check_gpu_jobs(o) at once, each with its own context, each taking the next case when it
 * finishes one; on the sim one. The traces go to a
 * temporary directory, removed by batch_free (kept with $ASYNCFUZZ_KEEP_TMP: see
 * batch_trace_dir). AF_EPARSE when the object cannot be loaded. */
int batch_run(Batch *b, const Schedule *s, int ns, const CheckOpts *o, BatchRunStats *st,
              AfErr *err);
const char *batch_trace_dir(const Batch *b);
/* The verdicts of case i, as check gives them: its runs judged, the lowering's verdict of a
 * case not compiled, or the crash or hang of the child on it. */
int batch_judge(Batch *b, int i, const CheckOpts *o, CheckResult *res, AfErr *err);

/* Begins a run of the batch in the database (tools from the manifest, the device line, the
 * configuration). */
int batch_db_begin(const Batch *b, Store *db, const char *scheds, uint64_t seed, const CheckOpts *o,
                   const char *dev, int64_t *run_id, AfErr *err);
/* Records case i's first failing run (res->first_fail >= 0), with the case, its rendering and
 * the command that replays it. *nnew counts the findings new to the database. */
int batch_db_record(const Batch *b, Store *db, int64_t run_id, int i, const CheckOpts *o,
                    const CheckResult *res, int *nnew, AfErr *err);

#endif
