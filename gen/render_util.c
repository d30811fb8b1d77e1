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

/* Buffer b's memref type (in its memory space); a ranked one's in memory space sp. */
const char *gen__mty(const GenCase *c, int b) {
  int sp = b >= 0 && b < c->nbufs && c->bufs[b].space == 1;
  return gen__mty_in(c, b, sp);
}

const char *gen__mty_in(const GenCase *c, int b, int sp) {
  static const char *const t[2][GEN_ELEM__COUNT] = {{
#define MTY(id, name, bytes, cls) "memref<?x" name ">",
                                                        KERNEL_ELEM_MAP(MTY)
#undef MTY
                                                    },
                                                    {
#define MTY1(id, name, bytes, cls) "memref<?x" name ", 1>",
                                                        KERNEL_ELEM_MAP(MTY1)
#undef MTY1
                                                    }};
  int e = b >= 0 && b < c->nbufs ? c->bufs[b].elem : 0;
  e = e < GEN_ELEM__COUNT ? e : 0;
  if (gen_buf_rank(c, b) == 1)
    return t[sp != 0][e];
  /* (a few at once: one printf may name several) */
  static _Thread_local char ring[8][64];
  static _Thread_local int next;
  char *out = ring[next++ % 8];
  gen__shape_mty(c->bufs[b].rank, c->bufs[b].shape, c->bufs[b].dyn, e, sp, "", out, 64);
  return out;
}

void gen__shape_mty(int rank, const int32_t *shape, unsigned dyn, int e, int sp, const char *layout,
                    char *out, size_t n) {
  size_t at = 0;
  at += (size_t)snprintf(out, n, "memref<");
  for (int d = 0; d < rank && at < n; d++)
    at += (size_t)(dyn >> d & 1u ? snprintf(out + at, n - at, "?x")
                                 : snprintf(out + at, n - at, "%dx", shape[d]));
  if (at < n)
    snprintf(out + at, n - at, "%s%s%s>", gen_elem_name(e), layout, sp ? ", 1" : "");
}

const char *gen__elem_mty(int e) {
  return gen__elem_mty_in(e, 0);
}

const char *gen__elem_mty_in(int e, int sp) {
  GenBuf gb = {GEN_BUF_DEVICE, 1, 0, (uint8_t)e, 0, 0, 0, 0, 0, {0, 0, 0}};
  GenCase c;
  memset(&c, 0, sizeof c);
  c.nbufs = 1;
  c.bufs = &gb;
  return gen__mty_in(&c, 0, sp);
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

/* index constants, one per value of v; their SSA numbers into q */
static void index_consts(R *r, int depth, const int32_t *v, int n, int *q) {
  for (int f = 0; f < n; f++) {
    q[f] = r->k++;
    gen__ind(r, depth);
    af_buf_printf(r->b, "%%k%d = arith.constant %d : index\n", q[f], v[f]);
  }
}

void gen__flatten(R *r, int depth, int b, char *name, size_t n, char *type, size_t tn) {
  const GenCase *c = r->c;
  const GenBuf *gb = &c->bufs[b];
  int rank = gen_buf_rank(c, b), sp = gb->space == 1;
  if (rank == 1)
    return;
  char assoc[16] = "[[0, 1", flat[64];
  if (rank == 3)
    snprintf(assoc, sizeof assoc, "[[0, 1, 2");
  int32_t one = gb->n;
  /* (a shape without a dynamic extent collapses to a static one, then cast to ?xT) */
  gen__shape_mty(1, &one, gb->dyn ? 1u : 0u, gb->elem, sp, "", flat, sizeof flat);
  int v = r->k++;
  gen__ind(r, depth);
  af_buf_printf(r->b, "%%k%d = memref.collapse_shape %s %s]] : %s into %s\n", v, name, assoc, type,
                flat);
  snprintf(name, n, "%%k%d", v);
  if (!gb->dyn) {
    int w = r->k++;
    gen__ind(r, depth);
    af_buf_printf(r->b, "%%k%d = memref.cast %%k%d : %s to %s\n", w, v, flat,
                  gen__elem_mty_in(gb->elem, sp));
    snprintf(name, n, "%%k%d", w);
  }
  snprintf(type, tn, "%s", gen__elem_mty_in(gb->elem, sp));
}

void gen__reshape(R *r, int depth, int b, int rank, const int32_t *shape, unsigned dyn, char *name,
                  size_t n, char *type, size_t tn) {
  const GenCase *c = r->c;
  const GenBuf *gb = &c->bufs[b];
  int sp = gb->space == 1;
  char to[64];
  gen__shape_mty(rank, shape, dyn, gb->elem, sp, "", to, sizeof to);
  if (strcmp(to, type) == 0)
    return;
  gen__flatten(r, depth, b, name, n, type, tn);
  if (dyn == 0) { /* (a static shape expands a static one) */
    char flat[64];
    int32_t all = gb->n;
    gen__shape_mty(1, &all, 0, gb->elem, sp, "", flat, sizeof flat);
    int w = r->k++;
    gen__ind(r, depth);
    af_buf_printf(r->b, "%%k%d = memref.cast %s : %s to %s\n", w, name, type, flat);
    snprintf(name, n, "%%k%d", w);
    snprintf(type, tn, "%s", flat);
  }
  int q[3] = {0, 0, 0};
  for (int d = 0; d < rank; d++)
    if (dyn >> d & 1u)
      index_consts(r, depth, &shape[d], 1, &q[d]);
  int v = r->k++;
  gen__ind(r, depth);
  af_buf_printf(r->b, "%%k%d = memref.expand_shape %s [[0, 1%s]] output_shape [", v, name,
                rank == 3 ? ", 2" : "");
  for (int d = 0; d < rank; d++) {
    if (dyn >> d & 1u)
      af_buf_printf(r->b, "%s%%k%d", d ? ", " : "", q[d]);
    else
      af_buf_printf(r->b, "%s%d", d ? ", " : "", shape[d]);
  }
  af_buf_printf(r->b, "] : %s into %s\n", type, to);
  snprintf(name, n, "%%k%d", v);
  snprintf(type, tn, "%s", to);
}

void gen__view_operand(R *r, const GenOp *o, int k, int depth, char *name, size_t n, char *type,
                       size_t tn) {
  const GenCase *c = r->c;
  int b = gen_kind_launches(o->kind) ? o->args[k] : k ? o->src : o->buf;
  gen__buf_name(r, o, b, name, n);
  snprintf(type, tn, "%s", gen__mty(c, b));
  if (o->view[k][1] <= 0)
    return;
  const GenBuf *gb = &c->bufs[b];
  int32_t ext[3];
  int row = gen_view_rows(c, o, k), rank = row ? gen_op_rows(c, o, ext) : 0;
  if (row > 0) { /* whole rows, in every dimension, of the buffer in rows of those extents */
    ext[0] = gb->n / row;
    int same = gen_buf_rank(c, b) == rank;
    for (int d = 1; d < rank && same; d++)
      same = gb->shape[d] == ext[d];
    if (!same)
      gen__reshape(r, depth, b, rank, ext, 1u, name, n, type, tn);
    int32_t v[9] = {o->view[k][0] / row, 0, 0, o->view[k][1] / row, 0, 0, 1, 1, 1};
    for (int d = 1; d < rank; d++)
      v[3 + d] = ext[d];
    int32_t off[3], sz[3], st[3];
    for (int d = 0; d < rank; d++)
      off[d] = v[d], sz[d] = v[3 + d], st[d] = v[6 + d];
    int qo[3], qs[3], qt[3];
    index_consts(r, depth, off, rank, qo);
    index_consts(r, depth, sz, rank, qs);
    index_consts(r, depth, st, rank, qt);
    char to[96];
    int32_t any[3] = {1, 1, 1};
    gen__shape_mty(rank, any, 7u, gb->elem, gb->space == 1,
                   rank == 3 ? ", strided<[?, ?, ?], offset: ?>" : ", strided<[?, ?], offset: ?>",
                   to, sizeof to);
    int w = r->k++;
    gen__ind(r, depth);
    af_buf_printf(r->b, "%%k%d = memref.subview %s[", w, name);
    for (int d = 0; d < rank; d++)
      af_buf_printf(r->b, "%s%%k%d", d ? ", " : "", qo[d]);
    af_buf_puts(r->b, "] [");
    for (int d = 0; d < rank; d++)
      af_buf_printf(r->b, "%s%%k%d", d ? ", " : "", qs[d]);
    af_buf_puts(r->b, "] [");
    for (int d = 0; d < rank; d++)
      af_buf_printf(r->b, "%s%%k%d", d ? ", " : "", qt[d]);
    af_buf_printf(r->b, "] : %s to %s\n", type, to);
    snprintf(name, n, "%%k%d", w);
    snprintf(type, tn, "%s", to);
    return;
  }
  gen__flatten(r, depth, b, name, n, type, tn); /* (a ranked buffer's view: of it flattened) */
  int q[3];
  index_consts(r, depth, o->view[k], 3, q);
  char strided[96];
  snprintf(strided, sizeof strided, "memref<?x%s, strided<[?], offset: ?>%s>",
           gen_elem_name(gb->elem), gb->space == 1 ? ", 1" : "");
  int v = r->k++;
  gen__ind(r, depth);
  af_buf_printf(r->b, "%%k%d = memref.subview %s[%%k%d] [%%k%d] [%%k%d] : %s to %s\n", v, name,
                q[0], q[1], q[2], type, strided);
  snprintf(name, n, "%%k%d", v);
  snprintf(type, tn, "%s", strided);
}

void gen__kernel_mty(int k, char *out, size_t n) {
  const char *e = gen_elem_name(KERNEL_ELEM(k));
  if (KERNEL_VIEW(k))
    snprintf(out, n, "memref<?x%s, strided<[?], offset: ?>>", e);
  else
    snprintf(out, n, "memref<?x%s>", e);
}

/* The lines that make i32 lane `out` of element `in` of type e (kernel_lane), after ind. */
static void to_lane(AfBuf *b, int e, const char *in, const char *out, const char *ind) {
  const char *t = gen_elem_name(e);
  switch (e) {
  case GEN_ELEM_I8:
  case GEN_ELEM_I16:
    af_buf_printf(b, "%s%s = arith.extsi %s : %s to i32\n", ind, out, in, t);
    break;
  case GEN_ELEM_I1:
    af_buf_printf(b, "%s%s = arith.extui %s : i1 to i32\n", ind, out, in);
    break;
  case GEN_ELEM_F16:
  case GEN_ELEM_BF16:
    af_buf_printf(b, "%s%s_b = arith.bitcast %s : %s to i16\n", ind, out, in, t);
    af_buf_printf(b, "%s%s = arith.extsi %s_b : i16 to i32\n", ind, out, out);
    break;
  case GEN_ELEM_F32:
    af_buf_printf(b, "%s%s = arith.bitcast %s : f32 to i32\n", ind, out, in);
    break;
  case GEN_ELEM_I64:
    af_buf_printf(b, "%s%s = arith.trunci %s : i64 to i32\n", ind, out, in);
    break;
  case GEN_ELEM_F64:
    af_buf_printf(b, "%s%s_b = arith.bitcast %s : f64 to i64\n", ind, out, in);
    af_buf_printf(b, "%s%s = arith.trunci %s_b : i64 to i32\n", ind, out, out);
    break;
  case GEN_ELEM_INDEX:
    af_buf_printf(b, "%s%s = arith.index_cast %s : index to i32\n", ind, out, in);
    break;
  default:
    break;
  }
}

/* The lines that make element `out` of type e from i32 lane `in` (kernel_lane_store). */
static void from_lane(AfBuf *b, int e, const char *in, const char *out, const char *ind) {
  const char *t = gen_elem_name(e);
  switch (e) {
  case GEN_ELEM_I8:
  case GEN_ELEM_I16:
  case GEN_ELEM_I1:
    af_buf_printf(b, "%s%s = arith.trunci %s : i32 to %s\n", ind, out, in, t);
    break;
  case GEN_ELEM_F16:
  case GEN_ELEM_BF16:
    af_buf_printf(b, "%s%s_b = arith.trunci %s : i32 to i16\n", ind, out, in);
    af_buf_printf(b, "%s%s = arith.bitcast %s_b : i16 to %s\n", ind, out, out, t);
    break;
  case GEN_ELEM_F32:
    af_buf_printf(b, "%s%s = arith.bitcast %s : i32 to f32\n", ind, out, in);
    break;
  case GEN_ELEM_I64:
    af_buf_printf(b, "%s%s = arith.extsi %s : i32 to i64\n", ind, out, in);
    break;
  case GEN_ELEM_F64:
    af_buf_printf(b, "%s%s_b = arith.extsi %s : i32 to i64\n", ind, out, in);
    af_buf_printf(b, "%s%s = arith.bitcast %s_b : i64 to f64\n", ind, out, out);
    break;
  case GEN_ELEM_INDEX:
    af_buf_printf(b, "%s%s = arith.index_cast %s : i32 to index\n", ind, out, in);
    break;
  default:
    break;
  }
}

/* Kernel k's body (gpu.func or gpu.launch alike): operands dst, a, b (memrefs of kernel k's type)
 * and v (i32), with %spin, each line after ind. Each thread's element is its linear index over
 * the grid and the blocks, x fastest. It computes on i32 lanes (kernel_lane): an i32 kernel's
 * loads and stores are its lanes; another type's are converted. The spin phase and the result
 * are atomic stores (memref.atomic_rmw assign), which no compiler merges; i1 and index have
 * none, so their threads spin on plain stores, every thread of the block, with a gpu.barrier
 * (a fence the stores cannot move across) after each. */
void gen__kernel_body(AfBuf *b, int k, const char *dst, const char *a, const char *bb,
                      const char *v, const char *ind) {
  char t[96];
  gen__kernel_mty(k, t, sizeof t);
  int e = KERNEL_ELEM(k), i32 = e == GEN_ELEM_I32;
  int atomic = e != GEN_ELEM_I1 && e != GEN_ELEM_INDEX;
  const char *et = gen_elem_name(e);
  static const char *const index[] = {"%c0 = arith.constant 0 : index",
                                      "%tx = gpu.thread_id x",
                                      "%ty = gpu.thread_id y",
                                      "%tz = gpu.thread_id z",
                                      "%bx = gpu.block_id x",
                                      "%by = gpu.block_id y",
                                      "%bz = gpu.block_id z",
                                      "%dx = gpu.block_dim x",
                                      "%dy = gpu.block_dim y",
                                      "%dz = gpu.block_dim z",
                                      "%gx = gpu.grid_dim x",
                                      "%gy = gpu.grid_dim y",
                                      "%l0 = arith.muli %tz, %dy : index",
                                      "%l1 = arith.addi %l0, %ty : index",
                                      "%l2 = arith.muli %l1, %dx : index",
                                      "%tid = arith.addi %l2, %tx : index",
                                      "%g0 = arith.muli %bz, %gy : index",
                                      "%g1 = arith.addi %g0, %by : index",
                                      "%g2 = arith.muli %g1, %gx : index",
                                      "%bid = arith.addi %g2, %bx : index",
                                      "%d0 = arith.muli %dx, %dy : index",
                                      "%bdim = arith.muli %d0, %dz : index",
                                      "%base = arith.muli %bid, %bdim : index",
                                      "%i = arith.addi %base, %tid : index"};
  for (size_t q = 0; q < sizeof index / sizeof index[0]; q++)
    af_buf_printf(b, "%s%s\n", ind, index[q]);
  af_buf_printf(b,
                "%s%%n = memref.dim %s, %%c0 : %s\n"
                "%s%%inb = arith.cmpi ult, %%i, %%n : index\n",
                ind, dst, t, ind);
  char in2[72];
  snprintf(in2, sizeof in2, "%s  ", ind);
  if (atomic) {
    af_buf_printf(b,
                  "%sscf.if %%inb {\n"
                  "%s  %%sentinel = arith.constant %d : i32\n",
                  ind, ind, KERNEL_SENTINEL);
    from_lane(b, e, "%sentinel", "%sentinel_e", in2);
    af_buf_printf(b,
                  "%s  %%z = arith.constant 0 : i32\n"
                  "%s  %%one = arith.constant 1 : i32\n"
                  "%s  scf.for %%s = %%z to %%spin step %%one : i32 {\n"
                  "%s    %%old = memref.atomic_rmw assign %s, %s[%%i] : (%s, %s) -> %s\n"
                  "%s  }\n",
                  ind, ind, ind, ind, i32 ? "%sentinel" : "%sentinel_e", dst, et, t, et, ind);
  } else {
    af_buf_printf(b, "%s%%sentinel = arith.constant %d : i32\n", ind, KERNEL_SENTINEL);
    from_lane(b, e, "%sentinel", "%sentinel_e", ind);
    af_buf_printf(b,
                  "%s%%z = arith.constant 0 : i32\n"
                  "%s%%one = arith.constant 1 : i32\n"
                  "%sscf.for %%s = %%z to %%spin step %%one : i32 {\n"
                  "%s  scf.if %%inb {\n"
                  "%s    memref.store %%sentinel_e, %s[%%i] : %s\n"
                  "%s  }\n"
                  "%s  gpu.barrier\n"
                  "%s}\n"
                  "%sscf.if %%inb {\n",
                  ind, ind, ind, ind, ind, dst, t, ind, ind, ind, ind);
  }
  /* the sources' lanes, %x and %y, after the kernel's constant */
  static const char *const konst[KERNEL__COUNT] = {"%c7 = arith.constant 7 : i32",
                                                   "%c3 = arith.constant 3 : i32",
                                                   "%c5 = arith.constant 5 : i32"};
  af_buf_printf(b, "%s  %s\n", ind, konst[KERNEL_BASE(k)]);
  const char *src[2] = {a, bb}, *lane[2] = {"%x", "%y"};
  int nsrc = KERNEL_BASE(k) == KERNEL_FILL ? 0 : KERNEL_BASE(k) == KERNEL_TRANSFORM ? 1 : 2;
  for (int q = 0; q < nsrc; q++) {
    char el[16];
    snprintf(el, sizeof el, "%s%s", lane[q], i32 ? "" : "e");
    af_buf_printf(b, "%s  %s = memref.load %s[%%i] : %s\n", ind, el, src[q], t);
    to_lane(b, e, el, lane[q], in2);
  }
  switch (KERNEL_BASE(k)) {
  case KERNEL_FILL:
    af_buf_printf(b,
                  "%s  %%ii = arith.index_cast %%i : index to i32\n"
                  "%s  %%m = arith.muli %s, %%c7 : i32\n"
                  "%s  %%r = arith.addi %%m, %%ii : i32\n",
                  ind, ind, v, ind);
    break;
  case KERNEL_TRANSFORM:
    af_buf_printf(b,
                  "%s  %%m = arith.muli %%x, %%c3 : i32\n"
                  "%s  %%r = arith.addi %%m, %s : i32\n",
                  ind, ind, v);
    break;
  case KERNEL_COMBINE:
    af_buf_printf(b,
                  "%s  %%m = arith.muli %%y, %%c5 : i32\n"
                  "%s  %%s1 = arith.addi %%x, %%m : i32\n"
                  "%s  %%r = arith.addi %%s1, %s : i32\n",
                  ind, ind, ind, v);
    break;
  }
  const char *rv = "%r";
  if (KERNEL_STAGED(k)) { /* through the thread's slot of the block's dynamic shared memory */
    static const char *const wg = "#gpu.address_space<workgroup>";
    rv = "%af_rs";
    af_buf_printf(b,
                  "%s  %%af_sm = gpu.dynamic_shared_memory : memref<?xi8, %s>\n"
                  "%s  %%af_slots = memref.view %%af_sm[%%c0][%%bdim] : memref<?xi8, %s> to "
                  "memref<?xi32, %s>\n"
                  "%s  memref.store %%r, %%af_slots[%%tid] : memref<?xi32, %s>\n"
                  "%s  %%af_rs = memref.load %%af_slots[%%tid] : memref<?xi32, %s>\n",
                  ind, wg, ind, wg, wg, ind, wg, ind, wg);
  }
  from_lane(b, e, rv, "%re", in2);
  if (atomic)
    af_buf_printf(b, "%s  %%last = memref.atomic_rmw assign %s, %s[%%i] : (%s, %s) -> %s\n", ind,
                  i32 ? rv : "%re", dst, et, t, et);
  else
    af_buf_printf(b, "%s  memref.store %%re, %s[%%i] : %s\n", ind, dst, t);
  af_buf_printf(b, "%s}\n", ind);
}
