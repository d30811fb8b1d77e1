/*
 * oracle.h: what a Case must produce, and the verdict on what an execution produced.
 *
 * oracle_expect() executes a valid Case sequentially in inline order (every device op
 * completes at once, regions run where they are spawned), which is one linearization of the
 * case's happens-before order; since a valid case orders every conflicting pair, every
 * correct execution observes exactly these values.
 *
 * oracle_judge() compares an execution's observations and runtime errors with them and
 * classifies the result, with a root-cause signature that names the cause (the case link the
 * run lacked, the misused handle's travel and destroyer; docs/signatures.md) and never the
 * victims, SSA names, sizes or seeds, so one cause gives one signature; and a detailed form
 * that names the victims (the two accesses, the call that failed) for triage.
 */
#ifndef ORACLE_ORACLE_H
#define ORACLE_ORACLE_H

#include "../gen/gen.h"
#include "../runtime/asyncfuzz_rt.h"
#include "hb.h"

/* The verdict classes, X(ID, name, phase, found_by, shape):
 * - phase: what decides it (OraclePhase): a run of the lowered code (observations, runtime
 *   errors, the checker), the lowering before anything runs, or a tool around the run (the
 *   runner's JIT, a time limit);
 * - found_by: who found it, as `check` says it ("" for a run: the detectors that fired say);
 * - shape: 1 when the signature's cause is the shape of the op that stopped the case
 *   ("gpu.launch_func async deps=2+"): a campaign can steer generation away from it, and a view
 *   in the shape is kept only where it matters (check_view_free). */
#define VERDICT_MAP(X)                                                                             \
  X(PASS, "pass", RUN, "", 0)                                                                      \
  X(WRONG_RESULT, "wrong_result", RUN, "", 0)                                                      \
  X(RACE, "race", RUN, "", 0)                                                                      \
  X(LIFETIME, "lifetime", RUN, "", 0)                                                              \
  X(RUNTIME_ERROR, "runtime_error", RUN, "", 0)                                                    \
  X(LOWERING_REJECTED, "lowering_rejected", LOWERING, "mlir-opt", 1)                               \
  X(LOWERING_UNCONVERTED, "lowering_unconverted", LOWERING, "mlir-opt", 1)                         \
  X(LOWERING_CRASH, "lowering_crash", LOWERING, "mlir-opt", 0)                                     \
  X(JIT_CRASH, "jit_crash", TOOL, "mlir-runner's JIT", 0)                                          \
  X(TIMEOUT, "timeout", TOOL, "a time limit", 0)                                                   \
  X(DEVICE_ERROR, "device_error", ENVIRONMENT, "the device", 0)

typedef enum VerdictClass {
#define ORACLE__VENUM(id, name, phase, by, shape) VERDICT_##id,
  VERDICT_MAP(ORACLE__VENUM)
#undef ORACLE__VENUM
      VERDICT__COUNT
} VerdictClass;

/* RUN, LOWERING, TOOL: a finding of the lowering or of a tool; ENVIRONMENT: the device failed a
 * call (asyncfuzz --fail-calls, docs/signatures.md), never a finding. */
typedef enum OraclePhase {
  ORACLE_PHASE_RUN,
  ORACLE_PHASE_LOWERING,
  ORACLE_PHASE_TOOL,
  ORACLE_PHASE_ENVIRONMENT
} OraclePhase;

/* The class's name ("race"), or "?". */
const char *oracle_verdict_name(int cls);
/* The class of that name, or -1. */
int oracle_verdict_lookup(const char *name);
/* The class's columns of VERDICT_MAP: its OraclePhase, who found it, whether its signature names
 * an op shape. */
int oracle_verdict_phase(int cls);
const char *oracle_verdict_found_by(int cls);
int oracle_verdict_names_shape(int cls);

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

/* One word the sequential reference wrote: op (-1: the buffer's initial content), buffer and
 * word (32-bit words, two per i64 element), the value before and after, and for a copy the
 * word it came from (sbuf -1 otherwise). */
typedef struct OracleWrite {
  int32_t op, buf, word;
  int32_t old, val;
  int32_t sbuf, sword;
} OracleWrite;

/* Every word the reference writes, in order, the initial contents first. *log is af_free'd by
 * the caller. 0 or AF_ENOMEM. (expect.c) */
int oracle_write_log(const GenCase *c, OracleWrite **log, int *nlog, AfErr *err);

/* Which op wrote the wrong bytes of an observation (blame.c): x the expected one, got the
 * values seen. Writes its form into out, as docs/signatures.md "Wrong values" says:
 * "view-offset" or "view-stride" for views that lost that parameter (the reference, with it
 * lost, gives what was seen; or the wrong elements lie where it would move them), else the
 * op's kind and element type ("gpu.memcpy i64"); "" when no op can be named. 0 or
 * AF_ENOMEM. */
int oracle_wrong_bytes(const GenCase *c, const OracleObs *x, const int32_t *got, char *out,
                       size_t n);
/* Op `op` of c as the form that writes bytes: its MLIR kind and the element type it writes
 * ("gpu.memcpy i64", "gpu.launch_func i32"). */
void oracle_op_form(const GenCase *c, int op, char *out, size_t n);

/* A further cause a run showed beside its headline one (docs/signatures.md, "Independent
 * causes"): a leak beside a race or a wrong value, and the reverse. */
#define VERDICT_MAX_ALSO 2
typedef struct VerdictCause {
  int cls;             /* VerdictClass */
  char signature[256]; /* its cause, as Verdict.signature */
  char victim[256];    /* its detailed form */
} VerdictCause;

typedef struct Verdict {
  int cls;             /* VerdictClass */
  int obs_failed;      /* observations differ from the expected ones */
  int rt_failed;       /* the runtime recorded an error */
  int hb_failed;       /* the happens-before checker reported an error that counts */
  int hb_errors;       /* how many such reports */
  int hb_first;        /* index of the first such report, or -1 */
  char signature[256]; /* the cause: one per bug (docs/signatures.md) */
  char victim[256];    /* the detailed form: which accesses or calls it hit */
  char detail[1024];   /* human-readable: what failed, with the trace calls involved */
  int error_seq;       /* trace record of the first runtime error, or -1 */
  int nalso;           /* independent causes beside the headline one (cls, signature) */
  VerdictCause also[VERDICT_MAX_ALSO];
} Verdict;

/* Whether run v shows cause sig: its headline signature or one of its independent causes. */
int oracle_verdict_has(const Verdict *v, const char *sig);

/* Judges one execution of case c lowered by `lowering` (the spec name), from its
 * observations, its runtime errors and the happens-before reports (hb; NULL when the checker
 * is off). A refused call (invalid handle) is runtime_error; otherwise the first checker error
 * in trace order decides: an unordered conflicting access is race (a "missing edge" between
 * two Case ops), a lifetime report is lifetime; observations alone give wrong_result; any
 * other runtime error is runtime_error. A leaked buffer counts only if the case deallocates
 * it. The headline keeps that order; v->also lists the causes independent of it: a leak (never
 * the consequence of a missing edge) beside an ordering error or a wrong value, and an ordering
 * error or a wrong value beside a headline leak, unless a misused handle or a refused or failed
 * call (not a device step that faulted) in the same run can explain them all; a wrong value only
 * when no ordering error can explain it. Returns 0, or AF_ENOMEM. */
int oracle_judge(const GenCase *c, const OracleExpected *e, const RtObs *obs, int nobs,
                 const RtRec *trace, int ntrace, const RtSummary *sum, const HbResult *hb,
                 const char *lowering, Verdict *v);
/* The mechanisms by which a case orders one op after another (docs/signatures.md). */
#define ORACLE_LINK_MAP(X)                                                                         \
  X(OWN_DEP, "own-dep")           /* the op's first dependency */                                  \
  X(EXTRA_DEP, "extra-dep")       /* a dependency after the first */                               \
  X(HOST_WAIT, "host-wait")       /* gpu.wait [deps]: the host blocks */                           \
  X(DEALLOC, "dealloc-order")     /* a dealloc's dependency */                                     \
  X(AWAIT_VALUE, "await-value")   /* a token yielded by a region and awaited */                    \
  X(REGION_INPUT, "region-input") /* a token a region receives from another region */              \
  X(CAPTURE, "capture")           /* a token a region uses from the context that spawns it */      \
  X(STREAM_ORDER, "stream-order") /* work on one explicit stream runs in order; a stream_sync or   \
                                     stream_destroy follows it */                                  \
  X(CALL_ARG, "call-arg")         /* a first dependency on a token passed to a function */         \
  X(CALL_RESULT, "call-result")   /* ... on the token a function returned */                       \
  X(IF_RESULT, "if-result")       /* ... on the token an scf.if yielded */                         \
  X(LOOP_CARRIED, "loop-carried") /* ... on an scf.for's iter_arg; or one iteration's access       \
                                     racing another's */                                           \
  X(LOOP_RESULT, "loop-result")   /* ... on the token an scf.for returned */                       \
  X(BRANCH_ARG, "branch-arg")     /* ... on a block argument a cf.cond_br passed */                \
  X(MERGE_ARG, "merge-arg")       /* ... on the argument of a block two branches reach */          \
  X(SPAWN, "spawn")               /* a region starts after its async.execute */                    \
  X(REGION_END, "region-end")     /* a region ends after its synchronous ops */                    \
  X(AWAIT, "await")               /* async.await follows its region's end */                       \
  X(PROGRAM, "program-order")     /* a synchronous op precedes the later ops of its context */     \
  X(REGISTERED_COPY, "registered-copy") /* a host wait on a copy from the device into registered   \
                                           host memory, where the run's other host waits block */  \
  X(DEFAULT_STREAM, "default-stream")   /* an async copy or set the lowering put on the default    \
                                           stream, which its token's stream does not order */

typedef enum OracleLinkMech {
#define ORACLE__LENUM(id, name) ORACLE_LINK_##id,
  ORACLE_LINK_MAP(ORACLE__LENUM)
#undef ORACLE__LENUM
      ORACLE_LINK__COUNT
} OracleLinkMech;

const char *oracle_link_name(int mech);

typedef struct OracleLink {
  int from, to; /* case ops (-1: a region's start or end) */
  int mech;     /* OracleLinkMech, -1 when none was found */
  int dep;      /* the dependency index of a token link, else -1 */
} OracleLink;

/* When ops op1 and op2 of a checker report are in one scf.for body and its calls seq1 and seq2
 * ran in different iterations, the carried token is the missing link: fills *out (mechanism
 * loop-carried, consumer op2) and returns 1; else 0. */
int oracle_loop_link(const GenCase *c, const RtRec *trace, int ntrace, int op1, int32_t seq1,
                     int op2, int32_t seq2, OracleLink *out);

/* The first link on the case's paths from op `from` to op `to` that the execution lacked:
 * `from` made trace record seq, and k (checked with HbOptions.nops) says which ops knew it.
 * trace (may be NULL) tells whether a region's execute op handed anything over for the tokens
 * it captures. out->mech is -1 when no link can be named (k lacks the knowledge, the ops are
 * not ordered). 0 or AF_ENOMEM. (cause.c) */
int oracle_missing_link(const GenCase *c, const HbResult *k, const RtRec *trace, int ntrace,
                        int from, int32_t seq, int to, OracleLink *out);

/* The streams a case op's calls were ordered after, in one go of the op (trace_order.c): the
 * stream its work went on or the host synchronized, and the streams of the events it waited
 * for. */
#define ORACLE_MAX_SYNCS 16
typedef struct OracleSyncs {
  RtRef s[ORACLE_MAX_SYNCS];
  int32_t at[ORACLE_MAX_SYNCS]; /* the record as of which each orders the op: an event's record,
                                   else the op's first call */
  int n;
  int32_t first; /* the op's first call of that go */
} OracleSyncs;

/* Op n's first go after trace record `after` (its calls from the first one after it until
 * another op's). 0 when n made no call after it. */
int oracle_consumer_syncs(const RtRec *trace, int ntrace, int n, int32_t after, OracleSyncs *sy);
/* Whether that go was ordered after op src's last stream call before it: 1, 0, -1 when src
 * made none. */
int oracle_ordered_after(const RtRec *trace, const OracleSyncs *sy, int src);
/* Whether that go was ordered after a stream some other case op had made or used before: the
 * op synchronized with something, not with a stream or nothing of its own. */
int oracle_synced_elsewhere(const RtRec *trace, const OracleSyncs *sy, int n);
/* Whether op n's first go after record `after` was ordered after nothing but a stream of its
 * own: its calls waited for nothing, on a stream no other op had used. 0 when it made no call
 * then. */
int oracle_synced_with_nothing(const RtRec *trace, int ntrace, int n, int32_t after);

/* Whether op `to` waited (on a stream, or the host) for an event that op `from` recorded on
 * the stream of its call seq just before that call put its work there (in the same go of
 * `from`), directly or through the events the recording streams waited for: an order the
 * lowering did carry, with an event that stood for too little (docs/signatures.md,
 * `event-before-work`). (trace_order.c) */
int oracle_event_before_work(const GenCase *c, const RtRec *trace, int ntrace, int from,
                             int32_t seq, int to);

/* A link as a signature's words: its mechanism and the parts of its consumer's shape that
 * matter to it ("extra-dep|gpu.memcpy async", "host-wait|gpu.wait deps=2+|dep#1+",
 * "await-value|gpu.launch_func async@region"); docs/signatures.md. */
void oracle_link_format(const GenCase *c, const OracleLink *l, char *out, size_t n);

/* What a leaked event was made for, by the calls that used it: "stream-wait", "host-wait" or
 * "unused". (leak.c) */
const char *oracle_event_use(RtRef h, const RtRec *trace, int ntrace);
/* How a leaked stream ended, when that names its cause better than its maker:
 * "handed-on:event" or "unconsumed"; NULL otherwise. (leak.c) */
const char *oracle_stream_end(const GenCase *c, RtRef h, const RtRec *trace, int ntrace);

/* How handle h, used by case op `user` at record `before`, reached it from the op that made it:
 * "yield", a block crossing ("call-arg", "merge-arg"...), "own-context", "into-region" (a
 * capture), or "unknown" where the maker is not known or no dependency leads back to it; the
 * `via:` word of a misused-handle signature. (travel.c) */
const char *oracle_handle_travel(const GenCase *c, RtRef h, const RtRec *trace, int ntrace,
                                 int before, int user);

/* The run as if every call the runtime refused for its handle (a wrong kind, none, null) had
 * succeeded on the handle it was given (a sync or destroy of an event given a stream syncs or
 * destroys the stream; a stream that waits for a stream waits for its work, through a fresh
 * event), the calls nothing can mean left out; numbered anew into *out (the caller frees it).
 * 0 or AF_ENOMEM. (refused.c) */
int oracle_as_if_succeeded(const RtRec *trace, int ntrace, RtRec **out, int *nout);

/* What a misused handle was, as signatures name it: stream, event, null, device-ptr, host-ptr,
 * other. */
const char *oracle_handle_kind(RtRef r);

/* Whether checker report r counts against the lowering for case c (see oracle_judge). */
int oracle_report_counts(const GenCase *c, const HbReport *r, const RtRec *trace, int ntrace);

/* The checker's reports, one per line ("  " first); with c, an error report that does not count
 * says so. */
void oracle_format_reports(AfBuf *b, const GenCase *c, const HbResult *hb, const RtRec *trace,
                           int ntrace);
/* "verdict: CLASS", and for a failure its signature, detailed signature and detail (a line
 * each), as `run` and `check-trace` print them. */
void oracle_format_verdict(AfBuf *b, const Verdict *v);

#endif
