/*
 * test_sim.c: the sim backend of the runtime library against CUDA's documented semantics:
 * tagged handles, event capture at record time, stream waits, synchronization, the eager
 * and lazy policies, two-phase kernels, immediate frees, leaks, determinism and the run before's
 * trace.
 */
#include "../runtime/asyncfuzz_rt.h"
#include "../kernels/kernels.h"
#include "rt_helpers.h"
#include "test.h"

static void begin(int policy, uint64_t seed) {
  RtConfig c;
  memset(&c, 0, sizeof c);
  c.policy = policy;
  c.seed = seed;
  c.record_device = 1;
  CHECK_EQ(asyncfuzz_rt_begin(&c), 0);
}

static const RtRec *last_rec(int call) {
  int n;
  const RtRec *t = asyncfuzz_rt_trace(&n);
  for (int i = n - 1; i >= 0; i--)
    if (t[i].call == call)
      return &t[i];
  return NULL;
}

static int count_errors(int err, int detail) {
  int n, k = 0;
  const RtRec *t = asyncfuzz_rt_trace(&n);
  for (int i = 0; i < n; i++)
    k += t[i].err == err && t[i].detail == detail;
  return k;
}

static void test_wrong_kind_does_not_wait(void) {
  begin(RT_LAZY, 1);
  void *s = mgpuStreamCreate();
  int32_t *b = mgpuMemAlloc(16, NULL, false);
  mgpuMemset32(b, 7, 4, s);
  mgpuEventSynchronize(s); /* the #170833 mistake: a stream where an event belongs */
  const RtRec *r = last_rec(RT_CALL_EVENT_SYNCHRONIZE);
  CHECK(r != NULL);
  CHECK_EQ(r->err, RT_ERR_INVALID_HANDLE);
  CHECK_EQ(r->detail, RT_DETAIL_WRONG_KIND);
  CHECK_EQ(b[0], KERNEL_UNINIT); /* nothing waited, nothing ran */
  mgpuEventDestroy(s);
  CHECK_EQ(count_errors(RT_ERR_INVALID_HANDLE, RT_DETAIL_WRONG_KIND), 2);
  mgpuStreamSynchronize(s);
  CHECK_EQ(b[0], 7);
  mgpuStreamDestroy(s);
  mgpuMemFree(b, NULL);
  asyncfuzz_rt_end();
  RtSummary sum;
  asyncfuzz_rt_summary(&sum);
  CHECK_EQ(sum.nerrors, 2);
  CHECK_EQ(sum.streams_leaked, 0);
}

static void test_event_orders_streams(void) {
  begin(RT_LAZY, 1);
  void *f = fill_fn();
  void *s1 = mgpuStreamCreate(), *s2 = mgpuStreamCreate();
  int32_t *b = mgpuMemAlloc(16, NULL, false);
  int32_t host[4] = {0};
  launch_fill(f, b, 4, 3, s1);
  void *e = mgpuEventCreate();
  mgpuEventRecord(e, s1);
  mgpuStreamWaitEvent(s2, e);
  mgpuMemcpy(host, b, 16, s2);
  CHECK_EQ(host[0], 0); /* lazy: nothing ran yet */
  mgpuStreamSynchronize(s2);
  for (int i = 0; i < 4; i++)
    CHECK_EQ(host[i], fill_value(3, i));
  mgpuEventDestroy(e);
  mgpuStreamDestroy(s1);
  mgpuStreamDestroy(s2);
  mgpuMemFree(b, NULL);
  asyncfuzz_rt_end();
  RtSummary sum;
  asyncfuzz_rt_summary(&sum);
  CHECK_EQ(sum.nerrors, 0);
  CHECK_EQ(sum.streams_leaked + sum.events_leaked + sum.buffers_leaked, 0);
}

static void test_record_captures_at_call_time(void) {
  begin(RT_LAZY, 1);
  void *s = mgpuStreamCreate();
  int32_t *b = mgpuMemAlloc(16, NULL, false);
  mgpuMemset32(b, 1, 4, s);
  void *e = mgpuEventCreate();
  mgpuEventRecord(e, s);
  mgpuMemset32(b, 2, 4, s); /* after the record: not part of e */
  mgpuEventSynchronize(e);
  CHECK_EQ(b[0], 1);
  mgpuStreamSynchronize(s);
  CHECK_EQ(b[0], 2);
  mgpuEventDestroy(e);
  mgpuStreamDestroy(s);
  mgpuMemFree(b, NULL);
  asyncfuzz_rt_end();
}

static void test_unrecorded_event_is_empty(void) {
  begin(RT_LAZY, 1);
  void *s = mgpuStreamCreate();
  void *e = mgpuEventCreate();
  int32_t *b = mgpuMemAlloc(16, NULL, false);
  mgpuMemset32(b, 5, 4, s);
  mgpuEventSynchronize(e); /* never recorded: returns at once, no error */
  CHECK_EQ(last_rec(RT_CALL_EVENT_SYNCHRONIZE)->err, RT_ERR_OK);
  CHECK_EQ(b[0], KERNEL_UNINIT);
  mgpuStreamWaitEvent(s, e);
  CHECK_EQ(last_rec(RT_CALL_STREAM_WAIT_EVENT)->err, RT_ERR_OK);
  mgpuStreamSynchronize(s);
  CHECK_EQ(b[0], 5);
  mgpuEventDestroy(e);
  mgpuStreamDestroy(s);
  mgpuMemFree(b, NULL);
  asyncfuzz_rt_end();
}

static void test_destroyed_handles(void) {
  begin(RT_LAZY, 1);
  void *s = mgpuStreamCreate();
  int32_t *b = mgpuMemAlloc(16, NULL, false);
  mgpuMemset32(b, 9, 4, s);
  mgpuStreamDestroy(s); /* legal with pending work: the work still runs */
  CHECK_EQ(last_rec(RT_CALL_STREAM_DESTROY)->err, RT_ERR_OK);
  mgpuMemset32(b, 10, 4, s); /* use after destroy: reported, no effect */
  CHECK_EQ(last_rec(RT_CALL_MEMSET32)->err, RT_ERR_INVALID_HANDLE);
  CHECK_EQ(last_rec(RT_CALL_MEMSET32)->detail, RT_DETAIL_DESTROYED);
  mgpuStreamDestroy(s);
  CHECK_EQ(last_rec(RT_CALL_STREAM_DESTROY)->detail, RT_DETAIL_DESTROYED);
  void *e = mgpuEventCreate();
  mgpuEventDestroy(e);
  mgpuEventSynchronize(e);
  CHECK_EQ(last_rec(RT_CALL_EVENT_SYNCHRONIZE)->detail, RT_DETAIL_DESTROYED);
  mgpuEventSynchronize((void *)b); /* a buffer pointer is no handle */
  CHECK_EQ(last_rec(RT_CALL_EVENT_SYNCHRONIZE)->detail, RT_DETAIL_NOT_A_HANDLE);
  mgpuEventSynchronize(NULL);
  CHECK_EQ(last_rec(RT_CALL_EVENT_SYNCHRONIZE)->detail, RT_DETAIL_NULL_HANDLE);
  asyncfuzz_rt_end(); /* drains: the first memset ran, the rejected one did not */
  CHECK_EQ(b[0], 9);
  RtSummary sum;
  asyncfuzz_rt_summary(&sum);
  CHECK_EQ(sum.buffers_leaked, 1);
  CHECK_EQ(sum.streams_leaked, 0);
}

static void test_free_is_immediate(void) {
  begin(RT_LAZY, 1);
  void *s = mgpuStreamCreate();
  int32_t *b = mgpuMemAlloc(16, NULL, false);
  mgpuMemset32(b, 4, 4, s);
  mgpuMemFree(b, s); /* not stream-ordered: the pending memset now touches freed memory */
  CHECK_EQ(last_rec(RT_CALL_MEM_FREE)->err, RT_ERR_OK);
  mgpuStreamSynchronize(s);
  CHECK_EQ(count_errors(RT_ERR_ILLEGAL_ADDRESS, RT_DETAIL_USE_AFTER_FREE), 1);
  mgpuMemFree(b, NULL);
  CHECK_EQ(last_rec(RT_CALL_MEM_FREE)->detail, RT_DETAIL_DOUBLE_FREE);
  int32_t local[4];
  mgpuMemFree(local, NULL);
  CHECK_EQ(last_rec(RT_CALL_MEM_FREE)->detail, RT_DETAIL_INVALID_FREE);
  mgpuStreamDestroy(s);
  asyncfuzz_rt_end();

  /* the lenient model: the free completes pending work first */
  RtConfig c;
  memset(&c, 0, sizeof c);
  c.policy = RT_LAZY;
  c.memfree_sync = 1;
  asyncfuzz_rt_begin(&c);
  s = mgpuStreamCreate();
  b = mgpuMemAlloc(16, NULL, false);
  mgpuMemset32(b, 4, 4, s);
  mgpuMemFree(b, s);
  mgpuStreamSynchronize(s);
  mgpuStreamDestroy(s);
  asyncfuzz_rt_end();
  RtSummary sum;
  asyncfuzz_rt_summary(&sum);
  CHECK_EQ(sum.nerrors, 0);
}

static void test_eager_completes_at_once(void) {
  begin(RT_EAGER, 1);
  void *f = fill_fn();
  void *s = mgpuStreamCreate();
  int32_t *b = mgpuMemAlloc(16, NULL, false);
  launch_fill(f, b, 4, 11, s);
  CHECK_EQ(b[3], fill_value(11, 3));
  mgpuStreamDestroy(s);
  mgpuMemFree(b, NULL);
  asyncfuzz_rt_end();
}

static void test_kernel_sentinel_window(void) {
  /* Under the random policy a kernel's start and finish are separate steps, so some seed
   * must let the host see the sentinel between them. */
  int seen_sentinel = 0, seen_result = 0;
  for (uint64_t seed = 0; seed < 200; seed++) {
    begin(RT_RANDOM, seed);
    void *f = fill_fn();
    void *s = mgpuStreamCreate();
    int32_t *b = mgpuMemAlloc(16, NULL, false);
    launch_fill(f, b, 4, 1, s);
    mgpuSetDefaultDevice(0); /* any call is a chance for device work to advance */
    seen_sentinel |= b[0] == KERNEL_SENTINEL;
    seen_result |= b[0] == fill_value(1, 0);
    mgpuStreamDestroy(s);
    mgpuMemFree(b, NULL);
    asyncfuzz_rt_end();
  }
  CHECK(seen_sentinel);
  CHECK(seen_result);
}

/* af_transform_<type> on one element, eager: its lane in, dst = src * 3 + 5 on the lane, the
 * element out (the values worked out by hand from kernels.h's rule). */
static void transform_one(const char *name, const void *src, size_t bytes, void *dst) {
  begin(RT_EAGER, 1);
  void *m = mgpuModuleLoad("k", 1);
  void *f = mgpuModuleGetFunction(m, name);
  CHECK(f != NULL);
  char *d = mgpuMemAlloc(bytes, NULL, false), *a = mgpuMemAlloc(bytes, NULL, false);
  memcpy(a, src, bytes);
  void *da = d, *aa = a;
  int64_t off = 0, size = 1, stride = 1;
  int32_t v = 5, spin = 8;
  void *params[] = {&da, &da, &off, &size, &stride, &aa, &aa, &off, &size, &stride, &v, &spin};
  mgpuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL, 12);
  CHECK_EQ(count_errors(RT_ERR_INVALID_VALUE, RT_DETAIL_BAD_ARGS), 0);
  memcpy(dst, d, bytes);
  mgpuMemFree(d, NULL);
  mgpuMemFree(a, NULL);
  asyncfuzz_rt_end();
}

static void test_typed_kernels(void) {
  uint8_t b1 = 1, b8 = 0x80, o1 = 0xFF, o8 = 0;
  transform_one("af_transform_i1", &b1, 1, &o1);
  CHECK_EQ(o1, 0); /* 1 * 3 + 5 = 8: its lowest bit */
  b1 = 0;
  transform_one("af_transform_i1", &b1, 1, &o1);
  CHECK_EQ(o1, 1);
  transform_one("af_transform_i8", &b8, 1, &o8);
  CHECK_EQ(o8, 0x85);          /* -128 * 3 + 5 = -379 */
  uint16_t h = 0x3C00, oh = 0; /* f16 1.0, taken as its bits */
  transform_one("af_transform_f16", &h, 2, &oh);
  CHECK_EQ(oh, 0xB405);
  uint32_t f = 0x3F800000u, of = 0;
  transform_one("af_transform_f32", &f, 4, &of);
  CHECK_EQ(of, 0xBE800005u);
  uint64_t q = 0x100000002ull, oq = 0; /* the low half in */
  transform_one("af_transform_i64", &q, 8, &oq);
  CHECK_EQ(oq, 11u);
  q = 0x7FFFFFFFull; /* 0x80000002 out, sign-extended */
  transform_one("af_transform_index", &q, 8, &oq);
  CHECK_EQ(oq, 0xFFFFFFFF80000002ull);
  /* an i16 kernel's spin phase writes the sentinel's low half, two bytes only */
  int seen = 0;
  for (uint64_t seed = 0; seed < 200 && !seen; seed++) {
    begin(RT_RANDOM, seed);
    void *m = mgpuModuleLoad("k", 1);
    void *fn = mgpuModuleGetFunction(m, "af_fill_i16");
    uint16_t *b = mgpuMemAlloc(8, NULL, false);
    b[1] = 0x1234;
    void *p = b;
    int64_t off = 0, size = 1, stride = 1;
    int32_t v = 1, spin = 8;
    void *params[] = {&p, &p, &off, &size, &stride, &v, &spin};
    mgpuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL, 7);
    mgpuSetDefaultDevice(0);
    if (b[0] == 0x5E5E) {
      seen = 1;
      CHECK_EQ(b[1], 0x1234);
    }
    mgpuMemFree(b, NULL);
    asyncfuzz_rt_end();
  }
  CHECK(seen);
}

static void test_bad_launches(void) {
  begin(RT_EAGER, 1);
  void *m = mgpuModuleLoad("k", 1);
  CHECK(mgpuModuleGetFunction(m, "no_such_function") == NULL);
  CHECK_EQ(last_rec(RT_CALL_MODULE_GET_FUNCTION)->err, RT_ERR_NOT_FOUND);
  void *f = mgpuModuleGetFunction(m, "af_fill");
  int32_t *b = mgpuMemAlloc(16, NULL, false);
  void *alloc = b, *aligned = b;
  int64_t off = 0, size = 4, stride = 1;
  int32_t v = 1, spin = 1;
  void *params[] = {&alloc, &aligned, &off, &size, &stride, &v, &spin};
  /* a kernel outlined from a gpu.launch ("<func>_kernel"): a handle, and at its launch its
   * first argument must be a kernel's tag (then its value and spin count, then its buffers) */
  void *o = mgpuModuleGetFunction(m, "af_case_3_kernel");
  CHECK(o != NULL);
  mgpuLaunchKernel(o, 1, 1, 1, 4, 1, 1, 0, NULL, params, NULL, 7);
  CHECK_EQ(last_rec(RT_CALL_LAUNCH_KERNEL)->detail, RT_DETAIL_BAD_ARGS);
  int32_t tag = KERNEL_TAG(KERNEL_ID(KERNEL_FILL, 0, KERNEL_ELEM_I32));
  void *tagged[] = {&tag, &v, &spin, &alloc, &aligned, &off, &size, &stride};
  mgpuLaunchKernel(o, 1, 1, 1, 4, 1, 1, 0, NULL, tagged, NULL, 8);
  CHECK_EQ(last_rec(RT_CALL_LAUNCH_KERNEL)->err, 0);
  mgpuStreamSynchronize(NULL);
  CHECK_EQ(b[3], fill_value(1, 3));
  mgpuLaunchKernel(f, 1, 1, 1, 4, 1, 1, 0, NULL, params, NULL, 5);
  CHECK_EQ(last_rec(RT_CALL_LAUNCH_KERNEL)->detail, RT_DETAIL_BAD_ARGS);
  mgpuLaunchKernel(NULL, 1, 1, 1, 4, 1, 1, 0, NULL, params, NULL, 7);
  CHECK_EQ(last_rec(RT_CALL_LAUNCH_KERNEL)->err, RT_ERR_INVALID_HANDLE);
  mgpuLaunchKernel(f, 1, 1, 1, 2, 1, 1, 0, NULL, params, NULL, 7); /* too few threads */
  CHECK_EQ(last_rec(RT_CALL_LAUNCH_KERNEL)->detail, RT_DETAIL_BAD_ARGS);
  mgpuLaunchKernel(f, 1, 1, 1, 4, 1, 1, 0, NULL, params, NULL, 7); /* legacy stream */
  CHECK_EQ(last_rec(RT_CALL_LAUNCH_KERNEL)->err, RT_ERR_OK);
  CHECK_EQ(b[0], fill_value(1, 0));
  int32_t plain[4];
  void *palloc = plain, *paligned = plain;
  void *pparams[] = {&palloc, &paligned, &off, &size, &stride, &v, &spin};
  mgpuLaunchKernel(f, 1, 1, 1, 4, 1, 1, 0, NULL, pparams, NULL, 7); /* host memory: refused */
  CHECK_EQ(last_rec(RT_CALL_LAUNCH_KERNEL)->err, RT_ERR_ILLEGAL_ADDRESS);
  CHECK_EQ(last_rec(RT_CALL_LAUNCH_KERNEL)->detail, RT_DETAIL_BAD_POINTER);
  int32_t big[8];
  mgpuMemcpy(big, b, 32, NULL); /* overruns the 16-byte device buffer */
  CHECK_EQ(last_rec(RT_CALL_MEMCPY)->detail, RT_DETAIL_BAD_POINTER);
  mgpuMemcpy(big, b, 16, NULL); /* plain host memory is a valid copy target */
  CHECK_EQ(last_rec(RT_CALL_MEMCPY)->err, RT_ERR_OK);
  CHECK_EQ(big[0], fill_value(1, 0));
  mgpuMemFree(b, NULL);
  mgpuModuleUnload(m);
  asyncfuzz_rt_end();
}

static void test_host_register(void) {
  begin(RT_EAGER, 1);
  void *f = fill_fn();
  int32_t host[4];
  /* a kernel may not write plain host memory, but may write registered host memory */
  struct {
    void *allocated, *aligned;
    int64_t offset, size, stride;
  } desc = {host, host, 0, 4, 1};
  mgpuMemHostRegisterMemRef(1, &desc, 4);
  CHECK_EQ(last_rec(RT_CALL_HOST_REGISTER)->err, RT_ERR_OK);
  launch_fill(f, host, 4, 2, NULL);
  CHECK_EQ(last_rec(RT_CALL_LAUNCH_KERNEL)->err, RT_ERR_OK);
  CHECK_EQ(host[3], fill_value(2, 3));
  mgpuMemHostUnregisterMemRef(1, &desc, 4);
  CHECK_EQ(last_rec(RT_CALL_HOST_UNREGISTER)->err, RT_ERR_OK);
  launch_fill(f, host, 4, 2, NULL);
  CHECK_EQ(last_rec(RT_CALL_LAUNCH_KERNEL)->detail, RT_DETAIL_BAD_POINTER);
  mgpuMemHostUnregister(host); /* twice */
  CHECK_EQ(last_rec(RT_CALL_HOST_UNREGISTER)->err, RT_ERR_INVALID_VALUE);
  asyncfuzz_rt_end();
  AfBuf t;
  af_buf_init(&t);
  asyncfuzz_rt_format_trace(&t, 0, -1);
  CHECK_CONTAINS(t.p, "mgpuMemHostRegister(hr0+0, 16)");
  CHECK_CONTAINS(t.p, "mgpuLaunchKernel(f:af_fill, s0, hr0+0, 2, 4)");
  af_buf_free(&t);
}

static void test_leaks_counted(void) {
  begin(RT_EAGER, 1);
  mgpuStreamCreate();
  mgpuEventCreate();
  mgpuMemAlloc(8, NULL, true);
  CHECK(mgpuMemAlloc(0, NULL, false) == NULL); /* size 0: no allocation */
  asyncfuzz_rt_end();
  RtSummary sum;
  asyncfuzz_rt_summary(&sum);
  CHECK_EQ(sum.streams_leaked, 1);
  CHECK_EQ(sum.events_leaked, 1);
  CHECK_EQ(sum.buffers_leaked, 1);
}

static char *run_trace(int policy, uint64_t seed) {
  begin(policy, seed);
  void *f = fill_fn();
  void *s[3];
  int32_t *b[3];
  for (int i = 0; i < 3; i++) {
    s[i] = mgpuStreamCreate();
    b[i] = mgpuMemAlloc(16, NULL, false);
    launch_fill(f, b[i], 4, i, s[i]);
    mgpuMemset32(b[i], (unsigned)i, 2, s[i]);
  }
  for (int i = 0; i < 3; i++) {
    mgpuStreamSynchronize(s[i]);
    mgpuStreamDestroy(s[i]);
    mgpuMemFree(b[i], NULL);
  }
  asyncfuzz_rt_end();
  AfBuf t;
  af_buf_init(&t);
  asyncfuzz_rt_format_trace(&t, 0, -1);
  return af_buf_take(&t);
}

static void test_determinism(void) {
  for (int p = 0; p < RT__POLICY_COUNT; p++) {
    char *a = run_trace(p, 42), *b = run_trace(p, 42);
    CHECK_STR(a, b);
    af_free(a);
    af_free(b);
  }
  /* different seeds reorder device work under random */
  int differ = 0;
  char *base = run_trace(RT_RANDOM, 0);
  for (uint64_t s = 1; s < 20 && !differ; s++) {
    char *o = run_trace(RT_RANDOM, s);
    differ = strcmp(base, o) != 0;
    af_free(o);
  }
  af_free(base);
  CHECK(differ);
}

/* A chain of 70 streams (more than one word of the scheduler's bitmap of what can run), each
 * copying its predecessor's buffer after waiting on its event, beside streams of their own: under
 * every policy and several seeds no copy runs before the one it waits on (the last buffer holds
 * the first one's value), every wait is woken when its work is done (the synchronize returns with
 * all of it done), and random orders the device steps differently from seed to seed. */
enum { CHAIN = 70, LONE = 6 };

static unsigned run_chain(int policy, uint64_t seed) {
  begin(policy, seed);
  void *s[CHAIN], *lone[LONE], *e[CHAIN];
  int32_t *b[CHAIN], *lb[LONE];
  for (int i = 0; i < LONE; i++) {
    lone[i] = mgpuStreamCreate();
    lb[i] = mgpuMemAlloc(16, NULL, false);
    mgpuMemset32(lb[i], (unsigned)(100 + i), 4, lone[i]);
  }
  for (int i = 0; i < CHAIN; i++) {
    s[i] = mgpuStreamCreate();
    e[i] = mgpuEventCreate();
    b[i] = mgpuMemAlloc(16, NULL, false);
    if (i == 0) {
      mgpuMemset32(b[0], 7, 4, s[0]);
    } else {
      mgpuStreamWaitEvent(s[i], e[i - 1]);
      mgpuMemcpy(b[i], b[i - 1], 16, s[i]);
    }
    mgpuEventRecord(e[i], s[i]);
  }
  mgpuStreamSynchronize(s[CHAIN - 1]);
  for (int i = 0; i < CHAIN; i++)
    for (int k = 0; k < 4; k++)
      CHECK_EQ(b[i][k], 7);
  unsigned order = 0; /* the streams of the first 8 device steps */
  int n;
  const RtRec *t = asyncfuzz_rt_trace(&n);
  for (int i = 0, k = 0; i < n && k < 8; i++)
    if (t[i].call == RT_CALL_EXEC)
      order = order * 31u + (unsigned)RT_REF_ID(t[i].args[0]), k++;
  for (int i = 0; i < LONE; i++) {
    mgpuStreamSynchronize(lone[i]);
    CHECK_EQ(lb[i][3], 100 + i);
    mgpuStreamDestroy(lone[i]);
    mgpuMemFree(lb[i], NULL);
  }
  for (int i = 0; i < CHAIN; i++) {
    mgpuEventDestroy(e[i]);
    mgpuStreamDestroy(s[i]);
    mgpuMemFree(b[i], NULL);
  }
  asyncfuzz_rt_end();
  RtSummary sum;
  asyncfuzz_rt_summary(&sum);
  CHECK_EQ(sum.nerrors, 0);
  return order;
}

static void test_chain_of_waits(void) {
  for (int p = 0; p < RT__POLICY_COUNT; p++) {
    unsigned seen[24];
    int distinct = 0;
    for (uint64_t seed = 1; seed <= 24; seed++) {
      unsigned o = run_chain(p, seed);
      int k = 0;
      while (k < distinct && seen[k] != o)
        k++;
      if (k == distinct)
        seen[distinct++] = o;
    }
    if (p == RT_RANDOM)
      CHECK(distinct >= 3);
  }
}

/* The run before's trace stays readable, unchanged, until the next run begins
 * (asyncfuzz_rt_prev_trace), and the last run's is the current trace. */
static void test_prev_trace(void) {
  char *a = run_trace(RT_RANDOM, 1);
  int na;
  const RtRec *ta = asyncfuzz_rt_trace(&na);
  CHECK(na > 10);
  RtRec *first = af_malloc(sizeof(RtRec) * (size_t)na);
  memcpy(first, ta, sizeof(RtRec) * (size_t)na);
  begin(RT_LAZY, 2);
  mgpuStreamDestroy(mgpuStreamCreate());
  asyncfuzz_rt_end();
  int np, n;
  const RtRec *tp = asyncfuzz_rt_prev_trace(&np);
  const RtRec *t = asyncfuzz_rt_trace(&n);
  CHECK_EQ(np, na);
  CHECK(memcmp(tp, first, sizeof(RtRec) * (size_t)na) == 0);
  CHECK_EQ(n, 2);
  CHECK_EQ(t[0].call, RT_CALL_STREAM_CREATE);
  CHECK_EQ(t[1].call, RT_CALL_STREAM_DESTROY);
  char *b = run_trace(RT_RANDOM, 1); /* a third run: the second one's trace is the previous */
  CHECK_STR(a, b);
  tp = asyncfuzz_rt_prev_trace(&np);
  CHECK_EQ(np, 2);
  CHECK_EQ(tp[1].call, RT_CALL_STREAM_DESTROY);
  af_free(first);
  af_free(a);
  af_free(b);
}

/* A run started without a harness (code compiled by MLIR) from refused settings (a backend, an ABI
 * or a schedule seed that is none): it goes on on the sim, its first record fails with why, and
 * the library neither prints nor exits. */
static void test_refused_settings(void) {
  static const struct {
    const char *var, *val, *why;
  } cases[] = {
      {"ASYNCFUZZ_BACKEND", "nope", "ASYNCFUZZ_BACKEND=nope is not a backend"},
      {"ASYNCFUZZ_ABI", "vulkan", "ASYNCFUZZ_ABI=vulkan is not an ABI flavour"},
      {"ASYNCFUZZ_SCHED_SEED", "12abc", "ASYNCFUZZ_SCHED_SEED=12abc is not a whole decimal number"},
      {"ASYNCFUZZ_SCHED_SEED", "-1", "ASYNCFUZZ_SCHED_SEED=-1 is not a whole decimal number"},
      {"ASYNCFUZZ_SCHED_SEED", "", "ASYNCFUZZ_SCHED_SEED= is not a whole decimal number"},
      {"ASYNCFUZZ_BACKEND", "cuda", "backend cuda: "}};
  setenv("ASYNCFUZZ_CUDA_BACKEND", "/nonexistent/libasyncfuzz_cuda.so", 1);
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    setenv(cases[k].var, cases[k].val, 1);
    void *s = mgpuStreamCreate(); /* the first call starts the run */
    mgpuStreamDestroy(s);
    CHECK_CONTAINS(asyncfuzz_rt_config_error(), cases[k].why);
    int n;
    const RtRec *t = asyncfuzz_rt_trace(&n);
    CHECK(n >= 3);
    CHECK_EQ(t[0].call, RT_CALL_CONFIG);
    CHECK_EQ(t[0].err, RT_ERR_INVALID_VALUE);
    CHECK_EQ(t[0].detail, RT_DETAIL_CONFIG);
    CHECK_EQ(t[1].call, RT_CALL_STREAM_CREATE); /* on the sim */
    CHECK_EQ(t[1].err, RT_ERR_OK);
    CHECK_EQ(asyncfuzz_rt_end(), 0);
    RtSummary sum;
    asyncfuzz_rt_summary(&sum);
    CHECK_EQ(sum.nerrors, 1);
    unsetenv(cases[k].var);
  }
  unsetenv("ASYNCFUZZ_CUDA_BACKEND");
  begin(RT_EAGER, 1); /* a harness's run: its settings are its own */
  CHECK_STR(asyncfuzz_rt_config_error(), "");
  asyncfuzz_rt_end();
}

/* Many allocations, some freed: a pointer into any of them is named by its allocation and
 * offset, one element past its end is refused, and work queued on a freed one fails as a use
 * after free while the others' run. */
static void test_many_allocations(void) {
  enum { N = 48 };
  begin(RT_LAZY, 3);
  void *s = mgpuStreamCreate();
  int32_t *b[N];
  for (int i = 0; i < N; i++)
    b[i] = mgpuMemAlloc((uint64_t)(16 + 4 * (i % 7)), NULL, false);
  int freed = 0;
  for (int i = 0; i < N; i++) {
    int n = 4 + i % 7;
    mgpuMemset32(b[i] + 1, (unsigned)i, (size_t)(n - 1), s); /* an interior pointer */
    const RtRec *r = last_rec(RT_CALL_MEMSET32);
    CHECK_EQ(r->err, RT_ERR_OK);
    CHECK_EQ(RT_REF_KIND(r->args[0]), RT_REF_BUF);
    CHECK_EQ(RT_REF_ID(r->args[0]), i);
    CHECK_EQ(RT_REF_VAL(r->args[0]), 4u);
    mgpuMemset32(b[i] + 1, 0, (size_t)n, s); /* one element past the end */
    CHECK_EQ(last_rec(RT_CALL_MEMSET32)->detail, RT_DETAIL_BAD_POINTER);
  }
  for (int i = 0; i < N; i += 3, freed++)
    mgpuMemFree(b[i], NULL); /* not stream-ordered: the memsets queued on them hit freed memory */
  mgpuStreamSynchronize(s);
  CHECK_EQ(count_errors(RT_ERR_ILLEGAL_ADDRESS, RT_DETAIL_USE_AFTER_FREE), freed);
  for (int i = 1; i < N; i += 3)
    CHECK_EQ(b[i][1], i);
  for (int i = 0; i < N; i++)
    if (i % 3)
      mgpuMemFree(b[i], NULL);
  mgpuStreamDestroy(s);
  asyncfuzz_rt_end();
  RtSummary sum;
  asyncfuzz_rt_summary(&sum);
  CHECK_EQ(sum.buffers_leaked, 0);
}

int main(void) {
  test_refused_settings();
  test_wrong_kind_does_not_wait();
  test_event_orders_streams();
  test_record_captures_at_call_time();
  test_unrecorded_event_is_empty();
  test_destroyed_handles();
  test_free_is_immediate();
  test_many_allocations();
  test_eager_completes_at_once();
  test_kernel_sentinel_window();
  test_typed_kernels();
  test_bad_launches();
  test_host_register();
  test_leaks_counted();
  test_determinism();
  test_chain_of_waits();
  test_prev_trace();
  asyncfuzz_rt_shutdown();
  return TEST_DONE("test_sim");
}
