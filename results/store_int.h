/*
 * store_int.h: internals of results/, shared by its files: store.c (the database, runs, the
 * statement helpers), findings.c, merge.c, query.c, matrix.c, report.c (exports) and report_page.c
 * (the HTML report). Nothing outside results/ includes it.
 */
#ifndef RESULTS_STORE_INT_H
#define RESULTS_STORE_INT_H

#include "store.h"

#include <sqlite3.h>

/* prepared statements of the hot path, keyed by their (static) SQL text's address */
#define STORE_CACHE 16

struct Store {
  sqlite3 *db;
  int version;
  char path[1024];
  struct {
    const char *sql;
    sqlite3_stmt *st;
  } cache[STORE_CACHE];
};

#define FINDING_COLS                                                                               \
  "SELECT id, status, class, count, coalesce(smallest_ops, 0), lowering, signature, first_seen,"   \
  " last_seen, repro_runs, repro_hits, detail FROM findings"
/* FINDING_COLS and (12) the minimized case's ops, 0 when there is none */
#define FINDING_COLS_MIN                                                                           \
  "SELECT id, status, class, count, coalesce(smallest_ops, 0), lowering, signature, first_seen,"   \
  " last_seen, repro_runs, repro_hits, detail, coalesce((SELECT ops FROM cases"                    \
  " WHERE cases.id = findings.minimized_case), 0) FROM findings"
#define NEW_FIRST " ORDER BY (status = 'new') DESC, last_seen DESC, id"

/* The prepared statement of sql (a static string: its address is the key), reset; NULL when it
 * cannot be prepared. (store.c) */
sqlite3_stmt *results__cached(Store *s, const char *sql);
/* Runs sql (no parameters). 0 or AF_EIO (err set). */
int results__exec(Store *s, const char *sql, AfErr *err);
/* Runs one cached statement with parameters given as a format: 't' text, 'i' int64, 'd'
 * double, 'n' null. Returns the sqlite3_step result. */
int results__run1(Store *s, const char *sql, const char *types, ...);
/* Binds text (NULL: SQL NULL). */
void results__bind_text(sqlite3_stmt *st, int i, const char *t);
/* The time now, in seconds since the epoch. */
double results__now(void);
/* Sets err from SQLite's last error on s (the path, what failed, the message); AF_EIO. */
int results__db_err(Store *s, AfErr *err, const char *what);
/* Prepares head + the filter's WHERE clause + tail. (query.c) */
int results__prepare_filtered(Store *s, const char *head, const StoreFilter *f, const char *tail,
                              sqlite3_stmt **st, AfErr *err);
/* Column i of the current row as text ("" for NULL). */
const char *results__col(sqlite3_stmt *st, int i);
/* Appends s to b escaped for HTML and XML text and attribute values (the report, JUnit); control
 * characters but newline and tab are left out (XML 1.0 has no way to write them). */
void results__xml_esc(AfBuf *b, const char *s);
/* A finding's detailed forms, most hits first (at most `max`; *more: how many were left out).
 * Calls fn(form, hits, ctx) for each. (report.c) */
void results__each_form(Store *s, int64_t id, int max, int *more,
                        void (*fn)(const char *form, long long hits, void *ctx), void *ctx);
/* The HTML report's style sheet and script (report_assets.c). */
extern const char results__page_style[], results__page_script[];
/* A unix time as "YYYY-MM-DD HH:MM" (UTC). */
void results__fmt_time(double t, char *out, size_t n);

#endif
