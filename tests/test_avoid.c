/*
 * test_avoid.c: avoid sets (gen/avoid.c, gen/genavoid.c). The generator never builds what its
 * avoid set names; each other form it builds instead keeps the case valid, its data ops and so
 * its oracle observations, and runs clean through the builtin lowering under adversarial
 * schedules; the set travels in the case's config and in its regenerate line; an empty set
 * changes no seed.
 */
#include "../campaign/campaign_int.h"
#include "../check/check.h"
#include "../gen/gen.h"
#include "../oracle/oracle.h"
#include "test.h"

#include <stdlib.h>
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
/* The case of seed without (a) and with (b) the avoid set of av; b is valid. */
static void pair(uint64_t seed, const GenConfig *cfg, const GenConfig *av, GenCase *a, GenCase *b) {
  AfErr err = {0};
  CHECK_EQ(gen_generate(a, seed, cfg, &err), 0);
  CHECK_EQ(gen_generate(b, seed, av, &err), 0);
  if (gen_validate(b, &err) != 0) {
    char args[GEN_CONFIG_ARGS_MAX];
    gen_config_args(av, args, sizeof args);
    fprintf(stderr, "invalid steered case, seed %llu (%s): %s\n", (unsigned long long)seed, args,
            err.msg);
    CHECK(0);
  }
}

/* avoid: entries separated by ';' */
/* n seeds of cfg made unsteered (a) and under av (b): how many a's have what av avoids (had) and
 * b's (has); every b runs clean; per(a, b, counts) counts what the test looks at. */
typedef void (*PerPair)(const GenCase *a, const GenCase *b, int *counts);
static void steered_pairs(int n, const GenConfig *cfg, const GenConfig *av, PerPair per,
                          int *counts, int *had, int *has) {
  *had = *has = 0;
  for (uint64_t seed = 1; seed <= (uint64_t)n; seed++) {
    GenCase a, b;
    pair(seed, cfg, av, &a, &b);
    *had += gen_avoid_case(&av->avoid, &a);
    *has += gen_avoid_case(&av->avoid, &b);
    per(&a, &b, counts);
    runs_clean(&b);
    gen_case_free(&a);
    gen_case_free(&b);
  }
}

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
  char list[512];
  snprintf(list, sizeof list, "%s", avoid);
  for (char *e = strtok(list, ";"); e; e = strtok(NULL, ";"))
    CHECK_EQ(gen_avoid_add(&av.avoid, e), 1);
  int had = 0, changed = 0, same = 0, n = 300;
  for (uint64_t seed = 1; seed <= (uint64_t)n; seed++) {
    GenCase a, b;
    pair(seed, &cfg, &av, &a, &b);
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

/* How many times a case, lowered as a lowering that runs an async op on its first dependency's
 * stream and destroys each waited token's stream at a host wait would lower it (mlir-opt's
 * default pipeline), uses a token whose stream is already destroyed: as a dependency, or waited
 * on again. Streams are followed through block inputs and results and region captures; ops in
 * the order of the case. */
static int destroyed_stream_uses(const GenCase *c) {
  int n = c->ntoks, uses = 0;
  int *root = calloc((size_t)n + 1, sizeof(int));
  char *gone = calloc((size_t)n + 1, 1);
  for (int t = 0; t < n; t++)
    root[t] = t;
  for (int pass = 0; pass < 8; pass++) { /* (aliases of aliases) */
    for (int i = 0; i < c->nops; i++) {
      const GenOp *o = &c->ops[i];
      if (o->tok >= 0 && gen_op_async(o) && o->ndeps > 0 && o->kind != GEN_OP_WAIT_ASYNC)
        root[o->tok] = root[o->deps[0]];
      if (gen_op_flags(o->kind) & GEN_K_BLOCK) {
        const GenBlock *k = &c->blocks[o->block];
        for (int q = 0; q < k->ninputs; q++)
          root[k->inputs[q].tok] = root[k->inputs[q].outer];
        if (o->tok >= 0 && k->yield >= 0)
          root[o->tok] = root[k->yield];
      }
    }
    for (int r = 1; r < c->nregions; r++)
      for (int q = 0; q < c->regions[r].ncaptures; q++)
        root[c->regions[r].captures[q].tok] = root[c->regions[r].captures[q].outer];
  }
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    for (int d = 0; d < o->ndeps; d++) {
      uses += gone[root[o->deps[d]]];
      if (o->kind == GEN_OP_HOST_WAIT)
        gone[root[o->deps[d]]] = 1;
    }
  }
  free(root);
  free(gone);
  return uses;
}

/* host-wait avoided (a host wait destroyed a stream that a later op still used): the waits that
 * would destroy a stream another token stands for wait on gpu.wait async joins instead, whose
 * own stream is the one destroyed; the cases stay valid and run clean. */
static void waits_through_joins(void) {
  GenConfig cfg, av;
  gen_config_default(&cfg);
  cfg.region_pct = 0; /* (the check follows ops in the case's order) */
  cfg.block_pct = 0;
  cfg.extra_wait_pct = 20;
  av = cfg;
  CHECK_EQ(gen_avoid_add(&av.avoid, "host-wait"), 1);
  int before = 0, after = 0, hit = 0, n = 300;
  for (uint64_t seed = 1; seed <= (uint64_t)n; seed++) {
    GenCase a, b;
    pair(seed, &cfg, &av, &a, &b);
    int ua = destroyed_stream_uses(&a), ub = destroyed_stream_uses(&b);
    before += ua;
    after += ub;
    hit += ua > 0;
    if (ub)
      fprintf(stderr, "host-wait avoided: case seed %llu uses %d destroyed stream(s)\n",
              (unsigned long long)seed, ub);
    runs_clean(&b);
    gen_case_free(&a);
    gen_case_free(&b);
  }
  printf("host-wait (waits through joins): %d of %d cases used a destroyed stream (%d uses), "
         "%d uses with it avoided\n",
         hit, n, before, after);
  CHECK(hit >= n / 10); /* the construct was there to avoid */
  CHECK_EQ(after, 0);
}

/* How many streams a case leaves to its end, lowered as mlir-opt's default pipeline lowers it:
 * a gpu.wait async or an async op with no dependency makes a stream (the ops that depend on it
 * run on it, blocks and captures pass it on); a host wait on any token of it, or a yield of one,
 * ends it. */
static int leaked_streams(const GenCase *c) {
  int n = c->ntoks, leaks = 0;
  int *root = calloc((size_t)n + 1, sizeof(int));
  char *made = calloc((size_t)n + 1, 1), *ended = calloc((size_t)n + 1, 1);
  for (int t = 0; t < n; t++)
    root[t] = t;
  for (int pass = 0; pass < 8; pass++) /* (aliases of aliases) */
    for (int i = 0; i < c->nops; i++) {
      const GenOp *o = &c->ops[i];
      if (o->tok >= 0 && gen_op_async(o) && o->ndeps > 0 && o->kind != GEN_OP_WAIT_ASYNC)
        root[o->tok] = root[o->deps[0]];
    }
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    if (o->tok >= 0 && gen_op_async(o) && (o->kind == GEN_OP_WAIT_ASYNC || o->ndeps == 0))
      made[o->tok] = 1;
    for (int d = 0; d < o->ndeps && o->kind == GEN_OP_HOST_WAIT; d++)
      ended[root[o->deps[d]]] = 1;
  }
  for (int r = 1; r < c->nregions; r++)
    for (int k = 0; k < c->regions[r].nyields; k++)
      ended[root[c->regions[r].yields[k]]] = 1;
  for (int t = 0; t < n; t++)
    leaks += made[t] && !ended[t];
  free(root);
  free(made);
  free(ended);
  return leaks;
}

/* stream-end avoided (a leaked stream was found): each context ends the streams it made that no
 * host wait or yield ends, with host waits when it closes; nothing else changes, so the data ops
 * and observations are those of the case without it, and the case runs clean. */
static void streams_end(void) {
  GenConfig cfg, av;
  gen_config_default(&cfg);
  cfg.block_pct = 0; /* (a for's body repeats: its streams are not ended) */
  cfg.capture_pct = 0;
  av = cfg;
  CHECK_EQ(gen_avoid_add(&av.avoid, "leaked_stream"), 1); /* the word a leak's cause has */
  int before = 0, after = 0, hit = 0, same = 0, n = 300;
  for (uint64_t seed = 1; seed <= (uint64_t)n; seed++) {
    GenCase a, b;
    pair(seed, &cfg, &av, &a, &b);
    int la = leaked_streams(&a), lb = leaked_streams(&b);
    before += la;
    after += lb;
    hit += la > 0;
    if (lb)
      fprintf(stderr, "stream-end avoided: case seed %llu leaves %d stream(s)\n",
              (unsigned long long)seed, lb);
    if (same_data_ops(&a, &b)) {
      same++;
      CHECK(same_observations(&a, &b));
    }
    runs_clean(&b);
    gen_case_free(&a);
    gen_case_free(&b);
  }
  printf("stream-end (host waits end them): %d of %d cases left streams (%d), %d with it "
         "avoided; %d with the same data ops and observations\n",
         hit, n, before, after, same);
  CHECK(hit >= n / 2);
  CHECK_EQ(after, 0);
  CHECK(same >= n / 2);
}

/* stream-order avoided (a launch on an explicit stream was not ordered with it): the streams
 * stay, each launch on one depends on the stream's last launch by its token too, so no case has
 * the construct, and the cases run clean. */
static void stream_order(void) {
  GenConfig cfg, av;
  gen_config_default(&cfg);
  cfg.stream_pct = 50;
  av = cfg;
  CHECK_EQ(gen_avoid_add(&av.avoid, "stream-order"), 1);
  int had = 0, has = 0, on_stream = 0, n = 300;
  for (uint64_t seed = 1; seed <= (uint64_t)n; seed++) {
    GenCase a, b;
    pair(seed, &cfg, &av, &a, &b);
    had += gen_avoid_case(&av.avoid, &a);
    has += gen_avoid_case(&av.avoid, &b);
    for (int i = 0; i < b.nops; i++)
      on_stream += b.ops[i].kind == GEN_OP_LAUNCH && b.ops[i].stream >= 0;
    runs_clean(&b);
    gen_case_free(&a);
    gen_case_free(&b);
  }
  printf("stream-order (a token too): %d of %d cases ordered launches by a stream alone, %d with "
         "it avoided; %d launches on streams\n",
         had, n, has, on_stream);
  CHECK(had >= n / 10);
  CHECK_EQ(has, 0);
  CHECK(on_stream >= n);
}

/* "deps=1 unthreaded" avoided (what a pipeline that threads a token through a block's ops, as
 * gpu-async-region, fails on): each launch, copy and memset with one dependency gets it from the
 * op right before it (a join made for it), the cases keep their token-ordered GPU work and run
 * clean, and a plain "deps=1" still avoids both forms. */
static void threaded(void) {
  GenConfig cfg, av, both;
  gen_config_default(&cfg);
  av = cfg;
  both = cfg;
  static const char *const kinds[] = {"gpu.launch_func", "gpu.memcpy", "gpu.memset"};
  for (int k = 0; k < 3; k++) {
    char t[96];
    snprintf(t, sizeof t, "%s async deps=1 unthreaded", kinds[k]);
    CHECK_EQ(gen_avoid_add(&av.avoid, t), 1);
    snprintf(t, sizeof t, "%s async deps=2+", kinds[k]);
    CHECK_EQ(gen_avoid_add(&av.avoid, t), 1);
    CHECK_EQ(gen_avoid_add(&both.avoid, t), 1);
    snprintf(t, sizeof t, "%s async deps=1", kinds[k]);
    CHECK_EQ(gen_avoid_add(&both.avoid, t), 1);
  }
  char text[96];
  gen_avoid_text(&av.avoid, 0, text, sizeof text);
  CHECK_STR(text, "gpu.launch_func async deps=1 unthreaded");
  int n = 100, had = 0, has = 0, ordered = 0, unordered = 0, mix_a = 0, mix_b = 0, mix_c = 0;
  for (uint64_t seed = 1; seed <= (uint64_t)n; seed++) {
    GenCase a, b, c;
    pair(seed, &cfg, &av, &a, &b);
    AfErr err = {0};
    CHECK_EQ(gen_generate(&c, seed, &both, &err), 0);
    had += gen_avoid_case(&av.avoid, &a);
    has += gen_avoid_case(&av.avoid, &b);
    for (int i = 0; i < b.nops; i++) {
      const GenOp *o = &b.ops[i];
      if (o->kind != GEN_OP_LAUNCH && o->kind != GEN_OP_MEMCPY && o->kind != GEN_OP_MEMSET)
        continue;
      CHECK(o->ndeps <= 1);
      CHECK(o->ndeps == 0 || gen_op_threaded(&b, i));
      CHECK_EQ(o->threaded, gen_op_threaded(&b, i)); /* (as the generator made it) */
      ordered += o->ndeps == 1;
    }
    for (int i = 0; i < c.nops; i++) {
      const GenOp *o = &c.ops[i];
      unordered +=
          (o->kind == GEN_OP_LAUNCH || o->kind == GEN_OP_MEMCPY || o->kind == GEN_OP_MEMSET) &&
          o->ndeps > 0;
    }
    unsigned ma = gen_case_gpu_mix(&a), mb = gen_case_gpu_mix(&b), mc = gen_case_gpu_mix(&c);
    mix_a += (ma >> GEN_GPU_MIX_LAUNCH) & 1;
    mix_b += (mb >> GEN_GPU_MIX_LAUNCH) & 1;
    mix_c += (mc >> GEN_GPU_MIX_LAUNCH) & 1;
    runs_clean(&b);
    gen_case_free(&a);
    gen_case_free(&b);
    gen_case_free(&c);
  }
  printf("deps=1 unthreaded avoided: %d of %d cases had such an op, %d with it avoided; %d "
         "launches, copies and memsets ordered by a token made right before them; cases with an "
         "ordered launch: %d unsteered, %d threaded, %d with every deps=1 avoided\n",
         had, n, has, ordered, mix_a, mix_b, mix_c);
  CHECK(had >= n / 2);
  CHECK_EQ(has, 0);
  CHECK(ordered >= n);
  CHECK_EQ(unordered, 0); /* (with both forms avoided, none has a dependency: host waits) */
  CHECK(mix_b * 10 >= mix_a * 9);
  CHECK(mix_c * 10 < mix_a);
}

/* counts[0]: memsets, [1]: copies of i16 buffers */
static void memset_elem_count(const GenCase *a, const GenCase *b, int *counts) {
  (void)a;
  for (int i = 0; i < b->nops; i++) {
    const GenOp *o = &b->ops[i];
    counts[0] += o->kind == GEN_OP_MEMSET;
    counts[1] += o->kind == GEN_OP_MEMCPY && b->bufs[o->buf].elem == GEN_ELEM_I16;
  }
}

/* "gpu.memset async i16" avoided (a runtime without the 16-bit memset call): no memset of an
 * i16 buffer is drawn, memsets of the other types still are, and copies of i16 buffers too. */
static void memset_elem(void) {
  GenConfig cfg, av;
  gen_config_default(&cfg);
  cfg.typed_pct = 60;
  av = cfg;
  CHECK_EQ(gen_avoid_add(&av.avoid, "gpu.memset async i16"), 1);
  int n = 200, had, has, k[2] = {0, 0};
  steered_pairs(n, &cfg, &av, memset_elem_count, k, &had, &has);
  int memsets = k[0], copies16 = k[1];
  printf("gpu.memset async i16 avoided: %d of %d cases had an i16 memset, %d with it avoided; %d "
         "memsets of other types, %d copies of i16 buffers\n",
         had, n, has, memsets, copies16);
  CHECK(had >= n / 10);
  CHECK_EQ(has, 0);
  CHECK(memsets >= n / 2);
  CHECK(copies16 > 0);
}

/* counts[0]: launches on streams, [1]: other launches with dependencies */
static void stream_launch_count(const GenCase *a, const GenCase *b, int *counts) {
  (void)a;
  for (int i = 0; i < b->nops; i++) {
    const GenOp *o = &b->ops[i];
    counts[0] += o->kind == GEN_OP_LAUNCH && o->stream >= 0;
    counts[1] += o->kind == GEN_OP_LAUNCH && o->stream < 0 && o->ndeps > 0;
  }
}

/* A launch on a stream with dependencies avoided ("... stream", a lowering that loses a stream
 * launch's own dependency): launches on streams have none (a host wait first), the others keep
 * theirs. */
static void stream_launch(void) {
  GenConfig cfg, av;
  gen_config_default(&cfg);
  cfg.stream_pct = 50;
  av = cfg;
  CHECK_EQ(gen_avoid_add(&av.avoid, "gpu.launch_func async deps=1 stream"), 1);
  CHECK_EQ(gen_avoid_add(&av.avoid, "gpu.launch_func async deps=2+ stream"), 1);
  int n = 200, had, has, k[2] = {0, 0};
  steered_pairs(n, &cfg, &av, stream_launch_count, k, &had, &has);
  int on = k[0], ordered = k[1];
  printf("launches on streams with dependencies avoided: %d of %d cases had one, %d with it "
         "avoided; %d launches on streams, %d others with dependencies\n",
         had, n, has, on, ordered);
  CHECK(had >= n / 10);
  CHECK_EQ(has, 0);
  CHECK(on >= n);
  CHECK(ordered >= n);
}

/* counts[0]: deallocs of b (each on a fresh root), [1]: of a */
static void dealloc_pending_count(const GenCase *a, const GenCase *b, int *counts) {
  for (int i = 0; i < a->nops; i++)
    counts[1] += a->ops[i].kind == GEN_OP_DEALLOC;
  for (int i = 0; i < b->nops; i++) {
    GenOp o;
    gen_op_mark(b, i, &o);
    if (o.kind != GEN_OP_DEALLOC)
      continue;
    counts[0]++;
    CHECK(o.async && o.ndeps == 1 && o.fresh);
  }
}

/* Every dealloc form avoided but one on a fresh root ("deps=1 pending", a free not ordered
 * after the work it follows): each dealloc follows a host wait and a fresh root, none is left
 * out, and the cases run clean. */
static void dealloc_pending(void) {
  GenConfig cfg, av;
  gen_config_default(&cfg);
  av = cfg;
  static const char *const set[] = {"gpu.dealloc", "gpu.dealloc async deps=0",
                                    "gpu.dealloc async deps=1 pending",
                                    "gpu.dealloc async deps=2+"};
  for (int i = 0; i < 4; i++)
    CHECK_EQ(gen_avoid_add(&av.avoid, set[i]), 1);
  int n = 200, had, has, k[2] = {0, 0};
  steered_pairs(n, &cfg, &av, dealloc_pending_count, k, &had, &has);
  int deallocs = k[0], unsteered = k[1];
  printf("dealloc only on a fresh root: %d of %d cases had another form, %d with it avoided; %d "
         "deallocs (%d unsteered)\n",
         had, n, has, deallocs, unsteered);
  CHECK(had >= n / 2);
  CHECK_EQ(has, 0);
  CHECK(deallocs * 10 >= unsteered * 9);
}

/* counts[0]: regions of b, [1]: blocks (none in a region's body) */
static void block_region_count(const GenCase *a, const GenCase *b, int *counts) {
  (void)a;
  for (int i = 0; i < b->nops; i++) {
    counts[0] += b->ops[i].kind == GEN_OP_EXECUTE;
    counts[1] += (gen_op_flags(b->ops[i].kind) & GEN_K_BLOCK) != 0;
    CHECK(!((gen_op_flags(b->ops[i].kind) & GEN_K_BLOCK) && b->ops[i].ctx > 0));
  }
}

/* block-in-region avoided (a pipeline that fails a region whose body runs a block): no block in a
 * region's body, regions and blocks in main still drawn. */
static void block_region(void) {
  GenConfig cfg, av;
  gen_config_default(&cfg);
  cfg.region_pct = 30;
  cfg.block_pct = 30;
  av = cfg;
  CHECK_EQ(gen_avoid_add(&av.avoid, "block-in-region"), 1);
  int n = 200, had, has, k[2] = {0, 0};
  steered_pairs(n, &cfg, &av, block_region_count, k, &had, &has);
  int regions = k[0], blocks = k[1];
  printf("block-in-region avoided: %d of %d cases had a block in a region, %d with it avoided; "
         "%d regions and %d blocks kept\n",
         had, n, has, regions, blocks);
  CHECK(had >= n / 10);
  CHECK_EQ(has, 0);
  CHECK(regions >= n / 2);
  CHECK(blocks >= n / 2);
}

/* counts[0]: GPU ops in a region on a buffer it did not allocate (lent), [1]: the same
 * unsteered, [2]: async.await of a region's completion (no value) in b */
static int lent_ops(const GenCase *c) {
  int n = 0;
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    int gpu = o->kind == GEN_OP_LAUNCH || o->kind == GEN_OP_MEMCPY || o->kind == GEN_OP_MEMSET;
    if (!gpu || o->ctx == 0 || o->buf < 0)
      continue;
    int actx = -1; /* (the context of its allocation; -1: a host buffer) */
    for (int j = 0; j < i && actx < 0; j++)
      if (c->ops[j].kind == GEN_OP_ALLOC && c->ops[j].buf == o->buf)
        actx = c->ops[j].ctx;
    n += actx != o->ctx;
  }
  return n;
}
static void yield_count(const GenCase *a, const GenCase *b, int *counts) {
  counts[0] += lent_ops(b);
  counts[1] += lent_ops(a);
  for (int i = 0; i < b->nops; i++)
    counts[2] += b->ops[i].kind == GEN_OP_AWAIT && b->ops[i].vidx < 0;
}

/* yield avoided (a handle misused through a region's yield): regions still get buffers lent and
 * work on them, and give them back with their completion (a host wait in the region, then the
 * parent's async.await of it) instead of a yielded token; the cases run clean. */
static void yield_passes_work(void) {
  GenConfig cfg, av;
  gen_config_default(&cfg);
  cfg.region_pct = 30;
  av = cfg;
  CHECK_EQ(gen_avoid_add(&av.avoid, "yield"), 1);
  CHECK_EQ(gen_avoid_add(&av.avoid, "host-wait"), 1); /* (with the waits it adds in regions) */
  int n = 200, had, has, k[3] = {0, 0, 0};
  steered_pairs(n, &cfg, &av, yield_count, k, &had, &has);
  printf("yield avoided: %d of %d cases had a yield, %d with it avoided; %d GPU ops in regions on "
         "lent buffers (%d unsteered), %d awaits of a region's completion\n",
         had, n, has, k[0], k[1], k[2]);
  CHECK(had >= n / 2);
  CHECK_EQ(has, 0);
  CHECK(k[0] * 10 >= k[1] * 7);
  CHECK(k[2] >= n);
}

/* counts[0]: calls, ifs and branches in b, [1]: in a */
static void block_count(const GenCase *a, const GenCase *b, int *counts) {
  for (int i = 0; i < b->nops; i++)
    counts[0] += b->ops[i].kind == GEN_OP_CALL || b->ops[i].kind == GEN_OP_IF ||
                 b->ops[i].kind == GEN_OP_BRANCH;
  for (int i = 0; i < a->nops; i++)
    counts[1] += a->ops[i].kind == GEN_OP_CALL || a->ops[i].kind == GEN_OP_IF ||
                 a->ops[i].kind == GEN_OP_BRANCH;
}

/* A token crossing into or out of a call, an if or a branch avoided (a handle misused through a
 * call's result, a merge's argument): the blocks are still drawn, with their GPU work, and host
 * waits carry the order across them; the cases run clean. */
static void blocks_without_tokens(void) {
  GenConfig cfg, av;
  gen_config_default(&cfg);
  cfg.block_pct = 30;
  av = cfg;
  CHECK_EQ(gen_avoid_add(&av.avoid, "call-result"), 1); /* (the words causes use) */
  CHECK_EQ(gen_avoid_add(&av.avoid, "if-token"), 1);
  CHECK_EQ(gen_avoid_add(&av.avoid, "merge-arg"), 1);
  CHECK_EQ(gen_avoid_add(&av.avoid, "call-arg"), 0); /* (the same construct as call-result) */
  CHECK_EQ(gen_avoid_count(&av.avoid), 3);
  int n = 200, had, has, k[2] = {0, 0};
  steered_pairs(n, &cfg, &av, block_count, k, &had, &has);
  printf("block tokens avoided: %d of %d cases had one, %d with them avoided; %d calls, ifs and "
         "branches (%d unsteered)\n",
         had, n, has, k[0], k[1]);
  CHECK(had >= n / 2);
  CHECK_EQ(has, 0);
  CHECK(k[0] * 10 >= k[1] * 7);
}

/* counts[0]: for loops in b, [1]: in a */
static void for_count(const GenCase *a, const GenCase *b, int *counts) {
  for (int i = 0; i < b->nops; i++)
    counts[0] += b->ops[i].kind == GEN_OP_FOR;
  for (int i = 0; i < a->nops; i++)
    counts[1] += a->ops[i].kind == GEN_OP_FOR;
}

/* A deps=1 form a for's body draws otherwise (a view, an element type) or never holds (a
 * dealloc) avoided: for loops are still drawn, and no case has the forms. */
static void loops_kept(void) {
  GenConfig cfg, av;
  gen_config_default(&cfg);
  cfg.block_pct = 30;
  cfg.view_pct = 30;
  cfg.typed_pct = 30;
  av = cfg;
  CHECK_EQ(gen_avoid_add(&av.avoid, "gpu.memcpy async deps=1 view"), 1);
  CHECK_EQ(gen_avoid_add(&av.avoid, "gpu.memset async i16"), 1);
  CHECK_EQ(gen_avoid_add(&av.avoid, "gpu.dealloc async deps=1 pending"), 1);
  int n = 200, had, has, k[2] = {0, 0};
  steered_pairs(n, &cfg, &av, for_count, k, &had, &has);
  printf("deps=1 view, i16 memset and pending dealloc avoided: %d of %d cases had one, %d with "
         "them avoided; %d for loops (%d unsteered)\n",
         had, n, has, k[0], k[1]);
  CHECK(had >= n / 2);
  CHECK_EQ(has, 0);
  CHECK(k[0] * 10 >= k[1] * 7);
}

/* What a crash, or a rejection naming a region, steers: what the regions of its minimized case
 * carry (a yield, a block in a body), the structure or the region only where it recurs without. */
static void region_narrow(void) {
  static const char text[] =
      "{\"format\": \"asyncfuzz-case\", \"version\": 2, \"seed\": \"1\", \"spin\": 4,"
      " \"config\": {\"ops\": 4}, \"buffers\": [{\"name\": \"b0\", \"kind\": \"host\", \"n\": 4,"
      " \"init\": 1}], \"body\": [{\"op\": \"execute\", \"region\": \"r1\", \"inputs\": [],"
      " \"body\": [{\"op\": \"call\", \"inputs\": [], \"body\": [{\"op\": \"wait_async\", "
      "\"deps\": [], \"token\": \"t5\"}], \"yields\": [\"t5\"], \"token\": \"t8\"}],"
      " \"yields\": [\"t8\"]}, {\"op\": \"await\", \"value\": \"r1.0\", \"token\": \"t9\"}]}";
  GenCase c;
  AfErr err = {0};
  int rc = gen_case_from_json(&c, text, &err);
  CHECK_EQ(rc, 0);
  if (rc) {
    fprintf(stderr, "region_narrow: %s\n", err.msg);
    return;
  }
  GenAvoid n, w;
  char t[96];
  CHECK_EQ(campaign__region_narrow("jit_crash", "jit_crash|LLVM ERROR: x", &c, &n, &w), 1);
  CHECK_EQ(gen_avoid_count(&n), 2);
  gen_avoid_text(&n, 0, t, sizeof t);
  CHECK_STR(t, "yield");
  gen_avoid_text(&n, 1, t, sizeof t);
  CHECK_STR(t, "block-in-region");
  CHECK(gen_avoid_count(&w) >= 2); /* (its structure: async.execute, func.call) */
  GenAvoid first;                  /* (steered one at a time, a block in a region's body first) */
  CHECK_EQ(campaign__narrow_prefix(&n, 1, &first), 1);
  gen_avoid_text(&first, 0, t, sizeof t);
  CHECK_STR(t, "block-in-region");
  CHECK_EQ(campaign__narrow_prefix(&n, 5, &first), 2);
  gen_avoid_text(&w, 0, t, sizeof t);
  CHECK_STR(t, "async.execute");
  CHECK_EQ(
      campaign__region_narrow("lowering_rejected", "lowering_rejected|async.execute|x", &c, &n, &w),
      1);
  CHECK_EQ(gen_avoid_count(&w), 1);
  gen_avoid_text(&w, 0, t, sizeof t);
  CHECK_STR(t, "async.execute");
  /* a block whose token crossing has another form: that crossing first, the block where it
   * recurs without */
  CHECK_EQ(
      campaign__region_narrow("lowering_rejected", "lowering_rejected|func.call|x", &c, &n, &w), 1);
  CHECK_EQ(gen_avoid_count(&n), 1);
  gen_avoid_text(&n, 0, t, sizeof t);
  CHECK_STR(t, "call-token");
  CHECK_EQ(campaign__narrow_prefix(&n, 1, &first), 1);
  gen_avoid_text(&first, 0, t, sizeof t);
  CHECK_STR(t, "call-token");
  gen_avoid_text(&w, 0, t, sizeof t);
  CHECK_STR(t, "func.call");
  /* another op named (a block the case has not), or no minimized case: the usual steering */
  CHECK_EQ(campaign__region_narrow("lowering_rejected", "lowering_rejected|scf.if|x", &c, &n, &w),
           0);
  CHECK_EQ(campaign__region_narrow("jit_crash", "jit_crash|x", NULL, &n, &w), 0);
  CHECK_EQ(gen_avoid_count(&n), 0);
  gen_case_free(&c);
}

/* A crash names no op: its minimized case names it by the block and region kinds it has. */
static void structure(void) {
  GenConfig cfg;
  gen_config_default(&cfg);
  cfg.region_pct = 30;
  cfg.block_pct = 30;
  GenCase c;
  AfErr err = {0};
  int found = 0;
  for (uint64_t seed = 1; seed <= 20 && !found; seed++) {
    CHECK_EQ(gen_generate(&c, seed, &cfg, &err), 0);
    GenAvoid a;
    memset(&a, 0, sizeof a);
    int n = gen_avoid_structure(&a, &c);
    GenShape ex;
    CHECK_EQ(gen_shape_parse("async.execute", &ex), 0);
    int has = 0;
    for (int i = 0; i < c.nops; i++)
      has += c.ops[i].kind == GEN_OP_EXECUTE;
    CHECK_EQ(gen_case_has_shape(&c, &ex, 1), has > 0);
    if (has) { /* the set has async.execute, and only kinds the case has */
      char t[96];
      int seen = 0;
      for (int i = 0; i < gen_avoid_count(&a); i++) {
        gen_avoid_text(&a, i, t, sizeof t);
        seen += strcmp(t, "async.execute") == 0;
        GenShape s;
        CHECK_EQ(gen_shape_parse(t, &s), 0);
        CHECK(gen_case_has_shape(&c, &s, 1));
      }
      CHECK_EQ(seen, 1);
      CHECK(n >= 1);
      found = 1;
    }
    gen_case_free(&c);
  }
  CHECK(found);
}

/* The set is in the case's JSON and its regenerate options; the same seed and knobs make the
 * same bytes; an empty set changes nothing a seed made before. */
static void travels(void) {
  GenConfig cfg;
  gen_config_default(&cfg);
  CHECK_EQ(gen_avoid_add(&cfg.avoid, "gpu.launch_func async deps=2+"), 1);
  CHECK_EQ(gen_avoid_add(&cfg.avoid, "gpu.launch_func async deps=2+|failed to legalize"), 0);
  CHECK_EQ(gen_avoid_add(&cfg.avoid, "call-result"), 1);  /* a word of "call-token" */
  CHECK_EQ(gen_avoid_add(&cfg.avoid, "await-value"), 1);  /* a word of "yield" */
  CHECK_EQ(gen_avoid_add(&cfg.avoid, "loop-carried"), 1); /* the scf.for kind */
  CHECK_EQ(gen_avoid_add(&cfg.avoid, "no-such-thing"), -1);
  CHECK_EQ(gen_avoid_count(&cfg.avoid), 4);
  char t[96];
  gen_avoid_text(&cfg.avoid, 1, t, sizeof t);
  CHECK_STR(t, "scf.for");
  gen_avoid_text(&cfg.avoid, 2, t, sizeof t);
  CHECK_STR(t, "yield");
  gen_avoid_text(&cfg.avoid, 3, t, sizeof t);
  CHECK_STR(t, "call-token");
  GenCase a, b;
  AfErr err = {0};
  CHECK_EQ(gen_generate(&a, 42, &cfg, &err), 0);
  char *ja = gen_case_to_json(&a);
  CHECK_CONTAINS(ja, "\"avoid\": [\"gpu.launch_func async deps=2+\", \"scf.for\", \"yield\", "
                     "\"call-token\"]");
  CHECK_EQ(gen_case_from_json(&b, ja, &err), 0);
  GenCase c;
  CHECK_EQ(gen_generate(&c, b.seed, &b.cfg, &err), 0); /* regenerated from what the case says */
  char *jc = gen_case_to_json(&c);
  CHECK_STR(ja, jc);
  char args[GEN_CONFIG_ARGS_MAX];
  gen_config_args(&a.cfg, args, sizeof args);
  CHECK_CONTAINS(args, "--avoid 'gpu.launch_func async deps=2+' --avoid scf.for --avoid yield "
                       "--avoid call-token");
  /* a full set and every knob fit the replay line, to the last entry */
  GenConfig full;
  gen_config_default(&full);
  for (int i = 0; i < 40; i++) { /* every dependency count of every async kind, then the rest */
    char sh[64];
    snprintf(sh, sizeof sh, "%s async deps=%d%s", gen_op_mlir(i % GEN_OP__COUNT), i % 3,
             i % 3 == 2 ? "+" : "");
    gen_avoid_add(&full.avoid, sh);
  }
  CHECK_EQ(gen_avoid_add(&full.avoid, "everything"), 1);
  int nfull = gen_avoid_count(&full.avoid);
  CHECK(nfull >= GEN_MAX_AVOID);
  char last[96], want[120];
  gen_avoid_text(&full.avoid, nfull - 1, last, sizeof last);
  snprintf(want, sizeof want, "--avoid %s%s", strchr(last, ' ') ? "'" : "", last);
  gen_config_args(&full, args, sizeof args);
  CHECK_CONTAINS(args, want);
  CHECK(strlen(args) + 1 < sizeof args);
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
  one_form(
      "gpu.dealloc;gpu.dealloc async deps=0;gpu.dealloc async deps=1;gpu.dealloc async deps=2+",
      "every form avoided: left allocated", 0, 0);
  one_form("async.execute", "left out: no region", 0, 0);
  waits_through_joins();
  streams_end();
  stream_order();
  threaded();
  memset_elem();
  stream_launch();
  dealloc_pending();
  block_region();
  yield_passes_work();
  loops_kept();
  blocks_without_tokens();
  region_narrow();
  structure();
  asyncfuzz_rt_shutdown();
  return TEST_DONE("test_avoid");
}
