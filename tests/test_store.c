/*
 * test_store.c: the regression database: migrations (an empty file, a version-1 database
 * with data), refusal of files that are not asyncfuzz databases, recording and tallying,
 * metacharacters stored verbatim and escaped in reports, idempotent merges.
 */
#include "../results/store.h"
#include "test.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/asyncfuzz-test-store-XXXXXX";

static void path(char *out, size_t n, const char *name) {
  snprintf(out, n, "%s/%s", dir, name);
}

static void sql(const char *file, const char *q) {
  sqlite3 *db;
  CHECK_EQ(sqlite3_open(file, &db), SQLITE_OK);
  char *msg = NULL;
  if (sqlite3_exec(db, q, NULL, NULL, &msg) != SQLITE_OK) {
    fprintf(stderr, "sql: %s\n", msg);
    CHECK(0);
  }
  sqlite3_free(msg);
  sqlite3_close(db);
}

/* Every row of every table, in a canonical order, as text. */
static char *dump(const char *file) {
  sqlite3 *db;
  CHECK_EQ(sqlite3_open(file, &db), SQLITE_OK);
  static const char *const q[] = {
      "SELECT uuid, started, ended, host, cases, executed FROM runs ORDER BY uuid",
      "SELECT hash, json, ops FROM cases ORDER BY hash",
      "SELECT signature, class, status, count, smallest_ops, repro_runs, repro_hits, first_seen,"
      " last_seen FROM findings ORDER BY signature",
      "SELECT f.signature, r.uuid, o.case_seed, o.lowering, o.schedule, o.hits FROM occurrences o"
      " JOIN findings f ON f.id = o.finding JOIN runs r ON r.id = o.run ORDER BY 1, 2, 3, 4, 5",
      "SELECT 'form', f.signature, r.uuid, x.detailed, x.hits FROM forms x"
      " JOIN findings f ON f.id = x.finding JOIN runs r ON r.id = x.run ORDER BY 2, 3, 4"};
  AfBuf b;
  af_buf_init(&b);
  for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
    sqlite3_stmt *st;
    CHECK_EQ(sqlite3_prepare_v2(db, q[i], -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
      for (int c = 0; c < sqlite3_column_count(st); c++) {
        const unsigned char *t = sqlite3_column_text(st, c);
        af_buf_printf(&b, "%s|", t ? (const char *)t : "NULL");
      }
      af_buf_puts(&b, "\n");
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return af_buf_take(&b);
}

static const char *detailed; /* the detailed form record() gives (NULL: none) */

static void record(Store *s, int64_t run, const char *sig, uint64_t seed, int ops,
                   const char *detail, int *is_new) {
  char json[128];
  snprintf(json, sizeof json, "{\"case\": %llu, \"ops\": %d}\n", (unsigned long long)seed, ops);
  StoreOccurrence o = {0};
  o.signature = sig;
  o.cls = "race";
  o.lowering = "builtin:fault=x";
  o.detail = detail;
  o.detailed = detailed;
  o.lowering_version = "v1";
  o.backend = "sim";
  o.schedule = "lazy@1";
  o.case_seed = seed;
  o.case_ops = ops;
  o.case_json = json;
  o.replay = "asyncfuzz check case.json";
  o.repro_runs = 5;
  o.repro_hits = 4;
  int status;
  AfErr err = {0};
  CHECK_EQ(store_record(s, run, &o, is_new, &status, &err), 0);
}

static int64_t begin_run(Store *s, const char *uuid) {
  StoreRun r;
  memset(&r, 0, sizeof r);
  snprintf(r.uuid, sizeof r.uuid, "%s", uuid);
  snprintf(r.host, sizeof r.host, "test-host");
  int64_t id = 0;
  AfErr err = {0};
  CHECK_EQ(store_run_begin(s, &r, &id, &err), 0);
  CHECK_EQ(store_run_end(s, id, 100, 90, 2.0, &err), 0);
  return id;
}

static void migrations(void) {
  char p[256];
  AfErr err = {0};
  Store *s;
  /* an empty (new) file */
  path(p, sizeof p, "empty.db");
  CHECK_EQ(store_open(p, 1, &s, &err), 0);
  CHECK_EQ(store_version(s), STORE_SCHEMA_VERSION);
  store_close(s);
  /* a version-1 database with a finding and an occurrence */
  path(p, sizeof p, "v1.db");
  CHECK_EQ(store_create_v1(p, &err), 0);
  sql(p, "INSERT INTO runs(uuid, started, cases) VALUES('old-run', 1.0, 7);"
         "INSERT INTO findings(signature, class, lowering, count, status)"
         " VALUES('old|race|x', 'race', 'builtin', 1, 'known');"
         "INSERT INTO occurrences(finding, run, case_seed) VALUES(1, 1, '42');");
  CHECK_EQ(store_open(p, 0, &s, &err), 0);
  CHECK_EQ(store_version(s), STORE_SCHEMA_VERSION);
  int st = -1;
  CHECK_EQ(store_finding_status(s, "old|race|x", &st, &err), 0);
  CHECK_EQ(st, STORE_KNOWN); /* the data survived */
  /* the new columns work: a tally on the old finding, a new finding with its trace */
  int64_t run = begin_run(s, "new-run");
  StoreTally t = {"old|race|x", "builtin", "v", "", "sim", NULL, 3};
  CHECK_EQ(store_tally(s, run, &t, 1, &err), 0);
  int is_new;
  record(s, run, "new|race|y", 9, 12, "d", &is_new);
  CHECK_EQ(is_new, 1);
  AfBuf b;
  af_buf_init(&b);
  CHECK_EQ(store_list(s, NULL, &b, &err), 0);
  CHECK_CONTAINS(b.p, "old|race|x");
  CHECK_CONTAINS(b.p, "new|race|y");
  af_buf_free(&b);
  store_close(s);
  char *d = dump(p);
  CHECK_CONTAINS(d, "old|race|x|race|known|4|");      /* 1 occurrence + 3 tallied */
  CHECK_CONTAINS(d, "old-run|1.0|NULL|NULL|7|NULL|"); /* v3: an old run's executed is unknown */
  CHECK_CONTAINS(d, "|test-host|100|90|");            /* a new run's is kept */
  /* v4: an old occurrence's detailed form is its signature (signatures named victims then) */
  CHECK_CONTAINS(d, "form|old|race|x|old-run|old|race|x|1|");
  CHECK_CONTAINS(d, "form|old|race|x|new-run|old|race|x|3|");
  af_free(d);
  /* reopening migrates nothing more */
  CHECK_EQ(store_open(p, 0, &s, &err), 0);
  CHECK_EQ(store_version(s), STORE_SCHEMA_VERSION);
  store_close(s);
  printf("migrations: empty -> %d, v1 with data -> %d\n", STORE_SCHEMA_VERSION,
         STORE_SCHEMA_VERSION);
}

static void refusals(void) {
  char p[256];
  AfErr err = {0};
  Store *s = NULL;
  path(p, sizeof p, "text.db");
  FILE *f = fopen(p, "w");
  fputs("this is not a database, just some text that is long enough to have a header\n", f);
  fclose(f);
  CHECK_EQ(store_open(p, 0, &s, &err), AF_EPARSE);
  CHECK_CONTAINS(err.msg, "is not an asyncfuzz database");
  CHECK(s == NULL);
  path(p, sizeof p, "other.db");
  sql(p, "CREATE TABLE t(x); INSERT INTO t VALUES(1);");
  memset(&err, 0, sizeof err);
  CHECK_EQ(store_open(p, 0, &s, &err), AF_EPARSE);
  CHECK_CONTAINS(err.msg, "a SQLite database but not an asyncfuzz one");
  path(p, sizeof p, "newer.db");
  sql(p, "PRAGMA user_version=99;");
  memset(&err, 0, sizeof err);
  CHECK_EQ(store_open(p, 0, &s, &err), AF_EPARSE);
  CHECK_CONTAINS(err.msg, "newer than this asyncfuzz knows");
  path(p, sizeof p, "missing.db");
  CHECK(store_open(p, 0, &s, &err) != 0);
  CHECK(access(p, F_OK) != 0); /* not created */
}

static void metacharacters(void) {
  char p[256];
  AfErr err = {0};
  Store *s;
  path(p, sizeof p, "meta.db");
  CHECK_EQ(store_open(p, 1, &s, &err), 0);
  int64_t run = begin_run(s, "meta-run");
  const char *sig = "x|race|<script>alert(\"pwned\")</script>'); DROP TABLE findings; --";
  const char *detail = "<b>bold</b> & \"quoted\" 'single' </td></tr></table>";
  int is_new;
  record(s, run, sig, 1, 5, detail, &is_new);
  CHECK_EQ(is_new, 1);
  AfBuf b;
  af_buf_init(&b);
  CHECK_EQ(store_list(s, NULL, &b, &err), 0);
  CHECK_CONTAINS(b.p, sig); /* verbatim */
  af_buf_reset(&b);
  CHECK_EQ(store_show(s, 1, &b, &err), 0);
  CHECK_CONTAINS(b.p, sig);
  CHECK_CONTAINS(b.p, detail);
  af_buf_reset(&b);
  CHECK_EQ(store_report_html(s, &b, &err), 0);
  /* the page's own two script elements (its data, its code), and no other: the findings are
   * JSON in which nothing can end the element */
  int scripts = 0;
  for (const char *q = b.p; (q = strstr(q, "<script")) != NULL; q++)
    scripts++;
  CHECK_EQ(scripts, 2);
  CHECK(strstr(b.p, "<script>alert") == NULL);
  CHECK(strstr(b.p, "<b>bold") == NULL);
  CHECK_CONTAINS(b.p,
                 "\\u003cscript\\u003ealert(\\\"pwned\\\")\\u003c/script\\u003e'); DROP TABLE");
  CHECK_CONTAINS(b.p, "\\u003cb\\u003ebold\\u003c/b\\u003e \\u0026 \\\"quoted\\\"");
  CHECK_CONTAINS(b.p, "<table id=\"findings\">");
  af_buf_reset(&b);
  CHECK_EQ(store_export_junit(s, NULL, &b, &err), 0);
  CHECK(strstr(b.p, "<script>") == NULL);
  CHECK_CONTAINS(b.p, "failures=\"1\"");
  af_buf_reset(&b);
  CHECK_EQ(store_export_json(s, NULL, &b, &err), 0);
  CHECK_CONTAINS(b.p, "alert(\\\"pwned\\\")");
  af_buf_free(&b);
  int st;
  CHECK_EQ(store_finding_status(s, sig, &st, &err), 0); /* the table is still there */
  CHECK_EQ(st, STORE_NEW);
  CHECK_EQ(store_mark(s, 1, STORE_WONTFIX, &err), 0);
  CHECK_EQ(store_finding_status(s, sig, &st, &err), 0);
  CHECK_EQ(st, STORE_WONTFIX);
  CHECK_EQ(store_mark(s, 99, STORE_KNOWN, &err), AF_EINVALID);
  store_close(s);
}

/* Whether the line of text that starts with `start` contains `want`. */
static int line_has(const char *text, const char *start, const char *want) {
  for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    size_t n = strcspn(l, "\n");
    if (strncmp(l, start, strlen(start)) != 0)
      continue;
    char line[1024];
    snprintf(line, sizeof line, "%.*s", (int)n, l);
    return strstr(line, want) != NULL;
  }
  return 0;
}

/* A finding's detailed forms: recorded one by one and tallied, listed by db show. */
static void forms(void) {
  char p[256];
  AfErr err = {0};
  Store *s;
  path(p, sizeof p, "forms.db");
  CHECK_EQ(store_open(p, 1, &s, &err), 0);
  int64_t run = begin_run(s, "run-f");
  int is_new;
  detailed = "x|race|missing-edge|data_race.RAW|launch->launch";
  record(s, run, "x|missing-edge|extra-dep|gpu.launch_func async", 1, 9, "d", &is_new);
  CHECK_EQ(is_new, 1);
  detailed = "x|race|missing-edge|host_read_before_complete|memcpy.D2H->observe";
  record(s, run, "x|missing-edge|extra-dep|gpu.launch_func async", 2, 8, "d", &is_new);
  CHECK_EQ(is_new, 0); /* one finding for both forms */
  detailed = NULL;
  StoreTally t = {"x|missing-edge|extra-dep|gpu.launch_func async",
                  "builtin:fault=x",
                  "v1",
                  "",
                  "sim",
                  "x|race|missing-edge|data_race.RAW|launch->launch",
                  5};
  CHECK_EQ(store_tally(s, run, &t, 1, &err), 0);
  AfBuf b;
  af_buf_init(&b);
  CHECK_EQ(store_show(s, 1, &b, &err), 0);
  CHECK_CONTAINS(b.p, "occurrences: 7 ");
  CHECK_CONTAINS(b.p,
                 "detailed forms (hits, form):\n"
                 "         6  x|race|missing-edge|data_race.RAW|launch->launch\n"
                 "         1  x|race|missing-edge|host_read_before_complete|memcpy.D2H->observe\n");
  af_buf_free(&b);
  store_close(s);
  char *d = dump(p);
  /* each occurrence recorded one by one keeps its form */
  sqlite3 *db;
  CHECK_EQ(sqlite3_open(p, &db), SQLITE_OK);
  sqlite3_stmt *st;
  CHECK_EQ(sqlite3_prepare_v2(db, "SELECT detailed FROM occurrences WHERE case_seed = '2'", -1, &st,
                              NULL),
           SQLITE_OK);
  CHECK_EQ(sqlite3_step(st), SQLITE_ROW);
  CHECK_STR((const char *)sqlite3_column_text(st, 0),
            "x|race|missing-edge|host_read_before_complete|memcpy.D2H->observe");
  sqlite3_finalize(st);
  sqlite3_close(db);
  af_free(d);
  printf("forms: two detailed forms under one finding, counted\n");
}

static void merge(void) {
  char a[256], c[256];
  AfErr err = {0};
  Store *s;
  path(a, sizeof a, "runner-a.db");
  CHECK_EQ(store_open(a, 1, &s, &err), 0);
  int64_t run = begin_run(s, "run-a");
  int is_new;
  record(s, run, "m|race|one", 1, 30, "d1", &is_new);
  record(s, run, "m|race|one", 2, 12, "d1", &is_new); /* a smaller case */
  detailed = "m|race|victims-a";
  record(s, run, "m|lifetime|two", 3, 20, "d2", &is_new);
  detailed = NULL;
  StoreTally t = {"m|race|one", "builtin:fault=x", "v1", "", "sim", NULL, 40};
  CHECK_EQ(store_tally(s, run, &t, 1, &err), 0);
  store_close(s);
  path(c, sizeof c, "central.db");
  CHECK_EQ(store_open(c, 1, &s, &err), 0);
  int64_t run2 = begin_run(s, "run-c");
  record(s, run2, "m|race|one", 7, 25, "d1", &is_new);
  CHECK_EQ(store_mark(s, 1, STORE_KNOWN, &err), 0);
  CHECK_EQ(store_merge(s, a, &err), 0);
  store_close(s);
  char *once = dump(c);
  CHECK_EQ(store_open(c, 0, &s, &err), 0);
  CHECK_EQ(store_merge(s, a, &err), 0);
  store_close(s);
  char *twice = dump(c);
  CHECK_STR(twice, once);
  /* m|race|one: 1 (central) + 2 exact + 40 tallied; its smallest case is runner a's */
  CHECK_CONTAINS(once, "m|race|one|race|known|43|12|");
  CHECK_CONTAINS(once, "m|lifetime|two|race|new|1|20|");
  CHECK_CONTAINS(once, "form|m|lifetime|two|run-a|m|race|victims-a|1|");
  CHECK_CONTAINS(once, "form|m|race|one|run-a|m|race|one|42|");
  /* both runs, with how many of their cases reached execution */
  CHECK(line_has(once, "run-a|", "|test-host|100|90|"));
  CHECK(line_has(once, "run-c|", "|test-host|100|90|"));
  /* merging a database into itself changes nothing either */
  CHECK_EQ(store_open(c, 0, &s, &err), 0);
  CHECK_EQ(store_merge(s, c, &err), 0);
  store_close(s);
  char *self = dump(c);
  CHECK_STR(self, once);
  af_free(once);
  af_free(twice);
  af_free(self);
  printf("merge: twice gives the same database\n");
}

/* A finding's verdict per configuration: stored, shown, listed as a regression (present in a
 * newer LLVM release, absent in an older one on the same pipeline, target and level) or as
 * fixed (the reverse), merged, and the cases per configuration in the report. */
static void matrix(void) {
  char a[256], c[256];
  AfErr err = {0};
  Store *s;
  path(a, sizeof a, "matrix-a.db");
  CHECK_EQ(store_open(a, 1, &s, &err), 0);
  int64_t run = begin_run(s, "run-m");
  int is_new;
  record(s, run, "mlir-opt|reg|x", 1, 5, "d", &is_new);
  record(s, run, "mlir-opt|fix|y", 2, 5, "d", &is_new);
  record(s, run, "mlir-opt|all|z", 3, 5, "d", &is_new);
  record(s, run, "mlir-opt|diff|w", 4, 5, "d", &is_new);
  /* x: on 22.1.8 only (a regression, 9.0.0 < 19.1.7 < 22.1.8 as numbers); y: on 19.1.7
   * only, of the default pipeline, and passes every run on 22.1.8 (fixed); z: everywhere; w: on
   * 19.1.7, failing differently on 22.1.8 (not fixed) */
  StoreConfigVerdict v[] = {
      {"mlir-opt-22.1.8", "LLVM 22.1.8", "22.1.8", "default", "nvvm", "O0", "reg", "mlir-opt|reg|x",
       1},
      {"mlir-opt-19.1.7", "LLVM 19.1.7", "19.1.7", "default", "nvvm", "O0", "pass", "", 0},
      {"mlir-opt-9.0.0", "LLVM 9.0.0", "9.0.0", "default", "nvvm", "O0", "pass", "", 0},
  };
  CHECK_EQ(store_set_configs(s, "mlir-opt|reg|x", run, v, 3, &err), 0);
  StoreConfigVerdict w[] = {
      {"mlir-opt-22.1.8", "LLVM 22.1.8", "22.1.8", "default", "nvvm", "O0", "pass", "",
       STORE_CONF_PASSES},
      {"mlir-opt-19.1.7", "LLVM 19.1.7", "19.1.7", "default", "nvvm", "O0", "fix", "mlir-opt|fix|y",
       1},
      {"mlir-opt-22.1.8@async-region", "LLVM 22.1.8", "22.1.8", "async-region", "nvvm", "O0", "fix",
       "mlir-opt|fix|y", 1},
  };
  CHECK_EQ(store_set_configs(s, "mlir-opt|fix|y", run, w, 3, &err), 0);
  StoreConfigVerdict z[] = {
      {"mlir-opt-22.1.8", "LLVM 22.1.8", "22.1.8", "default", "nvvm", "O0", "all", "mlir-opt|all|z",
       1},
      {"mlir-opt-19.1.7", "LLVM 19.1.7", "19.1.7", "default", "nvvm", "O0", "all", "mlir-opt|all|z",
       1},
  };
  CHECK_EQ(store_set_configs(s, "mlir-opt|all|z", run, z, 2, &err), 0);
  StoreConfigVerdict d[] = {
      {"mlir-opt-22.1.8", "LLVM 22.1.8", "22.1.8", "default", "nvvm", "O0", "other",
       "mlir-opt|other|q", STORE_CONF_DIFFERS},
      {"mlir-opt-19.1.7", "LLVM 19.1.7", "19.1.7", "default", "nvvm", "O0", "diff",
       "mlir-opt|diff|w", STORE_CONF_REPRODUCES},
  };
  CHECK_EQ(store_set_configs(s, "mlir-opt|diff|w", run, d, 2, &err), 0);
  CHECK_EQ(store_set_configs(s, "mlir-opt|none", run, z, 2, &err), AF_EINVALID);
  af_err_clear(&err);
  StoreConfigCount cc[] = {{"mlir-opt-22.1.8", "LLVM 22.1.8", 64, 3, 60},
                           {"mlir-opt-19.1.7", "LLVM 19.1.7", 48, 2, 45}};
  CHECK_EQ(store_config_counts(s, run, cc, 2, &err), 0);
  CHECK_EQ(store_config_counts(s, run, cc, 1, &err), 0); /* added: 128 cases */
  AfBuf b;
  af_buf_init(&b);
  CHECK_EQ(store_list_versions(s, NULL, 0, &b, &err), 0);
  CHECK_CONTAINS(b.p, "mlir-opt|reg|x");
  CHECK_CONTAINS(b.p, "9.0.0 -> 22.1.8, 19.1.7 -> 22.1.8 (1 config)");
  CHECK(strstr(b.p, "mlir-opt|fix|y") == NULL && strstr(b.p, "mlir-opt|all|z") == NULL);
  CHECK_CONTAINS(b.p, "1 finding(s) new in a newer LLVM release");
  af_buf_free(&b);
  af_buf_init(&b);
  CHECK_EQ(store_list_versions(s, NULL, 1, &b, &err), 0);
  CHECK_CONTAINS(b.p, "19.1.7 -> 22.1.8 (1 config)  mlir-opt|fix|y");
  CHECK(strstr(b.p, "mlir-opt|reg|x") == NULL && strstr(b.p, "mlir-opt|all|z") == NULL);
  /* failing differently on the newer release is not fixed: listed apart */
  CHECK_CONTAINS(b.p, "1 finding(s) gone in");
  CHECK_CONTAINS(b.p, "\nnot fixed: 1 finding(s)");
  CHECK(strstr(b.p, "mlir-opt|diff|w") > strstr(b.p, "\nnot fixed: 1 finding(s)"));
  af_buf_free(&b);
  af_buf_init(&b);
  CHECK_EQ(store_show_configs(s, 2, &b, &err), 0);
  CHECK_CONTAINS(b.p, "reproduces on 2 of 3");
  CHECK_CONTAINS(b.p, "22.1.8     default       nvvm   O0        passes\n");
  af_buf_free(&b);
  af_buf_init(&b);
  CHECK_EQ(store_show_configs(s, 4, &b, &err), 0);
  CHECK_CONTAINS(b.p, "fails differently: mlir-opt|other|q");
  af_buf_free(&b);
  af_buf_init(&b);
  CHECK_EQ(store_report_html(s, &b, &err), 0);
  CHECK_CONTAINS(b.p, "<table id=\"regressions\">");
  CHECK_CONTAINS(b.p, "<td>mlir-opt-22.1.8</td><td>LLVM 22.1.8</td><td>128</td><td>6</td>");
  af_buf_free(&b);
  store_close(s);
  /* merged into another database (twice: the same), the matrix comes along */
  path(c, sizeof c, "matrix-c.db");
  CHECK_EQ(store_open(c, 1, &s, &err), 0);
  CHECK_EQ(store_merge(s, a, &err), 0);
  store_close(s);
  char *once = dump(c);
  CHECK_EQ(store_open(c, 0, &s, &err), 0);
  CHECK_EQ(store_merge(s, a, &err), 0);
  af_buf_init(&b);
  CHECK_EQ(store_list_versions(s, NULL, 0, &b, &err), 0);
  CHECK_CONTAINS(b.p, "mlir-opt|reg|x");
  af_buf_free(&b);
  store_close(s);
  char *twice = dump(c);
  CHECK_STR(twice, once);
  af_free(once);
  af_free(twice);
  printf("matrix: regressions, fixes, show, report and merge\n");
}

int main(void) {
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  migrations();
  matrix();
  refusals();
  metacharacters();
  forms();
  merge();
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0)
    fprintf(stderr, "could not remove %s\n", dir);
  return TEST_DONE("test_store");
}
