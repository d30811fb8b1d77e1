/*
 * test_alloc.c: every allocation goes through af_set_allocator's hook. Counting through it
 * shows a whole pipeline run (generate, validate, JSON, lower, run, judge) frees what it
 * allocates; failing the Nth allocation, for every N, shows each step fails cleanly with
 * AF_ENOMEM (or copes) and never crashes or leaks. Also checks the PRNG and text buffer.
 */
#include "../check/check.h"
#include "test.h"

#include <stdarg.h>

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
  /* the stream itself (xoshiro256** seeded by splitmix64, values from a separate implementation):
   * a seed in a stored failure must give the same case and schedules in a later build */
  af_rng_seed(&a, 42);
  CHECK_EQ(af_rng_next(&a), 0x15780b2e0c2ec716ull);
  CHECK_EQ(af_rng_next(&a), 0x6104d9866d113a7eull);
  CHECK_EQ(af_rng_next(&a), 0xae17533239e499a1ull);
  CHECK_EQ(af_rng_below(&a, 1000), 924);
  CHECK_EQ(af_rng_below(&a, 1000), 991);
  CHECK_EQ(af_rng_chance(&a, 77), 1); /* (the draw is 76 of 100) */
  /* input bytes first (one per choice among up to 256, two up to 65,536), then the generator */
  static const uint8_t in[] = {7, 200, 1, 2};
  af_rng_bytes(&a, in, sizeof in, 9);
  CHECK_EQ(af_rng_below(&a, 10), 7);
  CHECK_EQ(af_rng_below(&a, 300), (200 << 8 | 1) % 300);
  CHECK_EQ(af_rng_below(&a, 10), 2);
  CHECK_EQ(af_rng_below(&a, 1000), 2);
  CHECK_EQ(af_rng_below(&a, 1000), 251);
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

/* af_vfmt_fast against vsnprintf, through a varargs wrapper. */
static int fast(char *out, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = af_vfmt_fast(out, cap, fmt, ap);
  va_end(ap);
  return n;
}

/* The fast formatter gives vsnprintf's text for its formats, refuses others and texts that do
 * not fit, and af_buf_printf gives vsnprintf's text either way. */
static void test_fast_format(void) {
  AfRng r;
  af_rng_seed(&r, 3);
  static const long long edge[] = {0,
                                   1,
                                   -1,
                                   9,
                                   10,
                                   -10,
                                   2147483647LL,
                                   -2147483647LL - 1,
                                   9223372036854775807LL,
                                   -9223372036854775807LL - 1};
  char a[256], b[256];
  for (int i = 0; i < 20000; i++) {
    long long x = i < 10 ? edge[i] : (long long)af_rng_next(&r) >> af_rng_below(&r, 64);
    int xi = (int)x;
    const char *s = i % 3 ? "gpu.wait async" : "";
    int n = fast(a, sizeof a, "[%s] %d %i %u %ld %lld %llu %zu %c%%", s, xi, xi, (unsigned)x,
                 (long)x, x, (unsigned long long)x, (size_t)x, 'A' + i % 26);
    int m = snprintf(b, sizeof b, "[%s] %d %i %u %ld %lld %llu %zu %c%%", s, xi, xi, (unsigned)x,
                     (long)x, x, (unsigned long long)x, (size_t)x, 'A' + i % 26);
    CHECK_EQ(n, m);
    CHECK_STR(a, b);
  }
  CHECK_EQ(fast(a, sizeof a, "%5d", 3), -1); /* width, precision, flags, other conversions */
  CHECK_EQ(fast(a, sizeof a, "%.2f", 1.5), -1);
  CHECK_EQ(fast(a, sizeof a, "%-3s|", "x"), -1);
  CHECK_EQ(fast(a, sizeof a, "%x", 255u), -1);
  CHECK_EQ(fast(a, 4, "%s", "abc"), 3); /* a text of cap bytes or more does not fit */
  CHECK_EQ(fast(a, 4, "%s", "abcd"), -1);
  CHECK_EQ(fast(a, 4, "abcd"), -1);
  CHECK_EQ(fast(a, sizeof a, "no conversion"), 13);
  CHECK_STR(a, "no conversion");
  AfBuf buf; /* af_buf_printf: the fast text, or vsnprintf's, long or not */
  af_buf_init(&buf);
  af_buf_printf(&buf, "%d|%5d|%x|%.1f|%s", -42, 7, 255u, 0.25, "z");
  CHECK_STR(buf.p, "-42|    7|ff|0.2|z");
  char big[600];
  memset(big, 'q', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  af_buf_reset(&buf);
  af_buf_printf(&buf, "%s:%d", big, 5);
  CHECK_EQ(buf.len, sizeof big + 1);
  CHECK_STR(buf.p + sizeof big - 1, ":5");
  af_buf_free(&buf);
}

/* AfLayout: arrays laid out one after another, each 16-byte aligned; a size that overflows makes
 * the block's size SIZE_MAX, which no allocation meets (malloc's NULL). af_grow calls the allocator
 * only when the array has no room. */
static void test_layout_and_grow(void) {
  AfLayout l = {0};
  CHECK_EQ(af_lay(&l, 3, sizeof(int32_t)), 0);
  CHECK_EQ(l.size, 12);
  CHECK_EQ(af_lay(&l, 2, sizeof(double)), 16);
  CHECK_EQ(l.size, 32);
  CHECK_EQ(af_lay(&l, 5, 1), 32);
  CHECK_EQ(af_lay(&l, 0, 8), 48);
  CHECK_EQ(l.size, 48);
  char *blk = af_calloc(1, l.size);
  CHECK(blk != NULL);
  for (size_t i = 0; blk && i < l.size; i++)
    CHECK_EQ(blk[i], 0);
  af_free(blk);
  AfLayout big = {0};
  af_lay(&big, 1, 1);
  CHECK_EQ(af_lay(&big, SIZE_MAX / 4, 8), 0);
  CHECK_EQ(big.size, SIZE_MAX);
  af_lay(&big, 1, 1);
  CHECK_EQ(big.size, SIZE_MAX);
  /* (no allocation of it here: a sanitized build aborts on a size that large, not NULL) */
  af_set_allocator(hook, NULL);
  long before = total;
  int *a = NULL, cap = 0;
  CHECK_EQ(af_grow((void **)&a, &cap, 5, sizeof *a), 0);
  CHECK_EQ(cap, 8);
  CHECK_EQ(total, before + 1);
  CHECK_EQ(af_grow((void **)&a, &cap, 8, sizeof *a), 0); /* room: no call */
  CHECK_EQ(total, before + 1);
  CHECK_EQ(af_grow((void **)&a, &cap, 9, sizeof *a), 0);
  CHECK_EQ(cap, 16);
  CHECK_EQ(total, before + 2);
  af_free(a);
  af_set_allocator(NULL, NULL);
}

int main(void) {
  test_layout_and_grow();
  test_rng_and_buf();
  test_fast_format();
  test_no_leaks_and_oom();
  return TEST_DONE("test_alloc");
}
