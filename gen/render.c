/*
 * render.c: a Case as an MLIR module (gpu, func, memref, arith, scf, async dialects).
 *
 * Kernels become gpu.func in one gpu.module with an #nvvm.target; each writes the sentinel
 * over its output element `spin` times with atomic stores (so no compiler can fold the spin
 * phase away), then its result, exactly as kernels/kernels.c computes it. Host buffers are
 * memref.alloc'ed and filled by asyncfuzz_host_init; observations are calls to
 * asyncfuzz_observe(id, buffer) with id = the observe op's index; regions are async.execute
 * with their values as !async.value<!gpu.async.token>. An explicit stream is made, synchronized
 * and destroyed with calls of the mgpu* ABI (llvm.call @mgpuStreamCreate...), and a launch on it
 * names it as its async object: `gpu.launch_func async [deps] <%st0 : !llvm.ptr> ...`.
 */
#include "gen_int.h"

#include "../kernels/kernels.h"

#include <stdio.h>
#include <string.h>

/* Kernel k as a gpu.func; a view form (KERNEL_VIEW) takes strided operands. */
static void kernel_func(AfBuf *b, int k) {
  const KernelInfo *ki = kernel_info(k);
  char t[96];
  gen__kernel_mty(k, t, sizeof t);
  af_buf_printf(b, "    gpu.func @%s(%%dst: %s", ki->name, t);
  if (ki->nbufs > 1)
    af_buf_printf(b, ", %%a: %s", t);
  if (ki->nbufs > 2)
    af_buf_printf(b, ", %%b: %s", t);
  af_buf_puts(b, ", %v: i32, %spin: i32) kernel {\n");
  gen__kernel_body(b, k, "%dst", "%a", "%b", "%v", "      ");
  af_buf_puts(b, "      gpu.return\n"
                 "    }\n");
}

/* Renders op i and notes the line its operation starts on (MLIR's locations name it). */
static void render_op(R *r, int i, int depth) {
  int before = r->map ? gen__lines_so_far(r) : 0;
  int first = gen__classes[r->c->ops[i].kind]->render(r, i, depth);
  if (r->map)
    gen__map_line(r, first ? before + 1 : gen__lines_so_far(r), i);
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
    any |= (gen_op_flags(c->ops[c->blocks[k].op].kind) & GEN_K_COND) != 0;
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
    gen__block_bufs(c, k, used);
    af_buf_printf(r->b, "  func.func private @%s_fn%d(", r->fname, k);
    int n = 0;
    for (int q = 0; q < g->ninputs; q++)
      af_buf_printf(r->b, "%s%%t%d: !gpu.async.token", n++ ? ", " : "", g->inputs[q].tok);
    for (int b = 0; b < c->nbufs; b++)
      if (used[b])
        af_buf_printf(r->b, "%s%%b%d: %s", n++ ? ", " : "", b, gen__mty(c, b));
    af_buf_printf(r->b, ")%s {\n", g->yield >= 0 ? " -> !gpu.async.token" : "");
    render_consts(r->b, c);
    gen__live_body(r, k, 2, "return", 0);
    af_buf_puts(r->b, "  }\n");
  }
  af_free(used);
}

/* The case's host code as `func.func @name()`. */
static void render_func(AfBuf *b, const GenCase *c, const char *name, GenLineMap *map) {
  R r = {c, name, b, 0, map, 0, 0, gen__render_body};
  af_buf_printf(b, "  func.func @%s() {\n", name);
  render_consts(b, c);
  for (int i = 0; i < c->nbufs; i++) {
    if (c->bufs[i].kind != GEN_BUF_HOST)
      continue;
    af_buf_printf(b, "    %%b%d = memref.alloc(%%n%d) : %s\n", i, c->bufs[i].n, gen__mty(c, i));
    int id = gen__i32const(&r, 2, i), init = gen__i32const(&r, 2, c->bufs[i].init);
    af_buf_printf(b,
                  "    func.call @asyncfuzz_host_init%s(%%k%d, %%k%d, %%b%d) : (i32, i32, %s) -> "
                  "()\n",
                  gen__hook_sfx(c, i), id, init, i, gen__mty(c, i));
    if (c->bufs[i].reg) /* page-locked once written (gpu.host_register takes an unranked memref) */
      af_buf_printf(b,
                    "    %%u%d = memref.cast %%b%d : %s to memref<*x%s>\n"
                    "    gpu.host_register %%u%d : memref<*x%s>\n",
                    i, i, gen__mty(c, i), gen_elem_name(c->bufs[i].elem), i,
                    gen_elem_name(c->bufs[i].elem));
  }
  render_conditions(&r);
  gen__render_body(&r, 0, c->nops - 1, 0, 0, 2);
  for (int i = 0; i < c->nbufs; i++)
    if (c->bufs[i].reg)
      af_buf_printf(b, "    gpu.host_unregister %%u%d : memref<*x%s>\n", i,
                    gen_elem_name(c->bufs[i].elem));
  for (int i = 0; i < c->nbufs; i++)
    if (c->bufs[i].kind == GEN_BUF_HOST)
      af_buf_printf(b, "    memref.dealloc %%b%d : %s\n", i, gen__mty(c, i));
  af_buf_puts(b, "    return\n  }\n");
  render_callees(&r);
}

/* Adds the kernels case c launches to set (set[k]: kernel id k, a view form's, a type's and a
 * staged one's included). */
static void launched(const GenCase *c, unsigned char *set) {
  for (int j = 0; j < c->nops; j++)
    if (gen_kind_launches(c->ops[j].kind))
      set[gen_op_kernel_id(c, &c->ops[j])] = 1;
}

/* set: the kernels to define (set[k]: kernel k); streams: declare the mgpu* stream calls;
 * types: the element types of host buffers (bit e), whose hooks are declared */
static void render_head(AfBuf *b, const unsigned char *set, int streams, unsigned types) {
  af_buf_puts(b, "module attributes {gpu.container_module} {\n"
                 "  gpu.module @asyncfuzz_kernels [#nvvm.target] {\n");
  for (int k = 0; k < KERNEL__IDS; k++)
    if (set[k])
      kernel_func(b, k);
  af_buf_puts(b, "  }\n"
                 "  func.func private @asyncfuzz_observe(i32, " MT ")\n"
                 "  func.func private @asyncfuzz_host_init(i32, i32, " MT ")\n");
  for (int e = 1; e < GEN_ELEM__COUNT; e++)
    if (types & (1u << e))
      af_buf_printf(b,
                    "  func.func private @asyncfuzz_observe%s(i32, memref<?x%s>)\n"
                    "  func.func private @asyncfuzz_host_init%s(i32, i32, memref<?x%s>)\n",
                    gen__elem_sfx(e), gen_elem_name(e), gen__elem_sfx(e), gen_elem_name(e));
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
  /* every base kernel's i32 form (a reproducer can launch any), the other forms it launches */
  unsigned char set[KERNEL__IDS] = {0};
  memset(set, 1, KERNEL__COUNT);
  launched(c, set);
  render_head(&b, set, c->nstreams > 0, host_types(c));
  render_func(&b, c, "main", NULL);
  af_buf_puts(&b, "}\n");
  return af_buf_take(&b);
}

char *gen_render_mlir_group(const GenCase *const *cs, const int *ids, int n, int nsched) {
  return gen_render_mlir_group_map(cs, ids, n, nsched, NULL);
}

char *gen_render_mlir_group_map(const GenCase *const *cs, const int *ids, int n, int nsched,
                                GenLineMap *map) {
  if (map)
    memset(map, 0, sizeof *map);
  AfBuf b;
  af_buf_init(&b);
  af_buf_printf(&b, "// asyncfuzz batch: %d case(s)\n", n);
  /* only the kernels the cases launch: each compiles in every batch's kernel module */
  unsigned char set[KERNEL__IDS] = {0};
  int streams = 0, any = 0;
  unsigned types = 0;
  for (int i = 0; i < n; i++) {
    streams |= cs[i]->nstreams > 0;
    types |= host_types(cs[i]);
    launched(cs[i], set);
  }
  for (int k = 0; k < KERNEL__IDS; k++)
    any |= set[k];
  set[0] |= !any;
  render_head(&b, set, streams, types);
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
