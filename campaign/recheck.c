/*
 * recheck.c: the findings a database holds, checked on configurations it has no verdict for (a
 * build installed since, a pipeline added): each finding's smallest case on each such
 * configuration, under its own schedule and the adversarial ones, as a campaign's matrix checks
 * a new finding (matrix.c), its verdict stored (STORE_CONF_*). `asyncfuzz db recheck` runs it; a
 * campaign with a matrix runs it on its configurations before its first case.
 */
#include "campaign_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* A finding to check again. */
typedef struct Item {
  char *sig, *confs;
  GenCase c;
  Schedule own;
  int has_own;
} Item;

typedef struct Items {
  Item *v;
  int n, cap, unreadable;
} Items;

static int collect(const StoreRecheck *r, void *ctx) {
  Items *it = ctx;
  if (af_grow((void **)&it->v, &it->cap, it->n + 1, sizeof *it->v))
    return AF_ENOMEM;
  Item *x = &it->v[it->n];
  memset(x, 0, sizeof *x);
  AfErr e = {0};
  if (gen_case_from_json(&x->c, r->case_json, &e) != 0) {
    it->unreadable++; /* (a case from another asyncfuzz: db show names it) */
    return 0;
  }
  x->sig = af_strdup(r->signature);
  x->confs = af_strdup(r->confs);
  if (x->sig == NULL || x->confs == NULL) {
    af_free(x->sig), af_free(x->confs), gen_case_free(&x->c);
    return AF_ENOMEM;
  }
  int ns = 0;
  x->has_own = r->schedule[0] && check_parse_schedules(r->schedule, 0, &x->own, 1, &ns, &e) == 0;
  it->n++;
  return 0;
}

/* Whether item x has a verdict on configuration sp. */
static int has_verdict(const Item *x, const LowerSpec *sp) {
  size_t nl = strlen(sp->name), vl = strlen(sp->version);
  for (const char *p = x->confs; *p;) {
    size_t len = strcspn(p, "\n");
    if (len == nl + 1 + vl && strncmp(p, sp->name, nl) == 0 && p[nl] == '\t' &&
        strncmp(p + nl + 1, sp->version, vl) == 0)
      return 1;
    p += len + (p[len] == '\n');
  }
  return 0;
}

/* Items sel[0..n) on configuration sp in batches (the adversarial schedules and as many own ones
 * as fit), each verdict stored. */
static int recheck_on(Store *db, int64_t run, const LowerSpec *sp, Items *it, const int *sel, int n,
                      const CheckOpts *o, CampaignRecheck *res, AfErr *err) {
  const GenCase **cs = af_calloc((size_t)n, sizeof *cs);
  CheckResult *r = af_calloc((size_t)n, sizeof *r);
  int rc = cs && r ? 0 : AF_ENOMEM;
  CheckOpts o2 = *o;
  o2.stop_at_first = 0;
  for (int from = 0; rc == 0 && from < n;) {
    Schedule sched[CHECK_MAX_SCHED];
    int nadv = campaign__recheck_schedules(sched, CHECK_MAX_SCHED), ns = nadv, to = from;
    for (; to < n; to++) {
      const Item *x = &it->v[sel[to]];
      int at = 0;
      while (x->has_own && at < ns &&
             !(sched[at].policy == x->own.policy && sched[at].seed == x->own.seed))
        at++;
      if (x->has_own && at == ns && ns == CHECK_MAX_SCHED)
        break;
      if (x->has_own && at == ns)
        sched[ns++] = x->own;
      cs[to - from] = &x->c;
    }
    rc = check_cases(cs, to - from, sp, sched, ns, NULL, &o2, r, err);
    for (int j = from; rc == 0 && j < to; j++) {
      const Item *x = &it->v[sel[j]];
      Verdict *v = af_malloc(sizeof *v);
      if (v == NULL) {
        rc = AF_ENOMEM;
        break;
      }
      int conf = campaign__recheck_verdict(&r[j - from], sched, ns, nadv,
                                           x->has_own ? &x->own : &sched[0], x->sig, v);
      CampaignConfText t;
      StoreConfigVerdict w;
      campaign__conf_row(sp, conf, v, &t, &w);
      rc = store_set_configs(db, x->sig, run, &w, 1, err);
      af_free(v);
      res->verdicts++;
      res->reproduces += conf == STORE_CONF_REPRODUCES;
      res->passes += conf == STORE_CONF_PASSES;
      res->differs += conf == STORE_CONF_DIFFERS || conf == STORE_CONF_REFUSED;
    }
    from = to;
  }
  af_free(cs), af_free(r);
  return rc;
}

int campaign_recheck(Store *db, int64_t run, const LowerSpec *matrix, int nmatrix,
                     const CheckOpts *o, int all, CampaignRecheck *res, AfErr *err) {
  memset(res, 0, sizeof *res);
  Items it = {0};
  int rc = store_each_recheck(db, collect, &it, err);
  if (rc == AF_ENOMEM)
    af_err_set(err, AF_ENOMEM, "out of memory");
  int *sel = rc == 0 ? af_calloc((size_t)it.n + 1, sizeof *sel) : NULL;
  if (rc == 0 && sel == NULL)
    rc = af_err_set(err, AF_ENOMEM, "out of memory");
  res->findings = it.n;
  res->unreadable = it.unreadable;
  for (int i = 0; rc == 0 && i < nmatrix; i++) {
    /* (a finding of this lowering only: its signature starts with the family's name, as the
     * configuration names signatures; another lowering's findings are not its to judge) */
    const char *fam = lower_family(&matrix[i]);
    size_t fl = strlen(fam);
    int n = 0;
    for (int j = 0; j < it.n; j++)
      if (strncmp(it.v[j].sig, fam, fl) == 0 && it.v[j].sig[fl] == '|' &&
          (all || !has_verdict(&it.v[j], &matrix[i])))
        sel[n++] = j;
    if (n > 0)
      res->configs++;
    if (n > 0)
      rc = recheck_on(db, run, &matrix[i], &it, sel, n, o, res, err);
  }
  for (int j = 0; j < it.n; j++)
    af_free(it.v[j].sig), af_free(it.v[j].confs), gen_case_free(&it.v[j].c);
  af_free(it.v);
  af_free(sel);
  return rc;
}

int campaign_recheck_db(const char *db_path, const CampaignConfig *c, FILE *out, AfErr *err) {
  int n = c->nmatrix > 0 ? c->nmatrix : c->nspecs;
  const LowerSpec *m = c->nmatrix > 0 ? c->matrix : c->specs;
  for (int i = 0; i < n; i++)
    if (m[i].kind != LOWER_MLIR_OPT)
      return af_err_set(err, AF_EUSAGE,
                        "%s is no configuration of the mlir-opt lowering (--lowering mlir-opt, "
                        "--matrix AXIS=V,...)",
                        m[i].name);
  Store *s = NULL;
  CampaignRecheck x;
  int rc = store_open(db_path, 0, &s, err);
  if (rc == 0)
    rc = campaign_recheck(s, 0, m, n, &c->opts, 0, &x, err);
  store_close(s);
  AfBuf b;
  af_buf_init(&b);
  if (rc == 0)
    campaign_format_recheck(&b, &x);
  if (rc == 0 && fputs(b.p ? b.p : "", out) == EOF)
    rc = af_err_set(err, AF_EIO, "cannot write the result: %s", strerror(errno));
  af_buf_free(&b);
  return rc;
}
