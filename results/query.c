/*
 * query.c: queries over the findings (store.h: list, show, stats), the filter they share, and
 * the text helpers of every output (columns, times, XML/HTML escapes).
 */
#define _GNU_SOURCE
#include "store_int.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void where_clause(const StoreFilter *f, AfBuf *w) {
  af_buf_puts(w, " WHERE 1");
  if (f && f->status >= 0)
    af_buf_puts(w, " AND status = ?1");
  if (f && f->cls)
    af_buf_puts(w, " AND class = ?2");
  if (f && f->lowering)
    af_buf_puts(w, " AND lowering = ?3");
  if (f && f->since > 0)
    af_buf_puts(w, " AND last_seen >= ?4");
}

int results__prepare_filtered(Store *s, const char *head, const StoreFilter *f, const char *tail,
                              sqlite3_stmt **st, AfErr *err) {
  AfBuf q;
  af_buf_init(&q);
  af_buf_puts(&q, head);
  where_clause(f, &q);
  af_buf_puts(&q, tail);
  if (q.oom) {
    af_buf_free(&q);
    return af_err_set(err, AF_ENOMEM, "out of memory");
  }
  int rc = sqlite3_prepare_v2(s->db, q.p, -1, st, NULL);
  af_buf_free(&q);
  if (rc != SQLITE_OK)
    return results__db_err(s, err, "query failed");
  if (f && f->status >= 0)
    results__bind_text(*st, 1, store_status_name(f->status));
  if (f && f->cls)
    results__bind_text(*st, 2, f->cls);
  if (f && f->lowering)
    results__bind_text(*st, 3, f->lowering);
  if (f && f->since > 0)
    sqlite3_bind_double(*st, 4, f->since);
  return 0;
}

const char *results__col(sqlite3_stmt *st, int i) {
  const unsigned char *t = sqlite3_column_text(st, i);
  return t ? (const char *)t : "";
}

void results__finding_row(sqlite3_stmt *st, FindingRow *r) {
  *r = (FindingRow){.id = sqlite3_column_int64(st, 0),
                    .status = results__col(st, 1),
                    .cls = results__col(st, 2),
                    .count = sqlite3_column_int64(st, 3),
                    .smallest_ops = sqlite3_column_int(st, 4),
                    .lowering = results__col(st, 5),
                    .signature = results__col(st, 6),
                    .first_seen = sqlite3_column_double(st, 7),
                    .last_seen = sqlite3_column_double(st, 8),
                    .repro_runs = sqlite3_column_int(st, 9),
                    .repro_hits = sqlite3_column_int(st, 10),
                    .detail = results__col(st, 11),
                    .replay = results__col(st, 12),
                    .min_ops = sqlite3_column_int(st, 13),
                    .mlir = ""};
  if (sqlite3_column_count(st) > 16) { /* FINDING_ROW_PAGE */
    r->mlir = results__col(st, 14);
    r->regression = sqlite3_column_int(st, 15);
    r->fixed = sqlite3_column_int(st, 16);
  }
}

void results__fmt_time(double t, char *out, size_t n) {
  /* (a time from another runner's database is whatever it says: one no date can hold is "?") */
  struct tm tm;
  time_t tt = (time_t)(t > -1e15 && t < 1e15 ? t : 0);
  if (!(t > -1e15 && t < 1e15) || gmtime_r(&tt, &tm) == NULL ||
      strftime(out, n, "%Y-%m-%d %H:%M", &tm) == 0)
    snprintf(out, n, "?");
}

/* a listing line is at most this wide: it fits a terminal */
#define LIST_WIDTH 100

int store_list(Store *s, const StoreFilter *f, AfBuf *out, AfErr *err) {
  sqlite3_stmt *st;
  int rc = results__prepare_filtered(s, FINDING_ROW_ONLY, f, NEW_FIRST, &st, err);
  if (rc)
    return rc;
  af_buf_printf(out, "%5s  %-7s  %-20s %6s %5s  %-5s %s\n", "id", "status", "class", "count", "ops",
                "repro", "lowering; the cause below");
  int n = 0, step;
  while ((step = sqlite3_step(st)) == SQLITE_ROW) {
    FindingRow r;
    results__finding_row(st, &r);
    char repro[16] = "-", ops[16];
    if (r.repro_runs > 0)
      snprintf(repro, sizeof repro, "%d/%d", r.repro_hits, r.repro_runs);
    /* the minimized reproducer's ops; ~ the smallest case's when there is none */
    snprintf(ops, sizeof ops, "%s%d", r.min_ops ? "" : "~", r.min_ops ? r.min_ops : r.smallest_ops);
    af_buf_printf(out, "%5lld  %-7s  %-20s %6lld %5s  %-5s %s\n       ", r.id, r.status, r.cls,
                  r.count, ops, repro, r.lowering);
    /* (less its first word when the lowering above says it: mlir-opt, of mlir-opt-22.1.8) */
    const char *sig = r.signature, *low = r.lowering;
    size_t w = strcspn(sig, "|");
    af_buf_wrap(out, sig[w] == '|' && w > 0 && strncmp(sig, low, w) == 0 ? sig + w + 1 : sig, 7, 7,
                LIST_WIDTH);
    af_buf_puts(out, "\n");
    n++;
  }
  sqlite3_finalize(st);
  if (step != SQLITE_DONE)
    return results__db_err(s, err, "query failed");
  af_buf_printf(out, "%d finding(s)\n%s", n,
                n ? "(ops: of the minimized reproducer, ~: of the smallest case seen; asyncfuzz db "
                    "show ID prints it)\n"
                  : "");
  return 0;
}

int store_show(Store *s, int64_t id, AfBuf *out, AfErr *err) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db,
                         "SELECT f.id, f.status, f.class, f.count, coalesce(f.smallest_ops, 0),"
                         " f.lowering, f.signature, f.first_seen, f.last_seen, f.repro_runs,"
                         " f.repro_hits, f.detail, f.trace, f.replay, c.json, c.mlir, c.seed,"
                         " m.json, m.mlir, m.ops FROM findings f LEFT JOIN cases c"
                         " ON c.id = f.smallest_case"
                         " LEFT JOIN cases m ON m.id = f.minimized_case WHERE f.id = ?",
                         -1, &st, NULL) != SQLITE_OK)
    return results__db_err(s, err, "query failed");
  sqlite3_bind_int64(st, 1, id);
  if (sqlite3_step(st) != SQLITE_ROW) {
    sqlite3_finalize(st);
    return af_err_set(err, AF_EINVALID, "%s: no finding %lld (see asyncfuzz db list)", s->path,
                      (long long)id);
  }
  char t1[32], t2[32];
  results__fmt_time(sqlite3_column_double(st, 7), t1, sizeof t1);
  results__fmt_time(sqlite3_column_double(st, 8), t2, sizeof t2);
  af_buf_printf(out,
                "finding %lld: %s\nsignature: %s\nclass: %s\nlowering: %s\noccurrences: %lld "
                "(first %s UTC, last %s UTC)\n",
                (long long)sqlite3_column_int64(st, 0), results__col(st, 1), results__col(st, 6),
                results__col(st, 2), results__col(st, 5), (long long)sqlite3_column_int64(st, 3),
                t1, t2);
  if (sqlite3_column_int(st, 9) > 0)
    af_buf_printf(out, "reproduction: %d of %d re-runs\n", sqlite3_column_int(st, 10),
                  sqlite3_column_int(st, 9));
  af_buf_printf(out, "detail: %s\n", results__col(st, 11));
  if (*results__col(st, 13))
    af_buf_printf(out, "replay: %s\n", results__col(st, 13));
  /* versions: the latest occurrence of each lowering version and pipeline */
  sqlite3_stmt *v;
  if (sqlite3_prepare_v2(s->db,
                         "SELECT o.lowering_version, o.pipeline, o.backend, o.schedule, r.host,"
                         " r.asyncfuzz_version, count(*) FROM occurrences o JOIN runs r ON"
                         " r.id = o.run WHERE o.finding = ? GROUP BY o.lowering_version,"
                         " o.pipeline, o.backend, r.host, r.asyncfuzz_version ORDER BY max(o.at)"
                         " DESC LIMIT 8",
                         -1, &v, NULL) == SQLITE_OK) {
    sqlite3_bind_int64(v, 1, id);
    while (sqlite3_step(v) == SQLITE_ROW)
      af_buf_printf(out,
                    "seen with: lowering version %s, backend %s, host %s, asyncfuzz %s (%d "
                    "occurrence(s); e.g. schedule %s)%s%s\n",
                    results__col(v, 0), results__col(v, 2), results__col(v, 4), results__col(v, 5),
                    sqlite3_column_int(v, 6), results__col(v, 3),
                    *results__col(v, 1) ? "\n  pipeline: " : "", results__col(v, 1));
    sqlite3_finalize(v);
  }
  /* the detailed forms: which accesses and calls the cause hit */
  if (sqlite3_prepare_v2(s->db,
                         "SELECT detailed, sum(hits) FROM forms WHERE finding = ?"
                         " GROUP BY detailed ORDER BY sum(hits) DESC, detailed",
                         -1, &v, NULL) == SQLITE_OK) {
    sqlite3_bind_int64(v, 1, id);
    int nf = 0;
    while (sqlite3_step(v) == SQLITE_ROW) {
      if (nf++ == 0)
        af_buf_puts(out, "detailed forms (hits, form):\n");
      af_buf_printf(out, "  %8lld  %s\n", (long long)sqlite3_column_int64(v, 1),
                    results__col(v, 0));
    }
    sqlite3_finalize(v);
  }
  if (*results__col(st, 14))
    af_buf_printf(out, "smallest case (%d ops, seed %s):\n%s", sqlite3_column_int(st, 4),
                  results__col(st, 16), results__col(st, 14));
  if (*results__col(st, 17))
    af_buf_printf(out, "minimized case (%d ops):\n%s", sqlite3_column_int(st, 19),
                  results__col(st, 17));
  if (*results__col(st, 18))
    af_buf_printf(out, "reproducer (.mlir):\n%s", results__col(st, 18));
  if (*results__col(st, 12))
    af_buf_printf(out, "trace excerpt:\n%s", results__col(st, 12));
  sqlite3_finalize(st);
  return 0;
}

int store_stats(Store *s, AfBuf *out, AfErr *err) {
  static const char *const q[] = {
      "SELECT 'runs', count(*), coalesce(sum(cases), 0), coalesce(sum(executed), 0),"
      " coalesce(sum(CASE WHEN executed IS NOT NULL THEN cases END), 0) FROM runs",
      "SELECT 'status ' || status, count(*), sum(count) FROM findings GROUP BY status",
      "SELECT 'class ' || class, count(*), sum(count) FROM findings GROUP BY class",
      "SELECT 'lowering ' || lowering, count(*), sum(count) FROM findings GROUP BY lowering",
  };
  af_buf_printf(out, "%-36s %10s %12s\n", "", "findings", "occurrences");
  for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, q[i], -1, &st, NULL) != SQLITE_OK)
      return results__db_err(s, err, "query failed");
    while (sqlite3_step(st) == SQLITE_ROW) {
      if (i == 0) {
        long long ran = sqlite3_column_int64(st, 3), of = sqlite3_column_int64(st, 4);
        af_buf_printf(out, "%-36s %10lld runs, %lld cases", "runs",
                      (long long)sqlite3_column_int64(st, 1),
                      (long long)sqlite3_column_int64(st, 2));
        if (of > 0) /* runs recorded before schema 3 do not know */
          af_buf_printf(out, "; %lld of %lld reached execution (%.1f%%)", ran, of,
                        100.0 * (double)ran / (double)of);
        af_buf_puts(out, "\n");
      } else
        af_buf_printf(out, "%-36s %10lld %12lld\n", results__col(st, 0),
                      (long long)sqlite3_column_int64(st, 1),
                      (long long)sqlite3_column_int64(st, 2));
    }
    sqlite3_finalize(st);
  }
  return 0;
}

void results__xml_esc(AfBuf *b, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '<':
      af_buf_puts(b, "&lt;");
      break;
    case '>':
      af_buf_puts(b, "&gt;");
      break;
    case '&':
      af_buf_puts(b, "&amp;");
      break;
    case '"':
      af_buf_puts(b, "&quot;");
      break;
    case '\'':
      af_buf_puts(b, "&#39;");
      break;
    default:
      if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
        af_buf_put(b, s, 1);
    }
  }
}
