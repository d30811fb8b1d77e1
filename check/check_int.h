/*
 * check_int.h: internals of check/, shared by its files only. check.c dispatches a case to
 * one of the three ways below; gpu_child.c runs check__builtin in the child process.
 */
#ifndef CHECK_CHECK_INT_H
#define CHECK_CHECK_INT_H

#include "check.h"

/* The builtin lowering in this process, on o's backend (builtin.c). */
int check__builtin(const GenCase *c, const LowerSpec *spec, const Schedule *s, int ns,
                   const OracleExpected *e, const CheckOpts *o, CheckResult *out, AfErr *err);
/* The builtin lowering in the GPU children, with their watchdog (gpu_child.c): cases cs[0..n),
 * case i under s[i * sstride ..), up to check_gpu_jobs(o) at once. */
int check__gpu(const GenCase *const *cs, int n, const LowerSpec *spec, const Schedule *s,
               int sstride, int ns, const CheckOpts *o, CheckResult *out, AfErr *err);
/* Cases through mlir-opt and mlir-runner, many per process (mlir.c). */
int check__mlir(const GenCase *const *cs, int n, const LowerSpec *spec, const Schedule *s, int ns,
                const OracleExpected *const *es, const CheckOpts *o, CheckResult *out, AfErr *err);
/* The features of a run's trace: its calls by op kind, and its ordering links (trace_feat.c). */
void check_trace_features(const GenCase *c, const RtRec *t, int n);

/* One run of a program judged (prog_judge.c): the runner's result, output and trace files. */
struct ProcResult;
int check__prog_judge(const LowerSpec *spec, const ProgOpts *o, const char *text,
                      const struct ProcResult *pr, const char *outp, const char *errp,
                      const char *trace, ProgRun *run, AfErr *err);
/* Runs whose output differs from the first run's get a wrong_result finding. */
void check__prog_outputs(const LowerSpec *spec, ProgResult *res);

#endif
