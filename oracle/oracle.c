/*
 * oracle.c: sequential reference execution and verdicts.
 */
#include "oracle.h"

#include "../kernels/kernels.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* snprintf into a fixed field (a signature): truncation is fine there. */
static void fmt_into(char *out, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out, n, fmt, ap);
  va_end(ap);
}

static const struct {
  const char *name, *found_by;
  int phase, shape;
} verdicts[] = {
#define ORACLE__VROW(id, name, phase, by, shape) {name, by, ORACLE_PHASE_##phase, shape},
    VERDICT_MAP(ORACLE__VROW)
#undef ORACLE__VROW
};

const char *oracle_verdict_name(int cls) {
  return cls >= 0 && cls < VERDICT__COUNT ? verdicts[cls].name : "?";
}

int oracle_verdict_lookup(const char *name) {
  for (int k = 0; name && k < VERDICT__COUNT; k++)
    if (strcmp(verdicts[k].name, name) == 0)
      return k;
  return -1;
}

int oracle_verdict_phase(int cls) {
  return cls >= 0 && cls < VERDICT__COUNT ? verdicts[cls].phase : ORACLE_PHASE_RUN;
}

const char *oracle_verdict_found_by(int cls) {
  return cls >= 0 && cls < VERDICT__COUNT ? verdicts[cls].found_by : "";
}

int oracle_verdict_names_shape(int cls) {
  return cls >= 0 && cls < VERDICT__COUNT && verdicts[cls].shape;
}

static const char *value_kind(int32_t v) {
  if (v == KERNEL_SENTINEL)
    return "sentinel";
  if (v == KERNEL_UNINIT)
    return "uninitialized";
  if (v == KERNEL_POISON)
    return "freed";
  return "stale";
}

/* "memcpy.D2H", "launch.af_fill", "memset", "host-init" (+ "@region" when it ran in one). */
static void writer_desc(const GenCase *c, int w, char *out, size_t n) {
  if (w < 0) {
    snprintf(out, n, "host-init");
    return;
  }
  const GenOp *o = &c->ops[w];
  const char *where = o->ctx ? "@region" : "";
  if (gen_op_flags(o->kind) & GEN_K_SRC) {
    int hd = c->bufs[o->buf].kind == GEN_BUF_HOST, hs = c->bufs[o->src].kind == GEN_BUF_HOST;
    snprintf(out, n, "%s.%s%s", gen_op_name(o->kind), hs ? "H2D" : hd ? "D2H" : "D2D", where);
  } else if (gen_kind_launches(o->kind)) {
    snprintf(out, n, "%s.%s%s", gen_op_name(o->kind), kernel_info(o->kernel)->name, where);
  } else {
    snprintf(out, n, "%s%s", gen_op_name(o->kind), where);
  }
}

const char *oracle_handle_kind(RtRef r) {
  switch (RT_REF_KIND(r)) {
  case RT_REF_STREAM:
    return "stream";
  case RT_REF_EVENT:
    return "event";
  case RT_REF_NULL:
    return "null";
  case RT_REF_BUF:
    return "device-ptr";
  case RT_REF_HOST:
    return "host-ptr";
  default:
    return "other";
  }
}

int oracle_report_counts(const GenCase *c, const HbReport *r, const RtRec *trace, int ntrace) {
  if (!hb_kind_is_error(r->kind))
    return 0;
  if (r->kind == HB_LEAK_BUFFER) {
    /* a case may leak a buffer on purpose; the lowering leaks only what the case frees */
    int op = r->seq2 >= 0 && r->seq2 < ntrace ? trace[r->seq2].op : -1;
    if (op < 0 || op >= c->nops || c->ops[op].kind != GEN_OP_ALLOC)
      return 1;
    for (int i = 0; i < c->nops; i++)
      if (c->ops[i].kind == GEN_OP_DEALLOC && c->ops[i].buf == c->ops[op].buf)
        return 1;
    return 0;
  }
  return 1;
}

void oracle_format_reports(AfBuf *b, const GenCase *c, const HbResult *hb, const RtRec *trace,
                           int ntrace) {
  for (int i = 0; i < hb->nreports; i++) {
    af_buf_puts(b, "  ");
    hb_format_report(b, &hb->reports[i], trace, ntrace);
    if (c && hb_kind_is_error(hb->reports[i].kind) &&
        !oracle_report_counts(c, &hb->reports[i], trace, ntrace))
      af_buf_puts(b, "\n    (not counted: the case itself never frees this buffer)");
    af_buf_puts(b, "\n");
  }
}

void oracle_format_verdict(AfBuf *b, const Verdict *v) {
  af_buf_printf(b, "verdict: %s\n", oracle_verdict_name(v->cls));
  if (v->cls != VERDICT_PASS)
    af_buf_printf(b, "signature: %s\ndetailed: %s\ndetail: %s\n", v->signature, v->victim,
                  v->detail);
}

/* A Case op as a signature word: "launch.af_fill", "memcpy.D2H@region", "observe", or the
 * call's name when the lowering made the call on its own (no Case op). */
static void op_word(const GenCase *c, int op, const RtRec *r, char *out, size_t n) {
  if (op >= 0 && op < c->nops) {
    const GenOp *o = &c->ops[op];
    if (gen_op_flags(o->kind) & (GEN_K_SRC | GEN_K_ARGS))
      writer_desc(c, op, out, n);
    else
      snprintf(out, n, "%s%s", gen_op_name(o->kind), o->ctx ? "@region" : "");
    return;
  }
  snprintf(out, n, "%s", r ? asyncfuzz_rt_call_name(r->call) : "-");
}

/* An op's shape as a signature word: "gpu.launch_func async deps=2+@region". */
static void shape_word(const GenCase *c, int op, char *out, size_t n) {
  if (op < 0 || op >= c->nops) {
    snprintf(out, n, "untagged");
    return;
  }
  char shape[64];
  gen_shape_format(&c->ops[op], shape, sizeof shape);
  snprintf(out, n, "%s%s", shape, c->ops[op].ctx ? "@region" : "");
}

/* Whether op `op` consumed event h before record `before`: it waited for it (on a stream or the
 * host), or took it as an awaited value. An event serves one use and its consumer ends it, so
 * a later user was a second consumer of one event. */
static int consumed_by(const GenCase *c, RtRef h, int op, int32_t before, const RtRec *trace,
                       int ntrace) {
  if (RT_REF_KIND(h) != RT_REF_EVENT || op < 0 || op >= c->nops)
    return 0;
  if (c->ops[op].kind == GEN_OP_AWAIT && c->ops[op].vidx >= 0)
    return 1; /* an await takes the event its region yielded: its consumer */
  for (int i = 0; i < before && i < ntrace; i++) {
    const RtRec *w = &trace[i];
    int a = w->call == RT_CALL_STREAM_WAIT_EVENT   ? 1
            : w->call == RT_CALL_EVENT_SYNCHRONIZE ? 0
                                                   : -1;
    if (w->op == op && a >= 0 && a < w->nargs && RT_REF_KIND(w->args[a]) == RT_REF_EVENT &&
        RT_REF_ID(w->args[a]) == RT_REF_ID(h))
      return 1;
  }
  return 0;
}

/* Whether the host synchronized stream h just before record `at` destroyed it (the calls of one
 * thread between them are the destroyer's own): the destroyer acted as a host wait does,
 * whatever case op the calls are tagged with or whoever put the wait there (a pass that
 * synchronizes before a host op, a block boundary or a region's end). */
static int synced_then_destroyed(RtRef h, int32_t at, const RtRec *trace, int ntrace) {
  if (RT_REF_KIND(h) != RT_REF_STREAM || at <= 0 || at >= ntrace)
    return 0;
  for (int32_t i = at - 1; i >= 0; i--) {
    const RtRec *w = &trace[i];
    if (w->tid != trace[at].tid || w->call == RT_CALL_EXEC)
      continue;
    return w->call == RT_CALL_STREAM_SYNCHRONIZE && w->nargs >= 1 &&
           RT_REF_KIND(w->args[0]) == RT_REF_STREAM && RT_REF_ID(w->args[0]) == RT_REF_ID(h);
  }
  return 0;
}

/* Which kind of op destroyed a handle (an async op that destroys a stream it made itself is an
 * async op that destroys a stream: whose stream it was is where it came from, not who ended it). */
static const char *destroyer_role(const GenCase *c, int destroyer) {
  if (destroyer < 0 || destroyer >= c->nops)
    return "untagged";
  const GenOp *o = &c->ops[destroyer];
  if (o->kind == GEN_OP_HOST_WAIT)
    return "host-wait";
  if (o->kind == GEN_OP_EXECUTE) /* (a region op's calls are its yield's) */
    return "yield";
  return o->tok >= 0 ? "async-op" : "sync-op";
}

static int is_ordering(int kind) {
  return kind == HB_DATA_RACE || kind == HB_HOST_READ_BEFORE_COMPLETE ||
         kind == HB_HOST_WRITE_WHILE_IN_USE || kind == HB_USE_AFTER_FREE ||
         kind == HB_USE_BEFORE_ALLOC || kind == HB_FREE_WHILE_IN_USE;
}

/* The cause of an ordering report: the case's link the execution lacked (cause.c), found by
 * checking the trace again with what each case op knew. 0 or AF_ENOMEM. */
static int ordering_cause(const GenCase *c, const HbReport *r, const RtRec *trace, int ntrace,
                          const HbResult *hb, const char *lowering, Verdict *v) {
  /* a use after free: the case orders the use before the dealloc, the run did not */
  int uaf = r->kind == HB_USE_AFTER_FREE;
  int from = uaf ? r->op2 : r->op1, to = uaf ? r->op1 : r->op2;
  int32_t seq = uaf ? r->seq2 : r->seq1;
  OracleLink l = {-1, -1, -1, -1};
  if (from >= 0 && from < c->nops && to >= 0 && to < c->nops) {
    HbOptions ho = {0};
    ho.lenient_free = hb->lenient_free;
    ho.legacy_sync = hb->legacy_sync;
    ho.nops = c->nops;
    HbResult *k = NULL;
    AfErr err;
    af_err_clear(&err);
    /* what each op knew when it last acted before the later access (an op in a loop acts
     * again in later iterations) */
    int32_t upto = (r->seq1 > r->seq2 ? r->seq1 : r->seq2) + 1;
    if (hb_check(trace, upto < ntrace ? upto : ntrace, &ho, &k, &err))
      return AF_ENOMEM;
    int rc = oracle_loop_link(c, trace, ntrace, r->op1, r->seq1, r->op2, r->seq2, &l)
                 ? 0
                 : oracle_missing_link(c, k, trace, ntrace, from, seq, to, &l);
    hb_result_free(k);
    if (rc)
      return rc;
  }
  /* the consumer did wait, for an event recorded before the producer's work: whatever link
   * the wait carried, the event is the cause */
  if (oracle_event_before_work(c, trace, ntrace, from, seq, to) ||
      (l.mech >= 0 && l.to >= 0 && l.to != to &&
       oracle_event_before_work(c, trace, ntrace, from, seq, l.to))) {
    fmt_into(v->signature, sizeof v->signature, "%s|missing-edge|event-before-work", lowering);
    return 0;
  }
  if (l.mech < 0) {
    fmt_into(v->signature, sizeof v->signature, "%s|%s|unattributed|%s", lowering,
             oracle_verdict_name(v->cls), hb_kind_name(r->kind));
    return 0;
  }
  char words[160];
  oracle_link_format(c, &l, words, sizeof words);
  fmt_into(v->signature, sizeof v->signature, "%s|missing-edge|%s", lowering, words);
  if (l.mech == ORACLE_LINK_EXTRA_DEP) { /* (the op that dropped it: the detailed form's) */
    char shape[96], victim[sizeof v->victim];
    shape_word(c, l.to, shape, sizeof shape);
    snprintf(victim, sizeof victim, "%s", v->victim);
    fmt_into(v->victim, sizeof v->victim, "%s|extra-dep-of:%s", victim, shape);
  }
  if ((l.mech == ORACLE_LINK_OWN_DEP || l.mech == ORACLE_LINK_DEALLOC) && l.to >= 0 &&
      l.to < c->nops) { /* (the op that lost it, a launch's stream said: what steering avoids) */
    char shape[96], victim[sizeof v->victim];
    gen_shape_format(&c->ops[l.to], shape, sizeof shape);
    snprintf(victim, sizeof victim, "%s", v->victim);
    fmt_into(v->victim, sizeof v->victim, "%s|own-dep-of:%s%s", victim, shape,
             gen_op_on_stream(&c->ops[l.to]) ? " stream" : "");
  }
  return 0;
}

/* Class, cause and victims of the checker report the verdict is built from. 0 or AF_ENOMEM. */
static int hb_signature(const GenCase *c, const HbReport *r, const RtRec *trace, int ntrace,
                        const HbResult *hb, const char *lowering, Verdict *v) {
  const RtRec *r1 = r->seq1 >= 0 && r->seq1 < ntrace ? &trace[r->seq1] : NULL;
  const RtRec *r2 = r->seq2 >= 0 && r->seq2 < ntrace ? &trace[r->seq2] : NULL;
  char w1[64], w2[64], kind[64];
  op_word(c, r->op1, r1, w1, sizeof w1);
  op_word(c, r->op2, r2, w2, sizeof w2);
  snprintf(kind, sizeof kind, "%s%s%s", hb_kind_name(r->kind), r->subkind ? "." : "",
           r->subkind ? hb_subkind_name(r->subkind) : "");
  char s1[96], s2[96];
  shape_word(c, r->op1, s1, sizeof s1);
  shape_word(c, r->op2, s2, sizeof s2);
  if (r->kind == HB_DATA_RACE || r->kind == HB_HOST_READ_BEFORE_COMPLETE ||
      r->kind == HB_HOST_WRITE_WHILE_IN_USE) {
    v->cls = VERDICT_RACE;
    /* both calls implement Case ops the case orders: the execution lacks that edge */
    int case_ops = r->op1 >= 0 && r->op1 < c->nops && r->op2 >= 0 && r->op2 < c->nops;
    const char *edge = "unordered";
    if (case_ops)
      edge = c->ops[r->op1].ctx != c->ops[r->op2].ctx ? "cross-region"
             : r->agent2 >= 0                         ? "host-sync"
                                                      : "dependency";
    fmt_into(v->victim, sizeof v->victim, "%s|race|%s%s|%s->%s|%s->%s|%s", lowering,
             case_ops ? "missing-edge|" : "", kind, w1, w2, r->agent1 >= 0 ? "host" : "stream",
             r->agent2 >= 0 ? "host" : "stream", edge);
  } else if (r->kind == HB_INVALID_HANDLE) {
    v->cls = VERDICT_RUNTIME_ERROR;
    fmt_into(v->victim, sizeof v->victim, "%s|runtime_error|%s|%s", lowering,
             r2 ? asyncfuzz_rt_call_name(r2->call) : "-", kind);
    fmt_into(v->signature, sizeof v->signature, "%s|misused-handle|%s|%s|via:%s", lowering,
             oracle_handle_kind(r->buf),
             r->subkind == HB_SUB_WRONG_KIND ? "wrong-kind" : "not-a-handle",
             oracle_handle_travel(c, r->buf, trace, ntrace, r->seq2, r->op2));
  } else if (r->kind == HB_LEAK_STREAM || r->kind == HB_LEAK_EVENT || r->kind == HB_LEAK_BUFFER) {
    v->cls = VERDICT_LIFETIME;
    fmt_into(v->victim, sizeof v->victim, "%s|lifetime|%s|made-by:%s", lowering, kind, s2);
    /* the kind of op whose lowering made the handle: one pattern, whatever its dependencies
     * and wherever it stands; an event, by what it was made for (one helper of a lowering
     * makes the events that order a stream after another, whichever op needs one) */
    char *d = strstr(s2, " deps=");
    if (d)
      *d = 0;
    d = strstr(s2, "@region");
    if (d)
      *d = 0;
    const char *end =
        r->kind == HB_LEAK_STREAM ? oracle_stream_end(c, r->buf, trace, ntrace) : NULL;
    if (r->kind == HB_LEAK_EVENT)
      fmt_into(v->signature, sizeof v->signature, "%s|lifetime|%s|for:%s", lowering, kind,
               oracle_event_use(r->buf, trace, ntrace));
    else if (end)
      fmt_into(v->signature, sizeof v->signature, "%s|lifetime|%s|%s", lowering, kind, end);
    else
      fmt_into(v->signature, sizeof v->signature, "%s|lifetime|%s|made-by:%s", lowering, kind, s2);
  } else {
    v->cls = VERDICT_LIFETIME;
    fmt_into(v->victim, sizeof v->victim, "%s|lifetime|%s|%s->%s", lowering, kind, w1, w2);
    if (r->kind == HB_USE_OF_DESTROYED_HANDLE) {
      /* who destroyed it; the call that tripped, and where the token went before, are
       * victims */
      fmt_into(v->signature, sizeof v->signature,
               "%s|misused-handle|%s|used-after-destroy|destroyed-by:%s", lowering,
               oracle_handle_kind(r->buf),
               consumed_by(c, r->buf, r->op1, r->seq1, trace, ntrace)  ? "another-consumer"
               : synced_then_destroyed(r->buf, r->seq1, trace, ntrace) ? "host-wait"
                                                                       : destroyer_role(c, r->op1));
    } else if (!is_ordering(r->kind)) {
      fmt_into(v->signature, sizeof v->signature, "%s|lifetime|%s|%s->%s", lowering, kind, s1, s2);
    }
  }
  if (is_ordering(r->kind))
    return ordering_cause(c, r, trace, ntrace, hb, lowering, v);
  return 0;
}

/* The cause of a runtime error: for a handle the runtime refused, the op that made the handle
 * and how it was misused; otherwise the error and the op whose call failed. */
static void runtime_cause(const GenCase *c, const RtRec *r, RtRef given, const RtRec *trace,
                          int ntrace, int refused_handle, char *out, size_t n) {
  char w[96];
  if (refused_handle) {
    if (given == 0)
      for (int a = 0; a < r->nargs && given == 0; a++) {
        int k = RT_REF_KIND(r->args[a]);
        if (k == RT_REF_STREAM || k == RT_REF_EVENT || k == RT_REF_NULL || k == RT_REF_BAD)
          given = r->args[a];
      }
    const char *how = r->detail == RT_DETAIL_WRONG_KIND    ? "wrong-kind"
                      : r->detail == RT_DETAIL_NULL_HANDLE ? "null"
                                                           : "not-a-handle";
    snprintf(out, n, "misused-handle|%s|%s|via:%s", oracle_handle_kind(given), how,
             oracle_handle_travel(c, given, trace, ntrace, (int)r->seq, r->op));
    return;
  }
  const RtRec *at = r;
  if (r->call == RT_CALL_EXEC && r->cause < (uint32_t)ntrace)
    at = &trace[r->cause];
  /* bytes out of every buffer: named by the form that wrote them (kind, element type), as a
   * wrong value is (blame.c) */
  int data = at->op >= 0 && at->op < c->nops && r->detail == RT_DETAIL_BAD_POINTER &&
             (gen_op_flags(c->ops[at->op].kind) & (GEN_K_TYPED | GEN_K_ARGS));
  /* the host given device memory to read: named by the allocation that made the buffer (the
   * read is its victim, wherever it stands) */
  int maker = -1;
  if (r->detail == RT_DETAIL_HOST_DEVICE_MEM)
    for (int a = 0; a < at->nargs && maker < 0; a++)
      if (RT_REF_KIND(at->args[a]) == RT_REF_BUF)
        for (int32_t j = (int32_t)at->seq - 1; j >= 0 && j < ntrace && maker < 0; j--)
          if (trace[j].call == RT_CALL_MEM_ALLOC && trace[j].ret == at->args[a])
            maker = trace[j].op;
  if (maker >= 0 && maker < c->nops)
    shape_word(c, maker, w, sizeof w);
  else if (data) /* by its kind alone: bytes past the end are one fault at any width */
    snprintf(w, sizeof w, "%s", gen_op_mlir(c->ops[at->op].kind));
  else if (at->op >= 0 && at->op < c->nops)
    shape_word(c, at->op, w, sizeof w);
  else
    snprintf(w, sizeof w, "%s", asyncfuzz_rt_call_name(at->call));
  /* (the call an op makes is the same at any dependency count: one pattern makes it) */
  char *d = strstr(w, " deps=");
  if (d)
    memmove(d, d + 6 + strcspn(d + 6, " @"), strlen(d + 6 + strcspn(d + 6, " @")) + 1);
  snprintf(out, n, "runtime_error|%s|%s|%s", asyncfuzz_rt_error_name(r->err),
           asyncfuzz_rt_detail_text(r->detail), w);
}

/* What the observations say: the first wrong one's signature, its detailed form (when the
 * writer's place matters) and its detail. */
typedef struct ObsJudged {
  char sig[160], detail[300], victim[160];
} ObsJudged;

/* Observation x (expected) against got: 1 and j filled when it is wrong. */
static int judge_values(const GenCase *c, const OracleObs *x, const RtObs *got, int blame,
                        ObsJudged *j) {
  char wdesc[64];
  writer_desc(c, x->writer, wdesc, sizeof wdesc);
  if (got->n != x->n) {
    snprintf(j->sig, sizeof j->sig, "wrong_result|observe-size|%s", wdesc);
    snprintf(j->detail, sizeof j->detail, "observation of op #%d has %lld values, expected %lld",
             x->id, (long long)got->n, (long long)x->n);
    return 1;
  }
  for (int64_t i = 0; i < x->n; i++) {
    if (got->vals[i] == x->vals[i])
      continue;
    /* the writer's kind, not where it ran: a data fault is the same wherever its op stands
     * (the detailed form keeps @region) */
    char wkind[64];
    snprintf(wkind, sizeof wkind, "%s", wdesc);
    char *at = strstr(wkind, "@region");
    if (at)
      *at = '\0';
    /* named by the op that wrote the wrong bytes, when the reference can say which (blame.c):
     * the observation's writer and what the value was go into the detailed form */
    char form[64] = "";
    if (blame && oracle_wrong_bytes(c, x, got->vals, form, sizeof form) == 0 && form[0]) {
      snprintf(j->sig, sizeof j->sig, "wrong_result|%s", form);
      snprintf(j->victim, sizeof j->victim, "wrong_result|%s|%s|%s", form, wdesc,
               value_kind(got->vals[i]));
    } else {
      snprintf(j->sig, sizeof j->sig, "wrong_result|%s|%s", wkind, value_kind(got->vals[i]));
      snprintf(j->victim, sizeof j->victim, "wrong_result|%s|%s", wdesc, value_kind(got->vals[i]));
    }
    snprintf(j->detail, sizeof j->detail,
             "observation of op #%d (b%d, last written by %s op #%d): element %lld expected "
             "%d, got %d (%s)",
             x->id, x->buf, wdesc, x->writer, (long long)i, x->vals[i], got->vals[i],
             value_kind(got->vals[i]));
    return 1;
  }
  return 0;
}

/* The observations against the expected ones, matched by id: each expected one must appear
 * exactly once with its values, and no other. Whether any is wrong (j: the first). */
static int judge_observations(const GenCase *c, const OracleExpected *e, const RtObs *obs, int nobs,
                              int blame, ObsJudged *j) {
  for (int k = 0; k < e->nobs; k++) {
    const OracleObs *x = &e->obs[k];
    const RtObs *got = NULL;
    int count = 0;
    for (int q = 0; q < nobs; q++)
      if (obs[q].id == x->id) {
        if (!got)
          got = &obs[q];
        count++;
      }
    if (got == NULL || count != 1) {
      char wdesc[64];
      writer_desc(c, x->writer, wdesc, sizeof wdesc);
      snprintf(j->sig, sizeof j->sig, "wrong_result|observe-%s|%s", got ? "repeated" : "missing",
               wdesc);
      snprintf(j->detail, sizeof j->detail, "observation of op #%d (b%d) was %s", x->id, x->buf,
               got ? "made more than once" : "never made");
      return 1;
    }
    if (judge_values(c, x, got, blame, j))
      return 1;
  }
  if (nobs != e->nobs) {
    snprintf(j->sig, sizeof j->sig, "wrong_result|observe-extra");
    snprintf(j->detail, sizeof j->detail, "%d observations made, %d expected", nobs, e->nobs);
    return 1;
  }
  return 0;
}

/* What the first runtime error says: its signature (call, error, detail, the handle given),
 * its cause, whether the runtime refused a handle. */
typedef struct RtJudged {
  char sig[200], cause[200];
  int refused_handle;
  const RtRec *rec;
} RtJudged;

static void judge_runtime(const GenCase *c, const RtRec *r, const RtRec *trace, int ntrace,
                          RtJudged *j) {
  const char *arg = "";
  RtRef given = 0;
  j->rec = r;
  if (r->detail == RT_DETAIL_WRONG_KIND) {
    /* which handle was of the wrong kind */
    for (int a = 0; a < r->nargs; a++) {
      int k = RT_REF_KIND(r->args[a]);
      int want_event = (r->call == RT_CALL_EVENT_SYNCHRONIZE || r->call == RT_CALL_EVENT_DESTROY ||
                        (r->call == RT_CALL_EVENT_RECORD && a == 0) ||
                        (r->call == RT_CALL_STREAM_WAIT_EVENT && a == 1));
      if ((want_event && k != RT_REF_EVENT) || (!want_event && k == RT_REF_EVENT)) {
        arg = oracle_handle_kind(r->args[a]);
        given = r->args[a];
        break;
      }
    }
  }
  j->refused_handle = r->call != RT_CALL_EXEC &&
                      (r->detail == RT_DETAIL_WRONG_KIND || r->detail == RT_DETAIL_NOT_A_HANDLE ||
                       r->detail == RT_DETAIL_NULL_HANDLE);
  const char *call = r->call == RT_CALL_EXEC ? "device-exec" : asyncfuzz_rt_call_name(r->call);
  if (r->call == RT_CALL_EXEC && r->cause < (uint32_t)ntrace)
    call = asyncfuzz_rt_call_name(trace[r->cause].call);
  /* a copy's or memset's call is chosen by its element type (mgpuMemset16): the op's kind and
   * type close the detailed form, where steering reads them ("gpu.memset async i16") */
  const RtRec *at = r->call == RT_CALL_EXEC && r->cause < (uint32_t)ntrace ? &trace[r->cause] : r;
  char form[64] = "";
  if (at->op >= 0 && at->op < c->nops && (gen_op_flags(c->ops[at->op].kind) & GEN_K_TYPED) &&
      c->ops[at->op].buf >= 0 && c->ops[at->op].buf < c->nbufs)
    snprintf(form, sizeof form, "|%s async %s", gen_op_mlir(c->ops[at->op].kind),
             gen_elem_name(gen_elem_storage(c->bufs[c->ops[at->op].buf].elem)));
  snprintf(j->sig, sizeof j->sig, "runtime_error|%s|%s|%s%s%s%s", call,
           asyncfuzz_rt_error_name(r->err), asyncfuzz_rt_detail_text(r->detail),
           *arg ? "|given=" : "", arg, form);
  runtime_cause(c, r, given, trace, ntrace, j->refused_handle, j->cause, sizeof j->cause);
}

int oracle_verdict_has(const Verdict *v, const char *sig) {
  if (strcmp(v->signature, sig) == 0)
    return 1;
  for (int i = 0; i < v->nalso; i++)
    if (strcmp(v->also[i].signature, sig) == 0)
      return 1;
  return 0;
}

/* Which family of causes a counted checker report belongs to: a leak (a handle or buffer never
 * released), an ordering error (an access or free the run did not order), or a misuse (a
 * handle of the wrong kind or destroyed, a double or invalid free), which can leave both. */
enum { CAUSE_LEAK, CAUSE_ORDER, CAUSE_MISUSE };
static int cause_family(int kind) {
  if (kind == HB_LEAK_STREAM || kind == HB_LEAK_EVENT || kind == HB_LEAK_BUFFER)
    return CAUSE_LEAK;
  return is_ordering(kind) ? CAUSE_ORDER : CAUSE_MISUSE;
}

static void add_also(Verdict *v, const Verdict *x) {
  if (v->nalso >= VERDICT_MAX_ALSO || strcmp(x->signature, v->signature) == 0)
    return;
  VerdictCause *a = &v->also[v->nalso++];
  a->cls = x->cls;
  snprintf(a->signature, sizeof a->signature, "%s", x->signature);
  snprintf(a->victim, sizeof a->victim, "%s", x->victim[0] ? x->victim : x->signature);
}

/* A trace and the checker's reports of it. */
typedef struct Checked {
  const RtRec *trace;
  int ntrace;
  const HbResult *hb;
} Checked;

/* The causes of a failing run v that its headline cannot explain (oracle_judge), from run's
 * reports: the run itself, or, where the runtime refused a handle, the run as if it had not
 * (refused.c), orig then being the run itself. */
static int also_causes(const GenCase *c, const Checked *run, const Checked *orig,
                       const char *lowering, const ObsJudged *oj, Verdict *v) {
  const HbResult *hb = run->hb;
  int first[3] = {-1, -1, -1};
  for (int i = 0; hb && i < hb->nreports; i++) {
    const HbReport *r = &hb->reports[i];
    if (oracle_report_counts(c, r, run->trace, run->ntrace) && first[cause_family(r->kind)] < 0)
      first[cause_family(r->kind)] = i;
  }
  /* a misuse can leave both leaks and ordering errors, which may all be its doing; beside a
   * refused handle it is a cause of its own */
  if (first[CAUSE_MISUSE] >= 0 && !orig)
    return 0;
  int head = v->hb_failed && !orig ? cause_family(hb->reports[v->hb_first].kind) : -1;
  for (int f = CAUSE_LEAK; f <= CAUSE_MISUSE; f++) {
    if (first[f] < 0 || f == head || (first[CAUSE_MISUSE] >= 0 && f != CAUSE_MISUSE))
      continue;
    Verdict *x = af_malloc(sizeof *x);
    if (x == NULL)
      return AF_ENOMEM;
    memset(x, 0, sizeof *x);
    int rc = hb_signature(c, &hb->reports[first[f]], run->trace, run->ntrace, hb, lowering, x);
    if (rc == 0)
      add_also(v, x);
    af_free(x);
    if (rc)
      return rc;
  }
  if (first[CAUSE_MISUSE] >= 0)
    return 0;
  /* wrong values no ordering error explains; beside a refused handle, only where the run itself
   * had no ordering error either (a refused wait leaves the host's read unordered: its stale
   * value is the refusal's doing) */
  int ordered = 1;
  for (int i = 0; orig && orig->hb && i < orig->hb->nreports && ordered; i++)
    ordered = !(is_ordering(orig->hb->reports[i].kind) &&
                oracle_report_counts(c, &orig->hb->reports[i], orig->trace, orig->ntrace));
  if (v->obs_failed && v->cls != VERDICT_WRONG_RESULT && first[CAUSE_ORDER] < 0 && ordered) {
    Verdict x;
    memset(&x, 0, sizeof x);
    x.cls = VERDICT_WRONG_RESULT;
    fmt_into(x.signature, sizeof x.signature, "%s|%s", lowering, oj->sig);
    if (oj->victim[0])
      fmt_into(x.victim, sizeof x.victim, "%s|%s", lowering, oj->victim);
    add_also(v, &x);
  }
  return 0;
}

/* The causes of a failing run v that its headline cannot explain. Every independent cause of a
 * run counts under its own finding: beside a handle the runtime refused, what the checker still
 * reports with the refused calls taken as if they had succeeded (refused.c); beside another
 * failed call, nothing (what follows may all be its doing; a device step that faulted, on memory
 * freed under it say, is an ordering error's doing instead). */
static int judge_also(const GenCase *c, const RtRec *trace, int ntrace, const HbResult *hb,
                      const char *lowering, const ObsJudged *oj, const RtJudged *rj, Verdict *v) {
  Checked run = {trace, ntrace, hb};
  if (!v->rt_failed || (rj->rec && !rj->refused_handle && rj->rec->call == RT_CALL_EXEC))
    return also_causes(c, &run, NULL, lowering, oj, v);
  if (!rj->refused_handle || hb == NULL)
    return 0;
  RtRec *t = NULL;
  int n = 0;
  if (oracle_as_if_succeeded(trace, ntrace, &t, &n))
    return AF_ENOMEM;
  HbOptions ho = {0};
  ho.lenient_free = hb->lenient_free;
  ho.legacy_sync = hb->legacy_sync;
  HbResult *h = NULL;
  AfErr err;
  af_err_clear(&err);
  int rc = hb_check(t, n, &ho, &h, &err) ? AF_ENOMEM : 0;
  Checked as_if = {t, n, h};
  if (rc == 0)
    rc = also_causes(c, &as_if, &run, lowering, oj, v);
  hb_result_free(h);
  af_free(t);
  return rc;
}

int oracle_judge(const GenCase *c, const OracleExpected *e, const RtObs *obs, int nobs,
                 const RtRec *trace, int ntrace, const RtSummary *sum, const HbResult *hb,
                 const char *lowering, Verdict *v) {
  memset(v, 0, sizeof *v);
  v->error_seq = -1;
  v->hb_first = -1;
  if (sum->injected > 0) { /* the device failed a call: nothing else of the run is judged */
    const char *call = asyncfuzz_rt_call_name(sum->injected - 1);
    const char *err = asyncfuzz_rt_error_name(sum->injected_err);
    v->cls = VERDICT_DEVICE_ERROR;
    v->rt_failed = 1;
    for (int i = 0; i < ntrace && v->error_seq < 0; i++)
      if (trace[i].detail == RT_DETAIL_INJECTED)
        v->error_seq = (int)trace[i].seq;
    fmt_into(v->signature, sizeof v->signature, "%s|device_error|%s|%s%s", lowering, call, err,
             sum->injected_sticky ? "|sticky" : "");
    fmt_into(v->victim, sizeof v->victim, "%s", v->signature);
    fmt_into(v->detail, sizeof v->detail,
             "device error: %s failed with %s on purpose (--fail-calls)%s; an environment "
             "failure, not a finding: the run is not judged",
             call, err, sum->injected_sticky ? ", a sticky error: every later call failed" : "");
    return 0;
  }
  if (hb)
    for (int i = 0; i < hb->nreports; i++)
      if (oracle_report_counts(c, &hb->reports[i], trace, ntrace)) {
        if (v->hb_first < 0)
          v->hb_first = i;
        v->hb_errors++;
      }
  v->hb_failed = v->hb_errors > 0;
  ObsJudged oj = {"", "", ""};
  /* which op wrote wrong bytes is asked only where no ordering error explains them (the
   * observation then names the run, or stands beside a leak or a misuse) */
  int ordering = 0;
  for (int i = 0; hb && i < hb->nreports && !ordering; i++)
    ordering =
        is_ordering(hb->reports[i].kind) && oracle_report_counts(c, &hb->reports[i], trace, ntrace);
  v->obs_failed = judge_observations(c, e, obs, nobs, !ordering, &oj);
  RtJudged rj = {"", "", 0, NULL};
  if (sum->nerrors > 0 && sum->first_error >= 0 && sum->first_error < ntrace) {
    v->rt_failed = 1;
    v->error_seq = (int)trace[sum->first_error].seq;
    judge_runtime(c, &trace[sum->first_error], trace, ntrace, &rj);
  }
  /* the verdict: a refused handle first, then the checker, then runtime errors, then values */
  AfBuf b;
  af_buf_init(&b);
  if (v->rt_failed && (rj.refused_handle || !v->hb_failed)) {
    v->cls = VERDICT_RUNTIME_ERROR;
    fmt_into(v->signature, sizeof v->signature, "%s|%s", lowering, rj.cause);
    fmt_into(v->victim, sizeof v->victim, "%s|%s", lowering, rj.sig);
    af_buf_printf(&b, "runtime: %d error(s); first: ", sum->nerrors);
    asyncfuzz_rt_format_rec(&b, rj.rec);
  } else if (v->hb_failed) {
    const HbReport *r = &hb->reports[v->hb_first];
    if (hb_signature(c, r, trace, ntrace, hb, lowering, v)) {
      af_buf_free(&b);
      return AF_ENOMEM;
    }
    af_buf_printf(&b, "checker: %d report(s); first ", v->hb_errors);
    hb_format_report(&b, r, trace, ntrace);
    if (v->rt_failed)
      af_buf_printf(&b, "\nruntime: %d error(s)", sum->nerrors);
  } else if (v->obs_failed) {
    v->cls = VERDICT_WRONG_RESULT;
    fmt_into(v->signature, sizeof v->signature, "%s|%s", lowering, oj.sig);
    if (oj.victim[0])
      fmt_into(v->victim, sizeof v->victim, "%s|%s", lowering, oj.victim);
  } else {
    v->cls = VERDICT_PASS;
    fmt_into(v->signature, sizeof v->signature, "%s|pass", lowering);
  }
  if (v->obs_failed)
    af_buf_printf(&b, "%sobservation: %s", b.len ? "\n" : "", oj.detail);
  if (v->cls == VERDICT_RUNTIME_ERROR && v->hb_failed)
    af_buf_printf(&b, "\nchecker: %d report(s)", v->hb_errors);
  if (!v->victim[0])
    fmt_into(v->victim, sizeof v->victim, "%s", v->signature);
  if (v->cls != VERDICT_PASS && judge_also(c, trace, ntrace, hb, lowering, &oj, &rj, v) != 0)
    b.oom = 1;
  for (int i = 0; i < v->nalso; i++)
    af_buf_printf(&b, "\nalso, independent of it: %s", v->also[i].signature);
  int oom = b.oom;
  snprintf(v->detail, sizeof v->detail, "%s", b.p ? b.p : "");
  af_buf_free(&b);
  return oom ? AF_ENOMEM : 0;
}
