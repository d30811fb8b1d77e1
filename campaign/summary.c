/*
 * summary.c: what a campaign reports: the lowerings' differences case by case, DIR/summary.json
 * (totals, configurations and signatures at the end) and the text the command prints.
 */
#include "campaign_int.h"

#include "../lower/mlir.h"

#include <string.h>

static void json_esc(FILE *f, const char *s) {
  AfBuf b;
  af_buf_init(&b);
  af_buf_json_str(&b, s);
  fputs(b.p ? b.p : "\"\"", f);
  af_buf_free(&b);
}

/* ", "by": [[ENTRY, SIGNATURE, TRIGGER], ...]": each entry of a (configuration conf's steering)
 * by the findings it came from, with the case that made it steer there (failures/DIR/steered-
 * CONF.json; "" for a known finding: the database has its cases). */
static void steering_by(FILE *f, const Campaign *k, int conf, const GenAvoid *a) {
  fprintf(f, ", \"by\": [");
  char w[96], name[200], trig[300];
  campaign__trigger_name(k, conf, name, sizeof name);
  int bit = conf >= 0 && conf < 64 ? conf : 0, n = 0;
  for (int i = 0; i < gen_avoid_count(a); i++) {
    gen_avoid_text(a, i, w, sizeof w);
    const char *sig;
    for (int j = 0; (sig = campaign__steered_by(k, conf, w, j)) != NULL; j++) {
      trig[0] = '\0';
      for (int s = 0; s < k->nsigs; s++)
        if (strcmp(k->sigs[s].f.signature, sig) == 0 && ((k->sigs[s].trigger_confs >> bit) & 1))
          snprintf(trig, sizeof trig, "failures/%s/steered-%s.json", k->sigs[s].f.dir, name);
      fprintf(f, "%s[", n++ ? ", " : "");
      json_esc(f, w);
      fprintf(f, ", ");
      json_esc(f, sig);
      fprintf(f, ", ");
      json_esc(f, trig);
      fprintf(f, "]");
    }
  }
  fprintf(f, "]");
}

/* ", "steering": {"avoid": [...], "gen_args": "--avoid '...' ..."}, "mix": {...}": what
 * configuration conf (-1: every case, no matrix) is generated without, as asyncfuzz gen takes
 * it, and the GPU work its executed cases held against unsteered generation. */
static void summary_steering(FILE *f, const Campaign *k, int conf, const CampaignConfCount *cc) {
  GenAvoid a;
  campaign__steering(k, conf, &a);
  char args[GEN_MAX_AVOID * 2 * 80] = "", w[96];
  size_t len = 0;
  fprintf(f, ", \"steering\": {\"avoid\": [");
  for (int i = 0; i < gen_avoid_count(&a); i++) {
    gen_avoid_text(&a, i, w, sizeof w);
    fprintf(f, "%s", i ? ", " : "");
    json_esc(f, w);
    int n = snprintf(args + len, sizeof args - len, "%s--avoid '%s'", i ? " " : "", w);
    len += n > 0 && (size_t)n < sizeof args - len ? (size_t)n : 0;
  }
  fprintf(f, "], \"gen_args\": ");
  json_esc(f, args);
  steering_by(f, k, conf, &a);
  fprintf(f, "}, \"mix\": {");
  for (int i = 0; i < GEN_GPU_MIX__COUNT; i++)
    fprintf(f, "%s\"%s\": {\"executed\": %ld, \"executed_share\": %.4f, \"unsteered_share\": %.4f}",
            i ? ", " : "", gen_gpu_mix_name(i), cc->mix[i],
            cc->executed > 0 ? (double)cc->mix[i] / (double)cc->executed : 0.0,
            cc->base_cases > 0 ? (double)cc->base_mix[i] / (double)cc->base_cases : 0.0);
  fprintf(f, "}, \"forms\": {");
  for (int i = 0; i < GEN_FORM__COUNT; i++)
    fprintf(f, "%s\"%s\": [%ld, %ld]", i ? ", " : "", gen_form_name(i), cc->forms[i],
            cc->forms_executed[i]); /* (no "cases" key: scripts read the run's by it) */
  fprintf(f, "}");
}

/* summary.json's version, lowerings and configurations. */
static void summary_lowerings(FILE *f, const Campaign *k) {
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
    fprintf(f, ", \"executed_cases\": %ld, \"lowering\": ", k->executed_per[i]);
    json_esc(f, sp->arg); /* (what --lowering takes) */
    fprintf(f, "}");
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
    long n = k->conf[i].cases;
    fprintf(f,
            ", \"cases\": %ld, \"executed_cases\": %ld, \"failing_cases\": %ld, "
            "\"executed_share\": %.4f, \"clean_share\": %.4f",
            n, k->conf[i].executed, k->conf[i].failures,
            n > 0 ? (double)k->conf[i].executed / (double)n : 0.0,
            n > 0 ? (double)(n - k->conf[i].failures) / (double)n : 0.0);
    fprintf(f, ", \"lowering\": "); /* (what check --lowering takes to run a case there) */
    json_esc(f, sp->arg);
    summary_steering(f, k, i, &k->conf[i]);
    fprintf(f, "}");
  }
}

/* ", "NAME": [i, ...]": the configurations of mask (indices into "configurations"). */
static void conf_list(FILE *f, const char *name, uint64_t mask, int n) {
  fprintf(f, ", \"%s\": [", name);
  for (int i = 0, first = 1; i < n && i < 64; i++)
    if ((mask >> i) & 1) {
      fprintf(f, "%s%d", first ? "" : ", ", i);
      first = 0;
    }
  fprintf(f, "]");
}

/* summary.json's entry of signature s (the i-th). */
static void summary_signature(FILE *f, const Campaign *k, const Sig *s, int i) {
  fprintf(f, "%s\n  {\"signature\": ", i ? "," : "");
  json_esc(f, s->f.signature);
  fprintf(f,
          ", \"class\": \"%s\", \"lowering\": \"%s\", \"count\": %ld, \"smallest_ops\": %d, "
          "\"dir\": \"failures/%s\", \"known\": %s",
          oracle_verdict_name(s->f.cls), campaign_spec(&k->c, s->f.low)->name, s->f.count,
          s->f.smallest_ops, s->f.dir, s->f.suppressed ? "true" : "false");
  if (s->min_ops > 0)
    fprintf(f, ", \"minimized_ops\": %d, \"reproducer\": \"failures/%s/reproducer.mlir\"",
            s->min_ops, s->f.dir);
  uint32_t holds = s->min_ops > 0 ? s->min_holds : s->f.holds;
  fprintf(f, ", \"holds\": [");
  for (int j = 0, n = 0; j < GEN_FORM__COUNT; j++)
    if (holds >> j & 1)
      fprintf(f, "%s\"%s\"", n++ ? ", " : "", gen_form_name(j));
  fprintf(f, "]");
  if (s->needs[0]) {
    fprintf(f, ", \"needs\": ");
    json_esc(f, s->needs);
  }
  if (s->f.matrix_n > 0) {
    fprintf(f,
            ", \"configurations\": {\"checked\": %d, \"reproduces\": %d, \"seconds\": %.3f, "
            "\"differ_by\": ",
            s->f.matrix_n, s->f.matrix_rep, s->f.matrix_seconds);
    json_esc(f, s->f.matrix_axes);
    fprintf(f, ", \"verdicts\": ");
    json_esc(f, s->matrix ? s->matrix : "");
    conf_list(f, "reproduces_on", s->repro_confs, k->c.nmatrix);
    conf_list(f, "seen_on", s->seen_confs, k->c.nmatrix);
    conf_list(f, "steers_on", k->c.avoid_found ? s->steer_confs : 0, k->c.nmatrix);
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

int campaign__write_summary(Campaign *k, double el) {
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/summary.json", k->c.out);
  FILE *f = campaign__open_atomic(path, tmp);
  if (f == NULL)
    return -1;
  summary_lowerings(f, k);
  fprintf(f, "],\n \"matrix_checked\": %ld, \"matrix_differ\": %ld", k->st.matrix_checked,
          k->st.matrix_differ);
  CampaignConfCount all = k->all; /* (the run's: executed by every lowering) */
  all.executed = k->st.executed;
  fprintf(f, ",\n \"all\": {\"cases\": %ld", k->st.cases);
  summary_steering(f, k, -1, &all);
  fprintf(f, "}");
  /* where the time went, in seconds (with workers, their process seconds together) */
  fprintf(f, ",\n \"time\": {");
  for (int i = 0; i < CAMPAIGN_T__COUNT; i++)
    fprintf(f, "%s\"%s\": %.3f", i ? ", " : "", campaign_time_name(i), k->st.time[i]);
  fprintf(f, "}");
  if (k->c.features) { /* distinct semantic features (base/feat.h), by kind */
    fprintf(f, ",\n \"features\": {\"total\": %ld", af_feat_count(-1));
    for (int i = 0; i < AF_FEAT__COUNT; i++)
      fprintf(f, ", \"%s\": %ld", af_feat_name(i), af_feat_count(i));
    fprintf(f, "}");
  }
  fprintf(f, ",\n \"backend\": \"%s\", \"device\": ", check_backend_name(&k->c.opts));
  json_esc(f, k->c.device);
  if (asyncfuzz_rt_backend_info(k->c.opts.backend)->gpu) /* (cases at once, per process) */
    fprintf(f, ", \"gpu_jobs\": %d", check_gpu_jobs(&k->c.opts));
  fprintf(f, ", \"schedules\": ");
  json_esc(f, k->c.sched_spec);
  fprintf(f,
          ", \"swarm\": %s, \"cases\": %ld, \"executed_cases\": %ld, \"seconds\": %.2f, "
          "\"failures\": %ld, \"device_error_cases\": %ld, \"steered_cases\": %ld, "
          "\"steered_from\": [",
          k->c.swarm ? "true" : "false", k->st.cases, k->st.executed, el, k->st.failures,
          k->st.device_errors, k->st.avoided);
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
  fprintf(f, "],\n \"timeline\": [");
  int w = TIMELINE_FIELDS + 3 * k->c.nmatrix;
  for (int i = 0; i < k->npoints; i++) {
    const long *p = k->timeline + (size_t)i * (size_t)w;
    fprintf(f,
            "%s\n  {\"seconds\": %.1f, \"cases\": %ld, \"executed\": %ld, \"failures\": %ld, "
            "\"findings\": %ld, \"signatures\": %ld",
            i ? "," : "", (double)p[0] / 10.0, p[1], p[2], p[3], p[4], p[5]);
    if (k->c.features)
      fprintf(f, ", \"features\": %ld", p[6]);
    if (k->c.nmatrix > 0) {
      fprintf(f, ", \"configurations\": [");
      for (int c = 0; c < k->c.nmatrix; c++)
        fprintf(f, "%s[%ld, %ld, %ld]", c ? ", " : "", p[TIMELINE_FIELDS + 3 * c],
                p[TIMELINE_FIELDS + 3 * c + 1], p[TIMELINE_FIELDS + 3 * c + 2]);
      fprintf(f, "]");
    }
    fprintf(f, "}");
  }
  fprintf(f, "],\n \"signatures\": [");
  for (int i = 0; i < k->nsigs; i++)
    summary_signature(f, k, &k->sigs[i], i);
  fprintf(f, "\n]}\n");
  return campaign__commit_file(f, tmp, path);
}

int campaign__write_features(Campaign *k) {
  char path[4096], tmp[4200];
  if (!k->c.features)
    return 0;
  snprintf(path, sizeof path, "%s/features.txt", k->c.out);
  FILE *f = campaign__open_atomic(path, tmp);
  if (f == NULL)
    return -1;
  if (af_feat_write(f) < 0) {
    fclose(f);
    remove(tmp);
    return -1;
  }
  return campaign__commit_file(f, tmp, path);
}

static int first_cls(const CheckResult *r) {
  return r->first_fail < 0 ? VERDICT_PASS : r->verdict[r->first_fail].cls;
}

void campaign__note_differ(Campaign *k, const CheckResult *const *res, uint64_t seed) {
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
  af_feat_add(AF_FEAT_DISAGREE, what, strnlen(what, sizeof what));
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

/* The lines after the status line: totals, signatures with their replay commands, the
 * differential counts and the database's. */
/* the summary's lines are at most this wide: they fit a terminal */
#define SUMMARY_WIDTH 100

/* One finding of the summary: its count, whether it is new, its cause (wrapped), its minimized
 * reproducer (else the smallest case) and where its matrix reproduces it. */
static void format_finding(AfBuf *b, const CampaignConfig *c, const CampaignFinding *g) {
  af_buf_printf(b, "  %6ld x %-5s ", g->count, g->suppressed ? "" : g->db_new ? "[new]" : "[seen]");
  af_buf_wrap(b, g->signature, 17, 11, SUMMARY_WIDTH);
  if (g->suppressed) {
    af_buf_puts(b, "\n           (known or wontfix in the database: counted only)\n");
    return;
  }
  char line[4400];
  if (g->min_ops > 0)
    snprintf(line, sizeof line, "minimized: %d ops%s, %s/failures/%s/reproducer.mlir", g->min_ops,
             g->min_partial ? " (cut short)" : "", c->out, g->dir);
  else
    snprintf(line, sizeof line, "not minimized: smallest case %d ops, %s/failures/%s/smallest.json",
             g->smallest_ops, c->out, g->dir);
  af_buf_puts(b, "\n           ");
  af_buf_wrap(b, line, 11, 13, SUMMARY_WIDTH);
  af_buf_puts(b, "\n");
  if (g->matrix_n > 0)
    af_buf_printf(b, "           reproduces on %d of %d configurations%s%s\n", g->matrix_rep,
                  g->matrix_n, g->matrix_axes[0] ? "; they differ by " : "", g->matrix_axes);
  if (g->holds) {
    char h[256];
    gen_forms_str(g->holds, h, sizeof h);
    af_buf_printf(b, "           holds: %s\n", h);
  }
}

/* Where the time went: each bucket's seconds and share, largest first (with workers, their
 * process seconds together). */
static void format_time(AfBuf *b, const CampaignStatus *st, int workers) {
  double sum = 0;
  int order[CAMPAIGN_T__COUNT];
  for (int i = 0; i < CAMPAIGN_T__COUNT; i++) {
    sum += st->time[i];
    order[i] = i;
  }
  if (sum <= 0)
    return;
  for (int i = 1; i < CAMPAIGN_T__COUNT; i++) /* (ten buckets: insertion sort) */
    for (int j = i; j > 0 && st->time[order[j]] > st->time[order[j - 1]]; j--) {
      int x = order[j];
      order[j] = order[j - 1];
      order[j - 1] = x;
    }
  char item[96];
  int col =
      snprintf(item, sizeof item, "time%s:", workers > 0 ? " (workers' process seconds)" : "");
  af_buf_puts(b, item);
  for (int i = 0; i < CAMPAIGN_T__COUNT; i++) { /* (a line break only between two items) */
    if (st->time[order[i]] < 0.05 && i >= 3)
      continue;
    int len = snprintf(item, sizeof item, "%s %.1f s (%.0f%%)", campaign_time_name(order[i]),
                       st->time[order[i]], 100.0 * st->time[order[i]] / sum);
    if (col + 2 + len > SUMMARY_WIDTH) {
      af_buf_puts(b, i ? ",\n " : "\n ");
      col = 1;
    } else if (i) {
      af_buf_puts(b, ",");
      col++;
    }
    af_buf_printf(b, " %s", item);
    col += len + 1;
  }
  af_buf_puts(b, "\n");
}

/* The line on campaign_recheck's verdicts ("" when it gave none). */
void campaign_format_recheck(AfBuf *b, const CampaignRecheck *x) {
  if (x->verdicts > 0)
    af_buf_printf(b,
                  "recheck: %d verdict(s) on %d configuration(s) for the database's %d finding(s) "
                  "that had none there: %d reproduce, %d pass every run, %d fail differently or "
                  "are refused by the lowering\n",
                  x->verdicts, x->configs, x->findings, x->reproduces, x->passes, x->differs);
  else
    af_buf_printf(b, "recheck: the database's %d finding(s) have verdicts on every configuration\n",
                  x->findings);
  if (x->unreadable > 0)
    af_buf_printf(b, "recheck: %d finding(s) whose case this asyncfuzz cannot read were left out\n",
                  x->unreadable);
}

void campaign_format_result(AfBuf *b, const CampaignConfig *c, const CampaignResult *r) {
  if (r->recheck.verdicts > 0)
    campaign_format_recheck(b, &r->recheck);
  const char *dbp = c->db_path;
  int any_mlir = 0;
  for (int i = 0; i < c->nspecs; i++)
    any_mlir |= c->specs[i].kind == LOWER_MLIR_OPT;
  const CampaignStatus *st = &r->st;
  double el = st->elapsed, rate = el > 0 ? (double)st->cases / el : 0.0;
  const char *how = r->stopped ? "stopped" : "done";
  if (r->workers > 0) {
    af_buf_printf(b, "campaign %s: %ld cases in %.1f s (%.1f cases/s) by %d workers, %ld failing\n",
                  how, st->cases, el, rate, r->workers, st->failures);
  } else {
    af_buf_printf(
        b, "campaign %s: %ld cases in %.1f s (%.1f cases/s), %ld failing, %d signature(s)%s\n", how,
        st->cases, el, rate, st->failures, r->nfindings, r->nfindings ? ":" : "");
    /* new to the database first, then the ones it had, then those triaged already */
    for (int pass = 0; pass < 3; pass++)
      for (int i = 0; i < r->nfindings; i++) {
        const CampaignFinding *g = &r->findings[i];
        if (pass != (g->suppressed ? 2 : g->db_new ? 0 : 1))
          continue;
        format_finding(b, c, g);
      }
    if (r->nfindings > 0)
      af_buf_printf(b,
                    "  (each finding's info.txt, beside it, has its replay command and trace)\n");
    if (c->nspecs > 1) {
      af_buf_printf(b, "differential: verdicts differ on %ld of %ld cases%s\n", st->differ_cases,
                    st->cases, r->ndiffer ? ":" : "");
      for (int i = 0; i < r->ndiffer; i++)
        af_buf_printf(b, "  %6ld x %s (first: case seed %llu)\n", r->differ[i].count,
                      r->differ[i].what, (unsigned long long)r->differ[i].first_seed);
    }
  }
  campaign_format_matrix(c, r, b);

  if (st->navoid > 0) {
    char line[300];
    snprintf(line, sizeof line,
             "steering: %ld of %ld case(s) built without what %d cause(s) known or found name "
             "(the rest: exploration)",
             st->avoided, st->cases, st->navoid);
    af_buf_wrap(b, line, 0, 2, SUMMARY_WIDTH);
    af_buf_puts(b, "\n");
  }
  if (st->device_errors > 0)
    af_buf_printf(b,
                  "device errors: %ld of %ld cases had a run whose device failed a call on "
                  "purpose (--fail-calls): not judged, not findings\n",
                  st->device_errors, st->cases);
  if (any_mlir)
    af_buf_printf(b, "reached execution: %ld of %ld cases (%.1f%%) with every lowering\n",
                  st->executed, st->cases,
                  st->cases > 0 ? 100.0 * (double)st->executed / (double)st->cases : 0.0);
  format_time(b, st, r->workers);
  if (dbp && r->db_findings >= 0) {
    char line[4400];
    snprintf(line, sizeof line,
             "database %s: %ld finding(s) in this run, %ld new to it, %ld occurrence(s) of known "
             "or wontfix findings (asyncfuzz db list --db %s)",
             dbp, r->db_findings, st->new_findings, st->known_hits, dbp);
    af_buf_wrap(b, line, 0, 2, SUMMARY_WIDTH);
    af_buf_puts(b, "\n");
  }
}

void campaign_format_start(AfBuf *b, const Campaign *k, const CampaignConfig *c, int resumed,
                           uint64_t seed) {
  af_buf_printf(b, "asyncfuzz campaign: %s", resumed ? "resumed; " : "");
  af_buf_printf(b, "lowering");
  for (int i = 0; i < c->nspecs; i++) {
    if (c->nmatrix > 0 && i == c->matrix_low) {
      af_buf_printf(b, "%s %s, a matrix of %d configurations (", i ? "," : "", c->specs[i].name,
                    c->nmatrix);
      for (int m = 0; m < c->nmatrix; m++)
        af_buf_printf(b, "%s%s", m ? " " : "", c->matrix[m].name);
      af_buf_printf(b, ")");
      continue;
    }
    af_buf_printf(b, "%s %s (%s)", i ? "," : "", c->specs[i].name, lower_version(&c->specs[i]));
  }
  if (c->nshards > 1)
    af_buf_printf(b, "; shard %d/%d", c->shard, c->nshards);
  af_buf_printf(b, "; backend %s, schedules %s, seed %llu, %ld %s%s, %d job(s), output %s\n",
                check_backend_name(&c->opts), c->sched_spec, (unsigned long long)seed,
                c->max_cases > 0 ? c->max_cases : c->seconds,
                c->max_cases > 0 ? "cases" : "seconds", c->swarm ? ", swarm" : "", c->jobs, c->out);
  char avoiding[2048] = "";
  if (k)
    campaign_avoiding(k, avoiding, sizeof avoiding);
  if (avoiding[0])
    af_buf_printf(b, "asyncfuzz %s: steering away from: %s\n", c->guided ? "fuzz" : "campaign",
                  avoiding);
}

const char *campaign_steer_text(const CampaignStatus *st, char *out, size_t n) {
  out[0] = '\0';
  if (st->navoid <= 0)
    return out;
  int w = snprintf(out, n, "  steered %ld (%d causes)", st->avoided, st->navoid);
  size_t len = w > 0 ? (size_t)w : 0;
  if (st->executed <= 0 || st->all.base_cases <= 0 || len >= n)
    return out;
  w = snprintf(out + len, n - len, "  kept");
  len += w > 0 ? (size_t)w : 0;
  for (int i = 0; i < GEN_GPU_MIX__COUNT && len < n; i++) {
    double b = (double)st->all.base_mix[i] / (double)st->all.base_cases;
    double e = (double)st->all.mix[i] / (double)st->executed;
    w = snprintf(out + len, n - len, " %s %.0f%%", gen_gpu_mix_name(i),
                 b > 0 ? 100.0 * e / b : 0.0);
    len += w > 0 ? (size_t)w : 0;
  }
  return out;
}

void campaign_format_progress(AfBuf *b, const CampaignStatus *k, int any_mlir) {
  double el = k->elapsed;
  af_buf_printf(b, "[%6.1fs] cases %ld (%.1f/s)  failures %ld", el, k->cases,
                el > 0 ? (double)k->cases / el : 0.0, k->failures);
  if (k->signatures >= 0) /* the parent of --jobs workers does not know their signatures */
    af_buf_printf(b, "  signatures %d", k->signatures);
  af_buf_printf(b, "  findings new %ld, known %ld hits  corpus %ld", k->new_findings, k->known_hits,
                k->corpus);
  if (k->nspecs > 1)
    af_buf_printf(b, "  differ %ld", k->differ_cases);
  if (k->nconfigs > 0)
    af_buf_printf(b, "  configs %d (%ld-%ld cases each)", k->nconfigs, k->conf_min, k->conf_max);
  char steer[300];
  af_buf_puts(b, campaign_steer_text(k, steer, sizeof steer));
  if (k->features > 0)
    af_buf_printf(b, "  features %ld", k->features);
  if (any_mlir)
    af_buf_printf(b, "  executed %.1f%%",
                  k->cases > 0 ? 100.0 * (double)k->executed / (double)k->cases : 0.0);
  if (any_mlir && k->nconfigs > 0 && k->exec_lo >= 0)
    af_buf_printf(b, " (%.0f-%.0f%% per config), clean %.1f%% (%.0f-%.0f%%)", k->exec_lo,
                  k->exec_hi,
                  k->cases > 0 ? 100.0 * (double)(k->cases - k->failures) / (double)k->cases : 0.0,
                  k->clean_lo, k->clean_hi);
}
