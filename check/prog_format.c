/*
 * prog_format.c: check-mlir's output for one program through one configuration: a verdict per
 * run, then each finding and warning once, with how many runs showed it and the program lines
 * involved; or the same as one JSON line.
 */
#include "check.h"

#include "../lower/mlir.h"

#include <stdio.h>
#include <string.h>

/* The headline of a run: its first finding that is not a warning, or NULL (a pass). */
static const ProgFinding *headline(const ProgRun *run) {
  for (int i = 0; i < run->nfind; i++)
    if (!run->find[i].warning)
      return &run->find[i];
  return NULL;
}

/* How many runs show signature sig. */
static int runs_with(const ProgResult *r, const char *sig) {
  int n = 0;
  for (int k = 0; k < r->nruns; k++)
    for (int i = 0; i < r->runs[k].nfind; i++)
      n += strcmp(r->runs[k].find[i].signature, sig) == 0;
  return n;
}

/* Each distinct finding (warnings: 1) of the runs, once, calling fn with its first occurrence. */
static void each_distinct(const ProgResult *r, int warnings,
                          void (*fn)(AfBuf *, const ProgResult *, const ProgFinding *, int),
                          AfBuf *b) {
  int first = 1;
  for (int k = 0; k < r->nruns; k++)
    for (int i = 0; i < r->runs[k].nfind; i++) {
      const ProgFinding *f = &r->runs[k].find[i];
      int seen = 0;
      for (int k2 = 0; k2 <= k && !seen; k2++)
        for (int i2 = 0; i2 < (k2 == k ? i : r->runs[k2].nfind) && !seen; i2++)
          seen = strcmp(r->runs[k2].find[i2].signature, f->signature) == 0;
      if (!seen && f->warning == warnings) {
        fn(b, r, f, first);
        first = 0;
      }
    }
}

static void text_finding(AfBuf *b, const ProgResult *r, const ProgFinding *f, int first) {
  if (first)
    af_buf_puts(b, f->warning ? "warnings:\n" : "findings:\n");
  af_buf_printf(b, "  %s: %s  (%d of %d runs)\n", oracle_verdict_name(f->cls), f->signature,
                runs_with(r, f->signature), r->nruns);
  af_buf_printf(b, "    detailed: %s\n", f->victim);
  for (const char *l = f->detail; *l;) { /* the checker's report, indented */
    size_t n = strcspn(l, "\n");
    af_buf_printf(b, "    %.*s\n", (int)n, l);
    l += n + (l[n] == '\n');
  }
}

static void json_finding(AfBuf *b, const ProgResult *r, const ProgFinding *f, int first) {
  af_buf_puts(b, first ? "" : ",");
  af_buf_puts(b, "{\"class\":");
  af_buf_json_str(b, oracle_verdict_name(f->cls));
  af_buf_puts(b, ",\"signature\":");
  af_buf_json_str(b, f->signature);
  af_buf_puts(b, ",\"detailed\":");
  af_buf_json_str(b, f->victim);
  af_buf_printf(b, ",\"runs\":%d,\"detail\":", runs_with(r, f->signature));
  af_buf_json_str(b, f->detail);
  af_buf_puts(b, "}");
}

static int failed(const ProgResult *r) {
  if (r->lowered != MLIR_OK)
    return 1;
  for (int k = 0; k < r->nruns; k++)
    if (check_prog_run_failed(&r->runs[k]))
      return 1;
  return 0;
}

static void format_json(AfBuf *b, const char *path, const LowerSpec *spec, const ProgResult *r) {
  af_buf_puts(b, "{\"file\":");
  af_buf_json_str(b, path);
  af_buf_puts(b, ",\"lowering\":");
  af_buf_json_str(b, spec->name);
  af_buf_puts(b, ",\"version\":");
  af_buf_json_str(b, lower_version(spec));
  af_buf_printf(b, ",\"failed\":%s", failed(r) ? "true" : "false");
  if (r->lowered != MLIR_OK) {
    af_buf_puts(b, ",\"lowering_verdict\":");
    af_buf_json_str(b, r->lowering.signature);
    af_buf_puts(b, ",\"detail\":");
    af_buf_json_str(b, r->lowering.detail);
  }
  af_buf_puts(b, ",\"runs\":[");
  for (int k = 0; k < r->nruns; k++) {
    char s[64];
    check_schedule_str(&r->runs[k].sched, s, sizeof s);
    const ProgFinding *h = headline(&r->runs[k]);
    af_buf_printf(b, "%s{\"schedule\":\"%s\",\"verdict\":", k ? "," : "", s);
    af_buf_json_str(b, h ? oracle_verdict_name(h->cls) : "pass");
    af_buf_puts(b, ",\"signatures\":[");
    for (int i = 0; i < r->runs[k].nfind; i++) {
      af_buf_puts(b, i ? "," : "");
      af_buf_json_str(b, r->runs[k].find[i].signature);
    }
    af_buf_puts(b, "]}");
  }
  af_buf_puts(b, "],\"findings\":[");
  each_distinct(r, 0, json_finding, b);
  af_buf_puts(b, "],\"warnings\":[");
  each_distinct(r, 1, json_finding, b);
  af_buf_puts(b, "]}\n");
}

int check_format_program(AfBuf *b, const char *path, const LowerSpec *spec, const ProgResult *r,
                         int json) {
  if (json) {
    format_json(b, path, spec, r);
    return failed(r);
  }
  char axes[200] = "";
  if (spec->matrix)
    mlir_config_axes(spec, axes, sizeof axes);
  af_buf_printf(b, "%s: %s%s%s%s\n", path, spec->name, axes[0] ? " (" : "", axes,
                axes[0] ? ")" : "");
  if (r->lowered != MLIR_OK) {
    af_buf_printf(b, "  %s: %s\n    %s\n", oracle_verdict_name(r->lowering.cls),
                  r->lowering.signature, r->lowering.detail);
    af_buf_puts(b, "verdict: FAIL (the lowering stopped it)\n");
    return 1;
  }
  for (int k = 0; k < r->nruns; k++) {
    char s[64];
    check_schedule_str(&r->runs[k].sched, s, sizeof s);
    const ProgFinding *h = headline(&r->runs[k]);
    int more = 0, warn = 0;
    for (int i = 0; i < r->runs[k].nfind; i++) {
      more += !r->runs[k].find[i].warning;
      warn += r->runs[k].find[i].warning;
    }
    af_buf_printf(b, "  %-14s %s", s, h ? oracle_verdict_name(h->cls) : "pass");
    if (more > 1)
      af_buf_printf(b, " (+%d more)", more - 1);
    af_buf_printf(b, warn ? ", %d warning%s\n" : "\n", warn, warn == 1 ? "" : "s");
  }
  each_distinct(r, 0, text_finding, b);
  each_distinct(r, 1, text_finding, b);
  int f = failed(r);
  af_buf_printf(b, "verdict: %s\n", f ? "FAIL" : "pass");
  return f;
}
