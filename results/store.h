/*
 * store.h: the regression database (SQLite). Schema and migrations are documented in
 * docs/db-schema.md; every write is one transaction, the journal is WAL and writers wait for
 * each other (busy timeout), so several campaign workers share one file and a campaign killed
 * at any point leaves a database that opens cleanly with every committed finding.
 *
 * Findings are keyed by root-cause signature. A failing case adds an occurrence (finding,
 * run, case seed, lowering and its version, pipeline, backend, schedule) in its own
 * transaction when it is news: a new finding, a smaller case, or one of the first occurrences
 * of a finding in a run. Later repeats are tallied (store_tally) into one row per finding and
 * run, committed about once a second. A finding's count is the sum of its occurrences' hits,
 * so merging databases is idempotent.
 */
#ifndef RESULTS_STORE_H
#define RESULTS_STORE_H

#include <stdint.h>

#include "../base/afbase.h"

#define STORE_SCHEMA_VERSION 8

typedef struct Store Store;

/* Opens (create: or creates) a database and migrates it to STORE_SCHEMA_VERSION. A file that
 * is not a SQLite database, or one from a newer asyncfuzz, is refused with a clear message. */
int store_open(const char *path, int create, Store **out, AfErr *err);
void store_close(Store *s);
int store_version(Store *s); /* the schema version after opening */
/* Creates the schema of an older version (tests of the migrations): version 1. */
int store_create_v1(const char *path, AfErr *err);

typedef struct StoreRun {
  char uuid[40];
  double started;
  char host[128];
  char version[32];  /* asyncfuzz */
  char tools[4096];  /* JSON: lowerings with versions and pipelines */
  char device[400];  /* backend and device (name, compute capability, versions, spin) */
  char config[2048]; /* JSON: the campaign's options */
} StoreRun;

/* Clears r and fills what every run records the same way: a random uuid, this host's name and
 * the asyncfuzz version. The caller fills tools, device and config. */
void store_run_init(StoreRun *r);
int store_run_begin(Store *s, StoreRun *r, int64_t *id, AfErr *err);
/* Ends a run: adds cases, and executed (the cases that reached execution: no lowering stopped
 * them; < 0: not known, left as it is) to its counts, and sets its time. */
int store_run_end(Store *s, int64_t id, long cases, long executed, double seconds, AfErr *err);

enum { STORE_NEW, STORE_KNOWN, STORE_FIXED, STORE_WONTFIX, STORE__NSTATUS };
const char *store_status_name(int st);
int store_status_parse(const char *name); /* -1 if unknown */

typedef struct StoreOccurrence {
  const char *signature, *cls, *lowering, *detail;
  const char *detailed; /* the victim-level form of the signature (NULL: the signature) */
  const char *lowering_version, *pipeline, *backend, *schedule;
  uint64_t case_seed;
  int case_ops;
  const char *case_json; /* stored when it is the finding's first or smallest case */
  const char *case_mlir;
  const char *trace; /* an excerpt, stored with a new finding */
  const char *replay;
  int repro_runs, repro_hits; /* measured for a new finding (0: not measured) */
} StoreOccurrence;

/* Looks a signature up: *status (STORE_*), or -1 when the database has no such finding. */
int store_finding_status(Store *s, const char *signature, int *status, AfErr *err);
/* A finding marked known or wontfix, as steering reads it. */
typedef struct StoreTriaged {
  const char *signature, *cls;
  const char *forms; /* its detailed forms, one a line ("": none recorded) */
  const char *confs; /* its matrix verdicts, one a line: CONFIG TAB VERSION TAB STORE_CONF_*;
                        "": never checked on a matrix */
} StoreTriaged;
/* Calls fn(finding, ctx) for every finding marked known or wontfix. */
int store_each_triaged(Store *s, void (*fn)(const StoreTriaged *t, void *ctx), void *ctx,
                       AfErr *err);
/* Records one occurrence in one transaction: the finding (created with status new, or updated:
 * last seen, count, smallest case), the case when it is the smallest, the occurrence.
 * *is_new: the finding did not exist; *status: its status. */
int store_record(Store *s, int64_t run, const StoreOccurrence *o, int *is_new, int *status,
                 AfErr *err);
/* Repeated occurrences of findings already recorded, counted in memory and committed together
 * (one transaction): each adds `hits` to the finding's count and to its run's tally row
 * (an occurrence with case seed and schedule "*"). */
typedef struct StoreTally {
  const char *signature, *lowering, *lowering_version, *pipeline, *backend;
  const char *detailed; /* the repeats' detailed form (NULL: the signature) */
  long hits;
} StoreTally;
int store_tally(Store *s, int64_t run, const StoreTally *t, int n, AfErr *err);
/* A finding's minimized case (its JSON, the caller frees it), or *json NULL when it has none. */
int store_minimized_case(Store *s, const char *signature, char **json, AfErr *err);
/* Stores the reducer's result on a finding: the minimized case and its .mlir reproducer. */
int store_set_minimized(Store *s, const char *signature, const char *json, const char *mlir,
                        uint64_t seed, int ops, AfErr *err);
/* Sets a finding's status. AF_EINVALID when there is no such finding. */
int store_mark(Store *s, int64_t id, int status, AfErr *err);
/* Merges another database into this one (idempotent: runs by uuid, cases by content hash,
 * findings by signature, occurrences by their key; counts are recomputed). */
int store_merge(Store *s, const char *other, AfErr *err);

/* ---- queries: text for the CLI ---- */

typedef struct StoreFilter {
  int status;      /* -1: any */
  const char *cls; /* NULL: any */
  const char *lowering;
  double since; /* unix time; 0: any */
} StoreFilter;

int store_list(Store *s, const StoreFilter *f, AfBuf *out, AfErr *err);
int store_show(Store *s, int64_t id, AfBuf *out, AfErr *err);
int store_stats(Store *s, AfBuf *out, AfErr *err);
int store_export_json(Store *s, const StoreFilter *f, AfBuf *out, AfErr *err);
int store_export_junit(Store *s, const StoreFilter *f, AfBuf *out, AfErr *err);
/* A self-contained HTML page: the findings table (new first), counts per class and lowering,
 * findings over time and throughput per run as inline SVG. All text is escaped. */
int store_report_html(Store *s, AfBuf *out, AfErr *err);
/* ---- the configuration matrix (matrix.c) ---- */

/* A finding's minimized case run on one configuration of the mlir-opt lowering. */
typedef struct StoreConfigVerdict {
  const char *config;    /* its name, e.g. "mlir-opt-22.1.8@async-region/rocdl+Odefault" */
  const char *version;   /* the build's version string */
  const char *llvm;      /* its release, e.g. "22.1.8" (ordered numerically) */
  const char *pipeline;  /* the named pipeline ("default", "async-region", "custom") */
  const char *target;    /* "nvvm", "rocdl" */
  const char *jit;       /* "O0".."O3", "Odefault" */
  const char *cls;       /* the verdict's class ("pass") */
  const char *signature; /* its signature ("" for pass) */
  int reproduces;        /* STORE_CONF_*: reproduces, passes, fails differently, refused */
} StoreConfigVerdict;
/* A finding's verdict on a configuration, from its re-check there under several schedules (its
 * own and the adversarial ones): StoreConfigVerdict.reproduces, finding_configs.reproduces. */
enum {
  STORE_CONF_PASSES = 0,     /* every run passed: only this counts as fixed */
  STORE_CONF_REPRODUCES = 1, /* a run failed with the finding's signature */
  STORE_CONF_DIFFERS = 2,    /* none did; one failed another way (signature: the first such) */
  STORE_CONF_REFUSED = 3     /* none did; the lowering refused the case (rejected, unconverted) */
};
/* A STORE_CONF_* verdict in words: "reproduces", "passes", "fails differently", "refused by the
 * lowering" ("?" for another). */
const char *store_conf_name(int conf);
/* Stores the verdicts of finding `signature` on n configurations (one transaction; a
 * configuration checked again replaces its row). AF_EINVALID: no such finding. */
int store_set_configs(Store *s, const char *signature, int64_t run, const StoreConfigVerdict *v,
                      int n, AfErr *err);
/* A finding as a re-check on new configurations takes it (store_each_recheck). */
typedef struct StoreRecheck {
  const char *signature;
  const char *case_json; /* its smallest case */
  const char *schedule;  /* the schedule it failed with there ("lazy@123"; "" unknown) */
  const char *confs;     /* the configurations it has verdicts on: CONFIG TAB VERSION a line */
} StoreRecheck;
/* Calls fn for each finding that has a smallest case, until fn returns non-zero (returned). */
int store_each_recheck(Store *s, int (*fn)(const StoreRecheck *r, void *ctx), void *ctx,
                       AfErr *err);
/* Cases a run gave one configuration (added to what it has). */
typedef struct StoreConfigCount {
  const char *config, *version;
  long cases, executed, failures;
} StoreConfigCount;
int store_config_counts(Store *s, int64_t run, const StoreConfigCount *c, int n, AfErr *err);
/* A finding's matrix as text for `db show` ("" when it has none). */
int store_show_configs(Store *s, int64_t id, AfBuf *out, AfErr *err);
/* store_show with the finding's matrix before its cases. */
int store_show_matrix(Store *s, int64_t id, AfBuf *out, AfErr *err);
/* Findings present in a newer LLVM release and absent in an older one on the same pipeline,
 * target and JIT level (fixed: the reverse), as text for `db list`. */
int store_list_versions(Store *s, const StoreFilter *f, int fixed, AfBuf *out, AfErr *err);
/* The same two lists, and cases per configuration, as HTML sections of the report. */
int store_report_matrix(Store *s, AfBuf *out, AfErr *err);

/* One progress record of a run: at seconds into it, its cases, those that reached execution,
 * those that failed, and the findings (distinct signatures) it had then. */
typedef struct StoreProgress {
  double at;
  long cases, executed, failures, findings;
} StoreProgress;
/* Stores a run's progress records, replacing any it had. */
int store_progress(Store *s, int64_t run, const StoreProgress *p, int n, AfErr *err);

/* Where a run's time went: a JSON object of seconds per bucket ({"mlir-opt": 12.5, ...}). */
int store_run_time(Store *s, int64_t id, const char *json, AfErr *err);

/* How many distinct findings a run recorded (for a campaign's summary). */
int store_run_findings(Store *s, int64_t run, long *findings, AfErr *err);

#endif
