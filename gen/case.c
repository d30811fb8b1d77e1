/*
 * case.c: the Case model and its JSON form, written canonically by hand so the same case always
 * gives the same bytes (case_read.c reads it). See docs/case-format.md for the format.
 */
#include "gen.h"

#include "../runner/kernels.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void gen_case_init(GenCase *c) {
  memset(c, 0, sizeof *c);
  c->version = GEN_FORMAT_VERSION;
  c->spin = 64;
  GenRegion r0;
  memset(&r0, 0, sizeof r0);
  r0.exec_op = -1;
  r0.parent = -1;
  /* regions[0] stands for main; allocation failure is caught by the first add_region */
  if (af_grow((void **)&c->regions, &c->capregions, 1, sizeof(GenRegion)) == 0) {
    c->regions[0] = r0;
    c->nregions = 1;
  }
  /* blocks[0] stands for "no block" */
  if (af_grow((void **)&c->blocks, &c->capblocks, 1, sizeof(GenBlock)) == 0) {
    memset(&c->blocks[0], 0, sizeof(GenBlock));
    c->blocks[0].op = c->blocks[0].yield = -1;
    c->nblocks = 1;
  }
}

void gen_case_free(GenCase *c) {
  af_free(c->bufs);
  af_free(c->ops);
  af_free(c->regions);
  af_free(c->blocks);
  memset(c, 0, sizeof *c);
}

int gen_case_copy(GenCase *dst, const GenCase *src) {
  *dst = *src;
  dst->bufs = NULL;
  dst->ops = NULL;
  dst->regions = NULL;
  dst->blocks = NULL;
  dst->capbufs = dst->capops = dst->capregions = dst->capblocks = 0;
  if (af_grow((void **)&dst->bufs, &dst->capbufs, src->nbufs + 1, sizeof(GenBuf)) ||
      af_grow((void **)&dst->ops, &dst->capops, src->nops + 1, sizeof(GenOp)) ||
      af_grow((void **)&dst->regions, &dst->capregions, src->nregions + 1, sizeof(GenRegion)) ||
      af_grow((void **)&dst->blocks, &dst->capblocks, src->nblocks + 1, sizeof(GenBlock))) {
    gen_case_free(dst);
    return AF_ENOMEM;
  }
  if (src->nbufs) /* a reduced case may have no buffers (and no ops) */
    memcpy(dst->bufs, src->bufs, sizeof(GenBuf) * (size_t)src->nbufs);
  if (src->nops)
    memcpy(dst->ops, src->ops, sizeof(GenOp) * (size_t)src->nops);
  if (src->nregions)
    memcpy(dst->regions, src->regions, sizeof(GenRegion) * (size_t)src->nregions);
  if (src->nblocks)
    memcpy(dst->blocks, src->blocks, sizeof(GenBlock) * (size_t)src->nblocks);
  return 0;
}

int gen_case_add_op(GenCase *c, const GenOp *op) {
  if (af_grow((void **)&c->ops, &c->capops, c->nops + 1, sizeof(GenOp)))
    return AF_ENOMEM;
  c->ops[c->nops] = *op;
  return c->nops++;
}

int gen_case_add_buf(GenCase *c, const GenBuf *b) {
  if (af_grow((void **)&c->bufs, &c->capbufs, c->nbufs + 1, sizeof(GenBuf)))
    return AF_ENOMEM;
  c->bufs[c->nbufs] = *b;
  return c->nbufs++;
}

int gen_case_add_region(GenCase *c, const GenRegion *r) {
  if (af_grow((void **)&c->regions, &c->capregions, c->nregions + 1, sizeof(GenRegion)))
    return AF_ENOMEM;
  c->regions[c->nregions] = *r;
  return c->nregions++;
}

int gen_case_add_block(GenCase *c, const GenBlock *b) {
  if (af_grow((void **)&c->blocks, &c->capblocks, c->nblocks + 1, sizeof(GenBlock)))
    return AF_ENOMEM;
  c->blocks[c->nblocks] = *b;
  return c->nblocks++;
}

int gen_case_finish(GenCase *c, AfErr *err) {
  int ntoks = 0, nstreams = 0;
  for (int k = 1; k < c->nblocks; k++) {
    GenBlock *b = &c->blocks[k];
    b->first = b->op + 1;
    b->last = b->op;
    for (int q = 0; q < b->ninputs && q < GEN_MAX_REGION_IO; q++)
      if (b->inputs[q].tok + 1 > ntoks)
        ntoks = b->inputs[q].tok + 1;
  }
  for (int r = 1; r < c->nregions; r++) {
    GenRegion *g = &c->regions[r];
    g->first = g->exec_op + 1;
    g->last = g->exec_op;
    for (int k = 0; k < g->ninputs; k++)
      if (g->inputs[k].tok + 1 > ntoks)
        ntoks = g->inputs[k].tok + 1;
    for (int k = 0; k < g->ncaptures; k++)
      if (g->captures[k].tok + 1 > ntoks)
        ntoks = g->captures[k].tok + 1;
  }
  for (int i = 0; i < c->nops; i++) {
    GenOp *o = &c->ops[i];
    if (o->tok + 1 > ntoks)
      ntoks = o->tok + 1;
    if (o->stream + 1 > nstreams)
      nstreams = o->stream + 1;
    if (o->ctx < 0 || o->ctx >= c->nregions)
      return af_err_set(err, AF_EINVALID, "op #%d (%s): context %d does not exist", i,
                        gen_op_name(o->kind), o->ctx);
    if (o->blk < 0 || o->blk >= c->nblocks || (o->blk > 0 && c->blocks[o->blk].op >= i))
      return af_err_set(err, AF_EINVALID, "op #%d (%s): block %d does not exist before it", i,
                        gen_op_name(o->kind), o->blk);
    if (o->blk > 0)
      c->blocks[o->blk].last = i;
    int guard = 0;
    for (int r = o->ctx; r > 0 && guard <= c->nregions; r = c->regions[r].parent, guard++) {
      if (c->regions[r].exec_op >= i)
        return af_err_set(err, AF_EINVALID, "op #%d (%s): placed before its region r%d", i,
                          gen_op_name(o->kind), r);
      c->regions[r].last = i;
    }
  }
  c->ntoks = ntoks;
  c->nstreams = nstreams;
  return 0;
}

const char *gen_elem_name(int e) {
  static const char *const names[GEN_ELEM__COUNT] = {"i32", "i16", "i64", "f32"};
  return e >= 0 && e < GEN_ELEM__COUNT ? names[e] : "?";
}

int gen_elem_size(int e) {
  return e == GEN_ELEM_I16 ? 2 : e == GEN_ELEM_I64 ? 8 : 4;
}

int gen_elem_lookup(const char *name) {
  for (int e = 0; e < GEN_ELEM__COUNT && name; e++)
    if (strcmp(name, gen_elem_name(e)) == 0)
      return e;
  return -1;
}

int gen_elem_words(int e, int64_t v, int32_t *w) {
  switch (e) {
  case GEN_ELEM_I16:
    w[0] = (int16_t)v;
    return 1;
  case GEN_ELEM_I64:
    w[0] = (int32_t)(uint32_t)((uint64_t)v & 0xffffffffu);
    w[1] = (int32_t)(uint32_t)((uint64_t)v >> 32);
    return 2;
  case GEN_ELEM_F32: {
    float f = (float)v;
    memcpy(&w[0], &f, 4);
    return 1;
  }
  default:
    w[0] = (int32_t)v;
    return 1;
  }
}

int gen_case_size(const GenCase *c) {
  return c->nops;
}

void gen_op_view(const GenCase *c, const GenOp *o, int k, int32_t *off, int32_t *len,
                 int32_t *stride) {
  int b = o->kind == GEN_OP_LAUNCH ? (k < o->nargs ? o->args[k] : -1) : k ? o->src : o->buf;
  if (k >= 0 && k < 3 && o->view[k][1] > 0) {
    *off = o->view[k][0];
    *len = o->view[k][1];
    *stride = o->view[k][2];
    return;
  }
  *off = 0;
  *len = b >= 0 && b < c->nbufs ? c->bufs[b].n : 0;
  *stride = 1;
}

/* ---- JSON writing ---- */

static void put_deps(AfBuf *b, const GenOp *o) {
  af_buf_puts(b, ", \"deps\": [");
  for (int d = 0; d < o->ndeps; d++)
    af_buf_printf(b, "%s\"t%d\"", d ? ", " : "", o->deps[d]);
  af_buf_puts(b, "]");
}

int gen_op_has_view(const GenOp *o) {
  return o->view[0][1] > 0 || o->view[1][1] > 0 || o->view[2][1] > 0;
}

static void put_views(AfBuf *b, const GenOp *o) {
  static const char *const key[2] = {"dst_view", "src_view"};
  if (o->kind == GEN_OP_LAUNCH) { /* "arg_views", one per argument, null for a whole buffer */
    if (!gen_op_has_view(o))
      return;
    af_buf_puts(b, ", \"arg_views\": [");
    for (int k = 0; k < o->nargs && k < 3; k++) {
      af_buf_puts(b, k ? ", " : "");
      if (o->view[k][1] > 0)
        af_buf_printf(b, "[%d, %d, %d]", o->view[k][0], o->view[k][1], o->view[k][2]);
      else
        af_buf_puts(b, "null");
    }
    af_buf_puts(b, "]");
    return;
  }
  for (int k = 0; k < 2; k++)
    if (o->view[k][1] > 0) /* version 2 */
      af_buf_printf(b, ", \"%s\": [%d, %d, %d]", key[k], o->view[k][0], o->view[k][1],
                    o->view[k][2]);
}

static void indent(AfBuf *b, int depth) {
  for (int i = 0; i < depth; i++)
    af_buf_puts(b, "  ");
}

static void put_inputs(AfBuf *b, const GenRegionCapture *in, int n) {
  for (int k = 0; k < n; k++)
    af_buf_printf(b, "%s{\"token\": \"t%d\", \"as\": \"t%d\"}", k ? ", " : "", in[k].outer,
                  in[k].tok);
}

static int put_body(AfBuf *b, const GenCase *c, int from, int to, int ctx, int blk, int depth);

/* A call, if, for or branch op: its block's inputs, body and yield (the op's token follows). */
static void put_block(AfBuf *b, const GenCase *c, const GenOp *o, int depth) {
  const GenBlock *k = &c->blocks[o->block];
  if (o->kind == GEN_OP_IF || o->kind == GEN_OP_BRANCH)
    af_buf_printf(b, ", \"taken\": %s", k->taken ? "true" : "false");
  if (o->kind == GEN_OP_FOR)
    af_buf_printf(b, ", \"trips\": %d", k->trips);
  af_buf_puts(b, ", \"inputs\": [");
  put_inputs(b, k->inputs, k->ninputs);
  if (k->nbufargs) {
    af_buf_puts(b, "], \"buffer_args\": [");
    for (int q = 0; q < k->nbufargs; q++)
      af_buf_printf(b, "%s\"b%d\"", q ? ", " : "", k->bufargs[q]);
  }
  af_buf_puts(b, "], \"body\": [");
  if (put_body(b, c, k->first, k->last, o->ctx, o->block, depth + 1)) {
    af_buf_puts(b, "\n");
    indent(b, depth);
  }
  af_buf_puts(b, "], \"yields\": [");
  if (k->yield >= 0)
    af_buf_printf(b, "\"t%d\"", k->yield);
  af_buf_puts(b, "]");
}

/* ---- each kind's fields: put_<lc> (GEN_OP_MAP). The views of a GEN_K_VIEWS kind, the
 * dependencies and the token are written after (put_body). */

static void put_wait_async(AfBuf *b, const GenCase *c, const GenOp *o, int depth) {
  (void)b, (void)c, (void)o, (void)depth;
}

static void put_host_wait(AfBuf *b, const GenCase *c, const GenOp *o, int depth) {
  put_wait_async(b, c, o, depth);
}

static void put_alloc(AfBuf *b, const GenCase *c, const GenOp *o, int depth) {
  (void)c, (void)depth;
  af_buf_printf(b, ", \"buf\": \"b%d\", \"mode\": \"%s\"", o->buf,
                o->mode == GEN_ALLOC_ASYNC  ? "async"
                : o->mode == GEN_ALLOC_SYNC ? "sync"
                                            : "host_shared");
}

static void put_dealloc(AfBuf *b, const GenCase *c, const GenOp *o, int depth) {
  (void)c, (void)depth;
  af_buf_printf(b, ", \"buf\": \"b%d\", \"async\": %s", o->buf, o->async ? "true" : "false");
}

static void put_memcpy(AfBuf *b, const GenCase *c, const GenOp *o, int depth) {
  (void)c, (void)depth;
  af_buf_printf(b, ", \"dst\": \"b%d\", \"src\": \"b%d\"", o->buf, o->src);
}

static void put_memset(AfBuf *b, const GenCase *c, const GenOp *o, int depth) {
  (void)c, (void)depth;
  af_buf_printf(b, ", \"dst\": \"b%d\", \"value\": %d", o->buf, o->value);
}

static void put_launch(AfBuf *b, const GenCase *c, const GenOp *o, int depth) {
  (void)c, (void)depth;
  const KernelInfo *ki = kernel_info(o->kernel);
  af_buf_printf(b, ", \"kernel\": \"%s\", \"args\": [", ki ? ki->name : "?");
  for (int a = 0; a < o->nargs; a++)
    af_buf_printf(b, "%s\"b%d\"", a ? ", " : "", o->args[a]);
  af_buf_printf(b, "], \"value\": %d", o->value);
  if (o->stream >= 0) /* version 2 */
    af_buf_printf(b, ", \"stream\": \"s%d\"", o->stream);
}

static void put_stream_create(AfBuf *b, const GenCase *c, const GenOp *o, int depth) {
  (void)c, (void)depth;
  af_buf_printf(b, ", \"stream\": \"s%d\"", o->stream);
}

static void put_stream_sync(AfBuf *b, const GenCase *c, const GenOp *o, int depth) {
  put_stream_create(b, c, o, depth);
}

static void put_stream_destroy(AfBuf *b, const GenCase *c, const GenOp *o, int depth) {
  put_stream_create(b, c, o, depth);
}

static void put_observe(AfBuf *b, const GenCase *c, const GenOp *o, int depth) {
  (void)c, (void)depth;
  af_buf_printf(b, ", \"buf\": \"b%d\"", o->buf);
}

static void put_execute(AfBuf *b, const GenCase *c, const GenOp *o, int depth) {
  const GenRegion *g = &c->regions[o->region];
  af_buf_printf(b, ", \"region\": \"r%d\", \"inputs\": [", o->region);
  for (int k = 0; k < g->ninputs; k++)
    af_buf_printf(b, "%s{\"value\": \"r%d.%d\", \"as\": \"t%d\"}", k ? ", " : "",
                  g->inputs[k].region, g->inputs[k].vidx, g->inputs[k].tok);
  if (g->ncaptures) { /* version 2 */
    af_buf_puts(b, "], \"captures\": [");
    put_inputs(b, g->captures, g->ncaptures);
  }
  af_buf_puts(b, "], \"body\": [");
  if (put_body(b, c, g->first, g->last, o->region, 0, depth + 1)) {
    af_buf_puts(b, "\n");
    indent(b, depth);
  }
  af_buf_puts(b, "], \"yields\": [");
  for (int k = 0; k < g->nyields; k++)
    af_buf_printf(b, "%s\"t%d\"", k ? ", " : "", g->yields[k]);
  af_buf_puts(b, "]");
}

static void put_await(AfBuf *b, const GenCase *c, const GenOp *o, int depth) {
  (void)c, (void)depth;
  if (o->vidx >= 0)
    af_buf_printf(b, ", \"value\": \"r%d.%d\"", o->region, o->vidx);
  else
    af_buf_printf(b, ", \"region\": \"r%d\"", o->region);
}

static void put_call(AfBuf *b, const GenCase *c, const GenOp *o, int depth) {
  put_block(b, c, o, depth);
}

static void put_if(AfBuf *b, const GenCase *c, const GenOp *o, int depth) {
  put_block(b, c, o, depth);
}

static void put_for(AfBuf *b, const GenCase *c, const GenOp *o, int depth) {
  put_block(b, c, o, depth);
}

static void put_branch(AfBuf *b, const GenCase *c, const GenOp *o, int depth) {
  put_block(b, c, o, depth);
}

static void (*const putters[GEN_OP__COUNT])(AfBuf *b, const GenCase *c, const GenOp *o,
                                            int depth) = {
#define GEN__PUTTER(id, lc, name, mlir, weight, flags) [GEN_OP_##id] = put_##lc,
    GEN_OP_MAP(GEN__PUTTER)
#undef GEN__PUTTER
};

/* Writes ops [from, to] of context ctx and block blk (and nested regions and blocks) at the
 * given depth. */
static int put_body(AfBuf *b, const GenCase *c, int from, int to, int ctx, int blk, int depth) {
  int first = 1;
  for (int i = from; i <= to && i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    if (o->ctx != ctx || o->blk != blk)
      continue;
    af_buf_puts(b, first ? "\n" : ",\n");
    first = 0;
    indent(b, depth);
    af_buf_printf(b, "{\"op\": \"%s\"", gen_op_name(o->kind));
    putters[o->kind](b, c, o, depth);
    if (gen_op_flags(o->kind) & GEN_K_VIEWS)
      put_views(b, o);
    if (gen_op_takes_deps(o))
      put_deps(b, o);
    if (o->tok >= 0)
      af_buf_printf(b, ", \"token\": \"t%d\"", o->tok);
    af_buf_puts(b, "}");
    i = gen_op_body_end(c, i);
  }
  return !first;
}

char *gen_case_to_json(const GenCase *c) {
  AfBuf b;
  af_buf_init(&b);
  int version = 1; /* the oldest version that has every construct the case uses */
  for (int r = 1; r < c->nregions; r++)
    if (c->regions[r].ncaptures)
      version = 2;
  for (int i = 0; i < c->nops; i++)
    if (c->ops[i].stream >= 0 || (gen_op_flags(c->ops[i].kind) & GEN_K_V2) ||
        gen_op_has_view(&c->ops[i]))
      version = 2;
  for (int i = 0; i < c->nbufs; i++)
    if (c->bufs[i].elem != GEN_ELEM_I32 || c->bufs[i].stat)
      version = 2;
  af_buf_printf(&b, "{\n  \"format\": \"asyncfuzz-case\",\n  \"version\": %d,\n", version);
  af_buf_printf(&b, "  \"seed\": \"%llu\",\n", (unsigned long long)c->seed);
  if (c->has_config) { /* the knobs a case always holds, the op mix, those written when set */
    const GenConfig *g = &c->cfg;
    af_buf_puts(&b, "  \"config\": {");
    for (int i = 0, n = 0; i < GEN_KNOB_COUNT; i++)
      if (gen_knob(i)->always)
        af_buf_printf(&b, "%s\"%s\": %d", n++ ? ", " : "", gen_knob(i)->field,
                      gen_knob_value(g, gen_knob(i)));
    af_buf_puts(&b, ", \"mix\": [");
    for (int k = 0; k < GEN_MIX_COUNT; k++)
      af_buf_printf(&b, "%s%d", k ? ", " : "", g->w[k]);
    af_buf_puts(&b, "]");
    for (int i = 0; i < GEN_KNOB_COUNT; i++)
      if (!gen_knob(i)->always && gen_knob_value(g, gen_knob(i)) != 0)
        af_buf_printf(&b, ", \"%s\": %d", gen_knob(i)->field, gen_knob_value(g, gen_knob(i)));
    af_buf_puts(&b, "},\n");
  }
  af_buf_printf(&b, "  \"spin\": %d,\n  \"buffers\": [", c->spin);
  for (int i = 0; i < c->nbufs; i++) {
    const GenBuf *g = &c->bufs[i];
    af_buf_printf(&b, "%s\n    {\"name\": \"b%d\", \"kind\": \"%s\", \"n\": %d", i ? "," : "", i,
                  g->kind == GEN_BUF_HOST ? "host" : "device", g->n);
    if (g->elem != GEN_ELEM_I32) /* version 2 */
      af_buf_printf(&b, ", \"type\": \"%s\"", gen_elem_name(g->elem));
    if (g->stat) /* version 2 */
      af_buf_puts(&b, ", \"static\": true");
    if (g->kind == GEN_BUF_HOST)
      af_buf_printf(&b, ", \"init\": %d", g->init);
    af_buf_puts(&b, "}");
  }
  af_buf_puts(&b, "\n  ],\n  \"body\": [");
  if (put_body(&b, c, 0, c->nops - 1, 0, 0, 2))
    af_buf_puts(&b, "\n  ");
  af_buf_puts(&b, "]\n}\n");
  return af_buf_take(&b);
}

uint64_t gen_case_hash(const GenCase *c) {
  /* The hash is over the content only: seed and config do not change what the case means. */
  GenCase tmp = *c;
  tmp.seed = 0;
  tmp.has_config = 0;
  char *j = gen_case_to_json(&tmp);
  if (j == NULL)
    return 0;
  uint64_t h = af_hash64(j, strlen(j));
  af_free(j);
  return h;
}

int gen_case_save(const GenCase *c, const char *path, AfErr *err) {
  char *j = gen_case_to_json(c);
  if (j == NULL)
    return af_err_set(err, AF_ENOMEM, "out of memory rendering case JSON");
  size_t plen = strlen(path);
  char *tmp = af_malloc(plen + 16);
  int rc = 0;
  if (tmp == NULL) {
    rc = af_err_set(err, AF_ENOMEM, "out of memory");
    goto out;
  }
  snprintf(tmp, plen + 16, "%s.tmp%d", path, (int)getpid());
  FILE *f = fopen(tmp, "wb");
  if (f == NULL) {
    rc = af_err_set(err, AF_EIO, "cannot write %s: %s", tmp, strerror(errno));
    goto out;
  }
  size_t n = strlen(j);
  int werr = fwrite(j, 1, n, f) != n;
  werr |= fflush(f) != 0;
  int saved = errno;
  werr |= fclose(f) != 0;
  if (werr) {
    remove(tmp);
    rc = af_err_set(err, AF_EIO, "cannot write %s: %s", path, strerror(saved ? saved : EIO));
    goto out;
  }
  if (rename(tmp, path) != 0) {
    saved = errno;
    remove(tmp);
    rc = af_err_set(err, AF_EIO, "cannot rename %s to %s: %s", tmp, path, strerror(saved));
  }
out:
  af_free(tmp);
  af_free(j);
  return rc;
}
