/*
 * campaign.c: `asyncfuzz campaign`: generate, validate and check cases in a loop, with a
 * progress line, graceful stop on SIGINT/SIGTERM and every failing case saved with what is
 * needed to replay it (the case JSON carries its generator seed and knobs; info.txt has the
 * lowering and its version, the failing schedule and the exact replay command).
 *
 * Several lowerings (--lowering, repeated) check every case; a case on which their verdicts
 * differ is a differential result, counted per pair of verdicts. mlir-opt lowerings take the
 * cases in batches (--batch, one mlir-opt and one mlir-runner process per batch).
 *
 * Layout of --out DIR:
 *   DIR/failures/<signature hash>/first.json     the first failing case of that signature
 *   DIR/failures/<signature hash>/smallest.json  the smallest failing case seen
 *   DIR/failures/<signature hash>/info.txt       signature, counts, versions, replay command
 *   DIR/summary.json                             totals and signatures at the end
 */
#define _GNU_SOURCE
#include "../reduce/reduce.h"
#include "../results/store.h"
#include "cli.h"
#include "../check/check.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t g_stop;

static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct Sig {
  int low;         /* which lowering */
  GenConfig knobs; /* of the smallest case */
  char signature[256];
  char detail[1024];
  int cls;
  long count;
  int smallest_ops;
  uint64_t smallest_seed, first_seed;
  Schedule first_sched, smallest_sched;
  double first_at;
  int flaky;       /* the re-run gave another signature */
  int suppressed;  /* known or wontfix in the database: counted, not reported */
  long exact;      /* occurrences recorded one by one in this run */
  int min_ops;     /* the reducer's result (minimized.json), 0: none */
  int min_partial; /* the campaign's time ran out during that reduction */
  long pending;    /* repeats counted since the last flush_tallies */
  int repro_runs, repro_hits;
  char dir[64];
} Sig;

#define CAMP_MAX_LOWERINGS 8
/* occurrences of a finding recorded one by one per run (with their case seeds); later repeats
 * are tallied and committed once a second */
#define DB_EXACT_PER_RUN 16

typedef struct Differ {
  char what[160]; /* "builtin=pass mlir-opt=runtime_error" */
  long count;
  uint64_t first_seed;
} Differ;

typedef struct Camp {
  const char *out;
  LowerSpec *specs;
  int nspecs;
  GenConfig cfg;
  int swarm;
  int batch;
  Differ differ[64];
  int ndiffer;
  long differ_cases;
  Schedule sched[CHECK_MAX_SCHED];
  int nsched;
  const char *sched_spec;
  CheckOpts opts;
  Sig *sigs;
  int nsigs, capsigs;
  long cases, failures;
  double t0;
  Store *db; /* NULL: --no-db */
  int64_t run_id;
  int repro;           /* re-runs of a new finding */
  int reduce;          /* 1: reduce new findings (default), 0: not */
  double deadline;     /* now_s() time the campaign ends (0: by case count): reductions stop */
  long new_findings;   /* new to the database */
  long known_hits;     /* occurrences of known or wontfix findings */
  long corpus;         /* case files saved under failures/ */
  const char *backend; /* "sim", "cuda" or "cuda:raw" */
  char device[400];    /* the backend's device, versions and spin, as runs record it */
} Camp;

static int mkdir_p(const char *path) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s", path);
  for (char *p = tmp + 1; *p; p++) {
    if (*p == '/') {
      *p = '\0';
      if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
        return -1;
      *p = '/';
    }
  }
  if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
    return -1;
  return 0;
}

/* Closes f (written to tmp) and renames it to path, so readers never see a partial file
 * and a full disk loses nothing that was there before. 0 or -1. */
static int commit_file(FILE *f, const char *tmp, const char *path) {
  int bad = ferror(f);
  bad |= fclose(f) != 0;
  if (bad || rename(tmp, path) != 0) {
    remove(tmp);
    return -1;
  }
  return 0;
}

static void knobs_cmdline(const GenConfig *g, char *out, size_t n) {
  snprintf(out, n,
           "--ops %d --buffers %d --host-bufs %d --elems %d --max-deps %d --extra-deps %d "
           "--regions %d --nesting %d --spin %d --host-shared %d --sync %d --root-wait %d --mix "
           "%d,%d,%d,%d,%d,%d,%d,%d",
           g->ops, g->buffers, g->host_bufs, g->elems, g->max_deps, g->extra_dep_pct, g->region_pct,
           g->max_nesting, g->spin, g->host_shared_pct, g->sync_pct, g->root_wait_pct, g->w_launch,
           g->w_memcpy, g->w_memset, g->w_alloc, g->w_dealloc, g->w_wait_async, g->w_host_wait,
           g->w_observe);
}

static int write_info(Camp *k, const Sig *s) {
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/failures/%s/info.txt", k->out, s->dir);
  snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid()); /* workers share DIR */
  FILE *f = fopen(tmp, "w");
  if (f == NULL)
    return -1;
  char fs[64], ss[64], knobs[512];
  const LowerSpec *spec = &k->specs[s->low];
  check_schedule_str(&s->first_sched, fs, sizeof fs);
  check_schedule_str(&s->smallest_sched, ss, sizeof ss);
  knobs_cmdline(&s->knobs, knobs, sizeof knobs);
  fprintf(f, "signature: %s\n", s->signature);
  fprintf(f, "class: %s\n", oracle_verdict_name(s->cls));
  fprintf(f, "lowering: %s (version %s)\n", spec->name, lower_version(spec));
  if (spec->kind == LOWER_MLIR_OPT)
    fprintf(f, "mlir-opt: %s\npipeline: %s\n", spec->opt, spec->pipeline);
  fprintf(f, "asyncfuzz: %s\nbackend: %s\ndevice: %s\n", ASYNCFUZZ_VERSION, k->backend, k->device);
  fprintf(f, "occurrences: %ld\n", s->count);
  fprintf(f, "first: first.json (case seed %llu, schedule %s, after %.1f s)\n",
          (unsigned long long)s->first_seed, fs, s->first_at);
  fprintf(f, "smallest: smallest.json (%d ops, case seed %llu, schedule %s)\n", s->smallest_ops,
          (unsigned long long)s->smallest_seed, ss);
  if (s->min_ops > 0)
    fprintf(f, "minimized: minimized.json (%d ops%s), reproducer.mlir (RUN lines for mlir-opt)\n",
            s->min_ops,
            s->min_partial ? "; the campaign's time ran out before it was minimal" : "");
  if (s->flaky)
    fprintf(f, "note: a re-run of the first case gave a different signature\n");
  fprintf(f, "detail: %s\n", s->detail);
  const char *ba = check_backend_args(&k->opts);
  fprintf(f,
          "replay: asyncfuzz check %s/failures/%s/smallest.json --lowering %s --schedules %s%s\n",
          k->out, s->dir, spec->arg, ss, ba);
  if (spec->kind == LOWER_MLIR_OPT)
    fprintf(f,
            "trace: ASYNCFUZZ_KEEP_TMP=1 asyncfuzz check %s/failures/%s/smallest.json "
            "--lowering %s --schedules %s%s (keeps the lowered module and traces)\n",
            k->out, s->dir, spec->arg, ss, ba);
  else
    fprintf(f,
            "trace: asyncfuzz run %s/failures/%s/smallest.json --lowering %s --policy %s "
            "--sched-seed %llu --trace -%s\n",
            k->out, s->dir, spec->arg, asyncfuzz_rt_policy_name(s->smallest_sched.policy),
            (unsigned long long)s->smallest_sched.seed, ba);
  fprintf(f, "regenerate: asyncfuzz gen --seed %llu %s\n", (unsigned long long)s->smallest_seed,
          knobs);
  return commit_file(f, tmp, path);
}

static int save_case(Camp *k, const Sig *s, const GenCase *c, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/failures/%s/%s", k->out, s->dir, name);
  AfErr err = {0};
  if (gen_case_save(c, path, &err)) {
    fprintf(stderr, "\nasyncfuzz campaign: %s\n", err.msg);
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
static int db_record(Camp *k, Sig *sig, const GenCase *c, const Schedule *s, const Verdict *v,
                     int with_case) {
  if (k->db == NULL)
    return 0;
  const LowerSpec *spec = &k->specs[sig->low];
  char sched[64], replay[2048], knobs[512];
  check_schedule_str(s, sched, sizeof sched);
  knobs_cmdline(&c->cfg, knobs, sizeof knobs);
  snprintf(replay, sizeof replay,
           "asyncfuzz gen --seed %llu %s -o case.json && asyncfuzz check case.json --lowering %s "
           "--schedules %s%s",
           (unsigned long long)c->seed, knobs, spec->arg, sched, check_backend_args(&k->opts));
  char *json = NULL, *mlir = NULL, *trace = NULL;
  AfErr err = {0};
  if (with_case) {
    json = gen_case_to_json(c);
    mlir = gen_render_mlir(c);
    Verdict again;
    if (spec->kind != LOWER_MLIR_OPT && sig->count == 1 && /* the failing run once more */
        check_run_once(c, spec, s, &k->opts, NULL, &again, &err) == 0)
      trace = trace_excerpt(&again);
  }
  StoreOccurrence o = {0};
  o.signature = v->signature;
  o.cls = oracle_verdict_name(v->cls);
  o.lowering = spec->name;
  o.detail = v->detail;
  o.lowering_version = lower_version(spec);
  o.pipeline = spec->kind == LOWER_MLIR_OPT ? spec->pipeline : "";
  o.backend = k->backend;
  o.schedule = sched;
  o.case_seed = c->seed;
  o.case_ops = c->nops;
  o.case_json = json;
  o.case_mlir = mlir;
  o.trace = trace ? trace : (sig->count == 1 ? v->detail : NULL);
  o.replay = replay;
  o.repro_runs = sig->repro_runs;
  o.repro_hits = sig->repro_hits;
  int is_new, status;
  int rc = store_record(k->db, k->run_id, &o, &is_new, &status, &err);
  if (rc == 0 && is_new)
    k->new_findings++;
  if (rc == 0)
    sig->exact++;
  af_free(json);
  af_free(mlir);
  af_free(trace);
  if (rc) {
    fprintf(stderr, "\nasyncfuzz campaign: %s\n", err.msg);
    return -1;
  }
  return 0;
}

/* Commits the repeats counted since the last call, in one transaction. -1 on error. */
static int flush_tallies(Camp *k) {
  if (k->db == NULL)
    return 0;
  StoreTally *t = af_calloc((size_t)(k->nsigs ? k->nsigs : 1), sizeof *t);
  if (t == NULL)
    return -1;
  int n = 0;
  for (int i = 0; i < k->nsigs; i++) {
    Sig *g = &k->sigs[i];
    if (g->pending == 0)
      continue;
    const LowerSpec *spec = &k->specs[g->low];
    t[n].signature = g->signature;
    t[n].lowering = spec->name;
    t[n].lowering_version = lower_version(spec);
    t[n].pipeline = spec->kind == LOWER_MLIR_OPT ? spec->pipeline : "";
    t[n].backend = k->backend;
    t[n++].hits = g->pending;
  }
  AfErr err = {0};
  int rc = store_tally(k->db, k->run_id, t, n, &err);
  af_free(t);
  if (rc) {
    fprintf(stderr, "\nasyncfuzz campaign: %s\n", err.msg);
    return -1;
  }
  for (int i = 0; i < k->nsigs; i++)
    k->sigs[i].pending = 0;
  return 0;
}

/* Reduces a new finding's first case; writes minimized.json and reproducer.mlir next to it
 * and stores both on the finding. A reduction that fails is reported and skipped. */
static int reduce_finding(Camp *k, Sig *sig, const GenCase *c, const Schedule *s) {
  const LowerSpec *spec = &k->specs[sig->low];
  if (k->reduce == 0 || (k->deadline > 0 && now_s() >= k->deadline))
    return 0;
  CheckSigTest t = {spec, s, 1, k->opts, sig->signature};
  GenCase out;
  ReduceStats st;
  AfErr err = {0};
  ReduceOpts ro = {NULL, 1, 1, k->deadline};
  if (spec->kind == LOWER_MLIR_OPT) { /* candidates batched through one mlir-opt process */
    ro.batch_test = check_signature_test_many;
    ro.batch = 16;
  }
  if (reduce_case_opts(c, check_signature_test, &t, &ro, &out, &st, &err) != 0) {
    fprintf(stderr, "\nasyncfuzz campaign: reducing %s: %s\n", sig->signature, err.msg);
    gen_case_free(&out);
    return 0;
  }
  Verdict v;
  char path[4096], rel[4200];
  int rc = check_run_once(&out, spec, s, &k->opts, NULL, &v, &err);
  snprintf(path, sizeof path, "%s/failures/%s/minimized.json", k->out, sig->dir);
  snprintf(rel, sizeof rel, "%s", path);
  char *mlir = rc == 0 ? check_reproducer(&out, spec, s, &v, rel) : NULL;
  char *json = gen_case_to_json(&out);
  if (rc == 0 && mlir && json && gen_case_save(&out, path, &err) == 0) {
    char mp[4096];
    snprintf(mp, sizeof mp, "%s/failures/%s/reproducer.mlir", k->out, sig->dir);
    FILE *f = fopen(mp, "w");
    if (f) {
      fputs(mlir, f);
      fclose(f);
    }
    sig->min_ops = out.nops;
    sig->min_partial = st.stopped;
    if (k->db &&
        store_set_minimized(k->db, sig->signature, json, mlir, out.seed, out.nops, &err) != 0) {
      fprintf(stderr, "\nasyncfuzz campaign: %s\n", err.msg);
      rc = -1;
    }
  }
  af_free(json);
  af_free(mlir);
  gen_case_free(&out);
  return rc == 0 ? 0 : -1;
}

/* Records a failure; returns -1 when output cannot be written. */
static int record(Camp *k, int low, const GenCase *c, const Schedule *s, const Verdict *v,
                  const OracleExpected *e) {
  k->failures++;
  Sig *sig = NULL;
  for (int i = 0; i < k->nsigs; i++)
    if (strcmp(k->sigs[i].signature, v->signature) == 0)
      sig = &k->sigs[i];
  if (sig == NULL) {
    if (af_grow((void **)&k->sigs, &k->capsigs, k->nsigs + 1, sizeof(Sig))) {
      fprintf(stderr, "\nasyncfuzz campaign: out of memory\n");
      return -1;
    }
    sig = &k->sigs[k->nsigs++];
    memset(sig, 0, sizeof *sig);
    sig->low = low;
    sig->knobs = c->cfg;
    snprintf(sig->signature, sizeof sig->signature, "%s", v->signature);
    snprintf(sig->detail, sizeof sig->detail, "%s", v->detail);
    sig->cls = v->cls;
    sig->first_seed = sig->smallest_seed = c->seed;
    sig->first_sched = sig->smallest_sched = *s;
    sig->smallest_ops = c->nops;
    sig->first_at = now_s() - k->t0;
    snprintf(sig->dir, sizeof sig->dir, "%016llx",
             (unsigned long long)af_hash64(v->signature, strlen(v->signature)));
    AfErr err = {0};
    int st = -1;
    if (k->db && store_finding_status(k->db, v->signature, &st, &err) != 0) {
      fprintf(stderr, "\nasyncfuzz campaign: %s\n", err.msg);
      return -1;
    }
    if (st == STORE_KNOWN || st == STORE_WONTFIX) {
      sig->suppressed = 1; /* triaged already: counted, not reported */
      sig->count = 1;
      k->known_hits++;
      return db_record(k, sig, c, s, v, 0);
    }
    /* a divergence is re-run and must give the same signature before it is trusted: the
     * failing schedule, then other seeds of its policy, give the reproduction rate */
    int runs = k->repro > 0 ? k->repro : 1;
    Schedule rs[CHECK_MAX_SCHED];
    for (int j = 0; j < runs && j < CHECK_MAX_SCHED; j++) {
      rs[j] = *s;
      if (j > 0)
        rs[j].seed = af_mix64(s->seed, (uint64_t)j);
    }
    if (runs > CHECK_MAX_SCHED)
      runs = CHECK_MAX_SCHED;
    CheckResult *again = af_malloc(sizeof *again);
    CheckOpts ro = k->opts;
    ro.stop_at_first = 0;
    if (again && check_case(c, &k->specs[low], rs, runs, e, &ro, again, &err) == 0) {
      sig->repro_runs = again->nsched;
      for (int j = 0; j < again->nsched; j++)
        sig->repro_hits += strcmp(again->verdict[j].signature, v->signature) == 0;
      if (again->nsched > 0 && strcmp(again->verdict[0].signature, v->signature) != 0)
        sig->flaky = 1;
    }
    af_free(again);
    if (st < 0 && k->db == NULL)
      k->new_findings++; /* with a database, store_record says whether it is new to it */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/failures/%s", k->out, sig->dir);
    if (mkdir_p(dir) != 0) {
      fprintf(stderr, "\nasyncfuzz campaign: cannot create %s: %s\n", dir, strerror(errno));
      return -1;
    }
    sig->count = 1;
    if (save_case(k, sig, c, "first.json") || save_case(k, sig, c, "smallest.json") ||
        write_info(k, sig)) {
      fprintf(stderr, "\nasyncfuzz campaign: cannot write the failure to %s\n", dir);
      return -1;
    }
    k->corpus += 2;
    if (db_record(k, sig, c, s, v, 1) != 0 || reduce_finding(k, sig, c, s) != 0)
      return -1;
    if (sig->min_ops > 0)
      k->corpus++;
    return write_info(k, sig);
  }
  sig->count++;
  if (sig->suppressed) {
    k->known_hits++;
    sig->pending++;
    return 0;
  }
  int smaller = c->nops < sig->smallest_ops;
  if (smaller || sig->exact < DB_EXACT_PER_RUN) {
    if (db_record(k, sig, c, s, v, smaller))
      return -1;
  } else {
    sig->pending++; /* a repeat: tallied, committed by flush_tallies */
  }
  if (smaller) {
    sig->smallest_ops = c->nops;
    sig->smallest_seed = c->seed;
    sig->smallest_sched = *s;
    sig->knobs = c->cfg;
    if (save_case(k, sig, c, "smallest.json") || write_info(k, sig))
      return -1;
  }
  return 0;
}

static void progress(Camp *k, int final) {
  double el = now_s() - k->t0;
  fprintf(stderr, "%s[%6.1fs] cases %ld (%.1f/s)  failures %ld", isatty(2) ? "\r" : "", el,
          k->cases, el > 0 ? (double)k->cases / el : 0.0, k->failures);
  if (k->nsigs >= 0) /* the parent of --jobs workers does not know their signatures */
    fprintf(stderr, "  signatures %d", k->nsigs);
  fprintf(stderr, "  findings new %ld, known %ld hits  corpus %ld", k->new_findings, k->known_hits,
          k->corpus);
  if (k->nspecs > 1)
    fprintf(stderr, "  differ %ld", k->differ_cases);
  fprintf(stderr, "%s", final || !isatty(2) ? "\n" : "");
  fflush(stderr);
}

static void json_esc(FILE *f, const char *s) {
  AfBuf b;
  af_buf_init(&b);
  af_buf_json_str(&b, s);
  fputs(b.p ? b.p : "\"\"", f);
  af_buf_free(&b);
}

static int write_summary(Camp *k, double el) {
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/summary.json", k->out);
  snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid()); /* workers share DIR */
  FILE *f = fopen(tmp, "w");
  if (f == NULL)
    return -1;
  fprintf(f, "{\"asyncfuzz_version\": \"%s\", \"lowerings\": [", ASYNCFUZZ_VERSION);
  for (int i = 0; i < k->nspecs; i++) {
    const LowerSpec *sp = &k->specs[i];
    fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
    json_esc(f, sp->name);
    fprintf(f, ", \"version\": ");
    json_esc(f, lower_version(sp));
    if (sp->kind == LOWER_MLIR_OPT) {
      fprintf(f, ", \"pipeline\": ");
      json_esc(f, sp->pipeline);
    }
    fprintf(f, "}");
  }
  fprintf(f, "],\n \"backend\": \"%s\", \"device\": ", k->backend);
  json_esc(f, k->device);
  fprintf(f, ", \"schedules\": ");
  json_esc(f, k->sched_spec);
  fprintf(f,
          ", \"swarm\": %s, \"cases\": %ld, \"seconds\": %.2f, \"failures\": %ld, "
          "\"differing_cases\": %ld, \"differences\": [",
          k->swarm ? "true" : "false", k->cases, el, k->failures, k->differ_cases);
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
    json_esc(f, s->signature);
    fprintf(f,
            ", \"class\": \"%s\", \"lowering\": \"%s\", \"count\": %ld, \"smallest_ops\": %d, "
            "\"dir\": \"failures/%s\", \"known\": %s}",
            oracle_verdict_name(s->cls), k->specs[s->low].name, s->count, s->smallest_ops, s->dir,
            s->suppressed ? "true" : "false");
  }
  fprintf(f, "\n]}\n");
  return commit_file(f, tmp, path);
}

static const char campaign_help[] =
    "usage: asyncfuzz campaign [--seconds N | --until T | --cases N] [--seed N | --resume]\n"
    "                          [--lowering SPEC]... [--pipeline P] [--schedules LIST]\n"
    "                          [--jobs N] [--db FILE | --no-db] [--repro N] [--batch N]\n"
    "                          [--no-swarm] [--out DIR] [--quiet] [knobs]\n"
    "Generates cases (seeds SEED, SEED+1, ...), validates each, runs it under every schedule\n"
    "with each lowering and saves each failing case by root-cause signature under\n"
    "DIR/failures (default campaign-out). With several lowerings, cases on which their\n"
    "verdicts differ are counted and listed. A progress line goes to stderr; SIGINT/SIGTERM\n"
    "stop after the batch in flight and still print the summary.\n"
    "  --seconds N     stop after N seconds (default 30)\n"
    "  --cases N       stop after N cases\n"
    "  --seed N        first case seed (default: from the clock, printed)\n"
    "  --lowering SPEC builtin (default), builtin:fault=NAME[,NAME], or\n"
    "                  mlir-opt[@VARIANT][:PATH] (the real lowering, see asyncfuzz lower\n"
    "                  --help); repeat it to compare lowerings\n"
    "  --pipeline P    pass pipeline for the mlir-opt lowerings (replaces the variant's)\n"
    "  --schedules L   default lazy,random,pct (see asyncfuzz check --help)\n"
    "  --batch N       cases per mlir-opt/mlir-runner process (default 64)\n"
    "  --no-swarm      every case with the same knobs (default: swarm testing, each case\n"
    "                  draws its own knobs around them; the case file records them)\n"
    "  --memfree-sync  model mgpuMemFree as synchronizing the device (lenient)\n"
    "  --no-checker    judge by observations and runtime errors only\n"
    "  --backend B     where lowered code runs: sim (default), cuda, cuda:raw\n"
    "  --spin N|auto   cuda: the sentinel spin count (auto: calibrated on the device)\n"
    "  --until T       stop at local time T (HH:MM, the next one; or YYYY-MM-DDTHH:MM)\n"
    "  --jobs N        N worker processes sharing the seeds and the database\n"
    "  --db FILE       the regression database (default DIR/results.db); --no-db: none\n"
    "  --repro N       re-run each new finding N times for its reproduction rate (default 5)\n"
    "  --resume        go on from where the campaign in DIR stopped (its next seed)\n"
    "  --no-reduce     do not reduce new findings (by default each is reduced to a\n"
    "                  minimized case and reproducer, within the campaign's time)\n"
    "Findings go to the database (asyncfuzz db --help); those marked known or wontfix are\n"
    "counted, not reported again.\n"
    "Exit 0 when no case failed, 1 when some did, 2 on bad usage (a missing mlir-opt),\n"
    "3 when --db is not an asyncfuzz database, 4 when results could not be written.\n\n";

static int first_cls(const CheckResult *r) {
  return r->first_fail < 0 ? VERDICT_PASS : r->verdict[r->first_fail].cls;
}

static void note_differ(Camp *k, const CheckResult *const *res, uint64_t seed) {
  int differ = 0;
  for (int i = 1; i < k->nspecs; i++)
    differ |= first_cls(res[i]) != first_cls(res[0]);
  if (!differ)
    return;
  k->differ_cases++;
  char what[160];
  size_t n = 0;
  what[0] = '\0';
  for (int i = 0; i < k->nspecs && n < sizeof what; i++) {
    int w = snprintf(what + n, sizeof what - n, "%s%s=%s", i ? " " : "", k->specs[i].name,
                     oracle_verdict_name(first_cls(res[i])));
    n += w > 0 ? (size_t)w : 0;
  }
  for (int i = 0; i < k->ndiffer; i++)
    if (strcmp(k->differ[i].what, what) == 0) {
      k->differ[i].count++;
      return;
    }
  if (k->ndiffer < (int)(sizeof k->differ / sizeof k->differ[0])) {
    Differ *d = &k->differ[k->ndiffer++];
    snprintf(d->what, sizeof d->what, "%s", what);
    d->count = 1;
    d->first_seed = seed;
  }
}

/* --until: HH:MM (the next such local time) or YYYY-MM-DDTHH:MM. Seconds from now. */
static int parse_until(const char *v, long *seconds) {
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

/* Per-worker counters, shared with the parent of --jobs workers (and written to the resume
 * state). */
typedef struct Slot {
  long cases, failures, new_findings, known_hits, corpus, sigs, differ;
  uint64_t next; /* cases started: the worker's seeds are base + w + jobs * i, i < next */
} Slot;

static int write_state(const char *out, uint64_t seed, int jobs, const Slot *sl) {
  uint64_t min = UINT64_MAX;
  for (int w = 0; w < jobs; w++)
    if (sl[w].next < min)
      min = sl[w].next;
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/campaign-state.json", out);
  snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid()); /* workers share DIR */
  FILE *f = fopen(tmp, "w");
  if (f == NULL)
    return -1;
  /* every seed below next_seed has been checked by some worker */
  fprintf(f, "{\"next_seed\": %llu}\n", (unsigned long long)(seed + min * (uint64_t)jobs));
  return commit_file(f, tmp, path);
}

static int read_state(const char *out, uint64_t *seed) {
  char path[4096];
  snprintf(path, sizeof path, "%s/campaign-state.json", out);
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return -1;
  unsigned long long v;
  int ok = fscanf(f, " {\"next_seed\": %llu}", &v) == 1;
  fclose(f);
  if (!ok)
    return -1;
  *seed = v;
  return 0;
}

static void tools_json(const Camp *k, char *out, size_t n) {
  size_t len = 0;
  out[0] = '\0';
  for (int i = 0; i < k->nspecs && len < n; i++) {
    const LowerSpec *sp = &k->specs[i];
    int w = snprintf(
        out + len, n - len, "%s{\"lowering\": \"%s\", \"version\": \"%s\"%s%s%s}", i ? ", " : "[",
        sp->name, lower_version(sp), sp->kind == LOWER_MLIR_OPT ? ", \"pipeline\": \"" : "",
        sp->kind == LOWER_MLIR_OPT ? sp->pipeline : "", sp->kind == LOWER_MLIR_OPT ? "\"" : "");
    len += w > 0 ? (size_t)w : 0;
  }
  if (len < n)
    snprintf(out + len, n - len, "]");
}

/* The parent of --jobs workers: the status line from their counters, SIGTERM passed on, the
 * resume state, and the totals (per-signature details are in the database and failures/). */
static int campaign_parent(Camp *k, const pid_t *pids, int started, int jobs, Slot *sl,
                           uint64_t seed, long seconds, int quiet, const char *dbp) {
  int alive = started, forwarded = 0, ex = started < jobs ? EXIT_INTERNAL : EXIT_OK;
  int status[256] = {0};
  int reaped[256] = {0};
  k->t0 = now_s();
  (void)seconds;
  while (alive > 0) {
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    if (g_stop && !forwarded) { /* SIGINT reached the workers too; SIGTERM may have not */
      for (int i = 0; i < started; i++)
        if (!reaped[i])
          kill(pids[i], SIGTERM);
      forwarded = 1;
    }
    for (int i = 0; i < started; i++) {
      if (reaped[i])
        continue;
      int st;
      if (waitpid(pids[i], &st, WNOHANG) == pids[i]) {
        reaped[i] = 1;
        alive--;
        status[i] = WIFEXITED(st) ? WEXITSTATUS(st) : EXIT_INTERNAL;
      }
    }
    k->cases = k->failures = k->new_findings = k->known_hits = k->corpus = k->differ_cases = 0;
    k->nsigs = -1;
    for (int i = 0; i < jobs; i++) {
      k->cases += sl[i].cases;
      k->failures += sl[i].failures;
      k->new_findings += sl[i].new_findings;
      k->known_hits += sl[i].known_hits;
      k->corpus += sl[i].corpus;
      k->differ_cases += sl[i].differ;
    }
    if (!quiet)
      progress(k, alive == 0);
    write_state(k->out, seed, jobs, sl);
  }
  double el = now_s() - k->t0;
  for (int i = 0; i < started; i++)
    if (status[i] != EXIT_OK && status[i] != EXIT_FOUND)
      ex = EXIT_INTERNAL;
  long nf = 0;
  if (dbp) {
    Store *db;
    AfErr err = {0};
    if (store_open(dbp, 0, &db, &err) == 0) {
      store_run_end(db, k->run_id, k->cases, el, &err);
      store_run_findings(db, k->run_id, &nf, &err);
      store_close(db);
    } else {
      fprintf(stderr, "asyncfuzz campaign: %s\n", err.msg);
      ex = EXIT_INTERNAL;
    }
  }
  k->nsigs = 0; /* the workers' signatures are in the database and under failures/ */
  if (write_summary(k, el) != 0) {
    fprintf(stderr, "asyncfuzz campaign: cannot write %s/summary.json\n", k->out);
    ex = EXIT_INTERNAL;
  }
  printf("campaign %s: %ld cases in %.1f s (%.1f cases/s) by %d workers, %ld failing\n",
         g_stop ? "stopped" : "done", k->cases, el, el > 0 ? (double)k->cases / el : 0.0, started,
         k->failures);
  if (dbp)
    printf("database %s: %ld finding(s) in this run, %ld new to it, %ld occurrence(s) of known "
           "or wontfix findings (asyncfuzz db list --db %s)\n",
           dbp, nf, k->new_findings, k->known_hits, dbp);
  munmap(sl, sizeof(Slot) * (size_t)jobs);
  af_free(k->specs);
  if (ex == EXIT_OK && k->failures > 0)
    ex = EXIT_FOUND;
  return ex;
}

int cmd_campaign(int argc, char **argv) {
  Camp k;
  memset(&k, 0, sizeof k);
  gen_config_default(&k.cfg);
  k.out = "campaign-out";
  k.sched_spec = "lazy,random,pct";
  k.swarm = 1;
  k.batch = 64;
  k.reduce = 1;
  const char *lowerings[CAMP_MAX_LOWERINGS];
  int nlow = 0;
  const char *pipeline = NULL;
  long seconds = 30, max_cases = -1, batch = 64, repro = 5, jobs = 1;
  const char *db_path = NULL;
  int no_db = 0, resume = 0;
  uint64_t seed = (uint64_t)time(NULL);
  int quiet = 0;
  CheckOpts o = {0};
  o.stop_at_first = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(campaign_help, stdout);
      fputs(cli_gen_knobs_help, stdout);
      return 0;
    } else if (strcmp(a, "--seconds") == 0) {
      if (cli_int(a, val, 0, 100000000, &seconds))
        return EXIT_USAGE;
      i++;
    } else if (strcmp(a, "--cases") == 0) {
      if (cli_int(a, val, 1, 2000000000, &max_cases))
        return EXIT_USAGE;
      i++;
    } else if (strcmp(a, "--batch") == 0) {
      if (cli_int(a, val, 1, 1024, &batch))
        return EXIT_USAGE;
      i++;
    } else if (strcmp(a, "--seed") == 0) {
      if (cli_u64(a, val, &seed))
        return EXIT_USAGE;
      i++;
    } else if (strcmp(a, "--lowering") == 0 && val) {
      if (nlow == CAMP_MAX_LOWERINGS) {
        fprintf(stderr, "asyncfuzz campaign: at most %d lowerings\n", CAMP_MAX_LOWERINGS);
        return EXIT_USAGE;
      }
      lowerings[nlow++] = argv[++i];
    } else if (strcmp(a, "--pipeline") == 0 && val) {
      pipeline = argv[++i];
    } else if (strcmp(a, "--schedules") == 0 && val) {
      k.sched_spec = argv[++i];
    } else if (strcmp(a, "--out") == 0 && val) {
      k.out = argv[++i];
    } else if (strcmp(a, "--quiet") == 0) {
      quiet = 1;
    } else if (strcmp(a, "--no-swarm") == 0) {
      k.swarm = 0;
    } else if (strcmp(a, "--backend") == 0 || strcmp(a, "--spin") == 0) {
      if (cli_backend_opt(&o, a, val) < 0)
        return EXIT_USAGE;
      i++;
    } else if (strcmp(a, "--db") == 0 && val) {
      db_path = argv[++i];
    } else if (strcmp(a, "--no-db") == 0) {
      no_db = 1;
    } else if (strcmp(a, "--resume") == 0) {
      resume = 1;
    } else if (strcmp(a, "--no-reduce") == 0) {
      k.reduce = 0;
    } else if (strcmp(a, "--repro") == 0) {
      if (cli_int(a, val, 1, CHECK_MAX_SCHED, &repro))
        return EXIT_USAGE;
      i++;
    } else if (strcmp(a, "--jobs") == 0) {
      if (cli_int(a, val, 1, 256, &jobs))
        return EXIT_USAGE;
      i++;
    } else if (strcmp(a, "--until") == 0 && val) {
      if (parse_until(argv[++i], &seconds)) {
        fprintf(stderr, "asyncfuzz campaign: --until needs HH:MM or YYYY-MM-DDTHH:MM (local "
                        "time, in the future)\n");
        return EXIT_USAGE;
      }
    } else if (strcmp(a, "--memfree-sync") == 0) {
      o.memfree_sync = 1;
    } else if (strcmp(a, "--no-checker") == 0) {
      o.no_checker = 1;
    } else {
      int r = cli_gen_knob(&k.cfg, a, val);
      if (r < 0)
        return EXIT_USAGE;
      if (r == 0) {
        fprintf(stderr, "asyncfuzz campaign: unknown or incomplete option %s (see --help)\n", a);
        return EXIT_USAGE;
      }
      i++;
    }
  }
  k.backend = o.backend == RT_BACKEND_CUDA ? (o.raw_handles ? "cuda:raw" : "cuda") : "sim";
  int bex = cli_backend_start("campaign", &o, k.device, sizeof k.device);
  if (bex)
    return bex;
  k.opts = o;
  if (nlow == 0)
    lowerings[nlow++] = "builtin";
  AfErr err = {0};
  k.specs = af_calloc((size_t)nlow, sizeof *k.specs);
  if (k.specs == NULL) {
    fprintf(stderr, "asyncfuzz campaign: out of memory\n");
    return EXIT_INTERNAL;
  }
  k.nspecs = nlow;
  int any_mlir = 0;
  for (int i = 0; i < nlow; i++) {
    if (cli_parse_lowering("campaign", lowerings[i], pipeline, 1, &k.specs[i])) {
      af_free(k.specs);
      return EXIT_USAGE;
    }
    any_mlir |= k.specs[i].kind == LOWER_MLIR_OPT;
  }
  k.batch = any_mlir ? (int)batch : 1;
  if (check_parse_schedules(k.sched_spec, 0, k.sched, CHECK_MAX_SCHED, &k.nsched, &err)) {
    fprintf(stderr, "asyncfuzz campaign: %s\n", err.msg);
    af_free(k.specs);
    return EXIT_USAGE;
  }
  {
    GenCase probe;
    if (gen_generate(&probe, 0, &k.cfg, &err)) {
      fprintf(stderr, "asyncfuzz campaign: %s\n", err.msg);
      gen_case_free(&probe);
      af_free(k.specs);
      return EXIT_USAGE;
    }
    gen_case_free(&probe);
  }
  if (mkdir_p(k.out) != 0) {
    fprintf(stderr, "asyncfuzz campaign: cannot create %s: %s\n", k.out, strerror(errno));
    af_free(k.specs);
    return EXIT_INTERNAL;
  }
  if (resume && read_state(k.out, &seed) != 0) {
    fprintf(stderr,
            "asyncfuzz campaign: --resume: no campaign to resume in %s "
            "(campaign-state.json missing or unreadable)\n",
            k.out);
    af_free(k.specs);
    return EXIT_USAGE;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  fprintf(stderr, "asyncfuzz campaign: %s", resume ? "resumed; " : "");
  fprintf(stderr, "lowering");
  for (int i = 0; i < k.nspecs; i++)
    fprintf(stderr, "%s %s (%s)", i ? "," : "", k.specs[i].name, lower_version(&k.specs[i]));
  fprintf(stderr, "; backend %s, schedules %s, seed %llu, %ld %s%s, %ld job(s), output %s\n",
          k.backend, k.sched_spec, (unsigned long long)seed, max_cases > 0 ? max_cases : seconds,
          max_cases > 0 ? "cases" : "seconds", k.swarm ? ", swarm" : "", jobs, k.out);
  /* the database: one run for the whole campaign */
  char dbp[4096];
  snprintf(dbp, sizeof dbp, "%s", db_path ? db_path : "");
  if (!no_db && db_path == NULL)
    snprintf(dbp, sizeof dbp, "%s/results.db", k.out);
  k.repro = (int)repro;
  if (!no_db) {
    if (store_open(dbp, 1, &k.db, &err)) {
      fprintf(stderr, "asyncfuzz campaign: %s\n", err.msg);
      af_free(k.specs);
      return err.rc == AF_EPARSE ? EXIT_INPUT : EXIT_INTERNAL;
    }
    StoreRun run;
    store_run_init(&run);
    tools_json(&k, run.tools, sizeof run.tools);
    snprintf(run.device, sizeof run.device, "%s", k.device);
    snprintf(run.config, sizeof run.config,
             "{\"seed\": %llu, \"schedules\": \"%s\", \"swarm\": %s, \"jobs\": %ld, "
             "\"batch\": %d, \"repro\": %ld, \"memfree_sync\": %s, \"checker\": %s, "
             "\"backend\": \"%s\", \"spin\": %d}",
             (unsigned long long)seed, k.sched_spec, k.swarm ? "true" : "false", jobs, k.batch,
             repro, o.memfree_sync ? "true" : "false", o.no_checker ? "false" : "true", k.backend,
             k.opts.spin);
    if (store_run_begin(k.db, &run, &k.run_id, &err)) {
      fprintf(stderr, "asyncfuzz campaign: %s\n", err.msg);
      store_close(k.db);
      af_free(k.specs);
      return EXIT_INTERNAL;
    }
  }
  /* --jobs: worker processes share the seed sequence (worker w: seeds seed + w + jobs * i) */
  Slot *slots = mmap(NULL, sizeof(Slot) * (size_t)jobs, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (slots == MAP_FAILED) {
    fprintf(stderr, "asyncfuzz campaign: out of memory\n");
    store_close(k.db);
    af_free(k.specs);
    return EXIT_INTERNAL;
  }
  memset(slots, 0, sizeof(Slot) * (size_t)jobs);
  int w = 0, worker = 0;
  if (jobs > 1) {
    store_close(k.db); /* a connection does not survive fork: each process opens its own */
    k.db = NULL;
    pid_t pids[256];
    int started = 0;
    for (; started < jobs; started++) {
      fflush(NULL);
      pid_t pid = fork();
      if (pid < 0)
        break;
      if (pid == 0) {
        worker = 1;
        w = started;
        break;
      }
      pids[started] = pid;
    }
    if (!worker)
      return campaign_parent(&k, pids, started, jobs, slots, seed, seconds, quiet,
                             no_db ? NULL : dbp);
    quiet = 1;
    if (max_cases > 0) { /* the workers share the case count */
      max_cases = max_cases / jobs + (w < max_cases % jobs ? 1 : 0);
      if (max_cases == 0) {
        _exit(EXIT_OK);
      }
    }
    if (!no_db && store_open(dbp, 0, &k.db, &err)) {
      fprintf(stderr, "asyncfuzz campaign: worker %d: %s\n", w, err.msg);
      _exit(EXIT_INTERNAL);
    }
  }
  Slot *me = &slots[w];
  int B = k.batch;
  GenCase *cases = af_calloc((size_t)B, sizeof *cases);
  OracleExpected **es = af_calloc((size_t)B, sizeof *es);
  const GenCase **cp = af_calloc((size_t)B, sizeof *cp);
  CheckResult *res = af_calloc((size_t)B * (size_t)k.nspecs, sizeof *res);
  int ex = EXIT_OK;
  if (!cases || !es || !cp || !res) {
    fprintf(stderr, "asyncfuzz campaign: out of memory\n");
    ex = EXIT_INTERNAL;
  }
  k.t0 = now_s();
  k.deadline = max_cases > 0 ? 0 : k.t0 + (double)seconds;
  double next_report = k.t0 + (isatty(2) ? 1.0 : 5.0), next_flush = k.t0 + 1.0;
  uint64_t next = 0;
  while (ex == EXIT_OK && !g_stop) {
    if (max_cases > 0 && k.cases >= max_cases)
      break;
    double t = now_s();
    if (max_cases <= 0 && t - k.t0 >= (double)seconds)
      break;
    if (t >= next_flush) {
      if (flush_tallies(&k) != 0) {
        ex = EXIT_INTERNAL;
        break;
      }
      next_flush = t + 1.0;
    }
    if (t >= next_report) {
      if (!quiet)
        progress(&k, 0);
      if (jobs == 1)
        write_state(k.out, seed, 1, slots);
      next_report = t + (isatty(2) ? 1.0 : 5.0);
    }
    int n = B;
    if (max_cases > 0 && max_cases - k.cases < n)
      n = (int)(max_cases - k.cases);
    int ngen = 0;
    for (int j = 0; j < n && ex == EXIT_OK; j++, ngen++) {
      uint64_t cseed = seed + (uint64_t)w + (uint64_t)jobs * next++;
      GenConfig cfg = k.cfg;
      if (k.swarm)
        gen_config_swarm(&k.cfg, cseed, &cfg);
      int rc = gen_generate(&cases[j], cseed, &cfg, &err);
      if (rc == 0)
        rc = gen_validate(&cases[j], &err);
      if (rc == 0)
        rc = oracle_expect(&cases[j], &es[j], &err);
      if (rc) {
        /* a generator bug: keep the evidence and stop */
        fprintf(stderr, "\nasyncfuzz campaign: case seed %llu: %s\n", (unsigned long long)cseed,
                err.msg);
        char path[4096];
        snprintf(path, sizeof path, "%s/invalid-case-%llu.json", k.out, (unsigned long long)cseed);
        AfErr e2 = {0};
        if (cases[j].nops)
          gen_case_save(&cases[j], path, &e2);
        ex = EXIT_INTERNAL;
      }
      cp[j] = &cases[j];
    }
    for (int l = 0; l < k.nspecs && ex == EXIT_OK; l++) {
      CheckResult *r = res + (size_t)l * (size_t)B;
      int rc = 0;
      if (k.specs[l].kind == LOWER_MLIR_OPT) {
        /* one set of schedule seeds per batch, from its first case */
        Schedule s[CHECK_MAX_SCHED];
        for (int j = 0; j < k.nsched; j++) {
          s[j] = k.sched[j];
          s[j].seed = af_mix64(cases[0].seed, (uint64_t)j + 1);
        }
        rc = check_cases(cp, n, &k.specs[l], s, k.nsched, (const OracleExpected *const *)es, &o, r,
                         &err);
      } else {
        for (int j = 0; j < n && rc == 0; j++) {
          Schedule s[CHECK_MAX_SCHED];
          for (int q = 0; q < k.nsched; q++) {
            s[q] = k.sched[q];
            s[q].seed = af_mix64(cases[j].seed, (uint64_t)q + 1);
          }
          rc = check_case(&cases[j], &k.specs[l], s, k.nsched, es[j], &o, &r[j], &err);
        }
      }
      if (rc) {
        fprintf(stderr, "\nasyncfuzz campaign: lowering %s, cases from seed %llu: %s\n",
                k.specs[l].name, (unsigned long long)cases[0].seed, err.msg);
        ex = EXIT_INTERNAL;
      }
    }
    for (int j = 0; j < n && ex == EXIT_OK; j++) {
      k.cases++;
      const CheckResult *rs[CAMP_MAX_LOWERINGS];
      for (int l = 0; l < k.nspecs; l++) {
        const CheckResult *r = &res[(size_t)l * (size_t)B + (size_t)j];
        rs[l] = r;
        if (r->first_fail >= 0 && record(&k, l, &cases[j], &r->sched[r->first_fail],
                                         &r->verdict[r->first_fail], es[j]) != 0) {
          ex = EXIT_INTERNAL;
          break;
        }
      }
      if (k.nspecs > 1)
        note_differ(&k, rs, cases[j].seed);
    }
    for (int j = 0; j < ngen; j++) {
      oracle_expected_free(es[j]);
      es[j] = NULL;
      gen_case_free(&cases[j]);
    }
    if (ex == EXIT_OK) {
      me->next = next;
      me->cases = k.cases;
      me->failures = k.failures;
      me->new_findings = k.new_findings;
      me->known_hits = k.known_hits;
      me->corpus = k.corpus;
      me->sigs = k.nsigs;
      me->differ = k.differ_cases;
    }
  }
  double el = now_s() - k.t0;
  if (flush_tallies(&k) != 0)
    ex = EXIT_INTERNAL;
  if (k.db) {
    if (jobs == 1 && store_run_end(k.db, k.run_id, k.cases, el, &err) != 0) {
      fprintf(stderr, "asyncfuzz campaign: %s\n", err.msg);
      ex = EXIT_INTERNAL;
    }
  }
  if (worker) {
    for (int i = 0; i < k.nsigs; i++)
      if (!k.sigs[i].suppressed)
        write_info(&k, &k.sigs[i]);
    store_close(k.db);
    int wex = ex == EXIT_OK && k.failures > 0 ? EXIT_FOUND : ex;
    fflush(NULL);
    _exit(wex);
  }
  write_state(k.out, seed, 1, slots);
  if (!quiet)
    progress(&k, 1);
  for (int i = 0; i < k.nsigs; i++)
    if (!k.sigs[i].suppressed && write_info(&k, &k.sigs[i]) != 0)
      ex = EXIT_INTERNAL;
  if (write_summary(&k, el) != 0) {
    fprintf(stderr, "asyncfuzz campaign: cannot write %s/summary.json\n", k.out);
    ex = EXIT_INTERNAL;
  }
  printf("campaign %s: %ld cases in %.1f s (%.1f cases/s), %ld failing, %d signature(s)%s\n",
         g_stop ? "stopped" : "done", k.cases, el, el > 0 ? (double)k.cases / el : 0.0, k.failures,
         k.nsigs, k.nsigs ? ":" : "");
  for (int i = 0; i < k.nsigs; i++) {
    const Sig *g = &k.sigs[i];
    if (g->suppressed) { /* triaged already: counted only */
      printf("  %6ld x %s (known or wontfix in the database)\n", g->count, g->signature);
      continue;
    }
    char ss[64];
    check_schedule_str(&g->smallest_sched, ss, sizeof ss);
    printf("  %6ld x %s\n         smallest %d ops, replay: asyncfuzz check "
           "%s/failures/%s/smallest.json --lowering %s --schedules %s%s\n",
           g->count, g->signature, g->smallest_ops, k.out, g->dir, k.specs[g->low].arg, ss,
           check_backend_args(&k.opts));
  }
  if (k.nspecs > 1) {
    printf("differential: verdicts differ on %ld of %ld cases%s\n", k.differ_cases, k.cases,
           k.ndiffer ? ":" : "");
    for (int i = 0; i < k.ndiffer; i++)
      printf("  %6ld x %s (first: case seed %llu)\n", k.differ[i].count, k.differ[i].what,
             (unsigned long long)k.differ[i].first_seed);
  }
  if (k.db) {
    long nf = 0;
    if (store_run_findings(k.db, k.run_id, &nf, &err) == 0)
      printf("database %s: %ld finding(s) in this run, %ld new to it, %ld occurrence(s) of "
             "known or wontfix findings (asyncfuzz db list --db %s)\n",
             dbp, nf, k.new_findings, k.known_hits, dbp);
    store_close(k.db);
  }
  munmap(slots, sizeof(Slot) * (size_t)jobs);
  af_free(k.sigs);
  af_free(k.specs);
  af_free(cases);
  af_free(es);
  af_free(cp);
  af_free(res);
  if (ex == EXIT_OK && k.failures > 0)
    ex = EXIT_FOUND;
  return ex;
}
