/*
 * test_avoid.c: avoid sets (gen/avoid.c, gen/genavoid.c). The generator never builds what its
 * avoid set names; each other form it builds instead keeps the case valid, its data ops and so
 * its oracle observations, and runs clean through the builtin lowering under adversarial
 * schedules; the set travels in the case's config and in its regenerate line; an empty set
 * changes no seed.
 */
#include "../check/check.h"
#include "../gen/gen.h"
#include "../oracle/oracle.h"
#include "test.h"

#include <string.h>

/* Whether a and b have the same data ops (kind, buffers, values, views, kernel) in order:
 * then their sequential executions observe the same values. */
static int same_data_ops(const GenCase *a, const GenCase *b) {
  int i = 0, j = 0;
  for (;;) {
    while (i < a->nops && !(gen_op_flags(a->ops[i].kind) & (GEN_K_WRITE | GEN_K_ARGS | GEN_K_READ)))
      i++;
    while (j < b->nops && !(gen_op_flags(b->ops[j].kind) & (GEN_K_WRITE | GEN_K_ARGS | GEN_K_READ)))
      j++;
    if (i == a->nops || j == b->nops)
      return i == a->nops && j == b->nops;
    const GenOp *x = &a->ops[i++], *y = &b->ops[j++];
    if (x->kind != y->kind || x->buf != y->buf || x->src != y->src || x->value != y->value ||
        x->kernel != y->kernel || memcmp(x->args, y->args, sizeof x->args) ||
        memcmp(x->view, y->view, sizeof x->view))
      return 0;
  }
}

static int same_observations(const GenCase *a, const GenCase *b) {
  OracleExpected *ea = NULL, *eb = NULL;
  AfErr err = {0};
  CHECK_EQ(oracle_expect(a, &ea, &err), 0);
  CHECK_EQ(oracle_expect(b, &eb, &err), 0);
  int same = ea->nobs == eb->nobs;
  for (int k = 0; same && k < ea->nobs; k++)
    same = ea->obs[k].n == eb->obs[k].n && ea->obs[k].buf == eb->obs[k].buf &&
           memcmp(ea->obs[k].vals, eb->obs[k].vals, sizeof(int32_t) * (size_t)ea->obs[k].n) == 0;
  oracle_expected_free(ea);
  oracle_expected_free(eb);
  return same;
}

/* b runs clean through the builtin lowering under lazy, random and pct schedules. */
static void runs_clean(const GenCase *b) {
  LowerSpec spec;
  AfErr err = {0};
  CHECK_EQ(lower_spec_parse("builtin", &spec, &err), 0);
  Schedule s[3] = {{RT_LAZY, b->seed}, {RT_RANDOM, b->seed + 1}, {RT_PCT, b->seed + 2}};
  CheckOpts o = {0};
  CheckResult r;
  CHECK_EQ(check_case(b, &spec, s, 3, NULL, &o, &r, &err), 0);
  if (r.first_fail >= 0)
    fprintf(stderr, "case seed %llu: %s\n", (unsigned long long)b->seed,
            r.verdict[r.first_fail].signature);
  CHECK_EQ(r.first_fail, -1);
}

/* One other form: cases drawn with `avoid` against the same seeds drawn without. same_draws: the
 * form adds ops but draws nothing the original did not (the dependency forms), so most cases keep
 * their data ops; a synchronous op made asynchronous (or back) draws its dependencies' extras as
 * the other form would not, so later draws differ. */
static void one_form(const char *avoid, const char *form, int ops_on, int same_draws) {
  GenConfig cfg, av;
  gen_config_default(&cfg);
  cfg.extra_dep_pct = 0; /* (draws from recent tokens, which the other forms add to) */
  cfg.capture_pct = 0;
  cfg.stream_pct = 0;
  cfg.block_pct = 0; /* (a for's body has no other form for one dependency: no for is drawn) */
  cfg.sync_pct = 50;
  if (ops_on)
    cfg.max_deps = 4;
  av = cfg;
  CHECK_EQ(gen_avoid_add(&av.avoid, avoid), 1);
  int had = 0, changed = 0, same = 0, n = 300;
  for (uint64_t seed = 1; seed <= (uint64_t)n; seed++) {
    GenCase a, b;
    AfErr err = {0};
    CHECK_EQ(gen_generate(&a, seed, &cfg, &err), 0);
    CHECK_EQ(gen_generate(&b, seed, &av, &err), 0);
    CHECK_EQ(gen_validate(&b, &err), 0);
    if (gen_case_has_shape(&b, av.avoid.shapes, av.avoid.nshapes))
      fprintf(stderr, "%s: case seed %llu still has it\n", avoid, (unsigned long long)seed);
    CHECK(!gen_case_has_shape(&b, av.avoid.shapes, av.avoid.nshapes));
    int has = gen_case_has_shape(&a, av.avoid.shapes, av.avoid.nshapes);
    had += has;
    if (has && same_data_ops(&a, &b)) {
      same++;
      CHECK(same_observations(&a, &b));
    }
    changed += gen_case_hash(&a) != gen_case_hash(&b);
    runs_clean(&b);
    gen_case_free(&a);
    gen_case_free(&b);
  }
  printf("%-34s (%s): %d of %d cases had the shape, %d changed, %d of those with the same data "
         "ops and observations\n",
         avoid, form, had, n, changed, same);
  CHECK(had >= n / 10); /* the form was exercised */
  if (same_draws)
    CHECK(same >= had / 3); /* ... on the very same data ops in many cases */
}

/* The set is in the case's JSON and its regenerate options; the same seed and knobs make the
 * same bytes; an empty set changes nothing a seed made before. */
static void travels(void) {
  GenConfig cfg;
  gen_config_default(&cfg);
  CHECK_EQ(gen_avoid_add(&cfg.avoid, "gpu.launch_func async deps=2+"), 1);
  CHECK_EQ(gen_avoid_add(&cfg.avoid, "gpu.launch_func async deps=2+|failed to legalize"), 0);
  CHECK_EQ(gen_avoid_add(&cfg.avoid, "call-result"), 1); /* the func.call kind */
  CHECK_EQ(gen_avoid_add(&cfg.avoid, "await-value"), 1); /* a word of "yield" */
  CHECK_EQ(gen_avoid_add(&cfg.avoid, "no-such-thing"), -1);
  CHECK_EQ(gen_avoid_count(&cfg.avoid), 3);
  char t[96];
  gen_avoid_text(&cfg.avoid, 1, t, sizeof t);
  CHECK_STR(t, "func.call");
  gen_avoid_text(&cfg.avoid, 2, t, sizeof t);
  CHECK_STR(t, "yield");
  GenCase a, b;
  AfErr err = {0};
  CHECK_EQ(gen_generate(&a, 42, &cfg, &err), 0);
  char *ja = gen_case_to_json(&a);
  CHECK_CONTAINS(ja, "\"avoid\": [\"gpu.launch_func async deps=2+\", \"func.call\", \"yield\"]");
  CHECK_EQ(gen_case_from_json(&b, ja, &err), 0);
  GenCase c;
  CHECK_EQ(gen_generate(&c, b.seed, &b.cfg, &err), 0); /* regenerated from what the case says */
  char *jc = gen_case_to_json(&c);
  CHECK_STR(ja, jc);
  char args[2048];
  gen_config_args(&a.cfg, args, sizeof args);
  CHECK_CONTAINS(args, "--avoid 'gpu.launch_func async deps=2+' --avoid func.call --avoid yield");
  af_free(ja);
  af_free(jc);
  gen_case_free(&a);
  gen_case_free(&b);
  gen_case_free(&c);
  /* a bad entry in a case file is an error that names it */
  const char *bad = "{\"format\": \"asyncfuzz-case\", \"version\": 1, \"seed\": \"1\", \"config\": "
                    "{\"avoid\": [\"gpu.nothing\"]}, \"spin\": 1, \"buffers\": [], \"ops\": []}";
  CHECK_EQ(gen_case_from_json(&b, bad, &err), AF_EPARSE);
  CHECK_CONTAINS(err.msg, "gpu.nothing");
  gen_case_free(&b);
  /* an empty set: the bytes of before (no "avoid" key) */
  gen_config_default(&cfg);
  CHECK_EQ(gen_generate(&a, 42, &cfg, &err), 0);
  ja = gen_case_to_json(&a);
  CHECK(strstr(ja, "avoid") == NULL);
  af_free(ja);
  gen_case_free(&a);
}

int main(void) {
  travels();
  one_form("gpu.launch_func async deps=2+", "joined by gpu.wait async", 1, 1);
  one_form("gpu.launch_func async deps=1", "a host wait, then no dependency", 0, 1);
  one_form("gpu.alloc async deps=0", "a fresh gpu.wait async token", 0, 1);
  one_form("gpu.alloc", "asynchronous instead of synchronous", 0, 0);
  one_form("gpu.dealloc async", "synchronous instead of asynchronous", 0, 0);
  asyncfuzz_rt_shutdown();
  return TEST_DONE("test_avoid");
}
