/*
 * render_ops.c: each op kind as MLIR (render_<lc>, named by GEN_OP_MAP's rows), and the bodies
 * of contexts and blocks: what render.c puts in a case's host functions.
 */
#include "render_int.h"

#include "../runner/kernels.h"

#include <stdio.h>
#include <string.h>

/* Buffer b's memref type. */
const char *gen__mty(const GenCase *c, int b) {
  static const char *const t[GEN_ELEM__COUNT] = {"memref<?xi32>", "memref<?xi16>", "memref<?xi64>",
                                                 "memref<?xf32>"};
  int e = b >= 0 && b < c->nbufs ? c->bufs[b].elem : 0;
  return t[e < GEN_ELEM__COUNT ? e : 0];
}

/* The host hook's name suffix for buffer b's type ("" for i32). */
const char *gen__hook_sfx(const GenCase *c, int b) {
  int e = c->bufs[b].elem;
  return e == GEN_ELEM_I32 ? "" : e == GEN_ELEM_I16 ? "_i16" : e == GEN_ELEM_I64 ? "_i64" : "_f32";
}

/* Buffer b as the op being rendered names it: %bN, or the block argument a branch's live block
 * received it as. */
static void buf_name(R *r, const GenOp *o, int b, char *out, size_t n) {
  const GenBlock *k = o->blk > 0 ? &r->c->blocks[o->blk] : NULL;
  for (int q = 0; k && q < k->nbufargs; q++)
    if (k->bufargs[q] == b) {
      snprintf(out, n, "%%af_b%d_b%d", o->blk, b);
      return;
    }
  snprintf(out, n, "%%b%d", b);
}

/* Lines completed in the buffer so far. */
static int lines_so_far(R *r) {
  for (; r->scanned < r->b->len; r->scanned++)
    r->line += r->b->p[r->scanned] == '\n';
  return r->line;
}

/* Case op i starts on line `line` (1-based). */
static void map_line(R *r, int line, int i) {
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

static void ind(R *r, int depth) {
  for (int i = 0; i < depth; i++)
    af_buf_puts(r->b, "  ");
}

/* The SSA value of token t: a token a region captured is the value of the spawning context
 * that it names (async.execute regions see their context's values directly). */
static int tok_value(const GenCase *c, int t) {
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

static void deps(R *r, const GenOp *o) {
  if (o->ndeps == 0)
    return;
  af_buf_puts(r->b, " [");
  for (int d = 0; d < o->ndeps; d++)
    af_buf_printf(r->b, "%s%%t%d", d ? ", " : "", tok_value(r->c, o->deps[d]));
  af_buf_puts(r->b, "]");
}

int gen__i32const(R *r, int depth, int32_t v) {
  int k = r->k++;
  ind(r, depth);
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

/* A call op: the call of its callee (render.c writes the callee). */
static int render_call(R *r, int i, int depth) {
  const GenCase *c = r->c;
  const GenOp *o = &c->ops[i];
  const GenBlock *k = &c->blocks[o->block];
  uint8_t *used = af_calloc((size_t)c->nbufs + 1, 1);
  if (used == NULL) {
    r->b->oom = 1;
    return 0;
  }
  gen__block_bufs(c, o->block, used);
  ind(r, depth);
  if (o->tok >= 0)
    af_buf_printf(r->b, "%%t%d = ", o->tok);
  af_buf_printf(r->b, "func.call @%s_fn%d(", r->fname, o->block);
  int n = 0;
  for (int q = 0; q < k->ninputs; q++)
    af_buf_printf(r->b, "%s%%t%d", n++ ? ", " : "", tok_value(c, k->inputs[q].outer));
  for (int b = 0; b < c->nbufs; b++)
    if (used[b])
      af_buf_printf(r->b, "%s%%b%d", n++ ? ", " : "", b);
  af_buf_puts(r->b, ") : (");
  n = 0;
  for (int q = 0; q < k->ninputs; q++)
    af_buf_printf(r->b, "%s!gpu.async.token", n++ ? ", " : "");
  for (int b = 0; b < c->nbufs; b++)
    if (used[b])
      af_buf_printf(r->b, "%s%s", n++ ? ", " : "", gen__mty(c, b));
  af_buf_printf(r->b, ") -> (%s)\n", o->tok >= 0 ? "!gpu.async.token" : "");
  af_free(used);
  return 0;
}

/* The live body of block k, then its yield with `term` ("scf.yield", "cf.br ^X" or "return"). */
void gen__live_body(R *r, int k, int depth, const char *term, int branch) {
  const GenCase *c = r->c;
  const GenBlock *g = &c->blocks[k];
  const GenOp *o = &c->ops[g->op];
  gen__render_body(r, g->first, g->last, o->ctx, k, depth);
  ind(r, depth);
  if (g->yield < 0) {
    af_buf_printf(r->b, "%s\n", term);
    return;
  }
  af_buf_printf(r->b, "%s%s%%t%d : !gpu.async.token%s\n", term, branch ? "(" : " ",
                tok_value(c, g->yield), branch ? ")" : "");
}

/* An if: the live body where the condition sends the host, the other one yielding a fresh
 * token when the op has one. */
static int render_if(R *r, int i, int depth) {
  const GenCase *c = r->c;
  const GenOp *o = &c->ops[i];
  const GenBlock *g = &c->blocks[o->block];
  AfBuf *b = r->b;
  int k = o->block;
  ind(r, depth);
  if (o->tok >= 0)
    af_buf_printf(b, "%%t%d = ", o->tok);
  af_buf_printf(b, "scf.if %s%s {\n", g->taken ? "%af_true" : "%af_false",
                o->tok >= 0 ? " -> (!gpu.async.token)" : "");
  for (int pass = 0; pass < 2; pass++) { /* the then and the else region */
    if (pass == 1 && (!g->taken || o->tok >= 0)) {
      ind(r, depth);
      af_buf_puts(b, "} else {\n");
    }
    if ((pass == 0) == (g->taken != 0)) {
      gen__live_body(r, k, depth + 1, "scf.yield", 0);
    } else if (o->tok >= 0) {
      ind(r, depth + 1);
      af_buf_printf(b, "%%af_dead%d = gpu.wait async\n", k);
      ind(r, depth + 1);
      af_buf_printf(b, "scf.yield %%af_dead%d : !gpu.async.token\n", k);
    }
  }
  ind(r, depth);
  af_buf_puts(b, "}\n");
  return 1;
}

/* A for: its body, the token carried as iter_arg. */
static int render_for(R *r, int i, int depth) {
  const GenCase *c = r->c;
  const GenOp *o = &c->ops[i];
  const GenBlock *g = &c->blocks[o->block];
  int k = o->block;
  ind(r, depth);
  af_buf_printf(r->b,
                "%%t%d = scf.for %%af_iv%d = %%af_c0 to %%af_trips%d step %%c1 iter_args(%%t%d "
                "= %%t%d) -> (!gpu.async.token) {\n",
                o->tok, k, k, g->inputs[0].tok, tok_value(c, g->inputs[0].outer));
  gen__live_body(r, k, depth + 1, "scf.yield", 0);
  ind(r, depth);
  af_buf_puts(r->b, "}\n");
  return 1;
}

/* A branch's block arguments: its inputs, then its buffers; with their types (decl: as the block
 * declares them, else as the cf.cond_br passes them). */
static void branch_args(R *r, const GenBlock *g, int k, int decl) {
  const GenCase *c = r->c;
  AfBuf *b = r->b;
  if (g->ninputs + g->nbufargs == 0)
    return;
  af_buf_puts(b, "(");
  for (int q = 0; q < g->ninputs; q++)
    if (decl)
      af_buf_printf(b, "%s%%t%d: !gpu.async.token", q ? ", " : "", g->inputs[q].tok);
    else
      af_buf_printf(b, "%s%%t%d", q ? ", " : "", tok_value(c, g->inputs[q].outer));
  for (int q = 0; q < g->nbufargs; q++)
    if (decl)
      af_buf_printf(b, "%s%%af_b%d_b%d: %s", q + g->ninputs ? ", " : "", k, g->bufargs[q],
                    gen__mty(c, g->bufargs[q]));
    else
      af_buf_printf(b, "%s%%b%d", q + g->ninputs ? ", " : "", g->bufargs[q]);
  if (!decl) {
    af_buf_puts(b, " : ");
    for (int q = 0; q < g->ninputs; q++)
      af_buf_printf(b, "%s!gpu.async.token", q ? ", " : "");
    for (int q = 0; q < g->nbufargs; q++)
      af_buf_printf(b, "%s%s", q + g->ninputs ? ", " : "", gen__mty(c, g->bufargs[q]));
  }
  af_buf_puts(b, ")");
}

/* A branch: cf.cond_br to ^t and ^f (in that order in the text), both branching to ^m, whose
 * argument is the op's token; the dead block passes the first input's outer token, or a fresh
 * one. */
static int render_branch(R *r, int i, int depth) {
  const GenCase *c = r->c;
  const GenOp *o = &c->ops[i];
  const GenBlock *g = &c->blocks[o->block];
  AfBuf *b = r->b;
  int k = o->block;
  char merge[48];
  snprintf(merge, sizeof merge, "cf.br ^af_bb%d_m", k);
  ind(r, depth);
  af_buf_printf(b, "cf.cond_br %s, ^af_bb%d_t", g->taken ? "%af_true" : "%af_false", k);
  for (int pass = 0; pass < 2; pass++) {
    if (pass)
      af_buf_printf(b, ", ^af_bb%d_f", k);
    if ((pass == 0) == (g->taken != 0))
      branch_args(r, g, k, 0);
  }
  af_buf_puts(b, "\n");
  for (int pass = 0; pass < 2; pass++) {
    int is_live = (pass == 0) == (g->taken != 0);
    ind(r, depth - 1);
    af_buf_printf(b, "^af_bb%d_%s", k, pass == 0 ? "t" : "f");
    if (is_live)
      branch_args(r, g, k, 1);
    af_buf_puts(b, ":\n");
    if (is_live) {
      gen__live_body(r, k, depth, merge, 1);
      continue;
    }
    ind(r, depth);
    if (o->tok < 0) {
      af_buf_printf(b, "%s\n", merge);
    } else if (g->ninputs) {
      af_buf_printf(b, "%s(%%t%d : !gpu.async.token)\n", merge, tok_value(c, g->inputs[0].outer));
    } else {
      af_buf_printf(b, "%%af_dead%d = gpu.wait async\n", k);
      ind(r, depth);
      af_buf_printf(b, "%s(%%af_dead%d : !gpu.async.token)\n", merge, k);
    }
  }
  ind(r, depth - 1);
  af_buf_printf(b, "^af_bb%d_m", k);
  if (o->tok >= 0)
    af_buf_printf(b, "(%%t%d: !gpu.async.token)", o->tok);
  af_buf_puts(b, ":\n");
  return 1;
}

static void view_operand(R *r, const GenOp *o, int k, int depth, char *name, size_t n, char *type,
                         size_t tn) {
  const GenCase *c = r->c;
  int b = o->kind == GEN_OP_LAUNCH ? o->args[k] : k ? o->src : o->buf;
  buf_name(r, o, b, name, n);
  snprintf(type, tn, "%s", gen__mty(c, b));
  if (o->view[k][1] <= 0)
    return;
  int q[3];
  for (int f = 0; f < 3; f++) {
    q[f] = r->k++;
    ind(r, depth);
    af_buf_printf(r->b, "%%k%d = arith.constant %d : index\n", q[f], o->view[k][f]);
  }
  char strided[96];
  snprintf(strided, sizeof strided, "memref<?x%s, strided<[?], offset: ?>>",
           gen_elem_name(c->bufs[b].elem));
  int v = r->k++;
  ind(r, depth);
  af_buf_printf(r->b, "%%k%d = memref.subview %s[%%k%d] [%%k%d] [%%k%d] : %s to %s\n", v, name,
                q[0], q[1], q[2], type, strided);
  snprintf(name, n, "%%k%d", v);
  snprintf(type, tn, "%s", strided);
}

/* A launch. One with a view among its operands launches the kernel's view form: every operand
 * a memref.subview or a memref.cast to the strided type, one thread per element of the views. */
static int render_launch(R *r, int i, int depth) {
  const GenOp *o = &r->c->ops[i];
  const GenCase *c = r->c;
  AfBuf *b = r->b;
  int view = gen_op_has_view(o), k = gen__i32const(r, depth, o->value), nth = -1;
  char name[KERNEL_MAX_BUFS][48], type[KERNEL_MAX_BUFS][96];
  for (int a = 0; a < o->nargs; a++) {
    view_operand(r, o, a, depth, name[a], sizeof name[a], type[a], sizeof type[a]);
    if (view && o->view[a][1] <= 0) { /* the whole buffer, cast to the strided type */
      int v = r->k++;
      ind(r, depth);
      af_buf_printf(b, "%%k%d = memref.cast %s : " MT " to " SMT "\n", v, name[a]);
      snprintf(name[a], sizeof name[a], "%%k%d", v);
      snprintf(type[a], sizeof type[a], SMT);
    }
  }
  if (view) {
    int32_t off, len, stride;
    gen_op_view(c, o, 0, &off, &len, &stride);
    nth = r->k++;
    ind(r, depth);
    af_buf_printf(b, "%%k%d = arith.constant %d : index\n", nth, len);
  }
  ind(r, depth);
  af_buf_printf(b, "%%t%d = gpu.launch_func async", o->tok);
  deps(r, o);
  if (o->stream >= 0)
    af_buf_printf(b, " <%%st%d : !llvm.ptr>", o->stream);
  af_buf_printf(b, " @asyncfuzz_kernels::@%s blocks in (%%c1, %%c1, %%c1) threads in (",
                kernel_info(o->kernel + (view ? KERNEL__COUNT : 0))->name);
  if (view)
    af_buf_printf(b, "%%k%d", nth);
  else
    af_buf_printf(b, "%%n%d", c->bufs[o->args[0]].n);
  af_buf_puts(b, ", %c1, %c1) args(");
  for (int a = 0; a < o->nargs; a++)
    af_buf_printf(b, "%s : %s, ", name[a], type[a]);
  af_buf_printf(b, "%%k%d : i32, %%spin : i32)\n", k);
  return 0;
}

/* A memset: its value as the element type (an i16 truncated, an f32 exact), then the op. */
static int render_memset(R *r, int i, int depth) {
  const GenOp *o = &r->c->ops[i];
  const GenCase *c = r->c;
  AfBuf *b = r->b;
  int e = c->bufs[o->buf].elem, k = r->k++;
  ind(r, depth);
  if (e == GEN_ELEM_F32)
    af_buf_printf(b, "%%k%d = arith.constant %d.0 : f32\n", k, o->value);
  else if (e == GEN_ELEM_I16)
    af_buf_printf(b, "%%k%d = arith.constant %d : i16\n", k, (int16_t)o->value);
  else
    af_buf_printf(b, "%%k%d = arith.constant %d : %s\n", k, o->value, gen_elem_name(e));
  char dn[48], dt[96];
  view_operand(r, o, 0, depth, dn, sizeof dn, dt, sizeof dt);
  ind(r, depth);
  af_buf_printf(b, "%%t%d = gpu.memset async", o->tok);
  deps(r, o);
  af_buf_printf(b, " %s, %%k%d : %s, %s\n", dn, k, dt, gen_elem_name(e));
  return 0;
}

/* An alloc; a static allocation is cast to the dynamic shape every other op uses. */
static int render_alloc(R *r, int i, int depth) {
  const GenCase *c = r->c;
  const GenOp *o = &c->ops[i];
  AfBuf *b = r->b;
  const GenBuf *gb = &c->bufs[o->buf];
  const char *sfx = gb->stat ? "_s" : "";
  ind(r, depth);
  if (o->async) {
    af_buf_printf(b, "%%b%d%s, %%t%d = gpu.alloc async", o->buf, sfx, o->tok);
    deps(r, o);
  } else {
    af_buf_printf(b, "%%b%d%s = gpu.alloc%s", o->buf, sfx,
                  o->mode == GEN_ALLOC_HOST_SHARED ? " host_shared" : "");
  }
  if (!gb->stat) {
    af_buf_printf(b, " (%%n%d) : %s\n", gb->n, gen__mty(c, o->buf));
    return 0;
  }
  af_buf_printf(b, " () : memref<%dx%s>\n", gb->n, gen_elem_name(gb->elem));
  if (r->map) /* the allocation's calls are on this line */
    map_line(r, lines_so_far(r), i);
  ind(r, depth);
  af_buf_printf(b, "%%b%d = memref.cast %%b%d_s : memref<%dx%s> to %s\n", o->buf, o->buf, gb->n,
                gen_elem_name(gb->elem), gen__mty(c, o->buf));
  return 0;
}

/* ---- each kind: render_<lc> (GEN_OP_MAP) writes op i at depth and returns 1 when its operation
 * starts on the first line it wrote (an op with its body in place), 0 when on the last (after
 * the constants and views it needs). */

static int render_wait_async(R *r, int i, int depth) {
  const GenOp *o = &r->c->ops[i];
  ind(r, depth);
  af_buf_printf(r->b, "%%t%d = gpu.wait async", o->tok);
  deps(r, o);
  af_buf_puts(r->b, "\n");
  return 0;
}

static int render_host_wait(R *r, int i, int depth) {
  ind(r, depth);
  af_buf_puts(r->b, "gpu.wait");
  deps(r, &r->c->ops[i]);
  af_buf_puts(r->b, "\n");
  return 0;
}

static int render_dealloc(R *r, int i, int depth) {
  const GenOp *o = &r->c->ops[i];
  ind(r, depth);
  if (o->async) {
    af_buf_printf(r->b, "%%t%d = gpu.dealloc async", o->tok);
    deps(r, o);
  } else {
    af_buf_puts(r->b, "gpu.dealloc");
  }
  af_buf_printf(r->b, " %%b%d : %s\n", o->buf, gen__mty(r->c, o->buf));
  return 0;
}

static int render_memcpy(R *r, int i, int depth) {
  const GenOp *o = &r->c->ops[i];
  char dn[48], dt[96], sn[48], st[96];
  view_operand(r, o, 0, depth, dn, sizeof dn, dt, sizeof dt);
  view_operand(r, o, 1, depth, sn, sizeof sn, st, sizeof st);
  ind(r, depth);
  af_buf_printf(r->b, "%%t%d = gpu.memcpy async", o->tok);
  deps(r, o);
  af_buf_printf(r->b, " %s, %s : %s, %s\n", dn, sn, dt, st);
  return 0;
}

static int render_observe(R *r, int i, int depth) {
  const GenOp *o = &r->c->ops[i];
  int k = gen__i32const(r, depth, i);
  ind(r, depth);
  af_buf_printf(r->b, "func.call @asyncfuzz_observe%s(%%k%d, %%b%d) : (i32, %s) -> ()\n",
                gen__hook_sfx(r->c, o->buf), k, o->buf, gen__mty(r->c, o->buf));
  return 0;
}

static int render_execute(R *r, int i, int depth) {
  const GenCase *c = r->c;
  const GenOp *o = &c->ops[i];
  const GenRegion *g = &c->regions[o->region];
  AfBuf *b = r->b;
  ind(r, depth);
  af_buf_printf(b, "%%r%d", o->region);
  for (int v = 0; v < g->nyields; v++)
    af_buf_printf(b, ", %%r%d_%d", o->region, v);
  af_buf_puts(b, " = async.execute");
  if (g->ninputs) {
    af_buf_puts(b, " (");
    for (int k = 0; k < g->ninputs; k++)
      af_buf_printf(b, "%s%%r%d_%d as %%t%d : !async.value<!gpu.async.token>", k ? ", " : "",
                    g->inputs[k].region, g->inputs[k].vidx, g->inputs[k].tok);
    af_buf_puts(b, ")");
  }
  if (g->nyields) {
    af_buf_puts(b, " -> (");
    for (int v = 0; v < g->nyields; v++)
      af_buf_printf(b, "%s!async.value<!gpu.async.token>", v ? ", " : "");
    af_buf_puts(b, ")");
  }
  af_buf_puts(b, " {\n");
  gen__render_body(r, g->first, g->last, o->region, 0, depth + 1);
  ind(r, depth + 1);
  af_buf_puts(b, "async.yield");
  for (int v = 0; v < g->nyields; v++)
    af_buf_printf(b, "%s%%t%d", v ? ", " : " ", tok_value(c, g->yields[v]));
  if (g->nyields) {
    af_buf_puts(b, " : ");
    for (int v = 0; v < g->nyields; v++)
      af_buf_printf(b, "%s!gpu.async.token", v ? ", " : "");
  }
  af_buf_puts(b, "\n");
  ind(r, depth);
  af_buf_puts(b, "}\n");
  return 1;
}

static int render_await(R *r, int i, int depth) {
  const GenOp *o = &r->c->ops[i];
  ind(r, depth);
  if (o->vidx >= 0)
    af_buf_printf(r->b, "%%t%d = async.await %%r%d_%d : !async.value<!gpu.async.token>\n", o->tok,
                  o->region, o->vidx);
  else
    af_buf_printf(r->b, "async.await %%r%d : !async.token\n", o->region);
  return 0;
}

static int render_stream_create(R *r, int i, int depth) {
  ind(r, depth);
  af_buf_printf(r->b, "%%st%d = llvm.call @mgpuStreamCreate() : () -> !llvm.ptr\n",
                r->c->ops[i].stream);
  return 0;
}

static int render_stream_sync(R *r, int i, int depth) {
  ind(r, depth);
  af_buf_printf(r->b, "llvm.call @mgpuStreamSynchronize(%%st%d) : (!llvm.ptr) -> ()\n",
                r->c->ops[i].stream);
  return 0;
}

static int render_stream_destroy(R *r, int i, int depth) {
  render_stream_sync(r, i, depth);
  if (r->map) /* both calls are the op's */
    map_line(r, lines_so_far(r), i);
  ind(r, depth);
  af_buf_printf(r->b, "llvm.call @mgpuStreamDestroy(%%st%d) : (!llvm.ptr) -> ()\n",
                r->c->ops[i].stream);
  return 0;
}

static int (*const renderers[GEN_OP__COUNT])(R *r, int i, int depth) = {
#define GEN__RENDERER(id, lc, name, mlir, weight, flags) [GEN_OP_##id] = render_##lc,
    GEN_OP_MAP(GEN__RENDERER)
#undef GEN__RENDERER
};

/* Renders op i and notes the line its operation starts on (MLIR's locations name it). */
static void render_op(R *r, int i, int depth) {
  int before = r->map ? lines_so_far(r) : 0;
  int first = renderers[r->c->ops[i].kind](r, i, depth);
  if (r->map)
    map_line(r, first ? before + 1 : lines_so_far(r), i);
}

void gen__render_body(R *r, int from, int to, int ctx, int blk, int depth) {
  for (int i = from; i <= to && i < r->c->nops; i++) {
    const GenOp *o = &r->c->ops[i];
    if (o->ctx != ctx || o->blk != blk)
      continue;
    render_op(r, i, depth);
    i = gen_op_body_end(r->c, i);
  }
}
