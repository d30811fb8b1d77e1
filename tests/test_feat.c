/*
 * test_feat.c: features attributed to the cases of a batch (base/feat.h: what guided runs with
 * deferred feedback credit each input with), the action log's features by the lines of each
 * case (lower/mlir_feat.c), and the SHA-1 corpus files are named by (base/sha1.c). With an
 * mlir-opt (argv[1]): the features each case of a --split-input-file batch is credited with are
 * those it reaches lowered alone.
 */
#include "test.h"

#include "../base/afbase.h"
#include "../base/feat.h"
#include "../base/proc.h"
#include "../base/sha1.h"
#include "../gen/gen.h"
#include "../lower/lower.h"
#include "../lower/mlir.h"

/* The slot of feature (kind, text): what attribution notes for a case that adds it alone. */
static uint32_t slot_of(int kind, const char *text) {
  int n = 0;
  CHECK_EQ(af_feat_attribute(1), 0);
  af_feat_case(0);
  af_feat_add(kind, text, strlen(text));
  const uint32_t *s = af_feat_case_slots(0, &n);
  CHECK_EQ(n, 1);
  uint32_t slot = n ? s[0] : 0;
  af_feat_attribute(0);
  return slot;
}

/* Whether case j was noted with slot. */
static int noted(int j, uint32_t slot) {
  int n;
  const uint32_t *s = af_feat_case_slots(j, &n);
  for (int i = 0; i < n; i++)
    if (s[i] == slot)
      return 1;
  return 0;
}

static void sha1_vectors(void) {
  char h[41];
  af_sha1_hex("", 0, h);
  CHECK_STR(h, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  af_sha1_hex("abc", 3, h);
  CHECK_STR(h, "a9993e364706816aba3e25717850c26c9cd0d89d");
  /* 56 bytes: the length no longer fits the block, a second one holds it */
  const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  af_sha1_hex(m, strlen(m), h);
  CHECK_STR(h, "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  char *a = malloc(1000000);
  CHECK(a != NULL);
  if (a) {
    memset(a, 'a', 1000000);
    af_sha1_hex(a, 1000000, h);
    CHECK_STR(h, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    free(a);
  }
  af_sha1_hex("\n", 1, h); /* (the name libFuzzer gives its one-newline input) */
  CHECK_STR(h, "adc83b19e793491b1c6ea0fd8b46cd9f32e592fc");
}

static void attribution(void) {
  static uint8_t counters[AF_FEAT_N];
  CHECK_EQ(af_feat_enable(1), 0);
  af_feat_set_counters(counters, sizeof counters);
  uint32_t sa = slot_of(AF_FEAT_SHAPE, "a"), sb = slot_of(AF_FEAT_SHAPE, "b");
  uint32_t sc = slot_of(AF_FEAT_EDGE, "c");
  memset(counters, 0, sizeof counters);
  /* without attribution a feature sets its counter */
  af_feat_add(AF_FEAT_SHAPE, "a", 1);
  CHECK_EQ(counters[sa], 1);
  counters[sa] = 0;
  /* with it: no counter; each case its own distinct slots; none for no case or when paused */
  CHECK_EQ(af_feat_attribute(3), 0);
  af_feat_case(0);
  af_feat_add(AF_FEAT_SHAPE, "a", 1);
  af_feat_add(AF_FEAT_SHAPE, "a", 1);
  af_feat_case(1);
  af_feat_add(AF_FEAT_SHAPE, "a", 1);
  af_feat_add(AF_FEAT_SHAPE, "b", 1);
  af_feat_pause(1);
  af_feat_add(AF_FEAT_EDGE, "c", 1);
  af_feat_case(2); /* (a case set while paused notes nothing either) */
  af_feat_add(AF_FEAT_EDGE, "c", 1);
  af_feat_pause(0);
  af_feat_case(-1);
  af_feat_add(AF_FEAT_EDGE, "c", 1);
  af_feat_case(7); /* (past the batch: no case) */
  CHECK_EQ(af_feat_current_case(), -1);
  af_feat_add(AF_FEAT_EDGE, "c", 1);
  int n0, n1, n2;
  af_feat_case_slots(0, &n0);
  af_feat_case_slots(1, &n1);
  af_feat_case_slots(2, &n2);
  CHECK_EQ(n0, 1);
  CHECK_EQ(n1, 2);
  CHECK_EQ(n2, 0);
  CHECK(noted(0, sa) && noted(1, sa) && noted(1, sb) && !noted(0, sb) && !noted(1, sc));
  for (size_t i = 0; i < sizeof counters; i++)
    if (counters[i])
      CHECK_EQ(i, -1); /* no counter set while attributing */
  /* credit: case 1's slots set their counters */
  const uint32_t *s1 = af_feat_case_slots(1, &n1);
  af_feat_credit(s1, n1);
  CHECK(counters[sa] == 1 && counters[sb] == 1 && counters[sc] == 0);
  /* the set of the process still counts what came while attributing */
  CHECK_EQ(af_feat_add(AF_FEAT_EDGE, "c", 1), 0);
  af_feat_attribute(0);
  CHECK_EQ(af_feat_case_slots(1, &n1) == NULL, 1);
  af_feat_set_counters(NULL, 0);
  af_feat_enable(0);
}

/* The features written out (af_feat_write): one line each, the kind's name and the first text
 * that took the slot, sorted, as many as the set counts; a reset forgets them. */
static void written(void) {
  CHECK_EQ(af_feat_enable(1), 0);
  const char *shape = "gpu.wait async deps=2+ in main";
  const char *calls = "mgpuStreamCreate mgpuMemAlloc mgpuEventCreate";
  af_feat_add(AF_FEAT_SHAPE, shape, strlen(shape));
  af_feat_add(AF_FEAT_EDGE, "a\tb\nc", 5);
  af_feat_add(AF_FEAT_CALLS, calls, strlen(calls));
  af_feat_add(AF_FEAT_SHAPE, shape, strlen(shape)); /* (a repeat: no line) */
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK(f != NULL);
  if (f == NULL)
    return;
  CHECK_EQ(af_feat_write(f), 3);
  fclose(f);
  CHECK_EQ(af_feat_count(-1), 3);
  CHECK_STR(buf, "calls\tmgpuStreamCreate mgpuMemAlloc mgpuEventCreate\n"
                 "edge\ta b c\n"
                 "shape\tgpu.wait async deps=2+ in main\n");
  free(buf);
  af_feat_reset();
  buf = NULL;
  f = open_memstream(&buf, &len);
  CHECK(f != NULL);
  if (f) {
    CHECK_EQ(af_feat_write(f), 0);
    fclose(f);
    CHECK_EQ(len, 0);
    free(buf);
  }
  af_feat_enable(0);
}

/* An action log's features go to the case whose lines its ops are located at. */
static void log_by_lines(void) {
  CHECK_EQ(af_feat_enable(1), 0);
  const char *log =
      "[thread x] begins (no breakpoint) Action `pass-execution` running `P` on Operation "
      "`builtin.module` (module {...} loc(\"batch.mlir\":1:1))`\n"
      "[thread x] begins (no breakpoint) Action `apply-pattern pattern: A (scf.if %2 {...} "
      "loc(unknown))`\n"
      "[thread x] begins (no breakpoint) Action `apply-pattern pattern: B (%1 = \"gpu.wait\"() : "
      "() -> !gpu.async.token loc(\"batch.mlir\":4:7))`\n"
      "[thread x] begins (no breakpoint) Action `pass-execution` running `P` on Operation "
      "`builtin.module` (module {...} loc(\"batch.mlir\":10:1))`\n"
      "[thread x] begins (no breakpoint) Action `apply-pattern pattern: C (%1 = \"gpu.wait\"() : "
      "() -> !gpu.async.token loc(fused[\"batch.mlir\":12:3, \"x\":1:1]))`\n"
      "[thread x] begins (no breakpoint) Action `apply-pattern pattern: D (scf.if %2 {...} "
      "loc(unknown))`\n";
  long first[2] = {1, 10};
  CHECK_EQ(af_feat_attribute(2), 0);
  mlir_feat_lines(first, NULL, 2);
  mlir_feat_actions(log);
  mlir_feat_lines(NULL, NULL, 0);
  CHECK_EQ(af_feat_current_case(), -1); /* (as it was before) */
  int n[2];
  uint32_t got[2][16];
  for (int j = 0; j < 2; j++) {
    const uint32_t *s = af_feat_case_slots(j, &n[j]);
    CHECK(n[j] <= 16);
    memcpy(got[j], s, sizeof *s * (size_t)(n[j] < 16 ? n[j] : 16));
  }
  /* case 0: A (after its module's pass), B, the pair A then B; case 1: C, D, C then D */
  CHECK_EQ(n[0], 3);
  CHECK_EQ(n[1], 3);
  uint32_t want[2][3] = {
      {slot_of(AF_FEAT_PATTERN, "A on scf.if/0"), slot_of(AF_FEAT_PATTERN, "B on gpu.wait/1"),
       slot_of(AF_FEAT_PATTERN_PAIR, "A then B")},
      {slot_of(AF_FEAT_PATTERN, "C on gpu.wait/1"), slot_of(AF_FEAT_PATTERN, "D on scf.if/0"),
       slot_of(AF_FEAT_PATTERN_PAIR, "C then D")}};
  for (int j = 0; j < 2; j++)
    for (int w = 0; w < 3; w++) {
      int hit = 0;
      for (int i = 0; i < n[j] && i < 16; i++)
        hit |= got[j][i] == want[j][w];
      if (!hit)
        fprintf(stderr, "case %d lacks feature %d\n", j, w);
      CHECK(hit);
    }
  /* cases named by the caller, and lines before the first case's: none */
  int ids[2] = {1, 0};
  CHECK_EQ(af_feat_attribute(2), 0);
  long later[2] = {4, 10};
  mlir_feat_lines(later, ids, 2);
  mlir_feat_actions(log);
  mlir_feat_lines(NULL, NULL, 0);
  int m0, m1;
  af_feat_case_slots(0, &m0);
  af_feat_case_slots(1, &m1);
  CHECK_EQ(m1, 2); /* B (line 4), and A then B (a pair: its second's); A came before line 4 */
  CHECK_EQ(m0, 3);
  af_feat_attribute(0);
  af_feat_enable(0);
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* The sorted slots of case j, into out (at most cap); how many. */
static int sorted_slots(int j, uint32_t *out, int cap) {
  int n;
  const uint32_t *s = af_feat_case_slots(j, &n);
  n = n < cap ? n : cap;
  memcpy(out, s, sizeof *out * (size_t)n);
  qsort(out, (size_t)n, sizeof *out, cmp_u32);
  return n;
}

/* Through mlir-opt: a batch's chunks, each case credited with what it reaches alone. */
static void batch_against_alone(const char *opt) {
  char spec_text[4200];
  snprintf(spec_text, sizeof spec_text, "mlir-opt@default/nvvm:%s", opt);
  LowerSpec spec;
  AfErr err = {0};
  if (lower_spec_parse(spec_text, &spec, &err) != 0) {
    fprintf(stderr, "%s: %s\n", spec_text, err.msg);
    CHECK(0);
    return;
  }
  enum { N = 4, CAP = 4096 };
  GenCase cs[N];
  char *chunks[N];
  GenConfig cfg;
  gen_config_default(&cfg);
  cfg.ops = 10;
  for (int i = 0; i < N; i++) {
    CHECK_EQ(gen_generate(&cs[i], 40 + (uint64_t)i, &cfg, &err), 0);
    const GenCase *one = &cs[i];
    int zero = 0;
    chunks[i] = gen_render_mlir_group_map(&one, &zero, 1, 3, NULL);
    CHECK(chunks[i] != NULL);
  }
  char dir[4096];
  CHECK_EQ(mlir_tmpdir(dir, sizeof dir, &err), 0);
  CHECK_EQ(af_feat_enable(1), 0);
  static uint32_t batch[N][CAP], alone[CAP];
  int nb[N];
  MlirLowered low[N];
  CHECK_EQ(af_feat_attribute(N), 0);
  CHECK_EQ(mlir_lower_group(&spec, dir, chunks, N, low, &err), 0);
  for (int i = 0; i < N; i++)
    nb[i] = sorted_slots(i, batch[i], CAP);
  mlir_lowered_free(low, N);
  int total = 0;
  for (int i = 0; i < N; i++) {
    MlirLowered one;
    CHECK_EQ(af_feat_attribute(1), 0);
    af_feat_case(0);
    CHECK_EQ(mlir_lower_group(&spec, dir, &chunks[i], 1, &one, &err), 0);
    int na = sorted_slots(0, alone, CAP);
    mlir_lowered_free(&one, 1);
    if (na != nb[i] || memcmp(alone, batch[i], sizeof *alone * (size_t)na) != 0)
      fprintf(stderr, "case %d: %d feature(s) in the batch, %d alone\n", i, nb[i], na);
    CHECK_EQ(nb[i], na);
    CHECK(memcmp(alone, batch[i], sizeof *alone * (size_t)(na < nb[i] ? na : nb[i])) == 0);
    total += na;
  }
  printf("mlir-opt batch of %d: %d feature(s) credited to its cases, as each alone\n", N, total);
  CHECK(total > 40 * N); /* (patterns, pairs, calls: some hundreds per case) */
  af_feat_attribute(0);
  af_feat_enable(0);
  af_rm_tree(dir);
  for (int i = 0; i < N; i++) {
    af_free(chunks[i]);
    gen_case_free(&cs[i]);
  }
}

int main(int argc, char **argv) {
  sha1_vectors();
  attribution();
  written();
  log_by_lines();
  if (argc > 1 && argv[1][0])
    batch_against_alone(argv[1]);
  else
    test_skip("a batch's attribution against each case alone", "no mlir-opt given (mlir-22-tools)");
  return TEST_DONE("test_feat");
}
