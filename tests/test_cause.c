/*
 * test_cause.c: root-cause signatures (docs/signatures.md) on hand-written traces. One case
 * orders a memset of b1 (op #3) before a memcpy that reads b1 (op #6) through an extra
 * dependency of op #5 and op #6's own dependency on it. The same missing link hit by different
 * victims gives one signature; different missing links give different ones; a destroyed stream
 * is named by where its token travelled and who destroyed it, not by the call that tripped.
 */
#include "../oracle/oracle.h"
#include "test.h"

/* %s: the memcpy's destination (b3, a device buffer, or b0, the host's) */
static const char *case_json =
    "{\"format\": \"asyncfuzz-case\", \"version\": 1, \"seed\": \"0\", \"spin\": 4,"
    " \"buffers\": [{\"name\": \"b0\", \"kind\": \"host\", \"n\": 4, \"init\": 1},"
    "  {\"name\": \"b1\", \"kind\": \"device\", \"n\": 4},"
    "  {\"name\": \"b2\", \"kind\": \"device\", \"n\": 4},"
    "  {\"name\": \"b3\", \"kind\": \"device\", \"n\": 4}],"
    " \"body\": [{\"op\": \"alloc\", \"buf\": \"b1\", \"mode\": \"sync\"},"
    "  {\"op\": \"alloc\", \"buf\": \"b2\", \"mode\": \"sync\"},"
    "  {\"op\": \"alloc\", \"buf\": \"b3\", \"mode\": \"sync\"},"
    "  {\"op\": \"memset\", \"dst\": \"b1\", \"value\": 5, \"deps\": [], \"token\": \"t0\"},"
    "  {\"op\": \"memset\", \"dst\": \"b2\", \"value\": 6, \"deps\": [], \"token\": \"t1\"},"
    "  {\"op\": \"memset\", \"dst\": \"b2\", \"value\": 7, \"deps\": [\"t1\", \"t0\"], \"token\": "
    "\"t2\"},"
    "  {\"op\": \"memcpy\", \"dst\": \"%s\", \"src\": \"b1\", \"deps\": [\"t2\"], \"token\": "
    "\"t3\"},"
    "  {\"op\": \"host_wait\", \"deps\": [\"t3\"]},"
    "  {\"op\": \"launch\", \"kernel\": \"af_fill\", \"args\": [\"b2\"], \"value\": 1, \"deps\": "
    "[\"t3\"], \"token\": \"t4\"},"
    "  {\"op\": \"host_wait\", \"deps\": [\"t4\"]}]}";

#define S(n) RT_REF(RT_REF_STREAM, n, 0)
#define E(n) RT_REF(RT_REF_EVENT, n, 0)
#define B(n) RT_REF(RT_REF_BUF, n, 0)
#define H(n) RT_REF(RT_REF_HOST, n, 0)
#define I(v) RT_REF(RT_REF_INT, 0, v)

typedef struct T {
  RtRec r[64];
  int n;
} T;

static void rec(T *t, int op, int call, RtRef ret, int nargs, RtRef a0, RtRef a1, RtRef a2,
                RtRef a3) {
  RtRec *r = &t->r[t->n];
  memset(r, 0, sizeof *r);
  r->seq = (uint32_t)t->n++;
  r->op = op;
  r->call = (uint8_t)call;
  r->ret = ret;
  r->nargs = (uint8_t)nargs;
  r->args[0] = a0;
  r->args[1] = a1;
  r->args[2] = a2;
  r->args[3] = a3;
}

/* The case's calls up to op #4 (both memsets' streams s1, s2), as a correct lowering makes
 * them; dst_host: the memcpy writes the host buffer b0. */
static void prologue(T *t, int dst_host) {
  t->n = 0;
  if (dst_host)
    rec(t, -1, RT_CALL_HOST_INIT, 0, 3, I(0), I(1), I(4), 0);
  for (int b = 1; b <= 3; b++)
    rec(t, b - 1, RT_CALL_MEM_ALLOC, B(b), 3, I(16), RT_REF(RT_REF_NULL, 0, 0), I(0), 0);
  rec(t, 3, RT_CALL_STREAM_CREATE, S(1), 0, 0, 0, 0, 0);
  rec(t, 3, RT_CALL_MEMSET32, 0, 4, B(1), I(5), I(4), S(1));
  rec(t, 4, RT_CALL_STREAM_CREATE, S(2), 0, 0, 0, 0, 0);
  rec(t, 4, RT_CALL_MEMSET32, 0, 4, B(2), I(6), I(4), S(2));
}

/* Op #5 on s2, waiting for op #3 through an event unless drop_extra. */
static void op5(T *t, int drop_extra) {
  if (!drop_extra) {
    rec(t, 5, RT_CALL_EVENT_CREATE, E(0), 0, 0, 0, 0, 0);
    rec(t, 5, RT_CALL_EVENT_RECORD, 0, 2, E(0), S(1), 0, 0);
    rec(t, 5, RT_CALL_STREAM_WAIT_EVENT, 0, 2, S(2), E(0), 0, 0);
    rec(t, 5, RT_CALL_EVENT_DESTROY, 0, 1, E(0), 0, 0, 0);
  }
  rec(t, 5, RT_CALL_MEMSET32, 0, 4, B(2), I(7), I(4), S(2));
}

/* Op #6 on `stream`, then op #7, the host wait, which destroys the streams. */
static void epilogue(T *t, int dst_host, int stream) {
  if (stream != 2)
    rec(t, 6, RT_CALL_STREAM_CREATE, S(stream), 0, 0, 0, 0, 0);
  rec(t, 6, RT_CALL_MEMCPY, 0, 4, dst_host ? H(0) : B(3), B(1), I(16), S(stream));
  rec(t, 7, RT_CALL_STREAM_SYNCHRONIZE, 0, 1, S(stream), 0, 0, 0);
  for (int k = 1; k <= stream; k++) /* the host wait destroys every stream */
    rec(t, 7, RT_CALL_STREAM_DESTROY, 0, 1, S(k), 0, 0, 0);
}

static Verdict judge_obs(const T *t, int dst_host, const RtObs *obs, int nobs) {
  char json[4096];
  snprintf(json, sizeof json, case_json, dst_host ? "b0" : "b3");
  GenCase c;
  AfErr err = {0};
  CHECK_EQ(gen_case_from_json(&c, json, &err), 0);
  CHECK_EQ(gen_validate(&c, &err), 0);
  OracleExpected *e = NULL;
  CHECK_EQ(oracle_expect(&c, &e, &err), 0);
  HbResult *hb = NULL;
  HbOptions ho = {0};
  CHECK_EQ(hb_check(t->r, t->n, &ho, &hb, &err), 0);
  RtSummary sum; /* the runtime's errors, as the trace has them */
  memset(&sum, 0, sizeof sum);
  sum.first_error = -1;
  for (int i = 0; i < t->n; i++)
    if (t->r[i].err != 0 && sum.nerrors++ == 0)
      sum.first_error = i;
  Verdict v;
  /* the observations are not the point here (the case observes nothing): pass none, and look at
   * the checker's verdict; one made up makes the run's values wrong */
  CHECK_EQ(oracle_judge(&c, e, obs, nobs, t->r, t->n, &sum, hb, "L", &v), 0);
  hb_result_free(hb);
  oracle_expected_free(e);
  gen_case_free(&c);
  return v;
}

static Verdict judge(const T *t, int dst_host) {
  return judge_obs(t, dst_host, NULL, 0);
}

static void same_link_other_victims(void) {
  T t;
  /* op #5 drops its extra dependency: the memcpy into a device buffer races with op #3 */
  prologue(&t, 0);
  op5(&t, 1);
  epilogue(&t, 0, 2);
  Verdict a = judge(&t, 0);
  CHECK_EQ(a.cls, VERDICT_RACE);
  CHECK_STR(a.signature, "L|missing-edge|extra-dep");
  CHECK_CONTAINS(a.victim, "extra-dep-of:gpu.memset async");
  CHECK_CONTAINS(a.victim, "memset->memcpy.D2D");
  /* the same mistake, hitting a copy to the host: other victims, the same cause */
  prologue(&t, 1);
  op5(&t, 1);
  epilogue(&t, 1, 2);
  Verdict b = judge(&t, 1);
  CHECK_EQ(b.cls, VERDICT_RACE);
  CHECK_STR(b.signature, a.signature);
  CHECK_CONTAINS(b.victim, "memset->memcpy.D2H");
  CHECK(strcmp(a.victim, b.victim) != 0);
  printf("one link, two victims: %s\n", a.signature);
}

static void other_links(void) {
  T t;
  /* op #5 waits properly, but the memcpy runs on a fresh stream that waits for nothing: its
   * own dependency is the missing link */
  prologue(&t, 0);
  op5(&t, 0);
  epilogue(&t, 0, 3);
  Verdict a = judge(&t, 0);
  CHECK_EQ(a.cls, VERDICT_RACE);
  CHECK_STR(a.signature, "L|missing-edge|own-dep|gpu.memcpy async");
  /* and a correct lowering of the same case: no finding at all */
  prologue(&t, 0);
  op5(&t, 0);
  epilogue(&t, 0, 2);
  Verdict ok = judge(&t, 0);
  CHECK_EQ(ok.cls, VERDICT_PASS);
  printf("another link: %s\n", a.signature);
}

static void destroyed_stream(void) {
  T t;
  /* the copy's stream s2 is destroyed by the host wait (op #7), and the launch (op #8), which
   * depends on the copy's token, then uses it */
  prologue(&t, 0);
  op5(&t, 0);
  epilogue(&t, 0, 2);
  rec(&t, 8, RT_CALL_LAUNCH_KERNEL, 0, 5, RT_REF(RT_REF_FUNC, 0, 0), S(2), B(2), I(1));
  t.r[t.n - 1].args[4] = I(4);
  t.r[t.n - 1].err = RT_ERR_INVALID_HANDLE;
  t.r[t.n - 1].detail = RT_DETAIL_DESTROYED;
  Verdict a = judge(&t, 0);
  CHECK_EQ(a.cls, VERDICT_LIFETIME);
  CHECK_STR(a.signature, "L|misused-handle|stream|used-after-destroy|destroyed-by:host-wait");
  CHECK_CONTAINS(a.victim, "use_of_destroyed_handle|host_wait->launch.af_fill");
  /* the same misuse tripping another call: the signature stays, the detailed form moves */
  t.r[t.n - 1].call = RT_CALL_STREAM_SYNCHRONIZE;
  t.r[t.n - 1].nargs = 1;
  t.r[t.n - 1].args[0] = S(2);
  t.r[t.n - 1].op = 9;
  Verdict b = judge(&t, 0);
  CHECK_STR(b.signature, a.signature);
  CHECK(strcmp(a.victim, b.victim) != 0);
  printf("a destroyed stream: %s\n", a.signature);
}

/* Ops #3..#7 with op #5's extra dependency dropped (a race) unless ordered, and the host wait
 * destroying only the copy's stream s2: the memsets' stream s1 leaks. */
static void leaky(T *t, int ordered) {
  prologue(t, 0);
  op5(t, !ordered);
  rec(t, 6, RT_CALL_MEMCPY, 0, 4, B(3), B(1), I(16), S(2));
  rec(t, 7, RT_CALL_STREAM_SYNCHRONIZE, 0, 1, S(2), 0, 0, 0);
  rec(t, 7, RT_CALL_STREAM_DESTROY, 0, 1, S(2), 0, 0, 0);
}

static int has_cause(const Verdict *v, const char *prefix) {
  if (strncmp(v->signature, prefix, strlen(prefix)) == 0)
    return 1;
  for (int i = 0; i < v->nalso; i++)
    if (strncmp(v->also[i].signature, prefix, strlen(prefix)) == 0)
      return 1;
  return 0;
}

static void independent_causes(void) {
  T t;
  static const char race[] = "L|missing-edge|extra-dep";
  static const char leak[] = "L|lifetime|leaked_stream|made-by:gpu.memset async";
  /* (a stream whose last call was the event op #5 recorded for its wait: handed on, and the
   * host wait that ended op #5's stream left it behind) */
  static const char handed[] = "L|lifetime|leaked_stream|handed-on:event";
  /* alone, each is one cause */
  prologue(&t, 0);
  op5(&t, 1);
  epilogue(&t, 0, 2);
  Verdict r = judge(&t, 0);
  CHECK_STR(r.signature, race);
  CHECK_EQ(r.nalso, 0);
  leaky(&t, 1);
  Verdict l = judge(&t, 0);
  CHECK_STR(l.signature, handed);
  CHECK_CONTAINS(l.victim, "made-by:gpu.memset async");
  CHECK_EQ(l.nalso, 0);
  /* a leak and a race in one run: the headline keeps the checker's order (the race comes first
   * in the trace, the leak at its end), and the leak is its own cause beside it */
  leaky(&t, 0);
  Verdict both = judge(&t, 0);
  CHECK_STR(both.signature, race);
  CHECK_EQ(both.nalso, 1);
  CHECK_STR(both.also[0].signature, leak);
  CHECK_CONTAINS(both.also[0].victim, "made-by:gpu.memset async");
  CHECK_EQ(both.also[0].cls, VERDICT_LIFETIME);
  CHECK(oracle_verdict_has(&both, race) && oracle_verdict_has(&both, leak));
  CHECK(!oracle_verdict_has(&both, "L|pass"));
  CHECK_CONTAINS(both.detail, "also, independent of it: L|lifetime|leaked_stream");
  /* a wrong value beside a leak is its own cause; beside a race, the race may explain it */
  RtObs made_up = {99, 0, 0, 0, NULL};
  leaky(&t, 1);
  Verdict lv = judge_obs(&t, 0, &made_up, 1);
  CHECK_STR(lv.signature, handed);
  CHECK_EQ(lv.nalso, 1);
  CHECK_EQ(lv.also[0].cls, VERDICT_WRONG_RESULT);
  CHECK_STR(lv.also[0].signature, "L|wrong_result|observe-extra");
  leaky(&t, 0);
  Verdict rv = judge_obs(&t, 0, &made_up, 1);
  CHECK_EQ(rv.nalso, 1); /* the leak, not the value */
  CHECK(!has_cause(&rv, "L|wrong_result"));
  /* a device step that faulted (on memory freed under it, say) is the ordering error's doing:
   * the leak is still its own cause */
  leaky(&t, 0);
  rec(&t, 6, RT_CALL_EXEC, 0, 0, 0, 0, 0, 0);
  t.r[t.n - 1].err = RT_ERR_ILLEGAL_ADDRESS;
  Verdict ex = judge(&t, 0);
  CHECK_STR(ex.signature, race);
  CHECK_EQ(ex.nalso, 1);
  /* a misused handle can leave leaks and races behind: one cause */
  leaky(&t, 0);
  rec(&t, 8, RT_CALL_LAUNCH_KERNEL, 0, 5, RT_REF(RT_REF_FUNC, 0, 0), S(2), B(2), I(1));
  t.r[t.n - 1].args[4] = I(4);
  t.r[t.n - 1].err = RT_ERR_INVALID_HANDLE;
  t.r[t.n - 1].detail = RT_DETAIL_DESTROYED;
  Verdict m = judge(&t, 0);
  CHECK_EQ(m.nalso, 0);
  printf("independent causes: %s, also %s\n", both.signature, both.also[0].signature);
}

int main(void) {
  independent_causes();
  same_link_other_victims();
  other_links();
  destroyed_stream();
  return TEST_DONE("test_cause");
}
