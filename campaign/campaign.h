/*
 * campaign.h: the campaign driver. Generates cases from consecutive seeds (swarm knobs by
 * default), checks each through every lowering (check.h) under the schedules, and records
 * every failing case by root-cause signature: under DIR/failures/<hash>/ (first.json,
 * smallest.json, info.txt with the replay commands, minimized.json and reproducer.mlir from
 * the reducer) and in the regression database (results/store.h). With several lowerings, the
 * cases on which their verdicts differ are counted per pair of verdicts.
 *
 * It runs until a deadline or a case count, or until *stop is set (a signal handler), always
 * after the batch in flight; it writes DIR/summary.json and DIR/campaign-state.json (where
 * --resume goes on). With jobs > 1 it forks worker processes that share the seed sequence
 * (worker w: seed + w + jobs * i; of shard I of N: seed + I + N * (w + jobs * i)) and the
 * database; the workers end with _exit, and only the calling process returns.
 *
 * It never prints: progress and the problems it meets go to the hooks.
 */
#ifndef CAMPAIGN_CAMPAIGN_H
#define CAMPAIGN_CAMPAIGN_H

#include "../check/check.h"
#include "../lower/mlir.h"

#include <signal.h>

#define CAMPAIGN_MAX_LOWERINGS 8
#define CAMPAIGN_MAX_CONFIGS 64

typedef struct CampaignConfig {
  const char *out;        /* the output directory (created) */
  const LowerSpec *specs; /* the lowerings, 1..CAMPAIGN_MAX_LOWERINGS (the caller's) */
  int nspecs;
  /* the configuration matrix of lowering matrix_low (mlir_matrix): each batch runs on the
   * next configuration in turn, and each new finding's minimized case on all of them. Flat
   * lowering index nspecs + i is configuration i (campaign_spec). nmatrix 0: none. */
  const LowerSpec *matrix;
  int nmatrix, matrix_low;
  GenConfig cfg;            /* the generator's knobs */
  int swarm;                /* each case draws its own knobs around cfg */
  int batch;                /* cases per batch (mlir-opt: per process); 0: 64, or 16 with
                               a matrix */
  const char *sched_spec;   /* the schedules, e.g. "lazy,random,pct" */
  CheckOpts opts;           /* backend, checker options */
  int fail_pct;             /* --fail-calls PCT: the device fails a call on purpose in this share
                               of the loop's runs (CheckOpts.fail_pct); never in reductions,
                               reproductions, the matrix or replays */
  const char *device;       /* the device line, as recorded */
  uint64_t seed;            /* the first case seed */
  long seconds;             /* the time limit (when max_cases <= 0) */
  int until;                /* seconds is to a time of day (--until): resumed as it is */
  int shard, nshards;       /* shard I of N (nshards <= 1: none): seeds SEED + I + N * k */
  long max_cases;           /* > 0: stop after this many cases */
  int jobs;                 /* worker processes (1: this one) */
  const char *db_path;      /* the regression database, NULL: none */
  int repro;                /* re-runs of a new finding for its reproduction rate */
  int reduce;               /* reduce new findings within the campaign's time */
  int reduce_seconds;       /* > 0: at most this long per finding (then the smallest so far) */
  int avoid_known;          /* steer generation away from the causes of known/wontfix findings */
  int avoid_found;          /* ... and from those of the findings of this run */
  int explore_permille;     /* cases made with nothing avoided, per thousand */
  int features;             /* count the semantic features the cases reach (base/feat.h) */
  int guided;               /* cases come from a fuzzer (campaign_guided_*), not from seeds */
  const char *seed_dirs[8]; /* corpus directories (asyncfuzz fuzz's): their inputs are checked
                               first (a plain campaign with one process), then the seeds */
  int nseed_dirs;
  volatile sig_atomic_t *stop; /* set asynchronously: stop after the batch in flight */
} CampaignConfig;

/* What the status line shows. */
/* Where a campaign process's time goes, in wall seconds: generating cases (and their expected
 * observations); mlir-opt, mlir-runner and other tools' processes while cases are checked; the
 * rest of checking (the simulator, the checker, judging, the harness around the tools); a
 * failing case's recording (re-runs for its reproduction rate, files), reduction and matrix
 * checks of new findings (their tools included), the database, a guided run's fuzzer between its
 * cases (libFuzzer, the structure-aware mutations), and the rest. */
#define CAMPAIGN_TIME_MAP(X)                                                                       \
  X(GEN, "generation")                                                                             \
  X(MLIR_OPT, "mlir-opt")                                                                          \
  X(RUNNER, "mlir-runner")                                                                         \
  X(TOOLS, "other tools")                                                                          \
  X(CHECK, "sim, checker and harness")                                                             \
  X(FINDINGS, "recording failures")                                                                \
  X(REDUCE, "reduction")                                                                           \
  X(MATRIX, "matrix checks")                                                                       \
  X(DB, "database")                                                                                \
  X(FUZZER, "fuzzer and mutations")                                                                \
  X(OTHER, "other")

enum {
#define CAMPAIGN__TENUM(id, name) CAMPAIGN_T_##id,
  CAMPAIGN_TIME_MAP(CAMPAIGN__TENUM)
#undef CAMPAIGN__TENUM
      CAMPAIGN_T__COUNT
};

/* The name of time bucket i ("mlir-opt"). */
const char *campaign_time_name(int i);

/* Cases per configuration of the matrix. mix[i]: the executed cases that hold GPU work
 * GEN_GPU_MIX_* i; base_mix[i]: of the cases generated (base_cases), how many would hold it
 * without steering (the same seeds and knobs, nothing avoided). forms[f]: the cases run that
 * exercise form f of the types and launches (gen.h GEN_FORM_MAP), forms_executed[f]: of them,
 * the executed ones. */
typedef struct CampaignConfCount {
  long cases, executed, failures;
  long mix[GEN_GPU_MIX__COUNT];
  long base_cases, base_mix[GEN_GPU_MIX__COUNT];
  long forms[GEN_FORM__COUNT], forms_executed[GEN_FORM__COUNT];
} CampaignConfCount;

typedef struct CampaignStatus {
  double elapsed;
  double time[CAMPAIGN_T__COUNT]; /* where it went (summed over workers: process seconds) */
  long cases, failures;
  long executed;      /* cases that reached execution with every lowering (none stopped
                         them before their code ran: see CheckResult.executed) */
  long avoided;       /* cases generated with something avoided */
  long device_errors; /* cases with a run whose device failed a call on purpose (--fail-calls):
                         device_error verdicts, not failures */
  int navoid;         /* causes steered away from */
  int signatures;     /* -1 when unknown (the parent of workers) */
  long features;      /* distinct semantic features so far (0: not counted; base/feat.h) */
  long new_findings;  /* new to the database */
  long known_hits;    /* occurrences of known or wontfix findings */
  long corpus;        /* case files saved under failures/ */
  int nspecs;
  long differ_cases;
  int nconfigs;            /* the matrix's configurations (0: none) */
  long conf_min, conf_max; /* the fewest and most cases a configuration has had */
  /* the lowest and highest shares (%) of a configuration's cases that reached execution, and
   * that ran clean (no failure), over the configurations that had cases (-1: none had) */
  double exec_lo, exec_hi, clean_lo, clean_hi;
  long matrix_checked;   /* new findings checked on every configuration */
  long matrix_differ;    /* ... of which the configurations disagree on */
  CampaignConfCount all; /* every case: the GPU work the executed ones held, and unsteered */
} CampaignStatus;

/* The status line's steering ("" when nothing is avoided): "  steered N (M causes)  kept launch
 * 93% copy 88% ...": each kind of GPU work's share of the executed cases, as a share of its
 * share in the same cases generated unsteered (what steering kept). Returns out. */
const char *campaign_steer_text(const CampaignStatus *st, char *out, size_t n);

typedef struct CampaignHooks {
  /* The status, every second or so (final: the last call). May be NULL. */
  void (*progress)(const CampaignStatus *st, int final, void *ctx);
  /* A problem met on the way (a file or the database that cannot be written, a reduction
   * that failed); the campaign says in its return value whether it went on. May be NULL. */
  void (*problem)(const char *msg, void *ctx);
  void *ctx;
  double period; /* seconds between progress calls (and resume-state writes); 0: 5 */
} CampaignHooks;

/* One signature found, in the order found. */
typedef struct CampaignFinding {
  char signature[256];
  int cls; /* VerdictClass */
  int low; /* index into the lowerings (campaign_spec): the one it was first found with */
  int matrix_n, matrix_rep; /* configurations its minimized case ran on, and reproduced on */
  char matrix_axes[64];     /* the axes the verdicts differ by (LLVM, pipeline, target, JIT) */
  double matrix_seconds;    /* what running it on every configuration took */
  long count;
  int smallest_ops;
  Schedule smallest_sched;
  char dir[64];    /* under DIR/failures/ */
  int suppressed;  /* known or wontfix in the database: counted, not reported */
  int min_ops;     /* its minimized reproducer's ops (DIR/failures/DIR/reproducer.mlir), 0: none */
  int min_partial; /* the time ran out before that reduction was done */
  int db_new;      /* new to the database (or to this run, without one) */
  uint32_t holds;  /* the forms of types and launches its minimized case holds, else its
                      smallest's (gen_case_forms_held) */
} CampaignFinding;

typedef struct CampaignDiffer {
  char what[160]; /* "builtin=pass mlir-opt=runtime_error" */
  long count;
  uint64_t first_seed;
} CampaignDiffer;

/* What campaign_recheck did: findings with a case, configurations that had some without a
 * verdict, verdicts given, and of them how many reproduce, pass every run, or fail differently
 * (or are refused by the lowering); findings whose case this asyncfuzz cannot read. */
typedef struct CampaignRecheck {
  int findings, configs, verdicts, reproduces, passes, differs, unreadable;
} CampaignRecheck;
typedef struct CampaignResult {
  CampaignStatus st;
  int stopped;                     /* *stop ended it */
  int workers;                     /* the worker processes started (0: none, jobs == 1) */
  const CampaignFinding *findings; /* this process's (none with workers: see the database) */
  int nfindings;
  const CampaignDiffer *differ;
  int ndiffer;
  const CampaignConfCount *conf; /* [nmatrix], the configurations' cases */
  long db_findings;              /* findings in this run, by the database (-1: no database) */
  CampaignRecheck recheck; /* the database's findings checked on configurations without a verdict
                              for them, before the first case */
  int failed;              /* output or the database could not be written: results partial */
} CampaignResult;

typedef struct Campaign Campaign;

/* The summary's lines on the matrix: cases per configuration, findings checked on all. */
void campaign_format_matrix(const CampaignConfig *c, const CampaignResult *r, AfBuf *out);
/* What the command prints as a campaign starts (its lowerings, the matrix, backend, schedules,
 * seed, limit, jobs and output; resumed: it goes on from an earlier run) and when it ends
 * (totals, each signature with its replay command, differences, the matrix, steering, the
 * share of cases that reached execution and the database's counts). (summary.c) */
void campaign_format_start(AfBuf *b, const Campaign *k, const CampaignConfig *c, int resumed,
                           uint64_t seed);
void campaign_format_result(AfBuf *b, const CampaignConfig *c, const CampaignResult *r);
/* A campaign's progress line, without its line end (the command prints it as it goes). */
void campaign_format_progress(AfBuf *b, const CampaignStatus *k, int any_mlir);
/* asyncfuzz db recheck: campaign_recheck of database db_path on c's matrix (without one, on its
 * lowerings, each a configuration of mlir-opt), its line written to out. 0 or an AF_E* code. */
int campaign_recheck_db(const char *db_path, const CampaignConfig *c, FILE *out, AfErr *err);
/* The line on what campaign_recheck did. */
void campaign_format_recheck(AfBuf *b, const CampaignRecheck *x);

typedef struct Store Store; /* (results/store.h) */
/* Checks each finding of database db with a smallest case and a signature of the configurations'
 * lowering ("mlir-opt|...") again on each configuration of matrix[0..nmatrix) it has no verdict on
 * (on every one with all), as the matrix checks a new finding: under its own schedule and the
 * adversarial ones, a verdict per configuration (STORE_CONF_*), stored with run (0: none). 0 or an
 * AF_E* code. (recheck.c) */
int campaign_recheck(Store *db, int64_t run, const LowerSpec *matrix, int nmatrix,
                     const CheckOpts *o, int all, CampaignRecheck *res, AfErr *err);

/* Lowering low: a lowering of the campaign (low < nspecs) or a configuration of its matrix. */
const LowerSpec *campaign_spec(const CampaignConfig *c, int low);

/* The campaign's lowerings (c->specs = specs, nspecs) from the command line's specs, with the
 * mlir-opt pipeline `pipeline` (NULL: the specs'), and its matrix (c->matrix = *matrix,
 * af_free; c->matrix_low): plain `mlir-opt` is the matrix of axes (mlir_matrix; any_axis: some
 * were given), and one spec repeated with several builds (mlir-opt:A mlir-opt:B) the matrix of
 * those builds with its pipeline, target and level. notes: what the defaults left out. 0,
 * AF_EUSAGE or AF_EINVALID with err naming the spec or build. */
int campaign_lowerings(const char *const *lowerings, int nlow, const char *pipeline,
                       const MlirMatrixAxes *axes, int any_axis, CampaignConfig *c,
                       LowerSpec *specs, LowerSpec **matrix, char *notes, size_t nn, AfErr *err);

/* Checks the configuration (lowerings, schedules, knobs), creates the output directory, and
 * with resume reads the seed to go on from (cfg->seed is replaced). Opens the database and
 * begins its run. AF_EUSAGE for a bad configuration or nothing to resume, AF_EPARSE when the
 * database is not one, AF_EIO when the directory or database cannot be written; err says why.
 * *out is freed with campaign_free. OUT: *seed_used, the first seed. */
int campaign_open(const CampaignConfig *cfg, int resume, Campaign **out, uint64_t *seed_used,
                  AfErr *err);
/* After campaign_open with resume: 1 when the runs it resumes did all of the campaign's cases
 * or seconds (campaign_run would do nothing). */
int campaign_nothing_left(const Campaign *k);
/* Runs the campaign; fills *res (owned by the campaign, valid until campaign_free). Returns 0
 * (res->failed tells whether results could not be written) or a negative error. */
int campaign_run(Campaign *k, const CampaignHooks *hooks, CampaignResult *res, AfErr *err);
void campaign_free(Campaign *k);

/* A guided campaign (asyncfuzz fuzz): a fuzzer's callback hands it its cases one by one, each
 * checked, recorded, reduced, stored and steered as a campaign does with the cases it
 * generates. After campaign_open: begin (0, or AF_ENOMEM); done: whether its time or cases are
 * over (or it was stopped); one case: c, or (c NULL) the case gen_generate_bytes makes of
 * in[0..n) with the campaign's knobs and what steering avoids; 0 or -1 (an error, reported; the
 * campaign should end); end (ex: a case's error), as campaign_run ends. */
int campaign_guided_begin(Campaign *k, const CampaignHooks *hooks, AfErr *err);
int campaign_guided_done(const Campaign *k);
int campaign_guided_case(Campaign *k, const GenCase *c, const uint8_t *in, size_t n);
/* ... several in one batch (at most the campaign's batch): input j is cs[j], or where that is
 * NULL the bytes ins[j][0..ns[j]). */
int campaign_guided_cases(Campaign *k, const GenCase *const *cs, const uint8_t *const *ins,
                          const size_t *ns, int n);
/* The batch a guided run with deferred feedback fills before it checks it: the campaign's own
 * (--batch) where it lowers through mlir-opt, at most 16 unless --batch says more; 1 (each input
 * checked as it comes) for the builtin lowering alone. */
int campaign_guided_batch(const Campaign *k);
int campaign_guided_end(Campaign *k, int ex, CampaignResult *res, AfErr *err);
/* The knobs a guided case is made with now: the campaign's, and what steering avoids on the
 * configuration the next case goes to (exploration aside); whether case c has something it
 * avoids (gen_avoid_case: a case mutated from another, which steering could not shape). */
void campaign_guided_knobs(const Campaign *k, GenConfig *out);
int campaign_guided_avoided(const Campaign *k, const GenCase *c);

/* The op shapes the campaign steers away from, as text ("gpu.launch_func async deps=2+ (known),
 * ..."), "" when none. */
void campaign_avoiding(const Campaign *k, char *out, size_t n);

/* --until: HH:MM (the next such local time) or YYYY-MM-DDTHH:MM, as seconds from now. 0 or -1
 * when it is not one or not in the future. */
int campaign_parse_until(const char *v, long *seconds);

/* ---- guided generation (guided.c): asyncfuzz fuzz ---- */

typedef struct CampaignFuzz {
  const char *corpus;    /* the corpus directory (NULL: DIR/corpus), where new inputs go */
  const char *seeds[16]; /* more corpus directories, read at the start */
  int nseeds;
  const char *flags[16]; /* libFuzzer's own flags (-name=value), passed on */
  int nflags;
  int max_len;   /* the longest input, in bytes */
  int structure; /* share (%) of a byte input's mutations that are structure-aware */
  int fresh;     /* share (%) of mutations that are fresh draws: new choices, a case made anew */
  int merge;     /* libFuzzer -merge=1: seeds' inputs that add features into corpus, then exit */
  int child;     /* a process libFuzzer started for a merge (its flags and directories as given) */
  const char *argv0;
} CampaignFuzz;

/* Whether this build has libFuzzer (1); else (0) why not, into why. */
int campaign_fuzz_available(char *why, size_t n);
/* Runs opened campaign k under libFuzzer until its time or cases are over or it is stopped; *res
 * as campaign_run gives it. 0, or an error (AF_EUSAGE without libFuzzer, AF_EIO when the corpus
 * directory cannot be made, AF_ENOMEM). The process must then end with _exit: libFuzzer's exit
 * hook would take a normal exit for the callback's. */
int campaign_fuzz_run(Campaign *k, const CampaignHooks *hooks, const CampaignFuzz *f,
                      CampaignResult *res, AfErr *err);
/* A merge's child processes (libFuzzer starts `asyncfuzz --libfuzzer-child FLAGS... DIRS...`
 * through a shell): the fuzz command saves its options (argv[0..argc)) in the environment
 * (ASYNCFUZZ_FUZZ_ARGS), and the child's command line is made of them (*out, n returned; -1 out
 * of memory), with no database, no reduction, no limit but libFuzzer's, its output in a
 * temporary directory (removed at exit), libFuzzer's flags, and its directories as --seeds. */
void campaign_fuzz_save_args(int argc, char *const *argv);
int campaign_fuzz_child_args(int argc, char **argv, char ***out);
/* What the guided run did: inputs refused, mutations by move, splices (a line). */
void campaign_fuzz_report(AfBuf *b);

#endif
