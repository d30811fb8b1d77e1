/*
 * matrix.c: the configuration matrix in the database (store.h): each finding's verdict per
 * configuration of the mlir-opt lowering, the cases of a run per configuration, and the
 * findings that appear or go away between LLVM releases.
 */
#include "store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* "22.1.8" -> 22001008, so releases order as numbers */
static int64_t llvm_key(const char *v) {
  int64_t key = 0;
  const char *p = v;
  for (int part = 0; part < 3; part++) {
    key = key * 1000 + (p && *p >= '0' && *p <= '9' ? strtol(p, NULL, 10) % 1000 : 0);
    p = p ? strchr(p, '.') : NULL;
    if (p)
      p++;
  }
  return key;
}

static void bind_t(sqlite3_stmt *st, int i, const char *t) {
  sqlite3_bind_text(st, i, t ? t : "", -1, SQLITE_TRANSIENT);
}

/* Runs sql once per row i < n, binding each with bind(st, i, ctx), in one transaction: all the
 * rows or none. what: for the error message. */
static int insert_rows(Store *s, const char *sql, int n,
                       void (*bind)(sqlite3_stmt *st, int i, const void *ctx), const void *ctx,
                       const char *what, AfErr *err) {
  if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
    return results__db_err(s, err, what);
  sqlite3_stmt *st = NULL;
  int ok = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) == SQLITE_OK;
  for (int i = 0; i < n && ok; i++) {
    bind(st, i, ctx);
    ok = sqlite3_step(st) == SQLITE_DONE;
    sqlite3_reset(st);
  }
  sqlite3_finalize(st); /* (NULL: nothing) */
  if (!ok || sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
    int rc = results__db_err(s, err, what);
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
  }
  return 0;
}

typedef struct ConfigRows {
  int64_t finding, run;
  const StoreConfigVerdict *v;
} ConfigRows;

static void bind_verdict(sqlite3_stmt *st, int i, const void *ctx) {
  const ConfigRows *r = ctx;
  const StoreConfigVerdict *v = &r->v[i];
  sqlite3_bind_int64(st, 1, r->finding);
  bind_t(st, 2, v->config);
  bind_t(st, 3, v->version);
  bind_t(st, 4, v->llvm);
  sqlite3_bind_int64(st, 5, llvm_key(v->llvm));
  bind_t(st, 6, v->pipeline);
  bind_t(st, 7, v->target);
  bind_t(st, 8, v->jit);
  bind_t(st, 9, v->cls);
  bind_t(st, 10, v->signature);
  sqlite3_bind_int(st, 11, v->reproduces); /* (STORE_CONF_*) */
  if (r->run > 0)
    sqlite3_bind_int64(st, 12, r->run);
  else
    sqlite3_bind_null(st, 12);
  sqlite3_bind_double(st, 13, (double)time(NULL));
}

int store_set_configs(Store *s, const char *signature, int64_t run, const StoreConfigVerdict *v,
                      int n, AfErr *err) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db, "SELECT id FROM findings WHERE signature = ?", -1, &st, NULL) !=
      SQLITE_OK)
    return results__db_err(s, err, "query failed");
  bind_t(st, 1, signature);
  int64_t fid = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  if (fid < 0)
    return af_err_set(err, AF_EINVALID, "%s: no finding %s", s->path, signature);
  ConfigRows rows = {fid, run, v};
  return insert_rows(s,
                     "INSERT INTO finding_configs(finding, config, lowering_version, llvm,"
                     " llvm_key, pipeline, target, jit, class, signature, reproduces, run,"
                     " checked) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                     " ON CONFLICT(finding, config, lowering_version) DO UPDATE SET"
                     " class = excluded.class, signature = excluded.signature,"
                     " reproduces = excluded.reproduces, run = excluded.run,"
                     " checked = excluded.checked",
                     n, bind_verdict, &rows, "cannot store the finding's configurations", err);
}

typedef struct CountRows {
  int64_t run;
  const StoreConfigCount *c;
} CountRows;

static void bind_count(sqlite3_stmt *st, int i, const void *ctx) {
  const CountRows *r = ctx;
  sqlite3_bind_int64(st, 1, r->run);
  bind_t(st, 2, r->c[i].config);
  bind_t(st, 3, r->c[i].version);
  sqlite3_bind_int64(st, 4, r->c[i].cases);
  sqlite3_bind_int64(st, 5, r->c[i].executed);
  sqlite3_bind_int64(st, 6, r->c[i].failures);
}

int store_config_counts(Store *s, int64_t run, const StoreConfigCount *c, int n, AfErr *err) {
  CountRows rows = {run, c};
  return insert_rows(s,
                     "INSERT INTO run_configs(run, config, lowering_version, cases, executed,"
                     " failures) VALUES(?, ?, ?, ?, ?, ?)"
                     " ON CONFLICT(run, config, lowering_version) DO UPDATE SET"
                     " cases = cases + excluded.cases, executed = executed + excluded.executed,"
                     " failures = failures + excluded.failures",
                     n, bind_count, &rows, "cannot store the cases per configuration", err);
}

int store_show_configs(Store *s, int64_t id, AfBuf *out, AfErr *err) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db,
                         "SELECT llvm, pipeline, target, jit, reproduces, class, signature, config"
                         " FROM finding_configs WHERE finding = ?"
                         " ORDER BY llvm_key DESC, pipeline, target, jit",
                         -1, &st, NULL) != SQLITE_OK)
    return results__db_err(s, err, "query failed");
  sqlite3_bind_int64(st, 1, id);
  int n = 0, yes = 0, step;
  AfBuf rows;
  af_buf_init(&rows);
  while ((step = sqlite3_step(st)) == SQLITE_ROW) {
    int rep = sqlite3_column_int(st, 4), other = rep >= STORE_CONF_DIFFERS;
    yes += rep == STORE_CONF_REPRODUCES;
    n++;
    af_buf_printf(&rows, "  %-10s %-13s %-6s %-9s %s%s%s\n", results__col(st, 0),
                  results__col(st, 1), results__col(st, 2), results__col(st, 3),
                  store_conf_name(rep), other ? ": " : "",
                  !other                 ? ""
                  : *results__col(st, 6) ? results__col(st, 6)
                                         : results__col(st, 5));
  }
  sqlite3_finalize(st);
  if (step == SQLITE_DONE && n > 0) {
    af_buf_printf(out,
                  "configurations (the minimized case on each): reproduces on %d of %d\n"
                  "  %-10s %-13s %-6s %-9s %s\n",
                  yes, n, "LLVM", "pipeline", "target", "JIT", "verdict");
    af_buf_puts(out, rows.p ? rows.p : "");
  }
  af_buf_free(&rows);
  return step == SQLITE_DONE ? 0 : results__db_err(s, err, "query failed");
}

/* Which verdicts, on an older release and on a newer one (the same pipeline, target and JIT
 * level), make a version change (STORE_CONF_*): fixed, a regression, and the changes that are
 * neither, a finding that reproduces on one and fails differently (or is refused) on the other. */
enum { VER_REGRESSED, VER_FIXED, VER_DIFFERS_AFTER, VER_DIFFERS_BEFORE };
static const char *const ver_old[] = {"a.reproduces = 0", "a.reproduces = 1", "a.reproduces = 1",
                                      "a.reproduces >= 2"};
static const char *const ver_new[] = {"b.reproduces = 1", "b.reproduces = 0", "b.reproduces >= 2",
                                      "b.reproduces = 1"};

/* The findings of a version change (VER_*): (id, status, class, count, signature, the releases
 * as "OLD -> NEW", the configurations it holds on) per row. */
static int prepare_versions(Store *s, const StoreFilter *f, int fixed, sqlite3_stmt **st,
                            AfErr *err) {
  char head[1400];
  snprintf(head, sizeof head,
           "SELECT id, status, class, count, signature,"
           " (SELECT group_concat(pair, ', ') FROM (SELECT a.llvm || ' -> ' || b.llvm"
           "   AS pair FROM finding_configs a JOIN finding_configs b ON b.finding = a.finding"
           "   AND b.pipeline = a.pipeline AND b.target = a.target AND b.jit = a.jit"
           "   AND a.llvm_key < b.llvm_key WHERE a.finding = findings.id AND %s"
           "   AND %s GROUP BY pair ORDER BY min(a.llvm_key), min(b.llvm_key))),"
           " (SELECT count(DISTINCT a.pipeline || '/' || a.target || '/' || a.jit)"
           "   FROM finding_configs a JOIN finding_configs b ON b.finding = a.finding"
           "   AND b.pipeline = a.pipeline AND b.target = a.target AND b.jit = a.jit"
           "   AND a.llvm_key < b.llvm_key WHERE a.finding = findings.id AND %s"
           "   AND %s)"
           " FROM findings",
           ver_old[fixed], ver_new[fixed], ver_old[fixed], ver_new[fixed]);
  char tail[400];
  snprintf(tail, sizeof tail,
           " AND EXISTS (SELECT 1 FROM finding_configs a JOIN finding_configs b"
           " ON b.finding = a.finding AND b.pipeline = a.pipeline AND b.target = a.target"
           " AND b.jit = a.jit AND a.llvm_key < b.llvm_key WHERE a.finding = findings.id"
           " AND %s AND %s)" NEW_FIRST,
           ver_old[fixed], ver_new[fixed]);
  return results__prepare_filtered(s, head, f, tail, st, err);
}

/* The rows of version change `kind` (VER_*) into out; how many in *n. */
static int list_rows(Store *s, const StoreFilter *f, int kind, AfBuf *out, int *n, AfErr *err) {
  sqlite3_stmt *st;
  int rc = prepare_versions(s, f, kind, &st, err);
  if (rc)
    return rc;
  int step;
  *n = 0;
  while ((step = sqlite3_step(st)) == SQLITE_ROW) {
    char rel[200];
    snprintf(rel, sizeof rel, "%s (%d config%s)", results__col(st, 5), sqlite3_column_int(st, 6),
             sqlite3_column_int(st, 6) == 1 ? "" : "s");
    af_buf_printf(out, "%5lld  %-7s  %-20s %7lld  %-26s  %s\n",
                  (long long)sqlite3_column_int64(st, 0), results__col(st, 1), results__col(st, 2),
                  (long long)sqlite3_column_int64(st, 3), rel, results__col(st, 4));
    (*n)++;
  }
  sqlite3_finalize(st);
  return step == SQLITE_DONE ? 0 : results__db_err(s, err, "query failed");
}

int store_list_versions(Store *s, const StoreFilter *f, int fixed, AfBuf *out, AfErr *err) {
  af_buf_printf(out, "%5s  %-7s  %-20s %7s  %-26s  %s\n", "id", "status", "class", "count",
                fixed ? "fixed in (old -> new)" : "regressed in (old -> new)", "signature");
  int n = 0, m = 0;
  int rc = list_rows(s, f, fixed ? VER_FIXED : VER_REGRESSED, out, &n, err);
  if (rc)
    return rc;
  af_buf_printf(out,
                "%d finding(s) %s a newer LLVM release on the same pipeline, target and JIT "
                "level (each finding's minimized case, checked on every configuration under "
                "several schedules: %s)\n",
                n, fixed ? "gone in" : "new in",
                fixed ? "it passes every run there" : "it passed every run on the older");
  AfBuf more;
  af_buf_init(&more);
  rc = list_rows(s, f, fixed ? VER_DIFFERS_AFTER : VER_DIFFERS_BEFORE, &more, &m, err);
  if (rc == 0 && m > 0)
    af_buf_printf(out,
                  "\nnot %s: %d finding(s) that %s fail differently or are refused by the "
                  "lowering on the %s release (db show ID says how)\n%s",
                  fixed ? "fixed" : "regressions", m,
                  fixed ? "reproduce on the older release and" : "reproduce on the newer release",
                  fixed ? "newer" : "older", more.p ? more.p : "");
  af_buf_free(&more);
  return rc;
}

int store_report_matrix(Store *s, AfBuf *out, AfErr *err) {
  static const char *const title[] = {"Regressions between LLVM releases",
                                      "Fixed between LLVM releases",
                                      "Not fixed: failing differently in a newer LLVM release",
                                      "Not regressions: failing differently in an older release"};
  static const char *const id[] = {"regressions", "fixed", "differs-newer", "differs-older"};
  static const char *const what[] = {
      " that passed every run on an older release and reproduce on a newer one",
      " that reproduce on an older release and pass every run on a newer one",
      " that reproduce on an older release and fail differently (or are refused by the lowering)"
      " on a newer one",
      " that reproduce on a newer release and failed differently (or were refused) on an older"
      " one"};
  for (int fixed = 0; fixed < 4; fixed++) {
    sqlite3_stmt *st;
    int rc = prepare_versions(s, NULL, fixed, &st, err);
    if (rc)
      return rc;
    af_buf_printf(out,
                  "<h2>%s</h2>\n<table id=\"%s\"><thead><tr><th>id</th>"
                  "<th>status</th><th>class</th><th>releases (old -&gt; new)</th>"
                  "<th>configurations</th><th>signature</th></tr></thead><tbody>\n",
                  title[fixed], id[fixed]);
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
      if (n++ >= 50) /* (the rest are counted: db list --regressions or --fixed lists them) */
        continue;
      af_buf_printf(out, "<tr><td>%lld</td><td>", (long long)sqlite3_column_int64(st, 0));
      results__xml_esc(out, results__col(st, 1));
      af_buf_puts(out, "</td><td>");
      results__xml_esc(out, results__col(st, 2));
      af_buf_puts(out, "</td><td>");
      results__xml_esc(out, results__col(st, 5));
      af_buf_printf(out, "</td><td>%d</td><td class=\"sig\">", sqlite3_column_int(st, 6));
      results__xml_esc(out, results__col(st, 4));
      af_buf_puts(out, "</td></tr>\n");
    }
    sqlite3_finalize(st);
    af_buf_printf(out, "</tbody></table>\n<p>%d finding(s)%s", n, what[fixed]);
    if (n > 50)
      af_buf_printf(out, "; the first 50 are shown, <code>asyncfuzz db list %s</code> lists all",
                    fixed == 1 || fixed == 2 ? "--fixed" : "--regressions");
    af_buf_puts(out, "</p>\n");
  }
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db,
                         "SELECT config, lowering_version, sum(cases), sum(executed), sum(failures)"
                         " FROM run_configs GROUP BY config, lowering_version ORDER BY config",
                         -1, &st, NULL) != SQLITE_OK)
    return results__db_err(s, err, "query failed");
  af_buf_puts(out, "<h2>Cases per configuration</h2>\n<table id=\"configs\"><thead><tr>"
                   "<th>configuration</th><th>version</th><th>cases</th><th>executed</th>"
                   "<th>failing</th><th>executed share</th><th>clean share</th></tr></thead>"
                   "<tbody>\n");
  while (sqlite3_step(st) == SQLITE_ROW) {
    af_buf_puts(out, "<tr><td>");
    results__xml_esc(out, results__col(st, 0));
    af_buf_puts(out, "</td><td>");
    results__xml_esc(out, results__col(st, 1));
    long long n = sqlite3_column_int64(st, 2), x = sqlite3_column_int64(st, 3),
              f = sqlite3_column_int64(st, 4);
    af_buf_printf(out,
                  "</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%.1f%%</td><td>%.1f%%</td>"
                  "</tr>\n",
                  n, x, f, n > 0 ? 100.0 * (double)x / (double)n : 0.0,
                  n > 0 ? 100.0 * (double)(n - f) / (double)n : 0.0);
  }
  sqlite3_finalize(st);
  af_buf_puts(out, "</tbody></table>\n");
  return out->oom ? af_err_set(err, AF_ENOMEM, "out of memory") : 0;
}

int store_show_matrix(Store *s, int64_t id, AfBuf *b, AfErr *err) {
  AfBuf m;
  af_buf_init(&m);
  int rc = store_show(s, id, b, err);
  if (rc == 0)
    rc = store_show_configs(s, id, &m, err);
  if (rc == 0 && m.p && b->p) { /* before the cases */
    char *at = strstr(b->p, "\nsmallest case (");
    size_t cut = at ? (size_t)(at - b->p) + 1 : b->len;
    AfBuf all;
    af_buf_init(&all);
    af_buf_put(&all, b->p, cut);
    af_buf_puts(&all, m.p);
    af_buf_puts(&all, b->p + cut);
    af_buf_free(b);
    *b = all;
  }
  af_buf_free(&m);
  return rc;
}

const char *store_conf_name(int conf) {
  switch (conf) {
  case STORE_CONF_REPRODUCES:
    return "reproduces";
  case STORE_CONF_PASSES:
    return "passes";
  case STORE_CONF_DIFFERS:
    return "fails differently";
  case STORE_CONF_REFUSED:
    return "refused by the lowering";
  default:
    return "?";
  }
}

int store_each_recheck(Store *s, int (*fn)(const StoreRecheck *r, void *ctx), void *ctx,
                       AfErr *err) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(
          s->db,
          "SELECT f.signature, c.json,"
          " coalesce((SELECT o.schedule FROM occurrences o WHERE o.finding = f.id"
          "  AND o.case_id = f.smallest_case ORDER BY o.at LIMIT 1),"
          "  (SELECT o.schedule FROM occurrences o WHERE o.finding = f.id ORDER BY o.at LIMIT 1),"
          "  ''),"
          " coalesce((SELECT group_concat(config || char(9) || lowering_version, char(10))"
          "  FROM finding_configs WHERE finding = f.id), '')"
          " FROM findings f JOIN cases c ON c.id = f.smallest_case ORDER BY f.id",
          -1, &st, NULL) != SQLITE_OK)
    return results__db_err(s, err, "cannot list the findings to check again");
  int step, rc = 0;
  while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
    StoreRecheck r = {results__col(st, 0), results__col(st, 1), results__col(st, 2),
                      results__col(st, 3)};
    rc = fn(&r, ctx);
  }
  sqlite3_finalize(st);
  if (rc)
    return rc;
  return step == SQLITE_DONE ? 0
                             : results__db_err(s, err, "cannot list the findings to check again");
}
