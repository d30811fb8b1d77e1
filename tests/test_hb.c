/*
 * test_hb.c: the happens-before checker, one report kind at a time, each from the smallest
 * runtime trace that triggers it, next to the closest correct program that must not.
 * Traces are made by calling the runtime library directly (sim backend, lazy policy, so the
 * device does nothing the host does not force and every check is about ordering alone).
 */
#include "../oracle/hb.h"
#include "../kernels/kernels.h"
#include "test.h"

static void begin(void) {
  RtConfig c;
  memset(&c, 0, sizeof c);
  c.policy = RT_LAZY;
  CHECK_EQ(asyncfuzz_rt_begin(&c), 0);
  asyncfuzz_rt_set_thread(0);
}

static HbResult *end_and_check(int lenient) {
  asyncfuzz_rt_end();
  int n;
  const RtRec *t = asyncfuzz_rt_trace(&n);
  HbOptions o = {0};
  o.lenient_free = lenient;
  HbResult *r = NULL;
  AfErr err = {0};
  CHECK_EQ(hb_check(t, n, &o, &r, &err), 0);
  return r;
}

static int count(const HbResult *r, int kind, int sub) {
  int k = 0;
  for (int i = 0; r && i < r->nreports; i++)
    k += r->reports[i].kind == kind && (sub < 0 || r->reports[i].subkind == sub);
  return k;
}

static const HbReport *find(const HbResult *r, int kind) {
  for (int i = 0; r && i < r->nreports; i++)
    if (r->reports[i].kind == kind)
      return &r->reports[i];
  return NULL;
}

static void dump(const HbResult *r) {
  int n;
  const RtRec *t = asyncfuzz_rt_trace(&n);
  for (int i = 0; r && i < r->nreports; i++) {
    AfBuf b;
    af_buf_init(&b);
    hb_format_report(&b, &r->reports[i], t, n);
    fprintf(stderr, "  report: %s\n", b.p);
    af_buf_free(&b);
  }
}

#define EXPECT_ONLY(r, kind, sub)                                                                  \
  do {                                                                                             \
    CHECK_EQ(count(r, kind, sub), 1);                                                              \
    CHECK_EQ((r)->nreports, 1);                                                                    \
    if ((r)->nreports != 1)                                                                        \
      dump(r);                                                                                     \
  } while (0)

#define EXPECT_CLEAN(r)                                                                            \
  do {                                                                                             \
    CHECK_EQ((r)->nreports, 0);                                                                    \
    if ((r)->nreports)                                                                             \
      dump(r);                                                                                     \
  } while (0)

/* a device buffer, a stream pair and a registered host buffer */
typedef struct Env {
  void *s1, *s2;
  int32_t *b;
  int32_t h[8];
} Env;

static void setup(Env *e) {
  begin();
  e->s1 = mgpuStreamCreate();
  e->s2 = mgpuStreamCreate();
  e->b = mgpuMemAlloc(32, NULL, false);
  asyncfuzz_host_init(0, 1, e->h, e->h, 0, 8, 1);
}

static void teardown(Env *e) {
  mgpuStreamDestroy(e->s1);
  mgpuStreamDestroy(e->s2);
  mgpuMemFree(e->b, NULL);
}

static void test_data_races(void) {
  Env e;
  /* RAW: a copy on s2 reads what a memset on s1 writes, with no event between them */
  setup(&e);
  mgpuMemset32(e.b, 1, 8, e.s1);
  mgpuMemcpy(e.h, e.b, 32, e.s2);
  mgpuStreamSynchronize(e.s1);
  mgpuStreamSynchronize(e.s2);
  teardown(&e);
  HbResult *r = end_and_check(0);
  EXPECT_ONLY(r, HB_DATA_RACE, HB_SUB_RAW);
  const HbReport *x = find(r, HB_DATA_RACE);
  if (x) {
    CHECK_EQ(RT_REF_KIND(x->buf), RT_REF_BUF);
    CHECK_EQ(x->lo, 0);
    CHECK_EQ(x->hi, 32);
    CHECK_EQ(x->agent1, -1 - 1); /* s1 */
    CHECK_EQ(x->agent2, -1 - 2); /* s2 */
    CHECK(x->seq1 < x->seq2);
  }
  hb_result_free(r);

  /* the same with the event that orders them: clean */
  setup(&e);
  mgpuMemset32(e.b, 1, 8, e.s1);
  void *ev = mgpuEventCreate();
  mgpuEventRecord(ev, e.s1);
  mgpuStreamWaitEvent(e.s2, ev);
  mgpuEventDestroy(ev);
  mgpuMemcpy(e.h, e.b, 32, e.s2);
  mgpuStreamSynchronize(e.s2);
  teardown(&e);
  r = end_and_check(0);
  EXPECT_CLEAN(r);
  hb_result_free(r);

  /* an event recorded before the write orders nothing */
  setup(&e);
  ev = mgpuEventCreate();
  mgpuEventRecord(ev, e.s1);
  mgpuMemset32(e.b, 1, 8, e.s1);
  mgpuStreamWaitEvent(e.s2, ev);
  mgpuEventDestroy(ev);
  mgpuMemcpy(e.h, e.b, 32, e.s2);
  mgpuStreamSynchronize(e.s1);
  mgpuStreamSynchronize(e.s2);
  teardown(&e);
  r = end_and_check(0);
  EXPECT_ONLY(r, HB_DATA_RACE, HB_SUB_RAW);
  hb_result_free(r);

  /* WAR and WAW */
  setup(&e);
  mgpuMemset32(e.b, 1, 8, e.s1);
  mgpuStreamSynchronize(e.s1);
  mgpuMemcpy(e.h, e.b, 32, e.s1); /* reads b on s1 */
  mgpuMemset32(e.b, 2, 8, e.s2);  /* writes b on s2: WAR */
  mgpuStreamSynchronize(e.s1);
  mgpuStreamSynchronize(e.s2);
  teardown(&e);
  r = end_and_check(0);
  EXPECT_ONLY(r, HB_DATA_RACE, HB_SUB_WAR);
  hb_result_free(r);
  setup(&e);
  mgpuMemset32(e.b, 1, 8, e.s1);
  mgpuMemset32(e.b, 2, 8, e.s2);
  mgpuStreamSynchronize(e.s1);
  mgpuStreamSynchronize(e.s2);
  teardown(&e);
  r = end_and_check(0);
  EXPECT_ONLY(r, HB_DATA_RACE, HB_SUB_WAW);
  hb_result_free(r);

  /* disjoint byte ranges of one buffer do not conflict */
  setup(&e);
  mgpuMemset32(e.b, 1, 4, e.s1);
  mgpuMemset32(e.b + 4, 2, 4, e.s2);
  mgpuStreamSynchronize(e.s1);
  mgpuStreamSynchronize(e.s2);
  teardown(&e);
  r = end_and_check(0);
  EXPECT_CLEAN(r);
  hb_result_free(r);

  /* a write over pieces older accesses cut is one piece again: a race with it is reported on the
   * whole range it wrote ([0, 32)), not on the first piece ([0, 4)) */
  setup(&e);
  mgpuMemset32(e.b, 1, 1, e.s1);
  mgpuMemset32(e.b, 2, 8, e.s1);
  mgpuMemcpy(e.h, e.b, 32, e.s2);
  mgpuStreamSynchronize(e.s1);
  mgpuStreamSynchronize(e.s2);
  teardown(&e);
  r = end_and_check(0);
  EXPECT_ONLY(r, HB_DATA_RACE, HB_SUB_RAW);
  x = find(r, HB_DATA_RACE);
  if (x) {
    CHECK_EQ(x->lo, 0);
    CHECK_EQ(x->hi, 32);
  }
  hb_result_free(r);
}

static void test_host_accesses(void) {
  Env e;
  /* the host reads what a copy writes without waiting for it */
  setup(&e);
  mgpuMemset32(e.b, 1, 8, e.s1);
  mgpuMemcpy(e.h, e.b, 32, e.s1);
  asyncfuzz_observe(0, e.h, e.h, 0, 8, 1);
  mgpuStreamSynchronize(e.s1);
  teardown(&e);
  HbResult *r = end_and_check(0);
  EXPECT_ONLY(r, HB_HOST_READ_BEFORE_COMPLETE, -1);
  hb_result_free(r);

  /* waiting on a recorded event or on the stream first: clean */
  for (int how = 0; how < 2; how++) {
    setup(&e);
    mgpuMemset32(e.b, 1, 8, e.s1);
    mgpuMemcpy(e.h, e.b, 32, e.s1);
    void *ev = mgpuEventCreate();
    mgpuEventRecord(ev, e.s1);
    if (how == 0)
      mgpuEventSynchronize(ev);
    else
      mgpuStreamSynchronize(e.s1);
    mgpuEventDestroy(ev);
    asyncfuzz_observe(0, e.h, e.h, 0, 8, 1);
    teardown(&e);
    r = end_and_check(0);
    EXPECT_CLEAN(r);
    hb_result_free(r);
  }

  /* the #170833 shape: EventSynchronize given the stream fails and orders nothing */
  setup(&e);
  mgpuMemset32(e.b, 1, 8, e.s1);
  mgpuMemcpy(e.h, e.b, 32, e.s1);
  mgpuEventSynchronize(e.s1);
  asyncfuzz_observe(0, e.h, e.h, 0, 8, 1);
  mgpuStreamSynchronize(e.s1);
  teardown(&e);
  r = end_and_check(0);
  CHECK_EQ(count(r, HB_INVALID_HANDLE, HB_SUB_WRONG_KIND), 1);
  CHECK_EQ(count(r, HB_HOST_READ_BEFORE_COMPLETE, -1), 1);
  CHECK_EQ(r->nreports, 2);
  hb_result_free(r);

  /* the host overwrites a buffer a pending copy still reads */
  setup(&e);
  mgpuMemcpy(e.b, e.h, 32, e.s1);
  asyncfuzz_host_init(0, 2, e.h, e.h, 0, 8, 1);
  mgpuStreamSynchronize(e.s1);
  teardown(&e);
  r = end_and_check(0);
  EXPECT_ONLY(r, HB_HOST_WRITE_WHILE_IN_USE, -1);
  hb_result_free(r);
}

static void test_lifetime(void) {
  Env e;
  /* free while a memset is pending; the lenient model credits the free */
  for (int lenient = 0; lenient < 2; lenient++) {
    setup(&e);
    mgpuMemset32(e.b, 1, 8, e.s1);
    mgpuMemFree(e.b, e.s1);
    mgpuStreamDestroy(e.s1);
    mgpuStreamDestroy(e.s2);
    HbResult *r = end_and_check(lenient);
    if (lenient)
      EXPECT_CLEAN(r);
    else
      EXPECT_ONLY(r, HB_FREE_WHILE_IN_USE, -1);
    hb_result_free(r);
  }
  /* use after free, double free, invalid free */
  setup(&e);
  mgpuMemset32(e.b, 1, 8, e.s1);
  mgpuStreamSynchronize(e.s1);
  mgpuMemFree(e.b, NULL);
  mgpuMemset32(e.b, 2, 8, e.s1);
  mgpuMemFree(e.b, NULL);
  int32_t local[2];
  mgpuMemFree(local, NULL);
  mgpuStreamSynchronize(e.s1);
  mgpuStreamDestroy(e.s1);
  mgpuStreamDestroy(e.s2);
  HbResult *r = end_and_check(0);
  CHECK_EQ(count(r, HB_USE_AFTER_FREE, -1), 1);
  CHECK_EQ(count(r, HB_DOUBLE_FREE, -1), 1);
  CHECK_EQ(count(r, HB_INVALID_FREE, -1), 1);
  CHECK_EQ(r->nreports, 3);
  const HbReport *uaf = find(r, HB_USE_AFTER_FREE);
  const HbReport *df = find(r, HB_DOUBLE_FREE);
  if (uaf && df)
    CHECK_EQ(uaf->seq1, df->seq1); /* both name the first free */
  hb_result_free(r);

  /* use before alloc: one host thread allocates, another uses it with no ordering */
  begin();
  asyncfuzz_rt_set_thread(1);
  int32_t *b = mgpuMemAlloc(32, NULL, false);
  asyncfuzz_rt_set_thread(0);
  void *s = mgpuStreamCreate();
  mgpuMemset32(b, 1, 8, s);
  mgpuStreamSynchronize(s);
  mgpuStreamDestroy(s);
  mgpuMemFree(b, NULL);
  r = end_and_check(0);
  CHECK_EQ(count(r, HB_USE_BEFORE_ALLOC, -1), 1);
  hb_result_free(r);

  /* leaks of each kind */
  begin();
  mgpuStreamCreate();
  mgpuEventCreate();
  mgpuMemAlloc(8, NULL, false);
  r = end_and_check(0);
  CHECK_EQ(count(r, HB_LEAK_STREAM, -1), 1);
  CHECK_EQ(count(r, HB_LEAK_EVENT, -1), 1);
  CHECK_EQ(count(r, HB_LEAK_BUFFER, -1), 1);
  CHECK_EQ(r->nreports, 3);
  hb_result_free(r);
}

static void test_handles(void) {
  Env e;
  /* use of a destroyed stream names the destroy call */
  setup(&e);
  mgpuStreamDestroy(e.s2);
  mgpuMemset32(e.b, 1, 8, e.s2);
  mgpuStreamDestroy(e.s1);
  mgpuMemFree(e.b, NULL);
  HbResult *r = end_and_check(0);
  EXPECT_ONLY(r, HB_USE_OF_DESTROYED_HANDLE, -1);
  const HbReport *x = find(r, HB_USE_OF_DESTROYED_HANDLE);
  int n;
  const RtRec *t = asyncfuzz_rt_trace(&n);
  if (x && x->seq1 >= 0)
    CHECK_EQ(t[x->seq1].call, RT_CALL_STREAM_DESTROY);
  else
    CHECK(0);
  hb_result_free(r);

  /* invalid handles: a null event, a buffer pointer as an event */
  setup(&e);
  mgpuEventSynchronize(NULL);
  mgpuEventSynchronize(e.b);
  teardown(&e);
  r = end_and_check(0);
  CHECK_EQ(count(r, HB_INVALID_HANDLE, HB_SUB_NONE), 2);
  CHECK_EQ(r->nreports, 2);
  hb_result_free(r);

  /* waiting on a never-recorded event is legal: a warning, no error, no edge */
  setup(&e);
  void *ev = mgpuEventCreate();
  mgpuMemset32(e.b, 1, 8, e.s1);
  mgpuStreamWaitEvent(e.s2, ev);
  mgpuMemcpy(e.h, e.b, 32, e.s2);
  mgpuEventDestroy(ev);
  mgpuStreamSynchronize(e.s1);
  mgpuStreamSynchronize(e.s2);
  teardown(&e);
  r = end_and_check(0);
  CHECK_EQ(count(r, HB_WAIT_ON_UNRECORDED_EVENT, -1), 1);
  CHECK_EQ(count(r, HB_DATA_RACE, HB_SUB_RAW), 1); /* so the race is still reported */
  CHECK_EQ(r->nerrors, 1);
  hb_result_free(r);

  /* destroying a stream and an event with work pending is legal */
  setup(&e);
  mgpuMemset32(e.b, 1, 8, e.s1);
  mgpuMemcpy(e.h, e.b, 32, e.s1);
  ev = mgpuEventCreate();
  mgpuEventRecord(ev, e.s1);
  mgpuStreamDestroy(e.s1);
  mgpuEventSynchronize(ev);
  mgpuEventDestroy(ev);
  asyncfuzz_observe(0, e.h, e.h, 0, 8, 1);
  mgpuStreamDestroy(e.s2);
  mgpuMemFree(e.b, NULL);
  r = end_and_check(0);
  EXPECT_CLEAN(r);
  hb_result_free(r);
}

static void test_region_edges(void) {
  /* the host initializes a buffer, spawns a region, whose thread copies it: ordered by the
   * spawn; the host awaits the region and reads what it wrote: ordered by yield/await */
  for (int notes = 1; notes >= 0; notes--) {
    begin();
    int32_t h[8];
    asyncfuzz_host_init(0, 1, h, h, 0, 8, 1);
    if (notes)
      asyncfuzz_rt_note(RT_NOTE_SPAWN, 1, -1);
    asyncfuzz_rt_set_thread(1);
    if (notes)
      asyncfuzz_rt_note(RT_NOTE_START, 1, -1);
    void *s = mgpuStreamCreate();
    int32_t *b = mgpuMemAlloc(32, s, false);
    mgpuMemcpy(b, h, 32, s);
    mgpuMemset32(b, 3, 8, s);
    mgpuMemcpy(h, b, 32, s);
    mgpuStreamSynchronize(s);
    mgpuStreamDestroy(s);
    mgpuMemFree(b, NULL);
    if (notes)
      asyncfuzz_rt_note(RT_NOTE_YIELD, 1, -1);
    asyncfuzz_rt_set_thread(0);
    if (notes)
      asyncfuzz_rt_note(RT_NOTE_AWAIT, 1, -1);
    asyncfuzz_observe(0, h, h, 0, 8, 1);
    HbResult *r = end_and_check(0);
    if (notes) {
      EXPECT_CLEAN(r);
    } else {
      /* T0's init against s1's copies (read, then write), and T0's read of s1's result */
      CHECK_EQ(count(r, HB_DATA_RACE, HB_SUB_RAW), 1);
      CHECK_EQ(count(r, HB_DATA_RACE, HB_SUB_WAW), 1);
      CHECK_EQ(count(r, HB_HOST_READ_BEFORE_COMPLETE, -1), 1);
      CHECK_EQ(r->nerrors, 3);
    }
    hb_result_free(r);
  }
}

/* Two threads enqueue on one stream. The host's enqueue after a region's thread enqueued on it
 * must take in all the host knows (here: a stream it synchronized, whose write the enqueued
 * copy reads), whatever the region's thread knew when it enqueued: the checker's enqueue
 * shortcut (nothing new since the stream last joined this thread's clock) is per thread. */
static void test_two_threads_one_stream(void) {
  for (int syncs = 0; syncs < 4; syncs++) {
    begin();
    void *s = mgpuStreamCreate(), *s2 = mgpuStreamCreate();
    int32_t *b = mgpuMemAlloc(32, NULL, false), *c = mgpuMemAlloc(32, NULL, false);
    mgpuMemset32(b, 5, 8, s2);
    asyncfuzz_rt_note(RT_NOTE_SPAWN, 1, -1);
    asyncfuzz_rt_set_thread(1);
    asyncfuzz_rt_note(RT_NOTE_START, 1, -1);
    for (int k = 0; k < syncs; k++) { /* the region's thread learns as much as the host will */
      void *s3 = mgpuStreamCreate();
      mgpuStreamSynchronize(s3);
      mgpuStreamDestroy(s3);
    }
    mgpuMemset32(c, 1, 8, s);
    asyncfuzz_rt_note(RT_NOTE_YIELD, 1, -1);
    asyncfuzz_rt_set_thread(0);
    mgpuStreamSynchronize(s2); /* the host knows b's memset is done */
    mgpuMemcpy(c, b, 32, s);   /* ordered after it through the host's enqueue */
    mgpuStreamSynchronize(s);
    asyncfuzz_rt_note(RT_NOTE_AWAIT, 1, -1);
    mgpuStreamDestroy(s);
    mgpuStreamDestroy(s2);
    mgpuMemFree(b, NULL);
    mgpuMemFree(c, NULL);
    HbResult *r = end_and_check(0);
    EXPECT_CLEAN(r);
    hb_result_free(r);
  }
}

/* An event's snapshot is its stream's clock at the record, whatever the stream does after it
 * (a copy of the stream's row at the record, in a slot of its own).
 * b's first half is written before the record, its second half after it; s2 waits on the event
 * and reads one half. With `rerecord`, the event is recorded again on s2 before s1 goes on, and
 * the host synchronizes it instead: then it knows nothing of s1. */
static void test_event_snapshot(void) {
  for (int rerecord = 0; rerecord <= 1; rerecord++)
    for (int half = 0; half <= 1; half++) {
      Env e;
      setup(&e);
      mgpuMemset32(e.b, 1, 4, e.s1);
      void *ev = mgpuEventCreate();
      mgpuEventRecord(ev, e.s1);
      if (rerecord)
        mgpuEventRecord(ev, e.s2);
      mgpuMemset32(e.b + 4, 2, 4, e.s1); /* s1's row changes while the event may hold it */
      if (rerecord)
        mgpuEventSynchronize(ev);
      else
        mgpuStreamWaitEvent(e.s2, ev);
      mgpuEventDestroy(ev);
      mgpuMemcpy(e.h, e.b + 4 * half, 16, e.s2);
      mgpuStreamSynchronize(e.s1);
      mgpuStreamSynchronize(e.s2);
      teardown(&e);
      HbResult *r = end_and_check(0);
      if (rerecord || half == 1) /* the write the copy reads is not ordered before it */
        EXPECT_ONLY(r, HB_DATA_RACE, HB_SUB_RAW);
      else
        EXPECT_CLEAN(r);
      hb_result_free(r);
    }
}

/* A kernel's write through a strided view writes its elements only (one access each, found in
 * one pass over the buffer's segments): s1 fills every other element of b, and s2, unordered
 * with it, reads element k. A read of a written element races; one between them does not. */
static void test_strided_view(void) {
  for (int k = 0; k < 8; k++) {
    Env e;
    setup(&e);
    mgpuMemset32(e.b, 0, 8, e.s2); /* b in one piece, written by s2 */
    mgpuStreamSynchronize(e.s2);
    void *m = mgpuModuleLoad("k", 1);
    void *f = mgpuModuleGetFunction(m, "af_fill");
    void *alloc = e.b, *aligned = e.b;
    int64_t off = 0, size = 4, stride = 2; /* elements 0, 2, 4, 6 */
    int32_t v = 3, spin = 1;
    void *params[] = {&alloc, &aligned, &off, &size, &stride, &v, &spin};
    mgpuLaunchKernel(f, 1, 1, 1, 4, 1, 1, 0, e.s1, params, NULL, 7);
    mgpuMemcpy(e.h, e.b + k, 4, e.s2);
    mgpuStreamSynchronize(e.s1);
    mgpuStreamSynchronize(e.s2);
    mgpuModuleUnload(m);
    teardown(&e);
    HbResult *r = end_and_check(0);
    if (k % 2 == 0)
      EXPECT_ONLY(r, HB_DATA_RACE, HB_SUB_RAW);
    else
      EXPECT_CLEAN(r);
    const HbReport *x = find(r, HB_DATA_RACE);
    if (x) /* named by the element's bytes */
      CHECK(x->lo == (uint32_t)k * 4 && x->hi == (uint32_t)k * 4 + 4);
    hb_result_free(r);
  }
}

/* The events alive at once each have their own snapshot, and a destroyed event's is given to the
 * next one recorded. b is written on s1 and ev1 recorded after it, while ev2, alive at the same
 * time, is recorded on s2, which knows nothing of the write: a wait on ev1 orders a read of b
 * after the write, a wait on ev2 does not. Then ev1 and ev2 are destroyed and ev3 takes a
 * slot one of them held: recorded on a fresh stream, a wait on it orders nothing either. */
static void test_event_slots(void) {
  for (int which = 0; which < 3; which++) {
    Env e;
    setup(&e);
    void *s3 = mgpuStreamCreate(), *s4 = mgpuStreamCreate();
    mgpuMemset32(e.b, 1, 8, e.s1);
    void *ev1 = mgpuEventCreate(), *ev2 = mgpuEventCreate();
    mgpuEventRecord(ev1, e.s1);
    mgpuEventRecord(ev2, e.s2);
    void *ev = which == 0 ? ev1 : ev2;
    if (which < 2)
      mgpuStreamWaitEvent(s4, ev);
    mgpuEventDestroy(ev1);
    mgpuEventDestroy(ev2);
    void *ev3 = mgpuEventCreate();
    if (which == 2) {
      mgpuEventRecord(ev3, s3);
      mgpuStreamWaitEvent(s4, ev3);
    }
    mgpuMemcpy(e.h, e.b, 32, s4);
    mgpuEventDestroy(ev3);
    mgpuStreamSynchronize(e.s1);
    mgpuStreamSynchronize(s4);
    mgpuStreamDestroy(s3);
    mgpuStreamDestroy(s4);
    teardown(&e);
    HbResult *r = end_and_check(0);
    if (which == 0)
      EXPECT_CLEAN(r);
    else
      EXPECT_ONLY(r, HB_DATA_RACE, HB_SUB_RAW);
    hb_result_free(r);
  }
}

/* A wait on a destroyed event that the runtime let through (raw handles: the driver took it)
 * is reported as the refused one is, and orders nothing: the trace of a refused wait, checked
 * as made and with the wait's refusal taken out. */
static void test_destroyed_event_let_through(void) {
  Env e;
  setup(&e);
  mgpuMemset32(e.b, 1, 8, e.s1);
  void *ev = mgpuEventCreate();
  mgpuEventRecord(ev, e.s1);
  mgpuEventDestroy(ev);
  mgpuStreamWaitEvent(e.s2, ev); /* refused: destroyed */
  mgpuMemcpy(e.h, e.b, 32, e.s2);
  mgpuStreamSynchronize(e.s1);
  mgpuStreamSynchronize(e.s2);
  teardown(&e);
  asyncfuzz_rt_end();
  int n;
  const RtRec *t = asyncfuzz_rt_trace(&n);
  RtRec *copy = malloc(sizeof(RtRec) * (size_t)n);
  CHECK(copy != NULL);
  if (copy == NULL)
    return;
  memcpy(copy, t, sizeof(RtRec) * (size_t)n);
  int w = -1, d = -1;
  for (int i = 0; i < n; i++) {
    if (copy[i].call == RT_CALL_STREAM_WAIT_EVENT)
      w = i;
    if (copy[i].call == RT_CALL_EVENT_DESTROY)
      d = i;
  }
  CHECK(w > d && d >= 0);
  for (int let = 0; let <= 1 && w >= 0; let++) {
    if (let) {
      CHECK(copy[w].err != 0);
      copy[w].err = 0;
      copy[w].detail = 0;
    }
    HbOptions o = {0};
    HbResult *r = NULL;
    AfErr err = {0};
    CHECK_EQ(hb_check(copy, n, &o, &r, &err), 0);
    CHECK_EQ(count(r, HB_USE_OF_DESTROYED_HANDLE, -1), 1);
    CHECK_EQ(count(r, HB_DATA_RACE, HB_SUB_RAW), 1);
    CHECK_EQ(r ? r->nreports : -1, 2);
    const HbReport *x = find(r, HB_USE_OF_DESTROYED_HANDLE);
    if (x)
      CHECK(x->seq1 == d && x->seq2 == w);
    hb_result_free(r);
  }
  free(copy);
}

/* A random reference: mostly small ids of each kind, sometimes one past every table. */
static RtRef random_ref(AfRng *g) {
  static const int kinds[] = {RT_REF_NONE,  RT_REF_INT,    RT_REF_NULL, RT_REF_STREAM,
                              RT_REF_EVENT, RT_REF_MODULE, RT_REF_FUNC, RT_REF_BUF,
                              RT_REF_HOST,  RT_REF_PTR,    RT_REF_BAD,  RT_REF_REGION,
                              RT_REF_STR,   RT_REF_ASYNC};
  int kind = kinds[af_rng_below(g, sizeof kinds / sizeof kinds[0])];
  uint32_t id = af_rng_below(g, 8);
  if (af_rng_chance(g, 5))
    id = af_rng_chance(g, 50) ? 0xFFFFFFu : 0x800000u | af_rng_below(g, 4);
  uint32_t val = af_rng_chance(g, 90) ? af_rng_below(g, 64) : (uint32_t)af_rng_next(g);
  return RT_REF(kind, id, val);
}

/* The checker on arbitrary traces, as `asyncfuzz check-trace` may be given: every call, with
 * random arguments, results, errors and threads, with and without the runtime's size hints (ids
 * past them count as unknown), with either option. Each check returns a result whose reports
 * name records of the trace; the sanitized build (scripts/test.sh) also checks that it stays in
 * bounds. */
static void test_random_traces(void) {
  AfRng g;
  af_rng_seed(&g, 31);
  static RtRec t[256];
  long reports = 0;
  for (int k = 0; k < 2000; k++) {
    int n = 1 + (int)af_rng_below(&g, 256);
    memset(t, 0, sizeof t);
    for (int i = 0; i < n; i++) {
      RtRec *r = &t[i];
      r->seq = (uint32_t)i;
      r->tid = (int32_t)af_rng_below(&g, 4) - 1;
      r->op = (int32_t)af_rng_below(&g, 8) - 1;
      r->call = (uint8_t)af_rng_below(&g, RT__CALL_COUNT + 1);
      r->nargs = (uint8_t)af_rng_below(&g, RT_REC_ARGS + 1);
      r->err = af_rng_chance(&g, 10) ? (uint8_t)(1 + af_rng_below(&g, RT__ERR_COUNT - 1)) : 0;
      r->detail = (uint8_t)af_rng_below(&g, RT__DETAIL_COUNT);
      r->cause = af_rng_below(&g, (uint32_t)n);
      for (int a = 0; a < RT_REC_ARGS; a++)
        r->args[a] = random_ref(&g);
      r->ret = random_ref(&g);
    }
    HbOptions o = {0};
    o.lenient_free = k & 1;
    o.legacy_sync = (k >> 1) & 1;
    if (k & 4) {
      o.nthreads = 1 + (int)af_rng_below(&g, 3);
      o.nstreams = 1 + (int)af_rng_below(&g, 6);
      o.nevents = (int)af_rng_below(&g, 6);
      o.nregions = (int)af_rng_below(&g, 3);
      o.nasync = (int)af_rng_below(&g, 3);
    }
    HbResult *r = NULL;
    AfErr err = {0};
    CHECK_EQ(hb_check(t, n, &o, &r, &err), 0);
    for (int i = 0; r && i < r->nreports; i++) {
      const HbReport *x = &r->reports[i];
      CHECK(x->seq1 >= -1 && x->seq1 < n && x->seq2 >= 0 && x->seq2 < n);
      CHECK(x->kind >= 0 && x->kind < HB__KIND_COUNT);
    }
    reports += r ? r->nreports : 0;
    hb_result_free(r);
  }
  CHECK(reports > 0);
}

int main(void) {
  test_data_races();
  test_event_snapshot();
  test_event_slots();
  test_destroyed_event_let_through();
  test_random_traces();
  test_strided_view();
  test_two_threads_one_stream();
  test_host_accesses();
  test_lifetime();
  test_handles();
  test_region_edges();
  asyncfuzz_rt_shutdown();
  return TEST_DONE("test_hb");
}
