/*
 * fake_gpu.h: the model shared by the TEST DOUBLES of the CUDA driver (fake_cuda/) and of the
 * HIP runtime (fake_hip/): an infinitely slow GPU. Work waits in per-stream FIFO queues and
 * runs only when the host forces it (a stream, event or device synchronize; a stream waiting
 * on an event runs the captured work first), so a missing synchronization shows as stale data.
 * A copy to or from pageable host memory runs at once, after the stream's earlier work, as the
 * drivers document for such copies; one to or from registered (page-locked) host memory waits in
 * its queue as any other. Blocking streams synchronize with the legacy (NULL) stream
 * as the CUDA and HIP documentation says. Handles are checked against a registry, so an event
 * call given a stream fails with FG_INVALID_HANDLE. Kernels run kernels/kernels.c.
 *
 * Built only under tests/ and reached only through LD_LIBRARY_PATH in the tests that say so.
 *
 * Fault injection (counted over launches in this process), with the adapter's prefix P
 * (FAKE_CUDA_, FAKE_HIP_):
 *   P FAULT_AT=N  the Nth launch faults when it runs: FG_ILLEGAL_ADDRESS, sticky
 *   P HANG_AT=N   the Nth launch never finishes (the synchronize waiting for it hangs)
 *   P CRASH_AT=N  the Nth launch kills the process (SIGSEGV) when it runs
 *   P NO_DEVICE=1 init fails with FG_NO_DEVICE
 *   P ONCE=FILE   inject once across processes: only while FILE does not exist, and create it
 *   P HOST_LOG=FILE  append "register ADDR" / "unregister ADDR" to FILE for each host range the
 *                 driver registers or unregisters
 * Timing events advance a virtual clock by 1 ns per spin iteration of each kernel.
 */
#ifndef TESTS_FAKE_GPU_H
#define TESTS_FAKE_GPU_H

#include <stddef.h>

enum {
  FG_OK,
  FG_INVALID_VALUE,
  FG_NO_DEVICE,
  FG_INVALID_DEVICE,
  FG_INVALID_HANDLE,
  FG_NOT_FOUND,
  FG_ILLEGAL_ADDRESS,
  FG_INVALID_IMAGE,
  FG_OUT_OF_MEMORY,
  FG_HOST_ALREADY_REGISTERED, /* a range overlapping a registered one */
  FG_HOST_NOT_REGISTERED
};

/* The adapter's environment prefix ("FAKE_CUDA_"), set before any other call. */
void fg_set_prefix(const char *prefix);
int fg_env(const char *name); /* the integer value of PREFIX name, 0 when unset */
int fg_sticky(void);          /* FG_ILLEGAL_ADDRESS once a kernel faulted, else FG_OK */

int fg_module_load(void **m);
int fg_module_unload(void *m);
int fg_get_function(void **f, void *m, const char *name);
/* params: MLIR's expanded memref fields of each buffer, then the value and the spin count. */
int fg_launch(void *f, unsigned gx, unsigned bx, unsigned smem, void *stream, void **params);

/* stream NULL: the legacy stream. */
int fg_stream_create(void **s, int blocking);
int fg_stream_destroy(void *s);
int fg_stream_sync(void *s);
int fg_stream_wait_event(void *s, void *e);
int fg_event_create(void **e, int timing);
int fg_event_destroy(void *e);
int fg_event_record(void *e, void *s);
int fg_event_sync(void *e);
int fg_event_elapsed(float *ms, void *a, void *b);
int fg_device_sync(void);

int fg_alloc(void **p, size_t bytes);
int fg_free(void *p);
int fg_memcpy(void *dst, const void *src, size_t bytes, void *s);
/* esize 4 or 2 */
int fg_memset(int esize, void *dst, unsigned v, size_t n, void *s);
/* Page-locked host memory: a copy to or from it is asynchronous, as between device buffers.
 * A range overlapping a registered one is refused, as is unregistering what is not the start
 * of one; unregistering runs the queued work first (nothing is left to touch the range). */
int fg_host_register(void *p, size_t bytes);
int fg_host_unregister(void *p);

#endif
