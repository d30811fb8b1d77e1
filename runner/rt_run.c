/*
 * rt_run.c: a run of the runtime library: begin and end, the configuration from the
 * harness or the environment (ABI flavour included), entering and leaving every call, the
 * backends (the sim, the cuda and hip libraries loaded on demand, calibration), notes of the
 * async runtime, batch cases.
 */
#define _GNU_SOURCE /* dladdr */
#include "rt_sim_int.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int open_dev_locked(int backend, char *msg, size_t n);

/* the async runtime's hooks (runner_int.h) */
static int (*g_async_quiesce)(void);
static void (*g_async_reset)(void);

void runner__rt_set_async(int (*quiesce)(void), void (*reset)(void)) {
  g_async_quiesce = quiesce;
  g_async_reset = reset;
}

int runner__rt_async_quiesce(void) {
  return g_async_quiesce ? g_async_quiesce() : 0;
}

void runner__rt_async_reset(void) {
  if (g_async_reset)
    g_async_reset();
}

/* ---- run control ---- */

/* A GPU backend, at the end of a run: waits for the device (a failure is the run's last record: a
 * kernel fault surfaces here), then gives back what the program left (leaks are counted first, from
 * the tables) and the quarantined memory. */
static void dev_finish(Rt *rt) {
  if (rt->dev == NULL)
    return;
  rt->dev->enter();
  int code = rt->dev->ctx_sync();
  if (code == 4) /* CUDA_ERROR_DEINITIALIZED (hipErrorDeinitialized): at process exit, after the
                    driver's own teardown */
    code = 0;
  if (code) {
    int save = runner__t_tid;
    runner__t_tid = 0;
    RtRec *r = runner__rec_new(rt, RT_CALL_DEVICE_SYNC);
    runner__t_tid = save;
    runner__dev_result(rt, r, code, RT_DETAIL_NONE);
  }
}

static void dev_release(Rt *rt) {
  if (rt->dev == NULL)
    return;
  for (int i = 1; i < rt->nstreams; i++)
    if (!rt->streams[i].destroyed && rt->streams[i].dh) {
      rt->dev->stream_destroy(rt->streams[i].dh);
      rt->streams[i].destroyed = 2;
    }
  for (int i = 0; i < rt->nevents; i++)
    if (!rt->events[i].destroyed && rt->events[i].dh) {
      rt->dev->event_destroy(rt->events[i].dh);
      rt->events[i].destroyed = 2;
    }
  for (int i = 0; i < rt->nallocs; i++) {
    Alloc *a = &rt->allocs[i];
    if (a->dev == 1 && !(a->freed && rt->cfg.raw_handles))
      rt->dev->mem_free(a->p);
    a->dev = 2;
  }
}

static void free_run(Rt *rt) {
  dev_release(rt);
  for (int i = 0; i < rt->nstreams; i++)
    af_free(rt->streams[i].q);
  for (int i = 0; i < rt->nallocs; i++)
    if (!rt->allocs[i].dev)
      free(rt->allocs[i].p);
  rt->nstreams = rt->nevents = rt->nallocs = rt->nhosts = 0;
  rt->ntrace = rt->nobs = rt->nobsdata = 0;
}

static int begin_locked(Rt *rt, const RtConfig *cfg, int keep_modules) {
  free_run(rt);
  if (!keep_modules) {
    for (int i = 0; i < rt->nmodules && rt->dev; i++)
      if (rt->mods[i])
        rt->dev->module_unload(rt->mods[i]);
    rt->nmodules = rt->modules_live = 0;
    rt->mod_epoch = rt->epoch + 1;
    memset(rt->fns, 0, sizeof rt->fns);
  }
  rt->dev = NULL;
  if (cfg->backend != RT_BACKEND_SIM) {
    if (open_dev_locked(cfg->backend, runner__g_backend_msg, sizeof runner__g_backend_msg))
      return AF_EUNSUPPORTED;
    rt->dev = runner__g_dev[cfg->backend];
    rt->dev->enter();
  }
  runner__rt_async_reset();
  memset(&rt->sum, 0, sizeof rt->sum);
  rt->sum.first_error = -1;
  rt->cfg = *cfg;
  if (rt->cfg.pct_depth <= 0)
    rt->cfg.pct_depth = 3;
  if (rt->cfg.pct_depth > 8)
    rt->cfg.pct_depth = 8;
  af_rng_seed(&rt->rng, af_mix64(cfg->seed, (uint64_t)cfg->policy + 1));
  rt->epoch++;
  rt->steps = 0;
  rt->oom = 0;
  rt->next_tid = 1;
  rt->nchange = rt->cfg.policy == RT_PCT ? rt->cfg.pct_depth : 0;
  for (int i = 0; i < rt->nchange; i++)
    rt->change_points[i] = 1 + af_rng_below(&rt->rng, 96);
  runner__new_stream(rt); /* stream 0: the legacy default stream */
  rt->active = 1;
  return 0;
}

static RtConfig env_config(void) {
  RtConfig c;
  memset(&c, 0, sizeof c);
  c.policy = RT_EAGER;
  const char *p = getenv("ASYNCFUZZ_POLICY");
  if (p && asyncfuzz_rt_policy_parse(p) >= 0)
    c.policy = asyncfuzz_rt_policy_parse(p);
  const char *s = getenv("ASYNCFUZZ_SCHED_SEED");
  if (s)
    c.seed = strtoull(s, NULL, 0);
  const char *m = getenv("ASYNCFUZZ_MEMFREE_SYNC");
  c.memfree_sync = m && strcmp(m, "1") == 0;
  const char *b = getenv("ASYNCFUZZ_BACKEND");
  if (b && *b) {
    c.backend = asyncfuzz_rt_backend_parse(b, &c.raw_handles);
    if (c.backend < 0) {
      fprintf(stderr,
              "asyncfuzz runtime: ASYNCFUZZ_BACKEND=%s is not a backend (sim, cuda, "
              "cuda:raw, hip, hip:raw)\n",
              b);
      exit(2);
    }
  }
  const char *sp = getenv("ASYNCFUZZ_SPIN");
  if (sp && *sp)
    c.spin = atoi(sp);
  const char *abi = getenv("ASYNCFUZZ_ABI");
  if (abi && *abi && (c.abi = asyncfuzz_rt_abi_parse(abi)) < 0) {
    fprintf(stderr, "asyncfuzz runtime: ASYNCFUZZ_ABI=%s is not an ABI flavour (cuda, rocm)\n",
            abi);
    exit(2);
  }
  return c;
}

/* A run the program started itself (no harness) cannot go on without its backend. */
static void begin_or_die(Rt *rt, const RtConfig *c, int keep_modules) {
  if (begin_locked(rt, c, keep_modules)) {
    fprintf(stderr, "asyncfuzz runtime: backend %s: %s\n", asyncfuzz_rt_backend_name(c->backend),
            runner__g_backend_msg);
    exit(2);
  }
}

/* Every entry point: lock, start a run from the environment if none is active (code compiled
 * by MLIR calls mgpu* without a harness), name the thread, and runner__pump. */
Rt *runner__enter(void) {
  Rt *rt = &runner__g_rt;
  pthread_mutex_lock(&rt->mu);
  if (!rt->active) {
    RtConfig c = env_config();
    begin_or_die(rt, &c, 0);
    rt->next_tid = 0; /* no harness: the first thread to call in is the host, T0 */
    runner__g_env_run = 1;
  }
  if (runner__t_tid < 0)
    runner__t_tid = rt->next_tid++;
  return rt;
}

void runner__leave(Rt *rt) {
  pthread_mutex_unlock(&rt->mu);
}

int asyncfuzz_rt_begin(const RtConfig *cfg) {
  Rt *rt = &runner__g_rt;
  pthread_mutex_lock(&rt->mu);
  runner__g_env_run = 0;
  int rc = begin_locked(rt, cfg, 0);
  int oom = rt->oom;
  pthread_mutex_unlock(&rt->mu);
  return rc ? rc : oom ? AF_ENOMEM : 0;
}

/* Ends the run; runner__drain: first complete the pending device work (only while the memory it
 * touches is surely alive: not at process exit, after the program has freed its buffers). */
static int end_run(int do_drain) {
  Rt *rt = &runner__g_rt;
  pthread_mutex_lock(&rt->mu);
  int save = runner__t_tid;
  if (do_drain)
    runner__drain(rt);
  dev_finish(rt); /* cuda: always, so the device is idle before its memory goes */
  runner__t_tid = -1;
  for (int i = 1; i < rt->nstreams; i++) {
    if (!rt->streams[i].destroyed) {
      rt->sum.streams_leaked++;
      RtRec *r = runner__rec_new(rt, RT_CALL_LEAK);
      runner__rec_arg(r, RT_REF(RT_REF_STREAM, i, 0));
    }
  }
  for (int i = 0; i < rt->nevents; i++) {
    if (!rt->events[i].destroyed) {
      rt->sum.events_leaked++;
      RtRec *r = runner__rec_new(rt, RT_CALL_LEAK);
      runner__rec_arg(r, RT_REF(RT_REF_EVENT, i, 0));
    }
  }
  for (int i = 0; i < rt->nallocs; i++) {
    if (!rt->allocs[i].freed) {
      rt->sum.buffers_leaked++;
      RtRec *r = runner__rec_new(rt, RT_CALL_LEAK);
      runner__rec_arg(r, RT_REF(RT_REF_BUF, i, 0));
    }
  }
  runner__t_tid = save;
  rt->sum.streams_created = rt->nstreams - 1;
  rt->sum.events_created = rt->nevents;
  rt->sum.max_streams = rt->nstreams;
  rt->sum.max_events = rt->nevents;
  rt->sum.max_threads = rt->next_tid > rt->sum.max_threads ? rt->next_tid : rt->sum.max_threads;
  for (int i = 0; i < rt->nobs; i++)
    rt->obs[i].vals = rt->obsdata + (intptr_t)rt->obs[i].vals;
  dev_release(rt);
  rt->active = 0;
  int oom = rt->oom;
  pthread_mutex_unlock(&rt->mu);
  return oom ? AF_ENOMEM : 0;
}

int asyncfuzz_rt_end(void) {
  return end_run(1);
}

void asyncfuzz_rt_shutdown(void) {
  Rt *rt = &runner__g_rt;
  pthread_mutex_lock(&rt->mu);
  free_run(rt);
  af_free(rt->streams);
  af_free(rt->events);
  af_free(rt->allocs);
  af_free(rt->hosts);
  af_free(rt->trace);
  af_free(rt->obs);
  af_free(rt->obsdata);
  af_free(rt->mods);
  rt->mods = NULL;
  rt->capmods = rt->nmodules = 0;
  rt->streams = NULL;
  rt->events = NULL;
  rt->allocs = NULL;
  rt->hosts = NULL;
  rt->trace = NULL;
  rt->obs = NULL;
  rt->obsdata = NULL;
  rt->capstreams = rt->capevents = rt->capallocs = rt->caphosts = 0;
  rt->captrace = rt->capobs = rt->capobsdata = 0;
  rt->active = 0;
  pthread_mutex_unlock(&rt->mu);
}

/* ---- ABI flavours and backends ---- */

static const char *const abi_names[RT__ABI_COUNT] = {"cuda", "rocm"};

const char *asyncfuzz_rt_abi_name(int abi) {
  return abi >= 0 && abi < RT__ABI_COUNT ? abi_names[abi] : "?";
}

int asyncfuzz_rt_abi_parse(const char *name) {
  for (int a = 0; a < RT__ABI_COUNT; a++)
    if (strcmp(name, abi_names[a]) == 0)
      return a;
  return -1;
}

static const char *const backend_names[RT__BACKEND_COUNT] = {"sim", "cuda", "hip"};

const char *asyncfuzz_rt_backend_name(int backend) {
  return backend >= 0 && backend < RT__BACKEND_COUNT ? backend_names[backend] : "?";
}

int asyncfuzz_rt_backend_parse(const char *name, int *raw) {
  *raw = 0;
  for (int b = 0; b < RT__BACKEND_COUNT; b++) {
    size_t k = strlen(backend_names[b]);
    if (strncmp(name, backend_names[b], k) != 0)
      continue;
    if (name[k] == '\0' || (b != RT_BACKEND_SIM && strcmp(name + k, ":tagged") == 0))
      return b;
    if (b != RT_BACKEND_SIM && strcmp(name + k, ":raw") == 0) {
      *raw = 1;
      return b;
    }
  }
  return -1;
}

/* What opening a hardware backend needs: its library, the environment variables naming another
 * one and the device, the driver library it links, and what builds it. */
static const struct {
  const char *lib, *lib_env, *dev_env, *driver, *driver_what, *missing, *builds;
} dev_libs[RT__BACKEND_COUNT] = {
    [RT_BACKEND_CUDA] = {"libasyncfuzz_cuda.so", "ASYNCFUZZ_CUDA_BACKEND", "ASYNCFUZZ_CUDA_DEVICE",
                         "libcuda.so", "the NVIDIA driver library", "CUDA driver",
                         "the CUDA toolkit"},
    [RT_BACKEND_HIP] = {"libasyncfuzz_hip.so", "ASYNCFUZZ_HIP_BACKEND", "ASYNCFUZZ_HIP_DEVICE",
                        "libamdhip64.so", "the HIP runtime library", "HIP runtime",
                        "the HIP headers (libamdhip64-dev)"},
};

/* The backend's library: $<lib_env>, else next to this library. */
static int open_dev_locked(int backend, char *msg, size_t n) {
  static int tried[RT__BACKEND_COUNT], failed[RT__BACKEND_COUNT];
  static char why[RT__BACKEND_COUNT][512];
  if (backend <= RT_BACKEND_SIM || backend >= RT__BACKEND_COUNT) {
    snprintf(msg, n, "unknown backend %d", backend);
    return AF_EUNSUPPORTED;
  }
  if (runner__g_dev[backend])
    return 0;
  if (tried[backend] && failed[backend]) {
    snprintf(msg, n, "%s", why[backend]);
    return AF_EUNSUPPORTED;
  }
  tried[backend] = 1;
  char path[4096];
  const char *env = getenv(dev_libs[backend].lib_env), *name = backend_names[backend];
  Dl_info di;
  if (env && *env) {
    snprintf(path, sizeof path, "%s", env);
  } else if (dladdr((void *)open_dev_locked, &di) && di.dli_fname && strchr(di.dli_fname, '/')) {
    snprintf(path, sizeof path, "%.*s/%s", (int)(strrchr(di.dli_fname, '/') - di.dli_fname),
             di.dli_fname, dev_libs[backend].lib);
  } else {
    snprintf(path, sizeof path, "%s", dev_libs[backend].lib);
  }
  failed[backend] = 1;
  char *w = why[backend];
  size_t wn = sizeof why[backend];
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    const char *e = dlerror();
    if (e && strstr(e, dev_libs[backend].driver))
      snprintf(w, wn, "%s is missing (%.300s): this machine has no %s",
               dev_libs[backend].driver_what, e, dev_libs[backend].missing);
    else
      snprintf(w, wn, "cannot load the %s backend (%.300s): build asyncfuzz with %s, or set %s",
               name, e ? e : path, dev_libs[backend].builds, dev_libs[backend].lib_env);
  } else {
    const RtDevOps *(*get)(void) = (const RtDevOps *(*)(void))dlsym(lib, "asyncfuzz_dev_ops");
    const RtDevOps *ops = get ? get() : NULL;
    const char *d = getenv(dev_libs[backend].dev_env);
    char m[400] = "";
    if (ops == NULL || ops->abi != RT_DEV_ABI || strcmp(ops->name, name) != 0)
      snprintf(w, wn, "%.400s is not the %s backend of this asyncfuzz build", path, name);
    else if (ops->init(d && *d ? atoi(d) : 0, &runner__g_dev_info[backend], m, sizeof m))
      snprintf(w, wn, "%s", m);
    else
      runner__g_dev[backend] = ops, failed[backend] = 0;
  }
  if (failed[backend])
    snprintf(msg, n, "%s", w);
  return failed[backend] ? AF_EUNSUPPORTED : 0;
}

int asyncfuzz_rt_backend_open(int backend, RtDeviceInfo *info, char *msg, size_t n) {
  if (info)
    memset(info, 0, sizeof *info);
  if (backend == RT_BACKEND_SIM) {
    if (info)
      snprintf(info->name, sizeof info->name, "sim");
    return 0;
  }
  pthread_mutex_lock(&runner__g_rt.mu);
  int rc = open_dev_locked(backend, msg, n);
  if (rc == 0 && info)
    *info = runner__g_dev_info[backend];
  pthread_mutex_unlock(&runner__g_rt.mu);
  return rc;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int asyncfuzz_rt_calibrate(int backend, double target_us, int elems, int *spin, double *us,
                           char *msg, size_t n) {
  if (backend == RT_BACKEND_SIM) {
    snprintf(msg, n, "the sim has no clock to calibrate against");
    return AF_EUNSUPPORTED;
  }
  int rc = asyncfuzz_rt_backend_open(backend, NULL, msg, n);
  if (rc)
    return rc;
  const RtDevOps *dev = runner__g_dev[backend];
  pthread_mutex_lock(&runner__g_rt.mu);
  dev->enter();
  int code = 0;
  double t[5] = {0}; /* the median of 5 launches */
  int s = 1;
  for (; s <= (1 << 24); s *= 2) {
    if ((code = dev->time_spin(s, elems, 5, t)) != 0)
      break;
    qsort(t, 5, sizeof t[0], cmp_double);
    if (t[2] >= target_us)
      break;
  }
  pthread_mutex_unlock(&runner__g_rt.mu);
  if (code) {
    snprintf(msg, n, "timing the sentinel kernel failed: %s", dev->error_name(code));
    return AF_ERUNTIME;
  }
  *spin = s > (1 << 24) ? (1 << 24) : s;
  *us = t[2];
  return 0;
}

int asyncfuzz_rt_device_broken(void) {
  return runner__g_rt.dev_broken;
}

void runner__rt_config(RtConfig *out) {
  Rt *rt = runner__enter();
  *out = rt->cfg;
  runner__leave(rt);
}

int runner__rt_thread(void) {
  Rt *rt = runner__enter();
  int tid = runner__t_tid;
  runner__leave(rt);
  return tid;
}

int runner__rt_new_thread(void) {
  Rt *rt = runner__enter();
  int tid = rt->next_tid++;
  runner__leave(rt);
  return tid;
}

void runner__rt_async_error(int detail) {
  Rt *rt = runner__enter();
  RtRec *r = runner__rec_new(rt, RT_CALL_ASYNC_ERROR);
  runner__rec_fail(rt, r, RT_ERR_INVALID_VALUE, detail);
  runner__leave(rt);
}

void asyncfuzz_rt_note(int note, int region, int value) {
  static const int calls[] = {RT_CALL_SPAWN, RT_CALL_START,   RT_CALL_YIELD,
                              RT_CALL_AWAIT, RT_CALL_RELEASE, RT_CALL_ACQUIRE};
  Rt *rt = runner__enter();
  int async = note == RT_NOTE_RELEASE || note == RT_NOTE_ACQUIRE;
  int *max = async ? &rt->sum.max_async : &rt->sum.max_regions;
  if (region >= *max)
    *max = region + 1;
  if (note >= 0 && note <= RT_NOTE_ACQUIRE) {
    RtRec *r = runner__rec_new(rt, calls[note]);
    runner__rec_arg(r, async ? RT_REF(RT_REF_ASYNC, region, 0)
                             : RT_REF(RT_REF_REGION, region, (uint32_t)(value + 1)));
  }
  runner__leave(rt);
}

/* ---- batches: many cases in one process ---- */

/* Schedule number k of $ASYNCFUZZ_SCHEDULES ("POLICY@SEED,..."), over the env defaults. */
static void env_schedule(RtConfig *c, int k) {
  const char *p = getenv("ASYNCFUZZ_SCHEDULES");
  for (int i = 0; p && *p && i < k; i++) {
    p = strchr(p, ',');
    p = p ? p + 1 : NULL;
  }
  if (p == NULL || *p == '\0')
    return;
  char name[16];
  size_t len = strcspn(p, "@,");
  snprintf(name, sizeof name, "%.*s", (int)(len < 15 ? len : 15), p);
  int pol = asyncfuzz_rt_policy_parse(name);
  if (pol >= 0)
    c->policy = pol;
  if (p[len] == '@')
    c->seed = strtoull(p + len + 1, NULL, 0);
}

void asyncfuzz_case_begin(int32_t id, int32_t sched) {
  (void)id;
  Rt *rt = &runner__g_rt;
  pthread_mutex_lock(&rt->mu);
  RtConfig c = env_config();
  env_schedule(&c, sched);
  /* the modules the batch loaded in its constructor, before the first case, stay valid */
  begin_or_die(rt, &c, rt->active || runner__g_env_run);
  rt->next_tid = 0;
  runner__t_tid = rt->next_tid++; /* the caller is the host, T0 */
  runner__g_env_run = 1;
  pthread_mutex_unlock(&rt->mu);
}

/* Ends case `id`: its coroutines still queued run now (as at process exit), the run ends
 * without draining (its host buffers are freed) and the trace goes to
 * $ASYNCFUZZ_TRACE_DIR/case-ID-SCHED.bin, written to a temporary name and renamed, so a case whose
 * file exists finished. */
void asyncfuzz_case_end(int32_t id, int32_t sched) {
  runner__rt_async_quiesce();
  Rt *rt = &runner__g_rt;
  pthread_mutex_lock(&rt->mu);
  int active = rt->active;
  pthread_mutex_unlock(&rt->mu);
  if (!active)
    return;
  end_run(0);
  const char *dir = getenv("ASYNCFUZZ_TRACE_DIR");
  if (dir == NULL)
    return;
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/case-%d-%d.bin", dir, (int)id, (int)sched);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  if (asyncfuzz_rt_write_trace_bin(tmp) == 0)
    rename(tmp, path);
  else
    remove(tmp);
  if (rt->dev_broken) {
    /* a sticky error: every later case of this process would fail with it; the harness runs
     * the rest of the batch in fresh processes */
    fprintf(stderr, "asyncfuzz runtime: the CUDA context is lost after case %d; exiting\n",
            (int)id);
    _exit(75);
  }
}

/* Code compiled by MLIR runs with no harness around it: when the run was started from the
 * environment and ASYNCFUZZ_TRACE names a file, the run is ended at process exit and its trace
 * (docs/trace-format.md) and observations ("observe ID V0 V1 ...") are written there. */
__attribute__((destructor)) static void env_run_exit(void) {
  const char *path = getenv("ASYNCFUZZ_TRACE");
  const char *bin = getenv("ASYNCFUZZ_TRACE_BIN");
  if (!runner__g_env_run || (path == NULL && bin == NULL) || !runner__g_rt.active)
    return;
  /* no runner__drain: the program has freed its host buffers by now, and work still pending on them
   * would write into freed memory (the trace shows it never completed) */
  end_run(0);
  if (bin)
    asyncfuzz_rt_write_trace_bin(bin);
  if (path == NULL)
    return;
  AfBuf b;
  af_buf_init(&b);
  af_buf_printf(&b, "# asyncfuzz trace v1 policy=%s seed=%llu\n",
                asyncfuzz_rt_policy_name(runner__g_rt.cfg.policy),
                (unsigned long long)runner__g_rt.cfg.seed);
  asyncfuzz_rt_format_trace(&b, 0, -1);
  for (int i = 0; i < runner__g_rt.nobs; i++) {
    af_buf_printf(&b, "observe %d", runner__g_rt.obs[i].id);
    for (int64_t k = 0; k < runner__g_rt.obs[i].n; k++)
      af_buf_printf(&b, " %d", runner__g_rt.obs[i].vals[k]);
    af_buf_puts(&b, "\n");
  }
  FILE *f = b.oom ? NULL : fopen(path, "w");
  if (f) {
    fputs(b.p ? b.p : "", f);
    fclose(f);
  }
  af_buf_free(&b);
}
