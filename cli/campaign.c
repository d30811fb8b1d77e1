/*
 * campaign.c: `asyncfuzz campaign`: its options, the status line, the signals, and the
 * summary it prints. The campaign itself is campaign/campaign.h.
 */
#include "cli.h"
#include "../base/feat.h"
#include "../campaign/campaign.h"
#include "../lower/mlir.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t g_stop;
static int g_guided_help;                         /* --help of asyncfuzz fuzz */
#define CMD (g_guided_help ? "fuzz" : "campaign") /* the command, in messages */

static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
}

/* SIGINT and SIGTERM stop the campaign after the batch in flight. */
static void catch_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

static const char campaign_help[] =
    "usage: asyncfuzz campaign [--seconds N | --until T | --cases N] [--seed N | --resume]\n"
    "                          [--lowering SPEC]... [--matrix AXIS=V,...]... [--pipeline P]\n"
    "                          [--schedules LIST]\n"
    "                          [--jobs N] [--db FILE | --no-db] [--repro N] [--batch N]\n"
    "                          [--no-swarm] [--out DIR] [--quiet] [knobs]\n"
    "Generates cases (seeds SEED, SEED+1, ...), validates each, runs it under every schedule\n"
    "with each lowering and saves each failing case by root-cause signature under\n"
    "DIR/failures (default campaign-out). With several lowerings, cases on which their\n"
    "verdicts differ are counted and listed. A progress line goes to stderr; SIGINT/SIGTERM\n"
    "stop after the batch in flight and still print the summary.\n"
    "  --seconds N     stop after N seconds (default 30)\n"
    "  --cases N       stop after N cases\n"
    "  --seed N        first case seed (default: from the clock, printed)\n"
    "  --lowering SPEC builtin (default), builtin:fault=NAME[,NAME], or\n"
    "                  mlir-opt[@VARIANT][/TARGET][+O<n>|+Odefault][:PATH] (the real\n"
    "                  lowering: /nvvm or /rocdl, +O the runner's JIT level, -O0 by default;\n"
    "                  see asyncfuzz lower --help); repeat it to compare lowerings case by\n"
    "                  case. Plain `mlir-opt` is the matrix of its configurations (every\n"
    "                  build found x pipelines x targets x JIT levels; README: \"The\n"
    "                  configuration matrix\"): batches take turns on them, and each new\n"
    "                  finding's minimized case runs on all. mlir-opt:A mlir-opt:B: the\n"
    "                  matrix of builds A and B.\n"
    "  --matrix AXIS=V1,V2  the matrix's values of one axis (repeat for others):\n"
    "                  builds=PATH|DIR,...  pipelines=default,async-region\n"
    "                  targets=nvvm,rocdl   jit=O0,O1,O2,O3,Odefault\n"
    "  --pipeline P    pass pipeline for the mlir-opt lowerings (replaces the variant's)\n"
    "  --schedules L   default lazy,random,pct (see asyncfuzz check --help)\n"
    "  --batch N       cases per mlir-opt/mlir-runner process (default 64; 16 with a matrix,\n"
    "                  so that every configuration gets its turn soon); on a GPU backend, cases\n"
    "                  per batch the GPU children share (default 4 per child, --gpu-jobs)\n"
    "  --no-swarm      every case with the same knobs (default: swarm testing, each case\n"
    "                  draws its own knobs around them; the case file records them)\n"
    "  --memfree-sync  model mgpuMemFree as synchronizing the device (lenient)\n"
    "  --fail-calls PCT  the device fails a call on purpose in up to PCT% of runs (out of\n"
    "                  memory, a module that does not load, a kernel fault that sticks):\n"
    "                  device_error verdicts, counted, never findings\n"
    "  --no-checker    judge by observations and runtime errors only\n"
    "  --backend B, --spin N|auto, --abi cuda|rocm: where lowered code runs (below)\n"
    "  --until T       stop at local time T (HH:MM, the next one; or YYYY-MM-DDTHH:MM)\n"
    "  --jobs N        N worker processes sharing the seeds and the database\n"
    "  --shard I/N     shard I of N: the cases of seeds SEED + I + N*k only, so shards with\n"
    "                  one --seed never test the same case (asyncfuzz slurm --help)\n"
    "  --db FILE       the regression database (default DIR/results.db); --no-db: none\n"
    "  --repro N       re-run each new finding N times for its reproduction rate (default 5)\n"
    "  --resume        go on from where the campaign in DIR stopped (its next seed), for\n"
    "                  what is left of its --cases or --seconds (--until: until then)\n"
    "  --no-reduce     do not reduce new findings (by default each is reduced to a\n"
    "                  minimized case and reproducer, within the campaign's time)\n"
    "  --reduce-seconds N  at most N seconds of reduction per new finding (default 5; 0: no\n"
    "                  limit but the campaign's): the first minutes go to finding bugs, not\n"
    "                  to minimizing them; a reduction cut short keeps its smallest case so far\n"
    "                  and says so (asyncfuzz reduce finishes it)\n"
    "  --no-avoid      do not steer generation (by default, once a finding is recorded, found\n"
    "                  in this run or known/wontfix in the database, the cases of the\n"
    "                  configurations where it reproduces are built without what its cause\n"
    "                  names: the op shape mlir-opt rejects, the construct a handle travelled\n"
    "                  through, the link an edge lacked; the same ordering in another form,\n"
    "                  e.g. a gpu.wait async join; the case's config records it: asyncfuzz gen\n"
    "                  --help, --avoid)\n"
    "  --wide-swarm    swarm knobs drawn around a wider base (up to twice the ops, buffers\n"
    "                  and constructs' chances; nesting 4, 4 dependencies)\n"
    "  --guided        libFuzzer draws the cases (asyncfuzz fuzz --help; under Slurm:\n"
    "                  asyncfuzz slurm submit ... -- --guided, a corpus per shard)\n"
    "  --features      count the semantic features the cases reach (summary.json), and\n"
    "                  list them in DIR/features.txt (kind, tab, text; sorted)\n"
    "  --seeds DIR     check the inputs of a corpus directory (asyncfuzz fuzz's) first\n"
    "  --explore PCT   share of cases made with nothing avoided, so a fixed bug is noticed\n"
    "                  (0..100, fractions allowed: default 2)\n"
    "Findings go to the database (asyncfuzz db --help); those marked known or wontfix are\n"
    "counted, not reported again.\n"
    "Exit 0 when no case failed, 1 when some did, 2 on bad usage (a missing mlir-opt),\n"
    "3 when --db is not an asyncfuzz database, 4 when results could not be written.\n\n";

typedef struct Args {
  CampaignConfig c;
  CampaignFuzz fz; /* guided (asyncfuzz fuzz) */
  CliStrs seeds;
  CliStrs low; /* --lowering, in order */
  MlirMatrixAxes axes;
  int any_axis;
  const char *pipeline, *db_path;
  int no_db, resume, quiet, no_avoid;
  int any_mlir; /* a lowering may stop cases before they run: show the share that ran */
} Args;

_Static_assert(CLI_MAX_STRS <= CAMPAIGN_MAX_LOWERINGS, "a campaign takes every --lowering");

static int opt_matrix(void *dst, const char *val) {
  Args *a = dst;
  AfErr err = {0};
  if (mlir_matrix_axis(&a->axes, val, &err)) {
    fprintf(stderr, "asyncfuzz %s: %s\n", CMD, err.msg);
    return EXIT_USAGE;
  }
  a->any_axis = 1;
  return 0;
}

static int opt_shard(void *dst, const char *val) {
  CampaignConfig *c = dst;
  int used = 0;
  if (sscanf(val, "%d/%d%n", &c->shard, &c->nshards, &used) != 2 || val[used] || c->nshards < 1 ||
      c->shard < 0 || c->shard >= c->nshards) {
    fprintf(stderr, "asyncfuzz campaign: --shard %s: I/N, shard I of N, 0 <= I < N\n", val);
    return EXIT_USAGE;
  }
  return 0;
}

static int opt_explore(void *dst, const char *val) {
  CampaignConfig *c = dst;
  char *end = NULL;
  double pct = val ? strtod(val, &end) : -1;
  if (val == NULL || end == val || *end != '\0' || !(pct >= 0 && pct <= 100)) {
    fprintf(stderr, "asyncfuzz campaign: --explore needs a share of 0..100 (%%, e.g. 2 or 0.5)\n");
    return EXIT_USAGE;
  }
  c->explore_permille = (int)(pct * 10 + 0.5);
  return 0;
}

static int opt_until(void *dst, const char *val) {
  CampaignConfig *c = dst;
  c->until = 1;
  if (campaign_parse_until(val, &c->seconds) == 0)
    return 0;
  fprintf(stderr, "asyncfuzz campaign: --until needs HH:MM or YYYY-MM-DDTHH:MM (local "
                  "time, in the future)\n");
  return EXIT_USAGE;
}

static const char fuzz_help[] =
    "usage: asyncfuzz fuzz [campaign options] [--corpus DIR] [--seeds DIR]... [--max-len N]\n"
    "                      [--structure PCT] [--fresh PCT] [-LIBFUZZER_FLAG=VALUE]...\n"
    "A campaign whose cases libFuzzer draws (guided generation): an input is the generator's\n"
    "choices (bytes: the first ones pick the swarm knobs) or a case's JSON, which the\n"
    "structure-aware mutator and crossover write (an edge rewired, an op dropped, a wait added,\n"
    "a view, an element type, a stream, ops wrapped into a region or a block, a case spliced\n"
    "after another). An input that reaches a new semantic feature enters the corpus: mlir-opt's\n"
    "patterns on their ops and in pairs, the ops it left unconverted, the mgpu* call sequences,\n"
    "verdicts per configuration (alone and with each op shape), lowerings that disagree, cause\n"
    "signatures, dependency edges, op shapes, the handles the case's constructs carry, and each\n"
    "run's runtime calls and ordering links (docs/guided.md). Every failure is judged,\n"
    "recorded, reduced, stored and steered away from as in a campaign; the options below are\n"
    "the campaign's (but --jobs). Through mlir-opt, inputs are checked in batches (--batch,\n"
    "default 16 at most): each input is credited with its own features one batch late, when\n"
    "libFuzzer reloads it from the corpus, where it was written (--batch 1: each at once).\n"
    "  --corpus DIR    the corpus, kept and resumed from (default DIR/corpus); a plain\n"
    "                  campaign replays it with --seeds DIR\n"
    "  --seeds DIR     more inputs to start from (libFuzzer corpus directories)\n"
    "  --max-len N     the longest input in bytes (default 16384)\n"
    "  --structure PCT share of a byte input's mutations that are structure-aware (default: 50\n"
    "                  with an mlir-opt lowering, 0 with the builtin alone, whose cases cost\n"
    "                  less than a case's JSON does to read and write)\n"
    "  --fresh PCT     share of mutations that are fresh draws instead: new choices, so a case\n"
    "                  the generator makes anew, as a plain campaign does (default 0)\n"
    "  --merge         merge the inputs of the --seeds directories that add features into\n"
    "                  the corpus (libFuzzer -merge=1), and exit\n"
    "  -NAME=VALUE     a libFuzzer flag, passed on (e.g. -mutate_depth=2, -dict=FILE)\n\n";

static void campaign_help_print(FILE *f) {
  if (g_guided_help)
    fputs(fuzz_help, f);
  fputs(campaign_help, f);
  cli_print_backend_help(f);
  cli_print_knobs_help(f);
}

/* The command line into a. 0, an exit code, or -1 for --help (printed). */
static int campaign_args(Args *a, int argc, char **argv) {
  CampaignConfig *c = &a->c;
  int npos;
  const CliOpt opts[] = {CLI_OPT_LONG("--seconds", &c->seconds, 0, 100000000),
                         CLI_OPT_LONG("--cases", &c->max_cases, 1, 2000000000),
                         CLI_OPT_INT("--batch", &c->batch, 1, 1024),
                         CLI_OPT_INT("--repro", &c->repro, 1, CHECK_MAX_SCHED),
                         CLI_OPT_INT("--reduce-seconds", &c->reduce_seconds, 0, 100000),
                         CLI_OPT_INT("--jobs", &c->jobs, 1, 256),
                         CLI_OPT_U64("--seed", &c->seed),
                         CLI_OPT_STRS("--lowering", &a->low),
                         CLI_OPT_STR("--pipeline", &a->pipeline),
                         CLI_OPT_FN("--matrix", a, opt_matrix),
                         CLI_OPT_STR("--schedules", &c->sched_spec),
                         CLI_OPT_STR("--out", &c->out),
                         CLI_OPT_STR("--db", &a->db_path),
                         CLI_OPT_FN("--shard", c, opt_shard),
                         CLI_OPT_FN("--until", c, opt_until),
                         CLI_OPT_FLAG("--quiet", &a->quiet, 1),
                         CLI_OPT_FLAG("--no-swarm", &c->swarm, 0),
                         CLI_OPT_FLAG("--no-db", &a->no_db, 1),
                         CLI_OPT_FLAG("--resume", &a->resume, 1),
                         CLI_OPT_FLAG("--no-reduce", &c->reduce, 0),
                         CLI_OPT_FLAG("--memfree-sync", &c->opts.memfree_sync, 1),
                         CLI_OPT_INT("--fail-calls", &c->fail_pct, 0, 100),
                         CLI_OPT_FLAG("--no-checker", &c->opts.no_checker, 1),
                         CLI_OPT_FLAG("--avoid-found", &c->avoid_found, 1), /* (the default) */
                         CLI_OPT_FLAG("--no-avoid", &a->no_avoid, 1),
                         CLI_OPT_FN("--explore", c, opt_explore),
                         CLI_OPT_FLAG("--features", &c->features, 1),
                         CLI_OPT_FLAG("--guided", &c->guided, 1),
                         CLI_OPT_FLAG("--wide-swarm", &c->swarm, 2),
                         CLI_OPT_STR("--corpus", &a->fz.corpus),
                         CLI_OPT_STRS("--seeds", &a->seeds),
                         CLI_OPT_INT("--max-len", &a->fz.max_len, 64, 1 << 20),
                         CLI_OPT_INT("--structure", &a->fz.structure, 0, 100),
                         CLI_OPT_INT("--fresh", &a->fz.fresh, 0, 100),
                         CLI_OPT_FLAG("--merge", &a->fz.merge, 1),
                         CLI_OPT_FLAG("--libfuzzer-child", &a->fz.child, 1),
                         CLI_OPT_END};
  return cli_parse(g_guided_help ? "fuzz" : "campaign", argc, argv, opts, &c->opts, &c->cfg, NULL,
                   0, &npos, campaign_help_print);
}

static int campaign_go(Args *ap);

static void on_progress(const CampaignStatus *k, int final, void *ctx) {
  const Args *a = ctx;
  if (a->quiet)
    return;
  AfBuf b;
  af_buf_init(&b);
  campaign_format_progress(&b, k, a->any_mlir);
  fprintf(stderr, "%s%s%s", isatty(2) ? "\r" : "", b.p ? b.p : "", final || !isatty(2) ? "\n" : "");
  fflush(stderr);
  af_buf_free(&b);
}

static void on_problem(const char *msg, void *ctx) {
  (void)ctx;
  fprintf(stderr, "\nasyncfuzz campaign: %s\n", msg);
}

/* The campaign's defaults (--help shows them). */
static void campaign_defaults(Args *a) {
  memset(a, 0, sizeof *a);
  CampaignConfig *c = &a->c;
  gen_config_default(&c->cfg);
  c->out = "campaign-out";
  c->sched_spec = "lazy,random,pct";
  c->swarm = c->reduce = c->avoid_known = c->avoid_found = 1;
  c->explore_permille = 20;
  c->batch = 0; /* (the campaign's choice: 64, or 16 with a matrix) */
  c->seconds = 30;
  c->max_cases = -1;
  c->repro = 5;
  c->reduce_seconds = 5;
  c->jobs = 1;
  c->seed = (uint64_t)time(NULL);
  c->opts.stop_at_first = 1;
  c->stop = &g_stop;
  a->fz.max_len = 16384;
  a->fz.structure = -1; /* (campaign_go: by the lowerings) */
  a->fz.fresh = 0;
}

/* The command, for `campaign` or (guided) `fuzz`: libFuzzer's flags (-name=value) in argv are
 * kept for it. */
static int campaign_main(int argc, char **argv, int guided) {
  Args a;
  campaign_defaults(&a);
  CampaignConfig *c = &a.c;
  c->guided = guided;
  g_guided_help = guided;
  a.fz.argv0 = argv[0];
  char **rest = af_calloc((size_t)argc + 1, sizeof *rest);
  if (rest == NULL)
    return EXIT_INTERNAL;
  int nrest = 0;
  for (int i = 0; i < argc; i++) { /* (an option's value never looks like -name=value) */
    const char *x = argv[i];
    if (guided && i > 0 && x[0] == '-' && x[1] != '-' && strchr(x, '=') && a.fz.nflags < 16)
      a.fz.flags[a.fz.nflags++] = x;
    else
      rest[nrest++] = argv[i];
  }
  int ex = campaign_args(&a, nrest, rest);
  if (ex == 0 && c->guided) /* (what a merge's child process reads) */
    campaign_fuzz_save_args(nrest - 1, rest + 1);
  if (ex == 0 && !c->guided && (a.seeds.n > 0 || c->features) && c->jobs > 1) {
    fprintf(stderr, "asyncfuzz campaign: --seeds, --features: with one process only (no --jobs)\n");
    ex = EXIT_USAGE;
  }
  if (ex == 0 && a.fz.merge && !a.fz.child && (a.fz.corpus == NULL || a.seeds.n == 0)) {
    fprintf(stderr, "asyncfuzz fuzz: --merge needs --corpus DIR (into) and --seeds DIR (from)\n");
    ex = EXIT_USAGE;
  }
  if (a.fz.merge) /* (the merge records nothing: its processes only compare features) */
    a.no_db = 1, c->reduce = 0;
  if (ex == 0 && c->guided && c->jobs > 1) {
    fprintf(stderr, "asyncfuzz fuzz: --jobs: one process per guided run (run several with their "
                    "own --out and one --corpus, or shards: asyncfuzz slurm)\n");
    ex = EXIT_USAGE;
  }
  char why[256];
  if (ex == 0 && c->guided && !campaign_fuzz_available(why, sizeof why)) {
    fprintf(stderr, "asyncfuzz fuzz: %s\n", why);
    ex = EXIT_USAGE;
  }
  if (ex) {
    af_free(rest);
    return ex < 0 ? 0 : ex;
  }
  c->features |= c->guided;
  if (c->features && af_feat_enable(1) != 0) {
    af_free(rest);
    return EXIT_INTERNAL;
  }
  ex = campaign_go(&a);
  af_free(rest);
  return ex;
}

int cmd_campaign(int argc, char **argv) {
  return campaign_main(argc, argv, 0);
}

static int g_recheck; /* asyncfuzz db recheck: campaign's options, no campaign */
int cmd_db_recheck(int argc, char **argv) {
  g_recheck = 1;
  return campaign_main(argc, argv, 0);
}

int cmd_fuzz(int argc, char **argv) {
  return campaign_main(argc, argv, 1);
}

/* asyncfuzz --libfuzzer-child FLAGS... DIRS...: a process libFuzzer started for a merge, run as
 * campaign_fuzz_child_args says. */
int cmd_fuzz_child(int argc, char **argv) {
  char **v;
  int n = campaign_fuzz_child_args(argc, argv, &v);
  return n < 0 ? EXIT_INTERNAL : campaign_main(n, v, 1);
}

/* The campaign of a's configuration, opened, run and summed up. Returns the exit code. */
static int campaign_go(Args *ap) {
  Args a = *ap;
  CampaignConfig *c = &a.c;
  char device[400];
  int ex = cli_backend_start(CMD, &c->opts, device, sizeof device);
  if (ex)
    return ex;
  c->device = device;
  if (a.low.n == 0)
    a.low.v[a.low.n++] = "builtin";
  LowerSpec specs[CAMPAIGN_MAX_LOWERINGS];
  LowerSpec *matrix = NULL;
  char notes[2048];
  AfErr lerr = {0};
  MlirMatrixAxes ax = a.axes;
  ax.custom = a.pipeline;
  ax.runs = asyncfuzz_rt_backend_info(c->opts.backend)->targets;
  if (campaign_lowerings(a.low.v, a.low.n, a.pipeline, &ax, a.any_axis, c, specs, &matrix, notes,
                         sizeof notes, &lerr)) {
    fprintf(stderr, "asyncfuzz %s: %s\n", CMD, lerr.msg);
    return EXIT_USAGE;
  }
  for (int i = 0; i < c->nspecs; i++)
    a.any_mlir |= specs[i].kind == LOWER_MLIR_OPT;
  if (a.fz.structure < 0)
    a.fz.structure = a.any_mlir ? 50 : 0;
  if (notes[0])
    fprintf(stderr, "asyncfuzz %s: matrix: %s\n", CMD, notes);
  char dbp[4096];
  snprintf(dbp, sizeof dbp, a.db_path ? "%s" : "%s/results.db", a.db_path ? a.db_path : c->out);
  if (a.no_avoid)
    c->avoid_known = c->avoid_found = 0;
  c->db_path = a.no_db ? NULL : dbp;
  if (g_recheck) { /* (db recheck) */
    AfErr rerr = {0};
    int rc = campaign_recheck_db(dbp, c, stdout, &rerr);
    if (rc)
      fprintf(stderr, "asyncfuzz db recheck: %s\n", rerr.msg);
    af_free(matrix);
    return cli_exit_for(rc);
  }
  Campaign *k;
  uint64_t seed;
  AfErr err = {0};
  for (int i = 0; i < a.seeds.n; i++) /* (a guided run's are libFuzzer's corpus directories) */
    if (c->guided)
      a.fz.seeds[a.fz.nseeds++] = a.seeds.v[i];
    else
      c->seed_dirs[c->nseed_dirs++] = a.seeds.v[i];
  int rc = campaign_open(c, a.resume, &k, &seed, &err);
  if (rc) {
    fprintf(stderr, "asyncfuzz %s: %s\n", CMD, err.msg);
    af_free(matrix);
    return rc == AF_EUSAGE ? EXIT_USAGE : rc == AF_EPARSE ? EXIT_INPUT : EXIT_INTERNAL;
  }
  if (campaign_nothing_left(k)) { /* a resumed shard that had done its work */
    fprintf(stderr, "asyncfuzz campaign: %s has done its %s already: nothing to resume\n", c->out,
            c->max_cases > -1 ? "cases" : "seconds");
    campaign_free(k);
    af_free(matrix);
    return EXIT_OK;
  }
  AfBuf b;
  af_buf_init(&b);
  campaign_format_start(&b, k, c, a.resume, seed);
  fputs(b.p ? b.p : "", stderr);
  af_buf_free(&b);
  catch_signals();
  CampaignHooks hooks = {on_progress, on_problem, &a, isatty(2) ? 1.0 : 5.0};
  CampaignResult r;
  rc =
      c->guided ? campaign_fuzz_run(k, &hooks, &a.fz, &r, &err) : campaign_run(k, &hooks, &r, &err);
  if (rc) {
    fprintf(stderr, "asyncfuzz %s: %s\n", c->guided ? "fuzz" : "campaign", err.msg);
  } else {
    af_buf_init(&b);
    campaign_format_result(&b, c, &r);
    fputs(b.p ? b.p : "", stdout);
    af_buf_free(&b);
    if (c->guided) {
      af_buf_init(&b);
      campaign_fuzz_report(&b);
      fputs(b.p ? b.p : "", stdout);
      af_buf_free(&b);
    }
  }
  ex = rc                  ? (rc == AF_EUSAGE ? EXIT_USAGE : EXIT_INTERNAL)
       : r.failed          ? EXIT_INTERNAL
       : r.st.failures > 0 ? EXIT_FOUND
                           : EXIT_OK;
  campaign_free(k);
  af_free(matrix);
  if (c->guided) { /* (past libFuzzer's exit hook: fuzz.h) */
    fflush(stdout);
    fflush(stderr);
    _exit(ex);
  }
  return ex;
}
