/*
 * record.c: a failing case recorded (campaign_int.h). A new signature is re-run for its
 * reproduction rate, saved under DIR/failures/<hash>/ with info.txt and its replay commands,
 * stored in the database with its case, and reduced; a repeat is counted, and stored one by
 * one only for the first few per run (the rest are tallied and committed once a second).
 */
#include "campaign_int.h"

#include "../lower/mlir.h"
#include "../reduce/reduce.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int save_case(Campaign *k, const Sig *s, const GenCase *c, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/failures/%s/%s", k->c.out, s->f.dir, name);
  AfErr err = {0};
  if (gen_case_save(c, path, &err)) {
    campaign__problem(k, "%s", err.msg);
    return -1;
  }
  return 0;
}

/* The trace of the run just made (builtin lowering: the runtime's), around its first error. */
static char *trace_excerpt(const Verdict *v) {
  int n;
  asyncfuzz_rt_trace(&n);
  AfBuf b;
  af_buf_init(&b);
  int at = v->error_seq >= 0 ? v->error_seq : 0;
  int from = at > 20 ? at - 20 : 0, to = at + 20 < n ? at + 20 : n;
  if (n > 0) {
    if (from > 0)
      af_buf_printf(&b, "... (%d records before)\n", from);
    asyncfuzz_rt_format_trace(&b, from, to);
    if (to < n)
      af_buf_printf(&b, "... (%d records after)\n", n - to);
  }
  return af_buf_take(&b);
}

/* One occurrence into the database (one transaction); with_case: store the case too (it is
 * the finding's first or smallest). Returns -1 when the database cannot be written. */
static int db_record(Campaign *k, Sig *sig, const GenCase *c, const Schedule *s, const Verdict *v,
                     int with_case) {
  if (k->db == NULL)
    return 0;
  const LowerSpec *spec = campaign_spec(&k->c, sig->f.low);
  CheckRecord r;
  StoreOccurrence o;
  AfErr err = {0};
  if (check_record(&r, &o, c, spec, v, s, &k->c.opts, with_case)) {
    campaign__problem(k, "out of memory");
    return -1;
  }
  char replay[4096 + GEN_CONFIG_ARGS_MAX], knobs[GEN_CONFIG_ARGS_MAX], check[4096], *trace = NULL;
  gen_config_args(&c->cfg, knobs, sizeof knobs);
  snprintf(replay, sizeof replay, "asyncfuzz gen --seed %llu %s -o case.json && %s",
           (unsigned long long)c->seed, knobs,
           check_replay(check, sizeof check, CHECK_REPLAY_CHECK, "case.json", spec, s, &k->c.opts));
  Verdict again;
  if (with_case && spec->kind != LOWER_MLIR_OPT && sig->f.count == 1 && /* once more */
      check_run_once(c, spec, s, &k->c.opts, NULL, &again, &err) == 0)
    trace = trace_excerpt(&again);
  o.trace = trace ? trace : (sig->f.count == 1 ? v->detail : NULL);
  o.replay = replay;
  o.repro_runs = sig->repro_runs;
  o.repro_hits = sig->repro_hits;
  int is_new, status;
  double t0 = campaign__now();
  int rc = store_record(k->db, k->run_id, &o, &is_new, &status, &err);
  k->st.time[CAMPAIGN_T_DB] += campaign__now() - t0;
  if (rc == 0 && is_new) {
    k->st.new_findings++;
    sig->db_new = 1;
  }
  if (rc == 0)
    sig->exact++;
  check_record_free(&r);
  af_free(trace);
  if (rc) {
    campaign__problem(k, "%s", err.msg);
    return -1;
  }
  return 0;
}

/* Commits the repeats counted since the last call, in one transaction. -1 on error. */
int campaign__flush_tallies(Campaign *k) {
  if (k->db == NULL)
    return 0;
  int nt = 0;
  for (int i = 0; i < k->nsigs; i++)
    nt += k->sigs[i].nforms;
  StoreTally *t = af_calloc((size_t)(nt ? nt : 1), sizeof *t);
  if (t == NULL)
    return -1;
  int n = 0;
  for (int i = 0; i < k->nsigs; i++) {
    Sig *g = &k->sigs[i];
    const LowerSpec *spec = campaign_spec(&k->c, g->f.low);
    for (int j = 0; j < g->nforms; j++) {
      if (g->forms[j].pending == 0)
        continue;
      t[n].signature = g->f.signature;
      t[n].detailed = g->forms[j].detailed;
      t[n].lowering = spec->name;
      t[n].lowering_version = lower_version(spec);
      t[n].pipeline = spec->kind == LOWER_MLIR_OPT ? spec->pipeline : "";
      t[n].backend = check_backend_name(&k->c.opts);
      t[n++].hits = g->forms[j].pending;
    }
  }
  AfErr err = {0};
  double t0 = campaign__now();
  int rc = store_tally(k->db, k->run_id, t, n, &err);
  k->st.time[CAMPAIGN_T_DB] += campaign__now() - t0;
  af_free(t);
  if (rc) {
    campaign__problem(k, "%s", err.msg);
    return -1;
  }
  for (int i = 0; i < k->nsigs; i++)
    for (int j = 0; j < k->sigs[i].nforms; j++)
      k->sigs[i].forms[j].pending = 0;
  return 0;
}

/* The form of verdict v under sig, counted once more; NULL when out of memory. */
static Form *count_form(Sig *sig, const Verdict *v) {
  const char *d = v->victim[0] ? v->victim : v->signature;
  for (int j = 0; j < sig->nforms; j++)
    if (strcmp(sig->forms[j].detailed, d) == 0) {
      sig->forms[j].count++;
      return &sig->forms[j];
    }
  if (af_grow((void **)&sig->forms, &sig->capforms, sig->nforms + 1, sizeof(Form)))
    return NULL;
  Form *f = &sig->forms[sig->nforms++];
  memset(f, 0, sizeof *f);
  snprintf(f->detailed, sizeof f->detailed, "%s", d);
  f->count = 1;
  return f;
}

/* Whether the database holds a minimized case for sig (an earlier run reduced it) that still
 * gives sig (t: the reducer's test): then *out is it, and the finding is not reduced again (a
 * nightly campaign would otherwise spend its reduction budget on the same known bugs every night).
 */
static int known_minimized(Campaign *k, const Sig *sig, CheckSigTest *t, GenCase *out) {
  char *json = NULL;
  AfErr err = {0};
  if (k->db == NULL || store_minimized_case(k->db, sig->f.signature, &json, &err) != 0 ||
      json == NULL)
    return 0;
  int ok = gen_case_from_json(out, json, &err) == 0;
  af_free(json);
  if (!ok || check_signature_test(out, t) != 1) { /* (as the reducer tests its candidates) */
    gen_case_free(out);
    return 0;
  }
  return 1;
}

/* Reduces a new finding's first case (or takes the minimized case the database holds for it,
 * where it still gives the finding); writes minimized.json and reproducer.mlir next to it and
 * stores both on the finding. A reduction that fails is reported and skipped. */
static int reduce_finding(Campaign *k, Sig *sig, const GenCase *c, const Schedule *s, GenCase *min,
                          int *have_min) {
  const LowerSpec *spec = campaign_spec(&k->c, sig->f.low);
  *have_min = 0;
  if (k->c.reduce == 0 || (k->deadline > 0 && campaign__now() >= k->deadline))
    return 0;
  CheckSigTest t = {spec, s, 1, k->c.opts, sig->f.signature};
  GenCase out;
  ReduceStats st;
  AfErr err = {0};
  double until = k->deadline; /* the campaign's end, or sooner: --reduce-seconds per finding */
  if (k->c.reduce_seconds > 0 && (until <= 0 || campaign__now() + k->c.reduce_seconds < until))
    until = campaign__now() + k->c.reduce_seconds;
  ReduceOpts ro = {NULL, 1, 1, until};
  if (spec->kind == LOWER_MLIR_OPT) { /* candidates batched through one mlir-opt process */
    ro.batch_test = check_signature_test_many;
    ro.batch = 16;
  }
  if (known_minimized(k, sig, &t, &out)) {
    memset(&st, 0, sizeof st); /* (the database's: reduced by an earlier run) */
  } else if (reduce_case_opts(c, check_signature_test, &t, &ro, &out, &st, &err) != 0) {
    campaign__problem(k, "reducing %s: %s", sig->f.signature, err.msg);
    gen_case_free(&out);
    return 0;
  }
  Verdict v;
  char path[4096], rel[4200];
  int rc = check_run_once(&out, spec, s, &k->c.opts, NULL, &v, &err);
  snprintf(path, sizeof path, "%s/failures/%s/minimized.json", k->c.out, sig->f.dir);
  snprintf(rel, sizeof rel, "%s", path);
  char *mlir = rc == 0 ? check_reproducer(&out, spec, s, &v, &k->c.opts, rel) : NULL;
  char *json = gen_case_to_json(&out);
  if (rc == 0 && mlir && json && gen_case_save(&out, path, &err) == 0) {
    char mp[4096];
    snprintf(mp, sizeof mp, "%s/failures/%s/reproducer.mlir", k->c.out, sig->f.dir);
    FILE *f = fopen(mp, "w");
    if (f) {
      fputs(mlir, f);
      fclose(f);
    }
    sig->min_ops = out.nops;
    sig->min_partial = st.stopped;
    sig->min_holds = gen_case_forms_held(&out);
    if (k->db &&
        store_set_minimized(k->db, sig->f.signature, json, mlir, out.seed, out.nops, &err) != 0) {
      campaign__problem(k, "%s", err.msg);
      rc = -1;
    }
  }
  af_free(json);
  af_free(mlir);
  if (rc == 0 && sig->min_ops > 0) {
    *min = out; /* the caller's */
    *have_min = 1;
  } else {
    gen_case_free(&out);
  }
  return rc == 0 ? 0 : -1;
}

/* A lowering finding named by an op on a view ("gpu.memset async deps=2+ view"), on a buffer
 * in a memory space ("... space") or on a ranked memref ("... ranked") keeps the word in its name
 * only if it matters, and one by a gpu.launch the pipeline outlined is named as the gpu.launch_func
 * it became where that fails the same way (check_view_free). The first time a signature of that
 * form comes, the case is run again with every view dropped: if it fails with the same name less "
 * view", that name is the finding, and the view-free case its case (*plain, *pv); later occurrences
 * of the view form count as it (their cases keep their views). Returns 1 when v is renamed (into
 * *pv), 0 when not (also when the run again fails: the name stays as it came), -1 out of memory. */
static int view_alias(Campaign *k, int low, const GenCase *c, const Schedule *s, const Verdict *v,
                      GenCase *plain, int *have_plain, Verdict *pv) {
  if ((!oracle_verdict_names_shape(v->cls) && v->cls != VERDICT_RUNTIME_ERROR) ||
      (!strstr(v->signature, " view") && !strstr(v->signature, " space") &&
       !strstr(v->signature, " ranked") && !strstr(v->signature, "|gpu.launch ")))
    return 0;
  for (int i = 0; i < k->nalias; i++)
    if (strcmp(k->alias[i].from, v->signature) == 0) {
      if (!k->alias[i].to[0])
        return 0;
      *pv = *v;
      snprintf(pv->signature, sizeof pv->signature, "%s", k->alias[i].to);
      if (strcmp(v->victim, v->signature) == 0)
        snprintf(pv->victim, sizeof pv->victim, "%s", k->alias[i].to);
      return 1;
    }
  if (af_grow((void **)&k->alias, &k->capalias, k->nalias + 1, sizeof *k->alias)) {
    campaign__problem(k, "out of memory");
    return -1;
  }
  struct ViewAlias *a = &k->alias[k->nalias++];
  snprintf(a->from, sizeof a->from, "%s", v->signature);
  a->to[0] = '\0';
  AfErr err = {0};
  int rc = check_view_free(c, campaign_spec(&k->c, low), s, &k->c.opts, v, plain, pv, &err);
  if (rc < 0)
    campaign__problem(k, "running %s with no views: %s (the name keeps the view)", v->signature,
                      err.msg);
  if (rc == 1) {
    snprintf(a->to, sizeof a->to, "%s", pv->signature);
    *have_plain = 1;
  }
  return rc == 1;
}

static int record_one(Campaign *k, int low, const GenCase *c, const Schedule *s, const Verdict *v,
                      const OracleExpected *e, int alias);

/* Records a failure; returns -1 when output cannot be written. */
int campaign__record(Campaign *k, int low, const GenCase *c, const Schedule *s, const Verdict *v,
                     const OracleExpected *e) {
  GenCase plain;
  Verdict pv;
  int have_plain = 0;
  /* (the checks of its variants and reductions: features of the campaign, not of this case) */
  af_feat_pause(1);
  int alias = view_alias(k, low, c, s, v, &plain, &have_plain, &pv);
  af_feat_pause(0);
  if (alias < 0)
    return -1;
  k->st.failures++;
  af_feat_add(AF_FEAT_SIGNATURE, v->signature, strlen(v->signature));
  for (int i = 0; i < v->nalso; i++)
    af_feat_add(AF_FEAT_SIGNATURE, v->also[i].signature, strlen(v->also[i].signature));
  af_feat_pause(1);
  int rc = alias ? record_one(k, low, have_plain ? &plain : c, s, &pv, have_plain ? NULL : e,
                              !have_plain)
                 : record_one(k, low, c, s, v, e, 0);
  af_feat_pause(0);
  if (have_plain)
    gen_case_free(&plain);
  /* each independent cause of the run counts under its own finding */
  for (int i = 0; rc == 0 && i < v->nalso; i++) {
    Verdict *x = af_malloc(sizeof *x);
    if (x == NULL) {
      campaign__problem(k, "out of memory");
      return -1;
    }
    *x = *v;
    x->cls = v->also[i].cls;
    snprintf(x->signature, sizeof x->signature, "%s", v->also[i].signature);
    snprintf(x->victim, sizeof x->victim, "%s", v->also[i].victim);
    snprintf(x->detail, sizeof x->detail, "(beside the run's headline cause %.200s)\n%.700s",
             v->signature, v->detail);
    af_feat_pause(1);
    rc = record_one(k, low, c, s, x, e, 0);
    af_feat_pause(0);
    af_free(x);
  }
  return rc;
}

/* A signature seen for the first time in this process: its entry (NULL out of memory). */
static Sig *new_sig(Campaign *k, int low, const GenCase *c, const Schedule *s, const Verdict *v) {
  if (af_grow((void **)&k->sigs, &k->capsigs, k->nsigs + 1, sizeof(Sig)))
    return NULL;
  Sig *sig = &k->sigs[k->nsigs++];
  memset(sig, 0, sizeof *sig);
  sig->f.low = low;
  sig->seen_confs = campaign__conf_bit(k, low);
  sig->knobs = c->cfg;
  snprintf(sig->f.signature, sizeof sig->f.signature, "%s", v->signature);
  snprintf(sig->detail, sizeof sig->detail, "%s", v->detail);
  sig->f.cls = v->cls;
  sig->first_seed = sig->smallest_seed = c->seed;
  sig->first_sched = sig->f.smallest_sched = *s;
  sig->f.smallest_ops = c->nops;
  sig->f.holds = gen_case_forms_held(c);
  sig->first_at = campaign__now() - k->t0;
  snprintf(sig->f.dir, sizeof sig->f.dir, "%016llx",
           (unsigned long long)af_hash64(v->signature, strlen(v->signature)));
  return count_form(sig, v) ? sig : NULL;
}

/* A divergence is re-run and must give the same signature before it is trusted: the failing
 * schedule, then other seeds of its policy, give the reproduction rate. */
static void repro_rate(Campaign *k, Sig *sig, const GenCase *c, const Schedule *s, const Verdict *v,
                       const OracleExpected *e) {
  int runs = k->c.repro > 0 ? k->c.repro : 1;
  Schedule rs[CHECK_MAX_SCHED];
  for (int j = 0; j < runs && j < CHECK_MAX_SCHED; j++) {
    rs[j] = *s;
    if (j > 0)
      rs[j].seed = af_mix64(s->seed, (uint64_t)j);
  }
  if (runs > CHECK_MAX_SCHED)
    runs = CHECK_MAX_SCHED;
  CheckResult *again = af_malloc(sizeof *again);
  CheckOpts ro = k->c.opts;
  ro.stop_at_first = 0;
  AfErr err = {0};
  if (again &&
      check_case(c, campaign_spec(&k->c, sig->f.low), rs, runs, e, &ro, again, &err) == 0) {
    sig->repro_runs = again->nsched;
    for (int j = 0; j < again->nsched; j++)
      sig->repro_hits += oracle_verdict_has(&again->verdict[j], v->signature);
    if (again->nsched > 0 && !oracle_verdict_has(&again->verdict[0], v->signature))
      sig->flaky = 1;
  }
  af_free(again);
}

/* A crash: the forms its (minimized) case c needs, for its info.txt and its steering. */
static void crash_forms(Campaign *k, Sig *sig, const GenCase *c, const Schedule *s,
                        const Verdict *v) {
  if (v->cls != VERDICT_LOWERING_CRASH && v->cls != VERDICT_JIT_CRASH)
    return;
  AfErr err = {0};
  Verdict cv = *v; /* (by the finding's name) */
  snprintf(cv.signature, sizeof cv.signature, "%s", sig->f.signature);
  if (check_crash_forms(c, campaign_spec(&k->c, sig->f.low), s, &k->c.opts, &cv, &sig->need,
                        sig->needs, sizeof sig->needs, &err) < 0)
    campaign__problem(k,
                      "running %s without the forms its case holds: %s (it steers by its "
                      "case's structure)",
                      sig->f.signature, err.msg);
}

/* A new finding (sig just made): counted when triaged already, else re-run, saved under
 * failures/, stored, reduced and run on every configuration of the matrix. */
static int record_new(Campaign *k, Sig *sig, const GenCase *c, const Schedule *s, const Verdict *v,
                      const OracleExpected *e) {
  AfErr err = {0};
  int st = -1;
  if (k->db && store_finding_status(k->db, v->signature, &st, &err) != 0) {
    campaign__problem(k, "%s", err.msg);
    return -1;
  }
  if (st == STORE_KNOWN || st == STORE_WONTFIX) {
    sig->f.suppressed = 1; /* triaged already: counted, not reported */
    sig->f.count = 1;
    k->st.known_hits++;
    return db_record(k, sig, c, s, v, 0);
  }
  repro_rate(k, sig, c, s, v, e);
  if (st < 0 && k->db == NULL)
    k->st.new_findings++; /* with a database, store_record says whether it is new to it */
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/failures/%s", k->c.out, sig->f.dir);
  if (campaign__mkdir_p(dir) != 0) {
    campaign__problem(k, "cannot create %s: %s", dir, strerror(errno));
    return -1;
  }
  sig->f.count = 1;
  if (save_case(k, sig, c, "first.json") || save_case(k, sig, c, "smallest.json") ||
      campaign__write_info(k, sig)) {
    campaign__problem(k, "cannot write the failure to %s", dir);
    return -1;
  }
  k->st.corpus += 2;
  GenCase min;
  int have_min = 0;
  if (db_record(k, sig, c, s, v, 1) != 0)
    return -1;
  double t0 = campaign__now();
  int red = reduce_finding(k, sig, c, s, &min, &have_min);
  if (red == 0)
    crash_forms(k, sig, have_min ? &min : c, s, v);
  k->st.time[CAMPAIGN_T_REDUCE] += campaign__now() - t0;
  if (red != 0)
    return -1;
  if (sig->min_ops > 0)
    k->st.corpus++;
  /* on every configuration once (another worker, or an earlier run, did it already), with the
   * batch's other new findings when the batch is done; steered from then on where it
   * reproduces (matrix.c) */
  int rc = 0;
  if (k->c.nmatrix > 0 && sig->f.low >= k->c.nspecs && (k->db == NULL || sig->db_new))
    rc = campaign__matrix_queue(k, (int)(sig - k->sigs), have_min ? &min : c, s);
  else
    campaign__steer_found(k, sig, have_min ? &min : c, NULL, NULL);
  if (have_min)
    gen_case_free(&min);
  return rc != 0 ? -1 : campaign__write_info(k, sig);
}

/* A repeat of sig: counted (the first ones per run one by one, later ones tallied); a smaller
 * case becomes the smallest unless it fails with the view form of the name only (alias). */
static int record_repeat(Campaign *k, int low, Sig *sig, const GenCase *c, const Schedule *s,
                         const Verdict *v, int alias) {
  sig->f.count++;
  sig->seen_confs |= campaign__conf_bit(k, low);
  campaign__steer_recurred(k, sig, low, v, c);
  Form *form = count_form(sig, v);
  if (form == NULL) {
    campaign__problem(k, "out of memory");
    return -1;
  }
  if (sig->f.suppressed) {
    k->st.known_hits++;
    form->pending++;
    return 0;
  }
  int smaller = c->nops < sig->f.smallest_ops && !alias;
  if (smaller || sig->exact < DB_EXACT_PER_RUN) {
    if (db_record(k, sig, c, s, v, smaller))
      return -1;
  } else {
    form->pending++; /* a repeat: tallied, committed by flush_tallies */
  }
  if (smaller) {
    sig->f.smallest_ops = c->nops;
    sig->f.holds = gen_case_forms_held(c);
    sig->smallest_seed = c->seed;
    sig->f.smallest_sched = *s;
    sig->knobs = c->cfg;
    if (save_case(k, sig, c, "smallest.json") || campaign__write_info(k, sig))
      return -1;
  }
  return 0;
}

/* alias: c fails with the view form of v's name (its case is not the finding's smallest). */
static int record_one(Campaign *k, int low, const GenCase *c, const Schedule *s, const Verdict *v,
                      const OracleExpected *e, int alias) {
  for (int i = 0; i < k->nsigs; i++)
    if (strcmp(k->sigs[i].f.signature, v->signature) == 0)
      return record_repeat(k, low, &k->sigs[i], c, s, v, alias);
  Sig *sig = new_sig(k, low, c, s, v);
  if (sig == NULL) {
    campaign__problem(k, "out of memory");
    return -1;
  }
  return record_new(k, sig, c, s, v, e);
}
