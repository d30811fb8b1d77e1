/*
 * report_page.c: the HTML report (store_report_html). One static file that works from file://
 * with no network: the findings one line each, each with an expandable section (the minimized
 * reproducer with a copy button, the replay command, the detailed forms, the configuration
 * matrix); the runs; pictures of the campaigns as inline SVG (the discovery curve, cases/s,
 * executed and clean shares per configuration). The findings go in as data (JSON in a script
 * element, escaped so that nothing in it can end the element) that the page's script draws,
 * sorts and filters (report_assets.c), so a thousand of them load at once; everything else
 * from the database is escaped HTML text.
 */
#include "store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* at most this many runs in the pictures (the newest), and configurations in a strip (the
 * queries below say them again) */
#define PAGE_RUNS 8
#define PAGE_CONFIGS 48

static void esc(AfBuf *b, const char *s) {
  results__xml_esc(b, s ? s : "");
}

/* The configurations of the matrix, in its order (newest LLVM first), for the strips. */
typedef struct Configs {
  int n;
  char name[PAGE_CONFIGS][96];
} Configs;

static void load_configs(Store *s, Configs *k) {
  k->n = 0;
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db,
                         "SELECT config FROM finding_configs GROUP BY config"
                         " ORDER BY max(llvm_key) DESC, max(pipeline), max(target), max(jit)",
                         -1, &st, NULL) != SQLITE_OK)
    return;
  while (sqlite3_step(st) == SQLITE_ROW && k->n < PAGE_CONFIGS)
    snprintf(k->name[k->n++], sizeof k->name[0], "%s", results__col(st, 0));
  sqlite3_finalize(st);
}

/* A finding's matrix, as "m": [[configuration (its index in the page's list), 1 reproduces |
 * 2 passes every run | 3 fails differently | 4 refused by the lowering, that verdict's signature],
 * ...]|
 * 2 passes | 3 another verdict, that verdict's signature], ...], newest LLVM first. A
 * configuration beyond the list has index -1 and its name in the text. */
static void matrix_json(Store *s, const Configs *k, int64_t id, AfBuf *out) {
  static const char sql[] = "SELECT config, llvm, reproduces, class, signature FROM finding_configs"
                            " WHERE finding = ? ORDER BY llvm_key DESC, pipeline, target, jit";
  sqlite3_stmt *st = results__cached(s, sql);
  af_buf_puts(out, ",\"m\":[");
  if (st)
    sqlite3_bind_int64(st, 1, id);
  for (int n = 0; st && sqlite3_step(st) == SQLITE_ROW; n++) {
    const char *name = results__col(st, 0);
    int ci = -1;
    for (int i = 0; i < k->n && ci < 0; i++)
      ci = strcmp(k->name[i], name) == 0 ? i : -1;
    int rep = sqlite3_column_int(st, 2), pass = rep == STORE_CONF_PASSES;
    rep = rep == STORE_CONF_REPRODUCES;
    af_buf_printf(out, "%s[%d,%d,", n ? "," : "", ci,
                  rep                                               ? 1
                  : pass                                            ? 2
                  : sqlite3_column_int(st, 2) == STORE_CONF_REFUSED ? 4
                                                                    : 3);
    char text[400];
    snprintf(text, sizeof text, "%s%s%s", ci < 0 ? name : "", ci < 0 ? ": " : "",
             rep || pass ? "" : results__col(st, 4));
    results__js_str(out, text);
    af_buf_puts(out, "]");
  }
  if (st)
    sqlite3_reset(st);
  af_buf_puts(out, "]");
}

/* A finding's detailed forms, most hits first, as "f": [[hits, form], ...] and "fm": how many
 * more. */
static void form_js(const char *form, long long hits, void *ctx) {
  AfBuf *out = ctx;
  af_buf_printf(out, "%s[%lld,", out->p[out->len - 1] == '[' ? "" : ",", hits);
  results__js_str(out, form);
  af_buf_puts(out, "]");
}

static void forms_json(Store *s, int64_t id, AfBuf *out) {
  int more = 0;
  af_buf_puts(out, ",\"f\":[");
  results__each_form(s, id, 12, &more, form_js, out);
  af_buf_printf(out, "],\"fm\":%d", more);
}

/* One finding as an entry of the page's data: its fields (results__finding_json's short keys:
 * "st" status, "c" the cause, "r" the reproducer, "p" the replay command...), the forms and the
 * matrix. */
static void finding_json(Store *s, const Configs *k, sqlite3_stmt *st, AfBuf *out) {
  FindingRow r;
  results__finding_row(st, &r);
  int64_t id = r.id;
  af_buf_puts(out, out->len && out->p[out->len - 1] == '[' ? "\n{" : ",\n{");
  results__finding_json(&r, FINDING_JSON_PAGE, out);
  forms_json(s, id, out);
  matrix_json(s, k, id, out);
  af_buf_puts(out, "}");
}

/* A filter's options: the distinct values of one findings column. */
static void options(Store *s, const char *sql, AfBuf *out) {
  sqlite3_stmt *st;
  af_buf_puts(out, "<option value=\"\">all</option>");
  if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
    return;
  while (sqlite3_step(st) == SQLITE_ROW) {
    af_buf_puts(out, "<option value=\"");
    esc(out, results__col(st, 0));
    af_buf_puts(out, "\">");
    esc(out, results__col(st, 0));
    af_buf_printf(out, " (%d)</option>", sqlite3_column_int(st, 1));
  }
  sqlite3_finalize(st);
}

/* The heading line and the filter bar. */
static void page_head(Store *s, AfBuf *out) {
  long long nf = 0, nnew = 0, nruns = 0, ncases = 0;
  double lastrun = 0;
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db,
                         "SELECT (SELECT count(*) FROM findings), (SELECT count(*) FROM findings"
                         " WHERE status = 'new'), count(*), coalesce(sum(cases), 0),"
                         " coalesce(max(started), 0) FROM runs",
                         -1, &st, NULL) == SQLITE_OK) {
    if (sqlite3_step(st) == SQLITE_ROW) {
      nf = sqlite3_column_int64(st, 0), nnew = sqlite3_column_int64(st, 1);
      nruns = sqlite3_column_int64(st, 2), ncases = sqlite3_column_int64(st, 3);
      lastrun = sqlite3_column_double(st, 4);
    }
    sqlite3_finalize(st);
  }
  char t[32];
  results__fmt_time(lastrun, t, sizeof t);
  af_buf_printf(out,
                "<header><h1>asyncfuzz findings</h1><span id=\"sum\">%lld finding(s), %lld new;"
                " %lld run(s), %lld cases; the newest run started %s UTC. A line opens its "
                "reproducer; a heading sorts.</span></header>\n<div class=\"bar\">"
                "<label for=\"fs\">status</label><select id=\"fs\">",
                nf, nnew, nruns, ncases, nruns ? t : "-");
  options(s, "SELECT status, count(*) FROM findings GROUP BY 1 ORDER BY 1", out);
  af_buf_puts(out, "</select><label for=\"fc\">class</label><select id=\"fc\">");
  options(s, "SELECT class, count(*) FROM findings GROUP BY 1 ORDER BY 1", out);
  af_buf_puts(out, "</select><label for=\"fl\">lowering</label><select id=\"fl\">");
  options(s, "SELECT lowering, count(*) FROM findings GROUP BY 1 ORDER BY 1", out);
  af_buf_puts(out, "</select><input id=\"fq\" type=\"search\" placeholder=\"text in the cause or "
                   "detail\" aria-label=\"filter by text\"><span id=\"shown\"></span>"
                   "<span class=\"legend\">configurations: <i class=\"c-r\" "
                   "style=\"display:inline-block;width:7px;height:11px\"></i> reproduces "
                   "<i class=\"c-p\" style=\"display:inline-block;width:7px;height:11px\"></i> "
                   "passes every run <i class=\"c-o\" style=\"display:inline-block;width:7px;"
                   "height:11px\"></i> fails differently or refused</span></div>\n");
}

/* The findings table (its lines drawn by the page's script) and its data. */
static int findings_table(Store *s, AfBuf *out, AfBuf *data, AfErr *err) {
  Configs *k = af_calloc(1, sizeof *k);
  if (k == NULL)
    return af_err_set(err, AF_ENOMEM, "out of memory");
  load_configs(s, k);
  int sw = k->n * 9 + 14;
  af_buf_printf(out,
                "<table id=\"findings\"><colgroup><col style=\"width:44px\"><col "
                "style=\"width:74px\"><col style=\"width:130px\"><col><col style=\"width:62px\">"
                "<col style=\"width:92px\"><col style=\"width:92px\"><col style=\"width:52px\">"
                "<col style=\"width:60px\"><col style=\"width:%dpx\"><col style=\"width:124px\">"
                "</colgroup><thead><tr><th data-k=\"id\" data-t=\"n\">#</th><th "
                "data-k=\"status\">status</th><th data-k=\"cls\">class</th><th data-k=\"sig\">"
                "cause</th><th data-k=\"count\" data-t=\"n\" title=\"occurrences\">count</th>"
                "<th data-k=\"first\" data-t=\"n\">first seen</th><th data-k=\"last\" "
                "data-t=\"n\">last seen</th><th data-k=\"ops\" data-t=\"n\" title=\"ops of the "
                "minimized reproducer (~: the smallest case seen)\">ops</th><th data-k=\"repro\" "
                "data-t=\"n\" title=\"reproduced / tries\">repro</th><th data-k=\"cfg\" "
                "data-t=\"n\" title=\"one cell per configuration\">configurations</th><th>"
                "</th></tr></thead></table>\n<noscript><p>The findings are drawn by the page's "
                "script; with scripts off, <code>asyncfuzz db list</code> lists them.</p>"
                "</noscript><div id=\"more\"></div>\n",
                sw < 60 ? 60 : sw);
  af_buf_puts(data, "{\"configs\":[");
  for (int i = 0; i < k->n; i++) {
    af_buf_puts(data, i ? "," : "");
    results__js_str(data, k->name[i]);
  }
  af_buf_puts(data, "],\n\"findings\":[");
  sqlite3_stmt *st;
  int rc = results__prepare_filtered(s, FINDING_ROW_PAGE, NULL, NEW_FIRST, &st, err);
  if (rc) {
    af_free(k);
    return rc;
  }
  int n = 0;
  for (; sqlite3_step(st) == SQLITE_ROW && !data->oom; n++)
    finding_json(s, k, st, data);
  sqlite3_finalize(st);
  af_free(k);
  af_buf_puts(data, "]}");
  if (n == 0)
    af_buf_puts(out, "<p class=\"none\">No findings.</p>\n");
  return 0;
}

/* The distinct tool versions of a run's tools list (JSON this program wrote:
 * [{"lowering": ..., "version": ...}, ...]), comma-separated. */
static void tool_versions(const char *tools, AfBuf *out) {
  char seen[8][96];
  int n = 0;
  for (const char *p = tools; (p = strstr(p, "\"version\": \"")) != NULL && n < 8;) {
    p += 12;
    size_t len = strcspn(p, "\"");
    char v[96];
    snprintf(v, sizeof v, "%.*s", (int)(len < 95 ? len : 95), p);
    int dup = 0;
    for (int i = 0; i < n; i++)
      dup |= strcmp(seen[i], v) == 0;
    if (!dup) {
      snprintf(seen[n++], sizeof seen[0], "%s", v);
      af_buf_puts(out, n > 1 ? ", " : "");
      esc(out, v);
    }
    p += len;
  }
}

/* Where a run's time went (its JSON object of seconds per bucket): the three largest shares,
 * and every bucket's seconds as the title. "-" when the run has none. */
static void run_time(const char *json, AfBuf *out) {
  char name[12][40];
  double sec[12], sum = 0;
  int n = 0;
  for (const char *p = json; n < 12 && (p = strchr(p, '"')) != NULL;) {
    const char *e = strchr(p + 1, '"');
    if (e == NULL || e[1] != ':')
      break;
    snprintf(name[n], sizeof name[n], "%.*s", (int)(e - p - 1 < 39 ? e - p - 1 : 39), p + 1);
    sec[n] = strtod(e + 2, NULL);
    sum += sec[n++];
    p = e + 2;
  }
  if (n == 0 || sum <= 0) {
    af_buf_puts(out, "-");
    return;
  }
  af_buf_puts(out, "<span title=\"");
  for (int i = 0; i < n; i++) {
    af_buf_printf(out, "%s", i ? ", " : "");
    esc(out, name[i]);
    af_buf_printf(out, " %.1f s", sec[i]);
  }
  af_buf_puts(out, "\">");
  for (int shown = 0; shown < 3; shown++) { /* (the largest left, three times) */
    int best = -1;
    for (int i = 0; i < n; i++)
      if (sec[i] >= 0 && (best < 0 || sec[i] > sec[best]))
        best = i;
    if (best < 0 || sec[best] <= 0)
      break;
    af_buf_puts(out, shown ? ", " : "");
    esc(out, name[best]);
    af_buf_printf(out, " %.0f%%", 100 * sec[best] / sum);
    sec[best] = -1;
  }
  af_buf_puts(out, "</span>");
}

/* A run's cases per configuration, a row under its line that opens: cases, executed and clean
 * shares. Nothing when it has none. */
static void run_configs(Store *s, int64_t run, AfBuf *out) {
  static const char sql[] =
      "SELECT config, cases, executed, failures FROM run_configs WHERE run = ?"
      " ORDER BY config";
  sqlite3_stmt *st = results__cached(s, sql);
  if (st == NULL)
    return;
  sqlite3_bind_int64(st, 1, run);
  int n = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    if (n++ == 0)
      af_buf_puts(out, "<tr><td></td><td colspan=\"10\"><details><summary>its cases per "
                       "configuration</summary><table class=\"cfg\"><tr><th>configuration</th>"
                       "<th class=\"n\">cases</th><th class=\"n\">executed</th>"
                       "<th class=\"n\">clean</th></tr>");
    double c = sqlite3_column_double(st, 1);
    af_buf_puts(out, "<tr><td>");
    esc(out, results__col(st, 0));
    af_buf_printf(out,
                  "</td><td class=\"n\">%.0f</td><td class=\"n\">%.1f%%</td><td class=\"n\">"
                  "%.1f%%</td></tr>",
                  c, c > 0 ? 100 * sqlite3_column_double(st, 2) / c : 0.0,
                  c > 0 ? 100 * (c - sqlite3_column_double(st, 3)) / c : 0.0);
  }
  sqlite3_reset(st);
  if (n)
    af_buf_puts(out, "</table></details></td></tr>\n");
}

/* The runs, newest first: when, where, versions, cases, throughput, executed and clean, and
 * per configuration. */
static int runs_table(Store *s, AfBuf *out, AfErr *err) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db,
                         "SELECT r.id, r.started, coalesce(r.host, ''), coalesce(r.device, ''),"
                         " coalesce(r.asyncfuzz_version, ''), coalesce(r.tools, ''), r.cases,"
                         " coalesce(r.seconds, 0), coalesce(r.executed, -1),"
                         " (SELECT sum(failures) FROM run_configs c WHERE c.run = r.id),"
                         " (SELECT sum(cases) FROM run_configs c WHERE c.run = r.id),"
                         " (SELECT count(DISTINCT finding) FROM occurrences o WHERE o.run = r.id),"
                         " coalesce(r.time, '') FROM runs r ORDER BY r.started DESC LIMIT 50",
                         -1, &st, NULL) != SQLITE_OK)
    return results__db_err(s, err, "query failed");
  af_buf_puts(out, "<h2>Runs</h2>\n<table class=\"runs\"><tr><th>#</th><th>started (UTC)</th>"
                   "<th>host</th><th>device</th><th>versions</th><th class=\"n\">cases</th>"
                   "<th class=\"n\">cases/s</th><th class=\"n\">executed</th><th class=\"n\">"
                   "clean</th><th class=\"n\">findings</th><th>time went to</th></tr>\n");
  while (sqlite3_step(st) == SQLITE_ROW) {
    char t[32];
    results__fmt_time(sqlite3_column_double(st, 1), t, sizeof t);
    long long cases = sqlite3_column_int64(st, 6), ex = sqlite3_column_int64(st, 8);
    long long cf = sqlite3_column_int64(st, 9), cc = sqlite3_column_int64(st, 10);
    double sec = sqlite3_column_double(st, 7);
    af_buf_printf(out, "<tr><td>%lld</td><td>%s</td><td>", (long long)sqlite3_column_int64(st, 0),
                  t);
    esc(out, results__col(st, 2));
    af_buf_puts(out, "</td><td class=\"wrap\">");
    esc(out, results__col(st, 3));
    af_buf_puts(out, "</td><td class=\"wrap\">asyncfuzz ");
    esc(out, results__col(st, 4));
    af_buf_puts(out, "; ");
    tool_versions(results__col(st, 5), out);
    af_buf_printf(out, "</td><td class=\"n\">%lld</td><td class=\"n\">%.1f</td>", cases,
                  sec > 0 ? (double)cases / sec : 0.0);
    if (ex >= 0 && cases > 0)
      af_buf_printf(out, "<td class=\"n\">%.1f%%</td>", 100.0 * (double)ex / (double)cases);
    else
      af_buf_puts(out, "<td class=\"n\">-</td>");
    if (cc > 0)
      af_buf_printf(out, "<td class=\"n\">%.1f%%</td>", 100.0 * (double)(cc - cf) / (double)cc);
    else
      af_buf_puts(out, "<td class=\"n\">-</td>");
    af_buf_printf(out, "<td class=\"n\">%lld</td><td class=\"wrap\">",
                  (long long)sqlite3_column_int64(st, 11));
    run_time(results__col(st, 12), out);
    af_buf_puts(out, "</td></tr>\n");
    run_configs(s, sqlite3_column_int64(st, 0), out); /* (a row of its own, when it has them) */
  }
  sqlite3_finalize(st);
  af_buf_puts(out, "</table>\n");
  return 0;
}

/* ---- pictures ---- */

static const char *const run_colors[PAGE_RUNS] = {"#1a73e8", "#d93025", "#188038", "#f29900",
                                                  "#9334e6", "#12b5cb", "#e8710a", "#5f6368"};

typedef struct Series {
  int64_t run;
  char label[64];
  int n, capx, capy;
  double *x, *y;
} Series;

/* The newest runs' progress records as series of (seconds, value): value 0 the findings they
 * had, 1 their cases/s. Returns how many series. */
static int load_series(Store *s, int value, Series *sr) {
  int ns = 0;
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db,
                         "SELECT p.run, r.started, p.at, p.findings, p.cases FROM progress p"
                         " JOIN runs r ON r.id = p.run WHERE p.run IN (SELECT run FROM progress"
                         " GROUP BY run ORDER BY run DESC LIMIT 8) ORDER BY p.run, p.at",
                         -1, &st, NULL) != SQLITE_OK)
    return 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    int64_t run = sqlite3_column_int64(st, 0);
    if (ns == 0 || sr[ns - 1].run != run) {
      if (ns == PAGE_RUNS)
        break;
      Series *z = &sr[ns++];
      memset(z, 0, sizeof *z);
      z->run = run;
      char t[32];
      results__fmt_time(sqlite3_column_double(st, 1), t, sizeof t);
      snprintf(z->label, sizeof z->label, "run %lld, %s", (long long)run, t);
    }
    Series *z = &sr[ns - 1];
    double at = sqlite3_column_double(st, 2);
    if (value == 1 && at <= 0)
      continue; /* (no rate at the start) */
    if (af_grow((void **)&z->x, &z->capx, z->n + 1, sizeof(double)) ||
        af_grow((void **)&z->y, &z->capy, z->n + 1, sizeof(double)))
      break;
    z->x[z->n] = at;
    z->y[z->n++] = value == 0 ? sqlite3_column_double(st, 3) : sqlite3_column_double(st, 4) / at;
  }
  sqlite3_finalize(st);
  return ns;
}

/* A line chart of series over a run's seconds: a polyline and a point (circle, with its
 * values as a tooltip) per progress record, a legend per run. */
/* The least of 1, 2, 2.5 and 5 times a power of ten that is at least v (v > 0). */
static double nice_ceil(double v) {
  double p = 1;
  while (p * 10 <= v)
    p *= 10;
  while (p > v && p > 1e-6)
    p /= 10;
  static const double steps[] = {1, 2, 2.5, 5, 10};
  for (int i = 0; i < 5; i++)
    if (steps[i] * p >= v)
      return steps[i] * p;
  return 10 * p;
}

static void line_chart(AfBuf *b, const char *id, const char *title, const char *unit,
                       const Series *sr, int ns) {
  double mx = 1, my = 1;
  int pts = 0;
  for (int i = 0; i < ns; i++)
    for (int j = 0; j < sr[i].n; j++) {
      mx = sr[i].x[j] > mx ? sr[i].x[j] : mx;
      my = sr[i].y[j] > my ? sr[i].y[j] : my;
      pts++;
    }
  my = nice_ceil(my); /* (the top label: a round number, short enough for its margin) */
  const int W = 420, H = 180, L = 44, B = 26, T = 8;
  af_buf_printf(b,
                "<figure><figcaption>%s</figcaption><svg id=\"%s\" xmlns=\"http://www.w3.org/"
                "2000/svg\" width=\"%d\" height=\"%d\" role=\"img\" data-points=\"%d\">",
                title, id, W, H + 16 * ns, pts);
  af_buf_printf(b,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                "stroke=\"#c8ced6\"/><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%g</text>"
                "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text><text x=\"%d\" y=\"%d\">0 s"
                "</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.0f s</text>",
                L, T, W - L - 8, H - B - T, L - 4, T + 10, my, L - 4, H - B, L, H - B + 14, W - 8,
                H - B + 14, mx);
  for (int i = 0; i < ns; i++) {
    const char *col = run_colors[i % PAGE_RUNS];
    af_buf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", col);
    for (int j = 0; j < sr[i].n; j++)
      af_buf_printf(b, "%.1f,%.1f ", L + sr[i].x[j] / mx * (W - L - 8),
                    H - B - sr[i].y[j] / my * (H - B - T));
    af_buf_puts(b, "\"/>");
    for (int j = 0; j < sr[i].n; j++)
      af_buf_printf(b,
                    "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.2\" fill=\"%s\"><title>"
                    "%.0f s: %.4g %s</title></circle>",
                    L + sr[i].x[j] / mx * (W - L - 8), H - B - sr[i].y[j] / my * (H - B - T), col,
                    sr[i].x[j], sr[i].y[j], unit);
    af_buf_printf(b,
                  "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"3\" fill=\"%s\"/><text x=\"%d\""
                  " y=\"%d\">",
                  L, H + 16 * i + 4, col, L + 14, H + 16 * i + 8);
    esc(b, sr[i].label);
    af_buf_puts(b, "</text>");
  }
  if (ns == 0)
    af_buf_printf(b, "<text x=\"%d\" y=\"%d\">no progress recorded</text>", L + 8, T + 40);
  af_buf_puts(b, "</svg></figure>\n");
}

/* Executed and clean shares per configuration, summed over the runs: two bars each. */
static void share_chart(Store *s, AfBuf *b) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db,
                         "SELECT config, sum(cases), sum(executed), sum(failures) FROM run_configs"
                         " GROUP BY config ORDER BY config LIMIT 48",
                         -1, &st, NULL) != SQLITE_OK)
    return;
  AfBuf bars;
  af_buf_init(&bars);
  int n = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    double c = sqlite3_column_double(st, 1);
    double ex = c > 0 ? 100 * sqlite3_column_double(st, 2) / c : 0;
    double cl = c > 0 ? 100 * (c - sqlite3_column_double(st, 3)) / c : 0;
    int y = 6 + 20 * n++;
    af_buf_printf(&bars, "<text x=\"0\" y=\"%d\">", y + 11);
    esc(&bars, results__col(st, 0));
    af_buf_printf(&bars,
                  "</text><rect x=\"310\" y=\"%d\" width=\"%.1f\" height=\"7\" fill=\"#1a73e8\">"
                  "<title>executed %.1f%%</title></rect><rect x=\"310\" y=\"%d\" width=\"%.1f\" "
                  "height=\"7\" fill=\"#34a853\"><title>clean %.1f%%</title></rect><text "
                  "x=\"%.1f\" y=\"%d\">%.0f%% / %.0f%%</text>",
                  y, ex * 1.6, ex, y + 8, cl * 1.6, cl, 316 + (ex > cl ? ex : cl) * 1.6, y + 11, ex,
                  cl);
  }
  sqlite3_finalize(st);
  af_buf_printf(b,
                "<figure><figcaption>executed (blue) and clean (green) share per "
                "configuration</figcaption><svg id=\"shares\" xmlns=\"http://www.w3.org/2000/svg\" "
                "width=\"600\" height=\"%d\" role=\"img\" data-bars=\"%d\">%s%s</svg></figure>\n",
                12 + 20 * (n ? n : 1), n, bars.p ? bars.p : "",
                n ? "" : "<text x=\"0\" y=\"16\">no configurations recorded</text>");
  af_buf_free(&bars);
}

static void pictures(Store *s, AfBuf *out) {
  Series sr[PAGE_RUNS];
  af_buf_puts(out, "<h2>Pictures</h2>\n");
  int ns = load_series(s, 0, sr);
  line_chart(out, "discovery", "findings over each campaign's time (the discovery curve)",
             "findings", sr, ns);
  for (int i = 0; i < ns; i++)
    af_free(sr[i].x), af_free(sr[i].y);
  ns = load_series(s, 1, sr);
  line_chart(out, "rate", "cases/s over each campaign's time", "cases/s", sr, ns);
  for (int i = 0; i < ns; i++)
    af_free(sr[i].x), af_free(sr[i].y);
  share_chart(s, out);
}

int store_report_html(Store *s, AfBuf *out, AfErr *err) {
  af_buf_printf(out,
                "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                "<meta name=\"viewport\" content=\"width=device-width\">"
                "<title>asyncfuzz findings</title><style>%s</style></head><body>\n",
                results__page_style);
  page_head(s, out);
  AfBuf data;
  af_buf_init(&data);
  int rc = findings_table(s, out, &data, err);
  if (rc == 0)
    rc = runs_table(s, out, err);
  if (rc == 0) {
    pictures(s, out);
    rc = store_report_matrix(s, out, err);
  }
  if (rc == 0)
    af_buf_printf(out,
                  "<script type=\"application/json\" id=\"data\">%s</script>\n<script>%s"
                  "</script>\n</body></html>\n",
                  data.p ? data.p : "{}", results__page_script);
  int oom = data.oom;
  af_buf_free(&data);
  if (rc)
    return rc;
  return out->oom || oom ? af_err_set(err, AF_ENOMEM, "out of memory") : 0;
}
