/*
 * test_lower.c: golden tests of the builtin lowering on the corpus (the exact mgpu* call
 * program), the oracle's expected values (computed by hand from the kernel formulas), and
 * each corpus case passing under every policy with the correct lowering and failing under
 * the fault switch that matches its upstream bug. argv[1]: the source directory.
 */
#include "../check/check.h"
#include "test.h"

static const char *srcdir = "..";

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return NULL;
  AfBuf b;
  af_buf_init(&b);
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
    af_buf_put(&b, chunk, n);
  fclose(f);
  return af_buf_take(&b);
}

static void load(const char *name, GenCase *c) {
  char path[1024];
  snprintf(path, sizeof path, "%s/corpus/%s.json", srcdir, name);
  AfErr err = {0};
  int rc = gen_case_load(c, path, &err);
  if (rc == 0)
    rc = gen_validate(c, &err);
  if (rc)
    fprintf(stderr, "%s: %s\n", path, err.msg);
  CHECK_EQ(rc, 0);
}

static const char *corpus[] = {"region-launch-yield", "launch-two-deps", "sync-alloc-dealloc",
                               "memcpy-two-deps-dealloc", "region-chain"};
#define NCORPUS (sizeof corpus / sizeof corpus[0])

static void test_golden(void) {
  for (size_t i = 0; i < NCORPUS; i++) {
    GenCase c;
    load(corpus[i], &c);
    LowerSpec spec;
    AfErr err = {0};
    CHECK_EQ(lower_spec_parse("builtin", &spec, &err), 0);
    LowerProgram *p = NULL;
    CHECK_EQ(lower_builtin(&c, &spec, &p, &err), 0);
    char *got = p ? lower_program_to_text(p) : NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/golden/%s.builtin.txt", srcdir, corpus[i]);
    char *want = slurp(path);
    if (want == NULL || got == NULL || strcmp(got, want) != 0)
      fprintf(stderr,
              "golden mismatch for %s: if the change is intended, review `asyncfuzz lower "
              "corpus/%s.json` and update %s\n",
              corpus[i], corpus[i], path);
    CHECK_STR(got, want);
    af_free(got);
    af_free(want);
    lower_program_free(p);
    gen_case_free(&c);
  }
}

static void expect(const char *name, const int32_t *vals, int n) {
  GenCase c;
  load(name, &c);
  OracleExpected *e = NULL;
  AfErr err = {0};
  CHECK_EQ(oracle_expect(&c, &e, &err), 0);
  CHECK(e != NULL && e->nobs >= 1);
  if (e && e->nobs >= 1) {
    const OracleObs *o = &e->obs[e->nobs - 1];
    CHECK_EQ(o->n, n);
    for (int i = 0; i < n && i < o->n; i++)
      CHECK_EQ(o->vals[i], vals[i]);
  }
  oracle_expected_free(e);
  gen_case_free(&c);
}

static void test_oracle_values(void) {
  /* af_fill: v*7+i; af_combine: a + b*5 + v; host init: init*1000+i */
  int32_t ryield[] = {294, 295};
  expect("region-launch-yield", ryield, 2);
  int32_t two[8];
  for (int i = 0; i < 8; i++)
    two[i] = (7 + i) + (14 + i) * 5 + 3;
  expect("launch-two-deps", two, 8);
  int32_t sync[] = {7, 7, 7, 7};
  expect("sync-alloc-dealloc", sync, 4);
  int32_t copy[8];
  for (int i = 0; i < 8; i++)
    copy[i] = 3000 + i;
  expect("memcpy-two-deps-dealloc", copy, 8);
  int32_t chain[] = {35, 36, 37, 38};
  expect("region-chain", chain, 4);
}

static CheckResult check(const GenCase *c, const char *lowering, const char *scheds) {
  LowerSpec spec;
  AfErr err = {0};
  CHECK_EQ(lower_spec_parse(lowering, &spec, &err), 0);
  Schedule s[CHECK_MAX_SCHED];
  int ns = 0;
  CHECK_EQ(check_parse_schedules(scheds, 7, s, CHECK_MAX_SCHED, &ns, &err), 0);
  CheckResult r;
  CHECK_EQ(check_case(c, &spec, s, ns, NULL, NULL, &r, &err), 0);
  return r;
}

static void test_corpus_verdicts(void) {
  for (size_t i = 0; i < NCORPUS; i++) {
    GenCase c;
    load(corpus[i], &c);
    CheckResult r = check(&c, "builtin", "eager,lazy,random:8,pct:8");
    CHECK_EQ(r.nsched, 18);
    CHECK_EQ(r.first_fail, -1);
    /* every stream and event the lowering made was destroyed exactly once */
    RtSummary sum;
    asyncfuzz_rt_summary(&sum);
    CHECK_EQ(sum.streams_leaked, 0);
    CHECK_EQ(sum.events_leaked, 0);
    CHECK_EQ(sum.nerrors, 0);
    gen_case_free(&c);
  }
  struct {
    const char *name, *fault, *sched;
    int cls;
    const char *sig;
  } bugs[] = {
      {"region-launch-yield", "builtin:fault=yield_stream", "eager", VERDICT_RUNTIME_ERROR,
       "mgpuEventSynchronize|CUDA_ERROR_INVALID_HANDLE|handle of the wrong kind|given=stream"},
      {"launch-two-deps", "builtin:fault=drop_extra_deps", "lazy", VERDICT_RACE,
       "race|missing-edge|data_race.RAW|launch.af_fill->launch.af_combine|stream->stream|"
       "dependency"},
      {"sync-alloc-dealloc", "builtin:fault=drop_host_wait", "lazy", VERDICT_RACE,
       "race|missing-edge|host_read_before_complete|memcpy.D2H->observe|stream->host|host-sync"},
      {"memcpy-two-deps-dealloc", "builtin:fault=free_unordered", "lazy", VERDICT_LIFETIME,
       "lifetime|free_while_in_use|memcpy.H2D->dealloc"},
      {"region-chain", "builtin:fault=yield_stream", "lazy", VERDICT_RUNTIME_ERROR,
       "mgpuStreamWaitEvent|CUDA_ERROR_INVALID_HANDLE"},
  };
  for (size_t i = 0; i < sizeof bugs / sizeof bugs[0]; i++) {
    GenCase c;
    load(bugs[i].name, &c);
    CheckResult r = check(&c, bugs[i].fault, bugs[i].sched);
    CHECK_EQ(r.first_fail, 0);
    CHECK_EQ(r.verdict[0].cls, bugs[i].cls);
    CHECK_CONTAINS(r.verdict[0].signature, bugs[i].sig);
    CHECK_CONTAINS(r.verdict[0].signature, bugs[i].fault);
    /* the checker finds the same cause under eager, where the data come out right */
    CheckResult q = check(&c, bugs[i].fault, "eager");
    CHECK_EQ(q.first_fail, 0);
    CHECK(!q.verdict[0].obs_failed);
    CHECK_STR(q.verdict[0].signature, r.verdict[0].signature);
    gen_case_free(&c);
  }
  /* the #170833 shape: under lazy the host also reads stale data */
  GenCase c;
  load("region-launch-yield", &c);
  CheckResult r = check(&c, "builtin:fault=yield_stream", "lazy");
  CHECK(r.verdict[0].obs_failed);
  CHECK(r.verdict[0].rt_failed);
  CHECK_CONTAINS(r.verdict[0].detail, "expected 294, got 0 (stale)");
  gen_case_free(&c);
}

static void test_spec_parse(void) {
  LowerSpec s;
  AfErr err = {0};
  CHECK_EQ(lower_spec_parse("builtin:fault=record_early,yield_stream", &s, &err), 0);
  CHECK_STR(s.name, "builtin:fault=yield_stream,record_early");
  af_err_clear(&err);
  CHECK_EQ(lower_spec_parse("builtin:fault=nonsense", &s, &err), AF_EUSAGE);
  CHECK_CONTAINS(err.msg, "unknown fault \"nonsense\"");
  af_err_clear(&err);
  CHECK_EQ(lower_spec_parse("llvm", &s, &err), AF_EUSAGE);
  CHECK_CONTAINS(err.msg, "yield_stream");
}

int main(int argc, char **argv) {
  if (argc > 1)
    srcdir = argv[1];
  test_golden();
  test_oracle_values();
  test_corpus_verdicts();
  test_spec_parse();
  asyncfuzz_rt_shutdown();
  return TEST_DONE("test_lower");
}
