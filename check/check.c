/*
 * check.c: one case (or a batch) through a lowering under schedules, on a backend: the
 * dispatch to the builtin lowering in this process (builtin.c), in the GPU child
 * (gpu_child.c) or through mlir-opt and mlir-runner (mlir.c); reduction tests; reproducers.
 */
#include "check_int.h"

#include "../lower/mlir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int check_run_once(const GenCase *c, const LowerSpec *spec, const Schedule *s, const CheckOpts *o,
                   const OracleExpected *e, Verdict *v, AfErr *err) {
  CheckOpts sim;
  if (o && asyncfuzz_rt_backend_info(o->backend)->gpu && o->isolate) {
    /* this process must not open the GPU (its GPU child does): the run is replayed on the sim */
    sim = *o;
    sim.backend = RT_BACKEND_SIM;
    sim.isolate = sim.raw_handles = sim.spin = 0;
    o = &sim;
  }
  CheckResult *r = af_malloc(sizeof *r);
  if (r == NULL)
    return af_err_set(err, AF_ENOMEM, "out of memory");
  int rc = check_case(c, spec, s, 1, e, o, r, err);
  if (rc == 0)
    *v = r->verdict[0];
  af_free(r);
  return rc;
}

int check_case(const GenCase *c, const LowerSpec *spec, const Schedule *s, int ns,
               const OracleExpected *e, const CheckOpts *o, CheckResult *out, AfErr *err) {
  if (check_runs_on(spec, o, err))
    return err->rc;
  if (spec->kind == LOWER_MLIR_OPT)
    return check__mlir(&c, 1, spec, s, ns, &e, o, out, err);
  if (o && asyncfuzz_rt_backend_info(o->backend)->gpu && o->isolate)
    return check__gpu(&c, 1, spec, s, 0, ns, o, out, err);
  return check__builtin(c, spec, s, ns, e, o, out, err);
}

int check_cases(const GenCase *const *cs, int n, const LowerSpec *spec, const Schedule *s, int ns,
                const OracleExpected *const *es, const CheckOpts *o, CheckResult *out, AfErr *err) {
  if (check_runs_on(spec, o, err))
    return err->rc;
  if (spec->kind == LOWER_MLIR_OPT)
    return check__mlir(cs, n, spec, s, ns, es, o, out, err);
  return check_cases_sched(cs, n, spec, s, 0, ns, es, o, out, err);
}

int check_cases_sched(const GenCase *const *cs, int n, const LowerSpec *spec, const Schedule *s,
                      int sstride, int ns, const OracleExpected *const *es, const CheckOpts *o,
                      CheckResult *out, AfErr *err) {
  if (check_runs_on(spec, o, err))
    return err->rc;
  if (spec->kind != LOWER_MLIR_OPT && o && asyncfuzz_rt_backend_info(o->backend)->gpu &&
      o->isolate) /* (several at once) */
    return check__gpu(cs, n, spec, s, sstride, ns, o, out, err);
  for (int i = 0; i < n; i++) {
    int rc = check_case(cs[i], spec, s + (size_t)i * (size_t)sstride, ns, es ? es[i] : NULL, o,
                        &out[i], err);
    if (rc)
      return rc;
  }
  return 0;
}

/* The word w (" view", " space") in the op shape of signature sig (its third field; a runtime
 * error's last, runtime_error|ERROR|DETAIL|SHAPE), or NULL. */
static const char *shape_word(const char *sig, const char *w) {
  const char *f = strchr(sig, '|');
  int rt = f && strncmp(f, "|runtime_error|", 15) == 0;
  f = f ? (rt ? strrchr(f, '|') : strchr(f + 1, '|')) : NULL;
  if (f == NULL)
    return NULL;
  size_t len = strcspn(f + 1, "|"), wl = strlen(w);
  for (const char *p = strstr(f + 1, w); p && p + wl <= f + 1 + len; p = strstr(p + 1, w))
    if (p[wl] == ' ' || p[wl] == '|' || p[wl] == '@' || p[wl] == '\0')
      return p;
  return NULL;
}

/* What plain_case takes out of a case. */
enum {
  PLAIN_VIEW = 1,   /* every view dropped */
  PLAIN_SPACE = 2,  /* every buffer in the default memory space */
  PLAIN_RANK = 4,   /* every buffer of rank 1 */
  PLAIN_INL = 8,    /* every gpu.launch a gpu.launch_func */
  PLAIN_REG = 16,   /* no host buffer registered */
  PLAIN_STATIC = 32 /* every extent of a ranked buffer static */
};

/* Case c as *plain without what `what` (PLAIN_*) names: 1 when that makes a valid case (the
 * caller frees it), 0 when not, or -1 out of memory (err set). */
static int plain_case(const GenCase *c, GenCase *plain, unsigned what, AfErr *err) {
  int view = !!(what & PLAIN_VIEW), space = !!(what & PLAIN_SPACE), rank = !!(what & PLAIN_RANK),
      inl = !!(what & PLAIN_INL), reg = !!(what & PLAIN_REG);
  if (gen_case_copy(plain, c)) {
    af_err_set(err, AF_ENOMEM, "out of memory");
    return -1;
  }
  for (int i = 0; i < plain->nops && view; i++)
    memset(plain->ops[i].view, 0, sizeof plain->ops[i].view);
  for (int b = 0; b < plain->nbufs && space; b++)
    plain->bufs[b].space = 0;
  for (int i = 0; i < plain->nops && space; i++)
    plain->ops[i].spacecast = 0;
  for (int b = 0; b < plain->nbufs && rank; b++) {
    plain->bufs[b].rank = plain->bufs[b].dyn = 0;
    memset(plain->bufs[b].shape, 0, sizeof plain->bufs[b].shape);
  }
  for (int i = 0; i < plain->nops && inl; i++)
    plain->ops[i].inl = 0;
  for (int b = 0; b < plain->nbufs && reg; b++)
    plain->bufs[b].reg = 0;
  for (int b = 0; b < plain->nbufs && (what & PLAIN_STATIC); b++)
    plain->bufs[b].dyn = 0;
  AfErr e = {0}; /* (views that evened out buffers of different sizes: no view-free case) */
  int ok = gen_case_finish(plain, &e) == 0 && gen_validate(plain, &e) == 0;
  if (!ok && view) { /* a launch's grid and blocks, made for its view: one thread per element */
    for (int i = 0; i < plain->nops; i++)
      if (plain->ops[i].kind == GEN_OP_LAUNCH && gen_op_has_view(&c->ops[i]))
        memset(plain->ops[i].dims, 0, sizeof plain->ops[i].dims);
    e = (AfErr){0};
    ok = gen_case_finish(plain, &e) == 0 && gen_validate(plain, &e) == 0;
  }
  if (!ok)
    gen_case_free(plain);
  return ok;
}

/* What of PLAIN_* case c holds: a view, a buffer in a memory space, a ranked buffer (and
 * PLAIN_STATIC: one with a dynamic extent), a gpu.launch, a registered host buffer. */
static unsigned case_holds(const GenCase *c) {
  uint32_t f = gen_case_forms_held(c);
  unsigned m =
      (f >> GEN_FORM_RANKED & 1 ? PLAIN_RANK : 0) | (f >> GEN_FORM_SPACE & 1 ? PLAIN_SPACE : 0) |
      (f >> GEN_FORM_OUTLINED & 1 ? PLAIN_INL : 0) | (f >> GEN_FORM_REGISTERED & 1 ? PLAIN_REG : 0);
  for (int i = 0; i < c->nops && !(m & PLAIN_VIEW); i++)
    m |= gen_op_has_view(&c->ops[i]) ? PLAIN_VIEW : 0;
  for (int b = 0; b < c->nbufs && (m & PLAIN_RANK); b++)
    m |= c->bufs[b].rank && c->bufs[b].dyn ? PLAIN_STATIC : 0;
  return m;
}

/* Whether case c without what `what` (PLAIN_*) names still fails under s by the name sig: 1 when
 * it does (with keep, the case left in *keep for the caller to free), 0 when not, 2 when there is
 * no such case, or an AF_E* code. r gets the plain case's result. */
static int fails_without(const GenCase *c, unsigned what, const LowerSpec *spec, const Schedule *s,
                         const CheckOpts *o, const char *sig, GenCase *keep, CheckResult *r,
                         AfErr *err) {
  GenCase plain;
  int ok = plain_case(c, &plain, what, err);
  if (ok < 0)
    return err->rc;
  if (!ok)
    return 2;
  CheckOpts oo = *o;
  oo.stop_at_first = 1;
  int rc = check_case(&plain, spec, s, 1, NULL, &oo, r, err);
  int same = rc == 0 && r->first_fail == 0 && strcmp(r->verdict[0].signature, sig) == 0;
  if (same && keep)
    *keep = plain;
  else
    gen_case_free(&plain);
  return rc ? rc : same;
}

/* Case c again without what `what` names (PLAIN_VIEW, PLAIN_SPACE, PLAIN_RANK, or PLAIN_INL: its
 * gpu.launch ops written as gpu.launch_func), under s: 1 when it fails with v's name less those
 * words, or with gpu.launch_func for gpu.launch (*pv, *plain set), 0 when not, or an AF_E*
 * code. */
static int fails_plainly(const GenCase *c, unsigned what, const LowerSpec *spec, const Schedule *s,
                         const CheckOpts *o, const Verdict *v, GenCase *plain, Verdict *pv,
                         AfErr *err) {
  int view = !!(what & PLAIN_VIEW), space = !!(what & PLAIN_SPACE), rank = !!(what & PLAIN_RANK),
      inl = !!(what & PLAIN_INL);
  char base[sizeof v->signature];
  snprintf(base, sizeof base, "%s", v->signature);
  const char *li = inl ? shape_word(base, "gpu.launch") : NULL;
  if (li) { /* "gpu.launch async" -> "gpu.launch_func async" */
    size_t at = (size_t)(li - base) + 10;
    if (strlen(base) + 5 < sizeof base) {
      memmove(base + at + 5, base + at, strlen(base + at) + 1);
      memcpy(base + at, "_func", 5);
    }
  }
  const char *at = space ? shape_word(base, " space") : NULL;
  char *w = at ? base + (at - base) : NULL; /* (base's own: at points into it) */
  if (w)
    memmove(w, w + 6, strlen(w + 6) + 1);
  at = view ? shape_word(base, " view") : NULL;
  w = at ? base + (at - base) : NULL;
  if (w)
    memmove(w, w + 5, strlen(w + 5) + 1);
  at = rank ? shape_word(base, " ranked") : NULL;
  w = at ? base + (at - base) : NULL;
  if (w)
    memmove(w, w + 7, strlen(w + 7) + 1);
  CheckResult *r = af_malloc(sizeof *r);
  if (r == NULL)
    return af_err_set(err, AF_ENOMEM, "out of memory");
  int rc = fails_without(c, what, spec, s, o, base, plain, r, err);
  if (rc == 1) { /* v's detail (what the case itself showed), and that the word does not matter */
    char note[200];
    if (inl)
      snprintf(note, sizeof note,
               "\n(with every gpu.launch a gpu.launch_func it fails the same "
               "way)");
    else
      snprintf(note, sizeof note, "\n(with %s%s%s%s%s it fails the same way)",
               view ? "every view dropped" : "", view && (space || rank) ? " and " : "",
               space ? "every buffer in the default memory space" : "",
               space && rank ? " and " : "", rank ? "every buffer of rank 1" : "");
    *pv = r->verdict[0];
    int keep = (int)(sizeof pv->detail - strlen(note) - 1);
    snprintf(pv->detail, sizeof pv->detail, "%.*s%s", keep, v->detail, note);
  }
  af_free(r);
  return rc == 2 ? 0 : rc;
}

int check_view_free(const GenCase *c, const LowerSpec *spec, const Schedule *s, const CheckOpts *o,
                    const Verdict *v, GenCase *plain, Verdict *pv, AfErr *err) {
  /* the words that name an op on a view or on a buffer in a memory space */
  int view = shape_word(v->signature, " view") != NULL,
      space = shape_word(v->signature, " space") != NULL,
      rank = shape_word(v->signature, " ranked") != NULL,
      inl = shape_word(v->signature, "gpu.launch") != NULL;
  if ((!oracle_verdict_names_shape(v->cls) && v->cls != VERDICT_RUNTIME_ERROR) ||
      (!view && !space && !rank && !inl))
    return 0;
  /* a gpu.launch the pipeline outlined: as the gpu.launch_func it becomes, when it fails so */
  unsigned holds = case_holds(c);
  if (inl && (holds & PLAIN_INL)) {
    int rc = fails_plainly(c, PLAIN_INL, spec, s, o, v, plain, pv, err);
    if (rc != 0)
      return rc;
  }
  /* every word dropped, else each alone: the rank's, the space's, the view's */
  unsigned all =
      ((view ? PLAIN_VIEW : 0) | (space ? PLAIN_SPACE : 0) | (rank ? PLAIN_RANK : 0)) & holds;
  const unsigned tries[4] = {all, all & PLAIN_RANK, all & PLAIN_SPACE, all & PLAIN_VIEW};
  for (int t = 0; t < 4; t++) {
    if (tries[t] == 0 || (t > 0 && tries[t] == all))
      continue;
    int rc = fails_plainly(c, tries[t], spec, s, o, v, plain, pv, err);
    if (rc != 0)
      return rc;
  }
  return 0;
}

int check_crash_forms(const GenCase *c, const LowerSpec *spec, const Schedule *s,
                      const CheckOpts *o, const Verdict *v, GenAvoid *need, char *words, size_t n,
                      AfErr *err) {
  memset(need, 0, sizeof *need);
  if (n)
    words[0] = '\0';
  if (v->cls != VERDICT_LOWERING_CRASH && v->cls != VERDICT_JIT_CRASH)
    return 0;
  /* the forms it may hold, in this order: what takes each out, its word, and what steering
   * avoids for it (a construct; none: the shape of each op of the form) */
  static const struct {
    unsigned what;
    const char *word, *construct;
  } forms[] = {{PLAIN_RANK, "ranked", NULL},
               {PLAIN_SPACE, "space", NULL},
               {PLAIN_VIEW, "view", NULL},
               {PLAIN_INL, "gpu.launch", "gpu.launch"},
               {PLAIN_REG, "registered", "host-register"}};
  unsigned holds = case_holds(c);
  int found = 0;
  CheckResult *r = af_malloc(sizeof *r);
  if (r == NULL)
    return af_err_set(err, AF_ENOMEM, "out of memory");
  int rc = 0;
  for (int f = 0; f < 5 && rc >= 0; f++) {
    if (!(holds & forms[f].what))
      continue;
    rc = fails_without(c, forms[f].what, spec, s, o, v->signature, NULL, r, err);
    if (rc != 0) /* (it crashes so without it, or there is no case without it) */
      continue;
    const char *w = forms[f].word, *con = forms[f].construct;
    /* ranked: its dynamic extents, where with every extent static it does not crash either
     * (steering then keeps ranked buffers, of static shapes) */
    if (forms[f].what == PLAIN_RANK && (holds & PLAIN_STATIC)) {
      rc = fails_without(c, PLAIN_STATIC, spec, s, o, v->signature, NULL, r, err);
      if (rc < 0)
        break;
      if (rc == 0)
        w = con = "dynamic-extents";
      rc = 0;
    }
    found++;
    size_t len = strlen(words);
    if (len < n)
      snprintf(words + len, n - len, "%s%s", len ? ", " : "", w);
    if (con) {
      gen_avoid_add(need, con);
      continue;
    }
    for (int i = 0; i < c->nops; i++) {
      GenOp m;
      gen_op_mark(c, i, &m);
      int has = f == 0 ? m.ranked : f == 1 ? m.space : gen_op_has_view(&m);
      if (!has || strncmp(gen_op_mlir(m.kind), "gpu.", 4) != 0)
        continue;
      char shape[96];
      snprintf(shape, sizeof shape, "%s%s %s", gen_op_mlir(m.kind),
               gen_op_async(&m) ? " async" : "", w);
      gen_avoid_add(need, shape);
    }
  }
  af_free(r);
  return rc < 0 ? rc : found;
}

int check_signature_test(const GenCase *c, void *ctx) {
  CheckSigTest *t = ctx;
  CheckResult *r = af_malloc(sizeof *r);
  if (r == NULL)
    return AF_ENOMEM;
  AfErr err = {0};
  CheckOpts o = t->o;
  o.stop_at_first = 0;
  int rc = check_case(c, t->spec, t->s, t->ns, NULL, &o, r, &err);
  int hit = 0;
  for (int k = 0; rc == 0 && k < r->nsched && !hit; k++)
    hit = r->verdict[k].cls != VERDICT_PASS && oracle_verdict_has(&r->verdict[k], t->signature);
  af_free(r);
  return rc ? rc : hit;
}

int check_signature_test_many(const GenCase *const *cs, int n, int *interesting, void *ctx) {
  CheckSigTest *t = ctx;
  CheckResult *r = af_calloc((size_t)(n > 0 ? n : 1), sizeof *r);
  if (r == NULL)
    return AF_ENOMEM;
  AfErr err = {0};
  CheckOpts o = t->o;
  o.stop_at_first = 0;
  int rc = check_cases(cs, n, t->spec, t->s, t->ns, NULL, &o, r, &err);
  for (int i = 0; rc == 0 && i < n; i++) {
    interesting[i] = 0;
    for (int k = 0; k < r[i].nsched && !interesting[i]; k++)
      interesting[i] =
          r[i].verdict[k].cls != VERDICT_PASS && oracle_verdict_has(&r[i].verdict[k], t->signature);
  }
  af_free(r);
  return rc;
}

/* The .mlir reproducer of a reduced case: RUN lines (mlir-opt's pipeline piped into
 * mlir-runner with the runtime library), the verdict and the trace excerpt as comments. */
char *check_reproducer(const GenCase *c, const LowerSpec *spec, const Schedule *s, const Verdict *v,
                       const CheckOpts *o, const char *case_path) {
  AfBuf b;
  af_buf_init(&b);
  const char *pipeline = spec->kind == LOWER_MLIR_OPT ? spec->pipeline : mlir_variant_pipeline(0);
  const char *policy = asyncfuzz_rt_policy_name(s->policy);
  af_buf_printf(&b, "// asyncfuzz reproducer (%d ops), asyncfuzz %s\n", c->nops, ASYNCFUZZ_VERSION);
  af_buf_printf(&b, "// signature: %s\n", v->signature);
  if (v->victim[0] && strcmp(v->victim, v->signature) != 0)
    af_buf_printf(&b, "// detailed:  %s\n", v->victim);
  af_buf_printf(&b, "// found with lowering %s (%s), schedule %s@%llu, backend sim\n", spec->name,
                lower_version(spec), policy, (unsigned long long)s->seed);
  CheckOpts sim = {.backend = RT_BACKEND_SIM, .abi = o ? o->abi : 0}; /* replayed on the sim */
  char line[8192];
  af_buf_printf(&b, "// replay: %s\n",
                check_replay(line, sizeof line, CHECK_REPLAY_CHECK,
                             case_path ? case_path : "CASE.json", spec, s, &sim));
  if (spec->kind != LOWER_MLIR_OPT)
    af_buf_puts(&b,
                "// The RUN lines run the real lowering (mlir-opt's default pipeline) on it.\n");
  char lvl[16] = " "; /* the runner's JIT level (none: its default) */
  mlir_jit_flag(spec, lvl + 1, sizeof lvl - 1);
  if (lvl[1] == '\0')
    lvl[0] = '\0';
  af_buf_printf(&b,
                "//\n// RUN: mlir-opt %%s --pass-pipeline='%s' \\\n"
                "// RUN: | env ASYNCFUZZ_POLICY=%s ASYNCFUZZ_SCHED_SEED=%llu "
                "ASYNCFUZZ_TRACE=/dev/stderr \\\n"
                "// RUN:   %s%s -e main --entry-point-result=void \\\n"
                "// RUN:   --shared-libs=%%asyncfuzz_rt\n",
                pipeline, policy, (unsigned long long)s->seed,
                mlir_runner_name(spec->kind == LOWER_MLIR_OPT ? spec->major : 0), lvl);
  af_buf_puts(&b, "// (%asyncfuzz_rt: libasyncfuzz_rt.so from asyncfuzz.)\n//\n// verdict: ");
  af_buf_puts(&b, oracle_verdict_name(v->cls));
  af_buf_puts(&b, "\n// ");
  for (const char *p = v->detail; *p; p++) {
    af_buf_put(&b, p, 1);
    if (*p == '\n')
      af_buf_puts(&b, "// ");
  }
  af_buf_puts(&b, "\n");
  if (spec->kind != LOWER_MLIR_OPT) { /* the failing run's trace */
    int n;
    asyncfuzz_rt_trace(&n);
    AfBuf t;
    af_buf_init(&t);
    asyncfuzz_rt_format_trace(&t, 0, n < 60 ? n : 60);
    af_buf_puts(&b, "//\n// trace (the failing run):\n// ");
    for (const char *p = t.p ? t.p : ""; *p; p++) {
      af_buf_put(&b, p, 1);
      if (*p == '\n' && p[1])
        af_buf_puts(&b, "// ");
    }
    af_buf_free(&t);
  }
  char *mod = gen_render_mlir(c);
  if (mod) {
    mlir_retarget(spec, mod); /* rocdl: no NVVM attribute (the pipeline attaches the target) */
    af_buf_puts(&b, mod);
  }
  af_free(mod);
  if (mod == NULL)
    b.oom = 1;
  return af_buf_take(&b);
}

int check_view_free_all(const GenCase *c, const LowerSpec *spec, const CheckOpts *o, CheckResult *r,
                        AfErr *err) {
  /* a crash: the forms it needs, once per name, noted under each verdict of that name */
  char crashed[sizeof r->verdict[0].signature] = "";
  for (int k = 0; k < r->nsched; k++) {
    Verdict *v = &r->verdict[k];
    if ((v->cls != VERDICT_LOWERING_CRASH && v->cls != VERDICT_JIT_CRASH) ||
        strcmp(crashed, v->signature) == 0)
      continue;
    snprintf(crashed, sizeof crashed, "%s", v->signature);
    GenAvoid need;
    char words[64];
    int rc = check_crash_forms(c, spec, &r->sched[k], o, v, &need, words, sizeof words, err);
    if (rc < 0)
      return rc;
    for (int j = k; j < r->nsched && rc > 0; j++) {
      Verdict *w = &r->verdict[j];
      if (strcmp(w->signature, crashed) != 0)
        continue;
      char note[160];
      snprintf(note, sizeof note, "\n(needs: %s; without %s, it does not crash this way)", words,
               rc > 1 ? "any one of them" : "it");
      size_t len = strlen(w->detail);
      if (len + strlen(note) >= sizeof w->detail)
        len = sizeof w->detail - strlen(note) - 1;
      snprintf(w->detail + len, sizeof w->detail - len, "%s", note);
    }
  }
  for (int k = 0; k < r->nsched; k++) {
    GenCase plain;
    Verdict pv;
    int rc = check_view_free(c, spec, &r->sched[k], o, &r->verdict[k], &plain, &pv, err);
    if (rc < 0)
      return rc;
    if (rc == 1) {
      r->verdict[k] = pv;
      gen_case_free(&plain);
    }
  }
  return 0;
}
