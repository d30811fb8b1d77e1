/*
 * test_property.c: properties over generated cases.
 * 1. No false alarms: the correct builtin lowering passes every generated case under every
 *    schedule policy, with no runtime error and every stream and event destroyed.
 * 2. Every fault switch is caught within a bounded number of generated cases under the lazy
 *    or random policy.
 * 3. Determinism: the same case and schedule seeds give byte-identical traces.
 * 4. A case's schedules checked together get the verdicts each gets checked alone.
 * 5. Under the steering a recorded 600 s campaign ended with on each configuration
 *    (tests/data/steering-600s.txt, the test's argument): no false alarm, and the cases keep
 *    launches, copies and memsets ordered by a token in at least 80% as many cases as unsteered
 *    generation on the same seeds.
 * ASYNCFUZZ_TEST_SCALE (default 1) multiplies the case counts. `test_property forced N` runs only
 * the check with every avoidance forced on, over N swarm cases.
 */
#include "../check/check.h"
#include "test.h"

static int scale = 1;

static Schedule scheds[8];
static int nscheds;

static int g_swarm;                    /* no_false_alarms: swarm knobs per case */
static const GenAvoid *g_avoid;        /* no_false_alarms: this avoid set on each case's knobs */
static long g_mix[GEN_GPU_MIX__COUNT]; /* no_false_alarms: cases holding each (gen_case_gpu_mix) */
static long g_gpu_ops[4];    /* no_false_alarms: launches, copies, memsets made; those of them with
                                a token dependency */
static int g_kept_allocated; /* no_false_alarms: every dealloc form avoided, buffers stay */

static void no_false_alarms(const GenConfig *cfg, uint64_t first, int n) {
  LowerSpec spec;
  AfErr err = {0};
  lower_spec_parse("builtin", &spec, &err);
  long runs = 0;
  for (int i = 0; i < n; i++) {
    GenCase c;
    uint64_t seed = first + (uint64_t)i;
    GenConfig cc = *cfg;
    if (g_swarm) /* the campaign's default: every case with its own knobs */
      gen_config_swarm(cfg, seed, &cc);
    if (g_avoid)
      cc.avoid = *g_avoid;
    CHECK_EQ(gen_generate(&c, seed, &cc, &err), 0);
    unsigned mix = gen_case_gpu_mix(&c);
    for (int k = 0; k < GEN_GPU_MIX__COUNT; k++)
      g_mix[k] += (mix >> k) & 1;
    for (int j = 0; j < c.nops; j++) {
      const GenOp *o = &c.ops[j];
      g_gpu_ops[0] += o->kind == GEN_OP_LAUNCH;
      g_gpu_ops[1] += o->kind == GEN_OP_MEMCPY;
      g_gpu_ops[2] += o->kind == GEN_OP_MEMSET;
      g_gpu_ops[3] +=
          (o->kind == GEN_OP_LAUNCH || o->kind == GEN_OP_MEMCPY || o->kind == GEN_OP_MEMSET) &&
          o->ndeps > 0;
    }
    CHECK_EQ(gen_validate(&c, &err), 0);
    /* a forced avoid set: no op of the case has a shape of it */
    CHECK(!gen_case_has_shape(&c, cc.avoid.shapes, cc.avoid.nshapes));
    Schedule s[8];
    for (int k = 0; k < nscheds; k++) {
      s[k] = scheds[k];
      s[k].seed = af_mix64(seed, (uint64_t)k);
    }
    for (int k = 0; k < nscheds; k++) {
      Verdict v;
      CHECK_EQ(check_run_once(&c, &spec, &s[k], NULL, NULL, &v, &err), 0);
      RtSummary sum;
      asyncfuzz_rt_summary(&sum);
      runs++;
      if (v.cls != VERDICT_PASS || sum.streams_leaked || sum.events_leaked || sum.buffers_leaked) {
        char sch[64];
        check_schedule_str(&s[k], sch, sizeof sch);
        fprintf(stderr,
                "false alarm: case seed %llu (ops %d), schedule %s: %s (%s); leaks %d/%d/%d\n",
                (unsigned long long)seed, cfg->ops, sch, v.signature, v.detail, sum.streams_leaked,
                sum.events_leaked, sum.buffers_leaked);
      }
      CHECK_EQ(v.cls, VERDICT_PASS);
      CHECK_EQ(sum.streams_leaked + sum.events_leaked +
                   (g_kept_allocated && c.nops > 0 ? 0 : sum.buffers_leaked),
               0);
      /* the checker says nothing at all about a correct lowering: no error, no warning */
      int ntrace;
      const RtRec *trace = asyncfuzz_rt_trace(&ntrace);
      HbResult *hb = NULL;
      CHECK_EQ(hb_check(trace, ntrace, NULL, &hb, &err), 0);
      if (hb && hb->nreports) {
        AfBuf b;
        af_buf_init(&b);
        hb_format_report(&b, &hb->reports[0], trace, ntrace);
        fprintf(stderr, "checker false alarm, case seed %llu: %s\n", (unsigned long long)seed, b.p);
        af_buf_free(&b);
      }
      int leaks_only = hb != NULL && g_kept_allocated;
      for (int q = 0; leaks_only && q < hb->nreports; q++)
        leaks_only = hb->reports[q].kind == HB_LEAK_BUFFER;
      CHECK(hb && (hb->nreports == 0 || leaks_only));
      hb_result_free(hb);
    }
    gen_case_free(&c);
  }
  printf("no false alarms: %d cases of %s%d ops, %ld runs\n", n,
         g_swarm ? "swarm knobs, up to " : "", cfg->ops, runs);
}

static void faults_caught(void) {
  GenConfig cfg;
  gen_config_default(&cfg);
  const int bound = 50;
  for (int f = 0; f < LOWER_FAULT__COUNT; f++) {
    char name[160];
    snprintf(name, sizeof name, "builtin:fault=%s", lower_fault_name(f));
    LowerSpec spec;
    AfErr err = {0};
    CHECK_EQ(lower_spec_parse(name, &spec, &err), 0);
    int first = -1, caught = 0, total = 200;
    for (int i = 0; i < total; i++) {
      GenCase c;
      CHECK_EQ(gen_generate(&c, (uint64_t)i, &cfg, &err), 0);
      Schedule s[2] = {{RT_LAZY, (uint64_t)i}, {RT_RANDOM, (uint64_t)i}};
      CheckResult r;
      CheckOpts o = {0};
      o.stop_at_first = 1;
      CHECK_EQ(check_case(&c, &spec, s, 2, NULL, &o, &r, &err), 0);
      if (r.first_fail >= 0) {
        caught++;
        if (first < 0)
          first = i;
        /* a fault is never mistaken for a pass, and its signature names the lowering */
        CHECK_CONTAINS(r.verdict[r.first_fail].signature, name);
      }
      gen_case_free(&c);
    }
    printf("fault %-22s first caught at case %d, caught in %d of %d cases\n", lower_fault_name(f),
           first, caught, total);
    CHECK(first >= 0 && first < bound);
  }
}

/* A generated case whose faulty lowering differs from the correct one exercises the faulty
 * rule; the checker must flag it under eager, where the device completes everything at once
 * and observations alone see nothing. A difference can be harmless (a dropped dependency that
 * another path already implies), so at least a fifth of the exercising cases, and one of the
 * first twenty, must be flagged (the fault with the fewest flagged, capture_dropped, flags about
 * a third). */
static void faults_caught_by_checker_under_eager(void) {
  GenConfig cfg;
  gen_config_default(&cfg);
  LowerSpec good;
  AfErr err = {0};
  lower_spec_parse("builtin", &good, &err);
  for (int f = 0; f < LOWER_FAULT__COUNT; f++) {
    char name[160];
    snprintf(name, sizeof name, "builtin:fault=%s", lower_fault_name(f));
    LowerSpec bad;
    CHECK_EQ(lower_spec_parse(name, &bad, &err), 0);
    int exercised = 0, flagged = 0, first = -1, obs_eager = 0, first_flagged = -1, refused = 0;
    for (int i = 0; i < 300; i++) {
      GenCase c;
      CHECK_EQ(gen_generate(&c, (uint64_t)(5000 + i), &cfg, &err), 0);
      LowerProgram *pg = NULL, *pb = NULL;
      CHECK_EQ(lower_builtin(&c, &good, &pg, &err), 0);
      CHECK_EQ(lower_builtin(&c, &bad, &pb, &err), 0);
      char *tg = lower_program_to_text(pg), *tb = lower_program_to_text(pb);
      int differs = strcmp(tg, tb) != 0;
      af_free(tg);
      af_free(tb);
      lower_program_free(pg);
      lower_program_free(pb);
      if (differs) {
        Schedule s = {RT_EAGER, (uint64_t)i};
        Verdict v;
        CHECK_EQ(check_run_once(&c, &bad, &s, NULL, NULL, &v, &err), 0);
        exercised++;
        flagged += v.hb_failed;
        obs_eager += v.obs_failed;
        refused += v.rt_failed;
        if (first < 0)
          first = i;
        if (first_flagged < 0 && v.hb_failed)
          first_flagged = exercised - 1;
      }
      gen_case_free(&c);
    }
    printf("fault %-22s under eager: checker flags %d of %d exercising cases (the first: #%d), "
           "observation %d, refused %d\n",
           lower_fault_name(f), flagged, exercised, first_flagged, obs_eager, refused);
    CHECK(first >= 0);
    if (f == LOWER_FAULT_COPY_SIZE_I32 || f == LOWER_FAULT_VIEW_OFFSET_DROPPED ||
        f == LOWER_FAULT_VIEW_STRIDE_DROPPED || f == LOWER_FAULT_DIM_STRIDE_DROPPED ||
        f == LOWER_FAULT_SMEM_DROPPED) {
      /* a data fault, not an ordering one: the runtime refuses the copy or the host reads the
       * wrong data (smem_dropped: a staged kernel's result) (a difference can be harmless: a view
       * at offset 0, the same value twice, a strided view whose other elements no one reads, a copy
       * there and back of the same elements): an eighth (view_stride_dropped, the fewest: 11 of 70
       * with the element types of --wide-types, 15 of 66 before them) */
      CHECK(first >= 0 && (obs_eager + refused) * 8 >= exercised);
      continue;
    }
    CHECK(first_flagged >= 0 && first_flagged < 20);
    CHECK(flagged * 5 >= exercised);
  }
}

static char *trace_of(const GenCase *c, const LowerSpec *spec, const Schedule *s) {
  Verdict v;
  AfErr err = {0};
  CheckOpts o = {0};
  o.record_device = 1;
  CHECK_EQ(check_run_once(c, spec, s, &o, NULL, &v, &err), 0);
  AfBuf b;
  af_buf_init(&b);
  asyncfuzz_rt_format_trace(&b, 0, -1);
  int n;
  const RtObs *obs = asyncfuzz_rt_observations(&n);
  for (int i = 0; i < n; i++)
    for (int64_t k = 0; k < obs[i].n; k++)
      af_buf_printf(&b, "%d ", obs[i].vals[k]);
  return af_buf_take(&b);
}

static void determinism(void) {
  GenConfig cfg;
  gen_config_default(&cfg);
  cfg.region_pct = 25;
  LowerSpec spec;
  AfErr err = {0};
  lower_spec_parse("builtin:fault=yield_stream", &spec, &err);
  int differ = 0;
  for (uint64_t seed = 0; seed < (uint64_t)(100 * scale); seed++) {
    GenCase c;
    CHECK_EQ(gen_generate(&c, seed, &cfg, &err), 0);
    for (int p = 0; p < RT__POLICY_COUNT; p++) {
      Schedule s = {p, seed * 31 + 1};
      char *a = trace_of(&c, &spec, &s), *b = trace_of(&c, &spec, &s);
      CHECK(a && b && strcmp(a, b) == 0);
      if (p == RT_RANDOM) {
        Schedule s2 = {p, seed * 31 + 2};
        char *d = trace_of(&c, &spec, &s2);
        differ += strcmp(a, d) != 0;
        af_free(d);
      }
      af_free(a);
      af_free(b);
    }
    gen_case_free(&c);
  }
  CHECK(differ > 0); /* schedule seeds matter */
  printf("determinism: identical traces for equal seeds; %d cases changed with the seed\n", differ);
}

/* The host calls of a run (no device steps): what the happens-before checker sees. */
static char *host_trace_of(const GenCase *c, const LowerSpec *spec, const Schedule *s) {
  Verdict v;
  AfErr err = {0};
  CHECK_EQ(check_run_once(c, spec, s, NULL, NULL, &v, &err), 0);
  AfBuf b;
  af_buf_init(&b);
  asyncfuzz_rt_format_trace(&b, 0, -1);
  return af_buf_take(&b);
}

/* A case's schedules checked together, where a schedule whose trace is the previous one's reuses
 * its happens-before result (check/builtin.c), get the verdicts each gets checked alone. The
 * cases have both: schedules with the previous one's trace, and with another. */
static void schedules_together(void) {
  static CheckResult all, one;
  GenConfig cfg, regions;
  gen_config_default(&cfg);
  regions = cfg;
  regions.region_pct = 25; /* more host threads: schedules whose host calls interleave otherwise */
  const char *faults[] = {"drop_host_wait", "drop_extra_deps", "free_unordered", "yield_stream",
                          "event_leaked"};
  int same = 0, other = 0, failed = 0;
  for (size_t f = 0; f < sizeof faults / sizeof faults[0]; f++) {
    char name[96];
    snprintf(name, sizeof name, "builtin:fault=%s", faults[f]);
    LowerSpec spec;
    AfErr err = {0};
    CHECK_EQ(lower_spec_parse(name, &spec, &err), 0);
    for (uint64_t seed = 0; seed < (uint64_t)(40 * scale); seed++) {
      GenCase c;
      CHECK_EQ(gen_generate(&c, seed, seed % 2 ? &regions : &cfg, &err), 0);
      Schedule s[3] = {{RT_LAZY, seed * 7 + 1}, {RT_RANDOM, seed * 7 + 2}, {RT_PCT, seed * 7 + 3}};
      CheckOpts o = {0};
      CHECK_EQ(check_case(&c, &spec, s, 3, NULL, &o, &all, &err), 0);
      CHECK_EQ(all.nsched, 3);
      for (int k = 0; k < 3; k++) {
        CHECK_EQ(check_case(&c, &spec, &s[k], 1, NULL, &o, &one, &err), 0);
        const Verdict *a = &all.verdict[k], *b = &one.verdict[0];
        CHECK_EQ(a->cls, b->cls);
        CHECK_EQ(a->hb_errors, b->hb_errors);
        CHECK_EQ(a->hb_first, b->hb_first);
        CHECK_STR(a->signature, b->signature);
        CHECK_STR(a->victim, b->victim);
        CHECK_STR(a->detail, b->detail);
        failed += a->cls != VERDICT_PASS;
      }
      char *t[3];
      for (int k = 0; k < 3; k++)
        t[k] = host_trace_of(&c, &spec, &s[k]);
      for (int k = 1; k < 3; k++)
        strcmp(t[k], t[k - 1]) == 0 ? same++ : other++;
      for (int k = 0; k < 3; k++)
        af_free(t[k]);
      gen_case_free(&c);
    }
  }
  CHECK(same > 0 && other > 0 && failed > 0);
  printf("schedules together: verdicts as alone; %d schedules with the previous one's trace, %d "
         "with another, %d failing\n",
         same, other, failed);
}

/* Every avoidance forced on (asyncfuzz gen --avoid everything): the other forms keep every case
 * valid and race-free, and the correct lowering gives no finding. */
static void forced_avoidance(int n) {
  GenConfig cfg;
  gen_config_default(&cfg);
  CHECK_EQ(gen_avoid_add(&cfg.avoid, "everything"), 1);
  g_swarm = 1;
  memset(g_gpu_ops, 0, sizeof g_gpu_ops);
  no_false_alarms(&cfg, 400000, n);
  g_swarm = 0;
  printf("forced avoidance (everything), %d cases: %ld launches, %ld copies, %ld memsets run, "
         "%ld of them with a token dependency\n",
         n, g_gpu_ops[0], g_gpu_ops[1], g_gpu_ops[2], g_gpu_ops[3]);
  CHECK(g_gpu_ops[0] >= n && g_gpu_ops[3] >= n); /* (the GPU work stays) */
}

/* Property 5: path, lines NAME<TAB>ENTRY;ENTRY;... (each configuration's steering). */
static void recorded_steering(const char *path, int n) {
  FILE *f = fopen(path, "r");
  CHECK(f != NULL);
  if (f == NULL)
    return;
  GenConfig cfg;
  gen_config_default(&cfg);
  long steered[GEN_GPU_MIX__COUNT] = {0}, unsteered[GEN_GPU_MIX__COUNT] = {0};
  char line[4096];
  int confs = 0, kept = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    char *tab = strchr(line, '\t');
    if (line[0] == '#' || tab == NULL)
      continue;
    *tab = '\0';
    GenAvoid a;
    memset(&a, 0, sizeof a);
    for (char *e = strtok(tab + 1, ";"); e; e = strtok(NULL, ";"))
      CHECK(gen_avoid_add(&a, e) >= 0);
    uint64_t first = 500000 + 10000 * (uint64_t)confs++;
    g_swarm = 1;
    memset(g_mix, 0, sizeof g_mix);
    g_avoid = NULL; /* (the same seeds unsteered: counted only) */
    for (int i = 0; i < n; i++) {
      GenConfig cc;
      GenCase c;
      AfErr err = {0};
      gen_config_swarm(&cfg, first + (uint64_t)i, &cc);
      CHECK_EQ(gen_generate(&c, first + (uint64_t)i, &cc, &err), 0);
      unsigned mix = gen_case_gpu_mix(&c);
      for (int k = 0; k < GEN_GPU_MIX__COUNT; k++)
        unsteered[k] += (mix >> k) & 1, g_mix[k] += (mix >> k) & 1;
      gen_case_free(&c);
    }
    long un[3] = {g_mix[GEN_GPU_MIX_LAUNCH], g_mix[GEN_GPU_MIX_COPY], g_mix[GEN_GPU_MIX_MEMSET]};
    memset(g_mix, 0, sizeof g_mix);
    g_avoid = &a;
    /* (a configuration that avoids every form of gpu.dealloc, the one on a fresh root after a
     * host wait too, leaves its buffers allocated) */
    GenOp d = gen_op_blank(GEN_OP_DEALLOC, 0);
    g_kept_allocated = 1;
    for (int async = 0; async <= 1 && g_kept_allocated; async++)
      for (int nd = 0; nd <= (async ? 2 : 0) && g_kept_allocated; nd++)
        for (int fresh = 0; fresh <= (nd == 1) && g_kept_allocated; fresh++) {
          d.async = (uint8_t)async;
          d.ndeps = nd;
          d.fresh = (uint8_t)fresh;
          g_kept_allocated = gen_avoid_op(&a, &d);
        }
    kept += g_kept_allocated;
    no_false_alarms(&cfg, first, n);
    g_avoid = NULL;
    g_kept_allocated = 0;
    g_swarm = 0;
    for (int k = 0; k < GEN_GPU_MIX__COUNT; k++)
      steered[k] += g_mix[k];
    printf("  %-44s launch %ld/%ld copy %ld/%ld memset %ld/%ld (steered/unsteered cases)\n", line,
           g_mix[GEN_GPU_MIX_LAUNCH], un[0], g_mix[GEN_GPU_MIX_COPY], un[1],
           g_mix[GEN_GPU_MIX_MEMSET], un[2]);
  }
  fclose(f);
  CHECK(confs > 0);
  printf("recorded steering, %d configurations (%d leaving buffers allocated: every dealloc form "
         "avoided), %d cases each:",
         confs, kept, n);
  for (int k = 0; k < 3; k++) {
    printf(" %s %ld of %ld unsteered (%.0f%%)", gen_gpu_mix_name(k), steered[k], unsteered[k],
           unsteered[k] ? 100.0 * (double)steered[k] / (double)unsteered[k] : 0.0);
    CHECK(steered[k] * 10 >= unsteered[k] * 8);
  }
  printf("\n");
}

int main(int argc, char **argv) {
  const char *sc = getenv("ASYNCFUZZ_TEST_SCALE");
  if (sc && atoi(sc) > 0)
    scale = atoi(sc);
  nscheds = 0;
  scheds[nscheds++] = (Schedule){RT_EAGER, 0};
  scheds[nscheds++] = (Schedule){RT_LAZY, 0};
  scheds[nscheds++] = (Schedule){RT_RANDOM, 0};
  scheds[nscheds++] = (Schedule){RT_RANDOM, 0};
  scheds[nscheds++] = (Schedule){RT_PCT, 0};
  scheds[nscheds++] = (Schedule){RT_PCT, 0};
  if (argc == 2) {
    recorded_steering(argv[1], 100 * scale);
    asyncfuzz_rt_shutdown();
    return TEST_DONE("test_property");
  }
  if (argc == 3 && strcmp(argv[1], "forced") == 0 && atoi(argv[2]) > 0) {
    forced_avoidance(atoi(argv[2])); /* the forced mode alone, N cases */
    asyncfuzz_rt_shutdown();
    return TEST_DONE("test_property");
  }
  GenConfig cfg;
  gen_config_default(&cfg);
  no_false_alarms(&cfg, 0, 3000 * scale);
  cfg.region_pct = 30;
  cfg.max_nesting = 3;
  cfg.max_deps = 4;
  no_false_alarms(&cfg, 100000, 1000 * scale);
  gen_config_default(&cfg);
  cfg.ops = 256;
  cfg.buffers = 8;
  no_false_alarms(&cfg, 200000, 100 * scale);
  gen_config_default(&cfg);
  g_swarm = 1;
  no_false_alarms(&cfg, 300000, 1000 * scale);
  g_swarm = 0;
  forced_avoidance(1000 * scale);
  faults_caught();
  faults_caught_by_checker_under_eager();
  determinism();
  schedules_together();
  asyncfuzz_rt_shutdown();
  return TEST_DONE("test_property");
}
