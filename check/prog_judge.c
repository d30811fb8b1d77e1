/*
 * prog_judge.c: one run of a user's program judged (check-mlir), from its trace alone: there is
 * no case and no sequential reference. What the checker reports becomes findings named by the
 * lowering's family and the shapes of the program's lines that made the calls (each runtime
 * call carries its line): a misused handle by the op that misused it, an ordering error by the
 * two ops it put in the wrong order, any other refused call by its op. Leaks are findings,
 * warnings or nothing (ProgOpts.leaks); outputs that differ between schedules are a wrong result
 * (check__prog_outputs). docs/check-mlir.md says what each name means.
 */
#include "check.h"
#include "check_int.h"

#include "../base/proc.h"
#include "../lower/mlir.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Line n of text (1-based), past its leading spaces: a pointer into text, or NULL. */
static const char *line_at(const char *text, int n) {
  const char *p = text;
  for (int k = 1; p && k < n; k++)
    p = (p = strchr(p, '\n')) ? p + 1 : NULL;
  return p && n >= 1 ? p + strspn(p, " \t") : NULL;
}

/* Line n of text, without its newline, into out ("" when none). */
static void line_text(const char *text, int n, char *out, size_t cap) {
  const char *p = line_at(text, n);
  af_fmt(out, cap, "%.*s", p ? (int)strcspn(p, "\n") : 0, p ? p : "");
}

/* What made record seq: the shape of its program line ("gpu.memcpy async deps=1",
 * "func.call @printMemrefF32"), or the runtime call's name where no line is known. */
static void who(const char *text, const RtRec *trace, int n, int seq, int line, char *out,
                size_t cap) {
  const char *l = text ? line_at(text, line) : NULL; /* (in text: the shape reads around it) */
  if (l == NULL || *l == '\n' || *l == '\0') {
    af_fmt(out, cap, "%s", seq >= 0 && seq < n ? asyncfuzz_rt_call_name(trace[seq].call) : "?");
    return;
  }
  mlir_line_shape(text, l, out, cap);
}

/* Whether the program frees (gpu.dealloc) the buffer the op on `line` allocates: a buffer it
 * never frees leaks by its own choice, a warning whatever --leaks says (as a case's does). */
static int frees(const char *text, int line) {
  char l[600], name[64];
  line_text(text ? text : "", line, l, sizeof l);
  if (l[0] != '%')
    return 1; /* (not known: counted) */
  af_fmt(name, sizeof name, "%.*s", (int)strcspn(l, ", ="), l);
  for (const char *p = strstr(text, "gpu.dealloc"); p; p = strstr(p + 1, "gpu.dealloc")) {
    const char *u = strstr(p, name), *nl = strchr(p, '\n');
    if (u && (!nl || u < nl) && !isalnum((unsigned char)u[strlen(name)]) && u[strlen(name)] != '_')
      return 1;
  }
  return 0;
}

static void add(ProgRun *run, int cls, const char *sig, const char *victim, const char *detail,
                int warning) {
  for (int i = 0; i < run->nfind; i++)
    if (strcmp(run->find[i].signature, sig) == 0)
      return;
  if (run->nfind >= PROG_MAX_FINDINGS)
    return;
  ProgFinding *f = &run->find[run->nfind++];
  f->cls = cls;
  f->warning = warning;
  af_fmt(f->signature, sizeof f->signature, "%s", sig);
  af_fmt(f->victim, sizeof f->victim, "%s", victim);
  af_fmt(f->detail, sizeof f->detail, "%s", detail);
}

/* One report of the checker as a finding (or a warning, or nothing for a leak under --leaks). */
static void from_report(const char *fam, const char *text, const HbReport *r, const RtRec *t, int n,
                        const ProgOpts *o, ProgRun *run) {
  char a[200], b[200], sig[300], victim[300], at[80] = "";
  AfBuf d;
  af_buf_init(&d);
  hb_format_report(&d, r, t, n);
  who(text, t, n, r->seq1, r->op1, a, sizeof a);
  who(text, t, n, r->seq2, r->op2, b, sizeof b);
  if (r->op2 > 0)
    af_fmt(at, sizeof at, " at line %d", r->op2);
  int k = r->kind, cls = VERDICT_LIFETIME, warning = 0;
  if (k == HB_LEAK_STREAM || k == HB_LEAK_EVENT || k == HB_LEAK_BUFFER) {
    static const char *const what[] = {"stream", "event", "buffer"};
    const char *w = what[k - HB_LEAK_STREAM];
    af_fmt(sig, sizeof sig, "%s|leak|%s", fam, w);
    af_fmt(victim, sizeof victim, "%s|leak|%s|%s", fam, w, b);
    cls = VERDICT_LIFETIME;
    warning = o->leaks == PROG_LEAKS_WARN ||
              (k == HB_LEAK_BUFFER && !frees(text, r->seq2 >= 0 ? r->op2 : r->op1));
    if (o->leaks == PROG_LEAKS_OFF)
      k = -1;
  } else if (k == HB_INVALID_HANDLE || k == HB_USE_OF_DESTROYED_HANDLE) {
    const char *how = k == HB_USE_OF_DESTROYED_HANDLE   ? "destroyed"
                      : r->subkind == HB_SUB_WRONG_KIND ? "wrong-kind"
                                                        : "not-a-handle";
    af_fmt(sig, sizeof sig, "%s|misused-handle|%s|%s|at:%s", fam, oracle_handle_kind(r->buf), how,
           b);
    af_fmt(victim, sizeof victim, "%s|misused-handle|%s|%s|%s%s", fam, oracle_handle_kind(r->buf),
           how, r->seq2 >= 0 && r->seq2 < n ? asyncfuzz_rt_call_name(t[r->seq2].call) : "?", at);
    cls = VERDICT_RUNTIME_ERROR;
  } else {
    int race =
        k == HB_DATA_RACE || k == HB_HOST_READ_BEFORE_COMPLETE || k == HB_HOST_WRITE_WHILE_IN_USE;
    cls = race ? VERDICT_RACE : VERDICT_LIFETIME;
    char kind[80];
    af_fmt(kind, sizeof kind, "%s%s%s", hb_kind_name(k), r->subkind ? "." : "",
           r->subkind ? hb_subkind_name(r->subkind) : "");
    af_fmt(sig, sizeof sig, "%s|%s|%s|%s->%s", fam, race ? "race" : "lifetime", kind, a, b);
    af_fmt(victim, sizeof victim, "%s|%s|%s|line %d->line %d", fam, race ? "race" : "lifetime",
           kind, r->op1, r->op2);
  }
  char detail[1024]; /* (a trace's ops are the program's lines) */
  size_t m = 0;
  for (const char *q = d.p ? d.p : ""; *q && m + 1 < sizeof detail; q++)
    if (strncmp(q, "[case op #", 10) == 0 && m + 6 < sizeof detail) {
      memcpy(detail + m, "[line ", 6);
      m += 6;
      q += 9;
    } else {
      detail[m++] = *q;
    }
  detail[m] = '\0';
  if (k >= 0 && !d.oom)
    add(run, cls, sig, victim, detail, warning);
  af_buf_free(&d);
}

static int is_handle(const HbReport *r) {
  return r->kind == HB_INVALID_HANDLE || r->kind == HB_USE_OF_DESTROYED_HANDLE;
}

/* A call the runtime refused for another reason than a handle (the checker reports those): an
 * address, a kernel, a call this flavour lacks. */
static void from_errors(const char *fam, const char *text, const RtRec *t, int n, ProgRun *run) {
  for (int i = 0; i < n; i++) {
    const RtRec *r = &t[i];
    int det = r->detail;
    if (r->err == RT_ERR_OK || det == RT_DETAIL_WRONG_KIND || det == RT_DETAIL_DESTROYED ||
        det == RT_DETAIL_NOT_A_HANDLE || det == RT_DETAIL_NULL_HANDLE || det == RT_DETAIL_LEAKED ||
        det == RT_DETAIL_USE_AFTER_FREE || det == RT_DETAIL_DOUBLE_FREE ||
        det == RT_DETAIL_INVALID_FREE)
      continue;
    int line = r->op;
    if (r->call == RT_CALL_EXEC && r->cause < (uint32_t)n)
      line = t[r->cause].op;
    char s[200], sig[400], detail[600];
    who(text, t, n, (int)r->seq, line, s, sizeof s);
    af_fmt(sig, sizeof sig, "%s|runtime_error|%s|%s|at:%s", fam, asyncfuzz_rt_error_name(r->err),
           asyncfuzz_rt_detail_text(det), s);
    AfBuf d;
    af_buf_init(&d);
    asyncfuzz_rt_format_rec(&d, r);
    af_fmt(detail, sizeof detail, "%s%s", d.p ? d.p : "", line > 0 ? "" : " (no line known)");
    af_buf_free(&d);
    add(run, VERDICT_RUNTIME_ERROR, sig, sig, detail, 0);
  }
}

/* The runner's stderr: its first line that says why (an "error:", "LLVM ERROR"), normalized,
 * without the work directory's path (dir: where the run's files are). */
static void runner_why(const char *errp, const char *dir, size_t dlen, char *out, size_t n) {
  char *text = NULL;
  AfErr e = {0};
  out[0] = '\0';
  if (af_read_file(errp, &text, NULL, &e))
    return;
  const char *p = strstr(text, "error:");
  p = p ? p : strstr(text, "LLVM ERROR");
  p = p ? p : text;
  char line[400];
  size_t k = 0;
  for (const char *q = p; *q && *q != '\n' && k + 1 < sizeof line;) /* (a path goes) */
    if (dlen > 0 && strncmp(q, dir, dlen) == 0)
      q += dlen + (q[dlen] == '/');
    else
      line[k++] = *q++;
  line[k] = '\0';
  mlir_normalize(line, out, n);
  af_free(text);
}

/* What the program printed, with the addresses memrefs print (base@ = 0x...) made equal. */
static char *read_output(const char *outp) {
  char *text = NULL;
  AfErr e = {0};
  if (af_read_file(outp, &text, NULL, &e))
    return af_strdup("");
  for (char *p = strstr(text, "base@ = 0x"); p; p = strstr(p + 1, "base@ = 0x")) {
    char *h = p + 10;
    while (isxdigit((unsigned char)*h))
      *h++ = '?';
  }
  return text;
}

int check__prog_judge(const LowerSpec *spec, const ProgOpts *o, const char *text,
                      const ProcResult *pr, const char *outp, const char *errp, const char *trace,
                      ProgRun *run, AfErr *err) {
  const char *fam = lower_family(spec);
  char why[400], sig[600];
  run->out = read_output(outp);
  struct stat st;
  if (pr->timed_out || stat(trace, &st) != 0) {
    const char *slash = strrchr(trace, '/');
    runner_why(errp, trace, slash ? (size_t)(slash - trace) : 0, why, sizeof why);
    int timeout = pr->timed_out;
    af_fmt(sig, sizeof sig, "%s|%s|%s", fam, timeout ? "timeout" : "jit_crash",
           timeout        ? "mlir-runner"
           : pr->signaled ? strsignal(pr->sig)
                          : why);
    add(run, timeout ? VERDICT_TIMEOUT : VERDICT_JIT_CRASH, sig, sig,
        timeout  ? "mlir-runner ran past its time limit"
        : why[0] ? why
                 : "mlir-runner failed",
        0);
    return 0;
  }
  run->ran = 1;
  CheckTrace t;
  int rc = check_trace_load(trace, &t, err);
  if (rc)
    return rc;
  HbOptions ho = {0};
  hb_options_for(&ho, t.abi, o->memfree_sync);
  ho.max_reports = 200;
  HbResult *hb = NULL;
  rc = hb_check(t.recs, t.nrecs, &ho, &hb, err);
  int refused = 0; /* handles first: a refusal explains what it caused (as campaigns judge) */
  for (int i = 0; rc == 0 && i < hb->nreports; i++)
    if (is_handle(&hb->reports[i])) {
      from_report(fam, text, &hb->reports[i], t.recs, t.nrecs, o, run);
      refused = 1;
    }
  RtRec *as = NULL; /* ... what is still wrong as if the refused calls had succeeded counts */
  int nas = 0;
  HbResult *hb2 = NULL;
  if (rc == 0 && refused && oracle_as_if_succeeded(t.recs, t.nrecs, &as, &nas) == 0 &&
      hb_check(as, nas, &ho, &hb2, err) == 0)
    for (int i = 0; i < hb2->nreports; i++)
      if (hb_kind_is_error(hb2->reports[i].kind) && !is_handle(&hb2->reports[i]))
        from_report(fam, text, &hb2->reports[i], as, nas, o, run);
  for (int i = 0; rc == 0 && !refused && i < hb->nreports; i++)
    if (hb_kind_is_error(hb->reports[i].kind))
      from_report(fam, text, &hb->reports[i], t.recs, t.nrecs, o, run);
  run->refused = refused;
  hb_result_free(hb2);
  af_free(as);
  if (rc == 0)
    from_errors(fam, text, t.recs, t.nrecs, run);
  if (rc == 0 && pr->signaled) { /* it ran, and died on the way out */
    af_fmt(sig, sizeof sig, "%s|jit_crash|%s", fam, strsignal(pr->sig));
    add(run, VERDICT_JIT_CRASH, sig, sig, "mlir-runner died after the program ran", 0);
  }
  hb_result_free(hb);
  check_trace_free(&t);
  return rc;
}

void check__prog_outputs(const LowerSpec *spec, ProgResult *res) {
  const ProgRun *first = NULL;
  for (int k = 0; k < res->nruns; k++) {
    ProgRun *run = &res->runs[k];
    if (!run->ran || run->refused) /* (a refused handle explains what the run printed) */
      continue;
    if (first == NULL) {
      first = run;
      continue;
    }
    if (strcmp(first->out, run->out) != 0) {
      char sig[300], s1[64], s2[64], detail[300];
      af_fmt(sig, sizeof sig, "%s|wrong_result|outputs-differ", lower_family(spec));
      check_schedule_str(&first->sched, s1, sizeof s1);
      check_schedule_str(&run->sched, s2, sizeof s2);
      af_fmt(detail, sizeof detail, "what the program printed under %s differs from %s", s2, s1);
      add(run, VERDICT_WRONG_RESULT, sig, sig, detail, 0);
    }
  }
}

int check_prog_run_failed(const ProgRun *run) {
  for (int i = 0; i < run->nfind; i++)
    if (!run->find[i].warning)
      return 1;
  return 0;
}
