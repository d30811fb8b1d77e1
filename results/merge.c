/*
 * merge.c: another runner's database merged into this one (store_merge): runs, cases and
 * findings by their identity (uuid, hash, signature), so that merging twice changes nothing.
 */
#define _GNU_SOURCE
#include "store_int.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>

/* The merge, in one transaction: runs, cases and findings by identity; first and last seen,
 * a triage decision over `new`, the reproduction rate, the smaller smallest case; occurrences,
 * forms and configuration counts whole per run (the larger count); a finding's matrix by its
 * newer check; counts recomputed. */
static const char merge_sql[] =
    "BEGIN IMMEDIATE;"
    "INSERT OR IGNORE INTO runs(uuid, started, ended, host, asyncfuzz_version, tools, device,"
    " config, cases, seconds, executed, time) SELECT uuid, started, ended, host,"
    " asyncfuzz_version, tools, device, config, cases, seconds, executed, time FROM o.runs;"
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
    "INSERT INTO progress(run, at, cases, executed, failures, findings)"
    " SELECT lr.id, op.at, op.cases, op.executed, op.failures, op.findings FROM o.progress op"
    "  JOIN o.runs orr ON orr.id = op.run JOIN runs lr ON lr.uuid = orr.uuid WHERE 1"
    " ON CONFLICT(run, at) DO NOTHING;"
    "UPDATE findings SET count = (SELECT coalesce(sum(hits), 0) FROM occurrences"
    "  WHERE occurrences.finding = findings.id);"
    "COMMIT;";

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
  results__bind_text(st, 1, other);
  rc = sqlite3_step(st) == SQLITE_DONE
           ? 0
           : results__db_err(s, err, "cannot attach the other database");
  sqlite3_finalize(st);
  if (rc)
    return rc;
  rc = results__exec(s, merge_sql, err);
  if (rc)
    results__exec(s, "ROLLBACK", NULL);
  results__exec(s, "DETACH DATABASE o", NULL);
  return rc;
}
