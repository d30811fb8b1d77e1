/*
 * campaign_int.h: internals of campaign/, shared by its files only. campaign.c opens and runs a
 * campaign: loop.c in this process or, through workers.c, in forked workers; record.c records a
 * failing case (failures/, the database, the reducer); state.c keeps the resume state; summary.c
 * writes what the campaign reports; files.c holds what all use (the hooks, atomic files, the
 * clock).
 */
#ifndef CAMPAIGN_CAMPAIGN_INT_H
#define CAMPAIGN_CAMPAIGN_INT_H

#include "campaign.h"
#include "../results/store.h"
#include "../base/feat.h"

#include <stdio.h>

/* occurrences of a finding recorded one by one per run (with their case seeds); later repeats
 * are tallied and committed once a second */
#define DB_EXACT_PER_RUN 16

/* A detailed (victim-level) form of a signature, counted for triage. */
typedef struct Form {
  char detailed[256];
  long count;
  long pending; /* repeats counted since the last campaign__flush_tallies */
} Form;

/* A signature found by this process. */
typedef struct Sig {
  CampaignFinding f; /* what the result reports */
  Form *forms;       /* its detailed forms, in the order they were seen */
  int nforms, capforms;
  GenConfig knobs; /* of the smallest case */
  char detail[1024];
  uint64_t smallest_seed, first_seed;
  Schedule first_sched;
  double first_at;
  int flaky;             /* the re-run gave another signature */
  long exact;            /* occurrences recorded one by one in this run */
  int min_ops;           /* the reducer's result (minimized.json), 0: none */
  int min_partial;       /* the campaign's time ran out during that reduction */
  uint32_t min_holds;    /* the forms the minimized case holds (gen_case_forms_held) */
  char *matrix;          /* its verdict per configuration, as info.txt lines (NULL: not checked) */
  int db_new;            /* new to the database (not found first by another worker or run) */
  uint64_t repro_confs;  /* the configurations its matrix check reproduced it on (bit i) */
  uint64_t steer_confs;  /* the configurations it steers (bit i): those, and any it recurs on */
  uint64_t seen_confs;   /* the configurations it occurred on in this run (bit i) */
  GenAvoid narrow, wide; /* steered by what its minimized case's regions carry (narrow), and
                            by wide where it recurs without them (campaign__region_narrow) */
  uint64_t wide_confs;   /* where wide steers (bit i; bit 0 without a matrix) */
  GenAvoid need;  /* a crash: what steering avoids for the forms it needs (check_crash_forms) */
  char needs[64]; /* their words ("ranked"); "": none found, or not a crash */
  uint8_t narrow_step[64]; /* per configuration (0 without a matrix): how many of narrow steer */
  uint64_t trigger_confs;  /* where a case that made it steer is saved (steered-CONF.json) */
  int repro_runs, repro_hits;
} Sig;

/* One entry of the steering by the finding it came from, and where (summary.json's "by"). */
typedef struct SteerBy {
  char *signature;
  char entry[96];
  uint64_t confs; /* bit i: configuration i; all bits: every case (no matrix, or the set of all) */
} SteerBy;

/* Per-worker counters, shared with the parent of workers (and written to the resume state). */
typedef struct Slot {
  long cases, failures, new_findings, known_hits, corpus, sigs, differ, executed, avoided;
  long device_errors;
  long executed_per[CAMPAIGN_MAX_LOWERINGS];
  long matrix_checked, matrix_differ;
  CampaignConfCount conf[CAMPAIGN_MAX_CONFIGS];
  CampaignConfCount all; /* every case: the GPU work kept (mix) */
  double time[CAMPAIGN_T__COUNT];
  uint64_t next; /* cases started: the worker's seeds are base + w + jobs * i, i < next */
} Slot;

typedef struct CampaignPending CampaignPending; /* matrix.c */
typedef struct CampaignLoop CampaignLoop;       /* loop.c */

struct Campaign {
  CampaignConfig c; /* the configuration (seed: the first one, after resume) */
  int batch;        /* cases per batch: c.batch with an mlir-opt lowering; on a GPU, c.batch or
                       4 per GPU child (check_gpu_jobs: a batch's cases run at once); else 1 */
  int any_mlir;     /* an mlir-opt lowering is among the campaign's */
  Schedule sched[CHECK_MAX_SCHED];
  int nsched;
  const CampaignHooks *hooks;
  CampaignDiffer differ[64];
  int ndiffer;
  CampaignFinding *found; /* the result's copy of the signatures */
  Sig *sigs;
  int nsigs, capsigs;
  /* lowering signatures named by an op on a view: the name without " view" where the view did
   * not matter (record.c), "" where it did */
  struct ViewAlias {
    char from[256], to[256];
  } * alias;
  int nalias, capalias;
  CampaignStatus st;
  long executed_per[CAMPAIGN_MAX_LOWERINGS];    /* cases that reached execution, per lowering */
  CampaignConfCount conf[CAMPAIGN_MAX_CONFIGS]; /* per configuration of the matrix */
  CampaignConfCount all;                        /* every case (its mix counts) */
  long prior_cases;                             /* --resume: cases of the runs before this one */
  double prior_seconds;                         /* ... and their seconds */
  int nothing_left; /* --resume: those runs did the campaign's cases or seconds */
  long nbatch;      /* batches this process started */
  /* steering: what the generator must not build, on every configuration and per configuration
   * of the matrix, and each entry's origin (steer.c) */
  GenAvoid avoid_all;
  GenAvoid avoid_conf[CAMPAIGN_MAX_CONFIGS];
  char avoid_why[64][160];
  uint64_t avoid_sig[64];  /* the signature (hash) each entry came from: one entry each */
  uint64_t avoid_mask[64]; /* the configurations each entry steers (bit i) */
  SteerBy *steer_by;       /* each entry of the sets by the finding it came from */
  int nsteer_by, capsteer_by;
  double t0;
  double deadline; /* campaign__now() time the campaign ends (0: by case count) */
  Store *db;       /* NULL: no database */
  int64_t run_id;
  CampaignPending *pending; /* new findings waiting for their matrix check (matrix.c) */
  int npending, cappending;
  double pending_since; /* campaign__now() of the oldest */
  /* the campaign over time (summary.json's "timeline"), one point per progress period: the
   * elapsed seconds, then cases, executed, failures, new findings, signatures and features, then
   * cases, executed and failures of each configuration of the matrix (TIMELINE_FIELDS + 3 * nmatrix
   * longs a point); thinned to every other point past TIMELINE_MAX */
  long *timeline;
  int npoints, cappoints, point_every, point_skip;
  CampaignLoop *loop; /* this process's loop (loop.c) */
  /* guided, a corpus replayed: the inputs the next batch checks instead of generating its cases
   * (ngiven of them, at most the batch); input j is a case (given[j]) or, where that is NULL,
   * the bytes it is generated from (given_in[j], given_n[j] bytes: gen_generate_bytes) */
  int ngiven;
  const GenCase **given;
  const uint8_t **given_in;
  size_t *given_n;
  double guided_last; /* campaign__now() when the last guided case was done */
  Slot *gslots;       /* guided: the slot of this process */
};
#define TIMELINE_FIELDS 7
#define TIMELINE_MAX 720

/* Reports a problem to the hooks ("asyncfuzz campaign: " is the caller's prefix). */
void campaign__problem(const Campaign *k, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
double campaign__now(void);
/* mkdir -p. 0 or -1 (errno set). */
int campaign__mkdir_p(const char *path);
/* Closes f (written to tmp) and renames it to path, so readers never see a partial file and
 * a full disk loses nothing that was there before. 0 or -1. */
/* Opens a file to write path atomically: tmp (4,200 bytes) receives its temporary name, unique
 * to this process (workers share DIR); campaign__commit_file puts it in place. NULL on failure. */
FILE *campaign__open_atomic(const char *path, char tmp[4200]);
int campaign__commit_file(FILE *f, const char *tmp, const char *path);

/* Records a failing case of lowering low: a new signature is re-run for its reproduction
 * rate, saved under failures/, stored and reduced; a repeat is counted. -1 when output cannot
 * be written (reported). */
int campaign__record(Campaign *k, int low, const GenCase *c, const Schedule *s, const Verdict *v,
                     const OracleExpected *e);
/* Steers generation away from what the cause of signature (of class cls, from one of the
 * campaign's lowerings) names, on the configurations of the matrix in confs (bit i:
 * configuration i; 0: on all). detailed: a verdict's detailed form (NULL: none); for a lowering's
 * verdict on an op shape, only the forms it names (the dependency counts that failed) are
 * avoided, not the op kind. why: "known", "found". A crash names no op: need, what it was found
 * to need (check_crash_forms; NULL or empty: nothing found), else min, its minimized case (or
 * NULL), names it by the block and region kinds it has. */
void campaign__avoid(Campaign *k, const char *signature, const char *cls, const GenAvoid *need,
                     const char *detailed, const char *why, uint64_t confs, const GenCase *min);
/* A crash, or a lowering's verdict naming a region (async.execute), whose minimized case min has
 * regions that carry something (a yield, an input, a capture, a block in a body): narrow gets
 * those constructs, each of them the case needed, and wide what steers it otherwise (the
 * case's structure, the region); 1. Else 0 (both empty). cause: after LOWERING|. */
int campaign__region_narrow(const char *cls, const char *cause, const GenCase *min,
                            GenAvoid *narrow, GenAvoid *wide);
/* The first n constructs of narrow in the order steering tries them (block-in-region, capture,
 * region-input, yield): one at a time, the next where the finding recurs without those. How
 * many (at most n) into out. */
int campaign__narrow_prefix(const GenAvoid *narrow, int n, GenAvoid *out);
/* Adds a, what finding signature steers, to the sets of configurations confs (0 or no matrix:
 * the set of all). */
void campaign__avoid_set(Campaign *k, const GenAvoid *a, uint64_t confs, const char *signature);
/* The findings that steer entry (gen_avoid_text's) on configuration conf (-1: no matrix), one
 * at a time: the i-th of them, or NULL past the last. */
const char *campaign__steered_by(const Campaign *k, int conf, const char *entry, int i);
/* Saves c, a case that made sig steer on configurations confs (bit i; no matrix: bit 0), as
 * failures/DIR/steered-CONF.json of each it has none for yet: the trigger a triager, or
 * bench/steering_power.sh, runs there to see the finding. */
void campaign__save_trigger(Campaign *k, Sig *sig, const GenCase *c, uint64_t confs);
/* The name of configuration conf in a trigger's file name (its name, '/' as '_'; "all" for -1
 * or without a matrix), into out. */
void campaign__trigger_name(const Campaign *k, int conf, char *out, size_t n);
/* Steers generation away from new finding sig (its case c: the minimized one, or the one it
 * was found with) where its matrix check reproduced it (v[i], ran[i]: its verdict on
 * configuration i; NULL: not checked), or where it was found. */
void campaign__steer_found(Campaign *k, Sig *sig, const GenCase *c, const Verdict *v,
                           const int *ran);
/* Adds the counts of from to to. */
void campaign__conf_add(CampaignConfCount *to, const CampaignConfCount *from);
/* Lowering spec index low as a bit of a configuration mask (bit i: matrix configuration i), or
 * 0 when it is no matrix configuration. */
uint64_t campaign__conf_bit(const Campaign *k, int low);
/* A repeat of sig (verdict v) on matrix configuration low (a spec index): it steers there
 * from now on, and a lowering's verdict on an op shape adds the forms v names (another
 * dependency count that fails there too). */
void campaign__steer_recurred(Campaign *k, Sig *sig, int low, const Verdict *v, const GenCase *c);
/* Queues new finding k->sigs[sig] for the matrix check: case c (copied) under schedule s; it
 * steers the configuration it was found on at once. campaign__matrix_flush runs the queue on
 * every configuration, one batch per configuration, and records, writes and steers each where
 * it reproduces. 0 or -1 (reported). */
int campaign__matrix_queue(Campaign *k, int sig, const GenCase *c, const Schedule *s);
/* ... all of the queue (all: 1), or when it is due (all: 0: 8 findings wait, or one has waited
 * a minute). */
int campaign__matrix_flush(Campaign *k, int all);
/* Frees what the queue still holds (a campaign that stopped on an error). */
void campaign__matrix_free(Campaign *k);
/* The schedules a re-check runs besides each finding's own (the adversarial ones), into out;
 * how many. */
int campaign__recheck_schedules(Schedule *out, int max);
/* A finding's verdict (STORE_CONF_*) on one configuration from its runs x there under
 * sched[0..ns): the first nadv (the adversarial ones) and its own, own; *w: the run that says it
 * (the first that reproduces, else the first that fails). */
int campaign__recheck_verdict(const CheckResult *x, const Schedule *sched, int ns, int nadv,
                              const Schedule *own, const char *signature, Verdict *w);
/* A configuration's row of the database for verdict conf, v (its texts in t). */
typedef struct CampaignConfText {
  char llvm[24], jit[24];
} CampaignConfText;
void campaign__conf_row(const LowerSpec *sp, int conf, const Verdict *v, CampaignConfText *t,
                        StoreConfigVerdict *w);
/* The steering of configuration conf (-1: of a campaign without a matrix) as it stands: what
 * its cases are generated without, but for exploration. */
void campaign__steering(const Campaign *k, int conf, GenAvoid *out);
/* The avoid set of a case of seed for configuration conf (empty: an exploration case). */
void campaign__batch_avoid(const Campaign *k, int conf, uint64_t seed, GenAvoid *out);
/* Commits the repeats counted since the last call, in one transaction. -1 on error. */
int campaign__flush_tallies(Campaign *k);
/* Writes failures/<dir>/info.txt of a signature. 0 or -1. */
int campaign__write_info(Campaign *k, const Sig *s);

/* Whether the campaign was told to stop (a signal). */
int campaign__stopped(const Campaign *k);
/* Adds the campaign's counts now to its timeline. */
void campaign__timeline(Campaign *k);
/* Refreshes k->st's derived counts and calls the progress hook (final: the last call). */
void campaign__progress(Campaign *k, int final);

/* The loop of one process (worker w of jobs): batches until the deadline, max_cases or a stop
 * (show: call the progress hook). 0, or -1 when it stopped on an error (reported). (loop.c) */
int campaign__loop(Campaign *k, Slot *slots, int w, int jobs, long max_cases, int show);
/* ... in steps: its state (0, or -1 out of memory, reported); whether it is done (the deadline,
 * max_cases, a stop); one batch (k->ngiven > 0: of the inputs given), 0 or -1 on an error
 * (reported); its end (the last matrix checks and tallies; ex: the steps' result), 0 or -1. */
int campaign__loop_begin(Campaign *k, long max_cases);
int campaign__loop_done(const Campaign *k, long max_cases);
int campaign__loop_step(Campaign *k, Slot *slots, int w, int jobs, long max_cases, int show);
int campaign__loop_end(Campaign *k, Slot *slots, int w, int ex);
/* The run's cases per configuration into db. -1 when they cannot be written (reported). */
int campaign__config_counts(Campaign *k, Store *db);
/* The run's timeline into the database, as its progress records, and where its time went.
 * -1 when they cannot be written. */
int campaign__store_progress(Campaign *k, Store *db);
/* jobs forked workers running campaign__loop, waited for; the totals into res. Returns whether
 * something failed. (workers.c) */
int campaign__run_workers(Campaign *k, Slot *slots, int jobs, CampaignResult *res);

/* Shards of the campaign's seeds (1: not sharded). (state.c) */
uint64_t campaign__nshards(const Campaign *k);
/* DIR/campaign-state.json from the workers' slots. 0 or -1. */
int campaign__write_state(const Campaign *k, int jobs, const Slot *sl, double elapsed);
/* --resume: the state's seed, its shard checked, what is left of the cases or seconds. */
int campaign__resume_state(Campaign *k, AfErr *err);

/* A plain campaign's first cases: the inputs of its corpus directories (c.seed_dirs), each one
 * case (a case's JSON, or bytes made into one as asyncfuzz fuzz makes them), in name order. 0, or
 * -1 on an error (reported). (loop.c) */
int campaign__replay_seeds(Campaign *k, Slot *slots, long max_cases);

/* The end of a run of this process alone (after its loop; failed: it failed): the database's
 * run, info.txt, the summary; whether something failed. (campaign.c) */
int campaign__finish_here(Campaign *k, Slot *slots, CampaignResult *res, int failed);
/* *res of a run that ended. 0 or AF_ENOMEM. (campaign.c) */
int campaign__fill_result(Campaign *k, CampaignResult *res, int jobs, int failed, AfErr *err);

/* DIR/summary.json. 0 or -1. (summary.c) */
int campaign__write_summary(Campaign *k, double el);
/* With --features, DIR/features.txt: the features seen, a line each (af_feat_write). 0 or -1.
 * (summary.c) */
int campaign__write_features(Campaign *k);
/* Counts the case of seed whose verdicts (res: one per lowering) differ between lowerings. */
void campaign__note_differ(Campaign *k, const CheckResult *const *res, uint64_t seed);

#endif
