/*
 * report.c: the database's findings exported (JSON, JUnit); the HTML report is report_page.c.
 */
#include "store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <time.h>

void results__js_str(AfBuf *b, const char *s) {
  af_buf_puts(b, "\"");
  for (; s && *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      af_buf_printf(b, "\\%c", ch);
    else if (ch < 0x20 || ch == '<' || ch == '>' || ch == '&')
      af_buf_printf(b, "\\u%04x", ch);
    else
      af_buf_put(b, s, 1);
  }
  af_buf_puts(b, "\"");
}

/* A finding's fields, in the order both forms write them: the export's key, the page's, the
 * type, where it is in FindingRow, and whether the export has it (the page has them all). */
enum { FF_I64, FF_INT, FF_TIME, FF_STR };
static const struct FindingField {
  const char *key, *page_key;
  int type;
  size_t off;
  int export;
} finding_fields[] = {
#define FF(key, pk, type, field, exp)                                                              \
  { key, pk, type, offsetof(FindingRow, field), exp }
    FF("id", "id", FF_I64, id, 1),
    FF("status", "st", FF_STR, status, 1),
    FF("class", "cl", FF_STR, cls, 1),
    FF("lowering", "lo", FF_STR, lowering, 1),
    FF("signature", "c", FF_STR, signature, 1),
    FF("count", "n", FF_I64, count, 1),
    FF("smallest_ops", "sm", FF_INT, smallest_ops, 1),
    FF("first_seen", "t1", FF_TIME, first_seen, 1),
    FF("last_seen", "t2", FF_TIME, last_seen, 1),
    FF("repro_runs", "rr", FF_INT, repro_runs, 1),
    FF("repro_hits", "rh", FF_INT, repro_hits, 1),
    FF("detail", "d", FF_STR, detail, 1),
    FF("minimized_ops", "o", FF_INT, min_ops, 0),
    FF("regression", "rg", FF_INT, regression, 0),
    FF("fixed", "fx", FF_INT, fixed, 0),
    FF("reproducer", "r", FF_STR, mlir, 0),
    FF("replay", "p", FF_STR, replay, 0),
#undef FF
};

void results__finding_json(const FindingRow *r, FindingJson form, AfBuf *out) {
  int page = form == FINDING_JSON_PAGE, n = 0;
  for (size_t i = 0; i < sizeof finding_fields / sizeof finding_fields[0]; i++) {
    const struct FindingField *f = &finding_fields[i];
    if (!page && !f->export)
      continue;
    const char *at = (const char *)r + f->off;
    af_buf_printf(out, page ? "%s\"%s\":" : "%s\"%s\": ", n++ ? (page ? "," : ", ") : "",
                  page ? f->page_key : f->key);
    switch (f->type) {
    case FF_I64:
      af_buf_printf(out, "%lld", *(const long long *)(const void *)at);
      break;
    case FF_INT:
      af_buf_printf(out, "%d", *(const int *)(const void *)at);
      break;
    case FF_TIME:
      af_buf_printf(out, "%.0f", *(const double *)(const void *)at);
      break;
    default:
      if (page)
        results__js_str(out, *(const char *const *)(const void *)at);
      else
        af_buf_json_str(out, *(const char *const *)(const void *)at);
    }
  }
}

void results__each_form(Store *s, int64_t id, int max, int *more,
                        void (*fn)(const char *form, long long hits, void *ctx), void *ctx) {
  *more = 0;
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db,
                         "SELECT detailed, sum(hits) FROM forms WHERE finding = ?"
                         " GROUP BY detailed ORDER BY sum(hits) DESC, detailed",
                         -1, &st, NULL) != SQLITE_OK)
    return;
  sqlite3_bind_int64(st, 1, id);
  int n = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    if (n++ < max)
      fn(results__col(st, 0), (long long)sqlite3_column_int64(st, 1), ctx);
    else
      (*more)++;
  }
  sqlite3_finalize(st);
}

static void form_json(const char *form, long long hits, void *ctx) {
  AfBuf *b = ctx;
  af_buf_puts(b, b->len && b->p[b->len - 1] == '[' ? "{\"form\": " : ", {\"form\": ");
  af_buf_json_str(b, form);
  af_buf_printf(b, ", \"hits\": %lld}", hits);
}

static void form_text(const char *form, long long hits, void *ctx) {
  AfBuf *b = ctx;
  af_buf_printf(b, "\n%8lld  ", hits);
  results__xml_esc(b, form);
}

int store_export_json(Store *s, const StoreFilter *f, AfBuf *out, AfErr *err) {
  sqlite3_stmt *st;
  int rc = results__prepare_filtered(s, FINDING_ROW_ONLY, f, NEW_FIRST, &st, err);
  if (rc)
    return rc;
  af_buf_puts(out, "[");
  int n = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    FindingRow r;
    results__finding_row(st, &r);
    af_buf_puts(out, n++ ? ",\n  {" : "\n  {");
    results__finding_json(&r, FINDING_JSON_EXPORT, out);
    af_buf_puts(out, ", \"detailed_forms\": [");
    int more;
    results__each_form(s, r.id, 1 << 30, &more, form_json, out);
    af_buf_puts(out, "]}");
  }
  sqlite3_finalize(st);
  af_buf_puts(out, "\n]\n");
  return 0;
}

int store_export_junit(Store *s, const StoreFilter *f, AfBuf *out, AfErr *err) {
  sqlite3_stmt *st;
  int rc = results__prepare_filtered(s, FINDING_ROW_ONLY, f, NEW_FIRST, &st, err);
  if (rc)
    return rc;
  AfBuf body;
  af_buf_init(&body);
  int tests = 0, failures = 0, skipped = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    FindingRow r;
    results__finding_row(st, &r);
    const char *status = r.status;
    tests++;
    af_buf_puts(&body, "    <testcase classname=\"");
    results__xml_esc(&body, *r.lowering ? r.lowering : "asyncfuzz");
    af_buf_puts(&body, "\" name=\"");
    results__xml_esc(&body, r.signature);
    af_buf_puts(&body, "\">");
    if (strcmp(status, "new") == 0) { /* a new finding fails the dashboard */
      failures++;
      af_buf_puts(&body, "\n      <failure type=\"");
      results__xml_esc(&body, r.cls);
      af_buf_printf(&body, "\" message=\"new %s finding, %lld occurrence(s)\">", r.cls, r.count);
      results__xml_esc(&body, r.detail);
      int more;
      af_buf_puts(&body, "\ndetailed forms (hits, form):");
      results__each_form(s, r.id, 20, &more, form_text, &body);
      if (more)
        af_buf_printf(&body, "\n(%d more: asyncfuzz db show %lld)", more, r.id);
      af_buf_puts(&body, "</failure>\n    ");
    } else if (strcmp(status, "wontfix") == 0 || strcmp(status, "known") == 0) {
      skipped++;
      af_buf_printf(&body, "<skipped message=\"%s\"/>", status);
    }
    af_buf_puts(&body, "</testcase>\n");
  }
  sqlite3_finalize(st);
  af_buf_printf(out,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite "
                "name=\"asyncfuzz\" tests=\"%d\" failures=\"%d\" skipped=\"%d\">\n",
                tests, failures, skipped);
  if (body.p)
    af_buf_puts(out, body.p);
  af_buf_puts(out, "  </testsuite>\n</testsuites>\n");
  int oom = body.oom;
  af_buf_free(&body);
  return oom ? af_err_set(err, AF_ENOMEM, "out of memory") : 0;
}

int store_run_findings(Store *s, int64_t run, long *findings, AfErr *err) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db, "SELECT count(DISTINCT finding) FROM occurrences WHERE run = ?", -1,
                         &st, NULL) != SQLITE_OK)
    return results__db_err(s, err, "query failed");
  sqlite3_bind_int64(st, 1, run);
  *findings = 0;
  if (sqlite3_step(st) == SQLITE_ROW)
    *findings = (long)sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return 0;
}
