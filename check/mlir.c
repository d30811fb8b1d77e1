/*
 * mlir.c: cases through the real lowering, many per process.
 *
 * A group: every case rendered alone is one chunk of a --split-input-file input to one
 * mlir-opt (lower/mlir.c classifies each chunk: rejected, unconverted, crash, timeout or
 * runnable). The runnable cases are rendered again as one module (one function per case,
 * gen_render_mlir_group), lowered by one mlir-opt and run by one mlir-runner under every
 * schedule (when most recent cases lowered fully, the whole group is first tried as that one
 * module). libasyncfuzz_rt starts a fresh run for each case and schedule and writes
 * case-ID-SCHED.bin. A case without all its trace files (the runner crashed or timed out in it
 * or before it) is run again alone, from its own lowered module, so one bad case costs only
 * itself. Every trace is then judged as for the builtin lowering: the happens-before checker
 * and the sequential oracle.
 */
#include "check_int.h"

#include "../base/feat.h"
#include "../base/proc.h"
#include "../lower/mlir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void check_lowering_verdict(const LowerSpec *spec, const struct MlirLowered *l, Verdict *v) {
  memset(v, 0, sizeof *v);
  v->hb_first = -1;
  v->error_seq = -1;
  static const int cls[] = {VERDICT_PASS, VERDICT_LOWERING_REJECTED, VERDICT_LOWERING_UNCONVERTED,
                            VERDICT_LOWERING_CRASH, VERDICT_TIMEOUT};
  v->cls = cls[l->outcome];
  af_fmt(v->signature, sizeof v->signature, "%s|%s|%s", lower_family(spec),
         oracle_verdict_name(v->cls), l->cause);
  af_fmt(v->detail, sizeof v->detail, "%s", l->detail);
  if (l->form[0]) /* (the shape with its dependency count: what steering avoids) */
    af_fmt(v->victim, sizeof v->victim, "%s|%s|%s", lower_family(spec), oracle_verdict_name(v->cls),
           l->form);
}

static void tool_verdict(const LowerSpec *spec, int cls, const char *cause, const char *detail,
                         Verdict *v) {
  memset(v, 0, sizeof *v);
  v->hb_first = -1;
  v->error_seq = -1;
  v->cls = cls;
  v->rt_failed = cls == VERDICT_RUNTIME_ERROR;
  af_fmt(v->signature, sizeof v->signature, "%s|%s|%s", lower_family(spec),
         oracle_verdict_name(cls), cause);
  af_fmt(v->detail, sizeof v->detail, "%s", detail);
}

/* Whether the runner's stderr (file path) reports LLVM failing to compile the module (an
 * "LLVM ERROR:" or an assertion: code generation, before the case runs), and its cause. */
static int jit_crash(const char *path, char *cause, size_t n) {
  char *text = NULL;
  AfErr e = {0};
  if (af_read_file(path, &text, NULL, &e) != 0)
    return 0;
  int hit = strstr(text, "LLVM ERROR:") != NULL || strstr(text, "Assertion `") != NULL;
  if (hit)
    mlir_crash_cause(text, cause, n);
  af_free(text);
  return hit;
}

/* Judges the trace file of one case. *found: whether the file was there. */
int check_judge_trace(const char *path, const GenCase *c, const LowerSpec *spec,
                      const OracleExpected *e, const CheckOpts *o, Verdict *v, int *found,
                      AfErr *err) {
  struct stat st;
  *found = stat(path, &st) == 0;
  if (!*found)
    return 0;
  CheckTrace t;
  int rc = check_trace_load(path, &t, err);
  if (rc)
    return rc;
  check_trace_features(c, t.recs, t.nrecs);
  HbResult *hb = NULL;
  if (!(o && o->no_checker)) {
    HbOptions ho = {0};
    hb_options_for(&ho, t.abi, o ? o->memfree_sync : 0); /* the flavour the run followed */
    ho.nthreads = t.sum.max_threads;
    ho.nstreams = t.sum.max_streams;
    ho.nevents = t.sum.max_events;
    ho.nregions = t.sum.max_regions;
    ho.nasync = t.sum.max_async;
    rc = hb_check(t.recs, t.nrecs, &ho, &hb, err);
  }
  if (rc == 0 &&
      oracle_judge(c, e, t.obs, t.nobs, t.recs, t.nrecs, &t.sum, hb, lower_family(spec), v))
    rc = af_err_set(err, AF_ENOMEM, "out of memory judging a run");
  hb_result_free(hb);
  check_trace_free(&t);
  return rc;
}

/* The runtime library's settings for one mlir-runner process that runs its cases under all
 * schedules s[0..ns). ASYNCFUZZ_RUNNER_PRELOAD (a sanitizer build: its instrumented runtime
 * library needs the sanitizer runtimes loaded into mlir-runner first) becomes LD_PRELOAD. */
static int run_env(const LowerSpec *spec, const Schedule *s, int ns, const CheckOpts *o,
                   const char *tdir, char env[13][4200]) {
  af_fmt(env[0], sizeof env[0], "ASYNCFUZZ_TRACE_DIR=%s", tdir);
  size_t k = 0;
  k += (size_t)snprintf(env[1], sizeof env[1], "ASYNCFUZZ_SCHEDULES=");
  for (int j = 0; j < ns && k < sizeof env[1]; j++) {
    int w = snprintf(env[1] + k, sizeof env[1] - k, "%s%s@%llu", j ? "," : "",
                     asyncfuzz_rt_policy_name(s[j].policy), (unsigned long long)s[j].seed);
    k += w > 0 ? (size_t)w : 0;
  }
  af_fmt(env[2], sizeof env[2], "ASYNCFUZZ_POLICY");
  af_fmt(env[3], sizeof env[3], "ASYNCFUZZ_MEMFREE_SYNC=%d", o && o->memfree_sync ? 1 : 0);
  af_fmt(env[4], sizeof env[4], "ASYNCFUZZ_TRACE");
  af_fmt(env[5], sizeof env[5], "ASYNCFUZZ_TRACE_BIN");
  const char *pre = getenv("ASYNCFUZZ_RUNNER_PRELOAD");
  af_fmt(env[6], sizeof env[6], pre && *pre ? "LD_PRELOAD=%s" : "LD_PRELOAD", pre ? pre : "");
  af_fmt(env[7], sizeof env[7], "ASYNCFUZZ_SCHED_SEED");
  af_fmt(env[8], sizeof env[8], "ASYNCFUZZ_BACKEND=%s", check_backend_name(o));
  if (o && o->spin > 0)
    af_fmt(env[9], sizeof env[9], "ASYNCFUZZ_SPIN=%d", o->spin);
  else
    af_fmt(env[9], sizeof env[9], "ASYNCFUZZ_SPIN");
  af_fmt(env[10], sizeof env[10], "ASYNCFUZZ_ABI=%s", asyncfuzz_rt_abi_name(check_abi(spec, o)));
  if (o && o->fail_pct > 0)
    af_fmt(env[11], sizeof env[11], "ASYNCFUZZ_FAIL_CALLS=%d", o->fail_pct);
  else
    af_fmt(env[11], sizeof env[11], "ASYNCFUZZ_FAIL_CALLS");
  if (!(pre && *pre))
    return 12;
  /* mlir-runner's own exit-time leaks are not ours to report, and its crashes are signals */
  af_fmt(env[12], sizeof env[12], "ASAN_OPTIONS=detect_leaks=0:handle_segv=0:handle_abort=0");
  return 13;
}

/* The last non-empty line of a report, for a verdict's detail. */
static void tail_line(const char *path, char *out, size_t n) {
  char *text = NULL;
  AfErr e = {0};
  out[0] = '\0';
  if (af_read_file(path, &text, NULL, &e))
    return;
  size_t len = strlen(text);
  while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
    text[--len] = '\0';
  const char *l = strrchr(text, '\n');
  af_fmt(out, n, "%s", l ? l + 1 : text);
  af_free(text);
}

static void note_verdict(CheckResult *r, int k, const Schedule *s, const Verdict *v,
                         const CheckOpts *o) {
  if (r->first_fail >= 0 && o && o->stop_at_first)
    return;
  r->sched[k] = *s;
  r->verdict[k] = *v;
  if (r->nsched < k + 1)
    r->nsched = k + 1;
  if (oracle_verdict_phase(v->cls) == ORACLE_PHASE_ENVIRONMENT)
    r->device_errors++; /* (not a failure of the lowering) */
  else if (v->cls != VERDICT_PASS && r->first_fail < 0)
    r->first_fail = k;
}

static int run_process(const LowerSpec *spec, const char *mod, const char *tdir, const char *errp,
                       const Schedule *s, int ns, const CheckOpts *o, double limit, ProcResult *r,
                       AfErr *err) {
  if (mkdir(tdir, 0700) != 0 && errno != EEXIST)
    return af_err_set(err, AF_EIO, "cannot create %s: %s", tdir, strerror(errno));
  char envs[13][4200];
  char *env[14]; /* (and the NULL) */
  int n = run_env(spec, s, ns, o, tdir, envs);
  for (int i = 0; i < n; i++)
    env[i] = envs[i];
  env[n] = NULL;
  return mlir_run_file(spec, mod, env, NULL, errp, limit, r, err);
}

/* Writes lowered code to path with each runtime call tagged with its case op
 * (mlir_tag_calls), so the traces name case ops as the builtin lowering's do. */
static int write_tagged(const char *path, const char *code, const GenLineMap *map, int first_line,
                        AfErr *err) {
  int ncalls, ntagged;
  char *tagged = mlir_tag_calls(code, map, first_line, &ncalls, &ntagged);
  if (tagged == NULL)
    return af_err_set(err, AF_ENOMEM, "out of memory tagging lowered code");
  int rc = af_write_file(path, tagged, strlen(tagged), err);
  af_free(tagged);
  return rc;
}

/* Runs the lowered module of a group of nrun cases (each runtime call tagged with its case op)
 * in one mlir-runner process; the traces go to DIR/traces. */
static int run_group_module(const LowerSpec *spec, const char *dir, const char *lowered,
                            const GenLineMap *map, const Schedule *s, int ns, const CheckOpts *o,
                            int nrun, AfErr *err) {
  char tdir[4200], rerr[4200], tagged[4200], *code = NULL;
  af_fmt(tdir, sizeof tdir, "%s/traces", dir);
  af_fmt(rerr, sizeof rerr, "%s/runner.err", dir);
  af_fmt(tagged, sizeof tagged, "%s/run.tagged.mlir", dir);
  int rc = af_read_file(lowered, &code, NULL, err);
  if (rc == 0)
    rc = write_tagged(tagged, code, map, 1, err);
  af_free(code);
  ProcResult r;
  if (rc == 0)
    rc = run_process(spec, tagged, tdir, rerr, s, ns, o, spec->timeout + 2.0 * nrun * ns, &r, err);
  return rc;
}

/* Runs case i alone, from its own lowered module, under every schedule, and judges it. map:
 * the case's chunk's line map. */
static int run_alone(const LowerSpec *spec, const char *dir, int i, const GenCase *c,
                     MlirLowered *l, const char *chunk, const GenLineMap *map, const Schedule *s,
                     int ns, const OracleExpected *e, const CheckOpts *o, CheckResult *out,
                     AfErr *err) {
  char mod[4200], tdir[4200], errp[4200];
  int rc = 0;
  af_feat_case(i);       /* (its features: its lowering alone, its traces) */
  if (l->code == NULL) { /* lowered as part of the whole group only: lower it alone now */
    MlirLowered one;
    memset(&one, 0, sizeof one);
    char *ch = (char *)chunk;
    rc = mlir_lower_group(spec, dir, &ch, 1, &one, err);
    if (rc)
      return rc;
    if (one.outcome != MLIR_OK) {
      Verdict v;
      check_lowering_verdict(spec, &one, &v);
      note_verdict(out, 0, &s[0], &v, o);
      mlir_lowered_free(&one, 1);
      return 0;
    }
    l->code = one.code;
    l->first_line = one.first_line;
  }
  out->executed = 1; /* lowered fully: it runs */
  af_fmt(mod, sizeof mod, "%s/alone-%d.mlir", dir, i);
  af_fmt(tdir, sizeof tdir, "%s/alone-%d", dir, i);
  af_fmt(errp, sizeof errp, "%s/alone-%d.err", dir, i);
  rc = write_tagged(mod, l->code, map, l->first_line, err);
  ProcResult r;
  if (rc == 0)
    rc = run_process(spec, mod, tdir, errp, s, ns, o, spec->timeout + 2.0 * ns, &r, err);
  for (int k = 0; k < ns && rc == 0; k++) {
    char tpath[4300];
    af_fmt(tpath, sizeof tpath, "%s/case-0-%d.bin", tdir, k);
    Verdict v;
    int found;
    rc = check_judge_trace(tpath, c, spec, e, o, &v, &found, err);
    if (rc)
      break;
    if (!found) { /* this schedule did not finish: how the runner ended says why */
      char last[400], detail[700], jit[400];
      tail_line(errp, last, sizeof last);
      if (!r.timed_out && jit_crash(errp, jit, sizeof jit)) {
        char lvl[24];
        mlir_jit_flag(spec, lvl, sizeof lvl);
        if (!lvl[0])
          af_fmt(lvl, sizeof lvl, "its default level");
        af_fmt(detail, sizeof detail,
               "the runner's JIT (%s) failed compiling the lowered module: %s", lvl, jit);
        tool_verdict(spec, VERDICT_JIT_CRASH, jit, detail, &v);
      } else if (r.timed_out) {
        af_fmt(detail, sizeof detail, "mlir-runner ran past its limit on this case alone");
        tool_verdict(spec, VERDICT_TIMEOUT, "mlir-runner", detail, &v);
      } else if (r.signaled) {
        char cause[200];
        af_fmt(cause, sizeof cause, "mlir-runner killed by %s", strsignal(r.sig));
        af_fmt(detail, sizeof detail, "%s: %s", cause, last);
        tool_verdict(spec, VERDICT_RUNTIME_ERROR, cause, detail, &v);
      } else {
        char cause[200], norm[160];
        mlir_normalize(last, norm, sizeof norm);
        af_fmt(cause, sizeof cause, "mlir-runner exit %d|%s", r.code, norm);
        af_fmt(detail, sizeof detail, "mlir-runner exited %d without finishing the case: %s",
               r.code, last);
        tool_verdict(spec, VERDICT_RUNTIME_ERROR, cause, detail, &v);
      }
    }
    note_verdict(out, k, &s[k], &v, o);
    if (!found)
      break;
  }
  return rc;
}

/* The share of recent cases that lowered fully: when it is high, a group is first lowered as
 * one module (the kernels compiled once), and split only when that fails. */
static double g_ok_rate = 1.0;

/* A group's state: its cases' chunks (rendered alone) and line maps, lowering outcomes, their
 * expected observations where the caller gave none, the runnable ones (ids, run: nrun) and
 * the line map of the module they are run as. */
typedef struct MlirGroup {
  const GenCase *const *cs;
  int n, ns, nrun;
  char dir[4096], inp[4200], lowered[4200], errp[4200];
  char **chunks;
  MlirLowered *low;
  int *ids;
  const GenCase **run;
  OracleExpected **own;
  GenLineMap *maps, bmap;
} MlirGroup;

static int group_init(MlirGroup *b, const GenCase *const *cs, int n, int ns,
                      const OracleExpected *const *es, AfErr *err) {
  memset(b, 0, sizeof *b);
  b->cs = cs;
  b->n = n;
  b->ns = ns;
  int rc = mlir_tmpdir(b->dir, sizeof b->dir, err);
  if (rc) {
    b->dir[0] = '\0'; /* none to remove */
    return rc;
  }
  af_fmt(b->inp, sizeof b->inp, "%s/run.mlir", b->dir);
  af_fmt(b->lowered, sizeof b->lowered, "%s/run.out.mlir", b->dir);
  af_fmt(b->errp, sizeof b->errp, "%s/run.err", b->dir);
  b->chunks = af_calloc((size_t)n, sizeof *b->chunks);
  b->low = af_calloc((size_t)n, sizeof *b->low);
  b->ids = af_calloc((size_t)n, sizeof *b->ids);
  b->run = af_calloc((size_t)n, sizeof *b->run);
  b->own = af_calloc((size_t)n, sizeof *b->own);
  b->maps = af_calloc((size_t)n, sizeof *b->maps); /* each chunk's */
  if (!b->chunks || !b->low || !b->ids || !b->run || !b->own || !b->maps)
    return af_err_set(err, AF_ENOMEM, "out of memory");
  for (int i = 0; i < n && rc == 0; i++) {
    int zero = 0;
    b->chunks[i] = gen_render_mlir_group_map(&cs[i], &zero, 1, ns, &b->maps[i]);
    if (b->chunks[i] == NULL)
      rc = af_err_set(err, AF_ENOMEM, "out of memory rendering a case");
    if (rc == 0 && (es == NULL || es[i] == NULL))
      rc = oracle_expect(cs[i], &b->own[i], err);
    b->ids[i] = i;
  }
  return rc;
}

static void group_free(MlirGroup *b) {
  for (int i = 0; i < b->n; i++) {
    if (b->chunks)
      af_free(b->chunks[i]);
    if (b->own)
      oracle_expected_free(b->own[i]);
    if (b->maps)
      af_free(b->maps[i].op);
  }
  af_free(b->maps);
  af_free(b->bmap.op);
  if (b->low)
    mlir_lowered_free(b->low, b->n);
  af_free(b->chunks);
  af_free(b->low);
  af_free(b->ids);
  af_free(b->run);
  af_free(b->own);
  if (b->dir[0] == '\0')
    return;
  if (getenv("ASYNCFUZZ_KEEP_TMP") == NULL)
    af_rm_tree(b->dir);
  else
    fprintf(stderr, "asyncfuzz: kept %s (lowered modules, traces: asyncfuzz check-trace)\n",
            b->dir);
}

/* The cases of cases[0..m) (ids: their numbers) as one module, lowered into b->lowered: *ok
 * when mlir-opt lowered it (all: and no op is left unconverted). */
static int lower_module(MlirGroup *b, const LowerSpec *spec, const GenCase *const *cases,
                        const int *ids, int m, int all, int *ok, AfErr *err) {
  af_free(b->bmap.op);
  memset(&b->bmap, 0, sizeof b->bmap);
  char *text = gen_render_mlir_group_map(cases, ids, m, b->ns, &b->bmap);
  int rc = text ? af_write_file(b->inp, text, strlen(text), err)
                : af_err_set(err, AF_ENOMEM, "out of memory");
  /* (features attributed to cases: each case's function, from the line after its comment) */
  long *first = af_feat_on() && rc == 0 ? af_malloc(sizeof *first * (size_t)(m + 1)) : NULL;
  int nf = 0;
  long ln = 1;
  for (const char *p = first ? text : NULL; p && *p && nf < m; ln++) {
    if (strncmp(p, "  // case ", 10) == 0)
      first[nf++] = ln + 1;
    p = strchr(p, '\n');
    p = p ? p + 1 : NULL;
  }
  af_free(text);
  ProcResult r;
  if (first && nf == m)
    mlir_feat_lines(first, ids, m);
  if (rc == 0)
    rc = mlir_lower_file(spec, b->inp, b->lowered, b->errp, spec->timeout + 2.0 * m, &r, err);
  mlir_feat_lines(NULL, NULL, 0);
  af_free(first);
  *ok = rc == 0 && r.exited && r.code == 0;
  if (*ok && all) {
    char *code = NULL;
    rc = af_read_file(b->lowered, &code, NULL, err);
    char root[200], ops[400];
    if (rc == 0)
      mlir_unconverted_ops(code, root, sizeof root, ops, sizeof ops);
    *ok = rc == 0 && ops[0] == '\0';
    if (*ok && af_feat_on()) /* (split, the group's chunks give them) */
      mlir_feat_calls_group(code);
    af_free(code);
  }
  return rc;
}

/* Each case lowered in one --split-input-file process: lowering verdicts; the runnable cases
 * go on (b->run), as one module (*ok when it lowered; lowered alone each case is too). */
static int lower_each(MlirGroup *b, const LowerSpec *spec, const Schedule *s, const CheckOpts *o,
                      CheckResult *out, int *ok, AfErr *err) {
  int rc = mlir_lower_group(spec, b->dir, b->chunks, b->n, b->low, err);
  for (int i = 0; i < b->n && rc == 0; i++) {
    if (b->low[i].outcome != MLIR_OK) {
      Verdict v;
      check_lowering_verdict(spec, &b->low[i], &v);
      note_verdict(&out[i], 0, &s[0], &v, o);
      continue;
    }
    b->ids[b->nrun] = i;
    b->run[b->nrun++] = b->cs[i];
  }
  *ok = 0;
  if (rc == 0 && b->nrun > 1)
    rc = lower_module(b, spec, b->run, b->ids, b->nrun, 0, ok, err);
  return rc;
}

/* The runnable cases' module run by one mlir-runner, each case's traces judged; a case without
 * all its traces runs alone. */
static int judge_module(MlirGroup *b, const LowerSpec *spec, const Schedule *s,
                        const OracleExpected *const *es, const CheckOpts *o, CheckResult *out,
                        AfErr *err) {
  int ns = b->ns;
  char tdir[4200];
  af_fmt(tdir, sizeof tdir, "%s/traces", b->dir);
  int rc = run_group_module(spec, b->dir, b->lowered, &b->bmap, s, ns, o, b->nrun, err);
  for (int j = 0; j < b->nrun && rc == 0; j++) {
    int i = b->ids[j];
    const OracleExpected *e = es && es[i] ? es[i] : b->own[i];
    out[i].executed = 1;
    af_feat_case(i); /* (its traces' features) */
    int all = 1;
    for (int k = 0; k < ns && all; k++) {
      char tpath[4300];
      struct stat st;
      af_fmt(tpath, sizeof tpath, "%s/case-%d-%d.bin", tdir, i, k);
      all = stat(tpath, &st) == 0;
    }
    if (!all) { /* the runner died in or before this case: it runs alone */
      rc = run_alone(spec, b->dir, i, b->cs[i], &b->low[i], b->chunks[i], &b->maps[i], s, ns, e, o,
                     &out[i], err);
      continue;
    }
    for (int k = 0; k < ns && rc == 0; k++) {
      char tpath[4300];
      af_fmt(tpath, sizeof tpath, "%s/case-%d-%d.bin", tdir, i, k);
      Verdict v;
      int found;
      rc = check_judge_trace(tpath, b->cs[i], spec, e, o, &v, &found, err);
      if (rc == 0)
        note_verdict(&out[i], k, &s[k], &v, o);
    }
  }
  return rc;
}

int check__mlir(const GenCase *const *cs, int n, const LowerSpec *spec, const Schedule *s, int ns,
                const OracleExpected *const *es, const CheckOpts *o, CheckResult *out, AfErr *err) {
  if (ns > CHECK_MAX_SCHED)
    ns = CHECK_MAX_SCHED;
  for (int i = 0; i < n; i++) {
    out[i].nsched = 0;
    out[i].first_fail = -1;
    out[i].device_errors = 0;
    out[i].executed = 0;
  }
  MlirGroup b;
  int cur = af_feat_current_case();
  int rc = group_init(&b, cs, n, ns, es, err);
  int group_ok = 0;
  if (rc == 0 && n > 1 && g_ok_rate > 0.9) /* likely all runnable: the whole group as one module */
    rc = lower_module(&b, spec, cs, b.ids, n, 1, &group_ok, err);
  if (group_ok) {
    for (int i = 0; i < n; i++)
      b.run[b.nrun++] = cs[i];
  } else if (rc == 0) {
    rc = lower_each(&b, spec, s, o, out, &group_ok, err);
  }
  if (n > 0)
    g_ok_rate = 0.7 * g_ok_rate + 0.3 * ((double)b.nrun / n);
  if (rc == 0 && group_ok) {
    rc = judge_module(&b, spec, s, es, o, out, err);
  } else {
    for (int j = 0; j < b.nrun && rc == 0; j++) {
      int i = b.ids[j];
      const OracleExpected *e = es && es[i] ? es[i] : b.own[i];
      rc = run_alone(spec, b.dir, i, cs[i], &b.low[i], b.chunks[i], &b.maps[i], s, ns, e, o,
                     &out[i], err);
    }
  }
  group_free(&b);
  af_feat_case(cur);
  return rc;
}
