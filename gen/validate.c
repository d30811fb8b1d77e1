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
#include "gen.h"

#include "../runner/kernels.h"

#include <stdio.h>
#include <string.h>

typedef struct V {
  const GenCase *c;
  AfErr *err;
  int nnodes, words;
  uint64_t *reach; /* nnodes * words */
  int *tok_src;    /* node producing each token (-1: not yet defined) */
  int *tok_ctx;
  int *tok_blk; /* block whose body defines each token (0: none) */
  int *tok_defs;
  int *last_sync; /* per context */
  int *awaited;   /* per region */
  /* per explicit stream: its stream_create, its last launch (-1: none), its stream_destroy */
  int *s_create, *s_last, *s_destroy;
  /* per buffer */
  int *alloc_node, *alloc_ctx, *dealloc_node, *last_write;
  int *nreads, *capreads;
  int **reads;
} V;

#define START(v, r) ((v)->c->nops + 2 * (r))
#define END(v, r) ((v)->c->nops + 2 * (r) + 1)

static uint64_t *row(V *v, int n) {
  return v->reach + (size_t)n * (size_t)v->words;
}

static int before(V *v, int a, int b) { /* a happens before b */
  if (a < 0)
    return 1; /* program start */
  return (int)((row(v, b)[a >> 6] >> (a & 63)) & 1);
}

static void edge(V *v, int from, int to) {
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

static int fail(V *v, int i, const char *fmt, int a, int b) {
  char msg[300];
  snprintf(msg, sizeof msg, fmt, a, b);
  return af_err_set(v->err, AF_EINVALID, "op #%d (%s): %s", i, kname(v, i), msg);
}

static int in_scope(const GenCase *c, int ctx, int outer) {
  for (int guard = 0; ctx >= 0 && guard <= c->nregions; guard++) {
    if (ctx == outer)
      return 1;
    ctx = ctx == 0 ? -1 : c->regions[ctx].parent;
  }
  return 0;
}

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
      return fail(v, i, "uses b%d, which is never allocated before it", b, 0);
    if (v->dealloc_node[b] >= 0)
      return fail(v, i, "uses b%d after its dealloc (op #%d)", b, v->dealloc_node[b]);
    if (!in_scope(c, ctx, v->alloc_ctx[b]))
      return fail(v, i, "uses b%d outside the region that allocates it (r%d)", b, v->alloc_ctx[b]);
    if (!before(v, v->alloc_node[b], i))
      return fail(v, i, "uses b%d without being ordered after its alloc (op #%d)", b,
                  v->alloc_node[b]);
  }
  int lw = v->last_write[b];
  if (!write && lw == -2)
    return fail(v, i, "reads b%d, which is never written before it", b, 0);
  if (lw != -2 && !before(v, lw, i)) {
    if (write)
      return fail(v, i,
                  "writes b%d, which op #%d also writes, with no token-DAG order between them", b,
                  lw);
    return fail(v, i, "reads b%d, which op #%d writes, with no token-DAG order between them", b,
                lw);
  }
  if (write) {
    for (int k = 0; k < v->nreads[b]; k++)
      if (!before(v, v->reads[b][k], i))
        return fail(v, i, "writes b%d, which op #%d reads, with no token-DAG order between them", b,
                    v->reads[b][k]);
    v->last_write[b] = i;
    v->nreads[b] = 0;
    return 0;
  }
  return add_read(v, b, i);
}

/* Whether token t may be used in block blk (0: outside blocks): a block's own tokens only in it;
 * the context's other tokens anywhere, except in a call's body, which sees only its inputs. */
static int blk_sees(const V *v, int blk, int t) {
  if (v->tok_blk[t] == blk)
    return 1;
  return blk > 0 && v->tok_blk[t] == 0 && v->c->ops[v->c->blocks[blk].op].kind != GEN_OP_CALL;
}

static int check_deps(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  if (o->ndeps < 0 || o->ndeps > GEN_MAX_DEPS)
    return fail(v, i, "has %d dependencies (at most %d)", o->ndeps, GEN_MAX_DEPS);
  for (int d = 0; d < o->ndeps; d++) {
    int t = o->deps[d];
    if (t < 0 || t >= c->ntoks || v->tok_src[t] == -1)
      return fail(v, i, "depends on token t%d, which is not defined before it", t, 0);
    if (v->tok_ctx[t] != o->ctx)
      return fail(v, i,
                  "depends on token t%d of another context (r%d); pass it through "
                  "yield/await or region inputs",
                  t, v->tok_ctx[t]);
    if (!blk_sees(v, o->blk, t))
      return fail(v, i,
                  "depends on token t%d, which is not visible in its block (a block's tokens stay "
                  "in it; a call's body sees only its inputs)",
                  t, 0);
    edge(v, v->tok_src[t], i);
  }
  return 0;
}

static int define_token(V *v, int i, int t, int src, int ctx) {
  if (t < 0 || t >= v->c->ntoks)
    return fail(v, i, "defines token t%d outside the token table", t, 0);
  if (v->tok_defs[t]++ > 0)
    return fail(v, i, "defines token t%d, which is already defined (tokens are never reused)", t,
                0);
  v->tok_src[t] = src;
  v->tok_ctx[t] = ctx;
  v->tok_blk[t] = 0;
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

/* An op's views lie inside their buffers; only a memcpy, memset or launch has any. Sets err. */
static int check_views(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  static const char *const side[2] = {"dst", "src"};
  int launch = o->kind == GEN_OP_LAUNCH;
  for (int k = 0; k < 3; k++) {
    const int32_t *w = o->view[k];
    int b = launch ? (k < o->nargs ? o->args[k] : -1) : k == 1 ? o->src : o->buf;
    char what[24];
    if (launch)
      snprintf(what, sizeof what, "argument %d", k);
    else
      snprintf(what, sizeof what, "%s", k < 2 ? side[k] : "third");
    if (w[1] <= 0)
      continue;
    if ((!launch && k == 2) || (k == 1 && o->kind == GEN_OP_MEMSET) || b < 0 || w[0] < 0 ||
        w[2] < 1 || (int64_t)w[0] + (int64_t)(w[1] - 1) * w[2] >= c->bufs[b].n)
      return af_err_set(v->err, AF_EINVALID,
                        "op #%d (%s): its %s view [%d, %d, %d] (offset, length, stride) lies "
                        "outside b%d (%d elements)",
                        i, gen_op_name(o->kind), what, w[0], w[1], w[2], b,
                        b >= 0 ? c->bufs[b].n : 0);
  }
  return 0;
}

/* A launch's buffers: device, i32, distinct, and of one length (views included). */
static int check_kernel_args(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  const GenBuf *B = c->bufs;
  if (check_views(v, i))
    return AF_EINVALID;
  for (int a = 0; a < o->nargs; a++) {
    if (B[o->args[a]].kind != GEN_BUF_DEVICE)
      return fail(v, i, "passes host buffer b%d to a kernel", o->args[a], 0);
    if (B[o->args[a]].elem != GEN_ELEM_I32)
      return fail(v, i, "passes b%d to a kernel, whose buffers are i32", o->args[a], 0);
    int32_t off, len, len0, stride;
    gen_op_view(c, o, a, &off, &len, &stride);
    gen_op_view(c, o, 0, &off, &len0, &stride);
    if (len != len0)
      return fail(v, i, "passes buffers or views of different sizes (b%d, b%d)", o->args[0],
                  o->args[a]);
    for (int a2 = 0; a2 < a; a2++)
      if (o->args[a] == o->args[a2])
        return fail(v, i, "passes b%d twice; kernel arguments must not alias", o->args[a], 0);
  }
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
    return fail(v, i, "unknown op kind %d", o->kind, 0);
  if ((f & GEN_K_BLOCK) && (o->block <= 0 || o->block >= c->nblocks || c->blocks[o->block].op != i))
    return fail(v, i, "names block %d, which it does not define", o->block, 0);
  int wants_tok = gen_op_has_token(c, o);
  if (wants_tok && o->tok < 0)
    return fail(v, i, "an async op must define a token", 0, 0);
  if (!wants_tok && o->tok >= 0)
    return fail(v, i, "defines token t%d but is synchronous", o->tok, 0);
  if (o->blk > 0 && (o->blk >= c->nblocks || c->blocks[o->blk].op >= i ||
                     c->ops[c->blocks[o->blk].op].ctx != o->ctx))
    return fail(v, i, "is in block %d, which does not begin before it in its context", o->blk, 0);
  if (o->blk > 0 && (rc = check_in_block(v, i)))
    return rc;
  if (!(f & GEN_K_VIEWS) && gen_op_has_view(o))
    return fail(v, i, "has a view; only a memcpy, memset or launch works on views", 0, 0);
  if (!gen_op_takes_deps(o) && o->ndeps)
    return fail(v, i, "a synchronous op takes no dependencies", 0, 0);
  int32_t bufs[4];
  int nb = gen_op_bufs(o, bufs);
  for (int k = 0; k < nb; k++)
    if (bufs[k] < 0 || bufs[k] >= c->nbufs)
      return fail(v, i, "names buffer %d, which does not exist", bufs[k], 0);
  return 0;
}

/* An op on an explicit stream (a launch given one, or a stream op): the stream must be one its
 * context created and has not destroyed; the op follows the work enqueued on it before. */
static int visit_stream(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  int s = o->stream;
  if (s < 0 && o->kind != GEN_OP_LAUNCH)
    return fail(v, i, "names no stream", 0, 0);
  if (s < 0)
    return 0;
  if (s >= c->nstreams)
    return fail(v, i, "names stream s%d, which does not exist", s, 0);
  if (o->kind == GEN_OP_STREAM_CREATE) {
    if (v->s_create[s] >= 0)
      return fail(v, i, "creates stream s%d a second time (first at op #%d)", s, v->s_create[s]);
    v->s_create[s] = i;
    return 0;
  }
  if (v->s_create[s] < 0)
    return fail(v, i, "uses stream s%d, which is not created before it", s, 0);
  if (v->s_destroy[s] >= 0)
    return fail(v, i, "uses stream s%d after its stream_destroy (op #%d)", s, v->s_destroy[s]);
  if (c->ops[v->s_create[s]].ctx != o->ctx)
    return fail(v, i,
                "uses stream s%d of another context (r%d); a stream is used where it is created", s,
                c->ops[v->s_create[s]].ctx);
  edge(v, v->s_last[s], i);
  if (o->kind == GEN_OP_LAUNCH)
    v->s_last[s] = i;
  if (o->kind == GEN_OP_STREAM_DESTROY)
    v->s_destroy[s] = i;
  return 0;
}

/* A call, if, for or branch op: its block's shape, and its inputs bound inside. */
static int visit_block(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  const GenBlock *k = &c->blocks[o->block];
  if (o->blk)
    return fail(v, i, "is in the body of another block (blocks do not nest)", 0, 0);
  if (o->kind == GEN_OP_BRANCH && o->ctx != 0)
    return fail(v, i, "a branch is in main only (an async.execute body has a single block)", 0, 0);
  if (o->kind == GEN_OP_FOR && (k->ninputs != 1 || k->yield < 0))
    return fail(v, i, "a for carries exactly one token: one input and one yielded token", 0, 0);
  if (o->kind == GEN_OP_FOR && (k->trips < 1 || k->trips > 64))
    return fail(v, i, "a for runs 1 to 64 iterations, not %d", k->trips, 0);
  if (k->ninputs < 0 || k->ninputs > GEN_MAX_REGION_IO || k->taken < 0 || k->taken > 1)
    return fail(v, i, "its block b%d is malformed", o->block, 0);
  if (o->kind == GEN_OP_IF && k->ninputs)
    return fail(v, i, "an if takes no inputs (its body uses the context's tokens directly)", 0, 0);
  int host = 0;
  for (int b = 0; b < c->nbufs; b++)
    host |= c->bufs[b].kind == GEN_BUF_HOST && c->bufs[b].elem == GEN_ELEM_I32;
  if (o->kind != GEN_OP_CALL && !host)
    return fail(v, i,
                "needs an i32 host buffer: its condition or trip count is computed at run time "
                "from the first one",
                0, 0);
  if (k->nbufargs < 0 || k->nbufargs > GEN_MAX_REGION_IO ||
      (k->nbufargs && o->kind != GEN_OP_BRANCH))
    return fail(v, i, "only a branch passes buffers as block arguments (at most 4)", 0, 0);
  for (int q = 0; q < k->nbufargs; q++) {
    int b = k->bufargs[q];
    if (b < 0 || b >= c->nbufs)
      return fail(v, i, "passes buffer %d, which does not exist, as a block argument", b, 0);
    if (v->alloc_node[b] == -2 || v->dealloc_node[b] >= 0 || !in_scope(c, o->ctx, v->alloc_ctx[b]))
      return fail(v, i, "passes b%d as a block argument where it is not allocated", b, 0);
    for (int p = 0; p < q; p++)
      if (k->bufargs[p] == b)
        return fail(v, i, "passes b%d twice as a block argument", b, 0);
  }
  for (int q = 0; q < k->ninputs; q++) {
    int t = k->inputs[q].outer;
    if (t < 0 || t >= c->ntoks || v->tok_src[t] == -1)
      return fail(v, i, "passes token t%d into its block, which is not defined before it", t, 0);
    if (v->tok_ctx[t] != o->ctx || v->tok_blk[t] != 0)
      return fail(v, i, "passes token t%d, which it does not see, into its block", t, 0);
    int rc = define_token(v, i, k->inputs[q].tok, v->tok_src[t], o->ctx);
    if (rc)
      return rc;
    v->tok_blk[k->inputs[q].tok] = o->block;
  }
  return 0;
}

/* A for's body repeats: every op must follow the carried token, the yielded token must follow
 * every op, and no op may write what an earlier op of the body read (each iteration then does
 * exactly what the first did). */
static int check_loop(V *v, int b) {
  const GenCase *c = v->c;
  const GenBlock *k = &c->blocks[b];
  int nt = c->ntoks, rc = 0;
  uint8_t *carried = af_calloc((size_t)nt + 1, 1), *need = af_calloc((size_t)nt + 1, 1);
  uint8_t *read = af_calloc((size_t)c->nbufs + 1, 1);
  if (!carried || !need || !read) {
    rc = af_err_set(v->err, AF_ENOMEM, "out of memory validating the case");
    goto out;
  }
  carried[k->inputs[0].tok] = 1;
  for (int j = k->first; j <= k->last && rc == 0; j++) {
    const GenOp *o = &c->ops[j];
    int ok = 0;
    for (int d = 0; d < o->ndeps; d++)
      ok |= carried[o->deps[d]];
    if (!ok)
      rc = fail(v, j,
                "in a for's body, does not follow the carried token (the next iteration "
                "would race with the last)",
                0, 0);
    else if (o->tok >= 0)
      carried[o->tok] = 1;
    int32_t bufs[4];
    int writes[4];
    int na = gen_op_accesses(c, j, bufs, writes);
    for (int q = 0; q < na && rc == 0; q++) {
      if (writes[q] && read[bufs[q]])
        rc = fail(v, j,
                  "writes b%d, which an earlier op of the for's body reads (iterations would "
                  "differ)",
                  bufs[q], 0);
      read[bufs[q]] |= !writes[q];
    }
  }
  need[k->yield] = 1;
  for (int j = k->last; j >= k->first && rc == 0; j--) {
    const GenOp *o = &c->ops[j];
    if (o->tok < 0 || !need[o->tok])
      rc = fail(v, j,
                "in a for's body, is not followed by the yielded token (the next iteration "
                "would race with it)",
                0, 0);
    for (int d = 0; d < o->ndeps && rc == 0; d++)
      need[o->deps[d]] = 1;
  }
out:
  af_free(read);
  af_free(need);
  af_free(carried);
  return rc;
}

/* The end of block b: its yield, a for's rules, and the op's token, bound to the yield. */
static int visit_block_end(V *v, int b) {
  const GenCase *c = v->c;
  const GenBlock *k = &c->blocks[b];
  const GenOp *o = &c->ops[k->op];
  int y = k->yield;
  if (y >= 0 &&
      (y >= c->ntoks || v->tok_src[y] == -1 || v->tok_ctx[y] != o->ctx || !blk_sees(v, b, y)))
    return fail(v, k->op, "its block yields token t%d, which the block does not see", y, 0);
  int rc = o->kind == GEN_OP_FOR ? check_loop(v, b) : 0;
  if (rc == 0 && o->tok >= 0)
    rc = define_token(v, k->op, o->tok, v->tok_src[y], o->ctx);
  return rc;
}

/* ---- each kind's rules: check_<lc> (GEN_OP_MAP), after the common ones (check_common) and the
 * op's dependencies; what the op does to the ordering graph and to its buffers' state. */

static int check_wait_async(V *v, int i) {
  (void)v, (void)i;
  return 0;
}

static int check_host_wait(V *v, int i) {
  return check_wait_async(v, i);
}

/* A device buffer for an alloc, dealloc or memset. */
static int device_buf(V *v, int i) {
  const GenOp *o = &v->c->ops[i];
  if (v->c->bufs[o->buf].kind != GEN_BUF_DEVICE)
    return fail(v, i, "b%d is a host buffer; this op needs a device buffer", o->buf, 0);
  return 0;
}

static int check_alloc(V *v, int i) {
  const GenOp *o = &v->c->ops[i];
  if ((o->mode == GEN_ALLOC_ASYNC) != (o->async != 0))
    return fail(v, i, "alloc mode and async flag disagree", 0, 0);
  if (device_buf(v, i))
    return AF_EINVALID;
  if (v->alloc_node[o->buf] != -2)
    return fail(v, i, "allocates b%d a second time (first at op #%d)", o->buf,
                v->alloc_node[o->buf]);
  v->alloc_node[o->buf] = i;
  v->alloc_ctx[o->buf] = o->ctx;
  return 0;
}

static int check_dealloc(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  int b = o->buf;
  if (device_buf(v, i))
    return AF_EINVALID;
  if (v->alloc_node[b] == -2)
    return fail(v, i, "deallocates b%d, which is never allocated before it", b, 0);
  if (v->dealloc_node[b] >= 0)
    return fail(v, i, "deallocates b%d twice (first at op #%d)", b, v->dealloc_node[b]);
  if (!in_scope(c, o->ctx, v->alloc_ctx[b]))
    return fail(v, i, "deallocates b%d outside the region that allocates it (r%d)", b,
                v->alloc_ctx[b]);
  if (!before(v, v->alloc_node[b], i))
    return fail(v, i, "dealloc of b%d is not ordered after its alloc (op #%d)", b,
                v->alloc_node[b]);
  if (v->last_write[b] >= 0 && !before(v, v->last_write[b], i))
    return fail(v, i, "dealloc of b%d is not ordered after op #%d, which uses it", b,
                v->last_write[b]);
  for (int k = 0; k < v->nreads[b]; k++)
    if (!before(v, v->reads[b][k], i))
      return fail(v, i, "dealloc of b%d is not ordered after op #%d, which uses it", b,
                  v->reads[b][k]);
  v->dealloc_node[b] = i;
  return 0;
}

static int check_memcpy(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  const GenBuf *B = c->bufs;
  if (o->buf == o->src)
    return fail(v, i, "copies b%d onto itself", o->buf, 0);
  if (B[o->buf].kind == GEN_BUF_HOST && B[o->src].kind == GEN_BUF_HOST)
    return fail(v, i, "copies host to host (b%d to b%d); gpu.memcpy needs a device side", o->src,
                o->buf);
  if (check_views(v, i))
    return AF_EINVALID;
  int32_t od, ld, sd, os, ls, ss;
  gen_op_view(c, o, 0, &od, &ld, &sd);
  gen_op_view(c, o, 1, &os, &ls, &ss);
  if (ld != ls)
    return fail(v, i, "copies between views or buffers of different sizes (%d and %d elements)", ls,
                ld);
  if (B[o->buf].elem != B[o->src].elem)
    return af_err_set(v->err, AF_EINVALID,
                      "op #%d (memcpy): copies between buffers of different types (%s to %s)", i,
                      gen_elem_name(B[o->src].elem), gen_elem_name(B[o->buf].elem));
  return 0;
}

static int check_memset(V *v, int i) {
  const GenOp *o = &v->c->ops[i];
  if (device_buf(v, i) || check_views(v, i))
    return AF_EINVALID;
  if (v->c->bufs[o->buf].elem == GEN_ELEM_I64)
    return fail(v, i,
                "sets b%d, an i64 buffer: no runtime call sets 64-bit elements (MLIR lowers "
                "16- and 32-bit memsets only)",
                o->buf, 0);
  return 0;
}

static int check_launch(V *v, int i) {
  const GenOp *o = &v->c->ops[i];
  if (o->kernel >= KERNEL__COUNT || o->nargs != kernel_info(o->kernel)->nbufs)
    return fail(v, i, "unknown kernel or wrong number of buffers", 0, 0);
  int rc = check_kernel_args(v, i);
  return rc ? rc : visit_stream(v, i);
}

static int check_stream_create(V *v, int i) {
  return visit_stream(v, i);
}

static int check_stream_sync(V *v, int i) {
  return visit_stream(v, i);
}

static int check_stream_destroy(V *v, int i) {
  return visit_stream(v, i);
}

static int check_observe(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  if (o->ctx != 0)
    return fail(v, i, "observe must be in the host's main function, not in region r%d", o->ctx, 0);
  if (c->bufs[o->buf].kind != GEN_BUF_HOST && v->alloc_node[o->buf] >= 0 &&
      c->ops[v->alloc_node[o->buf]].mode != GEN_ALLOC_HOST_SHARED)
    return fail(v, i,
                "observes device buffer b%d; the host can read only host or "
                "host_shared memory",
                o->buf, 0);
  return 0;
}

static int check_execute(V *v, int i) {
  const GenCase *c = v->c;
  int r = c->ops[i].region;
  if (r <= 0 || r >= c->nregions || c->regions[r].exec_op != i)
    return fail(v, i, "names region %d, which it does not define", r, 0);
  return 0;
}

static int check_await(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  int r = o->region;
  if (r <= 0 || r >= c->nregions || c->regions[r].exec_op >= i)
    return fail(v, i, "awaits region r%d before its execute op", r, 0);
  if (c->regions[r].parent != o->ctx)
    return fail(v, i, "awaits region r%d, which is spawned in another context (r%d)", r,
                c->regions[r].parent);
  if (o->vidx >= c->regions[r].nyields)
    return fail(v, i, "awaits value %d of r%d, which yields fewer values", o->vidx, r);
  edge(v, END(v, r), i);
  v->awaited[r] = 1;
  return 0;
}

static int check_call(V *v, int i) {
  return visit_block(v, i);
}

static int check_if(V *v, int i) {
  return visit_block(v, i);
}

static int check_for(V *v, int i) {
  return visit_block(v, i);
}

static int check_branch(V *v, int i) {
  return visit_block(v, i);
}

static int (*const checkers[GEN_OP__COUNT])(V *v, int i) = {
#define GEN__CHECKER(id, lc, name, mlir, weight, flags) [GEN_OP_##id] = check_##lc,
    GEN_OP_MAP(GEN__CHECKER)
#undef GEN__CHECKER
};

static int visit_op(V *v, int i) {
  const GenCase *c = v->c;
  const GenOp *o = &c->ops[i];
  int rc;
  if (o->ctx < 0 || o->ctx >= c->nregions)
    return fail(v, i, "is in context %d, which does not exist", o->ctx, 0);
  if ((rc = check_common(v, i)))
    return rc;
  edge(v, v->last_sync[o->ctx], i);
  if ((rc = check_deps(v, i)) || (rc = checkers[o->kind](v, i)))
    return rc;
  int wb = o->kind == GEN_OP_LAUNCH ? o->args[0] : o->buf; /* (a launch is its args) */
  if ((gen_op_flags(o->kind) & GEN_K_VIEWS) && o->view[0][1] > 0 && v->last_write[wb] == -2)
    return fail(v, i,
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
    if ((rc = define_token(v, i, o->tok, src, o->ctx)))
      return rc;
    v->tok_blk[o->tok] = o->blk;
  }
  if (gen_op_is_sync(o))
    v->last_sync[o->ctx] = i;
  return 0;
}

static int visit_start(V *v, int r) {
  const GenCase *c = v->c;
  const GenRegion *g = &c->regions[r];
  int node = START(v, r);
  edge(v, g->exec_op, node);
  for (int k = 0; k < g->ninputs; k++) {
    const GenRegionInput *in = &g->inputs[k];
    if (in->region <= 0 || in->region >= r || c->regions[in->region].exec_op >= g->exec_op)
      return fail(v, g->exec_op,
                  "region r%d consumes a value of r%d, which is not spawned "
                  "before it",
                  r, in->region);
    if (c->regions[in->region].parent != g->parent)
      return fail(v, g->exec_op, "region r%d consumes a value of r%d, spawned in another context",
                  r, in->region);
    if (in->vidx < 0 || in->vidx >= c->regions[in->region].nyields)
      return fail(v, g->exec_op, "region r%d consumes value %d, which its source does not yield", r,
                  in->vidx);
    edge(v, END(v, in->region), node);
    int src = v->tok_src[c->regions[in->region].yields[in->vidx]];
    int rc = define_token(v, g->exec_op, in->tok, src, r);
    if (rc)
      return rc;
  }
  for (int k = 0; k < g->ncaptures; k++) {
    int t = g->captures[k].outer;
    if (t < 0 || t >= c->ntoks || v->tok_src[t] == -1)
      return fail(v, g->exec_op, "region r%d captures token t%d, which is not defined before it", r,
                  t);
    if (v->tok_ctx[t] != g->parent || v->tok_blk[t] != 0)
      return fail(v, g->exec_op,
                  "region r%d captures token t%d of another context (a nested region captures "
                  "what its parent captured)",
                  r, t);
    int rc = define_token(v, g->exec_op, g->captures[k].tok, v->tok_src[t], r);
    if (rc)
      return rc;
  }
  v->last_sync[r] = node;
  return 0;
}

static int visit_end(V *v, int r) {
  const GenRegion *g = &v->c->regions[r];
  for (int k = 0; k < g->nyields; k++) {
    int t = g->yields[k];
    if (t < 0 || t >= v->c->ntoks || v->tok_src[t] == -1 || v->tok_ctx[t] != r ||
        v->tok_blk[t] != 0)
      return fail(v, g->exec_op, "region r%d yields token t%d, which it does not define", r, t);
  }
  edge(v, v->last_sync[r], END(v, r));
  return 0;
}

int gen_validate(const GenCase *c, AfErr *err) {
  V v;
  memset(&v, 0, sizeof v);
  v.c = c;
  v.err = err;
  int rc = 0;
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
  v.nnodes = c->nops + 2 * c->nregions;
  v.words = (v.nnodes + 63) / 64;
  int nb = c->nbufs, nt = c->ntoks, nr = c->nregions, ns = c->nstreams;
  v.reach = af_calloc((size_t)v.nnodes * (size_t)v.words + 1, sizeof(uint64_t));
  v.tok_src = af_malloc(sizeof(int) * (size_t)(nt + 1));
  v.tok_ctx = af_malloc(sizeof(int) * (size_t)(nt + 1));
  v.tok_blk = af_calloc((size_t)nt + 1, sizeof(int));
  v.tok_defs = af_calloc((size_t)nt + 1, sizeof(int));
  v.last_sync = af_malloc(sizeof(int) * (size_t)nr);
  v.awaited = af_calloc((size_t)nr, sizeof(int));
  v.alloc_node = af_malloc(sizeof(int) * (size_t)(nb + 1));
  v.alloc_ctx = af_malloc(sizeof(int) * (size_t)(nb + 1));
  v.dealloc_node = af_malloc(sizeof(int) * (size_t)(nb + 1));
  v.last_write = af_malloc(sizeof(int) * (size_t)(nb + 1));
  v.nreads = af_calloc((size_t)nb + 1, sizeof(int));
  v.capreads = af_calloc((size_t)nb + 1, sizeof(int));
  v.reads = af_calloc((size_t)nb + 1, sizeof(int *));
  v.s_create = af_malloc(sizeof(int) * (size_t)(ns + 1));
  v.s_last = af_malloc(sizeof(int) * (size_t)(ns + 1));
  v.s_destroy = af_malloc(sizeof(int) * (size_t)(ns + 1));
  if (!v.reach || !v.tok_src || !v.tok_ctx || !v.tok_blk || !v.tok_defs || !v.last_sync ||
      !v.awaited || !v.alloc_node || !v.alloc_ctx || !v.dealloc_node || !v.last_write ||
      !v.nreads || !v.capreads || !v.reads || !v.s_create || !v.s_last || !v.s_destroy) {
    rc = af_err_set(err, AF_ENOMEM, "out of memory validating the case");
    goto out;
  }
  for (int t = 0; t < nt; t++)
    v.tok_src[t] = -1;
  for (int r = 0; r < nr; r++)
    v.last_sync[r] = -1;
  for (int s = 0; s < ns; s++)
    v.s_create[s] = v.s_last[s] = v.s_destroy[s] = -1;
  for (int b = 0; b < nb; b++) {
    const GenBuf *gb = &c->bufs[b];
    if (gb->stat && gb->kind != GEN_BUF_DEVICE) {
      rc = af_err_set(err, AF_EINVALID, "buffer b%d: only a device buffer has a static shape", b);
      goto out;
    }
    if (gb->n <= 0 || gb->n > 1024) {
      rc = af_err_set(err, AF_EINVALID, "buffer b%d has %d elements (1..1024)", b, gb->n);
      goto out;
    }
    v.alloc_node[b] = gb->kind == GEN_BUF_HOST ? -1 : -2;
    v.alloc_ctx[b] = 0;
    v.dealloc_node[b] = -1;
    v.last_write[b] = gb->kind == GEN_BUF_HOST ? -1 : -2; /* host buffers: written at start */
  }
  for (int i = 0; i < c->nops && rc == 0; i++) {
    rc = visit_op(&v, i);
    if (rc == 0 && c->ops[i].kind == GEN_OP_EXECUTE)
      rc = visit_start(&v, c->ops[i].region);
    /* the block that ends here: the one this op is in, or its own when empty */
    int k = c->ops[i].blk > 0 ? c->ops[i].blk : c->ops[i].kind >= GEN_OP_CALL ? c->ops[i].block : 0;
    if (rc == 0 && k > 0 && k < c->nblocks &&
        (c->blocks[k].last >= c->blocks[k].first ? c->blocks[k].last : c->blocks[k].op) == i)
      rc = visit_block_end(&v, k);
    for (int r = nr - 1; r >= 1 && rc == 0; r--) {
      const GenRegion *g = &c->regions[r];
      int last = g->last >= g->first ? g->last : g->exec_op;
      if (last == i)
        rc = visit_end(&v, r);
    }
  }
  for (int r = 1; r < nr && rc == 0; r++)
    if (!v.awaited[r])
      rc = af_err_set(err, AF_EINVALID,
                      "region r%d (op #%d) is never awaited by the context that spawns it", r,
                      c->regions[r].exec_op);
  for (int s = 0; s < ns && rc == 0; s++)
    if (v.s_create[s] >= 0 && v.s_destroy[s] < 0)
      rc = af_err_set(err, AF_EINVALID,
                      "stream s%d (created by op #%d) is never destroyed; a program destroys the "
                      "streams it creates",
                      s, v.s_create[s]);
out:
  if (v.reads)
    for (int b = 0; b < nb; b++)
      af_free(v.reads[b]);
  af_free(v.reads);
  af_free(v.s_destroy);
  af_free(v.s_last);
  af_free(v.s_create);
  af_free(v.capreads);
  af_free(v.nreads);
  af_free(v.last_write);
  af_free(v.dealloc_node);
  af_free(v.alloc_ctx);
  af_free(v.alloc_node);
  af_free(v.awaited);
  af_free(v.last_sync);
  af_free(v.tok_defs);
  af_free(v.tok_ctx);
  af_free(v.tok_blk);
  af_free(v.tok_src);
  af_free(v.reach);
  return rc;
}
