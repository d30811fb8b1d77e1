/*
 * report.c: the database's findings exported (JSON, JUnit) and the HTML report with its charts.
 */
#include "store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A finding's detailed forms, most hits first (at most `max`; *more: how many were left out).
 * Calls fn(form, hits, ctx) for each. */
static void each_form(Store *s, int64_t id, int max, int *more,
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
    each_form(s, sqlite3_column_int64(st, 0), 1 << 30, &more, form_json, out);
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
      each_form(s, sqlite3_column_int64(st, 0), 20, &more, form_text, &body);
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

/* ---- the HTML report ---- */

static void svg_bars(AfBuf *b, const char *title, const char *const *labels, const double *vals,
                     int n, const char *unit) {
  double max = 0;
  for (int i = 0; i < n; i++)
    if (vals[i] > max)
      max = vals[i];
  int w = 640, h = 40 + 22 * (n ? n : 1);
  af_buf_printf(b, "<figure><figcaption>");
  results__xml_esc(b, title);
  af_buf_printf(b,
                "</figcaption><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                "height=\"%d\" role=\"img\">",
                w, h);
  for (int i = 0; i < n; i++) {
    double bw = max > 0 ? vals[i] / max * 380 : 0;
    af_buf_printf(b, "<text x=\"0\" y=\"%d\" font-size=\"12\">", 20 + 22 * i + 12);
    results__xml_esc(b, labels[i]);
    af_buf_printf(b,
                  "</text><rect x=\"220\" y=\"%d\" width=\"%.1f\" height=\"16\" "
                  "fill=\"#4a7ab7\"/><text x=\"%.1f\" y=\"%d\" font-size=\"12\">%.1f %s</text>",
                  20 + 22 * i, bw, 226 + bw, 20 + 22 * i + 12, vals[i], unit);
  }
  if (n == 0)
    af_buf_puts(b, "<text x=\"0\" y=\"32\" font-size=\"12\">no data</text>");
  af_buf_puts(b, "</svg></figure>\n");
}

/* A bar chart of a query's (label, value) rows. */
static int chart(Store *s, AfBuf *out, const char *title, const char *sql, const char *unit,
                 AfErr *err) {
  const char *labels[64];
  char text[64][128];
  double vals[64];
  int n = 0;
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
    return results__db_err(s, err, "query failed");
  while (sqlite3_step(st) == SQLITE_ROW && n < 64) {
    snprintf(text[n], sizeof text[n], "%s", results__col(st, 0));
    labels[n] = text[n];
    vals[n++] = sqlite3_column_double(st, 1);
  }
  sqlite3_finalize(st);
  svg_bars(out, title, labels, vals, n, unit);
  return 0;
}

int store_report_html(Store *s, AfBuf *out, AfErr *err) {
  af_buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                   "<title>asyncfuzz findings</title><style>"
                   "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
                   "td,th{border:1px solid #bbb;padding:3px 6px;text-align:left;"
                   "vertical-align:top}td.sig{font-family:monospace;max-width:60em;"
                   "word-break:break-all}tr.new td{background:#fff3f0}</style></head><body>\n"
                   "<h1>asyncfuzz findings</h1>\n");
  AfBuf tmp;
  af_buf_init(&tmp);
  store_stats(s, &tmp, err);
  af_buf_puts(out, "<pre id=\"stats\">");
  results__xml_esc(out, tmp.p ? tmp.p : "");
  af_buf_puts(out, "</pre>\n");
  af_buf_free(&tmp);
  /* the findings table, new first */
  sqlite3_stmt *st;
  int rc = results__prepare_filtered(s, FINDING_COLS, NULL, NEW_FIRST, &st, err);
  if (rc)
    return rc;
  af_buf_puts(out, "<h2>Findings</h2>\n<table id=\"findings\"><thead><tr><th>id</th>"
                   "<th>status</th><th>class</th><th>lowering</th><th>count</th>"
                   "<th>smallest ops</th><th>reproduction</th><th>last seen (UTC)</th>"
                   "<th>signature</th><th>detailed forms (hits)</th><th>detail</th></tr>"
                   "</thead><tbody>\n");
  while (sqlite3_step(st) == SQLITE_ROW) {
    char t[32];
    results__fmt_time(sqlite3_column_double(st, 8), t, sizeof t);
    af_buf_printf(out, "<tr class=\"%s\"><td>%lld</td><td>",
                  strcmp(results__col(st, 1), "new") == 0 ? "new" : "old",
                  (long long)sqlite3_column_int64(st, 0));
    results__xml_esc(out, results__col(st, 1));
    af_buf_puts(out, "</td><td>");
    results__xml_esc(out, results__col(st, 2));
    af_buf_puts(out, "</td><td>");
    results__xml_esc(out, results__col(st, 5));
    af_buf_printf(out, "</td><td>%lld</td><td>%d</td><td>", (long long)sqlite3_column_int64(st, 3),
                  sqlite3_column_int(st, 4));
    if (sqlite3_column_int(st, 9) > 0)
      af_buf_printf(out, "%d/%d", sqlite3_column_int(st, 10), sqlite3_column_int(st, 9));
    af_buf_printf(out, "</td><td>%s</td><td class=\"sig\">", t);
    results__xml_esc(out, results__col(st, 6));
    af_buf_puts(out, "</td><td class=\"sig\"><pre>");
    int more;
    each_form(s, sqlite3_column_int64(st, 0), 8, &more, form_text, out);
    if (more)
      af_buf_printf(out, "\n(%d more)", more);
    af_buf_puts(out, "</pre></td><td class=\"sig\">");
    results__xml_esc(out, results__col(st, 11));
    af_buf_puts(out, "</td></tr>\n");
  }
  sqlite3_finalize(st);
  af_buf_puts(out, "</tbody></table>\n");
  rc = store_report_matrix(s, out, err);
  if (rc)
    return rc;
  af_buf_puts(out, "<h2>Charts</h2>\n");
  static const char *const charts[][3] = {
      {"findings per class", "SELECT class, count(*) FROM findings GROUP BY 1 ORDER BY 1", ""},
      {"findings per lowering", "SELECT lowering, count(*) FROM findings GROUP BY 1 ORDER BY 1",
       ""},
      {"new findings by the day they were first seen",
       "SELECT date(first_seen, 'unixepoch'), count(*) FROM findings GROUP BY 1"
       " ORDER BY 1 DESC LIMIT 60",
       ""},
      {"throughput per run",
       "SELECT 'run ' || id || ' ' || substr(datetime(started, 'unixepoch'), 1, 16) || ' ' ||"
       " substr(coalesce(host, ''), 1, 20), cases / seconds FROM runs WHERE seconds > 0"
       " ORDER BY started DESC LIMIT 40",
       "cases/s"},
  };
  for (size_t c = 0; c < sizeof charts / sizeof charts[0]; c++) {
    int rc2 = chart(s, out, charts[c][0], charts[c][1], charts[c][2], err);
    if (rc2)
      return rc2;
  }
  af_buf_puts(out, "</body></html>\n");
  return out->oom ? af_err_set(err, AF_ENOMEM, "out of memory") : 0;
}
