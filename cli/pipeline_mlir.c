/*
 * pipeline_mlir.c: cases through the real lowering, many per process.
 *
 * A batch: every case rendered alone is one chunk of a --split-input-file input to one
 * mlir-opt (lower/mlir.c classifies each chunk: rejected, unconverted, crash, timeout or
 * runnable). The runnable cases are rendered again as one module (one function per case,
 * gen_render_mlir_batch), lowered by one mlir-opt and run by one mlir-runner per schedule;
 * libasyncfuzz_rt starts a fresh run for each case and writes case-ID.bin. A case without its
 * trace file (the runner crashed or timed out in it or before it) is run again alone, from its
 * own lowered module, so one bad case costs only itself. Every trace is then judged as for the
 * builtin lowering: the happens-before checker and the sequential oracle.
 */
#include "pipeline.h"

#include "../base/proc.h"
#include "../lower/mlir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <stdarg.h>

/* snprintf where cutting short is intended (long paths, long diagnostics) */
__attribute__((format(printf, 3, 4))) static void fmt(char *out, size_t n, const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  vsnprintf(out, n, f, ap);
  va_end(ap);
}

static void lowering_verdict(const LowerSpec *spec, const MlirLowered *l, Verdict *v) {
  memset(v, 0, sizeof *v);
  v->hb_first = -1;
  v->error_seq = -1;
  static const int cls[] = {VERDICT_PASS, VERDICT_LOWERING_REJECTED, VERDICT_LOWERING_UNCONVERTED,
                            VERDICT_LOWERING_CRASH, VERDICT_TIMEOUT};
  v->cls = cls[l->outcome];
  fmt(v->signature, sizeof v->signature, "%s|%s|%s", spec->name, oracle_verdict_name(v->cls),
      l->cause);
  fmt(v->detail, sizeof v->detail, "%s", l->detail);
}

static void tool_verdict(const LowerSpec *spec, int cls, const char *cause, const char *detail,
                         Verdict *v) {
  memset(v, 0, sizeof *v);
  v->hb_first = -1;
  v->error_seq = -1;
  v->cls = cls;
  v->rt_failed = cls == VERDICT_RUNTIME_ERROR;
  fmt(v->signature, sizeof v->signature, "%s|%s|%s", spec->name, oracle_verdict_name(cls), cause);
  fmt(v->detail, sizeof v->detail, "%s", detail);
}

/* Judges the trace file of one case. *found: whether the file was there. */
static int judge_trace(const char *path, const GenCase *c, const LowerSpec *spec,
                       const OracleExpected *e, const PipeOpts *o, Verdict *v, int *found,
                       AfErr *err) {
  struct stat st;
  *found = stat(path, &st) == 0;
  if (!*found)
    return 0;
  RunnerTrace t;
  int rc = runner_trace_load(path, &t, err);
  if (rc)
    return rc;
  HbResult *hb = NULL;
  if (!(o && o->no_checker)) {
    HbOptions ho = {0};
    ho.lenient_free = o ? o->memfree_sync : 0;
    ho.nthreads = t.sum.max_threads;
    ho.nstreams = t.sum.max_streams;
    ho.nevents = t.sum.max_events;
    ho.nregions = t.sum.max_regions;
    ho.nasync = t.sum.max_async;
    rc = hb_check(t.recs, t.nrecs, &ho, &hb, err);
  }
  if (rc == 0 && oracle_judge(c, e, t.obs, t.nobs, t.recs, t.nrecs, &t.sum, hb, spec->name, v))
    rc = af_err_set(err, AF_ENOMEM, "out of memory judging a run");
  hb_result_free(hb);
  runner_trace_free(&t);
  return rc;
}

static void run_env(const Schedule *s, const PipeOpts *o, const char *tdir, char env[6][4200]) {
  fmt(env[0], sizeof env[0], "ASYNCFUZZ_TRACE_DIR=%s", tdir);
  fmt(env[1], sizeof env[1], "ASYNCFUZZ_POLICY=%s", asyncfuzz_rt_policy_name(s->policy));
  fmt(env[2], sizeof env[2], "ASYNCFUZZ_SCHED_SEED=%llu", (unsigned long long)s->seed);
  fmt(env[3], sizeof env[3], "ASYNCFUZZ_MEMFREE_SYNC=%d", o && o->memfree_sync ? 1 : 0);
  fmt(env[4], sizeof env[4], "ASYNCFUZZ_TRACE");
  fmt(env[5], sizeof env[5], "ASYNCFUZZ_TRACE_BIN");
}

/* The last non-empty line of a report, for a verdict's detail. */
static void tail_line(const char *path, char *out, size_t n) {
  char *text = NULL;
  AfErr e = {0};
  out[0] = '\0';
  if (af_read_file(path, &text, NULL, &e))
    return;
  size_t len = strlen(text);
  while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
    text[--len] = '\0';
  const char *l = strrchr(text, '\n');
  fmt(out, n, "%s", l ? l + 1 : text);
  af_free(text);
}

/* Runs case i alone from its own lowered module and judges it. */
static int run_alone(const LowerSpec *spec, const char *dir, int k, int i, const GenCase *c,
                     const MlirLowered *l, const Schedule *s, const OracleExpected *e,
                     const PipeOpts *o, Verdict *v, AfErr *err) {
  char mod[4200], tdir[4200], errp[4200], tpath[4300];
  fmt(mod, sizeof mod, "%s/alone-%d.mlir", dir, i);
  fmt(tdir, sizeof tdir, "%s/s%d-alone-%d", dir, k, i);
  fmt(errp, sizeof errp, "%s/s%d-alone-%d.err", dir, k, i);
  struct stat st;
  int rc = 0;
  if (stat(mod, &st) != 0)
    rc = af_write_file(mod, l->code, strlen(l->code), err);
  if (rc == 0 && mkdir(tdir, 0700) != 0 && errno != EEXIST)
    rc = af_err_set(err, AF_EIO, "cannot create %s: %s", tdir, strerror(errno));
  if (rc)
    return rc;
  char envs[6][4200];
  run_env(s, o, tdir, envs);
  char *env[] = {envs[0], envs[1], envs[2], envs[3], envs[4], envs[5], NULL};
  ProcResult r;
  rc = mlir_run_file(spec, mod, env, NULL, errp, spec->timeout, &r, err);
  if (rc)
    return rc;
  fmt(tpath, sizeof tpath, "%s/case-0.bin", tdir);
  int found;
  rc = judge_trace(tpath, c, spec, e, o, v, &found, err);
  if (rc || found)
    return rc;
  char last[400], detail[700];
  tail_line(errp, last, sizeof last);
  if (r.timed_out) {
    fmt(detail, sizeof detail, "mlir-runner ran past %.0f s on this case alone", spec->timeout);
    tool_verdict(spec, VERDICT_TIMEOUT, "mlir-runner", detail, v);
  } else if (r.signaled) {
    char cause[200];
    fmt(cause, sizeof cause, "mlir-runner killed by %s", strsignal(r.sig));
    fmt(detail, sizeof detail, "%s: %s", cause, last);
    tool_verdict(spec, VERDICT_RUNTIME_ERROR, cause, detail, v);
  } else {
    char cause[200], norm[160];
    mlir_normalize(last, norm, sizeof norm);
    fmt(cause, sizeof cause, "mlir-runner exit %d|%s", r.code, norm);
    fmt(detail, sizeof detail, "mlir-runner exited %d without finishing the case: %s", r.code,
        last);
    tool_verdict(spec, VERDICT_RUNTIME_ERROR, cause, detail, v);
  }
  return 0;
}

static void note_verdict(CheckResult *r, int k, const Schedule *s, const Verdict *v,
                         const PipeOpts *o) {
  if (r->first_fail >= 0 && o && o->stop_at_first)
    return;
  r->sched[k] = *s;
  r->verdict[k] = *v;
  if (r->nsched < k + 1)
    r->nsched = k + 1;
  if (v->cls != VERDICT_PASS && r->first_fail < 0)
    r->first_fail = k;
}

int pipeline_check_mlir(const GenCase *const *cs, int n, const LowerSpec *spec, const Schedule *s,
                        int ns, const OracleExpected *const *es, const PipeOpts *o,
                        CheckResult *out, AfErr *err) {
  if (ns > PIPE_MAX_SCHED)
    ns = PIPE_MAX_SCHED;
  for (int i = 0; i < n; i++) {
    out[i].nsched = 0;
    out[i].first_fail = -1;
  }
  char dir[4096];
  int rc = mlir_tmpdir(dir, sizeof dir, err);
  if (rc)
    return rc;
  char **chunks = af_calloc((size_t)n, sizeof *chunks);
  MlirLowered *low = af_calloc((size_t)n, sizeof *low);
  int *ids = af_calloc((size_t)n, sizeof *ids);
  const GenCase **run = af_calloc((size_t)n, sizeof *run);
  OracleExpected **own = af_calloc((size_t)n, sizeof *own);
  if (!chunks || !low || !ids || !run || !own)
    rc = af_err_set(err, AF_ENOMEM, "out of memory");
  for (int i = 0; i < n && rc == 0; i++) {
    int zero = 0;
    chunks[i] = gen_render_mlir_batch(&cs[i], &zero, 1);
    if (chunks[i] == NULL)
      rc = af_err_set(err, AF_ENOMEM, "out of memory rendering a case");
    if (rc == 0 && (es == NULL || es[i] == NULL))
      rc = oracle_expect(cs[i], &own[i], err);
  }
  if (rc == 0)
    rc = mlir_lower_batch(spec, dir, chunks, n, low, err);
  /* lowering verdicts; the runnable cases go on */
  int nrun = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    if (low[i].outcome != MLIR_OK) {
      Verdict v;
      lowering_verdict(spec, &low[i], &v);
      note_verdict(&out[i], 0, &s[0], &v, o);
      continue;
    }
    ids[nrun] = i;
    run[nrun++] = cs[i];
  }
  /* one module for the runnable cases; lowered alone each case is runnable too */
  char lowered[4200];
  int batch_ok = 0;
  if (rc == 0 && nrun > 1) {
    char *text = gen_render_mlir_batch(run, ids, nrun);
    char inp[4200], errp[4200];
    fmt(inp, sizeof inp, "%s/run.mlir", dir);
    fmt(lowered, sizeof lowered, "%s/run.out.mlir", dir);
    fmt(errp, sizeof errp, "%s/run.err", dir);
    if (text == NULL)
      rc = af_err_set(err, AF_ENOMEM, "out of memory");
    else
      rc = af_write_file(inp, text, strlen(text), err);
    af_free(text);
    ProcResult r;
    if (rc == 0)
      rc = mlir_lower_file(spec, inp, lowered, errp, spec->timeout * (1 + nrun / 4.0), &r, err);
    batch_ok = rc == 0 && r.exited && r.code == 0;
  }
  for (int k = 0; k < ns && rc == 0; k++) {
    char tdir[4200];
    fmt(tdir, sizeof tdir, "%s/s%d", dir, k);
    if (mkdir(tdir, 0700) != 0 && errno != EEXIST) {
      rc = af_err_set(err, AF_EIO, "cannot create %s: %s", tdir, strerror(errno));
      break;
    }
    if (batch_ok) {
      char envs[6][4200], errp[4200];
      run_env(&s[k], o, tdir, envs);
      char *env[] = {envs[0], envs[1], envs[2], envs[3], envs[4], envs[5], NULL};
      fmt(errp, sizeof errp, "%s/s%d.err", dir, k);
      ProcResult r;
      rc = mlir_run_file(spec, lowered, env, NULL, errp, spec->timeout * (1 + nrun / 4.0), &r, err);
    }
    for (int j = 0; j < nrun && rc == 0; j++) {
      int i = ids[j];
      if (out[i].first_fail >= 0 && o && o->stop_at_first)
        continue;
      const OracleExpected *e = es && es[i] ? es[i] : own[i];
      Verdict v;
      int found = 0;
      if (batch_ok) {
        char tpath[4300];
        fmt(tpath, sizeof tpath, "%s/case-%d.bin", tdir, i);
        rc = judge_trace(tpath, cs[i], spec, e, o, &v, &found, err);
      }
      if (rc == 0 && !found)
        rc = run_alone(spec, dir, k, i, cs[i], &low[i], &s[k], e, o, &v, err);
      if (rc == 0)
        note_verdict(&out[i], k, &s[k], &v, o);
    }
  }
  for (int i = 0; i < n; i++) {
    if (chunks)
      af_free(chunks[i]);
    if (own)
      oracle_expected_free(own[i]);
  }
  if (low)
    mlir_lowered_free(low, n);
  af_free(chunks);
  af_free(low);
  af_free(ids);
  af_free(run);
  af_free(own);
  if (getenv("ASYNCFUZZ_KEEP_TMP") == NULL)
    af_rm_tree(dir);
  return rc;
}
