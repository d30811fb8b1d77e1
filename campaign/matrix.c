/*
 * matrix.c: each new finding of the matrix's lowering run on every configuration
 * (campaign_int.h). New findings wait (steering the configuration each was found on) until
 * eight wait, one has waited a minute, or the campaign ends; then each configuration runs all
 * their cases in one batch (one mlir-opt and one mlir-runner process for all of them, not one
 * per finding), each under the schedule it failed with and the adversarial ones
 * (MATRIX_SCHEDULES): a finding reproduces on a configuration where any of those runs fails with
 * its signature, passes where every run passes, and otherwise fails differently or is refused by
 * the lowering (STORE_CONF_*). The verdicts go to the database, info.txt and the summary, and
 * steer generation on the configurations where the finding reproduces (steer.c).
 */
#include "campaign_int.h"

#include "../lower/mlir.h"

#include <string.h>

/* The adversarial schedules every re-check runs besides the finding's own (fixed seeds: the same
 * runs in every campaign): a race its own schedule misses on another configuration shows. */
#define MATRIX_SCHEDULES "eager,lazy,random:2,pct:2"
#define MATRIX_SCHEDULES_SEED 1

static int same_sched(const Schedule *a, const Schedule *b) {
  return a->policy == b->policy && a->seed == b->seed;
}

/* A finding's verdict on one configuration from its runs x there (sched[0..ns), of which it
 * takes its own, own, and the first nadv, the adversarial ones): STORE_CONF_*, and in *w the run
 * that says it (the first that reproduces; else the first that fails). */
int campaign__recheck_schedules(Schedule *out, int max) {
  int n = 0;
  AfErr err = {0};
  return check_parse_schedules(MATRIX_SCHEDULES, MATRIX_SCHEDULES_SEED, out, max, &n, &err) ? 0 : n;
}

void campaign__conf_row(const LowerSpec *sp, int conf, const Verdict *v, CampaignConfText *t,
                        StoreConfigVerdict *w) {
  snprintf(t->llvm, sizeof t->llvm, "%s", mlir_llvm_version(sp));
  snprintf(t->jit, sizeof t->jit, sp->jit_opt < 0 ? "Odefault" : "O%d", sp->jit_opt);
  w->config = sp->name;
  w->version = sp->version;
  w->llvm = t->llvm;
  w->pipeline = sp->variant;
  w->target = sp->target;
  w->jit = t->jit;
  w->cls = oracle_verdict_name(v->cls);
  w->signature = v->cls == VERDICT_PASS ? "" : v->signature;
  w->reproduces = conf;
}

int campaign__recheck_verdict(const CheckResult *x, const Schedule *sched, int ns, int nadv,
                              const Schedule *own, const char *signature, Verdict *w) {
  int first_fail = -1;
  for (int at = 0; at < ns && at < x->nsched; at++) {
    if (at >= nadv && !same_sched(&sched[at], own))
      continue;
    const Verdict *v = &x->verdict[at];
    if (v->cls != VERDICT_PASS && oracle_verdict_has(v, signature)) {
      *w = *v;
      return STORE_CONF_REPRODUCES;
    }
    if (v->cls != VERDICT_PASS && first_fail < 0)
      first_fail = at;
  }
  if (x->nsched < ns && x->first_fail >= 0) /* (a case mlir-opt did not lower: one verdict) */
    first_fail = x->first_fail;
  if (first_fail < 0) {
    memset(w, 0, sizeof *w);
    w->cls = VERDICT_PASS;
    return STORE_CONF_PASSES;
  }
  *w = x->verdict[first_fail];
  if (oracle_verdict_has(w, signature))
    return STORE_CONF_REPRODUCES;
  return w->cls == VERDICT_LOWERING_REJECTED || w->cls == VERDICT_LOWERING_UNCONVERTED
             ? STORE_CONF_REFUSED
             : STORE_CONF_DIFFERS;
}

/* A new finding waiting for its matrix check: its signature (k->sigs[sig]), the case to run
 * (the minimized one when there is one) and the schedule it failed with. */
struct CampaignPending {
  int sig;
  GenCase c;
  Schedule s;
};

/* Two configurations that differ in one axis only: which one (0 LLVM, 1 pipeline, 2 target,
 * 3 JIT level), or -1. */
static int one_axis(const LowerSpec *a, const LowerSpec *b) {
  int d[4] = {strcmp(a->version, b->version) != 0, strcmp(a->variant, b->variant) != 0,
              strcmp(a->target, b->target) != 0, a->jit_opt != b->jit_opt};
  int n = d[0] + d[1] + d[2] + d[3];
  for (int i = 0; n == 1 && i < 4; i++)
    if (d[i])
      return i;
  return -1;
}

/* The axes that explain the differing verdicts v of the configurations that ran: those in
 * which two configurations that differ in that axis only disagree ("LLVM, JIT"). */
static void differing_axes(const Campaign *k, const Verdict *v, const int *ran, char *out,
                           size_t n) {
  static const char *const axis_names[4] = {"LLVM", "pipeline", "target", "JIT"};
  int differ[4] = {0};
  for (int i = 0; i < k->c.nmatrix; i++)
    for (int j = i + 1; j < k->c.nmatrix; j++)
      if (ran[i] && ran[j] &&
          strcmp(v[i].cls == VERDICT_PASS ? "" : v[i].signature,
                 v[j].cls == VERDICT_PASS ? "" : v[j].signature) != 0) {
        int a = one_axis(&k->c.matrix[i], &k->c.matrix[j]);
        if (a >= 0) {
          differ[a] = 1;
          af_feat_addf(AF_FEAT_DISAGREE, "%s: %s=%s %s=%s", axis_names[a], k->c.matrix[i].name,
                       v[i].cls == VERDICT_PASS ? "pass" : v[i].signature, k->c.matrix[j].name,
                       v[j].cls == VERDICT_PASS ? "pass" : v[j].signature);
        }
      }
  out[0] = '\0';
  for (int a = 0; a < 4; a++)
    if (differ[a])
      snprintf(out + strlen(out), n - strlen(out), "%s%s", out[0] ? ", " : "", axis_names[a]);
}

/* The verdicts v of sig's case on the configurations that ran (ran[i]: 0, or 1 + its STORE_CONF_*
 * verdict there): the rows of the database,
 * info.txt's table, the configurations it reproduces on, the axes that explain differences. */
static int matrix_rows(Campaign *k, Sig *sig, const Verdict *v, const int *ran, double seconds) {
  int n = k->c.nmatrix;
  StoreConfigVerdict *rows = af_calloc((size_t)n, sizeof *rows);
  CampaignConfText *axes = af_calloc((size_t)n, sizeof *axes);
  if (!rows || !axes) {
    af_free(rows), af_free(axes);
    campaign__problem(k, "out of memory");
    return -1;
  }
  AfBuf b;
  af_buf_init(&b);
  int m = 0, rep = 0;
  for (int i = 0; i < n; i++) {
    if (!ran[i])
      continue;
    const LowerSpec *sp = &k->c.matrix[i];
    StoreConfigVerdict *w = &rows[m++];
    campaign__conf_row(sp, ran[i] - 1, &v[i], &axes[i], w);
    rep += w->reproduces == STORE_CONF_REPRODUCES;
    if (w->reproduces == STORE_CONF_REPRODUCES && i < 64)
      sig->repro_confs |= 1ull << i;
    char ax[200];
    mlir_config_axes(sp, ax, sizeof ax);
    af_buf_printf(&b, "  %-44s %s%s%s\n", ax, store_conf_name(w->reproduces),
                  w->reproduces >= STORE_CONF_DIFFERS ? ": " : "",
                  w->reproduces >= STORE_CONF_DIFFERS ? w->signature : "");
  }
  differing_axes(k, v, ran, sig->f.matrix_axes, sizeof sig->f.matrix_axes);
  sig->f.matrix_n = m;
  sig->f.matrix_rep = rep;
  sig->f.matrix_seconds = seconds;
  af_free(sig->matrix);
  sig->matrix = af_buf_take(&b);
  k->st.matrix_checked++;
  k->st.matrix_differ += rep < m;
  AfErr err = {0};
  int rc = 0;
  if (k->db && m > 0 && store_set_configs(k->db, sig->f.signature, k->run_id, rows, m, &err) != 0) {
    campaign__problem(k, "%s", err.msg);
    rc = -1;
  }
  af_free(rows), af_free(axes);
  return rc;
}

uint64_t campaign__conf_bit(const Campaign *k, int low) {
  int conf = low - k->c.nspecs;
  return conf >= 0 && conf < 64 && conf < k->c.nmatrix ? 1ull << conf : 0;
}

void campaign__steer_found(Campaign *k, Sig *sig, const GenCase *c, const Verdict *v,
                           const int *ran) {
  /* where it reproduces, each configuration by the form its verdict there names; without a
   * matrix check, where it was found, by the form it was found with */
  uint64_t confs = sig->repro_confs ? sig->repro_confs : campaign__conf_bit(k, sig->f.low);
  const char *cls = oracle_verdict_name(sig->f.cls);
  const char *bar = strchr(sig->f.signature, '|');
  if (c && gen_avoid_count(&sig->narrow) == 0 && gen_avoid_count(&sig->need) == 0)
    campaign__region_narrow(cls, bar ? bar + 1 : "", c, &sig->narrow, &sig->wide);
  const char *first = sig->nforms > 0 ? sig->forms[0].detailed : NULL;
  if (k->c.avoid_found && sig->repro_confs && v)
    for (int i = 0; i < k->c.nmatrix && i < 64; i++) {
      if (!((confs >> i) & 1) || !ran[i])
        continue;
      const char *d = v[i].victim[0] && strcmp(v[i].signature, sig->f.signature) == 0
                          ? v[i].victim /* (its form there) */
                          : first;
      campaign__avoid(k, sig->f.signature, cls, &sig->need, d, "found", 1ull << i, c);
    }
  else if (k->c.avoid_found)
    campaign__avoid(k, sig->f.signature, cls, &sig->need, first, "found", confs, c);
  if (k->c.avoid_found)
    campaign__save_trigger(k, sig, c, confs ? confs : 1);
  sig->steer_confs |= confs ? confs : k->c.nmatrix == 0; /* (no matrix: bit 0, the one set) */
  for (int i = 0; i < 64 && gen_avoid_count(&sig->narrow) > 0; i++)
    if (((confs ? confs : 1) >> i) & 1 && sig->narrow_step[i] == 0)
      sig->narrow_step[i] = 1; /* (campaign__avoid steered the first) */
}

void campaign__steer_recurred(Campaign *k, Sig *sig, int low, const Verdict *v, const GenCase *c) {
  /* its minimized case, reduced on one configuration, can fail another way first on another
   * (a case reduced on async-region with a synchronous gpu.alloc is rejected by the default
   * pipeline before its dealloc is reached), where steered cases then show the same cause: an
   * occurrence there steers there too (a crash by its minimized case's structure only); a
   * lowering's verdict on an op shape, by each new form it shows (known findings too: their
   * forms in the database steer from the start, and a form not seen before steers when seen) */
  uint64_t bit = campaign__conf_bit(k, low);
  /* (without a matrix, the one set every case is made under: bit 0 marks it steered) */
  uint64_t mark = k->c.nmatrix == 0 ? 1 : bit;
  int shape = oracle_verdict_names_shape(sig->f.cls);
  int allowed = sig->f.suppressed ? k->c.avoid_known : k->c.avoid_found;
  if (gen_avoid_count(&sig->narrow) > 0) {
    /* steered by what its regions carried (its name's forms, no narrower, are what wide has):
     * there too where it recurs, and where it recurs without that, as without it */
    if (!allowed || mark == 0)
      return;
    int ci = k->c.nmatrix == 0 ? 0 : low - k->c.nspecs;
    uint8_t *step = &sig->narrow_step[ci >= 0 && ci < 64 ? ci : 0];
    GenAvoid on;
    campaign__narrow_prefix(&sig->narrow, *step, &on);
    if (!(sig->steer_confs & mark) || *step == 0) {
      *step = 1;
      campaign__narrow_prefix(&sig->narrow, 1, &on);
      campaign__avoid_set(k, &on, bit, sig->f.signature);
      campaign__save_trigger(k, sig, c, mark);
    } else if (!(sig->wide_confs & mark) && c && !gen_avoid_case(&on, c)) {
      if (*step < gen_avoid_count(&sig->narrow)) { /* (the next of them) */
        campaign__narrow_prefix(&sig->narrow, ++*step, &on);
        campaign__avoid_set(k, &on, bit, sig->f.signature);
      } else {
        campaign__avoid_set(k, &sig->wide, bit, sig->f.signature);
        sig->wide_confs |= mark;
      }
    }
    sig->steer_confs |= mark;
    return;
  }
  if (!allowed || mark == 0 || ((sig->steer_confs & mark) && !(shape && v && v->victim[0])))
    return;
  if (sig->f.suppressed && !shape)
    return; /* (a known finding's other causes steer from the database, where it reproduces) */
  campaign__avoid(k, sig->f.signature, oracle_verdict_name(sig->f.cls), &sig->need,
                  v && v->victim[0] ? v->victim : NULL, sig->f.suppressed ? "known" : "found", bit,
                  NULL);
  campaign__save_trigger(k, sig, c, mark);
  sig->steer_confs |= mark;
}

int campaign__matrix_queue(Campaign *k, int sig, const GenCase *c, const Schedule *s) {
  if (af_grow((void **)&k->pending, &k->cappending, k->npending + 1, sizeof *k->pending)) {
    campaign__problem(k, "out of memory");
    return -1;
  }
  CampaignPending *p = &k->pending[k->npending];
  p->sig = sig;
  p->s = *s;
  if (gen_case_copy(&p->c, c) != 0) {
    campaign__problem(k, "out of memory");
    return -1;
  }
  if (k->npending++ == 0)
    k->pending_since = campaign__now();
  campaign__steer_found(k, &k->sigs[sig], c, NULL, NULL); /* (where it was found, until the
                                                             check says) */
  return 0;
}

/* Pending findings [from, to) on every configuration, each configuration in one batch under the
 * schedules sched[0..ns) (the nadv adversarial ones first, then each finding's own), into
 * v[j * nmatrix + i] and ran[...] (1 + its STORE_CONF_* verdict). */
static void run_pending(Campaign *k, int from, int to, const Schedule *sched, int ns, int nadv,
                        Verdict *v, int *ran) {
  int n = to - from, nm = k->c.nmatrix;
  const GenCase **cs = af_calloc((size_t)n, sizeof *cs);
  CheckResult *r = af_calloc((size_t)n, sizeof *r);
  if (!cs || !r) {
    af_free(cs), af_free(r);
    campaign__problem(k, "out of memory");
    return;
  }
  for (int j = 0; j < n; j++)
    cs[j] = &k->pending[from + j].c;
  CheckOpts o = k->c.opts;
  o.stop_at_first = 0; /* (each finding's verdict is the one of its own schedule) */
  for (int i = 0; i < nm; i++) {
    const LowerSpec *sp = &k->c.matrix[i];
    AfErr err = {0};
    if (check_cases(cs, n, sp, sched, ns, NULL, &o, r, &err) != 0) {
      campaign__problem(k, "%d new finding(s) on %s: %s", n, sp->name, err.msg);
      continue;
    }
    for (int j = 0; j < n; j++) {
      const CampaignPending *p = &k->pending[from + j];
      size_t at = (size_t)j * (size_t)nm + (size_t)i;
      ran[at] = 1 + campaign__recheck_verdict(&r[j], sched, ns, nadv, &p->s,
                                              k->sigs[p->sig].f.signature, &v[at]);
    }
  }
  af_free(cs), af_free(r);
}

int campaign__matrix_flush(Campaign *k, int all) {
  /* (one batch per configuration is the cost, whatever the findings: they wait for company) */
  if (!all && k->npending < 8 && campaign__now() - k->pending_since < 60.0)
    return 0;
  int rc = 0, nm = k->c.nmatrix;
  for (int from = 0; from < k->npending;) {
    /* as many findings as have at most CHECK_MAX_SCHED schedules between them */
    Schedule sched[CHECK_MAX_SCHED];
    int ns = 0, to = from;
    ns = campaign__recheck_schedules(sched, CHECK_MAX_SCHED);
    int nadv = ns;
    for (; to < k->npending; to++) {
      int at = 0;
      while (at < ns && !same_sched(&sched[at], &k->pending[to].s))
        at++;
      if (at == ns && ns == CHECK_MAX_SCHED)
        break;
      if (at == ns)
        sched[ns++] = k->pending[to].s;
    }
    int n = to - from;
    Verdict *v = af_calloc((size_t)n * (size_t)nm, sizeof *v);
    int *ran = af_calloc((size_t)n * (size_t)nm, sizeof *ran);
    if (!v || !ran) {
      af_free(v), af_free(ran);
      campaign__problem(k, "out of memory");
      return -1;
    }
    double t0 = campaign__now();
    run_pending(k, from, to, sched, ns, nadv, v, ran);
    double each = (campaign__now() - t0) / n;
    for (int j = 0; j < n; j++) {
      CampaignPending *p = &k->pending[from + j];
      Sig *sig = &k->sigs[p->sig];
      if (matrix_rows(k, sig, v + (size_t)j * (size_t)nm, ran + (size_t)j * (size_t)nm, each) ||
          campaign__write_info(k, sig))
        rc = -1;
      campaign__steer_found(k, sig, &p->c, v + (size_t)j * (size_t)nm,
                            ran + (size_t)j * (size_t)nm);
      gen_case_free(&p->c);
    }
    af_free(v), af_free(ran);
    from = to;
  }
  k->npending = 0;
  return rc;
}

void campaign__matrix_free(Campaign *k) {
  for (int j = 0; j < k->npending; j++)
    gen_case_free(&k->pending[j].c);
  af_free(k->pending);
  k->pending = NULL;
  k->npending = k->cappending = 0;
}
