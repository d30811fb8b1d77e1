/*
 * loop.c: the loop of one campaign process: batches of cases from its seeds (generated,
 * drawn again where steering says so, validated, their expected observations), checked
 * through every lowering (each configuration of the matrix in turn), their failures recorded
 * (record.c) and differences counted (summary.c); its counters published to its slot.
 */
#include "campaign_int.h"
#include "../base/proc.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Counts GPU work m (GEN_GPU_MIX_* bits) for the run and configuration conf: of an executed
 * case (mix), or of a case as unsteered generation makes it (base: base_mix, base_cases). */
static void count_mix(Campaign *k, int conf, unsigned m, int base) {
  CampaignConfCount *to[2] = {&k->all, conf >= 0 && conf < k->c.nmatrix ? &k->conf[conf] : NULL};
  for (int t = 0; t < 2 && to[t]; t++) {
    to[t]->base_cases += base;
    for (int i = 0; i < GEN_GPU_MIX__COUNT; i++)
      (base ? to[t]->base_mix : to[t]->mix)[i] += (m >> i) & 1;
  }
}

/* Counts the forms case c exercises (gen_case_forms) for the run and configuration conf: a case
 * run, executed or not. */
static void count_forms(Campaign *k, int conf, const GenCase *c, int executed) {
  CampaignConfCount *to[2] = {&k->all, conf >= 0 && conf < k->c.nmatrix ? &k->conf[conf] : NULL};
  uint32_t m = gen_case_forms(c);
  for (int t = 0; t < 2 && to[t]; t++)
    for (int i = 0; i < GEN_FORM__COUNT; i++) {
      to[t]->forms[i] += (m >> i) & 1;
      to[t]->forms_executed[i] += executed && ((m >> i) & 1);
    }
}

/* Counts the GPU work case c (of seed) would hold unsteered: c itself, or when it was steered
 * (plain: its knobs without the steering) the case those knobs make. */
static void base_mix(Campaign *k, int conf, const GenConfig *plain, uint64_t seed,
                     const GenCase *c) {
  unsigned m = gen_case_gpu_mix(c);
  if (plain) {
    GenCase u;
    AfErr err = {0};
    if (gen_generate(&u, seed, plain, &err) != 0)
      return;
    m = gen_case_gpu_mix(&u);
    gen_case_free(&u);
  }
  count_mix(k, conf, m, 1);
}

/* The cases of one batch, for configuration conf: n cases from the worker's next seeds, made
 * without what steering avoids there (steer.c), validated, with their expected observations.
 * *ngen: how many were generated (to free). -1 on a generator bug (the case is kept as
 * DIR/invalid-case-SEED.json). */
static int gen_batch(Campaign *k, int conf, int w, int jobs, uint64_t *next, int n, GenCase *cases,
                     OracleExpected **es, const GenCase **cp, int *ngen) {
  AfErr err = {0};
  *ngen = 0;
  for (int j = 0; j < n; j++, (*ngen)++) {
    /* shard I of N: seeds SEED + I + N * k; worker w of the shard: k = w + jobs * i */
    uint64_t cseed = k->c.seed + (uint64_t)(k->c.nshards > 1 ? k->c.shard : 0) +
                     campaign__nshards(k) * ((uint64_t)w + (uint64_t)jobs * (*next)++);
    const GenCase *given = k->ngiven ? k->given[j] : NULL;
    const uint8_t *given_in = k->ngiven && !given ? k->given_in[j] : NULL;
    GenConfig cfg = k->c.cfg;
    if (k->c.swarm && !given_in) { /* (bytes choose their own knobs) */
      GenConfig wide;
      if (k->c.swarm > 1)
        gen_config_widen(&k->c.cfg, &wide);
      gen_config_swarm(k->c.swarm > 1 ? &wide : &k->c.cfg, cseed, &cfg);
    }
    /* (the avoid set is part of the case's config: its seed and knobs make it again) */
    GenAvoid av;
    campaign__batch_avoid(k, conf, cseed, &av);
    int steered = gen_avoid_count(&av) > 0;
    GenConfig plain = cfg; /* (what the case would be unsteered: the mix steering keeps) */
    gen_avoid_union(&cfg.avoid, &av);
    k->st.avoided += steered;
    int rc = given ? gen_case_copy(&cases[j], given)
             : given_in
                 ? gen_generate_bytes(&cases[j], given_in, k->given_n[j], &cfg, k->c.swarm, &err)
                 : gen_generate(&cases[j], cseed, &cfg, &err);
    /* (a case made again unsteered costs a builtin campaign 15% of its rate: there, a sample
     * of one case in 16, by seed; beside mlir-opt's processes every case) */
    if (rc == 0 && !given && !given_in &&
        ((k->any_mlir && k->batch > 1) || af_mix64(cseed, 0xba5e) % 16 == 0))
      base_mix(k, conf, steered ? &plain : NULL, cseed, &cases[j]);
    if (given && rc) {
      campaign__problem(k, "out of memory");
      return -1;
    }
    if (rc == 0)
      rc = gen_validate(&cases[j], &err);
    if (rc == 0)
      rc = oracle_expect(&cases[j], &es[j], &err);
    cp[j] = &cases[j];
    if (rc == 0) {
      af_feat_case(j);
      gen_case_features(&cases[j]);
    }
    if (rc) { /* a generator bug: keep the evidence and stop */
      campaign__problem(k, "case seed %llu: %s", (unsigned long long)cseed, err.msg);
      char path[4096];
      snprintf(path, sizeof path, "%s/invalid-case-%llu.json", k->c.out, (unsigned long long)cseed);
      AfErr e2 = {0};
      if (cases[j].nops)
        gen_case_save(&cases[j], path, &e2);
      (*ngen)++;
      return -1;
    }
  }
  return 0;
}

/* Checks cases[0..n) through every lowering: res[l * B + j] for lowering l, case j. The
 * schedules' seeds derive from each case's seed (mlir-opt: from the batch's first case, one
 * set per process). -1 when the pipeline could not run (reported). */
static int check_batch(Campaign *k, int conf, GenCase *cases, OracleExpected **es,
                       const GenCase **cp, int n, CheckResult *res) {
  AfErr err = {0};
  for (int l = 0; l < k->c.nspecs; l++) {
    CheckResult *r = res + (size_t)l * (size_t)k->batch;
    int rc = 0;
    Schedule s[CHECK_MAX_SCHED];
    CheckOpts lo = k->c.opts; /* (the loop's runs only: a device failing on purpose) */
    lo.fail_pct = k->c.fail_pct;
    const LowerSpec *sp =
        campaign_spec(&k->c, k->c.nmatrix > 0 && l == k->c.matrix_low ? k->c.nspecs + conf : l);
    if (sp->kind == LOWER_MLIR_OPT) {
      for (int j = 0; j < k->nsched; j++) {
        s[j] = k->sched[j];
        s[j].seed = af_mix64(cases[0].seed, (uint64_t)j + 1);
      }
      rc = check_cases(cp, n, sp, s, k->nsched, (const OracleExpected *const *)es, &lo, r, &err);
    } else if (asyncfuzz_rt_backend_info(lo.backend)->gpu && lo.isolate) {
      /* a GPU: the batch's cases at once, in the GPU children (no features: theirs) */
      Schedule *sv = af_malloc(sizeof *sv * (size_t)n * (size_t)k->nsched);
      for (int j = 0; j < n && sv; j++)
        for (int q = 0; q < k->nsched; q++) {
          sv[j * k->nsched + q] = k->sched[q];
          sv[j * k->nsched + q].seed = af_mix64(cases[j].seed, (uint64_t)q + 1);
        }
      rc = sv ? check_cases_sched(cp, n, sp, sv, k->nsched, k->nsched,
                                  (const OracleExpected *const *)es, &lo, r, &err)
              : af_err_set(&err, AF_ENOMEM, "out of memory");
      af_free(sv);
    } else {
      for (int j = 0; j < n && rc == 0; j++) {
        for (int q = 0; q < k->nsched; q++) {
          s[q] = k->sched[q];
          s[q].seed = af_mix64(cases[j].seed, (uint64_t)q + 1);
        }
        af_feat_case(j);
        rc = check_case(&cases[j], sp, s, k->nsched, es[j], &lo, &r[j], &err);
      }
    }
    af_feat_case(-1);
    if (rc) {
      campaign__problem(k, "lowering %s, cases from seed %llu: %s", sp->name,
                        (unsigned long long)cases[0].seed, err.msg);
      return -1;
    }
  }
  return 0;
}

/* Records the batch's failures and differences. -1 when output cannot be written. */
static int record_batch(Campaign *k, int conf, GenCase *cases, OracleExpected **es, int n,
                        const CheckResult *res) {
  for (int j = 0; j < n; j++) {
    af_feat_case(j); /* (its verdicts, signatures and differences: this case's features) */
    k->st.cases++;
    const CheckResult *rs[CAMPAIGN_MAX_LOWERINGS];
    int executed = 1, device_error = 0;
    for (int l = 0; l < k->c.nspecs; l++) {
      const CheckResult *r = &res[(size_t)l * (size_t)k->batch + (size_t)j];
      rs[l] = r;
      executed &= r->executed != 0;
      device_error |= r->device_errors > 0;
      k->executed_per[l] += r->executed != 0;
      int low = l;
      if (k->c.nmatrix > 0 && l == k->c.matrix_low) {
        low = k->c.nspecs + conf;
        k->conf[conf].cases++;
        k->conf[conf].executed += r->executed != 0;
        k->conf[conf].failures += r->first_fail >= 0;
      }
      if (af_feat_on()) {
        char verdict[200];
        af_fmt(
            verdict, sizeof verdict, "%s %s%s", campaign_spec(&k->c, low)->name,
            oracle_verdict_name(r->first_fail < 0 ? VERDICT_PASS : r->verdict[r->first_fail].cls),
            r->executed ? " executed" : "");
        af_feat_add(AF_FEAT_VERDICT, verdict, strlen(verdict));
        gen_case_verdict_features(&cases[j], verdict);
      }
      if (r->first_fail >= 0 && campaign__record(k, low, &cases[j], &r->sched[r->first_fail],
                                                 &r->verdict[r->first_fail], es[j]) != 0)
        return -1;
    }
    k->st.executed += executed;
    k->st.device_errors += device_error;
    if (executed)
      count_mix(k, conf, gen_case_gpu_mix(&cases[j]), 0);
    count_forms(k, conf, &cases[j], executed);
    if (k->c.nspecs > 1)
      campaign__note_differ(k, rs, cases[j].seed);
  }
  af_feat_case(-1);
  return 0;
}

/* This process's counters into its slot, for the parent of workers and the resume state
 * (next: the cases it started). */
static void publish(Slot *me, const Campaign *k, uint64_t next) {
  me->next = next;
  me->cases = k->st.cases;
  me->failures = k->st.failures;
  me->new_findings = k->st.new_findings;
  me->known_hits = k->st.known_hits;
  me->corpus = k->st.corpus;
  me->sigs = k->nsigs;
  me->differ = k->st.differ_cases;
  me->executed = k->st.executed;
  me->avoided = k->st.avoided;
  me->device_errors = k->st.device_errors;
  memcpy(me->executed_per, k->executed_per, sizeof me->executed_per);
  memcpy(me->conf, k->conf, sizeof me->conf);
  me->all = k->all;
  me->matrix_checked = k->st.matrix_checked;
  me->matrix_differ = k->st.matrix_differ;
  memcpy(me->time, k->st.time, sizeof me->time);
}

/* Adds the seconds since *t to time bucket b, and moves *t on. */
static void spend(Campaign *k, int b, double *t) {
  double now = campaign__now();
  k->st.time[b] += now - *t;
  *t = now;
}

/* One batch: generated, checked (the tools' processes counted apart), its failures recorded
 * (their reductions and database writes counted apart, where they happen), its new findings
 * checked on every configuration. */
static int run_batch(Campaign *k, int conf, int w, int jobs, uint64_t *next, int n, GenCase *cases,
                     OracleExpected **es, const GenCase **cp, CheckResult *res, int *ngen) {
  static const int tool_bucket[AF_TOOL__COUNT] = {[AF_TOOL_MLIR_OPT] = CAMPAIGN_T_MLIR_OPT,
                                                  [AF_TOOL_RUNNER] = CAMPAIGN_T_RUNNER,
                                                  [AF_TOOL_OTHER] = CAMPAIGN_T_TOOLS};
  double t = campaign__now(), p0[AF_TOOL__COUNT], p1[AF_TOOL__COUNT];
  int ex = gen_batch(k, conf, w, jobs, next, n, cases, es, cp, ngen);
  spend(k, CAMPAIGN_T_GEN, &t);
  af_proc_seconds(p0);
  if (ex == 0)
    ex = check_batch(k, conf, cases, es, cp, n, res);
  af_proc_seconds(p1);
  for (int i = 0; i < AF_TOOL__COUNT; i++) {
    k->st.time[tool_bucket[i]] += p1[i] - p0[i];
    k->st.time[CAMPAIGN_T_CHECK] -= p1[i] - p0[i];
  }
  spend(k, CAMPAIGN_T_CHECK, &t);
  double inner = k->st.time[CAMPAIGN_T_REDUCE] + k->st.time[CAMPAIGN_T_DB];
  if (ex == 0)
    ex = record_batch(k, conf, cases, es, n, res);
  k->st.time[CAMPAIGN_T_FINDINGS] -=
      k->st.time[CAMPAIGN_T_REDUCE] + k->st.time[CAMPAIGN_T_DB] - inner;
  spend(k, CAMPAIGN_T_FINDINGS, &t);
  af_feat_pause(1); /* (features of the findings, not of one case of the batch) */
  if (ex == 0)      /* (the batch's new findings on every configuration, at once) */
    ex = campaign__matrix_flush(k, 0);
  af_feat_pause(0);
  spend(k, CAMPAIGN_T_MATRIX, &t);
  return ex;
}

/* The rest of the process's time since t0: what no bucket took. */
static void time_other(Campaign *k) {
  double sum = 0;
  for (int i = 0; i < CAMPAIGN_T__COUNT; i++)
    sum += i == CAMPAIGN_T_OTHER ? 0 : k->st.time[i];
  double other = campaign__now() - k->t0 - sum;
  k->st.time[CAMPAIGN_T_OTHER] = other > 0 ? other : 0;
}

/* The state of one process's loop: the batch's arrays, when to report and flush next, the
 * cases it started. */
struct CampaignLoop {
  GenCase *cases;
  OracleExpected **es;
  const GenCase **cp;
  CheckResult *res;
  double period, next_report, next_flush;
  uint64_t next;
};

int campaign__loop_begin(Campaign *k, long max_cases) {
  int B = k->batch;
  CampaignLoop *L = af_calloc(1, sizeof *L);
  k->loop = L;
  if (L) {
    L->cases = af_calloc((size_t)B, sizeof *L->cases);
    L->es = af_calloc((size_t)B, sizeof *L->es);
    L->cp = af_calloc((size_t)B, sizeof *L->cp);
    L->res = af_calloc((size_t)B * (size_t)k->c.nspecs, sizeof *L->res);
  }
  k->t0 = campaign__now();
  k->deadline = max_cases > 0 ? 0 : k->t0 + (double)k->c.seconds;
  if (!L || !L->cases || !L->es || !L->cp || !L->res) {
    campaign__problem(k, "out of memory");
    return -1;
  }
  L->period = k->hooks && k->hooks->period > 0 ? k->hooks->period : 5.0;
  L->next_report = k->t0 + L->period;
  L->next_flush = k->t0 + 1.0;
  return 0;
}

int campaign__loop_done(const Campaign *k, long max_cases) {
  if (campaign__stopped(k))
    return 1;
  if (max_cases > 0)
    return k->st.cases >= max_cases;
  return campaign__now() - k->t0 >= (double)k->c.seconds;
}

int campaign__loop_step(Campaign *k, Slot *slots, int w, int jobs, long max_cases, int show) {
  CampaignLoop *L = k->loop;
  double t = campaign__now();
  if (t >= L->next_flush) {
    if (campaign__flush_tallies(k) != 0) /* (its time is the database's: record.c) */
      return -1;
    L->next_flush = campaign__now() + 1.0;
  }
  if (t >= L->next_report) {
    campaign__timeline(k);
    if (show)
      campaign__progress(k, 0);
    if (jobs == 1)
      campaign__write_state(k, 1, slots, t - k->t0);
    L->next_report = t + L->period;
  }
  int n = k->ngiven > 0 ? k->ngiven : k->batch, ngen;
  if (max_cases > 0 && max_cases - k->st.cases < n)
    n = (int)(max_cases - k->st.cases);
  /* the matrix's configurations in turn, batch by batch, across the workers */
  long turn = (long)(k->c.nshards > 1 ? k->c.shard : 0) +
              (long)campaign__nshards(k) * ((long)w + (long)jobs * k->nbatch);
  int conf = k->c.nmatrix > 0 ? (int)(turn % k->c.nmatrix) : 0;
  k->nbatch++;
  int ex = run_batch(k, conf, w, jobs, &L->next, n, L->cases, L->es, L->cp, L->res, &ngen);
  for (int j = 0; j < ngen; j++) {
    oracle_expected_free(L->es[j]);
    L->es[j] = NULL;
    gen_case_free(&L->cases[j]);
  }
  if (ex == 0) {
    time_other(k);
    publish(&slots[w], k, L->next);
  }
  return ex;
}

int campaign__loop_end(Campaign *k, Slot *slots, int w, int ex) {
  CampaignLoop *L = k->loop;
  if (L) {
    af_free(L->cases);
    af_free(L->es);
    af_free(L->cp);
    af_free(L->res);
  }
  double t = campaign__now();
  if (campaign__matrix_flush(k, 1) != 0)
    ex = -1;
  spend(k, CAMPAIGN_T_MATRIX, &t);
  if (campaign__flush_tallies(k) != 0)
    ex = -1;
  time_other(k);
  if (ex == 0) /* (what the last matrix checks counted) */
    publish(&slots[w], k, L ? L->next : 0);
  af_free(L);
  k->loop = NULL;
  return ex;
}

/* The loop of one process (worker w of jobs): until the deadline, max_cases or a stop. 0, or
 * -1 when it stopped on an error (reported). */
int campaign__loop(Campaign *k, Slot *slots, int w, int jobs, long max_cases, int show) {
  int ex = campaign__loop_begin(k, max_cases);
  if (ex == 0 && k->c.nseed_dirs > 0 && jobs == 1)
    ex = campaign__replay_seeds(k, slots, max_cases);
  while (ex == 0 && !campaign__loop_done(k, max_cases))
    ex = campaign__loop_step(k, slots, w, jobs, max_cases, show);
  return campaign__loop_end(k, slots, w, ex);
}

/* The run's cases per configuration into the database. -1 when it cannot be written. */
int campaign__config_counts(Campaign *k, Store *db) {
  StoreConfigCount c[CAMPAIGN_MAX_CONFIGS];
  for (int i = 0; i < k->c.nmatrix; i++) {
    c[i].config = k->c.matrix[i].name;
    c[i].version = k->c.matrix[i].version;
    c[i].cases = k->conf[i].cases;
    c[i].executed = k->conf[i].executed;
    c[i].failures = k->conf[i].failures;
  }
  AfErr err = {0};
  if (k->c.nmatrix > 0 && store_config_counts(db, k->run_id, c, k->c.nmatrix, &err) != 0) {
    campaign__problem(k, "%s", err.msg);
    return -1;
  }
  return 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files of directory dir, sorted (af_free each and the array); how many, or -1. */
static int list_dir(const char *dir, char ***out) {
  *out = NULL;
  DIR *d = opendir(dir);
  if (d == NULL)
    return -1;
  int n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || af_grow((void **)out, &cap, n + 1, sizeof **out))
      continue;
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && ((*out)[n] = af_strdup(p)) != NULL)
      n++;
  }
  closedir(d);
  if (n > 1)
    qsort(*out, (size_t)n, sizeof **out, by_name);
  return n;
}

/* One corpus input through the campaign: 0, 1 skipped (not a valid case), -1 an error. */
static int replay_one(Campaign *k, Slot *slots, const char *path, long max_cases) {
  char *data = NULL;
  size_t n = 0;
  AfErr err = {0};
  if (af_read_file(path, &data, &n, &err) != 0) {
    campaign__problem(k, "%s", err.msg);
    return 1;
  }
  GenCase c;
  int json = n > 0 && data[0] == '{', rc = 0;
  if (json && (gen_case_from_json(&c, data, &err) != 0 || gen_validate(&c, &err) != 0)) {
    campaign__problem(k, "%s: not a valid case: %s", path, err.msg);
    rc = 1;
  } else {
    const GenCase *gc = json ? &c : NULL;
    const uint8_t *gi = json ? NULL : (const uint8_t *)data;
    size_t gn = json ? 0 : n;
    k->ngiven = 1;
    k->given = &gc;
    k->given_in = &gi;
    k->given_n = &gn;
    rc = campaign__loop_step(k, slots, 0, 1, max_cases, 1);
    k->ngiven = 0;
    k->given = NULL;
    k->given_in = NULL;
    k->given_n = NULL;
  }
  if (json)
    gen_case_free(&c);
  af_free(data);
  return rc;
}

int campaign__replay_seeds(Campaign *k, Slot *slots, long max_cases) {
  int ex = 0;
  for (int d = 0; d < k->c.nseed_dirs && d < 8 && ex == 0; d++) {
    char **files;
    int n = list_dir(k->c.seed_dirs[d], &files);
    if (n < 0) {
      campaign__problem(k, "cannot read the corpus directory %s: %s", k->c.seed_dirs[d],
                        strerror(errno));
      return -1;
    }
    for (int i = 0; i < n; i++) {
      if (ex == 0 && !campaign__loop_done(k, max_cases))
        ex = replay_one(k, slots, files[i], max_cases) < 0 ? -1 : 0;
      af_free(files[i]);
    }
    af_free(files);
  }
  return ex;
}
