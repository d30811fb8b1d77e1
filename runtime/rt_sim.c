/*
 * rt_sim.c: the mgpu* ABI (modules, kernel launches, streams, events) over the front end
 * (handles, checks, trace) and the sim or cuda device. The model is in rt_sim_int.h.
 */
#include "rt_sim_int.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the mgpu* ABI ---- */

/* The blob the interpreter loads for builtin Programs: the library's own kernels. */
static int builtin_blob(const void *data, size_t size) {
  return data && size == 17 && memcmp(data, "asyncfuzz-kernels", 17) == 0;
}

/* The sim's kernels are built in: a module is only a handle, whatever the blob holds. The cuda
 * backend loads the blob (cubin/fatbin, or PTX for JIT) or, for builtin Programs, its own PTX. */
static void *module_load(int call, void *data, size_t size, int opt) {
  Rt *rt;
  RtRec *r = rt__call(&rt, call);
  if (rt__abi_absent(rt, r) || rt__inject(rt, r)) { /* ROCm's mgpuModuleLoadJIT asserts */
    rt__leave(rt);
    return NULL;
  }
  void *dh = NULL;
  if (rt->dev) {
    char log[4200] = "";
    int jit = call == RT_CALL_MODULE_LOAD_JIT;
    int code = rt->dev->module_load(builtin_blob(data, size) ? NULL : data, jit, opt, &dh, log,
                                    sizeof log);
    if (rt__dev_result(rt, r, code, RT_DETAIL_NONE)) {
      if (*log)
        rt__log(log); /* (what the wrapper would print) */
      rt__leave(rt);
      return NULL;
    }
  }
  if (af_grow((void **)&rt->mods, &rt->capmods, rt->nmodules + 1, sizeof(void *))) {
    rt->oom = 1;
    rt__leave(rt);
    return NULL;
  }
  int idx = rt->nmodules++;
  rt->mods[idx] = dh;
  rt->modules_live++;
  void *h = rt__h_out(rt, H_MODULE, idx, dh);
  if (r)
    r->ret = RT_REF(RT_REF_MODULE, idx, 0);
  rt__leave(rt);
  return h;
}

void *mgpuModuleLoad(void *data, size_t gpuBlobSize) {
  return module_load(RT_CALL_MODULE_LOAD, data, gpuBlobSize, 0);
}

void *mgpuModuleLoadJIT(void *data, int optLevel) {
  return module_load(RT_CALL_MODULE_LOAD_JIT, data, 0, optLevel);
}

void mgpuModuleUnload(void *module) {
  /* the module unloads when mlir-runner tears the JIT'd code down: coroutines still queued run
   * now, while their code exists, as MLIR's runtime finishes its tasks before it goes */
  rt__rt_async_quiesce();
  Rt *rt;
  RtRec *r = rt__call(&rt, RT_CALL_MODULE_UNLOAD);
  int detail;
  RtRef ref;
  int idx = rt__h_decode(rt, module, H_MODULE, &detail, &ref);
  rt__rec_arg(r, ref);
  if (rt__inject(rt, r)) {
    /* after a sticky error: no effect */
  } else if (rt->dev && rt__dev_pass(rt, idx)) {
    void *dh = idx >= 0 ? rt->mods[idx] : module;
    if (rt__dev_result(rt, r, rt->dev->module_unload(dh), detail) == 0 && idx >= 0) {
      rt->mods[idx] = NULL;
      rt->modules_live--;
    }
  } else if (idx < 0) {
    rt__rec_fail(rt, r, RT_ERR_INVALID_HANDLE, detail);
  } else {
    rt->modules_live--;
  }
  rt__leave(rt);
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  Rt *rt;
  RtRec *r = rt__call(&rt, RT_CALL_MODULE_GET_FUNCTION);
  int detail;
  RtRef ref;
  void *h = NULL;
  int idx = rt__h_decode(rt, module, H_MODULE, &detail, &ref);
  int k = name ? kernel_lookup(name) : -1;
  if (k < 0 && name && rt->cfg.program) /* a program's kernel with no body known: every buffer */
    k = kernel_foreign_unknown(name);
  if (k < 0 && kernel_outlined_name(name))
    k = RT_FUNC_OUTLINED; /* outlined from a gpu.launch: its tag says which kernel at launch */
  rt__rec_arg(r, ref);
  rt__rec_arg(r, RT_REF(RT_REF_STR, k >= 0 ? k : 0xFFFFFF, 0));
  if (rt__inject(rt, r)) {
    /* after a sticky error: no function */
  } else if (idx < 0 && !(rt->dev && rt->cfg.raw_handles)) {
    rt__rec_fail(rt, r, RT_ERR_INVALID_HANDLE, detail);
  } else if (k < 0) {
    rt__rec_fail(rt, r, RT_ERR_NOT_FOUND, RT_DETAIL_UNKNOWN_KERNEL);
  } else if (rt->dev && k == RT_FUNC_OUTLINED) {
    void *fn = NULL;
    if (rt__dev_result(rt, r, rt->dev->get_function(idx >= 0 ? rt->mods[idx] : module, name, &fn),
                       detail) == 0) {
      int slot = rt->nofns++ % RT_OUTLINED_SLOTS;
      rt->ofns[slot] = fn;
      h = rt__h_out(rt, H_FUNC, RT_FUNC_OUTLINED + 1 + slot, fn);
      if (r)
        r->ret = RT_REF(RT_REF_FUNC, RT_FUNC_OUTLINED, 0);
    }
  } else if (rt->dev && k >= KERNEL__IDS) { /* (a program's kernels run on the sim only) */
    rt__rec_fail(rt, r, RT_ERR_NOT_FOUND, RT_DETAIL_UNKNOWN_KERNEL);
  } else if (rt->dev) {
    void *fn = NULL;
    if (rt__dev_result(rt, r, rt->dev->get_function(idx >= 0 ? rt->mods[idx] : module, name, &fn),
                       detail) == 0) {
      rt->fns[k] = fn;
      h = rt__h_out(rt, H_FUNC, k, fn);
      if (r)
        r->ret = RT_REF(RT_REF_FUNC, k, 0);
    }
  } else {
    h = rt__h_make(rt, H_FUNC, k);
    if (r)
      r->ret = RT_REF(RT_REF_FUNC, k, 0);
  }
  rt__leave(rt);
  return h;
}

/* A launch's arguments as the kernel reads them: each buffer at its offset, its stride, the
 * element count and the value. */
typedef struct Launch {
  char *bufs[KERNEL_MAX_BUFS];
  int64_t stride[KERNEL_MAX_BUFS];
  int64_t n;
  int32_t v;
} Launch;

/* Reads the memref descriptors and the value from params into *l and the record; 0, or -1 when
 * they disagree (sizes differ, a stride below 1, more elements than threads). */
static int read_launch(Rt *rt, RtRec *r, const KernelInfo *ki, void **params, intptr_t threads,
                       Launch *l) {
  int bad = 0, strided = 0;
  l->n = -1;
  for (int b = 0; b < KERNEL_MAX_BUFS; b++)
    l->stride[b] = 1;
  for (int b = 0; b < ki->nbufs; b++) {
    char *aligned = *(char **)params[5 * b + 1];
    int64_t off = *(int64_t *)params[5 * b + 2];
    int64_t size = *(int64_t *)params[5 * b + 3];
    l->stride[b] = *(int64_t *)params[5 * b + 4];
    strided |= l->stride[b] != 1;
    l->bufs[b] = aligned + off * kernel_elem_bytes(ki->elem);
    rt__rec_arg(r, rt__ref_ptr(rt, l->bufs[b]));
    if (l->n < 0)
      l->n = size;
    else if (size != l->n)
      bad = 1;
    if (l->stride[b] < 1)
      bad = 1;
  }
  l->v = *(int32_t *)params[5 * ki->nbufs];
  rt__rec_arg(r, rt__ref_int((uint32_t)l->v));
  rt__rec_arg(r, rt__ref_int((uint64_t)(l->n > 0 ? l->n : 0)));
  for (int b = 0; b < ki->nbufs && strided; b++) /* a view's strides follow (trace format) */
    rt__rec_arg(r, rt__ref_int((uint64_t)l->stride[b]));
  return bad || l->n < 0 || (intptr_t)l->n > threads ? -1 : 0;
}

/* The detail of a buffer the kernel may not touch (not device memory, or freed on a GPU), or
 * RT_DETAIL_NONE when every one is fine. */
static int bad_launch_ptr(Rt *rt, const KernelInfo *ki, const Launch *l) {
  for (int b = 0; b < ki->nbufs; b++) {
    size_t span = l->n > 0 ? ((size_t)(l->n - 1) * (size_t)l->stride[b] + 1) *
                                 (size_t)kernel_elem_bytes(ki->elem)
                           : 0;
    if (rt__range_kind(rt, l->bufs[b], span) != 1)
      return RT_DETAIL_BAD_POINTER;
    if (rt->dev && rt__freed_alloc(rt, l->bufs[b], span) >= 0)
      return RT_DETAIL_USE_AFTER_FREE;
  }
  return RT_DETAIL_NONE;
}

/* The kernel on a GPU, its spin count replaced by the calibrated window when there is one. */
static void launch_on_device(Rt *rt, RtRec *r, int k, int slot, int s, int sdet,
                             const intptr_t grid[3], const intptr_t block[3], int32_t smem,
                             void *stream, void **params, void **extra) {
  const KernelInfo *ki = kernel_info(k);
  int raw = rt->cfg.raw_handles;
  void *args[5 * KERNEL_MAX_BUFS + 3];
  int32_t spin = rt->cfg.spin;
  size_t np = (size_t)ki->nbufs * 5 + 2 + (slot >= 0); /* (an outlined one's tag first) */
  memcpy(args, params, sizeof(void *) * np);
  if (spin > 0)
    args[slot >= 0 ? 2 : np - 1] = &spin;
  void *dstream = raw ? stream : rt->streams[s].dh;
  void *fn = slot >= 0 ? rt->ofns[slot % RT_OUTLINED_SLOTS] : rt->fns[k];
  rt__dev_result(rt, r, rt->dev->launch(fn, grid, block, smem, dstream, args, extra),
                 raw && s < 0 ? sdet : RT_DETAIL_NONE);
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                      intptr_t blockX, intptr_t blockY, intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount) {
  Rt *rt;
  RtRec *r = rt__call(&rt, RT_CALL_LAUNCH_KERNEL);
  int fdet, sdet;
  RtRef fref, sref;
  int k = rt__h_decode(rt, function, H_FUNC, &fdet, &fref);
  int s = rt__stream_arg(rt, stream, &sdet, &sref);
  int raw = rt->dev && rt->cfg.raw_handles, slot = -1, untagged = 0;
  void *std[5 * KERNEL_MAX_BUFS + 2], **given = params;
  if (k >= RT_FUNC_OUTLINED) { /* from here on, the kernel it is, as a gpu.func takes it */
    slot = k > RT_FUNC_OUTLINED ? k - RT_FUNC_OUTLINED - 1 : -1; /* (its driver function's) */
    k = kernel_untag(params, paramsCount, std);
    untagged = k < 0;
    if (k >= 0) {
      params = std;
      paramsCount = (size_t)kernel_info(k)->nbufs * 5 + 2;
      fref = RT_REF(RT_REF_FUNC, k, 0);
    }
  }
  rt__rec_arg(r, fref);
  rt__rec_arg(r, sref);
  const intptr_t grid[3] = {gridX, gridY, gridZ}, block[3] = {blockX, blockY, blockZ};
  const KernelInfo *ki = k >= 0 ? kernel_info(k) : NULL;
  Launch l;
  int det;
  if (rt__inject(rt, r))
    ;                        /* failed on purpose: nothing runs */
  else if (untagged && !raw) /* outlined, with no tag or other parameters */
    rt__rec_fail(rt, r, RT_ERR_INVALID_VALUE, RT_DETAIL_BAD_ARGS);
  else if (raw && k < 0) /* not a kernel asyncfuzz knows: the driver decides */
    rt__dev_result(rt, r, rt->dev->launch(function, grid, block, smem, stream, params, extra),
                   fdet);
  else if (k < 0 || (s < 0 && !raw))
    rt__rec_fail(rt, r, RT_ERR_INVALID_HANDLE, k < 0 ? fdet : sdet);
  else if (k >= KERNEL__IDS && !rt->dev)
    rt__launch_foreign(rt, r, k, s, params, paramsCount);
  else if (k >= KERNEL__IDS)
    rt__rec_fail(rt, r, RT_ERR_NOT_FOUND, RT_DETAIL_UNKNOWN_KERNEL);
  else if (params == NULL || (paramsCount != 0 && paramsCount != (size_t)ki->nbufs * 5 + 2) ||
           read_launch(rt, r, ki, params, gridX * gridY * gridZ * blockX * blockY * blockZ, &l) < 0)
    rt__rec_fail(rt, r, RT_ERR_INVALID_VALUE, RT_DETAIL_BAD_ARGS);
  else if (!raw && (det = bad_launch_ptr(rt, ki, &l)) != RT_DETAIL_NONE)
    rt__rec_fail(rt, r, RT_ERR_ILLEGAL_ADDRESS, det);
  else if (rt->dev)
    launch_on_device(rt, r, k, slot, s, sdet, grid, block, smem, stream, slot >= 0 ? given : params,
                     extra);
  else {
    Work *w = rt__enqueue(rt, s, W_KERNEL, r ? r->seq : 0);
    if (w) {
      w->kernel = k;
      w->nbufs = ki->nbufs;
      memcpy(w->bufs, l.bufs, sizeof l.bufs);
      memcpy(w->stride, l.stride, sizeof l.stride);
      w->n = l.n;
      w->v = l.v;
      w->threads = (int64_t)blockX * blockY * blockZ;
      w->smem = smem;
    }
    if (rt->cfg.policy == RT_EAGER)
      rt__drain(rt);
  }
  rt__leave(rt);
}

void *mgpuStreamCreate(void) {
  Rt *rt;
  RtRec *r = rt__call(&rt, RT_CALL_STREAM_CREATE);
  void *dh = NULL;
  if (rt__inject(rt, r) ||
      (rt->dev && rt__dev_result(rt, r, rt->dev->stream_create(&dh), RT_DETAIL_NONE))) {
    if (r)
      r->ret = RT_REF(RT_REF_NULL, 0, 0);
    rt__leave(rt);
    return NULL; /* as the wrapper: later work silently goes to the legacy stream */
  }
  int s = rt__new_stream(rt);
  if (s >= 0)
    rt->streams[s].dh = dh;
  void *h = s >= 0 ? rt__h_out(rt, H_STREAM, s, dh) : NULL;
  if (r)
    r->ret = s >= 0 ? RT_REF(RT_REF_STREAM, s, 0) : RT_REF(RT_REF_NULL, 0, 0);
  rt__leave(rt);
  return h;
}

void mgpuStreamDestroy(void *stream) {
  Rt *rt;
  RtRec *r = rt__call(&rt, RT_CALL_STREAM_DESTROY);
  int det;
  int s = rt__handle_arg(rt, r, stream, H_STREAM_MADE, &det);
  if (rt__route(rt, r, s >= 0, det) == RT_TO_DEVICE)
    rt__dev_result(rt, r, rt->dev->stream_destroy(s >= 0 ? rt->streams[s].dh : stream), det);
  if (s >= 0)
    rt->streams[s].destroyed = 1; /* pending work still runs */
  rt__leave(rt);
}

void mgpuStreamSynchronize(void *stream) {
  Rt *rt;
  RtRec *r = rt__call(&rt, RT_CALL_STREAM_SYNCHRONIZE);
  int det;
  int s = rt__handle_arg(rt, r, stream, H_STREAM, &det);
  int to = rt__route(rt, r, s >= 0, det);
  if (to == RT_TO_DEVICE)
    rt__dev_result(rt, r, rt->dev->stream_sync(s >= 0 ? rt->streams[s].dh : stream), det);
  else if (to == RT_TO_SIM)
    rt__run_until(rt, s, rt->streams[s].enq);
  rt__leave(rt);
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  Rt *rt;
  RtRec *r = rt__call(&rt, RT_CALL_STREAM_WAIT_EVENT);
  int sdet, edet;
  int s = rt__handle_arg(rt, r, stream, H_STREAM, &sdet);
  int e = rt__handle_arg(rt, r, event, H_EVENT, &edet);
  int to = rt__route(rt, r, s >= 0 && e >= 0, s < 0 ? sdet : edet);
  if (to == RT_TO_DEVICE) {
    rt__dev_result(rt, r,
                   rt->dev->stream_wait_event(s >= 0 ? rt->streams[s].dh : stream,
                                              e >= 0 ? rt->events[e].dh : event),
                   s < 0 ? sdet : edet);
  } else if (to == RT_TO_SIM && rt->events[e].recorded) {
    (void)rt__enqueue_wait(rt, s, rt->events[e].stream, rt->events[e].seq, r ? r->seq : 0);
    if (rt->cfg.policy == RT_EAGER)
      rt__drain(rt);
  }
  rt__leave(rt);
}

void *mgpuEventCreate(void) {
  Rt *rt;
  RtRec *r = rt__call(&rt, RT_CALL_EVENT_CREATE);
  void *h = NULL, *dh = NULL;
  if (rt__inject(rt, r) ||
      (rt->dev && rt__dev_result(rt, r, rt->dev->event_create(&dh), RT_DETAIL_NONE))) {
    if (r)
      r->ret = RT_REF(RT_REF_NULL, 0, 0);
  } else if (af_grow((void **)&rt->events, &rt->capevents, rt->nevents + 1, sizeof(Event)) == 0) {
    int e = rt->nevents++;
    memset(&rt->events[e], 0, sizeof(Event));
    rt->events[e].dh = dh;
    h = rt__h_out(rt, H_EVENT, e, dh);
    if (r)
      r->ret = RT_REF(RT_REF_EVENT, e, 0);
  } else {
    rt->oom = 1;
    rt__rec_fail(rt, r, RT_ERR_OUT_OF_MEMORY, RT_DETAIL_NONE);
  }
  rt__leave(rt);
  return h;
}

void mgpuEventDestroy(void *event) {
  Rt *rt;
  RtRec *r = rt__call(&rt, RT_CALL_EVENT_DESTROY);
  int det;
  int e = rt__handle_arg(rt, r, event, H_EVENT, &det);
  if (rt__route(rt, r, e >= 0, det) == RT_TO_DEVICE)
    rt__dev_result(rt, r, rt->dev->event_destroy(e >= 0 ? rt->events[e].dh : event), det);
  if (e >= 0)
    rt->events[e].destroyed = 1;
  rt__leave(rt);
}

void mgpuEventSynchronize(void *event) {
  Rt *rt;
  RtRec *r = rt__call(&rt, RT_CALL_EVENT_SYNCHRONIZE);
  int det;
  int e = rt__handle_arg(rt, r, event, H_EVENT, &det);
  /* raw: the driver answers a stream given as event; else a misused handle: the wrapper prints
   * and does not wait */
  int to = rt__route(rt, r, e >= 0, det);
  if (to == RT_TO_DEVICE)
    rt__dev_result(rt, r, rt->dev->event_sync(e >= 0 ? rt->events[e].dh : event), det);
  else if (to == RT_TO_SIM && rt->events[e].recorded)
    rt__run_until(rt, rt->events[e].stream, rt->events[e].seq);
  rt__leave(rt);
}

void mgpuEventRecord(void *event, void *stream) {
  Rt *rt;
  RtRec *r = rt__call(&rt, RT_CALL_EVENT_RECORD);
  int sdet, edet;
  int e = rt__handle_arg(rt, r, event, H_EVENT, &edet);
  int s = rt__handle_arg(rt, r, stream, H_STREAM, &sdet);
  int to = rt__route(rt, r, e >= 0 && s >= 0, e < 0 ? edet : sdet);
  int failed = to == RT_TO_NONE; /* (a misused handle, or failed on purpose) */
  if (to == RT_TO_DEVICE)
    failed = rt__dev_result(rt, r,
                            rt->dev->event_record(e >= 0 ? rt->events[e].dh : event,
                                                  s >= 0 ? rt->streams[s].dh : stream),
                            e < 0 ? edet : sdet) != 0;
  if (e >= 0 && s >= 0 && !failed) {
    if (!rt->dev) /* rocm: the capture includes what a blocking stream waits for */
      rt__legacy_order(rt, s, r ? r->seq : 0);
    rt->events[e].recorded = 1;
    rt->events[e].stream = s;
    rt->events[e].seq = rt->streams[s].enq;
  }
  rt__leave(rt);
}

void mgpuSetDefaultDevice(int32_t device) {
  Rt *rt;
  RtRec *r = rt__call(&rt, RT_CALL_SET_DEFAULT_DEVICE);
  rt__rec_arg(r, rt__ref_int((uint32_t)device));
  (void)rt__inject(rt, r); /* (after a sticky error it fails too; it has no effect either way) */
  rt__leave(rt);
}
