/*
 * builtin.c: a case through the builtin lowering in this process (check_int.h). The call
 * Program runs on the runtime library under each schedule; each run is judged by the oracle
 * and the happens-before checker. The GPU child runs its cases through this too.
 */
#include "check_int.h"
#include "../base/feat.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The checker's result is a function of the trace and its options alone, and the schedules of
 * a case often make the same trace (a program whose host calls come from one thread makes the
 * same calls whatever order the device runs its work in): the last check is kept for the next
 * schedule, whose trace is compared with the one before it, which the runtime keeps (no copy). */
typedef struct Memo {
  HbOptions ho;
  HbResult *hb; /* the check of the run before this one's trace (or of one with the same trace) */
} Memo;

/* A record's fields before its arguments (seq to cause) lie in its first bytes, unpadded: they are
 * compared as one block. */
#define REC_HEAD (offsetof(RtRec, cause) + sizeof(uint32_t))
_Static_assert(offsetof(RtRec, seq) == 0 && REC_HEAD == 20 && offsetof(RtRec, args) >= REC_HEAD,
               "RtRec's fields before args are 20 unpadded bytes");

static int same_rec(const RtRec *a, const RtRec *b) {
  if (memcmp(a, b, REC_HEAD) != 0 || a->ret != b->ret)
    return 0;
  for (int k = 0; k < a->nargs && k < RT_REC_ARGS; k++)
    if (a->args[k] != b->args[k])
      return 0;
  return 1;
}

/* The check of this run's trace: the memo's when the run before made the same trace with the
 * same options, else a new one (kept for the next run). */
static int memo_check(Memo *m, const RtRec *trace, int n, const HbOptions *ho, const HbResult **out,
                      AfErr *err) {
  int np = 0;
  const RtRec *prev = asyncfuzz_rt_prev_trace(&np);
  int same = m->hb && n == np && memcmp(ho, &m->ho, sizeof *ho) == 0;
  /* the same bytes are the same trace (the runtime zeroes a record before it fills it); where
   * the bytes differ, the fields may still be the same */
  if (same && memcmp(trace, prev, sizeof *trace * (size_t)n) != 0)
    for (int i = 0; i < n && same; i++)
      same = same_rec(&trace[i], &prev[i]);
  if (!same) {
    hb_result_free(m->hb);
    m->hb = NULL;
    int rc = hb_check(trace, n, ho, &m->hb, err);
    if (rc)
      return rc;
    m->ho = *ho;
  }
  *out = m->hb;
  return 0;
}

static int run_program(const LowerProgram *p, const GenCase *c, const LowerSpec *spec,
                       const Schedule *s, const CheckOpts *o, const OracleExpected *e, Memo *m,
                       Verdict *v, AfErr *err) {
  RtConfig cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.policy = s->policy;
  cfg.seed = s->seed;
  cfg.memfree_sync = o ? o->memfree_sync : 0;
  cfg.record_device = o ? o->record_device : 0;
  cfg.backend = o ? o->backend : RT_BACKEND_SIM;
  cfg.raw_handles = o ? o->raw_handles : 0;
  cfg.spin = o && o->spin > 0 ? o->spin : 0;
  cfg.abi = check_abi(spec, o);
  cfg.fail_pct = o ? o->fail_pct : 0;
  int rc = check_run_program(p, &cfg, err);
  if (rc && rc != AF_EDEADLOCK)
    return rc;
  int ntrace, nobs;
  const RtRec *trace = asyncfuzz_rt_trace(&ntrace);
  const RtObs *obs = asyncfuzz_rt_observations(&nobs);
  check_trace_features(c, trace, ntrace);
  RtSummary sum;
  asyncfuzz_rt_summary(&sum);
  const HbResult *hb = NULL;
  if (!(o && o->no_checker)) {
    HbOptions ho = {0};
    hb_options_for(&ho, cfg.abi, cfg.memfree_sync);
    ho.nthreads = sum.max_threads;
    ho.nstreams = sum.max_streams;
    ho.nevents = sum.max_events;
    ho.nregions = sum.max_regions;
    ho.nasync = sum.max_async;
    int hrc = memo_check(m, trace, ntrace, &ho, &hb, err);
    if (hrc)
      return hrc;
  }
  int jrc = oracle_judge(c, e, obs, nobs, trace, ntrace, &sum, hb, lower_family(spec), v);
  if (jrc)
    return af_err_set(err, AF_ENOMEM, "out of memory judging a run");
  if (rc == AF_EDEADLOCK && v->cls == VERDICT_PASS) {
    v->cls = VERDICT_RUNTIME_ERROR;
    snprintf(v->signature, sizeof v->signature, "%s|runtime_error|deadlock", lower_family(spec));
    snprintf(v->victim, sizeof v->victim, "%s", v->signature);
    snprintf(v->detail, sizeof v->detail, "%s", err ? err->msg : "deadlock");
    if (err)
      af_err_clear(err);
  }
  return 0;
}

/* Features (base/feat.h) of the program: each three runtime calls in a row in a function (main
 * or a region's), and each op kind with the calls it became. */
static void program_features(const LowerProgram *p, const GenCase *c) {
  for (int f = 0; f < p->nfuncs; f++) {
    const LowerFunc *fn = &p->funcs[f];
    int q[3] = {-1, -1, -1};
    for (int i = 0; i < fn->ninstrs; i++) {
      const LowerInstr *in = &fn->instrs[i];
      q[0] = q[1];
      q[1] = q[2];
      q[2] = in->opc;
      af_feat_addf(AF_FEAT_CALLS, "%s %d %d %d", f ? "region" : "main", q[0], q[1], q[2]);
      if (in->op >= 0 && in->op < c->nops)
        af_feat_addf(AF_FEAT_CALLS, "%s: %d %d", gen_op_name(c->ops[in->op].kind), in->opc,
                     in->b >= 0);
    }
  }
}

int check__builtin(const GenCase *c, const LowerSpec *spec, const Schedule *s, int ns,
                   const OracleExpected *e, const CheckOpts *o, CheckResult *out, AfErr *err) {
  out->nsched = 0; /* verdicts are filled as schedules run: no 50 KB memset per case */
  out->first_fail = -1;
  out->device_errors = 0;
  out->executed = 0;
  if (ns > CHECK_MAX_SCHED)
    ns = CHECK_MAX_SCHED;
  LowerProgram *p = NULL;
  OracleExpected *own = NULL;
  int rc = 0;
  if (e == NULL) {
    rc = oracle_expect(c, &own, err);
    if (rc)
      return rc;
    e = own;
  }
  rc = lower_builtin_abi(c, spec, check_abi(spec, o) == RT_ABI_ROCM, &p, err);
  out->executed = rc == 0 && ns > 0;
  if (rc == 0 && af_feat_on())
    program_features(p, c);
  Memo memo = {0};
  for (int k = 0; k < ns && rc == 0; k++) {
    out->sched[k] = s[k];
    rc = run_program(p, c, spec, &s[k], o, e, &memo, &out->verdict[k], err);
    if (rc)
      break;
    out->nsched = k + 1;
    if (oracle_verdict_phase(out->verdict[k].cls) == ORACLE_PHASE_ENVIRONMENT)
      out->device_errors++; /* (not a failure of the lowering) */
    else if (out->verdict[k].cls != VERDICT_PASS && out->first_fail < 0) {
      out->first_fail = k;
      if (o && o->stop_at_first)
        break;
    }
  }
  hb_result_free(memo.hb);
  lower_program_free(p);
  oracle_expected_free(own);
  return rc;
}
