/*
 * slurm.c: a campaign's Slurm scripts, written and submitted (slurm.h).
 */
#define _GNU_SOURCE
#include "slurm.h"

#include "../base/proc.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* s as one single-quoted shell word */
static void sh_word(AfBuf *b, const char *s) {
  af_buf_puts(b, "'");
  for (; *s; s++)
    if (*s == '\'')
      af_buf_puts(b, "'\\''");
    else
      af_buf_put(b, s, 1);
  af_buf_puts(b, "'");
}

static int mkdir_p(const char *path) {
  char p[4096];
  af_fmt(p, sizeof p, "%s", path);
  for (char *s = p + 1; *s; s++)
    if (*s == '/') {
      *s = '\0';
      if (mkdir(p, 0777) != 0 && errno != EEXIST)
        return -1;
      *s = '/';
    }
  return mkdir(p, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

/* The options the scripts set themselves: a shard's own seed, place and database. */
static int check_args(const SlurmJob *j, AfErr *err) {
  static const char *const own[] = {"--shard", "--seed",   "--out", "--db",
                                    "--no-db", "--resume", "--jobs"};
  for (int i = 0; i < j->nargs; i++)
    for (size_t k = 0; k < sizeof own / sizeof own[0]; k++)
      if (strcmp(j->args[i], own[k]) == 0)
        return af_err_set(err, AF_EUSAGE,
                          "campaign option %s: each task sets it itself (--jobs: one task is "
                          "one process; ask for more tasks with --shards)",
                          own[k]);
  return 0;
}

static void sbatch_lines(AfBuf *b, const SlurmJob *j, const char *name, const char *log) {
  af_buf_printf(b,
                "#SBATCH --job-name=%s\n#SBATCH --output=%s/logs/%s\n#SBATCH --open-mode=append\n",
                name, j->out, log);
  if (j->partition)
    af_buf_printf(b, "#SBATCH --partition=%s\n", j->partition);
}

static int write_script(const char *path, AfBuf *b, AfErr *err) {
  if (b->oom)
    return af_err_set(err, AF_ENOMEM, "out of memory");
  char tmp[4200];
  af_fmt(tmp, sizeof tmp, "%s.tmp", path);
  int rc = af_write_file(tmp, b->p, b->len, err);
  if (rc == 0 && (chmod(tmp, 0755) != 0 || rename(tmp, path) != 0)) {
    remove(tmp);
    rc = af_err_set(err, AF_EIO, "cannot write %s: %s", path, strerror(errno));
  }
  return rc;
}

/* The array's script: one task per shard (s: where it goes). */
static void array_script(AfBuf *b, const SlurmJob *j, const SlurmScripts *s) {
  af_buf_printf(b,
                "#!/bin/bash\n"
                "# An asyncfuzz campaign as a Slurm job array, written by asyncfuzz slurm submit.\n"
                "# Task I is shard I of %d (asyncfuzz campaign --shard I/%d) in %s/shard-I, with\n"
                "# its own database. Submitted again (sbatch %s), each task goes on\n"
                "# from its shard's campaign-state.json; a shard that is done does nothing.\n",
                j->shards, j->shards, j->out, s->array);
  sbatch_lines(b, j, "asyncfuzz", "shard-%a.log");
  af_buf_printf(b, "#SBATCH --array=0-%d", j->shards - 1);
  if (j->limit > 0)
    af_buf_printf(b, "%%%d", j->limit);
  af_buf_puts(b, "\n");
  if (j->gres)
    af_buf_printf(b, "#SBATCH --gres=%s\n", j->gres);
  if (j->time)
    af_buf_printf(b, "#SBATCH --time=%s\n", j->time);
  af_buf_printf(b, "set -u\n"
                   "shard=${SLURM_ARRAY_TASK_ID:?run this script with sbatch: it is a job array}\n"
                   "out=");
  sh_word(b, j->out);
  af_buf_printf(b,
                "/shard-$shard\n"
                "resume=\n"
                "[ -f \"$out/campaign-state.json\" ] && resume=--resume\n"
                "echo \"asyncfuzz: shard $shard of %d, job ${SLURM_ARRAY_JOB_ID:-?}_$shard on "
                "$(hostname) at $(date -u +%%FT%%TZ)${resume:+ (resumed)}\"\n",
                j->shards);
  sh_word(b, j->asyncfuzz);
  af_buf_printf(b, " campaign --shard \"$shard/%d\" --seed %llu --out \"$out\" $resume", j->shards,
                (unsigned long long)j->seed);
  for (int i = 0; i < j->nargs; i++) {
    af_buf_puts(b, " ");
    sh_word(b, j->args[i]);
  }
  af_buf_puts(b, "\nrc=$?\n"
                 "# 1: failing cases were found (they are in the shard's database): the task "
                 "did its work\n"
                 "[ $rc -eq 1 ] && rc=0\n"
                 "exit $rc\n");
}

/* The merge's script: after every task, whatever their ends; central: the database. */
static void merge_script(AfBuf *b, const SlurmJob *j, const char *central) {
  af_buf_printf(
      b,
      "#!/bin/bash\n"
      "# Merges the shards of %s into the central database, then writes the report and\n"
      "# the JUnit export and lists the new findings (asyncfuzz slurm submit). Running it\n"
      "# again changes nothing: merging is idempotent.\n",
      j->out);
  sbatch_lines(b, j, "asyncfuzz-merge", "merge.log");
  af_buf_puts(b, "set -u\naf=");
  sh_word(b, j->asyncfuzz);
  af_buf_puts(b, "\nout=");
  sh_word(b, j->out);
  af_buf_puts(b, "\ndb=");
  sh_word(b, central);
  af_buf_printf(b,
                "\nmerged=0\n"
                "for i in $(seq 0 %d); do\n"
                "  f=$out/shard-$i/results.db\n"
                "  if [ -f \"$f\" ]; then\n"
                "    \"$af\" db merge \"$f\" --db \"$db\" > /dev/null || exit 4\n"
                "    merged=$((merged + 1))\n"
                "  else\n"
                "    echo \"asyncfuzz merge: shard $i left no database ($f)\"\n"
                "  fi\n"
                "done\n"
                "echo \"asyncfuzz merge: $merged of %d shard databases merged into $db\"\n"
                "\"$af\" report --html \"$out/report.html\" --db \"$db\" || exit 4\n"
                "\"$af\" db export --format junit --db \"$db\" > \"$out/junit.xml.tmp\" &&\n"
                "  mv \"$out/junit.xml.tmp\" \"$out/junit.xml\" || exit 4\n"
                "echo \"asyncfuzz merge: $out/report.html, $out/junit.xml\"\n"
                "echo \"new findings:\"\n"
                "\"$af\" db list --status new --db \"$db\"\n",
                j->shards - 1, j->shards);
}

int slurm_write(const SlurmJob *job, SlurmScripts *s, AfErr *err) {
  memset(s, 0, sizeof *s);
  /* the tasks run this very executable, and paths are absolute wherever the tasks start */
  SlurmJob jj = *job, *j = &jj;
  char self[PATH_MAX], cwd[PATH_MAX], out[2 * PATH_MAX], db[2 * PATH_MAX];
  if ((j->asyncfuzz == NULL && realpath("/proc/self/exe", self) == NULL) ||
      getcwd(cwd, sizeof cwd) == NULL)
    return af_err_set(err, AF_EIO, "cannot tell where asyncfuzz or this directory is: %s",
                      strerror(errno));
  if (j->asyncfuzz == NULL)
    j->asyncfuzz = self;
  if (j->out[0] != '/') {
    af_fmt(out, sizeof out, "%s/%s", cwd, j->out);
    j->out = out;
  }
  if (j->db && j->db[0] != '/') {
    af_fmt(db, sizeof db, "%s/%s", cwd, j->db);
    j->db = db;
  }
  if (strlen(j->out) > 3000 || (j->db && strlen(j->db) > 3000))
    return af_err_set(err, AF_EUSAGE, "--out or --db: a path of more than 3000 characters");
  if (j->shards < 1 || j->shards > 10000)
    return af_err_set(err, AF_EUSAGE, "--shards N (1 to 10000 tasks) is required");
  int rc = check_args(j, err);
  if (rc)
    return rc;
  char logs[4200];
  af_fmt(logs, sizeof logs, "%s/logs", j->out);
  if (mkdir_p(logs) != 0)
    return af_err_set(err, AF_EIO, "cannot create %s: %s", logs, strerror(errno));
  char defdb[4200];
  af_fmt(defdb, sizeof defdb, "%s/results.db", j->out);
  const char *central = j->db ? j->db : defdb;
  af_fmt(s->dir, sizeof s->dir, "%s", j->out);
  af_fmt(s->array, sizeof s->array, "%s/asyncfuzz-array.sh", j->out);
  af_fmt(s->merge, sizeof s->merge, "%s/asyncfuzz-merge.sh", j->out);
  AfBuf b;
  af_buf_init(&b);
  array_script(&b, j, s);
  rc = write_script(s->array, &b, err);
  af_buf_free(&b);
  if (rc)
    return rc;
  af_buf_init(&b);
  merge_script(&b, j, central);
  rc = write_script(s->merge, &b, err);
  af_buf_free(&b);
  return rc;
}

/* sbatch --parsable [--dependency=D] SCRIPT: the job id into id. */
static int sbatch(const char *exe, const char *dep, const char *script, const char *dir, char *id,
                  size_t n, AfErr *err) {
  char outp[4200], errp[4200], depopt[128];
  af_fmt(outp, sizeof outp, "%s/logs/sbatch.out", dir);
  af_fmt(errp, sizeof errp, "%s/logs/sbatch.err", dir);
  char *argv[6];
  int k = 0;
  argv[k++] = (char *)exe;
  argv[k++] = "--parsable";
  if (dep) {
    af_fmt(depopt, sizeof depopt, "--dependency=afterany:%s", dep);
    argv[k++] = depopt;
  }
  argv[k++] = (char *)script;
  argv[k] = NULL;
  ProcResult r;
  int rc = af_proc_run(argv, NULL, NULL, outp, errp, 120, &r, err);
  char *text = NULL, *msg = NULL;
  if (rc == 0)
    rc = af_read_file(outp, &text, NULL, err);
  if (rc == 0)
    rc = af_read_file(errp, &msg, NULL, err);
  if (rc == 0 && (!r.exited || r.code != 0 || text == NULL || text[0] < '0' || text[0] > '9')) {
    size_t len = msg ? strcspn(msg, "\n") : 0;
    rc = af_err_set(err, AF_ETOOL, "sbatch %s failed (%s %d): %.*s", script,
                    r.timed_out ? "timed out after"
                    : r.exited  ? "exit"
                                : "signal",
                    r.timed_out ? 120
                    : r.exited  ? r.code
                                : r.sig,
                    (int)len, msg ? msg : "");
  }
  if (rc == 0)
    af_fmt(id, n, "%.*s", (int)strcspn(text, ";\n"), text); /* "ID" or "ID;CLUSTER" */
  af_free(text);
  af_free(msg);
  return rc;
}

int slurm_submit(SlurmScripts *s, AfErr *err) {
  char exe[4096];
  if (!af_find_exe("sbatch", exe, sizeof exe))
    return af_err_set(err, AF_ETOOL,
                      "sbatch not found: install Slurm's client (Debian: slurm-client) on this "
                      "machine, or submit %s and %s yourself",
                      s->array, s->merge);
  int rc = sbatch(exe, NULL, s->array, s->dir, s->array_id, sizeof s->array_id, err);
  if (rc == 0)
    rc = sbatch(exe, s->array_id, s->merge, s->dir, s->merge_id, sizeof s->merge_id, err);
  return rc;
}
