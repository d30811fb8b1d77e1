/*
 * avoid.c: avoid sets, what steering asks the generator not to build (gen.h). An entry is an op
 * shape ("gpu.launch_func async deps=2+", "scf.if") or a construct of GEN_CONSTRUCT_MAP, named
 * by the words the causes of findings use; a loop's crossing ("loop-carried") names its block
 * kind. How the generator honours a set is in genstate.c.
 */
#include "gen.h"

#include <stdio.h>
#include <string.h>

static const struct {
  const char *name, *words, *help;
} constructs[GEN_CONSTRUCT__COUNT] = {
#define GEN__CONSTRUCT_ROW(id, name, words, help) {name, words, help},
    GEN_CONSTRUCT_MAP(GEN__CONSTRUCT_ROW)
#undef GEN__CONSTRUCT_ROW
};

/* The words of a token's crossing into or out of a loop, and the block kind that makes it (a
 * for needs its carried token; a call's, an if's and a branch's are constructs: host waits
 * carry the order across them instead). */
static const struct {
  const char *word;
  int kind;
} crossings[] = {{"loop-carried", GEN_OP_FOR}, {"loop-result", GEN_OP_FOR}};

const char *gen_construct_name(int id) {
  return id >= 0 && id < GEN_CONSTRUCT__COUNT ? constructs[id].name : "?";
}

const char *gen_construct_help(int id) {
  return id >= 0 && id < GEN_CONSTRUCT__COUNT ? constructs[id].help : "";
}

/* Whether the space-separated list words has w. */
static int has_word(const char *words, const char *w) {
  size_t n = strlen(w);
  for (const char *p = words; *p;) {
    size_t k = strcspn(p, " ");
    if (k == n && strncmp(p, w, n) == 0)
      return 1;
    p += k + (p[k] == ' ');
  }
  return 0;
}

static int add_shape(GenAvoid *a, const GenShape *s) {
  for (int i = 0; i < a->nshapes; i++) {
    const GenShape *t = &a->shapes[i];
    if (t->kind == s->kind && t->async == s->async && t->deps == s->deps && t->view == s->view &&
        t->shared == s->shared && t->unthreaded == s->unthreaded && t->elem == s->elem &&
        t->stream == s->stream && t->pending == s->pending && t->space == s->space &&
        t->ranked == s->ranked)
      return 0;
  }
  if (a->nshapes >= GEN_MAX_AVOID)
    return -1;
  a->shapes[a->nshapes++] = *s;
  return 1;
}

/* "everything": each construct, and each shape the generator has another form for (its
 * tests' forced mode: every case it then makes still has some form for every ordering). */
static const char *const everything[] = {"func.call",
                                         "scf.if",
                                         "scf.for",
                                         "cf.cond_br",
                                         "llvm.call @mgpuStreamCreate",
                                         "gpu.alloc",
                                         "gpu.alloc host_shared",
                                         "gpu.dealloc",
                                         "gpu.alloc async deps=0",
                                         "gpu.launch_func async deps=1",
                                         "gpu.launch_func async deps=2+",
                                         "gpu.memcpy async deps=2+",
                                         "gpu.memset async deps=2+",
                                         "gpu.dealloc async deps=2+",
                                         "gpu.memcpy async deps=1 view",
                                         "gpu.memset async deps=1 view",
                                         "gpu.memcpy async deps=1 unthreaded",
                                         "gpu.memset async deps=1 unthreaded",
                                         "gpu.launch_func async deps=0 view"};

/* "sync-op", the role a cause gives an op without a token (destroyed-by:sync-op): the
 * synchronous forms the generator can make asynchronous instead. */
static const char *const sync_ops[] = {"gpu.alloc", "gpu.alloc host_shared", "gpu.dealloc"};

int gen_avoid_add(GenAvoid *a, const char *text) {
  if (strcmp(text, "sync-op") == 0) {
    int added = 0;
    for (size_t i = 0; i < sizeof sync_ops / sizeof sync_ops[0]; i++)
      added += gen_avoid_add(a, sync_ops[i]) > 0;
    return added > 0;
  }
  if (strcmp(text, "everything") == 0) {
    int added = 0;
    for (size_t i = 0; i < sizeof everything / sizeof everything[0]; i++)
      added += gen_avoid_add(a, everything[i]) > 0;
    for (int i = 0; i < GEN_CONSTRUCT__COUNT; i++)
      added += gen_avoid_add(a, constructs[i].name) > 0;
    return added > 0;
  }
  for (int i = 0; i < GEN_CONSTRUCT__COUNT; i++)
    if (strcmp(text, constructs[i].name) == 0 || has_word(constructs[i].words, text)) {
      int had = (a->constructs >> i) & 1;
      a->constructs |= 1u << i;
      return !had;
    }
  for (size_t i = 0; i < sizeof crossings / sizeof crossings[0]; i++)
    if (strcmp(text, crossings[i].word) == 0) {
      GenShape s = {crossings[i].kind, 0, -1, -1, 0, 0, 0, 0, 0, 0, 0};
      return add_shape(a, &s);
    }
  GenShape s;
  if (gen_shape_parse(text, &s) != 0)
    return -1;
  return add_shape(a, &s);
}

void gen_avoid_union(GenAvoid *a, const GenAvoid *b) {
  for (int i = 0; i < b->nshapes; i++)
    add_shape(a, &b->shapes[i]);
  a->constructs |= b->constructs;
}

int gen_avoid_count(const GenAvoid *a) {
  int n = a->nshapes;
  for (int i = 0; i < GEN_CONSTRUCT__COUNT; i++)
    n += (a->constructs >> i) & 1;
  return n;
}

void gen_avoid_text(const GenAvoid *a, int i, char *out, size_t n) {
  if (i < a->nshapes) {
    gen_shape_text(&a->shapes[i], out, n);
    return;
  }
  i -= a->nshapes;
  for (int k = 0; k < GEN_CONSTRUCT__COUNT; k++)
    if (((a->constructs >> k) & 1) && i-- == 0) {
      snprintf(out, n, "%s", constructs[k].name);
      return;
    }
  snprintf(out, n, "?");
}

int gen_avoid_op(const GenAvoid *a, const GenOp *o) {
  for (int i = 0; i < a->nshapes; i++)
    if (gen_op_has_shape(o, &a->shapes[i]))
      return 1;
  return 0;
}

int gen_avoid_case_op(const GenAvoid *a, const GenCase *c, int i) {
  GenOp o;
  gen_op_mark(c, i, &o);
  return gen_avoid_op(a, &o);
}

int gen_avoid_structure(GenAvoid *a, const GenCase *c) {
  int added = 0;
  for (int i = 0; i < c->nops; i++) {
    int k = c->ops[i].kind;
    if (!(gen_op_flags(k) & (GEN_K_BLOCK | GEN_K_REGION)) && k != GEN_OP_STREAM_CREATE)
      continue;
    added += gen_avoid_add(a, gen_op_mlir(k)) > 0; /* (as a cause would name it) */
  }
  return added;
}
