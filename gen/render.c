/*
 * render.c: a Case as an MLIR module (gpu, func, memref, arith, scf, async dialects).
 *
 * Kernels become gpu.func in one gpu.module with an #nvvm.target; each writes the sentinel
 * over its output element `spin` times with atomic stores (so no compiler can fold the spin
 * phase away), then its result, exactly as runner/kernels.c computes it. Host buffers are
 * memref.alloc'ed and filled by asyncfuzz_host_init; observations are calls to
 * asyncfuzz_observe(id, buffer) with id = the observe op's index; regions are async.execute
 * with their values as !async.value<!gpu.async.token>. An explicit stream is made, synchronized
 * and destroyed with calls of the mgpu* ABI (llvm.call @mgpuStreamCreate...), and a launch on it
 * names it as its async object: `gpu.launch_func async [deps] <%st0 : !llvm.ptr> ...`.
 */
#include "gen.h"

#include "../runner/kernels.h"

#include <stdio.h>
#include <string.h>

#define MT "memref<?xi32>"
#define SMT "memref<?xi32, strided<[?], offset: ?>>" /* a view form's operands */

/* Buffer b's memref type. */
static const char *mty(const GenCase *c, int b) {
  static const char *const t[GEN_ELEM__COUNT] = {"memref<?xi32>", "memref<?xi16>", "memref<?xi64>",
                                                 "memref<?xf32>"};
  int e = b >= 0 && b < c->nbufs ? c->bufs[b].elem : 0;
  return t[e < GEN_ELEM__COUNT ? e : 0];
}

/* The host hook's name suffix for buffer b's type ("" for i32). */
static const char *hook_sfx(const GenCase *c, int b) {
  int e = c->bufs[b].elem;
  return e == GEN_ELEM_I32 ? "" : e == GEN_ELEM_I16 ? "_i16" : e == GEN_ELEM_I64 ? "_i64" : "_f32";
}

/* Kernel k as a gpu.func; a view form (k >= KERNEL__COUNT) takes strided operands. */
static void kernel_func(AfBuf *b, int k) {
  const KernelInfo *ki = kernel_info(k);
  const char *t = k >= KERNEL__COUNT ? SMT : MT;
  af_buf_printf(b, "    gpu.func @%s(%%dst: %s", ki->name, t);
  if (ki->nbufs > 1)
    af_buf_printf(b, ", %%a: %s", t);
  if (ki->nbufs > 2)
    af_buf_printf(b, ", %%b: %s", t);
  af_buf_printf(b,
                ", %%v: i32, %%spin: i32) kernel {\n"
                "      %%c0 = arith.constant 0 : index\n"
                "      %%tid = gpu.thread_id x\n"
                "      %%bid = gpu.block_id x\n"
                "      %%bdim = gpu.block_dim x\n"
                "      %%base = arith.muli %%bid, %%bdim : index\n"
                "      %%i = arith.addi %%base, %%tid : index\n"
                "      %%n = memref.dim %%dst, %%c0 : %s\n"
                "      %%inb = arith.cmpi ult, %%i, %%n : index\n"
                "      scf.if %%inb {\n",
                t);
  af_buf_printf(b,
                "        %%sentinel = arith.constant %d : i32\n"
                "        %%z = arith.constant 0 : i32\n"
                "        %%one = arith.constant 1 : i32\n"
                "        scf.for %%s = %%z to %%spin step %%one : i32 {\n"
                "          %%old = memref.atomic_rmw assign %%sentinel, %%dst[%%i] : (i32, %s) -> "
                "i32\n"
                "        }\n",
                KERNEL_SENTINEL, t);
  switch (KERNEL_BASE(k)) {
  case KERNEL_FILL:
    af_buf_puts(b, "        %c7 = arith.constant 7 : i32\n"
                   "        %ii = arith.index_cast %i : index to i32\n"
                   "        %m = arith.muli %v, %c7 : i32\n"
                   "        %r = arith.addi %m, %ii : i32\n");
    break;
  case KERNEL_TRANSFORM:
    af_buf_printf(b,
                  "        %%c3 = arith.constant 3 : i32\n"
                  "        %%x = memref.load %%a[%%i] : %s\n"
                  "        %%m = arith.muli %%x, %%c3 : i32\n"
                  "        %%r = arith.addi %%m, %%v : i32\n",
                  t);
    break;
  case KERNEL_COMBINE:
    af_buf_printf(b,
                  "        %%c5 = arith.constant 5 : i32\n"
                  "        %%x = memref.load %%a[%%i] : %s\n"
                  "        %%y = memref.load %%b[%%i] : %s\n"
                  "        %%m = arith.muli %%y, %%c5 : i32\n"
                  "        %%s1 = arith.addi %%x, %%m : i32\n"
                  "        %%r = arith.addi %%s1, %%v : i32\n",
                  t, t);
    break;
  }
  af_buf_printf(b,
                "        %%last = memref.atomic_rmw assign %%r, %%dst[%%i] : (i32, %s) -> i32\n"
                "      }\n"
                "      gpu.return\n"
                "    }\n",
                t);
}

typedef struct R {
  const GenCase *c;
  const char *fname; /* the case's host function */
  AfBuf *b;
  int k;           /* fresh SSA counter */
  GenLineMap *map; /* NULL: none wanted */
  size_t scanned;  /* bytes of b counted into line */
  int line;        /* lines completed in b */
} R;

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

static int i32const(R *r, int depth, int32_t v) {
  int k = r->k++;
  ind(r, depth);
  af_buf_printf(r->b, "%%k%d = arith.constant %d : i32\n", k, v);
  return k;
}

static int render_body(R *r, int from, int to, int ctx, int blk, int depth);

static void render_op_text(R *r, int i, int depth);

/* Renders op i and notes the line its operation starts on: the last line it writes (after the
 * constants it needs), or for an execute op its first. */
static void render_op(R *r, int i, int depth) {
  int before = r->map ? lines_so_far(r) : 0;
  render_op_text(r, i, depth);
  if (r->map)
    map_line(r,
             r->c->ops[i].kind == GEN_OP_EXECUTE ||
                     (r->c->ops[i].kind >= GEN_OP_IF && r->c->ops[i].kind <= GEN_OP_BRANCH)
                 ? before + 1
                 : lines_so_far(r),
             i);
}

/* The buffers block k's body uses, as a bitmap over c's buffers; how many. */
static int block_bufs(const GenCase *c, int k, uint8_t *used) {
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

/* A call op: the call of its callee (render_callees writes the callee). */
static void render_call(R *r, int i, int depth) {
  const GenCase *c = r->c;
  const GenOp *o = &c->ops[i];
  const GenBlock *k = &c->blocks[o->block];
  uint8_t *used = af_calloc((size_t)c->nbufs + 1, 1);
  if (used == NULL) {
    r->b->oom = 1;
    return;
  }
  block_bufs(c, o->block, used);
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
      af_buf_printf(r->b, "%s%s", n++ ? ", " : "", mty(c, b));
  af_buf_printf(r->b, ") -> (%s)\n", o->tok >= 0 ? "!gpu.async.token" : "");
  af_free(used);
}

/* The live body of block k, then its yield with `term` ("scf.yield", "cf.br ^X" or "return"). */
static void live_body(R *r, int k, int depth, const char *term, int branch) {
  const GenCase *c = r->c;
  const GenBlock *g = &c->blocks[k];
  const GenOp *o = &c->ops[g->op];
  render_body(r, g->first, g->last, o->ctx, k, depth);
  ind(r, depth);
  if (g->yield < 0) {
    af_buf_printf(r->b, "%s\n", term);
    return;
  }
  af_buf_printf(r->b, "%s%s%%t%d : !gpu.async.token%s\n", term, branch ? "(" : " ",
                tok_value(c, g->yield), branch ? ")" : "");
}

/* An if, for or branch op, with its body in place (a call: render_call). */
static void render_block(R *r, int i, int depth) {
  const GenCase *c = r->c;
  const GenOp *o = &c->ops[i];
  const GenBlock *g = &c->blocks[o->block];
  AfBuf *b = r->b;
  int k = o->block;
  const char *cond = g->taken ? "%af_true" : "%af_false";
  const char *res = o->tok >= 0 ? " -> (!gpu.async.token)" : "";
  switch (o->kind) {
  case GEN_OP_CALL:
    render_call(r, i, depth);
    break;
  case GEN_OP_IF: /* the live body where the condition sends the host */
    ind(r, depth);
    if (o->tok >= 0)
      af_buf_printf(b, "%%t%d = ", o->tok);
    af_buf_printf(b, "scf.if %s%s {\n", cond, res);
    if (!g->taken && o->tok >= 0) {
      ind(r, depth + 1);
      af_buf_printf(b, "%%af_dead%d = gpu.wait async\n", k);
      ind(r, depth + 1);
      af_buf_printf(b, "scf.yield %%af_dead%d : !gpu.async.token\n", k);
    }
    if (!g->taken) {
      ind(r, depth);
      af_buf_puts(b, "} else {\n");
    }
    live_body(r, k, depth + 1, "scf.yield", 0);
    if (g->taken && o->tok >= 0) {
      ind(r, depth);
      af_buf_puts(b, "} else {\n");
      ind(r, depth + 1);
      af_buf_printf(b, "%%af_dead%d = gpu.wait async\n", k);
      ind(r, depth + 1);
      af_buf_printf(b, "scf.yield %%af_dead%d : !gpu.async.token\n", k);
    }
    ind(r, depth);
    af_buf_puts(b, "}\n");
    break;
  case GEN_OP_FOR:
    ind(r, depth);
    af_buf_printf(b,
                  "%%t%d = scf.for %%af_iv%d = %%af_c0 to %%af_trips%d step %%c1 iter_args(%%t%d "
                  "= %%t%d) -> (!gpu.async.token) {\n",
                  o->tok, k, k, g->inputs[0].tok, tok_value(c, g->inputs[0].outer));
    live_body(r, k, depth + 1, "scf.yield", 0);
    ind(r, depth);
    af_buf_puts(b, "}\n");
    break;
  case GEN_OP_BRANCH: {
    /* cf.cond_br to ^t and ^f (in that order in the text), both branching to ^m, whose argument
     * is the op's token; the dead block passes the first input's outer token, or a fresh one */
    char live[32], dead[32], merge[48];
    snprintf(live, sizeof live, "^af_bb%d_%s", k, g->taken ? "t" : "f");
    snprintf(dead, sizeof dead, "^af_bb%d_%s", k, g->taken ? "f" : "t");
    snprintf(merge, sizeof merge, "cf.br ^af_bb%d_m", k);
    ind(r, depth);
    af_buf_printf(b, "cf.cond_br %s, ^af_bb%d_t", cond, k);
    for (int pass = 0; pass < 2; pass++) {
      int is_live = (pass == 0) == (g->taken != 0);
      if (pass)
        af_buf_printf(b, ", ^af_bb%d_f", k);
      if (is_live && g->ninputs + g->nbufargs) {
        af_buf_puts(b, "(");
        for (int q = 0; q < g->ninputs; q++)
          af_buf_printf(b, "%s%%t%d", q ? ", " : "", tok_value(c, g->inputs[q].outer));
        for (int q = 0; q < g->nbufargs; q++)
          af_buf_printf(b, "%s%%b%d", q + g->ninputs ? ", " : "", g->bufargs[q]);
        af_buf_puts(b, " : ");
        for (int q = 0; q < g->ninputs; q++)
          af_buf_printf(b, "%s!gpu.async.token", q ? ", " : "");
        for (int q = 0; q < g->nbufargs; q++)
          af_buf_printf(b, "%s%s", q + g->ninputs ? ", " : "", mty(c, g->bufargs[q]));
        af_buf_puts(b, ")");
      }
    }
    af_buf_puts(b, "\n");
    for (int pass = 0; pass < 2; pass++) {
      int is_live = (pass == 0) == (g->taken != 0);
      ind(r, depth - 1);
      af_buf_printf(b, "%s", is_live ? live : dead);
      if (is_live && g->ninputs + g->nbufargs) {
        af_buf_puts(b, "(");
        for (int q = 0; q < g->ninputs; q++)
          af_buf_printf(b, "%s%%t%d: !gpu.async.token", q ? ", " : "", g->inputs[q].tok);
        for (int q = 0; q < g->nbufargs; q++)
          af_buf_printf(b, "%s%%af_b%d_b%d: %s", q + g->ninputs ? ", " : "", k, g->bufargs[q],
                        mty(c, g->bufargs[q]));
        af_buf_puts(b, ")");
      }
      af_buf_puts(b, ":\n");
      if (is_live) {
        live_body(r, k, depth, merge, 1);
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
    break;
  }
  default:
    break;
  }
}

/* Operand k (0: dst, 1: src; a launch's args[k]) of memcpy, memset or launch o: its buffer, or a
 * memref.subview of it written here (offset, size and stride as index constants). Its SSA name
 * and type go to name and type. */
static void view_operand(R *r, const GenOp *o, int k, int depth, char *name, size_t n, char *type,
                         size_t tn) {
  const GenCase *c = r->c;
  int b = o->kind == GEN_OP_LAUNCH ? o->args[k] : k ? o->src : o->buf;
  buf_name(r, o, b, name, n);
  snprintf(type, tn, "%s", mty(c, b));
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
static void render_launch(R *r, const GenOp *o, int depth) {
  const GenCase *c = r->c;
  AfBuf *b = r->b;
  int view = gen_op_has_view(o), k = i32const(r, depth, o->value), nth = -1;
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
}

/* A memset: its value as the element type (an i16 truncated, an f32 exact), then the op. */
static void render_memset(R *r, const GenOp *o, int depth) {
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
}

/* An alloc; a static allocation is cast to the dynamic shape every other op uses. */
static void render_alloc(R *r, int i, int depth) {
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
    af_buf_printf(b, " (%%n%d) : %s\n", gb->n, mty(c, o->buf));
    return;
  }
  af_buf_printf(b, " () : memref<%dx%s>\n", gb->n, gen_elem_name(gb->elem));
  if (r->map) /* the allocation's calls are on this line */
    map_line(r, lines_so_far(r), i);
  ind(r, depth);
  af_buf_printf(b, "%%b%d = memref.cast %%b%d_s : memref<%dx%s> to %s\n", o->buf, o->buf, gb->n,
                gen_elem_name(gb->elem), mty(c, o->buf));
}

static void render_op_text(R *r, int i, int depth) {
  const GenCase *c = r->c;
  const GenOp *o = &c->ops[i];
  AfBuf *b = r->b;
  switch (o->kind) {
  case GEN_OP_WAIT_ASYNC:
    ind(r, depth);
    af_buf_printf(b, "%%t%d = gpu.wait async", o->tok);
    deps(r, o);
    af_buf_puts(b, "\n");
    break;
  case GEN_OP_ALLOC:
    render_alloc(r, i, depth);
    break;
  case GEN_OP_DEALLOC:
    ind(r, depth);
    if (o->async) {
      af_buf_printf(b, "%%t%d = gpu.dealloc async", o->tok);
      deps(r, o);
    } else {
      af_buf_puts(b, "gpu.dealloc");
    }
    af_buf_printf(b, " %%b%d : %s\n", o->buf, mty(c, o->buf));
    break;
  case GEN_OP_MEMCPY: {
    char dn[48], dt[96], sn[48], st[96];
    view_operand(r, o, 0, depth, dn, sizeof dn, dt, sizeof dt);
    view_operand(r, o, 1, depth, sn, sizeof sn, st, sizeof st);
    ind(r, depth);
    af_buf_printf(b, "%%t%d = gpu.memcpy async", o->tok);
    deps(r, o);
    af_buf_printf(b, " %s, %s : %s, %s\n", dn, sn, dt, st);
    break;
  }
  case GEN_OP_MEMSET:
    render_memset(r, o, depth);
    break;
  case GEN_OP_LAUNCH:
    render_launch(r, o, depth);
    break;
  case GEN_OP_HOST_WAIT:
    ind(r, depth);
    af_buf_puts(b, "gpu.wait");
    deps(r, o);
    af_buf_puts(b, "\n");
    break;
  case GEN_OP_OBSERVE: {
    int k = i32const(r, depth, i);
    ind(r, depth);
    af_buf_printf(b, "func.call @asyncfuzz_observe%s(%%k%d, %%b%d) : (i32, %s) -> ()\n",
                  hook_sfx(c, o->buf), k, o->buf, mty(c, o->buf));
    break;
  }
  case GEN_OP_EXECUTE: {
    const GenRegion *g = &c->regions[o->region];
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
    render_body(r, g->first, g->last, o->region, 0, depth + 1);
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
    break;
  }
  case GEN_OP_STREAM_CREATE:
    ind(r, depth);
    af_buf_printf(b, "%%st%d = llvm.call @mgpuStreamCreate() : () -> !llvm.ptr\n", o->stream);
    break;
  case GEN_OP_STREAM_SYNC:
  case GEN_OP_STREAM_DESTROY:
    ind(r, depth);
    af_buf_printf(b, "llvm.call @mgpuStreamSynchronize(%%st%d) : (!llvm.ptr) -> ()\n", o->stream);
    if (o->kind == GEN_OP_STREAM_SYNC)
      break;
    if (r->map) /* both calls are the op's */
      map_line(r, lines_so_far(r), i);
    ind(r, depth);
    af_buf_printf(b, "llvm.call @mgpuStreamDestroy(%%st%d) : (!llvm.ptr) -> ()\n", o->stream);
    break;
  case GEN_OP_CALL:
  case GEN_OP_IF:
  case GEN_OP_FOR:
  case GEN_OP_BRANCH:
    render_block(r, i, depth);
    break;
  case GEN_OP_AWAIT:
    ind(r, depth);
    if (o->vidx >= 0)
      af_buf_printf(b, "%%t%d = async.await %%r%d_%d : !async.value<!gpu.async.token>\n", o->tok,
                    o->region, o->vidx);
    else
      af_buf_printf(b, "async.await %%r%d : !async.token\n", o->region);
    break;
  }
}

static int render_body(R *r, int from, int to, int ctx, int blk, int depth) {
  int i = from;
  while (i <= to && i < r->c->nops) {
    const GenOp *o = &r->c->ops[i];
    if (o->ctx != ctx || o->blk != blk) {
      i++;
      continue;
    }
    render_op(r, i, depth);
    if (o->kind == GEN_OP_EXECUTE) {
      const GenRegion *g = &r->c->regions[o->region];
      if (g->last > i)
        i = g->last;
    }
    if (o->kind >= GEN_OP_CALL && r->c->blocks[o->block].last > i)
      i = r->c->blocks[o->block].last;
    i++;
  }
  return 0;
}

/* The constants every host function of the case starts with. */
static void render_consts(AfBuf *b, const GenCase *c) {
  af_buf_puts(b, "    %c1 = arith.constant 1 : index\n");
  af_buf_printf(b, "    %%spin = arith.constant %d : i32\n", c->spin);
  /* one index constant per distinct buffer size */
  for (int i = 0; i < c->nbufs; i++) {
    int seen = 0;
    for (int j = 0; j < i && !seen; j++)
      seen = c->bufs[j].n == c->bufs[i].n;
    if (!seen)
      af_buf_printf(b, "    %%n%d = arith.constant %d : index\n", c->bufs[i].n, c->bufs[i].n);
  }
}

/* The values the host computes at run time for if, for and branch blocks, from the first
 * element of the first host buffer (what no pass can fold): %af_true, %af_false, and for each
 * for block k its trip count %af_trips<k>. */
static void render_conditions(R *r) {
  const GenCase *c = r->c;
  int h = -1, any = 0;
  for (int b = 0; b < c->nbufs && h < 0; b++)
    if (c->bufs[b].kind == GEN_BUF_HOST && c->bufs[b].elem == GEN_ELEM_I32)
      h = b;
  for (int k = 1; k < c->nblocks; k++)
    any |= c->ops[c->blocks[k].op].kind != GEN_OP_CALL;
  if (!any || h < 0)
    return;
  int32_t v0 = kernel_host_init_value(c->bufs[h].init, 0);
  af_buf_printf(r->b,
                "    %%af_c0 = arith.constant 0 : index\n"
                "    %%af_hv = memref.load %%b%d[%%af_c0] : " MT "\n"
                "    %%af_h0 = arith.constant %d : i32\n"
                "    %%af_true = arith.cmpi eq, %%af_hv, %%af_h0 : i32\n"
                "    %%af_false = arith.cmpi ne, %%af_hv, %%af_h0 : i32\n",
                h, v0);
  for (int k = 1; k < c->nblocks; k++) {
    if (c->ops[c->blocks[k].op].kind != GEN_OP_FOR)
      continue;
    af_buf_printf(r->b,
                  "    %%af_nb%d = arith.constant %d : i32\n"
                  "    %%af_d%d = arith.subi %%af_hv, %%af_nb%d : i32\n"
                  "    %%af_trips%d = arith.index_cast %%af_d%d : i32 to index\n",
                  k, (int32_t)((uint32_t)v0 - (uint32_t)c->blocks[k].trips), k, k, k, k);
  }
}

/* The callee of every call block, after the case's function. */
static void render_callees(R *r) {
  const GenCase *c = r->c;
  uint8_t *used = af_calloc((size_t)c->nbufs + 1, 1);
  if (used == NULL) {
    r->b->oom = 1;
    return;
  }
  for (int k = 1; k < c->nblocks; k++) {
    const GenBlock *g = &c->blocks[k];
    if (c->ops[g->op].kind != GEN_OP_CALL)
      continue;
    block_bufs(c, k, used);
    af_buf_printf(r->b, "  func.func private @%s_fn%d(", r->fname, k);
    int n = 0;
    for (int q = 0; q < g->ninputs; q++)
      af_buf_printf(r->b, "%s%%t%d: !gpu.async.token", n++ ? ", " : "", g->inputs[q].tok);
    for (int b = 0; b < c->nbufs; b++)
      if (used[b])
        af_buf_printf(r->b, "%s%%b%d: %s", n++ ? ", " : "", b, mty(c, b));
    af_buf_printf(r->b, ")%s {\n", g->yield >= 0 ? " -> !gpu.async.token" : "");
    render_consts(r->b, c);
    live_body(r, k, 2, "return", 0);
    af_buf_puts(r->b, "  }\n");
  }
  af_free(used);
}

/* The case's host code as `func.func @name()`. */
static void render_func(AfBuf *b, const GenCase *c, const char *name, GenLineMap *map) {
  R r = {c, name, b, 0, map, 0, 0};
  af_buf_printf(b, "  func.func @%s() {\n", name);
  render_consts(b, c);
  for (int i = 0; i < c->nbufs; i++) {
    if (c->bufs[i].kind != GEN_BUF_HOST)
      continue;
    af_buf_printf(b, "    %%b%d = memref.alloc(%%n%d) : %s\n", i, c->bufs[i].n, mty(c, i));
    int id = i32const(&r, 2, i), init = i32const(&r, 2, c->bufs[i].init);
    af_buf_printf(b,
                  "    func.call @asyncfuzz_host_init%s(%%k%d, %%k%d, %%b%d) : (i32, i32, %s) -> "
                  "()\n",
                  hook_sfx(c, i), id, init, i, mty(c, i));
  }
  render_conditions(&r);
  render_body(&r, 0, c->nops - 1, 0, 0, 2);
  for (int i = 0; i < c->nbufs; i++)
    if (c->bufs[i].kind == GEN_BUF_HOST)
      af_buf_printf(b, "    memref.dealloc %%b%d : %s\n", i, mty(c, i));
  af_buf_puts(b, "    return\n  }\n");
  render_callees(&r);
}

/* The kernels case c launches (bit k: kernel id k, a view form's included). */
static unsigned launched(const GenCase *c) {
  unsigned mask = 0;
  for (int j = 0; j < c->nops; j++)
    if (c->ops[j].kind == GEN_OP_LAUNCH)
      mask |= 1u << (c->ops[j].kernel + (gen_op_has_view(&c->ops[j]) ? KERNEL__COUNT : 0));
  return mask;
}

/* mask: the kernels to define (bit k: kernel k); streams: declare the mgpu* stream calls;
 * types: the element types of host buffers (bit e), whose hooks are declared */
static void render_head(AfBuf *b, unsigned mask, int streams, unsigned types) {
  af_buf_puts(b, "module attributes {gpu.container_module} {\n"
                 "  gpu.module @asyncfuzz_kernels [#nvvm.target] {\n");
  for (int k = 0; k < KERNEL__IDS; k++)
    if (mask & (1u << k))
      kernel_func(b, k);
  af_buf_puts(b, "  }\n"
                 "  func.func private @asyncfuzz_observe(i32, " MT ")\n"
                 "  func.func private @asyncfuzz_host_init(i32, i32, " MT ")\n");
  static const char *const sfx[GEN_ELEM__COUNT] = {"", "_i16", "_i64", "_f32"};
  static const char *const ty[GEN_ELEM__COUNT] = {"i32", "i16", "i64", "f32"};
  for (int e = 1; e < GEN_ELEM__COUNT; e++)
    if (types & (1u << e))
      af_buf_printf(b,
                    "  func.func private @asyncfuzz_observe%s(i32, memref<?x%s>)\n"
                    "  func.func private @asyncfuzz_host_init%s(i32, i32, memref<?x%s>)\n",
                    sfx[e], ty[e], sfx[e], ty[e]);
  if (streams)
    af_buf_puts(b, "  llvm.func @mgpuStreamCreate() -> !llvm.ptr\n"
                   "  llvm.func @mgpuStreamSynchronize(!llvm.ptr)\n"
                   "  llvm.func @mgpuStreamDestroy(!llvm.ptr)\n");
}

/* The element types of the buffers c's host hooks take (host buffers, observed buffers), as a
 * bitmask. */
static unsigned host_types(const GenCase *c) {
  unsigned m = 0;
  for (int b = 0; b < c->nbufs; b++)
    if (c->bufs[b].kind == GEN_BUF_HOST)
      m |= 1u << c->bufs[b].elem;
  for (int i = 0; i < c->nops; i++)
    if (c->ops[i].kind == GEN_OP_OBSERVE && c->ops[i].buf >= 0 && c->ops[i].buf < c->nbufs)
      m |= 1u << c->bufs[c->ops[i].buf].elem;
  return m;
}

char *gen_render_mlir(const GenCase *c) {
  AfBuf b;
  af_buf_init(&b);
  af_buf_printf(&b, "// asyncfuzz case: seed %llu, %d ops, spin %d\n", (unsigned long long)c->seed,
                c->nops, c->spin);
  /* every base kernel (a reproducer can launch any), the view forms it launches */
  render_head(&b, launched(c) | ((1u << KERNEL__COUNT) - 1), c->nstreams > 0, host_types(c));
  render_func(&b, c, "main", NULL);
  af_buf_puts(&b, "}\n");
  return af_buf_take(&b);
}

char *gen_render_mlir_batch(const GenCase *const *cs, const int *ids, int n, int nsched) {
  return gen_render_mlir_batch_map(cs, ids, n, nsched, NULL);
}

char *gen_render_mlir_batch_map(const GenCase *const *cs, const int *ids, int n, int nsched,
                                GenLineMap *map) {
  if (map)
    memset(map, 0, sizeof *map);
  AfBuf b;
  af_buf_init(&b);
  af_buf_printf(&b, "// asyncfuzz batch: %d case(s)\n", n);
  /* only the kernels the cases launch: each compiles in every batch's kernel module */
  unsigned mask = 0;
  int streams = 0;
  unsigned types = 0;
  for (int i = 0; i < n; i++) {
    streams |= cs[i]->nstreams > 0;
    types |= host_types(cs[i]);
    for (int j = 0; j < cs[i]->nops; j++)
      mask |= launched(cs[i]);
  }
  render_head(&b, mask ? mask : 1u, streams, types);
  af_buf_puts(&b, "  func.func private @asyncfuzz_case_begin(i32, i32)\n"
                  "  func.func private @asyncfuzz_case_end(i32, i32)\n");
  char name[32];
  for (int i = 0; i < n; i++) {
    af_buf_printf(&b, "  // case %d: seed %llu, %d ops, spin %d\n", ids[i],
                  (unsigned long long)cs[i]->seed, cs[i]->nops, cs[i]->spin);
    snprintf(name, sizeof name, "af_case_%d", ids[i]);
    render_func(&b, cs[i], name, map);
  }
  af_buf_puts(&b, "  func.func @main() {\n");
  for (int j = 0; j < nsched; j++)
    af_buf_printf(&b, "    %%s%d = arith.constant %d : i32\n", j, j);
  for (int i = 0; i < n; i++) {
    af_buf_printf(&b, "    %%id%d = arith.constant %d : i32\n", i, ids[i]);
    for (int j = 0; j < nsched; j++)
      af_buf_printf(&b,
                    "    func.call @asyncfuzz_case_begin(%%id%d, %%s%d) : (i32, i32) -> ()\n"
                    "    func.call @af_case_%d() : () -> ()\n"
                    "    func.call @asyncfuzz_case_end(%%id%d, %%s%d) : (i32, i32) -> ()\n",
                    i, j, ids[i], i, j);
  }
  af_buf_puts(&b, "    return\n  }\n}\n");
  if (map && map->oom)
    b.oom = 1;
  return af_buf_take(&b);
}
