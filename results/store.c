/*
 * store.c: the regression database over SQLite (see store.h, docs/db-schema.md): schema and
 * migrations, opening and closing, runs, and the statement helpers the other files use.
 * Findings are recorded by findings.c, merged by merge.c, queried by query.c; the
 * configuration matrix is matrix.c; exports and the report are report.c.
 */
#define _GNU_SOURCE
#include "store_int.h"

#include <sqlite3.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

sqlite3_stmt *results__cached(Store *s, const char *sql) {
  for (int i = 0; i < STORE_CACHE; i++) {
    if (s->cache[i].sql == sql) {
      sqlite3_reset(s->cache[i].st);
      sqlite3_clear_bindings(s->cache[i].st);
      return s->cache[i].st;
    }
  }
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
    return NULL;
  for (int i = 0; i < STORE_CACHE; i++) {
    if (s->cache[i].sql == NULL) {
      s->cache[i].sql = sql;
      s->cache[i].st = st;
      return st;
    }
  }
  sqlite3_finalize(s->cache[0].st); /* full: reuse the first slot */
  s->cache[0].sql = sql;
  s->cache[0].st = st;
  return st;
}

static const char *const status_names[STORE__NSTATUS] = {"new", "known", "fixed", "wontfix"};

const char *store_status_name(int st) {
  return st >= 0 && st < STORE__NSTATUS ? status_names[st] : "?";
}

int store_status_parse(const char *name) {
  for (int i = 0; i < STORE__NSTATUS; i++)
    if (strcmp(name, status_names[i]) == 0)
      return i;
  return -1;
}

double results__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int results__db_err(Store *s, AfErr *err, const char *what) {
  return af_err_set(err, AF_EIO, "%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

int results__exec(Store *s, const char *sql, AfErr *err) {
  char *msg = NULL;
  if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
    int rc = af_err_set(err, AF_EIO, "%s: %s", s->path, msg ? msg : sqlite3_errmsg(s->db));
    sqlite3_free(msg);
    return rc;
  }
  return 0;
}

/* ---- schema ---- */

static const char schema_v1[] =
    "CREATE TABLE runs(id INTEGER PRIMARY KEY, uuid TEXT NOT NULL UNIQUE, started REAL,"
    " ended REAL, host TEXT, asyncfuzz_version TEXT, tools TEXT, device TEXT, config TEXT,"
    " cases INTEGER NOT NULL DEFAULT 0, seconds REAL);"
    "CREATE TABLE cases(id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, json TEXT NOT NULL,"
    " mlir TEXT, seed TEXT, ops INTEGER);"
    "CREATE TABLE findings(id INTEGER PRIMARY KEY, signature TEXT NOT NULL UNIQUE,"
    " class TEXT NOT NULL, lowering TEXT NOT NULL DEFAULT '', detail TEXT, first_seen REAL,"
    " last_seen REAL, count INTEGER NOT NULL DEFAULT 0, repro_runs INTEGER NOT NULL DEFAULT 0,"
    " repro_hits INTEGER NOT NULL DEFAULT 0, status TEXT NOT NULL DEFAULT 'new',"
    " smallest_case INTEGER REFERENCES cases(id), smallest_ops INTEGER,"
    " minimized_case INTEGER REFERENCES cases(id));"
    "CREATE TABLE occurrences(id INTEGER PRIMARY KEY,"
    " finding INTEGER NOT NULL REFERENCES findings(id), run INTEGER NOT NULL REFERENCES runs(id),"
    " case_seed TEXT NOT NULL, case_id INTEGER REFERENCES cases(id),"
    " lowering TEXT NOT NULL DEFAULT '', lowering_version TEXT NOT NULL DEFAULT '',"
    " pipeline TEXT NOT NULL DEFAULT '', backend TEXT NOT NULL DEFAULT '',"
    " schedule TEXT NOT NULL DEFAULT '', at REAL,"
    " UNIQUE(finding, run, case_seed, lowering, schedule));";

/* migrations[v] takes a database from version v to v + 1 */
static const char *const migrations[] = {
    schema_v1,
    "ALTER TABLE findings ADD COLUMN trace TEXT;"
    "ALTER TABLE findings ADD COLUMN replay TEXT;"
    "ALTER TABLE occurrences ADD COLUMN hits INTEGER NOT NULL DEFAULT 1;"
    "CREATE INDEX occurrences_run ON occurrences(run);"
    "CREATE INDEX findings_status ON findings(status);",
    /* v3: the cases of a run that reached execution (not stopped by a lowering) */
    "ALTER TABLE runs ADD COLUMN executed INTEGER;",
    /* v4: signatures name causes; each occurrence keeps its detailed (victim-level) form, and
     * forms counts them per finding and run (repeats are tallied, not stored one by one).
     * Before v4 a signature was its own detailed form. */
    "ALTER TABLE occurrences ADD COLUMN detailed TEXT;"
    "CREATE TABLE forms(finding INTEGER NOT NULL REFERENCES findings(id),"
    " run INTEGER NOT NULL REFERENCES runs(id), detailed TEXT NOT NULL,"
    " hits INTEGER NOT NULL DEFAULT 0, UNIQUE(finding, run, detailed));"
    "INSERT INTO forms(finding, run, detailed, hits) SELECT o.finding, o.run, f.signature,"
    " sum(o.hits) FROM occurrences o JOIN findings f ON f.id = o.finding"
    " GROUP BY o.finding, o.run;",
    /* v5: the configuration matrix of the mlir-opt lowering. finding_configs: the verdict of a
     * finding's minimized case on each configuration (build, pipeline, target, JIT level);
     * run_configs: the cases a run gave each configuration. */
    "CREATE TABLE finding_configs(finding INTEGER NOT NULL REFERENCES findings(id),"
    " config TEXT NOT NULL, lowering_version TEXT NOT NULL, llvm TEXT NOT NULL,"
    " llvm_key INTEGER NOT NULL, pipeline TEXT NOT NULL, target TEXT NOT NULL,"
    " jit TEXT NOT NULL, class TEXT NOT NULL, signature TEXT NOT NULL,"
    " reproduces INTEGER NOT NULL, run INTEGER REFERENCES runs(id), checked REAL,"
    " UNIQUE(finding, config, lowering_version));"
    "CREATE TABLE run_configs(run INTEGER NOT NULL REFERENCES runs(id), config TEXT NOT NULL,"
    " lowering_version TEXT NOT NULL, cases INTEGER NOT NULL DEFAULT 0,"
    " executed INTEGER NOT NULL DEFAULT 0, failures INTEGER NOT NULL DEFAULT 0,"
    " UNIQUE(run, config, lowering_version));",
    /* v6: a run over time, one row per progress record of its campaign (the report's
     * discovery curve and throughput) */
    "CREATE TABLE progress(run INTEGER NOT NULL REFERENCES runs(id), at REAL NOT NULL,"
    " cases INTEGER NOT NULL, executed INTEGER NOT NULL, failures INTEGER NOT NULL,"
    " findings INTEGER NOT NULL, UNIQUE(run, at));",
    /* v7: where a run's time went (summary.json's "time": seconds per bucket, JSON) */
    "ALTER TABLE runs ADD COLUMN time TEXT;",
    /* v8: a finding's verdict per configuration from several runs: reproduces is STORE_CONF_*
     * (1 reproduces, 0 passes on every run, 2 fails differently, 3 refused by the lowering);
     * before v8, 0 was anything but reproduces */
    "UPDATE finding_configs SET reproduces = CASE WHEN class IN ('lowering_rejected',"
    " 'lowering_unconverted') THEN 3 ELSE 2 END WHERE reproduces = 0 AND class != 'pass';",
};

static int get_version(Store *s, int *v, AfErr *err) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK) {
    int code = sqlite3_errcode(s->db);
    if (code == SQLITE_NOTADB)
      return af_err_set(err, AF_EPARSE, "%s is not an asyncfuzz database (not a SQLite file)",
                        s->path);
    return results__db_err(s, err, "cannot read the schema version");
  }
  int rc = sqlite3_step(st);
  if (rc != SQLITE_ROW) {
    int code = sqlite3_errcode(s->db);
    sqlite3_finalize(st);
    if (code == SQLITE_NOTADB)
      return af_err_set(err, AF_EPARSE, "%s is not an asyncfuzz database (not a SQLite file)",
                        s->path);
    return results__db_err(s, err, "cannot read the schema version");
  }
  *v = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  return 0;
}

static int count_tables(Store *s, int *n) {
  sqlite3_stmt *st;
  *n = 0;
  if (sqlite3_prepare_v2(s->db, "SELECT count(*) FROM sqlite_master WHERE type='table'", -1, &st,
                         NULL) != SQLITE_OK)
    return -1;
  if (sqlite3_step(st) == SQLITE_ROW)
    *n = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  return 0;
}

static int migrate(Store *s, AfErr *err) {
  int rc = results__exec(s, "BEGIN IMMEDIATE", err);
  if (rc)
    return rc;
  int v = 0;
  rc = get_version(s, &v, err);
  if (rc == 0 && v == 0) {
    int n;
    if (count_tables(s, &n) == 0 && n > 0)
      rc = af_err_set(err, AF_EPARSE,
                      "%s is a SQLite database but not an asyncfuzz one (it has tables and no "
                      "asyncfuzz schema version)",
                      s->path);
  }
  if (rc == 0 && v < 0) /* (a version no asyncfuzz writes: another program's, or damage) */
    rc = af_err_set(err, AF_EPARSE, "%s has schema version %d, which no asyncfuzz writes", s->path,
                    v);
  if (rc == 0 && v > STORE_SCHEMA_VERSION)
    rc = af_err_set(err, AF_EPARSE,
                    "%s has schema version %d, newer than this asyncfuzz knows (%d): use a newer "
                    "asyncfuzz",
                    s->path, v, STORE_SCHEMA_VERSION);
  for (; rc == 0 && v < STORE_SCHEMA_VERSION; v++) {
    rc = results__exec(s, migrations[v], err);
    if (rc == 0) {
      char sql[64];
      snprintf(sql, sizeof sql, "PRAGMA user_version=%d", v + 1);
      rc = results__exec(s, sql, err);
    }
  }
  if (rc) {
    results__exec(s, "ROLLBACK", NULL);
    return rc;
  }
  s->version = v;
  return results__exec(s, "COMMIT", err);
}

static int open_raw(const char *path, int create, Store **out, AfErr *err) {
  *out = NULL;
  Store *s = af_calloc(1, sizeof *s);
  if (s == NULL)
    return af_err_set(err, AF_ENOMEM, "out of memory");
  snprintf(s->path, sizeof s->path, "%s", path);
  int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK) {
    int rc = af_err_set(err, AF_EIO, "cannot open %s: %s", path,
                        s->db ? sqlite3_errmsg(s->db) : "out of memory");
    sqlite3_close(s->db);
    af_free(s);
    return rc;
  }
  sqlite3_busy_timeout(s->db, 30000);
  *out = s;
  return 0;
}

int store_open(const char *path, int create, Store **out, AfErr *err) {
  Store *s;
  int rc = open_raw(path, create, &s, err);
  if (rc)
    return rc;
  int v;
  rc = get_version(s, &v, err); /* refuses a file that is not a database before anything else */
  if (rc == 0)
    rc = results__exec(
        s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON", err);
  if (rc == 0)
    rc = migrate(s, err);
  if (rc) {
    store_close(s);
    return rc;
  }
  *out = s;
  return 0;
}

int store_create_v1(const char *path, AfErr *err) {
  Store *s;
  int rc = open_raw(path, 1, &s, err);
  if (rc)
    return rc;
  rc = results__exec(s, "BEGIN", err);
  if (rc == 0)
    rc = results__exec(s, schema_v1, err);
  if (rc == 0)
    rc = results__exec(s, "PRAGMA user_version=1; COMMIT", err);
  store_close(s);
  return rc;
}

void store_close(Store *s) {
  if (s == NULL)
    return;
  for (int i = 0; i < STORE_CACHE; i++)
    if (s->cache[i].st)
      sqlite3_finalize(s->cache[i].st);
  sqlite3_close(s->db);
  af_free(s);
}

int store_version(Store *s) {
  return s->version;
}

void results__bind_text(sqlite3_stmt *st, int i, const char *t) {
  if (t)
    sqlite3_bind_text(st, i, t, -1, SQLITE_TRANSIENT);
  else
    sqlite3_bind_null(st, i);
}

void store_run_init(StoreRun *r) {
  memset(r, 0, sizeof *r);
  AfRng ur;
  af_rng_seed(&ur, af_mix64((uint64_t)time(NULL), (uint64_t)getpid() * 7919u + (uint64_t)clock()));
  snprintf(r->uuid, sizeof r->uuid, "%016llx%016llx", (unsigned long long)af_rng_next(&ur),
           (unsigned long long)af_rng_next(&ur));
  if (gethostname(r->host, sizeof r->host - 1) != 0)
    snprintf(r->host, sizeof r->host, "unknown");
  snprintf(r->version, sizeof r->version, "%s", ASYNCFUZZ_VERSION);
}

int store_run_begin(Store *s, StoreRun *r, int64_t *id, AfErr *err) {
  if (r->started == 0)
    r->started = results__now();
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db,
                         "INSERT INTO runs(uuid, started, host, asyncfuzz_version, tools, device,"
                         " config) VALUES(?,?,?,?,?,?,?)",
                         -1, &st, NULL) != SQLITE_OK)
    return results__db_err(s, err, "cannot record the run");
  results__bind_text(st, 1, r->uuid);
  sqlite3_bind_double(st, 2, r->started);
  results__bind_text(st, 3, r->host);
  results__bind_text(st, 4, r->version);
  results__bind_text(st, 5, r->tools);
  results__bind_text(st, 6, r->device);
  results__bind_text(st, 7, r->config);
  int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : results__db_err(s, err, "cannot record the run");
  sqlite3_finalize(st);
  *id = sqlite3_last_insert_rowid(s->db);
  return rc;
}

int store_run_end(Store *s, int64_t id, long cases, long executed, double seconds, AfErr *err) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db,
                         "UPDATE runs SET ended=?, cases=cases+?, seconds=?,"
                         " executed=CASE WHEN ? < 0 THEN executed ELSE coalesce(executed, 0)+? END"
                         " WHERE id=?",
                         -1, &st, NULL) != SQLITE_OK)
    return results__db_err(s, err, "cannot end the run");
  sqlite3_bind_double(st, 1, results__now());
  sqlite3_bind_int64(st, 2, cases);
  sqlite3_bind_double(st, 3, seconds);
  sqlite3_bind_int64(st, 4, executed);
  sqlite3_bind_int64(st, 5, executed);
  sqlite3_bind_int64(st, 6, id);
  int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : results__db_err(s, err, "cannot end the run");
  sqlite3_finalize(st);
  return rc;
}

int store_run_time(Store *s, int64_t id, const char *json, AfErr *err) {
  static const char sql[] = "UPDATE runs SET time = ? WHERE id = ?";
  if (results__run1(s, sql, "ti", json, id) != SQLITE_DONE)
    return results__db_err(s, err, "cannot store where the run's time went");
  return 0;
}

int store_progress(Store *s, int64_t run, const StoreProgress *p, int n, AfErr *err) {
  int rc = results__exec(s, "SAVEPOINT progress", err);
  if (rc)
    return rc;
  static const char del[] = "DELETE FROM progress WHERE run = ?";
  static const char ins[] = "INSERT INTO progress(run, at, cases, executed, failures, findings)"
                            " VALUES(?, ?, ?, ?, ?, ?) ON CONFLICT(run, at) DO NOTHING";
  if (results__run1(s, del, "i", run) != SQLITE_DONE)
    rc = results__db_err(s, err, "cannot store the run's progress");
  for (int i = 0; i < n && rc == 0; i++)
    if (results__run1(s, ins, "idiiii", run, p[i].at, (int64_t)p[i].cases, (int64_t)p[i].executed,
                      (int64_t)p[i].failures, (int64_t)p[i].findings) != SQLITE_DONE)
      rc = results__db_err(s, err, "cannot store the run's progress");
  if (rc) {
    results__exec(s, "ROLLBACK TO progress", NULL);
    results__exec(s, "RELEASE progress", NULL);
    return rc;
  }
  return results__exec(s, "RELEASE progress", err);
}

/* Runs one statement with text/int64 parameters given as a format: 't' text, 'i' int64,
 * 'd' double, 'n' null. Returns the sqlite3_step result. */
int results__run1(Store *s, const char *sql, const char *types, ...) {
  sqlite3_stmt *st = results__cached(s, sql);
  if (st == NULL)
    return SQLITE_ERROR;
  va_list ap;
  va_start(ap, types);
  for (int i = 0; types[i]; i++) {
    if (types[i] == 't')
      results__bind_text(st, i + 1, va_arg(ap, const char *));
    else if (types[i] == 'i')
      sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
    else if (types[i] == 'd')
      sqlite3_bind_double(st, i + 1, va_arg(ap, double));
    else
      sqlite3_bind_null(st, i + 1);
  }
  va_end(ap);
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  return rc;
}

/* ---- queries ---- */
