/*
 * test_alloc.c: every allocation goes through af_set_allocator's hook. Counting through it
 * shows a whole pipeline run (generate, validate, JSON, lower, run, judge) frees what it
 * allocates; failing the Nth allocation, for every N, shows each step fails cleanly with
 * AF_ENOMEM (or copes) and never crashes or leaks. Also checks the PRNG and text buffer.
 */
#include "../check/check.h"
#include "test.h"

static long live, total, fail_at = -1;

static void *hook(void *ud, void *p, size_t n) {
  (void)ud;
  if (n == 0) {
    if (p) {
      live--;
      free(p);
    }
    return NULL;
  }
  total++;
  if (fail_at >= 0 && total == fail_at)
    return NULL;
  if (p == NULL)
    live++;
  return realloc(p, n);
}

/* One full trip through the pipeline; returns the first error code (0: all ran). */
static int trip(uint64_t seed) {
  GenConfig cfg;
  gen_config_default(&cfg);
  cfg.region_pct = 30;
  GenCase c, d;
  AfErr err = {0};
  int rc = gen_generate(&c, seed, &cfg, &err);
  if (rc == 0)
    rc = gen_validate(&c, &err);
  char *json = rc == 0 ? gen_case_to_json(&c) : NULL;
  if (rc == 0 && json == NULL)
    rc = AF_ENOMEM;
  if (rc == 0) {
    rc = gen_case_from_json(&d, json, &err);
    gen_case_free(&d);
  }
  af_free(json);
  char *mlir = rc == 0 ? gen_render_mlir(&c) : NULL;
  if (rc == 0 && mlir == NULL)
    rc = AF_ENOMEM;
  af_free(mlir);
  LowerSpec spec;
  if (rc == 0)
    rc = lower_spec_parse("builtin:fault=yield_stream", &spec, &err);
  if (rc == 0) {
    Schedule s[2] = {{RT_LAZY, 1}, {RT_RANDOM, 2}};
    CheckResult r;
    rc = check_case(&c, &spec, s, 2, NULL, NULL, &r, &err);
    if (rc)
      CHECK_EQ(rc, AF_ENOMEM);
  }
  gen_case_free(&c);
  asyncfuzz_rt_shutdown();
  return rc;
}

static void test_no_leaks_and_oom(void) {
  af_set_allocator(hook, NULL);
  live = total = 0;
  fail_at = -1;
  CHECK_EQ(trip(3), 0);
  CHECK_EQ(live, 0);
  long n = total;
  CHECK(n > 50);
  int failures = 0;
  for (long k = 1; k <= n; k++) {
    live = total = 0;
    fail_at = k;
    int rc = trip(3);
    failures += rc != 0;
    if (rc == 0)
      fprintf(stderr, "allocation %ld failed but the trip reported success\n", k);
    if (rc != 0 && rc != AF_ENOMEM)
      fprintf(stderr, "allocation %ld failed: rc %d\n", k, rc);
    CHECK(rc == 0 || rc == AF_ENOMEM);
    if (live != 0)
      fprintf(stderr, "allocation %ld failed: %ld allocation(s) leaked\n", k, live);
    CHECK_EQ(live, 0);
  }
  fail_at = -1;
  af_set_allocator(NULL, NULL);
  printf("allocation failures: %ld allocations per trip; %d of the failed-allocation trips "
         "ended in AF_ENOMEM, none crashed or leaked\n",
         n, failures);
  CHECK_EQ(failures, n); /* no allocation failure is swallowed */
}

static void test_rng_and_buf(void) {
  AfRng a, b;
  af_rng_seed(&a, 42);
  af_rng_seed(&b, 42);
  for (int i = 0; i < 1000; i++)
    CHECK_EQ(af_rng_next(&a), af_rng_next(&b));
  int hist[10] = {0};
  for (int i = 0; i < 100000; i++)
    hist[af_rng_below(&a, 10)]++;
  for (int i = 0; i < 10; i++)
    CHECK(hist[i] > 9000 && hist[i] < 11000);
  AfBuf buf;
  af_buf_init(&buf);
  for (int i = 0; i < 1000; i++)
    af_buf_printf(&buf, "%d,", i);
  CHECK_EQ(buf.len, 3890);
  CHECK(strncmp(buf.p, "0,1,2,", 6) == 0);
  char *t = af_buf_take(&buf);
  CHECK_EQ(strlen(t), 3890);
  af_free(t);
  CHECK_STR(af_errname(AF_EPARSE), "AF_EPARSE");
  CHECK_STR(af_strerror(AF_ENOMEM), "out of memory");
}

int main(void) {
  test_rng_and_buf();
  test_no_leaks_and_oom();
  return TEST_DONE("test_alloc");
}
