/*
 * test_opkinds.c: every row of the op-kind table (GEN_OP_MAP) is a whole kind. For each kind the
 * test finds a generated case with an op of it and checks that the op is described, read and
 * written (the case format round-trips), validated, rendered as MLIR (which mlir-opt verifies
 * when one is given), lowered by the builtin lowering, run on the sim with the oracle and the
 * checker (it passes), and reduced (a case that must keep the kind shrinks and keeps it). Each
 * kind's class has every hook the concern files call. A row with a hook missing fails here (or
 * does not build).
 * usage: test_opkinds [MLIR_OPT]
 */
#include "../base/proc.h"
#include "../check/check.h"
#include "../gen/gen_int.h"
#include "../reduce/reduce.h"
#include "test.h"

#include <unistd.h>

static const char *mlir_opt;

/* The knobs that make every construct likely. */
static void full_language(GenConfig *cfg) {
  gen_config_default(cfg);
  cfg->ops = 48;
  cfg->region_pct = 25;
  cfg->block_pct = 25;
  cfg->stream_pct = 60;
  cfg->view_pct = 40;
  cfg->typed_pct = 40;
  cfg->host_shared_pct = 30;
  cfg->capture_pct = 50;
}

static int has_kind(const GenCase *c, int kind) {
  for (int i = 0; i < c->nops; i++)
    if (c->ops[i].kind == kind)
      return i;
  return -1;
}

/* A generated case with an op of `kind`; -1 when none of 400 seeds makes one. */
static int example(int kind, GenCase *c) {
  GenConfig cfg;
  full_language(&cfg);
  for (uint64_t seed = 1; seed <= 400; seed++) {
    AfErr err = {0};
    if (gen_generate(c, seed, &cfg, &err) != 0) {
      fprintf(stderr, "gen seed %llu: %s\n", (unsigned long long)seed, err.msg);
      return -1;
    }
    if (has_kind(c, kind) >= 0)
      return 0;
    gen_case_free(c);
  }
  return -1;
}

static void check_table(void) {
  for (int k = 0; k < GEN_OP__COUNT; k++) {
    unsigned f = gen_op_flags(k);
    CHECK_EQ(gen_op_lookup(gen_op_name(k)), k);
    CHECK(gen_op_mlir(k)[0] != '\0' && strcmp(gen_op_mlir(k), "?") != 0);
    CHECK_EQ(k < GEN_MIX_COUNT, (f & GEN_K_MIX) != 0); /* the mix: the first rows */
    const GenOpClass *cl = gen__classes[k];
    CHECK(cl != NULL && cl->parse && cl->put && cl->check && cl->render);
    if (cl)
      CHECK_EQ(cl->draw != NULL, (f & GEN_K_MIX) || k == GEN_OP_AWAIT);
    CHECK(!((f & GEN_K_ASYNC) && (f & (GEN_K_EITHER | GEN_K_HOST)))); /* one form */
  }
  CHECK_EQ(gen_op_lookup("no_such_op"), -1);
}

/* mlir-opt parses and verifies the rendering. */
static void verify_mlir(const char *text, const char *what) {
  if (mlir_opt == NULL)
    return;
  char path[] = "/tmp/test_opkinds_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0)
    return;
  CHECK_EQ(write(fd, text, strlen(text)), (long long)strlen(text));
  close(fd);
  char *argv[] = {(char *)mlir_opt, path, "-o", "/dev/null", NULL};
  ProcResult r;
  AfErr err = {0};
  CHECK_EQ(af_proc_run(argv, NULL, NULL, NULL, "/dev/null", 120, &r, &err), 0);
  if (!r.exited || r.code != 0)
    fprintf(stderr, "%s: mlir-opt refuses the rendering (%s)\n", what, path);
  else
    unlink(path);
  CHECK(r.exited && r.code == 0);
}

static int keeps_kind(const GenCase *c, void *ctx) {
  return has_kind(c, *(const int *)ctx) >= 0;
}

static void check_kind(int kind) {
  const char *name = gen_op_name(kind);
  GenCase c;
  if (example(kind, &c) != 0) {
    fprintf(stderr, "%s: the generator never makes one\n", name);
    CHECK(0);
    return;
  }
  int i = has_kind(&c, kind);
  AfErr err = {0};
  /* described: its shape names its MLIR operation */
  char shape[128];
  gen_shape_format(&c.ops[i], shape, sizeof shape);
  CHECK(strncmp(shape, gen_op_mlir(kind), strlen(gen_op_mlir(kind))) == 0);
  /* read and written: the case format round-trips, byte for byte */
  char *json = gen_case_to_json(&c);
  GenCase back;
  CHECK_EQ(gen_case_from_json(&back, json, &err), 0);
  char *again = gen_case_to_json(&back);
  CHECK_STR(again, json);
  CHECK_CONTAINS(json, name);
  /* validated */
  CHECK_EQ(gen_validate(&back, &err), 0);
  /* rendered: its operation is in the module, which mlir-opt verifies */
  char *mlir = gen_render_mlir(&back);
  const char *op = gen_op_mlir(kind);
  CHECK_CONTAINS(mlir, strcmp(op, "observe") == 0 ? "@asyncfuzz_observe" : op);
  verify_mlir(mlir, name);
  /* lowered and run: every schedule passes, the oracle and the checker agree */
  LowerSpec spec;
  CHECK_EQ(lower_spec_parse("builtin", &spec, &err), 0);
  LowerProgram *p = NULL;
  CHECK_EQ(lower_builtin(&back, &spec, &p, &err), 0);
  lower_program_free(p);
  Schedule s[8];
  int ns = 0;
  CHECK_EQ(check_parse_schedules("eager,lazy,random:3,pct:3", 7, s, 8, &ns, &err), 0);
  CheckResult *res = af_malloc(sizeof *res);
  CHECK_EQ(check_case(&back, &spec, s, ns, NULL, NULL, res, &err), 0);
  CHECK_EQ(res->first_fail, -1);
  if (res->first_fail >= 0)
    fprintf(stderr, "%s: %s\n", name, res->verdict[res->first_fail].signature);
  af_free(res);
  /* reduced: a case that must keep the kind shrinks and keeps it */
  GenCase small;
  ReduceStats st;
  CHECK_EQ(reduce_case(&back, keeps_kind, &kind, &small, &st, &err), 0);
  CHECK(has_kind(&small, kind) >= 0);
  CHECK(small.nops < back.nops);
  CHECK_EQ(gen_validate(&small, &err), 0);
  printf("%-15s seed %-3llu %3d ops -> %d ops\n", name, (unsigned long long)c.seed, c.nops,
         small.nops);
  gen_case_free(&small);
  af_free(mlir);
  af_free(again);
  af_free(json);
  gen_case_free(&back);
  gen_case_free(&c);
}

int main(int argc, char **argv) {
  mlir_opt = argc > 1 && argv[1][0] ? argv[1] : NULL;
  if (mlir_opt == NULL)
    test_skip("the renderings verified by mlir-opt", "no mlir-opt given (mlir-22-tools)");
  check_table();
  for (int k = 0; k < GEN_OP__COUNT; k++)
    check_kind(k);
  return TEST_DONE("test_opkinds");
}
