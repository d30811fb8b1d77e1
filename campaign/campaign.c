/*
 * campaign.c: the campaign loop (campaign.h): cases generated in batches, checked through
 * every lowering, failures recorded (record.c); worker processes for jobs > 1, with their
 * counters in shared memory for the parent's status line and the resume state; summary.json
 * and campaign-state.json.
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

#include "../lower/mlir.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int stopped(const Campaign *k) {
  return k->c.stop && *k->c.stop;
}

static void progress(Campaign *k, int final) {
  if (k->hooks && k->hooks->progress) {
    k->st.elapsed = campaign__now() - k->t0;
    k->st.nspecs = k->c.nspecs;
    k->st.signatures = k->nsigs;
    k->st.nconfigs = k->c.nmatrix;
    for (int i = 0; i < k->c.nmatrix; i++) {
      long c = k->conf[i].cases;
      if (i == 0 || c < k->st.conf_min)
        k->st.conf_min = c;
      if (i == 0 || c > k->st.conf_max)
        k->st.conf_max = c;
    }
    k->hooks->progress(&k->st, final, k->hooks->ctx);
  }
}

static void json_esc(FILE *f, const char *s) {
  AfBuf b;
  af_buf_init(&b);
  af_buf_json_str(&b, s);
  fputs(b.p ? b.p : "\"\"", f);
  af_buf_free(&b);
}

static int write_summary(Campaign *k, double el) {
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/summary.json", k->c.out);
  snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid()); /* workers share DIR */
  FILE *f = fopen(tmp, "w");
  if (f == NULL)
    return -1;
  fprintf(f, "{\"asyncfuzz_version\": \"%s\", \"lowerings\": [", ASYNCFUZZ_VERSION);
  for (int i = 0; i < k->c.nspecs; i++) {
    const LowerSpec *sp = &k->c.specs[i];
    fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
    json_esc(f, sp->name);
    fprintf(f, ", \"version\": ");
    json_esc(f, lower_version(sp));
    if (sp->kind == LOWER_MLIR_OPT) {
      fprintf(f, ", \"pipeline\": ");
      json_esc(f, sp->pipeline);
    }
    fprintf(f, ", \"executed_cases\": %ld}", k->executed_per[i]);
  }
  fprintf(f, "],\n \"configurations\": [");
  for (int i = 0; i < k->c.nmatrix; i++) {
    const LowerSpec *sp = &k->c.matrix[i];
    char axes[200];
    mlir_config_axes(sp, axes, sizeof axes);
    fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
    json_esc(f, sp->name);
    fprintf(f, ", \"axes\": ");
    json_esc(f, axes);
    fprintf(f, ", \"version\": ");
    json_esc(f, sp->version);
    fprintf(f, ", \"cases\": %ld, \"executed_cases\": %ld, \"failing_cases\": %ld}",
            k->conf[i].cases, k->conf[i].executed, k->conf[i].failures);
  }
  fprintf(f, "],\n \"matrix_checked\": %ld, \"matrix_differ\": %ld", k->st.matrix_checked,
          k->st.matrix_differ);
  fprintf(f, ",\n \"backend\": \"%s\", \"device\": ", check_backend_name(&k->c.opts));
  json_esc(f, k->c.device);
  fprintf(f, ", \"schedules\": ");
  json_esc(f, k->c.sched_spec);
  fprintf(f,
          ", \"swarm\": %s, \"cases\": %ld, \"executed_cases\": %ld, \"seconds\": %.2f, "
          "\"failures\": %ld, \"avoided_cases\": %ld, \"avoided_shapes\": [",
          k->c.swarm ? "true" : "false", k->st.cases, k->st.executed, el, k->st.failures,
          k->st.avoided);
  for (int i = 0; i < k->st.navoid; i++) {
    fprintf(f, "%s", i ? ", " : "");
    json_esc(f, k->avoid_why[i]);
  }
  fprintf(f, "], \"differing_cases\": %ld, \"differences\": [", k->st.differ_cases);
  for (int i = 0; i < k->ndiffer; i++) {
    fprintf(f, "%s\n  {\"verdicts\": ", i ? "," : "");
    json_esc(f, k->differ[i].what);
    fprintf(f, ", \"cases\": %ld, \"first_seed\": %llu}", k->differ[i].count,
            (unsigned long long)k->differ[i].first_seed);
  }
  fprintf(f, "],\n \"signatures\": [");
  for (int i = 0; i < k->nsigs; i++) {
    const Sig *s = &k->sigs[i];
    fprintf(f, "%s\n  {\"signature\": ", i ? "," : "");
    json_esc(f, s->f.signature);
    fprintf(f,
            ", \"class\": \"%s\", \"lowering\": \"%s\", \"count\": %ld, \"smallest_ops\": %d, "
            "\"dir\": \"failures/%s\", \"known\": %s",
            oracle_verdict_name(s->f.cls), campaign_spec(&k->c, s->f.low)->name, s->f.count,
            s->f.smallest_ops, s->f.dir, s->f.suppressed ? "true" : "false");
    if (s->f.matrix_n > 0) {
      fprintf(f,
              ", \"configurations\": {\"checked\": %d, \"reproduces\": %d, \"seconds\": %.3f, "
              "\"differ_by\": ",
              s->f.matrix_n, s->f.matrix_rep, s->f.matrix_seconds);
      json_esc(f, s->f.matrix_axes);
      fprintf(f, ", \"verdicts\": ");
      json_esc(f, s->matrix ? s->matrix : "");
      fprintf(f, "}");
    }
    fprintf(f, ", \"forms\": [");
    for (int j = 0; j < s->nforms; j++) {
      fprintf(f, "%s{\"detailed\": ", j ? ", " : "");
      json_esc(f, s->forms[j].detailed);
      fprintf(f, ", \"count\": %ld}", s->forms[j].count);
    }
    fprintf(f, "]}");
  }
  fprintf(f, "\n]}\n");
  return campaign__commit_file(f, tmp, path);
}

static int first_cls(const CheckResult *r) {
  return r->first_fail < 0 ? VERDICT_PASS : r->verdict[r->first_fail].cls;
}

static void note_differ(Campaign *k, const CheckResult *const *res, uint64_t seed) {
  int differ = 0;
  for (int i = 1; i < k->c.nspecs; i++)
    differ |= first_cls(res[i]) != first_cls(res[0]);
  if (!differ)
    return;
  k->st.differ_cases++;
  char what[160];
  size_t n = 0;
  what[0] = '\0';
  for (int i = 0; i < k->c.nspecs && n < sizeof what; i++) {
    int w = snprintf(what + n, sizeof what - n, "%s%s=%s", i ? " " : "", k->c.specs[i].name,
                     oracle_verdict_name(first_cls(res[i])));
    n += w > 0 ? (size_t)w : 0;
  }
  for (int i = 0; i < k->ndiffer; i++)
    if (strcmp(k->differ[i].what, what) == 0) {
      k->differ[i].count++;
      return;
    }
  if (k->ndiffer < (int)(sizeof k->differ / sizeof k->differ[0])) {
    CampaignDiffer *d = &k->differ[k->ndiffer++];
    snprintf(d->what, sizeof d->what, "%s", what);
    d->count = 1;
    d->first_seed = seed;
  }
}

/* --until: HH:MM (the next such local time) or YYYY-MM-DDTHH:MM. Seconds from now. */
int campaign_parse_until(const char *v, long *seconds) {
  time_t now = time(NULL);
  struct tm tm;
  localtime_r(&now, &tm);
  int y, mo, d, h, mi;
  if (sscanf(v, "%d-%d-%dT%d:%d", &y, &mo, &d, &h, &mi) == 5) {
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
  } else if (sscanf(v, "%d:%d", &h, &mi) != 2) {
    return -1;
  }
  if (h < 0 || h > 23 || mi < 0 || mi > 59)
    return -1;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = 0;
  tm.tm_isdst = -1;
  time_t t = mktime(&tm);
  if (strchr(v, 'T') == NULL && t <= now)
    t += 24 * 3600; /* tomorrow's */
  if (t <= now)
    return -1;
  *seconds = (long)(t - now);
  return 0;
}

static uint64_t nshards(const Campaign *k) {
  return k->c.nshards > 1 ? (uint64_t)k->c.nshards : 1;
}

/* DIR/campaign-state.json: the seed to go on from (every seed of this shard below it has been
 * checked by some worker), the shard, and the cases and seconds done so far (with the earlier
 * runs this one resumed). */
static int write_state(const Campaign *k, int jobs, const Slot *sl, double elapsed) {
  uint64_t min = UINT64_MAX;
  long cases = 0;
  for (int w = 0; w < jobs; w++) {
    if (sl[w].next < min)
      min = sl[w].next;
    cases += sl[w].cases;
  }
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/campaign-state.json", k->c.out);
  snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid()); /* workers share DIR */
  FILE *f = fopen(tmp, "w");
  if (f == NULL)
    return -1;
  fprintf(f,
          "{\"next_seed\": %llu, \"shard\": %d, \"shards\": %d, \"cases\": %ld, "
          "\"seconds\": %.1f}\n",
          (unsigned long long)(k->c.seed + min * (uint64_t)jobs * nshards(k)),
          k->c.nshards > 1 ? k->c.shard : 0, (int)nshards(k), k->prior_cases + cases,
          k->prior_seconds + elapsed);
  return campaign__commit_file(f, tmp, path);
}

/* The state written by write_state (an older one has only next_seed: shard 0 of 1, nothing
 * counted). 0, or -1 when there is none or it cannot be read. */
static int read_state(const char *out, uint64_t *seed, int *shard, int *shards, long *cases,
                      double *seconds) {
  char path[4096];
  snprintf(path, sizeof path, "%s/campaign-state.json", out);
  char *text = NULL;
  AfErr err = {0};
  if (af_read_file(path, &text, NULL, &err) != 0)
    return -1;
  /* next_seed may pass 2^53, where a JSON number (a double) loses digits: read from the text */
  const char *ns = strstr(text, "\"next_seed\":");
  char *end = NULL;
  if (ns)
    *seed = strtoull(ns + 12, &end, 10);
  int ok = ns != NULL && end != ns + 12;
  cJSON *j = cJSON_Parse(text);
  af_free(text);
  if (!ok || j == NULL) {
    cJSON_Delete(j);
    return -1;
  }
  const cJSON *v;
  *shard = cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(j, "shard")) ? v->valueint : 0;
  *shards = cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(j, "shards")) ? v->valueint : 1;
  *cases =
      cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(j, "cases")) ? (long)v->valuedouble : 0;
  *seconds =
      cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(j, "seconds")) ? v->valuedouble : 0;
  cJSON_Delete(j);
  return 0;
}

/* --resume: the state's seed, the shard checked against the state's, and what is left of the
 * campaign's cases or seconds (k->nothing_left when none). */
static int resume_state(Campaign *k, AfErr *err) {
  int shard, shards;
  if (read_state(k->c.out, &k->c.seed, &shard, &shards, &k->prior_cases, &k->prior_seconds))
    return af_err_set(err, AF_EUSAGE,
                      "--resume: no campaign to resume in %s (campaign-state.json missing or "
                      "unreadable)",
                      k->c.out);
  int mine = k->c.nshards > 1 ? k->c.shard : 0;
  if (shards != (int)nshards(k) || shard != mine)
    return af_err_set(err, AF_EPARSE,
                      "--resume: the campaign in %s is shard %d/%d, not %d/%d: its seeds would "
                      "overlap another shard's (resume it with --shard %d/%d, or start anew in "
                      "another directory)",
                      k->c.out, shard, shards, mine, (int)nshards(k), shard, shards);
  if (k->c.max_cases > 0) {
    k->c.max_cases -= k->prior_cases;
    k->nothing_left = k->c.max_cases <= 0;
  } else if (!k->c.until) {
    k->c.seconds -= (long)k->prior_seconds;
    k->nothing_left = k->c.seconds <= 0;
  }
  return 0;
}

int campaign_nothing_left(const Campaign *k) {
  return k->nothing_left;
}

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

static void on_triaged(const char *signature, const char *cls, void *ctx) {
  campaign__avoid(ctx, signature, cls, "known");
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
           k->c.nshards > 1 ? k->c.shard : 0, (int)nshards(k),
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

/* The cases of one batch: n cases from the worker's next seeds, validated, with their
 * expected observations. *ngen: how many were generated (to free). -1 on a generator bug
 * (the case is kept as DIR/invalid-case-SEED.json). */
static int gen_batch(Campaign *k, int w, int jobs, uint64_t *next, int n, GenCase *cases,
                     OracleExpected **es, const GenCase **cp, int *ngen) {
  AfErr err = {0};
  *ngen = 0;
  for (int j = 0; j < n; j++, (*ngen)++) {
    /* shard I of N: seeds SEED + I + N * k; worker w of the shard: k = w + jobs * i */
    uint64_t cseed = k->c.seed + (uint64_t)(k->c.nshards > 1 ? k->c.shard : 0) +
                     nshards(k) * ((uint64_t)w + (uint64_t)jobs * (*next)++);
    GenConfig cfg = k->c.cfg;
    if (k->c.swarm)
      gen_config_swarm(&k->c.cfg, cseed, &cfg);
    int rc = gen_generate(&cases[j], cseed, &cfg, &err);
    /* a case with a shape to avoid is drawn again from seeds derived from its own (each case
     * records the seed and knobs that made it, so it regenerates as before) */
    int again = 0;
    for (int a = 1; rc == 0 && a <= 64 && k->st.navoid > 0 &&
                    gen_case_has_shape(&cases[j], k->avoid, k->st.navoid);
         a++) {
      gen_case_free(&cases[j]);
      cseed = af_mix64(cseed, (uint64_t)a);
      cfg = k->c.cfg;
      if (k->c.swarm)
        gen_config_swarm(&k->c.cfg, cseed, &cfg);
      rc = gen_generate(&cases[j], cseed, &cfg, &err);
      again = 1;
    }
    k->st.avoided += again;
    if (rc == 0)
      rc = gen_validate(&cases[j], &err);
    if (rc == 0)
      rc = oracle_expect(&cases[j], &es[j], &err);
    cp[j] = &cases[j];
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
    const LowerSpec *sp =
        campaign_spec(&k->c, k->c.nmatrix > 0 && l == k->c.matrix_low ? k->c.nspecs + conf : l);
    if (sp->kind == LOWER_MLIR_OPT) {
      for (int j = 0; j < k->nsched; j++) {
        s[j] = k->sched[j];
        s[j].seed = af_mix64(cases[0].seed, (uint64_t)j + 1);
      }
      rc = check_cases(cp, n, sp, s, k->nsched, (const OracleExpected *const *)es, &k->c.opts, r,
                       &err);
    } else {
      for (int j = 0; j < n && rc == 0; j++) {
        for (int q = 0; q < k->nsched; q++) {
          s[q] = k->sched[q];
          s[q].seed = af_mix64(cases[j].seed, (uint64_t)q + 1);
        }
        rc = check_case(&cases[j], sp, s, k->nsched, es[j], &k->c.opts, &r[j], &err);
      }
    }
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
    k->st.cases++;
    const CheckResult *rs[CAMPAIGN_MAX_LOWERINGS];
    int executed = 1;
    for (int l = 0; l < k->c.nspecs; l++) {
      const CheckResult *r = &res[(size_t)l * (size_t)k->batch + (size_t)j];
      rs[l] = r;
      executed &= r->executed != 0;
      k->executed_per[l] += r->executed != 0;
      int low = l;
      if (k->c.nmatrix > 0 && l == k->c.matrix_low) {
        low = k->c.nspecs + conf;
        k->conf[conf].cases++;
        k->conf[conf].executed += r->executed != 0;
        k->conf[conf].failures += r->first_fail >= 0;
      }
      if (r->first_fail >= 0 && campaign__record(k, low, &cases[j], &r->sched[r->first_fail],
                                                 &r->verdict[r->first_fail], es[j]) != 0)
        return -1;
    }
    k->st.executed += executed;
    if (k->c.nspecs > 1)
      note_differ(k, rs, cases[j].seed);
  }
  return 0;
}

/* The loop of one process (worker w of jobs): until the deadline, max_cases or a stop. 0, or
 * -1 when it stopped on an error (reported). */
static int loop(Campaign *k, Slot *slots, int w, int jobs, long max_cases, int show) {
  int B = k->batch, ex = 0;
  GenCase *cases = af_calloc((size_t)B, sizeof *cases);
  OracleExpected **es = af_calloc((size_t)B, sizeof *es);
  const GenCase **cp = af_calloc((size_t)B, sizeof *cp);
  CheckResult *res = af_calloc((size_t)B * (size_t)k->c.nspecs, sizeof *res);
  if (!cases || !es || !cp || !res) {
    campaign__problem(k, "out of memory");
    ex = -1;
  }
  Slot *me = &slots[w];
  k->t0 = campaign__now();
  k->deadline = max_cases > 0 ? 0 : k->t0 + (double)k->c.seconds;
  double period = k->hooks && k->hooks->period > 0 ? k->hooks->period : 5.0;
  double next_report = k->t0 + period, next_flush = k->t0 + 1.0;
  uint64_t next = 0;
  while (ex == 0 && !stopped(k)) {
    if (max_cases > 0 && k->st.cases >= max_cases)
      break;
    double t = campaign__now();
    if (max_cases <= 0 && t - k->t0 >= (double)k->c.seconds)
      break;
    if (t >= next_flush) {
      if (campaign__flush_tallies(k) != 0) {
        ex = -1;
        break;
      }
      next_flush = t + 1.0;
    }
    if (t >= next_report) {
      if (show)
        progress(k, 0);
      if (jobs == 1)
        write_state(k, 1, slots, t - k->t0);
      next_report = t + period;
    }
    int n = B, ngen;
    if (max_cases > 0 && max_cases - k->st.cases < n)
      n = (int)(max_cases - k->st.cases);
    /* the matrix's configurations in turn, batch by batch, across the workers */
    long turn = (long)(k->c.nshards > 1 ? k->c.shard : 0) +
                (long)nshards(k) * ((long)w + (long)jobs * k->nbatch);
    int conf = k->c.nmatrix > 0 ? (int)(turn % k->c.nmatrix) : 0;
    k->nbatch++;
    ex = gen_batch(k, w, jobs, &next, n, cases, es, cp, &ngen);
    if (ex == 0)
      ex = check_batch(k, conf, cases, es, cp, n, res);
    if (ex == 0)
      ex = record_batch(k, conf, cases, es, n, res);
    for (int j = 0; j < ngen; j++) {
      oracle_expected_free(es[j]);
      es[j] = NULL;
      gen_case_free(&cases[j]);
    }
    if (ex == 0) {
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
      memcpy(me->executed_per, k->executed_per, sizeof me->executed_per);
      memcpy(me->conf, k->conf, sizeof me->conf);
      me->matrix_checked = k->st.matrix_checked;
      me->matrix_differ = k->st.matrix_differ;
    }
  }
  af_free(cases);
  af_free(es);
  af_free(cp);
  af_free(res);
  if (campaign__flush_tallies(k) != 0)
    ex = -1;
  return ex;
}

/* Worker w of a forked campaign: its share of the cases, its own database connection. Ends
 * the process: 0 (no failing case), 1 (some), 4 (an error), read by workers_wait. */
static void worker(Campaign *k, Slot *slots, int w, int jobs) {
  long max_cases = k->c.max_cases;
  if (max_cases > 0) { /* the workers share the case count */
    max_cases = max_cases / jobs + (w < max_cases % jobs ? 1 : 0);
    if (max_cases == 0)
      _exit(0);
  }
  AfErr err = {0};
  if (k->c.db_path && store_open(k->c.db_path, 0, &k->db, &err)) {
    campaign__problem(k, "worker %d: %s", w, err.msg);
    _exit(4);
  }
  int ex = loop(k, slots, w, jobs, max_cases, 0);
  for (int i = 0; i < k->nsigs; i++)
    if (!k->sigs[i].f.suppressed)
      campaign__write_info(k, &k->sigs[i]);
  store_close(k->db);
  fflush(NULL);
  _exit(ex != 0 ? 4 : k->st.failures > 0 ? 1 : 0);
}

/* The run's cases per configuration into the database. -1 when it cannot be written. */
static int config_counts(Campaign *k, Store *db) {
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

/* The parent of workers: the status line from their counters, SIGTERM passed on, the resume
 * state, and the totals (per-signature details are in the database and failures/). */
static int workers_wait(Campaign *k, const pid_t *pids, int started, int jobs, Slot *sl,
                        CampaignResult *res) {
  int alive = started, forwarded = 0, failed = started < jobs;
  int status[256] = {0}, reaped[256] = {0};
  k->t0 = campaign__now();
  while (alive > 0) {
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    if (stopped(k) && !forwarded) { /* SIGINT reached the workers too; SIGTERM may have not */
      for (int i = 0; i < started; i++)
        if (!reaped[i])
          kill(pids[i], SIGTERM);
      forwarded = 1;
    }
    for (int i = 0; i < started; i++) {
      int st;
      if (!reaped[i] && waitpid(pids[i], &st, WNOHANG) == pids[i]) {
        reaped[i] = 1;
        alive--;
        status[i] = WIFEXITED(st) ? WEXITSTATUS(st) : 4;
      }
    }
    int navoid = k->st.navoid;
    memset(&k->st, 0, sizeof k->st);
    k->st.navoid = navoid;
    k->nsigs = -1;
    for (int i = 0; i < jobs; i++) {
      k->st.cases += sl[i].cases;
      k->st.failures += sl[i].failures;
      k->st.new_findings += sl[i].new_findings;
      k->st.known_hits += sl[i].known_hits;
      k->st.corpus += sl[i].corpus;
      k->st.differ_cases += sl[i].differ;
      k->st.executed += sl[i].executed;
      k->st.avoided += sl[i].avoided;
      k->st.matrix_checked += sl[i].matrix_checked;
      k->st.matrix_differ += sl[i].matrix_differ;
    }
    memset(k->conf, 0, sizeof k->conf);
    for (int i = 0; i < jobs; i++)
      for (int c = 0; c < k->c.nmatrix; c++) {
        k->conf[c].cases += sl[i].conf[c].cases;
        k->conf[c].executed += sl[i].conf[c].executed;
        k->conf[c].failures += sl[i].conf[c].failures;
      }
    memset(k->executed_per, 0, sizeof k->executed_per);
    for (int i = 0; i < jobs; i++)
      for (int l = 0; l < k->c.nspecs; l++)
        k->executed_per[l] += sl[i].executed_per[l];
    progress(k, alive == 0);
    write_state(k, jobs, sl, campaign__now() - k->t0);
  }
  double el = campaign__now() - k->t0;
  for (int i = 0; i < started; i++)
    failed |= status[i] != 0 && status[i] != 1;
  res->db_findings = -1;
  if (k->c.db_path) {
    Store *db;
    AfErr err = {0};
    if (store_open(k->c.db_path, 0, &db, &err) == 0) {
      store_run_end(db, k->run_id, k->st.cases, k->st.executed, el, &err);
      if (config_counts(k, db) != 0)
        failed = 1;
      store_run_findings(db, k->run_id, &res->db_findings, &err);
      store_close(db);
    } else {
      campaign__problem(k, "%s", err.msg);
      failed = 1;
    }
  }
  k->nsigs = 0; /* the workers' signatures are in the database and under failures/ */
  if (write_summary(k, el) != 0) {
    campaign__problem(k, "cannot write %s/summary.json", k->c.out);
    failed = 1;
  }
  k->st.elapsed = el;
  res->workers = started;
  return failed;
}

/* This process alone: the loop, then info.txt, the summary and the database's totals. */
static int run_here(Campaign *k, Slot *slots, CampaignResult *res) {
  AfErr err = {0};
  int failed = loop(k, slots, 0, 1, k->c.max_cases, 1) != 0;
  double el = campaign__now() - k->t0;
  if (k->db && store_run_end(k->db, k->run_id, k->st.cases, k->st.executed, el, &err) != 0) {
    campaign__problem(k, "%s", err.msg);
    failed = 1;
  }
  if (k->db && config_counts(k, k->db) != 0)
    failed = 1;
  write_state(k, 1, slots, el);
  progress(k, 1);
  for (int i = 0; i < k->nsigs; i++)
    if (!k->sigs[i].f.suppressed && campaign__write_info(k, &k->sigs[i]) != 0)
      failed = 1;
  if (write_summary(k, el) != 0) {
    campaign__problem(k, "cannot write %s/summary.json", k->c.out);
    failed = 1;
  }
  k->st.elapsed = el;
  res->db_findings = -1;
  if (k->db && store_run_findings(k->db, k->run_id, &res->db_findings, &err) != 0)
    res->db_findings = -1;
  return failed;
}

int campaign_run(Campaign *k, const CampaignHooks *hooks, CampaignResult *res, AfErr *err) {
  memset(res, 0, sizeof *res);
  k->hooks = hooks;
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
  if (jobs > 1) {
    store_close(k->db); /* a connection does not survive fork: each process opens its own */
    k->db = NULL;
    pid_t pids[256];
    int started = 0;
    for (; started < jobs; started++) {
      fflush(NULL);
      pid_t pid = fork();
      if (pid < 0)
        break;
      if (pid == 0)
        worker(k, slots, started, jobs); /* does not return */
      pids[started] = pid;
    }
    failed = workers_wait(k, pids, started, jobs, slots, res);
  } else {
    failed = run_here(k, slots, res);
  }
  munmap(slots, sizeof(Slot) * (size_t)jobs);
  af_free(k->found);
  k->found = af_calloc((size_t)(k->nsigs > 0 ? k->nsigs : 1), sizeof *k->found);
  if (k->found == NULL)
    return af_err_set(err, AF_ENOMEM, "out of memory");
  for (int i = 0; i < k->nsigs; i++)
    k->found[i] = k->sigs[i].f;
  res->st = k->st;
  res->st.signatures = jobs > 1 ? -1 : k->nsigs;
  res->stopped = stopped(k);
  res->findings = k->found;
  res->nfindings = k->nsigs > 0 ? k->nsigs : 0;
  res->differ = k->differ;
  res->ndiffer = k->ndiffer;
  res->conf = k->conf;
  res->failed = failed;
  return 0;
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
  k->batch = any_mlir ? cfg->batch : 1;
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
    rc = resume_state(k, err);
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
  af_free(k->found);
  af_free(k);
}
