/*
 * test_abi.c: each documented difference between the cuda and rocm flavours of the mgpu* ABI
 * (docs/abi.md), on the sim and through the happens-before checker: the same small program
 * passes under one flavour and fails under the other, for the reason the flavour gives.
 */
#include "../oracle/hb.h"
#include "../runtime/asyncfuzz_rt.h"
#include "../kernels/kernels.h"
#include "rt_helpers.h"
#include "test.h"

static void begin(int abi) {
  RtConfig c;
  memset(&c, 0, sizeof c);
  c.policy = RT_LAZY; /* device work runs only when the host waits for it */
  c.abi = abi;
  CHECK_EQ(asyncfuzz_rt_begin(&c), 0);
}

/* Ends the run: its runtime errors with (err, detail), all of them in *nerr. */
static int end_count(int err, int detail, int *nerr) {
  asyncfuzz_rt_end();
  int n, k = 0;
  const RtRec *t = asyncfuzz_rt_trace(&n);
  for (int i = 0; i < n; i++)
    k += t[i].err == err && t[i].detail == detail;
  RtSummary sum;
  asyncfuzz_rt_summary(&sum);
  *nerr = sum.nerrors;
  return k;
}

/* The checker's errors over the last run's trace, with the options of flavour abi; the first
 * error's kind in *kind (-1: none). */
static int hb_errors(int abi, int *kind) {
  int n;
  const RtRec *t = asyncfuzz_rt_trace(&n);
  HbOptions ho = {0};
  hb_options_for(&ho, abi, 0);
  HbResult *r = NULL;
  AfErr err = {0};
  CHECK_EQ(hb_check(t, n, &ho, &r, &err), 0);
  int e = r ? r->nerrors : -1;
  *kind = -1;
  for (int i = 0; r && i < r->nreports && *kind < 0; i++)
    if (hb_kind_is_error(r->reports[i].kind))
      *kind = r->reports[i].kind;
  hb_result_free(r);
  return e;
}

/* gpu.alloc host_shared: managed memory under cuda; rocm's mgpuMemAlloc ignores isHostShared,
 * so the host's read of it is an access to device memory. */
static void test_host_shared(void) {
  for (int abi = 0; abi < RT__ABI_COUNT; abi++) {
    begin(abi);
    void *s = mgpuStreamCreate();
    int32_t *b = mgpuMemAlloc(16, NULL, true);
    mgpuMemset32(b, 7, 4, s);
    mgpuStreamSynchronize(s);
    asyncfuzz_observe(0, b, b, 0, 4, 1);
    mgpuStreamDestroy(s);
    mgpuMemFree(b, NULL);
    int nerr, bad = end_count(RT_ERR_ILLEGAL_ADDRESS, RT_DETAIL_HOST_DEVICE_MEM, &nerr);
    int nobs;
    const RtObs *o = asyncfuzz_rt_observations(&nobs);
    if (abi == RT_ABI_CUDA) {
      CHECK_EQ(nerr, 0);
      CHECK_EQ(nobs, 1);
      CHECK_EQ(nobs == 1 ? o[0].vals[3] : -1, 7);
    } else {
      CHECK_EQ(bad, 1);
      CHECK_EQ(nerr, 1);
      CHECK_EQ(nobs, 0);
    }
  }
}

/* mgpuModuleLoadJIT (PTX for the JIT) and mgpuMemset16 exist in the CUDA wrappers only. */
static void test_absent_calls(void) {
  for (int abi = 0; abi < RT__ABI_COUNT; abi++) {
    begin(abi);
    void *m = mgpuModuleLoadJIT((void *)"// ptx", 2);
    void *f = m ? mgpuModuleGetFunction(m, "af_fill") : NULL;
    void *s = mgpuStreamCreate();
    int16_t *b = mgpuMemAlloc(8, NULL, false);
    mgpuMemset16(b, 0x1234, 4, s);
    mgpuStreamSynchronize(s);
    int16_t got = b[3];
    if (m)
      mgpuModuleUnload(m);
    mgpuStreamDestroy(s);
    mgpuMemFree(b, NULL);
    int nerr, absent = end_count(RT_ERR_NOT_FOUND, RT_DETAIL_ABI_ABSENT, &nerr);
    if (abi == RT_ABI_CUDA) {
      CHECK(m != NULL && f != NULL);
      CHECK_EQ(got, 0x1234);
      CHECK_EQ(nerr, 0);
    } else {
      CHECK(m == NULL);
      CHECK(got != 0x1234); /* nothing was set */
      CHECK_EQ(absent, 2);
      CHECK_EQ(nerr, 2);
      CHECK_STR(asyncfuzz_rt_detail_text(RT_DETAIL_ABI_ABSENT),
                "not in this ABI flavour's runtime wrappers");
    }
  }
}

/* A copy on the legacy (NULL) stream after a kernel on a stream from mgpuStreamCreate: rocm's
 * streams are blocking, so the copy waits for the kernel; cuda's are non-blocking, so it reads
 * what is there (sentinels or nothing) and the checker reports the race. */
static void test_legacy_stream(void) {
  for (int abi = 0; abi < RT__ABI_COUNT; abi++) {
    begin(abi);
    void *f = fill_fn();
    void *s = mgpuStreamCreate();
    int32_t *b = mgpuMemAlloc(16, NULL, false);
    int32_t h[4] = {0};
    mgpuMemHostRegister(h, sizeof h);
    launch_fill(f, b, 4, 5, s);
    mgpuMemcpy(h, b, sizeof h, NULL);
    mgpuStreamSynchronize(NULL);
    int32_t seen = h[2];
    /* and the other way: work on s after a legacy-stream op follows it */
    mgpuMemset32(b, 9, 4, NULL);
    mgpuMemcpy(h, b, sizeof h, s);
    mgpuStreamSynchronize(s);
    int32_t after = h[1];
    mgpuStreamDestroy(s);
    mgpuMemHostUnregister(h);
    mgpuMemFree(b, NULL);
    int nerr, kind;
    end_count(0, 0, &nerr);
    int races = hb_errors(abi, &kind);
    if (abi == RT_ABI_ROCM) {
      CHECK_EQ(nerr, 0);
      CHECK_EQ(seen, fill_value(5, 2));
      CHECK_EQ(after, 9);
      CHECK_EQ(races, 0);
    } else { /* (the memset on s0 is still pending at the free: an error too) */
      CHECK(seen != fill_value(5, 2));
      CHECK(after != 9);
      CHECK(races > 0);
      CHECK_EQ(kind, HB_DATA_RACE);
    }
  }
}

/* An event recorded on a blocking stream after work on the legacy stream captures that work
 * too under rocm; under cuda the stream does not wait for it, so the event is complete at once. */
static void test_event_after_legacy(void) {
  for (int abi = 0; abi < RT__ABI_COUNT; abi++) {
    begin(abi);
    void *s = mgpuStreamCreate();
    void *e = mgpuEventCreate();
    int32_t *b = mgpuMemAlloc(16, NULL, false);
    mgpuMemset32(b, 9, 4, NULL);
    mgpuEventRecord(e, s);
    mgpuEventSynchronize(e);
    int32_t seen = b[0]; /* (the sim's device memory is the test's to read) */
    mgpuStreamSynchronize(NULL);
    mgpuEventDestroy(e);
    mgpuStreamDestroy(s);
    mgpuMemFree(b, NULL);
    int nerr;
    end_count(0, 0, &nerr);
    CHECK_EQ(nerr, 0);
    if (abi == RT_ABI_ROCM)
      CHECK_EQ(seen, 9);
    else
      CHECK_EQ(seen, KERNEL_UNINIT);
  }
}

/* mgpuMemFree right after a kernel that writes the buffer: rocm's hipFree synchronizes the
 * device first; cuda's free is immediate, so the kernel runs on freed memory. */
static void test_free_synchronizes(void) {
  for (int abi = 0; abi < RT__ABI_COUNT; abi++) {
    begin(abi);
    void *f = fill_fn();
    void *s = mgpuStreamCreate();
    int32_t *b = mgpuMemAlloc(16, NULL, false);
    launch_fill(f, b, 4, 5, s);
    mgpuMemFree(b, NULL);
    mgpuStreamSynchronize(s);
    mgpuStreamDestroy(s);
    int nerr, kind;
    int uaf = end_count(RT_ERR_ILLEGAL_ADDRESS, RT_DETAIL_USE_AFTER_FREE, &nerr);
    int bad = hb_errors(abi, &kind);
    if (abi == RT_ABI_ROCM) {
      CHECK_EQ(nerr, 0);
      CHECK_EQ(bad, 0);
    } else {
      CHECK_EQ(uaf, 1);
      CHECK(bad > 0);
      CHECK_EQ(kind, HB_FREE_WHILE_IN_USE);
    }
  }
}

static void test_names(void) {
  CHECK_EQ(asyncfuzz_rt_abi_parse("cuda"), RT_ABI_CUDA);
  CHECK_EQ(asyncfuzz_rt_abi_parse("rocm"), RT_ABI_ROCM);
  CHECK_EQ(asyncfuzz_rt_abi_parse("hip"), -1);
  CHECK_STR(asyncfuzz_rt_abi_name(RT_ABI_ROCM), "rocm");
}

int main(void) {
  test_host_shared();
  test_absent_calls();
  test_legacy_stream();
  test_event_after_legacy();
  test_free_synchronizes();
  test_names();
  asyncfuzz_rt_shutdown();
  return TEST_DONE("test_abi");
}
