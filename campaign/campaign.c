/*
 * campaign.c: a campaign opened (campaign.h: its checks, the resume state, the database's run)
 * and run: its loop (loop.c: cases in batches, checked through every lowering, failures
 * recorded) in this process, or in forked workers for jobs > 1 (workers.c); the resume state
 * (state.c) and summary.json (summary.c) at the end.
 *
 * Layout of DIR (the configuration's out):
 *   DIR/failures/<signature hash>/first.json     the first failing case of that signature
 *   DIR/failures/<signature hash>/smallest.json  the smallest failing case seen
 *   DIR/failures/<signature hash>/info.txt       signature, counts, versions, replay command
 *   DIR/failures/<signature hash>/minimized.json, reproducer.mlir   the reducer's result
 *   DIR/summary.json                             totals and signatures at the end
 *   DIR/campaign-state.json                      the next seed, for --resume
 *   DIR/results.db                               the database, unless another is named
 */
#define _GNU_SOURCE
#include "campaign_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static void tools_json(const Campaign *k, char *out, size_t n) {
  size_t len = 0;
  out[0] = '\0';
  for (int i = 0; i < k->c.nspecs && len < n; i++) {
    const LowerSpec *sp = &k->c.specs[i];
    if (i == k->c.matrix_low && k->c.nmatrix > 0) { /* its configurations, by name */
      for (int c = 0; c < k->c.nmatrix && len < n; c++) {
        int w = snprintf(out + len, n - len, "%s{\"lowering\": \"%s\", \"version\": \"%s\"}",
                         i || c ? ", " : "[", k->c.matrix[c].name, k->c.matrix[c].version);
        len += w > 0 ? (size_t)w : 0;
      }
      continue;
    }
    int w = snprintf(
        out + len, n - len, "%s{\"lowering\": \"%s\", \"version\": \"%s\"%s%s%s}", i ? ", " : "[",
        sp->name, lower_version(sp), sp->kind == LOWER_MLIR_OPT ? ", \"pipeline\": \"" : "",
        sp->kind == LOWER_MLIR_OPT ? sp->pipeline : "", sp->kind == LOWER_MLIR_OPT ? "\"" : "");
    len += w > 0 ? (size_t)w : 0;
  }
  if (len < n)
    snprintf(out + len, n - len, "]");
}

/* Whether configuration c of the matrix is on a line of confs (CONFIG TAB VERSION TAB
 * STORE_CONF_*) with verdict rep ('1' reproduces, '0' passes, '2' fails differently, '3' refused;
 * '*' any).
 */
static int conf_listed(const Campaign *k, int c, const char *confs, char rep) {
  const LowerSpec *sp = &k->c.matrix[c];
  size_t nl = strlen(sp->name), vl = strlen(sp->version);
  for (const char *p = confs; *p;) {
    size_t len = strcspn(p, "\n");
    if (len == nl + vl + 3 && strncmp(p, sp->name, nl) == 0 && p[nl] == '\t' &&
        strncmp(p + nl + 1, sp->version, vl) == 0 && p[nl + 1 + vl] == '\t' &&
        (rep == '*' || p[nl + 2 + vl] == rep))
      return 1;
    p += len + (p[len] == '\n');
  }
  return 0;
}

/* A known finding steers where its matrix verdicts say it reproduces, and on configurations it
 * was never checked on (a build installed since); by each of its detailed forms (a lowering's
 * verdict: the dependency counts that failed), or by its cause when it has none. */
static void on_triaged(const StoreTriaged *t, void *ctx) {
  Campaign *k = ctx;
  uint64_t confs = 0;
  if (t->confs[0] && k->c.nmatrix > 0) {
    for (int c = 0; c < k->c.nmatrix && c < 64; c++)
      if (conf_listed(k, c, t->confs, '1') || !conf_listed(k, c, t->confs, '*'))
        confs |= 1ull << c;
    if (confs == 0)
      return; /* (it reproduces on none of this campaign's configurations) */
  }
  int any = 0;
  int shape = oracle_verdict_names_shape(oracle_verdict_lookup(t->cls));
  for (const char *p = shape ? t->forms : ""; *p;) {
    size_t len = strcspn(p, "\n");
    char form[256];
    snprintf(form, sizeof form, "%.*s", (int)(len < 255 ? len : 255), p);
    if (strcmp(form, t->signature) != 0) {
      campaign__avoid(k, t->signature, t->cls, NULL, form, "known", confs, NULL);
      any = 1;
    }
    p += len + (p[len] == '\n');
  }
  if (!any)
    campaign__avoid(k, t->signature, t->cls, NULL, NULL, "known", confs, NULL);
}

static int open_db(Campaign *k, AfErr *err) {
  int rc = store_open(k->c.db_path, 1, &k->db, err);
  if (rc)
    return rc == AF_EPARSE ? AF_EPARSE : AF_EIO;
  StoreRun run;
  store_run_init(&run);
  tools_json(k, run.tools, sizeof run.tools);
  snprintf(run.device, sizeof run.device, "%s", k->c.device);
  snprintf(run.config, sizeof run.config,
           "{\"seed\": %llu, \"schedules\": \"%s\", \"swarm\": %s, \"jobs\": %d, "
           "\"batch\": %d, \"repro\": %d, \"memfree_sync\": %s, \"checker\": %s, "
           "\"backend\": \"%s\", \"spin\": %d, \"shard\": \"%d/%d\", \"abi\": \"%s\"}",
           (unsigned long long)k->c.seed, k->c.sched_spec, k->c.swarm ? "true" : "false", k->c.jobs,
           k->batch, k->c.repro, k->c.opts.memfree_sync ? "true" : "false",
           k->c.opts.no_checker ? "false" : "true", check_backend_name(&k->c.opts), k->c.opts.spin,
           k->c.nshards > 1 ? k->c.shard : 0, (int)campaign__nshards(k),
           k->c.opts.abi ? asyncfuzz_rt_abi_name(k->c.opts.abi - 1)
           : asyncfuzz_rt_backend_info(k->c.opts.backend)->abi >= 0
               ? asyncfuzz_rt_abi_name(asyncfuzz_rt_backend_info(k->c.opts.backend)->abi)
               : "rocm for rocdl code, else cuda");
  if (store_run_begin(k->db, &run, &k->run_id, err))
    return AF_EIO;
  if (k->c.avoid_known && store_each_triaged(k->db, on_triaged, k, err))
    return AF_EIO;
  return 0;
}

/* This process alone: the loop, then info.txt, the summary and the database's totals. */
int campaign__finish_here(Campaign *k, Slot *slots, CampaignResult *res, int failed) {
  AfErr err = {0};
  double el = campaign__now() - k->t0;
  if (k->db && store_run_end(k->db, k->run_id, k->st.cases, k->st.executed, el, &err) != 0) {
    campaign__problem(k, "%s", err.msg);
    failed = 1;
  }
  if (k->db && campaign__config_counts(k, k->db) != 0)
    failed = 1;
  campaign__write_state(k, 1, slots, el);
  k->point_skip = 0; /* (the last point, whatever the thinning) */
  campaign__timeline(k);
  if (k->db && campaign__store_progress(k, k->db) != 0)
    failed = 1;
  campaign__progress(k, 1);
  for (int i = 0; i < k->nsigs; i++)
    if (!k->sigs[i].f.suppressed && campaign__write_info(k, &k->sigs[i]) != 0)
      failed = 1;
  if (campaign__write_summary(k, el) != 0) {
    campaign__problem(k, "cannot write %s/summary.json", k->c.out);
    failed = 1;
  }
  if (campaign__write_features(k) != 0) {
    campaign__problem(k, "cannot write %s/features.txt", k->c.out);
    failed = 1;
  }
  k->st.elapsed = el;
  res->db_findings = -1;
  if (k->db && store_run_findings(k->db, k->run_id, &res->db_findings, &err) != 0)
    res->db_findings = -1;
  return failed;
}

static int run_here(Campaign *k, Slot *slots, CampaignResult *res) {
  int failed = campaign__loop(k, slots, 0, 1, k->c.max_cases, 1) != 0;
  return campaign__finish_here(k, slots, res, failed);
}

/* The result of a run that ended (failed: its output could not all be written). */
int campaign__fill_result(Campaign *k, CampaignResult *res, int jobs, int failed, AfErr *err) {
  af_free(k->found);
  k->found = af_calloc((size_t)(k->nsigs > 0 ? k->nsigs : 1), sizeof *k->found);
  if (k->found == NULL)
    return af_err_set(err, AF_ENOMEM, "out of memory");
  for (int i = 0; i < k->nsigs; i++) {
    k->found[i] = k->sigs[i].f;
    k->found[i].min_ops = k->sigs[i].min_ops;
    k->found[i].min_partial = k->sigs[i].min_partial;
    if (k->sigs[i].min_ops > 0)
      k->found[i].holds = k->sigs[i].min_holds;
    k->found[i].db_new = k->db == NULL || k->sigs[i].db_new;
  }
  res->st = k->st;
  res->st.signatures = jobs > 1 ? -1 : k->nsigs;
  res->stopped = campaign__stopped(k);
  res->findings = k->found;
  res->nfindings = k->nsigs > 0 ? k->nsigs : 0;
  res->differ = k->differ;
  res->ndiffer = k->ndiffer;
  res->conf = k->conf;
  res->failed = failed;
  return 0;
}

int campaign_run(Campaign *k, const CampaignHooks *hooks, CampaignResult *res, AfErr *err) {
  memset(res, 0, sizeof *res);
  k->hooks = hooks;
  if (k->db && k->c.nmatrix > 0 &&
      campaign_recheck(k->db, k->run_id, k->c.matrix, k->c.nmatrix, &k->c.opts, 0, &res->recheck,
                       err) != 0)
    return err->rc ? err->rc : AF_EIO;
  int jobs = k->c.jobs > 0 ? k->c.jobs : 1;
  if (jobs > 256)
    return af_err_set(err, AF_EUSAGE, "at most 256 jobs");
  /* worker w's seeds: seed + w + jobs * i; its counters in shared memory */
  Slot *slots = mmap(NULL, sizeof(Slot) * (size_t)jobs, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (slots == MAP_FAILED)
    return af_err_set(err, AF_ENOMEM, "out of memory");
  memset(slots, 0, sizeof(Slot) * (size_t)jobs);
  int failed;
  if (jobs > 1)
    failed = campaign__run_workers(k, slots, jobs, res);
  else
    failed = run_here(k, slots, res);
  munmap(slots, sizeof(Slot) * (size_t)jobs);
  return campaign__fill_result(k, res, jobs, failed, err);
}

int campaign_open(const CampaignConfig *cfg, int resume, Campaign **out, uint64_t *seed_used,
                  AfErr *err) {
  *out = NULL;
  if (cfg->nspecs < 1 || cfg->nspecs > CAMPAIGN_MAX_LOWERINGS)
    return af_err_set(err, AF_EUSAGE, "1 to %d lowerings", CAMPAIGN_MAX_LOWERINGS);
  if (cfg->nmatrix < 0 || cfg->nmatrix > CAMPAIGN_MAX_CONFIGS ||
      (cfg->nmatrix > 0 && (cfg->matrix_low < 0 || cfg->matrix_low >= cfg->nspecs)))
    return af_err_set(err, AF_EUSAGE,
                      "a matrix of 1 to %d configurations (this one has %d): fewer builds or "
                      "axis values (--matrix)",
                      CAMPAIGN_MAX_CONFIGS, cfg->nmatrix);
  Campaign *k = af_calloc(1, sizeof *k);
  if (k == NULL)
    return af_err_set(err, AF_ENOMEM, "out of memory");
  k->c = *cfg;
  k->run_id = -1;
  int any_mlir = 0, rc = 0;
  for (int i = 0; i < k->c.nspecs + k->c.nmatrix && rc == 0; i++)
    rc = check_runs_on(campaign_spec(&k->c, i), &k->c.opts, err); /* rocdl on the sim only */
  for (int i = 0; i < k->c.nspecs; i++)
    any_mlir |= k->c.specs[i].kind == LOWER_MLIR_OPT;
  /* (with a matrix, smaller batches: each configuration has its turn, and steers its cases,
   * within the first minutes) */
  k->any_mlir = any_mlir;
  int gpu = asyncfuzz_rt_backend_info(k->c.opts.backend)->gpu && k->c.opts.isolate;
  k->batch = !any_mlir          ? (!gpu             ? 1
                                   : cfg->batch > 0 ? cfg->batch
                                                    : 4 * check_gpu_jobs(&k->c.opts))
             : cfg->batch > 0   ? cfg->batch
             : k->c.nmatrix > 1 ? 16
                                : 64;
  if (rc == 0)
    rc = check_parse_schedules(cfg->sched_spec, 0, k->sched, CHECK_MAX_SCHED, &k->nsched, err);
  if (rc == 0) { /* the knobs give cases */
    GenCase probe;
    if (gen_generate(&probe, 0, &k->c.cfg, err) != 0)
      rc = AF_EUSAGE;
    gen_case_free(&probe);
  }
  if (rc == 0 && campaign__mkdir_p(k->c.out) != 0)
    rc = af_err_set(err, AF_EIO, "cannot create %s: %s", k->c.out, strerror(errno));
  if (rc == 0 && resume)
    rc = campaign__resume_state(k, err);
  if (rc == 0 &&
      (cfg->nshards < 0 || (cfg->nshards > 1 && (cfg->shard < 0 || cfg->shard >= cfg->nshards))))
    rc = af_err_set(err, AF_EUSAGE, "--shard %d/%d: I/N with 0 <= I < N", cfg->shard, cfg->nshards);
  if (rc == 0 && cfg->db_path && !k->nothing_left) /* (nothing to do: no run to record) */
    rc = open_db(k, err);
  if (rc) {
    campaign_free(k);
    return rc;
  }
  *seed_used = k->c.seed;
  *out = k;
  return 0;
}

void campaign_free(Campaign *k) {
  if (k == NULL)
    return;
  store_close(k->db);
  for (int i = 0; i < k->nsigs; i++) {
    af_free(k->sigs[i].forms);
    af_free(k->sigs[i].matrix);
  }
  af_free(k->sigs);
  af_free(k->alias);
  for (int i = 0; i < k->nsteer_by; i++)
    af_free(k->steer_by[i].signature);
  af_free(k->steer_by);
  campaign__matrix_free(k);
  af_free(k->timeline);
  af_free(k->gslots);
  af_free(k->found);
  af_free(k);
}
