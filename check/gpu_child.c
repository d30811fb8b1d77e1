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

#include <errno.h>
#include <poll.h>
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
  pid_t pid;
  int to, from; /* the parent's ends */
  CheckGpuInfo info;
  int unavailable; /* the device could not be opened: do not try again */
  char why[512];
  CheckOpts o; /* what the child was started with */
} g = {.pid = -1, .to = -1, .from = -1};

static int write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    c += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Reads n bytes; timeout_s < 0 waits for ever. 0, -1 (EOF or error) or -2 (timed out). */
static int read_all(int fd, void *p, size_t n, double timeout_s) {
  char *c = p;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (n > 0) {
    if (timeout_s >= 0) {
      struct timespec t;
      clock_gettime(CLOCK_MONOTONIC, &t);
      double left = timeout_s - ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9);
      if (left <= 0)
        return -2;
      struct pollfd pf = {.fd = fd, .events = POLLIN};
      int pr = poll(&pf, 1, (int)(left * 1000) + 1);
      if (pr < 0 && errno == EINTR)
        continue;
      if (pr == 0)
        return -2;
      if (pr < 0)
        return -1;
    }
    ssize_t r = read(fd, c, n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return -1;
    c += r;
    n -= (size_t)r;
  }
  return 0;
}

static double env_seconds(const char *name, double def) {
  const char *s = getenv(name);
  double v = s && *s ? atof(s) : 0;
  return v > 0 ? v : def;
}

/* ---- the child ---- */

static void child_main(int in, int out, const CheckOpts *o) {
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
  if (write_all(out, &h, sizeof h) || !h.ok)
    _exit(h.ok ? 1 : 0);
  Request rq;
  char *json = NULL;
  Reply *rp = malloc(sizeof *rp);
  if (rp == NULL)
    _exit(1);
  while (read_all(in, &rq, sizeof rq, -1) == 0 && rq.magic == GC_MAGIC) {
    char *nj = realloc(json, (size_t)rq.json_len + 1);
    if (nj == NULL)
      _exit(1);
    json = nj;
    if (read_all(in, json, rq.json_len, -1))
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
    if (write_all(out, rp, sizeof *rp) || rp->broken)
      break;
  }
  _exit(0);
}

/* ---- the parent ---- */

static void reap(int sig, int *status) {
  if (g.pid > 0) {
    if (sig)
      kill(g.pid, sig);
    while (waitpid(g.pid, status, 0) < 0 && errno == EINTR)
      ;
  }
  if (g.to >= 0)
    close(g.to);
  if (g.from >= 0)
    close(g.from);
  g.pid = -1;
  g.to = g.from = -1;
}

void check_gpu_stop(void) {
  int st;
  if (g.pid > 0 && g.to >= 0) {
    close(g.to); /* EOF: the child ends its loop */
    g.to = -1;
  }
  reap(0, &st);
}

/* A process forked from one that has a GPU child (a campaign worker, a reducer job) must not
 * share it: it forgets it and starts its own when it needs one. */
static void forget_after_fork(void) {
  if (g.to >= 0)
    close(g.to);
  if (g.from >= 0)
    close(g.from);
  g.pid = -1;
  g.to = g.from = -1;
}

static int start(const CheckOpts *o, AfErr *err) {
  static int atfork;
  if (!atfork && pthread_atfork(NULL, NULL, forget_after_fork) == 0)
    atfork = 1;
  if (g.pid > 0)
    return 0;
  if (g.unavailable)
    return af_err_set(err, AF_EUNSUPPORTED, "%s", g.why);
  int p2c[2], c2p[2];
  if (pipe(p2c))
    return af_err_set(err, AF_EIO, "pipe: %s", strerror(errno));
  if (pipe(c2p)) {
    close(p2c[0]);
    close(p2c[1]);
    return af_err_set(err, AF_EIO, "pipe: %s", strerror(errno));
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(p2c[0]), close(p2c[1]), close(c2p[0]), close(c2p[1]);
    return af_err_set(err, AF_EIO, "fork: %s", strerror(errno));
  }
  if (pid == 0) {
    close(p2c[1]);
    close(c2p[0]);
    signal(SIGPIPE, SIG_DFL);
    child_main(p2c[0], c2p[1], o);
  }
  close(p2c[0]);
  close(c2p[1]);
  g.pid = pid;
  g.to = p2c[1];
  g.from = c2p[0];
  g.o = *o;
  Hello h;
  int r = read_all(g.from, &h, sizeof h, env_seconds("ASYNCFUZZ_GPU_TIMEOUT", 60) + 60);
  if (r || h.magic != GC_MAGIC) {
    int st = 0;
    reap(SIGKILL, &st);
    return af_err_set(err, AF_ERUNTIME, "the GPU child process did not start (%s)",
                      r == -2 ? "no answer in time" : "it died");
  }
  if (!h.ok) {
    int st;
    reap(0, &st);
    g.unavailable = 1;
    snprintf(g.why, sizeof g.why, "%s", h.msg);
    return af_err_set(err, AF_EUNSUPPORTED, "%s", h.msg);
  }
  g.info.dev = h.dev;
  g.info.spin = h.spin;
  g.info.spin_us = h.spin_us;
  return 0;
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
  void (*old)(int) = signal(SIGPIPE, SIG_IGN);
  int wr = write_all(g.to, rq, sizeof *rq) || write_all(g.to, json, rq->json_len);
  double limit = env_seconds("ASYNCFUZZ_GPU_TIMEOUT", 60);
  int r = wr ? -1 : read_all(g.from, rp, sizeof *rp, limit);
  signal(SIGPIPE, old);
  if (r == 0 && rp->magic == GC_MAGIC) {
    rc = rp->rc;
    if (rc)
      af_err_set(err, rc, "%s", rp->msg);
    else
      *out = rp->res;
    if (rp->broken) { /* a sticky error: this context is lost, the next case gets a new one */
      int st;
      reap(0, &st);
      g.info.restarts++;
    }
  } else {
    int st = 0;
    reap(r == -2 ? SIGKILL : 0, &st);
    g.info.restarts++;
    char why[128], sig[32];
    if (r == -2) {
      snprintf(why, sizeof why, "hung (no answer in %g s)", limit);
      snprintf(sig, sizeof sig, "hang");
    } else if (WIFSIGNALED(st)) {
      snprintf(why, sizeof why, "was killed by signal %d (%s)", WTERMSIG(st),
               strsignal(WTERMSIG(st)));
      snprintf(sig, sizeof sig, "signal-%d", WTERMSIG(st));
    } else {
      snprintf(why, sizeof why, "exited with status %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
      snprintf(sig, sizeof sig, "exit-%d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
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
