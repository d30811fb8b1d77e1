/*
 * render_util.c: the renderer's shared pieces (render_int.h): memref types and host hooks, SSA
 * names of buffers and tokens, dependency lists, constants, views as memref.subviews, a block's
 * live body, and the line map of op locations. render.c writes the module; each kind's class
 * renders its ops with these.
 */
#include "render_int.h"

#include "../kernels/kernels.h"

#include <stdio.h>
#include <string.h>

/* Buffer b's memref type. */
const char *gen__mty(const GenCase *c, int b) {
  static const char *const t[GEN_ELEM__COUNT] = {
#define MTY(id, name, bytes, cls) "memref<?x" name ">",
      KERNEL_ELEM_MAP(MTY)
#undef MTY
  };
  int e = b >= 0 && b < c->nbufs ? c->bufs[b].elem : 0;
  return t[e < GEN_ELEM__COUNT ? e : 0];
}

/* The host hooks' name suffix for element type e ("" for i32, "_f16"). */
const char *gen__elem_sfx(int e) {
  static const char *const t[GEN_ELEM__COUNT] = {
#define SFX(id, name, bytes, cls) "_" name,
      KERNEL_ELEM_MAP(SFX)
#undef SFX
  };
  return e > 0 && e < GEN_ELEM__COUNT ? t[e] : "";
}

/* The host hook's name suffix for buffer b's type ("" for i32). */
const char *gen__hook_sfx(const GenCase *c, int b) {
  return gen__elem_sfx(c->bufs[b].elem);
}

/* Buffer b as the op being rendered names it: %bN, or the block argument a branch's live block
 * received it as. */
void gen__buf_name(R *r, const GenOp *o, int b, char *out, size_t n) {
  const GenBlock *k = o->blk > 0 ? &r->c->blocks[o->blk] : NULL;
  for (int q = 0; k && q < k->nbufargs; q++)
    if (k->bufargs[q] == b) {
      snprintf(out, n, "%%af_b%d_b%d", o->blk, b);
      return;
    }
  snprintf(out, n, "%%b%d", b);
}

/* Lines completed in the buffer so far. */
int gen__lines_so_far(R *r) {
  for (; r->scanned < r->b->len; r->scanned++)
    r->line += r->b->p[r->scanned] == '\n';
  return r->line;
}

/* Case op i starts on line `line` (1-based). */
void gen__map_line(R *r, int line, int i) {
  GenLineMap *m = r->map;
  if (m == NULL || line < 1 || m->oom)
    return;
  if (line > m->nlines) {
    if (af_grow((void **)&m->op, &m->cap, line, sizeof *m->op)) {
      m->oom = 1;
      return;
    }
    for (int l = m->nlines; l < line; l++)
      m->op[l] = -1;
    m->nlines = line;
  }
  m->op[line - 1] = i;
}

void gen__ind(R *r, int depth) {
  for (int i = 0; i < depth; i++)
    af_buf_puts(r->b, "  ");
}

/* The SSA value of token t: a token a region captured is the value of the spawning context
 * that it names (async.execute regions see their context's values directly). */
int gen__tok_value(const GenCase *c, int t) {
  for (int guard = 0; guard < c->nregions; guard++) {
    int outer = -1;
    for (int r = 1; r < c->nregions && outer < 0; r++)
      for (int k = 0; k < c->regions[r].ncaptures; k++)
        if (c->regions[r].captures[k].tok == t)
          outer = c->regions[r].captures[k].outer;
    if (outer < 0)
      return t;
    t = outer;
  }
  return t;
}

void gen__deps(R *r, const GenOp *o) {
  if (o->ndeps == 0)
    return;
  af_buf_puts(r->b, " [");
  for (int d = 0; d < o->ndeps; d++)
    af_buf_printf(r->b, "%s%%t%d", d ? ", " : "", gen__tok_value(r->c, o->deps[d]));
  af_buf_puts(r->b, "]");
}

int gen__i32const(R *r, int depth, int32_t v) {
  int k = r->k++;
  gen__ind(r, depth);
  af_buf_printf(r->b, "%%k%d = arith.constant %d : i32\n", k, v);
  return k;
}

/* The buffers block k's body uses, as a bitmap over c's buffers; how many. */
int gen__block_bufs(const GenCase *c, int k, uint8_t *used) {
  int n = 0;
  memset(used, 0, (size_t)c->nbufs);
  for (int j = c->blocks[k].first; j <= c->blocks[k].last; j++) {
    int32_t bufs[4];
    int writes[4];
    int na = c->ops[j].blk == k ? gen_op_accesses(c, j, bufs, writes) : 0;
    for (int q = 0; q < na; q++)
      if (!used[bufs[q]]++)
        n++;
  }
  return n;
}

/* The live body of block k, then its yield with `term` ("scf.yield", "cf.br ^X" or "return"). */
void gen__live_body(R *r, int k, int depth, const char *term, int branch) {
  const GenCase *c = r->c;
  const GenBlock *g = &c->blocks[k];
  const GenOp *o = &c->ops[g->op];
  r->body(r, g->first, g->last, o->ctx, k, depth);
  gen__ind(r, depth);
  if (g->yield < 0) {
    af_buf_printf(r->b, "%s\n", term);
    return;
  }
  af_buf_printf(r->b, "%s%s%%t%d : !gpu.async.token%s\n", term, branch ? "(" : " ",
                gen__tok_value(c, g->yield), branch ? ")" : "");
}

void gen__view_operand(R *r, const GenOp *o, int k, int depth, char *name, size_t n, char *type,
                       size_t tn) {
  const GenCase *c = r->c;
  int b = gen_kind_launches(o->kind) ? o->args[k] : k ? o->src : o->buf;
  gen__buf_name(r, o, b, name, n);
  snprintf(type, tn, "%s", gen__mty(c, b));
  if (o->view[k][1] <= 0)
    return;
  int q[3];
  for (int f = 0; f < 3; f++) {
    q[f] = r->k++;
    gen__ind(r, depth);
    af_buf_printf(r->b, "%%k%d = arith.constant %d : index\n", q[f], o->view[k][f]);
  }
  char strided[96];
  snprintf(strided, sizeof strided, "memref<?x%s, strided<[?], offset: ?>>",
           gen_elem_name(c->bufs[b].elem));
  int v = r->k++;
  gen__ind(r, depth);
  af_buf_printf(r->b, "%%k%d = memref.subview %s[%%k%d] [%%k%d] [%%k%d] : %s to %s\n", v, name,
                q[0], q[1], q[2], type, strided);
  snprintf(name, n, "%%k%d", v);
  snprintf(type, tn, "%s", strided);
}
