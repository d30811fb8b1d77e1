/*
 * oracle.h: what a Case must produce, and the verdict on what an execution produced.
 *
 * oracle_expect() executes a valid Case sequentially in inline order (every device op
 * completes at once, regions run where they are spawned), which is one linearization of the
 * case's happens-before order; since a valid case orders every conflicting pair, every
 * correct execution observes exactly these values.
 *
 * oracle_judge() compares an execution's observations and runtime errors with them and
 * classifies the result, with a root-cause signature that names what went wrong (class,
 * the op kind that produced the observed data, what was read instead, the failing call and
 * its error) and never SSA names, sizes or seeds, so one cause gives one signature.
 */
#ifndef ORACLE_ORACLE_H
#define ORACLE_ORACLE_H

#include "../gen/gen.h"
#include "../runner/asyncfuzz_rt.h"
#include "hb.h"

#define VERDICT_MAP(X)                                                                             \
  X(PASS, "pass")                                                                                  \
  X(WRONG_RESULT, "wrong_result")                                                                  \
  X(RACE, "race")                                                                                  \
  X(LIFETIME, "lifetime")                                                                          \
  X(RUNTIME_ERROR, "runtime_error")                                                                \
  X(LOWERING_REJECTED, "lowering_rejected")                                                        \
  X(LOWERING_UNCONVERTED, "lowering_unconverted")                                                  \
  X(LOWERING_CRASH, "lowering_crash")                                                              \
  X(TIMEOUT, "timeout")

typedef enum VerdictClass {
#define ORACLE__VENUM(id, name) VERDICT_##id,
  VERDICT_MAP(ORACLE__VENUM)
#undef ORACLE__VENUM
      VERDICT__COUNT
} VerdictClass;

const char *oracle_verdict_name(int cls);

typedef struct OracleObs {
  int32_t id;     /* the observe op's index */
  int32_t buf;    /* observed buffer */
  int32_t writer; /* op that last wrote the buffer before the observe (-1: host init) */
  int64_t n;
  const int32_t *vals;
} OracleObs;

typedef struct OracleExpected {
  int nobs;
  OracleObs *obs;
  int32_t *data;
} OracleExpected;

/* Expected observations of a valid case. *out is owned by the caller. */
int oracle_expect(const GenCase *c, OracleExpected **out, AfErr *err);
void oracle_expected_free(OracleExpected *e);

typedef struct Verdict {
  int cls;        /* VerdictClass */
  int obs_failed; /* observations differ from the expected ones */
  int rt_failed;  /* the runtime recorded an error */
  int hb_failed;  /* the happens-before checker reported an error that counts */
  int hb_errors;  /* how many such reports */
  int hb_first;   /* index of the first such report, or -1 */
  char signature[256];
  char detail[1024]; /* human-readable: what failed, with the trace calls involved */
  int error_seq;     /* trace record of the first runtime error, or -1 */
} Verdict;

/* Judges one execution of case c lowered by `lowering` (the spec name), from its
 * observations, its runtime errors and the happens-before reports (hb; NULL when the checker
 * is off). A refused call (invalid handle) is runtime_error; otherwise the first checker error
 * in trace order decides: an unordered conflicting access is race (a "missing edge" between
 * two Case ops), a lifetime report is lifetime; observations alone give wrong_result; any
 * other runtime error is runtime_error. A leaked buffer counts only if the case deallocates
 * it. Returns 0, or AF_ENOMEM. */
int oracle_judge(const GenCase *c, const OracleExpected *e, const RtObs *obs, int nobs,
                 const RtRec *trace, int ntrace, const RtSummary *sum, const HbResult *hb,
                 const char *lowering, Verdict *v);
/* Whether checker report r counts against the lowering for case c (see oracle_judge). */
int oracle_report_counts(const GenCase *c, const HbReport *r, const RtRec *trace, int ntrace);

#endif
