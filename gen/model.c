/*
 * model.c: the Case model (gen.h): a case's arrays, building and copying it, its derived fields
 * (token and stream counts, each region's and block's range of ops), element types and views.
 */
#include "gen.h"

#include "../kernels/kernels.h"

#include <string.h>

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

void gen_op_dims(const GenOp *o, int32_t len, int32_t d[6]) {
  int own = 0;
  for (int k = 0; k < 6; k++)
    own |= o->dims[k] != 0;
  for (int k = 0; k < 6; k++)
    d[k] = own ? o->dims[k] : k == 3 ? len : 1;
}

int gen_op_in_space(const GenCase *c, const GenOp *o) {
  int b = o->buf >= 0 && o->buf < c->nbufs ? o->buf : -1;
  int src = o->src >= 0 && o->src < c->nbufs ? o->src : -1;
  switch (o->kind) {
  case GEN_OP_ALLOC:
  case GEN_OP_DEALLOC:
    return b >= 0 && c->bufs[b].space && !o->spacecast;
  case GEN_OP_MEMCPY:
    return (b >= 0 && c->bufs[b].space) || (src >= 0 && c->bufs[src].space);
  case GEN_OP_MEMSET:
    return b >= 0 && c->bufs[b].space;
  default:
    return 0;
  }
}

int gen_buf_rank(const GenCase *c, int b) {
  return b >= 0 && b < c->nbufs && c->bufs[b].rank >= 2 && c->bufs[b].rank <= 3 ? c->bufs[b].rank
                                                                                : 1;
}

int gen_buf_row(const GenCase *c, int b) {
  if (b < 0 || b >= c->nbufs)
    return 0;
  int r = gen_buf_rank(c, b), row = 1;
  if (r == 1)
    return c->bufs[b].n;
  for (int d = 1; d < r; d++)
    row *= c->bufs[b].shape[d];
  return row;
}

int gen_op_rows(const GenCase *c, const GenOp *o, int32_t *ext) {
  if (o->kind != GEN_OP_MEMCPY && o->kind != GEN_OP_MEMSET)
    return 0;
  int copy = o->kind == GEN_OP_MEMCPY;
  int p = gen_buf_rank(c, o->buf) > 1 ? o->buf : copy && gen_buf_rank(c, o->src) > 1 ? o->src : -1;
  if (p < 0 || (o->view[0][1] <= 0 && (!copy || o->view[1][1] <= 0)))
    return 0;
  int rank = gen_buf_rank(c, p), row = gen_buf_row(c, p);
  for (int k = 0; k < 1 + copy; k++) { /* every side whole rows of that row */
    int b = k ? o->src : o->buf;
    const int32_t *v = o->view[k];
    if (row <= 0 || c->bufs[b].n % row != 0 ||
        (v[1] > 0 && (v[2] != 1 || v[0] % row != 0 || v[1] % row != 0)))
      return 0;
  }
  for (int d = 0; d < rank && ext; d++)
    ext[d] = d ? c->bufs[p].shape[d] : 0;
  return rank;
}

int gen_view_rows(const GenCase *c, const GenOp *o, int k) {
  int32_t ext[3];
  int rank = gen_op_rows(c, o, ext), row = 1;
  if (rank == 0 || k < 0 || k > 1 || o->view[k][1] <= 0)
    return 0;
  for (int d = 1; d < rank; d++)
    row *= ext[d];
  return row;
}

int gen_op_ranked(const GenCase *c, const GenOp *o) {
  switch (o->kind) {
  case GEN_OP_ALLOC:
  case GEN_OP_DEALLOC:
    return gen_buf_rank(c, o->buf) > 1;
  case GEN_OP_MEMSET:
    return gen_buf_rank(c, o->buf) > 1 && (o->view[0][1] <= 0 || gen_view_rows(c, o, 0));
  case GEN_OP_MEMCPY:
    if (gen_op_rows(c, o, NULL))
      return 1;
    if (o->view[0][1] > 0 || o->view[1][1] > 0) /* (a view flattens: the copy is of rank 1) */
      return 0;
    return gen_buf_rank(c, o->buf) > 1 || gen_buf_rank(c, o->src) > 1;
  default:
    return 0;
  }
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
    o->space = (uint8_t)gen_op_in_space(c, o);
    o->ranked = (uint8_t)gen_op_ranked(c, o);
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
  return kernel_elem_name(e);
}

int gen_elem_size(int e) {
  return kernel_elem_bytes(e);
}

int gen_elem_lookup(const char *name) {
  for (int e = 0; e < GEN_ELEM__COUNT && name; e++)
    if (strcmp(name, gen_elem_name(e)) == 0)
      return e;
  return -1;
}

int gen_elem_storage(int e) {
  switch (gen_elem_size(e)) {
  case 1:
    return GEN_ELEM_I8;
  case 2:
    return GEN_ELEM_I16;
  case 8:
    return GEN_ELEM_I64;
  default:
    return e >= 0 && e < GEN_ELEM__COUNT ? e : GEN_ELEM_I32;
  }
}

int gen_elem_settable(int e) {
  return e >= 0 && e < GEN_ELEM__COUNT && (gen_elem_size(e) == 2 || gen_elem_size(e) == 4);
}

int gen_elem_words(int e, int64_t v, int32_t *w) {
  unsigned char p[8];
  kernel_elem_store(e, v, p);
  return kernel_elem_words(p, gen_elem_size(e), w);
}

int gen_case_size(const GenCase *c) {
  return c->nops;
}

void gen_op_view(const GenCase *c, const GenOp *o, int k, int32_t *off, int32_t *len,
                 int32_t *stride) {
  int b = gen_kind_launches(o->kind) ? (k < o->nargs ? o->args[k] : -1) : k ? o->src : o->buf;
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

int gen_op_kernel_id(const GenCase *c, const GenOp *o) {
  int e = o->nargs > 0 && o->args[0] >= 0 && o->args[0] < c->nbufs ? c->bufs[o->args[0]].elem : 0;
  int k = KERNEL_ID(o->kernel, gen_op_has_view(o), e);
  return o->smem > 0 ? KERNEL_STAGED_ID(k) : k;
}

int gen_op_has_view(const GenOp *o) {
  return o->view[0][1] > 0 || o->view[1][1] > 0 || o->view[2][1] > 0;
}
