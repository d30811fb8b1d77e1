/*
 * record.c: a failing run as the regression database records it (results/store.h): the one
 * builder of an occurrence, shared by campaigns and run-batch, so both record the same fields
 * the same way (the detailed form, the lowering's version as lower_version() gives it, the
 * pipeline of an mlir-opt lowering only, the case rendered as that lowering runs it).
 */
#include "check.h"

#include "../lower/mlir.h"
#include "../results/store.h"

#include <stdio.h>
#include <string.h>

int check_record(CheckRecord *r, StoreOccurrence *oc, const GenCase *c, const LowerSpec *spec,
                 const Verdict *v, const Schedule *s, const CheckOpts *o, int with_case) {
  memset(r, 0, sizeof *r);
  memset(oc, 0, sizeof *oc);
  check_schedule_str(s, r->sched, sizeof r->sched);
  if (with_case) {
    r->json = gen_case_to_json(c);
    r->mlir = gen_render_mlir(c);
    if (r->json == NULL || r->mlir == NULL) {
      check_record_free(r);
      return AF_ENOMEM;
    }
    mlir_retarget(spec, r->mlir); /* rocdl: as the lowering gets it */
  }
  oc->signature = v->signature;
  oc->cls = oracle_verdict_name(v->cls);
  oc->lowering = spec->name;
  oc->detail = v->detail;
  oc->detailed = v->victim[0] ? v->victim : NULL;
  oc->lowering_version = lower_version(spec);
  oc->pipeline = spec->kind == LOWER_MLIR_OPT ? spec->pipeline : "";
  oc->backend = check_backend_name(o);
  oc->schedule = r->sched;
  oc->case_seed = c->seed;
  oc->case_ops = c->nops;
  oc->case_json = r->json;
  oc->case_mlir = r->mlir;
  return 0;
}

void check_record_free(CheckRecord *r) {
  af_free(r->json);
  af_free(r->mlir);
  r->json = r->mlir = NULL;
}
