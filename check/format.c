/*
 * format.c: check's output of a case: per lowering, its runs as text or as one line of JSON
 * (check, run-batch), and the comparison of several lowerings.
 */
#include "check.h"

#include <string.h>

void check_format_json(AfBuf *b, const char *path, const LowerSpec *spec, const CheckResult *res) {
  af_buf_puts(b, "{\"case\": ");
  af_buf_json_str(b, path);
  af_buf_puts(b, ", \"lowering\": ");
  af_buf_json_str(b, spec->name);
  af_buf_puts(b, ", \"lowering_version\": ");
  af_buf_json_str(b, lower_version(spec));
  if (spec->kind == LOWER_MLIR_OPT) {
    af_buf_puts(b, ", \"pipeline\": ");
    af_buf_json_str(b, spec->pipeline);
  }
  af_buf_printf(b, ", \"asyncfuzz_version\": \"%s\", ", ASYNCFUZZ_VERSION);
  af_buf_printf(b, "\"verdict\": \"%s\", \"runs\": [",
                res->first_fail < 0 ? "pass"
                                    : oracle_verdict_name(res->verdict[res->first_fail].cls));
  for (int k = 0; k < res->nsched; k++) {
    char sch[64];
    check_schedule_str(&res->sched[k], sch, sizeof sch);
    const Verdict *v = &res->verdict[k];
    af_buf_printf(b, "%s{\"schedule\": \"%s\", \"verdict\": \"%s\", ", k ? ", " : "", sch,
                  oracle_verdict_name(v->cls));
    af_buf_printf(b,
                  "\"observation_failed\": %s, \"runtime_failed\": %s, \"checker_failed\": %s, "
                  "\"checker_reports\": %d, \"signature\": ",
                  v->obs_failed ? "true" : "false", v->rt_failed ? "true" : "false",
                  v->hb_failed ? "true" : "false", v->hb_errors);
    af_buf_json_str(b, v->cls == VERDICT_PASS ? "" : v->signature);
    af_buf_puts(b, ", \"detailed_signature\": ");
    af_buf_json_str(b, v->cls == VERDICT_PASS ? "" : v->victim[0] ? v->victim : v->signature);
    af_buf_puts(b, ", \"detail\": ");
    af_buf_json_str(b, v->detail);
    af_buf_puts(b, ", \"also\": [");
    for (int i = 0; i < v->nalso; i++) {
      af_buf_printf(b, "%s{\"verdict\": \"%s\", \"signature\": ", i ? ", " : "",
                    oracle_verdict_name(v->also[i].cls));
      af_buf_json_str(b, v->also[i].signature);
      af_buf_puts(b, ", \"detailed_signature\": ");
      af_buf_json_str(b, v->also[i].victim);
      af_buf_puts(b, "}");
    }
    af_buf_puts(b, "]}");
  }
  af_buf_printf(b, "], \"executed\": %s}", res->executed ? "true" : "false");
}

void check_format_text(AfBuf *b, const char *path, const LowerSpec *spec, const CheckResult *res,
                       int header, const CheckOpts *o) {
  if (header)
    af_buf_printf(b, "== lowering %s (%s)\n", spec->name, lower_version(spec));
  for (int k = 0; k < res->nsched; k++) {
    char sch[64];
    check_schedule_str(&res->sched[k], sch, sizeof sch);
    const Verdict *v = &res->verdict[k];
    af_buf_printf(b, "%-24s %s", sch, oracle_verdict_name(v->cls));
    if (v->cls != VERDICT_PASS) {
      if (oracle_verdict_phase(v->cls) != ORACLE_PHASE_RUN)
        af_buf_printf(b, "  [found by: %s]", oracle_verdict_found_by(v->cls));
      else
        af_buf_printf(b, "  [found by:%s%s%s]", v->obs_failed ? " observation" : "",
                      v->rt_failed ? " runtime-error" : "", v->hb_failed ? " checker" : "");
      af_buf_printf(b, "\n    signature: %s\n    ", v->signature);
      if (v->victim[0] && strcmp(v->victim, v->signature) != 0)
        af_buf_printf(b, "detailed:  %s\n    ", v->victim);
      for (int i = 0; i < v->nalso; i++)
        af_buf_printf(b, "also:      %s (%s)\n    ", v->also[i].signature,
                      oracle_verdict_name(v->also[i].cls));
      for (const char *p = v->detail; *p; p++) { /* indent the detail's lines */
        af_buf_put(b, p, 1);
        if (*p == '\n')
          af_buf_puts(b, "    ");
      }
    }
    af_buf_puts(b, "\n");
  }
  if (res->first_fail >= 0) {
    const Schedule *f = &res->sched[res->first_fail];
    char line[8192];
    af_buf_printf(
        b, "FAIL: replay with: %s\n",
        check_replay(line, sizeof line,
                     spec->kind == LOWER_MLIR_OPT ? CHECK_REPLAY_CHECK : CHECK_REPLAY_TRACE, path,
                     spec, f, o));
  } else if (res->device_errors > 0) {
    af_buf_printf(b,
                  "PASS: %d schedule(s), %d of them not judged: the device failed a call on "
                  "purpose (device_error)\n",
                  res->nsched, res->device_errors);
  } else {
    af_buf_printf(b, "PASS: %d schedule(s)\n", res->nsched);
  }
}

/* check's output of case j (of npaths) through nlow lowerings: text, or JSON lines.
 * Returns whether it failed with any of them. */
/* The class of the first failing run of r (pass when none fails). */
static int first_class(const CheckResult *r) {
  return r->first_fail < 0 ? VERDICT_PASS : r->verdict[r->first_fail].cls;
}

int check_format_case(AfBuf *b, const char *path, int j, int npaths, const LowerSpec *specs,
                      int nlow, const CheckResult *res, int json, const CheckOpts *o) {
#define R(i) (&res[(size_t)(i) * (size_t)npaths + (size_t)j])
  int any_fail = 0, differ = 0;
  for (int i = 0; i < nlow; i++) {
    any_fail |= R(i)->first_fail >= 0;
    differ |= first_class(R(i)) != first_class(R(0));
  }
  if (json && nlow == 1) {
    check_format_json(b, path, &specs[0], R(0));
    af_buf_puts(b, "\n");
  } else if (json) {
    af_buf_puts(b, "{\"case\": ");
    af_buf_json_str(b, path);
    af_buf_printf(b, ", \"differ\": %s, \"lowerings\": [", differ ? "true" : "false");
    for (int i = 0; i < nlow; i++) {
      af_buf_puts(b, i ? ", " : "");
      check_format_json(b, path, &specs[i], R(i));
    }
    af_buf_puts(b, "]}\n");
  } else {
    if (npaths > 1)
      af_buf_printf(b, "%s== case %s\n", j ? "\n" : "", path);
    for (int i = 0; i < nlow; i++)
      check_format_text(b, path, &specs[i], R(i), nlow > 1, o);
    if (nlow > 1) {
      af_buf_printf(b, "%s:", differ ? "DIFFER: verdicts differ" : "SAME: verdicts agree");
      for (int i = 0; i < nlow; i++)
        af_buf_printf(b, " %s=%s", specs[i].name, oracle_verdict_name(first_class(R(i))));
      af_buf_puts(b, "\n");
    }
  }
  return any_fail;
#undef R
}

void check_format_run(AfBuf *b, const GenCase *c, const LowerSpec *spec, const CheckOpts *o,
                      const Verdict *v) {
  int nobs;
  const RtObs *obs = asyncfuzz_rt_observations(&nobs);
  for (int k = 0; k < nobs; k++) {
    af_buf_printf(b, "observe op #%d (T%d):", obs[k].id, obs[k].tid);
    for (int64_t i = 0; i < obs[k].n; i++)
      af_buf_printf(b, " %d", obs[k].vals[i]);
    af_buf_puts(b, "\n");
  }
  oracle_format_verdict(b, v);
  if (o->no_checker)
    return;
  int ntrace;
  const RtRec *trace = asyncfuzz_rt_trace(&ntrace);
  HbOptions ho = {0};
  hb_options_for(&ho, check_abi(spec, o), o->memfree_sync);
  ho.max_reports = 200;
  HbResult *hb = NULL;
  AfErr err = {0};
  if (hb_check(trace, ntrace, &ho, &hb, &err) == 0) {
    af_buf_printf(b, "checker: %d report(s)%s\n", hb->nreports,
                  hb->truncated ? " (more not shown)" : "");
    oracle_format_reports(b, c, hb, trace, ntrace);
    hb_result_free(hb);
  }
}

int check_trace_report(const char *path, const GenCase *c, const char *lowering, int lenient,
                       int print, AfBuf *b, int *failed, AfErr *err) {
  CheckTrace t;
  *failed = 0;
  int rc = check_trace_load(path, &t, err);
  if (rc)
    return rc;
  HbOptions ho = {0};
  hb_options_for(&ho, t.abi, lenient);
  ho.max_reports = 200;
  HbResult *hb = NULL;
  rc = hb_check(t.recs, t.nrecs, &ho, &hb, err);
  if (rc == 0) {
    af_buf_printf(b, "%d records, %d observations; checker: %d report(s), %d error(s)%s\n", t.nrecs,
                  t.nobs, hb->nreports, hb->nerrors, hb->truncated ? " (more not shown)" : "");
    for (int i = 0; print && i < t.nrecs; i++) {
      asyncfuzz_rt_format_rec(b, &t.recs[i]);
      af_buf_puts(b, "\n");
    }
    oracle_format_reports(b, NULL, hb, t.recs, t.nrecs);
    *failed = hb->nerrors > 0 || t.sum.nerrors > 0;
  }
  if (rc == 0 && c) {
    OracleExpected *e = NULL;
    Verdict v;
    if (oracle_expect(c, &e, err) ||
        oracle_judge(c, e, t.obs, t.nobs, t.recs, t.nrecs, &t.sum, hb, lowering, &v)) {
      rc = af_err_set(err, AF_EINTERNAL, "judging the run against the case failed");
    } else {
      oracle_format_verdict(b, &v);
      *failed = v.cls != VERDICT_PASS;
    }
    oracle_expected_free(e);
  }
  hb_result_free(hb);
  check_trace_free(&t);
  return rc;
}

int check_write_traces(const char *path, const char *bin_path, const LowerSpec *spec,
                       const char *policy, uint64_t seed, AfErr *err) {
  if (bin_path && asyncfuzz_rt_write_trace_bin(bin_path) != 0)
    return af_err_set(err, AF_EIO, "cannot write %s", bin_path);
  if (path == NULL)
    return 0;
  AfBuf b;
  af_buf_init(&b);
  af_buf_printf(&b, "# asyncfuzz trace v1 lowering=%s policy=%s seed=%llu\n", spec->name, policy,
                (unsigned long long)seed);
  asyncfuzz_rt_format_trace(&b, 0, -1);
  int rc = b.oom                    ? af_err_set(err, AF_ENOMEM, "out of memory")
           : strcmp(path, "-") == 0 ? (fputs(b.p ? b.p : "", stdout), 0)
                                    : af_write_file(path, b.p ? b.p : "", b.len, err);
  af_buf_free(&b);
  return rc;
}
