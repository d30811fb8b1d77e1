/*
 * prog_record.c: check-mlir's findings recorded in the regression database as a campaign
 * records its own (results/store.h): one run of the database for the command, and per
 * configuration one occurrence of each finding (warnings are not findings), with the program as
 * its reproducer, the command that replays it, the lowering's version and pipeline, and how many
 * of the schedules showed it.
 */
#include "check.h"

#include "../lower/mlir.h"
#include "../results/store.h"

#include <stdio.h>
#include <string.h>

static void tools_json(const LowerSpec *specs, int n, char *out, size_t cap) {
  size_t len = 0;
  for (int i = 0; i < n && len < cap; i++) {
    int w = snprintf(out + len, cap - len,
                     "%s{\"lowering\": \"%s\", \"version\": \"%s\", \"pipeline\": \"%s\"}",
                     i ? ", " : "[", specs[i].name, lower_version(&specs[i]), specs[i].pipeline);
    len += w > 0 ? (size_t)w : 0;
  }
  if (len < cap)
    snprintf(out + len, cap - len, n ? "]" : "[]");
}

/* Configuration i's findings, each once (its first run's schedule), into the database. */
static int record_one(Store *st, int64_t run, const char *path, const LowerSpec *spec,
                      const ProgResult *r, const char *replay_args, int *nnew, AfErr *err) {
  for (int k = 0; k < r->nruns; k++)
    for (int i = 0; i < r->runs[k].nfind; i++) {
      const ProgFinding *f = &r->runs[k].find[i];
      int seen = f->warning, hits = 0;
      for (int k2 = 0; k2 < r->nruns; k2++)
        for (int i2 = 0; i2 < r->runs[k2].nfind; i2++)
          if (strcmp(r->runs[k2].find[i2].signature, f->signature) == 0) {
            hits++;
            seen |= k2 < k || (k2 == k && i2 < i);
          }
      if (seen)
        continue;
      char sched[64], replay[2400];
      check_schedule_str(&r->runs[k].sched, sched, sizeof sched);
      snprintf(replay, sizeof replay, "asyncfuzz check-mlir %s --lowering %s --schedules %s%s",
               path, spec->arg, sched, replay_args);
      StoreOccurrence oc;
      memset(&oc, 0, sizeof oc);
      oc.signature = f->signature;
      oc.cls = oracle_verdict_name(f->cls);
      oc.lowering = spec->name;
      oc.detail = f->detail;
      oc.detailed = f->victim;
      oc.lowering_version = lower_version(spec);
      oc.pipeline = spec->pipeline;
      oc.backend = "sim";
      oc.schedule = sched;
      oc.case_mlir = r->text;
      oc.replay = replay;
      oc.repro_runs = r->nruns;
      oc.repro_hits = hits;
      int is_new = 0, status;
      if (store_record(st, run, &oc, &is_new, &status, err))
        return AF_EIO;
      *nnew += is_new;
    }
  return 0;
}

int check_program_record(const char *db, const char *path, const LowerSpec *specs,
                         const ProgResult *res, int n, const char *replay_args, int *nnew,
                         AfErr *err) {
  Store *st = NULL;
  *nnew = 0;
  int rc = store_open(db, 1, &st, err);
  if (rc)
    return rc == AF_EPARSE ? AF_EPARSE : AF_EIO;
  StoreRun run;
  int64_t id;
  store_run_init(&run);
  tools_json(specs, n, run.tools, sizeof run.tools);
  snprintf(run.device, sizeof run.device, "sim");
  snprintf(run.config, sizeof run.config, "{\"command\": \"check-mlir\", \"program\": \"%.200s\"}",
           path);
  rc = store_run_begin(st, &run, &id, err) ? AF_EIO : 0;
  long executed = 0;
  for (int i = 0; rc == 0 && i < n; i++) {
    if (res[i].lowered == MLIR_OK) {
      executed++;
      rc = record_one(st, id, path, &specs[i], &res[i], replay_args, nnew, err);
      continue;
    }
    StoreOccurrence oc; /* the lowering stopped it: its verdict is the finding */
    memset(&oc, 0, sizeof oc);
    oc.signature = res[i].lowering.signature;
    oc.cls = oracle_verdict_name(res[i].lowering.cls);
    oc.lowering = specs[i].name;
    oc.detail = res[i].lowering.detail;
    oc.lowering_version = lower_version(&specs[i]);
    oc.pipeline = specs[i].pipeline;
    oc.backend = "sim";
    oc.schedule = "";
    oc.case_mlir = res[i].text;
    int is_new = 0, status;
    if (store_record(st, id, &oc, &is_new, &status, err))
      rc = AF_EIO;
    *nnew += is_new;
  }
  if (rc == 0 && store_run_end(st, id, n, executed, 0, err))
    rc = AF_EIO;
  store_close(st);
  return rc;
}
