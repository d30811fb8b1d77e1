/*
 * builtin.c: the builtin lowering, a C reference of MLIR's gpu-to-llvm with upstream-main
 * semantics (../shared/reference/mlir-gpu-async.md) and without upstream's leaks. This file is the
 * driver: which tokens are events, which events ops request of others, the walk over the ops
 * (each kind's hook: builtin_ops.c, builtin_flow.c), and the destroys; builtin_int.h lists the
 * others.
 *
 * - Inside a context a token is a stream; a token that crosses contexts (a region input,
 *   an awaited value) is an event. Which one is known statically from where it is defined.
 * - An async op runs on its first stream dependency (or a new stream when it has none). Every
 *   other stream dependency gets an event created and recorded right after that dependency's
 *   defining op; the op's stream waits on it. Event dependencies are waited on directly.
 *   gpu.wait async always creates a new stream that waits on all its dependencies.
 * - A launch given an explicit stream runs on it: the stream waits for every dependency (an
 *   event recorded after each stream dependency's definition), and the launch's token is an
 *   event recorded on that stream after it. The program's stream ops are calls on its slot.
 * - A token that crosses into a call, if, for or branch body (an argument, an iter_arg, a block
 *   argument) or out of it (the op's token) is an event: one is recorded on the stream of a
 *   stream token. A body runs inline; a for's body is lowered once per iteration, the carried
 *   event of one iteration being the input of the next.
 * - A sync gpu.wait synchronizes each stream or event dependency. Sync alloc/dealloc use a
 *   null stream. An async dealloc first synchronizes its stream on the host, because
 *   mgpuMemFree is immediate and not stream-ordered.
 * - async.yield records one event per consumer of each yielded token (each consumer owns and
 *   destroys its event, as gpu-async-region's single-use rule intends).
 * - Every stream and event is destroyed exactly once, right after its last use (a post-pass
 *   over each function); a yielded event belongs to its consumer.
 */
#include "builtin_int.h"

#include "../kernels/kernels.h"

#include <string.h>

/* Slots an instruction reads (as handles). */
static int uses(const LowerInstr *in, int *out) {
  int n = 0;
  switch (in->opc) {
  case LOWER_STREAM_CREATE:
  case LOWER_EVENT_CREATE:
  case LOWER_TAKE:
  case LOWER_STREAM_SYNC:
  case LOWER_EVENT_SYNC:
    out[n++] = in->a;
    break;
  case LOWER_STREAM_WAIT_EVENT:
  case LOWER_EVENT_RECORD:
    out[n++] = in->a;
    out[n++] = in->b;
    break;
  case LOWER_MEM_ALLOC:
  case LOWER_MEM_FREE:
  case LOWER_MEMCPY:
  case LOWER_MEMSET32:
  case LOWER_MEMSET16:
  case LOWER_LAUNCH:
    if (in->b >= 0)
      out[n++] = in->b;
    break;
  default:
    break;
  }
  return n;
}

/* Where each slot's handle is destroyed: after its last use (point), unless a fault fixes it
 * earlier (frozen); kind 1 a stream, 2 an event, 0 nothing to destroy; given: yielded away. */
typedef struct Destroys {
  int *point, *nuse;
  uint8_t *kind, *given, *frozen;
} Destroys;

static void find_destroy_points(L *l, const LowerFunc *f, Destroys *d) {
  for (int s = 0; s < f->nslots; s++)
    d->point[s] = -1;
  int early = lower__has(l, LOWER_FAULT_EARLY_STREAM_DESTROY);
  int wait_destroys = lower__has(l, LOWER_FAULT_WAIT_DESTROYS);
  int leak_events = lower__has(l, LOWER_FAULT_EVENT_LEAKED);
  for (int i = 0; i < f->ninstrs; i++) {
    const LowerInstr *in = &f->instrs[i];
    /* (the op's kind only for wait_destroys: it is a load from the case for every instruction) */
    int host_wait = wait_destroys && in->op >= 0 && in->op < l->c->nops &&
                    l->c->ops[in->op].kind == GEN_OP_HOST_WAIT;
    if (in->opc == LOWER_STREAM_CREATE)
      d->kind[in->a] = in->imm ? 0 : 1; /* the program's own stream: its stream_destroy op */
    if (in->opc == LOWER_EVENT_CREATE || in->opc == LOWER_TAKE) /* (event_leaked: never) */
      d->kind[in->a] = leak_events && in->opc == LOWER_EVENT_CREATE ? 0 : 2;
    if (in->opc == LOWER_YIELD) {
      d->given[in->a] = 1;
      continue;
    }
    int u[2];
    int n = uses(in, u);
    for (int k = 0; k < n; k++) {
      int s = u[k];
      if (s < 0)
        continue;
      d->nuse[s]++;
      if (d->frozen[s])
        continue;
      d->point[s] = i;
      if (early && d->kind[s] == 1 && d->nuse[s] == 2)
        d->frozen[s] = 1; /* the first use after creation */
      if (wait_destroys && d->kind[s] == 1 && host_wait && in->opc == LOWER_STREAM_SYNC)
        d->frozen[s] = 1; /* the host's wait on it */
    }
  }
}

/* f's instructions with each destroy after its point; 0, or -1 out of memory. The slots to
 * destroy are listed per point first (in slot order), so that this stays linear in the
 * function's size. */
static int insert_destroys(LowerFunc *f, const Destroys *d) {
  int ns = f->nslots;
  int cap = f->ninstrs + ns + 1;
  LowerInstr *out = af_malloc(sizeof(LowerInstr) * (size_t)cap);
  int *head = af_malloc(sizeof(int) * (size_t)(f->ninstrs + 1 + ns + 1)); /* and next */
  if (out == NULL || head == NULL) {
    af_free(out);
    af_free(head);
    return -1;
  }
  int *next = head + f->ninstrs + 1;
  for (int i = 0; i < f->ninstrs; i++)
    head[i] = -1;
  for (int s = ns - 1; s >= 0; s--)
    if (d->point[s] >= 0 && d->point[s] < f->ninstrs && !d->given[s] && d->kind[s] != 0) {
      next[s] = head[d->point[s]];
      head[d->point[s]] = s;
    }
  int n = 0;
  for (int i = 0; i < f->ninstrs; i++) {
    out[n++] = f->instrs[i];
    for (int s = head[i]; s >= 0; s = next[s]) {
      LowerInstr x;
      memset(&x, 0, sizeof x);
      x.opc = d->kind[s] == 1 ? LOWER_STREAM_DESTROY : LOWER_EVENT_DESTROY;
      x.a = s;
      x.b = x.buf = x.buf2 = x.region = x.vidx = x.consumer = -1;
      x.op = f->instrs[i].op;
      out[n++] = x;
    }
  }
  af_free(head);
  af_free(f->instrs);
  f->instrs = out;
  f->ninstrs = n;
  f->capinstrs = cap;
  return 0;
}

static int place_destroys(L *l, LowerFunc *f) {
  size_t ns = (size_t)f->nslots;
  Destroys d;
  AfLayout lay = {0};
  size_t o_point = af_lay(&lay, 2 * (ns + 1), sizeof(int)), o_kind = af_lay(&lay, 3 * (ns + 1), 1);
  char *blk = af_calloc(1, lay.size); /* (one block, where they were five) */
  if (blk == NULL)
    return af_err_set(l->err, AF_ENOMEM, "out of memory lowering");
  d.point = (int *)(blk + o_point);
  d.nuse = d.point + ns + 1;
  d.kind = (uint8_t *)(blk + o_kind);
  d.given = d.kind + ns + 1;
  d.frozen = d.given + ns + 1;
  find_destroy_points(l, f, &d);
  int rc = 0;
  if (insert_destroys(f, &d) < 0)
    rc = af_err_set(l->err, AF_ENOMEM, "out of memory lowering");
  af_free(blk);
  return rc;
}

void lower_program_free(LowerProgram *p) {
  if (p == NULL)
    return;
  for (int i = 0; p->funcs && i < p->nfuncs; i++)
    af_free(p->funcs[i].instrs);
  af_free(p->funcs); /* and the tables after it (setup) */
  af_free(p);
}

/* main's prologue: the kernel module, its functions and the host buffers */
static void prologue(L *l) {
  const GenCase *c = l->c;
  lower__emit(l, 0, LOWER_MODULE_LOAD, -1);
  unsigned char fns[KERNEL__IDS] = {0}; /* the i32 kernels, then the other forms launched */
  memset(fns, 1, KERNEL__COUNT);
  for (int i = 0; i < c->nops; i++)
    if (gen_kind_launches(c->ops[i].kind))
      fns[lower__kernel_fn(c, &c->ops[i])] = 1;
  for (int k = 0; k < KERNEL__IDS; k++) {
    LowerInstr *in = fns[k] ? lower__emit(l, 0, LOWER_GET_FUNCTION, -1) : NULL;
    if (in)
      in->kernel = (uint8_t)k;
  }
  for (int b = 0; b < c->nbufs; b++) {
    if (c->bufs[b].kind != GEN_BUF_HOST)
      continue;
    LowerInstr *in = lower__emit(l, 0, LOWER_HOST_INIT, -1);
    if (in) {
      in->buf = b;
      in->imm = c->bufs[b].init;
    }
    in = c->bufs[b].reg ? lower__emit(l, 0, LOWER_HOST_REGISTER, -1) : NULL;
    if (in)
      in->buf = b;
  }
  for (int i = 0; i < c->nops; i++) { /* rocm's staging buffers */
    LowerInstr *in = l->stage[i] >= 0 ? lower__emit(l, 0, LOWER_HOST_INIT, -1) : NULL;
    if (in == NULL)
      continue;
    in->buf = l->stage[i];
    if (c->ops[i].kind == GEN_OP_MEMSET) { /* holds the memset's 16-bit value */
      int32_t w[2];
      gen_elem_words(c->bufs[c->ops[i].buf].elem, c->ops[i].value, w);
      in->imm = (uint16_t)w[0];
      in->imm2 = 1;
    }
  }
}

static const LowerOpFn hooks[GEN_OP__COUNT] = {
#define LOWER__HOOK_ROW(id, lc, name, mlir, weight, flags) [GEN_OP_##id] = lower__##lc,
    GEN_OP_MAP(LOWER__HOOK_ROW)
#undef LOWER__HOOK_ROW
};

/* Op i through its kind's hook; an async op's token is the stream it ran on, on which the events
 * other ops requested of it are recorded right after it. */
static void lower_op(L *l, int i) {
  const GenOp *o = &l->c->ops[i];
  uint8_t need[GEN_MAX_DEPS];
  int primary = lower__plan_op(l, i, need);
  int s = hooks[o->kind](l, i, primary, need);
  if (o->tok >= 0 && gen_op_async(o)) {
    l->tok_slot[o->tok] = s;
    if (!lower__record_early(l))
      lower__record_requests(l, o->ctx, o->tok, s, i);
  }
}

/* Which tokens are events (those that cross a region's or a block's boundary, a launch's on its
 * own stream), and the consumers of each region value, in inline order. */
static void token_kinds(L *l) {
  const GenCase *c = l->c;
  LowerProgram *p = l->p;
  for (int r = 1; r < c->nregions; r++) {
    const GenRegion *g = &c->regions[r];
    p->funcs[r].region = r;
    p->regions[r].parent = g->parent;
    p->regions[r].ninputs = g->ninputs;
    p->regions[r].nvalues = g->nyields;
    p->regions[r].ncaptures = g->ncaptures;
    for (int k = 0; k < g->ncaptures; k++) /* the region receives an event for each */
      l->tok_event[g->captures[k].tok] = 1;
    for (int k = 0; k < g->ninputs; k++) {
      p->regions[r].input_region[k] = g->inputs[k].region;
      p->regions[r].input_vidx[k] = g->inputs[k].vidx;
      l->tok_event[g->inputs[k].tok] = 1;
    }
  }
  for (int i = 0; i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    if (lower__on_own_stream(l, o))
      l->tok_event[o->tok] = 1;
    if (gen_op_flags(o->kind) & GEN_K_BLOCK) { /* a block's tokens across its boundary */
      const GenBlock *k = &c->blocks[o->block];
      for (int q = 0; q < k->ninputs; q++)
        l->tok_event[k->inputs[q].tok] = 1;
      if (o->tok >= 0)
        l->tok_event[o->tok] = 1;
    }
    if (o->kind == GEN_OP_AWAIT && o->vidx >= 0) {
      l->tok_event[o->tok] = 1;
      l->await_consumer[i] = p->regions[o->region].nconsumers[o->vidx]++;
    }
    if (o->kind == GEN_OP_EXECUTE) {
      const GenRegion *g = &c->regions[o->region];
      for (int k = 0; k < g->ninputs; k++)
        l->input_consumer[o->region * GEN_MAX_REGION_IO + k] =
            p->regions[g->inputs[k].region].nconsumers[g->inputs[k].vidx]++;
    }
  }
}

/* The events each token's op records for others (built in reverse so each list is in op
 * order). */
static void plan_requests(L *l) {
  for (int i = l->c->nops - 1; i >= 0; i--) {
    uint8_t need[GEN_MAX_DEPS];
    lower__plan_op(l, i, need);
    for (int d = GEN_MAX_DEPS - 1; d >= 0; d--) {
      if (!need[d])
        continue;
      int t = l->c->ops[i].deps[d];
      int r = i * GEN_MAX_DEPS + d;
      l->req_next[r] = l->req_head[t];
      l->req_head[t] = r;
    }
  }
}

/* Every op in inline order; a region opens after its execute op and closes after its last op, a
 * block (but a for's, whose hook lowers its body) ends after its last op. */
static void walk(L *l) {
  const GenCase *c = l->c;
  int *closes = af_malloc(sizeof(int) * (size_t)(c->nops + c->nregions + 1));
  if (closes == NULL) {
    l->rc = af_err_set(l->err, AF_ENOMEM, "out of memory lowering");
    return;
  }
  int *next = closes + c->nops;
  gen_region_ends(c, closes, next);
  for (int i = 0; i < c->nops && l->rc == 0; i++) {
    const GenOp *o = &c->ops[i];
    lower_op(l, i);
    if (o->kind == GEN_OP_EXECUTE)
      lower__open_region(l, o->region);
    if (o->kind == GEN_OP_FOR)
      i = gen_op_body_end(c, i); /* (its hook lowered the body) */
    /* the block that ends here: the one this op is in, or its own when empty */
    int k = o->blk > 0 ? o->blk : gen_op_flags(o->kind) & GEN_K_BLOCK ? o->block : 0;
    if (k > 0 && c->ops[c->blocks[k].op].kind != GEN_OP_FOR &&
        (c->blocks[k].last >= c->blocks[k].first ? c->blocks[k].last : c->blocks[k].op) == i)
      lower__block_end(l, k);
    for (int r = closes[i]; r >= 1; r = next[r])
      lower__close_region(l, r);
  }
  af_free(closes);
}

/* The lowering's state and the program's arrays for case c; 0 or AF_ENOMEM. */
static int setup(L *l, const GenCase *c) {
  int nt = c->ntoks + 1, no = c->nops + 1, nr = c->nregions;
  LowerProgram *p = l->p;
  int nstage = lower__plan_stages(l);
  if (nstage < 0)
    return AF_ENOMEM;
  int nb = c->nbufs + nstage;
  p->nfuncs = nr;
  p->nbufs = nb;
  p->spin = c->spin;
  /* the program's tables in one block, at p->funcs (lower_program_free) */
  AfLayout play = {0};
  size_t o_funcs = af_lay(&play, (size_t)nr, sizeof(LowerFunc));
  size_t o_regions = af_lay(&play, (size_t)nr, sizeof(LowerRegionInfo));
  size_t o_elems = af_lay(&play, (size_t)nb + 1, sizeof(int32_t));
  size_t o_host = af_lay(&play, 2 * ((size_t)nb + 1), 1);
  char *pblk = af_calloc(1, play.size);
  if (pblk) {
    p->funcs = (LowerFunc *)(pblk + o_funcs);
    p->regions = (LowerRegionInfo *)(pblk + o_regions);
    p->buf_elems = (int32_t *)(pblk + o_elems);
    p->buf_host = (uint8_t *)(pblk + o_host);
    p->buf_elem = p->buf_host + nb + 1;
  }
  /* the lowering's own tables in one block (they were 10 allocations) */
  size_t snt = (size_t)nt, snd = (size_t)no * GEN_MAX_DEPS;
  AfLayout lay = {0};
  size_t o_ints = af_lay(&lay,
                         2 * snt + (size_t)no + (size_t)nr * GEN_MAX_REGION_IO + 2 * snd +
                             (size_t)c->nstreams + 1,
                         sizeof(int));
  size_t o_bytes = af_lay(&lay, snt + snd, 1);
  char *blk = l->blk = af_calloc(1, lay.size);
  if (pblk == NULL || blk == NULL)
    return AF_ENOMEM;
  l->tok_slot = (int *)(blk + o_ints);
  l->req_head = l->tok_slot + snt;
  l->await_consumer = l->req_head + snt;
  l->input_consumer = l->await_consumer + no;
  l->req_slot = l->input_consumer + (size_t)nr * GEN_MAX_REGION_IO;
  l->req_next = l->req_slot + snd;
  l->stream_slot = l->req_next + snd;
  l->tok_event = (uint8_t *)(blk + o_bytes);
  l->needs = l->tok_event + snt;
  for (int b = 0; b < c->nbufs; b++) {
    p->buf_elems[b] = c->bufs[b].n;
    p->buf_host[b] = c->bufs[b].kind == GEN_BUF_HOST;
    p->buf_elem[b] = c->bufs[b].elem;
  }
  lower__stage_bufs(l);
  for (int t = 0; t < nt; t++) {
    l->tok_slot[t] = -1;
    l->req_head[t] = -1;
  }
  for (int i = 0; i < no * GEN_MAX_DEPS; i++)
    l->req_slot[i] = -1;
  return 0;
}

int lower_builtin(const GenCase *c, const LowerSpec *spec, LowerProgram **out, AfErr *err) {
  return lower_builtin_abi(c, spec, 0, out, err);
}

int lower_builtin_abi(const GenCase *c, const LowerSpec *spec, int rocm, LowerProgram **out,
                      AfErr *err) {
  *out = NULL;
  L l;
  memset(&l, 0, sizeof l);
  l.c = c;
  l.faults = spec->faults;
  l.err = err;
  l.rocm = rocm;
  l.op = lower_op;
  l.p = af_calloc(1, sizeof *l.p);
  l.stage = af_malloc(sizeof(int) * (size_t)(c->nops + 1));
  if (l.p == NULL || l.stage == NULL || setup(&l, c) != 0) {
    l.rc = af_err_set(err, AF_ENOMEM, "out of memory lowering");
  } else {
    token_kinds(&l);
    plan_requests(&l);
    prologue(&l);
    walk(&l);
    for (int b = 0; b < c->nbufs; b++) {
      LowerInstr *in = c->bufs[b].reg ? lower__emit(&l, 0, LOWER_HOST_UNREGISTER, -1) : NULL;
      if (in)
        in->buf = b;
    }
    lower__emit(&l, 0, LOWER_MODULE_UNLOAD, -1);
    for (int f = 0; f < c->nregions && l.rc == 0; f++)
      l.rc = place_destroys(&l, &l.p->funcs[f]);
  }
  af_free(l.stage);
  af_free(l.blk);
  if (l.rc) {
    lower_program_free(l.p);
    return l.rc;
  }
  *out = l.p;
  return 0;
}
