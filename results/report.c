/*
 * report.c: the database's findings exported (JSON, JUnit); the HTML report is report_page.c.
 */
#include "store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
  int rc = results__prepare_filtered(s, FINDING_COLS, f, NEW_FIRST, &st, err);
  if (rc)
    return rc;
  af_buf_puts(out, "[");
  int n = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    af_buf_printf(out, "%s\n  {\"id\": %lld, \"status\": ", n++ ? "," : "",
                  (long long)sqlite3_column_int64(st, 0));
    af_buf_json_str(out, results__col(st, 1));
    af_buf_puts(out, ", \"class\": ");
    af_buf_json_str(out, results__col(st, 2));
    af_buf_puts(out, ", \"lowering\": ");
    af_buf_json_str(out, results__col(st, 5));
    af_buf_puts(out, ", \"signature\": ");
    af_buf_json_str(out, results__col(st, 6));
    af_buf_printf(out,
                  ", \"count\": %lld, \"smallest_ops\": %d, \"first_seen\": %.0f, "
                  "\"last_seen\": %.0f, \"repro_runs\": %d, \"repro_hits\": %d, \"detail\": ",
                  (long long)sqlite3_column_int64(st, 3), sqlite3_column_int(st, 4),
                  sqlite3_column_double(st, 7), sqlite3_column_double(st, 8),
                  sqlite3_column_int(st, 9), sqlite3_column_int(st, 10));
    af_buf_json_str(out, results__col(st, 11));
    af_buf_puts(out, ", \"detailed_forms\": [");
    int more;
    results__each_form(s, sqlite3_column_int64(st, 0), 1 << 30, &more, form_json, out);
    af_buf_puts(out, "]}");
  }
  sqlite3_finalize(st);
  af_buf_puts(out, "\n]\n");
  return 0;
}

int store_export_junit(Store *s, const StoreFilter *f, AfBuf *out, AfErr *err) {
  sqlite3_stmt *st;
  int rc = results__prepare_filtered(s, FINDING_COLS, f, NEW_FIRST, &st, err);
  if (rc)
    return rc;
  AfBuf body;
  af_buf_init(&body);
  int tests = 0, failures = 0, skipped = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    const char *status = results__col(st, 1);
    tests++;
    af_buf_puts(&body, "    <testcase classname=\"");
    results__xml_esc(&body, *results__col(st, 5) ? results__col(st, 5) : "asyncfuzz");
    af_buf_puts(&body, "\" name=\"");
    results__xml_esc(&body, results__col(st, 6));
    af_buf_puts(&body, "\">");
    if (strcmp(status, "new") == 0) { /* a new finding fails the dashboard */
      failures++;
      af_buf_puts(&body, "\n      <failure type=\"");
      results__xml_esc(&body, results__col(st, 2));
      af_buf_printf(&body, "\" message=\"new %s finding, %lld occurrence(s)\">",
                    results__col(st, 2), (long long)sqlite3_column_int64(st, 3));
      results__xml_esc(&body, results__col(st, 11));
      int more;
      af_buf_puts(&body, "\ndetailed forms (hits, form):");
      results__each_form(s, sqlite3_column_int64(st, 0), 20, &more, form_text, &body);
      if (more)
        af_buf_printf(&body, "\n(%d more: asyncfuzz db show %lld)", more,
                      (long long)sqlite3_column_int64(st, 0));
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
