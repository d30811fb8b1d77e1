/*
 * check.h: the engine's core step. One case (or a batch of cases) through one lowering,
 * executed under several schedules on a backend, each execution judged by the oracle and the
 * happens-before checker: gen -> lower -> runner -> oracle. Shared by the command line, the
 * campaign driver, the batch runner, the reducer's tests, the tests and the benchmarks; it
 * never prints.
 */
#ifndef CHECK_CHECK_H
#define CHECK_CHECK_H

#include "../gen/gen.h"
#include "../lower/lower.h"
#include "../oracle/oracle.h"

struct MlirLowered; /* lower/mlir.h */

#define CHECK_MAX_SCHED 64

typedef struct Schedule {
  int policy; /* RtPolicy */
  uint64_t seed;
} Schedule;

/* Parses "eager,lazy,random:3,pct:2@7": NAME[:COUNT][@SEED]. Without @SEED, the seeds of a
 * policy's COUNT schedules derive from base_seed. Returns 0 or AF_EUSAGE. */
int check_parse_schedules(const char *spec, uint64_t base_seed, Schedule *out, int max, int *n,
                          AfErr *err);
/* "lazy@1234": how a schedule is written in replay commands. */
void check_schedule_str(const Schedule *s, char *out, size_t n);

typedef struct CheckOpts {
  int no_checker;    /* judge by observations and runtime errors only */
  int memfree_sync;  /* lenient mgpuMemFree: the sim synchronizes, the checker credits it */
  int record_device; /* DEV lines in traces */
  int stop_at_first; /* stop at the first failing schedule */
  int backend;       /* RtBackend: where lowered code runs */
  int raw_handles;   /* cuda: the driver's own handles (cuda:raw) */
  int spin;          /* cuda: >0 replaces every launch's spin count (calibrated or given) */
  int isolate;       /* cuda, builtin lowering: run in the GPU child process (gpu_child.c) */
  int abi;           /* 0: the flavour of the lowering and backend (rocm for rocdl code and
                        on hip, else cuda); else 1 + RtAbi (--abi) */
  int fail_pct;      /* --fail-calls PCT: the device fails a call on purpose in this share of
                        runs (RtConfig.fail_pct; mlir-runner's: ASYNCFUZZ_FAIL_CALLS) */
  int gpu_jobs;      /* a GPU: cases at once, each in a child process of its own (its own
                        context, streams and buffers); 0: CHECK_GPU_JOBS (--gpu-jobs) */
} CheckOpts;

/* Cases at once on a GPU by default (CheckOpts.gpu_jobs), and at most. */
#define CHECK_GPU_JOBS 4
#define CHECK_GPU_JOBS_MAX 64
/* o->gpu_jobs, or the default: how many cases a GPU backend runs at once. */
int check_gpu_jobs(const CheckOpts *o);

/* The RtAbi runs of spec follow under o (o->abi, else rocm on hip or for rocdl code, else
 * cuda). */
int check_abi(const LowerSpec *spec, const CheckOpts *o);
/* 0 when code of spec can run on o's backend under its flavour; AF_EUSAGE with the reason
 * (rocdl code on cuda, or on hip without a code object; nvvm code on hip; the rocm flavour on
 * cuda, the cuda flavour on hip). */
int check_runs_on(const LowerSpec *spec, const CheckOpts *o, AfErr *err);
/* "sim", "cuda" or "cuda:raw": the backend as runs and the database record it. */
const char *check_backend_name(const CheckOpts *o);
/* " --backend cuda --spin 4096 --abi rocm": the backend and ABI options of replay commands ("" for
 * the sim with the lowering's own flavour). */
const char *check_backend_args(const CheckOpts *o);

/* The command that replays a run of the case at path under spec, schedule s and o's backend
 * (NULL: the sim with the lowering's flavour), written to out (n bytes), which it returns: the
 * one form of every replay line (replay.c). CHECK_REPLAY_CHECK: "asyncfuzz check PATH --lowering
 * SPEC --schedules lazy@7 --backend ..."; CHECK_REPLAY_TRACE: "asyncfuzz run PATH --lowering SPEC
 * --policy lazy --sched-seed 7 --trace - --backend ...", which prints the run's trace. */
typedef enum CheckReplay { CHECK_REPLAY_CHECK, CHECK_REPLAY_TRACE } CheckReplay;
char *check_replay(char *out, size_t n, CheckReplay form, const char *path, const LowerSpec *spec,
                   const Schedule *s, const CheckOpts *o);

/* ---- running a builtin Program; a trace read back (interp.c, trace_io.c) ---- */

/* Runs p through the runtime library (asyncfuzz_rt.h), from asyncfuzz_rt_begin(cfg) to
 * asyncfuzz_rt_end(): main and every async.execute region are tasks, interleaved at instruction
 * granularity on one OS thread, deterministically (eager runs a spawned region at once, like an
 * idle worker pool; lazy runs the host ahead until it blocks; random and pct pick a runnable task
 * at random from the schedule seed); each instruction is an mgpu* call (or a region note) made
 * with the task's id as the trace thread. Afterwards the trace, observations and summary of the
 * run are readable through asyncfuzz_rt.h. Returns 0, or AF_EDEADLOCK / AF_ENOMEM (with err set)
 * when the program could not run to its end. */
int check_run_program(const LowerProgram *p, const RtConfig *cfg, AfErr *err);

/* A trace read back from a file (a run of code compiled by MLIR). */
typedef struct CheckTrace {
  RtSummary sum;
  int abi; /* RtAbi: the flavour the run followed */
  int nrecs, nobs;
  RtRec *recs;
  RtObs *obs;
  int32_t *vals;
} CheckTrace;

/* Loads a binary trace (asyncfuzz_rt_write_trace_bin). AF_EIO, AF_EPARSE (with the reason:
 * not a trace, another build's format, truncated, corrupt) or AF_ENOMEM on failure. */
int check_trace_load(const char *path, CheckTrace *t, AfErr *err);
void check_trace_free(CheckTrace *t);

typedef struct CheckResult {
  int nsched;
  Schedule sched[CHECK_MAX_SCHED];
  Verdict verdict[CHECK_MAX_SCHED];
  int first_fail;    /* index of the first failing schedule, or -1 (a device_error is none) */
  int device_errors; /* schedules whose device failed a call on purpose (--fail-calls):
                        device_error verdicts, environment failures, never findings */
  int executed;      /* the lowered code ran: the lowering did not stop the case before it */
} CheckResult;

/* Runs a valid case through lowering `spec` under schedules s[0..ns). The expected
 * observations may be passed in (e) or are computed when e is NULL. Returns 0 (whatever the
 * verdicts) or a negative error when the pipeline itself could not run. */
int check_case(const GenCase *c, const LowerSpec *spec, const Schedule *s, int ns,
               const OracleExpected *e, const CheckOpts *o, CheckResult *out, AfErr *err);

/* Checks cases cs[0..n) through one lowering, out[i] for case i; es may be NULL (or hold
 * NULLs). For mlir-opt the cases are lowered and run as batches (check/mlir.c); for the
 * builtin lowering this is check_cases_sched with every case under s. */
int check_cases(const GenCase *const *cs, int n, const LowerSpec *spec, const Schedule *s, int ns,
                const OracleExpected *const *es, const CheckOpts *o, CheckResult *out, AfErr *err);
/* check_case on each of cs[0..n), case i under schedules s[i * sstride .. i * sstride + ns)
 * (sstride 0: s[0..ns) for every case). On a GPU backend in isolation (o->isolate) up to
 * check_gpu_jobs(o) cases run at once, each in its own GPU child (gpu_child.c); the verdicts
 * are those of one at a time. */
int check_cases_sched(const GenCase *const *cs, int n, const LowerSpec *spec, const Schedule *s,
                      int sstride, int ns, const OracleExpected *const *es, const CheckOpts *o,
                      CheckResult *out, AfErr *err);
/* The verdict of a case mlir-opt did not lower fully (class, signature, detail). */
void check_lowering_verdict(const LowerSpec *spec, const struct MlirLowered *l, Verdict *v);

/* Judges a binary trace file (a case run by compiled code) against case c. *found: whether the
 * file exists (a run that never finished wrote none). */
int check_judge_trace(const char *path, const GenCase *c, const LowerSpec *spec,
                      const OracleExpected *e, const CheckOpts *o, Verdict *v, int *found,
                      AfErr *err);

/* A lowering verdict named by an op on a view ("...|gpu.memset async deps=2+ view") or on a
 * buffer in a memory space ("... space") keeps the word in its name only if it matters: case c
 * is run again under s with every view dropped (every buffer in the default space), and if that
 * fails with the same name less " view" (" space"), returns 1 with that verdict in *pv (its
 * detail v's, noting that the word does not matter) and that case in *plain (the caller frees
 * it). One named by a gpu.launch the pipeline outlined is named as the gpu.launch_func it became
 * where the case with every launch a gpu.launch_func fails by that name. Returns 0 when v is not
 * of that form or the word matters, or an AF_E* code. */
int check_view_free(const GenCase *c, const LowerSpec *spec, const Schedule *s, const CheckOpts *o,
                    const Verdict *v, GenCase *plain, Verdict *pv, AfErr *err);

/* Which of the forms case c holds its crash v (a lowering or JIT crash) needs: c is run again
 * under s without each in turn (every buffer of rank 1; in the default memory space; every view
 * dropped; every gpu.launch a gpu.launch_func; no host buffer registered), and a form without
 * which it no longer fails with v's name is needed. Each needed form's word ("ranked", "space",
 * "view", "gpu.launch", "registered") goes into words (comma-separated), and what steering avoids
 * for it into need (the shape of each op of c that has it, or its construct).
 * Returns how many forms it needs (0 also when v is no crash or c holds none), or an AF_E* code. */
int check_crash_forms(const GenCase *c, const LowerSpec *spec, const Schedule *s,
                      const CheckOpts *o, const Verdict *v, GenAvoid *need, char *words, size_t n,
                      AfErr *err);

/* check_view_free on every schedule's verdict of r (a case c through spec): as a campaign
 * names them. 0 or an AF_E* code. */
int check_view_free_all(const GenCase *c, const LowerSpec *spec, const CheckOpts *o, CheckResult *r,
                        AfErr *err);
/* A reduction test (reduce/reduce.h): whether a candidate case still fails with `signature`
 * under one of the schedules. */
typedef struct CheckSigTest {
  const LowerSpec *spec;
  const Schedule *s;
  int ns;
  CheckOpts o;
  const char *signature;
} CheckSigTest;
int check_signature_test(const GenCase *c, void *ctx);
/* The same for many candidates in one batch (check_cases: for mlir-opt, one
 * mlir-opt and one mlir-runner process for all of them). */
int check_signature_test_many(const GenCase *const *cs, int n, int *interesting, void *ctx);

/* ---- a failing run as the database records it (record.c) ---- */
struct StoreOccurrence; /* results/store.h */
typedef struct CheckRecord {
  char sched[64];    /* the schedule, as replay commands write it */
  char *json, *mlir; /* the case and its .mlir, rendered as the lowering runs it (NULL: none) */
} CheckRecord;
/* Fills *oc with the occurrence of v (case c through spec under s, on o's backend): signature,
 * class, detail and detailed form, lowering, lower_version(), pipeline (mlir-opt only), backend,
 * schedule, case seed and size; with_case: the case and its rendering too. The strings point
 * into v, spec, c and r; the caller sets what only it knows (replay, trace, reproduction rate)
 * and frees r with check_record_free. 0 or AF_ENOMEM. */
int check_record(CheckRecord *r, struct StoreOccurrence *oc, const GenCase *c,
                 const LowerSpec *spec, const Verdict *v, const Schedule *s, const CheckOpts *o,
                 int with_case);
void check_record_free(CheckRecord *r);

/* The .mlir reproducer of a (reduced) case: RUN lines (mlir-opt's pipeline piped into
 * mlir-runner with the runtime library), the verdict v of its failing run under s and, for
 * the builtin lowering, the runtime's trace of the run just made, as comments; then the
 * module. Its replay line runs the sim under o's ABI flavour (o: NULL for the lowering's own).
 * Text owned by the caller, or NULL. */
char *check_reproducer(const GenCase *c, const LowerSpec *spec, const Schedule *s, const Verdict *v,
                       const CheckOpts *o, const char *case_path);

/* Lowers and runs once; the runtime's trace and observations stay readable afterwards. An
 * isolated cuda run (o->isolate) runs on the sim here: this process never opens the GPU. */
int check_run_once(const GenCase *c, const LowerSpec *spec, const Schedule *s, const CheckOpts *o,
                   const OracleExpected *e, Verdict *v, AfErr *err);

/* ---- GPU work in child processes (gpu_child.c) ----
 * A cuda or hip run of the builtin lowering goes to long-lived child processes that opened the
 * device themselves (the parent never initializes CUDA, so it may fork): the first calibrates,
 * and up to check_gpu_jobs(o) run cases at once, each with its own context, streams and
 * buffers. The parent waits for each case with a watchdog ($ASYNCFUZZ_GPU_TIMEOUT seconds,
 * default 60). A child that dies (a driver crash), hangs, or reports a sticky context error
 * gives that case a verdict (runtime_error |device-process| or timeout |device|) and is
 * replaced for the next case. */
typedef struct CheckGpuInfo {
  RtDeviceInfo dev;
  int spin;       /* the spin count in use (0: each case's own) */
  double spin_us; /* af_fill's time at that spin, when calibrated */
  int restarts;   /* children replaced after a fault, hang or sticky error */
} CheckGpuInfo;
/* Starts the first child if none runs (o->spin < 0: calibrate to $ASYNCFUZZ_SPIN_US microseconds,
 * default 200) and describes it. AF_EUNSUPPORTED with the reason when the device cannot open. */
int check_gpu_info(const CheckOpts *o, CheckGpuInfo *info, AfErr *err);
/* How many GPU children this process replaced so far (CheckGpuInfo.restarts), starting none. */
int check_gpu_restarts(void);
/* The most GPU children this process ran at once so far (check_cases_sched's concurrency). */
int check_gpu_peak(void);
/* The GPU children stopped (they exit when their pipe closes). */
void check_gpu_stop(void);
/* "cuda NAME (sm_90, 132 SMs, 81559 MiB, driver 13.0, built with CUDA 13.0), spin 4096
 * (calibrated: 201.3 us)": the device as runs record it. */
void check_gpu_describe(const CheckOpts *o, const CheckGpuInfo *gi, char *dev, size_t n);
/* "NAME (sm_90, 132 SMs, 81559 MiB, driver 13.0, built with CUDA 13.0)", or for hip "NAME
 * (gfx90a:sramecc+:xnack-, 104 CUs, 65520 MiB, driver 50221153, built with HIP 5.2)". */
void check_device_str(const CheckOpts *o, const RtDeviceInfo *d, char *out, size_t n);

/* check's output of a case (format.c). One line of JSON of its runs through one lowering, or
 * their text (header: name the lowering first; the replay command names o's backend). */
void check_format_json(AfBuf *b, const char *path, const LowerSpec *spec, const CheckResult *res);
void check_format_text(AfBuf *b, const char *path, const LowerSpec *spec, const CheckResult *res,
                       int header, const CheckOpts *o);
/* Case j of npaths checked with nlow lowerings (res: lowering-major, nlow x npaths): JSON
 * lines or text; with several lowerings, whether and where their verdicts differ. Returns
 * whether the case failed with any lowering. */
int check_format_case(AfBuf *b, const char *path, int j, int npaths, const LowerSpec *specs,
                      int nlow, const CheckResult *res, int json, const CheckOpts *o);

/* What `run` prints of the run just made: the observations, the verdict, the checker's reports
 * (unless o->no_checker). */
void check_format_run(AfBuf *b, const GenCase *c, const LowerSpec *spec, const CheckOpts *o,
                      const Verdict *v);
/* `run --trace FILE|- --trace-bin FILE`: the run's text trace (headed by its lowering, policy and
 * seed) and its binary trace (either path NULL: not written). 0, AF_EIO or AF_ENOMEM. */
int check_write_traces(const char *path, const char *bin_path, const LowerSpec *spec,
                       const char *policy, uint64_t seed, AfErr *err);
/* check-trace: the happens-before checker's reports over the binary trace in path (with print,
 * every record too) into b; with c (NULL: none), the run judged against that case as lowering
 * `lowering`. *failed: something is wrong. 0, or AF_EIO/AF_EPARSE (a bad file), AF_ENOMEM,
 * AF_EINTERNAL. */
int check_trace_report(const char *path, const GenCase *c, const char *lowering, int lenient,
                       int print, AfBuf *b, int *failed, AfErr *err);

/* ---- a user's program (check-mlir: program.c, prog_judge.c, prog_format.c, prog_record.c;
 * the kernels' effects: gen_mlir_kernels) */
enum { PROG_LEAKS_WARN, PROG_LEAKS_ERROR, PROG_LEAKS_OFF };
#define PROG_MAX_RUNNER_ARGS 16
#define PROG_MAX_FINDINGS 12
typedef struct ProgOpts {
  const char *entry; /* the entry point (NULL: main) */
  const char
      *entry_result; /* what it returns, as mlir-runner's --entry-point-result (NULL: void) */
  const char *libs;  /* more shared libraries for the runner, comma-separated (NULL: none) */
  const char *runner_args[PROG_MAX_RUNNER_ARGS]; /* more options for the runner */
  int nrunner_args;
  int lowered;      /* the file is in the LLVM dialect already: run it as it is */
  int leaks;        /* PROG_LEAKS_*: what a leaked stream, event or buffer is */
  int memfree_sync; /* as CheckOpts */
  int abi;          /* as CheckOpts */
  double timeout;   /* seconds per run (<= 0: 60) */
} ProgOpts;
typedef struct ProgFinding {
  int cls;             /* VerdictClass */
  int warning;         /* a leak under PROG_LEAKS_WARN: said, not failed */
  char signature[300]; /* "mlir-opt|race|host_read_before_complete|gpu.memcpy async deps=1->..." */
  char victim[300];    /* the detailed form: the program's lines */
  char detail[1024];   /* the checker's report, the trace calls */
} ProgFinding;
typedef struct ProgRun {
  Schedule sched;
  int ran;     /* the program ran to its end and wrote its trace */
  int refused; /* a call was refused its handle: what that explains is no finding of its own */
  char *out;   /* what it printed (memref addresses made equal) */
  int nfind;
  ProgFinding find[PROG_MAX_FINDINGS]; /* misused handles first, then in trace order */
} ProgRun;
typedef struct ProgResult {
  char *text;    /* the program */
  char *kernels; /* its kernels' effects (kernel_foreign_set's table; NULL with --lowered) */
  int lowered;   /* MLIR_OK, or how mlir-opt stopped (lowering: its verdict) */
  Verdict lowering;
  int nruns;
  ProgRun runs[CHECK_MAX_SCHED];
  char dir[4096]; /* the work directory, kept with ASYNCFUZZ_KEEP_TMP ("" otherwise) */
} ProgResult;
/* Lowers the program in path with spec (an mlir-opt lowering; o->lowered: none) and runs it
 * under schedules s[0..ns), judging each run. 0 (whatever the verdicts) or an AF_E* code when
 * it could not be done (an unreadable file, no tools). */
int check_program(const char *path, const LowerSpec *spec, const Schedule *s, int ns,
                  const ProgOpts *o, ProgResult *res, AfErr *err);
void check_program_free(ProgResult *res);
/* The configurations a program is checked on: the matrix of axes (not NULL), else each of
 * lowerings[0..nlow) (none: plain mlir-opt) with pipeline (NULL: their own). *specs (af_free)
 * and *n; notes: what the matrix left out. 0, AF_EUSAGE (a spec that is not mlir-opt's) or
 * AF_EINVALID (the tools). */
struct MlirMatrixAxes;
int check_program_specs(const char *const *lowerings, int nlow, const char *pipeline,
                        const struct MlirMatrixAxes *axes, LowerSpec **specs, int *n, char *notes,
                        size_t nn, AfErr *err);
/* Whether a run failed (a finding that is not a warning). */
int check_prog_run_failed(const ProgRun *run);
/* A program's result through one configuration, as text (every run's verdict, the findings
 * once each) or one JSON line. Returns whether it failed. */
int check_format_program(AfBuf *b, const char *path, const LowerSpec *spec, const ProgResult *r,
                         int json);
/* Records res[0..n) (the program in path through specs[0..n)) in database db as one run of it:
 * each finding once per configuration, with its reproduction count over the schedules (warnings
 * are not findings). replay_args: what the replay command adds (" --leaks error"). *nnew: the
 * findings new to the database. 0 or an AF_E* code. */
int check_program_record(const char *db, const char *path, const LowerSpec *specs,
                         const ProgResult *res, int n, const char *replay_args, int *nnew,
                         AfErr *err);
#endif
