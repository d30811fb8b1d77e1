/*
 * bench_language.c: what the generator's default knobs make of the case language, and whether
 * mlir-opt accepts all of it. Generates N cases (seeds 1..N, default knobs), counts the cases
 * that use each construct (a host wait with no operands, a token waited again, a captured
 * token used, host_shared memory in a region, a region, a region input, a launch on an explicit
 * stream, two launches on one explicit stream, calls, ifs, fors and branches with tokens) and
 * each element type copied or set and observed, renders every case
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

/* Element types exercised: has[e] when a copy, memset or kernel writes a buffer of type e and a
 * buffer of type e is observed (copies keep the type, so what the host reads of that type went
 * through a copy, a memset or a kernel of it). */
static void elem_types(const GenCase *c, int *has) {
  unsigned written = 0, observed = 0;
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    if (((gen_op_flags(o->kind) & GEN_K_TYPED) || gen_kind_launches(o->kind)) && o->buf >= 0)
      written |= 1u << c->bufs[o->buf].elem;
    if (o->kind == GEN_OP_OBSERVE && o->buf >= 0)
      observed |= 1u << c->bufs[o->buf].elem;
  }
  for (int e = 0; e < GEN_ELEM__COUNT; e++)
    has[e] = (written & observed) >> e & 1u;
}

/* A registered host buffer exercised: a copy from the device writes it and it is observed. */
static int registered_copied(const GenCase *c) {
  unsigned long long dst = 0, observed = 0;
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    if (o->buf < 0 || o->buf >= 64 || !c->bufs[o->buf].reg)
      continue;
    if (o->kind == GEN_OP_MEMCPY && c->bufs[o->src].kind == GEN_BUF_DEVICE)
      dst |= 1ull << o->buf;
    if (o->kind == GEN_OP_OBSERVE)
      observed |= 1ull << o->buf;
  }
  return (dst & observed) != 0;
}

/* A buffer in a memory space exercised: a copy, memset or kernel writes it and a copy reads it
 * back to a host buffer that is observed. */
static int space_copied(const GenCase *c) {
  unsigned long long written = 0, back = 0, observed = 0;
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    if (o->buf < 0 || o->buf >= 64)
      continue;
    unsigned f = gen_op_flags(o->kind);
    if ((f & (GEN_K_WRITE | GEN_K_ARGS)) && c->bufs[o->buf].space)
      written |= 1ull << o->buf;
    if (o->kind == GEN_OP_MEMCPY && o->src >= 0 && o->src < 64 && c->bufs[o->src].space &&
        (written >> o->src & 1) && c->bufs[o->buf].kind == GEN_BUF_HOST)
      back |= 1ull << o->buf;
    if (o->kind == GEN_OP_OBSERVE)
      observed |= 1ull << o->buf;
  }
  return (back & observed) != 0;
}

/* A copy or set that names a memref of rank 2 or 3 (rows: one in rows, gen_op_rows) exercised:
 * what it writes reaches an observed host buffer, by it or by a copy back from the device. */
static int ranked_copied(const GenCase *c, int rows) {
  unsigned long long written = 0, back = 0, observed = 0;
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    if (o->buf < 0 || o->buf >= 64)
      continue;
    int form = rows ? gen_op_rows(c, o, NULL) != 0 : o->ranked;
    if ((o->kind == GEN_OP_MEMCPY || o->kind == GEN_OP_MEMSET) && form)
      written |= 1ull << o->buf;
    if (o->kind == GEN_OP_MEMCPY && o->src >= 0 && o->src < 64 && (written >> o->src & 1) &&
        c->bufs[o->buf].kind == GEN_BUF_HOST)
      back |= 1ull << o->buf;
    if (o->kind == GEN_OP_MEMCPY && form && c->bufs[o->buf].kind == GEN_BUF_HOST)
      back |= 1ull << o->buf;
    if (o->kind == GEN_OP_OBSERVE)
      observed |= 1ull << o->buf;
  }
  return (back & observed) != 0;
}

/* A launch on a grid and blocks of more than one dimension exercised: it writes a buffer that a
 * copy then reads back to a host buffer that is observed. */
/* A launch of a form (0: a grid and blocks of more than one dimension, 1: a gpu.launch the
 * pipeline outlines, 2: on buffers of a type other than i32) whose result is copied back to a
 * host buffer and observed. */
enum { FORM_DIMS, FORM_INLINE, FORM_TYPED, NFORM };
static int launch_copied(const GenCase *c, int form) {
  unsigned long long written = 0, back = 0, observed = 0;
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    if (o->buf < 0 || o->buf >= 64)
      continue;
    int is =
        o->kind == GEN_OP_LAUNCH && (form == FORM_DIMS     ? o->dims[0] != 0
                                     : form == FORM_INLINE ? o->inl
                                                           : c->bufs[o->buf].elem != GEN_ELEM_I32);
    if (is)
      written |= 1ull << o->buf;
    else if (gen_op_flags(o->kind) & (GEN_K_WRITE | GEN_K_ARGS))
      written &= ~(1ull << o->buf); /* (overwritten by other work) */
    if (o->kind == GEN_OP_MEMCPY && o->src >= 0 && o->src < 64 && (written >> o->src & 1) &&
        c->bufs[o->buf].kind == GEN_BUF_HOST)
      back |= 1ull << o->buf;
    if (o->kind == GEN_OP_OBSERVE)
      observed |= 1ull << o->buf;
  }
  return (back & observed) != 0;
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
  long count[NCON] = {0}, ecount[GEN_ELEM__COUNT] = {0}, regs = 0, spaces = 0, forms[NFORM] = {0},
       ranks = 0, rows = 0;
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
    int eh[GEN_ELEM__COUNT] = {0};
    elem_types(&c, eh);
    for (int e = 0; e < GEN_ELEM__COUNT; e++)
      ecount[e] += eh[e];
    regs += registered_copied(&c);
    spaces += space_copied(&c);
    ranks += ranked_copied(&c, 0);
    rows += ranked_copied(&c, 1);
    for (int k = 0; k < NFORM; k++)
      forms[k] += launch_copied(&c, k);
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
  for (int e = 1; e < GEN_ELEM__COUNT; e++)
    printf("element type %-6s copied or set, and observed: %ld of %d cases (%.1f%%)\n",
           gen_elem_name(e), ecount[e], n, 100.0 * (double)ecount[e] / n);
  printf("registered host buffer a copy from the device writes, observed: %ld of %d cases "
         "(%.1f%%)\n",
         regs, n, 100.0 * (double)regs / n);
  printf("buffer in memory space 1 written and copied back to an observed host buffer: %ld of "
         "%d cases (%.1f%%)\n",
         spaces, n, 100.0 * (double)spaces / n);
  printf("copy or set of a ranked memref (rank 2 or 3), what it writes observed: %ld of %d "
         "cases (%.1f%%)\n",
         ranks, n, 100.0 * (double)ranks / n);
  printf("copy or set in rows of a ranked memref (a multi-dimensional subview), what it writes "
         "observed: %ld of %d cases (%.1f%%)\n",
         rows, n, 100.0 * (double)rows / n);
  static const char *const form[NFORM] = {"on a grid and blocks of more than one dimension",
                                          "of a gpu.launch body, outlined by the pipeline",
                                          "on buffers of a type other than i32"};
  for (int k = 0; k < NFORM; k++)
    printf("launch %s, its result copied back and observed: %ld of %d cases (%.1f%%)\n", form[k],
           forms[k], n, 100.0 * (double)forms[k] / n);
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
