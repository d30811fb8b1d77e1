/*
 * test_mutate.c: guided generation's inputs and moves. Every byte string makes a valid case
 * (gen_generate_bytes), the same bytes the same case; every structure-aware mutation and splice
 * gives a valid case (its JSON read back and validated), over chains of 10,000 mutations, and
 * the correct builtin lowering passes them all (a move that made a case whose meaning the oracle
 * gets wrong would show as a false alarm); each move is used. The feature map: a known case sets
 * the features it should (a dependency edge, a shape in its context, the builtin program's
 * calls), and the same case again sets no new one.
 */
#include "../base/feat.h"
#include "../check/check.h"
#include "../lower/mlir.h"
#include "../reduce/reduce.h"
#include "test.h"

/* Where renumbered case a differs from b, the case its JSON reads back as (NULL: nowhere): the
 * JSON, and the numbers the JSON does not show (op order, contexts, blocks, tokens, streams). */
static const char *renumber_differs(const GenCase *a, const GenCase *b) {
  if (a->nops != b->nops || a->nregions != b->nregions || a->nblocks != b->nblocks ||
      a->ntoks != b->ntoks || a->nstreams != b->nstreams || a->nbufs != b->nbufs)
    return "counts";
  char *ja = gen_case_to_json(a), *jb = gen_case_to_json(b);
  int same = ja && jb && strcmp(ja, jb) == 0;
  af_free(ja), af_free(jb);
  if (!same)
    return "JSON";
  for (int i = 0; i < a->nops; i++) {
    const GenOp *x = &a->ops[i], *y = &b->ops[i];
    if (x->kind != y->kind || x->ctx != y->ctx || x->blk != y->blk || x->tok != y->tok ||
        x->ndeps != y->ndeps || x->stream != y->stream)
      return "op";
    for (int d = 0; d < x->ndeps; d++)
      if (x->deps[d] != y->deps[d])
        return "dependency";
    if (((gen_op_flags(x->kind) & GEN_K_REGION) || x->kind == GEN_OP_AWAIT) &&
        x->region != y->region)
      return "region of an op";
    if ((gen_op_flags(x->kind) & GEN_K_BLOCK) && x->block != y->block)
      return "block of an op";
  }
  for (int r = 1; r < a->nregions; r++)
    if (a->regions[r].exec_op != b->regions[r].exec_op ||
        a->regions[r].parent != b->regions[r].parent ||
        a->regions[r].first != b->regions[r].first || a->regions[r].last != b->regions[r].last)
      return "region";
  for (int k = 1; k < a->nblocks; k++)
    if (a->blocks[k].op != b->blocks[k].op || a->blocks[k].first != b->blocks[k].first ||
        a->blocks[k].last != b->blocks[k].last || a->blocks[k].yield != b->blocks[k].yield)
      return "block";
  return NULL;
}

static int renumbered; /* cases renumbered otherwise than they were */

/* c's JSON read back and validated (what a corpus entry goes through), and c renumbered: the
 * same case. */
static int roundtrip_valid(const GenCase *c) {
  char *json = gen_case_to_json(c);
  GenCase back;
  AfErr err = {0};
  int rc = json ? gen_case_from_json(&back, json, &err) : -1;
  if (rc == 0) {
    rc = gen_validate(&back, &err);
    if (rc)
      fprintf(stderr, "mutated case invalid after its JSON: %s\n%s\n", err.msg, json);
    GenCase ren;
    CHECK_EQ(gen_case_renumber(c, &ren, &err), 0);
    const char *d = renumber_differs(&ren, &back);
    if (d)
      fprintf(stderr, "renumbered case differs from its JSON read back: %s\n%s\n", d, json);
    CHECK(d == NULL);
    rc |= d != NULL;
    char *again = gen_case_to_json(&ren);
    renumbered += again && strcmp(again, json) != 0;
    af_free(again);
    gen_case_free(&ren);
    gen_case_free(&back);
  } else {
    fprintf(stderr, "mutated case unreadable: %s\n", err.msg);
  }
  af_free(json);
  return rc;
}

/* The correct lowering passes c under two schedules. */
static int passes(const GenCase *c, const LowerSpec *spec, uint64_t seed) {
  Schedule s[2] = {{RT_LAZY, seed}, {RT_RANDOM, seed}};
  CheckResult r;
  CheckOpts o = {0};
  o.stop_at_first = 1;
  AfErr err = {0};
  if (check_case(c, spec, s, 2, NULL, &o, &r, &err) != 0)
    return 0;
  if (r.first_fail >= 0)
    fprintf(stderr, "false alarm: %s\n", r.verdict[r.first_fail].signature);
  return r.first_fail < 0;
}

static void bytes_make_cases(const LowerSpec *spec) {
  GenConfig cfg;
  gen_config_default(&cfg);
  AfRng r;
  af_rng_seed(&r, 1);
  for (int i = 0; i < 300; i++) {
    uint8_t data[512];
    size_t n = af_rng_below(&r, sizeof data);
    for (size_t k = 0; k < n; k++)
      data[k] = (uint8_t)af_rng_below(&r, 256);
    GenCase a, b;
    AfErr err = {0};
    CHECK_EQ(gen_generate_bytes(&a, data, n, &cfg, i % 2, &err), 0);
    CHECK_EQ(gen_generate_bytes(&b, data, n, &cfg, i % 2, &err), 0);
    CHECK_EQ(gen_case_hash(&a), gen_case_hash(&b));
    CHECK_EQ(gen_validate(&a, &err), 0);
    CHECK(passes(&a, spec, (uint64_t)i));
    if (n > 0) { /* one byte changed: still a valid case */
      data[af_rng_below(&r, (uint32_t)n)] ^= 0x5a;
      gen_case_free(&b);
      CHECK_EQ(gen_generate_bytes(&b, data, n, &cfg, 1, &err), 0);
      CHECK_EQ(gen_validate(&b, &err), 0);
    }
    gen_case_free(&a);
    gen_case_free(&b);
  }
}

static const int block_kinds[4] = {GEN_OP_CALL, GEN_OP_IF, GEN_OP_FOR, GEN_OP_BRANCH};

/* Ops of the kind in c. */
static int kind_count(const GenCase *c, int kind) {
  int n = 0;
  for (int i = 0; i < c->nops; i++)
    n += c->ops[i].kind == kind;
  return n;
}

static void mutations_stay_valid(const LowerSpec *spec, int total) {
  GenConfig cfg;
  gen_config_default(&cfg);
  cfg.ops = 24;
  int used[64] = {0}, done = 0, none = 0, spliced = 0;
  int wrapped[5] = {0}; /* blocks made by wrap-block: call, if, for, branch; regions */
  AfRng r;
  af_rng_seed(&r, 7);
  GenCase cur;
  AfErr err = {0};
  CHECK_EQ(gen_generate(&cur, 1, &cfg, &err), 0);
  for (int i = 0; i < total; i++) {
    if (i % 200 == 0 || cur.nops > 300) { /* a fresh chain now and then */
      gen_case_free(&cur);
      GenConfig sw;
      gen_config_swarm(&cfg, (uint64_t)i, &sw);
      CHECK_EQ(gen_generate(&cur, (uint64_t)i, &sw, &err), 0);
    }
    GenCase next;
    int move = -1, rc;
    if (i % 10 == 9) { /* a splice with a fresh case */
      GenCase other;
      CHECK_EQ(gen_generate(&other, (uint64_t)i * 31, &cfg, &err), 0);
      rc = reduce_splice(&cur, &other, &next);
      spliced += rc == 0;
      gen_case_free(&other);
    } else {
      rc = reduce_mutate(&cur, &r, NULL, &next, &move);
    }
    CHECK(rc == 0 || rc == 1);
    if (rc != 0) {
      none++;
      continue;
    }
    if (move >= 0 && move < 64)
      used[move]++;
    if (move >= 0 && strcmp(reduce_mutation_name(move), "wrap-block") == 0)
      for (int k = 0; k < 4; k++) /* which kind of block it made */
        wrapped[k] += kind_count(&next, block_kinds[k]) > kind_count(&cur, block_kinds[k]);
    if (move >= 0 && strcmp(reduce_mutation_name(move), "wrap-region") == 0)
      wrapped[4] += kind_count(&next, GEN_OP_EXECUTE) > kind_count(&cur, GEN_OP_EXECUTE);
    CHECK_EQ(roundtrip_valid(&next), 0);
    if (i % 5 == 0)
      CHECK(passes(&next, spec, (uint64_t)i));
    gen_case_free(&cur);
    cur = next;
    done++;
  }
  gen_case_free(&cur);
  printf("%d mutations: %d valid cases (%d splices), %d found no valid move\n", total, done,
         spliced, none);
  for (int m = 0; m < reduce_mutation_count(); m++) {
    printf("  %-16s %d\n", reduce_mutation_name(m), used[m]);
    CHECK(used[m] > 0);
  }
  printf("  wrapped into a call %d, an if %d, a for %d, a branch %d, a region %d\n", wrapped[0],
         wrapped[1], wrapped[2], wrapped[3], wrapped[4]);
  for (int k = 0; k < 5; k++)
    CHECK(wrapped[k] > 0);
  /* the renumbering has work to do: mutations number tokens and blocks otherwise than the JSON */
  printf("  renumbered otherwise than made: %d\n", renumbered);
  CHECK(renumbered > total / 10);
  CHECK(done > total * 8 / 10);
  CHECK(spliced > 0);
}

/* Captures and yields in c's regions. */
static int region_io(const GenCase *c) {
  int n = 0;
  for (int g = 1; g < c->nregions; g++)
    n += c->regions[g].ncaptures + c->regions[g].nyields;
  return n;
}

/* With captures and yields avoided, no move adds one, and regions are still wrapped (where no
 * token crosses into or out of the ops). */
static void mutations_avoid(void) {
  GenConfig cfg;
  gen_config_default(&cfg);
  cfg.ops = 16;
  GenAvoid avoid;
  memset(&avoid, 0, sizeof avoid);
  avoid.constructs = (1u << GEN_CONSTRUCT_CAPTURE) | (1u << GEN_CONSTRUCT_YIELD);
  AfRng r;
  af_rng_seed(&r, 11);
  AfErr err = {0};
  int wrapped = 0;
  for (int i = 0; i < 2000; i++) {
    GenCase cur, next;
    CHECK_EQ(gen_generate(&cur, (uint64_t)i, &cfg, &err), 0);
    int move = -1;
    if (reduce_mutate(&cur, &r, &avoid, &next, &move) == 0) {
      CHECK(region_io(&next) <= region_io(&cur));
      CHECK(!gen_avoid_case(&avoid, &next)); /* (what a guided run would refuse) */
      wrapped += strcmp(reduce_mutation_name(move), "wrap-region") == 0 &&
                 kind_count(&next, GEN_OP_EXECUTE) > kind_count(&cur, GEN_OP_EXECUTE);
      gen_case_free(&next);
    }
    gen_case_free(&cur);
  }
  printf("with captures and yields avoided: %d region(s) wrapped\n", wrapped);
  CHECK(wrapped > 0);
}

/* A case with ops of a shape steering came to avoid (a corpus entry from before): its mutation
 * drops them first, and the rest stays valid and runs clean. */
static void mutations_repair(const LowerSpec *spec) {
  GenConfig cfg;
  gen_config_default(&cfg);
  GenAvoid avoid;
  memset(&avoid, 0, sizeof avoid);
  CHECK_EQ(gen_avoid_add(&avoid, "gpu.memcpy async deps=1"), 1);
  AfRng r;
  af_rng_seed(&r, 3);
  int had = 0, repaired = 0;
  for (int i = 0; i < 200; i++) {
    GenCase cur, next;
    AfErr err = {0};
    CHECK_EQ(gen_generate(&cur, (uint64_t)i + 500, &cfg, &err), 0);
    if (!gen_case_has_shape(&cur, avoid.shapes, avoid.nshapes)) {
      gen_case_free(&cur);
      continue;
    }
    had++;
    int move = -1;
    if (reduce_mutate(&cur, &r, &avoid, &next, &move) == 0) {
      CHECK(!gen_case_has_shape(&next, avoid.shapes, avoid.nshapes));
      CHECK_EQ(gen_validate(&next, &err), 0);
      repaired += strcmp(reduce_mutation_name(move), "drop-op") == 0;
      if (i % 4 == 0)
        CHECK(passes(&next, spec, (uint64_t)i));
      gen_case_free(&next);
    }
    gen_case_free(&cur);
  }
  printf("cases with an avoided shape: %d, repaired by dropping its ops: %d\n", had, repaired);
  CHECK(had > 50);
  CHECK(repaired > had / 2);
}

static void feature_map(const LowerSpec *spec) {
  CHECK_EQ(af_feat_enable(1), 0);
  static uint8_t counters[AF_FEAT_N];
  af_feat_set_counters(counters, sizeof counters);
  const char *json =
      "{\"format\": \"asyncfuzz-case\", \"version\": 1, \"seed\": \"0\", \"spin\": 1,"
      "\"buffers\": [{\"name\": \"h\", \"kind\": \"host\", \"n\": 4, \"init\": 1},"
      "{\"name\": \"a\", \"kind\": \"device\", \"n\": 4}],"
      "\"body\": ["
      "{\"op\": \"alloc\", \"buf\": \"a\", \"mode\": \"async\", \"deps\": [], \"token\": \"t0\"},"
      "{\"op\": \"memset\", \"dst\": \"a\", \"value\": 7, \"deps\": [\"t0\"], \"token\": \"t1\"},"
      "{\"op\": \"memcpy\", \"dst\": \"h\", \"src\": \"a\", \"deps\": [\"t1\"], \"token\": \"t2\"},"
      "{\"op\": \"host_wait\", \"deps\": [\"t2\"]},"
      "{\"op\": \"observe\", \"buf\": \"h\"},"
      "{\"op\": \"dealloc\", \"buf\": \"a\", \"async\": false}]}";
  GenCase c;
  AfErr err = {0};
  int rc = gen_case_from_json(&c, json, &err);
  if (rc)
    fprintf(stderr, "feature case: %s\n", err.msg);
  CHECK_EQ(rc, 0);
  CHECK_EQ(gen_validate(&c, &err), 0);
  gen_case_features(&c);
  CHECK_EQ(af_feat_count(AF_FEAT_EDGE), 3); /* alloc -> memset -> memcpy -> host wait */
  CHECK_EQ(af_feat_count(AF_FEAT_SHAPE), 6);
  /* the handles: each buffer as each op takes it (the copy: a host destination, a device source) */
  CHECK_EQ(af_feat_count(AF_FEAT_HANDLE), 6);
  CHECK_EQ(af_feat_addf(AF_FEAT_HANDLE, "%s", "gpu.memcpy dst: host i32 in main"), 0);
  CHECK_EQ(af_feat_addf(AF_FEAT_HANDLE, "%s", "gpu.memcpy src: device i32 in main"), 0);
  CHECK_EQ(af_feat_addf(AF_FEAT_HANDLE, "%s", "gpu.memset buffer: device i32 in main"), 0);
  /* its shapes with a verdict: each once, again with another verdict */
  gen_case_verdict_features(&c, "builtin pass executed");
  CHECK_EQ(af_feat_count(AF_FEAT_SHAPE_VERDICT), 6);
  gen_case_verdict_features(&c, "builtin pass executed");
  CHECK_EQ(af_feat_count(AF_FEAT_SHAPE_VERDICT), 6);
  CHECK_EQ(
      af_feat_addf(AF_FEAT_SHAPE_VERDICT, "%s", "builtin pass executed: gpu.memcpy async deps=1"),
      0);
  gen_case_verdict_features(&c, "builtin hb_violation executed");
  CHECK_EQ(af_feat_count(AF_FEAT_SHAPE_VERDICT), 12);
  long n = af_feat_count(-1);
  int set = 0;
  for (size_t i = 0; i < sizeof counters; i++)
    set += counters[i] != 0;
  CHECK_EQ(set, n);                                   /* presence: one slot, set to 1, each */
  CHECK_EQ(af_feat_addf(AF_FEAT_EDGE, "%s", "x"), 1); /* new */
  CHECK_EQ(af_feat_addf(AF_FEAT_EDGE, "%s", "x"), 0); /* the second time: not new */
  /* the builtin program: its call sequences */
  long before = af_feat_count(AF_FEAT_CALLS);
  CHECK(passes(&c, spec, 1));
  CHECK(af_feat_count(AF_FEAT_CALLS) > before);
  /* its trace: the calls by op kind, and the link by which the host waited for the copy */
  CHECK_EQ(af_feat_addf(AF_FEAT_RUNTIME, "%s %s %s", "mgpuMemcpy", "memcpy", "host"), 0);
  CHECK_EQ(
      af_feat_addf(AF_FEAT_LINK, "stream sync: %s -> %s on the %s", "memcpy", "host_wait", "host"),
      0);
  CHECK_EQ(af_feat_count(AF_FEAT_LINK), 1); /* one stream, no event: the sync is its only link */
  long all = af_feat_count(-1);
  gen_case_features(&c); /* the same case again: nothing new */
  CHECK(passes(&c, spec, 1));
  CHECK_EQ(af_feat_count(-1), all);
  /* mlir-opt's action log: a pattern on its op, and the pair */
  af_feat_reset();
  const char *log = "[thread x] begins (no breakpoint) Action `apply-pattern pattern: "
                    "(anonymous namespace)::ConvertWaitOpToGpuRuntimeCallPattern (%3 = "
                    "\"gpu.wait\"(%1) : (!gpu.async.token) -> !gpu.async.token)`\n"
                    "[thread x] completed `apply-pattern`\n"
                    "[thread x] begins (no breakpoint) Action `apply-pattern pattern: "
                    "(anonymous namespace)::ConvertWaitAsyncOpToGpuRuntimeCallPattern (%3 = "
                    "\"gpu.wait\"(%1) : (!gpu.async.token) -> !gpu.async.token)`\n";
  mlir_feat_actions(log);
  CHECK_EQ(af_feat_count(AF_FEAT_PATTERN), 2);
  CHECK_EQ(af_feat_count(AF_FEAT_PATTERN_PAIR), 1);
  CHECK_EQ(af_feat_addf(AF_FEAT_PATTERN, "%s on %s",
                        "(anonymous namespace)::ConvertWaitOpToGpuRuntimeCallPattern",
                        "gpu.wait/2"),
           0);
  /* a pair is of two patterns within one pass's run: none across the start of a pass (each chunk
   * of a batch's log starts with one) */
  const char *two = "[thread x] begins (no breakpoint) Action `apply-pattern pattern: A (%1 = "
                    "\"gpu.wait\"() : () -> !gpu.async.token)`\n"
                    "[thread x] begins (no breakpoint) Action `pass-execution` running "
                    "`GpuToLLVMConversionPass` on Operation `builtin.module` (module {...})`\n"
                    "[thread x] begins (no breakpoint) Action `apply-pattern pattern: B (%1 = "
                    "\"gpu.wait\"() : () -> !gpu.async.token)`\n"
                    "[thread x] begins (no breakpoint) Action `apply-pattern pattern: C (%1 = "
                    "\"gpu.wait\"() : () -> !gpu.async.token)`\n";
  mlir_feat_actions(two);
  CHECK_EQ(af_feat_count(AF_FEAT_PATTERN), 5);
  CHECK_EQ(af_feat_count(AF_FEAT_PATTERN_PAIR), 2); /* B then C; not A then B */
  CHECK_EQ(af_feat_addf(AF_FEAT_PATTERN_PAIR, "%s then %s", "B", "C"), 0);
  CHECK_EQ(af_feat_addf(AF_FEAT_PATTERN_PAIR, "%s then %s", "A", "B"), 1);
  gen_case_free(&c);
  af_feat_set_counters(NULL, 0);
  af_feat_enable(0);
}

int main(int argc, char **argv) {
  int total = argc > 1 ? atoi(argv[1]) : 10000;
  LowerSpec spec;
  AfErr err = {0};
  CHECK_EQ(lower_spec_parse("builtin", &spec, &err), 0);
  bytes_make_cases(&spec);
  mutations_stay_valid(&spec, total);
  mutations_avoid();
  mutations_repair(&spec);
  feature_map(&spec);
  return TEST_DONE("test_mutate");
}
