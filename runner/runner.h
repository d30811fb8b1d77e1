/*
 * runner.h: executes a builtin Program through the runtime library (asyncfuzz_rt.h).
 *
 * The interpreter runs main and every async.execute region as a task. Tasks are interleaved
 * at instruction granularity on one OS thread, deterministically: eager runs a spawned
 * region at once (like an idle worker pool), lazy runs the host ahead until it blocks, and
 * random/pct pick a runnable task at random from the schedule seed. Each instruction is an
 * mgpu* call (or a region note) made with the task's id as the trace thread.
 */
#ifndef RUNNER_RUNNER_H
#define RUNNER_RUNNER_H

#include "../lower/lower.h"
#include "asyncfuzz_rt.h"

/* Runs p from asyncfuzz_rt_begin(cfg) to asyncfuzz_rt_end(). Afterwards the trace,
 * observations and summary of the run are readable through asyncfuzz_rt.h. Returns 0, or
 * AF_EDEADLOCK / AF_ENOMEM (with err set) when the program could not run to its end. */
int runner_run_program(const LowerProgram *p, const RtConfig *cfg, AfErr *err);

/* A trace read back from a file (a run of code compiled by MLIR). */
typedef struct RunnerTrace {
  RtSummary sum;
  int abi; /* RtAbi: the flavour the run followed */
  int nrecs, nobs;
  RtRec *recs;
  RtObs *obs;
  int32_t *vals;
} RunnerTrace;

/* Loads a binary trace (asyncfuzz_rt_write_trace_bin). AF_EIO, AF_EPARSE (with the reason:
 * not a trace, another build's format, truncated, corrupt) or AF_ENOMEM on failure. */
int runner_trace_load(const char *path, RunnerTrace *t, AfErr *err);
void runner_trace_free(RunnerTrace *t);

#endif
