/*
 * test_reduce.c: for each builtin fault switch, a generated failing case of at least 150 ops
 * reduces to a valid case of at most 8 ops with the same signature; every tested candidate
 * is valid; the same input gives the same output. A launch of the reduced case gives its kernel
 * dynamic shared memory only for smem_dropped, and then what its blocks need.
 */
#include "../check/check.h"
#include "../kernels/kernels.h"
#include "../reduce/reduce.h"
#include "test.h"

#include <time.h>

typedef struct Counting {
  CheckSigTest t;
  int invalid_tested; /* candidates the test saw that the validator refuses */
} Counting;

static int counting_test(const GenCase *c, void *ctx) {
  Counting *k = ctx;
  AfErr err = {0};
  if (gen_validate(c, &err) != 0)
    k->invalid_tested++;
  return check_signature_test(c, &k->t);
}

int main(void) {
  GenConfig cfg;
  gen_config_default(&cfg);
  cfg.ops = 190;
  for (int f = 0; f < LOWER_FAULT__COUNT; f++) {
    char name[160];
    snprintf(name, sizeof name, "builtin:fault=%s", lower_fault_name(f));
    LowerSpec spec;
    AfErr err = {0};
    CHECK_EQ(lower_spec_parse(name, &spec, &err), 0);
    /* the first generated case of >= 200 ops that fails */
    GenCase c;
    CheckResult *res = af_malloc(sizeof *res);
    for (int nth = 0, seed0 = 0; nth < 3; nth++) {
      Schedule fail = {0};
      char sig[256] = "";
      uint64_t seed = (uint64_t)seed0;
      for (; seed < 400 && !sig[0]; seed++) {
        CHECK_EQ(gen_generate(&c, seed, &cfg, &err), 0);
        Schedule s[2] = {{RT_LAZY, seed}, {RT_RANDOM, seed + 1}};
        CheckOpts o = {0};
        o.stop_at_first = 1;
        CHECK_EQ(check_case(&c, &spec, s, 2, NULL, &o, res, &err), 0);
        if (c.nops >= 200 && res->first_fail >= 0) {
          fail = res->sched[res->first_fail];
          snprintf(sig, sizeof sig, "%s", res->verdict[res->first_fail].signature);
          break;
        }
        gen_case_free(&c);
      }
      seed0 = (int)seed + 1;
      CHECK(sig[0] != '\0');
      if (!sig[0])
        break;
      Counting k = {{&spec, &fail, 1, {0}, sig}, 0};
      GenCase out, again;
      ReduceStats st, st2;
      struct timespec t0, t1;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      CHECK_EQ(reduce_case(&c, counting_test, &k, &out, &st, &err), 0);
      clock_gettime(CLOCK_MONOTONIC, &t1);
      double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
      CHECK_EQ(gen_validate(&out, &err), 0);
      CHECK_EQ(k.invalid_tested, 0);
      CHECK_EQ(check_signature_test(&out, &k.t), 1); /* the same signature */
      CHECK(out.nops <= 8);
      /* an element type matters to the fault about them only: elsewhere the buffers are i32 */
      for (int b = 0; b < out.nbufs && f != LOWER_FAULT_COPY_SIZE_I32; b++)
        CHECK_EQ(out.bufs[b].elem, GEN_ELEM_I32);
      /* dynamic shared memory only for the fault about it, and no more than its blocks need */
      int staged = 0;
      for (int i = 0; i < out.nops; i++) {
        const GenOp *o = &out.ops[i];
        if (o->kind != GEN_OP_LAUNCH || o->smem == 0)
          continue;
        int32_t off, len, stride, d[6];
        gen_op_view(&out, o, 0, &off, &len, &stride);
        gen_op_dims(o, len, d);
        CHECK_EQ(o->smem, kernel_smem_need((int64_t)d[3] * d[4] * d[5]));
        staged++;
      }
      CHECK(f == LOWER_FAULT_SMEM_DROPPED ? staged > 0 : staged == 0);
      CHECK_EQ(reduce_case(&c, counting_test, &k, &again, &st2, &err), 0);
      char *a = gen_case_to_json(&out), *b = gen_case_to_json(&again);
      CHECK_STR(a, b); /* deterministic */
      printf("%-22s case seed %llu: %d ops -> %d ops (%d tests, %d accepted, %d refused by the "
             "validator, %.3f s)\n",
             lower_fault_name(f), (unsigned long long)seed, st.from_ops, st.to_ops, st.tests,
             st.accepted, st.invalid, secs);
      if (out.nops > 8)
        printf("%s(more than 8 ops)\n", a);
      af_free(a);
      af_free(b);
      gen_case_free(&out);
      gen_case_free(&again);
      gen_case_free(&c);
    }
    af_free(res);
  }
  asyncfuzz_rt_shutdown();
  return TEST_DONE("test_reduce");
}
