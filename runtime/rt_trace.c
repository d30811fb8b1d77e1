/*
 * rt_trace.c: the runtime library's state, its call and error names, the trace records and
 * their text and binary forms (docs/trace-format.md).
 */
#include "rt_sim_int.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

Rt rt__g_rt = {.mu = PTHREAD_MUTEX_INITIALIZER};
const RtDevOps *rt__g_dev[RT__BACKEND_COUNT]; /* each GPU backend's device, once opened */
RtDeviceInfo rt__g_dev_info[RT__BACKEND_COUNT];
int rt__g_env_run; /* the current run was started from the environment (no harness) */
_Thread_local int rt__t_tid RT__TLS_IE = -1;
static _Thread_local int t_op RT__TLS_IE = -1;

/* ---- names ---- */

static const char *const call_names[] = {
#define RT__CALL_NAME(id, name) name,
    RT_CALL_MAP(RT__CALL_NAME)
#undef RT__CALL_NAME
};
static const char *const err_names[] = {
#define RT__ERR_NAME(id, name) name,
    RT_ERROR_MAP(RT__ERR_NAME)
#undef RT__ERR_NAME
};
static const char *const detail_texts[] = {
#define RT__DET_TEXT(id, text) text,
    RT_DETAIL_MAP(RT__DET_TEXT)
#undef RT__DET_TEXT
};
static const char *const policy_names[RT__POLICY_COUNT] = {"eager", "lazy", "random", "pct"};

const char *asyncfuzz_rt_call_name(int call) {
  return call >= 0 && call < RT__CALL_COUNT ? call_names[call] : "?";
}
static const char *const unmodelled_names[] = {
#define RT__UNMODELLED_NAME(n) #n,
    RT_UNMODELLED_MAP(RT__UNMODELLED_NAME)
#undef RT__UNMODELLED_NAME
        "mgpuLaunchClusterKernel",
    "mgpuMemGetDeviceMemRef1dFloat", "mgpuMemGetDeviceMemRef1dInt32"};

const char *asyncfuzz_rt_unmodelled_name(int i) {
  return i >= 0 && i < (int)(sizeof unmodelled_names / sizeof *unmodelled_names)
             ? unmodelled_names[i]
             : "?";
}
const char *asyncfuzz_rt_error_name(int err) {
  return err >= 0 && err < RT__ERR_COUNT ? err_names[err] : "?";
}
const char *asyncfuzz_rt_detail_text(int detail) {
  return detail >= 0 && detail < RT__DETAIL_COUNT ? detail_texts[detail] : "?";
}
const char *asyncfuzz_rt_policy_name(int policy) {
  return policy >= 0 && policy < RT__POLICY_COUNT ? policy_names[policy] : "?";
}
int asyncfuzz_rt_policy_parse(const char *name) {
  for (int i = 0; i < RT__POLICY_COUNT; i++)
    if (strcmp(name, policy_names[i]) == 0)
      return i;
  return -1;
}

/* ---- trace ---- */

RtRec *rt__rec_new(Rt *rt, int call) {
  if (rt->ntrace >= rt->captrace && /* (the call only when full: it was 1% of a case) */
      af_grow((void **)&rt->trace, &rt->captrace, rt->ntrace + 1, sizeof(RtRec))) {
    rt->oom = 1;
    return NULL;
  }
  static const RtRec zero; /* copied, not memset: gcc makes the memset a slow `rep stos` */
  RtRec *r = &rt->trace[rt->ntrace];
  *r = zero;
  r->seq = (uint32_t)rt->ntrace++;
  int tid = rt__t_tid;
  r->tid = tid;
  if (tid >= rt->sum.max_threads)
    rt->sum.max_threads = tid + 1;
  r->op = t_op;
  r->call = (uint8_t)call;
  return r;
}

void rt__rec_arg(RtRec *r, RtRef a) {
  if (r && r->nargs < RT_REC_ARGS)
    r->args[r->nargs++] = a;
}

void rt__rec_fail(Rt *rt, RtRec *r, int err, int detail) {
  if (r == NULL)
    return;
  if (r->err == RT_ERR_OK) {
    rt->sum.nerrors++;
    if (rt->sum.first_error < 0)
      rt->sum.first_error = (int)r->seq;
  }
  r->err = (uint8_t)err;
  r->detail = (uint8_t)detail;
}

/* Symbolic name of a pointer: a device allocation, a registered host buffer or unknown. */
RtRef rt__ref_ptr(Rt *rt, const void *p) {
  if (p == NULL)
    return RT_REF(RT_REF_NULL, 0, 0);
  const char *c = p;
  for (int i = rt->nallocs - 1; i >= 0; i--) {
    Alloc *a = &rt->allocs[i];
    if (c >= a->p && c < a->p + (a->bytes ? a->bytes : 1))
      return RT_REF(RT_REF_BUF, i, (uint32_t)(c - a->p));
  }
  for (int i = 0; i < rt->nhosts; i++) {
    HostBuf *h = &rt->hosts[i];
    if (c >= h->p && c < h->p + (h->bytes ? h->bytes : 1))
      return RT_REF(RT_REF_HOST, h->id, (uint32_t)(c - h->p));
  }
  return RT_REF(RT_REF_PTR, 0, 0);
}

RtRef rt__ref_int(uint64_t v) {
  return RT_REF(RT_REF_INT, (v >> 32) & 0xFFFFFF, (uint32_t)v);
}

/* keep_modules: the modules loaded so far stay valid (a batch loads them once, in a global
 * constructor, before its first case begins) */
char rt__g_backend_msg[512]; /* why the last begin could not open its backend */

char rt__g_log[2048]; /* what the run reported besides its records (asyncfuzz_rt_log) */

void rt__log(const char *msg) {
  size_t n = strlen(rt__g_log);
  if (n + 1 < sizeof rt__g_log)
    snprintf(rt__g_log + n, sizeof rt__g_log - n, "%s\n", msg);
}

const char *asyncfuzz_rt_log(void) {
  return rt__g_log;
}

void asyncfuzz_rt_set_thread(int tid) {
  rt__t_tid = tid;
}

void asyncfuzz_rt_set_op(int op) {
  t_op = op;
}

const RtRec *asyncfuzz_rt_trace(int *n) {
  *n = rt__g_rt.ntrace;
  return rt__g_rt.trace;
}

const RtRec *asyncfuzz_rt_prev_trace(int *n) {
  *n = rt__g_rt.nprev;
  return rt__g_rt.prev;
}

const RtObs *asyncfuzz_rt_observations(int *n) {
  *n = rt__g_rt.nobs;
  return rt__g_rt.obs;
}

void asyncfuzz_rt_summary(RtSummary *out) {
  *out = rt__g_rt.sum;
}

/* ---- trace text ---- */

/* The kernel a function or name reference names: "outlined" for a kernel outlined from a
 * gpu.launch (which one, only its launch says), "?" for none. */
static const char *ref_kernel(RtRef a) {
  if (RT_REF_ID(a) == RT_FUNC_OUTLINED)
    return "outlined";
  return kernel_name(RT_REF_ID(a)) ? kernel_name(RT_REF_ID(a)) : "?";
}

static void fmt_ref(AfBuf *b, RtRef a) {
  switch (RT_REF_KIND(a)) {
  case RT_REF_INT: {
    uint64_t v = ((uint64_t)RT_REF_ID(a) << 32) | RT_REF_VAL(a);
    if (v >> 31 && (v >> 32) == 0)
      af_buf_printf(b, "%d", (int32_t)(uint32_t)v); /* a negative i32 */
    else
      af_buf_printf(b, "%llu", (unsigned long long)v);
    break;
  }
  case RT_REF_NULL:
    af_buf_puts(b, "null");
    break;
  case RT_REF_STREAM:
    af_buf_printf(b, "s%d", RT_REF_ID(a));
    break;
  case RT_REF_EVENT:
    af_buf_printf(b, "e%d", RT_REF_ID(a));
    break;
  case RT_REF_MODULE:
    af_buf_printf(b, "m%d", RT_REF_ID(a));
    break;
  case RT_REF_FUNC:
    af_buf_printf(b, "f:%s", ref_kernel(a));
    break;
  case RT_REF_BUF:
    af_buf_printf(b, "b%d+%u", RT_REF_ID(a), RT_REF_VAL(a));
    break;
  case RT_REF_HOST:
    if (RT_REF_ID(a) & 0x800000)
      af_buf_printf(b, "hr%d+%u", RT_REF_ID(a) & 0x7FFFFF, RT_REF_VAL(a));
    else
      af_buf_printf(b, "h%d+%u", RT_REF_ID(a), RT_REF_VAL(a));
    break;
  case RT_REF_PTR:
    af_buf_puts(b, "ptr?");
    break;
  case RT_REF_BAD:
    af_buf_puts(b, "bad-handle");
    break;
  case RT_REF_REGION:
    if (RT_REF_VAL(a))
      af_buf_printf(b, "r%d.%u", RT_REF_ID(a), RT_REF_VAL(a) - 1);
    else
      af_buf_printf(b, "r%d", RT_REF_ID(a));
    break;
  case RT_REF_ASYNC:
    af_buf_printf(b, "a%d", RT_REF_ID(a));
    break;
  case RT_REF_STR:
    if (RT_REF_ID(a) == 0xFFFFFF)
      af_buf_puts(b, "\"?\"");
    else
      af_buf_printf(b, "\"%s\"", ref_kernel(a));
    break;
  default:
    af_buf_puts(b, "-");
    break;
  }
}

void asyncfuzz_rt_format_rec(AfBuf *b, const RtRec *r) {
  if (r->tid < 0)
    af_buf_printf(b, "%u D ", r->seq);
  else
    af_buf_printf(b, "%u T%d ", r->seq, r->tid);
  if (r->call == RT_CALL_EXEC) { /* exec(stream, #enqueuing call, phase) */
    af_buf_puts(b, "exec(");
    fmt_ref(b, r->args[0]);
    af_buf_printf(b, ", #%u, %s)", r->cause, RT_REF_VAL(r->args[2]) == 1 ? "start" : "done");
    if (r->err)
      af_buf_printf(b, " ! %s (%s)", asyncfuzz_rt_error_name(r->err),
                    asyncfuzz_rt_detail_text(r->detail));
    return;
  }
  int unmodelled = r->call == RT_CALL_UNMODELLED && r->nargs > 0; /* (by its own name) */
  af_buf_puts(b, unmodelled ? asyncfuzz_rt_unmodelled_name((int)RT_REF_VAL(r->args[0]))
                            : asyncfuzz_rt_call_name(r->call));
  af_buf_puts(b, "(");
  for (int i = unmodelled; i < r->nargs; i++) {
    if (i > unmodelled)
      af_buf_puts(b, ", ");
    fmt_ref(b, r->args[i]);
  }
  af_buf_puts(b, ")");
  if (RT_REF_KIND(r->ret) != RT_REF_NONE) {
    af_buf_puts(b, " -> ");
    fmt_ref(b, r->ret);
  }
  if (r->err)
    af_buf_printf(b, " ! %s (%s)", asyncfuzz_rt_error_name(r->err),
                  asyncfuzz_rt_detail_text(r->detail));
}

void asyncfuzz_rt_format_trace(AfBuf *b, int from, int to) {
  int n = rt__g_rt.ntrace;
  if (to < 0 || to > n)
    to = n;
  for (int i = from < 0 ? 0 : from; i < to; i++) {
    asyncfuzz_rt_format_rec(b, &rt__g_rt.trace[i]);
    af_buf_puts(b, "\n");
  }
}

#define TRACE_MAGIC "AFTRACE1"

int asyncfuzz_rt_write_trace_bin(const char *path) {
  Rt *rt = &rt__g_rt;
  FILE *f = fopen(path, "wb");
  if (f == NULL)
    return AF_EIO;
  uint32_t hdr[6] = {ASYNCFUZZ_TRACE_VERSION, (uint32_t)sizeof(RtRec),  (uint32_t)rt->ntrace,
                     (uint32_t)rt->nobs,      (uint32_t)rt->cfg.policy, (uint32_t)rt->cfg.abi};
  int bad = fwrite(TRACE_MAGIC, 1, 8, f) != 8;
  bad |= fwrite(hdr, sizeof hdr, 1, f) != 1;
  bad |= fwrite(&rt->sum, sizeof rt->sum, 1, f) != 1;
  if (rt->ntrace)
    bad |= fwrite(rt->trace, sizeof(RtRec), (size_t)rt->ntrace, f) != (size_t)rt->ntrace;
  for (int i = 0; i < rt->nobs && !bad; i++) {
    const RtObs *o = &rt->obs[i];
    int64_t head[4] = {o->id, o->tid, o->seq, o->n};
    bad |= fwrite(head, sizeof head, 1, f) != 1;
    if (o->n > 0)
      bad |= fwrite(o->vals, sizeof(int32_t), (size_t)o->n, f) != (size_t)o->n;
  }
  bad |= fclose(f) != 0;
  return bad ? AF_EIO : 0;
}
