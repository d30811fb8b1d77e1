/*
 * interp.c: the Program interpreter (check.h). It is the builtin lowering's "mlir-runner": host
 * buffers are plain memory, kernels are reached through mgpuModuleGetFunction and launched
 * with MLIR's parameter layout (each memref<?xi32> expanded to allocated, aligned, offset,
 * size, stride; then the i32 value and the i32 spin count).
 */
#include "check.h"

#include "../kernels/kernels.h"

#include <stdlib.h>
#include <string.h>

enum { T_IDLE, T_READY, T_BLOCKED, T_DONE };

typedef struct Task {
  int state, pc, started;
  int order; /* spawn order */
  int await_region;
  void **slots;
} Task;

typedef struct I {
  const LowerProgram *p;
  const RtConfig *cfg;
  AfRng rng;
  Task *tasks;
  void **bufs;
  void *module;
  void *funcs[KERNEL__IDS];
  void ***values; /* [region][vidx * maxc + consumer] */
  int maxc;
  int spawned;
  /* the runnable tasks in index order (run[0..nrun), and isrun[t]), computed again only after a
   * task changed state (dirty): picking is then linear in the runnable tasks, not in all */
  int *run, nrun, dirty;
  uint8_t *isrun;
} I;

static int inputs_ready(const I *in, int r) {
  const LowerRegionInfo *ri = &in->p->regions[r];
  for (int k = 0; k < ri->ninputs; k++)
    if (in->tasks[ri->input_region[k]].state != T_DONE)
      return 0;
  return 1;
}

static int runnable(const I *in, int t) {
  const Task *k = &in->tasks[t];
  if (k->state == T_READY)
    return t == 0 || k->started || inputs_ready(in, t);
  if (k->state == T_BLOCKED)
    return in->tasks[k->await_region].state == T_DONE;
  return 0;
}

static void set_state(I *in, Task *k, int state) {
  k->state = state;
  in->dirty = 1;
}

static int pick_task(I *in, int current) {
  if (in->dirty) {
    in->nrun = 0;
    for (int t = 0; t < in->p->nfuncs; t++) {
      in->isrun[t] = (uint8_t)runnable(in, t);
      if (in->isrun[t])
        in->run[in->nrun++] = t;
    }
    in->dirty = 0;
  }
  int best = -1;
  switch (in->cfg->policy) {
  case RT_EAGER: /* the most recently spawned runnable task */
    for (int i = 0; i < in->nrun; i++)
      if (best < 0 || in->tasks[in->run[i]].order > in->tasks[best].order)
        best = in->run[i];
    return best;
  case RT_LAZY: /* keep running the current task; else the oldest */
    if (current >= 0 && in->isrun[current])
      return current;
    for (int i = 0; i < in->nrun; i++)
      if (best < 0 || in->tasks[in->run[i]].order < in->tasks[best].order)
        best = in->run[i];
    return best;
  default:
    if (in->nrun == 0)
      return -1;
    return in->run[af_rng_below(&in->rng, (uint32_t)in->nrun)];
  }
}

/* The host's init (init = 1) or observe of host buffer ins->buf, through the hook of its type. */
static void host_hook(I *in, const LowerInstr *ins, int init) {
  void *h = in->bufs[ins->buf];
  int64_t n = in->p->buf_elems[ins->buf];
  int32_t id = init ? ins->buf : (int32_t)ins->imm, v = (int32_t)ins->imm;
  switch (in->p->buf_elem[ins->buf]) {
#define HOOK(sfx, T, E)                                                                            \
  case GEN_ELEM_##E:                                                                               \
    if (init)                                                                                      \
      asyncfuzz_host_init_##sfx(id, v, h, h, 0, n, 1);                                             \
    else                                                                                           \
      asyncfuzz_observe_##sfx(id, h, h, 0, n, 1);                                                  \
    break;
    RT_ELEM_HOOK_MAP(HOOK)
#undef HOOK
  default:
    if (init)
      asyncfuzz_host_init(id, v, h, h, 0, n, 1);
    else
      asyncfuzz_observe(id, h, h, 0, n, 1);
    break;
  }
}

static void launch(I *in, const LowerInstr *ins, void *stream) {
  void *ptrs[2 * KERNEL_MAX_BUFS];
  int64_t ints[3 * KERNEL_MAX_BUFS];
  int32_t v = (int32_t)ins->imm, spin = in->p->spin;
  void *params[5 * KERNEL_MAX_BUFS + 2];
  int np = 0;
  for (int a = 0; a < ins->nbufs; a++) {
    ptrs[2 * a] = ptrs[2 * a + 1] = in->bufs[ins->bufs[a]];
    ints[3 * a] = ins->voff[a]; /* a view's descriptor: its offset, size and stride */
    ints[3 * a + 1] = ins->imm2;
    ints[3 * a + 2] = ins->vstride[a] > 0 ? ins->vstride[a] : 1;
    params[np++] = &ptrs[2 * a];
    params[np++] = &ptrs[2 * a + 1];
    params[np++] = &ints[3 * a];
    params[np++] = &ints[3 * a + 1];
    params[np++] = &ints[3 * a + 2];
  }
  params[np++] = &v;
  params[np++] = &spin;
  const int32_t *d = ins->dims;
  mgpuLaunchKernel(in->funcs[ins->kernel], d[0], d[1], d[2], d[3], d[4], d[5], ins->smem, stream,
                   params, NULL, (size_t)np);
}

/* ---- each instruction, by its row of LOWER_OPC_MAP: X_NEXT (the task goes on), X_BLOCKED (it
 * waits; the same instruction runs again when it can) or X_ENDED (the task is done) ---- */
enum { X_NEXT, X_BLOCKED, X_ENDED };
typedef struct XCtx {
  I *in;
  int t;
  Task *k;
  void **S;
} XCtx;
#define SLOT(x) ((x) >= 0 ? c->S[(x)] : NULL)
#define BUF(i, off) ((char *)c->in->bufs[(i)] + (off))

static int x_module_load(XCtx *c, const LowerInstr *ins) {
  (void)ins;
  c->in->module = mgpuModuleLoad((void *)"asyncfuzz-kernels", 17);
  return X_NEXT;
}
static int x_get_function(XCtx *c, const LowerInstr *ins) {
  c->in->funcs[ins->kernel] = mgpuModuleGetFunction(c->in->module, kernel_info(ins->kernel)->name);
  return X_NEXT;
}
static int x_module_unload(XCtx *c, const LowerInstr *ins) {
  (void)ins;
  mgpuModuleUnload(c->in->module);
  return X_NEXT;
}
static int x_host_init(XCtx *c, const LowerInstr *ins) {
  host_hook(c->in, ins, 1);
  for (int64_t i = 0; ins->imm2 && i < c->in->p->buf_elems[ins->buf]; i++) /* a 16-bit value */
    ((uint16_t *)c->in->bufs[ins->buf])[i] = (uint16_t)ins->imm;
  return X_NEXT;
}
static int x_host_register(XCtx *c, const LowerInstr *ins) {
  mgpuMemHostRegister(c->in->bufs[ins->buf],
                      (uint64_t)c->in->p->buf_elems[ins->buf] *
                          (uint64_t)gen_elem_size(c->in->p->buf_elem[ins->buf]));
  return X_NEXT;
}
static int x_host_unregister(XCtx *c, const LowerInstr *ins) {
  mgpuMemHostUnregister(c->in->bufs[ins->buf]);
  return X_NEXT;
}
static int x_stream_create(XCtx *c, const LowerInstr *ins) {
  c->S[ins->a] = mgpuStreamCreate();
  return X_NEXT;
}
static int x_stream_destroy(XCtx *c, const LowerInstr *ins) {
  mgpuStreamDestroy(c->S[ins->a]);
  return X_NEXT;
}
static int x_stream_sync(XCtx *c, const LowerInstr *ins) {
  mgpuStreamSynchronize(c->S[ins->a]);
  return X_NEXT;
}
static int x_stream_wait_event(XCtx *c, const LowerInstr *ins) {
  mgpuStreamWaitEvent(c->S[ins->a], c->S[ins->b]);
  return X_NEXT;
}
static int x_event_create(XCtx *c, const LowerInstr *ins) {
  c->S[ins->a] = mgpuEventCreate();
  return X_NEXT;
}
static int x_event_destroy(XCtx *c, const LowerInstr *ins) {
  mgpuEventDestroy(c->S[ins->a]);
  return X_NEXT;
}
static int x_event_sync(XCtx *c, const LowerInstr *ins) {
  mgpuEventSynchronize(c->S[ins->a]);
  return X_NEXT;
}
static int x_event_record(XCtx *c, const LowerInstr *ins) {
  mgpuEventRecord(c->S[ins->a], SLOT(ins->b));
  return X_NEXT;
}
static int x_mem_alloc(XCtx *c, const LowerInstr *ins) {
  c->in->bufs[ins->buf] = mgpuMemAlloc((uint64_t)ins->imm, SLOT(ins->b), ins->imm2 != 0);
  return X_NEXT;
}
static int x_mem_free(XCtx *c, const LowerInstr *ins) {
  mgpuMemFree(c->in->bufs[ins->buf], SLOT(ins->b));
  return X_NEXT;
}
static int x_memcpy(XCtx *c, const LowerInstr *ins) {
  mgpuMemcpy(BUF(ins->buf, ins->off), BUF(ins->buf2, ins->off2), (size_t)ins->imm, SLOT(ins->b));
  return X_NEXT;
}
static int x_memset32(XCtx *c, const LowerInstr *ins) {
  mgpuMemset32(BUF(ins->buf, ins->off), (unsigned)ins->imm, (size_t)ins->imm2, SLOT(ins->b));
  return X_NEXT;
}
static int x_memset16(XCtx *c, const LowerInstr *ins) {
  mgpuMemset16(BUF(ins->buf, ins->off), (unsigned short)ins->imm, (size_t)ins->imm2, SLOT(ins->b));
  return X_NEXT;
}
static int x_launch(XCtx *c, const LowerInstr *ins) {
  launch(c->in, ins, SLOT(ins->b));
  return X_NEXT;
}
static int x_observe(XCtx *c, const LowerInstr *ins) {
  host_hook(c->in, ins, 0);
  return X_NEXT;
}
static int x_spawn(XCtx *c, const LowerInstr *ins) {
  asyncfuzz_rt_note(RT_NOTE_SPAWN, ins->region, -1);
  set_state(c->in, &c->in->tasks[ins->region], T_READY);
  c->in->tasks[ins->region].order = ++c->in->spawned;
  return X_NEXT;
}
static int x_yield(XCtx *c, const LowerInstr *ins) {
  c->in->values[ins->region][ins->vidx * c->in->maxc + ins->consumer] = c->S[ins->a];
  return X_NEXT;
}
static int x_done(XCtx *c, const LowerInstr *ins) {
  (void)ins;
  asyncfuzz_rt_note(RT_NOTE_YIELD, c->t, -1);
  c->k->pc = c->in->p->funcs[c->t].ninstrs;
  set_state(c->in, c->k, T_DONE);
  return X_ENDED;
}
static int x_await(XCtx *c, const LowerInstr *ins) {
  if (c->in->tasks[ins->region].state != T_DONE) {
    set_state(c->in, c->k, T_BLOCKED);
    c->k->await_region = ins->region;
    return X_BLOCKED;
  }
  asyncfuzz_rt_note(RT_NOTE_AWAIT, ins->region, -1);
  return X_NEXT;
}
static int x_take(XCtx *c, const LowerInstr *ins) {
  c->S[ins->a] = c->in->values[ins->region][ins->vidx * c->in->maxc + ins->consumer];
  if (ins->imm == 1) /* a region input (wherever destroys placed it among the others) */
    asyncfuzz_rt_note(RT_NOTE_AWAIT, ins->region, ins->vidx);
  return X_NEXT;
}
#undef SLOT
#undef BUF

static int (*const x_of[LOWER__OPC_COUNT])(XCtx *, const LowerInstr *) = {
#define X(ID, lc, call, listing) [LOWER_##ID] = x_##lc,
    LOWER_OPC_MAP(X)
#undef X
};

/* Executes one instruction of task t. Returns 1 if the task blocked instead. */
static int exec(I *in, int t) {
  Task *k = &in->tasks[t];
  const LowerFunc *f = &in->p->funcs[t];
  asyncfuzz_rt_set_thread(t);
  if (!k->started) {
    k->started = 1;
    if (t != 0)
      asyncfuzz_rt_note(RT_NOTE_START, t, -1);
  }
  if (k->state == T_BLOCKED) {
    asyncfuzz_rt_set_op(f->instrs[k->pc].op);
    set_state(in, k, T_READY); /* the awaited region is done */
    asyncfuzz_rt_note(RT_NOTE_AWAIT, k->await_region, -1);
    k->pc++;
    return 0;
  }
  if (k->pc >= f->ninstrs) {
    set_state(in, k, T_DONE);
    return 0;
  }
  const LowerInstr *ins = &f->instrs[k->pc];
  asyncfuzz_rt_set_op(ins->op);
  XCtx c = {in, t, k, k->slots};
  int rc = ins->opc < LOWER__OPC_COUNT ? x_of[ins->opc](&c, ins) : X_NEXT;
  if (rc == X_BLOCKED)
    return 1;
  if (rc == X_ENDED)
    return 0;
  k->pc++;
  if (k->pc >= f->ninstrs && t == 0)
    set_state(in, k, T_DONE);
  return 0;
}

int check_run_program(const LowerProgram *p, const RtConfig *cfg, AfErr *err) {
  I in;
  memset(&in, 0, sizeof in);
  in.p = p;
  in.cfg = cfg;
  af_rng_seed(&in.rng, af_mix64(cfg->seed, 0x1A7E87ull));
  RtConfig rc1 = *cfg;
  rc1.one_thread = 1; /* the tasks take turns on this thread */
  int rc = asyncfuzz_rt_begin(&rc1);
  if (rc)
    return af_err_set(err, rc, "out of memory starting the runtime");
  in.maxc = 1;
  for (int r = 0; r < p->nfuncs; r++)
    for (int v = 0; v < p->regions[r].nvalues; v++)
      if (p->regions[r].nconsumers[v] > in.maxc)
        in.maxc = p->regions[r].nconsumers[v];
  /* the tables in one block (they were 5 + 2 per task allocations of each run) */
  size_t nf = (size_t)p->nfuncs, nvals = 0;
  for (int t = 0; t < p->nfuncs; t++)
    nvals += (size_t)p->funcs[t].nslots + 1 +
             (size_t)(p->regions[t].nvalues + p->regions[t].ncaptures + 1) * (size_t)in.maxc;
  AfLayout lay = {0};
  size_t o_tasks = af_lay(&lay, nf, sizeof(Task)), o_run = af_lay(&lay, nf + 1, sizeof(int));
  size_t o_bufs = af_lay(&lay, (size_t)p->nbufs + 1, sizeof(void *));
  size_t o_values = af_lay(&lay, nf, sizeof(void **)), o_ptrs = af_lay(&lay, nvals, sizeof(void *));
  size_t o_isrun = af_lay(&lay, nf + 1, 1);
  char *blk = af_calloc(1, lay.size);
  if (blk == NULL) {
    rc = af_err_set(err, AF_ENOMEM, "out of memory running the program");
    goto out;
  }
  in.tasks = (Task *)(blk + o_tasks);
  in.run = (int *)(blk + o_run);
  in.isrun = (uint8_t *)(blk + o_isrun);
  in.bufs = (void **)(blk + o_bufs);
  in.values = (void ***)(blk + o_values);
  in.dirty = 1;
  for (int b = 0; b < p->nbufs; b++)
    if (p->buf_host[b]) {
      in.bufs[b] = calloc((size_t)p->buf_elems[b], (size_t)gen_elem_size(p->buf_elem[b]));
      if (in.bufs[b] == NULL) {
        rc = af_err_set(err, AF_ENOMEM, "out of memory allocating host buffers");
        goto out;
      }
    }
  void **ptrs = (void **)(blk + o_ptrs);
  for (int t = 0; t < p->nfuncs; t++) {
    in.tasks[t].slots = ptrs;
    ptrs += p->funcs[t].nslots + 1;
    in.values[t] = ptrs;
    ptrs += (size_t)(p->regions[t].nvalues + p->regions[t].ncaptures + 1) * (size_t)in.maxc;
    in.tasks[t].state = T_IDLE;
  }
  in.tasks[0].state = T_READY;
  int current = 0;
  int keep = in.cfg->policy == RT_LAZY; /* (lazy keeps the current task while it can run) */
  while (in.tasks[0].state != T_DONE) {
    int t = keep && !in.dirty && in.isrun[current] ? current : pick_task(&in, current);
    if (t < 0) {
      rc = af_err_set(err, AF_EDEADLOCK, "no task can run: the program deadlocks");
      break;
    }
    current = t;
    exec(&in, t);
  }
  /* regions never awaited still run to their end, as the async runtime would */
  while (rc == 0) {
    int t = pick_task(&in, -1);
    if (t < 0)
      break;
    exec(&in, t);
  }
out:
  if (asyncfuzz_rt_end() && rc == 0)
    rc = af_err_set(err, AF_ENOMEM, "out of memory in the runtime");
  if (in.bufs)
    for (int b = 0; b < p->nbufs; b++)
      if (p->buf_host[b])
        free(in.bufs[b]);
  af_free(blk);
  return rc;
}
