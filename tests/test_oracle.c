/*
 * test_oracle.c: verdict classification and root-cause signatures, fed with hand-made
 * observations and trace records: what was read instead (sentinel, uninitialized, freed,
 * stale), missing and repeated observations, runtime errors naming the call, the error and
 * the wrong handle kind, and signatures that do not depend on the case's size or values.
 */
#include "../oracle/oracle.h"
#include "../kernels/kernels.h"
#include "test.h"

static const char *case_json =
    "{\"format\": \"asyncfuzz-case\", \"version\": 1, \"seed\": \"0\", \"spin\": 4,"
    " \"buffers\": [{\"name\": \"h\", \"kind\": \"host\", \"n\": %d, \"init\": 1},"
    "               {\"name\": \"d\", \"kind\": \"device\", \"n\": %d}],"
    " \"body\": [{\"op\": \"alloc\", \"buf\": \"d\", \"mode\": \"sync\"},"
    "  {\"op\": \"launch\", \"kernel\": \"af_fill\", \"args\": [\"d\"], \"value\": %d, \"deps\": "
    "[], "
    "\"token\": \"a\"},"
    "  {\"op\": \"memcpy\", \"dst\": \"h\", \"src\": \"d\", \"deps\": [\"a\"], \"token\": \"b\"},"
    "  {\"op\": \"host_wait\", \"deps\": [\"b\"]},"
    "  {\"op\": \"observe\", \"buf\": \"h\"},"
    "  {\"op\": \"dealloc\", \"buf\": \"d\", \"async\": false}]}";

static void make(GenCase *c, OracleExpected **e, int n, int v) {
  char json[2048];
  snprintf(json, sizeof json, case_json, n, n, v);
  AfErr err = {0};
  CHECK_EQ(gen_case_from_json(c, json, &err), 0);
  CHECK_EQ(gen_validate(c, &err), 0);
  CHECK_EQ(oracle_expect(c, e, &err), 0);
}

static Verdict judge_values(int n, int v, int bad_index, int32_t bad_value, RtSummary *sum,
                            const RtRec *trace, int ntrace) {
  GenCase c;
  OracleExpected *e;
  make(&c, &e, n, v);
  int32_t vals[64];
  for (int i = 0; i < n; i++)
    vals[i] = e->obs[0].vals[i];
  if (bad_index >= 0)
    vals[bad_index] = bad_value;
  RtObs o = {4, 0, 0, n, vals};
  RtSummary none;
  memset(&none, 0, sizeof none);
  none.first_error = -1;
  Verdict verdict;
  CHECK_EQ(oracle_judge(&c, e, &o, 1, trace, ntrace, sum ? sum : &none, NULL, "builtin", &verdict),
           0);
  oracle_expected_free(e);
  gen_case_free(&c);
  return verdict;
}

static void test_observations(void) {
  Verdict v = judge_values(4, 3, -1, 0, NULL, NULL, 0);
  CHECK_EQ(v.cls, VERDICT_PASS);
  CHECK_STR(v.signature, "builtin|pass");
  /* named by the op that wrote the wrong bytes (blame.c): the copy that brought a value the
   * reference never had there, or the kernel whose write never landed (the device word still
   * uninitialized) or the copy whose write never landed (the host's initial value); what was
   * read, and the observation's writer, are in the detailed form */
  struct {
    int32_t got;
    const char *kind, *form;
  } kinds[] = {{KERNEL_SENTINEL, "sentinel", "gpu.memcpy i32"},
               {KERNEL_UNINIT, "uninitialized", "gpu.launch_func i32"},
               {KERNEL_POISON, "freed", "gpu.memcpy i32"},
               {1000, "stale", "gpu.memcpy i32"},
               {1002, "stale", "gpu.memcpy i32"}};
  for (int k = 0; k < 5; k++) {
    v = judge_values(4, 3, 2, kinds[k].got, NULL, NULL, 0);
    CHECK_EQ(v.cls, VERDICT_WRONG_RESULT);
    CHECK(v.obs_failed && !v.rt_failed);
    char want[128];
    snprintf(want, sizeof want, "builtin|wrong_result|%s", kinds[k].form);
    CHECK_STR(v.signature, want);
    snprintf(want, sizeof want, "builtin|wrong_result|%s|memcpy.D2H|%s", kinds[k].form,
             kinds[k].kind);
    CHECK_STR(v.victim, want);
    CHECK_CONTAINS(v.detail, "observation of op #4 (b0");
    CHECK_CONTAINS(v.detail, "element 2 expected 23");
  }
  /* the signature does not depend on sizes, values or which element differs */
  Verdict a = judge_values(4, 3, 0, KERNEL_SENTINEL, NULL, NULL, 0);
  Verdict b = judge_values(40, 77, 31, KERNEL_SENTINEL, NULL, NULL, 0);
  CHECK_STR(a.signature, b.signature);
}

static void test_missing_and_repeated(void) {
  GenCase c;
  OracleExpected *e;
  make(&c, &e, 4, 1);
  RtSummary none;
  memset(&none, 0, sizeof none);
  none.first_error = -1;
  Verdict v;
  CHECK_EQ(oracle_judge(&c, e, NULL, 0, NULL, 0, &none, NULL, "builtin", &v), 0);
  CHECK_EQ(v.cls, VERDICT_WRONG_RESULT);
  CHECK_STR(v.signature, "builtin|wrong_result|observe-missing|memcpy.D2H");
  RtObs twice[2] = {{4, 0, 0, 4, e->obs[0].vals}, {4, 0, 1, 4, e->obs[0].vals}};
  CHECK_EQ(oracle_judge(&c, e, twice, 2, NULL, 0, &none, NULL, "builtin", &v), 0);
  CHECK_STR(v.signature, "builtin|wrong_result|observe-repeated|memcpy.D2H");
  oracle_expected_free(e);
  gen_case_free(&c);
}

/* ---- how a misused handle travelled (travel.c) ---- */

/* Each body puts a stream made by the memset of value 99 (M) into the hands of the memset of
 * value 77 (U), which gives it to mgpuEventSynchronize; U also takes an unrelated dependency that
 * crossed another way (an awaited value, a call's result, a region's input). JSON with ' for ". */
static const struct {
  const char *body, *via;
} travels[] = {
    /* made in main, never yielded, beside a dependency that came from an async.await: not the
     * yield bug's name */
    {"{'op': 'memset', 'dst': 'a', 'value': 99, 'deps': ['t0'], 'token': 'm'},"
     "{'op': 'execute', 'region': 'q', 'inputs': [], 'body': ["
     "  {'op': 'memset', 'dst': 'c', 'value': 5, 'deps': [], 'token': 'qo'}], 'yields': ['qo']},"
     "{'op': 'await', 'value': 'q.0', 'token': 'aw'},"
     "{'op': 'memset', 'dst': 'b', 'value': 77, 'deps': ['m', 'aw'], 'token': 'u'},",
     "own-context"},
    {"{'op': 'execute', 'region': 'q', 'inputs': [], 'body': ["
     "  {'op': 'memset', 'dst': 'c', 'value': 5, 'deps': [], 'token': 'qo'}], 'yields': ['qo']},"
     "{'op': 'await', 'value': 'q.0', 'token': 'aw'},"
     "{'op': 'memset', 'dst': 'a', 'value': 99, 'deps': ['t0'], 'token': 'm'},"
     "{'op': 'memset', 'dst': 'b', 'value': 77, 'deps': ['aw', 'm'], 'token': 'u'},",
     "own-context"},
    /* captured by a region, yielded out of it and awaited, beside a call's result */
    {"{'op': 'memset', 'dst': 'a', 'value': 99, 'deps': ['t0'], 'token': 'm'},"
     "{'op': 'call', 'inputs': [{'token': 't0', 'as': 'cp'}], 'body': ["
     "  {'op': 'memset', 'dst': 'c', 'value': 5, 'deps': ['cp'], 'token': 'co'}],"
     " 'yields': ['co'], 'token': 'cr'},"
     "{'op': 'execute', 'region': 'r', 'inputs': [], 'captures': [{'token': 'm', 'as': 'mc'}],"
     " 'body': [{'op': 'memset', 'dst': 'a', 'value': 6, 'deps': ['mc'], 'token': 'y'}],"
     " 'yields': ['y']},"
     "{'op': 'await', 'value': 'r.0', 'token': 'v'},"
     "{'op': 'memset', 'dst': 'b', 'value': 77, 'deps': ['cr', 'v'], 'token': 'u'},",
     "yield"},
    /* a call's argument, beside an awaited value passed in too */
    {"{'op': 'memset', 'dst': 'a', 'value': 99, 'deps': ['t0'], 'token': 'm'},"
     "{'op': 'execute', 'region': 'q', 'inputs': [], 'body': ["
     "  {'op': 'memset', 'dst': 'c', 'value': 5, 'deps': [], 'token': 'qo'}], 'yields': ['qo']},"
     "{'op': 'await', 'value': 'q.0', 'token': 'aw'},"
     "{'op': 'call', 'inputs': [{'token': 'aw', 'as': 'p'}, {'token': 'm', 'as': 'p2'}], 'body': ["
     "  {'op': 'memset', 'dst': 'b', 'value': 77, 'deps': ['p', 'p2'], 'token': 'u'}],"
     " 'yields': ['u'], 'token': 'r'},",
     "call-arg"},
    /* a call's result, beside an awaited value */
    {"{'op': 'execute', 'region': 'q', 'inputs': [], 'body': ["
     "  {'op': 'memset', 'dst': 'c', 'value': 5, 'deps': [], 'token': 'qo'}], 'yields': ['qo']},"
     "{'op': 'await', 'value': 'q.0', 'token': 'aw'},"
     "{'op': 'call', 'inputs': [{'token': 't0', 'as': 'p'}], 'body': ["
     "  {'op': 'memset', 'dst': 'a', 'value': 99, 'deps': ['p'], 'token': 'm'}],"
     " 'yields': ['m'], 'token': 'r'},"
     "{'op': 'memset', 'dst': 'b', 'value': 77, 'deps': ['aw', 'r'], 'token': 'u'},",
     "call-result"},
    /* a branch's block argument, beside a call's result */
    {"{'op': 'memset', 'dst': 'a', 'value': 99, 'deps': ['t0'], 'token': 'm'},"
     "{'op': 'call', 'inputs': [{'token': 't0', 'as': 'cp'}], 'body': ["
     "  {'op': 'memset', 'dst': 'c', 'value': 5, 'deps': ['cp'], 'token': 'co'}],"
     " 'yields': ['co'], 'token': 'cr'},"
     "{'op': 'branch', 'taken': true, 'inputs': [{'token': 'cr', 'as': 'p'},"
     " {'token': 'm', 'as': 'p2'}], 'body': ["
     "  {'op': 'memset', 'dst': 'b', 'value': 77, 'deps': ['p', 'p2'], 'token': 'u'}],"
     " 'yields': ['u'], 'token': 'r'},",
     "branch-arg"},
    /* the merge block's argument, beside an awaited value */
    {"{'op': 'execute', 'region': 'q', 'inputs': [], 'body': ["
     "  {'op': 'memset', 'dst': 'c', 'value': 5, 'deps': [], 'token': 'qo'}], 'yields': ['qo']},"
     "{'op': 'await', 'value': 'q.0', 'token': 'aw'},"
     "{'op': 'branch', 'taken': false, 'inputs': [{'token': 't0', 'as': 'p'}], 'body': ["
     "  {'op': 'memset', 'dst': 'a', 'value': 99, 'deps': ['p'], 'token': 'm'}],"
     " 'yields': ['m'], 'token': 'r'},"
     "{'op': 'memset', 'dst': 'b', 'value': 77, 'deps': ['aw', 'r'], 'token': 'u'},",
     "merge-arg"},
    /* captured into a region, beside a value another region yielded into it */
    {"{'op': 'memset', 'dst': 'a', 'value': 99, 'deps': ['t0'], 'token': 'm'},"
     "{'op': 'execute', 'region': 'q', 'inputs': [], 'body': ["
     "  {'op': 'memset', 'dst': 'c', 'value': 5, 'deps': [], 'token': 'qo'}], 'yields': ['qo']},"
     "{'op': 'execute', 'region': 'r', 'inputs': [{'value': 'q.0', 'as': 'qi'}],"
     " 'captures': [{'token': 'm', 'as': 'mc'}], 'body': ["
     "  {'op': 'memset', 'dst': 'b', 'value': 77, 'deps': ['qi', 'mc'], 'token': 'u'}],"
     " 'yields': ['u']},"
     "{'op': 'await', 'region': 'q'}, {'op': 'await', 'value': 'r.0', 'token': 'v'},",
     "into-region"},
    /* made by an op no dependency of the user leads back to */
    {"{'op': 'memset', 'dst': 'a', 'value': 99, 'deps': ['t0'], 'token': 'm'},"
     "{'op': 'execute', 'region': 'q', 'inputs': [], 'body': ["
     "  {'op': 'memset', 'dst': 'c', 'value': 5, 'deps': [], 'token': 'qo'}], 'yields': ['qo']},"
     "{'op': 'await', 'value': 'q.0', 'token': 'aw'},"
     "{'op': 'memset', 'dst': 'b', 'value': 77, 'deps': ['aw'], 'token': 'u'},",
     "unknown"},
};

static void test_handle_travel(void) {
  for (size_t k = 0; k < sizeof travels / sizeof travels[0]; k++) {
    char json[4096];
    snprintf(json, sizeof json,
             "{'format': 'asyncfuzz-case', 'version': 2, 'seed': '0', 'spin': 4, 'buffers': ["
             " {'name': 'h', 'kind': 'host', 'n': 4, 'init': 1},"
             " {'name': 'a', 'kind': 'device', 'n': 4}, {'name': 'b', 'kind': 'device', 'n': 4},"
             " {'name': 'c', 'kind': 'device', 'n': 4}], 'body': ["
             "{'op': 'alloc', 'buf': 'a', 'mode': 'sync'},"
             "{'op': 'alloc', 'buf': 'b', 'mode': 'sync'},"
             "{'op': 'alloc', 'buf': 'c', 'mode': 'sync'},"
             "{'op': 'wait_async', 'deps': [], 'token': 't0'}, %s"
             "{'op': 'host_wait', 'deps': []}]}",
             travels[k].body);
    for (char *q = json; *q; q++)
      *q = *q == '\'' ? '"' : *q;
    GenCase c;
    AfErr err = {0};
    if (gen_case_from_json(&c, json, &err) != 0 || gen_validate(&c, &err) != 0) {
      fprintf(stderr, "travel %zu: %s\n", k, err.msg);
      CHECK(0);
      continue;
    }
    int maker = -1, user = -1;
    for (int i = 0; i < c.nops; i++)
      if (c.ops[i].kind == GEN_OP_MEMSET && (c.ops[i].value == 99 || c.ops[i].value == 77))
        *(c.ops[i].value == 99 ? &maker : &user) = i;
    CHECK(maker >= 0 && user >= 0);
    /* M's call makes the stream; U's hands it where an event belongs */
    RtRec trace[2];
    memset(trace, 0, sizeof trace);
    trace[0].call = RT_CALL_STREAM_CREATE;
    trace[0].op = maker;
    trace[0].ret = RT_REF(RT_REF_STREAM, 5, 0);
    trace[1].seq = 1;
    trace[1].op = user;
    trace[1].call = RT_CALL_EVENT_SYNCHRONIZE;
    trace[1].err = RT_ERR_INVALID_HANDLE;
    trace[1].detail = RT_DETAIL_WRONG_KIND;
    trace[1].nargs = 1;
    trace[1].args[0] = trace[0].ret;
    RtSummary sum;
    memset(&sum, 0, sizeof sum);
    sum.nerrors = 1;
    sum.first_error = 1;
    OracleExpected *e;
    CHECK_EQ(oracle_expect(&c, &e, &err), 0);
    Verdict v;
    CHECK_EQ(oracle_judge(&c, e, NULL, 0, trace, 2, &sum, NULL, "builtin", &v), 0);
    char want[128];
    snprintf(want, sizeof want, "builtin|misused-handle|stream|wrong-kind|via:%s", travels[k].via);
    CHECK_STR(v.signature, want);
    oracle_expected_free(e);
    gen_case_free(&c);
  }
}

static void test_runtime_errors(void) {
  RtRec trace[2];
  memset(trace, 0, sizeof trace);
  trace[1].seq = 1;
  trace[1].call = RT_CALL_EVENT_SYNCHRONIZE;
  trace[1].err = RT_ERR_INVALID_HANDLE;
  trace[1].detail = RT_DETAIL_WRONG_KIND;
  trace[1].nargs = 1;
  trace[1].args[0] = RT_REF(RT_REF_STREAM, 3, 0);
  trace[0].op = trace[1].op = -1; /* calls of no case op */
  RtSummary sum;
  memset(&sum, 0, sizeof sum);
  sum.nerrors = 1;
  sum.first_error = 1;
  Verdict v = judge_values(4, 3, 1, 999, &sum, trace, 2);
  CHECK_EQ(v.cls, VERDICT_RUNTIME_ERROR);
  CHECK(v.rt_failed && v.obs_failed); /* both are reported */
  /* the cause: a stream given where an event belongs, whose maker is unknown; the call that
   * tripped on it is in the detailed form only */
  CHECK_STR(v.signature, "builtin|misused-handle|stream|wrong-kind|via:unknown");
  CHECK_STR(v.victim, "builtin|runtime_error|mgpuEventSynchronize|CUDA_ERROR_INVALID_HANDLE|"
                      "handle of the wrong kind|given=stream");
  CHECK_CONTAINS(v.detail, "observation: observation of op #4");
  CHECK_EQ(v.error_seq, 1);
  /* a device-side error is attributed to the call that enqueued the work */
  trace[0].call = RT_CALL_MEMCPY;
  trace[1].call = RT_CALL_EXEC;
  trace[1].tid = -1;
  trace[1].cause = 0;
  trace[1].err = RT_ERR_ILLEGAL_ADDRESS;
  trace[1].detail = RT_DETAIL_USE_AFTER_FREE;
  v = judge_values(4, 3, -1, 0, &sum, trace, 2);
  CHECK_EQ(v.cls, VERDICT_RUNTIME_ERROR);
  CHECK(!v.obs_failed);
  CHECK_STR(v.signature, "builtin|runtime_error|CUDA_ERROR_ILLEGAL_ADDRESS|device memory used "
                         "after mgpuMemFree|mgpuMemcpy");
  CHECK_STR(v.victim, "builtin|runtime_error|mgpuMemcpy|CUDA_ERROR_ILLEGAL_ADDRESS|device "
                      "memory used after mgpuMemFree");
  /* with a case op, the op's shape stands for the call */
  trace[0].op = 0;
  v = judge_values(4, 3, -1, 0, &sum, trace, 2);
  CHECK_CONTAINS(v.signature, "after mgpuMemFree|gpu.");
}

/* The class table: names round-trip; a class found outside a run says by whom; the lowering's
 * verdicts on an op are the ones that name its shape. */
static void test_verdict_table(void) {
  int shapes = 0;
  for (int k = 0; k < VERDICT__COUNT; k++) {
    CHECK_EQ(oracle_verdict_lookup(oracle_verdict_name(k)), k);
    int run = oracle_verdict_phase(k) == ORACLE_PHASE_RUN;
    CHECK_EQ(oracle_verdict_found_by(k)[0] == '\0', run);
    shapes += oracle_verdict_names_shape(k);
  }
  CHECK_EQ(oracle_verdict_lookup("no_such_class"), -1);
  CHECK_EQ(oracle_verdict_phase(VERDICT_RACE), ORACLE_PHASE_RUN);
  CHECK_EQ(oracle_verdict_phase(VERDICT_LOWERING_CRASH), ORACLE_PHASE_LOWERING);
  CHECK_EQ(oracle_verdict_phase(VERDICT_JIT_CRASH), ORACLE_PHASE_TOOL);
  CHECK_STR(oracle_verdict_found_by(VERDICT_LOWERING_REJECTED), "mlir-opt");
  CHECK(oracle_verdict_names_shape(VERDICT_LOWERING_UNCONVERTED));
  CHECK(!oracle_verdict_names_shape(VERDICT_LOWERING_CRASH));
  CHECK_EQ(shapes, 2);
}

int main(void) {
  test_verdict_table();
  test_observations();
  test_missing_and_repeated();
  test_runtime_errors();
  test_handle_travel();
  return TEST_DONE("test_oracle");
}
