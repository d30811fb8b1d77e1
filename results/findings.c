/*
 * findings.c: recording findings (store.h): an occurrence of a signature (a new finding, or
 * one more of a known one, with its smallest case and detailed form), tallied repeats, the
 * minimized case, triage marks, and the lookups a campaign makes.
 */
#include "store_int.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Counts hits of a detailed form of finding fid in run `run`. A sqlite3_step result. */
static int add_form(Store *s, int64_t fid, int64_t run, const char *detailed, int64_t hits) {
  return results__run1(s,
                       "INSERT INTO forms(finding, run, detailed, hits) VALUES(?,?,?,?)"
                       " ON CONFLICT(finding, run, detailed) DO UPDATE SET"
                       " hits = hits + excluded.hits",
                       "iiti", fid, run, detailed, hits);
}

/* A case (by the hash of its JSON, kept once): *id, -1 when it cannot be read back. A
 * sqlite3_step result. */
static int add_case(Store *s, const char *json, const char *mlir, uint64_t seed, int ops,
                    int64_t *id) {
  char hash[32], sd[32];
  snprintf(hash, sizeof hash, "%016llx", (unsigned long long)af_hash64(json, strlen(json)));
  snprintf(sd, sizeof sd, "%llu", (unsigned long long)seed);
  *id = -1;
  int rc = results__run1(s,
                         "INSERT OR IGNORE INTO cases(hash, json, mlir, seed, ops)"
                         " VALUES(?,?,?,?,?)",
                         "tttti", hash, json, mlir, sd, (int64_t)ops);
  if (rc != SQLITE_DONE)
    return rc;
  sqlite3_stmt *st = results__cached(s, "SELECT id FROM cases WHERE hash=?");
  if (st == NULL)
    return SQLITE_ERROR;
  results__bind_text(st, 1, hash);
  if (sqlite3_step(st) == SQLITE_ROW)
    *id = sqlite3_column_int64(st, 0);
  sqlite3_reset(st);
  return SQLITE_DONE;
}

/* The finding of o's signature, added when new (*is_new): its id, status and smallest case's
 * ops (-1: none). A sqlite3_step result. */
static int find_or_add(Store *s, const StoreOccurrence *o, double t, int64_t *fid, int *status,
                       int64_t *smallest, int *is_new) {
  sqlite3_stmt *st = results__cached(s, "SELECT id, status, coalesce(smallest_ops, -1) FROM "
                                        "findings WHERE signature=?");
  if (st == NULL)
    return SQLITE_ERROR;
  results__bind_text(st, 1, o->signature);
  if (sqlite3_step(st) == SQLITE_ROW) {
    *fid = sqlite3_column_int64(st, 0);
    *status = store_status_parse((const char *)sqlite3_column_text(st, 1));
    *smallest = sqlite3_column_int64(st, 2);
  }
  sqlite3_reset(st);
  if (*fid >= 0)
    return SQLITE_DONE;
  int rc =
      results__run1(s,
                    "INSERT INTO findings(signature, class, lowering, detail, first_seen,"
                    " last_seen, repro_runs, repro_hits, trace, replay)"
                    " VALUES(?,?,?,?,?,?,?,?,?,?)",
                    "ttttddiitt", o->signature, o->cls, o->lowering ? o->lowering : "", o->detail,
                    t, t, (int64_t)o->repro_runs, (int64_t)o->repro_hits, o->trace, o->replay);
  *fid = sqlite3_last_insert_rowid(s->db);
  *is_new = 1;
  return rc;
}

/* The occurrence o of finding fid in run `run` (case_id: its case, -1 none) and its detailed
 * form; *added: whether it is new. A sqlite3_step result. */
static int add_occurrence(Store *s, int64_t fid, int64_t run, const StoreOccurrence *o,
                          int64_t case_id, double t, int *added) {
  char seed[32];
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->case_seed);
  const char *detailed = o->detailed && *o->detailed ? o->detailed : o->signature;
  const char *low = o->lowering ? o->lowering : "";
  const char *ver = o->lowering_version ? o->lowering_version : "";
  const char *pipe = o->pipeline ? o->pipeline : "", *be = o->backend ? o->backend : "";
  const char *sch = o->schedule ? o->schedule : "";
  int r = case_id >= 0
              ? results__run1(s,
                              "INSERT OR IGNORE INTO occurrences(finding, run, case_seed, case_id,"
                              " lowering, lowering_version, pipeline, backend, schedule, at,"
                              " detailed) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
                              "iititttttdt", fid, run, seed, case_id, low, ver, pipe, be, sch, t,
                              detailed)
              : results__run1(s,
                              "INSERT OR IGNORE INTO occurrences(finding, run, case_seed, lowering,"
                              " lowering_version, pipeline, backend, schedule, at, detailed)"
                              " VALUES(?,?,?,?,?,?,?,?,?,?)",
                              "iittttttdt", fid, run, seed, low, ver, pipe, be, sch, t, detailed);
  if (r != SQLITE_DONE)
    return r;
  *added = sqlite3_changes(s->db);
  return *added ? add_form(s, fid, run, detailed, *added) : SQLITE_DONE;
}

int store_record(Store *s, int64_t run, const StoreOccurrence *o, int *is_new, int *status,
                 AfErr *err) {
  *is_new = 0;
  *status = STORE_NEW;
  if (results__run1(s, "BEGIN IMMEDIATE", "") != SQLITE_DONE)
    return results__db_err(s, err, "cannot record a finding");
  double t = results__now();
  int64_t fid = -1, smallest = -1, case_id = -1;
  int added = 0;
  int ok = find_or_add(s, o, t, &fid, status, &smallest, is_new) == SQLITE_DONE;
  if (ok && o->case_json && (smallest < 0 || o->case_ops < smallest)) {
    ok =
        add_case(s, o->case_json, o->case_mlir, o->case_seed, o->case_ops, &case_id) == SQLITE_DONE;
    /* the replay command follows the smallest case */
    ok = ok && (case_id < 0 || results__run1(s,
                                             "UPDATE findings SET smallest_case=?, smallest_ops=?,"
                                             " replay=coalesce(?, replay) WHERE id=?",
                                             "iiti", case_id, (int64_t)o->case_ops, o->replay,
                                             fid) == SQLITE_DONE);
  }
  ok = ok && add_occurrence(s, fid, run, o, case_id, t, &added) == SQLITE_DONE;
  ok = ok && results__run1(s,
                           "UPDATE findings SET count=count+?,"
                           " last_seen=max(coalesce(last_seen, 0), ?) WHERE id=?",
                           "idi", (int64_t)added, t, fid) == SQLITE_DONE;
  if (ok && results__run1(s, "COMMIT", "") == SQLITE_DONE)
    return 0;
  int rc = results__db_err(s, err, "cannot record a finding");
  results__run1(s, "ROLLBACK", "");
  return rc;
}

int store_mark(Store *s, int64_t id, int status, AfErr *err) {
  if (results__run1(s, "UPDATE findings SET status=? WHERE id=?", "ti", store_status_name(status),
                    id) != SQLITE_DONE)
    return results__db_err(s, err, "cannot mark the finding");
  if (sqlite3_changes(s->db) == 0)
    return af_err_set(err, AF_EINVALID, "%s: no finding %lld (see asyncfuzz db list)", s->path,
                      (long long)id);
  return 0;
}

int store_finding_status(Store *s, const char *signature, int *status, AfErr *err) {
  sqlite3_stmt *st;
  *status = -1;
  if (sqlite3_prepare_v2(s->db, "SELECT status FROM findings WHERE signature=?", -1, &st, NULL) !=
      SQLITE_OK)
    return results__db_err(s, err, "cannot look a finding up");
  results__bind_text(st, 1, signature);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    *status = store_status_parse((const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE
             ? 0
             : results__db_err(s, err, "cannot look a finding up");
}

int store_minimized_case(Store *s, const char *signature, char **json, AfErr *err) {
  sqlite3_stmt *st;
  *json = NULL;
  if (sqlite3_prepare_v2(s->db,
                         "SELECT c.json FROM findings f JOIN cases c ON c.id = f.minimized_case"
                         " WHERE f.signature=?",
                         -1, &st, NULL) != SQLITE_OK)
    return results__db_err(s, err, "cannot look a finding's minimized case up");
  results__bind_text(st, 1, signature);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW && sqlite3_column_text(st, 0)) {
    *json = af_strdup((const char *)sqlite3_column_text(st, 0));
    if (*json == NULL) {
      sqlite3_finalize(st);
      return af_err_set(err, AF_ENOMEM, "out of memory");
    }
  }
  sqlite3_finalize(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE
             ? 0
             : results__db_err(s, err, "cannot look a finding's minimized case up");
}

static const char *col_text(sqlite3_stmt *st, int i) {
  const unsigned char *t = sqlite3_column_text(st, i);
  return t ? (const char *)t : "";
}

int store_each_triaged(Store *s, void (*fn)(const StoreTriaged *t, void *ctx), void *ctx,
                       AfErr *err) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(
          s->db,
          "SELECT f.signature, f.class,"
          " (SELECT group_concat(detailed, char(10)) FROM"
          "  (SELECT DISTINCT detailed FROM forms WHERE finding = f.id ORDER BY detailed)),"
          " (SELECT group_concat(config || char(9) || lowering_version || char(9) || reproduces,"
          "  char(10)) FROM finding_configs WHERE finding = f.id)"
          " FROM findings f WHERE f.status IN ('known', 'wontfix') ORDER BY f.id",
          -1, &st, NULL) != SQLITE_OK)
    return results__db_err(s, err, "cannot list the triaged findings");
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    StoreTriaged t = {col_text(st, 0), col_text(st, 1), col_text(st, 2), col_text(st, 3)};
    fn(&t, ctx);
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? 0 : results__db_err(s, err, "cannot list the triaged findings");
}

int store_tally(Store *s, int64_t run, const StoreTally *t, int n, AfErr *err) {
  if (n == 0)
    return 0;
  if (results__run1(s, "BEGIN IMMEDIATE", "") != SQLITE_DONE)
    return results__db_err(s, err, "cannot record occurrences");
  double now = results__now();
  for (int i = 0; i < n; i++) {
    if (t[i].hits <= 0)
      continue;
    int64_t fid = -1;
    sqlite3_stmt *st = results__cached(s, "SELECT id FROM findings WHERE signature=?");
    if (st == NULL)
      goto fail;
    results__bind_text(st, 1, t[i].signature);
    if (sqlite3_step(st) == SQLITE_ROW)
      fid = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    if (fid < 0)
      continue; /* only findings already recorded are tallied */
    if (results__run1(s,
                      "INSERT INTO occurrences(finding, run, case_seed, lowering, lowering_version,"
                      " pipeline, backend, schedule, at, hits) VALUES(?,?,'*',?,?,?,?,'*',?,?)"
                      " ON CONFLICT(finding, run, case_seed, lowering, schedule) DO UPDATE SET"
                      " hits = hits + excluded.hits, at = excluded.at",
                      "iittttdi", fid, run, t[i].lowering ? t[i].lowering : "",
                      t[i].lowering_version ? t[i].lowering_version : "",
                      t[i].pipeline ? t[i].pipeline : "", t[i].backend ? t[i].backend : "", now,
                      (int64_t)t[i].hits) != SQLITE_DONE)
      goto fail;
    if (add_form(s, fid, run, t[i].detailed && *t[i].detailed ? t[i].detailed : t[i].signature,
                 (int64_t)t[i].hits) != SQLITE_DONE)
      goto fail;
    if (results__run1(s,
                      "UPDATE findings SET count=count+?, last_seen=max(coalesce(last_seen, 0), ?) "
                      "WHERE id=?",
                      "idi", (int64_t)t[i].hits, now, fid) != SQLITE_DONE)
      goto fail;
  }
  if (results__run1(s, "COMMIT", "") != SQLITE_DONE)
    goto fail;
  return 0;
fail:;
  int rc = results__db_err(s, err, "cannot record occurrences");
  results__run1(s, "ROLLBACK", "");
  return rc;
}

int store_set_minimized(Store *s, const char *signature, const char *json, const char *mlir,
                        uint64_t seed, int ops, AfErr *err) {
  int64_t id;
  if (results__run1(s, "BEGIN IMMEDIATE", "") != SQLITE_DONE)
    return results__db_err(s, err, "cannot store the minimized case");
  if (add_case(s, json, mlir, seed, ops, &id) != SQLITE_DONE ||
      results__run1(s, "UPDATE findings SET minimized_case = nullif(?, -1) WHERE signature = ?",
                    "it", id, signature) != SQLITE_DONE ||
      results__run1(s, "COMMIT", "") != SQLITE_DONE) {
    int rc = results__db_err(s, err, "cannot store the minimized case");
    results__run1(s, "ROLLBACK", "");
    return rc;
  }
  return 0;
}
