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

/* A finding as listings and exports read it: the head of a statement over findings (filtered by
 * results__prepare_filtered, then NEW_FIRST), read by results__finding_row, written as JSON by
 * results__finding_json: one reader (query.c) and one serializer (report.c) of a finding.
 * FINDING_ROW_PAGE adds what the HTML page shows: the minimized case's reproducer and whether the
 * finding is on the matrix's regression or fixed list. */
#define FINDING_ROW                                                                                \
  "SELECT id, status, class, count, coalesce(smallest_ops, 0), lowering, signature, first_seen,"   \
  " last_seen, repro_runs, repro_hits, coalesce(detail, ''), coalesce(replay, ''),"                \
  " coalesce((SELECT ops FROM cases WHERE cases.id = findings.minimized_case), 0)"
#define FINDING_ROW_ON_LIST(x, y)                                                                  \
  " EXISTS (SELECT 1 FROM finding_configs a JOIN finding_configs b ON b.finding = a.finding"       \
  "  AND b.pipeline = a.pipeline AND b.target = a.target AND b.jit = a.jit"                        \
  "  AND a.llvm_key < b.llvm_key WHERE a.finding = findings.id AND a.reproduces = " #x             \
  "  AND b.reproduces = " #y ")"
#define FINDING_ROW_PAGE                                                                           \
  FINDING_ROW ", coalesce((SELECT mlir FROM cases WHERE cases.id = findings.minimized_case), "     \
              "'')," FINDING_ROW_ON_LIST(0, 1) "," FINDING_ROW_ON_LIST(1, 0) " FROM findings"
#define FINDING_ROW_ONLY FINDING_ROW " FROM findings"
typedef struct FindingRow {
  long long id, count;
  const char *status, *cls, *lowering, *signature, *detail, *replay;
  const char *mlir; /* FINDING_ROW_PAGE: the minimized case's reproducer ("" without one) */
  int smallest_ops, min_ops, repro_runs, repro_hits;
  int regression, fixed; /* FINDING_ROW_PAGE: on the matrix's regression, fixed list */
  double first_seen, last_seen;
} FindingRow;
/* The row st stands on (its strings live until the next step). */
void results__finding_row(sqlite3_stmt *st, FindingRow *r);
/* Its fields as JSON members, without braces: FINDING_JSON_EXPORT ("status": ..., for
 * `db export --json`) or FINDING_JSON_PAGE (the HTML page's data: short keys, compact,
 * safe inside a script element, the page's columns too). */
typedef enum FindingJson { FINDING_JSON_EXPORT, FINDING_JSON_PAGE } FindingJson;
void results__finding_json(const FindingRow *r, FindingJson form, AfBuf *out);
/* s as a JSON string that is safe inside a script element: '<', '>' and '&' escaped too. */
void results__js_str(AfBuf *b, const char *s);
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
