/*
 * gpu_child.c: fault isolation for GPU runs (check.h). One child process, forked before
 * anything in the parent touches CUDA, opens the device, calibrates the spin count if asked,
 * and then checks cases sent over a pipe with check__builtin on the cuda backend. The parent
 * waits for each answer with a watchdog. A driver crash, a hang or a sticky context error
 * costs the child, never the campaign: that case gets a verdict and the next case starts a
 * fresh child.
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
  AfChild child;
  CheckGpuInfo info;
  int unavailable; /* the device could not be opened: do not try again */
  char why[512];
  CheckOpts o; /* what the child was started with */
} g = {.child = {-1, -1, -1}};

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
  int st;
  af_child_end(&g.child, 0, &st); /* end of file: the child ends its loop */
}

/* A process forked from one that has a GPU child (a campaign worker, a reducer job) must not
 * share it: it forgets it and starts its own when it needs one. */
static void forget_after_fork(void) {
  if (g.child.to >= 0)
    close(g.child.to);
  if (g.child.from >= 0)
    close(g.child.from);
  g.child.pid = g.child.to = g.child.from = -1;
}

static int start(const CheckOpts *o, AfErr *err) {
  static int atfork;
  if (!atfork && pthread_atfork(NULL, NULL, forget_after_fork) == 0)
    atfork = 1;
  if (g.child.pid > 0)
    return 0;
  if (g.unavailable)
    return af_err_set(err, AF_EUNSUPPORTED, "%s", g.why);
  int rc = af_child_start(&g.child, child_main, (void *)o, 1, err);
  if (rc)
    return rc;
  g.o = *o;
  Hello h;
  int r = af_child_read(&g.child, &h, sizeof h, env_seconds("ASYNCFUZZ_GPU_TIMEOUT", 60) + 60);
  if (r || h.magic != GC_MAGIC) {
    int st = 0;
    af_child_end(&g.child, SIGKILL, &st);
    return af_err_set(err, AF_ERUNTIME, "the GPU child process did not start (%s)",
                      r == -2 ? "no answer in time" : "it died");
  }
  if (!h.ok) {
    int st;
    af_child_end(&g.child, 0, &st);
    g.unavailable = 1;
    snprintf(g.why, sizeof g.why, "%s", h.msg);
    return af_err_set(err, AF_EUNSUPPORTED, "%s", h.msg);
  }
  g.info.dev = h.dev;
  g.info.spin = h.spin;
  g.info.spin_us = h.spin_us;
  return 0;
}

int check_gpu_restarts(void) {
  return g.info.restarts;
}

int check_gpu_info(const CheckOpts *o, CheckGpuInfo *info, AfErr *err) {
  int rc = start(o, err);
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

int check__gpu(const GenCase *c, const LowerSpec *spec, const Schedule *s, int ns,
               const CheckOpts *o, CheckResult *out, AfErr *err) {
  if (ns > CHECK_MAX_SCHED)
    ns = CHECK_MAX_SCHED;
  int rc = start(o, err);
  if (rc)
    return rc;
  char *json = gen_case_to_json(c);
  Reply *rp = malloc(sizeof *rp);
  Request *rq = calloc(1, sizeof *rq);
  if (json == NULL || rp == NULL || rq == NULL) {
    af_free(json);
    free(rp);
    free(rq);
    return af_err_set(err, AF_ENOMEM, "out of memory sending a case to the GPU child");
  }
  rq->magic = GC_MAGIC;
  rq->json_len = (uint32_t)strlen(json);
  rq->spec = *spec;
  rq->o = *o;
  rq->ns = ns;
  memcpy(rq->s, s, sizeof *s * (size_t)ns);
  int wr = af_child_write(&g.child, rq, sizeof *rq) || af_child_write(&g.child, json, rq->json_len);
  double limit = env_seconds("ASYNCFUZZ_GPU_TIMEOUT", 60);
  int r = wr ? -1 : af_child_read(&g.child, rp, sizeof *rp, limit);
  if (r == 0 && rp->magic == GC_MAGIC) {
    rc = rp->rc;
    if (rc)
      af_err_set(err, rc, "%s", rp->msg);
    else
      *out = rp->res;
    if (rp->broken) { /* a sticky error: this context is lost, the next case gets a new one */
      int st;
      af_child_end(&g.child, 0, &st);
      g.info.restarts++;
    }
  } else {
    int st = 0;
    af_child_end(&g.child, r == -2 ? SIGKILL : 0, &st);
    g.info.restarts++;
    char why[128], sig[32];
    af_child_how(st, r == -2, limit, sig, sizeof sig, why, sizeof why);
    fault_verdicts(spec, s, ns, r == -2 ? VERDICT_TIMEOUT : VERDICT_RUNTIME_ERROR, sig, why, out);
    rc = 0;
  }
  af_free(json);
  free(rp);
  free(rq);
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
