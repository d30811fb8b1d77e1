/*
 * forms.c: the forms of the language's types and launches a case exercises (gen.h
 * GEN_FORM_MAP): what an op of the form writes must reach a buffer that is then observed.
 */
#include "gen.h"

#include <stdio.h>

#include <string.h>

static const char *const form_names[] = {
#define GEN__FORM_NAME(id, name, help) name,
    GEN_FORM_MAP(GEN__FORM_NAME)
#undef GEN__FORM_NAME
};
static const char *const form_helps[] = {
#define GEN__FORM_HELP(id, name, help) help,
    GEN_FORM_MAP(GEN__FORM_HELP)
#undef GEN__FORM_HELP
};

_Static_assert(GEN_FORM_ELEM(GEN_ELEM_I32 + 1) == 0 && GEN_FORM__COUNT <= 32,
               "the types' forms first, every form a bit of a uint32_t");

const char *gen_form_name(int f) {
  if (f >= 0 && f < GEN_FORM__TYPES + 1)
    return gen_elem_name(f + 1);
  return f > GEN_FORM__TYPES && f < GEN_FORM__COUNT ? form_names[f - GEN_FORM__TYPES - 1] : "?";
}

const char *gen_form_help(int f) {
  if (f >= 0 && f < GEN_FORM__TYPES + 1)
    return "a copy, memset or kernel on buffers of this element type";
  return f > GEN_FORM__TYPES && f < GEN_FORM__COUNT ? form_helps[f - GEN_FORM__TYPES - 1] : "?";
}

/* The buffer op o writes or observes (a launch: its first operand), or -1. */
static int buf_of(const GenCase *c, const GenOp *o) {
  int b = gen_kind_launches(o->kind) ? (o->nargs > 0 ? o->args[0] : -1) : o->buf;
  return b >= 0 && b < c->nbufs ? b : -1;
}

/* Whether op o, which writes buffer b, writes it in form f. */
static int writes_in(const GenCase *c, const GenOp *o, int b, int f) {
  const GenBuf *bb = &c->bufs[b];
  int launch = gen_kind_launches(o->kind), copy = o->kind == GEN_OP_MEMCPY,
      set = o->kind == GEN_OP_MEMSET;
  if (f <= GEN_FORM__TYPES)
    return bb->elem == f + 1;
  switch (f) {
  case GEN_FORM_REGISTERED:
    return copy && bb->reg && o->src >= 0 && c->bufs[o->src].kind == GEN_BUF_DEVICE;
  case GEN_FORM_SPACE:
    return bb->space != 0;
  case GEN_FORM_RANKED:
    return (copy || set) && o->ranked;
  case GEN_FORM_ROWS:
    return (copy || set) && gen_op_rows(c, o, NULL) != 0;
  case GEN_FORM_DIMS:
    return launch && o->dims[0] != 0;
  case GEN_FORM_OUTLINED:
    return launch && o->inl;
  case GEN_FORM_TYPED_LAUNCH:
    return launch && bb->elem != GEN_ELEM_I32;
  case GEN_FORM_SHARED_MEMORY:
    return launch && o->smem > 0;
  }
  return 0;
}

/* Whether c exercises form f: in program order, a buffer holds what an op of the form wrote
 * until another op writes it; a copy passes that on to its destination; an observation of a
 * buffer that holds it (a host one, or a host_shared one) is the form exercised. */
static int exercises(const GenCase *c, int f, unsigned char *holds) {
  memset(holds, 0, (size_t)c->nbufs);
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    int b = buf_of(c, o);
    if (b < 0)
      continue;
    if (o->kind == GEN_OP_OBSERVE) {
      if (holds[b])
        return 1;
      continue;
    }
    if (!(gen_op_flags(o->kind) & (GEN_K_WRITE | GEN_K_ARGS)))
      continue;
    int from = o->kind == GEN_OP_MEMCPY && o->src >= 0 && o->src < c->nbufs && holds[o->src];
    holds[b] = (unsigned char)(writes_in(c, o, b, f) || from);
  }
  return 0;
}

/* Whether buffer b is of form f itself (its type, space, rank, registration). */
static int buf_in(const GenCase *c, int b, int f) {
  const GenBuf *bb = &c->bufs[b];
  if (f <= GEN_FORM__TYPES)
    return bb->elem == f + 1;
  if (f == GEN_FORM_SPACE)
    return bb->space != 0;
  if (f == GEN_FORM_RANKED)
    return bb->rank != 0;
  if (f == GEN_FORM_REGISTERED)
    return bb->kind == GEN_BUF_HOST && bb->reg;
  return 0;
}

/* Whether an op of c is of form f or on a buffer of it, reaching an observation or not. */
static int holds_form(const GenCase *c, int f) {
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    int b = buf_of(c, o);
    if (b >= 0 && (buf_in(c, b, f) ||
                   ((gen_op_flags(o->kind) & (GEN_K_WRITE | GEN_K_ARGS)) && writes_in(c, o, b, f))))
      return 1;
    if (o->kind == GEN_OP_MEMCPY && o->src >= 0 && o->src < c->nbufs && buf_in(c, o->src, f))
      return 1;
    for (int a = 0; gen_kind_launches(o->kind) && a < o->nargs; a++)
      if (o->args[a] >= 0 && o->args[a] < c->nbufs && buf_in(c, o->args[a], f))
        return 1;
  }
  return 0;
}

uint32_t gen_case_forms_held(const GenCase *c) {
  uint32_t m = 0;
  for (int f = 0; f < GEN_FORM__COUNT; f++)
    if (holds_form(c, f))
      m |= 1u << f;
  return m;
}

void gen_forms_str(uint32_t m, char *buf, size_t n) {
  size_t at = 0;
  if (n)
    buf[0] = '\0';
  for (int f = 0; f < GEN_FORM__COUNT && at < n; f++)
    if (m >> f & 1) {
      int k = snprintf(buf + at, n - at, "%s%s", at ? ", " : "", gen_form_name(f));
      at += k > 0 ? (size_t)k : 0;
    }
}

uint32_t gen_case_forms(const GenCase *c) {
  unsigned char *holds = af_malloc((size_t)c->nbufs + 1);
  uint32_t m = 0;
  for (int f = 0; holds && f < GEN_FORM__COUNT; f++)
    if (exercises(c, f, holds))
      m |= 1u << f;
  af_free(holds);
  return m;
}
