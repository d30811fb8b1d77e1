/*
 * genstate.c: the generator's token bookkeeping, shared by generate.c and streams.c
 * (genpriv.h).
 */
#include "genpriv.h"

#include <string.h>

uint64_t *gen__anc_row(G *g, int t) {
  return g->anc + (size_t)t * (size_t)g->words;
}

uint64_t *gen__done_row(G *g, int ctx) {
  return g->completed + (size_t)ctx * (size_t)g->words;
}

int gen__bit(const uint64_t *row, int t) {
  return (int)((row[t >> 6] >> (t & 63)) & 1);
}

int gen__oom(G *g) {
  if (g->rc == 0)
    g->rc = af_err_set(g->err, AF_ENOMEM, "out of memory generating a case");
  return g->rc;
}

GenOp gen__blank(int kind, int ctx) {
  GenOp o;
  memset(&o, 0, sizeof o);
  o.kind = (uint8_t)kind;
  o.ctx = ctx;
  o.tok = o.buf = o.src = o.region = o.vidx = o.stream = -1;
  return o;
}

int gen__emit(G *g, GenOp *o) {
  if (g->rc)
    return -1;
  int i = gen_case_add_op(g->c, o);
  if (i < 0)
    return gen__oom(g);
  return i;
}

void gen__ts_add(TSet *s, int t) {
  if (t < 0)
    return;
  for (int i = 0; i < s->n; i++)
    if (s->t[i] == t)
      return;
  if (s->n < 256)
    s->t[s->n++] = t;
}

/* Drops tokens implied by another member. */
void gen__ts_minimize(G *g, TSet *s) {
  int n = 0;
  for (int i = 0; i < s->n; i++) {
    int implied = 0;
    for (int j = 0; j < s->n && !implied; j++)
      if (j != i && gen__bit(gen__anc_row(g, s->t[j]), s->t[i]))
        implied = 1;
    if (!implied)
      s->t[n++] = s->t[i];
  }
  s->n = n;
}
