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
#include "cli.h"
#include "pipeline.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
  int flaky; /* the re-run gave another signature */
  char dir[64];
} Sig;

#define CAMP_MAX_LOWERINGS 8

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
  Schedule sched[PIPE_MAX_SCHED];
  int nsched;
  const char *sched_spec;
  PipeOpts opts;
  Sig *sigs;
  int nsigs, capsigs;
  long cases, failures;
  double t0;
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
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (f == NULL)
    return -1;
  char fs[64], ss[64], knobs[512];
  const LowerSpec *spec = &k->specs[s->low];
  pipeline_schedule_str(&s->first_sched, fs, sizeof fs);
  pipeline_schedule_str(&s->smallest_sched, ss, sizeof ss);
  knobs_cmdline(&s->knobs, knobs, sizeof knobs);
  fprintf(f, "signature: %s\n", s->signature);
  fprintf(f, "class: %s\n", oracle_verdict_name(s->cls));
  fprintf(f, "lowering: %s (version %s)\n", spec->name, lower_version(spec));
  if (spec->kind == LOWER_MLIR_OPT)
    fprintf(f, "mlir-opt: %s\npipeline: %s\n", spec->opt, spec->pipeline);
  fprintf(f, "asyncfuzz: %s\nbackend: sim\n", ASYNCFUZZ_VERSION);
  fprintf(f, "occurrences: %ld\n", s->count);
  fprintf(f, "first: first.json (case seed %llu, schedule %s, after %.1f s)\n",
          (unsigned long long)s->first_seed, fs, s->first_at);
  fprintf(f, "smallest: smallest.json (%d ops, case seed %llu, schedule %s)\n", s->smallest_ops,
          (unsigned long long)s->smallest_seed, ss);
  if (s->flaky)
    fprintf(f, "note: a re-run of the first case gave a different signature\n");
  fprintf(f, "detail: %s\n", s->detail);
  fprintf(f, "replay: asyncfuzz check %s/failures/%s/smallest.json --lowering %s --schedules %s\n",
          k->out, s->dir, spec->arg, ss);
  if (spec->kind == LOWER_MLIR_OPT)
    fprintf(f,
            "trace: ASYNCFUZZ_KEEP_TMP=1 asyncfuzz check %s/failures/%s/smallest.json "
            "--lowering %s --schedules %s (keeps the lowered module and traces)\n",
            k->out, s->dir, spec->arg, ss);
  else
    fprintf(f,
            "trace: asyncfuzz run %s/failures/%s/smallest.json --lowering %s --policy %s "
            "--sched-seed %llu --trace -\n",
            k->out, s->dir, spec->arg, asyncfuzz_rt_policy_name(s->smallest_sched.policy),
            (unsigned long long)s->smallest_sched.seed);
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
    /* a divergence is re-run and must give the same signature before it is trusted */
    Verdict again;
    AfErr err = {0};
    if (pipeline_run_once(c, &k->specs[low], s, &k->opts, e, &again, &err) == 0 &&
        strcmp(again.signature, v->signature) != 0)
      sig->flaky = 1;
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
    return 0;
  }
  sig->count++;
  if (c->nops < sig->smallest_ops) {
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
  fprintf(stderr, "%s[%6.1fs] cases %ld (%.1f/s)  failures %ld  signatures %d",
          isatty(2) ? "\r" : "", el, k->cases, el > 0 ? (double)k->cases / el : 0.0, k->failures,
          k->nsigs);
  if (k->nspecs > 1)
    fprintf(stderr, "  differ %ld", k->differ_cases);
  fprintf(stderr, "%s", final || !isatty(2) ? "\n" : "");
  fflush(stderr);
}

static void json_esc(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(f, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(f, "\\u%04x", ch);
    else
      fputc(ch, f);
  }
  fputc('"', f);
}

static int write_summary(Camp *k, double el) {
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/summary.json", k->out);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
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
  fprintf(f, "],\n \"backend\": \"sim\", \"schedules\": ");
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
            "\"dir\": \"failures/%s\"}",
            oracle_verdict_name(s->cls), k->specs[s->low].name, s->count, s->smallest_ops, s->dir);
  }
  fprintf(f, "\n]}\n");
  return commit_file(f, tmp, path);
}

static const char campaign_help[] =
    "usage: asyncfuzz campaign [--seconds N | --cases N] [--seed N] [--lowering SPEC]...\n"
    "                          [--pipeline P] [--schedules LIST] [--batch N] [--no-swarm]\n"
    "                          [--out DIR] [--quiet] [knobs]\n"
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
    "Exit 0 when no case failed, 1 when some did, 2 on bad usage (a missing mlir-opt),\n"
    "4 when results could not be written.\n\n";

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

int cmd_campaign(int argc, char **argv) {
  Camp k;
  memset(&k, 0, sizeof k);
  gen_config_default(&k.cfg);
  k.out = "campaign-out";
  k.sched_spec = "lazy,random,pct";
  k.swarm = 1;
  k.batch = 64;
  const char *lowerings[CAMP_MAX_LOWERINGS];
  int nlow = 0;
  const char *pipeline = NULL;
  long seconds = 30, max_cases = -1, batch = 64;
  uint64_t seed = (uint64_t)time(NULL);
  int quiet = 0;
  PipeOpts o = {0};
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
    if (lower_spec_parse(lowerings[i], &k.specs[i], &err) ||
        (pipeline && k.specs[i].kind == LOWER_MLIR_OPT &&
         lower_spec_set_pipeline(&k.specs[i], pipeline, &err))) {
      fprintf(stderr, "asyncfuzz campaign: %s\n", err.msg);
      af_free(k.specs);
      return EXIT_USAGE;
    }
    any_mlir |= k.specs[i].kind == LOWER_MLIR_OPT;
  }
  k.batch = any_mlir ? (int)batch : 1;
  if (pipeline_parse_schedules(k.sched_spec, 0, k.sched, PIPE_MAX_SCHED, &k.nsched, &err)) {
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
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  fprintf(stderr, "asyncfuzz campaign: lowering");
  for (int i = 0; i < k.nspecs; i++)
    fprintf(stderr, "%s %s (%s)", i ? "," : "", k.specs[i].name, lower_version(&k.specs[i]));
  fprintf(stderr, "; backend sim, schedules %s, seed %llu, %ld %s%s, output %s\n", k.sched_spec,
          (unsigned long long)seed, max_cases > 0 ? max_cases : seconds,
          max_cases > 0 ? "cases" : "seconds", k.swarm ? ", swarm" : "", k.out);
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
  double next_report = k.t0 + (isatty(2) ? 1.0 : 5.0);
  uint64_t next = 0;
  while (ex == EXIT_OK && !g_stop) {
    if (max_cases > 0 && k.cases >= max_cases)
      break;
    double t = now_s();
    if (max_cases <= 0 && t - k.t0 >= (double)seconds)
      break;
    if (!quiet && t >= next_report) {
      progress(&k, 0);
      next_report = t + (isatty(2) ? 1.0 : 5.0);
    }
    int n = B;
    if (max_cases > 0 && max_cases - k.cases < n)
      n = (int)(max_cases - k.cases);
    int ngen = 0;
    for (int j = 0; j < n && ex == EXIT_OK; j++, ngen++) {
      uint64_t cseed = seed + next++;
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
        Schedule s[PIPE_MAX_SCHED];
        for (int j = 0; j < k.nsched; j++) {
          s[j] = k.sched[j];
          s[j].seed = af_mix64(cases[0].seed, (uint64_t)j + 1);
        }
        rc = pipeline_check_many(cp, n, &k.specs[l], s, k.nsched, (const OracleExpected *const *)es,
                                 &o, r, &err);
      } else {
        for (int j = 0; j < n && rc == 0; j++) {
          Schedule s[PIPE_MAX_SCHED];
          for (int q = 0; q < k.nsched; q++) {
            s[q] = k.sched[q];
            s[q].seed = af_mix64(cases[j].seed, (uint64_t)q + 1);
          }
          rc = pipeline_check(&cases[j], &k.specs[l], s, k.nsched, es[j], &o, &r[j], &err);
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
  }
  double el = now_s() - k.t0;
  if (!quiet)
    progress(&k, 1);
  for (int i = 0; i < k.nsigs; i++)
    if (write_info(&k, &k.sigs[i]) != 0)
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
    char ss[64];
    pipeline_schedule_str(&g->smallest_sched, ss, sizeof ss);
    printf("  %6ld x %s\n         smallest %d ops, replay: asyncfuzz check "
           "%s/failures/%s/smallest.json --lowering %s --schedules %s\n",
           g->count, g->signature, g->smallest_ops, k.out, g->dir, k.specs[g->low].arg, ss);
  }
  if (k.nspecs > 1) {
    printf("differential: verdicts differ on %ld of %ld cases%s\n", k.differ_cases, k.cases,
           k.ndiffer ? ":" : "");
    for (int i = 0; i < k.ndiffer; i++)
      printf("  %6ld x %s (first: case seed %llu)\n", k.differ[i].count, k.differ[i].what,
             (unsigned long long)k.differ[i].first_seed);
  }
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
