/*
 * vgraph.c: the validator's shared pieces (gen_int.h): the case's happens-before relation as an
 * ancestor bitset per node, errors naming the op, scopes, which tokens a block sees, token
 * definitions, views inside their buffers. validate.c walks the case; each kind's class checks
 * its own rules with these.
 */
#include "gen_int.h"

#include <stdio.h>
#include <string.h>

static uint64_t *row(V *v, int n) {
  return v->reach + (size_t)n * (size_t)v->words;
}

int gen__before(V *v, int a, int b) { /* a happens before b */
  if (a < 0)
    return 1; /* program start */
  return (int)((row(v, b)[a >> 6] >> (a & 63)) & 1);
}

void gen__edge(V *v, int from, int to) {
  if (from < 0)
    return;
  uint64_t *dst = row(v, to);
  const uint64_t *src = row(v, from);
  for (int w = 0; w < v->words; w++)
    dst[w] |= src[w];
  dst[from >> 6] |= 1ull << (from & 63);
}

static const char *kname(const V *v, int node) {
  if (node >= v->c->nops)
    return (node - v->c->nops) & 1 ? "region end" : "region start";
  return gen_op_name(v->c->ops[node].kind);
}

int gen__vfail(V *v, int i, const char *fmt, int a, int b) {
  char msg[300];
  snprintf(msg, sizeof msg, fmt, a, b);
  return af_err_set(v->err, AF_EINVALID, "op #%d (%s): %s", i, kname(v, i), msg);
}

int gen__in_scope(const GenCase *c, int ctx, int outer) {
  for (int guard = 0; ctx >= 0 && guard <= c->nregions; guard++) {
    if (ctx == outer)
      return 1;
    ctx = ctx == 0 ? -1 : c->regions[ctx].parent;
  }
  return 0;
}

/* Whether token t may be used in block blk (0: outside blocks): a block's own tokens only in it;
 * the context's other tokens anywhere, except in a call's body, which sees only its inputs. */
int gen__blk_sees(const V *v, int blk, int t) {
  if (v->tok_blk[t] == blk)
    return 1;
  return blk > 0 && v->tok_blk[t] == 0 && v->c->ops[v->c->blocks[blk].op].kind != GEN_OP_CALL;
}

int gen__define_token(V *v, int i, int t, int src, int ctx) {
  if (t < 0 || t >= v->c->ntoks)
    return gen__vfail(v, i, "defines token t%d outside the token table", t, 0);
  if (v->tok_defs[t]++ > 0)
    return gen__vfail(v, i, "defines token t%d, which is already defined (tokens are never reused)",
                      t, 0);
  v->tok_src[t] = src;
  v->tok_ctx[t] = ctx;
  v->tok_blk[t] = 0;
  return 0;
}

/* An op's views lie inside their buffers; only a memcpy, memset or launch has any. Sets err. */
int gen__check_views(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  static const char *const side[2] = {"dst", "src"};
  int launch = gen_kind_launches(o->kind);
  for (int k = 0; k < 3; k++) {
    const int32_t *w = o->view[k];
    int b = launch ? (k < o->nargs ? o->args[k] : -1) : k == 1 ? o->src : o->buf;
    if (w[1] <= 0)
      continue;
    if ((!launch && k == 2) || (!launch && k == 1 && !(gen_op_flags(o->kind) & GEN_K_SRC)) ||
        b < 0 || w[0] < 0 || w[2] < 1 ||
        (int64_t)w[0] + (int64_t)(w[1] - 1) * w[2] >= c->bufs[b].n) {
      char what[24]; /* named only on the way out: formatting it per op cost 3% of a case */
      if (launch)
        snprintf(what, sizeof what, "argument %d", k);
      else
        snprintf(what, sizeof what, "%s", k < 2 ? side[k] : "third");
      return af_err_set(v->err, AF_EINVALID,
                        "op #%d (%s): its %s view [%d, %d, %d] (offset, length, stride) lies "
                        "outside b%d (%d elements)",
                        i, gen_op_name(o->kind), what, w[0], w[1], w[2], b,
                        b >= 0 ? c->bufs[b].n : 0);
    }
  }
  return 0;
}
