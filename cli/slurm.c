/*
 * slurm.c: `asyncfuzz slurm submit`: a campaign as a Slurm job array and its merge job
 * (campaign/slurm.h).
 */
#define _GNU_SOURCE
#include "cli.h"
#include "../campaign/slurm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char slurm_help[] =
    "usage: asyncfuzz slurm submit --shards N [--limit K] [--gres G] [--time T]\n"
    "         [--partition P] [--out DIR] [--db FILE] [--seed S] [--dry-run] [-- CAMPAIGN...]\n"
    "Writes DIR/asyncfuzz-array.sh (a job array: task I runs `asyncfuzz campaign --shard\n"
    "I/N` in DIR/shard-I, its own database; --limit K: K at once; --gres, --time and\n"
    "--partition per task) and DIR/asyncfuzz-merge.sh (after every task: merges the shards\n"
    "into --db, default DIR/results.db, writes DIR/report.html and DIR/junit.xml, lists the\n"
    "new findings), submits both with sbatch (not with --dry-run) and prints the job ids.\n"
    "The campaign's options go after `--` (not --shard, --seed, --out, --db, --jobs).\n"
    "Submitting again resumes each task from its shard's campaign-state.json; a shard that\n"
    "is done does nothing. docs/slurm.md has the details and other schedulers.\n"
    "Exit 0, 2 on bad usage, 4 when the scripts cannot be written, 5 when sbatch is missing\n"
    "or the controller cannot be reached (the scripts are written).\n";

enum { EXIT_SCHEDULER = 5 };

static void slurm_help_print(FILE *f) {
  fputs(slurm_help, f);
}

int cmd_slurm(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "submit") != 0) {
    int help = argc > 1 && cli_is_help(argv[1]);
    fputs(help ? slurm_help : "asyncfuzz slurm: asyncfuzz slurm submit ... (see --help)\n",
          help ? stdout : stderr);
    return help ? EXIT_OK : EXIT_USAGE;
  }
  SlurmJob j = {0};
  j.out = "slurm-out";
  j.seed = (uint64_t)time(NULL);
  int dry = 0, npos, n = argc - 1; /* the options of submit: before -- */
  for (int i = 2; i < argc && n == argc - 1; i++)
    if (strcmp(argv[i], "--") == 0)
      n = i - 1;
  const CliOpt opts[] = {CLI_OPT_INT("--shards", &j.shards, 1, 10000),
                         CLI_OPT_INT("--limit", &j.limit, 1, 10000),
                         CLI_OPT_U64("--seed", &j.seed),
                         CLI_OPT_FLAG("--dry-run", &dry, 1),
                         CLI_OPT_STR("--gres", &j.gres),
                         CLI_OPT_STR("--time", &j.time),
                         CLI_OPT_STR("--partition", &j.partition),
                         CLI_OPT_STR("--out", &j.out),
                         CLI_OPT_STR("--db", &j.db),
                         CLI_OPT_END};
  int ex =
      cli_parse("slurm submit", n, argv + 1, opts, NULL, NULL, NULL, 0, &npos, slurm_help_print);
  if (ex)
    return ex < 0 ? 0 : ex;
  if (n < argc - 1) {
    j.args = (const char *const *)argv + n + 2;
    j.nargs = argc - n - 2;
  }
  AfErr err = {0};
  SlurmScripts s;
  int rc = slurm_write(&j, &s, &err); /* --shards is required: 0 is refused */
  if (rc) {
    fprintf(stderr, "asyncfuzz slurm submit: %s\n", err.msg);
    return rc == AF_EUSAGE ? EXIT_USAGE : EXIT_INTERNAL;
  }
  printf("wrote %s\nwrote %s\n", s.array, s.merge);
  if (dry) /* (submit: sbatch ARRAY, then sbatch --dependency=afterany:ID MERGE) */
    return EXIT_OK;
  rc = slurm_submit(&s, &err);
  if (rc) {
    fprintf(stderr, "asyncfuzz slurm submit: %s\n", err.msg);
    if (s.array_id[0])
      fprintf(stderr,
              "asyncfuzz slurm submit: the array is job %s; submit the merge with: "
              "sbatch --dependency=afterany:%s %s\n",
              s.array_id, s.array_id, s.merge);
    return EXIT_SCHEDULER;
  }
  printf("submitted: array job %s (%d task%s, logs %s/logs/shard-I.log), merge job %s after it\n"
         "results: %s (report.html, junit.xml; merge log %s/logs/merge.log)\n",
         s.array_id, j.shards, j.shards == 1 ? "" : "s", s.dir, s.merge_id, s.dir, s.dir);
  return EXIT_OK;
}
