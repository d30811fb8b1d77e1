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

static void kernel_func(AfBuf *b, int k) {
  const KernelInfo *ki = kernel_info(k);
  af_buf_printf(b, "    gpu.func @%s(%%dst: " MT, ki->name);
  if (ki->nbufs > 1)
    af_buf_puts(b, ", %a: " MT);
  if (ki->nbufs > 2)
    af_buf_puts(b, ", %b: " MT);
  af_buf_puts(b, ", %v: i32, %spin: i32) kernel {\n"
                 "      %c0 = arith.constant 0 : index\n"
                 "      %tid = gpu.thread_id x\n"
                 "      %bid = gpu.block_id x\n"
                 "      %bdim = gpu.block_dim x\n"
                 "      %base = arith.muli %bid, %bdim : index\n"
                 "      %i = arith.addi %base, %tid : index\n"
                 "      %n = memref.dim %dst, %c0 : " MT "\n"
                 "      %inb = arith.cmpi ult, %i, %n : index\n"
                 "      scf.if %inb {\n");
  af_buf_printf(b,
                "        %%sentinel = arith.constant %d : i32\n"
                "        %%z = arith.constant 0 : i32\n"
                "        %%one = arith.constant 1 : i32\n"
                "        scf.for %%s = %%z to %%spin step %%one : i32 {\n"
                "          %%old = memref.atomic_rmw assign %%sentinel, %%dst[%%i] : (i32, " MT
                ") -> i32\n"
                "        }\n",
                KERNEL_SENTINEL);
  switch (k) {
  case KERNEL_FILL:
    af_buf_puts(b, "        %c7 = arith.constant 7 : i32\n"
                   "        %ii = arith.index_cast %i : index to i32\n"
                   "        %m = arith.muli %v, %c7 : i32\n"
                   "        %r = arith.addi %m, %ii : i32\n");
    break;
  case KERNEL_TRANSFORM:
    af_buf_puts(b, "        %c3 = arith.constant 3 : i32\n"
                   "        %x = memref.load %a[%i] : " MT "\n"
                   "        %m = arith.muli %x, %c3 : i32\n"
                   "        %r = arith.addi %m, %v : i32\n");
    break;
  case KERNEL_COMBINE:
    af_buf_puts(b, "        %c5 = arith.constant 5 : i32\n"
                   "        %x = memref.load %a[%i] : " MT "\n"
                   "        %y = memref.load %b[%i] : " MT "\n"
                   "        %m = arith.muli %y, %c5 : i32\n"
                   "        %s1 = arith.addi %x, %m : i32\n"
                   "        %r = arith.addi %s1, %v : i32\n");
    break;
  }
  af_buf_puts(b, "        %last = memref.atomic_rmw assign %r, %dst[%i] : (i32, " MT ") -> i32\n"
                 "      }\n"
                 "      gpu.return\n"
                 "    }\n");
}

typedef struct R {
  const GenCase *c;
  AfBuf *b;
  int k;           /* fresh SSA counter */
  GenLineMap *map; /* NULL: none wanted */
  size_t scanned;  /* bytes of b counted into line */
  int line;        /* lines completed in b */
} R;

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

static int render_body(R *r, int from, int to, int ctx, int depth);

static void render_op_text(R *r, int i, int depth);

/* Renders op i and notes the line its operation starts on: the last line it writes (after the
 * constants it needs), or for an execute op its first. */
static void render_op(R *r, int i, int depth) {
  int before = r->map ? lines_so_far(r) : 0;
  render_op_text(r, i, depth);
  if (r->map)
    map_line(r, r->c->ops[i].kind == GEN_OP_EXECUTE ? before + 1 : lines_so_far(r), i);
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
    ind(r, depth);
    if (o->async) {
      af_buf_printf(b, "%%b%d, %%t%d = gpu.alloc async", o->buf, o->tok);
      deps(r, o);
    } else {
      af_buf_printf(b, "%%b%d = gpu.alloc%s", o->buf,
                    o->mode == GEN_ALLOC_HOST_SHARED ? " host_shared" : "");
    }
    af_buf_printf(b, " (%%n%d) : " MT "\n", c->bufs[o->buf].n);
    break;
  case GEN_OP_DEALLOC:
    ind(r, depth);
    if (o->async) {
      af_buf_printf(b, "%%t%d = gpu.dealloc async", o->tok);
      deps(r, o);
    } else {
      af_buf_puts(b, "gpu.dealloc");
    }
    af_buf_printf(b, " %%b%d : " MT "\n", o->buf);
    break;
  case GEN_OP_MEMCPY:
    ind(r, depth);
    af_buf_printf(b, "%%t%d = gpu.memcpy async", o->tok);
    deps(r, o);
    af_buf_printf(b, " %%b%d, %%b%d : " MT ", " MT "\n", o->buf, o->src);
    break;
  case GEN_OP_MEMSET: {
    int k = i32const(r, depth, o->value);
    ind(r, depth);
    af_buf_printf(b, "%%t%d = gpu.memset async", o->tok);
    deps(r, o);
    af_buf_printf(b, " %%b%d, %%k%d : " MT ", i32\n", o->buf, k);
    break;
  }
  case GEN_OP_LAUNCH: {
    int k = i32const(r, depth, o->value);
    ind(r, depth);
    af_buf_printf(b, "%%t%d = gpu.launch_func async", o->tok);
    deps(r, o);
    if (o->stream >= 0)
      af_buf_printf(b, " <%%st%d : !llvm.ptr>", o->stream);
    af_buf_printf(b,
                  " @asyncfuzz_kernels::@%s blocks in (%%c1, %%c1, %%c1) threads in (%%n%d, %%c1, "
                  "%%c1) args(",
                  kernel_info(o->kernel)->name, c->bufs[o->args[0]].n);
    for (int a = 0; a < o->nargs; a++)
      af_buf_printf(b, "%%b%d : " MT ", ", o->args[a]);
    af_buf_printf(b, "%%k%d : i32, %%spin : i32)\n", k);
    break;
  }
  case GEN_OP_HOST_WAIT:
    ind(r, depth);
    af_buf_puts(b, "gpu.wait");
    deps(r, o);
    af_buf_puts(b, "\n");
    break;
  case GEN_OP_OBSERVE: {
    int k = i32const(r, depth, i);
    ind(r, depth);
    af_buf_printf(b, "func.call @asyncfuzz_observe(%%k%d, %%b%d) : (i32, " MT ") -> ()\n", k,
                  o->buf);
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
    render_body(r, g->first, g->last, o->region, depth + 1);
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

static int render_body(R *r, int from, int to, int ctx, int depth) {
  int i = from;
  while (i <= to && i < r->c->nops) {
    const GenOp *o = &r->c->ops[i];
    if (o->ctx != ctx) {
      i++;
      continue;
    }
    render_op(r, i, depth);
    if (o->kind == GEN_OP_EXECUTE) {
      const GenRegion *g = &r->c->regions[o->region];
      if (g->last > i)
        i = g->last;
    }
    i++;
  }
  return 0;
}

/* The case's host code as `func.func @name()`. */
static void render_func(AfBuf *b, const GenCase *c, const char *name, GenLineMap *map) {
  R r = {c, b, 0, map, 0, 0};
  af_buf_printf(b,
                "  func.func @%s() {\n"
                "    %%c1 = arith.constant 1 : index\n",
                name);
  af_buf_printf(b, "    %%spin = arith.constant %d : i32\n", c->spin);
  /* one index constant per distinct buffer size */
  for (int i = 0; i < c->nbufs; i++) {
    int seen = 0;
    for (int j = 0; j < i && !seen; j++)
      seen = c->bufs[j].n == c->bufs[i].n;
    if (!seen)
      af_buf_printf(b, "    %%n%d = arith.constant %d : index\n", c->bufs[i].n, c->bufs[i].n);
  }
  for (int i = 0; i < c->nbufs; i++) {
    if (c->bufs[i].kind != GEN_BUF_HOST)
      continue;
    af_buf_printf(b, "    %%b%d = memref.alloc(%%n%d) : " MT "\n", i, c->bufs[i].n);
    int id = i32const(&r, 2, i), init = i32const(&r, 2, c->bufs[i].init);
    af_buf_printf(
        b, "    func.call @asyncfuzz_host_init(%%k%d, %%k%d, %%b%d) : (i32, i32, " MT ") -> ()\n",
        id, init, i);
  }
  render_body(&r, 0, c->nops - 1, 0, 2);
  for (int i = 0; i < c->nbufs; i++)
    if (c->bufs[i].kind == GEN_BUF_HOST)
      af_buf_printf(b, "    memref.dealloc %%b%d : " MT "\n", i);
  af_buf_puts(b, "    return\n  }\n");
}

/* mask: the kernels to define (bit k: kernel k); streams: declare the mgpu* stream calls */
static void render_head(AfBuf *b, unsigned mask, int streams) {
  af_buf_puts(b, "module attributes {gpu.container_module} {\n"
                 "  gpu.module @asyncfuzz_kernels [#nvvm.target] {\n");
  for (int k = 0; k < KERNEL__COUNT; k++)
    if (mask & (1u << k))
      kernel_func(b, k);
  af_buf_puts(b, "  }\n"
                 "  func.func private @asyncfuzz_observe(i32, " MT ")\n"
                 "  func.func private @asyncfuzz_host_init(i32, i32, " MT ")\n");
  if (streams)
    af_buf_puts(b, "  llvm.func @mgpuStreamCreate() -> !llvm.ptr\n"
                   "  llvm.func @mgpuStreamSynchronize(!llvm.ptr)\n"
                   "  llvm.func @mgpuStreamDestroy(!llvm.ptr)\n");
}

char *gen_render_mlir(const GenCase *c) {
  AfBuf b;
  af_buf_init(&b);
  af_buf_printf(&b, "// asyncfuzz case: seed %llu, %d ops, spin %d\n", (unsigned long long)c->seed,
                c->nops, c->spin);
  render_head(&b, ~0u, c->nstreams > 0);
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
  for (int i = 0; i < n; i++) {
    streams |= cs[i]->nstreams > 0;
    for (int j = 0; j < cs[i]->nops; j++)
      if (cs[i]->ops[j].kind == GEN_OP_LAUNCH)
        mask |= 1u << cs[i]->ops[j].kernel;
  }
  render_head(&b, mask ? mask : 1u, streams);
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
