/*
 * test_program.c: a user's program on the runtime library (check-mlir): kernels known by their
 * bodies' effects (the table check_prog_kernels reads from MLIR, the kernel.access records of a
 * launch, what the checker makes of them), host memory the program allocated itself, printMemref
 * as a host read, and the wrapper functions that refuse or belong to one flavour only.
 */
#include "../check/check.h"
#include "../runtime/asyncfuzz_rt.h"
#include "../kernels/kernels.h"
#include "test.h"

#include <stdlib.h>

void _mlir_ciface_printMemrefI32(void *m); /* (rt_print.c: the runner utils' name) */

static const char kernels_mlir[] =
    "gpu.module @m {\n"
    "  gpu.func @copy(%out: memref<?xf32>, %in: memref<4x?xf32, strided<[?, 1]>>, %k: f32) "
    "kernel {\n"
    "    %i = gpu.thread_id x\n"
    "    %v = memref.subview %in[0, 0] [1, 4] [1, 1] : memref<4x?xf32, strided<[?, 1]>> to "
    "memref<4xf32, strided<[1]>>\n"
    "    %x = memref.load %v[%i] : memref<4xf32, strided<[1]>>\n"
    "    memref.store %x, %out[%i] : memref<?xf32>\n"
    "    gpu.return\n"
    "  }\n"
    "  gpu.func @bump(%c: memref<?xi32>, %unused: memref<?xi32>) kernel attributes "
    "{known_block_size = array<i32: 4, 1, 1>} {\n"
    "    %i = gpu.thread_id x\n"
    "    %one = arith.constant 1 : i32\n"
    "    %old = memref.atomic_rmw addi %one, %c[%i] : (i32, memref<?xi32>) -> i32\n"
    "    %n = memref.dim %unused, %i : memref<?xi32>\n"
    "    gpu.return\n"
    "  }\n"
    "  gpu.func @helper(%a: memref<?xi32>) {\n"
    "    memref.store %a, %a[%a] : memref<?xi32>\n"
    "    gpu.return\n"
    "  }\n"
    "  gpu.func @opaque(%a: memref<?xi32>) kernel {\n"
    "    func.call @who_knows(%a) : (memref<?xi32>) -> ()\n"
    "    gpu.return\n"
    "  }\n"
    "}\n";

static void test_kernel_effects(void) {
  char *t = gen_mlir_kernels(kernels_mlir);
  CHECK(t != NULL);
  CHECK_CONTAINS(t, "\ncopy m1:w m2:r s\n"); /* a load through a subview reads %in */
  CHECK_CONTAINS(t, "\nbump m1:rw m1:-\n");  /* atomic: both; memref.dim: no access */
  CHECK_CONTAINS(t, "\nopaque m1:rw\n");     /* a call: anything */
  CHECK(strstr(t, "helper") == NULL);        /* not a kernel */
  char msg[200];
  CHECK_EQ(kernel_foreign_set(t, msg, sizeof msg), 0);
  CHECK_EQ(kernel_foreign_count(), 3);
  CHECK_EQ(kernel_lookup("bump"), KERNEL__IDS + 1);
  CHECK_EQ(kernel_foreign(KERNEL__IDS + 1)->access[0], KERNEL_READ | KERNEL_WRITE);
  CHECK_STR(kernel_name(KERNEL__IDS), "copy");
  CHECK(kernel_foreign_set("k m1:x\n", msg, sizeof msg) < 0);
  CHECK_CONTAINS(msg, "bad argument");
  CHECK_EQ(kernel_foreign_count(), 0);
  af_free(t);
}

static void begin_program(int policy) {
  RtConfig c;
  memset(&c, 0, sizeof c);
  c.policy = policy;
  c.program = 1;
  CHECK_EQ(asyncfuzz_rt_begin(&c), 0);
}

static int count_calls(int call) {
  int n, k = 0;
  const RtRec *t = asyncfuzz_rt_trace(&n);
  for (int i = 0; i < n; i++)
    k += t[i].call == call;
  return k;
}

/* k(dst, src): writes dst, reads src, launched with expanded descriptors on stream s. */
static void launch(void *f, float *dst, float *src, void *s) {
  void *a0 = dst, *a1 = src;
  int64_t off = 0, n = 4, one = 1;
  void *params[] = {&a0, &a0, &off, &n, &one, &a1, &a1, &off, &n, &one};
  mgpuLaunchKernel(f, 1, 1, 1, 4, 1, 1, 0, s, params, NULL, 10);
}

static void test_foreign_launch(void) {
  char msg[200];
  CHECK_EQ(kernel_foreign_set("k m1:w m1:r\n", msg, sizeof msg), 0);
  begin_program(RT_LAZY);
  float *a = mgpuMemAlloc(16, NULL, false), *b = mgpuMemAlloc(16, NULL, false);
  void *f = mgpuModuleGetFunction(mgpuModuleLoad("blob", 4), "k");
  void *s1 = mgpuStreamCreate(), *s2 = mgpuStreamCreate();
  float *host = malloc(16);
  memset(host, 0, 16);
  mgpuMemcpy(b, host, 16, s1); /* the program's own memory: adopted */
  launch(f, a, b, s2);         /* reads b on another stream: nothing orders it after the copy */
  mgpuStreamSynchronize(s1);
  mgpuStreamSynchronize(s2);
  int n;
  const RtRec *t = asyncfuzz_rt_trace(&n);
  CHECK_EQ(count_calls(RT_CALL_HOST_ADOPT), 1);
  CHECK_EQ(count_calls(RT_CALL_KERNEL_ACCESS), 2);
  int first = -1;
  for (int i = 0; i < n && first < 0; i++)
    if (t[i].call == RT_CALL_KERNEL_ACCESS)
      first = i;
  CHECK(first > 0 && t[first - 1].call == RT_CALL_LAUNCH_KERNEL && t[first - 1].err == 0);
  CHECK_EQ(RT_REF_VAL(t[first].args[1]), KERNEL_READ); /* reads first */
  CHECK_EQ(RT_REF_VAL(t[first + 1].args[1]), KERNEL_WRITE);
  CHECK_EQ(t[first].cause, t[first - 1].seq);
  float sentinel;
  int32_t word = KERNEL_SENTINEL;
  memcpy(&sentinel, &word, 4);
  CHECK(memcmp(&a[0], &sentinel, 4) != 0); /* finished: its mix, not the sentinel */
  HbOptions ho = {0};
  hb_options_for(&ho, RT_ABI_CUDA, 0);
  HbResult *hb = NULL;
  AfErr err = {0};
  CHECK_EQ(hb_check(t, n, &ho, &hb, &err), 0);
  int raw = 0;
  for (int i = 0; hb && i < hb->nreports; i++)
    raw += hb->reports[i].kind == HB_DATA_RACE && hb->reports[i].subkind == HB_SUB_RAW &&
           t[hb->reports[i].seq2].call == RT_CALL_LAUNCH_KERNEL;
  CHECK_EQ(raw, 1); /* the copy's write of b, the kernel's read: named by its launch */
  hb_result_free(hb);
  mgpuStreamDestroy(s1);
  mgpuStreamDestroy(s2);
  mgpuMemFree(a, NULL);
  mgpuMemFree(b, NULL);
  asyncfuzz_rt_end();
  free(host);
  kernel_foreign_set("", msg, sizeof msg);
}

static void test_unknown_kernel_and_prints(void) {
  char msg[200];
  CHECK_EQ(kernel_foreign_set("", msg, sizeof msg), 0);
  begin_program(RT_EAGER);
  int32_t *d = mgpuMemAlloc(16, NULL, false);
  void *f = mgpuModuleGetFunction(mgpuModuleLoad("blob", 4), "nobody_knows");
  CHECK(f != NULL); /* no body: every buffer it is given, read and written */
  void *a0 = d, *p = NULL;
  int64_t off = 0, n = 4, one = 1;
  void *params[] = {&a0, &a0, &off, &n, &one, &p};
  mgpuLaunchKernel(f, 1, 1, 1, 4, 1, 1, 0, NULL, params, NULL, 6);
  CHECK_EQ(count_calls(RT_CALL_KERNEL_ACCESS), 1);
  int32_t host[4] = {1, 2, 3, 4};
  struct {
    int32_t *alloc, *aligned;
    int64_t off, size, stride;
  } desc = {host, host, 0, 4, 1};
  struct {
    int64_t rank;
    void *d;
  } um = {1, &desc};
  _mlir_ciface_printMemrefI32(&um);
  const RtRec *obs = NULL;
  int nr;
  const RtRec *t = asyncfuzz_rt_trace(&nr);
  for (int i = 0; i < nr; i++)
    if (t[i].call == RT_CALL_OBSERVE)
      obs = &t[i];
  CHECK(obs != NULL && obs->err == 0 && RT_REF_KIND(obs->args[1]) == RT_REF_HOST);
  mgpuMemFree(d, NULL);
  asyncfuzz_rt_end();
}

static void test_unmodelled(void) {
  RtConfig c;
  memset(&c, 0, sizeof c);
  CHECK_EQ(asyncfuzz_rt_begin(&c), 0);
  CHECK_EQ(mgpuSpMV(), 0);
  int n;
  const RtRec *t = asyncfuzz_rt_trace(&n);
  CHECK_EQ(t[n - 1].call, RT_CALL_UNMODELLED);
  CHECK_EQ(t[n - 1].err, RT_ERR_NOT_SUPPORTED);
  AfBuf b;
  af_buf_init(&b);
  asyncfuzz_rt_format_rec(&b, &t[n - 1]);
  CHECK_CONTAINS(b.p, "mgpuSpMV() ! CUDA_ERROR_NOT_SUPPORTED");
  af_buf_free(&b);
  int32_t x[2];
  RtMemRef1d m = mgpuMemGetDeviceMemRef1dInt32(x, x, 0, 2, 1); /* a rocm call, under cuda */
  CHECK(m.aligned == NULL);
  t = asyncfuzz_rt_trace(&n);
  CHECK_EQ(t[n - 1].detail, RT_DETAIL_ABI_ABSENT);
  asyncfuzz_rt_end();
  c.abi = RT_ABI_ROCM;
  CHECK_EQ(asyncfuzz_rt_begin(&c), 0);
  m = mgpuMemGetDeviceMemRef1dInt32(x, x, 0, 2, 1);
  CHECK(m.aligned == x && m.size == 2);
  mgpuLaunchClusterKernel(NULL, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL, 0);
  t = asyncfuzz_rt_trace(&n);
  CHECK_EQ(t[n - 1].detail, RT_DETAIL_ABI_ABSENT); /* not in the ROCm wrappers */
  asyncfuzz_rt_end();
}

int main(void) {
  test_kernel_effects();
  test_foreign_launch();
  test_unknown_kernel_and_prints();
  test_unmodelled();
  asyncfuzz_rt_shutdown();
  return TEST_DONE("test_program");
}
