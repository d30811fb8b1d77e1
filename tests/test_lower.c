/*
 * test_lower.c: golden tests of the builtin lowering on the corpus (the exact mgpu* call
 * program), the oracle's expected values (computed by hand from the kernel formulas), and
 * each corpus case passing under every policy with the correct lowering and failing under
 * the fault switch that matches its upstream bug. argv[1]: the source directory.
 */
#include "../base/feat.h"
#include "../check/check.h"
#include "../lower/mlir.h"
#include "corpus.h"
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
  int32_t twice[] = {21, 22, 23, 24}; /* waits that order nothing new change nothing */
  expect("host-wait-twice", twice, 4);
  int32_t capture[] = {21, 22, 23, 24}; /* the region's fill after main's memset */
  expect("region-capture", capture, 4);
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
    const char *sig, *victim; /* the cause; the detailed form */
    int refused; /* the fault makes calls fail (their work never runs) or moves the wrong data:
                    the data come out wrong under eager too */
  } bugs[] = {
      {"region-launch-yield", "builtin:fault=yield_stream", "eager", VERDICT_RUNTIME_ERROR,
       "|misused-handle|stream|wrong-kind|via:yield",
       "mgpuEventSynchronize|CUDA_ERROR_INVALID_HANDLE|handle of the wrong kind|given=stream", 0},
      {"launch-two-deps", "builtin:fault=drop_extra_deps", "lazy", VERDICT_RACE,
       "|missing-edge|extra-dep",
       "race|missing-edge|data_race.RAW|launch.af_fill->launch.af_combine|stream->stream|"
       "dependency|extra-dep-of:gpu.launch_func async",
       0},
      /* the same two dependencies, the event for the second recorded before its work: the
       * event is the cause, not the dependency */
      {"launch-two-deps", "builtin:fault=record_early", "lazy", VERDICT_RACE,
       "|missing-edge|event-before-work",
       "race|missing-edge|data_race.RAW|launch.af_fill->launch.af_combine|stream->stream|"
       "dependency",
       0},
      /* a copy put on a fresh stream that waits for none of its dependencies lacks its own
       * ordering, whichever of them it raced with */
      {"memcpy-two-deps-dealloc", "builtin:fault=copy_wrong_stream", "lazy", VERDICT_RACE,
       "|missing-edge|own-dep|gpu.memcpy async",
       "race|missing-edge|data_race.RAW|memcpy.H2D->memcpy.D2D|stream->stream|dependency", 0},
      {"sync-alloc-dealloc", "builtin:fault=drop_host_wait", "lazy", VERDICT_RACE,
       "|missing-edge|host-wait|gpu.wait",
       "race|missing-edge|host_read_before_complete|memcpy.D2H->observe|stream->host|host-sync", 0},
      {"memcpy-two-deps-dealloc", "builtin:fault=free_unordered", "lazy", VERDICT_LIFETIME,
       "|missing-edge|dealloc-order|gpu.dealloc async",
       "lifetime|free_while_in_use|memcpy.H2D->dealloc", 0},
      {"host-wait-twice", "builtin:fault=wait_destroys", "lazy", VERDICT_LIFETIME,
       "|misused-handle|stream|used-after-destroy|destroyed-by:host-wait",
       "use_of_destroyed_handle|host_wait->host_wait", 1},
      {"region-capture", "builtin:fault=capture_dropped", "lazy", VERDICT_RACE,
       "|missing-edge|capture",
       "data_race.WAW|memset->launch.af_fill@region|stream->stream|cross-region", 0},
      {"explicit-stream", "builtin:fault=stream_ignored", "lazy", VERDICT_RACE,
       "|missing-edge|stream-order|gpu.launch_func async",
       "data_race.RAW|launch.af_fill->launch.af_transform|stream->stream|dependency", 0},
      {"call-token-arg", "builtin:fault=call_arg_dropped", "lazy", VERDICT_RACE,
       "|missing-edge|call-arg|func.call",
       "data_race.RAW|memset->launch.af_transform|stream->stream|dependency", 0},
      {"if-token-result", "builtin:fault=if_result_stale", "lazy", VERDICT_RACE,
       "|missing-edge|if-result|scf.if",
       "data_race.RAW|launch.af_transform->memcpy.D2H|stream->stream|dependency", 0},
      {"for-carried-token", "builtin:fault=loop_carried_initial", "lazy", VERDICT_RACE,
       "|missing-edge|loop-carried|scf.for",
       "data_race.WAW|launch.af_fill->launch.af_fill|stream->stream|dependency", 0},
      {"branch-merge", "builtin:fault=merge_first_pred", "lazy", VERDICT_RACE,
       "|missing-edge|merge-arg|cf.cond_br",
       "data_race.RAW|launch.af_transform->memcpy.D2H|stream->stream|dependency", 0},
      {"typed-buffers", "builtin:fault=copy_size_i32", "lazy", VERDICT_RUNTIME_ERROR,
       "|runtime_error|CUDA_ERROR_ILLEGAL_ADDRESS|pointer range outside every buffer of this "
       "run|gpu.memcpy",
       "mgpuMemcpy|CUDA_ERROR_ILLEGAL_ADDRESS", 1},
      {"views", "builtin:fault=view_offset_dropped", "lazy", VERDICT_WRONG_RESULT,
       "|wrong_result|view-offset", "wrong_result|view-offset|memcpy.D2H|stale", 1},
      {"kernel-views", "builtin:fault=view_stride_dropped", "lazy", VERDICT_WRONG_RESULT,
       "|wrong_result|view-stride", "wrong_result|view-stride|memcpy.D2H|stale", 1},
      {"kernel-views", "builtin:fault=view_offset_dropped", "lazy", VERDICT_WRONG_RESULT,
       "|wrong_result|view-offset", "wrong_result|view-offset|memcpy.D2H|stale", 1},
      {"region-chain", "builtin:fault=yield_stream", "lazy", VERDICT_RUNTIME_ERROR,
       "|misused-handle|stream|wrong-kind|via:yield",
       "mgpuStreamWaitEvent|CUDA_ERROR_INVALID_HANDLE", 0},
  };
  for (size_t i = 0; i < sizeof bugs / sizeof bugs[0]; i++) {
    GenCase c;
    load(bugs[i].name, &c);
    CheckResult r = check(&c, bugs[i].fault, bugs[i].sched);
    CHECK_EQ(r.first_fail, 0);
    CHECK_EQ(r.verdict[0].cls, bugs[i].cls);
    char want[256]; /* the whole name: the lowering, then the cause */
    snprintf(want, sizeof want, "%s%s", bugs[i].fault, bugs[i].sig);
    CHECK_STR(r.verdict[0].signature, want);
    CHECK_CONTAINS(r.verdict[0].victim, bugs[i].victim);
    /* the checker finds the same cause under eager, where the data come out right (unless
     * the fault makes a call fail, whose work then never runs) */
    CheckResult q = check(&c, bugs[i].fault, "eager");
    CHECK_EQ(q.first_fail, 0);
    CHECK(bugs[i].refused || !q.verdict[0].obs_failed);
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
  /* ... the refusal's doing (the host's wait was refused): no cause beside it */
  CHECK_EQ(r.verdict[0].nalso, 0);
  gen_case_free(&c);
  /* a refused handle no longer hides a cause of its own: the dropped host wait is reported
   * beside it (the checker still reports it with the refused calls taken as succeeded) */
  static const char *const both[] = {"region-chain", "region-launch-yield", "region-capture"};
  for (size_t i = 0; i < sizeof both / sizeof both[0]; i++) {
    load(both[i], &c);
    r = check(&c, "builtin:fault=yield_stream,drop_host_wait", "lazy");
    CHECK_STR(
        r.verdict[0].signature,
        "builtin:fault=yield_stream,drop_host_wait|misused-handle|stream|wrong-kind|via:yield");
    CHECK_EQ(r.verdict[0].nalso, 1);
    CHECK_STR(r.verdict[0].also[0].signature,
              "builtin:fault=yield_stream,drop_host_wait|missing-edge|host-wait|gpu.wait");
    gen_case_free(&c);
  }
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

/* The text between the n-th "set_op(" constant and the next call, as the op it sets. */
static int nth_tag(const char *text, int n) {
  const char *p = text;
  for (int k = 0; k <= n; k++) {
    p = strstr(p, "llvm.mlir.constant(");
    if (p == NULL)
      return -99;
    p += strlen("llvm.mlir.constant(");
  }
  return (int)strtol(p, NULL, 10);
}

/* mlir_tag_calls on lowered code written by hand: locations through aliases, inline, fused,
 * a name only, unknown; a runtime call, an LLVM-level launch, a call of something else, a
 * return. Lines 11 and 13 of the input (first_line 10: map lines 2 and 4) are ops 7 and 9. */
static void test_tag_calls(void) {
  static const char code[] =
      "module attributes {gpu.container_module} {\n"
      "  llvm.func @f() {\n"
      "    %0 = llvm.call @mgpuStreamCreate() : () -> !llvm.ptr loc(#loc1)\n"
      "    llvm.call @mgpuStreamSynchronize(%0) : (!llvm.ptr) -> () loc(\"in.mlir\":13:5)\n"
      "    gpu.launch_func <%0 : !llvm.ptr> @k::@af_fill blocks in (%1, %1, %1) loc(#loc2)\n"
      "    %2 = llvm.call @malloc(%3) : (i64) -> !llvm.ptr loc(#loc1)\n"
      "    llvm.call @mgpuStreamDestroy(%0) : (!llvm.ptr) -> () loc(#loc3)\n"
      "    llvm.call @mlirAsyncRuntimeAwaitToken(%4) : (!llvm.ptr) -> () loc(#loc4)\n"
      "    llvm.return loc(#loc1)\n"
      "  }\n"
      "}\n"
      "#loc1 = loc(\"in.mlir\":11:7)\n"
      "#loc2 = loc(fused[#loc5, #loc1])\n"
      "#loc3 = loc(\"af.named\")\n"
      "#loc4 = loc(unknown)\n"
      "#loc5 = loc(\"in.mlir\":12:3)\n";
  int32_t ops[6] = {-1, 7, -1, 9, -1, -1};
  GenLineMap map = {ops, 6, 6, 0};
  int ncalls = 0, ntagged = 0;
  char *t = mlir_tag_calls(code, &map, 10, &ncalls, &ntagged);
  CHECK(t != NULL);
  CHECK_EQ(ncalls, 5); /* create, synchronize, launch, destroy, await; not malloc */
  CHECK_EQ(ntagged, 2);
  CHECK_EQ(nth_tag(t, 0), 7);  /* create: #loc1, line 11 */
  CHECK_EQ(nth_tag(t, 1), 9);  /* synchronize: inline, line 13 */
  CHECK_EQ(nth_tag(t, 2), -1); /* launch: fused, its first (line 12) is no case op */
  CHECK_EQ(nth_tag(t, 3), -1); /* destroy: a name only */
  CHECK_EQ(nth_tag(t, 4), -1); /* await: unknown */
  CHECK_EQ(nth_tag(t, 5), -1); /* return: reset */
  CHECK_EQ(nth_tag(t, 6), -99);
  CHECK_CONTAINS(t, "{\n  llvm.func @asyncfuzz_rt_set_op(i32)");
  /* the set_op call stands right before the call it tags, with its indentation */
  CHECK_CONTAINS(t, "    llvm.call @asyncfuzz_rt_set_op(%afop0) : (i32) -> ()\n"
                    "    %0 = llvm.call @mgpuStreamCreate()");
  CHECK_CONTAINS(t, "    %2 = llvm.call @malloc(%3) : (i64) -> !llvm.ptr loc(#loc1)\n"
                    "    %afop3 = llvm.mlir.constant(-1 : i32) : i32\n"
                    "    llvm.call @asyncfuzz_rt_set_op(%afop3)");
  af_free(t);
  /* no map: every op unknown, nothing crashes */
  t = mlir_tag_calls(code, NULL, 1, &ncalls, &ntagged);
  CHECK(t != NULL);
  CHECK_EQ(ntagged, 0);
  af_free(t);
}

/* The renderer's line map: each case op's line holds that op's operation. */
/* The op that names an unconverted module: one of the case's dialects, before what is left
 * around it (the func.call of a region body the async passes outlined sorts first). */
static void test_unconverted_root(void) {
  char root[200], ops[400];
  /* every op left is a feature (features on, as a guided run has them) */
  CHECK_EQ(af_feat_enable(1), 0);
  for (int round = 0; round < 2; round++) { /* the second time: nothing new */
    mlir_unconverted_ops("module {\n"
                         "  func.func @main() {\n"
                         "    func.call @async_execute_fn() : () -> ()\n"
                         "    %0 = gpu.alloc  () : memref<4xi32>\n"
                         "    llvm.return\n"
                         "  }\n"
                         "}\n",
                         root, sizeof root, ops, sizeof ops);
    CHECK_STR(root, "gpu.alloc");
    CHECK_CONTAINS(ops, "func.call");
    CHECK_EQ(af_feat_count(AF_FEAT_UNCONVERTED), 3); /* func.func too */
  }
  CHECK_EQ(af_feat_add(AF_FEAT_UNCONVERTED, "func.call", 9), 0);
  CHECK_EQ(af_feat_add(AF_FEAT_UNCONVERTED, "func.func", 9), 0);
  af_feat_enable(0);
  mlir_unconverted_ops("module {\n  func.call @f() : () -> ()\n}\n", root, sizeof root, ops,
                       sizeof ops);
  CHECK_STR(root, "func.call");
  /* a pass (gpu-async-region) gave the op another dependency: it is named as the case's line
   * has it, found through its location (an alias, or its own), in a chunk that began on line 3 */
  static const char input[] = "func.func @main() {\n"
                              "  %t1 = gpu.wait async\n"
                              "  %t2 = gpu.dealloc async [%t1] %b0 : memref<?xi32>\n"
                              "}\n";
  static const char code[] = "module {\n"
                             "  %5 = gpu.dealloc async [%3, %4] %2 : memref<?xi32> loc(#loc7)\n"
                             "}\n"
                             "#loc7 = loc(\"/tmp/x/batch.mlir\":5:9)\n";
  /* (the root, a cause, has no dependency count: the list, a detail, has it) */
  mlir_unconverted_ops(code, root, sizeof root, ops, sizeof ops);
  CHECK_STR(root, "gpu.dealloc async");
  CHECK_STR(ops, "gpu.dealloc async deps=2+"); /* the output's own */
  mlir_unconverted_ops_in(code, input, 3, root, sizeof root, ops, sizeof ops);
  CHECK_STR(root, "gpu.dealloc async");
  CHECK_STR(ops, "gpu.dealloc async deps=1");
  static const char own[] =
      "  %5 = gpu.dealloc async [%3, %4] %2 : memref<?xi32> loc(\"/tmp/x/batch.mlir\":5:9)\n";
  mlir_unconverted_ops_in(own, input, 3, root, sizeof root, ops, sizeof ops);
  CHECK_STR(ops, "gpu.dealloc async deps=1");
  /* a region left because an op of its body was: named by that op, not by the region */
  mlir_unconverted_ops("module {\n"
                       "  %t = async.execute {\n"
                       "    %1 = gpu.memset async [%a, %b] %m, %v : memref<?xi32>, i32\n"
                       "  }\n"
                       "}\n",
                       root, sizeof root, ops, sizeof ops);
  CHECK_STR(root, "gpu.memset async");
  CHECK_STR(ops, "async.execute,gpu.memset async deps=2+");
  /* the detailed form: each form of the root's op, with its count, and no other op's */
  char forms[200];
  mlir_root_forms("gpu.memcpy async",
                  "async.execute,gpu.memcpy async deps=0,gpu.memcpy async deps=2+ view,"
                  "gpu.memset async deps=0",
                  forms, sizeof forms);
  CHECK_STR(forms, "gpu.memcpy async deps=0"); /* (the view form is a cause of its own) */
  mlir_root_forms("gpu.memcpy async view",
                  "gpu.memcpy async deps=1 view,gpu.memcpy async deps=2+ view", forms,
                  sizeof forms);
  CHECK_STR(forms, "gpu.memcpy async deps=1 view,gpu.memcpy async deps=2+ view");
  mlir_root_forms("scf.if", "scf.if", forms, sizeof forms);
  CHECK_STR(forms, "scf.if");
  /* a location on a line of another op: the output's shape */
  static const char other[] = "  %5 = gpu.dealloc async [%3, %4] %2 : memref<?xi32> loc(#loc7)\n"
                              "#loc7 = loc(\"/tmp/x/batch.mlir\":4:9)\n";
  mlir_unconverted_ops_in(other, input, 3, root, sizeof root, ops, sizeof ops);
  CHECK_STR(ops, "gpu.dealloc async deps=2+");
  /* one dependency that is not the token of the gpu op before it (pure ops between do not
   * count): "unthreaded" in the form, not in the cause */
  static const char input2[] = "func.func @main() {\n"
                               "  %t1 = gpu.wait async\n"
                               "  %t3 = gpu.wait async\n"
                               "  %t2 = gpu.dealloc async [%t1] %b0 : memref<?xi32>\n"
                               "  %b1, %t4 = gpu.alloc async [%t2] () : memref<4xi32>\n"
                               "  %k0 = arith.constant 7 : i32\n"
                               "  %t5 = gpu.memset async [%t4] %b1, %k0 : memref<4xi32>, i32\n"
                               "  %t6 = gpu.memset async [%t4] %b1, %k0 : memref<4xi32>, i32\n"
                               "}\n";
  static const char code2[] = "  %5 = gpu.dealloc async [%3, %4] %2 : memref<?xi32> loc(#loc7)\n"
                              "  %8 = gpu.memset async [%6, %7] %2 : memref<4xi32> loc(#loc8)\n"
                              "  %9 = gpu.memset async [%6, %7] %2 : memref<4xi32> loc(#loc9)\n"
                              "#loc7 = loc(\"/tmp/x/batch.mlir\":6:9)\n"
                              "#loc8 = loc(\"/tmp/x/batch.mlir\":9:9)\n"
                              "#loc9 = loc(\"/tmp/x/batch.mlir\":10:9)\n";
  mlir_unconverted_ops_in(code2, input2, 3, root, sizeof root, ops, sizeof ops);
  CHECK_STR(root, "gpu.dealloc async");
  CHECK_STR(ops, "gpu.dealloc async deps=1 unthreaded,gpu.memset async deps=1,gpu.memset async "
                 "deps=1 unthreaded");
  mlir_root_forms("gpu.memset async", ops, forms, sizeof forms);
  CHECK_STR(forms, "gpu.memset async deps=1,gpu.memset async deps=1 unthreaded");
}

/* A diagnostic normalized: SSA names and numbers go, and so do the suffixes passes add to
 * keep a name unique (the same function, outlined first or second); names with digits of their
 * own stay. */
static void test_normalize(void) {
  char out[200];
  mlir_normalize("'llvm.call' op 'async_execute_fn_12' does not reference a valid LLVM function",
                 out, sizeof out);
  CHECK_STR(out, "'llvm.call' op 'async_execute_fn' does not reference a valid LLVM function");
  mlir_normalize("%t4 = gpu.alloc (memref<16xf16>) x2 af_fill_v arg_0x", out, sizeof out);
  CHECK_STR(out, "% = gpu.alloc (memref<Nxf16>) x2 af_fill_v arg_0x");
  /* an address in a crash report is no part of a cause; a zero dimension stays one */
  mlir_normalize("Cannot select: 0x55d991295d60: i64 = FrameIndex<0> memref<0xf16>", out,
                 sizeof out);
  CHECK_STR(out, "Cannot select: N: i64 = FrameIndex<N> memref<Nxf16>");
}

/* A crash report without an assertion: its first named frame past the signal machinery, and the
 * first op's method below it, with no arguments, paths or addresses (two crashes in one helper
 * from different ops are two causes; one crash in LLVM 22 and 19 is one). */
static void test_crash_cause(void) {
  static const char report[] =
      "PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/\n"
      "Stack dump:\n"
      "0.\tProgram arguments: /usr/lib/llvm-22/bin/mlir-opt one-0.mlir\n"
      " #0 0x00007f44d54b8786 llvm::sys::PrintStackTrace(llvm::raw_ostream&, int) "
      "(/lib/x86_64-linux-gnu/libLLVM.so.22.1+0x4eb8786)\n"
      " #1 0x00007f44d54b5fd3 llvm::sys::RunSignalHandlers() "
      "(/lib/x86_64-linux-gnu/libLLVM.so.22.1+0x4eb5fd3)\n"
      " #2 0x00007f44d54b94f4 (/lib/x86_64-linux-gnu/libLLVM.so.22.1+0x4eb94f4)\n"
      " #3 0x00007f44d045a050 (/lib/x86_64-linux-gnu/libc.so.6+0x3c050)\n"
      " #4 0x00007f44df690cd3 mlir::IntegerAttr::getValue() const "
      "(/usr/lib/llvm-22/bin/../lib/libMLIR.so.22.1+0x6090cd3)\n"
      " #5 0x00007f44df2c1809 mlir::dispatchIndexOpFoldResult(mlir::OpFoldResult, "
      "llvm::SmallVectorImpl<mlir::Value>&) "
      "(/usr/lib/llvm-22/bin/../lib/libMLIR.so.22.1+0x5cc1809)\n"
      " #6 0x00007f44de02cd2e mlir::memref::ReinterpretCastOp::build(mlir::OpBuilder&, "
      "mlir::OperationState&) (/usr/lib/llvm-22/bin/../lib/libMLIR.so.22.1+0x4a2cd2e)\n"
      " #7 0x00007f44de0c1271 (/usr/lib/llvm-22/bin/../lib/libMLIR.so.22.1+0x4ac1271)\n"
      " #8 0x00007f44df7bc016 mlir::PatternApplicator::matchAndRewrite(mlir::Operation*) "
      "(/usr/lib/llvm-22/bin/../lib/libMLIR.so.22.1+0x61bc016)\n";
  char out[300];
  mlir_crash_cause(report, out, sizeof out);
  CHECK_STR(out, "in mlir::IntegerAttr::getValue from mlir::memref::ReinterpretCastOp::build");
  /* an anonymous namespace is part of a name, not its argument list; no op below: the frame */
  static const char anon[] =
      " #0 0x00007f44d54b8786 llvm::sys::PrintStackTrace(llvm::raw_ostream&, int) (/x/libLLVM.so)\n"
      " #1 0x00007f44de0c1271 (anonymous namespace)::Lowering::run(int) (/x/libMLIR.so+0x1)\n"
      " #2 0x00007f44d045a050 main (/x/mlir-opt+0x3c050)\n";
  mlir_crash_cause(anon, out, sizeof out);
  CHECK_STR(out, "in (anonymous namespace)::Lowering::run");
  /* an assertion names it, as before */
  mlir_crash_cause("mlir-opt: Fake.cpp:123: void f(): Assertion `op && \"marker 777\"' failed.\n"
                   " #4 0x00007f44df690cd3 mlir::IntegerAttr::getValue() const (/x/libMLIR.so)\n",
                   out, sizeof out);
  CHECK_STR(out, "Assertion `op && \"marker N\"' failed.");
}

static void test_line_map(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/tests/data/mlir-run-a.json", srcdir);
  GenCase c;
  AfErr err = {0};
  CHECK_EQ(gen_case_load(&c, path, &err), 0);
  const GenCase *cp = &c;
  int zero = 0;
  GenLineMap map;
  char *text = gen_render_mlir_group_map(&cp, &zero, 1, 1, &map);
  CHECK(text != NULL);
  int seen = 0, yields = 0;
  for (int l = 0; l < map.nlines; l++) {
    if (map.op[l] < 0)
      continue;
    const char *line = text;
    for (int k = 0; k < l && line; k++)
      line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL;
    CHECK(line != NULL);
    char buf[600];
    snprintf(buf, sizeof buf, "%.*s", (int)strcspn(line, "\n"), line);
    static const char *const want[GEN_OP__COUNT] = {
        [GEN_OP_WAIT_ASYNC] = "gpu.wait async", [GEN_OP_ALLOC] = "gpu.alloc",
        [GEN_OP_DEALLOC] = "gpu.dealloc",       [GEN_OP_MEMCPY] = "gpu.memcpy",
        [GEN_OP_MEMSET] = "gpu.memset",         [GEN_OP_LAUNCH] = "gpu.launch_func",
        [GEN_OP_HOST_WAIT] = "gpu.wait",        [GEN_OP_OBSERVE] = "@asyncfuzz_observe",
        [GEN_OP_EXECUTE] = "async.execute",     [GEN_OP_AWAIT] = "async.await"};
    CHECK(want[c.ops[map.op[l]].kind] != NULL);
    if (c.ops[map.op[l]].kind == GEN_OP_EXECUTE && strstr(buf, "async.yield")) {
      yields++; /* (a region op's second line: its yield, whose calls are the region's) */
      continue;
    }
    CHECK_CONTAINS(buf, want[c.ops[map.op[l]].kind] ? want[c.ops[map.op[l]].kind] : "?");
    seen++;
  }
  CHECK_EQ(seen, c.nops); /* every op has its line */
  int regions = 0;
  for (int i = 0; i < c.nops; i++)
    regions += c.ops[i].kind == GEN_OP_EXECUTE;
  CHECK(regions > 0);
  CHECK_EQ(yields, regions); /* and each region its yield's */
  af_free(map.op);
  af_free(text);
  gen_case_free(&c);
}

int main(int argc, char **argv) {
  if (argc > 1)
    srcdir = argv[1];
  test_tag_calls();
  test_unconverted_root();
  test_normalize();
  test_crash_cause();
  test_line_map();
  test_golden();
  test_oracle_values();
  test_corpus_verdicts();
  test_spec_parse();
  asyncfuzz_rt_shutdown();
  return TEST_DONE("test_lower");
}
