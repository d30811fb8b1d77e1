/*
 * pipeline.c: lower, execute under schedules, judge.
 */
#include "pipeline.h"

#include "../lower/mlir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pipeline_parse_schedules(const char *spec, uint64_t base_seed, Schedule *out, int max, int *n,
                             AfErr *err) {
  *n = 0;
  char buf[512];
  if (strlen(spec) >= sizeof buf)
    return af_err_set(err, AF_EUSAGE, "schedule list too long");
  snprintf(buf, sizeof buf, "%s", spec);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *at = strchr(tok, '@');
    char *colon = strchr(tok, ':');
    uint64_t seed = 0;
    int has_seed = 0;
    long count = 1;
    if (at) {
      *at = '\0';
      char *end;
      seed = strtoull(at + 1, &end, 0);
      if (*end || end == at + 1)
        return af_err_set(err, AF_EUSAGE, "bad schedule seed in \"%s\"", tok);
      has_seed = 1;
    }
    if (colon) {
      *colon = '\0';
      char *end;
      count = strtol(colon + 1, &end, 10);
      if (*end || count < 1 || count > PIPE_MAX_SCHED)
        return af_err_set(err, AF_EUSAGE, "bad schedule count in \"%s\" (1..%d)", tok,
                          PIPE_MAX_SCHED);
    }
    int pol = asyncfuzz_rt_policy_parse(tok);
    if (pol < 0)
      return af_err_set(err, AF_EUSAGE,
                        "unknown schedule policy \"%s\" (eager, lazy, random, pct; e.g. "
                        "lazy,random:4,pct:2@7)",
                        tok);
    for (long k = 0; k < count; k++) {
      if (*n >= max)
        return af_err_set(err, AF_EUSAGE, "too many schedules (at most %d)", max);
      out[*n].policy = pol;
      out[*n].seed = has_seed ? seed + (uint64_t)k : af_mix64(base_seed, (uint64_t)(*n + 1));
      (*n)++;
    }
  }
  if (*n == 0)
    return af_err_set(err, AF_EUSAGE, "no schedules given");
  return 0;
}

const char *pipeline_backend_args(const PipeOpts *o) {
  static _Thread_local char buf[80];
  buf[0] = '\0';
  if (o && o->backend == RT_BACKEND_CUDA) {
    int k = snprintf(buf, sizeof buf, " --backend %s", o->raw_handles ? "cuda:raw" : "cuda");
    if (o->spin > 0)
      snprintf(buf + k, sizeof buf - (size_t)k, " --spin %d", o->spin);
  }
  return buf;
}

void pipeline_schedule_str(const Schedule *s, char *out, size_t n) {
  snprintf(out, n, "%s@%llu", asyncfuzz_rt_policy_name(s->policy), (unsigned long long)s->seed);
}

static int run_program(const LowerProgram *p, const GenCase *c, const LowerSpec *spec,
                       const Schedule *s, const PipeOpts *o, const OracleExpected *e, Verdict *v,
                       AfErr *err) {
  RtConfig cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.policy = s->policy;
  cfg.seed = s->seed;
  cfg.memfree_sync = o ? o->memfree_sync : 0;
  cfg.record_device = o ? o->record_device : 0;
  cfg.backend = o ? o->backend : RT_BACKEND_SIM;
  cfg.raw_handles = o ? o->raw_handles : 0;
  cfg.spin = o && o->spin > 0 ? o->spin : 0;
  int rc = runner_run_program(p, &cfg, err);
  if (rc && rc != AF_EDEADLOCK)
    return rc;
  int ntrace, nobs;
  const RtRec *trace = asyncfuzz_rt_trace(&ntrace);
  const RtObs *obs = asyncfuzz_rt_observations(&nobs);
  RtSummary sum;
  asyncfuzz_rt_summary(&sum);
  HbResult *hb = NULL;
  if (!(o && o->no_checker)) {
    HbOptions ho = {0};
    ho.lenient_free = cfg.memfree_sync;
    ho.nthreads = sum.max_threads;
    ho.nstreams = sum.max_streams;
    ho.nevents = sum.max_events;
    ho.nregions = sum.max_regions;
    ho.nasync = sum.max_async;
    int hrc = hb_check(trace, ntrace, &ho, &hb, err);
    if (hrc)
      return hrc;
  }
  int jrc = oracle_judge(c, e, obs, nobs, trace, ntrace, &sum, hb, spec->name, v);
  hb_result_free(hb);
  if (jrc)
    return af_err_set(err, AF_ENOMEM, "out of memory judging a run");
  if (rc == AF_EDEADLOCK && v->cls == VERDICT_PASS) {
    v->cls = VERDICT_RUNTIME_ERROR;
    snprintf(v->signature, sizeof v->signature, "%s|runtime_error|deadlock", spec->name);
    snprintf(v->detail, sizeof v->detail, "%s", err ? err->msg : "deadlock");
    if (err)
      af_err_clear(err);
  }
  return 0;
}

int pipeline_run_once(const GenCase *c, const LowerSpec *spec, const Schedule *s, const PipeOpts *o,
                      const OracleExpected *e, Verdict *v, AfErr *err) {
  PipeOpts sim;
  if (o && o->backend == RT_BACKEND_CUDA && o->isolate) {
    /* this process must not open the GPU (its GPU child does): the run is replayed on the sim */
    sim = *o;
    sim.backend = RT_BACKEND_SIM;
    sim.isolate = sim.raw_handles = sim.spin = 0;
    o = &sim;
  }
  CheckResult *r = af_malloc(sizeof *r);
  if (r == NULL)
    return af_err_set(err, AF_ENOMEM, "out of memory");
  int rc = pipeline_check(c, spec, s, 1, e, o, r, err);
  if (rc == 0)
    *v = r->verdict[0];
  af_free(r);
  return rc;
}

int pipeline_check(const GenCase *c, const LowerSpec *spec, const Schedule *s, int ns,
                   const OracleExpected *e, const PipeOpts *o, CheckResult *out, AfErr *err) {
  if (spec->kind == LOWER_MLIR_OPT)
    return pipeline_check_mlir(&c, 1, spec, s, ns, &e, o, out, err);
  if (o && o->backend == RT_BACKEND_CUDA && o->isolate)
    return gpu_child_check(c, spec, s, ns, o, out, err);
  out->nsched = 0; /* verdicts are filled as schedules run: no 50 KB memset per case */
  out->first_fail = -1;
  if (ns > PIPE_MAX_SCHED)
    ns = PIPE_MAX_SCHED;
  LowerProgram *p = NULL;
  OracleExpected *own = NULL;
  int rc = 0;
  if (e == NULL) {
    rc = oracle_expect(c, &own, err);
    if (rc)
      return rc;
    e = own;
  }
  rc = lower_builtin(c, spec, &p, err);
  for (int k = 0; k < ns && rc == 0; k++) {
    out->sched[k] = s[k];
    rc = run_program(p, c, spec, &s[k], o, e, &out->verdict[k], err);
    if (rc)
      break;
    out->nsched = k + 1;
    if (out->verdict[k].cls != VERDICT_PASS && out->first_fail < 0) {
      out->first_fail = k;
      if (o && o->stop_at_first)
        break;
    }
  }
  lower_program_free(p);
  oracle_expected_free(own);
  return rc;
}

int pipeline_check_many(const GenCase *const *cs, int n, const LowerSpec *spec, const Schedule *s,
                        int ns, const OracleExpected *const *es, const PipeOpts *o,
                        CheckResult *out, AfErr *err) {
  if (spec->kind == LOWER_MLIR_OPT)
    return pipeline_check_mlir(cs, n, spec, s, ns, es, o, out, err);
  for (int i = 0; i < n; i++) {
    int rc = pipeline_check(cs[i], spec, s, ns, es ? es[i] : NULL, o, &out[i], err);
    if (rc)
      return rc;
  }
  return 0;
}

int pipeline_signature_test(const GenCase *c, void *ctx) {
  PipeSigTest *t = ctx;
  CheckResult *r = af_malloc(sizeof *r);
  if (r == NULL)
    return AF_ENOMEM;
  AfErr err = {0};
  PipeOpts o = t->o;
  o.stop_at_first = 0;
  int rc = pipeline_check(c, t->spec, t->s, t->ns, NULL, &o, r, &err);
  int hit = 0;
  for (int k = 0; rc == 0 && k < r->nsched && !hit; k++)
    hit = r->verdict[k].cls != VERDICT_PASS && strcmp(r->verdict[k].signature, t->signature) == 0;
  af_free(r);
  return rc ? rc : hit;
}

int pipeline_signature_test_many(const GenCase *const *cs, int n, int *interesting, void *ctx) {
  PipeSigTest *t = ctx;
  CheckResult *r = af_calloc((size_t)(n > 0 ? n : 1), sizeof *r);
  if (r == NULL)
    return AF_ENOMEM;
  AfErr err = {0};
  PipeOpts o = t->o;
  o.stop_at_first = 0;
  int rc = pipeline_check_many(cs, n, t->spec, t->s, t->ns, NULL, &o, r, &err);
  for (int i = 0; rc == 0 && i < n; i++) {
    interesting[i] = 0;
    for (int k = 0; k < r[i].nsched && !interesting[i]; k++)
      interesting[i] = r[i].verdict[k].cls != VERDICT_PASS &&
                       strcmp(r[i].verdict[k].signature, t->signature) == 0;
  }
  af_free(r);
  return rc;
}

/* The .mlir reproducer of a reduced case: RUN lines (mlir-opt's pipeline piped into
 * mlir-runner with the runtime library), the verdict and the trace excerpt as comments. */
char *pipeline_reproducer(const GenCase *c, const LowerSpec *spec, const Schedule *s,
                          const Verdict *v, const char *case_path) {
  AfBuf b;
  af_buf_init(&b);
  const char *pipeline = spec->kind == LOWER_MLIR_OPT ? spec->pipeline : mlir_variant_pipeline(0);
  const char *policy = asyncfuzz_rt_policy_name(s->policy);
  af_buf_printf(&b, "// asyncfuzz reproducer (%d ops), asyncfuzz %s\n", c->nops, ASYNCFUZZ_VERSION);
  af_buf_printf(&b, "// signature: %s\n", v->signature);
  af_buf_printf(&b, "// found with lowering %s (%s), schedule %s@%llu, backend sim\n", spec->name,
                lower_version(spec), policy, (unsigned long long)s->seed);
  af_buf_printf(&b, "// replay: asyncfuzz check %s --lowering %s --schedules %s@%llu\n",
                case_path ? case_path : "CASE.json", spec->arg, policy,
                (unsigned long long)s->seed);
  if (spec->kind != LOWER_MLIR_OPT)
    af_buf_puts(&b,
                "// The RUN lines run the real lowering (mlir-opt's default pipeline) on it.\n");
  af_buf_printf(&b,
                "//\n// RUN: mlir-opt %%s --pass-pipeline='%s' \\\n"
                "// RUN: | env ASYNCFUZZ_POLICY=%s ASYNCFUZZ_SCHED_SEED=%llu "
                "ASYNCFUZZ_TRACE=/dev/stderr \\\n"
                "// RUN:   mlir-runner -O0 -e main --entry-point-result=void \\\n"
                "// RUN:   --shared-libs=%%asyncfuzz_rt,%%mlir_runner_utils\n",
                pipeline, policy, (unsigned long long)s->seed);
  af_buf_puts(&b, "// (%asyncfuzz_rt: libasyncfuzz_rt.so from asyncfuzz; %mlir_runner_utils: "
                  "libmlir_runner_utils.so of the same LLVM.)\n//\n// verdict: ");
  af_buf_puts(&b, oracle_verdict_name(v->cls));
  af_buf_puts(&b, "\n// ");
  for (const char *p = v->detail; *p; p++) {
    af_buf_put(&b, p, 1);
    if (*p == '\n')
      af_buf_puts(&b, "// ");
  }
  af_buf_puts(&b, "\n");
  if (spec->kind != LOWER_MLIR_OPT) { /* the failing run's trace */
    int n;
    asyncfuzz_rt_trace(&n);
    AfBuf t;
    af_buf_init(&t);
    asyncfuzz_rt_format_trace(&t, 0, n < 60 ? n : 60);
    af_buf_puts(&b, "//\n// trace (the failing run):\n// ");
    for (const char *p = t.p ? t.p : ""; *p; p++) {
      af_buf_put(&b, p, 1);
      if (*p == '\n' && p[1])
        af_buf_puts(&b, "// ");
    }
    af_buf_free(&t);
  }
  char *mod = gen_render_mlir(c);
  if (mod)
    af_buf_puts(&b, mod);
  af_free(mod);
  if (mod == NULL)
    b.oom = 1;
  return af_buf_take(&b);
}
