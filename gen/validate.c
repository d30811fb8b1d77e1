/*
 * validate.c: the rules that give a Case exactly one meaning (ARCHITECTURE.md, "The Case").
 *
 * The case's happens-before relation is built over nodes: every op, plus a START and an END
 * node per region. Edges: a token's producer precedes each op that depends on it; in each
 * context (main or a region body) a synchronous op (host_wait, observe, await, execute,
 * sync alloc/dealloc) precedes every later op of that context; a region starts after its
 * execute op and after the regions whose values it consumes have ended (a token it captures
 * from its parent is ordered like a dependency on it); a region ends after
 * its synchronous ops; an await follows the end of its region; the work enqueued on an explicit
 * stream runs in order, and a stream_sync or stream_destroy follows all of it. Edges only point
 * forward in inline order, so one pass computes every node's ancestor set (a bitset).
 *
 * Buffer rules are checked in the same pass against each buffer's last write and the reads
 * since: conflicting accesses must be ordered, reads need an earlier write, nothing may
 * follow a dealloc and a dealloc must follow every use.
 */
#include "gen_int.h"

#include <stdio.h>
#include <string.h>

static int add_read(V *v, int b, int node) {
  if (af_grow((void **)&v->reads[b], &v->capreads[b], v->nreads[b] + 1, sizeof(int)))
    return af_err_set(v->err, AF_ENOMEM, "out of memory");
  v->reads[b][v->nreads[b]++] = node;
  return 0;
}

/* Checks one data access of op i to buffer b. */
static int access(V *v, int i, int b, int write) {
  const GenCase *c = v->c;
  const GenBuf *gb = &c->bufs[b];
  int ctx = c->ops[i].ctx;
  if (gb->kind == GEN_BUF_DEVICE) {
    if (v->alloc_node[b] == -2)
      return gen__vfail(v, i, "uses b%d, which is never allocated before it", b, 0);
    if (v->dealloc_node[b] >= 0)
      return gen__vfail(v, i, "uses b%d after its dealloc (op #%d)", b, v->dealloc_node[b]);
    if (!gen__in_scope(c, ctx, v->alloc_ctx[b]))
      return gen__vfail(v, i, "uses b%d outside the region that allocates it (r%d)", b,
                        v->alloc_ctx[b]);
    if (!gen__before(v, v->alloc_node[b], i))
      return gen__vfail(v, i, "uses b%d without being ordered after its alloc (op #%d)", b,
                        v->alloc_node[b]);
  }
  int lw = v->last_write[b];
  if (!write && lw == -2)
    return gen__vfail(v, i, "reads b%d, which is never written before it", b, 0);
  if (lw != -2 && !gen__before(v, lw, i)) {
    if (write)
      return gen__vfail(
          v, i, "writes b%d, which op #%d also writes, with no token-DAG order between them", b,
          lw);
    return gen__vfail(v, i, "reads b%d, which op #%d writes, with no token-DAG order between them",
                      b, lw);
  }
  if (write) {
    for (int k = 0; k < v->nreads[b]; k++)
      if (!gen__before(v, v->reads[b][k], i))
        return gen__vfail(v, i,
                          "writes b%d, which op #%d reads, with no token-DAG order between them", b,
                          v->reads[b][k]);
    v->last_write[b] = i;
    v->nreads[b] = 0;
    return 0;
  }
  return add_read(v, b, i);
}

static int check_deps(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  if (o->ndeps < 0 || o->ndeps > GEN_MAX_DEPS)
    return gen__vfail(v, i, "has %d dependencies (at most %d)", o->ndeps, GEN_MAX_DEPS);
  for (int d = 0; d < o->ndeps; d++) {
    int t = o->deps[d];
    if (t < 0 || t >= c->ntoks || v->tok_src[t] == -1)
      return gen__vfail(v, i, "depends on token t%d, which is not defined before it", t, 0);
    if (v->tok_ctx[t] != o->ctx)
      return gen__vfail(v, i,
                        "depends on token t%d of another context (r%d); pass it through "
                        "yield/await or region inputs",
                        t, v->tok_ctx[t]);
    if (!gen__blk_sees(v, o->blk, t))
      return gen__vfail(
          v, i,
          "depends on token t%d, which is not visible in its block (a block's tokens stay "
          "in it; a call's body sees only its inputs)",
          t, 0);
    gen__edge(v, v->tok_src[t], i);
  }
  return 0;
}

/* What a block's body may hold: the kinds that may be in one (GEN_K_BODY; in a for's,
 * GEN_K_LOOP), none on an explicit stream. */
static int check_in_block(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  int kind = c->ops[c->blocks[o->blk].op].kind;
  unsigned f = gen_op_flags(o->kind);
  int ok = (f & GEN_K_BODY) && (kind != GEN_OP_FOR || (f & GEN_K_LOOP)) && o->stream < 0;
  if (!ok)
    return af_err_set(v->err, AF_EINVALID,
                      "op #%d (%s): cannot be in the body of a %s (a block holds async work "
                      "without explicit streams, and host waits outside a for)",
                      i, gen_op_name(o->kind), gen_op_name(kind));
  return 0;
}

/* What every op must be, whatever its kind: a token exactly when it defines one, in a block that
 * begins before it and may hold it, views only on a kind that takes them, dependencies only on an
 * op that takes them, buffers that exist. */
static int check_common(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  unsigned f = gen_op_flags(o->kind);
  int rc;
  if (o->kind >= GEN_OP__COUNT)
    return gen__vfail(v, i, "unknown op kind %d", o->kind, 0);
  if ((f & GEN_K_BLOCK) && (o->block <= 0 || o->block >= c->nblocks || c->blocks[o->block].op != i))
    return gen__vfail(v, i, "names block %d, which it does not define", o->block, 0);
  int wants_tok = gen_op_has_token(c, o);
  if (wants_tok && o->tok < 0)
    return gen__vfail(v, i, "an async op must define a token", 0, 0);
  if (!wants_tok && o->tok >= 0)
    return gen__vfail(v, i, "defines token t%d but is synchronous", o->tok, 0);
  if (o->blk > 0 && (o->blk >= c->nblocks || c->blocks[o->blk].op >= i ||
                     c->ops[c->blocks[o->blk].op].ctx != o->ctx))
    return gen__vfail(v, i, "is in block %d, which does not begin before it in its context", o->blk,
                      0);
  if (o->blk > 0 && (rc = check_in_block(v, i)))
    return rc;
  if (!(f & GEN_K_VIEWS) && gen_op_has_view(o))
    return gen__vfail(v, i, "has a view; only a memcpy, memset or launch works on views", 0, 0);
  if (!gen_op_takes_deps(o) && o->ndeps)
    return gen__vfail(v, i, "a synchronous op takes no dependencies", 0, 0);
  int32_t bufs[4];
  int nb = gen_op_bufs(o, bufs);
  for (int k = 0; k < nb; k++)
    if (bufs[k] < 0 || bufs[k] >= c->nbufs)
      return gen__vfail(v, i, "names buffer %d, which does not exist", bufs[k], 0);
  return 0;
}

static int visit_op(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  int rc;
  if (o->ctx < 0 || o->ctx >= c->nregions)
    return gen__vfail(v, i, "is in context %d, which does not exist", o->ctx, 0);
  if ((rc = check_common(v, i)))
    return rc;
  gen__edge(v, v->last_sync[o->ctx], i);
  if ((rc = check_deps(v, i)) || (rc = gen__classes[o->kind]->check(v, i)))
    return rc;
  int wb = gen_kind_launches(o->kind) ? o->args[0] : o->buf; /* (a launch is its args) */
  if ((gen_op_flags(o->kind) & GEN_K_VIEWS) && o->view[0][1] > 0 && v->last_write[wb] == -2)
    return gen__vfail(
        v, i,
        "writes a view of b%d before the whole buffer is written (the rest of it would "
        "stay undefined)",
        wb, 0);
  int32_t bufs[4];
  int writes[4];
  int na = gen_op_accesses(c, i, bufs, writes);
  /* reads first, so a launch reading and writing distinct buffers is checked per buffer */
  for (int k = 0; k < na; k++)
    if ((rc = access(v, i, bufs[k], writes[k])))
      return rc;
  if (o->tok >= 0 && !(gen_op_flags(o->kind) & GEN_K_BLOCK)) { /* (a block's: at its end) */
    int src = i;
    if (o->kind == GEN_OP_AWAIT) {
      const GenRegion *g = &c->regions[o->region];
      src = v->tok_src[g->yields[o->vidx]];
    }
    if ((rc = gen__define_token(v, i, o->tok, src, o->ctx)))
      return rc;
    v->tok_blk[o->tok] = o->blk;
  }
  if (gen_op_is_sync(o))
    v->last_sync[o->ctx] = i;
  return 0;
}

/* The case's frame: its main context, its regions' links, its spin. */
static int check_frame(const GenCase *c, AfErr *err) {
  if (c->nregions < 1)
    return af_err_set(err, AF_EINVALID, "case has no main context");
  for (int r = 1; r < c->nregions; r++) {
    const GenRegion *g = &c->regions[r];
    if (g->exec_op < 0 || g->exec_op >= c->nops || c->ops[g->exec_op].kind != GEN_OP_EXECUTE ||
        c->ops[g->exec_op].region != r || g->parent < 0 || g->parent >= r ||
        g->ninputs > GEN_MAX_REGION_IO || g->nyields > GEN_MAX_REGION_IO)
      return af_err_set(err, AF_EINVALID, "region r%d is malformed", r);
  }
  if (c->spin < 0)
    return af_err_set(err, AF_EINVALID, "spin must not be negative");
  return 0;
}

static void v_free(V *v) {
  if (v->reads)
    for (int b = 0; b < v->c->nbufs; b++)
      af_free(v->reads[b]);
  af_free(v->blk);
}

/* The walk's tables, sized by the case, with nothing seen yet: one block, where they were 17
 * allocations for each case. */
static int v_alloc(V *v) {
  const GenCase *c = v->c;
  size_t nb = (size_t)c->nbufs + 1, nt = (size_t)c->ntoks + 1, nr = (size_t)c->nregions + 1;
  size_t ns = (size_t)c->nstreams + 1;
  v->nnodes = c->nops + 2 * c->nregions;
  v->words = (v->nnodes + 63) / 64;
  AfLayout l = {0};
  size_t o_reach = af_lay(&l, (size_t)v->nnodes * (size_t)v->words + 1, sizeof(uint64_t));
  size_t o_reads = af_lay(&l, nb, sizeof(int *));
  size_t o_tok = af_lay(&l, 4 * nt, sizeof(int)), o_reg = af_lay(&l, 3 * nr, sizeof(int));
  size_t o_ops = af_lay(&l, (size_t)c->nops + 1, sizeof(int));
  size_t o_buf = af_lay(&l, 6 * nb, sizeof(int)), o_str = af_lay(&l, 3 * ns, sizeof(int));
  char *blk = v->blk = af_calloc(1, l.size);
  if (blk == NULL)
    return af_err_set(v->err, AF_ENOMEM, "out of memory validating the case");
  v->reach = (uint64_t *)(blk + o_reach);
  v->reads = (int **)(blk + o_reads);
  v->tok_src = (int *)(blk + o_tok); /* per token */
  v->tok_ctx = v->tok_src + nt;
  v->tok_blk = v->tok_ctx + nt;
  v->tok_defs = v->tok_blk + nt;
  v->last_sync = (int *)(blk + o_reg); /* per region */
  v->awaited = v->last_sync + nr;
  v->close_next = v->awaited + nr;
  v->closes = (int *)(blk + o_ops);     /* per op */
  v->alloc_node = (int *)(blk + o_buf); /* per buffer */
  v->alloc_ctx = v->alloc_node + nb;
  v->dealloc_node = v->alloc_ctx + nb;
  v->last_write = v->dealloc_node + nb;
  v->nreads = v->last_write + nb;
  v->capreads = v->nreads + nb;
  v->s_create = (int *)(blk + o_str); /* per explicit stream */
  v->s_last = v->s_create + ns;
  v->s_destroy = v->s_last + ns;
  for (int t = 0; t < c->ntoks; t++)
    v->tok_src[t] = -1;
  for (int r = 0; r < c->nregions; r++)
    v->last_sync[r] = -1;
  gen_region_ends(c, v->closes, v->close_next);
  for (int s = 0; s < c->nstreams; s++)
    v->s_create[s] = v->s_last[s] = v->s_destroy[s] = -1;
  return 0;
}

/* Each buffer's shape, and its state at the start: a host buffer exists and is written,
 * a device buffer is not allocated yet. */
static int start_bufs(V *v) {
  const GenCase *c = v->c;
  for (int b = 0; b < c->nbufs; b++) {
    const GenBuf *gb = &c->bufs[b];
    if (gb->stat && gb->kind != GEN_BUF_DEVICE)
      return af_err_set(v->err, AF_EINVALID, "buffer b%d: only a device buffer has a static shape",
                        b);
    if (gb->space && gb->kind != GEN_BUF_DEVICE)
      return af_err_set(v->err, AF_EINVALID, "buffer b%d: only a device buffer has a memory space",
                        b);
    if (gb->reg && gb->kind != GEN_BUF_HOST)
      return af_err_set(v->err, AF_EINVALID, "buffer b%d: only a host buffer is registered", b);
    if (gb->rank) {
      long prod = 1;
      for (int d = 0; d < gb->rank && d < 3; d++)
        prod *= gb->shape[d] >= 1 ? gb->shape[d] : 0;
      if (gb->kind != GEN_BUF_DEVICE || gb->rank < 2 || gb->rank > 3 || prod != gb->n ||
          gb->dyn >> gb->rank)
        return af_err_set(v->err, AF_EINVALID,
                          "buffer b%d: a shape is a device buffer's, 2 or 3 extents whose "
                          "product is its %d elements",
                          b, gb->n);
    }
    if (gb->n <= 0 || gb->n > 1024)
      return af_err_set(v->err, AF_EINVALID, "buffer b%d has %d elements (1..1024)", b, gb->n);
    v->alloc_node[b] = gb->kind == GEN_BUF_HOST ? -1 : -2;
    v->alloc_ctx[b] = 0;
    v->dealloc_node[b] = -1;
    v->last_write[b] = gb->kind == GEN_BUF_HOST ? -1 : -2; /* host buffers: written at start */
  }
  return 0;
}

/* Op #i, then the region it starts, the block and the regions it ends. */
static int walk_op(V *v, int i) {
  const GenCase *c = v->c;
  int rc = visit_op(v, i);
  if (rc == 0 && c->ops[i].kind == GEN_OP_EXECUTE)
    rc = gen__visit_region_start(v, c->ops[i].region);
  /* the block that ends here: the one this op is in, or its own when empty */
  int k = c->ops[i].blk > 0                              ? c->ops[i].blk
          : (gen_op_flags(c->ops[i].kind) & GEN_K_BLOCK) ? c->ops[i].block
                                                         : 0;
  if (rc == 0 && k > 0 && k < c->nblocks &&
      (c->blocks[k].last >= c->blocks[k].first ? c->blocks[k].last : c->blocks[k].op) == i)
    rc = gen__visit_block_end(v, k);
  for (int r = v->closes[i]; r >= 1 && rc == 0; r = v->close_next[r])
    rc = gen__visit_region_end(v, r);
  return rc;
}

/* What must hold once every op ran: each region awaited, each stream destroyed. */
static int check_end(V *v) {
  const GenCase *c = v->c;
  for (int r = 1; r < c->nregions; r++)
    if (!v->awaited[r])
      return af_err_set(v->err, AF_EINVALID,
                        "region r%d (op #%d) is never awaited by the context that spawns it", r,
                        c->regions[r].exec_op);
  for (int s = 0; s < c->nstreams; s++)
    if (v->s_create[s] >= 0 && v->s_destroy[s] < 0)
      return af_err_set(v->err, AF_EINVALID,
                        "stream s%d (created by op #%d) is never destroyed; a program destroys "
                        "the streams it creates",
                        s, v->s_create[s]);
  return 0;
}

int gen_validate(const GenCase *c, AfErr *err) {
  int rc = check_frame(c, err);
  if (rc != 0)
    return rc;
  V v;
  memset(&v, 0, sizeof v);
  v.c = c;
  v.err = err;
  rc = v_alloc(&v);
  if (rc == 0)
    rc = start_bufs(&v);
  for (int i = 0; i < c->nops && rc == 0; i++)
    rc = walk_op(&v, i);
  if (rc == 0)
    rc = check_end(&v);
  v_free(&v);
  return rc;
}
