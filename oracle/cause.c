/*
 * cause.c: the link of the case that an execution failed to provide (oracle.h,
 * oracle_missing_link; the rule is docs/signatures.md).
 *
 * The case's ordering graph is the one validate.c builds (every op, plus a start and an end
 * node per region), with each edge labelled by the mechanism that carries it. Given the two
 * ops of a checker report, the earlier one's call s, and what each op knew when it acted
 * (hb_op_knows), a node on a path from the first op to the second is "reached" when it knew
 * s. The first op is reached and the second is not, so some edge of some path goes from a
 * reached node to one that is not: the first such edge in the case's order is the cause.
 *
 * A node that made no call (a region's start or end, an async op the lowering folded away)
 * passes on what its predecessors knew; a synchronous op that made none (a host wait lowered
 * to nothing) knew nothing, since blocking the host takes a call.
 */
#include "oracle.h"

#include <stdio.h>
#include <string.h>

static const char *const link_names[] = {
#define ORACLE__LNAME(id, name) name,
    ORACLE_LINK_MAP(ORACLE__LNAME)
#undef ORACLE__LNAME
};

const char *oracle_link_name(int mech) {
  return mech >= 0 && mech < ORACLE_LINK__COUNT ? link_names[mech] : "?";
}

typedef struct Edge {
  int from, to, mech, dep;
} Edge;

typedef struct G {
  const GenCase *c;
  int nnodes;
  int nedges, capedges;
  Edge *edges;
  int *order, norder; /* nodes in the case's order */
  int *pos;           /* position of each node in order */
  int *tok_src, *tok_how, *last_sync;
  int *tok_prev; /* the token a crossing one stands for (its outer token, the yield), or -1 */
  int *tok_reg;  /* a captured token: the region that captured it */
  int *s_last;   /* per explicit stream: its last launch so far */
  int *closes;   /* the regions each op ends (gen_region_ends), then each region's next */
  int oom;
} G;

enum {
  HOW_OP,
  HOW_AWAIT,
  HOW_INPUT,
  HOW_CAPTURE,
  HOW_CALL_ARG,
  HOW_CALL_RESULT,
  HOW_IF_RESULT,
  HOW_ITER,
  HOW_LOOP_RESULT,
  HOW_BRANCH_ARG,
  HOW_MERGE
};

#define START(g, r) ((g)->c->nops + 2 * (r))
#define END(g, r) ((g)->c->nops + 2 * (r) + 1)

static void add_edge(G *g, int from, int to, int mech, int dep) {
  if (from < 0 || from >= g->nnodes || to < 0 || to >= g->nnodes)
    return;
  if (af_grow((void **)&g->edges, &g->capedges, g->nedges + 1, sizeof(Edge))) {
    g->oom = 1;
    return;
  }
  g->edges[g->nedges++] = (Edge){from, to, mech, dep};
}

static void visit(G *g, int node) {
  g->pos[node] = g->norder;
  g->order[g->norder++] = node;
}

/* A token link's mechanism: what the consumer does with the token decides it (block the host,
 * order a free, wait for an extra dependency), except that a first dependency that crossed a
 * region boundary is named by how it crossed. */
static int dep_mech(const GenOp *o, int how, int d) {
  if (o->kind == GEN_OP_WAIT_ASYNC) /* its own stream waits for every dependency alike */
    return ORACLE_LINK_EXTRA_DEP;
  if (o->kind == GEN_OP_HOST_WAIT)
    return ORACLE_LINK_HOST_WAIT;
  if (d > 0) /* (a dealloc's too: the op is ordered after one dependency, not another) */
    return ORACLE_LINK_EXTRA_DEP;
  if (o->kind == GEN_OP_DEALLOC)
    return ORACLE_LINK_DEALLOC;
  if (how == HOW_AWAIT)
    return ORACLE_LINK_AWAIT_VALUE;
  if (how == HOW_INPUT)
    return ORACLE_LINK_REGION_INPUT;
  if (how == HOW_CAPTURE)
    return ORACLE_LINK_CAPTURE;
  /* a block's boundary is named only where it evidently lost the token (block_link) */
  return ORACLE_LINK_OWN_DEP;
}

/* The link a block's boundary carries, by how a token crossed it. */
static int block_mech(int how) {
  static const int by_how[] = {
      [HOW_CALL_ARG] = ORACLE_LINK_CALL_ARG,       [HOW_CALL_RESULT] = ORACLE_LINK_CALL_RESULT,
      [HOW_IF_RESULT] = ORACLE_LINK_IF_RESULT,     [HOW_ITER] = ORACLE_LINK_LOOP_CARRIED,
      [HOW_LOOP_RESULT] = ORACLE_LINK_LOOP_RESULT, [HOW_BRANCH_ARG] = ORACLE_LINK_BRANCH_ARG,
      [HOW_MERGE] = ORACLE_LINK_MERGE_ARG};
  return how >= HOW_CALL_ARG && how <= HOW_MERGE ? by_how[how] : -1;
}

static void op_edges(G *g, int i) {
  const GenCase *c = g->c;
  const GenOp *o = &c->ops[i];
  int ctx = o->ctx >= 0 && o->ctx < c->nregions ? o->ctx : 0;
  add_edge(g, g->last_sync[ctx], i, ORACLE_LINK_PROGRAM, -1);
  if (o->stream >= 0 && o->stream < c->nstreams) {
    add_edge(g, g->s_last[o->stream], i, ORACLE_LINK_STREAM_ORDER, -1);
    if (gen_op_flags(o->kind) & GEN_K_ON_STREAM)
      g->s_last[o->stream] = i;
  }
  for (int d = 0; d < o->ndeps && d < GEN_MAX_DEPS; d++) {
    int t = o->deps[d];
    if (t >= 0 && t < c->ntoks)
      add_edge(g, g->tok_src[t], i, dep_mech(o, g->tok_how[t], d), d);
  }
  if (o->kind == GEN_OP_AWAIT && o->region > 0 && o->region < c->nregions)
    add_edge(g, END(g, o->region), i, ORACLE_LINK_AWAIT, -1);
  if ((gen_op_flags(o->kind) & GEN_K_BLOCK) && o->block > 0 && o->block < c->nblocks) {
    const GenBlock *k = &c->blocks[o->block];
    int how = o->kind == GEN_OP_CALL  ? HOW_CALL_ARG
              : o->kind == GEN_OP_FOR ? HOW_ITER
                                      : HOW_BRANCH_ARG;
    for (int q = 0; q < k->ninputs && q < GEN_MAX_REGION_IO; q++) {
      int t = k->inputs[q].outer, in = k->inputs[q].tok;
      if (t >= 0 && t < c->ntoks && in >= 0 && in < c->ntoks) {
        g->tok_src[in] = g->tok_src[t];
        g->tok_how[in] = how;
        g->tok_prev[in] = t;
      }
    }
    return; /* its token: at the block's end (block_end) */
  }
  if (o->tok >= 0 && o->tok < c->ntoks) {
    g->tok_src[o->tok] = i;
    g->tok_how[o->tok] = HOW_OP;
    if (o->kind == GEN_OP_AWAIT && o->region > 0 && o->region < c->nregions && o->vidx >= 0 &&
        o->vidx < c->regions[o->region].nyields) {
      int y = c->regions[o->region].yields[o->vidx];
      g->tok_src[o->tok] = y >= 0 && y < c->ntoks ? g->tok_src[y] : -1;
      g->tok_how[o->tok] = HOW_AWAIT;
      g->tok_prev[o->tok] = y >= 0 && y < c->ntoks ? y : -1;
    }
  }
  if (gen_op_is_sync(o))
    g->last_sync[ctx] = i;
}

static void start_edges(G *g, int r) {
  const GenCase *c = g->c;
  const GenRegion *rg = &c->regions[r];
  add_edge(g, rg->exec_op, START(g, r), ORACLE_LINK_SPAWN, -1);
  for (int k = 0; k < rg->ninputs && k < GEN_MAX_REGION_IO; k++) {
    const GenRegionInput *in = &rg->inputs[k];
    if (in->region <= 0 || in->region >= c->nregions)
      continue;
    add_edge(g, END(g, in->region), START(g, r), ORACLE_LINK_REGION_INPUT, -1);
    const GenRegion *src = &c->regions[in->region];
    if (in->tok >= 0 && in->tok < c->ntoks && in->vidx >= 0 && in->vidx < src->nyields) {
      int y = src->yields[in->vidx];
      g->tok_src[in->tok] = y >= 0 && y < c->ntoks ? g->tok_src[y] : -1;
      g->tok_how[in->tok] = HOW_INPUT;
      g->tok_prev[in->tok] = y >= 0 && y < c->ntoks ? y : -1;
    }
  }
  for (int k = 0; k < rg->ncaptures && k < GEN_MAX_REGION_IO; k++) {
    int t = rg->captures[k].outer, in = rg->captures[k].tok;
    if (t >= 0 && t < c->ntoks && in >= 0 && in < c->ntoks) {
      g->tok_src[in] = g->tok_src[t];
      g->tok_how[in] = HOW_CAPTURE;
      g->tok_prev[in] = t;
      g->tok_reg[in] = r;
    }
  }
  g->last_sync[r] = START(g, r);
}

/* The end of block b: the op's token stands for the yielded one. */
static void block_end(G *g, int b) {
  const GenCase *c = g->c;
  const GenBlock *k = &c->blocks[b];
  const GenOp *o = &c->ops[k->op];
  if (o->tok < 0 || o->tok >= c->ntoks || k->yield < 0 || k->yield >= c->ntoks)
    return;
  g->tok_src[o->tok] = g->tok_src[k->yield];
  g->tok_prev[o->tok] = k->yield;
  g->tok_how[o->tok] = o->kind == GEN_OP_CALL  ? HOW_CALL_RESULT
                       : o->kind == GEN_OP_IF  ? HOW_IF_RESULT
                       : o->kind == GEN_OP_FOR ? HOW_LOOP_RESULT
                                               : HOW_MERGE;
}

/* The graph, in the order validate.c visits it. 0 or AF_ENOMEM. */
static int build(G *g, const GenCase *c) {
  memset(g, 0, sizeof *g);
  g->c = c;
  g->nnodes = c->nops + 2 * (c->nregions > 0 ? c->nregions : 1);
  g->order = af_malloc(sizeof(int) * (size_t)g->nnodes);
  g->pos = af_malloc(sizeof(int) * (size_t)g->nnodes);
  g->tok_src = af_malloc(sizeof(int) * (size_t)(c->ntoks + 1));
  g->tok_how = af_calloc((size_t)c->ntoks + 1, sizeof(int));
  g->last_sync = af_malloc(sizeof(int) * (size_t)(c->nregions + 1));
  g->s_last = af_malloc(sizeof(int) * (size_t)(c->nstreams + 1));
  g->tok_prev = af_malloc(sizeof(int) * (size_t)(c->ntoks + 1));
  g->tok_reg = af_calloc((size_t)c->ntoks + 1, sizeof(int));
  g->closes = af_malloc(sizeof(int) * (size_t)(c->nops + c->nregions + 1));
  if (!g->order || !g->pos || !g->tok_src || !g->tok_how || !g->last_sync || !g->s_last ||
      !g->tok_prev || !g->tok_reg || !g->closes)
    return AF_ENOMEM;
  int *next = g->closes + c->nops;
  gen_region_ends(c, g->closes, next);
  for (int t = 0; t < c->ntoks; t++)
    g->tok_prev[t] = -1;
  for (int s = 0; s < c->nstreams; s++)
    g->s_last[s] = -1;
  for (int n = 0; n < g->nnodes; n++)
    g->pos[n] = -1;
  for (int t = 0; t < c->ntoks; t++)
    g->tok_src[t] = -1;
  for (int r = 0; r <= c->nregions; r++)
    g->last_sync[r] = -1;
  for (int i = 0; i < c->nops; i++) {
    visit(g, i);
    op_edges(g, i);
    const GenOp *o = &c->ops[i];
    if (o->kind == GEN_OP_EXECUTE && o->region > 0 && o->region < c->nregions) {
      visit(g, START(g, o->region));
      start_edges(g, o->region);
    }
    int kb = o->blk > 0 ? o->blk : (gen_op_flags(o->kind) & GEN_K_BLOCK) ? o->block : 0;
    if (kb > 0 && kb < c->nblocks &&
        (c->blocks[kb].last >= c->blocks[kb].first ? c->blocks[kb].last : c->blocks[kb].op) == i)
      block_end(g, kb);
    for (int r = g->closes[i]; r >= 1; r = next[r])
      if (g->pos[END(g, r)] < 0) {
        visit(g, END(g, r));
        add_edge(g, g->last_sync[r], END(g, r), ORACLE_LINK_REGION_END, -1);
      }
  }
  return g->oom ? AF_ENOMEM : 0;
}

static void release(G *g) {
  af_free(g->edges);
  af_free(g->order);
  af_free(g->pos);
  af_free(g->tok_src);
  af_free(g->tok_how);
  af_free(g->last_sync);
  af_free(g->s_last);
  af_free(g->tok_prev);
  af_free(g->tok_reg);
  af_free(g->closes);
}

/* Whether node n knew call s: 1, 0, or -1 when it made no call that says. */
static int knew(const G *g, const HbResult *k, int n, int32_t s) {
  if (n >= g->c->nops)
    return -1; /* a region's start or end */
  int r = hb_op_knows(k, n, s);
  if (r < 0 && gen_op_is_sync(&g->c->ops[n]))
    return 0;
  return r;
}

/* Whether the captures of region r arrived with nothing handed over: its execute op recorded
 * no event and waited on nothing for them before it spawned the region (its calls after are
 * its yield's). Unknown (0) without a trace. */
static int capture_unhanded(const GenCase *c, int r, const RtRec *trace, int ntrace) {
  if (trace == NULL || r <= 0 || r >= c->nregions)
    return 0;
  int exec = c->regions[r].exec_op;
  for (int i = 0; i < ntrace; i++) {
    if (trace[i].op == exec && trace[i].call == RT_CALL_SPAWN)
      break;
    if (trace[i].op == exec &&
        (trace[i].call == RT_CALL_EVENT_RECORD || trace[i].call == RT_CALL_STREAM_WAIT_EVENT))
      return 0;
  }
  return 1;
}

/* Whether block op b's token arrived with nothing in it: its op created an event it never
 * recorded (the consumers of that token wait for nothing). Unknown (0) without a trace. */
static int result_unhanded(const GenCase *c, int b, const RtRec *trace, int ntrace) {
  if (trace == NULL || b < 0 || b >= c->nops)
    return 0;
  int made = 0, recorded = 0;
  for (int i = 0; i < ntrace; i++) {
    made += trace[i].op == b && trace[i].call == RT_CALL_EVENT_CREATE;
    recorded += trace[i].op == b && trace[i].call == RT_CALL_EVENT_RECORD;
  }
  return made > recorded;
}

/* Whether block op b handed its inputs over with nothing: it recorded no event before its body's
 * first call (a lowering that hands a token into a body records one). Unknown (0) without a
 * trace, or when the block has no input. */
static int input_unhanded(const GenCase *c, int b, const RtRec *trace, int ntrace) {
  if (trace == NULL || b < 0 || b >= c->nops || !(gen_op_flags(c->ops[b].kind) & GEN_K_BLOCK) ||
      c->blocks[c->ops[b].block].ninputs == 0)
    return 0;
  int k = c->ops[b].block, ran = 0;
  for (int i = 0; i < ntrace; i++) {
    int op = trace[i].op;
    if (op == b && trace[i].call == RT_CALL_EVENT_RECORD)
      return 0;
    if (op >= 0 && op < c->nops && c->ops[op].blk == k)
      ran = 1;
    if (ran)
      break;
  }
  return 1;
}

/* The block op whose boundary token t crossed (an input bound inside it, or its own token). */
static int block_of(const GenCase *c, int t) {
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    if (!(gen_op_flags(o->kind) & GEN_K_BLOCK))
      continue;
    if (o->tok == t)
      return i;
    const GenBlock *k = &c->blocks[o->block];
    for (int q = 0; q < k->ninputs; q++)
      if (k->inputs[q].tok == t)
        return i;
  }
  return -1;
}

/* Whether the lowering ordered op n (its calls after record seq) after the source of one of its
 * dependencies other than `skip` (1 too when the trace cannot say). */
static int ordered_after_a_dep(const G *g, const RtRec *trace, int ntrace, int n, int skip,
                               int32_t seq) {
  const GenOp *o = &g->c->ops[n];
  OracleSyncs sy;
  if (trace == NULL || !oracle_consumer_syncs(trace, ntrace, n, seq, &sy))
    return 1;
  for (int d = 0; d < o->ndeps && d < GEN_MAX_DEPS; d++) {
    int t = o->deps[d], src = d != skip && t >= 0 && t < g->c->ntoks ? g->tok_src[t] : -1;
    /* (a dependency whose op put nothing on a stream: the op is ordered after it when it
     * synchronized with anything but a stream of its own) */
    int after = src >= 0 && src < g->c->nops ? oracle_ordered_after(trace, &sy, src) : 0;
    if (after > 0 || (after < 0 && oracle_synced_elsewhere(trace, &sy, n)))
      return 1;
  }
  return 0;
}

/* The link of consumer n's dependency dep that lost the order, when it is a crossing on the
 * token's way rather than n's own: out changed then. */
static void crossing_link(const G *g, const RtRec *trace, int ntrace, int n, int dep, int32_t seq,
                          OracleLink *out) {
  const GenCase *c = g->c;
  int t0 = c->ops[n].deps[dep], first = -1;
  /* a captured token for which nothing was handed over is itself the missing link, for
   * whatever consumer (the same token's other consumers miss it too), and wherever the token
   * went after the capture (into a call, a block, a region: what those handed over was already
   * nothing) */
  for (int t = t0, guard = 0; t >= 0 && t < c->ntoks && guard <= c->ntoks; guard++) {
    if (g->tok_how[t] == HOW_CAPTURE && capture_unhanded(c, g->tok_reg[t], trace, ntrace)) {
      out->mech = ORACLE_LINK_CAPTURE;
      return;
    }
    t = g->tok_prev[t];
  }
  for (int t = t0, guard = 0; t >= 0 && t < c->ntoks && guard <= c->ntoks; guard++) {
    /* so is a block's boundary that carried nothing: inputs handed over without an event, or a
     * token whose event was never recorded */
    int bm = block_mech(g->tok_how[t]), bop = bm >= 0 ? block_of(c, t) : -1;
    int in = g->tok_how[t] == HOW_CALL_ARG || g->tok_how[t] == HOW_ITER ||
             g->tok_how[t] == HOW_BRANCH_ARG;
    if (bop >= 0 &&
        (in ? input_unhanded(c, bop, trace, ntrace) : result_unhanded(c, bop, trace, ntrace))) {
      out->mech = bm;
      out->from = bop;
      return;
    }
    if (bop >= 0)
      first = t; /* (walking back: the last found is the first the token crossed) */
    t = g->tok_prev[t];
  }
  /* a token that carried some other op's order: the consumer synchronized, with something
   * other than the token's source, so the value changed on its way: at the first block
   * boundary it crossed (the later ones passed on what they were given) */
  OracleSyncs sy;
  int src = g->tok_src[t0];
  if (first < 0 || trace == NULL || src < 0 || src >= c->nops ||
      (out->mech != ORACLE_LINK_OWN_DEP && out->mech != ORACLE_LINK_HOST_WAIT &&
       out->mech != ORACLE_LINK_DEALLOC) ||
      !oracle_consumer_syncs(trace, ntrace, n, seq, &sy) ||
      oracle_ordered_after(trace, &sy, src) != 0 || !oracle_synced_elsewhere(trace, &sy, n))
    return;
  out->mech = block_mech(g->tok_how[first]);
  out->from = block_of(c, first);
}

/* Whether op i copies from the device into a registered host buffer. */
static int registered_copy(const GenCase *c, int i) {
  if (i < 0 || i >= c->nops || c->ops[i].kind != GEN_OP_MEMCPY)
    return 0;
  const GenOp *o = &c->ops[i];
  return o->buf >= 0 && o->buf < c->nbufs && o->src >= 0 && o->src < c->nbufs &&
         c->bufs[o->buf].reg && c->bufs[o->src].kind == GEN_BUF_DEVICE;
}

/* Whether the run shows host waits lowered to nothing whatever they wait on: a host wait with
 * a dependency that is not a registered copy's, whose op made a call (work to wait for), made no
 * stream or event synchronization. */
static int host_waits_dropped(const GenCase *c, const RtRec *trace, int ntrace) {
  int found = 0;
  for (int h = 0; h < c->nops && !found; h++) {
    const GenOp *o = &c->ops[h];
    if (o->kind != GEN_OP_HOST_WAIT)
      continue;
    int work = 0, blocked = 0;
    for (int d = 0; d < o->ndeps && d < GEN_MAX_DEPS && !work; d++) {
      int src = -1;
      for (int i = 0; i < c->nops && src < 0; i++)
        if (c->ops[i].tok == o->deps[d] && gen_op_async(&c->ops[i]))
          src = i;
      for (int j = 0; src >= 0 && !registered_copy(c, src) && j < ntrace && !work; j++)
        work = trace[j].op == src && trace[j].tid >= 0;
    }
    for (int j = 0; work && j < ntrace && !blocked; j++)
      blocked = trace[j].op == h && (trace[j].call == RT_CALL_STREAM_SYNCHRONIZE ||
                                     trace[j].call == RT_CALL_EVENT_SYNCHRONIZE);
    found = work && !blocked;
  }
  return found;
}

/* Whether async copy or set op i made its calls on the default (legacy) stream: its token's
 * stream, which its consumers wait on, holds none of its work (the lowering took the path of an
 * op without a stream). */
static int on_default_stream(const GenCase *c, int i, const RtRec *trace, int ntrace) {
  if (i < 0 || i >= c->nops || !gen_op_async(&c->ops[i]) ||
      (c->ops[i].kind != GEN_OP_MEMCPY && c->ops[i].kind != GEN_OP_MEMSET))
    return 0;
  for (int j = 0; trace && j < ntrace; j++) {
    const RtRec *r = &trace[j];
    if (r->op != i ||
        (r->call != RT_CALL_MEMCPY && r->call != RT_CALL_MEMSET32 && r->call != RT_CALL_MEMSET16))
      continue;
    for (int a = 0; a < r->nargs && a < RT_REC_ARGS; a++)
      if (RT_REF_KIND(r->args[a]) == RT_REF_STREAM)
        return RT_REF_ID(r->args[a]) == 0;
  }
  return 0;
}

int oracle_missing_link(const GenCase *c, const HbResult *k, const RtRec *trace, int ntrace,
                        int from, int32_t seq, int to, OracleLink *out) {
  memset(out, 0, sizeof *out);
  out->from = out->to = out->dep = -1;
  out->mech = -1;
  if (from < 0 || from >= c->nops || to < 0 || to >= c->nops || k == NULL || k->know == NULL)
    return 0;
  G g;
  int rc = build(&g, c);
  uint8_t *flag = rc ? NULL : af_calloc((size_t)g.nnodes, 1); /* 1 desc, 2 anc, 4 reached */
  if (flag == NULL) {
    release(&g);
    return AF_ENOMEM;
  }
  /* descendants of `from`, ancestors of `to`: edges go forward in the order */
  flag[from] |= 1;
  for (int p = g.pos[from] + 1; p < g.norder; p++)
    for (int e = 0; e < g.nedges; e++)
      if (g.edges[e].to == g.order[p] && (flag[g.edges[e].from] & 1))
        flag[g.order[p]] |= 1;
  flag[to] |= 2;
  for (int p = g.pos[to]; p >= 0; p--)
    for (int e = 0; e < g.nedges; e++)
      if (g.edges[e].from == g.order[p] && (flag[g.edges[e].to] & 2))
        flag[g.order[p]] |= 2;
  flag[from] |= 4;
  for (int p = g.pos[from] + 1; p < g.norder && out->mech < 0; p++) {
    int n = g.order[p];
    if ((flag[n] & 3) != 3)
      continue;
    int kn = knew(&g, k, n, seq);
    int first = -1; /* the first edge from a reached node on the path */
    for (int e = 0; e < g.nedges; e++) {
      const Edge *x = &g.edges[e];
      if (x->to == n && (flag[x->from] & 7) == 7 && first < 0)
        first = e;
    }
    if (kn == 1 || (kn < 0 && first >= 0)) {
      flag[n] |= 4;
      continue;
    }
    if (first >= 0) {
      const Edge *x = &g.edges[first];
      out->from = x->from < c->nops ? x->from : -1;
      out->to = n < c->nops ? n : -1;
      out->mech = x->mech;
      out->dep = x->dep;
      /* a dependency after the first is the link only when the lowering ordered the op after
       * another of its dependencies: one ordered after none of them lacked its own ordering */
      if (x->mech == ORACLE_LINK_EXTRA_DEP &&
          !ordered_after_a_dep(&g, trace, ntrace, n, x->dep, seq))
        out->mech = c->ops[n].kind == GEN_OP_DEALLOC ? ORACLE_LINK_DEALLOC : ORACLE_LINK_OWN_DEP;
      /* a region's crossing is the link only where the consumer synchronized at all: one
       * that waited for nothing, on a stream of its own, lacked its own ordering */
      if ((x->mech == ORACLE_LINK_AWAIT_VALUE || x->mech == ORACLE_LINK_REGION_INPUT ||
           x->mech == ORACLE_LINK_CAPTURE) &&
          oracle_synced_with_nothing(trace, ntrace, n, seq))
        out->mech = ORACLE_LINK_OWN_DEP;
      if (x->dep >= 0 && n < c->nops)
        crossing_link(&g, trace, ntrace, n, x->dep, seq, out);
      /* a host wait that missed a copy into registered memory, where no host wait is seen
       * missing other work: what it missed is the copy's (taken as synchronous) */
      if (out->mech == ORACLE_LINK_HOST_WAIT && registered_copy(c, out->from) && trace &&
          !host_waits_dropped(c, trace, ntrace))
        out->mech = ORACLE_LINK_REGISTERED_COPY;
      /* an access of an async copy or set made on the default stream, on either side: that
       * op's work escaped its token's stream, whichever link the path shows (named as a
       * stream's order is, by the op whose work escaped) */
      int esc = on_default_stream(c, from, trace, ntrace) ? from
                : on_default_stream(c, to, trace, ntrace) ? to
                                                          : -1;
      if (out->mech >= 0 && esc >= 0) {
        out->mech = ORACLE_LINK_DEFAULT_STREAM;
        out->from = esc;
      }
    }
  }
  af_free(flag);
  release(&g);
  return 0;
}

/* Which iteration of its op's loop trace call s is: the calls of the same kind its op made
 * before it. */
static int iteration(const RtRec *trace, int ntrace, int32_t s) {
  if (s < 0 || s >= ntrace)
    return -1;
  int n = 0;
  for (int j = 0; j < s; j++)
    n += trace[j].op == trace[s].op && trace[j].call == trace[s].call;
  return n;
}

/* The record before the go of op n that holds its last call before record s (what
 * oracle_consumer_syncs starts after), or -2 when n made none. */
static int32_t go_start(const RtRec *trace, int n, int32_t s) {
  int32_t j = s - 1;
  while (j >= 0 && trace[j].op != n)
    j--;
  if (j < 0)
    return -2;
  while (j >= 0 && (trace[j].op == n || trace[j].call == RT_CALL_EXEC))
    j--;
  return j;
}

/* Whether op x of a body, in its go after record `after`, was ordered after the op on its way
 * `on` gives for one of its dependencies (on[t]: the op a token of the way came from, -1 when
 * it is not on the way, -2 for a carried token: its loss is the carried link's). When it was
 * not, out names x's link, by the rule of oracle_missing_link (extra-dep or own-dep), and 1 is
 * returned. Otherwise x's token joins the way when a dependency of x was on it. */
static int lost_at(const G *g, const RtRec *trace, int ntrace, int x, int32_t after, int *on,
                   OracleLink *out) {
  const GenOp *o = &g->c->ops[x];
  OracleSyncs sy;
  int joined = 0;
  for (int d = 0; d < o->ndeps && d < GEN_MAX_DEPS; d++) {
    int t = o->deps[d], src = t >= 0 && t < g->c->ntoks ? on[t] : -1;
    joined |= src != -1;
    if (src < 0 || after < -1 || !oracle_consumer_syncs(trace, ntrace, x, after, &sy) ||
        oracle_ordered_after(trace, &sy, src) != 0)
      continue;
    int mech = d > 0 ? ORACLE_LINK_EXTRA_DEP : dep_mech(o, HOW_OP, 0);
    if (mech == ORACLE_LINK_EXTRA_DEP && !ordered_after_a_dep(g, trace, ntrace, x, d, after))
      mech = o->kind == GEN_OP_DEALLOC ? ORACLE_LINK_DEALLOC : ORACLE_LINK_OWN_DEP;
    *out = (OracleLink){src, x, mech, d};
    return 1;
  }
  if (joined && o->tok >= 0 && o->tok < g->c->ntoks)
    on[o->tok] = x;
  return 0;
}

/* Where the order from op1 (call seq1, in one iteration of scf.for body b) to op2 (seq2, in a
 * later one) was lost inside the body rather than by the carried token: the first op on the way
 * through the body's tokens, from op1 to what the body yields and from the iter_args to op2,
 * that was not ordered after the op before it. 1 and out filled, 0 when none was, AF_ENOMEM. */
static int lost_in_body(const GenCase *c, const RtRec *trace, int ntrace, int b, int op1,
                        int32_t seq1, int op2, int32_t seq2, OracleLink *out) {
  const GenBlock *k = &c->blocks[b];
  G g;
  int *on = build(&g, c) ? NULL : af_malloc(sizeof(int) * (size_t)(c->ntoks + 1));
  if (on == NULL) {
    release(&g);
    return AF_ENOMEM;
  }
  int found = 0;
  for (int t = 0; t < c->ntoks; t++)
    on[t] = -1;
  if (c->ops[op1].tok >= 0)
    on[c->ops[op1].tok] = op1; /* op1's iteration, after it */
  for (int x = op1 + 1; x <= k->last && !found; x++)
    found = c->ops[x].blk == b && lost_at(&g, trace, ntrace, x, seq1, on, out);
  for (int t = 0; t < c->ntoks; t++)
    on[t] = -1;
  for (int q = 0; q < k->ninputs; q++)
    if (k->inputs[q].tok >= 0 && k->inputs[q].tok < c->ntoks)
      on[k->inputs[q].tok] = -2; /* op2's iteration, before it */
  for (int x = k->first; x <= op2 && !found; x++)
    found = c->ops[x].blk == b &&
            lost_at(&g, trace, ntrace, x, go_start(trace, x, x == op2 ? seq2 + 1 : seq2), on, out);
  af_free(on);
  release(&g);
  return found;
}

int oracle_loop_link(const GenCase *c, const RtRec *trace, int ntrace, int op1, int32_t seq1,
                     int op2, int32_t seq2, OracleLink *out) {
  if (op1 < 0 || op1 >= c->nops || op2 < 0 || op2 >= c->nops || trace == NULL)
    return 0;
  int b = c->ops[op1].blk;
  if (b <= 0 || b >= c->nblocks || c->ops[op2].blk != b ||
      c->ops[c->blocks[b].op].kind != GEN_OP_FOR)
    return 0;
  int i1 = iteration(trace, ntrace, seq1), i2 = iteration(trace, ntrace, seq2);
  if (i1 < 0 || i2 < 0 || i1 == i2)
    return 0;
  /* an op on the way through the body that dropped its link is the cause, not the carried
   * token (out of memory: the carried token is named) */
  if (lost_in_body(c, trace, ntrace, b, op1, seq1, op2, seq2, out) == 1)
    return 1;
  memset(out, 0, sizeof *out);
  out->from = op1;
  out->to = op2;
  out->dep = -1;
  out->mech = ORACLE_LINK_LOOP_CARRIED;
  /* (an op that waited for nothing, on a stream of its own, lacked its own ordering, in any
   * iteration) */
  if (oracle_synced_with_nothing(trace, ntrace, op2, seq1))
    out->mech = ORACLE_LINK_OWN_DEP, out->dep = 0;
  return 1;
}

void oracle_link_format(const GenCase *c, const OracleLink *l, char *out, size_t n) {
  if (l->mech < 0 || l->to < 0 || l->to >= c->nops) {
    snprintf(out, n, "unattributed");
    return;
  }
  const GenOp *o = &c->ops[l->to];
  /* a stream's order is carried by the launch enqueued on it: whichever op missed it (a later
   * launch, the host's stream_sync or stream_destroy), the launch is what was misplaced */
  if ((l->mech == ORACLE_LINK_STREAM_ORDER || l->mech == ORACLE_LINK_DEFAULT_STREAM) &&
      l->from >= 0 && l->from < c->nops)
    o = &c->ops[l->from];
  /* a block's boundary is what its crossing tokens pass: whichever op missed one, the block op
   * is named (call, scf.if, scf.for, cf.cond_br) */
  if (l->mech >= ORACLE_LINK_CALL_ARG && l->mech <= ORACLE_LINK_MERGE_ARG) {
    int into = l->mech == ORACLE_LINK_CALL_ARG || l->mech == ORACLE_LINK_LOOP_CARRIED ||
               l->mech == ORACLE_LINK_BRANCH_ARG;
    int x = -1;
    if (into && o->blk > 0 && o->blk < c->nblocks)
      x = c->blocks[o->blk].op;
    if (l->from >= 0 && l->from < c->nops && (gen_op_flags(c->ops[l->from].kind) & GEN_K_BLOCK))
      x = l->from; /* (a block's boundary that carried nothing, wherever the token went after) */
    int t = !into && x < 0 && l->dep >= 0 && l->dep < o->ndeps ? o->deps[l->dep] : -1;
    for (int i = 0; i < c->nops && t >= 0 && x < 0; i++)
      if ((gen_op_flags(c->ops[i].kind) & GEN_K_BLOCK) && c->ops[i].tok == t)
        x = i;
    if (x >= 0 && x < c->nops)
      o = &c->ops[x];
  }
  char shape[64];
  gen_shape_format(o, shape, sizeof shape);
  char *view = strstr(shape, " view"); /* (a view changes how an op is lowered, not its order) */
  if (view)
    *view = '\0';
  /* how many dependencies the op has does not change how it orders itself after one: one
   * pattern lowers its kind, whichever dependency it missed */
  char *deps = strstr(shape, " deps=");
  if (deps)
    *deps = 0;
  const char *where = o->ctx ? "@region" : "";
  switch (l->mech) {
  case ORACLE_LINK_AWAIT_VALUE:
  case ORACLE_LINK_REGION_INPUT:
  case ORACLE_LINK_CAPTURE:
  case ORACLE_LINK_EXTRA_DEP:
    /* a region's crossing lost the token for whichever op consumed it after (the consumers
     * of that token miss it alike): the crossing is the link, its consumer a victim. An extra
     * dependency is how a lowering turns a list of dependencies into waits, whatever op has
     * the list: the op's kind goes to the detailed form */
    snprintf(out, n, "%s", oracle_link_name(l->mech));
    break;
  default:
    /* an extra dependency implies two or more; a region's order is about where the op
     * stands */
    snprintf(out, n, "%s|%s%s", oracle_link_name(l->mech), shape,
             l->mech == ORACLE_LINK_EXTRA_DEP || l->mech == ORACLE_LINK_OWN_DEP ||
                     l->mech == ORACLE_LINK_HOST_WAIT || l->mech == ORACLE_LINK_DEALLOC ||
                     l->mech == ORACLE_LINK_REGISTERED_COPY || l->mech >= ORACLE_LINK_STREAM_ORDER
                 ? ""
                 : where);
    break;
  }
}
