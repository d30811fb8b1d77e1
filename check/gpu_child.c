/*
 * gpu_child.c: fault isolation for GPU runs (check.h). Child processes, forked before anything
 * in the parent touches CUDA, open the device (the first calibrates the spin count if asked;
 * the others take its count), and then check cases sent over a pipe with check__builtin on the
 * GPU backend. Several run cases at once (af_pool_run: each takes the next case when it
 * answers), each with its own context, streams and buffers; the parent waits for each answer
 * with a watchdog. A driver crash, a hang or a sticky context error costs the child, never the
 * campaign: that case gets a verdict and the next case starts a fresh child.
 *
 * Messages are the structs below written whole: parent and child are the same binary.
 */
#include "check_int.h"

#include "../base/proc.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GC_MAGIC 0x41464743u /* "AFGC" */

typedef struct Hello {
  uint32_t magic;
  int ok;
  char msg[512];
  RtDeviceInfo dev;
  int spin;
  double spin_us;
} Hello;

typedef struct Request {
  uint32_t magic;
  uint32_t json_len;
  LowerSpec spec;
  CheckOpts o;
  int ns;
  Schedule s[CHECK_MAX_SCHED];
} Request;

typedef struct Reply {
  uint32_t magic;
  int rc;
  int broken; /* the context hit a sticky error: this child exits after the reply */
  char msg[512];
  CheckResult res;
} Reply;

static struct {
  int init;
  AfChild child[CHECK_GPU_JOBS_MAX]; /* child[0] opened the device first (calibrated) */
  CheckGpuInfo info;
  int unavailable; /* the device could not be opened: do not try again */
  char why[512];
  int peak;   /* the most children at once */
  int opened; /* the first child opened the device: info holds its description and spin */
} g;

static void init_children(void) {
  if (g.init)
    return;
  g.init = 1;
  for (int i = 0; i < CHECK_GPU_JOBS_MAX; i++)
    g.child[i].pid = g.child[i].to = g.child[i].from = -1;
}

int check_gpu_jobs(const CheckOpts *o) {
  int k = o && o->gpu_jobs > 0 ? o->gpu_jobs : CHECK_GPU_JOBS;
  return k < CHECK_GPU_JOBS_MAX ? k : CHECK_GPU_JOBS_MAX;
}

static double env_seconds(const char *name, double def) {
  const char *s = getenv(name);
  double v = s && *s ? atof(s) : 0;
  return v > 0 ? v : def;
}

/* ---- the child ---- */

static void child_main(void *arg, int in, int out) {
  const CheckOpts *o = arg;
  AfChild parent = {-1, out, in}; /* (read from in, write to out) */
  Hello h;
  memset(&h, 0, sizeof h);
  h.magic = GC_MAGIC;
  h.spin = o->spin > 0 ? o->spin : 0;
  if (asyncfuzz_rt_backend_open(o->backend, &h.dev, h.msg, sizeof h.msg) == 0) {
    h.ok = 1;
    if (o->spin < 0) {
      double target = env_seconds("ASYNCFUZZ_SPIN_US", 200);
      if (asyncfuzz_rt_calibrate(o->backend, target, 256, &h.spin, &h.spin_us, h.msg, sizeof h.msg))
        h.ok = 0;
    }
  }
  if (af_child_write(&parent, &h, sizeof h) || !h.ok)
    _exit(h.ok ? 1 : 0);
  Request rq;
  char *json = NULL;
  Reply *rp = malloc(sizeof *rp);
  if (rp == NULL)
    _exit(1);
  while (af_child_read(&parent, &rq, sizeof rq, -1) == 0 && rq.magic == GC_MAGIC) {
    char *nj = realloc(json, (size_t)rq.json_len + 1);
    if (nj == NULL)
      _exit(1);
    json = nj;
    if (af_child_read(&parent, json, rq.json_len, -1))
      break;
    json[rq.json_len] = '\0';
    memset(rp, 0, sizeof *rp);
    rp->magic = GC_MAGIC;
    GenCase c;
    AfErr e = {0};
    rq.o.isolate = 0;
    rq.o.backend = o->backend;
    rq.o.spin = h.spin;
    rp->rc = gen_case_from_json(&c, json, &e);
    if (rp->rc == 0) {
      rp->rc = check__builtin(&c, &rq.spec, rq.s, rq.ns, NULL, &rq.o, &rp->res, &e);
      gen_case_free(&c);
    }
    snprintf(rp->msg, sizeof rp->msg, "%s", e.msg);
    rp->broken = asyncfuzz_rt_device_broken();
    if (af_child_write(&parent, rp, sizeof *rp) || rp->broken)
      break;
  }
  _exit(0);
}

/* ---- the parent ---- */

void check_gpu_stop(void) {
  init_children();
  for (int i = 0; i < CHECK_GPU_JOBS_MAX; i++) {
    int st;
    af_child_end(&g.child[i], 0, &st); /* end of file: the child ends its loop */
  }
}

/* A process forked from one that has GPU children (a campaign worker, a reducer job, another
 * GPU child) must not share them: it forgets them and starts its own when it needs them. */
static void forget_after_fork(void) {
  for (int i = 0; g.init && i < CHECK_GPU_JOBS_MAX; i++) {
    if (g.child[i].to >= 0)
      close(g.child[i].to);
    if (g.child[i].from >= 0)
      close(g.child[i].from);
    g.child[i].pid = g.child[i].to = g.child[i].from = -1;
  }
}

/* Starts child[slot] if it does not run: slot 0 opens the device first (and calibrates where
 * o asks); the others open it with slot 0's spin count. */
static int start(int slot, const CheckOpts *o, AfErr *err) {
  static int atfork;
  init_children();
  if (!atfork && pthread_atfork(NULL, NULL, forget_after_fork) == 0)
    atfork = 1;
  if (g.child[slot].pid > 0)
    return 0;
  if (g.unavailable)
    return af_err_set(err, AF_EUNSUPPORTED, "%s", g.why);
  if (slot > 0 && !g.opened) {
    int rc = start(0, o, err); /* (the device's description and spin count come from the first) */
    if (rc)
      return rc;
  }
  CheckOpts co = *o;
  if (g.opened && co.spin < 0)
    co.spin = g.info.spin; /* (calibrated once, by the first child the first time) */
  AfPool p = {.child = g.child, .k = CHECK_GPU_JOBS_MAX};
  int rc = af_pool_start_child(&p, slot, child_main, &co, err);
  if (rc)
    return rc;
  AfChild *c = &g.child[slot];
  Hello h;
  int r = af_child_read(c, &h, sizeof h, env_seconds("ASYNCFUZZ_GPU_TIMEOUT", 60) + 60);
  if (r || h.magic != GC_MAGIC) {
    int st = 0;
    af_child_end(c, SIGKILL, &st);
    return af_err_set(err, AF_ERUNTIME, "the GPU child process did not start (%s)",
                      r == -2 ? "no answer in time" : "it died");
  }
  if (!h.ok) {
    int st;
    af_child_end(c, 0, &st);
    if (slot == 0) {
      g.unavailable = 1;
      snprintf(g.why, sizeof g.why, "%s", h.msg);
    }
    return af_err_set(err, AF_EUNSUPPORTED, "%s", h.msg);
  }
  if (!g.opened) { /* (the first child: the device and its calibration, kept after restarts) */
    g.opened = 1;
    g.info.dev = h.dev;
    g.info.spin = h.spin;
    g.info.spin_us = h.spin_us;
  }
  return 0;
}

int check_gpu_restarts(void) {
  return g.info.restarts;
}

int check_gpu_peak(void) {
  return g.peak;
}

int check_gpu_info(const CheckOpts *o, CheckGpuInfo *info, AfErr *err) {
  int rc = start(0, o, err);
  if (rc == 0)
    *info = g.info;
  return rc;
}

/* Every schedule of the case gets the verdict of a child that died or hung on it. */
static void fault_verdicts(const LowerSpec *spec, const Schedule *s, int ns, int cls,
                           const char *sig, const char *why, CheckResult *out) {
  out->nsched = ns;
  out->first_fail = ns > 0 ? 0 : -1;
  out->device_errors = 0;
  for (int k = 0; k < ns; k++) {
    Verdict *v = &out->verdict[k];
    memset(v, 0, sizeof *v);
    out->sched[k] = s[k];
    v->cls = cls;
    v->rt_failed = 1;
    v->hb_first = v->error_seq = -1;
    snprintf(v->signature, sizeof v->signature, "%s|%s|%s", lower_family(spec),
             cls == VERDICT_TIMEOUT ? "timeout|device" : "runtime_error|device-process", sig);
    snprintf(v->detail, sizeof v->detail,
             "the GPU child process %s while it ran this case; it was replaced", why);
  }
}

/* One check__gpu: its cases, and what the pool's callbacks share. */
typedef struct GpuRun {
  const GenCase *const *cs;
  const LowerSpec *spec;
  const Schedule *s;
  int sstride, ns, running;
  char busy[CHECK_GPU_JOBS_MAX]; /* the slot's child has a case */
  const CheckOpts *o;
  CheckResult *out;
  Request *rq;
  Reply *rp;
  int rc; /* the first case the child could not check (a malformed case): its error */
  AfErr err;
} GpuRun;

static int run_start(AfPool *p, int slot, AfErr *err) {
  GpuRun *r = p->ctx;
  return start(slot, r->o, err);
}

static int run_send(AfPool *p, int slot, int i) {
  GpuRun *r = p->ctx;
  char *json = gen_case_to_json(r->cs[i]);
  if (json == NULL)
    return -1;
  Request *rq = r->rq;
  rq->magic = GC_MAGIC;
  rq->json_len = (uint32_t)strlen(json);
  rq->spec = *r->spec;
  rq->o = *r->o;
  rq->ns = r->ns;
  memcpy(rq->s, r->s + (size_t)i * (size_t)r->sstride, sizeof *rq->s * (size_t)r->ns);
  AfChild *c = &p->child[slot];
  int wr = af_child_write(c, rq, sizeof *rq) || af_child_write(c, json, rq->json_len);
  af_free(json);
  if (wr)
    return -1;
  r->busy[slot] = 1;
  if (++r->running > g.peak)
    g.peak = r->running;
  return 0;
}

static int run_recv(AfPool *p, int slot, int i, double left) {
  GpuRun *r = p->ctx;
  Reply *rp = r->rp;
  AfChild *c = &p->child[slot];
  int got = af_child_read(c, rp, sizeof *rp, left);
  if (got != 0)
    return got;
  if (rp->magic != GC_MAGIC)
    return -1;
  r->busy[slot] = 0;
  r->running--;
  if (rp->rc && r->rc == 0) {
    r->rc = rp->rc;
    af_err_set(&r->err, rp->rc, "%s", rp->msg);
  } else if (rp->rc == 0) {
    r->out[i] = rp->res;
  }
  if (rp->broken) { /* a sticky error: this context is lost, the next case gets a new one */
    int st;
    af_child_end(c, 0, &st);
    g.info.restarts++;
  }
  return 0;
}

static int run_lost(AfPool *p, int slot, int i, int st, int hung, AfErr *err) {
  GpuRun *r = p->ctx;
  (void)err;
  if (r->busy[slot]) {
    r->busy[slot] = 0;
    r->running--;
  }
  g.info.restarts++;
  char why[128], sig[32];
  af_child_how(st, hung, p->limit, sig, sizeof sig, why, sizeof why);
  fault_verdicts(r->spec, r->s + (size_t)i * (size_t)r->sstride, r->ns,
                 hung ? VERDICT_TIMEOUT : VERDICT_RUNTIME_ERROR, sig, why, &r->out[i]);
  return 0;
}

int check__gpu(const GenCase *const *cs, int n, const LowerSpec *spec, const Schedule *s,
               int sstride, int ns, const CheckOpts *o, CheckResult *out, AfErr *err) {
  if (ns > CHECK_MAX_SCHED)
    ns = CHECK_MAX_SCHED;
  int rc = start(0, o, err); /* (the device's refusal, before any case) */
  if (rc)
    return rc;
  GpuRun r = {.cs = cs, .spec = spec, .s = s, .sstride = sstride, .ns = ns, .o = o, .out = out};
  r.rp = malloc(sizeof *r.rp);
  r.rq = calloc(1, sizeof *r.rq);
  if (r.rp == NULL || r.rq == NULL) {
    free(r.rp);
    free(r.rq);
    return af_err_set(err, AF_ENOMEM, "out of memory sending a case to the GPU child");
  }
  AfPool p = {.child = g.child,
              .k = check_gpu_jobs(o),
              .limit = env_seconds("ASYNCFUZZ_GPU_TIMEOUT", 60),
              .ctx = &r,
              .start = run_start,
              .send = run_send,
              .recv = run_recv,
              .lost = run_lost};
  rc = af_pool_run(&p, n, err);
  if (rc == 0 && r.rc) {
    *err = r.err;
    rc = r.rc;
  }
  free(r.rp);
  free(r.rq);
  return rc;
}

void check_gpu_describe(const CheckOpts *o, const CheckGpuInfo *gi, char *dev, size_t n) {
  char spin[64] = "each case's own spin", d[400];
  if (gi->spin > 0 && gi->spin_us > 0)
    snprintf(spin, sizeof spin, "spin %d (calibrated: %.1f us)", gi->spin, gi->spin_us);
  else if (gi->spin > 0)
    snprintf(spin, sizeof spin, "spin %d", gi->spin);
  check_device_str(o, &gi->dev, d, sizeof d);
  snprintf(dev, n, "%s %s, %s", check_backend_name(o), d, spin);
}
