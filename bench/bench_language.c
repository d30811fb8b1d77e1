/*
 * bench_language.c: what the generator's default knobs make of the case language, and whether
 * mlir-opt accepts all of it. Generates N cases (seeds 1..N, default knobs), counts the cases
 * that use each construct (a host wait with no operands, a token waited again, a captured
 * token used, host_shared memory in a region, a region, a region input, a launch on an explicit
 * stream, two launches on one explicit stream, calls, ifs, fors and branches with tokens) and
 * each form of the types and launches exercised (gen.h GEN_FORM_MAP), renders every case
 * and has one mlir-opt process parse and verify them all (--split-input-file). Prints one line
 * per construct and the number of modules mlir-opt rejected (0 expected).
 *
 * usage: bench_language [cases (default 1000)] [mlir-opt spec (default: mlir-opt)]
 */
#include "bench.h"
#include "../lower/mlir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
  EMPTY_WAIT,
  WAIT_AGAIN,
  CAPTURE_USED,
  SHARED_IN_REGION,
  REGION,
  REGION_INPUT,
  STREAM_LAUNCH,
  STREAM_ORDERED,
  CALL,
  CALL_IN_REGION,
  IF,
  FOR,
  BRANCH,
  BRANCH_BUF,
  TYPED_COPY,
  TYPED_SET,
  TYPED_KERNEL,
  VIEW,
  KERNEL_VIEW,
  KERNEL_STRIDED,
  CAST,
  NCON
};
static const char *const names[NCON] = {"host wait with no operands",
                                        "token waited again",
                                        "captured token used",
                                        "host_shared in a region",
                                        "region",
                                        "region input",
                                        "launch on an explicit stream",
                                        "two launches on one explicit stream",
                                        "func.call of a callee taking a token",
                                        "func.call inside an async.execute region",
                                        "scf.if yielding a token",
                                        "scf.for carrying a token",
                                        "cf.cond_br to blocks that merge with a token",
                                        "cf.cond_br passing a buffer as a block argument",
                                        "memcpy of i16, i64 or f32 buffers",
                                        "memset of an i16 or f32 buffer",
                                        "kernel on buffers of a type other than i32",
                                        "memcpy or memset of a memref.subview",
                                        "kernel operand that is a memref.subview",
                                        "kernel operand on a strided view",
                                        "static allocation cast to a dynamic shape"};

static void constructs(const GenCase *c, int *has) {
  uint8_t *waited = calloc((size_t)c->ntoks + 1, 1);
  uint8_t *launched = calloc((size_t)c->nstreams + 1, 1);
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    if (gen_op_flags(o->kind) & GEN_K_BLOCK) {
      const GenBlock *k = &c->blocks[o->block];
      has[CALL] |= o->kind == GEN_OP_CALL && k->ninputs > 0;
      has[CALL_IN_REGION] |= o->kind == GEN_OP_CALL && o->ctx > 0;
      has[IF] |= o->kind == GEN_OP_IF && o->tok >= 0;
      has[FOR] |= o->kind == GEN_OP_FOR;
      has[BRANCH] |= o->kind == GEN_OP_BRANCH && o->tok >= 0;
      has[BRANCH_BUF] |= o->kind == GEN_OP_BRANCH && k->nbufargs > 0;
    }
    has[TYPED_COPY] |= o->kind == GEN_OP_MEMCPY && c->bufs[o->buf].elem != GEN_ELEM_I32;
    has[TYPED_SET] |= o->kind == GEN_OP_MEMSET && c->bufs[o->buf].elem != GEN_ELEM_I32;
    has[TYPED_KERNEL] |= o->kind == GEN_OP_LAUNCH && c->bufs[o->args[0]].elem != GEN_ELEM_I32;
    has[VIEW] |= o->kind != GEN_OP_LAUNCH && gen_op_has_view(o);
    has[KERNEL_VIEW] |= o->kind == GEN_OP_LAUNCH && gen_op_has_view(o);
    for (int a = 0; o->kind == GEN_OP_LAUNCH && a < o->nargs; a++)
      has[KERNEL_STRIDED] |= o->view[a][1] > 1 && o->view[a][2] > 1;
    has[CAST] |= o->kind == GEN_OP_ALLOC && c->bufs[o->buf].stat;
    if (o->kind == GEN_OP_LAUNCH && o->stream >= 0 && launched) {
      has[STREAM_LAUNCH] = 1;
      has[STREAM_ORDERED] |= launched[o->stream]++ > 0;
    }
    if (o->kind == GEN_OP_HOST_WAIT) {
      has[EMPTY_WAIT] |= o->ndeps == 0;
      for (int d = 0; d < o->ndeps; d++)
        has[WAIT_AGAIN] |= waited && waited[o->deps[d]]++ > 0;
    }
    has[SHARED_IN_REGION] |=
        o->kind == GEN_OP_ALLOC && o->mode == GEN_ALLOC_HOST_SHARED && o->ctx != 0;
    has[REGION] |= o->kind == GEN_OP_EXECUTE;
    if (o->kind == GEN_OP_EXECUTE)
      has[REGION_INPUT] |= c->regions[o->region].ninputs > 0;
    for (int d = 0; d < o->ndeps && o->ctx > 0; d++)
      for (int k = 0; k < c->regions[o->ctx].ncaptures; k++)
        has[CAPTURE_USED] |= c->regions[o->ctx].captures[k].tok == o->deps[d];
  }
  free(waited);
  free(launched);
}

int main(int argc, char **argv) {
  if (bench_help(
          argc, argv,
          "usage: bench_language [cases (default 1000)] [mlir-opt spec (default: mlir-opt)]\n"
          "How many of N cases (default knobs) use each construct of the case language, and how "
          "many of\n"
          "the rendered modules one mlir-opt process rejects (0 expected).\n"))
    return 0;
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  LowerSpec spec;
  AfErr err = {0};
  if (lower_spec_parse(argc > 2 ? argv[2] : "mlir-opt", &spec, &err)) {
    fprintf(stderr, "bench_language: %s\n", err.msg);
    return 2;
  }
  char dir[] = "/tmp/asyncfuzz-bench-language-XXXXXX";
  if (mkdtemp(dir) == NULL) {
    perror("bench_language: mkdtemp");
    return 4;
  }
  char in[256], errp[256];
  snprintf(in, sizeof in, "%s/cases.mlir", dir);
  snprintf(errp, sizeof errp, "%s/err.txt", dir);
  FILE *f = fopen(in, "w");
  if (f == NULL) {
    perror("bench_language");
    return 4;
  }
  GenConfig cfg;
  gen_config_default(&cfg);
  long count[NCON] = {0}, forms[GEN_FORM__COUNT] = {0};
  for (int s = 1; s <= n; s++) {
    GenCase c;
    if (gen_generate(&c, (uint64_t)s, &cfg, &err) || gen_validate(&c, &err)) {
      fprintf(stderr, "bench_language: case %d: %s\n", s, err.msg);
      return 1;
    }
    int has[NCON] = {0};
    constructs(&c, has);
    for (int k = 0; k < NCON; k++)
      count[k] += has[k];
    uint32_t fm = gen_case_forms(&c);
    for (int k = 0; k < GEN_FORM__COUNT; k++)
      forms[k] += fm >> k & 1;
    char *mlir = gen_render_mlir(&c);
    if (mlir == NULL) {
      fprintf(stderr, "bench_language: out of memory\n");
      return 4;
    }
    fprintf(f, "%s%s", s > 1 ? "\n// -----\n" : "", mlir);
    af_free(mlir);
    gen_case_free(&c);
  }
  fclose(f);
  printf("# bench_language: %d cases, seeds 1..%d, default knobs; %s\n", n, n, spec.opt);
  for (int k = 0; k < NCON; k++)
    printf("construct \"%s\": %ld of %d cases (%.1f%%)\n", names[k], count[k], n,
           100.0 * (double)count[k] / n);
  for (int k = 0; k < GEN_FORM__COUNT; k++) /* (gen.h GEN_FORM_MAP) */
    printf("form %-12s exercised (%s; what it writes observed): %ld of %d cases (%.1f%%)\n",
           gen_form_name(k), gen_form_help(k), forms[k], n, 100.0 * (double)forms[k] / n);
  char *args[] = {spec.opt, "--split-input-file", in, "-o", "/dev/null", NULL};
  ProcResult r;
  if (af_proc_run(args, NULL, NULL, NULL, errp, 600, &r, &err)) {
    fprintf(stderr, "bench_language: %s\n", err.msg);
    return 4;
  }
  /* one "error:" line (at least) per module mlir-opt rejects */
  long bad = 0;
  FILE *e = fopen(errp, "r");
  char line[4096];
  while (e && fgets(line, sizeof line, e))
    bad += strstr(line, "error:") != NULL;
  if (e)
    fclose(e);
  printf("mlir-opt parsed and verified %s: %ld error line(s), exit %d, %.1f s\n",
         bad == 0 && r.exited && r.code == 0 ? "every module" : "NOT every module", bad, r.code,
         r.seconds);
  if (bad)
    printf("(kept: %s)\n", dir);
  else {
    unlink(in);
    unlink(errp);
    rmdir(dir);
  }
  return bad || !r.exited || r.code != 0;
}
