/*
 * rt_run.c: a run of the runtime library: begin and end, the configuration from the
 * harness or the environment (ABI flavour included), entering and leaving every call, the
 * backends (the sim, the cuda and hip libraries loaded on demand, calibration), notes of the
 * async runtime, batch cases.
 */
#include "rt_sim_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the async runtime's hooks (runtime_int.h) */
static int (*g_async_quiesce)(void);
static void (*g_async_reset)(void);

void rt__rt_set_async(int (*quiesce)(void), void (*reset)(void)) {
  g_async_quiesce = quiesce;
  g_async_reset = reset;
}

int rt__rt_async_quiesce(void) {
  return g_async_quiesce ? g_async_quiesce() : 0;
}

void rt__rt_async_reset(void) {
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
    int save = rt__t_tid;
    rt__t_tid = 0;
    RtRec *r = rt__rec_new(rt, RT_CALL_DEVICE_SYNC);
    rt__t_tid = save;
    rt__dev_result(rt, r, code, RT_DETAIL_NONE);
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
  /* host memory the program registered and left registered (a sticky error, on purpose or not,
   * made its unregister fail, or the program has none): the driver keeps a registration until it
   * is undone, and the next run's buffers, at the same addresses, could not be registered */
  for (int i = 0; i < rt->nhosts; i++) {
    HostBuf *h = &rt->hosts[i];
    if ((h->id & 0x800000) && !h->adopted && h->bytes > 0) {
      rt->dev->host_unregister(h->p);
      h->bytes = 0;
    }
  }
}

static void free_run(Rt *rt) {
  dev_release(rt);
  for (int i = 0; i < rt->nallocs; i++)
    if (!rt->allocs[i].dev)
      free(rt->allocs[i].p);
  rt__sched_reset(rt);
  rt->nstreams = rt->nevents = rt->nallocs = rt->nhosts = rt->nfreed = rt->nfx = 0;
  /* the trace of the run that ends stays readable for one more run: the two arrays swap */
  RtRec *t = rt->prev;
  int cap = rt->capprev;
  rt->prev = rt->trace;
  rt->nprev = rt->ntrace;
  rt->capprev = rt->captrace;
  rt->trace = t;
  rt->captrace = cap;
  rt->ntrace = rt->nobs = rt->nobsdata = 0;
}

/* The calls a run may fail on purpose, as a device fails them: X(call, error, sticky). */
static const struct {
  int call, err, sticky;
} inject_kinds[] = {
    {RT_CALL_MEM_ALLOC, RT_ERR_OUT_OF_MEMORY, 0},     /* memory runs out */
    {RT_CALL_MODULE_LOAD, RT_ERR_INVALID_PTX, 0},     /* a module does not load */
    {RT_CALL_STREAM_CREATE, RT_ERR_OUT_OF_MEMORY, 0}, /* no resources for a stream */
    {RT_CALL_EVENT_CREATE, RT_ERR_OUT_OF_MEMORY, 0},
    {RT_CALL_LAUNCH_KERNEL, RT_ERR_LAUNCH_FAILED, 1}, /* a kernel faults: the context is lost */
    {RT_CALL_MEMCPY, RT_ERR_ILLEGAL_ADDRESS, 1},
    {RT_CALL_STREAM_SYNCHRONIZE, RT_ERR_LAUNCH_FAILED, 1}, /* a fault reported at the wait */
    {RT_CALL_EVENT_SYNCHRONIZE, RT_ERR_LAUNCH_TIMEOUT, 1},
};

/* Which call this run fails on purpose (cfg.fail_pct), from its own generator seeded by the
 * schedule seed: the schedule's draws are the same with it or without. */
static void inject_plan(Rt *rt, const RtConfig *cfg) {
  rt->inj_call = -1;
  rt->inj_seen = rt->sticky_err = 0;
  if (cfg->fail_pct <= 0)
    return;
  AfRng f;
  af_rng_seed(&f, af_mix64(cfg->seed, 0xFA11CA11ull + (uint64_t)cfg->policy));
  if (!af_rng_chance(&f, cfg->fail_pct))
    return;
  int k = (int)af_rng_below(&f, (uint32_t)(sizeof inject_kinds / sizeof inject_kinds[0]));
  rt->inj_call = inject_kinds[k].call;
  rt->inj_err = inject_kinds[k].err;
  rt->inj_sticky = inject_kinds[k].sticky;
  rt->inj_nth = 1 + (int)af_rng_below(&f, 3);
}

int rt__injected(Rt *rt, RtRec *r) {
  if (rt->sticky_err) {
    rt__rec_fail(rt, r, rt->sticky_err, RT_DETAIL_INJECTED);
    return 1;
  }
  if (rt->cur_call != rt->inj_call || ++rt->inj_seen != rt->inj_nth)
    return 0;
  rt__rec_fail(rt, r, rt->inj_err, RT_DETAIL_INJECTED);
  rt->sum.injected = rt->inj_call + 1;
  rt->sum.injected_err = rt->inj_err;
  rt->sum.injected_sticky = rt->inj_sticky;
  if (rt->inj_sticky) {
    rt->sticky_err = rt->inj_err;
    /* on a GPU, as after a real sticky error: the process's context counts as lost, so the
     * harness runs the next case in a new one (asyncfuzz_rt_device_broken) */
    if (rt->dev)
      rt->dev_broken = 1;
  }
  return 1;
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
    memset(rt->ofns, 0, sizeof rt->ofns);
    rt->nofns = 0;
  }
  rt->dev = NULL;
  if (cfg->backend != RT_BACKEND_SIM) {
    if (rt__open_dev(cfg->backend, rt__g_backend_msg, sizeof rt__g_backend_msg))
      return AF_EUNSUPPORTED;
    rt->dev = rt__g_dev[cfg->backend];
    rt->dev->enter();
  }
  rt__rt_async_reset();
  rt__g_log[0] = '\0';
  memset(&rt->sum, 0, sizeof rt->sum);
  rt->sum.first_error = -1;
  rt->cfg = *cfg;
  if (rt->unlocked != (cfg->one_thread != 0))
    rt->unlocked = cfg->one_thread != 0;
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
  inject_plan(rt, cfg);
  rt__new_stream(rt); /* stream 0: the legacy default stream */
  rt->active = 1;
  return 0;
}

/* Why the runtime refused the settings of the current run ("": it did not). */
static char g_config_error[600];

const char *asyncfuzz_rt_config_error(void) {
  return g_config_error;
}

const char *asyncfuzz_rt_env_seed_error(void) {
  static char why[200];
  uint64_t v;
  const char *s = getenv("ASYNCFUZZ_SCHED_SEED");
  if (s == NULL || af_parse_decimal_u64(s, &v) == 0)
    return NULL;
  snprintf(why, sizeof why,
           "ASYNCFUZZ_SCHED_SEED=%.100s is not a whole decimal number from 0 to "
           "18446744073709551615",
           s);
  return why;
}

/* A user's program (asyncfuzz check-mlir sets them): ASYNCFUZZ_PROGRAM=1, and its kernels'
 * effects in the file ASYNCFUZZ_KERNELS names (kernel_foreign_set), read once per process. */
static void env_program(RtConfig *c) {
  static int loaded;
  const char *p = getenv("ASYNCFUZZ_PROGRAM"), *kf = getenv("ASYNCFUZZ_KERNELS");
  c->program = (p && strcmp(p, "1") == 0) || (kf && *kf);
  if (!kf || !*kf || loaded)
    return;
  loaded = 1;
  char *text = NULL, msg[200] = "";
  AfErr err = {0};
  if (af_read_file(kf, &text, NULL, &err) || kernel_foreign_set(text, msg, sizeof msg))
    snprintf(g_config_error, sizeof g_config_error, "ASYNCFUZZ_KERNELS=%.100s: %.200s", kf,
             err.msg[0] ? err.msg : msg);
  af_free(text);
}

/* The settings of a run started without a harness, from the environment. A value that is none
 * (an unknown backend or flavour) is noted in g_config_error and left at its default. */
static RtConfig env_config(void) {
  RtConfig c;
  memset(&c, 0, sizeof c);
  c.policy = RT_EAGER;
  const char *p = getenv("ASYNCFUZZ_POLICY");
  if (p && asyncfuzz_rt_policy_parse(p) >= 0)
    c.policy = asyncfuzz_rt_policy_parse(p);
  const char *s = getenv("ASYNCFUZZ_SCHED_SEED");
  if (s && af_parse_decimal_u64(s, &c.seed))
    snprintf(g_config_error, sizeof g_config_error, "%s", asyncfuzz_rt_env_seed_error());
  const char *m = getenv("ASYNCFUZZ_MEMFREE_SYNC");
  c.memfree_sync = m && strcmp(m, "1") == 0;
  const char *b = getenv("ASYNCFUZZ_BACKEND");
  if (b && *b && (c.backend = asyncfuzz_rt_backend_parse(b, &c.raw_handles)) < 0) {
    snprintf(g_config_error, sizeof g_config_error, "ASYNCFUZZ_BACKEND=%.100s is not a backend", b);
    c.backend = RT_BACKEND_SIM;
  }
  const char *sp = getenv("ASYNCFUZZ_SPIN");
  if (sp && *sp)
    c.spin = atoi(sp);
  env_program(&c);
  const char *abi = getenv("ASYNCFUZZ_ABI");
  if (abi && *abi && (c.abi = asyncfuzz_rt_abi_parse(abi)) < 0) {
    snprintf(g_config_error, sizeof g_config_error,
             "ASYNCFUZZ_ABI=%.100s is not an ABI flavour (cuda, rocm)", abi);
    c.abi = RT_ABI_CUDA;
  }
  return c;
}

/* A run the program started itself (no harness): a backend that cannot open here leaves it on
 * the sim; either way a refused setting is the run's first record, which fails, so the verdict
 * and the trace say it (a library does not print or exit). */
static void begin_env(Rt *rt, RtConfig *c, int keep_modules) {
  if (begin_locked(rt, c, keep_modules)) {
    snprintf(g_config_error, sizeof g_config_error, "backend %s: %.500s",
             asyncfuzz_rt_backend_name(c->backend), rt__g_backend_msg);
    c->backend = RT_BACKEND_SIM;
    begin_locked(rt, c, keep_modules);
  }
  if (g_config_error[0]) {
    int save = rt__t_tid;
    rt__t_tid = 0;
    RtRec *r = rt__rec_new(rt, RT_CALL_CONFIG);
    rt__rec_fail(rt, r, RT_ERR_INVALID_VALUE, RT_DETAIL_CONFIG);
    rt__t_tid = save;
  }
}

/* Every entry point: lock, start a run from the environment if none is active (code compiled
 * by MLIR calls mgpu* without a harness), name the thread, and rt__pump. */
Rt *rt__enter(void) {
  Rt *rt = &rt__g_rt;
  if (!rt->unlocked)
    pthread_mutex_lock(&rt->mu);
  if (!rt->active) {
    g_config_error[0] = '\0';
    RtConfig c = env_config();
    begin_env(rt, &c, 0);
    rt->next_tid = 0; /* no harness: the first thread to call in is the host, T0 */
    rt__g_env_run = 1;
  }
  if (rt__t_tid < 0)
    rt__t_tid = rt->next_tid++;
  return rt;
}

void rt__leave(Rt *rt) {
  if (!rt->unlocked)
    pthread_mutex_unlock(&rt->mu);
}

int asyncfuzz_rt_begin(const RtConfig *cfg) {
  Rt *rt = &rt__g_rt;
  pthread_mutex_lock(&rt->mu);
  rt__g_env_run = 0;
  g_config_error[0] = '\0';
  int rc = begin_locked(rt, cfg, 0);
  int oom = rt->oom;
  pthread_mutex_unlock(&rt->mu);
  return rc ? rc : oom ? AF_ENOMEM : 0;
}

/* Ends the run; rt__drain: first complete the pending device work (only while the memory it
 * touches is surely alive: not at process exit, after the program has freed its buffers). */
static int end_run(int do_drain) {
  Rt *rt = &rt__g_rt;
  pthread_mutex_lock(&rt->mu);
  int save = rt__t_tid;
  if (do_drain)
    rt__drain(rt);
  dev_finish(rt); /* cuda: always, so the device is idle before its memory goes */
  rt__t_tid = -1;
  for (int i = 1; i < rt->nstreams; i++) {
    if (!rt->streams[i].destroyed) {
      rt->sum.streams_leaked++;
      RtRec *r = rt__rec_new(rt, RT_CALL_LEAK);
      rt__rec_arg(r, RT_REF(RT_REF_STREAM, i, 0));
    }
  }
  for (int i = 0; i < rt->nevents; i++) {
    if (!rt->events[i].destroyed) {
      rt->sum.events_leaked++;
      RtRec *r = rt__rec_new(rt, RT_CALL_LEAK);
      rt__rec_arg(r, RT_REF(RT_REF_EVENT, i, 0));
    }
  }
  for (int i = 0; i < rt->nallocs; i++) {
    if (!rt->allocs[i].freed) {
      rt->sum.buffers_leaked++;
      RtRec *r = rt__rec_new(rt, RT_CALL_LEAK);
      rt__rec_arg(r, RT_REF(RT_REF_BUF, i, 0));
    }
  }
  rt__t_tid = save;
  rt->sum.streams_created = rt->nstreams - 1;
  rt->sum.events_created = rt->nevents;
  rt->sum.max_streams = rt->nstreams;
  rt->sum.max_events = rt->nevents;
  rt->sum.max_threads = rt->next_tid > rt->sum.max_threads ? rt->next_tid : rt->sum.max_threads;
  for (int i = 0; i < rt->nobs; i++)
    rt->obs[i].vals = rt->obsdata + (intptr_t)rt->obs[i].vals;
  dev_release(rt);
  rt->active = 0;
  if (rt->unlocked)
    rt->unlocked = 0; /* calls from now on lock again */
  int oom = rt->oom;
  pthread_mutex_unlock(&rt->mu);
  return oom ? AF_ENOMEM : 0;
}

int asyncfuzz_rt_end(void) {
  return end_run(1);
}

void asyncfuzz_rt_shutdown(void) {
  Rt *rt = &rt__g_rt;
  pthread_mutex_lock(&rt->mu);
  free_run(rt);
  for (int i = 0; i < rt->hwstreams; i++)
    af_free(rt->streams[i].q);
  rt->hwstreams = 0;
  af_free(rt->streams);
  af_free(rt->runbits);
  af_free(rt->events);
  af_free(rt->allocs);
  af_free(rt->freed);
  af_free(rt->hosts);
  af_free(rt->trace);
  af_free(rt->prev);
  af_free(rt->obs);
  af_free(rt->obsdata);
  af_free(rt->mods);
  rt->mods = NULL;
  rt->capmods = rt->nmodules = 0;
  rt->streams = NULL;
  rt->runbits = NULL;
  rt->caprun = 0;
  rt->events = NULL;
  rt->allocs = NULL;
  rt->freed = NULL;
  rt->capfreed = 0;
  rt->hosts = NULL;
  rt->trace = rt->prev = NULL;
  rt->nprev = rt->capprev = 0;
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

int asyncfuzz_rt_device_broken(void) {
  return rt__g_rt.dev_broken;
}

void rt__rt_config(RtConfig *out) {
  Rt *rt = rt__enter();
  *out = rt->cfg;
  rt__leave(rt);
}

int rt__rt_thread(void) {
  Rt *rt = rt__enter();
  int tid = rt__t_tid;
  rt__leave(rt);
  return tid;
}

int rt__rt_new_thread(void) {
  Rt *rt = rt__enter();
  int tid = rt->next_tid++;
  rt__leave(rt);
  return tid;
}

void rt__rt_async_error(int detail) {
  Rt *rt = rt__enter();
  RtRec *r = rt__rec_new(rt, RT_CALL_ASYNC_ERROR);
  rt__rec_fail(rt, r, RT_ERR_INVALID_VALUE, detail);
  rt__leave(rt);
}

void asyncfuzz_rt_note(int note, int region, int value) {
  static const int calls[] = {RT_CALL_SPAWN, RT_CALL_START,   RT_CALL_YIELD,
                              RT_CALL_AWAIT, RT_CALL_RELEASE, RT_CALL_ACQUIRE};
  Rt *rt = rt__enter();
  int async = note == RT_NOTE_RELEASE || note == RT_NOTE_ACQUIRE;
  int *max = async ? &rt->sum.max_async : &rt->sum.max_regions;
  if (region >= *max)
    *max = region + 1;
  if (note >= 0 && note <= RT_NOTE_ACQUIRE) {
    RtRec *r = rt__rec_new(rt, calls[note]);
    rt__rec_arg(r, async ? RT_REF(RT_REF_ASYNC, region, 0)
                         : RT_REF(RT_REF_REGION, region, (uint32_t)(value + 1)));
  }
  rt__leave(rt);
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

/* Begins case `id` under schedule number sched. After a sticky device error (every later call of
 * this process would fail with it) the case runs on the sim and leaves no trace: the harness
 * runs it again in a fresh process. */
void asyncfuzz_case_begin(int32_t id, int32_t sched) {
  (void)id;
  Rt *rt = &rt__g_rt;
  pthread_mutex_lock(&rt->mu);
  g_config_error[0] = '\0';
  RtConfig c = env_config();
  env_schedule(&c, sched);
  /* a device failing on purpose (--fail-calls): in the cases' runs only, never in what the
   * batch does before its first case (loading its module) */
  const char *fc = getenv("ASYNCFUZZ_FAIL_CALLS");
  c.fail_pct = fc && *fc ? atoi(fc) : 0;
  rt->no_trace = rt->dev_broken;
  if (rt->dev_broken)
    c.backend = RT_BACKEND_SIM;
  /* the modules the batch loaded in its constructor, before the first case, stay valid */
  begin_env(rt, &c, rt->active || rt__g_env_run);
  rt->next_tid = 0;
  rt__t_tid = rt->next_tid++; /* the caller is the host, T0 */
  rt__g_env_run = 1;
  pthread_mutex_unlock(&rt->mu);
}

/* Ends case `id`: its coroutines still queued run now (as at process exit), the run ends
 * without draining (its host buffers are freed) and the trace goes to
 * $ASYNCFUZZ_TRACE_DIR/case-ID-SCHED.bin, written to a temporary name and renamed, so a case whose
 * file exists finished. */
void asyncfuzz_case_end(int32_t id, int32_t sched) {
  rt__rt_async_quiesce();
  Rt *rt = &rt__g_rt;
  pthread_mutex_lock(&rt->mu);
  int active = rt->active;
  pthread_mutex_unlock(&rt->mu);
  if (!active)
    return;
  end_run(0);
  const char *dir = getenv("ASYNCFUZZ_TRACE_DIR");
  if (dir == NULL || rt->no_trace)
    return;
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/case-%d-%d.bin", dir, (int)id, (int)sched);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  if (asyncfuzz_rt_write_trace_bin(tmp) == 0)
    rename(tmp, path);
  else
    remove(tmp);
}

/* Code compiled by MLIR runs with no harness around it: when the run was started from the
 * environment and ASYNCFUZZ_TRACE names a file, the run is ended at process exit and its trace
 * (docs/trace-format.md) and observations ("observe ID V0 V1 ...") are written there. */
__attribute__((destructor)) static void env_run_exit(void) {
  const char *path = getenv("ASYNCFUZZ_TRACE");
  const char *bin = getenv("ASYNCFUZZ_TRACE_BIN");
  if (!rt__g_env_run || (path == NULL && bin == NULL) || !rt__g_rt.active)
    return;
  /* no rt__drain: the program has freed its host buffers by now, and work still pending on them
   * would write into freed memory (the trace shows it never completed) */
  end_run(0);
  if (bin)
    asyncfuzz_rt_write_trace_bin(bin);
  if (path == NULL)
    return;
  AfBuf b;
  af_buf_init(&b);
  af_buf_printf(&b, "# asyncfuzz trace v1 policy=%s seed=%llu\n",
                asyncfuzz_rt_policy_name(rt__g_rt.cfg.policy),
                (unsigned long long)rt__g_rt.cfg.seed);
  if (g_config_error[0])
    af_buf_printf(&b, "# settings refused: %s (the run went on on the sim)\n", g_config_error);
  for (const char *l = rt__g_log; *l;) { /* what a wrapper would have printed */
    size_t n = strcspn(l, "\n");
    af_buf_printf(&b, "# log: %.*s\n", (int)n, l);
    l += n + (l[n] == '\n');
  }
  asyncfuzz_rt_format_trace(&b, 0, -1);
  for (int i = 0; i < rt__g_rt.nobs; i++) {
    af_buf_printf(&b, "observe %d", rt__g_rt.obs[i].id);
    for (int64_t k = 0; k < rt__g_rt.obs[i].n; k++)
      af_buf_printf(&b, " %d", rt__g_rt.obs[i].vals[k]);
    af_buf_puts(&b, "\n");
  }
  FILE *f = b.oom ? NULL : fopen(path, "w");
  if (f) {
    fputs(b.p ? b.p : "", f);
    fclose(f);
  }
  af_buf_free(&b);
}
