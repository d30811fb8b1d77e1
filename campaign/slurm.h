/*
 * slurm.h: a campaign as a Slurm job array, one task per shard (campaign --shard I/N), and a
 * job that runs after every task ended (afterany) and merges the shards' databases into the
 * central one, writes the HTML report and the JUnit export, and lists the new findings.
 *
 * The scripts are plain bash with #SBATCH lines, written under OUT: OUT/asyncfuzz-array.sh and
 * OUT/asyncfuzz-merge.sh. Task I runs in OUT/shard-I with its own database; when that directory
 * holds a campaign-state.json (a task cancelled, preempted or out of time), the task goes on
 * from it (--resume) instead of starting again, so submitting the array again finishes what is
 * left. Merging is idempotent. A shard is just a command line: any other scheduler runs the
 * same `asyncfuzz campaign --shard I/N --seed S --out OUT/shard-I ...` (docs/slurm.md).
 */
#ifndef CAMPAIGN_SLURM_H
#define CAMPAIGN_SLURM_H

#include "../base/afbase.h"

#include <stdint.h>

typedef struct SlurmJob {
  const char *out;         /* the campaign's directory (created; made absolute) */
  const char *db;          /* the central database (NULL: OUT/results.db) */
  const char *asyncfuzz;   /* the executable the tasks run (NULL: this one) */
  int shards;              /* tasks, 1..10000 */
  int limit;               /* at most this many tasks at once (--array=...%limit), 0: none */
  const char *gres;        /* --gres for each task (NULL: none), e.g. "gpu:1" */
  const char *time;        /* --time for each task (NULL: the partition's) */
  const char *partition;   /* --partition (NULL: the default) */
  uint64_t seed;           /* the first case seed of the whole campaign */
  const char *const *args; /* the campaign's own options, passed through as they are */
  int nargs;
} SlurmJob;

typedef struct SlurmScripts {
  char dir[4096];                  /* the campaign's directory, absolute */
  char array[4096], merge[4096];   /* the scripts' paths */
  char array_id[64], merge_id[64]; /* the job ids sbatch gave ("" when not submitted) */
} SlurmScripts;

/* Writes both scripts (atomically). 0, AF_EUSAGE (an option the scripts set themselves among
 * args), or AF_EIO. */
int slurm_write(const SlurmJob *j, SlurmScripts *s, AfErr *err);
/* Submits the array, then the merge job depending on it (afterany). AF_ETOOL when sbatch is
 * missing or fails (the controller cannot be reached: err has sbatch's own words); the
 * scripts stay written. */
int slurm_submit(SlurmScripts *s, AfErr *err);

#endif
