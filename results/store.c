/*
 * store.c: the regression database over SQLite (see store.h, docs/db-schema.md): schema and
 * migrations, recording, merging and queries. Exports and the report are in report.c.
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

static sqlite3_stmt *cached(Store *s, const char *sql) {
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

static double now_unix(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int results__db_err(Store *s, AfErr *err, const char *what) {
  return af_err_set(err, AF_EIO, "%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

static int exec(Store *s, const char *sql, AfErr *err) {
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
};

/* Counts hits of a detailed form of finding fid in run `run`. */
static int add_form(Store *s, int64_t fid, int64_t run, const char *detailed, int64_t hits);

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
  int rc = exec(s, "BEGIN IMMEDIATE", err);
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
  if (rc == 0 && v > STORE_SCHEMA_VERSION)
    rc = af_err_set(err, AF_EPARSE,
                    "%s has schema version %d, newer than this asyncfuzz knows (%d): use a newer "
                    "asyncfuzz",
                    s->path, v, STORE_SCHEMA_VERSION);
  for (; rc == 0 && v < STORE_SCHEMA_VERSION; v++) {
    rc = exec(s, migrations[v], err);
    if (rc == 0) {
      char sql[64];
      snprintf(sql, sizeof sql, "PRAGMA user_version=%d", v + 1);
      rc = exec(s, sql, err);
    }
  }
  if (rc) {
    exec(s, "ROLLBACK", NULL);
    return rc;
  }
  s->version = v;
  return exec(s, "COMMIT", err);
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
    rc = exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON", err);
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
  rc = exec(s, "BEGIN", err);
  if (rc == 0)
    rc = exec(s, schema_v1, err);
  if (rc == 0)
    rc = exec(s, "PRAGMA user_version=1; COMMIT", err);
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

/* ---- writing ---- */

static void bind_text(sqlite3_stmt *st, int i, const char *t) {
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
    r->started = now_unix();
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db,
                         "INSERT INTO runs(uuid, started, host, asyncfuzz_version, tools, device,"
                         " config) VALUES(?,?,?,?,?,?,?)",
                         -1, &st, NULL) != SQLITE_OK)
    return results__db_err(s, err, "cannot record the run");
  bind_text(st, 1, r->uuid);
  sqlite3_bind_double(st, 2, r->started);
  bind_text(st, 3, r->host);
  bind_text(st, 4, r->version);
  bind_text(st, 5, r->tools);
  bind_text(st, 6, r->device);
  bind_text(st, 7, r->config);
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
  sqlite3_bind_double(st, 1, now_unix());
  sqlite3_bind_int64(st, 2, cases);
  sqlite3_bind_double(st, 3, seconds);
  sqlite3_bind_int64(st, 4, executed);
  sqlite3_bind_int64(st, 5, executed);
  sqlite3_bind_int64(st, 6, id);
  int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : results__db_err(s, err, "cannot end the run");
  sqlite3_finalize(st);
  return rc;
}

int store_finding_status(Store *s, const char *signature, int *status, AfErr *err) {
  sqlite3_stmt *st;
  *status = -1;
  if (sqlite3_prepare_v2(s->db, "SELECT status FROM findings WHERE signature=?", -1, &st, NULL) !=
      SQLITE_OK)
    return results__db_err(s, err, "cannot look a finding up");
  bind_text(st, 1, signature);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    *status = store_status_parse((const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE
             ? 0
             : results__db_err(s, err, "cannot look a finding up");
}

int store_each_triaged(Store *s, void (*fn)(const char *signature, const char *cls, void *ctx),
                       void *ctx, AfErr *err) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db,
                         "SELECT signature, class FROM findings WHERE status IN ('known', "
                         "'wontfix') ORDER BY id",
                         -1, &st, NULL) != SQLITE_OK)
    return results__db_err(s, err, "cannot list the triaged findings");
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const unsigned char *sig = sqlite3_column_text(st, 0), *cls = sqlite3_column_text(st, 1);
    fn(sig ? (const char *)sig : "", cls ? (const char *)cls : "", ctx);
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? 0 : results__db_err(s, err, "cannot list the triaged findings");
}

/* Runs one statement with text/int64 parameters given as a format: 't' text, 'i' int64,
 * 'd' double, 'n' null. Returns the sqlite3_step result. */
static int run1(Store *s, const char *sql, const char *types, ...) {
  sqlite3_stmt *st = cached(s, sql);
  if (st == NULL)
    return SQLITE_ERROR;
  va_list ap;
  va_start(ap, types);
  for (int i = 0; types[i]; i++) {
    if (types[i] == 't')
      bind_text(st, i + 1, va_arg(ap, const char *));
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

int store_record(Store *s, int64_t run, const StoreOccurrence *o, int *is_new, int *status,
                 AfErr *err) {
  *is_new = 0;
  *status = STORE_NEW;
  int rc;
  if (run1(s, "BEGIN IMMEDIATE", "") != SQLITE_DONE)
    return results__db_err(s, err, "cannot record a finding");
  double t = now_unix();
  int64_t fid = -1, smallest = -1;
  sqlite3_stmt *st = cached(s, "SELECT id, status, coalesce(smallest_ops, -1) FROM findings "
                               "WHERE signature=?");
  if (st == NULL)
    goto fail;
  bind_text(st, 1, o->signature);
  if (sqlite3_step(st) == SQLITE_ROW) {
    fid = sqlite3_column_int64(st, 0);
    *status = store_status_parse((const char *)sqlite3_column_text(st, 1));
    smallest = sqlite3_column_int64(st, 2);
  }
  sqlite3_reset(st);
  if (fid < 0) {
    if (run1(s,
             "INSERT INTO findings(signature, class, lowering, detail, first_seen, last_seen,"
             " repro_runs, repro_hits, trace, replay) VALUES(?,?,?,?,?,?,?,?,?,?)",
             "ttttddiitt", o->signature, o->cls, o->lowering ? o->lowering : "", o->detail, t, t,
             (int64_t)o->repro_runs, (int64_t)o->repro_hits, o->trace, o->replay) != SQLITE_DONE)
      goto fail;
    fid = sqlite3_last_insert_rowid(s->db);
    *is_new = 1;
  }
  int64_t case_id = -1;
  if (o->case_json && (smallest < 0 || o->case_ops < smallest)) {
    char hash[32];
    snprintf(hash, sizeof hash, "%016llx",
             (unsigned long long)af_hash64(o->case_json, strlen(o->case_json)));
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->case_seed);
    if (run1(s, "INSERT OR IGNORE INTO cases(hash, json, mlir, seed, ops) VALUES(?,?,?,?,?)",
             "tttti", hash, o->case_json, o->case_mlir, seed, (int64_t)o->case_ops) != SQLITE_DONE)
      goto fail;
    if (sqlite3_prepare_v2(s->db, "SELECT id FROM cases WHERE hash=?", -1, &st, NULL) != SQLITE_OK)
      goto fail;
    bind_text(st, 1, hash);
    if (sqlite3_step(st) == SQLITE_ROW)
      case_id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    /* the replay command follows the smallest case */
    if (case_id >= 0 && run1(s,
                             "UPDATE findings SET smallest_case=?, smallest_ops=?,"
                             " replay=coalesce(?, replay) WHERE id=?",
                             "iiti", case_id, (int64_t)o->case_ops, o->replay, fid) != SQLITE_DONE)
      goto fail;
  }
  char seed[32];
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->case_seed);
  const char *detailed = o->detailed && *o->detailed ? o->detailed : o->signature;
  int r = case_id >= 0
              ? run1(s,
                     "INSERT OR IGNORE INTO occurrences(finding, run, case_seed, case_id,"
                     " lowering, lowering_version, pipeline, backend, schedule, at, detailed)"
                     " VALUES(?,?,?,?,?,?,?,?,?,?,?)",
                     "iititttttdt", fid, run, seed, case_id, o->lowering ? o->lowering : "",
                     o->lowering_version ? o->lowering_version : "", o->pipeline ? o->pipeline : "",
                     o->backend ? o->backend : "", o->schedule ? o->schedule : "", t, detailed)
              : run1(s,
                     "INSERT OR IGNORE INTO occurrences(finding, run, case_seed, lowering,"
                     " lowering_version, pipeline, backend, schedule, at, detailed)"
                     " VALUES(?,?,?,?,?,?,?,?,?,?)",
                     "iittttttdt", fid, run, seed, o->lowering ? o->lowering : "",
                     o->lowering_version ? o->lowering_version : "", o->pipeline ? o->pipeline : "",
                     o->backend ? o->backend : "", o->schedule ? o->schedule : "", t, detailed);
  if (r != SQLITE_DONE)
    goto fail;
  int added = sqlite3_changes(s->db);
  if (added && add_form(s, fid, run, detailed, added) != SQLITE_DONE)
    goto fail;
  if (run1(s,
           "UPDATE findings SET count=count+?, last_seen=max(coalesce(last_seen, 0), ?) "
           "WHERE id=?",
           "idi", (int64_t)added, t, fid) != SQLITE_DONE)
    goto fail;
  if (run1(s, "COMMIT", "") != SQLITE_DONE)
    goto fail;
  return 0;
fail:
  rc = results__db_err(s, err, "cannot record a finding");
  run1(s, "ROLLBACK", "");
  return rc;
}

static int add_form(Store *s, int64_t fid, int64_t run, const char *detailed, int64_t hits) {
  return run1(s,
              "INSERT INTO forms(finding, run, detailed, hits) VALUES(?,?,?,?)"
              " ON CONFLICT(finding, run, detailed) DO UPDATE SET hits = hits + excluded.hits",
              "iiti", fid, run, detailed, hits);
}

int store_mark(Store *s, int64_t id, int status, AfErr *err) {
  if (run1(s, "UPDATE findings SET status=? WHERE id=?", "ti", store_status_name(status), id) !=
      SQLITE_DONE)
    return results__db_err(s, err, "cannot mark the finding");
  if (sqlite3_changes(s->db) == 0)
    return af_err_set(err, AF_EINVALID, "%s: no finding %lld (see asyncfuzz db list)", s->path,
                      (long long)id);
  return 0;
}

int store_merge(Store *s, const char *other, AfErr *err) {
  char ra[PATH_MAX], rb[PATH_MAX];
  if (realpath(other, ra) && realpath(s->path, rb) && strcmp(ra, rb) == 0)
    return 0; /* a database merged into itself: nothing to do */
  Store *o;
  int rc = store_open(other, 0, &o, err); /* refuses a non-database; brings it up to date */
  if (rc)
    return rc;
  store_close(o);
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db, "ATTACH DATABASE ? AS o", -1, &st, NULL) != SQLITE_OK)
    return results__db_err(s, err, "cannot attach the other database");
  bind_text(st, 1, other);
  rc = sqlite3_step(st) == SQLITE_DONE
           ? 0
           : results__db_err(s, err, "cannot attach the other database");
  sqlite3_finalize(st);
  if (rc)
    return rc;
  static const char merge_sql[] =
      "BEGIN IMMEDIATE;"
      "INSERT OR IGNORE INTO runs(uuid, started, ended, host, asyncfuzz_version, tools, device,"
      " config, cases, seconds, executed) SELECT uuid, started, ended, host, asyncfuzz_version,"
      " tools, device, config, cases, seconds, executed FROM o.runs;"
      "INSERT OR IGNORE INTO cases(hash, json, mlir, seed, ops)"
      " SELECT hash, json, mlir, seed, ops FROM o.cases;"
      "INSERT OR IGNORE INTO findings(signature, class, lowering, detail, first_seen, last_seen,"
      " repro_runs, repro_hits, status, trace, replay) SELECT signature, class, lowering, detail,"
      " first_seen, last_seen, repro_runs, repro_hits, status, trace, replay FROM o.findings;"
      "UPDATE findings SET"
      " first_seen = min(first_seen, (SELECT f.first_seen FROM o.findings f"
      "   WHERE f.signature = findings.signature)),"
      " last_seen = max(last_seen, (SELECT f.last_seen FROM o.findings f"
      "   WHERE f.signature = findings.signature))"
      " WHERE signature IN (SELECT signature FROM o.findings);"
      /* a triage decision wins over `new` */
      "UPDATE findings SET status = (SELECT f.status FROM o.findings f"
      "   WHERE f.signature = findings.signature)"
      " WHERE status = 'new' AND signature IN (SELECT signature FROM o.findings"
      "   WHERE status <> 'new');"
      "UPDATE findings SET repro_runs = (SELECT f.repro_runs FROM o.findings f"
      "   WHERE f.signature = findings.signature), repro_hits = (SELECT f.repro_hits"
      "   FROM o.findings f WHERE f.signature = findings.signature)"
      " WHERE repro_runs = 0 AND signature IN (SELECT signature FROM o.findings"
      "   WHERE repro_runs > 0);"
      /* the smaller smallest case */
      "UPDATE findings SET"
      " smallest_case = (SELECT c.id FROM o.findings f JOIN o.cases oc ON oc.id = f.smallest_case"
      "   JOIN cases c ON c.hash = oc.hash WHERE f.signature = findings.signature),"
      " smallest_ops = (SELECT f.smallest_ops FROM o.findings f"
      "   WHERE f.signature = findings.signature)"
      " WHERE signature IN (SELECT f.signature FROM o.findings f WHERE f.smallest_case IS NOT NULL"
      "   AND (findings.smallest_ops IS NULL OR f.smallest_ops < findings.smallest_ops));"
      "INSERT INTO occurrences(finding, run, case_seed, case_id, lowering,"
      " lowering_version, pipeline, backend, schedule, at, hits, detailed)"
      " SELECT lf.id, lr.id, oc.case_seed, lc.id, oc.lowering, oc.lowering_version, oc.pipeline,"
      "  oc.backend, oc.schedule, oc.at, oc.hits, oc.detailed FROM o.occurrences oc"
      "  JOIN o.findings ofi ON ofi.id = oc.finding"
      "  JOIN findings lf ON lf.signature = ofi.signature"
      "  JOIN o.runs orr ON orr.id = oc.run JOIN runs lr ON lr.uuid = orr.uuid"
      "  LEFT JOIN o.cases occ ON occ.id = oc.case_id LEFT JOIN cases lc ON lc.hash = occ.hash"
      "  WHERE 1"
      " ON CONFLICT(finding, run, case_seed, lowering, schedule) DO UPDATE SET"
      "  hits = max(hits, excluded.hits);"
      /* a run's forms are whole in each database that holds the run: keep the larger count */
      "INSERT INTO forms(finding, run, detailed, hits)"
      " SELECT lf.id, lr.id, ofo.detailed, ofo.hits FROM o.forms ofo"
      "  JOIN o.findings ofi ON ofi.id = ofo.finding"
      "  JOIN findings lf ON lf.signature = ofi.signature"
      "  JOIN o.runs orr ON orr.id = ofo.run JOIN runs lr ON lr.uuid = orr.uuid"
      "  WHERE 1"
      " ON CONFLICT(finding, run, detailed) DO UPDATE SET hits = max(hits, excluded.hits);"
      /* a finding's matrix: the newer check of each configuration */
      "INSERT INTO finding_configs(finding, config, lowering_version, llvm, llvm_key, pipeline,"
      " target, jit, class, signature, reproduces, run, checked)"
      " SELECT lf.id, ofc.config, ofc.lowering_version, ofc.llvm, ofc.llvm_key, ofc.pipeline,"
      "  ofc.target, ofc.jit, ofc.class, ofc.signature, ofc.reproduces, lr.id, ofc.checked"
      "  FROM o.finding_configs ofc JOIN o.findings ofi ON ofi.id = ofc.finding"
      "  JOIN findings lf ON lf.signature = ofi.signature"
      "  LEFT JOIN o.runs orr ON orr.id = ofc.run LEFT JOIN runs lr ON lr.uuid = orr.uuid"
      "  WHERE 1"
      " ON CONFLICT(finding, config, lowering_version) DO UPDATE SET class = excluded.class,"
      "  signature = excluded.signature, reproduces = excluded.reproduces, run = excluded.run,"
      "  checked = excluded.checked WHERE excluded.checked > checked;"
      "INSERT INTO run_configs(run, config, lowering_version, cases, executed, failures)"
      " SELECT lr.id, orc.config, orc.lowering_version, orc.cases, orc.executed, orc.failures"
      "  FROM o.run_configs orc JOIN o.runs orr ON orr.id = orc.run"
      "  JOIN runs lr ON lr.uuid = orr.uuid WHERE 1"
      " ON CONFLICT(run, config, lowering_version) DO UPDATE SET"
      "  cases = max(cases, excluded.cases), executed = max(executed, excluded.executed),"
      "  failures = max(failures, excluded.failures);"
      "UPDATE findings SET count = (SELECT coalesce(sum(hits), 0) FROM occurrences"
      "  WHERE occurrences.finding = findings.id);"
      "COMMIT;";
  rc = exec(s, merge_sql, err);
  if (rc)
    exec(s, "ROLLBACK", NULL);
  exec(s, "DETACH DATABASE o", NULL);
  return rc;
}

/* ---- queries ---- */

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
    bind_text(*st, 1, store_status_name(f->status));
  if (f && f->cls)
    bind_text(*st, 2, f->cls);
  if (f && f->lowering)
    bind_text(*st, 3, f->lowering);
  if (f && f->since > 0)
    sqlite3_bind_double(*st, 4, f->since);
  return 0;
}

const char *results__col(sqlite3_stmt *st, int i) {
  const unsigned char *t = sqlite3_column_text(st, i);
  return t ? (const char *)t : "";
}

void results__fmt_time(double t, char *out, size_t n) {
  time_t tt = (time_t)t;
  struct tm tm;
  gmtime_r(&tt, &tm);
  strftime(out, n, "%Y-%m-%d %H:%M", &tm);
}

int store_list(Store *s, const StoreFilter *f, AfBuf *out, AfErr *err) {
  sqlite3_stmt *st;
  int rc = results__prepare_filtered(s, FINDING_COLS, f, NEW_FIRST, &st, err);
  if (rc)
    return rc;
  af_buf_printf(out, "%5s  %-7s  %-20s %7s %5s  %-8s  %s\n", "id", "status", "class", "count",
                "ops", "repro", "signature");
  int n = 0, step;
  while ((step = sqlite3_step(st)) == SQLITE_ROW) {
    char repro[16] = "-";
    if (sqlite3_column_int(st, 9) > 0)
      snprintf(repro, sizeof repro, "%d/%d", sqlite3_column_int(st, 10), sqlite3_column_int(st, 9));
    af_buf_printf(out, "%5lld  %-7s  %-20s %7lld %5d  %-8s  %s\n",
                  (long long)sqlite3_column_int64(st, 0), results__col(st, 1), results__col(st, 2),
                  (long long)sqlite3_column_int64(st, 3), sqlite3_column_int(st, 4), repro,
                  results__col(st, 6));
    n++;
  }
  sqlite3_finalize(st);
  if (step != SQLITE_DONE)
    return results__db_err(s, err, "query failed");
  af_buf_printf(out, "%d finding(s)\n", n);
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

int store_tally(Store *s, int64_t run, const StoreTally *t, int n, AfErr *err) {
  if (n == 0)
    return 0;
  if (run1(s, "BEGIN IMMEDIATE", "") != SQLITE_DONE)
    return results__db_err(s, err, "cannot record occurrences");
  double now = now_unix();
  for (int i = 0; i < n; i++) {
    if (t[i].hits <= 0)
      continue;
    int64_t fid = -1;
    sqlite3_stmt *st = cached(s, "SELECT id FROM findings WHERE signature=?");
    if (st == NULL)
      goto fail;
    bind_text(st, 1, t[i].signature);
    if (sqlite3_step(st) == SQLITE_ROW)
      fid = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    if (fid < 0)
      continue; /* only findings already recorded are tallied */
    if (run1(s,
             "INSERT INTO occurrences(finding, run, case_seed, lowering, lowering_version,"
             " pipeline, backend, schedule, at, hits) VALUES(?,?,'*',?,?,?,?,'*',?,?)"
             " ON CONFLICT(finding, run, case_seed, lowering, schedule) DO UPDATE SET"
             " hits = hits + excluded.hits, at = excluded.at",
             "iittttdi", fid, run, t[i].lowering ? t[i].lowering : "",
             t[i].lowering_version ? t[i].lowering_version : "", t[i].pipeline ? t[i].pipeline : "",
             t[i].backend ? t[i].backend : "", now, (int64_t)t[i].hits) != SQLITE_DONE)
      goto fail;
    if (add_form(s, fid, run, t[i].detailed && *t[i].detailed ? t[i].detailed : t[i].signature,
                 (int64_t)t[i].hits) != SQLITE_DONE)
      goto fail;
    if (run1(s,
             "UPDATE findings SET count=count+?, last_seen=max(coalesce(last_seen, 0), ?) "
             "WHERE id=?",
             "idi", (int64_t)t[i].hits, now, fid) != SQLITE_DONE)
      goto fail;
  }
  if (run1(s, "COMMIT", "") != SQLITE_DONE)
    goto fail;
  return 0;
fail:;
  int rc = results__db_err(s, err, "cannot record occurrences");
  run1(s, "ROLLBACK", "");
  return rc;
}

int store_set_minimized(Store *s, const char *signature, const char *json, const char *mlir,
                        uint64_t seed, int ops, AfErr *err) {
  char hash[32], sd[32];
  snprintf(hash, sizeof hash, "%016llx", (unsigned long long)af_hash64(json, strlen(json)));
  snprintf(sd, sizeof sd, "%llu", (unsigned long long)seed);
  if (run1(s, "BEGIN IMMEDIATE", "") != SQLITE_DONE)
    return results__db_err(s, err, "cannot store the minimized case");
  if (run1(s, "INSERT OR IGNORE INTO cases(hash, json, mlir, seed, ops) VALUES(?,?,?,?,?)", "tttti",
           hash, json, mlir, sd, (int64_t)ops) != SQLITE_DONE ||
      run1(s,
           "UPDATE findings SET minimized_case = (SELECT id FROM cases WHERE hash = ?)"
           " WHERE signature = ?",
           "tt", hash, signature) != SQLITE_DONE ||
      run1(s, "COMMIT", "") != SQLITE_DONE) {
    int rc = results__db_err(s, err, "cannot store the minimized case");
    run1(s, "ROLLBACK", "");
    return rc;
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
