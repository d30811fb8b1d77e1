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

#endif
