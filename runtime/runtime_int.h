/*
 * runtime_int.h: internals shared by the files of the runtime library (rt_*.c, async_rt.c).
 * Not part of the contract; nothing outside runtime/ includes it.
 */
#ifndef RUNNER_INT_H
#define RUNNER_INT_H

#include "asyncfuzz_rt.h"

/* The current run's configuration (a run starts from the environment if none is active). */
void rt__rt_config(RtConfig *out);
/* The calling thread's trace id, and a fresh one for a new logical thread (a coroutine). */
int rt__rt_thread(void);
int rt__rt_new_thread(void);
/* Records an error of the async runtime (e.g. an await nothing can complete) in the trace. */
void rt__rt_async_error(int detail);
/* The simulated async runtime (async_rt.c) sits above the GPU runtime and registers itself
 * when the library loads: quiesce runs every ready coroutine continuation (returns how many
 * ran), reset forgets all state (a new run). The GPU runtime calls them through
 * rt__rt_async_quiesce/reset, so it never depends on the async runtime. */
void rt__rt_set_async(int (*quiesce)(void), void (*reset)(void));
int rt__rt_async_quiesce(void);
void rt__rt_async_reset(void);

#endif
